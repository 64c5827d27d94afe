//! Simulating a closed-loop system: the three methods of 8.5 with Baumgarte stabilization
//! (8.3), integrated by RK4 or semi-implicit Euler.

use super::constraints::loop_constraints;
use super::solve::{forward_dynamics, Method};
use crate::dynamics::{kinetic_energy, passive_forces, potential_energy};
use crate::error::{check_vector, Error, Result};
use crate::model::Model;
use nalgebra::DVector;

/// Time integrator of [`simulate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Classical fourth-order Runge-Kutta on `(q, qdot)`, positions advanced with the
    /// quaternion-aware [`Model::integrate`] from the step's start.
    Rk4,
    /// `qdot <- qdot + h qdd(q, qdot)`, then `q <- q (+) h qdot` (symplectic Euler).
    SemiImplicitEuler,
}

/// A simulated trajectory, one entry per sample (the initial state and every step).
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// Time (s).
    pub t: Vec<f64>,
    /// Positions.
    pub q: Vec<DVector<f64>>,
    /// Velocities.
    pub qd: Vec<DVector<f64>>,
    /// Euclidean norm of the stacked loop-closure error.
    pub err_norm: Vec<f64>,
    /// Total energy, kinetic plus potential (J).
    pub energy: Vec<f64>,
}

impl Trajectory {
    /// Largest loop-closure error norm along the trajectory.
    pub fn max_err(&self) -> f64 {
        self.err_norm.iter().fold(0.0, |m, e| m.max(*e))
    }
    /// Largest deviation of the energy from its initial value.
    pub fn max_energy_drift(&self) -> f64 {
        let e0 = self.energy.first().copied().unwrap_or(0.0);
        self.energy.iter().fold(0.0, |m, e| m.max((e - e0).abs()))
    }
}

fn qacc(model: &Model, q: &[f64], qd: &[f64], method: Method, t_stab: Option<f64>) -> Result<DVector<f64>> {
    let tau = passive_forces(model, q, qd)?;
    Ok(forward_dynamics(model, q, qd, tau.as_slice(), None, method, t_stab)?.qdd)
}

// ANCHOR: simulate
/// Simulates a closed-loop system from `(q0, qd0)` for `steps` steps of size `h`: at every stage
/// `qdd` comes from [`forward_dynamics`] with `method`, the model's passive forces as `tau`, and
/// Baumgarte stabilization with time constant `t_stab` (`None`: none, and the loop-closure error
/// drifts). Records `q`, `qdot`, the loop-closure error norm and the total energy at every step.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    model: &Model,
    q0: &[f64],
    qd0: &[f64],
    method: Method,
    integrator: Integrator,
    h: f64,
    steps: usize,
    t_stab: Option<f64>,
) -> Result<Trajectory> {
    model.check_state(q0, qd0)?;
    if !(h.is_finite() && h > 0.0) {
        return Err(Error::Other(format!("time step h = {h} must be positive and finite")));
    }
    let mut q = q0.to_vec();
    let mut qd = DVector::from_column_slice(qd0);
    let mut out = Trajectory {
        t: vec![],
        q: vec![],
        qd: vec![],
        err_norm: vec![],
        energy: vec![],
    };
    let zeros = vec![0.0; model.nv];
    let mut record = |t: f64, q: &[f64], qd: &DVector<f64>| -> Result<()> {
        let err = loop_constraints(model, q, &zeros, None)?.err_norm();
        let e = kinetic_energy(model, q, qd.as_slice())? + potential_energy(model, q)?;
        check_vector("state during simulation", qd.as_slice(), model.nv)?;
        out.t.push(t);
        out.q.push(DVector::from_column_slice(q));
        out.qd.push(qd.clone());
        out.err_norm.push(err);
        out.energy.push(e);
        Ok(())
    };
    record(0.0, &q, &qd)?;
    for step in 1..=steps {
        match integrator {
            Integrator::SemiImplicitEuler => {
                let a = qacc(model, &q, qd.as_slice(), method, t_stab)?;
                qd += a * h;
                model.integrate_with(&mut q, qd.as_slice(), h);
            }
            Integrator::Rk4 => {
                let stage = |dq: &DVector<f64>, dt: f64| {
                    let mut qs = q.clone();
                    model.integrate_with(&mut qs, dq.as_slice(), dt);
                    qs
                };
                let v1 = qd.clone();
                let a1 = qacc(model, &q, v1.as_slice(), method, t_stab)?;
                let v2 = &qd + &a1 * (0.5 * h);
                let a2 = qacc(model, &stage(&v1, 0.5 * h), v2.as_slice(), method, t_stab)?;
                let v3 = &qd + &a2 * (0.5 * h);
                let a3 = qacc(model, &stage(&v2, 0.5 * h), v3.as_slice(), method, t_stab)?;
                let v4 = &qd + &a3 * h;
                let a4 = qacc(model, &stage(&v3, h), v4.as_slice(), method, t_stab)?;
                let v = (v1 + v2 * 2.0 + v3 * 2.0 + v4) / 6.0;
                let a = (a1 + a2 * 2.0 + a3 * 2.0 + a4) / 6.0;
                model.integrate_with(&mut q, v.as_slice(), h);
                model.normalize_quaternions_with(&mut q);
                qd += a * h;
            }
        }
        record(step as f64 * h, &q, &qd)?;
    }
    Ok(out)
}
// ANCHOR_END: simulate
