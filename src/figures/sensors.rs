//! Figures of the section "What the pipeline reports" of the chapter "The constrained pipeline"
//! ([`crate::mujoco::sensor`]).
//!
//! - `forward_sensor_pendulum.svg`: a pendulum (a point mass on a massless rod) released from
//!   120 degrees; the force sensor at its pivot, in the rod's frame, against Newton's law at the
//!   same state: the rod's tension `m g cos(theta) + m L omega^2` and no force across the rod.
//! - `forward_sensor_humanoid.svg`: the dm_control humanoid dropped on its floor: the torso
//!   accelerometer's upward reading (0 in free fall, spikes at the impacts, `g` at rest) and the
//!   sum of its foot touch sensors, relative to its weight.

use crate::error::Result;
use crate::model::Model;
use crate::mujoco::integrator::{Simulator, State};
use crate::plot::{Chart, Series};
use std::path::{Path, PathBuf};

/// The pendulum: mass `PEND_MASS` at `PEND_LENGTH` below a hinge about y, force and torque
/// sensors at the pivot (in the rod's frame) and an accelerometer at the mass.
pub const PENDULUM: &str = r#"
<mujoco model="sensor pendulum">
  <option timestep="0.001" integrator="RK4"/>
  <worldbody>
    <body name="rod">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -0.7" mass="1.9" diaginertia="1e-9 1e-9 1e-9"/>
      <site name="pivot"/>
      <site name="bob" pos="0 0 -0.7"/>
    </body>
  </worldbody>
  <sensor>
    <force name="pivot_force" site="pivot"/>
    <torque name="pivot_torque" site="pivot"/>
    <accelerometer name="bob_acc" site="bob"/>
  </sensor>
</mujoco>"#;
/// The pendulum's mass (kg).
pub const PEND_MASS: f64 = 1.9;
/// The pendulum's length (m).
pub const PEND_LENGTH: f64 = 0.7;
/// The mass's rotational inertia about its centre (kg m^2), as small as MuJoCo allows a body.
pub const PEND_INERTIA: f64 = 1e-9;

/// One sample of the pendulum: time, angle, and the pivot force sensor's components along the
/// rod (tension, towards the pivot) and across it, with Newton's tension at the same state.
#[derive(Clone, Copy, Debug)]
pub struct PendulumSample {
    /// Time (s).
    pub t: f64,
    /// Angle from the downward vertical (rad).
    pub theta: f64,
    /// The sensor's force along the rod, pointing from the mass to the pivot (N).
    pub tension: f64,
    /// The sensor's force across the rod (N).
    pub across: f64,
    /// Newton's law at the same state, along the rod: `m g cos(theta) + m L omega^2` (N).
    pub newton: f64,
    /// Newton's law across the rod, along the rod frame's x axis: `-m g sin(theta) I / (m L^2 +
    /// I)` for the mass's own tiny rotational inertia `I` (zero for a point mass: gravity alone
    /// swings it) (N).
    pub newton_across: f64,
}

// ANCHOR: pendulum_sensor
/// The pendulum released from rest at `theta0`, stepped `steps` times: the sensor reading at
/// the start of each step (what `mj_step` leaves in `sensordata`) and Newton's tension at that
/// state. The force sensor reports the force the rod receives from its parent, in the site's
/// frame, whose z axis runs along the rod towards the pivot.
pub fn pendulum_samples(theta0: f64, steps: usize) -> Result<Vec<PendulumSample>> {
    let model = crate::mujoco::load_str(PENDULUM)?.model;
    let mut state = State::reference(&model);
    state.qpos[0] = theta0;
    let mut sim = Simulator::new(&model, state, model.opt.integrator)?;
    let g = model.opt.gravity.norm();
    let mut out = Vec::with_capacity(steps);
    for _ in 0..steps {
        let (t, theta, omega) = (sim.state.time, sim.state.qpos[0], sim.state.qvel[0]);
        sim.step()?;
        let s = sim.sensordata();
        out.push(PendulumSample {
            t,
            theta,
            tension: s[2],
            across: s[0],
            newton: PEND_MASS * g * theta.cos() + PEND_MASS * PEND_LENGTH * omega * omega,
            newton_across: -PEND_MASS * g * theta.sin() * PEND_INERTIA
                / (PEND_MASS * PEND_LENGTH * PEND_LENGTH + PEND_INERTIA),
        });
    }
    Ok(out)
}
// ANCHOR_END: pendulum_sensor

/// One sample of the dropped humanoid: time, the torso accelerometer's reading along the world
/// vertical, and the summed foot touch sensors relative to the weight.
#[derive(Clone, Copy, Debug)]
pub struct HumanoidSample {
    /// Time (s).
    pub t: f64,
    /// The accelerometer's proper acceleration projected on the world's up axis (m/s^2).
    pub up: f64,
    /// Sum of the four foot touch sensors over the weight.
    pub feet: f64,
}

/// The dm_control humanoid with its sensors (Apache 2.0,
/// `tests/fixtures/models/public/dm_control/humanoid.xml`, which includes files beside it).
pub fn humanoid() -> Result<Model> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/public/dm_control/humanoid.xml");
    Ok(crate::mujoco::load(path)?.model)
}

/// The humanoid dropped from `qpos0` with zero controls for `steps` steps: the torso
/// accelerometer's upward reading and the feet's touch sensors at the start of every step.
pub fn humanoid_samples(steps: usize) -> Result<Vec<HumanoidSample>> {
    let model = humanoid()?;
    let sensor = |name: &str| -> usize {
        let mut at = 0;
        for s in &model.sensors {
            if s.name == name {
                return at;
            }
            at += s.kind.dim();
        }
        usize::MAX
    };
    let acc = sensor("torso_accel");
    let feet: Vec<usize> = [
        "right_right_foot_touch",
        "left_right_foot_touch",
        "right_left_foot_touch",
        "left_left_foot_touch",
    ]
    .iter()
    .map(|n| sensor(n))
    .collect();
    let weight = (1..=model.nb).map(|i| model.inertia[i].m).sum::<f64>() * model.opt.gravity.norm();
    let site = model.sites.iter().position(|s| s.name == "root").unwrap_or(0);
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator)?;
    let mut out = Vec::with_capacity(steps);
    for _ in 0..steps {
        let t = sim.state.time;
        sim.step()?;
        // the site's frame in the world, at the step's start: its rotation's third row maps
        // site-frame components to the world's up component
        let fd = sim
            .forward_data()
            .expect("a model with sensors runs the constrained pipeline");
        let (_, rot, _) = crate::mujoco::sensor::frame_pose(&model, &fd.data, crate::model::SensorFrame::Site(site));
        let s = sim.sensordata();
        let a = crate::spatial::Vec3::new(s[acc], s[acc + 1], s[acc + 2]);
        out.push(HumanoidSample {
            t,
            up: (rot * a).z,
            feet: feet.iter().map(|&k| s[k]).sum::<f64>() / weight,
        });
    }
    Ok(out)
}

/// Generates the section's figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    println!("What the pipeline reports (mj_rnePostConstraint and sensors)");
    let samples = pendulum_samples(120f64.to_radians(), 2000)?;
    let worst = samples
        .iter()
        .map(|s| (s.tension - s.newton).abs().max((s.across - s.newton_across).abs()))
        .fold(0.0, f64::max);
    println!("  pendulum from 120 deg, 2 s: pivot force sensor vs Newton's law, worst difference {worst:.1e} N");
    let every = |k: usize| k.is_multiple_of(25);
    let chart = Chart::new(
        "Force sensor at a pendulum's pivot, in the rod's frame",
        "time t (s)",
        "force on the rod (N)",
    )
    .ranges(None, Some((-15.0, 115.0)))
    .with(Series::line(
        "Newton: m g cos θ + m L ω²",
        samples.iter().map(|s| (s.t, s.newton)).collect(),
    ))
    .with(Series::points(
        "sensor, along the rod",
        samples
            .iter()
            .enumerate()
            .filter(|(k, _)| every(*k))
            .map(|(_, s)| (s.t, s.tension))
            .collect(),
    ))
    .with(Series::points(
        "sensor, across the rod",
        samples
            .iter()
            .enumerate()
            .filter(|(k, _)| every(*k))
            .map(|(_, s)| (s.t, s.across))
            .collect(),
    ));
    let p = dir.join("forward_sensor_pendulum.svg");
    chart.save_svg(&p)?;
    out.push(p);

    let h = humanoid_samples(600)?;
    let g = 9.81;
    let fall = h
        .iter()
        .take_while(|s| s.feet == 0.0)
        .map(|s| s.up.abs())
        .fold(0.0, f64::max);
    let last = h.last().map(|s| (s.up, s.feet)).unwrap_or_default();
    println!(
        "  humanoid dropped: |accelerometer| in free fall <= {fall:.1e} m/s^2; after 3 s it reads {:.3} m/s^2 up, feet carry {:.2} of the weight",
        last.0, last.1
    );
    let chart = Chart::new(
        "The dm_control humanoid dropped on its floor: torso accelerometer and foot touch sensors",
        "time t (s)",
        "reading / g, touch / weight",
    )
    .ranges(None, Some((-1.0, 5.0)))
    .with(Series::line(
        "accelerometer, world-up component / g",
        h.iter().map(|s| (s.t, s.up / g)).collect(),
    ))
    .with(Series::line(
        "feet's touch sensors / weight",
        h.iter().map(|s| (s.t, s.feet)).collect(),
    ));
    let p = dir.join("forward_sensor_humanoid.svg");
    chart.save_svg(&p)?;
    out.push(p);

    // the agreement table, written beside the figures' directory into `generated/`
    let (rows, rollouts) = sensor_agreement()?;
    let table = sensor_agreement_table(&rows, &rollouts);
    super::write_generated(dir, "sensor_agreement.md", &table)?;
    super::write_generated(dir, "sensor_pendulum.md", &format!("{worst:.0e}"))?;
    print!("{table}");
    Ok(out)
}

/// The agreement of one model's sensors with MuJoCo's over the fixture's states.
#[derive(Clone, Debug, Default)]
pub struct SensorAgreement {
    /// Fixture name and cone.
    pub name: String,
    /// States compared.
    pub states: usize,
    /// Numbers of `sensordata`.
    pub nsensordata: usize,
    /// Worst relative error of a sensor, given MuJoCo's `qacc`, `efc_force` and contact frames.
    pub given: f64,
    /// Worst relative error of `cacc`, `cfrc_int`, `cfrc_ext`, given the same.
    pub post: f64,
    /// Worst relative error of a sensor with our own solver, over the states where the two
    /// pipelines' `qacc` agree to 1e-9, and how many states those are.
    pub end_to_end: (f64, usize),
}

/// A rollout's agreement: name, integrator, steps, worst sensor.
pub type RolloutAgreement = (String, String, usize, f64);

/// `max |a - b| / max(max |b|, 1)` per group of `n` numbers, the worst over the groups.
fn worst_rel(a: &[f64], b: &[f64], n: usize) -> f64 {
    if a.len() != b.len() {
        return f64::NAN;
    }
    a.chunks(n.max(1))
        .zip(b.chunks(n.max(1)))
        .map(|(x, y)| {
            let scale = y.iter().fold(1.0f64, |s, v| s.max(v.abs()));
            x.iter().zip(y).map(|(p, q)| (p - q).abs() / scale).fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

/// Per-sensor worst relative error (each sensor's numbers share a scale).
fn worst_per_sensor(model: &Model, ours: &[f64], theirs: &[f64]) -> f64 {
    if ours.len() != theirs.len() {
        return f64::NAN;
    }
    let mut at = 0;
    let mut w: f64 = 0.0;
    for s in &model.sensors {
        let n = s.kind.dim();
        w = w.max(worst_rel(&ours[at..at + n], &theirs[at..at + n], n));
        at += n;
    }
    w
}

/// Compares the sensors with MuJoCo's on every case of `tests/fixtures/sensors.json` (made by
/// `tests/fixtures/make_sensor_fixtures.py`), as `tests/sensors.rs` does, for the chapter's
/// table; and the rollouts: `(name, integrator, steps, worst sensor)`.
pub fn sensor_agreement() -> Result<(Vec<SensorAgreement>, Vec<RolloutAgreement>)> {
    use crate::mujoco::forward::Forward;
    use crate::spatial::{Mat3, Vec3};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fx = super::read_json(&root.join("tests/fixtures/sensors.json"))?;
    let nums = super::numbers;
    let empty = vec![];
    let mut rows: Vec<SensorAgreement> = vec![];
    for c in fx["cases"].as_array().unwrap_or(&empty) {
        let name = format!(
            "{} ({})",
            c["name"].as_str().unwrap_or("?"),
            c["cone"].as_str().unwrap_or("?")
        );
        let mut m = crate::mujoco::load(root.join(c["model"].as_str().unwrap_or("")))?.model;
        m.opt.cone = crate::model::Cone::parse(c["cone"].as_str().unwrap_or("pyramidal"))?;
        m.opt.solver = crate::model::Solver::Newton;
        m.opt.tolerance = 1e-12;
        m.opt.iterations = 1000;
        let (q, v) = (nums(&c["qpos"]), nums(&c["qvel"]));
        let mut fw = Forward::new(&m)?;
        fw.options.ls_iterations = 100;
        fw.ctrl.copy_from_slice(&nums(&c["ctrl"]));
        fw.xfrc_applied = nums(&c["xfrc_applied"])
            .chunks_exact(6)
            .map(|w| std::array::from_fn(|k| w[k]))
            .collect();
        fw.forward(&q, &v, &vec![0.0; m.nv])?;
        let theirs = nums(&c["sensordata"]);
        let e2e = (worst_rel(&fw.d.qacc, &nums(&c["qacc"]), m.nv) <= 1e-9)
            .then(|| worst_per_sensor(&m, &fw.d.sensordata, &theirs));
        // MuJoCo's solution and contact frames in our data, when the contacts are the same
        let contacts = c["contacts"].as_array().unwrap_or(&empty);
        let same = fw.d.efc.contacts.len() == contacts.len()
            && fw.d.efc_force.len() == nums(&c["efc_force"]).len()
            && fw.d.efc.contacts.iter().zip(contacts).all(|(a, b)| {
                let g = nums(&b["geom"]);
                g.len() == 2 && a.geom == [g[0] as usize, g[1] as usize]
            });
        let (mut given, mut post) = (f64::NAN, f64::NAN);
        if same {
            for (a, b) in fw.d.efc.contacts.iter_mut().zip(contacts) {
                a.pos = Vec3::from_column_slice(&nums(&b["pos"]));
                a.frame = Mat3::from_row_slice(&nums(&b["frame"]));
            }
            fw.d.qacc.copy_from_slice(&nums(&c["qacc"]));
            fw.d.efc_force.copy_from_slice(&nums(&c["efc_force"]));
            fw.sensors_with(&q, &v);
            given = worst_per_sensor(&m, &fw.d.sensordata, &theirs);
            let p = fw.rne_post_constraint(&q, &v).clone();
            let six =
                |f: &dyn Fn(usize) -> [f64; 6]| -> Vec<f64> { m.mj_body_last.iter().flat_map(|&b| f(b)).collect() };
            let cacc = six(&|b| {
                let a = p.cacc[b];
                [a.w.x, a.w.y, a.w.z, a.v.x, a.v.y, a.v.z]
            });
            let int = six(&|b| {
                let f = p.cfrc_int[b];
                [f.n.x, f.n.y, f.n.z, f.f.x, f.f.y, f.f.z]
            });
            let ext = six(&|b| {
                let f = p.cfrc_ext[b];
                [f.n.x, f.n.y, f.n.z, f.f.x, f.f.y, f.f.z]
            });
            post = worst_rel(&cacc, &nums(&c["cacc"]), 6)
                .max(worst_rel(&int, &nums(&c["cfrc_int"]), 6))
                .max(worst_rel(&ext, &nums(&c["cfrc_ext"]), 6));
        }
        let nan_max = |a: f64, b: f64| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) };
        match rows.iter_mut().find(|r| r.name == name) {
            Some(r) => {
                r.states += 1;
                r.given = nan_max(r.given, given);
                r.post = nan_max(r.post, post);
                if let Some(e) = e2e {
                    r.end_to_end = (nan_max(r.end_to_end.0, e), r.end_to_end.1 + 1);
                }
            }
            None => rows.push(SensorAgreement {
                name,
                states: 1,
                nsensordata: theirs.len(),
                given,
                post,
                end_to_end: e2e.map_or((0.0, 0), |e| (e, 1)),
            }),
        }
    }
    let mut rollouts = vec![];
    for r in fx["rollouts"].as_array().unwrap_or(&empty) {
        let mut m = crate::mujoco::load(root.join(r["model"].as_str().unwrap_or("")))?.model;
        let integ = r["integrator"].as_str().unwrap_or("Euler").to_string();
        m.opt.integrator = crate::model::Integrator::parse(&integ)?;
        let mut sim = Simulator::new(&m, State::reference(&m), m.opt.integrator)?;
        let mut w: f64 = 0.0;
        let rows_of = r["sensordata"].as_array().unwrap_or(&empty);
        let every = r["every"].as_u64().unwrap_or(1).max(1) as usize;
        for k in 1..=rows_of.len() * every {
            let t = sim.state.time;
            for (j, c) in sim.state.ctrl.iter_mut().enumerate() {
                *c = (2.0 * t + j as f64).sin();
            }
            sim.step()?;
            if k % every == 0 {
                w = w.max(worst_per_sensor(&m, sim.sensordata(), &nums(&rows_of[k / every - 1])));
            }
        }
        rollouts.push((
            r["name"].as_str().unwrap_or("?").to_string(),
            integ,
            rows_of.len() * every,
            w,
        ));
    }
    Ok((rows, rollouts))
}

/// The chapter's agreement table (markdown).
pub fn sensor_agreement_table(rows: &[SensorAgreement], rollouts: &[RolloutAgreement]) -> String {
    let f = |x: f64| {
        if x.is_nan() {
            "n/a".to_string()
        } else {
            format!("{x:.0e}")
        }
    };
    let mut t = String::from(
        "| model (cone) | states | sensordata | sensors, MuJoCo's solution | cacc, cfrc_int, cfrc_ext, MuJoCo's solution | sensors, end to end (states) |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        t += &format!(
            "| `{}` | {} | {} | {} | {} | {} ({}) |\n",
            r.name,
            r.states,
            r.nsensordata,
            f(r.given),
            f(r.post),
            f(r.end_to_end.0),
            r.end_to_end.1
        );
    }
    t += "\n| rollout | integrator | steps | worst sensor |\n|---|---|---|---|\n";
    for (name, integ, steps, w) in rollouts {
        t += &format!("| `{name}` | {integ} | {steps} | {} |\n", f(*w));
    }
    t
}
