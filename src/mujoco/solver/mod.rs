//! MuJoCo's constraint solvers (`mj_solPGS`, `mj_solCG`, `mj_solNewton`) and the constraint
//! part of its inverse dynamics (`mj_invConstraint`) on the rows of [`super::constraint::Efc`].
//! Book: "Solvers" and "Soft constraints" (the optimization problem).
//!
//! | book section | MuJoCo | here |
//! |---|---|---|
//! | the row costs and the cone zones | `mj_constraintUpdate` | [`cost::update`], [`cost::zone`] |
//! | PGS on the dual | `mj_solPGS` (`residual`, `costChange`, `mju_QCQP`, `dualState`) | [`pgs::solve_pgs`], [`pgs::solve_pgs_with`] |
//! | reduced primal, shared loop | `mj_solPrimal` | [`primal::solve_primal`] |
//! | CG, Hager-Zhang (MuJoCo's default) or Polak-Ribiere+ | `mj_solCG` (`mjCG_PRP` for the second) | [`cg::beta_hz`], [`cg::beta_prp`] |
//! | Newton, cone Hessian | `mj_solNewton` (`MakeHessian`, `HessianCone`) | [`newton::make_hessian`] |
//! | Newton, the factor kept between iterations | `HessianIncremental`, `mju_cholUpdate` | [`newton::Hessian`] |
//! | row blocks of `efc_J` | `efc_J_rowsuper` | [`primal::RowBlocks`] |
//! | exact line search | `PrimalPrepare`, `PrimalEval`, `PrimalSearch` | [`linesearch::LineSearch`] |
//! | warm start | `warmstart` (engine_forward.c) | the start of [`primal::solve_primal_in`], [`pgs::initial_force`] |
//! | the noslip pass | `mj_solNoSlip` | [`pgs::noslip::noslip_into`], run by [`solve_in`] |
//! | inverse dynamics | `mj_invConstraint`, `mj_compareFwdInv` | [`inverse`] |
//!
//! [`solve`] checks its inputs and dispatches on [`SolverOptions::solver`].

pub mod cg;
pub mod cost;
pub mod inverse;
pub mod linesearch;
pub mod newton;
pub mod pgs;
pub mod primal;
pub mod problem;

use super::constraint::{Efc, EfcState};
use crate::error::{check_vector, Error, Result};
use crate::model::Solver;
use crate::sparse::{solve_ld, MjLayout, NoCount};
use nalgebra::DMatrix;

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

/// Which storage of `efc_J` a solver's products read: the dense `nefc x nv` matrix (the
/// reference route, as MuJoCo's `<option jacobian="dense">`) or its rows' nonzeros
/// ([`super::constraint::SparseRows`], as `jacobian="sparse"`), with a dense or a profile
/// Newton Hessian and a dense or a sparse `AR`. [`solve`] takes the sparse route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JacStorage {
    /// Dense `efc_J`, dense Hessian, dense `AR` products.
    Dense,
    /// Sparse rows, profile Hessian, sparse `AR` rows.
    Sparse,
}

impl JacStorage {
    /// MuJoCo's choice (`mj_isSparse` with the default `jacobian="auto"`): sparse from 60 dofs
    /// on, dense below. [`solve`]'s PGS reads `AR` by it, whole rows or their nonzeros (the
    /// order of the residual's sums decides, like MuJoCo's, the state of a force that lies
    /// exactly on its cone); the primal solvers always read sparse rows.
    pub fn mujoco(nv: usize) -> Self {
        if nv >= 60 {
            JacStorage::Sparse
        } else {
            JacStorage::Dense
        }
    }
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
    /// Sweeps of the noslip pass after the solver ([`pgs::noslip::noslip_into`]; MuJoCo's
    /// `noslip_iterations`, default 0: no pass).
    pub noslip_iterations: usize,
    /// The noslip pass stops when a sweep's scaled improvement is below this (MuJoCo's
    /// `noslip_tolerance`, default 1e-6).
    pub noslip_tolerance: f64,
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
            noslip_iterations: 0,
            noslip_tolerance: 1e-6,
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
    /// The solver's cost after the iteration (added here; not in `mjSolverStat`): the primal
    /// cost `C(a)` for CG and Newton, the dual cost `1/2 f^T AR f + f^T b` for PGS.
    pub cost: f64,
}

/// What a solve produces (`qacc`, `efc_force`, `efc_state`, `qfrc_constraint`, `solver_*`).
#[derive(Clone, Debug, Default, PartialEq)]
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

// ANCHOR: solve
/// The constraint solve of `mj_fwdConstraint`: minimizes the reduced primal cost (CG, Newton) or
/// the dual (PGS, in MuJoCo 4.0's accelerated form: shuffled blocks and Nesterov momentum; the
/// classic sweep is [`pgs::solve_pgs`]) for the rows `efc` on the smooth dynamics `smooth`, starting cold from
/// `qacc_smooth` (`efc_force = 0`) or from `opts.warmstart` when it is cheaper. Checks every
/// input at the door ([`check_inputs`]); every loop is bounded by `opts`.
pub fn solve(smooth: &Smooth, efc: &Efc, opts: &SolverOptions) -> Result<SolverResult> {
    let mut ws = Workspace::default();
    solve_in(smooth, efc, opts, &mut ws)?;
    Ok(ws.result)
}
// ANCHOR_END: solve

/// Checks what [`solve`] and the inverse read: the smooth arrays' lengths (legacy layout of
/// `nv` dofs) and finiteness, the row arrays' lengths (`nefc`) and finiteness, `R > 0`,
/// `D = 1/R` (to 1e-9), friction-loss bounds `>= 0`, row counts `ne + nf + nl <= nefc`, the elliptic blocks
/// ([`cost::cones`]) and the options. Returns the elliptic cones.
pub fn check_inputs(smooth: &Smooth, efc: &Efc, opts: &SolverOptions) -> Result<Vec<cost::Cone>> {
    check_problem(smooth, efc, opts)?;
    cost::cones(efc)
}

/// [`check_inputs`] without the cones (which [`cost::cones_into`] makes into kept storage).
pub fn check_problem(smooth: &Smooth, efc: &Efc, opts: &SolverOptions) -> Result<()> {
    let nv = smooth.layout.nv;
    check_smooth(smooth)?;
    check_efc(efc, nv)?;
    for (what, value) in [
        ("tolerance", opts.tolerance),
        ("ls_tolerance", opts.ls_tolerance),
        ("noslip_tolerance", opts.noslip_tolerance),
    ] {
        if !(value >= 0.0 && value.is_finite()) {
            return Err(Error::BadOption {
                option: what.into(),
                why: format!("{value} must be finite and non-negative"),
            });
        }
    }
    if let Some(w) = &opts.warmstart {
        check_vector("warmstart qacc", w, nv)?;
    }
    Ok(())
}

/// The storage of [`solve_in`], kept by the caller between solves (MuJoCo keeps it on
/// `mjData`'s stack): the primal solvers' vectors and Hessian, the cones, and the result.
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    primal: primal::PrimalWorkspace,
    /// PGS's storage, and the noslip pass's after any solver.
    dual: pgs::PgsScratch,
    cones: Vec<cost::Cone>,
    /// The result of the last [`solve_in`].
    pub result: SolverResult,
}

/// [`solve`] with its storage in `ws` and the result in `ws.result`: nothing is allocated once
/// `ws` has seen a problem of the same size. Then, when `opts.noslip_iterations > 0`, MuJoCo's
/// noslip pass ([`pgs::noslip::noslip_into`]) on the solver's forces, as `mj_fwdConstraint`
/// runs it. Checks every input at the door.
pub fn solve_in(smooth: &Smooth, efc: &Efc, opts: &SolverOptions, ws: &mut Workspace) -> Result<()> {
    check_problem(smooth, efc, opts)?;
    cost::cones_into(efc, &mut ws.cones)?;
    let (cones, out) = (&ws.cones, &mut ws.result);
    let storage = JacStorage::mujoco(smooth.layout.nv);
    let variant = pgs::PgsVariant::Accelerated;
    match opts.solver {
        Solver::Pgs => pgs::solve_pgs_into(smooth, efc, cones, opts, variant, storage, &mut ws.dual, out)?,
        Solver::Cg | Solver::Newton => {
            let dir = match opts.solver {
                Solver::Cg => primal::Direction::CgHagerZhang,
                _ => primal::Direction::Newton,
            };
            primal::solve_primal_in(smooth, efc, cones, opts, dir, JacStorage::Sparse, &mut ws.primal, out)?
        }
    }
    if opts.noslip_iterations > 0 && efc.nefc() > 0 {
        let prepared = opts.solver == Solver::Pgs;
        pgs::noslip::noslip_into(smooth, efc, cones, opts, storage, prepared, &mut ws.dual, out)?;
    }
    Ok(())
}

/// The smooth part of [`check_inputs`].
pub fn check_smooth(smooth: &Smooth) -> Result<()> {
    let (nv, nm) = (smooth.layout.nv, smooth.layout.nm);
    check_vector("qM", smooth.qm, nm)?;
    check_vector("qLD", smooth.qld, nm)?;
    check_vector("qLDiagInv", smooth.qld_diag_inv, nv)?;
    check_vector("qfrc_smooth", smooth.qfrc_smooth, nv)?;
    check_vector("qacc_smooth", smooth.qacc_smooth, nv)
}

/// The row part of [`check_inputs`] for `nv` dofs: one pass over the rows that finds nothing
/// wrong, or the checks one by one, which name the first bad entry.
pub fn check_efc(efc: &Efc, nv: usize) -> Result<()> {
    if efc_is_valid(efc, nv) {
        return Ok(());
    }
    check_efc_each(efc, nv)
}

/// Whether [`check_efc_each`] would pass, in one pass over the rows, compiled for AVX where the
/// processor has it ([`crate::sparse::with_avx`]; the answer does not depend on the order of
/// the sums).
fn efc_is_valid(efc: &Efc, nv: usize) -> bool {
    crate::sparse::with_avx(
        #[inline(always)]
        || efc_is_valid_body(efc, nv),
    )
}

/// The body of [`efc_is_valid`].
#[inline(always)]
fn efc_is_valid_body(efc: &Efc, nv: usize) -> bool {
    let n = efc.nefc();
    let lengths = efc.j.nrows() == n
        && efc.j.ncols == nv
        && [
            efc.efc_id.len(),
            efc.frictionloss.len(),
            efc.r.len(),
            efc.d.len(),
            efc.aref.len(),
        ]
        .iter()
        .all(|&l| l == n)
        && efc.ne + efc.nf + efc.nl <= n;
    if !lengths {
        return false;
    }
    // the stored entries (the others are zeros), in rows of increasing columns below nv
    let jac_ok = efc.j.is_well_formed() && all_finite(&efc.j.values);
    // no early exit: the tests of all rows are combined with `&`, which vectorizes
    let rows_ok = (efc.r.iter().zip(&efc.d))
        .zip(efc.aref.iter().zip(&efc.frictionloss))
        .fold(true, |ok, ((&r, &d), (&aref, &eta))| {
            ok & (r > 0.0)
                & (d > 0.0)
                & (r < f64::INFINITY)
                & (d < f64::INFINITY)
                & aref.is_finite()
                & eta.is_finite()
                & ((d * r - 1.0).abs() <= 1e-9)
        });
    let eta_ok = efc.frictionloss[efc.ne..efc.ne + efc.nf].iter().all(|&eta| eta >= 0.0);
    jac_ok && rows_ok && eta_ok
}

/// Whether every entry is finite: `v * 0` is 0 for a finite `v` and NaN otherwise, summed in
/// four lanes without an early exit (vectorizes).
#[inline(always)]
fn all_finite(x: &[f64]) -> bool {
    let chunks = x.chunks_exact(4);
    let rest = chunks.remainder().iter().fold(0.0, |s, v| s + v * 0.0);
    let lanes = chunks.fold([0.0; 4], |s, c| {
        [
            s[0] + c[0] * 0.0,
            s[1] + c[1] * 0.0,
            s[2] + c[2] * 0.0,
            s[3] + c[3] * 0.0,
        ]
    });
    lanes.iter().sum::<f64>() + rest == 0.0
}

/// [`check_efc`] entry by entry.
fn check_efc_each(efc: &Efc, nv: usize) -> Result<()> {
    let n = efc.nefc();
    let j = &efc.j;
    if j.nrows() != n || j.ncols != nv {
        return Err(Error::BadShape {
            what: "efc_J".into(),
            rows: j.nrows(),
            cols: j.ncols,
            expected: format!("{n} x {nv} (nefc x nv)"),
        });
    }
    j.check("efc_J")?;
    if efc.efc_id.len() != n {
        return Err(Error::BadLength {
            what: "efc_id".into(),
            got: efc.efc_id.len(),
            expected: n,
        });
    }
    // the stored entries: the others are zeros
    check_vector("efc_J", &j.values, j.values.len())?;
    check_vector("efc_frictionloss", &efc.frictionloss, n)?;
    check_vector("efc_R", &efc.r, n)?;
    check_vector("efc_D", &efc.d, n)?;
    check_vector("efc_aref", &efc.aref, n)?;
    if efc.ne + efc.nf + efc.nl > n {
        return Err(Error::InvalidArgument {
            what: "efc row counts".into(),
            why: format!("ne + nf + nl = {} exceeds nefc = {n}", efc.ne + efc.nf + efc.nl),
        });
    }
    for (what, v) in [("efc_R", &efc.r), ("efc_D", &efc.d)] {
        if let Some((i, &x)) = v.iter().enumerate().find(|(_, x)| **x <= 0.0) {
            return Err(Error::BadParameter {
                what: format!("{what}[{i}]"),
                value: x,
                why: "must be positive".into(),
            });
        }
    }
    // the primal reads D, the dual and the friction-loss bounds read R: they must agree
    for i in 0..n {
        let dr = efc.d[i] * efc.r[i];
        if (dr - 1.0).abs() > 1e-9 {
            return Err(Error::BadParameter {
                what: format!("efc_D[{i}] * efc_R[{i}]"),
                value: dr,
                why: "D must be 1/R".into(),
            });
        }
    }
    for i in efc.ne..efc.ne + efc.nf {
        if efc.frictionloss[i] < 0.0 {
            return Err(Error::BadParameter {
                what: format!("efc_frictionloss[{i}]"),
                value: efc.frictionloss[i],
                why: "a friction-loss bound must be non-negative".into(),
            });
        }
    }
    Ok(())
}

/// `out = M x` with `M` in the legacy layout (MuJoCo's `mj_mulM`): the diagonal, then each
/// stored `M_ij` (j an ancestor of i) twice. Inputs are assumed valid.
pub fn mul_m(layout: &MjLayout, qm: &[f64], x: &[f64], out: &mut [f64]) {
    crate::sparse::with_avx(
        #[inline(always)]
        || mul_m_body(layout, qm, x, out),
    )
}

/// The body of [`mul_m`], compiled for AVX where the processor has it.
#[inline(always)]
fn mul_m_body(layout: &MjLayout, qm: &[f64], x: &[f64], out: &mut [f64]) {
    for i in 0..layout.nv {
        out[i] = qm[layout.dof_madr[i]] * x[i];
    }
    for i in 0..layout.nv {
        let (a, n) = (layout.dof_madr[i] + 1, layout.dof_depth[i]);
        // out[i] holds only its diagonal term here (the other terms come from descendants,
        // later): its own row's sum runs in a register, in the same order
        let (xi, mut s) = (x[i], out[i]);
        for (&mij, &j) in qm[a..a + n].iter().zip(&layout.col[a..a + n]) {
            s += mij * x[j];
            out[j] += mij * xi;
        }
        out[i] = s;
    }
}

// ANCHOR: m_nonzeros
/// `M` by its nonzero entries, for the products `M x` a solve repeats (one per iteration): the
/// diagonal, then per dof the off-diagonal entries `M_ij` (j an ancestor) that are not exactly
/// zero. A free body whose inertia is given at its origin has `M` diagonal in its six dofs (the
/// offsets between translation and rotation vanish), so a stack of boxes has no off-diagonal
/// entries at all: MuJoCo drops them from `M`'s pattern (its "simple" dofs), and this drops them
/// from the product. [`MNonzeros::mul`] equals [`mul_m`] bit for bit (a skipped term adds an
/// exact zero); a test holds them equal.
#[derive(Clone, Debug, Default)]
pub struct MNonzeros {
    /// `M_ii`.
    diag: Vec<f64>,
    /// The dofs with off-diagonal entries, each with the start of its entries, then the end.
    rows: Vec<(usize, usize)>,
    /// Off-diagonal entries: (column j, `M_ij`), row after row in the order of [`mul_m`].
    entries: Vec<(usize, f64)>,
}

impl MNonzeros {
    /// Refills from `qm` in `layout` (storage reused).
    pub fn refill(&mut self, layout: &MjLayout, qm: &[f64]) {
        self.diag.clear();
        self.diag.extend(layout.dof_madr.iter().map(|&a| qm[a]));
        self.rows.clear();
        self.entries.clear();
        for i in 0..layout.nv {
            let (a, n) = (layout.dof_madr[i] + 1, layout.dof_depth[i]);
            let start = self.entries.len();
            for (&mij, &j) in qm[a..a + n].iter().zip(&layout.col[a..a + n]) {
                if mij != 0.0 {
                    self.entries.push((j, mij));
                }
            }
            if self.entries.len() > start {
                self.rows.push((i, start));
            }
        }
        self.rows.push((layout.nv, self.entries.len()));
    }

    /// `out = M x`, as [`mul_m`] computes it.
    pub fn mul(&self, x: &[f64], out: &mut [f64]) {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.mul_body(x, out),
        )
    }

    /// The body of [`Self::mul`], compiled for AVX where the processor has it.
    #[inline(always)]
    fn mul_body(&self, x: &[f64], out: &mut [f64]) {
        for ((o, d), xi) in out.iter_mut().zip(&self.diag).zip(x) {
            *o = d * xi;
        }
        for w in self.rows.windows(2) {
            let ((i, a), (_, e)) = (w[0], w[1]);
            let (xi, mut s) = (x[i], out[i]);
            for &(j, mij) in &self.entries[a..e] {
                s += mij * x[j];
                out[j] += mij * xi;
            }
            out[i] = s;
        }
    }
}
// ANCHOR_END: m_nonzeros

/// `trace(M)`, the termination scale's reciprocal (spec 6.5).
pub fn trace_m(layout: &MjLayout, qm: &[f64]) -> f64 {
    layout.dof_madr.iter().map(|&a| qm[a]).sum()
}

/// `out = J x` (`mj_mulJacVec`) on the rows of `efc_J` ([`Efc::j`]): one dot product per row
/// over its stored columns. Inputs assumed valid.
pub fn mul_j(efc: &Efc, x: &[f64], out: &mut [f64]) {
    efc.j.mul(x, out)
}

/// `out = J^T f` (`mj_mulJacTVec`) on the rows of `efc_J`: each row scattered into its
/// columns. Inputs assumed valid.
pub fn mul_jt(efc: &Efc, f: &[f64], out: &mut [f64]) {
    efc.j.mul_t(f, out)
}

/// [`mul_j`] on a dense `efc_J` ([`Efc::dense_j`]), column by column (`j` is column-major): the
/// dense route's product. Inputs assumed valid.
pub fn mul_j_dense(j: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (k, col) in j.column_iter().enumerate() {
        let xk = x[k];
        if xk != 0.0 {
            for (o, &jik) in out.iter_mut().zip(col.iter()) {
                *o += jik * xk;
            }
        }
    }
}

/// [`mul_jt`] on a dense `efc_J`: one column dot product per dof. Inputs assumed valid.
pub fn mul_jt_dense(j: &DMatrix<f64>, f: &[f64], out: &mut [f64]) {
    for (o, col) in out.iter_mut().zip(j.column_iter()) {
        *o = col.iter().zip(f).map(|(a, b)| a * b).sum();
    }
}

/// `x <- M^-1 x` with the factor of `smooth` (`mj_solveM`).
pub fn solve_m(smooth: &Smooth, x: &mut [f64]) -> Result<()> {
    solve_ld(smooth.layout, smooth.qld, smooth.qld_diag_inv, x, &mut NoCount)
}
