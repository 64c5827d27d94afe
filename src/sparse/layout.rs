//! MuJoCo's compact storage of the joint-space inertia and its in-place factorization
//! (`mj_factorI`, `mj_solveLD`), in the legacy layout (MuJoCo's `qM` up to 3.10, `dof_Madr`) and in the
//! CSR layout of MuJoCo 4.0.

use super::{ancestors, check_parent, depths, Counter};
use crate::error::{Error, Result};
use nalgebra::DMatrix;

/// MuJoCo's legacy sparse layout of a symmetric matrix with the ancestor pattern
/// (`mjData.qM` up to MuJoCo 3.10): row i is stored contiguously from `dof_madr[i]`, diagonal
/// first, then the ancestors of i from the nearest (the parent) to the root. Only the lower
/// triangle is stored; `nm` is the total size.
///
/// The CSR layout of MuJoCo 4.0 (`M_rownnz`, `M_rowadr`, `M_colind`) stores the same rows
/// reversed (ancestors root-first, diagonal last); `map_m2m[c]` is the legacy index of CSR
/// element c (MuJoCo's `mapM2M`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MjLayout {
    /// Number of dofs.
    pub nv: usize,
    /// Parent dof of each dof (MuJoCo's `dof_parentid`, None = -1).
    pub dof_parentid: Vec<Option<usize>>,
    /// Start of each row in the legacy layout (MuJoCo's `dof_Madr`).
    pub dof_madr: Vec<usize>,
    /// Number of proper ancestors of each dof (its row holds `dof_depth + 1` entries).
    pub dof_depth: Vec<usize>,
    /// Size of the legacy layout (MuJoCo's `nM`).
    pub nm: usize,
    /// The column of every slot of the legacy layout (size `nM`): `col[dof_madr[i]] = i`, and
    /// `col[dof_madr[i] + t]` is the t-th ancestor of i. The factorization and the solves read it
    /// instead of walking `dof_parentid`, as MuJoCo's kernels read `M_colind`: one independent
    /// load per entry instead of a chain of dependent ones.
    pub col: Vec<usize>,
    /// The start of the row of every slot's column (size `nM`): `col_madr[s] =
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
}

impl MjLayout {
    /// The layout of the dof tree `dof_parentid`.
    pub fn new(dof_parentid: &[Option<usize>]) -> Result<Self> {
        check_parent(dof_parentid)?;
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
        let col_madr = col.iter().map(|&j| dof_madr[j]).collect();
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
        Ok(MjLayout {
            nv,
            dof_parentid: dof_parentid.to_vec(),
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
///    the two segments line up and the update is one contiguous scaled-vector subtraction,
///    `sub_scaled` (MuJoCo's `mju_addToScl`).
///
/// `qld` holds `qM` on entry and the factor on return; `qld_diag_inv` receives `1/D`. A pivot
/// below `MJ_MINVAL` is an error naming the dof, or with [`PivotPolicy::ClampAndWarn`] is
/// clamped to it and adds a line to `warnings`. `ops` counts one division per row, one
/// multiplication per `tmp` and one multiply-add per updated entry; pass
/// [`NoCount`](super::NoCount) to count nothing. Lengths are checked by [`factor_i_in_place`].
#[inline(always)]
fn factor_rows<C: Counter>(
    layout: &MjLayout,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut C,
    simd: impl Simd,
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
        // `tail` is row k from the slot (k, i) of the current ancestor i to the root
        let mut tail = &mut from_k[1..row_len];
        for &ai in &layout.col_madr[ak + 1..ak + row_len] {
            let Some((m_ki, _)) = tail.split_first_mut() else { break };
            let tmp = *m_ki * inv_d; // 2a
            ops.mul(1);
            let n = tail.len();
            sub_scaled(&mut before_k[ai..ai + n], tail, tmp, simd); // region 3
            ops.madd(n);
            tail[0] = tmp; // 2b
            tail = &mut tail[1..];
        }
    }
    Ok(())
}
// ANCHOR_END: factor_i

// ANCHOR: sub_scaled
/// `dst -= s * src` (MuJoCo's `mju_addToScl` with `-s`), entry by entry, no fused multiply-adds:
/// blocks of four by [`Simd::sub_scaled4`], then the last zero to three entries one case per
/// length. Inlined into the factorization's loop: no call, no set-up per update.
#[inline(always)]
fn sub_scaled(dst: &mut [f64], src: &[f64], s: f64, simd: impl Simd) {
    debug_assert_eq!(dst.len(), src.len());
    let (d4, d_rest) = dst.as_chunks_mut::<4>();
    let (x4, x_rest) = src.as_chunks::<4>();
    for (d, x) in d4.iter_mut().zip(x4) {
        simd.sub_scaled4(d, x, s);
    }
    match (d_rest, x_rest) {
        ([d0, d1, d2], [x0, x1, x2]) => {
            *d0 -= s * x0;
            *d1 -= s * x1;
            *d2 -= s * x2;
        }
        ([d0, d1], [x0, x1]) => {
            *d0 -= s * x0;
            *d1 -= s * x1;
        }
        ([d0], [x0]) => *d0 -= s * x0,
        _ => {}
    }
}
// ANCHOR_END: sub_scaled

/// The vector instructions a kernel is compiled with, as a value: [`Portable`] (the default
/// target's, SSE2 on x86-64) or [`Avx`] (made only where the processor has AVX). The kernels
/// take it as a type parameter, so each is compiled once per width.
///
/// Why the four-number block is written with the processor's vector operations instead of a
/// plain loop: the compiler cannot tell that the two rows of an update do not overlap, so it
/// either keeps a plain loop scalar or vectorizes it behind run-time overlap tests whose set-up
/// (and the registers it takes) costs more than a short update. Its loop vectorizer leaves alone
/// a loop that already works on vectors, so the block loop stays as written: one load, one
/// multiplication, one subtraction and one store per four numbers (two of each with SSE2).
pub(crate) trait Simd: Copy {
    /// `d -= s * x` on four numbers: a multiplication, then a subtraction, per entry.
    fn sub_scaled4(self, d: &mut [f64; 4], x: &[f64; 4], s: f64);
}

/// The default target's vector instructions (SSE2 on x86-64: two numbers per instruction).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

impl Simd for Portable {
    #[inline(always)]
    fn sub_scaled4(self, d: &mut [f64; 4], x: &[f64; 4], s: f64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of every x86-64 processor; the loads and stores stay inside the
        // two arrays of four.
        unsafe {
            use std::arch::x86_64::{_mm_loadu_pd, _mm_mul_pd, _mm_set1_pd, _mm_storeu_pd, _mm_sub_pd};
            let sv = _mm_set1_pd(s);
            let lo = _mm_sub_pd(_mm_loadu_pd(d.as_ptr()), _mm_mul_pd(sv, _mm_loadu_pd(x.as_ptr())));
            let hi = _mm_sub_pd(
                _mm_loadu_pd(d.as_ptr().add(2)),
                _mm_mul_pd(sv, _mm_loadu_pd(x.as_ptr().add(2))),
            );
            _mm_storeu_pd(d.as_mut_ptr(), lo);
            _mm_storeu_pd(d.as_mut_ptr().add(2), hi);
        }
        #[cfg(not(target_arch = "x86_64"))]
        for k in 0..4 {
            d[k] -= s * x[k];
        }
    }
}

/// AVX's vector instructions (four numbers per instruction). Only [`Avx::detect`] makes one, so
/// holding it proves that the processor has AVX.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx(());

#[cfg(target_arch = "x86_64")]
impl Avx {
    /// `Some` on a processor with AVX (the standard library's cached test).
    #[inline]
    pub(crate) fn detect() -> Option<Avx> {
        std::is_x86_feature_detected!("avx").then_some(Avx(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Simd for Avx {
    #[inline(always)]
    fn sub_scaled4(self, d: &mut [f64; 4], x: &[f64; 4], s: f64) {
        // SAFETY: an `Avx` exists only on a processor with AVX.
        unsafe { avx_sub_scaled4(d, x, s) }
    }
}

/// [`Simd::sub_scaled4`] in one AVX multiplication and one subtraction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
fn avx_sub_scaled4(d: &mut [f64; 4], x: &[f64; 4], s: f64) {
    use std::arch::x86_64::{_mm256_loadu_pd, _mm256_mul_pd, _mm256_set1_pd, _mm256_storeu_pd, _mm256_sub_pd};
    // SAFETY: the loads and stores stay inside the two arrays of four.
    unsafe {
        let v = _mm256_sub_pd(
            _mm256_loadu_pd(d.as_ptr()),
            _mm256_mul_pd(_mm256_set1_pd(s), _mm256_loadu_pd(x.as_ptr())),
        );
        _mm256_storeu_pd(d.as_mut_ptr(), v);
    }
}

/// MuJoCo's `mj_factorI` (the listing `factor_rows` above) after checking the lengths of `qld`
/// (`nM`) and `qld_diag_inv` (`nv`).
///
/// On x86-64 processors with AVX the loop runs compiled for AVX, chosen once per call at run time
/// (`with_avx`): four numbers per instruction instead of the two of the default
/// target's SSE2, as MuJoCo's own `mju_addToScl` does (the MuJoCo wheel is built for AVX). The
/// arithmetic, and so the result, is the same bit for bit: no fused multiply-adds.
pub fn factor_i_in_place(
    layout: &MjLayout,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut impl Counter,
) -> Result<()> {
    if qld.len() != layout.nm || qld_diag_inv.len() != layout.nv {
        return Err(Error::BadLength {
            what: "qLD (legacy layout)".into(),
            got: qld.len(),
            expected: layout.nm,
        });
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(avx) = Avx::detect() {
        // SAFETY: `avx` proves that the processor has AVX.
        return unsafe { factor_rows_avx(layout, qld, qld_diag_inv, policy, warnings, ops, avx) };
    }
    factor_rows(layout, qld, qld_diag_inv, policy, warnings, ops, Portable)
}

/// [`factor_rows`] compiled for AVX: the short row updates ([`sub_scaled`]'s last one to three
/// entries) use its instructions too.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn factor_rows_avx<C: Counter>(
    layout: &MjLayout,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut C,
    avx: Avx,
) -> Result<()> {
    factor_rows(layout, qld, qld_diag_inv, policy, warnings, ops, avx)
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
/// for the row before.
#[inline(always)]
fn solve_rows(layout: &MjLayout, qld: &[f64], qld_diag_inv: &[f64], x: &mut [f64], ops: &mut impl Counter) -> bool {
    // the layout's arrays as local slices: the compiler keeps their addresses in registers
    // instead of reading them again from `layout` after every store into x
    let (madr, depth, col) = (&layout.dof_madr[..], &layout.dof_depth[..], &layout.col[..]);
    for i in (0..layout.nv).rev() {
        let (a, n) = (madr[i] + 1, depth[i]);
        let xi = x[i];
        for (&l, &j) in qld[a..a + n].iter().zip(&col[a..a + n]) {
            x[j] -= l * xi; // push x_i into its ancestors
        }
        ops.madd(n);
    }
    let mut finite = true;
    for i in 0..layout.nv {
        let (a, n) = (madr[i] + 1, depth[i]);
        let (row, cols) = (&qld[a..a + n], &col[a..a + n]);
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

/// `solve_rows` after checking the lengths, through `with_avx` like
/// [`factor_i_in_place`]. A non-finite result is [`Error::Overflow`]; the test rides along the
/// last pass (one comparison per dof, no branch) and the entry is looked up only when it failed.
pub fn solve_ld(
    layout: &MjLayout,
    qld: &[f64],
    qld_diag_inv: &[f64],
    x: &mut [f64],
    ops: &mut impl Counter,
) -> Result<()> {
    for (what, got, expected) in [
        ("qLD", qld.len(), layout.nm),
        ("qLDiagInv", qld_diag_inv.len(), layout.nv),
        ("x", x.len(), layout.nv),
    ] {
        if got != expected {
            return Err(Error::BadLength {
                what: what.into(),
                got,
                expected,
            });
        }
    }
    if super::with_avx(
        #[inline(always)]
        || solve_rows(layout, qld, qld_diag_inv, x, ops),
    ) {
        Ok(())
    } else {
        crate::error::check_output("x = M^-1 x", x)
    }
}
// ANCHOR_END: solve_ld

/// `sum_t l[t] x[col[t]]` (MuJoCo's `mju_dotSparse`). A row of fewer than four entries is
/// summed in order; a longer one with four partial sums added at the end: four independent
/// chains of additions that the processor overlaps, where one running sum would make every
/// addition wait for the one before.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::crba;
    use crate::model::canned;
    use crate::sparse::{ltdl, split_ltdl, NoCount, OpCount};
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

    /// The run-time choice of the AVX build changes no bit of the factor or the solution (long rows:
    /// a chain).
    #[test]
    fn dispatched_and_portable_kernels_agree_bit_for_bit() {
        for m in [canned::chain(30, true), canned::floating_base_ball_arms()] {
            let q: Vec<f64> = (0..m.nq).map(|k| 0.3 * (k as f64 * 1.1).sin()).collect();
            let mut q = nalgebra::DVector::from_vec(q);
            m.normalize_quaternions_with(q.as_mut_slice());
            let qm = m.mj_layout().from_dense(&crba(&m, q.as_slice()).unwrap());
            let (mut a, mut a_inv) = (qm.clone(), vec![0.0; m.nv]);
            factor_i_in_place(
                m.mj_layout(),
                &mut a,
                &mut a_inv,
                PivotPolicy::Error,
                &mut Vec::new(),
                &mut NoCount,
            )
            .unwrap();
            let (mut b, mut b_inv) = (qm.clone(), vec![0.0; m.nv]);
            factor_rows(
                m.mj_layout(),
                &mut b,
                &mut b_inv,
                PivotPolicy::Error,
                &mut Vec::new(),
                &mut NoCount,
                Portable,
            )
            .unwrap();
            assert_eq!(a, b);
            assert_eq!(a_inv, b_inv);
            let rhs: Vec<f64> = (0..m.nv).map(|k| (k as f64 * 0.7).cos()).collect();
            let mut x = rhs.clone();
            solve_ld(m.mj_layout(), &a, &a_inv, &mut x, &mut NoCount).unwrap();
            let mut y = rhs.clone();
            assert!(solve_rows(m.mj_layout(), &b, &b_inv, &mut y, &mut NoCount));
            assert_eq!(x, y);
        }
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
