//! Block multifrontal `L D L^T` without pivoting (Duff and Reid 1983; Liu, "The multifrontal
//! method for sparse matrix solution", SIAM Review 1992; book chapter "Sparse direct solves for
//! SPOOK"). It computes the same factor as the right-looking kernel of [`super::block`], into the
//! same [`BlockLdlt`] value (so the solve and every check are shared), but organises the work by
//! the elimination tree: visiting the nodes in postorder, node `j`'s **front** is the dense
//! matrix on the rows `{j} u pattern(j)`,
//!
//! ```text
//! F_j = [ A_jj  A_Pj^T ]  +  sum over children c of  extend(U_c)
//!       [ A_Pj   0     ]
//! ```
//!
//! with `P = pattern(j)`; eliminating its first block column gives `L_jj`, `D_j`, `L_Pj` and the
//! **update matrix** `U_j = F_PP - L_Pj D_j L_Pj^T`, which waits on a stack until the parent
//! adds it into its own front (the *extend-add*: `pattern(j) \ {parent}` is inside the parent's
//! rows, so every entry has a place). In a postorder the updates a node needs are the top of the
//! stack.
//!
//! Without pivoting the factorization exists when every pivot is nonzero. For a quasi-definite
//! matrix `[[M, G^T], [G, -Sigma]]` with `M` and `Sigma` positive definite it exists in **every**
//! symmetric order (Vanderbei 1995), with positive pivots on the `M` rows and negative ones on the
//! `Sigma` rows: [`Multifrontal::with_signs`] checks exactly that, which is how a singular
//! system (`Sigma = 0` and redundant rows) is reported rather than hidden.

use super::block::{BlockLdlt, BlockSymbolic};
use super::etree::postorder;
use super::{Counter, OpCount};
use crate::error::{check_vector, Error, Result};
use nalgebra::DVector;

/// A pivot `d` is accepted when `|d| > PIVOT_RTOL * max |F(c.., c)|`, the largest entry of its
/// front column at the moment it is eliminated (and it has the expected sign, when one is set).
/// Roundoff leaves a redundant row's pivot near `1e-16` of that scale; a regular one of a
/// quasi-definite matrix is at least `Sigma_ii` or `min eig M_i` away from zero.
pub const PIVOT_RTOL: f64 = 1e-12;

// ANCHOR: plan
/// The multifrontal schedule of a [`BlockSymbolic`]: the postorder, the size of every front, where
/// every child's update lands in its parent's front, and the sizes of the two work buffers
/// (found by running the schedule once without numbers).
#[derive(Clone, Debug, PartialEq)]
pub struct FrontPlan {
    /// A postorder of the block elimination tree (children before parents).
    pub postorder: Vec<usize>,
    /// Number of children of every node in the elimination tree.
    pub nchildren: Vec<usize>,
    /// Block column counts: blocks in column j of `L`, the diagonal block included
    /// (`1 + |pattern(j)|`).
    pub column_counts: Vec<usize>,
    /// Scalar rows of node j's front: `s_j + sum_{i in pattern(j)} s_i`.
    pub front_rows: Vec<usize>,
    /// For a node c with a parent p: for each block `pattern(c)[k]`, the scalar row of p's front
    /// where it starts (`0` for p itself).
    pub rel: Vec<Vec<usize>>,
    /// Largest front (scalar rows).
    pub max_front: usize,
    /// Largest number of `f64` the update stack holds at once.
    pub max_stack: usize,
    /// Largest number of update matrices on the stack at once.
    pub max_depth: usize,
}

impl FrontPlan {
    /// The schedule of `sym` (postorder of its elimination tree, front sizes, relative indices,
    /// buffer sizes).
    pub fn new(sym: &BlockSymbolic) -> Self {
        let nb = sym.nblocks();
        let postorder = postorder(&sym.parent);
        let mut nchildren = vec![0; nb];
        for p in sym.parent.iter().flatten() {
            nchildren[*p] += 1;
        }
        let column_counts: Vec<usize> = sym.pattern.iter().map(|c| 1 + c.len()).collect();
        let front_rows: Vec<usize> = (0..nb)
            .map(|j| sym.sizes[j] + sym.pattern[j].iter().map(|&i| sym.sizes[i]).sum::<usize>())
            .collect();
        let mut rel = vec![Vec::new(); nb];
        for c in 0..nb {
            let Some(p) = sym.parent[c] else { continue };
            // scalar start of every block of p's front
            let mut starts = Vec::with_capacity(sym.pattern[p].len());
            let mut at = sym.sizes[p];
            for &i in &sym.pattern[p] {
                starts.push(at);
                at += sym.sizes[i];
            }
            rel[c] = sym.pattern[c]
                .iter()
                .map(|&i| {
                    if i == p {
                        0
                    } else {
                        // pattern(c) \ {p} is inside pattern(p) (the elimination tree's property)
                        let k = sym.pattern[p].binary_search(&i).unwrap_or(0);
                        starts[k]
                    }
                })
                .collect();
        }
        // run the schedule without numbers: sizes of the stack
        let (mut stack, mut depth, mut max_stack, mut max_depth) = (Vec::new(), 0usize, 0usize, 0usize);
        let mut used = 0usize;
        for &j in &postorder {
            for _ in 0..nchildren[j] {
                used -= stack.pop().unwrap_or(0);
                depth -= 1;
            }
            if sym.parent[j].is_some() {
                let u = front_rows[j] - sym.sizes[j];
                stack.push(u * u);
                used += u * u;
                depth += 1;
                max_stack = max_stack.max(used);
                max_depth = max_depth.max(depth);
            }
        }
        FrontPlan {
            postorder,
            nchildren,
            column_counts,
            max_front: front_rows.iter().copied().max().unwrap_or(0),
            front_rows,
            rel,
            max_stack,
            max_depth,
        }
    }
}
// ANCHOR_END: plan

/// A block multifrontal factorization: the [`BlockLdlt`] value it fills (structure and numbers),
/// its [`FrontPlan`], the expected pivot signs, and the work buffers, allocated once here and
/// reused by every [`Multifrontal::factor_in_place`].
#[derive(Clone, Debug)]
pub struct Multifrontal {
    /// The structure and the numbers: `A`'s lower block triangle before
    /// [`Multifrontal::factor_in_place`], `L` and `D` after it.
    pub ldlt: BlockLdlt,
    /// The schedule.
    pub plan: FrontPlan,
    /// Expected sign of every block's pivots: `1` (positive definite rows, e.g. a body's `M_i`),
    /// `-1` (negative: a constraint group's `-Sigma_i`), `0` (any nonzero).
    pub signs: Vec<i8>,
    front: Vec<f64>,
    stack: Vec<f64>,
    tops: Vec<(usize, usize)>,
    map: Vec<usize>,
}

impl Multifrontal {
    /// Zero numbers and the buffers for `symbolic`; every pivot may have either sign.
    pub fn new(symbolic: BlockSymbolic) -> Self {
        let plan = FrontPlan::new(&symbolic);
        let nb = symbolic.nblocks();
        Multifrontal {
            front: vec![0.0; plan.max_front * plan.max_front],
            stack: Vec::with_capacity(plan.max_stack),
            tops: Vec::with_capacity(plan.max_depth),
            map: vec![0; plan.max_front],
            ldlt: BlockLdlt::new(symbolic),
            plan,
            signs: vec![0; nb],
        }
    }

    /// Sets the expected pivot sign of every block (see [`Multifrontal::signs`]). Errors: a
    /// length other than the number of blocks or an entry outside `{-1, 0, 1}`.
    pub fn with_signs(mut self, signs: &[i8]) -> Result<Self> {
        check_vector(
            "pivot signs",
            &signs.iter().map(|&s| s as f64).collect::<Vec<_>>(),
            self.ldlt.symbolic.nblocks(),
        )?;
        if let Some(k) = signs.iter().position(|s| !(-1..=1).contains(s)) {
            return Err(Error::BadPattern {
                node: k,
                why: format!("pivot sign {} is not -1, 0 or 1", signs[k]),
            });
        }
        self.signs = signs.to_vec();
        Ok(self)
    }

    // ANCHOR: factor
    /// `A = L D L^T` by fronts, in postorder (see the module docs), counting the operations:
    /// for every node j, (1) copy column j of `A` into the front, (2) extend-add the children's
    /// update matrices from the top of the stack, (3) eliminate the first `s_j` columns of the
    /// front (a dense partial `L D L^T`), (4) store `L_jj`, `D_j`, `L_Pj` into the
    /// [`BlockLdlt`] storage and (5) push the update matrix. No allocation: the front, the stack
    /// and the index map were sized by the [`FrontPlan`].
    ///
    /// Errors: [`Error::ZeroPivot`] for a pivot not above [`PIVOT_RTOL`] times its column, or of
    /// the wrong sign (see [`Multifrontal::with_signs`]), naming the scalar row;
    /// [`Error::NonFinite`] when a pivot column holds a NaN or an infinity (non-finite input).
    pub fn factor_in_place(&mut self, ops: &mut impl Counter) -> Result<()> {
        self.factor_impl(None, ops)
    }

    /// [`Multifrontal::factor_in_place`] reading `A` from `a` (laid out as the factor's storage,
    /// [`BlockSymbolic::len`] numbers) instead of from the storage itself, which receives `L`
    /// and `D` and whose previous contents are ignored: the caller keeps `A` (for iterative
    /// refinement) without copying it. Errors: `a` of the wrong length, and those of
    /// [`Multifrontal::factor_in_place`].
    pub fn factor_from(&mut self, a: &[f64], ops: &mut impl Counter) -> Result<()> {
        if a.len() != self.ldlt.values.len() {
            return Err(Error::BadLength {
                what: "matrix values for the multifrontal factorization".into(),
                got: a.len(),
                expected: self.ldlt.values.len(),
            });
        }
        self.factor_impl(Some(a), ops)
    }

    fn factor_impl(&mut self, src: Option<&[f64]>, ops: &mut impl Counter) -> Result<()> {
        let Multifrontal {
            ldlt,
            plan,
            signs,
            front,
            stack,
            tops,
            map,
        } = self;
        let sym = &ldlt.symbolic;
        let v = &mut ldlt.values;
        stack.clear();
        tops.clear();
        for &j in &plan.postorder {
            let (sj, nf, dj) = (sym.sizes[j], plan.front_rows[j], sym.diag_at[j]);
            let f = &mut front[..nf * nf];
            f.fill(0.0);
            // 1. column j of A: the diagonal block and the blocks of A's pattern below it
            let a: &[f64] = src.unwrap_or(v);
            for c in 0..sj {
                f[c * nf + c..c * nf + sj].copy_from_slice(&a[dj + c * sj + c..dj + (c + 1) * sj]);
            }
            let mut row = sj;
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (si, at) = (sym.sizes[i], sym.off_at[j][k]);
                if sym.in_a[j][k] {
                    for c in 0..sj {
                        f[c * nf + row..c * nf + row + si].copy_from_slice(&a[at + c * si..at + (c + 1) * si]);
                    }
                }
                row += si;
            }
            // 2. extend-add of the children's update matrices (the top of the stack)
            let first = tops.len() - plan.nchildren[j];
            for &(start, c) in &tops[first..] {
                let mut u = 0;
                for (k, &i) in sym.pattern[c].iter().enumerate() {
                    for r in 0..sym.sizes[i] {
                        map[u] = plan.rel[c][k] + r;
                        u += 1;
                    }
                }
                let uc = &stack[start..start + u * u];
                for cc in 0..u {
                    let col = map[cc] * nf;
                    for rr in cc..u {
                        f[col + map[rr]] += uc[cc * u + rr];
                    }
                }
            }
            if let Some(&(start, _)) = tops.get(first) {
                stack.truncate(start);
            }
            tops.truncate(first);
            // 3. dense partial L D L^T of the first s_j columns
            for c in 0..sj {
                let col = c * nf;
                let d = f[col + c];
                let scale = f[col + c..col + nf].iter().fold(0.0f64, |m, x| m.max(x.abs()));
                let sign = signs[j];
                if !(d.is_finite() && scale.is_finite()) {
                    return Err(Error::NonFinite {
                        what: format!("block multifrontal LDL^T pivot column (block {j})"),
                        index: sym.offsets[j] + c,
                        value: d,
                    });
                }
                if !(d.abs() > PIVOT_RTOL * scale) || (sign != 0 && d * sign as f64 <= 0.0) {
                    return Err(Error::ZeroPivot {
                        what: if sign == 0 {
                            "block multifrontal LDL^T".into()
                        } else {
                            format!("block multifrontal LDL^T (block {j}, expected sign {sign})")
                        },
                        index: sym.offsets[j] + c,
                        value: d,
                    });
                }
                let dinv = 1.0 / d;
                ops.div(1);
                for r in c + 1..nf {
                    let l = f[col + r] * dinv;
                    let (head, tail) = f.split_at_mut(r * nf);
                    let wcol = &head[col..col + nf];
                    let target = &mut tail[..nf];
                    for r2 in r..nf {
                        target[r2] -= l * wcol[r2];
                    }
                    ops.madd(nf - r);
                }
                for x in &mut f[col + c + 1..col + nf] {
                    *x *= dinv;
                }
                ops.mul(nf - c - 1);
            }
            // 4. store L_jj (unit, strict lower), D_j (diagonal) and L_Pj
            for c in 0..sj {
                v[dj + c * sj + c..dj + (c + 1) * sj].copy_from_slice(&f[c * nf + c..c * nf + sj]);
            }
            let mut row = sj;
            for (k, &i) in sym.pattern[j].iter().enumerate() {
                let (si, at) = (sym.sizes[i], sym.off_at[j][k]);
                for c in 0..sj {
                    v[at + c * si..at + (c + 1) * si].copy_from_slice(&f[c * nf + row..c * nf + row + si]);
                }
                row += si;
            }
            // 5. the update matrix U_j = F_PP - L_Pj D_j L_Pj^T waits for the parent
            if sym.parent[j].is_some() {
                let u = nf - sj;
                let start = stack.len();
                for cc in 0..u {
                    stack.extend_from_slice(&f[(sj + cc) * nf + sj..(sj + cc + 1) * nf]);
                }
                tops.push((start, j));
            }
        }
        Ok(())
    }
    // ANCHOR_END: factor

    /// Solves `A x = b` in place with the factor (the block solve of [`BlockLdlt::solve_mut`]);
    /// assumes [`Multifrontal::factor_in_place`] succeeded and `x` has length `n`.
    pub fn solve_mut(&self, x: &mut [f64], ops: &mut impl Counter) {
        self.ldlt.solve_mut(x, ops);
    }

    /// `A^-1 b` (allocating, checking `b`).
    pub fn solve(&self, b: &[f64]) -> Result<DVector<f64>> {
        check_vector(
            "b (right-hand side of the multifrontal LDL^T)",
            b,
            self.ldlt.symbolic.n(),
        )?;
        let mut x = b.to_vec();
        self.solve_mut(&mut x, &mut OpCount::default());
        crate::error::check_output("x (multifrontal solve)", &x)?;
        Ok(DVector::from_vec(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sparse::block::block_pattern_of;
    use nalgebra::DMatrix;

    /// A random quasi-definite matrix on a random block pattern (sizes 1..3).
    fn random_quasi_definite(nb: usize, density: f64, seed: u64) -> (Vec<usize>, Vec<i8>, DMatrix<f64>) {
        let mut s = seed;
        let mut rnd = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let sizes: Vec<usize> = (0..nb).map(|_| 1 + (rnd() * 3.0) as usize).collect();
        let signs: Vec<i8> = (0..nb).map(|_| if rnd() < 0.5 { 1 } else { -1 }).collect();
        let mut offs = vec![0];
        for s in &sizes {
            offs.push(offs.last().unwrap() + s);
        }
        let n = offs[nb];
        let mut a = DMatrix::zeros(n, n);
        for i in 0..nb {
            for j in 0..i {
                if rnd() < density {
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
                a[(r, r)] = signs[i] as f64 * (1.0 + rnd());
            }
        }
        (sizes, signs, a)
    }

    #[test]
    fn multifrontal_equals_right_looking_and_dense() {
        for seed in 0..30 {
            let (sizes, signs, a) = random_quasi_definite(9, 0.3, seed);
            let adj = block_pattern_of(&a, &sizes);
            let sym = BlockSymbolic::new(&sizes, &adj).unwrap();
            let mut right = BlockLdlt::new(sym.clone());
            right.load_dense(&a).unwrap();
            let mut ops_r = OpCount::default();
            right.factor_in_place(&mut ops_r).unwrap();
            let mut mf = Multifrontal::new(sym).with_signs(&signs).unwrap();
            mf.ldlt.load_dense(&a).unwrap();
            let mut ops_m = OpCount::default();
            mf.factor_in_place(&mut ops_m).unwrap();
            let (l1, d1) = right.to_dense();
            let (l2, d2) = mf.ldlt.to_dense();
            assert!((&l1 - &l2).amax() < 1e-10 && (&d1 - &d2).amax() < 1e-10, "seed {seed}");
            let back = &l2 * DMatrix::from_diagonal(&d2) * l2.transpose();
            assert!((back - &a).amax() < 1e-12);
            let b = DVector::from_fn(a.nrows(), |i, _| (i as f64).sin());
            let x = mf.solve(b.as_slice()).unwrap();
            let x_ref = a.clone().lu().solve(&b).unwrap();
            assert!((x - x_ref).amax() < 1e-10);
        }
    }

    #[test]
    fn a_nan_is_reported_as_non_finite() {
        let (sizes, signs, a) = random_quasi_definite(5, 0.4, 3);
        let adj = block_pattern_of(&a, &sizes);
        let sym = BlockSymbolic::new(&sizes, &adj).unwrap();
        let mut mf = Multifrontal::new(sym).with_signs(&signs).unwrap();
        let mut values = vec![0.0; mf.ldlt.values.len()];
        mf.ldlt.load_dense(&a).unwrap();
        values.copy_from_slice(&mf.ldlt.values);
        values[0] = f64::NAN;
        let e = mf.factor_from(&values, &mut OpCount::default()).unwrap_err();
        assert!(matches!(e, Error::NonFinite { .. }), "{e}");
        let e = mf.factor_from(&values[1..], &mut OpCount::default()).unwrap_err();
        assert!(matches!(e, Error::BadLength { .. }), "{e}");
    }

    #[test]
    fn a_redundant_row_is_a_zero_pivot() {
        // [[1, 0, 1, 1], [0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]]: rows 2 and 3 repeat one
        // constraint on variable 0 with Sigma = 0
        let mut a = DMatrix::zeros(4, 4);
        a[(0, 0)] = 1.0;
        a[(1, 1)] = 1.0;
        for r in [2, 3] {
            a[(r, 0)] = 1.0;
            a[(0, r)] = 1.0;
        }
        let sizes = [2, 1, 1];
        let adj = block_pattern_of(&a, &sizes);
        let sym = BlockSymbolic::new(&sizes, &adj).unwrap();
        let mut mf = Multifrontal::new(sym).with_signs(&[1, -1, -1]).unwrap();
        mf.ldlt.load_dense(&a).unwrap();
        let e = mf.factor_in_place(&mut OpCount::default()).unwrap_err();
        assert!(matches!(e, Error::ZeroPivot { index: 3, .. }), "{e}");
    }
}
