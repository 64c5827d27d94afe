//! SPOOK: Lacoursière's regularized, stabilized variational stepper for rigid bodies in maximal
//! coordinates. Book chapter: "SPOOK: a variational stepper" (`book/src/spook.md`).
//!
//! | book section | item |
//! |---|---|
//! | Rigid bodies in maximal coordinates | [`Body`] (`x`, `rho`, `nu`, `omega`), [`Body::inertia_world`] (`I^s = R I^b R^T`) |
//! | The quaternion step | [`quat_step`], [`gamma`] (`Gamma(rho)`), [`d_rot`] |
//! | Holonomic constraints and their Jacobians | [`Constraint`], [`ConstraintKind`], [`constraint_rows`] (`phi`, `d phi/dq`), [`g_row`] (`g_i = d phi/dq Gamma`) |
//! | Building a system from a model | [`SpookSystem::from_model`] (tree joints, loop joints, connect and weld) |
//! | The matrix form | [`Stepper::block_system`] (`[[M, -G^T], [G, Sigma]]`), [`spook_parameters`] (`Upsilon`, `Sigma`) |
//! | Solving it | [`Stepper::solve_direct`] (LU), [`Stepper::solve_schur`] (`S = G M^-1 G^T + Sigma`), [`Stepper::solve_pgs`] |
//! | Sparse direct solves (chapter "Sparse direct solves for SPOOK") | [`Stepper::solve_sparse`], [`SpookSparse`], [`sparse::block_graph`], [`graph_scene`] |
//! | One step | [`Stepper::step`] |
//! | Contacts and friction | [`Stepper::assemble`] with [`crate::collision`], [`RowKind`] |
//! | Stabilization and its time scale | [`violation_decay_factor`] |
//! | SPOOK and MuJoCo's soft constraints | [`from_solref`] (`solref`, `solimp` -> `epsilon`, `tau`), [`mujoco_equivalent`] |
//! | Scenes | [`scenes`] |
//! | One call for the command line | [`simulate`], [`SpookOptions`] |
//!
//! Conventions. State per body: `qpos = [x (3), rho (4, w x y z)]`, `qvel = [nu (3), omega (3)]`,
//! all in world coordinates, `x` the centre of mass. `Upsilon` is the **thesis's**
//! `1 / (1 + 4 tau / h)`; some course notes write `Upsilon = 1 + 4 tau / h` and divide by it.

mod body;
mod constraint;
pub mod scenes;
pub mod sparse;
mod stepper;
mod system;

pub use body::{d_rot, gamma, quat_step, Body};
pub use constraint::{constraint_rows, g_row, joint_coordinate, Constraint, ConstraintKind, Dq, Frame};
pub use sparse::{graph_scene, BodyGraph, SpookSparse};
pub use stepper::{
    gyroscopic_inertia, spook_parameters, violation, Row, RowKind, SpookSolver, StepSettings, Stepper, SPARSE_THRESHOLD,
};
pub use system::{SpookGeom, SpookSystem, MASSLESS_FRACTION};

use crate::error::{Error, Result};
use crate::integrate::{check_timestep, Recorder};
use crate::model::Model;

/// The signals SPOOK records beside the state, in this order: kinetic and potential energy (J),
/// their sum, the constraint violation `max |phi_i|` over the joint rows, the number of contacts.
pub const SIGNALS: [&str; 5] = ["energy_kinetic", "energy_potential", "energy", "violation", "ncon"];

/// Options of [`simulate`].
#[derive(Clone, Debug, PartialEq)]
pub struct SpookOptions {
    /// Time step `h` (s); `None`: the model's `opt.timestep`.
    pub timestep: Option<f64>,
    /// Regularization `epsilon` of every joint constraint (compliance, m/N for position rows).
    pub epsilon: f64,
    /// Stabilization time `tau` (s) of every joint constraint; `None`: `2 h` (`d = tau/h = 2`).
    pub tau: Option<f64>,
    /// Solver and contact settings.
    pub settings: StepSettings,
}

impl Default for SpookOptions {
    fn default() -> Self {
        SpookOptions {
            timestep: None,
            epsilon: 1e-8,
            tau: None,
            settings: StepSettings::default(),
        }
    }
}

impl SpookOptions {
    /// The step `h` and `tau` for `model`, checked: `h > 0`, `epsilon >= 0`, `tau >= 0`, all
    /// finite.
    pub fn resolve(&self, model: &Model) -> Result<(f64, f64)> {
        let h = self.timestep.unwrap_or(model.opt.timestep);
        check_timestep(h)?;
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return Err(Error::BadParameter {
                what: "SPOOK epsilon".into(),
                value: self.epsilon,
                why: "must be finite and >= 0".into(),
            });
        }
        let tau = self.tau.unwrap_or(2.0 * h);
        if !(tau.is_finite() && tau >= 0.0) {
            return Err(Error::BadParameter {
                what: "SPOOK tau".into(),
                value: tau,
                why: "must be finite and >= 0".into(),
            });
        }
        Ok((h, tau))
    }
}

/// Records the current state of `sys` with the [`SIGNALS`] (`ncon` from the stepper's last
/// assembly).
pub fn record(
    sys: &SpookSystem,
    time: f64,
    ncon: usize,
    rec: &mut impl Recorder,
    buf: &mut (Vec<f64>, Vec<f64>),
) -> Result<()> {
    sys.state(&mut buf.0, &mut buf.1);
    let (ek, ep) = (sys.kinetic_energy(), sys.potential_energy());
    rec.record(time, &buf.0, &buf.1, &[ek, ep, ek + ep, violation(sys), ncon as f64])
}

/// Steps `sys` `steps` times with `stepper`, recording the initial state and every step.
pub fn run(sys: &mut SpookSystem, stepper: &mut Stepper, steps: usize, rec: &mut impl Recorder) -> Result<()> {
    let mut buf = (vec![], vec![]);
    record(sys, 0.0, 0, rec, &mut buf)?;
    for k in 1..=steps {
        stepper.step(sys)?;
        record(sys, k as f64 * stepper.h, stepper.contacts.len(), rec, &mut buf)?;
    }
    Ok(())
}

/// The one-call entry for the command line (`mbd simulate MODEL.xml --engine spook`): builds
/// the SPOOK system of `model` at `qpos0` at rest ([`SpookSystem::from_model`]) and records
/// `steps` steps into `rec` with the layout of [`SpookSystem::state`] and the [`SIGNALS`].
pub fn simulate(model: &Model, opts: &SpookOptions, steps: usize, rec: &mut impl Recorder) -> Result<()> {
    let (h, tau) = opts.resolve(model)?;
    let mut sys = SpookSystem::from_model(model, model.qpos0.as_slice(), &vec![0.0; model.nv], opts.epsilon, tau)?;
    let mut stepper = Stepper::new(&sys, h, opts.settings.clone())?;
    run(&mut sys, &mut stepper, steps, rec)
}

// ANCHOR: decay
/// The factor by which a constraint violation shrinks per step under SPOOK's stabilization, in
/// the stiff limit `epsilon -> 0` with no other forces: the spectral radius of the recurrence
/// `w_{k+1} = Upsilon (w_k - 4 phi_k)`, `phi_{k+1} = phi_k + w_{k+1}` (`w = h G v`), whose
/// characteristic polynomial is `z^2 - (1 - 3 Upsilon) z + Upsilon`. It is 1 for `tau = 0`
/// (no decay), smallest (`1/3`, a double root) at `tau = 2 h`, and tends to 1 again as
/// `tau / h` grows: a large `tau` returns slowly to the constraint.
pub fn violation_decay_factor(h: f64, tau: f64) -> f64 {
    let (upsilon, _) = spook_parameters(h, 0.0, tau);
    let tr = 1.0 - 3.0 * upsilon;
    let disc = tr * tr - 4.0 * upsilon;
    if disc >= 0.0 {
        0.5 * (tr.abs() + disc.sqrt())
    } else {
        upsilon.sqrt()
    }
}
// ANCHOR_END: decay

// ANCHOR: from_solref
/// SPOOK's `(epsilon, tau)` for a constraint row that returns from a violation as MuJoCo's soft
/// constraint with `solref = (timeconst, dampratio)` (standard format, after MuJoCo's `refsafe`)
/// and impedance `d` (`solimp`'s value at the violation; `dmax = solimp[1]`) does, on a row of
/// effective inverse mass `inv_mass = G M^-1 G^T` (MuJoCo's `A`, assumed equal to its estimate
/// `A-hat`). Book section "SPOOK and MuJoCo's soft constraints".
///
/// With no other force MuJoCo's row accelerates as `r'' = d aref = -d B r' - d^2 K r` with
/// `K = 1 / (dmax^2 timeconst^2 dampratio^2)` and `B = 2 / (dmax timeconst)` (MuJoCo's
/// `mj_makeImpedance`); SPOOK's spring `1/epsilon` and damper `tau/epsilon` on the effective
/// mass `1/inv_mass` give `r'' = -(inv_mass/epsilon) (r + tau r')`. Equal coefficients:
/// `epsilon = inv_mass / (d^2 K)`, `tau = B / (d K)`; at `d = dmax`,
/// `epsilon = inv_mass timeconst^2 dampratio^2` and `tau = 2 timeconst dampratio^2`.
///
/// Errors: `timeconst`, `dampratio` or `inv_mass` not positive and finite, `d` or `dmax` outside
/// `(0, 1)`.
pub fn from_solref(solref: [f64; 2], d: f64, dmax: f64, inv_mass: f64) -> Result<(f64, f64)> {
    let [timeconst, dampratio] = solref;
    for (what, v, ok) in [
        ("solref timeconst", timeconst, timeconst > 0.0),
        ("solref dampratio", dampratio, dampratio > 0.0),
        ("impedance d", d, d > 0.0 && d < 1.0),
        ("impedance dmax", dmax, dmax > 0.0 && dmax < 1.0),
        ("effective inverse mass", inv_mass, inv_mass > 0.0),
    ] {
        if !(v.is_finite() && ok) {
            return Err(Error::BadParameter {
                what: what.into(),
                value: v,
                why: "timeconst, dampratio and inverse mass must be positive, d and dmax in (0, 1)".into(),
            });
        }
    }
    let k = 1.0 / (dmax * dmax * timeconst * timeconst * dampratio * dampratio);
    let b = 2.0 / (dmax * timeconst);
    Ok((inv_mass / (d * d * k), b / (d * k)))
}
// ANCHOR_END: from_solref

// ANCHOR: mujoco_equivalent
/// MuJoCo's parameters under which MuJoCo's Euler step of one bilateral row *is* SPOOK's step
/// with `(h, epsilon, tau)` on a row of effective inverse mass `inv_mass` (book section "SPOOK
/// and MuJoCo's soft constraints"): returns `solref` in MuJoCo's direct format
/// `(-stiffness, -damping)` and the constant impedance `d` (`solimp = (d, d, ...)`).
///
/// Dividing SPOOK's Schur row by `h` gives MuJoCo's bilateral row `(A + R) f = a_ref - a_0`
/// with `f = lambda~ / h`, `R = Sigma`, and `a_ref = -(4 Upsilon / h^2) (phi + tau G v)`.
/// MuJoCo sets `R = (1 - d)/d A-hat` and `a_ref = -B v - K d phi` with `K = -solref[0] / d^2`,
/// `B = -solref[1] / d` (at `d = dmax`), so `d = A / (A + Sigma)`,
/// `solref = -d (4 Upsilon / h^2) (1, tau)`. Errors: a bad `h`, `epsilon` or `inv_mass` not
/// positive, `tau < 0`, or a `d` outside MuJoCo's range `[mjMINIMP, mjMAXIMP]` = `[1e-4, 0.9999]`
/// (MuJoCo would clamp it and no longer take SPOOK's step).
pub fn mujoco_equivalent(h: f64, epsilon: f64, tau: f64, inv_mass: f64) -> Result<([f64; 2], f64)> {
    check_timestep(h)?;
    for (what, v) in [
        ("SPOOK epsilon", epsilon),
        ("SPOOK tau", tau),
        ("effective inverse mass", inv_mass),
    ] {
        if !(v.is_finite() && v >= 0.0) || (v == 0.0 && what != "SPOOK tau") {
            return Err(Error::BadParameter {
                what: what.into(),
                value: v,
                why: "epsilon and the inverse mass must be positive, tau >= 0, all finite".into(),
            });
        }
    }
    let (upsilon, sigma) = spook_parameters(h, epsilon, tau);
    let d = inv_mass / (inv_mass + sigma);
    if !(crate::model::constants::mjMINIMP..=crate::model::constants::mjMAXIMP).contains(&d) {
        return Err(Error::BadParameter {
            what: "impedance d = A / (A + Sigma) of the MuJoCo equivalent".into(),
            value: d,
            why: "outside MuJoCo's [1e-4, 0.9999]: MuJoCo would clamp it".into(),
        });
    }
    let k = 4.0 * upsilon / (h * h);
    Ok(([-k * d, -k * tau * d], d))
}
// ANCHOR_END: mujoco_equivalent
