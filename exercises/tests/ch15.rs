//! Grader of the exercises of "Integrators and the simulation loop" (`src/ch15.rs`):
//! `cargo test -p exercises --test ch15`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).

use exercises::ch15;
use exercises::grade::{close, close_all, ensure, run, Check, Exercise, Rng};
use mbd::dynamics::{bias_forces, crba, gravcomp_into, set_dampratio, tendon_kinematics, transmission, PassiveScratch};
use mbd::model::{canned, Integrator, Model};
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

/// A MuJoCo model whose bodies split into several Featherstone bodies: a free base, a body with
/// a hinge and a slide, a ball joint.
const GRAVCOMP_XML: &str = r#"<mujoco model="free base with arms"><compiler angle="radian"/><worldbody>
  <body name="base" pos="0 0 1"><freejoint/><geom type="box" size=".2 .1 .05" mass="3"/>
    <body name="arm" pos=".2 0 0"><joint type="hinge" axis="0 1 0"/><joint type="slide" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 .4 .05 0" size=".03" mass="1"/>
      <body name="bob" pos=".4 0 0"><joint type="ball"/><geom type="capsule" fromto="0 0 0 .05 0 -.3" size=".02" mass=".4"/></body>
    </body>
    <body name="leg" pos="-.2 0 0" euler=".3 0 .2"><joint type="hinge" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 0 .1 -.35" size=".03" mass=".8"/>
    </body>
  </body></worldbody></mujoco>"#;

fn random_q(rng: &mut Rng, model: &Model) -> Vec<f64> {
    let mut q = model.qpos0.as_slice().to_vec();
    let v = rng.vec(model.nv, 1.5);
    model.integrate(&mut q, &v, 1.0).expect("valid");
    q
}

/// The kinds of `gravcomp` the check gives the bodies, in turn from a random start (named in
/// its messages): none, whole, a fraction, more than the weight.
fn random_gravcomp(rng: &mut Rng, model: &mut Model) {
    let start = rng.int(0, 3);
    model.body_gravcomp[0] = 0.0;
    for i in 1..=model.nb {
        model.body_gravcomp[i] = match (i + start) % 4 {
            0 => 0.0,
            1 => 1.0,
            2 => rng.uniform(0.1, 0.9),
            _ => rng.uniform(1.2, 3.0),
        };
    }
}

fn gravcomp_with(rng: &mut Rng, f: fn(&Model, &[f64]) -> Vec<f64>) -> Check {
    let mjcf = mbd::mjcf::load_str(GRAVCOMP_XML)
        .map_err(|e| format!("grader: {e}"))?
        .model;
    for mut model in [
        canned::chain(6, true),
        canned::binary_tree(3),
        canned::floating_base_ball_arms(),
        mjcf,
    ] {
        for s in 0..3 {
            random_gravcomp(rng, &mut model);
            // MuJoCo's gravity first, then a tilted one
            if s > 0 {
                model.opt.gravity = rng.unit3() * rng.uniform(3.0, 15.0);
            }
            let q = random_q(rng, &model);
            let mut scratch = PassiveScratch::default();
            gravcomp_into(&model, &q, &mut scratch).map_err(|e| format!("grader: gravcomp_into: {e}"))?;
            let want = &scratch.gravcomp;
            let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
            close_all(
                &f(&model, &q),
                want,
                1e-10 * scale,
                format_args!(
                    "model '{}', sample {s} (gravcomp 0, 1, between and above 1): qfrc_gravcomp against gravcomp_into",
                    model.name
                ),
            )?;
        }
    }
    Ok(())
}

fn gravcomp_check(rng: &mut Rng) -> Check {
    gravcomp_with(rng, ch15::exercise_5)
}

/// What the three position servos of [`dampratio_model`] drive (named in the messages).
const SERVOS: [&str; 3] = ["a hinge", "a slide", "a fixed tendon"];

/// A random arm (hinge, slide, hinge, off `qpos0 = 0` through `ref`, with armature) with a fixed
/// tendon over its hinges and three position servos given a damping ratio, on a hinge, the slide
/// and the tendon, each with a random gear, `kp` and `dampratio`: as the MJCF reader leaves it,
/// the ratios not yet turned into damping.
fn dampratio_model(rng: &mut Rng) -> std::result::Result<Model, String> {
    let mut u = |lo: f64, hi: f64| rng.uniform(lo, hi);
    let (l1, l3) = (u(0.2, 0.6), u(0.2, 0.5));
    let (m1, m2, m3) = (u(0.5, 2.0), u(0.2, 1.0), u(0.2, 1.0));
    let (r1, r2, r3) = (u(-1.0, 1.0), u(-0.1, 0.1), u(-1.5, 1.5));
    let (a1, a3) = (u(0.0, 0.1), u(0.0, 0.05));
    let axis3 = [u(-1.0, 1.0), u(0.5, 1.0), u(-1.0, 1.0)];
    let (c1, c3) = (u(0.5, 1.5), u(-1.5, 1.5));
    let hinge = if u(0.0, 1.0) < 0.5 { "h1" } else { "h3" };
    let mut servo = |target: &str| {
        let gear = u(0.3, 3.0) * if u(0.0, 1.0) < 0.5 { 1.0 } else { -1.0 };
        format!(
            r#"<position {target} gear="{gear:?}" kp="{:?}" dampratio="{:?}"/>"#,
            u(1.0, 200.0),
            u(0.2, 2.0)
        )
    };
    let actuators = [
        servo(&format!(r#"joint="{hinge}""#)),
        servo(r#"joint="s2""#),
        servo(r#"tendon="t""#),
    ]
    .join("");
    let xml = format!(
        r#"<mujoco><compiler angle="radian"/><worldbody>
        <body name="b1" pos="0 0 1"><joint name="h1" axis="0 1 0" ref="{r1:?}" armature="{a1:?}"/>
          <geom type="capsule" fromto="0 0 0 {l1:?} 0 0" size=".04" mass="{m1:?}"/>
          <body name="b2" pos="{l1:?} 0 0"><joint name="s2" type="slide" axis="1 0 .3" ref="{r2:?}"/>
            <geom type="box" size=".05 .04 .03" mass="{m2:?}"/>
            <body name="b3" pos=".05 0 0"><joint name="h3" axis="{:?} {:?} {:?}" ref="{r3:?}" armature="{a3:?}"/>
              <geom type="capsule" fromto="0 0 0 {l3:?} .05 -.1" size=".03" mass="{m3:?}"/>
            </body></body></body></worldbody>
        <tendon><fixed name="t"><joint joint="h1" coef="{c1:?}"/><joint joint="h3" coef="{c3:?}"/></fixed></tendon>
        <actuator>{actuators}</actuator></mujoco>"#,
        axis3[0], axis3[1], axis3[2]
    );
    Ok(mbd::mjcf::load_str(&xml).map_err(|e| format!("grader: {e}"))?.model)
}

fn dampratio_with(rng: &mut Rng, f: fn(&Model, usize, f64, f64) -> f64) -> Check {
    for s in 0..6 {
        let model = dampratio_model(rng)?;
        let mut compiled = model.clone();
        set_dampratio(&mut compiled).map_err(|e| format!("grader: {e}"))?;
        for (k, what) in SERVOS.iter().enumerate() {
            let a = &model.actuators[k];
            let (kp, zeta) = (a.gainprm[0], a.biasprm[2]);
            ensure(
                a.is_position_servo() && zeta > 0.0,
                "grader: the servo was not read as a damping ratio",
            )?;
            let want = -compiled.actuators[k].biasprm[2];
            close(
                f(&model, k, kp, zeta),
                want,
                1e-10 * want.abs(),
                format_args!("model {s}, actuator {k} (a position servo on {what}): kv against set_dampratio's"),
            )?;
        }
    }
    Ok(())
}

fn dampratio_check(rng: &mut Rng) -> Check {
    dampratio_with(rng, ch15::exercise_6)
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
            Exercise {
                number: 5,
                title: "Gravity compensation from RNEA",
                hint: "scale each body's spatial inertia (m, h and ibar) by its gravcomp in a copy of the model, then take rnea(q, 0, 0) of the copy",
                check: gravcomp_check,
            },
            Exercise {
                number: 6,
                title: "A damping ratio's damping",
                hint: "at qpos0: J the actuator's row of transmission's moment arms, m = 1 / (J M^-1 J^T) with M from crba, kv = 2 zeta sqrt(kp m)",
                check: dampratio_check,
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
    use exercises::grade::{fails_naming, fails_on};
    use mbd::dynamics::rnea;

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

    #[test]
    fn forgetting_the_gravcomp_fails() {
        // the whole gravity term, as if every body had gravcomp 1
        assert!(fails_naming(0..3, "qfrc_gravcomp", |rng| gravcomp_with(
            rng,
            |model, q| {
                let zero = vec![0.0; model.nv];
                rnea(model, q, &zero, &zero, None).unwrap().as_slice().to_vec()
            }
        )));
    }

    #[test]
    fn scaling_the_torques_instead_of_the_inertias_fails() {
        // each joint's torque times its own body's gravcomp: the descendants' shares scaled wrong
        assert!(fails_naming(0..3, "qfrc_gravcomp", |rng| gravcomp_with(
            rng,
            |model, q| {
                let zero = vec![0.0; model.nv];
                let tau = rnea(model, q, &zero, &zero, None).unwrap();
                (0..model.nv)
                    .map(|k| tau[k] * model.body_gravcomp[model.dof_body[k]])
                    .collect()
            }
        )));
    }

    /// `J M^-1 J^T` of actuator `k` at `q`, or with `diagonal` the slip `J diag(M)^-1 J^T`.
    fn reflected(model: &Model, k: usize, q: &[f64], diagonal: bool) -> f64 {
        let ten = tendon_kinematics(model, q).unwrap();
        let nu = model.actuators.len();
        let (mut l, mut moment) = (vec![0.0; nu], DMatrix::zeros(nu, model.nv));
        transmission(model, q, &ten, &mut l, &mut moment).unwrap();
        let m = crba(model, q).unwrap();
        let j = moment.row(k).transpose();
        if diagonal {
            (0..model.nv).map(|i| j[i] * j[i] / m[(i, i)]).sum()
        } else {
            j.dot(&(m.try_inverse().unwrap() * &j))
        }
    }

    #[test]
    fn the_diagonal_of_m_fails() {
        assert!(fails_naming(0..3, "kv", |rng| dampratio_with(
            rng,
            |model, k, kp, zeta| {
                let q0 = model.qpos0.as_slice().to_vec();
                2.0 * zeta * (kp / reflected(model, k, &q0, true)).sqrt()
            }
        )));
    }

    #[test]
    fn the_inertia_at_zero_instead_of_qpos0_fails() {
        assert!(fails_naming(0..3, "kv", |rng| dampratio_with(
            rng,
            |model, k, kp, zeta| {
                let zero = vec![0.0; model.nq];
                2.0 * zeta * (kp / reflected(model, k, &zero, false)).sqrt()
            }
        )));
    }
}
