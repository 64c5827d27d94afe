//! Timing of the three solution methods of Featherstone 8.5 on three closed-loop mechanisms,
//! for the chapter "Closed-loop systems".
//!
//! ```text
//! cargo bench --bench loops                    # every case, about 1.3 s each
//! cargo bench --bench loops -- solve/          # only the solves
//! ```
//!
//! Two groups of cases per mechanism and method:
//! - `solve/METHOD/MECHANISM`: the solve alone ([`solve_kkt`], [`solve_lambda_first`],
//!   [`solve_null_space`]) from precomputed `H`, `tau - C + tau^a`, `K` and `k`;
//! - `forward/METHOD/MECHANISM`: the whole of [`forward_dynamics`], which also forms those
//!   inputs (CRBA, RNEA with the loop joints' active forces, table 8.4).
//!
//! The state closes every loop: `q` is the mechanism's `qpos0` and `qdot = G 1` (all independent
//! velocities 1), `tau = 0`, no stabilization.

use criterion::Criterion;
use mbd::dynamics::crba;
use mbd::loops::{
    bias_minus_active, forward_dynamics, loop_constraints, loop_properties, null_space, solve_kkt, solve_lambda_first,
    solve_null_space, Method,
};
use mbd::model::{mechanisms, Model};
use nalgebra::DVector;
use std::hint::black_box;
use std::time::Duration;

fn mechanisms() -> Vec<(&'static str, Model)> {
    vec![
        ("four_bar", mechanisms::four_bar()),
        ("double_four_bar", mechanisms::double_four_bar()),
        ("planar_3rrr", mechanisms::planar_3rrr()),
    ]
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Kkt => "kkt",
        Method::LambdaFirst => "lambda_first",
        Method::NullSpace => "null_space",
    }
}

fn loops(c: &mut Criterion) {
    for (label, model) in mechanisms() {
        let q = model.qpos0.clone();
        let q = q.as_slice();
        let s0 = loop_constraints(&model, q, &vec![0.0; model.nv], None).expect("valid model");
        let ns = null_space(&s0.kmat, &DVector::zeros(s0.nc())).expect("consistent");
        let qd = &ns.g_null * DVector::from_element(ns.g_null.ncols(), 1.0);
        let qd = qd.as_slice();
        let p = loop_properties(&model, q).expect("valid model");
        eprintln!(
            "[model] {label}: n = {}, n^c = {}, rank K = {}, mobility = {}",
            p.n, p.nc, p.rank, p.mobility
        );
        let sys = loop_constraints(&model, q, qd, None).expect("valid state");
        let h = crba(&model, q).expect("valid state");
        let tau_p = -bias_minus_active(&model, q, qd, None).expect("valid state");
        let rhs = sys.rhs();
        let tau = vec![0.0; model.nv];

        c.bench_function(&format!("solve/kkt/{label}"), |b| {
            b.iter(|| solve_kkt(black_box(&h), &tau_p, &sys.kmat, &rhs).unwrap())
        });
        c.bench_function(&format!("solve/lambda_first/{label}"), |b| {
            b.iter(|| solve_lambda_first(black_box(&h), &model.dof_parent, &tau_p, &sys.kmat, &rhs).unwrap())
        });
        c.bench_function(&format!("solve/null_space/{label}"), |b| {
            b.iter(|| solve_null_space(black_box(&h), &tau_p, &sys.kmat, &rhs).unwrap())
        });
        for method in Method::ALL {
            c.bench_function(&format!("forward/{}/{label}", method_name(method)), |b| {
                b.iter(|| forward_dynamics(&model, black_box(q), qd, &tau, None, method, None).unwrap())
            });
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(50)
        .configure_from_args();
    loops(&mut c);
    c.final_summary();
}
