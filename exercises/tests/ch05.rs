//! Grader of the exercises of "The articulated-body algorithm" (`src/ch05.rs`):
//! `cargo test -p exercises --test ch05`.

use exercises::ch05;
use exercises::grade::{close_all, close_mat, ensure, run, Check, Exercise, Rng};
use mbd::dynamics::{aba, crba, kinetic_energy, potential_energy};
use mbd::integrate::{rk4_step, StepScratch};
use mbd::model::canned::{self, rod};
use mbd::model::{jcalc, Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{xlt, Mat3, Mat6, SpatialInertia, Vec3, Vec6, Xform};
use nalgebra::{DMatrix, DVector};

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
    b.build().expect("valid model")
}

fn cart_pole_check_with(rng: &mut Rng, answer: fn(f64, f64, f64, f64) -> [f64; 2]) -> Check {
    let model = cart_pole();
    for s in 0..10 {
        let (x, th) = (rng.uniform(-2.0, 2.0), rng.uniform(-3.2, 3.2));
        let (xd, thd) = (rng.uniform(-2.0, 2.0), rng.uniform(-4.0, 4.0));
        let (f, t) = (rng.uniform(-5.0, 5.0), rng.uniform(-1.0, 1.0));
        let expected = aba(&model, &[x, th], &[xd, thd], &[f, t], None).expect("valid state");
        close_all(
            &answer(th, thd, f, t),
            expected.as_slice(),
            1e-12 * expected.amax().max(1.0),
            format_args!("state {s}: accelerations against ABA"),
        )?;
    }
    Ok(())
}

fn cart_pole_check(rng: &mut Rng) -> Check {
    cart_pole_check_with(rng, ch05::exercise_1)
}

fn schur_with(rng: &mut Rng, answer: fn(&Mat6, &Mat6, &Mat6, &Vec6) -> Mat6) -> Check {
    // Body 1 on a free joint, body 2 on a hinge. At the identity orientation the free joint's S_1
    // is the permutation P = [0 1; 1 0] (qvel = [linear; angular]), and eliminating the hinge from
    // H gives S_1^T I^A_1 S_1 = H_11 - H_12 H_22^-1 H_21.
    for s in 0..4 {
        let mut b = ModelBuilder::new("free body + hinge");
        let body1 = SpatialInertia::from_mass_com_inertia(
            rng.uniform(1.0, 4.0),
            rng.vec3(0.1),
            Mat3::from_diagonal(&Vec3::new(0.1, 0.12, 0.08)),
        );
        let b1 = b.add_body("base", 0, Joint::new(JointType::Free), Xform::identity(), body1);
        let x_tree = Xform::rot_axis(&rng.unit3(), rng.uniform(-3.0, 3.0)) * xlt(rng.vec3(0.3));
        b.add_body(
            "arm",
            b1,
            Joint::revolute(rng.unit3()),
            x_tree,
            rod(1.2, 0.6, rng.unit3()),
        );
        let model = b.build().expect("valid model");
        let q2 = rng.uniform(-3.0, 3.0);
        let q = [0.4, -0.3, 1.0, 1.0, 0.0, 0.0, 0.0, q2];
        let i1 = model.inertia[1].to_matrix();
        let i2 = model.inertia[2].to_matrix();
        let jc = jcalc(&model.joints[2], &[q2], &[0.0]);
        let x21 = jc.x_j.compose(&model.x_tree[2]).to_motion_matrix();
        let sv = jc.s.cols[0].to_vec6();
        let got = answer(&i1, &i2, &x21, &sv);
        let h = crba(&model, &q).expect("valid state");
        let h11 = h.view((0, 0), (6, 6)).into_owned();
        let h12 = h.view((0, 6), (6, 1)).into_owned();
        let schur = h11 - &h12 * h12.transpose() / h[(6, 6)];
        let mut p = DMatrix::zeros(6, 6);
        for k in 0..3 {
            p[(k, k + 3)] = 1.0;
            p[(k + 3, k)] = 1.0;
        }
        let expected = &p * schur * p.transpose();
        let got = DMatrix::from_fn(6, 6, |r, c| got[(r, c)]);
        close_mat(
            &got,
            &expected,
            1e-12 * expected.amax(),
            format_args!("sample {s}: I^A_1 against the Schur complement of CRBA's H"),
        )?;
    }
    Ok(())
}

fn schur(rng: &mut Rng) -> Check {
    schur_with(rng, ch05::exercise_2)
}

type Rk4 = fn(&Model, &[f64], &[f64], f64) -> (Vec<f64>, Vec<f64>);

fn rk4_with(_rng: &mut Rng, answer: Rk4) -> Check {
    let model = canned::chain(2, false);
    let energy = |q: &[f64], v: &[f64]| {
        kinetic_energy(&model, q, v).expect("valid") + potential_energy(&model, q).expect("valid")
    };
    // released at rest from a fixed state (the double pendulum is chaotic: the drift bound is
    // for this swing)
    let q0 = vec![1.5, -1.0];
    let run = |h: f64, t: f64| {
        let (mut q, mut v) = (q0.clone(), vec![0.0, 0.0]);
        for _ in 0..(t / h).round() as usize {
            let (q1, v1) = answer(&model, &q, &v, h);
            q = q1;
            v = v1;
        }
        (q, v)
    };
    // (a) energy: after 2 s at h = 5 ms the total energy moves by less than 1e-5 J
    let (q, v) = run(0.005, 2.0);
    let drift = (energy(&q, &v) - energy(&q0, &[0.0, 0.0])).abs();
    ensure(
        drift.is_finite() && drift < 1e-5,
        "the energy drifts by more than 1e-5 J over 2 s at h = 5 ms",
    )?;
    // (b) order: against the library's RK4 with h = 1e-4, the error at t = 0.5 s must shrink
    // more than 12-fold when h halves from 5 ms to 2.5 ms (16-fold in the limit for order 4)
    let (mut q_ref, mut v_ref) = (q0.clone(), vec![0.0, 0.0]);
    let tau = [0.0; 2];
    let mut acc = |q: &[f64], qd: &[f64], qdd: &mut [f64]| -> mbd::Result<()> {
        qdd.copy_from_slice(aba(&model, q, qd, &tau, None)?.as_slice());
        Ok(())
    };
    let mut scratch = StepScratch::new(&model);
    for _ in 0..5000 {
        rk4_step(&model, &mut scratch, &mut acc, &mut q_ref, &mut v_ref, 1e-4).expect("valid");
    }
    let err = |h: f64| {
        let (q, v) = run(h, 0.5);
        (0..2)
            .map(|i| (q[i] - q_ref[i]).abs().max((v[i] - v_ref[i]).abs()))
            .fold(0.0, f64::max)
    };
    let (e1, e2) = (err(0.005), err(0.0025));
    ensure(e2.is_finite() && e2 < 1e-6, "the error at h = 2.5 ms is above 1e-6")?;
    ensure(
        e1 / e2 > 12.0,
        "the error shrinks less than 12-fold when h halves: not a fourth-order method",
    )
}

fn rk4(rng: &mut Rng) -> Check {
    rk4_with(rng, ch05::exercise_3)
}

type Forward = fn(&Model, &[f64], &[f64], &[f64]) -> DVector<f64>;

fn crba_route_with(rng: &mut Rng, answer: Forward) -> Check {
    let mut model = canned::floating_base_ball_arms();
    for (k, j) in model.joints.iter_mut().enumerate() {
        j.armature = 0.02 * k as f64;
    }
    for s in 0..4 {
        let mut q = model.qpos0.clone();
        let v = rng.vec(model.nv, 1.0);
        model.integrate(q.as_mut_slice(), &v, 1.0).expect("valid");
        let qd = rng.vec(model.nv, 1.0);
        let tau = rng.vec(model.nv, 1.0);
        let expected = aba(&model, q.as_slice(), &qd, &tau, None).expect("valid state");
        let got = answer(&model, q.as_slice(), &qd, &tau);
        close_mat(
            &got,
            &expected,
            1e-10 * expected.amax().max(1.0),
            format_args!("state {s}: qdd against ABA"),
        )?;
    }
    Ok(())
}

fn crba_route(rng: &mut Rng) -> Check {
    crba_route_with(rng, ch05::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch05",
        "The articulated-body algorithm",
        7,
        &[
            Exercise {
                number: 1,
                title: "The cart-pole",
                hint: "write T and U with the pole's centre of mass at (x - a sin th, -a cos th), a = L/2; Lagrange gives a 2x2 linear system in (x'', th'')",
                check: cart_pole_check,
            },
            Exercise {
                number: 2,
                title: "Articulated inertia is a Schur complement",
                hint: "U = I_2 s, D = s^T U, I^a_2 = I_2 - U U^T / D; then X^T I^a_2 X",
                check: schur,
            },
            Exercise {
                number: 3,
                title: "RK4 with ABA",
                hint: "four stages k1..k4 on the pair (q, qd); the position stages are the stage velocities; weights 1/6, 2/6, 2/6, 1/6",
                check: rk4,
            },
            Exercise {
                number: 4,
                title: "The inertia-matrix route",
                hint: "hand_c gives H and C; solve H qdd = tau - C with H.cholesky()",
                check: crba_route,
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
    fn the_cart_pole_without_the_centripetal_term_fails() {
        assert!(fails_naming(0..3, "accelerations", |rng| cart_pole_check_with(
            rng,
            |theta, _thetad, force, torque| {
                let (big_m, m, l, g) = (2.0, 0.5, 0.8, 9.81);
                let a = 0.5 * l;
                let j = m * a * a + m * l * l / 12.0;
                let (s, c) = theta.sin_cos();
                let (h11, h12, h22) = (big_m + m, -m * a * c, j);
                let r1 = force; // forgot - m a sin(th) th'^2
                let r2 = torque - m * g * a * s;
                let det = h11 * h22 - h12 * h12;
                [(h22 * r1 - h12 * r2) / det, (h11 * r2 - h12 * r1) / det]
            }
        )));
    }

    #[test]
    fn the_composite_inertia_instead_of_the_articulated_fails() {
        assert!(fails_naming(0..3, "I^A_1", |rng| schur_with(rng, |i1, i2, x21, _s| {
            i1 + x21.transpose() * i2 * x21 // forgot to remove U U^T / D
        })));
    }

    #[test]
    fn equal_weights_for_the_four_stages_fail() {
        assert!(fails_naming(0..1, "energy", |rng| rk4_with(rng, |model, q, qd, h| {
            let n = model.nv;
            let acc = |q: &[f64], v: &[f64]| aba(model, q, v, &vec![0.0; n], None).expect("valid state");
            let shift =
                |x: &[f64], dx: &[f64], c: f64| -> Vec<f64> { x.iter().zip(dx).map(|(a, b)| a + c * b).collect() };
            let k1v = acc(q, qd);
            let k1q = qd.to_vec();
            let (q2, v2) = (shift(q, &k1q, 0.5 * h), shift(qd, k1v.as_slice(), 0.5 * h));
            let k2v = acc(&q2, &v2);
            let (q3, v3) = (shift(q, &v2, 0.5 * h), shift(qd, k2v.as_slice(), 0.5 * h));
            let k3v = acc(&q3, &v3);
            let (q4, v4) = (shift(q, &v3, h), shift(qd, k3v.as_slice(), h));
            let k4v = acc(&q4, &v4);
            // (k1 + k2 + k3 + k4) / 4 in place of (k1 + 2 k2 + 2 k3 + k4) / 6
            let q_new = (0..n)
                .map(|i| q[i] + h / 4.0 * (k1q[i] + v2[i] + v3[i] + v4[i]))
                .collect();
            let v_new = (0..n)
                .map(|i| qd[i] + h / 4.0 * (k1v[i] + k2v[i] + k3v[i] + k4v[i]))
                .collect();
            (q_new, v_new)
        })));
    }

    #[test]
    fn forward_dynamics_without_the_bias_force_fails() {
        assert!(fails_naming(0..3, "qdd", |rng| crba_route_with(
            rng,
            |model, q, _qd, tau| {
                let h = crba(model, q).expect("valid state");
                // forgot C(q, qd): solves H qdd = tau
                h.cholesky()
                    .expect("H is positive definite")
                    .solve(&DVector::from_column_slice(tau))
            }
        )));
    }
}
