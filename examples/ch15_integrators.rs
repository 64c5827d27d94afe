//! The chapter "Integrators and the simulation loop" in three runs, each printing what it shows and
//! writing its figures:
//!
//! - `lqr`: an LQR balance controller for the Gymnasium inverted double pendulum, designed on
//!   MuJoCo's finite-difference linearization (`mjd_transitionFD`) and run on the nonlinear
//!   simulator: the gain and the state every half second, and the controlled and uncontrolled runs;
//! - `contacts`: a ball bouncing for several `solref`, a box on an incline sliding or sticking as
//!   friction crosses `tan(theta)` (beside the analytic motion), ten boxes settling into a stack,
//!   and the Gymnasium hopper under a fixed control sequence beside MuJoCo 4.0.0's trajectory;
//! - `muscles`: MuJoCo's muscle curves' landmarks and a two-link arm moved by four muscles;
//! - `warmstart`: the solver iterations of every step of the Gymnasium humanoid falling and
//!   settling, warm-started and cold, with PGS, CG and Newton;
//! - `mocap`: an arm whose hand is welded to a mocap target moving on a circle, its lag for two
//!   weld time constants beside `2 tc v`.
//!
//!     cargo run --release --example ch15_integrators [lqr|contacts|muscles|warmstart|mocap]   (all by default)

use mbd::figures::integrators::{lqr_balance, LQR_DURATION};
use mbd::figures::muscle::{arm_bursts, ARM_XML};
use mbd::model::Integrator;
use std::path::Path;

fn main() -> mbd::Result<()> {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".to_string());
    if !["all", "lqr", "contacts", "muscles", "warmstart", "mocap"].contains(&which.as_str()) {
        eprintln!("ch15_integrators: unknown run `{which}` (lqr, contacts, muscles, warmstart, mocap or none for all)");
        std::process::exit(2);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    if which == "all" || which == "lqr" {
        lqr(&dir)?;
    }
    if which == "all" || which == "contacts" {
        for p in mbd::figures::integrators::contact_figures(&dir)? {
            println!("wrote {}", p.display());
        }
    }
    if which == "all" || which == "muscles" {
        muscles(&dir)?;
    }
    if which == "warmstart" {
        // (the "all" run draws it with the lqr run's figures)
        let p = mbd::figures::integrators::warmstart_figure(&dir)?;
        println!("wrote {}", p.display());
    }
    if which == "mocap" {
        // (the "all" run draws it with the lqr run's figures)
        let p = mbd::figures::integrators::mocap_figure(&dir)?;
        println!("wrote {}", p.display());
    }
    Ok(())
}

/// The LQR balance controller, with and without the controller.
fn lqr(dir: &Path) -> mbd::Result<()> {
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
    for p in mbd::figures::integrators::run(dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}

/// The muscles' force scales and the arm moved by flexor and extensor bursts.
fn muscles(dir: &Path) -> mbd::Result<()> {
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
    for p in mbd::figures::muscle::run(dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
