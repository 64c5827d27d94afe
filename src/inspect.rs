//! The library side of the `mbd` command: `mbd inspect` (a model and the smooth-dynamics
//! quantities of MuJoCo's pipeline at one state, named as MuJoCo names them) and `mbd simulate`
//! (a trajectory of an unconstrained model with MuJoCo's semi-implicit Euler or RK4 step).
//!
//! States use MuJoCo's conventions throughout: quaternions (w, x, y, z), free-joint `qvel` =
//! [world linear velocity of the body origin, body-frame angular velocity]. A state file is JSON,
//! `{"qpos": [...], "qvel": [...], "qfrc_applied": [...]}`, each key optional (`qpos0` and zeros
//! otherwise).
//!
//! Book chapter: "Joint models and kinematic trees" (reading MuJoCo models); the quantities are
//! those of MuJoCo's `mj_fwdPosition`/`mj_fwdVelocity`/`mj_fwdAcceleration` for a model without
//! constraints.

use crate::dynamics::{bias_forces, crba, kinetic_energy, passive_forces, potential_energy, qacc_smooth};
use crate::error::{check_vector, Error, Result};
use crate::kinematics::{forward_kinematics, mj_body_poses};
use crate::model::{JointType, Model};
use crate::spatial::Vec3;
use nalgebra::{DMatrix, DVector};
use serde::Serialize;
use std::path::Path;

/// A state in MuJoCo's conventions: positions, velocities and applied generalized forces.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Generalized positions (length nq).
    pub qpos: Vec<f64>,
    /// Generalized velocities (length nv).
    pub qvel: Vec<f64>,
    /// Applied generalized forces, MuJoCo's `qfrc_applied` (length nv).
    pub qfrc_applied: Vec<f64>,
}

impl State {
    /// The model's reference state: `qpos0`, zero velocity, no applied force.
    pub fn reference(model: &Model) -> Self {
        State {
            qpos: model.qpos0.as_slice().to_vec(),
            qvel: vec![0.0; model.nv],
            qfrc_applied: vec![0.0; model.nv],
        }
    }

    /// Checks lengths, finiteness and quaternions against `model`.
    pub fn check(&self, model: &Model) -> Result<()> {
        model.check_state(&self.qpos, &self.qvel)?;
        check_vector("qfrc_applied", &self.qfrc_applied, model.nv)
    }
}

/// Reads a state file (see the module documentation) for `model` and checks it.
pub fn read_state(path: &Path, model: &Model) -> Result<State> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::State(format!("cannot read {}: {e}", path.display())))?;
    parse_state(&text, model).map_err(|e| match e {
        Error::State(m) => Error::State(format!("{}: {m}", path.display())),
        other => other,
    })
}

/// Parses the JSON text of a state file for `model` and checks it. JSON has no NaN or infinity,
/// so a `null` entry (what many writers emit for them) is reported as such.
pub fn parse_state(text: &str, model: &Model) -> Result<State> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let hint = if text.contains("NaN") || text.contains("Infinity") {
            " (JSON cannot carry NaN or infinity)"
        } else {
            ""
        };
        Error::State(format!("not valid JSON: {e}{hint}"))
    })?;
    let obj = value.as_object().ok_or_else(|| {
        Error::State("expected an object {\"qpos\": [...], \"qvel\": [...], \"qfrc_applied\": [...]}".into())
    })?;
    let mut state = State::reference(model);
    for (key, v) in obj {
        let (target, expected) = match key.as_str() {
            "qpos" => (&mut state.qpos, model.nq),
            "qvel" => (&mut state.qvel, model.nv),
            "qfrc_applied" => (&mut state.qfrc_applied, model.nv),
            other => {
                return Err(Error::State(format!(
                    "unknown key \"{other}\" (expected qpos, qvel, qfrc_applied)"
                )));
            }
        };
        *target = number_list(key, v)?;
        if target.len() != expected {
            let size = if key == "qpos" { "nq" } else { "nv" };
            return Err(Error::State(format!(
                "{key} has {} entries, the model needs {expected} ({size})",
                target.len()
            )));
        }
    }
    state.check(model)?;
    Ok(state)
}

fn number_list(key: &str, v: &serde_json::Value) -> Result<Vec<f64>> {
    let arr = v
        .as_array()
        .ok_or_else(|| Error::State(format!("{key} must be a list of numbers")))?;
    arr.iter()
        .enumerate()
        .map(|(i, x)| match x {
            serde_json::Value::Number(n) => n
                .as_f64()
                .filter(|f| f.is_finite())
                .ok_or_else(|| Error::State(format!("{key}[{i}] = {n} is not a finite number"))),
            serde_json::Value::Null => Err(Error::State(format!(
                "{key}[{i}] is null (JSON cannot carry NaN or infinity; give finite numbers)"
            ))),
            other => Err(Error::State(format!("{key}[{i}] = {other} is not a number"))),
        })
        .collect()
}

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
    /// Parent dof of each dof, -1 at the root of a tree (`dof_parentid`).
    pub dof_parentid: Vec<i64>,
    /// The state's positions.
    pub qpos: Vec<f64>,
    /// The state's velocities.
    pub qvel: Vec<f64>,
    /// The state's applied generalized forces.
    pub qfrc_applied: Vec<f64>,
    /// World position of each MuJoCo body frame (`xpos`, from `mj_kinematics`).
    pub xpos: Vec<[f64; 3]>,
    /// World orientation of each MuJoCo body frame, (w, x, y, z) with w >= 0 (`xquat`).
    pub xquat: Vec<[f64; 4]>,
    /// Joint-space inertia matrix with armature (MuJoCo's `M`, dense as `mj_fullM` gives it;
    /// Featherstone's H), from the composite-rigid-body algorithm.
    #[serde(rename = "M")]
    pub m: Vec<Vec<f64>>,
    /// Bias forces, Coriolis, centrifugal and gravity (`qfrc_bias`; Featherstone's C).
    pub qfrc_bias: Vec<f64>,
    /// Passive forces: joint damping and springs (`qfrc_passive`).
    pub qfrc_passive: Vec<f64>,
    /// Unconstrained acceleration `M^-1 (qfrc_passive + qfrc_applied - qfrc_bias)`
    /// (`qacc_smooth`), from the articulated-body algorithm.
    pub qacc_smooth: Vec<f64>,
    /// [potential, kinetic] energy (MuJoCo's `energy`: gravity and springs, 1/2 v' M v).
    pub energy: [f64; 2],
    /// MuJoCo's com-based quantities and sparse factor at this state ([`crate::mujoco`]).
    #[serde(flatten)]
    pub com: ComBased,
    /// Loop-closure structure of the equality constraints (Featherstone 8.10), when the model has
    /// `connect` or `weld` equalities.
    pub loops: Option<LoopReport>,
    /// What the MJCF reader skipped.
    pub warnings: Vec<String>,
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
    /// The unit lower-triangular L, dense.
    #[serde(rename = "qLD_L_dense")]
    pub l_dense: Vec<Vec<f64>>,
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

/// The com-based part of [`Inspection`].
pub fn com_based(model: &Model, q: &[f64], qd: &[f64]) -> Result<ComBased> {
    let d = crate::mujoco::forward_smooth(model, q, qd)?;
    let (l, dd) = model.mj_layout.unpack_ld(&d.qld);
    Ok(ComBased {
        subtree_com: d.subtree_com(model).iter().map(|p| [p.x, p.y, p.z]).collect(),
        cinert: d.cinert(model),
        crb: d.crb(model),
        cdof: d.cdof.iter().map(motion6).collect(),
        cdof_dot: d.cdof_dot.iter().map(motion6).collect(),
        cvel: d.cvel(model).iter().map(motion6).collect(),
        dof_madr: model.mj_layout.dof_madr.clone(),
        qm: d.qm.clone(),
        qld: d.qld.clone(),
        qld_diag_inv: d.qld_diag_inv.clone(),
        l_dense: (0..model.nv).map(|r| l.row(r).iter().copied().collect()).collect(),
        d: dd,
    })
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
/// [`Inspection`].
pub fn inspect(model_path: &Path, state: Option<&Path>) -> Result<Inspection> {
    let loaded = crate::model::mjcf::load(model_path)?;
    let state = match state {
        Some(p) => read_state(p, &loaded.model)?,
        None => State::reference(&loaded.model),
    };
    inspect_model(&loaded.model, &state, loaded.warnings)
}

/// MuJoCo's `body_parentid`: the parent MuJoCo body of every MuJoCo body (0 for the world and
/// its children). The first Featherstone body of MuJoCo body b's chain hangs from the last body
/// of b's parent.
pub fn body_parentid(model: &Model) -> Vec<usize> {
    let mut out = vec![0; model.mj_nbody()];
    for (b, parent) in out.iter_mut().enumerate().skip(1) {
        let mut first = model.mj_body_last[b];
        while first != 0 && model.lambda[first] != 0 && model.mj_body[model.lambda[first]] == b {
            first = model.lambda[first];
        }
        *parent = if first == 0 {
            0
        } else {
            model.mj_body[model.lambda[first]]
        };
    }
    out
}

/// [`inspect`] on a model already in memory.
pub fn inspect_model(model: &Model, state: &State, warnings: Vec<String>) -> Result<Inspection> {
    state.check(model)?;
    let (q, qd) = (state.qpos.as_slice(), state.qvel.as_slice());
    let kin = forward_kinematics(model, q)?;
    let (xpos, xquat) = mj_body_poses(model, &kin);
    let h = crba(model, q)?;
    let m = (0..model.nv).map(|r| h.row(r).iter().copied().collect()).collect();
    Ok(Inspection {
        model: model.name.clone(),
        sizes: Sizes {
            nq: model.nq,
            nv: model.nv,
            nbody: model.mj_nbody(),
            nb: model.nb,
        },
        body_parentid: body_parentid(model),
        dof_parentid: model.dof_parent.iter().map(|p| p.map_or(-1, |d| d as i64)).collect(),
        qpos: state.qpos.clone(),
        qvel: state.qvel.clone(),
        qfrc_applied: state.qfrc_applied.clone(),
        xpos: xpos.iter().map(|p| [p.x, p.y, p.z]).collect(),
        xquat,
        m,
        qfrc_bias: bias_forces(model, q, qd)?.as_slice().to_vec(),
        qfrc_passive: passive_forces(model, q, qd)?.as_slice().to_vec(),
        qacc_smooth: qacc_smooth(model, q, qd, &state.qfrc_applied)?.as_slice().to_vec(),
        energy: [potential_energy(model, q)?, kinetic_energy(model, q, qd)?],
        com: com_based(model, q, qd)?,
        loops: loop_report(model, q)?,
        warnings,
    })
}

impl Inspection {
    /// A short human-readable summary (what `mbd inspect` prints without `--json`).
    pub fn summary(&self) -> String {
        let list = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(", ");
        let s = &self.sizes;
        let diag: Vec<f64> = (0..s.nv).map(|i| self.m[i][i]).collect();
        let mut out = format!(
            "model '{}': nq {}, nv {}, {} MuJoCo bodies incl. world ({} Featherstone bodies)\n",
            self.model, s.nq, s.nv, s.nbody, s.nb
        );
        out += &format!(
            "energy: potential {:.6}, kinetic {:.6}\n",
            self.energy[0], self.energy[1]
        );
        out += &format!("diag(M):     [{}]\n", list(&diag));
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
        for w in &self.warnings {
            out += &format!("warning: {w}\n");
        }
        out += "(--json prints every quantity: xpos, xquat, M, qfrc_passive, cinert, cdof, qM, qLD, ...)";
        out
    }
}

// ---------------------------------------------------------------------------------------------
// mbd simulate

/// Time-stepping schemes of `mbd simulate` (MuJoCo's `mjINT_EULER` and `mjINT_RK4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Integrator {
    /// MuJoCo's semi-implicit Euler (`mj_Euler`): `v += h a`, then `q = q (+) h v` with the new
    /// velocity; joint damping is implicit, `a = (M + h diag(damping))^-1 qfrc_smooth`.
    Euler,
    /// Classic fourth-order Runge-Kutta (`mj_RungeKutta`), positions combined on the joint
    /// manifolds with `q (+) h v`.
    #[serde(rename = "RK4")]
    Rk4,
}

impl Integrator {
    /// MuJoCo's name of the scheme (`Euler`, `RK4`).
    pub fn name(&self) -> &'static str {
        match self {
            Integrator::Euler => "Euler",
            Integrator::Rk4 => "RK4",
        }
    }

    /// Parses `euler` or `rk4` (any case), or MuJoCo's option names `Euler` and `RK4`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "euler" => Ok(Integrator::Euler),
            "rk4" => Ok(Integrator::Rk4),
            "implicit" | "implicitfast" => Err(Error::Other(format!(
                "integrator '{s}' is not implemented yet (use euler or rk4)"
            ))),
            _ => Err(Error::Other(format!("unknown integrator '{s}' (use euler or rk4)"))),
        }
    }
}

/// A simulated trajectory: row k is the state after k steps (row 0 is the initial state).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trajectory {
    /// Model name.
    pub model: String,
    /// The scheme used.
    pub integrator: Integrator,
    /// Step size h (the model's `timestep`).
    pub timestep: f64,
    /// Simulation time of each row.
    pub time: Vec<f64>,
    /// Positions of each row.
    pub qpos: Vec<Vec<f64>>,
    /// Velocities of each row.
    pub qvel: Vec<Vec<f64>>,
    /// [potential, kinetic] energy of each row's state.
    pub energy: Vec<[f64; 2]>,
}

impl Trajectory {
    /// CSV text: a header line, then one line per row: time, qpos_*, qvel_*, the two energies.
    /// Numbers are written in Rust's shortest round-trip form.
    pub fn to_csv(&self) -> String {
        let nq = self.qpos.first().map_or(0, Vec::len);
        let nv = self.qvel.first().map_or(0, Vec::len);
        let mut out = String::from("time");
        (0..nq).for_each(|i| out += &format!(",qpos_{i}"));
        (0..nv).for_each(|i| out += &format!(",qvel_{i}"));
        out += ",energy_potential,energy_kinetic\n";
        for k in 0..self.time.len() {
            out += &self.time[k].to_string();
            for x in self.qpos[k].iter().chain(&self.qvel[k]).chain(&self.energy[k]) {
                out += ",";
                out += &x.to_string();
            }
            out += "\n";
        }
        out
    }
}

/// Refuses models whose MuJoCo simulation would involve constraints, which `simulate` does not
/// solve yet: equality constraints, geoms that can touch (MuJoCo's contype/conaffinity rule,
/// without same-body and parent-child pairs), and dry joint friction (`frictionloss`). Joint
/// limits are checked while stepping instead (they matter only once reached).
pub fn check_unconstrained(model: &Model) -> Result<()> {
    if let Some(eq) = model.equality.first() {
        let name = match eq {
            crate::model::Equality::Connect { name, .. }
            | crate::model::Equality::Weld { name, .. }
            | crate::model::Equality::Joint { name, .. } => name,
        };
        return Err(Error::Other(format!(
            "model '{}' has {} equality constraint(s) (first: '{name}'): constraints are not simulated yet",
            model.name,
            model.equality.len()
        )));
    }
    let parents = body_parentid(model);
    for (a, ga) in model.geoms.iter().enumerate() {
        for gb in &model.geoms[a + 1..] {
            let (ba, bb) = (model.mj_body[ga.body], model.mj_body[gb.body]);
            let masks = (ga.contype & gb.conaffinity) != 0 || (gb.contype & ga.conaffinity) != 0;
            let filtered = ba == bb || (ba != 0 && bb != 0 && (parents[ba] == bb || parents[bb] == ba));
            if masks && !filtered {
                return Err(Error::Other(format!(
                    "model '{}': geoms '{}' (body '{}') and '{}' (body '{}') can collide: contacts are not simulated yet \
                     (set contype=\"0\" conaffinity=\"0\" to simulate without contacts)",
                    model.name, ga.name, model.mj_body_name[ba], gb.name, model.mj_body_name[bb]
                )));
            }
        }
    }
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if j.frictionloss > 0.0 {
            return Err(Error::Other(format!(
                "model '{}': joint '{}' has frictionloss {}: dry friction is a constraint and is not simulated yet",
                model.name, j.name, j.frictionloss
            )));
        }
    }
    Ok(())
}

/// A limited joint outside its range, described, or None. MuJoCo would activate a limit
/// constraint there (with the default margin 0).
fn limit_violation(model: &Model, q: &[f64]) -> Option<String> {
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if !j.limited {
            continue;
        }
        let a = model.q_adr[i];
        let value = match j.jtype {
            JointType::Revolute { .. } | JointType::Prismatic { .. } | JointType::Helical { .. } => {
                if q[a] >= j.range[0] && q[a] <= j.range[1] {
                    continue;
                }
                q[a]
            }
            JointType::Spherical => {
                // MuJoCo limits the rotation angle of a ball joint by range[1].
                let vnorm = (q[a + 1] * q[a + 1] + q[a + 2] * q[a + 2] + q[a + 3] * q[a + 3]).sqrt();
                let angle = 2.0 * vnorm.atan2(q[a].abs());
                if angle <= j.range[1] {
                    continue;
                }
                angle
            }
            _ => continue,
        };
        return Some(format!(
            "joint '{}' reached {value} outside its range [{}, {}]",
            j.name, j.range[0], j.range[1]
        ));
    }
    None
}

/// The acceleration the Euler step uses: `qacc_smooth`, or with joint damping MuJoCo's implicit
/// damping `(M + h diag(damping))^-1 (qfrc_passive + qfrc_applied - qfrc_bias)`.
fn euler_acceleration(model: &Model, q: &[f64], qd: &[f64], qfrc_applied: &[f64], h: f64) -> Result<DVector<f64>> {
    let damping = model.dof_damping();
    if damping.iter().all(|&d| d == 0.0) {
        return qacc_smooth(model, q, qd, qfrc_applied);
    }
    let mut m: DMatrix<f64> = crba(model, q)?;
    for i in 0..model.nv {
        m[(i, i)] += h * damping[i];
    }
    let f = passive_forces(model, q, qd)? + DVector::from_column_slice(qfrc_applied) - bias_forces(model, q, qd)?;
    let chol = m.cholesky().ok_or_else(|| Error::NotPositiveDefinite {
        what: "M + h diag(damping)".into(),
        dof: 0,
        value: f64::NAN,
    })?;
    Ok(chol.solve(&f))
}

/// `mbd simulate`: `steps` steps of size `model.opt.timestep` from `state`, with the applied
/// forces held constant. Fails (instead of answering wrongly) on models with constraints (see
/// [`check_unconstrained`]), when a limited joint leaves its range, and when the state stops
/// being finite.
///
/// RK4 follows MuJoCo 4.0's `mj_RungeKutta`: the tableau A = [[1/2], [0, 1/2], [0, 0, 1]],
/// B = [1/6, 1/3, 1/3, 1/6]; stage positions `q0 (+) h sum_j A_ij k_j`, where `k_j` is the stage
/// velocity with, on ball and free joints, the angular part passed through `dexp^-1` (a
/// Munthe-Kaas correction; ../shared/specs/mujoco.md section 8).
pub fn simulate(model: &Model, state: &State, steps: usize, integrator: Integrator) -> Result<Trajectory> {
    check_unconstrained(model)?;
    state.check(model)?;
    let h = model.opt.timestep;
    if !(h.is_finite() && h > 0.0) {
        return Err(Error::Other(format!(
            "model '{}': timestep {h} must be positive",
            model.name
        )));
    }
    let u = &state.qfrc_applied;
    // Rows are stored as they come; reserve for short runs only, so that a huge `steps` fails
    // (or runs) gradually instead of aborting on one giant allocation.
    let rows = steps.saturating_add(1).min(1 << 16);
    let mut q = DVector::from_column_slice(&state.qpos);
    let mut v = DVector::from_column_slice(&state.qvel);
    let mut traj = Trajectory {
        model: model.name.clone(),
        integrator,
        timestep: h,
        time: Vec::with_capacity(rows),
        qpos: Vec::with_capacity(rows),
        qvel: Vec::with_capacity(rows),
        energy: Vec::with_capacity(rows),
    };
    for k in 0..=steps {
        let t = k as f64 * h;
        if let Some(why) = limit_violation(model, q.as_slice()) {
            return Err(Error::Other(format!(
                "at t = {t}: {why}: joint limits are not simulated yet"
            )));
        }
        if let Some(i) = q.iter().chain(v.iter()).position(|x| !x.is_finite()) {
            return Err(Error::Other(format!(
                "the simulation diverged at t = {t} (state entry {i} is not finite)"
            )));
        }
        traj.time.push(t);
        traj.qpos.push(q.as_slice().to_vec());
        traj.qvel.push(v.as_slice().to_vec());
        traj.energy.push([
            potential_energy(model, q.as_slice())?,
            kinetic_energy(model, q.as_slice(), v.as_slice())?,
        ]);
        if k == steps {
            break;
        }
        match integrator {
            Integrator::Euler => {
                let a = euler_acceleration(model, q.as_slice(), v.as_slice(), u, h)?;
                v += h * a;
                model.integrate(q.as_mut_slice(), v.as_slice(), h);
            }
            Integrator::Rk4 => rk4_step(model, &mut q, &mut v, u, h)?,
        }
        model.normalize_quaternions(q.as_mut_slice());
    }
    Ok(traj)
}

// ANCHOR: rk4
/// One step of MuJoCo's RK4 (`mj_RungeKutta`, see [`simulate`]).
fn rk4_step(model: &Model, q: &mut DVector<f64>, v: &mut DVector<f64>, u: &[f64], h: f64) -> Result<()> {
    const A: [[f64; 3]; 3] = [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 1.0]];
    const B: [f64; 4] = [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0];
    let rot = rotation_dofs(model);
    let (q0, v0) = (q.clone(), v.clone());
    let mut ks = vec![v0.clone()];
    let mut acc = vec![qacc_smooth(model, q0.as_slice(), v0.as_slice(), u)?];
    for a_row in &A {
        let mut dv = DVector::zeros(model.nv); // sum_j A_ij k_j
        let mut da = DVector::zeros(model.nv); // sum_j A_ij a_j
        for (j, &aij) in a_row.iter().enumerate().take(ks.len()) {
            dv.axpy(aij, &ks[j], 1.0);
            da.axpy(aij, &acc[j], 1.0);
        }
        let mut qi = q0.clone();
        model.integrate(qi.as_mut_slice(), dv.as_slice(), h);
        let vi = &v0 + h * da;
        acc.push(qacc_smooth(model, qi.as_slice(), vi.as_slice(), u)?);
        // Munthe-Kaas: a stage's angular velocity w, seen from the rotation Theta = h sum_j A_ij
        // k_j that produced the stage, moves Theta at the rate dexp^-1(Theta, w).
        let mut ki = vi.clone();
        for &r in &rot {
            let theta = h * Vec3::new(dv[r], dv[r + 1], dv[r + 2]);
            let k = dexp_inv(&theta, &Vec3::new(vi[r], vi[r + 1], vi[r + 2]));
            ki.fixed_rows_mut::<3>(r).copy_from(&k);
        }
        ks.push(ki);
    }
    let mut dv = DVector::zeros(model.nv);
    let mut da = DVector::zeros(model.nv);
    for j in 0..4 {
        dv.axpy(B[j], &ks[j], 1.0);
        da.axpy(B[j], &acc[j], 1.0);
    }
    *v = &v0 + h * da;
    *q = q0;
    model.integrate(q.as_mut_slice(), dv.as_slice(), h);
    Ok(())
}

/// The inverse of the differential of the exponential map on rotations,
/// `dexp^-1(Theta, w) = w + 1/2 Theta x w + (1/theta^2 - cot(theta/2) / (2 theta)) Theta x (Theta x w)`
/// (the correction MuJoCo 4.0's RK4 applies to ball and free joints).
fn dexp_inv(theta: &Vec3, w: &Vec3) -> Vec3 {
    let t = theta.norm();
    // The coefficient tends to 1/12 + theta^2/720 as theta -> 0 (series of the cotangent).
    let c = if t < 1e-4 {
        1.0 / 12.0 + t * t / 720.0
    } else {
        1.0 / (t * t) - 1.0 / (2.0 * t * (t / 2.0).tan())
    };
    w + 0.5 * theta.cross(w) + c * theta.cross(&theta.cross(w))
}

/// The first dof of the rotational part of every ball and free joint.
fn rotation_dofs(model: &Model) -> Vec<usize> {
    (1..=model.nb)
        .filter_map(|i| match model.joints[i].jtype {
            JointType::Spherical => Some(model.v_adr[i]),
            JointType::Free => Some(model.v_adr[i] + 3),
            _ => None,
        })
        .collect()
}
// ANCHOR_END: rk4

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::canned;

    #[test]
    fn inspection_matches_the_library_and_mujoco_structure() {
        let model = canned::floating_base_ball_arms();
        let mut state = State::reference(&model);
        state.qvel = (0..model.nv).map(|k| 0.2 * (k as f64).sin()).collect();
        let ins = inspect_model(&model, &state, vec![]).unwrap();
        assert_eq!(ins.sizes.nv, model.nv);
        assert_eq!(ins.m.len(), model.nv);
        // M symmetric and equal to CRBA's; qacc_smooth solves M a = passive - bias (no applied).
        let h = crba(&model, &state.qpos).unwrap();
        for r in 0..model.nv {
            for c in 0..model.nv {
                assert_eq!(ins.m[r][c], h[(r, c)]);
                assert!((ins.m[r][c] - ins.m[c][r]).abs() < 1e-12);
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
    }

    #[test]
    fn state_files_are_checked() {
        let model = canned::chain(2, false);
        assert!(parse_state(r#"{"qpos": [0.1, 0.2]}"#, &model).is_ok());
        for (text, needle) in [
            (r#"{"qpos": [0.1]}"#, "qpos has 1 entries"),
            (r#"{"qpos": [0.1, null]}"#, "qpos[1] is null"),
            (r#"{"qvel": [0.1, NaN]}"#, "not valid JSON"),
            (r#"{"qvel": [0.1, "x"]}"#, "is not a number"),
            (r#"{"qpso": [0.1, 0.2]}"#, "unknown key"),
            (r#"[1, 2]"#, "expected an object"),
            (r#"{"qfrc_applied": [1, 1e999]}"#, "JSON"),
        ] {
            let e = parse_state(text, &model).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
        let ball = canned::floating_base_ball_arms();
        let mut q = ball.qpos0.as_slice().to_vec();
        q[3..7].copy_from_slice(&[0.0; 4]);
        let text = serde_json::json!({ "qpos": q }).to_string();
        assert!(matches!(parse_state(&text, &ball), Err(Error::BadQuaternion { .. })));
    }

    #[test]
    fn rk4_conserves_energy_and_euler_converges_to_it() {
        // Undamped double pendulum released from rest at an angle: total energy is constant.
        let model = canned::chain(2, false);
        let mut state = State::reference(&model);
        state.qpos = vec![1.0, -0.5];
        let total = |t: &Trajectory| t.energy.iter().map(|e| e[0] + e[1]).collect::<Vec<_>>();
        let rk = simulate(&model, &state, 500, Integrator::Rk4).unwrap();
        let e = total(&rk);
        let drift = e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max);
        assert!(drift < 1e-6 * e[0].abs().max(1.0), "RK4 energy drift {drift}");
        // The Euler trajectory approaches RK4's as O(h): halving h roughly halves the largest
        // gap over the run (both at the same times).
        let mut fine = model.clone();
        fine.opt.timestep = model.opt.timestep / 2.0;
        let eu = simulate(&model, &state, 500, Integrator::Euler).unwrap();
        let eu2 = simulate(&fine, &state, 1000, Integrator::Euler).unwrap();
        let gap = |tr: &Trajectory, every: usize| {
            (0..=500)
                .map(|k| {
                    (0..2)
                        .map(|i| (tr.qpos[k * every][i] - rk.qpos[k][i]).abs())
                        .fold(0.0, f64::max)
                })
                .fold(0.0, f64::max)
        };
        let (g1, g2) = (gap(&eu, 1), gap(&eu2, 2));
        assert!(g2 < 0.7 * g1 && g2 > 0.3 * g1, "Euler gaps {g1} {g2}");
    }

    #[test]
    fn dexp_inv_is_the_rate_of_the_rotation_vector() {
        // exp(Theta + eps dexp^-1(Theta, w)) = exp(Theta) exp(eps w) + O(eps^2): w is a
        // body-frame (right-multiplied) angular velocity, as in MuJoCo's ball and free joints.
        use crate::spatial::quat_integrate;
        let theta = Vec3::new(0.7, -1.1, 0.4);
        let w = Vec3::new(-0.3, 0.5, 1.2);
        let exp = |t: &Vec3| quat_integrate(&[1.0, 0.0, 0.0, 0.0], t, 1.0);
        let eps = 1e-6;
        let lhs = exp(&(theta + eps * dexp_inv(&theta, &w)));
        let rhs = quat_integrate(&exp(&theta), &w, eps);
        let err = (0..4).map(|k| (lhs[k] - rhs[k]).abs()).fold(0.0, f64::max);
        assert!(err < 1e-11, "{err}");
        // The uncorrected rate is wrong at first order, so the check can fail.
        let naive = exp(&(theta + eps * w));
        let err_naive = (0..4).map(|k| (naive[k] - rhs[k]).abs()).fold(0.0, f64::max);
        assert!(err_naive > 1e-8, "{err_naive}");
        // Small-angle branch: continuous with the closed form.
        let small = Vec3::new(1e-5, 0.0, 0.0);
        let a = dexp_inv(&small, &w);
        let b = w + 0.5 * small.cross(&w) + (1.0 / 12.0) * small.cross(&small.cross(&w));
        assert!((a - b).norm() < 1e-15);
    }

    #[test]
    fn implicit_damping_matches_the_closed_form_for_one_dof() {
        // One slide-like dof: Euler with implicit damping gives v1 = (m v0 + h f) / (m + h d)
        // where f includes -d v0; check on the first step of a damped hinge at rest in its
        // equilibrium (gravity torque zero), with an initial velocity.
        let mut model = canned::chain(1, false);
        model.joints[1].damping = 0.7;
        let mut state = State::reference(&model);
        state.qvel = vec![1.3];
        let h = model.opt.timestep;
        let m = crba(&model, &state.qpos).unwrap()[(0, 0)];
        let c = bias_forces(&model, &state.qpos, &state.qvel).unwrap()[0];
        let expected_v1 = 1.3 + h * (-0.7 * 1.3 - c) / (m + h * 0.7);
        let tr = simulate(&model, &state, 1, Integrator::Euler).unwrap();
        assert!((tr.qvel[1][0] - expected_v1).abs() < 1e-12);
        assert!((tr.qpos[1][0] - (state.qpos[0] + h * expected_v1)).abs() < 1e-12);
    }
}
