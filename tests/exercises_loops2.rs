//! Exercises of the chapter "Solving the constraint equations, sparsity and ladders"
//! (book/src/loops2.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_loops2`.

use mbd::loops::{least_squares_bias, loop_clusters, loop_constraints, null_space, Figure83Closure, LoopClosure};
use mbd::model::loop_models::{four_loops, ladder};
use mbd::model::mechanisms::figure_8_3;
use mbd::model::Model;
use nalgebra::{DMatrix, DVector};

/// Exercise 1: the loop clusters from the parent array and the loop joints' bodies. Two loops
/// are coupled when a tree joint is on both paths (the path of a loop joint runs from its
/// predecessor and successor up to their nearest common ancestor, which is not on it). Returns
/// the clusters as sorted lists of loop indices, ordered by their first loop.
fn exercise_1_answer(model: &Model) -> Vec<Vec<usize>> {
    let path = |k: usize| {
        let (mut i, mut j) = (model.loops[k].pred, model.loops[k].succ);
        let mut p = Vec::new();
        while i != j {
            if i > j {
                p.push(i);
                i = model.lambda[i];
            } else {
                p.push(j);
                j = model.lambda[j];
            }
        }
        p
    };
    let nl = model.loops.len();
    let paths: Vec<Vec<usize>> = (0..nl).map(path).collect();
    // label propagation until nothing changes: a loop takes the smallest label of any loop it
    // shares a joint with
    let mut label: Vec<usize> = (0..nl).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for a in 0..nl {
            for b in 0..nl {
                if label[b] < label[a] && paths[a].iter().any(|x| paths[b].contains(x)) {
                    label[a] = label[b];
                    changed = true;
                }
            }
        }
    }
    let mut out: Vec<Vec<usize>> = Vec::new();
    for l in 0..nl {
        let members: Vec<usize> = (0..nl).filter(|&k| label[k] == l).collect();
        if !members.is_empty() {
            out.push(members);
        }
    }
    out
}

/// Exercise 2: `g = Gdot ydot` of the figure 8.3 mechanism.
fn exercise_2_answer(l1: f64, l2: f64, y: [f64; 2], yd: [f64; 2]) -> DVector<f64> {
    let (s1, c1) = y[0].sin_cos();
    let dd = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
    let d = dd.sqrt();
    let th2 = l1 * l2 * (l1 * l1 - l2 * l2) * s1 / (dd * dd);
    let d2 = (l1 * l2 * c1 * dd - l1 * l1 * l2 * l2 * s1 * s1) / (d * d * d);
    DVector::from_column_slice(&[0.0, th2 * yd[0] * yd[0], d2 * yd[0] * yd[0], 0.0])
}

/// Exercise 3: the least-squares `g` on the dependent columns, by the normal equations
/// `K_D^T K_D g_D = K_D^T k`.
fn exercise_3_answer(kmat: &DMatrix<f64>, k: &DVector<f64>, dependent: &[usize]) -> DVector<f64> {
    let kd = DMatrix::from_fn(kmat.nrows(), dependent.len(), |r, c| kmat[(r, dependent[c])]);
    let gd = (kd.transpose() * &kd)
        .cholesky()
        .expect("full column rank")
        .solve(&(kd.transpose() * k));
    let mut g = DVector::zeros(kmat.ncols());
    for (c, &d) in dependent.iter().enumerate() {
        g[d] = gd[c];
    }
    g
}

#[test]
fn exercise_1_clusters_by_hand() {
    for m in [four_loops(), ladder(4, 0.5, 0.3).unwrap()] {
        assert_eq!(exercise_1_answer(&m), loop_clusters(&m).unwrap().loops, "{}", m.name);
    }
}

#[test]
fn exercise_2_second_derivative_of_gamma() {
    let (l1, l2) = (1.0, 0.6);
    let m = figure_8_3(l1, l2).unwrap();
    let cl = Figure83Closure { l1, l2 };
    for (y, yd) in [
        ([1.0, 0.5], [0.7, -0.3]),
        ([2.5, 0.0], [-2.0, 1.0]),
        ([-0.4, 1.0], [1.5, 0.0]),
    ] {
        let q = cl.gamma(&y).unwrap();
        let qd = cl.g_null(&y).unwrap() * DVector::from_column_slice(&yd);
        let s = loop_constraints(&m, q.as_slice(), qd.as_slice(), None).unwrap();
        let g = exercise_2_answer(l1, l2, y, yd);
        assert!((&s.kmat * &g - &s.k).amax() < 1e-10);
    }
}

#[test]
fn exercise_3_least_squares() {
    let m = four_loops();
    let q = m.qpos0.as_slice();
    let s = loop_constraints(&m, q, &vec![0.3; m.nv], None).unwrap();
    let ns = null_space(&s.kmat, &s.k).unwrap();
    // push k off range(K) along a direction K cannot reach
    let svd = s.kmat.clone().svd(true, false);
    let (imin, _) = svd.singular_values.argmin();
    let k_bad = &s.k + svd.u.unwrap().column(imin) * 1e-5;
    let g = exercise_3_answer(&s.kmat, &k_bad, &ns.dependent);
    assert!((s.kmat.transpose() * (&s.kmat * &g - &k_bad)).amax() < 1e-9);
    let reference = least_squares_bias(&s.kmat, &k_bad, &ns.dependent).unwrap();
    assert!((g - reference).amax() < 1e-9);
}
