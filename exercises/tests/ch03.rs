//! Grader of the exercises of "The recursive Newton-Euler algorithm" (`src/ch03.rs`):
//! `cargo test -p exercises --test ch03`.

use exercises::ch03;
use exercises::grade::{close, close_all, run, Check, Exercise, Rng};
use mbd::dynamics::{bias_forces, rnea};
use mbd::kinematics::{forward_kinematics, point_jacobian, world_force_at_point};
use mbd::model::{canned, Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{Force, Mat3, SpatialInertia, Vec3, Xform};

fn gravity_torques_with(rng: &mut Rng, answer: fn([f64; 2]) -> [f64; 2]) -> Check {
    let model = canned::chain(2, false);
    for s in 0..10 {
        let q = [rng.uniform(-3.2, 3.2), rng.uniform(-3.2, 3.2)];
        let expected = bias_forces(&model, &q, &[0.0, 0.0]).expect("valid state");
        close_all(
            &answer(q),
            expected.as_slice(),
            1e-12,
            format_args!("configuration {s}: gravity torques against bias_forces(q, 0)"),
        )?;
    }
    Ok(())
}

fn gravity_torques(rng: &mut Rng) -> Check {
    gravity_torques_with(rng, ch03::exercise_1)
}

type FreeBody = fn(f64, Vec3, Mat3, &[f64], &[f64], &[f64], Vec3) -> [f64; 6];

fn free_body_with(rng: &mut Rng, answer: FreeBody) -> Check {
    for s in 0..6 {
        let m = rng.uniform(0.5, 3.0);
        let c = rng.vec3(0.3);
        // a solid box of random size, turned by a random rotation
        let (x, y, z) = (rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5));
        let d = Mat3::from_diagonal(&Vec3::new(y * y + z * z, x * x + z * z, x * x + y * y)) * (m / 12.0);
        let r = rng.rotation();
        let ic = r * d * r.transpose();
        let mut b = ModelBuilder::new("one body");
        b.opt.gravity = Vec3::new(rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0), -9.81);
        b.add_body(
            "body",
            0,
            Joint::new(JointType::Free),
            Xform::identity(),
            SpatialInertia::from_mass_com_inertia(m, c, ic),
        );
        let model = b.build().expect("valid model");
        let p = rng.vec3(1.0);
        let quat = rng.quat();
        let q = [p.x, p.y, p.z, quat[0], quat[1], quat[2], quat[3]];
        let (qd, qdd) = (rng.vec(6, 2.0), rng.vec(6, 2.0));
        let expected = rnea(&model, &q, &qd, &qdd, None).expect("valid state");
        let got = answer(m, c, ic, &q, &qd, &qdd, model.opt.gravity);
        close_all(
            &got,
            expected.as_slice(),
            1e-12 * expected.amax().max(1.0),
            format_args!("sample {s}: generalized force against RNEA"),
        )?;
    }
    Ok(())
}

fn free_body(rng: &mut Rng) -> Check {
    free_body_with(rng, ch03::exercise_2)
}

fn push_at_tip_with(rng: &mut Rng, answer: fn(&Model, &[f64], usize, Vec3, Vec3) -> Vec<f64>) -> Check {
    let model = canned::chain(5, true);
    let zeros = [0.0; 5];
    for s in 0..6 {
        let q = rng.vec(5, 2.0);
        let free = rnea(&model, &q, &zeros, &zeros, None).expect("valid state");
        let kin = forward_kinematics(&model, &q).expect("valid state");
        let body = rng.int(1, 5);
        let local = rng.vec3(0.3);
        let p = kin.point(body, &local);
        let force = rng.vec3(3.0);
        let mut f_ext = vec![Force::zero(); model.nb + 1];
        f_ext[body] = world_force_at_point(&force, &Vec3::zeros(), &p);
        let pushed = rnea(&model, &q, &zeros, &zeros, Some(&f_ext)).expect("valid state");
        let got = answer(&model, &q, body, p, force);
        let expected = &free - &pushed;
        close_all(
            &got,
            expected.as_slice(),
            1e-12 * (1.0 + expected.amax()),
            format_args!("sample {s} (body {body}): against ID(q,0,0) - ID(q,0,0,f)"),
        )?;
        let jac = point_jacobian(&model, &q, body, &local).expect("valid state");
        let jt_f = jac.transpose() * nalgebra::DVector::from_column_slice(force.as_slice());
        close_all(
            &got,
            jt_f.as_slice(),
            1e-12 * (1.0 + jt_f.amax()),
            format_args!("sample {s} (body {body}): against J^T F with the point Jacobian"),
        )?;
    }
    Ok(())
}

fn push_at_tip(rng: &mut Rng) -> Check {
    push_at_tip_with(rng, ch03::exercise_3)
}

fn accelerating_base_with(rng: &mut Rng, answer: fn([f64; 2]) -> [f64; 2]) -> Check {
    let model = canned::chain(2, false);
    for s in 0..8 {
        let q = [rng.uniform(-3.2, 3.2), rng.uniform(-3.2, 3.2)];
        let expected = bias_forces(&model, &q, &[0.0, 0.0]).expect("valid state");
        let got = answer(q);
        for k in 0..2 {
            close(
                got[k],
                expected[k],
                1e-12,
                format_args!("configuration {s}, joint {k}: the lifted torques should equal the gravity torques"),
            )?;
        }
    }
    Ok(())
}

fn accelerating_base(rng: &mut Rng) -> Check {
    accelerating_base_with(rng, ch03::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch03",
        "The recursive Newton-Euler algorithm",
        5,
        &[
            Exercise {
                number: 1,
                title: "Gravity torques by hand",
                hint: "write the heights of the two centres of mass as functions of q1 and q1 + q2, then differentiate U = g (m1 z1 + m2 z2)",
                check: gravity_torques,
            },
            Exercise {
                number: 2,
                title: "Newton and Euler for one free body",
                hint: "the centre of mass accelerates with a_O + wd x c + w x (w x c) (body axes); the force is m (a_c - g); carry the moment n_c to the origin with + c x f",
                check: free_body,
            },
            Exercise {
                number: 3,
                title: "A push at the tip",
                hint: "only the joints between the body and the base feel the force; each feels a_j . ((p - o_j) x F) with world axis a_j through world point o_j",
                check: push_at_tip,
            },
            Exercise {
                number: 4,
                title: "Gravity is an accelerating base",
                hint: "the lift is dof 0 of a three-dof model; accelerate it with qdd = [9.81, 0, 0] and read the pendulum's torques",
                check: accelerating_base,
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
    use mbd::spatial::quat_to_mat;

    /// The gravity torques of the double pendulum; `with_m2_on_joint_1` false forgets that link
    /// 2 hangs from the end of link 1.
    fn gravity(q: [f64; 2], with_m2_on_joint_1: bool) -> [f64; 2] {
        let (m1, l1, m2, l2, g) = (1.0, 0.5, 1.1, 0.49, 9.81);
        let (s1, s12) = (q[0].sin(), (q[0] + q[1]).sin());
        let du_dq2 = g * m2 * 0.5 * l2 * s12;
        let m2_arm = if with_m2_on_joint_1 { m2 * l1 * s1 } else { 0.0 };
        [g * (m1 * 0.5 * l1 * s1 + m2_arm) + du_dq2, du_dq2]
    }

    #[test]
    fn gravity_torques_without_the_second_link_on_the_first_joint_fail() {
        assert!(fails_naming(0..3, "gravity torques", |rng| gravity_torques_with(
            rng,
            |q| gravity(q, false)
        )));
    }

    #[test]
    fn euler_without_the_gyroscopic_term_fails() {
        assert!(fails_naming(0..3, "generalized force", |rng| free_body_with(
            rng,
            |m, c, ic, q, qd, qdd, g| {
                let r = quat_to_mat(&[q[3], q[4], q[5], q[6]]);
                let w = Vec3::new(qd[3], qd[4], qd[5]);
                let wd = Vec3::new(qdd[3], qdd[4], qdd[5]);
                let p_dd = Vec3::new(qdd[0], qdd[1], qdd[2]);
                let a_c_body = r.transpose() * p_dd + wd.cross(&c) + w.cross(&w.cross(&c));
                let force_body = m * (a_c_body - r.transpose() * g);
                let n_c = ic * wd; // forgot w x (I_c w)
                let n_o = n_c + c.cross(&force_body);
                let f_world = r * force_body;
                [f_world.x, f_world.y, f_world.z, n_o.x, n_o.y, n_o.z]
            }
        )));
    }

    #[test]
    fn the_moment_with_the_cross_product_reversed_fails() {
        assert!(fails_naming(0..3, "ID(q,0,0)", |rng| push_at_tip_with(
            rng,
            |model, q, body, p, force| {
                let kin = forward_kinematics(model, q).expect("valid state");
                let mut out = vec![0.0; model.nv];
                let mut j = body;
                while j != 0 {
                    let JointType::Revolute { axis } = model.joints[j].jtype else {
                        panic!("revolute joints only")
                    };
                    // F x (p - o) is minus the moment
                    out[model.v_adr[j]] = (kin.rotation(j) * axis).dot(&force.cross(&(p - kin.position(j))));
                    j = model.lambda[j];
                }
                out
            }
        )));
    }

    #[test]
    fn the_lift_accelerating_downwards_fails() {
        // a base accelerating up at g feels like gravity; the sign of its acceleration flipped
        // gives minus the gravity torques
        assert!(fails_naming(0..3, "lifted torques", |rng| accelerating_base_with(
            rng,
            |q| {
                let t = gravity(q, true);
                [-t[0], -t[1]]
            }
        )));
    }
}
