//! Exercises of the chapter "One mechanism, every formulation" (`book/src/comparison.md`). Grade
//! them with `cargo test -p exercises --test ch18`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

/// Exercise 1, the four-bar's loop-closure function in closed form: for the planar four-bar
/// `mechanisms::four_bar()` at crank angle `theta1`, return `q = (theta1, theta2, theta3)` that
/// closes the loop on the assembly branch of `q = 0`. The hinges turn about y; a frame turned by
/// `a` about y maps `(x, z)` to `(x cos a + z sin a, -x sin a + z cos a)`. The crank pin B is
/// `(0.05, 0.15)` (x, z) in the crank's frame, the rocker's pivot C is `(0.3, 0.15)` in the
/// coupler's frame, and the rocker's tip `(0.05, -0.3)` in the rocker's frame meets the ground
/// pivot D = (0.4, 0). Angles may differ from the grader's by whole turns.
pub fn exercise_1(theta1: f64) -> [f64; 3] {
    todo!()
}

/// Exercise 2, Richardson extrapolation: a method of order `p` gave `x_h` with step `h` and
/// `x_h2` with step `h/2`; return the extrapolated value that cancels the `h^p` term.
pub fn exercise_2(x_h: f64, x_h2: f64, p: f64) -> f64 {
    todo!()
}
