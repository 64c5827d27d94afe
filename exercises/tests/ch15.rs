//! Grader of the exercises of "Integrators and the simulation loop" (`src/ch15.rs`):
//! `cargo test -p exercises --test ch15`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).

use exercises::ch15;
use exercises::grade::{close, run, Check, Exercise, Rng};
use mbd::dynamics::{bias_forces, crba, tendon_kinematics, transmission};
use mbd::model::{canned, Integrator};
use mbd::mujoco::derivatives::lqr_gain;
use mbd::mujoco::integrator::{Simulator, State};
use mbd::spatial::Vec3;
use nalgebra::DMatrix;

type Damping = fn(f64, f64, f64, f64, f64, f64, bool) -> f64;

fn damping_with(rng: &mut Rng, f: Damping) -> Check {
    for s in 0..10 {
        let mut model = canned::chain(1, false);
        let b = 10f64.powf(rng.uniform(-1.0, 2.5));
        model.joints[1].damping = b;
        for implicit in [true, false] {
            let mut m = model.clone();
            if !implicit {
                m.opt.flags.push(("eulerdamp".into(), false));
            }
            let mut state = State::reference(&m);
            state.qpos = vec![rng.uniform(-3.0, 3.0)];
            state.qvel = vec![rng.uniform(-3.0, 3.0)];
            state.qfrc_applied = vec![rng.uniform(-2.0, 2.0)];
            let inertia = crba(&m, &state.qpos).map_err(|e| format!("grader: {e}"))?[(0, 0)];
            let c = bias_forces(&m, &state.qpos, &state.qvel).map_err(|e| format!("grader: {e}"))?[0];
            let h = m.opt.timestep;
            let ours = f(inertia, b, c, state.qfrc_applied[0], state.qvel[0], h, implicit);
            let mut sim = Simulator::new(&m, state, Integrator::Euler).map_err(|e| format!("grader: {e}"))?;
            sim.step().map_err(|e| format!("grader: {e}"))?;
            let want = sim.state.qvel[0];
            let how = if implicit {
                "implicit damping"
            } else {
                "eulerdamp disabled"
            };
            close(
                ours,
                want,
                1e-12 * (1.0 + want.abs()),
                format_args!("sample {s} (damping {b:.3}, {how}): the new velocity against the simulator's"),
            )?;
        }
    }
    Ok(())
}

fn damping_check(rng: &mut Rng) -> Check {
    damping_with(rng, ch15::exercise_1)
}

fn filter_with(rng: &mut Rng, f: fn(f64, f64, f64, f64, usize, bool) -> f64) -> Check {
    for s in 0..6 {
        let h = rng.uniform(0.002, 0.02);
        // from a third of the step (Euler overshoots, and grows below h / 2) to many steps
        let tau = h * 10f64.powf(rng.uniform(-0.45, 2.0));
        let mut n = rng.int(5, 50);
        let growth = (1.0 - h / tau).abs();
        if growth > 1.0 {
            // Euler's filter grows by |1 - h/tau| per step: stay below a millionfold
            n = n.min((1e6f64.ln() / growth.ln()) as usize).max(1);
        }
        let (w0, u) = (rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0));
        for (dyntype, exact) in [("filterexact", true), ("filter", false)] {
            let xml = format!(
                r#"<mujoco><option timestep="{h:?}" gravity="0 0 0"/><worldbody><body><joint name="x" type="slide"/>
                <geom size="0.1" mass="1" contype="0" conaffinity="0"/></body></worldbody>
                <actuator><general joint="x" dyntype="{dyntype}" dynprm="{tau:?}"/></actuator></mujoco>"#
            );
            let model = mbd::mjcf::load_str(&xml).map_err(|e| format!("grader: {e}"))?.model;
            let mut state = State::reference(&model);
            state.ctrl = vec![u];
            state.act = vec![w0];
            let mut sim = Simulator::new(&model, state, Integrator::Euler).map_err(|e| format!("grader: {e}"))?;
            for _ in 0..n {
                sim.step().map_err(|e| format!("grader: {e}"))?;
            }
            let want = sim.state.act[0];
            close(
                f(w0, u, tau, h, n, exact),
                want,
                1e-9 * want.abs().max(1.0),
                format_args!(
                    "sample {s} ({dyntype}, tau = {:.2} h, {n} steps): the activation against the simulator's",
                    tau / h
                ),
            )?;
        }
    }
    Ok(())
}

fn filter_check(rng: &mut Rng) -> Check {
    filter_with(rng, ch15::exercise_2)
}

fn crank_with(rng: &mut Rng, f: fn(Vec3, Vec3, f64) -> f64) -> Check {
    for s in 0..6 {
        let crank = rng.uniform(0.1, 0.3);
        let rod = rng.uniform(0.3, 0.9);
        let slider = Vec3::new(-rng.uniform(0.4, 0.7), 0.0, rng.uniform(-0.15, 0.15));
        // the slider's z axis turned about y by beta: (sin beta, 0, cos beta)
        let beta = std::f64::consts::FRAC_PI_2 + rng.uniform(-0.5, 0.5);
        let xml = format!(
            r#"<mujoco><compiler angle="radian"/><worldbody>
            <body><joint name="crank" type="hinge" axis="0 1 0"/><geom size="0.05" mass="1" contype="0" conaffinity="0"/>
            <site name="pin" pos="{crank:?} 0 0"/></body>
            <site name="slider" pos="{:?} 0 {:?}" quat="{:?} 0 {:?} 0"/></worldbody>
            <actuator><general cranksite="pin" slidersite="slider" cranklength="{rod:?}"/></actuator></mujoco>"#,
            slider.x,
            slider.z,
            (beta / 2.0).cos(),
            (beta / 2.0).sin()
        );
        let model = mbd::mjcf::load_str(&xml).map_err(|e| format!("grader: {e}"))?.model;
        let axis = Vec3::new(beta.sin(), 0.0, beta.cos());
        for k in 0..8 {
            let angle = rng.uniform(-std::f64::consts::PI, std::f64::consts::PI);
            let q = vec![angle];
            let ten = tendon_kinematics(&model, &q).map_err(|e| format!("grader: {e}"))?;
            let (mut l, mut m) = (vec![0.0], DMatrix::zeros(1, 1));
            transmission(&model, &q, &ten, &mut l, &mut m).map_err(|e| format!("grader: {e}"))?;
            // the pin turns about y through the origin: (r cos, 0, -r sin)
            let pin = Vec3::new(crank * angle.cos(), 0.0, -crank * angle.sin());
            close(
                f(axis, pin - slider, rod),
                l[0],
                1e-12,
                format_args!("model {s}, angle {k}: the length against the transmission's"),
            )?;
        }
    }
    Ok(())
}

fn crank_check(rng: &mut Rng) -> Check {
    crank_with(rng, ch15::exercise_3)
}

fn lqr_with(rng: &mut Rng, f: fn(f64, f64, f64, f64) -> f64) -> Check {
    for s in 0..8 {
        let a = rng.uniform(0.5, 1.5);
        let b = rng.uniform(0.3, 2.0) * if s % 2 == 0 { 1.0 } else { -1.0 };
        let (q, r) = (10f64.powf(rng.uniform(-1.0, 1.0)), 10f64.powf(rng.uniform(-1.0, 1.0)));
        let m = |x: f64| DMatrix::from_element(1, 1, x);
        let k = lqr_gain(&m(a), &m(b), &m(q), &m(r), 1e-15, 100_000).map_err(|e| format!("grader: {e}"))?[(0, 0)];
        close(
            f(a, b, q, r),
            k,
            1e-10 * (1.0 + k.abs()),
            format_args!("system {s}: K against the iterated Riccati solution"),
        )?;
    }
    Ok(())
}

fn lqr_check(rng: &mut Rng) -> Check {
    lqr_with(rng, ch15::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch15",
        "Integrators and the simulation loop",
        15,
        &[
            Exercise {
                number: 1,
                title: "Implicit damping by hand",
                hint: "implicit: (m + h b) a = f - b v - c; explicit: m a = f - b v - c; then v + h a",
                check: damping_check,
            },
            Exercise {
                number: 2,
                title: "The exact filter",
                hint: "the distance to u shrinks by a fixed factor per step: exp(-h/tau) exactly, 1 - h/tau by Euler",
                check: filter_check,
            },
            Exercise {
                number: 3,
                title: "Slider-crank length",
                hint: "solve |d - l axis| = rod for l and take the smaller root; with no real root, a.d",
                check: crank_check,
            },
            Exercise {
                number: 4,
                title: "Scalar LQR in closed form",
                hint: "multiply P = q + a^2 P - (a b P)^2 / (r + b^2 P) by (r + b^2 P): a quadratic in P; take its positive root",
                check: lqr_check,
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
    fn explicit_damping_in_both_cases_fails() {
        assert!(fails_on(0..3, |rng| damping_with(rng, |m, b, c, f, v, h, _| v + h
            * (f - b * v - c)
            / m)));
    }

    #[test]
    fn the_euler_factor_for_the_exact_filter_fails() {
        assert!(fails_on(0..3, |rng| filter_with(rng, |w0, u, tau, h, n, _| {
            u + (w0 - u) * (1.0 - h / tau).powi(n as i32)
        })));
    }

    #[test]
    fn the_far_root_fails() {
        assert!(fails_on(0..3, |rng| crank_with(rng, |a, d, rod| {
            let ad = a.dot(&d);
            ad + (ad * ad + rod * rod - d.dot(&d)).max(0.0).sqrt()
        })));
    }

    #[test]
    fn the_negative_root_fails() {
        assert!(fails_on(0..3, |rng| lqr_with(rng, |a, b, q, r| {
            let beta = r * (1.0 - a * a) - q * b * b;
            let p = (-beta - (beta * beta + 4.0 * b * b * q * r).sqrt()) / (2.0 * b * b);
            a * b * p / (r + b * b * p)
        })));
    }
}
