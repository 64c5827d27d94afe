//! Chapters "The constraint model" and "Soft constraints": the constraint rows of the scene
//! `limits_friction.xml` (every row type but connect and weld, with parameters that MuJoCo
//! sanitizes) at a state where its joints press on their limits, printed as a table, and the
//! chapters' figures.
//!
//! ```text
//! cargo run --release --example ch11_constraints
//! ```

use mbd::mjcf;
use mbd::mujoco::constraint::{make_constraint, Invweight};
use mbd::mujoco::forward_smooth;
use std::path::Path;

fn main() -> mbd::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // ANCHOR: rows
    let model = mjcf::load(root.join("tests/fixtures/models/limits_friction.xml"))?.model;
    let inv = Invweight::new(&model)?; // mj_setConst: invweight0, eq_data, tendon_length0
                                       // shoulder at its upper limit, the elbow bent 0.7 rad (range 0.6), the wrist moving
    let mut q = model.qpos0.as_slice().to_vec();
    let mut v = vec![0.0; model.nv];
    q[1] = 0.52;
    let (s, c) = (0.35f64.sin(), 0.35f64.cos());
    q[2..6].copy_from_slice(&[c, 0.0, 0.0, s]);
    v[5] = 0.8;
    let d = forward_smooth(&model, &q, &v)?;
    let efc = make_constraint(&model, &d, &inv, &q, &v, Vec::new())?;
    // ANCHOR_END: rows
    println!(
        "{}: nv = {}, ne = {}, nf = {}, nl = {}, nefc = {}",
        model.name,
        model.nv,
        efc.ne,
        efc.nf,
        efc.nl,
        efc.nefc()
    );
    println!("body_invweight0 [tran, rot] = {:.4?}", inv.body);
    mbd::figures::constraint::print_rows(&efc);
    for w in &efc.warnings {
        println!("warning: {w}");
    }
    let dir = root.join("book/src/figures");
    for p in mbd::figures::constraint::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
