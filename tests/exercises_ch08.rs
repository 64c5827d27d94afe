//! Exercises of the chapter "Closed-loop systems" (book/src/loops.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_ch08`.

use mbd::kinematics::forward_kinematics;
use mbd::loops::{
    assemble_with, forward_dynamics, inverse_dynamics, loop_constraints, null_space, null_space_with, simulate, Method,
    PivotTol, SimulateOptions,
};
use mbd::model::mechanisms::{self, figure_8_3_gamma};
use mbd::model::Integrator;
use mbd::model::Model;
use mbd::spatial::{rotx, roty, rotz, xlt, Vec3, Xform};
use nalgebra::{DMatrix, DVector};

/// Exercise 1: the cylindrical row of table 8.1 (Featherstone's example 8.1) in the library's
/// convention. `x_sp = S X P = rot(E) xlt(r)` is the transform from the loop joint's predecessor
/// frame P to its successor frame S; the joint turns about and slides along z. Returns the
/// constraint-force subspace `T` (6 x 4, angular rows first) and the position error (4), whose
/// first-order change under a small displacement `d` of S (expressed with P's axes at S's
/// origin) must be `T^T d`.
fn exercise_1_answer(x_sp: &Xform) -> (DMatrix<f64>, DVector<f64>) {
    // The joint allows rotations about z and translations along z, so it can transmit moments
    // about x and y and forces along x and y: T = [e1 e2 e4 e5].
    let mut t = DMatrix::zeros(6, 4);
    for (col, row) in [0, 1, 3, 4].into_iter().enumerate() {
        t[(row, col)] = 1.0;
    }
    // Row 3 of E is S's z axis in P coordinates. Turning S by a small theta (P's axes) moves its
    // z axis from (0, 0, 1) to (theta_y, -theta_x, 1): theta_x = -E32, theta_y = E31, exactly
    // whatever the joint angle. The offset of S's origin off the axis is (r_x, r_y).
    let e = &x_sp.e;
    let err = DVector::from_vec(vec![-e[(2, 1)], e[(2, 0)], x_sp.r.x, x_sp.r.y]);
    (t, err)
}

/// Exercise 2: the loop-closure error under Baumgarte stabilization with `alpha = beta =
/// 1/t_stab`. Each error component obeys `e'' + (2/T) e' + e/T^2 = 0` (critical damping, a
/// double root at `-1/T`), so `e(t) = (A + B t) exp(-t/T)` with `A = e(0)` and
/// `B = e'(0) + e(0)/T`.
fn exercise_2_answer(t: f64, t_stab: f64, e0: f64, edot0: f64) -> f64 {
    (e0 + (edot0 + e0 / t_stab) * t) * (-t / t_stab).exp()
}

/// Exercise 3: the loop Jacobian of the planar four-bar `mechanisms::four_bar()` by hand. The
/// tree is crank (hinge about y at A = 0), coupler (hinge at (0.05, 0, 0.15) in crank
/// coordinates), rocker (hinge at (0.3, 0, 0.15) in coupler coordinates); the loop closes at the
/// rocker's point (0.05, 0, -0.3). Returns the x and z components of that point's velocity per
/// unit rate of each joint: the 2 x 3 matrix `dp/dq`, whose rows span the row space of `K`.
fn exercise_3_answer(q: [f64; 3]) -> [[f64; 3]; 2] {
    // A body turned by th about y sees its (x, z) coordinates mapped to world as
    // (c x + s z, -s x + c z).
    let turn = |th: f64, x: f64, z: f64| {
        let (s, c) = th.sin_cos();
        (c * x + s * z, -s * x + c * z)
    };
    let a = (0.0, 0.0);
    let ob = turn(q[0], 0.05, 0.15);
    let b = (a.0 + ob.0, a.1 + ob.1);
    let bc = turn(q[0] + q[1], 0.3, 0.15);
    let c = (b.0 + bc.0, b.1 + bc.1);
    let cp = turn(q[0] + q[1] + q[2], 0.05, -0.3);
    let p = (c.0 + cp.0, c.1 + cp.1);
    // Turning about y through the hinge o at unit rate moves p with y x (p - o) = (dz, 0, -dx).
    let mut jac = [[0.0; 3]; 2];
    for (j, o) in [a, b, c].into_iter().enumerate() {
        jac[0][j] = p.1 - o.1;
        jac[1][j] = -(p.0 - o.0);
    }
    jac
}

/// Exercise 4: the figure 8.3 mechanism (link lengths `l1`, `l2`, `y = (q1, q4)`) with the
/// actuators moved from joints 3 and 4 to joints 1 and 4. Returns `(u1, u4)` from the tree's
/// inverse dynamics `tau_id`. With `G = [[1, 0], [theta2', 0], [d', 0], [0, 1]]` the actuated
/// rows are `G_u = 1`, so `u = G^T tau_ID` and there is no singularity at `y1 = 0`.
fn exercise_4_answer(l1: f64, l2: f64, y1: f64, tau_id: [f64; 4]) -> [f64; 2] {
    let (s1, c1) = y1.sin_cos();
    let dd = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
    let d = dd.sqrt();
    let theta2_p = l2 * (l2 - l1 * c1) / dd;
    let d_p = l1 * l2 * s1 / d;
    [tau_id[0] + theta2_p * tau_id[1] + d_p * tau_id[2], tau_id[3]]
}

// ---------------------------------------------------------------------------------------------

/// A rotation by the small angles `th` (about x, then y, then z) and a translation `v`: to first
/// order the transform `1 - d x` of the displacement `d = [th; v]`.
fn small_displacement(th: [f64; 3], v: [f64; 3]) -> Xform {
    rotx(th[0]) * roty(th[1]) * rotz(th[2]) * xlt(Vec3::new(v[0], v[1], v[2]))
}

#[test]
fn exercise_1_cylindrical_joint_of_table_8_1() {
    // Psi = [e3, e6]: rotation about z, translation along z.
    let mut psi = DMatrix::zeros(6, 2);
    psi[(2, 0)] = 1.0;
    psi[(5, 1)] = 1.0;
    let displacements = [
        [1.0, -2.0, 0.5, 3.0, 1.5, -1.0],
        [-0.7, 0.4, 2.0, 0.0, -2.5, 0.3],
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    ];
    for (q, z) in [(0.0, 0.0), (0.7, 0.3), (2.0, -1.2), (-2.5, 0.05), (3.1, 2.0)] {
        let x_j = rotz(q) * xlt(Vec3::new(0.0, 0.0, z));
        let (t, err) = exercise_1_answer(&x_j);
        assert_eq!((t.nrows(), t.ncols(), err.len()), (6, 4, 4));
        // T is a basis of the forces that do no work on the allowed motions
        assert!((t.transpose() * &psi).amax() < 1e-15, "T^T Psi != 0");
        let sv = t.clone().svd(false, false).singular_values;
        assert!(sv.min() > 1e-3 * sv.max(), "T does not have rank 4");
        // an allowed transform, however large the motion, has no error (1e-14)
        assert!(err.amax() < 1e-14, "q = {q}, z = {z}: err = {err}");
        // a small displacement d of S (P's axes at S's origin) gives err = T^T d to first
        // order: the remainder must be below 1e-4 |d| at |d| ~ 1e-6
        for dd in displacements {
            let d = DVector::from_column_slice(&dd) * 1e-6;
            let x = rotz(q) * small_displacement([d[0], d[1], d[2]], [d[3], d[4], d[5]]) * xlt(Vec3::new(0.0, 0.0, z));
            let (_, err_d) = exercise_1_answer(&x);
            let first_order = t.transpose() * &d;
            assert!(
                (&err_d - &first_order).amax() < 1e-4 * d.amax(),
                "q = {q}, z = {z}, d = {dd:?}: err = {err_d}, T^T d = {first_order}"
            );
        }
    }
}

#[test]
fn exercise_2_baumgarte_decay_of_an_open_four_bar() {
    // The four-bar without gravity, opened by turning the rocker joint 3 mrad away from the
    // closed configuration and released with a velocity that also breaks the loop. Every
    // component of the simulated loop-closure error (RK4, h = 1 ms) must follow the answer to
    // 1e-3 of the initial error's size over 0.6 s.
    let mut m = mechanisms::four_bar();
    m.opt.gravity = Vec3::zeros();
    for (ts, qd0) in [(0.1, [0.0, 0.0, 0.0]), (0.05, [0.0, 0.0, 0.02])] {
        let mut q = m.qpos0.as_slice().to_vec();
        q[2] += 0.003;
        let s0 = loop_constraints(&m, &q, &qd0, None).unwrap();
        let e0 = s0.err.clone();
        let edot0 = &s0.kmat * DVector::from_column_slice(&qd0);
        let scale = e0.amax().max(ts * edot0.amax());
        let tr = simulate(
            &m,
            &q,
            &qd0,
            &SimulateOptions {
                method: Method::Kkt,
                integrator: Integrator::Rk4,
                h: 1e-3,
                steps: 600,
                t_stab: Some(ts),
            },
        )
        .unwrap();
        for (i, t) in tr.time.iter().enumerate().step_by(20) {
            let e = loop_constraints(&m, tr.qpos[i].as_slice(), &qd0, None).unwrap().err;
            for c in 0..e.len() {
                let want = exercise_2_answer(*t, ts, e0[c], edot0[c]);
                assert!(
                    (e[c] - want).abs() < 1e-3 * scale,
                    "T_stab = {ts}, t = {t:.3}, component {c}: simulated {:.6e}, answer {want:.6e}",
                    e[c]
                );
            }
        }
    }
}

/// The rocker point that closes the loop, in rocker coordinates.
const ROCKER_TIP: [f64; 3] = [0.05, 0.0, -0.3];

#[test]
fn exercise_3_loop_jacobian_of_the_four_bar() {
    let m = mechanisms::four_bar();
    let tip = Vec3::from(ROCKER_TIP);
    let point = |q: &[f64]| forward_kinematics(&m, q).unwrap().point(3, &tip);
    for crank in [0.0, 0.8, 2.0, -1.3, 3.0] {
        // a closed configuration with the crank at the given angle, and an open one near it
        let closed = assemble_with(&m, &[crank, 0.0, 0.0], Some(&[0])).unwrap();
        let open = [closed[0] + 0.1, closed[1] - 0.2, closed[2] + 0.15];
        for q in [[closed[0], closed[1], closed[2]], open] {
            let jac = exercise_3_answer(q);
            // against central differences of forward kinematics (1e-8 m per rad)
            let h = 1e-6;
            for j in 0..3 {
                let (mut qp, mut qm) = (q, q);
                qp[j] += h;
                qm[j] -= h;
                let v = (point(&qp) - point(&qm)) / (2.0 * h);
                assert!(
                    (jac[0][j] - v.x).abs() < 1e-8 && (jac[1][j] - v.z).abs() < 1e-8,
                    "q = {q:?}, joint {j}: answer ({}, {}), finite difference ({}, {})",
                    jac[0][j],
                    jac[1][j],
                    v.x,
                    v.z
                );
            }
        }
        // at the closed configuration the two rows span the row space of the library's K
        // (5 rows, rank 2): they annihilate its null space G and add no rank to it
        let q = [closed[0], closed[1], closed[2]];
        let jac = exercise_3_answer(q);
        let mine = DMatrix::from_row_slice(2, 3, &[jac[0], jac[1]].concat());
        let sys = loop_constraints(&m, &q, &[0.0; 3], None).unwrap();
        let ns = null_space(&sys.kmat, &DVector::zeros(sys.nc())).unwrap();
        assert_eq!(ns.rank, 2);
        assert!((&mine * &ns.g_null).amax() < 1e-12, "rows not orthogonal to G");
        let mut both = DMatrix::zeros(7, 3);
        both.rows_mut(0, 5).copy_from(&sys.kmat);
        both.rows_mut(5, 2).copy_from(&mine);
        let sv = both.svd(false, false).singular_values;
        let mut sorted: Vec<f64> = sv.iter().cloned().collect();
        sorted.sort_by(|a, b| b.total_cmp(a));
        assert!(sorted[1] > 1e-3 * sorted[0] && sorted[2] < 1e-12 * sorted[0]);
    }
}

/// A state of the figure 8.3 mechanism that satisfies the loop constraints, from `y`, `ydot`,
/// `yddot` with `y = (q1, q4)`: `q = gamma(y)`, `qdot = G ydot`, `qdd = G yddot + g`.
fn figure_8_3_state(
    m: &Model,
    l1: f64,
    l2: f64,
    y: [f64; 2],
    yd: [f64; 2],
    ydd: [f64; 2],
) -> ([f64; 4], DVector<f64>, DVector<f64>) {
    let q = figure_8_3_gamma(l1, l2, y).unwrap();
    let ind = [0, 3];
    let s0 = loop_constraints(m, &q, &[0.0; 4], None).unwrap();
    let g0 = null_space_with(&s0.kmat, &DVector::zeros(5), &PivotTol::default(), Some(&ind)).unwrap();
    let qd = &g0.g_null * DVector::from_column_slice(&yd);
    let s1 = loop_constraints(m, &q, qd.as_slice(), None).unwrap();
    let g1 = null_space_with(&s1.kmat, &s1.k, &PivotTol::default(), Some(&ind)).unwrap();
    let qdd = &g1.g_null * DVector::from_column_slice(&ydd) + &g1.g_bias;
    (q, qd, qdd)
}

#[test]
fn exercise_4_figure_8_3_driven_at_joints_1_and_4() {
    let (l1, l2) = (1.0, 0.6);
    let m = mechanisms::figure_8_3(l1, l2).unwrap();
    for (y1, y2) in [(1.0, 0.5), (0.3, -0.4), (0.0, 0.2), (-0.6, 1.1), (2.5, 0.0)] {
        let (q, qd, qdd) = figure_8_3_state(&m, l1, l2, [y1, y2], [0.7, -1.2], [2.0, 0.5]);
        let inv = inverse_dynamics(&m, &q, qd.as_slice(), qdd.as_slice(), None, &[0, 3]).unwrap();
        let t = &inv.tau_id;
        let u = exercise_4_answer(l1, l2, y1, [t[0], t[1], t[2], t[3]]);
        // against the library's G_u^-T G^T tau_ID (1e-9 relative)
        let scale = inv.u.amax().max(1.0);
        assert!(
            (u[0] - inv.u[0]).abs() < 1e-9 * scale && (u[1] - inv.u[1]).abs() < 1e-9 * scale,
            "y1 = {y1}: answer {u:?}, library {}",
            inv.u
        );
        // and against forward dynamics: the answer's forces produce the prescribed motion
        let tau = [u[0], 0.0, 0.0, u[1]];
        let fd = forward_dynamics(&m, &q, qd.as_slice(), &tau, None, Method::NullSpace, None).unwrap();
        assert!(
            (&fd.qdd - &qdd).amax() < 1e-8 * qdd.amax().max(1.0),
            "y1 = {y1}: forward dynamics gives {}, prescribed {}",
            fd.qdd,
            qdd
        );
        // the book's choice (joints 3 and 4) fails exactly at y1 = 0, where d' = 0
        let book = inverse_dynamics(&m, &q, qd.as_slice(), qdd.as_slice(), None, &[2, 3]);
        assert_eq!(book.is_err(), y1 == 0.0, "y1 = {y1}: {book:?}");
    }
}
