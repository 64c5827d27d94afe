//! Figures and report of the chapter "Solving the constraint equations, sparsity and ladders"
//! (Featherstone 8.8-8.13).
//!
//! Drawings, made from the library's own models at their own configurations (so they cannot
//! disagree with the code): `loops2_draw_four_bar.svg`, `loops2_draw_figure_8_3.svg`,
//! `loops2_draw_four_loops.svg`, `loops2_draw_parallelogram.svg` (both assembly branches at one
//! crank angle, and the folded configuration), `loops2_draw_ladder.svg`.
//!
//! Data figures:
//! - `loops2_clusters_spy.svg`: `K` of the four-loop system in the model's numbering, `K`
//!   renumbered by clusters, and `G` renumbered (8.9);
//! - `loops2_ladder_spy.svg`: the matrix of (8.64) for an 8-rung ladder in the natural and the
//!   banded order, with the fill of `L`;
//! - `loops2_ladder_ops.svg`, `loops2_ladder_time.svg`: operation count and time of the
//!   spanning-tree method and the sparse matrix method against the number of rungs (log-log);
//! - `loops2_gamma_drift.svg`: loop-closure error of the figure 8.3 mechanism simulated in `y`
//!   and in `q` coordinates.

use super::ch05::{seconds_per_call, slope_line};
use crate::dynamics::crba;
use crate::error::Result;
use crate::kinematics::forward_kinematics;
use crate::loops::{
    bias_minus_active, forward_dynamics, loop_clusters, loop_constraints, null_space_clustered, simulate,
    simulate_gamma, spanning_tree_counted, Figure83Closure, LoopClosure, Method, Ordering, PivotTol, SimulateOptions,
    SparseMethod, LOOP_ERROR,
};
use crate::model::loop_models::{four_loops, ladder, parallelogram, parallelogram_branches};
use crate::model::mechanisms::{figure_8_3, four_bar};
use crate::model::Model;
use crate::plot::{Chart, Series, Spy, SpyPanel};
use crate::sparse::etree::{etree, symbolic};
use crate::sparse::OpCount;
use crate::spatial::Vec3;
use nalgebra::{DMatrix, DVector};
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// The line segments that draw a model at `q`, projected on the axes `(ax, ay)`: for every body,
/// from its joint to each child's joint, to each loop-joint frame on it, and (for a body with
/// neither) to twice its centre of mass, the far end of a uniform rod. Returns
/// `(segments per body, tree joint positions, loop joint positions)`.
pub type Drawing = (Vec<Vec<(f64, f64)>>, Vec<(f64, f64)>, Vec<(f64, f64)>);

// ANCHOR: draw_model
/// [`Drawing`] of `model` at configuration `q`, seen along the axis not in `(ax, ay)`.
pub fn draw_model(model: &Model, q: &[f64], ax: usize, ay: usize) -> Result<Drawing> {
    let kin = forward_kinematics(model, q)?;
    let p2 = |v: Vec3| (v[ax], v[ay]);
    let mut bodies = Vec::with_capacity(model.nb);
    let mut joints = Vec::with_capacity(model.nb);
    for i in 1..=model.nb {
        let origin = kin.point(i, &Vec3::zeros());
        joints.push(p2(origin));
        let mut ends: Vec<Vec3> = (i + 1..=model.nb)
            .filter(|&c| model.lambda[c] == i)
            .map(|c| model.x_tree[c].r)
            .collect();
        for lj in &model.loops {
            if lj.pred == i {
                ends.push(lj.x_p.r);
            }
            if lj.succ == i {
                ends.push(lj.x_s.r);
            }
        }
        if ends.is_empty() {
            ends.push(model.inertia[i].com() * 2.0);
        }
        // a star from the joint: origin -> end -> origin -> next end
        let mut seg = vec![p2(origin)];
        for e in ends {
            seg.push(p2(kin.point(i, &e)));
            seg.push(p2(origin));
        }
        bodies.push(seg);
    }
    let loops = model.loops.iter().map(|lj| p2(kin.point(lj.succ, &lj.x_s.r))).collect();
    Ok((bodies, joints, loops))
}
// ANCHOR_END: draw_model

/// Draws one or more configurations of a model into one chart with equal axis scales
/// (the chart is 800 x 500 pixels).
fn save_drawing(title: &str, axes: (&str, &str), drawings: &[(&str, Drawing)], path: &Path) -> Result<()> {
    let mut chart = Chart::new(title, axes.0, axes.1);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for (label, (bodies, joints, loops)) in drawings {
        chart = chart
            .with(Series::points(&format!("{label}tree joints"), joints.clone()))
            .with(Series::points(&format!("{label}loop joints"), loops.clone()));
        for b in bodies {
            for &(x, y) in b {
                x0 = x0.min(x);
                x1 = x1.max(x);
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
    }
    for (_, (bodies, _, _)) in drawings {
        for b in bodies {
            chart = chart.with(Series::line("", b.clone()));
        }
    }
    // equal scales: the plotting area is about 700 x 400 pixels
    let (cx, cy) = (0.5 * (x0 + x1), 0.5 * (y0 + y1));
    let half_w = (0.5 * (x1 - x0)).max(0.5 * (y1 - y0) * 1.75) * 1.15 + 0.05;
    let half_h = half_w / 1.75;
    chart = chart.ranges(
        Some((cx - half_w, cx + half_w)),
        Some((cy - half_h * 1.3, cy + half_h * 1.3)),
    );
    chart.save_svg(path)
}

/// `(K, K renumbered, G renumbered, cluster of every dof)` (`usize::MAX` for a gap).
pub type ClusterMatrices = (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>, Vec<usize>);

/// `K`, `K` renumbered by clusters and `G` renumbered, of the four-loop system at `qpos0`, with
/// the cluster of every dof (`usize::MAX` for a gap).
pub fn four_loops_matrices() -> Result<ClusterMatrices> {
    let m = four_loops();
    let q = m.qpos0.as_slice();
    let sys = loop_constraints(&m, q, &vec![0.0; m.nv], None)?;
    let c = loop_clusters(&m)?;
    let ns = null_space_clustered(&sys, &c, &PivotTol::default())?;
    let kp = c.permute(&sys.kmat);
    let gp = DMatrix::from_fn(m.nv, ns.g_null.ncols(), |r, col| ns.g_null[(c.col_perm[r], col)]);
    let mut cluster_of = vec![usize::MAX; m.nv];
    for (k, dofs) in c.dofs.iter().enumerate() {
        for &d in dofs {
            cluster_of[d] = k;
        }
    }
    Ok((sys.kmat, kp, gp, cluster_of))
}

pub use crate::model::loop_models::sample_state as ladder_state;

/// Operations of the sparse matrix method (banded order) on an `n`-rung ladder: factor and solve.
pub fn sparse_ops(n: usize) -> Result<OpCount> {
    let m = ladder(n, 0.5, 0.3)?;
    let (q, qd) = ladder_state(&m);
    let mut sm = SparseMethod::new(&m, Ordering::Banded)?;
    sm.assemble(&m, &q, &qd, &vec![0.0; m.nv], None, None);
    let mut ops = OpCount::default();
    sm.solve_in_place(&mut ops)?;
    Ok(ops)
}

/// Operations of the spanning-tree method ([`spanning_tree_counted`]) on an `n`-rung ladder.
pub fn tree_ops(n: usize) -> Result<OpCount> {
    let m = ladder(n, 0.5, 0.3)?;
    let (q, qd) = ladder_state(&m);
    let s = loop_constraints(&m, &q, &qd, None)?;
    let h = crba(&m, &q)?;
    let tau_p = -bias_minus_active(&m, &q, &qd, None)?;
    let mut ops = OpCount::default();
    spanning_tree_counted(&h, &m.dof_parent, &tau_p, &s.kmat, &s.rhs(), &mut ops)?;
    Ok(ops)
}

fn total(o: &OpCount) -> f64 {
    (o.madd + o.div + o.sqrt) as f64
}

/// Least-squares slope of `log y` against `log x`.
pub fn log_slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x.ln(), b + y.ln()));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x.ln() - mx) * (y.ln() - my), b + (x.ln() - mx).powi(2))
    });
    num / den
}

/// Rung counts of the cost figures.
pub const SPARSE_RUNGS: [usize; 7] = [10, 30, 100, 300, 1000, 3000, 10000];
/// Rung counts of the spanning-tree method in the cost figures.
pub const TREE_RUNGS: [usize; 6] = [5, 10, 20, 50, 100, 200];

/// Writes the chapter's figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Solving the constraint equations, sparsity and ladders (Featherstone 8.8-8.13)");
    // drawings
    let path = dir.join("loops2_draw_four_bar.svg");
    let m = four_bar();
    save_drawing(
        "The four-bar at q = 0 (x-z plane)",
        ("x (m)", "z (m)"),
        &[("", draw_model(&m, m.qpos0.as_slice(), 0, 2)?)],
        &path,
    )?;
    out.push(path);
    let path = dir.join("loops2_draw_figure_8_3.svg");
    let m = figure_8_3(1.0, 0.6)?;
    let cl = Figure83Closure { l1: 1.0, l2: 0.6 };
    save_drawing(
        "Figure 8.3 mechanism at q = gamma(1, 0.5) (x-y plane)",
        ("x (m)", "y (m)"),
        &[("", draw_model(&m, cl.gamma(&[1.0, 0.5])?.as_slice(), 0, 1)?)],
        &path,
    )?;
    out.push(path);
    let path = dir.join("loops2_draw_four_loops.svg");
    let m = four_loops();
    save_drawing(
        "Four loops in three clusters (figure 8.1), q = 0",
        ("x (m)", "z (m)"),
        &[("", draw_model(&m, m.qpos0.as_slice(), 0, 2)?)],
        &path,
    )?;
    out.push(path);
    let path = dir.join("loops2_draw_parallelogram.svg");
    let (a, b) = (0.4, 0.25);
    let m = parallelogram(a, b)?;
    let [par, crossed] = parallelogram_branches(a, b, 0.6);
    let flat = parallelogram_branches(a, b, std::f64::consts::FRAC_PI_2)[0];
    save_drawing(
        "Parallelogram four-bar: two closures at crank 0.6 rad, and folded flat",
        ("x (m)", "z (m)"),
        &[
            ("parallel: ", draw_model(&m, &par, 0, 2)?),
            ("crossed: ", draw_model(&m, &crossed, 0, 2)?),
            ("flat: ", draw_model(&m, &flat, 0, 2)?),
        ],
        &path,
    )?;
    out.push(path);
    let path = dir.join("loops2_draw_ladder.svg");
    let m = ladder(6, 0.5, 0.3)?;
    let (q, _) = ladder_state(&m);
    let q = crate::loops::assemble(&m, &q)?;
    save_drawing(
        "A 6-rung ladder, swaying, every loop closed (x-y plane)",
        ("x (m)", "y (m)"),
        &[("", draw_model(&m, q.as_slice(), 0, 1)?)],
        &path,
    )?;
    out.push(path);

    // clusters
    let (k, kp, gp, cluster_of) = four_loops_matrices()?;
    let c = loop_clusters(&four_loops())?;
    println!(
        "  four-loop system: {} clusters, loops {:?}, dofs {:?}, gaps {:?}",
        c.loops.len(),
        c.loops,
        c.dofs,
        c.free_dofs
    );
    let class = |col_dof: usize| {
        if cluster_of[col_dof] == usize::MAX {
            3
        } else {
            cluster_of[col_dof]
        }
    };
    let cells = |mat: &DMatrix<f64>, dof_of_col: &dyn Fn(usize) -> usize| -> Vec<(usize, usize, usize)> {
        let mut v = Vec::new();
        for r in 0..mat.nrows() {
            for col in 0..mat.ncols() {
                if mat[(r, col)].abs() > 1e-12 {
                    v.push((r, col, class(dof_of_col(col))));
                }
            }
        }
        v
    };
    // G's column j belongs to the cluster of its identity row
    let g_dof = |col: usize| {
        (0..gp.nrows())
            .find(|&r| gp[(r, col)] == 1.0)
            .map(|r| c.col_perm[r])
            .unwrap_or(0)
    };
    let gcells: Vec<(usize, usize, usize)> = {
        let mut v = Vec::new();
        for r in 0..gp.nrows() {
            for col in 0..gp.ncols() {
                if gp[(r, col)].abs() > 1e-12 {
                    v.push((r, col, class(g_dof(col))));
                }
            }
        }
        v
    };
    let path = dir.join("loops2_clusters_spy.svg");
    Spy {
        title: "Four loops, three clusters: K, K renumbered, G renumbered".into(),
        x_label: "column".into(),
        y_label: "row".into(),
        classes: vec![
            "cluster A (loops A1, A2)".into(),
            "cluster B".into(),
            "cluster C".into(),
            "gap (joint in no loop)".into(),
        ],
        panels: vec![
            SpyPanel {
                title: "K, model numbering".into(),
                rows: k.nrows(),
                cols: k.ncols(),
                cells: cells(&k, &|col| col),
            },
            SpyPanel {
                title: "K, clusters consecutive".into(),
                rows: kp.nrows(),
                cols: kp.ncols(),
                cells: cells(&kp, &|col| c.col_perm[col]),
            },
            SpyPanel {
                title: "G, clusters consecutive".into(),
                rows: gp.nrows(),
                cols: gp.ncols(),
                cells: gcells,
            },
        ],
    }
    .save_svg(&path)?;
    out.push(path);

    // the ladder's matrix before and after the banded permutation
    let m = ladder(8, 0.5, 0.3)?;
    let (q, qd) = ladder_state(&m);
    let mut panels = Vec::new();
    for (name, ord) in [("natural order", Ordering::Natural), ("banded order", Ordering::Banded)] {
        let mut sm = SparseMethod::new(&m, ord)?;
        sm.assemble(&m, &q, &qd, &vec![0.0; m.nv], None, None);
        let a = sm.dense_matrix();
        let n = a.nrows();
        // scalar pattern of L (structure, not values): symbolic factorization of A's pattern
        let adj: Vec<Vec<usize>> = (0..n)
            .map(|i| (0..n).filter(|&j| j != i && a[(i, j)] != 0.0).collect())
            .collect();
        let lpat = symbolic(&adj, &etree(&adj));
        let mut cells = Vec::new();
        for (j, col) in lpat.iter().enumerate() {
            for &i in col {
                let cls = if a[(i, j)] != 0.0 { 1 } else { 2 };
                cells.push((i, j, cls));
                cells.push((j, i, cls));
            }
        }
        for i in 0..n {
            for j in 0..n {
                if a[(i, j)] != 0.0 {
                    let same_block = {
                        let blk = |x: usize| sm.factor.symbolic.offsets.iter().rposition(|&o| o <= x).unwrap_or(0);
                        blk(i) == blk(j)
                    };
                    if same_block {
                        cells.push((i, j, 0));
                    }
                }
            }
        }
        let fill = lpat
            .iter()
            .enumerate()
            .map(|(j, col)| col.iter().filter(|&&i| a[(i, j)] == 0.0).count())
            .sum::<usize>();
        println!("  8-rung ladder, {name}: {n} x {n}, fill of L = {fill} entries");
        panels.push(SpyPanel {
            title: format!("(8.64), {name}: fill {fill}"),
            rows: n,
            cols: n,
            cells,
        });
    }
    let path = dir.join("loops2_ladder_spy.svg");
    Spy {
        title: "8-rung ladder: the matrix of (8.64) and the fill of its factor".into(),
        x_label: "column".into(),
        y_label: "row".into(),
        classes: vec![
            "diagonal blocks (I, 0)".into(),
            "coupling P T".into(),
            "fill in L".into(),
        ],
        panels,
    }
    .save_svg(&path)?;
    out.push(path);

    // operation counts and times
    let mut sp_ops = Vec::new();
    let mut sp_time = Vec::new();
    for &n in &SPARSE_RUNGS {
        sp_ops.push((n as f64, total(&sparse_ops(n)?)));
        let m = ladder(n, 0.5, 0.3)?;
        let (q, qd) = ladder_state(&m);
        let tau = vec![0.0; m.nv];
        let mut sm = SparseMethod::new(&m, Ordering::Banded)?;
        let t = if n >= 3000 {
            let t0 = std::time::Instant::now();
            sm.assemble(&m, &q, &qd, &tau, None, None);
            sm.solve_in_place(&mut OpCount::default())?;
            t0.elapsed().as_secs_f64()
        } else {
            seconds_per_call(|| {
                sm.assemble(&m, &q, &qd, &tau, None, None);
                sm.solve_in_place(&mut OpCount::default())
                    .expect("properly constrained ladder");
                black_box(&sm.rhs);
            })
        };
        sp_time.push((n as f64, t * 1e6));
    }
    let mut tr_ops = Vec::new();
    let mut tr_time = Vec::new();
    for &n in &TREE_RUNGS {
        tr_ops.push((n as f64, total(&tree_ops(n)?)));
        let m = ladder(n, 0.5, 0.3)?;
        let (q, qd) = ladder_state(&m);
        let tau = vec![0.0; m.nv];
        let t = if n >= 100 {
            let t0 = std::time::Instant::now();
            black_box(forward_dynamics(&m, &q, &qd, &tau, None, Method::LambdaFirst, None)?);
            t0.elapsed().as_secs_f64()
        } else {
            seconds_per_call(|| {
                black_box(forward_dynamics(&m, &q, &qd, &tau, None, Method::LambdaFirst, None).expect("valid"));
            })
        };
        tr_time.push((n as f64, t * 1e6));
    }
    let slopes = [
        log_slope(&sp_ops[2..]),
        log_slope(&tr_ops[2..]),
        log_slope(&sp_time[2..]),
        log_slope(&tr_time[2..]),
    ];
    println!(
        "  ladder, log-log slopes (N >= 100 sparse, N >= 20 tree): ops sparse {:.2}, tree {:.2}; time sparse {:.2}, tree {:.2}",
        slopes[0], slopes[1], slopes[2], slopes[3]
    );
    for (n, o) in &sp_ops {
        println!("    sparse N = {n:>6}: {o:>12.0} ops");
    }
    for (n, o) in &tr_ops {
        println!("    tree   N = {n:>6}: {o:>12.0} ops");
    }
    let xs: Vec<f64> = SPARSE_RUNGS.iter().map(|&n| n as f64).collect();
    let path = dir.join("loops2_ladder_ops.svg");
    Chart::new(
        "Ladder: floating-point operations per solve",
        "rungs N",
        "operations (multiply-adds + divisions + roots)",
    )
    .log(true, true)
    .with(Series::line_points("spanning tree (8.5 method 2)", tr_ops.clone()))
    .with(Series::line_points(
        "sparse matrix method, banded (8.64)",
        sp_ops.clone(),
    ))
    .with(slope_line("slope 3", &xs[..4], 20.0, tr_ops[2].1, 3.0))
    .with(slope_line("slope 1", &xs, 100.0, sp_ops[2].1, 1.0))
    .save_svg(&path)?;
    out.push(path);
    let path = dir.join("loops2_ladder_time.svg");
    Chart::new("Ladder: time per forward-dynamics solve", "rungs N", "time (us)")
        .log(true, true)
        .with(Series::line_points(
            "spanning tree (forward_dynamics, method 2)",
            tr_time,
        ))
        .with(Series::line_points(
            "sparse matrix method (assemble + factor + solve)",
            sp_time,
        ))
        .save_svg(&path)?;
    out.push(path);

    // drift: y against q coordinates
    let m = figure_8_3(1.0, 0.6)?;
    let (y0, yd0) = ([1.0, 0.5], [0.0, 0.0]);
    let (h, steps) = (2e-3, 5000);
    let ty = simulate_gamma(&m, &cl, &y0, &yd0, h, steps)?;
    let q0 = cl.gamma(&y0)?;
    let qd0 = cl.g_null(&y0)? * DVector::from_column_slice(&yd0);
    let opts = SimulateOptions {
        method: Method::NullSpace,
        ..SimulateOptions::new(h, steps)
    };
    let tq = simulate(&m, q0.as_slice(), qd0.as_slice(), &opts)?;
    let (err_y, err_q) = (
        ty.signal(LOOP_ERROR).unwrap_or_default(),
        tq.signal(LOOP_ERROR).unwrap_or_default(),
    );
    let floor = 1e-17;
    let pts = |t: &[f64], e: &[f64]| -> Vec<(f64, f64)> {
        t.iter()
            .zip(e)
            .step_by(10)
            .map(|(&t, &e)| (t.max(1e-3), e.max(floor)))
            .collect()
    };
    println!(
        "  figure 8.3, RK4 h = 2 ms, 10 s: max loop error in y coordinates {:.1e}, in q coordinates {:.1e}",
        ty.max_of(LOOP_ERROR),
        tq.max_of(LOOP_ERROR)
    );
    let path = dir.join("loops2_gamma_drift.svg");
    Chart::new(
        "Figure 8.3 mechanism: loop-closure error, y vs q coordinates",
        "time t (s)",
        "|loop-closure error| (m, rad)",
    )
    .log(false, true)
    .with(Series::line(
        "integrate q (method 3, no stabilization)",
        pts(&tq.time, err_q),
    ))
    .with(Series::line("integrate y, q = gamma(y)", pts(&ty.time, err_y)))
    .save_svg(&path)?;
    out.push(path);
    Ok(out)
}
