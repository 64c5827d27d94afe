//! Chapter "The recursive Newton-Euler algorithm": inverse dynamics of a double pendulum, the
//! bias force MuJoCo calls `qfrc_bias`, an external force, and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch03_rnea
//! ```

use mbd::dynamics::{bias_forces, rnea};
use mbd::kinematics::{forward_kinematics, world_force_at_point};
use mbd::model::canned;
use mbd::spatial::{Force, Vec3};
use std::path::Path;

fn main() -> mbd::Result<()> {
    let model = canned::chain(2, false);
    let q = [0.5, -0.3];
    let qd = [1.0, 2.0];
    let qdd = [0.0, 0.0];

    // tau = ID(q, qd, qdd): with qdd = 0 this is the bias force C(q, qd) (MuJoCo's qfrc_bias).
    let tau = rnea(&model, &q, &qd, &qdd, None)?;
    let c = bias_forces(&model, &q, &qd)?;
    println!("ID(q, qd, 0) = {:.6?}  C(q, qd) = {:.6?}", tau.as_slice(), c.as_slice());

    // Holding the pendulum still against a 10 N push along +x at the tip of link 2: external
    // forces are spatial forces in base coordinates, one per body (entry 0 unused).
    let kin = forward_kinematics(&model, &q)?;
    let tip = kin.point(2, &Vec3::new(0.0, 0.0, -0.49));
    let mut f_ext = vec![Force::zero(); model.nb + 1];
    f_ext[2] = world_force_at_point(&Vec3::new(10.0, 0.0, 0.0), &Vec3::zeros(), &tip);
    let hold = rnea(&model, &q, &[0.0; 2], &[0.0; 2], Some(&f_ext))?;
    println!(
        "torques that hold q against gravity and the push: {:.6?}",
        hold.as_slice()
    );

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::ch05::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
