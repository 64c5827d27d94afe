//! Chapter "One mechanism, every formulation": the planar four-bar through the loop-closure
//! function, the spanning tree with a loop joint (three methods), MuJoCo's soft `connect`
//! (three solvers, two integrators, three softnesses) and SPOOK's maximal coordinates (three
//! linear solvers), and the Gymnasium humanoid through ABA, CRBA and MuJoCo's com-based
//! pipeline, and hanging from its torso through SPOOK. Prints the agreement and cost tables and writes the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch18_comparison
//! ```

use std::path::Path;

fn main() -> mbd::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    std::fs::create_dir_all(&dir).map_err(|e| mbd::Error::Io {
        path: dir.display().to_string(),
        why: e.to_string(),
    })?;
    for path in mbd::figures::comparison::run(&dir)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}
