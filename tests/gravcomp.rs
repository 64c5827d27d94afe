//! Gravity compensation (MuJoCo's `mj_gravcomp`, `<body gravcomp>`) and the joint-level end of
//! `mj_fwdActuation` (`<joint actuatorgravcomp>`, `<joint actuatorfrcrange>`):
//! [`mbd::dynamics::gravcomp_into`], [`mbd::dynamics::joint_actuator_forces`].
//!
//! - against MuJoCo 4.0.0 (`tests/fixtures/gravcomp.json`, made by
//!   `tests/fixtures/make_gravcomp_fixtures.py` on `tests/fixtures/models/gravcomp.xml`):
//!   `qfrc_gravcomp`, `qfrc_passive`, `qfrc_actuator` and `qacc` at ten states, and 1000-step
//!   rollouts with every integrator;
//! - against RNEA on random trees: with `gravcomp = 1` on every body the compensation is the
//!   gravity term of the bias force, `rnea(q, 0, 0)`, and it is linear in the `gravcomp`s;
//! - a fully compensated free body floats, an over-compensated one rises at `(g_c - 1) |g|`;
//! - the reader's rules for `actuatorfrcrange` and its errors.

mod common;

#[path = "common/rollout.rs"]
mod rollout;
use common::*;
use mbd::dynamics::{gravcomp_into, rnea, PassiveScratch};
use mbd::mjcf;
use mbd::mujoco::forward::Forward;
use proptest::prelude::*;
use rollout::{check_rollout, rel};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Fixture {
    model: String,
    states: Vec<Sample>,
    rollouts: Vec<Rollout>,
}

#[derive(Deserialize)]
struct Sample {
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    ctrl: Vec<f64>,
    qfrc_gravcomp: Vec<f64>,
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
    let p = root().join("tests/fixtures/gravcomp.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn forces_and_accelerations_agree_with_mujoco() {
    let f = fixture();
    let m = mjcf::load(root().join(&f.model)).unwrap().model;
    let mut worst = [0.0f64; 4];
    for (k, s) in f.states.iter().enumerate() {
        let mut scratch = PassiveScratch::default();
        gravcomp_into(&m, &s.qpos, &mut scratch).unwrap();
        let mut fw = Forward::new(&m).unwrap();
        fw.ctrl.copy_from_slice(&s.ctrl);
        fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
        let d = &fw.d;
        for (w, (what, ours, theirs)) in worst.iter_mut().zip([
            ("qfrc_gravcomp", &scratch.gravcomp, &s.qfrc_gravcomp),
            ("qfrc_passive", &d.qfrc_passive, &s.qfrc_passive),
            ("qfrc_actuator", &d.qfrc_actuator, &s.qfrc_actuator),
            ("qacc", &d.qacc, &s.qacc),
        ]) {
            let e = rel(ours, theirs);
            assert!(
                e < 1e-12,
                "state {k}: {what} off by {e:.2e}\n ours   {ours:?}\n MuJoCo {theirs:?}"
            );
            *w = w.max(e);
        }
    }
    let clamped = f
        .states
        .iter()
        .filter(|s| {
            s.qfrc_actuator[0].abs() == 2.0 || s.qfrc_actuator[1].abs() == 1.5 || s.qfrc_actuator[3].abs() == 30.0
        })
        .count();
    assert!(
        clamped >= 3,
        "the states clamp at some joint's actuatorfrcrange ({clamped} do)"
    );
    println!("worst relative errors (gravcomp, passive, actuator, qacc): {worst:?}");
}

#[test]
fn rollouts_agree_with_mujoco() {
    let f = fixture();
    let m = mjcf::load(root().join(&f.model)).unwrap().model;
    for r in &f.rollouts {
        let law = |t: f64, j: usize| 2.0 * (1.3 * t + j as f64).sin();
        check_rollout(&m, &r.integrator, r.steps, r.every, &r.qpos, law, 1e-9);
    }
}

/// A fully compensated free body floats and an over-compensated one rises at `(g_c - 1)|g|`
/// (the fixture model's floater and riser, at rest).
#[test]
fn a_compensated_free_body_floats() {
    let f = fixture();
    let m = mjcf::load(root().join(&f.model)).unwrap().model;
    let mut fw = Forward::new(&m).unwrap();
    let q: Vec<f64> = m.qpos0.iter().copied().collect();
    fw.forward(&q, &vec![0.0; m.nv], &vec![0.0; m.nv]).unwrap();
    let (floater, riser) = (m.nv - 12, m.nv - 6);
    for k in 0..6 {
        assert!(
            fw.d.qacc[floater + k].abs() < 1e-12,
            "floater dof {k}: {}",
            fw.d.qacc[floater + k]
        );
    }
    assert!(
        (fw.d.qacc[riser + 2] - 0.5 * 9.81).abs() < 1e-12,
        "riser rises at {}",
        fw.d.qacc[riser + 2]
    );
}

proptest! {
    #![proptest_config(config(64))]

    /// With `gravcomp = 1` on every body, `qfrc_gravcomp` is RNEA's gravity term `c(q, 0)`; it
    /// is linear in the `gravcomp`s (each body's share adds); and without gravity it is zero.
    #[test]
    fn gravcomp_is_the_gravity_term_of_rnea(spec in model_spec(), st in state_spec(), w in prop::collection::vec(-2.0f64..2.0, 16)) {
        let mut model = random_model(&spec);
        let s = random_state(&model, &st);
        let zeros = vec![0.0; model.nv];
        let g_rnea = rnea(&model, &s.q, &zeros, &zeros, None).unwrap();
        let scale = g_rnea.iter().fold(1e-9f64, |a, x| a.max(x.abs()));
        let mut scratch = PassiveScratch::default();
        model.body_gravcomp = vec![1.0; model.nb + 1];
        model.body_gravcomp[0] = 0.0;
        gravcomp_into(&model, s.q.as_slice(), &mut scratch).unwrap();
        for k in 0..model.nv {
            prop_assert!((scratch.gravcomp[k] - g_rnea[k]).abs() <= 1e-10 * scale,
                "dof {k}: gravcomp {} vs rnea {}", scratch.gravcomp[k], g_rnea[k]);
        }
        // linear: weights w_i give sum_i w_i (the share of body i alone)
        let mut sum = vec![0.0; model.nv];
        for i in 1..=model.nb {
            let mut one = model.clone();
            one.body_gravcomp = vec![0.0; model.nb + 1];
            one.body_gravcomp[i] = w[i % w.len()];
            gravcomp_into(&one, s.q.as_slice(), &mut scratch).unwrap();
            for k in 0..model.nv {
                sum[k] += scratch.gravcomp[k];
            }
        }
        for (i, g) in model.body_gravcomp.iter_mut().enumerate().skip(1) {
            *g = w[i % w.len()];
        }
        gravcomp_into(&model, s.q.as_slice(), &mut scratch).unwrap();
        for k in 0..model.nv {
            prop_assert!((scratch.gravcomp[k] - sum[k]).abs() <= 1e-10 * 2.0 * scale, "dof {k}: not linear");
        }
        model.opt.gravity = mbd::spatial::Vec3::zeros();
        gravcomp_into(&model, s.q.as_slice(), &mut scratch).unwrap();
        prop_assert!(scratch.gravcomp.iter().all(|&x| x == 0.0));
    }
}

/// `actuatorfrcrange`: read with MuJoCo's autolimits rule, none on ball and free joints, and
/// its errors.
#[test]
fn actuatorfrcrange_is_read_as_mujoco_reads_it() {
    let xml = |compiler: &str, joint: &str| {
        format!(
            r#"<mujoco><compiler {compiler}/><worldbody><body gravcomp="0.5"><joint {joint}/>
               <geom type="sphere" size=".1"/></body></worldbody></mujoco>"#
        )
    };
    let load = |c: &str, j: &str| mjcf::load_str(&xml(c, j));
    let m = load("", r#"type="hinge" actuatorfrcrange="-1 2""#).unwrap().model;
    assert_eq!(m.joints[1].actfrcrange, Some([-1.0, 2.0]));
    assert_eq!(m.body_gravcomp[1], 0.5);
    let m = load("", r#"type="hinge" actuatorfrcrange="-1 2" actuatorfrclimited="false""#)
        .unwrap()
        .model;
    assert_eq!(m.joints[1].actfrcrange, None);
    let m = load("", r#"type="ball" actuatorfrcrange="-1 2" actuatorgravcomp="true""#)
        .unwrap()
        .model;
    assert_eq!(
        m.joints[1].actfrcrange, None,
        "MuJoCo gives ball joints no actuator force range"
    );
    assert!(m.joints[1].actgravcomp);
    for (c, j, what) in [
        (
            "",
            r#"type="hinge" actuatorfrcrange="2 1""#,
            "actuatorfrcrange[0] must be smaller",
        ),
        (
            r#"autolimits="false""#,
            r#"type="slide" actuatorfrcrange="-1 1""#,
            "actuatorfrclimited",
        ),
        ("", r#"type="hinge" actuatorfrclimited="maybe""#, "actuatorfrclimited"),
    ] {
        let Err(e) = load(c, j) else { panic!("{j} was accepted") };
        assert!(e.to_string().contains(what), "{j}: {e}");
    }
    // a short or non-finite configuration is an error of gravcomp_into
    let mut scratch = PassiveScratch::default();
    assert!(gravcomp_into(&m, &[], &mut scratch).is_err());
    assert!(gravcomp_into(&m, &[f64::NAN], &mut scratch).is_err());
    // a non-finite gravcomp is refused by the model's checks
    let mut m = load("", r#"type="hinge""#).unwrap().model;
    m.body_gravcomp[1] = f64::NAN;
    assert!(m.validate().is_err());
}
