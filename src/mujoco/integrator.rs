//! MuJoCo's time stepping for models without constraints: `mj_step` = `mj_forward` (here the
//! smooth acceleration) followed by `mj_Euler` or `mj_RungeKutta`, with the state checks of
//! `mj_checkPos`/`mj_checkVel`/`mj_checkAcc`.
//!
//! | MuJoCo | here |
//! |---|---|
//! | `mjData.{time, qpos, qvel, qfrc_applied}` | [`State`] |
//! | `mj_Euler` with implicit joint damping | [`Simulator::step`] with [`Integrator::Euler`]: [`DampedAcceleration`] solves `(M + h D) qacc = f` |
//! | `mj_RungeKutta` (RK4 tableau, `dexp^-1` on ball and free joints) | [`Simulator::step`] with [`Integrator::Rk4`], [`crate::integrate::rk4_step`] |
//! | `mj_checkPos`, `mj_checkVel`, `mj_checkAcc` | [`check_finite`]: an error naming step, time and entry (MuJoCo resets the state and warns; the strict error is the only policy so far) |
//!
//! A student writes a controller against [`Simulator`]: set `sim.state.qfrc_applied` (the
//! generalized control forces) and call [`Simulator::step`]. Models with constraints (contacts,
//! equality constraints, friction loss, joint limits; [`super::forward::has_constraints`]) take
//! their acceleration from the whole constrained `mj_forward` of [`super::forward`]
//! ([`ConstrainedAcceleration`]); the others from the smooth dynamics ([`DampedAcceleration`]).

use super::collision::candidate_pairs;
use super::forward::{has_constraints, ConstrainedAcceleration, Forward};
use crate::dynamics::{
    aba_with, crba_with, kinetic_energy, passive_forces_with, potential_energy, rnea_with, Workspace,
};
use crate::error::{check_vector, Error, Result};
use crate::integrate::{check_timestep, euler_step, rk4_step, Acceleration, Recorder, StepScratch};
use crate::model::{Equality, Integrator, Model, MJ_MAXVAL};
use crate::sparse::{cholesky_dense_in_place, cholesky_solve_dense_with};
use nalgebra::DMatrix;

/// MuJoCo's simulation state (the part of `mjData` a user sets): time, positions, velocities
/// and applied generalized forces, in MuJoCo's conventions (quaternions w, x, y, z; free-joint
/// qvel = [world linear velocity of the body origin, body-frame angular velocity]).
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Simulation time (s).
    pub time: f64,
    /// Generalized positions (nq).
    pub qpos: Vec<f64>,
    /// Generalized velocities (nv).
    pub qvel: Vec<f64>,
    /// Applied generalized forces, MuJoCo's `qfrc_applied` (nv): the controls of a student's
    /// controller.
    pub qfrc_applied: Vec<f64>,
}

impl State {
    /// The model's reference state: time 0, `qpos0`, zero velocity, no applied force.
    pub fn reference(model: &Model) -> Self {
        State {
            time: 0.0,
            qpos: model.qpos0.as_slice().to_vec(),
            qvel: vec![0.0; model.nv],
            qfrc_applied: vec![0.0; model.nv],
        }
    }

    /// Checks lengths, finiteness, magnitudes and quaternions against `model`.
    pub fn check(&self, model: &Model) -> Result<()> {
        model.check_state(&self.qpos, &self.qvel)?;
        check_vector("qfrc_applied", &self.qfrc_applied, model.nv)?;
        check_finite(None, self.time, "qpos", &self.qpos)?;
        check_finite(None, self.time, "qvel", &self.qvel)?;
        check_finite(None, self.time, "qfrc_applied", &self.qfrc_applied)
    }
}

/// MuJoCo's `mj_checkPos`/`mj_checkVel`/`mj_checkAcc` as an error: the first entry of `x` that
/// is not finite or exceeds `mjMAXVAL` in magnitude, named with the step (None: the initial
/// state) and time.
pub fn check_finite(step: Option<usize>, time: f64, quantity: &'static str, x: &[f64]) -> Result<()> {
    match x.iter().position(|v| !v.is_finite() || v.abs() > MJ_MAXVAL) {
        None => Ok(()),
        Some(index) => Err(Error::Diverged {
            step,
            time,
            quantity,
            index,
            value: x[index],
        }),
    }
}

/// An error naming the first reason why a model's MuJoCo simulation involves constraints:
/// equality constraints, geoms that can touch (MuJoCo's broad-phase filter,
/// [`super::collision::may_collide`]) and dry joint friction (`frictionloss`); joint limits are
/// not checked here (see [`super::forward::has_constraints`]). The [`Simulator`] steps such
/// models through the constrained pipeline.
pub fn check_unconstrained(model: &Model) -> Result<()> {
    if let Some(eq) = model.equality.first() {
        let name = match eq {
            Equality::Connect { name, .. }
            | Equality::Weld { name, .. }
            | Equality::Joint { name, .. }
            | Equality::Tendon { name, .. } => name,
        };
        return Err(Error::Unsupported {
            what: format!("equality constraint '{name}'"),
            why: "constraints are not simulated yet".into(),
        });
    }
    if let Some(&(a, b)) = candidate_pairs(model).first() {
        let (ga, gb) = (&model.geoms[a], &model.geoms[b]);
        return Err(Error::Unsupported {
            what: format!(
                "geoms '{}' (body '{}') and '{}' (body '{}')",
                ga.name, model.mj_body_name[model.mj_body[ga.body]], gb.name, model.mj_body_name[model.mj_body[gb.body]]
            ),
            why: "they can collide and contacts are not simulated yet (set contype=\"0\" conaffinity=\"0\" to simulate without contacts)".into(),
        });
    }
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if j.frictionloss > 0.0 {
            return Err(Error::Unsupported {
                what: format!("joint '{}' with frictionloss {}", j.name, j.frictionloss),
                why: "dry friction is a constraint and is not simulated yet".into(),
            });
        }
    }
    Ok(())
}

// ANCHOR: damped
/// The acceleration of MuJoCo's Euler step with implicit joint damping (`mj_Euler`): the damping
/// force `-D v` is taken at the end of the step, `v+ = v + h qacc` with
/// `M qacc = f - D (v + h qacc)`, i.e. `(M + h D) qacc = qfrc_smooth = qfrc_passive +
/// qfrc_applied - qfrc_bias`, where `qfrc_passive` still holds `-D v`. Without damping (or with
/// `h = 0`) it is the smooth acceleration of ABA.
pub struct DampedAcceleration<'a> {
    /// The model.
    pub model: &'a Model,
    /// Recursive-algorithm scratch.
    pub ws: &'a mut Workspace,
    /// Applied generalized forces.
    pub qfrc_applied: &'a [f64],
    /// `h`, the step the damping is implicit over (0 for the plain smooth acceleration).
    pub h: f64,
    /// `M + h D`, then its Cholesky factor (nv x nv).
    pub m: &'a mut DMatrix<f64>,
    /// `qfrc_smooth` (nv).
    pub f: &'a mut Vec<f64>,
    /// Bias forces (nv).
    pub bias: &'a mut Vec<f64>,
    /// Zeros (nv), the acceleration at which RNEA gives the bias forces.
    pub zeros: &'a [f64],
}

impl Acceleration for DampedAcceleration<'_> {
    fn qacc(&mut self, qpos: &[f64], qvel: &[f64], qacc: &mut [f64]) -> Result<()> {
        let model = self.model;
        passive_forces_with(model, qpos, qvel, self.f)?;
        for (f, a) in self.f.iter_mut().zip(self.qfrc_applied) {
            *f += a;
        }
        let damped = self.h > 0.0 && (1..=model.nb).any(|i| model.joints[i].damping > 0.0);
        if !damped {
            // qacc_smooth by ABA with tau = qfrc_passive + qfrc_applied
            return aba_with(model, self.ws, qpos, qvel, self.f, None, qacc);
        }
        rnea_with(model, self.ws, qpos, qvel, self.zeros, None, self.bias);
        // crba_with writes only the tree's pattern of the lower triangle: clear the fill-in the
        // last step's Cholesky factor left elsewhere
        self.m.fill(0.0);
        crba_with(model, self.ws, qpos, self.m);
        for i in 1..=model.nb {
            for dof in model.dofs(i) {
                self.m[(dof, dof)] += self.h * model.joints[i].damping;
            }
        }
        for k in 0..model.nv {
            qacc[k] = self.f[k] - self.bias[k];
        }
        cholesky_dense_in_place(self.m, "M + h diag(damping) of the implicit-damping Euler step")?;
        cholesky_solve_dense_with(self.m, qacc);
        Ok(())
    }
}
// ANCHOR_END: damped

/// MuJoCo's `mj_step`, one call per step; allocation-free after [`Simulator::new`] for models
/// without constraints.
pub struct Simulator<'m> {
    /// The model.
    pub model: &'m Model,
    /// The state, advanced by [`Simulator::step`]; set `state.qfrc_applied` to control it.
    pub state: State,
    /// The scheme.
    pub integrator: Integrator,
    /// Steps taken.
    pub steps: usize,
    /// The acceleration of the last step's first stage (`qacc`, nv).
    pub qacc: Vec<f64>,
    ws: Workspace,
    scratch: StepScratch,
    m: DMatrix<f64>,
    f: Vec<f64>,
    bias: Vec<f64>,
    zeros: Vec<f64>,
    /// The constrained pipeline, for models with constraints.
    forward: Option<Forward<'m>>,
}

impl<'m> Simulator<'m> {
    /// A simulator at `state`, after checking that the time step is positive and finite, the
    /// integrator is implemented (Euler, RK4) and the state valid.
    pub fn new(model: &'m Model, state: State, integrator: Integrator) -> Result<Self> {
        check_timestep(model.opt.timestep)?;
        if !matches!(integrator, Integrator::Euler | Integrator::Rk4) {
            return Err(Error::Unsupported {
                what: format!("integrator '{integrator}'"),
                why: "not implemented yet (use Euler or RK4)".into(),
            });
        }
        state.check(model)?;
        let forward = if has_constraints(model) {
            Some(Forward::new(model)?)
        } else {
            None
        };
        Ok(Simulator {
            model,
            state,
            integrator,
            steps: 0,
            qacc: vec![0.0; model.nv],
            ws: Workspace::new(model),
            scratch: StepScratch::new(model),
            m: DMatrix::zeros(model.nv, model.nv),
            f: vec![0.0; model.nv],
            bias: vec![0.0; model.nv],
            zeros: vec![0.0; model.nv],
            forward,
        })
    }

    /// One step of size `model.opt.timestep`. Fails with [`Error::Diverged`] (naming the step,
    /// time and first bad entry of `qpos`, `qvel` or `qacc`) when the state stops being finite or
    /// exceeds `mjMAXVAL`. On failure the state is left as it was before the step.
    pub fn step(&mut self) -> Result<()> {
        let model = self.model;
        let h = model.opt.timestep;
        let (mut q, mut v) = (self.state.qpos.clone(), self.state.qvel.clone());
        let h_damping = if self.integrator == Integrator::Euler { h } else { 0.0 };
        let state = (&self.state.qpos[..], &self.state.qvel[..]);
        let scratch = &mut self.scratch;
        let qacc = &mut self.qacc;
        match &mut self.forward {
            // the acceleration hook: the constrained mj_forward for models with constraints
            Some(fw) => {
                let mut f = ConstrainedAcceleration {
                    forward: fw,
                    qfrc_applied: &self.state.qfrc_applied,
                    h: h_damping,
                };
                advance(model, self.integrator, scratch, &mut f, &mut q, &mut v, qacc, state, h)?
            }
            None => {
                let mut f = DampedAcceleration {
                    model,
                    ws: &mut self.ws,
                    qfrc_applied: &self.state.qfrc_applied,
                    h: h_damping,
                    m: &mut self.m,
                    f: &mut self.f,
                    bias: &mut self.bias,
                    zeros: &self.zeros,
                };
                advance(model, self.integrator, scratch, &mut f, &mut q, &mut v, qacc, state, h)?
            }
        }
        let step = Some(self.steps + 1);
        let t = self.state.time + h;
        check_finite(step, self.state.time, "qacc", &self.qacc)?;
        check_finite(step, t, "qpos", &q)?;
        check_finite(step, t, "qvel", &v)?;
        self.state.qpos = q;
        self.state.qvel = v;
        self.state.time = t;
        self.steps += 1;
        Ok(())
    }

    /// The constrained pipeline's outputs at the last evaluation (contacts, rows, forces), for
    /// models with constraints.
    pub fn forward_data(&self) -> Option<&super::forward::ForwardData> {
        self.forward.as_ref().map(|f| &f.d)
    }

    /// `[potential, kinetic]` energy of the current state (MuJoCo's `energy`).
    pub fn energy(&self) -> Result<[f64; 2]> {
        Ok([
            potential_energy(self.model, &self.state.qpos)?,
            kinetic_energy(self.model, &self.state.qpos, &self.state.qvel)?,
        ])
    }

    /// The signals [`Simulator::run`] records beside the state.
    pub const SIGNALS: [&'static str; 2] = ["energy_potential", "energy_kinetic"];

    /// Records the current state and its energy.
    fn sample(&self, rec: &mut impl Recorder) -> Result<()> {
        let e = self.energy()?;
        rec.record(self.state.time, &self.state.qpos, &self.state.qvel, &e)
    }

    /// Records the current state, then takes `steps` steps, recording every `every`-th state
    /// (and the last) with its energy into `rec`. A failure leaves every earlier sample recorded.
    pub fn run(&mut self, steps: usize, every: usize, rec: &mut impl Recorder) -> Result<()> {
        let every = every.max(1);
        self.sample(rec)?;
        for k in 1..=steps {
            self.step()?;
            if k % every == 0 || k == steps {
                self.sample(rec)?;
            }
        }
        Ok(())
    }
}

/// One step of `integrator` with the acceleration `f` from `(q, v)`; `qacc` receives the
/// acceleration at the start of the step (`state`), as MuJoCo's `qacc` after `mj_step`.
#[allow(clippy::too_many_arguments)]
fn advance(
    model: &Model,
    integrator: Integrator,
    scratch: &mut StepScratch,
    f: &mut impl Acceleration,
    q: &mut [f64],
    v: &mut [f64],
    qacc: &mut [f64],
    state: (&[f64], &[f64]),
    h: f64,
) -> Result<()> {
    match integrator {
        Integrator::Rk4 => {
            rk4_step(model, scratch, f, q, v, h)?;
            f.qacc(state.0, state.1, qacc)
        }
        _ => euler_step(model, f, q, v, qacc, h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::{bias_forces, crba};
    use crate::integrate::Trajectory;
    use crate::model::canned;

    fn run(model: &Model, state: &State, steps: usize, integrator: Integrator) -> Trajectory {
        let mut sim = Simulator::new(model, state.clone(), integrator).unwrap();
        let mut tr = Trajectory::new(&Simulator::SIGNALS);
        sim.run(steps, 1, &mut tr).unwrap();
        tr
    }

    #[test]
    fn rk4_conserves_energy_and_euler_converges_to_it() {
        // Undamped double pendulum released from rest at an angle: total energy is constant.
        let model = canned::chain(2, false);
        let mut state = State::reference(&model);
        state.qpos = vec![1.0, -0.5];
        let rk = run(&model, &state, 500, Integrator::Rk4);
        let e: Vec<f64> = (0..rk.len())
            .map(|k| rk.signal("energy_potential").unwrap()[k] + rk.signal("energy_kinetic").unwrap()[k])
            .collect();
        let drift = e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max);
        assert!(drift < 1e-6 * e[0].abs().max(1.0), "RK4 energy drift {drift}");
        // The Euler trajectory approaches RK4's as O(h): halving h roughly halves the largest
        // gap over the run (both at the same times).
        let mut fine = model.clone();
        fine.opt.timestep = model.opt.timestep / 2.0;
        let eu = run(&model, &state, 500, Integrator::Euler);
        let eu2 = run(&fine, &state, 1000, Integrator::Euler);
        let gap = |tr: &Trajectory, every: usize| {
            (0..=500)
                .map(|k| {
                    (0..2)
                        .map(|i| (tr.qpos[k * every][i] - rk.qpos[k][i]).abs())
                        .fold(0.0, f64::max)
                })
                .fold(0.0, f64::max)
        };
        let (g1, g2) = (gap(&eu, 1), gap(&eu2, 2));
        assert!(g2 < 0.7 * g1 && g2 > 0.3 * g1, "Euler gaps {g1} {g2}");
    }

    #[test]
    fn implicit_damping_matches_the_closed_form_for_one_dof() {
        // One hinge: Euler with implicit damping gives v1 = v0 + h (f - c) / (m + h d), where f
        // includes -d v0.
        let mut model = canned::chain(1, false);
        model.joints[1].damping = 0.7;
        let mut state = State::reference(&model);
        state.qvel = vec![1.3];
        let h = model.opt.timestep;
        let m = crba(&model, &state.qpos).unwrap()[(0, 0)];
        let c = bias_forces(&model, &state.qpos, &state.qvel).unwrap()[0];
        let expected_v1 = 1.3 + h * (-0.7 * 1.3 - c) / (m + h * 0.7);
        let tr = run(&model, &state, 1, Integrator::Euler);
        assert!((tr.qvel[1][0] - expected_v1).abs() < 1e-12);
        assert!((tr.qpos[1][0] - (state.qpos[0] + h * expected_v1)).abs() < 1e-12);
    }

    #[test]
    fn implicit_damping_on_a_branched_tree_matches_the_dense_formula_every_step() {
        // A floating base with ball-jointed arms, damped: each Euler step's velocity must equal
        // v + h (M + h D)^-1 (f - C) with M from CRBA and a fresh dense solve, step after step
        // (a stale factor left in the scratch matrix would break the second step on).
        let mut model = canned::floating_base_ball_arms();
        for i in 1..=model.nb {
            model.joints[i].damping = 0.3 + 0.1 * i as f64;
        }
        let mut state = State::reference(&model);
        state.qvel = (0..model.nv).map(|k| 0.3 * (k as f64 * 1.3).sin()).collect();
        let h = model.opt.timestep;
        let mut sim = Simulator::new(&model, state, Integrator::Euler).unwrap();
        for _ in 0..5 {
            let (q, v) = (sim.state.qpos.clone(), sim.state.qvel.clone());
            let mut m = crba(&model, &q).unwrap();
            for i in 1..=model.nb {
                for dof in model.dofs(i) {
                    m[(dof, dof)] += h * model.joints[i].damping;
                }
            }
            let f = crate::dynamics::passive_forces(&model, &q, &v).unwrap() - bias_forces(&model, &q, &v).unwrap();
            let a = m.cholesky().unwrap().solve(&f);
            sim.step().unwrap();
            for k in 0..model.nv {
                assert!((sim.state.qvel[k] - (v[k] + h * a[k])).abs() < 1e-12, "dof {k}");
            }
        }
    }

    #[test]
    fn divergence_names_step_time_and_entry() {
        let mut model = canned::chain(2, false);
        model.opt.timestep = 1.0;
        let mut state = State::reference(&model);
        state.qvel = vec![1e5, -1e5];
        let mut sim = Simulator::new(&model, state, Integrator::Euler).unwrap();
        let mut err = None;
        for _ in 0..1000 {
            if let Err(e) = sim.step() {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("the run must diverge");
        assert!(matches!(e, Error::Diverged { step: Some(_), .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("step") && text.contains("t = "), "{text}");
        // the state before the failing step is kept, and finite
        assert!(sim.state.qvel.iter().all(|x| x.is_finite()));
    }
}
