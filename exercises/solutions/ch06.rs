//! Worked answers to the exercises of "Sparse factorization of the joint-space inertia"
//! (statements in `src/ch06.rs`).

use nalgebra::{DMatrix, DVector};

/// The element formulas, literally: no tree, no in-place tricks.
pub fn exercise_1(a: &DMatrix<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let n = a.nrows();
    let mut l = DMatrix::identity(n, n);
    let mut d = DVector::zeros(n);
    for i in (0..n).rev() {
        let mut di = a[(i, i)];
        for k in i + 1..n {
            di -= l[(k, i)] * l[(k, i)] * d[k];
        }
        d[i] = di;
        for j in 0..i {
            let mut s = a[(i, j)];
            for k in i + 1..n {
                s -= l[(k, i)] * d[k] * l[(k, j)];
            }
            l[(i, j)] = s / di;
        }
    }
    (l, d)
}

/// Eliminating the root first couples every pair of the remaining dofs, so the lower triangle
/// fills completely: `n (n - 1) / 2` entries, of which H's pattern already holds one per (dof,
/// proper ancestor) pair, `sum_k 2^(k-1) (k - 1) = (depth - 2) 2^depth + 2`.
pub fn exercise_2(depth: u32) -> usize {
    let n = (1i64 << depth) - 1;
    let pattern = (depth as i64 - 2) * (1i64 << depth) + 2;
    (n * (n - 1) / 2 - pattern) as usize
}

/// A dof at depth d (dofs on its path to the root, itself included) costs `d (d - 1) / 2`
/// multiply-adds; the base's dofs have depths 1..=6, each leg's 7..=6 + leg_dofs.
pub fn exercise_3(legs: usize, leg_dofs: usize) -> usize {
    let cost = |d: usize| d * (d - 1) / 2;
    let base: usize = (1..=6).map(cost).sum();
    let leg: usize = (7..=6 + leg_dofs).map(cost).sum();
    base + legs * leg
}

/// Row i takes depth(i) + 1 slots; `dof_Madr` is the running sum; the CSR row is the legacy row
/// read backwards.
pub fn exercise_4(dof_parentid: &[i64]) -> (Vec<usize>, usize, Vec<usize>) {
    let n = dof_parentid.len();
    let mut depth = vec![0usize; n];
    for i in 0..n {
        if dof_parentid[i] >= 0 {
            depth[i] = depth[dof_parentid[i] as usize] + 1;
        }
    }
    let mut madr = vec![0; n];
    let mut nm = 0;
    for i in 0..n {
        madr[i] = nm;
        nm += depth[i] + 1;
    }
    let mut map = Vec::with_capacity(nm);
    for i in 0..n {
        for s in (0..=depth[i]).rev() {
            map.push(madr[i] + s);
        }
    }
    (madr, nm, map)
}
