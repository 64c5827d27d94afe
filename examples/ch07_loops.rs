//! Chapter "Closed-loop systems": the planar four-bar solved by the three methods of
//! Featherstone 8.5, its overconstraint, the drift table of Baumgarte stabilization, and the
//! chapter's figures.
//!
//! ```text
//! cargo run --release --example ch07_loops
//! ```

use mbd::figures::loops::{drift_table, four_bar_state, t_stab_label};
use mbd::loops::{forward_dynamics, loop_constraints, loop_properties, Method};
use std::path::Path;

fn main() -> mbd::Result<()> {
    // The four-bar: a 3-dof spanning tree (crank, coupler, rocker) closed by a revolute loop
    // joint at the rocker's ground pivot, with the crank turning at 2 rad/s.
    let (model, q, qd) = four_bar_state(2.0)?;
    let props = loop_properties(&model, q.as_slice())?;
    println!(
        "four-bar: n = {}, n^c = {}, rank K = {}, mobility = {} ({} redundant constraints)",
        props.n,
        props.nc,
        props.rank,
        props.mobility,
        props.redundant()
    );
    let sys = loop_constraints(&model, q.as_slice(), qd.as_slice(), None)?;
    println!(
        "loop-closure error {:.1e}, K qdot = {:.1e}",
        sys.err.amax(),
        (&sys.kmat * &qd).amax()
    );

    // The same accelerations from the three methods; methods 1 and 2 also give lambda (here the
    // minimum-norm one, since three of the five constraints are redundant).
    let tau = vec![0.0; model.nv];
    let mut first = None;
    for method in Method::ALL {
        let sol = forward_dynamics(&model, q.as_slice(), qd.as_slice(), &tau, None, method, None)?;
        let diff = first
            .as_ref()
            .map_or(0.0, |f: &nalgebra::DVector<f64>| (&sol.qdd - f).amax());
        println!(
            "{method:?}: qdd = {:.6?}, |lambda| = {}, max difference to KKT {diff:.1e}",
            sol.qdd.as_slice(),
            sol.lambda
                .as_ref()
                .map_or("eliminated".to_string(), |l| format!("{:.4}", l.norm())),
        );
        first.get_or_insert(sol.qdd);
    }

    // The figures (the drift table below is the same computation as the first figure).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::loops::run(&dir)? {
        println!("wrote {}", p.display());
    }

    println!("\nDrift table: four-bar, crank at 12 rad/s, RK4 h = 1 ms, 10 s");
    println!(
        "{:<18} {:>18} {:>22}",
        "stabilization", "max loop error (m)", "max energy drift (J)"
    );
    for (row, _) in drift_table(10.0)? {
        println!(
            "{:<18} {:>18.3e} {:>22.3e}",
            t_stab_label(row.t_stab),
            row.max_err,
            row.max_energy_drift
        );
    }
    Ok(())
}
