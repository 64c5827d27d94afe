//! The fast copies of the legacy layout's kernels, the ones the library runs: [`factor_rows_fast`]
//! (with [`step`]) and, for layouts larger than the cache, [`factor_rows_panels`], chosen by
//! [`factor_rows_dispatch`] (compiled for AVX as [`factor_rows_avx`]); [`solve_rows_fast`] with
//! [`dot_gather_raw`]; and the vector update [`Simd::sub_scaled`] for the default target
//! ([`Portable`]) and for AVX ([`Avx`]). Each computes what its listing in the parent module
//! computes ([`factor_rows`](super::factor_rows), [`solve_rows`](super::solve_rows)), bit for bit;
//! the parent's tests hold them equal.

use super::{bad_pivot, PivotPolicy, Rows, MJ_MINVAL};
use crate::error::Result;
use crate::sparse::Counter;

// ANCHOR: factor_rows_fast
/// [`factor_rows`](super::factor_rows) as the library runs it: the same operations on the same
/// numbers in the same order, so the same factor bit for bit, written so that each update costs its
/// arithmetic and little else. Four things differ from the listing, each a fixed cost per update
/// that the listing pays about 435 times on a 30-link chain and 8,194 times on a binary tree of
/// 1,023 bodies:
/// - no bounds checks: the rows come from the layout's private [`Rows`], whose construction
///   proved that row i = `col[s]` has exactly the length of row k's tail from slot s and lies
///   before row k, so the two raw ranges are inside `qld` and disjoint;
/// - the update is [`Simd::sub_scaled`]: one number and one block of two as the length's two low
///   bits say, then blocks of four (of two with SSE2) to the end of the row, straight-line code
///   when the length is a constant;
/// - a row with up to eight entries left of the diagonal, every row of a branched robot, runs
///   its whole step as [`step`]: one branch on the row's length, after which the updates follow
///   one another with constant lengths, without a loop, a length test or a branch between them;
///   a longer row runs its updates longer than eight numbers in a loop and its last eight so;
/// - the loop over the ancestors of a longer row walks two pointers (the slot in row k, its
///   `col_madr`) instead of re-slicing.
///
/// # Safety
/// `qld.len() == rows.nm` and `qld_diag_inv.len() == rows.nv`, and `simd` was made legally
/// (an [`Avx`] only exists on a processor with AVX).
#[inline(always)]
pub(super) unsafe fn factor_rows_fast<C: Counter>(
    rows: &Rows,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut C,
    simd: impl Simd,
) -> Result<()> {
    debug_assert!(qld.len() == rows.nm && qld_diag_inv.len() == rows.nv);
    let q = qld.as_mut_ptr();
    for k in (0..rows.nv).rev() {
        // SAFETY: k < nv; `Rows` proved `madr[k] + len[k] <= nm`, and for every slot s of row k
        // beyond the diagonal that row `col[s]` (start `col_madr[s]`, length `len[k] - t`) lies
        // before row k, so `dst` and `src` below are in bounds and never overlap.
        unsafe {
            let ak = *rows.madr.get_unchecked(k);
            let len = *rows.len.get_unchecked(k);
            let pivot = &mut *q.add(ak);
            if !(*pivot >= MJ_MINVAL) {
                bad_pivot(k, pivot, policy, warnings)?;
            }
            let inv_d = 1.0 / *pivot;
            *qld_diag_inv.get_unchecked_mut(k) = inv_d;
            ops.div(1);
            let (src, col_madr) = (q.add(ak + 1), rows.col_madr.as_ptr().add(ak + 1));
            // the whole step at once for the short rows of a branched tree: one branch per row,
            // and every update's length a constant
            match len - 1 {
                0 => {}
                1 => step::<1, C>(q, src, col_madr, inv_d, ops, simd),
                2 => step::<2, C>(q, src, col_madr, inv_d, ops, simd),
                3 => step::<3, C>(q, src, col_madr, inv_d, ops, simd),
                4 => step::<4, C>(q, src, col_madr, inv_d, ops, simd),
                5 => step::<5, C>(q, src, col_madr, inv_d, ops, simd),
                6 => step::<6, C>(q, src, col_madr, inv_d, ops, simd),
                7 => step::<7, C>(q, src, col_madr, inv_d, ops, simd),
                8 => step::<8, C>(q, src, col_madr, inv_d, ops, simd),
                m => {
                    // the updates longer than eight numbers in a loop, then the last eight as a
                    // row of eight ancestors would do them
                    let (mut src, mut col_madr) = (src, col_madr);
                    for n in (9..=m).rev() {
                        let tmp = *src * inv_d; // 2a
                        ops.mul(1);
                        simd.sub_scaled(q.add(*col_madr), src, n, tmp); // region 3
                        ops.madd(n);
                        *src = tmp; // 2b
                        src = src.add(1);
                        col_madr = col_madr.add(1);
                    }
                    step::<8, C>(q, src, col_madr, inv_d, ops, simd);
                }
            }
        }
    }
    Ok(())
}

/// The updates of one step of [`factor_rows_fast`] whose row has `M` entries left of the
/// diagonal, starting at `src` (their rows' starts at `col_madr`): the same updates in the same
/// order, `M`, `M - 1`, ..., 1 numbers long, written out one after the other (the loop has a
/// constant count, so the compiler unrolls it and each update's length is a constant).
///
/// # Safety
/// As the loop it replaces: `src` and `col_madr` point to the `M` slots of row k left of the
/// diagonal and the rows they name lie in `q` before row k, with the lengths `Rows` proved.
#[inline(always)]
unsafe fn step<const M: usize, C: Counter>(
    q: *mut f64,
    src: *mut f64,
    col_madr: *const usize,
    inv_d: f64,
    ops: &mut C,
    simd: impl Simd,
) {
    // SAFETY: the caller's promise; t < M.
    unsafe {
        for t in 0..M {
            let src = src.add(t);
            let tmp = *src * inv_d; // 2a
            ops.mul(1);
            simd.sub_scaled(q.add(*col_madr.add(t)), src, M - t, tmp); // region 3
            ops.madd(M - t);
            *src = tmp; // 2b
        }
    }
}
// ANCHOR_END: factor_rows_fast

/// Rows per panel of [`factor_rows_panels`]: 32 rows of a 1,023-link chain are 256 kB, which stay
/// in the processor's second-level cache while the rows below are updated from them.
pub(super) const PANEL: usize = 32;

/// From this many stored entries (`nM`, 8 bytes each: 512 kB, half of a core's 1 MB second-level
/// cache, which also holds everything else the core runs) on,
/// [`factor_i_in_place`](super::factor_i_in_place) uses [`factor_rows_panels`]: the plain order
/// would stream the whole layout through the cache once per row.
pub(super) const PANELS_FROM: usize = 1 << 16;

// ANCHOR: factor_rows_panels
/// [`factor_rows_fast`] for layouts larger than the cache: the same updates, each entry receiving
/// its updates in the same order (from the largest k down), so the same factor bit for bit, but
/// grouped so that memory is read once per panel of [`PANEL`] rows instead of once per row.
///
/// Step k of the listing updates every ancestor row of k; on a long chain those rows are the
/// whole triangle above k, 4 MB for 1,023 links, and every step streams them through the cache.
/// Here the rows are taken in panels `p0..p1` from the last:
/// 1. the panel's own steps, updating only ancestors inside the panel (the other updates of row
///    k are deferred; the slots they read stay undivided, as in the listing, until then);
/// 2. the deferred updates, target row by target row from the largest down: row i receives, one
///    after the other, the updates of every panel row k that has i as an ancestor, k from the
///    largest down, while it stays in the first-level cache and the panel in the second.
///
/// Every entry still receives the updates of larger k before those of smaller k, and every row is
/// complete when its pivot is tested, so the numbers, the operation counts and the pivot errors are
/// the listing's. Finding the next target costs a scan of the panel's cursors per target row,
/// negligible against a chain's work but not against a bushy tree's, which is why
/// [`factor_i_in_place`](super::factor_i_in_place) takes this path only for layouts of at least
/// [`PANELS_FROM`] entries.
///
/// # Safety
/// As [`factor_rows_fast`]; `panel <= PANEL`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn factor_rows_panels<C: Counter>(
    rows: &Rows,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut C,
    simd: impl Simd,
    panel: usize,
) -> Result<()> {
    debug_assert!(qld.len() == rows.nm && qld_diag_inv.len() == rows.nv && (1..=PANEL).contains(&panel));
    let q = qld.as_mut_ptr();
    let (madr, len, col, col_madr) = (&rows.madr[..], &rows.len[..], &rows.col[..], &rows.col_madr[..]);
    // cursor[k - p0]: the slot of row k whose update comes next (the row's end when none is left)
    let mut cursor = [0usize; PANEL];
    let mut p1 = rows.nv;
    // SAFETY: as in `factor_rows_fast`: every slot s below is one of row k's (madr[k] < s <
    // madr[k] + len[k]), so `Rows` proved that row col[s] lies before row k with length
    // len[k] - (s - madr[k]); k - p0 < panel <= PANEL.
    unsafe {
        while p1 > 0 {
            let p0 = p1.saturating_sub(panel);
            for k in (p0..p1).rev() {
                let (ak, end) = (*madr.get_unchecked(k), *madr.get_unchecked(k) + *len.get_unchecked(k));
                let pivot = &mut *q.add(ak);
                if !(*pivot >= MJ_MINVAL) {
                    bad_pivot(k, pivot, policy, warnings)?;
                }
                let inv_d = 1.0 / *pivot;
                *qld_diag_inv.get_unchecked_mut(k) = inv_d;
                ops.div(1);
                let mut s = ak + 1;
                while s < end && *col.get_unchecked(s) >= p0 {
                    let tmp = *q.add(s) * inv_d; // 2a
                    ops.mul(1);
                    simd.sub_scaled(q.add(*col_madr.get_unchecked(s)), q.add(s), end - s, tmp);
                    ops.madd(end - s);
                    *q.add(s) = tmp; // 2b
                    s += 1;
                }
                *cursor.get_unchecked_mut(k - p0) = s;
            }
            loop {
                // the next target: the largest ancestor still owed an update by the panel
                let mut target = None;
                for k in p0..p1 {
                    let s = *cursor.get_unchecked(k - p0);
                    if s < *madr.get_unchecked(k) + *len.get_unchecked(k) {
                        target = target.max(Some(*col.get_unchecked(s)));
                    }
                }
                let Some(i) = target else { break };
                for k in (p0..p1).rev() {
                    let s = *cursor.get_unchecked(k - p0);
                    let end = *madr.get_unchecked(k) + *len.get_unchecked(k);
                    if s < end && *col.get_unchecked(s) == i {
                        let tmp = *q.add(s) * *qld_diag_inv.get_unchecked(k); // 2a
                        ops.mul(1);
                        simd.sub_scaled(q.add(*col_madr.get_unchecked(s)), q.add(s), end - s, tmp);
                        ops.madd(end - s);
                        *q.add(s) = tmp; // 2b
                        *cursor.get_unchecked_mut(k - p0) = s + 1;
                    }
                }
            }
            p1 = p0;
        }
    }
    Ok(())
}
// ANCHOR_END: factor_rows_panels

/// The vector instructions a kernel is compiled with, as a value: [`Portable`] (the default
/// target's, SSE2 on x86-64) or [`Avx`] (made only where the processor has AVX). The kernels
/// take it as a type parameter, so each is compiled once per width.
///
/// Why the update is written with the processor's vector operations instead of a plain loop:
/// the compiler cannot tell that the two rows of an update do not overlap, so it either keeps a
/// plain loop scalar or vectorizes it behind run-time overlap tests whose set-up (and the
/// registers it takes) costs more than a short update. Its loop vectorizer leaves alone a loop
/// that already works on vectors, so the loop stays as written: one load, one multiplication,
/// one subtraction and one store per four numbers (two of each with SSE2).
pub(crate) trait Simd: Copy {
    /// `dst[t] -= s * src[t]` for `t < n` (MuJoCo's `mju_addToScl` with `-s`): a multiplication,
    /// then a subtraction, per entry, no fused multiply-add.
    ///
    /// The vector blocks are aligned to the *end* of the range (the odd number and the odd pair
    /// come first). In the factorization every range ends at the end of a row of `qLD`: a row
    /// receives its updates from its diagonal to its end, and its own step reads it from each
    /// slot to its end. Counted from the end, the block boundaries are then the same in every
    /// write and every read of a row, so each load lies inside one earlier store and the
    /// processor can hand it the stored value at once; a load straddling two stores (which
    /// blocks counted from the start would give whenever a row's step follows its first child's,
    /// the step that wrote it last) waits until both reach the cache.
    ///
    /// # Safety
    /// `dst` and `src` point to `n` numbers each, and the two ranges do not overlap.
    unsafe fn sub_scaled(self, dst: *mut f64, src: *const f64, n: usize, s: f64);
}

/// The default target's vector instructions (SSE2 on x86-64: two numbers per instruction).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

// ANCHOR: sub_scaled
impl Simd for Portable {
    #[inline(always)]
    unsafe fn sub_scaled(self, dst: *mut f64, src: *const f64, n: usize, s: f64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of every x86-64 processor; every access is at an offset below n.
        unsafe {
            use std::arch::x86_64::{_mm_loadu_pd, _mm_mul_pd, _mm_set1_pd, _mm_storeu_pd, _mm_sub_pd};
            let sv = _mm_set1_pd(s);
            let one = |t: usize| *dst.add(t) -= s * *src.add(t);
            let two = |t: usize| {
                let v = _mm_sub_pd(_mm_loadu_pd(dst.add(t)), _mm_mul_pd(sv, _mm_loadu_pd(src.add(t))));
                _mm_storeu_pd(dst.add(t), v);
            };
            // blocks aligned to the end of the row (see the trait): one number first if n is odd,
            // then pairs up to the end, two pairs per turn of the loop
            let mut t = n & 1;
            if t == 1 {
                one(0);
            }
            while t + 4 <= n {
                two(t);
                two(t + 2);
                t += 4;
            }
            if t < n {
                two(t);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        for t in 0..n {
            // SAFETY: t < n.
            unsafe { *dst.add(t) -= s * *src.add(t) };
        }
    }
}
// ANCHOR_END: sub_scaled

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
    unsafe fn sub_scaled(self, dst: *mut f64, src: *const f64, n: usize, s: f64) {
        // SAFETY: an `Avx` exists only on a processor with AVX; the caller vouches for the ranges.
        unsafe { avx_sub_scaled(dst, src, n, s) }
    }
}

/// [`Simd::sub_scaled`] four numbers per AVX instruction, with the odd number and the odd pair
/// (the low half of the same registers) first, so that the blocks of four end at the end of the
/// range.
///
/// # Safety
/// As [`Simd::sub_scaled`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn avx_sub_scaled(dst: *mut f64, src: *const f64, n: usize, s: f64) {
    use std::arch::x86_64::{
        _mm256_loadu_pd, _mm256_mul_pd, _mm256_set1_pd, _mm256_storeu_pd, _mm256_sub_pd, _mm_loadu_pd, _mm_mul_pd,
        _mm_set1_pd, _mm_storeu_pd, _mm_sub_pd,
    };
    // SAFETY: every access is at an offset below n (the caller's ranges).
    unsafe {
        let one = |t: usize| *dst.add(t) -= s * *src.add(t);
        let two = |t: usize| {
            let v = _mm_sub_pd(
                _mm_loadu_pd(dst.add(t)),
                _mm_mul_pd(_mm_set1_pd(s), _mm_loadu_pd(src.add(t))),
            );
            _mm_storeu_pd(dst.add(t), v);
        };
        let four = |t: usize| {
            let v = _mm256_sub_pd(
                _mm256_loadu_pd(dst.add(t)),
                _mm256_mul_pd(_mm256_set1_pd(s), _mm256_loadu_pd(src.add(t))),
            );
            _mm256_storeu_pd(dst.add(t), v);
        };
        // blocks aligned to the end of the row: one number if n is odd, then two if n has bit 1,
        // then blocks of four up to the end
        let mut t = 0;
        if n & 1 != 0 {
            one(0);
            t = 1;
        }
        if n & 2 != 0 {
            two(t);
            t += 2;
        }
        while t < n {
            four(t);
            t += 4;
        }
    }
}

/// [`factor_rows_fast`], or with `panel > 0` [`factor_rows_panels`].
///
/// # Safety
/// As [`factor_rows_panels`] (`panel <= PANEL`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn factor_rows_dispatch<C: Counter>(
    rows: &Rows,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut C,
    simd: impl Simd,
    panel: usize,
) -> Result<()> {
    // SAFETY: the caller's promise.
    unsafe {
        if panel > 0 {
            factor_rows_panels(rows, qld, qld_diag_inv, policy, warnings, ops, simd, panel)
        } else {
            factor_rows_fast(rows, qld, qld_diag_inv, policy, warnings, ops, simd)
        }
    }
}

/// [`factor_rows_dispatch`] compiled for AVX: the scalar parts of the loop use its instructions
/// too.
///
/// # Safety
/// As [`factor_rows_dispatch`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn factor_rows_avx<C: Counter>(
    rows: &Rows,
    qld: &mut [f64],
    qld_diag_inv: &mut [f64],
    policy: PivotPolicy,
    warnings: &mut Vec<String>,
    ops: &mut C,
    avx: Avx,
    panel: usize,
) -> Result<()> {
    // SAFETY: the caller's promise.
    unsafe { factor_rows_dispatch(rows, qld, qld_diag_inv, policy, warnings, ops, avx, panel) }
}

// ANCHOR: solve_rows_fast
/// [`solve_rows`](super::solve_rows) as the library runs it: the same operations in the same order
/// (the same result bit for bit), without bounds checks (the rows and columns come from the
/// layout's private [`Rows`], which proved `madr[i] + len[i] <= nm` and `col[s] < i` for the slots
/// of row i) and with the loop's addresses walked as pointers.
///
/// The first pass is turned inside out. The listing pushes: row i subtracts `L_ij x_i` from
/// `x_j` in memory, for every ancestor j, and every row of a tree pushes into the root, so the
/// root's `x_0` is loaded, decreased and stored again once per row, each load waiting for the
/// store before it. Here each `x_j` pulls instead: it is loaded once into a register, decreased
/// by `L_ij x_i` for every descendant i, and stored once (the column's entries come from
/// `Rows::below`). The subtractions from `x_j` come in the listing's order, from the largest i
/// down, and each `x_i` is final when it is read (every descendant of i is larger than i and has
/// been pulled already), so every number is the listing's; only the chain through memory is
/// gone. Columns without descendants (the leaves) are skipped at the cost of one comparison.
///
/// # Safety
/// `qld.len() == rows.nm`, `qld_diag_inv.len() == rows.nv` and `x.len() == rows.nv`.
#[inline(always)]
pub(super) unsafe fn solve_rows_fast(
    rows: &Rows,
    qld: &[f64],
    qld_diag_inv: &[f64],
    x: &mut [f64],
    ops: &mut impl Counter,
) -> bool {
    debug_assert!(qld.len() == rows.nm && qld_diag_inv.len() == rows.nv && x.len() == rows.nv);
    let (l, x) = (qld.as_ptr(), x.as_mut_ptr());
    let (madr, len, col) = (rows.madr.as_ptr(), rows.len.as_ptr(), rows.col.as_ptr());
    let (below_adr, below) = (rows.below_adr.as_ptr(), rows.below.as_ptr());
    let mut finite = true;
    // SAFETY: i < nv; the slots a..a + n of row i are inside qld and their columns are < i < nv
    // (the facts `Rows::new` checked), so every read and write below is in bounds; so are the
    // slots and rows of `below` (made from those checked slots).
    unsafe {
        for j in (0..rows.nv).rev() {
            let (b, e) = (*below_adr.add(j), *below_adr.add(j + 1));
            if b == e {
                continue;
            }
            let mut xj = *x.add(j);
            for t in b..e {
                let (s, i) = *below.add(t);
                xj -= *l.add(s) * *x.add(i); // pull x_i from each descendant, largest i first
            }
            *x.add(j) = xj;
            ops.madd(e - b);
        }
        for i in 0..rows.nv {
            let (a, n) = (*madr.add(i) + 1, *len.add(i) - 1);
            let mut xi = *x.add(i) * *qld_diag_inv.get_unchecked(i);
            if n > 0 {
                xi -= dot_gather_raw(l.add(a + 1), col.add(a + 1), n - 1, x); // beyond the parent
                xi -= *l.add(a) * *x.add(*col.add(a)); // the parent, last
            }
            *x.add(i) = xi;
            finite &= xi.is_finite();
            ops.div(1);
            ops.madd(n);
        }
    }
    finite
}
// ANCHOR_END: solve_rows_fast

/// [`dot_gather`](super::dot_gather) on raw pointers, the same sums in the same order: the last
/// `n % 4` entries in order, then four partial sums over the blocks of four, added as
/// `(0 + 2) + (1 + 3)`.
///
/// # Safety
/// `l` and `col` point to `n` entries each and every `col[t]` indexes `x`.
#[inline(always)]
unsafe fn dot_gather_raw(l: *const f64, col: *const usize, n: usize, x: *const f64) -> f64 {
    let blocks = n / 4 * 4;
    let mut rest = 0.0;
    // SAFETY: the caller's promise; every offset is below n.
    unsafe {
        for t in blocks..n {
            rest += *l.add(t) * *x.add(*col.add(t));
        }
        if blocks == 0 {
            return rest;
        }
        let mut acc = [0.0; 4];
        let mut t = 0;
        while t < blocks {
            for k in 0..4 {
                acc[k] += *l.add(t + k) * *x.add(*col.add(t + k));
            }
            t += 4;
        }
        rest + ((acc[0] + acc[2]) + (acc[1] + acc[3]))
    }
}
