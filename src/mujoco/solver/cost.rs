//! The constraint cost `s(x)` of the reduced primal problem, row by row, at `x = J a - aref`
//! (MuJoCo's `mj_constraintUpdate`): its value, the force `f = -ds/dx`, the state of each row,
//! and for elliptic cones the 3 zones and the cone Hessian. Shared by Newton, CG, the line
//! search, the warm start and the inverse dynamics. Book: "Solvers", table of the row costs
//! (spec section 6.1).

use super::super::collision::MjContact;
use super::super::constraint::{Efc, EfcState, EfcType};
use crate::error::{Error, Result};

/// One elliptic-cone contact: rows `row .. row + dim` of the `efc_*` arrays (normal first).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cone {
    /// First row (the normal row; MuJoCo's `efc_address`).
    pub row: usize,
    /// Number of rows: 3, 4 or 6.
    pub dim: usize,
    /// Index of the contact in `efc.contacts` (`efc_id` of the rows).
    pub contact: usize,
    /// Regularized friction `mu` of the normal direction ([`regularized_mu`]).
    pub mu: f64,
    /// `friction[0 .. dim-1]`: `mu_j` of tangent, spin and rolling rows.
    pub friction: [f64; 5],
}

/// MuJoCo's `con->mu`, the regularized friction of an elliptic contact whose first row is `row`,
/// recomputed from the rows: `mu_reg = mu_1 sqrt(R_{row+1} / R_row)` (`mj_makeImpedance`; equal
/// to `mu_1 / sqrt(impratio)` for rows built by MuJoCo's rule `R_{row+1} = R_row / impratio`).
pub fn mu_from_r(efc: &Efc, row: usize, contact: &MjContact) -> f64 {
    contact.friction[0] * (efc.r[row + 1] / efc.r[row]).sqrt()
}

/// The regularized friction the solvers use for contact `c` (first row `row`): `efc.mu[c]` as the
/// constraint rows stored it, or [`mu_from_r`] when `efc.mu` is empty (rows built by hand).
pub fn regularized_mu(efc: &Efc, row: usize, c: usize) -> f64 {
    if efc.mu.len() == efc.contacts.len() {
        efc.mu[c]
    } else {
        mu_from_r(efc, row, &efc.contacts[c])
    }
}

/// The elliptic cones of `efc`, checked: every block of `ContactElliptic` rows names a contact of
/// `efc.contacts` with `dim` 3, 4 or 6, has exactly `dim` consecutive rows with that id, positive
/// friction and a positive regularized `mu`; `efc.mu` is empty or has one entry per contact.
pub fn cones(efc: &Efc) -> Result<Vec<Cone>> {
    let mut out = Vec::new();
    cones_into(efc, &mut out)?;
    Ok(out)
}

/// [`cones`] into `out` (cleared first, its storage reused).
pub fn cones_into(efc: &Efc, out: &mut Vec<Cone>) -> Result<()> {
    out.clear();
    let n = efc.nefc();
    if !efc.mu.is_empty() && efc.mu.len() != efc.contacts.len() {
        return Err(Error::BadLength {
            what: "efc mu (one per contact)".into(),
            got: efc.mu.len(),
            expected: efc.contacts.len(),
        });
    }
    let mut i = 0;
    // bounded: i grows by at least 1 each pass
    while i < n {
        if efc.efc_type[i] != EfcType::ContactElliptic {
            i += 1;
            continue;
        }
        let bad = |why: String| Error::InvalidArgument {
            what: format!("efc row {i} (elliptic contact)"),
            why,
        };
        if i < efc.ne + efc.nf {
            return Err(bad(
                "contact rows must follow the equality and friction-loss rows".into()
            ));
        }
        let c = efc.efc_id[i];
        let con = efc
            .contacts
            .get(c)
            .ok_or_else(|| bad(format!("efc_id {c} is not a contact (ncon = {})", efc.contacts.len())))?;
        let dim = con.dim;
        if ![3, 4, 6].contains(&dim) {
            return Err(bad(format!(
                "contact {c} has dim {dim}; an elliptic cone has dim 3, 4 or 6"
            )));
        }
        if i + dim > n || (i..i + dim).any(|k| efc.efc_type[k] != EfcType::ContactElliptic || efc.efc_id[k] != c) {
            return Err(bad(format!(
                "contact {c} needs {dim} consecutive elliptic rows with efc_id {c}"
            )));
        }
        let mut friction = [0.0; 5];
        for j in 0..dim - 1 {
            let mu = con.friction[j];
            if !(mu > 0.0 && mu.is_finite()) {
                return Err(Error::BadParameter {
                    what: format!("contact {c} friction[{j}]"),
                    value: mu,
                    why: "an elliptic cone needs positive friction".into(),
                });
            }
            friction[j] = mu;
        }
        let mu = regularized_mu(efc, i, c);
        if !(mu > 0.0 && mu.is_finite()) {
            return Err(Error::BadParameter {
                what: format!("contact {c} regularized friction mu"),
                value: mu,
                why: "an elliptic cone needs a positive mu".into(),
            });
        }
        out.push(Cone {
            row: i,
            dim,
            contact: c,
            mu,
            friction,
        });
        i += dim;
    }
    Ok(())
}

/// The three zones of an elliptic cone in the scaled coordinates `N = mu x_0`,
/// `T = |(mu_j x_j)_j|` (spec 6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// `N >= mu T`: the relative acceleration points into the cone, no cost.
    Top,
    /// `mu N + T <= 0`: inside the dual cone's opposite, quadratic in every row.
    Bottom,
    /// In between: the cost `1/2 Dm (N - mu T)^2`.
    Middle,
}

// ANCHOR: zone
/// Which zone `(N, T)` lies in; `T = 0` falls in the top zone for `N >= 0` and in the bottom
/// zone for `N < 0`, as the two tests below already say.
pub fn zone(n: f64, t: f64, mu: f64) -> Zone {
    if n >= mu * t {
        Zone::Top
    } else if mu * n + t <= 0.0 {
        Zone::Bottom
    } else {
        Zone::Middle
    }
}
// ANCHOR_END: zone

/// The middle-zone weight `Dm = D_0 / (mu^2 (1 + mu^2))`.
pub fn middle_weight(d0: f64, mu: f64) -> f64 {
    d0 / (mu * mu * (1.0 + mu * mu))
}

/// The Huber cost of a friction-loss row with bound `eta`: quadratic `1/2 D x^2` for
/// `|x| < R eta`, linear `eta |x| - 1/2 R eta^2` outside.
pub fn friction_loss_cost(x: f64, eta: f64, r: f64, d: f64) -> f64 {
    let rf = r * eta;
    if x <= -rf {
        -0.5 * r * eta * eta - eta * x
    } else if x >= rf {
        -0.5 * r * eta * eta + eta * x
    } else {
        0.5 * d * x * x
    }
}

// ANCHOR: update
/// MuJoCo's `mj_constraintUpdate`: at `jar = J a - aref` fills `force` (`f = -ds/dx`) and `state`
/// of every row and returns the constraint cost `s(jar)`; with `hessians` (one 6 x 6 row-major
/// block per cone, only the leading `dim x dim` used) also the cone Hessians of contacts in the
/// middle zone. Row ranges follow MuJoCo: rows `< ne` are equalities, rows `< ne + nf` friction
/// loss, the rest limits and contacts. Inputs are assumed valid (lengths `nefc`, `cones` from
/// [`cones`]); allocates nothing.
pub fn update(
    efc: &Efc,
    cones: &[Cone],
    jar: &[f64],
    force: &mut [f64],
    state: &mut [EfcState],
    hessians: Option<&mut [[f64; 36]]>,
) -> f64 {
    crate::sparse::with_avx(
        #[inline(always)]
        || update_body(efc, cones, jar, force, state, hessians),
    )
}

/// The body of [`update`], compiled for AVX where the processor has it.
#[inline(always)]
fn update_body(
    efc: &Efc,
    cones: &[Cone],
    jar: &[f64],
    force: &mut [f64],
    state: &mut [EfcState],
    mut hessians: Option<&mut [[f64; 36]]>,
) -> f64 {
    let (ne, nf, n) = (efc.ne, efc.nf, efc.nefc());
    let (d, r, eta) = (&efc.d, &efc.r, &efc.frictionloss);
    // the rows in order, kind by kind: each kind's run is one loop without tests of the row's
    // kind (the sum s still takes the rows' costs one after the other)
    let mut s = 0.0;
    // equality: always quadratic
    for i in 0..ne {
        let x = jar[i];
        s += 0.5 * d[i] * x * x;
        force[i] = -d[i] * x;
        state[i] = EfcState::Quadratic;
    }
    // friction loss: linear beyond +-R eta
    for i in ne..ne + nf {
        let x = jar[i];
        let rf = r[i] * eta[i];
        s += friction_loss_cost(x, eta[i], r[i], d[i]);
        (force[i], state[i]) = if x <= -rf {
            (eta[i], EfcState::LinearNeg)
        } else if x >= rf {
            (-eta[i], EfcState::LinearPos)
        } else {
            (-d[i] * x, EfcState::Quadratic)
        };
    }
    // limits and contacts: runs of one-sided rows, each elliptic cone after its run
    let mut i = ne + nf;
    for next in cones.iter().enumerate().map(Some).chain([None]) {
        // limit, frictionless or pyramidal: one-sided
        let end = next.map_or(n, |(_, c)| c.row);
        for (((&x, &di), f), st) in jar[i..end]
            .iter()
            .zip(&d[i..end])
            .zip(&mut force[i..end])
            .zip(&mut state[i..end])
        {
            if x >= 0.0 {
                *f = 0.0;
                *st = EfcState::Satisfied;
            } else {
                s += 0.5 * di * x * x;
                *f = -di * x;
                *st = EfcState::Quadratic;
            }
        }
        let Some((k, cone)) = next else { break };
        let (i0, dim) = (cone.row, cone.dim);
        let (mu, fr) = (cone.mu, &cone.friction);
        // scaled coordinates: U_0 = mu x_0, U_j = mu_j x_j
        let mut u = [0.0; 6];
        u[0] = mu * jar[i0];
        let mut t2 = 0.0;
        for j in 1..dim {
            u[j] = fr[j - 1] * jar[i0 + j];
            t2 += u[j] * u[j];
        }
        let (nn, t) = (u[0], t2.sqrt());
        let st = match zone(nn, t, mu) {
            Zone::Top => {
                force[i0..i0 + dim].fill(0.0);
                EfcState::Satisfied
            }
            Zone::Bottom => {
                for j in i0..i0 + dim {
                    s += 0.5 * d[j] * jar[j] * jar[j];
                    force[j] = -d[j] * jar[j];
                }
                EfcState::Quadratic
            }
            Zone::Middle => {
                let dm = middle_weight(d[i0], mu);
                let gap = nn - mu * t;
                s += 0.5 * dm * gap * gap;
                // f = -ds/dx = -diag(mu, mu_j) ds/dU
                force[i0] = -dm * gap * mu;
                for j in 1..dim {
                    force[i0 + j] = -force[i0] / t * u[j] * fr[j - 1];
                }
                if let Some(h) = hessians.as_deref_mut() {
                    cone_hessian(&u, nn, t, mu, fr, dm, dim, &mut h[k]);
                }
                EfcState::Cone
            }
        };
        state[i0..i0 + dim].fill(st);
        i = i0 + dim;
    }
    s
}
// ANCHOR_END: update

// ANCHOR: cone_hessian
/// The Hessian `d^2 s / dx^2` of a cone in the middle zone (spec 6.1): `Dm S H~ S` with
/// `S = diag(mu, mu_1, ..)`, `H~_00 = 1`, `H~_0j = -mu U_j / T`,
/// `H~_jk = (mu^2 - mu N / T) delta_jk + mu N U_j U_k / T^3`. Written into the leading
/// `dim x dim` of the row-major `h`.
#[allow(clippy::too_many_arguments)]
pub fn cone_hessian(u: &[f64; 6], n: f64, t: f64, mu: f64, fr: &[f64; 5], dm: f64, dim: usize, h: &mut [f64; 36]) {
    let scale = |j: usize| if j == 0 { mu } else { fr[j - 1] };
    for a in 0..dim {
        for b in 0..dim {
            let ht = match (a, b) {
                (0, 0) => 1.0,
                (0, j) | (j, 0) => -mu * u[j] / t,
                (j, k) => {
                    let diag = if j == k { mu * mu - mu * n / t } else { 0.0 };
                    diag + mu * n * u[j] * u[k] / (t * t * t)
                }
            };
            h[a * dim + b] = dm * scale(a) * ht * scale(b);
        }
    }
}
// ANCHOR_END: cone_hessian

/// The Gauss term `1/2 (a - a_s)^T M (a - a_s) = 1/2 (M a - qfrc_smooth)^T (a - a_s)` from
/// `ma = M a`.
pub fn gauss(ma: &[f64], qfrc_smooth: &[f64], qacc: &[f64], qacc_smooth: &[f64]) -> f64 {
    let mut g = 0.0;
    for k in 0..ma.len() {
        g += (ma[k] - qfrc_smooth[k]) * (qacc[k] - qacc_smooth[k]);
    }
    0.5 * g
}
