//! Property tests of the foundation: spatial algebra, jcalc, RNEA, CRBA, ABA and energy, on
//! random kinematic trees (see `tests/common/mod.rs` for the generator).
//!
//! Every check compares two independent routes and states its tolerance relative to the size
//! of the quantities involved ("scale"). Round-off in these algorithms is a few ulps per body
//! times the lever arms, so 1e-9 relative leaves three or more orders of magnitude of margin;
//! the few looser tolerances (finite differences, simulation) are justified where they appear.
//! Set `MBD_PROP_REPORT=1` to print how close each check came (error / scale).
//!
//! Run with `cargo test --release --test dynamics_props`.

mod common;

use common::*;
use mbd::dynamics::{aba, bias_forces, crba, kinetic_energy, potential_energy, rnea, Workspace};
use mbd::kinematics::{body_jacobian, body_velocities, forward_kinematics};
use mbd::model::{integrate_joint, jcalc, JointType};
use mbd::spatial::{mat_to_quat, quat_difference, quat_integrate, quat_to_mat, Force, Mat6, Motion, Vec3, Vec6, Xform};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

fn dvec(x: &[f64]) -> DVector<f64> {
    DVector::from_column_slice(x)
}

/// Induced infinity norm (largest absolute row sum).
fn mat_norm(h: &DMatrix<f64>) -> f64 {
    h.row_iter()
        .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// Richardson-extrapolated central difference of `f` at 0: `(4 D(h/2) - D(h)) / 3` with
/// `D(h) = (f(h) - f(-h)) / 2h`, accurate to O(h^4).
fn richardson<T, F>(f: F, h: f64) -> T
where
    F: Fn(f64) -> T,
    T: std::ops::Sub<Output = T> + std::ops::Mul<f64, Output = T> + std::ops::Add<Output = T>,
{
    let d1 = (f(h) - f(-h)) * (0.5 / h);
    let d2 = (f(0.5 * h) - f(-0.5 * h)) * (1.0 / h);
    d2 * (4.0 / 3.0) + d1 * (-1.0 / 3.0)
}

/// Smallest and largest eigenvalue of a symmetric matrix ((1, 1) for a 0 x 0 matrix, which
/// nalgebra's eigen-decomposition refuses: a tree of fixed joints has no dofs).
fn eig_range(h: &DMatrix<f64>) -> (f64, f64) {
    if h.nrows() == 0 {
        return (1.0, 1.0);
    }
    let eig = h.clone().symmetric_eigen().eigenvalues;
    (eig.min(), eig.max())
}

fn motion_gap(a: &Motion, b: &Motion) -> f64 {
    (a.to_vec6() - b.to_vec6()).amax()
}

proptest! {
    #![proptest_config(config(128))]

    /// Inverse dynamics is affine in the acceleration: RNEA(q, qd, qdd) = H(q) qdd + C(q, qd)
    /// with H from CRBA and C = RNEA(q, qd, 0) (Featherstone eq. 6.1).
    #[test]
    fn rnea_is_h_qdd_plus_c(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let tau = rnea(&model, &s.q, &s.qd, &s.qdd, None).unwrap();
        let h = crba(&model, &s.q).unwrap();
        let c = bias_forces(&model, &s.q, &s.qd).unwrap();
        let r = &tau - &h * dvec(&s.qdd) - &c;
        let scale = mat_norm(&h) * norm_inf(&s.qdd) + c.amax() + tau.amax();
        close("RNEA = H qdd + C", r.amax(), scale, 1e-9)?;
    }

    /// ABA solves H qdd = tau - C: small residual, agreement with a dense Cholesky solve (to
    /// the accuracy the conditioning of H allows), and RNEA undoes ABA also with external
    /// forces.
    #[test]
    fn aba_solves_the_equations_of_motion(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let qdd = aba(&model, &s.q, &s.qd, &s.tau, None).unwrap();
        let h = crba(&model, &s.q).unwrap();
        let c = bias_forces(&model, &s.q, &s.qd).unwrap();
        let rhs = dvec(&s.tau) - &c;
        let r = &h * &qdd - &rhs;
        let scale = mat_norm(&h) * qdd.amax() + c.amax() + norm_inf(&s.tau);
        close("H qdd_ABA - (tau - C)", r.amax(), scale, 1e-9)?;
        // Forward error: both solves are backward stable, so they may differ by
        // cond(H) * eps * |qdd|; 1e-12 * cond leaves a factor ~10^4 over eps.
        let chol = h.clone().cholesky().expect("H is positive definite");
        let qdd_ref = chol.solve(&rhs);
        let (lo, hi) = eig_range(&h);
        let cond = hi / lo;
        close("qdd_ABA vs Cholesky solve", (&qdd - &qdd_ref).amax(), cond * qdd_ref.amax(), 1e-12)?;
        // With external forces: RNEA(q, qd, ABA(q, qd, tau, f), f) = tau.
        let qdd_f = aba(&model, &s.q, &s.qd, &s.tau, Some(&s.f_ext)).unwrap();
        let tau_back = rnea(&model, &s.q, &s.qd, qdd_f.as_slice(), Some(&s.f_ext)).unwrap();
        let scale = mat_norm(&h) * qdd_f.amax() + c.amax() + norm_inf(&s.tau)
            + s.f_ext.iter().map(|f| f.to_vec6().amax()).sum::<f64>();
        close("RNEA(ABA(tau, f), f) - tau", (tau_back - dvec(&s.tau)).amax(), scale, 1e-9)?;
    }

    /// H is symmetric positive definite and equals sum_i J_i^T I_i J_i + diag(armature), the
    /// kinetic-energy definition of H (Featherstone eq. 6.2 with v_i = J_i qd).
    #[test]
    fn h_is_symmetric_positive_definite(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let h = crba(&model, &s.q).unwrap();
        let hn = mat_norm(&h);
        close("H - H^T", (&h - h.transpose()).amax(), hn, 1e-14)?;
        prop_assert!(h.clone().cholesky().is_some(), "Cholesky of H failed");
        let (lo, _) = eig_range(&h);
        prop_assert!(lo > 0.0, "min eigenvalue of H is {:e}", lo);
        let mut h_ref = DMatrix::from_diagonal(&model.dof_armature());
        for i in 1..=model.nb {
            let j = body_jacobian(&model, &s.q, i).unwrap();
            let inertia = DMatrix::from_column_slice(6, 6, model.inertia[i].to_matrix().as_slice());
            h_ref += j.transpose() * inertia * &j;
        }
        close("H vs sum J^T I J", (&h - &h_ref).amax(), hn, 1e-9)?;
    }

    /// Column k of H is RNEA(q, 0, e_k) - RNEA(q, 0, 0) (the check Pinocchio's tests use).
    /// Gravity is whatever the model drew (zero a quarter of the time); the difference removes
    /// it, so the check also covers the zero-gravity form.
    #[test]
    fn crba_columns_are_rnea_differences(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let h = crba(&model, &s.q).unwrap();
        let zero = vec![0.0; model.nv];
        let g = rnea(&model, &s.q, &zero, &zero, None).unwrap();
        let mut worst: f64 = 0.0;
        for k in 0..model.nv {
            let mut e = zero.clone();
            e[k] = 1.0;
            let col = rnea(&model, &s.q, &zero, &e, None).unwrap() - &g;
            worst = worst.max((col - h.column(k)).amax());
        }
        close("H e_k vs RNEA differences", worst, mat_norm(&h) + g.amax(), 1e-9)?;
    }

    /// A force f_i on body i (base coordinates) changes RNEA's output by -J_i^T (iX_0* f_i),
    /// with J_i the body Jacobian in body i coordinates (the principle of virtual work).
    #[test]
    fn rnea_external_forces_enter_through_jacobians(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let tau0 = rnea(&model, &s.q, &s.qd, &s.qdd, None).unwrap();
        let tau_f = rnea(&model, &s.q, &s.qd, &s.qdd, Some(&s.f_ext)).unwrap();
        let kin = forward_kinematics(&model, &s.q).unwrap();
        let mut expected = tau0.clone();
        let mut scale = tau0.amax();
        for i in 1..=model.nb {
            let f_body = kin.x_0[i].apply_force(&s.f_ext[i]).to_vec6();
            let jt_f = body_jacobian(&model, &s.q, i).unwrap().transpose() * dvec(f_body.as_slice());
            scale += jt_f.amax();
            expected -= jt_f;
        }
        close("tau(f) vs tau(0) - sum J^T f", (tau_f - expected).amax(), scale, 1e-9)?;
    }

    /// Power balance: along the motion with qdd = ABA(q, qd, tau, f), d/dt (T + U) equals
    /// qd . tau + sum_i v_i . f_i (no damping or springs in these models). The derivative is
    /// taken along the curve q(s) = q (+) s qd, qd(s) = qd + s qdd, which has the same first
    /// derivative as the true motion, by a Richardson-extrapolated central difference
    /// (truncation O(h^4) with h = 1e-3).
    ///
    /// Tolerance 1e-8 relative to sum_k |qd_k| (|tau_k| + |C_k| + |(H qdd)_k|) plus the external
    /// powers: the difference of energies that can reach 1e4 J divided by h = 1e-3 loses about
    /// 1e-9 of that scale to round-off.
    #[test]
    fn power_balance(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let qdd = aba(&model, &s.q, &s.qd, &s.tau, Some(&s.f_ext)).unwrap();
        let energy = |t: f64| {
            let mut q = s.q.clone();
            model.integrate(&mut q, &s.qd, t).unwrap();
            let qd: Vec<f64> = s.qd.iter().zip(qdd.iter()).map(|(v, a)| v + t * a).collect();
            kinetic_energy(&model, &q, &qd).unwrap() + potential_energy(&model, &q).unwrap()
        };
        let de_dt = richardson(energy, 1e-3);
        let kin = forward_kinematics(&model, &s.q).unwrap();
        let v = body_velocities(&model, &s.q, &s.qd).unwrap();
        let mut power = dvec(&s.qd).dot(&dvec(&s.tau));
        let mut ext_scale = 0.0;
        for (i, v_i) in v.iter().enumerate().skip(1) {
            let p = v_i.dot(&kin.x_0[i].apply_force(&s.f_ext[i]));
            power += p;
            ext_scale += p.abs();
        }
        let h = crba(&model, &s.q).unwrap();
        let c = bias_forces(&model, &s.q, &s.qd).unwrap();
        let hq = &h * &qdd;
        let scale: f64 = (0..model.nv).map(|k| s.qd[k].abs() * (s.tau[k].abs() + c[k].abs() + hq[k].abs())).sum::<f64>()
            + ext_scale;
        close("d(T+U)/dt vs power", (de_dt - power).abs(), scale.max(1e-12), 1e-8)?;
        // The gravity part alone: dU/dt along q (+) s qd equals qd . G(q), G = RNEA(q, 0, 0).
        let zero = vec![0.0; model.nv];
        let g = rnea(&model, &s.q, &zero, &zero, None).unwrap();
        let u = |t: f64| {
            let mut q = s.q.clone();
            model.integrate(&mut q, &s.qd, t).unwrap();
            potential_energy(&model, &q).unwrap()
        };
        let du_dt = richardson(u, 1e-3);
        let scale: f64 = (0..model.nv).map(|k| (s.qd[k] * g[k]).abs()).sum();
        close("dU/dt vs qd . G", (du_dt - dvec(&s.qd).dot(&g)).abs(), scale.max(1e-12), 1e-8)?;
    }

    /// Kinetic energy from body velocities equals 1/2 qd^T H qd.
    #[test]
    fn kinetic_energy_is_the_quadratic_form(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let t = kinetic_energy(&model, &s.q, &s.qd).unwrap();
        let h = crba(&model, &s.q).unwrap();
        let qd = dvec(&s.qd);
        let quad = 0.5 * qd.dot(&(&h * &qd));
        let scale = 0.5 * qd.abs().dot(&(h.abs() * qd.abs()));
        close("T vs 1/2 qd^T H qd", (t - quad).abs(), scale.max(1e-300), 1e-12)?;
    }

    /// v_J = S qd and c_J for a single random joint, checked against finite differences of the
    /// joint transform along `integrate_joint` (Featherstone eqs. 4.4-4.6 with the anchor
    /// conjugation of jcalc): column k of S is the body-frame velocity of X_J(q (+) s e_k),
    /// v_J is that of X_J(q (+) s qd), and c_J is d/ds of S(q (+) s qd) qd.
    ///
    /// Tolerance 1e-9 relative to 1 + |v_J|: Richardson differences with h = 1e-3 have O(h^4)
    /// truncation and ~1e-13 round-off.
    #[test]
    fn jcalc_matches_finite_differences(b in body_spec(), ss in state_spec()) {
        let joint = common::joint_of(&b);
        let jt = joint.jtype;
        let (nq, nv) = (jt.nq(), jt.nv());
        let mut q = jt.neutral();
        let dq: Vec<f64> = ss.dq[..nv].iter().map(|x| 2.0 * x).collect();
        integrate_joint(&jt, &mut q, &dq, 1.0);
        let qd: Vec<f64> = ss.qd[..nv].iter().map(|x| 2.0 * x).collect();
        let jc = jcalc(&joint, &q, &qd);
        prop_assert_eq!(jc.s.n, nv);
        let xj_along = |dir: &[f64], t: f64| {
            let mut qt = q.clone();
            integrate_joint(&jt, &mut qt, dir, t);
            jcalc(&joint, &qt, &vec![0.0; nv]).x_j
        };
        let twist = |dir: &[f64]| -> Motion {
            let fd = |h: f64| twist_from_transforms(&jc.x_j, &xj_along(dir, -h), &xj_along(dir, h), h);
            let (d1, d2) = (fd(1e-3), fd(5e-4));
            d2 * (4.0 / 3.0) + d1 * (-1.0 / 3.0)
        };
        let mut s_fd = [Motion::zero(); 6];
        for (k, col) in s_fd.iter_mut().enumerate().take(nv) {
            let mut e = vec![0.0; nv];
            e[k] = 1.0;
            *col = twist(&e);
            close("S column vs finite difference", motion_gap(col, &jc.s.cols[k]), 1.0 + col.to_vec6().amax(), 1e-9)?;
        }
        let v_fd = twist(&qd);
        let scale = 1.0 + v_fd.to_vec6().amax();
        close("v_J vs finite difference", motion_gap(&v_fd, &jc.v_j), scale, 1e-9)?;
        let mut v_s = Motion::zero();
        for (k, col) in s_fd.iter().enumerate().take(nv) {
            v_s += *col * qd[k];
        }
        close("v_J vs (finite-difference S) qd", motion_gap(&v_s, &jc.v_j), scale, 1e-9)?;
        let vj_at = |t: f64| {
            let mut qt = q.clone();
            integrate_joint(&jt, &mut qt, &qd, t);
            jcalc(&joint, &qt, &qd).v_j
        };
        let c_fd = richardson(vj_at, 1e-3);
        close("c_J vs finite difference", motion_gap(&c_fd, &jc.c_j), scale * scale, 1e-9)?;
        // Model::integrate's joint step and its inverse agree (angles kept below pi).
        let half: Vec<f64> = qd.iter().map(|x| 0.5 * x).collect();
        let mut q2 = q.clone();
        integrate_joint(&jt, &mut q2, &half, 1.0);
        let mut back = vec![0.0; nv];
        mbd::model::difference_joint(&jt, &q, &q2, &mut back);
        close("difference(integrate(q, v)) vs v", (dvec(&back) - dvec(&half)).amax(), 1.0, 1e-12)?;
        prop_assert_eq!(q2.len(), nq);
    }

    /// Whole-tree kinematics: the body velocities of the recursive formula equal finite
    /// differences of the forward-kinematics poses i_X_0 along q (+) s qd, and J_i qd.
    /// Tolerance as for jcalc, relative to 1 + |v_i|.
    #[test]
    fn body_velocities_match_finite_differences(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let v = body_velocities(&model, &s.q, &s.qd).unwrap();
        let kin = forward_kinematics(&model, &s.q).unwrap();
        let x0_at = |t: f64| {
            let mut q = s.q.clone();
            model.integrate(&mut q, &s.qd, t).unwrap();
            forward_kinematics(&model, &q).unwrap().x_0
        };
        let (p1, m1, p2, m2) = (x0_at(1e-3), x0_at(-1e-3), x0_at(5e-4), x0_at(-5e-4));
        for i in 1..=model.nb {
            let d1 = twist_from_transforms(&kin.x_0[i], &m1[i], &p1[i], 1e-3);
            let d2 = twist_from_transforms(&kin.x_0[i], &m2[i], &p2[i], 5e-4);
            let fd = d2 * (4.0 / 3.0) + d1 * (-1.0 / 3.0);
            let scale = 1.0 + v[i].to_vec6().amax();
            close("v_i vs finite difference of i_X_0", motion_gap(&fd, &v[i]), scale, 1e-9)?;
            let jv = body_jacobian(&model, &s.q, i).unwrap() * dvec(&s.qd);
            let jv = Motion::from_vec6(&Vec6::from_column_slice(jv.as_slice()));
            close("J_i qd vs v_i", motion_gap(&jv, &v[i]), scale, 1e-12)?;
        }
    }

    /// Spatial algebra on random transforms, vectors and inertias: the operations on (E, r)
    /// agree with the explicit 6x6 matrices (Featherstone eqs. 2.24-2.26, 2.66), power is
    /// invariant, cross products are covariant, and quaternion helpers round-trip.
    #[test]
    fn spatial_algebra_identities(
        ra in rotation_vector(), ta in prop::array::uniform3(-2.0f64..2.0),
        rb in rotation_vector(), tb in prop::array::uniform3(-2.0f64..2.0),
        m in prop::array::uniform6(-2.0f64..2.0), n in prop::array::uniform6(-2.0f64..2.0),
        f in prop::array::uniform6(-2.0f64..2.0), body in body_spec(),
    ) {
        let a = Xform::new(rot(&ra).transpose(), Vec3::from(ta));
        let b = Xform::new(rot(&rb).transpose(), Vec3::from(tb));
        let (m, n, f) = (Motion::from_vec6(&Vec6::from(m)), Motion::from_vec6(&Vec6::from(n)), Force::from_vec6(&Vec6::from(f)));
        let xa = a.to_motion_matrix();
        let xa_inv = xa.try_inverse().expect("Plücker transforms are invertible");
        let tol = 1e-12;
        let gap6 = |x: Vec6, y: Vec6| (x - y).amax();
        let scale = 10.0; // |r| < 3.5, |m|, |f| < 3.5: products stay below ~10^1
        close("X m", gap6(a.apply_motion(&m).to_vec6(), xa * m.to_vec6()), scale, tol)?;
        close("X* f", gap6(a.apply_force(&f).to_vec6(), a.to_force_matrix() * f.to_vec6()), scale, tol)?;
        close("X* = X^-T", (a.to_force_matrix() - xa_inv.transpose()).amax(), scale, tol)?;
        close("X^-1 m", gap6(a.inv_apply_motion(&m).to_vec6(), xa_inv * m.to_vec6()), scale, tol)?;
        close("X^T f", gap6(a.inv_apply_force(&f).to_vec6(), xa.transpose() * f.to_vec6()), scale, tol)?;
        close("inverse", (a.inverse().to_motion_matrix() - xa_inv).amax(), scale, tol)?;
        close("compose", ((b * a).to_motion_matrix() - b.to_motion_matrix() * xa).amax(), scale * scale, tol)?;
        close("power invariance", (a.apply_motion(&m).dot(&a.apply_force(&f)) - m.dot(&f)).abs(), scale * scale, tol)?;
        close("X (m x n) = (X m) x (X n)",
            gap6(a.apply_motion(&m.cross_motion(&n)).to_vec6(), a.apply_motion(&m).cross_motion(&a.apply_motion(&n)).to_vec6()),
            scale * scale * scale, tol)?;
        close("X* (m x* f) = (X m) x* (X* f)",
            gap6(a.apply_force(&m.cross_force(&f)).to_vec6(), a.apply_motion(&m).cross_force(&a.apply_force(&f)).to_vec6()),
            scale * scale * scale, tol)?;
        close("crm(m) n = m x n", gap6(m.crm() * n.to_vec6(), m.cross_motion(&n).to_vec6()), scale * scale, tol)?;
        close("crf(m) f = m x* f", gap6(m.crf() * f.to_vec6(), m.cross_force(&f).to_vec6()), scale * scale, tol)?;
        // Inertia: physical, positive definite, and transformed as X* I X^-1 and X^T I X.
        let inertia = inertia_of(&body);
        prop_assert!(inertia.check_physical().is_ok(), "{:?}", inertia.check_physical());
        let im: Mat6 = inertia.to_matrix();
        prop_assert!(im.cholesky().is_some(), "spatial inertia is not positive definite");
        let iscale = im.amax() * scale * scale;
        close("I_B = X* I X^-1", (inertia.transform(&a).to_matrix() - a.to_force_matrix() * im * xa_inv).amax(), iscale, tol)?;
        close("I_A = X^T I X", (inertia.transform_back(&a).to_matrix() - xa.transpose() * im * xa).amax(), iscale, tol)?;
        close("transform_back inverts transform", (inertia.transform(&a).transform_back(&a).to_matrix() - im).amax(), iscale, tol)?;
        close("I v", gap6(inertia.mul_motion(&m).to_vec6(), im * m.to_vec6()), im.amax() * scale, tol)?;
        // Quaternions: matrix round trip (up to sign) and integrate/difference.
        let quat = mat_to_quat(&rot(&ra)).unwrap();
        close("quat_to_mat(mat_to_quat(R))", (quat_to_mat(&quat) - rot(&ra)).amax(), 1.0, tol)?;
        let w = Vec3::from(tb) * 0.8; // |w| < 2.8 < pi
        close("difference(integrate(q, w))", (quat_difference(&quat, &quat_integrate(&quat, &w, 1.0)) - w).amax(), 1.0, tol)?;
    }
}

/// Runs `steps` RK4 steps of size `h` and returns the final state.
fn simulate(
    model: &mbd::model::Model,
    s: &State,
    tau: &[f64],
    f_ext: Option<&[Force]>,
    steps: usize,
    h: f64,
) -> (Vec<f64>, Vec<f64>) {
    let mut ws = Workspace::new(model);
    let (mut q, mut v) = (s.q.clone(), s.qd.clone());
    for _ in 0..steps {
        rk4_step(model, &mut ws, &mut q, &mut v, tau, f_ext, h);
    }
    (q, v)
}

const SIM_T: f64 = 0.5;
const SIM_STEPS: usize = 500;

proptest! {
    #![proptest_config(config(64))]

    /// A free-floating tree (free root, no gravity) conserves its total spatial momentum
    /// sum_i (iX_0)^T I_i v_i and its kinetic energy when nothing acts on it, also with
    /// internal joint torques for the momentum; a constant external wrench f_i (base
    /// coordinates) changes the momentum by exactly T sum_i f_i; a force on the root's linear
    /// dofs (a world force at the root's origin) changes the linear momentum by T tau_lin.
    ///
    /// The simulation is classical RK4 with h = 1e-3 over 0.5 s, on the embedded coordinates
    /// (quaternion rates 1/2 q (0, w)), so it is fourth order; with body rates of a few rad/s
    /// the relative drift stayed below 2e-12 over 1000 random cases. Tolerance: 1e-8 relative
    /// to the sum of the bodies' momentum magnitudes (plus the impulse, when there is one).
    #[test]
    fn floating_momentum_is_conserved(ms in floating_spec(8), ss in state_spec()) {
        let model = random_model(&ms);
        let mut s = random_state(&model, &ss);
        // Keep velocities moderate so that 0.5 s at h = 1e-3 resolves the motion.
        for x in s.qd.iter_mut() {
            *x *= 0.5;
        }
        let (h0, scale0) = momentum(&model, &s.q, &s.qd);
        let t0 = kinetic_energy(&model, &s.q, &s.qd).unwrap();
        let gap = |a: &Force, b: &Force| (a.to_vec6() - b.to_vec6()).amax();
        let zero_tau = vec![0.0; model.nv];
        let h = SIM_T / SIM_STEPS as f64;

        // Nothing acts: momentum and energy are constant.
        let (q1, v1) = simulate(&model, &s, &zero_tau, None, SIM_STEPS, h);
        let (h1, _) = momentum(&model, &q1, &v1);
        close("momentum drift, free motion", gap(&h1, &h0), scale0, 1e-8)?;
        let t1 = kinetic_energy(&model, &q1, &v1).unwrap();
        close("kinetic energy drift, free motion", (t1 - t0).abs(), t0.max(1e-12), 1e-8)?;

        // Internal joint torques (root dofs 0..6 left free) and a constant external wrench,
        // scaled so that they start the bodies with accelerations of at most 2 (rad or m)/s^2:
        // light bodies with small moments (0.002 kg m^2) would otherwise spin up to hundreds of
        // rad/s, which RK4 at this step cannot follow. Forcing at rest is linear in the scale.
        let mut tau = s.tau.clone();
        tau[..6].fill(0.0);
        let qdd_rest = aba(&model, &s.q, &zero_tau, &tau, Some(&s.f_ext)).unwrap();
        let sigma = (2.0 / qdd_rest.amax()).min(1.0);
        let tau: Vec<f64> = tau.iter().map(|x| sigma * x).collect();
        let f_ext: Vec<Force> = s.f_ext.iter().map(|f| *f * sigma).collect();
        let (q2, v2) = simulate(&model, &s, &tau, Some(&f_ext), SIM_STEPS, h);
        let (h2, _) = momentum(&model, &q2, &v2);
        let total_f = f_ext.iter().fold(Force::zero(), |acc, f| acc + *f);
        let impulse = total_f * SIM_T;
        close("momentum change vs impulse", gap(&(h2 - h0), &impulse), scale0 + impulse.to_vec6().amax(), 1e-8)?;
        // ... and that change is far above the tolerance, so the conservation check above
        // would notice a missing or wrong force.
        prop_assert!((h2 - h0).to_vec6().amax() > 1e4 * 1e-8 * (scale0 + impulse.to_vec6().amax()),
            "the impulse {:?} is too small to test anything", impulse);

        // A world force on the root's linear dofs: linear momentum changes by T tau_lin.
        let mut tau = zero_tau.clone();
        tau[..3].copy_from_slice(&s.tau[..3]);
        let qdd_rest = aba(&model, &s.q, &zero_tau, &tau, None).unwrap();
        let sigma = (2.0 / qdd_rest.amax()).min(1.0);
        tau.iter_mut().for_each(|x| *x *= sigma);
        let (q3, v3) = simulate(&model, &s, &tau, None, SIM_STEPS, h);
        let (h3, _) = momentum(&model, &q3, &v3);
        // The free joint's linear coordinates live in its predecessor frame, X_tree(1) from the
        // base, which the generator does not keep at the identity: rotate back to the base.
        let expected = model.x_tree[1].e.transpose() * Vec3::new(tau[0], tau[1], tau[2]) * SIM_T;
        let scale = scale0 + expected.amax();
        close("linear momentum change vs T tau_lin", ((h3.f - h0.f) - expected).amax(), scale, 1e-8)?;
    }
}

/// The generator draws every joint type, including free joints and trees with several roots
/// (a guard against a strategy that silently stops exercising a case).
#[test]
fn generator_covers_every_joint_type() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = model_spec();
    let mut seen = std::collections::HashSet::new();
    let mut multi_root = false;
    let mut with_armature = false;
    for _ in 0..200 {
        let spec = strategy.new_tree(&mut runner).unwrap().current();
        let model = random_model(&spec);
        for i in 1..=model.nb {
            seen.insert(model.joints[i].jtype.name());
            with_armature |= model.joints[i].armature > 0.0;
        }
        multi_root |= model.lambda[1..].iter().filter(|&&p| p == 0).count() > 1;
        assert!(model
            .joints
            .iter()
            .skip(1)
            .zip(&model.lambda[1..])
            .all(|(j, &p)| !matches!(j.jtype, JointType::Free) || p == 0));
    }
    assert_eq!(seen.len(), 8, "joint types seen: {seen:?}");
    assert!(multi_root && with_armature);
}

/// The premise of "H is positive definite" (book/src/crba.md, section HandC; aba.md, `I^A`): mass
/// is not enough. A two-link chain whose second body is a point mass on its own hinge axis has
/// mass everywhere, yet turning that hinge moves nothing: H's second row and column are zero, H
/// is singular and ABA's `D` for that dof is zero (a typed error, not a division by zero). The same
/// chain with a small ball of radius `r` in place of the point (positive-definite spatial
/// inertias, full-rank `S`: the book's sufficient condition) has a positive-definite H whose
/// second diagonal entry is the ball's moment about its centre, `2/5 m r^2`, exactly the energy
/// bound `qd^T H qd >= v_2^T I_2 v_2` for `qd = e_2`.
#[test]
fn h_is_singular_for_a_point_mass_on_its_axis_and_positive_definite_otherwise() {
    use mbd::model::{canned, Joint, ModelBuilder};
    use mbd::spatial::{xlt, Mat3, SpatialInertia};
    let (m, r) = (0.7, 0.05);
    let two_link = |rot: Mat3| {
        let mut b = ModelBuilder::new("point mass on its axis");
        let upper = b.add_body(
            "upper",
            0,
            Joint::revolute(Vec3::y()),
            xlt(Vec3::zeros()),
            canned::rod(1.0, 0.5, -Vec3::z()),
        );
        // The second hinge turns about z through the body origin; the mass sits on that axis.
        let on_axis = SpatialInertia::from_mass_com_inertia(m, Vec3::new(0.0, 0.0, -0.2), rot);
        b.add_body(
            "point",
            upper,
            Joint::revolute(Vec3::z()),
            xlt(Vec3::new(0.0, 0.0, -0.5)),
            on_axis,
        );
        b.build().expect("a point mass is a physical inertia")
    };
    let q = [0.4, -1.1];

    let point = two_link(Mat3::zeros());
    let h = crba(&point, &q).unwrap();
    assert!(h[(0, 0)] > 0.1, "the first hinge swings the mass: H_11 = {}", h[(0, 0)]);
    for k in 0..2 {
        assert_eq!((h[(1, k)], h[(k, 1)]), (0.0, 0.0), "row/column 2 of H must vanish");
    }
    assert_eq!(h.determinant(), 0.0);
    assert!(h.clone().cholesky().is_none(), "Cholesky must fail on a singular H");
    let err = aba(&point, &q, &[0.0, 0.0], &[0.0, 0.0], None).unwrap_err();
    assert!(
        matches!(err, mbd::Error::NotPositiveDefinite { dof: 1, .. }),
        "ABA must name dof 1: {err}"
    );

    let ball = two_link(Mat3::identity() * (0.4 * m * r * r));
    let h = crba(&ball, &q).unwrap();
    let (lo, hi) = eig_range(&h);
    assert!(
        lo > 0.0 && h.clone().cholesky().is_some(),
        "eigenvalues of H in [{lo:e}, {hi:e}]"
    );
    close(
        "H_22 vs 2/5 m r^2",
        (h[(1, 1)] - 0.4 * m * r * r).abs(),
        0.4 * m * r * r,
        1e-12,
    )
    .unwrap();
    // The smallest eigenvalue is at most the smallest diagonal entry and stays positive.
    assert!(lo <= h[(1, 1)] * (1.0 + 1e-12));
    aba(&ball, &q, &[0.0, 0.0], &[0.0, 0.0], None).expect("ABA succeeds when H is positive definite");
}
