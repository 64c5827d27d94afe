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

/// The pendulum: mass `PEND_MASS` at `PEND_LENGTH` below a hinge about y, a force sensor at the
/// pivot (in the rod's frame) and an accelerometer at the mass.
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
    Ok(out)
}
