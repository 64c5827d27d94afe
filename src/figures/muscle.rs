//! Figures and report of MuJoCo's muscle actuator (chapter "Integrators and the simulation
//! loop", section Actuation; MuJoCo's `mju_muscleGain`, `mju_muscleBias`, `mju_muscleDynamics`).
//!
//! - `muscle_length.svg`: the active force-length curve `FL(L)` and the passive curve
//!   `fpmax FP(L)` against the normalized length, with MuJoCo's default parameters;
//! - `muscle_velocity.svg`: the force-velocity curve `FV(V)` against the normalized velocity;
//! - `muscle_arm.svg`: the arm of `tests/fixtures/models/arm_muscles.xml` (embedded) driven by a
//!   burst of its flexor and then of its extensor: the elbow angle and the two activations.

use crate::dynamics::{muscle_bias, muscle_dynamics, muscle_gain};
use crate::error::Result;
use crate::model::Integrator;
use crate::mujoco::integrator::{Simulator, State};
use crate::plot::{Chart, Series};
use std::path::{Path, PathBuf};

/// The arm with four muscles of the tests (two tendon muscles, two joint muscles).
pub const ARM_XML: &str = include_str!("../../tests/fixtures/models/arm_muscles.xml");

/// MuJoCo's default muscle parameters (`gainprm` of `<muscle>`): range 0.75..1.05, force
/// 1 (so the curves read in units of F0), scale 200, lmin 0.5, lmax 1.6, vmax 1.5, fpmax 1.3,
/// fvmax 1.2.
pub const DEFAULT_PRM: [f64; 10] = [0.75, 1.05, 1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2, 0.0];

/// A sampled curve, `(x, y)` points.
pub type Curve = Vec<(f64, f64)>;

// ANCHOR: muscle_curves
/// The three curves sampled through the library's own [`muscle_gain`] and [`muscle_bias`]
/// (not a second copy of the formulas): with `lengthrange = (range[0], range[1])` the actuator
/// length is the normalized length `L` itself and `L0 = 1`, so `-muscle_gain(L, 0) = FL(L)`,
/// `-muscle_bias(L) = fpmax FP(L)` and, at the optimum `L = 1` (`FL = 1`), `-muscle_gain(1,
/// V vmax) = FV(V)`. Returns `(FL, fpmax FP, FV)` as `(x, y)` points.
pub fn muscle_curves() -> (Curve, Curve, Curve) {
    let prm = DEFAULT_PRM;
    let lr = [prm[0], prm[1]];
    let n = 400;
    let lengths: Vec<f64> = (0..=n).map(|k| 0.3 + 1.5 * k as f64 / n as f64).collect();
    let fl = lengths
        .iter()
        .map(|&l| (l, -muscle_gain(l, 0.0, &lr, 1.0, &prm)))
        .collect();
    let fp = lengths.iter().map(|&l| (l, -muscle_bias(l, &lr, 1.0, &prm))).collect();
    let fv = (0..=n)
        .map(|k| {
            let v = -1.4 + 2.0 * k as f64 / n as f64;
            (v, -muscle_gain(1.0, v * prm[6], &lr, 1.0, &prm))
        })
        .collect();
    (fl, fp, fv)
}
// ANCHOR_END: muscle_curves

/// The arm under a flexor burst (`ctrl = 1` on both flexors for `0.2 <= t < 0.7` s) then an
/// extensor burst (`0.9 <= t < 1.4` s), 2 s with `integrator`: `(t, elbow angle)`, `(t, flexor
/// activation)`, `(t, extensor activation)`.
pub fn arm_bursts(integrator: Integrator) -> Result<[Curve; 3]> {
    let model = crate::mjcf::load_str(ARM_XML)?.model;
    let mut sim = Simulator::new(&model, State::reference(&model), integrator)?;
    let (mut elbow, mut flex, mut ext) = (Vec::new(), Vec::new(), Vec::new());
    let steps = (2.0 / model.opt.timestep).round() as usize;
    for _ in 0..steps {
        let t = sim.state.time;
        let f = if (0.2..0.7).contains(&t) { 1.0 } else { 0.0 };
        let e = if (0.9..1.4).contains(&t) { 1.0 } else { 0.0 };
        // actuators: flexor, extensor (tendons), shoulder_flexor, elbow_extensor (joints)
        sim.state.ctrl.copy_from_slice(&[f, e, f, e]);
        sim.step()?;
        elbow.push((sim.state.time, sim.state.qpos[1]));
        flex.push((sim.state.time, sim.state.act[0]));
        ext.push((sim.state.time, sim.state.act[1]));
    }
    Ok([elbow, flex, ext])
}

/// Prints the section's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("MuJoCo's muscle actuator (mju_muscleGain, mju_muscleBias, mju_muscleDynamics)");
    let (fl, fp, fv) = muscle_curves();
    let peak = fl
        .iter()
        .fold((0.0, 0.0), |m: (f64, f64), p| if p.1 > m.1 { *p } else { m });
    println!("  FL peaks at L = {:.3} with {:.3}; FP(1.6) = {:.3}", peak.0, peak.1, {
        let prm = DEFAULT_PRM;
        -muscle_bias(1.6, &[prm[0], prm[1]], 1.0, &prm)
    });
    let dyn_prm = [0.01, 0.04, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    println!(
        "  act_dot at act = 0.5: activating to 1 {:.1} 1/s, deactivating to 0 {:.1} 1/s",
        muscle_dynamics(1.0, 0.5, &dyn_prm),
        muscle_dynamics(0.0, 0.5, &dyn_prm)
    );
    let path = dir.join("muscle_length.svg");
    Chart::new(
        "Muscle force-length curves (MuJoCo defaults)",
        "normalized length L = l / L0",
        "force / F0",
    )
    .with(Series::line("active FL(L)", fl))
    .with(Series::dashed("passive fpmax FP(L)", fp))
    .save_svg(&path)?;
    out.push(path);
    let path = dir.join("muscle_velocity.svg");
    Chart::new(
        "Muscle force-velocity curve (MuJoCo defaults)",
        "normalized velocity V = ldot / (L0 vmax)",
        "force / (F0 FL)",
    )
    .with(Series::line("FV(V)", fv))
    .save_svg(&path)?;
    out.push(path);
    let [elbow, flex, ext] = arm_bursts(Integrator::Implicit)?;
    let (lo, hi) = elbow
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
    println!("  arm (implicit, 2 s): elbow angle between {lo:.3} and {hi:.3} rad");
    let path = dir.join("muscle_arm.svg");
    Chart::new(
        "Two-link arm: a flexor burst, then an extensor burst",
        "time (s)",
        "elbow angle (rad), activation",
    )
    .with(Series::line("elbow angle", elbow))
    .with(Series::dashed("flexor activation", flex))
    .with(Series::dashed("extensor activation", ext))
    .save_svg(&path)?;
    out.push(path);
    Ok(out)
}
