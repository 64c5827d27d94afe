//! Featherstone 8.8: `G` and `g` by Gauss-Jordan elimination with complete pivoting, and the
//! properties of 8.10 (rank, mobility, overconstraint) that fall out of it.

use crate::error::{Error, Result};
use nalgebra::{DMatrix, DVector};

/// Tolerances of the elimination. Both are relative: a pivot counts as zero below
/// `rank * max |K_ij|`, and a leftover right-hand side counts as zero below
/// `consistency * max(1, max |k_i|)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PivotTol {
    /// Relative pivot tolerance (rank decision).
    pub rank: f64,
    /// Relative tolerance on the right-hand side left in the dependent rows.
    pub consistency: f64,
}

impl Default for PivotTol {
    fn default() -> Self {
        PivotTol {
            rank: 1e-10,
            consistency: 1e-8,
        }
    }
}

/// The general solution `x = G y + g` of `K x = k` (Featherstone 8.8, eqs. (8.48)-(8.51)).
#[derive(Clone, Debug, PartialEq)]
pub struct NullSpace {
    /// `G` (n x (n - r)): full column rank, `K G = 0`; the rows of the independent variables
    /// form an identity.
    pub g_null: DMatrix<f64>,
    /// `g` (n): a particular solution, zero in the independent variables.
    pub g_bias: DVector<f64>,
    /// `r = rank(K)`.
    pub rank: usize,
    /// The variables that make up `y`, in the order of G's columns.
    pub independent: Vec<usize>,
    /// The variables solved for (the pivot columns), in pivot order.
    pub dependent: Vec<usize>,
    /// Largest right-hand side left in the `m - r` dependent rows (0 if `K` has full row rank):
    /// how far `k` is from `range(K)`.
    pub residual: f64,
}

/// `G` and `g` with `K G = 0`, `K g = k` by Gauss-Jordan elimination with complete pivoting on
/// `[K | k]` (Featherstone 8.8 and its list of modifications):
/// 1. at step s pick the largest `|K_ij|` over the remaining rows and columns; if it is below
///    tolerance, stop: `r = s`;
/// 2. swap it into place (recording the column swap `Q_2`), scale the pivot row, eliminate the
///    pivot column from every other row;
/// 3. the result is `[1_r  K' | k']` in permuted columns: `G = Q_2^T [-K'; 1]`,
///    `g = Q_2^T [k'; 0]`.
///
/// Fails with [`Error::Singular`] if the `m - r` rows left over still carry a right-hand side
/// above tolerance: the constraints are inconsistent (`k` is not in `range(K)`).
pub fn null_space(kmat: &DMatrix<f64>, k: &DVector<f64>) -> Result<NullSpace> {
    null_space_with(kmat, k, &PivotTol::default(), None)
}

// ANCHOR: null_space
/// [`null_space`] with explicit tolerances and, optionally, the independent variables chosen by
/// the caller (Featherstone 8.8: then only the other columns are pivot candidates). The chosen
/// variables come first in `y`, in the given order; any other column that no pivot reaches is
/// appended. Fails if the chosen variables are not independent (a dependent row is left with
/// nonzero entries in them).
pub fn null_space_with(
    kmat: &DMatrix<f64>,
    k: &DVector<f64>,
    tol: &PivotTol,
    independent: Option<&[usize]>,
) -> Result<NullSpace> {
    let (m, n) = (kmat.nrows(), kmat.ncols());
    if k.len() != m {
        return Err(Error::BadLength {
            what: "k (loop constraints right-hand side)".into(),
            got: k.len(),
            expected: m,
        });
    }
    if let Some((i, v)) = kmat.iter().chain(k.iter()).enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: "[K | k]".into(),
            index: i,
            value: *v,
        });
    }
    let mut allowed = vec![true; n];
    if let Some(ind) = independent {
        for &c in ind {
            if c >= n {
                return Err(Error::BadLength {
                    what: format!("independent variable index {c}"),
                    got: c,
                    expected: n,
                });
            }
            if !allowed[c] {
                return Err(Error::InvalidArgument {
                    what: "independent".into(),
                    why: format!("variable {c} is listed twice"),
                });
            }
            allowed[c] = false;
        }
    }
    // augmented matrix [K | k] and the column permutation (position -> original column)
    let mut a = DMatrix::zeros(m, n + 1);
    a.columns_mut(0, n).copy_from(kmat);
    a.column_mut(n).copy_from(k);
    let mut perm: Vec<usize> = (0..n).collect();
    let kmax = kmat.iter().fold(0.0f64, |acc, v| acc.max(v.abs()));
    let piv_tol = tol.rank * kmax;
    let mut r = 0;
    while r < m.min(n) {
        let mut best = (0.0, r, r);
        for i in r..m {
            for pos in r..n {
                if allowed[perm[pos]] && a[(i, pos)].abs() > best.0 {
                    best = (a[(i, pos)].abs(), i, pos);
                }
            }
        }
        let (size, pi, pc) = best;
        if size <= piv_tol || size == 0.0 {
            break;
        }
        a.swap_rows(r, pi);
        a.swap_columns(r, pc);
        perm.swap(r, pc);
        let inv = 1.0 / a[(r, r)];
        for c in 0..=n {
            a[(r, c)] *= inv;
        }
        for i in 0..m {
            if i != r {
                let f = a[(i, r)];
                if f != 0.0 {
                    for c in 0..=n {
                        let v = a[(r, c)];
                        a[(i, c)] -= f * v;
                    }
                }
            }
        }
        r += 1;
    }
    // rows r..m: any entry left in a chosen independent column means the choice was not valid
    for i in r..m {
        for pos in r..n {
            if a[(i, pos)].abs() > piv_tol.max(f64::MIN_POSITIVE) {
                return Err(Error::Singular {
                    what: "G, g by complete pivoting".into(),
                    why: format!("the chosen independent variables are not independent (variable {} is needed to satisfy constraint row {i})", perm[pos]),
                });
            }
        }
    }
    let residual = (r..m).map(|i| a[(i, n)].abs()).fold(0.0, f64::max);
    let k_scale = k.iter().fold(1.0f64, |acc, v| acc.max(v.abs()));
    if residual > tol.consistency * k_scale {
        return Err(Error::Singular {
            what: "loop constraints K qdd = k".into(),
            why: format!(
                "inconsistent: rank(K) = {r} < {m} rows and the dependent rows leave |k_i| = {residual:.3e} (tolerance {:.1e})",
                tol.consistency * k_scale
            ),
        });
    }
    // order y: the caller's choice first, then the remaining free columns in ascending order
    let mut free: Vec<usize> = perm[r..].to_vec();
    let mut ind_order: Vec<usize> = independent.map(|s| s.to_vec()).unwrap_or_default();
    free.retain(|c| !ind_order.contains(c));
    free.sort_unstable();
    ind_order.extend(free);
    let pos_of = |col: usize| {
        perm.iter()
            .position(|&p| p == col)
            .expect("column is in the permutation")
    };
    let mut g_null = DMatrix::zeros(n, n - r);
    let mut g_bias = DVector::zeros(n);
    for (yc, &col) in ind_order.iter().enumerate() {
        let pos = pos_of(col);
        g_null[(col, yc)] = 1.0;
        for j in 0..r {
            g_null[(perm[j], yc)] = -a[(j, pos)];
        }
    }
    for j in 0..r {
        g_bias[perm[j]] = a[(j, n)];
    }
    Ok(NullSpace {
        g_null,
        g_bias,
        rank: r,
        independent: ind_order,
        dependent: perm[..r].to_vec(),
        residual,
    })
}
// ANCHOR_END: null_space

/// `rank(K)` by complete pivoting (the right-hand side is ignored).
pub fn rank(kmat: &DMatrix<f64>) -> usize {
    let zeros = DVector::zeros(kmat.nrows());
    null_space_with(kmat, &zeros, &PivotTol::default(), None)
        .map(|ns| ns.rank)
        .unwrap_or(0)
}

/// Featherstone 8.10: how constrained a closed-loop system is at one configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopProperties {
    /// Degrees of freedom of the spanning tree, `n`.
    pub n: usize,
    /// Number of loop constraints, `n^c`.
    pub nc: usize,
    /// `r = rank(K)` (complete pivoting).
    pub rank: usize,
    /// Mobility `n - r`, eq. (8.52).
    pub mobility: usize,
}

impl LoopProperties {
    /// From `K` (n^c x n).
    pub fn of(kmat: &DMatrix<f64>) -> Self {
        let r = rank(kmat);
        LoopProperties {
            n: kmat.ncols(),
            nc: kmat.nrows(),
            rank: r,
            mobility: kmat.ncols() - r,
        }
    }
    /// Properly constrained: `r = n^c`.
    pub fn properly_constrained(&self) -> bool {
        self.rank == self.nc
    }
    /// Overconstrained: `r < n^c` (`n^c - r` redundant constraints, as many undetermined
    /// constraint forces).
    pub fn overconstrained(&self) -> bool {
        self.rank < self.nc
    }
    /// Number of redundant constraints `n^c - r`.
    pub fn redundant(&self) -> usize {
        self.nc - self.rank
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn general_solution_of_a_rank_deficient_system() {
        // rows 3 = row 1 + row 2; rank 2, n = 4
        let kmat = DMatrix::from_row_slice(3, 4, &[1.0, 2.0, 0.0, -1.0, 0.0, 1.0, 3.0, 1.0, 1.0, 3.0, 3.0, 0.0]);
        let k = DVector::from_column_slice(&[1.0, 2.0, 3.0]);
        let ns = null_space(&kmat, &k).unwrap();
        assert_eq!(ns.rank, 2);
        assert_eq!(ns.g_null.ncols(), 2);
        assert!((&kmat * &ns.g_null).amax() < 1e-14);
        assert_relative_eq!(&kmat * &ns.g_bias, k, epsilon = 1e-14);
        for (c, &v) in ns.independent.iter().enumerate() {
            assert_eq!(ns.g_null[(v, c)], 1.0);
            assert_eq!(ns.g_bias[v], 0.0);
        }
        // inconsistent right-hand side
        let bad = DVector::from_column_slice(&[1.0, 2.0, 3.5]);
        let e = null_space(&kmat, &bad).unwrap_err();
        assert!(e.to_string().contains("inconsistent"), "{e}");
    }

    #[test]
    fn chosen_independent_variables() {
        let kmat = DMatrix::from_row_slice(1, 3, &[1.0, 1.0, 0.0]);
        let k = DVector::from_column_slice(&[2.0]);
        let ns = null_space_with(&kmat, &k, &PivotTol::default(), Some(&[1])).unwrap();
        assert_eq!(ns.independent, vec![1, 2]);
        assert_eq!(ns.dependent, vec![0]);
        assert_relative_eq!(
            ns.g_null.column(0).clone_owned(),
            DVector::from_column_slice(&[-1.0, 1.0, 0.0])
        );
        // variable 0 alone cannot be independent together with 1: nothing left to solve the row
        assert!(null_space_with(&kmat, &k, &PivotTol::default(), Some(&[0, 1])).is_err());
    }
}
