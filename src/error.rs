//! The library's one error type. Every routine that can fail on user input returns
//! `Result<_, Error>`; each variant says what went wrong and where.

use thiserror::Error;

/// Everything that can go wrong on user input, with the place it went wrong.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A parent index breaks the ordering `lambda(i) < i` of Featherstone 4.1.
    #[error("body {body} ('{name}'): parent index {parent} breaks lambda(i) < i")]
    BadParent { body: usize, name: String, parent: usize },
    /// A body's inertia is not physical.
    #[error("body {body} ('{name}'): inertia is not physical: {why}")]
    BadInertia { body: usize, name: String, why: String },
    /// A joint is malformed (zero axis, bad range, ...).
    #[error("body {body} ('{name}'): joint is malformed: {why}")]
    BadJoint { body: usize, name: String, why: String },
    /// A loop joint is malformed (unknown body, a body joined to itself, a free joint, ...).
    #[error("loop joint {index} ('{name}'): {why}")]
    BadLoopJoint { index: usize, name: String, why: String },
    /// A vector has the wrong length.
    #[error("{what} has length {got}, expected {expected}")]
    BadLength { what: String, got: usize, expected: usize },
    /// A vector holds a NaN or an infinity.
    #[error("{what}[{index}] is not finite ({value})")]
    NonFinite { what: String, index: usize, value: f64 },
    /// A quaternion in the state has zero or non-finite norm.
    #[error("{what}: quaternion of joint '{joint}' at qpos[{index}] has zero or non-finite norm")]
    BadQuaternion { what: String, joint: String, index: usize },
    /// A matrix that must be positive definite is not.
    #[error("{what}: not positive definite (pivot {value:.3e} at dof {dof})")]
    NotPositiveDefinite { what: String, dof: usize, value: f64 },
    /// A model file could not be read.
    #[error("{path}: {why}")]
    Io { path: String, why: String },
    /// A model file is malformed or uses something the reader does not support.
    #[error("{file}:{line}: {why}")]
    Model { file: String, line: u32, why: String },
    /// A state file is malformed.
    #[error("state: {0}")]
    State(String),
    /// Something in a named entity (body, joint, loop, constraint) cannot be found.
    #[error("unknown {kind} '{name}'")]
    Unknown { kind: String, name: String },
    /// A linear system is singular or inconsistent.
    #[error("{what}: {why}")]
    Singular { what: String, why: String },
    /// A time step that is not positive and finite.
    #[error("time step h = {value} must be positive and finite")]
    BadTimestep { value: f64 },
    /// A name of an option value that MuJoCo does not have (integrator, solver, cone, ...).
    #[error("unknown {kind} '{value}' (expected one of: {expected})")]
    UnknownOption {
        kind: &'static str,
        value: String,
        expected: String,
    },
    /// A simulation left the finite range: MuJoCo's `mj_checkPos`/`mj_checkVel`/`mj_checkAcc`
    /// (non-finite or larger than `mjMAXVAL` in magnitude), with the step (None for the initial
    /// state), time and first bad entry.
    #[error("{} t = {time}: {quantity}[{index}] = {value:e} is not finite or exceeds mjMAXVAL = 1e10", match step { Some(s) => format!("diverged at step {s},"), None => "initial state at".to_string() })]
    Diverged {
        step: Option<usize>,
        time: f64,
        quantity: &'static str,
        index: usize,
        value: f64,
    },
    /// Something valid that this part of the library does not support yet.
    #[error("{what}: {why}")]
    Unsupported { what: String, why: String },
    /// An output path that cannot be used (it is an input, or has an unknown extension).
    #[error("--out {path}: {why}")]
    InvalidOutput { path: String, why: String },
    /// An operating-system input/output error (reading or writing a file or stream).
    #[error("{0}")]
    InputOutput(String),
    /// Anything else, with a description.
    #[error("{0}")]
    Other(String),
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::InputOutput(e.to_string())
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, Error>;

/// Checks that `x` has length `expected` and only finite entries.
pub fn check_vector(what: &str, x: &[f64], expected: usize) -> Result<()> {
    if x.len() != expected {
        return Err(Error::BadLength {
            what: what.into(),
            got: x.len(),
            expected,
        });
    }
    if let Some((index, &value)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: what.into(),
            index,
            value,
        });
    }
    Ok(())
}
