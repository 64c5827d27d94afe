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
    /// A matrix indexed by dofs (H, an `LTDL` factor, ABA's `D_i`) that must be positive
    /// definite is not: the pivot of dof `dof` is `value`.
    #[error("{what}: not positive definite (pivot {value:.3e} at dof {dof})")]
    NotPositiveDefinite { what: String, dof: usize, value: f64 },
    /// A general matrix (rows not dofs: `K H^-1 K^T`, `G^T H G`, a dense reference) that must be
    /// positive definite is not: the Cholesky pivot of row `row` is `pivot`.
    #[error("{matrix}: not positive definite (pivot {pivot:.3e} at row {row})")]
    PivotNotPositive { matrix: String, row: usize, pivot: f64 },
    /// A matrix argument has the wrong shape.
    #[error("{what} is {rows} x {cols}, expected {expected}")]
    BadShape {
        what: String,
        rows: usize,
        cols: usize,
        expected: String,
    },
    /// A finite entry above MuJoCo's `mjMAXVAL` (1e10) in a state or an argument: MuJoCo's
    /// `mj_checkPos` / `mj_checkVel` would reset the simulation.
    #[error("{what}[{index}] = {value:e} exceeds mjMAXVAL = 1e10")]
    TooLarge { what: String, index: usize, value: f64 },
    /// A model parameter of an option (`<option>`: timestep, gravity, ...) is out of range.
    #[error("option {option}: {why}")]
    BadOption { option: String, why: String },
    /// A function argument (named as the function names it) is out of its domain.
    #[error("argument {what}: {why}")]
    InvalidArgument { what: String, why: String },
    /// An iterative method stopped at its iteration bound without converging. `residual` is the
    /// size of what was left, when the method measures one.
    #[error("{solver}: did not converge in {iterations} iterations{}", residual.map_or(String::new(), |r| format!(" (residual {r:.3e})")))]
    NotConverged {
        solver: String,
        iterations: usize,
        residual: Option<f64>,
    },
    /// A quantity computed from valid input overflowed (an output entry is not finite).
    #[error("{what}[{index}] overflowed to {value}")]
    Overflow { what: String, index: usize, value: f64 },
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
    /// A sparsity pattern or ordering is malformed (asymmetric, out of range, not a permutation).
    #[error("sparsity pattern, node {node}: {why}")]
    BadPattern { node: usize, why: String },
    /// An elimination without pivoting met a zero pivot (a singular or wrongly ordered system).
    #[error("{what}: zero pivot {value:.3e} at row {index}")]
    ZeroPivot { what: String, index: usize, value: f64 },
    /// A state breaks the loop constraints it must satisfy (Featherstone 8.12's inverse dynamics
    /// needs `q`, `qdot`, `qdd` consistent with `K`).
    #[error("the state breaks the loop constraints: {what} = {value:.3e}")]
    ConstraintViolated { what: String, value: f64 },
    /// Two methods that must agree (a self-check of a figure or a reference) do not.
    #[error("{what} disagree by {by:.3e}")]
    Disagree { what: String, by: f64 },
    /// A chart cannot be drawn or written.
    #[error("chart '{title}': {why}")]
    Plot { title: String, why: String },
    /// The book cannot be configured or built, or its checks found problems.
    #[error("book {what}: {why}")]
    Book { what: String, why: String },
    /// A site, tendon or actuator of a model refers to something that does not exist or has
    /// non-finite or out-of-range parameters.
    #[error("{kind} {index} ('{name}'): {why}")]
    BadElement {
        kind: String,
        index: usize,
        name: String,
        why: String,
    },
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
    /// A physical or numerical parameter outside its allowed range (SPOOK's `epsilon`, `tau`, a
    /// mass, a contact radius, ...): names the parameter, where it belongs and the rule it breaks.
    #[error("{what} = {value}: {why}")]
    BadParameter { what: String, value: f64, why: String },
    /// A quaternion given as input (not one the library normalizes itself) is not of unit norm.
    #[error("{what}: quaternion of body {body} has norm {norm}, expected 1 (normalize it first)")]
    NotUnitQuaternion { what: String, body: usize, norm: f64 },
    /// A contact handed to MuJoCo's constraint rows (`mjContact`) is malformed: a condim other
    /// than 1, 3, 4, 6, a negative or non-finite friction, a geom out of range, a non-finite
    /// position, frame, distance or parameter. `index` is its place in the contact list.
    #[error("contact {index}: {why}")]
    BadContact { index: usize, why: String },
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
    /// A geom's contact parameters or sizes are out of range (condim not 1, 3, 4 or 6, a negative
    /// or non-finite friction, a non-positive size its type uses, a non-finite margin or gap).
    #[error("geom {geom} ('{name}'): {why}")]
    BadGeom { geom: usize, name: String, why: String },
    /// An explicit contact pair (`<pair>`) is out of range (condim, friction, unknown geom).
    #[error("contact pair {pair} ('{name}'): {why}")]
    BadContactPair { pair: usize, name: String, why: String },
    /// Something valid that this part of the library does not support yet.
    #[error("{what}: {why}")]
    Unsupported { what: String, why: String },
    /// An output path that cannot be used (it is an input, or has an unknown extension).
    #[error("--out {path}: {why}")]
    InvalidOutput { path: String, why: String },
    /// An operating-system input/output error (reading or writing a file or stream).
    #[error("{0}")]
    InputOutput(String),
    /// A convex hull (of a mesh) cannot be built: fewer than 4 points, or all of them on a line
    /// or in a plane (a flat mesh has no volume).
    #[error("degenerate convex hull: {why}")]
    DegenerateHull { why: String },
    /// A muscle has no usable `lengthrange` (`lengthrange[0] >= lengthrange[1]`): give one, or
    /// compute it with `mbd::mujoco::lengthrange::set_length_range` (`mbd::mujoco::load` does).
    #[error("actuator {actuator} ('{name}'): a muscle needs lengthrange[0] < lengthrange[1], got {range:?}; give lengthrange or compute it with mbd::mujoco::lengthrange::set_length_range (mbd::mujoco::load does, as MuJoCo's compiler runs mj_setLengthRange)")]
    LengthRangeMissing {
        actuator: usize,
        name: String,
        range: [f64; 2],
    },
    /// MuJoCo's `mj_setLengthRange` failed for an actuator: its simulation diverged
    /// ("Unstable lengthrange simulation"), found no range ("Invalid lengthrange") or did not
    /// settle within `tolrange` ("Lengthrange computation did not converge").
    #[error("actuator {actuator} ('{name}'): {why}")]
    LengthRange { actuator: usize, name: String, why: String },
    /// A matrix stored by rows (`efc_J` with `rowadr` and `colind`) is malformed: row addresses
    /// that decrease or do not end at the number of entries, or a row whose columns are not
    /// increasing and below the column count.
    #[error("{what} row {row}: {why}")]
    BadSparseRows { what: String, row: usize, why: String },
    /// A model constant that MuJoCo's compiler computes from the model at `qpos0` or
    /// `qpos_spring` (an actuator's `dampratio`, a wrapping tendon's rest length) is still
    /// unset: the MJCF reader cannot compute it; `mbd::mujoco::load` does.
    #[error("{what} is not computed yet: {how}")]
    Unresolved { what: String, how: String },
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

/// Checks that every entry of `x` is finite and at most MuJoCo's `mjMAXVAL` in magnitude (what
/// `mj_checkPos` / `mj_checkVel` demand of a state); the error names `what[index]`.
pub fn check_magnitude(what: &str, x: &[f64]) -> Result<()> {
    for (index, &value) in x.iter().enumerate() {
        if !value.is_finite() {
            return Err(Error::NonFinite {
                what: what.into(),
                index,
                value,
            });
        }
        if value.abs() > crate::model::constants::MJ_MAXVAL {
            return Err(Error::TooLarge {
                what: what.into(),
                index,
                value,
            });
        }
    }
    Ok(())
}

/// Checks an output: every entry finite, else [`Error::Overflow`] naming `what[index]`.
pub fn check_output(what: &str, x: &[f64]) -> Result<()> {
    // a pass without a branch per number first (it runs in vector registers); the search for
    // the first bad one only when there is one
    if x.chunks(16).all(|c| c.iter().fold(true, |ok, v| ok & v.is_finite())) {
        return Ok(());
    }
    match x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        Some((index, &value)) => Err(Error::Overflow {
            what: what.into(),
            index,
            value,
        }),
        None => Ok(()),
    }
}
