//! Grader of the exercises of "Soft constraints" (`src/ch12.rs`):
//! `cargo test -p exercises --test ch12`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).

use exercises::ch12;
use exercises::grade::{close, run, Check, Exercise, Rng};
use mbd::model::{Joint, JointType, ModelBuilder, SolverParams};
use mbd::mujoco::constraint::{impedance, make_constraint, Invweight};
use mbd::mujoco::forward_smooth;
use mbd::spatial::{Mat3, SpatialInertia, Vec3, Xform};

fn solimp(rng: &mut Rng) -> [f64; 5] {
    let d0 = rng.uniform(0.1, 0.95);
    [
        d0,
        rng.uniform(0.1, 0.999),
        rng.uniform(0.0005, 0.05),
        rng.uniform(0.05, 0.95),
        rng.uniform(1.0, 5.0),
    ]
}

fn impedance_with(rng: &mut Rng, f: fn(&[f64; 5], f64, f64) -> f64) -> Check {
    for s in 0..40 {
        let mut si = solimp(rng);
        match s % 8 {
            0 => si[1] = si[0], // d0 = dwidth: constant
            1 => si[2] = 1e-16, // no width: constant
            2 => si[4] = 1.0,   // linear
            _ => {}
        }
        let margin = if s % 2 == 0 { 0.0 } else { rng.uniform(0.0, 0.01) };
        for k in 0..25 {
            // on both sides of the margin, up to beyond the width
            let pos = margin + rng.uniform(-1.3, 1.3) * si[2].max(1e-3);
            let (d, _) = impedance(&si, pos, margin);
            close(
                f(&si, pos, margin),
                d,
                1e-14,
                format_args!("solimp {s}, position {k}: d against the library's"),
            )?;
        }
    }
    Ok(())
}

fn impedance_check(rng: &mut Rng) -> Check {
    impedance_with(rng, ch12::exercise_1)
}

fn kb_with(rng: &mut Rng, f: fn([f64; 2], f64) -> (f64, f64)) -> Check {
    for s in 0..20 {
        let solref = if s % 3 == 0 {
            [-rng.uniform(100.0, 1e4), -rng.uniform(1.0, 200.0)]
        } else {
            [rng.uniform(0.005, 0.1), rng.uniform(0.3, 2.0)]
        };
        let solimp = solimp(rng);
        let mut b = ModelBuilder::new("slider");
        let mut j = Joint::new(JointType::Prismatic { axis: rng.unit3() });
        j.limited = true;
        j.range = [0.0, 1.0];
        j.limit_params = SolverParams { solref, solimp };
        let inertia = SpatialInertia::from_mass_com_inertia(rng.uniform(0.5, 3.0), Vec3::zeros(), Mat3::identity());
        b.add_body("s", 0, j, Xform::identity(), inertia);
        let model = b.build().map_err(|e| format!("grader: {e}"))?;
        let inv = Invweight::new(&model).map_err(|e| format!("grader: {e}"))?;
        let q = [-rng.uniform(0.001, 0.1)]; // below the range: one limit row
        let d = forward_smooth(&model, &q, &[0.0]).map_err(|e| format!("grader: {e}"))?;
        let efc = make_constraint(&model, &d, &inv, &q, &[0.0], Vec::new()).map_err(|e| format!("grader: {e}"))?;
        let [k, bb, _, _] = efc.kbip[0];
        let (ko, bo) = f(solref, solimp[1]);
        let kind = if solref[0] > 0.0 { "standard" } else { "direct" };
        close(ko, k, 1e-12 * k.abs(), format_args!("sample {s} ({kind} solref): K"))?;
        close(bo, bb, 1e-12 * bb.abs(), format_args!("sample {s} ({kind} solref): B"))?;
    }
    Ok(())
}

fn kb_check(rng: &mut Rng) -> Check {
    kb_with(rng, ch12::exercise_2)
}

fn invweight_with(rng: &mut Rng, f: fn(f64, [f64; 3]) -> [f64; 2]) -> Check {
    for s in 0..10 {
        let m = rng.uniform(0.1, 10.0);
        // principal moments of a real body (each at most the sum of the other two), turned
        let (a, b) = (rng.uniform(0.01, 0.2), rng.uniform(0.01, 0.2));
        let moments = [a, b, rng.uniform((a - b).abs() + 1e-3, a + b)];
        let rot = rng.rotation();
        let inertia = rot * Mat3::from_diagonal(&Vec3::from(moments)) * rot.transpose();
        let mut builder = ModelBuilder::new("free body");
        let si = SpatialInertia::from_mass_com_inertia(m, Vec3::zeros(), inertia);
        builder.add_body("body", 0, Joint::new(JointType::Free), Xform::identity(), si);
        let model = builder.build().map_err(|e| format!("grader: {e}"))?;
        let inv = Invweight::new(&model).map_err(|e| format!("grader: {e}"))?;
        let ours = f(m, moments);
        for (k, what) in ["translational", "rotational"].iter().enumerate() {
            close(
                ours[k],
                inv.body[1][k],
                1e-12 * inv.body[1][k],
                format_args!("body {s}: the {what} weight against Invweight"),
            )?;
        }
    }
    Ok(())
}

fn invweight_check(rng: &mut Rng) -> Check {
    invweight_with(rng, ch12::exercise_3)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch12",
        "Soft constraints",
        12,
        &[
            Exercise {
                number: 1,
                title: "The impedance by hand",
                hint: "x = |pos - margin| / width; below the midpoint x^p / mid^(p-1), above it 1 - (1-x)^p / (1-mid)^(p-1); then d0 + y (dwidth - d0)",
                check: impedance_check,
            },
            Exercise {
                number: 2,
                title: "solref to K and B",
                hint: "standard: K = 1 / (dmax tc zeta)^2 and B = 2 / (dmax tc); direct: divide k by dmax^2 and b by dmax",
                check: kb_check,
            },
            Exercise {
                number: 3,
                title: "The inverse weight of a free body",
                hint: "the mean of the diagonal of each block of J M^-1 J^T: 1/m for the translation, the trace of I^-1 over 3 for the rotation",
                check: invweight_check,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them (run by
/// `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_on;

    #[test]
    fn the_midpoint_to_the_power_p_fails() {
        assert!(fails_on(0..3, |rng| impedance_with(rng, |si, pos, margin| {
            let [d0, dw, width, mid, p] = *si;
            if d0 == dw || width <= 1e-15 {
                return 0.5 * (d0 + dw);
            }
            let x = ((pos - margin).abs() / width).min(1.0);
            let y = if x <= mid {
                x.powf(p) / mid.powf(p) // should be p - 1
            } else {
                1.0 - (1.0 - x).powf(p) / (1.0 - mid).powf(p - 1.0)
            };
            d0 + y * (dw - d0)
        })));
    }

    #[test]
    fn damping_without_dmax_fails() {
        assert!(fails_on(0..3, |rng| kb_with(rng, |solref, dmax| {
            if solref[0] > 0.0 {
                (1.0 / (dmax * solref[0] * solref[1]).powi(2), 2.0 / solref[0])
            } else {
                (-solref[0] / (dmax * dmax), -solref[1])
            }
        })));
    }

    #[test]
    fn the_inverse_of_the_mean_moment_fails() {
        assert!(fails_on(0..3, |rng| invweight_with(rng, |m, i| [
            1.0 / m,
            3.0 / (i[0] + i[1] + i[2])
        ])));
    }
}
