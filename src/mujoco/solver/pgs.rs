//! Projected Gauss-Seidel on the dual problem (MuJoCo's `mj_solPGS`):
//! minimize `1/2 f^T AR f + f^T b` over the forces allowed by the rows, `AR = J M^-1 J^T + R`,
//! `b = J qacc_smooth - aref`, one block at a time: a scalar row is minimized exactly and
//! clamped; an elliptic contact takes a ray step for the normal force and then solves a small
//! QCQP for the friction forces inside the ellipse `sum (f_j / mu_j)^2 <= f_0^2`. A block whose
//! update would raise the cost is undone. Book: "Solvers", section "PGS".
//!
//! [`solve_pgs`] is the classic sequential sweep of spec 5.2. MuJoCo 3.8 and later (4.0.0
//! included) visit the blocks in an order reshuffled every sweep and add Nesterov momentum with
//! restarts: [`solve_pgs_with`] with [`PgsVariant::Accelerated`], which [`super::solve`] runs and
//! which reproduces MuJoCo's PGS iteration for iteration.

use super::super::constraint::SparseRows;
use super::super::constraint::{Efc, EfcState, EfcType};
use super::cost::{update, Cone};
use super::{mul_j, solve_m, trace_m, JacStorage, Smooth, SolverOptions, SolverResult, SolverStat};
use crate::error::Result;
use crate::model::constants::mjMINVAL;
use nalgebra::DMatrix;

/// The dual problem's data: `AR = J M^-1 J^T + diag(R)` (nefc x nefc) and `b = J a_s - aref`.
#[derive(Clone, Debug)]
pub struct Dual {
    /// `AR` (MuJoCo's `efc_AR`).
    pub ar: DMatrix<f64>,
    /// The nonzero entries of `AR` by rows (MuJoCo's sparse `efc_AR` with `efc_AR_rownnz`,
    /// `efc_AR_rowadr`, `efc_AR_colind`): what a sweep reads. Two rows couple only if they
    /// move a common kinematic tree, since `M^-1` is block diagonal by trees.
    pub ar_rows: SparseRows,
    /// `b` (MuJoCo's `efc_b`).
    pub b: Vec<f64>,
}

// ANCHOR: make_dual
/// `AR` and `b` of the rows `efc` (MuJoCo's `mj_projectConstraint` and `efc_b`) on the sparse
/// route ([`make_dual_storage`]).
pub fn make_dual(smooth: &Smooth, efc: &Efc) -> Result<Dual> {
    make_dual_storage(smooth, efc, JacStorage::Sparse)
}

/// `AR` and `b`: each row of `J` is solved through `M` once (the sparse `L^T D L` of
/// `mj_factorM`, [`solve_m`]), giving `M^-1 J_i^T`, and `A_ik = J_k (M^-1 J_i^T)`. Dense: the
/// product `J (M^-1 J^T)`, `nefc^2 nv` multiply-adds. Sparse: each entry is the dot product of
/// a sparse row with a dense column, `nefc^2 / 2` times a row's length (`A` is symmetric).
/// Either way the nonzeros of `AR` are kept by rows in [`Dual::ar_rows`].
pub fn make_dual_storage(smooth: &Smooth, efc: &Efc, storage: JacStorage) -> Result<Dual> {
    dual_of_rows(smooth, efc, storage, &efc.sparse_rows())
}

/// [`make_dual_storage`] with the sparse rows `jac` of `efc.j` already made.
fn dual_of_rows(smooth: &Smooth, efc: &Efc, storage: JacStorage, jac: &SparseRows) -> Result<Dual> {
    let (nv, n) = (smooth.layout.nv, efc.nefc());
    let mut b = vec![0.0; n];
    let mut ar = DMatrix::zeros(n, n);
    match storage {
        JacStorage::Dense => {
            let mut minv_jt = DMatrix::zeros(nv, n);
            let mut col = vec![0.0; nv];
            for i in 0..n {
                for k in 0..nv {
                    col[k] = efc.j[(i, k)];
                }
                solve_m(smooth, &mut col)?;
                minv_jt.column_mut(i).copy_from_slice(&col);
            }
            ar = &efc.j * minv_jt;
            mul_j(efc, smooth.qacc_smooth, &mut b);
        }
        JacStorage::Sparse => {
            let mut col = vec![0.0; nv];
            for i in 0..n {
                col.fill(0.0);
                let (cols, vals) = jac.row(i);
                for (&c, &v) in cols.iter().zip(vals) {
                    col[c] = v;
                }
                solve_m(smooth, &mut col)?;
                for k in 0..=i {
                    let a = jac.dot_row(k, &col);
                    ar[(i, k)] = a;
                    ar[(k, i)] = a;
                }
            }
            jac.mul(smooth.qacc_smooth, &mut b);
        }
    }
    for i in 0..n {
        ar[(i, i)] += efc.r[i];
    }
    for (bi, a) in b.iter_mut().zip(&efc.aref) {
        *bi -= a;
    }
    // AR is symmetric: its columns, contiguous in column-major storage, are its rows
    let mut ar_rows = SparseRows::new(n);
    for i in 0..n {
        ar_rows.push_dense_row(ar.column(i).iter().copied());
    }
    Ok(Dual { ar, ar_rows, b })
}
// ANCHOR_END: make_dual

/// The dual cost `1/2 f^T AR f + f^T b`.
pub fn dual_cost(dual: &Dual, f: &[f64]) -> f64 {
    let mut c = 0.0;
    for (i, fi) in f.iter().enumerate() {
        if *fi != 0.0 {
            c += fi * (0.5 * dual.ar_rows.dot_row(i, f) + dual.b[i]);
        }
    }
    c
}

/// The starting forces (MuJoCo's `warmstart` for PGS): zero, or the forces
/// [`update`] gives at `J qacc_warmstart - aref` when their dual cost is not positive.
pub fn initial_force(efc: &Efc, cones: &[Cone], dual: &Dual, opts: &SolverOptions) -> Vec<f64> {
    let n = efc.nefc();
    let mut f = vec![0.0; n];
    if let Some(w) = &opts.warmstart {
        let mut jar = vec![0.0; n];
        mul_j(efc, w, &mut jar);
        for (x, a) in jar.iter_mut().zip(&efc.aref) {
            *x -= a;
        }
        let mut st = vec![EfcState::Satisfied; n];
        update(efc, cones, &jar, &mut f, &mut st, None);
        if dual_cost(dual, &f) > 0.0 {
            f.fill(0.0);
        }
    }
    f
}

// ANCHOR: dual_state
/// MuJoCo's `dualState`: the state of each row read from its force, and the number of active
/// rows. Friction loss at `-eta` is LINEARPOS and at `+eta` LINEARNEG (the primal's sign); a
/// one-sided row is QUADRATIC when pushing; an elliptic block, in the coordinates
/// `N = f_0 / mu`, `T = |(f_j / mu_j)_j|`, is SATISFIED for `mu N >= T`, QUADRATIC for
/// `N + mu T <= 0` and CONE between.
pub fn dual_state(efc: &Efc, cones: &[Cone], force: &[f64], state: &mut [EfcState]) -> usize {
    let (ne, nf, n) = (efc.ne, efc.nf, efc.nefc());
    let mut nactive = ne + nf;
    let mut k = 0;
    let mut i = 0;
    // bounded: i grows by 1 or by a cone's dim
    while i < n {
        if i < ne {
            state[i] = EfcState::Quadratic;
        } else if i < ne + nf {
            let eta = efc.frictionloss[i];
            state[i] = if force[i] <= -eta {
                EfcState::LinearPos
            } else if force[i] >= eta {
                EfcState::LinearNeg
            } else {
                EfcState::Quadratic
            };
        } else if efc.efc_type[i] != EfcType::ContactElliptic {
            if force[i] <= 0.0 {
                state[i] = EfcState::Satisfied;
            } else {
                state[i] = EfcState::Quadratic;
                nactive += 1;
            }
        } else {
            let c = &cones[k];
            let nn = force[i] / c.mu;
            let mut t2 = 0.0;
            for j in 1..c.dim {
                t2 += (force[i + j] / c.friction[j - 1]).powi(2);
            }
            let t = t2.sqrt();
            let st = if c.mu * nn >= t {
                EfcState::Satisfied
            } else if nn + c.mu * t <= 0.0 {
                nactive += c.dim;
                EfcState::Quadratic
            } else {
                nactive += c.dim;
                EfcState::Cone
            };
            state[i..i + c.dim].fill(st);
            k += 1;
            i += c.dim;
            continue;
        }
        i += 1;
    }
    nactive
}
// ANCHOR_END: dual_state

// ANCHOR: qcqp
/// MuJoCo's `mju_QCQP` for `n <= 5`: minimize `1/2 x^T A x + b^T x` subject to
/// `sum (x_j / d_j)^2 <= r^2`. With `x = D y` the constraint is the ball `|y| <= r`; the
/// minimizer is `y(lambda) = -(A~ + lambda I)^-1 b~` for the smallest `lambda >= 0` with
/// `|y| <= r`, found by at most 20 Newton steps on `phi(lambda) = |y|^2 - r^2` (convex and
/// decreasing, so Newton from 0 approaches the root from below). Returns `x` in `out[..n]` and
/// whether the constraint is active; an `A~ + lambda I` that is not positive definite (pivot
/// below 1e-10) gives `x = 0`. `a` is row-major n x n.
pub fn qcqp(a: &[f64; 25], b: &[f64; 5], d: &[f64; 5], r: f64, n: usize, out: &mut [f64; 5]) -> bool {
    let mut at = [0.0; 25];
    let mut bt = [0.0; 5];
    for i in 0..n {
        bt[i] = b[i] * d[i];
        for j in 0..n {
            at[i * n + j] = a[i * n + j] * d[i] * d[j];
        }
    }
    let mut lambda: f64 = 0.0;
    let mut y = [0.0; 5];
    let mut l = [0.0; 25];
    for _ in 0..20 {
        // Cholesky of A~ + lambda I
        for i in 0..n {
            for j in 0..n {
                l[i * n + j] = at[i * n + j] + if i == j { lambda } else { 0.0 };
            }
        }
        if !small_cholesky(&mut l, n) {
            out.fill(0.0);
            return false;
        }
        y[..n].copy_from_slice(&bt[..n]);
        small_solve(&l, n, &mut y);
        for v in y.iter_mut().take(n) {
            *v = -*v;
        }
        let phi = y[..n].iter().map(|v| v * v).sum::<f64>() - r * r;
        if phi < 1e-10 {
            break;
        }
        // phi' = -2 y^T (A~ + lambda I)^-1 y
        let mut z = y;
        small_solve(&l, n, &mut z);
        let dphi = -2.0 * (0..n).map(|i| y[i] * z[i]).sum::<f64>();
        let step = -phi / dphi;
        if step < 1e-10 {
            break;
        }
        lambda += step;
    }
    for i in 0..n {
        out[i] = y[i] * d[i];
    }
    lambda != 0.0
}
// ANCHOR_END: qcqp

/// In-place Cholesky `L L^T` of a row-major n x n (lower triangle); false if a pivot is below
/// 1e-10 (`mju_cholFactor`'s `mindiag`).
fn small_cholesky(l: &mut [f64; 25], n: usize) -> bool {
    for j in 0..n {
        let mut dj = l[j * n + j];
        for k in 0..j {
            dj -= l[j * n + k] * l[j * n + k];
        }
        if !(dj >= 1e-10) {
            return false;
        }
        let dj = dj.sqrt();
        l[j * n + j] = dj;
        for i in j + 1..n {
            let mut s = l[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / dj;
        }
    }
    true
}

/// `x <- (L L^T)^-1 x` with the factor of [`small_cholesky`].
fn small_solve(l: &[f64; 25], n: usize, x: &mut [f64; 5]) {
    for i in 0..n {
        let mut s = x[i];
        for k in 0..i {
            s -= l[i * n + k] * x[k];
        }
        x[i] = s / l[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for k in i + 1..n {
            s -= l[k * n + i] * x[k];
        }
        x[i] = s / l[i * n + i];
    }
}

/// Scales the friction forces onto the ellipse `sum (f_j / mu_j)^2 = f_0^2` (MuJoCo's
/// `projectEllipsoid` with `feasible = 0`).
fn project_ellipse(friction: &mut [f64], normal: f64, mu: &[f64]) {
    let s: f64 = friction.iter().zip(mu).map(|(f, m)| (f / m).powi(2)).sum();
    let scl = (normal * normal / s.max(mjMINVAL)).sqrt();
    for f in friction.iter_mut() {
        *f *= scl;
    }
}

// ANCHOR: cost_change
/// MuJoCo's `costChange`: the dual cost change `1/2 delta^T A_b delta + delta^T res` of moving a
/// block from `old` to `f` (`res` the block's residual at `old`); a change above 1e-10 restores
/// `old` and counts as 0.
pub fn cost_change(ab: &[f64; 36], dim: usize, f: &mut [f64], old: &[f64], res: &[f64]) -> f64 {
    let mut change = 0.0;
    for a in 0..dim {
        let da = f[a] - old[a];
        change += da * res[a];
        for b in 0..dim {
            change += 0.5 * da * ab[a * dim + b] * (f[b] - old[b]);
        }
    }
    if change > 1e-10 {
        f[..dim].copy_from_slice(&old[..dim]);
        0.0
    } else {
        change
    }
}
// ANCHOR_END: cost_change

// ANCHOR: solve_pgs
/// MuJoCo's `mj_solPGS` with the classic sequential sweep (spec 5.2), then `mj_dualFinish`:
/// `qfrc_constraint = J^T f`, `qacc = qacc_smooth + M^-1 J^T f`. Stops when a sweep's scaled
/// improvement is below `tolerance` or after `iterations` sweeps. Inputs assumed checked by
/// [`super::solve`].
pub fn solve_pgs(smooth: &Smooth, efc: &Efc, cones: &[Cone], opts: &SolverOptions) -> Result<SolverResult> {
    solve_pgs_with(smooth, efc, cones, opts, PgsVariant::Classic)
}

/// Which PGS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgsVariant {
    /// Blocks in row order, no momentum (spec 5.2; what [`solve_pgs`] runs).
    Classic,
    /// MuJoCo since 3.8: the blocks visited in an order reshuffled every sweep (Fisher-Yates with
    /// a PCG32 generator seeded as MuJoCo seeds it), and Nesterov momentum with restarts.
    Accelerated,
}

/// [`solve_pgs_storage`] on the sparse route.
pub fn solve_pgs_with(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
) -> Result<SolverResult> {
    solve_pgs_storage(smooth, efc, cones, opts, variant, JacStorage::Sparse)
}

/// [`solve_pgs`] in either [`PgsVariant`], with `AR` made on either route
/// ([`make_dual_storage`]); a sweep reads the rows of `AR` by their nonzeros. With momentum, before each sweep the forces are
/// extrapolated, `f <- f + beta (f - f_prev)`, `beta = (k - 1)/(k + 2)`, and put back in their
/// sets ([`project`]); `k` restarts at 0 when the sweep's correction opposes the extrapolation
/// (O'Donoghue and Candes' gradient restart), so the dual cost need not fall monotonically.
pub fn solve_pgs_storage(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
    storage: JacStorage,
) -> Result<SolverResult> {
    let (nv, n) = (smooth.layout.nv, efc.nefc());
    let (ne, nf) = (efc.ne, efc.nf);
    let accelerated = variant == PgsVariant::Accelerated;
    let jac = efc.sparse_rows();
    let dual = dual_of_rows(smooth, efc, storage, &jac)?;
    let mut jtf = vec![0.0; 2 * nv];
    let ar = &dual.ar;
    let mut f = initial_force(efc, cones, &dual, opts);
    let mut state = vec![EfcState::Satisfied; n];
    let mut oldstate = state.clone();
    dual_state(efc, cones, &f, &mut state);
    let scale = 1.0 / trace_m(smooth.layout, smooth.qm);
    // the blocks: (first row, rows, cone index or usize::MAX)
    let mut blocks = Vec::new();
    let (mut i, mut kc) = (0, 0);
    // bounded: i grows by 1 or by a cone's dim
    while i < n {
        if efc.efc_type[i] == EfcType::ContactElliptic {
            blocks.push((i, cones[kc].dim, kc));
            i += cones[kc].dim;
            kc += 1;
        } else {
            blocks.push((i, 1, usize::MAX));
            i += 1;
        }
    }
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    let mut rng = Pcg32::mujoco_seed();
    let (mut f_prev, mut f_mom) = (f.clone(), f.clone());
    let mut k_nesterov = 0usize;
    let mut stats = Vec::new();
    // bounded by opts.iterations
    while n > 0 && stats.len() < opts.iterations {
        if accelerated {
            let beta = if stats.is_empty() || k_nesterov < 2 {
                0.0
            } else {
                (k_nesterov as f64 - 1.0) / (k_nesterov as f64 + 2.0)
            };
            if beta > 0.0 {
                for r in 0..n {
                    let saved = f[r];
                    f[r] += beta * (f[r] - f_prev[r]);
                    f_prev[r] = saved;
                }
                project(efc, cones, &mut f);
            } else {
                f_prev.copy_from_slice(&f);
            }
            f_mom.copy_from_slice(&f);
            rng.shuffle(&mut order);
        }
        let mut improvement = 0.0;
        // one sweep
        for &bi in &order {
            let (i, dim, kc) = blocks[bi];
            // residual: res = b + (AR f) of the block
            let mut res = [0.0; 6];
            for j in 0..dim {
                res[j] = dual.b[i + j] + dual.ar_rows.dot_row(i + j, &f);
            }
            let mut old = [0.0; 6];
            old[..dim].copy_from_slice(&f[i..i + dim]);
            let mut ab = [0.0; 36];
            for a in 0..dim {
                for b in 0..dim {
                    ab[a * dim + b] = ar[(i + a, i + b)];
                }
            }
            if dim == 1 {
                f[i] -= res[0] / ab[0];
                if i >= ne && i < ne + nf {
                    f[i] = f[i].clamp(-efc.frictionloss[i], efc.frictionloss[i]);
                } else if i >= ne + nf && f[i] < 0.0 {
                    f[i] = 0.0;
                }
            } else {
                elliptic_block(&ab, dim, &cones[kc].friction, &res, &old, &mut f[i..i + dim]);
            }
            improvement -= cost_change(&ab, dim, &mut f[i..i + dim], &old, &res);
        }
        oldstate.copy_from_slice(&state);
        let nactive = dual_state(efc, cones, &f, &mut state);
        let nchange = state.iter().zip(&oldstate).filter(|(a, b)| a != b).count();
        improvement *= scale;
        if accelerated {
            // restart when the sweep's correction opposes the extrapolation
            let dot: f64 = (0..n).map(|r| (f[r] - f_mom[r]) * (f_mom[r] - f_prev[r])).sum();
            k_nesterov = if !stats.is_empty() && dot < 0.0 {
                0
            } else {
                k_nesterov + 1
            };
        }
        stats.push(SolverStat {
            improvement,
            nactive,
            nchange,
            cost: sweep_cost(smooth, &jac, &dual, efc, &f, &mut jtf)?,
            ..Default::default()
        });
        if improvement < opts.tolerance {
            break;
        }
    }
    // mj_dualFinish
    let mut qacc = vec![0.0; nv];
    jac.mul_t(&f, &mut qacc);
    solve_m(smooth, &mut qacc)?;
    for (a, s) in qacc.iter_mut().zip(smooth.qacc_smooth) {
        *a += s;
    }
    crate::error::check_output("qacc (PGS)", &qacc)?;
    let mut qfrc = vec![0.0; nv];
    jac.mul_t(&f, &mut qfrc);
    Ok(SolverResult {
        qacc,
        efc_force: f,
        efc_state: state,
        qfrc_constraint: qfrc,
        iterations: stats.len(),
        stats,
    })
}
// ANCHOR_END: solve_pgs

/// The dual cost after a sweep, by the factor of `M` rather than `AR`:
/// `1/2 f^T AR f + f^T b = 1/2 u^T M^-1 u + sum_i f_i (R_i f_i / 2 + b_i)` with `u = J^T f`, a
/// sparse product and one solve instead of `nnz(AR)` multiply-adds. Equal to [`dual_cost`] to
/// rounding. `u` is scratch of length `2 nv`.
fn sweep_cost(smooth: &Smooth, jac: &SparseRows, dual: &Dual, efc: &Efc, f: &[f64], u: &mut [f64]) -> Result<f64> {
    let nv = u.len() / 2;
    let (u, minv_u) = u.split_at_mut(nv);
    jac.mul_t(f, u);
    minv_u.copy_from_slice(u);
    solve_m(smooth, minv_u)?;
    let mut c = 0.5 * u.iter().zip(minv_u.iter()).map(|(a, b)| a * b).sum::<f64>();
    for (i, fi) in f.iter().enumerate() {
        c += fi * (0.5 * efc.r[i] * fi + dual.b[i]);
    }
    Ok(c)
}

/// Puts extrapolated forces back in their sets (MuJoCo's clip and `projectCone`): friction loss
/// into `[-eta, eta]`, one-sided rows to `f >= 0`, an elliptic block to zero if its normal force
/// is negative, else its friction scaled onto the ellipse if outside.
pub fn project(efc: &Efc, cones: &[Cone], f: &mut [f64]) {
    let (ne, nf) = (efc.ne, efc.nf);
    for i in ne..ne + nf {
        f[i] = f[i].clamp(-efc.frictionloss[i], efc.frictionloss[i]);
    }
    for i in ne + nf..efc.nefc() {
        if efc.efc_type[i] != EfcType::ContactElliptic && f[i] < 0.0 {
            f[i] = 0.0;
        }
    }
    for c in cones {
        let b = &mut f[c.row..c.row + c.dim];
        let normal = b[0];
        if normal < 0.0 {
            b.fill(0.0);
        } else {
            let m = c.dim - 1;
            let s: f64 = (0..m).map(|j| (b[j + 1] / c.friction[j]).powi(2)).sum();
            if s > normal * normal {
                project_ellipse(&mut b[1..], normal, &c.friction[..m]);
            }
        }
    }
}

/// The PCG32 generator MuJoCo's PGS shuffles with (O'Neill's `pcg32`, XSH-RR output).
#[derive(Clone, Copy, Debug)]
pub struct Pcg32 {
    state: u64,
    inc: u64,
}

impl Pcg32 {
    /// MuJoCo's fixed seed: state 0, increment 1, advanced once.
    pub fn mujoco_seed() -> Self {
        let mut r = Pcg32 { state: 0, inc: 1 };
        r.next_u32();
        r
    }
    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(6364136223846793005).wrapping_add(self.inc | 1);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }
    /// Fisher-Yates, last element first, as MuJoCo's `shuffle_int`.
    pub fn shuffle(&mut self, a: &mut [usize]) {
        for i in (1..a.len()).rev() {
            let j = (self.next_u32() % (i as u32 + 1)) as usize;
            a.swap(i, j);
        }
    }
}

// ANCHOR: elliptic_block
/// The PGS update of one elliptic block (spec 5.2): a normal step (or a ray step along the
/// current force when the normal force is positive), then the friction forces from the QCQP with
/// the normal force fixed. `ab` is the block of AR (row-major dim x dim), `res` its residual at
/// `old`, `f` the block's forces (updated in place).
pub fn elliptic_block(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) {
    if f[0] < mjMINVAL {
        // normal step
        f[0] = (f[0] - res[0] / ab[0]).max(0.0);
        f[1..dim].fill(0.0);
    } else {
        // ray step along v = f
        let mut v = [0.0; 6];
        v[..dim].copy_from_slice(&f[..dim]);
        let mut vav = 0.0;
        let mut vres = 0.0;
        for a in 0..dim {
            vres += v[a] * res[a];
            for b in 0..dim {
                vav += v[a] * ab[a * dim + b] * v[b];
            }
        }
        if vav >= mjMINVAL {
            let mut x = -vres / vav;
            if f[0] + x * v[0] < 0.0 {
                x = -v[0] / f[0];
            }
            for a in 0..dim {
                f[a] += x * v[a];
            }
        }
    }
    // friction step: A_c = AR[1:, 1:], b_c = res[1:] - A_c f_old[1:] + AR[1:, 0] (f_0 - f_0,old)
    let m = dim - 1;
    let mut ac = [0.0; 25];
    let mut bc = [0.0; 5];
    for a in 0..m {
        bc[a] = res[a + 1] + ab[(a + 1) * dim] * (f[0] - old[0]);
        for b in 0..m {
            ac[a * m + b] = ab[(a + 1) * dim + b + 1];
            bc[a] -= ac[a * m + b] * old[b + 1];
        }
    }
    if f[0] < mjMINVAL {
        f[1..dim].fill(0.0);
    } else {
        let mut x = [0.0; 5];
        if qcqp(&ac, &bc, mu, f[0], m, &mut x) {
            project_ellipse(&mut x[..m], f[0], &mu[..m]);
        }
        f[1..dim].copy_from_slice(&x[..m]);
    }
}
// ANCHOR_END: elliptic_block
