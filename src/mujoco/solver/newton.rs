//! The Hessian of MuJoCo's `mj_solNewton` (`MakeHessian`, `HessianCone`):
//! `H = M + J^T diag(D_i [state_i = QUADRATIC]) J + sum_cones J_c^T H_c J_c`, assembled dense
//! and Cholesky-factored at every iteration (MuJoCo updates its sparse factor by rank-1 steps for
//! the rows whose state changed; the Hessian, and so every iterate, is the same). Book:
//! "Solvers", section "Newton's method".

use super::super::constraint::{Efc, EfcState, SparseRows};
use super::cost::Cone;
use crate::error::{Error, Result};
use nalgebra::DMatrix;

// ANCHOR: make_hessian
/// Writes the lower triangle of `H` into `h` (nv x nv): `m_dense` plus `D_i J_i^T J_i` for every
/// row in the quadratic state (an elliptic contact in the bottom zone counts as quadratic in all
/// its rows), plus `J_c^T H_c J_c` for every cone in the middle zone (`hcone`, from
/// [`super::cost::update`]). Inputs assumed valid; allocates nothing.
pub fn make_hessian(
    m_dense: &DMatrix<f64>,
    efc: &Efc,
    cones: &[Cone],
    state: &[EfcState],
    hcone: &[[f64; 36]],
    h: &mut DMatrix<f64>,
) {
    let nv = m_dense.nrows();
    h.copy_from(m_dense);
    let j = &efc.j;
    for i in 0..efc.nefc() {
        if state[i] != EfcState::Quadratic {
            continue;
        }
        let d = efc.d[i];
        for a in 0..nv {
            let dja = d * j[(i, a)];
            if dja == 0.0 {
                continue;
            }
            for b in 0..=a {
                h[(a, b)] += dja * j[(i, b)];
            }
        }
    }
    for (k, c) in cones.iter().enumerate() {
        if state[c.row] != EfcState::Cone {
            continue;
        }
        let (r0, dim, hc) = (c.row, c.dim, &hcone[k]);
        for a in 0..nv {
            // w = (J_c^T H_c)_a, one entry per cone row
            let mut w = [0.0; 6];
            for (s, ws) in w.iter_mut().enumerate().take(dim) {
                for t in 0..dim {
                    *ws += j[(r0 + t, a)] * hc[t * dim + s];
                }
            }
            for b in 0..=a {
                let mut acc = 0.0;
                for (s, ws) in w.iter().enumerate().take(dim) {
                    acc += ws * j[(r0 + s, b)];
                }
                h[(a, b)] += acc;
            }
        }
    }
}
// ANCHOR_END: make_hessian

// ANCHOR: hessian_profile
/// The Newton Hessian `H = M + J^T D J + sum_cones J_c^T H_c J_c` in profile (envelope)
/// storage: row `a` of the lower triangle is kept densely from its first nonzero column
/// `first[a]` to the diagonal. `M`'s pattern is that of the dof tree (a dof couples with its
/// ancestors), and an active row adds the square of its own columns, so `first[a]` is the
/// smallest column that `a` meets in `M` or in an active row. A Cholesky factor fills in only
/// inside the envelope (a zero ahead of a row's first entry stays zero), so the factor
/// [`Hessian::factor`] writes over `H` in place, at a cost of `sum_a (a - first[a])^2 / 2`
/// instead of the dense `nv^3 / 6`: on a stack of free boxes, whose contacts couple only
/// neighbours, a band.
///
/// This is the role of MuJoCo's sparse `H` with its `mju_cholFactorSparse` (`mj_solNewton`
/// with `mj_isSparse`); the profile form, simpler to read, gives the same numbers to rounding.
/// Storage is row-major `nv x nv`, sized once and reused.
#[derive(Clone, Debug, Default)]
pub struct Hessian {
    /// Number of dofs.
    pub nv: usize,
    /// Row-major `nv x nv`; the lower triangle from `first[a]` is used.
    pub h: Vec<f64>,
    /// First stored column of each row.
    pub first: Vec<usize>,
}

impl Hessian {
    /// Storage for `nv` dofs.
    pub fn new(nv: usize) -> Self {
        Hessian {
            nv,
            h: vec![0.0; nv * nv],
            first: (0..nv).collect(),
        }
    }

    /// `H[a][b]`, `b <= a`, for tests.
    pub fn get(&self, a: usize, b: usize) -> f64 {
        if b < self.first[a] {
            0.0
        } else {
            self.h[a * self.nv + b]
        }
    }

    /// Assembles `H` (the lower triangle within the envelope) from `M` in the legacy layout
    /// (`qm`), the sparse rows `jac` of `efc` and the states; `hcone` from
    /// [`super::cost::update`]. Inputs assumed valid; allocates nothing.
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        &mut self,
        layout: &crate::sparse::MjLayout,
        qm: &[f64],
        jac: &SparseRows,
        efc: &Efc,
        cones: &[Cone],
        state: &[EfcState],
        hcone: &[[f64; 36]],
    ) {
        let nv = self.nv;
        // the envelope: M's ancestors, then each active row's first column
        for a in 0..nv {
            let (adr, depth) = (layout.dof_madr[a], layout.dof_depth[a]);
            self.first[a] = layout.col[adr..adr + depth + 1].iter().copied().min().unwrap_or(a);
        }
        let widen = |cols: &[usize], first: &mut [usize]| {
            if let Some(&c0) = cols.first() {
                for &a in cols {
                    first[a] = first[a].min(c0);
                }
            }
        };
        for i in 0..efc.nefc() {
            if state[i] == EfcState::Quadratic {
                widen(jac.row(i).0, &mut self.first);
            }
        }
        for c in cones {
            if state[c.row] == EfcState::Cone {
                let c0 = (c.row..c.row + c.dim)
                    .filter_map(|r| jac.row(r).0.first().copied())
                    .min();
                if let Some(c0) = c0 {
                    for r in c.row..c.row + c.dim {
                        for &a in jac.row(r).0 {
                            self.first[a] = self.first[a].min(c0);
                        }
                    }
                }
            }
        }
        // H = M within the envelope
        for a in 0..nv {
            self.h[a * nv + self.first[a]..=a * nv + a].fill(0.0);
            let adr = layout.dof_madr[a];
            for t in 0..=layout.dof_depth[a] {
                self.h[a * nv + layout.col[adr + t]] = qm[adr + t];
            }
        }
        // + D_i J_i^T J_i over the quadratic rows: the square of the row's columns
        for i in 0..efc.nefc() {
            if state[i] != EfcState::Quadratic {
                continue;
            }
            let d = efc.d[i];
            let (cols, vals) = jac.row(i);
            for (p, (&a, &va)) in cols.iter().zip(vals).enumerate() {
                let dva = d * va;
                let row = &mut self.h[a * nv..];
                for (&b, &vb) in cols[..=p].iter().zip(&vals[..=p]) {
                    row[b] += dva * vb;
                }
            }
        }
        // + J_c^T H_c J_c over the cones in the middle zone
        for (k, c) in cones.iter().enumerate() {
            if state[c.row] != EfcState::Cone {
                continue;
            }
            let (r0, dim, hc) = (c.row, c.dim, &hcone[k]);
            for s in 0..dim {
                let (cs, vs) = jac.row(r0 + s);
                for t in 0..dim {
                    let hst = hc[s * dim + t];
                    let (ct, vt) = jac.row(r0 + t);
                    for (&a, &va) in cs.iter().zip(vs) {
                        let w = hst * va;
                        let row = &mut self.h[a * nv..];
                        for (&b, &vb) in ct.iter().zip(vt) {
                            if b > a {
                                break;
                            }
                            row[b] += w * vb;
                        }
                    }
                }
            }
        }
    }

    /// Cholesky `H = L L^T` in place within the envelope (row by row: `L_ab = (H_ab - sum_k
    /// L_ak L_bk) / L_bb`, the sum from `max(first[a], first[b])`). Fails with
    /// [`Error::PivotNotPositive`] naming the row whose pivot is not positive.
    pub fn factor(&mut self) -> Result<()> {
        let nv = self.nv;
        for a in 0..nv {
            let fa = self.first[a];
            for b in fa..=a {
                let k0 = fa.max(self.first[b]);
                let mut s = self.h[a * nv + b];
                let (ra, rb) = (&self.h[a * nv + k0..a * nv + b], &self.h[b * nv + k0..b * nv + b]);
                for (x, y) in ra.iter().zip(rb) {
                    s -= x * y;
                }
                if b < a {
                    self.h[a * nv + b] = s / self.h[b * nv + b];
                } else {
                    if !(s > 0.0 && s.is_finite()) {
                        return Err(Error::PivotNotPositive {
                            matrix: "Newton Hessian H = M + J^T D J".into(),
                            row: a,
                            pivot: s,
                        });
                    }
                    self.h[a * nv + a] = s.sqrt();
                }
            }
        }
        Ok(())
    }

    /// `x <- H^-1 x` with the factor of [`Hessian::factor`]: `L y = x` forward, `L^T x = y`
    /// backward, each over the envelope.
    pub fn solve(&self, x: &mut [f64]) {
        let nv = self.nv;
        for a in 0..nv {
            let fa = self.first[a];
            let row = &self.h[a * nv + fa..a * nv + a];
            let s: f64 = row.iter().zip(&x[fa..a]).map(|(l, y)| l * y).sum();
            x[a] = (x[a] - s) / self.h[a * nv + a];
        }
        for a in (0..nv).rev() {
            x[a] /= self.h[a * nv + a];
            let xa = x[a];
            let fa = self.first[a];
            for (xb, l) in x[fa..a].iter_mut().zip(&self.h[a * nv + fa..a * nv + a]) {
                *xb -= l * xa;
            }
        }
    }
}
// ANCHOR_END: hessian_profile
