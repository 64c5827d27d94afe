//! Exercises of the chapter "MuJoCo's com-based quantities" (`book/src/com.md`). Grade them with
//! `cargo test -p exercises --test ch09`.
//!
//! Write each answer without the library routine the grader compares it with (`mj_comPos`'s
//! `cinert` and `cdof`, `crba`, `kinetic_energy`, `mj_comVel`'s `cdof_dot`).

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use mbd::mujoco::Data;
use mbd::spatial::{Mat3, Vec3};
use nalgebra::DMatrix;

/// Exercise 1, cinert (`mju_inertCom`): the ten numbers of `cinert` for one body from its mass
/// `m`, centre of mass `com` and rotational inertia `i_com` about the centre of mass (body
/// coordinates), the body's world orientation `rot` (columns = body axes) and origin `pos`, and
/// the tree's centre of mass `c`: `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m dx, m dy, m dz, m]`, the
/// inertia about `c` in world axes and `d = xipos - c`.
pub fn exercise_1(m: f64, com: Vec3, i_com: Mat3, rot: Mat3, pos: Vec3, c: Vec3) -> [f64; 10] {
    todo!()
}

/// Exercise 2, cdof is a Jacobian column: `cdof` for every dof of `model` at `q` without the
/// table, from `kinematics::body_jacobian` and `kinematics::point_jacobian`: column k is the
/// spatial velocity (world axes, about the tree's centre of mass `c`) that a unit rate of dof k
/// gives its body (`model.dof_body[k]`), `[angular; linear]`.
pub fn exercise_2(model: &Model, q: &[f64], c: Vec3) -> Vec<[f64; 6]> {
    todo!()
}

/// Exercise 3, the same H a third way: `M = sum_b J_b^T I_b J_b + diag(armature)` with `I_b`
/// body b's `cinert` as a 6x6 matrix (`d.cinert_fb[b]`) and `J_b` the 6 x nv com-frame Jacobian
/// of body b (column k is `d.cdof[k]` if dof k moves body b, zero otherwise). `d` is
/// `forward_smooth`'s output; its `_fb` arrays are indexed by the bodies 1..=nb of `model`.
pub fn exercise_3(model: &Model, d: &Data) -> DMatrix<f64> {
    todo!()
}

/// Exercise 4, kinetic energy: `T = 1/2 sum_b cvel_b . (cinert_b cvel_b)` from `d.cvel_fb` and
/// `d.cinert_fb`.
pub fn exercise_4(model: &Model, d: &Data) -> f64 {
    todo!()
}

/// Exercise 5, cdof_dot of a hinge: the rate of change of a hinge or slide dof's `cdof` when its
/// body's parent moves with the com-based velocity `cvel = [w; v]`.
pub fn exercise_5(cvel: [f64; 6], cdof: [f64; 6]) -> [f64; 6] {
    todo!()
}
