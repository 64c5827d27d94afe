//! `Simulator::step` keeps its storage (chapter "Integrators and the simulation loop", section
//! "What a step costs"): on the settled `box_stack`, Gymnasium humanoid and dm_control quadruped
//! of `tests/fixtures/forward` (contacts, tendons, tendon equalities, actuators with controls,
//! the quadruped's ellipsoid pairs), and on [`CONVEX`] (meshes, an ellipsoid and a height field
//! resting on each other, so that GJK, EPA and the contact patch run every step), once the first
//! steps have sized the contact
//! and row storage, a hundred further steps of each of the four integrators allocate nothing,
//! the constrained pipeline, the integrator's derivatives and factorizations and RK4's stages
//! included. A global allocator counts the allocations of each test's thread.

use mbd::mjcf;
use mbd::model::Integrator;
use mbd::mujoco::integrator::{Simulator, State};
use std::path::Path;

#[path = "common/counting.rs"]
mod counting;
use counting::count;

/// A scene whose contacts all go through the general convex collider but one: a box on the
/// floor (analytic) with a mesh cube on it (GJK, EPA, the face patch) and an ellipsoid on the
/// cube (GJK and EPA); a mesh cube on the floor (`mjc_PlaneConvex`); an ellipsoid on the floor;
/// a mesh cube on a height field's hump (a convex collision per prism).
const CONVEX: &str = r#"<mujoco model="convex stack">
  <asset>
    <mesh name="cube" vertex="-.1 -.1 -.1  .1 -.1 -.1  -.1 .1 -.1  .1 .1 -.1  -.1 -.1 .1  .1 -.1 .1  -.1 .1 .1  .1 .1 .1"/>
    <hfield name="bumps" nrow="5" ncol="5" size=".5 .5 .1 .05"
            elevation="0 1 2 1 0  1 2 3 2 1  2 3 4 3 2  1 2 3 2 1  0 1 2 1 0"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <geom name="bumps" type="hfield" hfield="bumps" pos="2 0 0"/>
    <body pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
    <body pos=".01 .02 .3" euler="0 0 20"><freejoint/><geom type="mesh" mesh="cube"/></body>
    <body pos="0 0 .45"><freejoint/><geom type="ellipsoid" size=".08 .06 .05"/></body>
    <body pos="1 0 .1" euler="0 0 30"><freejoint/><geom type="mesh" mesh="cube"/></body>
    <body pos="-1 0 .05"><freejoint/><geom type="ellipsoid" size=".08 .06 .05"/></body>
    <body pos="2 0 .2"><freejoint/><geom type="mesh" mesh="cube"/></body>
  </worldbody>
</mujoco>"#;

/// The model and state of `scene`: a settled fixture of `tests/fixtures/forward`, or `CONVEX`
/// after half a second of Euler steps from rest.
fn scene(name: &str) -> (mbd::model::Model, State) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if name == "convex" {
        let model = mjcf::load_str(CONVEX).unwrap().model;
        let mut sim = Simulator::new(&model, State::reference(&model), Integrator::Euler).unwrap();
        for _ in 0..250 {
            sim.step().unwrap();
        }
        let state = sim.state.clone();
        drop(sim);
        return (model, state);
    }
    let fx: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(format!("tests/fixtures/forward/{name}.json"))).unwrap(),
    )
    .unwrap();
    let floats = |k: &str| -> Vec<f64> { fx[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
    let model = mjcf::load(root.join(fx["model"].as_str().unwrap())).unwrap().model;
    let mut s0 = State::reference(&model);
    s0.qpos = floats("qpos");
    s0.qvel = floats("qvel");
    (model, s0)
}

#[test]
fn steps_after_the_first_allocate_nothing() {
    let mut checked = 0;
    for name in ["box_stack", "humanoid", "convex", "quadruped"] {
        let (model, mut s0) = scene(name);
        let scene = name;
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
            let sim = steps_allocate_nothing(&model, &s0, integ, scene);
            // the steps found contacts
            let ncon = sim.forward_data().map_or(0, |d| d.contacts().len());
            assert!(ncon > 0, "{scene} {integ}: no contacts");
            checked += 1;
        }
    }
    assert_eq!(checked, 16);
}

/// The unconstrained route (no rows: ABA, or M's factor for the implicit integrators) with every
/// passive and joint-level actuator force of `tests/fixtures/models/gravcomp.xml`: gravity
/// compensation, some of it through the actuators, and clamped actuator forces.
#[test]
fn unconstrained_steps_with_gravcomp_allocate_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let model = mjcf::load(root.join("tests/fixtures/models/gravcomp.xml"))
        .unwrap()
        .model;
    let mut s0 = State::reference(&model);
    s0.ctrl
        .iter_mut()
        .enumerate()
        .for_each(|(k, c)| *c = 3.0 * (k as f64 + 1.0).sin());
    for integ in [
        Integrator::Euler,
        Integrator::Implicit,
        Integrator::ImplicitFast,
        Integrator::Rk4,
    ] {
        steps_allocate_nothing(&model, &s0, integ, "gravcomp");
    }
}

/// 20 steps of `model` from `s0` with `integ`, then 100 more that must allocate nothing and
/// move the state; returns the simulator.
fn steps_allocate_nothing<'m>(
    model: &'m mbd::model::Model,
    s0: &State,
    integ: Integrator,
    label: &str,
) -> Simulator<'m> {
    let mut sim = Simulator::new(model, s0.clone(), integ).unwrap();
    for _ in 0..20 {
        sim.step().unwrap();
    }
    let n = count(|| {
        for _ in 0..100 {
            sim.step().unwrap();
        }
    });
    assert_eq!(n, 0, "{label} {integ}: {n} allocations in 100 steps");
    assert!(sim.state.qpos != s0.qpos, "{label} {integ}: no motion");
    sim
}
