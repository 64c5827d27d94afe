//! The Performance chapter's scaling figure: time per call of RNEA, ABA, CRBA and `factor_i` on
//! chains and balanced binary trees of 1 to 1,023 bodies, on log-log axes, and the slopes fitted
//! to the larger sizes beside the slopes of the operation counts that the theory predicts:
//! `n` for RNEA and ABA, `sum_k d_k` (pairs of a dof and an ancestor or itself, the entries of
//! H's lower pattern) for CRBA, and for the factorization its multiply-adds `sum_k d_k (d_k - 1) / 2`
//! (the sum over its row updates of their lengths), with `d_k` the depth of dof k counting itself.
//!
//! - `perf_scaling.svg`: the figure;
//! - `perf_slopes.md`: the table of slopes, included by the chapter.

use super::ch05::{sample_state, write_snippet};
use crate::dynamics::{aba_with, crba_with, rnea_with, Workspace};
use crate::error::Result;
use crate::model::{canned, Model};
use crate::plot::{Chart, Series};
use crate::sparse::{depths, factor_i_in_place, NoCount, PivotPolicy};
use nalgebra::DMatrix;
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Chain lengths and tree sizes: 2^k - 1 bodies, k = 1 ... 10.
const LEVELS: std::ops::RangeInclusive<usize> = 1..=10;
/// The asymptotic range: the slopes compared with the theory are fitted to the three largest
/// sizes (255, 511 and 1,023 bodies), where the fixed cost of a call no longer shows.
const ASYMPTOTIC_FROM: f64 = 255.0;
/// A wider range, from this many bodies up, reported beside it.
const FIT_FROM: f64 = 63.0;

/// The timed kernels, their names, and the operation count the theory predicts for each.
const KERNELS: [(&str, &str); 4] = [
    ("RNEA", "n"),
    ("ABA", "n"),
    ("CRBA", "sum d_k"),
    ("factor_i", "sum d_k (d_k - 1) / 2"),
];

/// CPU seconds this thread has used: unlike wall-clock time, it does not grow while the thread
/// waits for a core, which matters for the millisecond-long calls at the large end of the
/// figure on a machine shared with other work. Falls back to wall-clock time off Linux.
#[cfg(target_os = "linux")]
fn thread_seconds() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec of the C layout on 64-bit Linux.
    let ok = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    if ok {
        t.sec as f64 + 1e-9 * t.nsec as f64
    } else {
        wall_seconds()
    }
}

#[cfg(not(target_os = "linux"))]
fn thread_seconds() -> f64 {
    wall_seconds()
}

fn wall_seconds() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}

/// Rounds of the timing: every (model, kernel) cell is timed once per round, in turn, and keeps
/// its fastest batch. A spell of other work on the machine (or of a slower core: on a virtual
/// machine small calls at times run a quarter slower for seconds) then spoils one batch of many
/// cells, which the other rounds replace, instead of every batch of the one cell timed during it
/// (timed cell after cell, the slopes over three sizes moved by a tenth). Forty rounds take
/// about ten seconds.
const ROUNDS: usize = 40;
/// Thread-CPU seconds a batch of calls lasts at least (calibrated once per cell).
const BATCH_SECONDS: f64 = 2e-3;

/// One timed model: its state, its workspace and the outputs of the four kernels of [`KERNELS`].
struct Case {
    m: Model,
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
    ws: Workspace,
    out: Vec<f64>,
    h: DMatrix<f64>,
    qm: Vec<f64>,
    qld: Vec<f64>,
    diag_inv: Vec<f64>,
}

impl Case {
    fn new(m: Model) -> Result<Case> {
        let (q, qd, qdd) = sample_state(&m);
        let ws = Workspace::new(&m);
        let mut h = DMatrix::zeros(m.nv, m.nv);
        crba_with(&m, &mut Workspace::new(&m), &q, &mut h);
        let qm = m.mj_layout().from_dense(&h);
        let mut case = Case {
            out: vec![0.0; m.nv],
            qld: qm.clone(),
            diag_inv: vec![0.0; m.nv],
            m,
            q,
            qd,
            qdd,
            ws,
            h,
            qm,
        };
        for kernel in 0..KERNELS.len() {
            case.call(kernel)?; // every kernel succeeds once before it is timed
        }
        Ok(case)
    }

    /// One call of kernel `kernel` (an index of [`KERNELS`]).
    fn call(&mut self, kernel: usize) -> Result<()> {
        let m = &self.m;
        match kernel {
            0 => rnea_with(m, &mut self.ws, &self.q, &self.qd, &self.qdd, None, &mut self.out),
            1 => aba_with(m, &mut self.ws, &self.q, &self.qd, &self.qdd, None, &mut self.out)?,
            2 => crba_with(m, &mut self.ws, &self.q, &mut self.h),
            _ => {
                self.qld.copy_from_slice(&self.qm);
                factor_i_in_place(
                    m.mj_layout(),
                    &mut self.qld,
                    &mut self.diag_inv,
                    PivotPolicy::Error,
                    &mut Vec::new(),
                    &mut NoCount,
                )?;
            }
        }
        black_box((&self.out, &self.h, &self.qld));
        Ok(())
    }

    /// Thread-CPU seconds per call of a batch of `calls` calls of `kernel`.
    fn batch(&mut self, kernel: usize, calls: usize) -> f64 {
        let t = thread_seconds();
        for _ in 0..calls {
            // every kernel succeeded on this state in `Case::new`, and the state does not change
            let _ = self.call(kernel);
        }
        (thread_seconds() - t) / calls as f64
    }

    /// The number of calls of `kernel` a batch needs to last [`BATCH_SECONDS`]: doubled until it does.
    fn calibrate(&mut self, kernel: usize) -> usize {
        let mut calls = 1usize;
        while self.batch(kernel, calls) * (calls as f64) < BATCH_SECONDS && calls < 1 << 22 {
            calls *= 2;
        }
        calls
    }
}

/// Microseconds per call of the four kernels on every model, `[model][kernel]`: the fastest of
/// [`ROUNDS`] batches, the cells taken in turn within each round.
fn times_us(cases: &mut [Case]) -> Vec<[f64; 4]> {
    let calls: Vec<[usize; 4]> = cases.iter_mut().map(|c| [0, 1, 2, 3].map(|k| c.calibrate(k))).collect();
    let mut best = vec![[f64::INFINITY; 4]; cases.len()];
    for _ in 0..ROUNDS {
        for (i, case) in cases.iter_mut().enumerate() {
            for k in 0..KERNELS.len() {
                best[i][k] = best[i][k].min(case.batch(k, calls[i][k]));
            }
        }
    }
    best.into_iter().map(|t| t.map(|s| 1e6 * s)).collect()
}

/// The predicted operation counts of [`KERNELS`] for `m`.
fn counts(m: &Model) -> [f64; 4] {
    let d: Vec<f64> = depths(&m.dof_parent).iter().map(|&a| (a + 1) as f64).collect();
    let n = m.nv as f64;
    [n, n, d.iter().sum(), d.iter().map(|x| x * (x - 1.0) / 2.0).sum()]
}

/// Least-squares slope of `ln y` against `ln x`.
fn loglog_slope(pts: &[(f64, f64)]) -> f64 {
    let k = pts.len() as f64;
    let (xs, ys): (Vec<f64>, Vec<f64>) = pts.iter().map(|&(x, y)| (x.ln(), y.ln())).unzip();
    let (mx, my) = (xs.iter().sum::<f64>() / k, ys.iter().sum::<f64>() / k);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// The cost model `t = t0 + a n + b c` of one kernel: a fixed cost per call (checks, set-up,
/// the call itself), a fixed cost per body (joint transform, composite inertia, one reciprocal
/// per row) and a cost per counted operation, fitted by least squares in relative terms (each size
/// weighs alike) to `(n, c, t)`. When the count is n itself (RNEA, ABA) the last term is left out
/// (`b = 0`). Returns `[t0, a, b]`.
fn fit_cost_model(pts: &[(f64, f64, f64)]) -> [f64; 3] {
    let linear = pts.iter().all(|&(n, c, _)| c == n);
    let cols = if linear { 2 } else { 3 };
    // minimise sum ((t0 + a n + b c) / t - 1)^2
    let a = DMatrix::from_fn(pts.len(), cols, |r, k| {
        let (n, c, t) = pts[r];
        [1.0, n, c][k] / t
    });
    let rhs = nalgebra::DVector::from_element(pts.len(), 1.0);
    let coef = match a.svd(true, true).solve(&rhs, 1e-14) {
        Ok(x) => x,
        Err(_) => nalgebra::DVector::zeros(cols),
    };
    [coef[0], coef[1], if linear { 0.0 } else { coef[2] }]
}

/// The slope of `ln y` against `ln n` over the points with `n >= from`.
fn slope_from(pts: &[(f64, f64)], from: f64) -> f64 {
    loglog_slope(&pts.iter().copied().filter(|q| q.0 >= from).collect::<Vec<_>>())
}

/// Prints the report, writes the two figures (chains, binary trees) and the table of slopes into
/// `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    println!("Performance: scaling of RNEA, ABA, CRBA and factor_i to 1,023 bodies");
    let mut rows = Vec::new();
    let mut paths = Vec::new();
    let mut updates_table = String::new();
    for (shape, file) in [("chain", "perf_scaling.svg"), ("binary tree", "perf_scaling_trees.svg")] {
        let mut chart = Chart::new(
            &format!("Time per call on {shape}s, and the fitted cost t0 + a n + b C (dashed)"),
            "number of bodies n",
            "time per call (microseconds)",
        )
        .log(true, true);
        let mut cases = LEVELS
            .map(|k| {
                Case::new(if shape == "chain" {
                    canned::chain((1 << k) - 1, true)
                } else {
                    canned::binary_tree(k)
                })
            })
            .collect::<Result<Vec<Case>>>()?;
        let times = times_us(&mut cases);
        let mut time_pts = vec![Vec::new(); KERNELS.len()];
        let mut count_pts = vec![Vec::new(); KERNELS.len()];
        for (case, t) in cases.iter().zip(&times) {
            let (m, c) = (&case.m, counts(&case.m));
            for a in 0..KERNELS.len() {
                time_pts[a].push((m.nb as f64, t[a]));
                count_pts[a].push((m.nb as f64, c[a]));
            }
        }
        for (a, (name, count)) in KERNELS.iter().enumerate() {
            // slopes over the largest sizes (the asymptotic range, compared with the theory),
            // from 63 bodies up, and over every size (flattened by the fixed cost per call)
            let (theory, measured) = (
                slope_from(&count_pts[a], ASYMPTOTIC_FROM),
                slope_from(&time_pts[a], ASYMPTOTIC_FROM),
            );
            let (from_63, full) = (slope_from(&time_pts[a], FIT_FROM), slope_from(&time_pts[a], 0.0));
            // the cost model t0 + a n + b count over every size, and the slope of the time
            // against it (1 if the model holds; hidden work growing faster than the count would
            // push it above 1)
            let triples: Vec<(f64, f64, f64)> = time_pts[a]
                .iter()
                .zip(&count_pts[a])
                .map(|(t, c)| (t.0, c.1, t.1))
                .collect();
            let [t0, ca, cb] = fit_cost_model(&triples);
            let cost = |n: f64, c: f64| t0 + ca * n + cb * c;
            let fitted: Vec<(f64, f64)> = triples.iter().map(|&(n, c, _)| (n, cost(n, c))).collect();
            let against_model = loglog_slope(&triples.iter().map(|&(n, c, t)| (cost(n, c), t)).collect::<Vec<_>>());
            let (n_max, c_max, _) = triples[triples.len() - 1];
            let share = cb * c_max / cost(n_max, c_max);
            println!(
                "  {name}, {shape}: slope for n >= {ASYMPTOTIC_FROM} {measured:.2} (theory, {count}: {theory:.2}), \
                 for n >= {FIT_FROM} {from_63:.2}, all n {full:.2}; fit t0 {t0:.3} us, a {ca:.4} us, b {cb:.5} us, \
                 slope against it {against_model:.2}, b {count} {:.0} % of the time at n = {n_max}",
                100.0 * share
            );
            rows.push(format!(
                "| {name} | {shape} | {count} | {theory:.2} | {measured:.2} | {:+.2} | {from_63:.2} | {full:.2} | \
                 {against_model:.2} | {:.0} % |",
                measured - theory,
                100.0 * share
            ));
            chart = chart
                .with(Series::line_points(name, time_pts[a].clone()))
                .with(Series::dashed(&format!("{name}, fit"), fitted));
        }
        if shape == "binary tree" {
            updates_table = factor_updates_table(&cases, &time_pts[3]);
        }
        let path = dir.join(file);
        chart.save_svg(&path)?;
        paths.push(path);
    }
    let table = format!(
        "| algorithm | tree | predicted count C | slope of C, n >= 255 | measured slope, n >= 255 | difference | \
         measured, n >= 63 | measured, all n | slope against t0 + a n + b C | b C at 1,023 bodies |\n\
         |---|---|---|---|---|---|---|---|---|---|\n{}",
        rows.join("\n")
    );
    write_snippet(dir, "perf_slopes.md", &table)?;
    write_snippet(dir, "perf_factor_updates.md", &updates_table)?;
    Ok(paths)
}

/// The factorization on the binary trees from 63 bodies up: its row updates (`sum_k (d_k - 1)`,
/// one per dof and proper ancestor), its multiply-adds (`sum_k d_k (d_k - 1) / 2`), and the time
/// per call divided by each, with the slopes of the two counts over the three largest trees.
/// Which of the two quotients stays constant says what the time is proportional to.
fn factor_updates_table(cases: &[Case], times: &[(f64, f64)]) -> String {
    let mut lines = vec![
        "| bodies n | row updates U | multiply-adds C | time per call | time per update | time per multiply-add |"
            .to_string(),
        "|---|---|---|---|---|---|".to_string(),
    ];
    let (mut u_pts, mut c_pts) = (Vec::new(), Vec::new());
    for (case, &(n, t)) in cases.iter().zip(times).filter(|(c, _)| c.m.nb as f64 >= FIT_FROM) {
        let d = depths(&case.m.dof_parent);
        let u: usize = d.iter().sum(); // depths() counts proper ancestors: d_k - 1
        let c: usize = d.iter().map(|&a| a * (a + 1) / 2).sum();
        u_pts.push((n, u as f64));
        c_pts.push((n, c as f64));
        lines.push(format!(
            "| {n} | {u} | {c} | {t:.2} us | {:.2} ns | {:.3} ns |",
            1e3 * t / u as f64,
            1e3 * t / c as f64
        ));
    }
    let (su, sc, st) = (
        slope_from(&u_pts, ASYMPTOTIC_FROM),
        slope_from(&c_pts, ASYMPTOTIC_FROM),
        slope_from(times, ASYMPTOTIC_FROM),
    );
    lines.push(format!(
        "| slope, n >= 255 | {su:.2} | {sc:.2} | {st:.2} | {:+.2} | {:+.2} |",
        st - su,
        st - sc
    ));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cost model's fit recovers the three coefficients of exact data, leaves out the count
    /// when it is n itself, and the slope of the data against the fitted model is 1.
    #[test]
    fn cost_model_fit_recovers_its_coefficients() {
        let pts: Vec<(f64, f64, f64)> = [1.0, 3.0, 7.0, 15.0, 63.0, 127.0, 255.0, 511.0, 1023.0]
            .iter()
            .map(|&n: &f64| {
                let c = n * (n + 1.0).log2();
                (n, c, 0.3 + 0.02 * n + 0.005 * c)
            })
            .collect();
        let [t0, a, b] = fit_cost_model(&pts);
        assert!(
            (t0 - 0.3).abs() < 1e-9 && (a - 0.02).abs() < 1e-9 && (b - 0.005).abs() < 1e-9,
            "{t0} {a} {b}"
        );
        let model: Vec<(f64, f64)> = pts.iter().map(|&(n, c, t)| (t0 + a * n + b * c, t)).collect();
        assert!((loglog_slope(&model) - 1.0).abs() < 1e-9);
        let linear: Vec<(f64, f64, f64)> = pts.iter().map(|&(n, _, _)| (n, n, 0.1 + 0.03 * n)).collect();
        let [t0, a, b] = fit_cost_model(&linear);
        assert!(
            (t0 - 0.1).abs() < 1e-9 && (a - 0.03).abs() < 1e-9 && b == 0.0,
            "{t0} {a} {b}"
        );
    }
}
