//! Closed-loop systems II (Featherstone 8.8-8.13): clusters, loop-closure functions, the sparse
//! matrix method on ladders.

mod common;

use mbd::loops::{body_accelerations, forward_dynamics, sparse_forward_dynamics, Method, Ordering};
use mbd::model::loop_models::ladder;
use mbd::model::Model;

/// A random state near qpos0 (not closed: the comparison holds at any state).
fn random_state(m: &Model, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut s = seed;
    let mut rnd = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let mut q = m.qpos0.as_slice().to_vec();
    let dq: Vec<f64> = (0..m.nv).map(|_| 0.2 * rnd()).collect();
    m.integrate(&mut q, &dq, 1.0);
    let qd: Vec<f64> = (0..m.nv).map(|_| rnd()).collect();
    (q, qd)
}

#[test]
fn sparse_method_matches_the_spanning_tree_method_on_ladders() {
    for n in [2usize, 3, 5, 10, 20, 50] {
        let m = ladder(n, 0.5, 0.3).unwrap();
        let (q, qd) = random_state(&m, n as u64);
        let tau: Vec<f64> = (0..m.nv).map(|i| 0.1 * ((i % 7) as f64 - 3.0)).collect();
        for t_stab in [None, Some(0.05)] {
            let st = forward_dynamics(&m, &q, &qd, &tau, None, Method::LambdaFirst, t_stab).unwrap();
            let a_ref = body_accelerations(&m, &q, &qd, st.qdd.as_slice()).unwrap();
            for ord in [Ordering::Banded, Ordering::Natural] {
                let sp = sparse_forward_dynamics(&m, &q, &qd, &tau, None, t_stab, ord).unwrap();
                let scale = a_ref.iter().map(|a| a.to_vec6().amax()).fold(1.0, f64::max);
                for i in 1..=m.nb {
                    let d = (sp.a[i].to_vec6() - a_ref[i].to_vec6()).amax();
                    assert!(d < 1e-9 * scale, "n = {n}, body {i}, {ord:?}: {d:e} (scale {scale:e})");
                }
            }
        }
    }
}
