//! Three MJCF features real models use, against MuJoCo 4.0.0 (`tests/fixtures/reader_features.json`,
//! made by `tests/fixtures/make_reader_features_fixtures.py` on
//! `tests/fixtures/models/reader_features.xml`):
//!
//! - the actuator shortcuts `intvelocity`, `damper` and `cylinder`, and MuJoCo 4.0's rule for
//!   actuator defaults (one default per class; a shortcut's parameters only from a default of
//!   the same shortcut or a `general` one of its gain type): every compiled parameter of the
//!   model's actuators and of twenty-two small models of default classes, bit for bit;
//! - a tendon's `actuatorfrcrange` (`tendon_actfrcrange`): the actuators on one tendon scaled
//!   back into the range together, before each one's `forcerange`;
//! - inactive equality constraints (`eq_active0`, `eq_active`): no rows, switched on and off at
//!   run time.
//!
//! Checks: actuator lengths, velocities, forces and `act_dot`, `qfrc_actuator`, `qacc` and the
//! equality rows at twelve states whose controls saturate (1e-12), 1000-step rollouts with every
//! integrator that switch two constraints half way (1e-9); the reader's errors on models MuJoCo
//! refuses; independent checks: a damper's force is `-kv ctrl velocity`, a cylinder's `area act +
//! bias`, an integrated-velocity servo's `kp (act - length) - kv velocity`, a saturated tendon's
//! total is its bound, and an inactive constraint leaves the dynamics of the model without it.

use mbd::dynamics::{actuation, tendon_kinematics};
use mbd::mjcf;
use mbd::model::{Actuator, BiasType, DynType, GainType, Integrator, Model, Transmission};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::integrator::{Simulator, State};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Fixture {
    model: String,
    actuators: Vec<ActFx>,
    tendon_actfrclimited: Vec<bool>,
    tendon_actfrcrange: Vec<[f64; 2]>,
    eq_active0: Vec<bool>,
    defaults: Vec<DefaultCase>,
    errors: Vec<ErrorCase>,
    states: Vec<Sample>,
    rollouts: Vec<Rollout>,
}

#[derive(Deserialize)]
struct ActFx {
    name: String,
    dyntype: u8,
    gaintype: u8,
    biastype: u8,
    dynprm: Vec<f64>,
    gainprm: Vec<f64>,
    biasprm: Vec<f64>,
    ctrllimited: bool,
    ctrlrange: [f64; 2],
    forcelimited: bool,
    forcerange: [f64; 2],
    actlimited: bool,
    actrange: [f64; 2],
    gear: Vec<f64>,
}

#[derive(Deserialize)]
struct DefaultCase {
    xml: String,
    actuators: Vec<ActFx>,
}

#[derive(Deserialize)]
struct ErrorCase {
    name: String,
    xml: String,
    mujoco: String,
}

#[derive(Deserialize)]
struct Sample {
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    act: Vec<f64>,
    ctrl: Vec<f64>,
    eq_active: Vec<bool>,
    actuator_length: Vec<f64>,
    actuator_velocity: Vec<f64>,
    actuator_force: Vec<f64>,
    act_dot: Vec<f64>,
    qfrc_actuator: Vec<f64>,
    qacc: Vec<f64>,
    nefc: usize,
    efc_type: Vec<u8>,
    efc_id: Vec<usize>,
    efc_pos: Vec<f64>,
}

#[derive(Deserialize)]
struct Rollout {
    integrator: String,
    steps: usize,
    every: usize,
    switch: usize,
    qpos: Vec<Vec<f64>>,
    qvel: Vec<Vec<f64>>,
    act: Vec<Vec<f64>>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> Fixture {
    let p = root().join("tests/fixtures/reader_features.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn model(f: &Fixture) -> Model {
    mjcf::load(root().join(&f.model)).unwrap().model
}

/// `max |a - b| / max(max |b|, 1)`.
fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1.0f64, |s, x| s.max(x.abs()));
    a.iter().zip(b).map(|(x, y)| (x - y).abs() / scale).fold(0.0, f64::max)
}

fn act_index(m: &Model, name: &str) -> usize {
    m.actuators.iter().position(|a| a.name == name).unwrap()
}

/// The index into `act` of actuator `k` (the actuators with dynamics, in order).
fn act_slot(m: &Model, k: usize) -> usize {
    m.actuators[..k].iter().filter(|a| a.dyntype != DynType::None).count()
}

/// One actuator's compiled parameters against MuJoCo's, exactly (the shortcuts compute nothing
/// but `pi / 4 d^2`, which is evaluated in MuJoCo's order).
fn same_actuator(ours: &Actuator, theirs: &ActFx, what: &str) {
    let dyntype = match ours.dyntype {
        DynType::None => 0,
        DynType::Integrator => 1,
        DynType::Filter => 2,
        DynType::FilterExact => 3,
        DynType::Muscle => 4,
    };
    let gaintype = match ours.gaintype {
        GainType::Fixed => 0,
        GainType::Affine => 1,
        GainType::Muscle => 2,
    };
    let biastype = match ours.biastype {
        BiasType::None => 0,
        BiasType::Affine => 1,
        BiasType::Muscle => 2,
    };
    let what = format!("{what}, actuator '{}'", theirs.name);
    assert_eq!(ours.name, theirs.name, "{what}");
    assert_eq!(
        (dyntype, gaintype, biastype),
        (theirs.dyntype, theirs.gaintype, theirs.biastype),
        "{what}: types"
    );
    assert_eq!(ours.dynprm.as_slice(), theirs.dynprm.as_slice(), "{what}: dynprm");
    assert_eq!(ours.gainprm.as_slice(), theirs.gainprm.as_slice(), "{what}: gainprm");
    assert_eq!(ours.biasprm.as_slice(), theirs.biasprm.as_slice(), "{what}: biasprm");
    assert_eq!(
        (ours.ctrllimited, ours.ctrlrange),
        (theirs.ctrllimited, theirs.ctrlrange),
        "{what}: ctrl"
    );
    assert_eq!(
        (ours.forcelimited, ours.forcerange),
        (theirs.forcelimited, theirs.forcerange),
        "{what}: force"
    );
    assert_eq!(
        (ours.actlimited, ours.actrange),
        (theirs.actlimited, theirs.actrange),
        "{what}: act"
    );
    assert_eq!(ours.gear.as_slice(), theirs.gear.as_slice(), "{what}: gear");
}

#[test]
fn the_model_compiles_as_in_mujoco() {
    let f = fixture();
    let m = model(&f);
    assert_eq!(m.actuators.len(), f.actuators.len());
    for (ours, theirs) in m.actuators.iter().zip(&f.actuators) {
        same_actuator(ours, theirs, "reader_features.xml");
    }
    let ranges: Vec<Option<[f64; 2]>> = f
        .tendon_actfrclimited
        .iter()
        .zip(&f.tendon_actfrcrange)
        .map(|(&on, &r)| on.then_some(r))
        .collect();
    let ours: Vec<Option<[f64; 2]>> = m.tendons.iter().map(|t| t.actfrcrange).collect();
    assert_eq!(ours, ranges, "tendon actuatorfrcrange (the strap's is turned off)");
    assert_eq!(m.eq_active0, f.eq_active0);
    let s = State::reference(&m);
    assert_eq!(s.eq_active, f.eq_active0, "a reset starts from eq_active0");
}

#[test]
fn default_classes_follow_mujoco_4() {
    let f = fixture();
    for (i, case) in f.defaults.iter().enumerate() {
        let m = match mjcf::load_str(&case.xml) {
            Ok(l) => l.model,
            Err(e) => panic!("default case {i}: {e}\n{}", case.xml),
        };
        assert_eq!(m.actuators.len(), case.actuators.len(), "default case {i}");
        for (k, (ours, theirs)) in m.actuators.iter().zip(&case.actuators).enumerate() {
            same_actuator(ours, theirs, &format!("default case {i} actuator {k}\n{}", case.xml));
        }
    }
}

#[test]
fn the_reader_refuses_what_mujoco_refuses() {
    let f = fixture();
    let expect: &[(&str, &[&str])] = &[
        (
            "damper_negative_ctrlrange",
            &["<damper>", "ctrlrange", "cannot be negative"],
        ),
        (
            "damper_negative_ctrlrange_in_default",
            &["<damper>", "ctrlrange", "default class 'main'", "cannot be negative"],
        ),
        ("damper_negative_kv", &["<damper>", "kv", "cannot be negative"]),
        ("damper_without_ctrlrange", &["<damper>", "invalid ctrlrange"]),
        ("damper_ctrllimited", &["<damper>", "ctrllimited", "always limited"]),
        ("intvelocity_negative_kv", &["<intvelocity>", "kv cannot be negative"]),
        (
            "intvelocity_timeconst",
            &["<intvelocity>", "'timeconst'", "does not take"],
        ),
        ("intvelocity_kv_and_dampratio", &["<intvelocity>", "kv and dampratio"]),
        (
            "position_negative_timeconst",
            &["<position>", "timeconst cannot be negative"],
        ),
        ("cylinder_kp", &["<cylinder>", "does not take 'kp'"]),
        (
            "cylinder_bias_two_numbers",
            &["<cylinder>", "bias", "expected 3 numbers"],
        ),
        (
            "actrange_without_dynamics",
            &["<position>", "activation range", "dyntype is none"],
        ),
        (
            "tendon_range_without_zero",
            &["<fixed name=\"t\">", "actuatorfrcrange", "contain 0"],
        ),
        (
            "tendon_negative_range_without_zero",
            &["<fixed name=\"t\">", "actuatorfrcrange", "contain 0"],
        ),
        (
            "tendon_range_inverted_limited",
            &["<fixed name=\"t\">", "actuatorfrcrange[0] must be smaller"],
        ),
        (
            "tendon_range_without_autolimits",
            &["<fixed name=\"t\">", "actuatorfrclimited", "autolimits"],
        ),
        (
            "tendon_range_three_numbers",
            &["<fixed name=\"t\">", "actuatorfrcrange", "expected 2 numbers"],
        ),
    ];
    assert_eq!(f.errors.len(), expect.len());
    for (case, (name, words)) in f.errors.iter().zip(expect) {
        assert_eq!(&case.name, name);
        let e = match mjcf::load_str(&case.xml) {
            Ok(_) => panic!("{name}: accepted, MuJoCo says {}", case.mujoco),
            Err(e) => e.to_string(),
        };
        for w in *words {
            assert!(e.contains(w), "{name}: '{w}' not in: {e}\n(MuJoCo: {})", case.mujoco);
        }
        assert!(!e.contains('\n'), "{name}: one line: {e}");
    }
    // and a few MuJoCo takes that the reader refuses, each saying why
    let one = |acts: &str| {
        format!(
            r#"<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body></worldbody>
               <actuator>{acts}</actuator></mujoco>"#
        )
    };
    for (acts, words) in [
        (
            r#"<adhesion body="world" gain="1" ctrlrange="0 1"/>"#,
            &["<adhesion>", "contacts"][..],
        ),
        (
            r#"<position joint="j" dampratio="-1"/>"#,
            &["dampratio", "cannot be negative"][..],
        ),
        (
            r#"<cylinder joint="j" timeconst="0"/>"#,
            &["timeconst", "positive time constant"][..],
        ),
    ] {
        let e = mjcf::load_str(&one(acts)).unwrap_err().to_string();
        for w in words {
            assert!(e.contains(w), "{acts}: '{w}' not in: {e}");
        }
    }
    let adhesion_default = r#"<mujoco><default><adhesion gain="2"/></default></mujoco>"#;
    let e = mjcf::load_str(adhesion_default).unwrap_err().to_string();
    assert!(e.contains("<adhesion>") && e.contains("default"), "{e}");
}

#[test]
fn forces_rows_and_accelerations_agree_with_mujoco() {
    let f = fixture();
    let m = model(&f);
    let mut worst = [0.0f64; 6];
    for (k, s) in f.states.iter().enumerate() {
        let ten = tendon_kinematics(&m, &s.qpos).unwrap();
        let a = actuation(&m, &ten, &s.qpos, &s.qvel, &s.ctrl, &s.act).unwrap();
        let mut fw = Forward::new(&m).unwrap();
        fw.ctrl.copy_from_slice(&s.ctrl);
        fw.act.copy_from_slice(&s.act);
        fw.d.data.eq_active.copy_from_slice(&s.eq_active);
        fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
        let d = &fw.d;
        for (w, (what, ours, theirs)) in worst.iter_mut().zip([
            ("actuator_length", &a.length, &s.actuator_length),
            ("actuator_velocity", &a.velocity, &s.actuator_velocity),
            ("actuator_force", &a.force, &s.actuator_force),
            ("act_dot", &a.act_dot, &s.act_dot),
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
        assert_eq!(d.efc.nefc(), s.nefc, "state {k}: nefc");
        let types: Vec<u8> = d.efc.efc_type.iter().map(|&t| t as u8).collect();
        assert_eq!(types, s.efc_type, "state {k}: efc_type");
        assert_eq!(
            d.efc.efc_id, s.efc_id,
            "state {k}: efc_id (the active constraints' rows)"
        );
        let e = rel(&d.efc.pos, &s.efc_pos);
        assert!(e < 1e-12, "state {k}: efc_pos off by {e:.2e}");
        assert_eq!(a.qfrc, d.qfrc_actuator, "state {k}: the two routes to qfrc_actuator");
    }
    // the states exercise what they are meant to
    let cable = act_index(&m, "cable_motor");
    let saturated = f
        .states
        .iter()
        .filter(|s| {
            let total: f64 = s.actuator_force[cable..cable + 3].iter().sum();
            (total - 2.0).abs() < 1e-12 || (total + 3.0).abs() < 1e-12
        })
        .count();
    assert!(saturated >= 6, "the cable saturates in {saturated} states");
    assert!(
        f.states.iter().any(|s| s.nefc == 0),
        "a state with every constraint off"
    );
    println!("worst relative errors (length, velocity, force, act_dot, qfrc_actuator, qacc): {worst:?}");
}

/// The shortcuts' forces by their definitions, and the tendon's saturation, at the fixture's
/// states.
#[test]
fn shortcut_forces_follow_their_definitions() {
    let f = fixture();
    let m = model(&f);
    let idx = |n: &str| act_index(&m, n);
    let (elbow_brake, ram, servo, cable) = (idx("elbow_brake"), idx("ram"), idx("shoulder_iv"), idx("cable_motor"));
    let (cable_brake, strap) = (idx("cable_brake"), idx("strap_motor"));
    for (k, s) in f.states.iter().enumerate() {
        let ten = tendon_kinematics(&m, &s.qpos).unwrap();
        let a = actuation(&m, &ten, &s.qpos, &s.qvel, &s.ctrl, &s.act).unwrap();
        let close = |x: f64, y: f64, what: &str| {
            assert!(
                (x - y).abs() <= 1e-13 * (1.0 + y.abs()),
                "state {k}: {what}: {x} vs {y}"
            );
        };
        // damper: -kv ctrl velocity, the control clamped to [0, 1]
        let u = s.ctrl[elbow_brake].clamp(0.0, 1.0);
        close(a.force[elbow_brake], -4.0 * u * a.velocity[elbow_brake], "damper");
        // cylinder: area act + bias(length, velocity), area = pi/4 1.2^2
        let area = std::f64::consts::PI / 4.0 * 1.2 * 1.2;
        let p = s.act[act_slot(&m, ram)];
        let bias = 2.0 - 40.0 * a.length[ram] - 5.0 * a.velocity[ram];
        close(a.force[ram], area * p + bias, "cylinder");
        close(
            a.act_dot[act_slot(&m, ram)],
            (s.ctrl[ram] - p) / 0.1,
            "cylinder pressure rate",
        );
        // integrated velocity: the activation is the setpoint of a position servo (as it is,
        // also outside actrange: MuJoCo clamps it only when it advances it), and its rate the
        // control (clamped to [-2, 2])
        let x = s.act[act_slot(&m, servo)];
        let want = 30.0 * (x - a.length[servo]) - 2.0 * a.velocity[servo];
        close(a.force[servo], want, "intvelocity");
        close(
            a.act_dot[act_slot(&m, servo)],
            s.ctrl[servo].clamp(-2.0, 2.0),
            "intvelocity rate",
        );
        // the tendon: the unscaled total is tendon_force; a saturated total is the bound, each
        // actuator's share kept, then the damper clamped to its own forcerange
        let total = a.tendon_force[0];
        let scale = if total < -3.0 {
            -3.0 / total
        } else if total > 2.0 {
            2.0 / total
        } else {
            1.0
        };
        let raw_motor = s.ctrl[cable]; // unit gain (the gear is in the moment arm)
        close(a.force[cable], raw_motor * scale, "cable motor share");
        let brake_raw = -2.0 * s.ctrl[cable_brake].clamp(0.0, 2.0) * a.velocity[cable_brake];
        close(
            a.force[cable_brake],
            (brake_raw * scale).clamp(-1.5, 1.5),
            "cable damper",
        );
        if scale != 1.0 && (brake_raw * scale).abs() < 1.5 {
            let sum: f64 = a.force[cable..cable + 3].iter().sum();
            close(sum, if total < 0.0 { -3.0 } else { 2.0 }, "saturated total");
        }
        // saturated (no velocity derivative in the implicit integrators): every actuator of a
        // tendon whose total reaches its range's bounds, the damper also at its own forcerange
        let on_bound = !(-3.0 < total && total < 2.0);
        for j in cable..cable + 2 {
            assert_eq!(a.clamped[j], on_bound, "state {k}: saturation flag of actuator {j}");
        }
        let own = (brake_raw * scale).abs() >= 1.5;
        assert_eq!(a.clamped[cable_brake], on_bound || own, "state {k}: the damper's flag");
        // the strap's range is switched off
        close(a.force[strap], s.ctrl[strap], "strap motor");
    }
}

/// An inactive constraint changes nothing: the dynamics are those of the model without it.
#[test]
fn an_inactive_constraint_is_no_constraint() {
    let f = fixture();
    let m = model(&f);
    for (k, s) in f.states.iter().enumerate() {
        let mut fw = Forward::new(&m).unwrap();
        fw.ctrl.copy_from_slice(&s.ctrl);
        fw.act.copy_from_slice(&s.act);
        fw.d.data.eq_active.copy_from_slice(&s.eq_active);
        let qacc = fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap().qacc.clone();
        let mut cut = m.clone();
        let keep: Vec<usize> = (0..m.equality.len()).filter(|&e| s.eq_active[e]).collect();
        cut.equality = keep.iter().map(|&e| m.equality[e].clone()).collect();
        cut.eq_params = keep.iter().map(|&e| m.eq_params[e]).collect();
        cut.eq_active0 = vec![true; keep.len()];
        let mut fc = Forward::new(&cut).unwrap();
        fc.ctrl.copy_from_slice(&s.ctrl);
        fc.act.copy_from_slice(&s.act);
        let without = &fc.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap().qacc;
        assert_eq!(&qacc, without, "state {k}");
    }
    // the state's flags have the model's length
    let mut s = State::reference(&m);
    s.eq_active.pop();
    let e = Simulator::new(&m, s, Integrator::Euler).err().unwrap().to_string();
    assert!(e.contains("eq_active"), "{e}");
}

#[test]
fn rollouts_agree_with_mujoco() {
    let f = fixture();
    let m0 = model(&f);
    let eq = |n: &str| {
        m0.equality
            .iter()
            .position(|e| matches!(e, mbd::model::Equality::Weld { name, .. } | mbd::model::Equality::Connect { name, .. } if name == n))
            .unwrap()
    };
    let (lid, swing) = (eq("lid_hold"), eq("swing_pin"));
    let mut worst = 0.0f64;
    for r in &f.rollouts {
        let mut m = m0.clone();
        m.opt.integrator = Integrator::parse(&r.integrator).unwrap();
        let mut sim = Simulator::new(&m, State::reference(&m), m.opt.integrator).unwrap();
        let mut row = 0;
        for step in 1..=r.steps {
            if step == r.switch {
                sim.state.eq_active[lid] = false;
                sim.state.eq_active[swing] = true;
            }
            let t = sim.state.time;
            for (j, c) in sim.state.ctrl.iter_mut().enumerate() {
                *c = 3.0 * (1.3 * t + j as f64).sin();
            }
            sim.step().unwrap();
            if step % r.every == 0 {
                for (what, ours, theirs) in [
                    ("qpos", &sim.state.qpos, &r.qpos[row]),
                    ("qvel", &sim.state.qvel, &r.qvel[row]),
                    ("act", &sim.state.act, &r.act[row]),
                ] {
                    let e = rel(ours, theirs);
                    assert!(e < 1e-9, "{}: {what} after step {step} off by {e:.2e}", r.integrator);
                    worst = worst.max(e);
                }
                row += 1;
            }
        }
    }
    // the switch matters: the lid falls once released, the swing's tip is pulled back
    let last = &f.rollouts[0].qpos;
    let (lid_z, at_switch) = (last[last.len() - 1][m0.q_adr[mjbody(&m0, "lid")] + 2], 1.0);
    assert!(lid_z < at_switch - 1.0, "the released lid falls: z = {lid_z}");
    println!("worst relative rollout error: {worst:.2e}");
}

/// The Featherstone body carrying MuJoCo body `name`'s joint.
fn mjbody(m: &Model, name: &str) -> usize {
    let b = m.mj_body_name.iter().position(|n| n == name).unwrap();
    m.mj_body_last[b]
}

/// The transmissions are what the file says (a guard on the fixture's indices).
#[test]
fn transmissions_are_read() {
    let f = fixture();
    let m = model(&f);
    let t = |n: &str| m.actuators[act_index(&m, n)].trn;
    assert!(matches!(t("cable_motor"), Transmission::Tendon(0)));
    assert!(matches!(t("strap_motor"), Transmission::Tendon(1)));
    assert!(matches!(t("ram"), Transmission::Joint(_)));
}
