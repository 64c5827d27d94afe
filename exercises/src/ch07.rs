//! Exercises of the chapter "Closed-loop systems" (`book/src/loops.md`). Grade them with
//! `cargo test -p exercises --test ch07`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::spatial::Xform;
use nalgebra::{DMatrix, DVector};

/// Exercise 1, a row of table 8.1: the cylindrical loop joint (Featherstone's example 8.1) in
/// the library's convention. `x_sp = S X P = rot(E) xlt(r)` is the transform from the loop
/// joint's predecessor frame P to its successor frame S; the joint turns about and slides along
/// z. Return the constraint-force subspace `T` (6 x 4, angular rows first) and the position error
/// (4 numbers), whose first-order change under a small displacement `d` of S (expressed with P's
/// axes at S's origin) must be `T^T d`, and which vanishes for every allowed transform.
pub fn exercise_1(x_sp: &Xform) -> (DMatrix<f64>, DVector<f64>) {
    todo!()
}

/// Exercise 2, critical damping: the loop-closure error at time `t` of one component under
/// Baumgarte stabilization with `alpha = beta = 1 / t_stab`, from its initial value `e0` and
/// rate `edot0`.
pub fn exercise_2(t: f64, t_stab: f64, e0: f64, edot0: f64) -> f64 {
    todo!()
}

/// Exercise 3, the loop Jacobian by hand: for the planar four-bar `mechanisms::four_bar()`, whose
/// tree is crank (hinge about y at the origin), coupler (hinge at (0.05, 0, 0.15) in crank
/// coordinates), rocker (hinge at (0.3, 0, 0.15) in coupler coordinates), with the loop closing
/// at the rocker's point (0.05, 0, -0.3): the x and z components of that point's velocity per
/// unit rate of each joint, the 2 x 3 matrix `dp/dq` as `[[dx/dq1, dx/dq2, dx/dq3], [dz/dq1, ...]]`.
pub fn exercise_3(q: [f64; 3]) -> [[f64; 3]; 2] {
    todo!()
}

/// Exercise 4, moving the actuator: the figure 8.3 mechanism (link lengths `l1`, `l2`,
/// independent variables `y = (q1, q4)`) with the actuators moved from joints 3 and 4 to joints
/// 1 and 4. Return the actuator forces `(u1, u4)` from the tree's inverse dynamics `tau_id` at
/// the configuration with `q1 = y1`.
pub fn exercise_4(l1: f64, l2: f64, y1: f64, tau_id: [f64; 4]) -> [f64; 2] {
    todo!()
}
