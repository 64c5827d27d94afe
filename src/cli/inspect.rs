//! `mbd inspect`: a model's structure and the smooth quantities of MuJoCo's pipeline at one
//! state, named as MuJoCo names them.
//!
//! The pipeline has MuJoCo's shape: the state is checked once, at the door ([`State::check`]);
//! then the stages run on one [`mujoco::Data`](crate::mujoco::Data) and one
//! [`Workspace`](crate::dynamics::Workspace), each an allocation-free kernel: position
//! (`mj_kinematics`, `mj_comPos`, `mj_crb`, `mj_factorM`), velocity (`mj_comVel`, `mj_rne`,
//! `mj_passive`), acceleration (`mj_solveM` for `qacc_smooth`). Dense nv x nv outputs are built
//! only when asked (`--dense`).
//!
//! The constrained part ([`ConstraintReport`]) comes from the whole `mj_forward` of
//! [`crate::mujoco::forward`]: contacts, constraint rows (`efc_*`), the solver's forces and
//! statistics, `qfrc_constraint` and `qacc`, with the solver settings of [`SolverOverrides`]
//! (the model's `<option>` unless overridden).

use super::state::{read_state, State};
use crate::dynamics::{
    actuation_with, actuator_na, check_spring_lengths, passive_forces_into, tendon_kinematics_into, transmission_with,
    Actuation, PassiveScratch, TendonState,
};
use crate::error::{Error, Result};
use crate::kinematics::{mj_body_poses, Kinematics, WorldAxes};
use crate::model::mj_body_parentid;
use crate::model::{Cone, Model, Solver};
use crate::mujoco::constraint::{Efc, EfcType};
use crate::mujoco::forward::{fwdinv, Forward};
use crate::mujoco::Data;
use crate::sparse::{factor_i_in_place, solve_ld, OpCount, PivotPolicy};
use serde::Serialize;
use std::path::Path;

/// Sizes, in MuJoCo's names where MuJoCo has them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sizes {
    /// Number of position coordinates.
    pub nq: usize,
    /// Number of degrees of freedom.
    pub nv: usize,
    /// Number of MuJoCo bodies, the world body included.
    pub nbody: usize,
    /// Number of Featherstone bodies (one per joint; a MuJoCo body with k joints gives k).
    pub nb: usize,
    /// Number of mocap bodies (`nmocap`).
    pub nmocap: usize,
}

/// What `mbd inspect` reports: the model's structure and the smooth quantities of MuJoCo's
/// pipeline at one state. Field names are MuJoCo's; dense matrices are lists of rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inspection {
    /// Model name.
    pub model: String,
    /// Sizes.
    pub sizes: Sizes,
    /// Parent of each MuJoCo body (`body_parentid`; the world is its own parent, 0).
    pub body_parentid: Vec<usize>,
    /// Name of each MuJoCo body (`body` names; the world is "world").
    pub body_names: Vec<String>,
    /// Name of each joint, in dof order of their first dof (`jnt` names).
    pub joint_names: Vec<String>,
    /// Parent dof of each dof, -1 at the root of a tree (`dof_parentid`).
    pub dof_parentid: Vec<i64>,
    /// Mocap id of each MuJoCo body, -1 for a body that is not a mocap body (`body_mocapid`).
    pub body_mocapid: Vec<i64>,
    /// The state's positions.
    pub qpos: Vec<f64>,
    /// The state's velocities.
    pub qvel: Vec<f64>,
    /// The state's applied generalized forces.
    pub qfrc_applied: Vec<f64>,
    /// The state's mocap body positions (`mocap_pos`, nmocap).
    pub mocap_pos: Vec<[f64; 3]>,
    /// The state's mocap body orientations (`mocap_quat`, nmocap, as given: not normalized).
    pub mocap_quat: Vec<[f64; 4]>,
    /// World position of each MuJoCo body frame (`xpos`, from `mj_kinematics`).
    pub xpos: Vec<[f64; 3]>,
    /// World orientation of each MuJoCo body frame, (w, x, y, z) with w >= 0 (`xquat`).
    pub xquat: Vec<[f64; 4]>,
    /// Joint-space inertia matrix with armature (MuJoCo's `M`, dense as `mj_fullM` gives it;
    /// Featherstone's H), only with `--dense` (nv x nv numbers); `qM` always holds it sparsely.
    #[serde(rename = "M", skip_serializing_if = "Option::is_none")]
    pub m: Option<Vec<Vec<f64>>>,
    /// The diagonal of M.
    #[serde(rename = "M_diag")]
    pub m_diag: Vec<f64>,
    /// Bias forces, Coriolis, centrifugal and gravity (`qfrc_bias`; Featherstone's C).
    pub qfrc_bias: Vec<f64>,
    /// Passive forces: joint damping and springs (`qfrc_passive`).
    pub qfrc_passive: Vec<f64>,
    /// Unconstrained acceleration `M^-1 (qfrc_passive + qfrc_applied - qfrc_bias)`
    /// (`qacc_smooth`), by MuJoCo's route: `mj_solveM` with the factor `qLD`.
    pub qacc_smooth: Vec<f64>,
    /// [potential, kinetic] energy (MuJoCo's `energy`: gravity and springs, 1/2 v' M v).
    pub energy: [f64; 2],
    /// MuJoCo's com-based quantities and sparse factor at this state ([`crate::mujoco`]).
    #[serde(flatten)]
    pub com: ComBased,
    /// Loop-closure structure of the equality constraints (Featherstone 8.10), when the model has
    /// `connect` or `weld` equalities.
    pub loops: Option<LoopReport>,
    /// The constrained part of `mj_forward`: contacts, rows, forces, `qacc`.
    #[serde(flatten)]
    pub constraint: ConstraintReport,
    /// What the MJCF reader skipped.
    pub warnings: Vec<String>,
}

/// Solver settings that override the model's `<option>` (`mbd inspect --solver --cone
/// --iterations --tolerance`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolverOverrides {
    /// `solver`.
    pub solver: Option<Solver>,
    /// `cone`.
    pub cone: Option<Cone>,
    /// `iterations` (at least 1).
    pub iterations: Option<usize>,
    /// `tolerance` (finite, non-negative).
    pub tolerance: Option<f64>,
}

impl SolverOverrides {
    /// Writes the overrides into `model.opt`, after checking them.
    pub fn apply(&self, model: &mut Model) -> Result<()> {
        if let Some(k) = self.iterations {
            if k == 0 {
                return Err(Error::BadOption {
                    option: "iterations".into(),
                    why: "must be at least 1".into(),
                });
            }
            model.opt.iterations = k;
        }
        if let Some(t) = self.tolerance {
            if !(t.is_finite() && t >= 0.0) {
                return Err(Error::BadOption {
                    option: "tolerance".into(),
                    why: format!("{t} is not a finite non-negative number"),
                });
            }
            model.opt.tolerance = t;
        }
        if let Some(s) = self.solver {
            model.opt.solver = s;
        }
        if let Some(c) = self.cone {
            model.opt.cone = c;
        }
        Ok(())
    }
}

/// The solver settings used (MuJoCo's `opt`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SolverSettings {
    /// `PGS`, `CG` or `Newton`.
    pub solver: String,
    /// `pyramidal` or `elliptic`.
    pub cone: String,
    /// Maximum iterations.
    pub iterations: usize,
    /// Tolerance.
    pub tolerance: f64,
    /// Sweeps of the noslip pass (`noslip_iterations`, 0 for none): with it, `fwdinv` no longer
    /// vanishes (the pass leaves the soft model, which the inverse reads).
    pub noslip_iterations: usize,
}

/// One contact (MuJoCo's `mjContact`), its geoms by index and name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContactReport {
    /// The two geoms (`geom`); the normal points from the first to the second.
    pub geom: [usize; 2],
    /// Their names.
    pub geom_name: [String; 2],
    /// Point midway between the surfaces (`pos`).
    pub pos: [f64; 3],
    /// Rows normal, tangent 1, tangent 2 (`frame`, 9 numbers).
    pub frame: [f64; 9],
    /// Signed distance (`dist`).
    pub dist: f64,
    /// Contact dimensionality (`dim`).
    pub dim: usize,
    /// First row (`efc_address`), -1 without rows.
    pub efc_address: i64,
}

/// One solver iteration's statistics (MuJoCo's `mjSolverStat`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatReport {
    /// Scaled cost decrease.
    pub improvement: f64,
    /// Scaled gradient norm.
    pub gradient: f64,
    /// Line-search slope at 0.
    pub lineslope: f64,
    /// Active rows.
    pub nactive: usize,
    /// Rows whose state changed.
    pub nchange: usize,
    /// Line-search evaluations.
    pub neval: usize,
    /// Factor updates.
    pub nupdate: usize,
}

/// The constrained quantities of `mj_forward`, MuJoCo's names; matrices are lists of rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConstraintReport {
    /// The solver settings used.
    pub opt: SolverSettings,
    /// Number of contacts.
    pub ncon: usize,
    /// Number of constraint rows.
    pub nefc: usize,
    /// Equality, friction-loss and limit rows (`ne`, `nf`, `nl`); contact rows follow.
    pub ne: usize,
    /// Friction-loss rows.
    pub nf: usize,
    /// Limit rows.
    pub nl: usize,
    /// The contacts.
    pub contacts: Vec<ContactReport>,
    /// Row types, MuJoCo's numbers (`mjtConstraint`).
    pub efc_type: Vec<i32>,
    /// Row elements (`efc_id`).
    pub efc_id: Vec<usize>,
    /// Row elements by name: equality, joint, tendon, or the contact's geom pair.
    pub efc_name: Vec<String>,
    /// The constraint Jacobian, nefc rows of nv.
    #[serde(rename = "efc_J")]
    pub efc_j: Vec<Vec<f64>>,
    /// Constraint positions (`efc_pos`).
    pub efc_pos: Vec<f64>,
    /// Reference accelerations (`efc_aref`).
    pub efc_aref: Vec<f64>,
    /// Regularizers (`efc_R`).
    #[serde(rename = "efc_R")]
    pub efc_r: Vec<f64>,
    /// `1 / R` (`efc_D`).
    #[serde(rename = "efc_D")]
    pub efc_d: Vec<f64>,
    /// Constraint forces (`efc_force`).
    pub efc_force: Vec<f64>,
    /// Row states at the solution, MuJoCo's numbers (`mjtConstraintState`).
    pub efc_state: Vec<i32>,
    /// `J^T efc_force`.
    pub qfrc_constraint: Vec<f64>,
    /// The constrained acceleration.
    pub qacc: Vec<f64>,
    /// Solver iterations (`solver_niter`).
    pub solver_niter: usize,
    /// Per-iteration statistics (`solver`).
    pub solver: Vec<StatReport>,
    /// MuJoCo's `fwdinv`: `mj_inverse` at this `qacc` against the forward pass, norms of the
    /// constraint-force and applied-force differences.
    pub fwdinv: [f64; 2],
    /// The name of each `sensordata` entry ([`crate::mujoco::sensor::sensor_labels`]).
    pub sensor_names: Vec<String>,
    /// The sensors' values at this state (`sensordata`, [`crate::mujoco::sensor::sensors_into`]).
    pub sensordata: Vec<f64>,
}

/// MuJoCo's name of a row type.
pub fn efc_type_name(t: EfcType) -> &'static str {
    match t {
        EfcType::Equality => "equality",
        EfcType::FrictionDof => "friction_dof",
        EfcType::FrictionTendon => "friction_tendon",
        EfcType::LimitJoint => "limit_joint",
        EfcType::LimitTendon => "limit_tendon",
        EfcType::ContactFrictionless => "contact_frictionless",
        EfcType::ContactPyramidal => "contact_pyramidal",
        EfcType::ContactElliptic => "contact_elliptic",
    }
}

fn efc_type_from(n: i32) -> Option<EfcType> {
    [
        EfcType::Equality,
        EfcType::FrictionDof,
        EfcType::FrictionTendon,
        EfcType::LimitJoint,
        EfcType::LimitTendon,
        EfcType::ContactFrictionless,
        EfcType::ContactPyramidal,
        EfcType::ContactElliptic,
    ]
    .into_iter()
    .find(|t| *t as i32 == n)
}

/// The model element of row `i`, by name.
pub fn efc_name(model: &Model, efc: &Efc, i: usize) -> String {
    let id = efc.efc_id[i];
    let or_index_of = |s: &str, kind: &str, index: usize| {
        if s.is_empty() {
            format!("{kind} {index}")
        } else {
            s.to_string()
        }
    };
    let or_index = |s: &str, kind: &str| or_index_of(s, kind, id);
    match efc.efc_type[i] {
        EfcType::Equality => match model.equality.get(id) {
            Some(
                crate::model::Equality::Connect { name, .. }
                | crate::model::Equality::Weld { name, .. }
                | crate::model::Equality::Joint { name, .. }
                | crate::model::Equality::Tendon { name, .. },
            ) => or_index(name, "equality"),
            None => format!("equality {id}"),
        },
        EfcType::FrictionDof => match model.dof_body.get(id) {
            Some(&b) => or_index(&model.joints[b].name, "dof"),
            None => format!("dof {id}"),
        },
        EfcType::LimitJoint => match model.joints.get(id) {
            Some(j) => or_index(&j.name, "joint"),
            None => format!("joint {id}"),
        },
        EfcType::FrictionTendon | EfcType::LimitTendon => match model.tendons.get(id) {
            Some(t) => or_index(&t.name, "tendon"),
            None => format!("tendon {id}"),
        },
        _ => match efc.contacts.get(id) {
            Some(c) => {
                let g = |k: usize| or_index_of(&model.geoms[c.geom[k]].name, "geom", c.geom[k]);
                format!("{}/{}", g(0), g(1))
            }
            None => format!("contact {id}"),
        },
    }
}

/// The constrained part of [`Inspection`] at `(q, v, qfrc_applied)` with the model's options,
/// the mocap bodies at their default poses (see [`constraint_report_at`]).
pub fn constraint_report(model: &Model, q: &[f64], v: &[f64], qfrc_applied: &[f64]) -> Result<ConstraintReport> {
    constraint_report_at(
        model,
        &State {
            qpos: q.to_vec(),
            qvel: v.to_vec(),
            qfrc_applied: qfrc_applied.to_vec(),
            ..State::reference(model)
        },
    )
}

/// The constrained part of [`Inspection`] at the state's positions, velocities, applied forces
/// (`qfrc_applied` and `xfrc_applied`) and mocap poses, with the model's options (controls and activations at zero).
pub fn constraint_report_at(model: &Model, state: &State) -> Result<ConstraintReport> {
    let mut fw = Forward::new(model)?;
    fw.mocap_pos.clone_from(&state.mocap_pos);
    fw.mocap_quat.clone_from(&state.mocap_quat);
    fw.xfrc_applied.clone_from(&state.xfrc_applied);
    let fi = fwdinv(&mut fw, &state.qpos, &state.qvel, &state.qfrc_applied)?;
    let d = &fw.d;
    let efc = &d.efc;
    let nv = model.nv;
    Ok(ConstraintReport {
        opt: SolverSettings {
            solver: model.opt.solver.name().into(),
            cone: model.opt.cone.name().into(),
            iterations: fw.options.iterations,
            tolerance: fw.options.tolerance,
            noslip_iterations: fw.options.noslip_iterations,
        },
        ncon: efc.contacts.len(),
        nefc: efc.nefc(),
        ne: efc.ne,
        nf: efc.nf,
        nl: efc.nl,
        contacts: efc
            .contacts
            .iter()
            .map(|c| ContactReport {
                geom: c.geom,
                geom_name: [model.geoms[c.geom[0]].name.clone(), model.geoms[c.geom[1]].name.clone()],
                pos: [c.pos.x, c.pos.y, c.pos.z],
                frame: std::array::from_fn(|k| c.frame[(k / 3, k % 3)]),
                dist: c.dist,
                dim: c.dim,
                efc_address: c.efc_address.map_or(-1, |a| a as i64),
            })
            .collect(),
        efc_type: efc.efc_type.iter().map(|t| *t as i32).collect(),
        efc_id: efc.efc_id.clone(),
        efc_name: (0..efc.nefc()).map(|i| efc_name(model, efc, i)).collect(),
        efc_j: {
            let j = efc.dense_j();
            (0..efc.nefc()).map(|r| (0..nv).map(|c| j[(r, c)]).collect()).collect()
        },
        efc_pos: efc.pos.clone(),
        efc_aref: efc.aref.clone(),
        efc_r: efc.r.clone(),
        efc_d: efc.d.clone(),
        efc_force: d.efc_force.clone(),
        efc_state: d.efc_state.iter().map(|s| *s as i32).collect(),
        qfrc_constraint: d.qfrc_constraint.clone(),
        qacc: d.qacc.clone(),
        solver_niter: d.solver_niter,
        solver: d
            .solver
            .iter()
            .map(|s| StatReport {
                improvement: s.improvement,
                gradient: s.gradient,
                lineslope: s.lineslope,
                nactive: s.nactive,
                nchange: s.nchange,
                neval: s.neval,
                nupdate: s.nupdate,
            })
            .collect(),
        fwdinv: fi,
        sensor_names: crate::mujoco::sensor::sensor_labels(model),
        sensordata: d.sensordata.clone(),
    })
}

/// The com-based quantities of `mj_comPos`, `mj_comVel`, `mj_crb` and `mj_factorM`, per MuJoCo
/// body or per dof, with MuJoCo's names (spatial vectors as [angular; linear]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComBased {
    /// Centre of mass of each MuJoCo body's subtree (`subtree_com`).
    pub subtree_com: Vec<[f64; 3]>,
    /// Body inertia about its tree's centre of mass, world axes (`cinert`, 10 numbers).
    pub cinert: Vec<[f64; 10]>,
    /// Composite inertia of each body's subtree, same layout (`crb`).
    pub crb: Vec<[f64; 10]>,
    /// Motion axis of each dof (`cdof`).
    pub cdof: Vec<[f64; 6]>,
    /// Its time derivative (`cdof_dot`).
    pub cdof_dot: Vec<[f64; 6]>,
    /// Body velocities (`cvel`).
    pub cvel: Vec<[f64; 6]>,
    /// Start of each dof's row in the legacy sparse layout (`dof_Madr`).
    #[serde(rename = "dof_Madr")]
    pub dof_madr: Vec<usize>,
    /// The inertia matrix in the legacy layout (`qM`): per row the diagonal, then the ancestors
    /// nearest first.
    #[serde(rename = "qM")]
    pub qm: Vec<f64>,
    /// Its `L^T D L` factor in the same layout (`qLD`).
    #[serde(rename = "qLD")]
    pub qld: Vec<f64>,
    /// `1 / D` (`qLDiagInv`).
    #[serde(rename = "qLDiagInv")]
    pub qld_diag_inv: Vec<f64>,
    /// The unit lower-triangular L, dense (only with `--dense`).
    #[serde(rename = "qLD_L_dense", skip_serializing_if = "Option::is_none")]
    pub l_dense: Option<Vec<Vec<f64>>>,
    /// The diagonal D.
    #[serde(rename = "qLD_D")]
    pub d: Vec<f64>,
}

/// Rank and mobility of the loop constraints made from a model's equality constraints
/// (`connect` as a spherical loop joint, `weld` as a fixed one; Featherstone 8.10).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoopReport {
    /// Number of loop joints.
    pub loops: usize,
    /// Number of constraint rows `n^c`.
    pub nc: usize,
    /// `rank(K)`.
    pub rank: usize,
    /// Mobility `n - rank(K)`.
    pub mobility: usize,
    /// `rank(K) = n^c`.
    pub properly_constrained: bool,
    /// `rank(K) < n^c` (redundant constraints).
    pub overconstrained: bool,
}

fn motion6(m: &crate::spatial::Motion) -> [f64; 6] {
    [m.w.x, m.w.y, m.w.z, m.v.x, m.v.y, m.v.z]
}

/// The loop report of a model's `connect`/`weld` equalities at `q` (None without any).
pub fn loop_report(model: &Model, q: &[f64]) -> Result<Option<LoopReport>> {
    let closed = crate::loops::with_loops_from_equality(model)?;
    if closed.loops.is_empty() {
        return Ok(None);
    }
    let p = crate::loops::loop_properties(&closed, q)?;
    Ok(Some(LoopReport {
        loops: closed.loops.len(),
        nc: p.nc,
        rank: p.rank,
        mobility: p.mobility,
        properly_constrained: p.properly_constrained(),
        overconstrained: p.overconstrained(),
    }))
}

/// `mbd inspect`: reads an MJCF model and, optionally, a state file, and computes
/// [`Inspection`] (dense matrices only when `dense`).
pub fn inspect(model_path: impl AsRef<Path>, state: Option<&Path>, dense: bool) -> Result<Inspection> {
    inspect_at(model_path, state, None, dense)
}

/// [`inspect`] at a state file or at the model's keyframe named `key` (MuJoCo's
/// `<keyframe><key name>`: its qpos and qvel); at most one of the two.
pub fn inspect_at(
    model_path: impl AsRef<Path>,
    state: Option<&Path>,
    key: Option<&str>,
    dense: bool,
) -> Result<Inspection> {
    inspect_with(model_path, state, key, dense, &SolverOverrides::default())
}

/// [`inspect_at`] with solver settings that override the model's `<option>`.
pub fn inspect_with(
    model_path: impl AsRef<Path>,
    state: Option<&Path>,
    key: Option<&str>,
    dense: bool,
    overrides: &SolverOverrides,
) -> Result<Inspection> {
    let mut loaded = crate::mujoco::load(model_path.as_ref())?;
    overrides.apply(&mut loaded.model)?;
    let state = match (state, key) {
        (Some(p), None) => read_state(p, &loaded.model)?,
        (None, Some(k)) => {
            let Some(kf) = loaded.model.keyframes.iter().find(|f| f.name == k) else {
                return Err(Error::Unknown {
                    kind: "keyframe".into(),
                    name: k.into(),
                });
            };
            State {
                time: kf.time,
                qpos: kf.qpos.clone(),
                qvel: kf.qvel.clone(),
                act: kf.act.clone(),
                ctrl: kf.ctrl.clone(),
                qfrc_applied: vec![0.0; loaded.model.nv],
                qacc_warmstart: vec![0.0; loaded.model.nv],
                mocap_pos: kf.mpos.clone(),
                mocap_quat: kf.mquat.clone(),
                ..State::reference(&loaded.model)
            }
        }
        (None, None) => State::reference(&loaded.model),
        (Some(_), Some(_)) => return Err(Error::State("give a state file or a keyframe, not both".into())),
    };
    inspect_model(&loaded.model, &state, loaded.warnings, dense)
}

// ANCHOR: pipeline
/// [`inspect`] on a model already in memory: one check of the state, then MuJoCo's smooth
/// pipeline on one `Data`.
pub fn inspect_model(model: &Model, state: &State, warnings: Vec<String>, dense: bool) -> Result<Inspection> {
    state.check(model)?;
    let (q, v) = (state.qpos.as_slice(), state.qvel.as_slice());
    let nv = model.nv;
    let mut d = Data::new(model)?;
    d.mocap_pos.clone_from(&state.mocap_pos);
    d.mocap_quat.clone_from(&state.mocap_quat);
    // position stage: mj_kinematics + mj_comPos (the mocap bodies at the state's poses),
    // mj_crb, mj_factorM
    crate::mujoco::com::mj_com_pos(model, &mut d, q)?;
    let layout = model.mj_layout();
    crate::mujoco::com::mj_crb(model, layout, &mut d);
    d.qld.copy_from_slice(&d.qm);
    let mut factor_warnings = vec![];
    factor_i_in_place(
        layout,
        &mut d.qld,
        &mut d.qld_diag_inv,
        PivotPolicy::Error,
        &mut factor_warnings,
        &mut OpCount::default(),
    )?;
    // velocity stage: mj_comVel, mj_rne (qfrc_bias), mj_passive
    crate::mujoco::com::mj_com_vel(model, &mut d, v);
    let mut qfrc_bias = vec![0.0; nv];
    crate::mujoco::com::mj_rne(model, &mut d, v, None, &mut qfrc_bias);
    // mj_tendon and mj_passive, with the bodies where mj_comPos placed them
    check_spring_lengths(model)?;
    let mut ten = TendonState::new(model);
    tendon_kinematics_into(model, q, &d.mocap_x, &mut ten)?;
    let tendons = (!model.tendons.is_empty()).then_some(&ten);
    let (mut qfrc_passive, mut passive) = (vec![0.0; nv], PassiveScratch::default());
    passive_forces_into(model, q, v, &d.mocap_x, tendons, &mut passive, &mut qfrc_passive);
    // actuation stage at ctrl = 0: the bias forces of servos (mj_transmission, mj_fwdActuation)
    let mut act = Actuation::new(model);
    if !model.actuators.is_empty() {
        let (length, moment) = (&mut act.length, &mut act.moment);
        transmission_with(model, q, &d.mocap_x, &ten, &mut WorldAxes::default(), length, moment)?;
        let (ctrl, activation) = (vec![0.0; model.actuators.len()], vec![0.0; actuator_na(model)]);
        actuation_with(model, v, &ctrl, &activation, &passive.gravcomp, &mut act)?;
        crate::error::check_output("qfrc_actuator", &act.qfrc)?;
    }
    let qfrc_actuator = act.qfrc;
    // acceleration stage: qacc_smooth = M^-1 (qfrc_passive + qfrc_actuator + qfrc_applied
    // + J^T xfrc_applied - qfrc_bias)
    let mut qacc_smooth: Vec<f64> = (0..nv)
        .map(|k| qfrc_passive[k] + qfrc_actuator[k] + state.qfrc_applied[k] - qfrc_bias[k])
        .collect();
    crate::mujoco::forward::xfrc_accumulate(model, &d, &state.xfrc_applied, &mut qacc_smooth);
    solve_ld(
        layout,
        &d.qld,
        &d.qld_diag_inv,
        &mut qacc_smooth,
        &mut OpCount::default(),
    )?;
    // energy: potential from the body centres of mass, kinetic 1/2 v' M v from qM
    let mut mv = vec![0.0; nv];
    crate::mujoco::solver::mul_m(layout, &d.qm, v, &mut mv);
    let kinetic = 0.5 * (0..nv).map(|k| v[k] * mv[k]).sum::<f64>();
    let mut potential = 0.0;
    // every body's centre of mass where mj_comPos placed it (the mocap bodies' too)
    for i in 1..=model.nb {
        potential -= model.inertia[i].m * model.opt.gravity.dot(&d.xipos_fb[i]);
        let j = &model.joints[i];
        if j.stiffness != 0.0 && j.jtype.nq() == 1 && j.jtype.nv() == 1 {
            let a = model.q_adr[i];
            potential += 0.5 * j.stiffness * (q[a] - model.qpos0[a]).powi(2);
        }
    }
    let kin = Kinematics {
        x_up: vec![],
        x_0: d.x_0.clone(),
    };
    let (xpos, xquat) = mj_body_poses(model, &kin);
    let l_dense = dense.then(|| layout.unpack_ld(&d.qld).0);
    let com = ComBased {
        subtree_com: d.subtree_com(model).iter().map(|p| [p.x, p.y, p.z]).collect(),
        cinert: d.cinert(model),
        crb: d.crb(model),
        cdof: d.cdof.iter().map(motion6).collect(),
        cdof_dot: d.cdof_dot.iter().map(motion6).collect(),
        cvel: d.cvel(model).iter().map(motion6).collect(),
        dof_madr: layout.dof_madr.clone(),
        qm: d.qm.clone(),
        qld: d.qld.clone(),
        qld_diag_inv: d.qld_diag_inv.clone(),
        l_dense: l_dense.map(|l| (0..nv).map(|r| l.row(r).iter().copied().collect()).collect()),
        d: layout.dof_madr.iter().map(|&a| d.qld[a]).collect(),
    };
    Ok(Inspection {
        model: model.name.clone(),
        sizes: Sizes {
            nq: model.nq,
            nv,
            nbody: model.mj_nbody(),
            nb: model.nb,
            nmocap: model.nmocap(),
        },
        body_parentid: mj_body_parentid(model),
        body_names: model.mj_body_name.clone(),
        joint_names: (1..=model.nb)
            .filter(|&i| model.joints[i].jtype.nv() > 0)
            .map(|i| model.joints[i].name.clone())
            .collect(),
        dof_parentid: model.dof_parent.iter().map(|p| p.map_or(-1, |d| d as i64)).collect(),
        body_mocapid: model
            .mj_body_last
            .iter()
            .map(|&f| model.body_mocapid[f].map_or(-1, |k| k as i64))
            .collect(),
        qpos: state.qpos.clone(),
        qvel: state.qvel.clone(),
        qfrc_applied: state.qfrc_applied.clone(),
        mocap_pos: state.mocap_pos.clone(),
        mocap_quat: state.mocap_quat.clone(),
        xpos: xpos.iter().map(|p| [p.x, p.y, p.z]).collect(),
        xquat,
        m: dense.then(|| {
            let m = layout.to_dense(&d.qm);
            (0..nv).map(|r| m.row(r).iter().copied().collect()).collect()
        }),
        m_diag: layout.dof_madr.iter().map(|&a| d.qm[a]).collect(),
        qfrc_bias,
        qfrc_passive,
        qacc_smooth,
        energy: [potential, kinetic],
        com,
        loops: loop_report(model, q)?,
        constraint: constraint_report_at(model, state)?,
        warnings: warnings.into_iter().chain(factor_warnings).collect(),
    })
}
// ANCHOR_END: pipeline

impl Inspection {
    /// A short human-readable summary (what `mbd inspect` prints without `--json`).
    pub fn summary(&self) -> String {
        let list = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(", ");
        let s = &self.sizes;
        let mut out = format!(
            "model '{}': nq {}, nv {}, {} MuJoCo bodies incl. world ({} Featherstone bodies)\n",
            self.model, s.nq, s.nv, s.nbody, s.nb
        );
        out += &format!(
            "energy: potential {:.6}, kinetic {:.6}\n",
            self.energy[0], self.energy[1]
        );
        out += &format!("bodies:      {}\n", self.body_names.join(", "));
        out += &format!("joints:      {}\n", self.joint_names.join(", "));
        let mocap: Vec<String> = (0..self.body_mocapid.len())
            .filter_map(|b| {
                let k = usize::try_from(self.body_mocapid[b]).ok()?;
                let (p, q) = (self.mocap_pos.get(k)?, self.mocap_quat.get(k)?);
                Some(format!(
                    "{} at ({:.4}, {:.4}, {:.4}), quat ({:.4}, {:.4}, {:.4}, {:.4})",
                    self.body_names[b], p[0], p[1], p[2], q[0], q[1], q[2], q[3]
                ))
            })
            .collect();
        if !mocap.is_empty() {
            out += &format!("mocap:       {}\n", mocap.join("; "));
        }
        out += &format!("diag(M):     [{}]\n", list(&self.m_diag));
        out += &format!("qfrc_bias:   [{}]\n", list(&self.qfrc_bias));
        out += &format!("qacc_smooth: [{}]\n", list(&self.qacc_smooth));
        if let Some(l) = &self.loops {
            out += &format!(
                "loops: {} loop joints from equalities, {} rows, rank(K) {}, mobility {} ({})\n",
                l.loops,
                l.nc,
                l.rank,
                l.mobility,
                if l.overconstrained {
                    "overconstrained"
                } else {
                    "properly constrained"
                }
            );
        }
        out += &self.constraint.table();
        for w in &self.warnings {
            out += &format!("warning: {w}\n");
        }
        out += "(--json prints every quantity: xpos, xquat, qM, qfrc_passive, cinert, cdof, qLD, contacts, efc_J, efc_force, ...; --dense adds M and L as dense matrices)";
        out
    }
}

impl ConstraintReport {
    /// The readable part of `mbd inspect`'s text output: counts, and the active rows (non-zero
    /// force) with type, element, position, reference acceleration and force.
    pub fn table(&self) -> String {
        let o = &self.opt;
        let noslip = if o.noslip_iterations > 0 {
            format!(" (noslip pass: up to {} sweeps)", o.noslip_iterations)
        } else {
            String::new()
        };
        let mut out = format!(
            "constraints ({} solver, {} cone): ncon {}, nefc {} (ne {}, nf {}, nl {}), {} iterations{noslip}, fwdinv [{:.1e}, {:.1e}]\n",
            o.solver, o.cone, self.ncon, self.nefc, self.ne, self.nf, self.nl, self.solver_niter, self.fwdinv[0], self.fwdinv[1]
        );
        let active: Vec<usize> = (0..self.nefc).filter(|&i| self.efc_force[i] != 0.0).collect();
        if !active.is_empty() {
            out += &format!(
                "{:>4}  {:<20}  {:<24}  {:>12}  {:>12}  {:>12}\n",
                "row", "type", "element", "efc_pos", "efc_aref", "efc_force"
            );
            for i in active {
                let t = efc_type_from(self.efc_type[i]).map_or("?", efc_type_name);
                out += &format!(
                    "{i:>4}  {t:<20}  {:<24}  {:>12.5e}  {:>12.5e}  {:>12.5e}\n",
                    self.efc_name[i], self.efc_pos[i], self.efc_aref[i], self.efc_force[i]
                );
            }
        }
        if self.nefc > 0 {
            let list = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(", ");
            out += &format!("qacc:        [{}]\n", list(&self.qacc));
        }
        if !self.sensordata.is_empty() {
            out += &format!("sensors ({} numbers):\n", self.sensordata.len());
            for (name, x) in self.sensor_names.iter().zip(&self.sensordata) {
                out += &format!("  {name:<28} {x:>14.6e}\n");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::crba;
    use crate::model::canned;
    use nalgebra::DVector;

    #[test]
    fn inspection_matches_the_library_and_mujoco_structure() {
        let model = canned::floating_base_ball_arms();
        let mut state = State::reference(&model);
        state.qvel = (0..model.nv).map(|k| 0.2 * (k as f64).sin()).collect();
        let ins = inspect_model(&model, &state, vec![], true).unwrap();
        let m = ins.m.clone().unwrap();
        assert_eq!(ins.sizes.nv, model.nv);
        assert_eq!(m.len(), model.nv);
        // M symmetric and equal to CRBA's; qacc_smooth solves M a = passive - bias (no applied).
        let h = crba(&model, &state.qpos).unwrap();
        for r in 0..model.nv {
            for c in 0..model.nv {
                assert!((m[r][c] - h[(r, c)]).abs() < 1e-12 * h.amax());
                assert!((m[r][c] - m[c][r]).abs() < 1e-12);
            }
        }
        let f = DVector::from_vec(ins.qfrc_passive.clone()) - DVector::from_vec(ins.qfrc_bias.clone());
        let ma = &h * DVector::from_vec(ins.qacc_smooth.clone());
        assert!((ma - f).amax() < 1e-9);
        // dof_parentid: -1 exactly at tree roots, parents precede children.
        for (d, &p) in ins.dof_parentid.iter().enumerate() {
            assert!(p < d as i64);
        }
        assert_eq!(ins.dof_parentid[0], -1);
        assert_eq!(ins.body_parentid[0], 0);
        // Kinetic energy is 1/2 v' M v.
        let v = DVector::from_vec(state.qvel.clone());
        assert!((ins.energy[1] - 0.5 * v.dot(&(&h * &v))).abs() < 1e-12);
        // without --dense there is no dense M, but its diagonal
        let sparse = inspect_model(&model, &state, vec![], false).unwrap();
        assert!(sparse.m.is_none() && sparse.com.l_dense.is_none());
        assert_eq!(sparse.m_diag, ins.m_diag);
        // potential energy by MuJoCo's route equals the body-frame one
        let u = crate::dynamics::potential_energy(&model, &state.qpos).unwrap();
        assert!((ins.energy[0] - u).abs() < 1e-12 * u.abs().max(1.0));
    }
}
