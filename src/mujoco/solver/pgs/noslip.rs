//! MuJoCo's noslip pass (`mj_solNoSlip`, `<option noslip_iterations>`): after the main solver,
//! Gauss-Seidel sweeps over the friction forces alone on the dual problem *without* the
//! regularizer, `A = J M^-1 J^T = AR - R`, with every normal force held where the solver left
//! it. The soft model lets a contact that should stick creep (its friction force is
//! `-R^-1`-proportional to a small slip acceleration); the pass removes that part. Book:
//! "Solvers", section "The noslip pass".

use super::super::super::constraint::{Efc, EfcType};
use super::super::cost::Cone;
use super::super::{trace_m, JacStorage, Smooth, SolverOptions, SolverResult, SolverStat};
use super::{cost_change, dot4, dual_finish, dual_state, friction_qcqp, prepare, PgsScratch};
use crate::error::Result;
use crate::model::constants::mjMINVAL;

// ANCHOR: noslip
/// MuJoCo's `mj_solNoSlip` on the forces `out.efc_force` of a finished solve, then
/// `mj_dualFinish` (`qfrc_constraint`, `qacc`). Each sweep visits, in row order:
/// - a friction-loss row: the exact minimizer along the row, clamped to `[-eta, eta]`;
/// - a pyramidal contact: each pair of opposite edges `(f_j, f_j+1)` keeps its sum `2 m` (the
///   pair's share of the normal force) and moves its difference, `f_j = m + y`,
///   `f_j+1 = m - y`, to the minimum over `y` in `[-m, m]`;
/// - an elliptic contact: its friction forces with the normal fixed, the QCQP of
///   `friction_qcqp` inside the ellipse of radius `f_0`.
///
/// Equality, limit and frictionless contact rows keep their forces. Every step minimizes
/// `1/2 f^T A f + f^T b` with `A = AR - diag(R)` (its diagonal floored at `mjMINVAL` for a
/// scalar row's step and at 1e-10 in a block), that is the residual `r = b + A f = J qacc - aref`
/// of the hard problem. A block step that would raise that cost is undone ([`cost_change`]).
/// The pass stops after `opts.noslip_iterations` sweeps or when a sweep's scaled improvement
/// is below `opts.noslip_tolerance`; its statistics follow the solver's in `out.stats` (the
/// first counts the `1/2 R f^2` that dropping `R` removes from the cost) and its sweeps add to
/// `out.iterations`, as MuJoCo's `solver_niter`.
///
/// `prepared`: `s` already holds this problem's `AR` and `b` (the main solver was PGS, in `s`);
/// otherwise they are made here (`prepare`: `make_y`, `make_ar_blocks`). No allocation once `s` has seen the sizes.
#[allow(clippy::too_many_arguments)]
pub fn noslip_into(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    storage: JacStorage,
    prepared: bool,
    s: &mut PgsScratch,
    out: &mut SolverResult,
) -> Result<()> {
    if !prepared {
        prepare(smooth, efc, storage, s)?;
    }
    let (n, ne, nf) = (efc.nefc(), efc.ne, efc.nf);
    let dense = storage == JacStorage::Dense;
    // the reciprocal diagonal of A = AR - R (MuJoCo's ARdiaginv with flg_subR)
    s.ainv.clear();
    for i in 0..n {
        let aii = s.ar_entry(n, dense, i, i) - efc.r[i];
        s.ainv.push(1.0 / aii.max(mjMINVAL));
    }
    let f = &mut out.efc_force;
    let state = &mut out.efc_state;
    dual_state(efc, cones, f, state);
    let scale = 1.0 / trace_m(smooth.layout, smooth.qm);
    // r_j = b_j + (A f)_j: MuJoCo's `residual` with flg_subR
    let residual = |s: &PgsScratch, f: &[f64], j: usize| s.b[j] + s.ar_dot(n, dense, j, f) - efc.r[j] * f[j];
    // A's block on rows start.. start + m, stride m, diagonal floored at 1e-10 (`extractBlock`)
    let block = |s: &PgsScratch, start: usize, m: usize| {
        let mut a = [0.0; 36];
        for p in 0..m {
            for q in 0..m {
                a[p * m + q] = s.ar_entry(n, dense, start + p, start + q);
            }
            a[p * m + p] = (a[p * m + p] - efc.r[start + p]).max(1e-10);
        }
        a
    };
    let first = out.stats.len();
    // bounded by opts.noslip_iterations
    while out.stats.len() - first < opts.noslip_iterations {
        let mut improvement = 0.0;
        if out.stats.len() == first {
            // the cost loses its 1/2 R f^2 when R is dropped
            improvement = (0..n).map(|i| 0.5 * f[i] * f[i] * efc.r[i]).sum();
        }
        // friction loss: exact step on the row, clamped to the interval
        for i in ne..ne + nf {
            let res = residual(s, f, i);
            let old = f[i];
            f[i] = (f[i] - res * s.ainv[i]).clamp(-efc.frictionloss[i], efc.frictionloss[i]);
            let delta = f[i] - old;
            improvement -= 0.5 * delta * delta / s.ainv[i] + delta * res;
        }
        // contacts: the friction forces of each, its normal force fixed
        let (mut i, mut kc) = (ne + nf, 0);
        // bounded: i grows by 1 or by the rows of a contact
        while i < n {
            match efc.efc_type[i] {
                EfcType::ContactPyramidal => {
                    let mut end = i + 1;
                    while end < n && efc.efc_type[end] == EfcType::ContactPyramidal && efc.efc_id[end] == efc.efc_id[i]
                    {
                        end += 1;
                    }
                    if (end - i) % 2 != 0 {
                        return Err(crate::error::Error::InvalidArgument {
                            what: format!("pyramidal contact {} (rows {i}..{end})", efc.efc_id[i]),
                            why: "a pyramid has pairs of opposite edges: an even number of rows".into(),
                        });
                    }
                    for j in (i..end).step_by(2) {
                        let res = [residual(s, f, j), residual(s, f, j + 1)];
                        let old = [f[j], f[j + 1]];
                        let a = block(s, j, 2);
                        improvement -= edge_pair(&a, &res, &old, &mut f[j..j + 2]);
                    }
                    i = end;
                }
                EfcType::ContactElliptic => {
                    let c = &cones[kc];
                    let m = c.dim - 1;
                    let mut res = [0.0; 6];
                    let mut old = [0.0; 6];
                    for p in 0..m {
                        res[p] = residual(s, f, i + 1 + p);
                        old[p] = f[i + 1 + p];
                    }
                    let a = block(s, i + 1, m);
                    // b_c = r - A_c f_old: the block's own linear term
                    let mut ac = [0.0; 25];
                    let mut bc = [0.0; 5];
                    for p in 0..m {
                        ac[p * m..(p + 1) * m].copy_from_slice(&a[p * m..(p + 1) * m]);
                        bc[p] = res[p] - dot4(&a[p * m..(p + 1) * m], &old[..m]);
                    }
                    let (normal, friction) = f[i..i + c.dim].split_at_mut(1);
                    friction_qcqp(&ac, &bc, &c.friction, normal[0], m, friction);
                    improvement -= cost_change(&a, m, friction, &old[..m], &res[..m]);
                    i += c.dim;
                    kc += 1;
                }
                _ => i += 1,
            }
        }
        s.oldstate.clear();
        s.oldstate.extend_from_slice(state);
        let nactive = dual_state(efc, cones, f, state);
        let nchange = state.iter().zip(&s.oldstate).filter(|(a, b)| a != b).count();
        improvement *= scale;
        out.stats.push(SolverStat {
            improvement,
            nactive,
            nchange,
            ..Default::default()
        });
        if improvement < opts.noslip_tolerance {
            break;
        }
    }
    out.iterations += out.stats.len() - first;
    dual_finish(smooth, efc, out, "qacc (noslip)")
}

/// One pair of opposite pyramid edges (rows `j`, `j+1`; `a` their 2 x 2 block of `A`, `res`
/// their residual at `old`): with `f_j = m + y`, `f_j+1 = m - y` the sum `2 m` stays and the
/// cost is a parabola in `y`, `1/2 K1 y^2 + K0 y`, `K1 = A00 + A11 - 2 A01`,
/// `K0 = m (A00 - A11) + c0 - c1` with `c = res - A old`; its minimum is clamped to `[-m, m]`
/// (both edges non-negative). Returns the cost change ([`cost_change`], which undoes a rise).
pub fn edge_pair(a: &[f64; 36], res: &[f64; 2], old: &[f64; 2], f: &mut [f64]) -> f64 {
    let c = [
        res[0] - (a[0] * old[0] + a[1] * old[1]),
        res[1] - (a[2] * old[0] + a[3] * old[1]),
    ];
    let mid = 0.5 * (f[0] + f[1]);
    let k1 = a[0] + a[3] - a[1] - a[2];
    let k0 = mid * (a[0] - a[3]) + c[0] - c[1];
    if k1 < mjMINVAL {
        f[0] = mid;
        f[1] = mid;
    } else {
        let y = -k0 / k1;
        if y < -mid {
            f[0] = 0.0;
            f[1] = 2.0 * mid;
        } else if y > mid {
            f[0] = 2.0 * mid;
            f[1] = 0.0;
        } else {
            f[0] = mid + y;
            f[1] = mid - y;
        }
    }
    cost_change(a, 2, f, old, res)
}
// ANCHOR_END: noslip
