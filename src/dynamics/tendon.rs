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
use crate::model::{JointCalc, Model, TendonKind, TendonWrap};
use crate::spatial::{Motion, Vec3, Xform};
use nalgebra::DMatrix;

/// Tendon lengths and moment arms at one configuration.
#[derive(Clone, Debug)]
pub struct TendonState {
    /// `ten_length` (ntendon).
    pub length: Vec<f64>,
    /// `ten_J` (ntendon x nv).
    pub moment: DMatrix<f64>,
    /// The body poses and dof axes spatial tendons read, kept between calls.
    pub(crate) bodies: BodyAxes,
}

/// Every body's `i_X_0` and every dof's motion subspace column in world coordinates about the
/// world origin, `S0_c = 0_X_i S_c` (`[w; v]`: the velocity of the world point `x` moved by a
/// unit rate of dof `c` alone is `w x x + v`), so that a site's point-Jacobian column is one
/// cross product. Kept by [`TendonState`] so that a repeated call allocates nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct BodyAxes {
    x_0: Vec<Xform>,
    s0: Vec<Motion>,
    jc: JointCalc,
}

impl BodyAxes {
    /// Forward kinematics at `q` (Featherstone's `i_X_0 = X_J(q_i) X_T(i) lambda(i)_X_0`) and the
    /// world dof axes.
    fn update(&mut self, model: &Model, q: &[f64]) {
        self.x_0.clear();
        self.x_0.resize(model.nb + 1, Xform::identity());
        self.s0.clear();
        self.s0.resize(model.nv, Motion::zero());
        let zeros = [0.0; 6];
        for i in 1..=model.nb {
            let j = &model.joints[i];
            crate::model::jcalc_into(j, &q[model.qs(i)], &zeros[..j.jtype.nv()], &mut self.jc);
            self.x_0[i] = self
                .jc
                .x_j
                .compose(&model.x_tree[i])
                .compose(&self.x_0[model.lambda[i]]);
            for (k, dof) in model.dofs(i).enumerate() {
                self.s0[dof] = self.x_0[i].inv_apply_motion(&self.jc.s.cols[k]);
            }
        }
    }

    /// World position of the point `p` of body `i` (`p` in body coordinates).
    fn point(&self, i: usize, p: &Vec3) -> Vec3 {
        self.x_0[i].r + self.x_0[i].e.tr_mul(p)
    }

    /// Row `t` of `moment` plus `sign u . J(x) / divisor`: the point Jacobian at the world point
    /// `x` of body `i`, whose columns are nonzero at the dofs of `i` and its ancestors, projected
    /// on `u`.
    #[allow(clippy::too_many_arguments)]
    fn add_projected(
        &self,
        model: &Model,
        (i, x): (usize, &Vec3),
        u: &Vec3,
        sign: f64,
        divisor: f64,
        moment: &mut DMatrix<f64>,
        t: usize,
    ) {
        let mut k = i;
        while k != 0 {
            for dof in model.dofs(k) {
                let s = &self.s0[dof];
                moment[(t, dof)] += sign * u.dot(&(s.w.cross(x) + s.v)) / divisor;
            }
            k = model.lambda[k];
        }
    }
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
            bodies: BodyAxes::default(),
        }
    }
}

/// [`tendon_kinematics`] into `out` (made by [`TendonState::new`] for `model`; resized if not).
/// A repeated call allocates nothing: the body poses and dof axes of spatial tendons are kept in
/// `out`, computed once per call, and each segment adds `u^T (J_b - J_a) / divisor` to its row
/// straight from them, at the dofs of the two sites' bodies and their ancestors.
pub fn tendon_kinematics_into(model: &Model, q: &[f64], out: &mut TendonState) -> Result<()> {
    crate::error::check_vector("qpos", q, model.nq)?;
    let nt = model.tendons.len();
    out.length.clear();
    out.length.resize(nt, 0.0);
    if out.moment.shape() != (nt, model.nv) {
        out.moment = DMatrix::zeros(nt, model.nv);
    }
    out.moment.fill(0.0);
    let (length, moment, bodies) = (&mut out.length, &mut out.moment, &mut out.bodies);
    if model
        .tendons
        .iter()
        .any(|t| matches!(t.kind, TendonKind::Spatial { .. }))
    {
        bodies.update(model, q);
    }
    for (t, ten) in model.tendons.iter().enumerate() {
        match &ten.kind {
            TendonKind::Fixed { joints } => {
                for &(j, coef) in joints {
                    length[t] += coef * q[model.q_adr[j]];
                    moment[(t, model.v_adr[j])] += coef;
                }
            }
            TendonKind::Spatial { path } => {
                let mut divisor = 1.0;
                let mut prev: Option<usize> = None;
                for w in path {
                    match *w {
                        TendonWrap::Site(s) => {
                            if let Some(p) = prev {
                                let (a, b) = (&model.sites[p], &model.sites[s]);
                                let xa = bodies.point(a.body, &a.pos);
                                let xb = bodies.point(b.body, &b.pos);
                                let d = xb - xa;
                                let l = d.norm();
                                length[t] += l / divisor;
                                if l > crate::model::constants::mjMINVAL {
                                    let u = d / l;
                                    bodies.add_projected(model, (b.body, &xb), &u, 1.0, divisor, moment, t);
                                    bodies.add_projected(model, (a.body, &xa), &u, -1.0, divisor, moment, t);
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
