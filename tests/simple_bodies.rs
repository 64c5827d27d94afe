//! MuJoCo's simple bodies (`body_simple`, `dof_simplenum`) and the shortened pattern of `M`
//! ([`MjLayout::with_simple`]) against MuJoCo 4.0.0 itself, and the shortened `M` against the
//! dense CRBA.
//!
//! The fixture `tests/fixtures/simple_bodies.json` was written by
//! `/tmp/peers/bin/python tests/fixtures/make_simple_fixtures.py`: for every model of the corpus
//! and for one small model per branch of MuJoCo's rule, MuJoCo's `body_simple`, `dof_simplenum`,
//! `nM`, `nC`, `dof_Madr` and the CSR pattern of `M` (`M_rownnz`, `M_rowadr`, `M_colind`,
//! `mapM2M`). Integers: every comparison is exact.

use mbd::dynamics::crba;
use mbd::mjcf;
use mbd::model::Model;
use mbd::mujoco::forward_smooth;
use mbd::sparse::MjLayout;
use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture() -> Value {
    let path = fixtures().join("simple_bodies.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn ints(v: &Value, key: &str) -> Vec<i64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key}"))
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn usizes(v: &Value, key: &str) -> Vec<usize> {
    ints(v, key).into_iter().map(|x| x as usize).collect()
}

/// Every fixture case with its model: the corpus files, then the rule cases (loaded from their
/// XML).
fn cases() -> Vec<(String, Model, Value)> {
    let fx = fixture();
    assert_eq!(fx["mujoco"], "4.0.0");
    let mut out = Vec::new();
    for (rel, case) in fx["models"].as_object().unwrap() {
        let model = mjcf::load(fixtures().join(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
            .model;
        out.push((rel.clone(), model, case.clone()));
    }
    for (name, case) in fx["rules"].as_object().unwrap() {
        let model = mjcf::load_str(case["xml"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .model;
        out.push((name.clone(), model, case.clone()));
    }
    out
}

/// The flags are MuJoCo's on every corpus model and every branch of the rule; the fixture really
/// holds simple bodies of both levels, bodies demoted by each step of the rule, and the corpus's
/// box stacks.
#[test]
fn flags_equal_mujoco() {
    let cases = cases();
    assert!(cases.len() >= 70, "{} cases", cases.len());
    let (mut level, mut dofs) = ([0usize; 3], 0);
    for (name, model, case) in &cases {
        let ours = model.simple_bodies();
        let body: Vec<i64> = ours.body_simple.iter().map(|&s| s as i64).collect();
        assert_eq!(body, ints(case, "body_simple"), "{name}: body_simple");
        assert_eq!(
            ours.dof_simplenum,
            usizes(case, "dof_simplenum"),
            "{name}: dof_simplenum"
        );
        for &s in &ours.body_simple[1..] {
            level[s as usize] += 1;
        }
        dofs += ours.dof_simplenum.iter().filter(|&&n| n > 0).count();
    }
    assert!(level.iter().all(|&n| n >= 5), "bodies per level {level:?}");
    // the inverse weights' own test of level 2 (`mj_setConst`'s 1 / mass) agrees with the flags
    for (name, model, _) in &cases {
        let parents = mbd::model::mj_body_parentid(model);
        for b in 1..model.mj_nbody() {
            assert_eq!(
                mbd::mujoco::constraint::invweight::is_simple_slider(model, &parents, b),
                model.simple_bodies().body_simple[b] == 2,
                "{name}: body {b}"
            );
        }
    }
    assert!(dofs >= 100, "{dofs} simple dofs");
    let stack = cases.iter().find(|c| c.0 == "models/box_stack_10.xml").unwrap();
    assert_eq!(
        stack.1.simple_bodies().dof_simplenum.iter().filter(|&&n| n > 0).count(),
        60
    );
}

/// `M`'s layout is MuJoCo's shortened pattern (`M_rownnz`, `M_rowadr`, `M_colind`, size `nC`),
/// and the whole-tree layout is MuJoCo's legacy one (`dof_Madr`, `nM`); every CSR element sits in
/// our legacy slot of its own row and column, and in the tree layout it sits where MuJoCo's
/// `mapM2M` puts it.
#[test]
fn pattern_equals_mujoco() {
    for (name, model, case) in cases() {
        let (lay, tree) = (model.mj_layout(), model.mj_layout_tree());
        let parents: Vec<i64> = model.dof_parent.iter().map(|p| p.map_or(-1, |d| d as i64)).collect();
        assert_eq!(parents, ints(&case, "dof_parentid"), "{name}: dof_parentid");
        assert_eq!(lay.nm, case["nC"].as_u64().unwrap() as usize, "{name}: nC");
        assert_eq!(lay.m_rownnz, usizes(&case, "M_rownnz"), "{name}: M_rownnz");
        assert_eq!(lay.m_rowadr, usizes(&case, "M_rowadr"), "{name}: M_rowadr");
        assert_eq!(lay.m_colind, usizes(&case, "M_colind"), "{name}: M_colind");
        assert_eq!(tree.nm, case["nM"].as_u64().unwrap() as usize, "{name}: nM");
        assert_eq!(tree.dof_madr, usizes(&case, "dof_Madr"), "{name}: dof_Madr");
        let map = usizes(&case, "mapM2M");
        for i in 0..model.nv {
            for c in lay.m_rowadr[i]..lay.m_rowadr[i] + lay.m_rownnz[i] {
                let j = lay.m_colind[c];
                // ours: the slot of (i, j) in the packed rows; MuJoCo's: in the whole rows
                let s = lay.map_m2m[c];
                assert!(
                    s >= lay.dof_madr[i] && s <= lay.dof_madr[i] + lay.dof_depth[i],
                    "{name}: ({i}, {j})"
                );
                assert_eq!(lay.col[s], j, "{name}: ({i}, {j})");
                let t = s - lay.dof_madr[i];
                assert_eq!(tree.dof_madr[i] + t, map[c], "{name}: mapM2M of ({i}, {j})");
            }
        }
        // a model whose simple dofs all have rows of one entry anyway keeps the tree's rows
        if case["nC"] == case["nM"] {
            assert_eq!((&lay.dof_madr, &lay.col), (&tree.dof_madr, &tree.col), "{name}");
        }
    }
}

/// [`MjLayout::with_simple`] refuses a dof that is not simple under a simple parent (its row
/// would lose ancestors it couples to) and a flag array of the wrong length.
#[test]
fn with_simple_checks_its_input() {
    let parents = [None, Some(0), Some(1)];
    assert!(MjLayout::with_simple(&parents, &[3, 2, 1]).is_ok());
    assert!(MjLayout::with_simple(&parents, &[0, 1, 1]).is_ok());
    assert!(matches!(
        MjLayout::with_simple(&parents, &[1, 0, 0]),
        Err(mbd::Error::BadPattern { node: 1, .. })
    ));
    assert!(matches!(
        MjLayout::with_simple(&parents, &[1, 1]),
        Err(mbd::Error::BadLength { .. })
    ));
    let all = MjLayout::with_simple(&parents, &[3, 2, 1]).unwrap();
    assert_eq!(all.m_rownnz, vec![1, 1, 1]);
    assert_eq!(all.nm, 3);
}

/// A random model of `n` bodies under the world, each simple by MuJoCo's rule but drawn from
/// every kind the rule admits (free, three slides, slides then a hinge, a ball, one hinge), at
/// a random pose with a random principal inertia; plus one pendulum that is not simple (a hinge
/// anchored off the origin with a child), so that whole rows sit beside shortened ones.
fn random_mjcf(kinds: &[(u8, [f64; 7])]) -> String {
    let mut xml = String::from("<mujoco><worldbody>");
    for (k, &(kind, p)) in kinds.iter().enumerate() {
        let joints = match kind % 5 {
            0 => "<freejoint/>".to_string(),
            1 => "<joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 1 0'/>\
                  <joint type='slide' axis='0 0 1'/>"
                .to_string(),
            2 => "<joint type='slide' axis='0 0 1'/><joint type='slide' axis='0 1 0'/>\
                  <joint type='hinge' axis='1 0 0'/>"
                .to_string(),
            3 => "<joint type='ball'/>".to_string(),
            _ => "<joint type='hinge' axis='0 -1 0'/>".to_string(),
        };
        let n = (p[3] * p[3] + p[4] * p[4] + p[5] * p[5] + p[6] * p[6]).sqrt().max(1e-3);
        xml += &format!(
            "<body pos='{} {} {}' quat='{} {} {} {}'>{joints}\
             <inertial pos='0 0 0' mass='{}' diaginertia='{} {} {}'/></body>",
            k as f64,
            p[1],
            1.0 + p[2],
            p[3] / n + 1.5,
            p[4] / n,
            p[5] / n,
            p[6] / n,
            0.5 + p[0].abs(),
            1.0 + 0.5 * p[1].abs(),
            1.0 + 0.5 * p[2].abs(),
            1.0 + 0.5 * p[3].abs()
        );
    }
    xml += "<body pos='0 0 3'><joint type='hinge' axis='0 1 0' pos='0 0 0.2'/>\
            <geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.05'/>\
            <body pos='0 0 -0.5'><joint type='hinge' axis='1 0 0'/>\
            <geom type='sphere' size='0.1' pos='0 0 -0.2'/></body></body>";
    xml += "</worldbody></mujoco>";
    xml
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// With the rows of simple dofs shortened to their diagonal, `mj_crb`'s `M` equals
    /// Featherstone's dense CRBA to 1e-12 of its largest entry at random states of random
    /// simple bodies: the entries dropped are zero up to rounding, and the factor solves the
    /// dense system to the same accuracy.
    #[test]
    fn shortened_m_equals_the_dense_crba(
        kinds in prop::collection::vec((0u8..5, prop::array::uniform7(-1.0f64..1.0)), 1..6),
        u in prop::collection::vec(-2.0f64..2.0, 40),
    ) {
        let model = mjcf::load_str(&random_mjcf(&kinds)).unwrap().model;
        let simple = model.simple_bodies();
        prop_assert_eq!(simple.body_simple.iter().filter(|&&s| s > 0).count(), kinds.len() + 1);
        let lay = model.mj_layout();
        for (i, &n) in simple.dof_simplenum.iter().enumerate() {
            prop_assert_eq!(lay.m_rownnz[i] == 1, n > 0 || model.dof_parent[i].is_none());
        }
        let mut q = model.qpos0.as_slice().to_vec();
        model.integrate(&mut q, &u[..model.nv], 1.0).unwrap();
        let v = &u[u.len() - model.nv..];
        let d = forward_smooth(&model, &q, v).unwrap();
        let h = crba(&model, &q).unwrap();
        let scale = h.amax();
        let m = lay.to_dense(&d.qm);
        prop_assert!((&m - &h).amax() <= 1e-12 * scale, "M differs by {:e}", (&m - &h).amax() / scale);
        // the factor of the shortened M solves the dense system
        let b: Vec<f64> = (0..model.nv).map(|k| (0.3 * k as f64).sin() + 0.5).collect();
        let mut x = b.clone();
        mbd::sparse::solve_ld(lay, &d.qld, &d.qld_diag_inv, &mut x, &mut mbd::sparse::NoCount).unwrap();
        let r = &h * nalgebra::DVector::from_column_slice(&x) - nalgebra::DVector::from_column_slice(&b);
        prop_assert!(r.amax() <= 1e-11, "residual {:e}", r.amax());
    }
}
