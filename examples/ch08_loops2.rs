//! Chapter "Solving the constraint equations, sparsity and ladders" (Featherstone 8.8-8.13): the
//! figure 8.3 mechanism's loop-closure function, the four-loop system's clusters, the sparse
//! matrix method on a ladder against the spanning-tree method, and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch08_loops2
//! ```

use mbd::loops::{
    body_accelerations, forward_dynamics, loop_constraints, sparse_forward_dynamics, Figure83Closure, LoopClosure,
    Method, Ordering,
};
use mbd::model::loop_models::ladder;
use mbd::model::mechanisms::figure_8_3;
use nalgebra::DVector;
use std::path::Path;

fn main() -> mbd::Result<()> {
    // figure 8.3: gamma, G and g in closed form at y = (1, 0.5), ydot = (0.7, -0.3)
    let cl = Figure83Closure { l1: 1.0, l2: 0.6 };
    let (y, yd) = ([1.0, 0.5], [0.7, -0.3]);
    let q = cl.gamma(&y)?;
    let g = cl.g_null(&y)?;
    let gb = cl.g_bias(&y, &yd)?;
    let m = figure_8_3(1.0, 0.6)?;
    let qd = &g * DVector::from_column_slice(&yd);
    let s = loop_constraints(&m, q.as_slice(), qd.as_slice(), None)?;
    println!("figure 8.3: q = gamma(y) = {:.6?}", q.as_slice());
    println!(
        "  G column 1 = {:.6?}, g = {:.6?}",
        g.column(0).as_slice(),
        gb.as_slice()
    );
    println!(
        "  loop error {:.1e}, |K G| = {:.1e}, |K g - k| = {:.1e}",
        s.err.amax(),
        (&s.kmat * &g).amax(),
        (&s.kmat * &gb - &s.k).amax()
    );

    // a 20-rung ladder: the sparse matrix method against the spanning-tree method
    let m = ladder(20, 0.5, 0.3)?;
    let (q, qd) = mbd::model::loop_models::sample_state(&m);
    let tau = vec![0.0; m.nv];
    let st = forward_dynamics(&m, &q, &qd, &tau, None, Method::LambdaFirst, None)?;
    let a_ref = body_accelerations(&m, &q, &qd, st.qdd.as_slice())?;
    let sp = sparse_forward_dynamics(&m, &q, &qd, &tau, None, None, Ordering::Banded)?;
    let diff = (1..=m.nb)
        .map(|i| (sp.a[i].to_vec6() - a_ref[i].to_vec6()).amax())
        .fold(0.0, f64::max);
    println!(
        "20-rung ladder: max body-acceleration difference {diff:.1e}, sparse method {} multiply-adds, {} fill blocks",
        sp.ops.madd, sp.fill_blocks
    );

    let dir = Path::new("book/src/figures");
    for p in mbd::figures::loops2::run(dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
