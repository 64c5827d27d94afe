//! MuJoCo's three constraint solvers on MuJoCo's own inputs for the settled box stack
//! (18 dofs, 48 pyramidal rows) and the settled humanoid (elliptic): one full solve each at
//! MuJoCo's default tolerance 1e-8. Short: `cargo bench --bench solver`.

use criterion::{criterion_group, criterion_main, Criterion};
use mbd::figures::solver::{fixture_problem, BOX_STACK_JSON, HUMANOID_JSON};
use mbd::model::Solver;
use mbd::mujoco::solver::{solve, SolverOptions};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("solver");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    for (name, json) in [("box_stack", BOX_STACK_JSON), ("humanoid", HUMANOID_JSON)] {
        let p = fixture_problem(json).unwrap();
        for solver in [Solver::Pgs, Solver::Cg, Solver::Newton] {
            let o = SolverOptions {
                solver,
                ..Default::default()
            };
            g.bench_function(format!("{name}/{solver:?}"), |b| {
                b.iter(|| solve(black_box(&p.smooth()), &p.efc, &o).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
