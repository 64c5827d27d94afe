//! Chapter "The articulated-body algorithm": forward dynamics of a floating robot with ball
//! joints by ABA, checked against the inertia-matrix route, a few steps of simulation, and the
//! chapter's figures.
//!
//! ```text
//! cargo run --release --example ch05_aba
//! ```

use mbd::dynamics::{aba, hand_c, kinetic_energy, potential_energy};
use mbd::model::canned;
use std::path::Path;

fn main() -> mbd::Result<()> {
    // Free base, two ball-jointed arms, a prismatic tail: joints of 1, 3 and 6 dofs.
    let model = canned::floating_base_ball_arms();
    let q = model.qpos0.clone();
    let qd: Vec<f64> = (0..model.nv).map(|k| 0.2 * (k as f64).sin()).collect();
    let tau = vec![0.0; model.nv];

    let qdd = aba(&model, q.as_slice(), &qd, &tau, None)?;
    // The same accelerations from H qdd = tau - C.
    let (h, c) = hand_c(&model, q.as_slice(), &qd, None)?;
    let rhs = nalgebra::DVector::from_column_slice(&tau) - c;
    let qdd2 = h.cholesky().expect("H is positive definite").solve(&rhs);
    println!("max |ABA - CRBA route| = {:.2e}", (&qdd - &qdd2).amax());

    // Half a second of free fall with semi-implicit Euler (MuJoCo's Euler), watching the energy.
    let (mut q, mut v) = (q, nalgebra::DVector::from_column_slice(&qd));
    let dt = 0.001;
    let e0 = kinetic_energy(&model, q.as_slice(), v.as_slice())? + potential_energy(&model, q.as_slice())?;
    for _ in 0..500 {
        let a = aba(&model, q.as_slice(), v.as_slice(), &tau, None)?;
        v += a * dt;
        model.integrate(q.as_mut_slice(), v.as_slice(), dt).unwrap();
    }
    let e1 = kinetic_energy(&model, q.as_slice(), v.as_slice())? + potential_energy(&model, q.as_slice())?;
    println!(
        "after 0.5 s: torso height {:.4} m, energy change {:.2e} J",
        q[2],
        e1 - e0
    );

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::ch07::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
