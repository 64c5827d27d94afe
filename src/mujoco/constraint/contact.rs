//! Contact rows (MuJoCo's `mj_instantiateContact`, spec 3.6): frictionless, pyramidal and
//! elliptic cones from a list of contacts. Book chapter: "The constraint model", sections
//! "Contacts" and "Friction cones".

use super::equality::refsafe;
use super::impedance::SolParams;
use super::invweight::Invweight;
use super::jacobian::{chain_union, jac_dif_column, tree_com};
use super::rows::{GroupKind, NewGroup, Rows, Scratch};
use super::EfcType;
use crate::error::{Error, Result};
use crate::model::constants::mjMINMU;
use crate::model::{Cone, Model};
use crate::mujoco::collision::MjContact;
use crate::mujoco::Data;
use crate::spatial::{Mat3, Vec3};
use std::fmt::Write;

/// Checks one contact at the door: geoms of the model, `dim` in {1, 3, 4, 6}, friction
/// non-negative and finite, position, frame, distance and parameters finite.
pub fn check_contact(model: &Model, k: usize, c: &MjContact) -> Result<()> {
    let bad = |why: String| Error::BadContact { index: k, why };
    if c.geom.iter().any(|&g| g >= model.geoms.len()) {
        return Err(bad(format!(
            "geoms {:?} out of range (the model has {})",
            c.geom,
            model.geoms.len()
        )));
    }
    if !matches!(c.dim, 1 | 3 | 4 | 6) {
        return Err(bad(format!("condim {} is not 1, 3, 4 or 6", c.dim)));
    }
    // one pass without early exit; the message then names the first bad coefficient
    let friction_ok = c.friction.iter().fold(true, |ok, f| ok & (*f >= 0.0) & f.is_finite());
    if !friction_ok {
        let f = c
            .friction
            .iter()
            .find(|f| !(**f >= 0.0 && f.is_finite()))
            .copied()
            .unwrap_or(f64::NAN);
        return Err(bad(format!("friction {f} must be finite and >= 0")));
    }
    // x * 0 is 0 for a finite x and NaN otherwise: one sum, no early exit
    let zeros = |xs: &[f64]| xs.iter().fold(0.0, |a, x| a + x * 0.0);
    let finite = zeros(c.pos.as_slice())
        + zeros(c.frame.as_slice())
        + zeros(&c.solref)
        + zeros(&c.solreffriction)
        + zeros(&c.solimp)
        + zeros(&[c.dist, c.margin, c.gap])
        == 0.0;
    if !finite {
        return Err(bad(
            "position, frame, distance, margin, gap, solref and solimp must be finite".into(),
        ));
    }
    Ok(())
}

// ANCHOR: contact_rows
/// Appends the rows of every contact, in order (spec 3.6). Friction coefficients below
/// `mjMINMU` are raised to it first, in the stored contact too, as MuJoCo's contacts hold them. With `b0`, `b1` the bodies of the two
/// geoms, the relative-velocity matrix `S` (6 x nv, contact frame) has rows `frame (Jp(b1, pos) -
/// Jp(b0, pos))` (normal, tangent 1, tangent 2) and `frame (Jr(b1) - Jr(b0))` (spin, roll 1,
/// roll 2). A contact of dimension `n` makes
/// - `n = 1`: one frictionless row `S0`;
/// - pyramidal: for `k = 1..n-1` the edge pair `S0 + mu_k S_k`, `S0 - mu_k S_k`, every row with
///   `efc_pos = dist`, `efc_margin = margin - gap`;
/// - elliptic: the rows `S0 .. S_{n-1}`, the first with `efc_pos = dist` and the margin, the
///   others 0.
///
/// `A-hat` from `tran = iw(b0).tran + iw(b1).tran` and `rot` likewise: `tran` for the normal
/// and the sliding rows, `rot` for spin and rolling, and `tran + mu_k^2 (tran or rot)` for a
/// pyramid's edge pair `k`. Every contact gets rows (MuJoCo never drops one for an all-zero
/// Jacobian in dense mode) except those in the gap, `dist >= margin - gap`
/// ([`MjContact::exclude`]), whose `efc_address` stays `None`.
pub(crate) fn contact_rows(model: &Model, d: &Data, inv: &Invweight, s: &mut Scratch, rows: &mut Rows) -> Result<()> {
    let cone = model.opt.cone;
    // the bodies of the last contact given rows: its merged chain is still in `s`
    let mut pair = None;
    for k in 0..rows.efc.contacts.len() {
        check_contact(model, k, &rows.efc.contacts[k])?;
        // a contact in the gap (dist >= margin - gap) is kept in the list without rows
        if rows.efc.contacts[k].exclude() {
            rows.efc.contacts[k].efc_address = None;
            continue;
        }
        // MuJoCo's contacts hold friction >= mjMINMU (mj_assignFriction): a zero coefficient
        // would give an infinite R to its elliptic row
        for f in rows.efc.contacts[k].friction.iter_mut() {
            *f = f.max(mjMINMU);
        }
        let c = rows.efc.contacts[k].clone();
        let (b0, b1) = (model.geoms[c.geom[0]].body, model.geoms[c.geom[1]].body);
        // the rows live on the dofs of the two chains (`nc` of them), MuJoCo's structural
        // pattern of a contact row; consecutive contacts of one pair of bodies (a box on a box
        // touches at up to 4 points) share it
        if pair != Some((b0, b1)) {
            chain_union(model, b1, b0, &mut s.bodies, &mut s.chains, &mut s.side);
            pair = Some((b0, b1));
        }
        let (chains, side) = (&s.chains[..], &s.side[..]);
        let nc = chains.len();
        let (off1, off0) = (c.pos - tree_com(d, b1), c.pos - tree_com(d, b0));
        let rows_of_s =
            |dim: usize, out: &mut [f64]| contact_jacobian(d, chains, side, &off1, &off0, &c.frame, dim, out);
        let (i0, i1) = (inv.body[model.mj_body[b0]], inv.body[model.mj_body[b1]]);
        let (tran, rot) = (i0[0] + i1[0], i0[1] + i1[1]);
        let params = rows.sanitize(
            SolParams {
                solref: c.solref,
                solreffriction: c.solreffriction,
                solimp: c.solimp,
            },
            model.opt.timestep,
            refsafe(model),
            |s: &mut String| {
                let _ = write!(s, "contact {k}");
            },
        );
        let m = c.includemargin();
        rows.efc.contacts[k].efc_address = Some(rows.efc.nefc());
        // the group's numbers; its Jacobian goes straight into the rows' storage
        let group = |efc_type, pos, margin, diag| NewGroup {
            efc_type,
            id: k,
            jac: &[],
            pos,
            margin,
            frictionloss: 0.0,
            diag,
            kind: GroupKind::Plain,
            params,
        };
        if c.dim == 1 {
            let (pos, margin, diag) = ([c.dist], [m], [tran]);
            rows.add_on_cols(
                group(EfcType::ContactFrictionless, &pos, &margin, &diag),
                chains,
                |out| rows_of_s(1, out),
            );
            continue;
        }
        let n = c.dim;
        match cone {
            Cone::Pyramidal => {
                // S (n rows of nc) in scratch, then the 2 (n - 1) edges S0 +- mu_k S_k
                let sm = &mut s.rows[..n * nc];
                rows_of_s(n, sm);
                let sm = &s.rows[..n * nc];
                let ne = 2 * (n - 1);
                let mut pyr = [0.0; 10];
                for kk in 1..n {
                    let mu = c.friction[kk - 1];
                    let w = tran + mu * mu * if kk - 1 < 2 { tran } else { rot };
                    pyr[2 * kk - 2] = w;
                    pyr[2 * kk - 1] = w;
                }
                let (pos, margin) = ([c.dist; 10], [m; 10]);
                let g = group(EfcType::ContactPyramidal, &pos[..ne], &margin[..ne], &pyr[..ne]);
                rows.add_on_cols(g, chains, |jac| {
                    let (s0, sk) = sm.split_at(nc);
                    for kk in 1..n {
                        let mu = c.friction[kk - 1];
                        let sk = &sk[(kk - 1) * nc..kk * nc];
                        let (plus, minus) = jac[(2 * kk - 2) * nc..2 * kk * nc].split_at_mut(nc);
                        for (((p, q), a), b) in plus.iter_mut().zip(minus.iter_mut()).zip(s0).zip(sk) {
                            *p = a + mu * b;
                            *q = a + (-mu) * b;
                        }
                    }
                });
            }
            Cone::Elliptic => {
                let mut pos = [0.0; 6];
                let mut margin = [0.0; 6];
                pos[0] = c.dist;
                margin[0] = m;
                let diag: [f64; 6] = std::array::from_fn(|j| if j < 3 { tran } else { rot });
                let g = group(EfcType::ContactElliptic, &pos[..n], &margin[..n], &diag[..n]);
                rows.add_on_cols(g, chains, |out| rows_of_s(n, out));
            }
        }
    }
    Ok(())
}

/// The first `dim` rows of a contact's relative-velocity matrix `S` on its merged chain
/// `chains` (with `side`, [`chain_union`]), row-major, `chains.len()` numbers per row, into
/// `out`: `frame (Jp(b1, pos) - Jp(b0, pos))` (normal, tangent 1, tangent 2) and, for `dim > 3`,
/// `frame (Jr(b1) - Jr(b0))` (spin, roll 1, roll 2), with `off1 = pos - c1`, `off0 = pos - c0`.
#[allow(clippy::too_many_arguments)]
fn contact_jacobian(
    d: &Data,
    chains: &[usize],
    side: &[u8],
    off1: &Vec3,
    off0: &Vec3,
    f: &Mat3,
    dim: usize,
    out: &mut [f64],
) {
    // the same code with the condim a constant, so that the loops over the rows unroll
    match dim {
        1 => contact_jacobian_body(d, chains, side, off1, off0, f, 1, out),
        3 => contact_jacobian_body(d, chains, side, off1, off0, f, 3, out),
        4 => contact_jacobian_body(d, chains, side, off1, off0, f, 4, out),
        6 => contact_jacobian_body(d, chains, side, off1, off0, f, 6, out),
        _ => contact_jacobian_body(d, chains, side, off1, off0, f, dim, out),
    }
}

/// The body of [`contact_jacobian`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn contact_jacobian_body(
    d: &Data,
    chains: &[usize],
    side: &[u8],
    off1: &Vec3,
    off0: &Vec3,
    f: &Mat3,
    dim: usize,
    out: &mut [f64],
) {
    let nc = chains.len();
    let out = &mut out[..dim * nc];
    for (t, (&k, &sd)) in chains.iter().zip(side).enumerate() {
        // S column k: frame (Jp(b1) - Jp(b0)) and, for dim > 3, frame (Jr(b1) - Jr(b0))
        let (dp, dr) = jac_dif_column(d, k, sd, off1, off0);
        for r in 0..dim.min(3) {
            out[r * nc + t] = f[(r, 0)] * dp[0] + f[(r, 1)] * dp[1] + f[(r, 2)] * dp[2];
        }
        for r in 3..dim {
            out[r * nc + t] = f[(r - 3, 0)] * dr[0] + f[(r - 3, 1)] * dr[1] + f[(r - 3, 2)] * dr[2];
        }
    }
}
// ANCHOR_END: contact_rows
