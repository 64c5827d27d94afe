//! The loop shared by CG and Newton on the reduced primal problem (MuJoCo's `mj_solPrimal`):
//! minimize `C(a) = 1/2 (a - a_s)^T M (a - a_s) + s(J a - aref)` by line searches along
//! preconditioned directions. Book: "Solvers", sections "The reduced primal", "Conjugate
//! gradient", "Newton's method", "Termination".

use super::super::constraint::{Efc, EfcState};
use super::cg::{beta_hz, beta_prp, cg_direction};
use super::cost::{gauss, update, Cone};
use super::linesearch::LineSearch;
use super::newton::{make_hessian, Hessian};
use super::{mul_j, mul_jt, mul_m, solve_m, trace_m, JacStorage, Smooth, SolverOptions, SolverResult, SolverStat};
use crate::error::Result;
use crate::mujoco::constraint::SparseRows;
use crate::sparse::{cholesky_dense_in_place, cholesky_solve_dense_with};
use nalgebra::DMatrix;
use std::borrow::Cow;

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

// ANCHOR: initial_qacc
/// The starting point (MuJoCo's `warmstart`): `qacc_smooth`, or `opts.warmstart` when its cost
/// is lower (ties go to `qacc_smooth`).
pub fn initial_qacc(smooth: &Smooth, efc: &Efc, cones: &[Cone], opts: &SolverOptions) -> Vec<f64> {
    let cold = smooth.qacc_smooth.to_vec();
    let Some(w) = &opts.warmstart else {
        return cold;
    };
    let (mut f, mut st) = (vec![0.0; efc.nefc()], vec![EfcState::Satisfied; efc.nefc()]);
    let c_warm = primal_cost(smooth, efc, cones, w, &mut f, &mut st);
    let c_cold = primal_cost(smooth, efc, cones, &cold, &mut f, &mut st);
    if c_warm < c_cold {
        w.clone()
    } else {
        cold
    }
}
// ANCHOR_END: initial_qacc

/// The primal solver's scratch, one field per symbol, sized once per solve.
struct Primal<'e> {
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
    /// The sparse route: `efc_J` by rows (empty on the dense route) and Newton's profile
    /// Hessian.
    jac: Option<Cow<'e, SparseRows>>,
    hess: Hessian,
}

impl Primal<'_> {
    /// Constraint update at the current `jar`, then `g`; returns the cost `C(a)`.
    fn update_constraint(&mut self, smooth: &Smooth, efc: &Efc, cones: &[Cone], newton: bool) -> f64 {
        let hess = if newton { Some(&mut self.hcone[..]) } else { None };
        let s = update(efc, cones, &self.jar, &mut self.force, &mut self.state, hess);
        self.mul_jt(efc);
        for k in 0..self.grad.len() {
            self.grad[k] = self.ma[k] - smooth.qfrc_smooth[k] - self.qfrc[k];
        }
        s + gauss(&self.ma, smooth.qfrc_smooth, &self.qacc, smooth.qacc_smooth)
    }

    /// `mgrad = M^-1 g` (CG) or `H^-1 g` with a fresh Hessian (Newton).
    fn precondition(&mut self, smooth: &Smooth, efc: &Efc, cones: &[Cone], newton: bool) -> Result<()> {
        self.mgrad.copy_from_slice(&self.grad);
        if newton {
            if let Some(jac) = &self.jac {
                let (l, q) = (smooth.layout, smooth.qm);
                self.hess.assemble(l, q, jac, efc, cones, &self.state, &self.hcone);
                self.hess.factor()?;
                self.hess.solve(&mut self.mgrad);
            } else {
                make_hessian(&self.m_dense, efc, cones, &self.state, &self.hcone, &mut self.h);
                cholesky_dense_in_place(&mut self.h, "Newton Hessian H = M + J^T D J")?;
                cholesky_solve_dense_with(&self.h, &mut self.mgrad);
            }
            Ok(())
        } else {
            solve_m(smooth, &mut self.mgrad)
        }
    }
}

impl Primal<'_> {
    /// `out = J x` by the route's storage.
    fn mul_j(&self, efc: &Efc, x: &[f64], out: &mut [f64]) {
        match &self.jac {
            Some(jac) => jac.mul(x, out),
            None => mul_j(efc, x, out),
        }
    }

    /// `qfrc = J^T force` by the route's storage.
    fn mul_jt(&mut self, efc: &Efc) {
        match &self.jac {
            Some(jac) => jac.mul_t(&self.force, &mut self.qfrc),
            None => mul_jt(efc, &self.force, &mut self.qfrc),
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
    /// CG with the Polak-Ribiere+ coefficient ([`beta_prp`]), what [`super::solve`] uses.
    CgPolakRibiere,
    /// CG with the Hager-Zhang coefficient ([`beta_hz`]), MuJoCo's default since 3.10.
    CgHagerZhang,
}

/// MuJoCo's `mj_solPrimal` for CG (`newton = false`, Polak-Ribiere+) and Newton
/// (`newton = true`); [`solve_primal_with`] also offers Hager-Zhang CG.
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
        Direction::CgPolakRibiere
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
    let newton = dir == Direction::Newton;
    let (nv, nefc) = (smooth.layout.nv, efc.nefc());
    let sparse = storage == JacStorage::Sparse;
    let mut w = Primal {
        qacc: initial_qacc(smooth, efc, cones, opts),
        ma: vec![0.0; nv],
        jar: vec![0.0; nefc],
        force: vec![0.0; nefc],
        state: vec![EfcState::Satisfied; nefc],
        oldstate: vec![EfcState::Satisfied; nefc],
        qfrc: vec![0.0; nv],
        grad: vec![0.0; nv],
        mgrad: vec![0.0; nv],
        gradold: vec![0.0; nv],
        mgradold: vec![0.0; nv],
        search: vec![0.0; nv],
        hcone: vec![[0.0; 36]; cones.len()],
        m_dense: if newton && !sparse {
            smooth.layout.to_dense(smooth.qm)
        } else {
            DMatrix::zeros(0, 0)
        },
        h: DMatrix::zeros(
            if newton && !sparse { nv } else { 0 },
            if newton && !sparse { nv } else { 0 },
        ),
        jac: sparse.then(|| efc.sparse_rows()),
        hess: Hessian::new(if newton && sparse { nv } else { 0 }),
    };
    let mut ls = LineSearch::new(nv, nefc, cones.len());
    mul_m(smooth.layout, smooth.qm, &w.qacc, &mut w.ma);
    let mut jar = std::mem::take(&mut w.jar);
    w.mul_j(efc, &w.qacc, &mut jar);
    w.jar = jar;
    for (x, a) in w.jar.iter_mut().zip(&efc.aref) {
        *x -= a;
    }
    w.update_constraint(smooth, efc, cones, newton);
    let scale = 1.0 / trace_m(smooth.layout, smooth.qm);
    let mut stats = Vec::new();
    if nefc > 0 {
        w.precondition(smooth, efc, cones, newton)?;
        for (p, mg) in w.search.iter_mut().zip(&w.mgrad) {
            *p = -mg;
        }
    }
    // bounded by opts.iterations
    while nefc > 0 && stats.len() < opts.iterations {
        // line search along p
        mul_m(smooth.layout, smooth.qm, &w.search, &mut ls.mv);
        w.mul_j(efc, &w.search, &mut ls.jv);
        ls.prepare(efc, cones, &w.search, &w.ma, smooth.qfrc_smooth, &w.jar);
        let pnorm = norm(&w.search);
        let tol = opts.tolerance * opts.ls_tolerance;
        let r = ls.search(efc, cones, &w.jar, pnorm, scale, tol, opts.ls_iterations);
        if r.alpha == 0.0 {
            break;
        }
        // move
        for k in 0..nv {
            w.qacc[k] += r.alpha * w.search[k];
            w.ma[k] += r.alpha * ls.mv[k];
        }
        for i in 0..nefc {
            w.jar[i] += r.alpha * ls.jv[i];
        }
        if !newton {
            w.gradold.copy_from_slice(&w.grad);
            w.mgradold.copy_from_slice(&w.mgrad);
        }
        w.oldstate.copy_from_slice(&w.state);
        let new_cost = w.update_constraint(smooth, efc, cones, newton);
        w.precondition(smooth, efc, cones, newton)?;
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
            nupdate: usize::from(newton),
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
            for (p, mg) in w.search.iter_mut().zip(&w.mgrad) {
                *p = -mg;
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
    crate::error::check_output("qacc (primal solver)", &w.qacc)?;
    let mut qfrc = std::mem::take(&mut w.qfrc);
    if let Some(jac) = &w.jac {
        jac.mul_t(&w.force, &mut qfrc);
    } else {
        mul_jt(efc, &w.force, &mut qfrc);
    }
    Ok(SolverResult {
        qacc: w.qacc,
        efc_force: w.force,
        efc_state: w.state,
        qfrc_constraint: qfrc,
        iterations: stats.len(),
        stats,
    })
}
// ANCHOR_END: solve_primal
