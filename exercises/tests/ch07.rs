//! Grader of the exercises of "Closed-loop systems" (`src/ch07.rs`):
//! `cargo test -p exercises --test ch07`.

use exercises::ch07;
use exercises::grade::{close, close_mat, ensure, run, Check, Exercise, Rng};
use mbd::kinematics::forward_kinematics;
use mbd::loops::{
    assemble_with, forward_dynamics, inverse_dynamics, loop_constraints, null_space, null_space_with, simulate, Method,
    PivotTol, SimulateOptions,
};
use mbd::model::mechanisms::{self, figure_8_3_gamma};
use mbd::model::{Integrator, Model};
use mbd::spatial::{rotx, roty, rotz, xlt, Vec3, Xform};
use nalgebra::{DMatrix, DVector};

/// A rotation by the small angles `th` (about x, then y, then z) and a translation `v`: to first
/// order the transform `1 - d x` of the displacement `d = [th; v]`.
fn small_displacement(th: [f64; 3], v: [f64; 3]) -> Xform {
    rotx(th[0]) * roty(th[1]) * rotz(th[2]) * xlt(Vec3::new(v[0], v[1], v[2]))
}

fn cylindrical_with(rng: &mut Rng, answer: fn(&Xform) -> (DMatrix<f64>, DVector<f64>)) -> Check {
    let mut psi = DMatrix::zeros(6, 2);
    psi[(2, 0)] = 1.0;
    psi[(5, 1)] = 1.0;
    for s in 0..6 {
        let (q, z) = (rng.uniform(-3.2, 3.2), rng.uniform(-2.0, 2.0));
        let (t, err) = answer(&(rotz(q) * xlt(Vec3::new(0.0, 0.0, z))));
        ensure(
            (t.nrows(), t.ncols(), err.len()) == (6, 4, 4),
            "T must be 6 x 4 and the error hold 4 numbers",
        )?;
        ensure(
            (t.transpose() * &psi).amax() < 1e-15,
            "T^T Psi should vanish: T must do no work on the allowed motions",
        )?;
        let sv = t.clone().svd(false, false).singular_values;
        ensure(sv.min() > 1e-3 * sv.max(), "T should have rank 4")?;
        ensure(
            err.amax() < 1e-14,
            format_args!("sample {s}: an allowed transform should have no position error"),
        )?;
        for k in 0..4 {
            let d = DVector::from_vec(rng.vec(6, 1.0)) * 1e-6;
            let x = rotz(q) * small_displacement([d[0], d[1], d[2]], [d[3], d[4], d[5]]) * xlt(Vec3::new(0.0, 0.0, z));
            let (_, err_d) = answer(&x);
            let first_order = t.transpose() * &d;
            close_mat(
                &err_d,
                &first_order,
                1e-4 * d.amax(),
                format_args!("sample {s}, displacement {k}: the error should change by T^T d to first order"),
            )?;
        }
    }
    Ok(())
}

fn cylindrical(rng: &mut Rng) -> Check {
    cylindrical_with(rng, ch07::exercise_1)
}

fn critical_damping_with(rng: &mut Rng, answer: fn(f64, f64, f64, f64) -> f64) -> Check {
    // The four-bar without gravity, opened at the rocker joint and released; every component of
    // the simulated loop-closure error (RK4, h = 1 ms) must follow the answer over 0.6 s.
    let mut m = mechanisms::four_bar();
    m.opt.gravity = Vec3::zeros();
    for (ts, qd0) in [
        (rng.uniform(0.05, 0.15), [0.0, 0.0, 0.0]),
        (0.05, [0.0, 0.0, rng.uniform(0.01, 0.03)]),
    ] {
        let mut q = m.qpos0.as_slice().to_vec();
        q[2] += rng.uniform(0.002, 0.004);
        let s0 = loop_constraints(&m, &q, &qd0, None).expect("valid state");
        let e0 = s0.err.clone();
        let edot0 = &s0.kmat * DVector::from_column_slice(&qd0);
        let scale = e0.amax().max(ts * edot0.amax());
        let opts = SimulateOptions {
            method: Method::Kkt,
            integrator: Integrator::Rk4,
            h: 1e-3,
            steps: 600,
            t_stab: Some(ts),
        };
        let tr = simulate(&m, &q, &qd0, &opts).expect("valid simulation");
        for (i, t) in tr.time.iter().enumerate().step_by(20) {
            let e = loop_constraints(&m, tr.qpos[i].as_slice(), &qd0, None)
                .expect("valid")
                .err;
            for c in 0..e.len() {
                close(
                    answer(*t, ts, e0[c], edot0[c]),
                    e[c],
                    1e-3 * scale,
                    format_args!("T_stab = {ts:.3} s, t = {t:.3} s, component {c}: against the simulated error"),
                )?;
            }
        }
    }
    Ok(())
}

fn critical_damping(rng: &mut Rng) -> Check {
    critical_damping_with(rng, ch07::exercise_2)
}

const ROCKER_TIP: [f64; 3] = [0.05, 0.0, -0.3];

fn loop_jacobian_with(rng: &mut Rng, answer: fn([f64; 3]) -> [[f64; 3]; 2]) -> Check {
    let m = mechanisms::four_bar();
    let tip = Vec3::from(ROCKER_TIP);
    let point = |q: &[f64]| forward_kinematics(&m, q).expect("valid").point(3, &tip);
    for _ in 0..5 {
        let crank = rng.uniform(-3.0, 3.0);
        let closed = assemble_with(&m, &[crank, 0.0, 0.0], Some(&[0])).expect("the four-bar assembles");
        let open = [
            closed[0] + rng.uniform(-0.2, 0.2),
            closed[1] + rng.uniform(-0.2, 0.2),
            closed[2] + rng.uniform(-0.2, 0.2),
        ];
        for q in [[closed[0], closed[1], closed[2]], open] {
            let jac = answer(q);
            let h = 1e-6;
            for j in 0..3 {
                let (mut qp, mut qm) = (q, q);
                qp[j] += h;
                qm[j] -= h;
                let v = (point(&qp) - point(&qm)) / (2.0 * h);
                close(
                    jac[0][j],
                    v.x,
                    1e-8,
                    format_args!("crank {crank:.2}: dx/dq{} against finite differences", j + 1),
                )?;
                close(
                    jac[1][j],
                    v.z,
                    1e-8,
                    format_args!("crank {crank:.2}: dz/dq{} against finite differences", j + 1),
                )?;
            }
        }
        // at the closed configuration the rows span the row space of the library's K
        let q = [closed[0], closed[1], closed[2]];
        let jac = answer(q);
        let mine = DMatrix::from_row_slice(2, 3, &[jac[0], jac[1]].concat());
        let sys = loop_constraints(&m, &q, &[0.0; 3], None).expect("valid");
        let ns = null_space(&sys.kmat, &DVector::zeros(sys.nc())).expect("valid");
        ensure(
            (&mine * &ns.g_null).amax() < 1e-12,
            "your rows should annihilate the null space G of K",
        )?;
        let mut both = DMatrix::zeros(7, 3);
        both.rows_mut(0, 5).copy_from(&sys.kmat);
        both.rows_mut(5, 2).copy_from(&mine);
        let mut sv: Vec<f64> = both.svd(false, false).singular_values.iter().cloned().collect();
        sv.sort_by(|a, b| b.total_cmp(a));
        ensure(
            sv[1] > 1e-3 * sv[0] && sv[2] < 1e-12 * sv[0],
            "your two rows and K together should have rank 2",
        )?;
    }
    Ok(())
}

fn loop_jacobian(rng: &mut Rng) -> Check {
    loop_jacobian_with(rng, ch07::exercise_3)
}

/// A state of the figure 8.3 mechanism that satisfies the loop constraints, from y, ydot, yddot.
fn figure_8_3_state(
    m: &Model,
    l1: f64,
    l2: f64,
    y: [f64; 2],
    yd: [f64; 2],
    ydd: [f64; 2],
) -> ([f64; 4], DVector<f64>, DVector<f64>) {
    let q = figure_8_3_gamma(l1, l2, y).expect("valid");
    let ind = [0, 3];
    let s0 = loop_constraints(m, &q, &[0.0; 4], None).expect("valid");
    let g0 = null_space_with(&s0.kmat, &DVector::zeros(5), &PivotTol::default(), Some(&ind)).expect("valid");
    let qd = &g0.g_null * DVector::from_column_slice(&yd);
    let s1 = loop_constraints(m, &q, qd.as_slice(), None).expect("valid");
    let g1 = null_space_with(&s1.kmat, &s1.k, &PivotTol::default(), Some(&ind)).expect("valid");
    let qdd = &g1.g_null * DVector::from_column_slice(&ydd) + &g1.g_bias;
    (q, qd, qdd)
}

fn moving_actuator_with(rng: &mut Rng, answer: fn(f64, f64, f64, [f64; 4]) -> [f64; 2]) -> Check {
    let (l1, l2) = (1.0, 0.6);
    let m = mechanisms::figure_8_3(l1, l2).expect("valid");
    let mut ys = vec![(0.0, rng.uniform(-1.0, 1.0))];
    for _ in 0..5 {
        ys.push((rng.uniform(-2.5, 2.5), rng.uniform(-1.0, 1.0)));
    }
    for (y1, y2) in ys {
        let yd = [rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5)];
        let ydd = [rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)];
        let (q, qd, qdd) = figure_8_3_state(&m, l1, l2, [y1, y2], yd, ydd);
        let inv = inverse_dynamics(&m, &q, qd.as_slice(), qdd.as_slice(), None, &[0, 3]).expect("valid");
        let t = &inv.tau_id;
        let u = answer(l1, l2, y1, [t[0], t[1], t[2], t[3]]);
        let scale = inv.u.amax().max(1.0);
        close(
            u[0],
            inv.u[0],
            1e-9 * scale,
            format_args!("y1 = {y1:.3}: u1 against closed-loop inverse dynamics"),
        )?;
        close(
            u[1],
            inv.u[1],
            1e-9 * scale,
            format_args!("y1 = {y1:.3}: u4 against closed-loop inverse dynamics"),
        )?;
        let tau = [u[0], 0.0, 0.0, u[1]];
        let fd = forward_dynamics(&m, &q, qd.as_slice(), &tau, None, Method::NullSpace, None).expect("valid");
        ensure(
            (&fd.qdd - &qdd).amax() < 1e-8 * qdd.amax().max(1.0),
            format_args!("y1 = {y1:.3}: your forces should produce the prescribed motion (forward dynamics)"),
        )?;
        // the premise of the exercise: the book's actuation (joints 3 and 4) fails exactly at y1 = 0
        let book = inverse_dynamics(&m, &q, qd.as_slice(), qdd.as_slice(), None, &[2, 3]);
        ensure(
            book.is_err() == (y1 == 0.0),
            "grader: the library's actuation at joints 3 and 4 should fail exactly at y1 = 0",
        )?;
    }
    Ok(())
}

fn moving_actuator(rng: &mut Rng) -> Check {
    moving_actuator_with(rng, ch07::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch07",
        "Closed-loop systems",
        8,
        &[
            Exercise {
                number: 1,
                title: "A row of table 8.1",
                hint: "T's columns are the unit forces the joint can transmit (moments about x and y, forces along x and y); the error is read from row 3 of E and from r",
                check: cylindrical,
            },
            Exercise {
                number: 2,
                title: "Critical damping",
                hint: "e'' + (2/T) e' + e/T^2 = 0 has a double root at -1/T",
                check: critical_damping,
            },
            Exercise {
                number: 3,
                title: "The loop Jacobian by hand",
                hint: "turning about y through hinge o at unit rate moves p with y x (p - o) = (p_z - o_z, 0, -(p_x - o_x))",
                check: loop_jacobian,
            },
            Exercise {
                number: 4,
                title: "Moving the actuator",
                hint: "with joints 1 and 4 actuated, G_u is the identity and u = G^T tau_ID; G's middle rows are theta2'(y1) and d'(y1)",
                check: moving_actuator,
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
    use mbd::kinematics::point_jacobian;

    #[test]
    fn the_tilt_about_x_with_its_sign_flipped_fails() {
        assert!(fails_naming(0..3, "T^T d", |rng| cylindrical_with(rng, |x_sp| {
            let mut t = DMatrix::zeros(6, 4);
            for (col, row) in [0, 1, 3, 4].into_iter().enumerate() {
                t[(row, col)] = 1.0;
            }
            let e = &x_sp.e;
            // theta_x is -E32
            (t, DVector::from_vec(vec![e[(2, 1)], e[(2, 0)], x_sp.r.x, x_sp.r.y]))
        })));
    }

    #[test]
    fn the_damped_solution_with_a_sign_slip_fails() {
        assert!(fails_naming(0..3, "against the simulated error", |rng| {
            critical_damping_with(
                rng,
                |t, t_stab, e0, edot0| (e0 + (edot0 - e0 / t_stab) * t) * (-t / t_stab).exp(), // + e0/T
            )
        }));
    }

    #[test]
    fn the_z_row_with_its_sign_flipped_fails() {
        assert!(fails_naming(0..3, "dz/dq", |rng| loop_jacobian_with(rng, |q| {
            let m = mechanisms::four_bar();
            let jac = point_jacobian(&m, &q, 3, &Vec3::from(ROCKER_TIP)).expect("valid state");
            // y x (p - o) has -(p - o)_x in z: the z row taken with the wrong sign
            [
                [jac[(0, 0)], jac[(0, 1)], jac[(0, 2)]],
                [-jac[(2, 0)], -jac[(2, 1)], -jac[(2, 2)]],
            ]
        })));
    }

    #[test]
    fn forces_without_the_slider_row_fail() {
        assert!(fails_naming(0..3, "u1", |rng| moving_actuator_with(
            rng,
            |l1, l2, y1, tau_id| {
                let c1 = y1.cos();
                let dd = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
                let theta2_p = l2 * (l2 - l1 * c1) / dd;
                // forgot the d' tau_3 term of G^T tau
                [tau_id[0] + theta2_p * tau_id[1], tau_id[3]]
            }
        )));
    }
}
