//! Figures and report of the chapter "Integrators and the simulation loop" (MuJoCo's `mj_Euler`,
//! `mj_implicit`, `mj_RungeKutta`, `mjd_transitionFD`; MuJoCo's Computation chapter).
//!
//! - `integrators_energy.svg`: the total energy of an undamped five-link spatial chain over 5 s
//!   with each of the four integrators at h = 2 ms, relative to its start.
//! - `integrators_stable_step.svg`: the largest stable time step of each integrator on a damped
//!   double pendulum as the joint damping grows (bisection in log h, bounded).
//! - `integrators_lqr.svg`: the Gymnasium inverted double pendulum under the LQR controller of
//!   [`lqr_balance`] and without it.
//! - `integrators_bounce.svg`: a ball dropped on a plane for several contact `solref`
//!   ([`bouncing_ball`]).
//! - `integrators_incline.svg`: a box on a 20 degree incline as the friction coefficient
//!   crosses `tan(theta)`, beside the analytic sliding motion ([`incline_slide`]).
//! - `integrators_stack.svg`: ten boxes dropped from small gaps settling into a stack
//!   ([`stack_settling`]).
//! - `integrators_hopper.svg`: the Gymnasium hopper under the fixed control sequence of the
//!   corpus rollout fixture, mbd beside MuJoCo 4.0.0 ([`hopper_beside_mujoco`]).
//! - `integrators_warmstart.svg`: the constraint solver's iterations in every step of the
//!   Gymnasium humanoid falling from its standing pose and settling, warm-started and cold, with
//!   PGS, CG and Newton ([`warmstart_iterations`], [`warmstart_figure`]).
//! - `integrators_dampratio.svg`: a position servo's step response for several `dampratio`s,
//!   damping computed by `mbd::mujoco::compile` ([`dampratio_step`]).
//! - `integrators_gravcomp.svg`: a one-link arm released horizontal without gravity
//!   compensation, with half of it, with all of it, and with all of it through an actuator
//!   whose joint limits the torque ([`gravcomp_arm`], [`gravcomp_figure`]).
//! - `integrators_mocap.svg`: an arm whose hand is welded to a mocap target moving on a circle:
//!   the distance between hand and target for two weld time constants, beside the lag `2 tc v`
//!   of a spring-damper whose far end the solver sees at rest ([`mocap_tracking`],
//!   [`mocap_figure`]).

use crate::error::{Error, Result};
use crate::integrate::Trajectory;
use crate::model::{canned, Integrator, Model, Solver};
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
/// The largest stable step of `integrator` on `model` (as `stable` judges it), by bisection
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

// ANCHOR: contact_scenes
/// The model of [`bouncing_ball`]; `tests/fixtures/make_contact_figure_fixtures.py` writes the
/// same text for MuJoCo, and `tests/integrators.rs` checks that the two are equal.
pub fn bouncing_ball_xml(solref: [f64; 2]) -> String {
    format!(
        r#"<mujoco><option timestep="0.001" cone="elliptic"/>
        <worldbody><geom type="plane" size="2 2 0.1" solref="{a} {b}"/>
        <body pos="0 0 0.5"><freejoint/><geom type="sphere" size="0.1" mass="1" solref="{a} {b}"/></body>
        </worldbody></mujoco>"#,
        a = solref[0],
        b = solref[1]
    )
}

/// Height `(t, z)` of a ball (radius 0.1 m, 1 kg) dropped from z = 0.5 m on a plane with
/// contact `solref` (on both geoms, so the mixed value is the same): `[timeconst, dampratio]`,
/// or `[-stiffness, -damping]` (MuJoCo's direct form). Euler, h = 1 ms, elliptic cone.
pub fn bouncing_ball(solref: [f64; 2], duration: f64) -> Result<Vec<(f64, f64)>> {
    let xml = bouncing_ball_xml(solref);
    let model = crate::mjcf::load_str(&xml)?.model;
    let mut sim = Simulator::new(&model, State::reference(&model), Integrator::Euler)?;
    sim.on_divergence = OnDivergence::Error;
    let steps = (duration / model.opt.timestep).round() as usize;
    let mut out = vec![(0.0, sim.state.qpos[2])];
    for k in 1..=steps {
        sim.step()?;
        if k % 5 == 0 {
            out.push((sim.state.time, sim.state.qpos[2]));
        }
    }
    Ok(out)
}

/// The box of [`incline_slide`] (0.2 x 0.2 x 0.1 m, 1 kg) resting on a plane tilted by `theta`
/// (rad) about y, with friction `mu` on both geoms and the elliptic cone.
pub fn incline_model(mu: f64, theta: f64) -> Result<Model> {
    let (c, s) = ((theta / 2.0).cos(), (theta / 2.0).sin());
    // the box centre 0.05 m (less 1e-4 of penetration) along the plane's normal
    let n = [theta.sin(), 0.0, theta.cos()];
    let d = 0.05 - 1e-4;
    let xml = format!(
        r#"<mujoco><option timestep="0.002" cone="elliptic"/>
        <worldbody><geom type="plane" size="3 3 0.1" quat="{c} 0 {s} 0" friction="{mu} 0.005 0.0001"/>
        <body pos="{x} 0 {z}" quat="{c} 0 {s} 0"><freejoint/>
        <geom type="box" size="0.1 0.1 0.05" mass="1" friction="{mu} 0.005 0.0001"/></body>
        </worldbody></mujoco>"#,
        x = n[0] * d,
        z = n[2] * d
    );
    Ok(crate::mjcf::load_str(&xml)?.model)
}

/// The analytic acceleration of a block on an incline of angle `theta` with Coulomb friction
/// `mu` (gravity `g`): `g (sin theta - mu cos theta)` down the slope when `mu < tan theta`,
/// zero otherwise (static friction holds it).
pub fn incline_acceleration(mu: f64, theta: f64, g: f64) -> f64 {
    (g * (theta.sin() - mu * theta.cos())).max(0.0)
}

/// Displacement `(t, s)` down the slope of the box of [`incline_model`] released at rest.
pub fn incline_slide(mu: f64, theta: f64, duration: f64) -> Result<Vec<(f64, f64)>> {
    let model = incline_model(mu, theta)?;
    let mut sim = Simulator::new(&model, State::reference(&model), Integrator::Euler)?;
    sim.on_divergence = OnDivergence::Error;
    let down = [theta.cos(), 0.0, -theta.sin()];
    let p0 = [sim.state.qpos[0], sim.state.qpos[1], sim.state.qpos[2]];
    let along = |q: &[f64]| (0..3).map(|k| (q[k] - p0[k]) * down[k]).sum::<f64>();
    let steps = (duration / model.opt.timestep).round() as usize;
    let mut out = vec![(0.0, 0.0)];
    for k in 1..=steps {
        sim.step()?;
        if k % 5 == 0 {
            out.push((sim.state.time, along(&sim.state.qpos)));
        }
    }
    Ok(out)
}

/// The model of [`stack_settling`]: `n` cubes of 0.2 m and 1 kg, each `gap` above the one below.
pub fn stack_xml(n: usize, gap: f64) -> String {
    let mut bodies = String::new();
    for i in 0..n {
        let z = 0.1 + 0.2 * i as f64 + gap * (i + 1) as f64;
        bodies += &format!(r#"<body pos="0 0 {z}"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>"#);
    }
    format!(
        r#"<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="2 2 0.1"/>{bodies}</worldbody></mujoco>"#
    )
}

/// Heights above their resting place `z_i - (0.1 + 0.2 i)` (m) of `n` cubes of 0.2 m and 1 kg
/// released at rest, each `gap` above the one below (the first `gap` above the floor), over
/// `duration`: `(times, heights[i])`. Euler, h = 2 ms, pyramidal cone, Newton.
pub fn stack_settling(n: usize, gap: f64, duration: f64) -> Result<(Vec<f64>, Vec<Vec<f64>>)> {
    let xml = stack_xml(n, gap);
    let model = crate::mjcf::load_str(&xml)?.model;
    let mut sim = Simulator::new(&model, State::reference(&model), Integrator::Euler)?;
    sim.on_divergence = OnDivergence::Error;
    let steps = (duration / model.opt.timestep).round() as usize;
    let (mut times, mut heights) = (vec![], vec![vec![]; n]);
    for k in 0..=steps {
        if k > 0 {
            sim.step()?;
        }
        if k % 5 == 0 {
            times.push(sim.state.time);
            for (i, h) in heights.iter_mut().enumerate() {
                h.push(sim.state.qpos[7 * i + 2] - (0.1 + 0.2 * i as f64));
            }
        }
    }
    Ok((times, heights))
}
// ANCHOR_END: contact_scenes

/// MuJoCo 4.0.0's trajectories of the bounce and stack figures
/// (`tests/fixtures/make_contact_figure_fixtures.py`).
const CONTACT_FIGURES: &str = include_str!("../../tests/fixtures/rollout/contact_figures.json");

/// MuJoCo's heights for the figures: the ball's `(t, z)` for `solref` (None if the fixture has
/// no such case), and the stack's `heights[i]` at the samples of [`stack_settling`].
pub fn mujoco_ball(solref: [f64; 2]) -> Result<Option<Vec<(f64, f64)>>> {
    let fx = contact_fixture()?;
    let every = fx["every"].as_f64().unwrap_or(5.0);
    for case in fx["bounce"].as_array().into_iter().flatten() {
        let sr: Vec<f64> = case["solref"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_f64())
            .collect();
        if sr == solref {
            let z = case["z"].as_array().into_iter().flatten().filter_map(|x| x.as_f64());
            return Ok(Some(
                z.enumerate().map(|(k, z)| (k as f64 * every * 0.001, z)).collect(),
            ));
        }
    }
    Ok(None)
}

/// MuJoCo's box heights above their resting place of the stack figure (10 boxes, 5 mm gaps, 1 s).
pub fn mujoco_stack() -> Result<Vec<Vec<f64>>> {
    let fx = contact_fixture()?;
    Ok(fx["stack"]["heights"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| h.as_array().into_iter().flatten().filter_map(|x| x.as_f64()).collect())
        .collect())
}

fn contact_fixture() -> Result<serde_json::Value> {
    serde_json::from_str(CONTACT_FIGURES).map_err(|e| Error::Model {
        file: "tests/fixtures/rollout/contact_figures.json".into(),
        line: 1,
        why: e.to_string(),
    })
}

/// `(time, mbd's qpos, MuJoCo's qpos)` at one sample of [`hopper_beside_mujoco`].
pub type HopperSample = (f64, Vec<f64>, Vec<f64>);

/// The hopper rollout of MuJoCo 4.0.0 (`tests/fixtures/rollout/corpus/hopper.json`, made by
/// `tests/fixtures/make_corpus_rollout_fixtures.py`).
const HOPPER_ROLLOUT: &str = include_str!("../../tests/fixtures/rollout/corpus/hopper.json");

/// The Gymnasium hopper (its own RK4, h = 2 ms) under the fixture's seeded control sequence,
/// mbd's trajectory and MuJoCo's at the fixture's samples (pyramidal cone, Newton to 1e-12):
/// one [`HopperSample`] per sample.
pub fn hopper_beside_mujoco() -> Result<Vec<HopperSample>> {
    let bad = |why: String| Error::Model {
        file: "tests/fixtures/rollout/corpus/hopper.json".into(),
        line: 1,
        why,
    };
    let fx: serde_json::Value = serde_json::from_str(HOPPER_ROLLOUT).map_err(|e| bad(e.to_string()))?;
    let list = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default()
    };
    let rows = |v: &serde_json::Value| -> Vec<Vec<f64>> {
        v.as_array().map(|a| a.iter().map(list).collect()).unwrap_or_default()
    };
    let ctrl = rows(&fx["ctrl"]);
    let mujoco_qpos = rows(&fx["cones"]["pyramidal"]["qpos"]);
    let (hold, every) = (
        fx["hold"].as_u64().unwrap_or(10) as usize,
        fx["sample_every"].as_u64().unwrap_or(10) as usize,
    );
    if ctrl.is_empty() || mujoco_qpos.is_empty() {
        return Err(bad("no ctrl or qpos samples".into()));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/public/gymnasium/hopper.xml");
    let mut model = crate::mjcf::load(&path)?.model;
    model.opt.solver = crate::model::Solver::Newton;
    model.opt.tolerance = 1e-12;
    model.opt.iterations = 1000;
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator)?;
    sim.on_divergence = OnDivergence::Error;
    let mut out = vec![];
    for (s, q) in mujoco_qpos.into_iter().enumerate() {
        while sim.steps < s * every {
            let u = ctrl
                .get(sim.steps / hold)
                .ok_or_else(|| bad("too few control blocks".into()))?;
            sim.state.ctrl.copy_from_slice(u);
            sim.step()?;
        }
        out.push((sim.state.time, sim.state.qpos.clone(), q));
    }
    Ok(out)
}

/// Writes the chapter's figures into `dir` and prints what they show.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Integrators and the simulation loop (mj_Euler, mj_implicit, mj_RungeKutta)");
    out.push(step_drawing(dir)?);

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
    out.extend(contact_figures(dir)?);
    out.push(warmstart_figure(dir)?);
    out.push(gravcomp_figure(dir)?);
    out.push(dampratio_figure(dir)?);
    out.push(mocap_figure(dir)?);
    Ok(out)
}

// ANCHOR: dampratio_step
/// A position servo (`kp` 10 N m/rad) on a 1 kg, 0.5 m arm on a hinge, without gravity, its
/// damping given as `dampratio = zeta` and computed by [`crate::mujoco::load_str`] (MuJoCo's
/// compiler): `(t, angle)` every 5 steps of `duration` s of the response to a control step from
/// 0 to 1 rad, implicitfast at h = 1 ms. For `zeta < 1` a linear oscillator overshoots by
/// `exp(-pi zeta / sqrt(1 - zeta^2))`.
pub fn dampratio_step(zeta: f64, duration: f64) -> Result<Vec<(f64, f64)>> {
    let xml = format!(
        r#"<mujoco model="servo"><option timestep="0.001" gravity="0 0 0" integrator="implicitfast"/>
  <worldbody><body><joint name="j" axis="0 -1 0"/>
    <geom type="capsule" fromto="0 0 0 .5 0 0" size=".03" mass="1"/></body></worldbody>
  <actuator><position joint="j" kp="10" dampratio="{zeta}"/></actuator></mujoco>"#
    );
    let model = crate::mujoco::load_str(&xml)?.model;
    let mut state = State::reference(&model);
    state.ctrl[0] = 1.0;
    let mut sim = Simulator::new(&model, state, model.opt.integrator)?;
    let steps = (duration / model.opt.timestep).round() as usize;
    let mut out = vec![(0.0, 0.0)];
    for k in 1..=steps {
        sim.step()?;
        if k % 5 == 0 {
            out.push((sim.state.time, sim.state.qpos[0]));
        }
    }
    Ok(out)
}
// ANCHOR_END: dampratio_step

/// The figure of [`dampratio_step`] for four damping ratios, with each underdamped response's
/// overshoot beside the linear oscillator's.
pub fn dampratio_figure(dir: &Path) -> Result<PathBuf> {
    let mut chart = Chart::new(
        "A position servo's step response: damping given as dampratio",
        "time (s)",
        "angle (rad), target 1",
    )
    .ranges(Some((0.0, 1.5)), Some((-0.05, 2.0)));
    for zeta in [0.25, 0.5, 1.0, 2.0] {
        let path = dampratio_step(zeta, 1.5)?;
        let peak = path.iter().fold(0.0f64, |m, p| m.max(p.1));
        let theory = if zeta < 1.0 {
            format!(
                "{:.3}",
                (-std::f64::consts::PI * zeta / (1.0 - zeta * zeta).sqrt()).exp()
            )
        } else {
            "none".into()
        };
        println!(
            "  servo, dampratio {zeta}: overshoot {:.3} (linear oscillator: {theory})",
            peak - 1.0
        );
        chart = chart.with(Series::line(&format!("dampratio {zeta}"), path));
    }
    let path = dir.join("integrators_dampratio.svg");
    chart.save_svg(&path)?;
    Ok(path)
}

// ANCHOR: gravcomp_arm
/// A one-link arm (a 0.5 m capsule of 1 kg on a hinge about `y`, damping 0.3, under a motor at
/// zero control) released horizontal: MJCF with `<body gravcomp>` set to `gravcomp` and, when
/// `limit` is given, the compensation routed through the actuators (`actuatorgravcomp`) and
/// clamped to `actuatorfrcrange = [-limit, limit]` N m.
pub fn gravcomp_arm_xml(gravcomp: f64, limit: Option<f64>) -> String {
    let joint = match limit {
        Some(l) => format!(r#" actuatorgravcomp="true" actuatorfrcrange="-{l} {l}""#),
        None => String::new(),
    };
    format!(
        r#"<mujoco model="gravcomp arm">
  <option timestep="0.002"/>
  <worldbody>
    <body name="arm" pos="0 0 1" gravcomp="{gravcomp}">
      <joint name="shoulder" type="hinge" axis="0 -1 0" damping="0.3"{joint}/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03" mass="1"/>
    </body>
  </worldbody>
  <actuator><motor joint="shoulder" ctrlrange="-1 1"/></actuator>
</mujoco>"#
    )
}

/// The arm of [`gravcomp_arm_xml`] stepped for `duration` s from horizontal at rest, Euler:
/// `(t, angle above the horizontal in degrees)` every 10 steps.
pub fn gravcomp_arm(gravcomp: f64, limit: Option<f64>, duration: f64) -> Result<Vec<(f64, f64)>> {
    let model = crate::mjcf::load_str(&gravcomp_arm_xml(gravcomp, limit))?.model;
    let mut sim = Simulator::new(&model, State::reference(&model), Integrator::Euler)?;
    let steps = (duration / model.opt.timestep).round() as usize;
    let mut out = vec![(0.0, 0.0)];
    for k in 1..=steps {
        sim.step()?;
        if k % 10 == 0 {
            out.push((sim.state.time, sim.state.qpos[0].to_degrees()));
        }
    }
    Ok(out)
}
// ANCHOR_END: gravcomp_arm

/// The figure of [`gravcomp_arm`]: the four arms over 4 s, and the angle below which the
/// torque-limited arm's compensation is whole again, `acos(limit / (m g l/2))`.
pub fn gravcomp_figure(dir: &Path) -> Result<PathBuf> {
    let duration = 4.0;
    let limit = 2.0;
    let mut chart = Chart::new(
        "A 1 kg, 0.5 m arm released horizontal: gravity compensation",
        "time (s)",
        "angle above the horizontal (deg)",
    )
    .ranges(Some((0.0, duration)), Some((-125.0, 50.0)));
    let cases: [(f64, Option<f64>, &str); 4] = [
        (0.0, None, "gravcomp 0"),
        (0.5, None, "gravcomp 0.5"),
        (1.0, None, "gravcomp 1 (passive)"),
        (1.0, Some(limit), "gravcomp 1 through the actuator, |torque| <= 2 N m"),
    ];
    for (g, l, name) in cases {
        let path = gravcomp_arm(g, l, duration)?;
        let last = path.last().map_or(0.0, |p| p.1);
        println!("  gravcomp arm, {name}: angle after {duration} s {last:.3} deg");
        chart = chart.with(if l.is_some() {
            Series::dashed(name, path)
        } else {
            Series::line(name, path)
        });
    }
    let weight_torque = 1.0 * 9.81 * 0.25;
    println!(
        "  the limit bites while the weight's torque {weight_torque:.4} cos(angle) exceeds {limit} N m, above {:.3} deg",
        -(limit / weight_torque).acos().to_degrees()
    );
    let path = dir.join("integrators_gravcomp.svg");
    chart.save_svg(&path)?;
    Ok(path)
}

// ANCHOR: mocap_tracking
/// Centre, radius (m) and angular rate (rad/s) of the circle the mocap target of
/// [`mocap_arm_xml`] follows in the horizontal plane: 0.3 m/s along it.
pub const MOCAP_CIRCLE: ([f64; 3], f64, f64) = ([0.45, 0.0, 1.0], 0.15, 2.0);

/// A horizontal three-hinge arm (0.3 m links, yaw and pitch at the shoulder, an elbow) with a
/// ball-jointed hand, whose hand is welded to the mocap body `target` by a critically damped weld
/// of time constant `tc` (`solref="tc 1"`). The target starts at the hand, on its circle
/// ([`MOCAP_CIRCLE`]).
pub fn mocap_arm_xml(tc: f64) -> String {
    format!(
        r#"<mujoco model="mocap arm">
  <option timestep="0.002" integrator="implicitfast"/>
  <worldbody>
    <body name="upperarm" pos="0 0 1">
      <joint type="hinge" axis="0 0 1" damping="0.5"/>
      <joint type="hinge" axis="0 1 0" damping="0.5"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body pos="0.3 0 0">
        <joint type="hinge" axis="0 1 0" damping="0.5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.025"/>
        <body name="hand" pos="0.3 0 0">
          <joint type="ball" damping="0.1"/>
          <geom type="box" size="0.04 0.03 0.02"/>
        </body>
      </body>
    </body>
    <body name="target" mocap="true" pos="0.6 0 1"/>
  </worldbody>
  <equality><weld body1="hand" body2="target" solref="{tc} 1"/></equality>
</mujoco>"#
    )
}

/// The arm of [`mocap_arm_xml`] for `duration` s while the target circles: before every step
/// the target is moved to its place on the circle at the step's time (`mocap_pos` is an input,
/// set like a control), and `(t, |hand - target|)` in millimetres is recorded every 5 steps at
/// the step's start (the constrained pipeline's body poses of that step).
pub fn mocap_tracking(tc: f64, duration: f64) -> Result<Vec<(f64, f64)>> {
    let model = crate::mujoco::load_str(&mocap_arm_xml(tc))?.model;
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator)?;
    let body = |name: &str| model.body_id(name);
    let (hand, target) = (body("hand")?, body("target")?);
    let ([cx, cy, cz], r, w) = MOCAP_CIRCLE;
    let steps = (duration / model.opt.timestep).round() as usize;
    let mut out = vec![];
    for k in 0..steps {
        let t = sim.state.time;
        sim.state.mocap_pos[0] = [cx + r * (w * t).cos(), cy + r * (w * t).sin(), cz];
        sim.step()?;
        // a model with mocap bodies steps through MuJoCo's pipeline, whose data holds the poses
        if let (0, Some(fd)) = (k % 5, sim.forward_data()) {
            let x_0 = &fd.data.x_0;
            out.push((t, 1000.0 * (x_0[hand].r - x_0[target].r).norm()));
        }
    }
    Ok(out)
}
// ANCHOR_END: mocap_tracking

/// The figure of [`mocap_tracking`] for two weld time constants, each beside the lag `2 tc v` of
/// a critically damped spring-damper dragged at speed `v` by an end its damper does not see
/// move.
pub fn mocap_figure(dir: &Path) -> Result<PathBuf> {
    let duration = 3.0;
    let (_, r, w) = MOCAP_CIRCLE;
    let v = r * w;
    let mut chart = Chart::new(
        "A hand welded to a mocap target circling at 0.3 m/s",
        "time (s)",
        "distance hand - target (mm)",
    )
    .ranges(Some((0.0, duration)), Some((0.0, 40.0)));
    for tc in [0.05, 0.01] {
        let lag = mocap_tracking(tc, duration)?;
        let steady = lag.iter().filter(|p| p.0 >= 1.5).fold(0.0f64, |m, p| m.max(p.1));
        let predicted = 1000.0 * 2.0 * tc * v;
        println!(
            "  mocap target, weld solref ({tc}, 1): lag after 1.5 s up to {steady:.2} mm, 2 tc v = {predicted:.2} mm"
        );
        chart = chart
            .with(Series::line(&format!("weld solref ({tc}, 1)"), lag))
            .with(Series::dashed(
                &format!("2 tc v = {predicted:.0} mm"),
                vec![(0.0, predicted), (duration, predicted)],
            ));
    }
    let path = dir.join("integrators_mocap.svg");
    chart.save_svg(&path)?;
    Ok(path)
}

// ANCHOR: warmstart_iterations
/// The Gymnasium humanoid's simulated time of the warm-start figure (s): it falls from its
/// standing pose, lands at about 0.4 s and lies still on the floor well before the end.
pub const WARMSTART_DURATION: f64 = 2.0;

/// The constraint solver's iterations (`solver_niter`) in every Euler step of the Gymnasium
/// humanoid released from its standing reference pose (`qpos0`, at rest, zero controls) over
/// [`WARMSTART_DURATION`], with `solver`, warm-started from the last step's `qacc` (MuJoCo's
/// default) or cold (`<flag warmstart="disable">`): `(t, iterations)` of the forward pass at
/// each step's start `t`. Zero while no contact makes a row.
pub fn warmstart_iterations(solver: Solver, warm: bool) -> Result<Vec<(f64, usize)>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/public/gymnasium/humanoid.xml");
    let mut model = crate::mjcf::load(path)?.model;
    model.opt.solver = solver;
    if !warm {
        model.opt.flags.push(("warmstart".into(), false));
    }
    let steps = (WARMSTART_DURATION / model.opt.timestep).round() as usize;
    let mut sim = Simulator::new(&model, State::reference(&model), Integrator::Euler)?;
    let mut out = Vec::with_capacity(steps);
    for _ in 0..steps {
        let t = sim.state.time;
        sim.step()?;
        out.push((t, sim.forward_data().map_or(0, |d| d.solver_niter)));
    }
    Ok(out)
}
// ANCHOR_END: warmstart_iterations

/// Draws `integrators_warmstart.svg` from [`warmstart_iterations`] (PGS, CG and Newton, warm
/// and cold) and prints each run's total iterations and its steps at the iteration limit.
pub fn warmstart_figure(dir: &Path) -> Result<PathBuf> {
    let mut chart = Chart::new(
        "Solver iterations per step, humanoid falling and settling (Euler; dashed: cold start)",
        "time (s)",
        "solver iterations in the step",
    );
    println!("  warm start, humanoid falling from its standing pose for {WARMSTART_DURATION} s (Euler):");
    for (solver, name) in [(Solver::Pgs, "PGS"), (Solver::Cg, "CG"), (Solver::Newton, "Newton")] {
        let mut totals = [0; 2];
        for (k, warm) in [true, false].into_iter().enumerate() {
            let it = warmstart_iterations(solver, warm)?;
            totals[k] = it.iter().map(|p| p.1).sum::<usize>();
            let pts: Vec<(f64, f64)> = it.iter().map(|&(t, n)| (t, n as f64)).collect();
            chart = chart.with(if warm {
                Series::line(&format!("{name}, warm"), pts)
            } else {
                Series::dashed(&format!("{name}, cold"), pts)
            });
        }
        println!(
            "  {name:>7}: {} iterations warm, {} cold ({:.0}% of cold)",
            totals[0],
            totals[1],
            100.0 * totals[0] as f64 / totals[1].max(1) as f64
        );
    }
    let path = dir.join("integrators_warmstart.svg");
    chart.save_svg(&path)?;
    Ok(path)
}

/// The figures of the simulation loop with contacts (figures 4 to 7 of the chapter), with a
/// printed report of each.
pub fn contact_figures(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    // Figure 4: a bouncing ball for several solref.
    let mut chart = Chart::new(
        "A ball dropped on a plane: contact solref and the bounce (dashed: MuJoCo 4.0)",
        "time (s)",
        "height of the centre (m)",
    );
    for (solref, label) in [
        ([0.02, 1.0], "solref 0.02 1 (default)"),
        ([0.02, 0.3], "solref 0.02 0.3"),
        ([0.02, 0.1], "solref 0.02 0.1"),
        ([0.01, 0.1], "solref 0.01 0.1"),
        ([-20000.0, -20.0], "solref -20000 -20 (k, b)"),
    ] {
        let z = bouncing_ball(solref, 1.5)?;
        let peaks: Vec<String> = z
            .windows(3)
            .filter(|w| w[1].1 > w[0].1 && w[1].1 >= w[2].1 && w[1].1 > 0.105)
            .map(|w| format!("{:.3}", w[1].1))
            .collect();
        let lowest = z.iter().fold(f64::INFINITY, |m, p| m.min(p.1));
        println!("  ball, {label}: rebound peaks {peaks:?} m, lowest centre {lowest:.4} m");
        if let Some(mj) = mujoco_ball(solref)? {
            let gap = z.iter().zip(&mj).map(|(a, b)| (a.1 - b.1).abs()).fold(0.0, f64::max);
            println!("    largest |z - MuJoCo's| over the run: {gap:.1e} m");
            chart = chart.with(Series::dashed(&format!("MuJoCo, {label}"), mj));
        }
        chart = chart.with(Series::line(label, z));
    }
    // too stiff for the step: timeconst 5 h with little damping gains energy (MuJoCo too)
    let stiff = bouncing_ball([0.005, 0.1], 1.0)?;
    let top = stiff.iter().skip(10).fold(0.0_f64, |m, p| m.max(p.1));
    println!("  ball, solref 0.005 0.1 at h = 1 ms (not drawn): rebounds to {top:.2} m from 0.5 m");
    let path = dir.join("integrators_bounce.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 5: a box on an incline, sliding or sticking as mu crosses tan(theta).
    let theta = 20f64.to_radians();
    let g = 9.81;
    let mut chart = Chart::new(
        "A box on a 20 degree incline (tan 20 deg = 0.364), elliptic cone",
        "time (s)",
        "displacement down the slope (m)",
    );
    for mu in [0.1, 0.25, 0.35, 0.38, 0.5] {
        let s = incline_slide(mu, theta, 1.0)?;
        let a = incline_acceleration(mu, theta, g);
        let end = s.last().map_or(0.0, |p| p.1);
        println!(
            "  incline, mu = {mu}: s(1 s) = {end:.4} m, analytic {:.4} m ({})",
            0.5 * a,
            if a > 0.0 { "slides" } else { "sticks" }
        );
        let analytic: Vec<(f64, f64)> = s.iter().map(|&(t, _)| (t, 0.5 * a * t * t)).collect();
        chart = chart.with(Series::line(&format!("mu = {mu}"), s));
        if a > 0.0 {
            chart = chart.with(Series::dashed(
                &format!("g (sin - mu cos) t^2 / 2, mu = {mu}"),
                analytic,
            ));
        }
    }
    let path = dir.join("integrators_incline.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 6: ten boxes settling into a stack.
    let (times, heights) = stack_settling(10, 0.005, 1.0)?;
    let mj = mujoco_stack()?;
    let mut chart = Chart::new(
        "Ten boxes released 5 mm apart settle into a stack (dashed: MuJoCo 4.0)",
        "time (s)",
        "height above the resting place (mm)",
    );
    for (i, h) in heights.iter().enumerate() {
        if let Some(m) = mj.get(i) {
            let pts = times.iter().zip(m).map(|(t, z)| (*t, 1e3 * z)).collect();
            chart = chart.with(Series::dashed(&format!("box {}, MuJoCo", i + 1), pts));
        }
        let pts = times.iter().zip(h).map(|(t, z)| (*t, 1e3 * z)).collect();
        chart = chart.with(Series::line(&format!("box {}", i + 1), pts));
    }
    let gap = heights
        .iter()
        .zip(&mj)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f64::max);
    println!("  stack of 10: largest |height - MuJoCo's| over the run {gap:.1e} m");
    println!(
        "  stack of 10: final heights above the resting place {:?} mm",
        heights
            .iter()
            .map(|h| format!("{:.3}", 1e3 * h.last().copied().unwrap_or(0.0)))
            .collect::<Vec<_>>()
    );
    let path = dir.join("integrators_stack.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 7: the hopper beside MuJoCo's trajectory.
    let run = hopper_beside_mujoco()?;
    let gap = run
        .iter()
        .map(|(_, a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max))
        .fold(0.0, f64::max);
    println!("  hopper, 1000 RK4 steps with contacts: largest |qpos - MuJoCo's| = {gap:.1e}");
    let series = |j: usize, mujoco: bool| -> Vec<(f64, f64)> {
        run.iter()
            .map(|(t, a, b)| (*t, if mujoco { b[j] } else { a[j] }))
            .collect()
    };
    let mut chart = Chart::new(
        "Gymnasium hopper under a fixed control sequence: mbd and MuJoCo",
        "time (s)",
        "position (m), angle (rad)",
    );
    for (j, name) in [(1, "rootz"), (2, "rooty"), (3, "thigh"), (5, "foot")] {
        chart = chart.with(Series::line(&format!("{name}, mbd"), series(j, false)));
        chart = chart.with(Series::points(&format!("{name}, MuJoCo"), series(j, true)));
    }
    let path = dir.join("integrators_hopper.svg");
    chart.save_svg(&path)?;
    out.push(path);
    Ok(out)
}

/// One box of the step drawing: what it computes, the library function that computes it, and
/// the source file that defines that function (a test checks the function is defined there).
pub type StepBox = (&'static str, &'static str, &'static str);

/// The stages of the forward pass as [`forward_pass`](crate::mujoco::integrator::forward_pass) runs them on a model with constraints
/// (`Constrained::forward_with`, MuJoCo's `mj_fwdPosition`, `mj_fwdVelocity`,
/// `mj_fwdActuation`/`mj_fwdAcceleration`, `mj_fwdConstraint`), in order within each stage.
pub const STEP_STAGES: [(&str, [StepBox; 4]); 3] = [
    (
        "position",
        [
            ("kinematics, com", "mj_com_pos", "src/mujoco/com.rs"),
            ("composite inertia M", "mj_crb", "src/mujoco/com.rs"),
            ("factor M = L^T D L", "factor_i_in_place", "src/sparse/layout.rs"),
            ("collision", "collide_all", "src/mujoco/collision.rs"),
        ],
    ),
    (
        "velocity",
        [
            ("com velocity", "mj_com_vel", "src/mujoco/com.rs"),
            ("passive forces", "passive_forces_into", "src/dynamics/mod.rs"),
            ("constraint rows", "make_constraint", "src/mujoco/constraint/mod.rs"),
            ("bias c(q, v)", "mj_rne", "src/mujoco/com.rs"),
        ],
    ),
    (
        "acceleration",
        [
            ("actuation", "actuator_forces", "src/dynamics/actuation.rs"),
            ("qacc_smooth", "solve_ld", "src/sparse/layout.rs"),
            ("constraint solver", "solve", "src/mujoco/solver/mod.rs"),
            ("qacc, qfrc_constraint", "forward_with", "src/mujoco/forward.rs"),
        ],
    ),
];

/// Each integrator's update after the forward pass (`mj_Euler`, `mj_implicit`,
/// `mj_RungeKutta`, then `mj_advance`), as [`Simulator::step`] runs it.
pub const STEP_UPDATES: [(&str, [StepBox; 2]); 4] = [
    (
        "Euler (implicit damping if any dof is damped)",
        [
            (
                "(M + h diag(b)) a = f",
                "cholesky_dense_in_place",
                "src/sparse/dense.rs",
            ),
            ("v += h a, q = q (+) h v", "integrate_with", "src/model/mod.rs"),
        ],
    ),
    (
        "implicit",
        [
            ("D = qDeriv incl. RNE", "rne_vel", "src/mujoco/implicit.rs"),
            (
                "(M - h D) a = f, reverse LU",
                "lu_reverse_tree_in_place",
                "src/mujoco/implicit.rs",
            ),
        ],
    ),
    (
        "implicitfast",
        [
            ("D = qDeriv, no RNE", "qderiv", "src/mujoco/implicit.rs"),
            ("M - h sym(D) = L^T D L", "factor_i_in_place", "src/sparse/layout.rs"),
        ],
    ),
    (
        "RK4",
        [
            ("4 stages k1..k4", "forward_pass", "src/mujoco/integrator.rs"),
            ("tableau, dexp^-1 on quats", "rk4_step_aux", "src/integrate.rs"),
        ],
    ),
];

/// The short path of [`forward_pass`](crate::mujoco::integrator::forward_pass) on a model without constraints, in order, with the
/// defining files; `next_activation` is `mj_advance`'s update of `act` after every integrator.
pub const STEP_SHORT_PATH: [(&str, &str); 7] = [
    ("tendon_kinematics_into", "src/dynamics/tendon.rs"),
    ("transmission_with", "src/dynamics/actuation.rs"),
    ("passive_forces_into", "src/dynamics/mod.rs"),
    ("rnea_with", "src/dynamics/rnea.rs"),
    ("actuation_with", "src/dynamics/actuation.rs"),
    ("aba_with", "src/dynamics/aba.rs"),
    ("next_activation", "src/dynamics/actuation.rs"),
];

/// Draws `integrators_step.svg`: the stages of the forward pass ([`STEP_STAGES`]) feeding each
/// integrator's update ([`STEP_UPDATES`]), one box per library function.
pub fn step_drawing(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("integrators_step.svg");
    draw_step(&path)?;
    Ok(path)
}

fn draw_step(path: &Path) -> Result<()> {
    use super::draw::{canvas, colour, finish, Side, Sketch, GREY, INK};
    let root = canvas(
        path,
        1280,
        720,
        "One step: the forward pass (forward_pass) and each integrator's update",
    )?;
    let s = Sketch::new(root.clone(), (0.0, 17.0), (0.0, 9.4), 6.0);
    let (bw, bh) = (3.3, 1.2);
    let draw_box = |x: f64, y: f64, w: f64, b: &StepBox, k: usize| -> Result<()> {
        let c = colour(k);
        let rect = [(x, y), (x + w, y), (x + w, y + bh), (x, y + bh), (x, y)];
        s.fill(&rect[..4], c, 0.12)?;
        s.line(&rect, c, 2)?;
        s.label((x + 0.5 * w, y + 0.8 * bh), b.0, Side::Centre, 15, INK)?;
        s.label((x + 0.5 * w, y + 0.32 * bh), b.1, Side::Centre, 14, c)?;
        Ok(())
    };
    // the forward pass: three stage columns, each top to bottom
    let frame = [(0.1, 0.9), (11.0, 0.9), (11.0, 9.3), (0.1, 9.3), (0.1, 0.9)];
    s.line(&frame, GREY, 1)?;
    s.label((5.55, 9.3), "forward_pass (mj_forward)", Side::Below, 17, INK)?;
    let mut prev: Option<(f64, f64)> = None;
    for (j, (stage, boxes)) in STEP_STAGES.iter().enumerate() {
        let x = 0.4 + 3.6 * j as f64;
        s.label((x + 0.5 * bw, 8.35), &format!("{stage} stage"), Side::Centre, 16, INK)?;
        for (i, b) in boxes.iter().enumerate() {
            let y = 6.5 - 1.7 * i as f64;
            draw_box(x, y, bw, b, j)?;
            let top = (x + 0.5 * bw, y + bh);
            match prev {
                Some(p) if i > 0 => s.arrow(p, top, INK, 1)?,
                Some(p) => s.arrow(p, (x, y + 0.5 * bh), INK, 1)?,
                None => {}
            }
            prev = Some(if i + 1 == boxes.len() {
                (x + bw, y + 0.5 * bh)
            } else {
                (x + 0.5 * bw, y)
            });
        }
        // the last box of a column feeds the top of the next
        if let Some(p) = prev {
            let next_top = 6.5 + 0.5 * bh;
            if j + 1 < STEP_STAGES.len() {
                let mid = x + bw + 0.15;
                s.line(&[p, (mid, p.1), (mid, next_top)], INK, 1)?;
                prev = Some((mid, next_top));
            }
        }
    }
    // the integrators: one row each, fed by qacc
    let qacc = prev.unwrap_or((11.0, 1.5));
    let (ux, uw) = (12.0, 2.4);
    for (r, (name, boxes)) in STEP_UPDATES.iter().enumerate() {
        let y = 7.2 - 2.05 * r as f64;
        s.label((ux - 0.15, y + bh + 0.22), name, Side::Right, 15, INK)?;
        s.arrow(qacc, (ux, y + 0.5 * bh), GREY, 1)?;
        for (i, b) in boxes.iter().enumerate() {
            draw_box(ux + i as f64 * (uw + 0.2), y, uw, b, 3 + r)?;
        }
        s.arrow((ux + uw, y + 0.5 * bh), (ux + uw + 0.2, y + 0.5 * bh), INK, 1)?;
    }
    // RK4 calls the forward pass at each of its four stages
    let rk_y = 7.2 - 2.05 * 3.0;
    s.dashed((ux + 0.5 * uw, rk_y), (ux + 0.5 * uw, 0.5), colour(6))?;
    s.dashed((ux + 0.5 * uw, 0.5), (5.55, 0.5), colour(6))?;
    s.arrow((5.55, 0.5), (5.55, 0.9), colour(6), 1)?;
    s.label(
        (8.8, 0.5),
        "RK4: forward_pass at each of 4 stages",
        Side::Above,
        14,
        colour(6),
    )?;
    let short: Vec<&str> = STEP_SHORT_PATH[..6].iter().map(|f| f.0).collect();
    let note = format!(
        "models without constraints take the short path {}; every update ends with {} for act",
        short.join(", "),
        STEP_SHORT_PATH[6].0
    );
    s.label((0.2, 0.25), &note, Side::Right, 13, GREY)?;
    finish(&root)
}

#[cfg(test)]
mod step_drawing_tests {
    use super::*;

    /// Whether `file` (relative to the crate root) defines a function named `name`.
    fn defines(file: &str, name: &str) -> bool {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        src.contains(&format!("fn {name}(")) || src.contains(&format!("fn {name}<"))
    }

    /// What the warm-start figure's text says: over the humanoid's fall, the warm start saves
    /// more than a quarter of PGS's and CG's iterations and some of Newton's.
    #[test]
    fn the_warm_start_saves_iterations_over_the_fall() {
        for (solver, fraction) in [(Solver::Pgs, 0.75), (Solver::Cg, 0.75), (Solver::Newton, 0.95)] {
            let total = |warm| -> usize { warmstart_iterations(solver, warm).unwrap().iter().map(|p| p.1).sum() };
            let (warm, cold) = (total(true), total(false));
            assert!(
                (warm as f64) < fraction * cold as f64,
                "{solver:?}: {warm} iterations warm, {cold} cold"
            );
        }
    }

    #[test]
    fn every_function_named_in_the_step_drawing_is_defined_where_it_says() {
        let mut named: Vec<(&str, &str)> = Vec::new();
        for (_, boxes) in STEP_STAGES.iter() {
            named.extend(boxes.iter().map(|b| (b.1, b.2)));
        }
        for (_, boxes) in STEP_UPDATES.iter() {
            named.extend(boxes.iter().map(|b| (b.1, b.2)));
        }
        named.extend(STEP_SHORT_PATH.iter().copied());
        assert_eq!(named.len(), 12 + 8 + 7);
        for (name, file) in named {
            assert!(defines(file, name), "{file} defines no fn {name}");
        }
        // the test can fail: a name that is not defined is caught
        assert!(!defines("src/mujoco/integrator.rs", "mj_no_such_function"));
    }

    #[test]
    fn the_forward_pass_calls_the_short_path_in_the_drawn_order() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mujoco/integrator.rs");
        let src = std::fs::read_to_string(path).unwrap_or_default();
        let body = &src[src.find("pub fn forward_pass(").unwrap_or(0)..];
        let body = &body[..body.find("ANCHOR_END: forward").unwrap_or(body.len())];
        let mut at = 0;
        for (name, _) in &STEP_SHORT_PATH[..6] {
            let k = body[at..].find(&format!("{name}(")).map(|k| k + at);
            assert!(k.is_some(), "forward_pass calls {name} after the previous stage");
            at = k.unwrap_or(at);
        }
    }
}
