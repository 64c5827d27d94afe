//! Figures and report of the chapter "Sparse direct solves for SPOOK".
//!
//! - `spook_sparse_spy_chain.svg`, `spook_sparse_spy_tree.svg`, `spook_sparse_spy_ladder.svg`:
//!   the block pattern of the step's matrix (one square per block) with the fill of `L`, in the
//!   natural order (bodies, then joints) and in the minimum-degree order;
//! - `spook_sparse_etree.svg`: the block elimination trees of a tree and of a ladder in the
//!   minimum-degree order, drawn as graphs (root at the top);
//! - `spook_sparse_fill.svg`: multiply-adds of the factorization against the number of bodies
//!   for the three orderings on trees and grids (log-log);
//! - `spook_sparse_time.svg`: measured time of one SPOOK step (the thread's CPU time on Linux)
//!   against the number of bodies (log-log): sparse on chains (10 to 100,000 bodies) and trees (to 10,000), the dense LU and
//!   the dense Schur complement as far as they fit; the slope on chains from 1,000 bodies up is
//!   written to `spook_sparse_slope.md` for the chapter.

use super::ch05::{slope_line, write_snippet};
use super::draw::{canvas, finish, Side, Sketch, INK};
use super::loops2::log_slope;
use crate::error::{Error, Result};
use crate::plot::{Chart, Series, Spy, SpyPanel, PALETTE};
use crate::sparse::etree::{etree, permute_pattern, symbolic};
use crate::sparse::ordering::{fill, order, BlockOrdering};
use crate::spook::sparse::{block_graph, groups_of, BlockGraph, SpookNode};
use crate::spook::{graph_scene, BodyGraph, SpookSolver, SpookSystem, StepSettings, Stepper};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The step of the chapter's scenes (s).
pub const H: f64 = 0.01;

/// The block graph of a scene (natural order): nodes, sizes, neighbours.
pub fn scene_graph(sys: &SpookSystem) -> Result<BlockGraph> {
    let mut st = Stepper::new(sys, H, StepSettings::default())?;
    st.assemble(sys);
    Ok(block_graph(st.nbody(), &groups_of(&st.rows)))
}

/// Spy cells of the block pattern of `A` and of the fill of `L` in the order `perm`: class 0
/// diagonal blocks, 1 body-joint blocks of `A` (both triangles), 2 fill (lower triangle).
pub fn block_spy_cells(adj: &[Vec<usize>], perm: &[usize]) -> Vec<(usize, usize, usize)> {
    let pa = permute_pattern(adj, perm);
    let pattern = symbolic(&pa, &etree(&pa));
    let mut cells = Vec::new();
    for (j, col) in pattern.iter().enumerate() {
        cells.push((j, j, 0));
        for &i in &pa[j] {
            cells.push((i, j, 1));
        }
        for &i in col {
            if !pa[j].contains(&i) {
                cells.push((i, j, 2));
            }
        }
    }
    cells
}

fn spy_figure(dir: &Path, kind: BodyGraph, n: usize) -> Result<PathBuf> {
    let sys = graph_scene(kind, n, 7, 1e-6, 2.0 * H);
    let (_, sizes, adj) = scene_graph(&sys)?;
    let mut panels = Vec::new();
    for m in [BlockOrdering::Natural, BlockOrdering::MinimumDegree] {
        let perm = order(m, &adj, &sizes)?;
        let f = fill(&adj, &sizes, &perm)?;
        panels.push(SpyPanel {
            title: format!("{}: {} fill blocks", m.name(), f.fill_blocks),
            rows: adj.len(),
            cols: adj.len(),
            cells: block_spy_cells(&adj, &perm),
        });
    }
    let path = dir.join(format!("spook_sparse_spy_{}.svg", kind.name()));
    Spy {
        title: format!(
            "A {} of {} bodies: blocks of [[M, G^T], [G, -Σ]] and the fill of L",
            kind.name(),
            sys.bodies.len()
        ),
        x_label: "block column".into(),
        y_label: "block row".into(),
        classes: vec![
            "diagonal block (M_i or -Σ_i)".into(),
            "G block (joint on body)".into(),
            "fill in L".into(),
        ],
        panels,
    }
    .save_svg(&path)?;
    Ok(path)
}

/// Positions of the nodes of a forest for drawing: depth from the root (`y`) and, for `x`, leaves
/// numbered left to right in postorder with every parent centred over its children.
pub fn tree_layout(parent: &[Option<usize>]) -> Vec<(f64, f64)> {
    let n = parent.len();
    let mut children = vec![Vec::new(); n];
    for (j, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(j);
        }
    }
    let mut depth = vec![0usize; n];
    for j in (0..n).rev() {
        depth[j] = parent[j].map_or(0, |p| depth[p] + 1);
    }
    let mut x = vec![0.0; n];
    let mut next_leaf = 0.0;
    // parents have larger indices than children: visit in postorder
    for &j in &crate::sparse::etree::postorder(parent) {
        if children[j].is_empty() {
            x[j] = next_leaf;
            next_leaf += 1.0;
        } else {
            let s: f64 = children[j].iter().map(|&c| x[c]).sum();
            x[j] = s / children[j].len() as f64;
        }
    }
    (0..n).map(|j| (x[j], -(depth[j] as f64))).collect()
}

fn etree_figure(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("spook_sparse_etree.svg");
    let cases = [(BodyGraph::Tree, 9), (BodyGraph::Ladder, 8)];
    let mut trees = Vec::new();
    for (kind, n) in cases {
        let sys = graph_scene(kind, n, 7, 1e-6, 2.0 * H);
        let (nodes, sizes, adj) = scene_graph(&sys)?;
        let perm = order(BlockOrdering::MinimumDegree, &adj, &sizes)?;
        let pa = permute_pattern(&adj, &perm);
        let parent = etree(&pa);
        // check: parent(j) is the first block below the diagonal in column j of L
        let pattern = symbolic(&pa, &parent);
        if let Some(j) = (0..parent.len()).find(|&j| parent[j] != pattern[j].first().copied()) {
            return Err(Error::Disagree {
                what: format!("elimination tree of the {} at block {j}", kind.name()),
                by: 1.0,
            });
        }
        let labels: Vec<String> = perm
            .iter()
            .map(|&o| match nodes[o] {
                SpookNode::Body(i) => format!("b{i}"),
                SpookNode::Group(g) => format!("j{g}"),
            })
            .collect();
        let is_body: Vec<bool> = perm.iter().map(|&o| matches!(nodes[o], SpookNode::Body(_))).collect();
        trees.push((kind, parent, labels, is_body));
    }
    {
        let root = canvas(
            &path,
            1100,
            560,
            "Elimination trees in the minimum-degree order: parent(j) = first nonzero block below the diagonal of L",
        )?;
        let panels = root.split_evenly((1, 2));
        for (area, (kind, parent, labels, is_body)) in panels.into_iter().zip(&trees) {
            let pos = tree_layout(parent);
            let xmax = pos.iter().map(|p| p.0).fold(0.0, f64::max);
            let ymin = pos.iter().map(|p| p.1).fold(0.0, f64::min);
            let s = Sketch::new(area, (-0.8, xmax + 0.8), (ymin - 0.8, 1.0), 0.02);
            s.label(
                ((xmax) * 0.5, 0.7),
                &format!("{} ({} blocks; b: body, j: joint)", kind.name(), parent.len()),
                Side::Centre,
                15,
                INK,
            )?;
            for (j, p) in parent.iter().enumerate() {
                if let Some(p) = p {
                    s.line(&[pos[j], pos[*p]], INK, 1)?;
                }
            }
            for (j, &(x, y)) in pos.iter().enumerate() {
                let c = if is_body[j] { PALETTE[0] } else { PALETTE[1] };
                s.dot((x, y), 13, c)?;
                s.label((x, y), &format!("{j}"), Side::Centre, 12, plotters::style::WHITE)?;
                s.label((x + 0.18, y - 0.22), &labels[j], Side::Right, 11, INK)?;
            }
        }
        finish(&root)?;
    }
    Ok(path)
}

/// Body counts of the fill figure.
pub const FILL_BODIES: [usize; 6] = [16, 49, 144, 400, 1024, 2500];

fn fill_figure(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("spook_sparse_fill.svg");
    let mut chart = Chart::new(
        "Cost of the factorization by ordering (multiply-adds)",
        "number of bodies n",
        "multiply-adds of L D L^T",
    )
    .log(true, true);
    for kind in [BodyGraph::Tree, BodyGraph::Grid] {
        for m in BlockOrdering::ALL {
            let mut pts = Vec::new();
            for &n in &FILL_BODIES {
                let sys = graph_scene(kind, n, 3, 1e-6, 2.0 * H);
                let (_, sizes, adj) = scene_graph(&sys)?;
                let f = fill(&adj, &sizes, &order(m, &adj, &sizes)?)?;
                pts.push((sys.bodies.len() as f64, f.madds as f64));
            }
            let label = format!("{}, {}", kind.name(), m.name());
            chart = chart.with(match m {
                BlockOrdering::Natural => Series::dashed(&label, pts),
                BlockOrdering::MinimumDegree => Series::line_points(&label, pts),
                BlockOrdering::NestedDissection => Series::points(&label, pts),
            });
        }
    }
    chart.save_svg(&path)?;
    Ok(path)
}

/// The CPU time this thread has run (s): POSIX `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, to the
/// nanosecond; `None` where it is not available. On a machine shared with other work the wall
/// clock counts their time too; the CPU time counts only ours.
pub fn thread_cpu_seconds() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes one timespec through a valid pointer and reads nothing else
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        (rc == 0).then_some(ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// A stopwatch on the thread's CPU time where Linux offers it ([`thread_cpu_seconds`]), else on
/// the wall clock.
fn stopwatch() -> impl Fn() -> f64 {
    let wall = Instant::now();
    let cpu = thread_cpu_seconds();
    move || match (cpu, thread_cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => wall.elapsed().as_secs_f64(),
    }
}

/// Seconds per SPOOK step of `sys` with `solver`: one step first (it builds the ordering and
/// the symbolic factorization), then the best of `reps` timed steps, each timed on the thread's
/// CPU time where available (see [`thread_cpu_seconds`]). Steps shorter than 1 ms are repeated
/// and averaged within each timing.
///
/// The system runs without gravity: a long chain loaded by gravity at `h = 0.01` is beyond
/// SPOOK's stability limit (the SPOOK chapter's heavy chain) and the solve's cost does not depend
/// on the load.
pub fn step_seconds(sys: &SpookSystem, solver: SpookSolver, reps: usize) -> Result<f64> {
    let mut sys = sys.clone();
    sys.gravity = crate::spatial::Vec3::zeros();
    let settings = StepSettings {
        solver,
        ..Default::default()
    };
    let mut st = Stepper::new(&sys, H, settings)?;
    st.step(&mut sys)?;
    let mut calls = 1usize;
    loop {
        let t = stopwatch();
        for _ in 0..calls {
            st.step(&mut sys)?;
        }
        if t() > 1e-3 || calls >= 1 << 16 {
            break;
        }
        calls *= 4;
    }
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let t = stopwatch();
        for _ in 0..calls {
            st.step(&mut sys)?;
        }
        best = best.min(t() / calls as f64);
    }
    Ok(best)
}

/// Body counts of the timing figure: chains.
pub const CHAIN_BODIES: [usize; 9] = [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000];
/// Body counts of the timing figure: trees.
pub const TREE_BODIES: [usize; 7] = [10, 30, 100, 300, 1000, 3000, 10000];
/// Body counts of the timing figure: dense solves.
pub const DENSE_BODIES: [usize; 4] = [10, 30, 60, 100];

/// Repetitions (best of) for a system of `n` bodies: more for small, fast ones.
fn reps(n: usize) -> usize {
    if n <= 1000 {
        5
    } else if n <= 10000 {
        3
    } else {
        2
    }
}

/// Labelled series of `(bodies, seconds)`.
pub type Timings = Vec<(String, Vec<(f64, f64)>)>;

/// The measured step times: `(label, points (n, seconds))` for the sparse solve on chains and
/// trees and the dense LU and Schur solves on chains.
pub fn timings() -> Result<Timings> {
    let mut out = Vec::new();
    let mut chain = Vec::new();
    for &n in &CHAIN_BODIES {
        let sys = graph_scene(BodyGraph::Chain, n, 1, 1e-8, 2.0 * H);
        chain.push((n as f64, step_seconds(&sys, SpookSolver::Sparse, reps(n))?));
    }
    out.push(("chain, sparse (minimum degree)".to_string(), chain));
    let mut tree = Vec::new();
    for &n in &TREE_BODIES {
        let sys = graph_scene(BodyGraph::Tree, n, 1, 1e-8, 2.0 * H);
        tree.push((n as f64, step_seconds(&sys, SpookSolver::Sparse, reps(n))?));
    }
    out.push(("tree, sparse (minimum degree)".to_string(), tree));
    for (name, solver) in [("dense LU", SpookSolver::Direct), ("dense Schur", SpookSolver::Schur)] {
        let mut pts = Vec::new();
        for &n in &DENSE_BODIES {
            let sys = graph_scene(BodyGraph::Chain, n, 1, 1e-8, 2.0 * H);
            pts.push((n as f64, step_seconds(&sys, solver, 2)?));
        }
        out.push((format!("chain, {name}"), pts));
    }
    Ok(out)
}

/// The least-squares log-log slope of the chain's step time from 1,000 bodies up.
pub fn chain_slope(points: &[(f64, f64)]) -> f64 {
    let big: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.0 >= 1000.0).collect();
    log_slope(&big)
}

fn time_figure(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("spook_sparse_time.svg");
    let series = timings()?;
    let chain = &series[0].1;
    let slope = chain_slope(chain);
    let at = |n: f64| chain.iter().find(|p| p.0 == n).map_or(f64::NAN, |p| p.1);
    println!(
        "  SPOOK step, sparse, chain: 1,000 bodies {:.2} ms, 100,000 bodies {:.1} ms; slope from 1,000 up {slope:.3}",
        1e3 * at(1000.0),
        1e3 * at(100000.0)
    );
    for (label, pts) in &series {
        println!(
            "    {label}: {}",
            pts.iter()
                .map(|(n, t)| format!("{n:.0}: {:.3} ms", 1e3 * t))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    write_snippet(
        dir,
        "spook_sparse_slope.md",
        &format!(
            "{slope:.2} (a step of the 100,000-body chain took {:.0} ms, of the 1,000-body chain {:.2} ms)",
            1e3 * at(100000.0),
            1e3 * at(1000.0)
        ),
    )?;
    let xs: Vec<f64> = vec![10.0, 100000.0];
    let mut chart = Chart::new(
        "Time of one SPOOK step (sparse direct solve vs dense)",
        "number of bodies n",
        if thread_cpu_seconds().is_some() {
            "CPU seconds per step"
        } else {
            "seconds per step"
        },
    )
    .log(true, true);
    for (k, (label, pts)) in series.iter().enumerate() {
        chart = chart.with(if k < 2 {
            Series::line_points(label, pts.clone())
        } else {
            Series::points(label, pts.clone())
        });
    }
    let (x0, y0) = (100000.0, at(100000.0));
    chart = chart.with(slope_line("slope 1 (linear)", &xs, x0, y0, 1.0));
    chart.save_svg(&path)?;
    Ok(path)
}

/// Writes the chapter's figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![
        spy_figure(dir, BodyGraph::Chain, 8)?,
        spy_figure(dir, BodyGraph::Tree, 10)?,
        spy_figure(dir, BodyGraph::Ladder, 8)?,
        etree_figure(dir)?,
        fill_figure(dir)?,
    ];
    let t = Instant::now();
    out.push(time_figure(dir)?);
    println!("  (timings took {:.1} s)", t.elapsed().as_secs_f64());
    Ok(out)
}
