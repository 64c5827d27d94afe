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
    for r in 0..n {
        for c in 0..fx.nv {
            j[r * fx.nv + c] = efc.j[(r, c)];
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
    // the MJCF reader skips height fields (type 1) and meshes (type 7) without mass
    let mut geoms = vec![usize::MAX; fx.geom_bodyid.len()];
    let mut next = 0;
    for (g, &b) in fx.geom_bodyid.iter().enumerate() {
        if matches!(fx.geom_type[g], 1 | 7) {
            continue;
        }
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
