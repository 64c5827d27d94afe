//! Steps per second of MuJoCo's four integrators (`mj_step`) on `chain_30_spatial` and `panda`
//! (from a moving start inside every joint range), and on `box_stack` and the Gymnasium
//! `humanoid` at MuJoCo's settled states (`tests/fixtures/forward/*.json`, with contacts: the
//! constrained pipeline runs in every step). Book chapter "Integrators and the simulation loop".
//!
//! ```text
//! cargo bench --bench integrators                 # criterion, every case
//! cargo bench --bench integrators -- panda/rk4    # cases whose name contains this
//! MBD_STEP_PEERS=1 cargo bench --bench integrators  # peer mode (tools/peers/step_compare.py)
//! MBD_STEP_PEERS=1 MBD_STEP_ONLY=humanoid/rk4 cargo bench --bench integrators  # one case (or one scene)
//! MBD_STEP_PEERS=1 MBD_STEP_COLD=1 cargo bench --bench integrators  # warm start disabled
//! ```
//!
//! Criterion mode times consecutive steps (the solver warm-started from the step before, as in a
//! simulation), going back to the start state every `BATCH` steps so that every timed step is
//! one of the first `BATCH` steps of the scene. Peer mode times what
//! `tools/peers/step_compare.py` times in MuJoCo: batches of `MBD_STEP_BATCH` (default 200)
//! consecutive steps from the start state, each batch on a fresh simulator (a zero
//! `qacc_warmstart`, as MuJoCo's `rollout` from a state; the later steps warm-started), and prints one JSON line per case with the median and the
//! fastest batch's time per step.

#[path = "common/peers_timing.rs"]
mod peers_timing;

use criterion::Criterion;
use mbd::model::{Integrator, JointType, Model};
use mbd::mujoco::integrator::{Simulator, State};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The scenes: name, model file (relative to the repository root), settled-state fixture.
const SCENES: [(&str, &str, Option<&str>); 4] = [
    ("chain_30_spatial", "tests/fixtures/models/chain_30_spatial.xml", None),
    ("panda", "tests/fixtures/models/panda.xml", None),
    (
        "box_stack",
        "tests/fixtures/models/box_stack.xml",
        Some("tests/fixtures/forward/box_stack.json"),
    ),
    (
        "humanoid",
        "tests/fixtures/models/public/gymnasium/humanoid.xml",
        Some("tests/fixtures/forward/humanoid.json"),
    ),
];

const INTEGRATORS: [(Integrator, &str); 4] = [
    (Integrator::Euler, "euler"),
    (Integrator::Implicit, "implicit"),
    (Integrator::ImplicitFast, "implicitfast"),
    (Integrator::Rk4, "rk4"),
];

/// A start inside every joint range (the middle of a limited joint's range), moving:
/// `qvel_k = 0.3 sin(1.3 k)`. `step_compare.py` builds the same state.
fn start(model: &Model) -> State {
    let mut s = State::reference(model);
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if j.limited && matches!(j.jtype, JointType::Revolute { .. } | JointType::Prismatic { .. }) {
            s.qpos[model.q_adr[i]] = 0.5 * (j.range[0] + j.range[1]);
        }
    }
    s.qvel = (0..model.nv).map(|k| 0.3 * (1.3 * k as f64).sin()).collect();
    s
}

/// MuJoCo's settled state of a scene (`qpos`, `qvel` of the fixture).
fn settled(model: &Model, fixture: &str) -> State {
    let text = std::fs::read_to_string(format!("{ROOT}/{fixture}")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let vec = |key: &str| -> Vec<f64> { v[key].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect() };
    let mut s = State::reference(model);
    s.qpos = vec("qpos");
    s.qvel = vec("qvel");
    s
}

fn scene(name: &str, file: &str, fixture: Option<&str>) -> (Model, State) {
    let model = mbd::mjcf::load(format!("{ROOT}/{file}")).unwrap().model;
    let s0 = match fixture {
        Some(f) => settled(&model, f),
        None => start(&model),
    };
    assert!(s0.check(&model).is_ok(), "{name}: bad start state");
    (model, s0)
}

/// Criterion mode's steps from the start state before going back to it (peer mode's default
/// batch).
const BATCH: usize = 200;

/// Peer mode: per case, `MBD_STEP_BATCHES` batches of `MBD_STEP_BATCH` consecutive steps.
fn peer_mode() {
    let env = |k: &str, d: usize| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
    let (batch, batches) = (env("MBD_STEP_BATCH", 200), env("MBD_STEP_BATCHES", 9));
    let only = std::env::var("MBD_STEP_ONLY").unwrap_or_default();
    for (name, file, fixture) in SCENES {
        let (mut model, s0) = scene(name, file, fixture);
        if std::env::var_os("MBD_STEP_COLD").is_some() {
            model.opt.flags.push(("warmstart".into(), false));
        }
        for (integ, label) in INTEGRATORS {
            // exactly one case, or every case of one scene ("humanoid/implicit" is not also
            // "humanoid/implicitfast")
            if !(only.is_empty() || only == name || only == format!("{name}/{label}")) {
                continue;
            }
            let mut times = Vec::with_capacity(batches);
            for _ in 0..batches {
                let mut sim = Simulator::new(&model, s0.clone(), integ).unwrap();
                let t = Instant::now();
                for _ in 0..batch {
                    sim.step().unwrap();
                }
                times.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
            }
            let stats = peers_timing::Stats::of(times);
            println!(
                "{{\"engine\": \"mbd\", \"scene\": \"{name}\", \"integrator\": \"{label}\", \"us_median\": {}, \"us_min\": {}}}",
                stats.median, stats.min
            );
        }
    }
}

fn main() {
    if std::env::var_os("MBD_STEP_PEERS").is_some() {
        peer_mode();
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .configure_from_args();
    for (name, file, fixture) in SCENES {
        let (model, s0) = scene(name, file, fixture);
        for (integ, label) in INTEGRATORS {
            let mut sim = Simulator::new(&model, s0.clone(), integ).unwrap();
            c.bench_function(&format!("step/{name}/{label}"), |b| {
                b.iter(|| {
                    if sim.steps.is_multiple_of(BATCH) {
                        sim.state.clone_from(&s0);
                    }
                    sim.step().unwrap();
                })
            });
        }
    }
    c.final_summary();
}
