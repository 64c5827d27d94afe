//! Chapter "The composite-rigid-body algorithm": the joint-space inertia matrix H of a small
//! tree, its sparsity, the equation of motion `H qdd + C = tau` from `hand_c`, and the chapter's
//! figures.
//!
//! ```text
//! cargo run --release --example ch04_crba
//! ```

use mbd::dynamics::{crba, hand_c, rnea};
use mbd::model::canned;
use std::path::Path;

fn main() -> mbd::Result<()> {
    // A binary tree of depth 2: body 1 is the root, bodies 2 and 3 its children.
    let model = canned::binary_tree(2);
    println!("lambda = {:?}", model.lambda);
    let q = [0.3, -0.5, 0.8];
    let h = crba(&model, &q)?;
    println!("H(q) =\n{h:.5}");
    println!("H[(1, 2)] = {:e}: bodies 2 and 3 are on different branches", h[(1, 2)]);

    // HandC: H and C together; tau = H qdd + C is what RNEA returns.
    let qd = [0.4, 1.0, -0.7];
    let qdd = nalgebra::DVector::from_column_slice(&[1.0, 0.0, -2.0]);
    let (h, c) = hand_c(&model, &q, &qd, None)?;
    let tau_ab = &h * &qdd + &c;
    let tau_id = rnea(&model, &q, &qd, qdd.as_slice(), None)?;
    println!("H qdd + C = {:.6?}", tau_ab.as_slice());
    println!("ID(q,qd,qdd) = {:.6?}", tau_id.as_slice());

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::ch06::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
