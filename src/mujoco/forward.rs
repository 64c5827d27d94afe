//! MuJoCo's `mj_forward` with constraints, and `mj_inverse` (MuJoCo's `engine_forward.c` and
//! `engine_inverse.c`). Book chapter: "The constrained pipeline".
//!
//! The pipeline runs in MuJoCo's three stages on one [`ForwardData`]:
//!
//! | stage | MuJoCo | here |
//! |---|---|---|
//! | position | `mj_kinematics`, `mj_comPos`, `mj_crb`, `mj_factorM` | [`super::com`] into [`Data`] |
//! | | `mj_tendon` | tendon lengths and moments, for the actuators |
//! | | `mj_collision` | [`Collider::collide_into`]: contacts ([`MjContact`]) |
//! | velocity | `mj_comVel`, `mj_passive` | `cvel`, `cdof_dot`, `qfrc_passive` |
//! | | `mj_makeConstraint`, `mj_makeImpedance`, `mj_referenceConstraint` | [`super::constraint::make_constraint`]: the [`Efc`] rows, `R`, `D`, `K`, `B`, `efc_vel`, `efc_aref` |
//! | | `mj_rne` | `qfrc_bias` |
//! | acceleration | `mj_fwdActuation` | `qfrc_actuator` at [`Forward::ctrl`], [`Forward::act`] |
//! | | `mj_fwdAcceleration` | `qfrc_smooth = qfrc_passive - qfrc_bias + qfrc_applied + qfrc_actuator` plus `J^T xfrc_applied` ([`xfrc_accumulate`]), `qacc_smooth = M^-1 qfrc_smooth` |
//! | | `mj_fwdConstraint` | [`solve`](super::solver::solve) (PGS, CG or Newton): `qacc`, `efc_force`, `qfrc_constraint` |
//! | | `mj_sensorPos`, `mj_sensorVel`, `mj_sensorAcc` | [`Forward::sensors_with`] (when the model has sensors): `sensordata`, with `mj_rnePostConstraint` and `mj_subtreeVel` as they need |
//!
//! One difference of bookkeeping: MuJoCo makes the rows (`mj_makeConstraint`) in the position
//! stage and their reference acceleration (`mj_referenceConstraint`) in the velocity stage; here
//! one call makes both, in the velocity stage, since the reference acceleration of connect and
//! weld rows needs the velocities `cvel` and `cdof_dot` (its `Jdot qvel` term).
//!
//! `mj_inverse` ([`Forward::inverse`]) runs the position and velocity stages and then, instead of
//! a solver, evaluates the constraint force of each row at the given `qacc` (the same convex
//! cost's gradient the primal solvers minimize), so that at the forward solution
//! `qfrc_inverse = qfrc_applied + qfrc_actuator` ([`fwdinv`], MuJoCo's `mj_compareFwdInv`).

use super::collision::{Collider, MjContact};
use super::constraint::{Efc, EfcState};
use super::sensor::{PostConstraint, SensorInputs, SensorScratch};
use super::solver::{mul_m, Smooth, SolverOptions, SolverResult, SolverStat};
use super::{com, Data};
use crate::dynamics::{
    actuation_with, passive_forces_into, tendon_kinematics_into, transmission_with, Actuation, PassiveScratch,
    TendonState,
};
use crate::error::{check_vector, Error, Result};
use crate::kinematics::WorldAxes;
use crate::model::{DynType, Model};
use crate::sparse::{factor_i_in_place, solve_ld, NoCount, PivotPolicy};

/// Everything `mj_forward` leaves in `mjData` beyond the smooth quantities of [`Data`], with
/// MuJoCo's names.
#[derive(Clone, Debug)]
pub struct ForwardData {
    /// The smooth, com-based quantities (`qM`, `qLD`, `qfrc_bias`, `cdof`, ...).
    pub data: Data,
    /// The applied generalized forces of this call (`qfrc_applied`).
    pub qfrc_applied: Vec<f64>,
    /// Passive forces (`qfrc_passive`): joint and tendon springs and dampers, fluid forces.
    pub qfrc_passive: Vec<f64>,
    /// Actuator forces (`qfrc_actuator`).
    pub qfrc_actuator: Vec<f64>,
    /// `qfrc_smooth = qfrc_passive - qfrc_bias + qfrc_applied + qfrc_actuator`.
    pub qfrc_smooth: Vec<f64>,
    /// `qacc_smooth = M^-1 qfrc_smooth`.
    pub qacc_smooth: Vec<f64>,
    /// The constraint rows (`efc_*`) and the contacts they came from (`efc.contacts`, MuJoCo's
    /// `contact`).
    pub efc: Efc,
    /// Constraint force per row (`efc_force`).
    pub efc_force: Vec<f64>,
    /// State of each row at the solution (`efc_state`).
    pub efc_state: Vec<EfcState>,
    /// `J^T efc_force` (`qfrc_constraint`).
    pub qfrc_constraint: Vec<f64>,
    /// The constrained acceleration (`qacc`).
    pub qacc: Vec<f64>,
    /// Solver iterations (`solver_niter`).
    pub solver_niter: usize,
    /// Per-iteration statistics (`solver`). MuJoCo's PGS records no cost and neither does the
    /// pipeline's ([`SolverStat::cost`] is 0); [`super::solver::solve`] computes it.
    pub solver: Vec<SolverStat>,
    /// The sensors' values (`sensordata`, see [`Forward::sensors_with`]); empty for a model
    /// without sensors.
    pub sensordata: Vec<f64>,
    /// The Cartesian wrenches of this call ([`Forward::xfrc_applied`]), which
    /// `mj_rnePostConstraint` counts among the external forces.
    pub xfrc_applied: Vec<[f64; 6]>,
    /// `mj_rnePostConstraint`'s and `mj_subtreeVel`'s results, as far as the sensors needed
    /// them (or [`Forward::rne_post_constraint`] computed them).
    pub sensor: SensorScratch,
}

impl ForwardData {
    /// Zeroed storage for `model`.
    pub fn new(model: &Model) -> Result<Self> {
        let nv = model.nv;
        Ok(ForwardData {
            data: Data::new(model)?,
            qfrc_applied: vec![0.0; nv],
            qfrc_passive: vec![0.0; nv],
            qfrc_actuator: vec![0.0; nv],
            qfrc_smooth: vec![0.0; nv],
            qacc_smooth: vec![0.0; nv],
            efc: Efc::empty(nv),
            efc_force: vec![],
            efc_state: vec![],
            qfrc_constraint: vec![0.0; nv],
            qacc: vec![0.0; nv],
            solver_niter: 0,
            solver: vec![],
            sensordata: vec![],
            xfrc_applied: vec![[0.0; 6]; model.mj_nbody()],
            sensor: SensorScratch::default(),
        })
    }

    /// The contacts of the last call (MuJoCo's `contact`, `ncon` of them).
    pub fn contacts(&self) -> &[MjContact] {
        &self.efc.contacts
    }

    /// The smooth quantities the constraint solvers read (`qM`, its factor, `qfrc_smooth`,
    /// `qacc_smooth`), borrowed from this data; `model` is the model it was computed for.
    pub fn smooth<'a>(&'a self, model: &'a Model) -> Smooth<'a> {
        Smooth {
            layout: model.mj_layout(),
            qm: &self.data.qm,
            qld: &self.data.qld,
            qld_diag_inv: &self.data.qld_diag_inv,
            qfrc_smooth: &self.qfrc_smooth,
            qacc_smooth: &self.qacc_smooth,
        }
    }
}

// ANCHOR: contact_force
/// MuJoCo's `mj_contactForce`: the force of contact `k` in its own frame, `[normal, tangent 1,
/// tangent 2, spin, roll 1, roll 2]` (the first `dim` entries used), acting on `geom[1]` (the
/// normal points from `geom[0]` to `geom[1]`). Elliptic and frictionless rows hold these numbers
/// directly; a pyramidal contact's `2 (dim - 1)` edge forces decode as `f_n = sum of the edge
/// forces` and `f_j = mu_j (f_(2j) - f_(2j+1))`. Zeros for a contact without rows.
pub fn contact_force(d: &ForwardData, k: usize) -> [f64; 6] {
    let mut out = [0.0; 6];
    let Some(c) = d.efc.contacts.get(k) else {
        return out;
    };
    let Some(adr) = c.efc_address else {
        return out;
    };
    if adr >= d.efc_force.len() {
        return out;
    }
    let f = &d.efc_force[adr..];
    match d.efc.efc_type[adr] {
        super::constraint::EfcType::ContactPyramidal => {
            let edges = 2 * (c.dim - 1);
            out[0] = f[..edges].iter().sum();
            for j in 0..c.dim - 1 {
                out[j + 1] = c.friction[j] * (f[2 * j] - f[2 * j + 1]);
            }
        }
        _ => out[..c.dim].copy_from_slice(&f[..c.dim]),
    }
    out
}
// ANCHOR_END: contact_force

/// What `mj_inverse` computes besides the position and velocity stages.
#[derive(Clone, Debug, PartialEq)]
pub struct InverseData {
    /// The acceleration the forces are asked for.
    pub qacc: Vec<f64>,
    /// Constraint force of each row at `qacc` (`efc_force`): `-ds/dx` at `x = J qacc - aref`.
    pub efc_force: Vec<f64>,
    /// Row states at `qacc`.
    pub efc_state: Vec<EfcState>,
    /// `J^T efc_force`.
    pub qfrc_constraint: Vec<f64>,
    /// `qfrc_inverse = M qacc + qfrc_bias - qfrc_passive - qfrc_constraint`: the applied plus
    /// actuator force that produces `qacc`.
    pub qfrc_inverse: Vec<f64>,
}

/// The solver settings of a model's `<option>` (`solver`, `iterations`, `tolerance`,
/// `ls_iterations`, `ls_tolerance`, `noslip_iterations`, `noslip_tolerance`), cold start.
pub fn solver_options(model: &Model) -> SolverOptions {
    SolverOptions {
        solver: model.opt.solver,
        iterations: model.opt.iterations,
        tolerance: model.opt.tolerance,
        ls_iterations: model.opt.ls_iterations,
        ls_tolerance: model.opt.ls_tolerance,
        noslip_iterations: model.opt.noslip_iterations,
        noslip_tolerance: model.opt.noslip_tolerance,
        warmstart: None,
    }
}

/// MuJoCo's `mj_forward` and `mj_inverse` for one model: the per-model constants (`invweight0`,
/// computed once, as MuJoCo's `mj_setConst`), the solver options, the controls, and the
/// [`ForwardData`] each call fills.
pub struct Forward<'m> {
    model: &'m Model,
    invweight: stages::Invweight,
    /// The model-constant part of `mj_collision` (checked geoms, pairs, bounding spheres).
    collider: Collider,
    /// Scratch reused by every call: the row builder's, PGS's, a solver result's vectors, the
    /// factorization's.
    scratch: Scratch,
    /// Solver settings (from the model's `<option>` by default; see [`solver_options`]).
    pub options: SolverOptions,
    /// Controls (`ctrl`, nu), zeros by default.
    pub ctrl: Vec<f64>,
    /// Actuator activations (`act`, one per actuator with dynamics), zeros by default.
    pub act: Vec<f64>,
    /// Positions of the mocap bodies (`mocap_pos`, nmocap; [`Model::body_mocapid`]), the
    /// model's default poses by default: inputs like the controls, copied into
    /// [`ForwardData::data`] at each call, where every stage that places bodies reads them.
    pub mocap_pos: Vec<[f64; 3]>,
    /// Orientations of the mocap bodies (`mocap_quat`, nmocap, any non-zero norm: normalized in
    /// a copy where used).
    pub mocap_quat: Vec<[f64; 4]>,
    /// Cartesian wrenches applied to the bodies (`xfrc_applied`, one per MuJoCo body, the
    /// world's ignored): `[force; torque]` in world axes at the body's centre of mass, zeros by
    /// default; `J^T` of them is added to `qfrc_smooth` ([`xfrc_accumulate`]).
    pub xfrc_applied: Vec<[f64; 6]>,
    /// The simulation time (`time`), which only `clock` sensors read.
    pub time: f64,
    /// Whether [`Forward::forward_with`] ends with the sensors ([`Forward::sensors_with`]);
    /// true for a model with sensors. An integrator turns it off for the later stages of a
    /// step, as `mj_step` evaluates the sensors once, at the step's start.
    pub sensors_enabled: bool,
    /// The outputs of the last call.
    pub d: ForwardData,
    /// The solver's storage, kept between calls.
    solver: super::solver::Workspace,
}

impl<'m> Forward<'m> {
    /// The pipeline for `model`: checks nothing about states yet, computes the per-model
    /// constants of the constraint rows.
    pub fn new(model: &'m Model) -> Result<Self> {
        crate::dynamics::check_spring_lengths(model)?;
        model.check_sensors()?;
        let na = model.actuators.iter().filter(|a| a.dyntype != DynType::None).count();
        Ok(Forward {
            model,
            invweight: stages::invweight(model)?,
            collider: Collider::new(model)?,
            scratch: Scratch {
                rows: stages::RowScratch::new(model),
                tendon: TendonState::new(model),
                fluid: PassiveScratch::default(),
                axes: WorldAxes::default(),
                actuation: Actuation::new(model),
                pgs: stages::PgsScratch::without_cost(),
                cones: Vec::new(),
                result: SolverResult::default(),
                factor_warnings: Vec::new(),
                xquat: Vec::new(),
            },
            options: solver_options(model),
            ctrl: vec![0.0; model.actuators.len()],
            act: vec![0.0; na],
            mocap_pos: model.mocap_pos0.clone(),
            mocap_quat: model.mocap_quat0.clone(),
            xfrc_applied: vec![[0.0; 6]; model.mj_nbody()],
            time: 0.0,
            sensors_enabled: !model.sensors.is_empty(),
            d: ForwardData::new(model)?,
            solver: Default::default(),
        })
    }

    /// The model.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// Checks a state at the door: lengths, finiteness, unit quaternions, the controls and the
    /// mocap poses.
    fn check(&self, qpos: &[f64], qvel: &[f64], qfrc_applied: &[f64]) -> Result<()> {
        self.model.check_state(qpos, qvel)?;
        self.model.check_mocap(&self.mocap_pos, &self.mocap_quat)?;
        check_vector("qfrc_applied", qfrc_applied, self.model.nv)?;
        crate::dynamics::check_xfrc(self.model, &self.xfrc_applied)?;
        check_vector("ctrl", &self.ctrl, self.model.actuators.len())?;
        let na = self
            .model
            .actuators
            .iter()
            .filter(|a| a.dyntype != DynType::None)
            .count();
        check_vector("act", &self.act, na)
    }

    /// MuJoCo's `mj_forward` at `(qpos, qvel)` with applied forces `qfrc_applied`, after
    /// checking them. The results are in [`Forward::d`].
    pub fn forward(&mut self, qpos: &[f64], qvel: &[f64], qfrc_applied: &[f64]) -> Result<&ForwardData> {
        self.check(qpos, qvel, qfrc_applied)?;
        self.forward_with(qpos, qvel, qfrc_applied)?;
        Ok(&self.d)
    }

    // ANCHOR: sensors_with
    /// The sensors (`mj_sensorPos`, `mj_sensorVel`, `mj_sensorAcc`) after a forward call at the
    /// same `(qpos, qvel)`, into [`ForwardData::sensordata`] ([`super::sensor::sensors_into`]).
    /// [`Forward::forward_with`] runs it when [`Forward::sensors_enabled`].
    pub fn sensors_with(&mut self, qpos: &[f64], qvel: &[f64]) {
        let model = self.model;
        super::constraint::jacobian::xquat_into(model, qpos, &self.d.data.mocap_quat, &mut self.scratch.xquat);
        let mut out = std::mem::take(&mut self.d.sensordata);
        let mut scratch = std::mem::take(&mut self.d.sensor);
        let inp = SensorInputs {
            fd: &self.d,
            ten: &self.scratch.tendon,
            act: &self.scratch.actuation,
            xquat: &self.scratch.xquat,
            qpos,
            qvel,
            time: self.time,
        };
        super::sensor::sensors_into(model, &inp, &self.invweight.eq, &mut scratch, &mut out);
        self.d.sensordata = out;
        self.d.sensor = scratch;
    }
    // ANCHOR_END: sensors_with

    /// MuJoCo's `mj_rnePostConstraint` after a forward call at the same `(qpos, qvel)`: the
    /// bodies' accelerations and the forces between them and from the world
    /// ([`super::sensor::rne_post_constraint`]), per Featherstone body; a MuJoCo body's are its
    /// last Featherstone body's ([`Model::mj_body_last`]).
    pub fn rne_post_constraint(&mut self, qpos: &[f64], qvel: &[f64]) -> &PostConstraint {
        let model = self.model;
        super::constraint::jacobian::xquat_into(model, qpos, &self.d.data.mocap_quat, &mut self.scratch.xquat);
        let mut scratch = std::mem::take(&mut self.d.sensor);
        let ten = if model.tendons.is_empty() {
            None
        } else {
            super::sensor::tendon_forces(
                model,
                &self.d,
                &self.invweight.eq,
                &self.scratch.tendon,
                &self.scratch.actuation,
                qvel,
                &mut scratch.tendon_force,
            );
            Some((&self.scratch.tendon, &scratch.tendon_force[..]))
        };
        let mut post = std::mem::take(&mut scratch.post);
        super::sensor::rne_post_constraint(
            model,
            &self.d,
            &self.invweight.eq,
            &self.scratch.xquat,
            ten,
            qvel,
            &mut post,
        );
        scratch.post = post;
        self.d.sensor = scratch;
        &self.d.sensor.post
    }

    // ANCHOR: forward_with
    /// [`Forward::forward`] without the checks at the door (inputs assumed valid).
    pub fn forward_with(&mut self, qpos: &[f64], qvel: &[f64], qfrc_applied: &[f64]) -> Result<()> {
        self.place_mocap();
        let contacts = self.position(qpos)?;
        self.velocity(qpos, qvel, contacts)?;
        self.acceleration(qpos, qvel, qfrc_applied)?;
        self.constraint()?;
        if self.sensors_enabled {
            self.sensors_with(qpos, qvel);
        }
        Ok(())
    }
    // ANCHOR_END: forward_with

    /// The mocap inputs of this call into the data, where the position stage reads them.
    fn place_mocap(&mut self) {
        let d = &mut self.d.data;
        d.mocap_pos.clone_from(&self.mocap_pos);
        d.mocap_quat.clone_from(&self.mocap_quat);
    }

    // ANCHOR: position
    /// Position stage (`mj_fwdPosition`): kinematics and com-based quantities, the inertia
    /// matrix and its factor, tendon lengths and moments, collision. Returns the contacts
    /// (in the storage of the last call's contact list), which the velocity stage turns into
    /// rows.
    fn position(&mut self, qpos: &[f64]) -> Result<Vec<MjContact>> {
        let model = self.model;
        let d = &mut self.d;
        com::mj_com_pos(model, &mut d.data, qpos)?;
        com::mj_crb(model, model.mj_layout(), &mut d.data);
        d.data.qld.copy_from_slice(&d.data.qm);
        factor_i_in_place(
            model.mj_layout(),
            &mut d.data.qld,
            &mut d.data.qld_diag_inv,
            PivotPolicy::Error,
            &mut self.scratch.factor_warnings,
            &mut NoCount,
        )?;
        for (s, inv) in d.data.qld_diag_sqrt_inv.iter_mut().zip(&d.data.qld_diag_inv) {
            *s = inv.sqrt();
        }
        if !model.tendons.is_empty() {
            tendon_kinematics_into(model, qpos, &d.data.mocap_x, &mut self.scratch.tendon)?;
        }
        let mut contacts = std::mem::take(&mut d.efc.contacts);
        self.collider.collide_into(model, &d.data, &mut contacts)?;
        Ok(contacts)
    }
    // ANCHOR_END: position

    // ANCHOR: velocity
    /// Velocity stage (`mj_fwdVelocity`): body velocities, passive forces, the constraint rows
    /// of `contacts` and the other constraints with their impedance and reference acceleration,
    /// bias forces.
    fn velocity(&mut self, qpos: &[f64], qvel: &[f64], contacts: Vec<MjContact>) -> Result<()> {
        let model = self.model;
        let d = &mut self.d;
        com::mj_com_vel(model, &mut d.data, qvel);
        // the tendons of the position stage, at the same qpos
        let ten = (!model.tendons.is_empty()).then_some(&self.scratch.tendon);
        let mocap = &d.data.mocap_x;
        passive_forces_into(
            model,
            qpos,
            qvel,
            mocap,
            ten,
            &mut self.scratch.fluid,
            &mut d.qfrc_passive,
        );
        stages::rows(
            model,
            &d.data,
            qpos,
            qvel,
            contacts,
            &self.invweight,
            &mut d.efc,
            &mut self.scratch.rows,
        )?;
        let mut bias = std::mem::take(&mut d.data.qfrc_bias);
        com::mj_rne(model, &mut d.data, qvel, None, &mut bias);
        d.data.qfrc_bias = bias;
        Ok(())
    }
    // ANCHOR_END: velocity

    // ANCHOR: acceleration
    /// Acceleration stage up to the solver (`mj_fwdActuation`, `mj_fwdAcceleration`):
    /// `qfrc_smooth` and `qacc_smooth = M^-1 qfrc_smooth` with the factor of the position stage.
    fn acceleration(&mut self, qpos: &[f64], qvel: &[f64], qfrc_applied: &[f64]) -> Result<()> {
        let model = self.model;
        let d = &mut self.d;
        d.qfrc_applied.copy_from_slice(qfrc_applied);
        if model.actuators.is_empty() {
            d.qfrc_actuator.fill(0.0);
        } else {
            // mj_transmission (at the position stage's tendons) and mj_fwdActuation
            let (ten, out, axes) = (
                &self.scratch.tendon,
                &mut self.scratch.actuation,
                &mut self.scratch.axes,
            );
            transmission_with(
                model,
                qpos,
                &d.data.mocap_x,
                ten,
                axes,
                &mut out.length,
                &mut out.moment,
            )?;
            let gravcomp = &self.scratch.fluid.gravcomp;
            actuation_with(model, qvel, &self.ctrl, &self.act, gravcomp, out)?;
            crate::error::check_output("qfrc_actuator", &out.qfrc)?;
            d.qfrc_actuator.copy_from_slice(&out.qfrc);
        }
        for k in 0..model.nv {
            d.qfrc_smooth[k] = d.qfrc_passive[k] - d.data.qfrc_bias[k] + qfrc_applied[k] + d.qfrc_actuator[k];
        }
        // mj_xfrcAccumulate: the Cartesian wrenches on bodies
        d.xfrc_applied.copy_from_slice(&self.xfrc_applied);
        if crate::dynamics::has_xfrc(&d.xfrc_applied) {
            xfrc_accumulate(model, &d.data, &d.xfrc_applied, &mut d.qfrc_smooth);
        }
        d.qacc_smooth.copy_from_slice(&d.qfrc_smooth);
        solve_ld(
            model.mj_layout(),
            &d.data.qld,
            &d.data.qld_diag_inv,
            &mut d.qacc_smooth,
            &mut NoCount,
        )
    }
    // ANCHOR_END: acceleration

    /// Exchanges the storage of the last call's actuator quantities (`actuator_length`,
    /// `actuator_moment`, `actuator_force`, `act_dot`, `qfrc_actuator`) and, when given, its
    /// tendon lengths and `ten_J` with the caller's: the caller receives them without a copy,
    /// and the next call fills the storage it received. Both must be [`Actuation::new`] and
    /// [`TendonState::new`] of this pipeline's model (the [`super::integrator::Simulator`]'s
    /// forward pass reads them this way instead of computing them a second time).
    pub fn exchange_actuation(&mut self, actuation: &mut Actuation, tendon: Option<&mut TendonState>) {
        std::mem::swap(&mut self.scratch.actuation, actuation);
        if let Some(t) = tendon {
            std::mem::swap(&mut self.scratch.tendon, t);
        }
    }

    // ANCHOR: set_warmstart
    /// The warm start of the following calls' solver, MuJoCo's `qacc_warmstart` (which
    /// `mj_fwdConstraint`'s `warmstart` tries against `qacc_smooth`, keeping the cheaper):
    /// `Some(qacc)` copies `qacc` into [`SolverOptions::warmstart`], storage this pipeline keeps
    /// (allocated on the first call only); `None` starts the solver cold, as
    /// `<flag warmstart="disable">` does. A new [`Forward`] starts cold. Kernel: `qacc` has
    /// `nv` finite entries (the [`super::integrator::Simulator`] checks its state at the door).
    pub fn set_warmstart(&mut self, qacc: Option<&[f64]>) {
        match (qacc, &mut self.options.warmstart) {
            (Some(a), Some(w)) if w.len() == a.len() => w.copy_from_slice(a),
            (Some(a), w) => *w = Some(a.to_vec()),
            (None, w) => *w = None,
        }
    }
    // ANCHOR_END: set_warmstart

    // ANCHOR: constraint
    /// `mj_fwdConstraint`: without rows `qacc = qacc_smooth`; otherwise the solver of
    /// [`Forward::options`] on the rows, warm-started from [`SolverOptions::warmstart`] when it
    /// is set ([`Forward::set_warmstart`]).
    fn constraint(&mut self) -> Result<()> {
        let model = self.model;
        let d = &mut self.d;
        if d.efc.nefc() == 0 {
            d.qacc.copy_from_slice(&d.qacc_smooth);
            d.qfrc_constraint.fill(0.0);
            d.efc_force.clear();
            d.efc_state.clear();
            d.solver_niter = 0;
            d.solver.clear();
            return Ok(());
        }
        let smooth = d.smooth(model);
        // PGS in its own storage (its AR kept between calls), CG and Newton in the solver's
        // workspace; the results are then copied into the last call's vectors (a few hundred
        // numbers), so that after the first call neither side allocates
        let r = if self.options.solver == crate::model::Solver::Pgs {
            let r = &mut self.scratch.result;
            let (pgs, cones) = (&mut self.scratch.pgs, &mut self.scratch.cones);
            stages::solve_pgs(&smooth, &d.efc, &self.options, pgs, cones, r)?;
            if self.options.noslip_iterations > 0 {
                stages::noslip(&smooth, &d.efc, &self.options, pgs, cones, r)?;
            }
            r
        } else {
            // CG and Newton, then the noslip pass when the options ask for it
            stages::solve(&smooth, &d.efc, &self.options, &mut self.solver)?;
            &mut self.solver.result
        };
        d.qacc.clone_from(&r.qacc);
        d.efc_force.clone_from(&r.efc_force);
        d.efc_state.clone_from(&r.efc_state);
        d.qfrc_constraint.clone_from(&r.qfrc_constraint);
        d.solver.clone_from(&r.stats);
        d.solver_niter = r.iterations;
        Ok(())
    }
    // ANCHOR_END: constraint

    // ANCHOR: inverse
    /// MuJoCo's `mj_inverse` at `(qpos, qvel, qacc)`, after checking them: the position and
    /// velocity stages, then the constraint force of every row at `qacc` (no solver) and
    /// `qfrc_inverse = M qacc + qfrc_bias - qfrc_passive - qfrc_constraint`. The smooth
    /// quantities and rows are left in [`Forward::d`].
    pub fn inverse(&mut self, qpos: &[f64], qvel: &[f64], qacc: &[f64]) -> Result<InverseData> {
        let model = self.model;
        model.check_state(qpos, qvel)?;
        model.check_mocap(&self.mocap_pos, &self.mocap_quat)?;
        check_vector("qacc", qacc, model.nv)?;
        self.place_mocap();
        let contacts = self.position(qpos)?;
        self.velocity(qpos, qvel, contacts)?;
        let d = &self.d;
        let (efc_force, efc_state) = stages::constraint_forces(&d.efc, qacc, &self.options)?;
        let mut qfrc_constraint = vec![0.0; model.nv];
        d.efc.j.mul_t(&efc_force, &mut qfrc_constraint);
        let mut qfrc_inverse = vec![0.0; model.nv];
        mul_m(model.mj_layout(), &d.data.qm, qacc, &mut qfrc_inverse);
        for k in 0..model.nv {
            qfrc_inverse[k] += d.data.qfrc_bias[k] - d.qfrc_passive[k] - qfrc_constraint[k];
        }
        Ok(InverseData {
            qacc: qacc.to_vec(),
            efc_force,
            efc_state,
            qfrc_constraint,
            qfrc_inverse,
        })
    }
    // ANCHOR_END: inverse
}

/// The storage a [`Forward`] reuses from call to call.
struct Scratch {
    rows: stages::RowScratch,
    /// `ten_length`, `ten_J` of the position stage
    tendon: TendonState,
    /// the fluid model's per-body storage
    fluid: PassiveScratch,
    /// the body poses and world dof axes of the site and slider-crank transmissions
    axes: WorldAxes,
    /// `actuator_length`, `actuator_moment`, `actuator_force`, ...
    actuation: Actuation,
    pgs: stages::PgsScratch,
    /// PGS's cones (the elliptic contacts' rows)
    cones: Vec<super::solver::cost::Cone>,
    result: SolverResult,
    factor_warnings: Vec<String>,
    /// body quaternions (`xquat`) for weld forces and frame sensors
    xquat: Vec<[f64; 4]>,
}

// ANCHOR: xfrc_accumulate
/// MuJoCo's `mj_xfrcAccumulate` on com-based quantities: each MuJoCo body's `xfrc =
/// [f; t]` (world axes) at its centre of mass `x_b` is the wrench `[t + (x_b - c) x f; f]` about
/// its tree's centre of mass `c`, and every dof on the path from the body to the root gets
/// `cdof . wrench` (the transposed point and rotation Jacobians, `mj_applyFT`).
pub fn xfrc_accumulate(model: &Model, d: &Data, xfrc: &[[f64; 6]], qfrc: &mut [f64]) {
    for (mb, w) in xfrc.iter().enumerate().skip(1) {
        if w.iter().all(|&x| x == 0.0) {
            continue;
        }
        let b = model.mj_body_last[mb];
        let c = d.subtree_com_fb[d.rootid_fb[b]];
        let f = crate::spatial::Vec3::new(w[0], w[1], w[2]);
        let t = crate::spatial::Vec3::new(w[3], w[4], w[5]);
        let wrench = crate::spatial::Force {
            n: t + (d.xipos_fb[b] - c).cross(&f),
            f,
        };
        let mut i = b;
        while i != 0 {
            for dof in model.dofs(i) {
                qfrc[dof] += d.cdof[dof].dot(&wrench);
            }
            i = model.lambda[i];
        }
    }
}
// ANCHOR_END: xfrc_accumulate

/// MuJoCo's `mj_forward` on a fresh [`Forward`] with the model's options and zero controls.
pub fn forward(model: &Model, qpos: &[f64], qvel: &[f64], qfrc_applied: &[f64]) -> Result<ForwardData> {
    let mut f = Forward::new(model)?;
    f.forward(qpos, qvel, qfrc_applied)?;
    Ok(f.d)
}

/// MuJoCo's `mj_compareFwdInv` after a forward call: runs `mj_inverse` at the forward `qacc`
/// and returns `[|qfrc_constraint_inverse - qfrc_constraint_forward|, |qfrc_inverse -
/// (qfrc_applied + qfrc_actuator)|]` (Euclidean norms, MuJoCo's `fwdinv`), both zero in exact
/// arithmetic when the solver has converged.
pub fn fwdinv(f: &mut Forward<'_>, qpos: &[f64], qvel: &[f64], qfrc_applied: &[f64]) -> Result<[f64; 2]> {
    f.forward(qpos, qvel, qfrc_applied)?;
    let fw = f.d.clone();
    let inv = f.inverse(qpos, qvel, &fw.qacc)?;
    let norm = |it: &mut dyn Iterator<Item = f64>| it.map(|x| x * x).sum::<f64>().sqrt();
    let c = norm(&mut (0..fw.qacc.len()).map(|k| inv.qfrc_constraint[k] - fw.qfrc_constraint[k]));
    // qfrc_applied + J^T xfrc_applied + qfrc_actuator, as mj_compareFwdInv
    let mut applied = fw.qfrc_applied.clone();
    xfrc_accumulate(f.model, &fw.data, &fw.xfrc_applied, &mut applied);
    let a = norm(&mut (0..fw.qacc.len()).map(|k| inv.qfrc_inverse[k] - applied[k] - fw.qfrc_actuator[k]));
    f.d = fw;
    Ok([c, a])
}

/// Whether MuJoCo would make constraint rows for this model at some state: equality
/// constraints, geoms that may collide, friction loss, or limited joints.
pub fn has_constraints(model: &Model) -> bool {
    super::integrator::check_unconstrained(model).is_err() || (1..=model.nb).any(|i| model.joints[i].limited)
}

/// Reports an iteration count that a caller asked for and a solver cannot use.
pub fn check_solver_options(o: &SolverOptions) -> Result<()> {
    if o.iterations == 0 {
        return Err(Error::BadOption {
            option: "iterations".into(),
            why: "must be at least 1".into(),
        });
    }
    if !(o.tolerance.is_finite() && o.tolerance >= 0.0) {
        return Err(Error::BadOption {
            option: "tolerance".into(),
            why: format!("{} is not a finite non-negative number", o.tolerance),
        });
    }
    Ok(())
}

/// The stages other modules provide: constraint rows
/// ([`super::constraint`]) and solvers ([`super::solver`]), named as the pipeline calls them.
mod stages {
    pub use super::super::constraint::{Invweight, RowScratch};
    pub use super::super::solver::pgs::PgsScratch;
    use super::*;

    /// `mj_setConst`'s `invweight0`.
    pub fn invweight(model: &Model) -> Result<Invweight> {
        Invweight::new(model)
    }

    /// `mj_makeConstraint` + `mj_makeImpedance` + `mj_referenceConstraint`, into `efc` (the
    /// state was checked at the door).
    #[allow(clippy::too_many_arguments)]
    pub fn rows(
        model: &Model,
        d: &Data,
        qpos: &[f64],
        qvel: &[f64],
        contacts: Vec<MjContact>,
        iw: &Invweight,
        efc: &mut Efc,
        scratch: &mut RowScratch,
    ) -> Result<()> {
        super::super::constraint::make_constraint_with(model, d, iw, qpos, qvel, contacts, efc, scratch)
    }

    /// `mj_fwdConstraint`'s solver, in the storage `ws` kept between calls (result in
    /// `ws.result`).
    pub fn solve(s: &Smooth<'_>, efc: &Efc, o: &SolverOptions, ws: &mut super::super::solver::Workspace) -> Result<()> {
        super::super::solver::solve_in(s, efc, o, ws)
    }

    /// `mj_fwdConstraint`'s PGS ([`super::super::solver::solve`]'s checks and choices) into
    /// reused storage.
    pub fn solve_pgs(
        s: &Smooth<'_>,
        efc: &Efc,
        o: &SolverOptions,
        scratch: &mut PgsScratch,
        cones: &mut Vec<super::super::solver::cost::Cone>,
        out: &mut SolverResult,
    ) -> Result<()> {
        use super::super::solver::{check_problem, cost, pgs, JacStorage};
        check_problem(s, efc, o)?;
        cost::cones_into(efc, cones)?;
        let storage = JacStorage::mujoco(s.layout.nv);
        pgs::solve_pgs_into(s, efc, cones, o, pgs::PgsVariant::Accelerated, storage, scratch, out)
    }

    /// `mj_fwdConstraint`'s noslip pass after PGS, whose `AR` and `b` are still in `scratch`.
    pub fn noslip(
        s: &Smooth<'_>,
        efc: &Efc,
        o: &SolverOptions,
        scratch: &mut PgsScratch,
        cones: &[super::super::solver::cost::Cone],
        out: &mut SolverResult,
    ) -> Result<()> {
        use super::super::solver::{pgs, JacStorage};
        let storage = JacStorage::mujoco(s.layout.nv);
        pgs::noslip::noslip_into(s, efc, cones, o, storage, true, scratch, out)
    }

    /// `mj_invConstraint`: force and state of each row at `qacc`.
    pub fn constraint_forces(efc: &Efc, qacc: &[f64], _o: &SolverOptions) -> Result<(Vec<f64>, Vec<EfcState>)> {
        if efc.nefc() == 0 {
            return Ok((vec![], vec![]));
        }
        let inv = super::super::solver::inverse::inv_constraint(efc, qacc)?;
        Ok((inv.efc_force, inv.efc_state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::qacc_smooth;
    use crate::model::canned;

    fn state(model: &Model, seed: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut q = model.qpos0.as_slice().to_vec();
        let u: Vec<f64> = (0..model.nv).map(|k| 0.7 * (k as f64 * 1.3 + seed).sin()).collect();
        model.integrate(&mut q, &u, 1.0).unwrap();
        let v = (0..model.nv).map(|k| 0.5 * (k as f64 * 0.9 + seed).cos()).collect();
        let f = (0..model.nv).map(|k| 0.3 * (k as f64 * 2.1 + seed).sin()).collect();
        (q, v, f)
    }

    /// On a tree without constraints the pipeline's qacc is the smooth acceleration, equal to
    /// Featherstone's ABA with the same passive and applied forces.
    #[test]
    fn unconstrained_qacc_equals_aba() {
        let mut damped = canned::chain(5, true);
        for i in 1..=damped.nb {
            damped.joints[i].damping = 0.2 * i as f64;
            damped.joints[i].stiffness = 0.5;
        }
        for model in [canned::floating_base_ball_arms(), canned::binary_tree(3), damped] {
            assert!(!has_constraints(&model));
            let (q, v, f) = state(&model, 0.4);
            let d = forward(&model, &q, &v, &f).unwrap();
            let a = qacc_smooth(&model, q.as_slice(), v.as_slice(), f.as_slice()).unwrap();
            assert_eq!(d.efc.nefc(), 0);
            for k in 0..model.nv {
                assert!(
                    (d.qacc[k] - a[k]).abs() < 1e-10 * a.amax().max(1.0),
                    "{} dof {k}: {} vs {}",
                    model.name,
                    d.qacc[k],
                    a[k]
                );
            }
            // inverse(forward) gives back the applied force
            let mut fw = Forward::new(&model).unwrap();
            let r = fwdinv(&mut fw, &q, &v, &f).unwrap();
            let scale = f.iter().map(|x| x.abs()).fold(1.0, f64::max);
            assert!(r[0] == 0.0 && r[1] < 1e-10 * scale, "{}: fwdinv {r:?}", model.name);
        }
    }

    /// A pyramidal contact's edge forces decode into the normal and friction forces whose
    /// elliptic rows would carry: for `f = (f_n, f_t1, f_t2)` inside the cone, the edge forces
    /// `f_n/4 +- f_tj/(2 mu_j)` (one valid split, each edge pair summing to `f_n/2`) decode back.
    #[test]
    fn contact_force_decodes_pyramidal_edges() {
        use super::super::constraint::EfcType;
        let model = canned::chain(1, false);
        let mut d = ForwardData::new(&model).unwrap();
        let mu = [0.8, 0.5];
        let (fnorm, ft) = (10.0, [2.0, -1.5]);
        d.efc.efc_type = vec![EfcType::ContactPyramidal; 4];
        d.efc.contacts = vec![MjContact {
            geom: [0, 1],
            pos: crate::spatial::Vec3::zeros(),
            frame: crate::spatial::Mat3::identity(),
            dist: -1e-3,
            dim: 3,
            friction: [mu[0], mu[1], 0.0, 0.0, 0.0],
            solref: [0.02, 1.0],
            solreffriction: [0.0; 2],
            solimp: [0.9, 0.95, 0.001, 0.5, 2.0],
            margin: 0.0,
            gap: 0.0,
            efc_address: Some(0),
        }];
        d.efc_force = (0..4)
            .map(|r| fnorm / 4.0 + if r % 2 == 0 { 1.0 } else { -1.0 } * ft[r / 2] / (2.0 * mu[r / 2]))
            .collect();
        let f = contact_force(&d, 0);
        assert!((f[0] - fnorm).abs() < 1e-12 && (f[1] - ft[0]).abs() < 1e-12 && (f[2] - ft[1]).abs() < 1e-12);
        d.efc.efc_type = vec![EfcType::ContactElliptic; 3];
        d.efc_force = vec![fnorm, ft[0], ft[1]];
        assert_eq!(contact_force(&d, 0)[..3], [fnorm, ft[0], ft[1]]);
        assert_eq!(contact_force(&d, 1), [0.0; 6]);
    }

    #[test]
    fn bad_states_are_refused_at_the_door() {
        let model = canned::chain(2, false);
        let mut fw = Forward::new(&model).unwrap();
        assert!(fw.forward(&[0.0, f64::NAN], &[0.0, 0.0], &[0.0, 0.0]).is_err());
        assert!(fw.forward(&[0.0, 0.0], &[0.0], &[0.0, 0.0]).is_err());
        assert!(fw.forward(&[0.0, 0.0], &[0.0, 0.0], &[0.0, f64::INFINITY]).is_err());
        assert!(fw.inverse(&[0.0, 0.0], &[0.0, 0.0], &[0.0]).is_err());
    }
}
