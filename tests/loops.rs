//! Closed-loop systems (Featherstone chapter 8): every quantity is held against an independent
//! route.
//!
//! - `K` against the dense Jacobian formula (8.17) and against finite differences of the
//!   loop-closure error (table 8.1), `k` against finite differences of `K qdot`;
//! - the three solution methods of 8.5 against each other, and the equation of motion itself;
//! - closed-loop inverse dynamics against forward dynamics, and against the closed form of
//!   figure 8.3;
//! - `C - tau^a` against the Jacobian-transpose formula (8.28);
//! - MuJoCo's connect/weld against their own residuals;
//! - simulation drift with and without Baumgarte stabilization.
//!
//! Random states are consistent: the independent variables `y` are perturbed and the rest is
//! found by `assemble_with`; velocities are `G ydot`.

use mbd::error::Error;
use mbd::integrate::Trajectory;
use mbd::kinematics::{forward_kinematics, point_jacobian};
use mbd::loops::*;
use mbd::model::mechanisms::{self, figure_8_3_gamma};
use mbd::model::{canned, jcalc, Equality, Integrator, Joint, JointType, LoopJoint, Model, ModelBuilder};
use mbd::spatial::{
    mat_to_quat, quat_from_axis_angle, quat_mul, rotx, roty, rotz, xlt, Mat3, SpatialInertia, Vec3, Xform,
};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

/// `max |a - b| / max(1, max |b|)`.
fn rel(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    assert_eq!(a.shape(), b.shape());
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    (a - b).iter().fold(0.0f64, |m, v| m.max(v.abs())) / scale
}

fn relv(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    rel(
        &DMatrix::from_column_slice(a.len(), 1, a.as_slice()),
        &DMatrix::from_column_slice(b.len(), 1, b.as_slice()),
    )
}

fn zeros(n: usize) -> Vec<f64> {
    vec![0.0; n]
}

fn sys(m: &Model, q: &[f64], qd: &[f64]) -> LoopSystem {
    loop_constraints(m, q, qd, None).unwrap()
}

/// Central finite-difference Jacobian of the stacked loop-closure error along each dof.
fn fd_err_jacobian(m: &Model, q: &[f64]) -> DMatrix<f64> {
    let h = 1e-6;
    let nc = loop_nc(m);
    let mut jac = DMatrix::zeros(nc, m.nv);
    for j in 0..m.nv {
        let mut dq = zeros(m.nv);
        dq[j] = 1.0;
        let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
        m.integrate(&mut qp, &dq, h).unwrap();
        m.integrate(&mut qm, &dq, -h).unwrap();
        let d = (sys(m, &qp, &zeros(m.nv)).err - sys(m, &qm, &zeros(m.nv)).err) / (2.0 * h);
        jac.column_mut(j).copy_from(&d);
    }
    jac
}

/// Central finite difference of `K(q(t)) qdot` along `q(t) = q (+) t qdot`: `Kdot qdot`.
fn fd_kdot_qd(m: &Model, q: &[f64], qd: &[f64]) -> DVector<f64> {
    let h = 1e-6;
    let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
    m.integrate(&mut qp, qd, h).unwrap();
    m.integrate(&mut qm, qd, -h).unwrap();
    let v = DVector::from_column_slice(qd);
    (sys(m, &qp, qd).kmat * &v - sys(m, &qm, qd).kmat * &v) / (2.0 * h)
}

/// Step size of a perturbation of dof `d`: radians for rotations, a tenth for translations.
fn dof_scale(m: &Model, d: usize) -> f64 {
    let b = m.dof_body[d];
    let k = d - m.v_adr[b];
    match m.joints[b].jtype {
        JointType::Prismatic { .. } => 0.1,
        JointType::Cylindrical { .. } if k == 1 => 0.1,
        JointType::Planar if k > 0 => 0.1,
        JointType::Free if k < 3 => 0.1,
        _ => 1.0,
    }
}

/// A consistent state near `qpos0`: the independent variables moved by `amp * dy` (scaled per
/// dof type), the rest assembled; `qd = G ydot`.
fn consistent_state(m: &Model, dy: &[f64], ydot: &[f64], amp: f64) -> (DVector<f64>, DVector<f64>) {
    let q0 = m.qpos0.clone();
    let s0 = sys(m, q0.as_slice(), &zeros(m.nv));
    let ns0 = null_space(&s0.kmat, &DVector::zeros(s0.nc())).unwrap();
    let mut dq = zeros(m.nv);
    for (i, &d) in ns0.independent.iter().enumerate() {
        dq[d] = amp * dof_scale(m, d) * dy[i % dy.len()];
    }
    let mut q = q0.as_slice().to_vec();
    m.integrate(&mut q, &dq, 1.0).unwrap();
    let q = assemble_with(m, &q, Some(&ns0.independent)).unwrap();
    // y really stayed where it was put (for the scalar coordinates: a ball joint's
    // components are local increments, which do not add up to a fixed rotation-vector component)
    let moved = m.difference(q0.as_slice(), q.as_slice()).unwrap();
    for &d in &ns0.independent {
        let b = m.dof_body[d];
        if matches!(m.joints[b].jtype, JointType::Spherical)
            || (matches!(m.joints[b].jtype, JointType::Free) && d - m.v_adr[b] >= 3)
        {
            continue;
        }
        assert!(
            (moved[d] - dq[d]).abs() < 1e-9,
            "{}: independent dof {d} moved during assembly",
            m.name
        );
    }
    let s = sys(m, q.as_slice(), &zeros(m.nv));
    let ns = null_space(&s.kmat, &DVector::zeros(s.nc())).unwrap();
    let yd = DVector::from_iterator(ns.g_null.ncols(), (0..ns.g_null.ncols()).map(|i| ydot[i % ydot.len()]));
    let qd = &ns.g_null * yd;
    (q, qd)
}

/// Everything that must hold at a consistent state of a closed-loop model.
fn check_consistent_state(m: &Model, q: &DVector<f64>, qd: &DVector<f64>, ydd: &[f64], t_stab: Option<f64>) {
    let name = &m.name;
    let (q, qd) = (q.as_slice(), qd.as_slice());
    let s = loop_constraints(m, q, qd, t_stab).unwrap();
    assert!(s.err.amax() < 1e-10, "{name}: not closed ({:.2e})", s.err.amax());
    let scale = s.kmat.amax().max(1.0);
    assert!(
        (&s.kmat * DVector::from_column_slice(qd)).amax() < 1e-12 * scale,
        "{name}: K qdot != 0"
    );
    // K: table 8.4 = the dense Jacobian formula = d err / dq
    let kd = loop_jacobian_dense(m, q).unwrap();
    assert!(
        rel(&s.kmat, &kd) < 1e-12,
        "{name}: K vs dense {:.2e}",
        rel(&s.kmat, &kd)
    );
    let kfd = fd_err_jacobian(m, q);
    assert!(
        rel(&s.kmat, &kfd) < 1e-7,
        "{name}: K vs FD of err {:.2e}\nK = {}\nFD = {}",
        rel(&s.kmat, &kfd),
        s.kmat,
        kfd
    );
    // k = -Kdot qdot
    let kdot = fd_kdot_qd(m, q, qd);
    assert!(
        relv(&(-&s.k), &kdot) < 1e-6,
        "{name}: k vs FD {:.2e}: {} vs {}",
        relv(&(-&s.k), &kdot),
        s.k,
        -kdot
    );
    // the three methods of 8.5 give one qdd (and one minimum-norm lambda)
    let tau: Vec<f64> = (0..m.nv).map(|i| 0.3 * ydd[i % ydd.len()]).collect();
    let sols: Vec<ClosedLoopSolution> = Method::ALL
        .iter()
        .map(|&meth| forward_dynamics(m, q, qd, &tau, None, meth, t_stab).unwrap())
        .collect();
    for sol in &sols[1..] {
        let e = relv(&sol.qdd, &sols[0].qdd);
        assert!(e < 1e-9, "{name}: qdd differs between methods by {e:.2e}");
        assert_eq!(sol.rank, sols[0].rank);
    }
    let (l1, l2) = (sols[0].lambda.as_ref().unwrap(), sols[1].lambda.as_ref().unwrap());
    assert!(
        relv(l1, l2) < 1e-9,
        "{name}: lambda differs between KKT and lambda-first by {:.2e}",
        relv(l1, l2)
    );
    // ... and it solves the equations of motion (8.34), (8.35)
    let h = mbd::dynamics::crba(m, q).unwrap();
    let c = mbd::dynamics::bias_forces(m, q, qd).unwrap();
    let lhs = &h * &sols[0].qdd + c - DVector::from_column_slice(&tau);
    assert!(
        relv(&lhs, &(s.kmat.transpose() * l1)) < 1e-9,
        "{name}: H qdd + C - tau != K^T lambda"
    );
    assert!(
        relv(&(&s.kmat * &sols[2].qdd), &s.rhs()) < 1e-9,
        "{name}: K qdd != k + k_stab"
    );
    // closed-loop inverse dynamics inverts forward dynamics: a consistent qdd = G ydd + g,
    // actuators on the independent variables (properly actuated)
    let ns = null_space(&s.kmat, &s.k).unwrap();
    let ydd_v = DVector::from_iterator(ns.g_null.ncols(), (0..ns.g_null.ncols()).map(|i| ydd[i % ydd.len()]));
    let qdd = &ns.g_null * ydd_v + &ns.g_bias;
    let inv = inverse_dynamics(m, q, qd, qdd.as_slice(), None, &ns.independent).unwrap();
    assert!(inv.actuation.proper());
    for meth in Method::ALL {
        let back = forward_dynamics(m, q, qd, inv.tau.as_slice(), None, meth, None)
            .unwrap()
            .qdd;
        assert!(
            relv(&back, &qdd) < 1e-9,
            "{name}: forward(inverse(qdd)) != qdd ({meth:?}) by {:.2e}",
            relv(&back, &qdd)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// every loop-joint type of table 8.1, on a two-branch rig

/// A rig with two branches, base -> free body a -> revolute body b, and base -> revolute c ->
/// prismatic d, closed by a loop joint of type `jt` between d (predecessor) and b (successor).
/// The frames are chosen so that the loop is closed at `qpos0` with the joint displaced by a
/// non-trivial allowed motion.
/// A tree of two branches from the base, `base -> a -> b` and `base -> c -> d`, each body given
/// as (joint, its origin in the parent's frame, inertia); returns the builder and the body
/// numbers of a, b, c, d.
fn two_branches(name: &str, bodies: [(Joint, [f64; 3], SpatialInertia); 4]) -> (ModelBuilder, [usize; 4]) {
    let mut mb = ModelBuilder::new(name);
    let mut ids = [0; 4];
    for (k, (joint, pos, inertia)) in bodies.into_iter().enumerate() {
        let parent = if k % 2 == 1 { ids[k - 1] } else { 0 };
        ids[k] = mb.add_body(["a", "b", "c", "d"][k], parent, joint, xlt(Vec3::from(pos)), inertia);
    }
    (mb, ids)
}

fn rig(jt: JointType) -> Model {
    let box_i = |m: f64| {
        SpatialInertia::from_mass_com_inertia(
            m,
            Vec3::new(0.05, -0.02, 0.03),
            Mat3::from_diagonal(&Vec3::new(0.02, 0.03, 0.04)),
        )
    };
    let (mut mb, [a, b, _, d]) = two_branches(
        &format!("rig_{}", jt.name()),
        [
            (Joint::new(JointType::Free), [0.0; 3], box_i(2.0)),
            (Joint::revolute(Vec3::new(0.3, 0.5, 0.8)), [0.2, 0.1, -0.1], box_i(1.0)),
            (Joint::revolute(Vec3::x()), [0.6, 0.0, 0.0], box_i(1.5)),
            (Joint::prismatic(Vec3::new(0.0, 0.6, 0.8)), [0.0, 0.2, 0.1], box_i(0.7)),
        ],
    );
    let qa = quat_from_axis_angle(&Vec3::new(0.2, -0.4, 0.9).normalize(), 0.7);
    mb.set_qpos0(a, &[0.3, 0.1, 0.4, qa[0], qa[1], qa[2], qa[3]]);
    let mut m = mb.build().unwrap();
    let kin = forward_kinematics(&m, m.qpos0.as_slice()).unwrap();
    let x_p = rotx(0.4) * roty(-0.3) * xlt(Vec3::new(-0.1, 0.2, 0.05));
    let qj: Vec<f64> = match jt {
        JointType::Spherical => quat_from_axis_angle(&Vec3::new(1.0, -2.0, 0.5).normalize(), 1.1).to_vec(),
        _ => (0..jt.nq()).map(|k| 0.9 - 0.6 * k as f64).collect(),
    };
    let x_j = jcalc(&Joint::new(jt), &qj, &zeros(jt.nv())).x_j;
    // S X 0 = X_J P X 0  =>  X_S = S X 0 (b X 0)^-1
    let s0 = x_j.compose(&x_p.compose(&kin.x_0[d]));
    let x_s = s0.compose(&kin.x_0[b].inverse());
    m.loops.push(LoopJoint {
        name: "closure".into(),
        jtype: jt,
        pred: d,
        succ: b,
        x_p,
        x_s,
    });
    m.validate().unwrap();
    m
}

fn loop_types() -> Vec<JointType> {
    let z = Vec3::z();
    vec![
        JointType::Revolute { axis: z },
        JointType::Prismatic { axis: z },
        JointType::Helical { axis: z, pitch: 0.15 },
        JointType::Cylindrical { axis: z },
        JointType::Planar,
        JointType::Spherical,
        JointType::Fixed,
    ]
}

#[test]
fn every_loop_joint_type_on_a_two_branch_rig() {
    for jt in loop_types() {
        let m = rig(jt);
        let p = loop_properties(&m, m.qpos0.as_slice()).unwrap();
        assert_eq!((p.n, p.nc, p.rank), (9, 6 - jt.nv(), 6 - jt.nv()), "{}", jt.name());
        assert!(p.properly_constrained());
        for (i, amp) in [0.0, 0.2, 0.4].into_iter().enumerate() {
            let dy = [0.7, -0.4, 0.9, -1.0, 0.3, 0.5, -0.8, 0.2];
            let yd = [0.5, -1.2, 0.8, 0.3, -0.6, 1.0, 0.4, -0.9];
            let (q, qd) = consistent_state(&m, &dy[i..], &yd[i..], amp);
            check_consistent_state(&m, &q, &qd, &[1.0, -0.5, 2.0, 0.3], Some(0.1));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the canned mechanisms

#[test]
fn mechanisms_have_the_documented_structure() {
    // (name, n, n^c, rank, mobility) as in the table of model::mechanisms
    let expected = [
        ("four_bar", 3, 5, 2, 1),
        ("spatial_four_bar", 5, 3, 3, 2),
        ("slider_crank", 3, 5, 2, 1),
        ("figure_8_3", 4, 5, 2, 2),
        ("double_four_bar", 5, 10, 4, 1),
        ("planar_3rrr", 9, 15, 6, 3),
    ];
    for ((name, m), (ename, n, nc, r, mob)) in mechanisms::all().into_iter().zip(expected) {
        assert_eq!(name, ename);
        let p = loop_properties(&m, m.qpos0.as_slice()).unwrap();
        assert_eq!((p.n, p.nc, p.rank, p.mobility), (n, nc, r, mob), "{name}");
        assert_eq!(p.overconstrained(), r < nc, "{name}");
        let s = sys(&m, m.qpos0.as_slice(), &zeros(m.nv));
        assert!(s.err.amax() < 1e-14, "{name}: qpos0 does not close the loops");
        // complete pivoting and the SVD agree on the rank
        let sv = s.kmat.clone().svd(false, false).singular_values;
        let svd_rank = sv.iter().filter(|&&x| x > 1e-10 * sv.amax()).count();
        assert_eq!(svd_rank, r, "{name}");
    }
}

#[test]
fn planar_four_bar_with_a_revolute_loop_joint_is_overconstrained() {
    let m = mechanisms::four_bar();
    let s = sys(&m, m.qpos0.as_slice(), &zeros(3));
    let p = LoopProperties::of(&s.kmat);
    assert_eq!((p.nc, p.rank, p.mobility, p.redundant()), (5, 2, 1, 3));
    assert!(p.overconstrained() && !p.properly_constrained());
    // the three redundant rows (tilt of the axis and the offset along it) vanish identically
    for row in [0, 1, 4] {
        assert!(s.kmat.row(row).amax() < 1e-15, "row {row} of K: {}", s.kmat.row(row));
    }
}

fn mechanism_strategy() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<f64>)> {
    (
        prop::collection::vec(-1.0f64..1.0, 6),
        prop::collection::vec(-2.0f64..2.0, 6),
        prop::collection::vec(-3.0f64..3.0, 6),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_consistent_states_of_every_mechanism((dy, yd, ydd) in mechanism_strategy()) {
        for (_, m) in mechanisms::all() {
            // +-0.12 rad on the independent joints stays inside every workspace (the 3-RRR
            // leaves it at about 0.2)
            let (q, qd) = consistent_state(&m, &dy, &yd, 0.12);
            check_consistent_state(&m, &q, &qd, &ydd, None);
            check_consistent_state(&m, &q, &qd, &ydd, Some(0.05));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Featherstone's figure 8.3 worked example (specs/featherstone.md section 6)

struct Fig83 {
    d: f64,
    th2: f64,
    dth2: f64,
    dd: f64,
    ddth2: f64,
    ddd: f64,
}

fn fig83_closed_form(l1: f64, l2: f64, y1: f64) -> Fig83 {
    let (s1, c1) = y1.sin_cos();
    let big_d = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
    let d = big_d.sqrt();
    Fig83 {
        d,
        th2: (l2 * s1).atan2(l2 * c1 - l1),
        dth2: l2 * (l2 - l1 * c1) / big_d,
        dd: l1 * l2 * s1 / d,
        ddth2: l1 * l2 * (l1 * l1 - l2 * l2) * s1 / (big_d * big_d),
        ddd: (l1 * l2 * c1 * big_d - l1 * l1 * l2 * l2 * s1 * s1) / (d * d * d),
    }
}

#[test]
fn figure_8_3_closed_forms() {
    let (l1, l2) = (1.0, 0.6);
    let m = mechanisms::figure_8_3(l1, l2).unwrap();
    for (y, yd) in [
        ([1.0, 0.5], [0.8, -1.3]),
        ([-2.2, 1.4], [-1.5, 0.4]),
        ([2.9, -0.7], [2.0, 0.9]),
    ] {
        let cf = fig83_closed_form(l1, l2, y[0]);
        // gamma: assembling with y = (q1, q4) fixed lands on the closed form
        let q_cf = figure_8_3_gamma(l1, l2, y).unwrap();
        assert_eq!(q_cf, [y[0], cf.th2, cf.d, y[1]]);
        let guess = [y[0], cf.th2 + 0.2, cf.d * 1.1, y[1]];
        let q = assemble_with(&m, &guess, Some(&[0, 3])).unwrap();
        for i in 0..4 {
            assert!(
                (q[i] - q_cf[i]).abs() < 1e-12,
                "gamma: q[{i}] = {} vs {}",
                q[i],
                q_cf[i]
            );
        }
        // G with y = (q1, q4) is dgamma/dy
        let gmat_cf = DMatrix::from_row_slice(4, 2, &[1.0, 0.0, cf.dth2, 0.0, cf.dd, 0.0, 0.0, 1.0]);
        let s0 = sys(&m, &q_cf, &zeros(4));
        let ns = null_space_with(&s0.kmat, &DVector::zeros(5), &PivotTol::default(), Some(&[0, 3])).unwrap();
        assert_eq!(ns.independent, vec![0, 3]);
        assert!(rel(&ns.g_null, &gmat_cf) < 1e-12, "G = {} vs {}", ns.g_null, gmat_cf);
        // ... which is also a finite difference of gamma (the spec's formulas themselves)
        let h = 1e-6;
        let (qp, qm) = (
            figure_8_3_gamma(l1, l2, [y[0] + h, y[1]]).unwrap(),
            figure_8_3_gamma(l1, l2, [y[0] - h, y[1]]).unwrap(),
        );
        assert!(((qp[1] - qm[1]) / (2.0 * h) - cf.dth2).abs() < 1e-8);
        assert!(((qp[2] - qm[2]) / (2.0 * h) - cf.dd).abs() < 1e-8);
        // K and k: the planar rows in base coordinates are the spec's rows rotated into the
        // piston's frame (P, the frame of T) by theta2; the other three rows vanish
        let qd = &gmat_cf * DVector::from_column_slice(&yd);
        let s = sys(&m, &q_cf, qd.as_slice());
        let (st, ct) = cf.th2.sin_cos();
        let k_cf = DMatrix::from_row_slice(
            2,
            4,
            &[
                -l2 * y[0].sin(),
                cf.d * st,
                -ct,
                0.0,
                l2 * y[0].cos(),
                -cf.d * ct,
                -st,
                0.0,
            ],
        );
        let rot = DMatrix::from_row_slice(2, 2, &[ct, -st, st, ct]);
        let k_rows = s.kmat.rows(2, 2).into_owned();
        assert!(
            rel(&(&rot * &k_rows), &k_cf) < 1e-12,
            "K rows {} vs {}",
            &rot * &k_rows,
            k_cf
        );
        for row in [0, 1, 4] {
            assert!(s.kmat.row(row).amax() < 1e-15 && s.k[row].abs() < 1e-14);
        }
        let (q1d, q2d, q3d) = (qd[0], qd[1], qd[2]);
        let kv_cf = DVector::from_column_slice(&[
            l2 * q1d * q1d * y[0].cos() - cf.d * q2d * q2d * ct - 2.0 * q2d * q3d * st,
            l2 * q1d * q1d * y[0].sin() - cf.d * q2d * q2d * st + 2.0 * q2d * q3d * ct,
        ]);
        let kv = &rot * s.k.rows(2, 2);
        assert!(relv(&kv, &kv_cf) < 1e-12, "k = {kv} vs {kv_cf}");
        // g = Gdot ydot: the particular solution with y'' = 0 of K qdd = k
        let g_cf = DVector::from_column_slice(&[0.0, cf.ddth2 * yd[0] * yd[0], cf.ddd * yd[0] * yd[0], 0.0]);
        let ns = null_space_with(&s.kmat, &s.k, &PivotTol::default(), Some(&[0, 3])).unwrap();
        assert!(relv(&ns.g_bias, &g_cf) < 1e-12, "g = {} vs {}", ns.g_bias, g_cf);
        // inverse dynamics with actuators at joints 3 and 4 (dofs 2 and 3), example 8.2
        let ydd = [0.7, -1.9];
        let qdd = &ns.g_null * DVector::from_column_slice(&ydd) + &ns.g_bias;
        let inv = inverse_dynamics(&m, &q_cf, qd.as_slice(), qdd.as_slice(), None, &[2, 3]).unwrap();
        let t = &inv.tau_id;
        assert!(
            relv(
                t,
                &mbd::dynamics::rnea(&m, &q_cf, qd.as_slice(), qdd.as_slice(), None).unwrap()
            ) < 1e-14
        );
        let u3 = (t[0] + cf.dth2 * t[1] + cf.dd * t[2]) / cf.dd;
        let u4 = t[3];
        assert!(
            (inv.u[0] - u3).abs() < 1e-9 && (inv.u[1] - u4).abs() < 1e-9,
            "u = {} vs ({u3}, {u4})",
            inv.u
        );
        assert!(inv.actuation.proper());
    }
}

#[test]
fn actuation_classes_of_figure_8_3() {
    let m = mechanisms::figure_8_3(1.0, 0.6).unwrap();
    let q = m.qpos0.as_slice();
    let s = sys(&m, q, &zeros(4));
    let ns = null_space(&s.kmat, &s.k).unwrap();
    let qdd = &ns.g_null * DVector::from_column_slice(&[0.4, -0.2]) + &ns.g_bias;
    // joints 1, 2 and 3 all move with y1 only: two of them cannot drive both freedoms
    let e = inverse_dynamics(&m, q, &zeros(4), qdd.as_slice(), None, &[0, 2]).unwrap_err();
    assert!(e.to_string().contains("underactuated"), "{e}");
    // three actuators for two freedoms: redundant, minimum-norm u
    let inv = inverse_dynamics(&m, q, &zeros(4), qdd.as_slice(), None, &[0, 2, 3]).unwrap();
    assert!(inv.actuation.redundant() && !inv.actuation.underactuated());
    let back = forward_dynamics(&m, q, &zeros(4), inv.tau.as_slice(), None, Method::NullSpace, None)
        .unwrap()
        .qdd;
    assert!(relv(&back, &qdd) < 1e-9);
    // minimum norm: any other solution u + w with G_u^T w = 0 is longer
    let gu = DMatrix::from_fn(3, 2, |i, j| ns.g_null[([0, 2, 3][i], j)]);
    let (r0, r1) = (gu.column(0), gu.column(1));
    let w = DVector::from_column_slice(&[
        r0[1] * r1[2] - r0[2] * r1[1],
        r0[2] * r1[0] - r0[0] * r1[2],
        r0[0] * r1[1] - r0[1] * r1[0],
    ]);
    assert!((gu.transpose() * &w).amax() < 1e-12);
    assert!(inv.u.dot(&w).abs() < 1e-9 * inv.u.norm());
    // a state off the constraint manifold is refused
    let e = inverse_dynamics(&m, q, &[1.0, 0.0, 0.0, 0.0], qdd.as_slice(), None, &[2, 3]).unwrap_err();
    assert!(e.to_string().contains("breaks the loop constraints"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// active loop-joint forces (tables 8.2/8.3)

#[test]
fn active_loop_forces_match_the_jacobian_transpose() {
    for jt in loop_types().into_iter().filter(|j| j.nv() > 0) {
        let m = rig(jt);
        let (q, qd) = consistent_state(&m, &[0.3, -0.5, 0.8], &[0.4, 1.0, -0.7], 0.2);
        let tau_a: Vec<f64> = (0..loop_active_len(&m)).map(|i| 0.8 - 0.5 * i as f64).collect();
        let qdd: Vec<f64> = (0..m.nv).map(|i| (i as f64 * 0.9).sin()).collect();
        let with = rnea_loops(&m, q.as_slice(), qd.as_slice(), &qdd, Some(&tau_a), None).unwrap();
        let without = mbd::dynamics::rnea(&m, q.as_slice(), qd.as_slice(), &qdd, None).unwrap();
        let dense = loop_active_tau_dense(&m, q.as_slice(), &tau_a).unwrap();
        assert!(relv(&(without - with), &dense) < 1e-12, "{}", jt.name());
        // power: tau^a . qdot = tau_a . (the loop joint's own velocity Psi-coordinates)
        let bias0 = bias_minus_active(&m, q.as_slice(), qd.as_slice(), None).unwrap();
        assert!(
            relv(
                &bias0,
                &mbd::dynamics::bias_forces(&m, q.as_slice(), qd.as_slice()).unwrap()
            ) < 1e-14
        );
    }
    // four-bar: a motor torque at the closing joint D acts on the rocker's absolute angle
    // q1 + q2 + q3 (all axes y), so tau^a = tau_D (1, 1, 1)
    let m = mechanisms::four_bar();
    let (q, qd) = consistent_state(&m, &[0.5], &[1.5], 0.4);
    let c = bias_minus_active(&m, q.as_slice(), qd.as_slice(), None).unwrap();
    let ca = bias_minus_active(&m, q.as_slice(), qd.as_slice(), Some(&[0.7])).unwrap();
    assert!(relv(&(c - ca), &DVector::from_element(3, 0.7)) < 1e-12);
}

#[test]
fn a_driven_loop_joint_matches_the_same_torque_on_the_tree() {
    // Driving the four-bar's closing joint with torque u gives the motion that driving the
    // crank with the equivalent generalized force (1, 1, 1) u gives.
    let m = mechanisms::four_bar();
    let (q, qd) = consistent_state(&m, &[-0.6], &[0.9], 0.5);
    for meth in Method::ALL {
        let a = forward_dynamics(&m, q.as_slice(), qd.as_slice(), &zeros(3), Some(&[0.25]), meth, None)
            .unwrap()
            .qdd;
        let b = forward_dynamics(&m, q.as_slice(), qd.as_slice(), &[0.25, 0.25, 0.25], None, meth, None)
            .unwrap()
            .qdd;
        assert!(relv(&a, &b) < 1e-12);
    }
}

// ---------------------------------------------------------------------------------------------
// MuJoCo's equality constraints as loop joints

#[test]
fn connect_equality_becomes_a_spherical_loop_with_mujocos_residual() {
    // fourbar.xml: connect body1 = rocker, body2 = world, anchor (0.05, 0, -0.3) on the rocker
    let mut m = canned::four_bar_tree();
    let anchor = Vec3::new(0.05, 0.0, -0.3);
    m.equality.push(Equality::Connect {
        name: "closeD".into(),
        body1: 3,
        body2: 0,
        anchor,
    });
    let m = with_loops_from_equality(&m).unwrap();
    assert_eq!(m.loops.len(), 1);
    assert_eq!(m.loops[0].jtype, JointType::Spherical);
    assert_eq!((m.loops[0].pred, m.loops[0].succ), (0, 3));
    // at an arbitrary (open) configuration, err = p1 - p2 in body2's (world) axes, the residual
    // of mj_instantiateEquality; D = (0.4, 0, 0) is body2's anchor
    let q = [0.3, -0.2, 0.5];
    let kin = forward_kinematics(&m, &q).unwrap();
    let r = kin.point(3, &anchor) - Vec3::new(0.4, 0.0, 0.0);
    let s = sys(&m, &q, &zeros(3));
    assert!((Vec3::new(s.err[0], s.err[1], s.err[2]) - r).amax() < 1e-15);
    // at a closed configuration, K = Jp(body1, p1) - Jp(body2, p2) = the point Jacobian
    let (q, _) = consistent_state(&m, &[0.4], &[0.0], 0.5);
    let s = sys(&m, q.as_slice(), &zeros(3));
    let jp = point_jacobian(&m, q.as_slice(), 3, &anchor).unwrap();
    assert!(rel(&s.kmat, &jp) < 1e-12);
    let p = LoopProperties::of(&s.kmat);
    assert_eq!(
        (p.nc, p.rank),
        (3, 2),
        "a planar loop closed by a ball joint has one redundant row"
    );
}

#[test]
fn weld_equality_becomes_a_fixed_loop_with_mujocos_residual() {
    // two branches welded together: base -> a (revolute z) -> b (revolute x);
    // base -> c (revolute y) -> d (prismatic z); weld body1 = b, body2 = d
    let rodi = |l: f64| canned::rod(1.0, l, Vec3::new(1.0, 0.2, -0.1));
    let (mut mb, [a, b, c, d]) = two_branches(
        "weld",
        [
            (Joint::revolute(Vec3::z()), [0.0; 3], rodi(0.3)),
            (Joint::revolute(Vec3::x()), [0.3, 0.0, 0.0], rodi(0.2)),
            (Joint::revolute(Vec3::y()), [0.0, 0.5, 0.0], rodi(0.3)),
            (Joint::prismatic(Vec3::z()), [0.1, 0.0, 0.2], rodi(0.2)),
        ],
    );
    mb.set_qpos0(a, &[0.3]);
    mb.set_qpos0(b, &[-0.5]);
    mb.set_qpos0(c, &[0.8]);
    let mut m = mb.build().unwrap();
    let anchor = Vec3::new(0.02, -0.05, 0.1);
    m.equality.push(Equality::Weld {
        name: "w".into(),
        body1: b,
        body2: d,
        anchor,
        relpose: None,
    });
    let mw = with_loops_from_equality(&m).unwrap();
    assert_eq!(mw.loops[0].jtype, JointType::Fixed);
    assert!(
        sys(&mw, mw.qpos0.as_slice(), &zeros(4)).err.amax() < 1e-15,
        "closed at qpos0"
    );
    // relpose computed by hand as MuJoCo's compiler does (position of body2's anchor in body1's
    // frame, r0 = q1^* q2) gives the same loop joint
    let kin = forward_kinematics(&m, m.qpos0.as_slice()).unwrap();
    let pos = kin.x_0[b].e * (kin.point(d, &anchor) - kin.x_0[b].r);
    let (q1, q2) = (
        mat_to_quat(&kin.rotation(b)).unwrap(),
        mat_to_quat(&kin.rotation(d)).unwrap(),
    );
    let r0 = quat_mul(&[q1[0], -q1[1], -q1[2], -q1[3]], &q2);
    let mut m2 = m.clone();
    m2.equality[0] = Equality::Weld {
        name: "w".into(),
        body1: b,
        body2: d,
        anchor,
        relpose: Some([pos.x, pos.y, pos.z, r0[0], r0[1], r0[2], r0[3]]),
    };
    let l2 = loops_from_equality(&m2).unwrap();
    assert!((l2[0].x_s.e - mw.loops[0].x_s.e).amax() < 1e-14 && (l2[0].x_s.r - mw.loops[0].x_s.r).amax() < 1e-14);
    // a small displacement: translation rows = MuJoCo's p1 - p2 in body2's axes, rotation rows =
    // 2 vec(q2^* q1 r0) to first order
    let q = [0.3 + 1e-4, -0.5 - 2e-4, 0.8 + 1.5e-4, 3e-4];
    let s = sys(&mw, &q, &zeros(4));
    let kin = forward_kinematics(&mw, &q).unwrap();
    let p1 = kin.point(b, &pos);
    let p2 = kin.point(d, &anchor);
    let r_mj = kin.x_0[d].e * (p1 - p2);
    assert!((Vec3::new(s.err[3], s.err[4], s.err[5]) - r_mj).amax() < 1e-15);
    let (q1, q2) = (
        mat_to_quat(&kin.rotation(b)).unwrap(),
        mat_to_quat(&kin.rotation(d)).unwrap(),
    );
    let rq = quat_mul(&quat_mul(&[q2[0], -q2[1], -q2[2], -q2[3]], &q1), &r0);
    let rot_mj = Vec3::new(rq[1], rq[2], rq[3]) * (2.0 * rq[0].signum());
    assert!(
        (Vec3::new(s.err[0], s.err[1], s.err[2]) - rot_mj).amax() < 1e-7,
        "{} vs {rot_mj}",
        s.err
    );
    assert!(rot_mj.amax() > 1e-5, "the perturbation moves the weld");
}

// ---------------------------------------------------------------------------------------------
// simulation

/// The four-bar at `q = 0` with the crank turning at `w` rad/s.
fn four_bar_start(w: f64) -> (Model, DVector<f64>, DVector<f64>) {
    let m = mechanisms::four_bar();
    let q = m.qpos0.clone();
    let s = sys(&m, q.as_slice(), &zeros(3));
    let ns = null_space_with(&s.kmat, &DVector::zeros(5), &PivotTol::default(), Some(&[0])).unwrap();
    let qd = ns.g_null.column(0) * w;
    (m, q, qd)
}

const CRANK_SPEED: f64 = 12.0;

/// The null-space method with RK4 from `(q, qd)`: `steps` steps of `h` with Baumgarte time
/// constant `t_stab`.
fn rk4_null_space(
    m: &Model,
    q: &DVector<f64>,
    qd: &DVector<f64>,
    h: f64,
    steps: usize,
    t_stab: Option<f64>,
) -> Trajectory {
    let opts = SimulateOptions {
        method: Method::NullSpace,
        integrator: Integrator::Rk4,
        h,
        steps,
        t_stab,
    };
    simulate(m, q.as_slice(), qd.as_slice(), &opts).unwrap()
}

#[test]
fn four_bar_simulation_with_baumgarte_keeps_the_loop_closed() {
    // RK4, h = 1 ms, 10 s, T_stab = 0.1: the loop-closure error stays below 1e-6 and the total
    // energy (5.63 J, with the potential energy's zero at the base) within 1e-5 J of its start,
    // while the crank goes round and round under gravity.
    let (m, q, qd) = four_bar_start(CRANK_SPEED);
    let tr = rk4_null_space(&m, &q, &qd, 1e-3, 10_000, Some(0.1));
    assert_eq!(tr.time.len(), 10_001);
    assert!(
        tr.max_of(LOOP_ERROR) < 1e-6,
        "max loop error {:.3e}",
        tr.max_of(LOOP_ERROR)
    );
    assert!(tr.max_drift(ENERGY) < 1e-5, "energy drift {:.3e}", tr.max_drift(ENERGY));
    // the crank really turned (it is a crank-rocker with enough energy to go round)
    let turned = tr.qpos.iter().map(|q| q[0]).fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(turned > 2.0 * std::f64::consts::PI, "crank angle reached only {turned}");
}

#[test]
fn drift_with_and_without_stabilization() {
    // Prints the numbers of the report: max loop error over 10 s (RK4, h = 1 ms).
    let (m, q, qd) = four_bar_start(CRANK_SPEED);
    let mut results = vec![];
    for ts in [None, Some(1.0), Some(0.1), Some(0.01)] {
        let tr = rk4_null_space(&m, &q, &qd, 1e-3, 10_000, ts);
        println!(
            "T_stab = {ts:?}: max loop error {:.3e}, max energy drift {:.3e} J",
            tr.max_of(LOOP_ERROR),
            tr.max_drift(ENERGY)
        );
        results.push(tr.max_of(LOOP_ERROR));
    }
    // every stabilization beats none, and 0.1 beats 1 ...
    assert!(results[1..].iter().all(|&e| e < 0.1 * results[0]), "{results:?}");
    assert!(results[2] < results[1], "{results:?}");
    // ... but what is left is the integrator's truncation error, which grows as T_stab makes the
    // equations stiffer: at T_stab = 0.01 it falls like h^4 (about 16x per halving)
    let err_at = |h: f64| {
        let steps = (2.0 / h).round() as usize;
        rk4_null_space(&m, &q, &qd, h, steps, Some(0.01)).max_of(LOOP_ERROR)
    };
    let (e1, e2) = (err_at(1e-3), err_at(5e-4));
    assert!(e1 / e2 > 10.0, "halving h: {e1:.3e} -> {e2:.3e}");
}

#[test]
fn every_method_and_integrator_simulates_every_mechanism() {
    for (name, m) in mechanisms::all() {
        let (q, qd) = consistent_state(&m, &[0.2, -0.3, 0.1], &[1.0, -0.5, 0.7], 0.2);
        let mut finals = vec![];
        for meth in Method::ALL {
            for integ in [Integrator::Rk4, Integrator::Euler] {
                let tr = simulate(
                    &m,
                    q.as_slice(),
                    qd.as_slice(),
                    &SimulateOptions {
                        method: meth,
                        integrator: integ,
                        h: 1e-3,
                        steps: 200,
                        t_stab: Some(0.05),
                    },
                )
                .unwrap();
                assert!(
                    tr.max_of(LOOP_ERROR) < 1e-4,
                    "{name} {meth:?} {integ:?}: loop error {:.2e}",
                    tr.max_of(LOOP_ERROR)
                );
                if integ == Integrator::Rk4 {
                    finals.push(DVector::from_vec(tr.qpos.last().unwrap().clone()));
                }
            }
        }
        for f in &finals[1..] {
            assert!(relv(f, &finals[0]) < 1e-8, "{name}: methods disagree after 0.2 s");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// bad input

#[test]
fn bad_loop_joints_are_rejected() {
    let lj = |pred: usize, succ: usize, jt: JointType| {
        LoopJoint::new("bad", jt, pred, succ, Xform::identity(), Xform::identity())
    };
    let mut mb = ModelBuilder::new("m");
    let a = mb.add_body(
        "a",
        0,
        Joint::revolute(Vec3::z()),
        Xform::identity(),
        canned::rod(1.0, 0.3, Vec3::x()),
    );
    let base = mb.clone();
    mb.add_loop(lj(a, a, JointType::Spherical));
    let e = mb.build().unwrap_err();
    assert!(
        matches!(e, Error::BadLoopJoint { index: 0, .. }) && e.to_string().contains("to itself"),
        "{e}"
    );
    let mut mb = base.clone();
    mb.add_loop(lj(0, 7, JointType::Spherical));
    let e = mb.build().unwrap_err();
    assert!(e.to_string().contains("successor body 7 does not exist"), "{e}");
    let mut mb = base.clone();
    mb.add_loop(lj(0, a, JointType::Free));
    let e = mb.build().unwrap_err();
    assert!(e.to_string().contains("free joint"), "{e}");
    // edited by hand after building: caught by the algorithms, not a panic
    let mut m = base.clone().build().unwrap();
    m.loops.push(lj(3, 0, JointType::Fixed));
    let e = loop_constraints(&m, &[0.0], &[0.0], None).unwrap_err();
    assert!(matches!(e, Error::BadLoopJoint { .. }), "{e}");
    assert!(forward_dynamics(&m, &[0.0], &[0.0], &[0.0], None, Method::Kkt, None).is_err());
    // an axis that is not z must go through LoopJoint::new
    let mut m = base.build().unwrap();
    m.loops.push(LoopJoint {
        name: "x".into(),
        jtype: JointType::Revolute { axis: Vec3::x() },
        pred: 0,
        succ: a,
        x_p: Xform::identity(),
        x_s: Xform::identity(),
    });
    assert!(m.validate().unwrap_err().to_string().contains("not z"));
    // a zero axis is refused, a long one along z is just z
    let zero = LoopJoint::new(
        "0",
        JointType::Prismatic { axis: Vec3::zeros() },
        0,
        a,
        Xform::identity(),
        Xform::identity(),
    );
    assert!(zero.validate(1, 0).unwrap_err().to_string().contains("not z"));
    let long = LoopJoint::new(
        "2z",
        JointType::Prismatic {
            axis: Vec3::new(0.0, 0.0, 2.0),
        },
        0,
        a,
        Xform::identity(),
        Xform::identity(),
    );
    assert_eq!(
        (long.jtype, long.x_p),
        (JointType::Prismatic { axis: Vec3::z() }, Xform::identity())
    );
    // LoopJoint::new folds it into the frames: the same hinge about x, built both ways
    let folded = LoopJoint::new(
        "x",
        JointType::Revolute { axis: Vec3::x() },
        0,
        a,
        Xform::identity(),
        Xform::identity(),
    );
    assert_eq!(folded.jtype, JointType::Revolute { axis: Vec3::z() });
    let (_, e_ok) = loop_error(
        &folded.jtype,
        &folded.x_s.compose(&rotx(0.7)).compose(&folded.x_p.inverse()),
    );
    assert!(e_ok.amax() < 1e-15, "a rotation about x is allowed");
    let (_, e_bad) = loop_error(
        &folded.jtype,
        &folded.x_s.compose(&rotz(0.1)).compose(&folded.x_p.inverse()),
    );
    assert!(e_bad.amax() > 0.05, "a rotation about z is not");
}

#[test]
fn inconsistent_constraints_are_reported() {
    // K has rank 1 and k is not in its range
    let kmat = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
    let k = DVector::from_column_slice(&[1.0, 3.0]);
    let e = null_space(&kmat, &k).unwrap_err();
    assert!(
        matches!(e, Error::Singular { .. }) && e.to_string().contains("inconsistent"),
        "{e}"
    );
    let h = DMatrix::identity(2, 2);
    let e = solve_null_space(&h, &DVector::zeros(2), &kmat, &k).unwrap_err();
    assert!(e.to_string().contains("inconsistent"), "{e}");
    // the least-squares methods still answer, with qdd that best fits (method 1 and 2 agree)
    let (a1, l1) = solve_kkt(&h, &DVector::zeros(2), &kmat, &k).unwrap();
    let (a2, l2) = solve_lambda_first(&h, &[None, Some(0)], &DVector::zeros(2), &kmat, &k).unwrap();
    assert!(relv(&a1, &a2) < 1e-9 && relv(&l1, &l2) < 1e-9);
}

#[test]
fn other_bad_input_gives_clear_errors() {
    let m = mechanisms::four_bar();
    let q = m.qpos0.as_slice();
    let e = loop_constraints(&m, q, &zeros(3), Some(0.0)).unwrap_err();
    assert!(e.to_string().contains("T_stab"), "{e}");
    let e = rnea_loops(&m, q, &zeros(3), &zeros(3), Some(&[1.0, 2.0]), None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::BadLength {
                got: 2,
                expected: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = simulate(
        &m,
        q,
        &zeros(3),
        &SimulateOptions {
            method: Method::Kkt,
            integrator: Integrator::Rk4,
            h: -1e-3,
            steps: 10,
            t_stab: None,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("time step"), "{e}");
    // a four-bar whose ground pivot is out of reach cannot be assembled
    let mut far = m.clone();
    far.loops[0].x_p = far.loops[0].x_p.compose(&xlt(Vec3::new(5.0, 0.0, 0.0)));
    let mut far2 = mechanisms::four_bar();
    far2.loops[0] = LoopJoint::new(
        "far",
        JointType::Revolute { axis: Vec3::y() },
        0,
        3,
        xlt(Vec3::new(5.0, 0.0, 0.0)),
        xlt(Vec3::new(0.05, 0.0, -0.3)),
    );
    for bad in [far, far2] {
        let e = assemble(&bad, q).unwrap_err();
        assert!(e.to_string().contains("did not converge"), "{e}");
    }
    assert!(mechanisms::figure_8_3(-1.0, 0.5).is_err());
    assert!(figure_8_3_gamma(1.0, 1.0, [0.0, 0.0]).is_err());
}

#[test]
fn without_loop_joints_every_method_is_aba() {
    let m = canned::floating_base_ball_arms();
    let mut q = m.qpos0.as_slice().to_vec();
    let v: Vec<f64> = (0..m.nv).map(|k| 0.4 * (k as f64 + 0.5).sin()).collect();
    m.integrate(&mut q, &v, 1.0).unwrap();
    let qd: Vec<f64> = (0..m.nv).map(|k| 0.7 * (k as f64 * 1.3).cos()).collect();
    let tau: Vec<f64> = (0..m.nv).map(|k| 0.2 * k as f64 - 0.5).collect();
    let aba = mbd::dynamics::aba(&m, &q, &qd, &tau, None).unwrap();
    for meth in Method::ALL {
        let sol = forward_dynamics(&m, &q, &qd, &tau, None, meth, Some(0.1)).unwrap();
        assert!(relv(&sol.qdd, &aba) < 1e-10, "{meth:?}");
        assert_eq!(sol.rank, 0);
    }
}

#[test]
fn k_stab_is_baumgarte_at_an_open_state() {
    // off the constraint manifold (positions and velocities): k_stab = -(2/T) K qdot - err/T^2,
    // with K qdot = T^T (v_s - v_p) by eq. (8.9)
    for (name, m) in mechanisms::all() {
        let mut q = m.qpos0.as_slice().to_vec();
        let dq: Vec<f64> = (0..m.nv).map(|k| 0.01 * (k as f64 + 1.0).sin()).collect();
        m.integrate(&mut q, &dq, 1.0).unwrap();
        let qd: Vec<f64> = (0..m.nv).map(|k| (k as f64 * 0.7).cos()).collect();
        let ts = 0.07;
        let s = loop_constraints(&m, &q, &qd, Some(ts)).unwrap();
        assert!(s.err.amax() > 1e-4, "{name}: the state is open");
        let expect = -(&s.kmat * DVector::from_column_slice(&qd)) * (2.0 / ts) - &s.err / (ts * ts);
        assert!(relv(&s.k_stab, &expect) < 1e-12, "{name}");
        let s0 = loop_constraints(&m, &q, &qd, None).unwrap();
        assert_eq!(s0.k_stab, DVector::zeros(s0.nc()));
        assert!(relv(&s0.k, &s.k) < 1e-15 && rel(&s0.kmat, &s.kmat) < 1e-15);
    }
}

#[test]
fn baumgarte_closes_an_open_loop_with_critical_damping() {
    // Start the four-bar 1 mm open (at rest, no gravity): with alpha = beta = 1/T the error obeys
    // e'' + (2/T) e' + e/T^2 = 0 to first order, so |e(t)| = (1 + t/T) exp(-t/T) |e(0)| (it
    // does, to about 1e-6 of |e(0)|).
    let mut m = mechanisms::four_bar();
    m.opt.gravity = Vec3::zeros();
    let mut q = m.qpos0.as_slice().to_vec();
    q[2] += 0.003;
    let ts = 0.1;
    let tr = simulate(
        &m,
        &q,
        &[0.0; 3],
        &SimulateOptions {
            method: Method::Kkt,
            integrator: Integrator::Rk4,
            h: 1e-3,
            steps: 500,
            t_stab: Some(ts),
        },
    )
    .unwrap();
    let e0 = tr.signal(LOOP_ERROR).unwrap()[0];
    assert!(e0 > 5e-4);
    for (i, t) in tr.time.iter().enumerate().step_by(50) {
        let predicted = (1.0 + t / ts) * (-t / ts).exp();
        let ratio = tr.signal(LOOP_ERROR).unwrap()[i] / e0;
        assert!(
            (ratio - predicted).abs() < 1e-4,
            "t = {t}: |e|/|e0| = {ratio:.4}, predicted {predicted:.4}"
        );
    }
}

#[test]
fn equality_with_an_unknown_body_is_an_error() {
    let mut m = canned::four_bar_tree();
    m.equality.push(Equality::Connect {
        name: "c".into(),
        body1: 9,
        body2: 0,
        anchor: Vec3::zeros(),
    });
    let e = loops_from_equality(&m).unwrap_err();
    assert!(
        matches!(e, Error::Unknown { .. }) && e.to_string().contains("index 9"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// the MJCF test models whose equality constraints close loops

fn load_fixture(file: &str) -> Model {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models")
        .join(file);
    mbd::mjcf::load(&path).unwrap().model
}

#[test]
fn mjcf_four_bars_closed_by_connects_move_like_the_revolute_closure() {
    // fourbar.xml closes the loop with one connect (a ball joint), fourbar_hinge.xml with two;
    // mechanisms::four_bar with one revolute loop joint. Same mechanism, same motion.
    let rev = mechanisms::four_bar();
    for (file, nloops) in [("fourbar.xml", 1), ("fourbar_hinge.xml", 2)] {
        let m = with_loops_from_equality(&load_fixture(file)).unwrap();
        assert_eq!(m.loops.len(), nloops, "{file}");
        assert!(m.loops.iter().all(|l| l.jtype == JointType::Spherical));
        let p = loop_properties(&m, m.qpos0.as_slice()).unwrap();
        assert_eq!((p.n, p.nc, p.rank, p.mobility), (3, 3 * nloops, 2, 1), "{file}");
        for (dy, yd) in [(0.4, 1.5), (-0.9, -2.0), (1.2, 0.7)] {
            let (q, qd) = consistent_state(&rev, &[dy], &[yd], 1.0);
            assert!(sys(&m, q.as_slice(), &zeros(3)).err.amax() < 1e-12, "{file}");
            let tau = [0.3, -0.2, 0.1];
            let want = forward_dynamics(&rev, q.as_slice(), qd.as_slice(), &tau, None, Method::Kkt, None)
                .unwrap()
                .qdd;
            for meth in Method::ALL {
                let got = forward_dynamics(&m, q.as_slice(), qd.as_slice(), &tau, None, meth, None)
                    .unwrap()
                    .qdd;
                assert!(relv(&got, &want) < 1e-9, "{file} {meth:?}: {got} vs {want}");
            }
            check_consistent_state(&m, &q, &qd, &[0.5, -1.0], Some(0.1));
        }
    }
}

#[test]
fn mjcf_welds_become_fixed_loop_joints() {
    // weld.xml: a payload welded to the tip of a hinged arm, and a free box welded to the world
    let m = with_loops_from_equality(&load_fixture("weld.xml")).unwrap();
    assert_eq!(m.loops.len(), 2);
    assert!(m.loops.iter().all(|l| l.jtype == JointType::Fixed));
    assert!(
        sys(&m, m.qpos0.as_slice(), &zeros(m.nv)).err.amax() < 1e-12,
        "closed at qpos0"
    );
    let p = loop_properties(&m, m.qpos0.as_slice()).unwrap();
    assert_eq!((p.n, p.nc, p.rank, p.mobility), (13, 12, 12, 1));
    // independent route: the arm carrying the payload is a one-body pendulum
    let arm = SpatialInertia::from_mass_com_inertia(
        1.0,
        Vec3::new(0.25, 0.0, 0.0),
        Mat3::from_diagonal(&Vec3::new(0.0002, 0.021, 0.021)),
    );
    let payload = SpatialInertia::from_mass_com_inertia(0.5, Vec3::new(0.5, 0.0, 0.0), Mat3::identity() * 0.001);
    let mut mb = ModelBuilder::new("pendulum");
    mb.add_body(
        "arm",
        0,
        Joint::revolute(Vec3::y()),
        xlt(Vec3::new(0.0, 0.0, 1.0)),
        arm + payload,
    );
    let pendulum = mb.build().unwrap();
    for (dy, yd) in [(0.5, 1.0), (-1.0, -0.3), (0.8, 2.0)] {
        let (q, qd) = consistent_state(&m, &[dy], &[yd], 0.5);
        check_consistent_state(&m, &q, &qd, &[0.2], Some(0.1));
        let want = mbd::dynamics::aba(&pendulum, &[q[0]], &[qd[0]], &[0.0], None).unwrap();
        for meth in Method::ALL {
            let got = forward_dynamics(&m, q.as_slice(), qd.as_slice(), &zeros(13), None, meth, None)
                .unwrap()
                .qdd;
            assert!(
                (got[0] - want[0]).abs() < 1e-9 * want[0].abs().max(1.0),
                "{meth:?}: {} vs {}",
                got[0],
                want[0]
            );
            // the welded floater does not move
            assert!(got.rows(7, 6).amax() < 1e-9, "{meth:?}");
        }
    }
}
