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

mod dual;
pub mod noslip;
pub use dual::{dual_cost, make_ar, make_ar_blocks, make_dual, make_dual_storage, make_y, Dual};
use dual::{Neighbour, YBlock};

/// The starting forces (MuJoCo's `warmstart` for PGS): zero, or the forces
/// [`update`] gives at `J qacc_warmstart - aref` when their dual cost is not positive.
pub fn initial_force(efc: &Efc, cones: &[Cone], dual: &Dual, opts: &SolverOptions) -> Vec<f64> {
    let mut f = vec![0.0; efc.nefc()];
    let (mut jar, mut st) = (Vec::new(), Vec::new());
    warm_force(efc, cones, opts, &mut f, &mut jar, &mut st, |f| dual_cost(dual, f));
    f
}

/// [`initial_force`] into `f`, with the dual cost given by `cost`; `jar` and `st` are scratch
/// (resized to nefc, no allocation once they have grown).
fn warm_force(
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    f: &mut [f64],
    jar: &mut Vec<f64>,
    st: &mut Vec<EfcState>,
    mut cost: impl FnMut(&[f64]) -> f64,
) {
    f.fill(0.0);
    if let Some(w) = &opts.warmstart {
        let n = efc.nefc();
        jar.clear();
        jar.resize(n, 0.0);
        mul_j(efc, w, jar);
        for (x, a) in jar.iter_mut().zip(&efc.aref) {
            *x -= a;
        }
        st.clear();
        st.resize(n, EfcState::Satisfied);
        update(efc, cones, jar, f, st, None);
        if cost(f) > 0.0 {
            f.fill(0.0);
        }
    }
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
/// below 1e-10) gives `x = 0`. `a` is row-major n x n. For `n = 2` and `3` (condim 3 and 4)
/// the inverse comes from the adjugate instead of a factorization ([`qcqp_adjugate`], MuJoCo's
/// `mju_QCQP2` and `mju_QCQP3`).
pub fn qcqp(a: &[f64; 25], b: &[f64; 5], d: &[f64; 5], r: f64, n: usize, out: &mut [f64; 5]) -> bool {
    if n == 2 || n == 3 {
        return qcqp_adjugate(a, b, d, r, n, out);
    }
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

/// [`qcqp`] for `n = 2` or `3` with `P = (A~ + lambda I)^-1 = adj / det` written out: the same
/// Newton steps on `phi(lambda) = |y|^2 - r^2`, `y = -P b~`, `phi' = -2 y^T P y`, and `x = 0`
/// when `det < 1e-10` (MuJoCo's test in `mju_QCQP2`, `mju_QCQP3`).
pub fn qcqp_adjugate(a: &[f64; 25], b: &[f64; 5], d: &[f64; 5], r: f64, n: usize, out: &mut [f64; 5]) -> bool {
    qcqp_adjugate_body(a, b, d, r, n, out)
}

/// The body of [`qcqp_adjugate`], inlined into the sweep with `n` a constant ([`elliptic_update`]).
#[inline(always)]
fn qcqp_adjugate_body(a: &[f64; 25], b: &[f64; 5], d: &[f64; 5], r: f64, n: usize, out: &mut [f64; 5]) -> bool {
    // A~ = D A D (symmetric: the upper triangle is read), b~ = D b
    let mut atd = [[0.0; 3]; 3];
    for i in 0..n {
        for j in i..n {
            atd[i][j] = a[i * n + j] * d[i] * d[j];
        }
    }
    let at = |i: usize, j: usize| atd[i][j];
    let bt = [b[0] * d[0], b[1] * d[1], if n == 3 { b[2] * d[2] } else { 0.0 }];
    let mut lambda: f64 = 0.0;
    let mut y = [0.0; 3];
    for _ in 0..20 {
        // P, symmetric, as [P11, P22, P33, P12, P13, P23]
        let p = if n == 2 {
            let (a11, a22, a12) = (at(0, 0) + lambda, at(1, 1) + lambda, at(0, 1));
            let det = a11 * a22 - a12 * a12;
            if det < 1e-10 {
                out[..n].fill(0.0);
                return false;
            }
            let inv = 1.0 / det;
            [a22 * inv, a11 * inv, 0.0, -a12 * inv, 0.0, 0.0]
        } else {
            let (a11, a22, a33) = (at(0, 0) + lambda, at(1, 1) + lambda, at(2, 2) + lambda);
            let (a12, a13, a23) = (at(0, 1), at(0, 2), at(1, 2));
            // the adjugate's entries, then det by the first row
            let c = [
                a22 * a33 - a23 * a23,
                a11 * a33 - a13 * a13,
                a11 * a22 - a12 * a12,
                a13 * a23 - a12 * a33,
                a12 * a23 - a13 * a22,
                a12 * a13 - a23 * a11,
            ];
            let det = a11 * c[0] + a12 * c[3] + a13 * c[4];
            if det < 1e-10 {
                out[..n].fill(0.0);
                return false;
            }
            let inv = 1.0 / det;
            c.map(|x| x * inv)
        };
        let [p11, p22, p33, p12, p13, p23] = p;
        y = [
            -p11 * bt[0] - p12 * bt[1] - p13 * bt[2],
            -p12 * bt[0] - p22 * bt[1] - p23 * bt[2],
            -p13 * bt[0] - p23 * bt[1] - p33 * bt[2],
        ];
        let phi = y[0] * y[0] + y[1] * y[1] + y[2] * y[2] - r * r;
        if phi < 1e-10 {
            break;
        }
        let dphi = -2.0 * (p11 * y[0] * y[0] + p22 * y[1] * y[1] + p33 * y[2] * y[2])
            - 4.0 * (p12 * y[0] * y[1] + p13 * y[0] * y[2] + p23 * y[1] * y[2]);
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
    cost_change_body(ab, dim, f, old, res)
}

/// The body of [`cost_change`] (see [`elliptic_block_body`]).
#[inline(always)]
fn cost_change_body(ab: &[f64; 36], dim: usize, f: &mut [f64], old: &[f64], res: &[f64]) -> f64 {
    let mut delta = [0.0; 6];
    for a in 0..dim {
        delta[a] = f[a] - old[a];
    }
    let (mut quad, mut lin) = (0.0, 0.0);
    for a in 0..dim {
        let mut ad = 0.0;
        for b in 0..dim {
            ad += ab[a * dim + b] * delta[b];
        }
        quad += delta[a] * ad;
        lin += delta[a] * res[a];
    }
    let change = 0.5 * quad + lin;
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

/// [`solve_pgs_into`] with fresh storage, returning the result.
pub fn solve_pgs_storage(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
    storage: JacStorage,
) -> Result<SolverResult> {
    let mut out = SolverResult::default();
    solve_pgs_into(
        smooth,
        efc,
        cones,
        opts,
        variant,
        storage,
        &mut PgsScratch::default(),
        &mut out,
    )?;
    Ok(out)
}

/// [`solve_pgs`] in either [`PgsVariant`], with a sweep reading `AR` by dense rows
/// ([`JacStorage::Dense`], MuJoCo's choice below 60 dofs) or by their nonzeros
/// ([`JacStorage::Sparse`]); `AR` itself is made once, from the nonzeros of `Y = J M^-1/2`
/// ([`make_y`], [`make_ar`]). A scalar row steps by MuJoCo's `f_i <- f_i - r_i / AR_ii` with
/// the reciprocal kept (`ARinv`). With momentum, before each sweep the forces are
/// extrapolated, `f <- f + beta (f - f_prev)`, `beta = (k - 1)/(k + 2)`, and put back in their
/// sets ([`project`]); `k` restarts at 0 when the sweep's correction opposes the extrapolation
/// (O'Donoghue and Candes' gradient restart), so the dual cost need not fall monotonically.
/// All storage is `s` and `out`, reused: no allocation once they have seen the sizes.
#[allow(clippy::too_many_arguments)]
pub fn solve_pgs_into(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
    storage: JacStorage,
    s: &mut PgsScratch,
    out: &mut SolverResult,
) -> Result<()> {
    crate::sparse::with_avx(
        #[inline(always)]
        || solve_pgs_into_body(smooth, efc, cones, opts, variant, storage, s, out),
    )
}

/// The body of [`solve_pgs_into`], compiled for AVX where the processor has it (the same numbers
/// bit for bit: only the width of the vector instructions differs).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn solve_pgs_into_body(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
    storage: JacStorage,
    s: &mut PgsScratch,
    out: &mut SolverResult,
) -> Result<()> {
    let (nv, n) = (smooth.layout.nv, efc.nefc());
    let (ne, nf) = (efc.ne, efc.nf);
    let accelerated = variant == PgsVariant::Accelerated;
    let dense = storage == JacStorage::Dense;
    prepare(smooth, efc, storage, s)?;
    // the blocks: (first row, rows, cone index or usize::MAX), and AR's block of each cone
    s.blocks.clear();
    s.ablock.clear();
    let (mut i, mut kc) = (0, 0);
    // bounded: i grows by 1 or by a cone's dim
    while i < n {
        if efc.efc_type[i] == EfcType::ContactElliptic {
            let dim = cones[kc].dim;
            s.blocks.push((i, dim, kc));
            let mut ab = [0.0; 36];
            for a in 0..dim {
                for b in 0..dim {
                    ab[a * dim + b] = s.ar_entry(n, dense, i + a, i + b);
                }
            }
            s.ablock.push(ab);
            i += dim;
            kc += 1;
        } else {
            s.blocks.push((i, 1, usize::MAX));
            i += 1;
        }
    }
    let f = &mut out.efc_force;
    f.clear();
    f.resize(n, 0.0);
    if opts.warmstart.is_some() {
        // the warm start's scratch, taken out of `s` while its cost reads `s`
        let mut jar = std::mem::take(&mut s.warm_jar);
        let mut st = std::mem::take(&mut s.warm_state);
        let mut u = std::mem::take(&mut s.warm_u);
        u.clear();
        u.resize(nv, 0.0);
        let sr: &PgsScratch = s;
        warm_force(efc, cones, opts, f, &mut jar, &mut st, |f| sr.cost(&efc.r, f, &mut u));
        (s.warm_jar, s.warm_state, s.warm_u) = (jar, st, u);
    }
    let state = &mut out.efc_state;
    state.clear();
    state.resize(n, EfcState::Satisfied);
    dual_state(efc, cones, f, state);
    let scale = 1.0 / trace_m(smooth.layout, smooth.qm);
    s.order.clear();
    s.order.extend(0..s.blocks.len());
    let mut rng = Pcg32::mujoco_seed();
    s.f_prev.clear();
    s.f_prev.extend_from_slice(f);
    s.f_mom.clear();
    s.f_mom.extend_from_slice(f);
    s.u.clear();
    s.u.resize(nv, 0.0);
    let mut k_nesterov = 0usize;
    let stats = &mut out.stats;
    stats.clear();
    // bounded by opts.iterations
    while n > 0 && stats.len() < opts.iterations {
        if accelerated {
            let beta = if stats.is_empty() || k_nesterov < 2 {
                0.0
            } else {
                (k_nesterov as f64 - 1.0) / (k_nesterov as f64 + 2.0)
            };
            if beta > 0.0 {
                for (fr, prev) in f.iter_mut().zip(s.f_prev.iter_mut()) {
                    let saved = *fr;
                    *fr += beta * (*fr - *prev);
                    *prev = saved;
                }
                project(efc, cones, f);
            } else {
                s.f_prev.copy_from_slice(f);
            }
            s.f_mom.copy_from_slice(f);
            rng.shuffle(&mut s.order);
        }
        let mut improvement = 0.0;
        // one sweep
        for &bi in &s.order {
            let (i, dim, kc) = s.blocks[bi];
            if dim == 1 {
                // residual, exact step, clamp, cost change (MuJoCo's costChange for dim 1)
                let res = s.b[i] + s.ar_dot(n, dense, i, f);
                let old = f[i];
                f[i] -= res * s.arinv[i];
                if i >= ne && i < ne + nf {
                    f[i] = f[i].clamp(-efc.frictionloss[i], efc.frictionloss[i]);
                } else if i >= ne + nf && f[i] < 0.0 {
                    f[i] = 0.0;
                }
                let delta = f[i] - old;
                let change = 0.5 * delta * delta * s.ardiag[i] + delta * res;
                if change > 1e-10 {
                    f[i] = old;
                } else {
                    improvement -= change;
                }
            } else {
                let mut res = [0.0; 6];
                for (j, r) in res.iter_mut().enumerate().take(dim) {
                    *r = s.b[i + j] + s.ar_dot(n, dense, i + j, f);
                }
                let mut old = [0.0; 6];
                old[..dim].copy_from_slice(&f[i..i + dim]);
                let ab = &s.ablock[kc];
                improvement -= elliptic_update(ab, dim, &cones[kc].friction, &res, &old, &mut f[i..i + dim]);
            }
        }
        s.oldstate.clear();
        s.oldstate.extend_from_slice(state);
        let nactive = dual_state(efc, cones, f, state);
        let nchange = state.iter().zip(&s.oldstate).filter(|(a, b)| a != b).count();
        improvement *= scale;
        if accelerated {
            // restart when the sweep's correction opposes the extrapolation
            let dot: f64 = (0..n).map(|r| (f[r] - s.f_mom[r]) * (s.f_mom[r] - s.f_prev[r])).sum();
            k_nesterov = if !stats.is_empty() && dot < 0.0 {
                0
            } else {
                k_nesterov + 1
            };
        }
        let cost = if s.skip_cost {
            0.0
        } else {
            let mut u = std::mem::take(&mut s.u);
            let c = s.cost(&efc.r, f, &mut u);
            s.u = u;
            c
        };
        stats.push(SolverStat {
            improvement,
            nactive,
            nchange,
            cost,
            ..Default::default()
        });
        if improvement < opts.tolerance {
            break;
        }
    }
    out.iterations = stats.len();
    dual_finish(smooth, efc, out, "qacc (PGS)")
}
// ANCHOR_END: solve_pgs

/// MuJoCo's `mj_dualFinish`: from the forces of a dual solve, `qfrc_constraint = J^T f` and
/// `qacc = qacc_smooth + M^-1 qfrc_constraint`; `what` names the output in the error of a
/// non-finite `qacc`.
pub(crate) fn dual_finish(smooth: &Smooth, efc: &Efc, out: &mut SolverResult, what: &str) -> Result<()> {
    let nv = smooth.layout.nv;
    out.qfrc_constraint.clear();
    out.qfrc_constraint.resize(nv, 0.0);
    efc.sparse_rows().mul_t(&out.efc_force, &mut out.qfrc_constraint);
    out.qacc.clear();
    out.qacc.extend_from_slice(&out.qfrc_constraint);
    solve_m(smooth, &mut out.qacc)?;
    for (a, s) in out.qacc.iter_mut().zip(smooth.qacc_smooth) {
        *a += s;
    }
    crate::error::check_output(what, &out.qacc)
}

/// What a dual sweep reads, made once per solve into `s`: `Y = J M^-1/2` ([`make_y`]), `AR`
/// with the reciprocals of its diagonal ([`make_ar_blocks`], by dense rows or by their
/// nonzeros), and `b = J qacc_smooth - aref` (MuJoCo's `mj_projectConstraint` and the start of
/// `mj_fwdConstraint`). PGS and the noslip pass ([`noslip::noslip_into`]) share it.
pub(crate) fn prepare(smooth: &Smooth, efc: &Efc, storage: JacStorage, s: &mut PgsScratch) -> Result<()> {
    let jac = efc.sparse_rows();
    make_y(smooth, jac, s)?;
    make_ar_blocks(&efc.r, storage, s);
    if storage == JacStorage::Sparse {
        s.find_runs();
    }
    s.b.clear();
    s.b.resize(efc.nefc(), 0.0);
    jac.mul(smooth.qacc_smooth, &mut s.b);
    for (bi, a) in s.b.iter_mut().zip(&efc.aref) {
        *bi -= a;
    }
    s.ardiag.clear();
    s.ardiag.extend(s.arinv.iter().map(|a| 1.0 / a));
    Ok(())
}

/// The storage of a PGS solve ([`solve_pgs_into`]), kept between calls: `Y`, `AR` and its
/// diagonal's reciprocals, `b`, the blocks and their order, the momentum's copies of the forces.
#[derive(Clone, Debug, Default)]
pub struct PgsScratch {
    /// Leave [`SolverStat::cost`] at 0 instead of computing the dual cost after every sweep
    /// (MuJoCo records no cost; the pipeline [`crate::mujoco::forward::Forward`] skips it).
    pub skip_cost: bool,
    /// `Y = J M^-1/2` by rows (MuJoCo's `efc_Y`).
    pub y: SparseRows,
    /// `AR`, row-major `nefc x nefc` (dense storage).
    pub ar: Vec<f64>,
    /// `AR` by the nonzeros of its rows (sparse storage).
    pub ar_rows: SparseRows,
    /// `1 / AR_ii` (MuJoCo's `ARinv`).
    pub arinv: Vec<f64>,
    /// Per row of `ar_rows`: its first column when its columns are consecutive (the rows of a
    /// box stack's neighbouring contacts are), `usize::MAX` otherwise; [`Self::ar_dot`] then
    /// reads `f` as a contiguous slice, with the same sum.
    ar_first: Vec<usize>,
    /// `1 / ARinv_i`, the `AR_ii` MuJoCo's `costChange` reads for a scalar row.
    ardiag: Vec<f64>,
    /// `b = J a_s - aref` (`efc_b`).
    pub b: Vec<f64>,
    ablock: Vec<[f64; 36]>,
    blocks: Vec<(usize, usize, usize)>,
    order: Vec<usize>,
    f_prev: Vec<f64>,
    f_mom: Vec<f64>,
    oldstate: Vec<EfcState>,
    sqrt_dinv: Vec<f64>,
    u: Vec<f64>,
    yt_adr: Vec<usize>,
    yt_row: Vec<usize>,
    yt_val: Vec<f64>,
    next: Vec<usize>,
    acc: Vec<f64>,
    seen: Vec<bool>,
    touched: Vec<usize>,
    /// Marks: in [`make_y`] the last row that met each dof, in [`make_ar_blocks`] the last block
    /// that met each block.
    mark: Vec<usize>,
    /// [`make_y`]'s blocks of rows with the same columns and `Y` by blocks column by column
    /// (block `b`'s entry `(p, r)` at `b.adr + p m + r`); [`make_ar_blocks`]'s blocks of each
    /// column with the column's place in each, a block's neighbours, their common columns and
    /// the neighbours' common columns gathered.
    yblk: Vec<YBlock>,
    ytb: Vec<f64>,
    col_blk: Vec<(usize, usize)>,
    nbr: Vec<Neighbour>,
    pairs: Vec<(usize, usize)>,
    gath: Vec<f64>,
    /// [`make_y`]'s place of each dof in the current block's pattern.
    place: Vec<usize>,
    /// The warm start's `J qacc_warmstart - aref`, row states and `u` (kept between calls).
    warm_jar: Vec<f64>,
    warm_state: Vec<EfcState>,
    warm_u: Vec<f64>,
    /// The noslip pass's `1 / (AR_ii - R_i)` ([`noslip::noslip_into`]).
    ainv: Vec<f64>,
}

impl PgsScratch {
    /// Storage for solves that skip the cost ([`PgsScratch::skip_cost`]).
    pub fn without_cost() -> Self {
        PgsScratch {
            skip_cost: true,
            ..Default::default()
        }
    }

    /// `AR_ik` from the storage in use.
    fn ar_entry(&self, n: usize, dense: bool, i: usize, k: usize) -> f64 {
        if dense {
            self.ar[i * n + k]
        } else {
            let (cols, vals) = self.ar_rows.row(i);
            cols.binary_search(&k).map_or(0.0, |p| vals[p])
        }
    }

    /// `(AR f)_i`: MuJoCo's `residual` without `b`, over the whole row (dense, `mju_dot`) or its
    /// nonzeros (sparse, `mju_dotSparse`), both with four partial sums.
    #[inline(always)]
    fn ar_dot(&self, n: usize, dense: bool, i: usize, f: &[f64]) -> f64 {
        if dense {
            dot4(&self.ar[i * n..(i + 1) * n], f)
        } else {
            let (a, e) = (self.ar_rows.rowadr[i], self.ar_rows.rowadr[i + 1]);
            let c0 = self.ar_first[i];
            if c0 == usize::MAX {
                dot4_gather(&self.ar_rows.values[a..e], &self.ar_rows.colind[a..e], f)
            } else {
                // the row's columns are c0, c0 + 1, ..: the same sum without the gather
                dot4(&self.ar_rows.values[a..e], &f[c0..c0 + (e - a)])
            }
        }
    }

    /// Fills `ar_first` from `ar_rows`: the first column of each row whose columns are
    /// consecutive, `usize::MAX` for the others.
    fn find_runs(&mut self) {
        let rows = &self.ar_rows;
        self.ar_first.clear();
        self.ar_first.extend((0..rows.nrows()).map(|i| {
            let cols = rows.row(i).0;
            match (cols.first(), cols.last()) {
                (Some(&c0), Some(&c1)) if c1 - c0 + 1 == cols.len() => c0,
                _ => usize::MAX,
            }
        }));
    }

    /// The dual cost by `Y` instead of `AR`: `1/2 f^T AR f + f^T b = 1/2 |Y^T f|^2 + sum_i f_i
    /// (R_i f_i / 2 + b_i)`, a product over the nonzeros of `Y` instead of `nnz(AR)`
    /// multiply-adds. Equal to [`dual_cost`] to rounding. `u` is scratch of length `nv`.
    fn cost(&self, r: &[f64], f: &[f64], u: &mut [f64]) -> f64 {
        self.y.mul_t(f, u);
        let mut c = 0.5 * u.iter().map(|a| a * a).sum::<f64>();
        for (i, fi) in f.iter().enumerate() {
            c += fi * (0.5 * r[i] * fi + self.b[i]);
        }
        c
    }
}

/// `a . b` with four partial sums, added as MuJoCo's `mju_dot` adds them.
#[inline(always)]
fn dot4(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (a4, b4) = (a.chunks_exact(4), b[..a.len()].chunks_exact(4));
    let (ar, br) = (a4.remainder(), b4.remainder());
    for (x, y) in a4.zip(b4) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    for (x, y) in ar.iter().zip(br) {
        s += x * y;
    }
    s
}

/// `sum_t v[t] x[col[t]]` with four partial sums (`mju_dotSparse`).
#[inline(always)]
fn dot4_gather(v: &[f64], col: &[usize], x: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (v4, c4) = (v.chunks_exact(4), col.chunks_exact(4));
    let (vr, cr) = (v4.remainder(), c4.remainder());
    for (v, c) in v4.zip(c4) {
        for k in 0..4 {
            acc[k] += v[k] * x[c[k]];
        }
    }
    let mut s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    for (v, &c) in vr.iter().zip(cr) {
        s += v * x[c];
    }
    s
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
    elliptic_block_body(ab, dim, mu, res, old, f)
}

/// The body of [`elliptic_block`] and [`cost_change`] with `dim` a constant: the sweep calls them
/// through [`elliptic_update`], which inlines them for the condims 3, 4 and 6, so that their
/// loops are unrolled (the same operations in the same order).
#[inline(always)]
fn elliptic_block_body(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) {
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
    let (normal, friction) = f[..dim].split_at_mut(1);
    friction_qcqp(&ac, &bc, mu, normal[0], m, friction);
}
// ANCHOR_END: elliptic_block

// ANCHOR: friction_qcqp
/// The friction forces of an elliptic block with its normal force fixed (MuJoCo's `solveQCQP`
/// and its guard): zero when the normal force is below `mjMINVAL`, else the minimizer of
/// `1/2 x^T A_c x + b_c^T x` inside the ellipse of radius `normal` ([`qcqp`]), put exactly on
/// the ellipse when the constraint is active (the QCQP's Newton iteration stops short of it).
#[inline(always)]
fn friction_qcqp(ac: &[f64; 25], bc: &[f64; 5], mu: &[f64; 5], normal: f64, m: usize, friction: &mut [f64]) {
    if normal < mjMINVAL {
        friction[..m].fill(0.0);
        return;
    }
    let mut x = [0.0; 5];
    let active = if m == 2 || m == 3 {
        qcqp_adjugate_body(ac, bc, mu, normal, m, &mut x)
    } else {
        qcqp(ac, bc, mu, normal, m, &mut x)
    };
    if active {
        project_ellipse(&mut x[..m], normal, &mu[..m]);
    }
    friction[..m].copy_from_slice(&x[..m]);
}
// ANCHOR_END: friction_qcqp

/// [`elliptic_block`] then [`cost_change`] (returned), with the condims 3, 4 and 6 given as
/// constants, so that each is compiled with its loops unrolled: the same numbers bit for bit.
#[inline(always)]
fn elliptic_update(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) -> f64 {
    #[inline(always)]
    fn both(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) -> f64 {
        elliptic_block_body(ab, dim, mu, res, old, f);
        cost_change_body(ab, dim, f, old, res)
    }
    match dim {
        3 => both(ab, 3, mu, res, old, f),
        4 => both(ab, 4, mu, res, old, f),
        6 => both(ab, 6, mu, res, old, f),
        _ => both(ab, dim, mu, res, old, f),
    }
}
