//! The simulation loop with contacts: a ball bouncing for several `solref`, a box on an incline
//! sliding or sticking as friction crosses `tan(theta)` (beside the analytic motion), ten boxes
//! settling into a stack, and the Gymnasium hopper under a fixed control sequence beside MuJoCo
//! 4.0.0's trajectory. Prints what each run shows and writes the figures of the chapter
//! "Integrators and the simulation loop".
//!
//!     cargo run --release --example mujoco_contacts

use std::path::Path;

fn main() -> mbd::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::integrators::contact_figures(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
