//! Exercises of the chapter "The constrained pipeline" (`book/src/constrained_forward.md`).
//! Grade them with `cargo test -p exercises --test ch14`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use mbd::mujoco::forward::ForwardData;

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
