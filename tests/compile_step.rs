//! The model constants MuJoCo's compiler computes by running the model
//! ([`mbd::mujoco::compile`], run by [`mbd::mujoco::load`]) and the MJCF reader's part of them,
//! against MuJoCo 4.0.0 on `tests/fixtures/models/compile_step.xml` (fixture
//! `tests/fixtures/compile_step.json`, made by `tests/fixtures/make_compile_fixtures.py`):
//! - tendon rest lengths not given: at `qpos_spring`, where the joints sit at their `springref`
//!   (not at `qpos0`), a wrapping tendon's with its wrap;
//! - `dampratio`: a position servo's damping `zeta 2 sqrt(kp m)` with `m = 1 / (J M^-1 J^T)` at
//!   `qpos0`; MuJoCo reads a position servo's positive `biasprm[2]` as such a ratio;
//! - `inheritrange`: a servo's control (or activation) range from its joint's or tendon's range;
//! - `springdamper`: a joint's stiffness and damping from a time constant and a damping ratio;
//! - the forces and accelerations at seeded states, and 1000-step rollouts;
//! - what `mbd::mjcf::load` alone leaves unresolved is refused, with a message naming the cure.

#[path = "common/rollout.rs"]
mod rollout;
use mbd::error::Error;
use mbd::mjcf;
use mbd::model::Integrator;
use mbd::mujoco::forward::Forward;
use mbd::mujoco::integrator::{Simulator, State};
use rollout::{check_rollout, rel};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Fixture {
    model: String,
    tendon_lengthspring: Vec<[f64; 2]>,
    jnt_stiffness: Vec<f64>,
    dof_damping: Vec<f64>,
    actuator_biasprm2: Vec<f64>,
    actuator_ctrlrange: Vec<[f64; 2]>,
    actuator_ctrllimited: Vec<bool>,
    actuator_actrange: Vec<[f64; 2]>,
    actuator_actlimited: Vec<bool>,
    states: Vec<Sample>,
    rollouts: Vec<Rollout>,
}

#[derive(Deserialize)]
struct Sample {
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    act: Vec<f64>,
    ctrl: Vec<f64>,
    qfrc_passive: Vec<f64>,
    qfrc_actuator: Vec<f64>,
    qacc: Vec<f64>,
}

#[derive(Deserialize)]
struct Rollout {
    integrator: String,
    steps: usize,
    every: usize,
    qpos: Vec<Vec<f64>>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> Fixture {
    serde_json::from_str(&std::fs::read_to_string(root().join("tests/fixtures/compile_step.json")).unwrap()).unwrap()
}

#[test]
fn compiled_constants_agree_with_mujoco() {
    let f = fixture();
    let m = mbd::mujoco::load(root().join(&f.model)).unwrap().model;
    for (k, (t, want)) in m.tendons.iter().zip(&f.tendon_lengthspring).enumerate() {
        let e = rel(&t.springlength, want);
        assert!(
            e < 1e-14,
            "tendon {k} ('{}'): springlength {:?}, MuJoCo {want:?}",
            t.name,
            t.springlength
        );
    }
    // springdamper: MuJoCo's joints are ours without the world's fixed joint
    let stiffness: Vec<f64> = (1..=m.nb).map(|i| m.joints[i].stiffness).collect();
    let damping: Vec<f64> = (0..m.nv).map(|d| m.joints[m.dof_body[d]].damping).collect();
    assert!(
        rel(&stiffness, &f.jnt_stiffness) < 1e-13,
        "stiffness {stiffness:?} vs {:?}",
        f.jnt_stiffness
    );
    assert!(
        rel(&damping, &f.dof_damping) < 1e-13,
        "damping {damping:?} vs {:?}",
        f.dof_damping
    );
    assert!(m.joints.iter().all(|j| j.springdamper.is_none()), "compiled");
    for (k, a) in m.actuators.iter().enumerate() {
        let label = format!("actuator {k} ('{}')", a.name);
        let b2 = f.actuator_biasprm2[k];
        assert!(
            (a.biasprm[2] - b2).abs() <= 1e-13 * b2.abs().max(1.0),
            "{label}: biasprm[2] {} vs {b2}",
            a.biasprm[2]
        );
        assert_eq!(a.ctrllimited, f.actuator_ctrllimited[k], "{label}: ctrllimited");
        assert_eq!(a.actlimited, f.actuator_actlimited[k], "{label}: actlimited");
        assert!(
            rel(&a.ctrlrange, &f.actuator_ctrlrange[k]) < 1e-15,
            "{label}: ctrlrange {:?}",
            a.ctrlrange
        );
        assert!(
            rel(&a.actrange, &f.actuator_actrange[k]) < 1e-15,
            "{label}: actrange {:?}",
            a.actrange
        );
    }
}

/// The damping of a `dampratio` servo makes the oscillator `m x'' = -kp x - kv x'` of the
/// inertia it sees at `qpos0` critically damped for ratio 1: `kv^2 = 4 kp m`, with `m` from a
/// dense `M` (CRBA) and the moment arm of a unit gear, independently of the library's
/// factorization.
#[test]
fn a_unit_dampratio_is_critical_damping() {
    let f = fixture();
    let m = mbd::mujoco::load(root().join(&f.model)).unwrap().model;
    let p1 = m.actuators.iter().position(|a| a.name == "p1").unwrap();
    let (kp, kv) = (m.actuators[p1].gainprm[0], -m.actuators[p1].biasprm[2]);
    let q0: Vec<f64> = m.qpos0.iter().copied().collect();
    let h = mbd::dynamics::crba(&m, &q0).unwrap();
    // p1 drives hinge b (dof 1) with gear 1: J = e_1, m = 1 / (M^-1)_11
    let minv = h.try_inverse().unwrap();
    let mass = 1.0 / minv[(1, 1)];
    assert!(
        (kv * kv - 4.0 * kp * mass).abs() < 1e-12 * kv * kv,
        "kv {kv}, kp {kp}, m {mass}"
    );
}

#[test]
fn forces_accelerations_and_rollouts_agree_with_mujoco() {
    let f = fixture();
    let base = mbd::mujoco::load(root().join(&f.model)).unwrap().model;
    for (k, s) in f.states.iter().enumerate() {
        let mut fw = Forward::new(&base).unwrap();
        fw.ctrl.copy_from_slice(&s.ctrl);
        fw.act.copy_from_slice(&s.act);
        fw.forward(&s.qpos, &s.qvel, &vec![0.0; base.nv]).unwrap();
        for (what, ours, theirs) in [
            ("qfrc_passive", &fw.d.qfrc_passive, &s.qfrc_passive),
            ("qfrc_actuator", &fw.d.qfrc_actuator, &s.qfrc_actuator),
            ("qacc", &fw.d.qacc, &s.qacc),
        ] {
            let e = rel(ours, theirs);
            assert!(e < 1e-12, "state {k}: {what} off by {e:.2e}");
        }
    }
    for r in &f.rollouts {
        check_rollout(
            &base,
            &r.integrator,
            r.steps,
            r.every,
            &r.qpos,
            |t, j| (2.0 * t + j as f64).sin(),
            1e-9,
        );
    }
}

/// `mbd::mjcf::load` alone computes what it can (the rest length of a tendon that does not
/// wrap, `inheritrange`) and leaves the rest in MuJoCo's encoding, which the pipeline refuses
/// with [`Error::Unresolved`] naming `mbd::mujoco::load`.
#[test]
fn the_reader_alone_leaves_what_needs_the_dynamics() {
    let f = fixture();
    let m = mjcf::load(root().join(&f.model)).unwrap().model;
    assert!(
        rel(&m.tendons[0].springlength, &f.tendon_lengthspring[0]) < 1e-14,
        "sp at qpos_spring"
    );
    assert_eq!(m.tendons[1].springlength, [-1.0, -1.0], "wr: MuJoCo's 'not given'");
    assert_eq!(m.actuators[0].biasprm[2], 1.0, "p1: the ratio as written");
    assert_eq!(m.joints.iter().filter(|j| j.springdamper.is_some()).count(), 2);
    let e = Forward::new(&m).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        e.contains("springdamper of joint 'c'") && e.contains("mbd::mujoco::load"),
        "{e}"
    );
    let mut m1 = m.clone();
    mbd::mujoco::set_springdamper(&mut m1).unwrap();
    let e = Forward::new(&m1).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("tendon 1 ('wr')") && e.contains("mbd::mujoco::load"), "{e}");
    let e = Simulator::new(&m1, State::reference(&m1), Integrator::Euler)
        .err()
        .map(|e| e.to_string());
    assert!(
        e.is_some_and(|e| e.contains("springlength")),
        "the simulator refuses it too"
    );
    // with the rest lengths set, the dampratio is what is left
    let mut m2 = m1.clone();
    mbd::dynamics::set_spring_lengths(&mut m2).unwrap();
    let mut fw = Forward::new(&m2).unwrap();
    let q: Vec<f64> = m2.qpos0.iter().copied().collect();
    let Err(e) = fw.forward(&q, &vec![0.0; m2.nv], &vec![0.0; m2.nv]) else {
        panic!("an unresolved dampratio was accepted")
    };
    assert!(matches!(e, Error::Unresolved { .. }), "{e}");
    assert!(e.to_string().contains("dampratio of actuator 0 ('p1')"), "{e}");
    mbd::dynamics::set_dampratio(&mut m2).unwrap();
    fw = Forward::new(&m2).unwrap();
    fw.forward(&q, &vec![0.0; m2.nv], &vec![0.0; m2.nv]).unwrap();
}

/// The reader's errors for `dampratio`, `inheritrange` and `springdamper`.
#[test]
fn bad_dampratio_inheritrange_and_springdamper_are_errors() {
    let xml = |joint: &str, act: &str| {
        format!(
            r#"<mujoco><worldbody><body><joint name="j" {joint}/><geom type="sphere" size=".1"/></body></worldbody>
               <actuator>{act}</actuator></mujoco>"#
        )
    };
    for (joint, act, what) in [
        (
            "",
            r#"<position joint="j" kp="1" kv="1" dampratio="1"/>"#,
            "kv and dampratio",
        ),
        (
            "",
            r#"<position joint="j" kp="1" dampratio="-1"/>"#,
            "dampratio cannot be negative",
        ),
        ("", r#"<position joint="j" kp="1" inheritrange="1"/>"#, "has a range"),
        (
            r#"range="0 1""#,
            r#"<position joint="j" kp="1" inheritrange="1" ctrlrange="0 1"/>"#,
            "cannot both",
        ),
        (
            r#"range="0 1""#,
            r#"<position joint="j" kp="1" inheritrange="-1"/>"#,
            "cannot be negative",
        ),
        (
            r#"springdamper="0.1 -1""#,
            r#"<motor joint="j"/>"#,
            "springdamper values must be positive",
        ),
    ] {
        let Err(e) = mjcf::load_str(&xml(joint, act)) else {
            panic!("{act} was accepted")
        };
        assert!(e.to_string().contains(what), "{act}: {e}");
    }
}

/// A position servo with a negative stiffness cannot have a damping ratio (MuJoCo 4.0 writes a
/// NaN damping): an error naming the actuator.
#[test]
fn a_dampratio_with_negative_kp_is_an_error() {
    let xml = r#"<mujoco><worldbody><body><joint name="a" axis="0 1 0"/><geom type="sphere" size=".1" pos=".2 0 0"/></body></worldbody>
        <actuator><general name="neg" joint="a" gainprm="-5" biastype="affine" biasprm="0 5 1"/></actuator></mujoco>"#;
    let Err(e) = mbd::mujoco::load_str(xml) else {
        panic!("a NaN damping was accepted")
    };
    assert!(matches!(e, Error::BadParameter { .. }), "{e}");
    assert!(
        e.to_string().contains("actuator 0 ('neg')") && e.to_string().contains("non-negative stiffness"),
        "{e}"
    );
}

/// The compiled damping does what a damping ratio means: a servo on a lone hinge (no gravity) is
/// a linear oscillator, whose step response overshoots by `exp(-pi zeta / sqrt(1 - zeta^2))`.
/// The simulated peak (implicitfast, h = 1 ms, sampled every 5 ms of a period near 0.6 s) is
/// within 0.005 of it.
#[test]
fn a_dampratio_servo_overshoots_as_a_linear_oscillator() {
    for zeta in [0.25f64, 0.5] {
        let path = mbd::figures::integrators::dampratio_step(zeta, 1.5).unwrap();
        let peak = path.iter().fold(0.0f64, |m, p| m.max(p.1));
        let theory = (-std::f64::consts::PI * zeta / (1.0 - zeta * zeta).sqrt()).exp();
        assert!(
            (peak - 1.0 - theory).abs() < 5e-3,
            "zeta {zeta}: overshoot {} vs {theory}",
            peak - 1.0
        );
    }
    let critical = mbd::figures::integrators::dampratio_step(1.0, 1.5).unwrap();
    assert!(
        critical.iter().all(|p| p.1 <= 1.0 + 1e-6),
        "critical damping does not overshoot"
    );
}
