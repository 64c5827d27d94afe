//! Grader of the exercises of "Joint models and kinematic trees" (`src/ch02.rs`):
//! `cargo test -p exercises --test ch02`.

use exercises::ch02;
use exercises::grade::{close_mat, ensure, run, Check, Exercise, Rng};
use exercises::types::UniversalJoint;
use mbd::dynamics::{crba, rnea_with, Workspace};
use mbd::kinematics::{body_velocities, forward_kinematics, point_jacobian};
use mbd::model::{canned, Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{skew, xlt, Mat3, Motion, SpatialInertia, Vec3, Xform};

/// The universal joint as MuJoCo would model it: two hinges (z, then y) on a massless
/// intermediate body.
fn two_hinge_model() -> Model {
    let mut b = ModelBuilder::new("universal as two hinges");
    b.opt.gravity = Vec3::zeros();
    let mid = b.add_body(
        "cross",
        0,
        Joint::revolute(Vec3::z()),
        Xform::identity(),
        SpatialInertia::zero(),
    );
    b.add_body(
        "yoke",
        mid,
        Joint::revolute(Vec3::y()),
        Xform::identity(),
        canned::rod(1.0, 0.3, Vec3::x()),
    );
    b.build().expect("valid model")
}

fn universal_with(rng: &mut Rng, answer: fn([f64; 2], [f64; 2]) -> UniversalJoint) -> Check {
    let model = two_hinge_model();
    let mut ws = Workspace::new(&model);
    for s in 0..8 {
        let q = [rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0)];
        let qd = [rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)];
        let ans = answer(q, qd);
        let kin = forward_kinematics(&model, &q).expect("valid state");
        close_mat(
            &ans.x_j,
            &kin.x_0[2].to_motion_matrix(),
            1e-12,
            format_args!("sample {s}: X_J against the two-hinge chain's pose"),
        )?;
        let v = body_velocities(&model, &q, &qd).expect("valid state")[2].to_vec6();
        close_mat(
            &ans.v_j,
            &v,
            1e-12,
            format_args!("sample {s}: v_J against the chain's body velocity"),
        )?;
        let s_qd = ans.s * nalgebra::Vector2::new(qd[0], qd[1]);
        close_mat(&ans.v_j, &s_qd, 1e-14, format_args!("sample {s}: v_J = S qdot"))?;
        let mut tau = [0.0; 2];
        rnea_with(&model, &mut ws, &q, &qd, &[0.0; 2], None, &mut tau);
        close_mat(
            &ans.c_j,
            &ws.a[2].to_vec6(),
            1e-12,
            format_args!("sample {s}: c_J against the chain's acceleration at qddot = 0"),
        )?;
        let h = 1e-6;
        let qp = [q[0] + h * qd[0], q[1] + h * qd[1]];
        let qm = [q[0] - h * qd[0], q[1] - h * qd[1]];
        let fd = (answer(qp, qd).v_j - answer(qm, qd).v_j) / (2.0 * h);
        close_mat(
            &ans.c_j,
            &fd,
            1e-7,
            format_args!("sample {s}: c_J = d(S qdot)/dt (finite difference)"),
        )?;
    }
    Ok(())
}

fn universal(rng: &mut Rng) -> Check {
    universal_with(rng, ch02::exercise_1)
}

/// A random tree of `nb` bodies with joints of every kind, welded bodies among them.
fn random_tree(rng: &mut Rng, nb: usize) -> Model {
    let mut b = ModelBuilder::new("random tree");
    let r = canned::rod(1.0, 0.4, -Vec3::z());
    for i in 1..=nb {
        let parent = rng.int(0, i - 1);
        let jtype = match rng.int(0, 5) {
            0 => JointType::Fixed,
            1 => JointType::Spherical,
            2 => JointType::Planar,
            3 => JointType::Prismatic { axis: rng.unit3() },
            _ => JointType::Revolute { axis: rng.unit3() },
        };
        let joint = if i == 1 && rng.int(0, 1) == 0 {
            Joint::new(JointType::Free)
        } else {
            Joint::new(jtype)
        };
        b.add_body(&format!("b{i}"), parent, joint, xlt(rng.vec3(0.5)), r);
    }
    b.build().expect("valid model")
}

fn dof_parents_with(rng: &mut Rng, answer: fn(&[usize], &[usize]) -> Vec<Option<usize>>) -> Check {
    let mut models = vec![
        canned::floating_base_ball_arms(),
        canned::binary_tree(4),
        canned::figure_8_3_tree(1.0, 0.6).expect("valid"),
    ];
    for _ in 0..5 {
        let nb = rng.int(3, 9);
        models.push(random_tree(rng, nb));
    }
    for (s, model) in models.iter().enumerate() {
        let ndof: Vec<usize> = model.joints.iter().map(|j| j.jtype.nv()).collect();
        let ans = answer(&model.lambda, &ndof);
        ensure(
            ans == model.dof_parent,
            format_args!(
                "model {s} ('{}'): the dof parent array differs from Model::dof_parent",
                model.name
            ),
        )?;
        // H(i, j) vanishes unless one dof is an ancestor of the other (Featherstone 6.5).
        let h = crba(model, model.qpos0.as_slice()).expect("valid state");
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
                    ensure(h[(i, j)] == 0.0, format_args!("model {s}: H({i}, {j}) should vanish"))?;
                }
            }
        }
    }
    Ok(())
}

fn dof_parents(rng: &mut Rng) -> Check {
    dof_parents_with(rng, ch02::exercise_2)
}

const TIP: Vec3 = Vec3::new(0.0, 0.0, -0.48);

fn tip_with(rng: &mut Rng, answer: fn([f64; 3]) -> Vec3) -> Check {
    let model = canned::chain(3, false);
    for s in 0..10 {
        let q = [rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0)];
        let kin = forward_kinematics(&model, &q).expect("valid state");
        close_mat(
            &answer(q),
            &kin.point(3, &TIP),
            1e-12,
            format_args!("configuration {s}: the tip against forward_kinematics"),
        )?;
    }
    Ok(())
}

fn tip(rng: &mut Rng) -> Check {
    tip_with(rng, ch02::exercise_3)
}

fn tip_jacobian_with(rng: &mut Rng, answer: fn([f64; 3]) -> Mat3) -> Check {
    let model = canned::chain(3, false);
    let point = |q: &[f64; 3]| forward_kinematics(&model, q).expect("valid").point(3, &TIP);
    for s in 0..10 {
        let q = [rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0)];
        let ans = answer(q);
        let jac = point_jacobian(&model, &q, 3, &TIP).expect("valid state");
        let jac3 = Mat3::from_fn(|r, c| jac[(r, c)]);
        close_mat(
            &ans,
            &jac3,
            1e-12,
            format_args!("configuration {s}: against point_jacobian"),
        )?;
        let h = 1e-6;
        for k in 0..3 {
            let (mut qp, mut qm) = (q, q);
            qp[k] += h;
            qm[k] -= h;
            let fd = (point(&qp) - point(&qm)) / (2.0 * h);
            close_mat(
                &ans.column(k),
                &fd,
                1e-8,
                format_args!("configuration {s}: column {k} against finite differences"),
            )?;
        }
    }
    Ok(())
}

fn tip_jacobian(rng: &mut Rng) -> Check {
    tip_jacobian_with(rng, ch02::exercise_4)
}

fn free_velocity_with(rng: &mut Rng, answer: fn([f64; 7], [f64; 6]) -> Motion) -> Check {
    let mut b = ModelBuilder::new("one free body");
    b.add_body(
        "box",
        0,
        Joint::new(JointType::Free),
        Xform::identity(),
        canned::rod(2.0, 0.5, Vec3::x()),
    );
    let model = b.build().expect("valid model");
    for s in 0..8 {
        let p = rng.vec3(2.0);
        let quat = rng.quat();
        let qpos = [p.x, p.y, p.z, quat[0], quat[1], quat[2], quat[3]];
        let v = rng.vec(6, 2.0);
        let qvel = [v[0], v[1], v[2], v[3], v[4], v[5]];
        let ans = answer(qpos, qvel);
        let v_body = body_velocities(&model, &qpos, &qvel).expect("valid state")[1];
        let kin = forward_kinematics(&model, &qpos).expect("valid state");
        close_mat(
            &ans.to_vec6(),
            &kin.x_0[1].inv_apply_motion(&v_body).to_vec6(),
            1e-12,
            format_args!("sample {s}: against the library's body velocity carried to the base"),
        )?;
        let h = 1e-6;
        let pose = |dt: f64| {
            let mut q = qpos;
            model.integrate(&mut q, &qvel, dt).expect("valid");
            let kin = forward_kinematics(&model, &q).expect("valid state");
            (kin.rotation(1), kin.position(1))
        };
        let ((rp, pp), (rm, pm), (r0, p0)) = (pose(h), pose(-h), pose(0.0));
        let w_hat = (rp - rm) / (2.0 * h) * r0.transpose(); // [w]x = Rdot R^T
        let w = Vec3::new(w_hat[(2, 1)], w_hat[(0, 2)], w_hat[(1, 0)]);
        close_mat(
            &ans.w,
            &w,
            1e-7,
            format_args!("sample {s}: the angular velocity (finite differences)"),
        )?;
        close_mat(
            &(ans.v + ans.w.cross(&p0)),
            &((pp - pm) / (2.0 * h)),
            1e-7,
            format_args!("sample {s}: v_O + w x p should be the body origin's velocity"),
        )?;
        close_mat(&skew(&ans.w), &w_hat, 1e-7, format_args!("sample {s}: [w]x = Rdot R^T"))?;
    }
    Ok(())
}

fn free_velocity(rng: &mut Rng) -> Check {
    free_velocity_with(rng, ch02::exercise_5)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch02",
        "Joint models and kinematic trees",
        4,
        &[
            Exercise {
                number: 1,
                title: "A universal joint",
                hint: "E = roty(q2) rotz(q1); S's first column is the z axis seen in successor coordinates; c_J = (dS/dt) qdot, and only the first column of S depends on q",
                check: universal,
            },
            Exercise {
                number: 2,
                title: "Dof parents",
                hint: "keep, per body, the last dof at or above it; a welded body passes its parent's on",
                check: dof_parents,
            },
            Exercise {
                number: 3,
                title: "Forward kinematics by hand",
                hint: "a link at absolute angle theta points along (-sin theta, 0, -cos theta)",
                check: tip,
            },
            Exercise {
                number: 4,
                title: "The tip Jacobian",
                hint: "q[k] enters the absolute angle of link k and of every link after it",
                check: tip_jacobian,
            },
            Exercise {
                number: 5,
                title: "The free joint's velocity in world terms",
                hint: "rotate the body-frame angular velocity to the world; then move the reference point from the body origin p to the world origin",
                check: free_velocity,
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
    use mbd::spatial::{quat_to_mat, Vec6};
    use nalgebra::Matrix6x2;

    #[test]
    fn a_universal_joint_without_the_velocity_product_fails() {
        assert!(fails_naming(0..3, "c_J", |rng| universal_with(rng, |q, qd| {
            let model = two_hinge_model();
            let x_j = forward_kinematics(&model, &q).expect("valid state").x_0[2].to_motion_matrix();
            let column = |rates: [f64; 2]| body_velocities(&model, &q, &rates).expect("valid state")[2].to_vec6();
            let s = Matrix6x2::from_columns(&[column([1.0, 0.0]), column([0.0, 1.0])]);
            let v_j = s * nalgebra::Vector2::new(qd[0], qd[1]);
            // forgot that the first axis turns with q2: c_J = (dS/dt) qdot is not zero
            UniversalJoint {
                x_j,
                s,
                v_j,
                c_j: Vec6::zeros(),
            }
        })));
    }

    #[test]
    fn hanging_from_the_first_dof_of_the_parent_fails() {
        assert!(fails_naming(0..3, "dof parent array", |rng| dof_parents_with(
            rng,
            |lambda, ndof| {
                let nb = lambda.len() - 1;
                let mut first: Vec<Option<usize>> = vec![None; nb + 1];
                let mut out = Vec::new();
                for i in 1..=nb {
                    let mut parent = first[lambda[i]]; // should be the ancestor's last dof
                    let start = out.len();
                    for _ in 0..ndof[i] {
                        out.push(parent);
                        parent = Some(out.len() - 1);
                    }
                    first[i] = if ndof[i] > 0 { Some(start) } else { first[lambda[i]] };
                }
                out
            }
        )));
    }

    fn tip_of(q: [f64; 3], sign: f64) -> Vec3 {
        let lengths = [0.5, 0.49, 0.48];
        let mut theta = 0.0;
        let mut tip = Vec3::zeros();
        for k in 0..3 {
            theta += q[k];
            tip += Vec3::new(sign * theta.sin(), 0.0, -theta.cos()) * lengths[k];
        }
        tip
    }

    #[test]
    fn links_turning_the_wrong_way_fail() {
        // a turn about y takes (0, 0, -1) to (-sin, 0, -cos), not (sin, 0, -cos)
        assert!(fails_naming(0..3, "the tip", |rng| tip_with(rng, |q| tip_of(q, 1.0))));
    }

    #[test]
    fn the_transposed_jacobian_fails() {
        assert!(fails_naming(0..3, "point_jacobian", |rng| tip_jacobian_with(
            rng,
            |q| {
                let model = canned::chain(3, false);
                let jac = point_jacobian(&model, &q, 3, &TIP).expect("valid state");
                Mat3::from_fn(|r, c| jac[(c, r)]) // rows and columns swapped
            }
        )));
    }

    #[test]
    fn the_angular_velocity_left_in_body_axes_fails() {
        assert!(fails_naming(0..3, "body velocity", |rng| free_velocity_with(
            rng,
            |qpos, qvel| {
                let p = Vec3::new(qpos[0], qpos[1], qpos[2]);
                let w = Vec3::new(qvel[3], qvel[4], qvel[5]); // should be rotated to world axes
                let pdot = Vec3::new(qvel[0], qvel[1], qvel[2]);
                let _ = quat_to_mat(&[qpos[3], qpos[4], qpos[5], qpos[6]]);
                Motion::new(w, pdot - w.cross(&p))
            }
        )));
    }
}
