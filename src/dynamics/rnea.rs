//! The recursive Newton-Euler algorithm (Featherstone 5.3, table 5.1).

use super::{base_acceleration, check_fext, Workspace};
use crate::error::{check_vector, Result};
use crate::model::{jcalc_into, Model};
use crate::spatial::{Force, Motion};
use crate::vector::AsVector;
use nalgebra::DVector;

/// Inverse dynamics `tau = ID(q, qdot, qddot, f_ext)` by RNEA (Featherstone table 5.1), checking
/// the inputs. External forces are in base coordinates (see the module docs). Book chapter: "The
/// recursive Newton-Euler algorithm" (`book/src/rnea.md`); MuJoCo's `mj_inverse` without
/// constraints, Pinocchio's `rnea`.
///
/// ```
/// use mbd::dynamics::{crba, rnea};
/// use mbd::model::canned;
///
/// let model = canned::chain(3, true);
/// let (q, qd, qdd) = ([0.1, -0.4, 0.7], [0.5, 0.0, -0.2], [1.0, 2.0, -1.0]);
/// let tau = rnea(&model, &q, &qd, &qdd, None)?;
/// // tau = H qdd + C, with H from CRBA and C = ID(q, qd, 0)
/// let c = rnea(&model, &q, &qd, &[0.0; 3], None)?;
/// let h = crba(&model, &q)?;
/// assert!((&tau - (&h * nalgebra::DVector::from_column_slice(&qdd) + c)).amax() < 1e-12);
/// // a state of the wrong size is an error that names it, not a panic
/// assert!(rnea(&model, &q[..2], &qd, &qdd, None).is_err());
/// # Ok::<(), mbd::Error>(())
/// ```
#[doc(alias = "inverse dynamics")]
#[doc(alias = "ID")]
#[doc(alias = "mj_inverse")]
pub fn rnea(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
    qdd: &(impl AsVector + ?Sized),
    f_ext: Option<&[Force]>,
) -> Result<DVector<f64>> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    let qdd = qdd.as_vector();
    model.check_state(q, qd)?;
    check_vector("qacc", qdd, model.nv)?;
    check_fext(model, f_ext)?;
    let mut ws = Workspace::new(model);
    let mut tau = DVector::zeros(model.nv);
    rnea_with(model, &mut ws, q, qd, qdd, f_ext, tau.as_mut_slice());
    crate::error::check_output("tau", tau.as_slice())?;
    Ok(tau)
}

/// The bias force `C(q, qdot) = ID(q, qdot, 0)` (MuJoCo's `qfrc_bias`): Coriolis, centrifugal
/// and gravity terms.
///
/// ```
/// use mbd::dynamics::bias_forces;
/// use mbd::model::canned;
///
/// // At rest, C is the torque that holds the pendulum against gravity; hanging straight down
/// // it needs none.
/// let model = canned::chain(2, false);
/// let c = bias_forces(&model, &[0.0, 0.0], &[0.0, 0.0])?;
/// assert!(c.amax() < 1e-12);
/// let c = bias_forces(&model, &[0.5, 0.0], &[0.0, 0.0])?;
/// assert!(c[0] > 0.0);
/// # Ok::<(), mbd::Error>(())
/// ```
#[doc(alias = "qfrc_bias")]
#[doc(alias = "nonlinear effects")]
#[doc(alias = "Coriolis")]
pub fn bias_forces(model: &Model, q: &(impl AsVector + ?Sized), qd: &(impl AsVector + ?Sized)) -> Result<DVector<f64>> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    rnea(model, q, qd, &vec![0.0; model.nv], None)
}

// ANCHOR: rnea
/// RNEA on pre-allocated storage; inputs are assumed valid (see [`rnea`]).
///
/// Featherstone table 5.1, eqs. (5.7)-(5.10):
/// - forward pass: `v_i = iX_lambda v_lambda + v_J`, `a_i = iX_lambda a_lambda + S_i qdd_i + c_J
///   + v_i x v_J`, `f_i = I_i a_i + v_i x* I_i v_i - iX_0* f^x_i`;
/// - backward pass: `tau_i = S_i^T f_i`, `f_lambda(i) += lambda_X_i* f_i`.
pub fn rnea_with(
    model: &Model,
    ws: &mut Workspace,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    f_ext: Option<&[Force]>,
    tau: &mut [f64],
) {
    let a0 = base_acceleration(model);
    for i in 1..=model.nb {
        let (qs, vs) = (model.qs(i), model.dofs(i));
        jcalc_into(&model.joints[i], &q[qs], &qd[vs.clone()], &mut ws.jc[i]);
        let jc = &ws.jc[i];
        let p = model.lambda[i];
        ws.x_up[i] = jc.x_j.compose(&model.x_tree[i]);
        let (v_p, a_p) = if p == 0 {
            (Motion::zero(), a0)
        } else {
            (ws.v[p], ws.a[p])
        };
        let v = ws.x_up[i].apply_motion(&v_p) + jc.v_j;
        let a = ws.x_up[i].apply_motion(&a_p) + jc.s.mul(&qdd[vs]) + jc.c_j + v.cross_motion(&jc.v_j);
        let inertia = &model.inertia[i];
        let mut f = inertia.mul_motion(&a) + v.cross_force(&inertia.mul_motion(&v));
        if let Some(fx) = f_ext {
            ws.x_0[i] = if p == 0 {
                ws.x_up[i]
            } else {
                ws.x_up[i].compose(&ws.x_0[p])
            };
            f -= ws.x_0[i].apply_force(&fx[i]);
        }
        ws.v[i] = v;
        ws.a[i] = a;
        ws.f[i] = f;
    }
    for i in (1..=model.nb).rev() {
        let j = &model.joints[i];
        for (k, dof) in model.dofs(i).enumerate() {
            tau[dof] = ws.jc[i].s.cols[k].dot(&ws.f[i]) + j.armature * qdd[dof];
        }
        let p = model.lambda[i];
        if p != 0 {
            let fp = ws.x_up[i].inv_apply_force(&ws.f[i]);
            ws.f[p] += fp;
        }
    }
}
// ANCHOR_END: rnea
