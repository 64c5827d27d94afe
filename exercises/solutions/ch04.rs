//! Worked answers to the exercises of "The composite-rigid-body algorithm" (statements in
//! `src/ch04.rs`).

use mbd::dynamics::rnea;
use mbd::model::Model;
use mbd::spatial::Vec3;
use nalgebra::DMatrix;

/// With gravity off and `qdot = 0` the bias force vanishes, so `ID(q, 0, e_j)` is column j of
/// H. Armature comes out right because `rnea` adds `armature * qdd` to each torque.
pub fn exercise_1(model: &Model, q: &[f64]) -> DMatrix<f64> {
    let mut m0 = model.clone();
    m0.opt.gravity = Vec3::zeros();
    let n = model.nv;
    let mut h = DMatrix::zeros(n, n);
    let zeros = vec![0.0; n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let col = rnea(&m0, q, &zeros, &e, None).expect("valid state");
        h.set_column(j, &col);
    }
    h
}

/// Sum over the links of `m l^2 / 12 + m d^2`, `d` the distance of the link's centre of mass
/// from joint 1's axis.
pub fn exercise_2(q: [f64; 3]) -> f64 {
    let m = [1.0, 1.1, 1.2];
    let l = [0.5, 0.49, 0.48];
    let mut h11 = 0.0;
    let mut joint = (0.0f64, 0.0f64); // (x, z) of the current joint
    let mut angle = 0.0;
    for k in 0..3 {
        angle += q[k];
        let dir = (-angle.sin(), -angle.cos());
        let com = (joint.0 + 0.5 * l[k] * dir.0, joint.1 + 0.5 * l[k] * dir.1);
        h11 += m[k] * l[k] * l[k] / 12.0 + m[k] * (com.0 * com.0 + com.1 * com.1);
        joint = (joint.0 + l[k] * dir.0, joint.1 + l[k] * dir.1);
    }
    h11
}

/// Walk from each body to the base, marking the body with each of its ancestors (and the
/// transposed entry).
pub fn exercise_3(lambda: &[usize]) -> Vec<Vec<bool>> {
    let n = lambda.len() - 1;
    let mut pattern = vec![vec![false; n]; n];
    for i in 1..=n {
        let mut j = i;
        while j != 0 {
            pattern[i - 1][j - 1] = true;
            pattern[j - 1][i - 1] = true;
            j = lambda[j];
        }
    }
    pattern
}

/// Level k holds `2^(k-1)` bodies at depth k, and a body at depth d contributes `2 d - 1`
/// entries (its diagonal and d - 1 ancestor pairs, counted twice):
/// `sum_k 2^(k-1) (2k - 1) = (2 depth - 3) 2^depth + 3`.
pub fn exercise_4(depth: u32) -> usize {
    let d = depth as i64;
    ((2 * d - 3) * (1i64 << d) + 3) as usize
}
