//! Exercises of the chapter "The recursive Newton-Euler algorithm" (`book/src/rnea.md`). Grade
//! them with `cargo test -p exercises --test ch03`.
//!
//! Exercises 1-3 are to be written without `rnea` (the grader compares with it); exercise 4 uses
//! it on purpose.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use mbd::spatial::{Mat3, Vec3};

/// Exercise 1, gravity torques by hand: the joint torques that hold the planar double pendulum
/// `canned::chain(2, false)` still at angles `q` (qdot = qddot = 0), from the potential energy:
/// `tau = dU/dq`. Link 1: m1 = 1.0 kg, l1 = 0.5 m; link 2: m2 = 1.1 kg, l2 = 0.49 m; centres of
/// mass at mid-length; both joints turn about y; g = 9.81 m/s^2 along -z.
pub fn exercise_1(q: [f64; 2]) -> [f64; 2] {
    todo!()
}

/// Exercise 2, Newton and Euler for one free body: the generalized force on a single body on a
/// MuJoCo free joint, by the classical Newton-Euler equations about the centre of mass.
///
/// Mass `m`, centre of mass `c` and rotational inertia `ic` about the centre of mass, both in
/// body coordinates; `q = [p; quat (w, x, y, z)]`, `qd = [world velocity of the origin; body
/// angular velocity]`, `qdd` their time derivatives; gravity `g` (world). Return
/// `[world force; moment about the body origin in body coordinates]`.
pub fn exercise_2(m: f64, c: Vec3, ic: Mat3, q: &[f64], qd: &[f64], qdd: &[f64], g: Vec3) -> [f64; 6] {
    todo!()
}

/// Exercise 3, a push at the tip: the generalized force `J^T F` that a pure force `force` (world
/// coordinates) applied at the world point `p` of body `body` produces on a chain of revolute
/// joints whose axes pass through their body origins (use `forward_kinematics` for the joints'
/// world axes and origins, and statics for the rest). One entry per dof.
pub fn exercise_3(model: &Model, q: &[f64], body: usize, p: Vec3, force: Vec3) -> Vec<f64> {
    todo!()
}

/// Exercise 4, gravity is an accelerating base: mount the double pendulum of exercise 1 on a
/// "lift" (a prismatic joint along z, on a platform of 5 kg), switch gravity off, accelerate the
/// lift upwards at 9.81 m/s^2 with the pendulum momentarily at rest at angles `q`, and return
/// the two pendulum joint torques that `rnea` computes. Build the model with `ModelBuilder`
/// (links: `canned::rod(1.0, 0.5, -z)` and `canned::rod(1.1, 0.49, -z)`, the second hinge 0.5 m
/// below the first).
pub fn exercise_4(q: [f64; 2]) -> [f64; 2] {
    todo!()
}
