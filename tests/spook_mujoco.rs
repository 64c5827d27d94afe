//! SPOOK beside MuJoCo's soft constraints: the pendulum column of the chapter's comparison
//! figure against MuJoCo 4.0.0's own rollout, the correspondence of SPOOK's `(epsilon, tau)`
//! with MuJoCo's `solref`/`solimp` on one constraint ([`from_solref`]), and the conversion of
//! MuJoCo's weld (anchor and relpose) against MuJoCo's definition of its residual.
//!
//! Fixture: `tests/fixtures/spook/mujoco.json`, made by `tests/fixtures/make_spook_fixtures.py`
//! (MuJoCo's Euler step, Newton converged to 1e-12, as `mbd`'s solver is run here).
#![cfg(feature = "plot")]

use mbd::figures::spook::{mujoco_rollout, solref_decay, MUJOCO_DECAY, MUJOCO_PENDULUM};
use mbd::spook::from_solref;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Fixture {
    scenes: BTreeMap<String, Scene>,
}

#[derive(Deserialize)]
struct Scene {
    key: Option<String>,
    qpos: Vec<Vec<f64>>,
}

fn fixture() -> Fixture {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spook/mujoco.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn max_diff(a: &[Vec<f64>], b: &[Vec<f64>]) -> (f64, usize) {
    let mut worst = (0.0, 0);
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let d = x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        if d > worst.0 {
            worst = (d, k);
        }
    }
    worst
}

/// Largest `qpos` difference between mbd's MuJoCo pipeline and MuJoCo 4.0.0 over the whole
/// rollout. Measured: 8.4e-15 (pendulum, 180 steps), 0 (one constraint, 500 steps); the
/// tolerance leaves three orders of magnitude for rounding, while a different rule (the `Jdot v`
/// term of the connect row, refsafe, the impedance) shows at 1e-4 or more.
const TOL_ROLLOUT: f64 = 1e-11;

// ANCHOR: mujoco_column
#[test]
fn the_mujoco_column_of_the_pendulum_comparison_is_mujocos() {
    let f = fixture();
    for (name, xml) in [("spook_pendulum", MUJOCO_PENDULUM), ("spook_decay", MUJOCO_DECAY)] {
        let s = &f.scenes[name];
        let ours = mujoco_rollout(xml, s.key.as_deref(), None, s.qpos.len() - 1).unwrap();
        let (err, step) = max_diff(&ours, &s.qpos);
        println!(
            "{name}: {} steps, largest |qpos - MuJoCo| {err:.2e} (step {step})",
            s.qpos.len() - 1
        );
        assert!(
            err < TOL_ROLLOUT,
            "{name}: qpos off MuJoCo's by {err:.2e} at step {step}"
        );
    }
    // the pendulum really swings: a comparison of two resting states would prove nothing
    let q = &f.scenes["spook_pendulum"].qpos;
    assert!(q.last().unwrap()[2] < -0.5, "the bob did not fall");
}
// ANCHOR_END: mujoco_column

// ANCHOR: solref_test
#[test]
fn spook_with_epsilon_and_tau_from_solref_returns_like_mujoco() {
    // One connect row, 5 cm off, no gravity: MuJoCo with solref (0.02, 1) and constant impedance
    // d = 0.9, SPOOK with (epsilon, tau) = from_solref. Both are first-order discretizations of
    // r'' = -r/tc^2 - 2 r'/tc, so they differ by c h/tc (measured c = 0.26, halving with h).
    // Tolerance: 0.5 h/tc of r0, and the difference must halve with h (ratio 1.8 to 2.2).
    let tc = 0.02;
    let worst = |h: f64| {
        let d = solref_decay(h, 0.1).unwrap();
        d.iter().map(|x| (x.2 - x.1).abs()).fold(0.0, f64::max) / 0.05
    };
    let (coarse, fine) = (worst(2e-4), worst(1e-4));
    println!("|SPOOK - MuJoCo| / r0: {coarse:.3e} at h = tc/100, {fine:.3e} at h = tc/200");
    assert!(coarse < 0.5 * 2e-4 / tc, "h = tc/100: {coarse:.2e}");
    assert!(
        (1.8..2.2).contains(&(coarse / fine)),
        "not first order: ratio {}",
        coarse / fine
    );
    // the closed form at d = dmax: epsilon = A tc^2 zeta^2, tau = 2 tc zeta^2
    let (eps, tau) = from_solref([tc, 1.0], 0.9, 0.9, 1.0).unwrap();
    assert!((eps - tc * tc).abs() < 1e-18 && (tau - 2.0 * tc).abs() < 1e-15);
    let (eps, tau) = from_solref([0.05, 0.5], 0.95, 0.95, 4.0).unwrap();
    assert!((eps - 4.0 * 0.05f64.powi(2) * 0.25).abs() < 1e-15 && (tau - 2.0 * 0.05 * 0.25).abs() < 1e-15);
    // a lower impedance than dmax softens MuJoCo's row (d^2 K): epsilon grows by (dmax/d)^2
    let (eps_low, _) = from_solref([tc, 1.0], 0.45, 0.9, 1.0).unwrap();
    assert!((eps_low / (tc * tc) - 4.0).abs() < 1e-12);
    assert!(from_solref([0.0, 1.0], 0.9, 0.9, 1.0).is_err());
    assert!(from_solref([0.02, 1.0], 1.0, 0.9, 1.0).is_err());
    assert!(from_solref([0.02, 1.0], 0.9, 0.9, f64::NAN).is_err());
}
// ANCHOR_END: solref_test

#[test]
fn a_wrong_correspondence_is_caught() {
    // The comparison above can fail: SPOOK with tau = tc (a plausible guess, half the right
    // value) or epsilon doubled misses MuJoCo's return by far more than the tolerance.
    use mbd::mjcf;
    use mbd::mujoco::integrator::State;
    use mbd::spook::{SpookSolver, SpookSystem, StepSettings, Stepper};
    let (h, tc) = (2e-4, 0.02);
    let mj = mujoco_rollout(MUJOCO_DECAY, Some("off"), Some(h), 500).unwrap();
    let m = mjcf::load_str(MUJOCO_DECAY).unwrap().model;
    let q0 = State::keyframe(&m, "off").unwrap().qpos;
    for (eps, tau) in [(tc * tc, tc), (2.0 * tc * tc, 2.0 * tc)] {
        let mut sys = SpookSystem::from_model(&m, &q0, &[0.0; 6], eps, tau).unwrap();
        let settings = StepSettings {
            solver: SpookSolver::Direct,
            ..Default::default()
        };
        let mut st = Stepper::new(&sys, h, settings).unwrap();
        let mut worst: f64 = 0.0;
        for q in &mj[1..] {
            st.step(&mut sys).unwrap();
            worst = worst.max((sys.bodies[0].x.norm() - q[0].abs()).abs() / 0.05);
        }
        assert!(
            worst > 10.0 * 0.5 * h / tc,
            "(eps {eps}, tau {tau}) too close: {worst:.2e}"
        );
    }
}

// ANCHOR: weld_test
#[test]
fn welds_with_anchor_and_relpose_follow_mujocos_definition() {
    // MuJoCo's weld: the point `relpose_pos` of body1 meets the point `anchor` of body2, and
    // body2's axes are body1's turned by `relpose_quat`; its residual rows are
    // `p1 - p2` (efc_pos[0..3]) and `vec(q2^* q1 r0)`. SPOOK's lock rows are `d = p_b - p_a` and
    // three axis products: at random states its translation rows must be `-(p1 - p2)`, and its
    // orientation rows must vanish where MuJoCo's do.
    use mbd::mjcf;
    use mbd::mujoco::forward::forward;
    use mbd::spatial::{quat_from_axis_angle, quat_mul, Vec3};
    use mbd::spook::{constraint_rows, SpookSystem};
    let xml = r#"<mujoco model="weld_relpose">
      <option gravity="0 0 0"/>
      <worldbody>
        <body name="a" pos="0 0 1"><freejoint/>
          <inertial pos="0.1 -0.05 0.02" mass="1.5" diaginertia="0.01 0.02 0.03"/></body>
        <body name="b" pos="0.4 0.2 1.1" quat="0.9 0.1 0.3 0.2"><freejoint/>
          <inertial pos="-0.03 0.04 0" mass="0.7" diaginertia="0.004 0.005 0.006"/></body>
      </worldbody>
      <equality>
        <weld body1="a" body2="b" anchor="0.12 -0.2 0.05" relpose="0.3 0.25 -0.1 0.8 0.2 -0.4 0.3"/>
      </equality>
    </mujoco>"#;
    let m = mjcf::load_str(xml).unwrap().model;
    let r0 = {
        let n = (0.8f64 * 0.8 + 0.2 * 0.2 + 0.4 * 0.4 + 0.3 * 0.3).sqrt();
        [0.8 / n, 0.2 / n, -0.4 / n, 0.3 / n]
    };
    let mut worst = [0.0f64; 3];
    for k in 0..8 {
        let t = k as f64;
        let qa = quat_from_axis_angle(&Vec3::new(0.3 + t, -0.5, 0.8).normalize(), 0.4 * t - 1.0);
        let mut qpos = vec![0.1 * t, -0.2, 1.0 + 0.05 * t, qa[0], qa[1], qa[2], qa[3]];
        // body b: a random pose for the translation check, or b = a (x) r0 for the rotation one
        let qb = if k % 2 == 0 {
            quat_from_axis_angle(&Vec3::new(1.0, t, -0.3).normalize(), 0.7 * t)
        } else {
            quat_mul(&qa, &r0)
        };
        qpos.extend([0.5 - 0.1 * t, 0.3, 0.9, qb[0], qb[1], qb[2], qb[3]]);
        let fd = forward(&m, &qpos, &[0.0; 12], &[0.0; 12]).unwrap();
        let sys = SpookSystem::from_model(&m, &qpos, &[0.0; 12], 1e-8, 0.01).unwrap();
        let (mut phi, mut dq) = (vec![], vec![]);
        constraint_rows(&sys.constraints[0], &sys.bodies, &mut phi, &mut dq);
        let trans = (0..3).map(|i| (phi[i] + fd.efc.pos[i]).abs()).fold(0.0, f64::max);
        worst[0] = worst[0].max(trans);
        let mj_rot = fd.efc.pos[3..6].iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let spook_rot = phi[3..6].iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if k % 2 == 1 {
            worst[1] = worst[1].max(mj_rot);
            worst[2] = worst[2].max(spook_rot);
        } else {
            assert!(
                spook_rot > 1e-2 && mj_rot > 1e-2,
                "state {k} is not rotated off the weld"
            );
        }
        assert!(
            fd.efc.pos[..3].iter().any(|x| x.abs() > 1e-2),
            "state {k} is on the weld"
        );
    }
    println!(
        "weld: |phi_trans + (p1 - p2)| {:.1e}; on the rotation set MuJoCo {:.1e}, SPOOK {:.1e}",
        worst[0], worst[1], worst[2]
    );
    assert!(worst.iter().all(|w| *w < 1e-12), "{worst:?}");
}
// ANCHOR_END: weld_test

// ANCHOR: equivalence_test
#[test]
fn spooks_step_is_mujocos_euler_step_with_the_equivalent_parameters() {
    // The decay scene, under gravity, with solref and solimp from `mujoco_equivalent(h,
    // epsilon, tau, 1)`: the connect sits at the free body's centre of mass, so its Jacobian is
    // constant (`Jdot v` = 0) and A-hat = A = 1/m exactly. MuJoCo's Euler step then solves
    // SPOOK's Schur row divided by h: the two trajectories agree to rounding (measured 1e-17 m
    // over 500 steps). Gravity makes the impedance d count (MuJoCo's force carries -d a_0);
    // without a load d would cancel between R and K when A-hat = A.
    use mbd::mjcf;
    use mbd::mujoco::integrator::{Simulator, State};
    use mbd::spook::{mujoco_equivalent, SpookSolver, SpookSystem, StepSettings, Stepper};
    let h = 2e-4;
    for (eps, tau) in [(4e-4, 0.04), (1e-6, 2.0 * h), (1e-5, 0.0)] {
        let (solref, d) = mujoco_equivalent(h, eps, tau, 1.0).unwrap();
        let xml = MUJOCO_DECAY.replace(
            r#"solref="0.02 1" solimp="0.9 0.9 0.001 0.5 2""#,
            &format!(
                r#"solref="{:?} {:?}" solimp="{d:?} {d:?} 0.001 0.5 2""#,
                solref[0], solref[1]
            ),
        );
        assert_ne!(xml, MUJOCO_DECAY);
        let mut m = mjcf::load_str(&xml).unwrap().model;
        m.opt.tolerance = 1e-14;
        m.opt.gravity = mbd::spatial::Vec3::new(0.0, 0.0, -10.0);
        let state = State::keyframe(&m, "off").unwrap();
        let mut sys = SpookSystem::from_model(&m, &state.qpos, &[0.0; 6], eps, tau).unwrap();
        let settings = StepSettings {
            solver: SpookSolver::Direct,
            ..Default::default()
        };
        let mut st = Stepper::new(&sys, h, settings).unwrap();
        let mut sim = Simulator::new(&m, state, mbd::model::Integrator::Euler).unwrap();
        let (mut worst, mut moved): (f64, f64) = (0.0, 0.0);
        for _ in 0..500 {
            st.step(&mut sys).unwrap();
            sim.step().unwrap();
            let x = sys.bodies[0].x;
            worst = worst.max((0..3).map(|i| (x[i] - sim.state.qpos[i]).abs()).fold(0.0, f64::max));
            moved = moved.max((x[0] - 0.05).abs());
        }
        println!("epsilon {eps:e}, tau {tau}: solref {solref:?}, d {d:.4}: |SPOOK - MuJoCo| {worst:.1e} m");
        assert!(moved > 1e-3, "the body did not move");
        assert!(
            worst < 1e-13,
            "epsilon {eps}, tau {tau}: SPOOK and MuJoCo differ by {worst:.2e} m"
        );
    }
    assert!(mujoco_equivalent(h, 0.0, 0.1, 1.0).is_err());
    assert!(mujoco_equivalent(-h, 1e-3, 0.1, 1.0).is_err());
    // beyond MuJoCo's impedance range (it would clamp d to 1e-4): refused
    assert!(mujoco_equivalent(h, 1e-3, 0.0, 1.0).is_err());
}
// ANCHOR_END: equivalence_test
