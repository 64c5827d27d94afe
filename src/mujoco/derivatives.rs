//! Finite-difference derivatives of MuJoCo's step and inverse dynamics (`mjd_transitionFD`,
//! `mjd_inverseFD`), the linearization a controller is designed on.
//!
//! The state is `x = (q, v, act)` with `nx = 2 nv + na` coordinates: positions are perturbed on
//! their manifold (`q (+) eps e_i`, [`Model::integrate_with`]) and compared with the
//! quaternion-aware difference (`mj_differentiatePos`, [`Model::difference_with`]), so a ball or
//! free joint contributes 3 columns, not 4. The controls are `u = ctrl` (nu).
//!
//! | MuJoCo | here |
//! |---|---|
//! | `mjd_transitionFD(m, d, eps, flg_centered, A, B, NULL, NULL)` | [`transition_fd`] |
//! | `mj_inverse` (`qfrc_inverse`, with the constraint stage: `- qfrc_constraint` at the given `qacc`) | [`inverse`] |
//! | `mjd_inverseFD(m, d, eps, flg_actuation, DfDq, DfDv, DfDa, ...)` | [`inverse_fd`] (in control orientation: rows are forces) |
//!
//! Book chapter: "Integrators and the simulation loop", section Derivatives and LQR.

use super::forward::{has_constraints, Forward as Constrained};
use super::integrator::{forward_pass, Forward, OnDivergence, Simulator, State};
use crate::dynamics::rnea_with;
use crate::error::{check_vector, Error, Result};
use crate::model::{Integrator, Model};
use nalgebra::DMatrix;

/// The linearized step `dx_{t+h} = A dx_t + B du_t` (MuJoCo's `A`, `B`).
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// `A = d x_{t+h} / d x_t` (nx x nx, nx = 2 nv + na).
    pub a: DMatrix<f64>,
    /// `B = d x_{t+h} / d u_t` (nx x nu).
    pub b: DMatrix<f64>,
}

/// Checks a finite-difference step.
fn check_eps(eps: f64) -> Result<()> {
    if eps.is_finite() && eps > 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what: "eps".into(),
            why: format!("the finite-difference step must be positive and finite, got {eps}"),
        })
    }
}

// ANCHOR: state_difference
/// `(x2 (-) x1) / h` for states `x = (q, v, act)` (MuJoCo's `stateDiff`): positions by
/// [`Model::difference_with`] (rotation vectors on ball and free joints), the rest entrywise.
pub fn state_difference(model: &Model, x1: &State, x2: &State, h: f64) -> Vec<f64> {
    let dq = model.difference_with(&x1.qpos, &x2.qpos);
    let mut out = Vec::with_capacity(2 * model.nv + x1.act.len());
    out.extend(dq.iter().map(|d| d / h));
    out.extend(x1.qvel.iter().zip(&x2.qvel).map(|(a, b)| (b - a) / h));
    out.extend(x1.act.iter().zip(&x2.act).map(|(a, b)| (b - a) / h));
    out
}
// ANCHOR_END: state_difference

/// One step of `integrator` from `state` (a fresh copy each time: the finite differences never
/// carry anything from one evaluation to the next).
fn step_from(sim: &mut Simulator, state: &State) -> Result<State> {
    sim.state.clone_from(state);
    sim.step()?;
    Ok(sim.state.clone())
}

// ANCHOR: transition_fd
/// MuJoCo's `mjd_transitionFD`: the columns of `A` and `B` by finite differences of one step,
/// nudging each coordinate of `x = (q, v, act)` and of `u = ctrl` by `eps`, centred
/// (`(y(+eps) (-) y(-eps)) / 2 eps`) or forward (`(y(+eps) (-) y) / eps`). A control at a
/// limit of its `ctrlrange` is differenced one-sidedly inside the range, as MuJoCo does (a
/// nudge outside would be clamped away). Unlike MuJoCo, RK4 is allowed.
///
/// The initial state is checked ([`State::check`]). Models with constraints step through the
/// constrained pipeline, as in [`Simulator::step`]; a difference across a contact event (a
/// contact made or lost between the nudged states) is as meaningless here as in MuJoCo.
pub fn transition_fd(
    model: &Model,
    state: &State,
    integrator: Integrator,
    eps: f64,
    centered: bool,
) -> Result<Transition> {
    check_eps(eps)?;
    let mut sim = Simulator::new(model, state.clone(), integrator)?;
    // a nudged state that diverges is an error, never a silent reset
    sim.on_divergence = OnDivergence::Error;
    let (nv, na, nu) = (model.nv, state.act.len(), state.ctrl.len());
    let nx = 2 * nv + na;
    let next = step_from(&mut sim, state)?;
    let mut a = DMatrix::zeros(nx, nx);
    let mut b = DMatrix::zeros(nx, nu);
    // the column of one nudged coordinate, from the states after +eps and -eps (None: not taken)
    let column = |plus: Option<State>, minus: Option<State>| -> Vec<f64> {
        match (plus, minus) {
            (Some(p), Some(m)) => state_difference(model, &m, &p, 2.0 * eps),
            (Some(p), None) => state_difference(model, &next, &p, eps),
            (None, Some(m)) => state_difference(model, &m, &next, eps),
            (None, None) => vec![0.0; nx],
        }
    };
    let mut nudged = |f: &dyn Fn(&mut State, f64)| -> Result<(State, Option<State>)> {
        let mut s = state.clone();
        f(&mut s, eps);
        let plus = step_from(&mut sim, &s)?;
        let minus = if centered {
            let mut s = state.clone();
            f(&mut s, -eps);
            Some(step_from(&mut sim, &s)?)
        } else {
            None
        };
        Ok((plus, minus))
    };
    for i in 0..nx {
        let (plus, minus) = nudged(&|s: &mut State, e: f64| {
            if i < nv {
                let mut dq = vec![0.0; nv];
                dq[i] = 1.0;
                model.integrate_with(&mut s.qpos, &dq, e);
            } else if i < 2 * nv {
                s.qvel[i - nv] += e;
            } else {
                s.act[i - 2 * nv] += e;
            }
        })?;
        a.set_column(i, &nalgebra::DVector::from_vec(column(Some(plus), minus)));
    }
    for i in 0..nu {
        let act = &model.actuators[i];
        let inside = |x: f64| !act.ctrllimited || (act.ctrlrange[0] <= x && x <= act.ctrlrange[1]);
        let c = state.ctrl[i];
        let fwd = inside(c) && inside(c + eps);
        let back = (centered || !fwd) && inside(c - eps) && inside(c);
        let run = |sim: &mut Simulator, e: f64| -> Result<State> {
            let mut s = state.clone();
            s.ctrl[i] += e;
            step_from(sim, &s)
        };
        let plus = if fwd { Some(run(&mut sim, eps)?) } else { None };
        let minus = if back { Some(run(&mut sim, -eps)?) } else { None };
        b.set_column(i, &nalgebra::DVector::from_vec(column(plus, minus)));
    }
    Ok(Transition { a, b })
}
// ANCHOR_END: transition_fd

// ANCHOR: inverse
/// MuJoCo's `mj_inverse`: `qfrc_inverse = M qacc + c(q, v) - qfrc_passive - qfrc_constraint`
/// (armature included in `M`), minus `qfrc_actuator` when `flg_actuation` (the force the
/// actuators and `qfrc_applied` must then supply is what is left). On a model with constraints
/// ([`has_constraints`]) the constraint stage of `mj_inverse` runs: contacts and rows at
/// `(q, v)`, and the force of every row at the given `qacc` from its soft-constraint law, no
/// solver ([`Constrained::inverse`]); `qfrc_constraint = J^T efc_force`.
pub fn inverse(model: &Model, state: &State, qacc: &[f64], flg_actuation: bool) -> Result<Vec<f64>> {
    state.check(model)?;
    check_vector("qacc", qacc, model.nv)?;
    let mut scratch = InverseScratch::new(model)?;
    inverse_with(model, state, qacc, flg_actuation, &mut scratch)
}

/// The passes [`inverse`] evaluates: the smooth one, and the constrained one on models with
/// constraints.
struct InverseScratch<'m> {
    fwd: Forward,
    constrained: Option<Constrained<'m>>,
}

impl<'m> InverseScratch<'m> {
    fn new(model: &'m Model) -> Result<Self> {
        Ok(InverseScratch {
            fwd: Forward::new(model),
            constrained: if has_constraints(model) || model.nmocap() > 0 {
                Some(Constrained::new(model)?)
            } else {
                None
            },
        })
    }
}

fn inverse_with(
    model: &Model,
    s: &State,
    qacc: &[f64],
    flg_actuation: bool,
    sc: &mut InverseScratch,
) -> Result<Vec<f64>> {
    if model.nmocap() > 0 {
        return inverse_placed(model, s, qacc, flg_actuation, sc);
    }
    let fwd = &mut sc.fwd;
    forward_pass(model, &s.qpos, &s.qvel, &s.act, &s.ctrl, &s.qfrc_applied, fwd, None)?;
    let mut out = vec![0.0; model.nv];
    rnea_with(model, &mut fwd.ws, &s.qpos, &s.qvel, qacc, None, &mut out);
    for k in 0..model.nv {
        out[k] -= fwd.qfrc_passive[k];
        if flg_actuation {
            out[k] -= fwd.actuation.qfrc[k];
        }
    }
    if let Some(c) = &mut sc.constrained {
        // the constraint stage of mj_inverse: row forces at this qacc, then J^T efc_force
        let inv = c.inverse(&s.qpos, &s.qvel, qacc)?;
        for (o, f) in out.iter_mut().zip(&inv.qfrc_constraint) {
            *o -= f;
        }
    }
    crate::error::check_output("qfrc_inverse", &out)?;
    Ok(out)
}
// ANCHOR_END: inverse

/// [`inverse_with`] on a model with mocap bodies, whose poses (the state's) only MuJoCo's
/// pipeline reads: `qfrc_inverse` of [`Constrained::inverse`] (com-based `M qacc + qfrc_bias -
/// qfrc_passive - qfrc_constraint`), less `qfrc_actuator` of a forward pass at the state when
/// `flg_actuation`.
fn inverse_placed(
    model: &Model,
    s: &State,
    qacc: &[f64],
    flg_actuation: bool,
    sc: &mut InverseScratch,
) -> Result<Vec<f64>> {
    let Some(c) = sc.constrained.as_mut() else {
        return Err(Error::InvalidArgument {
            what: "scratch".into(),
            why: "a model with mocap bodies needs MuJoCo's pipeline".into(),
        });
    };
    c.mocap_pos.clone_from(&s.mocap_pos);
    c.mocap_quat.clone_from(&s.mocap_quat);
    c.d.data.eq_active.copy_from_slice(&s.eq_active);
    let mut actuator = vec![0.0; model.nv];
    if flg_actuation && !model.actuators.is_empty() {
        c.ctrl.copy_from_slice(&s.ctrl);
        c.act.copy_from_slice(&s.act);
        c.forward(&s.qpos, &s.qvel, &s.qfrc_applied)?;
        actuator.copy_from_slice(&c.d.qfrc_actuator);
    }
    let mut out = c.inverse(&s.qpos, &s.qvel, qacc)?.qfrc_inverse;
    for (o, a) in out.iter_mut().zip(&actuator) {
        *o -= a;
    }
    crate::error::check_output("qfrc_inverse", &out)?;
    Ok(out)
}

/// The derivatives of `qfrc_inverse` (nv x nv each, rows are forces).
#[derive(Clone, Debug, PartialEq)]
pub struct InverseDerivatives {
    /// `d qfrc_inverse / d q` (positions perturbed on their manifold).
    pub dfdq: DMatrix<f64>,
    /// `d qfrc_inverse / d v`.
    pub dfdv: DMatrix<f64>,
    /// `d qfrc_inverse / d qacc` (`M`, up to the differencing error).
    pub dfda: DMatrix<f64>,
}

// ANCHOR: inverse_fd
/// MuJoCo's `mjd_inverseFD`: forward differences of [`inverse`] in `q` (on the manifold), `v`
/// and `qacc`, with step `eps`, the constraint forces included on models with constraints
/// (contacts recomputed at every nudged position, as MuJoCo's `mj_inverseSkip` does). MuJoCo returns the transposes (`DfDq[i]` is the row of
/// derivatives along dof i); here row `r` is force `r`.
pub fn inverse_fd(
    model: &Model,
    state: &State,
    qacc: &[f64],
    eps: f64,
    flg_actuation: bool,
) -> Result<InverseDerivatives> {
    check_eps(eps)?;
    state.check(model)?;
    check_vector("qacc", qacc, model.nv)?;
    let nv = model.nv;
    let mut fwd = InverseScratch::new(model)?;
    let f0 = inverse_with(model, state, qacc, flg_actuation, &mut fwd)?;
    let mut out = InverseDerivatives {
        dfdq: DMatrix::zeros(nv, nv),
        dfdv: DMatrix::zeros(nv, nv),
        dfda: DMatrix::zeros(nv, nv),
    };
    for i in 0..nv {
        let mut a = qacc.to_vec();
        a[i] += eps;
        let fa = inverse_with(model, state, &a, flg_actuation, &mut fwd)?;
        let mut s = state.clone();
        s.qvel[i] += eps;
        let fv = inverse_with(model, &s, qacc, flg_actuation, &mut fwd)?;
        let mut s = state.clone();
        let mut dq = vec![0.0; nv];
        dq[i] = 1.0;
        model.integrate_with(&mut s.qpos, &dq, eps);
        let fq = inverse_with(model, &s, qacc, flg_actuation, &mut fwd)?;
        for r in 0..nv {
            out.dfda[(r, i)] = (fa[r] - f0[r]) / eps;
            out.dfdv[(r, i)] = (fv[r] - f0[r]) / eps;
            out.dfdq[(r, i)] = (fq[r] - f0[r]) / eps;
        }
    }
    Ok(out)
}
// ANCHOR_END: inverse_fd

// ANCHOR: lqr
/// The infinite-horizon discrete LQR gain of `x_{k+1} = A x_k + B u_k` with cost
/// `sum x^T Q x + u^T R u`: iterates the Riccati recursion
/// `P <- Q + A^T P A - A^T P B (R + B^T P B)^-1 B^T P A` from `P = Q` until the largest change
/// is below `tol` times the largest entry of `P` (at most `max_iter` times: an
/// [`Error::NotConverged`] otherwise), then returns `K = (R + B^T P B)^-1 B^T P A`, so that
/// `u = -K x`. `Q` (nx x nx) and `R` (nu x nu) must be symmetric, `R` positive definite.
pub fn lqr_gain(
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    q: &DMatrix<f64>,
    r: &DMatrix<f64>,
    tol: f64,
    max_iter: usize,
) -> Result<DMatrix<f64>> {
    let (nx, nu) = b.shape();
    for (what, m, n) in [("A", a, nx), ("Q", q, nx), ("R", r, nu)] {
        if m.shape() != (n, n) {
            return Err(Error::BadShape {
                what: what.into(),
                rows: m.nrows(),
                cols: m.ncols(),
                expected: format!("{n} x {n}"),
            });
        }
    }
    let gain = |p: &DMatrix<f64>| -> Result<DMatrix<f64>> {
        let s = r + b.transpose() * p * b;
        let rhs = b.transpose() * p * a;
        s.cholesky()
            .map(|c| c.solve(&rhs))
            .ok_or_else(|| Error::PivotNotPositive {
                matrix: "R + B^T P B of the Riccati recursion".into(),
                row: 0,
                pivot: f64::NAN,
            })
    };
    let mut p = q.clone();
    for _ in 0..max_iter {
        let k = gain(&p)?;
        let next = q + a.transpose() * &p * a - a.transpose() * &p * b * &k;
        let next = (&next + next.transpose()) * 0.5;
        let change = (&next - &p).amax();
        p = next;
        if !p.amax().is_finite() {
            break;
        }
        if change <= tol * p.amax() {
            return gain(&p);
        }
    }
    Err(Error::NotConverged {
        solver: "the discrete Riccati iteration of lqr_gain".into(),
        iterations: max_iter,
        residual: None,
    })
}
// ANCHOR_END: lqr
