//! Timing of the constrained `mj_forward` ([`Forward::forward_with`]: smooth dynamics, collision,
//! constraint rows, solver) per solver and friction cone, at MuJoCo's settled states of three
//! scenes (from `tests/fixtures/forward/*.json`): `box_stack` (3 boxes, 12 contacts),
//! `box_stack_10` (10 boxes, 40 contacts) and the Gymnasium `humanoid` on its floor.
//!
//! ```text
//! cargo bench --bench constrained                       # criterion, every case
//! cargo bench --bench constrained -- box_stack_10/newton  # cases whose name contains this
//! MBD_BENCH_PEERS=11:20 cargo bench --bench constrained [-- humanoid]
//!     # one JSON line per scene, timed by the rule of tools/peers/timing.h
//! MBD_BENCH_CALLS=1000 target/release/deps/constrained-HASH box_stack/newton_pyramidal
//!     # that case's forward 1000 times and nothing else, for `perf stat -e instructions`:
//!     # (count at N calls - count at 0) / N is the instructions per call
//! ```
//! `python3 tools/peers/compare.py --constrained` runs the peer mode and MuJoCo's driver
//! (`bench_mujoco --state`) in interleaved rounds, with the same solver settings: the model's
//! own tolerance and iterations, cold start (MuJoCo's warm start disabled, since every call
//! repeats the same state).

#[path = "common/peers_timing.rs"]
mod peers_timing;

use criterion::Criterion;
use mbd::mjcf;
use mbd::model::{Cone, Model, Solver};
use mbd::mujoco::forward::Forward;
use serde::Deserialize;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// The scenes: (label, fixture in `tests/fixtures/forward`).
const SCENES: [&str; 3] = ["box_stack", "box_stack_10", "humanoid"];

#[derive(Deserialize)]
struct Fixture {
    model: String,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
}

fn load(label: &str) -> (Model, Fixture) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let f: Fixture = serde_json::from_str(
        &std::fs::read_to_string(root.join(format!("tests/fixtures/forward/{label}.json"))).expect("fixture"),
    )
    .expect("fixture JSON");
    let model = mjcf::load(root.join(&f.model)).expect("model").model;
    (model, f)
}

/// The six settings: (name, solver, cone).
fn settings() -> Vec<(String, Solver, Cone)> {
    let mut out = vec![];
    for solver in [Solver::Newton, Solver::Cg, Solver::Pgs] {
        for cone in [Cone::Pyramidal, Cone::Elliptic] {
            out.push((
                format!("{}_{}", solver.name().to_lowercase(), cone.name()),
                solver,
                cone,
            ));
        }
    }
    out
}

fn configured(model: &Model, solver: Solver, cone: Cone) -> Model {
    let mut m = model.clone();
    m.opt.solver = solver;
    m.opt.cone = cone;
    m
}

/// `MBD_BENCH_PEERS=REPEATS[:TARGET_MS]`: one JSON line per scene, functions named
/// `forward_<solver>_<cone>`, plus the iterations each solver took.
fn peers_style(spec: &str, only: Option<&str>) {
    let (repeats, target_ms) = peers_timing::parse_spec(spec);
    for label in SCENES {
        if only.is_some_and(|o| o != label) {
            continue;
        }
        let (model, f) = load(label);
        let zeros = vec![0.0; model.nv];
        let mut times = vec![];
        let mut iters = vec![];
        for (name, solver, cone) in settings() {
            let m = configured(&model, solver, cone);
            let mut fw = Forward::new(&m).expect("forward");
            fw.forward(&f.qpos, &f.qvel, &zeros).expect("forward");
            iters.push(format!("\"{name}\":{}", fw.d.solver_niter));
            let stats = peers_timing::time_batches(repeats, target_ms, || {
                fw.forward_with(black_box(&f.qpos), &f.qvel, &zeros).expect("forward");
            });
            times.push(stats.json(&format!("forward_{name}")));
        }
        println!(
            "{{\"engine\":\"mbd\",\"label\":\"{label}\",\"nv\":{},\"repeats\":{repeats},\"niter\":{{{}}},\"fn\":{{{}}}}}",
            model.nv,
            iters.join(","),
            times.join(",")
        );
    }
}

/// `MBD_BENCH_CALLS=N` with the case `SCENE/SETTING`: one forward to set up, then `N` more.
fn calls(n: &str, case: Option<&str>) {
    let n: usize = n.parse().expect("MBD_BENCH_CALLS=N");
    let case = case.expect("MBD_BENCH_CALLS needs a case SCENE/SETTING");
    let (label, setting) = case.split_once('/').expect("SCENE/SETTING");
    let (model, f) = load(label);
    let zeros = vec![0.0; model.nv];
    let (_, solver, cone) = settings().into_iter().find(|s| s.0 == setting).expect("setting");
    let m = configured(&model, solver, cone);
    let mut fw = Forward::new(&m).expect("forward");
    fw.forward(&f.qpos, &f.qvel, &zeros).expect("forward");
    for _ in 0..n {
        fw.forward_with(black_box(&f.qpos), &f.qvel, &zeros).expect("forward");
    }
    eprintln!("{case}: {} iterations, nefc {}", fw.d.solver_niter, fw.d.efc.nefc());
}

fn main() {
    if let Ok(n) = std::env::var("MBD_BENCH_CALLS") {
        calls(&n, peers_timing::only_arg().as_deref());
        return;
    }
    if let Ok(spec) = std::env::var("MBD_BENCH_PEERS") {
        peers_style(&spec, peers_timing::only_arg().as_deref());
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(800))
        .sample_size(20)
        .configure_from_args();
    for label in SCENES {
        let (model, f) = load(label);
        let zeros = vec![0.0; model.nv];
        for (name, solver, cone) in settings() {
            let m = configured(&model, solver, cone);
            let mut fw = Forward::new(&m).expect("forward");
            c.bench_function(&format!("{label}/{name}"), |b| {
                b.iter(|| fw.forward_with(black_box(&f.qpos), &f.qvel, &zeros).expect("forward"))
            });
        }
    }
    c.final_summary();
}
