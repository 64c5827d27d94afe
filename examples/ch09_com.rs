//! Chapter "MuJoCo's com-based quantities": `mj_comPos`, `mj_comVel`, `mj_crb` and `mj_rne` on
//! the floating base with arms, the same H and bias as Featherstone's body-frame CRBA and RNEA,
//! and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch09_com
//! ```

use mbd::dynamics::{bias_forces, crba};
use mbd::model::canned;
use mbd::mujoco::forward_smooth;
use std::path::Path;

fn main() -> mbd::Result<()> {
    let model = canned::floating_base_ball_arms();
    let mut q = model.qpos0.as_slice().to_vec();
    let v: Vec<f64> = (0..model.nv).map(|k| 0.3 * (k as f64).cos()).collect();
    model.integrate(&mut q, &v, 1.0).unwrap();

    let d = forward_smooth(&model, &q, &v)?;
    let com = d.subtree_com(&model);
    println!(
        "subtree_com of the torso (the reference point c of the tree) = {:.4?}",
        com[1].as_slice()
    );
    println!(
        "cinert of the torso [Ixx Iyy Izz Ixy Ixz Iyz m*dx m*dy m*dz m] = {:.4?}",
        d.cinert(&model)[1]
    );
    for (k, c) in d.cdof.iter().enumerate().take(7) {
        println!(
            "cdof[{k}] = [{:7.4} {:7.4} {:7.4} | {:7.4} {:7.4} {:7.4}]",
            c.w.x, c.w.y, c.w.z, c.v.x, c.v.y, c.v.z
        );
    }

    let h = crba(&model, &q)?;
    let m = model.mj_layout().to_dense(&d.qm);
    println!(
        "max |M (mj_crb) - H (CRBA)| = {:.1e} (max |H| = {:.2})",
        (&m - &h).amax(),
        h.amax()
    );
    let c = bias_forces(&model, &q, &v)?;
    let gap = c
        .iter()
        .zip(&d.qfrc_bias)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!("max |qfrc_bias (mj_rne) - C (RNEA)| = {gap:.1e}");

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::com::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
