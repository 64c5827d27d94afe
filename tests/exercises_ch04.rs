//! Exercises of the chapter "Joint models and kinematic trees" (book/src/joints.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written with plain trigonometry and
//! matrices and without the library routine it is checked against. Replace the body of one with
//! your own and run `cargo test --test exercises_ch04`.

use mbd::dynamics::{rnea_with, Workspace};
use mbd::kinematics::{body_velocities, forward_kinematics, point_jacobian};
use mbd::model::{canned, Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{quat_to_mat, skew, xlt, Mat3, Mat6, Motion, SpatialInertia, Vec3, Vec6, Xform};
use nalgebra::Matrix6x2;

/// What exercise 1 returns: `jcalc`'s four outputs as plain matrices.
struct UniversalJoint {
    x_j: Mat6,
    s: Matrix6x2<f64>,
    v_j: Vec6,
    c_j: Vec6,
}

/// Exercise 1: `jcalc` for a universal joint, which turns by `q[0]` about the predecessor's z
/// axis and then by `q[1]` about the y axis of the frame so obtained:
/// `X_J = roty(q2) rotz(q1)`. In successor coordinates the first axis is
/// `roty(q2) z = (-sin q2, 0, cos q2)`, the second is y, and `c_J = (dS/dt) qdot` comes from the
/// first column turning with q2.
fn exercise_1_answer(q: [f64; 2], qd: [f64; 2]) -> UniversalJoint {
    let (s1, c1) = q[0].sin_cos();
    let (s2, c2) = q[1].sin_cos();
    // Coordinate rotations (table 2.2): rotz maps predecessor to intermediate coordinates, roty
    // maps intermediate to successor coordinates.
    let rz = Mat3::new(c1, s1, 0.0, -s1, c1, 0.0, 0.0, 0.0, 1.0);
    let ry = Mat3::new(c2, 0.0, -s2, 0.0, 1.0, 0.0, s2, 0.0, c2);
    let e = ry * rz;
    let mut x_j = Mat6::zeros();
    x_j.fixed_view_mut::<3, 3>(0, 0).copy_from(&e);
    x_j.fixed_view_mut::<3, 3>(3, 3).copy_from(&e);
    let mut s = Matrix6x2::zeros();
    s[(0, 0)] = -s2;
    s[(2, 0)] = c2;
    s[(1, 1)] = 1.0;
    let v_j = s * nalgebra::Vector2::new(qd[0], qd[1]);
    let mut c_j = Vec6::zeros();
    c_j[0] = -c2 * qd[0] * qd[1];
    c_j[2] = -s2 * qd[0] * qd[1];
    UniversalJoint { x_j, s, v_j, c_j }
}

/// Exercise 2: MuJoCo's `dof_parentid` (Featherstone 6.5's expanded parent array) from the body
/// parent array `lambda` (entry 0 unused) and the number of dofs of each body's joint: a body's
/// first dof hangs from the last dof of the nearest ancestor that has dofs, every further dof
/// from the dof before it.
fn exercise_2_answer(lambda: &[usize], ndof: &[usize]) -> Vec<Option<usize>> {
    let nb = lambda.len() - 1;
    let mut last: Vec<Option<usize>> = vec![None; nb + 1];
    let mut out = Vec::new();
    for i in 1..=nb {
        let mut parent = last[lambda[i]];
        for _ in 0..ndof[i] {
            out.push(parent);
            parent = Some(out.len() - 1);
        }
        last[i] = parent;
    }
    out
}

/// Exercise 3: the world position of the tip of `canned::chain(3, false)` by trigonometry. The
/// links hang along -z with lengths 0.5, 0.49 and 0.48 m and every joint turns about y, so a
/// link at absolute angle `theta` points along `(-sin theta, 0, -cos theta)`.
fn exercise_3_answer(q: [f64; 3]) -> Vec3 {
    let lengths = [0.5, 0.49, 0.48];
    let mut theta = 0.0;
    let mut tip = Vec3::zeros();
    for k in 0..3 {
        theta += q[k];
        tip += Vec3::new(-theta.sin(), 0.0, -theta.cos()) * lengths[k];
    }
    tip
}

/// Exercise 4: the 3 x 3 Jacobian `d tip / d q` of the same chain: column k is the derivative of
/// exercise 3's sum with respect to `q[k]`, which touches every link from k on.
fn exercise_4_answer(q: [f64; 3]) -> Mat3 {
    let lengths = [0.5, 0.49, 0.48];
    let thetas = [q[0], q[0] + q[1], q[0] + q[1] + q[2]];
    let mut jac = Mat3::zeros();
    for k in 0..3 {
        for l in k..3 {
            jac[(0, k)] -= lengths[l] * thetas[l].cos();
            jac[(2, k)] += lengths[l] * thetas[l].sin();
        }
    }
    jac
}

/// Exercise 5: the spatial velocity, in world coordinates with the world origin as reference
/// point (Featherstone's base coordinates), of a body on a MuJoCo free joint with
/// `qpos = [p; quat (w, x, y, z)]` and `qvel = [world velocity of the body origin; body-frame
/// angular velocity]`: `w = R w_body`, and the body point at the world origin moves with
/// `pdot + w x (0 - p)`.
fn exercise_5_answer(qpos: [f64; 7], qvel: [f64; 6]) -> Motion {
    let r = quat_to_mat(&[qpos[3], qpos[4], qpos[5], qpos[6]]);
    let p = Vec3::new(qpos[0], qpos[1], qpos[2]);
    let w = r * Vec3::new(qvel[3], qvel[4], qvel[5]);
    let pdot = Vec3::new(qvel[0], qvel[1], qvel[2]);
    Motion::new(w, pdot - w.cross(&p))
}

// ---------------------------------------------------------------------------------------------
// The checks. Nothing below needs changing.

fn max_abs(x: impl IntoIterator<Item = f64>) -> f64 {
    x.into_iter().fold(0.0, |a, b| a.max(b.abs()))
}

/// A body with no mass: the first of the two bodies that make up a universal joint.
fn massless() -> SpatialInertia {
    SpatialInertia::zero()
}

/// The universal joint as MuJoCo would model a body with two hinges: two Featherstone bodies,
/// the first massless, joined by revolute joints about z and then y.
fn two_hinge_model() -> Model {
    let mut b = ModelBuilder::new("universal as two hinges");
    b.opt.gravity = Vec3::zeros();
    let mid = b.add_body("cross", 0, Joint::revolute(Vec3::z()), Xform::identity(), massless());
    b.add_body(
        "yoke",
        mid,
        Joint::revolute(Vec3::y()),
        Xform::identity(),
        canned::rod(1.0, 0.3, Vec3::x()),
    );
    b.build().expect("valid model")
}

#[test]
fn exercise_1_universal_joint() {
    let model = two_hinge_model();
    for k in 0..6 {
        let t = k as f64;
        let (q, qd) = ([0.4 - 0.7 * t, 1.1 + 0.5 * t], [0.8 - 0.3 * t, -1.2 + 0.45 * t]);
        let ans = exercise_1_answer(q, qd);
        // X_J is the transform from the base to the second hinge's body.
        let kin = forward_kinematics(&model, &q).expect("valid state");
        let err = max_abs((ans.x_j - kin.x_0[2].to_motion_matrix()).iter().cloned());
        assert!(err < 1e-12, "X_J differs from the two-hinge chain by {err:e}");
        // v_J is the velocity of that body, and S maps qdot to it.
        let v = body_velocities(&model, &q, &qd).expect("valid state")[2].to_vec6();
        assert!(
            max_abs((ans.v_j - v).iter().cloned()) < 1e-12,
            "v_J differs from the chain"
        );
        let s_qd = ans.s * nalgebra::Vector2::new(qd[0], qd[1]);
        assert!(max_abs((ans.v_j - s_qd).iter().cloned()) < 1e-14, "v_J is not S qdot");
        // c_J is the body's acceleration when qddot = 0 (no gravity): RNEA's forward pass.
        let mut ws = Workspace::new(&model);
        let mut tau = [0.0; 2];
        rnea_with(&model, &mut ws, &q, &qd, &[0.0; 2], None, &mut tau);
        let a = ws.a[2].to_vec6();
        assert!(
            max_abs((ans.c_j - a).iter().cloned()) < 1e-12,
            "c_J differs from the chain's a_2"
        );
        // ... and the derivative of S(q) qdot along the motion, by central differences.
        let h = 1e-6;
        let qp = [q[0] + h * qd[0], q[1] + h * qd[1]];
        let qm = [q[0] - h * qd[0], q[1] - h * qd[1]];
        let fd = (exercise_1_answer(qp, qd).v_j - exercise_1_answer(qm, qd).v_j) / (2.0 * h);
        assert!(max_abs((ans.c_j - fd).iter().cloned()) < 1e-7, "c_J is not dS/dt qdot");
    }
}

#[test]
fn exercise_2_dof_parents() {
    // A tree with a fixed (zero-dof) body in the middle, plus the canned models.
    let mut b = ModelBuilder::new("with a weld");
    let r = canned::rod(1.0, 0.4, -Vec3::z());
    let a = b.add_body("a", 0, Joint::new(JointType::Spherical), Xform::identity(), r);
    let w = b.add_body(
        "welded",
        a,
        Joint::new(JointType::Fixed),
        xlt(Vec3::new(0.0, 0.0, -0.4)),
        r,
    );
    b.add_body("c", w, Joint::revolute(Vec3::x()), xlt(Vec3::new(0.0, 0.0, -0.4)), r);
    b.add_body("d", 0, Joint::new(JointType::Planar), xlt(Vec3::x()), r);
    let welded = b.build().expect("valid model");
    for model in [
        welded,
        canned::floating_base_ball_arms(),
        canned::binary_tree(4),
        canned::figure_8_3_tree(1.0, 0.6).unwrap(),
    ] {
        let ndof: Vec<usize> = model.joints.iter().map(|j| j.jtype.nv()).collect();
        let ans = exercise_2_answer(&model.lambda, &ndof);
        assert_eq!(ans, model.dof_parent, "dof parents of model '{}'", model.name);
        // H(i, j) vanishes unless one of the dofs is an ancestor of the other (Featherstone 6.5).
        let q = model.qpos0.clone();
        let h = mbd::dynamics::crba(&model, q.as_slice()).expect("valid state");
        let is_ancestor = |mut i: usize, j: usize| loop {
            if i == j {
                return true;
            }
            match ans[i] {
                Some(p) => i = p,
                None => return false,
            }
        };
        for i in 0..model.nv {
            for j in 0..model.nv {
                if !is_ancestor(i, j) && !is_ancestor(j, i) {
                    assert_eq!(h[(i, j)], 0.0, "H({i}, {j}) of '{}' should be zero", model.name);
                }
            }
        }
    }
}

fn chain_states() -> Vec<[f64; 3]> {
    (0..8)
        .map(|k| {
            let t = k as f64;
            [0.9 * (1.3 * t).sin(), 1.7 * (0.4 * t + 1.0).cos(), -0.5 + 0.3 * t]
        })
        .collect()
}

#[test]
fn exercise_3_chain_forward_kinematics() {
    let model = canned::chain(3, false);
    for q in chain_states() {
        let kin = forward_kinematics(&model, &q).expect("valid state");
        let tip = kin.point(3, &Vec3::new(0.0, 0.0, -0.48));
        let ans = exercise_3_answer(q);
        assert!(
            (ans - tip).norm() < 1e-12,
            "tip {ans:?}, forward kinematics says {tip:?}"
        );
    }
}

#[test]
fn exercise_4_chain_jacobian() {
    let model = canned::chain(3, false);
    let tip_local = Vec3::new(0.0, 0.0, -0.48);
    for q in chain_states() {
        let ans = exercise_4_answer(q);
        let jac = point_jacobian(&model, &q, 3, &tip_local).expect("valid state");
        let err = max_abs(
            (0..3)
                .flat_map(|r| (0..3).map(move |c| (r, c)))
                .map(|(r, c)| ans[(r, c)] - jac[(r, c)]),
        );
        assert!(err < 1e-12, "Jacobian differs from point_jacobian by {err:e}");
        // Column k is the rate of the tip when only q[k] moves (central differences of FK).
        let h = 1e-6;
        for k in 0..3 {
            let (mut qp, mut qm) = (q, q);
            qp[k] += h;
            qm[k] -= h;
            let tip = |q: &[f64; 3]| forward_kinematics(&model, q).expect("valid").point(3, &tip_local);
            let fd = (tip(&qp) - tip(&qm)) / (2.0 * h);
            let col: Vec3 = ans.column(k).into();
            assert!((col - fd).norm() < 1e-8, "column {k} differs from finite differences");
        }
    }
}

#[test]
fn exercise_5_free_joint_velocity() {
    let mut b = ModelBuilder::new("one free body");
    b.add_body(
        "box",
        0,
        Joint::new(JointType::Free),
        Xform::identity(),
        canned::rod(2.0, 0.5, Vec3::x()),
    );
    let model = b.build().expect("valid model");
    for k in 0..5 {
        let t = k as f64;
        let axis = Vec3::new(0.2 + t, -0.5, 1.0).normalize();
        let (s, c) = (0.5 * (0.3 + t)).sin_cos();
        let qpos = [0.3 - t, 1.2, 0.5 * t, c, s * axis.x, s * axis.y, s * axis.z];
        let qvel = [0.4, -1.0 + 0.2 * t, 0.7, 1.5 - t, 0.3 * t, -0.8];
        let ans = exercise_5_answer(qpos, qvel);
        // The library's body velocity (body coordinates), carried to base coordinates.
        let v_body = body_velocities(&model, &qpos, &qvel).expect("valid state")[1];
        let kin = forward_kinematics(&model, &qpos).expect("valid state");
        let v_world = kin.x_0[1].inv_apply_motion(&v_body);
        let err = max_abs((ans.to_vec6() - v_world.to_vec6()).iter().cloned());
        assert!(err < 1e-12, "differs from the library's body velocity by {err:e}");
        // Finite differences of the pose along MuJoCo's position integration.
        let h = 1e-6;
        let pose = |dt: f64| {
            let mut q = qpos;
            model.integrate(&mut q, &qvel, dt).unwrap();
            let kin = forward_kinematics(&model, &q).expect("valid state");
            (kin.rotation(1), kin.position(1))
        };
        let ((rp, pp), (rm, pm), (r0, p0)) = (pose(h), pose(-h), pose(0.0));
        let w_hat = (rp - rm) / (2.0 * h) * r0.transpose(); // [w]x = Rdot R^T
        let w = Vec3::new(w_hat[(2, 1)], w_hat[(0, 2)], w_hat[(1, 0)]);
        let pdot = (pp - pm) / (2.0 * h);
        assert!(
            (ans.w - w).norm() < 1e-7,
            "angular velocity differs from finite differences"
        );
        assert!(
            (ans.v + ans.w.cross(&p0) - pdot).norm() < 1e-7,
            "v_O + w x p is not the origin's velocity"
        );
        assert!((skew(&ans.w) - w_hat).abs().max() < 1e-7);
    }
}
