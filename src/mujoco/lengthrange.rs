//! Actuator length ranges found by simulation, MuJoCo's `mj_setLengthRange`: the range
//! `actuator_lengthrange` of a muscle's length `l(q)` over the joint space, which the muscle maps
//! to its normalized range `gainprm[0..2]`. When the model does not give it, MuJoCo's compiler
//! finds it by pushing the mechanism to each end: from `qpos0` at rest, a generalized force
//! along the actuator's moment arm, scaled so that it accelerates the model by `accel`, drives
//! the length down (side 0) or up (side 1) for `inttotal` seconds while the velocity is damped
//! with time constant `timeconst`; joint and tendon limits stop it, and the extreme length over
//! the last `interval` seconds is the end of the range, if it moved by less than `tolrange`
//! times the range there.
//!
//! | MuJoCo | here |
//! |---|---|
//! | `mjLROpt`, `<compiler><lengthrange>` | [`LengthRangeOptions`] (in [`crate::model::Options`]) |
//! | `mjCModel::LengthRange` (the options of the run, the loop over actuators) | [`set_length_range`], [`length_range_model`] |
//! | `mj_setLengthRange` (mode, `useexisting`, `uselimit`, two sides, the checks) | [`needs_length_range`], [`length_range`] |
//! | `evalAct` (damp `qvel`, the pushing force, one step) | `eval_act` |
//! | `mj_loadXML` (read, compile, the length ranges) | [`load`], [`load_str`] |
//!
//! Book chapter: "Integrators and the simulation loop", section Actuation.

use super::integrator::{OnDivergence, Simulator, State};
use crate::dynamics::{crba, tendon_kinematics, transmission, TendonState};
use crate::error::{Error, Result};
use crate::mjcf::Loaded;
use crate::model::constants::mjMINVAL;
use crate::model::{
    Actuator, BiasType, DynType, GainType, Integrator, LengthRangeMode, LengthRangeOptions, Model, Transmission,
};
use crate::spatial::Vec3;
use nalgebra::{DMatrix, DVector};
use std::path::Path;

/// Whether `mj_setLengthRange` computes actuator `a`'s range under `opt`: its mode admits it
/// (`muscle` and `muscleuser`: a muscle gain or bias; `all`: any) and, with `useexisting`, the
/// model does not already give a range with `lengthrange[0] < lengthrange[1]`.
pub fn needs_length_range(opt: &LengthRangeOptions, a: &Actuator) -> bool {
    let muscle = a.gaintype == GainType::Muscle || a.biastype == BiasType::Muscle;
    let admitted = match opt.mode {
        LengthRangeMode::None => false,
        LengthRangeMode::Muscle | LengthRangeMode::MuscleUser => muscle,
        LengthRangeMode::All => true,
    };
    admitted && !(opt.useexisting && a.lengthrange[0] < a.lengthrange[1])
}

/// Checks the options at the door: positive `timeconst`-independent sizes (`timestep >= 0`,
/// `inttotal > 0`, `0 <= interval`), non-negative `accel`, `maxforce` and `tolrange`.
fn check_options(opt: &LengthRangeOptions) -> Result<()> {
    let checks = [
        ("lengthrange.accel", opt.accel, opt.accel > 0.0, "must be positive"),
        (
            "lengthrange.maxforce",
            opt.maxforce,
            opt.maxforce >= 0.0,
            "must be >= 0 (0: no cap)",
        ),
        (
            "lengthrange.timeconst",
            opt.timeconst,
            opt.timeconst >= 0.0,
            "must be >= 0",
        ),
        (
            "lengthrange.timestep",
            opt.timestep,
            opt.timestep >= 0.0,
            "must be >= 0 (0: the model's)",
        ),
        (
            "lengthrange.inttotal",
            opt.inttotal,
            opt.inttotal > 0.0,
            "must be positive",
        ),
        (
            "lengthrange.interval",
            opt.interval,
            opt.interval >= 0.0,
            "must be >= 0",
        ),
        (
            "lengthrange.tolrange",
            opt.tolrange,
            opt.tolrange >= 0.0,
            "must be >= 0",
        ),
    ];
    for (what, value, ok, why) in checks {
        if !value.is_finite() || !ok {
            return Err(Error::BadParameter {
                what: what.into(),
                value,
                why: why.into(),
            });
        }
    }
    Ok(())
}

// ANCHOR: length_range_model
/// The model `mjCModel::LengthRange` simulates: `model` with the disable flags replaced by
/// `frictionloss`, `contact`, `spring`, `damper`, `gravity` and `actuation` (the user's own
/// flags are cleared for the run) and the time step `opt.timestep` (the model's if 0). This
/// crate's pipeline reads the last four through the model's numbers, so they are applied here:
/// gravity zero, joint and tendon stiffness, damping and friction loss zero, no fluid, and
/// every actuator without force (no gain, bias or activation; its transmission, which gives
/// the length, is kept). Joint and tendon limits and equality constraints stay.
pub fn length_range_model(model: &Model, opt: &LengthRangeOptions) -> Model {
    let mut m = model.clone();
    m.opt.flags = ["frictionloss", "contact", "spring", "damper", "gravity", "actuation"]
        .iter()
        .map(|f| (f.to_string(), false))
        .collect();
    if opt.timestep > 0.0 {
        m.opt.timestep = opt.timestep;
    }
    m.opt.gravity = Vec3::zeros();
    m.opt.density = 0.0;
    m.opt.viscosity = 0.0;
    for j in m.joints.iter_mut() {
        j.stiffness = 0.0;
        j.damping = 0.0;
        j.frictionloss = 0.0;
    }
    for t in m.tendons.iter_mut() {
        t.stiffness = 0.0;
        t.damping = 0.0;
        t.frictionloss = 0.0;
    }
    for a in m.actuators.iter_mut() {
        a.dyntype = DynType::None;
        a.gaintype = GainType::Fixed;
        a.gainprm = [0.0; 10];
        a.biastype = BiasType::None;
        a.biasprm = [0.0; 10];
    }
    m
}
// ANCHOR_END: length_range_model

/// Scratch of [`eval_act`]: the tendon state and every actuator's length and moment arm.
struct ActScratch {
    length: Vec<f64>,
    moment: DMatrix<f64>,
}

// ANCHOR: eval_act
/// MuJoCo's `evalAct`: one step of the length-range simulation of actuator `index` pushed to
/// side 0 (shorter) or 1 (longer). The velocity is damped, `qvel *= exp(-h / max(0.01,
/// timeconst))`; at the current `q` the force along the moment arm `m_a` (the actuator's row
/// of `actuator_moment`) is
///
/// `f = (2 side - 1) accel m_a / |M^-1 m_a|`,
///
/// so that its acceleration `M^-1 f` has norm `accel` (capped at `|f| = maxforce` when that is
/// positive), applied as `qfrc_applied` for one step. Returns the actuator length at the
/// configuration before the step (MuJoCo's `mj_step1` computes it there).
fn eval_act(
    sim: &mut Simulator<'_>,
    index: usize,
    side: usize,
    opt: &LengthRangeOptions,
    s: &mut ActScratch,
) -> Result<f64> {
    let model = sim.model;
    let h = model.opt.timestep;
    let decay = (-h / opt.timeconst.max(0.01)).exp();
    for v in sim.state.qvel.iter_mut() {
        *v *= decay;
    }
    let q = &sim.state.qpos;
    let ten = if model.tendons.is_empty() {
        TendonState::new(model)
    } else {
        tendon_kinematics(model, q)?
    };
    transmission(model, q, &ten, &mut s.length, &mut s.moment)?;
    let moment: DVector<f64> = s.moment.row(index).transpose();
    let chol = crba(model, q.as_slice())?.cholesky().ok_or_else(|| Error::Singular {
        what: "the inertia matrix of the length-range simulation".into(),
        why: "it is not positive definite".into(),
    })?;
    let x = chol.solve(&moment);
    let sign = if side == 1 { 1.0 } else { -1.0 };
    let mut f = moment * (sign * opt.accel / x.norm().max(mjMINVAL));
    let nrm = f.norm();
    if opt.maxforce > 0.0 && nrm > opt.maxforce {
        f *= opt.maxforce / nrm.max(mjMINVAL);
    }
    sim.state.qfrc_applied.copy_from_slice(f.as_slice());
    let length = s.length[index];
    sim.step()?;
    Ok(length)
}
// ANCHOR_END: eval_act

// ANCHOR: length_range
/// MuJoCo's `mj_setLengthRange` simulation for actuator `index` of `lr` (a model made by
/// [`length_range_model`]): each side from `qpos0` at rest, `eval_act` until `time >=
/// inttotal`, the smallest (side 0) and largest (side 1) length after `time > inttotal -
/// interval`. Fails as MuJoCo does: [`Error::LengthRange`] when the simulation diverges
/// ("Unstable lengthrange simulation"), when the range is empty ("Invalid lengthrange"), or
/// when either end still moved by more than `tolrange` times the range over the interval
/// ("did not converge"); the run has at most `ceil(inttotal / h)` steps per side.
pub fn length_range(lr: &Model, index: usize, opt: &LengthRangeOptions) -> Result<[f64; 2]> {
    let a = &lr.actuators[index];
    let fail = |why: String| Error::LengthRange {
        actuator: index,
        name: a.name.clone(),
        why,
    };
    // RK4's mj_step2 integrates with Euler
    let integrator = match lr.opt.integrator {
        Integrator::Rk4 => Integrator::Euler,
        i => i,
    };
    let nu = lr.actuators.len();
    let mut s = ActScratch {
        length: vec![0.0; nu],
        moment: DMatrix::zeros(nu, lr.nv),
    };
    let (mut lmin, mut lmax) = ([0.0; 2], [0.0; 2]);
    for side in 0..2 {
        let mut sim = Simulator::new(lr, State::reference(lr), integrator)?;
        sim.on_divergence = OnDivergence::Error;
        let mut updated = false;
        while sim.state.time < opt.inttotal {
            let len = match eval_act(&mut sim, index, side, opt, &mut s) {
                Err(Error::Diverged { .. }) => {
                    return Err(fail(format!("Unstable lengthrange simulation in actuator {index}")))
                }
                r => r?,
            };
            if sim.state.time > opt.inttotal - opt.interval {
                if len < lmin[side] || !updated {
                    lmin[side] = len;
                }
                if len > lmax[side] || !updated {
                    lmax[side] = len;
                }
                updated = true;
            }
        }
    }
    let range = [lmin[0], lmax[1]];
    let dif = range[1] - range[0];
    if dif <= 0.0 {
        return Err(fail(format!(
            "Invalid lengthrange ({}, {}) in actuator {index}",
            range[0], range[1]
        )));
    }
    for side in 0..2 {
        if lmax[side] - lmin[side] > opt.tolrange * dif {
            return Err(fail(format!(
                "Lengthrange computation did not converge in actuator {index}: eval ({}, {}) range ({}, {})",
                lmin[side], lmax[side], range[0], range[1]
            )));
        }
    }
    Ok(range)
}
// ANCHOR_END: length_range

/// MuJoCo's compiler step `mjCModel::LengthRange` with the options of
/// [`Options::lengthrange`](crate::model::Options::lengthrange): for every actuator that
/// [`needs_length_range`], `uselimit` copies a limited joint's or tendon's range (as given, no
/// gear), otherwise [`length_range`] simulates. Actuators are done in order; the first failure
/// is the error.
pub fn set_length_range(model: &mut Model) -> Result<()> {
    let opt = model.opt.lengthrange.clone();
    if !model.actuators.iter().any(|a| needs_length_range(&opt, a)) {
        return Ok(());
    }
    check_options(&opt)?;
    let lr = length_range_model(model, &opt);
    for k in 0..model.actuators.len() {
        if !needs_length_range(&opt, &model.actuators[k]) {
            continue;
        }
        if opt.uselimit {
            let limit = match model.actuators[k].trn {
                Transmission::Joint(j) | Transmission::JointInParent(j) => {
                    let jt = &model.joints[j];
                    jt.limited.then_some(jt.range)
                }
                Transmission::Tendon(t) => {
                    let tn = &model.tendons[t];
                    tn.limited.then_some(tn.range)
                }
                _ => None,
            };
            if let Some(r) = limit {
                model.actuators[k].lengthrange = r;
                continue;
            }
        }
        model.actuators[k].lengthrange = length_range(&lr, k, &opt)?;
    }
    Ok(())
}

/// Reads an MJCF file and completes it as MuJoCo's compiler does (`mj_loadXML`):
/// [`crate::mjcf::load`], then [`compile`].
pub fn load(path: impl AsRef<Path>) -> Result<Loaded> {
    let mut loaded = crate::mjcf::load(path)?;
    compile(&mut loaded.model)?;
    Ok(loaded)
}

/// [`load`] for MJCF text: [`crate::mjcf::load_str`], then [`compile`].
pub fn load_str(xml: &str) -> Result<Loaded> {
    let mut loaded = crate::mjcf::load_str(xml)?;
    compile(&mut loaded.model)?;
    Ok(loaded)
}

// ANCHOR: compile
/// The model constants MuJoCo's compiler computes by running the model, which the MJCF reader
/// (below the dynamics) cannot: joint springs given as `springdamper` ([`set_springdamper`],
/// from `dof_invweight0`); the rest lengths of tendons that wrap around geoms, at
/// `qpos_spring` ([`crate::dynamics::set_spring_lengths`]); the damping of position servos given
/// as a damping ratio, from the inertia they see at `qpos0` ([`crate::dynamics::set_dampratio`],
/// `mj_setConst`); then the muscles' length ranges by simulation ([`set_length_range`],
/// `mj_setLengthRange`).
pub fn compile(model: &mut Model) -> Result<()> {
    set_springdamper(model)?;
    crate::dynamics::set_spring_lengths(model)?;
    crate::dynamics::set_dampratio(model)?;
    set_length_range(model)
}
// ANCHOR_END: compile

// ANCHOR: springdamper
/// MuJoCo's `springdamper = (timeconst, dampratio)` of a joint (the compiler's
/// `AutoSpringDamper`): its stiffness and damping replaced by those of a mass-spring-damper with
/// that time constant and damping ratio, `k = m / (timeconst^2 dampratio^2)` and
/// `b = 2 m / timeconst` (the formula of a constraint's `solref`), where `m` is the joint's
/// inertia at `qpos0`, the number of its dofs over the sum of their `dof_invweight0`. Clears
/// [`crate::model::Joint::springdamper`]; returns how many joints were set.
pub fn set_springdamper(model: &mut Model) -> Result<usize> {
    if model.joints.iter().all(|j| j.springdamper.is_none()) {
        return Ok(0);
    }
    let iw = super::constraint::Invweight::new(model)?;
    let mut n = 0;
    for i in 1..=model.nb {
        let Some([timeconst, dampratio]) = model.joints[i].springdamper.take() else {
            continue;
        };
        let dofs = model.dofs(i);
        let inertia = dofs.len() as f64 / iw.dof[dofs.clone()].iter().sum::<f64>().max(mjMINVAL);
        let j = &mut model.joints[i];
        j.stiffness = inertia / (timeconst * timeconst * dampratio * dampratio).max(mjMINVAL);
        j.damping = 2.0 * inertia / timeconst.max(mjMINVAL);
        n += 1;
    }
    Ok(n)
}
// ANCHOR_END: springdamper
