//! `mbd simulate`: a trajectory of a model without constraints, streamed to a CSV or JSON file
//! (or standard output) as it is computed, with any of MuJoCo's four integrators, controls
//! from the command line or a CSV file, a progress bar on a terminal, and an optional figure of
//! chosen signals (`--plot`).
//!
//! Columns: `time`, then every position and velocity named by joint (`shoulder.qpos`,
//! `root.qpos[3]`), then `energy_potential`, `energy_kinetic`, then, for models with
//! constraints (contacts, limits, friction loss, equality constraints), `ncon` (contacts),
//! `nefc` (constraint rows) and `solver_iterations` of the constrained forward pass at that
//! state, then per actuator
//! `NAME.ctrl` (the control applied over the next step), `NAME.force` (`actuator_force`) and,
//! with activation dynamics, `NAME.act`, then the sensors' values at that state, one column per
//! number of `sensordata` (`NAME`, or `NAME[0]`, `NAME[1]`, ... for a sensor of several
//! numbers, `sensorK` for an unnamed one: [`crate::mujoco::sensor::sensor_labels`]).
//!
//! Output safety: the output may not be one of the inputs (the model or the state file); an
//! older file at the output path is removed before the run starts, so that a failed run never
//! leaves a stale file that looks like its result; rows are written as they are computed, so a
//! run stopped by a divergence (or killed) keeps every completed row.

use super::state::{read_state, State};
use crate::error::{Error, Result};
use crate::integrate::{csv_header, csv_row, Recorder};
use crate::model::{Integrator, Model};
use crate::mujoco::integrator::runs_mujoco_pipeline;
use crate::mujoco::integrator::{OnDivergence, Simulator};
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
    /// A keyframe to start from (`<keyframe><key name>`), instead of `state`.
    pub key: Option<String>,
    /// The actuator controls (None: the state's, zeros by default).
    pub ctrl: Option<Controls>,
    /// Write a figure of chosen signals to this SVG file.
    pub plot: Option<PathBuf>,
    /// The signals of the figure (`qpos:JOINT`, `qvel:JOINT`, `ctrl:ACTUATOR`, `force:ACTUATOR`,
    /// `energy`, or a column name); empty: every hinge and slide position.
    pub plot_vars: Vec<String>,
    /// No progress bar.
    pub quiet: bool,
    /// Write the final state here (a `.json` state file, [`super::state::state_json`], with
    /// `qacc_warmstart`): `--state` of a later run continues this one as one run would.
    pub save_state: Option<PathBuf>,
}

/// Where the controls of `mbd simulate` come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Controls {
    /// The same controls at every step (nu values).
    Constant(Vec<f64>),
    /// A CSV file: a header `time,NAME,...` (nu control columns), then rows of times and
    /// controls, times increasing; the controls of the last row at or before `t` apply at `t`
    /// (a zero-order hold; the first row's before it).
    File(PathBuf),
}

/// A control schedule: times and the controls from each time on.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlSchedule {
    /// Start time of each row (increasing).
    pub time: Vec<f64>,
    /// Controls of each row (nu each).
    pub ctrl: Vec<Vec<f64>>,
}

impl ControlSchedule {
    /// The controls that apply at time `t` (zero-order hold).
    pub fn at(&self, t: f64) -> &[f64] {
        let k = self.time.partition_point(|&x| x <= t + 1e-12).max(1) - 1;
        &self.ctrl[k]
    }

    /// Reads a control CSV for `nu` actuators (see [`Controls::File`]), naming the file, line
    /// and column of what is wrong.
    pub fn read(path: &Path, nu: usize) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::State(format!("cannot read {}: {e}", path.display())))?;
        let bad = |line: usize, why: String| Error::State(format!("{}:{line}: {why}", path.display()));
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            return Err(bad(1, "empty control file (expected a header time,NAME,...)".into()));
        };
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        if cols.first() != Some(&"time") || cols.len() != nu + 1 {
            return Err(bad(
                1,
                format!("the header must be time followed by {nu} control columns (one per actuator), got '{header}'"),
            ));
        }
        let mut out = ControlSchedule {
            time: vec![],
            ctrl: vec![],
        };
        for (i, line) in lines {
            let vals: Vec<&str> = line.split(',').map(str::trim).collect();
            if vals.len() != nu + 1 {
                return Err(bad(i + 1, format!("{} values, expected {}", vals.len(), nu + 1)));
            }
            let mut row = Vec::with_capacity(nu + 1);
            for (c, v) in vals.iter().enumerate() {
                match v.parse::<f64>() {
                    Ok(x) if x.is_finite() => row.push(x),
                    _ => {
                        return Err(bad(
                            i + 1,
                            format!("column {} ('{}'): '{v}' is not a finite number", c + 1, cols[c]),
                        ))
                    }
                }
            }
            if out.time.last().is_some_and(|&t| row[0] <= t) {
                return Err(bad(i + 1, format!("time {} does not increase", row[0])));
            }
            out.time.push(row[0]);
            out.ctrl.push(row[1..].to_vec());
        }
        if out.time.is_empty() {
            return Err(bad(2, "no control rows after the header".into()));
        }
        Ok(out)
    }
}

/// A progress bar on standard error for runs longer than about a second: created hidden, shown
/// after one second when standard error is a terminal and `--quiet` is not given.
struct Progress {
    bar: indicatif::ProgressBar,
    start: std::time::Instant,
    shown: bool,
    allowed: bool,
}

impl Progress {
    fn new(steps: usize, quiet: bool) -> Self {
        use std::io::IsTerminal;
        Progress {
            bar: indicatif::ProgressBar::hidden(),
            start: std::time::Instant::now(),
            shown: false,
            allowed: !quiet && std::io::stderr().is_terminal() && steps > 0,
        }
        .with_len(steps)
    }

    fn with_len(self, steps: usize) -> Self {
        self.bar.set_length(steps as u64);
        self
    }

    fn tick(&mut self, k: usize) {
        if !self.allowed || (k & 63) != 0 {
            return;
        }
        if !self.shown && self.start.elapsed().as_secs_f64() > 1.0 {
            self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} steps, {elapsed} elapsed, {eta} left")
            {
                self.bar.set_style(style);
            }
            self.shown = true;
        }
        if self.shown {
            self.bar.set_position(k as u64);
        }
    }

    fn finish(&self) {
        if self.shown {
            self.bar.finish_and_clear();
        }
    }
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
        if o.save_state.as_deref() == Some(p.as_path()) {
            return Err(Error::InvalidOutput {
                path: p.display().to_string(),
                why: "--out and --save-state name the same file".into(),
            });
        }
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
    if let Some(p) = &o.save_state {
        let mut inputs: Vec<&Path> = vec![&o.model];
        if let Some(s) = &o.state {
            inputs.push(s);
        }
        check_not_an_input(p, &inputs)?;
        if p.extension().and_then(|e| e.to_str()) != Some("json") {
            return Err(Error::InvalidOutput {
                path: p.display().to_string(),
                why: "--save-state writes a state file, which must end in .json".into(),
            });
        }
        if matches!(o.engine, Engine::Spook { .. }) {
            return Err(Error::Unsupported {
                what: "--save-state with --engine spook".into(),
                why: "a state file holds MuJoCo's generalized coordinates".into(),
            });
        }
    }
    let model = crate::mujoco::load(&o.model)?.model;
    let mut state = match (&o.state, &o.key) {
        (Some(p), None) => read_state(p, &model)?,
        (None, Some(k)) => State::keyframe(&model, k)?,
        (None, None) => State::reference(&model),
        (Some(_), Some(_)) => return Err(Error::State("give a state file or a keyframe, not both".into())),
    };
    let nu = model.actuators.len();
    let schedule = match &o.ctrl {
        None => None,
        Some(Controls::Constant(c)) => {
            if c.len() != nu {
                return Err(Error::InvalidArgument {
                    what: "--ctrl".into(),
                    why: format!("{} values given, the model has {nu} actuators", c.len()),
                });
            }
            crate::error::check_vector("--ctrl", c, nu)?;
            Some(ControlSchedule {
                time: vec![state.time],
                ctrl: vec![c.clone()],
            })
        }
        Some(Controls::File(p)) => Some(ControlSchedule::read(p, nu)?),
    };
    if let Some(s) = &schedule {
        state.ctrl = s.at(state.time).to_vec();
    }
    let integrator = o.integrator.unwrap_or(model.opt.integrator);
    let mut sim = match o.engine {
        Engine::Mujoco => {
            let mut sim = Simulator::new(&model, state, integrator)?;
            // the command stops at a divergence with one line and keeps the rows written
            sim.on_divergence = OnDivergence::Error;
            Some(sim)
        }
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
    let signal_names = mujoco_signal_names(&model);
    let header = match o.engine {
        Engine::Mujoco => {
            let (qn, vn) = state_column_names(&model);
            let names: Vec<&str> = signal_names.iter().map(String::as_str).collect();
            csv_header(&qn, &vn, model.nq, model.nv, &names)
        }
        Engine::Spook { .. } => {
            let (qn, vn) = spook_column_names(&model);
            csv_header(&qn, &vn, qn.len(), vn.len(), &crate::spook::SIGNALS)
        }
    };
    let picks = {
        let columns: Vec<&str> = header.trim_end().split(',').collect();
        let wanted = o.plot.is_some() && o.engine == Engine::Mujoco;
        plot_columns(&columns, &o.plot_vars, wanted)?
    };
    if o.engine != Engine::Mujoco && (o.ctrl.is_some() || o.plot.is_some() || o.key.is_some()) {
        return Err(Error::Unsupported {
            what: "--ctrl, --ctrl-file, --key and --plot with --engine spook".into(),
            why: "they go with the MuJoCo engine".into(),
        });
    }
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
        (Some(sim), _) => {
            let mut plot = PlotData { picks, series: vec![] };
            plot.series.resize(plot.picks.len(), vec![]);
            let mut progress = Progress::new(o.steps, o.quiet);
            let r = run_mujoco(sim, o, schedule.as_ref(), &mut rec, &mut plot, &mut progress);
            progress.finish();
            if let Some(p) = &o.plot {
                if plot.series.first().is_some_and(|s| !s.is_empty()) {
                    write_plot(p, &model.name, integrator, &plot)?;
                }
            }
            r
        }
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
    if let (Some(p), Some(sim)) = (&o.save_state, &sim) {
        std::fs::write(p, super::state::state_json(&sim.state) + "\n").map_err(|e| Error::InvalidOutput {
            path: p.display().to_string(),
            why: format!("cannot write the state: {e}"),
        })?;
    }
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

/// The signals recorded after the state: the two energies, for models that step through
/// MuJoCo's pipeline ([`runs_mujoco_pipeline`]: constraints, mocap bodies or sensors)
/// [`CONSTRAINT_SIGNALS`], then per actuator its control, force and (with dynamics) activation,
/// then the sensors' values.
pub fn mujoco_signal_names(model: &Model) -> Vec<String> {
    let mut out: Vec<String> = Simulator::SIGNALS.iter().map(|s| s.to_string()).collect();
    if runs_mujoco_pipeline(model) {
        out.extend(CONSTRAINT_SIGNALS.iter().map(|s| s.to_string()));
    }
    for (k, a) in model.actuators.iter().enumerate() {
        let name = if a.name.is_empty() {
            format!("actuator{k}")
        } else {
            a.name.clone()
        };
        out.push(format!("{name}.ctrl"));
        out.push(format!("{name}.force"));
        if a.dyntype != crate::model::DynType::None {
            out.push(format!("{name}.act"));
        }
    }
    out.extend(crate::mujoco::sensor::sensor_labels(model));
    out
}

/// The columns of a model with constraints: MuJoCo's `ncon` (contacts), `nefc` (constraint
/// rows) and `solver_niter` (iterations of the constraint solver) at the recorded state.
pub const CONSTRAINT_SIGNALS: [&str; 3] = ["ncon", "nefc", "solver_iterations"];

/// The signal values of [`mujoco_signal_names`] at the simulator's state (the forces of its
/// last forward pass, which the caller made at that state).
fn mujoco_signals(sim: &Simulator) -> Result<Vec<f64>> {
    let e = sim.energy()?;
    let mut out = vec![e[0], e[1]];
    if let Some(d) = sim.forward_data() {
        out.push(d.contacts().len() as f64);
        out.push(d.efc.nefc() as f64);
        out.push(d.solver_niter as f64);
    }
    let mut ia = 0;
    for (k, a) in sim.model.actuators.iter().enumerate() {
        out.push(sim.state.ctrl[k]);
        out.push(sim.fwd.actuation.force[k]);
        if a.dyntype != crate::model::DynType::None {
            out.push(sim.state.act[ia]);
            ia += 1;
        }
    }
    // the sensors of the forward pass the caller made at this state
    out.extend_from_slice(sim.sensordata());
    Ok(out)
}

/// The columns a figure shows and their samples.
struct PlotData {
    /// (label, column indices summed into the series).
    picks: Vec<(String, Vec<usize>)>,
    /// (time, value) per pick.
    series: Vec<Vec<(f64, f64)>>,
}

/// Resolves `--plot-vars` against the column names: `qpos:JOINT` and `qvel:JOINT` (every
/// coordinate of the joint), `ctrl:NAME`, `force:NAME`, `act:NAME` (an actuator), `energy`
/// (the total), or a column name. Empty: every one-coordinate position.
fn plot_columns(columns: &[&str], vars: &[String], wanted: bool) -> Result<Vec<(String, Vec<usize>)>> {
    if !wanted {
        return Ok(vec![]);
    }
    let find = |name: &str| columns.iter().position(|c| *c == name);
    if vars.is_empty() {
        let picks: Vec<(String, Vec<usize>)> = columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.ends_with(".qpos"))
            .map(|(i, c)| (c.to_string(), vec![i]))
            .collect();
        return Ok(picks);
    }
    let mut out = vec![];
    for v in vars {
        if v == "energy" {
            let (p, k) = (find("energy_potential"), find("energy_kinetic"));
            out.push(("energy (J)".to_string(), p.into_iter().chain(k).collect()));
            continue;
        }
        if let Some(i) = find(v) {
            out.push((v.clone(), vec![i]));
            continue;
        }
        let matched: Vec<(String, Vec<usize>)> = match v.split_once(':') {
            Some((kind @ ("qpos" | "qvel" | "ctrl" | "force" | "act"), name)) => {
                let exact = format!("{name}.{kind}");
                let indexed = format!("{name}.{kind}[");
                columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c == exact || c.starts_with(&indexed))
                    .map(|(i, c)| (c.to_string(), vec![i]))
                    .collect()
            }
            _ => vec![],
        };
        if matched.is_empty() {
            return Err(Error::InvalidArgument {
                what: format!("--plot-vars {v}"),
                why: format!(
                    "no such signal; use qpos:JOINT, qvel:JOINT, ctrl:ACTUATOR, force:ACTUATOR, act:ACTUATOR, energy, or a column ({})",
                    columns[1..].join(", ")
                ),
            });
        }
        out.extend(matched);
    }
    Ok(out)
}

/// Writes the figure of `--plot`.
#[cfg(feature = "plot")]
fn write_plot(path: &Path, model: &str, integrator: Integrator, plot: &PlotData) -> Result<()> {
    let mut chart = crate::plot::Chart::new(&format!("{model}, {integrator}"), "time (s)", "value");
    for ((label, _), pts) in plot.picks.iter().zip(&plot.series) {
        chart = chart.with(crate::plot::Series::line(label, pts.clone()));
    }
    chart.save_svg(path)
}

#[cfg(not(feature = "plot"))]
fn write_plot(_: &Path, _: &str, _: Integrator, _: &PlotData) -> Result<()> {
    Err(Error::Unsupported {
        what: "--plot".into(),
        why: "this build has no plotting (cargo feature `plot`)".into(),
    })
}

/// Records one row (and the figure's samples).
fn sample(sim: &Simulator, rec: &mut impl Recorder, plot: &mut PlotData) -> Result<()> {
    let sig = mujoco_signals(sim)?;
    let s = &sim.state;
    rec.record(s.time, &s.qpos, &s.qvel, &sig)?;
    if !plot.picks.is_empty() {
        let row: Vec<f64> = std::iter::once(s.time)
            .chain(s.qpos.iter().copied())
            .chain(s.qvel.iter().copied())
            .chain(sig.iter().copied())
            .collect();
        for ((_, cols), pts) in plot.picks.iter().zip(plot.series.iter_mut()) {
            pts.push((s.time, cols.iter().map(|&c| row[c]).sum()));
        }
    }
    Ok(())
}

/// The MuJoCo engine's loop: the controls of the schedule at each step's start, one step, a
/// sample every `every` steps (and the last), the progress bar.
fn run_mujoco(
    sim: &mut Simulator,
    o: &SimulateOptions,
    schedule: Option<&ControlSchedule>,
    rec: &mut impl Recorder,
    plot: &mut PlotData,
    progress: &mut Progress,
) -> Result<()> {
    let every = o.every.max(1);
    // the actuator forces and constraint counts of each recorded state need a forward pass at
    // that state (the step's own pass is at the state before it); the next step reuses it
    let actuated = !sim.model.actuators.is_empty() || sim.forward_data().is_some() || !sim.model.sensors.is_empty();
    if actuated {
        sim.forward()?;
    }
    sample(sim, rec, plot)?;
    for k in 1..=o.steps {
        if let Some(s) = schedule {
            let c = s.at(sim.state.time).to_vec();
            sim.state.ctrl = c;
        }
        sim.step()?;
        if k % every == 0 || k == o.steps {
            if let Some(s) = schedule {
                let c = s.at(sim.state.time).to_vec();
                sim.state.ctrl = c;
            }
            if actuated {
                sim.forward()?;
            }
            sample(sim, rec, plot)?;
        }
        progress.tick(k);
    }
    Ok(())
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
