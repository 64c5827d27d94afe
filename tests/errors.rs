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
