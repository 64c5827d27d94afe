//! Exercises of the chapter "The constraint model" (`book/src/constraints.md`). Grade them with
//! `cargo test -p exercises --test ch11`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use mbd::spatial::Vec3;
use nalgebra::DMatrix;

/// Exercise 1, decode a pyramid: a pyramidal contact of dimension `dim` (3, 4 or 6) with
/// MuJoCo's five frictions `friction` has `2 (dim - 1)` edge forces `edges` (its rows' forces,
/// in MuJoCo's order: the pair `S0 + mu_k S_k`, `S0 - mu_k S_k` for k = 1 .. dim - 1). Return
/// the contact-frame force `(f_n, f_1, ..., f_{dim-1})` that the edges add up to.
pub fn exercise_1(edges: &[f64], friction: &[f64; 5], dim: usize) -> Vec<f64> {
    todo!()
}

/// Exercise 2, connect by finite differences: the 3 x nv Jacobian of a connect's residual
/// `p1(q) - p2(q)` at `q`, where `p1` is the world position of `anchor1` (in body `body1`'s
/// frame) and `p2` that of `anchor2` (in body `body2`'s frame), by central differences along
/// `q (+) h e_k` (use `Model::integrate`, `mbd::kinematics::forward_kinematics` and its
/// `point`). Do not call `make_constraint`.
pub fn exercise_2(
    model: &Model,
    q: &[f64],
    body1: usize,
    anchor1: &Vec3,
    body2: usize,
    anchor2: &Vec3,
) -> DMatrix<f64> {
    todo!()
}

/// Exercise 3, a limit by hand: the active limit rows of a hinge or slide joint at position `q`
/// with range `[lo, hi]` and margin `margin`, as `(distance, jacobian entry)` pairs in MuJoCo's
/// order (the lower side first). A side is active when its distance is below the margin.
pub fn exercise_3(q: f64, lo: f64, hi: f64, margin: f64) -> Vec<(f64, f64)> {
    todo!()
}

/// Exercise 4, a ball joint's angle: the rotation angle in `[0, pi]` of the unit quaternion
/// `q = (w, x, y, z)` (either sign), as `2 acos |w|`.
pub fn exercise_4(q: &[f64; 4]) -> f64 {
    todo!()
}
