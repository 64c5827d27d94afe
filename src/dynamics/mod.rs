//! Rigid-body dynamics of kinematic trees (Featherstone chapters 5-7): RNEA, CRBA, ABA and
//! energy, with MuJoCo's passive forces (joint damping, springs) and armature.
//!
//! Conventions shared by every routine here:
//! - gravity is `model.opt.gravity` in base coordinates and enters as the fictitious base
//!   acceleration `a_0 = -a_g` (Featherstone 5.3);
//! - external forces `f_ext[i]` act on body i and are given in **base** coordinates (the
//!   convention of Featherstone's `f^x`), a slice of length nb + 1 (entry 0 ignored);
//! - armature is part of H: `H = H_rigid + diag(armature)`, and RNEA adds `armature * qdd`, so
//!   that RNEA(q, qd, qdd) = H qdd + C exactly as MuJoCo's `M` and `qfrc_bias` relate.

mod aba;
mod crba;
mod energy;
mod rnea;

pub use aba::{aba, aba_with};
pub use crba::{crba, crba_with, hand_c};
pub use energy::{kinetic_energy, potential_energy};
pub use rnea::{bias_forces, rnea, rnea_with};

use crate::error::{check_vector, Error, Result};
use crate::model::{JointCalc, Model};
use crate::spatial::{Force, Mat6, Motion, SpatialInertia, Xform};
use crate::vector::AsVector;
use nalgebra::DVector;

/// Pre-allocated per-body storage shared by the recursive algorithms, so that repeated calls
/// (simulation, benchmarks) do not allocate. Create once per model with [`Workspace::new`].
#[derive(Clone, Debug)]
pub struct Workspace {
    /// `i_X_lambda(i)`.
    pub x_up: Vec<Xform>,
    /// `i_X_0`, filled only when external forces are given.
    pub x_0: Vec<Xform>,
    /// `jcalc`'s output for every joint: `X_J`, the motion subspace `S_i` (body coordinates),
    /// `v_J` and `c_J`, filled in place by [`jcalc_into`](crate::model::jcalc_into).
    pub jc: Vec<JointCalc>,
    /// Body velocities.
    pub v: Vec<Motion>,
    /// Body accelerations.
    pub a: Vec<Motion>,
    /// Velocity-product accelerations `c_i = c_J + v_i x v_J` (ABA).
    pub c: Vec<Motion>,
    /// Body forces (RNEA) or bias forces `p^A` (ABA).
    pub f: Vec<Force>,
    /// Composite rigid-body inertias (CRBA).
    pub ic: Vec<SpatialInertia>,
    /// Articulated-body inertias (ABA).
    pub ia: Vec<Mat6>,
    /// `U_i = I^A_i S_i`, column by column (ABA).
    pub u_cols: Vec<[Force; 6]>,
    /// `D_i^-1` in the top-left n_i x n_i block (ABA).
    pub d_inv: Vec<Mat6>,
    /// `u_i = tau_i - S_i^T p^A_i` (ABA).
    pub u: Vec<[f64; 6]>,
    /// The columns of CRBA's `F`, one force per dof (CRBA).
    pub f_cols: Vec<Force>,
    /// For each body, the dofs of its subtree (its own and its descendants'), ascending: the
    /// columns of `F` that CRBA carries through that body. Depends on the model only.
    pub subtree_dofs: Vec<Vec<usize>>,
}

impl Workspace {
    /// Storage for `model`.
    pub fn new(model: &Model) -> Self {
        let n = model.nb + 1;
        Workspace {
            x_up: vec![Xform::identity(); n],
            x_0: vec![Xform::identity(); n],
            jc: vec![JointCalc::default(); n],
            v: vec![Motion::zero(); n],
            a: vec![Motion::zero(); n],
            c: vec![Motion::zero(); n],
            f: vec![Force::zero(); n],
            ic: vec![SpatialInertia::zero(); n],
            ia: vec![Mat6::zeros(); n],
            u_cols: vec![[Force::zero(); 6]; n],
            d_inv: vec![Mat6::zeros(); n],
            u: vec![[0.0; 6]; n],
            f_cols: vec![Force::zero(); model.nv],
            subtree_dofs: subtree_dofs(model),
        }
    }
}

/// The dofs in the subtree of every body (entry 0, the base, gets every dof), ascending.
fn subtree_dofs(model: &Model) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); model.nb + 1];
    for b in 1..=model.nb {
        let mut j = b;
        loop {
            out[j].extend(model.dofs(b));
            if j == 0 {
                break;
            }
            j = model.lambda[j];
        }
    }
    out
}

// ANCHOR: base_acceleration
/// The fictitious base acceleration `a_0 = -a_g` that accounts for gravity (Featherstone 5.3).
#[inline]
pub fn base_acceleration(model: &Model) -> Motion {
    Motion::new(crate::spatial::Vec3::zeros(), -model.opt.gravity)
}
// ANCHOR_END: base_acceleration

/// Checks an external-force slice: length nb + 1 and finite.
pub(crate) fn check_fext(model: &Model, f_ext: Option<&[Force]>) -> Result<()> {
    if let Some(fx) = f_ext {
        if fx.len() != model.nb + 1 {
            return Err(Error::BadLength {
                what: "f_ext".into(),
                got: fx.len(),
                expected: model.nb + 1,
            });
        }
        for (i, f) in fx.iter().enumerate() {
            let v = f.to_vec6();
            if let Some(k) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::NonFinite {
                    what: format!("f_ext[{i}]"),
                    index: k,
                    value: v[k],
                });
            }
        }
    }
    Ok(())
}

/// MuJoCo's passive forces `qfrc_passive`: joint damping `-damping * qdot` on every dof and joint
/// springs `-stiffness * (q - qpos0)` on hinge and slide joints.
pub fn passive_forces(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
) -> Result<DVector<f64>> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    model.check_state(q, qd)?;
    let mut out = DVector::zeros(model.nv);
    passive_forces_with(model, q, qd, out.as_mut_slice());
    Ok(out)
}

// ANCHOR: passive
/// [`passive_forces`] into `out` (length nv); inputs are assumed valid.
pub fn passive_forces_with(model: &Model, q: &[f64], qd: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for i in 1..=model.nb {
        let j = &model.joints[i];
        for dof in model.dofs(i) {
            out[dof] -= j.damping * qd[dof];
        }
        if j.stiffness != 0.0 && j.jtype.nq() == 1 && j.jtype.nv() == 1 {
            let a = model.q_adr[i];
            out[model.v_adr[i]] -= j.stiffness * (q[a] - model.qpos0[a]);
        }
    }
}
// ANCHOR_END: passive

/// MuJoCo's unconstrained acceleration `qacc_smooth = M^-1 (qfrc_passive - qfrc_bias +
/// qfrc_applied)`, computed with ABA (`tau = qfrc_passive + qfrc_applied`).
pub fn qacc_smooth(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
    qfrc_applied: &(impl AsVector + ?Sized),
) -> Result<DVector<f64>> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    let qfrc_applied = qfrc_applied.as_vector();
    check_vector("qfrc_applied", qfrc_applied, model.nv)?;
    let tau = passive_forces(model, q, qd)? + DVector::from_column_slice(qfrc_applied);
    aba(model, q, qd, tau.as_slice(), None)
}
