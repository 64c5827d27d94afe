//! The loop shared by CG and Newton on the reduced primal problem (MuJoCo's `mj_solPrimal`):
//! minimize `C(a) = 1/2 (a - a_s)^T M (a - a_s) + s(J a - aref)` by line searches along
//! preconditioned directions. Book: "Solvers", sections "The reduced primal", "Conjugate
//! gradient", "Newton's method", "Termination".

use super::super::constraint::{Efc, EfcState, EfcType};
use super::cg::{beta_hz, beta_prp, cg_direction};
use super::cost::{gauss, update, Cone};
use super::linesearch::LineSearch;
use super::newton::{make_hessian, Hessian};
use super::{
    mul_j, mul_j_dense, mul_jt_dense, mul_m, solve_m, trace_m, JacStorage, MNonzeros, Smooth, SolverOptions,
    SolverResult, SolverStat,
};
use crate::error::Result;
use crate::mujoco::constraint::SparseRows;
use crate::sparse::{cholesky_dense_in_place, cholesky_solve_dense_with};
use nalgebra::DMatrix;

/// The primal cost `C(a)` at `qacc` (Gauss term plus [`update`]'s `s(J a - aref)`), with the
/// forces and states written to `force`, `state`. Inputs assumed valid.
pub fn primal_cost(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    qacc: &[f64],
    force: &mut [f64],
    state: &mut [EfcState],
) -> f64 {
    let nv = qacc.len();
    let mut ma = vec![0.0; nv];
    mul_m(smooth.layout, smooth.qm, qacc, &mut ma);
    let mut jar = vec![0.0; efc.nefc()];
    mul_j(efc, qacc, &mut jar);
    for (x, a) in jar.iter_mut().zip(&efc.aref) {
        *x -= a;
    }
    gauss(&ma, smooth.qfrc_smooth, qacc, smooth.qacc_smooth) + update(efc, cones, &jar, force, state, None)
}

// ANCHOR: row_blocks
/// The rows of `efc_J` in blocks that share their columns (MuJoCo's `efc_J_rowsuper`): the rows
/// of one contact touch the dofs of the same two bodies' chains, and so do those of the next
/// contact between the same bodies. A block keeps the union of its rows' columns and every row
/// densely over it (an entry that is exactly zero in the sparse rows, say the normal row of a
/// floor contact in a horizontal tangent dof, is stored as 0). The products and Newton's
/// Hessian then work block by block on short dense rows: `J x` gathers the block's entries of `x`
/// once, `J^T f` adds the block's rows into a short dense vector and scatters it once. Made
/// once per solve, in one pass over the rows.
#[derive(Clone, Debug, Default)]
pub struct RowBlocks {
    /// First row of each block, then `nrows`.
    pub start: Vec<usize>,
    /// Columns of each block (increasing): `cols[coladr[b]..coladr[b + 1]]`.
    pub cols: Vec<usize>,
    /// Start of each block's columns, then their end.
    pub coladr: Vec<usize>,
    /// Each block's rows over its columns, row after row, from `valadr[b]`.
    pub vals: Vec<f64>,
    /// Start of each block's values.
    pub valadr: Vec<usize>,
    /// The same values four rows at a time, column by column (`[J_r,c, J_r+1,c, J_r+2,c,
    /// J_r+3,c]` for each column c of the block), for the rows of a block in its whole groups of
    /// four: [`Self::mul`] adds one column into four rows' sums with one 4-wide multiply-add.
    quads: Vec<[f64; 4]>,
    /// Start of each block's entries in `quads`.
    quadadr: Vec<usize>,
    /// A block's entries of `x`.
    buf: Vec<f64>,
    /// Scratch over the dofs: the last block that marked a column, a column's place in its block.
    mark: Vec<usize>,
    pos: Vec<usize>,
}

impl RowBlocks {
    /// The blocks of `jac`, the rows of `efc` (reusing the storage): a row joins the block
    /// before it when it belongs to the same contact or has the same columns as the row before;
    /// then neighbouring blocks whose column unions are equal merge.
    pub fn refill(&mut self, jac: &SparseRows, efc: &Efc) {
        let (n, nv) = (jac.nrows(), jac.ncols);
        self.start.clear();
        self.cols.clear();
        self.coladr.clear();
        self.coladr.push(0);
        self.mark.clear();
        self.mark.resize(nv, usize::MAX);
        self.pos.resize(nv, 0);
        let contact = |i: usize| {
            matches!(
                efc.efc_type[i],
                EfcType::ContactFrictionless | EfcType::ContactPyramidal | EfcType::ContactElliptic
            )
        };
        let joins = |i: usize| {
            i > 0
                && ((contact(i) && efc.efc_type[i] == efc.efc_type[i - 1] && efc.efc_id[i] == efc.efc_id[i - 1])
                    || (!jac.row(i).0.is_empty() && jac.row(i).0 == jac.row(i - 1).0))
        };
        let (mut r0, mut group) = (0, 0);
        // bounded: r0 grows to the end of its group each pass
        while r0 < n {
            let mut r1 = r0 + 1;
            while r1 < n && joins(r1) {
                r1 += 1;
            }
            // the group's union of columns, appended to cols
            let c0 = self.cols.len();
            let cols0 = jac.row(r0).0;
            if (r0 + 1..r1).all(|r| jac.row(r).0 == cols0) {
                self.cols.extend_from_slice(cols0);
            } else {
                for r in r0..r1 {
                    for &c in jac.row(r).0 {
                        if self.mark[c] != group {
                            self.mark[c] = group;
                            self.cols.push(c);
                        }
                    }
                }
                self.cols[c0..].sort_unstable();
            }
            let nb = self.start.len();
            if nb > 0 && self.cols[self.coladr[nb - 1]..c0] == self.cols[c0..] {
                // the same columns as the block before: extend it
                self.cols.truncate(c0);
            } else {
                self.start.push(r0);
                self.coladr.push(self.cols.len());
            }
            (r0, group) = (r1, group + 1);
        }
        self.start.push(n);
        // the rows over their block's columns
        self.valadr.clear();
        self.vals.clear();
        let mut width = 0;
        for b in 0..self.start.len() - 1 {
            let cols = &self.cols[self.coladr[b]..self.coladr[b + 1]];
            let k = cols.len();
            width = width.max(k);
            for (p, &c) in cols.iter().enumerate() {
                self.pos[c] = p;
            }
            self.valadr.push(self.vals.len());
            let rows = self.start[b]..self.start[b + 1];
            let (a0, a1) = (jac.rowadr[rows.start], jac.rowadr[rows.end]);
            if a1 - a0 == k * rows.len() {
                // every row has all the block's columns: its values as they are
                self.vals.extend_from_slice(&jac.values[a0..a1]);
                continue;
            }
            for r in rows {
                let a = self.vals.len();
                self.vals.resize(a + k, 0.0);
                let (rc, rv) = jac.row(r);
                for (&c, &v) in rc.iter().zip(rv) {
                    self.vals[a + self.pos[c]] = v;
                }
            }
        }
        self.buf.resize(width, 0.0);
        self.quads.clear();
        self.quadadr.clear();
        for b in 0..self.len() {
            self.quadadr.push(self.quads.len());
            let (rows, cols, _) = self.block(b);
            let (k, a) = (cols.len(), self.valadr[b]);
            for q in 0..rows.len() / 4 {
                for p in 0..k {
                    let v = |r: usize| self.vals[a + (4 * q + r) * k + p];
                    self.quads.push([v(0), v(1), v(2), v(3)]);
                }
            }
        }
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block `b`: its rows, its columns and its values (row after row, each as long as the
    /// columns).
    #[inline(always)]
    pub fn block(&self, b: usize) -> (std::ops::Range<usize>, &[usize], &[f64]) {
        let rows = self.start[b]..self.start[b + 1];
        let cols = &self.cols[self.coladr[b]..self.coladr[b + 1]];
        let a = self.valadr[b];
        (rows.clone(), cols, &self.vals[a..a + rows.len() * cols.len()])
    }

    /// `out = J x` (`mj_mulJacVec`). Each row's sum runs over its columns in order, as the
    /// dense product's does (the two agree to the last bit); four rows of a block are summed
    /// side by side, so that their additions overlap.
    pub fn mul(&mut self, x: &[f64], out: &mut [f64]) {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.mul_body(x, out),
        )
    }

    /// The body of [`Self::mul`], compiled for AVX where the processor has it.
    #[inline(always)]
    fn mul_body(&mut self, x: &[f64], out: &mut [f64]) {
        let mut buf = std::mem::take(&mut self.buf);
        for b in 0..self.len() {
            let (rows, cols, vals) = self.block(b);
            let k = cols.len();
            if rows.len() == 1 {
                // a lone row (a limit, a friction loss): no gather
                out[rows.start] = vals.iter().zip(cols).fold(0.0, |s, (v, &c)| s + v * x[c]);
                continue;
            }
            let xb = &mut buf[..k];
            for (xp, &c) in xb.iter_mut().zip(cols) {
                *xp = x[c];
            }
            if k == 0 {
                out[rows].fill(0.0);
                continue;
            }
            // four rows at a time: one 4-wide multiply-add per column (each row's sum still
            // runs over its columns in order)
            let nq = rows.len() / 4;
            let quads = &self.quads[self.quadadr[b]..self.quadadr[b] + nq * k];
            let mut i = rows.start;
            for q in quads.chunks_exact(k) {
                let mut s = [0.0; 4];
                for (v, &xp) in q.iter().zip(xb.iter()) {
                    for l in 0..4 {
                        s[l] += v[l] * xp;
                    }
                }
                out[i..i + 4].copy_from_slice(&s);
                i += 4;
            }
            for row in vals[4 * nq * k..].chunks_exact(k) {
                out[i] = row.iter().zip(xb.iter()).fold(0.0, |s, (v, x)| s + v * x);
                i += 1;
            }
        }
        self.buf = buf;
    }

    /// `out = J^T f` (`mj_mulJacTVec`): each dof's sum runs over the rows in order, as the
    /// dense product's does; a block keeps the sums of four of its columns in one register while
    /// its rows are added into them, and writes them back once.
    pub fn mul_t(&mut self, f: &[f64], out: &mut [f64]) {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.mul_t_body(f, out),
        )
    }

    /// The body of [`Self::mul_t`], compiled for AVX where the processor has it.
    #[inline(always)]
    fn mul_t_body(&self, f: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for b in 0..self.len() {
            let (rows, cols, vals) = self.block(b);
            let fb = &f[rows];
            let k = cols.len();
            if k == 0 || fb.iter().all(|&fi| fi == 0.0) {
                continue;
            }
            if fb.len() == 1 {
                for (&c, v) in cols.iter().zip(vals) {
                    out[c] += fb[0] * v;
                }
                continue;
            }
            // four columns at a time: their four sums stay in a register while the block's rows
            // are added, one after the other, in row order
            let mut p = 0;
            while p + 4 <= k {
                let mut acc = [out[cols[p]], out[cols[p + 1]], out[cols[p + 2]], out[cols[p + 3]]];
                for (&fi, row) in fb.iter().zip(vals.chunks_exact(k)) {
                    let r = &row[p..p + 4];
                    for l in 0..4 {
                        acc[l] += fi * r[l];
                    }
                }
                for l in 0..4 {
                    out[cols[p + l]] = acc[l];
                }
                p += 4;
            }
            for (q, &c) in cols.iter().enumerate().skip(p) {
                let mut a = out[c];
                for (&fi, row) in fb.iter().zip(vals.chunks_exact(k)) {
                    a += fi * row[q];
                }
                out[c] = a;
            }
        }
    }
}
// ANCHOR_END: row_blocks

/// The primal solver's storage, one field per symbol: sized by `PrimalWorkspace::resize` and
/// reused, so that a solve on a problem of a size seen before allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct PrimalWorkspace {
    /// `a` (nv).
    qacc: Vec<f64>,
    /// `M a` (nv).
    ma: Vec<f64>,
    /// `x = J a - aref` (nefc).
    jar: Vec<f64>,
    /// `f = -ds/dx` (nefc).
    force: Vec<f64>,
    /// Row states (nefc), and those of the previous iterate.
    state: Vec<EfcState>,
    oldstate: Vec<EfcState>,
    /// `J^T f` (nv).
    qfrc: Vec<f64>,
    /// `g = M a - qfrc_smooth - J^T f` and its preconditioned `M^-1 g` (CG) or `H^-1 g`
    /// (Newton), with the previous ones (CG).
    grad: Vec<f64>,
    mgrad: Vec<f64>,
    gradold: Vec<f64>,
    mgradold: Vec<f64>,
    /// Search direction `p` (nv).
    search: Vec<f64>,
    /// Cone Hessians (Newton), one per cone.
    hcone: Vec<[f64; 36]>,
    /// Newton, dense route: dense `M` and the Hessian / its Cholesky factor.
    m_dense: DMatrix<f64>,
    h: DMatrix<f64>,
    /// The dense route's `efc_J` ([`Efc::dense_j`]).
    j_dense: DMatrix<f64>,
    /// The sparse route: the blocks of `efc_J`'s rows and Newton's profile Hessian.
    blocks: RowBlocks,
    hess: Hessian,
    /// The line search's per-direction data.
    ls: LineSearch,
    /// `M` by its nonzeros, for `M a` and `M p`.
    m: MNonzeros,
}

impl PrimalWorkspace {
    /// Sizes every vector for `nv` dofs, `nefc` rows and `ncone` cones.
    fn resize(&mut self, nv: usize, nefc: usize, ncone: usize) {
        for v in [
            &mut self.qacc,
            &mut self.ma,
            &mut self.qfrc,
            &mut self.grad,
            &mut self.mgrad,
            &mut self.gradold,
            &mut self.mgradold,
            &mut self.search,
        ] {
            v.resize(nv, 0.0);
        }
        self.jar.resize(nefc, 0.0);
        self.force.resize(nefc, 0.0);
        self.state.resize(nefc, EfcState::Satisfied);
        self.oldstate.resize(nefc, EfcState::Satisfied);
        self.hcone.resize(ncone, [0.0; 36]);
        self.ls.resize(nv, nefc, ncone);
    }
}

/// One solve's view: the problem, the route's rows and the workspace.
struct Primal<'a> {
    smooth: &'a Smooth<'a>,
    efc: &'a Efc,
    cones: &'a [Cone],
    /// The sparse rows (`None` on the dense route).
    jac: Option<&'a SparseRows>,
    w: &'a mut PrimalWorkspace,
    newton: bool,
}

impl Primal<'_> {
    /// Constraint update at the current `jar`, then `g`; returns the cost `C(a)`.
    /// Puts the iterate at `x` (`qacc_smooth` for `None`): `M a`, `J a - aref`, the rows'
    /// forces and states and the gradient at it. Returns the cost `C(a)`.
    fn start(&mut self, x: Option<&[f64]>) -> f64 {
        let w = &mut *self.w;
        w.qacc.copy_from_slice(x.unwrap_or(self.smooth.qacc_smooth));
        w.m.mul(&w.qacc, &mut w.ma);
        let (qacc, mut jar) = (std::mem::take(&mut w.qacc), std::mem::take(&mut w.jar));
        self.mul_j(&qacc, &mut jar);
        for (x, a) in jar.iter_mut().zip(&self.efc.aref) {
            *x -= a;
        }
        (self.w.qacc, self.w.jar) = (qacc, jar);
        self.update_constraint()
    }

    fn update_constraint(&mut self) -> f64 {
        let (smooth, w) = (self.smooth, &mut *self.w);
        let hess = if self.newton { Some(&mut w.hcone[..]) } else { None };
        let s = update(self.efc, self.cones, &w.jar, &mut w.force, &mut w.state, hess);
        match self.jac {
            Some(_) => w.blocks.mul_t(&w.force, &mut w.qfrc),
            None => mul_jt_dense(&w.j_dense, &w.force, &mut w.qfrc),
        }
        for k in 0..w.grad.len() {
            w.grad[k] = w.ma[k] - smooth.qfrc_smooth[k] - w.qfrc[k];
        }
        s + gauss(&w.ma, smooth.qfrc_smooth, &w.qacc, smooth.qacc_smooth)
    }

    /// `mgrad = M^-1 g` (CG) or `H^-1 g` (Newton) with the Hessian at the current states:
    /// assembled and factored on the first call (`first`), afterwards brought up to date from
    /// the states of the previous call (`oldstate`). Returns MuJoCo's `nupdate`.
    fn precondition(&mut self, first: bool) -> Result<usize> {
        let (smooth, efc, cones, w) = (self.smooth, self.efc, self.cones, &mut *self.w);
        w.mgrad.copy_from_slice(&w.grad);
        if !self.newton {
            solve_m(smooth, &mut w.mgrad)?;
            return Ok(0);
        }
        let nupdate = if let Some(jac) = self.jac {
            let (l, q) = (smooth.layout, smooth.qm);
            let n = if first {
                w.hess.start(l, q, &w.blocks, efc, cones, &w.state, &w.hcone)?;
                efc.nefc()
            } else {
                w.hess
                    .update(l, q, jac, &w.blocks, efc, cones, &w.oldstate, &w.state, &w.hcone)?
            };
            w.hess.solve(&mut w.mgrad);
            n
        } else {
            make_hessian(&w.m_dense, &w.j_dense, efc, cones, &w.state, &w.hcone, &mut w.h);
            cholesky_dense_in_place(&mut w.h, "Newton Hessian H = M + J^T D J")?;
            cholesky_solve_dense_with(&w.h, &mut w.mgrad);
            efc.nefc()
        };
        Ok(nupdate)
    }

    /// `out = J x` by the route's storage.
    fn mul_j(&mut self, x: &[f64], out: &mut [f64]) {
        match self.jac {
            Some(_) => self.w.blocks.mul(x, out),
            None => mul_j_dense(&self.w.j_dense, x, out),
        }
    }
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

// ANCHOR: solve_primal
/// The search direction of the primal loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Newton: `-H^-1 g`.
    Newton,
    /// CG with the Polak-Ribiere+ coefficient ([`beta_prp`]), MuJoCo's `mjCG_PRP` build.
    CgPolakRibiere,
    /// CG with the Hager-Zhang coefficient ([`beta_hz`]), MuJoCo's default since 3.10 and what
    /// [`super::solve`] uses.
    CgHagerZhang,
}

/// MuJoCo's `mj_solPrimal` for CG (`newton = false`, Hager-Zhang, MuJoCo's rule) and Newton
/// (`newton = true`); [`solve_primal_with`] also offers Polak-Ribiere+ CG.
pub fn solve_primal(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    newton: bool,
) -> Result<SolverResult> {
    let dir = if newton {
        Direction::Newton
    } else {
        Direction::CgHagerZhang
    };
    solve_primal_with(smooth, efc, cones, opts, dir)
}

/// [`solve_primal_storage`] on the sparse rows.
pub fn solve_primal_with(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    dir: Direction,
) -> Result<SolverResult> {
    solve_primal_storage(smooth, efc, cones, opts, dir, JacStorage::Sparse)
}

/// MuJoCo's `mj_solPrimal` with the direction rule `dir`. Each
/// iteration: exact line search along `p`, move, update the rows and the gradient, record a
/// [`SolverStat`], stop on `scale (C_old - C_new) < tolerance`, `scale |g| < tolerance`, for
/// Newton also on the decrement `scale g^T H^-1 g / 2 < tolerance` (MuJoCo 4.0 has this test;
/// spec 6.5 omits it), or a zero step (`scale = 1 / trace M`), else the next direction: `-H^-1 g` (Newton) or
/// `-M^-1 g + beta p` (CG, Polak-Ribiere+). `storage` picks the products' route: dense `efc_J`
/// with a dense Hessian (the reference), or sparse rows with the profile Hessian
/// ([`Hessian`]); the iterates agree to rounding. Inputs are assumed checked by
/// [`super::solve`].
pub fn solve_primal_storage(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    dir: Direction,
    storage: JacStorage,
) -> Result<SolverResult> {
    let mut ws = PrimalWorkspace::default();
    let mut out = SolverResult::default();
    solve_primal_in(smooth, efc, cones, opts, dir, storage, &mut ws, &mut out)?;
    Ok(out)
}

/// [`solve_primal_storage`] in the storage `ws` (kept between calls), the result written into
/// `out` (its vectors reused): no allocation once `ws` and `out` have seen a problem of this
/// size, with or without a warm start. Inputs are assumed checked by [`super::solve`].
#[allow(clippy::too_many_arguments)]
pub fn solve_primal_in(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    dir: Direction,
    storage: JacStorage,
    ws: &mut PrimalWorkspace,
    out: &mut SolverResult,
) -> Result<()> {
    crate::sparse::with_avx(
        #[inline(always)]
        || solve_primal_in_body(smooth, efc, cones, opts, dir, storage, ws, out),
    )
}

/// The body of [`solve_primal_in`], compiled for AVX where the processor has it (the same numbers
/// bit for bit: only the width of the vector instructions differs).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn solve_primal_in_body(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    dir: Direction,
    storage: JacStorage,
    ws: &mut PrimalWorkspace,
    out: &mut SolverResult,
) -> Result<()> {
    let newton = dir == Direction::Newton;
    let (nv, nefc) = (smooth.layout.nv, efc.nefc());
    ws.resize(nv, nefc, cones.len());
    let jac = match storage {
        JacStorage::Dense => {
            ws.j_dense = efc.dense_j();
            if newton {
                ws.m_dense = smooth.layout.to_dense(smooth.qm);
                ws.h = DMatrix::zeros(nv, nv);
            }
            None
        }
        JacStorage::Sparse => {
            ws.blocks.refill(&efc.j, efc);
            Some(&efc.j)
        }
    };
    ws.m.refill(smooth.layout, smooth.qm);
    out.stats.clear();
    let mut p = Primal {
        smooth,
        efc,
        cones,
        jac,
        w: ws,
        newton,
    };
    let stats = &mut out.stats;
    // ANCHOR: initial_qacc
    // the starting point (MuJoCo's `warmstart`): qacc_smooth, or the warm start when its cost is
    // not higher (ties keep the warm start, as mj_fwdConstraint does)
    let cold = p.start(None);
    if let Some(warm) = &opts.warmstart {
        if p.start(Some(warm)) > cold {
            p.start(None);
        }
    }
    // ANCHOR_END: initial_qacc
    let scale = 1.0 / trace_m(smooth.layout, smooth.qm);
    // Newton stops before its first iteration when the start already meets the gradient test
    // (MuJoCo 4.0 does, inferred from its iteration counts on warm-started steps: a warm start
    // that converged needs no step; tests/simulate_warmstart.rs). The test reads only the
    // gradient, so a converged start skips the Hessian's assembly and factorization too.
    let converged = newton && nefc > 0 && scale * norm(&p.w.grad) < opts.tolerance;
    if nefc > 0 && !converged {
        p.precondition(true)?;
        for (s, mg) in p.w.search.iter_mut().zip(&p.w.mgrad) {
            *s = -mg;
        }
    }
    // bounded by opts.iterations
    while nefc > 0 && !converged && stats.len() < opts.iterations {
        // line search along p
        let w = &mut *p.w;
        w.m.mul(&w.search, &mut w.ls.mv);
        let (search, mut jv) = (std::mem::take(&mut w.search), std::mem::take(&mut w.ls.jv));
        p.mul_j(&search, &mut jv);
        let w = &mut *p.w;
        (w.search, w.ls.jv) = (search, jv);
        w.ls.prepare(efc, cones, &w.search, &w.ma, smooth.qfrc_smooth, &w.jar);
        let pnorm = norm(&w.search);
        let tol = opts.tolerance * opts.ls_tolerance;
        let r = w.ls.search(efc, cones, &w.jar, pnorm, scale, tol, opts.ls_iterations);
        if r.alpha == 0.0 {
            break;
        }
        // move
        for (a, p) in w.qacc.iter_mut().zip(&w.search) {
            *a += r.alpha * p;
        }
        for (ma, mp) in w.ma.iter_mut().zip(&w.ls.mv) {
            *ma += r.alpha * mp;
        }
        for (x, jp) in w.jar.iter_mut().zip(&w.ls.jv) {
            *x += r.alpha * jp;
        }
        if !newton {
            w.gradold.copy_from_slice(&w.grad);
            w.mgradold.copy_from_slice(&w.mgrad);
        }
        w.oldstate.copy_from_slice(&w.state);
        let new_cost = p.update_constraint();
        let nupdate = p.precondition(false)?;
        let w = &mut *p.w;
        let nchange = w.state.iter().zip(&w.oldstate).filter(|(a, b)| a != b).count();
        let nactive = w.state.iter().filter(|s| **s != EfcState::Satisfied).count();
        // the line search's shifted sum, free of the cancellation in cost - new_cost
        let improvement = scale * r.improvement;
        let gradient = scale * norm(&w.grad);
        stats.push(SolverStat {
            improvement,
            gradient,
            lineslope: r.slope,
            nactive,
            nchange,
            neval: r.neval,
            nupdate,
            cost: new_cost,
        });
        // Newton decrement 1/2 g^T H^-1 g: the cost decrease the next Newton step predicts
        let decrement = if newton {
            (0.5 * scale * w.grad.iter().zip(&w.mgrad).map(|(g, m)| g * m).sum::<f64>()).max(0.0)
        } else {
            f64::INFINITY
        };
        if (improvement > 0.0 && improvement < opts.tolerance)
            || gradient < opts.tolerance
            || decrement < opts.tolerance
        {
            break;
        }
        // next direction
        if newton {
            for (s, mg) in w.search.iter_mut().zip(&w.mgrad) {
                *s = -mg;
            }
        } else {
            let beta = if dir == Direction::CgHagerZhang {
                beta_hz(&w.grad, &w.mgrad, &w.gradold, &w.mgradold, &w.search)
            } else {
                beta_prp(&w.grad, &w.mgrad, &w.gradold, &w.mgradold)
            };
            cg_direction(&mut w.search, &w.mgrad, beta);
        }
    }
    let w = &*p.w;
    crate::error::check_output("qacc (primal solver)", &w.qacc)?;
    // the last constraint update left f and J^T f at the final qacc
    out.iterations = out.stats.len();
    for (dst, src) in [(&mut out.qacc, &w.qacc), (&mut out.qfrc_constraint, &w.qfrc)] {
        dst.clear();
        dst.extend_from_slice(src);
    }
    out.efc_force.clear();
    out.efc_force.extend_from_slice(&w.force);
    out.efc_state.clear();
    out.efc_state.extend_from_slice(&w.state);
    Ok(())
}
// ANCHOR_END: solve_primal
