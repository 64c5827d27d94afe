//! MuJoCo's pipeline, in MuJoCo's names (snake case). So far: the smooth, com-based part
//! ([`com`]): `mj_comPos`, `mj_comVel`, `mj_crb` into the sparse legacy `qM`, `mj_factorM` and
//! `mj_rne`. Book chapter: "MuJoCo's com-based quantities".

pub mod collision;
pub mod com;
pub mod constraint;
pub mod derivatives;
pub mod forward;
pub mod implicit;
pub mod integrator;
pub mod lengthrange;
pub mod limits;
pub mod ray;
pub mod sensor;
pub mod solver;
pub mod state;

pub use lengthrange::{compile, load, load_str, set_length_range, set_springdamper};

use crate::error::Result;
use crate::model::{JointCalc, Model};
use crate::sparse::{factor_i_in_place, NoCount, PivotPolicy};
use crate::spatial::{Force, Motion, SpatialInertia, Vec3, Xform};
use crate::vector::AsVector;

/// MuJoCo's `mjData` for the smooth dynamics. Per-dof arrays carry MuJoCo's names; per-body
/// arrays are kept per Featherstone body (suffix `_fb`) and converted to MuJoCo bodies by the
/// accessor methods of the same MuJoCo name.
#[derive(Clone, Debug)]
pub struct Data {
    /// `i_X_0` per Featherstone body.
    pub x_0: Vec<Xform>,
    /// World centre of mass of each Featherstone body (MuJoCo's `xipos`).
    pub xipos_fb: Vec<Vec3>,
    /// Subtree centre of mass per Featherstone body.
    pub subtree_com_fb: Vec<Vec3>,
    /// Root body of the tree each Featherstone body belongs to.
    pub rootid_fb: Vec<usize>,
    /// Com-based body inertia per Featherstone body.
    pub cinert_fb: Vec<SpatialInertia>,
    /// Com-based composite inertia per Featherstone body.
    pub crb_fb: Vec<SpatialInertia>,
    /// Com-based body velocity per Featherstone body.
    pub cvel_fb: Vec<Motion>,
    /// Com-based body acceleration (RNE) per Featherstone body.
    pub cacc_fb: Vec<Motion>,
    /// Com-based body force (RNE) per Featherstone body.
    pub cfrc_fb: Vec<Force>,
    /// Motion axis of each dof, com-based (`cdof`, nv).
    pub cdof: Vec<Motion>,
    /// Time derivative of `cdof` (`cdof_dot`, nv).
    pub cdof_dot: Vec<Motion>,
    /// The inertia matrix in the legacy sparse layout (`qM`, size nM).
    pub qm: Vec<f64>,
    /// Its `L^T D L` factor in the same layout (`qLD`).
    pub qld: Vec<f64>,
    /// `1 / D` (`qLDiagInv`).
    pub qld_diag_inv: Vec<f64>,
    /// `1 / sqrt(D)` (`qLDiagSqrtInv`).
    pub qld_diag_sqrt_inv: Vec<f64>,
    /// Bias forces (`qfrc_bias`).
    pub qfrc_bias: Vec<f64>,
    /// Scratch of `mj_comPos`: `sum m_b xipos_b` over each Featherstone body's subtree.
    pub subtree_moment_fb: Vec<Vec3>,
    /// Scratch of `mj_comPos`: the mass of each Featherstone body's subtree.
    pub subtree_mass_fb: Vec<f64>,
    /// Scratch of `mj_comPos`: one joint's `jcalc`, filled in place.
    pub jc: JointCalc,
    /// Which equality constraints are active (MuJoCo's `eq_active`, one per
    /// [`Model::equality`]): an input, like `qpos`, that the constraint stage reads (an
    /// inactive constraint makes no rows). [`Data::new`] sets it to the model's
    /// [`Model::eq_active0`], as `mj_resetData` does; switch a constraint on or off between
    /// calls by writing it (the [`integrator::Simulator`] copies its state's
    /// [`state::State::eq_active`] here before every forward pass).
    pub eq_active: Vec<bool>,
    /// The position of each mocap body in the world (MuJoCo's `mocap_pos`, nmocap): an input,
    /// like `qpos`, that places the body ([`Model::body_mocapid`]). [`Data::new`] sets it to the
    /// model's [`Model::mocap_pos0`], as `mj_resetData` does; the [`forward::Forward`]
    /// pipeline copies its own [`forward::Forward::mocap_pos`] here before every call.
    pub mocap_pos: Vec<[f64; 3]>,
    /// The orientation (w, x, y, z) of each mocap body (MuJoCo's `mocap_quat`, nmocap), any
    /// non-zero norm: [`com::mj_com_pos`] normalizes a copy, as `mj_kinematics` does.
    pub mocap_quat: Vec<[f64; 4]>,
    /// The mocap bodies' placements as transforms from world to body coordinates, from
    /// `mocap_pos` and the normalized `mocap_quat` ([`crate::model::mocap_xform`]), made by
    /// [`com::mj_com_pos`] and read by every later stage that places bodies (tendons,
    /// transmissions, passive forces).
    pub mocap_x: Vec<Xform>,
}

impl Data {
    /// Zeroed storage for `model`.
    pub fn new(model: &Model) -> Result<Self> {
        let n = model.nb + 1;
        let layout = model.mj_layout();
        Ok(Data {
            x_0: vec![Xform::identity(); n],
            xipos_fb: vec![Vec3::zeros(); n],
            subtree_com_fb: vec![Vec3::zeros(); n],
            rootid_fb: vec![0; n],
            cinert_fb: vec![SpatialInertia::zero(); n],
            crb_fb: vec![SpatialInertia::zero(); n],
            cvel_fb: vec![Motion::zero(); n],
            cacc_fb: vec![Motion::zero(); n],
            cfrc_fb: vec![Force::zero(); n],
            cdof: vec![Motion::zero(); model.nv],
            cdof_dot: vec![Motion::zero(); model.nv],
            qm: vec![0.0; layout.nm],
            qld: vec![0.0; layout.nm],
            qld_diag_inv: vec![0.0; model.nv],
            qld_diag_sqrt_inv: vec![0.0; model.nv],
            qfrc_bias: vec![0.0; model.nv],
            subtree_moment_fb: vec![Vec3::zeros(); n],
            subtree_mass_fb: vec![0.0; n],
            jc: JointCalc::default(),
            eq_active: (0..model.equality.len()).map(|k| model.eq_active0_of(k)).collect(),
            mocap_pos: model.mocap_pos0.clone(),
            mocap_quat: model.mocap_quat0.clone(),
            mocap_x: Vec::with_capacity(model.nmocap()),
        })
    }

    /// The first Featherstone body of each MuJoCo body (its subtree is the MuJoCo body's subtree).
    fn mj_first(model: &Model) -> Vec<usize> {
        let mut first = vec![0; model.mj_nbody()];
        for i in (1..=model.nb).rev() {
            first[model.mj_body[i]] = i;
        }
        first
    }

    /// `subtree_com` per MuJoCo body (nbody x 3).
    pub fn subtree_com(&self, model: &Model) -> Vec<Vec3> {
        Self::mj_first(model).iter().map(|&f| self.subtree_com_fb[f]).collect()
    }

    /// `cinert` per MuJoCo body (nbody x 10; zeros for the world body).
    pub fn cinert(&self, model: &Model) -> Vec<[f64; 10]> {
        model
            .mj_body_last
            .iter()
            .map(|&f| {
                if f == 0 {
                    [0.0; 10]
                } else {
                    com::inertia_to_mj10(&self.cinert_fb[f])
                }
            })
            .collect()
    }

    /// `crb` per MuJoCo body (nbody x 10).
    pub fn crb(&self, model: &Model) -> Vec<[f64; 10]> {
        Self::mj_first(model)
            .iter()
            .map(|&f| {
                if f == 0 {
                    [0.0; 10]
                } else {
                    com::inertia_to_mj10(&self.crb_fb[f])
                }
            })
            .collect()
    }

    /// `cvel` per MuJoCo body (nbody x 6, [angular; linear]).
    pub fn cvel(&self, model: &Model) -> Vec<Motion> {
        model.mj_body_last.iter().map(|&f| self.cvel_fb[f]).collect()
    }

    /// `xipos` per MuJoCo body.
    pub fn xipos(&self, model: &Model) -> Vec<Vec3> {
        model.mj_body_last.iter().map(|&f| self.xipos_fb[f]).collect()
    }
}

/// Runs the smooth part of `mj_forward` at (qpos, qvel): `mj_kinematics`, `mj_comPos`,
/// `mj_comVel`, `mj_crb`, `mj_factorM` (pivots must be positive) and `mj_rne` (bias forces).
pub fn forward_smooth(model: &Model, qpos: &(impl AsVector + ?Sized), qvel: &(impl AsVector + ?Sized)) -> Result<Data> {
    let qpos = qpos.as_vector();
    let qvel = qvel.as_vector();
    model.check_state(qpos, qvel)?;
    let mut d = Data::new(model)?;
    com::mj_com_pos(model, &mut d, qpos)?;
    com::mj_com_vel(model, &mut d, qvel);
    forward_smooth_with(model, &mut d, qpos, qvel)?;
    Ok(d)
}

// ANCHOR: forward_smooth_with
/// [`forward_smooth`] on storage made once by [`Data::new`]; inputs are assumed valid (lengths
/// and unit quaternions, see [`Model::check_state`]). Allocates nothing: this is the pipeline
/// the Performance chapter times against MuJoCo's own. Compiled for AVX where the processor has
/// it, as MuJoCo's library is (see `sparse::with_avx`).
pub fn forward_smooth_with(model: &Model, d: &mut Data, qpos: &[f64], qvel: &[f64]) -> Result<()> {
    crate::sparse::with_avx(
        #[inline(always)]
        || smooth_stages(model, d, qpos, qvel),
    )
}

/// The stages of [`forward_smooth_with`].
#[inline(always)]
fn smooth_stages(model: &Model, d: &mut Data, qpos: &[f64], qvel: &[f64]) -> Result<()> {
    com::mj_com_pos(model, d, qpos)?;
    com::mj_com_vel(model, d, qvel);
    com::mj_crb(model, model.mj_layout(), d);
    d.qld.copy_from_slice(&d.qm);
    factor_i_in_place(
        model.mj_layout(),
        &mut d.qld,
        &mut d.qld_diag_inv,
        PivotPolicy::Error,
        &mut Vec::new(),
        &mut NoCount,
    )?;
    for (s, inv) in d.qld_diag_sqrt_inv.iter_mut().zip(&d.qld_diag_inv) {
        *s = inv.sqrt();
    }
    let mut bias = std::mem::take(&mut d.qfrc_bias);
    com::mj_rne(model, d, qvel, None, &mut bias);
    d.qfrc_bias = bias;
    Ok(())
}
// ANCHOR_END: forward_smooth_with

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::{bias_forces, crba};
    use crate::model::canned;
    use approx::assert_relative_eq;

    /// Planar, helical and cylindrical joints, which MuJoCo does not have, through the general rule.
    fn exotic_joints() -> Model {
        use crate::model::{Joint, JointType, ModelBuilder};
        use crate::spatial::{rotx, xlt, Vec3};
        let mut b = ModelBuilder::new("exotic");
        let rod = canned::rod(1.0, 0.4, Vec3::new(1.0, 0.2, -0.3));
        let p = b.add_body("planar", 0, Joint::new(JointType::Planar), rotx(0.3), rod);
        let mut hel = Joint::new(JointType::Helical {
            axis: Vec3::new(0.0, 0.6, 0.8),
            pitch: 0.05,
        });
        hel.pos = Vec3::new(0.1, 0.0, 0.05);
        let h = b.add_body("helical", p, hel, xlt(Vec3::new(0.4, 0.0, 0.0)), rod);
        b.add_body(
            "cyl",
            h,
            Joint::new(JointType::Cylindrical { axis: Vec3::x() }),
            xlt(Vec3::new(0.0, 0.3, 0.0)),
            rod,
        );
        b.add_body(
            "ball",
            p,
            Joint::new(JointType::Spherical),
            xlt(Vec3::new(0.0, 0.0, 0.2)),
            rod,
        );
        b.build().unwrap()
    }

    /// The com-based M and bias equal Featherstone's body-frame CRBA and RNEA.
    #[test]
    fn com_based_m_and_bias_equal_body_frame_crba_and_rnea() {
        for model in [
            canned::floating_base_ball_arms(),
            canned::binary_tree(3),
            canned::chain(5, true),
            exotic_joints(),
        ] {
            let mut q = model.qpos0.clone();
            let v: Vec<f64> = (0..model.nv).map(|k| 0.4 * (k as f64 * 1.7 + 0.3).sin()).collect();
            model.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
            let d = forward_smooth(&model, q.as_slice(), &v).unwrap();
            let h = crba(&model, q.as_slice()).unwrap();
            assert_relative_eq!(model.mj_layout().to_dense(&d.qm), h, epsilon = 1e-12 * h.amax());
            let c = bias_forces(&model, q.as_slice(), &v).unwrap();
            for k in 0..model.nv {
                assert_relative_eq!(d.qfrc_bias[k], c[k], epsilon = 1e-11 * c.amax().max(1.0));
            }
        }
    }
}
