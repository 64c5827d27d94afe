//! The `mbd` command: `mbd book`, `mbd inspect`, `mbd simulate` (see `mbd --help`).
//!
//! Every failure is one line on stderr, `mbd: <message>`, and exit code 1; a malformed command
//! line gives exit code 2. Panics are not part of the interface: library code returns
//! `mbd::Error` on bad input, and this file turns it into that one line.

use mbd::cli::simulate::{Engine, Output, SimulateOptions};
use mbd::cli::{inspect, one_line};
use mbd::model::{Cone, Integrator, Solver};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
mbd: multibody dynamics, explicitly (the command line of the `mbd` crate and book)

USAGE:
    mbd book [--out DIR] [--book DIR]
        Regenerate every figure, build the HTML book (default output: book/build) and check it
        for missing includes, empty code blocks, broken links and unused figures.
        Needs the cargo feature `book`: cargo run --release --features book -- book

    mbd inspect MODEL.xml [--state STATE.json | --key NAME] [--solver pgs|cg|newton]
                [--cone pyramidal|elliptic] [--iterations K] [--tolerance T] [--json] [--dense]
        Sizes, body and joint names and MuJoCo's mj_forward at a state: the smooth dynamics
        (qM, qfrc_bias, qfrc_passive, qacc_smooth, energy, xpos, xquat) and the constrained
        part (contacts, efc_J, efc_pos, efc_aref, efc_R, efc_D, efc_force, qfrc_constraint, qacc,
        solver iterations and statistics), named as MuJoCo names them. The text output lists
        the active constraint rows. --solver, --cone, --iterations, --tolerance override the
        model's <option>; --key uses the model's <keyframe><key name=NAME>. --json prints
        everything; --dense adds the nv x nv matrices M and L.

    mbd simulate MODEL.xml --steps N | --duration T [--every K]
                 [--integrator euler|implicit|implicitfast|rk4] [--state STATE.json | --key NAME]
                 [--ctrl VALUES | --ctrl-file CSV] [--plot FILE.svg [--plot-vars LIST]] [--quiet]
                 [--save-state END.json] [--engine mujoco|spook [--epsilon E] [--tau T]]
                 --out FILE.csv|FILE.json|-
        Step an unconstrained model with one of MuJoCo's integrators (default: the model's
        <option integrator>) and stream time, qpos and qvel named by joint, the energies and
        each actuator's ctrl, force and act per step (every K-th step with --every) to the file
        or, with -, to standard output. --ctrl gives nu comma-separated controls for the whole
        run; --ctrl-file a CSV with a header time,NAME,... and rows held from their time on.
        --plot writes a figure of --plot-vars (comma-separated: qpos:JOINT, qvel:JOINT,
        ctrl:ACTUATOR, force:ACTUATOR, act:ACTUATOR, energy, or a column name; default every
        hinge and slide position). A progress bar shows on a terminal for runs longer than a
        second (--quiet: never). An older file at --out is removed first; --out may not be an
        input; a run that diverges stops with one line naming the step, time and quantity and
        keeps the rows written. --save-state writes the final state (with the solver's warm
        start, qacc_warmstart) as a state file that --state continues from. --engine spook steps the same model in maximal coordinates with
        SPOOK (regularization epsilon, stabilization time tau of every joint) and writes each
        body's x, rho, nu, omega.

    mbd --help | --version

STATE.json: {\"time\": t, \"qpos\": [...], \"qvel\": [...], \"act\": [...], \"ctrl\": [...],
\"qfrc_applied\": [...]}, each optional (0, qpos0 and zeros otherwise), in MuJoCo's conventions: quaternions (w, x, y, z); free-joint qvel = [world
linear velocity of the body origin, body-frame angular velocity].

Exit codes: 0 success, 1 error (one line on stderr), 2 malformed command line.";

/// What went wrong: a usage error (exit 2), a failure (exit 1), or a reader that closed the
/// pipe (exit 0, silently).
enum Failure {
    Usage(String),
    Run(String),
    BrokenPipe,
}

impl From<mbd::Error> for Failure {
    fn from(e: mbd::Error) -> Self {
        match e {
            mbd::Error::InputOutput(m) if m.contains("Broken pipe") => Failure::BrokenPipe,
            e => Failure::Run(e.to_string()),
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        // a reader that stops early (`| head`) is not an error
        Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("mbd: {} (see `mbd --help`)", one_line(&m));
            ExitCode::from(2)
        }
        Err(Failure::Run(m)) => {
            eprintln!("mbd: {}", one_line(&m));
            ExitCode::from(1)
        }
    }
}

/// Writes `text` and a newline to standard output; a closed pipe ends the command quietly, any
/// other write error (a full disk, `/dev/full`) is a failure.
fn say(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").and_then(|_| out.flush()).map_err(write_failure)
}

fn write_failure(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::BrokenPipe
    } else {
        Failure::Run(format!("cannot write to standard output: {e}"))
    }
}

fn run(args: &[String]) -> Result<(), Failure> {
    let Some(command) = args.first() else {
        return Err(Failure::Usage("no command given".into()));
    };
    let rest = &args[1..];
    match command.as_str() {
        "-h" | "--help" | "help" => say(USAGE),
        "-V" | "--version" => say(&format!("mbd {}", env!("CARGO_PKG_VERSION"))),
        "book" => book(rest),
        "inspect" => inspect_cmd(rest),
        "simulate" => simulate_cmd(rest),
        other => Err(Failure::Usage(format!("unknown command '{other}'"))),
    }
}

/// Command-line options of one subcommand: positional arguments, `--flag value` options and
/// `--switch`es, each allowed at most once.
struct Options {
    positional: Vec<String>,
    values: Vec<(String, String)>,
    switches: Vec<String>,
}

impl Options {
    fn parse(args: &[String], valued: &[&str], switches: &[&str]) -> Result<Self, Failure> {
        let mut o = Options {
            positional: vec![],
            values: vec![],
            switches: vec![],
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == "-h" || a == "--help" {
                let _ = say(USAGE);
                std::process::exit(0);
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if a.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            if valued.contains(&name.as_str()) {
                let v = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| Failure::Usage(format!("{name} needs a value")))?,
                };
                if o.values.iter().any(|(n, _)| *n == name) {
                    return Err(Failure::Usage(format!("{name} given twice")));
                }
                o.values.push((name, v));
            } else if switches.contains(&name.as_str()) && inline.is_none() {
                o.switches.push(name);
            } else if a.starts_with('-') && a.len() > 1 {
                return Err(Failure::Usage(format!("unknown option '{a}'")));
            } else {
                o.positional.push(a.clone());
            }
        }
        Ok(o)
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }

    /// The single positional argument (the model file).
    fn model(&self, command: &str) -> Result<PathBuf, Failure> {
        match self.positional.as_slice() {
            [m] => Ok(PathBuf::from(m)),
            [] => Err(Failure::Usage(format!("{command}: no MODEL.xml given"))),
            [_, extra, ..] => Err(Failure::Usage(format!("{command}: unexpected argument '{extra}'"))),
        }
    }
}

#[cfg(feature = "book")]
fn book(args: &[String]) -> Result<(), Failure> {
    let o = Options::parse(args, &["--out", "--book"], &[])?;
    if let Some(p) = o.positional.first() {
        return Err(Failure::Usage(format!("book: unexpected argument '{p}'")));
    }
    let book_dir = match o.value("--book") {
        Some(d) => PathBuf::from(d),
        None => default_book_dir(),
    };
    let out = o.value("--out").map(Path::new);
    let report = mbd::book::build(&book_dir, out)?;
    say(&format!(
        "built {} chapters and {} figures, checked {} links: {}",
        report.chapters.len(),
        report.figures.len(),
        report.links_checked,
        report.index.display()
    ))
}

/// `./book` when run from the repository (as `cargo run` does), else the crate's own book.
#[cfg(feature = "book")]
fn default_book_dir() -> PathBuf {
    let here = PathBuf::from("book");
    if here.join("book.toml").is_file() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("book")
    }
}

#[cfg(not(feature = "book"))]
fn book(_args: &[String]) -> Result<(), Failure> {
    Err(Failure::Usage(
        "`mbd book` needs the cargo feature `book`: cargo run --release --features book -- book".into(),
    ))
}

fn inspect_cmd(args: &[String]) -> Result<(), Failure> {
    let o = Options::parse(
        args,
        &["--state", "--key", "--solver", "--cone", "--iterations", "--tolerance"],
        &["--json", "--dense"],
    )?;
    let model = o.model("inspect")?;
    if o.value("--state").is_some() && o.value("--key").is_some() {
        return Err(Failure::Usage("inspect: give --state or --key, not both".into()));
    }
    let usage = |e: mbd::Error| Failure::Usage(format!("inspect: {e}"));
    let overrides = inspect::SolverOverrides {
        solver: o.value("--solver").map(Solver::parse).transpose().map_err(usage)?,
        cone: o.value("--cone").map(Cone::parse).transpose().map_err(usage)?,
        iterations: match o.value("--iterations") {
            None => None,
            Some(t) => match t.parse::<usize>() {
                Ok(k) if k > 0 => Some(k),
                _ => {
                    return Err(Failure::Usage(format!(
                        "inspect: --iterations '{t}' is not a positive integer"
                    )))
                }
            },
        },
        tolerance: match o.value("--tolerance") {
            None => None,
            Some(t) => match t.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Some(x),
                _ => {
                    return Err(Failure::Usage(format!(
                        "inspect: --tolerance '{t}' is not a finite non-negative number"
                    )))
                }
            },
        },
    };
    let ins = inspect::inspect_with(
        &model,
        o.value("--state").map(Path::new),
        o.value("--key"),
        o.switch("--dense"),
        &overrides,
    )?;
    if o.switch("--json") {
        let text = serde_json::to_string_pretty(&ins).map_err(|e| Failure::Run(format!("cannot write JSON: {e}")))?;
        say(&text)
    } else {
        say(&ins.summary())
    }
}

fn simulate_cmd(args: &[String]) -> Result<(), Failure> {
    let o = Options::parse(
        args,
        &[
            "--steps",
            "--every",
            "--integrator",
            "--state",
            "--out",
            "--engine",
            "--epsilon",
            "--tau",
            "--duration",
            "--key",
            "--ctrl",
            "--ctrl-file",
            "--plot",
            "--plot-vars",
            "--save-state",
        ],
        &["--quiet"],
    )?;
    let model = o.model("simulate")?;
    let count = |flag: &str, default: Option<usize>| -> Result<usize, Failure> {
        match (o.value(flag), default) {
            (Some(t), _) => t
                .parse()
                .map_err(|_| Failure::Usage(format!("simulate: {flag} '{t}' is not a non-negative integer"))),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(Failure::Usage(format!("simulate: {flag} N is required"))),
        }
    };
    let steps = match (o.value("--steps"), o.value("--duration")) {
        (Some(_), Some(_)) => return Err(Failure::Usage("simulate: give --steps or --duration, not both".into())),
        (None, Some(t)) => {
            let t: f64 = t
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| Failure::Usage(format!("simulate: --duration '{t}' is not a non-negative number")))?;
            let h = mbd::mjcf::load(&model).map_err(Failure::from)?.model.opt.timestep;
            (t / h).round() as usize
        }
        _ => count("--steps", None)?,
    };
    let ctrl = match (o.value("--ctrl"), o.value("--ctrl-file")) {
        (Some(_), Some(_)) => return Err(Failure::Usage("simulate: give --ctrl or --ctrl-file, not both".into())),
        (Some(v), None) => Some(mbd::cli::simulate::Controls::Constant(
            v.split(',')
                .map(|x| {
                    x.trim()
                        .parse::<f64>()
                        .map_err(|_| Failure::Usage(format!("simulate: --ctrl '{x}' is not a number")))
                })
                .collect::<Result<Vec<f64>, Failure>>()?,
        )),
        (None, Some(p)) => Some(mbd::cli::simulate::Controls::File(PathBuf::from(p))),
        (None, None) => None,
    };
    let plot = o.value("--plot").map(PathBuf::from);
    if let Some(p) = &plot {
        if p.extension().and_then(|e| e.to_str()) != Some("svg") {
            return Err(Failure::Usage(format!(
                "simulate: --plot {} must end in .svg",
                p.display()
            )));
        }
    }
    let plot_vars: Vec<String> = match o.value("--plot-vars") {
        Some(v) if plot.is_none() => {
            return Err(Failure::Usage(format!(
                "simulate: --plot-vars {v} goes with --plot FILE.svg"
            )))
        }
        Some(v) => v
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => vec![],
    };
    let every = count("--every", Some(1))?;
    if every == 0 {
        return Err(Failure::Usage("simulate: --every must be at least 1".into()));
    }
    let out = o
        .value("--out")
        .ok_or_else(|| Failure::Usage("simulate: --out FILE is required".into()))?;
    let out = Output::parse(out).map_err(|e| Failure::Usage(format!("simulate: {e}")))?;
    let integrator = match o.value("--integrator") {
        Some(s) => Some(Integrator::parse(s).map_err(|e| Failure::Usage(format!("simulate: {e}")))?),
        None => None,
    };
    let real = |flag: &str| -> Result<Option<f64>, Failure> {
        o.value(flag)
            .map(|t| {
                t.parse::<f64>()
                    .map_err(|_| Failure::Usage(format!("simulate: {flag} '{t}' is not a number")))
            })
            .transpose()
    };
    let engine = match o.value("--engine").unwrap_or("mujoco") {
        "mujoco" => {
            if o.value("--epsilon").is_some() || o.value("--tau").is_some() {
                return Err(Failure::Usage(
                    "simulate: --epsilon and --tau go with --engine spook".into(),
                ));
            }
            Engine::Mujoco
        }
        "spook" => Engine::Spook {
            epsilon: real("--epsilon")?,
            tau: real("--tau")?,
        },
        other => {
            return Err(Failure::Usage(format!(
                "simulate: unknown --engine '{other}' (use mujoco or spook)"
            )))
        }
    };
    let to_stdout = out == Output::Stdout;
    let target = match &out {
        Output::Csv(p) | Output::Json(p) => p.display().to_string(),
        Output::Stdout => "standard output".into(),
    };
    let report = mbd::cli::simulate::simulate(&SimulateOptions {
        model,
        state: o.value("--state").map(PathBuf::from),
        steps,
        every,
        integrator,
        out,
        engine,
        key: o.value("--key").map(String::from),
        ctrl,
        plot,
        plot_vars,
        quiet: o.switches.iter().any(|s| s == "--quiet"),
        save_state: o.value("--save-state").map(PathBuf::from),
    })?;
    let line = format!(
        "{} steps of {} s with {}: t = {}, energy {:.9} -> {:.9}; wrote {} rows to {target}",
        report.steps, report.timestep, report.integrator, report.time, report.energy.0, report.energy.1, report.rows
    );
    if to_stdout {
        eprintln!("{line}");
        Ok(())
    } else {
        say(&line)
    }
}
