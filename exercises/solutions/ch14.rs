//! Worked answers to the exercises of "The constrained pipeline" (statements in `src/ch14.rs`).

use mbd::model::{Model, SensorFrame};
use mbd::mujoco::constraint::EfcType;
use mbd::mujoco::forward::ForwardData;
use mbd::mujoco::sensor::{frame_pose, PostConstraint};

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

/// A spatial velocity `[w; v]` at the point `c` gives the velocity of the body point at `p` as
/// `v + w x (p - c)`, and `cacc`, the derivative of `cvel` at the fixed point `c`, moves the
/// same way; the classical acceleration of the moving point adds `w x v_p`. The world's `cacc`
/// is `[0; -g]`, so the sum is already the proper acceleration (`+g` up at rest): nothing more
/// to subtract. `R^T` turns world axes into the site's.
pub fn exercise_4(model: &Model, d: &ForwardData, post: &PostConstraint, site: usize) -> [f64; 3] {
    let (p, r, b) = frame_pose(model, &d.data, SensorFrame::Site(site));
    let offset = p - d.data.subtree_com_fb[d.data.rootid_fb[b]];
    let (a, v) = (&post.cacc[b], &d.data.cvel_fb[b]);
    let v_p = v.v + v.w.cross(&offset);
    let a_p = a.v + a.w.cross(&offset) + v.w.cross(&v_p);
    let local = r.tr_mul(&a_p);
    [local.x, local.y, local.z]
}

/// `cfrc_int` of a body is the wrench its parent applies to it through its joint, the body's
/// and its descendants' `I a + v x* I v - f_ext` summed (RNEA's backward pass); projected on the
/// dof's motion axis it is the generalized force the joint carries (Featherstone's
/// `tau_i = S_i^T f_i`).
pub fn exercise_5(model: &Model, d: &ForwardData, post: &PostConstraint, dof: usize) -> f64 {
    d.data.cdof[dof].dot(&post.cfrc_int[model.dof_body[dof]])
}
