//! The conjugate-gradient direction of MuJoCo's `mj_solCG`, preconditioned by `M^-1`, with the
//! Hager-Zhang rule (MuJoCo's default since 3.10, what [`super::solve`] uses) or the
//! Polak-Ribiere+ rule (MuJoCo's `mjCG_PRP` build), which reaches the same minimum. The loop
//! itself is [`super::primal::solve_primal`]. Book: "Solvers", section "Conjugate gradient".

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

// ANCHOR: beta_hz
/// Hager-Zhang's conjugate-gradient coefficient with preconditioner `M^-1` (MuJoCo's default
/// since 3.10): with `y = g - g_old`, `beta = (y^T M^-1 g - 2 (y^T M^-1 y / p^T y) p^T g) / p^T y`,
/// bounded below by `eta_k = -1 / (|p| min(0.01, |g|))` so that the new direction stays a
/// descent direction; `beta = 0` (a restart) when `p^T y < mjMINVAL`. `search` is the previous
/// direction `p`. Inputs of equal length.
pub fn beta_hz(grad: &[f64], mgrad: &[f64], gradold: &[f64], mgradold: &[f64], search: &[f64]) -> f64 {
    let (mut p_y, mut y_my, mut y_mg, mut p_g, mut pp, mut gg) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for k in 0..grad.len() {
        let y = grad[k] - gradold[k];
        let my = mgrad[k] - mgradold[k];
        p_y += search[k] * y;
        y_my += y * my;
        y_mg += y * mgrad[k];
        p_g += search[k] * grad[k];
        pp += search[k] * search[k];
        gg += grad[k] * grad[k];
    }
    if p_y < mjMINVAL {
        return 0.0;
    }
    let beta = (y_mg - 2.0 * (y_my / p_y) * p_g) / p_y;
    let eta_k = -1.0 / (pp.sqrt() * gg.sqrt().min(0.01)).max(mjMINVAL);
    beta.max(eta_k)
}
// ANCHOR_END: beta_hz
