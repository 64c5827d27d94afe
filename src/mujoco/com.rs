//! MuJoCo's com-based smooth dynamics: `mj_kinematics`, `mj_comPos`, `mj_comVel`, `mj_crb` and
//! `mj_rne` (MuJoCo's `engine_core_smooth.c`; Todorov 2014 and MuJoCo's Computation chapter). Book chapter:
//! "MuJoCo's com-based quantities".
//!
//! Every spatial quantity of a kinematic tree is expressed in one frame: world-aligned axes with
//! the origin at `c = subtree_com[body_rootid[b]]`, the centre of mass of the whole tree. Since
//! all bodies of a tree share that frame, no transform is needed between parent and child:
//! `cvel_child = cvel_parent + sum cdof qvel`, and composite inertias add without transforms.
//!
//! Arrays are indexed by **Featherstone body** internally (virtual bodies of multi-joint MuJoCo
//! bodies included) and by **MuJoCo body** in [`Data`]'s MuJoCo-named fields.

use super::Data;
use crate::error::Result;
use crate::model::constants::MJ_MINVAL;
use crate::model::{jcalc_pos, mocap_xforms_into, JointType, Model};
use crate::sparse::MjLayout;
use crate::spatial::{quat_to_mat, Force, Mat3, Motion, SpatialInertia, Vec3, Xform};

/// The ten numbers MuJoCo stores for a com-based inertia: `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz,
/// m dx, m dy, m dz, m]` (rotational inertia about c, first moment about c, mass).
pub fn inertia_to_mj10(i: &SpatialInertia) -> [f64; 10] {
    let b = &i.ibar;
    [
        b[(0, 0)],
        b[(1, 1)],
        b[(2, 2)],
        b[(0, 1)],
        b[(0, 2)],
        b[(1, 2)],
        i.h.x,
        i.h.y,
        i.h.z,
        i.m,
    ]
}

/// The inverse of [`inertia_to_mj10`].
pub fn inertia_from_mj10(c: &[f64; 10]) -> SpatialInertia {
    SpatialInertia {
        m: c[9],
        h: Vec3::new(c[6], c[7], c[8]),
        ibar: Mat3::new(c[0], c[3], c[4], c[3], c[1], c[5], c[4], c[5], c[2]),
    }
}

// ANCHOR: com_pos
/// `mj_kinematics` + `mj_comPos`: world poses, `subtree_com`, `cinert` and `cdof`.
///
/// - world poses: `i_X_0 = X_J(q_i) X_tree(i) lambda(i)_X_0`, where a mocap body's `X_tree` is
///   its input pose `d.mocap_pos`, `d.mocap_quat` (the quaternion normalized in a copy, kept in
///   `d.mocap_x`; [`Model::x_tree_placed`]);
/// - subtree_com: `s_b = m_b xipos_b`, accumulated leaves to root, divided by the subtree mass
///   (the body's own `xipos` if the subtree is massless);
/// - cinert: the body inertia about `c` with world axes, `I_c = R I R^T + m (|d|^2 1 - d d^T)`,
///   `d = xipos - c`;
/// - cdof, per joint type (anchor `a`, world axis `u`, `r = c - a`): hinge `[u; u x r]`, slide
///   `[0; u]`, ball `[u_k; u_k x r]` for the body axes `u_k`, free `[0; e_k]` (the axes of the
///   predecessor frame, the world axes in MuJoCo) then as ball. Other joint types use the general
///   rule `cdof = c_X_i S_i` (which reproduces the table above).
#[inline(always)]
pub fn mj_com_pos(model: &Model, d: &mut Data, qpos: &[f64]) -> Result<()> {
    let nb = model.nb;
    // mj_kinematics: i_X_0 for every Featherstone body, the mocap bodies at their inputs
    mocap_xforms_into(&d.mocap_pos, &d.mocap_quat, &mut d.mocap_x);
    for i in 1..=nb {
        let x_j = jcalc_pos(&model.joints[i], &qpos[model.qs(i)], &mut d.jc.s);
        let x_up = x_j.compose(model.x_tree_placed(i, &d.mocap_x));
        d.x_0[i] = x_up.compose(&d.x_0[model.lambda[i]]);
    }
    // world centre of mass of each body and the subtree sums (m_b xipos_b and m_b)
    let (s, mass) = (&mut d.subtree_moment_fb, &mut d.subtree_mass_fb);
    s[0] = Vec3::zeros();
    mass[0] = 0.0;
    for i in 1..=nb {
        let inertia = &model.inertia[i];
        d.xipos_fb[i] = d.x_0[i].r + d.x_0[i].e.tr_mul(&inertia.com());
        s[i] = d.xipos_fb[i] * inertia.m;
        mass[i] = inertia.m;
    }
    for i in (1..=nb).rev() {
        let p = model.lambda[i];
        let (si, mi) = (s[i], mass[i]);
        s[p] += si;
        mass[p] += mi;
    }
    for i in 0..=nb {
        d.subtree_com_fb[i] = if mass[i] < MJ_MINVAL {
            if i == 0 {
                Vec3::zeros()
            } else {
                d.xipos_fb[i]
            }
        } else {
            s[i] / mass[i]
        };
    }
    // the tree each body belongs to, and its reference point c
    for i in 1..=nb {
        d.rootid_fb[i] = if model.lambda[i] == 0 {
            i
        } else {
            d.rootid_fb[model.lambda[i]]
        };
    }
    for i in 1..=nb {
        let c = d.subtree_com_fb[d.rootid_fb[i]];
        // cinert: the body inertia moved to world axes at origin c. The body frame seen from
        // the frame (world axes, origin c) is i_X_c = (E_i, p_i - c), and I_c = i_X_c^T I_i
        // i_X_c (`transform_back`: rotate, then shift by p_i - c; no 6x6 products).
        let i_x_c = Xform {
            e: d.x_0[i].e,
            r: d.x_0[i].r - c,
        };
        d.cinert_fb[i] = model.inertia[i].transform_back(&i_x_c);
        // cdof
        let j = &model.joints[i];
        let rot = d.x_0[i].e.transpose(); // body axes in world coordinates
        let anchor = d.x_0[i].r + rot * j.pos;
        let r = c - anchor;
        let base = model.v_adr[i];
        match j.jtype {
            JointType::Revolute { axis } => {
                let u = rot * axis;
                d.cdof[base] = Motion::new(u, u.cross(&r));
            }
            JointType::Prismatic { axis } => {
                d.cdof[base] = Motion::new(Vec3::zeros(), rot * axis);
            }
            JointType::Spherical => {
                for k in 0..3 {
                    let u: Vec3 = rot.column(k).into();
                    d.cdof[base + k] = Motion::new(u, u.cross(&r));
                }
            }
            JointType::Free => {
                let r = c - d.x_0[i].r; // a free joint's anchor is the body origin
                                        // the translational axes are those of the joint's predecessor frame (the world
                                        // axes in MuJoCo, where X_tree of a free body is the identity)
                let pred = model.x_tree[i].compose(&d.x_0[model.lambda[i]]).e.transpose();
                for k in 0..3 {
                    d.cdof[base + k] = Motion::new(Vec3::zeros(), pred.column(k).into());
                    let u: Vec3 = rot.column(k).into();
                    d.cdof[base + 3 + k] = Motion::new(u, u.cross(&r));
                }
            }
            JointType::Fixed => {}
            JointType::Helical { .. } | JointType::Cylindrical { .. } | JointType::Planar => {
                let q = &qpos[model.qs(i)];
                jcalc_pos(j, q, &mut d.jc.s);
                let to_c = i_x_c.inverse(); // c_X_i
                for k in 0..d.jc.s.n {
                    d.cdof[base + k] = to_c.apply_motion(&d.jc.s.cols[k]);
                }
            }
        }
    }
    Ok(())
}
// ANCHOR_END: com_pos

// ANCHOR: com_vel
/// `mj_comVel`: body velocities `cvel` and the derivatives `cdof_dot` of the motion axes, walking
/// each body's dofs in order with a running velocity: `cdof_dot = cvel x cdof` (with the velocity
/// before this joint's own motion is added), then `cvel += cdof qvel`. Free joints: the
/// translational axes turn only with the parent (`cdof_dot = 0` at a root, as in MuJoCo) and the
/// rotational ones use the velocity after the translation has been added. A planar joint's
/// sliding axes turn with its own rotation, which the general rule would count once too often, so
/// its own angular rate is taken out.
#[inline(always)]
pub fn mj_com_vel(model: &Model, d: &mut Data, qvel: &[f64]) {
    for i in 1..=model.nb {
        let p = model.lambda[i];
        let mut cvel = if p == 0 { Motion::zero() } else { d.cvel_fb[p] };
        let base = model.v_adr[i];
        match model.joints[i].jtype {
            JointType::Free => {
                // the translational axes turn only with the parent: zero at a root (MuJoCo)
                for k in 0..3 {
                    d.cdof_dot[base + k] = cvel.cross_motion(&d.cdof[base + k]);
                }
                for k in 0..3 {
                    cvel += d.cdof[base + k] * qvel[base + k];
                }
                for k in 3..6 {
                    d.cdof_dot[base + k] = cvel.cross_motion(&d.cdof[base + k]);
                }
                for k in 3..6 {
                    cvel += d.cdof[base + k] * qvel[base + k];
                }
            }
            JointType::Planar => {
                let own = Motion::new(d.cdof[base].w * qvel[base], Vec3::zeros());
                d.cdof_dot[base] = cvel.cross_motion(&d.cdof[base]);
                for k in 1..3 {
                    d.cdof_dot[base + k] = (cvel - own).cross_motion(&d.cdof[base + k]);
                }
                for k in 0..3 {
                    cvel += d.cdof[base + k] * qvel[base + k];
                }
            }
            ref jt => {
                let n = jt.nv();
                // every dof of the joint uses the velocity before the joint's own motion
                for k in 0..n {
                    d.cdof_dot[base + k] = cvel.cross_motion(&d.cdof[base + k]);
                }
                for k in 0..n {
                    cvel += d.cdof[base + k] * qvel[base + k];
                }
            }
        }
        d.cvel_fb[i] = cvel;
    }
}
// ANCHOR_END: com_vel

// ANCHOR: crb
/// `mj_crb`: composite inertias `crb` (leaves to root, plain sums since every body of a tree uses
/// the same frame; nothing is added into the world body) and the sparse inertia matrix in the
/// legacy layout: `M(i, j) = cdof_j . (crb_body(i) cdof_i)` for j = i and each ancestor of i
/// stored in row i, plus armature on the diagonal. The row of a simple dof
/// ([`crate::model::simple_bodies`]) is its diagonal alone, the same at every configuration: it
/// is copied from `dof_M0` ([`dof_m0`]), as MuJoCo does.
#[inline(always)]
pub fn mj_crb(model: &Model, layout: &MjLayout, d: &mut Data) {
    composite_inertias(model, d);
    let dof_m0 = dof_m0(model);
    for i in 0..model.nv {
        let adr = layout.dof_madr[i];
        if layout.dof_simplenum[i] > 0 {
            d.qm[adr] = dof_m0[i];
            continue;
        }
        let b = model.dof_body[i];
        let buf: Force = d.crb_fb[b].mul_motion(&d.cdof[i]);
        d.qm[adr] = d.cdof[i].dot(&buf) + model.joints[b].armature;
        // the rest of row i: its ancestors j, nearest first (`layout.col` names them)
        let row = adr + 1..adr + 1 + layout.dof_depth[i];
        for (m, &j) in d.qm[row.clone()].iter_mut().zip(&layout.col[row]) {
            *m = d.cdof[j].dot(&buf);
        }
    }
}

/// The composite inertias of `mj_crb` into `d.crb_fb`: `crb = cinert`, then each body's added
/// into its parent's, leaves to root (nothing into the world body).
#[inline(always)]
fn composite_inertias(model: &Model, d: &mut Data) {
    for i in 0..=model.nb {
        d.crb_fb[i] = d.cinert_fb[i];
    }
    for i in (1..=model.nb).rev() {
        let p = model.lambda[i];
        if p > 0 {
            let ci = d.crb_fb[i];
            d.crb_fb[p] += ci;
        }
    }
}

/// MuJoCo's `dof_M0` (`mj_setM0`, run by `mj_setConst`): the diagonal of `M` at `qpos0`,
/// `cdof_i . (crb_body(i) cdof_i)` plus armature, computed once per model on first use and kept
/// in [`Model::dof_m0_cache`]. [`mj_crb`] copies it into the rows of simple dofs, whose diagonal
/// does not depend on the configuration. If the kinematics at `qpos0` fail (a model edited into
/// an invalid one after it was checked), every entry is NaN, and the factorization of an `M`
/// that holds one reports the dof.
pub fn dof_m0(model: &Model) -> &[f64] {
    model.dof_m0_cache.get_or_init(|| {
        let nan = vec![f64::NAN; model.nv];
        let Ok(mut d) = Data::new(model) else {
            return nan;
        };
        if mj_com_pos(model, &mut d, model.qpos0.as_slice()).is_err() {
            return nan;
        }
        composite_inertias(model, &mut d);
        (0..model.nv)
            .map(|i| {
                let b = model.dof_body[i];
                d.cdof[i].dot(&d.crb_fb[b].mul_motion(&d.cdof[i])) + model.joints[b].armature
            })
            .collect()
    })
}
// ANCHOR_END: crb

// ANCHOR: rne
/// `mj_rne` with `flg_acc = 0` (or with `qacc` when given): `cacc_world = [0; -g]`,
/// `cacc_b = cacc_parent + sum cdof_dot qvel (+ cdof qacc)`, `cfrc_b = I_b cacc_b + cvel_b x*
/// (I_b cvel_b)`, accumulated leaves to root (not into the world), and `bias_i = cdof_i .
/// cfrc_body(i)`. Armature is not included (as in MuJoCo).
#[inline(always)]
pub fn mj_rne(model: &Model, d: &mut Data, qvel: &[f64], qacc: Option<&[f64]>, out: &mut [f64]) {
    let cacc_world = Motion::new(Vec3::zeros(), -model.opt.gravity);
    for i in 1..=model.nb {
        let p = model.lambda[i];
        let mut cacc = if p == 0 { cacc_world } else { d.cacc_fb[p] };
        for dof in model.dofs(i) {
            cacc += d.cdof_dot[dof] * qvel[dof];
            if let Some(a) = qacc {
                cacc += d.cdof[dof] * a[dof];
            }
        }
        d.cacc_fb[i] = cacc;
        let inertia = &d.cinert_fb[i];
        d.cfrc_fb[i] = inertia.mul_motion(&cacc) + d.cvel_fb[i].cross_force(&inertia.mul_motion(&d.cvel_fb[i]));
    }
    for i in (1..=model.nb).rev() {
        let p = model.lambda[i];
        if p > 0 {
            let f = d.cfrc_fb[i];
            d.cfrc_fb[p] += f;
        }
    }
    for i in 0..model.nv {
        out[i] = d.cdof[i].dot(&d.cfrc_fb[model.dof_body[i]]);
    }
}
// ANCHOR_END: rne

/// World pose of a MuJoCo-style body frame from a (w, x, y, z) quaternion and a position.
pub fn pose_xform(pos: &Vec3, quat: &[f64; 4]) -> Xform {
    Xform::from_pose(&quat_to_mat(quat), pos)
}
