//! Tendon kinematics (MuJoCo's `mj_tendon`): each tendon's length `ten_length` and its moment
//! arms `ten_J` (one row of ntendon x nv), so that the tendon velocity is `ten_J qdot` and a
//! tendon force `f` contributes `ten_J^T f` to the joint forces.
//!
//! - A fixed tendon is linear in the joint coordinates: `L = sum_k coef_k q_k`, so its row of
//!   `ten_J` holds `coef_k` at the dof of joint k.
//! - A spatial tendon through sites is a polyline: `L = sum_s |x_{s+1} - x_s| / divisor`, and
//!   `dL/dq = sum_s u_s^T (J_{s+1} - J_s) / divisor` with `u_s` the unit segment direction and
//!   `J` the point Jacobians of the two sites. Wrapping around geoms is not implemented: asking
//!   for the length of such a tendon is an [`Error::Unsupported`].

use crate::error::{Error, Result};
use crate::kinematics::{forward_kinematics, point_jacobian};
use crate::model::{Model, TendonKind, TendonWrap};
use nalgebra::DMatrix;

/// Tendon lengths and moment arms at one configuration.
#[derive(Clone, Debug)]
pub struct TendonState {
    /// `ten_length` (ntendon).
    pub length: Vec<f64>,
    /// `ten_J` (ntendon x nv).
    pub moment: DMatrix<f64>,
}

/// MuJoCo's `mj_tendon` for fixed tendons and spatial tendons made of straight segments between
/// sites (and pulleys).
pub fn tendon_kinematics(model: &Model, q: &[f64]) -> Result<TendonState> {
    let mut out = TendonState::new(model);
    tendon_kinematics_into(model, q, &mut out)?;
    Ok(out)
}

impl TendonState {
    /// Zeroed storage for `model`'s tendons.
    pub fn new(model: &Model) -> Self {
        TendonState {
            length: vec![0.0; model.tendons.len()],
            moment: DMatrix::zeros(model.tendons.len(), model.nv),
        }
    }
}

/// [`tendon_kinematics`] into `out` (made by [`TendonState::new`] for `model`; resized if not).
/// Fixed tendons allocate nothing; spatial ones still compute the body poses and point
/// Jacobians in fresh storage.
pub fn tendon_kinematics_into(model: &Model, q: &[f64], out: &mut TendonState) -> Result<()> {
    crate::error::check_vector("qpos", q, model.nq)?;
    let nt = model.tendons.len();
    out.length.clear();
    out.length.resize(nt, 0.0);
    if out.moment.shape() != (nt, model.nv) {
        out.moment = DMatrix::zeros(nt, model.nv);
    }
    out.moment.fill(0.0);
    let (length, moment) = (&mut out.length, &mut out.moment);
    let mut kin = None;
    for (t, ten) in model.tendons.iter().enumerate() {
        match &ten.kind {
            TendonKind::Fixed { joints } => {
                for &(j, coef) in joints {
                    length[t] += coef * q[model.q_adr[j]];
                    moment[(t, model.v_adr[j])] += coef;
                }
            }
            TendonKind::Spatial { path } => {
                if kin.is_none() {
                    kin = Some(forward_kinematics(model, q)?);
                }
                let kin = kin.as_ref().unwrap();
                let mut divisor = 1.0;
                let mut prev: Option<usize> = None;
                for w in path {
                    match *w {
                        TendonWrap::Site(s) => {
                            if let Some(p) = prev {
                                let (a, b) = (&model.sites[p], &model.sites[s]);
                                let xa = kin.point(a.body, &a.pos);
                                let xb = kin.point(b.body, &b.pos);
                                let d = xb - xa;
                                let l = d.norm();
                                length[t] += l / divisor;
                                if l > crate::model::constants::mjMINVAL {
                                    let u = d / l;
                                    let ja = point_jacobian(model, q, a.body, &a.pos)?;
                                    let jb = point_jacobian(model, q, b.body, &b.pos)?;
                                    let row = u.transpose() * (jb - ja) / divisor;
                                    for k in 0..model.nv {
                                        moment[(t, k)] += row[k];
                                    }
                                }
                            }
                            prev = Some(s);
                        }
                        TendonWrap::Pulley { divisor: d } => {
                            divisor = d;
                            prev = None;
                        }
                        TendonWrap::Geom { geom, .. } => {
                            return Err(Error::Unsupported {
                                what: format!("tendon {t} ('{}')", ten.name),
                                why: format!(
                                    "wrapping around geom '{}' is not implemented yet (only straight segments between sites)",
                                    model.geoms[geom].name
                                ),
                            })
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
