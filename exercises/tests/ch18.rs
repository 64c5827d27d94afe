//! Grader of the exercises of "One mechanism, every formulation" (`src/ch18.rs`):
//! `cargo test -p exercises --test ch18`.

use exercises::ch18;
use exercises::grade::{close, ensure, run, Check, Exercise, Rng};
use mbd::loops::{loop_constraints, LoopClosure, NumericalClosure};
use mbd::model::mechanisms;
use std::f64::consts::PI;

fn wrap(a: f64) -> f64 {
    (a + PI).rem_euclid(2.0 * PI) - PI
}

fn closed_form_with(rng: &mut Rng, answer: fn(f64) -> [f64; 3]) -> Check {
    // once round the crank in small steps, so that Newton's gamma stays on its branch
    let m = mechanisms::four_bar();
    let closure = NumericalClosure::new(&m, &[0], m.qpos0.as_slice()).map_err(|e| format!("grader: {e}"))?;
    let offset = rng.uniform(0.0, 2.0 * PI / 72.0);
    for k in 0..=72 {
        let theta1 = offset + 2.0 * PI * k as f64 / 72.0;
        let q_ref = closure.gamma(&[theta1]).map_err(|e| format!("grader: {e}"))?;
        let q = answer(theta1);
        ensure(q.iter().all(|v| v.is_finite()), "q must be finite")?;
        let err = loop_constraints(&m, &q, &[0.0; 3], None)
            .map_err(|e| format!("grader: {e}"))?
            .err_norm();
        ensure(err < 1e-10, "q does not close the loop: check where C is placed")?;
        for i in 0..3 {
            ensure(
                wrap(q[i] - q_ref[i]).abs() < 1e-10,
                format_args!("joint {} is off the branch of q = 0 (the other intersection?)", i + 1),
            )?;
        }
    }
    Ok(())
}

fn closed_form(rng: &mut Rng) -> Check {
    closed_form_with(rng, ch18::exercise_1)
}

fn richardson_with(rng: &mut Rng, answer: fn(f64, f64, f64) -> f64) -> Check {
    for _ in 0..20 {
        let (x, c, p, h) = (
            rng.uniform(-5.0, 5.0),
            rng.uniform(-2.0, 2.0),
            rng.uniform(1.0, 4.0).round(),
            0.1_f64,
        );
        let (x_h, x_h2) = (x + c * h.powf(p), x + c * (h / 2.0).powf(p));
        close(
            answer(x_h, x_h2, p),
            x,
            1e-12 * (1.0 + x.abs()),
            "a pure h^p error should be removed exactly",
        )?;
    }
    Ok(())
}

fn richardson(rng: &mut Rng) -> Check {
    richardson_with(rng, ch18::exercise_2)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch18",
        "One mechanism, every formulation",
        18,
        &[
            Exercise {
                number: 1,
                title: "The four-bar's loop-closure function in closed form",
                hint: "C lies on both circles |C - B| = |(0.3, 0.15)| and |C - D| = |(0.05, -0.3)|; a link's absolute angle is atan2 of its body vector minus atan2 of its world vector",
                check: closed_form,
            },
            Exercise {
                number: 2,
                title: "Richardson extrapolation",
                hint: "x_h - x_h2 = c h^p (1 - 2^-p)",
                check: richardson,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them, naming what is
/// wrong (run by `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_naming;

    #[test]
    fn the_other_intersection_fails() {
        assert!(fails_naming(0..3, "off the branch", |rng| closed_form_with(
            rng,
            |theta1| {
                let rot = |a: f64, (x, z): (f64, f64)| (x * a.cos() + z * a.sin(), -x * a.sin() + z * a.cos());
                let turn = |u: (f64, f64), v: (f64, f64)| u.1.atan2(u.0) - v.1.atan2(v.0);
                let (u, w): ((f64, f64), (f64, f64)) = ((0.3, 0.15), (0.05, -0.3));
                let (lc, lr) = ((u.0 * u.0 + u.1 * u.1).sqrt(), (w.0 * w.0 + w.1 * w.1).sqrt());
                let b = rot(theta1, (0.05, 0.15));
                let d = (0.4, 0.0);
                let bd = (d.0 - b.0, d.1 - b.1);
                let l = (bd.0 * bd.0 + bd.1 * bd.1).sqrt();
                let a = (lc * lc - lr * lr + l * l) / (2.0 * l);
                let hgt = (lc * lc - a * a).max(0.0).sqrt();
                let (ex, ez) = (bd.0 / l, bd.1 / l);
                // the intersection on the right of B -> D, where the linkage does not start
                let c = (b.0 + a * ex + hgt * ez, b.1 + a * ez - hgt * ex);
                let phi2 = turn(u, (c.0 - b.0, c.1 - b.1));
                let phi3 = turn(w, (d.0 - c.0, d.1 - c.1));
                [theta1, phi2 - theta1, phi3 - phi2]
            }
        )));
    }

    #[test]
    fn dividing_by_two_to_the_p_fails() {
        assert!(fails_naming(0..3, "h^p error", |rng| richardson_with(
            rng,
            |x_h, x_h2, p| {
                x_h2 + (x_h2 - x_h) / 2f64.powf(p) // should be 2^p - 1
            }
        )));
    }
}
