//! Exercises of the chapter "Sparse factorization of the joint-space inertia"
//! (book/src/sparse.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_sparse`.

use mbd::dynamics::crba;
use mbd::model::{canned, Model};
use mbd::sparse::{llt_fill_in, ltdl, split_ltdl, MjLayout, OpCount};
use nalgebra::{DMatrix, DVector};
use serde::Deserialize;
use std::path::Path;

/// Exercise 1: `H = L^T D L` of a dense symmetric matrix straight from the element formulas of
/// the source note, row by row from the last:
/// `d_i = a_ii - sum_{k>i} l_ki^2 d_k` and
/// `l_ij = (a_ij - sum_{k>i} l_ki d_k l_kj) / d_i` for j < i.
/// No tree, no in-place tricks: every sum runs over all k > i.
fn exercise_1_answer(a: &DMatrix<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let n = a.nrows();
    let mut l = DMatrix::identity(n, n);
    let mut d = DVector::zeros(n);
    for i in (0..n).rev() {
        let mut di = a[(i, i)];
        for k in i + 1..n {
            di -= l[(k, i)] * l[(k, i)] * d[k];
        }
        d[i] = di;
        for j in 0..i {
            let mut s = a[(i, j)];
            for k in i + 1..n {
                s -= l[(k, i)] * d[k] * l[(k, j)];
            }
            l[(i, j)] = s / di;
        }
    }
    (l, d)
}

/// Exercise 2: the fill-in of the root-first factorization `H = L L^T` of a balanced binary tree
/// of `depth` levels (n = 2^depth - 1 one-dof bodies). Eliminating the root first couples every
/// pair of the remaining dofs (the root is coupled to all of them), so the factor's lower
/// triangle is full: `n (n - 1) / 2` entries, of which the pattern of H already holds one per
/// (dof, proper ancestor) pair, `sum_k 2^(k-1) (k - 1) = (depth - 2) 2^depth + 2`.
fn exercise_2_answer(depth: u32) -> usize {
    let n = (1i64 << depth) - 1;
    let pattern = (depth as i64 - 2) * (1i64 << depth) + 2;
    (n * (n - 1) / 2 - pattern) as usize
}

/// Exercise 3: multiply-adds of LTDL for a legged robot: a floating base (a chain of 6 dofs)
/// carrying `legs` legs, each a chain of `leg_dofs` one-dof joints hanging from the base's last
/// dof. A dof at depth d (dofs on its path to the root, itself included) costs d (d - 1) / 2
/// multiply-adds; the base's dofs have depths 1..6, each leg's 7..6 + leg_dofs.
fn exercise_3_answer(legs: usize, leg_dofs: usize) -> usize {
    let cost = |d: usize| d * (d - 1) / 2;
    let base: usize = (1..=6).map(cost).sum();
    let leg: usize = (7..=6 + leg_dofs).map(cost).sum();
    base + legs * leg
}

/// Exercise 4: MuJoCo's legacy sparse layout from `dof_parentid` (-1 = no parent): row i takes
/// depth(i) + 1 slots (its diagonal and its proper ancestors), `dof_Madr` is the running sum,
/// `nM` the total; `mapM2M[c]` is the legacy slot of CSR element c, where CSR rows list the
/// ancestors root first and the diagonal last (the legacy row reversed).
fn exercise_4_answer(dof_parentid: &[i64]) -> (Vec<usize>, usize, Vec<usize>) {
    let n = dof_parentid.len();
    let mut depth = vec![0usize; n];
    for i in 0..n {
        if dof_parentid[i] >= 0 {
            depth[i] = depth[dof_parentid[i] as usize] + 1;
        }
    }
    let mut madr = vec![0; n];
    let mut nm = 0;
    for i in 0..n {
        madr[i] = nm;
        nm += depth[i] + 1;
    }
    let mut map = Vec::with_capacity(nm);
    for i in 0..n {
        // legacy row: madr, madr + 1 (parent), ..., madr + depth (root); CSR walks it backwards
        for s in (0..=depth[i]).rev() {
            map.push(madr[i] + s);
        }
    }
    (madr, nm, map)
}

// ------------------------------------------------------------------------------------------
// The checks.

fn generic_q(model: &Model) -> Vec<f64> {
    let mut q = model.qpos0.as_slice().to_vec();
    let v: Vec<f64> = (0..model.nv).map(|k| 0.5 * (1.1 * k as f64 + 0.3).sin()).collect();
    model.integrate(&mut q, &v, 1.0).unwrap();
    q
}

#[test]
fn exercise_1_dense_ltdl_from_the_element_formulas() {
    // against the library's in-place LTDL (1e-10 relative to max |L| and max |D|), and
    // L^T D L = H (1e-12 relative to max |H|), on a chain, a tree and the floating base
    for model in [
        canned::chain(8, true),
        canned::binary_tree(4),
        canned::floating_base_ball_arms(),
    ] {
        let h = crba(&model, &generic_q(&model)).unwrap();
        let (l, d) = exercise_1_answer(&h);
        let rebuilt = l.transpose() * DMatrix::from_diagonal(&d) * &l;
        assert!(
            (&rebuilt - &h).amax() <= 1e-12 * h.amax(),
            "{}: L^T D L != H",
            model.name
        );
        let mut ld = h.clone();
        ltdl(&mut ld, &model.dof_parent, &mut OpCount::default()).unwrap();
        let (l_ref, d_ref) = split_ltdl(&ld, &model.dof_parent);
        let el = (&l - &l_ref).amax() / l_ref.amax();
        let ed = (&d - &d_ref).amax() / d_ref.amax();
        assert!(
            el <= 1e-10 && ed <= 1e-10,
            "{}: L off by {el:e}, D off by {ed:e}",
            model.name
        );
    }
}

#[test]
fn exercise_2_fill_in_of_a_balanced_tree() {
    // against symbolic elimination (llt_fill_in) for depths 1..=8, and against the nonzeros a
    // numerical root-first Cholesky (nalgebra) creates off the pattern for depth 4
    for depth in 1..=8u32 {
        let model = canned::binary_tree(depth as usize);
        assert_eq!(
            exercise_2_answer(depth),
            llt_fill_in(&model.dof_parent),
            "depth {depth}"
        );
    }
    let model = canned::binary_tree(4);
    let parent = &model.dof_parent;
    let n = model.nv;
    // generic values on the pattern: no accidental zeros
    let mut h = DMatrix::zeros(n, n);
    for i in 0..n {
        let mut j = parent[i];
        while let Some(jj) = j {
            h[(i, jj)] = 0.3 + 0.01 * (i + 2 * jj) as f64;
            h[(jj, i)] = h[(i, jj)];
            j = parent[jj];
        }
    }
    for i in 0..n {
        h[(i, i)] = 1.0 + h.row(i).iter().map(|x| x.abs()).sum::<f64>();
    }
    let l = nalgebra::Cholesky::new(h.clone()).unwrap().l();
    let mut fill = 0;
    for i in 0..n {
        for j in 0..i {
            if h[(i, j)] == 0.0 && l[(i, j)] != 0.0 {
                fill += 1;
            }
        }
    }
    assert_eq!(exercise_2_answer(4), fill);
}

#[test]
fn exercise_3_cost_of_a_legged_robot() {
    // against the multiply-adds LTDL counts on that tree, for several robots; and the
    // quadruped with 6-dof legs (30 dofs) is more than 4 times cheaper than dense
    for (legs, leg_dofs) in [(4usize, 6usize), (2, 6), (6, 3), (4, 1), (0, 0)] {
        let mut parent: Vec<Option<usize>> = (0..6).map(|i: usize| i.checked_sub(1)).collect();
        for _ in 0..legs {
            for k in 0..leg_dofs {
                parent.push(Some(if k == 0 { 5 } else { parent.len() - 1 }));
            }
        }
        let n = parent.len();
        let mut h = DMatrix::from_fn(n, n, |i, j| if i == j { 10.0 * n as f64 } else { 0.1 });
        let mut ops = OpCount::default();
        ltdl(&mut h, &parent, &mut ops).unwrap();
        assert_eq!(
            exercise_3_answer(legs, leg_dofs),
            ops.madd,
            "{legs} legs of {leg_dofs} dofs"
        );
    }
    let dense = (30 * 30 * 30 - 30) / 6;
    assert!(
        4 * exercise_3_answer(4, 6) < dense,
        "the quadruped should be > 4x cheaper than dense"
    );
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Structure {
    dof_parentid: Vec<i64>,
    dof_Madr: Vec<usize>,
    mapM2M: Vec<usize>,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Sizes {
    nM: usize,
    nC: usize,
}

#[derive(Deserialize)]
struct Fixture {
    sizes: Sizes,
    structure: Structure,
}

#[test]
fn exercise_4_mujoco_layout_from_dof_parentid() {
    // against MuJoCo 4.0.0's own dof_Madr, nM and mapM2M (tests/fixtures/peers/*.json, models
    // without simple dofs), and against MjLayout on the canned models
    for name in ["chain_7_spatial", "tree_5", "floating", "panda"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/peers/{name}.json"));
        let fx: Fixture = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(fx.sizes.nC, fx.sizes.nM, "{name} has simple dofs");
        let (madr, nm, map) = exercise_4_answer(&fx.structure.dof_parentid);
        assert_eq!(madr, fx.structure.dof_Madr, "{name}: dof_Madr");
        assert_eq!(nm, fx.sizes.nM, "{name}: nM");
        assert_eq!(map, fx.structure.mapM2M, "{name}: mapM2M");
    }
    for model in [canned::binary_tree(5), canned::floating_base_ball_arms()] {
        let ids: Vec<i64> = model.dof_parent.iter().map(|p| p.map_or(-1, |p| p as i64)).collect();
        let lay = MjLayout::new(&model.dof_parent).unwrap();
        assert_eq!(
            exercise_4_answer(&ids),
            (lay.dof_madr, lay.nm, lay.map_m2m),
            "{}",
            model.name
        );
    }
}
