//! Tables 8.2 and 8.3: RNEA on the spanning tree with the active forces of the loop joints.

use super::constraints::{check_loops, loop_frames};
use super::table::loop_active_basis;
use crate::dynamics::base_acceleration;
use crate::error::{check_vector, Result};
use crate::model::{jcalc, Model};
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

// ANCHOR: rnea_loops
/// Inverse dynamics of the spanning tree minus the loop joints' active forces,
/// `ID(q, qdot, qdd) - tau^a = H qdd + C - tau^a` (Featherstone 8.6, tables 8.2 and 8.3; with
/// `qdd = 0` it is `C - tau^a`, with `qdd` it is the `tau_ID` of 8.12).
///
/// - forward pass as in RNEA (table 5.1), also keeping `i X 0`;
/// - for each loop joint k: `0f^a_k = 0X*_P' T^a_k tau^a_k` ([`super::loop_active_basis`]);
///   `f_s(k) -= s(k)X*_0 0f^a_k` (the successor receives `+f^a`),
///   `f_p(k) += p(k)X*_0 0f^a_k` (the predecessor receives `-f^a`); the base absorbs its share;
/// - backward pass: `tau_i = S_i^T f_i` (+ armature `qdd_i`), `f_lambda(i) += lambda X*_i f_i`.
///
/// `tau_a` stacks `n_k` numbers per loop joint in model order (`None`: all loop joints passive).
/// External forces `f_ext` are in base coordinates, as in [`crate::dynamics::rnea`].
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
    let n1 = model.nb + 1;
    let mut x_up = vec![Xform::identity(); n1];
    let mut x_0 = vec![Xform::identity(); n1];
    let mut v = vec![Motion::zero(); n1];
    let mut a = vec![Motion::zero(); n1];
    let mut f = vec![Force::zero(); n1];
    let mut s = vec![crate::model::Subspace::default(); n1];
    a[0] = base_acceleration(model);
    for i in 1..=model.nb {
        let vs = model.dofs(i);
        let jc = jcalc(&model.joints[i], &q[model.qs(i)], &qd[vs.clone()]);
        let p = model.lambda[i];
        x_up[i] = jc.x_j.compose(&model.x_tree[i]);
        x_0[i] = x_up[i].compose(&x_0[p]);
        v[i] = x_up[i].apply_motion(&v[p]) + jc.v_j;
        a[i] = x_up[i].apply_motion(&a[p]) + jc.s.mul(&qdd[vs]) + jc.c_j + v[i].cross_motion(&jc.v_j);
        let inertia = &model.inertia[i];
        f[i] = inertia.mul_motion(&a[i]) + v[i].cross_force(&inertia.mul_motion(&v[i]));
        if let Some(fx) = f_ext {
            f[i] -= x_0[i].apply_force(&fx[i]);
        }
        s[i] = jc.s;
    }
    if let Some(ta) = tau_a {
        for (lj, fa) in model.loops.iter().zip(active_forces_base(model, &x_0, ta)) {
            if lj.succ != 0 {
                f[lj.succ] -= x_0[lj.succ].apply_force(&fa);
            }
            if lj.pred != 0 {
                f[lj.pred] += x_0[lj.pred].apply_force(&fa);
            }
        }
    }
    let mut tau = DVector::zeros(model.nv);
    for i in (1..=model.nb).rev() {
        for (c, dof) in model.dofs(i).enumerate() {
            tau[dof] = s[i].cols[c].dot(&f[i]) + model.joints[i].armature * qdd[dof];
        }
        let p = model.lambda[i];
        if p != 0 {
            let fp = x_up[i].inv_apply_force(&f[i]);
            f[p] += fp;
        }
    }
    crate::error::check_output("tau", tau.as_slice())?;
    Ok(tau)
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
