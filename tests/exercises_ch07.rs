//! Exercises of the chapter "The articulated-body algorithm" (book/src/aba.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_ch07`.

use mbd::dynamics::{aba, crba, hand_c, kinetic_energy, potential_energy};
use mbd::model::canned::{self, rod};
use mbd::model::{jcalc, Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{Mat3, Mat6, SpatialInertia, Vec3, Vec6, Xform};
use nalgebra::{DMatrix, DVector};

/// Exercise 1: the cart-pole by Lagrange's equations. A cart of mass M = 2 kg slides along x
/// (coordinate x); a uniform pole of mass m = 0.5 kg and length L = 0.8 m hangs from the cart's
/// origin and turns about y (angle theta, 0 = hanging down, positive = rotation about +y).
/// Gravity 9.81 m/s^2 along -z. `force` drives the cart, `torque` the pole. Returns
/// `[x'', theta'']`.
fn exercise_1_answer(theta: f64, thetad: f64, force: f64, torque: f64) -> [f64; 2] {
    let (big_m, m, l, g) = (2.0, 0.5, 0.8, 9.81);
    let a = 0.5 * l; // joint to centre of mass
    let j = m * a * a + m * l * l / 12.0; // pole inertia about the joint
    let (s, c) = theta.sin_cos();
    // centre of mass (x - a sin th, -a cos th): T = (M+m)/2 x'^2 - m a c x' th' + J/2 th'^2,
    // U = -m g a cos th. Lagrange:
    //   (M+m) x'' - m a c th'' + m a s th'^2 = force
    //   -m a c x'' + J th''     + m g a s     = torque
    let (h11, h12, h22) = (big_m + m, -m * a * c, j);
    let r1 = force - m * a * s * thetad * thetad;
    let r2 = torque - m * g * a * s;
    let det = h11 * h22 - h12 * h12;
    [(h22 * r1 - h12 * r2) / det, (h11 * r2 - h12 * r1) / det]
}

/// Exercise 2: the articulated-body inertia of body 1 when body 2 hangs from it on a 1-dof
/// joint (Featherstone 7.1-7.2): `I^A_1 = I_1 + X^T I^a_2 X` with
/// `I^a_2 = I_2 - I_2 s (s^T I_2 s)^-1 s^T I_2`, where `X = 2_X_1` is the motion transform from
/// body 1 to body 2 coordinates and `s` joint 2's motion subspace (6x1), all as plain matrices.
fn exercise_2_answer(i1: &Mat6, i2: &Mat6, x21: &Mat6, s: &Vec6) -> Mat6 {
    let u = i2 * s; // U = I_2 s
    let d = s.dot(&u); // D = s^T I_2 s
    let ia2 = i2 - u * u.transpose() / d;
    i1 + x21.transpose() * ia2 * x21
}

/// Exercise 3: one step of the classical fourth-order Runge-Kutta method for an unactuated
/// model with hinge joints (so positions add like vectors), accelerations by `aba`.
fn exercise_3_answer(model: &Model, q: &[f64], qd: &[f64], h: f64) -> (Vec<f64>, Vec<f64>) {
    let n = model.nv;
    let tau = vec![0.0; n];
    let acc = |q: &[f64], v: &[f64]| aba(model, q, v, &tau, None).expect("valid state");
    let shift = |x: &[f64], dx: &[f64], c: f64| -> Vec<f64> { x.iter().zip(dx).map(|(a, b)| a + c * b).collect() };
    let k1v = acc(q, qd);
    let k1q = qd.to_vec();
    let (q2, v2) = (shift(q, &k1q, 0.5 * h), shift(qd, k1v.as_slice(), 0.5 * h));
    let k2v = acc(&q2, &v2);
    let k2q = v2;
    let (q3, v3) = (shift(q, &k2q, 0.5 * h), shift(qd, k2v.as_slice(), 0.5 * h));
    let k3v = acc(&q3, &v3);
    let k3q = v3;
    let (q4, v4) = (shift(q, &k3q, h), shift(qd, k3v.as_slice(), h));
    let k4v = acc(&q4, &v4);
    let k4q = v4;
    let q_new = (0..n)
        .map(|i| q[i] + h / 6.0 * (k1q[i] + 2.0 * k2q[i] + 2.0 * k3q[i] + k4q[i]))
        .collect();
    let v_new = (0..n)
        .map(|i| qd[i] + h / 6.0 * (k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i] + k4v[i]))
        .collect();
    (q_new, v_new)
}

/// Exercise 4: forward dynamics by the inertia-matrix route of chapter 6, `qdd = H^-1 (tau - C)`,
/// with `H` and `C` from `hand_c` and a Cholesky factorization (armature is already in H).
fn exercise_4_answer(model: &Model, q: &[f64], qd: &[f64], tau: &[f64]) -> DVector<f64> {
    let (h, c) = hand_c(model, q, qd, None).expect("valid state");
    let rhs = DVector::from_column_slice(tau) - c;
    h.cholesky().expect("H is positive definite").solve(&rhs)
}

fn cart_pole() -> Model {
    let mut b = ModelBuilder::new("cart-pole");
    let cart = SpatialInertia::from_mass_com_inertia(2.0, Vec3::zeros(), Mat3::identity() * 0.05);
    let c = b.add_body("cart", 0, Joint::prismatic(Vec3::x()), Xform::identity(), cart);
    b.add_body(
        "pole",
        c,
        Joint::revolute(Vec3::y()),
        Xform::identity(),
        rod(0.5, 0.8, -Vec3::z()),
    );
    b.build().unwrap()
}

#[test]
fn exercise_1_cart_pole() {
    // against ABA, 1e-12 relative, at several states and inputs
    let model = cart_pole();
    for (k, &(x, th, xd, thd, f, t)) in [
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        (0.3, 0.5, -0.2, 1.5, 2.0, -0.3),
        (-1.0, 2.8, 1.0, -3.0, -5.0, 0.7),
        (2.0, -1.3, 0.4, 0.2, 0.0, 1.0),
    ]
    .iter()
    .enumerate()
    {
        let expected = aba(&model, &[x, th], &[xd, thd], &[f, t], None).unwrap();
        let got = exercise_1_answer(th, thd, f, t);
        let scale = expected.amax().max(1.0);
        for i in 0..2 {
            assert!(
                (got[i] - expected[i]).abs() < 1e-12 * scale,
                "state {k}, coordinate {i}: {} vs ABA {}",
                got[i],
                expected[i]
            );
        }
    }
}

#[test]
fn exercise_2_articulated_inertia_is_a_schur_complement() {
    // Body 1 on a free joint, body 2 on a hinge. At the identity orientation the free joint's
    // S_1 is the permutation P = [0 1; 1 0] (qvel = [linear; angular]), and eliminating the hinge
    // from H = CRBA gives S_1^T I^A_1 S_1 = H_11 - H_12 H_22^-1 H_21 (Featherstone 7.1).
    let mut b = ModelBuilder::new("free body + hinge");
    let body1 = SpatialInertia::from_mass_com_inertia(
        3.0,
        Vec3::new(0.05, -0.02, 0.1),
        Mat3::new(0.1, 0.01, 0.0, 0.01, 0.12, 0.02, 0.0, 0.02, 0.08),
    );
    let b1 = b.add_body("base", 0, Joint::new(JointType::Free), Xform::identity(), body1);
    let axis = Vec3::new(0.2, 1.0, -0.3);
    let x_tree =
        Xform::rot_axis(&Vec3::new(1.0, 0.5, 0.2).normalize(), 0.7) * mbd::spatial::xlt(Vec3::new(0.3, -0.1, -0.2));
    b.add_body(
        "arm",
        b1,
        Joint::revolute(axis),
        x_tree,
        rod(1.2, 0.6, Vec3::new(0.1, 0.0, -1.0)),
    );
    let model = b.build().unwrap();
    for q2 in [0.0, 0.8, -2.1] {
        let q = [0.4, -0.3, 1.0, 1.0, 0.0, 0.0, 0.0, q2];
        // the pieces of the exercise, from the model
        let i1 = model.inertia[1].to_matrix();
        let i2 = model.inertia[2].to_matrix();
        let jc = jcalc(&model.joints[2], &[q2], &[0.0]);
        let x21 = jc.x_j.compose(&model.x_tree[2]).to_motion_matrix();
        let s = jc.s.cols[0].to_vec6();
        let got = exercise_2_answer(&i1, &i2, &x21, &s);
        // the independent route: a Schur complement of CRBA's H
        let h = crba(&model, &q).unwrap();
        let h11 = h.view((0, 0), (6, 6)).into_owned();
        let h12 = h.view((0, 6), (6, 1)).into_owned();
        let schur = h11 - &h12 * h12.transpose() / h[(6, 6)];
        let mut p = DMatrix::zeros(6, 6);
        for k in 0..3 {
            p[(k, k + 3)] = 1.0;
            p[(k + 3, k)] = 1.0;
        }
        let expected = &p * schur * p.transpose();
        let mut err: f64 = 0.0;
        for r in 0..6 {
            for c in 0..6 {
                err = err.max((got[(r, c)] - expected[(r, c)]).abs());
            }
        }
        assert!(
            err < 1e-12 * expected.amax(),
            "q2 = {q2}: max |I^A_1 - Schur| = {err:e}"
        );
    }
}

#[test]
fn exercise_3_rk4_conserves_energy_and_is_fourth_order() {
    let model = canned::chain(2, false);
    let energy = |q: &[f64], v: &[f64]| kinetic_energy(&model, q, v).unwrap() + potential_energy(&model, q).unwrap();
    let run = |h: f64, t: f64| {
        let (mut q, mut v) = (vec![1.5, -1.0], vec![0.0, 0.0]);
        for _ in 0..(t / h).round() as usize {
            let (q1, v1) = exercise_3_answer(&model, &q, &v, h);
            q = q1;
            v = v1;
        }
        (q, v)
    };
    // (a) energy: after 2 s at h = 5 ms the total energy has moved by less than 1e-5 J (the
    //     swing exchanges about 10 J between kinetic and potential energy)
    let (q, v) = run(0.005, 2.0);
    let drift = (energy(&q, &v) - energy(&[1.5, -1.0], &[0.0, 0.0])).abs();
    assert!(drift < 1e-5, "energy drift {drift:e} J");
    // (b) order: against a reference with h = 1e-4 (the library's RK4 of the ch07 figure), the
    //     error at t = 0.5 s must shrink by more than 12x when h halves from 5 ms to 2.5 ms (16x
    //     in the limit for a fourth-order method, 13.8x measured; 2x for a first-order one)
    let mut q_ref = vec![1.5, -1.0];
    let mut v_ref = vec![0.0, 0.0];
    for _ in 0..5000 {
        mbd::figures::ch07::step(&model, mbd::figures::ch07::Stepper::Rk4, &mut q_ref, &mut v_ref, 1e-4).unwrap();
    }
    let err = |h: f64| {
        let (q, v) = run(h, 0.5);
        (0..2)
            .map(|i| (q[i] - q_ref[i]).abs().max((v[i] - v_ref[i]).abs()))
            .fold(0.0, f64::max)
    };
    let (e1, e2) = (err(0.005), err(0.0025));
    assert!(
        e2 < 1e-6 && e1 / e2 > 12.0,
        "errors {e1:e} (h = 5 ms) and {e2:e} (h = 2.5 ms), ratio {}",
        e1 / e2
    );
}

#[test]
fn exercise_4_crba_route_agrees_with_aba() {
    // against ABA, 1e-10 relative, on a floating base with ball joints, a prismatic joint and
    // armature on every dof (ABA puts the armature into D_i, CRBA onto H's diagonal)
    let mut model = canned::floating_base_ball_arms();
    for (k, j) in model.joints.iter_mut().enumerate() {
        j.armature = 0.02 * k as f64;
    }
    let mut q = model.qpos0.clone();
    let v: Vec<f64> = (0..model.nv).map(|k| 0.6 * (k as f64 * 0.9).cos()).collect();
    model.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
    let qd: Vec<f64> = (0..model.nv).map(|k| 0.8 * (k as f64 * 1.7 + 0.3).sin()).collect();
    let tau: Vec<f64> = (0..model.nv).map(|k| (k as f64 * 0.5).cos()).collect();
    let expected = aba(&model, q.as_slice(), &qd, &tau, None).unwrap();
    let got = exercise_4_answer(&model, q.as_slice(), &qd, &tau);
    let err = (&got - &expected).amax();
    assert!(err < 1e-10 * expected.amax().max(1.0), "max |qdd - ABA| = {err:e}");
}
