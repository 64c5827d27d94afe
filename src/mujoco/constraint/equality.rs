//! Equality rows (MuJoCo's `mj_instantiateEquality`, spec 3.3) and the `Jdot v` term of the
//! reference acceleration of connect and weld rows (`mj_Jdotv`, MuJoCo >= 3.7). Book chapter:
//! "The constraint model", section "Equality constraints".

use super::impedance::SolParams;
use super::invweight::{EqData, Invweight};
use super::jacobian::{body_point, jac_dot_v, jac_point};
use super::rows::{diff_row, GroupKind, NewGroup, OneRow, Rows, Scratch};
use super::EfcType;
use crate::dynamics::TendonState;
use crate::error::{Error, Result};
use crate::model::{Equality, Model};
use crate::mujoco::Data;
use crate::spatial::{quat_mul, Vec3};

/// `q (x) (0, v)`: MuJoCo's `mju_mulQuatAxis`.
fn mul_quat_axis(q: &[f64; 4], v: &Vec3) -> [f64; 4] {
    quat_mul(q, &[0.0, v.x, v.y, v.z])
}

fn conj(q: &[f64; 4]) -> [f64; 4] {
    [q[0], -q[1], -q[2], -q[3]]
}

/// The two world anchor points of a connect or weld (MuJoCo's `mj_equalityAnchors`): a connect
/// has anchor 1 on body1 and anchor 2 on body2; a weld has the relpose position on body1 and
/// its anchor on body2.
pub fn anchors(d: &Data, eq: &EqData, b1: usize, b2: usize) -> (Vec3, Vec3) {
    match eq {
        EqData::Connect { anchor1, anchor2 } => (body_point(d, b1, anchor1), body_point(d, b2, anchor2)),
        EqData::Weld { anchor2, relpos, .. } => (body_point(d, b1, relpos), body_point(d, b2, anchor2)),
        EqData::Scalar { .. } => (Vec3::zeros(), Vec3::zeros()),
    }
}

// ANCHOR: weld_rotation
/// The weld's orientation residual and its Jacobian rows (spec 3.3): with `q1`, `q2` the body
/// quaternions, `r0` the relative orientation and `ts` the torque scale,
///
/// ```text
/// r_rot = ts vec(q2^* (x) q1 (x) r0),
/// J_rot[:, j] = ts / 2 vec(q2^* (x) (0, w_j) (x) q1 (x) r0),   w_j = (Jr1 - Jr2)[:, j].
/// ```
///
/// `jr` holds `Jr1 - Jr2` (3 x nv, row-major); the rows are written into `out` (3 x nv).
pub fn weld_rotation(q1: &[f64; 4], q2: &[f64; 4], r0: &[f64; 4], ts: f64, jr: &[f64], out: &mut [f64]) -> Vec3 {
    let nv = jr.len() / 3;
    let quat = quat_mul(q1, r0);
    let quat1 = conj(q2);
    let err = quat_mul(&quat1, &quat);
    for j in 0..nv {
        let axis = Vec3::new(jr[j], jr[nv + j], jr[2 * nv + j]);
        let q3 = quat_mul(&mul_quat_axis(&quat1, &axis), &quat);
        for k in 0..3 {
            out[k * nv + j] = 0.5 * q3[k + 1] * ts;
        }
    }
    Vec3::new(err[1], err[2], err[3]) * ts
}
// ANCHOR_END: weld_rotation

/// A named equality (for errors and warnings).
fn eq_name(k: usize, eq: &Equality) -> String {
    let mut s = String::new();
    write_eq_name(&mut s, k, eq);
    s
}

/// [`eq_name`] written into `s`.
fn write_eq_name(s: &mut String, k: usize, eq: &Equality) {
    use std::fmt::Write;
    let name = match eq {
        Equality::Connect { name, .. }
        | Equality::Weld { name, .. }
        | Equality::Joint { name, .. }
        | Equality::Tendon { name, .. } => name,
    };
    let _ = if name.is_empty() {
        write!(s, "equality {k}")
    } else {
        write!(s, "equality {k} ('{name}')")
    };
}

// ANCHOR: equality_rows
/// Appends the rows of every active equality constraint (`d.eq_active`, MuJoCo's `eq_active`),
/// in model order (spec 3.3):
/// - connect (3 rows): `r = p1 - p2`, `J = Jp(b1, p1) - Jp(b2, p2)`, `A-hat` the sum of the
///   two bodies' translational `invweight0`;
/// - weld (6 rows): translation as connect, rotation by [`weld_rotation`], `A-hat`
///   translational then rotational;
/// - joint (1 row): `y = q1 - q1_0`, `x = q2 - q2_0`, `r = y - a0 - (a1 x + a2 x^2 + a3 x^3 +
///   a4 x^4)`, `J = e1 - (a1 + 2 a2 x + 3 a3 x^2 + 4 a4 x^3) e2` (`r = y - a0`, `J = e1`
///   without a second joint); tendon couplings the same with tendon lengths and `ten_J` rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn equality_rows(
    model: &Model,
    d: &Data,
    inv: &Invweight,
    qpos: &[f64],
    ten: Option<&TendonState>,
    quats: &[[f64; 4]],
    s: &mut Scratch,
    rows: &mut Rows,
) -> Result<()> {
    let nv = model.nv;
    let iw = |b: usize| inv.body[model.mj_body[b]];
    for (k, eq) in model.equality.iter().enumerate() {
        // MuJoCo's eq_active: an inactive constraint makes no rows
        if !d.eq_active[k] {
            continue;
        }
        let params = model.eq_params.get(k).copied().unwrap_or_default();
        let what = |s: &mut String| write_eq_name(s, k, eq);
        let params = rows.sanitize(
            SolParams {
                solref: params.solref,
                solreffriction: [0.0; 2],
                solimp: params.solimp,
            },
            model.opt.timestep,
            refsafe(model),
            what,
        );
        let data = &inv.eq[k];
        let scalar = |pos, diag| OneRow {
            efc_type: EfcType::Equality,
            id: k,
            pos,
            margin: 0.0,
            frictionloss: 0.0,
            diag,
        };
        match (eq, data) {
            (Equality::Connect { body1, body2, .. }, EqData::Connect { .. })
            | (Equality::Weld { body1, body2, .. }, EqData::Weld { .. }) => {
                let (b1, b2) = (*body1, *body2);
                let (p1, p2) = anchors(d, data, b1, b2);
                jac_point(model, d, b1, &p1, &mut s.p1, &mut s.r1);
                jac_point(model, d, b2, &p2, &mut s.p2, &mut s.r2);
                let mut pos = [0.0; 6];
                let r = p1 - p2;
                pos[..3].copy_from_slice(r.as_slice());
                for row in 0..3 {
                    diff_row(&s.p1, &s.p2, row, &mut s.rows[row * nv..(row + 1) * nv]);
                }
                let (tr1, tr2) = (iw(b1), iw(b2));
                let mut diag = [tr1[0] + tr2[0]; 6];
                let (n, kind) = if let EqData::Weld {
                    relquat, torquescale, ..
                } = data
                {
                    // rows 0-2 translation, 3-5 rotation, 6-8 scratch for Jr1 - Jr2
                    let (head, jr) = s.rows.split_at_mut(6 * nv);
                    for row in 0..3 {
                        diff_row(&s.r1, &s.r2, row, &mut jr[row * nv..(row + 1) * nv]);
                    }
                    let rot = weld_rotation(
                        &quats[b1],
                        &quats[b2],
                        relquat,
                        *torquescale,
                        &jr[..3 * nv],
                        &mut head[3 * nv..],
                    );
                    pos[3..].copy_from_slice(rot.as_slice());
                    diag[3..].fill(tr1[1] + tr2[1]);
                    (6, GroupKind::Weld)
                } else {
                    (3, GroupKind::Connect)
                };
                rows.add(NewGroup {
                    efc_type: EfcType::Equality,
                    id: k,
                    jac: &s.rows[..n * nv],
                    pos: &pos[..n],
                    margin: &[0.0; 6][..n],
                    frictionloss: 0.0,
                    diag: &diag[..n],
                    kind,
                    params,
                });
            }
            (
                Equality::Joint {
                    joint1,
                    joint2,
                    polycoef,
                    ..
                },
                EqData::Scalar { ref1, ref2 },
            ) => {
                let (v1, y) = (model.v_adr[*joint1], qpos[model.q_adr[*joint1]] - ref1);
                let (pos, diag, second) = match joint2 {
                    Some(j2) => {
                        let (v2, x) = (model.v_adr[*j2], qpos[model.q_adr[*j2]] - ref2);
                        let (r, deriv) = polynomial(polycoef, y, x);
                        (r, inv.dof[v1] + inv.dof[v2], Some((v2, deriv)))
                    }
                    None => (y - polycoef[0], inv.dof[v1], None),
                };
                rows.add_one(s, scalar(pos, diag), params, |row| {
                    row[v1] = 1.0;
                    if let Some((v2, deriv)) = second {
                        row[v2] -= deriv;
                    }
                });
            }
            (
                Equality::Tendon {
                    tendon1,
                    tendon2,
                    polycoef,
                    ..
                },
                EqData::Scalar { ref1, ref2 },
            ) => {
                let ten = ten.ok_or_else(|| Error::Unknown {
                    kind: "tendon state of".into(),
                    name: eq_name(k, eq),
                })?;
                let (t1, y) = (*tendon1, ten.length[*tendon1] - ref1);
                let (pos, diag, second) = match *tendon2 {
                    Some(t2) => {
                        let (r, deriv) = polynomial(polycoef, y, ten.length[t2] - ref2);
                        (r, inv.tendon[t1] + inv.tendon[t2], Some((t2, deriv)))
                    }
                    None => (y - polycoef[0], inv.tendon[t1], None),
                };
                rows.add_one(s, scalar(pos, diag), params, |row| {
                    for (c, r) in row.iter_mut().enumerate() {
                        *r = ten.moment[(t1, c)];
                    }
                    if let Some((t2, deriv)) = second {
                        for (c, r) in row.iter_mut().enumerate() {
                            *r += -deriv * ten.moment[(t2, c)];
                        }
                    }
                });
            }
            _ => {
                return Err(Error::InvalidArgument {
                    what: "invweight".into(),
                    why: format!(
                        "its data of {} does not match the model (made for another model?)",
                        eq_name(k, eq)
                    ),
                })
            }
        }
    }
    Ok(())
}
// ANCHOR_END: equality_rows

/// The residual `y - a0 - (a1 x + a2 x^2 + a3 x^3 + a4 x^4)` of a polynomial coupling and the
/// derivative of the polynomial at `x`.
fn polynomial(a: &[f64; 5], y: f64, x: f64) -> (f64, f64) {
    let r = y - a[0] - (a[1] * x + a[2] * x * x + a[3] * x * x * x + a[4] * x * x * x * x);
    let deriv = a[1] + 2.0 * a[2] * x + 3.0 * a[3] * x * x + 4.0 * a[4] * x * x * x;
    (r, deriv)
}

/// Whether MuJoCo's `refsafe` flag is on (the default; `<flag refsafe="disable"/>` turns it off).
pub(crate) fn refsafe(model: &Model) -> bool {
    !model.opt.flags.iter().any(|(n, on)| n == "refsafe" && !on)
}

// ANCHOR: jdot_v
/// MuJoCo's `mj_Jdotv` (spec 4.6, MuJoCo >= 3.7): subtracts `Jdot qvel` from `aref` on every
/// connect and weld row. Translation: `Jdot qvel = Jdot_p(b1, p1) qvel - Jdot_p(b2, p2) qvel`
/// ([`jac_dot_v`]). Rotation: the derivative of `1/2 vec(q2^* (x) (w1 - w2) (x) q1 (x) r0)`
/// with the angular velocities `w` of the bodies and `qdot = 1/2 (0, w) (x) q`, by the product
/// rule: `1/2 ts vec(q2dot^* (x) dw (x) q1 r0 + q2^* (x) (Jdot_r1 - Jdot_r2) qvel (x) q1 r0 +
/// q2^* (x) dw (x) q1dot r0)`.
pub(crate) fn subtract_jdot_v(
    model: &Model,
    d: &Data,
    inv: &Invweight,
    quats: &[[f64; 4]],
    qvel: &[f64],
    rows: &mut Rows,
) {
    for g in &rows.groups {
        if !matches!(g.kind, GroupKind::Connect | GroupKind::Weld) {
            continue;
        }
        let k = rows.efc.efc_id[g.start];
        let (b1, b2) = match &model.equality[k] {
            Equality::Connect { body1, body2, .. } | Equality::Weld { body1, body2, .. } => (*body1, *body2),
            _ => continue,
        };
        let data = &inv.eq[k];
        let (p1, p2) = anchors(d, data, b1, b2);
        let (l1, a1) = jac_dot_v(model, d, b1, &p1, qvel);
        let (l2, a2) = jac_dot_v(model, d, b2, &p2, qvel);
        let aref = &mut rows.efc.aref;
        for r in 0..3 {
            aref[g.start + r] -= l1[r] - l2[r];
        }
        if let EqData::Weld {
            relquat, torquescale, ..
        } = data
        {
            let (q1, q2) = (quats[b1], quats[b2]);
            let q0r = quat_mul(&q1, relquat);
            let negq1 = conj(&q2);
            let (w1, w2) = (d.cvel_fb[b1].w, d.cvel_fb[b2].w);
            let dw = w1 - w2;
            let deriv = |q: &[f64; 4], w: &Vec3| {
                let t = quat_mul(&[0.0, w.x, w.y, w.z], q);
                [0.5 * t[0], 0.5 * t[1], 0.5 * t[2], 0.5 * t[3]]
            };
            let qdot0r = quat_mul(&deriv(&q1, &w1), relquat);
            let negqdot1 = conj(&deriv(&q2, &w2));
            let djr = a1 - a2;
            let t1 = quat_mul(&mul_quat_axis(&negqdot1, &dw), &q0r);
            let t2 = quat_mul(&mul_quat_axis(&negq1, &djr), &q0r);
            let t3 = quat_mul(&mul_quat_axis(&negq1, &dw), &qdot0r);
            for r in 0..3 {
                aref[g.start + 3 + r] -= 0.5 * (t1[r + 1] + t2[r + 1] + t3[r + 1]) * torquescale;
            }
        }
    }
}
// ANCHOR_END: jdot_v
