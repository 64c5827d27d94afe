//! An LQR balance controller for the Gymnasium inverted double pendulum, designed on MuJoCo's
//! finite-difference linearization (`mjd_transitionFD`) and run on the nonlinear simulator:
//! prints the gain and the state every half second, and writes the chapter's figure of the
//! controlled and uncontrolled runs (book chapter "Integrators and the simulation loop").
//!
//!     cargo run --release --example ch15_integrators

use mbd::figures::integrators::{lqr_balance, LQR_DURATION};
use std::path::Path;

fn main() -> mbd::Result<()> {
    let model_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models/public/gymnasium/inverted_double_pendulum.xml");
    let run = lqr_balance(&model_path, true)?;
    println!("LQR gain K (u = -K dx, dx = (cart, hinge, hinge2, their velocities)):");
    println!("  {:?}", run.gain.iter().map(|k| format!("{k:.3}")).collect::<Vec<_>>());
    println!(
        "{:>6} {:>9} {:>9} {:>9} {:>8}",
        "t (s)", "cart (m)", "hinge", "hinge2", "ctrl"
    );
    for (k, t) in run.time.iter().enumerate() {
        if k % 50 == 0 {
            let q = &run.qpos[k];
            println!("{t:6.2} {:9.4} {:9.4} {:9.4} {:8.4}", q[0], q[1], q[2], run.ctrl[k]);
        }
    }
    let free = lqr_balance(&model_path, false)?;
    println!(
        "uncontrolled: the poles pass 1 rad after {:.2} s (of {LQR_DURATION} s)",
        free.time.last().copied().unwrap_or(0.0)
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::integrators::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
