//! Exercises of the chapter "Solving the constraint equations, sparsity and ladders"
//! (`book/src/loops2.md`). Grade them with `cargo test -p exercises --test ch08`.
//!
//! Write each answer without the library routine the grader compares it with (`loop_clusters`,
//! `least_squares_bias`).

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use nalgebra::{DMatrix, DVector};

/// Exercise 1, clusters by hand: the loop clusters of `model` from its parent array
/// (`model.lambda`) and its loop joints' predecessor and successor bodies
/// (`model.loops[k].pred`, `model.loops[k].succ`) only. Two loops are coupled when a tree joint
/// is on both of their paths (the path of a loop runs from its predecessor and successor up to
/// their nearest common ancestor, which is not on it); a cluster is a set of loops connected by
/// coupling. Return the clusters as sorted lists of loop indices, ordered by their first loop.
pub fn exercise_1(model: &Model) -> Vec<Vec<usize>> {
    todo!()
}

/// Exercise 2, the second derivative of gamma: `g = Gdot ydot` of the figure 8.3 mechanism with
/// link lengths `l1`, `l2` at `y = (q1, q4)` moving with `yd`; 4 numbers, one per joint.
pub fn exercise_2(l1: f64, l2: f64, y: [f64; 2], yd: [f64; 2]) -> DVector<f64> {
    todo!()
}

/// Exercise 3, least squares: given `K`, a slightly inconsistent `k` and the dependent columns,
/// return the `g` (zero in the independent variables) that minimizes `|K g - k|`, by the normal
/// equations on the dependent columns.
pub fn exercise_3(kmat: &DMatrix<f64>, k: &DVector<f64>, dependent: &[usize]) -> DVector<f64> {
    todo!()
}
