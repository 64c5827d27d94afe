//! The exact line search of the primal solvers (MuJoCo's `PrimalPrepare`, `PrimalEval`,
//! `PrimalSearch`): along a direction `p` the cost `phi(alpha) = C(a + alpha p) - C(a)` is a sum
//! of one-dimensional pieces, quadratic per scalar row (with breakpoints where a row changes
//! state) and analytic in an elliptic cone's middle zone, so `phi`, `phi'` and `phi''` are
//! evaluated exactly, in `O(nefc)` per point once `J p` and `M p` are known. Book: "Solvers",
//! section "The exact line search".

use super::super::constraint::{Efc, EfcType};
use super::cost::{friction_loss_cost, middle_weight, zone, Cone, Zone};
use crate::model::constants::mjMINVAL;

/// One evaluated point of the line search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    /// Step length.
    pub alpha: f64,
    /// `phi(alpha) = C(a + alpha p) - C(a)`.
    pub cost: f64,
    /// `phi'(alpha)`.
    pub d1: f64,
    /// `phi''(alpha)` (at least `mjMINVAL`).
    pub d2: f64,
}

/// The per-direction data of the line search (MuJoCo's `quad`, `quadGauss`, `Jv`, `Mv`). Fields
/// sized once per solve and refilled by [`LineSearch::prepare`] for each direction.
#[derive(Clone, Debug, Default)]
pub struct LineSearch {
    /// `J p` (nefc).
    pub jv: Vec<f64>,
    /// `M p` (nv).
    pub mv: Vec<f64>,
    /// Gauss term along p: `[0, p^T (M a - qfrc_smooth), 1/2 p^T M p]`.
    pub quad_gauss: [f64; 3],
    /// Per row `[1/2 D x^2, D x Jp, 1/2 D (Jp)^2]` at `x = jar` (for a cone's normal row: summed
    /// over the cone's rows).
    pub quad: Vec<[f64; 3]>,
    /// Per cone `[U_0, V_0, U.U, U.V, V.V, Dm, T_0, cost at 0]` (tangential sums) with
    /// `U = S x`, `V = S J p`.
    pub cone: Vec<[f64; 8]>,
    /// Evaluations so far in the current search.
    pub neval: usize,
}

/// What one search returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchResult {
    /// The step (0 when no decrease was found).
    pub alpha: f64,
    /// `-phi(alpha)`: the cost decrease.
    pub improvement: f64,
    /// `|phi'(alpha)| scale / |p|`: MuJoCo's `lineslope`.
    pub slope: f64,
    /// Evaluations used.
    pub neval: usize,
}

impl LineSearch {
    /// Storage for `nv` dofs, `nefc` rows and `ncone` elliptic cones.
    pub fn new(nv: usize, nefc: usize, ncone: usize) -> Self {
        LineSearch {
            jv: vec![0.0; nefc],
            mv: vec![0.0; nv],
            quad_gauss: [0.0; 3],
            quad: vec![[0.0; 3]; nefc],
            cone: vec![[0.0; 8]; ncone],
            neval: 0,
        }
    }

    /// Sizes the storage for `nv` dofs, `nefc` rows and `ncone` cones (no allocation for a size
    /// seen before).
    pub fn resize(&mut self, nv: usize, nefc: usize, ncone: usize) {
        self.jv.resize(nefc, 0.0);
        self.mv.resize(nv, 0.0);
        self.quad.resize(nefc, [0.0; 3]);
        self.cone.resize(ncone, [0.0; 8]);
    }

    // ANCHOR: prepare
    /// MuJoCo's `PrimalPrepare`: the coefficients of every piece along `p`, given `jv = J p` and
    /// `mv = M p` already in `self`, the residual `ma - qfrc_smooth` of the current point and
    /// `jar = J a - aref`.
    pub fn prepare(&mut self, efc: &Efc, cones: &[Cone], p: &[f64], ma: &[f64], qfrc_smooth: &[f64], jar: &[f64]) {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.prepare_body(efc, cones, p, ma, qfrc_smooth, jar),
        )
    }

    /// The body of [`Self::prepare`], compiled for AVX where the processor has it.
    #[inline(always)]
    fn prepare_body(&mut self, efc: &Efc, cones: &[Cone], p: &[f64], ma: &[f64], qfrc_smooth: &[f64], jar: &[f64]) {
        let mut g1 = 0.0;
        let mut g2 = 0.0;
        for ((pk, mv), (ma, qs)) in p.iter().zip(&self.mv).zip(ma.iter().zip(qfrc_smooth)) {
            g1 += pk * (ma - qs);
            g2 += pk * mv;
        }
        self.quad_gauss = [0.0, g1, 0.5 * g2];
        for ((q, &x), (&v, &d)) in self.quad.iter_mut().zip(jar).zip(self.jv.iter().zip(&efc.d)) {
            *q = [0.5 * d * x * x, d * x * v, 0.5 * d * v * v];
        }
        for (k, c) in cones.iter().enumerate() {
            let i = c.row;
            let (mut uu, mut uv, mut vv) = (0.0, 0.0, 0.0);
            for j in 1..c.dim {
                let q = self.quad[i + j];
                self.quad[i][0] += q[0];
                self.quad[i][1] += q[1];
                self.quad[i][2] += q[2];
                let (u, v) = (c.friction[j - 1] * jar[i + j], c.friction[j - 1] * self.jv[i + j]);
                uu += u * u;
                uv += u * v;
                vv += v * v;
            }
            let (u0, v0) = (c.mu * jar[i], c.mu * self.jv[i]);
            let dm = middle_weight(efc.d[i], c.mu);
            let t0 = uu.sqrt();
            let cost0 = match zone(u0, t0, c.mu) {
                Zone::Top => 0.0,
                Zone::Bottom => self.quad[i][0],
                Zone::Middle => 0.5 * dm * (u0 - c.mu * t0).powi(2),
            };
            self.cone[k] = [u0, v0, uu, uv, vv, dm, t0, cost0];
        }
    }
    // ANCHOR_END: prepare

    // ANCHOR: eval
    /// MuJoCo's `PrimalEval`: `phi`, `phi'`, `phi''` at `alpha`, summed row by row.
    pub fn eval(&mut self, efc: &Efc, cones: &[Cone], jar: &[f64], alpha: f64) -> Point {
        crate::sparse::with_avx(
            #[inline(always)]
            || self.eval_body(efc, cones, jar, alpha),
        )
    }

    /// The body of [`Self::eval`], compiled for AVX where the processor has it.
    #[inline(always)]
    fn eval_body(&mut self, efc: &Efc, cones: &[Cone], jar: &[f64], alpha: f64) -> Point {
        let (ne, nf, n) = (efc.ne, efc.nf, efc.nefc());
        // quadratic pieces are summed first, then evaluated once: [constant, linear, quadratic]
        let mut total = self.quad_gauss;
        let (mut cost, mut d1, mut d2) = (0.0, 0.0, 0.0);
        let mut k = 0;
        let mut i = 0;
        // bounded: i grows by 1 or by a cone's dim
        while i < n {
            let q = self.quad[i];
            if i < ne {
                total[1] += q[1];
                total[2] += q[2];
            } else if i < ne + nf {
                let (start, v) = (jar[i], self.jv[i]);
                let x = start + alpha * v;
                let (eta, r, d) = (efc.frictionloss[i], efc.r[i], efc.d[i]);
                cost += friction_loss_cost(x, eta, r, d) - friction_loss_cost(start, eta, r, d);
                let rf = r * eta;
                if x <= -rf {
                    d1 -= eta * v;
                } else if x >= rf {
                    d1 += eta * v;
                } else {
                    d1 += d * x * v;
                    d2 += d * v * v;
                }
            } else if efc.efc_type[i] == EfcType::ContactElliptic {
                let c = &cones[k];
                let (pc, pd1, pd2) = cone_piece(&self.cone[k], &q, c.mu, alpha);
                cost += pc;
                d1 += pd1;
                d2 += pd2;
                k += 1;
                i += c.dim;
                continue;
            } else {
                let x = jar[i] + alpha * self.jv[i];
                let cost0 = if jar[i] < 0.0 { q[0] } else { 0.0 };
                if x < 0.0 {
                    total[0] += q[0] - cost0;
                    total[1] += q[1];
                    total[2] += q[2];
                } else {
                    cost -= cost0;
                }
            }
            i += 1;
        }
        cost += alpha * alpha * total[2] + alpha * total[1] + total[0];
        d1 += 2.0 * alpha * total[2] + total[1];
        d2 += 2.0 * total[2];
        self.neval += 1;
        Point {
            alpha,
            cost,
            d1,
            // phi is convex (M > 0); guard the Newton steps against rounding
            d2: if d2 > 0.0 { d2 } else { mjMINVAL },
        }
    }
    // ANCHOR_END: eval

    // ANCHOR: search
    /// MuJoCo's `PrimalSearch`: Newton steps on `phi'` with a bracket, until
    /// `|phi'| < gtol = tolerance |p| / scale`, at most `max_eval` evaluations (at least two).
    /// 1. A Newton step from 0 to `p1`; done if `|phi'(p1)| < gtol` and it decreases the cost
    ///    (or `p1` is 0 itself).
    /// 2. One-sided: while `p1` lies on the same side of the minimum as the step came from
    ///    (`phi'` still pointing on by more than `gtol`), `p2 <- p1` and `p1` moves by another
    ///    Newton step; done when `p1` converges.
    /// 3. Bracketed between `p1` and `p2` (`phi'` of opposite signs): each pass evaluates the
    ///    midpoint and takes, of the three candidates (the Newton points from `p1` and from
    ///    `p2`, the midpoint), the converged one of least cost; otherwise each bracket end moves
    ///    to the candidate on its side whose `|phi'|` is smaller (`Self::update_bracket`),
    ///    with a new Newton point from it; when neither end moves, the midpoint is returned.
    /// 4. Out of evaluations: the better bracket end if it decreases the cost, else alpha = 0.
    ///
    /// Returns alpha = 0 (the solver then stops) only for `|p| < mjMINVAL` or in case 4. Call
    /// after [`Self::prepare`].
    #[allow(clippy::too_many_arguments)]
    pub fn search(
        &mut self,
        efc: &Efc,
        cones: &[Cone],
        jar: &[f64],
        pnorm: f64,
        scale: f64,
        tolerance: f64,
        max_eval: usize,
    ) -> SearchResult {
        self.neval = 0;
        let none = SearchResult {
            alpha: 0.0,
            improvement: 0.0,
            slope: 0.0,
            neval: 0,
        };
        if pnorm < mjMINVAL {
            return none;
        }
        let gtol = tolerance * pnorm / scale;
        let done = |p: Point, neval: usize| SearchResult {
            alpha: p.alpha,
            improvement: -p.cost,
            slope: p.d1.abs() * scale / pnorm,
            neval,
        };
        let newton = |p: &Point| p.alpha - p.d1 / p.d2;
        let p0 = self.eval(efc, cones, jar, 0.0);
        let mut p1 = self.eval(efc, cones, jar, newton(&p0));
        if p1.d1.abs() < gtol && (p1.alpha == 0.0 || p1.cost < 0.0) {
            return done(p1, self.neval);
        }
        // one-sided: Newton steps while p1 stays on the side the step came from
        let dir = if p1.d1 < 0.0 { 1.0 } else { -1.0 };
        let mut p2 = p0;
        // bounded by max_eval
        while p1.d1 * dir <= -gtol && self.neval < max_eval {
            p2 = p1;
            p1 = self.eval(efc, cones, jar, newton(&p1));
            if p1.d1.abs() < gtol && p1.cost < 0.0 {
                return done(p1, self.neval);
            }
        }
        if self.neval >= max_eval {
            return done(p1, self.neval);
        }
        // bracketed: p1 and p2 hold phi' of opposite signs
        let mut p2next = p1;
        let mut p1next = self.eval(efc, cones, jar, newton(&p1));
        // bounded by max_eval: every pass evaluates at least once
        while self.neval < max_eval {
            let pmid = self.eval(efc, cones, jar, 0.5 * (p1.alpha + p2.alpha));
            let candidates = [p1next, p2next, pmid];
            let mut best: Option<Point> = None;
            for c in candidates {
                if c.d1.abs() < gtol && best.is_none_or(|b| c.cost < b.cost) {
                    best = Some(c);
                }
            }
            if let Some(b) = best {
                return done(b, self.neval);
            }
            let moved1 = self.update_bracket(efc, cones, jar, &mut p1, &candidates, &mut p1next);
            let moved2 = self.update_bracket(efc, cones, jar, &mut p2, &candidates, &mut p2next);
            if !moved1 && !moved2 {
                // the bracket is as small as rounding allows
                return done(pmid, self.neval);
            }
        }
        if p1.cost <= p2.cost && p1.cost < 0.0 {
            done(p1, self.neval)
        } else if p2.cost <= p1.cost && p2.cost < 0.0 {
            done(p2, self.neval)
        } else {
            SearchResult {
                neval: self.neval,
                ..none
            }
        }
    }

    /// One end `p` of the bracket moves to each candidate in turn that lies on its side
    /// (`phi'` of the same sign) closer to the minimum (smaller `|phi'|`); if it moved, `next`
    /// becomes the Newton point from it (one evaluation). Returns whether `p` moved (MuJoCo's
    /// `updateBracket`).
    #[allow(clippy::too_many_arguments)]
    fn update_bracket(
        &mut self,
        efc: &Efc,
        cones: &[Cone],
        jar: &[f64],
        p: &mut Point,
        candidates: &[Point; 3],
        next: &mut Point,
    ) -> bool {
        let mut moved = false;
        for c in candidates {
            if (p.d1 < 0.0 && c.d1 < 0.0 && p.d1 < c.d1) || (p.d1 > 0.0 && c.d1 > 0.0 && p.d1 > c.d1) {
                *p = *c;
                moved = true;
            }
        }
        if moved {
            *next = self.eval(efc, cones, jar, p.alpha - p.d1 / p.d2);
        }
        moved
    }
    // ANCHOR_END: search
}

// ANCHOR: cone_piece
/// One elliptic cone's contribution to `phi(alpha)` (cost change from alpha = 0), `phi'`,
/// `phi''`. Along the line `N(alpha) = U_0 + alpha V_0` and
/// `T(alpha) = sqrt(U.U + 2 alpha U.V + alpha^2 V.V)`; the middle zone's cost
/// `1/2 Dm (N - mu T)^2` is differentiated exactly, and when both ends lie in the middle zone the
/// cost change is written without cancellation: `T - T_0 = (T^2 - T_0^2) / (T + T_0)`.
#[inline(always)]
fn cone_piece(c: &[f64; 8], q: &[f64; 3], mu: f64, alpha: f64) -> (f64, f64, f64) {
    let [u0, v0, uu, uv, vv, dm, t0, cost0] = *c;
    let n = u0 + alpha * v0;
    let t2 = uu + alpha * (2.0 * uv + alpha * vv);
    let t = t2.max(0.0).sqrt();
    let z0 = zone(u0, t0, mu);
    match zone(n, t, mu) {
        Zone::Top => (-cost0, 0.0, 0.0),
        Zone::Bottom => {
            let c = q[0] + alpha * q[1] + alpha * alpha * q[2];
            (c - cost0, q[1] + 2.0 * alpha * q[2], 2.0 * q[2])
        }
        Zone::Middle => {
            let gap = n - mu * t;
            let dcost = if z0 == Zone::Middle {
                let dt = alpha * (2.0 * uv + alpha * vv) / (t + t0);
                let dgap = alpha * v0 - mu * dt;
                0.5 * dm * dgap * (2.0 * (u0 - mu * t0) + dgap)
            } else {
                0.5 * dm * gap * gap - cost0
            };
            let t1 = (uv + alpha * vv) / t;
            let tt = (vv - t1 * t1) / t;
            let g1 = v0 - mu * t1;
            (dcost, dm * gap * g1, dm * (g1 * g1 - gap * mu * tt))
        }
    }
}
// ANCHOR_END: cone_piece
