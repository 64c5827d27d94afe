//! Simulating a closed-loop system: the three methods of 8.5 with Baumgarte stabilization
//! (8.3), stepped by the crate's one integrator module ([`crate::integrate`]: MuJoCo's RK4
//! tableau or semi-implicit Euler) and recorded into its one [`Trajectory`].

use super::constraints::loop_constraints;
use super::solve::{forward_dynamics, Method};
use crate::dynamics::{kinetic_energy, passive_forces, potential_energy};
use crate::error::{Error, Result};
use crate::integrate::{check_timestep, euler_step, rk4_step, Recorder, StepScratch, Trajectory};
use crate::model::{Integrator, Model};
use crate::vector::AsVector;

/// Name of the recorded loop-closure error signal: the Euclidean norm of the stacked position
/// errors of every loop joint (Featherstone table 8.1).
pub const LOOP_ERROR: &str = "loop_error";
/// Name of the recorded total energy signal, kinetic plus potential (J).
pub const ENERGY: &str = "energy";

/// How [`simulate`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimulateOptions {
    /// Which of the three methods of 8.5 solves for `qdd` at every stage.
    pub method: Method,
    /// The scheme: [`Integrator::Rk4`] (MuJoCo's tableau) or [`Integrator::Euler`]
    /// (semi-implicit: `qdot += h qdd`, then `q = q (+) h qdot`).
    pub integrator: Integrator,
    /// Step size h (s).
    pub h: f64,
    /// Number of steps.
    pub steps: usize,
    /// Baumgarte time constant `T_stab` (None: no stabilization, and the loop-closure error
    /// drifts).
    pub t_stab: Option<f64>,
}

impl SimulateOptions {
    /// `steps` RK4 steps of size `h` with the KKT method and no stabilization; change the other
    /// fields with struct update syntax.
    pub fn new(h: f64, steps: usize) -> Self {
        SimulateOptions {
            method: Method::Kkt,
            integrator: Integrator::Rk4,
            h,
            steps,
            t_stab: None,
        }
    }
}

// ANCHOR: simulate
/// The closed-loop acceleration of 8.5 at `(q, qdot)`: `tau` = the model's passive forces.
fn closed_loop_qacc(model: &Model, q: &[f64], qd: &[f64], o: &SimulateOptions, qdd: &mut [f64]) -> Result<()> {
    let tau = passive_forces(model, q, qd)?;
    let sol = forward_dynamics(model, q, qd, tau.as_slice(), None, o.method, o.t_stab)?;
    qdd.copy_from_slice(sol.qdd.as_slice());
    Ok(())
}

/// Simulates a closed-loop system from `(q0, qd0)`: at every stage `qdd` comes from
/// [`forward_dynamics`] with the chosen method, the model's passive forces as `tau`, and
/// Baumgarte stabilization with time constant `t_stab`. Records `q`, `qdot` and the signals
/// [`LOOP_ERROR`] and [`ENERGY`] at every step.
pub fn simulate(
    model: &Model,
    q0: &(impl AsVector + ?Sized),
    qd0: &(impl AsVector + ?Sized),
    o: &SimulateOptions,
) -> Result<Trajectory> {
    let q0 = q0.as_vector();
    let qd0 = qd0.as_vector();
    model.check_state(q0, qd0)?;
    check_timestep(o.h)?;
    if !matches!(o.integrator, Integrator::Rk4 | Integrator::Euler) {
        return Err(Error::Unsupported {
            what: format!("integrator '{}' for closed loops", o.integrator),
            why: "use RK4 or Euler".into(),
        });
    }
    let mut out = Trajectory::new(&[LOOP_ERROR, ENERGY]);
    let (mut q, mut qd) = (q0.to_vec(), qd0.to_vec());
    let mut qdd = vec![0.0; model.nv];
    let mut scratch = StepScratch::new(model);
    let mut f = |q: &[f64], qd: &[f64], qdd: &mut [f64]| closed_loop_qacc(model, q, qd, o, qdd);
    record(model, &mut out, 0.0, &q, &qd)?;
    for step in 1..=o.steps {
        match o.integrator {
            Integrator::Rk4 => rk4_step(model, &mut scratch, &mut f, &mut q, &mut qd, o.h)?,
            _ => euler_step(model, &mut f, &mut q, &mut qd, &mut qdd, o.h)?,
        }
        record(model, &mut out, step as f64 * o.h, &q, &qd)?;
    }
    Ok(out)
}

/// One sample: the state, its loop-closure error norm and its total energy (the state check
/// inside the energy functions catches a run that stopped being finite).
fn record(model: &Model, out: &mut Trajectory, t: f64, q: &[f64], qd: &[f64]) -> Result<()> {
    let zeros = vec![0.0; model.nv];
    let err = loop_constraints(model, q, &zeros, None)?.err_norm();
    let e = kinetic_energy(model, q, qd)? + potential_energy(model, q)?;
    out.record(t, q, qd, &[err, e])
}
// ANCHOR_END: simulate
