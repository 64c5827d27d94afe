//! Peer-reference tests: our dynamics against MuJoCo 4.0.0 and Pinocchio 4.1.0.
//!
//! The fixtures in `tests/fixtures/peers/*.json` hold, for eight test models at four seeded random
//! states each, the numbers MuJoCo and Pinocchio compute (Pinocchio's already converted into
//! MuJoCo's coordinates). They are made by `bash tests/fixtures/make_peer_fixtures.sh`, which
//! refuses to write them unless the two engines agree with each other to 1e-9 relative.
//!
//! Every check below uses the same measure and the same tolerance:
//!
//! ```text
//! rel = max_k |ours_k - ref_k| / max(1, max_k |ref_k|)   <=   TOL = 1e-9
//! ```
//!
//! (a relative error for quantities larger than one, an absolute one for small quantities).
//! Quaternions are compared up to sign (q and -q are the same rotation). The worst error per model
//! and quantity is printed: `cargo test --test peers -- --nocapture`.

mod common;
use common::rel_err;
use mbd::dynamics::{bias_forces, crba, kinetic_energy, passive_forces, potential_energy, qacc_smooth, rnea};
use mbd::kinematics::{forward_kinematics, mj_body_poses};
use mbd::mjcf;
use mbd::model::Model;
use nalgebra::DMatrix;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The tolerance of every comparison, in the measure of [`rel_err`].
const TOL: f64 = 1e-9;

/// The models the fixture script dumps (tests/fixtures/make_peer_fixtures.py, `MODELS`).
const MODELS: [&str; 8] = [
    "chain_7_spatial",
    "chain_30_spatial",
    "tree_5",
    "floating",
    "panda",
    "weld",
    "chain_7_spatial_armature",
    "fourbar",
];

#[derive(Deserialize)]
struct Fixture {
    model: String,
    model_path: String,
    mujoco_version: String,
    pinocchio_version: Option<String>,
    seeds: Vec<u64>,
    sizes: Sizes,
    structure: Structure,
    states: Vec<State>,
}

#[derive(Deserialize)]
struct Sizes {
    nq: usize,
    nv: usize,
    nbody: usize,
}

#[derive(Deserialize)]
struct Structure {
    body_parentid: Vec<i64>,
    dof_parentid: Vec<i64>,
}

/// One state (MuJoCo conventions) and the reference numbers there; the `pin_*` fields are absent
/// when Pinocchio could not load the model (weld).
#[derive(Deserialize)]
struct State {
    seed: u64,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    qfrc_applied: Vec<f64>,
    qacc: Vec<f64>,
    xpos: Vec<[f64; 3]>,
    xquat: Vec<[f64; 4]>,
    #[serde(rename = "M_dense")]
    m_dense: Vec<Vec<f64>>,
    qfrc_bias: Vec<f64>,
    qfrc_passive: Vec<f64>,
    qacc_smooth: Vec<f64>,
    inverse_dynamics_test: Vec<f64>,
    energy: [f64; 2],
    #[serde(rename = "pin_M")]
    pin_m: Option<Vec<Vec<f64>>>,
    pin_bias: Option<Vec<f64>>,
    pin_rnea: Option<Vec<f64>>,
    pin_aba: Option<Vec<f64>>,
}

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn load_fixture(name: &str) -> Fixture {
    let path = manifest_path(&format!("tests/fixtures/peers/{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Row-major entries of a nested reference matrix.
fn flat(rows: &[Vec<f64>]) -> Vec<f64> {
    rows.iter().flat_map(|r| r.iter().copied()).collect()
}

/// Row-major entries of our matrix.
fn flat_dm(m: &DMatrix<f64>) -> Vec<f64> {
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect()
}

/// Quaternions compared up to sign: each one is flipped to the reference's hemisphere first.
fn quat_rel_err(ours: &[[f64; 4]], reference: &[[f64; 4]]) -> f64 {
    if ours.len() != reference.len() {
        return f64::INFINITY;
    }
    let mut a = Vec::with_capacity(4 * ours.len());
    let mut b = Vec::with_capacity(4 * ours.len());
    for (q, r) in ours.iter().zip(reference) {
        let dot: f64 = q.iter().zip(r).map(|(x, y)| x * y).sum();
        let s = if dot < 0.0 { -1.0 } else { 1.0 };
        a.extend(q.iter().map(|x| s * x));
        b.extend_from_slice(r);
    }
    rel_err(&a, &b)
}

/// Worst error per quantity over the states of one model, in first-seen order.
#[derive(Default)]
struct Worst(Vec<(String, f64)>);

impl Worst {
    fn record(&mut self, what: &str, err: f64) {
        match self.0.iter_mut().find(|(w, _)| w == what) {
            Some(entry) => {
                // NaN never occurs (rel_err maps it to infinity), so max is safe.
                entry.1 = entry.1.max(err);
            }
            None => self.0.push((what.to_string(), err)),
        }
    }
}

/// The MuJoCo parent of MuJoCo body `b`, read off our Featherstone tree: walk up from the body's
/// last Featherstone body past the chain that represents `b` (one Featherstone body per joint).
fn mj_parent(model: &Model, b: usize) -> usize {
    let mut fb = model.mj_body_last[b];
    while fb != 0 && model.mj_body[fb] == b {
        fb = model.lambda[fb];
    }
    model.mj_body[fb]
}

/// Records errors of one state into a model's worst-error table and failure list.
struct Checker<'a> {
    name: &'a str,
    seed: u64,
    worst: &'a mut Worst,
    fail: &'a mut Vec<String>,
}

impl Checker<'_> {
    /// Records `err` for `what` and fails unless `err <= TOL`.
    fn record(&mut self, what: &str, err: f64) {
        self.worst.record(what, err);
        if err.is_nan() || err > TOL {
            self.fail.push(format!(
                "{} seed {}: {what}: rel err {err:.3e} > {TOL:e}",
                self.name, self.seed
            ));
        }
    }

    /// Compares our result (or our error) with the reference.
    fn check(&mut self, what: &str, ours: Result<Vec<f64>, mbd::Error>, reference: &[f64]) {
        match ours {
            Ok(v) => self.record(what, rel_err(&v, reference)),
            Err(e) => {
                self.fail
                    .push(format!("{} seed {}: {what}: returned error {e}", self.name, self.seed));
                self.worst.record(what, f64::INFINITY);
            }
        }
    }
}

/// Compares one model with its fixture; returns the per-quantity report and the failures.
fn check_model(name: &str) -> (String, Vec<String>) {
    let fx = load_fixture(name);
    let model_file = manifest_path(&fx.model_path);
    let model = match mjcf::load(&model_file) {
        Ok(l) => l.model,
        Err(e) => return (String::new(), vec![format!("{name}: mjcf::load failed: {e}")]),
    };
    let mut worst = Worst::default();
    let mut fail = Vec::new();

    // Structure: sizes and the two parent arrays must match exactly.
    let sizes_ok = model.nq == fx.sizes.nq && model.nv == fx.sizes.nv && model.mj_nbody() == fx.sizes.nbody;
    if !sizes_ok {
        fail.push(format!(
            "{name}: sizes (nq, nv, nbody) = ({}, {}, {}), MuJoCo ({}, {}, {})",
            model.nq,
            model.nv,
            model.mj_nbody(),
            fx.sizes.nq,
            fx.sizes.nv,
            fx.sizes.nbody
        ));
        return (String::new(), fail);
    }
    let dof_parent: Vec<i64> = model.dof_parent.iter().map(|p| p.map_or(-1, |d| d as i64)).collect();
    if dof_parent != fx.structure.dof_parentid {
        fail.push(format!(
            "{name}: dof_parent {dof_parent:?} != MuJoCo dof_parentid {:?}",
            fx.structure.dof_parentid
        ));
    }
    let body_parent: Vec<i64> = std::iter::once(0)
        .chain((1..model.mj_nbody()).map(|b| mj_parent(&model, b) as i64))
        .collect();
    if body_parent != fx.structure.body_parentid {
        fail.push(format!(
            "{name}: MuJoCo body parents {body_parent:?} != body_parentid {:?}",
            fx.structure.body_parentid
        ));
    }

    for st in &fx.states {
        let (q, qd) = (st.qpos.as_slice(), st.qvel.as_slice());
        let mut ck = Checker {
            name,
            seed: st.seed,
            worst: &mut worst,
            fail: &mut fail,
        };

        let h = crba(&model, q).map(|m| flat_dm(&m));
        ck.check("M vs MuJoCo M_dense", h.clone(), &flat(&st.m_dense));
        if let Some(pm) = &st.pin_m {
            ck.check("M vs Pinocchio crba", h, &flat(pm));
        }

        let c = bias_forces(&model, q, qd).map(|v| v.as_slice().to_vec());
        ck.check("bias vs MuJoCo qfrc_bias", c.clone(), &st.qfrc_bias);
        if let Some(pb) = &st.pin_bias {
            ck.check("bias vs Pinocchio nle", c, pb);
        }

        let tau = rnea(&model, q, qd, &st.qacc, None).map(|v| v.as_slice().to_vec());
        ck.check("rnea vs MuJoCo M qacc + bias", tau.clone(), &st.inverse_dynamics_test);
        if let Some(pr) = &st.pin_rnea {
            ck.check("rnea vs Pinocchio rnea", tau, pr);
        }

        let acc = qacc_smooth(&model, q, qd, &st.qfrc_applied).map(|v| v.as_slice().to_vec());
        ck.check("qacc_smooth vs MuJoCo", acc.clone(), &st.qacc_smooth);
        if let Some(pa) = &st.pin_aba {
            ck.check("qacc_smooth vs Pinocchio aba", acc, pa);
        }

        let passive = passive_forces(&model, q, qd).map(|v| v.as_slice().to_vec());
        ck.check("qfrc_passive vs MuJoCo", passive, &st.qfrc_passive);
        ck.check(
            "potential energy vs MuJoCo",
            potential_energy(&model, q).map(|e| vec![e]),
            &st.energy[..1],
        );
        ck.check(
            "kinetic energy vs MuJoCo",
            kinetic_energy(&model, q, qd).map(|e| vec![e]),
            &st.energy[1..],
        );

        match forward_kinematics(&model, q) {
            Ok(kin) => {
                let (xpos, xquat) = mj_body_poses(&model, &kin);
                let ours: Vec<f64> = xpos.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
                let reference: Vec<f64> = st.xpos.iter().flatten().copied().collect();
                ck.check("xpos vs MuJoCo", Ok(ours), &reference);
                ck.record("xquat vs MuJoCo (up to sign)", quat_rel_err(&xquat, &st.xquat));
            }
            Err(e) => ck
                .fail
                .push(format!("{name} seed {}: forward_kinematics: {e}", st.seed)),
        }
    }

    let mut report = format!(
        "{name} ({}, nv {}, {} states, MuJoCo {}, Pinocchio {}): worst rel err\n",
        fx.model,
        fx.sizes.nv,
        fx.states.len(),
        fx.mujoco_version,
        fx.pinocchio_version.as_deref().unwrap_or("skipped")
    );
    for (what, err) in &worst.0 {
        let _ = writeln!(report, "    {what:32} {err:.2e}");
    }
    let structure = if fail.iter().any(|f| f.contains("parent")) {
        "MISMATCH"
    } else {
        "equal"
    };
    let _ = writeln!(report, "    {:32} {structure}", "dof_parentid, body_parentid");
    (report, fail)
}

fn run(name: &str) {
    let (report, fail) = check_model(name);
    // One print per model keeps the blocks of parallel tests apart.
    print!("{report}");
    assert!(fail.is_empty(), "{} failure(s):\n{}", fail.len(), fail.join("\n"));
}

#[test]
fn chain_7_spatial() {
    run("chain_7_spatial");
}

#[test]
fn chain_30_spatial() {
    run("chain_30_spatial");
}

#[test]
fn tree_5() {
    run("tree_5");
}

#[test]
fn floating() {
    run("floating");
}

#[test]
fn panda() {
    run("panda");
}

#[test]
fn weld() {
    run("weld");
}

#[test]
fn chain_7_spatial_armature() {
    run("chain_7_spatial_armature");
}

#[test]
fn fourbar() {
    run("fourbar");
}

// ------------------------------------------------------------------------------------------------
// The comparison itself, and the fixtures, checked without our dynamics.

#[test]
fn rel_err_flags_perturbations_and_broken_values() {
    let reference = [2.0, -30.0, 0.5];
    assert_eq!(rel_err(&reference, &reference), 0.0);
    // measured against the largest entry (30): an error of 1.5e-8 on the entry 2.0 is 5e-10,
    // inside; 6e-8 is 2e-9, outside
    assert!(rel_err(&[2.0 + 1.5e-8, -30.0, 0.5], &reference) <= TOL);
    assert!(rel_err(&[2.0 + 6e-8, -30.0, 0.5], &reference) > TOL);
    // small references are compared absolutely: 2e-9 on an entry of size 1e-3 fails
    assert!(rel_err(&[1e-3 + 2e-9], &[1e-3]) > TOL);
    assert!(rel_err(&[1e-3 + 5e-10], &[1e-3]) <= TOL);
    // NaN, infinity and a wrong length can never pass
    assert_eq!(rel_err(&[2.0, f64::NAN, 0.5], &reference), f64::INFINITY);
    assert_eq!(rel_err(&[2.0, f64::INFINITY, 0.5], &reference), f64::INFINITY);
    assert_eq!(rel_err(&[2.0, -30.0], &reference), f64::INFINITY);
    // quaternions: -q is accepted, a different rotation is not
    let q = [0.5, 0.5, -0.5, 0.5];
    let minus_q = q.map(|x| -x);
    assert_eq!(quat_rel_err(&[minus_q], &[q]), 0.0);
    assert!(quat_rel_err(&[[0.5, 0.5, 0.5, 0.5]], &[q]) > TOL);
    // the worst-error record keeps the maximum
    let mut w = Worst::default();
    w.record("a", 1e-12);
    w.record("a", 1e-10);
    w.record("a", 1e-11);
    assert_eq!(w.0, vec![("a".to_string(), 1e-10)]);
}

/// The fixtures are complete, and MuJoCo and Pinocchio agree inside them to TOL (an independent
/// re-check of what the fixture script verified); a perturbation of one entry by 1e-8 relative to
/// the matrix scale is caught.
#[test]
fn fixtures_are_consistent_and_perturbations_are_caught() {
    for name in MODELS {
        let fx = load_fixture(name);
        assert_eq!(fx.seeds, vec![0, 1, 2, 3], "{name}");
        assert_eq!(fx.states.len(), 4, "{name}");
        assert_eq!(fx.structure.dof_parentid.len(), fx.sizes.nv, "{name}");
        assert_eq!(fx.structure.body_parentid.len(), fx.sizes.nbody, "{name}");
        assert_eq!(fx.mujoco_version, "4.0.0");
        for st in &fx.states {
            assert_eq!(st.qpos.len(), fx.sizes.nq, "{name}");
            assert_eq!(st.qvel.len(), fx.sizes.nv, "{name}");
            assert_eq!(st.xquat.len(), fx.sizes.nbody, "{name}");
            let (Some(pm), Some(pb), Some(pr), Some(pa)) = (&st.pin_m, &st.pin_bias, &st.pin_rnea, &st.pin_aba) else {
                assert_eq!(name, "weld", "only weld may lack Pinocchio numbers");
                continue;
            };
            assert_eq!(fx.pinocchio_version.as_deref(), Some("4.1.0"));
            let m = flat(&st.m_dense);
            assert!(rel_err(&flat(pm), &m) <= TOL, "{name} seed {}: M", st.seed);
            assert!(rel_err(pb, &st.qfrc_bias) <= TOL, "{name} seed {}: bias", st.seed);
            assert!(
                rel_err(pr, &st.inverse_dynamics_test) <= TOL,
                "{name} seed {}: rnea",
                st.seed
            );
            assert!(rel_err(pa, &st.qacc_smooth) <= TOL, "{name} seed {}: aba", st.seed);
            // M is symmetric positive definite with a positive diagonal
            let n = fx.sizes.nv;
            let md = DMatrix::from_row_slice(n, n, &m);
            assert!(
                rel_err(&flat_dm(&md.transpose()), &m) <= 1e-15,
                "{name}: M not symmetric"
            );
            assert!(md.clone().cholesky().is_some(), "{name}: M not positive definite");
            // perturb the largest entry of Pinocchio's M by 1e-8 of the scale: must fail
            let scale = m.iter().fold(1.0_f64, |s, x| s.max(x.abs()));
            let mut bad = flat(pm);
            bad[0] += 1e-8 * scale;
            assert!(rel_err(&bad, &m) > TOL, "{name}: perturbation not caught");
        }
    }
}
