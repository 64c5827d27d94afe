//! Grader of the exercises of "SPOOK: a variational stepper" (`src/ch16.rs`):
//! `cargo test -p exercises --test ch16`.

use exercises::ch16;
use exercises::grade::{close, ensure, run, Check, Exercise, Rng};
use mbd::integrate::Trajectory;
use mbd::spatial::Vec3;
use mbd::spook::{
    gamma, quat_step, run as spook_run, scenes, spook_parameters, violation_decay_factor, SpookSolver, StepSettings,
    Stepper, SIGNALS,
};

fn gamma_check_with(rng: &mut Rng, answer: fn([f64; 4]) -> [[f64; 3]; 4]) -> Check {
    for s in 0..8 {
        let rho = rng.quat();
        let ours = answer(rho);
        let lib = gamma(&rho);
        for i in 0..4 {
            for j in 0..3 {
                close(
                    ours[i][j],
                    lib[(i, j)],
                    1e-15,
                    format_args!("sample {s}: Gamma[{i}][{j}] against the library"),
                )?;
            }
        }
        // against a finite difference of the quaternion step
        let w = rng.vec3(2.0);
        let dt = 1e-6;
        let (p, m) = (quat_step(&rho, &w, dt), quat_step(&rho, &(-w), dt));
        for i in 0..4 {
            let fd = (p[i] - m[i]) / (2.0 * dt);
            let gw: f64 = (0..3).map(|j| ours[i][j] * w[j]).sum();
            close(
                gw,
                fd,
                1e-9,
                format_args!("sample {s}: (Gamma w)[{i}] against a finite difference of the step"),
            )?;
        }
        let tangent: f64 = (0..3)
            .map(|j| (0..4).map(|i| rho[i] * ours[i][j]).sum::<f64>().abs())
            .sum();
        ensure(tangent < 1e-15, format_args!("sample {s}: rho^T Gamma should vanish"))?;
    }
    Ok(())
}

fn gamma_check(rng: &mut Rng) -> Check {
    gamma_check_with(rng, ch16::exercise_1)
}

fn cannon_with(rng: &mut Rng, answer: fn(f64, f64, f64) -> (f64, f64, f64)) -> Check {
    let h = 1.0 / 60.0;
    let (k, d) = (10f64.powf(rng.uniform(4.0, 8.0)), rng.uniform(0.5, 5.0));
    let (a, b, eps) = answer(h, k, d);
    let (upsilon, sigma) = spook_parameters(h, 1.0 / k, d * h);
    close(eps, sigma, 1e-12 * sigma, "eps should be SPOOK's Sigma")?;
    close(1.0 - b, upsilon, 1e-15, "1 - b should be SPOOK's Upsilon")?;
    // the pendulum moving and off its constraint: the library's Schur right-hand side row by row
    let mut sys = scenes::pendulum(1.0 / k, d * h);
    sys.bodies[0].x = Vec3::new(0.9, 0.1, -0.5) + rng.vec3(0.1);
    sys.bodies[0].nu = rng.vec3(2.0);
    let mut st = Stepper::new(&sys, h, StepSettings::default()).expect("valid");
    st.assemble(&sys);
    let (s, rhs, v_free, _) = st.schur_system();
    let g = st.g_matrix();
    let gv = &g * &st.v;
    let g_dv = &g * (&v_free - &st.v);
    for (r, row) in st.rows.iter().enumerate() {
        close(
            -a * row.phi - b * gv[r] - g_dv[r],
            rhs[r],
            1e-12 * (1.0 + rhs[r].abs()),
            format_args!("row {r}: -a phi - b G v - h G M^-1 f against the library's right-hand side"),
        )?;
        ensure(
            s[(r, r)] > eps,
            format_args!("row {r}: the Schur diagonal should exceed eps"),
        )?;
    }
    Ok(())
}

fn cannon(rng: &mut Rng) -> Check {
    cannon_with(rng, ch16::exercise_2)
}

fn decay_with(rng: &mut Rng, answer: fn(f64, f64) -> f64) -> Check {
    let h = 0.01;
    for d in [0.0, 0.5, 1.0, 2.0, 3.0, 8.0, rng.uniform(0.1, 10.0)] {
        close(
            answer(h, d * h),
            violation_decay_factor(h, d * h),
            1e-7,
            format_args!("tau = {d:.2} h: against the library's decay factor"),
        )?;
    }
    // measured: the pendulum (no gravity) 5 cm off, d = 6; the late ratio of violations
    let d = 6.0;
    let mut sys = scenes::pendulum(1e-12, d * h);
    sys.gravity = Vec3::zeros();
    sys.bodies[0].x = Vec3::new(0.0, 0.0, -1.05);
    let settings = StepSettings {
        solver: SpookSolver::Direct,
        ..Default::default()
    };
    let mut st = Stepper::new(&sys, h, settings).expect("valid");
    let mut tr = Trajectory::new(&SIGNALS);
    spook_run(&mut sys, &mut st, 60, &mut tr).expect("valid");
    let v = tr.signal("violation").expect("recorded");
    close(
        answer(h, d * h),
        v[50] / v[49],
        0.01,
        "tau = 6 h: against the ratio of successive violations measured in a simulation",
    )
}

fn decay(rng: &mut Rng) -> Check {
    decay_with(rng, ch16::exercise_3)
}

fn soft_rod_with(rng: &mut Rng, answer: fn(f64, f64, f64) -> f64) -> Check {
    let (eps, h) = (10f64.powf(rng.uniform(-5.0, -4.0)), 1.0 / 60.0);
    let mut sys = scenes::pendulum(eps, 2.0 * h);
    sys.bodies[0].x = Vec3::new(0.0, 0.0, -1.0);
    let mut st = Stepper::new(&sys, h, StepSettings::default()).expect("valid");
    let mut tr = Trajectory::new(&SIGNALS);
    spook_run(&mut sys, &mut st, 120, &mut tr).expect("valid");
    let stretch = sys.bodies[0].x.norm() - 1.0;
    let g = -sys.gravity.z;
    let ours = answer(eps, 1.0, g);
    close(
        ours,
        stretch,
        1e-6 * ours.abs().max(1.0),
        "the stretch against the settled pendulum's",
    )
}

fn soft_rod(rng: &mut Rng) -> Check {
    soft_rod_with(rng, ch16::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch16",
        "SPOOK: a variational stepper",
        14,
        &[
            Exercise {
                number: 1,
                title: "Gamma by hand",
                hint: "[0; w] (x) [r0; r] = [-w.r; r0 w + w x r]; column j is the coefficient of w_j, times 1/2",
                check: gamma_check,
            },
            Exercise {
                number: 2,
                title: "The game engine's scalars",
                hint: "all three share the factor 1 / (1 + 4 d)",
                check: cannon,
            },
            Exercise {
                number: 3,
                title: "The return rate",
                hint: "with U = 1 / (1 + 4 tau / h) the stiff step maps [phi; w] by [[1 - 4U, U], [-4U, U]]; take the largest eigenvalue modulus",
                check: decay,
            },
            Exercise {
                number: 4,
                title: "A soft rod",
                hint: "at rest the row's equation is epsilon lambda + phi = 0 and the rod carries the weight",
                check: soft_rod,
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
    fn the_cross_product_the_wrong_way_round_fails() {
        // r x w in place of w x r in [0; w] (x) [r0; r]
        assert!(fails_naming(0..3, "Gamma[", |rng| gamma_check_with(rng, |rho| {
            let [r0, r1, r2, r3] = rho;
            [
                [-0.5 * r1, -0.5 * r2, -0.5 * r3],
                [0.5 * r0, -0.5 * r3, 0.5 * r2],
                [0.5 * r3, 0.5 * r0, -0.5 * r1],
                [-0.5 * r2, 0.5 * r1, 0.5 * r0],
            ]
        })));
    }

    #[test]
    fn eps_without_the_four_fails() {
        assert!(fails_naming(0..3, "Sigma", |rng| cannon_with(rng, |h, k, d| {
            let den = 1.0 + 4.0 * d;
            (4.0 / (h * den), 4.0 * d / den, 1.0 / (h * h * k * den)) // eps: 4 / (h^2 k (1 + 4 d))
        })));
    }

    #[test]
    fn upsilon_as_the_decay_factor_fails() {
        // Upsilon multiplies the violation in the step, but it is not the step's spectral radius
        assert!(fails_naming(0..3, "decay factor", |rng| decay_with(rng, |h, tau| 1.0
            / (1.0 + 4.0 * tau / h))));
    }

    #[test]
    fn stiffness_in_place_of_compliance_fails() {
        assert!(fails_naming(0..3, "stretch", |rng| soft_rod_with(
            rng,
            |epsilon, m, g| m * g / epsilon
        )));
    }
}
