//! Exercises of the chapter "Integrators and the simulation loop" (book/src/integrators.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_integrators`.

use mbd::dynamics::{bias_forces, crba, tendon_kinematics, transmission};
use mbd::model::{canned, Integrator};
use mbd::mujoco::derivatives::lqr_gain;
use mbd::mujoco::integrator::{Simulator, State};
use mbd::spatial::Vec3;
use nalgebra::DMatrix;

/// Exercise 1: the velocity after one Euler step of a one-dof system with inertia `m`, damping
/// `b`, bias force `c` and applied force `f` from velocity `v`: implicit damping solves
/// `(m + h b) a = f - b v - c`; the explicit update uses `a = (f - b v - c) / m`.
fn exercise_1_answer(m: f64, b: f64, c: f64, f: f64, v: f64, h: f64, implicit: bool) -> f64 {
    let force = f - b * v - c;
    let a = if implicit { force / (m + h * b) } else { force / m };
    v + h * a
}

#[test]
fn exercise_1_implicit_damping_by_hand() {
    let mut model = canned::chain(1, false);
    model.joints[1].damping = 40.0;
    for implicit in [true, false] {
        let mut m = model.clone();
        if !implicit {
            m.opt.flags.push(("eulerdamp".into(), false));
        }
        let mut state = State::reference(&m);
        state.qpos = vec![0.7];
        state.qvel = vec![1.5];
        state.qfrc_applied = vec![0.3];
        let inertia = crba(&m, &state.qpos).unwrap()[(0, 0)];
        let c = bias_forces(&m, &state.qpos, &state.qvel).unwrap()[0];
        let h = m.opt.timestep;
        let expected = exercise_1_answer(inertia, 40.0, c, 0.3, 1.5, h, implicit);
        let mut sim = Simulator::new(&m, state, Integrator::Euler).unwrap();
        sim.step().unwrap();
        assert!((sim.state.qvel[0] - expected).abs() < 1e-12, "implicit {implicit}");
    }
}

/// Exercise 2: the activation after `n` steps with the control held at `u`, from `w0`: the exact
/// filter multiplies the distance to `u` by `exp(-h / tau)` per step, the Euler filter by
/// `1 - h / tau`.
fn exercise_2_answer(w0: f64, u: f64, tau: f64, h: f64, n: usize, exact: bool) -> f64 {
    let factor = if exact { (-h / tau).exp() } else { 1.0 - h / tau };
    u + (w0 - u) * factor.powi(n as i32)
}

#[test]
fn exercise_2_the_exact_filter() {
    for tau in [0.5, 0.02, 0.004] {
        for (dyntype, exact) in [("filterexact", true), ("filter", false)] {
            let xml = format!(
                r#"<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody><body><joint name="x" type="slide"/>
                <geom size="0.1" mass="1" contype="0" conaffinity="0"/></body></worldbody>
                <actuator><general joint="x" dyntype="{dyntype}" dynprm="{tau}"/></actuator></mujoco>"#
            );
            let model = mbd::mjcf::load_str(&xml).unwrap().model;
            let mut state = State::reference(&model);
            state.ctrl = vec![0.8];
            state.act = vec![0.1];
            let mut sim = Simulator::new(&model, state, Integrator::Euler).unwrap();
            for _ in 0..50 {
                sim.step().unwrap();
            }
            let expected = exercise_2_answer(0.1, 0.8, tau, 0.01, 50, exact);
            let got = sim.state.act[0];
            assert!(
                (got - expected).abs() <= 1e-9 * expected.abs().max(1.0),
                "{dyntype} tau {tau}: {got} vs {expected}"
            );
        }
    }
}

/// Exercise 3: the slider-crank length `a.d - sqrt((a.d)^2 + r^2 - d.d)` (the projection `a.d`
/// when the rod cannot reach).
fn exercise_3_answer(axis: Vec3, d: Vec3, rod: f64) -> f64 {
    let ad = axis.dot(&d);
    let det = ad * ad + rod * rod - d.dot(&d);
    if det <= 0.0 {
        ad
    } else {
        ad - det.sqrt()
    }
}

#[test]
fn exercise_3_slider_crank_length() {
    let xml = r#"<mujoco><compiler angle="radian"/><worldbody>
        <body><joint name="crank" type="hinge" axis="0 1 0"/><geom size="0.05" mass="1" contype="0" conaffinity="0"/>
        <site name="pin" pos="0.2 0 0"/></body>
        <site name="slider" pos="-0.5 0 0.1" quat="0.7071067811865476 0 0.7071067811865476 0"/></worldbody>
        <actuator><general cranksite="pin" slidersite="slider" cranklength="0.6"/></actuator></mujoco>"#;
    let model = mbd::mjcf::load_str(xml).unwrap().model;
    for angle in [0.0, 0.5, 1.5, -2.0, 3.0] {
        let q = vec![angle];
        let ten = tendon_kinematics(&model, &q).unwrap();
        let (mut l, mut m) = (vec![0.0], DMatrix::zeros(1, 1));
        transmission(&model, &q, &ten, &mut l, &mut m).unwrap();
        // the pin turns about y through the origin: x = (0.2 cos, 0, -0.2 sin)
        let pin = Vec3::new(0.2 * angle.cos(), 0.0, -0.2 * angle.sin());
        let slider = Vec3::new(-0.5, 0.0, 0.1);
        let axis = Vec3::new(1.0, 0.0, 0.0); // the slider site's z axis, turned onto x
        let expected = exercise_3_answer(axis, pin - slider, 0.6);
        assert!((l[0] - expected).abs() < 1e-12, "angle {angle}: {} vs {expected}", l[0]);
    }
}

/// Exercise 4: the scalar Riccati equation `b^2 P^2 + (r (1 - a^2) - q b^2) P - q r = 0`, its
/// positive root, and `K = a b P / (r + b^2 P)`.
fn exercise_4_answer(a: f64, b: f64, q: f64, r: f64) -> f64 {
    let beta = r * (1.0 - a * a) - q * b * b;
    let p = (-beta + (beta * beta + 4.0 * b * b * q * r).sqrt()) / (2.0 * b * b);
    a * b * p / (r + b * b * p)
}

#[test]
fn exercise_4_scalar_lqr_in_closed_form() {
    for (a, b, q, r) in [(1.0, 1.0, 1.0, 1.0), (1.2, 0.5, 2.0, 0.3), (0.9, 2.0, 0.5, 4.0)] {
        let m = |x: f64| DMatrix::from_element(1, 1, x);
        let k = lqr_gain(&m(a), &m(b), &m(q), &m(r), 1e-15, 100_000).unwrap()[(0, 0)];
        let expected = exercise_4_answer(a, b, q, r);
        assert!((k - expected).abs() < 1e-10, "a {a} b {b}: {k} vs {expected}");
    }
}
