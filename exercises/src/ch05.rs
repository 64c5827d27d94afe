//! Exercises of the chapter "The articulated-body algorithm" (`book/src/aba.md`). Grade them with
//! `cargo test -p exercises --test ch05`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use mbd::spatial::{Mat6, Vec6};
use nalgebra::DVector;

/// Exercise 1, the cart-pole by Lagrange's equations: a cart of mass M = 2 kg slides along x; a
/// uniform pole of mass m = 0.5 kg and length L = 0.8 m hangs from the cart's origin and turns
/// about y (angle theta, 0 = hanging down, positive = rotation about +y). Gravity 9.81 m/s^2
/// along -z. `force` drives the cart, `torque` the pole. Return `[x'', theta'']` (the cart's
/// position does not enter).
pub fn exercise_1(theta: f64, thetad: f64, force: f64, torque: f64) -> [f64; 2] {
    todo!()
}

/// Exercise 2, articulated inertia is a Schur complement: the articulated-body inertia of body 1
/// when body 2 hangs from it on a 1-dof joint (Featherstone 7.1-7.2),
/// `I^A_1 = I_1 + X^T I^a_2 X` with `I^a_2 = I_2 - I_2 s (s^T I_2 s)^-1 s^T I_2`, where `X = 2_X_1`
/// is the motion transform from body 1 to body 2 coordinates and `s` joint 2's motion subspace,
/// all as plain matrices.
pub fn exercise_2(i1: &Mat6, i2: &Mat6, x21: &Mat6, s: &Vec6) -> Mat6 {
    todo!()
}

/// Exercise 3, RK4 with ABA: one step of length `h` of the classical fourth-order Runge-Kutta
/// method for an unactuated model with hinge joints (positions add like vectors), accelerations
/// by `aba`. Returns the new `(q, qd)`.
pub fn exercise_3(model: &Model, q: &[f64], qd: &[f64], h: f64) -> (Vec<f64>, Vec<f64>) {
    todo!()
}

/// Exercise 4, the inertia-matrix route: forward dynamics `qdd = H^-1 (tau - C)`, with `H` and
/// `C` from `hand_c` and a Cholesky factorization.
pub fn exercise_4(model: &Model, q: &[f64], qd: &[f64], tau: &[f64]) -> DVector<f64> {
    todo!()
}
