//! Sensors (`mbd::mujoco::sensor`) and what they read, `mj_rnePostConstraint` and
//! `mj_subtreeVel`, against MuJoCo 4.0.0 (fixtures by `tests/fixtures/make_sensor_fixtures.py`):
//! every sensor type the reader accepts (tests/fixtures/models/sensors.xml) and every sensor of
//! the public corpus, at settled states with contacts and at seeded states, and along rollouts.
//! Independent checks without MuJoCo follow: a pendulum's pivot force against Newton's law, an
//! accelerometer at rest reading `+g`, a free body's interaction force being zero, and the
//! joint torques read back from `cfrc_int`.
//!
//! One measure throughout, relative to the size of the quantity: `max_k |ours_k - mujoco_k| /
//! max(max_k |mujoco_k|, 1)` per sensor (a sensor's numbers share a unit) or per array.

use mbd::model::SensorKind;
use mbd::model::{Model, Solver};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::integrator::{Simulator, State};
use mbd::mujoco::sensor::{sensor_labels, subtree_vel, PostConstraint, SubtreeVel};
use mbd::spatial::{Force, Mat3, Vec3};
use serde::Deserialize;
use std::path::PathBuf;

/// Sensors and arrays that do not depend on the solver (positions, velocities, the forces of
/// actuators and passive elements): the same formulas in another order.
const TOL_EXACT: f64 = 1e-11;
/// `cfrc_int` and the sensors that read it, given MuJoCo's solution: sums over subtrees of
/// contact forces that nearly cancel the bodies' own inertial forces (a quadruped pressed into
/// its floor: 1e4 N terms for a 1e2 N result), rounded in another order.
const TOL_POST: f64 = 1e-10;
/// Sensors along 300-step rollouts: the states themselves agree to 1e-9 (tests/rollouts.rs).
const TOL_ROLLOUT: f64 = 1e-7;
/// Sensors and arrays that read the solver's `qacc` and constraint forces: Newton converges to
/// 1e-12 on both sides; the constraint tests hold `efc_force` and `qacc` to 1e-8 (tests/forward.rs).
const TOL_SOLVED: f64 = 1e-7;

#[derive(Deserialize)]
struct Fixture {
    mujoco: String,
    cases: Vec<Case>,
    rollouts: Vec<Rollout>,
    xfrc_rollouts: Vec<XfrcRollout>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    model: String,
    cone: String,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    ctrl: Vec<f64>,
    qacc: Vec<f64>,
    efc_force: Vec<f64>,
    contacts: Vec<FixtureContact>,
    sensordata: Vec<f64>,
    cacc: Vec<f64>,
    cfrc_int: Vec<f64>,
    cfrc_ext: Vec<f64>,
    subtree_linvel: Vec<f64>,
    subtree_angmom: Vec<f64>,
    xfrc_applied: Vec<f64>,
    qfrc_smooth: Vec<f64>,
}

#[derive(Deserialize)]
struct FixtureContact {
    geom: [usize; 2],
    pos: Vec<f64>,
    frame: Vec<f64>,
}

#[derive(Deserialize)]
struct Rollout {
    name: String,
    model: String,
    integrator: String,
    steps: usize,
    every: usize,
    sensordata: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct XfrcRollout {
    name: String,
    model: String,
    integrator: String,
    steps: usize,
    every: usize,
    qpos: Vec<Vec<f64>>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> Fixture {
    let text = std::fs::read_to_string(root().join("tests/fixtures/sensors.json")).unwrap();
    let f: Fixture = serde_json::from_str(&text).unwrap();
    assert_eq!(f.mujoco, "4.0.0");
    f
}

/// The case's model with the comparison options of `settled.comparison_options`.
fn model(c: &Case) -> Model {
    let mut m = mbd::mujoco::load(root().join(&c.model)).unwrap().model;
    m.opt.cone = mbd::model::Cone::parse(&c.cone).unwrap();
    m.opt.solver = Solver::Newton;
    m.opt.tolerance = 1e-12;
    m.opt.iterations = 1000;
    m
}

/// Worst relative error per chunk: `chunks` gives the length of each group of numbers that
/// share a scale.
fn worst(ours: &[f64], theirs: &[f64], chunks: &[usize]) -> (f64, usize) {
    assert_eq!(ours.len(), theirs.len());
    let mut at = 0;
    let mut w = (0.0, 0);
    for (k, &n) in chunks.iter().enumerate() {
        let (a, b) = (&ours[at..at + n], &theirs[at..at + n]);
        let scale = b.iter().fold(1.0_f64, |s, x| s.max(x.abs()));
        for (x, y) in a.iter().zip(b) {
            let e = (x - y).abs() / scale;
            if e > w.0 || e.is_nan() {
                w = (e, k);
            }
        }
        at += n;
    }
    w
}

/// Whether a sensor reads the solver's results.
fn solved(kind: &mbd::model::SensorKind) -> bool {
    use mbd::model::SensorKind as K;
    matches!(
        kind,
        K::Touch(_)
            | K::Accelerometer(_)
            | K::Force(_)
            | K::Torque(_)
            | K::FrameLinAcc(_)
            | K::FrameAngAcc(_)
            | K::JointLimitFrc(_)
            | K::TendonLimitFrc(_)
    )
}

/// Per MuJoCo body, `k` numbers of a per-Featherstone-body array.
fn per_mj_body<const K: usize>(m: &Model, f: impl Fn(usize) -> [f64; K]) -> Vec<f64> {
    m.mj_body_last.iter().flat_map(|&b| f(b)).collect()
}

/// `[force; torque]` rows from MuJoCo's flat `xfrc_applied`.
fn wrenches(flat: &[f64]) -> Vec<[f64; 6]> {
    flat.chunks_exact(6).map(|c| std::array::from_fn(|k| c[k])).collect()
}

/// Our pipeline at a case's state, with MuJoCo's options.
fn run<'m>(m: &'m Model, c: &Case) -> Forward<'m> {
    let mut fw = Forward::new(m).unwrap();
    fw.options.ls_iterations = 100;
    fw.ctrl.copy_from_slice(&c.ctrl);
    fw.xfrc_applied = wrenches(&c.xfrc_applied);
    fw.forward(&c.qpos, &c.qvel, &vec![0.0; m.nv])
        .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    fw
}

/// Replaces the solver's results and the contact geometry of the last forward call by
/// MuJoCo's, when the two found the same contacts in the same order (then the rows are in the
/// same order too). Returns whether it could.
fn inject(fw: &mut Forward<'_>, c: &Case) -> bool {
    let d = &mut fw.d;
    if d.efc.contacts.len() != c.contacts.len()
        || d.efc_force.len() != c.efc_force.len()
        || d.efc.contacts.iter().zip(&c.contacts).any(|(a, b)| a.geom != b.geom)
    {
        return false;
    }
    for (a, b) in d.efc.contacts.iter_mut().zip(&c.contacts) {
        a.pos = Vec3::from_column_slice(&b.pos);
        a.frame = Mat3::from_row_slice(&b.frame);
    }
    d.qacc.copy_from_slice(&c.qacc);
    d.efc_force.copy_from_slice(&c.efc_force);
    true
}

/// Compares every sensor of a case, `tol(kind)` per sensor; returns the worst relative error.
fn compare_sensors(m: &Model, c: &Case, ours: &[f64], what: &str, tol: impl Fn(&SensorKind) -> Option<f64>) -> f64 {
    assert_eq!(ours.len(), c.sensordata.len(), "{}: sensordata length", c.name);
    let labels = sensor_labels(m);
    let mut at = 0;
    let mut w: f64 = 0.0;
    for s in &m.sensors {
        let n = s.kind.dim();
        if let Some(tol) = tol(&s.kind) {
            let (e, _) = worst(&ours[at..at + n], &c.sensordata[at..at + n], &[n]);
            assert!(
                e <= tol,
                "{} ({}, {what}): sensor {} = {:?}, MuJoCo {:?}: rel {e:.2e} > {tol:.0e}",
                c.name,
                c.cone,
                labels[at],
                &ours[at..at + n],
                &c.sensordata[at..at + n]
            );
            w = w.max(e);
        }
        at += n;
    }
    w
}

/// `cacc`, `cfrc_int`, `cfrc_ext` per MuJoCo body against MuJoCo's; returns the worst error.
fn compare_post(m: &Model, c: &Case, post: &PostConstraint, tol: f64) -> f64 {
    let six = vec![6; m.mj_nbody()];
    let cacc = per_mj_body(m, |b| {
        let a = post.cacc[b];
        [a.w.x, a.w.y, a.w.z, a.v.x, a.v.y, a.v.z]
    });
    let force = |v: &Vec<Force>| {
        per_mj_body(m, |b| {
            let f = v[b];
            [f.n.x, f.n.y, f.n.z, f.f.x, f.f.y, f.f.z]
        })
    };
    let mut w: f64 = 0.0;
    for (what, ours, theirs) in [
        ("cacc", cacc, &c.cacc),
        ("cfrc_int", force(&post.cfrc_int), &c.cfrc_int),
        ("cfrc_ext", force(&post.cfrc_ext), &c.cfrc_ext),
    ] {
        let (e, b) = worst(&ours, theirs, &six);
        assert!(
            e <= tol,
            "{} ({}): {what} of body {b} ('{}'): rel {e:.2e} > {tol:.0e}",
            c.name,
            c.cone,
            m.mj_body_name[b]
        );
        w = w.max(e);
    }
    w
}

#[test]
fn sensors_match_mujoco_given_mujocos_constraint_solution() {
    // The sensor code alone: MuJoCo's qacc, efc_force and contact frames put into our pipeline's
    // data, so that every sensor and cacc / cfrc_int / cfrc_ext must agree to rounding.
    let fx = fixture();
    assert!(fx.cases.len() >= 60, "{} cases", fx.cases.len());
    let (mut injected, mut worst_sensor, mut worst_post): (usize, f64, f64) = (0, 0.0, 0.0);
    // the contact and ray sensors must be exercised: loaded touch zones, rays that hit
    let (mut touching, mut hitting) = (0, 0);
    for c in &fx.cases {
        let m0 = model(c);
        let mut at = 0;
        for s in &m0.sensors {
            match s.kind {
                SensorKind::Touch(_) if c.sensordata[at] > 0.0 => touching += 1,
                SensorKind::Rangefinder(_) if c.sensordata[at] >= 0.0 => hitting += 1,
                _ => {}
            }
            at += s.kind.dim();
        }
    }
    assert!(
        touching >= 40 && hitting >= 40,
        "{touching} loaded touch sensors, {hitting} rays that hit"
    );
    for c in &fx.cases {
        let m = model(c);
        let mut fw = run(&m, c);
        if !inject(&mut fw, c) {
            println!("{} ({}): contacts differ from MuJoCo's, not injected", c.name, c.cone);
            continue;
        }
        injected += 1;
        fw.sensors_with(&c.qpos, &c.qvel);
        let ours = fw.d.sensordata.clone();
        worst_sensor = worst_sensor.max(compare_sensors(&m, c, &ours, "injected", |k| {
            if solved(k) {
                Some(TOL_POST)
            } else {
                Some(TOL_EXACT)
            }
        }));
        let post = fw.rne_post_constraint(&c.qpos, &c.qvel).clone();
        worst_post = worst_post.max(compare_post(&m, c, &post, TOL_POST));
        // mj_subtreeVel per MuJoCo body (its subtree is that of its first Featherstone body)
        let mut sv = SubtreeVel::default();
        subtree_vel(&m, &fw.d.data, &mut sv);
        let mut first = vec![0; m.mj_nbody()];
        for i in (1..=m.nb).rev() {
            first[m.mj_body[i]] = i;
        }
        let three = vec![3; m.mj_nbody()];
        for (what, ours, theirs) in [
            ("subtree_linvel", &sv.linvel, &c.subtree_linvel),
            ("subtree_angmom", &sv.angmom, &c.subtree_angmom),
        ] {
            let ours: Vec<f64> = first
                .iter()
                .flat_map(|&f| ours[f].iter().copied().collect::<Vec<_>>())
                .collect();
            let (e, b) = worst(&ours, theirs, &three);
            assert!(
                e <= TOL_EXACT,
                "{} ({}): {what} of body {b}: rel {e:.2e}",
                c.name,
                c.cone
            );
            worst_post = worst_post.max(e);
        }
    }
    println!(
        "{injected} of {} cases injected; worst sensor {worst_sensor:.2e}, worst cacc/cfrc {worst_post:.2e}",
        fx.cases.len()
    );
    assert!(
        injected + 2 >= fx.cases.len(),
        "only {injected} cases could be injected"
    );
}

#[test]
fn sensors_match_mujoco_end_to_end() {
    // Our whole pipeline: the sensors that do not read the solver agree to rounding; those that
    // do agree to TOL_SOLVED wherever the two pipelines' qacc agree to 1e-9 (a deep contact of
    // MuJoCo's convex collider, agreeing only to its tolerance, shifts everything after it).
    let fx = fixture();
    let mut agreeing = 0;
    for c in &fx.cases {
        let m = model(c);
        let fw = run(&m, c);
        let (eq, _) = worst(&fw.d.qacc, &c.qacc, &[m.nv]);
        let pipeline_agrees = eq <= 1e-9;
        agreeing += pipeline_agrees as usize;
        compare_sensors(&m, c, &fw.d.sensordata, "end to end", |k| {
            if !solved(k) {
                Some(TOL_EXACT)
            } else {
                pipeline_agrees.then_some(TOL_SOLVED)
            }
        });
    }
    println!("{agreeing} of {} cases with qacc agreeing to 1e-9", fx.cases.len());
    assert!(agreeing + 4 >= fx.cases.len());
}

#[test]
fn sensor_rollouts_match_mujoco() {
    // mj_step evaluates the sensors in its mj_forward, at the step's start: the sensordata after
    // step k is that of the state before it
    let fx = fixture();
    for r in &fx.rollouts {
        let mut m = mbd::mujoco::load(root().join(&r.model)).unwrap().model;
        m.opt.integrator = mbd::model::Integrator::parse(&r.integrator).unwrap();
        let mut sim = Simulator::new(&m, State::reference(&m), m.opt.integrator).unwrap();
        let labels = sensor_labels(&m);
        let mut worst_seen: f64 = 0.0;
        let mut rows = r.sensordata.iter();
        for k in 0..r.steps {
            let t = sim.state.time;
            for (j, c) in sim.state.ctrl.iter_mut().enumerate() {
                *c = (2.0 * t + j as f64).sin();
            }
            sim.step().unwrap();
            if (k + 1) % r.every != 0 {
                continue;
            }
            let theirs = rows.next().expect("a fixture row per `every` steps");
            let ours = sim.sensordata();
            let mut at = 0;
            for s in &m.sensors {
                let n = s.kind.dim();
                {
                    let (e, _) = worst(&ours[at..at + n], &theirs[at..at + n], &[n]);
                    assert!(
                        e <= TOL_ROLLOUT,
                        "{} ({}): step {}: sensor {} = {:?}, MuJoCo {:?}: rel {e:.2e}",
                        r.name,
                        r.integrator,
                        k + 1,
                        labels[at],
                        &ours[at..at + n],
                        &theirs[at..at + n]
                    );
                    worst_seen = worst_seen.max(e);
                }
                at += n;
            }
        }
        println!(
            "{} ({}, {} steps): worst sensor {worst_seen:.2e}",
            r.name, r.integrator, r.steps
        );
    }
}

// ------------------------------------------------------------------------------------------------
// Independent checks, without MuJoCo
// ------------------------------------------------------------------------------------------------

#[test]
fn a_pendulums_pivot_force_is_newtons_law() {
    // F = m (a - g) on the mass, a = alpha x r + w x (w x r), expressed in the rod's frame; the
    // hinge carries no torque about its axis; the accelerometer reads a - g in its frame
    // the book's pendulum (figures::sensors::PENDULUM): a point mass on a massless rod, hinged
    // about y at a site with a force sensor, an accelerometer at the mass; RK4
    use mbd::figures::sensors::{PENDULUM, PEND_INERTIA, PEND_LENGTH, PEND_MASS};
    let m = mbd::mujoco::load_str(PENDULUM).unwrap().model;
    let (mass, len, g, inertia) = (PEND_MASS, PEND_LENGTH, 9.81, PEND_INERTIA);
    let mut fw = Forward::new(&m).unwrap();
    for (theta, omega) in [(0.3, 0.0), (-1.2, 2.5), (2.0, -4.0), (3.0, 0.7)] {
        fw.forward(&[theta], &[omega], &[0.0]).unwrap();
        let s = fw.d.sensordata.clone();
        // exact dynamics of the point mass: I = m L^2 (+ the tiny rotational inertia)
        let alpha = fw.d.qacc[0];
        let expect_alpha = -mass * g * len * theta.sin() / (mass * len * len + inertia);
        assert!((alpha - expect_alpha).abs() < 1e-9, "{alpha} vs {expect_alpha}");
        let (c, sn) = (theta.cos(), theta.sin());
        // r = R_y(theta) (0, 0, -L); its derivatives along the hinge axis y
        let r = Vec3::new(-len * sn, 0.0, -len * c);
        let y = Vec3::y();
        let a = (y * alpha).cross(&r) + (y * omega).cross(&(y * omega).cross(&r));
        let f_world = (a - Vec3::new(0.0, 0.0, -g)) * mass;
        let rot = Mat3::new(c, 0.0, sn, 0.0, 1.0, 0.0, -sn, 0.0, c); // R_y(theta)
        let f_body = rot.tr_mul(&f_world);
        for k in 0..3 {
            assert!(
                (s[k] - f_body[k]).abs() < 1e-8 * (1.0 + f_body.norm()),
                "force {s:?} vs {f_body}"
            );
        }
        assert!(s[4].abs() < 1e-12, "a hinge passes no torque about its axis: {}", s[4]);
        let acc = rot.tr_mul(&(a - Vec3::new(0.0, 0.0, -g)));
        for k in 0..3 {
            assert!(
                (s[6 + k] - acc[k]).abs() < 1e-8 * (1.0 + acc.norm()),
                "accelerometer {s:?} vs {acc}"
            );
        }
    }
}

#[test]
fn accelerometers_read_proper_acceleration() {
    // at rest on a static body: +g upwards, in the site's frame; in free fall without spin:
    // zero
    let xml = r#"
<mujoco>
  <worldbody>
    <site name="fixed" euler="30 -20 10"/>
    <body name="falling" pos="0 0 5">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
      <site name="imu" pos="0.05 0.1 -0.2" euler="15 25 35"/>
    </body>
  </worldbody>
  <sensor>
    <accelerometer site="fixed"/>
    <accelerometer site="imu"/>
    <force site="imu"/>
  </sensor>
</mujoco>"#;
    let m = mbd::mujoco::load_str(xml).unwrap().model;
    let mut fw = Forward::new(&m).unwrap();
    let mut q = m.qpos0.as_slice().to_vec();
    // a tilted free body: the unit quaternion of (0.6, 0.3, -0.4, 0.5)
    let norm = (0.36f64 + 0.09 + 0.16 + 0.25).sqrt();
    q[3..7].copy_from_slice(&[0.6 / norm, 0.3 / norm, -0.4 / norm, 0.5 / norm]);
    let v = [0.3, -0.2, 0.1, 0.0, 0.0, 0.0];
    fw.forward(&q, &v, &[0.0; 6]).unwrap();
    let s = fw.d.sensordata.clone();
    let site = &m.sites[0];
    let r = mbd::spatial::quat_to_mat(&site.quat);
    let up = r.tr_mul(&Vec3::new(0.0, 0.0, 9.81));
    for k in 0..3 {
        assert!((s[k] - up[k]).abs() < 1e-12, "static: {:?} vs {up}", &s[..3]);
        assert!(s[3 + k].abs() < 1e-9, "free fall: {:?}", &s[3..6]);
        assert!(
            s[6 + k].abs() < 1e-9,
            "a free body's joint carries nothing: {:?}",
            &s[6..9]
        );
    }
}

#[test]
fn a_free_humanoid_in_the_air_receives_nothing_through_its_root() {
    // no contact: the free joint carries no force, so cfrc_int of the root is zero, whatever the
    // joints do (the Newton-Euler sums of all bodies balance gravity exactly)
    let m = mbd::mujoco::load(root().join("tests/fixtures/models/public/dm_control/humanoid.xml"))
        .unwrap()
        .model;
    let mut fw = Forward::new(&m).unwrap();
    let mut q = m.qpos0.as_slice().to_vec();
    q[2] += 10.0; // far above the floor
    let mut seed = 7u64;
    let mut rnd = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let v: Vec<f64> = (0..m.nv).map(|_| 2.0 * rnd()).collect();
    fw.ctrl.iter_mut().for_each(|c| *c = rnd());
    fw.forward(&q, &v, &vec![0.0; m.nv]).unwrap();
    assert!(fw.d.contacts().is_empty());
    let post = fw.rne_post_constraint(&q, &v).clone();
    let root_body = m.mj_body_last[1];
    let f = post.cfrc_int[root_body];
    let scale = post
        .cfrc_int
        .iter()
        .fold(1.0f64, |s, x| s.max(x.f.norm()).max(x.n.norm()));
    assert!(
        f.f.norm() < 1e-10 * scale && f.n.norm() < 1e-10 * scale,
        "root: {f:?} (largest {scale})"
    );
}

#[test]
fn joint_torques_read_back_from_cfrc_int() {
    // cdof . cfrc_int(body of dof) is what the joint itself carries: the applied, actuator and
    // passive forces plus the constraint forces of rows acting on joints alone (limits, dof and
    // fixed-tendon friction, couplings), less what accelerates the armature (a rotor inertia in M that no body
    // carries); the contact rows' share acts on the bodies (cfrc_ext) and is not in it. The
    // right side is built from the rows' Jacobians, not from the recursion.
    let fx = fixture();
    let mut checked = 0;
    for c in fx
        .cases
        .iter()
        .filter(|c| ["dmc_humanoid", "quadruped", "cheetah"].contains(&c.name.as_str()))
    {
        let m = model(c);
        assert!(m
            .tendons
            .iter()
            .all(|t| matches!(t.kind, mbd::model::TendonKind::Fixed { .. })));
        let mut fw = run(&m, c);
        let post = fw.rne_post_constraint(&c.qpos, &c.qvel).clone();
        let d = &fw.d;
        let mut joint_rows = vec![0.0; m.nv];
        for i in 0..d.efc.efc_type.len() {
            use mbd::mujoco::constraint::EfcType as T;
            // joint-space rows: limits and friction of dofs and of fixed tendons, joint and
            // tendon couplings (these models have no spatial tendon); not contacts, connects,
            // welds
            let body_row = match d.efc.efc_type[i] {
                T::ContactFrictionless | T::ContactPyramidal | T::ContactElliptic => true,
                T::Equality => matches!(
                    m.equality[d.efc.efc_id[i]],
                    mbd::model::Equality::Connect { .. } | mbd::model::Equality::Weld { .. }
                ),
                _ => false,
            };
            if !body_row {
                let (cols, vals) = d.efc.j.row(i);
                for (&col, &val) in cols.iter().zip(vals) {
                    joint_rows[col] += val * d.efc_force[i];
                }
            }
        }
        let scale = d.qfrc_constraint.iter().fold(1.0f64, |s, x| s.max(x.abs()));
        let armature = m.dof_armature();
        for dof in 0..m.nv {
            let b = m.dof_body[dof];
            let carried = d.data.cdof[dof].dot(&post.cfrc_int[b]);
            let expect = d.qfrc_applied[dof] + d.qfrc_actuator[dof] + d.qfrc_passive[dof] + joint_rows[dof]
                - armature[dof] * d.qacc[dof];
            assert!(
                (carried - expect).abs() < 1e-8 * scale,
                "{} dof {dof}: {carried} vs {expect}",
                c.name
            );
        }
        checked += 1;
    }
    assert!(checked >= 10);
}

#[test]
fn bad_sensors_are_errors_naming_the_line() {
    let wrap = |sensor: &str| {
        format!(
            r#"<mujoco>
  <worldbody>
    <body name="b">
      <joint name="hinge"/>
      <joint name="ball" type="ball"/>
      <geom size="0.1"/>
      <site name="s"/>
    </body>
  </worldbody>
  <sensor>
    {sensor}
  </sensor>
</mujoco>"#
        )
    };
    for (sensor, why) in [
        (
            r#"<camprojection site="s" camera="c"/>"#,
            "sensor <camprojection> is not supported",
        ),
        (r#"<touch site="nowhere"/>"#, "unknown site"),
        (r#"<touch/>"#, "required attribute 'site' is missing"),
        (r#"<jointpos joint="ball"/>"#, "must be a hinge or a slide"),
        (r#"<ballquat joint="hinge"/>"#, "must be a ball joint"),
        (
            r#"<framexaxis objtype="site" objname="s" cutoff="1"/>"#,
            "cannot apply to an axis",
        ),
        (r#"<touch site="s" cutoff="-1"/>"#, "negative cutoff"),
        (r#"<touch site="s" delay="0.1"/>"#, "sensor history"),
        (r#"<framepos objtype="site"/>"#, "'objtype' is given without 'objname'"),
        (
            r#"<framepos objtype="site" objname="s" reftype="body"/>"#,
            "'reftype' is given without 'refname'",
        ),
        (r#"<framepos objtype="camera" objname="s"/>"#, "cameras are not read"),
        (r#"<framepos objtype="joint" objname="hinge"/>"#, "unknown object type"),
        (r#"<rangefinder site="s" data="dist normal"/>"#, "only data=\"dist\""),
    ] {
        let e = match mbd::mjcf::load_str(&wrap(sensor)) {
            Ok(_) => panic!("{sensor} loaded"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(why), "{sensor}: {e}");
        assert!(e.contains(":11"), "{sensor}: the line is named: {e}");
    }
}

// ------------------------------------------------------------------------------------------------
// Cartesian wrenches on bodies (xfrc_applied)
// ------------------------------------------------------------------------------------------------

#[test]
fn xfrc_applied_enters_qfrc_smooth_as_mujoco_does() {
    // the cases with wrenches: qfrc_smooth (where J^T xfrc lands) to rounding; their sensors and
    // cfrc_ext are compared with the others above
    let fx = fixture();
    let mut seen = 0;
    for c in fx.cases.iter().filter(|c| c.xfrc_applied.iter().any(|&x| x != 0.0)) {
        let m = model(c);
        let fw = run(&m, c);
        let (e, _) = worst(&fw.d.qfrc_smooth, &c.qfrc_smooth, &[m.nv]);
        assert!(e <= TOL_EXACT, "{} ({}): qfrc_smooth rel {e:.2e}", c.name, c.cone);
        seen += 1;
    }
    assert_eq!(seen, 8, "4 states per cone with wrenches");
}

/// MuJoCo's wrenches of the xfrc rollouts (`xfrc_law` of the fixture script).
fn xfrc_law(t: f64, nbody: usize) -> Vec<[f64; 6]> {
    (0..nbody)
        .map(|b| {
            if b == 0 {
                return [0.0; 6];
            }
            let bf = b as f64;
            [
                (t + bf).sin(),
                (1.3 * t).cos(),
                0.5 * (2.0 * t).sin(),
                0.1 * t.sin(),
                0.0,
                0.2 * (t + bf).cos(),
            ]
        })
        .collect()
}

#[test]
fn rollouts_under_xfrc_applied_match_mujoco() {
    // the acrobot takes Featherstone's route (RNEA and ABA, or M's factor for implicit): the
    // wrenches go through the world dof axes (dynamics::xfrc_into); sensors.xml through the
    // com-based mj_xfrcAccumulate of MuJoCo's pipeline
    let fx = fixture();
    assert_eq!(fx.xfrc_rollouts.len(), 4);
    for r in &fx.xfrc_rollouts {
        let mut m = mbd::mujoco::load(root().join(&r.model)).unwrap().model;
        m.opt.integrator = mbd::model::Integrator::parse(&r.integrator).unwrap();
        let mut sim = Simulator::new(&m, State::reference(&m), m.opt.integrator).unwrap();
        let mut rows = r.qpos.iter();
        let mut w: f64 = 0.0;
        for k in 1..=r.steps {
            sim.state.xfrc_applied = xfrc_law(sim.state.time, m.mj_nbody());
            sim.step().unwrap();
            if k % r.every == 0 {
                let theirs = rows.next().unwrap();
                let (e, _) = worst(&sim.state.qpos, theirs, &[m.nq]);
                assert!(
                    e < 1e-9,
                    "{} ({}): qpos after step {k} off by {e:.2e}",
                    r.name,
                    r.integrator
                );
                w = w.max(e);
            }
        }
        println!("{} ({}): worst qpos {w:.2e}", r.name, r.integrator);
    }
}

#[test]
fn xfrc_applied_is_the_transposed_jacobian_of_the_centre_of_mass() {
    // three routes to J^T [f; t]: the world dof axes (Featherstone's side), cdof (MuJoCo's side)
    // and the dense point and rotation Jacobians of kinematics::point_jacobian
    let m = mbd::mujoco::load(root().join("tests/fixtures/models/public/dm_control/humanoid.xml"))
        .unwrap()
        .model;
    let mut q = m.qpos0.as_slice().to_vec();
    for (k, x) in q.iter_mut().enumerate().skip(7) {
        *x += 0.3 * ((k as f64) * 1.7).sin();
    }
    let nb = m.mj_nbody();
    let xfrc: Vec<[f64; 6]> = (0..nb)
        .map(|b| {
            std::array::from_fn(|k| {
                if b == 0 {
                    0.0
                } else {
                    ((b * 6 + k) as f64 * 0.77).sin() * 5.0
                }
            })
        })
        .collect();
    let mut axes = mbd::kinematics::WorldAxes::default();
    axes.update(&m, &q, &[]);
    let mut via_axes = vec![0.0; m.nv];
    mbd::dynamics::xfrc_into(&m, &axes, &xfrc, &mut via_axes);
    let d = mbd::mujoco::forward_smooth(&m, &q, &vec![0.0; m.nv]).unwrap();
    let mut via_cdof = vec![0.0; m.nv];
    mbd::mujoco::forward::xfrc_accumulate(&m, &d, &xfrc, &mut via_cdof);
    let mut dense = vec![0.0; m.nv];
    for (mb, w) in xfrc.iter().enumerate().skip(1) {
        let b = m.mj_body_last[mb];
        let com = m.inertia[b].com();
        let jp = mbd::kinematics::point_jacobian(&m, &q, b, &com).unwrap();
        let jb = mbd::kinematics::body_jacobian(&m, &q, b).unwrap();
        // the body Jacobian's angular rows are in body axes: rotate the torque into them
        let kin = mbd::kinematics::forward_kinematics(&m, &q).unwrap();
        let t_body = kin.rotation(b).tr_mul(&Vec3::new(w[3], w[4], w[5]));
        for dof in 0..m.nv {
            dense[dof] += (0..3).map(|r| jp[(r, dof)] * w[r]).sum::<f64>();
            dense[dof] += (0..3).map(|r| jb[(r, dof)] * t_body[r]).sum::<f64>();
        }
    }
    let scale = dense.iter().fold(1.0f64, |s, x| s.max(x.abs()));
    for dof in 0..m.nv {
        assert!((via_axes[dof] - dense[dof]).abs() < 1e-12 * scale, "axes, dof {dof}");
        assert!((via_cdof[dof] - dense[dof]).abs() < 1e-12 * scale, "cdof, dof {dof}");
    }
}

#[test]
fn a_pushed_free_body_accelerates_as_newton_says() {
    // F at the centre of mass of a free box in zero gravity: a = F / m, no rotation; a torque
    // alone: I dw/dt = t (at rest, no gyroscopic term); and the interaction force with the
    // world stays zero
    let xml = r#"
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="box" pos="0 0 1" euler="20 30 40">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.3" mass="2.5"/>
    </body>
  </worldbody>
</mujoco>"#;
    let m = mbd::mujoco::load_str(xml).unwrap().model;
    let mut fw = Forward::new(&m).unwrap();
    let q = m.qpos0.as_slice().to_vec();
    fw.xfrc_applied[1] = [1.0, -2.0, 3.0, 0.0, 0.0, 0.0];
    fw.forward(&q, &[0.0; 6], &[0.0; 6]).unwrap();
    let a = &fw.d.qacc;
    for (k, f) in [1.0, -2.0, 3.0].iter().enumerate() {
        assert!((a[k] - f / 2.5).abs() < 1e-12, "{a:?}");
        assert!(a[3 + k].abs() < 1e-12, "{a:?}");
    }
    let post = fw.rne_post_constraint(&q, &[0.0; 6]).clone();
    let b = m.mj_body_last[1];
    assert!(post.cfrc_int[b].f.norm() < 1e-12 && post.cfrc_int[b].n.norm() < 1e-12);
    assert!((post.cfrc_ext[b].f - Vec3::new(1.0, -2.0, 3.0)).norm() < 1e-12);
    // a bad wrench is an error naming it
    fw.xfrc_applied[1][4] = f64::NAN;
    let e = fw.forward(&q, &[0.0; 6], &[0.0; 6]).unwrap_err().to_string();
    assert!(e.contains("xfrc_applied"), "{e}");
    fw.xfrc_applied.pop();
    let e = fw.forward(&q, &[0.0; 6], &[0.0; 6]).unwrap_err().to_string();
    assert!(e.contains("xfrc_applied"), "{e}");
}

#[test]
fn a_sensor_naming_nothing_is_an_error_not_a_panic() {
    // a model edited by hand: the pipeline refuses a sensor whose site, joint or frame is not
    // there, or whose cutoff is negative, before evaluating anything
    use mbd::model::{Sensor, SensorFrame};
    let base = mbd::mujoco::load_str(mbd::figures::sensors::PENDULUM).unwrap().model;
    let hinge = base.mj_body_last[1];
    for (kind, cutoff, needle) in [
        (SensorKind::Touch(9), 0.0, "names no such element"),
        (SensorKind::BallQuat(hinge), 0.0, "names no such element"),
        (
            SensorKind::FramePos {
                obj: SensorFrame::Site(0),
                reference: Some(SensorFrame::Geom(3)),
            },
            0.0,
            "names no such element",
        ),
        (SensorKind::JointPos(hinge), -1.0, "cutoff -1"),
    ] {
        let mut m = base.clone();
        m.sensors.push(Sensor {
            name: "bad".into(),
            kind,
            cutoff,
            noise: 0.0,
        });
        let e = Forward::new(&m).err().expect("refused").to_string();
        assert!(e.contains("sensor 3 ('bad')") && e.contains(needle), "{e}");
        assert!(m.validate().is_err());
    }
}
