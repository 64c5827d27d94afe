//! MuJoCo's com-based quantities (`mbd::mujoco::forward_smooth`) against MuJoCo 4.0.0 itself.
//!
//! The fixtures `tests/fixtures/peers/<model>.json` were written by
//! `bash tests/fixtures/make_peer_fixtures.sh` (see `tests/fixtures/make_peer_fixtures.py`): for
//! each test model, MuJoCo's sparse structure (`dof_parentid`, `dof_Madr`, the 4.0 CSR pattern
//! `M_rownnz` / `M_rowadr` / `M_colind` and `mapM2M`) and, at four seeded random states, the
//! fields of `mjData` after `mj_forward`: `subtree_com`, `cinert`, `cdof`, `cvel`, `cdof_dot`,
//! `crb`, the dense inertia `M_dense` (`mj_fullM`), `qLD` (CSR), `qLDiagInv` and `qfrc_bias`.
//!
//! Every comparison uses one measure and one tolerance:
//!
//! ```text
//! rel = max_k |ours_k - ref_k| / max(1, max_k |ref_k|)   <=   TOL = 1e-9
//! ```
//!
//! MuJoCo 4.0 stores only the diagonal of "simple" dofs in its CSR pattern (a free body whose
//! centre of mass is at its origin, as weld.xml's payload), and so does our `M`
//! ([`Model::mj_layout`]): the patterns are equal, and `M` and `qLD` are compared element by
//! element in MuJoCo's CSR order. Print the worst errors with
//! `cargo test --release --test mujoco_com -- --nocapture`.

mod common;
use common::rel_err;
use mbd::mjcf;
use mbd::model::Model;
use mbd::mujoco::{forward_smooth, Data};
use mbd::sparse::MjLayout;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Tolerance of every comparison, in the measure of [`rel_err`].
const TOL: f64 = 1e-9;

/// The models compared, all five peer models without loops.
const MODELS: [&str; 5] = ["chain_7_spatial", "tree_5", "floating", "panda", "weld"];

#[derive(Deserialize)]
struct Fixture {
    sizes: Sizes,
    structure: Structure,
    states: Vec<State>,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Sizes {
    nv: usize,
    nbody: usize,
    nM: usize,
    nC: usize,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Structure {
    dof_parentid: Vec<i64>,
    dof_Madr: Vec<usize>,
    M_rownnz: Vec<usize>,
    M_rowadr: Vec<usize>,
    M_colind: Vec<usize>,
    mapM2M: Vec<usize>,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct State {
    seed: u64,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    subtree_com: Vec<[f64; 3]>,
    cinert: Vec<[f64; 10]>,
    cdof: Vec<[f64; 6]>,
    cvel: Vec<[f64; 6]>,
    cdof_dot: Vec<[f64; 6]>,
    crb: Vec<[f64; 10]>,
    M_dense: Vec<Vec<f64>>,
    qLD: Vec<f64>,
    qLDiagInv: Vec<f64>,
    qfrc_bias: Vec<f64>,
}

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn load_fixture(name: &str) -> Fixture {
    let path = manifest_path(&format!("tests/fixtures/peers/{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load_model(name: &str) -> Model {
    let path = manifest_path(&format!("tests/fixtures/models/{name}.xml"));
    mjcf::load(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .model
}

fn flat<const N: usize>(rows: &[[f64; N]]) -> Vec<f64> {
    rows.iter().flat_map(|r| r.iter().copied()).collect()
}

/// The dof parent array of the fixture (MuJoCo's -1 = no parent).
fn fixture_parents(s: &Structure) -> Vec<Option<usize>> {
    s.dof_parentid.iter().map(|&p| usize::try_from(p).ok()).collect()
}

/// Row of each CSR element of MuJoCo's pattern.
fn csr_rows(s: &Structure) -> Vec<usize> {
    let mut rows = vec![0; s.M_colind.len()];
    for (i, (&adr, &nnz)) in s.M_rowadr.iter().zip(&s.M_rownnz).enumerate() {
        for r in &mut rows[adr..adr + nnz] {
            *r = i;
        }
    }
    rows
}

/// The worst error of each quantity over a model's states, for the report.
#[derive(Default)]
struct Worst(Vec<(&'static str, f64)>);

impl Worst {
    fn check(&mut self, model: &str, seed: u64, what: &'static str, err: f64, failures: &mut Vec<String>) {
        match self.0.iter_mut().find(|(w, _)| *w == what) {
            Some((_, e)) => *e = e.max(err),
            None => self.0.push((what, err)),
        }
        if !(err <= TOL) {
            failures.push(format!(
                "{model} seed {seed}: {what} relative error {err:.3e} > {TOL:e}"
            ));
        }
    }
}

/// Compares every com-based quantity of one state; returns the failures.
fn compare_state(name: &str, model: &Model, fx: &Fixture, st: &State, worst: &mut Worst) -> Vec<String> {
    let mut fail = Vec::new();
    let d: Data = match forward_smooth(model, &st.qpos, &st.qvel) {
        Ok(d) => d,
        Err(e) => return vec![format!("{name} seed {}: forward_smooth failed: {e}", st.seed)],
    };
    let seed = st.seed;
    let mut check = |what: &'static str, err: f64| worst.check(name, seed, what, err, &mut fail);

    // mj_comPos
    let ours: Vec<f64> = d.subtree_com(model).iter().flat_map(|v| v.iter().copied()).collect();
    check("subtree_com", rel_err(&ours, &flat(&st.subtree_com)));
    check("cinert", rel_err(&flat(&d.cinert(model)), &flat(&st.cinert)));
    let ours: Vec<f64> = d
        .cdof
        .iter()
        .flat_map(|m| m.to_vec6().iter().copied().collect::<Vec<_>>())
        .collect();
    check("cdof", rel_err(&ours, &flat(&st.cdof)));
    // mj_comVel
    let ours: Vec<f64> = d
        .cvel(model)
        .iter()
        .flat_map(|m| m.to_vec6().iter().copied().collect::<Vec<_>>())
        .collect();
    check("cvel", rel_err(&ours, &flat(&st.cvel)));
    let ours: Vec<f64> = d
        .cdof_dot
        .iter()
        .flat_map(|m| m.to_vec6().iter().copied().collect::<Vec<_>>())
        .collect();
    check("cdof_dot", rel_err(&ours, &flat(&st.cdof_dot)));
    // mj_crb: composite inertias and M
    check("crb", rel_err(&flat(&d.crb(model)), &flat(&st.crb)));
    let s = &fx.structure;
    let rows = csr_rows(s);
    let lay = model.mj_layout();
    // M in MuJoCo's CSR order (the patterns are equal: `sparse_layout_matches_mujoco`)
    let ours = lay.legacy_to_csr(&d.qm);
    let reference: Vec<f64> = rows.iter().zip(&s.M_colind).map(|(&i, &j)| st.M_dense[i][j]).collect();
    check("M (CSR)", rel_err(&ours, &reference));
    // ... and the whole dense matrix (entries MuJoCo leaves out of its CSR are zero in M_dense)
    let ours_dense = model.mj_layout().to_dense(&d.qm);
    let ours: Vec<f64> = (0..fx.sizes.nv)
        .flat_map(|i| (0..fx.sizes.nv).map(move |j| (i, j)))
        .map(|(i, j)| ours_dense[(i, j)])
        .collect();
    check("M (dense)", rel_err(&ours, &st.M_dense.concat()));
    // mj_factorM: MuJoCo's CSR qLD against ours in the same order
    check("qLD (CSR)", rel_err(&lay.legacy_to_csr(&d.qld), &st.qLD));
    check("qLDiagInv", rel_err(&d.qld_diag_inv, &st.qLDiagInv));
    // mj_rne
    check("qfrc_bias", rel_err(&d.qfrc_bias, &st.qfrc_bias));
    fail
}

#[test]
fn com_based_quantities_match_mujoco() {
    let mut failures = Vec::new();
    for name in MODELS {
        let fx = load_fixture(name);
        let model = load_model(name);
        assert_eq!(model.nv, fx.sizes.nv, "{name}: nv");
        assert_eq!(model.mj_nbody(), fx.sizes.nbody, "{name}: nbody");
        let mut worst = Worst::default();
        for st in &fx.states {
            failures.extend(compare_state(name, &model, &fx, st, &mut worst));
        }
        let line: Vec<String> = worst.0.iter().map(|(w, e)| format!("{w} {e:.1e}")).collect();
        println!("{name:16} ({} states): {}", fx.states.len(), line.join(", "));
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The dof tree and MuJoCo's legacy layout (`dof_parentid`, `dof_Madr`, `nM`: our whole-tree
/// layout, [`Model::mj_layout_tree`]) are MuJoCo's, and so is the pattern of `M`
/// ([`Model::mj_layout`]: `nC`, `M_rownnz`, `M_rowadr`, `M_colind`, the rows of simple dofs
/// shortened); MuJoCo's `mapM2M` points into the whole-tree layout at the slot of the same row
/// and column that ours points to in the shortened one.
#[test]
fn sparse_layout_matches_mujoco() {
    for name in MODELS {
        let fx = load_fixture(name);
        let model = load_model(name);
        let s = &fx.structure;
        assert_eq!(model.dof_parent, fixture_parents(s), "{name}: dof_parentid");
        let tree = MjLayout::new(&model.dof_parent).unwrap();
        assert_eq!(&tree, model.mj_layout_tree(), "{name}");
        assert_eq!(tree.dof_madr, s.dof_Madr, "{name}: dof_Madr");
        assert_eq!(tree.nm, fx.sizes.nM, "{name}: nM");
        let lay = model.mj_layout();
        assert_eq!(lay.nm, fx.sizes.nC, "{name}: nC");
        assert_eq!(lay.m_rownnz, s.M_rownnz, "{name}: M_rownnz");
        assert_eq!(lay.m_rowadr, s.M_rowadr, "{name}: M_rowadr");
        assert_eq!(lay.m_colind, s.M_colind, "{name}: M_colind");
        let rows = csr_rows(s);
        for c in 0..fx.sizes.nC {
            let (i, ours) = (rows[c], lay.map_m2m[c]);
            assert_eq!(lay.col[ours], s.M_colind[c], "{name}: element {c}");
            let t = ours - lay.dof_madr[i];
            assert_eq!(tree.dof_madr[i] + t, s.mapM2M[c], "{name}: mapM2M of element {c}");
        }
    }
}

/// weld.xml is a model where MuJoCo's CSR drops entries (its payload is a simple free body):
/// check that the comparisons above really cover shortened rows (a fixture change that made the
/// patterns whole would silently weaken them), and that what the shortened rows leave out is
/// zero up to rounding in the whole `M` of Featherstone's CRBA.
#[test]
fn weld_has_simple_dofs_whose_dropped_entries_vanish() {
    let fx = load_fixture("weld");
    assert!(
        fx.sizes.nC < fx.sizes.nM,
        "weld.xml no longer has simple dofs (nC {} nM {})",
        fx.sizes.nC,
        fx.sizes.nM
    );
    let model = load_model("weld");
    let (lay, tree) = (model.mj_layout(), model.mj_layout_tree());
    assert_eq!(lay.nm, fx.sizes.nC);
    for st in &fx.states {
        let h = mbd::dynamics::crba(&model, &st.qpos).unwrap();
        let scale = h.amax();
        let mut dropped = 0;
        for i in 0..model.nv {
            let a = tree.dof_madr[i];
            for &j in &tree.col[a + 1 + lay.dof_depth[i]..a + 1 + tree.dof_depth[i]] {
                dropped += 1;
                assert!(
                    h[(i, j)].abs() <= 1e-15 * scale,
                    "seed {}: M({i}, {j}) = {:e}",
                    st.seed,
                    h[(i, j)]
                );
            }
        }
        assert_eq!(dropped, fx.sizes.nM - fx.sizes.nC);
    }
}
