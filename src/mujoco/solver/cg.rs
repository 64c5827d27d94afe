//! The conjugate-gradient direction of MuJoCo's `mj_solCG`, preconditioned by `M^-1`, with the
//! Polak-Ribiere+ rule (MuJoCo's `mjCG_PRP` build; its default since 3.10 is Hager-Zhang, which
//! reaches the same minimum). The loop itself is [`super::primal::solve_primal`]. Book:
//! "Solvers", section "Conjugate gradient".

use crate::model::constants::mjMINVAL;

// ANCHOR: beta_prp
/// Polak-Ribiere+ with preconditioner `M^-1`:
/// `beta = max(0, g^T (M^-1 g - M^-1 g_old) / max(mjMINVAL, g_old^T M^-1 g_old))`.
/// `mgrad = M^-1 g`; inputs of equal length.
pub fn beta_prp(grad: &[f64], mgrad: &[f64], gradold: &[f64], mgradold: &[f64]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for k in 0..grad.len() {
        num += grad[k] * (mgrad[k] - mgradold[k]);
        den += gradold[k] * mgradold[k];
    }
    (num / den.max(mjMINVAL)).max(0.0)
}
// ANCHOR_END: beta_prp

// ANCHOR: cg_direction
/// The new CG direction `p <- -M^-1 g + beta p`.
pub fn cg_direction(search: &mut [f64], mgrad: &[f64], beta: f64) {
    for (p, mg) in search.iter_mut().zip(mgrad) {
        *p = -mg + beta * *p;
    }
}
// ANCHOR_END: cg_direction
