//! MuJoCo's muscle actuator: prints the curves' landmarks and a two-link arm moved by four
//! muscles, and writes the section's figures (book chapter "Integrators and the simulation
//! loop", section Muscles).
//!
//!     cargo run --release --features plot --example muscles

use mbd::figures::muscle::{arm_bursts, ARM_XML};
use mbd::model::Integrator;
use std::path::Path;

fn main() -> mbd::Result<()> {
    let model = mbd::mjcf::load_str(ARM_XML)?.model;
    let acc0 = mbd::dynamics::actuator_acc0(&model)?;
    println!("{:>16} {:>9} {:>9} {:>9}", "muscle", "F0 (N)", "acc0", "tau_act");
    for (a, acc0) in model.actuators.iter().zip(&acc0) {
        let f0 = if a.gainprm[2] < 0.0 {
            a.gainprm[3] / acc0
        } else {
            a.gainprm[2]
        };
        println!("{:>16} {f0:9.2} {acc0:9.3} {:9.3}", a.name, a.dynprm[0]);
    }
    for integ in [Integrator::Euler, Integrator::Implicit, Integrator::Rk4] {
        let [elbow, flex, _] = arm_bursts(integ)?;
        let at = |t: f64| elbow.iter().find(|p| p.0 >= t).map(|p| p.1).unwrap_or(f64::NAN);
        let a = flex.iter().find(|p| p.0 >= 0.3).map(|p| p.1).unwrap_or(f64::NAN);
        println!(
            "{integ:?}: elbow {:.4} rad at 0.7 s, {:.4} rad at 1.4 s; flexor act {a:.4} at 0.3 s",
            at(0.7),
            at(1.4)
        );
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::muscle::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
