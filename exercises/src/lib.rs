//! # Graded exercises of the `mbd` book
//!
//! One module per chapter. Each exercise is a function whose body is `todo!()`: its doc comment
//! states the task, the book's "Exercises" section gives the background. Write the body, then
//! grade the chapter:
//!
//! ```text
//! cargo test -p exercises --test ch02
//! ```
//!
//! The grader (`tests/ch02.rs`) calls your function on seeded random inputs, compares it with
//! the library's own routine or with an independent check (a finite difference, a conservation
//! law), and prints one line per exercise: `pass`, `FAIL` with what broke and a hint, or
//! `not attempted`. It never prints the numbers it expected.
//!
//! | module | chapter (`book/src/`) | grader |
//! |---|---|---|
//! | [`ch02`] | Spatial vectors (`spatial.md`) | `tests/ch02.rs` |
//! | [`ch04`] | Joint models and kinematic trees (`joints.md`) | `tests/ch04.rs` |
//! | [`ch05`] | The recursive Newton-Euler algorithm (`rnea.md`) | `tests/ch05.rs` |
//! | [`ch06`] | The composite-rigid-body algorithm (`crba.md`) | `tests/ch06.rs` |
//! | [`ch07`] | The articulated-body algorithm (`aba.md`) | `tests/ch07.rs` |
//! | [`sparse`] | Sparse factorization of the joint-space inertia (`sparse.md`) | `tests/sparse.rs` |
//! | [`com`] | MuJoCo's com-based quantities (`com.md`) | `tests/com.rs` |
//! | [`ch08`] | Closed-loop systems (`loops.md`) | `tests/ch08.rs` |
//! | [`loops2`] | Solving the constraint equations, sparsity and ladders (`loops2.md`) | `tests/loops2.rs` |
//! | [`spook`] | SPOOK: a variational stepper (`spook.md`) | `tests/spook.rs` |
//! | [`ch18`] | One mechanism, every formulation (`comparison.md`) | `tests/ch18.rs` |
//!
//! Worked answers live in `solutions/`, outside `src/`: with the cargo feature `solutions` each
//! module is compiled from `solutions/NAME.rs` instead of `src/NAME.rs`
//! (`cargo test -p exercises --features solutions` grades them). An instructor hands out the
//! crate without that directory; the book's instructor appendix (`book/src/instructor.md`)
//! explains how to set, collect and batch-grade assignments (`src/bin/grade_class.rs`).

pub mod grade;
pub mod types;

/// The chapters with graded exercises, in the book's order: each is a module here, a stub file
/// `src/NAME.rs`, a worked answer `solutions/NAME.rs` and a grader `tests/NAME.rs`.
pub const CHAPTERS: [&str; 11] = [
    "ch02", "ch04", "ch05", "ch06", "ch07", "sparse", "com", "ch08", "loops2", "spook", "ch18",
];

#[cfg_attr(feature = "solutions", path = "../solutions/ch02.rs")]
pub mod ch02;
#[cfg_attr(feature = "solutions", path = "../solutions/ch04.rs")]
pub mod ch04;
#[cfg_attr(feature = "solutions", path = "../solutions/ch05.rs")]
pub mod ch05;
#[cfg_attr(feature = "solutions", path = "../solutions/ch06.rs")]
pub mod ch06;
#[cfg_attr(feature = "solutions", path = "../solutions/ch07.rs")]
pub mod ch07;
#[cfg_attr(feature = "solutions", path = "../solutions/ch08.rs")]
pub mod ch08;
#[cfg_attr(feature = "solutions", path = "../solutions/ch18.rs")]
pub mod ch18;
#[cfg_attr(feature = "solutions", path = "../solutions/com.rs")]
pub mod com;
#[cfg_attr(feature = "solutions", path = "../solutions/loops2.rs")]
pub mod loops2;
#[cfg_attr(feature = "solutions", path = "../solutions/sparse.rs")]
pub mod sparse;
#[cfg_attr(feature = "solutions", path = "../solutions/spook.rs")]
pub mod spook;
