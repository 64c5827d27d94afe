//! Figures and report of the chapter "The articulated-body algorithm" (Featherstone ch. 7).
//!
//! - `ch07_crossover.svg`: measured time of forward dynamics by ABA against the inertia-matrix
//!   route (RNEA for C, CRBA for H, dense Cholesky, two triangular solves), for chains and
//!   balanced trees, on log-log axes with slope 1 and slope 3 references.
//! - `ch07_energy.svg`: the total energy error of a double pendulum integrated with ABA
//!   accelerations by explicit Euler, semi-implicit Euler (MuJoCo's `Euler`) and RK4.

use super::ch05::{sample_state, seconds_per_call, slope_line, CHAIN_SIZES, TREE_DEPTHS};
use crate::dynamics::{aba, aba_with, crba_with, kinetic_energy, potential_energy, rnea_with, Workspace};
use crate::error::{Error, Result};
use crate::integrate::{euler_step, explicit_euler_step, rk4_step, StepScratch};
use crate::model::{canned, Model};
use crate::plot::{Chart, Series};
use crate::sparse::{cholesky_dense_in_place, cholesky_solve_dense_with};
use nalgebra::{DMatrix, DVector};
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Scratch space for [`fd_by_crba`].
#[derive(Clone, Debug)]
pub struct CrbaScratch {
    /// Joint-space inertia, then its Cholesky factor.
    pub h: DMatrix<f64>,
    /// Bias force `C`, then the right-hand side and the solution.
    pub c: Vec<f64>,
    /// Zero accelerations (RNEA input).
    pub zeros: Vec<f64>,
}

impl CrbaScratch {
    /// Storage for `model`.
    pub fn new(model: &Model) -> Self {
        CrbaScratch {
            h: DMatrix::zeros(model.nv, model.nv),
            c: vec![0.0; model.nv],
            zeros: vec![0.0; model.nv],
        }
    }
}

/// Forward dynamics by the inertia-matrix route of Featherstone chapter 6: `C = ID(q, qd, 0)` by
/// RNEA, `H` by CRBA, then `qdd = H^-1 (tau - C)` by dense Cholesky. Writes `qdd`.
pub fn fd_by_crba(
    model: &Model,
    ws: &mut Workspace,
    s: &mut CrbaScratch,
    q: &[f64],
    qd: &[f64],
    tau: &[f64],
    qdd: &mut [f64],
) -> Result<()> {
    rnea_with(model, ws, q, qd, &s.zeros, None, &mut s.c);
    // crba_with writes the lower triangle on the tree's pattern only, and the dense Cholesky
    // below fills in the rest of the lower triangle: clear it first.
    s.h.fill(0.0);
    crba_with(model, ws, q, &mut s.h);
    cholesky_dense_in_place(&mut s.h, "H")?;
    for k in 0..model.nv {
        qdd[k] = tau[k] - s.c[k];
    }
    cholesky_solve_dense_with(&s.h, qdd);
    Ok(())
}

/// Time-stepping schemes compared in the energy figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stepper {
    /// `q += h qd; qd += h qdd(q_old, qd_old)`.
    ExplicitEuler,
    /// `qd += h qdd(q, qd); q += h qd_new` (MuJoCo's `Euler` without damping).
    SemiImplicitEuler,
    /// The classical fourth-order Runge-Kutta method on `(q, qd)`.
    Rk4,
}

/// One step of `stepper` for the unactuated system (`tau = 0`), accelerations by ABA, with the
/// schemes of [`crate::integrate`].
pub fn step(model: &Model, stepper: Stepper, q: &mut [f64], qd: &mut [f64], h: f64) -> Result<()> {
    let tau = vec![0.0; model.nv];
    let mut acc = |q: &[f64], qd: &[f64], qdd: &mut [f64]| -> Result<()> {
        qdd.copy_from_slice(aba(model, q, qd, &tau, None)?.as_slice());
        Ok(())
    };
    let mut qdd = vec![0.0; model.nv];
    match stepper {
        Stepper::ExplicitEuler => explicit_euler_step(model, &mut acc, q, qd, &mut qdd, h),
        Stepper::SemiImplicitEuler => euler_step(model, &mut acc, q, qd, &mut qdd, h),
        Stepper::Rk4 => rk4_step(model, &mut StepScratch::new(model), &mut acc, q, qd, h),
    }
}

/// Total energy `T + U` along `steps` steps of `stepper` from `(q0, 0)`: rows `(t, E)`.
pub fn energy_history(model: &Model, stepper: Stepper, q0: &[f64], h: f64, steps: usize) -> Result<Vec<(f64, f64)>> {
    let mut q = q0.to_vec();
    let mut qd = vec![0.0; model.nv];
    let energy =
        |q: &[f64], qd: &[f64]| -> Result<f64> { Ok(kinetic_energy(model, q, qd)? + potential_energy(model, q)?) };
    let mut out = vec![(0.0, energy(&q, &qd)?)];
    for s in 1..=steps {
        step(model, stepper, &mut q, &mut qd, h)?;
        out.push((s as f64 * h, energy(&q, &qd)?));
    }
    Ok(out)
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Chapter 7, the articulated-body algorithm (Featherstone table 7.1)");

    // Figure 1: ABA vs CRBA + Cholesky.
    let mut chart = Chart::new(
        "Forward dynamics: ABA vs CRBA + dense Cholesky",
        "number of bodies n",
        "time per call (microseconds)",
    )
    .log(true, true);
    let mut refs = (0.0, 0.0, 0.0, 0.0);
    let mut facts = Vec::new(); // one sentence part per shape, for the chapter
    for (kind, list) in [
        (
            "chain",
            CHAIN_SIZES.iter().map(|&n| canned::chain(n, true)).collect::<Vec<_>>(),
        ),
        (
            "tree",
            TREE_DEPTHS.iter().map(|&d| canned::binary_tree(d)).collect::<Vec<_>>(),
        ),
    ] {
        let mut aba_pts = Vec::new();
        let mut crba_pts = Vec::new();
        for m in &list {
            let (q, qd, tau) = sample_state(m);
            let mut ws = Workspace::new(m);
            let mut qdd = vec![0.0; m.nv];
            // check once that both routes agree before timing them
            aba_with(m, &mut ws, &q, &qd, &tau, None, &mut qdd)?;
            let mut scratch = CrbaScratch::new(m);
            let mut qdd2 = vec![0.0; m.nv];
            fd_by_crba(m, &mut ws, &mut scratch, &q, &qd, &tau, &mut qdd2)?;
            let (a, b) = (DVector::from_column_slice(&qdd), DVector::from_column_slice(&qdd2));
            let diff = (&a - &b).amax();
            if diff > 1e-6 * a.amax().max(1.0) {
                return Err(Error::Disagree {
                    what: format!("ABA and CRBA + Cholesky on {}", m.name),
                    by: diff,
                });
            }
            aba_pts.push((
                m.nb as f64,
                1e6 * seconds_per_call(|| {
                    // the state is valid, so ABA cannot fail here; the result is consumed either way
                    black_box(aba_with(m, &mut ws, &q, &qd, &tau, None, &mut qdd).is_ok());
                    black_box(&qdd);
                }),
            ));
            crba_pts.push((
                m.nb as f64,
                1e6 * seconds_per_call(|| {
                    black_box(fd_by_crba(m, &mut ws, &mut scratch, &q, &qd, &tau, &mut qdd2).is_ok());
                    black_box(&qdd2);
                }),
            ));
        }
        let crossover = aba_pts.iter().zip(&crba_pts).find(|(a, c)| a.1 < c.1).map(|(a, _)| a.0);
        let last = aba_pts.len() - 1;
        println!(
            "  {kind}: n = {} ABA {:.2} us vs CRBA+Cholesky {:.2} us; n = {} ABA {:.1} us vs {:.1} us; ABA first faster at n = {}",
            aba_pts[0].0,
            aba_pts[0].1,
            crba_pts[0].1,
            aba_pts[last].0,
            aba_pts[last].1,
            crba_pts[last].1,
            crossover.map_or("never (in this range)".to_string(), |n| format!("{n}"))
        );
        if kind == "chain" {
            refs = (aba_pts[last].0, aba_pts[last].1, crba_pts[last].0, crba_pts[last].1);
        }
        facts.push(format!(
            "on the {kind} ABA took {:.0} ns per body at n = {}, the inertia-matrix route {:.0} times as long, \
             and ABA was first faster at {}",
            1e3 * aba_pts[last].1 / aba_pts[last].0,
            aba_pts[last].0,
            crba_pts[last].1 / aba_pts[last].1,
            crossover.map_or("no size in this range".to_string(), |n| format!("n = {n}"))
        ));
        chart = chart
            .with(Series::line_points(&format!("ABA, {kind}"), aba_pts))
            .with(Series::line_points(
                &format!("RNEA + CRBA + Cholesky, {kind}"),
                crba_pts,
            ));
    }
    super::ch05::write_snippet(dir, "ch07_crossover.md", &facts.join("; "))?;
    let path = dir.join("ch07_crossover.svg");
    chart
        .with(slope_line("slope 1 (O(n))", &[1.0, 256.0], refs.0, refs.1, 1.0))
        .with(slope_line("slope 3 (O(n^3))", &[24.0, 256.0], refs.2, refs.3, 3.0))
        .save_svg(&path)?;
    out.push(path);

    // Figure 2: energy of a double pendulum under three integrators.
    let model = canned::chain(2, false);
    let q0 = [1.5, -1.0];
    let h = 0.005;
    let steps = 4000;
    let mut chart = Chart::new(
        "Double pendulum, h = 5 ms: energy error |E(t) - E(0)|",
        "time t (s)",
        "|E(t) - E(0)| (J)",
    )
    .log(false, true)
    .ranges(None, Some((1e-10, 1e4)));
    for (stepper, label) in [
        (Stepper::ExplicitEuler, "explicit Euler"),
        (Stepper::SemiImplicitEuler, "semi-implicit Euler (MuJoCo's Euler)"),
        (Stepper::Rk4, "RK4"),
    ] {
        let hist = energy_history(&model, stepper, &q0, h, steps)?;
        let e0 = hist[0].1;
        let err: Vec<(f64, f64)> = hist.iter().map(|&(t, e)| (t, (e - e0).abs())).collect();
        let max_err = err.iter().fold(0.0f64, |a, p| a.max(p.1));
        let final_err = hist[hist.len() - 1].1 - e0;
        println!(
            "  {label}: E(0) = {e0:.4} J, max |E - E0| = {max_err:.3e} J, E(end) - E(0) = {final_err:.3e} J over {} s",
            h * steps as f64
        );
        // every 4th point keeps the figure small; the curve is smooth at that spacing
        chart = chart.with(Series::line(
            label,
            err.into_iter().step_by(4).filter(|p| p.1 > 0.0).collect(),
        ));
    }
    let path = dir.join("ch07_energy.svg");
    chart.save_svg(&path)?;
    out.push(path);
    out.push(super::schematics::aba_articulated(dir)?);
    Ok(out)
}
