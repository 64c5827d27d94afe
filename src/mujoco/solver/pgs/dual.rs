//! The dual problem PGS works on: `AR = J M^-1 J^T + R` and `b = J a_s - aref`, built from the
//! rows of `Y = J M^-1/2` ([`make_y`]) and their products ([`make_ar`], [`make_ar_blocks`]), and
//! its cost. Book: "Solvers", section "PGS". The sweep itself is in the parent module.

use super::PgsScratch;
use crate::error::Result;
use crate::mujoco::constraint::Efc;
use crate::mujoco::constraint::SparseRows;
use crate::mujoco::solver::{solve_m, JacStorage, Smooth};
use crate::sparse::MjLayout;
use nalgebra::DMatrix;

/// The dual problem's data: `AR = J M^-1 J^T + diag(R)` (nefc x nefc) and `b = J a_s - aref`.
#[derive(Clone, Debug)]
pub struct Dual {
    /// `AR` (MuJoCo's `efc_AR`).
    pub ar: DMatrix<f64>,
    /// The nonzero entries of `AR` by rows (MuJoCo's sparse `efc_AR` with `efc_AR_rownnz`,
    /// `efc_AR_rowadr`, `efc_AR_colind`): what a sweep reads. Two rows couple only if they
    /// move a common kinematic tree, since `M^-1` is block diagonal by trees.
    pub ar_rows: SparseRows,
    /// `b` (MuJoCo's `efc_b`).
    pub b: Vec<f64>,
}

// ANCHOR: make_dual
/// `AR` and `b` of the rows `efc` (MuJoCo's `mj_projectConstraint` and `efc_b`) on the sparse
/// route ([`make_dual_storage`]).
pub fn make_dual(smooth: &Smooth, efc: &Efc) -> Result<Dual> {
    make_dual_storage(smooth, efc, JacStorage::Sparse)
}

/// `AR` and `b` by either route, both kept by rows in [`Dual::ar_rows`]. Sparse, MuJoCo's
/// (`mj_makeY`, `mj_makeAR`): `Y = J M^-1/2` ([`make_y`]), then `AR = Y Y^T + R` from the
/// nonzeros of `Y` ([`make_ar`]). Dense, the reference: each row of `J` solved through `M`
/// ([`solve_m`]), then the product `J (M^-1 J^T)`, `nefc^2 nv` multiply-adds.
pub fn make_dual_storage(smooth: &Smooth, efc: &Efc, storage: JacStorage) -> Result<Dual> {
    let jac = efc.sparse_rows();
    let n = efc.nefc();
    let mut b = vec![0.0; n];
    jac.mul(smooth.qacc_smooth, &mut b);
    for (bi, a) in b.iter_mut().zip(&efc.aref) {
        *bi -= a;
    }
    let ar = match storage {
        JacStorage::Sparse => {
            let mut s = PgsScratch::default();
            make_y(smooth, jac, &mut s)?;
            make_ar(&efc.r, JacStorage::Sparse, &mut s);
            s.ar_rows.to_dense()
        }
        JacStorage::Dense => {
            let nv = smooth.layout.nv;
            let j = efc.dense_j();
            let mut minv_jt = DMatrix::zeros(nv, n);
            let mut col = vec![0.0; nv];
            for i in 0..n {
                for k in 0..nv {
                    col[k] = j[(i, k)];
                }
                solve_m(smooth, &mut col)?;
                minv_jt.column_mut(i).copy_from_slice(&col);
            }
            let mut ar = &j * minv_jt;
            for i in 0..n {
                ar[(i, i)] += efc.r[i];
            }
            ar
        }
    };
    // AR is symmetric: its columns, contiguous in column-major storage, are its rows
    let mut ar_rows = SparseRows::new(n);
    for i in 0..n {
        ar_rows.push_dense_row(ar.column(i).iter().copied());
    }
    Ok(Dual { ar, ar_rows, b })
}

/// MuJoCo's `mj_makeY`: the rows of `Y = J M^-1/2`, `Y_i^T = D^-1/2 L^-T J_i^T` with the factor
/// `M = L^T D L` of `mj_factorM` (`mj_solveM2`), so that `Y_i . Y_k = J_i M^-1 J_k^T`. The
/// pass `L^-T` pushes each entry into the dof's ancestors, so a row of `Y` lives on the columns
/// of its row of `J` and their ancestors through the rows of `M` (MuJoCo's
/// `computeY_precount`): its structural pattern, zeros included.
///
/// Consecutive rows of `J` with the same columns (a contact's rows, and those of the next
/// contacts between the same two bodies: MuJoCo's row supernodes) are solved together as one
/// block: its pattern is found once, and the pass `L^-T` subtracts `L_kj` times the block's
/// entries of dof `k` (one per row, kept contiguous) from those of dof `j`, all rows at once.
/// Each row gets the numbers of its own pass, in the same order (a row whose entry of `k` is
/// zero subtracts zeros, which can change only the sign of a zero entry of `Y`, and no sum that
/// reads `Y` starts from anything but `+0`). The blocks are kept for [`make_ar_blocks`], with
/// their entries column by column (`Y_b^T`) beside the rows of `Y`.
pub fn make_y(smooth: &Smooth, jac: &SparseRows, s: &mut PgsScratch) -> Result<()> {
    crate::sparse::with_avx(
        #[inline(always)]
        || make_y_body(smooth, jac, s),
    )
}

/// The body of [`make_y`], compiled for AVX where the processor has it.
#[inline(always)]
fn make_y_body(smooth: &Smooth, jac: &SparseRows, s: &mut PgsScratch) -> Result<()> {
    let l = smooth.layout;
    let nv = l.nv;
    s.mark.clear();
    s.mark.resize(nv, usize::MAX);
    s.place.clear();
    s.place.resize(nv, 0);
    s.sqrt_dinv.clear();
    s.sqrt_dinv.extend(smooth.qld_diag_inv.iter().map(|d| d.sqrt()));
    s.y.clear(nv);
    s.yblk.clear();
    s.ytb.clear();
    let n = jac.nrows();
    let mut i = 0;
    // bounded: i grows by the block's rows each pass
    while i < n {
        let cols = jac.row(i).0;
        let mut e = i + 1;
        while e < n && jac.row(e).0 == cols {
            e += 1;
        }
        let m = e - i;
        // the pattern: the columns of J and, through row c of M (c, then its ancestors), theirs.
        // Walked from the last column, as MuJoCo's `computeY_precount` walks it: every marked dof
        // has its ancestors marked too (its walk went on to the root), so a column found marked
        // was reached from a descendant and adds nothing, and a walk ends at its first marked dof.
        let adr = s.y.colind.len();
        for &c in cols.iter().rev() {
            let a = l.dof_madr[c];
            for &j in &l.col[a..a + l.dof_depth[c] + 1] {
                if s.mark[j] == i {
                    break;
                }
                s.mark[j] = i;
                s.y.colind.push(j);
            }
        }
        let nc = s.y.colind.len() - adr;
        if nc == cols.len() {
            // J's columns hold their ancestors already (a contact's rows, the chains of its two
            // bodies): the pattern is those columns, increasing
            s.y.colind[adr..].copy_from_slice(cols);
        } else {
            s.y.colind[adr..].sort_unstable();
        }
        let pattern = &s.y.colind[adr..];
        for (p, &k) in pattern.iter().enumerate() {
            s.place[k] = p;
        }
        // the block column by column: entry (p, r) at p m + r
        s.ytb.resize(adr + nc * m, 0.0);
        let xb = &mut s.ytb[adr..];
        for r in 0..m {
            let (c, v) = jac.row(i + r);
            for (&c, &v) in c.iter().zip(v) {
                xb[s.place[c] * m + r] = v;
            }
        }
        // X <- D^-1/2 L^-T X, the pattern's dofs from the last; a dof's ancestors come before
        // it. The block's width is a constant for the common sizes (a limit's one row, an
        // elliptic contact's three, a pyramidal one's four), so each step is a few straight-line
        // updates.
        let (qld, place, sd) = (smooth.qld, &s.place[..], &s.sqrt_dinv[..]);
        match m {
            1 => lt_solve::<1>(l, qld, sd, place, pattern, xb),
            2 => lt_solve::<2>(l, qld, sd, place, pattern, xb),
            3 => lt_solve::<3>(l, qld, sd, place, pattern, xb),
            4 => lt_solve::<4>(l, qld, sd, place, pattern, xb),
            _ => lt_solve_any(l, qld, sd, place, pattern, xb, m),
        }
        // the rows of Y: the block transposed
        for _ in 1..m {
            s.y.colind.extend_from_within(adr..adr + nc);
        }
        let start = s.y.values.len();
        s.y.values.resize(start + m * nc, 0.0);
        let rows = &mut s.y.values[start..];
        for (p, x) in xb.chunks_exact(m).enumerate() {
            for (r, &v) in x.iter().enumerate() {
                rows[r * nc + p] = v;
            }
        }
        for r in 1..=m {
            s.y.rowadr.push(adr + r * nc);
        }
        s.yblk.push(YBlock { row: i, m, adr, nc });
        i = e;
    }
    crate::error::check_output("Y = J M^-1/2", &s.y.values)
}

/// [`make_y`]'s passes `X <- D^-1/2 L^-T X` on a block of `M` rows kept column by column (`xb`,
/// entry `(p, r)` at `p M + r`) on `pattern`: for each dof `k` of the pattern from the last,
/// each ancestor `j` of `k` (row `k` of `qLD`) loses `L_kj` times the `M` entries of `k`, which
/// are then final and are scaled by `D_k^-1/2` (`sd[k]`).
#[inline(always)]
fn lt_solve<const M: usize>(l: &MjLayout, qld: &[f64], sd: &[f64], place: &[usize], pattern: &[usize], xb: &mut [f64]) {
    let (xb, _) = xb.as_chunks_mut::<M>();
    for p in (0..pattern.len()).rev() {
        let k = pattern[p];
        let (a, d) = (l.dof_madr[k] + 1, l.dof_depth[k]);
        let xk = xb[p];
        for (&lkj, &j) in qld[a..a + d].iter().zip(&l.col[a..a + d]) {
            let y = &mut xb[place[j]];
            for r in 0..M {
                y[r] -= lkj * xk[r];
            }
        }
        for v in &mut xb[p] {
            *v *= sd[k];
        }
    }
}

/// [`lt_solve`] for a block of any number `m` of rows.
fn lt_solve_any(l: &MjLayout, qld: &[f64], sd: &[f64], place: &[usize], pattern: &[usize], xb: &mut [f64], m: usize) {
    for p in (0..pattern.len()).rev() {
        let k = pattern[p];
        let (a, d) = (l.dof_madr[k] + 1, l.dof_depth[k]);
        let (before, xk) = xb.split_at_mut(p * m);
        let xk = &mut xk[..m];
        for (&lkj, &j) in qld[a..a + d].iter().zip(&l.col[a..a + d]) {
            let q = place[j] * m;
            for (y, &x) in before[q..q + m].iter_mut().zip(&*xk) {
                *y -= lkj * x;
            }
        }
        for v in xk {
            *v *= sd[k];
        }
    }
}

/// MuJoCo's `mj_makeAR`: `AR = Y Y^T + diag(R)` from the rows of `Y` ([`make_y`]) and its
/// columns (`Y^T` by rows, one list of `(row, value)` per dof): row `i` of `A` gathers
/// `Y_ij Y_kj` over the dofs `j` of row `i` and the rows `k` that touch them, so only rows
/// sharing a tree meet, and every entry sums its products in increasing `j`, the order of the
/// dot product `Y_i . Y_k` (`A` comes out exactly symmetric). Dense storage fills the lower
/// triangle and mirrors it into `s.ar` (row-major `nefc x nefc`); sparse storage writes whole
/// rows into `s.ar_rows`, columns increasing. Also `s.arinv = 1 / AR_ii` (MuJoCo's
/// `ARdiaginv`).
pub fn make_ar(r: &[f64], storage: JacStorage, s: &mut PgsScratch) {
    let (n, nv) = (s.y.nrows(), s.y.ncols);
    // Y^T by rows: counts, addresses, then entries in increasing row order
    s.yt_adr.clear();
    s.yt_adr.resize(nv + 1, 0);
    for &c in &s.y.colind {
        s.yt_adr[c + 1] += 1;
    }
    for j in 0..nv {
        s.yt_adr[j + 1] += s.yt_adr[j];
    }
    let nnz = s.y.colind.len();
    s.yt_row.resize(nnz, 0);
    s.yt_val.resize(nnz, 0.0);
    s.next.clear();
    s.next.extend_from_slice(&s.yt_adr[..nv]);
    for i in 0..n {
        let (cols, vals) = s.y.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            s.yt_row[s.next[c]] = i;
            s.yt_val[s.next[c]] = v;
            s.next[c] += 1;
        }
    }
    s.acc.clear();
    s.acc.resize(n, 0.0);
    s.seen.clear();
    s.seen.resize(n, false);
    s.arinv.clear();
    s.arinv.resize(n, 0.0);
    if storage == JacStorage::Dense {
        // the lower triangle summed in place, then mirrored
        s.ar.clear();
        s.ar.resize(n * n, 0.0);
        for i in 0..n {
            let row = &mut s.ar[i * n..(i + 1) * n];
            let (cols, vals) = s.y.row(i);
            for (&j, &yij) in cols.iter().zip(vals) {
                let (a, e) = (s.yt_adr[j], s.yt_adr[j + 1]);
                for (&k, &ykj) in s.yt_row[a..e].iter().zip(&s.yt_val[a..e]) {
                    if k > i {
                        break;
                    }
                    row[k] += yij * ykj;
                }
            }
            row[i] += r[i];
            s.arinv[i] = 1.0 / row[i];
        }
        for i in 0..n {
            for k in 0..i {
                s.ar[k * n + i] = s.ar[i * n + k];
            }
        }
        return;
    }
    s.ar_rows.clear(n);
    for i in 0..n {
        // the rows k of A's row i with their sums; the diagonal always (a row of J that is
        // zero, possible only by hand, has AR_ii = R_i). A row with the same columns of Y as
        // the row before (the next row of the same contact) meets the same rows k: their list
        // is kept from that row instead of being found and sorted again.
        let (cols, vals) = s.y.row(i);
        let same = i > 0 && !cols.is_empty() && cols == s.y.row(i - 1).0;
        if same {
            for (&j, &yij) in cols.iter().zip(vals) {
                let (a, e) = (s.yt_adr[j], s.yt_adr[j + 1]);
                for (&k, &ykj) in s.yt_row[a..e].iter().zip(&s.yt_val[a..e]) {
                    s.acc[k] += yij * ykj;
                }
            }
        } else {
            s.touched.clear();
            s.touched.push(i);
            s.seen[i] = true;
            for (&j, &yij) in cols.iter().zip(vals) {
                let (a, e) = (s.yt_adr[j], s.yt_adr[j + 1]);
                for (&k, &ykj) in s.yt_row[a..e].iter().zip(&s.yt_val[a..e]) {
                    if !s.seen[k] {
                        s.seen[k] = true;
                        s.touched.push(k);
                    }
                    s.acc[k] += yij * ykj;
                }
            }
            s.touched.sort_unstable();
            for &k in &s.touched {
                s.seen[k] = false;
            }
        }
        let start = s.ar_rows.values.len();
        s.ar_rows.colind.extend_from_slice(&s.touched);
        s.ar_rows.values.extend(s.touched.iter().map(|&k| s.acc[k]));
        for &k in &s.touched {
            s.acc[k] = 0.0;
        }
        // the diagonal (always in the list)
        let d = start + s.touched.binary_search(&i).expect("row i meets itself");
        s.ar_rows.values[d] += r[i];
        s.arinv[i] = 1.0 / s.ar_rows.values[d];
        s.ar_rows.rowadr.push(s.ar_rows.colind.len());
    }
}
// ANCHOR_END: make_dual

/// A block of consecutive rows of `Y` with the same columns ([`make_ar_blocks`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct YBlock {
    /// Its first row.
    row: usize,
    /// Its number of rows.
    m: usize,
    /// Where its first row starts in `y.colind` and `y.values` (its `m * nc` values follow, row
    /// by row).
    adr: usize,
    /// Its number of columns.
    nc: usize,
}

// ANCHOR: make_ar_blocks
/// [`make_ar`] by the blocks of rows of [`make_y`] (run first on the same scratch), equal to it
/// bit for bit: pattern, values and `arinv` (`tests/pgs_dual.rs`). The rows of a block share
/// their columns, so two blocks meet when they share a column, and the entries `AR_ik` of a
/// block's row `i` and a neighbouring block `b'` are the products of `Y_i` with the rows of
/// `Y_b'` on their common columns, found once per pair of blocks instead of once per entry. Each
/// entry still sums `Y_ij Y_kj` from zero in increasing `j`, the order of [`make_ar`]: for each
/// common column, `Y_ij` times that column of `Y_b'` (its rows contiguous, `Y_b'^T`) is added
/// into the sums of four entries at a time, kept in one vector register. No search
/// per entry and no sort per row: the neighbours come in increasing order and so do their rows.
/// Dense storage (below 60 dofs, where every row of `AR` is kept whole) needs no blocks: `Y^T`
/// is laid out whole, and row `i` of `AR` adds `Y_ij` times row `j` of `Y^T` into its `n` sums
/// for each column `j` of row `i` of `Y`, increasing (a zero `Y_kj` adds nothing to a sum that
/// starts at `+0`).
pub fn make_ar_blocks(r: &[f64], storage: JacStorage, s: &mut PgsScratch) {
    crate::sparse::with_avx(
        #[inline(always)]
        || make_ar_blocks_body(r, storage, s),
    )
}

/// The body of [`make_ar_blocks`], compiled for AVX where the processor has it.
#[inline(always)]
fn make_ar_blocks_body(r: &[f64], storage: JacStorage, s: &mut PgsScratch) {
    let PgsScratch {
        y,
        ar,
        ar_rows,
        arinv,
        yblk,
        ytb,
        yt_adr,
        next,
        col_blk,
        mark,
        nbr,
        pairs,
        acc,
        gath,
        ..
    } = s;
    let (n, nv) = (y.nrows(), y.ncols);
    arinv.clear();
    arinv.resize(n, 0.0);
    if storage == JacStorage::Dense {
        // dense (below 60 dofs, where every row of AR is stored whole): the whole of Y^T, row j
        // holding Y_kj for every k; row i of AR gathers, for each column j of row i of Y in
        // increasing order, Y_ij times that row into its sums (a zero Y_kj, outside row k's
        // pattern, adds nothing to a sum that starts at +0)
        ar.clear();
        ar.resize(n * n, 0.0);
        gath.clear();
        gath.resize(nv * n, 0.0);
        for i in 0..n {
            let (cols, vals) = y.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                gath[c * n + i] = v;
            }
        }
        for i in 0..n {
            let (cols, vals) = y.row(i);
            let row = &mut ar[i * n..(i + 1) * n];
            for (&c, &a) in cols.iter().zip(vals) {
                for (x, &v) in row.iter_mut().zip(&gath[c * n..(c + 1) * n]) {
                    *x += a * v;
                }
            }
            row[i] += r[i];
            arinv[i] = 1.0 / row[i];
        }
        return;
    }
    // the blocks of each column, increasing, with the column's place in each
    yt_adr.clear();
    yt_adr.resize(nv + 1, 0);
    let mut maxm = 0;
    for b in yblk.iter() {
        maxm = maxm.max(b.m);
        for &c in &y.colind[b.adr..b.adr + b.nc] {
            yt_adr[c + 1] += 1;
        }
    }
    for j in 0..nv {
        yt_adr[j + 1] += yt_adr[j];
    }
    col_blk.clear();
    col_blk.resize(yt_adr[nv], (0, 0));
    next.clear();
    next.extend_from_slice(&yt_adr[..nv]);
    for (bi, b) in yblk.iter().enumerate() {
        for (p, &c) in y.colind[b.adr..b.adr + b.nc].iter().enumerate() {
            col_blk[next[c]] = (bi, p);
            next[c] += 1;
        }
    }
    ar_rows.clear(n);
    acc.clear();
    acc.resize(maxm, 0.0);
    // the block that last met each block
    mark.clear();
    mark.resize(yblk.len(), usize::MAX);
    for (bi, b) in yblk.iter().enumerate() {
        let cols = &y.colind[b.adr..b.adr + b.nc];
        // the neighbours, increasing
        nbr.clear();
        for &c in cols {
            for &(b2, _) in &col_blk[yt_adr[c]..yt_adr[c + 1]] {
                if mark[b2] != bi {
                    mark[b2] = bi;
                    nbr.push(Neighbour::default());
                    nbr.last_mut().expect("pushed").block = b2;
                }
            }
        }
        nbr.sort_unstable_by_key(|nb| nb.block);
        // the common columns of each: one run of columns in both blocks (then read in place), or
        // gathered (the neighbour's into `gath` once, the row's into `pairs`' scratch per row)
        pairs.clear();
        gath.clear();
        for nb in nbr.iter_mut() {
            let b2 = &yblk[nb.block];
            let cols2 = &y.colind[b2.adr..b2.adr + b2.nc];
            nb.start = pairs.len();
            let (mut p, mut p2) = (0, 0);
            // bounded: p + p2 grows each pass
            while p < cols.len() && p2 < cols2.len() {
                match cols[p].cmp(&cols2[p2]) {
                    std::cmp::Ordering::Less => p += 1,
                    std::cmp::Ordering::Greater => p2 += 1,
                    std::cmp::Ordering::Equal => {
                        pairs.push((p, p2));
                        p += 1;
                        p2 += 1;
                    }
                }
            }
            nb.end = pairs.len();
            let common = &pairs[nb.start..nb.end];
            let run = common
                .iter()
                .enumerate()
                .all(|(t, &(p, p2))| p == common[0].0 + t && p2 == common[0].1 + t);
            nb.gathered = if run || common.is_empty() {
                None
            } else {
                let g = gath.len();
                for &(_, p2) in common {
                    gath.extend_from_slice(&ytb[b2.adr + p2 * b2.m..b2.adr + (p2 + 1) * b2.m]);
                }
                Some(g)
            };
        }
        for rr in 0..b.m {
            let i = b.row + rr;
            let yr = &y.values[b.adr + rr * b.nc..b.adr + (rr + 1) * b.nc];
            let start = ar_rows.values.len();
            let mut diag = None;
            for nb in nbr.iter() {
                let b2 = &yblk[nb.block];
                let common = &pairs[nb.start..nb.end];
                let sums = &mut acc[..b2.m];
                match nb.gathered {
                    None => {
                        let (p, p2) = common.first().copied().unwrap_or((0, 0));
                        let len = common.len();
                        let g2 = &ytb[b2.adr + p2 * b2.m..b2.adr + (p2 + len) * b2.m];
                        gemv_t(&yr[p..p + len], g2, b2.m, sums);
                    }
                    Some(g) => {
                        let mut g1 = [0.0; 64];
                        let len = common.len();
                        let g2 = &gath[g..g + len * b2.m];
                        if len <= g1.len() {
                            for (x, &(p, _)) in g1.iter_mut().zip(common) {
                                *x = yr[p];
                            }
                            gemv_t(&g1[..len], g2, b2.m, sums);
                        } else {
                            gemv_t_gather(yr, common, g2, b2.m, sums);
                        }
                    }
                }
                if nb.block == bi {
                    diag = Some(ar_rows.values.len() - start + rr);
                }
                ar_rows.colind.extend(b2.row..b2.row + b2.m);
                ar_rows.values.extend_from_slice(sums);
            }
            // the diagonal (a zero row of J, made only by hand, meets no block: AR_ii = R_i)
            let d = match diag {
                Some(o) => &mut ar_rows.values[start + o],
                None => {
                    ar_rows.colind.push(i);
                    ar_rows.values.push(0.0);
                    ar_rows.values.last_mut().expect("pushed")
                }
            };
            *d += r[i];
            arinv[i] = 1.0 / *d;
            ar_rows.rowadr.push(ar_rows.colind.len());
        }
    }
}

/// A neighbour of a block in [`make_ar_blocks`]: its number, its common columns
/// (`pairs[start..end]`), and where its common columns were gathered (`None`: they form one run
/// in both blocks, read in place).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Neighbour {
    block: usize,
    start: usize,
    end: usize,
    gathered: Option<usize>,
}

/// `out[q] = sum_t g1[t] g2[t m2 + q]` for `q < m2`, each sum from zero in increasing `t`: four
/// sums at a time in one vector register, the rest one by one.
#[inline(always)]
fn gemv_t(g1: &[f64], g2: &[f64], m2: usize, out: &mut [f64]) {
    let four = m2 / 4 * 4;
    for c in (0..four).step_by(4) {
        let mut acc = [0.0; 4];
        for (&a, col) in g1.iter().zip(g2.chunks_exact(m2)) {
            let v = &col[c..c + 4];
            for k in 0..4 {
                acc[k] += a * v[k];
            }
        }
        out[c..c + 4].copy_from_slice(&acc);
    }
    for q in four..m2 {
        let mut acc = 0.0;
        for (&a, col) in g1.iter().zip(g2.chunks_exact(m2)) {
            acc += a * col[q];
        }
        out[q] = acc;
    }
}

/// [`gemv_t`] with `g1[t] = yr[pairs[t].0]` read in place (more common columns than
/// [`make_ar_blocks`]'s scratch holds).
fn gemv_t_gather(yr: &[f64], pairs: &[(usize, usize)], g2: &[f64], m2: usize, out: &mut [f64]) {
    for (q, o) in out.iter_mut().enumerate().take(m2) {
        let mut acc = 0.0;
        for (&(p, _), col) in pairs.iter().zip(g2.chunks_exact(m2)) {
            acc += yr[p] * col[q];
        }
        *o = acc;
    }
}
// ANCHOR_END: make_ar_blocks

/// The dual cost `1/2 f^T AR f + f^T b`.
pub fn dual_cost(dual: &Dual, f: &[f64]) -> f64 {
    let mut c = 0.0;
    for (i, fi) in f.iter().enumerate() {
        if *fi != 0.0 {
            c += fi * (0.5 * dual.ar_rows.dot_row(i, f) + dual.b[i]);
        }
    }
    c
}
