//! Timing of the sparse factorizations of H (chapter "Sparse factorization of the joint-space
//! inertia"): Featherstone's LTDL on dense storage, MuJoCo's `mj_factorI` on the legacy compact
//! layout, `mj_solveLD`, and nalgebra's dense Cholesky, on three of the models the Performance
//! chapter compares with MuJoCo (`benches/dynamics.rs` times `factor_i` and `solve_ld` against
//! MuJoCo's own; this benchmark sets them beside the dense-storage and dense-matrix methods).
//!
//! ```text
//! cargo bench --bench sparse
//! MBD_BENCH_LOOP=solve_ld/box_stack_10:1000 cargo bench --bench sparse   # fixed count, for callgrind
//! ```
//!
//! H is computed once per model by CRBA at a fixed random configuration; every timed call first
//! copies it into the factor's storage (a memcpy of nM or nv^2 numbers, included in the time, as
//! MuJoCo's `mj_factorM` also copies `qM` into `qLD`).

use criterion::Criterion;
use mbd::dynamics::crba;
use mbd::mjcf;
use mbd::sparse::{factor_i_in_place, ltdl, solve_ld, NoCount, PivotPolicy};
use nalgebra::DMatrix;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

const MODELS: [&str; 3] = ["chain_30_spatial", "tree_5", "panda"];

/// The models of the fixed-count mode: those of the table and of the Performance chapter, and a
/// forest of ten free bodies (the constrained solvers' `M^-1` on a contact scene).
const LOOP_MODELS: [&str; 6] = [
    "chain_7_spatial",
    "chain_30_spatial",
    "tree_5",
    "floating",
    "panda",
    "box_stack_10",
];

fn setup(name: &str) -> (mbd::model::Model, DMatrix<f64>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/models/{name}.xml"));
    let model = mjcf::load(&path).expect("model").model;
    let mut q = model.qpos0.clone();
    let v: Vec<f64> = (0..model.nv).map(|k| ((k as f64) * 0.77 + 0.3).sin()).collect();
    model.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
    let h = crba(&model, q.as_slice()).expect("H");
    (model, h)
}

fn benches(c: &mut Criterion) {
    for name in MODELS {
        let (model, h) = setup(name);
        let parent = model.dof_parent.clone();
        let layout = model.mj_layout();
        let qm = layout.from_dense(&h);
        let mut qld = qm.clone();
        let mut diag_inv = vec![0.0; model.nv];
        let mut warnings = Vec::new();
        c.bench_function(&format!("factor_i/{name}"), |b| {
            b.iter(|| {
                qld.copy_from_slice(&qm);
                factor_i_in_place(
                    layout,
                    &mut qld,
                    &mut diag_inv,
                    PivotPolicy::Error,
                    &mut warnings,
                    &mut NoCount,
                )
                .unwrap();
                black_box(&qld);
            })
        });
        let x0: Vec<f64> = (0..model.nv).map(|k| (k as f64).cos()).collect();
        let mut x = x0.clone();
        c.bench_function(&format!("solve_ld/{name}"), |b| {
            b.iter(|| {
                x.copy_from_slice(&x0);
                solve_ld(layout, &qld, &diag_inv, &mut x, &mut NoCount).unwrap();
                black_box(&x);
            })
        });
        let mut work = h.clone();
        c.bench_function(&format!("ltdl/{name}"), |b| {
            b.iter(|| {
                work.copy_from(&h);
                ltdl(&mut work, &parent, &mut NoCount).unwrap();
                black_box(&work);
            })
        });
        c.bench_function(&format!("dense_cholesky/{name}"), |b| {
            b.iter(|| {
                work.copy_from(&h);
                let chol = nalgebra::Cholesky::new_unchecked(black_box(work.clone()));
                black_box(chol);
            })
        });
    }
}

/// `MBD_BENCH_LOOP=algo/model:count` (algo `factor_i` or `solve_ld`, model one of
/// `LOOP_MODELS`): `count` calls and nothing else, for `valgrind --tool=callgrind`
/// (`tools/peers/icount.py --bench sparse`): instructions per call = (Ir at 2n calls - Ir at n
/// calls) / n. Each call starts with the copy that MuJoCo's `mj_factorM` and `mj_solveM` also
/// make.
fn fixed_loop(spec: &str) {
    let usage = "MBD_BENCH_LOOP=algo/model:count";
    let (case, n) = spec.split_once(':').expect(usage);
    let n: usize = n.parse().expect(usage);
    let (algo, name) = case.split_once('/').expect(usage);
    assert!(LOOP_MODELS.contains(&name), "unknown model {name}");
    let (model, h) = setup(name);
    let layout = model.mj_layout();
    let qm = layout.from_dense(&h);
    let mut qld = qm.clone();
    let mut diag_inv = vec![0.0; model.nv];
    let mut warnings = Vec::new();
    let mut factor = |qld: &mut Vec<f64>, diag_inv: &mut Vec<f64>| {
        qld.copy_from_slice(black_box(&qm));
        factor_i_in_place(layout, qld, diag_inv, PivotPolicy::Error, &mut warnings, &mut NoCount).unwrap();
        black_box(&qld);
    };
    factor(&mut qld, &mut diag_inv);
    let x0: Vec<f64> = (0..model.nv).map(|k| (k as f64).cos()).collect();
    let mut x = x0.clone();
    match algo {
        "factor_i" => (0..n).for_each(|_| factor(&mut qld, &mut diag_inv)),
        "solve_ld" => (0..n).for_each(|_| {
            x.copy_from_slice(black_box(&x0));
            solve_ld(layout, &qld, &diag_inv, &mut x, &mut NoCount).unwrap();
            black_box(&x);
        }),
        _ => panic!("{usage}: algo is factor_i or solve_ld"),
    }
}

fn main() {
    if let Ok(spec) = std::env::var("MBD_BENCH_LOOP") {
        fixed_loop(&spec);
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1200))
        .sample_size(30)
        .configure_from_args();
    benches(&mut c);
    c.final_summary();
}
