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
//! ```
//! `python3 tools/peers/compare.py --constrained` runs the peer mode and MuJoCo's driver
//! (`bench_mujoco --state`) in interleaved rounds, with the same solver settings: the model's
//! own tolerance and iterations, cold start (MuJoCo's warm start disabled, since every call
//! repeats the same state).

use criterion::Criterion;
use mbd::mjcf;
use mbd::model::{Cone, Model, Solver};
use mbd::mujoco::forward::Forward;
use serde::Deserialize;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

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

/// (median, min, max) ns per call by the rule of `tools/peers/timing.h`.
fn peers_style_median(repeats: usize, target_ms: f64, mut f: impl FnMut()) -> (f64, f64, f64) {
    let mut n: u64 = 1;
    loop {
        let t0 = Instant::now();
        for _ in 0..n {
            f();
        }
        let dt = t0.elapsed().as_secs_f64() * 1e9;
        if dt > target_ms * 1e6 * 0.5 || n > (1 << 30) {
            n = ((n as f64) * target_ms * 1e6 / dt.max(1.0)).max(1.0) as u64;
            break;
        }
        n *= 2;
    }
    let mut s: Vec<f64> = (0..repeats)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..n {
                f();
            }
            t0.elapsed().as_secs_f64() * 1e9 / n as f64
        })
        .collect();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    let med = if s.len() % 2 == 1 {
        s[m]
    } else {
        0.5 * (s[m - 1] + s[m])
    };
    (med, s[0], s[s.len() - 1])
}

/// `MBD_BENCH_PEERS=REPEATS[:TARGET_MS]`: one JSON line per scene, functions named
/// `forward_<solver>_<cone>`, plus the iterations each solver took.
fn peers_style(spec: &str, only: Option<&str>) {
    let usage = "MBD_BENCH_PEERS=REPEATS[:TARGET_MS]";
    let (r, t) = spec.split_once(':').unwrap_or((spec, "20"));
    let repeats: usize = r.parse().expect(usage);
    let target_ms: f64 = t.parse().expect(usage);
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
            let (med, lo, hi) = peers_style_median(repeats, target_ms, || {
                fw.forward_with(black_box(&f.qpos), &f.qvel, &zeros).expect("forward");
            });
            times.push(format!(
                "\"forward_{name}\":{{\"median_ns\":{med:.1},\"min_ns\":{lo:.1},\"max_ns\":{hi:.1}}}"
            ));
        }
        println!(
            "{{\"engine\":\"mbd\",\"label\":\"{label}\",\"nv\":{},\"repeats\":{repeats},\"niter\":{{{}}},\"fn\":{{{}}}}}",
            model.nv,
            iters.join(","),
            times.join(",")
        );
    }
}

fn main() {
    if let Ok(spec) = std::env::var("MBD_BENCH_PEERS") {
        let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
        peers_style(&spec, only.as_deref());
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
