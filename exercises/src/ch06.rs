//! Exercises of the chapter "Sparse factorization of the joint-space inertia"
//! (`book/src/sparse.md`). Grade them with `cargo test -p exercises --test ch06`.
//!
//! Write each answer without the library routine the grader compares it with (`ltdl`,
//! `llt_fill_in`, `MjLayout`).

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use nalgebra::{DMatrix, DVector};

/// Exercise 1, `L^T D L` from the element formulas: factor a dense symmetric positive-definite
/// matrix `a = L^T D L` (L unit lower triangular, D diagonal) with the chapter's element
/// formulas, row by row from the last: `d_i = a_ii - sum_{k>i} l_ki^2 d_k` and
/// `l_ij = (a_ij - sum_{k>i} l_ki d_k l_kj) / d_i` for j < i, every sum over all k > i (no tree
/// knowledge). Return `(L, diagonal of D)`.
pub fn exercise_1(a: &DMatrix<f64>) -> (DMatrix<f64>, DVector<f64>) {
    todo!()
}

/// Exercise 2, total fill-in: the number of entries that the root-first factorization
/// `H = L L^T` of a balanced binary tree of `depth` levels (`n = 2^depth - 1` one-dof bodies)
/// creates in the lower triangle outside H's pattern, in closed form.
pub fn exercise_2(depth: u32) -> usize {
    todo!()
}

/// Exercise 3, a legged robot: the number of multiply-adds of LTDL for a floating base (a chain
/// of 6 dofs) carrying `legs` legs, each a chain of `leg_dofs` one-dof joints hanging from the
/// base's last dof.
pub fn exercise_3(legs: usize, leg_dofs: usize) -> usize {
    todo!()
}

/// Exercise 4, MuJoCo's addresses: from `dof_parentid` (-1 = no parent) compute MuJoCo's legacy
/// sparse layout: `dof_Madr` (where each dof's row starts: its diagonal, then its proper
/// ancestors from the parent up), `nM` (the total) and `mapM2M` (for each element of the CSR
/// layout, whose rows list the ancestors root first and the diagonal last, its legacy slot).
/// Returns `(dof_Madr, nM, mapM2M)`.
pub fn exercise_4(dof_parentid: &[i64]) -> (Vec<usize>, usize, Vec<usize>) {
    todo!()
}
