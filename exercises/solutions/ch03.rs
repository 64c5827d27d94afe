//! Worked answers to the exercises of "The recursive Newton-Euler algorithm" (statements in
//! `src/ch03.rs`).

use mbd::dynamics::rnea;
use mbd::kinematics::forward_kinematics;
use mbd::model::canned::rod;
use mbd::model::{Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{quat_to_mat, xlt, Mat3, SpatialInertia, Vec3, Xform};

/// Rotation about y by q takes the hanging direction (0, 0, -1) to (-sin q, 0, -cos q), so the
/// heights are `z1 = -l1/2 cos q1` and `z2 = -l1 cos q1 - l2/2 cos(q1 + q2)`;
/// `U = g (m1 z1 + m2 z2)`, differentiated.
pub fn exercise_1(q: [f64; 2]) -> [f64; 2] {
    let (m1, l1, m2, l2, g) = (1.0, 0.5, 1.1, 0.49, 9.81);
    let s1 = q[0].sin();
    let s12 = (q[0] + q[1]).sin();
    let du_dq2 = g * m2 * 0.5 * l2 * s12;
    let du_dq1 = g * (m1 * 0.5 * l1 * s1 + m2 * l1 * s1) + du_dq2;
    [du_dq1, du_dq2]
}

/// Newton for the centre of mass, Euler about it, then the moment carried to the body origin.
pub fn exercise_2(m: f64, c: Vec3, ic: Mat3, q: &[f64], qd: &[f64], qdd: &[f64], g: Vec3) -> [f64; 6] {
    let r = quat_to_mat(&[q[3], q[4], q[5], q[6]]);
    let w = Vec3::new(qd[3], qd[4], qd[5]);
    let wd = Vec3::new(qdd[3], qdd[4], qdd[5]);
    let p_dd = Vec3::new(qdd[0], qdd[1], qdd[2]);
    // acceleration of the centre of mass, body axes: origin's acceleration + wd x c + w x (w x c)
    let a_c_body = r.transpose() * p_dd + wd.cross(&c) + w.cross(&w.cross(&c));
    let force_body = m * (a_c_body - r.transpose() * g);
    let n_c = ic * wd + w.cross(&(ic * w));
    let n_o = n_c + c.cross(&force_body);
    let f_world = r * force_body;
    [f_world.x, f_world.y, f_world.z, n_o.x, n_o.y, n_o.z]
}

/// By statics joint j feels the moment of F about its axis, `a_j . ((p - o_j) x F)`, for each
/// joint between `body` and the base, and nothing for the others.
pub fn exercise_3(model: &Model, q: &[f64], body: usize, p: Vec3, force: Vec3) -> Vec<f64> {
    let kin = forward_kinematics(model, q).expect("valid state");
    let mut out = vec![0.0; model.nv];
    let mut j = body;
    while j != 0 {
        let axis = match model.joints[j].jtype {
            JointType::Revolute { axis } => axis,
            _ => panic!("exercise 3 is about revolute joints"),
        };
        let a_world = kin.rotation(j) * axis;
        out[model.v_adr[j]] = a_world.dot(&(p - kin.position(j)).cross(&force));
        j = model.lambda[j];
    }
    out
}

/// The lift's upward acceleration is the base acceleration `-a_g` that RNEA gives the base in
/// place of gravity (Featherstone 5.3), so the torques are the gravity torques of exercise 1.
pub fn exercise_4(q: [f64; 2]) -> [f64; 2] {
    let mut b = ModelBuilder::new("lift + double pendulum");
    b.opt.gravity = Vec3::zeros();
    let platform = SpatialInertia::from_mass_com_inertia(5.0, Vec3::zeros(), Mat3::identity() * 0.1);
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
