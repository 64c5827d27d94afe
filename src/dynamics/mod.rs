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
mod actuation;
mod crba;
mod energy;
mod passive;
mod rnea;
mod tendon;
mod xfrc;

pub use aba::{aba, aba_with};
pub use actuation::{
    actuation, actuation_with, actuator_acc0, actuator_forces, actuator_na, check_controls, clamped_ctrl,
    joint_actuator_forces, muscle_bias, muscle_dynamics, muscle_gain, muscle_gain_length, muscle_gain_vel,
    muscle_gain_velocity, muscle_timescale, next_activation, set_dampratio, sigmoid, tendon_actuator_limits,
    transmission, transmission_with, Actuation,
};
pub use crba::{crba, crba_with, fill_upper, hand_c, SubspaceShape};
pub use energy::{kinetic_energy, potential_energy, potential_energy_placed};
pub use passive::{
    fluid_forces, fluid_forces_with, gravcomp_into, has_gravcomp, tendon_passive, tendon_spring_force, PassiveScratch,
};
pub use rnea::{bias_forces, rnea, rnea_with};
pub use tendon::{
    check_spring_lengths, set_spring_lengths, tendon_kinematics, tendon_kinematics_into, tendon_segments, wrap,
    wrap_circle, wrap_inside, TendonState, WrapShape, Wrapped,
};
pub use xfrc::{check_xfrc, has_xfrc, xfrc_into};

use crate::error::{check_vector, Error, Result};
use crate::model::{difference_joint, JointCalc, JointType, Model};
use crate::spatial::{Force, Mat3, Mat6, Motion, SpatialInertia, Vec3, Xform};
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
    /// Per body, `Some(a..b)` when the dofs of its subtree ([`Model::subtree_dofs`]) are the
    /// consecutive dofs `a..b`, as they are whenever bodies are numbered depth first (every MJCF
    /// model, every canned model): CRBA then walks the range instead of reading the list, which
    /// on a chain of n bodies is n^2 / 2 numbers (4 MB at 1,023 bodies) read on every call.
    pub subtree_span: Vec<Option<std::ops::Range<usize>>>,
    /// The [`SubspaceShape`] of every body's joint (CRBA), which depends only on the joint: found
    /// once here by [`SubspaceShape::of_model`].
    pub shapes: Vec<SubspaceShape>,
    /// Per body, whether `X_T(i)` is a pure translation (its rotation is exactly the identity,
    /// as for every body placed by `pos` alone): CRBA then forms `X_J X_T` without a 3x3
    /// product, with the same numbers.
    pub tree_translation: Vec<bool>,
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
            subtree_span: model
                .subtree_dofs()
                .iter()
                .map(|dofs| match (dofs.first(), dofs.last()) {
                    (Some(&a), Some(&b)) if b - a + 1 == dofs.len() => Some(a..b + 1),
                    _ => None,
                })
                .collect(),
            shapes: SubspaceShape::of_model(model),
            tree_translation: model.x_tree.iter().map(|x| x.e == Mat3::identity()).collect(),
        }
    }
}

/// `Some(k)` if the motion `s` is a unit rotation about coordinate axis k (`s = e_k`, the
/// revolute joints `Rx`, `Ry`, `Rz` of Featherstone's table 4.1 without an anchor offset): then
/// `s . f = f.n[k]`, one number instead of a six-term dot product.
#[inline]
pub(crate) fn coordinate_axis(s: &Motion) -> Option<usize> {
    if s.v != Vec3::zeros() {
        return None;
    }
    [Vec3::x(), Vec3::y(), Vec3::z()].iter().position(|e| s.w == *e)
}

/// `s . f`, read off `f` when `axis` (from [`coordinate_axis`]) says `s` is a coordinate axis.
#[inline]
pub(crate) fn axis_dot(axis: Option<usize>, s: &Motion, f: &Force) -> f64 {
    match axis {
        Some(k) => f.n[k],
        None => s.dot(f),
    }
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

/// MuJoCo's passive forces `qfrc_passive` (`mj_passive`): joint damping `-damping * qdot` on
/// every dof, joint springs `-stiffness * (q - springref)` on hinge and slide joints, tendon
/// springs and dampers ([`tendon_passive`]), the inertia-box fluid forces
/// ([`fluid_forces`], `mj_fluid`) when the model sets `density` or `viscosity`, and gravity
/// compensation ([`gravcomp_into`], `mj_gravcomp`) at the dofs of joints without
/// `actuatorgravcomp` when a body sets `gravcomp`.
pub fn passive_forces(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
) -> Result<DVector<f64>> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    model.check_state(q, qd)?;
    let mut out = DVector::zeros(model.nv);
    passive_forces_with(model, q, qd, out.as_mut_slice())?;
    crate::error::check_output("qfrc_passive", out.as_slice())?;
    Ok(out)
}

/// [`passive_forces`] into `out` (length nv); inputs are assumed valid. The joint terms neither
/// check nor allocate; tendon springs and dampers need the tendon lengths
/// ([`tendon_kinematics`], which allocates and fails with [`Error::Unsupported`] on a wrapping
/// tendon), and the fluid forces allocate their per-body scratch: [`passive_forces_into`] is
/// the same with both kept by the caller.
pub fn passive_forces_with(model: &Model, q: &[f64], qd: &[f64], out: &mut [f64]) -> Result<()> {
    check_spring_lengths(model)?;
    let ten = if model.tendons.iter().any(|t| t.stiffness != 0.0 || t.damping != 0.0) {
        Some(tendon_kinematics(model, q)?)
    } else {
        None
    };
    passive_forces_into(model, q, qd, &[], ten.as_ref(), &mut PassiveScratch::default(), out);
    Ok(())
}

// ANCHOR: passive
/// [`passive_forces_with`] with the mocap bodies placed at `mocap` (one transform per mocap
/// body, [`crate::model::mocap_xform`]; empty: at their default poses), the tendon lengths and
/// moments `ten` at `q` computed by the caller (the position stage's; `None` for a model
/// without tendons) and the per-body storage of the fluid model and the gravity compensation
/// kept by it: no allocation. One pass of kinematics serves both; `scratch.gravcomp` keeps
/// `qfrc_gravcomp` (all of it, the share of `actuatorgravcomp` joints included, which
/// [`actuation_with`] adds to `qfrc_actuator`).
pub fn passive_forces_into(
    model: &Model,
    q: &[f64],
    qd: &[f64],
    mocap: &[Xform],
    ten: Option<&TendonState>,
    scratch: &mut PassiveScratch,
    out: &mut [f64],
) {
    out.fill(0.0);
    for i in 1..=model.nb {
        let j = &model.joints[i];
        for dof in model.dofs(i) {
            out[dof] -= j.damping * qd[dof];
        }
        if j.stiffness != 0.0 && j.jtype.nq() == 1 && j.jtype.nv() == 1 {
            let a = model.q_adr[i];
            out[model.v_adr[i]] -= j.stiffness * (q[a] - j.springref);
        } else if j.stiffness != 0.0 && matches!(j.jtype, JointType::Spherical | JointType::Free) {
            // MuJoCo's ball and free springs pull towards qpos_spring = qpos0: the rotation
            // vector q (-) qpos0 (`mju_subQuat`) and, for a free joint, the position difference.
            let (qs, vs) = (model.qs(i), model.dofs(i));
            let mut dif = [0.0; 6];
            difference_joint(
                &j.jtype,
                &model.qpos0.as_slice()[qs.clone()],
                &q[qs],
                &mut dif[..vs.len()],
            );
            for (k, dof) in vs.enumerate() {
                out[dof] -= j.stiffness * dif[k];
            }
        }
    }
    if let Some(ten) = ten {
        tendon_passive(model, ten, qd, out);
    }
    let (with_fluid, with_gravcomp) = (passive::has_fluid(model), has_gravcomp(model));
    if with_fluid || with_gravcomp {
        scratch.poses(model, q, Some(qd), mocap);
    }
    if with_fluid {
        passive::fluid_from_poses(model, scratch, out);
    }
    scratch.gravcomp.clear();
    scratch.gravcomp.resize(model.nv, 0.0);
    if with_gravcomp {
        passive::gravcomp_from_poses(model, scratch);
        // the compensation of joints with actuatorgravcomp goes to qfrc_actuator instead
        for i in 1..=model.nb {
            if !model.joints[i].actgravcomp {
                for dof in model.dofs(i) {
                    out[dof] += scratch.gravcomp[dof];
                }
            }
        }
    }
}
// ANCHOR_END: passive

/// MuJoCo's unconstrained acceleration `qacc_smooth = M^-1 (qfrc_passive + qfrc_actuator -
/// qfrc_bias + qfrc_applied)` at zero controls and activations (so `qfrc_actuator` holds only
/// the bias forces of servos, e.g. `-kp q` of a position actuator), computed with ABA.
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
    let mut tau = passive_forces(model, q, qd)? + DVector::from_column_slice(qfrc_applied);
    if !model.actuators.is_empty() {
        let ten = tendon_kinematics(model, q)?;
        let na = model
            .actuators
            .iter()
            .filter(|a| a.dyntype != crate::model::DynType::None)
            .count();
        let act = actuator_forces(model, &ten, q, qd, &vec![0.0; model.actuators.len()], &vec![0.0; na])?;
        for k in 0..model.nv {
            tau[k] += act[k];
        }
    }
    aba(model, q, qd, tau.as_slice(), None)
}
