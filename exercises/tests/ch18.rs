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
