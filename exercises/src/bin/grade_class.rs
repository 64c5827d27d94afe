//! `grade-class`: grades a whole class's submissions and writes one CSV.
//!
//! ```text
//! cargo run -p exercises --release --bin grade-class -- SUBMISSIONS [--chapters ch01,ch02]
//!     [--out grades.csv] [--seed N] [--time-limit SECONDS]
//! ```
//!
//! `SUBMISSIONS` holds one directory per student, each a copy of this crate as the student
//! returned it (only `src/CHAPTER.rs` is read; a bare `CHAPTER.rs` beside it is accepted too).
//! Each chapter of each student is graded in a scratch copy of this crate
//! (`target/grade-class/exercises`) whose graders, harness and other chapters are the
//! instructor's, so a student's copy cannot change how it is graded; the build shares the
//! repository's `target/`, so the library is compiled once. The CSV has one row per student,
//! chapter and exercise: `student,chapter,exercise,status` with status `pass`, `fail`,
//! `not attempted`, `time limit`, `not submitted`, `does not compile` or `crashed`. Compiler and
//! grader output for every run is kept under `OUT.logs/` (beside the CSV) for the instructor.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: grade-class SUBMISSIONS [--chapters ch01,ch02] [--out grades.csv] [--seed N] [--time-limit SECONDS]";

/// The command line.
#[derive(Debug, PartialEq)]
struct Args {
    submissions: PathBuf,
    chapters: Vec<String>,
    out: PathBuf,
    seed: Option<u64>,
    time_limit: u64,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut submissions = None;
    let mut chapters: Vec<String> = exercises::CHAPTERS.iter().map(|s| s.to_string()).collect();
    let mut out = PathBuf::from("grades.csv");
    let mut seed = None;
    let mut time_limit = 600;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value\n{USAGE}"));
        match a.as_str() {
            "--chapters" => {
                chapters = value("--chapters")?.split(',').map(|s| s.trim().to_string()).collect();
                for c in &chapters {
                    if !exercises::CHAPTERS.contains(&c.as_str()) {
                        return Err(format!(
                            "--chapters: no chapter {c:?} (known: {})",
                            exercises::CHAPTERS.join(", ")
                        ));
                    }
                }
            }
            "--out" => out = PathBuf::from(value("--out")?),
            "--seed" => {
                let v = value("--seed")?;
                seed = Some(v.parse().map_err(|_| format!("--seed: {v:?} is not a whole number"))?);
            }
            "--time-limit" => {
                let v = value("--time-limit")?;
                time_limit = v
                    .parse()
                    .ok()
                    .filter(|&t| t > 0)
                    .ok_or(format!("--time-limit: {v:?} is not a positive number of seconds"))?;
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            s if s.starts_with('-') => return Err(format!("unknown option {s}\n{USAGE}")),
            s => {
                if submissions.replace(PathBuf::from(s)).is_some() {
                    return Err(format!("one SUBMISSIONS directory only\n{USAGE}"));
                }
            }
        }
    }
    Ok(Args {
        submissions: submissions.ok_or(USAGE.to_string())?,
        chapters,
        out,
        seed,
        time_limit,
    })
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The `chapter,exercise,status` lines the graders append to `EXERCISES_RESULTS`, for `chapter`.
fn parse_results(text: &str, chapter: &str) -> Vec<(u32, String)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ',');
            let (c, n, s) = (f.next()?, f.next()?, f.next()?);
            (c == chapter).then(|| n.trim().parse().ok().map(|n| (n, s.trim().to_string())))?
        })
        .collect()
}

/// Copies the directory `from` into `to` recursively (`to` is created).
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The scratch crate: this crate's manifest (the library by absolute path, a workspace of its
/// own, no binaries), `src/` with the stubs, the graders; the repository's `Cargo.lock`, so that
/// the same dependency versions are built.
fn make_scratch(repo: &Path, crate_dir: &Path, scratch: &Path) -> Result<(), String> {
    let io = |what: &str, e: std::io::Error| format!("{what}: {e}");
    if scratch.exists() {
        fs::remove_dir_all(scratch).map_err(|e| io(&scratch.display().to_string(), e))?;
    }
    copy_dir(&crate_dir.join("src"), &scratch.join("src")).map_err(|e| io("copying src/", e))?;
    fs::remove_dir_all(scratch.join("src/bin")).map_err(|e| io("src/bin", e))?;
    copy_dir(&crate_dir.join("tests"), &scratch.join("tests")).map_err(|e| io("copying tests/", e))?;
    let manifest = fs::read_to_string(crate_dir.join("Cargo.toml")).map_err(|e| io("Cargo.toml", e))?;
    let repo_str = repo.display().to_string().replace('\\', "/");
    let mut text = String::new();
    let mut skip = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            skip = line.trim() == "[[bin]]";
        }
        if skip {
            continue;
        }
        if line.trim_start().starts_with("mbd = ") {
            text.push_str(&format!(
                "mbd = {{ path = \"{repo_str}\", default-features = false }}\n"
            ));
        } else {
            text.push_str(line);
            text.push('\n');
            if line.trim() == "[package]" {
                text.push_str("autobins = false\n");
            }
        }
    }
    text.push_str("\n[workspace]\n");
    fs::write(scratch.join("Cargo.toml"), text).map_err(|e| io("writing the scratch Cargo.toml", e))?;
    fs::copy(repo.join("Cargo.lock"), scratch.join("Cargo.lock")).map_err(|e| io("Cargo.lock", e))?;
    Ok(())
}

/// How one grader run ended.
enum Outcome {
    /// The grader wrote its results.
    Graded(Vec<(u32, String)>),
    /// No results: the code did not compile, crashed the grader, or ran out of time.
    Failed(&'static str),
}

/// Runs `cargo test --release --test CHAPTER` in the scratch crate, logging to `log`.
fn grade_chapter(
    repo: &Path,
    scratch: &Path,
    chapter: &str,
    seed: Option<u64>,
    limit: Duration,
    log: &Path,
) -> Outcome {
    let results = scratch.join("results.csv");
    let _ = fs::remove_file(&results);
    let log_file = match fs::File::create(log) {
        Ok(f) => f,
        Err(_) => return Outcome::Failed("crashed"),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(scratch)
        .args(["test", "--release", "--quiet", "--test", chapter])
        .env("CARGO_TARGET_DIR", repo.join("target"))
        .env("EXERCISES_RESULTS", &results)
        .env("MBD_ROOT", repo)
        .env_remove("EXERCISES_EXPECT")
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map(Stdio::from).unwrap_or(Stdio::null()))
        .stderr(Stdio::from(log_file));
    match seed {
        Some(s) => cmd.env("EXERCISES_SEED", s.to_string()),
        None => cmd.env_remove("EXERCISES_SEED"),
    };
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(_) => return Outcome::Failed("crashed"),
    };
    let start = Instant::now();
    let timed_out = loop {
        match child.try_wait() {
            Ok(Some(_)) => break false,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break true;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(_) => break false,
        }
    };
    let graded = fs::read_to_string(&results)
        .map(|t| parse_results(&t, chapter))
        .unwrap_or_default();
    if !graded.is_empty() {
        return Outcome::Graded(graded);
    }
    if timed_out {
        return Outcome::Failed("time limit");
    }
    let text = fs::read_to_string(log).unwrap_or_default();
    if text.contains("could not compile") || text.contains("error[E") || text.contains("error: ") {
        Outcome::Failed("does not compile")
    } else {
        Outcome::Failed("crashed")
    }
}

/// The student's file for `chapter`: `DIR/src/CHAPTER.rs`, else `DIR/CHAPTER.rs`.
fn submitted(student: &Path, chapter: &str) -> Option<PathBuf> {
    [
        student.join("src").join(format!("{chapter}.rs")),
        student.join(format!("{chapter}.rs")),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

fn run(args: Args) -> Result<(), String> {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let repo = crate_dir
        .parent()
        .ok_or("the exercises crate has no parent directory")?
        .to_path_buf();
    let scratch = repo.join("target").join("grade-class").join("exercises");
    let mut students: Vec<(String, PathBuf)> = fs::read_dir(&args.submissions)
        .map_err(|e| format!("{}: {e}", args.submissions.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    students.sort();
    if students.is_empty() {
        return Err(format!("{}: no student directories", args.submissions.display()));
    }
    let logs = PathBuf::from(format!("{}.logs", args.out.display()));
    fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    make_scratch(&repo, &crate_dir, &scratch)?;
    let limit = Duration::from_secs(args.time_limit);

    // The stubs first: they give each chapter's list of exercises (and warm the build).
    let mut listed: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for chapter in &args.chapters {
        eprintln!("grade-class: {chapter}: building the grader");
        let log = logs.join(format!("_reference-{chapter}.log"));
        match grade_chapter(&repo, &scratch, chapter, args.seed, limit, &log) {
            Outcome::Graded(r) => listed.insert(chapter.clone(), r.iter().map(|(n, _)| *n).collect()),
            Outcome::Failed(why) => return Err(format!("the stubs of {chapter} {why} (see {})", log.display())),
        };
    }

    let mut rows = Vec::new();
    for (name, dir) in &students {
        for chapter in &args.chapters {
            let numbers = &listed[chapter];
            let stub = crate_dir.join("src").join(format!("{chapter}.rs"));
            let target = scratch.join("src").join(format!("{chapter}.rs"));
            let outcome = match submitted(dir, chapter) {
                None => Outcome::Failed("not submitted"),
                Some(file) => {
                    fs::copy(&file, &target).map_err(|e| format!("{}: {e}", file.display()))?;
                    let log = logs.join(format!("{name}-{chapter}.log"));
                    let o = grade_chapter(&repo, &scratch, chapter, args.seed, limit, &log);
                    fs::copy(&stub, &target).map_err(|e| format!("{}: {e}", stub.display()))?;
                    o
                }
            };
            let statuses: Vec<(u32, String)> = match outcome {
                Outcome::Graded(r) => numbers
                    .iter()
                    .map(|n| {
                        let s = r.iter().find(|(m, _)| m == n).map(|(_, s)| s.clone());
                        (*n, s.unwrap_or_else(|| "crashed".into()))
                    })
                    .collect(),
                Outcome::Failed(why) => numbers.iter().map(|n| (*n, why.to_string())).collect(),
            };
            let passed = statuses.iter().filter(|(_, s)| s == "pass").count();
            eprintln!("grade-class: {name} {chapter}: {passed} of {} passed", statuses.len());
            for (n, s) in statuses {
                rows.push(format!("{},{chapter},{n},{}", csv_field(name), csv_field(&s)));
            }
        }
    }
    let mut text = String::from("student,chapter,exercise,status\n");
    for r in rows {
        text.push_str(&r);
        text.push('\n');
    }
    fs::write(&args.out, text).map_err(|e| format!("{}: {e}", args.out.display()))?;
    eprintln!("grade-class: wrote {} (logs in {})", args.out.display(), logs.display());
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = parse_args(&args).and_then(run) {
        eprintln!("grade-class: {e}");
        std::process::exit(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn arguments() {
        let a = parse_args(&strings(&[
            "class",
            "--chapters",
            "ch01,ch09",
            "--out",
            "g.csv",
            "--seed",
            "7",
        ]))
        .unwrap();
        assert_eq!(a.submissions, PathBuf::from("class"));
        assert_eq!(a.chapters, strings(&["ch01", "ch09"]));
        assert_eq!((a.out, a.seed, a.time_limit), (PathBuf::from("g.csv"), Some(7), 600));
        assert_eq!(
            parse_args(&strings(&["class"])).unwrap().chapters.len(),
            exercises::CHAPTERS.len()
        );
        assert!(parse_args(&strings(&["class", "--chapters", "ch99"])).is_err());
        assert!(parse_args(&strings(&["class", "--seed", "x"])).is_err());
        assert!(parse_args(&strings(&["class", "--time-limit", "0"])).is_err());
        assert!(parse_args(&strings(&["a", "b"])).is_err());
        assert!(parse_args(&strings(&[])).is_err());
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("alice"), "alice");
        assert_eq!(csv_field("not attempted"), "not attempted");
        assert_eq!(csv_field("smith, j"), "\"smith, j\"");
        assert_eq!(csv_field("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn results_of_one_chapter_are_read() {
        let text = "ch01,1,pass\nch01,2,not attempted\nch09,1,fail\nch01,x,pass\n";
        assert_eq!(
            parse_results(text, "ch01"),
            vec![(1, "pass".to_string()), (2, "not attempted".to_string())]
        );
        assert_eq!(parse_results(text, "ch09"), vec![(1, "fail".to_string())]);
    }
}
