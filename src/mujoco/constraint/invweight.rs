//! The model constants of MuJoCo's `mj_setConst` that the constraint rows read, computed once per
//! model at `qpos0`: the inverse weights `body_invweight0`, `dof_invweight0`,
//! `tendon_invweight0` (the approximation `A-hat` of the diagonal of `J M^-1 J^T`, spec 4.1),
//! the tendon lengths `tendon_length0`, and the data of the equality constraints (the second
//! anchor of a connect, the default relative pose of a weld). Book chapter: "Soft constraints",
//! section "The approximate diagonal".

use nalgebra::{DMatrix, Matrix3xX};

use super::jacobian::{body_point, jac_point, xquat};
use crate::dynamics::tendon_kinematics;
use crate::error::{Error, Result};
use crate::model::constants::{mjEPS, mjMINVAL};
use crate::model::mj_body_parentid;
use crate::model::{Equality, JointType, Model};
use crate::mujoco::{forward_smooth, Data};
use crate::sparse::{solve_ld, NoCount};
use crate::spatial::{quat_mul, quat_normalize, Vec3};

/// What `mj_setConst` stores in `eq_data` for one equality constraint.
#[derive(Clone, Debug, PartialEq)]
pub enum EqData {
    /// Connect: the anchor on body1 (its frame) and the point of body2 that coincides with it at
    /// `qpos0` (body2's frame).
    Connect { anchor1: Vec3, anchor2: Vec3 },
    /// Weld: the anchor on body2 (its frame), the matching point on body1 (body1's frame) and the
    /// relative orientation `r0 = q1^* (x) q2` (the given `relpose`, normalized, or the one at
    /// `qpos0`), and MuJoCo's `torquescale` (1: the MJCF reader accepts no other value).
    Weld {
        anchor2: Vec3,
        relpos: Vec3,
        relquat: [f64; 4],
        torquescale: f64,
    },
    /// Joint or tendon coupling: the reference values (`qpos0` or `tendon_length0`) of the two
    /// objects (the second 0 when there is none).
    Scalar { ref1: f64, ref2: f64 },
}

/// MuJoCo's `mj_setConst` constants of the constraint stage (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct Invweight {
    /// `body_invweight0` per MuJoCo body: `[translation, rotation]` (world body `[0, 0]`).
    pub body: Vec<[f64; 2]>,
    /// `dof_invweight0` (nv).
    pub dof: Vec<f64>,
    /// `tendon_invweight0` (ntendon): `J_ten M^-1 J_ten^T` at `qpos0`.
    pub tendon: Vec<f64>,
    /// `tendon_length0` (ntendon).
    pub tendon_length0: Vec<f64>,
    /// `eq_data` of every equality constraint, parallel to `model.equality`.
    pub eq: Vec<EqData>,
}

/// Whether MuJoCo body `mb` is "simple" at level 2 (`body_simple == 2`): a body whose parent is
/// the world (or a dof-less child of the world), with no children, inertia frame equal to its
/// frame, and only axis-aligned slide joints at its origin. Its `M` block is `mass * I` and
/// MuJoCo sets its inverse weights to `1 / mass`.
pub fn is_simple_slider(model: &Model, parents: &[usize], mb: usize) -> bool {
    if mb == 0 || parents.contains(&mb) {
        return false;
    }
    let last = model.mj_body_last[mb];
    let chain: Vec<usize> = (1..=model.nb).filter(|&i| model.mj_body[i] == mb).collect();
    let p = parents[mb];
    let parent_ok = p == 0 || (parents[p] == 0 && chain_dofs(model, model.mj_body_last[p]) == 0);
    let inertia = &model.inertia[last];
    let q = model.body_iquat[last];
    let sameframe =
        inertia.com().norm() <= mjEPS && (q[0] - 1.0).abs() <= mjEPS && q[1..].iter().all(|x| x.abs() <= mjEPS);
    let mut ndof = 0;
    for &i in &chain {
        let j = &model.joints[i];
        match j.jtype {
            JointType::Prismatic { axis } => {
                let aligned = axis.iter().filter(|a| a.abs() > mjEPS).count() == 1;
                if !aligned || j.pos.norm() > mjEPS {
                    return false;
                }
                ndof += 1;
            }
            JointType::Fixed => {}
            _ => return false,
        }
    }
    ndof > 0 && parent_ok && sameframe
}

/// Number of dofs between Featherstone body `b` and the root.
fn chain_dofs(model: &Model, b: usize) -> usize {
    let mut n = 0;
    let mut i = b;
    while i != 0 {
        n += model.joints[i].jtype.nv();
        i = model.lambda[i];
    }
    n
}

impl Invweight {
    // ANCHOR: invweight
    /// Computes the constants at `qpos0` (MuJoCo's `mj_setConst`):
    /// - `body_invweight0[b]`: with `J = [Jp; Jr]` the 6 x nv Jacobian of body b's centre of
    ///   mass and `A = J M^-1 J^T`, the mean of the translational diagonal of `A` and the mean of
    ///   the rotational one; 0 for bodies without dofs, `[1/mass, 0]` for simple sliders
    ///   ([`is_simple_slider`]);
    /// - `dof_invweight0`: the joint's block of `M^-1`: its diagonal entry (hinge, slide), the
    ///   mean of its 3 diagonal entries (ball), the means of the first and last three (free);
    ///   `1/mass` on a simple slider; other joint types get their own diagonal entries;
    /// - `tendon_invweight0 = J_ten M^-1 J_ten^T` and `tendon_length0`;
    /// - the equality data ([`EqData`]).
    ///
    /// Errors: those of [`forward_smooth`] at `qpos0` (a singular `M`), of the tendon
    /// kinematics (a tendon wrapping around a geom), and an equality naming a body, joint or
    /// tendon that does not exist.
    pub fn new(model: &Model) -> Result<Self> {
        let nv = model.nv;
        let zeros = vec![0.0; nv];
        let d = forward_smooth(model, model.qpos0.as_slice(), &zeros)?;
        let layout = model.mj_layout();
        let solve = |x: &mut [f64]| solve_ld(layout, &d.qld, &d.qld_diag_inv, x, &mut NoCount);
        let parents = mj_body_parentid(model);
        let nbody = model.mj_nbody();
        let mut body = vec![[0.0; 2]; nbody];
        let (mut jp, mut jr) = (Matrix3xX::zeros(nv), Matrix3xX::zeros(nv));
        let mut x = vec![0.0; nv];
        for (mb, out) in body.iter_mut().enumerate().skip(1) {
            let last = model.mj_body_last[mb];
            if chain_dofs(model, last) == 0 {
                continue;
            }
            if is_simple_slider(model, &parents, mb) {
                *out = [1.0 / model.inertia[last].m.max(mjMINVAL), 0.0];
                continue;
            }
            jac_point(model, &d, last, &d.xipos_fb[last], &mut jp, &mut jr);
            let mut a = [0.0; 2];
            for (half, j) in [&jp, &jr].into_iter().enumerate() {
                for r in 0..3 {
                    x.iter_mut().zip(j.row(r).iter()).for_each(|(x, v)| *x = *v);
                    solve(&mut x)?;
                    a[half] += j.row(r).iter().zip(&x).map(|(u, v)| u * v).sum::<f64>() / 3.0;
                }
            }
            *out = a;
        }
        let mut dof = vec![0.0; nv];
        // the dense inverse of M column by column: small models, computed once
        let mut minv = DMatrix::zeros(nv, nv);
        for c in 0..nv {
            x.fill(0.0);
            x[c] = 1.0;
            solve(&mut x)?;
            minv.column_mut(c).copy_from_slice(&x);
        }
        for i in 1..=model.nb {
            let dofs = model.dofs(i);
            if dofs.is_empty() {
                continue;
            }
            if is_simple_slider(model, &parents, model.mj_body[i]) {
                let m = model.inertia[model.mj_body_last[model.mj_body[i]]].m;
                dof[dofs].fill(1.0 / m.max(mjMINVAL));
                continue;
            }
            let a = dofs.start;
            let mean = |r: std::ops::Range<usize>| r.clone().map(|k| minv[(k, k)]).sum::<f64>() / r.len() as f64;
            match model.joints[i].jtype {
                JointType::Free => {
                    let (t, r) = (mean(a..a + 3), mean(a + 3..a + 6));
                    dof[a..a + 3].fill(t);
                    dof[a + 3..a + 6].fill(r);
                }
                JointType::Spherical => dof[a..a + 3].fill(mean(a..a + 3)),
                _ => {
                    for k in dofs {
                        dof[k] = minv[(k, k)];
                    }
                }
            }
        }
        let (tendon, tendon_length0) = if model.tendons.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let ten = tendon_kinematics(model, model.qpos0.as_slice())?;
            let w = (0..model.tendons.len())
                .map(|t| {
                    let row = ten.moment.row(t).transpose();
                    (row.transpose() * &minv * &row)[(0, 0)]
                })
                .collect();
            (w, ten.length)
        };
        let eq = equality_data(model, &d, &tendon_length0)?;
        Ok(Invweight {
            body,
            dof,
            tendon,
            tendon_length0,
            eq,
        })
    }
    // ANCHOR_END: invweight
}

/// `eq_data` of every equality at `qpos0` (`d` is the smooth data at `qpos0`).
fn equality_data(model: &Model, d: &Data, length0: &[f64]) -> Result<Vec<EqData>> {
    let q0 = xquat(model, model.qpos0.as_slice());
    let unknown = |k: usize, what: &str, idx: usize| Error::Unknown {
        kind: format!("{what} {idx} of equality {k}"),
        name: format!("equality {k}"),
    };
    let local = |b: usize, p: &Vec3| d.x_0[b].e * (p - d.x_0[b].r);
    model
        .equality
        .iter()
        .enumerate()
        .map(|(k, eq)| {
            Ok(match eq {
                Equality::Connect {
                    body1, body2, anchor, ..
                } => {
                    for b in [*body1, *body2] {
                        if b > model.nb {
                            return Err(unknown(k, "body", b));
                        }
                    }
                    EqData::Connect {
                        anchor1: *anchor,
                        anchor2: local(*body2, &body_point(d, *body1, anchor)),
                    }
                }
                Equality::Weld {
                    body1,
                    body2,
                    anchor,
                    relpose,
                    ..
                } => {
                    for b in [*body1, *body2] {
                        if b > model.nb {
                            return Err(unknown(k, "body", b));
                        }
                    }
                    let given = relpose.filter(|rp| rp[3..].iter().any(|v| *v != 0.0));
                    let (relpos, relquat) = match given {
                        Some(rp) => {
                            let mut q = [rp[3], rp[4], rp[5], rp[6]];
                            quat_normalize(&mut q);
                            (Vec3::new(rp[0], rp[1], rp[2]), q)
                        }
                        None => {
                            let q1 = q0[*body1];
                            let conj = [q1[0], -q1[1], -q1[2], -q1[3]];
                            (
                                local(*body1, &body_point(d, *body2, anchor)),
                                quat_mul(&conj, &q0[*body2]),
                            )
                        }
                    };
                    EqData::Weld {
                        anchor2: *anchor,
                        relpos,
                        relquat,
                        torquescale: 1.0,
                    }
                }
                Equality::Joint { joint1, joint2, .. } => {
                    let scalar = |j: usize| j >= 1 && j <= model.nb && model.joints[j].jtype.nq() == 1;
                    let j2 = joint2.unwrap_or(joint1.to_owned());
                    for j in [*joint1, j2] {
                        if !scalar(j) {
                            return Err(unknown(k, "hinge or slide joint (Featherstone body)", j));
                        }
                    }
                    EqData::Scalar {
                        ref1: model.qpos0[model.q_adr[*joint1]],
                        ref2: joint2.map_or(0.0, |j| model.qpos0[model.q_adr[j]]),
                    }
                }
                Equality::Tendon { tendon1, tendon2, .. } => {
                    for t in [Some(*tendon1), *tendon2].into_iter().flatten() {
                        if t >= length0.len() {
                            return Err(unknown(k, "tendon", t));
                        }
                    }
                    EqData::Scalar {
                        ref1: length0[*tendon1],
                        ref2: tendon2.map_or(0.0, |t| length0[t]),
                    }
                }
            })
        })
        .collect()
}
