//! Exercises of the chapter "The constrained pipeline" (book/src/constrained_forward.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_forward`.

use mbd::mjcf;
use mbd::model::{Cone, Model};
use mbd::mujoco::constraint::EfcType;
use mbd::mujoco::forward::{contact_force, Forward, ForwardData};
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Settled {
    model: String,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
}

/// A fixture's model and MuJoCo's settled state.
fn settled(name: &str) -> (Model, Vec<f64>, Vec<f64>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s: Settled = serde_json::from_str(
        &std::fs::read_to_string(root.join(format!("tests/fixtures/forward/{name}.json"))).unwrap(),
    )
    .unwrap();
    let model = mjcf::load(root.join(&s.model)).unwrap().model;
    (model, s.qpos, s.qvel)
}

/// Exercise 1: `qfrc_inverse = M qacc + qfrc_bias - qfrc_passive - J^T efc_force` from the
/// outputs of a forward pass (M from the legacy `qM` through the layout's dense view).
fn exercise_1_answer(model: &Model, d: &ForwardData) -> Vec<f64> {
    let m = model.mj_layout().to_dense(&d.data.qm);
    let nv = model.nv;
    (0..nv)
        .map(|r| {
            let ma: f64 = (0..nv).map(|c| m[(r, c)] * d.qacc[c]).sum();
            let jtf: f64 = (0..d.efc.nefc()).map(|i| d.efc.j[(i, r)] * d.efc_force[i]).sum();
            ma + d.data.qfrc_bias[r] - d.qfrc_passive[r] - jtf
        })
        .collect()
}

#[test]
fn exercise_1_inverse_dynamics_by_hand() {
    let (model, q, v) = settled("box_stack");
    let applied: Vec<f64> = (0..model.nv).map(|k| 0.7 * (1.3 * k as f64).sin()).collect();
    let mut fw = Forward::new(&model).unwrap();
    fw.options.tolerance = 1e-12;
    fw.options.iterations = 1000;
    fw.forward(&q, &v, &applied).unwrap();
    let got = exercise_1_answer(&model, &fw.d);
    let scale = applied.iter().fold(1.0f64, |a, x| a.max(x.abs()));
    for k in 0..model.nv {
        assert!(
            (got[k] - applied[k]).abs() < 1e-8 * scale,
            "dof {k}: {} vs {}",
            got[k],
            applied[k]
        );
    }
}

/// Exercise 2: the force of contact `k` in world coordinates (acting on `geom[1]`), decoded from
/// its rows: elliptic rows hold (normal, tangent 1, tangent 2) directly, pyramidal edge pairs
/// `(f_2j, f_2j+1)` give the normal `sum f` and the tangential `mu_j (f_2j - f_2j+1)`.
fn exercise_2_answer(d: &ForwardData, k: usize) -> [f64; 3] {
    let c = &d.efc.contacts[k];
    let Some(a) = c.efc_address else {
        return [0.0; 3];
    };
    let f = &d.efc_force[a..];
    let local = match d.efc.efc_type[a] {
        EfcType::ContactPyramidal => {
            let mut l = [f[..2 * (c.dim - 1)].iter().sum::<f64>(), 0.0, 0.0];
            for j in 0..(c.dim - 1).min(2) {
                l[j + 1] = c.friction[j] * (f[2 * j] - f[2 * j + 1]);
            }
            l
        }
        EfcType::ContactFrictionless => [f[0], 0.0, 0.0],
        _ => [f[0], f[1], f[2]],
    };
    // frame rows are the normal and tangents: world = frame^T local
    std::array::from_fn(|x| (0..3).map(|r| c.frame[(r, x)] * local[r]).sum())
}

#[test]
fn exercise_2_contacts_carry_the_weight() {
    let (mut model, q, v) = settled("box_stack");
    let weight = (1..=model.nb).map(|i| model.inertia[i].m).sum::<f64>() * model.opt.gravity.norm();
    for cone in [Cone::Pyramidal, Cone::Elliptic] {
        model.opt.cone = cone;
        let mut fw = Forward::new(&model).unwrap();
        fw.forward(&q, &v, &vec![0.0; model.nv]).unwrap();
        let d = &fw.d;
        // only the floor's contacts carry the stack; the others are internal
        let mut up = 0.0;
        for k in 0..d.contacts().len() {
            let w = exercise_2_answer(d, k);
            let lib = contact_force(d, k);
            let c = &d.contacts()[k];
            for x in 0..3 {
                let want: f64 = (0..3).map(|r| c.frame[(r, x)] * lib[r]).sum();
                assert!((w[x] - want).abs() < 1e-9 * weight, "{cone} contact {k}");
            }
            if c.geom[0] == 0 {
                up += w[2];
            }
        }
        // at rest (MuJoCo's settled state) the floor carries the stack's weight, up to the
        // residual vertical acceleration of the boxes
        let residual: f64 = (0..3).map(|b| d.qacc[6 * b + 2]).sum::<f64>() * 1.0;
        assert!(
            (up - weight - residual).abs() < 1e-6 * weight,
            "{cone}: floor force {up} vs weight {weight} + m a {residual}"
        );
        assert!(d.contacts().len() == 12, "{cone}: {} contacts", d.contacts().len());
    }
}

/// Exercise 3: the largest `sqrt(f1^2 + f2^2) - mu f_n` over the elliptic contacts (negative or
/// rounding-size when every force is inside its cone).
fn exercise_3_answer(d: &ForwardData) -> f64 {
    let mut worst = f64::NEG_INFINITY;
    for c in d.contacts() {
        let Some(a) = c.efc_address else { continue };
        if c.dim < 3 {
            continue;
        }
        let f = &d.efc_force[a..a + 3];
        let t = (f[1] * f[1] + f[2] * f[2]).sqrt();
        worst = worst.max(t - c.friction[0] * f[0]);
    }
    worst
}

#[test]
fn exercise_3_elliptic_forces_are_inside_the_cone() {
    for name in ["box_stack", "box_incline", "ant", "quadruped"] {
        let (mut model, q, v) = settled(name);
        model.opt.cone = Cone::Elliptic;
        let mut fw = Forward::new(&model).unwrap();
        fw.options.tolerance = 1e-12;
        fw.options.iterations = 1000;
        fw.forward(&q, &v, &vec![0.0; model.nv]).unwrap();
        assert!(!fw.d.contacts().is_empty(), "{name}: no contacts");
        let scale = fw.d.efc_force.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        let w = exercise_3_answer(&fw.d);
        assert!(w < 1e-9 * scale, "{name}: a force is outside its cone by {w}");
    }
}
