//! Chapter "Sparse direct solves for SPOOK": the block graph of a small ladder, its orderings
//! and their fill, the multifrontal factorization against the dense solve, a singular system,
//! the step time of chains from 10 to 100,000 bodies, and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch17_spook_sparse
//! ```

use mbd::sparse::ordering::{fill, order, BlockOrdering};
use mbd::sparse::OpCount;
use mbd::spook::sparse::{block_graph, groups_of, SpookSparse};
use mbd::spook::{graph_scene, BodyGraph, SpookSolver, StepSettings, Stepper};
use std::path::Path;
use std::time::Instant;

fn main() -> mbd::Result<()> {
    let h = 0.01;
    // 1. a 6-rung ladder: nodes, orderings, fill
    let sys = graph_scene(BodyGraph::Ladder, 12, 1, 1e-8, 2.0 * h);
    let mut st = Stepper::new(
        &sys,
        h,
        StepSettings {
            solver: SpookSolver::Sparse,
            ..Default::default()
        },
    )?;
    st.assemble(&sys);
    let groups = groups_of(&st.rows);
    let (_, sizes, adj) = block_graph(st.nbody(), &groups);
    println!(
        "ladder of {} bodies: {} block nodes ({} bodies, {} joints), {} rows",
        sys.bodies.len(),
        adj.len(),
        st.nbody(),
        groups.len(),
        sizes.iter().sum::<usize>()
    );
    for m in BlockOrdering::ALL {
        let f = fill(&adj, &sizes, &order(m, &adj, &sizes)?)?;
        println!(
            "  {:<18} blocks of L {:>3} (fill {:>2}), scalars of L {:>5}, multiply-adds {:>6}, etree height {}",
            m.name(),
            f.l_blocks,
            f.fill_blocks,
            f.l_scalars,
            f.madds,
            f.height
        );
    }

    // 2. the multifrontal solve against the dense LU of the whole block system
    let mut sp = SpookSparse::new(st.nbody(), &st.rows, BlockOrdering::MinimumDegree)?;
    sp.assemble(&st.mass, st.v.as_slice(), st.f.as_slice(), h, &st.rows);
    let mut ops = OpCount::default();
    let (mut v, mut lambda) = (vec![0.0; 6 * st.nbody()], vec![0.0; st.rows.len()]);
    sp.solve(&mut v, &mut lambda, &|c| format!("{c}"), &mut ops)?;
    let residual = sp.relative_residual();
    st.solve_direct()?;
    let dv = v
        .iter()
        .zip(st.v_next.iter())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let dl = lambda
        .iter()
        .zip(st.lambda.iter())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!(
        "  multifrontal vs dense LU: |dv| {dv:.1e} m/s, |dlambda| {dl:.1e} N s; residual {residual:.1e}; \
         largest front {} rows; {} multiply-adds (factor, solve and one refinement step)",
        sp.mf.plan.max_front, ops.madd
    );

    // 3. a redundant joint with epsilon = 0: reported, not hidden
    let mut bad = graph_scene(BodyGraph::Chain, 5, 1, 0.0, 2.0 * h);
    let dup = bad.constraints[1].clone();
    bad.add_constraint(dup);
    let mut st = Stepper::new(
        &bad,
        h,
        StepSettings {
            solver: SpookSolver::Sparse,
            ..Default::default()
        },
    )?;
    match st.step(&mut bad) {
        Err(e) => println!("redundant joint, epsilon = 0: {e}"),
        Ok(()) => println!("redundant joint, epsilon = 0: solved (unexpected)"),
    }

    // 4. step time on chains
    println!("SPOOK step time, chain, sparse solve:");
    for n in [10, 100, 1000, 10000, 100000] {
        let mut sys = graph_scene(BodyGraph::Chain, n, 1, 1e-8, 2.0 * h);
        sys.gravity = mbd::spatial::Vec3::zeros(); // as in the figure: see step_seconds
        let t = Instant::now();
        let mut st = Stepper::new(&sys, h, StepSettings::default())?;
        st.step(&mut sys)?;
        let first = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let steps = if n >= 10000 { 3 } else { 20 };
        for _ in 0..steps {
            st.step(&mut sys)?;
        }
        let each = t.elapsed().as_secs_f64() / steps as f64;
        println!(
            "  n = {n:>6}: first step (with ordering and symbolic analysis) {:>8.2} ms, then {:>8.3} ms per step ({:.2} us per body)",
            1e3 * first,
            1e3 * each,
            1e6 * each / n as f64
        );
    }

    let dir = Path::new("book/src/figures");
    for p in mbd::figures::spook_sparse::run(dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
