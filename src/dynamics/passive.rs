//! MuJoCo's passive forces beyond joint springs and dampers (`mj_passive`): tendon springs and
//! dampers, and the inertia-box fluid model (`mj_inertiaBoxFluidModel`, called by `mj_fluid`).

use super::tendon::TendonState;
use crate::model::constants::mjMINVAL;
use crate::model::{jcalc_into, JointCalc, Model};
use crate::spatial::{quat_to_mat, Force, Motion, Vec3, Xform};

/// The fluid model's per-body storage ([`fluid_forces_with`]): the bodies' transforms,
/// velocities, joint quantities and forces, kept between calls so that a repeated call
/// allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct FluidScratch {
    x_up: Vec<Xform>,
    x_0: Vec<Xform>,
    v: Vec<Motion>,
    jcs: Vec<JointCalc>,
    f: Vec<Force>,
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
        let l = ten.length[t];
        let [lo, hi] = tendon.springlength;
        let stretch = if l > hi {
            l - hi
        } else if l < lo {
            l - lo
        } else {
            0.0
        };
        let f = -tendon.stiffness * stretch - tendon.damping * velocity;
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
    fluid_forces_with(model, q, qd, &mut FluidScratch::default(), qfrc);
}

/// [`fluid_forces`] with the per-body storage in `s` (no allocation once it has the model's size).
pub fn fluid_forces_with(model: &Model, q: &[f64], qd: &[f64], s: &mut FluidScratch, qfrc: &mut [f64]) {
    let (rho, mu) = (model.opt.density, model.opt.viscosity);
    if rho == 0.0 && mu == 0.0 {
        return;
    }
    let n = model.nb + 1;
    let FluidScratch { x_up, x_0, v, jcs, f } = s;
    for (buf, zero) in [(&mut *x_up, Xform::identity()), (&mut *x_0, Xform::identity())] {
        buf.clear();
        buf.resize(n, zero);
    }
    v.clear();
    v.resize(n, Motion::zero());
    jcs.clear();
    jcs.resize(n, JointCalc::default());
    f.clear();
    f.resize(n, Force::zero());
    for i in 1..=model.nb {
        jcalc_into(&model.joints[i], &q[model.qs(i)], &qd[model.dofs(i)], &mut jcs[i]);
        let jc = &jcs[i];
        x_up[i] = jc.x_j.compose(&model.x_tree[i]);
        x_0[i] = x_up[i].compose(&x_0[model.lambda[i]]);
        v[i] = x_up[i].apply_motion(&v[model.lambda[i]]) + jc.v_j;
    }
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
// ANCHOR_END: inertia_box_fluid
