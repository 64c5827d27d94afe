//! Bad input gets a typed error that names the place, never a panic.
//!
//! Each test builds the smallest bad case, matches the `Error` variant and its fields, and
//! checks that the message names the body, dof, index or argument at fault. The last tests
//! throw wrong-length and non-finite inputs at every checked entry point of the foundation and
//! fail on any panic.
//!
//! Run with `cargo test --release --test errors`.

use mbd::dynamics::{
    aba, bias_forces, crba, hand_c, kinetic_energy, passive_forces, potential_energy, qacc_smooth, rnea,
};
use mbd::kinematics::{body_jacobian, body_velocities, forward_kinematics, point_jacobian};
use mbd::model::{Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{xlt, Force, Mat3, SpatialInertia, Vec3, Xform};
use mbd::Error;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn unit_inertia() -> SpatialInertia {
    SpatialInertia::from_mass_com_inertia(
        1.0,
        Vec3::new(0.1, 0.0, -0.2),
        Mat3::from_diagonal(&Vec3::new(0.02, 0.03, 0.04)),
    )
}

fn named(mut j: Joint, name: &str) -> Joint {
    j.name = name.into();
    j
}

/// A small tree with every joint type: free root "torso", a ball "shoulder", a revolute
/// "elbow", a helical "screw", a cylindrical "sleeve", a planar "slider", a fixed "tool" and a
/// prismatic "rail" on the base.
fn probe_model() -> Model {
    let a = Vec3::new(0.3, -0.5, 0.8).normalize();
    let mut b = ModelBuilder::new("probe");
    let torso = b.add_body(
        "torso",
        0,
        named(Joint::new(JointType::Free), "root"),
        Xform::identity(),
        unit_inertia(),
    );
    let arm = b.add_body(
        "arm",
        torso,
        named(Joint::new(JointType::Spherical), "shoulder"),
        xlt(Vec3::new(0.0, 0.2, 0.1)),
        unit_inertia(),
    );
    let fore = b.add_body(
        "forearm",
        arm,
        named(Joint::revolute(a), "elbow"),
        xlt(Vec3::new(0.0, 0.3, 0.0)),
        unit_inertia(),
    );
    let screw = b.add_body(
        "nut",
        fore,
        named(Joint::new(JointType::Helical { axis: a, pitch: 0.05 }), "screw"),
        xlt(Vec3::new(0.0, 0.0, -0.2)),
        unit_inertia(),
    );
    let sleeve = b.add_body(
        "sleeve",
        screw,
        named(Joint::new(JointType::Cylindrical { axis: Vec3::z() }), "sleeve"),
        xlt(Vec3::x()),
        unit_inertia(),
    );
    b.add_body(
        "slider",
        sleeve,
        named(Joint::new(JointType::Planar), "slider"),
        xlt(Vec3::y()),
        unit_inertia(),
    );
    b.add_body(
        "tool",
        fore,
        named(Joint::new(JointType::Fixed), "tool"),
        xlt(Vec3::z()),
        unit_inertia(),
    );
    b.add_body(
        "cart",
        0,
        named(Joint::prismatic(Vec3::x()), "rail"),
        xlt(Vec3::new(1.0, 0.0, 0.0)),
        unit_inertia(),
    );
    b.build().expect("probe model is valid")
}

/// A valid state of `model`: qpos0 moved a little, small velocities.
fn state(model: &Model) -> (Vec<f64>, Vec<f64>) {
    let mut q = model.qpos0.as_slice().to_vec();
    let dq: Vec<f64> = (0..model.nv).map(|k| 0.3 * ((k as f64) * 0.7).sin()).collect();
    model.integrate(&mut q, &dq, 1.0).unwrap();
    let qd: Vec<f64> = (0..model.nv).map(|k| 0.5 * ((k as f64) * 1.3).cos()).collect();
    (q, qd)
}

/// One-body model with the given joint and inertia (for the validation cases).
fn one_body(joint: Joint, inertia: SpatialInertia) -> mbd::Result<Model> {
    let mut b = ModelBuilder::new("one");
    b.add_body("lonely", 0, joint, Xform::identity(), inertia);
    b.build()
}

#[test]
fn parent_breaking_lambda_order_is_rejected() {
    // body 2's parent must be 0 or 1: itself, a later body and an absent body are refused
    for bad_parent in [2, 3, 7] {
        let mut b = ModelBuilder::new("loop");
        b.add_body(
            "first",
            0,
            Joint::revolute(Vec3::z()),
            Xform::identity(),
            unit_inertia(),
        );
        let two = b.add_body(
            "second",
            bad_parent,
            Joint::revolute(Vec3::z()),
            Xform::identity(),
            unit_inertia(),
        );
        assert_eq!(two, 2);
        b.add_body(
            "third",
            1,
            Joint::revolute(Vec3::z()),
            Xform::identity(),
            unit_inertia(),
        );
        let err = b.build().unwrap_err();
        assert_eq!(
            err,
            Error::BadParent {
                body: 2,
                name: "second".into(),
                parent: bad_parent
            }
        );
        let msg = err.to_string();
        assert!(
            msg.contains("body 2") && msg.contains("'second'") && msg.contains("lambda(i) < i"),
            "{msg}"
        );
    }
}

#[test]
fn non_physical_inertias_are_rejected() {
    let ic = Mat3::from_diagonal(&Vec3::new(0.02, 0.03, 0.04));
    let cases = [
        (
            SpatialInertia::from_mass_com_inertia(-1.0, Vec3::zeros(), ic),
            "negative mass",
        ),
        (
            SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::from_diagonal(&Vec3::new(1.0, 1.0, 3.0))),
            "triangle",
        ),
        (
            SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::from_diagonal(&Vec3::new(-0.1, 1.0, 1.0))),
            "negative principal",
        ),
        (
            SpatialInertia::from_mass_com_inertia(
                1.0,
                Vec3::zeros(),
                Mat3::new(1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
            ),
            "not symmetric",
        ),
        (
            SpatialInertia::from_mass_com_inertia(f64::NAN, Vec3::zeros(), ic),
            "non-finite",
        ),
        (
            SpatialInertia::from_mass_com_inertia(1.0, Vec3::new(0.0, f64::INFINITY, 0.0), ic),
            "non-finite",
        ),
    ];
    for (inertia, why) in cases {
        let mut b = ModelBuilder::new("bad inertia");
        let first = b.add_body("good", 0, Joint::revolute(Vec3::z()), Xform::identity(), unit_inertia());
        b.add_body("bad", first, Joint::revolute(Vec3::x()), xlt(Vec3::x()), inertia);
        match b.build() {
            Err(Error::BadInertia { body, name, why: w }) => {
                assert_eq!((body, name.as_str()), (2, "bad"));
                assert!(w.contains(why), "expected '{why}' in '{w}'");
            }
            other => panic!("expected BadInertia ({why}), got {other:?}"),
        }
    }
    // A massless body is allowed (Featherstone 4.2 uses them for multi-joint connections).
    assert!(one_body(Joint::revolute(Vec3::z()), SpatialInertia::zero()).is_ok());
}

#[test]
fn malformed_joints_are_rejected() {
    let z = Vec3::zeros();
    let cases: Vec<(Joint, &str)> = vec![
        (Joint::new(JointType::Revolute { axis: z }), "axis"),
        (Joint::new(JointType::Prismatic { axis: z }), "axis"),
        (Joint::new(JointType::Helical { axis: z, pitch: 0.1 }), "axis"),
        (Joint::new(JointType::Cylindrical { axis: z }), "axis"),
        // the convenience constructors normalize, turning a zero axis into NaN: still caught
        (Joint::revolute(z), "axis"),
        (Joint::prismatic(z), "axis"),
        (
            Joint::new(JointType::Revolute {
                axis: Vec3::new(2.0, 0.0, 0.0),
            }),
            "axis",
        ),
        (
            Joint::new(JointType::Revolute {
                axis: Vec3::new(f64::NAN, 0.0, 1.0),
            }),
            "axis",
        ),
        (
            Joint {
                armature: -0.1,
                ..Joint::revolute(Vec3::z())
            },
            ">= 0",
        ),
        (
            Joint {
                damping: f64::NAN,
                ..Joint::revolute(Vec3::z())
            },
            ">= 0",
        ),
        (
            Joint {
                limited: true,
                range: [1.0, -1.0],
                ..Joint::revolute(Vec3::z())
            },
            "range",
        ),
    ];
    for (joint, why) in cases {
        let jt = joint.jtype;
        match one_body(joint, unit_inertia()) {
            Err(e @ Error::BadJoint { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("body 1") && msg.contains("'lonely'") && msg.contains(why),
                    "{jt:?}: {msg}"
                );
            }
            other => panic!("{jt:?}: expected BadJoint ({why}), got {other:?}"),
        }
    }
    // A free joint away from the base.
    let mut b = ModelBuilder::new("free child");
    let p = b.add_body(
        "parent",
        0,
        Joint::revolute(Vec3::z()),
        Xform::identity(),
        unit_inertia(),
    );
    b.add_body(
        "child",
        p,
        Joint::new(JointType::Free),
        Xform::identity(),
        unit_inertia(),
    );
    let err = b.build().unwrap_err();
    assert!(
        matches!(&err, Error::BadJoint { body: 2, name, .. } if name == "child"),
        "{err:?}"
    );
    assert!(err.to_string().contains("free joint"), "{err}");
    // A non-finite X_tree.
    let err = {
        let mut b = ModelBuilder::new("bad tree");
        b.add_body(
            "lost",
            0,
            Joint::revolute(Vec3::z()),
            xlt(Vec3::new(0.0, f64::NAN, 0.0)),
            unit_inertia(),
        );
        b.build().unwrap_err()
    };
    assert!(
        matches!(&err, Error::BadJoint { body: 1, name, why } if name == "lost" && why.contains("X_tree")),
        "{err:?}"
    );
    // A qpos0 of the wrong length.
    let mut b = ModelBuilder::new("bad qpos0");
    let i = b.add_body(
        "ball",
        0,
        Joint::new(JointType::Spherical),
        Xform::identity(),
        unit_inertia(),
    );
    b.set_qpos0(i, &[1.0, 0.0, 0.0]);
    let err = b.build().unwrap_err();
    assert_eq!(
        err,
        Error::BadLength {
            what: "qpos0 of body 'ball'".into(),
            got: 3,
            expected: 4
        }
    );
}

/// Every checked entry point, called with (q, qd, x) where x is the third vector argument
/// (qdd, tau or qfrc_applied) and an optional f_ext. Returns the error, if any.
fn call_all(
    model: &Model,
    q: &[f64],
    qd: &[f64],
    x: &[f64],
    f_ext: Option<&[Force]>,
) -> Vec<(&'static str, mbd::Result<()>)> {
    let ok = |r: mbd::Result<()>| r;
    let body = model.nb;
    vec![
        ("rnea", ok(rnea(model, q, qd, x, f_ext).map(|_| ()))),
        ("aba", ok(aba(model, q, qd, x, f_ext).map(|_| ()))),
        ("hand_c", ok(hand_c(model, q, qd, f_ext).map(|_| ()))),
        ("bias_forces", ok(bias_forces(model, q, qd).map(|_| ()))),
        ("crba", ok(crba(model, q).map(|_| ()))),
        ("kinetic_energy", ok(kinetic_energy(model, q, qd).map(|_| ()))),
        ("potential_energy", ok(potential_energy(model, q).map(|_| ()))),
        ("passive_forces", ok(passive_forces(model, q, qd).map(|_| ()))),
        ("qacc_smooth", ok(qacc_smooth(model, q, qd, x).map(|_| ()))),
        ("forward_kinematics", ok(forward_kinematics(model, q).map(|_| ()))),
        ("body_velocities", ok(body_velocities(model, q, qd).map(|_| ()))),
        ("body_jacobian", ok(body_jacobian(model, q, body).map(|_| ()))),
        (
            "point_jacobian",
            ok(point_jacobian(model, q, body, &Vec3::x()).map(|_| ())),
        ),
    ]
}

#[test]
fn states_of_the_wrong_length_are_rejected() {
    let model = probe_model();
    let (q, qd) = state(&model);
    let x = vec![0.1; model.nv];
    let (nq, nv) = (model.nq, model.nv);
    // Sanity: the valid state passes everywhere.
    for (name, r) in call_all(&model, &q, &qd, &x, None) {
        assert!(r.is_ok(), "{name}: {r:?}");
    }
    let short_q = &q[..nq - 1];
    for (name, r) in call_all(&model, short_q, &qd, &x, None) {
        assert_eq!(
            r,
            Err(Error::BadLength {
                what: "qpos".into(),
                got: nq - 1,
                expected: nq
            }),
            "{name}"
        );
    }
    let long_qd: Vec<f64> = qd.iter().cloned().chain([0.0]).collect();
    for (name, r) in call_all(&model, &q, &long_qd, &x, None) {
        let uses_qd = !matches!(
            name,
            "crba" | "potential_energy" | "forward_kinematics" | "body_jacobian" | "point_jacobian"
        );
        if uses_qd {
            assert_eq!(
                r,
                Err(Error::BadLength {
                    what: "qvel".into(),
                    got: nv + 1,
                    expected: nv
                }),
                "{name}"
            );
        } else {
            assert!(r.is_ok(), "{name} does not take qvel: {r:?}");
        }
    }
    let short_x = &x[..nv - 2];
    let expect_x = [("rnea", "qacc"), ("aba", "tau"), ("qacc_smooth", "qfrc_applied")];
    for (name, r) in call_all(&model, &q, &qd, short_x, None) {
        match expect_x.iter().find(|(n, _)| *n == name) {
            Some((_, what)) => {
                let err = r.unwrap_err();
                assert_eq!(
                    err,
                    Error::BadLength {
                        what: (*what).into(),
                        got: nv - 2,
                        expected: nv
                    },
                    "{name}"
                );
                assert_eq!(err.to_string(), format!("{what} has length {}, expected {nv}", nv - 2));
            }
            None => assert!(r.is_ok(), "{name}: {r:?}"),
        }
    }
    let f_short = vec![Force::zero(); model.nb];
    for name in ["rnea", "aba", "hand_c"] {
        let r = call_all(&model, &q, &qd, &x, Some(&f_short))
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap()
            .1;
        assert_eq!(
            r,
            Err(Error::BadLength {
                what: "f_ext".into(),
                got: model.nb,
                expected: model.nb + 1
            }),
            "{name}"
        );
    }
}

#[test]
fn non_finite_inputs_are_rejected() {
    let model = probe_model();
    let (q, qd) = state(&model);
    let x = vec![0.1; model.nv];
    let f = vec![Force::new(Vec3::new(0.1, 0.2, 0.3), Vec3::new(1.0, -1.0, 0.5)); model.nb + 1];
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        // qpos: a scalar coordinate (the rail's) and a quaternion entry
        for idx in [model.q_adr[8], model.q_adr[2] + 1] {
            let mut qb = q.clone();
            qb[idx] = bad;
            for (name, r) in call_all(&model, &qb, &qd, &x, Some(&f)) {
                match r {
                    Err(Error::NonFinite { what, index, .. }) => {
                        assert_eq!((what.as_str(), index), ("qpos", idx), "{name}")
                    }
                    other => panic!("{name}: expected NonFinite qpos[{idx}], got {other:?}"),
                }
            }
        }
        let mut qdb = qd.clone();
        qdb[4] = bad;
        let r = rnea(&model, &q, &qdb, &x, None).unwrap_err();
        assert_eq!(r.to_string(), format!("qvel[4] is not finite ({bad})"));
        for (name, r) in call_all(&model, &q, &qdb, &x, Some(&f)) {
            if matches!(
                name,
                "crba" | "potential_energy" | "forward_kinematics" | "body_jacobian" | "point_jacobian"
            ) {
                continue;
            }
            assert!(
                matches!(&r, Err(Error::NonFinite { what, index: 4, .. }) if what == "qvel"),
                "{name}: {r:?}"
            );
        }
        let mut xb = x.clone();
        xb[model.nv - 1] = bad;
        for (name, what) in [("rnea", "qacc"), ("aba", "tau"), ("qacc_smooth", "qfrc_applied")] {
            let r = call_all(&model, &q, &qd, &xb, None)
                .into_iter()
                .find(|(n, _)| *n == name)
                .unwrap()
                .1;
            assert!(
                matches!(&r, Err(Error::NonFinite { what: w, index, .. }) if w == what && *index == model.nv - 1),
                "{name}: {r:?}"
            );
        }
        let mut fb = f.clone();
        fb[3].f.y = bad;
        for name in ["rnea", "aba", "hand_c"] {
            let r = call_all(&model, &q, &qd, &x, Some(&fb))
                .into_iter()
                .find(|(n, _)| *n == name)
                .unwrap()
                .1;
            let err = r.unwrap_err();
            assert!(
                matches!(&err, Error::NonFinite { what, index: 4, .. } if what == "f_ext[3]"),
                "{name}: {err:?}"
            );
            assert!(err.to_string().starts_with("f_ext[3][4] is not finite"), "{err}");
        }
    }
}

#[test]
fn zero_quaternions_are_rejected() {
    let model = probe_model();
    let (q, qd) = state(&model);
    let x = vec![0.0; model.nv];
    // the free root's quaternion starts at qpos[3], the shoulder's at q_adr[2]
    for (joint, start) in [("root", model.q_adr[1] + 3), ("shoulder", model.q_adr[2])] {
        let mut qb = q.clone();
        qb[start..start + 4].fill(0.0);
        for (name, r) in call_all(&model, &qb, &qd, &x, None) {
            let err = r.unwrap_err();
            assert_eq!(
                err,
                Error::BadQuaternion {
                    what: "qpos".into(),
                    joint: joint.into(),
                    index: start
                },
                "{name}"
            );
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("'{joint}'")) && msg.contains(&format!("qpos[{start}]")),
                "{msg}"
            );
        }
    }
    // A quaternion of any other non-zero length is fine: jcalc normalizes it.
    let mut q2 = q.clone();
    let s = model.q_adr[2];
    for v in &mut q2[s..s + 4] {
        *v *= 3.0;
    }
    let a = aba(&model, &q, &qd, &x, None).unwrap();
    let b = aba(&model, &q2, &qd, &x, None).unwrap();
    assert!((a - b).amax() < 1e-12);
}

/// A massless leaf makes ABA's D_i = S_i^T I^A_i S_i zero: the error names the dof. With
/// armature on the joint, D_i = armature > 0 and ABA succeeds.
#[test]
fn massless_leaf_is_singular_in_aba() {
    let build = |leaf_joint: Joint, leaf_inertia: SpatialInertia| {
        let mut b = ModelBuilder::new("massless leaf");
        let one = b.add_body(
            "upper",
            0,
            Joint::revolute(Vec3::y()),
            Xform::identity(),
            unit_inertia(),
        );
        let two = b.add_body(
            "lower",
            one,
            Joint::revolute(Vec3::x()),
            xlt(Vec3::new(0.0, 0.0, -0.5)),
            unit_inertia(),
        );
        b.add_body("leaf", two, leaf_joint, xlt(Vec3::new(0.0, 0.0, -0.5)), leaf_inertia);
        b.build().unwrap()
    };
    // single-dof leaves: nothing at all, and a point mass on the joint axis (no inertia about it)
    let point_on_axis = SpatialInertia::from_mass_com_inertia(2.0, Vec3::new(0.0, 0.0, 0.3), Mat3::zeros());
    for (joint, inertia) in [
        (Joint::revolute(Vec3::z()), SpatialInertia::zero()),
        (Joint::prismatic(Vec3::z()), SpatialInertia::zero()),
        (Joint::revolute(Vec3::z()), point_on_axis),
    ] {
        let model = build(joint.clone(), inertia);
        let (q, qd) = state(&model);
        let tau = vec![0.1; model.nv];
        let err = aba(&model, &q, &qd, &tau, None).unwrap_err();
        match &err {
            Error::NotPositiveDefinite { dof, value, .. } => {
                assert_eq!(*dof, 2, "{err}");
                assert!(value.abs() < 1e-12, "{err}");
            }
            other => panic!("expected NotPositiveDefinite, got {other:?}"),
        }
        assert!(
            err.to_string().contains("at dof 2") && err.to_string().contains("'leaf'"),
            "{err}"
        );
        // armature makes it regular again
        let mut armed = model.clone();
        armed.joints[3].armature = 0.01;
        assert!(aba(&armed, &q, &qd, &tau, None).is_ok());
    }
    // multi-dof leaf (ball joint): the error names the first dof of the joint and the body
    let model = build(Joint::new(JointType::Spherical), SpatialInertia::zero());
    let (q, qd) = state(&model);
    let err = aba(&model, &q, &qd, &vec![0.0; model.nv], None).unwrap_err();
    assert!(matches!(err, Error::NotPositiveDefinite { dof: 2, .. }), "{err:?}");
    assert!(
        err.to_string().contains("leaf") && err.to_string().contains("dof 2"),
        "{err}"
    );
}

/// Wrong lengths and non-finite values at every entry point, on several models (including a
/// tree with no dofs): each call must return (Ok or Err), never panic.
#[test]
fn no_entry_point_panics_on_bad_input() {
    let mut models = vec![
        probe_model(),
        mbd::model::canned::chain(3, true),
        mbd::model::canned::floating_base_ball_arms(),
    ];
    let mut b = ModelBuilder::new("welded");
    b.add_body("block", 0, Joint::new(JointType::Fixed), xlt(Vec3::x()), unit_inertia());
    models.push(b.build().unwrap());
    let mut panics = Vec::new();
    for model in &models {
        let (q, qd) = state(model);
        let lens = |n: usize| [0, n.saturating_sub(1), n, n + 1, 2 * n + 3];
        let vecs = |n: usize, base: &[f64]| {
            let mut out: Vec<Vec<f64>> = lens(n)
                .iter()
                .map(|&l| (0..l).map(|k| if k < base.len() { base[k] } else { 0.5 }).collect())
                .collect();
            if n > 0 {
                let mut nan = base.to_vec();
                nan[n - 1] = f64::NAN;
                out.push(nan);
            }
            out
        };
        let base_x = vec![0.2; model.nv];
        let fs = [
            vec![Force::zero(); model.nb + 1],
            vec![Force::zero(); model.nb],
            vec![],
            {
                let mut f = vec![Force::zero(); model.nb + 1];
                f[model.nb].n.x = f64::INFINITY;
                f
            },
        ];
        for qv in vecs(model.nq, &q) {
            for qdv in vecs(model.nv, &qd) {
                for xv in vecs(model.nv, &base_x) {
                    for f in fs.iter().map(Some).chain([None]) {
                        let r = catch_unwind(AssertUnwindSafe(|| {
                            let _ = call_all(model, &qv, &qdv, &xv, f.map(|v| v.as_slice()));
                        }));
                        if r.is_err() {
                            panics.push(format!(
                                "{}: nq {} nv {} f {:?}",
                                model.name,
                                qv.len(),
                                qdv.len(),
                                f.map(|v| v.len())
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(panics.is_empty(), "panics on bad input:\n{}", panics.join("\n"));
}

/// A body index past the last body is bad input too.
///
/// Ignored: `body_jacobian` indexes `kin.x_0[i]` without a check and panics
/// (src/kinematics.rs); remove the `ignore` once it returns an error.
#[test]
fn body_index_out_of_range_does_not_panic() {
    let model = probe_model();
    let (q, _) = state(&model);
    for i in [model.nb + 1, usize::MAX] {
        let r = catch_unwind(AssertUnwindSafe(|| body_jacobian(&model, &q, i).map(|_| ())));
        assert!(
            matches!(r, Ok(Err(_))),
            "body_jacobian(body {i}): {:?}",
            r.as_ref().map_err(|_| "panicked")
        );
        let r = catch_unwind(AssertUnwindSafe(|| {
            point_jacobian(&model, &q, i, &Vec3::x()).map(|_| ())
        }));
        assert!(
            matches!(r, Ok(Err(_))),
            "point_jacobian(body {i}): {:?}",
            r.as_ref().map_err(|_| "panicked")
        );
    }
}

/// Parameters that `Model::validate` does not look at yet: a non-finite helical pitch, joint
/// anchor, stiffness or gravity is accepted and turns every result into NaN without an error.
///
/// Ignored until `validate` checks them (src/model/mod.rs); each case then gives `BadJoint`
/// (or an options error for gravity).
#[test]
fn non_finite_model_parameters_are_rejected() {
    let nan = f64::NAN;
    let mut anchored = Joint::revolute(Vec3::z());
    anchored.pos = Vec3::new(0.0, nan, 0.0);
    let mut springy = Joint::revolute(Vec3::z());
    springy.stiffness = nan;
    let joints = [
        Joint::new(JointType::Helical {
            axis: Vec3::z(),
            pitch: nan,
        }),
        anchored,
        springy,
    ];
    let mut accepted = Vec::new();
    for j in joints {
        let what = format!("{j:?}");
        if let Ok(model) = one_body(j, unit_inertia()) {
            let (q, qd) = state(&model);
            let tau = rnea(&model, &q, &qd, &vec![0.0; model.nv], None).map(|t| t.iter().all(|x| x.is_finite()));
            accepted.push(format!("{what} -> rnea finite: {tau:?}"));
        }
    }
    let mut b = ModelBuilder::new("bad gravity");
    b.opt.gravity = Vec3::new(0.0, 0.0, nan);
    b.add_body(
        "lonely",
        0,
        Joint::revolute(Vec3::x()),
        Xform::identity(),
        unit_inertia(),
    );
    if b.build().is_ok() {
        accepted.push("gravity (0, 0, NaN)".into());
    }
    assert!(accepted.is_empty(), "accepted:\n{}", accepted.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Regressions from the fuzz campaign (tests/fuzz.rs): each case once hung or panicked.

/// Runs `f` on its own thread and returns its result, failing the test if it panics or does not
/// return within `secs` seconds (a hung thread is left behind; the test fails either way).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(Ok(v)) => v,
        Ok(Err(_)) => panic!("{what}: panicked"),
        Err(_) => panic!("{what}: did not return within {secs} s"),
    }
}

#[test]
fn mat_to_quat_refuses_what_is_not_a_rotation() {
    use mbd::spatial::{mat_to_quat, quat_to_mat};
    let mut nan = Mat3::identity();
    nan[(1, 2)] = f64::NAN;
    for (what, r) in [
        ("-I", -Mat3::identity()),
        ("1e100 I", Mat3::identity() * 1e100),
        ("NaN entry", nan),
        ("zero", Mat3::zeros()),
    ] {
        let err = within(5, what, move || mat_to_quat(&r)).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument { what, .. } if what == "r"),
            "{what}: {err}"
        );
    }
    // a half turn (trace -1) still converts, through Shepperd's largest-diagonal branch
    let q = [0.0, 0.0, 1.0, 0.0];
    let back = mat_to_quat(&quat_to_mat(&q)).unwrap();
    assert!(back.iter().zip(q).all(|(a, b)| (a - b).abs() < 1e-15), "{back:?}");
}

#[test]
fn closed_loop_solvers_refuse_huge_and_non_finite_input() {
    use mbd::loops::{forward_dynamics, solve_kkt, solve_lambda_first, Method};
    use nalgebra::{DMatrix, DVector};
    let m = mbd::model::mechanisms::four_bar();
    let q = vec![1e300; m.nq];
    let (nv, mc) = (m.nv, m.clone());
    let err = within(10, "forward_dynamics(q = 1e300)", move || {
        forward_dynamics(&mc, &q, &vec![0.0; nv], &vec![0.0; nv], None, Method::Kkt, None)
    })
    .unwrap_err();
    assert!(
        matches!(&err, Error::TooLarge { what, index: 0, .. } if what == "qpos"),
        "{err}"
    );
    assert!(err.to_string().contains("qpos[0] = 1e300 exceeds mjMAXVAL"), "{err}");

    let h = DMatrix::<f64>::identity(2, 2);
    let z = DVector::zeros(2);
    let mut k_inf = DMatrix::from_row_slice(1, 2, &[1.0, 1.0]);
    k_inf[(0, 1)] = f64::INFINITY;
    let (hc, zc) = (h.clone(), z.clone());
    let err = within(10, "solve_kkt(inf in K)", move || {
        solve_kkt(&hc, &zc, &k_inf, &DVector::zeros(1))
    })
    .unwrap_err();
    assert!(matches!(&err, Error::NonFinite { what, .. } if what == "kmat"), "{err}");
    let mut k_nan = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 1.0, 0.0]);
    k_nan[(1, 0)] = f64::NAN;
    let err = solve_kkt(&h, &z, &k_nan, &DVector::zeros(2)).unwrap_err();
    assert!(matches!(&err, Error::NonFinite { what, .. } if what == "kmat"), "{err}");
    let empty = DMatrix::<f64>::zeros(0, 0);
    let err = within(5, "solve_kkt(0 x 0)", move || {
        solve_kkt(&empty, &DVector::zeros(0), &DMatrix::zeros(0, 0), &DVector::zeros(0))
    })
    .unwrap_err();
    assert!(matches!(&err, Error::BadShape { what, .. } if what == "h"), "{err}");
    let k_max = DMatrix::from_row_slice(1, 2, &[f64::MAX, 1.0]);
    let r = within(5, "solve_lambda_first(f64::MAX in K)", move || {
        solve_lambda_first(&h, &[None, Some(0)], &z, &k_max, &DVector::zeros(1))
    });
    match r {
        Err(Error::PivotNotPositive { .. } | Error::NonFinite { .. } | Error::Overflow { .. }) => {}
        other => panic!("solve_lambda_first(f64::MAX in K): {other:?}"),
    }
}

#[test]
fn sparse_helpers_refuse_a_parent_array_with_a_self_loop() {
    use mbd::sparse::{ancestors, depths, ltdl, ltl, mpy_h, solve_l, solve_lt, solve_ltdl, OpCount};
    use nalgebra::DMatrix;
    let parent = vec![None, Some(1), Some(1)];
    let p = parent.clone();
    let (anc, d) = within(5, "ancestors/depths", move || {
        (ancestors(&p, 2).collect::<Vec<_>>(), depths(&p))
    });
    assert_eq!(anc, vec![1], "the walk stops at the self-loop of dof 1");
    assert_eq!(d, vec![0, 0, 1]);
    let h = DMatrix::<f64>::identity(3, 3);
    let mut ops = OpCount::default();
    let bad = |e: Error| matches!(e, Error::BadParent { body: 1, parent: 1, .. });
    assert!(bad(ltdl(&mut h.clone(), &parent, &mut ops).unwrap_err()));
    assert!(bad(ltl(&mut h.clone(), &parent, &mut ops).unwrap_err()));
    let mut x = vec![1.0; 3];
    assert!(bad(solve_lt(&h, &parent, true, &mut x, &mut ops).unwrap_err()));
    assert!(bad(solve_l(&h, &parent, true, &mut x, &mut ops).unwrap_err()));
    assert!(bad(solve_ltdl(&h, &parent, &x, &mut ops).unwrap_err()));
    assert!(bad(mpy_h(&h, &parent, &x, &mut ops).unwrap_err()));
    let err = solve_lt(&h, &[None, Some(0)], true, &mut x, &mut ops).unwrap_err();
    assert!(matches!(err, Error::BadLength { .. }), "{err}");
}

#[test]
fn dense_cholesky_refuses_a_non_square_matrix() {
    use mbd::sparse::cholesky_dense;
    use nalgebra::DMatrix;
    let err = within(5, "cholesky_dense(2 x 3)", || cholesky_dense(&DMatrix::zeros(2, 3))).unwrap_err();
    assert!(matches!(err, Error::BadShape { rows: 2, cols: 3, .. }), "{err}");
    let err = cholesky_dense(&DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -1.0])).unwrap_err();
    assert!(
        matches!(err, Error::PivotNotPositive { row: 1, pivot, .. } if pivot == -1.0),
        "{err}"
    );
}

#[test]
fn canned_mechanisms_refuse_bad_lengths() {
    use mbd::model::{canned::figure_8_3_tree, mechanisms::figure_8_3};
    let err = within(5, "figure_8_3(1e300, 1)", || figure_8_3(1e300, 1.0)).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument { what, .. } if what == "l1"),
        "{err}"
    );
    for (l1, l2, name) in [(f64::NAN, 1.0, "l1"), (1.0, -2.0, "l2"), (1.0, f64::INFINITY, "l2")] {
        let err = within(5, "figure_8_3_tree", move || figure_8_3_tree(l1, l2)).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument { what, .. } if what == name),
            "{err}"
        );
    }
    let err = mbd::model::mechanisms::four_bar_chain(0).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument { what, .. } if what == "k"),
        "{err}"
    );
}

#[test]
fn set_qpos0_past_the_last_body_fails_at_build() {
    for i in [0, 2, 7, usize::MAX] {
        let err = within(5, "set_qpos0", move || {
            let mut b = ModelBuilder::new("short");
            b.add_body("only", 0, Joint::revolute(Vec3::x()), Xform::identity(), unit_inertia());
            b.set_qpos0(i, &[0.1]);
            b.build()
        })
        .unwrap_err();
        assert!(
            matches!(&err, Error::Unknown { name, .. } if name.starts_with(&i.to_string())),
            "{err}"
        );
    }
    let mut b = ModelBuilder::new("bad qpos0");
    let ball = b.add_body(
        "ball",
        0,
        Joint::new(JointType::Spherical),
        Xform::identity(),
        unit_inertia(),
    );
    b.set_qpos0(ball, &[0.0, 0.0, 0.0, 0.0]);
    let err = b.build().unwrap_err();
    assert!(
        matches!(&err, Error::BadQuaternion { what, .. } if what == "qpos0"),
        "{err}"
    );
}

#[test]
fn zero_and_huge_joint_axes_are_rejected() {
    for axis in [Vec3::zeros(), Vec3::new(0.0, 0.0, 1e300)] {
        let j = Joint::new(JointType::Helical { axis, pitch: 0.1 });
        let err = within(5, "helical axis", move || one_body(j, unit_inertia())).unwrap_err();
        assert!(matches!(err, Error::BadJoint { body: 1, .. }), "{err}");
    }
}

#[test]
fn integrate_and_difference_check_their_arguments() {
    let model = probe_model();
    let (q, qd) = state(&model);
    let mut short = q[..model.nq - 1].to_vec();
    let err = model.integrate(&mut short, &qd, 0.1).unwrap_err();
    assert!(matches!(&err, Error::BadLength { what, .. } if what == "qpos"), "{err}");
    let mut q1 = q.clone();
    let err = model.integrate(&mut q1, &qd[1..], 0.1).unwrap_err();
    assert!(matches!(&err, Error::BadLength { what, .. } if what == "qd"), "{err}");
    let err = model.integrate(&mut q1, &qd, f64::NAN).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument { what, .. } if what == "h"),
        "{err}"
    );
    assert_eq!(q1, q, "a failed integrate leaves q unchanged");
    let err = model.difference(&q, &q[1..]).unwrap_err();
    assert!(matches!(&err, Error::BadLength { what, .. } if what == "q2"), "{err}");
    let mut z = q.clone();
    z[3..7].fill(0.0);
    let err = model.normalize_quaternions(&mut z).unwrap_err();
    assert!(matches!(err, Error::BadQuaternion { index: 3, .. }), "{err}");
    // h large enough that q + h qd leaves the states MuJoCo accepts
    let mut q2 = q.clone();
    let err = model.integrate(&mut q2, &qd, f64::MAX).unwrap_err();
    assert!(
        matches!(&err, Error::TooLarge { what, .. } if what == "integrated qpos"),
        "{err}"
    );
}

/// Finite but huge: MuJoCo's mj_checkPos / mj_checkVel bound a state by mjMAXVAL = 1e10.
#[test]
fn huge_states_are_rejected_at_the_door() {
    let model = probe_model();
    let (q, qd) = state(&model);
    let mut fast = qd.clone();
    fast[2] = 1e154;
    let err = aba(&model, &q, &fast, &vec![0.0; model.nv], None).unwrap_err();
    assert!(
        matches!(&err, Error::TooLarge { what, index: 2, value } if what == "qvel" && *value == 1e154),
        "{err}"
    );
    let mut big_quat = q.clone();
    big_quat[3..7].copy_from_slice(&[1e200, 1e200, 0.0, 0.0]);
    let err = kinetic_energy(&model, &big_quat, &qd).unwrap_err();
    assert_eq!(err.to_string(), "qpos[3] = 1e200 exceeds mjMAXVAL = 1e10");
    // 1e10 itself is allowed, as in MuJoCo (|x| > mjMAXVAL is the test)
    let mut edge = qd.clone();
    edge[0] = 1e10;
    assert!(model.check_state(&q, &edge).is_ok());
}

/// Model parameters beyond mjMAXVAL are errors naming the body, joint or option.
#[test]
fn huge_model_parameters_are_rejected() {
    let heavy = SpatialInertia::from_mass_com_inertia(1e12, Vec3::zeros(), Mat3::identity());
    let err = one_body(Joint::revolute(Vec3::x()), heavy).unwrap_err();
    assert!(
        matches!(err, Error::BadInertia { body: 1, .. }) && err.to_string().contains("mjMAXVAL"),
        "{err}"
    );
    let mut far = Joint::revolute(Vec3::x());
    far.pos = Vec3::new(0.0, 2e10, 0.0);
    let err = one_body(far, unit_inertia()).unwrap_err();
    assert!(
        matches!(err, Error::BadJoint { body: 1, .. }) && err.to_string().contains("mjMAXVAL"),
        "{err}"
    );
    let mut b = ModelBuilder::new("far away");
    b.add_body(
        "b",
        0,
        Joint::revolute(Vec3::x()),
        xlt(Vec3::new(1e11, 0.0, 0.0)),
        unit_inertia(),
    );
    let err = b.build().unwrap_err();
    assert!(matches!(err, Error::BadJoint { body: 1, .. }), "{err}");
    for (g, h, option) in [
        (1e11, 0.01, "gravity"),
        (-9.81, 1e11, "timestep"),
        (-9.81, 0.0, "timestep"),
    ] {
        let mut b = ModelBuilder::new("options");
        b.opt.gravity = Vec3::new(0.0, 0.0, g);
        b.opt.timestep = h;
        b.add_body("b", 0, Joint::revolute(Vec3::x()), Xform::identity(), unit_inertia());
        let err = b.build().unwrap_err();
        assert!(
            matches!(&err, Error::BadOption { option: o, .. } if o == option),
            "{err}"
        );
    }
}

/// A model edited by hand into a parent array with a self-loop: every checked entry refuses it
/// (`Model::check_structure` runs at the door) instead of walking towards the root forever.
#[test]
fn hand_edited_parent_loops_are_refused_at_the_door() {
    let mut model = mbd::model::canned::chain(3, false);
    model.lambda[2] = 2;
    let (q, qd) = (model.qpos0.as_slice().to_vec(), vec![0.0; model.nv]);
    let m = model.clone();
    let err = within(5, "aba on a self-loop", move || aba(&m, &q, &qd, &[0.0; 3], None)).unwrap_err();
    assert!(matches!(err, Error::BadParent { body: 2, parent: 2, .. }), "{err}");
    assert!(!mbd::kinematics::supports(&model, 0, 2));
}
