//! Exercises of the chapters "The constraint model" (book/src/constraints.md, exercises 1-4) and
//! "Soft constraints" (book/src/soft_constraints.md, exercises 5-7).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_constraint`.

use mbd::kinematics::forward_kinematics;
use mbd::mjcf;
use mbd::model::{Cone, Joint, JointType, Model, ModelBuilder, SolverParams};
use mbd::mujoco::collision::MjContact;
use mbd::mujoco::constraint::limit::ball_angle_axis;
use mbd::mujoco::constraint::{impedance, make_constraint, EqData, Invweight};
use mbd::mujoco::forward_smooth;
use mbd::spatial::{Mat3, SpatialInertia, Vec3, Xform};
use nalgebra::DMatrix;
use std::path::Path;

fn load(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/models/{name}.xml"));
    mjcf::load(path).unwrap().model
}

/// Exercise 1: the contact-frame force of a pyramidal contact of dimension `n` from its
/// `2 (n - 1)` edge forces: `f_n` is their sum (every edge pushes along the normal) and
/// `f_k = mu_k (f_{2k-2} - f_{2k-1})` (the pair `S0 +- mu_k S_k` pulls along `S_k` with the
/// difference).
fn exercise_1_answer(edges: &[f64], friction: &[f64; 5], n: usize) -> Vec<f64> {
    let mut out = vec![edges.iter().sum()];
    for k in 1..n {
        out.push(friction[k - 1] * (edges[2 * k - 2] - edges[2 * k - 1]));
    }
    out
}

/// Exercise 2: the Jacobian of a connect's residual `p1(q) - p2(q)` by central differences
/// along `q (+) h e_k`; `anchor1` in body1's frame, `anchor2` in body2's.
fn exercise_2_answer(model: &Model, q: &[f64], b1: usize, a1: &Vec3, b2: usize, a2: &Vec3) -> DMatrix<f64> {
    let h = 1e-6;
    let residual = |q: &[f64]| {
        let kin = forward_kinematics(model, q).unwrap();
        kin.point(b1, a1) - kin.point(b2, a2)
    };
    let mut out = DMatrix::zeros(3, model.nv);
    for k in 0..model.nv {
        let mut e = vec![0.0; model.nv];
        e[k] = h;
        let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
        model.integrate(&mut qp, &e, 1.0).unwrap();
        model.integrate(&mut qm, &e, -1.0).unwrap();
        let d = (residual(&qp) - residual(&qm)) / (2.0 * h);
        for r in 0..3 {
            out[(r, k)] = d[r];
        }
    }
    out
}

/// Exercise 3: the active limit rows of a hinge or slide at `q` with range `[lo, hi]` and
/// margin `m`, as `(distance, jacobian sign)`: the lower side `q - lo` with `+1`, the upper
/// side `hi - q` with `-1`, each when its distance is below the margin.
fn exercise_3_answer(q: f64, lo: f64, hi: f64, m: f64) -> Vec<(f64, f64)> {
    [(q - lo, 1.0), (hi - q, -1.0)]
        .into_iter()
        .filter(|(d, _)| *d < m)
        .collect()
}

/// Exercise 4: the rotation angle in `[0, pi]` of a unit quaternion, `2 acos |w|`.
fn exercise_4_answer(q: &[f64; 4]) -> f64 {
    2.0 * q[0].abs().min(1.0).acos()
}

/// Exercise 5: the impedance `d(r)` of `solimp = (d0, dw, width, mid, p)` at violation `x =
/// |pos - margin|`.
fn exercise_5_answer(solimp: &[f64; 5], pos: f64, margin: f64) -> f64 {
    let [d0, dw, width, mid, p] = *solimp;
    if d0 == dw || width <= 1e-15 {
        return 0.5 * (d0 + dw);
    }
    let x = (pos - margin).abs() / width;
    if x >= 1.0 {
        return dw;
    }
    if x <= 0.0 {
        return d0;
    }
    let y = if x <= mid {
        x.powf(p) / mid.powf(p - 1.0)
    } else {
        1.0 - (1.0 - x).powf(p) / (1.0 - mid).powf(p - 1.0)
    };
    d0 + y * (dw - d0)
}

/// Exercise 6: `(K, B)` of `solref` with `dmax = solimp[1]`: standard `(tc, zeta)` gives
/// `K = 1 / (dmax tc zeta)^2`, `B = 2 / (dmax tc)`; direct `(-k, -b)` gives `K = k / dmax^2`,
/// `B = b / dmax`.
fn exercise_6_answer(solref: [f64; 2], dmax: f64) -> (f64, f64) {
    if solref[0] > 0.0 {
        (1.0 / (dmax * solref[0] * solref[1]).powi(2), 2.0 / (dmax * solref[0]))
    } else {
        (-solref[0] / (dmax * dmax), -solref[1] / dmax)
    }
}

/// Exercise 7: `body_invweight0` of a free body with its centre of mass at its origin: the
/// translational block of `J M^-1 J^T` is `1/m` times the identity, the rotational block
/// `R I^-1 R^T`, whose mean diagonal is the mean of `1 / I_k`.
fn exercise_7_answer(m: f64, moments: [f64; 3]) -> [f64; 2] {
    [1.0 / m, moments.iter().map(|i| 1.0 / i).sum::<f64>() / 3.0]
}

#[test]
fn exercise_1_pyramid_decodes_to_the_elliptic_force() {
    let mut model = load("limits_friction");
    let q = model.qpos0.as_slice().to_vec();
    let v = vec![0.0; model.nv];
    let d = forward_smooth(&model, &q, &v).unwrap();
    let inv = Invweight::new(&model).unwrap();
    // contacts of the ball (condim 4), the rod (6) and the block (3 here) with the floor
    let n = Vec3::new(0.1, -0.2, 1.0).normalize();
    let t1 = n.cross(&Vec3::x()).normalize();
    let frame = Mat3::from_rows(&[n.transpose(), t1.transpose(), n.cross(&t1).transpose()]);
    let contacts: Vec<MjContact> = [(5, 4), (6, 6), (7, 3)]
        .iter()
        .map(|&(g, dim)| MjContact {
            geom: [0, g],
            pos: Vec3::new(0.1 * g as f64, 0.3, -0.01),
            frame,
            dist: -0.001,
            dim,
            friction: [0.7, 0.6, 0.03, 0.002, 0.001],
            solref: [0.02, 1.0],
            solreffriction: [0.0; 2],
            solimp: [0.9, 0.95, 0.001, 0.5, 2.0],
            margin: 0.0,
            gap: 0.0,
            efc_address: None,
        })
        .collect();
    model.opt.cone = Cone::Pyramidal;
    let pyr = make_constraint(&model, &d, &inv, &q, &v, contacts.clone()).unwrap();
    model.opt.cone = Cone::Elliptic;
    let ell = make_constraint(&model, &d, &inv, &q, &v, contacts).unwrap();
    for (k, c) in pyr.contacts.iter().enumerate() {
        let (ap, ae) = (c.efc_address.unwrap(), ell.contacts[k].efc_address.unwrap());
        let ne = 2 * (c.dim - 1);
        let edges: Vec<f64> = (0..ne).map(|e| 0.3 + 0.1 * e as f64 * (-1f64).powi(e as i32)).collect();
        let force = exercise_1_answer(&edges, &c.friction, c.dim);
        let jp = pyr.j.rows(ap, ne).transpose() * nalgebra::DVector::from_column_slice(&edges);
        let je = ell.j.rows(ae, c.dim).transpose() * nalgebra::DVector::from_column_slice(&force);
        assert!((&jp - &je).amax() <= 1e-12 * jp.amax(), "contact {k}");
        for j in 1..c.dim {
            assert!(force[j].abs() <= c.friction[j - 1] * force[0]);
        }
    }
}

#[test]
fn exercise_2_connect_jacobian_by_finite_differences() {
    let model = load("fourbar");
    let inv = Invweight::new(&model).unwrap();
    let mut q = model.qpos0.as_slice().to_vec();
    model.integrate(&mut q, &[0.3, -0.2, 0.4], 1.0).unwrap();
    let v = vec![0.0; model.nv];
    let d = forward_smooth(&model, &q, &v).unwrap();
    let efc = make_constraint(&model, &d, &inv, &q, &v, Vec::new()).unwrap();
    let (b1, b2) = match model.equality[0] {
        mbd::model::Equality::Connect { body1, body2, .. } => (body1, body2),
        _ => unreachable!(),
    };
    let EqData::Connect { anchor1, anchor2 } = inv.eq[0] else {
        unreachable!()
    };
    let fd = exercise_2_answer(&model, &q, b1, &anchor1, b2, &anchor2);
    let j = efc.j.rows(0, 3);
    assert!((j - &fd).amax() <= 1e-6 * j.amax(), "{j} vs {fd}");
}

#[test]
fn exercise_3_limit_rows_of_a_slider() {
    let mut b = ModelBuilder::new("slider");
    let mut j = Joint::new(JointType::Prismatic { axis: Vec3::x() });
    j.limited = true;
    j.range = [-0.2, 0.3];
    j.margin = 0.05;
    let inertia = SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::identity());
    b.add_body("s", 0, j, Xform::identity(), inertia);
    let model = b.build().unwrap();
    let inv = Invweight::new(&model).unwrap();
    for k in 0..=60 {
        let q = [-0.4 + 0.012 * k as f64];
        let d = forward_smooth(&model, &q, &[0.0]).unwrap();
        let efc = make_constraint(&model, &d, &inv, &q, &[0.0], Vec::new()).unwrap();
        let ours: Vec<(f64, f64)> = (0..efc.nefc()).map(|i| (efc.pos[i], efc.j[(i, 0)])).collect();
        let expected = exercise_3_answer(q[0], -0.2, 0.3, 0.05);
        assert_eq!(ours.len(), expected.len(), "q = {}", q[0]);
        for (a, b) in ours.iter().zip(&expected) {
            assert!((a.0 - b.0).abs() <= 1e-15 && a.1 == b.1);
        }
    }
}

#[test]
fn exercise_4_ball_angle() {
    for k in 0..200 {
        let t = k as f64 * 0.37;
        let axis = Vec3::new(t.sin(), (1.3 * t).cos(), 0.4).normalize();
        let angle = (k as f64 * 0.731) % (2.0 * std::f64::consts::PI) - std::f64::consts::PI;
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        let (s, c) = (0.5 * angle).sin_cos();
        let q = [sign * c, sign * s * axis.x, sign * s * axis.y, sign * s * axis.z];
        let (theta, _) = ball_angle_axis(&q);
        assert!(
            (theta - exercise_4_answer(&q)).abs() <= 1e-7,
            "{theta} vs {}",
            exercise_4_answer(&q)
        );
    }
}

#[test]
fn exercise_5_impedance() {
    let cases = [
        [0.9, 0.95, 0.001, 0.5, 2.0],
        [0.5, 0.99, 0.01, 0.2, 3.0],
        [0.3, 0.8, 0.002, 0.7, 1.0],
        [0.9, 0.9, 0.001, 0.5, 2.0],
    ];
    for s in cases {
        for k in 0..=100 {
            let r = -0.0003 * k as f64;
            let (d, _) = impedance(&s, r, 0.001);
            assert!((d - exercise_5_answer(&s, r, 0.001)).abs() <= 1e-15);
        }
    }
}

#[test]
fn exercise_6_stiffness_and_damping() {
    for solref in [[0.02, 1.0], [0.05, 0.7], [-3000.0, -40.0]] {
        for solimp in [[0.9, 0.95, 0.001, 0.5, 2.0], [0.8, 0.99, 0.01, 0.3, 3.0]] {
            let mut b = ModelBuilder::new("slider");
            let mut j = Joint::new(JointType::Prismatic { axis: Vec3::z() });
            j.limited = true;
            j.range = [0.0, 1.0];
            j.limit_params = SolverParams { solref, solimp };
            let inertia = SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::identity());
            b.add_body("s", 0, j, Xform::identity(), inertia);
            let model = b.build().unwrap();
            let inv = Invweight::new(&model).unwrap();
            let d = forward_smooth(&model, &[-0.01], &[0.0]).unwrap();
            let efc = make_constraint(&model, &d, &inv, &[-0.01], &[0.0], Vec::new()).unwrap();
            let (k, bb) = exercise_6_answer(solref, solimp[1]);
            assert!((efc.kbip[0][0] - k).abs() <= 1e-12 * k && (efc.kbip[0][1] - bb).abs() <= 1e-12 * bb);
        }
    }
}

#[test]
fn exercise_7_invweight_of_a_free_body() {
    let (m, moments) = (2.5, [0.04, 0.07, 0.09]);
    let mut b = ModelBuilder::new("free box");
    let inertia = SpatialInertia::from_mass_com_inertia(m, Vec3::zeros(), Mat3::from_diagonal(&Vec3::from(moments)));
    b.add_body("box", 0, Joint::new(JointType::Free), Xform::identity(), inertia);
    let model = b.build().unwrap();
    let inv = Invweight::new(&model).unwrap();
    let expected = exercise_7_answer(m, moments);
    for k in 0..2 {
        assert!((inv.body[1][k] - expected[k]).abs() <= 1e-12 * expected[k]);
    }
}
