//! Figures and report of the chapter "The recursive Newton-Euler algorithm" (Featherstone ch. 5).
//!
//! - `ch05_torque_split.svg`: the shoulder torque of a double pendulum tracking a prescribed
//!   motion, split by RNEA into its inertial (`H qdd`), velocity-product and gravity parts.
//! - `ch05_cost.svg`: measured time per RNEA call against the number of bodies, for chains and
//!   balanced binary trees, on log-log axes with a slope-1 reference (Featherstone 5.1: O(n)).
//!
//! The timing helpers [`seconds_per_call`] and [`sample_state`] are shared with the CRBA and ABA
//! chapters' figures.

use crate::dynamics::{rnea, rnea_with, Workspace};
use crate::error::Result;
use crate::model::{canned, Model};
use crate::plot::{Chart, Series};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Chain lengths used by the cost figures of chapters 5-7.
pub const CHAIN_SIZES: [usize; 8] = [2, 4, 8, 16, 32, 64, 128, 256];
/// Binary-tree depths used by the cost figures (2^d - 1 bodies: 1 ... 255).
pub const TREE_DEPTHS: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

/// Wall-clock seconds per call of `f`: the call count is doubled until one batch lasts at least
/// 0.2 ms, then the fastest of three batches is kept (the minimum is the least disturbed by other
/// work on the machine). For figures only; tests never time anything.
pub fn seconds_per_call(mut f: impl FnMut()) -> f64 {
    f();
    let mut calls = 1usize;
    loop {
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        if t.elapsed().as_secs_f64() > 2e-4 || calls >= 1 << 22 {
            break;
        }
        calls *= 2;
    }
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() / calls as f64);
    }
    best
}

/// Writes `text` (no trailing newline, so that it can stand inside a sentence) to `dir/name`:
/// a number measured while the figures are made, which the chapter includes with
/// `{{#include figures/NAME}}` so that its prose and its figure come from the same run.
pub fn write_snippet(dir: &Path, name: &str, text: &str) -> Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| crate::error::Error::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    })
}

/// A reproducible, generic state `(q, qdot, qddot)` for a model with only 1-dof joints (the
/// chains and trees of the cost figures): smooth pseudo-random numbers of order 1, no RNG needed.
pub fn sample_state(model: &Model) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let q = (0..model.nq).map(|k| 0.7 * (1.3 * k as f64 + 0.4).sin()).collect();
    let qd = (0..model.nv).map(|k| 0.9 * (2.1 * k as f64 + 1.1).cos()).collect();
    let qdd = (0..model.nv).map(|k| 0.5 * (0.7 * k as f64 + 2.0).sin()).collect();
    (q, qd, qdd)
}

/// A dashed reference line `y = y0 (x / x0)^slope` through `(x0, y0)` over `xs`.
pub fn slope_line(label: &str, xs: &[f64], x0: f64, y0: f64, slope: f64) -> Series {
    Series::dashed(label, xs.iter().map(|&x| (x, y0 * (x / x0).powf(slope))).collect())
}

/// Microseconds per RNEA call (`rnea_with` on a reused [`Workspace`]) at a generic state.
pub fn rnea_time_us(model: &Model) -> f64 {
    let (q, qd, qdd) = sample_state(model);
    let mut ws = Workspace::new(model);
    let mut tau = vec![0.0; model.nv];
    1e6 * seconds_per_call(|| {
        rnea_with(model, &mut ws, &q, &qd, &qdd, None, &mut tau);
        black_box(&tau);
    })
}

/// The prescribed motion of the torque-split figure: joint angles, rates and accelerations of a
/// double pendulum swinging both joints sinusoidally, at time `t` (s).
pub fn prescribed_motion(t: f64) -> ([f64; 2], [f64; 2], [f64; 2]) {
    use std::f64::consts::PI;
    // joint k: a_k sin(w_k t + p_k)
    let amp = [1.0, 1.2];
    let w = [2.0 * PI / 2.0, 2.0 * PI / 1.25];
    let ph = [0.0, 0.6];
    let mut q = [0.0; 2];
    let mut qd = [0.0; 2];
    let mut qdd = [0.0; 2];
    for k in 0..2 {
        let (s, c) = (w[k] * t + ph[k]).sin_cos();
        q[k] = amp[k] * s;
        qd[k] = amp[k] * w[k] * c;
        qdd[k] = -amp[k] * w[k] * w[k] * s;
    }
    (q, qd, qdd)
}

/// The torque split of one joint along the prescribed motion: rows `(t, total, inertial,
/// velocity product, gravity)`, each part obtained from RNEA by switching inputs off:
/// gravity `= ID(q, 0, 0)`, velocity product `= ID(q, qd, 0) - ID(q, 0, 0)`, inertial
/// `= ID(q, qd, qdd) - ID(q, qd, 0) = H qdd`.
pub fn torque_split(model: &Model, joint: usize, t0: f64, t1: f64, steps: usize) -> Result<Vec<[f64; 5]>> {
    let mut rows = Vec::with_capacity(steps + 1);
    for s in 0..=steps {
        let t = t0 + (t1 - t0) * s as f64 / steps as f64;
        let (q, qd, qdd) = prescribed_motion(t);
        let zero = [0.0; 2];
        let total = rnea(model, &q, &qd, &qdd, None)?[joint];
        let no_acc = rnea(model, &q, &qd, &zero, None)?[joint];
        let gravity = rnea(model, &q, &zero, &zero, None)?[joint];
        rows.push([t, total, total - no_acc, no_acc - gravity, gravity]);
    }
    Ok(rows)
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Chapter 5, the recursive Newton-Euler algorithm (Featherstone table 5.1)");

    // Figure 1: what RNEA's torque is made of.
    let pendulum = canned::chain(2, false);
    // (the window starts at 0.75 s only so that the legend hides no curve)
    let rows = torque_split(&pendulum, 0, 0.75, 4.75, 400)?;
    let peak = |k: usize| rows.iter().map(|r| r[k].abs()).fold(0.0, f64::max);
    println!(
        "  double pendulum, shoulder, prescribed swing, t in [0.75, 4.75] s: peak |tau| {:.2} N m = inertial up to {:.2}, velocity product up to {:.2}, gravity up to {:.2}",
        peak(1),
        peak(2),
        peak(3),
        peak(4)
    );
    let col = |k: usize| rows.iter().map(|r| (r[0], r[k])).collect::<Vec<_>>();
    let path = dir.join("ch05_torque_split.svg");
    Chart::new(
        "Double pendulum: shoulder torque from RNEA, split",
        "time t (s)",
        "shoulder torque (N m)",
    )
    .with(Series::line("total ID(q, qd, qdd)", col(1)))
    .with(Series::line("inertial H(q) qdd", col(2)))
    .with(Series::line("velocity product C(q, qd) - g(q)", col(3)))
    .with(Series::line("gravity g(q) = ID(q, 0, 0)", col(4)))
    .save_svg(&path)?;
    out.push(path);

    // Figure 2: O(n) cost.
    let mut chain_pts = Vec::new();
    for &n in &CHAIN_SIZES {
        chain_pts.push((n as f64, rnea_time_us(&canned::chain(n, true))));
    }
    let mut tree_pts = Vec::new();
    for &d in &TREE_DEPTHS {
        let m = canned::binary_tree(d);
        tree_pts.push((m.nb as f64, rnea_time_us(&m)));
    }
    let per_body = |pts: &[(f64, f64)]| pts.last().map_or(0.0, |&(n, t)| 1e3 * t / n);
    println!(
        "  RNEA time per call: chain n=2 {:.3} us, n=256 {:.2} us ({:.0} ns per body); tree n=255 {:.2} us ({:.0} ns per body)",
        chain_pts[0].1,
        chain_pts[chain_pts.len() - 1].1,
        per_body(&chain_pts),
        tree_pts[tree_pts.len() - 1].1,
        per_body(&tree_pts)
    );
    write_snippet(
        dir,
        "ch05_cost.md",
        &format!(
            "about {:.0} ns per body on the chain of 256 bodies and {:.0} ns on the tree of 255",
            per_body(&chain_pts),
            per_body(&tree_pts)
        ),
    )?;
    let xs: Vec<f64> = vec![1.0, 256.0];
    let (x0, y0) = chain_pts[chain_pts.len() - 1];
    let path = dir.join("ch05_cost.svg");
    Chart::new(
        "RNEA: time per call grows linearly with the number of bodies",
        "number of bodies n",
        "time per call (microseconds)",
    )
    .log(true, true)
    .with(Series::line_points("RNEA, chain (3-D axes)", chain_pts))
    .with(Series::line_points("RNEA, balanced binary tree", tree_pts))
    .with(slope_line("reference slope 1 (O(n))", &xs, x0, y0, 1.0))
    .save_svg(&path)?;
    out.push(path);
    out.push(super::schematics::rnea_free_body(dir)?);
    Ok(out)
}
