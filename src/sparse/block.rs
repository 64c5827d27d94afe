//! Block sparse `L D L^T` of a symmetric (possibly indefinite) matrix, without pivoting, on the
//! pattern given by the elimination tree of [`super::etree`]. "A factorization is a value":
//! [`BlockSymbolic`] holds the structure (block sizes, elimination tree, the pattern of `L` and
//! where every block lives), [`BlockLdlt`] the numbers, factored by
//! [`BlockLdlt::factor_in_place`] and applied by [`BlockLdlt::solve_mut`].
//!
//! With a postorder of a tree-shaped pattern this is Baraff's linear-time block-tree
//! factorization (no fill); with the banded order of a ladder it is the `O(N)` factorization of
//! Featherstone 8.13. The kernel is right-looking by block columns:
//!
//! ```text
//! for j in order:   A_jj = L_jj D_j L_jj^T                  (scalar LDL^T of the block)
//!                   W_ij = A_ij L_jj^-T       for i in pattern(j)
//!                   A_ik -= W_ij D_j^-1 W_kj^T for i >= k in pattern(j)
//!                   L_ij = W_ij D_j^-1
//! ```

use super::etree::{check_pattern, etree, symbolic};
use super::{Counter, OpCount};
use crate::error::{check_vector, Error, Result};
use nalgebra::{DMatrix, DVector};

/// The structure of a block `L D L^T`: block sizes, the block elimination tree, the block
/// pattern of `L` and the storage offsets. Built once per pattern and ordering.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockSymbolic {
    /// Size of every block row / column.
    pub sizes: Vec<usize>,
    /// Scalar index of the first row of every block (length `nblocks + 1`).
    pub offsets: Vec<usize>,
    /// The block elimination tree (`None` at a root).
    pub parent: Vec<Option<usize>>,
    /// For every block column j, the block rows `i > j` of `L` (sorted): the pattern of A plus
    /// the fill.
    pub pattern: Vec<Vec<usize>>,
    /// Whether block `(pattern[j][k], j)` is in A's own pattern (false: fill).
    pub in_a: Vec<Vec<bool>>,
    /// Storage offset of the diagonal block of column j (column-major, `s_j x s_j`).
    pub diag_at: Vec<usize>,
    /// Storage offset of block `(pattern[j][k], j)` (column-major, `s_i x s_j`).
    pub off_at: Vec<Vec<usize>>,
    /// Number of stored numbers.
    pub len: usize,
}

impl BlockSymbolic {
    /// The structure for block sizes `sizes` and the symmetric block pattern `adj` (`adj[i]`:
    /// the blocks `j != i` with `A_ij != 0`). Fails on a malformed pattern or a zero size.
    pub fn new(sizes: &[usize], adj: &[Vec<usize>]) -> Result<Self> {
        if sizes.len() != adj.len() {
            return Err(Error::BadLength {
                what: "block sizes".into(),
                got: sizes.len(),
                expected: adj.len(),
            });
        }
        if let Some(i) = sizes.iter().position(|&s| s == 0) {
            return Err(Error::BadPattern {
                node: i,
                why: "block of size 0".into(),
            });
        }
        check_pattern(adj)?;
        let parent = etree(adj);
        let pattern = symbolic(adj, &parent);
        let mut offsets = vec![0; sizes.len() + 1];
        for (i, s) in sizes.iter().enumerate() {
            offsets[i + 1] = offsets[i] + s;
        }
        let mut len = 0;
        let mut diag_at = Vec::with_capacity(sizes.len());
        let mut off_at = Vec::with_capacity(sizes.len());
        let mut in_a = Vec::with_capacity(sizes.len());
        for (j, col) in pattern.iter().enumerate() {
            diag_at.push(len);
            len += sizes[j] * sizes[j];
            let mut at = Vec::with_capacity(col.len());
            for &i in col {
                at.push(len);
                len += sizes[i] * sizes[j];
            }
            off_at.push(at);
            in_a.push(col.iter().map(|i| adj[j].contains(i)).collect());
        }
        Ok(BlockSymbolic {
            sizes: sizes.to_vec(),
            offsets,
            parent,
            pattern,
            in_a,
            diag_at,
            off_at,
            len,
        })
    }

    /// Number of blocks.
    pub fn nblocks(&self) -> usize {
        self.sizes.len()
    }

    /// Scalar dimension.
    pub fn n(&self) -> usize {
        self.offsets[self.sizes.len()]
    }

    /// Storage offset of block `(i, j)`, `i >= j`, if it is in the pattern of `L`.
    pub fn find(&self, i: usize, j: usize) -> Option<usize> {
        if i == j {
            return Some(self.diag_at[j]);
        }
        self.pattern[j].binary_search(&i).ok().map(|k| self.off_at[j][k])
    }

    /// Number of fill blocks (blocks of `L` that are zero in `A`).
    pub fn fill_blocks(&self) -> usize {
        self.in_a.iter().flatten().filter(|x| !**x).count()
    }

    // ANCHOR: sym_mul
    /// `y = A x` for a symmetric `A` whose lower block triangle is stored in `values` in this
    /// layout (as [`BlockLdlt::load_dense`] or an assembly leaves it, before factoring): every
    /// stored block `(i, j)` acts as itself and, off the diagonal, as its transpose `(j, i)`.
    /// Only the blocks of `A`'s own pattern are read. Assumes `values.len() == self.len` and
    /// `x`, `y` of length `n`.
    pub fn sym_mul(&self, values: &[f64], x: &[f64], y: &mut [f64], ops: &mut impl Counter) {
        y.fill(0.0);
        for j in 0..self.nblocks() {
            let (oj, sj, dj) = (self.offsets[j], self.sizes[j], self.diag_at[j]);
            for c in 0..sj {
                y[oj + c] += values[dj + c * sj + c] * x[oj + c];
                for r in c + 1..sj {
                    let a = values[dj + c * sj + r];
                    y[oj + r] += a * x[oj + c];
                    y[oj + c] += a * x[oj + r];
                }
            }
            ops.madd(sj * sj);
            for (k, &i) in self.pattern[j].iter().enumerate() {
                if !self.in_a[j][k] {
                    continue;
                }
                let (oi, si, at) = (self.offsets[i], self.sizes[i], self.off_at[j][k]);
                for c in 0..sj {
                    let mut s = 0.0;
                    for r in 0..si {
                        let a = values[at + c * si + r];
                        y[oi + r] += a * x[oj + c];
                        s += a * x[oi + r];
                    }
                    y[oj + c] += s;
                }
                ops.madd(2 * si * sj);
            }
        }
    }
    // ANCHOR_END: sym_mul
}

/// A block `L D L^T` factorization: the [`BlockSymbolic`] structure and one array of numbers
/// that holds `A` (lower triangle, block pattern) before [`BlockLdlt::factor_in_place`] and the
/// unit lower `L` with `D` on the diagonal after it.
#[derive(Clone, Debug)]
pub struct BlockLdlt {
    /// The structure.
    pub symbolic: BlockSymbolic,
    /// The numbers, laid out as [`BlockSymbolic::diag_at`] and [`BlockSymbolic::off_at`] say.
    pub values: Vec<f64>,
}

impl BlockLdlt {
    /// Zero storage for the structure.
    pub fn new(symbolic: BlockSymbolic) -> Self {
        let values = vec![0.0; symbolic.len];
        BlockLdlt { symbolic, values }
    }

    /// Sets every stored number to zero (before assembling the next matrix).
    pub fn clear(&mut self) {
        self.values.fill(0.0);
    }

    /// The stored block `(i, j)`, `i >= j`, column-major `s_i x s_j`, if it is in the pattern.
    pub fn block_mut(&mut self, i: usize, j: usize) -> Option<&mut [f64]> {
        let at = self.symbolic.find(i, j)?;
        let len = self.symbolic.sizes[i] * self.symbolic.sizes[j];
        Some(&mut self.values[at..at + len])
    }

    /// Loads the lower block triangle of a dense symmetric matrix, reading **only** the blocks of
    /// A's pattern (diagonal blocks and the blocks of `adj`); fill blocks are set to zero.
    pub fn load_dense(&mut self, a: &DMatrix<f64>) -> Result<()> {
        let n = self.symbolic.n();
        if a.nrows() != n || a.ncols() != n {
            return Err(Error::BadLength {
                what: "matrix for the block LDL^T (rows)".into(),
                got: a.nrows(),
                expected: n,
            });
        }
        let sym = &self.symbolic;
        for j in 0..sym.nblocks() {
            let (oj, sj) = (sym.offsets[j], sym.sizes[j]);
            let at = sym.diag_at[j];
            for c in 0..sj {
                for r in 0..sj {
                    self.values[at + c * sj + r] = if r >= c { a[(oj + r, oj + c)] } else { 0.0 };
                }
            }
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (oi, si) = (sym.offsets[i], sym.sizes[i]);
                let at = sym.off_at[j][k];
                for c in 0..sj {
                    for r in 0..si {
                        self.values[at + c * si + r] = if sym.in_a[j][k] { a[(oi + r, oj + c)] } else { 0.0 };
                    }
                }
            }
        }
        if let Some((index, &value)) = self.values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::NonFinite {
                what: "block LDL^T input (pattern entries)".into(),
                index,
                value,
            });
        }
        Ok(())
    }

    /// Factors a dense symmetric matrix on the given structure (allocating wrapper of
    /// [`BlockLdlt::load_dense`] and [`BlockLdlt::factor_in_place`]).
    pub fn factor(symbolic: BlockSymbolic, a: &DMatrix<f64>, ops: &mut impl Counter) -> Result<Self> {
        let mut f = BlockLdlt::new(symbolic);
        f.load_dense(a)?;
        f.factor_in_place(ops)?;
        Ok(f)
    }

    // ANCHOR: block_factor
    /// `A = L D L^T` in place, block column by block column (see the module docs), counting the
    /// operations. No pivoting: every pivot must be nonzero, which holds for a KKT matrix
    /// `[M J^T; J 0]` with `M` positive definite and `J` of full rank when every constraint block
    /// comes after a body block it touches. Fails with [`Error::ZeroPivot`] on a pivot below
    /// `eps * max |A_ij|`. The stored values are assumed finite (as [`BlockLdlt::load_dense`]
    /// leaves them).
    pub fn factor_in_place(&mut self, ops: &mut impl Counter) -> Result<()> {
        let scale = self.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let tiny = f64::EPSILON * scale;
        let sym = &self.symbolic;
        let v = &mut self.values;
        for j in 0..sym.nblocks() {
            let sj = sym.sizes[j];
            let dj = sym.diag_at[j];
            // 1. the diagonal block: scalar LDL^T, L below the diagonal, d on it
            for c in 0..sj {
                let d = v[dj + c * sj + c];
                if d.abs() <= tiny {
                    return Err(Error::ZeroPivot {
                        what: "block LDL^T".into(),
                        index: sym.offsets[j] + c,
                        value: d,
                    });
                }
                for r1 in c + 1..sj {
                    let l1 = v[dj + c * sj + r1] / d;
                    ops.div(1);
                    for r2 in r1..sj {
                        v[dj + r1 * sj + r2] -= l1 * v[dj + c * sj + r2];
                        ops.madd(1);
                    }
                    v[dj + c * sj + r1] = l1;
                }
            }
            // 2. W_ij = A_ij L_jj^-T, row by row: w[r][c] -= sum_{k<c} w[r][k] L_jj[c][k]
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (si, at) = (sym.sizes[i], sym.off_at[j][k]);
                for c in 1..sj {
                    for kk in 0..c {
                        let l = v[dj + kk * sj + c];
                        for r in 0..si {
                            v[at + c * si + r] -= v[at + kk * si + r] * l;
                            ops.madd(1);
                        }
                    }
                }
            }
            // 3. the Schur update A_ab -= W_aj D_j^-1 W_bj^T, a >= b in pattern(j)
            let pat = &sym.pattern[j];
            for (kb, &b) in pat.iter().enumerate() {
                let (sb, wb) = (sym.sizes[b], sym.off_at[j][kb]);
                for (ka, &a) in pat.iter().enumerate().skip(kb) {
                    let (sa, wa) = (sym.sizes[a], sym.off_at[j][ka]);
                    // block (a, b) exists: pattern(j) \ {b} is inside pattern(b) (the etree)
                    let target = if a == b {
                        sym.diag_at[b]
                    } else {
                        let pos = sym.pattern[b].binary_search(&a).expect("symbolic fill");
                        sym.off_at[b][pos]
                    };
                    for c in 0..sj {
                        let dinv = 1.0 / v[dj + c * sj + c];
                        for cb in 0..sb {
                            let wbc = v[wb + c * sb + cb] * dinv;
                            let r0 = if a == b { cb } else { 0 };
                            for ra in r0..sa {
                                v[target + cb * sa + ra] -= v[wa + c * sa + ra] * wbc;
                                ops.madd(1);
                            }
                        }
                    }
                }
            }
            // 4. L_ij = W_ij D_j^-1
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (si, at) = (sym.sizes[i], sym.off_at[j][k]);
                for c in 0..sj {
                    let d = v[dj + c * sj + c];
                    for r in 0..si {
                        v[at + c * si + r] /= d;
                        ops.div(1);
                    }
                }
            }
        }
        Ok(())
    }
    // ANCHOR_END: block_factor

    /// Solves `A x = b` with the factors, in place (`x` holds `b` on entry); assumes
    /// [`BlockLdlt::factor_in_place`] succeeded and `x` has length `n`.
    // ANCHOR: block_solve
    pub fn solve_mut(&self, x: &mut [f64], ops: &mut impl Counter) {
        let sym = &self.symbolic;
        let v = &self.values;
        // forward: L z = b
        for j in 0..sym.nblocks() {
            let (oj, sj, dj) = (sym.offsets[j], sym.sizes[j], sym.diag_at[j]);
            for c in 0..sj {
                let xc = x[oj + c];
                for r in c + 1..sj {
                    x[oj + r] -= v[dj + c * sj + r] * xc;
                    ops.madd(1);
                }
            }
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (oi, si, at) = (sym.offsets[i], sym.sizes[i], sym.off_at[j][k]);
                for c in 0..sj {
                    // x_i -= L_ij(:, c) x_j[c]
                    let xc = x[oj + c];
                    let col = &v[at + c * si..at + (c + 1) * si];
                    for (xr, l) in x[oi..oi + si].iter_mut().zip(col) {
                        *xr -= l * xc;
                    }
                    ops.madd(si);
                }
            }
        }
        // D y = z
        for j in 0..sym.nblocks() {
            let (oj, sj, dj) = (sym.offsets[j], sym.sizes[j], sym.diag_at[j]);
            for c in 0..sj {
                x[oj + c] /= v[dj + c * sj + c];
                ops.div(1);
            }
        }
        // backward: L^T x = y
        for j in (0..sym.nblocks()).rev() {
            let (oj, sj, dj) = (sym.offsets[j], sym.sizes[j], sym.diag_at[j]);
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (oi, si, at) = (sym.offsets[i], sym.sizes[i], sym.off_at[j][k]);
                for c in 0..sj {
                    // x_j[c] -= L_ij(:, c) . x_i
                    let col = &v[at + c * si..at + (c + 1) * si];
                    let s: f64 = col.iter().zip(&x[oi..oi + si]).map(|(l, xr)| l * xr).sum();
                    x[oj + c] -= s;
                    ops.madd(si);
                }
            }
            for c in (0..sj).rev() {
                let mut s = 0.0;
                for r in c + 1..sj {
                    s += v[dj + c * sj + r] * x[oj + r];
                    ops.madd(1);
                }
                x[oj + c] -= s;
            }
        }
    }
    // ANCHOR_END: block_solve

    /// `A^-1 b` (allocating wrapper of [`BlockLdlt::solve_mut`], checking `b`).
    pub fn solve(&self, b: &[f64]) -> Result<DVector<f64>> {
        check_vector("b (right-hand side of the block LDL^T)", b, self.symbolic.n())?;
        let mut x = b.to_vec();
        self.solve_mut(&mut x, &mut OpCount::default());
        Ok(DVector::from_vec(x))
    }

    /// The factors as dense matrices: the unit lower triangular `L` and the diagonal `d`.
    pub fn to_dense(&self) -> (DMatrix<f64>, DVector<f64>) {
        let sym = &self.symbolic;
        let n = sym.n();
        let mut l = DMatrix::identity(n, n);
        let mut d = DVector::zeros(n);
        for j in 0..sym.nblocks() {
            let (oj, sj, dj) = (sym.offsets[j], sym.sizes[j], sym.diag_at[j]);
            for c in 0..sj {
                d[oj + c] = self.values[dj + c * sj + c];
                for r in c + 1..sj {
                    l[(oj + r, oj + c)] = self.values[dj + c * sj + r];
                }
            }
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (oi, si, at) = (sym.offsets[i], sym.sizes[i], sym.off_at[j][k]);
                for c in 0..sj {
                    for r in 0..si {
                        l[(oi + r, oj + c)] = self.values[at + c * si + r];
                    }
                }
            }
        }
        (l, d)
    }
}

/// The block pattern of a dense matrix: `adj[i]` lists the blocks `j != i` with a nonzero entry
/// in block `(i, j)` or `(j, i)`.
pub fn block_pattern_of(a: &DMatrix<f64>, sizes: &[usize]) -> Vec<Vec<usize>> {
    let mut offsets = vec![0];
    for s in sizes {
        offsets.push(offsets.last().copied().unwrap_or(0) + s);
    }
    let nb = sizes.len();
    let mut adj = vec![Vec::new(); nb];
    for i in 0..nb {
        for j in 0..nb {
            if i == j {
                continue;
            }
            let nz = (offsets[i]..offsets[i + 1])
                .any(|r| (offsets[j]..offsets[j + 1]).any(|c| a[(r, c)] != 0.0 || a[(c, r)] != 0.0));
            if nz {
                adj[i].push(j);
            }
        }
    }
    adj
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random symmetric quasi-definite matrix on a block path 0 - 1 - 2 - 3 (sizes 2, 1, 3, 2).
    fn example() -> (Vec<usize>, DMatrix<f64>) {
        let sizes = vec![2, 1, 3, 2];
        let n = 8;
        let mut a = DMatrix::zeros(n, n);
        let mut seed = 1u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let offs = [0, 2, 3, 6, 8];
        for b in 0..3 {
            for r in offs[b]..offs[b + 1] {
                for c in offs[b + 1]..offs[b + 2] {
                    let x = rnd();
                    a[(r, c)] = x;
                    a[(c, r)] = x;
                }
            }
        }
        for i in 0..n {
            a[(i, i)] = if i % 3 == 1 { -3.0 } else { 4.0 };
        }
        (sizes, a)
    }

    #[test]
    fn factor_reproduces_the_matrix_and_solves() {
        let (sizes, a) = example();
        let adj = block_pattern_of(&a, &sizes);
        let sym = BlockSymbolic::new(&sizes, &adj).unwrap();
        assert_eq!(sym.fill_blocks(), 0, "a path has no fill");
        let f = BlockLdlt::factor(sym, &a, &mut OpCount::default()).unwrap();
        let (l, d) = f.to_dense();
        let back = &l * DMatrix::from_diagonal(&d) * l.transpose();
        assert!((back - &a).amax() < 1e-13);
        let b: Vec<f64> = (0..8).map(|i| i as f64 - 2.5).collect();
        let x = f.solve(&b).unwrap();
        assert!((&a * x - DVector::from_vec(b)).amax() < 1e-12);
    }

    #[test]
    fn random_patterns_with_fill_solve_like_lu() {
        let mut seed = 7u64;
        let mut rnd = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..20 {
            let nb = 7;
            let sizes: Vec<usize> = (0..nb).map(|_| 1 + (rnd() * 3.0) as usize).collect();
            let mut offs = vec![0];
            for s in &sizes {
                offs.push(offs.last().unwrap() + s);
            }
            let n = offs[nb];
            let mut a = DMatrix::zeros(n, n);
            for i in 0..nb {
                for j in 0..i {
                    if rnd() < 0.35 {
                        for r in offs[i]..offs[i + 1] {
                            for c in offs[j]..offs[j + 1] {
                                let x = rnd() - 0.5;
                                a[(r, c)] = x;
                                a[(c, r)] = x;
                            }
                        }
                    }
                }
                for r in offs[i]..offs[i + 1] {
                    for c in offs[i]..offs[i + 1] {
                        let x = if r == c { 3.0 } else { 0.3 * (rnd() - 0.5) };
                        if r >= c {
                            a[(r, c)] = x;
                            a[(c, r)] = x;
                        }
                    }
                }
            }
            let adj = block_pattern_of(&a, &sizes);
            let sym = BlockSymbolic::new(&sizes, &adj).unwrap();
            let f = BlockLdlt::factor(sym, &a, &mut OpCount::default()).unwrap();
            let (l, d) = f.to_dense();
            let back = &l * DMatrix::from_diagonal(&d) * l.transpose();
            assert!((back - &a).amax() < 1e-12, "fill {}", f.symbolic.fill_blocks());
            let b = DVector::from_fn(n, |i, _| i as f64 - 1.0);
            let x = f.solve(b.as_slice()).unwrap();
            assert!((&a * x - b).amax() < 1e-10);
        }
    }

    #[test]
    fn zero_pivot_is_an_error() {
        let a = DMatrix::from_row_slice(2, 2, &[0.0, 1.0, 1.0, 0.0]);
        let sym = BlockSymbolic::new(&[1, 1], &[vec![1], vec![0]]).unwrap();
        let e = BlockLdlt::factor(sym, &a, &mut OpCount::default()).unwrap_err();
        assert!(matches!(e, Error::ZeroPivot { index: 0, .. }), "{e}");
    }
}
