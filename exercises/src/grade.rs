//! The grading harness every grader (`tests/chNN.rs`) runs: each exercise's check is called on
//! seeded random inputs, in its own thread and under a time limit, and the result is one line per
//! exercise: `pass`, `FAIL` with what broke and a hint, or `not attempted` for a function that
//! still holds its `todo!()`. The messages name the check that broke, never the expected numbers.
//!
//! Environment variables:
//!
//! | variable | effect |
//! |---|---|
//! | `EXERCISES_SEED` | the seed of the random inputs (default: one fixed per chapter, printed in the header) |
//! | `EXERCISES_RESULTS` | a file to which one CSV line `chapter,exercise,status` per exercise is appended (the batch grader reads it) |
//! | `EXERCISES_EXPECT` | `not-attempted`: exit successfully only if every exercise is still a stub (CI runs the stubs so) |
//! | `EXERCISES_TIME_LIMIT` | seconds one exercise may take (default 20) |

use std::fmt::Display;
use std::io::Write as _;
use std::sync::mpsc;
use std::time::Duration;

/// A small, seedable random-number generator (SplitMix64), so that every grader run can be
/// repeated exactly from the seed it prints.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }

    /// An integer uniform in `lo..=hi`.
    pub fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// A 3-vector with entries uniform in `[-r, r)`.
    pub fn vec3(&mut self, r: f64) -> mbd::spatial::Vec3 {
        mbd::spatial::Vec3::new(self.uniform(-r, r), self.uniform(-r, r), self.uniform(-r, r))
    }

    /// A unit 3-vector (uniform on the sphere).
    pub fn unit3(&mut self) -> mbd::spatial::Vec3 {
        loop {
            let v = self.vec3(1.0);
            let n = v.norm();
            if n > 0.1 && n <= 1.0 {
                return v / n;
            }
        }
    }

    /// `n` numbers uniform in `[-r, r)`.
    pub fn vec(&mut self, n: usize, r: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(-r, r)).collect()
    }

    /// A rotation matrix: a random unit axis and an angle in `[-pi, pi)`.
    pub fn rotation(&mut self) -> mbd::spatial::Mat3 {
        let axis = self.unit3();
        mbd::spatial::axis_angle_mat(&axis, self.uniform(-std::f64::consts::PI, std::f64::consts::PI))
    }

    /// A unit quaternion (w, x, y, z).
    pub fn quat(&mut self) -> [f64; 4] {
        let axis = self.unit3();
        mbd::spatial::quat_from_axis_angle(&axis, self.uniform(-std::f64::consts::PI, std::f64::consts::PI))
    }
}

/// What a check returns: `Err` says, in words and without the expected numbers, what is wrong.
pub type Check = std::result::Result<(), String>;

/// Fails with `what` unless `ok`.
pub fn ensure(ok: bool, what: impl Display) -> Check {
    if ok {
        Ok(())
    } else {
        Err(what.to_string())
    }
}

/// Fails unless `got` is finite and within `tol` of `want`; the message names `what` and the
/// tolerance, not `want`.
pub fn close(got: f64, want: f64, tol: f64, what: impl Display) -> Check {
    if !got.is_finite() {
        return Err(format!("{what}: your value is not finite"));
    }
    ensure(
        (got - want).abs() <= tol,
        format_args!("{what} is off (tolerance {tol:.0e})"),
    )
}

/// [`close`] entry by entry; the message names the first entry that is off.
pub fn close_all(got: &[f64], want: &[f64], tol: f64, what: impl Display) -> Check {
    if got.len() != want.len() {
        return Err(format!("{what}: {} numbers, expected {}", got.len(), want.len()));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        close(*g, *w, tol, format_args!("{what}, entry {k}"))?;
    }
    Ok(())
}

/// [`close_all`] for matrices (any nalgebra storage), naming the first entry `(row, column)` that
/// is off.
pub fn close_mat<R, C, S1, S2>(
    got: &nalgebra::Matrix<f64, R, C, S1>,
    want: &nalgebra::Matrix<f64, R, C, S2>,
    tol: f64,
    what: impl Display,
) -> Check
where
    R: nalgebra::Dim,
    C: nalgebra::Dim,
    S1: nalgebra::RawStorage<f64, R, C>,
    S2: nalgebra::RawStorage<f64, R, C>,
{
    if got.shape() != want.shape() {
        return Err(format!("{what}: shape {:?}, expected {:?}", got.shape(), want.shape()));
    }
    for r in 0..got.nrows() {
        for c in 0..got.ncols() {
            if got.ncols() == 1 {
                close(got[(r, c)], want[(r, c)], tol, format_args!("{what}, entry {r}"))?;
            } else {
                close(got[(r, c)], want[(r, c)], tol, format_args!("{what}, entry ({r}, {c})"))?;
            }
        }
    }
    Ok(())
}

/// One exercise: its number and title in the chapter, the hint shown when it fails, and the
/// check, which calls the student's function on inputs drawn from the generator.
pub struct Exercise {
    /// The exercise's number in the chapter's "Exercises" section.
    pub number: u32,
    /// Its title in that section.
    pub title: &'static str,
    /// What to look at when it fails (printed with the failure).
    pub hint: &'static str,
    /// The check.
    pub check: fn(&mut Rng) -> Check,
}

/// The outcome of one exercise.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Every check held.
    Pass,
    /// A check broke (the message says which) or the code panicked.
    Fail(String),
    /// The function still holds its `todo!()`.
    NotAttempted,
    /// The exercise ran past the time limit (an endless loop?).
    TimeLimit,
}

impl Status {
    /// The word written to the results file and the batch grader's CSV.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail(_) => "fail",
            Status::NotAttempted => "not attempted",
            Status::TimeLimit => "time limit",
        }
    }
}

/// The message of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

/// Runs one exercise's check in its own thread with `limit`.
pub fn grade_one(ex: &Exercise, seed: u64, limit: Duration) -> Status {
    let (tx, rx) = mpsc::channel();
    let check = ex.check;
    let spawned = std::thread::Builder::new().stack_size(64 << 20).spawn(move || {
        let mut rng = Rng::new(seed);
        let out = std::panic::catch_unwind(move || check(&mut rng));
        let _ = tx.send(out.map_err(|p| panic_message(&*p)));
    });
    if let Err(e) = spawned {
        return Status::Fail(format!("the grader could not start a thread: {e}"));
    }
    match rx.recv_timeout(limit) {
        Ok(Ok(Ok(()))) => Status::Pass,
        Ok(Ok(Err(why))) => Status::Fail(why),
        Ok(Err(msg)) if msg.starts_with("not yet implemented") || msg.starts_with("not implemented") => {
            Status::NotAttempted
        }
        Ok(Err(msg)) => Status::Fail(format!("panicked: {msg}")),
        Err(_) => Status::TimeLimit,
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

/// Grades every exercise of a chapter, prints one line per exercise and a total, appends the
/// results to `EXERCISES_RESULTS` if set, and returns success only if every exercise passed (or,
/// with `EXERCISES_EXPECT=not-attempted`, only if every one is still a stub).
pub fn run(chapter: &str, title: &str, default_seed: u64, exercises: &[Exercise]) -> ! {
    // The checks report through their return value; the default hook would print every panic
    // (each `todo!()` among them) with a backtrace hint.
    std::panic::set_hook(Box::new(|_| {}));
    let seed = env_u64("EXERCISES_SEED").unwrap_or(default_seed);
    let limit = Duration::from_secs(env_u64("EXERCISES_TIME_LIMIT").unwrap_or(20));
    println!("{chapter}: {title} (seed {seed})");
    let mut results = Vec::new();
    for ex in exercises {
        let status = grade_one(ex, seed.wrapping_add(ex.number as u64), limit);
        let word = match &status {
            Status::Pass => "pass",
            Status::Fail(_) => "FAIL",
            Status::NotAttempted => "not attempted",
            Status::TimeLimit => "TIME LIMIT",
        };
        println!("  {:>2}  {word:<14} {}", ex.number, ex.title);
        match &status {
            Status::Fail(why) => {
                println!("      what broke: {why}");
                println!("      hint: {}", ex.hint);
            }
            Status::TimeLimit => {
                println!("      ran for more than {} s (an endless loop?)", limit.as_secs());
                println!("      hint: {}", ex.hint);
            }
            Status::NotAttempted => println!("      (the function still holds `todo!()`)"),
            Status::Pass => {}
        }
        results.push(status);
    }
    let passed = results.iter().filter(|s| **s == Status::Pass).count();
    println!("{chapter}: {passed} of {} passed", results.len());
    if let Ok(path) = std::env::var("EXERCISES_RESULTS") {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| {
                let mut text = String::new();
                for (ex, s) in exercises.iter().zip(&results) {
                    text.push_str(&format!("{chapter},{},{}\n", ex.number, s.word()));
                }
                f.write_all(text.as_bytes())
            });
        if let Err(e) = written {
            eprintln!("{chapter}: could not append to EXERCISES_RESULTS={path}: {e}");
            std::process::exit(2);
        }
    }
    let ok = match std::env::var("EXERCISES_EXPECT").as_deref() {
        Ok("not-attempted") => results.iter().all(|s| *s == Status::NotAttempted),
        _ => passed == results.len(),
    };
    // A check that ran past the limit still has its thread running: leave without waiting for it.
    std::io::stdout().flush().ok();
    std::process::exit(if ok { 0 } else { 1 })
}

/// The repository's root, for the graders' fixtures (`tests/fixtures/`): `MBD_ROOT` if set (the
/// batch grader sets it), else the parent directory of this crate.
pub fn repo_root() -> std::path::PathBuf {
    std::env::var_os("MBD_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
}

/// For the graders' own tests (`tests/wrong_answers.rs`): true when `check` fails on the inputs
/// of every seed in `seeds` because of the answer, so a deliberately wrong answer fed to a
/// grader's check proves that the check can fail. A failure of the grader's own set-up (a
/// message starting with `grader:`) does not count.
pub fn fails_on(seeds: std::ops::Range<u64>, check: impl Fn(&mut Rng) -> Check) -> bool {
    seeds.into_iter().all(|s| match check(&mut Rng::new(s)) {
        Ok(()) => false,
        Err(why) => {
            println!("seed {s}: {why}");
            !why.starts_with("grader")
        }
    })
}

/// [`fails_on`], and every failure's message names `what` (the quantity the wrong answer gets
/// wrong), so the student reading it is pointed at the slip.
pub fn fails_naming(seeds: std::ops::Range<u64>, what: &str, check: impl Fn(&mut Rng) -> Check) -> bool {
    seeds.into_iter().all(|s| match check(&mut Rng::new(s)) {
        Ok(()) => false,
        Err(why) => {
            println!("seed {s}: {why}");
            !why.starts_with("grader") && why.contains(what)
        }
    })
}
