//! Chapter "Solvers": MuJoCo's PGS, CG and Newton on MuJoCo's own solver inputs for the settled
//! box stack (the committed fixture), their statistics side by side, the inverse dynamics check,
//! and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch13_solvers
//! ```

use mbd::figures::solver::{fixture_problem, run_three, BOX_STACK_JSON};
use mbd::mujoco::solver::inverse::compare_fwd_inv;
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

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::solver::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
