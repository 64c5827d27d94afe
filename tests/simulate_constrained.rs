//! The constrained simulator (`mbd::mujoco::integrator::Simulator` on models with contacts and
//! equality constraints) against MuJoCo 4.0.0's own trajectories
//! (`tests/fixtures/rollout/*.json`, made by `tests/fixtures/make_rollout_fixtures.py`): Euler
//! with the Newton solver converged to 1e-12, both friction cones, from qpos0 at rest.
//!
//! The measure is the largest absolute difference of qpos (metres, radians, quaternion
//! components). The two simulations make the same decisions at every step (which contacts
//! exist, which rows are active), so the difference is rounding: each step's forces agree to
//! about 1e-13 relative (tests/forward.rs), and the differences grow with the steps, fastest on
//! the four-bar, whose loop amplifies them (worst seen: 3e-15 after 100 steps, 9e-13 after
//! 1000). [`TOL_100`] and [`TOL_1000`] leave two orders of magnitude; a difference of
//! decisions (a contact found one step later, a row's state flipped) would show as 1e-6 or more.

use mbd::mjcf;
use mbd::model::{Cone, Integrator, Solver};
use mbd::mujoco::integrator::{Simulator, State};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Largest qpos difference after 100 steps.
const TOL_100: f64 = 1e-12;
/// Largest qpos difference after 1000 steps.
const TOL_1000: f64 = 1e-10;

#[derive(Deserialize)]
struct Rollout {
    name: String,
    model: String,
    steps: Vec<usize>,
    cones: BTreeMap<String, Track>,
    #[serde(default)]
    integrators: BTreeMap<String, BTreeMap<String, Track>>,
}

#[derive(Deserialize)]
struct Track {
    qpos: Vec<Vec<f64>>,
    ncon: Vec<usize>,
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// The largest qpos differences at the recorded steps of one rollout, with `integrator`, and
/// the contact count of mbd's last state.
fn follow(r: &Rollout, cone: &str, integrator: Integrator, track: &Track) -> (Vec<f64>, usize) {
    let mut m = mjcf::load(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(&r.model))
        .unwrap()
        .model;
    m.opt.cone = Cone::parse(cone).unwrap();
    m.opt.solver = Solver::Newton;
    m.opt.tolerance = 1e-12;
    m.opt.iterations = 1000;
    // the fixtures were made with MuJoCo's warm start disabled (settled.comparison_options):
    // disabled here too, so that both solvers start cold from qacc_smooth
    m.opt.flags.push(("warmstart".into(), false));
    let mut sim = Simulator::new(&m, State::reference(&m), integrator).unwrap();
    let mut errs = vec![];
    for (k, &steps) in r.steps.iter().enumerate() {
        while sim.steps < steps {
            sim.step()
                .unwrap_or_else(|e| panic!("{} {cone} {integrator}: {e}", r.name));
        }
        errs.push(max_diff(&sim.state.qpos, &track.qpos[k]));
    }
    sim.forward().unwrap();
    (errs, sim.forward_data().map_or(0, |d| d.contacts().len()))
}

/// implicit, implicitfast and RK4 with constraints: the constraint force enters the implicit
/// velocity update (`(M - h D) a = qfrc_smooth + qfrc_constraint`) and every RK4 stage, as in
/// MuJoCo's `mj_implicit` and `mj_RungeKutta`. Same tolerances as Euler's, for the same
/// reason (rounding only, same decisions at every step).
#[test]
fn constrained_implicit_implicitfast_and_rk4_follow_mujoco() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rollout");
    let mut lines = vec![];
    let mut failures = vec![];
    let mut seen = 0;
    for name in ["sphere_plane", "box_stack", "capsule_plane", "fourbar", "weld"] {
        let r: Rollout =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()).unwrap();
        for (integ, cones) in &r.integrators {
            let integrator = Integrator::parse(integ).unwrap();
            for (cone, track) in cones {
                seen += 1;
                let (errs, ncon) = follow(&r, cone, integrator, track);
                for (k, &steps) in r.steps.iter().enumerate() {
                    let tol = match steps {
                        0..=100 => TOL_100,
                        _ => TOL_1000,
                    };
                    if errs[k] > tol {
                        failures.push(format!(
                            "{name} {cone} {integ}: qpos after {steps} steps off by {:.2e}",
                            errs[k]
                        ));
                    }
                }
                assert_eq!(ncon, *track.ncon.last().unwrap(), "{name} {cone} {integ}: contacts");
                lines.push(format!(
                    "{name:<14} {cone:<9} {integ:<12} |dqpos| at steps {:?}: {}",
                    r.steps,
                    errs.iter().map(|e| format!("{e:.1e}")).collect::<Vec<_>>().join(" ")
                ));
            }
        }
    }
    assert_eq!(
        seen,
        5 * 3 * 2,
        "every scene has implicit, implicitfast and RK4 with both cones"
    );
    println!("{}", lines.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn constrained_euler_follows_mujoco() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rollout");
    let mut lines = vec![];
    let mut failures = vec![];
    for name in [
        "sphere_plane",
        "box_incline",
        "box_stack",
        "capsule_plane",
        "fourbar",
        "weld",
    ] {
        let r: Rollout =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()).unwrap();
        for (cone, track) in &r.cones {
            let mut m = mjcf::load(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(&r.model))
                .unwrap()
                .model;
            m.opt.cone = Cone::parse(cone).unwrap();
            m.opt.solver = Solver::Newton;
            m.opt.tolerance = 1e-12;
            m.opt.iterations = 1000;
            // the fixtures were made with MuJoCo's warm start disabled (settled.comparison_options):
            // disabled here too, so that both solvers start cold from qacc_smooth
            m.opt.flags.push(("warmstart".into(), false));
            let mut sim = Simulator::new(&m, State::reference(&m), Integrator::Euler).unwrap();
            let mut errs = vec![];
            for (k, &steps) in r.steps.iter().enumerate() {
                while sim.steps < steps {
                    sim.step().unwrap_or_else(|e| panic!("{} {cone}: {e}", r.name));
                }
                errs.push(max_diff(&sim.state.qpos, &track.qpos[k]));
                if steps == 100 && errs[k] > TOL_100 {
                    failures.push(format!(
                        "{} {cone}: qpos after 100 steps off by {:.2e}",
                        r.name, errs[k]
                    ));
                }
                if steps == 1000 && errs[k] > TOL_1000 {
                    failures.push(format!(
                        "{} {cone}: qpos after 1000 steps off by {:.2e}",
                        r.name, errs[k]
                    ));
                }
            }
            let ncon = sim.forward_data().map_or(0, |d| d.contacts().len());
            lines.push(format!(
                "{:<14} {:<9} ncon {ncon:>2} (MuJoCo {:>2})  |dqpos| at steps {:?}: {}",
                r.name,
                cone,
                track.ncon.last().unwrap(),
                r.steps,
                errs.iter().map(|e| format!("{e:.1e}")).collect::<Vec<_>>().join(" ")
            ));
        }
    }
    println!("{}", lines.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The box on an incline of the chapter's figure (elliptic cone, Euler, h = 2 ms) against
/// Coulomb's law: below `mu = tan(theta)` it slides with `g (sin theta - mu cos theta)`, the
/// distance after 1 s within 0.5 % of the analytic one (the soft contact's compliance and the
/// first steps of the release account for less than that: 0.2 % seen); above, it sticks,
/// creeping less than 2 mm in 1 s (the soft constraint's regularization lets a resting contact
/// slip slowly; 0.9-1.0 mm seen).
#[test]
fn a_box_on_an_incline_slides_at_coulombs_rate_or_sticks() {
    use mbd::figures::integrators::{incline_acceleration, incline_slide};
    let theta = 20f64.to_radians();
    for mu in [0.1, 0.25, 0.35, 0.38, 0.5] {
        let s = incline_slide(mu, theta, 1.0).unwrap();
        let end = s.last().unwrap().1;
        let a = incline_acceleration(mu, theta, 9.81);
        if mu < theta.tan() {
            let want = 0.5 * a;
            assert!((end - want).abs() < 5e-3 * want, "mu {mu}: {end} m vs {want} m");
        } else {
            assert_eq!(a, 0.0);
            assert!(end.abs() < 2e-3, "mu {mu}: crept {end} m");
        }
    }
}
