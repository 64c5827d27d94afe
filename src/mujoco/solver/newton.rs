//! The Hessian of MuJoCo's `mj_solNewton` (`MakeHessian`, `HessianCone`):
//! `H = M + J^T diag(D_i [state_i = QUADRATIC]) J + sum_cones J_c^T H_c J_c`, assembled dense
//! and Cholesky-factored ([`make_hessian`], the reference), or in profile storage with its factor
//! kept between iterations by rank-one updates of the rows whose state changed ([`Hessian`], what
//! the solver runs, as MuJoCo's `HessianIncremental`). Book: "Solvers", section "Newton's method".

use super::super::constraint::{Efc, EfcState, EfcType, SparseRows};
use super::cost::Cone;
use super::primal::RowBlocks;
use crate::error::{Error, Result};
use crate::model::constants::mjMINVAL;
use crate::sparse::MjLayout;
use nalgebra::DMatrix;

// ANCHOR: make_hessian
/// Writes the lower triangle of `H` into `h` (nv x nv): `m_dense` plus `D_i J_i^T J_i` (`j` the
/// dense `efc_J` of `efc`, [`Efc::dense_j`]) for every
/// row in the quadratic state (an elliptic contact in the bottom zone counts as quadratic in all
/// its rows), plus `J_c^T H_c J_c` for every cone in the middle zone (`hcone`, from
/// [`super::cost::update`]). Inputs assumed valid; allocates nothing.
pub fn make_hessian(
    m_dense: &DMatrix<f64>,
    j: &DMatrix<f64>,
    efc: &Efc,
    cones: &[Cone],
    state: &[EfcState],
    hcone: &[[f64; 36]],
    h: &mut DMatrix<f64>,
) {
    let nv = m_dense.nrows();
    h.copy_from(m_dense);
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
/// storage, with its Cholesky factor kept up to date between iterations.
///
/// `M`'s pattern is that of the dof tree (a dof couples with its ancestors), and a row of `J`
/// adds the square of its own columns, so row `a` of the lower triangle starts at `first[a]`,
/// the smallest column that `a` meets in `M` or in a row. A Cholesky factor fills in only
/// inside this envelope (a zero ahead of a row's first entry stays zero), and so does a
/// rank-one update by a row of `J`. The solver sets the envelope once per solve from *every*
/// row ([`Hessian::start`]), so that any set of active rows, and every update below, fits in
/// it; the factor then costs about `sum_a (a - first[a])^2 / 2` instead of the dense `nv^3 / 6`:
/// on a stack of free boxes, whose contacts couple only neighbours, a band.
///
/// The matrices are stored by *columns* of the lower triangle: column `k` (`L_ik`, `i >= k`)
/// lies contiguously from the diagonal down to `last[k]`, the last row whose envelope reaches
/// column `k` (entries of rows in between that start right of `k` are kept at zero). Every
/// kernel then runs down whole columns: the factor adds multiples of earlier columns into the
/// next one (four at a time), a rank-one update rotates a column and the update vector
/// together, the forward solve subtracts columns from the right-hand side and the backward one
/// takes dot products down them: contiguous streams of multiply-adds, without a test per entry.
///
/// Two matrices are kept: `hq`, the assembled `M + J^T D J` of the quadratic rows (no cones),
/// and `h`, the factor `L` (`H = L L^T`) the solves use. Between iterations
/// ([`Hessian::update`], MuJoCo's `HessianIncremental`) only the rows whose state changed are
/// added to or taken from `hq`, and the factor is
/// - kept as it is when no row changed and no cone is in its middle zone (a Newton step that
///   found the right active set changes nothing);
/// - updated by one rank-one step `L L^T +- (sqrt(D_i) J_i)(sqrt(D_i) J_i)^T` per changed row
///   ([`Hessian::rank_one`], MuJoCo's `mju_cholUpdate`), when that costs less than a new factor;
/// - else refactored from `hq` plus the cone terms (the cone Hessians move with every step).
///
/// This is the role of MuJoCo's `H` with `mju_cholFactor` (dense below 60 dofs) or
/// `mju_cholFactorSparse` and its rank-one updates (`mj_solNewton`); the profile form gives the
/// same numbers to rounding. Storage is `nv x nv`, sized once and reused.
#[derive(Clone, Debug, Default)]
pub struct Hessian {
    /// Number of dofs.
    pub nv: usize,
    /// `H`, or after [`Hessian::factor`] its factor `L`, by columns: `L_ik` (`i >= k`) at
    /// `h[k nv + i]`, for `i` from `k` to `last[k]`.
    pub h: Vec<f64>,
    /// First column of each row's envelope.
    pub first: Vec<usize>,
    /// Last row of each column's envelope.
    pub last: Vec<usize>,
    /// `M + J^T D J` over the quadratic rows, within the envelope (no cones), stored as `h`.
    hq: Vec<f64>,
    /// `1 / L_kk` of the factor (nv).
    dinv: Vec<f64>,
    /// A block's `k x k` square (`k` columns), of which the lower triangle is scattered.
    tri: Vec<f64>,
    /// `k` zeros: the row of a group of four past its block's end.
    zero: Vec<f64>,
    /// A cone's `H_c J_c` (`dim x k`).
    hj: Vec<f64>,
    /// The rank-one vector (nv).
    upd: Vec<f64>,
    /// `below[c]`: the entries of the columns `>= c` (diagonal to `last`), what a rank-one
    /// update from column `c` visits.
    below: Vec<usize>,
    /// The rows whose quadratic state changed in [`Hessian::update`] (scratch).
    changed: Vec<usize>,
    /// Multiply-adds of a factorization within the envelope.
    factor_cost: usize,
    /// Whether `h` holds cone terms.
    with_cones: bool,
}

/// Whether a row adds `D_i J_i^T J_i` to `H` (an elliptic contact in the bottom zone counts as
/// quadratic in all its rows).
fn quadratic(s: EfcState) -> bool {
    s == EfcState::Quadratic
}

impl Hessian {
    /// Storage for `nv` dofs.
    pub fn new(nv: usize) -> Self {
        let mut h = Hessian::default();
        h.resize(nv);
        h
    }

    /// Sizes the storage for `nv` dofs (no allocation when `nv` is unchanged).
    pub fn resize(&mut self, nv: usize) {
        if self.nv != nv || self.h.len() != nv * nv {
            self.nv = nv;
            self.h = vec![0.0; nv * nv];
            self.hq = vec![0.0; nv * nv];
            self.first = (0..nv).collect();
            self.last = (0..nv).collect();
            self.dinv = vec![0.0; nv];
            self.upd = vec![0.0; nv];
            self.below = vec![0; nv + 1];
        }
    }

    /// `H[a][b]`, `b <= a`, for tests (the factor's entry after [`Hessian::factor`]).
    pub fn get(&self, a: usize, b: usize) -> f64 {
        if b < self.first[a] {
            0.0
        } else {
            self.h[b * self.nv + a]
        }
    }

    /// The envelope of `M` (legacy layout) and of the rows `keep` accepts: a block with such a
    /// row widens the rows of its columns to its first column (an elliptic cone's rows, which
    /// couple with each other, lie in one block). Then the columns' `last` rows and the cost
    /// model of [`Hessian::update`].
    fn set_envelope(&mut self, layout: &MjLayout, blocks: &RowBlocks, keep: impl Fn(usize) -> bool) {
        let nv = self.nv;
        for a in 0..nv {
            let (adr, depth) = (layout.dof_madr[a], layout.dof_depth[a]);
            self.first[a] = layout.col[adr..adr + depth + 1].iter().copied().min().unwrap_or(a);
        }
        for b in 0..blocks.len() {
            let (rows, cols, _) = blocks.block(b);
            if let (true, Some(&c0)) = (rows.into_iter().any(&keep), cols.first()) {
                for &a in cols {
                    self.first[a] = self.first[a].min(c0);
                }
            }
        }
        // the factor's storage is zero outside the envelope (past a column's last row too) and
        // is written only inside it, so the kernels may run over whole column ranges
        self.h.fill(0.0);
        // last[k]: the largest row a with first[a] <= k (rows are visited in increasing order,
        // so the last to reach a column stays)
        self.last.clear();
        self.last.extend(0..nv);
        for a in 0..nv {
            let fa = self.first[a];
            self.last[fa..a].fill(a);
        }
        self.below[nv] = 0;
        for k in (0..nv).rev() {
            self.below[k] = self.below[k + 1] + self.last[k] + 1 - k;
        }
        // the factor's multiply-adds: column k receives each column j of row k's envelope
        // over rows k ..= last[k] (column j reaches that far, or is zero there)
        self.factor_cost = 0;
        for k in 0..nv {
            self.factor_cost += (k - self.first[k] + 1) * (self.last[k] + 1 - k);
        }
    }

    /// `hq = M + sum_{quadratic i} D_i J_i^T J_i` within the envelope, block by block: the rows
    /// of a block share their `k` columns, so their products are summed in a small dense
    /// `k x k` square and its lower triangle is added into `hq` once per block.
    fn assemble_quadratic(&mut self, layout: &MjLayout, qm: &[f64], blocks: &RowBlocks, efc: &Efc, state: &[EfcState]) {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.assemble_quadratic_body(layout, qm, blocks, efc, state),
        )
    }

    /// The body of [`Self::assemble_quadratic`], compiled for AVX where the processor has it.
    /// The square is summed four rows at a time: row `p` of the square gains
    /// `sum_r (D_r J_rp) J_r` over the group's rows `r` in one pass along the row (a row not
    /// quadratic, or past the block's end, counts as `D_r = 0`); a lone row (a limit, a
    /// frictionless contact) is added directly ([`Self::add_row`]).
    #[inline(always)]
    fn assemble_quadratic_body(
        &mut self,
        layout: &MjLayout,
        qm: &[f64],
        blocks: &RowBlocks,
        efc: &Efc,
        state: &[EfcState],
    ) {
        let nv = self.nv;
        for k in 0..nv {
            self.hq[k * nv + k..=k * nv + self.last[k]].fill(0.0);
        }
        for a in 0..nv {
            let adr = layout.dof_madr[a];
            for t in 0..=layout.dof_depth[a] {
                self.hq[layout.col[adr + t] * nv + a] = qm[adr + t];
            }
        }
        for b in 0..blocks.len() {
            let (rows, cols, vals) = blocks.block(b);
            let k = cols.len();
            if k == 0 || !rows.clone().any(|i| quadratic(state[i])) {
                continue;
            }
            if rows.len() == 1 {
                self.add_row(&efc.j, efc, rows.start, 1.0);
                continue;
            }
            self.tri.clear();
            self.tri.resize(k * k, 0.0);
            self.zero.clear();
            self.zero.resize(k, 0.0);
            for g in rows.clone().step_by(4) {
                let row = |l: usize| {
                    let i = g + l;
                    if i < rows.end && quadratic(state[i]) {
                        (efc.d[i], &vals[(i - rows.start) * k..(i - rows.start + 1) * k])
                    } else {
                        (0.0, &self.zero[..])
                    }
                };
                let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
                if [r0.0, r1.0, r2.0, r3.0] == [0.0; 4] {
                    continue;
                }
                for (p, tp) in self.tri.chunks_exact_mut(k).enumerate() {
                    let a = [r0.0 * r0.1[p], r1.0 * r1.1[p], r2.0 * r2.1[p], r3.0 * r3.1[p]];
                    add_four(tp, a, [r0.1, r1.1, r2.1, r3.1]);
                }
            }
            // the lower triangle: entry (p, q), q <= p, to column cols[q], row cols[p]
            for (q, &cq) in cols.iter().enumerate() {
                let col = &mut self.hq[cq * nv..(cq + 1) * nv];
                for (p, &cp) in cols.iter().enumerate().skip(q) {
                    col[cp] += self.tri[p * k + q];
                }
            }
        }
    }

    /// `h = hq + sum_{cones in the middle zone} J_c^T H_c J_c`, then [`Hessian::factor`].
    fn refactor(&mut self, blocks: &RowBlocks, cones: &[Cone], state: &[EfcState], hcone: &[[f64; 36]]) -> Result<()> {
        self.add_cones(blocks, cones, state, hcone);
        self.factor()
    }

    /// `h = hq + sum_{cones in the middle zone} J_c^T H_c J_c` (unfactored). A cone's rows lie
    /// in one block: with `hj = H_c J_c` (`dim x k`), `J_c^T H_c J_c = sum_s J_s^T hj_s`, summed
    /// in a packed square and its lower triangle scattered once.
    fn add_cones(&mut self, blocks: &RowBlocks, cones: &[Cone], state: &[EfcState], hcone: &[[f64; 36]]) {
        let nv = self.nv;
        for k in 0..nv {
            let range = k * nv + k..=k * nv + self.last[k];
            self.h[range.clone()].copy_from_slice(&self.hq[range]);
        }
        self.with_cones = false;
        for (c, hc) in cones.iter().zip(hcone) {
            if state[c.row] != EfcState::Cone {
                continue;
            }
            self.with_cones = true;
            let b = blocks.start.partition_point(|&s| s <= c.row) - 1;
            let (rows, cols, vals) = blocks.block(b);
            let (k, dim) = (cols.len(), c.dim);
            if k == 0 {
                continue;
            }
            let jc = &vals[(c.row - rows.start) * k..(c.row - rows.start + dim) * k];
            self.hj.clear();
            self.hj.resize(dim * k, 0.0);
            for s in 0..dim {
                for t in 0..dim {
                    let hst = hc[s * dim + t];
                    for (x, v) in self.hj[s * k..(s + 1) * k].iter_mut().zip(&jc[t * k..(t + 1) * k]) {
                        *x += hst * v;
                    }
                }
            }
            self.tri.clear();
            self.tri.resize(k * k, 0.0);
            for s in 0..dim {
                let (vs, hs) = (&jc[s * k..(s + 1) * k], &self.hj[s * k..(s + 1) * k]);
                for (tp, &a) in self.tri.chunks_exact_mut(k).zip(vs) {
                    for (t, h) in tp.iter_mut().zip(hs) {
                        *t += a * h;
                    }
                }
            }
            // the square is symmetric: entry (p, q), p >= q, goes to column cols[q], row cols[p]
            for (q, &cq) in cols.iter().enumerate() {
                let col = &mut self.h[cq * nv..(cq + 1) * nv];
                for (p, &cp) in cols.iter().enumerate().skip(q) {
                    col[cp] += self.tri[p * k + q];
                }
            }
        }
    }

    /// `hq += sign D_i J_i^T J_i` for one row.
    #[inline(always)]
    fn add_row(&mut self, jac: &SparseRows, efc: &Efc, i: usize, sign: f64) {
        let nv = self.nv;
        let (cols, vals) = jac.row(i);
        let d = sign * efc.d[i];
        for (q, (&c, &vq)) in cols.iter().zip(vals).enumerate() {
            let dvq = d * vq;
            let col = &mut self.hq[c * nv..(c + 1) * nv];
            for (&a, &vp) in cols[q..].iter().zip(&vals[q..]) {
                col[a] += dvq * vp;
            }
        }
    }

    /// Assembles `H` (the lower triangle within the envelope of the *active* rows, unfactored)
    /// from `M` in the legacy layout (`qm`), the sparse rows `jac` of `efc` and the states;
    /// `hcone` from [`super::cost::update`]. For tests and figures; the solver uses
    /// [`Hessian::start`]. Inputs assumed valid.
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        &mut self,
        layout: &MjLayout,
        qm: &[f64],
        jac: &SparseRows,
        efc: &Efc,
        cones: &[Cone],
        state: &[EfcState],
        hcone: &[[f64; 36]],
    ) {
        self.resize(layout.nv);
        let mut blocks = RowBlocks::default();
        blocks.refill(jac, efc);
        let active = |i: usize| match efc.efc_type[i] {
            EfcType::ContactElliptic => state[i] != EfcState::Satisfied,
            _ => quadratic(state[i]),
        };
        self.set_envelope(layout, &blocks, active);
        self.assemble_quadratic(layout, qm, &blocks, efc, state);
        self.add_cones(&blocks, cones, state, hcone);
    }

    /// The first Hessian of a solve (MuJoCo's `MakeHessian` + `FactorizeHessian`): the envelope
    /// of every row, `hq` at `state`, and the factor of `hq` plus the cone terms. Inputs
    /// assumed valid (`blocks` of the rows of `efc`).
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        layout: &MjLayout,
        qm: &[f64],
        blocks: &RowBlocks,
        efc: &Efc,
        cones: &[Cone],
        state: &[EfcState],
        hcone: &[[f64; 36]],
    ) -> Result<()> {
        self.resize(layout.nv);
        self.set_envelope(layout, blocks, |_| true);
        self.assemble_quadratic(layout, qm, blocks, efc, state);
        self.refactor(blocks, cones, state, hcone)
    }

    /// The factor at the new `state` after [`Hessian::start`] at `oldstate` (MuJoCo's
    /// `HessianIncremental`): the rows that entered or left the quadratic state are added to
    /// or taken from `hq` (or `hq` is reassembled when more than a quarter of the rows
    /// changed); then the factor is kept, updated by rank-one steps, or refactored, whichever
    /// the envelope says is cheaper (see [`Hessian`]). Returns MuJoCo's `nupdate`: the number of
    /// rank-one steps, or `nefc` for a new factorization.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        layout: &MjLayout,
        qm: &[f64],
        jac: &SparseRows,
        blocks: &RowBlocks,
        efc: &Efc,
        cones: &[Cone],
        oldstate: &[EfcState],
        state: &[EfcState],
        hcone: &[[f64; 36]],
    ) -> Result<usize> {
        let n = efc.nefc();
        self.changed.clear();
        let mut cost = 0;
        for i in 0..n {
            if quadratic(oldstate[i]) != quadratic(state[i]) {
                self.changed.push(i);
                cost += jac.row(i).0.first().map_or(0, |&c0| self.below[c0]);
            }
        }
        let nchange = self.changed.len();
        let cones_now = cones.iter().any(|c| state[c.row] == EfcState::Cone);
        if nchange == 0 && !cones_now && !self.with_cones {
            return Ok(0);
        }
        if 4 * nchange > n {
            self.assemble_quadratic(layout, qm, blocks, efc, state);
        } else {
            for t in 0..nchange {
                let i = self.changed[t];
                self.add_row(jac, efc, i, if quadratic(state[i]) { 1.0 } else { -1.0 });
            }
        }
        if cones_now || self.with_cones || cost >= self.factor_cost {
            self.refactor(blocks, cones, state, hcone)?;
            return Ok(n);
        }
        for t in 0..nchange {
            let i = self.changed[t];
            let (cols, vals) = jac.row(i);
            if !self.rank_one(cols, vals, efc.d[i].sqrt(), quadratic(state[i])) {
                // the downdate lost positive definiteness to rounding: start again from hq
                self.refactor(blocks, cones, state, hcone)?;
                return Ok(n);
            }
        }
        Ok(nchange)
    }
    // ANCHOR_END: hessian_profile

    // ANCHOR: rank_one
    /// The rank-one update (`up`) or downdate of the factor, `L' L'^T = L L^T +- x x^T` with
    /// `x = scale * row` (`cols`, `vals` a row of `J`), MuJoCo's `mju_cholUpdate`: column by
    /// column from the row's first column, for each `k` with `x_k != 0` the rotation
    /// `r = sqrt(L_kk^2 +- x_k^2)`, `c = r / L_kk`, `s = x_k / L_kk`, `L_kk <- r`, then for every
    /// `i > k` `L_ik <- (L_ik +- s x_i) / c` and `x_i <- c x_i - s L_ik`. `x_i` becomes nonzero
    /// only where `L_ik` is, so the envelope holds. Returns `false` (the factor then unusable)
    /// when a downdate leaves a pivot `r^2 <= mjMINVAL`.
    pub fn rank_one(&mut self, cols: &[usize], vals: &[f64], scale: f64, up: bool) -> bool {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.rank_one_body(cols, vals, scale, up),
        )
    }

    /// The body of [`Self::rank_one`]. Column `k` is one contiguous run from its diagonal down
    /// to `last[k]`; its rows in between that start right of `k` hold zeros, and so does `x`
    /// there, so they stay zero. The rows of a column are independent of each other: the
    /// rotation is a stream of 4-wide multiply-adds over the column and `x` side by side
    /// (dividing by `c` is multiplying by `1 / c`, as MuJoCo does).
    #[inline(always)]
    fn rank_one_body(&mut self, cols: &[usize], vals: &[f64], scale: f64, up: bool) -> bool {
        let nv = self.nv;
        let Some(&k0) = cols.first() else {
            return true;
        };
        let (x, last) = (&mut self.upd, &self.last);
        x[k0..].fill(0.0);
        for (&c, &v) in cols.iter().zip(vals) {
            x[c] = scale * v;
        }
        let sign = if up { 1.0 } else { -1.0 };
        for k in k0..nv {
            let xk = x[k];
            if xk == 0.0 {
                continue;
            }
            let end = last[k];
            let col = &mut self.h[k * nv + k..=k * nv + end];
            let lkk = col[0];
            let r2 = lkk * lkk + sign * xk * xk;
            if !(r2 > mjMINVAL) {
                return false;
            }
            let r = r2.sqrt();
            let (c, s) = (r / lkk, xk / lkk);
            let (cinv, ss) = (1.0 / c, sign * s);
            col[0] = r;
            self.dinv[k] = 1.0 / r;
            rotate(&mut col[1..], &mut x[k + 1..=end], [c, s, cinv, ss]);
        }
        true
    }
    // ANCHOR_END: rank_one

    // ANCHOR: hessian_factor
    /// Cholesky `H = L L^T` in place within the envelope, column by column (left-looking):
    /// column `k` of `H` less `L_kj` times column `j` for each `j` of row `k`'s envelope
    /// (`first[k] <= j < k`), then `L_kk = sqrt` of its diagonal and the rest divided by it.
    /// Fails with [`Error::PivotNotPositive`] naming the row whose pivot is not positive.
    pub fn factor(&mut self) -> Result<()> {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.factor_body(),
        )
    }

    /// The body of [`Self::factor`], compiled for AVX where the processor has it. Column `j`
    /// reaches row `last[j] >= k` (row `k` lies in its envelope), and below its last row it
    /// is zero, so it is added down to `min(last[j], last[k])`. The divisions by `L_kk` are
    /// multiplications by `1 / L_kk`, kept in `dinv` for the solves (as in MuJoCo's
    /// `mju_cholFactor`).
    #[inline(always)]
    fn factor_body(&mut self) -> Result<()> {
        let (nv, first, last) = (self.nv, &self.first, &self.last);
        for k in 0..nv {
            let end = last[k];
            let (done, rest) = self.h.split_at_mut(k * nv);
            let col = &mut rest[k..=end];
            // column j from row k on: zero past last[j] (set_envelope clears the storage)
            let from = |j: usize| &done[j * nv + k..=j * nv + end];
            let mut j = first[k];
            // four columns at a time (one pass along column k), then one at a time
            while j + 4 <= k {
                let a = [
                    -done[j * nv + k],
                    -done[(j + 1) * nv + k],
                    -done[(j + 2) * nv + k],
                    -done[(j + 3) * nv + k],
                ];
                add_four(col, a, [from(j), from(j + 1), from(j + 2), from(j + 3)]);
                j += 4;
            }
            for j in j..k {
                sub_scaled(col, done[j * nv + k], from(j));
            }
            let s = col[0];
            if !(s > 0.0 && s.is_finite()) {
                return Err(Error::PivotNotPositive {
                    matrix: "Newton Hessian H = M + J^T D J".into(),
                    row: k,
                    pivot: s,
                });
            }
            let l = s.sqrt();
            let inv = 1.0 / l;
            col[0] = l;
            self.dinv[k] = inv;
            for h in &mut col[1..] {
                *h *= inv;
            }
        }
        Ok(())
    }

    /// `x <- H^-1 x` with the factor of [`Hessian::factor`]: `L y = x` forward (each `y_k`
    /// subtracts its column from the rest), `L^T x = y` backward (each `x_k` a dot product with
    /// its column), both over the envelope.
    pub fn solve(&self, x: &mut [f64]) {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.solve_body(x),
        )
    }

    /// The body of [`Self::solve`], compiled for AVX where the processor has it.
    #[inline(always)]
    fn solve_body(&self, x: &mut [f64]) {
        let (nv, h, last, dinv) = (self.nv, &self.h[..], &self.last[..], &self.dinv[..]);
        // forward: y_k = x_k / L_kk, then column k times y_k is taken from the rows below;
        // four columns at a time, their 4 x 4 diagonal block first (columns are zero past their
        // last row, so the four run to the longest one's end)
        let mut k = 0;
        while k + 4 <= nv {
            for t in 0..4 {
                let y = x[k + t] * dinv[k + t];
                x[k + t] = y;
                for u in t + 1..4 {
                    x[k + u] -= h[(k + t) * nv + k + u] * y;
                }
            }
            let end = last[k..k + 4].iter().copied().max().unwrap_or(k);
            if end >= k + 4 {
                let col = |t: usize| &h[(k + t) * nv + k + 4..=(k + t) * nv + end];
                let y = [-x[k], -x[k + 1], -x[k + 2], -x[k + 3]];
                add_four(&mut x[k + 4..=end], y, [col(0), col(1), col(2), col(3)]);
            }
            k += 4;
        }
        for k in k..nv {
            let end = last[k];
            let y = x[k] * dinv[k];
            x[k] = y;
            sub_scaled(&mut x[k + 1..=end], y, &h[k * nv + k + 1..=k * nv + end]);
        }
        // backward: x_k = (y_k - sum_i L_ik x_i) / L_kk down column k (contiguous)
        for k in (0..nv).rev() {
            let end = last[k];
            let s = dot(&h[k * nv + k + 1..=k * nv + end], &x[k + 1..=end]);
            x[k] = (x[k] - s) * dinv[k];
        }
    }
    // ANCHOR_END: hessian_factor
}

/// `t <- t + sum_r a_r v_r` over four rows `v_r` (each as long as `t`), four entries at a time.
#[inline(always)]
fn add_four(t: &mut [f64], a: [f64; 4], v: [&[f64]; 4]) {
    let k = t.len();
    let n4 = k - k % 4;
    let [v0, v1, v2, v3] = v;
    let (v0, v1, v2, v3) = (&v0[..k], &v1[..k], &v2[..k], &v3[..k]);
    for (c, t4) in t[..n4].chunks_exact_mut(4).enumerate() {
        let at = 4 * c;
        let (x0, x1) = (&v0[at..at + 4], &v1[at..at + 4]);
        let (x2, x3) = (&v2[at..at + 4], &v3[at..at + 4]);
        let sum: [f64; 4] =
            std::array::from_fn(|l| t4[l] + ((a[0] * x0[l] + a[1] * x1[l]) + (a[2] * x2[l] + a[3] * x3[l])));
        t4.copy_from_slice(&sum);
    }
    for q in n4..k {
        t[q] += (a[0] * v0[q] + a[1] * v1[q]) + (a[2] * v2[q] + a[3] * v3[q]);
    }
}

/// `y <- y - a x` (`y`, `x` of one length), four entries at a time.
#[inline(always)]
fn sub_scaled(y: &mut [f64], a: f64, x: &[f64]) {
    let mut yc = y.chunks_exact_mut(4);
    let mut xc = x.chunks_exact(4);
    for (y4, x4) in (&mut yc).zip(&mut xc) {
        // all four loads before the stores: one 4-wide operation each
        let (xv, yv) = ([x4[0], x4[1], x4[2], x4[3]], [y4[0], y4[1], y4[2], y4[3]]);
        y4.copy_from_slice(&std::array::from_fn::<f64, 4, _>(|l| yv[l] - a * xv[l]));
    }
    for (y, x) in yc.into_remainder().iter_mut().zip(xc.remainder()) {
        *y -= a * x;
    }
}

/// One plane rotation of a rank-one update over a column `l` and the update vector `x` (one
/// length), `[c, s, 1 / c, +-s]`: `l_i <- (l_i +- s x_i) / c`, `x_i <- c x_i - s l_i`, four
/// entries at a time.
#[inline(always)]
fn rotate(l: &mut [f64], x: &mut [f64], [c, s, cinv, ss]: [f64; 4]) {
    let n = l.len().min(x.len());
    let (l, x) = (&mut l[..n], &mut x[..n]);
    let mut i = 0;
    while i + 4 <= n {
        // the four loads before the stores: one 4-wide operation each
        let (lv, xv) = (
            [l[i], l[i + 1], l[i + 2], l[i + 3]],
            [x[i], x[i + 1], x[i + 2], x[i + 3]],
        );
        let v: [f64; 4] = std::array::from_fn(|t| (lv[t] + ss * xv[t]) * cinv);
        x[i..i + 4].copy_from_slice(&std::array::from_fn::<f64, 4, _>(|t| c * xv[t] - s * v[t]));
        l[i..i + 4].copy_from_slice(&v);
        i += 4;
    }
    for i in i..n {
        let v = (l[i] + ss * x[i]) * cinv;
        l[i] = v;
        x[i] = c * x[i] - s * v;
    }
}

/// `a . b` with four running sums (the backward solve's inner products).
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0; 4];
    let mut i = 0;
    while i + 4 <= n {
        for l in 0..4 {
            s[l] += a[i + l] * b[i + l];
        }
        i += 4;
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for i in i..n {
        t += a[i] * b[i];
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::canned;
    use crate::mujoco::solver::cost::{cones, update};
    use crate::mujoco::solver::problem::{Problem, RowCounts};
    use proptest::prelude::*;

    /// A random problem with rows of every kind, its sparse rows, blocks, cones, and the states
    /// and cone Hessians at `a = qacc_smooth`.
    #[allow(clippy::type_complexity)]
    fn setup(seed: u64, elliptic: bool) -> (Problem, SparseRows, RowBlocks, Vec<Cone>, Vec<EfcState>, Vec<[f64; 36]>) {
        let model = match seed % 3 {
            0 => canned::floating_base_ball_arms(),
            1 => canned::chain(6, true),
            _ => canned::binary_tree(3),
        };
        let contacts = vec![3, 4, 6, 3];
        let counts = RowCounts {
            ne: 1,
            nf: 2,
            nl: 1,
            frictionless: vec![1],
            pyramidal: if elliptic { vec![] } else { contacts.clone() },
            elliptic: if elliptic { contacts } else { vec![] },
        };
        let p = Problem::random(&model, &counts, seed).unwrap();
        let n = p.efc.nefc();
        let jac = p.efc.j.clone();
        let mut blocks = RowBlocks::default();
        blocks.refill(&jac, &p.efc);
        let cs = cones(&p.efc).unwrap();
        let mut jar = vec![0.0; n];
        crate::mujoco::solver::mul_j(&p.efc, &p.qacc_smooth, &mut jar);
        for (x, a) in jar.iter_mut().zip(&p.efc.aref) {
            *x -= a;
        }
        let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
        let mut hc = vec![[0.0; 36]; cs.len()];
        update(&p.efc, &cs, &jar, &mut f, &mut st, Some(&mut hc));
        (p, jac, blocks, cs, st, hc)
    }

    /// `max |L_a - L_b| / max |L_b|` over the envelope (the same in both).
    fn factor_difference(a: &Hessian, b: &Hessian) -> f64 {
        assert_eq!(a.first, b.first);
        let (mut diff, mut scale) = (0.0f64, 0.0f64);
        for r in 0..a.nv {
            for c in a.first[r]..=r {
                diff = diff.max((a.get(r, c) - b.get(r, c)).abs());
                scale = scale.max(b.get(r, c).abs());
            }
        }
        diff / scale
    }

    /// The factor after flipping the rows `flip` between quadratic and satisfied, by `update`
    /// (or, with `force_rank_one`, by one `rank_one` per flipped row) and by a new factorization.
    fn flipped(seed: u64, elliptic: bool, flip: &[usize], force_rank_one: bool) -> f64 {
        let (p, jac, blocks, cs, st, hc) = setup(seed, elliptic);
        let (l, q) = (&p.layout, &p.qm);
        let mut inc = Hessian::new(p.layout.nv);
        inc.start(l, q, &blocks, &p.efc, &cs, &st, &hc).unwrap();
        let mut new = st.clone();
        for &i in flip {
            // an elliptic row moves with its cone: only scalar rows flip
            if p.efc.efc_type[i] != EfcType::ContactElliptic {
                new[i] = if quadratic(st[i]) {
                    EfcState::Satisfied
                } else {
                    EfcState::Quadratic
                };
            }
        }
        if force_rank_one {
            for i in 0..p.efc.nefc() {
                if quadratic(st[i]) != quadratic(new[i]) {
                    let (cols, vals) = jac.row(i);
                    assert!(inc.rank_one(cols, vals, p.efc.d[i].sqrt(), quadratic(new[i])));
                }
            }
        } else {
            inc.update(l, q, &jac, &blocks, &p.efc, &cs, &st, &new, &hc).unwrap();
        }
        let mut fresh = Hessian::new(p.layout.nv);
        fresh.start(l, q, &blocks, &p.efc, &cs, &new, &hc).unwrap();
        factor_difference(&inc, &fresh)
    }

    #[test]
    fn rank_one_updates_match_a_new_factor() {
        for seed in 0..6 {
            for elliptic in [false, true] {
                // one row added or removed, then three
                for flip in [&[4usize][..], &[0, 3, 5]] {
                    for force in [true, false] {
                        let e = flipped(seed, elliptic, flip, force);
                        assert!(e < 1e-12, "seed {seed} elliptic {elliptic} flip {flip:?}: {e:e}");
                    }
                }
            }
        }
    }

    #[test]
    fn an_update_with_no_change_keeps_the_factor() {
        let (p, jac, blocks, cs, st, hc) = setup(1, false);
        let mut h = Hessian::new(p.layout.nv);
        h.start(&p.layout, &p.qm, &blocks, &p.efc, &cs, &st, &hc).unwrap();
        let before = h.h.clone();
        let n = h
            .update(&p.layout, &p.qm, &jac, &blocks, &p.efc, &cs, &st, &st, &hc)
            .unwrap();
        assert_eq!(n, 0);
        assert_eq!(h.h, before);
    }

    /// The column-stored factor and its solve against the dense reference: `make_hessian`
    /// factored by the plain dense Cholesky, entry by entry, and `H^-1 b` both ways.
    #[test]
    fn column_factor_and_solve_match_the_dense_cholesky() {
        for seed in 0..9 {
            for elliptic in [false, true] {
                let (p, _, blocks, cs, st, hc) = setup(seed, elliptic);
                let nv = p.layout.nv;
                let mut hp = Hessian::new(nv);
                hp.start(&p.layout, &p.qm, &blocks, &p.efc, &cs, &st, &hc).unwrap();
                let mut hd = DMatrix::zeros(nv, nv);
                let m = p.layout.to_dense(&p.qm);
                make_hessian(&m, &p.efc.dense_j(), &p.efc, &cs, &st, &hc, &mut hd);
                crate::sparse::cholesky_dense_in_place(&mut hd, "H").unwrap();
                let scale = hd.amax();
                for r in 0..nv {
                    for c in 0..=r {
                        let e = (hp.get(r, c) - hd[(r, c)]).abs() / scale;
                        assert!(e < 1e-12, "seed {seed} elliptic {elliptic}: L[{r}][{c}] off by {e:e}");
                    }
                }
                let b: Vec<f64> = (0..nv).map(|k| (k as f64 * 0.7).sin() + 0.3).collect();
                let (mut xs, mut xd) = (b.clone(), b.clone());
                hp.solve(&mut xs);
                crate::sparse::cholesky_solve_dense_with(&hd, &mut xd);
                let xscale = xd.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                for (a, d) in xs.iter().zip(&xd) {
                    assert!(
                        (a - d).abs() < 1e-12 * xscale,
                        "seed {seed} elliptic {elliptic}: solve {a} vs {d}"
                    );
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Any set of rows entering or leaving the quadratic state: the kept factor equals a
        /// new one to 1e-12, by rank-one steps alone and by `update`'s choice.
        #[test]
        fn incremental_factor_equals_a_new_one(
            seed in 0u64..1000,
            elliptic in any::<bool>(),
            flip in proptest::collection::vec(0usize..12, 1..6),
        ) {
            for force in [true, false] {
                let e = flipped(seed, elliptic, &flip, force);
                prop_assert!(e < 1e-12, "{e:e}");
            }
        }
    }
}
