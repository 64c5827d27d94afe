//! The com-based point Jacobian (MuJoCo's `mj_jac`), its time derivative applied to `qvel`
//! (`mj_jacDot`), and the body quaternions `xquat` of `mj_kinematics`. Book chapter: "The
//! constraint model", section "The point Jacobian".
//!
//! Body indices are Featherstone bodies (a MuJoCo body is the last body of its chain,
//! `model.mj_body_last`); body 0 is the world, whose Jacobian is zero.

use nalgebra::Matrix3xX;

use crate::model::{jcalc_into, JointCalc, JointType, Model};
use crate::mujoco::Data;
use crate::spatial::{mat_to_quat_with, quat_from_axis_angle, quat_mul, quat_normalize, Vec3};

/// World position of the point `local` given in Featherstone body `b`'s frame
/// (`xpos + xmat local`).
pub fn body_point(d: &Data, b: usize, local: &Vec3) -> Vec3 {
    d.x_0[b].r + d.x_0[b].e.tr_mul(local)
}

/// The reference point `c` of body `b`'s com-based quantities: the centre of mass of its tree.
pub fn tree_com(d: &Data, b: usize) -> Vec3 {
    d.subtree_com_fb[d.rootid_fb[b]]
}

// ANCHOR: jac_point
/// MuJoCo's `mj_jac` on com-based quantities (spec 3.2): the translational Jacobian `jp` (3 x nv)
/// of the world point `p` moving with Featherstone body `b`, and the rotational Jacobian `jr`
/// (3 x nv) of the body. For each dof `i` on the path from `b` to the root,
///
/// ```text
/// jp[:, i] = cdof_i.lin + cdof_i.rot x (p - c),     jr[:, i] = cdof_i.rot,
/// ```
///
/// with `c` the centre of mass of the tree; other columns are zero. `jp` and `jr` must be
/// 3 x nv; they are overwritten (no allocation).
pub fn jac_point(model: &Model, d: &Data, b: usize, p: &Vec3, jp: &mut Matrix3xX<f64>, jr: &mut Matrix3xX<f64>) {
    jp.fill(0.0);
    jr.fill(0.0);
    if b == 0 {
        return;
    }
    let offset = p - tree_com(d, b);
    let mut i = b;
    // bounded: lambda(i) < i
    while i != 0 {
        for dof in model.dofs(i) {
            let s = &d.cdof[dof];
            jp.set_column(dof, &(s.v + s.w.cross(&offset)));
            jr.set_column(dof, &s.w);
        }
        i = model.lambda[i];
    }
}
// ANCHOR_END: jac_point

// ANCHOR: jac_point_chain
/// [`jac_point`] on the chain only (MuJoCo's `mj_jacSparse`): writes the columns of the dofs
/// on the path from `b` to the root, appends those dofs to `chain`, and leaves every other
/// column as it was, so a caller that keeps them zero pays for the chain, not for `nv`.
pub fn jac_point_chain(
    model: &Model,
    d: &Data,
    b: usize,
    p: &Vec3,
    jp: &mut Matrix3xX<f64>,
    jr: &mut Matrix3xX<f64>,
    chain: &mut Vec<usize>,
) {
    if b == 0 {
        return;
    }
    let offset = p - tree_com(d, b);
    let mut i = b;
    // bounded: lambda(i) < i
    while i != 0 {
        for dof in model.dofs(i) {
            let s = &d.cdof[dof];
            jp.set_column(dof, &(s.v + s.w.cross(&offset)));
            jr.set_column(dof, &s.w);
            chain.push(dof);
        }
        i = model.lambda[i];
    }
}
// ANCHOR_END: jac_point_chain

// ANCHOR: jac_dif_pair
/// The dofs that move the pair of Featherstone bodies `b1`, `b2` (MuJoCo's merged chain of
/// `mj_jacDifPair`): the union of the two paths to the root, increasing, in `chains`, and for
/// each whether it lies on `b1`'s path (bit 1), on `b2`'s (bit 2) or on both (a common
/// ancestor, 3) in `side`. A parent's dofs come before its children's, so each path read from
/// the root is increasing and the union is one merge. `bodies` is scratch. Allocates nothing
/// once the vectors have held `nv` entries.
pub fn chain_union(
    model: &Model,
    b1: usize,
    b2: usize,
    bodies: &mut Vec<usize>,
    chains: &mut Vec<usize>,
    side: &mut Vec<u8>,
) {
    // the two paths, root first, one after the other in `bodies`
    bodies.clear();
    let mut n1 = 0;
    for (k, b) in [b1, b2].into_iter().enumerate() {
        let mut i = b;
        // bounded: lambda(i) < i
        while i != 0 {
            bodies.push(i);
            i = model.lambda[i];
        }
        if k == 0 {
            n1 = bodies.len();
        }
    }
    bodies[..n1].reverse();
    bodies[n1..].reverse();
    chains.clear();
    side.clear();
    let (p1, p2) = bodies.split_at(n1);
    let (mut i, mut j) = (0, 0);
    // bounded: i + j grows each pass
    while i < p1.len() || j < p2.len() {
        let (body, bit) = if j == p2.len() || (i < p1.len() && p1[i] < p2[j]) {
            i += 1;
            (p1[i - 1], 1)
        } else if i == p1.len() || p2[j] < p1[i] {
            j += 1;
            (p2[j - 1], 2)
        } else {
            i += 1;
            j += 1;
            (p1[i - 1], 3)
        };
        for dof in model.dofs(body) {
            chains.push(dof);
            side.push(bit);
        }
    }
}

/// Column `k` of `J(b1, p) - J(b2, p)`, translational and rotational (MuJoCo's
/// `mj_jacDifPair`), for a dof `k` of [`chain_union`] with its `side`: `off1 = p - c1`,
/// `off2 = p - c2` with `c` the com of each body's tree ([`tree_com`]). A column of one path is
/// that body's column of [`jac_point`] (negated for `b2`); a common ancestor's is the
/// difference of the two, zero when both bodies lie in one tree (the same point, the same com).
#[inline]
pub fn jac_dif_column(d: &Data, k: usize, side: u8, off1: &Vec3, off2: &Vec3) -> (Vec3, Vec3) {
    let s = &d.cdof[k];
    let (lin1, rot1) = if side & 1 != 0 {
        (s.v + s.w.cross(off1), s.w)
    } else {
        (Vec3::zeros(), Vec3::zeros())
    };
    let (lin2, rot2) = if side & 2 != 0 {
        (s.v + s.w.cross(off2), s.w)
    } else {
        (Vec3::zeros(), Vec3::zeros())
    };
    (lin1 - lin2, rot1 - rot2)
}
// ANCHOR_END: jac_dif_pair

// ANCHOR: jac_dot_v
/// MuJoCo's `mj_jacDot` multiplied by `qvel`: `(Jdot_p qvel, Jdot_r qvel)` for the world point
/// `p` moving with Featherstone body `b`. `d` must hold `cvel` and `cdof_dot` of `qvel`
/// (`mj_comVel`). Column `i` of the derivative is
///
/// ```text
/// Jdot_r[:, i] = cdof_dot_i.rot,
/// Jdot_p[:, i] = cdof_dot_i.lin + cdof_dot_i.rot x (p - c) + cdof_i.rot x pdot,
/// ```
///
/// with `pdot` the velocity of the point (from `cvel` of `b`). The axes of a ball joint and the
/// rotational axes of a free joint turn with the body itself, so for them MuJoCo replaces
/// `cdof_dot` by `cvel_body x cdof` (the body's own velocity, not its parent's).
pub fn jac_dot_v(model: &Model, d: &Data, b: usize, p: &Vec3, qvel: &[f64]) -> (Vec3, Vec3) {
    let (mut lin, mut rot) = (Vec3::zeros(), Vec3::zeros());
    if b == 0 {
        return (lin, rot);
    }
    let offset = p - tree_com(d, b);
    let cvel = d.cvel_fb[b];
    let pvel = cvel.v + cvel.w.cross(&offset);
    let mut i = b;
    while i != 0 {
        let jtype = &model.joints[i].jtype;
        // the MuJoCo body of this joint: its velocity is that of the last body of its chain
        let own = d.cvel_fb[model.mj_body_last[model.mj_body[i]]];
        for (k, dof) in model.dofs(i).enumerate() {
            let turns_with_body = matches!(jtype, JointType::Spherical) || (matches!(jtype, JointType::Free) && k >= 3);
            let cdd = if turns_with_body {
                own.cross_motion(&d.cdof[dof])
            } else {
                d.cdof_dot[dof]
            };
            let v = qvel[dof];
            rot += cdd.w * v;
            lin += (cdd.v + cdd.w.cross(&offset) + d.cdof[dof].w.cross(&pvel)) * v;
        }
        i = model.lambda[i];
    }
    (lin, rot)
}
// ANCHOR_END: jac_dot_v

// ANCHOR: xquat
/// The world orientation of every Featherstone body as MuJoCo's `mj_kinematics` composes it:
/// `xquat_i = xquat_parent (x) quat(X_tree) (x) q_joint`, normalized (a mocap body's
/// `quat(X_tree)` is its normalized input `mocap_quat`, see [`xquat_into`]), with `q_joint` the
/// axis-angle quaternion `(cos q/2, sin q/2 u)` of a hinge, the normalized `qpos` quaternion of
/// a ball or free joint (a free body takes it as its orientation) and the identity for a slide.
///
/// The sign of a quaternion matters where a product of two of them is read off (the weld's
/// orientation error), so the composition follows MuJoCo's rather than converting the rotation
/// matrices back (which would fix `w >= 0`). The constant rotation of `X_tree` is converted with
/// `w >= 0`, MuJoCo's `body_quat` as written by its compiler for the usual `quat`, `euler` and
/// `axisangle` inputs. The mocap bodies are at their default poses here.
pub fn xquat(model: &Model, qpos: &[f64]) -> Vec<[f64; 4]> {
    let mut out = Vec::new();
    xquat_into(model, qpos, &model.mocap_quat0, &mut out);
    out
}

/// [`xquat`] into `out` (resized to `nb + 1`; no allocation once it has that capacity), with the
/// mocap bodies turned to `mocap_quat` (one per mocap body, normalized here in a copy as
/// `mj_kinematics` does; MuJoCo's `mocap_quat`).
pub fn xquat_into(model: &Model, qpos: &[f64], mocap_quat: &[[f64; 4]], out: &mut Vec<[f64; 4]>) {
    out.clear();
    out.resize(model.nb + 1, [1.0, 0.0, 0.0, 0.0]);
    let mut jc = JointCalc::default();
    for i in 1..=model.nb {
        let j = &model.joints[i];
        let a = model.q_adr[i];
        let tree = match model.body_mocapid[i] {
            Some(k) => {
                let mut m = mocap_quat[k];
                quat_normalize(&mut m);
                m
            }
            None => mat_to_quat_with(&model.x_tree[i].e.transpose()),
        };
        let mut q = quat_mul(&out[model.lambda[i]], &tree);
        q = match j.jtype {
            JointType::Revolute { axis } => quat_mul(&q, &quat_from_axis_angle(&axis, qpos[a])),
            JointType::Prismatic { .. } | JointType::Fixed => q,
            JointType::Spherical => {
                let mut b = [qpos[a], qpos[a + 1], qpos[a + 2], qpos[a + 3]];
                quat_normalize(&mut b);
                quat_mul(&q, &b)
            }
            JointType::Free => {
                let mut b = [qpos[a + 3], qpos[a + 4], qpos[a + 5], qpos[a + 6]];
                quat_normalize(&mut b);
                if model.lambda[i] == 0 && tree == [1.0, 0.0, 0.0, 0.0] {
                    b
                } else {
                    quat_mul(&q, &b)
                }
            }
            _ => {
                let zeros = [0.0; 6];
                jcalc_into(j, &qpos[model.qs(i)], &zeros[..j.jtype.nv()], &mut jc);
                quat_mul(&q, &mat_to_quat_with(&jc.x_j.e.transpose()))
            }
        };
        quat_normalize(&mut q);
        out[i] = q;
    }
}
// ANCHOR_END: xquat

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::point_jacobian;
    use crate::model::canned;
    use crate::mujoco::forward_smooth;
    use crate::spatial::quat_to_mat;
    use approx::assert_relative_eq;

    #[test]
    fn com_based_point_jacobian_equals_the_body_frame_one_and_xquat_the_rotation() {
        let model = canned::floating_base_ball_arms();
        let mut q = model.qpos0.clone();
        let v: Vec<f64> = (0..model.nv).map(|k| 0.3 * (k as f64 * 1.3 + 0.2).sin()).collect();
        model.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
        let d = forward_smooth(&model, q.as_slice(), &v).unwrap();
        let quats = xquat(&model, q.as_slice());
        let mut jp = Matrix3xX::zeros(model.nv);
        let mut jr = Matrix3xX::zeros(model.nv);
        for b in 1..=model.nb {
            let local = Vec3::new(0.1, -0.2, 0.05);
            let p = body_point(&d, b, &local);
            jac_point(&model, &d, b, &p, &mut jp, &mut jr);
            let reference = point_jacobian(&model, q.as_slice(), b, &local).unwrap();
            assert_relative_eq!(jp.clone().resize(3, model.nv, 0.0), reference, epsilon = 1e-12);
            assert_relative_eq!(quat_to_mat(&quats[b]), d.x_0[b].e.transpose(), epsilon = 1e-12);
        }
    }
}
