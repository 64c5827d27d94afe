//! Featherstone 8.8's modifications of complete pivoting that [`super::null_space_with`] leaves
//! to the caller: a column mask (the variables allowed to be solved for), and what to do when
//! `rank(K) < n^c` and the leftover rows of `k` are not quite zero: fail, or take the
//! least-squares solution, which is Featherstone's advice for slightly inconsistent constraints.

use super::pivot::{null_space_with, NullSpace, PivotTol};
use crate::error::{Error, Result};
use nalgebra::{DMatrix, DVector};

/// What [`null_space_opts`] does when `k` is not in `range(K)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inconsistency {
    /// Fail with [`Error::Singular`] when the leftover right-hand side exceeds the consistency
    /// tolerance (the behaviour of [`super::null_space`]).
    Error,
    /// Accept any leftover and return the `g` that minimizes `|K g - k|` (2-norm) among the
    /// vectors that are zero in the independent variables; `NullSpace::residual` then holds
    /// `max |K g - k|`.
    LeastSquares,
}

/// Options of [`null_space_opts`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PivotOptions<'a> {
    /// Pivot and consistency tolerances (both relative; see [`PivotTol`]).
    pub tol: PivotTol,
    /// Variables the caller wants in `y` (in this order, first).
    pub independent: Option<&'a [usize]>,
    /// Column mask: `mask[j] = false` forbids pivoting on column j, so variable j is independent.
    pub mask: Option<&'a [bool]>,
    /// Behaviour on inconsistent constraints.
    pub inconsistency: Inconsistency,
}

impl Default for PivotOptions<'_> {
    fn default() -> Self {
        PivotOptions {
            tol: PivotTol::default(),
            independent: None,
            mask: None,
            inconsistency: Inconsistency::Error,
        }
    }
}

/// `G` and `g` of `K x = k` by complete pivoting with the options of 8.8: the masked-out
/// columns join the chosen independent variables (after them, ascending), and with
/// [`Inconsistency::LeastSquares`] the particular solution is recomputed by least squares on
/// the dependent columns (see [`least_squares_bias`]). Fails on bad sizes, non-finite input, a
/// choice of independent variables that leaves a constraint row unsolvable, or (in
/// [`Inconsistency::Error`] mode) inconsistent constraints.
pub fn null_space_opts(kmat: &DMatrix<f64>, k: &DVector<f64>, opts: &PivotOptions) -> Result<NullSpace> {
    let n = kmat.ncols();
    let mut chosen: Vec<usize> = opts.independent.map(|s| s.to_vec()).unwrap_or_default();
    if let Some(mask) = opts.mask {
        if mask.len() != n {
            return Err(Error::BadLength {
                what: "column mask".into(),
                got: mask.len(),
                expected: n,
            });
        }
        let extra: Vec<usize> = (0..n).filter(|&j| !mask[j] && !chosen.contains(&j)).collect();
        chosen.extend(extra);
    }
    let ind = if chosen.is_empty() {
        None
    } else {
        Some(chosen.as_slice())
    };
    match opts.inconsistency {
        Inconsistency::Error => null_space_with(kmat, k, &opts.tol, ind),
        Inconsistency::LeastSquares => {
            let tol = PivotTol {
                consistency: f64::INFINITY,
                ..opts.tol
            };
            let mut ns = null_space_with(kmat, k, &tol, ind)?;
            ns.g_bias = least_squares_bias(kmat, k, &ns.dependent)?;
            ns.residual = (kmat * &ns.g_bias - k).amax();
            Ok(ns)
        }
    }
}

// ANCHOR: least_squares_bias
/// The least-squares particular solution: with `K_D` the `r` dependent (pivot) columns of `K`,
/// which have full column rank and span `range(K)`, `g_D = argmin |K_D g_D - k|` by the SVD of
/// `K_D`, and `g = 0` in the independent variables. Then `K g` is the orthogonal projection of
/// `k` onto `range(K)`, so `K^T (K g - k) = 0`, and `g` equals the exact `g` of complete pivoting
/// when the constraints are consistent.
pub fn least_squares_bias(kmat: &DMatrix<f64>, k: &DVector<f64>, dependent: &[usize]) -> Result<DVector<f64>> {
    let n = kmat.ncols();
    let mut g = DVector::zeros(n);
    if dependent.is_empty() {
        return Ok(g);
    }
    let kd = DMatrix::from_fn(kmat.nrows(), dependent.len(), |r, c| kmat[(r, dependent[c])]);
    let gd = kd.svd(true, true).solve(k, 0.0).map_err(|why| Error::Singular {
        what: "least-squares g (dependent columns of K)".into(),
        why: why.into(),
    })?;
    for (c, &d) in dependent.iter().enumerate() {
        g[d] = gd[c];
    }
    Ok(g)
}
// ANCHOR_END: least_squares_bias
