//! Kinetic and potential energy (Featherstone 2.13 and 5.x; MuJoCo's `mj_energyPos`/`mj_energyVel`).

use crate::error::Result;
use crate::kinematics::{body_velocities, forward_kinematics};
use crate::model::Model;
use crate::vector::AsVector;

// ANCHOR: energy
/// Kinetic energy `T = 1/2 sum_i v_i . I_i v_i` (body coordinates), plus the armature's
/// `1/2 armature qdot^2`; equal to `1/2 qdot^T H qdot`.
pub fn kinetic_energy(model: &Model, q: &(impl AsVector + ?Sized), qd: &(impl AsVector + ?Sized)) -> Result<f64> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    let v = body_velocities(model, q, qd)?;
    let mut t = 0.0;
    for i in 1..=model.nb {
        t += 0.5 * v[i].dot(&model.inertia[i].mul_motion(&v[i]));
        for dof in model.dofs(i) {
            t += 0.5 * model.joints[i].armature * qd[dof] * qd[dof];
        }
    }
    crate::error::check_output("kinetic energy", &[t])?;
    Ok(t)
}

/// Potential energy of gravity, `U = - sum_i m_i g . c_i` (c_i the world centre of mass of body
/// i), plus MuJoCo's joint springs `1/2 stiffness (q - qpos0)^2` on hinge and slide joints.
pub fn potential_energy(model: &Model, q: &(impl AsVector + ?Sized)) -> Result<f64> {
    let q = q.as_vector();
    let kin = forward_kinematics(model, q)?;
    let mut u = 0.0;
    for i in 1..=model.nb {
        let inertia = &model.inertia[i];
        let c_world = kin.point(i, &inertia.com());
        u -= inertia.m * model.opt.gravity.dot(&c_world);
        let j = &model.joints[i];
        if j.stiffness != 0.0 && j.jtype.nq() == 1 && j.jtype.nv() == 1 {
            let a = model.q_adr[i];
            let dq = q[a] - j.springref;
            u += 0.5 * j.stiffness * dq * dq;
        }
    }
    crate::error::check_output("potential energy", &[u])?;
    Ok(u)
}
// ANCHOR_END: energy

/// [`potential_energy`] with the mocap bodies at `mocap_pos`, `mocap_quat` (MuJoCo's inputs,
/// one per mocap body, checked by [`Model::check_mocap`]): their masses, and those of the
/// bodies they carry, count at the input poses, as in MuJoCo's `mj_energyPos`.
pub fn potential_energy_placed(
    model: &Model,
    q: &[f64],
    mocap_pos: &[[f64; 3]],
    mocap_quat: &[[f64; 4]],
) -> Result<f64> {
    model.check_qpos(q)?;
    model.check_mocap(mocap_pos, mocap_quat)?;
    let mut mocap = Vec::new();
    crate::model::mocap_xforms_into(mocap_pos, mocap_quat, &mut mocap);
    let mut axes = crate::kinematics::WorldAxes::default();
    axes.update(model, q, &mocap);
    let mut u = 0.0;
    for i in 1..=model.nb {
        let inertia = &model.inertia[i];
        u -= inertia.m * model.opt.gravity.dot(&axes.point(i, &inertia.com()));
        let j = &model.joints[i];
        if j.stiffness != 0.0 && j.jtype.nq() == 1 && j.jtype.nv() == 1 {
            let dq = q[model.q_adr[i]] - j.springref;
            u += 0.5 * j.stiffness * dq * dq;
        }
    }
    crate::error::check_output("potential energy", &[u])?;
    Ok(u)
}
