//! Figures and report of the chapter "The composite-rigid-body algorithm" (Featherstone 6.1-6.3).
//!
//! - `ch06_sparsity.svg`: the nonzero entries of H computed by CRBA for a balanced binary tree
//!   of 15 bodies beside a chain of 15 bodies (branch-induced sparsity: `H_ij != 0` only when
//!   body i is an ancestor of body j or the reverse).
//! - `ch06_cost.svg`: measured time of CRBA against the number of bodies, for chains (O(n^2))
//!   and balanced trees (O(n log n)), beside the O(n^2) method of section 6.1 that builds H
//!   column by column with n calls of RNEA.

use super::ch05::{sample_state, seconds_per_call, slope_line, CHAIN_SIZES, TREE_DEPTHS};
use crate::dynamics::{crba, crba_with, rnea_with, Workspace};
use crate::error::Result;
use crate::kinematics::supports;
use crate::model::{canned, Model};
use crate::plot::{Chart, Series, Spy, SpyPanel};
use crate::spatial::Vec3;
use nalgebra::DMatrix;
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// `H` by the method of Featherstone 6.1: with gravity switched off and `qdot = 0`, the bias
/// force vanishes and `ID(q, 0, e_j)` is column j of H, so n calls of RNEA give all of H.
/// `model` must already have zero gravity (see [`without_gravity`]); `ws`, `col` and `qdd` are
/// scratch space (`col` and `qdd` of length nv).
pub fn h_by_rnea_columns(
    model: &Model,
    ws: &mut Workspace,
    q: &[f64],
    h: &mut DMatrix<f64>,
    col: &mut [f64],
    qdd: &mut [f64],
) {
    let qd = vec![0.0; model.nv];
    qdd.fill(0.0);
    for j in 0..model.nv {
        qdd[j] = 1.0;
        rnea_with(model, ws, q, &qd, qdd, None, col);
        h.column_mut(j).copy_from_slice(col);
        qdd[j] = 0.0;
    }
}

/// A copy of `model` with gravity switched off.
pub fn without_gravity(model: &Model) -> Model {
    let mut m = model.clone();
    m.opt.gravity = Vec3::zeros();
    m
}

/// The entries `(i, j)` (0-based dofs) where `H` is not zero, with `|H_ij| > 1e-12 max|H|`.
pub fn nonzeros(h: &DMatrix<f64>) -> Vec<(usize, usize)> {
    let scale = h.amax().max(f64::MIN_POSITIVE);
    let mut out = Vec::new();
    for i in 0..h.nrows() {
        for j in 0..h.ncols() {
            if h[(i, j)].abs() > 1e-12 * scale {
                out.push((i, j));
            }
        }
    }
    out
}

/// The number of entries of H that branch-induced sparsity allows for a model of 1-dof joints:
/// the pairs (i, j) with one body supporting the other, i.e. `sum_i (2 d_i - 1)` with `d_i` the
/// depth of body i (the number of bodies on its path to the base, itself included).
pub fn allowed_entries(model: &Model) -> usize {
    let mut count = 0;
    for i in 1..=model.nb {
        for j in 1..=model.nb {
            if supports(model, i, j) || supports(model, j, i) {
                count += 1;
            }
        }
    }
    count
}

/// One panel of the sparsity figure: CRBA's H at a generic state, its entries classed as
/// diagonal (0), nonzero off-diagonal (1), or allowed by the parent array but zero for this
/// particular geometry (2). Returns the panel and the number of nonzeros.
fn spy_panel(model: &Model, title: &str) -> Result<(SpyPanel, usize)> {
    let (q, _, _) = sample_state(model);
    let h = crba(model, &q)?;
    let nz = nonzeros(&h);
    let mut cells: Vec<(usize, usize, usize)> = nz.iter().map(|&(i, j)| (i, j, if i == j { 0 } else { 1 })).collect();
    for i in 1..=model.nb {
        for j in 1..=model.nb {
            let (di, dj) = (model.v_adr[i], model.v_adr[j]);
            if (supports(model, i, j) || supports(model, j, i)) && !nz.contains(&(di, dj)) {
                cells.push((di, dj, 2));
            }
        }
    }
    let panel = SpyPanel {
        title: title.into(),
        rows: model.nv,
        cols: model.nv,
        cells,
    };
    Ok((panel, nz.len()))
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Chapter 6, the composite-rigid-body algorithm (Featherstone table 6.2)");

    // Figure 1: branch-induced sparsity, tree beside chain.
    let tree = canned::binary_tree(4);
    let chain = canned::chain(15, true);
    let mut panels = Vec::new();
    for (model, title) in [
        (&tree, "binary tree, 15 bodies (depth 4)"),
        (&chain, "chain, 15 bodies"),
    ] {
        let (panel, nnz) = spy_panel(model, title)?;
        println!(
            "  {}: {} bodies, H has {} nonzeros of {} ({} allowed by the parent array)",
            model.name,
            model.nb,
            nnz,
            model.nv * model.nv,
            allowed_entries(model)
        );
        panels.push(panel);
    }
    let path = dir.join("ch06_sparsity.svg");
    Spy {
        title: "Nonzeros of H computed by CRBA".into(),
        x_label: "column j (dof index)".into(),
        y_label: "row i (dof index)".into(),
        classes: vec![
            "diagonal H_ii".into(),
            "nonzero H_ij".into(),
            "allowed by lambda, zero for this geometry".into(),
        ],
        panels,
    }
    .save_svg(&path)?;
    out.push(path);

    // Figure 3: cost of CRBA vs H from n RNEA calls.
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut ratios = Vec::new(); // column method / CRBA at the largest size: chain, then tree
    let models: Vec<(&str, Vec<Model>)> = vec![
        ("chain", CHAIN_SIZES.iter().map(|&n| canned::chain(n, true)).collect()),
        ("tree", TREE_DEPTHS.iter().map(|&d| canned::binary_tree(d)).collect()),
    ];
    for (kind, list) in &models {
        let mut crba_pts = Vec::new();
        let mut cols_pts = Vec::new();
        for m in list {
            let (q, _, _) = sample_state(m);
            let mut ws = Workspace::new(m);
            let mut h = DMatrix::zeros(m.nv, m.nv);
            crba_pts.push((
                m.nb as f64,
                1e6 * seconds_per_call(|| {
                    crba_with(m, &mut ws, &q, &mut h);
                    black_box(&h);
                }),
            ));
            let m0 = without_gravity(m);
            let (mut col, mut qdd) = (vec![0.0; m.nv], vec![0.0; m.nv]);
            cols_pts.push((
                m.nb as f64,
                1e6 * seconds_per_call(|| {
                    h_by_rnea_columns(&m0, &mut ws, &q, &mut h, &mut col, &mut qdd);
                    black_box(&h);
                }),
            ));
        }
        let last = |p: &[(f64, f64)]| p[p.len() - 1];
        println!(
            "  {kind}, n = {}: CRBA {:.1} us, H from n RNEA calls {:.1} us ({:.0}x)",
            last(&crba_pts).0,
            last(&crba_pts).1,
            last(&cols_pts).1,
            last(&cols_pts).1 / last(&crba_pts).1
        );
        ratios.push(last(&cols_pts).1 / last(&crba_pts).1);
        series.push((format!("CRBA, {kind}"), crba_pts));
        series.push((format!("n RNEA calls (6.1), {kind}"), cols_pts));
    }
    super::ch05::write_snippet(
        dir,
        "ch06_cost.md",
        &format!(
            "{:.0} times longer than CRBA on the chain and {:.0} times longer on the tree",
            ratios[0], ratios[1]
        ),
    )?;
    let xs = [1.0, 256.0];
    let (x0, y0) = series[0].1[series[0].1.len() - 1];
    let (x1, y1) = series[2].1[series[2].1.len() - 1];
    let mut chart = Chart::new(
        "Cost of H: CRBA vs one RNEA call per column",
        "number of bodies n",
        "time per H (microseconds)",
    )
    .log(true, true);
    // order: CRBA chain, CRBA tree, columns chain, columns tree
    for k in [0, 2, 1, 3] {
        chart = chart.with(Series::line_points(&series[k].0, series[k].1.clone()));
    }
    let path = dir.join("ch06_cost.svg");
    chart
        .with(slope_line("slope 2 (O(n^2)) through CRBA, chain", &xs, x0, y0, 2.0))
        .with(slope_line("slope 1 (O(n)) through CRBA, tree", &xs, x1, y1, 1.0))
        .save_svg(&path)?;
    out.push(path);
    out.push(super::schematics::crba_composite(dir)?);
    Ok(out)
}
