//! Limit rows (MuJoCo's `mj_instantiateLimit`, spec 3.5): joint ranges (hinge, slide, ball) and
//! tendon ranges. Book chapter: "The constraint model", section "Limits".

use super::equality::refsafe;
use super::impedance::SolParams;
use super::invweight::Invweight;
use super::rows::{OneRow, Rows, Scratch};
use super::EfcType;
use crate::dynamics::TendonState;
use crate::error::{Error, Result};
use crate::model::constants::mjMINVAL;
use crate::model::{JointType, Model};
use crate::spatial::Vec3;
use std::fmt::Write;

// ANCHOR: ball_angle
/// The rotation of a ball joint's quaternion as MuJoCo's limit sees it (`mju_quat2Vel` of the
/// normalized quaternion): the angle `theta = |2 atan2(|v|, w)|` wrapped to `[0, pi]` and the
/// unit axis `u` it turns about (`(1, 0, 0)` when `theta` is 0).
pub fn ball_angle_axis(q: &[f64]) -> (f64, Vec3) {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let (w, v) = (q[0] / n, Vec3::new(q[1], q[2], q[3]) / n);
    let s = v.norm();
    let axis = if s < mjMINVAL { Vec3::x() } else { v / s };
    let mut speed = 2.0 * s.atan2(w);
    if speed > std::f64::consts::PI {
        speed -= 2.0 * std::f64::consts::PI;
    }
    let r = axis * speed;
    let theta = r.norm();
    let u = if theta < mjMINVAL { Vec3::x() } else { r / theta };
    (theta, u)
}
// ANCHOR_END: ball_angle

// ANCHOR: limit_rows
/// Appends the active limit rows: for each limited hinge or slide (and helical) joint the lower
/// side `dist = q - lo`, `J = +e` and the upper side `dist = hi - q`, `J = -e`; for a limited
/// ball `dist = max(lo, hi) - theta`, `J = -u` on its 3 dofs ([`ball_angle_axis`]); then tendon
/// ranges on the tendon length with `J = +-ten_J`. A side is active when `dist < margin`;
/// `efc_pos = dist`, `efc_margin = margin`, `A-hat` the `invweight0` of the joint's first dof or
/// of the tendon. `efc_id` is the joint's Featherstone body or the tendon.
///
/// Errors: a limited joint of a type MuJoCo cannot limit (planar, cylindrical, free).
pub(crate) fn limit_rows(
    model: &Model,
    inv: &Invweight,
    qpos: &[f64],
    ten: Option<&TendonState>,
    s: &mut Scratch,
    rows: &mut Rows,
) -> Result<()> {
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if !j.limited {
            continue;
        }
        let (a, v) = (model.q_adr[i], model.v_adr[i]);
        let params = SolParams {
            solref: j.limit_params.solref,
            solreffriction: [0.0; 2],
            solimp: j.limit_params.solimp,
        };
        let what = |s: &mut String| {
            let _ = write!(s, "limit of joint '{}' (body {i})", j.name);
        };
        let at = |dist| OneRow {
            efc_type: EfcType::LimitJoint,
            id: i,
            pos: dist,
            margin: j.margin,
            frictionloss: 0.0,
            diag: inv.dof[v],
        };
        match j.jtype {
            JointType::Revolute { .. } | JointType::Prismatic { .. } | JointType::Helical { .. } => {
                for side in [-1.0, 1.0] {
                    let bound = if side < 0.0 { j.range[0] } else { j.range[1] };
                    let dist = side * (bound - qpos[a]);
                    if dist < j.margin {
                        let params = rows.sanitize(params, model.opt.timestep, refsafe(model), what);
                        rows.add_one(s, at(dist), params, |row| row[v] = -side);
                    }
                }
            }
            JointType::Spherical => {
                let (theta, u) = ball_angle_axis(&qpos[a..a + 4]);
                let dist = j.range[0].max(j.range[1]) - theta;
                if dist < j.margin {
                    let params = rows.sanitize(params, model.opt.timestep, refsafe(model), what);
                    rows.add_one(s, at(dist), params, |row| {
                        for k in 0..3 {
                            row[v + k] = -u[k];
                        }
                    });
                }
            }
            ref other => {
                return Err(Error::Unsupported {
                    what: format!("limited {} joint '{}' (body {i})", other.name(), j.name),
                    why: "MuJoCo limits only hinge, slide and ball joints".into(),
                })
            }
        }
    }
    let Some(ten) = ten else { return Ok(()) };
    for (t, tendon) in model.tendons.iter().enumerate() {
        if !tendon.limited {
            continue;
        }
        let params = SolParams {
            solref: tendon.limit.solref,
            solreffriction: [0.0; 2],
            solimp: tendon.limit.solimp,
        };
        let value = ten.length[t];
        for side in [-1.0, 1.0] {
            let bound = if side < 0.0 { tendon.range[0] } else { tendon.range[1] };
            let dist = side * (bound - value);
            if dist < tendon.margin {
                let params = rows.sanitize(params, model.opt.timestep, refsafe(model), |s: &mut String| {
                    let _ = write!(s, "limit of tendon {t}");
                });
                let limit = OneRow {
                    efc_type: EfcType::LimitTendon,
                    id: t,
                    pos: dist,
                    margin: tendon.margin,
                    frictionloss: 0.0,
                    diag: inv.tendon[t],
                };
                rows.add_one(s, limit, params, |row| {
                    for (c, r) in row.iter_mut().enumerate() {
                        *r = -side * ten.moment[(t, c)];
                    }
                });
            }
        }
    }
    Ok(())
}
// ANCHOR_END: limit_rows
