//! The public model corpus against MuJoCo 4.0.0: the 14 MuJoCo models of Gymnasium and the 18
//! dm_control suite models (all but `dog`), copied with their licences under
//! `tests/fixtures/models/public/`. `tests/fixtures/public_models.json` holds what MuJoCo
//! computes for each at two seeded random states (`tests/fixtures/make_public_fixtures.py`, the
//! command is at its top): the inertia matrix `M`, `qfrc_bias`, `qfrc_passive` (joint and tendon
//! springs and dampers, the inertia-box fluid model of swimmer and fish) and `qacc_smooth` at
//! `ctrl = 0` (which includes the bias forces of position and general servos).
//!
//! Every model must load, and every quantity must agree to 1e-9 relative:
//! `max |ours - mujoco| <= 1e-9 * max(1, max |mujoco|)`.

use mbd::dynamics::{bias_forces, crba, passive_forces, qacc_smooth};
use mbd::mjcf;
use serde_json::Value;
use std::path::PathBuf;

const TOL: f64 = 1e-9;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn nums(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(nums).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        other => panic!("not numeric: {other}"),
    }
}

/// The largest error relative to `max(1, max |theirs|)`.
fn rel(ours: &[f64], theirs: &[f64]) -> f64 {
    assert_eq!(ours.len(), theirs.len());
    let scale = theirs.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    ours.iter().zip(theirs).fold(0.0f64, |m, (a, b)| m.max((a - b).abs())) / scale
}

/// For every model and state, the relative errors of M, qfrc_bias, qfrc_passive, qacc_smooth.
fn errors() -> Vec<(String, [f64; 4])> {
    let text = std::fs::read_to_string(fixtures().join("public_models.json")).expect("public_models.json");
    let r: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for (rel_path, m) in r["models"].as_object().unwrap() {
        let loaded = mjcf::load(fixtures().join("models").join(rel_path)).unwrap_or_else(|e| panic!("{e}"));
        let model = loaded.model;
        assert_eq!(model.nq, m["nq"].as_u64().unwrap() as usize, "{rel_path}: nq");
        assert_eq!(model.nv, m["nv"].as_u64().unwrap() as usize, "{rel_path}: nv");
        assert_eq!(
            model.actuators.len(),
            m["nu"].as_u64().unwrap() as usize,
            "{rel_path}: nu"
        );
        assert_eq!(
            model.tendons.len(),
            m["ntendon"].as_u64().unwrap() as usize,
            "{rel_path}: ntendon"
        );
        let names: Vec<String> = m["body_name"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        assert_eq!(model.mj_body_name, names, "{rel_path}: body names");
        for (k, s) in m["states"].as_array().unwrap().iter().enumerate() {
            let (q, v) = (nums(&s["qpos"]), nums(&s["qvel"]));
            let mut e = [0.0; 4];
            if model.nv > 0 {
                let h = crba(&model, &q).unwrap();
                e[0] = rel(h.as_slice(), &nums(&s["M"]));
                e[1] = rel(bias_forces(&model, &q, &v).unwrap().as_slice(), &nums(&s["qfrc_bias"]));
                e[2] = rel(
                    passive_forces(&model, &q, &v).unwrap().as_slice(),
                    &nums(&s["qfrc_passive"]),
                );
                let acc = qacc_smooth(&model, &q, &v, &vec![0.0; model.nv]).unwrap();
                e[3] = rel(acc.as_slice(), &nums(&s["qacc_smooth"]));
            }
            out.push((format!("{rel_path} state {k}"), e));
        }
    }
    out
}

#[test]
fn every_public_model_agrees_with_mujoco() {
    let errs = errors();
    assert_eq!(errs.len(), 64, "32 models x 2 states");
    let mut bad = Vec::new();
    for (what, e) in &errs {
        println!(
            "{what:50} M {:8.1e} bias {:8.1e} passive {:8.1e} qacc {:8.1e}",
            e[0], e[1], e[2], e[3]
        );
        if e.iter().any(|x| !(*x <= TOL)) {
            bad.push(what.clone());
        }
    }
    assert!(bad.is_empty(), "disagree with MuJoCo beyond {TOL:e}: {bad:#?}");
}
