//! The velocity derivative `D = d(qfrc_passive + qfrc_actuator - qfrc_bias) / d qvel` of
//! MuJoCo's implicit integrators (`mjd_smooth_vel`) and the factorizations of `M - h D`
//! (`mj_implicit`, `mj_Euler` with implicit damping).
//!
//! | MuJoCo | here |
//! |---|---|
//! | `mjd_passive_vel` (dof and tendon damping) | [`qderiv`] |
//! | `mjd_actuator_vel` (gain and bias velocity terms) | [`qderiv`] |
//! | `mjd_rne_vel` (`-d qfrc_bias / d qvel`: `mjd_comVel`, then the differentiated RNE) | [`rne_vel`] with [`RneVel`]; [`rne_vel_fd`] the difference reference |
//! | `mju_factorLUSparse`, `mju_solveLUSparse` (reverse order, no fill-in) | [`lu_reverse_tree_in_place`], [`lu_reverse_tree_solve`] (on the pattern); [`lu_reverse_in_place`], [`lu_reverse_solve`] (dense loops, the reference) |
//! | `mj_factorI`/`mj_solveLD` on `M - h sym(D)` (implicitfast) | [`crate::sparse::factor_i_in_place`], [`crate::sparse::solve_ld`] |
//! | `mjd_freeMhat` (implicitfast: standalone free bodies keep their gyroscopic term) | [`standalone_free_joints`] |
//!
//! `D` is stored dense but only on MuJoCo's pattern: entry `(i, j)` exists when dof `j` is an
//! ancestor or a descendant of dof `i` (`D_rownnz`, `D_colind`); terms that couple two
//! branches (a tendon across them) are dropped, as MuJoCo drops them. On this pattern the
//! reverse-order elimination creates no fill-in. Book chapter: "Integrators and the simulation
//! loop".

use super::com::{mj_com_pos, mj_com_vel};
use crate::dynamics::{muscle_gain_vel, rnea_with, Actuation, Workspace};
use crate::error::{Error, Result};
use crate::model::{BiasType, DynType, GainType, JointType, Model};
use crate::sparse::{is_ancestor_or_self, MjLayout};
use crate::spatial::{skew, Force, Mat3, Motion, Vec3};
use nalgebra::DMatrix;

/// Whether `(i, j)` is on MuJoCo's pattern of `qDeriv`: one dof is an ancestor of the other.
pub fn on_pattern(model: &Model, i: usize, j: usize) -> bool {
    let p = &model.dof_parent;
    is_ancestor_or_self(p, i, j) || is_ancestor_or_self(p, j, i)
}

/// [`on_pattern`] for every entry, row-major (nv x nv), computed once per model.
pub fn pattern(model: &Model) -> Vec<bool> {
    let n = model.nv;
    (0..n * n).map(|k| on_pattern(model, k / n, k % n)).collect()
}

/// Scratch of [`rne_vel`], made once per model: the com-based quantities at the state
/// (`cdof`, `cdof_dot`, `cinert`, `cvel`) and the derivatives of the recursion ([`RneChains`]).
#[derive(Clone, Debug)]
pub struct RneVel {
    /// `mj_comPos` and `mj_comVel` at the state: `cdof`, `cdof_dot`, `cinert`, `cvel`.
    pub data: super::Data,
    /// The derivatives of the recursion.
    pub chains: RneChains,
}

/// The derivatives of [`rne_vel`]'s recursion, each stored per Featherstone body `i` only for
/// the columns that can be nonzero, the dofs of the chain from the root to `i` (ancestors
/// first, then `i`'s own): a body's velocity depends on no other dof. The chain of `i` is its
/// parent's chain followed by `i`'s dofs, so copying the parent's columns is a prefix copy.
#[derive(Clone, Debug)]
pub struct RneChains {
    /// Where body `i`'s columns start in the per-body buffers (nbody + 1).
    chain_adr: Vec<usize>,
    /// How many dofs the chain root..i has (nbody + 1; 0 for the world).
    chain_len: Vec<usize>,
    /// Where dof `j`'s columns of `D cdof_dot_j` start (nv); it has its body's chain length.
    dofdot_adr: Vec<usize>,
    /// The dof of every column of every chain, concatenated.
    chain_dofs: Vec<usize>,
    /// `D cvel_i = d cvel_i / d qvel`, per body and chain column.
    dcvel: Vec<Motion>,
    /// `D cacc_i`, per body and chain column.
    dcacc: Vec<Motion>,
    /// `D cfrc_body_i`, per body and chain column; after the backward pass the subtree sums.
    dcfrc: Vec<Force>,
    /// `D cdof_dot_j`, per dof and chain column of its body.
    dcdofdot: Vec<Motion>,
}

impl RneVel {
    /// Storage for `model` (allocates once; [`rne_vel`] allocates nothing).
    pub fn new(model: &Model) -> Result<Self> {
        let nb = model.nb;
        let (mut chain_adr, mut chain_len) = (vec![0; nb + 1], vec![0; nb + 1]);
        let mut chain_dofs = Vec::new();
        for i in 1..=nb {
            let p = model.lambda[i];
            chain_adr[i] = chain_dofs.len();
            chain_len[i] = chain_len[p] + model.dofs(i).len();
            let parent: Vec<usize> = chain_dofs[chain_adr[p]..chain_adr[p] + chain_len[p]].to_vec();
            chain_dofs.extend(parent);
            chain_dofs.extend(model.dofs(i));
        }
        let mut dofdot_adr = vec![0; model.nv];
        let mut n = 0;
        for (j, adr) in dofdot_adr.iter_mut().enumerate() {
            *adr = n;
            n += chain_len[model.dof_body[j]];
        }
        let total = chain_dofs.len();
        Ok(RneVel {
            data: super::Data::new(model)?,
            chains: RneChains {
                chain_adr,
                chain_len,
                dofdot_adr,
                chain_dofs,
                dcvel: vec![Motion::zero(); total],
                dcacc: vec![Motion::zero(); total],
                dcfrc: vec![Force::zero(); total],
                dcdofdot: vec![Motion::zero(); n],
            },
        })
    }
}

// ANCHOR: rne_vel
/// `-d qfrc_bias / d qvel` added into `d` (MuJoCo's `mjd_rne_vel`, the term only `implicit`
/// keeps): the derivative of the com-based RNE ([`super::com::mj_rne`]) with respect to `qvel`,
/// by the same recursion differentiated. Every quantity is linear in its velocity arguments, so
/// with `D x` the 6 x nv matrix `d x / d qvel` (one spatial vector per column):
/// 1. `mjd_comVel` (root to leaves): `D cvel_i = D cvel_parent + sum_j cdof_j e_j^T` over the
///    body's dofs, and `D cdof_dot_j = D(cvel x cdof_j) = (D cvel) x cdof_j` column by column,
///    with the velocity `mj_comVel` uses for that dof (before the joint's own motion; a free
///    joint's rotations see its translation; a planar joint's slides leave out its own spin);
/// 2. root to leaves: `D cacc_i = D cacc_parent + sum_j (cdof_dot_j e_j^T + qvel_j D cdof_dot_j)`
///    (gravity is constant), then `D cfrc_i = I_i D cacc_i + (D cvel_i) x* (I_i cvel_i) +
///    cvel_i x* (I_i D cvel_i)`, the product rule on `I a + v x* I v`;
/// 3. leaves to root: `D cfrc_parent += D cfrc_i`, and `d(r, c) -= cdof_r . D cfrc_body(r)[:, c]`.
///
/// Columns are kept only for the dofs of the chain root..i (the rest are zero), so step 3 writes
/// exactly MuJoCo's pattern ([`on_pattern`]): for dof `r` of body `b`, column `c` of the chain of
/// `b` gives `(r, c)`, and the same subtree sum read at `r`'s own column gives `(c, r)`. Work is
/// `O(sum over bodies of the chain length)`, one recursion instead of `2 nv` RNEA passes.
///
/// `d` is dense (the reference) or a [`TreeMatrix`] (the integrators' storage).
///
/// Kernel: `q` (unit quaternions) and `v` are assumed valid; `rv` is [`RneVel::new`] of `model`.
pub fn rne_vel(model: &Model, rv: &mut RneVel, q: &[f64], v: &[f64], d: &mut impl DerivSink) -> Result<()> {
    mj_com_pos(model, &mut rv.data, q)?;
    rne_vel_at_pos(model, rv, v, d);
    Ok(())
}

/// [`rne_vel`] after `mj_com_pos` at the state already ran on `rv.data`.
pub fn rne_vel_at_pos(model: &Model, rv: &mut RneVel, v: &[f64], d: &mut impl DerivSink) {
    mj_com_vel(model, &mut rv.data, v);
    rne_vel_of(model, &rv.data, &mut rv.chains, v, d);
}

/// [`rne_vel`]'s recursion on com-based quantities `data` that `mj_com_pos` and `mj_com_vel`
/// have already computed at the state (the integrators pass the forward pass's own, so that
/// nothing is computed twice); `chains` is the scratch of an [`RneVel`] of `model`.
pub fn rne_vel_of(model: &Model, data: &super::Data, chains: &mut RneChains, v: &[f64], d: &mut impl DerivSink) {
    let RneChains {
        chain_adr,
        chain_len,
        dofdot_adr,
        chain_dofs,
        dcvel,
        dcacc,
        dcfrc,
        dcdofdot,
    } = chains;
    let (cdof, cdof_dot) = (&data.cdof, &data.cdof_dot);
    for i in 1..=model.nb {
        let p = model.lambda[i];
        let (adr, len, padr, plen) = (chain_adr[i], chain_len[i], chain_adr[p], chain_len[p]);
        let base = model.v_adr[i];
        // 1. D cvel_i starts as the parent's; the body's own columns start at zero
        for k in 0..len {
            dcvel[adr + k] = if k < plen { dcvel[padr + k] } else { Motion::zero() };
        }
        // D cdof_dot_j = (D cvel) x cdof_j with the running D cvel of mj_comVel; then add cdof_j
        // in column j (own column index `plen + j - base`)
        let dofdot = |dcvel: &[Motion], dcdofdot: &mut [Motion], j: usize, spin: Option<Motion>| {
            let o = dofdot_adr[j];
            for k in 0..len {
                let mut w = dcvel[adr + k];
                if let (Some(s), true) = (spin, k == plen) {
                    w -= s; // planar: the slides leave out the joint's own spin (column `base`)
                }
                dcdofdot[o + k] = w.cross_motion(&cdof[j]);
            }
        };
        let nj = model.dofs(i).len();
        match model.joints[i].jtype {
            JointType::Free => {
                for j in base..base + 3 {
                    dofdot(dcvel, dcdofdot, j, None);
                }
                for j in base..base + 3 {
                    dcvel[adr + plen + j - base] += cdof[j];
                }
                for j in base + 3..base + 6 {
                    dofdot(dcvel, dcdofdot, j, None);
                }
                for j in base + 3..base + 6 {
                    dcvel[adr + plen + j - base] += cdof[j];
                }
            }
            JointType::Planar => {
                dofdot(dcvel, dcdofdot, base, None);
                let spin = Motion::new(cdof[base].w, Vec3::zeros());
                for j in base + 1..base + 3 {
                    dofdot(dcvel, dcdofdot, j, Some(spin));
                }
                for j in base..base + 3 {
                    dcvel[adr + plen + j - base] += cdof[j];
                }
            }
            _ => {
                for j in base..base + nj {
                    dofdot(dcvel, dcdofdot, j, None);
                }
                for j in base..base + nj {
                    dcvel[adr + plen + j - base] += cdof[j];
                }
            }
        }
        // 2. D cacc_i = D cacc_parent + sum_j (cdof_dot_j e_j^T + qvel_j D cdof_dot_j)
        for k in 0..len {
            dcacc[adr + k] = if k < plen { dcacc[padr + k] } else { Motion::zero() };
        }
        for j in base..base + nj {
            dcacc[adr + plen + j - base] += cdof_dot[j];
            let o = dofdot_adr[j];
            for k in 0..len {
                let add = dcdofdot[o + k] * v[j];
                dcacc[adr + k] += add;
            }
        }
        // D cfrc_i = I D cacc + (D cvel) x* (I cvel) + cvel x* (I D cvel)
        let inertia = &data.cinert_fb[i];
        let cvel = data.cvel_fb[i];
        let h = inertia.mul_motion(&cvel);
        for k in 0..len {
            let dv = dcvel[adr + k];
            dcfrc[adr + k] =
                inertia.mul_motion(&dcacc[adr + k]) + dv.cross_force(&h) + cvel.cross_force(&inertia.mul_motion(&dv));
        }
    }
    // 3. leaves to root: subtree sums on the parent's chain columns, then the projections
    for i in (1..=model.nb).rev() {
        let p = model.lambda[i];
        if p > 0 {
            let (adr, padr) = (chain_adr[i], chain_adr[p]);
            for k in 0..chain_len[p] {
                let f = dcfrc[adr + k];
                dcfrc[padr + k] += f;
            }
        }
    }
    for b in 1..=model.nb {
        let (adr, len) = (chain_adr[b], chain_len[b]);
        let plen = chain_len[model.lambda[b]];
        for r in model.dofs(b) {
            let kr = plen + r - model.v_adr[b];
            for k in 0..len {
                let c = chain_dofs[adr + k];
                d.sub(r, c, cdof[r].dot(&dcfrc[adr + k]));
                if k < plen {
                    d.sub(c, r, cdof[c].dot(&dcfrc[adr + kr]));
                }
            }
        }
    }
}
// ANCHOR_END: rne_vel

// ANCHOR: rne_vel_fd
/// The reference [`rne_vel`] is tested against: `-d qfrc_bias / d qvel` by differences of RNEA,
/// added into `d` on MuJoCo's pattern. The bias `c(q, v) = RNEA(q, v, 0)` is a quadratic form
/// in `v` plus gravity, `c(v) = g + Q(v, v)` with `Q` symmetric bilinear (every velocity product
/// in the recursion, `v x I v`, `v x v_J`, `c_J`, is a product of two velocities). So its
/// derivative along `e_j`, `2 Q(v, e_j)`, is exactly `(c(v + s e_j) - c(v - s e_j)) / (2 s)` for
/// every `s > 0` (the polarization identity), up to rounding: two RNEA passes per column;
/// `s = max(1, |v|)` keeps the two evaluations of the same size as `c(v)`.
///
/// Kernel: lengths are the model's; `plus`, `minus`, `vp` are scratch of length nv; `pat` is
/// [`pattern`].
#[allow(clippy::too_many_arguments)]
pub fn rne_vel_fd(
    model: &Model,
    ws: &mut Workspace,
    q: &[f64],
    v: &[f64],
    zeros: &[f64],
    vp: &mut [f64],
    plus: &mut [f64],
    minus: &mut [f64],
    pat: &[bool],
    d: &mut DMatrix<f64>,
) {
    let nv = model.nv;
    let s = v.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    for j in 0..model.nv {
        vp.copy_from_slice(v);
        vp[j] = v[j] + s;
        rnea_with(model, ws, q, vp, zeros, None, plus);
        vp[j] = v[j] - s;
        rnea_with(model, ws, q, vp, zeros, None, minus);
        for i in 0..nv {
            if pat[i * nv + j] {
                d[(i, j)] -= (plus[i] - minus[i]) / (2.0 * s);
            }
        }
    }
}
// ANCHOR_END: rne_vel_fd

// ANCHOR: qderiv
/// MuJoCo's `mjd_smooth_vel` without the bias term, written into `d` (nv x nv, cleared first):
/// - dof damping: `-damping` on the diagonal;
/// - tendon damping: `-b J^T J` with `J` the tendon's row of `ten_J`;
/// - actuators (unless the force sits on a `forcerange` bound): `J^T (dbias/dldot +
///   dgain/dldot * input) J` with `J` the moment row, `dbias/dldot = biasprm[2]` (affine bias),
///   `dgain/dldot = gainprm[2]` (affine gain) or `mjd_muscleGain_vel` (muscle gain,
///   [`muscle_gain_vel`]), `input` the (clamped) ctrl or the act.
///
/// Entries off MuJoCo's pattern (`pat`, from [`pattern`]) are left out. The fluid forces' derivative
/// (`mjd_inertiaBoxFluid`) is not included: models with `density` or `viscosity` are refused
/// by the implicit integrators. `ten_j` is the tendons' `ten_J` (ntendon x nv).
pub fn qderiv(
    model: &Model,
    act_out: &Actuation,
    ten_j: Option<&DMatrix<f64>>,
    ctrl: &[f64],
    act: &[f64],
    pat: &[bool],
    d: &mut DMatrix<f64>,
) {
    d.fill(0.0);
    let nv = model.nv;
    let add_jtbj = |d: &mut DMatrix<f64>, row: &dyn Fn(usize) -> f64, b: f64| {
        for i in 0..nv {
            let ri = row(i);
            if ri == 0.0 {
                continue;
            }
            for j in 0..nv {
                if pat[i * nv + j] {
                    d[(i, j)] += ri * b * row(j);
                }
            }
        }
    };
    velocity_terms(model, act_out, ten_j, ctrl, act, |b, row| match row {
        Term::Dof(dof) => d[(dof, dof)] += b,
        Term::Row(row) => add_jtbj(d, row, b),
    });
}

/// One term of `qDeriv` for [`velocity_terms`]: `b` on a dof's diagonal, or `b J^T J` for a row
/// `J` given entry by entry.
pub enum Term<'a> {
    /// `b` at `(dof, dof)`.
    Dof(usize),
    /// `b J^T J` with `J_c = row(c)`.
    Row(&'a dyn Fn(usize) -> f64),
}

/// The terms of MuJoCo's `mjd_smooth_vel` without the bias, in its order, each handed to `add`
/// with its coefficient: dof damping (`-damping` on the diagonal), tendon damping (`-b` times
/// the tendon's row of `ten_J`), and each actuator not held at a `forcerange` bound (the
/// velocity gain of `actuator_velocity_gain` times its moment row). [`qderiv`] and
/// [`qderiv_tree`] are this walk with two storages.
pub fn velocity_terms(
    model: &Model,
    act_out: &Actuation,
    ten_j: Option<&DMatrix<f64>>,
    ctrl: &[f64],
    act: &[f64],
    mut add: impl FnMut(f64, Term<'_>),
) {
    for i in 1..=model.nb {
        for dof in model.dofs(i) {
            add(-model.joints[i].damping, Term::Dof(dof));
        }
    }
    if let Some(tj) = ten_j {
        for (t, ten) in model.tendons.iter().enumerate() {
            if ten.damping != 0.0 {
                add(-ten.damping, Term::Row(&|c| tj[(t, c)]));
            }
        }
    }
    let mut ia = 0;
    for (k, a) in model.actuators.iter().enumerate() {
        let input = if a.dyntype == DynType::None {
            if model.opt.disabled("clampctrl") {
                ctrl[k]
            } else {
                crate::dynamics::clamped_ctrl(a, ctrl[k])
            }
        } else {
            ia += 1;
            act[ia - 1]
        };
        if act_out.clamped[k] {
            continue;
        }
        let b = actuator_velocity_gain(a, act_out, k, input);
        if b != 0.0 {
            add(b, Term::Row(&|c| act_out.moment[(k, c)]));
        }
    }
}
// ANCHOR_END: qderiv

/// Where [`rne_vel`] and [`qderiv_tree`] write: `d(i, j) -= x` for `(i, j)` on MuJoCo's
/// pattern ([`on_pattern`]).
pub trait DerivSink {
    /// `d(i, j) -= x`.
    fn sub(&mut self, i: usize, j: usize, x: f64);
}

impl DerivSink for DMatrix<f64> {
    fn sub(&mut self, i: usize, j: usize, x: f64) {
        self[(i, j)] -= x;
    }
}

// ANCHOR: tree_matrix
/// An nv x nv matrix on MuJoCo's `qDeriv` pattern (entry `(i, j)` when one dof is an ancestor
/// of the other), stored in the legacy layout of the whole ancestor pattern
/// ([`Model::mj_layout_tree`], MuJoCo's `D` pattern, which keeps the rows of simple dofs whole:
/// a derivative couples a simple body's dofs where `M` does not) twice: `lower[s]`
/// is `(i, col[s])` for the slots `s` of row `i` (the diagonal at `dof_madr[i]`, then the
/// ancestors nearest first), `upper[s]` is the transposed entry `(col[s], i)` (`upper` at the
/// diagonal slots is unused). This is the pattern of `M` plus that of `D` (the two are the same
/// here, but for the rows of simple dofs, which `M` keeps shortened): `M - h D` lives in it with
/// no other storage, and its reverse-order LU creates no fill-in
/// ([`lu_tree_in_place`]). The slot of a pair needs no search: if `j` is an ancestor of `i`, it
/// is `i`'s `(depth(i) - depth(j))`-th ancestor, slot `dof_madr[i] + depth(i) - depth(j)`.
///
/// Terms of a tendon or actuator that couple two branches fall off this pattern and are dropped,
/// as MuJoCo drops them (MuJoCo 4.0's `nD` for two hinges on separate bodies joined by a damped
/// fixed tendon is 2: its `qDeriv` has the diagonal only).
#[derive(Clone, Debug, PartialEq)]
pub struct TreeMatrix {
    /// Row entries: `(i, col[s])`, size `nM`.
    pub lower: Vec<f64>,
    /// Transposed entries: `(col[s], i)`, size `nM` (diagonal slots unused, zero).
    pub upper: Vec<f64>,
}

impl TreeMatrix {
    /// Zeros in `model`'s tree layout ([`Model::mj_layout_tree`]).
    pub fn new(model: &Model) -> Self {
        let nm = model.mj_layout_tree().nm;
        TreeMatrix {
            lower: vec![0.0; nm],
            upper: vec![0.0; nm],
        }
    }

    /// `(lower or upper, slot)` of the pair `(i, j)`, which must be on the pattern.
    #[inline]
    fn slot(layout: &MjLayout, i: usize, j: usize) -> (bool, usize) {
        let (di, dj) = (layout.dof_depth[i], layout.dof_depth[j]);
        if dj <= di {
            debug_assert!(dj < di || i == j, "({i}, {j}) off the pattern");
            (false, layout.dof_madr[i] + di - dj)
        } else {
            (true, layout.dof_madr[j] + dj - di)
        }
    }

    /// Entry `(i, j)`: zero off the pattern.
    pub fn get(&self, model: &Model, i: usize, j: usize) -> f64 {
        if !on_pattern(model, i, j) {
            return 0.0;
        }
        match Self::slot(model.mj_layout_tree(), i, j) {
            (false, s) => self.lower[s],
            (true, s) => self.upper[s],
        }
    }

    /// The dense matrix (zeros off the pattern), for tests and printing.
    pub fn to_dense(&self, model: &Model) -> DMatrix<f64> {
        DMatrix::from_fn(model.nv, model.nv, |i, j| self.get(model, i, j))
    }

    /// Sets every entry to zero.
    pub fn clear(&mut self) {
        self.lower.fill(0.0);
        self.upper.fill(0.0);
    }
}

/// Entry `(i, j)` of a symmetric matrix in the legacy layout `qm` of `layout` (`M` in
/// [`Model::mj_layout`]): zero for a pair the layout does not store (not one dof an ancestor of
/// the other, or dropped from the row of a simple dof).
pub fn legacy_entry(layout: &MjLayout, qm: &[f64], i: usize, j: usize) -> f64 {
    let (i, j) = if i >= j { (i, j) } else { (j, i) };
    let a = layout.dof_madr[i];
    layout.col[a..=a + layout.dof_depth[i]]
        .iter()
        .position(|&c| c == j)
        .map_or(0.0, |t| qm[a + t])
}

/// `M(i, a_t)`, `a_t` the t-th ancestor of dof `i` in the dof tree (`t = 0`: the diagonal): slot
/// `t` of row `i` of `qm` (in `m_layout`, [`Model::mj_layout`]) when the row stores it, zero when
/// the row is a simple dof's, shortened to its diagonal (MuJoCo's `mapM2D` leaves those entries
/// of `qLU` at zero).
#[inline]
fn m_tree_entry(m_layout: &MjLayout, qm: &[f64], i: usize, t: usize) -> f64 {
    if t <= m_layout.dof_depth[i] {
        qm[m_layout.dof_madr[i] + t]
    } else {
        0.0
    }
}

// ANCHOR: m_minus_hd
/// `M - h D` on the tree pattern (the implicit integrator's `qLU` before its factorization):
/// MuJoCo's `mju_gatherMasked(qLU, M, mapM2D)` then `qLU -= h qDeriv`. `M` is `qm` in
/// [`Model::mj_layout`], `D` and `out` are on [`Model::mj_layout_tree`]; the entries a simple
/// dof's row does not store are zero in `M`. Kernel: sizes are the model's.
pub fn m_minus_hd(model: &Model, qm: &[f64], d: &TreeMatrix, h: f64, out: &mut TreeMatrix) {
    let (m_layout, tree) = (model.mj_layout(), model.mj_layout_tree());
    for i in 0..model.nv {
        let b = tree.dof_madr[i];
        for t in 0..=tree.dof_depth[i] {
            let m = m_tree_entry(m_layout, qm, i, t);
            out.lower[b + t] = m - h * d.lower[b + t];
            out.upper[b + t] = m - h * d.upper[b + t];
        }
    }
}

/// `M - h (D + D^T) / 2` on `M`'s own pattern (the implicitfast integrator's `qH`): MuJoCo's
/// `mju_gather(qH, qDeriv, mapD2M)` then `qH = M - h qH`, with `qDeriv` symmetrized. `qm` and
/// `qh` are in [`Model::mj_layout`], `d` on [`Model::mj_layout_tree`]: row `i`'s slots are the
/// first slots of its tree row, and a simple dof keeps only its diagonal. Kernel: sizes are the
/// model's.
pub fn m_minus_h_sym_d(model: &Model, qm: &[f64], d: &TreeMatrix, h: f64, qh: &mut [f64]) {
    let (m_layout, tree) = (model.mj_layout(), model.mj_layout_tree());
    for i in 0..model.nv {
        let (a, b) = (m_layout.dof_madr[i], tree.dof_madr[i]);
        qh[a] = qm[a] - h * d.lower[b];
        for t in 1..=m_layout.dof_depth[i] {
            // the symmetrized derivative, (D + D^T) / 2
            qh[a + t] = qm[a + t] - h * 0.5 * (d.lower[b + t] + d.upper[b + t]);
        }
    }
}
// ANCHOR_END: m_minus_hd

/// [`TreeMatrix`] with its layout, as a [`DerivSink`].
pub struct TreeSink<'a> {
    /// The layout of `m` ([`Model::mj_layout_tree`]).
    pub layout: &'a MjLayout,
    /// The matrix written.
    pub m: &'a mut TreeMatrix,
}

impl DerivSink for TreeSink<'_> {
    #[inline]
    fn sub(&mut self, i: usize, j: usize, x: f64) {
        match TreeMatrix::slot(self.layout, i, j) {
            (false, s) => self.m.lower[s] -= x,
            (true, s) => self.m.upper[s] -= x,
        }
    }
}
// ANCHOR_END: tree_matrix

// ANCHOR: qderiv_tree
/// [`qderiv`] into a [`TreeMatrix`] (cleared first): the same terms, each written to its slot.
/// A rank-one term `b J^T J` walks, for every dof `i` with `J_i != 0`, the diagonal and `i`'s
/// ancestors `j` (the slots of row `i`), adding `J_i b J_j` at `(i, j)` and `J_j b J_i` at
/// `(j, i)`: every pair on the pattern once, in `O(nnz(J) depth)` instead of `O(nv^2)`.
pub fn qderiv_tree(
    model: &Model,
    act_out: &Actuation,
    ten_j: Option<&DMatrix<f64>>,
    ctrl: &[f64],
    act: &[f64],
    d: &mut TreeMatrix,
) {
    d.clear();
    let layout = model.mj_layout_tree();
    let add_jtbj = |d: &mut TreeMatrix, row: &dyn Fn(usize) -> f64, b: f64| {
        for i in 0..model.nv {
            let ri = row(i);
            if ri == 0.0 {
                continue;
            }
            let adr = layout.dof_madr[i];
            d.lower[adr] += ri * b * ri;
            for s in adr + 1..adr + 1 + layout.dof_depth[i] {
                let rj = row(layout.col[s]);
                d.lower[s] += ri * b * rj;
                d.upper[s] += rj * b * ri;
            }
        }
    };
    velocity_terms(model, act_out, ten_j, ctrl, act, |b, row| match row {
        Term::Dof(dof) => d.lower[layout.dof_madr[dof]] += b,
        Term::Row(row) => add_jtbj(d, row, b),
    });
}
// ANCHOR_END: qderiv_tree

/// `d force / d actuator_velocity` of actuator `k` (`mjd_actuator_vel`): the affine bias's
/// `biasprm[2]`, plus the affine gain's `gainprm[2]` or the muscle gain's derivative times the
/// input.
fn actuator_velocity_gain(a: &crate::model::Actuator, act_out: &Actuation, k: usize, input: f64) -> f64 {
    let mut b = 0.0;
    if a.biastype == BiasType::Affine {
        b += a.biasprm[2];
    }
    if a.gaintype == GainType::Affine {
        b += a.gainprm[2] * input;
    } else if a.gaintype == GainType::Muscle {
        let (l, v) = (act_out.length[k], act_out.velocity[k]);
        b += muscle_gain_vel(l, v, &a.lengthrange, act_out.acc0[k], &a.gainprm) * input;
    }
    b
}

// ANCHOR: lu_tree
/// MuJoCo's `mju_factorLUSparse` on a [`TreeMatrix`], in place: [`lu_reverse_tree_in_place`]
/// with every entry at its slot. For pivot `k` (last to first), the entries `(i, k)` above it
/// are `upper` at `k`'s ancestor slots, the entries `(k, j)` left of it `lower` at the same
/// slots; `(i, j)` for `i`, `j` the `t`-th and `t2`-th ancestors of `k` is `i`'s
/// `(t2 - t)`-th ancestor slot (`lower`) when `t2 > t`, `j`'s `(t - t2)`-th (`upper`) when
/// `t2 < t`, the diagonal when equal. Same operations in the same order as the dense loops, so
/// the factor is bitwise theirs. `what` names the matrix in the error raised on a zero pivot.
pub fn lu_tree_in_place(layout: &MjLayout, a: &mut TreeMatrix, what: &str) -> Result<()> {
    for k in (0..layout.nv).rev() {
        let dk = layout.dof_madr[k];
        let depth = layout.dof_depth[k];
        let pivot = a.lower[dk];
        if pivot == 0.0 || !pivot.is_finite() {
            return Err(Error::ZeroPivot {
                what: what.to_string(),
                index: k,
                value: pivot,
            });
        }
        for t in 1..=depth {
            a.upper[dk + t] /= pivot;
            let f = a.upper[dk + t];
            if f == 0.0 {
                continue;
            }
            let madr_i = layout.col_madr[dk + t];
            for t2 in 1..=depth {
                let akj = a.lower[dk + t2];
                if t2 > t {
                    a.lower[madr_i + t2 - t] -= f * akj;
                } else if t2 < t {
                    a.upper[layout.col_madr[dk + t2] + t - t2] -= f * akj;
                } else {
                    a.lower[madr_i] -= f * akj;
                }
            }
        }
    }
    Ok(())
}

/// Solves `A x = b` in place with the factor of [`lu_tree_in_place`] (`mju_solveLUSparse`):
/// `U y = b` column by column from the last, then `L x = y` row by row from the first.
pub fn lu_tree_solve(layout: &MjLayout, lu: &TreeMatrix, x: &mut [f64]) {
    for j in (0..layout.nv).rev() {
        let dj = layout.dof_madr[j];
        let xj = x[j];
        for s in dj + 1..dj + 1 + layout.dof_depth[j] {
            x[layout.col[s]] -= lu.upper[s] * xj;
        }
    }
    for i in 0..layout.nv {
        let di = layout.dof_madr[i];
        let mut s = x[i];
        for t in di + 1..di + 1 + layout.dof_depth[i] {
            s -= lu.lower[t] * x[layout.col[t]];
        }
        x[i] = s / lu.lower[di];
    }
}
// ANCHOR_END: lu_tree

/// The implicit integrators' refusal of what [`qderiv`] leaves out: the fluid model.
pub fn check_implicit_supported(model: &Model) -> Result<()> {
    if model.opt.density > 0.0 || model.opt.viscosity > 0.0 {
        return Err(Error::Unsupported {
            what: "the implicit and implicitfast integrators with fluid forces (density or viscosity)".into(),
            why: "the derivative of the fluid forces (mjd_inertiaBoxFluid) is not implemented".into(),
        });
    }
    Ok(())
}

// ANCHOR: lu_reverse
/// MuJoCo's `mju_factorLUSparse` on a dense matrix: Gaussian elimination without pivoting from
/// the last row and column to the first, in place: `A = U L` with `U` unit upper triangular
/// (its strict upper part stored) and `L` lower triangular (stored with its diagonal). Row
/// `k`'s entries left of the diagonal are ancestors of dof k, so the update of row `i`
/// (an ancestor) touches only ancestors of k, which are all on the pattern: no fill-in.
/// `what` names the matrix in the error raised on a zero pivot.
pub fn lu_reverse_in_place(a: &mut DMatrix<f64>, what: &str) -> Result<()> {
    let n = a.nrows();
    for k in (0..n).rev() {
        let pivot = a[(k, k)];
        if pivot == 0.0 || !pivot.is_finite() {
            return Err(Error::ZeroPivot {
                what: what.to_string(),
                index: k,
                value: pivot,
            });
        }
        for i in 0..k {
            if a[(i, k)] == 0.0 {
                continue;
            }
            a[(i, k)] /= pivot;
            let f = a[(i, k)];
            for j in 0..k {
                let akj = a[(k, j)];
                if akj != 0.0 {
                    a[(i, j)] -= f * akj;
                }
            }
        }
    }
    Ok(())
}

/// Solves `A x = b` in place with the factor of [`lu_reverse_in_place`] (`mju_solveLUSparse`):
/// `U y = b` from the last row up, then `L x = y` from the first row down.
pub fn lu_reverse_solve(lu: &DMatrix<f64>, x: &mut [f64]) {
    let n = lu.nrows();
    for i in (0..n).rev() {
        let mut s = x[i];
        for j in i + 1..n {
            s -= lu[(i, j)] * x[j];
        }
        x[i] = s;
    }
    for i in 0..n {
        let mut s = x[i];
        for j in 0..i {
            s -= lu[(i, j)] * x[j];
        }
        x[i] = s / lu[(i, i)];
    }
}
// ANCHOR_END: lu_reverse

// ANCHOR: lu_reverse_tree
/// [`lu_reverse_in_place`] touching only MuJoCo's pattern, as `mju_factorLUSparse` does with its
/// sparse rows: the entries of column `k` above the diagonal and of row `k` left of it are the
/// ancestors of dof `k`, so both loops walk the parent chain (`parent` is `dof_parent`) instead
/// of scanning all of `0..k`. The work is the sum over dofs of the squared depth (the same as the
/// dense loop on a chain, far less on a branched tree). Every entry receives the same operations
/// as in [`lu_reverse_in_place`], one subtraction per `(i, j)` per `k`, so the factors are
/// bitwise equal; entries off the pattern are neither read nor written.
pub fn lu_reverse_tree_in_place(a: &mut DMatrix<f64>, parent: &[Option<usize>], what: &str) -> Result<()> {
    for k in (0..a.nrows()).rev() {
        let pivot = a[(k, k)];
        if pivot == 0.0 || !pivot.is_finite() {
            return Err(Error::ZeroPivot {
                what: what.to_string(),
                index: k,
                value: pivot,
            });
        }
        let mut up = parent[k];
        while let Some(i) = up {
            a[(i, k)] /= pivot;
            let f = a[(i, k)];
            if f != 0.0 {
                let mut left = parent[k];
                while let Some(j) = left {
                    a[(i, j)] -= f * a[(k, j)];
                    left = parent[j];
                }
            }
            up = parent[i];
        }
    }
    Ok(())
}

/// Solves `A x = b` in place with the factor of [`lu_reverse_tree_in_place`], on the pattern
/// only: `U y = b` column by column from the last (column `j`'s entries above the diagonal are
/// `j`'s ancestors), then `L x = y` row by row from the first (row `i`'s entries left of the
/// diagonal are `i`'s ancestors).
pub fn lu_reverse_tree_solve(lu: &DMatrix<f64>, parent: &[Option<usize>], x: &mut [f64]) {
    for j in (0..lu.nrows()).rev() {
        let xj = x[j];
        let mut up = parent[j];
        while let Some(i) = up {
            x[i] -= lu[(i, j)] * xj;
            up = parent[i];
        }
    }
    for i in 0..lu.nrows() {
        let mut s = x[i];
        let mut left = parent[i];
        while let Some(j) = left {
            s -= lu[(i, j)] * x[j];
            left = parent[j];
        }
        x[i] = s / lu[(i, i)];
    }
}
// ANCHOR_END: lu_reverse_tree

/// The first dof of every standalone free body's joint (MuJoCo's `mj_isFreeBody`: a free
/// joint on a child of the world with no children). `implicitfast` solves these 6 x 6 blocks
/// apart, with the gyroscopic derivative it drops elsewhere (`mjd_freeMhat`).
pub fn standalone_free_joints(model: &Model) -> Vec<usize> {
    (1..=model.nb)
        .filter(|&i| {
            model.joints[i].jtype == JointType::Free
                && model.lambda[i] == 0
                && !(1..=model.nb).any(|c| model.lambda[c] == i)
        })
        .map(|i| model.v_adr[i])
        .collect()
}

// ANCHOR: free_body_bias_vel
/// `d qfrc_bias / d qvel` of a standalone free body ([`standalone_free_joints`]; Featherstone
/// body `i`), in closed form: the term `implicitfast` drops from `qDeriv` and adds back on these
/// bodies' 6 x 6 blocks (MuJoCo's `mjd_freeBias_vel`, used by `mjd_freeMhat`).
///
/// A free joint's velocity is `(v, omega_b)`: the world velocity of its anchor `p` and the
/// angular velocity in body axes, `omega = R omega_b` in world axes. With `s = xipos - p` the
/// centre of mass seen from the anchor, `m` the mass and `I_w = R I_c R^T` the rotational
/// inertia about the centre of mass in world axes, the bias force (the generalized force at
/// zero acceleration) is Newton's and Euler's equations at zero `v_dot`, `omega_dot`:
///
/// - translational rows: `c_lin = m omega x (omega x s)` (the centripetal acceleration of the
///   centre of mass);
/// - rotational rows: `c_rot = R^T (omega x I_w omega + m s x (omega x (omega x s)))` (the
///   gyroscopic torque, plus the moment of that force about the anchor).
///
/// Neither depends on `v`, so the translational columns of the derivative are zero. Along the
/// angular velocity, `d(omega x (omega x s)) = -K d omega` with
/// `K = [omega x s]_x + [omega]_x [s]_x`, `d(omega x I_w omega) = ([omega]_x I_w - [I_w omega]_x)
/// d omega`, and `d omega = R d omega_b`. Returns `[lin, rot]`, the blocks of rows
/// `lin`/`rot` and columns `omega_b`:
///
/// `lin = -m K R`, `rot = R^T ([omega]_x I_w - [I_w omega]_x - m [s]_x K) R`.
///
/// [`rne_vel`], the general recursion, gives the same block (negated, as it returns
/// `-d qfrc_bias / d qvel`); a test holds the two equal. Kernel: `data` holds `mj_com_pos` at
/// the state; `i` is a standalone free body; `omega_b` its angular velocity `qvel[adr + 3..6]`.
pub fn free_body_bias_vel(model: &Model, data: &super::Data, i: usize, omega_b: &Vec3) -> [Mat3; 2] {
    let x = &data.x_0[i];
    let r = x.e.transpose(); // body axes in world coordinates
    let s = data.xipos_fb[i] - (x.r + r * model.joints[i].pos);
    let m = model.inertia[i].m;
    let i_w = r * model.inertia[i].inertia_at_com() * x.e;
    let w = r * omega_b;
    let k = skew(&w.cross(&s)) + skew(&w) * skew(&s);
    let lin = -m * k * r;
    let rot = x.e * (skew(&w) * i_w - skew(&(i_w * w)) - m * skew(&s) * k) * r;
    [lin, rot]
}
// ANCHOR_END: free_body_bias_vel

/// `M - h D` on the 6 x 6 block of a standalone free body's dofs `adr..adr + 6` (MuJoCo's
/// `mjd_freeMhat` before its bias term): `M` from `qm` in [`Model::mj_layout`] (diagonal when the
/// body is simple), `D` the unsymmetrized `qDeriv` rows of [`qderiv_tree`]. The block couples to
/// no other dof, in `M` or in `D`.
#[inline]
pub fn free_block(model: &Model, qm: &[f64], d: &TreeMatrix, h: f64, adr: usize) -> [[f64; 6]; 6] {
    let (m_layout, tree) = (model.mj_layout(), model.mj_layout_tree());
    let mut a = [[0.0; 6]; 6];
    for r in 0..6 {
        // dof adr + c is dof adr + r's (r - c)-th ancestor: slot r - c of tree row adr + r,
        // which holds (r, c) in `lower` and (c, r) in `upper`; M's row keeps slots 0..=depth
        let row = tree.dof_madr[adr + r];
        debug_assert_eq!(tree.dof_depth[adr + r], r, "not a standalone free body");
        let (lower, upper) = (&d.lower[row..=row + r], &d.upper[row..=row + r]);
        let m_row = m_layout.dof_madr[adr + r];
        let m = &qm[m_row..=m_row + m_layout.dof_depth[adr + r]];
        for c in 0..=r {
            let t = r - c;
            let m_rc = m.get(t).copied().unwrap_or(0.0); // zero where a simple row stores nothing
            a[r][c] = m_rc - h * lower[t];
            if c < r {
                a[c][r] = m_rc - h * upper[t];
            }
        }
    }
    a
}

/// Solves the dense `n x n` system `a x = b` (small blocks) by Gaussian elimination with
/// partial pivoting, in place (`mju_factorLU6`/`mju_solveLU6` for the free-body blocks).
pub fn solve_small(a: &mut [[f64; 6]; 6], b: &mut [f64; 6]) -> Result<()> {
    let n = 6;
    for k in 0..n {
        // the pivot: the largest |a[i][k]| at or below the diagonal (the first one on ties)
        let mut p = k;
        for i in k + 1..n {
            if a[i][k].abs() > a[p][k].abs() {
                p = i;
            }
        }
        if a[p][k] == 0.0 {
            return Err(Error::ZeroPivot {
                what: "the free-body block of M - h D (implicitfast)".into(),
                index: k,
                value: 0.0,
            });
        }
        a.swap(k, p);
        b.swap(k, p);
        for i in k + 1..n {
            let f = a[i][k] / a[k][k];
            for j in k..n {
                a[i][j] -= f * a[k][j];
            }
            b[i] -= f * b[k];
        }
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s -= a[i][j] * b[j];
        }
        b[i] = s / a[i][i];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::canned;

    /// The closed form of a standalone free body's bias derivative is the general recursion's
    /// block: two free bodies with their centre of mass off the body origin, a full rotated
    /// inertia and a joint anchor off the origin, at a turned, moving state.
    #[test]
    fn free_body_bias_vel_is_the_recursion_block() {
        let xml = r#"<mujoco><worldbody>
            <body pos="0 0 1" quat="0.9 0.1 -0.3 0.2"><freejoint/>
              <inertial pos="0.1 -0.05 0.2" quat="0.8 0.3 0.1 -0.4" mass="1.7" diaginertia="0.3 0.2 0.12"/></body>
            <body pos="1 0 1"><joint type="free" pos="0.05 0.1 -0.02"/>
              <inertial pos="-0.2 0.07 0.03" mass="0.6" fullinertia="0.05 0.07 0.04 0.01 -0.005 0.008"/></body>
            </worldbody></mujoco>"#;
        let model = crate::mjcf::load_str(xml).unwrap().model;
        let free = standalone_free_joints(&model);
        assert_eq!(free.len(), 2);
        let mut q = model.qpos0.as_slice().to_vec();
        let u: Vec<f64> = (0..model.nv).map(|k| 0.9 * (k as f64 * 1.7 + 0.3).sin()).collect();
        model.integrate(&mut q, &u, 1.0).unwrap();
        let v: Vec<f64> = (0..model.nv).map(|k| 2.0 * (k as f64 * 0.8 + 0.5).cos()).collect();
        let mut rv = RneVel::new(&model).unwrap();
        let mut dense = DMatrix::zeros(model.nv, model.nv);
        rne_vel(&model, &mut rv, &q, &v, &mut dense).unwrap();
        for adr in free {
            let omega = Vec3::new(v[adr + 3], v[adr + 4], v[adr + 5]);
            let [lin, rot] = free_body_bias_vel(&model, &rv.data, model.dof_body[adr], &omega);
            let scale = dense.amax();
            for r in 0..6 {
                for c in 0..6 {
                    // rne_vel gives -d bias / d qvel
                    let want = -dense[(adr + r, adr + c)];
                    let got = match (r < 3, c < 3) {
                        (_, true) => 0.0,
                        (true, false) => lin[(r, c - 3)],
                        (false, false) => rot[(r - 3, c - 3)],
                    };
                    assert!((got - want).abs() < 1e-13 * scale, "({r}, {c}): {got} vs {want}");
                }
            }
            assert!(
                lin.amax() > 0.01 && rot.amax() > 0.01,
                "{} {}: a test that cannot fail",
                lin.amax(),
                rot.amax()
            );
        }
    }

    #[test]
    fn reverse_lu_solves_and_creates_no_fill_in() {
        let model = canned::floating_base_ball_arms();
        let n = model.nv;
        // a matrix on the pattern, diagonally dominant, unsymmetric
        let mut a = DMatrix::zeros(n, n);
        for i in 0..n {
            for j in 0..n {
                if on_pattern(&model, i, j) {
                    a[(i, j)] = if i == j {
                        10.0 + i as f64
                    } else {
                        0.3 * ((i * 7 + j * 3) as f64).sin()
                    };
                }
            }
        }
        let b: Vec<f64> = (0..n).map(|k| (k as f64 * 0.7).cos()).collect();
        let mut lu = a.clone();
        lu_reverse_in_place(&mut lu, "test").unwrap();
        for i in 0..n {
            for j in 0..n {
                if !on_pattern(&model, i, j) {
                    assert_eq!(lu[(i, j)], 0.0, "fill-in at ({i}, {j})");
                }
            }
        }
        let mut x = b.clone();
        lu_reverse_solve(&lu, &mut x);
        let r = &a * nalgebra::DVector::from_column_slice(&x) - nalgebra::DVector::from_column_slice(&b);
        assert!(r.amax() < 1e-13, "residual {}", r.amax());
        // the pattern-only factor: bitwise the dense one on the pattern, with every entry off
        // the pattern poisoned (never read, never written)
        let mut tree = a.clone();
        for i in 0..n {
            for j in 0..n {
                if !on_pattern(&model, i, j) {
                    tree[(i, j)] = f64::NAN;
                }
            }
        }
        lu_reverse_tree_in_place(&mut tree, &model.dof_parent, "test").unwrap();
        for i in 0..n {
            for j in 0..n {
                if on_pattern(&model, i, j) {
                    assert_eq!(tree[(i, j)].to_bits(), lu[(i, j)].to_bits(), "({i}, {j})");
                } else {
                    assert!(tree[(i, j)].is_nan(), "({i}, {j}) written");
                }
            }
        }
        let mut y = b.clone();
        lu_reverse_tree_solve(&tree, &model.dof_parent, &mut y);
        for k in 0..n {
            assert!(
                (y[k] - x[k]).abs() < 1e-14 * x[k].abs().max(1.0),
                "solution {k}: {} vs {}",
                y[k],
                x[k]
            );
        }
    }
}
