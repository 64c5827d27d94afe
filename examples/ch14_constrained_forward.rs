//! Chapter "The constrained pipeline": MuJoCo's `mj_forward` with contacts on the box stack (the
//! stages' outputs, the contacts and their forces, each solver and cone), `mj_inverse` at the
//! result, and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch14_constrained_forward
//! ```

use mbd::mjcf;
use mbd::model::{Cone, Solver};
use mbd::mujoco::forward::{contact_force, fwdinv, Forward};
use std::path::Path;

fn main() -> mbd::Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/box_stack.xml");
    let base = mjcf::load(&path)?.model;
    let q = base.qpos0.as_slice().to_vec();
    let v = vec![0.0; base.nv];
    for cone in [Cone::Pyramidal, Cone::Elliptic] {
        for solver in [Solver::Newton, Solver::Cg, Solver::Pgs] {
            let mut model = base.clone();
            model.opt.cone = cone;
            model.opt.solver = solver;
            model.opt.tolerance = 1e-10;
            let mut fw = Forward::new(&model)?;
            let r = fwdinv(&mut fw, &q, &v, &v)?;
            let d = &fw.d;
            // the floor's contacts (geom 0) carry the stack's weight
            let normal: f64 = (0..d.contacts().len())
                .filter(|&k| d.contacts()[k].geom[0] == 0)
                .map(|k| contact_force(d, k)[0])
                .sum();
            println!(
                "{:>9} {:>6}: ncon {:>2}, nefc {:>2}, {:>3} iterations, floor's normal force {normal:8.4} N \
                 (weight 29.43 N), qacc of box 3 (z) {:9.5}, fwdinv [{:.1e}, {:.1e}]",
                cone.name(),
                solver.name(),
                d.contacts().len(),
                d.efc.nefc(),
                d.solver_niter,
                d.qacc[14],
                r[0],
                r[1]
            );
        }
    }
    let dir = Path::new("target/figures");
    for p in mbd::figures::forward::run(dir)? {
        println!("wrote {}", p.display());
    }
    // what the pipeline reports: mj_rnePostConstraint and the sensors
    for p in mbd::figures::sensors::run(dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
