//! Chapter "Solvers": MuJoCo's PGS, CG and Newton on MuJoCo's own solver inputs for the settled
//! box stack (the committed fixture), their statistics side by side, the inverse dynamics check,
//! the noslip pass after Newton, and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch13_solvers
//! ```

use mbd::figures::solver::{figure_options, fixture_problem, run_three, BOX_STACK_JSON};
use mbd::model::Solver;
use mbd::mujoco::solver::inverse::compare_fwd_inv;
use mbd::mujoco::solver::solve;
use std::path::Path;

fn main() -> mbd::Result<()> {
    let p = fixture_problem(BOX_STACK_JSON)?;
    println!(
        "settled box stack: nv = {}, nefc = {} ({} contacts, pyramidal)",
        p.layout.nv,
        p.efc.nefc(),
        p.efc.contacts.len()
    );
    let runs = run_three(&p)?;
    println!(
        "{:>4} | {:>10} {:>10} {:>4} | {:>10} {:>10} {:>4} {:>4} | {:>10} {:>10} {:>4} {:>4}",
        "iter",
        "PGS improv",
        "dual cost",
        "act",
        "CG improv",
        "gradient",
        "act",
        "eval",
        "N improv",
        "gradient",
        "act",
        "eval"
    );
    let n = runs.iter().map(|r| r.iterations).max().unwrap_or(0);
    for k in 0..n.min(40) {
        let cell = |r: &mbd::mujoco::solver::SolverResult, primal: bool| -> String {
            match r.stats.get(k) {
                None => format!("{:>10} {:>10} {:>4}{}", "", "", "", if primal { "      " } else { "" }),
                Some(s) if primal => format!(
                    "{:>10.2e} {:>10.2e} {:>4} {:>4}",
                    s.improvement, s.gradient, s.nactive, s.neval
                ),
                Some(s) => format!("{:>10.2e} {:>10.4} {:>4}", s.improvement, s.cost, s.nactive),
            }
        };
        println!(
            "{:>4} | {} | {} | {}",
            k + 1,
            cell(&runs[0], false),
            cell(&runs[1], true),
            cell(&runs[2], true)
        );
    }
    let gap = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    println!(
        "max |f_PGS - f_Newton| = {:.1e} N, max |f_CG - f_Newton| = {:.1e} N (max f = {:.2} N)",
        gap(&runs[0].efc_force, &runs[2].efc_force),
        gap(&runs[1].efc_force, &runs[2].efc_force),
        runs[2].efc_force.iter().fold(0.0f64, |m, x| m.max(x.abs()))
    );
    let fi = compare_fwd_inv(&p.smooth(), &p.efc, &runs[2])?;
    println!(
        "forward then inverse (solver_fwdinv): |dqfrc_constraint| = {:.1e}, |qfrc_applied - qfrc_inverse| = {:.1e}",
        fi[0], fi[1]
    );

    // the noslip pass after Newton: friction forces re-solved without the regularizer R
    let mut o = figure_options(Solver::Newton);
    o.noslip_iterations = 10;
    o.noslip_tolerance = 0.0;
    let ns = solve(&p.smooth(), &p.efc, &o)?;
    let pass = &ns.stats[runs[2].iterations..];
    let moved = gap(&ns.efc_force, &runs[2].efc_force);
    println!(
        "noslip pass after Newton: {} sweeps, improvements {}; friction forces moved by up to {moved:.2e} N",
        pass.len(),
        pass.iter()
            .take(4)
            .map(|s| format!("{:.1e}", s.improvement))
            .collect::<Vec<_>>()
            .join(", ")
            + ", ..."
    );
    let normal = |f: &[f64]| -> f64 { f.iter().sum() }; // a pyramid's edges sum to its normal force
    println!(
        "    the pyramids' normal forces are kept: total {:.6} N before, {:.6} N after",
        normal(&runs[2].efc_force),
        normal(&ns.efc_force)
    );

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::solver::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
