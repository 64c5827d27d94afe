//! Dense references, one home each: the root-first Cholesky `H = L L^T` that the tree
//! factorizations are held against, and the SVD pseudo-inverse solve of rank-deficient systems.
//! Both check their input at the door and bound their iterations.

use crate::error::{Error, Result};
use nalgebra::{DMatrix, DVector};

/// Iteration bound of the SVD in [`pinv_solve_dense`] (nalgebra's `try_svd`; its plain `svd`
/// iterates until convergence and never returns on some inputs).
pub const SVD_MAX_ITERATIONS: usize = 1000;

fn check_square_finite(what: &str, a: &DMatrix<f64>) -> Result<()> {
    if a.nrows() != a.ncols() {
        return Err(Error::BadShape {
            what: what.into(),
            rows: a.nrows(),
            cols: a.ncols(),
            expected: "a square matrix".into(),
        });
    }
    if let Some((index, &value)) = a.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: what.into(),
            index,
            value,
        });
    }
    Ok(())
}

// ANCHOR: cholesky_dense
/// Dense reference: `H = L L^T` in place, root first (column by column), L in the lower
/// triangle; the strict upper triangle is left untouched and ignored. About `n^3 / 6`
/// multiply-adds, and on a branched tree it fills in where [`super::ltl`] does not.
///
/// Fails with [`Error::BadShape`] on a non-square matrix, [`Error::NonFinite`] on a NaN or
/// infinite entry, and [`Error::PivotNotPositive`] naming the row whose pivot is not positive
/// (`matrix` names the matrix in that error).
pub fn cholesky_dense_in_place(h: &mut DMatrix<f64>, matrix: &str) -> Result<()> {
    check_square_finite(matrix, h)?;
    let n = h.nrows();
    for j in 0..n {
        let mut d = h[(j, j)];
        for k in 0..j {
            d -= h[(j, k)] * h[(j, k)];
        }
        // written so that a NaN pivot (from an overflow) fails too
        if !(d > 0.0 && d.is_finite()) {
            return Err(Error::PivotNotPositive {
                matrix: matrix.into(),
                row: j,
                pivot: d,
            });
        }
        let d = d.sqrt();
        h[(j, j)] = d;
        for i in j + 1..n {
            let mut s = h[(i, j)];
            for k in 0..j {
                s -= h[(i, k)] * h[(j, k)];
            }
            h[(i, j)] = s / d;
        }
    }
    Ok(())
}

/// Solves `L L^T x = b` in place (`b` becomes `x`) with the factor of
/// [`cholesky_dense_in_place`]. Inputs are assumed valid (`b` of length n, `l` a factor that
/// succeeded); panics if `b` is shorter.
pub fn cholesky_solve_dense_with(l: &DMatrix<f64>, b: &mut [f64]) {
    let n = l.nrows();
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l[(i, k)] * b[k];
        }
        b[i] = s / l[(i, i)];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= l[(k, i)] * b[k];
        }
        b[i] = s / l[(i, i)];
    }
}
// ANCHOR_END: cholesky_dense

/// Dense reference: the lower-triangular `L` of `H = L L^T` (upper triangle zero), by
/// [`cholesky_dense_in_place`] on a copy.
pub fn cholesky_dense(h: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let mut l = h.clone();
    cholesky_dense_in_place(&mut l, "H (dense Cholesky)")?;
    Ok(l.lower_triangle())
}

/// Solves `A x = b` (A symmetric positive definite) by [`cholesky_dense_in_place`] on a copy.
/// `matrix` names A in the errors. Fails like [`cholesky_dense_in_place`], with
/// [`Error::BadLength`] if `b` does not match, and with [`Error::Overflow`] if `x` is not finite.
pub fn cholesky_solve_dense(a: &DMatrix<f64>, b: &DVector<f64>, matrix: &str) -> Result<DVector<f64>> {
    let mut l = a.clone();
    cholesky_dense_in_place(&mut l, matrix)?;
    crate::error::check_vector("b", b.as_slice(), a.nrows())?;
    let mut x = b.clone();
    cholesky_solve_dense_with(&l, x.as_mut_slice());
    crate::error::check_output(&format!("solution of {matrix} x = b"), x.as_slice())?;
    Ok(x)
}

/// Solves `A x = b` (A m x n) by SVD with singular values below `rel_tol * sigma_max`
/// treated as zero: the minimum-norm least-squares solution `x = A^+ b`. `matrix` names A in the
/// errors. The SVD is nalgebra's `try_svd` bounded by [`SVD_MAX_ITERATIONS`]
/// ([`Error::NotConverged`] when it stops there); non-finite entries of A or b are refused at
/// the door and a non-finite `x` is an [`Error::Overflow`].
pub fn pinv_solve_dense(a: &DMatrix<f64>, b: &DVector<f64>, rel_tol: f64, matrix: &str) -> Result<DVector<f64>> {
    if a.nrows() != b.len() {
        return Err(Error::BadLength {
            what: format!("right-hand side of {matrix}"),
            got: b.len(),
            expected: a.nrows(),
        });
    }
    if let Some((index, &value)) = a.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: matrix.into(),
            index,
            value,
        });
    }
    crate::error::check_vector(&format!("right-hand side of {matrix}"), b.as_slice(), a.nrows())?;
    if a.is_empty() {
        return Ok(DVector::zeros(a.ncols()));
    }
    let svd = a
        .clone()
        .try_svd(true, true, f64::EPSILON, SVD_MAX_ITERATIONS)
        .ok_or_else(|| Error::NotConverged {
            solver: format!("SVD of {matrix}"),
            iterations: SVD_MAX_ITERATIONS,
            residual: None,
        })?;
    let smax = svd.singular_values.amax();
    let x = svd.solve(b, rel_tol * smax).map_err(|e| Error::Singular {
        what: matrix.into(),
        why: e.into(),
    })?;
    crate::error::check_output(&format!("solution of {matrix} x = b"), x.as_slice())?;
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_names_the_row_and_refuses_bad_shapes() {
        let h = DMatrix::from_row_slice(3, 3, &[4.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        let err = cholesky_dense(&h).unwrap_err();
        assert!(
            matches!(err, Error::PivotNotPositive { row: 1, pivot, .. } if pivot == 0.0),
            "{err}"
        );
        let err = cholesky_dense(&DMatrix::zeros(2, 3)).unwrap_err();
        assert!(matches!(err, Error::BadShape { rows: 2, cols: 3, .. }), "{err}");
        let l = cholesky_dense(&DMatrix::from_row_slice(2, 2, &[4.0, 2.0, 2.0, 5.0])).unwrap();
        assert_eq!(l, DMatrix::from_row_slice(2, 2, &[2.0, 0.0, 1.0, 2.0]));
    }

    #[test]
    fn pinv_gives_the_minimum_norm_solution() {
        // rank 1: x1 + x2 = 2 twice; the minimum-norm solution is (1, 1)
        let a = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 1.0, 1.0]);
        let x = pinv_solve_dense(&a, &DVector::from_vec(vec![2.0, 2.0]), 1e-10, "A").unwrap();
        assert!((x - DVector::from_vec(vec![1.0, 1.0])).amax() < 1e-14);
        let bad = DMatrix::from_row_slice(1, 1, &[f64::INFINITY]);
        assert!(matches!(
            pinv_solve_dense(&bad, &DVector::zeros(1), 1e-10, "A"),
            Err(Error::NonFinite { .. })
        ));
    }
}
