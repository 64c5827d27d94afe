//! Chapter "Spatial vectors": writes the chapter's figures into book/src/figures and shows the
//! spatial-vector API at work.
//!
//! Run with `cargo run --release --example ch01_spatial`.

use mbd::spatial::{rotz, xlt, Force, Mat3, Motion, SpatialInertia, Vec3};
use std::path::Path;

fn main() -> mbd::Result<()> {
    // ANCHOR: api
    // A body spinning about the world z axis at 2 rad/s while its origin point moves along x.
    let v = Motion::new(Vec3::new(0.0, 0.0, 2.0), Vec3::new(1.0, 0.0, 0.0));
    // A pure force (3, 10, 0) N acting on a line through the origin.
    let f = Force::new(Vec3::zeros(), Vec3::new(3.0, 10.0, 0.0));
    // B is rotated 90 degrees about z and has its origin at (1, 0, 0) in A: B_X_A = rotz xlt.
    let x_ba = rotz(std::f64::consts::FRAC_PI_2) * xlt(Vec3::new(1.0, 0.0, 0.0));
    let (v_b, f_b) = (x_ba * v, x_ba.apply_force(&f));
    println!("v in B = {:?}", v_b.to_vec6().as_slice());
    println!("f in B = {:?}", f_b.to_vec6().as_slice());
    // Power does not depend on the frame it is computed in.
    println!("power in A = {}, in B = {}", v.dot(&f), v_b.dot(&f_b));
    // A 2 kg body whose centre of mass is 0.5 m along x: its momentum I v (a force vector).
    let inertia = SpatialInertia::from_mass_com_inertia(2.0, Vec3::new(0.5, 0.0, 0.0), Mat3::identity() * 0.01);
    let h = inertia.mul_motion(&v);
    println!(
        "momentum = {:?}, kinetic energy = {}",
        h.to_vec6().as_slice(),
        0.5 * v.dot(&h)
    );
    // ANCHOR_END: api

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for path in mbd::figures::ch02::run(&dir)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}
