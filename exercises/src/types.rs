//! Types that appear in the exercises' signatures, shared by the stubs, the worked answers and
//! the graders (so a student's module and the solutions agree on them).

use mbd::spatial::{Mat6, Vec6};
use nalgebra::Matrix6x2;

/// What `ch04::exercise_1` returns: `jcalc`'s four outputs for a universal joint, as plain
/// matrices (Featherstone table 4.1's columns).
#[derive(Clone, Debug)]
pub struct UniversalJoint {
    /// The joint transform `X_J` (6 x 6, motion vectors).
    pub x_j: Mat6,
    /// The motion subspace `S` (6 x 2), successor coordinates.
    pub s: Matrix6x2<f64>,
    /// The joint velocity `v_J = S qdot`.
    pub v_j: Vec6,
    /// The velocity-product term `c_J = (dS/dt) qdot`.
    pub c_j: Vec6,
}

/// What `ch10::exercise_3` mixes: one geom's contact properties (MJCF `geom` attributes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactProps {
    /// `priority`: the geom with the higher priority decides alone.
    pub priority: i32,
    /// `condim`: 1, 3, 4 or 6.
    pub condim: usize,
    /// `friction`: sliding, torsional, rolling.
    pub friction: [f64; 3],
    /// `solref`: `(timeconst, dampratio)` when positive, `(-stiffness, -damping)` when not.
    pub solref: [f64; 2],
    /// `solimp`: `(dmin, dmax, width, midpoint, power)`.
    pub solimp: [f64; 5],
    /// `solmix`: the weight of this geom's `solref` and `solimp` in the mix.
    pub solmix: f64,
}
