//! Mocap bodies (`<body mocap="true">`): bodies whose placement in the world is an input of each
//! state (MuJoCo's `mocap_pos`, `mocap_quat`), like a control, never integrated.
//!
//! - against MuJoCo 4.0.0 (`tests/fixtures/mocap.json`, made by
//!   `tests/fixtures/make_mocap_fixtures.py` on `tests/fixtures/models/mocap.xml`: an arm welded to
//!   a mocap target, a box pushed by a mocap paddle, a bob hanging by a connect from a mocap hook, a
//!   mocap carrier with a dof-less tray, a tendon to it and a hinged child): the model
//!   (`body_mocapid`, `body_weldid` with MuJoCo 4.0's weld groups, default poses, keyframes), and
//!   at eight states with moved and non-unit mocap poses the body poses and velocities (`cvel`,
//!   zero for the mocap bodies and what is fixed to them, in MuJoCo too), tendon and actuator
//!   lengths, forces, contacts, constraint forces and `qacc` (1e-12), and 1000-step rollouts with
//!   every integrator while the mocap bodies move by a known law (1e-9);
//! - the reader's errors on a mocap body with a joint and on one that is not a child of the world;
//! - independent checks: a mocap body has zero velocity and zero Jacobian; a non-unit quaternion
//!   acts as its normalized copy and is left as given; a weld drags the hand after a target
//!   moving on a circle with the lag `2 tc v` of its time constant `tc`; the paddle pushes
//!   the box along its own motion; two bodies that cannot move never collide; a mocap body held
//!   still is a fixed body written at its pose (a hinged child, a tendon and a site actuator on
//!   it, every integrator); a mocap body built by hand and the structural checks; the `mbd`
//!   command's state files and `inspect` carry the mocap poses.

use mbd::cli::inspect::inspect_model;
use mbd::cli::state::{parse_state, state_json};
use mbd::dynamics::{Actuation, TendonState};
use mbd::kinematics::{mj_body_poses, Kinematics};
use mbd::mjcf;
use mbd::model::{mj_body_parentid, Equality, Integrator, Model};
use mbd::mujoco::collision::{collision_pairs, weld_ids};
use mbd::mujoco::constraint::jacobian::jac_point;
use mbd::mujoco::forward::Forward;
use mbd::mujoco::integrator::{Simulator, State};
use mbd::spatial::Vec3;
use mbd::Error;
use serde::Deserialize;
use std::f64::consts::PI;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Fixture {
    model: String,
    nmocap: usize,
    body_mocapid: Vec<i64>,
    body_weldid: Vec<usize>,
    body_pos: Vec<[f64; 3]>,
    body_quat: Vec<[f64; 4]>,
    key_mpos: Vec<[f64; 3]>,
    key_mquat: Vec<[f64; 4]>,
    states: Vec<Sample>,
    rollouts: Vec<Rollout>,
    errors: Vec<ErrorCase>,
}

#[derive(Deserialize)]
struct Sample {
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    ctrl: Vec<f64>,
    mocap_pos: Vec<[f64; 3]>,
    mocap_quat: Vec<[f64; 4]>,
    xpos: Vec<[f64; 3]>,
    xquat: Vec<[f64; 4]>,
    cvel: Vec<[f64; 6]>,
    ten_length: Vec<f64>,
    actuator_length: Vec<f64>,
    qfrc_passive: Vec<f64>,
    qfrc_actuator: Vec<f64>,
    qacc_smooth: Vec<f64>,
    qacc: Vec<f64>,
    qfrc_constraint: Vec<f64>,
    contacts: Vec<ContactFx>,
    efc_type: Vec<i32>,
    efc_id: Vec<usize>,
    efc_force: Vec<f64>,
}

#[derive(Deserialize)]
struct ContactFx {
    geom: [usize; 2],
    dist: f64,
    pos: [f64; 3],
    frame: [f64; 9],
}

#[derive(Deserialize)]
struct Rollout {
    integrator: String,
    steps: usize,
    every: usize,
    qpos: Vec<Vec<f64>>,
    qvel: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct ErrorCase {
    what: String,
    xml: String,
    message: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> Fixture {
    let p = root().join("tests/fixtures/mocap.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn model(f: &Fixture) -> Model {
    mbd::mujoco::load(root().join(&f.model)).unwrap().model
}

/// `max |a - b| / max(max |b|, 1)`.
fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1.0f64, |s, x| s.max(x.abs()));
    a.iter().zip(b).map(|(x, y)| (x - y).abs() / scale).fold(0.0, f64::max)
}

/// The mocap poses of the fixture's rollouts at time `t` (`MOCAP_LAW` of the script): target,
/// paddle, hook, carrier.
fn mocap_law(t: f64) -> (Vec<[f64; 3]>, Vec<[f64; 4]>) {
    let s = 1.5 + 0.5 * (3.0 * t).sin();
    let a = PI / 6.0 + 0.5 * t;
    let pos = vec![
        [
            0.45 + 0.15 * (2.0 * t).cos(),
            0.15 * (2.0 * t).sin(),
            1.0 + 0.05 * t.sin(),
        ],
        [0.872 + 0.1 * t, 1.0, 0.1],
        [-1.0 + 0.1 * (2.0 * t).sin(), 0.1 * (1.0 - (2.0 * t).cos()), 0.8],
        [0.0, -1.0, 0.3 + 0.02 * (2.0 * t).sin()],
    ];
    let quat = vec![
        [s * (t / 2.0).cos(), 0.0, 0.0, s * (t / 2.0).sin()],
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [2.0 * (a / 2.0).cos(), 0.0, 0.0, 2.0 * (a / 2.0).sin()],
    ];
    (pos, quat)
}

/// The MuJoCo body named `name`.
fn mj_body(m: &Model, name: &str) -> usize {
    m.mj_body_name.iter().position(|n| n == name).unwrap()
}

#[test]
fn the_model_is_read_as_mujoco_reads_it() {
    let f = fixture();
    let m = model(&f);
    assert_eq!(m.nmocap(), f.nmocap);
    let mocapid: Vec<i64> = m
        .mj_body_last
        .iter()
        .map(|&fb| m.body_mocapid[fb].map_or(-1, |k| k as i64))
        .collect();
    assert_eq!(mocapid, f.body_mocapid, "body_mocapid");
    // MuJoCo 4.0's weld groups: a mocap body is its own weld root, its dof-less child (the tray)
    // belongs to it
    assert_eq!(weld_ids(&m, &mj_body_parentid(&m)), f.body_weldid, "body_weldid");
    // the default poses are body_pos, body_quat, what a reset copies into mocap_pos, mocap_quat
    for (b, &k) in f.body_mocapid.iter().enumerate() {
        if k >= 0 {
            let k = k as usize;
            assert!(rel(&m.mocap_pos0[k], &f.body_pos[b]) < 1e-15, "body_pos of mocap {k}");
            assert!(
                rel(&m.mocap_quat0[k], &f.body_quat[b]) < 1e-15,
                "body_quat of mocap {k}"
            );
        }
    }
    let s = State::reference(&m);
    assert_eq!(
        (s.mocap_pos, s.mocap_quat),
        (m.mocap_pos0.clone(), m.mocap_quat0.clone())
    );
    // the keyframe's mpos, and its mquat normalized as MuJoCo's compiler normalizes it
    let key = State::keyframe(&m, "moved").unwrap();
    assert!(rel(key.mocap_pos.as_flattened(), f.key_mpos.as_flattened()) < 1e-15);
    assert!(rel(key.mocap_quat.as_flattened(), f.key_mquat.as_flattened()) < 1e-15);
}

#[test]
fn forces_contacts_and_accelerations_agree_with_mujoco() {
    let f = fixture();
    let m = model(&f);
    let mut fw = Forward::new(&m).unwrap();
    let (mut act, mut ten) = (Actuation::new(&m), TendonState::new(&m));
    let mut worst = 0.0f64;
    for (k, s) in f.states.iter().enumerate() {
        fw.ctrl.copy_from_slice(&s.ctrl);
        fw.mocap_pos.clone_from(&s.mocap_pos);
        fw.mocap_quat.clone_from(&s.mocap_quat);
        fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
        fw.exchange_actuation(&mut act, Some(&mut ten));
        let d = &fw.d;
        let (xpos, xquat) = mj_body_poses(
            &m,
            &Kinematics {
                x_up: vec![],
                x_0: d.data.x_0.clone(),
            },
        );
        let xpos: Vec<f64> = xpos.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
        let cvel: Vec<f64> = d
            .data
            .cvel(&m)
            .iter()
            .flat_map(|v| v.to_vec6().iter().copied().collect::<Vec<_>>())
            .collect();
        // MuJoCo's xquat up to the sign (mj_body_poses makes w >= 0)
        let theirs_q: Vec<f64> = s
            .xquat
            .iter()
            .flat_map(|q| if q[0] < 0.0 { q.map(|x| -x) } else { *q })
            .collect();
        let contacts = &d.efc.contacts;
        assert_eq!(contacts.len(), s.contacts.len(), "state {k}: ncon");
        let (mut geo, mut cpos, mut cframe) = (vec![], vec![], vec![]);
        let (mut geo_fx, mut cpos_fx, mut cframe_fx) = (vec![], vec![], vec![]);
        for (c, cf) in contacts.iter().zip(&s.contacts) {
            assert_eq!(c.geom, cf.geom, "state {k}: contact geoms");
            geo.push(c.dist);
            geo_fx.push(cf.dist);
            cpos.extend([c.pos.x, c.pos.y, c.pos.z]);
            cpos_fx.extend(cf.pos);
            cframe.extend((0..9).map(|i| c.frame[(i / 3, i % 3)]));
            cframe_fx.extend(cf.frame);
        }
        let types: Vec<i32> = d.efc.efc_type.iter().map(|t| *t as i32).collect();
        assert_eq!(types, s.efc_type, "state {k}: efc_type");
        assert_eq!(d.efc.efc_id, s.efc_id, "state {k}: efc_id");
        for (what, ours, theirs) in [
            ("xpos", &xpos[..], s.xpos.as_flattened()),
            ("xquat", xquat.as_flattened(), &theirs_q[..]),
            ("cvel", &cvel[..], s.cvel.as_flattened()),
            ("ten_length", &ten.length[..], &s.ten_length[..]),
            ("actuator_length", &act.length[..], &s.actuator_length[..]),
            ("qfrc_passive", &d.qfrc_passive[..], &s.qfrc_passive[..]),
            ("qfrc_actuator", &d.qfrc_actuator[..], &s.qfrc_actuator[..]),
            ("qacc_smooth", &d.qacc_smooth[..], &s.qacc_smooth[..]),
            ("contact dist", &geo[..], &geo_fx[..]),
            ("contact pos", &cpos[..], &cpos_fx[..]),
            ("contact frame", &cframe[..], &cframe_fx[..]),
            ("efc_force", &d.efc_force[..], &s.efc_force[..]),
            ("qfrc_constraint", &d.qfrc_constraint[..], &s.qfrc_constraint[..]),
            ("qacc", &d.qacc[..], &s.qacc[..]),
        ] {
            let e = rel(ours, theirs);
            assert!(
                e < 1e-12,
                "state {k}: {what} off by {e:.2e}\n ours   {ours:?}\n MuJoCo {theirs:?}"
            );
            worst = worst.max(e);
        }
        // the inputs are read, not changed: the quaternion keeps its norm
        assert_eq!(fw.mocap_quat, s.mocap_quat);
        assert_eq!(d.data.mocap_quat, s.mocap_quat);
    }
    // the states touch every kind of contact the scene has: box-floor, paddle-box, ball-tray
    let pairs: std::collections::BTreeSet<[usize; 2]> = f
        .states
        .iter()
        .flat_map(|s| s.contacts.iter().map(|c| c.geom))
        .collect();
    assert_eq!(pairs.len(), 3, "contact pairs seen: {pairs:?}");
    println!("worst relative error over the states: {worst:.2e}");
}

#[test]
fn rollouts_agree_with_mujoco() {
    let f = fixture();
    let m0 = model(&f);
    let mut worst = 0.0f64;
    for r in &f.rollouts {
        let mut m = m0.clone();
        m.opt.integrator = Integrator::parse(&r.integrator).unwrap();
        let mut sim = Simulator::new(&m, State::reference(&m), m.opt.integrator).unwrap();
        let (mut row, mut t) = (0, 0.0);
        for step in 1..=r.steps {
            t = sim.state.time;
            (sim.state.mocap_pos, sim.state.mocap_quat) = mocap_law(t);
            sim.state.ctrl[0] = 0.5 * (2.0 * t).sin();
            sim.step().unwrap();
            if step % r.every == 0 {
                for (what, ours, theirs) in [
                    ("qpos", &sim.state.qpos, &r.qpos[row]),
                    ("qvel", &sim.state.qvel, &r.qvel[row]),
                ] {
                    let e = rel(ours, theirs);
                    assert!(e < 1e-9, "{}: {what} after step {step} off by {e:.2e}", r.integrator);
                    worst = worst.max(e);
                }
                row += 1;
            }
        }
        assert_eq!(row, r.qpos.len());
        // the step never integrates the mocap poses: they are the law's, as set
        assert_eq!(
            (&sim.state.mocap_pos, &sim.state.mocap_quat),
            (&mocap_law(t).0, &mocap_law(t).1)
        );
    }
    println!("worst relative rollout error: {worst:.2e}");
}

#[test]
fn the_reader_refuses_what_mujoco_refuses() {
    let f = fixture();
    // the line of the <body mocap="true"> element
    let lines = [
        ("joint", 3, "it has the joint 'slide'"),
        ("parent", 6, "its parent is body 'arm'"),
    ];
    assert_eq!(f.errors.len(), lines.len());
    for (case, (what, line, why)) in f.errors.iter().zip(lines) {
        assert_eq!(case.what, what);
        assert!(
            case.message.contains("is not a fixed child of world"),
            "{}",
            case.message
        );
        match mjcf::load_str(&case.xml) {
            Err(Error::Model { line: l, why: w, .. }) => {
                assert_eq!(l, line, "{what}: {w}");
                assert!(
                    w.contains(why) && w.contains("mocap body 'grip' is not a fixed child of world"),
                    "{what}: {w}"
                );
            }
            other => panic!("{what}: expected a reader error, got {other:?}"),
        }
    }
    // keyframes: a wrong count of numbers, a zero quaternion, mocap poses without mocap bodies
    let xml = |key: &str, mocap: bool| {
        format!(
            r#"<mujoco><worldbody><body mocap="{mocap}"><geom size="0.1"/></body></worldbody>
               <keyframe><key {key}/></keyframe></mujoco>"#
        )
    };
    for (key, mocap, needle) in [
        (r#"mpos="1 2""#, true, "expected 3 numbers"),
        (r#"mquat="1 0 0""#, true, "expected 4 numbers"),
        (r#"mquat="0 0 0 0""#, true, "zero norm"),
        (r#"mpos="1 2 3""#, false, "expected 0 numbers"),
    ] {
        let e = mjcf::load_str(&xml(key, mocap)).unwrap_err().to_string();
        assert!(e.contains(needle), "{key}: {e}");
    }
    // mocap="false" is an ordinary body
    let m = mjcf::load_str(&xml("", false)).unwrap().model;
    assert_eq!(m.nmocap(), 0);
}

/// A mocap body has no dofs: its velocity `cvel` is zero and so are its Jacobian and that of its
/// dof-less child, however fast the inputs move it; a hinged child moves with it but feels only
/// its own joint's velocity.
#[test]
fn a_mocap_body_has_no_velocity_and_no_jacobian() {
    let f = fixture();
    let m = model(&f);
    let s = &f.states[3];
    let mut fw = Forward::new(&m).unwrap();
    fw.mocap_pos.clone_from(&s.mocap_pos);
    fw.mocap_quat.clone_from(&s.mocap_quat);
    fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
    let d = &fw.d.data;
    let (mut jp, mut jr) = (nalgebra::Matrix3xX::zeros(m.nv), nalgebra::Matrix3xX::zeros(m.nv));
    for name in ["target", "paddle", "hook", "carrier", "tray"] {
        let fb = m.mj_body_last[mj_body(&m, name)];
        assert_eq!(d.cvel_fb[fb].to_vec6(), nalgebra::Vector6::zeros(), "{name}: cvel");
        jac_point(&m, d, fb, &d.x_0[fb].r, &mut jp, &mut jr);
        assert!(jp.amax() == 0.0 && jr.amax() == 0.0, "{name}: Jacobian");
    }
    // the hinged child: angular velocity its joint's rate about its axis
    let pend = m.mj_body_last[mj_body(&m, "pendulum")];
    let rate = s.qvel[m.v_adr[pend]];
    let axis = d.x_0[pend].e.transpose() * Vec3::x();
    assert!((d.cvel_fb[pend].w - axis * rate).norm() < 1e-14);
}

/// The pipeline reads a normalized copy of `mocap_quat`: any positive scale gives the same
/// result to rounding, and the input is left as given.
#[test]
fn a_non_unit_quaternion_acts_as_its_normalized_copy() {
    let f = fixture();
    let m = model(&f);
    let s = &f.states[5];
    let run = |scale: f64| {
        let mut fw = Forward::new(&m).unwrap();
        fw.mocap_pos.clone_from(&s.mocap_pos);
        fw.mocap_quat = s.mocap_quat.iter().map(|q| q.map(|x| x * scale)).collect();
        fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
        (fw.d.qacc.clone(), fw.mocap_quat.clone())
    };
    let (unit, _) = run(1.0);
    for scale in [1e-3, 0.5, 3.0, 1e4] {
        let (qacc, quat) = run(scale);
        assert!(rel(&qacc, &unit) < 1e-12, "scale {scale}: {:.2e}", rel(&qacc, &unit));
        assert_eq!(quat[0], s.mocap_quat[0].map(|x| x * scale));
    }
    // a zero quaternion cannot be normalized: refused at the door, naming the body
    let mut fw = Forward::new(&m).unwrap();
    fw.mocap_quat[2] = [0.0; 4];
    let e = fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap_err().to_string();
    assert!(e.contains("mocap_quat[2]") && e.contains("hook"), "{e}");
    fw.mocap_quat.pop();
    assert!(matches!(
        fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]),
        Err(Error::BadLength { .. })
    ));
}

/// The fixture model with the weld's time constant `tc` (critically damped): the smallest and
/// largest distance between the hand and the target while the target circles (radius 0.15 m at
/// 2 rad/s, 0.3 m/s) over the second half of a 2 s run.
fn weld_lag(tc: f64) -> (f64, f64) {
    let xml = std::fs::read_to_string(root().join("tests/fixtures/models/mocap.xml")).unwrap();
    let xml = xml.replace(r#"solref="0.05 1""#, &format!(r#"solref="{tc} 1""#));
    let m = mbd::mujoco::load_str(&xml).unwrap().model;
    let mut sim = Simulator::new(&m, State::reference(&m), Integrator::ImplicitFast).unwrap();
    let (hand, target) = (
        m.mj_body_last[mj_body(&m, "hand")],
        m.mj_body_last[mj_body(&m, "target")],
    );
    let (mut least, mut most) = (f64::INFINITY, 0.0f64);
    // the circle starts at the default pose, so the hand starts on the target
    let law = |t: f64| [0.45 + 0.15 * (2.0 * t).cos(), 0.15 * (2.0 * t).sin(), 1.0];
    for step in 0..1000 {
        sim.state.mocap_pos[0] = law(sim.state.time);
        sim.step().unwrap();
        if step >= 500 {
            let d = &sim.forward_data().unwrap().data;
            let r = (d.x_0[hand].r - d.x_0[target].r).norm();
            (least, most) = (least.min(r), most.max(r));
        }
    }
    (least, most)
}

/// A weld pulls the hand towards the mocap target as a critically damped spring-damper of time
/// constant `tc` whose damper sees only the hand's velocity (the target's is zero to the
/// solver): dragged at the target's speed `v`, the hand settles where the spring cancels the
/// damper, `K r = B v`, a lag `r = 2 tc v` behind the target (book, "Mocap bodies: poses as
/// inputs"). Over the second half of the run the distance stays within 10 % of it, for three
/// time constants.
#[test]
fn a_stiff_weld_drags_the_hand_after_the_target() {
    let v = 0.3;
    for tc in [0.05, 0.02, 0.01] {
        let (least, most) = weld_lag(tc);
        let lag = 2.0 * tc * v;
        assert!(
            least > 0.9 * lag && most < 1.1 * lag,
            "tc {tc}: distance in [{least:.5}, {most:.5}] m, 2 tc v = {lag:.5} m"
        );
        println!("weld time constant {tc}: distance in [{least:.5}, {most:.5}] m, 2 tc v = {lag:.5} m");
    }
}

/// The paddle moves along +x at 0.1 m/s and the box slides ahead of it: after 2 s the box has
/// moved along +x by nearly the paddle's 0.2 m, hardly sideways, and moves at the paddle's speed.
#[test]
fn the_paddle_pushes_the_box_along_its_motion() {
    let f = fixture();
    let m = model(&f);
    let mut sim = Simulator::new(&m, State::reference(&m), Integrator::Euler).unwrap();
    let b = m.mj_body_last[mj_body(&m, "box")];
    let (qa, va) = (m.q_adr[b], m.v_adr[b]);
    let x0 = sim.state.qpos[qa..qa + 3].to_vec();
    for _ in 0..1000 {
        sim.state.mocap_pos[1] = [0.872 + 0.1 * sim.state.time, 1.0, 0.1];
        sim.step().unwrap();
    }
    let q = &sim.state.qpos[qa..qa + 3];
    let (dx, dy) = (q[0] - x0[0], q[1] - x0[1]);
    assert!(
        (0.15..0.21).contains(&dx) && dy.abs() < 0.01,
        "box moved by ({dx}, {dy})"
    );
    let vx = sim.state.qvel[va];
    assert!((vx - 0.1).abs() < 0.02, "box speed {vx}");
    // the pushing contacts are there, and the paddle, which dips into the floor, touches it not
    let fd = sim.forward_data().unwrap();
    let geom = |n: &str| m.geoms.iter().position(|g| g.name == n).unwrap();
    let (paddle, floor, bx) = (geom("paddle"), geom("floor"), geom("box"));
    assert!(fd
        .contacts()
        .iter()
        .any(|c| c.geom.contains(&paddle) && c.geom.contains(&bx)));
    assert!(!fd
        .contacts()
        .iter()
        .any(|c| c.geom.contains(&paddle) && c.geom.contains(&floor)));
}

/// MuJoCo 4.0's filter: two bodies that cannot move (the world, mocap bodies and what is fixed
/// to them) make no geom pair; the tray (fixed to the carrier) still meets the free ball, and
/// the paddle the free box.
#[test]
fn bodies_that_cannot_move_never_collide() {
    let f = fixture();
    let m = model(&f);
    let dofless = |g: usize| {
        let b = m.mj_body[m.geoms[g].body];
        ["world", "target", "paddle", "hook", "carrier", "tray"].contains(&m.mj_body_name[b].as_str())
    };
    let pairs = collision_pairs(&m);
    assert!(
        pairs.iter().all(|p| !(dofless(p.geom[0]) && dofless(p.geom[1]))),
        "{pairs:?}"
    );
    let named = |a: &str, b: &str| {
        let g = |n: &str| m.geoms.iter().position(|x| x.name == n).unwrap();
        pairs.iter().any(|p| p.geom.contains(&g(a)) && p.geom.contains(&g(b)))
    };
    assert!(named("tray", "ball") && named("paddle", "box") && named("floor", "box"));
}

/// The model's mocap bodies through the `mbd` command's code: a state file carries `mocap_pos`
/// and `mocap_quat` (rows or one flat list) and round-trips; `inspect` reports `body_mocapid` and
/// the poses and places the bodies there.
#[test]
fn state_files_and_inspect_carry_the_mocap_poses() {
    let f = fixture();
    let m = model(&f);
    let s = &f.states[2];
    let text = serde_json::json!({
        "qpos": s.qpos, "qvel": s.qvel, "mocap_pos": s.mocap_pos, "mocap_quat": s.mocap_quat.as_flattened(),
    })
    .to_string();
    let state = parse_state(&text, &m).unwrap();
    assert_eq!((&state.mocap_pos, &state.mocap_quat), (&s.mocap_pos, &s.mocap_quat));
    assert_eq!(parse_state(&state_json(&state), &m).unwrap(), state);
    for (bad, needle) in [
        (
            r#"{"mocap_pos": [[1, 2, 3]]}"#,
            "mocap_pos has 3 numbers, the model needs 12",
        ),
        (r#"{"mocap_quat": [[1, 0, 0]]}"#, "mocap_quat[0] has 3 entries"),
    ] {
        let e = parse_state(bad, &m).unwrap_err().to_string();
        assert!(e.contains(needle), "{bad}: {e}");
    }
    let ins = inspect_model(&m, &state, vec![], false).unwrap();
    assert_eq!(ins.sizes.nmocap, 4);
    assert_eq!(ins.body_mocapid, f.body_mocapid);
    assert!(rel(ins.xpos.as_flattened(), s.xpos.as_flattened()) < 1e-12);
    assert!(ins.summary().contains("mocap:       target at (") && ins.summary().contains("carrier at"));
    // the inspection's constrained part is the pipeline's at these mocap poses (zero controls)
    let mut fw = Forward::new(&m).unwrap();
    fw.mocap_pos.clone_from(&s.mocap_pos);
    fw.mocap_quat.clone_from(&s.mocap_quat);
    fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
    assert_eq!(ins.constraint.qacc, fw.d.qacc);
    assert_eq!(ins.constraint.ncon, s.contacts.len());
}

/// The equalities of the model name the mocap bodies' Featherstone bodies: the weld's second
/// body is the target, the connect's the hook.
#[test]
fn equalities_name_the_mocap_bodies() {
    let f = fixture();
    let m = model(&f);
    let fb = |n: &str| m.mj_body_last[mj_body(&m, n)];
    match (&m.equality[0], &m.equality[1]) {
        (Equality::Weld { body2: w, .. }, Equality::Connect { body2: c, .. }) => {
            assert_eq!((*w, *c), (fb("target"), fb("hook")));
            assert_eq!((m.body_mocapid[*w], m.body_mocapid[*c]), (Some(0), Some(2)));
        }
        other => panic!("{other:?}"),
    }
}

/// A mocap body built by hand (`ModelBuilder::add_mocap_body`): its pose is its default,
/// `x_tree_placed` swaps in an input pose, and the structural checks refuse a mocap body that is
/// not a fixed child of the base or a mocap id out of order.
#[test]
fn a_mocap_body_built_by_hand() {
    use mbd::model::{canned, mocap_xform, Joint, ModelBuilder};
    use mbd::spatial::{xlt, SpatialInertia};
    let rod = canned::rod(1.0, 0.4, Vec3::new(1.0, 0.2, -0.3));
    let mut b = ModelBuilder::new("hand built");
    let arm = b.add_body("arm", 0, Joint::revolute(Vec3::z()), xlt(Vec3::zeros()), rod);
    let grip = b.add_mocap_body("grip", [0.5, 0.0, 0.2], [0.0, 0.0, 0.0, 2.0], SpatialInertia::zero());
    let m = b.build().unwrap();
    assert_eq!(
        (m.nmocap(), m.body_mocapid[grip], m.body_mocapid[arm]),
        (1, Some(0), None)
    );
    assert_eq!(m.mocap_bodies().collect::<Vec<_>>(), vec![grip]);
    let moved = [mocap_xform(&[1.0, 2.0, 3.0], &[1.0, 0.0, 0.0, 0.0])];
    assert_eq!(m.x_tree_placed(grip, &moved).r, Vec3::new(1.0, 2.0, 3.0));
    assert_eq!(m.x_tree_placed(grip, &[]), &m.x_tree[grip]);
    assert_eq!(m.x_tree_placed(arm, &moved), &m.x_tree[arm]);
    // the default pose's quaternion (norm 2) is normalized in the transform: a half turn about z
    assert!((m.x_tree[grip].e - mbd::spatial::rotz(PI).e).amax() < 1e-15);
    let mut bad = m.clone();
    bad.lambda[grip] = arm;
    assert!(matches!(
        bad.validate(),
        Err(Error::BadJoint { .. }) | Err(Error::BadParent { .. })
    ));
    let mut bad = m.clone();
    bad.body_mocapid[arm] = Some(0);
    assert!(bad.validate().is_err());
    let mut bad = m.clone();
    bad.mocap_quat0[0] = [0.0; 4];
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("mocap_quat[0]") && e.contains("default pose"), "{e}");
}

/// A mocap body held still at a pose is a fixed body placed there: a pendulum (hinge, gravity
/// compensation, a site transmission to the carrier, a tendon to it) hanging from a mocap body
/// turned and moved by its inputs swings exactly as the same pendulum hanging from an ordinary
/// body written at that pose, with every integrator (the first steps through MuJoCo's pipeline,
/// the second, without constraints, through Featherstone's RNEA and ABA).
#[test]
fn a_mocap_body_held_still_is_a_fixed_body_placed_there() {
    let xml = |carrier: &str| {
        format!(
            r#"<mujoco><option timestep="0.002"/><worldbody>
  <body name="carrier" {carrier}>
    <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/>
    <site name="anchor" pos="0 0.1 0"/>
    <body name="pendulum" pos="0.1 0 0" gravcomp="0.3">
      <joint name="hang" type="hinge" axis="1 0 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0 0.05 -0.3" size="0.02" contype="0" conaffinity="0"/>
      <site name="tip" pos="0 0.05 -0.3"/>
    </body>
  </body></worldbody>
  <tendon><spatial stiffness="5" springlength="0.2"><site site="anchor"/><site site="tip"/></spatial></tendon>
  <actuator><general site="tip" refsite="anchor" gear="0 1 0 0 0 0"/></actuator>
</mujoco>"#
        )
    };
    let (pos, quat) = ([0.3, -0.2, 1.1], [0.8, 0.3, -0.2, 0.4]);
    let mocap = mbd::mujoco::load_str(&xml(r#"mocap="true""#)).unwrap().model;
    let placed = format!(
        r#"pos="{} {} {}" quat="{} {} {} {}""#,
        pos[0], pos[1], pos[2], quat[0], quat[1], quat[2], quat[3]
    );
    let fixed = mbd::mujoco::load_str(&xml(&placed)).unwrap().model;
    assert_eq!(mocap.nmocap(), 1);
    for integrator in [
        Integrator::Euler,
        Integrator::Implicit,
        Integrator::ImplicitFast,
        Integrator::Rk4,
    ] {
        let mut a = Simulator::new(&mocap, State::reference(&mocap), integrator).unwrap();
        let mut b = Simulator::new(&fixed, State::reference(&fixed), integrator).unwrap();
        a.state.mocap_pos[0] = pos;
        a.state.mocap_quat[0] = quat.map(|x| 3.0 * x);
        for s in [&mut a, &mut b] {
            s.state.qpos[0] = 0.7;
        }
        for step in 0..500 {
            a.state.ctrl[0] = (0.01 * step as f64).sin();
            b.state.ctrl[0] = a.state.ctrl[0];
            a.step().unwrap();
            b.step().unwrap();
        }
        let e = rel(&a.state.qpos, &b.state.qpos).max(rel(&a.state.qvel, &b.state.qvel));
        assert!(e < 1e-11, "{integrator:?}: {e:.2e}");
        let (ea, eb) = (a.energy().unwrap(), b.energy().unwrap());
        assert!(
            (ea[0] - eb[0]).abs() < 1e-11 && (ea[1] - eb[1]).abs() < 1e-11,
            "{ea:?} {eb:?}"
        );
        assert!(a.forward_data().is_some() && b.forward_data().is_none());
    }
}
