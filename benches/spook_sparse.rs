//! Time of one SPOOK step with the sparse direct solve (chapter "Sparse direct solves for
//! SPOOK"): chains of 10, 100, 1,000, 10,000 and 100,000 bodies hinged end to end, and trees of
//! up to 10,000 bodies, with the stepper's default minimum-degree ordering (built on the first
//! step, outside the timing). The chapter reads the slope on chains from 1,000 bodies up; its
//! targets are a slope within 0.1 of 1 and a 100,000-body step under 0.5 s on a 2-core machine.
//! The small chains also run the dense Schur solve, the default below
//! [`mbd::spook::SPARSE_THRESHOLD`] bodies, to show where the sparse solve takes over.
//!
//! ```text
//! cargo bench --bench spook_sparse                     # every case
//! cargo bench --bench spook_sparse -- step_sparse/chain  # only the chains
//! ```

use criterion::Criterion;
use mbd::spook::{graph_scene, BodyGraph, SpookSolver, StepSettings, Stepper};
use std::hint::black_box;
use std::time::Duration;

fn case(c: &mut Criterion, name: &str, kind: BodyGraph, n: usize, solver: SpookSolver) {
    let h = 0.01;
    let mut sys = graph_scene(kind, n, 1, 1e-8, 2.0 * h);
    // no gravity: the bench runs thousands of steps, and a long chain loaded by gravity at this
    // step is beyond SPOOK's stability limit (the SPOOK chapter's heavy chain); the solve's
    // cost does not depend on the load
    sys.gravity = mbd::spatial::Vec3::zeros();
    let settings = StepSettings {
        solver,
        ..Default::default()
    };
    let mut st = Stepper::new(&sys, h, settings).unwrap();
    st.step(&mut sys).unwrap(); // ordering and symbolic factorization
    c.bench_function(&format!("{name}/{}_{n}", kind.name()), |b| {
        b.iter(|| st.step(black_box(&mut sys)).unwrap())
    });
}

fn spook_sparse(c: &mut Criterion) {
    for n in [10usize, 100, 1000, 10000, 100000] {
        case(c, "step_sparse", BodyGraph::Chain, n, SpookSolver::Sparse);
    }
    for n in [100usize, 1000, 10000] {
        case(c, "step_sparse", BodyGraph::Tree, n, SpookSolver::Sparse);
    }
    for n in [2usize, 4, 8, 16, 32] {
        case(c, "step_sparse", BodyGraph::Chain, n, SpookSolver::Sparse);
        case(c, "step_schur", BodyGraph::Chain, n, SpookSolver::Schur);
    }
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(10)
        .configure_from_args();
    spook_sparse(&mut c);
    c.final_summary();
}
