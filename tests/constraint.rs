//! MuJoCo's constraint rows (`mbd::mujoco::constraint::make_constraint`) against MuJoCo 4.0.0.
//!
//! The fixtures `tests/fixtures/constraint/<model>.json` were written by
//! `/tmp/peers/bin/python tests/fixtures/make_constraint_fixtures.py` (run from the repository
//! root): for the constraint scenes (at their settled state and at a perturbed state with
//! nonzero `qvel`) and the public corpus (settled), with the pyramidal and the elliptic cone,
//! MuJoCo's contacts and every `efc_*` array after `mj_forward`, and the model constants
//! `body_invweight0`, `dof_invweight0`, `tendon_invweight0`.
//!
//! The tests feed MuJoCo's own contact list into our rows, so that the rows are tested
//! independently of the narrow phase. Every array is compared with one measure:
//!
//! ```text
//! rel = max_k |ours_k - ref_k| / max_k |ref_k|   <=   TOL = 1e-10
//! ```
//!
//! (an all-zero reference must be matched to 1e-12 absolute). `efc_type`, `efc_id`, `ne`, `nf`,
//! `nl` and `efc_address` must be equal, and the number of `solref` warnings equal MuJoCo's.
//! Print the worst errors with `cargo test --release --test constraint -- --nocapture`.

use mbd::mjcf;
use mbd::model::{Cone, JointType, Model};
use mbd::mujoco::collision::MjContact;
use mbd::mujoco::constraint::{make_constraint, Efc, EfcType, Invweight};
use mbd::mujoco::forward_smooth;
use mbd::spatial::{Mat3, Vec3};
use serde::Deserialize;
use std::path::PathBuf;

/// Tolerance of every comparison, in the measure above.
const TOL: f64 = 1e-10;

const SCENES: [&str; 8] = [
    "sphere_plane",
    "box_incline",
    "box_stack",
    "capsule_plane",
    "fourbar",
    "fourbar_hinge",
    "weld",
    "limits_friction",
];
const CORPUS: [&str; 7] = [
    "hopper",
    "half_cheetah",
    "ant",
    "humanoid",
    "walker",
    "cheetah",
    "quadruped",
];

#[derive(Deserialize)]
struct Fixture {
    model: String,
    nv: usize,
    geom_bodyid: Vec<usize>,
    geom_type: Vec<i32>,
    geom_name: Vec<String>,
    body_invweight0: Vec<f64>,
    dof_invweight0: Vec<f64>,
    tendon_invweight0: Vec<f64>,
    tendon_length0: Vec<f64>,
    cones: std::collections::HashMap<String, Vec<State>>,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct State {
    label: String,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    warnings: usize,
    ne: usize,
    nf: usize,
    nl: usize,
    contacts: Vec<Contact>,
    efc_type: Vec<i32>,
    efc_id: Vec<usize>,
    efc_J: Vec<f64>,
    efc_pos: Vec<f64>,
    efc_margin: Vec<f64>,
    efc_frictionloss: Vec<f64>,
    efc_diagApprox: Vec<f64>,
    efc_KBIP: Vec<f64>,
    efc_R: Vec<f64>,
    efc_D: Vec<f64>,
    efc_vel: Vec<f64>,
    efc_aref: Vec<f64>,
}

#[derive(Deserialize)]
struct Contact {
    geom: [usize; 2],
    pos: [f64; 3],
    frame: [f64; 9],
    dist: f64,
    dim: usize,
    friction: [f64; 5],
    solref: [f64; 2],
    solreffriction: [f64; 2],
    solimp: [f64; 5],
    includemargin: f64,
    mu: f64,
    efc_address: i64,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> Fixture {
    let path = root().join("tests/fixtures/constraint").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// MuJoCo's contact as `MjContact` (4.0 stores only `includemargin = margin - gap`), its geoms
/// renumbered by `geoms` (MuJoCo's geom index -> ours).
fn contact(c: &Contact, geoms: &[usize]) -> MjContact {
    MjContact {
        geom: [geoms[c.geom[0]], geoms[c.geom[1]]],
        pos: Vec3::from(c.pos),
        frame: Mat3::from_row_slice(&c.frame),
        dist: c.dist,
        dim: c.dim,
        friction: c.friction,
        solref: c.solref,
        solreffriction: c.solreffriction,
        solimp: c.solimp,
        margin: c.includemargin,
        gap: 0.0,
        efc_address: None,
    }
}

/// The worst error of `ours` against `reference` in the measure of the module documentation.
fn rel(ours: &[f64], reference: &[f64]) -> f64 {
    assert_eq!(ours.len(), reference.len());
    let scale = reference.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let err = ours
        .iter()
        .zip(reference)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    if scale == 0.0 {
        err / 1e-2 // 1e-12 absolute maps to 1e-10
    } else {
        err / scale
    }
}

/// MuJoCo joint index of each Featherstone body that carries a joint.
fn mj_joint_ids(model: &Model) -> Vec<Option<usize>> {
    let mut next = 0;
    (0..=model.nb)
        .map(|i| {
            if i == 0 || matches!(model.joints[i].jtype, JointType::Fixed) {
                None
            } else {
                next += 1;
                Some(next - 1)
            }
        })
        .collect()
}

/// Compares every array of one state; returns the worst relative error.
fn compare(name: &str, cone: &str, model: &Model, fx: &Fixture, s: &State, efc: &Efc) -> f64 {
    let what = format!("{name} {cone} {}", s.label);
    let n = efc.nefc();
    assert_eq!(n, s.efc_type.len(), "{what}: nefc");
    assert_eq!((efc.ne, efc.nf, efc.nl), (s.ne, s.nf, s.nl), "{what}: ne, nf, nl");
    let types: Vec<i32> = efc.efc_type.iter().map(|t| *t as i32).collect();
    assert_eq!(types, s.efc_type, "{what}: efc_type");
    let joints = mj_joint_ids(model);
    let ids: Vec<usize> = (0..n)
        .map(|i| match efc.efc_type[i] {
            EfcType::LimitJoint => joints[efc.efc_id[i]].unwrap(),
            _ => efc.efc_id[i],
        })
        .collect();
    assert_eq!(ids, s.efc_id, "{what}: efc_id");
    for (k, c) in s.contacts.iter().enumerate() {
        let addr = efc.contacts[k].efc_address.map_or(-1, |a| a as i64);
        assert_eq!(addr, c.efc_address, "{what}: efc_address of contact {k}");
    }
    assert_eq!(efc.warnings.len(), s.warnings, "{what}: warnings {:?}", efc.warnings);
    let mut j = vec![0.0; n * fx.nv];
    let jd = efc.dense_j();
    for r in 0..n {
        for c in 0..fx.nv {
            j[r * fx.nv + c] = jd[(r, c)];
        }
    }
    let kbip: Vec<f64> = efc.kbip.iter().flatten().copied().collect();
    let mu: Vec<f64> = efc.mu.clone();
    let mu_ref: Vec<f64> = s.contacts.iter().map(|c| if c.dim > 1 { c.mu } else { 0.0 }).collect();
    let arrays: [(&str, &[f64], &[f64]); 12] = [
        ("efc_J", &j, &s.efc_J),
        ("efc_pos", &efc.pos, &s.efc_pos),
        ("efc_margin", &efc.margin, &s.efc_margin),
        ("efc_frictionloss", &efc.frictionloss, &s.efc_frictionloss),
        ("efc_diagApprox", &efc.diag_approx, &s.efc_diagApprox),
        ("efc_KBIP", &kbip, &s.efc_KBIP),
        ("efc_R", &efc.r, &s.efc_R),
        ("efc_D", &efc.d, &s.efc_D),
        ("efc_vel", &efc.vel, &s.efc_vel),
        ("efc_aref", &efc.aref, &s.efc_aref),
        ("contact.mu", &mu, &mu_ref),
        ("qvel", &s.qvel, &s.qvel),
    ];
    let mut worst = 0.0f64;
    for (field, ours, reference) in arrays {
        let e = rel(ours, reference);
        assert!(
            e <= TOL,
            "{what}: {field} rel err {e:.3e}\n ours {ours:?}\n ref  {reference:?}"
        );
        worst = worst.max(e);
    }
    worst
}

fn check_model(name: &str) {
    let fx = fixture(name);
    let loaded = mjcf::load(root().join(&fx.model)).unwrap();
    let mut model = loaded.model;
    assert_eq!(model.nv, fx.nv, "{name}: nv");
    // every geom is read, height fields and meshes too: MuJoCo's geom order is ours
    let mut geoms = vec![usize::MAX; fx.geom_bodyid.len()];
    let mut next = 0;
    for (g, &b) in fx.geom_bodyid.iter().enumerate() {
        assert_eq!(
            mbd::collision::mj_type(model.geoms[next].gtype) as i32,
            fx.geom_type[g],
            "{name}: type of geom {g}"
        );
        assert_eq!(model.mj_body[model.geoms[next].body], b, "{name}: body of geom {g}");
        assert_eq!(model.geoms[next].name, fx.geom_name[g], "{name}: name of geom {g}");
        geoms[g] = next;
        next += 1;
    }
    assert_eq!(next, model.geoms.len(), "{name}: number of geoms");
    let inv = Invweight::new(&model).unwrap();
    let body: Vec<f64> = inv.body.iter().flatten().copied().collect();
    let mut worst = rel(&body, &fx.body_invweight0)
        .max(rel(&inv.dof, &fx.dof_invweight0))
        .max(rel(&inv.tendon, &fx.tendon_invweight0))
        .max(rel(&inv.tendon_length0, &fx.tendon_length0));
    assert!(
        worst <= TOL,
        "{name}: invweight0 rel err {worst:.3e}: {body:?} vs {:?}",
        fx.body_invweight0
    );
    for (cone, states) in &fx.cones {
        model.opt.cone = Cone::parse(cone).unwrap();
        for s in states {
            let d = forward_smooth(&model, s.qpos.as_slice(), s.qvel.as_slice()).unwrap();
            let contacts = s.contacts.iter().map(|c| contact(c, &geoms)).collect();
            let efc = make_constraint(&model, &d, &inv, &s.qpos, &s.qvel, contacts).unwrap();
            worst = worst.max(compare(name, cone, &model, &fx, s, &efc));
        }
    }
    println!("{name}: worst rel err {worst:.2e}");
}

#[test]
fn scenes_match_mujoco() {
    for name in SCENES {
        check_model(name);
    }
}

#[test]
fn corpus_models_match_mujoco() {
    for name in CORPUS {
        check_model(name);
    }
}

// ---------------------------------------------------------------------------------------------
// Property tests on random trees with MuJoCo's joint types, and bad input.

mod common;
use common::{config, model_spec, random_model, random_state, state_spec, Kind, ModelSpec};
use mbd::kinematics::forward_kinematics;
use mbd::model::{Equality, Geom, GeomType};
use mbd::mujoco::constraint::jacobian::{body_point, jac_dot_v, jac_point};
use mbd::Error;
use nalgebra::{DMatrix, DVector, Matrix3xX};
use proptest::prelude::*;

/// The spec with MuJoCo's joint types only (helical -> hinge, cylindrical -> slide, planar ->
/// ball), since MuJoCo's `cdof_dot` and `mj_jacDot` rules are made for those.
fn mujoco_kinds(mut spec: ModelSpec) -> ModelSpec {
    for b in &mut spec.bodies {
        b.kind = match b.kind {
            Kind::Helical => Kind::Revolute,
            Kind::Cylindrical => Kind::Prismatic,
            Kind::Planar => Kind::Spherical,
            k => k,
        };
    }
    spec
}

/// `q (+) t v`.
fn moved(model: &Model, q: &[f64], v: &[f64], t: f64) -> Vec<f64> {
    let mut out = q.to_vec();
    model.integrate(&mut out, v, t).unwrap();
    out
}

/// A geom on Featherstone body `body` (only its body matters to the rows).
fn geom(body: usize) -> Geom {
    Geom {
        name: String::new(),
        body,
        gtype: GeomType::Sphere,
        size: [0.1, 0.0, 0.0],
        pos: Vec3::zeros(),
        quat: [1.0, 0.0, 0.0, 0.0],
        friction: [1.0, 0.005, 0.0001],
        condim: 3,
        contype: 1,
        conaffinity: 1,
        margin: 0.0,
        gap: 0.0,
        params: Default::default(),
        solmix: 1.0,
        priority: 0,
        group: 0,
        rgba: Geom::RGBA_DEFAULT,
        material: None,
    }
}

/// A contact between geoms 0 and 1 at `pos` with a frame from the rotation vector `rv`.
fn random_contact(pos: Vec3, rv: Vec3, dim: usize, friction: [f64; 5]) -> MjContact {
    let frame = common::rot(&rv).transpose();
    MjContact {
        geom: [0, 1],
        pos,
        frame,
        dist: -0.002,
        dim,
        friction,
        solref: [0.02, 1.0],
        solreffriction: [0.0; 2],
        solimp: [0.9, 0.95, 0.001, 0.5, 2.0],
        margin: 0.0,
        gap: 0.0,
        efc_address: None,
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// The com-based point Jacobian equals a central difference of the point's position along
    /// `q (+) h e_k` (h = 1e-6, tolerance 1e-6 of the Jacobian's size), and `jac_dot_v` equals a
    /// central difference of `J(q (+) t v) v` in t (tolerance 1e-5 of `|J v| |v|`).
    #[test]
    fn point_jacobian_and_its_derivative_match_finite_differences(
        ms in model_spec(), ss in state_spec(), pick in 0usize..1000, local in prop::array::uniform3(-0.5f64..0.5)
    ) {
        let model = random_model(&mujoco_kinds(ms));
        let s = random_state(&model, &ss);
        let (q, v) = (s.q.as_slice(), s.qd.as_slice());
        let b = 1 + pick % model.nb;
        let local = Vec3::from(local);
        let d = forward_smooth(&model, q, v).unwrap();
        let p = body_point(&d, b, &local);
        let (mut jp, mut jr) = (Matrix3xX::zeros(model.nv), Matrix3xX::zeros(model.nv));
        jac_point(&model, &d, b, &p, &mut jp, &mut jr);
        let h = 1e-6;
        let scale = jp.amax().max(1.0);
        for k in 0..model.nv {
            let mut e = vec![0.0; model.nv];
            e[k] = 1.0;
            let at = |t: f64| forward_kinematics(&model, &moved(&model, q, &e, t)).unwrap().point(b, &local);
            let fd = (at(h) - at(-h)) / (2.0 * h);
            let col: Vec3 = jp.column(k).into();
            prop_assert!((fd - col).amax() <= 1e-6 * scale, "column {}: {} vs {}", k, fd, col);
        }
        let jv = |t: f64| {
            let qt = moved(&model, q, v, t);
            let dt = forward_smooth(&model, &qt, v).unwrap();
            let pt = body_point(&dt, b, &local);
            let (mut a, mut r) = (Matrix3xX::zeros(model.nv), Matrix3xX::zeros(model.nv));
            jac_point(&model, &dt, b, &pt, &mut a, &mut r);
            (&a * DVector::from_column_slice(v), &r * DVector::from_column_slice(v))
        };
        let h = 1e-5;
        let ((lp, rp), (lm, rm)) = (jv(h), jv(-h));
        let (lin, rot) = jac_dot_v(&model, &d, b, &p, v);
        let vscale = (&jp * DVector::from_column_slice(v)).amax().max(1.0) * v.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        let (fl, fr) = ((lp - lm) / (2.0 * h), (rp - rm) / (2.0 * h));
        prop_assert!((Vec3::new(fl[0], fl[1], fl[2]) - lin).amax() <= 1e-5 * vscale, "Jdot_p v {} vs {}", fl, lin);
        prop_assert!((Vec3::new(fr[0], fr[1], fr[2]) - rot).amax() <= 1e-5 * vscale, "Jdot_r v {} vs {}", fr, rot);
    }

    /// Connect and weld rows between random bodies: `efc_vel = J qvel`, and `J v` equals the
    /// central difference of the residual `efc_pos` along `q (+) t v`; the `Jdot v` that
    /// `efc_aref` subtracts equals the central difference of `J v`; `R > 0` and `D = 1/R`.
    #[test]
    fn connect_and_weld_rows_match_finite_differences(
        ms in model_spec(), ss in state_spec(), picks in prop::array::uniform4(0usize..1000),
        anchor in prop::array::uniform3(-0.4f64..0.4)
    ) {
        let mut model = random_model(&mujoco_kinds(ms));
        let nb1 = model.nb + 1;
        let (b1, b2) = (1 + picks[0] % model.nb, picks[1] % nb1);
        let (b3, b4) = (1 + picks[2] % model.nb, picks[3] % nb1);
        prop_assume!(b1 != b2 && b3 != b4);
        model.equality = vec![
            Equality::Connect { name: "c".into(), body1: b1, body2: b2, anchor: Vec3::from(anchor) },
            Equality::Weld { name: "w".into(), body1: b3, body2: b4, anchor: Vec3::from(anchor) * 0.5, relpose: None },
        ];
        model.eq_params = vec![Default::default(); 2];
        let inv = Invweight::new(&model).unwrap();
        let s = random_state(&model, &ss);
        let (q, v) = (s.q.as_slice(), s.qd.as_slice());
        let rows = |qt: &[f64]| {
            let d = forward_smooth(&model, qt, v).unwrap();
            make_constraint(&model, &d, &inv, qt, v, Vec::new()).unwrap()
        };
        let efc = rows(q);
        let jv = efc.dense_j() * DVector::from_column_slice(v);
        for i in 0..efc.nefc() {
            prop_assert!((jv[i] - efc.vel[i]).abs() <= 1e-12 * jv.amax().max(1.0));
            prop_assert!(efc.r[i] > 0.0 && efc.d[i] == 1.0 / efc.r[i]);
        }
        let h = 1e-6;
        let (ep, em) = (rows(&moved(&model, q, v, h)), rows(&moved(&model, q, v, -h)));
        prop_assert_eq!(ep.nefc(), efc.nefc());
        let scale = efc.vel.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        for i in 0..efc.nefc() {
            let fd = (ep.pos[i] - em.pos[i]) / (2.0 * h);
            prop_assert!((fd - efc.vel[i]).abs() <= 1e-6 * scale, "row {}: d pos/dt {} vs J v {}", i, fd, efc.vel[i]);
            let [k, b, imp, _] = efc.kbip[i];
            let jdot_v = -(efc.aref[i] + b * efc.vel[i] + k * imp * (efc.pos[i] - efc.margin[i]));
            let fd = (ep.vel[i] - em.vel[i]) / (2.0 * h);
            let vmax = v.iter().fold(1.0f64, |m, x| m.max(x.abs()));
            prop_assert!((fd - jdot_v).abs() <= 1e-5 * scale * vmax, "row {}: d(J v)/dt {} vs Jdot v {}", i, fd, jdot_v);
        }
    }

    /// A random contact between two random bodies, pyramidal and elliptic: the edge forces of
    /// the pyramid decode (f_n = sum, f_k = mu_k (f_2k-2 - f_2k-1)) to an elliptic force with the
    /// same generalized force `J^T f`; `R > 0`, `D = 1/R`, every edge of a contact has the same R.
    #[test]
    fn pyramid_edges_decode_to_the_elliptic_force(
        ms in model_spec(), ss in state_spec(), picks in prop::array::uniform2(0usize..1000),
        pos in prop::array::uniform3(-1.0f64..1.0), rv in prop::array::uniform3(-3.0f64..3.0),
        dim in prop::sample::select(vec![1usize, 3, 4, 6]), fr in prop::array::uniform5(0.0f64..1.5),
        edges in prop::collection::vec(0.0f64..2.0, 10)
    ) {
        let mut model = random_model(&mujoco_kinds(ms));
        let (b0, b1) = (picks[0] % (model.nb + 1), 1 + picks[1] % model.nb);
        model.geoms = vec![geom(b0), geom(b1)];
        let inv = Invweight::new(&model).unwrap();
        let s = random_state(&model, &ss);
        let (q, v) = (s.q.as_slice(), s.qd.as_slice());
        let d = forward_smooth(&model, q, v).unwrap();
        let friction = fr.map(|f| f.max(1e-5));
        let c = random_contact(Vec3::from(pos), Vec3::from(rv), dim, friction);
        model.opt.cone = Cone::Pyramidal;
        let pyr = make_constraint(&model, &d, &inv, q, v, vec![c.clone()]).unwrap();
        model.opt.cone = Cone::Elliptic;
        let ell = make_constraint(&model, &d, &inv, q, v, vec![c]).unwrap();
        for e in [&pyr, &ell] {
            for i in 0..e.nefc() {
                prop_assert!(e.r[i] > 0.0 && e.d[i] == 1.0 / e.r[i]);
            }
        }
        if dim == 1 {
            prop_assert_eq!(&pyr.j, &ell.j);
            return Ok(());
        }
        let ne = 2 * (dim - 1);
        prop_assert_eq!((pyr.nefc(), ell.nefc()), (ne, dim));
        prop_assert!(pyr.r.iter().all(|r| *r == pyr.r[0]));
        let f = &edges[..ne];
        let mut decoded = vec![f.iter().sum::<f64>()];
        for k in 1..dim {
            decoded.push(friction[k - 1] * (f[2 * k - 2] - f[2 * k - 1]));
        }
        let gp = pyr.dense_j().transpose() * DVector::from_column_slice(f);
        let ge = ell.dense_j().transpose() * DVector::from_column_slice(&decoded);
        prop_assert!((&gp - &ge).amax() <= 1e-12 * gp.amax().max(1.0), "{} vs {}", gp, ge);
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let mut model = load_scene("limits_friction");
    model.opt.cone = Cone::Elliptic;
    let inv = Invweight::new(&model).unwrap();
    let q = model.qpos0.as_slice().to_vec();
    let v = vec![0.0; model.nv];
    let d = forward_smooth(&model, &q, &v).unwrap();
    let c = random_contact(
        Vec3::zeros(),
        Vec3::new(0.1, 0.2, 0.3),
        3,
        [0.5, 0.5, 0.01, 0.001, 0.001],
    );
    let mut c = MjContact { geom: [0, 5], ..c };
    // a NaN in the state
    let mut bad = q.clone();
    bad[1] = f64::NAN;
    assert!(matches!(
        make_constraint(&model, &d, &inv, &bad, &v, Vec::new()),
        Err(Error::NonFinite { .. })
    ));
    let mut badv = v.clone();
    badv[3] = f64::INFINITY;
    assert!(make_constraint(&model, &d, &inv, &q, &badv, Vec::new()).is_err());
    // condim 2 and 5, negative friction, a geom out of range
    for dim in [0, 2, 5, 7] {
        c.dim = dim;
        let e = make_constraint(&model, &d, &inv, &q, &v, vec![c.clone()]).unwrap_err();
        assert!(matches!(e, Error::BadContact { index: 0, .. }), "{e}");
        assert!(e.to_string().contains("condim"), "{e}");
    }
    c.dim = 3;
    c.friction[1] = -0.1;
    let e = make_constraint(&model, &d, &inv, &q, &v, vec![c.clone(), c.clone()]).unwrap_err();
    assert!(
        matches!(e, Error::BadContact { index: 0, .. }) && e.to_string().contains("friction"),
        "{e}"
    );
    c.friction[1] = 0.5;
    c.geom = [0, 99];
    assert!(matches!(
        make_constraint(&model, &d, &inv, &q, &v, vec![c.clone()]),
        Err(Error::BadContact { .. })
    ));
    c.geom = [0, 5];
    // zero friction is raised to mjMINMU, as in MuJoCo's contacts: finite R everywhere
    let mut zero = c.clone();
    zero.friction = [0.0; 5];
    let efc = make_constraint(&model, &d, &inv, &q, &v, vec![zero]).unwrap();
    assert!(efc.r.iter().all(|r| r.is_finite() && *r > 0.0) && efc.contacts[0].friction == [1e-5; 5]);
    // a contact in the gap (dist >= margin - gap) makes no rows
    let mut gap = c.clone();
    gap.margin = 0.01;
    gap.gap = 0.004;
    gap.dist = 0.007;
    let efc = make_constraint(&model, &d, &inv, &q, &v, vec![gap.clone(), c.clone()]).unwrap();
    assert_eq!(efc.contacts[0].efc_address, None);
    assert_eq!(efc.contacts[1].efc_address, Some(efc.ne + efc.nf + efc.nl));
    gap.dist = 0.005;
    let efc = make_constraint(&model, &d, &inv, &q, &v, vec![gap]).unwrap();
    assert_eq!(efc.contacts[0].efc_address, Some(efc.ne + efc.nf + efc.nl));
    // Data or Invweight of another model
    let other = load_scene("fourbar");
    let d_other = forward_smooth(&other, other.qpos0.as_slice(), &[0.0; 3]).unwrap();
    assert!(matches!(
        make_constraint(&model, &d_other, &inv, &q, &v, Vec::new()),
        Err(Error::BadLength { .. })
    ));
    // mixed solref: sanitized with a warning; solimp out of range: clamped
    let mut mixed = c.clone();
    mixed.solref = [0.03, -2.0];
    mixed.solimp = [1.7, -0.5, 0.002, 0.5, 0.2];
    let efc = make_constraint(&model, &d, &inv, &q, &v, vec![mixed]).unwrap();
    // the wrist's mixed solreffriction (a friction-loss row) and the contact's solref
    assert_eq!(efc.warnings.len(), 2, "{:?}", efc.warnings);
    assert!(efc.warnings[0].contains("friction loss of dof 5"));
    assert!(efc.warnings[1].contains("contact 0") && efc.warnings[1].contains("mixed solref"));
    let mut clean = c.clone();
    clean.solref = [0.02, 1.0];
    clean.solimp = [0.9999, 0.0001, 0.002, 0.5, 1.0];
    let reference = make_constraint(&model, &d, &inv, &q, &v, vec![clean]).unwrap();
    assert_eq!(efc.kbip, reference.kbip);
    assert_eq!(efc.r, reference.r);
    assert_eq!(reference.warnings.len(), 1);
}

fn load_scene(name: &str) -> Model {
    mjcf::load(root().join(format!("tests/fixtures/models/{name}.xml")))
        .unwrap()
        .model
}

#[test]
fn the_rows_of_a_two_body_weld_have_the_rotational_jacobian_of_the_spec() {
    // weld.xml at a perturbed state: the rotational rows equal 1/2 vec(q2^* (0, w_j) q1 r0)
    // computed here from rotation matrices: for small errors J_rot ~ 1/2 (Jr1 - Jr2) in world
    // axes rotated by q2^*, i.e. R2^T (Jr1 - Jr2) / 2 to first order in the error.
    let model = load_scene("weld");
    let inv = Invweight::new(&model).unwrap();
    let q = model.qpos0.as_slice().to_vec();
    let v = vec![0.0; model.nv];
    let d = forward_smooth(&model, &q, &v).unwrap();
    let efc = make_constraint(&model, &d, &inv, &q, &v, Vec::new()).unwrap();
    assert_eq!(efc.ne, 12);
    // at qpos0 the welds are satisfied (relpose equals the pose at qpos0)
    assert!(efc.pos.iter().all(|p| p.abs() < 1e-12), "{:?}", efc.pos);
    let kin = forward_kinematics(&model, &q).unwrap();
    for (k, eq) in model.equality.iter().enumerate() {
        let Equality::Weld { body1, body2, .. } = *eq else {
            panic!()
        };
        let (mut p, mut r1) = (Matrix3xX::zeros(model.nv), Matrix3xX::zeros(model.nv));
        let mut r2 = Matrix3xX::zeros(model.nv);
        jac_point(&model, &d, body1, &Vec3::zeros(), &mut p, &mut r1);
        jac_point(&model, &d, body2, &Vec3::zeros(), &mut p, &mut r2);
        let r2t = if body2 == 0 {
            Mat3::identity()
        } else {
            kin.rotation(body2).transpose()
        };
        let expected: DMatrix<f64> = DMatrix::from_column_slice(3, model.nv, (r2t * (r1 - r2) * 0.5).as_slice());
        let jd = efc.dense_j();
        let ours = jd.rows(6 * k + 3, 3);
        assert!((ours - &expected).amax() < 1e-12, "{ours} vs {expected}");
    }
}
