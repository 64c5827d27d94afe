//! The `mbd` command: `mbd book`, `mbd inspect`, `mbd simulate` (see `mbd --help`).
//!
//! Every failure is one line on stderr, `mbd: <message>`, and exit code 1; a malformed command
//! line gives exit code 2. Panics are not part of the interface: library code returns
//! `mbd::Error` on bad input, and this file turns it into that one line.

use mbd::inspect::{self, Integrator, State};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
mbd: multibody dynamics, explicitly (the command line of the `mbd` crate and book)

USAGE:
    mbd book [--out DIR] [--book DIR]
        Regenerate every figure, build the HTML book (default output: book/build) and check it
        for missing includes, empty code blocks, broken links and unused figures.
        Needs the cargo feature `book`: cargo run --release --features book -- book

    mbd inspect MODEL.xml [--state STATE.json | --key NAME] [--json]
        Sizes, body and joint names and the smooth dynamics at a state (M, qfrc_bias,
        qfrc_passive, qacc_smooth, energy, xpos, xquat), named as MuJoCo names them; --key uses
        the model's <keyframe><key name=NAME>. --json prints everything.

    mbd simulate MODEL.xml --steps N [--integrator euler|rk4] [--state STATE.json] --out FILE.csv|FILE.json
        Step an unconstrained model with MuJoCo's semi-implicit Euler or RK4 (default: the
        model's <option integrator>) and write time, qpos, qvel and energy per step.

    mbd --help | --version

STATE.json: {\"qpos\": [...], \"qvel\": [...], \"qfrc_applied\": [...]}, each optional (qpos0 and
zeros otherwise), in MuJoCo's conventions: quaternions (w, x, y, z); free-joint qvel = [world
linear velocity of the body origin, body-frame angular velocity].

Exit codes: 0 success, 1 error (one line on stderr), 2 malformed command line.";

/// What went wrong: a usage error (exit 2) or a failure (exit 1).
enum Failure {
    Usage(String),
    Run(String),
}

impl From<mbd::Error> for Failure {
    fn from(e: mbd::Error) -> Self {
        Failure::Run(e.to_string())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("mbd: {m} (see `mbd --help`)");
            ExitCode::from(2)
        }
        Err(Failure::Run(m)) => {
            eprintln!("mbd: {m}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &[String]) -> Result<(), Failure> {
    let Some(command) = args.first() else {
        return Err(Failure::Usage("no command given".into()));
    };
    let rest = &args[1..];
    match command.as_str() {
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        "-V" | "--version" => {
            println!("mbd {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
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
                println!("{USAGE}");
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
    println!(
        "built {} chapters and {} figures, checked {} links: {}",
        report.chapters.len(),
        report.figures.len(),
        report.links_checked,
        report.index.display()
    );
    Ok(())
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
    let o = Options::parse(args, &["--state", "--key"], &["--json"])?;
    let model = o.model("inspect")?;
    if o.value("--state").is_some() && o.value("--key").is_some() {
        return Err(Failure::Usage("inspect: give --state or --key, not both".into()));
    }
    let ins = inspect::inspect_at(&model, o.value("--state").map(Path::new), o.value("--key"))?;
    if o.switch("--json") {
        let text = serde_json::to_string_pretty(&ins).map_err(|e| Failure::Run(format!("cannot write JSON: {e}")))?;
        println!("{text}");
    } else {
        println!("{}", ins.summary());
    }
    Ok(())
}

fn simulate_cmd(args: &[String]) -> Result<(), Failure> {
    let o = Options::parse(args, &["--steps", "--integrator", "--state", "--out"], &[])?;
    let model_path = o.model("simulate")?;
    let steps_text = o
        .value("--steps")
        .ok_or_else(|| Failure::Usage("simulate: --steps N is required".into()))?;
    let steps: usize = steps_text.parse().map_err(|_| {
        Failure::Usage(format!(
            "simulate: --steps '{steps_text}' is not a non-negative integer"
        ))
    })?;
    let out = PathBuf::from(
        o.value("--out")
            .ok_or_else(|| Failure::Usage("simulate: --out FILE is required".into()))?,
    );
    let as_json = match out.extension().and_then(|e| e.to_str()) {
        Some("json") => true,
        Some("csv") => false,
        _ => {
            return Err(Failure::Usage(format!(
                "simulate: --out {} must end in .csv or .json",
                out.display()
            )))
        }
    };
    let chosen = match o.value("--integrator") {
        Some(s) => Some(Integrator::parse(s).map_err(|e| Failure::Usage(format!("simulate: {e}")))?),
        None => None,
    };
    let model = mbd::mjcf::load(&model_path)?.model;
    let integrator = match chosen {
        Some(i) => i,
        None => Integrator::parse(&model.opt.integrator).map_err(|e| {
            Failure::Run(format!(
                "{}: <option integrator>: {e}; choose one with --integrator",
                model_path.display()
            ))
        })?,
    };
    let state = match o.value("--state") {
        Some(p) => inspect::read_state(Path::new(p), &model)?,
        None => State::reference(&model),
    };
    let traj = inspect::simulate(&model, &state, steps, integrator)?;
    let text = if as_json {
        serde_json::to_string(&traj).map_err(|e| Failure::Run(format!("cannot write JSON: {e}")))?
    } else {
        traj.to_csv()
    };
    std::fs::write(&out, text).map_err(|e| Failure::Run(format!("{}: {e}", out.display())))?;
    let e0 = traj.energy[0][0] + traj.energy[0][1];
    let e1 = traj.energy.last().map_or(e0, |e| e[0] + e[1]);
    println!(
        "{} steps of {} s with {}: t = {}, energy {e0:.9} -> {e1:.9}; wrote {}",
        steps,
        traj.timestep,
        integrator.name(),
        traj.time.last().copied().unwrap_or(0.0),
        out.display()
    );
    Ok(())
}
