//! MuJoCo's compact storage of the joint-space inertia and its in-place factorization
//! (`mj_factorI`, `mj_solveLD`), in the legacy layout (MuJoCo's `qM` up to 3.10, `dof_Madr`) and in the
//! CSR layout of MuJoCo 4.0.
//!
//! This file holds the layout ([`MjLayout`] and its checked pattern [`Rows`]), the book's plain
//! listings ([`factor_rows`], [`solve_rows`], [`dot_gather`]) and the public entry points
//! ([`factor_i`], [`factor_i_in_place`], [`solve_ld`]). The fast copies the entry points run live
//! in the child module [`fast`] (`src/sparse/layout/fast.rs`): [`fast::factor_rows_fast`] (with
//! its `step::<M>`), [`fast::factor_rows_panels`] (with [`PANEL`] and [`PANELS_FROM`]), the
//! dispatch [`fast::factor_rows_dispatch`] and its AVX build [`fast::factor_rows_avx`], the vector
//! update [`fast::Simd::sub_scaled`] for [`fast::Portable`] and [`fast::Avx`], and
//! [`solve_rows_fast`] (with its `dot_gather_raw`). The tests below hold each equal to its listing
//! bit for bit.

use super::{ancestors, check_parent, depths, Counter};
use crate::error::{Error, Result};
use nalgebra::DMatrix;

mod fast;
#[cfg(target_arch = "x86_64")]
use fast::{factor_rows_avx, Avx};
use fast::{factor_rows_dispatch, solve_rows_fast, Portable, PANEL, PANELS_FROM};

/// MuJoCo's legacy sparse layout of a symmetric matrix with the ancestor pattern
/// (`mjData.qM` up to MuJoCo 3.10): row i is stored contiguously from `dof_madr[i]`, diagonal
/// first, then the ancestors of i from the nearest (the parent) to the root. Only the lower
/// triangle is stored; `nm` is the total size.
///
/// The CSR layout of MuJoCo 4.0 (`M_rownnz`, `M_rowadr`, `M_colind`) stores the same rows
/// reversed (ancestors root-first, diagonal last); `map_m2m[c]` is the legacy index of CSR
/// element c (MuJoCo's `mapM2M`).
///
/// MuJoCo 4.0 shortens the rows of simple dofs (`dof_simplenum > 0`, see
/// [`crate::model::simple_bodies`]) to their diagonal ([`MjLayout::with_simple`]). A simple dof's
/// ancestors are simple dofs of its own body and its descendants are simple too, so the shortened
/// pattern is the whole ancestor pattern of a forest: the dof tree with every simple dof cut from
/// its parent. The layout stores that forest in `dof_parentid`, and every field below describes
/// the rows as stored; the kernels need to know nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MjLayout {
    /// Number of dofs.
    pub nv: usize,
    /// Parent of each dof in the stored pattern (None = -1): MuJoCo's `dof_parentid`, except
    /// that a simple dof has none.
    pub dof_parentid: Vec<Option<usize>>,
    /// MuJoCo's `dof_simplenum`: nonzero for a simple dof, whose row holds only its diagonal
    /// (all zero for [`MjLayout::new`]).
    pub dof_simplenum: Vec<usize>,
    /// Start of each row in the legacy layout: MuJoCo's `dof_Madr` when no dof is simple; with
    /// simple dofs the shortened rows are packed, and the starts are those of MuJoCo's CSR rows
    /// (`M_rowadr`, the same rows reversed).
    pub dof_madr: Vec<usize>,
    /// Number of ancestors stored in each row (its row holds `dof_depth + 1` entries): the depth
    /// of the dof in the stored forest, which is its depth in the dof tree except for a simple
    /// dof (0).
    pub dof_depth: Vec<usize>,
    /// Size of the legacy layout: MuJoCo's `nM` when no dof is simple, `nC` (the size of
    /// MuJoCo 4.0's `M` and `qLD`) in general.
    pub nm: usize,
    /// The column of every slot of the legacy layout (size `nm`): `col[dof_madr[i]] = i`, and
    /// `col[dof_madr[i] + t]` is the t-th ancestor of i. The factorization and the solves read it
    /// instead of walking `dof_parentid`, as MuJoCo's kernels read `M_colind`: one independent
    /// load per entry instead of a chain of dependent ones.
    pub col: Vec<usize>,
    /// The start of the row of every slot's column (size `nm`): `col_madr[s] =
    /// dof_madr[col[s]]`. The factorization reads where row i begins from the slot of (k, i),
    /// as MuJoCo's `mj_factorI` reads `M_rowadr[M_colind[adr]]`, but with one load instead of two
    /// that wait on each other.
    pub col_madr: Vec<usize>,
    /// CSR: entries per row.
    pub m_rownnz: Vec<usize>,
    /// CSR: start of each row.
    pub m_rowadr: Vec<usize>,
    /// CSR: column index of each entry (ancestors ascending, then the diagonal).
    pub m_colind: Vec<usize>,
    /// CSR index -> legacy index.
    pub map_m2m: Vec<usize>,
    /// The row addresses and columns again, checked once here and private, so that nothing can
    /// change them afterwards: the fast kernels index `qLD` and `x` through them without bounds
    /// checks ([`Rows`]).
    rows: Rows,
}

/// The pattern of an [`MjLayout`] as the fast kernels ([`factor_rows_fast`](fast::factor_rows_fast),
/// [`solve_rows_fast`]) read it, with the facts they rely on proven once, when the layout is made
/// ([`Rows::new`]):
/// - `madr[k] + len[k] <= nm` and `len[k] >= 1`: row k lies inside `qLD`;
/// - for every slot s = `madr[k] + t` with `1 <= t < len[k]`: `col[s] < k`,
///   `col_madr[s] == madr[col[s]]` and `len[col[s]] == len[k] - t`: the update of step k reads
///   row k from slot s to its end and writes the whole row of `col[s]`, which has exactly that
///   length and lies wholly before row k.
///
/// The public fields of [`MjLayout`] stay what the rest of the library reads; a caller who
/// changes them changes nothing here.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rows {
    nv: usize,
    nm: usize,
    madr: Vec<usize>,
    len: Vec<usize>,
    col: Vec<usize>,
    col_madr: Vec<usize>,
    /// The pattern by columns, for the first pass of [`solve_rows_fast`]: the entries (i, j) of
    /// column j below the diagonal are `below[below_adr[j]..below_adr[j + 1]]`, each as (its slot,
    /// its row i), from the largest i down (the order in which [`solve_rows`] pushes them into
    /// x_j). Every slot is below `nm` and every row is below `nv`.
    below_adr: Vec<usize>,
    below: Vec<(usize, usize)>,
}

impl Rows {
    /// The rows of a layout, or `None` if one of the facts above fails (it never does for a
    /// layout built by [`MjLayout::new`]; the check is what lets the kernels skip theirs).
    fn new(nv: usize, nm: usize, madr: &[usize], depth: &[usize], col: &[usize], col_madr: &[usize]) -> Option<Rows> {
        let len: Vec<usize> = depth.iter().map(|d| d + 1).collect();
        if madr.len() != nv || len.len() != nv || col.len() != nm || col_madr.len() != nm {
            return None;
        }
        for k in 0..nv {
            if madr[k].checked_add(len[k])? > nm {
                return None;
            }
            for t in 1..len[k] {
                let s = madr[k] + t;
                let i = col[s];
                if i >= k || col_madr[s] != madr[i] || len[i] != len[k] - t {
                    return None;
                }
            }
        }
        // the entries below the diagonal by columns: count them, then fill each column in the
        // order the rows are visited, from the last row down
        let mut below_adr = vec![0; nv + 1];
        for k in 0..nv {
            for s in madr[k] + 1..madr[k] + len[k] {
                below_adr[col[s] + 1] += 1;
            }
        }
        for j in 0..nv {
            below_adr[j + 1] += below_adr[j];
        }
        let mut next = below_adr.clone();
        let mut below = vec![(0, 0); below_adr[nv]];
        for k in (0..nv).rev() {
            for s in madr[k] + 1..madr[k] + len[k] {
                below[next[col[s]]] = (s, k);
                next[col[s]] += 1;
            }
        }
        Some(Rows {
            nv,
            nm,
            madr: madr.to_vec(),
            len,
            col: col.to_vec(),
            col_madr: col_madr.to_vec(),
            below_adr,
            below,
        })
    }
}

impl MjLayout {
    /// The layout of the dof tree `dof_parentid`, every row whole (no dof simple).
    pub fn new(dof_parentid: &[Option<usize>]) -> Result<Self> {
        MjLayout::with_simple(dof_parentid, &vec![0; dof_parentid.len()])
    }

    // ANCHOR: with_simple
    /// The layout of the dof tree `dof_parentid` with the rows of the simple dofs
    /// (`dof_simplenum[i] > 0`, MuJoCo's `dof_simplenum`) shortened to their diagonal, as MuJoCo
    /// 4.0's `mj_makeDofDofSparse` makes `M_rownnz` and `M_colind` (its "reduced" pattern). The
    /// rows kept are those of the forest in which each simple dof is cut from its parent; that
    /// forest has the shortened pattern as its whole ancestor pattern only if no dof descends
    /// from a simple dof without being simple itself (MuJoCo's rule guarantees it: a simple body
    /// has no children and no dof above it). Errors: [`Error::BadParent`] for a parent array
    /// that is not ordered, [`Error::BadLength`] if the two arrays differ in length,
    /// [`Error::BadPattern`] naming a dof that is not simple under a simple parent.
    pub fn with_simple(dof_parentid: &[Option<usize>], dof_simplenum: &[usize]) -> Result<Self> {
        check_parent(dof_parentid)?;
        if dof_simplenum.len() != dof_parentid.len() {
            return Err(Error::BadLength {
                what: "dof_simplenum".into(),
                got: dof_simplenum.len(),
                expected: dof_parentid.len(),
            });
        }
        for (i, p) in dof_parentid.iter().enumerate() {
            if let Some(p) = *p {
                if dof_simplenum[p] > 0 && dof_simplenum[i] == 0 {
                    return Err(Error::BadPattern {
                        node: i,
                        why: format!("dof {i} is not simple but its parent dof {p} is"),
                    });
                }
            }
        }
        // the stored forest: a simple dof keeps no parent
        let cut: Vec<Option<usize>> = dof_parentid
            .iter()
            .zip(dof_simplenum)
            .map(|(&p, &s)| if s > 0 { None } else { p })
            .collect();
        let dof_parentid = &cut[..];
        let nv = dof_parentid.len();
        let depth = depths(dof_parentid);
        let mut dof_madr = vec![0; nv];
        let mut nm = 0;
        for i in 0..nv {
            dof_madr[i] = nm;
            nm += depth[i] + 1;
        }
        let mut col = Vec::with_capacity(nm);
        for i in 0..nv {
            col.push(i);
            col.extend(ancestors(dof_parentid, i));
        }
        let col_madr: Vec<usize> = col.iter().map(|&j| dof_madr[j]).collect();
        let (mut m_rownnz, mut m_rowadr, mut m_colind, mut map_m2m) =
            (vec![0; nv], vec![0; nv], Vec::with_capacity(nm), Vec::with_capacity(nm));
        for i in 0..nv {
            m_rownnz[i] = depth[i] + 1;
            m_rowadr[i] = m_colind.len();
            let anc: Vec<usize> = ancestors(dof_parentid, i).collect();
            // ascending columns: root first; the legacy slot of ancestor a_k is madr + k
            for (k, &a) in anc.iter().enumerate().rev() {
                m_colind.push(a);
                map_m2m.push(dof_madr[i] + k + 1);
            }
            m_colind.push(i);
            map_m2m.push(dof_madr[i]);
        }
        // rows of ancestors built from a checked parent array have every property `Rows` checks
        // (the unit test `rows_hold_on_random_trees` runs the check on random trees)
        let rows = Rows::new(nv, nm, &dof_madr, &depth, &col, &col_madr)
            .expect("the layout of a checked parent array has the properties of `Rows`");
        Ok(MjLayout {
            rows,
            nv,
            dof_parentid: cut,
            dof_simplenum: dof_simplenum.to_vec(),
            dof_madr,
            dof_depth: depth,
            nm,
            col,
            col_madr,
            m_rownnz,
            m_rowadr,
            m_colind,
            map_m2m,
        })
    }
    // ANCHOR_END: with_simple

    /// The legacy-layout vector of a dense symmetric matrix (reads the lower triangle).
    pub fn from_dense(&self, h: &DMatrix<f64>) -> Vec<f64> {
        let mut qm = vec![0.0; self.nm];
        for i in 0..self.nv {
            let a = self.dof_madr[i];
            qm[a] = h[(i, i)];
            for (k, j) in ancestors(&self.dof_parentid, i).enumerate() {
                qm[a + k + 1] = h[(i, j)];
            }
        }
        qm
    }

    /// The dense symmetric matrix of a legacy-layout vector.
    pub fn to_dense(&self, qm: &[f64]) -> DMatrix<f64> {
        let mut h = DMatrix::zeros(self.nv, self.nv);
        for i in 0..self.nv {
            let a = self.dof_madr[i];
            h[(i, i)] = qm[a];
            for (k, j) in ancestors(&self.dof_parentid, i).enumerate() {
                h[(i, j)] = qm[a + k + 1];
                h[(j, i)] = qm[a + k + 1];
            }
        }
        h
    }

    /// The unit lower-triangular L and the diagonal D of a legacy-layout `qLD`.
    pub fn unpack_ld(&self, qld: &[f64]) -> (DMatrix<f64>, Vec<f64>) {
        let mut l = DMatrix::identity(self.nv, self.nv);
        let mut d = vec![0.0; self.nv];
        for i in 0..self.nv {
            let a = self.dof_madr[i];
            d[i] = qld[a];
            for (k, j) in ancestors(&self.dof_parentid, i).enumerate() {
                l[(i, j)] = qld[a + k + 1];
            }
        }
        (l, d)
    }

    /// Legacy layout -> MuJoCo 4.0 CSR values.
    pub fn legacy_to_csr(&self, qm: &[f64]) -> Vec<f64> {
        self.map_m2m.iter().map(|&k| qm[k]).collect()
    }

    /// MuJoCo 4.0 CSR values -> legacy layout.
    pub fn csr_to_legacy(&self, csr: &[f64]) -> Vec<f64> {
        let mut qm = vec![0.0; self.nm];
        for (c, &k) in self.map_m2m.iter().enumerate() {
            qm[k] = csr[c];
        }
        qm
    }
}

/// What [`factor_i`] does with a pivot below MuJoCo's `mjMINVAL` (1e-15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PivotPolicy {
    /// Return [`Error::NotPositiveDefinite`] naming the dof (the library's default).
    Error,
    /// Clamp the pivot to `mjMINVAL` and record a warning, as MuJoCo 4.0 does.
    ClampAndWarn,
}

/// The result of [`factor_i`]: `qld` in the legacy layout (D on the diagonal slots, L elsewhere),
/// `1/D`, `1/sqrt(D)`, and the warnings of clamped pivots.
#[derive(Clone, Debug, PartialEq)]
pub struct FactorI {
    /// The factor, in place of M (MuJoCo's `qLD`, legacy layout).
    pub qld: Vec<f64>,
    /// `1 / D` (MuJoCo's `qLDiagInv`).
    pub qld_diag_inv: Vec<f64>,
    /// `1 / sqrt(D)` (MuJoCo's `qLDiagSqrtInv`, used by `mj_solveM2`).
    pub qld_diag_sqrt_inv: Vec<f64>,
    /// One line per clamped pivot (only with [`PivotPolicy::ClampAndWarn`]).
    pub warnings: Vec<String>,
}

/// MuJoCo's smallest allowed pivot (`mjMINVAL`), from [`crate::model::constants`].
pub use crate::model::constants::MJ_MINVAL;

// ANCHOR: factor_i
/// MuJoCo's `mj_factorI`: `M = L^T D L` in place on the legacy layout, from the last dof to the
/// first. Step k updates three regions (the chapter's figure of step k):
/// 1. the pivot `M(k,k)`, already equal to `D_k` (every descendant of k has been subtracted);
///    its reciprocal `1/D_k` is computed once and kept in `qld_diag_inv[k]`;
/// 2. row k left of the diagonal: for each ancestor i of k (slot `ak + t`), `tmp = M(k,i) / D_k`
///    (2a), stored over `M(k,i)` only after region 3 has used the undivided row (2b);
/// 3. the rows of k's ancestors: row i from its diagonal (which starts at `col_madr[ak + t]`) gets
///    `-tmp *` row k from the slot (k, i). The ancestors of i are the ancestors of k beyond i, so
///    the two segments line up and the update is one contiguous scaled-vector subtraction
///    (MuJoCo's `mju_addToScl`).
///
/// `qld` holds `qM` on entry and the factor on return; `qld_diag_inv` receives `1/D`. A pivot
/// below `MJ_MINVAL` is an error naming the dof, or with [`PivotPolicy::ClampAndWarn`] is
/// clamped to it and adds a line to `warnings`. `ops` counts one division per row, one
/// multiplication per `tmp` and one multiply-add per updated entry; pass
/// [`NoCount`](super::NoCount) to count nothing. This is the book's listing; the library runs
/// [`factor_rows_fast`](fast::factor_rows_fast), the same arithmetic in the same order (a test
/// holds the two equal bit for bit).
#[allow(dead_code)] // the book's listing: the tests hold the library's kernel equal to it
pub(crate) fn factor_rows<C: Counter>(
    layout: &MjLayout,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut C,
) -> Result<()> {
    for k in (0..layout.nv).rev() {
        let ak = layout.dof_madr[k]; // region 1: the pivot
        if !(qld[ak] >= MJ_MINVAL) {
            bad_pivot(k, &mut qld[ak], policy, warnings)?;
        }
        let inv_d = 1.0 / qld[ak];
        qld_diag_inv[k] = inv_d;
        ops.div(1);
        let row_len = layout.dof_depth[k] + 1;
        // row i lies wholly before row k (i < k), so the two rows can be borrowed apart
        let (before_k, from_k) = qld.split_at_mut(ak);
        for t in 1..row_len {
            let tail = &mut from_k[t..row_len]; // row k from the slot (k, i) to the root
            let tmp = tail[0] * inv_d; // 2a
            ops.mul(1);
            let ai = layout.col_madr[ak + t]; // row i from its diagonal
            let n = tail.len();
            for (m_ij, m_kj) in before_k[ai..ai + n].iter_mut().zip(tail.iter()) {
                *m_ij -= tmp * m_kj; // region 3
            }
            ops.madd(n);
            tail[0] = tmp; // 2b
        }
    }
    Ok(())
}
// ANCHOR_END: factor_i

/// MuJoCo's `mj_factorI` (the listing `factor_rows`, run as `factor_rows_fast`) after
/// checking the lengths of `qld` (`nM`) and `qld_diag_inv` (`nv`).
///
/// On x86-64 processors with AVX the loop runs compiled for AVX, chosen once per call at run time:
/// four numbers per instruction instead of the two of the default target's SSE2, as MuJoCo's own
/// `mju_addToScl` does (the MuJoCo wheel is built for AVX). The arithmetic, and so the result, is
/// the same bit for bit: no fused multiply-adds.
pub fn factor_i_in_place(
    layout: &MjLayout,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut impl Counter,
) -> Result<()> {
    let rows = &layout.rows;
    if qld.len() != rows.nm || qld_diag_inv.len() != rows.nv {
        return Err(Error::BadLength {
            what: "qLD (legacy layout)".into(),
            got: qld.len(),
            expected: rows.nm,
        });
    }
    let panel = if rows.nm >= PANELS_FROM { PANEL } else { 0 };
    #[cfg(target_arch = "x86_64")]
    if let Some(avx) = Avx::detect() {
        // SAFETY: the lengths were checked above; `avx` proves that the processor has AVX.
        return unsafe { factor_rows_avx(rows, qld, qld_diag_inv, policy, warnings, ops, avx, panel) };
    }
    // SAFETY: the lengths were checked above; `panel` is 0 or PANEL.
    unsafe { factor_rows_dispatch(rows, qld, qld_diag_inv, policy, warnings, ops, Portable, panel) }
}

/// The pivot `*pivot` of dof k is below `MJ_MINVAL`: an error, or clamp and warn.
#[cold]
fn bad_pivot(k: usize, pivot: &mut f64, policy: PivotPolicy, warnings: &mut Vec<String>) -> Result<()> {
    match policy {
        PivotPolicy::Error => Err(Error::NotPositiveDefinite {
            what: "mj_factorI".into(),
            dof: k,
            value: *pivot,
        }),
        PivotPolicy::ClampAndWarn => {
            warnings.push(format!(
                "mj_factorI: pivot {:.3e} at dof {k} clamped to {MJ_MINVAL:e}",
                *pivot
            ));
            *pivot = MJ_MINVAL;
            Ok(())
        }
    }
}

/// [`factor_i_in_place`] on a copy of `qm` (checked: finite entries, and a finite factor or
/// [`Error::Overflow`]: with [`PivotPolicy::ClampAndWarn`] a clamped pivot scales its ancestors'
/// rows by up to `1/mjMINVAL` = 1e15, and a chain of clamps overflows where MuJoCo would go on
/// with `inf`), returning every factor array (MuJoCo's `qLD`,
/// `qLDiagInv`, `qLDiagSqrtInv`) and the warnings.
pub fn factor_i(layout: &MjLayout, qm: &[f64], policy: PivotPolicy, ops: &mut impl Counter) -> Result<FactorI> {
    if qm.len() != layout.nm {
        return Err(Error::BadLength {
            what: "qM (legacy layout)".into(),
            got: qm.len(),
            expected: layout.nm,
        });
    }
    crate::error::check_vector("qM", qm, layout.nm)?;
    let mut qld = qm.to_vec();
    let mut qld_diag_inv = vec![0.0; layout.nv];
    let mut warnings = Vec::new();
    factor_i_in_place(layout, &mut qld, &mut qld_diag_inv, policy, &mut warnings, ops)?;
    crate::error::check_output("qLD", &qld)?;
    let qld_diag_sqrt_inv = qld_diag_inv.iter().map(|d| d.sqrt()).collect();
    Ok(FactorI {
        qld,
        qld_diag_inv,
        qld_diag_sqrt_inv,
        warnings,
    })
}

// ANCHOR: solve_ld
/// MuJoCo's `mj_solveLD`: `x <- M^-1 x` with the legacy-layout factor of [`factor_i`]:
/// `x <- L^-T x` (last dof to first), then `x <- D^-1 x` and `x <- L^-1 x` together (first dof
/// to last: x_i is scaled by `1/D_i` just before its ancestors' values are pulled in).
/// Row i's off-diagonal entries are contiguous after its diagonal and their columns are
/// `layout.col` of the same slots, nearest ancestor first.
///
/// In the second pass x_i waits for its ancestors' final values, and the nearest of them, the
/// parent, is often the row just finished. So the row sums its other ancestors first
/// (`dot_gather`, which the processor can do while the parent's row is still being computed) and
/// subtracts the parent's term last: per row, only one multiplication and one subtraction wait
/// for the row before. Returns whether every entry of the result is finite. This is the book's
/// listing; [`solve_ld`] runs [`solve_rows_fast`], the same arithmetic in the same order.
#[allow(dead_code)] // the book's listing: the tests hold the library's kernel equal to it
pub(crate) fn solve_rows(
    layout: &MjLayout,
    qld: &[f64],
    qld_diag_inv: &[f64],
    x: &mut [f64],
    ops: &mut impl Counter,
) -> bool {
    for i in (0..layout.nv).rev() {
        let (a, n) = (layout.dof_madr[i] + 1, layout.dof_depth[i]);
        let xi = x[i];
        for (&l, &j) in qld[a..a + n].iter().zip(&layout.col[a..a + n]) {
            x[j] -= l * xi; // push x_i into its ancestors
        }
        ops.madd(n);
    }
    let mut finite = true;
    for i in 0..layout.nv {
        let (a, n) = (layout.dof_madr[i] + 1, layout.dof_depth[i]);
        let (row, cols) = (&qld[a..a + n], &layout.col[a..a + n]);
        let mut xi = x[i] * qld_diag_inv[i];
        if let (Some((&l_parent, l_far)), Some((&parent, c_far))) = (row.split_first(), cols.split_first()) {
            xi -= dot_gather(l_far, c_far, x); // the ancestors beyond the parent
            xi -= l_parent * x[parent]; // the parent, last
        }
        x[i] = xi;
        finite &= xi.is_finite();
        ops.div(1);
        ops.madd(n);
    }
    finite
}
// ANCHOR_END: solve_ld

/// `sum_t l[t] x[col[t]]` (MuJoCo's `mju_dotSparse`). A row of fewer than four entries is
/// summed in order; a longer one with four partial sums added at the end: four independent
/// chains of additions that the processor overlaps, where one running sum would make every
/// addition wait for the one before.
#[allow(dead_code)] // part of the book's listing
#[inline(always)]
fn dot_gather(l: &[f64], col: &[usize], x: &[f64]) -> f64 {
    let (l4, l_rest) = l.as_chunks::<4>();
    let (c4, c_rest) = col.as_chunks::<4>();
    let mut rest = 0.0;
    for (&l, &j) in l_rest.iter().zip(c_rest) {
        rest += l * x[j];
    }
    if l4.is_empty() {
        return rest;
    }
    let mut acc = [0.0; 4];
    for (l, c) in l4.iter().zip(c4) {
        for k in 0..4 {
            acc[k] += l[k] * x[c[k]];
        }
    }
    rest + ((acc[0] + acc[2]) + (acc[1] + acc[3]))
}

/// MuJoCo's `mj_solveLD` (the listing `solve_rows`, run as `solve_rows_fast`) after checking
/// the lengths, compiled for AVX where the processor has it (`with_avx`, the same numbers bit
/// for bit). A non-finite result is [`Error::Overflow`]; the test rides along the last pass (one
/// comparison per dof, no branch) and the entry is looked up only when it failed.
pub fn solve_ld(
    layout: &MjLayout,
    qld: &[f64],
    qld_diag_inv: &[f64],
    x: &mut [f64],
    ops: &mut impl Counter,
) -> Result<()> {
    let rows = &layout.rows;
    for (what, got, expected) in [
        ("qLD", qld.len(), rows.nm),
        ("qLDiagInv", qld_diag_inv.len(), rows.nv),
        ("x", x.len(), rows.nv),
    ] {
        if got != expected {
            return Err(Error::BadLength {
                what: what.into(),
                got,
                expected,
            });
        }
    }
    // SAFETY: the lengths were checked above.
    let finite = super::with_avx(
        #[inline(always)]
        || unsafe { solve_rows_fast(rows, qld, qld_diag_inv, x, ops) },
    );
    if finite {
        Ok(())
    } else {
        crate::error::check_output("x = M^-1 x", x)
    }
}

#[cfg(test)]
mod tests {
    use super::fast::{factor_rows_fast, factor_rows_panels};
    use super::*;
    use crate::dynamics::crba;
    use crate::model::canned;
    use crate::sparse::{ancestors, ltdl, split_ltdl, NoCount, OpCount};
    use approx::assert_relative_eq;

    #[test]
    fn factor_i_matches_ltdl_and_solves() {
        let m = canned::floating_base_ball_arms();
        let mut q = m.qpos0.clone();
        let v: Vec<f64> = (0..m.nv).map(|k| 0.2 * (k as f64 * 0.9).cos()).collect();
        m.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
        let h = crba(&m, q.as_slice()).unwrap();
        let lay = MjLayout::new(&m.dof_parent).unwrap();
        let qm = lay.from_dense(&h);
        assert_relative_eq!(lay.to_dense(&qm), h, epsilon = 0.0);
        assert_eq!(lay.csr_to_legacy(&lay.legacy_to_csr(&qm)), qm);
        let f = factor_i(&lay, &qm, PivotPolicy::Error, &mut OpCount::default()).unwrap();
        let mut ld = h.clone();
        ltdl(&mut ld, &m.dof_parent, &mut OpCount::default()).unwrap();
        let (l_ref, d_ref) = split_ltdl(&ld, &m.dof_parent);
        let (l, d) = lay.unpack_ld(&f.qld);
        assert_relative_eq!(l, l_ref, epsilon = 1e-12);
        for i in 0..m.nv {
            assert_relative_eq!(d[i], d_ref[i], epsilon = 1e-12 * d_ref.amax());
        }
        let b: Vec<f64> = (0..m.nv).map(|k| 1.0 + k as f64).collect();
        let mut x = b.clone();
        solve_ld(&lay, &f.qld, &f.qld_diag_inv, &mut x, &mut OpCount::default()).unwrap();
        let hx = &h * nalgebra::DVector::from_vec(x);
        assert_relative_eq!(hx, nalgebra::DVector::from_vec(b), epsilon = 1e-9);
    }

    /// Random dof trees (parent of k drawn below k, a few roots) of `n` dofs.
    fn random_parents(n: usize, seed: u64) -> Vec<Option<usize>> {
        let mut r = seed;
        (0..n)
            .map(|k| {
                r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (r >> 33) as usize;
                (k > 0 && !u.is_multiple_of(7)).then(|| k - 1 - (u / 7) % k.min(3))
            })
            .collect()
    }

    /// A symmetric positive definite matrix on the ancestor pattern of `parent` (legacy layout):
    /// `H = L^T D L` from a random unit L and D > 0.
    fn random_qm(lay: &MjLayout, seed: u64) -> Vec<f64> {
        let n = lay.nv;
        let mut r = seed;
        let mut next = || {
            r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((r >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut l = DMatrix::identity(n, n);
        let mut d = nalgebra::DVector::zeros(n);
        for i in 0..n {
            d[i] = 1.0 + next().abs();
            for j in ancestors(&lay.dof_parentid, i) {
                l[(i, j)] = next();
            }
        }
        let h = l.transpose() * DMatrix::from_diagonal(&d) * &l;
        lay.from_dense(&h)
    }

    /// The library's kernels (AVX where the processor has it, and the default target's) give the
    /// book's listings' results bit for bit: long rows (a chain), a floating base, random trees.
    #[test]
    fn fast_kernels_equal_the_listings_bit_for_bit() {
        let mut cases: Vec<(MjLayout, Vec<f64>)> = Vec::new();
        for m in [canned::chain(30, true), canned::floating_base_ball_arms()] {
            let q: Vec<f64> = (0..m.nq).map(|k| 0.3 * (k as f64 * 1.1).sin()).collect();
            let mut q = nalgebra::DVector::from_vec(q);
            m.normalize_quaternions_with(q.as_mut_slice());
            let qm = m.mj_layout().from_dense(&crba(&m, q.as_slice()).unwrap());
            cases.push((m.mj_layout().clone(), qm));
        }
        // a chain long enough for `factor_i_in_place` to take the panels (nM >= PANELS_FROM)
        let chain: Vec<Option<usize>> = (0..520usize).map(|k| k.checked_sub(1)).collect();
        let lay = MjLayout::new(&chain).unwrap();
        assert!(lay.nm >= PANELS_FROM);
        // diagonally dominant (a product L^T D L of a random dense L is too ill-conditioned)
        let qm: Vec<f64> = (0..lay.nm)
            .map(|s| {
                if lay.col[s] == lay.dof_madr.partition_point(|&a| a <= s) - 1 {
                    1040.0
                } else {
                    (s as f64 * 0.37).sin()
                }
            })
            .collect();
        cases.push((lay, qm));
        for seed in 0..20 {
            let lay = MjLayout::new(&random_parents(1 + seed as usize * 3, seed)).unwrap();
            let qm = random_qm(&lay, seed + 100);
            cases.push((lay, qm));
        }
        for (lay, qm) in &cases {
            let nv = lay.nv;
            let (mut a, mut a_inv) = (qm.clone(), vec![0.0; nv]);
            factor_i_in_place(
                lay,
                &mut a,
                &mut a_inv,
                PivotPolicy::Error,
                &mut Vec::new(),
                &mut NoCount,
            )
            .unwrap();
            let (mut b, mut b_inv) = (qm.clone(), vec![0.0; nv]);
            let mut ops_plain = OpCount::default();
            factor_rows(
                lay,
                &mut b,
                &mut b_inv,
                PivotPolicy::Error,
                &mut Vec::new(),
                &mut ops_plain,
            )
            .unwrap();
            let (mut c, mut c_inv) = (qm.clone(), vec![0.0; nv]);
            let mut ops_fast = OpCount::default();
            // SAFETY: the lengths are the layout's.
            unsafe {
                factor_rows_fast(
                    &lay.rows,
                    &mut c,
                    &mut c_inv,
                    PivotPolicy::Error,
                    &mut Vec::new(),
                    &mut ops_fast,
                    Portable,
                )
            }
            .unwrap();
            for panel in [1, 3, PANEL] {
                let (mut e, mut e_inv) = (qm.clone(), vec![0.0; nv]);
                let mut ops_panels = OpCount::default();
                // SAFETY: the lengths are the layout's; panel <= PANEL.
                unsafe {
                    factor_rows_panels(
                        &lay.rows,
                        &mut e,
                        &mut e_inv,
                        PivotPolicy::Error,
                        &mut Vec::new(),
                        &mut ops_panels,
                        Portable,
                        panel,
                    )
                }
                .unwrap();
                assert!(
                    e.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "panel {panel}"
                );
                assert!(e_inv.iter().zip(&b_inv).all(|(x, y)| x.to_bits() == y.to_bits()));
                assert_eq!(ops_panels, ops_plain);
            }
            assert_eq!(a, b);
            assert_eq!(a_inv, b_inv);
            assert_eq!(c, b);
            assert_eq!(c_inv, b_inv);
            assert_eq!(ops_fast, ops_plain);
            let rhs: Vec<f64> = (0..nv).map(|k| (k as f64 * 0.7).cos()).collect();
            let mut x = rhs.clone();
            let mut ops_fast = OpCount::default();
            solve_ld(lay, &a, &a_inv, &mut x, &mut ops_fast).unwrap();
            let mut y = rhs.clone();
            let mut ops_plain = OpCount::default();
            assert!(solve_rows(lay, &b, &b_inv, &mut y, &mut ops_plain));
            let mut z = rhs.clone();
            // SAFETY: the lengths are the layout's.
            assert!(unsafe { solve_rows_fast(&lay.rows, &b, &b_inv, &mut z, &mut NoCount) });
            assert_eq!(x, y);
            assert_eq!(z, y);
            assert_eq!(ops_fast, ops_plain);
        }
    }

    /// `Rows::new` accepts every layout `MjLayout::new` makes (random forests) and rejects a
    /// pattern whose rows do not line up.
    #[test]
    fn rows_hold_on_random_trees_and_reject_a_broken_pattern() {
        for seed in 0..50 {
            let parent = random_parents(1 + seed as usize, seed);
            let lay = MjLayout::new(&parent).unwrap();
            let d = &lay.dof_depth;
            assert!(Rows::new(lay.nv, lay.nm, &lay.dof_madr, d, &lay.col, &lay.col_madr).is_some());
        }
        let lay = MjLayout::new(&[None, Some(0), Some(1)]).unwrap();
        let mut col_madr = lay.col_madr.clone();
        col_madr[lay.dof_madr[2] + 1] = lay.dof_madr[0]; // row 0 is shorter than row 2's tail
        assert!(Rows::new(lay.nv, lay.nm, &lay.dof_madr, &lay.dof_depth, &lay.col, &col_madr).is_none());
        let mut col = lay.col.clone();
        col[lay.dof_madr[1] + 1] = 1; // a row naming itself as its ancestor
        assert!(Rows::new(lay.nv, lay.nm, &lay.dof_madr, &lay.dof_depth, &col, &lay.col_madr).is_none());
    }

    #[test]
    fn clamp_policy_warns_and_error_policy_names_the_dof() {
        let lay = MjLayout::new(&[None, Some(0)]).unwrap();
        let qm = vec![1.0, 0.0, 2.0]; // M(0,0) = 1, M(1,1) = 0, M(1,0) = 2
        let err = factor_i(&lay, &qm, PivotPolicy::Error, &mut OpCount::default()).unwrap_err();
        assert!(matches!(err, Error::NotPositiveDefinite { dof: 1, .. }));
        let ok = factor_i(&lay, &qm, PivotPolicy::ClampAndWarn, &mut OpCount::default()).unwrap();
        assert_eq!(ok.warnings.len(), 2, "{:?}", ok.warnings);
    }
}
