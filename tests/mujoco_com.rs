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
//! centre of mass is at its origin, as weld.xml's payload): the CSR `qLD` is scattered into the
//! legacy layout through the fixture's own `mapM2M`, with zeros in the slots MuJoCo leaves out,
//! so our factor must hold (numerical) zeros there. Print the worst errors with
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
    // M through MuJoCo's own mapM2M: CSR element c of row i, column colind[c], lives in legacy
    // slot mapM2M[c] of our qM.
    let ours: Vec<f64> = s.mapM2M.iter().map(|&k| d.qm[k]).collect();
    let reference: Vec<f64> = rows.iter().zip(&s.M_colind).map(|(&i, &j)| st.M_dense[i][j]).collect();
    check("M (legacy qM via mapM2M)", rel_err(&ours, &reference));
    // ... and the whole dense matrix (slots MuJoCo leaves out of its CSR are zero in M_dense)
    let ours_dense = model.mj_layout().to_dense(&d.qm);
    let ours: Vec<f64> = (0..fx.sizes.nv)
        .flat_map(|i| (0..fx.sizes.nv).map(move |j| (i, j)))
        .map(|(i, j)| ours_dense[(i, j)])
        .collect();
    check("M (dense)", rel_err(&ours, &st.M_dense.concat()));
    // mj_factorM: MuJoCo's CSR qLD scattered into the legacy layout (zeros where MuJoCo stores
    // nothing) against our legacy qLD
    let mut reference = vec![0.0; fx.sizes.nM];
    for (c, &k) in s.mapM2M.iter().enumerate() {
        reference[k] = st.qLD[c];
    }
    check("qLD (CSR -> legacy via mapM2M)", rel_err(&d.qld, &reference));
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

/// The dof tree and MuJoCo's legacy layout (`dof_parentid`, `dof_Madr`, `nM`) are MuJoCo's; where
/// MuJoCo keeps every row whole (`nC == nM`, no simple dofs) our CSR pattern and `mapM2M` are
/// MuJoCo's too. Where it does not (weld), MuJoCo's pattern is a subset of ours, row by row, and
/// its `mapM2M` points to the same legacy slots ours does.
#[test]
fn sparse_layout_matches_mujoco() {
    for name in MODELS {
        let fx = load_fixture(name);
        let model = load_model(name);
        let s = &fx.structure;
        assert_eq!(model.dof_parent, fixture_parents(s), "{name}: dof_parentid");
        let lay = MjLayout::new(&model.dof_parent).unwrap();
        assert_eq!(lay.dof_madr, s.dof_Madr, "{name}: dof_Madr");
        assert_eq!(lay.nm, fx.sizes.nM, "{name}: nM");
        assert_eq!(s.M_colind.len(), fx.sizes.nC, "{name}: nC");
        if fx.sizes.nC == fx.sizes.nM {
            assert_eq!(lay.m_rownnz, s.M_rownnz, "{name}: M_rownnz");
            assert_eq!(lay.m_rowadr, s.M_rowadr, "{name}: M_rowadr");
            assert_eq!(lay.m_colind, s.M_colind, "{name}: M_colind");
            assert_eq!(lay.map_m2m, s.mapM2M, "{name}: mapM2M");
        } else {
            // every MuJoCo CSR element (i, j) is one of ours, stored in the same legacy slot
            let rows = csr_rows(s);
            for c in 0..fx.sizes.nC {
                let (i, j) = (rows[c], s.M_colind[c]);
                let ours = (lay.m_rowadr[i]..lay.m_rowadr[i] + lay.m_rownnz[i]).find(|&e| lay.m_colind[e] == j);
                let e = ours.unwrap_or_else(|| panic!("{name}: MuJoCo's element ({i}, {j}) is not in our pattern"));
                assert_eq!(lay.map_m2m[e], s.mapM2M[c], "{name}: mapM2M of ({i}, {j})");
            }
            // the rows MuJoCo shortens hold only their diagonal
            for i in 0..fx.sizes.nv {
                if s.M_rownnz[i] != lay.m_rownnz[i] {
                    assert_eq!(s.M_rownnz[i], 1, "{name}: row {i}");
                    assert_eq!(s.M_colind[s.M_rowadr[i]], i, "{name}: row {i}");
                }
            }
        }
    }
}

/// weld.xml is the model where MuJoCo's CSR drops entries: check that the comparison above
/// really exercises the "absent entries are zero in ours" rule (a fixture change that made the
/// patterns equal would silently weaken the test).
#[test]
fn weld_has_simple_dofs_whose_off_diagonal_factor_entries_vanish() {
    let fx = load_fixture("weld");
    assert!(
        fx.sizes.nC < fx.sizes.nM,
        "weld.xml no longer has simple dofs (nC {} nM {})",
        fx.sizes.nC,
        fx.sizes.nM
    );
    let model = load_model("weld");
    let s = &fx.structure;
    let mut covered = vec![false; fx.sizes.nM];
    for &k in &s.mapM2M {
        covered[k] = true;
    }
    for st in &fx.states {
        let d = forward_smooth(&model, &st.qpos, &st.qvel).unwrap();
        let scale = d.qld.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        for (k, _) in covered.iter().enumerate().filter(|(_, c)| !**c) {
            assert!(
                d.qm[k].abs() <= TOL * scale,
                "seed {}: qM slot {k} = {:e}",
                st.seed,
                d.qm[k]
            );
            assert!(
                d.qld[k].abs() <= TOL * scale,
                "seed {}: qLD slot {k} = {:e}",
                st.seed,
                d.qld[k]
            );
        }
    }
}
