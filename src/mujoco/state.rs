//! MuJoCo's simulation state and its divergence checks: the part of `mjData` a user sets
//! ([`State`], with the solver's warm start), `mj_checkPos`/`mj_checkVel`/`mj_checkAcc`
//! ([`check_finite`]) and what a divergence does ([`OnDivergence`], [`Warnings`]). The
//! [`super::integrator::Simulator`] advances a [`State`]; this module is what it carries.

use crate::dynamics::{actuator_na, check_controls};
use crate::error::{check_vector, Error, Result};
use crate::model::{Model, MJ_MAXVAL};

/// MuJoCo's simulation state (the part of `mjData` a user sets): time, positions, velocities,
/// actuator activations and controls, and applied generalized forces, in MuJoCo's conventions
/// (quaternions w, x, y, z; free-joint qvel = [world linear velocity of the body origin,
/// body-frame angular velocity]).
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Simulation time (s).
    pub time: f64,
    /// Generalized positions (nq).
    pub qpos: Vec<f64>,
    /// Generalized velocities (nv).
    pub qvel: Vec<f64>,
    /// Actuator activations (`act`, na: one per actuator with dynamics, in actuator order).
    pub act: Vec<f64>,
    /// Actuator controls (`ctrl`, nu).
    pub ctrl: Vec<f64>,
    /// Applied generalized forces, MuJoCo's `qfrc_applied` (nv): the controls of a student's
    /// controller.
    pub qfrc_applied: Vec<f64>,
    /// The constraint solver's warm start, MuJoCo's `qacc_warmstart` (nv): the `qacc` of the last
    /// forward pass of the previous step (`mj_advance` saves it), offered to the solver of the
    /// next step, which starts from it when its cost is lower than `qacc_smooth`'s. Zeros after
    /// a reset (`mj_resetData`, `mj_resetDataKeyframe`). Ignored with
    /// `<flag warmstart="disable">` (the solver then starts cold from `qacc_smooth`).
    pub qacc_warmstart: Vec<f64>,
    /// Which equality constraints are active, MuJoCo's `eq_active` (one per
    /// [`Model::equality`]): the model's `eq_active0` after a reset (`mj_resetData`,
    /// `mj_resetDataKeyframe`); set an entry to switch a constraint on or off for the
    /// following steps (an inactive one makes no constraint rows).
    pub eq_active: Vec<bool>,
    /// The positions of the mocap bodies, MuJoCo's `mocap_pos` (nmocap; [`Model::body_mocapid`]):
    /// inputs like `ctrl`, which a step reads and never integrates. A reset sets them to the
    /// model's default poses ([`Model::mocap_pos0`]), a keyframe to its `mpos`; move a mocap body
    /// between steps by writing here.
    pub mocap_pos: Vec<[f64; 3]>,
    /// The orientations (w, x, y, z) of the mocap bodies, MuJoCo's `mocap_quat` (nmocap): any
    /// non-zero norm (normalized where used, the entries themselves never changed).
    pub mocap_quat: Vec<[f64; 4]>,
    /// Cartesian wrenches applied to the bodies, MuJoCo's `xfrc_applied` (one `[force; torque]`
    /// per MuJoCo body, world axes, at the body's centre of mass; the world's is ignored): a
    /// push, a perturbation, a cable the model does not have. Zeros after a reset.
    pub xfrc_applied: Vec<[f64; 6]>,
}

impl State {
    /// The model's reference state: time 0, `qpos0`, zero velocity, activation, control,
    /// applied force and warm start, the equality constraints as `eq_active0`, the mocap bodies
    /// at their default poses (MuJoCo's `mj_resetData`).
    pub fn reference(model: &Model) -> Self {
        State {
            time: 0.0,
            qpos: model.qpos0.as_slice().to_vec(),
            qvel: vec![0.0; model.nv],
            act: vec![0.0; actuator_na(model)],
            ctrl: vec![0.0; model.actuators.len()],
            qfrc_applied: vec![0.0; model.nv],
            qacc_warmstart: vec![0.0; model.nv],
            eq_active: eq_active0(model),
            mocap_pos: model.mocap_pos0.clone(),
            mocap_quat: model.mocap_quat0.clone(),
            xfrc_applied: vec![[0.0; 6]; model.mj_nbody()],
        }
    }

    /// The state of keyframe `name` (MuJoCo's `mj_resetDataKeyframe`: zero applied force and
    /// warm start, the equality constraints as `eq_active0`, the mocap bodies at the key's
    /// `mpos`, `mquat`), or [`Error::Unknown`].
    pub fn keyframe(model: &Model, name: &str) -> Result<Self> {
        let Some(kf) = model.keyframes.iter().find(|f| f.name == name) else {
            return Err(Error::Unknown {
                kind: "keyframe".into(),
                name: name.into(),
            });
        };
        let state = State {
            time: kf.time,
            qpos: kf.qpos.clone(),
            qvel: kf.qvel.clone(),
            act: kf.act.clone(),
            ctrl: kf.ctrl.clone(),
            qfrc_applied: vec![0.0; model.nv],
            qacc_warmstart: vec![0.0; model.nv],
            eq_active: eq_active0(model),
            xfrc_applied: vec![[0.0; 6]; model.mj_nbody()],
            mocap_pos: kf.mpos.clone(),
            mocap_quat: kf.mquat.clone(),
        };
        state.check(model)?;
        Ok(state)
    }

    /// Checks lengths (`eq_active` and the mocap poses too), finiteness, magnitudes and
    /// quaternions against `model`.
    pub fn check(&self, model: &Model) -> Result<()> {
        model.check_state(&self.qpos, &self.qvel)?;
        model.check_mocap(&self.mocap_pos, &self.mocap_quat)?;
        check_vector("qfrc_applied", &self.qfrc_applied, model.nv)?;
        check_vector("qacc_warmstart", &self.qacc_warmstart, model.nv)?;
        crate::dynamics::check_xfrc(model, &self.xfrc_applied)?;
        if self.eq_active.len() != model.equality.len() {
            return Err(Error::BadLength {
                what: "eq_active".into(),
                got: self.eq_active.len(),
                expected: model.equality.len(),
            });
        }
        check_controls(model, &self.ctrl, &self.act)?;
        check_finite(None, self.time, "qpos", &self.qpos)?;
        check_finite(None, self.time, "qvel", &self.qvel)?;
        check_finite(None, self.time, "act", &self.act)?;
        check_finite(None, self.time, "qfrc_applied", &self.qfrc_applied)?;
        check_finite(None, self.time, "qacc_warmstart", &self.qacc_warmstart)
    }
}

/// The model's `eq_active0` (every equality constraint's flag in the reference state).
fn eq_active0(model: &Model) -> Vec<bool> {
    (0..model.equality.len()).map(|k| model.eq_active0_of(k)).collect()
}

/// MuJoCo's `mj_checkPos`/`mj_checkVel`/`mj_checkAcc` as an error: the first entry of `x` that
/// is not finite or exceeds `mjMAXVAL` in magnitude, named with the step (None: the initial
/// state) and time.
pub fn check_finite(step: Option<usize>, time: f64, quantity: &'static str, x: &[f64]) -> Result<()> {
    match x.iter().position(|v| !v.is_finite() || v.abs() > MJ_MAXVAL) {
        None => Ok(()),
        Some(index) => Err(Error::Diverged {
            step,
            time,
            quantity,
            index,
            value: x[index],
        }),
    }
}

// ANCHOR: divergence
/// What [`Simulator::step`](super::integrator::Simulator::step) does when the state or the
/// acceleration stops being finite or exceeds `mjMAXVAL` (MuJoCo's `mju_isBad`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnDivergence {
    /// MuJoCo's behaviour (`mj_checkPos`, `mj_checkVel`, `mj_checkAcc`): count a warning in
    /// [`Simulator::warnings`](super::integrator::Simulator::warnings) (its number and the index
    /// of the bad entry, with a message), reset the state to
    /// [`Simulator::reset_state`](super::integrator::Simulator::reset_state) (`mj_resetData`: qpos0 at rest, or a
    /// keyframe the caller put there) and go on; `step` returns `Ok`. With
    /// `<flag autoreset="disable">` MuJoCo warns and keeps the bad state; here the step then
    /// fails as with [`OnDivergence::Error`] (after counting the warning), since nothing
    /// computed from a non-finite state means anything.
    #[default]
    Reset,
    /// Fail with [`Error::Diverged`] naming the step, time and first bad entry, the state left
    /// as it was before the step (what `mbd simulate` does).
    Error,
}

/// One of MuJoCo's warning counters (`mjWarningStat`): how often it was raised and the index
/// of the bad entry the last time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarningStat {
    /// Times raised (`number`).
    pub number: usize,
    /// Index of the first bad entry the last time (`lastinfo`).
    pub lastinfo: usize,
}

/// The last divergence the simulator saw: where, when and what.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The step that produced it (1-based; the step whose start found a bad incoming state).
    pub step: usize,
    /// The time of the state checked.
    pub time: f64,
    /// `qpos`, `qvel`, `qacc` or `act`.
    pub quantity: &'static str,
    /// First bad entry.
    pub index: usize,
    /// Its value.
    pub value: f64,
}

impl std::fmt::Display for Divergence {
    /// MuJoCo's warning text (`mjWARN_BADQPOS`: "Nan, Inf or huge value in QPOS at DOF i. The
    /// simulation is unstable.") with the step and time.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Nan, Inf or huge value in {} at DOF {} (= {:e}, step {}, t = {}). The simulation is unstable.",
            self.quantity.to_uppercase(),
            self.index,
            self.value,
            self.step,
            self.time
        )
    }
}

/// The warnings of the state checks (MuJoCo's `mjData.warning` entries `mjWARN_BADQPOS`,
/// `mjWARN_BADQVEL`, `mjWARN_BADQACC`; `bad_act` is mbd's, MuJoCo does not check `act`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Warnings {
    /// `mjWARN_BADQPOS`.
    pub bad_qpos: WarningStat,
    /// `mjWARN_BADQVEL`.
    pub bad_qvel: WarningStat,
    /// `mjWARN_BADQACC`.
    pub bad_qacc: WarningStat,
    /// A non-finite or huge activation.
    pub bad_act: WarningStat,
    /// The last one, for its message ([`Divergence`]'s `Display`).
    pub last: Option<Divergence>,
}

impl Warnings {
    /// Warnings raised so far, of every kind.
    pub fn total(&self) -> usize {
        self.bad_qpos.number + self.bad_qvel.number + self.bad_qacc.number + self.bad_act.number
    }

    /// Counts one divergence (MuJoCo's `mj_warning` and the `number++`, `lastinfo = i`).
    pub(crate) fn raise(&mut self, d: Divergence) {
        let stat = match d.quantity {
            "qpos" => &mut self.bad_qpos,
            "qvel" => &mut self.bad_qvel,
            "qacc" => &mut self.bad_qacc,
            _ => &mut self.bad_act,
        };
        stat.number += 1;
        stat.lastinfo = d.index;
        self.last = Some(d);
    }
}
// ANCHOR_END: divergence
