//! Random kinematic trees and states for the property tests, shared by several test files.
//!
//! A tree is first drawn as a [`ModelSpec`], plain numbers that proptest can shrink body by
//! body, and then turned into a [`Model`] by [`random_model`]. States are drawn the same way
//! ([`StateSpec`] -> [`random_state`]), with enough numbers for the largest tree so that the
//! two strategies stay independent.
//!
//! Use from a test file with `mod common;`. [`cli`] holds the helpers of the `mbd` command's
//! tests.
#![allow(dead_code)]

pub mod cli;
pub mod fixtures;

use mbd::dynamics::{aba_with, Workspace};
use mbd::kinematics::{body_velocities, forward_kinematics};
use mbd::model::{Joint, JointType, Model, ModelBuilder};
use mbd::spatial::{axis_angle_mat, quat_mul, Force, Mat3, SpatialInertia, Vec3, Xform};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use proptest::test_runner::{Config, RngSeed};

/// Largest tree drawn by [`model_spec`].
pub const MAX_BODIES: usize = 12;
/// Largest number of dofs a tree of [`MAX_BODIES`] bodies can have.
pub const MAX_DOFS: usize = 6 * MAX_BODIES;

/// The joint types of `mbd::model::JointType`, without their parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Revolute,
    Prismatic,
    Helical,
    Cylindrical,
    Planar,
    Spherical,
    Free,
    Fixed,
}

/// Everything random about one body and its joint.
#[derive(Clone, Debug)]
pub struct BodySpec {
    /// Parent choice: body i gets parent `parent.index(i)`, which is always < i.
    pub parent: Index,
    /// Joint type (a free joint away from the base becomes a spherical one).
    pub kind: Kind,
    /// Unit joint axis (revolute, prismatic, helical, cylindrical).
    pub axis: Vec3,
    /// Helical pitch (m/rad).
    pub pitch: f64,
    /// Joint anchor `Joint::pos`.
    pub anchor: Vec3,
    /// Rotation vector of `X_tree`.
    pub tree_rot: Vec3,
    /// Translation of `X_tree`.
    pub tree_pos: Vec3,
    /// Mass (> 0).
    pub mass: f64,
    /// Centre of mass in body coordinates.
    pub com: Vec3,
    /// Principal moments about the centre of mass, strictly inside the triangle inequality.
    pub moments: [f64; 3],
    /// Rotation vector of the principal axes.
    pub inertia_rot: Vec3,
    /// Joint armature (often 0).
    pub armature: f64,
}

/// A random tree.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// One entry per body, in the order 1..=nb.
    pub bodies: Vec<BodySpec>,
    /// Gravity (sometimes zero).
    pub gravity: Vec3,
    /// If true, body 1 is a free-floating root (free joint, no armature) and every other body
    /// descends from it, so nothing touches the base.
    pub floating: bool,
}

/// Numbers for a random state of any tree up to [`MAX_BODIES`] bodies, each in [-1, 1].
#[derive(Clone, Debug)]
pub struct StateSpec {
    pub dq: Vec<f64>,
    pub qd: Vec<f64>,
    pub qdd: Vec<f64>,
    pub tau: Vec<f64>,
    pub f_ext: Vec<[f64; 6]>,
}

/// A state of a particular model.
#[derive(Clone, Debug)]
pub struct State {
    /// Positions, `qpos0 (+) dq` with unit quaternions.
    pub q: Vec<f64>,
    /// Velocities.
    pub qd: Vec<f64>,
    /// Accelerations.
    pub qdd: Vec<f64>,
    /// Joint forces.
    pub tau: Vec<f64>,
    /// External forces in base coordinates, length nb + 1 (entry 0 is zero).
    pub f_ext: Vec<Force>,
}

/// The proptest configuration of these tests: `cases` cases from a fixed seed, so that the
/// suite is reproducible; `PROPTEST_CASES` and `PROPTEST_RNG_SEED` still override both (use
/// them to search more widely). No regression files are written into the tree.
pub fn config(cases: u32) -> Config {
    let d = Config::default();
    Config {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            d.cases
        } else {
            cases
        },
        rng_seed: match d.rng_seed {
            RngSeed::Random => RngSeed::Fixed(0x6d62_6421),
            s => s,
        },
        failure_persistence: None,
        ..d
    }
}

fn vec3_in(r: f64) -> impl Strategy<Value = Vec3> {
    prop::array::uniform3(-r..r).prop_map(Vec3::from)
}

/// A unit vector, uniform on the sphere (no rejection).
pub fn unit_vector() -> impl Strategy<Value = Vec3> {
    (-1.0f64..1.0, 0.0..std::f64::consts::TAU).prop_map(|(z, phi)| {
        let s = (1.0 - z * z).sqrt();
        Vec3::new(s * phi.cos(), s * phi.sin(), z)
    })
}

/// A joint axis: a quarter of the time one of +-x, +-y, +-z (the common case in real models,
/// which `Xform::rot_axis` treats specially), otherwise uniform on the sphere.
pub fn joint_axis() -> impl Strategy<Value = Vec3> {
    let aligned = (0usize..3, prop::bool::ANY).prop_map(|(k, neg)| Vec3::ith(k, if neg { -1.0 } else { 1.0 }));
    prop_oneof![1 => aligned, 3 => unit_vector()]
}

/// A rotation vector with angle in (-pi, pi).
pub fn rotation_vector() -> impl Strategy<Value = Vec3> {
    (unit_vector(), -std::f64::consts::PI..std::f64::consts::PI).prop_map(|(a, t)| a * t)
}

/// The rotation matrix of a rotation vector.
pub fn rot(v: &Vec3) -> Mat3 {
    let angle = v.norm();
    if angle == 0.0 {
        Mat3::identity()
    } else {
        axis_angle_mat(&(v / angle), angle)
    }
}

/// Any joint type; free joints are turned into spherical ones away from the base.
pub fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Revolute),
        Just(Kind::Prismatic),
        Just(Kind::Helical),
        Just(Kind::Cylindrical),
        Just(Kind::Planar),
        Just(Kind::Spherical),
        Just(Kind::Free),
        Just(Kind::Fixed),
    ]
}

/// Principal moments (a, b, c) with a, b in [0.02, 1) and c strictly between |a - b| and
/// a + b, so that every triangle inequality holds with a margin.
pub fn principal_moments() -> impl Strategy<Value = [f64; 3]> {
    (0.02f64..1.0, 0.02f64..1.0, 0.05f64..0.95).prop_map(|(a, b, t)| [a, b, (a - b).abs() + t * 2.0 * a.min(b)])
}

/// One body.
pub fn body_spec() -> impl Strategy<Value = BodySpec> {
    let joint = (
        any::<Index>(),
        kind(),
        joint_axis(),
        -0.5f64..0.5,
        prop_oneof![Just(Vec3::zeros()), vec3_in(0.3)],
        prop_oneof![1 => Just(0.0), 2 => 0.01f64..0.5],
    );
    let body = (
        rotation_vector(),
        vec3_in(1.0),
        0.2f64..5.0,
        vec3_in(0.3),
        principal_moments(),
        rotation_vector(),
    );
    (joint, body).prop_map(
        |((parent, kind, axis, pitch, anchor, armature), (tree_rot, tree_pos, mass, com, moments, inertia_rot))| {
            BodySpec {
                parent,
                kind,
                axis,
                pitch,
                anchor,
                tree_rot,
                tree_pos,
                mass,
                com,
                moments,
                inertia_rot,
                armature,
            }
        },
    )
}

/// Gravity: zero a quarter of the time, otherwise each component in (-10, 10).
pub fn gravity() -> impl Strategy<Value = Vec3> {
    prop_oneof![1 => Just(Vec3::zeros()), 3 => vec3_in(10.0)]
}

/// A random tree of 1..=[`MAX_BODIES`] bodies attached to the fixed base.
pub fn model_spec() -> impl Strategy<Value = ModelSpec> {
    (prop::collection::vec(body_spec(), 1..=MAX_BODIES), gravity()).prop_map(|(bodies, gravity)| ModelSpec {
        bodies,
        gravity,
        floating: false,
    })
}

/// A random free-floating tree of 1..=`max_bodies` bodies, without gravity.
pub fn floating_spec(max_bodies: usize) -> impl Strategy<Value = ModelSpec> {
    prop::collection::vec(body_spec(), 1..=max_bodies).prop_map(|bodies| ModelSpec {
        bodies,
        gravity: Vec3::zeros(),
        floating: true,
    })
}

/// Numbers for a random state.
pub fn state_spec() -> impl Strategy<Value = StateSpec> {
    let v = || prop::collection::vec(-1.0f64..1.0, MAX_DOFS);
    (
        v(),
        v(),
        v(),
        v(),
        prop::collection::vec(prop::array::uniform6(-1.0f64..1.0), MAX_BODIES + 1),
    )
        .prop_map(|(dq, qd, qdd, tau, f_ext)| StateSpec {
            dq,
            qd,
            qdd,
            tau,
            f_ext,
        })
}

/// The joint type `kind` with the axis and pitch of body spec `b`.
fn joint_type(b: &BodySpec, kind: Kind) -> JointType {
    match kind {
        Kind::Revolute => JointType::Revolute { axis: b.axis },
        Kind::Prismatic => JointType::Prismatic { axis: b.axis },
        Kind::Helical => JointType::Helical {
            axis: b.axis,
            pitch: b.pitch,
        },
        Kind::Cylindrical => JointType::Cylindrical { axis: b.axis },
        Kind::Planar => JointType::Planar,
        Kind::Spherical => JointType::Spherical,
        Kind::Free => JointType::Free,
        Kind::Fixed => JointType::Fixed,
    }
}

/// The joint of a body spec, on its own (for jcalc tests).
pub fn joint_of(b: &BodySpec) -> Joint {
    let mut j = Joint::new(joint_type(b, b.kind));
    j.pos = b.anchor;
    j.armature = b.armature;
    j
}

/// The spatial inertia of a body spec: `mcI(m, c, R diag(a, b, c) R^T)`.
pub fn inertia_of(b: &BodySpec) -> SpatialInertia {
    let r = rot(&b.inertia_rot);
    let ic = r * Mat3::from_diagonal(&Vec3::from(b.moments)) * r.transpose();
    SpatialInertia::from_mass_com_inertia(b.mass, b.com, ic)
}

/// Builds the model of a spec (through `ModelBuilder`, so it is validated).
pub fn random_model(spec: &ModelSpec) -> Model {
    let mut builder = ModelBuilder::new("random tree");
    builder.opt.gravity = spec.gravity;
    for (k, b) in spec.bodies.iter().enumerate() {
        let i = k + 1;
        let parent = match (spec.floating, i) {
            (true, 1) => 0,
            (true, _) => 1 + b.parent.index(i - 1),
            (false, _) => b.parent.index(i),
        };
        let kind = match (spec.floating, i, b.kind) {
            (true, 1, _) => Kind::Free,
            (_, _, Kind::Free) if parent != 0 => Kind::Spherical,
            (_, _, k) => k,
        };
        let mut joint = Joint::new(joint_type(b, kind));
        joint.pos = b.anchor;
        // Armature on a free root is a fictitious inertia tied to the base: it would break
        // momentum conservation of a floating system, so the floating root has none.
        joint.armature = if spec.floating && i == 1 { 0.0 } else { b.armature };
        joint.name = format!("joint{i}");
        let x_tree = Xform::new(rot(&b.tree_rot), b.tree_pos);
        builder.add_body(&format!("body{i}"), parent, joint, x_tree, inertia_of(b));
    }
    builder.build().expect("a random model is valid by construction")
}

/// A state of `model` from `spec`: q = qpos0 (+) dq with |dq_k| < 2, |qd_k| < 2,
/// |qdd_k| < 5, |tau_k| < 5, external force components < 3.
pub fn random_state(model: &Model, spec: &StateSpec) -> State {
    let nv = model.nv;
    let take = |v: &[f64], s: f64| v[..nv].iter().map(|x| s * x).collect::<Vec<f64>>();
    let dq = take(&spec.dq, 2.0);
    let mut q = model.qpos0.as_slice().to_vec();
    model.integrate(&mut q, &dq, 1.0).unwrap();
    let mut f_ext = vec![Force::zero(); model.nb + 1];
    for (i, f) in f_ext.iter_mut().enumerate().skip(1) {
        *f = Force::from_vec6(&(mbd::spatial::Vec6::from(spec.f_ext[i]) * 3.0));
    }
    State {
        q,
        qd: take(&spec.qd, 2.0),
        qdd: take(&spec.qdd, 5.0),
        tau: take(&spec.tau, 5.0),
        f_ext,
    }
}

/// Infinity norm of a slice.
pub fn norm_inf(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// Time derivative of the position coordinates for velocity `v`, as plain numbers: `v` for
/// scalar coordinates, `1/2 quat * (0, w)` for quaternions (w the body-frame angular velocity),
/// and the world linear velocity for a free joint's position. An independent route to
/// `Model::integrate`, used by the RK4 below so that it is fourth order on R^nq.
pub fn qdot(model: &Model, q: &[f64], v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; model.nq];
    for i in 1..=model.nb {
        let (qa, va) = (model.q_adr[i], model.v_adr[i]);
        let quat_rate = |qa: usize, va: usize, out: &mut [f64]| {
            let quat = [q[qa], q[qa + 1], q[qa + 2], q[qa + 3]];
            let d = quat_mul(&quat, &[0.0, v[va], v[va + 1], v[va + 2]]);
            for k in 0..4 {
                out[qa + k] = 0.5 * d[k];
            }
        };
        match model.joints[i].jtype {
            JointType::Spherical => quat_rate(qa, va, &mut out),
            JointType::Free => {
                out[qa..qa + 3].copy_from_slice(&v[va..va + 3]);
                quat_rate(qa + 3, va + 3, &mut out);
            }
            j => out[qa..qa + j.nq()].copy_from_slice(&v[va..va + j.nv()]),
        }
    }
    out
}

/// One classical RK4 step of `q' = qdot(q, v)`, `v' = ABA(q, v, tau, f_ext)` on R^nq x R^nv,
/// with the quaternions renormalized at the end.
pub fn rk4_step(
    model: &Model,
    ws: &mut Workspace,
    q: &mut [f64],
    v: &mut [f64],
    tau: &[f64],
    f_ext: Option<&[Force]>,
    h: f64,
) {
    let (nq, nv) = (model.nq, model.nv);
    let mut deriv = |q: &[f64], v: &[f64]| {
        let mut a = vec![0.0; nv];
        aba_with(model, ws, q, v, tau, f_ext, &mut a).expect("ABA of a physical tree");
        (qdot(model, q, v), a)
    };
    let stage = |x: &[f64], d: &[f64], s: f64| x.iter().zip(d).map(|(a, b)| a + s * b).collect::<Vec<f64>>();
    let (k1q, k1v) = deriv(q, v);
    let (k2q, k2v) = deriv(&stage(q, &k1q, 0.5 * h), &stage(v, &k1v, 0.5 * h));
    let (k3q, k3v) = deriv(&stage(q, &k2q, 0.5 * h), &stage(v, &k2v, 0.5 * h));
    let (k4q, k4v) = deriv(&stage(q, &k3q, h), &stage(v, &k3v, h));
    for k in 0..nq {
        q[k] += h / 6.0 * (k1q[k] + 2.0 * k2q[k] + 2.0 * k3q[k] + k4q[k]);
    }
    for k in 0..nv {
        v[k] += h / 6.0 * (k1v[k] + 2.0 * k2v[k] + 2.0 * k3v[k] + k4v[k]);
    }
    model.normalize_quaternions(q).unwrap();
}

/// Total spatial momentum in base coordinates, `sum_i (iX_0)^T I_i v_i` (Featherstone eq.
/// 2.62 summed over the bodies), and the sum of the bodies' momentum magnitudes (a scale).
pub fn momentum(model: &Model, q: &[f64], qd: &[f64]) -> (Force, f64) {
    let kin = forward_kinematics(model, q).expect("valid state");
    let v = body_velocities(model, q, qd).expect("valid state");
    let mut total = Force::zero();
    let mut scale = 0.0;
    for (i, v_i) in v.iter().enumerate().skip(1) {
        let h_i = kin.x_0[i].inv_apply_force(&model.inertia[i].mul_motion(v_i));
        scale += h_i.to_vec6().norm();
        total += h_i;
    }
    (total, scale)
}

/// The body-frame velocity `[vee(R^T Rdot); R^T pdot]` of a moving frame whose pose in a fixed
/// frame is given by the transforms `x(t)` = fixed-to-moving at t - h and t + h (central
/// difference; `x0` is the transform at t).
pub fn twist_from_transforms(x0: &Xform, xm: &Xform, xp: &Xform, h: f64) -> mbd::spatial::Motion {
    let (r0, _) = x0.pose();
    let (rm, pm) = xm.pose();
    let (rp, pp) = xp.pose();
    let rdot = (rp - rm) / (2.0 * h);
    let pdot = (pp - pm) / (2.0 * h);
    let wx = r0.transpose() * rdot;
    // vee of the (nearly) skew matrix, averaged over its two halves
    let w = Vec3::new(
        wx[(2, 1)] - wx[(1, 2)],
        wx[(0, 2)] - wx[(2, 0)],
        wx[(1, 0)] - wx[(0, 1)],
    ) * 0.5;
    mbd::spatial::Motion::new(w, r0.transpose() * pdot)
}

/// Passes if `err <= rel * scale`; prints the ratio when `MBD_PROP_REPORT` is set.
pub fn close(what: &str, err: f64, scale: f64, rel: f64) -> Result<(), TestCaseError> {
    if std::env::var_os("MBD_PROP_REPORT").is_some() {
        eprintln!("report {what}: {:.3e}", err / scale.max(f64::MIN_POSITIVE));
    }
    if err <= rel * scale {
        Ok(())
    } else {
        Err(TestCaseError::fail(format!(
            "{what}: error {err:.3e} exceeds {rel:.0e} x scale {scale:.3e}"
        )))
    }
}

/// `max_k |ours_k - ref_k| / max(1, max_k |ref_k|)`; infinite if the lengths differ or `ours`
/// holds a NaN or an infinity (so that a broken value can never pass).
pub fn rel_err(ours: &[f64], reference: &[f64]) -> f64 {
    if ours.len() != reference.len() {
        return f64::INFINITY;
    }
    let mut diff = 0.0_f64;
    let mut scale = 1.0_f64;
    for (a, b) in ours.iter().zip(reference) {
        let d = (a - b).abs();
        if !d.is_finite() {
            return f64::INFINITY;
        }
        diff = diff.max(d);
        scale = scale.max(b.abs());
    }
    diff / scale
}
