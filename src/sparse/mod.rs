//! Sparse factorization of the joint-space inertia matrix (Featherstone 6.5; MuJoCo's
//! `mj_factorM` / `mj_factorI` / `mj_solveLD`). Book chapter: "Sparse factorization of the
//! joint-space inertia".
//!
//! H has *branch-induced sparsity*: `H[i][j] != 0` only if dof i is dof j, an ancestor of j, or a
//! descendant of j. Factoring from the leaves to the root (`H = L^T L` or `H = L^T D L`, L lower
//! triangular) keeps exactly that pattern: no fill-in. Everything here works on a dof-level parent
//! array `parent[i] < i` (`None` at a root), which is [`crate::model::Model::dof_parent`]
//! (Featherstone's `expandLambda`, MuJoCo's `dof_parentid`).
//!
//! Two storages are shown side by side:
//! - dense `DMatrix` storage touched only on the ancestor pattern (Featherstone's presentation);
//! - MuJoCo's legacy compact layout ([`MjLayout`]): one contiguous row per dof, diagonal first,
//!   then the ancestors nearest-first, addressed by `dof_madr`, and its 4.0 CSR variant.
//!
//! Beyond the parent array (book chapter "Solving the constraint equations, sparsity and
//! ladders"):
//!
//! | item | what |
//! |---|---|
//! | [`etree`] | elimination tree, postorder, symbolic factorization, orderings of a symmetric pattern |
//! | [`block`] | block `L D L^T` without pivoting as a value ([`BlockSymbolic`] + [`BlockLdlt`]): Baraff's block-tree factorization and the banded ladder factorization of Featherstone 8.13 |
//! | [`ordering`] | fill-reducing orderings of a block pattern (natural, approximate minimum degree, nested dissection) and the [`Fill`] they cause (chapter "Sparse direct solves for SPOOK") |
//! | [`multifrontal`] | block multifrontal `L D L^T` on the same [`BlockLdlt`] value: fronts assembled by extend-add in postorder ([`Multifrontal`]) |
//!
//! The dense references they are held against live here too, one home each: the root-first
//! Cholesky [`cholesky_dense`] and the SVD pseudo-inverse solve [`pinv_solve_dense`].

pub mod block;
mod dense;
pub mod etree;
mod layout;
pub mod multifrontal;
pub mod ordering;

pub use block::{BlockLdlt, BlockSymbolic};
pub use dense::{
    cholesky_dense, cholesky_dense_in_place, cholesky_solve_dense, cholesky_solve_dense_with, pinv_solve_dense,
    SVD_MAX_ITERATIONS,
};
pub use layout::{factor_i, factor_i_in_place, solve_ld, FactorI, MjLayout, PivotPolicy, MJ_MINVAL};
pub use multifrontal::{FrontPlan, Multifrontal, PIVOT_RTOL};
pub use ordering::{fill, minimum_degree, nested_dissection, order, BlockOrdering, Fill};

// ANCHOR: counter
/// Where a kernel reports the floating-point operations it performs. The kernels of this module
/// take `ops: &mut impl Counter` and call it beside the arithmetic it counts: [`OpCount`] adds
/// the numbers up (for comparing with the formulas of Featherstone 6.5), [`NoCount`] does
/// nothing, and since its methods are empty and inlined, the compiler removes the calls and the
/// counting costs nothing in the timed code.
pub trait Counter {
    /// `n` divisions (or reciprocals).
    fn div(&mut self, n: usize);
    /// `n` multiply-adds (one multiplication and one addition or subtraction).
    fn madd(&mut self, n: usize);
    /// `n` multiplications without an addition.
    fn mul(&mut self, n: usize);
    /// `n` square roots.
    fn sqrt(&mut self, n: usize);
}
// ANCHOR_END: counter

/// The counter that counts nothing: pass `&mut NoCount` where only the result matters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoCount;

impl Counter for NoCount {
    #[inline(always)]
    fn div(&mut self, _: usize) {}
    #[inline(always)]
    fn madd(&mut self, _: usize) {}
    #[inline(always)]
    fn mul(&mut self, _: usize) {}
    #[inline(always)]
    fn sqrt(&mut self, _: usize) {}
}

impl Counter for OpCount {
    #[inline]
    fn div(&mut self, n: usize) {
        self.div += n;
    }
    #[inline]
    fn madd(&mut self, n: usize) {
        self.madd += n;
    }
    #[inline]
    fn mul(&mut self, n: usize) {
        self.mul += n;
    }
    #[inline]
    fn sqrt(&mut self, n: usize) {
        self.sqrt += n;
    }
}

/// Runs `f` compiled for AVX on x86-64 processors that have it, otherwise as compiled for the
/// default target (SSE2 on x86-64). The choice is made at run time, per call, from the
/// standard library's cached feature test, so no `target-cpu=native` is needed; MuJoCo's wheel,
/// which the Performance chapter compares against, is built for AVX throughout. `f` and what it
/// inlines are compiled twice; only the width of the vector instructions differs. Rust never
/// fuses a multiplication and an addition on its own, and never reorders floating-point sums,
/// so both versions compute the same numbers bit for bit.
#[inline(always)]
pub(crate) fn with_avx<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        #[target_feature(enable = "avx")]
        fn avx<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        // SAFETY: the processor has AVX, checked on the line above.
        return unsafe { avx(f) };
    }
    f()
}

use crate::error::{check_output, Error, Result};
use nalgebra::{DMatrix, DVector};

/// Counts of floating-point operations, for comparing the factorizations' costs with the
/// formulas of Featherstone 6.5.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCount {
    /// Divisions.
    pub div: usize,
    /// Multiply-adds (one multiplication and one addition or subtraction).
    pub madd: usize,
    /// Square roots.
    pub sqrt: usize,
    /// Multiplications without an addition (`factor_i`'s `M(k, i) / D_k`, done as a product with
    /// one reciprocal per row).
    pub mul: usize,
}

impl std::ops::Add for OpCount {
    type Output = OpCount;
    fn add(self, o: OpCount) -> OpCount {
        OpCount {
            div: self.div + o.div,
            madd: self.madd + o.madd,
            sqrt: self.sqrt + o.sqrt,
            mul: self.mul + o.mul,
        }
    }
}

/// Checks a dof-level parent array: `parent[i] < i` for every i.
pub fn check_parent(parent: &[Option<usize>]) -> Result<()> {
    for (i, p) in parent.iter().enumerate() {
        if let Some(p) = *p {
            if p >= i {
                return Err(Error::BadParent {
                    body: i,
                    name: format!("dof {i}"),
                    parent: p,
                });
            }
        }
    }
    Ok(())
}

/// The parent of dof `i` if it keeps the order `parent[i] < i`; `None` at a root, for an entry
/// that breaks the order, and for `i` out of range. Every walk towards the root goes through
/// this, so it ends after at most `i` steps whatever the array holds.
#[inline]
fn parent_of(parent: &[Option<usize>], i: usize) -> Option<usize> {
    match parent.get(i) {
        Some(&Some(p)) if p < i => Some(p),
        _ => None,
    }
}

/// Depth of every dof: its number of proper ancestors (MuJoCo's row length minus one). An entry
/// that breaks `parent[i] < i` (see [`check_parent`]) ends the walk there, as a root would.
pub fn depths(parent: &[Option<usize>]) -> Vec<usize> {
    let mut d = vec![0; parent.len()];
    for i in 0..parent.len() {
        d[i] = parent_of(parent, i).map_or(0, |p| d[p] + 1);
    }
    d
}

/// Iterator over the proper ancestors of a dof, nearest first. It stops at an entry that breaks
/// `parent[i] < i` (see [`check_parent`]) and is empty for `i` out of range, so it always ends.
pub fn ancestors(parent: &[Option<usize>], i: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(parent_of(parent, i), move |&j| parent_of(parent, j))
}

/// Whether `j` is `i` or an ancestor of `i`.
pub fn is_ancestor_or_self(parent: &[Option<usize>], j: usize, i: usize) -> bool {
    i == j || ancestors(parent, i).any(|a| a == j)
}

/// The first entry on the ancestor pattern of `parent` (diagonal included) that is not finite, as
/// (row, column, value). Entries off the pattern are never read and may hold anything.
fn pattern_non_finite(h: &DMatrix<f64>, parent: &[Option<usize>]) -> Option<(usize, usize, f64)> {
    (0..parent.len())
        .flat_map(|i| std::iter::once(i).chain(ancestors(parent, i)).map(move |j| (i, j)))
        .map(|(i, j)| (i, j, h[(i, j)]))
        .find(|(_, _, v)| !v.is_finite())
}

/// The door and exit checks of [`ltdl`] and [`ltl`]: `h` finite on the pattern before, the factor
/// finite on the pattern after ([`Error::Overflow`] naming the entry).
fn check_pattern(what: &str, h: &DMatrix<f64>, parent: &[Option<usize>], after: bool) -> Result<()> {
    match pattern_non_finite(h, parent) {
        None => Ok(()),
        Some((i, j, value)) if after => Err(Error::Overflow {
            what: format!("{what} factor (row {i})"),
            index: j,
            value,
        }),
        Some((i, j, value)) => Err(Error::NonFinite {
            what: format!("H (row {i})"),
            index: j,
            value,
        }),
    }
}

/// The door of the triangular solves: `parent` keeps `parent[i] < i`, and the factor is square
/// with one row per entry of `x` and of `parent`.
fn check_solve(l: &DMatrix<f64>, parent: &[Option<usize>], x: &[f64]) -> Result<()> {
    check_square(l, parent)?;
    if x.len() != parent.len() {
        return Err(Error::BadLength {
            what: "x (right-hand side)".into(),
            got: x.len(),
            expected: parent.len(),
        });
    }
    Ok(())
}

fn check_square(h: &DMatrix<f64>, parent: &[Option<usize>]) -> Result<()> {
    if h.nrows() != h.ncols() || h.nrows() != parent.len() {
        return Err(Error::BadLength {
            what: "H (rows, columns vs parent array)".into(),
            got: h.nrows(),
            expected: parent.len(),
        });
    }
    check_parent(parent)
}

// ANCHOR: ltdl
/// `H = L^T D L` in place, leaves to root (Featherstone 6.5, table 6.3's LTDL): on return the
/// strict lower triangle of `h` holds L (unit diagonal implied) on the ancestor pattern and the
/// diagonal holds D. Only entries `(i, j)` with j an ancestor of i are read or written.
///
/// A pivot `H[k][k] <= 0` is an error naming the dof; a non-finite entry on the pattern, before
/// or after, is an error naming it.
pub fn ltdl(h: &mut DMatrix<f64>, parent: &[Option<usize>], ops: &mut impl Counter) -> Result<()> {
    check_square(h, parent)?;
    check_pattern("LTDL", h, parent, false)?;
    for k in (0..h.nrows()).rev() {
        if !(h[(k, k)] > 0.0) {
            return Err(Error::NotPositiveDefinite {
                what: "LTDL".into(),
                dof: k,
                value: h[(k, k)],
            });
        }
        let mut i = parent[k];
        while let Some(ii) = i {
            let a = h[(k, ii)] / h[(k, k)];
            ops.div(1);
            let mut j = Some(ii);
            while let Some(jj) = j {
                h[(ii, jj)] -= a * h[(k, jj)];
                ops.madd(1);
                j = parent[jj];
            }
            h[(k, ii)] = a;
            i = parent[ii];
        }
    }
    check_pattern("LTDL", h, parent, true)
}
// ANCHOR_END: ltdl

// ANCHOR: ltl
/// `H = L^T L` in place, leaves to root (Featherstone 6.5, table 6.3's LTL): on return the lower
/// triangle of `h` (diagonal included) holds L on the ancestor pattern.
pub fn ltl(h: &mut DMatrix<f64>, parent: &[Option<usize>], ops: &mut impl Counter) -> Result<()> {
    check_square(h, parent)?;
    check_pattern("LTL", h, parent, false)?;
    for k in (0..h.nrows()).rev() {
        if !(h[(k, k)] > 0.0) {
            return Err(Error::NotPositiveDefinite {
                what: "LTL".into(),
                dof: k,
                value: h[(k, k)],
            });
        }
        h[(k, k)] = h[(k, k)].sqrt();
        ops.sqrt(1);
        let mut i = parent[k];
        while let Some(ii) = i {
            h[(k, ii)] /= h[(k, k)];
            ops.div(1);
            i = parent[ii];
        }
        let mut i = parent[k];
        while let Some(ii) = i {
            let mut j = Some(ii);
            while let Some(jj) = j {
                h[(ii, jj)] -= h[(k, ii)] * h[(k, jj)];
                ops.madd(1);
                j = parent[jj];
            }
            i = parent[ii];
        }
    }
    check_pattern("LTL", h, parent, true)
}
// ANCHOR_END: ltl

// ANCHOR: solves
/// `x <- L^-T x` for the factor of [`ltl`] (general diagonal) or [`ltdl`] (`unit = true`).
///
/// Every solve here checks at the door that `parent` keeps `parent[i] < i` and that the sizes
/// agree ([`Error::BadParent`], [`Error::BadLength`]), and fails with [`Error::Overflow`] if
/// the result is not finite.
pub fn solve_lt(
    l: &DMatrix<f64>,
    parent: &[Option<usize>],
    unit: bool,
    x: &mut [f64],
    ops: &mut impl Counter,
) -> Result<()> {
    check_solve(l, parent, x)?;
    for i in (0..x.len()).rev() {
        if !unit {
            x[i] /= l[(i, i)];
            ops.div(1);
        }
        let mut j = parent[i];
        while let Some(jj) = j {
            x[jj] -= l[(i, jj)] * x[i];
            ops.madd(1);
            j = parent[jj];
        }
    }
    check_output("x", x)
}

/// `x <- L^-1 x` for the factor of [`ltl`] (general diagonal) or [`ltdl`] (`unit = true`).
pub fn solve_l(
    l: &DMatrix<f64>,
    parent: &[Option<usize>],
    unit: bool,
    x: &mut [f64],
    ops: &mut impl Counter,
) -> Result<()> {
    check_solve(l, parent, x)?;
    for i in 0..x.len() {
        let mut j = parent[i];
        while let Some(jj) = j {
            x[i] -= l[(i, jj)] * x[jj];
            ops.madd(1);
            j = parent[jj];
        }
        if !unit {
            x[i] /= l[(i, i)];
            ops.div(1);
        }
    }
    check_output("x", x)
}

/// `x <- D^-1 x` with D the diagonal of the [`ltdl`] factor.
pub fn solve_d(ld: &DMatrix<f64>, x: &mut [f64], ops: &mut impl Counter) -> Result<()> {
    check_solve(ld, &vec![None; x.len()], x)?;
    for i in 0..x.len() {
        x[i] /= ld[(i, i)];
        ops.div(1);
    }
    check_output("x", x)
}

/// Solves `H x = b` given the [`ltdl`] factor: `x = L^-1 D^-1 L^-T b`.
pub fn solve_ltdl(
    ld: &DMatrix<f64>,
    parent: &[Option<usize>],
    b: &[f64],
    ops: &mut impl Counter,
) -> Result<DVector<f64>> {
    let mut x = b.to_vec();
    solve_lt(ld, parent, true, &mut x, ops)?;
    solve_d(ld, &mut x, ops)?;
    solve_l(ld, parent, true, &mut x, ops)?;
    Ok(DVector::from_vec(x))
}

/// Solves `H x = b` given the [`ltl`] factor: `x = L^-1 L^-T b`.
pub fn solve_ltl(
    l: &DMatrix<f64>,
    parent: &[Option<usize>],
    b: &[f64],
    ops: &mut impl Counter,
) -> Result<DVector<f64>> {
    let mut x = b.to_vec();
    solve_lt(l, parent, false, &mut x, ops)?;
    solve_l(l, parent, false, &mut x, ops)?;
    Ok(DVector::from_vec(x))
}

/// `y = H x` using only the lower triangle of H on the ancestor pattern (Featherstone's `mpyH`).
pub fn mpy_h(h: &DMatrix<f64>, parent: &[Option<usize>], x: &[f64], ops: &mut impl Counter) -> Result<DVector<f64>> {
    check_solve(h, parent, x)?;
    let n = x.len();
    let mut y = DVector::zeros(n);
    for i in 0..n {
        y[i] = h[(i, i)] * x[i];
    }
    for i in (0..n).rev() {
        let mut j = parent[i];
        while let Some(jj) = j {
            y[i] += h[(i, jj)] * x[jj];
            y[jj] += h[(i, jj)] * x[i];
            ops.madd(2);
            j = parent[jj];
        }
    }
    check_output("y = H x", y.as_slice())?;
    Ok(y)
}
// ANCHOR_END: solves

/// The L and D of an [`ltdl`] result as separate dense matrices (L unit lower-triangular).
///
/// Only the first `min(n, parent.len())` rows take entries below the diagonal.
pub fn split_ltdl(ld: &DMatrix<f64>, parent: &[Option<usize>]) -> (DMatrix<f64>, DVector<f64>) {
    let n = ld.nrows().min(ld.ncols());
    let mut l = DMatrix::identity(n, n);
    for i in 0..n {
        for j in ancestors(parent, i) {
            l[(i, j)] = ld[(i, j)];
        }
    }
    (l, ld.diagonal())
}

/// The L of an [`ltl`] result as a dense lower-triangular matrix (entries off the pattern zeroed).
///
/// Only the first `min(n, parent.len())` rows take entries below the diagonal.
pub fn lower_ltl(l_in: &DMatrix<f64>, parent: &[Option<usize>]) -> DMatrix<f64> {
    let n = l_in.nrows().min(l_in.ncols());
    let mut l = DMatrix::zeros(n, n);
    for i in 0..n {
        l[(i, i)] = l_in[(i, i)];
        for j in ancestors(parent, i) {
            l[(i, j)] = l_in[(i, j)];
        }
    }
    l
}

/// The operation counts Featherstone 6.5 predicts for LTDL on this tree:
/// `sum(d_k - 1)` divisions and `sum d_k (d_k - 1) / 2` multiply-adds, where `d_k` is the depth
/// of dof k counting k itself. LTL adds `n` square roots; each triangular solve costs
/// `sum(d_k - 1)` multiply-adds.
pub fn predicted_ltdl_ops(parent: &[Option<usize>]) -> OpCount {
    let d = depths(parent);
    let div = d.iter().sum();
    let madd = d.iter().map(|&a| (a + 1) * a / 2).sum();
    OpCount {
        div,
        madd,
        sqrt: 0,
        mul: 0,
    }
}

/// Number of nonzeros that a root-first Cholesky `H = L L^T` (natural order) creates outside the
/// ancestor pattern of H ("fill-in"), found by symbolic elimination. Zero for an unbranched
/// chain; positive as soon as a dof has two children.
pub fn llt_fill_in(parent: &[Option<usize>]) -> usize {
    let n = parent.len();
    // pattern[i][j] for j < i: structurally nonzero in the lower triangle
    let mut pat = vec![vec![false; n]; n];
    for i in 0..n {
        for j in ancestors(parent, i) {
            pat[i][j] = true;
        }
    }
    let original = pat.clone();
    // eliminating column k: rows i, j > k with pat[i][k] and pat[j][k] become connected
    for k in 0..n {
        let rows: Vec<usize> = (k + 1..n).filter(|&i| pat[i][k]).collect();
        for (a, &i) in rows.iter().enumerate() {
            for &j in &rows[..a] {
                pat[i][j] = true; // j < i
            }
        }
    }
    let mut fill = 0;
    for i in 0..n {
        for j in 0..i {
            if pat[i][j] && !original[i][j] {
                fill += 1;
            }
        }
    }
    fill
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::crba;
    use crate::model::canned;
    use approx::assert_relative_eq;

    fn tree_h() -> (DMatrix<f64>, Vec<Option<usize>>) {
        let m = canned::floating_base_ball_arms();
        let mut q = m.qpos0.clone();
        let v: Vec<f64> = (0..m.nv).map(|k| 0.3 * (k as f64 + 1.0).sin()).collect();
        m.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
        (crba(&m, q.as_slice()).unwrap(), m.dof_parent.clone())
    }

    #[test]
    fn ltdl_and_ltl_reproduce_h_and_count_as_predicted() {
        let (h, parent) = tree_h();
        let mut ld = h.clone();
        let mut ops = OpCount::default();
        ltdl(&mut ld, &parent, &mut ops).unwrap();
        assert_eq!(ops, predicted_ltdl_ops(&parent));
        let (l, d) = split_ltdl(&ld, &parent);
        let rebuilt = l.transpose() * DMatrix::from_diagonal(&d) * &l;
        assert_relative_eq!(rebuilt, h, epsilon = 1e-12 * h.amax());
        let mut l2 = h.clone();
        let mut ops2 = OpCount::default();
        ltl(&mut l2, &parent, &mut ops2).unwrap();
        assert_eq!(ops2.sqrt, h.nrows());
        let l2 = lower_ltl(&l2, &parent);
        assert_relative_eq!(l2.transpose() * &l2, h, epsilon = 1e-12 * h.amax());
        let b: Vec<f64> = (0..h.nrows()).map(|k| (k as f64).cos()).collect();
        let x_ref = h.clone().lu().solve(&DVector::from_column_slice(&b)).unwrap();
        let mut o = OpCount::default();
        assert_relative_eq!(
            solve_ltdl(&ld, &parent, &b, &mut o).unwrap(),
            x_ref,
            epsilon = 1e-9 * x_ref.amax()
        );
        let mut o = OpCount::default();
        let mut l2full = h.clone();
        ltl(&mut l2full, &parent, &mut o).unwrap();
        assert_relative_eq!(
            solve_ltl(&l2full, &parent, &b, &mut o).unwrap(),
            x_ref,
            epsilon = 1e-9 * x_ref.amax()
        );
        let mut o = OpCount::default();
        assert_relative_eq!(
            mpy_h(&h, &parent, &b, &mut o).unwrap(),
            &h * DVector::from_column_slice(&b),
            epsilon = 1e-12 * h.amax()
        );
    }

    #[test]
    fn fill_in_is_zero_for_a_chain_and_positive_for_a_tree() {
        let chain: Vec<Option<usize>> = (0..6).map(|i| if i == 0 { None } else { Some(i - 1) }).collect();
        assert_eq!(llt_fill_in(&chain), 0);
        // root 0 with two children 1 and 2: L L^T eliminating 0 first connects 1 and 2
        assert_eq!(llt_fill_in(&[None, Some(0), Some(0)]), 1);
    }

    #[test]
    fn non_positive_pivot_names_the_dof() {
        let mut h = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
        let parent = [None, Some(0)];
        let err = ltdl(&mut h, &parent, &mut OpCount::default()).unwrap_err();
        assert!(matches!(err, Error::NotPositiveDefinite { dof: 0, .. }), "{err}");
    }
}
