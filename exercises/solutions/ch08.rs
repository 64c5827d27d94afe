//! Worked answers to the exercises of "Solving the constraint equations, sparsity and ladders"
//! (statements in `src/ch08.rs`).

use mbd::model::Model;
use nalgebra::{DMatrix, DVector};

/// The paths by climbing from the higher-numbered end (`lambda(i) < i`), then label propagation
/// until nothing changes: a loop takes the smallest label of any loop it shares a joint with.
pub fn exercise_1(model: &Model) -> Vec<Vec<usize>> {
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

/// `q = gamma(y)` has `theta2(y1)` and `d(y1)` in its middle rows, so `g = Gdot ydot` has
/// `theta2'' y1'^2` and `d'' y1'^2` there and zeros elsewhere, with `D = l1^2 + l2^2 - 2 l1 l2 cos y1`,
/// `theta2'' = l1 l2 (l1^2 - l2^2) sin y1 / D^2` and
/// `d'' = (l1 l2 cos y1 D - l1^2 l2^2 sin^2 y1) / D^(3/2)`.
pub fn exercise_2(l1: f64, l2: f64, y: [f64; 2], yd: [f64; 2]) -> DVector<f64> {
    let (s1, c1) = y[0].sin_cos();
    let dd = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
    let d = dd.sqrt();
    let th2 = l1 * l2 * (l1 * l1 - l2 * l2) * s1 / (dd * dd);
    let d2 = (l1 * l2 * c1 * dd - l1 * l1 * l2 * l2 * s1 * s1) / (d * d * d);
    DVector::from_column_slice(&[0.0, th2 * yd[0] * yd[0], d2 * yd[0] * yd[0], 0.0])
}

/// `K_D^T K_D g_D = K_D^T k` by Cholesky; the independent entries stay zero.
pub fn exercise_3(kmat: &DMatrix<f64>, k: &DVector<f64>, dependent: &[usize]) -> DVector<f64> {
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
