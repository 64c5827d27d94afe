//! Exercises of the chapter "The constrained pipeline" (`book/src/constrained_forward.md`).
//! Grade them with `cargo test -p exercises --test ch14`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use mbd::mujoco::forward::ForwardData;
use mbd::mujoco::sensor::PostConstraint;

/// Exercise 1, inverse dynamics by hand: from the outputs `d` of a forward pass on `model`
/// (`M` from the legacy `d.data.qm` through `model.mj_layout()`, `qfrc_bias`, `qfrc_passive`,
/// the rows' Jacobian `J` and `efc_force`), return `M qacc + qfrc_bias - qfrc_passive -
/// J^T efc_force` at the forward pass's `qacc`. Do not call `mj_inverse` or `mul_m`.
pub fn exercise_1(model: &Model, d: &ForwardData) -> Vec<f64> {
    todo!()
}

/// Exercise 2, contacts carry the weight: the force of contact `k` of the forward pass `d` in
/// world coordinates (the force on `geom[1]`, normal from `geom[0]` into `geom[1]`), decoded
/// from its rows' `efc_force` for either cone and turned into the world with the contact frame.
/// Do not call `contact_force`.
pub fn exercise_2(d: &ForwardData, k: usize) -> [f64; 3] {
    todo!()
}

/// Exercise 3, inside the cone: for a forward pass with elliptic cones, the largest
/// `sqrt(f_1^2 + f_2^2) - mu f_n` over its contacts of dimension 3 or more (`mu` the contact's
/// first friction), from the rows' `efc_force`; negative infinity when there are none.
pub fn exercise_3(d: &ForwardData) -> f64 {
    todo!()
}

/// Exercise 4, an accelerometer by hand: the reading of an accelerometer on site `site` of
/// `model` after the forward pass `d`, whose `mj_rnePostConstraint` is `post`
/// (`Forward::rne_post_constraint`), in the site's frame. The site's world position `p`,
/// rotation `R` (its columns the site's axes) and Featherstone body `b` are
/// `mbd::mujoco::sensor::frame_pose(model, &d.data, SensorFrame::Site(site))`; the body's
/// `post.cacc[b]` and `d.data.cvel_fb[b]` are spatial vectors `[w; v]` at the centre of mass
/// `c = d.data.subtree_com_fb[d.data.rootid_fb[b]]` of its tree, in world axes. Move both to
/// `p`, add `w x v_p` to the linear acceleration, and rotate it into the site's frame. Do not
/// call `object_acceleration` or the sensors.
pub fn exercise_4(model: &Model, d: &ForwardData, post: &PostConstraint, site: usize) -> [f64; 3] {
    todo!()
}

/// Exercise 5, what the joint carries: the force dof `dof` of `model` transmits in the forward
/// pass `d`, `cdof . cfrc_int` of the dof's body: the dof's motion axis `d.data.cdof[dof]` dotted
/// with the wrench `post.cfrc_int[model.dof_body[dof]]` that its (Featherstone) body receives
/// from its parent (`post` from `Forward::rne_post_constraint`; both are com-based, in world
/// axes).
pub fn exercise_5(model: &Model, d: &ForwardData, post: &PostConstraint, dof: usize) -> f64 {
    todo!()
}
