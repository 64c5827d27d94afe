//! Figures and tables of the chapter "One mechanism, every formulation": the planar four-bar
//! ([`mechanisms::four_bar`], and the same linkage as MJCF with a `connect` equality,
//! [`FOURBAR_XML`]) through every formulation of the library, and the Gymnasium humanoid (a tree)
//! through the tree algorithms, MuJoCo's com-based pipeline and, hanging from its torso, SPOOK.
//!
//! | formulation | chapter | here |
//! |---|---|---|
//! | loop-closure function `gamma` (Featherstone 8.11), the reference | "Solving the constraint equations" | [`Formulation::Gamma`] |
//! | spanning tree + loop joint, the three methods of 8.5, Baumgarte | "Closed-loop systems" | [`Formulation::Tree`] |
//! | MuJoCo: com-based quantities, soft `connect` rows, PGS / CG / Newton | "The constrained pipeline" | [`Formulation::MuJoCo`] |
//! | SPOOK: maximal coordinates, dense LU / Schur / sparse | "SPOOK" | [`Formulation::Spook`] |
//!
//! Writes
//! - `comparison_crank_error.svg`: the crank angle's distance from the reference over
//!   [`T_END`] seconds, one curve per formulation;
//! - `comparison_convergence.svg`: that distance at [`T_END`] against the step `h`: the
//!   tree + loop joint with RK4 falls like `h^4`, SPOOK like `h`, MuJoCo's semi-implicit Euler like
//!   `h` until it meets the floor its soft constraint sets;
//! - `comparison_softness.svg`: MuJoCo's distance from the reference against `1 - d`, the
//!   softness of its `solimp`: proportional;
//! - `comparison_acceleration.md`, `comparison_trajectory.md`, `comparison_cost.md`,
//!   `comparison_humanoid.md`, `comparison_humanoid_spook.md`: the agreement and cost tables the
//!   chapter includes.
//!
//! Timings are measured while the figures are made, on the machine that builds the book.

use super::ch05::{seconds_per_call, slope_line, write_snippet};
use crate::dynamics::{aba, bias_forces, crba, passive_forces};
use crate::error::{Error, Result};
use crate::loops::{
    forward_dynamics, gamma_acceleration, loop_constraints, loop_properties, null_space_with, simulate_gamma, Method,
    NumericalClosure, PivotTol, SimulateOptions, ENERGY, LOOP_ERROR,
};
use crate::mjcf;
use crate::model::mechanisms;
use crate::model::{Integrator, Model, Solver};
use crate::mujoco::forward::Forward;
use crate::mujoco::integrator::{Simulator, State};
use crate::plot::{Chart, Series};
use crate::sparse::OpCount;
use crate::spook::{joint_coordinate, violation, SpookSolver, SpookSparse, SpookSystem, StepSettings, Stepper};
use nalgebra::DVector;
use std::f64::consts::TAU;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The four-bar as MuJoCo reads it: the tree of [`mechanisms::four_bar`] (same bodies, inertias
/// and hinges) closed at D by one `connect` equality (`tests/fixtures/models/fourbar.xml`).
pub const FOURBAR_XML: &str = include_str!("../../tests/fixtures/models/fourbar.xml");
/// The Gymnasium humanoid (`tests/fixtures/models/public/gymnasium/humanoid.xml`, MIT licence
/// beside it): 21 hinges on a free torso, a tree.
pub const HUMANOID_XML: &str = include_str!("../../tests/fixtures/models/public/gymnasium/humanoid.xml");
/// Crank speed (rad/s) of the state every formulation starts from: fast enough for the crank to
/// go round well clear of a standstill at the top, where small differences would grow fast.
pub const CRANK_SPEED: f64 = 12.0;
/// Length (s) of the compared trajectories.
pub const T_END: f64 = 2.0;
/// Step (s) of the reference trajectory (RK4 on the loop-closure function's `y`).
pub const H_REF: f64 = 2.5e-4;
/// Trajectories are compared every `SAMPLE` seconds (a multiple of every step used).
pub const SAMPLE: f64 = 0.01;
/// MuJoCo's largest impedance (`mjMAXIMP`): the stiffest `solimp` a model may ask for.
pub const D_STIFF: f64 = 0.9999;
/// SPOOK's regularization of every joint row (compliance; m/N on position rows).
pub const SPOOK_EPSILON: f64 = 1e-8;
/// Baumgarte time constant (s) of the tree + loop joint runs.
pub const T_STAB: f64 = 0.1;

/// One formulation of the four-bar's dynamics, with its settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Formulation {
    /// Featherstone 8.11: RK4 on the independent coordinate `y` (the crank angle) of a
    /// loop-closure function `q = gamma(y)` ([`NumericalClosure`]): no constraint to drift from.
    Gamma,
    /// Featherstone 8.5: the spanning tree plus a revolute loop joint, one of the three methods,
    /// RK4, Baumgarte stabilization with [`T_STAB`].
    Tree(Method),
    /// MuJoCo's pipeline on [`FOURBAR_XML`]: com-based quantities, one soft `connect` (3 rows)
    /// with `solimp = (d, d, ...)` (`None`: the file's default, 0.9 to 0.95), a solver and an
    /// integrator.
    MuJoCo {
        /// PGS, CG or Newton.
        solver: Solver,
        /// Euler (semi-implicit) or RK4.
        integrator: Integrator,
        /// The impedance `d0 = dwidth` of the connect rows; `None` for the file's `solimp`.
        d: Option<f64>,
    },
    /// SPOOK in maximal coordinates (3 bodies, 4 hinge constraints), `epsilon` =
    /// [`SPOOK_EPSILON`], `tau = 2 h`, with one of its linear solvers.
    Spook(SpookSolver),
}

impl Formulation {
    /// A label for tables and legends.
    pub fn label(&self) -> String {
        match self {
            Formulation::Gamma => "loop-closure function gamma (reference)".into(),
            Formulation::Tree(m) => format!(
                "tree + loop joint, {}",
                match m {
                    Method::Kkt => "KKT system",
                    Method::LambdaFirst => "lambda first",
                    Method::NullSpace => "null space G, g",
                }
            ),
            Formulation::MuJoCo { solver, integrator, d } => format!(
                "MuJoCo {solver}, {integrator}, solimp d = {}",
                d.map_or("0.9 (default)".to_string(), |d| format!("{d}"))
            ),
            Formulation::Spook(s) => format!(
                "SPOOK, {}",
                match s {
                    SpookSolver::Direct => "dense LU",
                    SpookSolver::Schur => "Schur complement",
                    SpookSolver::Sparse => "sparse LDL^T",
                    SpookSolver::Pgs => "PGS",
                    SpookSolver::ActiveSet => "active set",
                    SpookSolver::Auto => "auto",
                }
            ),
        }
    }
}

/// The formulations of the chapter's tables, in their order.
pub fn formulations() -> Vec<Formulation> {
    let mj = |solver, integrator, d| Formulation::MuJoCo { solver, integrator, d };
    vec![
        Formulation::Gamma,
        Formulation::Tree(Method::Kkt),
        Formulation::Tree(Method::LambdaFirst),
        Formulation::Tree(Method::NullSpace),
        mj(Solver::Newton, Integrator::Euler, None),
        mj(Solver::Cg, Integrator::Euler, None),
        mj(Solver::Pgs, Integrator::Euler, None),
        mj(Solver::Newton, Integrator::Euler, Some(0.99)),
        mj(Solver::Newton, Integrator::Euler, Some(D_STIFF)),
        mj(Solver::Newton, Integrator::Rk4, Some(D_STIFF)),
        Formulation::Spook(SpookSolver::Direct),
        Formulation::Spook(SpookSolver::Schur),
        Formulation::Spook(SpookSolver::Sparse),
    ]
}

/// The MuJoCo four-bar ([`FOURBAR_XML`]) with step `h`, `solver`, and `solimp = (d, d, ...)` on
/// its connect equality when `d` is given.
pub fn four_bar_mjcf(h: f64, solver: Solver, d: Option<f64>) -> Result<Model> {
    let mut m = mjcf::load_str(FOURBAR_XML)?.model;
    m.opt.timestep = h;
    m.opt.solver = solver;
    if let Some(d) = d {
        for p in &mut m.eq_params {
            p.solimp[0] = d;
            p.solimp[1] = d;
        }
    }
    Ok(m)
}

/// The common starting state: the four-bar closed at `q = 0`, the crank turning at
/// [`CRANK_SPEED`], the other joints at the rates the loop allows (`qdot = G ydot`).
pub fn start_state() -> Result<(Model, DVector<f64>, DVector<f64>)> {
    start_state_at(CRANK_SPEED)
}

/// [`start_state`] with the crank turning at `w` rad/s.
pub fn start_state_at(w: f64) -> Result<(Model, DVector<f64>, DVector<f64>)> {
    let m = mechanisms::four_bar();
    let q = m.qpos0.clone();
    let sys = loop_constraints(&m, q.as_slice(), &vec![0.0; m.nv], None)?;
    let ns = null_space_with(&sys.kmat, &DVector::zeros(sys.nc()), &PivotTol::default(), Some(&[0]))?;
    let qd = ns.g_null.column(0) * w;
    Ok((m, q, qd))
}

// ANCHOR: acceleration
/// The crank's angular acceleration at the state of [`start_state`] by formulation `f` (`h` is
/// the model's step, which MuJoCo's reference acceleration uses through `refsafe`).
///
/// SPOOK has no acceleration of its own; here it is the change of the crank's angular velocity
/// over one step of `h`, divided by `h`. That is not an estimate of the acceleration: SPOOK's
/// step asks `G(q_k) v_{k+1} = 0` (up to its stabilization), so the change of velocity lacks
/// the curvature term `Gdot v` of the acceleration constraint, which reaches the motion only
/// through the violation `phi` at the next step; and with a fixed `epsilon` the regularization
/// `Sigma ~ epsilon / h^2` grows as `h` shrinks. The chapter shows this number to make that
/// point and compares SPOOK by its trajectories.
pub fn crank_acceleration(f: Formulation, h: f64) -> Result<f64> {
    let (tree, q, qd) = start_state()?;
    match f {
        Formulation::Gamma => {
            let closure = NumericalClosure::new(&tree, &[0], q.as_slice())?;
            Ok(gamma_acceleration(&tree, &closure, &[q[0]], &[qd[0]])?.0[0])
        }
        Formulation::Tree(method) => {
            let tau = passive_forces(&tree, &q, &qd)?;
            Ok(forward_dynamics(&tree, &q, &qd, &tau, None, method, None)?.qdd[0])
        }
        Formulation::MuJoCo { solver, d, .. } => {
            let model = four_bar_mjcf(h, solver, d)?;
            let mut fwd = Forward::new(&model)?;
            Ok(fwd.forward(q.as_slice(), qd.as_slice(), &[0.0; 3])?.qacc[0])
        }
        Formulation::Spook(solver) => {
            let mut sys = SpookSystem::from_model(&tree, q.as_slice(), qd.as_slice(), SPOOK_EPSILON, 2.0 * h)?;
            let settings = StepSettings {
                solver,
                ..StepSettings::default()
            };
            let mut stepper = Stepper::new(&sys, h, settings)?;
            let w0 = sys.bodies[0].omega.y;
            stepper.step(&mut sys)?;
            Ok((sys.bodies[0].omega.y - w0) / h)
        }
    }
}
// ANCHOR_END: acceleration

/// A trajectory sampled every [`SAMPLE`] seconds: time, crank angle (rad), constraint violation
/// (the loop-closure error norm, m, for the reduced formulations; SPOOK's largest `|phi_i|` over
/// all its joint rows) and total energy (J); with the wall-clock seconds of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Sample times (s).
    pub t: Vec<f64>,
    /// Crank angle (rad).
    pub crank: Vec<f64>,
    /// Constraint violation.
    pub violation: Vec<f64>,
    /// Kinetic plus potential energy (J).
    pub energy: Vec<f64>,
    /// Steps taken.
    pub steps: usize,
    /// Wall-clock seconds of the stepping (samples included).
    pub seconds: f64,
}

impl Run {
    fn push(&mut self, t: f64, crank: f64, violation: f64, energy: f64) {
        self.t.push(t);
        self.crank.push(crank);
        self.violation.push(violation);
        self.energy.push(energy);
    }

    /// Largest `|crank - reference|` over the common samples.
    pub fn crank_error(&self, reference: &Run) -> f64 {
        self.crank_errors(reference).iter().fold(0.0, |m, e| m.max(e.1))
    }

    /// `(t, |crank - reference|)` at every common sample.
    pub fn crank_errors(&self, reference: &Run) -> Vec<(f64, f64)> {
        self.t
            .iter()
            .zip(&self.crank)
            .zip(&reference.crank)
            .map(|((t, a), b)| (*t, (a - b).abs()))
            .collect()
    }

    /// Largest constraint violation.
    pub fn max_violation(&self) -> f64 {
        self.violation.iter().fold(0.0, |m, v| m.max(*v))
    }

    /// Largest `|E(t) - E(0)|`.
    pub fn energy_drift(&self) -> f64 {
        let e0 = self.energy.first().copied().unwrap_or(0.0);
        self.energy.iter().fold(0.0, |m, e| m.max((e - e0).abs()))
    }
}

/// How many steps of `h` make one [`SAMPLE`], failing unless it is a whole number.
fn steps_per_sample(h: f64) -> Result<usize> {
    let n = (SAMPLE / h).round();
    if n < 1.0 || (n * h - SAMPLE).abs() > 1e-9 * SAMPLE {
        return Err(Error::BadParameter {
            what: "comparison step h".into(),
            value: h,
            why: format!("must divide the sampling interval {SAMPLE} s"),
        });
    }
    Ok(n as usize)
}

// ANCHOR: trajectory
/// The four-bar from [`start_state`] for [`T_END`] seconds by formulation `f` with step `h`
/// (the reference [`Formulation::Gamma`] is best run with [`H_REF`]).
pub fn crank_trajectory(f: Formulation, h: f64) -> Result<Run> {
    crank_trajectory_from(f, h, CRANK_SPEED)
}

/// [`crank_trajectory`] from [`start_state_at`]`(w)`.
pub fn crank_trajectory_from(f: Formulation, h: f64, w: f64) -> Result<Run> {
    let (tree, q0, qd0) = start_state_at(w)?;
    let every = steps_per_sample(h)?;
    let steps = every * (T_END / SAMPLE).round() as usize;
    let loop_error = |q: &[f64]| -> Result<f64> { Ok(loop_constraints(&tree, q, &[0.0; 3], None)?.err_norm()) };
    let mut run = Run {
        steps,
        ..Run::default()
    };
    let start = Instant::now();
    match f {
        Formulation::Gamma | Formulation::Tree(_) => {
            let tr = if let Formulation::Tree(method) = f {
                let o = SimulateOptions {
                    method,
                    t_stab: Some(T_STAB),
                    ..SimulateOptions::new(h, steps)
                };
                crate::loops::simulate(&tree, &q0, &qd0, &o)?
            } else {
                let closure = NumericalClosure::new(&tree, &[0], q0.as_slice())?;
                simulate_gamma(&tree, &closure, &[q0[0]], &[qd0[0]], h, steps)?
            };
            run.seconds = start.elapsed().as_secs_f64();
            let (err, energy) = (tr.signal(LOOP_ERROR), tr.signal(ENERGY));
            let (Some(err), Some(energy)) = (err, energy) else {
                return Err(Error::Unsupported {
                    what: "comparison trajectory".into(),
                    why: "the closed-loop trajectory lacks its signals".into(),
                });
            };
            for k in (0..tr.len()).step_by(every) {
                run.push(tr.time[k], tr.qpos[k][0], err[k], energy[k]);
            }
        }
        Formulation::MuJoCo { solver, integrator, d } => {
            let model = four_bar_mjcf(h, solver, d)?;
            let mut state = State::reference(&model);
            state.qpos.copy_from_slice(q0.as_slice());
            state.qvel.copy_from_slice(qd0.as_slice());
            let mut sim = Simulator::new(&model, state, integrator)?;
            for k in 0..=steps {
                if k % every == 0 {
                    let s = &sim.state;
                    let [pe, ke] = sim.energy()?;
                    run.push(k as f64 * h, s.qpos[0], loop_error(&s.qpos)?, pe + ke);
                }
                if k < steps {
                    sim.step()?;
                }
            }
            run.seconds = start.elapsed().as_secs_f64();
        }
        Formulation::Spook(solver) => {
            let mut sys = SpookSystem::from_model(&tree, q0.as_slice(), qd0.as_slice(), SPOOK_EPSILON, 2.0 * h)?;
            let settings = StepSettings {
                solver,
                ..StepSettings::default()
            };
            let mut stepper = Stepper::new(&sys, h, settings)?;
            for k in 0..=steps {
                if k % every == 0 {
                    // the crank's hinge is the system's first constraint (tree joints come first)
                    let wrapped = joint_coordinate(&sys.constraints[0], &sys.bodies).map_or(f64::NAN, |c| c.0);
                    // the hinge's angle is wrapped to (-pi, pi]: keep the turn count
                    let last = run.crank.last().copied().unwrap_or(wrapped);
                    let crank = wrapped + TAU * ((last - wrapped) / TAU).round();
                    let e = sys.kinetic_energy() + sys.potential_energy();
                    run.push(k as f64 * h, crank, violation(&sys), e);
                }
                if k < steps {
                    stepper.step(&mut sys)?;
                }
            }
            run.seconds = start.elapsed().as_secs_f64();
        }
    }
    Ok(run)
}
// ANCHOR_END: trajectory

/// The reference trajectory: [`Formulation::Gamma`] with [`H_REF`].
pub fn reference() -> Result<Run> {
    crank_trajectory(Formulation::Gamma, H_REF)
}

/// The step each formulation runs with in the trajectory table: 1 ms for all but MuJoCo's
/// semi-implicit Euler, which runs at the file's 2 ms.
pub fn table_step(f: Formulation) -> f64 {
    match f {
        Formulation::MuJoCo {
            integrator: Integrator::Euler,
            ..
        } => 2e-3,
        _ => 1e-3,
    }
}

/// Size of the problem each formulation solves per evaluation, as a phrase.
pub fn problem_size(f: Formulation) -> Result<String> {
    let (tree, q, qd) = start_state()?;
    Ok(match f {
        Formulation::Gamma => "1 x 1 (G^T H G)".into(),
        Formulation::Tree(_) => {
            let p = loop_properties(&tree, q.as_slice())?;
            format!("n = {}, n^c = {} (rank {})", p.n, p.nc, p.rank)
        }
        Formulation::MuJoCo { solver, d, .. } => {
            let model = four_bar_mjcf(2e-3, solver, d)?;
            let mut fwd = Forward::new(&model)?;
            let out = fwd.forward(q.as_slice(), qd.as_slice(), &[0.0; 3])?;
            format!("nv = 3, nefc = {}, {} iterations", out.efc.nefc(), out.solver_niter)
        }
        Formulation::Spook(solver) => {
            let sys = SpookSystem::from_model(&tree, q.as_slice(), qd.as_slice(), SPOOK_EPSILON, 2e-3)?;
            let size = format!("{} velocities + {} rows", 6 * sys.bodies.len(), sys.nrows());
            if solver == SpookSolver::Sparse {
                let ops = spook_sparse_ops(&sys, 1e-3)?;
                format!("{size}; counted: {} multiply-adds, {} divisions", ops.madd, ops.div)
            } else {
                size
            }
        }
    })
}

/// The operations of one sparse SPOOK solve of `sys` with step `h` (factor and solve of the
/// quasi-definite system, minimum-degree order, as [`Stepper::solve_sparse`] does it), counted by
/// the multifrontal factorization.
pub fn spook_sparse_ops(sys: &SpookSystem, h: f64) -> Result<OpCount> {
    let settings = StepSettings::default();
    let mut stepper = Stepper::new(sys, h, settings.clone())?;
    stepper.assemble(sys);
    let n = stepper.nbody();
    let mut sp = SpookSparse::new(n, &stepper.rows, settings.ordering)?;
    sp.assemble(
        &stepper.mass,
        stepper.v.as_slice(),
        stepper.f.as_slice(),
        h,
        &stepper.rows,
    );
    let (mut v, mut lambda) = (vec![0.0; 6 * n], vec![0.0; stepper.rows.len()]);
    let mut ops = OpCount::default();
    sp.solve(&mut v, &mut lambda, &|c| format!("{c}"), &mut ops)?;
    Ok(ops)
}

/// Microseconds per evaluation (an acceleration; for SPOOK, one step at 1 ms) of formulation `f`
/// at the state of [`start_state`].
pub fn evaluation_time_us(f: Formulation) -> Result<f64> {
    let (tree, q, qd) = start_state()?;
    let mut failed: Option<Error> = None;
    let mut keep = |r: Result<f64>| match r {
        Ok(v) => {
            black_box(v);
        }
        Err(e) => failed = Some(e),
    };
    let s = match f {
        Formulation::Gamma => {
            let closure = NumericalClosure::new(&tree, &[0], q.as_slice())?;
            seconds_per_call(|| keep(gamma_acceleration(&tree, &closure, &[q[0]], &[qd[0]]).map(|r| r.0[0])))
        }
        Formulation::Tree(method) => {
            let tau = passive_forces(&tree, &q, &qd)?;
            seconds_per_call(|| keep(forward_dynamics(&tree, &q, &qd, &tau, None, method, None).map(|s| s.qdd[0])))
        }
        Formulation::MuJoCo { solver, d, .. } => {
            let model = four_bar_mjcf(2e-3, solver, d)?;
            let mut fwd = Forward::new(&model)?;
            seconds_per_call(|| keep(fwd.forward(q.as_slice(), qd.as_slice(), &[0.0; 3]).map(|o| o.qacc[0])))
        }
        Formulation::Spook(solver) => {
            let h = 1e-3;
            let mut sys = SpookSystem::from_model(&tree, q.as_slice(), qd.as_slice(), SPOOK_EPSILON, 2.0 * h)?;
            let settings = StepSettings {
                solver,
                ..StepSettings::default()
            };
            let mut stepper = Stepper::new(&sys, h, settings)?;
            seconds_per_call(|| keep(stepper.step(&mut sys).map(|_| sys.bodies[0].omega.y)))
        }
    };
    match failed {
        Some(e) => Err(e),
        None => Ok(1e6 * s),
    }
}

/// The humanoid's acceleration at a generic state by four routes: ABA (Featherstone ch. 7),
/// CRBA and a dense Cholesky solve of `H qdd = tau - C` (ch. 6), MuJoCo's com-based smooth
/// pipeline (`qacc_smooth` of `mj_forward`). Returns `(label, qacc, microseconds per call)`.
pub fn humanoid_accelerations() -> Result<Vec<(String, DVector<f64>, f64)>> {
    let mut model = mjcf::load_str(HUMANOID_XML)?.model;
    // the tree alone: no contacts in MuJoCo's pipeline (qacc_smooth ignores every row anyway)
    model.opt.flags.push(("contact".into(), false));
    let q = model.qpos0.clone();
    let qd = DVector::from_iterator(model.nv, (0..model.nv).map(|k| 0.5 * (1.3 * k as f64 + 0.4).sin()));
    let tau = passive_forces(&model, &q, &qd)?;
    let mut out = Vec::new();
    let mut aba_ok = Ok(DVector::zeros(0));
    let t = seconds_per_call(|| aba_ok = aba(&model, &q, &qd, &tau, None));
    out.push(("ABA (Featherstone ch. 7)".to_string(), aba_ok?, 1e6 * t));
    let crba_solve = || -> Result<DVector<f64>> {
        let h = crba(&model, &q)?;
        let c = bias_forces(&model, &q, &qd)?;
        h.cholesky()
            .ok_or_else(|| Error::Singular {
                what: "humanoid H".into(),
                why: "not positive definite".into(),
            })
            .map(|l| l.solve(&(&tau - c)))
    };
    let mut crba_ok = Ok(DVector::zeros(0));
    let t = seconds_per_call(|| crba_ok = crba_solve());
    out.push(("CRBA + dense Cholesky (ch. 6)".to_string(), crba_ok?, 1e6 * t));
    let mut fwd = Forward::new(&model)?;
    let zeros = vec![0.0; model.nv];
    let mut smooth = Ok(Vec::new());
    let t = seconds_per_call(|| {
        smooth = fwd
            .forward(q.as_slice(), qd.as_slice(), &zeros)
            .map(|d| d.qacc_smooth.clone())
    });
    out.push((
        "MuJoCo com-based, qacc_smooth of mj_forward".to_string(),
        DVector::from_vec(smooth?),
        1e6 * t,
    ));
    Ok(out)
}

/// The free joint of [`HUMANOID_XML`], removed to hang the humanoid from its torso.
const HUMANOID_ROOT: &str =
    r#"<joint armature="0" damping="0" limited="false" name="root" pos="0 0 0" stiffness="0" type="free"/>"#;

/// The humanoid hanging from its torso (the free joint removed, so the torso is fixed to the
/// world) without what SPOOK's joint rows do not model: joint damping, springs, armature,
/// friction loss and limits are removed, and contacts are switched off. Its limbs fall from the
/// standing pose under gravity.
pub fn hanging_humanoid() -> Result<Model> {
    if !HUMANOID_XML.contains(HUMANOID_ROOT) {
        return Err(Error::Unsupported {
            what: "humanoid model".into(),
            why: "its free joint is not where the comparison expects it".into(),
        });
    }
    let mut m = mjcf::load_str(&HUMANOID_XML.replace(HUMANOID_ROOT, ""))?.model;
    for j in m.joints.iter_mut() {
        j.damping = 0.0;
        j.stiffness = 0.0;
        j.armature = 0.0;
        j.frictionloss = 0.0;
        j.limited = false;
    }
    m.opt.flags.push(("contact".into(), false));
    Ok(m)
}

// ANCHOR: humanoid_spook
/// The hanging humanoid ([`hanging_humanoid`]) released at rest, `t_end` seconds by SPOOK (step
/// `h`, `epsilon` = [`SPOOK_EPSILON`], `tau = 2 h`, geoms dropped) and by the tree (RK4 with step
/// `h_tree`): the largest distance (m) between a body's centre of mass in the two at `t_end`,
/// over the bodies with mass (SPOOK gives the massless links between MuJoCo's multi-joint
/// bodies an artificial mass, [`crate::spook::MASSLESS_FRACTION`] of the lightest).
pub fn humanoid_spook_distance(h: f64, h_tree: f64, t_end: f64) -> Result<f64> {
    let model = hanging_humanoid()?;
    let q0 = model.qpos0.clone();
    let qd0 = vec![0.0; model.nv];
    let mut sys = SpookSystem::from_model(&model, q0.as_slice(), &qd0, SPOOK_EPSILON, 2.0 * h)?;
    sys.geoms.clear();
    let mut stepper = Stepper::new(&sys, h, StepSettings::default())?;
    for _ in 0..(t_end / h).round() as usize {
        stepper.step(&mut sys)?;
    }
    let mut tree_model = model.clone();
    tree_model.opt.timestep = h_tree;
    let mut sim = Simulator::new(&tree_model, State::reference(&tree_model), Integrator::Rk4)?;
    for _ in 0..(t_end / h_tree).round() as usize {
        sim.step()?;
    }
    let kin = crate::kinematics::forward_kinematics(&model, &sim.state.qpos)?;
    let mut worst: f64 = 0.0;
    for (body, &i) in sys.bodies.iter().zip(&sys.featherstone) {
        if model.inertia[i].m > 0.0 {
            let x_tree = kin.point(i, &model.inertia[i].com());
            worst = worst.max((body.x - x_tree).norm());
        }
    }
    Ok(worst)
}
// ANCHOR_END: humanoid_spook

/// The convergence study of `comparison_convergence.svg`: for each step of `hs`, the crank's
/// largest distance from `reference` over [`T_END`].
pub fn convergence(f: Formulation, hs: &[f64], reference: &Run) -> Result<Vec<(f64, f64)>> {
    hs.iter()
        .map(|&h| Ok((h, crank_trajectory(f, h)?.crank_error(reference))))
        .collect()
}

/// The softness study of `comparison_softness.svg`: MuJoCo (Newton, RK4, step
/// `h`) with `solimp = (d, d, ...)` for each `1 - d` of `softness`: `(1 - d, crank error)`.
pub fn softness(softness: &[f64], h: f64, reference: &Run) -> Result<Vec<(f64, f64)>> {
    softness
        .iter()
        .map(|&s| {
            let f = Formulation::MuJoCo {
                solver: Solver::Newton,
                integrator: Integrator::Rk4,
                d: Some(1.0 - s),
            };
            Ok((s, crank_trajectory(f, h)?.crank_error(reference)))
        })
        .collect()
}

/// The SPOOK steps of the hanging humanoid's table (s).
pub const HUMANOID_SPOOK_STEPS: [f64; 3] = [2e-3, 1e-3, 5e-4];

/// The steps of the convergence figure (s).
pub const CONVERGENCE_STEPS: [f64; 5] = [1e-2, 5e-3, 2.5e-3, 2e-3, 1e-3];

/// `(x, y)` pairs in a short scientific notation.
fn pairs(pts: &[(f64, f64)]) -> String {
    let v: Vec<String> = pts.iter().map(|(x, y)| format!("({x:.1e}, {y:.2e})")).collect();
    v.join(" ")
}

fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.1e}")
    }
}

/// Writes the figures and the tables into `dir`, printing the tables.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("One mechanism, every formulation: the planar four-bar");
    let forms = formulations();

    // Table 1: the crank's acceleration at one state.
    let h_spook = 1e-3; // unused by the formulations of this table
    let a_ref = crank_acceleration(Formulation::Gamma, h_spook)?;
    let mut t1 = String::from(
        "| formulation | crank acceleration (rad/s²) | distance from the reference (rad/s²) |\n|---|---|---|\n",
    );
    for &f in forms.iter().filter(|f| !matches!(f, Formulation::Spook(_))) {
        let a = crank_acceleration(f, h_spook)?;
        let _ = writeln!(t1, "| {} | {a:.10} | {} |", f.label(), sci((a - a_ref).abs()));
    }
    print!("{t1}");
    write_snippet(dir, "comparison_acceleration.md", &t1)?;

    // Table 2: trajectories.
    let reference = reference()?;
    let mut t2 = String::from(
        "| formulation | step h | crank angle error (rad) | constraint violation | energy drift (J) | µs per step |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut chart = Chart::new(
        &format!("Four-bar: crank angle against the loop-closure reference over {T_END} s"),
        "time t (s)",
        "|crank angle - reference| (rad)",
    )
    .log(false, true)
    .ranges(Some((0.0, T_END)), Some((1e-12, 10.0)));
    for &f in &forms {
        let h = if f == Formulation::Gamma { H_REF } else { table_step(f) };
        let r = if f == Formulation::Gamma {
            reference.clone()
        } else {
            crank_trajectory(f, h)?
        };
        let _ = writeln!(
            t2,
            "| {} | {} ms | {} | {} | {} | {:.1} |",
            f.label(),
            h * 1e3,
            sci(r.crank_error(&reference)),
            sci(r.max_violation()),
            sci(r.energy_drift()),
            1e6 * r.seconds / r.steps as f64
        );
        let plotted = matches!(
            f,
            Formulation::Tree(Method::Kkt)
                | Formulation::Spook(SpookSolver::Sparse)
                | Formulation::MuJoCo {
                    solver: Solver::Newton,
                    integrator: Integrator::Euler,
                    d: None,
                }
                | Formulation::MuJoCo {
                    solver: Solver::Newton,
                    integrator: Integrator::Rk4,
                    ..
                }
        );
        if plotted {
            let pts = r
                .crank_errors(&reference)
                .into_iter()
                .skip(1)
                .map(|(t, e)| (t, e.max(1e-12)))
                .collect();
            chart = chart.with(Series::line(&f.label(), pts));
        }
    }
    print!("{t2}");
    write_snippet(dir, "comparison_trajectory.md", &t2)?;
    let p = dir.join("comparison_crank_error.svg");
    chart.save_svg(&p)?;
    out.push(p);

    // Figure: convergence in h.
    let mut chart = Chart::new(
        &format!("Four-bar: largest crank angle error over {T_END} s against the step"),
        "step h (s)",
        "largest |crank angle - reference| (rad)",
    )
    .log(true, true);
    let studied = [
        Formulation::Tree(Method::Kkt),
        Formulation::Spook(SpookSolver::Sparse),
        Formulation::MuJoCo {
            solver: Solver::Newton,
            integrator: Integrator::Euler,
            d: Some(D_STIFF),
        },
    ];
    for f in studied {
        let pts = convergence(f, &CONVERGENCE_STEPS, &reference)?;
        println!("  convergence, {}: {}", f.label(), pairs(&pts));
        chart = chart.with(Series::line_points(
            &f.label(),
            pts.iter().map(|&(h, e)| (h, e.max(1e-14))).collect(),
        ));
        // a reference slope through the 1 ms point: 4 for RK4, 1 for a first-order step
        let (h1, e1) = pts[pts.len() - 1];
        if f == Formulation::Tree(Method::Kkt) {
            chart = chart.with(slope_line("slope 4", &CONVERGENCE_STEPS, h1, e1, 4.0));
        } else if matches!(f, Formulation::MuJoCo { .. }) {
            chart = chart.with(slope_line("slope 1", &CONVERGENCE_STEPS, h1, e1, 1.0));
        }
    }
    let p = dir.join("comparison_convergence.svg");
    chart.save_svg(&p)?;
    out.push(p);

    // Figure: MuJoCo's distance against its softness.
    let soft = [1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4];
    let pts = softness(&soft, 1e-3, &reference)?;
    println!("  softness (1 - d, error), Newton, RK4, h = 1 ms: {}", pairs(&pts));
    let p = dir.join("comparison_softness.svg");
    let (s0, e0) = pts[0];
    Chart::new(
        "MuJoCo four-bar: crank angle error against the softness 1 - d of solimp",
        "1 - d (solimp d0 = dwidth = d)",
        "largest |crank angle - reference| over 2 s (rad)",
    )
    .log(true, true)
    .with(Series::line_points("MuJoCo, Newton, RK4, h = 1 ms", pts.clone()))
    .with(slope_line("proportional to 1 - d", &soft, s0, e0, 1.0))
    .save_svg(&p)?;
    out.push(p);

    // Table 3: cost.
    let mut t3 = String::from("| formulation | problem per evaluation | µs per evaluation |\n|---|---|---|\n");
    for &f in &forms {
        let what = match f {
            Formulation::Spook(_) => format!("{} (one step)", f.label()),
            _ => f.label(),
        };
        let _ = writeln!(t3, "| {what} | {} | {:.2} |", problem_size(f)?, evaluation_time_us(f)?);
    }
    print!("{t3}");
    write_snippet(dir, "comparison_cost.md", &t3)?;

    // Table 4: the humanoid.
    println!("The Gymnasium humanoid, a tree: acceleration at one state");
    let rows = humanoid_accelerations()?;
    let reference_qacc = rows[0].1.clone();
    let mut t4 = String::from("| route | largest distance from ABA (rad/s², m/s²) | µs per call |\n|---|---|---|\n");
    for (label, qacc, us) in &rows {
        let _ = writeln!(t4, "| {label} | {} | {us:.1} |", sci((qacc - &reference_qacc).amax()));
    }
    print!("{t4}");
    write_snippet(dir, "comparison_humanoid.md", &t4)?;
    let mut t5 = String::from(
        "| SPOOK step h | largest distance of a body's centre of mass from the tree's after 0.5 s (m) |\n|---|---|\n",
    );
    for h in HUMANOID_SPOOK_STEPS {
        let d = humanoid_spook_distance(h, 2.5e-4, 0.5)?;
        let _ = writeln!(t5, "| {} ms | {} |", h * 1e3, sci(d));
    }
    print!("{t5}");
    write_snippet(dir, "comparison_humanoid_spook.md", &t5)?;
    Ok(out)
}
