//! MuJoCo's "simple bodies" (`body_simple`, `dof_simplenum`; MuJoCo's compiler,
//! `mjCModel::CopyObjects` and `mjCModel::FinalizeSimple` in `user_model.cc`). Book chapter
//! "Sparse factorization of the joint-space inertia", section "Simple bodies".
//!
//! A body is simple when its block of the joint-space inertia `M` is diagonal and couples to no
//! other dof, whatever the configuration: its dofs turn about and slide along the axes of its own
//! principal frame, through its centre of mass, and nothing hangs from it. MuJoCo then stores
//! only the diagonal of those rows (`M_rownnz = 1`), sets them to constants, and skips them in
//! the factorization and the solves. The rule, in MuJoCo's order (body `b` a MuJoCo body; the
//! world is body 0):
//!
//! 1. start simple if the inertial frame is the body frame (`body_ipos = 0`, `body_iquat = ±1`
//!    to `1e-6`, MuJoCo's `mjSAMEFRAME_BODY`) and the body hangs from the world, or from a child
//!    of the world without dofs (so that no dof lies above it), unless the model says
//!    `<body simple="false">` ([`Model::mj_body_simple`]);
//! 2. a body with a child is never simple (the world excepted);
//! 3. walking the body's joints in order, it stops being simple at a joint anchored off the body
//!    origin (`jnt_pos != 0`), at a hinge or slide whose axis is not one of the frame's axes
//!    (exactly one component above `mjEPS`), and at any joint after a rotation (a hinge or a ball)
//!    has been met; a free joint is alone in its body and passes;
//! 4. a simple body with dofs, all of them slides, is simple at level 2 (`body_simple = 2`: `M`
//!    is `mass * I` there, which `mj_setConst` and the derivatives use);
//! 5. a body on the path of a tendon with armature (through a site, or around a sphere or a
//!    cylinder geom) is not simple (the armature's `J^T J` would couple its dofs);
//! 6. `dof_simplenum[i]` counts the consecutive simple dofs from `i` to the last one: zero for a
//!    dof of a body that is not simple.
//!
//! Why the block is diagonal: with the inertia `I_c = diag(I_1, I_2, I_3)` in the body frame and
//! the centre of mass at the origin, a slide along `e_k` moves the centre of mass with unit speed
//! along `e_k` (`M_kk = m`, no moment about the centre of mass), a rotation about `e_k` through
//! the centre of mass has kinetic energy `I_k w^2 / 2` and no linear momentum, and axes of the
//! frame are orthogonal. (Two slides along the same axis would couple; MuJoCo accepts the model and
//! drops the coupling all the same, and so does this rule.) In floating point the entries MuJoCo
//! drops are the rounding noise of `R I_c R^T` and of `xipos - xpos`, about `1e-17` of the mass.
//!
//! Our models keep a MuJoCo body with several joints as a chain of Featherstone bodies
//! ([`Model::mj_body`]): the rule reads the MuJoCo bodies, their joints in order, and the inertia
//! of the chain's last body ([`Model::mj_body_last`]). Joint types MuJoCo does not have (the
//! builder's helical, cylindrical and planar joints) make a body not simple.

use super::constants::mjEPS;
use super::{JointType, Model, TendonKind, TendonWrap};

/// MuJoCo's tolerance for "the same frame" (`kFrameEps` in `user_model.cc`): the inertial frame is
/// the body frame when every component of `body_ipos` and of `body_iquat - (1, 0, 0, 0)` (or of
/// `body_iquat + (1, 0, 0, 0)`) is below it in magnitude.
pub const FRAME_EPS: f64 = 1e-6;

/// The simple-body flags of a model (MuJoCo's `body_simple` and `dof_simplenum`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleBodies {
    /// Per MuJoCo body (index 0 the world): 0 not simple, 1 simple, 2 simple with only slides
    /// (MuJoCo's `body_simple`).
    pub body_simple: Vec<u8>,
    /// Per dof: the number of consecutive simple dofs from this one to the last (MuJoCo's
    /// `dof_simplenum`); zero for a dof of a body that is not simple.
    pub dof_simplenum: Vec<usize>,
}

/// The MuJoCo parent body of every MuJoCo body (MuJoCo's `body_parentid`, 0 for the world and its
/// children): the first Featherstone body of body `b`'s chain hangs from the last body of `b`'s
/// parent.
pub fn mj_body_parentid(model: &Model) -> Vec<usize> {
    let mut out = vec![0; model.mj_nbody()];
    for (b, parent) in out.iter_mut().enumerate().skip(1) {
        let mut first = model.mj_body_last[b];
        // bounded: each step moves to a smaller body index (lambda(i) < i)
        while first != 0 && model.lambda[first] != 0 && model.mj_body[model.lambda[first]] == b {
            first = model.lambda[first];
        }
        *parent = if first == 0 {
            0
        } else {
            model.mj_body[model.lambda[first]]
        };
    }
    out
}

/// Whether every component of `v` is below [`FRAME_EPS`] in magnitude (MuJoCo's `IsSameVec` with
/// zero).
fn null_vec(v: &[f64]) -> bool {
    v.iter().all(|x| x.abs() < FRAME_EPS)
}

/// Whether `q` is the identity rotation, `(1, 0, 0, 0)` or `(-1, 0, 0, 0)` (MuJoCo's `IsSameQuat`
/// with the unit quaternion, double cover included).
fn null_quat(q: &[f64; 4]) -> bool {
    null_vec(&q[1..]) && ((q[0] - 1.0).abs() < FRAME_EPS || (q[0] + 1.0).abs() < FRAME_EPS)
}

/// Whether exactly one component of `axis` exceeds `mjEPS` in magnitude (MuJoCo's "aligned" axis).
fn aligned(axis: &[f64]) -> bool {
    axis.iter().filter(|a| a.abs() > mjEPS).count() == 1
}

// ANCHOR: simple_bodies
/// MuJoCo's `body_simple` and `dof_simplenum` for `model` (the rule of the module documentation,
/// steps 1 to 6 in order).
pub fn simple_bodies(model: &Model) -> SimpleBodies {
    let nbody = model.mj_nbody();
    let parent = mj_body_parentid(model);
    // the Featherstone bodies of every MuJoCo body, in joint order, and its number of dofs
    let mut chain = vec![Vec::new(); nbody];
    for i in 1..=model.nb {
        chain[model.mj_body[i]].push(i);
    }
    let dofnum = |b: usize| -> usize { chain[b].iter().map(|&i| model.joints[i].jtype.nv()).sum() };
    let mut simple = vec![0u8; nbody];
    // step 1: same frame, and no dof above the body (the world's frame is its own)
    simple[0] = 1;
    for b in 1..nbody {
        let last = model.mj_body_last[b];
        let com = model.inertia[last].com();
        let same_frame = null_vec(com.as_slice()) && null_quat(&model.body_iquat[last]);
        let p = parent[b];
        let root = p == 0 || (parent[p] == 0 && dofnum(p) == 0);
        // the model's own override (`<body simple="false">`)
        let allowed = model.mj_body_simple.get(b).copied().unwrap_or(true);
        simple[b] = u8::from(same_frame && root && allowed);
    }
    // step 2: a parent is never simple (the world excepted)
    for b in 1..nbody {
        if parent[b] > 0 {
            simple[parent[b]] = 0;
        }
    }
    // steps 3 and 4: the joints in order
    for b in 1..nbody {
        if simple[b] == 0 {
            continue;
        }
        let mut rotation_found = false;
        let mut only_slides = true;
        for &i in &chain[b] {
            let joint = &model.joints[i];
            let axis_ok = match &joint.jtype {
                JointType::Revolute { axis } | JointType::Prismatic { axis } => aligned(axis.as_slice()),
                JointType::Spherical | JointType::Free | JointType::Fixed => true,
                // not a MuJoCo joint: keep the body's rows whole
                _ => false,
            };
            if rotation_found || !null_vec(joint.pos.as_slice()) || !axis_ok {
                simple[b] = 0;
                break;
            }
            rotation_found |= matches!(joint.jtype, JointType::Revolute { .. } | JointType::Spherical);
            only_slides &= matches!(joint.jtype, JointType::Prismatic { .. } | JointType::Fixed);
        }
        if simple[b] == 1 && dofnum(b) > 0 && only_slides {
            simple[b] = 2;
        }
    }
    // step 5: bodies on the path of a tendon with armature
    for tendon in model.tendons.iter().filter(|t| t.armature != 0.0) {
        if let TendonKind::Spatial { path } = &tendon.kind {
            for wrap in path {
                let body = match wrap {
                    TendonWrap::Site(s) => model.sites.get(*s).map(|s| s.body),
                    TendonWrap::Geom { geom, .. } => model.geoms.get(*geom).map(|g| g.body),
                    TendonWrap::Pulley { .. } => None,
                };
                if let Some(i) = body {
                    simple[model.mj_body[i]] = 0;
                }
            }
        }
    }
    // step 6: count the simple dofs from the last one back
    let mut dof_simplenum = vec![0; model.nv];
    let mut count = 0;
    for k in (0..model.nv).rev() {
        count = if simple[model.mj_body[model.dof_body[k]]] > 0 {
            count + 1
        } else {
            0
        };
        dof_simplenum[k] = count;
    }
    SimpleBodies {
        body_simple: simple,
        dof_simplenum,
    }
}
// ANCHOR_END: simple_bodies
