//! Worked answers to the exercises of "The constrained pipeline" (statements in `src/ch14.rs`).

use mbd::model::Model;
use mbd::mujoco::constraint::EfcType;
use mbd::mujoco::forward::ForwardData;

/// The forward pass solved `M qacc = qfrc_applied + qfrc_passive - qfrc_bias + J^T f`; moving
/// every term but the applied force to the left returns it.
pub fn exercise_1(model: &Model, d: &ForwardData) -> Vec<f64> {
    let m = model.mj_layout().to_dense(&d.data.qm);
    let (nv, j) = (model.nv, d.efc.dense_j());
    (0..nv)
        .map(|r| {
            let ma: f64 = (0..nv).map(|c| m[(r, c)] * d.qacc[c]).sum();
            let jtf: f64 = (0..d.efc.nefc()).map(|i| j[(i, r)] * d.efc_force[i]).sum();
            ma + d.data.qfrc_bias[r] - d.qfrc_passive[r] - jtf
        })
        .collect()
}

/// Elliptic rows hold (normal, tangent 1, tangent 2, ...) directly. Pyramidal edge pairs
/// `(f_2j, f_2j+1)` along `S0 +- mu_j S_j` give the normal `sum f` and the tangential
/// `mu_j (f_2j - f_2j+1)`. The frame's rows are the normal and the tangents, so the world
/// force is `frame^T (f_n, f_1, f_2)`.
pub fn exercise_2(d: &ForwardData, k: usize) -> [f64; 3] {
    let c = &d.efc.contacts[k];
    let Some(a) = c.efc_address else {
        return [0.0; 3];
    };
    let f = &d.efc_force[a..];
    let local = match d.efc.efc_type[a] {
        EfcType::ContactPyramidal => {
            let mut l = [f[..2 * (c.dim - 1)].iter().sum::<f64>(), 0.0, 0.0];
            for j in 0..(c.dim - 1).min(2) {
                l[j + 1] = c.friction[j] * (f[2 * j] - f[2 * j + 1]);
            }
            l
        }
        EfcType::ContactFrictionless => [f[0], 0.0, 0.0],
        _ => [f[0], f[1], f[2]],
    };
    std::array::from_fn(|x| (0..3).map(|r| c.frame[(r, x)] * local[r]).sum())
}

/// Elliptic rows of a contact hold the frame force directly: `(f_n, f_1, f_2)` are its first
/// three.
pub fn exercise_3(d: &ForwardData) -> f64 {
    let mut worst = f64::NEG_INFINITY;
    for c in d.contacts() {
        let Some(a) = c.efc_address else { continue };
        if c.dim < 3 {
            continue;
        }
        let f = &d.efc_force[a..a + 3];
        let t = (f[1] * f[1] + f[2] * f[2]).sqrt();
        worst = worst.max(t - c.friction[0] * f[0]);
    }
    worst
}
