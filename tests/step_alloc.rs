//! `Simulator::step` keeps its storage (chapter "Integrators and the simulation loop", section
//! "What a step costs"): on the settled `box_stack` and Gymnasium humanoid of
//! `tests/fixtures/forward` (contacts, tendons, actuators with controls), once the first steps
//! have sized the contact and row storage, a hundred further steps of each of the four
//! integrators allocate nothing, the constrained pipeline, the integrator's derivatives and
//! factorizations and RK4's stages included. A global allocator counts the allocations of this
//! test binary (one test, so no other thread allocates meanwhile).

use mbd::mjcf;
use mbd::model::Integrator;
use mbd::mujoco::integrator::{Simulator, State};
use std::path::Path;

#[path = "common/counting.rs"]
mod counting;
use counting::count;

#[test]
fn steps_after_the_first_allocate_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for scene in ["box_stack", "humanoid"] {
        let fx: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join(format!("tests/fixtures/forward/{scene}.json"))).unwrap(),
        )
        .unwrap();
        let floats = |k: &str| -> Vec<f64> { fx[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
        let model = mjcf::load(root.join(fx["model"].as_str().unwrap())).unwrap().model;
        let mut s0 = State::reference(&model);
        s0.qpos = floats("qpos");
        s0.qvel = floats("qvel");
        // small controls, so that the actuators (the humanoid's motors) carry force
        s0.ctrl
            .iter_mut()
            .enumerate()
            .for_each(|(k, c)| *c = 0.05 * (k as f64).sin());
        for integ in [
            Integrator::Euler,
            Integrator::Implicit,
            Integrator::ImplicitFast,
            Integrator::Rk4,
        ] {
            let mut sim = Simulator::new(&model, s0.clone(), integ).unwrap();
            for _ in 0..20 {
                sim.step().unwrap();
            }
            let n = count(|| {
                for _ in 0..100 {
                    sim.step().unwrap();
                }
            });
            assert_eq!(n, 0, "{scene} {integ}: {n} allocations in 100 steps");
            // the steps did something: the pipeline found contacts and the state moved
            let ncon = sim.forward_data().map_or(0, |d| d.contacts().len());
            assert!(ncon > 0, "{scene} {integ}: no contacts");
            assert!(sim.state.qpos != s0.qpos, "{scene} {integ}: no motion");
            checked += 1;
        }
    }
    assert_eq!(checked, 8);
}
