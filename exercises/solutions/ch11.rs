//! Worked answers to the exercises of "The constraint model" (statements in `src/ch11.rs`).

use mbd::kinematics::forward_kinematics;
use mbd::model::Model;
use mbd::spatial::Vec3;
use nalgebra::DMatrix;

/// Every edge `S0 +- mu_k S_k` pushes along the normal with its whole force, so `f_n` is the sum
/// of the edges; the pair of direction k pulls along `S_k` with `mu_k` times the difference of
/// its two forces.
pub fn exercise_1(edges: &[f64], friction: &[f64; 5], dim: usize) -> Vec<f64> {
    let mut out = vec![edges.iter().sum()];
    for k in 1..dim {
        out.push(friction[k - 1] * (edges[2 * k - 2] - edges[2 * k - 1]));
    }
    out
}

/// Column k is `(r(q (+) h e_k) - r(q (+) -h e_k)) / 2h`, with the positions from forward
/// kinematics; `integrate` makes the step a rotation for ball and free joints.
pub fn exercise_2(
    model: &Model,
    q: &[f64],
    body1: usize,
    anchor1: &Vec3,
    body2: usize,
    anchor2: &Vec3,
) -> DMatrix<f64> {
    let h = 1e-6;
    let residual = |q: &[f64]| {
        let kin = forward_kinematics(model, q).expect("a valid state");
        kin.point(body1, anchor1) - kin.point(body2, anchor2)
    };
    let mut out = DMatrix::zeros(3, model.nv);
    for k in 0..model.nv {
        let mut e = vec![0.0; model.nv];
        e[k] = h;
        let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
        model.integrate(&mut qp, &e, 1.0).expect("a valid step");
        model.integrate(&mut qm, &e, -1.0).expect("a valid step");
        let d = (residual(&qp) - residual(&qm)) / (2.0 * h);
        for r in 0..3 {
            out[(r, k)] = d[r];
        }
    }
    out
}

/// The lower side's distance is `q - lo` and grows with q (Jacobian `+1`); the upper side's is
/// `hi - q` (Jacobian `-1`). Each side makes a row when its distance is below the margin.
pub fn exercise_3(q: f64, lo: f64, hi: f64, margin: f64) -> Vec<(f64, f64)> {
    [(q - lo, 1.0), (hi - q, -1.0)]
        .into_iter()
        .filter(|(d, _)| *d < margin)
        .collect()
}

/// `w = cos(theta / 2)` up to the quaternion's sign; `|w|` picks the angle in `[0, pi]`.
pub fn exercise_4(q: &[f64; 4]) -> f64 {
    2.0 * q[0].abs().min(1.0).acos()
}
