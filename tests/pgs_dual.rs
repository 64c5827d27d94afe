//! The dual matrix of PGS (chapter "Solvers", section "PGS"): `AR = Y Y^T + R` made by blocks of
//! rows with the same columns (`make_ar_blocks`, what the pipeline's PGS runs) equals the plain
//! `make_ar` bit for bit, pattern, values and `1 / AR_ii`, on both storages, on every scene of
//! `tests/fixtures/forward` (both cones), every case of `tests/fixtures/solver`, and random rows
//! of every kind with random sparsity (empty rows included); and the structural rows of `Y`
//! hold the columns of `J` and their ancestors.

mod common;
use common::fixtures::json_files;
use mbd::mjcf;
use mbd::model::{canned, Cone};
use mbd::mujoco::constraint::{Efc, SparseRows};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::solver::pgs::{make_ar, make_ar_blocks, make_y, PgsScratch};
use mbd::mujoco::solver::problem::{Problem, RowCounts, SplitMix};
use mbd::mujoco::solver::{JacStorage, Smooth};
use std::path::Path;

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// Both kernels on both storages; returns the number of stored entries of `AR`.
fn check(name: &str, smooth: &Smooth, efc: &Efc) -> usize {
    let mut plain = PgsScratch::default();
    let mut fast = PgsScratch::default();
    make_y(smooth, &efc.j, &mut plain).unwrap();
    make_y(smooth, &efc.j, &mut fast).unwrap();
    // Y's rows: J's columns and their ancestors (the tree's), increasing
    let l = smooth.layout;
    for i in 0..efc.nefc() {
        let ycols = plain.y.row(i).0;
        assert!(ycols.windows(2).all(|w| w[0] < w[1]), "{name}: row {i} of Y");
        for &c in efc.j.row(i).0 {
            let mut a = Some(c);
            while let Some(k) = a {
                assert!(ycols.contains(&k), "{name}: row {i} of Y lacks dof {k}");
                a = l.dof_parentid[k];
            }
        }
    }
    for storage in [JacStorage::Dense, JacStorage::Sparse] {
        make_ar(&efc.r, storage, &mut plain);
        make_ar_blocks(&efc.r, storage, &mut fast);
        assert_eq!(bits(&plain.arinv), bits(&fast.arinv), "{name} {storage:?}: 1 / AR_ii");
        if storage == JacStorage::Dense {
            assert_eq!(bits(&plain.ar), bits(&fast.ar), "{name}: dense AR");
        } else {
            let (a, b) = (&plain.ar_rows, &fast.ar_rows);
            assert_eq!(a.rowadr, b.rowadr, "{name}: AR's rows");
            assert_eq!(a.colind, b.colind, "{name}: AR's columns");
            assert_eq!(bits(&a.values), bits(&b.values), "{name}: AR's values");
        }
    }
    plain.ar_rows.values.len()
}

#[test]
fn ar_by_blocks_equals_plain_ar_on_every_forward_scene() {
    let scenes = json_files("tests/fixtures/forward");
    assert!(scenes.len() >= 16);
    let mut checked = 0;
    for (file, fx) in scenes {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let model = mjcf::load(root.join(fx["model"].as_str().unwrap())).unwrap().model;
        let floats = |k: &str| -> Vec<f64> { fx[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
        let (q, v) = (floats("qpos"), floats("qvel"));
        for cone in [Cone::Pyramidal, Cone::Elliptic] {
            let mut m = model.clone();
            m.opt.cone = cone;
            let mut fw = Forward::new(&m).unwrap();
            fw.forward(&q, &v, &vec![0.0; m.nv]).unwrap();
            if fw.d.efc.nefc() == 0 {
                continue;
            }
            check(&format!("{file} {}", cone.name()), &fw.d.smooth(&m), &fw.d.efc);
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} scenes with rows");
}

#[test]
fn ar_by_blocks_equals_plain_ar_on_every_solver_fixture() {
    for (file, case) in json_files("tests/fixtures/solver") {
        let p = Problem::from_fixture_json(&case).unwrap();
        check(&file, &p.smooth(), &p.efc);
    }
}

/// Random rows of every kind, then entries zeroed at random (whole rows now and then), so that
/// rows of one contact have different columns, blocks are short and some rows are empty; a
/// contact's rows are also given one shared random pattern, the blocks the pipeline makes.
#[test]
fn ar_by_blocks_equals_plain_ar_on_random_sparse_rows() {
    let models = [
        canned::floating_base_ball_arms(),
        canned::binary_tree(3),
        canned::chain(6, true),
    ];
    let mut rng = SplitMix(7);
    for seed in 0..24u64 {
        let model = &models[seed as usize % models.len()];
        let counts = RowCounts {
            ne: 2,
            nf: 1,
            nl: 2,
            frictionless: vec![1],
            pyramidal: vec![3, 4],
            elliptic: vec![3, 6],
        };
        let mut p = Problem::random(model, &counts, seed).unwrap();
        let mut j = p.efc.dense_j();
        let (n, nv) = (j.nrows(), j.ncols());
        let shared = seed % 2 == 0;
        let mut keep = vec![true; nv];
        for i in 0..n {
            if !shared || i % 3 == 0 {
                for k in keep.iter_mut() {
                    *k = rng.uniform(0.0, 1.0) < 0.5;
                }
            }
            let empty = rng.uniform(0.0, 1.0) < 0.1;
            for k in 0..nv {
                if empty || !keep[k] {
                    j[(i, k)] = 0.0;
                }
            }
        }
        p.efc.j = SparseRows::from_dense(&j);
        let nnz = check(&format!("random {seed}"), &p.smooth(), &p.efc);
        assert!(nnz >= n);
    }
}
