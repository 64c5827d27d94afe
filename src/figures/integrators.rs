//! Figures and report of the chapter "Integrators and the simulation loop" (MuJoCo's `mj_Euler`,
//! `mj_implicit`, `mj_RungeKutta`, `mjd_transitionFD`; MuJoCo's Computation chapter).
//!
//! - `integrators_energy.svg`: the total energy of an undamped five-link spatial chain over 5 s
//!   with each of the four integrators at h = 2 ms, relative to its start.
//! - `integrators_stable_step.svg`: the largest stable time step of each integrator on a damped
//!   double pendulum as the joint damping grows (bisection in log h, bounded).
//! - `integrators_lqr.svg`: the Gymnasium inverted double pendulum under the LQR controller of
//!   [`lqr_balance`] and without it.

use crate::error::{Error, Result};
use crate::integrate::Trajectory;
use crate::model::{canned, Integrator, Model};
use crate::mujoco::derivatives::{lqr_gain, state_difference, transition_fd};
use crate::mujoco::integrator::{OnDivergence, Simulator, State};
use crate::plot::{Chart, Series};
use nalgebra::{DMatrix, DVector};
use std::path::{Path, PathBuf};

/// Simulated time of the LQR runs (s).
pub const LQR_DURATION: f64 = 10.0;

/// The four integrators, with the names the figures use.
pub const INTEGRATORS: [(Integrator, &str); 4] = [
    (Integrator::Euler, "Euler"),
    (Integrator::Implicit, "implicit"),
    (Integrator::ImplicitFast, "implicitfast"),
    (Integrator::Rk4, "RK4"),
];

/// Total energy `(t, E(t) - E(0))` of `model` from `state` over `duration` with `integrator`.
pub fn energy_drift(model: &Model, state: &State, integrator: Integrator, duration: f64) -> Result<Vec<(f64, f64)>> {
    let mut sim = Simulator::new(model, state.clone(), integrator)?;
    sim.on_divergence = OnDivergence::Error;
    let mut tr = Trajectory::new(&Simulator::SIGNALS);
    let steps = (duration / model.opt.timestep).round() as usize;
    sim.run(steps, 1, &mut tr)?;
    let (p, k) = (
        tr.signal("energy_potential").unwrap_or_default(),
        tr.signal("energy_kinetic").unwrap_or_default(),
    );
    let e0 = p[0] + k[0];
    Ok(tr
        .time
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, p[i] + k[i] - e0))
        .collect())
}

/// Whether `integrator` stays bounded on `model` for 5 s (at least 200 and at most 5000 steps)
/// at step `h`: no divergence error and every velocity below 50 rad/s (the start has about 1).
fn stable(model: &Model, state: &State, integrator: Integrator, h: f64) -> bool {
    let mut m = model.clone();
    m.opt.timestep = h;
    let Ok(mut sim) = Simulator::new(&m, state.clone(), integrator) else {
        return false;
    };
    // a divergence must stop the run, not reset it
    sim.on_divergence = OnDivergence::Error;
    let steps = ((5.0 / h).ceil() as usize).clamp(200, 5000);
    (0..steps).all(|_| sim.step().is_ok() && sim.state.qvel.iter().all(|v| v.abs() < 50.0))
}

// ANCHOR: stable_step
/// The largest stable step of `integrator` on `model` (as [`stable`] judges it), by bisection
/// on `log h` in `[1e-5, 1]` s with 14 halvings (a factor `10^(5 / 2^14)`, 0.07 %, of
/// resolution). Returns `1` when even 1 s is stable.
pub fn largest_stable_step(model: &Model, state: &State, integrator: Integrator) -> f64 {
    let (mut lo, mut hi) = (1e-5_f64.ln(), 1.0_f64.ln());
    if stable(model, state, integrator, hi.exp()) {
        return hi.exp();
    }
    for _ in 0..14 {
        let mid = 0.5 * (lo + hi);
        if stable(model, state, integrator, mid.exp()) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo.exp()
}
// ANCHOR_END: stable_step

/// The damped double pendulum of the stable-step figure: two unit links, every joint damped by
/// `damping`, released at 1 rad and 0.5 rad/s.
pub fn damped_pendulum(damping: f64) -> (Model, State) {
    let mut model = canned::chain(2, false);
    for i in 1..=model.nb {
        model.joints[i].damping = damping;
    }
    let mut state = State::reference(&model);
    state.qpos = vec![1.0, -0.5];
    state.qvel = vec![0.5, 0.5];
    (model, state)
}

/// One run of the inverted double pendulum: time, positions, controls, and the LQR gain.
#[derive(Clone, Debug)]
pub struct LqrRun {
    /// Sample times (s), one per step.
    pub time: Vec<f64>,
    /// Positions (cart, hinge, hinge2) per sample.
    pub qpos: Vec<Vec<f64>>,
    /// The control applied from each sample on.
    pub ctrl: Vec<f64>,
    /// The gain `K` (1 x 6) of `u = -K dx`.
    pub gain: Vec<f64>,
}

// ANCHOR: lqr_balance
/// Balances the Gymnasium inverted double pendulum (`model_path`) with LQR: linearizes one
/// step at the upright rest state (`transition_fd`, centred, eps = 1e-6, the model's RK4 at
/// 10 ms), designs `K` with `Q = diag(1, 20, 20, 0.1, 1, 1)`, `R = 1` ([`lqr_gain`]), and runs
/// `u = -K (x (-) x_upright)` (clamped to the motor's `ctrlrange` by the actuator) for
/// [`LQR_DURATION`] from the poles tilted by 0.08 and -0.05 rad. With `controlled = false` the
/// control stays 0. A run stops early when a pole passes 1 rad or the cart reaches its range.
pub fn lqr_balance(model_path: &Path, controlled: bool) -> Result<LqrRun> {
    let model = crate::mjcf::load(model_path)?.model;
    if model.nv != 3 || model.actuators.len() != 1 {
        return Err(Error::Unsupported {
            what: format!("model '{}' for lqr_balance", model.name),
            why: "expects the inverted double pendulum: 3 dofs (cart, two hinges), one actuator".into(),
        });
    }
    let upright = State::reference(&model);
    let tr = transition_fd(&model, &upright, model.opt.integrator, 1e-6, true)?;
    let q = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 20.0, 20.0, 0.1, 1.0, 1.0]));
    let r = DMatrix::from_element(1, 1, 1.0);
    let k = lqr_gain(&tr.a, &tr.b, &q, &r, 1e-12, 100_000)?;
    let mut start = upright.clone();
    start.qpos = vec![0.0, 0.08, -0.05];
    let mut sim = Simulator::new(&model, start, model.opt.integrator)?;
    sim.on_divergence = OnDivergence::Error;
    let mut run = LqrRun {
        time: vec![],
        qpos: vec![],
        ctrl: vec![],
        gain: k.iter().copied().collect(),
    };
    let steps = (LQR_DURATION / model.opt.timestep).round() as usize;
    for _ in 0..=steps {
        let dx = state_difference(&model, &upright, &sim.state, 1.0);
        let u = if controlled {
            -(0..dx.len()).map(|j| k[(0, j)] * dx[j]).sum::<f64>()
        } else {
            0.0
        };
        sim.state.ctrl[0] = u;
        run.time.push(sim.state.time);
        run.qpos.push(sim.state.qpos.clone());
        run.ctrl.push(u.clamp(-1.0, 1.0));
        if sim.state.qpos[1..].iter().any(|a| a.abs() > 1.0) || sim.step().is_err() {
            break;
        }
    }
    Ok(run)
}
// ANCHOR_END: lqr_balance

/// Writes the chapter's figures into `dir` and prints what they show.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Integrators and the simulation loop (mj_Euler, mj_implicit, mj_RungeKutta)");

    // Figure 1: energy of a conservative chain.
    let mut chain = canned::chain(5, true);
    chain.opt.timestep = 0.002;
    let mut state = State::reference(&chain);
    state.qvel = (0..chain.nv).map(|k| (1.3 * k as f64 + 0.4).sin()).collect();
    let mut chart = Chart::new(
        "Energy of an undamped 5-link spatial chain, h = 2 ms",
        "time (s)",
        "E(t) - E(0) (J)",
    );
    for (integ, name) in INTEGRATORS {
        let e = energy_drift(&chain, &state, integ, 5.0)?;
        let worst = e.iter().fold(0.0_f64, |m, p| m.max(p.1.abs()));
        println!("  {name:>12}: largest |E(t) - E(0)| over 5 s = {worst:.2e} J");
        chart = chart.with(Series::line(name, e));
    }
    let path = dir.join("integrators_energy.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 2: largest stable step against damping.
    let dampings = [0.01, 0.1, 1.0, 10.0, 100.0];
    let mut chart = Chart::new(
        "Largest stable time step, damped double pendulum",
        "joint damping (N m s / rad)",
        "largest stable h (s)",
    )
    .log(true, true);
    let mut explicit = vec![];
    for &b in &dampings {
        let (mut m, s) = damped_pendulum(b);
        m.opt.flags.push(("eulerdamp".into(), false));
        explicit.push((b, largest_stable_step(&m, &s, Integrator::Euler)));
    }
    println!("  largest stable h (damping {dampings:?}):");
    println!(
        "  {:>28}: {:?}",
        "Euler, explicit damping",
        explicit.iter().map(|p| format!("{:.2e}", p.1)).collect::<Vec<_>>()
    );
    chart = chart.with(Series::line_points("Euler, eulerdamp disabled", explicit));
    for (integ, name) in INTEGRATORS {
        let pts: Vec<(f64, f64)> = dampings
            .iter()
            .map(|&b| {
                let (m, s) = damped_pendulum(b);
                (b, largest_stable_step(&m, &s, integ))
            })
            .collect();
        println!(
            "  {name:>28}: {:?}",
            pts.iter().map(|p| format!("{:.2e}", p.1)).collect::<Vec<_>>()
        );
        chart = chart.with(Series::line_points(name, pts));
    }
    let path = dir.join("integrators_stable_step.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 3: LQR on the inverted double pendulum.
    let model_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models/public/gymnasium/inverted_double_pendulum.xml");
    let ctl = lqr_balance(&model_path, true)?;
    let free = lqr_balance(&model_path, false)?;
    let series =
        |r: &LqrRun, j: usize| -> Vec<(f64, f64)> { r.time.iter().zip(&r.qpos).map(|(t, q)| (*t, q[j])).collect() };
    let path = dir.join("integrators_lqr.svg");
    Chart::new(
        "Inverted double pendulum: LQR on mjd_transitionFD's A, B",
        "time (s)",
        "angle (rad), position (m)",
    )
    .ranges(Some((0.0, LQR_DURATION)), Some((-1.1, 1.1)))
    .with(Series::line("hinge, LQR", series(&ctl, 1)))
    .with(Series::line("hinge2, LQR", series(&ctl, 2)))
    .with(Series::line("cart, LQR", series(&ctl, 0)))
    .with(Series::dashed("hinge, uncontrolled", series(&free, 1)))
    .with(Series::dashed("hinge2, uncontrolled", series(&free, 2)))
    .save_svg(&path)?;
    println!(
        "  LQR: {:.1} s balanced, final angles {:.1e}, {:.1e} rad; uncontrolled: falls past 1 rad at {:.2} s",
        ctl.time.last().copied().unwrap_or(0.0),
        ctl.qpos.last().map_or(0.0, |q| q[1]),
        ctl.qpos.last().map_or(0.0, |q| q[2]),
        free.time.last().copied().unwrap_or(0.0)
    );
    out.push(path);
    Ok(out)
}
