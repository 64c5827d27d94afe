//! Projected Gauss-Seidel on the dual problem (MuJoCo's `mj_solPGS`):
//! minimize `1/2 f^T AR f + f^T b` over the forces allowed by the rows, `AR = J M^-1 J^T + R`,
//! `b = J qacc_smooth - aref`, one block at a time: a scalar row is minimized exactly and
//! clamped; an elliptic contact takes a ray step for the normal force and then solves a small
//! QCQP for the friction forces inside the ellipse `sum (f_j / mu_j)^2 <= f_0^2`. A block whose
//! update would raise the cost is undone. Book: "Solvers", section "PGS".
//!
//! [`solve_pgs`] is the classic sequential sweep of spec 5.2. MuJoCo 3.8 and later (4.0.0
//! included) visit the blocks in an order reshuffled every sweep and add Nesterov momentum with
//! restarts: [`solve_pgs_with`] with [`PgsVariant::Accelerated`], which [`super::solve`] runs and
//! which reproduces MuJoCo's PGS iteration for iteration.

use super::super::constraint::SparseRows;
use super::super::constraint::{Efc, EfcState, EfcType};
use super::cost::{update, Cone};
use super::{mul_j, solve_m, trace_m, JacStorage, Smooth, SolverOptions, SolverResult, SolverStat};
use crate::error::Result;
use crate::model::constants::mjMINVAL;
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
        // the pattern: the columns of J and, through row c of M (c, then its ancestors), theirs
        let adr = s.y.colind.len();
        for &c in cols.iter().rev() {
            let a = l.dof_madr[c];
            for &j in &l.col[a..a + l.dof_depth[c] + 1] {
                if s.mark[j] != i {
                    s.mark[j] = i;
                    s.y.colind.push(j);
                }
            }
        }
        s.y.colind[adr..].sort_unstable();
        let nc = s.y.colind.len() - adr;
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
        // X <- L^-T X, the pattern's dofs from the last; a dof's ancestors come before it
        for p in (0..nc).rev() {
            let k = pattern[p];
            let (a, d) = (l.dof_madr[k] + 1, l.dof_depth[k]);
            let (before, xk) = xb.split_at_mut(p * m);
            let xk = &xk[..m];
            for (&lkj, &j) in smooth.qld[a..a + d].iter().zip(&l.col[a..a + d]) {
                let q = s.place[j] * m;
                for (y, &x) in before[q..q + m].iter_mut().zip(xk) {
                    *y -= lkj * x;
                }
            }
        }
        // X <- D^-1/2 X, then the rows of Y
        for (p, &k) in pattern.iter().enumerate() {
            let sd = s.sqrt_dinv[k];
            for v in &mut xb[p * m..(p + 1) * m] {
                *v *= sd;
            }
        }
        for r in 0..m {
            if r > 0 {
                s.y.colind.extend_from_within(adr..adr + nc);
            }
            s.y.values.extend((0..nc).map(|p| xb[p * m + r]));
            s.y.rowadr.push(s.y.colind.len());
        }
        s.yblk.push(YBlock { row: i, m, adr, nc });
        i = e;
    }
    crate::error::check_output("Y = J M^-1/2", &s.y.values)
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
struct YBlock {
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
struct Neighbour {
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

/// The starting forces (MuJoCo's `warmstart` for PGS): zero, or the forces
/// [`update`] gives at `J qacc_warmstart - aref` when their dual cost is not positive.
pub fn initial_force(efc: &Efc, cones: &[Cone], dual: &Dual, opts: &SolverOptions) -> Vec<f64> {
    let mut f = vec![0.0; efc.nefc()];
    let (mut jar, mut st) = (Vec::new(), Vec::new());
    warm_force(efc, cones, opts, &mut f, &mut jar, &mut st, |f| dual_cost(dual, f));
    f
}

/// [`initial_force`] into `f`, with the dual cost given by `cost`; `jar` and `st` are scratch
/// (resized to nefc, no allocation once they have grown).
fn warm_force(
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    f: &mut [f64],
    jar: &mut Vec<f64>,
    st: &mut Vec<EfcState>,
    mut cost: impl FnMut(&[f64]) -> f64,
) {
    f.fill(0.0);
    if let Some(w) = &opts.warmstart {
        let n = efc.nefc();
        jar.clear();
        jar.resize(n, 0.0);
        mul_j(efc, w, jar);
        for (x, a) in jar.iter_mut().zip(&efc.aref) {
            *x -= a;
        }
        st.clear();
        st.resize(n, EfcState::Satisfied);
        update(efc, cones, jar, f, st, None);
        if cost(f) > 0.0 {
            f.fill(0.0);
        }
    }
}

// ANCHOR: dual_state
/// MuJoCo's `dualState`: the state of each row read from its force, and the number of active
/// rows. Friction loss at `-eta` is LINEARPOS and at `+eta` LINEARNEG (the primal's sign); a
/// one-sided row is QUADRATIC when pushing; an elliptic block, in the coordinates
/// `N = f_0 / mu`, `T = |(f_j / mu_j)_j|`, is SATISFIED for `mu N >= T`, QUADRATIC for
/// `N + mu T <= 0` and CONE between.
pub fn dual_state(efc: &Efc, cones: &[Cone], force: &[f64], state: &mut [EfcState]) -> usize {
    let (ne, nf, n) = (efc.ne, efc.nf, efc.nefc());
    let mut nactive = ne + nf;
    let mut k = 0;
    let mut i = 0;
    // bounded: i grows by 1 or by a cone's dim
    while i < n {
        if i < ne {
            state[i] = EfcState::Quadratic;
        } else if i < ne + nf {
            let eta = efc.frictionloss[i];
            state[i] = if force[i] <= -eta {
                EfcState::LinearPos
            } else if force[i] >= eta {
                EfcState::LinearNeg
            } else {
                EfcState::Quadratic
            };
        } else if efc.efc_type[i] != EfcType::ContactElliptic {
            if force[i] <= 0.0 {
                state[i] = EfcState::Satisfied;
            } else {
                state[i] = EfcState::Quadratic;
                nactive += 1;
            }
        } else {
            let c = &cones[k];
            let nn = force[i] / c.mu;
            let mut t2 = 0.0;
            for j in 1..c.dim {
                t2 += (force[i + j] / c.friction[j - 1]).powi(2);
            }
            let t = t2.sqrt();
            let st = if c.mu * nn >= t {
                EfcState::Satisfied
            } else if nn + c.mu * t <= 0.0 {
                nactive += c.dim;
                EfcState::Quadratic
            } else {
                nactive += c.dim;
                EfcState::Cone
            };
            state[i..i + c.dim].fill(st);
            k += 1;
            i += c.dim;
            continue;
        }
        i += 1;
    }
    nactive
}
// ANCHOR_END: dual_state

// ANCHOR: qcqp
/// MuJoCo's `mju_QCQP` for `n <= 5`: minimize `1/2 x^T A x + b^T x` subject to
/// `sum (x_j / d_j)^2 <= r^2`. With `x = D y` the constraint is the ball `|y| <= r`; the
/// minimizer is `y(lambda) = -(A~ + lambda I)^-1 b~` for the smallest `lambda >= 0` with
/// `|y| <= r`, found by at most 20 Newton steps on `phi(lambda) = |y|^2 - r^2` (convex and
/// decreasing, so Newton from 0 approaches the root from below). Returns `x` in `out[..n]` and
/// whether the constraint is active; an `A~ + lambda I` that is not positive definite (pivot
/// below 1e-10) gives `x = 0`. `a` is row-major n x n. For `n = 2` and `3` (condim 3 and 4)
/// the inverse comes from the adjugate instead of a factorization ([`qcqp_adjugate`], MuJoCo's
/// `mju_QCQP2` and `mju_QCQP3`).
pub fn qcqp(a: &[f64; 25], b: &[f64; 5], d: &[f64; 5], r: f64, n: usize, out: &mut [f64; 5]) -> bool {
    if n == 2 || n == 3 {
        return qcqp_adjugate(a, b, d, r, n, out);
    }
    let mut at = [0.0; 25];
    let mut bt = [0.0; 5];
    for i in 0..n {
        bt[i] = b[i] * d[i];
        for j in 0..n {
            at[i * n + j] = a[i * n + j] * d[i] * d[j];
        }
    }
    let mut lambda: f64 = 0.0;
    let mut y = [0.0; 5];
    let mut l = [0.0; 25];
    for _ in 0..20 {
        // Cholesky of A~ + lambda I
        for i in 0..n {
            for j in 0..n {
                l[i * n + j] = at[i * n + j] + if i == j { lambda } else { 0.0 };
            }
        }
        if !small_cholesky(&mut l, n) {
            out.fill(0.0);
            return false;
        }
        y[..n].copy_from_slice(&bt[..n]);
        small_solve(&l, n, &mut y);
        for v in y.iter_mut().take(n) {
            *v = -*v;
        }
        let phi = y[..n].iter().map(|v| v * v).sum::<f64>() - r * r;
        if phi < 1e-10 {
            break;
        }
        // phi' = -2 y^T (A~ + lambda I)^-1 y
        let mut z = y;
        small_solve(&l, n, &mut z);
        let dphi = -2.0 * (0..n).map(|i| y[i] * z[i]).sum::<f64>();
        let step = -phi / dphi;
        if step < 1e-10 {
            break;
        }
        lambda += step;
    }
    for i in 0..n {
        out[i] = y[i] * d[i];
    }
    lambda != 0.0
}

/// [`qcqp`] for `n = 2` or `3` with `P = (A~ + lambda I)^-1 = adj / det` written out: the same
/// Newton steps on `phi(lambda) = |y|^2 - r^2`, `y = -P b~`, `phi' = -2 y^T P y`, and `x = 0`
/// when `det < 1e-10` (MuJoCo's test in `mju_QCQP2`, `mju_QCQP3`).
pub fn qcqp_adjugate(a: &[f64; 25], b: &[f64; 5], d: &[f64; 5], r: f64, n: usize, out: &mut [f64; 5]) -> bool {
    qcqp_adjugate_body(a, b, d, r, n, out)
}

/// The body of [`qcqp_adjugate`], inlined into the sweep with `n` a constant ([`elliptic_update`]).
#[inline(always)]
fn qcqp_adjugate_body(a: &[f64; 25], b: &[f64; 5], d: &[f64; 5], r: f64, n: usize, out: &mut [f64; 5]) -> bool {
    // A~ = D A D (symmetric: the upper triangle is read), b~ = D b
    let mut atd = [[0.0; 3]; 3];
    for i in 0..n {
        for j in i..n {
            atd[i][j] = a[i * n + j] * d[i] * d[j];
        }
    }
    let at = |i: usize, j: usize| atd[i][j];
    let bt = [b[0] * d[0], b[1] * d[1], if n == 3 { b[2] * d[2] } else { 0.0 }];
    let mut lambda: f64 = 0.0;
    let mut y = [0.0; 3];
    for _ in 0..20 {
        // P, symmetric, as [P11, P22, P33, P12, P13, P23]
        let p = if n == 2 {
            let (a11, a22, a12) = (at(0, 0) + lambda, at(1, 1) + lambda, at(0, 1));
            let det = a11 * a22 - a12 * a12;
            if det < 1e-10 {
                out[..n].fill(0.0);
                return false;
            }
            let inv = 1.0 / det;
            [a22 * inv, a11 * inv, 0.0, -a12 * inv, 0.0, 0.0]
        } else {
            let (a11, a22, a33) = (at(0, 0) + lambda, at(1, 1) + lambda, at(2, 2) + lambda);
            let (a12, a13, a23) = (at(0, 1), at(0, 2), at(1, 2));
            // the adjugate's entries, then det by the first row
            let c = [
                a22 * a33 - a23 * a23,
                a11 * a33 - a13 * a13,
                a11 * a22 - a12 * a12,
                a13 * a23 - a12 * a33,
                a12 * a23 - a13 * a22,
                a12 * a13 - a23 * a11,
            ];
            let det = a11 * c[0] + a12 * c[3] + a13 * c[4];
            if det < 1e-10 {
                out[..n].fill(0.0);
                return false;
            }
            let inv = 1.0 / det;
            c.map(|x| x * inv)
        };
        let [p11, p22, p33, p12, p13, p23] = p;
        y = [
            -p11 * bt[0] - p12 * bt[1] - p13 * bt[2],
            -p12 * bt[0] - p22 * bt[1] - p23 * bt[2],
            -p13 * bt[0] - p23 * bt[1] - p33 * bt[2],
        ];
        let phi = y[0] * y[0] + y[1] * y[1] + y[2] * y[2] - r * r;
        if phi < 1e-10 {
            break;
        }
        let dphi = -2.0 * (p11 * y[0] * y[0] + p22 * y[1] * y[1] + p33 * y[2] * y[2])
            - 4.0 * (p12 * y[0] * y[1] + p13 * y[0] * y[2] + p23 * y[1] * y[2]);
        let step = -phi / dphi;
        if step < 1e-10 {
            break;
        }
        lambda += step;
    }
    for i in 0..n {
        out[i] = y[i] * d[i];
    }
    lambda != 0.0
}
// ANCHOR_END: qcqp

/// In-place Cholesky `L L^T` of a row-major n x n (lower triangle); false if a pivot is below
/// 1e-10 (`mju_cholFactor`'s `mindiag`).
fn small_cholesky(l: &mut [f64; 25], n: usize) -> bool {
    for j in 0..n {
        let mut dj = l[j * n + j];
        for k in 0..j {
            dj -= l[j * n + k] * l[j * n + k];
        }
        if !(dj >= 1e-10) {
            return false;
        }
        let dj = dj.sqrt();
        l[j * n + j] = dj;
        for i in j + 1..n {
            let mut s = l[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / dj;
        }
    }
    true
}

/// `x <- (L L^T)^-1 x` with the factor of [`small_cholesky`].
fn small_solve(l: &[f64; 25], n: usize, x: &mut [f64; 5]) {
    for i in 0..n {
        let mut s = x[i];
        for k in 0..i {
            s -= l[i * n + k] * x[k];
        }
        x[i] = s / l[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for k in i + 1..n {
            s -= l[k * n + i] * x[k];
        }
        x[i] = s / l[i * n + i];
    }
}

/// Scales the friction forces onto the ellipse `sum (f_j / mu_j)^2 = f_0^2` (MuJoCo's
/// `projectEllipsoid` with `feasible = 0`).
fn project_ellipse(friction: &mut [f64], normal: f64, mu: &[f64]) {
    let s: f64 = friction.iter().zip(mu).map(|(f, m)| (f / m).powi(2)).sum();
    let scl = (normal * normal / s.max(mjMINVAL)).sqrt();
    for f in friction.iter_mut() {
        *f *= scl;
    }
}

// ANCHOR: cost_change
/// MuJoCo's `costChange`: the dual cost change `1/2 delta^T A_b delta + delta^T res` of moving a
/// block from `old` to `f` (`res` the block's residual at `old`); a change above 1e-10 restores
/// `old` and counts as 0.
pub fn cost_change(ab: &[f64; 36], dim: usize, f: &mut [f64], old: &[f64], res: &[f64]) -> f64 {
    cost_change_body(ab, dim, f, old, res)
}

/// The body of [`cost_change`] (see [`elliptic_block_body`]).
#[inline(always)]
fn cost_change_body(ab: &[f64; 36], dim: usize, f: &mut [f64], old: &[f64], res: &[f64]) -> f64 {
    let mut delta = [0.0; 6];
    for a in 0..dim {
        delta[a] = f[a] - old[a];
    }
    let (mut quad, mut lin) = (0.0, 0.0);
    for a in 0..dim {
        let mut ad = 0.0;
        for b in 0..dim {
            ad += ab[a * dim + b] * delta[b];
        }
        quad += delta[a] * ad;
        lin += delta[a] * res[a];
    }
    let change = 0.5 * quad + lin;
    if change > 1e-10 {
        f[..dim].copy_from_slice(&old[..dim]);
        0.0
    } else {
        change
    }
}
// ANCHOR_END: cost_change

// ANCHOR: solve_pgs
/// MuJoCo's `mj_solPGS` with the classic sequential sweep (spec 5.2), then `mj_dualFinish`:
/// `qfrc_constraint = J^T f`, `qacc = qacc_smooth + M^-1 J^T f`. Stops when a sweep's scaled
/// improvement is below `tolerance` or after `iterations` sweeps. Inputs assumed checked by
/// [`super::solve`].
pub fn solve_pgs(smooth: &Smooth, efc: &Efc, cones: &[Cone], opts: &SolverOptions) -> Result<SolverResult> {
    solve_pgs_with(smooth, efc, cones, opts, PgsVariant::Classic)
}

/// Which PGS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgsVariant {
    /// Blocks in row order, no momentum (spec 5.2; what [`solve_pgs`] runs).
    Classic,
    /// MuJoCo since 3.8: the blocks visited in an order reshuffled every sweep (Fisher-Yates with
    /// a PCG32 generator seeded as MuJoCo seeds it), and Nesterov momentum with restarts.
    Accelerated,
}

/// [`solve_pgs_storage`] on the sparse route.
pub fn solve_pgs_with(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
) -> Result<SolverResult> {
    solve_pgs_storage(smooth, efc, cones, opts, variant, JacStorage::Sparse)
}

/// [`solve_pgs_into`] with fresh storage, returning the result.
pub fn solve_pgs_storage(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
    storage: JacStorage,
) -> Result<SolverResult> {
    let mut out = SolverResult::default();
    solve_pgs_into(
        smooth,
        efc,
        cones,
        opts,
        variant,
        storage,
        &mut PgsScratch::default(),
        &mut out,
    )?;
    Ok(out)
}

/// [`solve_pgs`] in either [`PgsVariant`], with a sweep reading `AR` by dense rows
/// ([`JacStorage::Dense`], MuJoCo's choice below 60 dofs) or by their nonzeros
/// ([`JacStorage::Sparse`]); `AR` itself is made once, from the nonzeros of `Y = J M^-1/2`
/// ([`make_y`], [`make_ar`]). A scalar row steps by MuJoCo's `f_i <- f_i - r_i / AR_ii` with
/// the reciprocal kept (`ARinv`). With momentum, before each sweep the forces are
/// extrapolated, `f <- f + beta (f - f_prev)`, `beta = (k - 1)/(k + 2)`, and put back in their
/// sets ([`project`]); `k` restarts at 0 when the sweep's correction opposes the extrapolation
/// (O'Donoghue and Candes' gradient restart), so the dual cost need not fall monotonically.
/// All storage is `s` and `out`, reused: no allocation once they have seen the sizes.
#[allow(clippy::too_many_arguments)]
pub fn solve_pgs_into(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
    storage: JacStorage,
    s: &mut PgsScratch,
    out: &mut SolverResult,
) -> Result<()> {
    crate::sparse::with_avx(
        #[inline(always)]
        || solve_pgs_into_body(smooth, efc, cones, opts, variant, storage, s, out),
    )
}

/// The body of [`solve_pgs_into`], compiled for AVX where the processor has it (the same numbers
/// bit for bit: only the width of the vector instructions differs).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn solve_pgs_into_body(
    smooth: &Smooth,
    efc: &Efc,
    cones: &[Cone],
    opts: &SolverOptions,
    variant: PgsVariant,
    storage: JacStorage,
    s: &mut PgsScratch,
    out: &mut SolverResult,
) -> Result<()> {
    let (nv, n) = (smooth.layout.nv, efc.nefc());
    let (ne, nf) = (efc.ne, efc.nf);
    let accelerated = variant == PgsVariant::Accelerated;
    let dense = storage == JacStorage::Dense;
    let jac = efc.sparse_rows();
    make_y(smooth, jac, s)?;
    make_ar_blocks(&efc.r, storage, s);
    if !dense {
        s.find_runs();
    }
    s.b.clear();
    s.b.resize(n, 0.0);
    jac.mul(smooth.qacc_smooth, &mut s.b);
    for (bi, a) in s.b.iter_mut().zip(&efc.aref) {
        *bi -= a;
    }
    s.ardiag.clear();
    s.ardiag.extend(s.arinv.iter().map(|a| 1.0 / a));
    // the blocks: (first row, rows, cone index or usize::MAX), and AR's block of each cone
    s.blocks.clear();
    s.ablock.clear();
    let (mut i, mut kc) = (0, 0);
    // bounded: i grows by 1 or by a cone's dim
    while i < n {
        if efc.efc_type[i] == EfcType::ContactElliptic {
            let dim = cones[kc].dim;
            s.blocks.push((i, dim, kc));
            let mut ab = [0.0; 36];
            for a in 0..dim {
                for b in 0..dim {
                    ab[a * dim + b] = s.ar_entry(n, dense, i + a, i + b);
                }
            }
            s.ablock.push(ab);
            i += dim;
            kc += 1;
        } else {
            s.blocks.push((i, 1, usize::MAX));
            i += 1;
        }
    }
    let f = &mut out.efc_force;
    f.clear();
    f.resize(n, 0.0);
    if opts.warmstart.is_some() {
        // the warm start's scratch, taken out of `s` while its cost reads `s`
        let mut jar = std::mem::take(&mut s.warm_jar);
        let mut st = std::mem::take(&mut s.warm_state);
        let mut u = std::mem::take(&mut s.warm_u);
        u.clear();
        u.resize(nv, 0.0);
        let sr: &PgsScratch = s;
        warm_force(efc, cones, opts, f, &mut jar, &mut st, |f| sr.cost(&efc.r, f, &mut u));
        (s.warm_jar, s.warm_state, s.warm_u) = (jar, st, u);
    }
    let state = &mut out.efc_state;
    state.clear();
    state.resize(n, EfcState::Satisfied);
    dual_state(efc, cones, f, state);
    let scale = 1.0 / trace_m(smooth.layout, smooth.qm);
    s.order.clear();
    s.order.extend(0..s.blocks.len());
    let mut rng = Pcg32::mujoco_seed();
    s.f_prev.clear();
    s.f_prev.extend_from_slice(f);
    s.f_mom.clear();
    s.f_mom.extend_from_slice(f);
    s.u.clear();
    s.u.resize(nv, 0.0);
    let mut k_nesterov = 0usize;
    let stats = &mut out.stats;
    stats.clear();
    // bounded by opts.iterations
    while n > 0 && stats.len() < opts.iterations {
        if accelerated {
            let beta = if stats.is_empty() || k_nesterov < 2 {
                0.0
            } else {
                (k_nesterov as f64 - 1.0) / (k_nesterov as f64 + 2.0)
            };
            if beta > 0.0 {
                for (fr, prev) in f.iter_mut().zip(s.f_prev.iter_mut()) {
                    let saved = *fr;
                    *fr += beta * (*fr - *prev);
                    *prev = saved;
                }
                project(efc, cones, f);
            } else {
                s.f_prev.copy_from_slice(f);
            }
            s.f_mom.copy_from_slice(f);
            rng.shuffle(&mut s.order);
        }
        let mut improvement = 0.0;
        // one sweep
        for &bi in &s.order {
            let (i, dim, kc) = s.blocks[bi];
            if dim == 1 {
                // residual, exact step, clamp, cost change (MuJoCo's costChange for dim 1)
                let res = s.b[i] + s.ar_dot(n, dense, i, f);
                let old = f[i];
                f[i] -= res * s.arinv[i];
                if i >= ne && i < ne + nf {
                    f[i] = f[i].clamp(-efc.frictionloss[i], efc.frictionloss[i]);
                } else if i >= ne + nf && f[i] < 0.0 {
                    f[i] = 0.0;
                }
                let delta = f[i] - old;
                let change = 0.5 * delta * delta * s.ardiag[i] + delta * res;
                if change > 1e-10 {
                    f[i] = old;
                } else {
                    improvement -= change;
                }
            } else {
                let mut res = [0.0; 6];
                for (j, r) in res.iter_mut().enumerate().take(dim) {
                    *r = s.b[i + j] + s.ar_dot(n, dense, i + j, f);
                }
                let mut old = [0.0; 6];
                old[..dim].copy_from_slice(&f[i..i + dim]);
                let ab = &s.ablock[kc];
                improvement -= elliptic_update(ab, dim, &cones[kc].friction, &res, &old, &mut f[i..i + dim]);
            }
        }
        s.oldstate.clear();
        s.oldstate.extend_from_slice(state);
        let nactive = dual_state(efc, cones, f, state);
        let nchange = state.iter().zip(&s.oldstate).filter(|(a, b)| a != b).count();
        improvement *= scale;
        if accelerated {
            // restart when the sweep's correction opposes the extrapolation
            let dot: f64 = (0..n).map(|r| (f[r] - s.f_mom[r]) * (s.f_mom[r] - s.f_prev[r])).sum();
            k_nesterov = if !stats.is_empty() && dot < 0.0 {
                0
            } else {
                k_nesterov + 1
            };
        }
        let cost = if s.skip_cost {
            0.0
        } else {
            let mut u = std::mem::take(&mut s.u);
            let c = s.cost(&efc.r, f, &mut u);
            s.u = u;
            c
        };
        stats.push(SolverStat {
            improvement,
            nactive,
            nchange,
            cost,
            ..Default::default()
        });
        if improvement < opts.tolerance {
            break;
        }
    }
    // mj_dualFinish
    out.iterations = stats.len();
    out.qfrc_constraint.clear();
    out.qfrc_constraint.resize(nv, 0.0);
    jac.mul_t(f, &mut out.qfrc_constraint);
    out.qacc.clear();
    out.qacc.extend_from_slice(&out.qfrc_constraint);
    solve_m(smooth, &mut out.qacc)?;
    for (a, s) in out.qacc.iter_mut().zip(smooth.qacc_smooth) {
        *a += s;
    }
    crate::error::check_output("qacc (PGS)", &out.qacc)
}
// ANCHOR_END: solve_pgs

/// The storage of a PGS solve ([`solve_pgs_into`]), kept between calls: `Y`, `AR` and its
/// diagonal's reciprocals, `b`, the blocks and their order, the momentum's copies of the forces.
#[derive(Clone, Debug, Default)]
pub struct PgsScratch {
    /// Leave [`SolverStat::cost`] at 0 instead of computing the dual cost after every sweep
    /// (MuJoCo records no cost; the pipeline [`crate::mujoco::forward::Forward`] skips it).
    pub skip_cost: bool,
    /// `Y = J M^-1/2` by rows (MuJoCo's `efc_Y`).
    pub y: SparseRows,
    /// `AR`, row-major `nefc x nefc` (dense storage).
    pub ar: Vec<f64>,
    /// `AR` by the nonzeros of its rows (sparse storage).
    pub ar_rows: SparseRows,
    /// `1 / AR_ii` (MuJoCo's `ARinv`).
    pub arinv: Vec<f64>,
    /// Per row of `ar_rows`: its first column when its columns are consecutive (the rows of a
    /// box stack's neighbouring contacts are), `usize::MAX` otherwise; [`Self::ar_dot`] then
    /// reads `f` as a contiguous slice, with the same sum.
    ar_first: Vec<usize>,
    /// `1 / ARinv_i`, the `AR_ii` MuJoCo's `costChange` reads for a scalar row.
    ardiag: Vec<f64>,
    /// `b = J a_s - aref` (`efc_b`).
    pub b: Vec<f64>,
    ablock: Vec<[f64; 36]>,
    blocks: Vec<(usize, usize, usize)>,
    order: Vec<usize>,
    f_prev: Vec<f64>,
    f_mom: Vec<f64>,
    oldstate: Vec<EfcState>,
    sqrt_dinv: Vec<f64>,
    u: Vec<f64>,
    yt_adr: Vec<usize>,
    yt_row: Vec<usize>,
    yt_val: Vec<f64>,
    next: Vec<usize>,
    acc: Vec<f64>,
    seen: Vec<bool>,
    touched: Vec<usize>,
    /// Marks: in [`make_y`] the last row that met each dof, in [`make_ar_blocks`] the last block
    /// that met each block.
    mark: Vec<usize>,
    /// [`make_y`]'s blocks of rows with the same columns and `Y` by blocks column by column
    /// (block `b`'s entry `(p, r)` at `b.adr + p m + r`); [`make_ar_blocks`]'s blocks of each
    /// column with the column's place in each, a block's neighbours, their common columns and
    /// the neighbours' common columns gathered.
    yblk: Vec<YBlock>,
    ytb: Vec<f64>,
    col_blk: Vec<(usize, usize)>,
    nbr: Vec<Neighbour>,
    pairs: Vec<(usize, usize)>,
    gath: Vec<f64>,
    /// [`make_y`]'s place of each dof in the current block's pattern.
    place: Vec<usize>,
    /// The warm start's `J qacc_warmstart - aref`, row states and `u` (kept between calls).
    warm_jar: Vec<f64>,
    warm_state: Vec<EfcState>,
    warm_u: Vec<f64>,
}

impl PgsScratch {
    /// Storage for solves that skip the cost ([`PgsScratch::skip_cost`]).
    pub fn without_cost() -> Self {
        PgsScratch {
            skip_cost: true,
            ..Default::default()
        }
    }

    /// `AR_ik` from the storage in use.
    fn ar_entry(&self, n: usize, dense: bool, i: usize, k: usize) -> f64 {
        if dense {
            self.ar[i * n + k]
        } else {
            let (cols, vals) = self.ar_rows.row(i);
            cols.binary_search(&k).map_or(0.0, |p| vals[p])
        }
    }

    /// `(AR f)_i`: MuJoCo's `residual` without `b`, over the whole row (dense, `mju_dot`) or its
    /// nonzeros (sparse, `mju_dotSparse`), both with four partial sums.
    #[inline(always)]
    fn ar_dot(&self, n: usize, dense: bool, i: usize, f: &[f64]) -> f64 {
        if dense {
            dot4(&self.ar[i * n..(i + 1) * n], f)
        } else {
            let (a, e) = (self.ar_rows.rowadr[i], self.ar_rows.rowadr[i + 1]);
            let c0 = self.ar_first[i];
            if c0 == usize::MAX {
                dot4_gather(&self.ar_rows.values[a..e], &self.ar_rows.colind[a..e], f)
            } else {
                // the row's columns are c0, c0 + 1, ..: the same sum without the gather
                dot4(&self.ar_rows.values[a..e], &f[c0..c0 + (e - a)])
            }
        }
    }

    /// Fills `ar_first` from `ar_rows`: the first column of each row whose columns are
    /// consecutive, `usize::MAX` for the others.
    fn find_runs(&mut self) {
        let rows = &self.ar_rows;
        self.ar_first.clear();
        self.ar_first.extend((0..rows.nrows()).map(|i| {
            let cols = rows.row(i).0;
            match (cols.first(), cols.last()) {
                (Some(&c0), Some(&c1)) if c1 - c0 + 1 == cols.len() => c0,
                _ => usize::MAX,
            }
        }));
    }

    /// The dual cost by `Y` instead of `AR`: `1/2 f^T AR f + f^T b = 1/2 |Y^T f|^2 + sum_i f_i
    /// (R_i f_i / 2 + b_i)`, a product over the nonzeros of `Y` instead of `nnz(AR)`
    /// multiply-adds. Equal to [`dual_cost`] to rounding. `u` is scratch of length `nv`.
    fn cost(&self, r: &[f64], f: &[f64], u: &mut [f64]) -> f64 {
        self.y.mul_t(f, u);
        let mut c = 0.5 * u.iter().map(|a| a * a).sum::<f64>();
        for (i, fi) in f.iter().enumerate() {
            c += fi * (0.5 * r[i] * fi + self.b[i]);
        }
        c
    }
}

/// `a . b` with four partial sums, added as MuJoCo's `mju_dot` adds them.
#[inline(always)]
fn dot4(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (a4, b4) = (a.chunks_exact(4), b[..a.len()].chunks_exact(4));
    let (ar, br) = (a4.remainder(), b4.remainder());
    for (x, y) in a4.zip(b4) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    for (x, y) in ar.iter().zip(br) {
        s += x * y;
    }
    s
}

/// `sum_t v[t] x[col[t]]` with four partial sums (`mju_dotSparse`).
#[inline(always)]
fn dot4_gather(v: &[f64], col: &[usize], x: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (v4, c4) = (v.chunks_exact(4), col.chunks_exact(4));
    let (vr, cr) = (v4.remainder(), c4.remainder());
    for (v, c) in v4.zip(c4) {
        for k in 0..4 {
            acc[k] += v[k] * x[c[k]];
        }
    }
    let mut s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    for (v, &c) in vr.iter().zip(cr) {
        s += v * x[c];
    }
    s
}

/// Puts extrapolated forces back in their sets (MuJoCo's clip and `projectCone`): friction loss
/// into `[-eta, eta]`, one-sided rows to `f >= 0`, an elliptic block to zero if its normal force
/// is negative, else its friction scaled onto the ellipse if outside.
pub fn project(efc: &Efc, cones: &[Cone], f: &mut [f64]) {
    let (ne, nf) = (efc.ne, efc.nf);
    for i in ne..ne + nf {
        f[i] = f[i].clamp(-efc.frictionloss[i], efc.frictionloss[i]);
    }
    for i in ne + nf..efc.nefc() {
        if efc.efc_type[i] != EfcType::ContactElliptic && f[i] < 0.0 {
            f[i] = 0.0;
        }
    }
    for c in cones {
        let b = &mut f[c.row..c.row + c.dim];
        let normal = b[0];
        if normal < 0.0 {
            b.fill(0.0);
        } else {
            let m = c.dim - 1;
            let s: f64 = (0..m).map(|j| (b[j + 1] / c.friction[j]).powi(2)).sum();
            if s > normal * normal {
                project_ellipse(&mut b[1..], normal, &c.friction[..m]);
            }
        }
    }
}

/// The PCG32 generator MuJoCo's PGS shuffles with (O'Neill's `pcg32`, XSH-RR output).
#[derive(Clone, Copy, Debug)]
pub struct Pcg32 {
    state: u64,
    inc: u64,
}

impl Pcg32 {
    /// MuJoCo's fixed seed: state 0, increment 1, advanced once.
    pub fn mujoco_seed() -> Self {
        let mut r = Pcg32 { state: 0, inc: 1 };
        r.next_u32();
        r
    }
    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(6364136223846793005).wrapping_add(self.inc | 1);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }
    /// Fisher-Yates, last element first, as MuJoCo's `shuffle_int`.
    pub fn shuffle(&mut self, a: &mut [usize]) {
        for i in (1..a.len()).rev() {
            let j = (self.next_u32() % (i as u32 + 1)) as usize;
            a.swap(i, j);
        }
    }
}

// ANCHOR: elliptic_block
/// The PGS update of one elliptic block (spec 5.2): a normal step (or a ray step along the
/// current force when the normal force is positive), then the friction forces from the QCQP with
/// the normal force fixed. `ab` is the block of AR (row-major dim x dim), `res` its residual at
/// `old`, `f` the block's forces (updated in place).
pub fn elliptic_block(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) {
    elliptic_block_body(ab, dim, mu, res, old, f)
}

/// The body of [`elliptic_block`] and [`cost_change`] with `dim` a constant: the sweep calls them
/// through [`elliptic_update`], which inlines them for the condims 3, 4 and 6, so that their
/// loops are unrolled (the same operations in the same order).
#[inline(always)]
fn elliptic_block_body(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) {
    if f[0] < mjMINVAL {
        // normal step
        f[0] = (f[0] - res[0] / ab[0]).max(0.0);
        f[1..dim].fill(0.0);
    } else {
        // ray step along v = f
        let mut v = [0.0; 6];
        v[..dim].copy_from_slice(&f[..dim]);
        let mut vav = 0.0;
        let mut vres = 0.0;
        for a in 0..dim {
            vres += v[a] * res[a];
            for b in 0..dim {
                vav += v[a] * ab[a * dim + b] * v[b];
            }
        }
        if vav >= mjMINVAL {
            let mut x = -vres / vav;
            if f[0] + x * v[0] < 0.0 {
                x = -v[0] / f[0];
            }
            for a in 0..dim {
                f[a] += x * v[a];
            }
        }
    }
    // friction step: A_c = AR[1:, 1:], b_c = res[1:] - A_c f_old[1:] + AR[1:, 0] (f_0 - f_0,old)
    let m = dim - 1;
    let mut ac = [0.0; 25];
    let mut bc = [0.0; 5];
    for a in 0..m {
        bc[a] = res[a + 1] + ab[(a + 1) * dim] * (f[0] - old[0]);
        for b in 0..m {
            ac[a * m + b] = ab[(a + 1) * dim + b + 1];
            bc[a] -= ac[a * m + b] * old[b + 1];
        }
    }
    if f[0] < mjMINVAL {
        f[1..dim].fill(0.0);
    } else {
        let mut x = [0.0; 5];
        let active = if m == 2 || m == 3 {
            qcqp_adjugate_body(&ac, &bc, mu, f[0], m, &mut x)
        } else {
            qcqp(&ac, &bc, mu, f[0], m, &mut x)
        };
        if active {
            project_ellipse(&mut x[..m], f[0], &mu[..m]);
        }
        f[1..dim].copy_from_slice(&x[..m]);
    }
}
// ANCHOR_END: elliptic_block

/// [`elliptic_block`] then [`cost_change`] (returned), with the condims 3, 4 and 6 given as
/// constants, so that each is compiled with its loops unrolled: the same numbers bit for bit.
#[inline(always)]
fn elliptic_update(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) -> f64 {
    #[inline(always)]
    fn both(ab: &[f64; 36], dim: usize, mu: &[f64; 5], res: &[f64; 6], old: &[f64; 6], f: &mut [f64]) -> f64 {
        elliptic_block_body(ab, dim, mu, res, old, f);
        cost_change_body(ab, dim, f, old, res)
    }
    match dim {
        3 => both(ab, 3, mu, res, old, f),
        4 => both(ab, 4, mu, res, old, f),
        6 => both(ab, 6, mu, res, old, f),
        _ => both(ab, dim, mu, res, old, f),
    }
}
