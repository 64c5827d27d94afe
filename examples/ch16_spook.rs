//! Chapter "SPOOK: a variational stepper": the thesis pendulum, the return to the constraint,
//! the heavy-end chain, a chain falling onto the floor, and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch16_spook
//! ```

use mbd::integrate::Trajectory;
use mbd::spook::{run, scenes, spook_parameters, SpookSolver, StepSettings, Stepper, SIGNALS};
use std::path::Path;

fn main() -> mbd::Result<()> {
    // The thesis pendulum for 100 s at h = 1/60 with d = tau/h = 2 and epsilon = 1e-8.
    let h = scenes::PENDULUM_H;
    let (upsilon, sigma) = spook_parameters(h, 1e-8, 2.0 * h);
    println!(
        "h = 1/60, epsilon = 1e-8, tau = 2h: Upsilon = {upsilon:.4} (notes: 1/Upsilon = {:.1}), Sigma = {sigma:.3e}",
        1.0 / upsilon
    );
    let mut sys = scenes::pendulum(1e-8, 2.0 * h);
    let settings = StepSettings {
        solver: SpookSolver::Direct,
        ..Default::default()
    };
    let mut stepper = Stepper::new(&sys, h, settings)?;
    let mut tr = Trajectory::new(&SIGNALS);
    run(&mut sys, &mut stepper, 6000, &mut tr)?;
    let e = tr.signal("energy").unwrap_or(&[]);
    println!(
        "pendulum, 100 s: max |phi| = {:.3e} m, energy from {:.3} J to {:.3} J (max {:.3} J)",
        tr.max_of("violation"),
        e[0],
        e[e.len() - 1],
        e.iter().copied().fold(f64::MIN, f64::max)
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for f in mbd::figures::spook::run(&dir)? {
        println!("wrote {}", f.display());
    }
    Ok(())
}
