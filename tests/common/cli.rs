//! Running the `mbd` command from the CLI tests (`tests/cli*.rs`): the binary, the fixture
//! models, a scratch folder per test, the failure contract (one `mbd:` line on stderr, the
//! expected exit code, no panic) and the CSV / JSON the command writes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `mbd` binary Cargo built for these tests.
pub const MBD: &str = env!("CARGO_BIN_EXE_mbd");

/// A model of `tests/fixtures/models`.
pub fn model(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models")
        .join(name)
}

/// A path as the `&str` a command line takes.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// An empty folder for test `name` under Cargo's temporary directory, one per test file.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(env!("CARGO_CRATE_NAME"))
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `mbd args...`.
pub fn mbd(args: &[&str]) -> Output {
    Command::new(MBD).args(args).output().expect("cannot run mbd")
}

/// The arguments of `mbd simulate MODEL EXTRA... --out OUT`.
pub fn sim<'a>(model: &'a str, extra: &[&'a str], out: &'a str) -> Vec<&'a str> {
    let mut args = vec!["simulate", model];
    args.extend_from_slice(extra);
    args.extend(["--out", out]);
    args
}

/// Runs `mbd simulate MODEL EXTRA... --out OUT` and expects it to succeed.
pub fn simulate(model: &Path, extra: &[&str], out: &Path) -> Output {
    ok(mbd(&sim(s(model), extra, s(out))))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `o` after checking that the command succeeded (else its stderr is the message).
pub fn ok(o: Output) -> Output {
    assert!(o.status.success(), "mbd failed: {}", stderr(&o));
    o
}

/// Runs `args`, expects the failure contract with exit code `code`, returns stderr.
pub fn fails(args: &[&str], code: i32) -> String {
    let o = mbd(args);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(code),
        "mbd {args:?}: exit {:?}, stderr {err}",
        o.status.code()
    );
    assert!(
        err.starts_with("mbd: "),
        "mbd {args:?}: stderr does not start with 'mbd: ': {err}"
    );
    assert_eq!(err.lines().count(), 1, "mbd {args:?}: stderr is not one line: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "mbd {args:?} panicked: {err}"
    );
    err
}

/// [`fails`], and the message contains `needle`.
pub fn fails_with(args: &[&str], code: i32, needle: &str) -> String {
    let err = fails(args, code);
    assert!(err.contains(needle), "mbd {args:?}: '{err}' lacks '{needle}'");
    err
}

/// The JSON a successful command printed.
pub fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "mbd failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("stdout is not JSON")
}

pub fn vec_of(v: &serde_json::Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

pub fn matrix_of(v: &serde_json::Value) -> Vec<Vec<f64>> {
    v.as_array().unwrap().iter().map(vec_of).collect()
}

/// CSV text as `mbd simulate` writes it -> (header, rows of numbers).
pub fn csv(text: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

/// [`csv`] of a file.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    csv(&fs::read_to_string(path).unwrap())
}
