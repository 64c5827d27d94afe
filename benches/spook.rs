//! Time of one SPOOK step against the number of bodies, for the chapter "SPOOK: a variational
//! stepper": the dense Schur-complement solve (`S = G M^-1 G^T + Sigma`, Cholesky) and the
//! dense LU of the whole block system, on hanging chains of `N` links with ball joints. Both are
//! dense, so the time grows like `N^3`; the sparse issue replaces them with a block
//! factorization that is linear in `N` for chains.
//!
//! ```text
//! cargo bench --bench spook                    # every case, about 1.3 s each
//! cargo bench --bench spook -- step/schur      # only the Schur solves
//! ```

use criterion::Criterion;
use mbd::spook::{scenes, SpookSolver, StepSettings, Stepper};
use std::hint::black_box;
use std::time::Duration;

fn spook(c: &mut Criterion) {
    let h = 1.0 / 60.0;
    for n in [5usize, 10, 20, 40, 80] {
        for (name, solver) in [("schur", SpookSolver::Schur), ("direct", SpookSolver::Direct)] {
            if solver == SpookSolver::Direct && n > 40 {
                continue;
            }
            let sys0 = scenes::heavy_chain(n, 1.0, 1e-8, 2.0 * h);
            let settings = StepSettings {
                solver,
                ..Default::default()
            };
            let mut st = Stepper::new(&sys0, h, settings).unwrap();
            let mut sys = sys0.clone();
            c.bench_function(&format!("step/{name}/chain_{n}"), |b| {
                b.iter(|| {
                    st.step(black_box(&mut sys)).unwrap();
                })
            });
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(20)
        .configure_from_args();
    spook(&mut c);
    c.final_summary();
}
