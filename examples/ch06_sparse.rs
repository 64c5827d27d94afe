//! Chapter "Sparse factorization of the joint-space inertia": H of a small branched tree, its
//! `L^T D L` factor in place (Featherstone 6.5), the same factor in MuJoCo's legacy layout
//! (`mj_factorI`), a solve, the fill-in of the other order, and the chapter's figures.
//!
//! ```text
//! cargo run --release --example ch06_sparse
//! ```

use mbd::dynamics::crba;
use mbd::model::canned;
use mbd::sparse::{factor_i, llt_fill_in, ltdl, solve_ld, solve_ltdl, split_ltdl, MjLayout, OpCount, PivotPolicy};
use std::path::Path;

fn main() -> mbd::Result<()> {
    // A binary tree of depth 3: dof 0 is the root, 1 and 4 its children, 2, 3, 5, 6 the leaves.
    let model = canned::binary_tree(3);
    let parent = &model.dof_parent;
    println!("dof parents = {parent:?}");
    let q: Vec<f64> = (0..model.nq).map(|k| 0.4 * (k as f64 + 1.0).sin()).collect();
    let h = crba(&model, &q)?;
    println!("H =\n{h:.4}");

    // L^T D L in place: afterwards the strict lower triangle holds L, the diagonal D.
    let mut ld = h.clone();
    let mut ops = OpCount::default();
    ltdl(&mut ld, parent, &mut ops)?;
    let (l, d) = split_ltdl(&ld, parent);
    println!("L =\n{l:.4}D = {:.4?}", d.as_slice());
    println!(
        "LTDL cost: {} divisions, {} multiply-adds (dense: {})",
        ops.div,
        ops.madd,
        (7 * 7 * 7 - 7) / 6
    );
    let rebuilt = l.transpose() * nalgebra::DMatrix::from_diagonal(&d) * &l;
    println!("max |L^T D L - H| = {:.1e}", (rebuilt - &h).amax());

    // MuJoCo's legacy layout: one contiguous row per dof, diagonal first, then the ancestors.
    let lay = MjLayout::new(parent)?;
    println!("dof_Madr = {:?}, nM = {}", lay.dof_madr, lay.nm);
    let qm = lay.from_dense(&h);
    let f = factor_i(&lay, &qm, PivotPolicy::Error, &mut OpCount::default())?;
    let b = vec![1.0; model.nv];
    let mut x = b.clone();
    solve_ld(&lay, &f.qld, &f.qld_diag_inv, &mut x, &mut OpCount::default())?;
    let x2 = solve_ltdl(&ld, parent, &b, &mut OpCount::default())?;
    println!("H x = 1: mj_solveLD x = {:.5?}", x);
    println!("         LTDL solve x = {:.5?}", x2.as_slice());
    println!("root-first L L^T would fill in {} entries", llt_fill_in(parent));

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for p in mbd::figures::sparse::run(&dir)? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
