//! Exercises of the chapter "Solvers" (`book/src/solvers.md`). Grade them with
//! `cargo test -p exercises --test ch13`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::mujoco::constraint::Efc;
use mbd::mujoco::solver::problem::Problem;
use nalgebra::DMatrix;

/// Exercise 1, the dual by brute force: for a problem whose rows are all one-sided, the forces
/// `f` that minimize `1/2 f^T AR f + f^T b` subject to `f >= 0`, found by enumerating the
/// active sets (each one a linear solve) and keeping the one that satisfies the KKT conditions.
/// `ar` is `n x n` symmetric positive definite, `b` has `n` entries (n is at most 10).
pub fn exercise_1(ar: &DMatrix<f64>, b: &[f64]) -> Vec<f64> {
    todo!()
}

/// Exercise 2, the cone Hessian by finite differences: `efc` holds one elliptic contact (its
/// rows `0..dim`), and `x` is a point (the rows' `J a - aref`) in the cone's middle zone. Return
/// the `dim x dim` matrix `-df/dx` by central differences of the force `f` that
/// `mbd::mujoco::solver::cost::update` computes (with `cost::cones(efc)`; do not ask `update`
/// for the Hessian).
pub fn exercise_2(efc: &Efc, x: &[f64]) -> DMatrix<f64> {
    todo!()
}

/// Exercise 3, one PGS sweep is a Gauss-Seidel sweep: with only equality rows, return the forces
/// after `sweeps` Gauss-Seidel sweeps on `AR f = -b` from `f = 0`, rows in order.
pub fn exercise_3(ar: &DMatrix<f64>, b: &[f64], sweeps: usize) -> Vec<f64> {
    todo!()
}

/// Exercise 4, the line search's derivative: `phi'(alpha)` of `phi(alpha) = C(a + alpha dir)`,
/// `C` the primal cost of the problem `p` (`mbd::mujoco::solver::primal::primal_cost`, with
/// `cost::cones(&p.efc)`), by a central difference of step `h`.
pub fn exercise_4(p: &Problem, a: &[f64], dir: &[f64], alpha: f64, h: f64) -> f64 {
    todo!()
}

/// Exercise 5, the noslip edge pair: one step of the noslip pass on a pair of opposite pyramid
/// edges. `a` is the pair's `2 x 2` block of `A = AR - diag(R)` (symmetric, positive
/// semidefinite, possibly singular), `c` the pair's linear term with every other row fixed (so
/// that edge forces `g` cost `1/2 g^T a g + c^T g`) and `f` the edges' current forces (both
/// `>= 0`). Return the `g` that minimizes that cost subject to `g_0 + g_1 = f_0 + f_1` and
/// `g_0, g_1 >= 0` (where the cost is linear along that segment, its cheaper end).
pub fn exercise_5(a: &[[f64; 2]; 2], c: &[f64; 2], f: &[f64; 2]) -> [f64; 2] {
    todo!()
}
