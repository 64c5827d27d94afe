//! Exercises of the chapter "Collision detection" (`book/src/collision.md`). Grade them with
//! `cargo test -p exercises --test ch10`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use crate::types::ContactProps;
use mbd::collision::convex::ConvexShape;
use mbd::collision::GeomPose;
use mbd::spatial::Vec3;

/// Exercise 1, the contact frame (MuJoCo's `mju_makeFrame`): from a normal (not necessarily of
/// unit length) and a tangent hint, return the frame's three rows: the unit normal, the first
/// tangent and the second tangent `n x t1`. The first tangent starts from the hint when
/// `|hint|^2 >= 1/4`, else from the y axis (or the z axis when `|n_y| >= 1/2`), is made
/// orthogonal to the normal and normalized. Do not call `mbd::collision::make_frame`.
pub fn exercise_1(normal: Vec3, hint: Vec3) -> [Vec3; 3] {
    todo!()
}

/// Exercise 2, sphere against capsule: a sphere of centre `c` and radius `r`, a capsule of
/// centre `p`, unit axis `a`, radius `rc` and half-length `h`. Return `(dist, normal, pos)` as
/// MuJoCo's contact has them (signed distance of the surfaces, unit normal from the sphere into
/// the capsule, the point midway between the surfaces), or `None` when `dist > margin`.
#[allow(clippy::too_many_arguments)]
pub fn exercise_2(c: Vec3, r: f64, p: Vec3, a: Vec3, rc: f64, h: f64, margin: f64) -> Option<(f64, Vec3, Vec3)> {
    todo!()
}

/// Exercise 3, mixing (MuJoCo's `mj_contactParam`): the contact of geoms `a` and `b` gets
/// `(condim, friction, solref, solimp)`, friction expanded to MuJoCo's five numbers
/// `[slide, slide, spin, roll, roll]`. Do not call `mbd::mujoco::collision::contact_param`.
pub fn exercise_3(a: ContactProps, b: ContactProps) -> (usize, [f64; 5], [f64; 2], [f64; 5]) {
    todo!()
}

/// Exercise 4, a support function: the point of a cylinder of radius `r` and half-length `h`
/// (along its geom z axis) at `pose` that lies farthest along the world direction `d`. Do not
/// call `ConvexShape::support`.
pub fn exercise_4(r: f64, h: f64, pose: &GeomPose, d: &Vec3) -> Vec3 {
    todo!()
}

/// Exercise 5, distance from support functions alone: estimate the signed distance of the
/// convex shapes `a` and `b` as `-min_u (h_A(u) + h_B(-u))` over `n` unit directions `u` spread
/// over the sphere, where `h_S(u) = u . support_S(u)` (use `ConvexShape::support`, not GJK).
pub fn exercise_5(a: &ConvexShape, b: &ConvexShape, n: usize) -> f64 {
    todo!()
}
