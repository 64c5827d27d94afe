//! Exercises of the chapter "Spatial vectors" (`book/src/spatial.md`). Grade them with
//! `cargo test -p exercises --test ch01`.
//!
//! Write each answer with plain 3x3 and 6x6 matrices, not with the library routine the grader
//! compares it with (`Xform`, `SpatialInertia`, `Motion::cross_force`).

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::spatial::{Mat3, Mat6, Motion, Vec3};

/// Exercise 1, the Plücker matrix: the 6x6 matrix of the transform `B_X_A = rot(E) xlt(r)` for
/// motion vectors, built as the product of its two factors `rot(E)` and `xlt(r)`
/// (Featherstone eqs. (2.24)-(2.26)). `e` is the rotation from A to B coordinates, `r` the
/// position of B's origin in A coordinates.
pub fn exercise_1(e: &Mat3, r: &Vec3) -> Mat6 {
    todo!()
}

/// Exercise 2, find the screw: the pitch `h` of the screw of the motion vector `m = [w; v_O]`
/// (`w != 0`) and the point of its screw axis nearest the origin, as `(h, point)`.
pub fn exercise_2(m: &Motion) -> (f64, Vec3) {
    todo!()
}

/// Exercise 3, inertia of a point cloud: the 6x6 spatial inertia about the origin of a body with
/// mass `m`, centre of mass `c` and rotational inertia `ic` about its centre of mass
/// (Featherstone eq. (2.63)).
pub fn exercise_3(m: f64, c: &Vec3, ic: &Mat3) -> Mat6 {
    todo!()
}

/// Exercise 4, the force cross product: the 6x6 matrix `crf(v)` with `crf(v) f = v x* f`, the
/// rate of change of a force fixed in a body that moves with velocity `v = [w; v_O]`.
pub fn exercise_4(v: &Motion) -> Mat6 {
    todo!()
}
