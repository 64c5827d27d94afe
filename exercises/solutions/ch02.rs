//! Worked answers to the exercises of "Joint models and kinematic trees" (statements in
//! `src/ch02.rs`).

pub use crate::types::UniversalJoint;
use mbd::spatial::{quat_to_mat, Mat3, Mat6, Motion, Vec3, Vec6};
use nalgebra::Matrix6x2;

/// In successor coordinates the first axis is `roty(q2) z = (-sin q2, 0, cos q2)` and the second
/// is y; `c_J` comes from the first column turning with q2:
/// `dS/dt qdot = (-cos q2, 0, -sin q2) q2' q1'`.
pub fn exercise_1(q: [f64; 2], qd: [f64; 2]) -> UniversalJoint {
    let (s1, c1) = q[0].sin_cos();
    let (s2, c2) = q[1].sin_cos();
    // rotz maps predecessor to intermediate coordinates, roty intermediate to successor.
    let rz = Mat3::new(c1, s1, 0.0, -s1, c1, 0.0, 0.0, 0.0, 1.0);
    let ry = Mat3::new(c2, 0.0, -s2, 0.0, 1.0, 0.0, s2, 0.0, c2);
    let e = ry * rz;
    let mut x_j = Mat6::zeros();
    x_j.fixed_view_mut::<3, 3>(0, 0).copy_from(&e);
    x_j.fixed_view_mut::<3, 3>(3, 3).copy_from(&e);
    let mut s = Matrix6x2::zeros();
    s[(0, 0)] = -s2;
    s[(2, 0)] = c2;
    s[(1, 1)] = 1.0;
    let v_j = s * nalgebra::Vector2::new(qd[0], qd[1]);
    let mut c_j = Vec6::zeros();
    c_j[0] = -c2 * qd[0] * qd[1];
    c_j[2] = -s2 * qd[0] * qd[1];
    UniversalJoint { x_j, s, v_j, c_j }
}

/// A body's first dof hangs from the last dof of the nearest ancestor that has dofs, every
/// further dof from the dof before it; `last[i]` carries "the last dof at or above body i".
pub fn exercise_2(lambda: &[usize], ndof: &[usize]) -> Vec<Option<usize>> {
    let nb = lambda.len() - 1;
    let mut last: Vec<Option<usize>> = vec![None; nb + 1];
    let mut out = Vec::new();
    for i in 1..=nb {
        let mut parent = last[lambda[i]];
        for _ in 0..ndof[i] {
            out.push(parent);
            parent = Some(out.len() - 1);
        }
        last[i] = parent;
    }
    out
}

/// A link at absolute angle `theta` (the sum of the joint angles above it) points along
/// `(-sin theta, 0, -cos theta)`: rotation about y by theta takes (0, 0, -1) there.
pub fn exercise_3(q: [f64; 3]) -> Vec3 {
    let lengths = [0.5, 0.49, 0.48];
    let mut theta = 0.0;
    let mut tip = Vec3::zeros();
    for k in 0..3 {
        theta += q[k];
        tip += Vec3::new(-theta.sin(), 0.0, -theta.cos()) * lengths[k];
    }
    tip
}

/// `q[k]` enters the absolute angle of every link from k on, so column k sums the derivatives
/// of those links' terms.
pub fn exercise_4(q: [f64; 3]) -> Mat3 {
    let lengths = [0.5, 0.49, 0.48];
    let thetas = [q[0], q[0] + q[1], q[0] + q[1] + q[2]];
    let mut jac = Mat3::zeros();
    for k in 0..3 {
        for l in k..3 {
            jac[(0, k)] -= lengths[l] * thetas[l].cos();
            jac[(2, k)] += lengths[l] * thetas[l].sin();
        }
    }
    jac
}

/// `w = R w_body`, and the body point passing through the world origin moves with
/// `pdot + w x (0 - p)`.
pub fn exercise_5(qpos: [f64; 7], qvel: [f64; 6]) -> Motion {
    let r = quat_to_mat(&[qpos[3], qpos[4], qpos[5], qpos[6]]);
    let p = Vec3::new(qpos[0], qpos[1], qpos[2]);
    let w = r * Vec3::new(qvel[3], qvel[4], qvel[5]);
    let pdot = Vec3::new(qvel[0], qvel[1], qvel[2]);
    Motion::new(w, pdot - w.cross(&p))
}
