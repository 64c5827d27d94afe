//! The constrained pipeline keeps its storage (chapter "The constrained pipeline", section
//! "What a call allocates"): on the settled `box_stack`, `box_stack_10` and humanoid of
//! `tests/fixtures/forward`, a second call at the same state of the constraint rows
//! (`make_constraint_into`) and of PGS (`solve_pgs_into`, both cones) allocates nothing (the
//! rows of a model with tendons: only the tendon state their Jacobians read). A global
//! allocator counts the allocations of this test binary (one test, so no other thread
//! allocates meanwhile). The whole `Forward::forward_with` is counted too and printed: what is
//! left comes from the stages that return fresh vectors (the contact list of the collision
//! stage, tendon and actuator forces, the primal solvers).

use mbd::mjcf;
use mbd::model::{Cone, Solver};
use mbd::mujoco::collision::collide_all;
use mbd::mujoco::constraint::{make_constraint_into, Efc, Invweight, RowScratch};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::solver::pgs::{solve_pgs_into, PgsScratch, PgsVariant};
use mbd::mujoco::solver::{cost, JacStorage, Smooth, SolverResult};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the calls that obtain memory.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f`.
fn count(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn a_second_call_allocates_nothing_in_rows_and_pgs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for scene in ["box_stack", "box_stack_10", "humanoid"] {
        let fx: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join(format!("tests/fixtures/forward/{scene}.json"))).unwrap(),
        )
        .unwrap();
        let floats = |k: &str| -> Vec<f64> { fx[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
        let (q, v) = (floats("qpos"), floats("qvel"));
        let base = mjcf::load(root.join(fx["model"].as_str().unwrap())).unwrap().model;
        for cone in [Cone::Pyramidal, Cone::Elliptic] {
            let mut model = base.clone();
            model.opt.cone = cone;
            model.opt.solver = Solver::Pgs;
            let zeros = vec![0.0; model.nv];
            let mut fw = Forward::new(&model).unwrap();
            fw.forward(&q, &v, &zeros).unwrap();
            let whole = count(|| fw.forward_with(&q, &v, &zeros).unwrap());
            // the rows, twice into the same storage
            let inv = Invweight::new(&model).unwrap();
            let (mut efc, mut scratch) = (Efc::empty(model.nv), RowScratch::new(&model));
            let data = &fw.d.data;
            let contacts = collide_all(&model, data).unwrap();
            make_constraint_into(&model, data, &inv, &q, &v, contacts.clone(), &mut efc, &mut scratch).unwrap();
            let first = efc.clone();
            let again = contacts.clone();
            let rows = count(|| {
                make_constraint_into(&model, data, &inv, &q, &v, again, &mut efc, &mut scratch).unwrap();
            });
            assert_eq!(efc, first, "{scene} {cone:?}: the second call makes the same rows");
            // tendon_kinematics returns a fresh TendonState (lengths and moments)
            let tendons = if model.tendons.is_empty() { 0 } else { 2 };
            assert!(
                rows <= tendons,
                "{scene} {cone:?}: make_constraint_into allocated {rows} times"
            );
            // PGS, twice into the same storage
            let d = &fw.d;
            let smooth = Smooth {
                layout: model.mj_layout(),
                qm: &d.data.qm,
                qld: &d.data.qld,
                qld_diag_inv: &d.data.qld_diag_inv,
                qfrc_smooth: &d.qfrc_smooth,
                qacc_smooth: &d.qacc_smooth,
            };
            let cones = cost::cones(&efc).unwrap();
            let storage = JacStorage::mujoco(model.nv);
            let (mut s, mut out) = (PgsScratch::without_cost(), SolverResult::default());
            let opts = &fw.options;
            let solve = |s: &mut PgsScratch, out: &mut SolverResult| {
                let v = PgsVariant::Accelerated;
                solve_pgs_into(&smooth, &efc, &cones, opts, v, storage, s, out).unwrap();
            };
            solve(&mut s, &mut out);
            let first = out.clone();
            let pgs = count(|| solve(&mut s, &mut out));
            assert_eq!(out, first, "{scene} {cone:?}: the second solve gives the same result");
            assert_eq!(out.efc_force, d.efc_force, "{scene} {cone:?}: the pipeline's forces");
            assert_eq!(pgs, 0, "{scene} {cone:?}: solve_pgs_into allocated {pgs} times");
            println!(
                "{scene} {cone:?}: nefc {}, Forward::forward_with allocates {whole} times",
                efc.nefc()
            );
        }
    }
}
