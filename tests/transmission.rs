//! MuJoCo's `mj_transmission` (chapter "Integrators and the simulation loop", section on actuators
//! and transmissions): `actuator_length` and `actuator_moment` of every transmission kind on
//! `tests/fixtures/models/transmissions.xml` (hinge, slide, ball and free joints, the ball and
//! free joints in the parent frame, a fixed and a spatial tendon, a slider-crank, a site, and
//! sites with a reference site: a translational gear, a rotational gear, both, the reference on
//! another branch, on the same chain and on the world body) at twelve seeded states, against
//! MuJoCo 4.0.0 (`tests/fixtures/make_transmission_fixtures.py`), to 1e-12 relative to the size of
//! each actuator's row (measured 8.9e-16); the moment rows of the transmissions whose moment is
//! the length's derivative (hinge and slide joints, tendons, the slider-crank) against central
//! differences of the length along every dof (an independent route, 1e-6); and the kept-storage
//! route (`transmission_with`, and whole simulator steps) allocating nothing. The counting
//! allocator counts per thread, so the tests may run in parallel.

use mbd::dynamics::{tendon_kinematics, tendon_kinematics_into, transmission, transmission_with};
use mbd::kinematics::WorldAxes;
use mbd::mjcf;
use mbd::model::Integrator;
use mbd::mujoco::integrator::{Simulator, State};
use nalgebra::DMatrix;
use serde::Deserialize;
use std::path::PathBuf;

#[path = "common/counting.rs"]
mod counting;

#[derive(Deserialize)]
struct Sample {
    qpos: Vec<f64>,
    actuator_length: Vec<f64>,
    actuator_moment: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct Fixture {
    mujoco: String,
    model: String,
    states: Vec<Sample>,
}

fn fixture() -> Fixture {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(root.join("tests/fixtures/transmission.json")).unwrap()).unwrap()
}

fn lengths_and_moments(m: &mbd::model::Model, q: &[f64]) -> (Vec<f64>, DMatrix<f64>) {
    let ten = tendon_kinematics(m, q).unwrap();
    let (mut length, mut moment) = (vec![0.0; m.actuators.len()], DMatrix::zeros(m.actuators.len(), m.nv));
    transmission(m, q, &ten, &mut length, &mut moment).unwrap();
    (length, moment)
}

#[test]
fn every_transmission_agrees_with_mujoco() {
    let fx = fixture();
    assert_eq!(fx.mujoco, "4.0.0");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let m = mjcf::load(root.join(&fx.model)).unwrap().model;
    let mut worst = 0.0f64;
    for (k, s) in fx.states.iter().enumerate() {
        let (length, moment) = lengths_and_moments(&m, &s.qpos);
        for (i, a) in m.actuators.iter().enumerate() {
            let row = &s.actuator_moment[i];
            let scale = row
                .iter()
                .fold(s.actuator_length[i].abs(), |x, y| x.max(y.abs()))
                .max(1.0);
            let mut err = (length[i] - s.actuator_length[i]).abs();
            for (c, want) in row.iter().enumerate() {
                err = err.max((moment[(i, c)] - want).abs());
            }
            let rel = err / scale;
            worst = worst.max(rel);
            assert!(rel < 1e-12, "state {k}, actuator '{}': off by {rel:.2e}", a.name);
        }
    }
    println!("worst relative difference from MuJoCo: {worst:.2e}");
}

#[test]
fn moments_are_the_derivatives_of_the_lengths() {
    let fx = fixture();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let m = mjcf::load(root.join(&fx.model)).unwrap().model;
    let h = 1e-6;
    for s in &fx.states {
        let q = nalgebra::DVector::from_vec(s.qpos.clone());
        let (_, moment) = lengths_and_moments(&m, q.as_slice());
        for dof in 0..m.nv {
            let mut e = vec![0.0; m.nv];
            e[dof] = 1.0;
            let (mut qp, mut qm) = (q.clone(), q.clone());
            m.integrate(qp.as_mut_slice(), &e, h).unwrap();
            m.integrate(qm.as_mut_slice(), &e, -h).unwrap();
            let (lp, _) = lengths_and_moments(&m, qp.as_slice());
            let (lm, _) = lengths_and_moments(&m, qm.as_slice());
            for (i, a) in m.actuators.iter().enumerate() {
                // only where the moment is the length's derivative: MuJoCo gives a free joint and
                // a site without a reference a zero length with a nonzero moment, a ball joint or a
                // rotational gear the rotation vector, whose derivative is the angular velocity
                // (what the moment projects) only at the identity, and a reference site a moment
                // that leaves out the turning of the reference frame
                if !["hinge", "slide", "fixed", "spatial", "crank"].contains(&a.name.as_str()) {
                    continue;
                }
                let fd = (lp[i] - lm[i]) / (2.0 * h);
                assert!(
                    (fd - moment[(i, dof)]).abs() < 1e-6,
                    "actuator '{}', dof {dof}: d length / dq {fd} against the moment {}",
                    a.name,
                    moment[(i, dof)]
                );
            }
        }
    }
}

/// The kept-storage route allocates nothing once sized, gives the allocating route's numbers
/// bit for bit, and a step of the simulator with every transmission allocates nothing.
#[test]
fn a_second_call_allocates_nothing() {
    let fx = fixture();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let m = mjcf::load(root.join(&fx.model)).unwrap().model;
    let mut ten = tendon_kinematics(&m, &fx.states[0].qpos).unwrap();
    let mut axes = WorldAxes::default();
    let (mut length, mut moment) = (vec![0.0; m.actuators.len()], DMatrix::zeros(m.actuators.len(), m.nv));
    for s in &fx.states {
        transmission_with(&m, &s.qpos, &[], &ten, &mut axes, &mut length, &mut moment).unwrap();
        let n = counting::count(|| {
            tendon_kinematics_into(&m, &s.qpos, &[], &mut ten).unwrap();
            transmission_with(&m, &s.qpos, &[], &ten, &mut axes, &mut length, &mut moment).unwrap();
        });
        assert_eq!(n, 0, "transmission_with allocated {n} times");
        let (l, mo) = lengths_and_moments(&m, &s.qpos);
        assert_eq!(
            (l, mo),
            (length.clone(), moment.clone()),
            "the allocating route's numbers"
        );
    }
    let mut s0 = State::reference(&m);
    s0.ctrl
        .iter_mut()
        .enumerate()
        .for_each(|(k, c)| *c = 0.2 * (k as f64).sin());
    for integ in [
        Integrator::Euler,
        Integrator::Implicit,
        Integrator::ImplicitFast,
        Integrator::Rk4,
    ] {
        let mut sim = Simulator::new(&m, s0.clone(), integ).unwrap();
        for _ in 0..5 {
            sim.step().unwrap();
        }
        let n = counting::count(|| {
            for _ in 0..50 {
                sim.step().unwrap();
            }
        });
        assert_eq!(n, 0, "{integ}: {n} allocations in 50 steps");
    }
}

/// Wrong sizes are an error, not a panic (the site transmissions index `q` body by body).
#[test]
fn wrong_sizes_are_errors() {
    let fx = fixture();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let m = mjcf::load(root.join(&fx.model)).unwrap().model;
    let q = &fx.states[0].qpos;
    let ten = tendon_kinematics(&m, q).unwrap();
    let (nu, nv) = (m.actuators.len(), m.nv);
    let short_q = &q[..q.len() - 1];
    for (q, len, rows) in [(short_q, nu, nu), (&q[..], nu - 1, nu), (&q[..], nu, nu + 1)] {
        let (mut length, mut moment) = (vec![0.0; len], DMatrix::zeros(rows, nv));
        let r = transmission(&m, q, &ten, &mut length, &mut moment);
        assert!(matches!(r, Err(mbd::Error::BadLength { .. })), "{r:?}");
    }
}
