//! Tables 8.2 and 8.3: RNEA on the spanning tree with the active forces of the loop joints.

use super::constraints::{check_loops, loop_frames};
use super::table::loop_active_basis;
use crate::dynamics::{rnea_with, Workspace};
use crate::error::{check_vector, Result};
use crate::model::Model;
use crate::spatial::{Force, Motion, Vec3, Xform};
use nalgebra::DVector;

/// Number of active loop-joint force variables: the sum of the loop joints' freedoms `n_k`.
pub fn loop_active_len(model: &Model) -> usize {
    model.loops.iter().map(|l| l.jtype.nv()).sum()
}

/// Checks an active-force vector `tau_a` (stacked per loop joint, `n_k` entries each).
fn check_tau_a(model: &Model, tau_a: Option<&[f64]>) -> Result<()> {
    if let Some(ta) = tau_a {
        check_vector("tau_a (active loop-joint forces)", ta, loop_active_len(model))?;
    }
    Ok(())
}

/// The active force of each loop joint in base coordinates, `0f^a_k = 0X*_P' T^a_k tau^a_k`
/// (the force on the successor; the predecessor receives its negative).
pub(crate) fn active_forces_base(model: &Model, x_0: &[Xform], tau_a: &[f64]) -> Vec<Force> {
    let mut out = Vec::with_capacity(model.loops.len());
    let mut start = 0;
    for lj in &model.loops {
        let n = lj.jtype.nv();
        let ta = loop_active_basis(&lj.jtype);
        let f6 = ta * DVector::from_column_slice(&tau_a[start..start + n]);
        start += n;
        let f = Force::new(Vec3::new(f6[0], f6[1], f6[2]), Vec3::new(f6[3], f6[4], f6[5]));
        let fr = loop_frames(lj, x_0);
        out.push(fr.x_p0.inv_apply_force(&f));
    }
    out
}

/// Inverse dynamics of the spanning tree minus the loop joints' active forces,
/// `ID(q, qdot, qdd) - tau^a = H qdd + C - tau^a` (Featherstone 8.6, tables 8.2 and 8.3; with
/// `qdd = 0` it is `C - tau^a`, with `qdd` it is the `tau_ID` of 8.12).
///
/// `tau_a` stacks `n_k` numbers per loop joint in model order (`None`: all loop joints passive).
/// External forces `f_ext` are in base coordinates, as in [`crate::dynamics::rnea`]. The active
/// forces are external forces of the tree (see [`rnea_loops_with`]).
pub fn rnea_loops(
    model: &Model,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    tau_a: Option<&[f64]>,
    f_ext: Option<&[Force]>,
) -> Result<DVector<f64>> {
    model.check_state(q, qd)?;
    check_vector("qacc", qdd, model.nv)?;
    check_loops(model)?;
    check_tau_a(model, tau_a)?;
    crate::dynamics::check_fext(model, f_ext)?;
    let mut ws = Workspace::new(model);
    let mut f_all = vec![Force::zero(); model.nb + 1];
    let mut tau = DVector::zeros(model.nv);
    rnea_loops_with(model, &mut ws, q, qd, qdd, tau_a, f_ext, &mut f_all, tau.as_mut_slice())?;
    crate::error::check_output("tau", tau.as_slice())?;
    Ok(tau)
}

// ANCHOR: rnea_loops
/// [`rnea_loops`] on caller storage (`f_all`: nb + 1 forces of scratch); inputs are assumed valid.
///
/// Tables 8.2 and 8.3 add one step to RNEA: each loop joint's active force
/// `0f^a_k = 0X*_P' T^a_k tau^a_k` ([`super::loop_active_basis`]) pushes on its successor and,
/// negated, on its predecessor. Those are external forces of the tree, so they join `f_ext`
/// (base coordinates) and [`crate::dynamics::rnea_with`] does the two passes unchanged.
#[allow(clippy::too_many_arguments)]
pub fn rnea_loops_with(
    model: &Model,
    ws: &mut Workspace,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    tau_a: Option<&[f64]>,
    f_ext: Option<&[Force]>,
    f_all: &mut [Force],
    tau: &mut [f64],
) -> Result<()> {
    f_all.fill(Force::zero());
    if let Some(fx) = f_ext {
        f_all[1..].copy_from_slice(&fx[1..]);
    }
    if let Some(ta) = tau_a {
        let x_0 = crate::kinematics::forward_kinematics(model, q)?.x_0;
        for (lj, fa) in model.loops.iter().zip(active_forces_base(model, &x_0, ta)) {
            f_all[lj.succ] += fa;
            f_all[lj.pred] -= fa;
        }
    }
    // the base (body 0) absorbs its share: rnea_with ignores entry 0
    rnea_with(model, ws, q, qd, qdd, Some(f_all), tau);
    Ok(())
}
// ANCHOR_END: rnea_loops

/// `C - tau^a` (Featherstone 8.6): [`rnea_loops`] with `qdd = 0`.
pub fn bias_minus_active(model: &Model, q: &[f64], qd: &[f64], tau_a: Option<&[f64]>) -> Result<DVector<f64>> {
    rnea_loops(model, q, qd, &vec![0.0; model.nv], tau_a, None)
}

/// Dense reference for `tau^a` (eq. (8.28)): `sum_k (0J_s(k) - 0J_p(k))^T 0f^a_k`, with the
/// Jacobians of [`crate::kinematics::body_jacobian`] carried to base coordinates.
pub fn loop_active_tau_dense(model: &Model, q: &[f64], tau_a: &[f64]) -> Result<DVector<f64>> {
    check_vector("qpos", q, model.nq)?;
    check_loops(model)?;
    check_tau_a(model, Some(tau_a))?;
    let kin = crate::kinematics::forward_kinematics(model, q)?;
    let forces = active_forces_base(model, &kin.x_0, tau_a);
    let mut tau = DVector::zeros(model.nv);
    for (lj, fa) in model.loops.iter().zip(forces) {
        for (b, sign) in [(lj.succ, 1.0), (lj.pred, -1.0)] {
            if b == 0 {
                continue;
            }
            let jb = crate::kinematics::body_jacobian(model, q, b)?;
            for c in 0..model.nv {
                let col = crate::spatial::Vec6::from_iterator(jb.column(c).iter().cloned());
                let m0 = kin.x_0[b].inv_apply_motion(&Motion::from_vec6(&col));
                tau[c] += sign * m0.dot(&fa);
            }
        }
    }
    Ok(tau)
}
