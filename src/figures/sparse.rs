//! Figures and report of the chapter "Sparse factorization of the joint-space inertia"
//! (Featherstone 6.5; MuJoCo's `mj_factorM` / `mj_factorI`).
//!
//! - `sparse_spy_chain.svg`, `sparse_spy_tree.svg`, `sparse_spy_floating.svg`: the nonzeros of H
//!   (from CRBA) and of the L of `H = L^T D L` (LTDL) for a 12-link chain, a balanced binary tree
//!   of 15 bodies and the floating base with two arms and a tail (16 dofs): L has exactly H's
//!   lower pattern.
//! - `sparse_fill_in.svg`: the same tree factored leaves-to-root (`H = L^T L`, no fill-in) and
//!   root-to-leaves (`H = L L^T`, nalgebra's Cholesky), with the fill-in marked.
//! - `sparse_ops.svg`: multiply-adds counted by LTDL against the number of dofs n, for chains
//!   (`(n^3 - n) / 6`, the dense count) and balanced binary trees (about `n d^2 / 2`), log-log.
//! - `sparse_time.svg`: measured time of LTDL, of `factor_i` (MuJoCo's legacy layout) and of a
//!   dense Cholesky for the same matrices, log-log with reference slopes.

use super::ch05::{sample_state, seconds_per_call, slope_line, CHAIN_SIZES, TREE_DEPTHS};
use crate::dynamics::crba;
use crate::error::Result;
use crate::model::{canned, Model};
use crate::plot::{Chart, Series, Spy, SpyPanel};
use crate::sparse::{
    cholesky_dense, factor_i_in_place, is_ancestor_or_self, llt_fill_in, lower_ltl, ltdl, ltl, predicted_ltdl_ops,
    split_ltdl, NoCount, OpCount, PivotPolicy,
};
use nalgebra::DMatrix;
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Classes of entries in the spy plots (legend order = palette order).
pub const SPY_CLASSES: [&str; 4] = [
    "diagonal",
    "nonzero off-diagonal",
    "on the ancestor pattern, zero here",
    "fill-in (off the pattern)",
];

/// Whether (i, j) is on the ancestor pattern of the dof tree: one of i, j is the other or one of
/// its ancestors.
pub fn on_pattern(parent: &[Option<usize>], i: usize, j: usize) -> bool {
    is_ancestor_or_self(parent, j, i) || is_ancestor_or_self(parent, i, j)
}

/// The spy-plot entries of a matrix: every entry with `|a_ij| > 1e-12 max|a|` or on the
/// ancestor pattern (within the lower triangle only if `lower`), classified by
/// [`SPY_CLASSES`].
pub fn spy_cells(a: &DMatrix<f64>, parent: &[Option<usize>], lower: bool) -> Vec<(usize, usize, usize)> {
    let tol = 1e-12 * a.amax().max(f64::MIN_POSITIVE);
    let mut cells = Vec::new();
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            if lower && j > i {
                continue;
            }
            let nonzero = a[(i, j)].abs() > tol;
            let class = match (i == j, on_pattern(parent, i, j), nonzero) {
                (true, _, _) => 0,
                (false, true, true) => 1,
                (false, true, false) => 2,
                (false, false, true) => 3,
                (false, false, false) => continue,
            };
            cells.push((i, j, class));
        }
    }
    cells
}

/// A generic configuration: the sample state of the cost figures, applied through `integrate`
/// so that quaternions stay unit.
fn generic_q(model: &Model) -> Vec<f64> {
    let mut q = model.qpos0.as_slice().to_vec();
    let v: Vec<f64> = (0..model.nv).map(|k| 0.6 * (1.3 * k as f64 + 0.4).sin()).collect();
    model.integrate_with(&mut q, &v, 1.0); // qpos0 and v are valid by construction
    q
}

fn spy_figure(model: &Model, title: &str, path: &Path) -> Result<(usize, usize)> {
    let parent = &model.dof_parent;
    let h = crba(model, &generic_q(model))?;
    let mut ld = h.clone();
    ltdl(&mut ld, parent, &mut OpCount::default())?;
    let (l, _) = split_ltdl(&ld, parent);
    let n = model.nv;
    let (hc, lc) = (spy_cells(&h, parent, false), spy_cells(&l, parent, true));
    let spy = Spy {
        title: title.into(),
        x_label: "column j (dof)".into(),
        y_label: "row i (dof)".into(),
        classes: SPY_CLASSES[..3].iter().map(|s| s.to_string()).collect(),
        panels: vec![
            SpyPanel {
                title: "H (CRBA)".into(),
                rows: n,
                cols: n,
                cells: hc.clone(),
            },
            SpyPanel {
                title: "L of H = L^T D L (LTDL)".into(),
                rows: n,
                cols: n,
                cells: lc.clone(),
            },
        ],
    };
    spy.save_svg(path)?;
    Ok((hc.len(), lc.len()))
}

/// Multiply-adds of a dense `L L^T` (or `L^T L`) Cholesky of an n x n matrix: `(n^3 - n) / 6`.
pub fn dense_cholesky_madds(n: usize) -> usize {
    (n * n * n - n) / 6
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Sparse factorization of H (Featherstone 6.5, MuJoCo mj_factorI)");

    // Figures 1-3: H and L share one pattern.
    let chain = canned::chain(12, true);
    let tree = canned::binary_tree(4);
    let floating = canned::floating_base_ball_arms();
    for (model, name, title) in [
        (
            &chain,
            "sparse_spy_chain.svg",
            "Chain of 12 revolute joints: H and its L^T D L factor",
        ),
        (
            &tree,
            "sparse_spy_tree.svg",
            "Binary tree, 15 bodies: H and its L^T D L factor",
        ),
        (
            &floating,
            "sparse_spy_floating.svg",
            "Floating base with arms and tail (16 dofs): H and L",
        ),
    ] {
        let path = dir.join(name);
        let (nh, nl) = spy_figure(model, title, &path)?;
        let ops = predicted_ltdl_ops(&model.dof_parent);
        println!(
            "  {:16} nv {:2}: H has {nh} marked entries, L {nl} (lower triangle); LTDL {} div + {} madd, dense {} madd",
            model.name,
            model.nv,
            ops.div,
            ops.madd,
            dense_cholesky_madds(model.nv)
        );
        out.push(path);
    }

    // Figure 4: fill-in of the root-first order on the same tree.
    let parent = &tree.dof_parent;
    let h = crba(&tree, &generic_q(&tree))?;
    let mut lt = h.clone();
    ltl(&mut lt, parent, &mut OpCount::default())?;
    let l_ltl = lower_ltl(&lt, parent);
    let l_llt = cholesky_dense(&h)?;
    let (c_ltl, c_llt) = (spy_cells(&l_ltl, parent, true), spy_cells(&l_llt, parent, true));
    let fill = c_llt.iter().filter(|c| c.2 == 3).count();
    let path = dir.join("sparse_fill_in.svg");
    Spy {
        title: "The same tree factored in two orders: leaves first keeps the pattern".into(),
        x_label: "column j (dof)".into(),
        y_label: "row i (dof)".into(),
        classes: SPY_CLASSES.iter().map(|s| s.to_string()).collect(),
        panels: vec![
            SpyPanel {
                title: "H = L^T L (leaves to root)".into(),
                rows: tree.nv,
                cols: tree.nv,
                cells: c_ltl.clone(),
            },
            SpyPanel {
                title: "H = L L^T (root to leaves)".into(),
                rows: tree.nv,
                cols: tree.nv,
                cells: c_llt.clone(),
            },
        ],
    }
    .save_svg(&path)?;
    println!(
        "  fill-in on {}: L^T L {} entries, L L^T {} entries of which {fill} fill-in (symbolic count {})",
        tree.name,
        c_ltl.len(),
        c_llt.len(),
        llt_fill_in(parent)
    );
    out.push(path);

    // Figures 5-6: counted operations and measured time against n.
    let chains: Vec<Model> = CHAIN_SIZES.iter().map(|&n| canned::chain(n, true)).collect();
    let trees: Vec<Model> = TREE_DEPTHS.iter().map(|&d| canned::binary_tree(d)).collect();
    let count = |m: &Model| -> Result<(f64, OpCount)> {
        let mut h = crba(m, &sample_state(m).0)?;
        let mut ops = OpCount::default();
        ltdl(&mut h, &m.dof_parent, &mut ops)?;
        Ok((m.nv as f64, ops))
    };
    let mut chain_ops = Vec::new();
    for m in &chains {
        let (n, o) = count(m)?;
        chain_ops.push((n, o.madd as f64));
    }
    let mut tree_ops = Vec::new();
    for m in &trees {
        let (n, o) = count(m)?;
        tree_ops.push((n, o.madd as f64));
    }
    // a dense Cholesky of the trees' H ignores the pattern: the chain's count at the trees' sizes
    let dense: Vec<(f64, f64)> = trees
        .iter()
        .map(|m| (m.nv as f64, dense_cholesky_madds(m.nv) as f64))
        .collect();
    // n d^2 / 2 with d = log2(n + 1), the depth of a balanced binary tree of n bodies
    let nd2: Vec<(f64, f64)> = trees
        .iter()
        .map(|m| {
            let n = m.nv as f64;
            let d = (n + 1.0).log2();
            (n, 0.5 * n * d * d)
        })
        .collect();
    let path = dir.join("sparse_ops.svg");
    Chart::new(
        "Operations of L^T D L: chains cost as much as dense, trees far less",
        "number of dofs n",
        "multiply-adds",
    )
    .log(true, true)
    .ranges(Some((1.0, 400.0)), Some((0.3, 3e8)))
    .with(Series::line_points("LTDL on a chain (counted)", chain_ops.clone()))
    .with(Series::line_points(
        "LTDL on a balanced binary tree (counted)",
        tree_ops.clone(),
    ))
    .with(Series::points("dense Cholesky of the tree's H: (n^3 - n)/6", dense))
    .with(Series::dashed("n d^2 / 2, d = log2(n + 1)", nd2))
    .save_svg(&path)?;
    out.push(path);
    let (nl, cl) = chain_ops[chain_ops.len() - 1];
    let (nt, tl) = tree_ops[tree_ops.len() - 1];
    println!(
        "  multiply-adds: chain n = {nl}: {cl:.0}; binary tree n = {nt}: {tl:.0} ({:.0}x fewer than dense)",
        dense_cholesky_madds(nt as usize) as f64 / tl
    );

    let time_ltdl = |m: &Model| -> Result<(f64, f64)> {
        let h = crba(m, &sample_state(m).0)?;
        let mut ld = h.clone();
        let mut bad = None;
        let t = seconds_per_call(|| {
            ld.copy_from(&h);
            if let Err(e) = ltdl(&mut ld, &m.dof_parent, &mut NoCount) {
                bad = Some(e);
            }
            black_box(&ld);
        });
        match bad {
            Some(e) => Err(e),
            None => Ok((m.nv as f64, 1e6 * t)),
        }
    };
    // Both sparse codes work in place on storage made once, and both start each call by copying
    // H (or qM) into it, as MuJoCo's mj_factorM copies qM into qLD; neither counts operations.
    let time_factor_i = |m: &Model| -> Result<(f64, f64)> {
        let lay = m.mj_layout();
        let qm = lay.from_dense(&crba(m, &sample_state(m).0)?);
        let (mut qld, mut diag_inv) = (qm.clone(), vec![0.0; m.nv]);
        let mut bad = None;
        let t = seconds_per_call(|| {
            qld.copy_from_slice(&qm);
            let r = factor_i_in_place(
                lay,
                &mut qld,
                &mut diag_inv,
                PivotPolicy::Error,
                &mut Vec::new(),
                &mut NoCount,
            );
            if let Err(e) = r {
                bad = Some(e);
            }
            black_box(&qld);
        });
        match bad {
            Some(e) => Err(e),
            None => Ok((m.nv as f64, 1e6 * t)),
        }
    };
    let time_dense = |m: &Model| -> Result<(f64, f64)> {
        let h = crba(m, &sample_state(m).0)?;
        let t = seconds_per_call(|| {
            black_box(nalgebra::Cholesky::new(h.clone()));
        });
        Ok((m.nv as f64, 1e6 * t))
    };
    let mut series: Vec<(&str, Vec<(f64, f64)>)> = vec![
        ("LTDL, chain", Vec::new()),
        ("factor_i (legacy layout), chain", Vec::new()),
        ("LTDL, binary tree", Vec::new()),
        ("factor_i (legacy layout), binary tree", Vec::new()),
        ("dense Cholesky (nalgebra), binary tree", Vec::new()),
    ];
    for m in &chains {
        series[0].1.push(time_ltdl(m)?);
        series[1].1.push(time_factor_i(m)?);
    }
    for m in &trees {
        series[2].1.push(time_ltdl(m)?);
        series[3].1.push(time_factor_i(m)?);
        series[4].1.push(time_dense(m)?);
    }
    let xs = [2.0, 300.0];
    let (x0, y0) = series[0].1[series[0].1.len() - 1];
    let (x1, y1) = series[2].1[series[2].1.len() - 1];
    let mut chart = Chart::new(
        "Measured factorization time (release build)",
        "number of dofs n",
        "time per factorization (microseconds)",
    )
    .log(true, true);
    for (label, pts) in &series {
        chart = chart.with(Series::line_points(label, pts.clone()));
    }
    let path = dir.join("sparse_time.svg");
    chart
        .with(slope_line("slope 3 through the chain", &xs, x0, y0, 3.0))
        .with(slope_line("slope 1 through the tree", &xs, x1, y1, 1.0))
        .save_svg(&path)?;
    out.push(path);
    let last = |k: usize| series[k].1[series[k].1.len() - 1];
    println!(
        "  time at n = {}: chain: LTDL {:.1} us, factor_i {:.1} us; binary tree: LTDL {:.1} us, factor_i {:.1} us, dense Cholesky {:.1} us",
        last(0).0,
        last(0).1,
        last(1).1,
        last(2).1,
        last(3).1,
        last(4).1
    );
    Ok(out)
}
