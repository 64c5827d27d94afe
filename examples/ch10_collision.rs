//! Collision detection as MuJoCo's `mj_collision` does it: loads a scene (default: the box stack
//! of the constraint tests; any MJCF file as the first argument), prints the contact table
//! (geoms, position, normal, dist, condim, friction, solref, includemargin) and writes the
//! chapter's figures into `book/src/figures/` (or the directory given as the second argument),
//! and this model's contacts seen along y into `mujoco_collision_example.svg` there.
//!
//! ```sh
//! cargo run --release --example ch10_collision
//! cargo run --release --example ch10_collision -- tests/fixtures/models/public/gymnasium/humanoid.xml
//! ```

use mbd::figures::collision::{run, scene_figure};
use std::path::PathBuf;

fn main() -> mbd::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let file = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/models/box_stack.xml").to_string());
    let dir = args
        .get(2)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/book/src/figures")));
    let model = mbd::mjcf::load(&file)?.model;
    let qpos: Vec<f64> = model.qpos0.iter().copied().collect();
    let path = dir.join("mujoco_collision_example.svg");
    let contacts = scene_figure(
        &model,
        &qpos,
        &path,
        &format!("Contacts of {} at qpos0, seen along y", model.name),
    )?;
    println!("{} at qpos0: {} contacts", model.name, contacts.len());
    println!(
        "{:>14} {:>14} {:>28} {:>26} {:>11} {:>3} {:>24} {:>14} {:>8}",
        "geom 0", "geom 1", "pos (m)", "normal", "dist (m)", "dim", "friction (slide spin roll)", "solref", "incl.m"
    );
    let name = |g: usize| {
        let n = &model.geoms[g].name;
        if n.is_empty() {
            format!("#{g}")
        } else {
            n.clone()
        }
    };
    for c in &contacts {
        let n = c.normal();
        println!(
            "{:>14} {:>14} {:>8.4} {:>8.4} {:>8.4}  {:>7.3} {:>7.3} {:>7.3}  {:>11.3e} {:>3} {:>7.3} {:>7.4} {:>7.4}  {:>6.3} {:>6.3} {:>8.4}",
            name(c.geom[0]),
            name(c.geom[1]),
            c.pos.x,
            c.pos.y,
            c.pos.z,
            n.x,
            n.y,
            n.z,
            c.dist,
            c.dim,
            c.friction[0],
            c.friction[2],
            c.friction[3],
            c.solref[0],
            c.solref[1],
            c.includemargin()
        );
    }
    let files = run(&dir)?;
    println!(
        "wrote {} and {} chapter figures into {}",
        path.display(),
        files.len(),
        dir.display()
    );
    Ok(())
}
