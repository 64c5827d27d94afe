//! Exercises of the chapter "One mechanism, every formulation" (book/src/comparison.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --release --test exercises_comparison`.
#![cfg(feature = "plot")]

use mbd::figures::comparison::{crank_trajectory, reference, Formulation};
use mbd::loops::{LoopClosure, Method, NumericalClosure};
use mbd::model::mechanisms;
use std::f64::consts::PI;

/// Exercise 1: the planar four-bar's loop-closure function `q = gamma(theta1)` in closed form.
/// The hinges turn about y; a rotation by `a` about y maps `(x, z)` to
/// `(x cos a + z sin a, -x sin a + z cos a)`. The crank pin B is `(0.05, 0, 0.15)` in the
/// crank's frame, the rocker's pivot C is `(0.3, 0, 0.15)` in the coupler's frame, and the
/// rocker's tip `(0.05, 0, -0.3)` in the rocker's frame meets the ground pivot D = (0.4, 0, 0).
fn exercise_1_answer(theta1: f64) -> [f64; 3] {
    // a point (x, z) of a frame turned by a about y, and the turn that carries u onto v
    let rot = |a: f64, (x, z): (f64, f64)| (x * a.cos() + z * a.sin(), -x * a.sin() + z * a.cos());
    let turn = |u: (f64, f64), v: (f64, f64)| u.1.atan2(u.0) - v.1.atan2(v.0);
    let (u, w): ((f64, f64), (f64, f64)) = ((0.3, 0.15), (0.05, -0.3));
    let (lc, lr) = ((u.0 * u.0 + u.1 * u.1).sqrt(), (w.0 * w.0 + w.1 * w.1).sqrt());
    let b = rot(theta1, (0.05, 0.15));
    let d = (0.4, 0.0);
    // C on both circles: |C - B| = lc, |C - D| = lr
    let bd = (d.0 - b.0, d.1 - b.1);
    let l = (bd.0 * bd.0 + bd.1 * bd.1).sqrt();
    let a = (lc * lc - lr * lr + l * l) / (2.0 * l);
    let hgt = (lc * lc - a * a).max(0.0).sqrt();
    let (ex, ez) = (bd.0 / l, bd.1 / l);
    // the side of BD where the linkage starts: cross(BD, BC) > 0 at q = 0
    let (nx, nz) = (-ez, ex);
    let c = (b.0 + a * ex + hgt * nx, b.1 + a * ez + hgt * nz);
    let phi2 = turn(u, (c.0 - b.0, c.1 - b.1));
    let phi3 = turn(w, (d.0 - c.0, d.1 - c.1));
    [theta1, phi2 - theta1, phi3 - phi2]
}

fn wrap(a: f64) -> f64 {
    (a + PI).rem_euclid(2.0 * PI) - PI
}

#[test]
fn exercise_1_closed_form_loop_closure() {
    let m = mechanisms::four_bar();
    let closure = NumericalClosure::new(&m, &[0], m.qpos0.as_slice()).unwrap();
    let mut worst: f64 = 0.0;
    for k in 0..=72 {
        let theta1 = 2.0 * PI * k as f64 / 72.0;
        let q_ref = closure.gamma(&[theta1]).unwrap();
        let q = exercise_1_answer(theta1);
        for i in 0..3 {
            worst = worst.max(wrap(q[i] - q_ref[i]).abs());
        }
    }
    assert!(
        worst < 1e-10,
        "closed-form gamma differs from Newton's by {worst:.1e} rad"
    );
}

/// Exercise 2: Richardson extrapolation of a method of order `p` from `x_h` and `x_{h/2}`.
fn exercise_2_answer(x_h: f64, x_h2: f64, p: f64) -> f64 {
    x_h2 + (x_h2 - x_h) / (2f64.powf(p) - 1.0)
}

#[test]
fn exercise_2_richardson_extrapolation() {
    let r = reference().unwrap();
    let f = Formulation::Tree(Method::Kkt);
    let end = |h: f64| crank_trajectory(f, h).unwrap().crank.last().copied().unwrap();
    let (x2, x1) = (end(2e-3), end(1e-3));
    let x_ref = *r.crank.last().unwrap();
    let x = exercise_2_answer(x2, x1, 4.0);
    assert!(
        (x - x_ref).abs() < 0.5 * (x1 - x_ref).abs(),
        "the extrapolation is not closer to the reference than the finer run"
    );
}
