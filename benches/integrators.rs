//! Steps per second of MuJoCo's four integrators (`mj_step` without constraints) on
//! `chain_30_spatial` and `panda` (book chapter "Integrators and the simulation loop"). Each
//! iteration resets the state to the same start and takes one step, so the panda never reaches
//! a joint limit; the time per step is criterion's estimate, steps per second its inverse.
//!
//! ```text
//! cargo bench --bench integrators                 # every case
//! cargo bench --bench integrators -- panda/rk4    # cases whose name contains this
//! ```

use criterion::Criterion;
use mbd::model::{Integrator, JointType, Model};
use mbd::mujoco::integrator::{Simulator, State};
use std::time::Duration;

fn load(name: &str) -> Model {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models")
        .join(name);
    mbd::mjcf::load(path).unwrap().model
}

/// A start inside every joint range (the middle of a limited joint's range), moving.
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

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .configure_from_args();
    for name in ["chain_30_spatial", "panda"] {
        let model = load(&format!("{name}.xml"));
        let s0 = start(&model);
        for (integ, label) in [
            (Integrator::Euler, "euler"),
            (Integrator::Implicit, "implicit"),
            (Integrator::ImplicitFast, "implicitfast"),
            (Integrator::Rk4, "rk4"),
        ] {
            let mut sim = Simulator::new(&model, s0.clone(), integ).unwrap();
            c.bench_function(&format!("step/{name}/{label}"), |b| {
                b.iter(|| {
                    sim.state.clone_from(&s0);
                    sim.step().unwrap();
                })
            });
        }
    }
    c.final_summary();
}
