//! The sparse route of the solvers (chapter "Solvers", section "Sparse rows and what an
//! iteration costs") against the dense reference route: on every scene of
//! `tests/fixtures/forward` (both cones) and every case of `tests/fixtures/solver`, the sparse
//! rows give the same `J x` and `J^T f`, the profile Hessian the same `H` as the dense one, the
//! sparse `AR` the same matrix, and Newton, CG and PGS the same iterations, `qacc` and
//! `efc_force`, all to 1e-12 relative. The kernels the primal loop repeats, the row blocks'
//! `J x` and `J^T f` and `M x` by `M`'s nonzeros, equal the plain products bit for bit.

mod common;
use common::fixtures::json_files;
use mbd::mjcf;
use mbd::model::Cone;
use mbd::mujoco::constraint::SparseRows;
use mbd::mujoco::constraint::{Efc, EfcState};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::solver::cost::{self, update};
use mbd::mujoco::solver::newton::{make_hessian, Hessian};
use mbd::mujoco::solver::pgs::{make_dual_storage, solve_pgs_storage, PgsVariant};
use mbd::mujoco::solver::primal::{solve_primal_storage, Direction, RowBlocks};
use mbd::mujoco::solver::problem::Problem;
use mbd::mujoco::solver::{
    mul_j, mul_j_dense, mul_jt, mul_jt_dense, mul_m, JacStorage, MNonzeros, Smooth, SolverOptions,
};
use nalgebra::DMatrix;
use std::path::Path;

const TOL: f64 = 1e-12;

/// `max|a - b| / max(max|b|, floor)`.
fn rel(a: &[f64], b: &[f64], floor: f64) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(floor, |m, x| m.max(x.abs()));
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

/// Every check of the module on one problem; returns the worst relative difference.
fn compare_routes(name: &str, smooth: &Smooth, efc: &Efc) -> f64 {
    let (nv, n) = (smooth.layout.nv, efc.nefc());
    let mut worst = 0.0f64;
    let cones = cost::cones(efc).unwrap();
    // products
    let jd = efc.dense_j();
    let jac = SparseRows::from_dense(&jd);
    assert_eq!(jac.to_dense(), jd, "{name}: sparse rows");
    // the stored rows keep MuJoCo's structural pattern (a contact row: every dof of its two
    // chains, zeros included), a superset of the nonzeros: the same matrix
    let made = &efc.j;
    for i in 0..n {
        let (cols, _) = jac.row(i);
        assert!(
            cols.iter().all(|c| made.row(i).0.contains(c)),
            "{name}: row {i}'s pattern"
        );
    }
    // the products on the stored rows against the dense ones
    let x: Vec<f64> = (0..nv).map(|k| (k as f64 * 0.37 + 0.1).sin()).collect();
    let f: Vec<f64> = (0..n).map(|i| (i as f64 * 0.53 + 0.2).cos()).collect();
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    mul_j_dense(&jd, &x, &mut a);
    mul_j(efc, &x, &mut b);
    worst = worst.max(rel(&a, &b, 1e-300));
    let (mut a, mut b) = (vec![0.0; nv], vec![0.0; nv]);
    mul_jt_dense(&jd, &f, &mut a);
    mul_jt(efc, &f, &mut b);
    worst = worst.max(rel(&a, &b, 1e-300));
    // the primal loop's kernels against the plain products, bit for bit (a skipped term is an
    // exact zero; `==` takes -0 for 0)
    let rows = efc.j.clone();
    let mut blocks = RowBlocks::default();
    blocks.refill(&rows, efc);
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    blocks.mul(&x, &mut a);
    mul_j(efc, &x, &mut b);
    assert_eq!(a, b, "{name}: row blocks' J x");
    let (mut a, mut b) = (vec![0.0; nv], vec![0.0; nv]);
    blocks.mul_t(&f, &mut a);
    mul_jt(efc, &f, &mut b);
    assert_eq!(a, b, "{name}: row blocks' J^T f");
    let mut mnz = MNonzeros::default();
    mnz.refill(smooth.layout, smooth.qm);
    let (mut a, mut b) = (vec![0.0; nv], vec![0.0; nv]);
    mnz.mul(&x, &mut a);
    mul_m(smooth.layout, smooth.qm, &x, &mut b);
    assert_eq!(a, b, "{name}: M x by M's nonzeros");
    // AR
    let ds = make_dual_storage(smooth, efc, JacStorage::Sparse).unwrap();
    let dd = make_dual_storage(smooth, efc, JacStorage::Dense).unwrap();
    worst = worst.max(rel(ds.ar.as_slice(), dd.ar.as_slice(), 1e-300));
    worst = worst.max(rel(&ds.b, &dd.b, 1e-300));
    assert_eq!(ds.ar_rows.to_dense(), ds.ar, "{name}: AR rows");
    // the Hessian at a state with active rows of every kind: x = J a_s - aref
    let mut jar = vec![0.0; n];
    mul_j(efc, smooth.qacc_smooth, &mut jar);
    for (v, r) in jar.iter_mut().zip(&efc.aref) {
        *v -= r;
    }
    let (mut force, mut state) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
    let mut hcone = vec![[0.0; 36]; cones.len()];
    update(efc, &cones, &jar, &mut force, &mut state, Some(&mut hcone));
    let m = smooth.layout.to_dense(smooth.qm);
    let mut hd = DMatrix::zeros(nv, nv);
    make_hessian(&m, &jd, efc, &cones, &state, &hcone, &mut hd);
    let mut hp = Hessian::new(nv);
    hp.assemble(smooth.layout, smooth.qm, &jac, efc, &cones, &state, &hcone);
    let scale = hd.amax();
    for r in 0..nv {
        for c in 0..=r {
            worst = worst.max((hp.get(r, c) - hd[(r, c)]).abs() / scale);
        }
    }
    // the solvers, iteration for iteration
    let floor = smooth.qacc_smooth.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let opts = SolverOptions::default();
    for dir in [Direction::Newton, Direction::CgPolakRibiere, Direction::CgHagerZhang] {
        let s = solve_primal_storage(smooth, efc, &cones, &opts, dir, JacStorage::Sparse).unwrap();
        let d = solve_primal_storage(smooth, efc, &cones, &opts, dir, JacStorage::Dense).unwrap();
        assert_eq!(s.iterations, d.iterations, "{name} {dir:?}: iterations");
        assert_eq!(s.efc_state, d.efc_state, "{name} {dir:?}: states");
        worst = worst.max(rel(&s.qacc, &d.qacc, floor));
        worst = worst.max(rel(&s.efc_force, &d.efc_force, 1e-6));
        worst = worst.max(rel(&s.qfrc_constraint, &d.qfrc_constraint, 1e-6));
    }
    let s = solve_pgs_storage(smooth, efc, &cones, &opts, PgsVariant::Accelerated, JacStorage::Sparse).unwrap();
    let d = solve_pgs_storage(smooth, efc, &cones, &opts, PgsVariant::Accelerated, JacStorage::Dense).unwrap();
    assert_eq!(s.iterations, d.iterations, "{name} PGS: iterations");
    worst = worst.max(rel(&s.qacc, &d.qacc, floor));
    worst = worst.max(rel(&s.efc_force, &d.efc_force, 1e-6));
    assert!(worst < TOL, "{name}: sparse and dense routes differ by {worst:e}");
    worst
}

#[test]
fn sparse_route_equals_dense_route_on_every_forward_scene() {
    let mut worst = (0.0f64, String::new());
    let scenes = json_files("tests/fixtures/forward");
    assert!(scenes.len() >= 16);
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
            let d = &fw.d;
            if d.efc.nefc() == 0 {
                continue;
            }
            let smooth = d.smooth(&m);
            let name = format!("{file} {}", cone.name());
            let e = compare_routes(&name, &smooth, &d.efc);
            if e > worst.0 {
                worst = (e, name);
            }
        }
    }
    println!("forward scenes: sparse vs dense worst {:.1e} ({})", worst.0, worst.1);
}

#[test]
fn sparse_route_equals_dense_route_on_every_solver_fixture() {
    let mut worst = (0.0f64, String::new());
    let cases = json_files("tests/fixtures/solver");
    assert!(cases.len() >= 28);
    for (file, case) in cases {
        let p = Problem::from_fixture_json(&case).unwrap();
        let e = compare_routes(&file, &p.smooth(), &p.efc);
        if e > worst.0 {
            worst = (e, file);
        }
    }
    println!("solver fixtures: sparse vs dense worst {:.1e} ({})", worst.0, worst.1);
}
