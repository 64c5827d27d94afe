//! The ladder of Featherstone 8.13: the sparse matrix method (banded block `L D L^T` of (8.64))
//! against the spanning-tree method, for the chapter "Solving the constraint equations, sparsity
//! and ladders".
//!
//! ```text
//! cargo bench --bench ladder -- --warm-up-time 0.5 --measurement-time 2
//! ```
//!
//! - `sparse/N`: assemble (8.64), factor and solve on an N-rung ladder (N = 10 .. 10,000);
//! - `tree/N`: `forward_dynamics` with method 2 (CRBA, RNEA, table 8.4, `K H^-1 K^T`) on an
//!   N-rung ladder (N = 10 .. 200).
//!
//! The state is the fixed, unclosed state of `mbd::model::loop_models::sample_state` (both methods
//! solve the same equations at any state); the slopes are printed at the end.

use criterion::Criterion;
use mbd::loops::{forward_dynamics, Method, Ordering, SparseMethod};
use mbd::model::loop_models::ladder;
use mbd::model::loop_models::sample_state as ladder_state;
use mbd::sparse::OpCount;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Least-squares slope of `log y` against `log x`.
fn log_slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0.ln()).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1.ln()).sum::<f64>() / n;
    let num: f64 = points.iter().map(|p| (p.0.ln() - mx) * (p.1.ln() - my)).sum();
    let den: f64 = points.iter().map(|p| (p.0.ln() - mx).powi(2)).sum();
    num / den
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(10)
        .configure_from_args();
    let mut sparse_pts = Vec::new();
    for n in [10usize, 100, 1000, 10000] {
        let m = ladder(n, 0.5, 0.3).expect("valid ladder");
        let (q, qd) = ladder_state(&m);
        let tau = vec![0.0; m.nv];
        let mut sm = SparseMethod::new(&m, Ordering::Banded).expect("valid ladder");
        c.bench_function(&format!("sparse/{n}"), |b| {
            b.iter(|| {
                sm.assemble(&m, black_box(&q), &qd, &tau, None, None);
                sm.solve_in_place(&mut OpCount::default())
                    .expect("properly constrained");
                black_box(&sm.rhs);
            })
        });
        // a plain mean for the slope printed below (criterion's estimate is in its report)
        let reps = (20_000 / n).max(3);
        let t0 = Instant::now();
        for _ in 0..reps {
            sm.assemble(&m, &q, &qd, &tau, None, None);
            sm.solve_in_place(&mut OpCount::default())
                .expect("properly constrained");
        }
        sparse_pts.push((n as f64, t0.elapsed().as_secs_f64() / reps as f64));
    }
    let mut tree_pts = Vec::new();
    for n in [10usize, 20, 50, 100, 200] {
        let m = ladder(n, 0.5, 0.3).expect("valid ladder");
        let (q, qd) = ladder_state(&m);
        let tau = vec![0.0; m.nv];
        c.bench_function(&format!("tree/{n}"), |b| {
            b.iter(|| forward_dynamics(&m, black_box(&q), &qd, &tau, None, Method::LambdaFirst, None).unwrap())
        });
        let reps = (2000 / (n * n / 10).max(1)).max(2);
        let t0 = Instant::now();
        for _ in 0..reps {
            black_box(forward_dynamics(&m, &q, &qd, &tau, None, Method::LambdaFirst, None).unwrap());
        }
        tree_pts.push((n as f64, t0.elapsed().as_secs_f64() / reps as f64));
    }
    c.final_summary();
    eprintln!(
        "[slope] sparse method, N = 100..10000: {:.2}",
        log_slope(&sparse_pts[1..])
    );
    eprintln!("[slope] spanning tree, N = 20..200: {:.2}", log_slope(&tree_pts[1..]));
}
