//! Exercises of the chapter "The composite-rigid-body algorithm" (`book/src/crba.md`). Grade
//! them with `cargo test -p exercises --test ch04`.
//!
//! Write each answer without `crba` (the grader compares with it).

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use nalgebra::DMatrix;

/// Exercise 1, H by inverse dynamics: the joint-space inertia `H(q)` built column by column
/// from `rnea` (Featherstone 6.1): switch gravity off in a copy of the model, set `qdot = 0`,
/// and accelerate one dof at a time.
pub fn exercise_1(model: &Model, q: &[f64]) -> DMatrix<f64> {
    todo!()
}

/// Exercise 2, the parallel-axis theorem: `H_11` of the planar triple pendulum
/// `canned::chain(3, false)`, the moment of inertia of all three links about joint 1's axis (y
/// through the origin) with joints 2 and 3 locked at `q`. Links: masses 1.0, 1.1, 1.2 kg,
/// lengths 0.5, 0.49, 0.48 m, uniform rods (`m l^2 / 12` about a transverse axis through the
/// centre of mass), centres of mass at mid-length, hanging along -z at q = 0.
pub fn exercise_2(q: [f64; 3]) -> f64 {
    todo!()
}

/// Exercise 3, sparsity from the parent array: bodies 1..=n with one dof each and parent array
/// `lambda` (entry 0 unused); return the n x n pattern with `pattern[i-1][j-1]` true when body i
/// is body j, an ancestor of it or a descendant of it.
pub fn exercise_3(lambda: &[usize]) -> Vec<Vec<bool>> {
    todo!()
}

/// Exercise 4, counting: the number of entries of H that may be nonzero for a balanced binary
/// tree with `depth` levels (`2^depth - 1` one-dof bodies), in closed form.
pub fn exercise_4(depth: u32) -> usize {
    todo!()
}
