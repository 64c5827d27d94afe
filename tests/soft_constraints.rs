//! The interactive figure of "Soft constraints" (`src/figures/constraint.rs`): a sphere resting on
//! a plane through one soft, frictionless contact settles at the penetration the soft model
//! predicts, `g (1 - d) timeconst^2` for `solimp = (d, d, ...)` and `solref = (timeconst, 1)`.
#![cfg(feature = "plot")]

use mbd::figures::constraint::{sphere_settling, steady_penetration, SLIDER_SOLIMP_D, SPHERE_G};

#[test]
fn sphere_settles_at_the_predicted_penetration_for_every_frame() {
    for d in SLIDER_SOLIMP_D {
        // 1 s is 50 time constants: the critically damped transient has died out
        let run = sphere_settling(d, 1.0).unwrap();
        let (_, last) = *run.last().unwrap();
        let predicted = steady_penetration(d, [0.02, 1.0], SPHERE_G);
        println!("d = {d}: {last:.6e} m, predicted {predicted:.6e} m");
        // the equilibrium of the discrete step is the continuous one; the solver's tolerance
        // (1e-8, scaled) leaves this much
        assert!(
            (last - predicted).abs() < 1e-6 * predicted,
            "d = {d}: settled at {last} m, predicted {predicted} m"
        );
    }
    // the lesson: a tenfold smaller 1 - d, a tenfold smaller penetration
    let p = |d| steady_penetration(d, [0.02, 1.0], SPHERE_G);
    assert!((p(0.99) / p(0.999) - 10.0).abs() < 1e-9);
}
