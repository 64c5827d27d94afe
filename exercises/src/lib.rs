//! # Graded exercises of the `mbd` book
//!
//! One module per chapter. Each exercise is a function whose body is `todo!()`: its doc comment
//! states the task, the book's "Exercises" section gives the background. Write the body, then
//! grade the chapter:
//!
//! ```text
//! cargo test -p exercises --test ch01
//! ```
//!
//! The grader (`tests/ch01.rs`) calls your function on seeded random inputs, compares it with
//! the library's own routine or with an independent check (a finite difference, a conservation
//! law), and prints one line per exercise: `pass`, `FAIL` with what broke and a hint, or
//! `not attempted`. It never prints the numbers it expected.
//!
//! | module | chapter (`book/src/`) | grader |
//! |---|---|---|
//! | [`ch01`] | Spatial vectors (`spatial.md`) | `tests/ch01.rs` |
//! | [`ch02`] | Joint models and kinematic trees (`joints.md`) | `tests/ch02.rs` |
//! | [`ch03`] | The recursive Newton-Euler algorithm (`rnea.md`) | `tests/ch03.rs` |
//! | [`ch04`] | The composite-rigid-body algorithm (`crba.md`) | `tests/ch04.rs` |
//! | [`ch05`] | The articulated-body algorithm (`aba.md`) | `tests/ch05.rs` |
//! | [`ch06`] | Sparse factorization of the joint-space inertia (`sparse.md`) | `tests/ch06.rs` |
//! | [`ch07`] | Closed-loop systems (`loops.md`) | `tests/ch07.rs` |
//! | [`ch08`] | Solving the constraint equations, sparsity and ladders (`loops2.md`) | `tests/ch08.rs` |
//! | [`ch09`] | MuJoCo's com-based quantities (`com.md`) | `tests/ch09.rs` |
//! | [`ch10`] | Collision detection (`collision.md`) | `tests/ch10.rs` |
//! | [`ch11`] | The constraint model (`constraints.md`) | `tests/ch11.rs` |
//! | [`ch12`] | Soft constraints (`soft_constraints.md`) | `tests/ch12.rs` |
//! | [`ch13`] | Solvers (`solvers.md`) | `tests/ch13.rs` |
//! | [`ch14`] | The constrained pipeline (`constrained_forward.md`) | `tests/ch14.rs` |
//! | [`ch15`] | Integrators and the simulation loop (`integrators.md`) | `tests/ch15.rs` |
//! | [`ch16`] | SPOOK: a variational stepper (`spook.md`) | `tests/ch16.rs` |
//! | [`ch17`] | Sparse direct solves for SPOOK (`spook_sparse.md`) | `tests/ch17.rs` |
//! | [`ch18`] | One mechanism, every formulation (`comparison.md`) | `tests/ch18.rs` |
//!
//! Every module carries its chapter's number in the book's sidebar (`ch10` is chapter 10,
//! "Collision detection"), the same number as the chapter's example (`examples/ch10_collision.rs`).
//! Every grader ends with tests that feed its checks deliberately wrong answers and expect them
//! to fail naming what is wrong, run by `cargo test -p exercises --test wrong_answers`.
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
pub const CHAPTERS: [&str; 18] = [
    "ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09", "ch10", "ch11", "ch12", "ch13", "ch14",
    "ch15", "ch16", "ch17", "ch18",
];

#[cfg_attr(feature = "solutions", path = "../solutions/ch01.rs")]
pub mod ch01;
#[cfg_attr(feature = "solutions", path = "../solutions/ch02.rs")]
pub mod ch02;
#[cfg_attr(feature = "solutions", path = "../solutions/ch03.rs")]
pub mod ch03;
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
#[cfg_attr(feature = "solutions", path = "../solutions/ch09.rs")]
pub mod ch09;
#[cfg_attr(feature = "solutions", path = "../solutions/ch10.rs")]
pub mod ch10;
#[cfg_attr(feature = "solutions", path = "../solutions/ch11.rs")]
pub mod ch11;
#[cfg_attr(feature = "solutions", path = "../solutions/ch12.rs")]
pub mod ch12;
#[cfg_attr(feature = "solutions", path = "../solutions/ch13.rs")]
pub mod ch13;
#[cfg_attr(feature = "solutions", path = "../solutions/ch14.rs")]
pub mod ch14;
#[cfg_attr(feature = "solutions", path = "../solutions/ch15.rs")]
pub mod ch15;
#[cfg_attr(feature = "solutions", path = "../solutions/ch16.rs")]
pub mod ch16;
#[cfg_attr(feature = "solutions", path = "../solutions/ch17.rs")]
pub mod ch17;
#[cfg_attr(feature = "solutions", path = "../solutions/ch18.rs")]
pub mod ch18;
