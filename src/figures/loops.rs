//! Figures and report of the chapter "Closed-loop systems" (Featherstone chapter 8).
//!
//! - `loops_drift.svg`: the loop-closure error of the planar four-bar simulated for 10 s (RK4,
//!   1 ms) without stabilization and with Baumgarte's `T_stab` = 1, 0.1 and 0.01 s (8.3), on a
//!   log scale.
//! - `loops_cost.svg`: measured time of the three solution methods of 8.5 (KKT system, `lambda`
//!   first, null space `G`, `g`) on chains of `k` coupled four-bars
//!   ([`crate::model::mechanisms::four_bar_chain`]), log-log.
//! - `loops_actuators.svg`: the actuator forces `u3` (cylinder) and `u4` (elbow) of the figure 8.3
//!   mechanism along motions whose `y1` dips to 0.2, 0.05 and 0.01 rad (8.12): `u3` grows like
//!   `1 / y1` as the cylinder's line of action passes through the arm's pivot.
//!
//! - `loops_baumgarte_0.svg` ... `loops_baumgarte_8.svg`: the interactive figure, one frame per
//!   Baumgarte time constant of [`SLIDER_T_STABS`] (the chapter's slider switches between them):
//!   the four-bar without gravity, opened by 3 mrad and released at rest, returning to closure
//!   under RK4 with the coarse step [`SLIDER_STEP`], against the critically damped prediction
//!   `|e(t)| = |e(0)| (1 + t/T) exp(-t/T)`. Above a few steps per `T_stab` the simulation follows
//!   the prediction; at `T_stab` = h it is already off; below `h/2` RK4 is unstable.
//!
//! The data functions ([`drift_trajectory`], [`drift_table`], [`method_times_us`],
//! [`figure_8_3_actuator_forces`], [`baumgarte_return`]) are public so that the example can print
//! the numbers.

use super::ch05::{seconds_per_call, slope_line};
use crate::dynamics::crba;
use crate::error::Result;
use crate::integrate::Trajectory;
use crate::loops::{
    bias_minus_active, inverse_dynamics, loop_constraints, loop_properties, null_space_with, simulate, solve_kkt,
    solve_lambda_first, solve_null_space, Method, PivotTol, SimulateOptions, ENERGY, LOOP_ERROR,
};
use crate::model::mechanisms::{self, figure_8_3_gamma};
use crate::model::Integrator;
use crate::model::Model;
use crate::plot::{Chart, Series};
use nalgebra::DVector;
use std::f64::consts::PI;
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Crank speed (rad/s) of the drift experiment: enough for the crank to go round under gravity.
pub const CRANK_SPEED: f64 = 12.0;
/// The Baumgarte time constants compared in the drift experiment (`None`: no stabilization).
pub const T_STABS: [Option<f64>; 4] = [None, Some(1.0), Some(0.1), Some(0.01)];

/// The planar four-bar ([`mechanisms::four_bar`]) at `q = 0` with the crank turning at `w` rad/s:
/// the velocity is `G` times `w`, `G` the null space of `K` with the crank as the independent
/// variable, so the state satisfies the loop constraints exactly.
pub fn four_bar_state(w: f64) -> Result<(Model, DVector<f64>, DVector<f64>)> {
    let m = mechanisms::four_bar();
    let q = m.qpos0.clone();
    let sys = loop_constraints(&m, q.as_slice(), &vec![0.0; m.nv], None)?;
    let ns = null_space_with(&sys.kmat, &DVector::zeros(sys.nc()), &PivotTol::default(), Some(&[0]))?;
    let qd = ns.g_null.column(0) * w;
    Ok((m, q, qd))
}

/// The drift experiment: the four-bar of [`four_bar_state`] simulated by the null-space method
/// with RK4 (`h` = 1 ms) for `t_end` seconds with Baumgarte time constant `t_stab`.
pub fn drift_trajectory(t_stab: Option<f64>, t_end: f64) -> Result<Trajectory> {
    let (m, q, qd) = four_bar_state(CRANK_SPEED)?;
    let h = 1e-3;
    let steps = (t_end / h).round() as usize;
    simulate(
        &m,
        q.as_slice(),
        qd.as_slice(),
        &SimulateOptions {
            method: Method::NullSpace,
            integrator: Integrator::Rk4,
            h,
            steps,
            t_stab,
        },
    )
}

/// One row of the drift table: the time constant, the largest loop-closure error (m, rad) and
/// the largest deviation of the total energy from its start (J) over the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DriftRow {
    /// Baumgarte time constant (s); `None` without stabilization.
    pub t_stab: Option<f64>,
    /// Largest Euclidean norm of the stacked loop-closure error.
    pub max_err: f64,
    /// Largest `|E(t) - E(0)|` (J).
    pub max_energy_drift: f64,
}

/// The drift table of the chapter: [`drift_trajectory`] over `t_end` seconds for every
/// `T_stab` of [`T_STABS`], with the trajectories.
pub fn drift_table(t_end: f64) -> Result<Vec<(DriftRow, Trajectory)>> {
    T_STABS
        .iter()
        .map(|&ts| {
            let tr = drift_trajectory(ts, t_end)?;
            let row = DriftRow {
                t_stab: ts,
                max_err: tr.max_of(LOOP_ERROR),
                max_energy_drift: tr.max_drift(ENERGY),
            };
            Ok((row, tr))
        })
        .collect()
}

/// Label of a Baumgarte setting.
pub fn t_stab_label(t_stab: Option<f64>) -> String {
    match t_stab {
        None => "no stabilization".into(),
        Some(ts) => format!("T_stab = {ts} s"),
    }
}

/// `(t, max |e|)` over consecutive windows of `w` samples: a short series for a log plot that
/// keeps every peak (a plain subsample could miss them).
fn window_max(t: &[f64], e: &[f64], w: usize) -> Vec<(f64, f64)> {
    t.chunks(w)
        .zip(e.chunks(w))
        .map(|(tc, ec)| (tc[tc.len() - 1], ec.iter().fold(0.0, |m: f64, v| m.max(*v))))
        .collect()
}

/// The Baumgarte time constants (s) of the interactive figure, one frame each, slowest first.
pub const SLIDER_T_STABS: [f64; 9] = [1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.003];
/// The frame the slider shows first (`T_stab` = 0.1 s).
pub const SLIDER_DEFAULT: usize = 3;
/// The time step (s) of the interactive figure: a coarse, real-time step, so that the small time
/// constants meet it.
pub const SLIDER_STEP: f64 = 0.01;

/// A plotted curve: `(t, value)` points.
pub type Curve = Vec<(f64, f64)>;

/// The return experiment of the interactive figure: the four-bar without gravity, its rocker
/// joint turned 3 mrad away from a closed configuration and released at rest, stepped by RK4
/// with step `h` and Baumgarte time constant `t_stab` (KKT method) for `t_end` s.
/// Returns `(t, |e|)` for the simulation (stopped at the first step whose error exceeds 1 m or
/// whose state the library rejects as diverged) and for the critically damped prediction
/// `|e(0)| (1 + t/T) exp(-t/T)` of exercise 2 (released at rest, so `e'(0) = 0`).
pub fn baumgarte_return(t_stab: f64, h: f64, t_end: f64) -> Result<(Curve, Curve)> {
    let mut m = mechanisms::four_bar();
    m.opt.gravity = crate::spatial::Vec3::zeros();
    let mut q = m.qpos0.as_slice().to_vec();
    q[2] += 0.003;
    let mut qd = vec![0.0; m.nv];
    let e0 = loop_constraints(&m, &q, &qd, None)?.err.norm();
    let opts = SimulateOptions {
        method: Method::Kkt,
        integrator: Integrator::Rk4,
        h,
        steps: 1,
        t_stab: Some(t_stab),
    };
    let steps = (t_end / h).round() as usize;
    let mut sim = vec![(0.0, e0)];
    for k in 1..=steps {
        let Ok(tr) = simulate(&m, &q, &qd, &opts) else { break };
        q.clone_from(&tr.qpos[1]);
        qd.clone_from(&tr.qvel[1]);
        let e = loop_constraints(&m, &q, &qd, None)?.err.norm();
        sim.push((k as f64 * h, e));
        if !(e < 1.0) {
            break;
        }
    }
    let predicted = (0..=200)
        .map(|k| {
            let t = t_end * k as f64 / 200.0;
            (t, e0 * (1.0 + t / t_stab) * (-t / t_stab).exp())
        })
        .collect();
    Ok((sim, predicted))
}

/// Numbers of loops of the cost figure.
pub const CHAIN_LOOPS: [usize; 7] = [1, 2, 3, 4, 6, 8, 12];

/// Microseconds per call of each method of 8.5 on [`mechanisms::four_bar_chain`]`(k)`, in the
/// order [`Method::ALL`], plus the time to form their common inputs (`H` by CRBA, `C - tau^a`,
/// `K`, `k`): `[kkt, lambda first, null space, inputs]`. The state is `q = 0` with the crank
/// turning at 1 rad/s (consistent), `tau = 0`, no stabilization.
pub fn method_times_us(k: usize) -> Result<[f64; 4]> {
    let m = mechanisms::four_bar_chain(k)?;
    let q = m.qpos0.clone();
    let s0 = loop_constraints(&m, q.as_slice(), &vec![0.0; m.nv], None)?;
    let ns = null_space_with(&s0.kmat, &DVector::zeros(s0.nc()), &PivotTol::default(), Some(&[0]))?;
    let qd = ns.g_null.column(0).clone_owned();
    let (q, qd) = (q.as_slice(), qd.as_slice());
    let sys = loop_constraints(&m, q, qd, None)?;
    let h = crba(&m, q)?;
    let tau_p = -bias_minus_active(&m, q, qd, None)?;
    let rhs = sys.rhs();
    let kkt = seconds_per_call(|| {
        black_box(solve_kkt(&h, &tau_p, &sys.kmat, &rhs).ok());
    });
    let lam = seconds_per_call(|| {
        black_box(solve_lambda_first(&h, &m.dof_parent, &tau_p, &sys.kmat, &rhs).ok());
    });
    let nsp = seconds_per_call(|| {
        black_box(solve_null_space(&h, &tau_p, &sys.kmat, &rhs).ok());
    });
    let inputs = seconds_per_call(|| {
        black_box(crba(&m, q).ok());
        black_box(bias_minus_active(&m, q, qd, None).ok());
        black_box(loop_constraints(&m, q, qd, None).ok());
    });
    Ok([kkt * 1e6, lam * 1e6, nsp * 1e6, inputs * 1e6])
}

/// Link lengths of the figure 8.3 mechanism used in the chapter: `l1` (base pivots O to A) and
/// `l2` (O to the cylinder's pin B on link 1), in metres.
pub const FIG83_LENGTHS: (f64, f64) = (1.0, 0.6);

/// The prescribed motion of the actuator figure at time `t` (period 2 s): `y1` falls from 1 rad
/// to `y_min` at t = 1 s and rises back, `y2` swings by 0.3 rad. Returns `(y, ydot, yddot)`.
pub fn figure_8_3_motion(y_min: f64, t: f64) -> ([f64; 2], [f64; 2], [f64; 2]) {
    let w = PI; // 2 pi / (2 s)
    let a = 0.5 * (1.0 - y_min);
    let (s, c) = (w * t).sin_cos();
    let y = [y_min + a * (1.0 + c), 0.3 * s];
    let yd = [-a * w * s, 0.3 * w * c];
    let ydd = [-a * w * w * c, -0.3 * w * w * s];
    (y, yd, ydd)
}

/// Actuator forces `(t, y1, u3, u4)` of the figure 8.3 mechanism (cylinder force `u3` in N at
/// joint 3, elbow torque `u4` in N m at joint 4) along [`figure_8_3_motion`], sampled at
/// `samples + 1` instants over one period, by closed-loop inverse dynamics (8.12): `q = gamma(y)`,
/// `qdot = G ydot`, `qdd = G yddot + g` with `G`, `g` by complete pivoting with `y = (q1, q4)`
/// chosen as the independent variables, then [`inverse_dynamics`] with joints 3 and 4 actuated.
pub fn figure_8_3_actuator_forces(y_min: f64, samples: usize) -> Result<Vec<[f64; 4]>> {
    let (l1, l2) = FIG83_LENGTHS;
    let m = mechanisms::figure_8_3(l1, l2)?;
    let mut rows = Vec::with_capacity(samples + 1);
    for s in 0..=samples {
        let t = 2.0 * s as f64 / samples as f64;
        let (y, yd, ydd) = figure_8_3_motion(y_min, t);
        let q = figure_8_3_gamma(l1, l2, y)?;
        let zero = [0.0; 4];
        let s0 = loop_constraints(&m, &q, &zero, None)?;
        let ind = [0, 3];
        let g0 = null_space_with(&s0.kmat, &DVector::zeros(s0.nc()), &PivotTol::default(), Some(&ind))?;
        let qd = &g0.g_null * DVector::from_column_slice(&yd);
        let s1 = loop_constraints(&m, &q, qd.as_slice(), None)?;
        let g1 = null_space_with(&s1.kmat, &s1.k, &PivotTol::default(), Some(&ind))?;
        let qdd = &g1.g_null * DVector::from_column_slice(&ydd) + &g1.g_bias;
        let inv = inverse_dynamics(&m, &q, qd.as_slice(), qdd.as_slice(), None, &[2, 3])?;
        rows.push([t, y[0], inv.u[0], inv.u[1]]);
    }
    Ok(rows)
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Chapter 8, closed-loop systems (Featherstone 8.1-8.12)");
    for (name, m) in [
        ("four-bar", mechanisms::four_bar()),
        ("double four-bar", mechanisms::double_four_bar()),
        ("3-RRR", mechanisms::planar_3rrr()),
    ] {
        let p = loop_properties(&m, m.qpos0.as_slice())?;
        println!(
            "  {name}: n = {}, n^c = {}, rank K = {}, mobility = {}, redundant constraints = {}",
            p.n,
            p.nc,
            p.rank,
            p.mobility,
            p.redundant()
        );
    }

    // Figure 1: drift of the loop-closure error.
    let t_end = 10.0;
    let table = drift_table(t_end)?;
    println!("  four-bar, crank at {CRANK_SPEED} rad/s, RK4 h = 1 ms, {t_end} s:");
    println!("    {:<18} {:>16} {:>20}", "", "max |err| (m)", "max |E - E0| (J)");
    for (row, _) in &table {
        println!(
            "    {:<18} {:>16.3e} {:>20.3e}",
            t_stab_label(row.t_stab),
            row.max_err,
            row.max_energy_drift
        );
    }
    let mut chart = Chart::new(
        "Four-bar: loop-closure error, RK4 with h = 1 ms",
        "time t (s)",
        "loop-closure error |err| (m)",
    )
    .log(false, true)
    .ranges(Some((0.0, t_end)), Some((1e-11, 1e-3)));
    for (row, tr) in &table {
        chart = chart.with(Series::line(
            &t_stab_label(row.t_stab),
            window_max(&tr.time[1..], &tr.signal(LOOP_ERROR).unwrap()[1..], 25),
        ));
    }
    let path = dir.join("loops_drift.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 2: cost of the three methods against the number of loops.
    let mut series: [Vec<(f64, f64)>; 4] = Default::default();
    for &k in &CHAIN_LOOPS {
        let t = method_times_us(k)?;
        for (s, v) in series.iter_mut().zip(t) {
            s.push((k as f64, v));
        }
    }
    let first_last = |s: &[(f64, f64)]| (s[0].1, s[s.len() - 1].1);
    let kmax = CHAIN_LOOPS[CHAIN_LOOPS.len() - 1];
    for (label, s) in ["KKT", "lambda first", "null space", "inputs H, C, K, k"]
        .iter()
        .zip(&series)
    {
        let (a, b) = first_last(s);
        println!("  {label:<18} on a chain of k coupled four-bars: k = 1 {a:.2} us, k = {kmax} {b:.1} us");
    }
    let xs = [1.0, kmax as f64];
    let (x0, y0) = series[0][series[0].len() - 1];
    let path = dir.join("loops_cost.svg");
    Chart::new(
        "Three ways to solve the closed-loop equations of motion",
        "number of loops k (chain of coupled four-bars, n = 2k + 1, n^c = 5k)",
        "time per solve (microseconds)",
    )
    .log(true, true)
    .with(Series::line_points("method 1: KKT system (8.36)", series[0].clone()))
    .with(Series::line_points(
        "method 2: lambda first (8.37)-(8.41)",
        series[1].clone(),
    ))
    .with(Series::line_points(
        "method 3: null space G, g (8.42)-(8.46)",
        series[2].clone(),
    ))
    .with(Series::line_points("inputs: H, C, K, k (shared)", series[3].clone()))
    .with(slope_line("reference slope 3 (O(k^3))", &xs, x0, y0, 3.0))
    .save_svg(&path)?;
    out.push(path);

    // Figure 3: actuator forces of the figure 8.3 mechanism near its singularity.
    let mut chart = Chart::new(
        "Figure 8.3 mechanism: actuator forces as y1 dips towards 0",
        "time t (s)",
        "|u3| (N), |u4| (N m)",
    )
    .log(false, true);
    let mut u4_series = Vec::new();
    for y_min in [0.2, 0.05, 0.01] {
        let rows = figure_8_3_actuator_forces(y_min, 800)?;
        let peak = |k: usize| rows.iter().map(|r| r[k].abs()).fold(0.0, f64::max);
        println!(
            "  figure 8.3 (l1 = {}, l2 = {}), y1 down to {y_min}: peak |u3| = {:.1} N, peak |u4| = {:.2} N m",
            FIG83_LENGTHS.0,
            FIG83_LENGTHS.1,
            peak(2),
            peak(3)
        );
        chart = chart.with(Series::line(
            &format!("|u3|, cylinder force, y1 down to {y_min} rad"),
            rows.iter().map(|r| (r[0], r[2].abs())).collect(),
        ));
        if y_min == 0.01 {
            u4_series = rows.iter().map(|r| (r[0], r[3].abs())).collect();
        }
    }
    let path = dir.join("loops_actuators.svg");
    chart
        .with(Series::dashed("|u4|, elbow torque, y1 down to 0.01 rad", u4_series))
        .save_svg(&path)?;
    out.push(path);

    // Figure 4, interactive: one frame per T_stab, the same axes in every frame.
    let t_end = 1.0;
    println!(
        "  four-bar opened by 3 mrad, RK4 h = {} ms, |e| at t = 0.2 s, simulated / predicted:",
        SLIDER_STEP * 1e3
    );
    for (i, &ts) in SLIDER_T_STABS.iter().enumerate() {
        let (sim, predicted) = baumgarte_return(ts, SLIDER_STEP, t_end)?;
        let at = |s: &[(f64, f64)], t: f64| s.iter().find(|p| p.0 >= t - 1e-9).map(|p| p.1);
        let fmt = |v: Option<f64>| v.map_or("diverged".to_string(), |v| format!("{v:.2e}"));
        println!(
            "    T_stab = {ts:<5} s: {} / {}",
            fmt(at(&sim, 0.2)),
            fmt(at(&predicted, 0.2))
        );
        // 1e-16 m stands for an error that rounding has made exactly zero (a log axis has no 0)
        let floor = |s: Vec<(f64, f64)>| s.into_iter().map(|(t, e)| (t, e.max(1e-16))).collect();
        let path = dir.join(format!("loops_baumgarte_{i}.svg"));
        Chart::new(
            &format!("Four-bar opened by 3 mrad, Baumgarte T_stab = {ts} s, RK4 h = 10 ms"),
            "time t (s)",
            "loop-closure error |e| (m)",
        )
        .log(false, true)
        .ranges(Some((0.0, t_end)), Some((1e-16, 1.0)))
        .with(Series::line("simulated", floor(sim)))
        .with(Series::dashed(
            "critically damped prediction |e(0)| (1 + t/T) exp(-t/T)",
            floor(predicted),
        ))
        .save_svg(&path)?;
        out.push(path);
    }
    Ok(out)
}
