//! The constraint part of MuJoCo's inverse dynamics (`mj_invConstraint`) and its forward-inverse
//! check (`mj_compareFwdInv`). Because every row is soft, the force is a function of the
//! acceleration, `f = -ds/dx` at `x = J a - aref`, evaluated row by row with no optimization:
//! the inverse of the soft model is explicit. Book: "Soft constraints", section "Why the soft
//! model is invertible".

use super::super::constraint::{Efc, EfcState};
use super::cost::update;
use super::{check_efc, check_smooth, mul_j, mul_jt, mul_m, Smooth, SolverResult};
use crate::error::{check_vector, Result};

/// What `mj_invConstraint` writes.
#[derive(Clone, Debug, PartialEq)]
pub struct InverseConstraint {
    /// `efc_force = -ds/dx` at `x = J qacc - aref`.
    pub efc_force: Vec<f64>,
    /// The rows' states at `x`.
    pub efc_state: Vec<EfcState>,
    /// `qfrc_constraint = J^T efc_force`.
    pub qfrc_constraint: Vec<f64>,
}

// ANCHOR: inv_constraint
/// MuJoCo's `mj_invConstraint`: the constraint forces that the acceleration `qacc` implies,
/// row by row (spec 7). Checks `efc` and `qacc` (length `nv = efc.nv()`).
pub fn inv_constraint(efc: &Efc, qacc: &[f64]) -> Result<InverseConstraint> {
    let nv = efc.nv();
    check_efc(efc, nv)?;
    check_vector("qacc", qacc, nv)?;
    let cones = super::cost::cones(efc)?;
    let n = efc.nefc();
    let mut jar = vec![0.0; n];
    mul_j(efc, qacc, &mut jar);
    for (x, a) in jar.iter_mut().zip(&efc.aref) {
        *x -= a;
    }
    let mut force = vec![0.0; n];
    let mut state = vec![EfcState::Satisfied; n];
    update(efc, &cones, &jar, &mut force, &mut state, None);
    let mut qfrc = vec![0.0; nv];
    mul_jt(efc, &force, &mut qfrc);
    Ok(InverseConstraint {
        efc_force: force,
        efc_state: state,
        qfrc_constraint: qfrc,
    })
}
// ANCHOR_END: inv_constraint

// ANCHOR: inverse_applied
/// The applied and actuator force that `qacc` implies, as a residual against the ones in
/// `qfrc_smooth` (`mj_inverse` with `Smooth`'s quantities): `M qacc - qfrc_smooth - J^T f(qacc) = qfrc_inverse - (qfrc_applied + qfrc_actuator)`.
/// Zero at the forward solution with the same applied forces (up to the solver's tolerance).
pub fn inverse_residual(smooth: &Smooth, efc: &Efc, qacc: &[f64]) -> Result<Vec<f64>> {
    check_smooth(smooth)?;
    let inv = inv_constraint(efc, qacc)?;
    let mut out = vec![0.0; qacc.len()];
    mul_m(smooth.layout, smooth.qm, qacc, &mut out);
    for k in 0..out.len() {
        out[k] -= smooth.qfrc_smooth[k] + inv.qfrc_constraint[k];
    }
    Ok(out)
}
// ANCHOR_END: inverse_applied

/// MuJoCo's `solver_fwdinv` (`mj_compareFwdInv`) for a forward result: `[|qfrc_constraint_fwd -
/// qfrc_constraint_inv|, |qfrc_applied + qfrc_actuator - qfrc_inverse|]`, both in the 2-norm.
pub fn compare_fwd_inv(smooth: &Smooth, efc: &Efc, fwd: &SolverResult) -> Result<[f64; 2]> {
    let inv = inv_constraint(efc, &fwd.qacc)?;
    let r = inverse_residual(smooth, efc, &fwd.qacc)?;
    let d0: f64 = inv
        .qfrc_constraint
        .iter()
        .zip(&fwd.qfrc_constraint)
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    let d1: f64 = r.iter().map(|x| x * x).sum();
    Ok([d0.sqrt(), d1.sqrt()])
}
