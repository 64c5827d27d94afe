//! MuJoCo's sparse row storage of the constraint Jacobian (`efc_J` with `efc_J_rownnz`,
//! `efc_J_rowadr`, `efc_J_colind`, as `mj_jacSparse` writes it when `mj_isSparse`), and the two
//! products every solver iteration needs, `J x` (`mj_mulJacVec`) and `J^T f`
//! (`mj_mulJacTVec`). Book chapter: "The constraint model", section "Sparse rows".
//!
//! A contact row of two free boxes touches the 12 dofs of the two bodies' chains, whatever `nv`
//! is: stored densely, the products cost `nefc nv`; stored by rows of their nonzeros, `nefc`
//! times the rows' length.

use nalgebra::DMatrix;

use crate::error::{Error, Result};

// ANCHOR: sparse_rows
/// A matrix stored by rows (compressed sparse rows): row `i` holds the values
/// `values[rowadr[i]..rowadr[i + 1]]` in the columns `colind[..]` of the same range, in
/// increasing column order. MuJoCo keeps `rownnz` and `rowadr`; here `rowadr` has `nrows + 1`
/// entries and [`SparseRows::rownnz`] is their difference.
///
/// MuJoCo's pattern of a row is structural, the dofs of the chains of the row's bodies (found
/// through `dof_parentid`); [`SparseRows::from_dense`] keeps the entries that are not exactly
/// zero, a subset of those columns that gives the same products, since the dropped terms are
/// exact zeros.
#[derive(Clone, Debug, Default)]
pub struct SparseRows {
    /// Number of columns (`nv` for a Jacobian).
    pub ncols: usize,
    /// Start of each row in `colind` and `values`, plus the end of the last (`nrows + 1`).
    pub rowadr: Vec<usize>,
    /// Column of each stored entry.
    pub colind: Vec<usize>,
    /// Value of each stored entry.
    pub values: Vec<f64>,
    /// Scratch of [`SparseRows::refill_from_dense`].
    colind_next: Vec<usize>,
}

impl PartialEq for SparseRows {
    /// The same shape and stored entries (scratch ignored).
    fn eq(&self, o: &Self) -> bool {
        self.ncols == o.ncols && self.rowadr == o.rowadr && self.colind == o.colind && self.values == o.values
    }
}

impl SparseRows {
    /// No rows, `ncols` columns.
    pub fn new(ncols: usize) -> Self {
        SparseRows {
            ncols,
            rowadr: vec![0],
            colind: Vec::new(),
            values: Vec::new(),
            colind_next: Vec::new(),
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.rowadr.len() - 1
    }

    /// Number of stored entries of row `i` (`efc_J_rownnz`).
    pub fn rownnz(&self, i: usize) -> usize {
        self.rowadr[i + 1] - self.rowadr[i]
    }

    /// Row `i`: its columns and values.
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.rowadr[i], self.rowadr[i + 1]);
        (&self.colind[a..b], &self.values[a..b])
    }

    /// Removes every row, keeping the storage (no allocation when refilled to a size seen
    /// before).
    pub fn clear(&mut self, ncols: usize) {
        self.ncols = ncols;
        self.rowadr.clear();
        self.rowadr.push(0);
        self.colind.clear();
        self.values.clear();
    }

    /// Refills from a dense row-major `nrows x ncols` array (its nonzero entries), one pass.
    pub fn refill_from_row_major(&mut self, a: &[f64], ncols: usize) {
        self.clear(ncols);
        for row in a.chunks_exact(ncols.max(1)) {
            self.push_dense_row(row.iter().copied());
        }
    }

    /// Appends a row given densely (`ncols` numbers) that can be nonzero only in the columns
    /// `cols` (increasing), keeping its nonzero entries there.
    pub fn push_row_in_cols(&mut self, row: &[f64], cols: &[usize]) {
        for &k in cols {
            let v = row[k];
            if v != 0.0 {
                self.colind.push(k);
                self.values.push(v);
            }
        }
        self.rowadr.push(self.colind.len());
    }

    /// Appends a row given densely (`ncols` numbers), keeping its nonzero entries.
    pub fn push_dense_row(&mut self, row: impl IntoIterator<Item = f64>) {
        for (k, v) in row.into_iter().enumerate() {
            if v != 0.0 {
                self.colind.push(k);
                self.values.push(v);
            }
        }
        self.rowadr.push(self.colind.len());
    }

    /// Refills from a dense matrix (its nonzero entries), reusing the storage. Reads the
    /// column-major storage in order, twice: once to count each row's entries, once to place
    /// them.
    pub fn refill_from_dense(&mut self, m: &DMatrix<f64>) {
        let (nr, nc) = (m.nrows(), m.ncols());
        self.clear(nc);
        self.rowadr.resize(nr + 1, 0);
        for col in m.column_iter() {
            for (i, v) in col.iter().enumerate() {
                if *v != 0.0 {
                    self.rowadr[i + 1] += 1;
                }
            }
        }
        for i in 0..nr {
            self.rowadr[i + 1] += self.rowadr[i];
        }
        let nnz = self.rowadr[nr];
        self.colind.resize(nnz, 0);
        self.values.resize(nnz, 0.0);
        // next free slot of each row; columns arrive in increasing order
        let mut next = std::mem::take(&mut self.colind_next);
        next.clear();
        next.extend_from_slice(&self.rowadr[..nr]);
        for (k, col) in m.column_iter().enumerate() {
            for (i, v) in col.iter().enumerate() {
                if *v != 0.0 {
                    self.colind[next[i]] = k;
                    self.values[next[i]] = *v;
                    next[i] += 1;
                }
            }
        }
        self.colind_next = next;
    }

    /// The rows of a dense matrix (its nonzero entries).
    pub fn from_dense(m: &DMatrix<f64>) -> Self {
        let mut s = SparseRows::new(m.ncols());
        s.refill_from_dense(m);
        s
    }

    /// The dense matrix (for tests and figures).
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(self.nrows(), self.ncols);
        for i in 0..self.nrows() {
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                m[(i, c)] = v;
            }
        }
        m
    }

    /// Whether the storage is well formed: `rowadr` starts at 0, never decreases and ends at
    /// the number of entries; every row's columns increase and lie below `ncols`.
    /// [`SparseRows::check`] names the first fault. Two passes without early exits, both
    /// vectorizable: the places where `colind` does not increase, counted over the whole
    /// array, must all be first entries of rows; per row, its last column is below `ncols`.
    /// Compiled for AVX where the processor has it (`sparse::with_avx`).
    pub fn is_well_formed(&self) -> bool {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.is_well_formed_body(),
        )
    }

    /// The body of [`SparseRows::is_well_formed`].
    #[inline(always)]
    fn is_well_formed_body(&self) -> bool {
        let (c, nnz) = (&self.colind, self.values.len());
        if self.rowadr.first() != Some(&0) || self.rowadr.last() != Some(&nnz) || c.len() != nnz {
            return false;
        }
        let drops = c.iter().zip(&c[1.min(nnz)..]).filter(|(a, b)| b <= a).count();
        let (mut ok, mut drops_at_starts) = (true, 0);
        for w in self.rowadr.windows(2) {
            let (a, b) = (w[0], w[1]);
            ok &= a <= b && b <= nnz;
            if a < b && b <= nnz {
                ok &= c[b - 1] < self.ncols;
                drops_at_starts += usize::from(a > 0 && c[a] <= c[a - 1]);
            }
        }
        ok && drops == drops_at_starts
    }

    /// The checks of [`SparseRows::is_well_formed`], naming the first bad row of `what`.
    pub fn check(&self, what: &str) -> Result<()> {
        if self.is_well_formed() {
            return Ok(());
        }
        let bad = |row: usize, why: String| {
            Err(Error::BadSparseRows {
                what: what.into(),
                row,
                why,
            })
        };
        let nnz = self.values.len();
        if self.rowadr.first() != Some(&0) || self.rowadr.last() != Some(&nnz) || self.colind.len() != nnz {
            return bad(
                0,
                format!(
                    "rowadr must run from 0 to the {nnz} values (got {:?} to {:?}) and colind hold {nnz} columns (got {})",
                    self.rowadr.first(),
                    self.rowadr.last(),
                    self.colind.len()
                ),
            );
        }
        for i in 0..self.nrows() {
            let (a, b) = (self.rowadr[i], self.rowadr[i + 1]);
            if a > b {
                return bad(i, format!("rowadr decreases from {a} to {b}"));
            }
            let cols = &self.colind[a..b];
            if let Some(w) = cols.windows(2).find(|w| w[0] >= w[1]) {
                return bad(i, format!("columns {} and {} are not increasing", w[0], w[1]));
            }
            if let Some(&c) = cols.last().filter(|&&c| c >= self.ncols) {
                return bad(i, format!("column {c} is not below {}", self.ncols));
            }
        }
        Ok(())
    }

    /// `row_i . x`. Inputs assumed valid (`x` of length `ncols`).
    pub fn dot_row(&self, i: usize, x: &[f64]) -> f64 {
        let (cols, vals) = self.row(i);
        cols.iter().zip(vals).map(|(&c, &v)| v * x[c]).sum()
    }

    /// `out = A x` (MuJoCo's `mj_mulJacVec` on sparse rows): `nnz` multiply-adds. Inputs
    /// assumed valid.
    pub fn mul(&self, x: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate().take(self.nrows()) {
            *o = self.dot_row(i, x);
        }
    }

    /// `out = A^T f` (`mj_mulJacTVec`): each row scattered into the columns it touches. Inputs
    /// assumed valid.
    pub fn mul_t(&self, f: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (i, &fi) in f.iter().enumerate().take(self.nrows()) {
            if fi == 0.0 {
                continue;
            }
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                out[c] += v * fi;
            }
        }
    }
}
// ANCHOR_END: sparse_rows

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_rows_products_equal_the_dense_ones() {
        let m = DMatrix::from_fn(7, 9, |i, k| {
            if (i * 3 + k * 5) % 4 == 0 {
                (i as f64 + 1.0) * 0.5 - k as f64 * 0.3
            } else {
                0.0
            }
        });
        let s = SparseRows::from_dense(&m);
        assert_eq!(s.to_dense(), m);
        assert!(s.values.len() < 7 * 9);
        let x: Vec<f64> = (0..9).map(|k| (k as f64 * 0.7).sin()).collect();
        let f: Vec<f64> = (0..7).map(|k| (k as f64 * 1.1).cos()).collect();
        let (mut y, mut z) = (vec![0.0; 7], vec![0.0; 9]);
        s.mul(&x, &mut y);
        s.mul_t(&f, &mut z);
        let y_ref = &m * nalgebra::DVector::from_column_slice(&x);
        let z_ref = m.transpose() * nalgebra::DVector::from_column_slice(&f);
        for i in 0..7 {
            assert!((y[i] - y_ref[i]).abs() < 1e-14);
        }
        for k in 0..9 {
            assert!((z[k] - z_ref[k]).abs() < 1e-14);
        }
    }

    /// Every fault of the storage is found by the one-pass test and named by the checks, and
    /// well-formed rows (empty ones included) pass both.
    #[test]
    fn malformed_rows_are_refused() {
        let m = DMatrix::from_row_slice(
            4,
            5,
            &[
                1.0, 0.0, 2.0, 0.0, 0.0, //
                0.0, 0.0, 0.0, 0.0, 0.0, //
                0.0, 3.0, 0.0, 4.0, 5.0, //
                6.0, 0.0, 0.0, 0.0, 7.0,
            ],
        );
        let good = SparseRows::from_dense(&m);
        assert!(good.is_well_formed() && good.check("J").is_ok());
        assert!(SparseRows::new(3).is_well_formed());
        type Edit = fn(&mut SparseRows);
        let faults: [(Edit, usize); 6] = [
            (|s| s.colind[3] = 5, 2),           // column not below ncols
            (|s| s.colind.swap(2, 3), 2),       // columns not increasing
            (|s| s.colind[3] = s.colind[2], 2), // a repeated column
            (|s| s.rowadr[2] = 1, 1),           // rowadr decreases
            (|s| s.rowadr.push(99), 0),         // does not end at nnz
            (
                |s| {
                    s.values.pop();
                },
                0,
            ), // values and colind differ
        ];
        for (k, (edit, row)) in faults.iter().enumerate() {
            let mut s = good.clone();
            edit(&mut s);
            assert!(!s.is_well_formed(), "fault {k} passed the one-pass test");
            match s.check("J") {
                Err(Error::BadSparseRows { row: r, .. }) => assert_eq!(r, *row, "fault {k}"),
                other => panic!("fault {k}: {other:?}"),
            }
        }
    }
}
