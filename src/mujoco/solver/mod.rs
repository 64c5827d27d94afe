//! MuJoCo's constraint solvers (`mj_solPGS`, `mj_solCG`, `mj_solNewton`) on the rows of
//! [`super::constraint::Efc`]: the shared vocabulary of inputs, options and results.

use super::constraint::EfcState;
use crate::model::Solver;

/// What a solver needs from the smooth dynamics (`mj_fwdAcceleration` and `mj_factorM`):
/// the inertia matrix in MuJoCo's legacy sparse layout with its `L^T D L` factor, the smooth
/// force and the unconstrained acceleration.
#[derive(Clone, Copy, Debug)]
pub struct Smooth<'a> {
    /// The sparse pattern of `M` (`model.mj_layout()`).
    pub layout: &'a crate::sparse::MjLayout,
    /// `qM`.
    pub qm: &'a [f64],
    /// `qLD`.
    pub qld: &'a [f64],
    /// `qLDiagInv`.
    pub qld_diag_inv: &'a [f64],
    /// `qfrc_smooth = qfrc_passive - qfrc_bias + qfrc_applied + qfrc_actuator`.
    pub qfrc_smooth: &'a [f64],
    /// `qacc_smooth = M^-1 qfrc_smooth`.
    pub qacc_smooth: &'a [f64],
}

/// Solver settings (MuJoCo's `<option>` `solver`, `iterations`, `tolerance`, `ls_iterations`,
/// `ls_tolerance`, and the warm start flag).
#[derive(Clone, Debug, PartialEq)]
pub struct SolverOptions {
    /// PGS, CG or Newton.
    pub solver: Solver,
    /// Maximum iterations (MuJoCo's default 100).
    pub iterations: usize,
    /// Tolerance on the scaled improvement and gradient (default 1e-8).
    pub tolerance: f64,
    /// Maximum line-search evaluations per iteration (default 50).
    pub ls_iterations: usize,
    /// Line-search tolerance relative to the gradient (default 0.01).
    pub ls_tolerance: f64,
    /// Warm start: an initial `qacc` (primal solvers) tried against `qacc_smooth`, as MuJoCo's
    /// `qacc_warmstart`; `None` starts cold.
    pub warmstart: Option<Vec<f64>>,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            solver: Solver::Newton,
            iterations: 100,
            tolerance: 1e-8,
            ls_iterations: 50,
            ls_tolerance: 0.01,
            warmstart: None,
        }
    }
}

/// The statistics MuJoCo records per solver iteration (`mjSolverStat`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolverStat {
    /// Scaled cost decrease of the iteration.
    pub improvement: f64,
    /// Scaled gradient norm after the iteration.
    pub gradient: f64,
    /// Slope of the line search at alpha = 0 (primal solvers).
    pub lineslope: f64,
    /// Number of active (non-satisfied) rows.
    pub nactive: usize,
    /// Number of rows whose state changed.
    pub nchange: usize,
    /// Line-search evaluations.
    pub neval: usize,
    /// Cholesky updates or refactorizations (Newton).
    pub nupdate: usize,
}

/// What a solve produces (`qacc`, `efc_force`, `efc_state`, `qfrc_constraint`, `solver_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct SolverResult {
    /// Constrained acceleration.
    pub qacc: Vec<f64>,
    /// Constraint force per row (`efc_force`).
    pub efc_force: Vec<f64>,
    /// State of each row at the solution (`efc_state`).
    pub efc_state: Vec<EfcState>,
    /// `J^T efc_force`.
    pub qfrc_constraint: Vec<f64>,
    /// Iterations taken (`solver_niter`).
    pub iterations: usize,
    /// One entry per iteration.
    pub stats: Vec<SolverStat>,
}
