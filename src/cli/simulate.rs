//! `mbd simulate`: a trajectory of a model without constraints, streamed to a CSV or JSON file
//! (or standard output) as it is computed.
//!
//! Output safety: the output may not be one of the inputs (the model or the state file); an
//! older file at the output path is removed before the run starts, so that a failed run never
//! leaves a stale file that looks like its result; rows are written as they are computed, so a
//! run stopped by a divergence (or killed) keeps every completed row.

use super::state::{read_state, State};
use crate::error::{Error, Result};
use crate::integrate::{csv_header, csv_row, Recorder};
use crate::model::{Integrator, Model};
use crate::mujoco::integrator::Simulator;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where and how `mbd simulate` writes.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// A CSV file (`.csv`).
    Csv(PathBuf),
    /// A JSON file (`.json`): `{"model", "integrator", "timestep", "columns", "rows"}`.
    Json(PathBuf),
    /// CSV on standard output (`--out -`).
    Stdout,
}

impl Output {
    /// The output named by `--out`: `-`, or a path ending in `.csv` or `.json`.
    pub fn parse(out: &str) -> Result<Self> {
        if out == "-" {
            return Ok(Output::Stdout);
        }
        let p = PathBuf::from(out);
        match p.extension().and_then(|e| e.to_str()) {
            Some("csv") => Ok(Output::Csv(p)),
            Some("json") => Ok(Output::Json(p)),
            _ => Err(Error::InvalidOutput {
                path: out.to_string(),
                why: "must end in .csv or .json, or be - for standard output".into(),
            }),
        }
    }
}

/// Which formulation steps the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Engine {
    /// MuJoCo's pipeline in generalized coordinates ([`Simulator`]).
    Mujoco,
    /// SPOOK in maximal coordinates ([`crate::spook::simulate`]), with the regularization
    /// `epsilon` and stabilization time `tau` of every joint constraint (None: SPOOK's defaults).
    Spook {
        /// Regularization (compliance) of every joint constraint.
        epsilon: Option<f64>,
        /// Stabilization time (s) of every joint constraint.
        tau: Option<f64>,
    },
}

/// Options of `mbd simulate`.
#[derive(Clone, Debug)]
pub struct SimulateOptions {
    /// The model file.
    pub model: PathBuf,
    /// The state file (None: the model's reference state).
    pub state: Option<PathBuf>,
    /// Number of steps.
    pub steps: usize,
    /// Record every k-th step (and the last).
    pub every: usize,
    /// The scheme (None: the model's `<option integrator>`).
    pub integrator: Option<Integrator>,
    /// Where to write.
    pub out: Output,
    /// The formulation.
    pub engine: Engine,
}

/// What a finished run reports.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulateReport {
    /// The scheme used.
    pub integrator: Integrator,
    /// Steps taken.
    pub steps: usize,
    /// Step size.
    pub timestep: f64,
    /// Final time.
    pub time: f64,
    /// Total energy at the start and at the end.
    pub energy: (f64, f64),
    /// Rows written.
    pub rows: usize,
}

/// Refuses an output path that names one of the inputs (compared after resolving links).
pub fn check_not_an_input(out: &Path, inputs: &[&Path]) -> Result<()> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    if let Some(o) = canon(out) {
        for i in inputs {
            if canon(i).as_ref() == Some(&o) {
                return Err(Error::InvalidOutput {
                    path: out.display().to_string(),
                    why: format!("is an input of this run ({}); choose another --out", i.display()),
                });
            }
        }
    }
    Ok(())
}

/// A [`Recorder`] that writes each sample as a CSV line or a JSON row as it comes.
struct StreamWriter<W: Write> {
    w: W,
    json: bool,
    rows: usize,
    first_energy: Option<f64>,
    last_energy: f64,
}

impl<W: Write> Recorder for StreamWriter<W> {
    fn record(&mut self, time: f64, qpos: &[f64], qvel: &[f64], signals: &[f64]) -> Result<()> {
        // both engines record the kinetic and potential energy as their first two signals
        let e: f64 = signals.iter().take(2).sum();
        self.first_energy.get_or_insert(e);
        self.last_energy = e;
        if self.json {
            let sep = if self.rows == 0 { "" } else { "," };
            let row: Vec<String> = std::iter::once(time)
                .chain(qpos.iter().copied())
                .chain(qvel.iter().copied())
                .chain(signals.iter().copied())
                .map(|x| x.to_string())
                .collect();
            write!(self.w, "{sep}\n[{}]", row.join(","))?;
        } else {
            self.w.write_all(csv_row(time, qpos, qvel, signals).as_bytes())?;
        }
        self.rows += 1;
        Ok(())
    }
}

/// Column names of position and velocity entries: `joint.qpos` for a one-coordinate joint,
/// `joint.qpos[k]` for the coordinates of ball and free joints (and the same for `qvel`).
pub fn state_column_names(model: &Model) -> (Vec<String>, Vec<String>) {
    let mut qn = vec![];
    let mut vn = vec![];
    for i in 1..=model.nb {
        let j = &model.joints[i];
        let (nq, nv) = (j.jtype.nq(), j.jtype.nv());
        let name = if j.name.is_empty() {
            format!("joint{i}")
        } else {
            j.name.clone()
        };
        for k in 0..nq {
            qn.push(if nq == 1 {
                format!("{name}.qpos")
            } else {
                format!("{name}.qpos[{k}]")
            });
        }
        for k in 0..nv {
            vn.push(if nv == 1 {
                format!("{name}.qvel")
            } else {
                format!("{name}.qvel[{k}]")
            });
        }
    }
    (qn, vn)
}

/// Runs `mbd simulate`: loads the model and state, checks the output path, removes an older
/// output, and streams the trajectory.
pub fn simulate(o: &SimulateOptions) -> Result<SimulateReport> {
    let file = match &o.out {
        Output::Csv(p) | Output::Json(p) => Some(p.clone()),
        Output::Stdout => None,
    };
    if let Some(p) = &file {
        let mut inputs: Vec<&Path> = vec![&o.model];
        if let Some(s) = &o.state {
            inputs.push(s);
        }
        check_not_an_input(p, &inputs)?;
        // never leave an older file that looks like this run's result
        match std::fs::remove_file(p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::InvalidOutput {
                    path: p.display().to_string(),
                    why: format!("cannot replace the existing file: {e}"),
                })
            }
        }
    }
    let model = crate::mjcf::load(&o.model)?.model;
    let state = match &o.state {
        Some(p) => read_state(p, &model)?,
        None => State::reference(&model),
    };
    let integrator = o.integrator.unwrap_or(model.opt.integrator);
    let mut sim = match o.engine {
        Engine::Mujoco => Some(Simulator::new(&model, state, integrator)?),
        Engine::Spook { .. } => {
            if o.state.is_some() {
                return Err(Error::Unsupported {
                    what: "--state with --engine spook".into(),
                    why: "SPOOK starts from the model's qpos0 at rest".into(),
                });
            }
            None
        }
    };
    let header = match o.engine {
        Engine::Mujoco => {
            let (qn, vn) = state_column_names(&model);
            csv_header(&qn, &vn, model.nq, model.nv, &Simulator::SIGNALS)
        }
        Engine::Spook { .. } => {
            let (qn, vn) = spook_column_names(&model);
            csv_header(&qn, &vn, qn.len(), vn.len(), &crate::spook::SIGNALS)
        }
    };
    let w: Box<dyn Write> = match &file {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p).map_err(|e| {
            Error::InvalidOutput {
                path: p.display().to_string(),
                why: e.to_string(),
            }
        })?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let json = matches!(o.out, Output::Json(_));
    let mut rec = StreamWriter {
        w,
        json,
        rows: 0,
        first_energy: None,
        last_energy: 0.0,
    };
    if json {
        // JSON strings through serde_json (Rust's `{:?}` escapes are not JSON's)
        let quote = |t: &str| serde_json::Value::from(t).to_string();
        let columns: Vec<String> = header.trim_end().split(',').map(quote).collect();
        write!(
            rec.w,
            "{{\"model\":{},\"integrator\":{},\"timestep\":{},\"columns\":[{}],\"rows\":[",
            quote(&model.name),
            quote(if sim.is_some() { integrator.name() } else { "SPOOK" }),
            model.opt.timestep,
            columns.join(",")
        )?;
    } else {
        rec.w.write_all(header.as_bytes())?;
    }
    let result = match (&mut sim, o.engine) {
        (Some(sim), _) => sim.run(o.steps, o.every, &mut rec),
        (None, Engine::Spook { epsilon, tau }) => {
            let mut opts = crate::spook::SpookOptions::default();
            if let Some(e) = epsilon {
                opts.epsilon = e;
            }
            opts.tau = tau;
            let mut thin = Every {
                inner: &mut rec,
                every: o.every.max(1),
                steps: o.steps,
                k: 0,
            };
            crate::spook::simulate(&model, &opts, o.steps, &mut thin)
        }
        (None, Engine::Mujoco) => unreachable!("the MuJoCo engine always has a simulator"),
    };
    if json {
        write!(rec.w, "\n]}}\n")?;
    }
    rec.w.flush()?;
    result?;
    Ok(SimulateReport {
        integrator,
        steps: sim.as_ref().map_or(o.steps, |s| s.steps),
        timestep: model.opt.timestep,
        time: sim
            .as_ref()
            .map_or(o.steps as f64 * model.opt.timestep, |s| s.state.time),
        energy: (rec.first_energy.unwrap_or(0.0), rec.last_energy),
        rows: rec.rows,
    })
}

/// Passes on sample 0, every `every`-th sample and the last of `steps + 1` samples.
struct Every<'a, R: Recorder> {
    inner: &'a mut R,
    every: usize,
    steps: usize,
    k: usize,
}

impl<R: Recorder> Recorder for Every<'_, R> {
    fn record(&mut self, time: f64, qpos: &[f64], qvel: &[f64], signals: &[f64]) -> Result<()> {
        let k = self.k;
        self.k += 1;
        if k.is_multiple_of(self.every) || k == self.steps {
            self.inner.record(time, qpos, qvel, signals)
        } else {
            Ok(())
        }
    }
}

/// Column names of SPOOK's maximal coordinates: per body `body.x[0..3]`, `body.rho[0..4]`
/// (positions) and `body.nu[0..3]`, `body.omega[0..3]` (velocities), bodies in model order.
pub fn spook_column_names(model: &Model) -> (Vec<String>, Vec<String>) {
    let mut qn = vec![];
    let mut vn = vec![];
    for i in 1..=model.nb {
        let name = if model.body_name[i].is_empty() {
            format!("body{i}")
        } else {
            model.body_name[i].clone()
        };
        qn.extend((0..3).map(|k| format!("{name}.x[{k}]")));
        qn.extend((0..4).map(|k| format!("{name}.rho[{k}]")));
        vn.extend((0..3).map(|k| format!("{name}.nu[{k}]")));
        vn.extend((0..3).map(|k| format!("{name}.omega[{k}]")));
    }
    (qn, vn)
}
