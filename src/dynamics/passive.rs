//! MuJoCo's passive forces beyond joint springs and dampers (`mj_passive`): tendon springs and
//! dampers, the inertia-box fluid model (`mj_inertiaBoxFluidModel`, called by `mj_fluid`) and
//! gravity compensation (`mj_gravcomp`).

use super::tendon::TendonState;
use crate::model::constants::mjMINVAL;
use crate::model::{jcalc_into, JointCalc, Model};
use crate::spatial::{quat_to_mat, Force, Motion, Vec3, Xform};

/// The per-body storage of the fluid model ([`fluid_forces_with`]) and of gravity compensation
/// ([`gravcomp_into`]): the bodies' transforms, velocities, joint quantities and forces, kept
/// between calls so that a repeated call allocates nothing, and the last `qfrc_gravcomp`.
#[derive(Clone, Debug, Default)]
pub struct PassiveScratch {
    x_up: Vec<Xform>,
    x_0: Vec<Xform>,
    v: Vec<Motion>,
    jcs: Vec<JointCalc>,
    f: Vec<Force>,
    /// MuJoCo's `qfrc_gravcomp` (nv) of the last [`gravcomp_into`] (or of
    /// [`super::passive_forces_into`]); all zeros when the model has no gravity compensation.
    pub gravcomp: Vec<f64>,
}

impl PassiveScratch {
    /// The bodies' transforms `x_up` (parent to body), `x_0` (world to body), joint quantities
    /// and velocities at `(q, qd)` (`qd = None`: at rest), the mocap bodies placed at `mocap`
    /// (empty: at their default poses; a mocap body has no velocity): the forward pass of
    /// kinematics both passive models need.
    pub(crate) fn poses(&mut self, model: &Model, q: &[f64], qd: Option<&[f64]>, mocap: &[Xform]) {
        let n = model.nb + 1;
        let PassiveScratch { x_up, x_0, v, jcs, .. } = self;
        for (buf, zero) in [(&mut *x_up, Xform::identity()), (&mut *x_0, Xform::identity())] {
            buf.clear();
            buf.resize(n, zero);
        }
        v.clear();
        v.resize(n, Motion::zero());
        jcs.clear();
        jcs.resize(n, JointCalc::default());
        let rest = [0.0; 6];
        for i in 1..=model.nb {
            let dofs = model.dofs(i);
            let qd_i = match qd {
                Some(qd) => &qd[dofs],
                None => &rest[..dofs.len()],
            };
            jcalc_into(&model.joints[i], &q[model.qs(i)], qd_i, &mut jcs[i]);
            let jc = &jcs[i];
            x_up[i] = jc.x_j.compose(model.x_tree_placed(i, mocap));
            x_0[i] = x_up[i].compose(&x_0[model.lambda[i]]);
            v[i] = x_up[i].apply_motion(&v[model.lambda[i]]) + jc.v_j;
        }
    }

    /// `qfrc += S^T f` for the body forces `self.f`, accumulated from the leaves (RNEA's
    /// backward pass; MuJoCo's `mj_applyFT` for each body).
    fn project(&mut self, model: &Model, qfrc: &mut [f64]) {
        let PassiveScratch { x_up, jcs, f, .. } = self;
        for i in (1..=model.nb).rev() {
            for (k, dof) in model.dofs(i).enumerate() {
                qfrc[dof] += jcs[i].s.cols[k].dot(&f[i]);
            }
            let p = model.lambda[i];
            if p != 0 {
                let fp = x_up[i].inv_apply_force(&f[i]);
                f[p] += fp;
            }
        }
    }
}

/// Whether gravity compensation acts (MuJoCo's `flg_gravcomp` and a non-zero gravity): some body
/// has a non-zero `gravcomp` and gravity is not zero (a disabled gravity flag sets it to zero).
pub fn has_gravcomp(model: &Model) -> bool {
    model.opt.gravity.norm() != 0.0 && model.body_gravcomp.iter().any(|&g| g != 0.0)
}

// ANCHOR: gravcomp
/// MuJoCo's `mj_gravcomp`: the joint forces `qfrc_gravcomp` that hold a fraction `gravcomp_i` of
/// each body's weight, the force `-gravcomp_i m_i g` at its centre of mass mapped through the
/// body's Jacobian (`mj_applyFT`). In Featherstone's terms this is the gravity part of RNEA,
/// `tau = S^T sum_descendants I_j a_j` with the base accelerating upwards at `-g` and nothing
/// moving, with each body's inertia scaled by its `gravcomp`: with `gravcomp = 1` on every body
/// it is exactly the gravity term of the bias force `c(q, 0)`, so that gravity is cancelled.
/// Into `s.gravcomp` (nv); zeros when [`has_gravcomp`] is false. `q` must have `nq` finite
/// entries (a [`crate::error::Error`] otherwise); nothing is allocated once `s` has the model's
/// size.
pub fn gravcomp_into(model: &Model, q: &[f64], s: &mut PassiveScratch) -> crate::error::Result<()> {
    crate::error::check_vector("qpos", q, model.nq)?;
    s.gravcomp.clear();
    s.gravcomp.resize(model.nv, 0.0);
    if has_gravcomp(model) {
        s.poses(model, q, None, &[]);
        gravcomp_from_poses(model, s);
    }
    Ok(())
}

/// [`gravcomp_into`] once `s` holds the bodies' poses ([`PassiveScratch::poses`]).
pub(crate) fn gravcomp_from_poses(model: &Model, s: &mut PassiveScratch) {
    let a0 = super::base_acceleration(model); // (0, -g): upwards, in world coordinates
    s.f.clear();
    s.f.resize(model.nb + 1, Force::zero());
    for i in 1..=model.nb {
        let gc = model.body_gravcomp[i];
        if gc != 0.0 {
            let a = s.x_0[i].apply_motion(&a0);
            s.f[i] = model.inertia[i].mul_motion(&a) * gc;
        }
    }
    let mut g = std::mem::take(&mut s.gravcomp);
    s.project(model, &mut g);
    s.gravcomp = g;
}
// ANCHOR_END: gravcomp

/// The force a tendon's spring and damper exert along it at length `l` and velocity `ldot`,
/// positive when it pushes its ends apart: `-stiffness (l - nearest end of springlength) -
/// damping ldot`, no spring force inside the dead band `springlength[0] <= l <=
/// springlength[1]` (`mj_passive`).
pub fn tendon_spring_force(tendon: &crate::model::Tendon, l: f64, ldot: f64) -> f64 {
    let [lo, hi] = tendon.springlength;
    let stretch = if l > hi {
        l - hi
    } else if l < lo {
        l - lo
    } else {
        0.0
    };
    -tendon.stiffness * stretch - tendon.damping * ldot
}

/// Tendon springs and dampers (`mj_passive`): a tendon of length `L` and velocity `Ldot` pulls
/// with `f = -stiffness (L - nearest end of springlength) - damping Ldot` (no spring force
/// inside the dead band `springlength[0] <= L <= springlength[1]`), and `ten_J^T f` is added to
/// `qfrc`.
pub fn tendon_passive(model: &Model, ten: &TendonState, qd: &[f64], qfrc: &mut [f64]) {
    for (t, tendon) in model.tendons.iter().enumerate() {
        if tendon.stiffness == 0.0 && tendon.damping == 0.0 {
            continue;
        }
        let row = ten.moment.row(t);
        let velocity: f64 = (0..model.nv).map(|k| row[k] * qd[k]).sum();
        let f = tendon_spring_force(tendon, ten.length[t], velocity);
        for k in 0..model.nv {
            qfrc[k] += row[k] * f;
        }
    }
}

// ANCHOR: inertia_box_fluid
/// MuJoCo's inertia-box fluid model (`mj_inertiaBoxFluidModel`), when `density` or
/// `viscosity` is positive. Each body with mass is replaced by the box with its mass and principal moments
/// (`body_inertia`): side lengths `b_k = sqrt(6 (I_j + I_l - I_k) / m)`. With `w`
/// and `v` the body's angular velocity and the velocity of its centre of mass relative to the
/// wind, both in the principal axes (`body_iquat`), it feels
/// - viscous (Stokes) drag of the equivalent sphere of diameter `d = (b_0 + b_1 + b_2) / 3`:
///   torque `-pi d^3 mu w`, force `-3 pi d mu v`;
/// - quadratic drag of the box: force `-1/2 rho b_j b_l |v_k| v_k` and torque
///   `-rho b_k (b_j^4 + b_l^4) / 64 |w_k| w_k` along each axis k,
///
/// applied at the centre of mass. The generalized forces are added to `qfrc` (the transpose of
/// the body Jacobian, as `mj_applyFT`), computed here by one backward pass over the tree.
pub fn fluid_forces(model: &Model, q: &[f64], qd: &[f64], qfrc: &mut [f64]) {
    fluid_forces_with(model, q, qd, &mut PassiveScratch::default(), qfrc);
}

/// [`fluid_forces`] with the per-body storage in `s` (no allocation once it has the model's size).
pub fn fluid_forces_with(model: &Model, q: &[f64], qd: &[f64], s: &mut PassiveScratch, qfrc: &mut [f64]) {
    if has_fluid(model) {
        s.poses(model, q, Some(qd), &[]);
        fluid_from_poses(model, s, qfrc);
    }
}

/// Whether the fluid model acts (a medium with density or viscosity).
pub fn has_fluid(model: &Model) -> bool {
    model.opt.density != 0.0 || model.opt.viscosity != 0.0
}

/// [`fluid_forces_with`] once `s` holds the bodies' poses and velocities.
pub(crate) fn fluid_from_poses(model: &Model, s: &mut PassiveScratch, qfrc: &mut [f64]) {
    let (rho, mu) = (model.opt.density, model.opt.viscosity);
    let PassiveScratch { x_0, v, f, .. } = s;
    f.clear();
    f.resize(model.nb + 1, Force::zero());
    for i in 1..=model.nb {
        let si = &model.inertia[i];
        let mass = si.m;
        if mass < mjMINVAL {
            continue;
        }
        let inertia = model.body_inertia[i];
        let b = [
            ((inertia[1] + inertia[2] - inertia[0]).max(mjMINVAL) / mass * 6.0).sqrt(),
            ((inertia[0] + inertia[2] - inertia[1]).max(mjMINVAL) / mass * 6.0).sqrt(),
            ((inertia[0] + inertia[1] - inertia[2]).max(mjMINVAL) / mass * 6.0).sqrt(),
        ];
        // velocity of the centre of mass and angular velocity, in the principal axes
        let c = si.com();
        let r_i = quat_to_mat(&model.body_iquat[i]); // principal axes in body coordinates
        let wind_body = x_0[i].e * model.opt.wind; // wind in body coordinates
        let w = r_i.transpose() * v[i].w;
        let lin = r_i.transpose() * (v[i].v + v[i].w.cross(&c) - wind_body);
        let mut torque = Vec3::zeros();
        let mut force = Vec3::zeros();
        if mu > 0.0 {
            let d = (b[0] + b[1] + b[2]) / 3.0;
            let pi = std::f64::consts::PI;
            torque -= w * (pi * d * d * d * mu);
            force -= lin * (3.0 * pi * d * mu);
        }
        if rho > 0.0 {
            force[0] -= 0.5 * rho * b[1] * b[2] * lin[0].abs() * lin[0];
            force[1] -= 0.5 * rho * b[0] * b[2] * lin[1].abs() * lin[1];
            force[2] -= 0.5 * rho * b[0] * b[1] * lin[2].abs() * lin[2];
            torque[0] -= rho * b[0] * (b[1].powi(4) + b[2].powi(4)) / 64.0 * w[0].abs() * w[0];
            torque[1] -= rho * b[1] * (b[0].powi(4) + b[2].powi(4)) / 64.0 * w[1].abs() * w[1];
            torque[2] -= rho * b[2] * (b[0].powi(4) + b[1].powi(4)) / 64.0 * w[2].abs() * w[2];
        }
        // back to body coordinates, as a spatial force about the body origin
        let force_b = r_i * force;
        let torque_b = r_i * torque + c.cross(&force_b);
        f[i] = Force {
            n: torque_b,
            f: force_b,
        };
    }
    // qfrc_i = S_i^T f_i, with f accumulated from the leaves (as in RNEA's backward pass)
    s.project(model, qfrc);
}
// ANCHOR_END: inertia_box_fluid
