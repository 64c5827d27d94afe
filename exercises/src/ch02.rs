//! Exercises of the chapter "Joint models and kinematic trees" (`book/src/joints.md`). Grade
//! them with `cargo test -p exercises --test ch02`.
//!
//! Write each answer with plain trigonometry and matrices, not with the library routine the
//! grader compares it with (`jcalc`, `forward_kinematics`, `point_jacobian`, `Model::dof_parent`).

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

pub use crate::types::UniversalJoint;
use mbd::spatial::{Mat3, Motion, Vec3};

/// Exercise 1, a universal joint: `jcalc` for a joint that turns by `q[0]` about the
/// predecessor's z axis and then by `q[1]` about the y axis of the frame so obtained, so that
/// `X_J = roty(q2) rotz(q1)` (coordinate rotations, Featherstone table 2.2). Return `X_J`
/// (6x6), `S` (6x2, successor coordinates), `v_J = S qdot` and `c_J = (dS/dt) qdot`.
pub fn exercise_1(q: [f64; 2], qd: [f64; 2]) -> UniversalJoint {
    todo!()
}

/// Exercise 2, dof parents: MuJoCo's `dof_parentid` (Featherstone 6.5's expanded parent array)
/// from the body parent array `lambda` (bodies 1..=nb, entry 0 unused) and the number of dofs
/// of each body's joint `ndof` (entry 0 unused; a welded body has 0). One entry per dof, in body
/// order; `None` for a dof with no parent dof.
pub fn exercise_2(lambda: &[usize], ndof: &[usize]) -> Vec<Option<usize>> {
    todo!()
}

/// Exercise 3, forward kinematics by hand: the world position of the tip of
/// `canned::chain(3, false)`. The links hang along -z with lengths 0.5, 0.49 and 0.48 m; every
/// joint turns about y.
pub fn exercise_3(q: [f64; 3]) -> Vec3 {
    todo!()
}

/// Exercise 4, the tip Jacobian: the 3x3 matrix `d tip / d q` of the same chain (column k is the
/// derivative of exercise 3's answer with respect to `q[k]`).
pub fn exercise_4(q: [f64; 3]) -> Mat3 {
    todo!()
}

/// Exercise 5, the free joint's velocity in world terms: the spatial velocity, in world
/// coordinates with the world origin as reference point, of a body on a MuJoCo free joint with
/// `qpos = [p; quat (w, x, y, z)]` and `qvel = [world velocity of the body origin; body-frame
/// angular velocity]`.
pub fn exercise_5(qpos: [f64; 7], qvel: [f64; 6]) -> Motion {
    todo!()
}
