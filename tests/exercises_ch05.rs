//! Exercises of the chapter "The recursive Newton-Euler algorithm" (book/src/rnea.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_ch05`.

use mbd::dynamics::{bias_forces, rnea};
use mbd::kinematics::{forward_kinematics, world_force_at_point};
use mbd::model::canned::{self, rod};
use mbd::model::{Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{quat_to_mat, xlt, Force, Mat3, Vec3, Xform};

/// Exercise 1: the joint torques that hold the planar double pendulum `canned::chain(2, false)`
/// still at angles `q` (qdot = qddot = 0), derived from the potential energy: `tau = dU/dq`.
/// Link 1: m1 = 1.0 kg, length l1 = 0.5 m; link 2: m2 = 1.1 kg, l2 = 0.49 m; centres of mass at
/// mid-length; both joints turn about y; g = 9.81 m/s^2 along -z.
fn exercise_1_answer(q: [f64; 2]) -> [f64; 2] {
    let (m1, l1, m2, l2, g) = (1.0, 0.5, 1.1, 0.49, 9.81);
    // rotation about y by q takes the hanging direction (0, 0, -1) to (-sin q, 0, -cos q), so the
    // heights are z1 = -l1/2 cos q1 and z2 = -l1 cos q1 - l2/2 cos(q1 + q2); U = g (m1 z1 + m2 z2).
    let s1 = q[0].sin();
    let s12 = (q[0] + q[1]).sin();
    let du_dq2 = g * m2 * 0.5 * l2 * s12;
    let du_dq1 = g * (m1 * 0.5 * l1 * s1 + m2 * l1 * s1) + du_dq2;
    [du_dq1, du_dq2]
}

/// Exercise 2: the generalized force on a single free rigid body (MuJoCo's free-joint
/// convention) by the classical Newton-Euler equations about the centre of mass.
///
/// Mass `m`, centre of mass `c` and rotational inertia `ic` about the centre of mass, both in
/// body coordinates; `q = [p; quat (w, x, y, z)]`, `qd = [world velocity of the origin; body
/// angular velocity]`, `qdd` = their time derivatives; gravity `g` (world). Returns
/// `[world force; moment about the body origin in body coordinates]`.
fn exercise_2_answer(m: f64, c: Vec3, ic: Mat3, q: &[f64], qd: &[f64], qdd: &[f64], g: Vec3) -> [f64; 6] {
    let r = quat_to_mat(&[q[3], q[4], q[5], q[6]]);
    let w = Vec3::new(qd[3], qd[4], qd[5]);
    let wd = Vec3::new(qdd[3], qdd[4], qdd[5]);
    let p_dd = Vec3::new(qdd[0], qdd[1], qdd[2]);
    // acceleration of the centre of mass, body axes: origin's acceleration + wd x c + w x (w x c)
    let a_c_body = r.transpose() * p_dd + wd.cross(&c) + w.cross(&w.cross(&c));
    let force_body = m * (a_c_body - r.transpose() * g);
    // Euler's equation about the centre of mass, then the moment carried to the origin
    let n_c = ic * wd + w.cross(&(ic * w));
    let n_o = n_c + c.cross(&force_body);
    let f_world = r * force_body;
    [f_world.x, f_world.y, f_world.z, n_o.x, n_o.y, n_o.z]
}

/// Exercise 3: the generalized force `J^T F` that a pure force `force` (world coordinates)
/// applied at the world point `p` of body `body` produces on a chain of revolute joints
/// anchored at their body origins. By statics, joint j feels the moment of F about its axis:
/// `a_j . ((p - o_j) x F)` for each joint j between `body` and the base, zero for the others.
fn exercise_3_answer(model: &Model, q: &[f64], body: usize, p: Vec3, force: Vec3) -> Vec<f64> {
    let kin = forward_kinematics(model, q).expect("valid state");
    let mut out = vec![0.0; model.nv];
    let mut j = body;
    while j != 0 {
        let axis = match model.joints[j].jtype {
            JointType::Revolute { axis } => axis,
            _ => panic!("exercise 3 is about revolute joints"),
        };
        let a_world = kin.rotation(j) * axis;
        let o_world = kin.position(j);
        out[model.v_adr[j]] = a_world.dot(&(p - o_world).cross(&force));
        j = model.lambda[j];
    }
    out
}

/// Exercise 4: gravity as an accelerating base. Mount the double pendulum of exercise 1 on a
/// "lift" (a prismatic joint along z), switch gravity off, accelerate the lift upwards at
/// 9.81 m/s^2 with the pendulum momentarily at rest at angles `q`, and return the two pendulum
/// joint torques that RNEA computes.
fn exercise_4_answer(q: [f64; 2]) -> [f64; 2] {
    let mut b = ModelBuilder::new("lift + double pendulum");
    b.opt.gravity = Vec3::zeros();
    let platform = mbd::spatial::SpatialInertia::from_mass_com_inertia(5.0, Vec3::zeros(), Mat3::identity() * 0.1);
    let lift = b.add_body("lift", 0, Joint::prismatic(Vec3::z()), Xform::identity(), platform);
    let l1 = b.add_body(
        "link1",
        lift,
        Joint::revolute(Vec3::y()),
        Xform::identity(),
        rod(1.0, 0.5, -Vec3::z()),
    );
    b.add_body(
        "link2",
        l1,
        Joint::revolute(Vec3::y()),
        xlt(Vec3::new(0.0, 0.0, -0.5)),
        rod(1.1, 0.49, -Vec3::z()),
    );
    let model = b.build().expect("valid model");
    let tau = rnea(&model, &[0.0, q[0], q[1]], &[0.0; 3], &[9.81, 0.0, 0.0], None).expect("valid state");
    [tau[1], tau[2]]
}

fn states2() -> Vec<[f64; 2]> {
    vec![[0.0, 0.0], [0.3, -0.2], [1.2, 0.9], [-2.5, 1.7], [3.0, -3.0]]
}

#[test]
fn exercise_1_gravity_torques_of_the_double_pendulum() {
    // against RNEA with qdot = 0 (the bias force is then gravity alone), 1e-12 N m
    let model = canned::chain(2, false);
    for q in states2() {
        let expected = bias_forces(&model, &q, &[0.0, 0.0]).unwrap();
        let got = exercise_1_answer(q);
        for k in 0..2 {
            assert!(
                (got[k] - expected[k]).abs() < 1e-12,
                "q = {q:?}, joint {k}: {} vs RNEA {}",
                got[k],
                expected[k]
            );
        }
    }
}

#[test]
fn exercise_2_newton_euler_of_one_free_body() {
    // against RNEA on a one-body model with a free joint, relative 1e-12
    let m = 2.0;
    let c = Vec3::new(0.1, -0.05, 0.2);
    let ic = Mat3::new(0.03, 0.002, -0.001, 0.002, 0.04, 0.003, -0.001, 0.003, 0.05);
    let mut b = ModelBuilder::new("one body");
    b.opt.gravity = Vec3::new(0.3, -0.2, -9.81);
    let inertia = mbd::spatial::SpatialInertia::from_mass_com_inertia(m, c, ic);
    b.add_body("body", 0, Joint::new(JointType::Free), Xform::identity(), inertia);
    let model = b.build().unwrap();
    for k in 0..4 {
        let t = k as f64;
        let axis = Vec3::new(0.3 + t, -0.5, 0.8 - 0.2 * t).normalize();
        let quat = mbd::spatial::quat_from_axis_angle(&axis, 0.4 + 0.7 * t);
        let q = [0.1 * t, -0.2, 0.5, quat[0], quat[1], quat[2], quat[3]];
        let qd = [0.3, -0.1 * t, 0.2, 1.0 - 0.3 * t, 0.5, -0.7 + 0.1 * t];
        let qdd = [-0.4, 0.6, 0.1 * t, 0.2, -1.1 + 0.2 * t, 0.9];
        let expected = rnea(&model, &q, &qd, &qdd, None).unwrap();
        let got = exercise_2_answer(m, c, ic, &q, &qd, &qdd, model.opt.gravity);
        let scale = expected.amax().max(1.0);
        for i in 0..6 {
            assert!(
                (got[i] - expected[i]).abs() < 1e-12 * scale,
                "state {k}, component {i}: {} vs RNEA {}",
                got[i],
                expected[i]
            );
        }
    }
}

#[test]
fn exercise_3_a_force_at_the_tip() {
    // RNEA subtracts the external force's generalized effect: ID(q,0,0) - ID(q,0,0,f) = J^T F;
    // checked to 1e-12 relative on a 3-D chain, for a force on the last body and on a middle one.
    let model = canned::chain(5, true);
    let q = [0.3, -0.7, 1.1, 0.4, -0.2];
    let zeros = [0.0; 5];
    let free = rnea(&model, &q, &zeros, &zeros, None).unwrap();
    let kin = forward_kinematics(&model, &q).unwrap();
    for body in [5, 3] {
        let p = kin.point(body, &Vec3::new(0.05, -0.02, -0.3));
        let force = Vec3::new(2.0, -1.0, 3.5);
        let mut f_ext = vec![Force::zero(); model.nb + 1];
        f_ext[body] = world_force_at_point(&force, &Vec3::zeros(), &p);
        let pushed = rnea(&model, &q, &zeros, &zeros, Some(&f_ext)).unwrap();
        let got = exercise_3_answer(&model, &q, body, p, force);
        for k in 0..5 {
            let expected = free[k] - pushed[k];
            assert!(
                (got[k] - expected).abs() < 1e-12 * (1.0 + expected.abs()),
                "body {body}, joint {k}: {} vs {}",
                got[k],
                expected
            );
        }
    }
    // the statics must also match the transpose of the point Jacobian
    let p_local = Vec3::new(0.05, -0.02, -0.3);
    let jac = mbd::kinematics::point_jacobian(&model, &q, 5, &p_local).unwrap();
    let force = Vec3::new(2.0, -1.0, 3.5);
    let jt_f = jac.transpose() * nalgebra::DVector::from_column_slice(force.as_slice());
    let got = exercise_3_answer(&model, &q, 5, kin.point(5, &p_local), force);
    for k in 0..5 {
        assert!((got[k] - jt_f[k]).abs() < 1e-12 * (1.0 + jt_f[k].abs()));
    }
}

#[test]
fn exercise_4_gravity_is_an_accelerating_base() {
    // the lifted pendulum in zero gravity must need exactly the torques of the pendulum hanging
    // in gravity (Featherstone 5.3's fictitious base acceleration), 1e-12 N m
    let model = canned::chain(2, false);
    for q in states2() {
        let expected = bias_forces(&model, &q, &[0.0, 0.0]).unwrap();
        let got = exercise_4_answer(q);
        for k in 0..2 {
            assert!(
                (got[k] - expected[k]).abs() < 1e-12,
                "q = {q:?}, joint {k}: {} vs gravity torque {}",
                got[k],
                expected[k]
            );
        }
    }
}
