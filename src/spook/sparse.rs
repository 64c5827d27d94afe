//! SPOOK's sparse direct solve (Lacoursière's thesis, 2007, ch. 18; book
//! chapter "Sparse direct solves for SPOOK"). The step's system, symmetrized by the unknown
//! `mu = -lambda~`,
//!
//! ```text
//! [ M   G^T    ] [ v_{k+1} ]   [ M v_k + h f_k                        ]
//! [ G   -Sigma ] [   mu    ] = [ Upsilon (G v_k - (4/h) phi_k)        ]
//! ```
//!
//! is quasi-definite when every `Sigma_ii > 0`. Its natural blocks (the thesis, ch. 18) are one
//! node per body (`M_i`, 6 x 6) and one per constraint group (the rows of one joint, `-Sigma_i`),
//! joined by the blocks `G_ij` of the group's rows on its (at most two) bodies: `n + m` nodes
//! whose graph is the mechanism's own body-joint graph. [`SpookSparse`] orders that graph, builds
//! the symbolic factorization once, and then every step assembles the numbers, factors them with
//! the block multifrontal `L D L^T` of [`crate::sparse::multifrontal`] and solves.
//!
//! The test scenes of the chapter ([`graph_scene`]): chains, trees, ladders and grids of bodies.

use super::body::Body;
use super::constraint::{Constraint, ConstraintKind, Frame};
use super::stepper::{Row, RowKind};
use super::system::SpookSystem;
use crate::error::{Error, Result};
use crate::sparse::etree::{interleave, After};
use crate::sparse::ordering::{fill, minimum_degree_with, order, postordered, BlockOrdering, Fill};
use crate::sparse::{BlockSymbolic, Counter, Multifrontal};
use crate::spatial::{Mat3, Vec3};

/// A node of the SPOOK block system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpookNode {
    /// Body `i`: six rows (`nu`, `omega`), diagonal block `M_i = diag(m_i 1, I^s_i)`.
    Body(usize),
    /// Constraint group `g`: the rows of one joint constraint, diagonal block `-Sigma_g`.
    Group(usize),
}

/// One constraint group of the assembled rows: the constraint, its first row in
/// [`super::Stepper::rows`], its number of rows and its bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// Index of the constraint in [`SpookSystem::constraints`].
    pub constraint: usize,
    /// First row.
    pub first: usize,
    /// Number of rows.
    pub rows: usize,
    /// Body `a` (`None`: the world).
    pub a: Option<usize>,
    /// Body `b` (`None`: the world).
    pub b: Option<usize>,
}

/// The constraint groups of a list of bilateral rows: maximal runs of rows of one constraint.
pub fn groups_of(rows: &[Row]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let c = match row.kind {
            RowKind::Joint { constraint, .. } => constraint,
            _ => usize::MAX,
        };
        match out.last_mut() {
            Some(g) if g.constraint == c && g.first + g.rows == r => g.rows += 1,
            _ => out.push(Group {
                constraint: c,
                first: r,
                rows: 1,
                a: row.a.map(|x| x.0),
                b: row.b.map(|x| x.0),
            }),
        }
    }
    out
}

/// A block graph: the nodes, their sizes (rows) and their neighbours.
pub type BlockGraph = (Vec<SpookNode>, Vec<usize>, Vec<Vec<usize>>);

// ANCHOR: block_graph
/// The block graph of a system with `nbody` bodies and the constraint `groups`, in the natural
/// order (bodies `0..nbody`, then the groups): node sizes (6 per body, the row count per group)
/// and the neighbours of every node (a group touches its one or two bodies).
pub fn block_graph(nbody: usize, groups: &[Group]) -> BlockGraph {
    let mut nodes: Vec<SpookNode> = (0..nbody).map(SpookNode::Body).collect();
    let mut sizes = vec![6; nbody];
    let mut adj = vec![Vec::new(); nbody + groups.len()];
    for (g, grp) in groups.iter().enumerate() {
        let node = nbody + g;
        nodes.push(SpookNode::Group(g));
        sizes.push(grp.rows);
        for b in [grp.a, grp.b].into_iter().flatten() {
            if !adj[node].contains(&b) {
                adj[node].push(b);
                adj[b].push(node);
            }
        }
    }
    (nodes, sizes, adj)
}
// ANCHOR_END: block_graph

/// The ordering for `Sigma = 0` somewhere: bodies by minimum degree on the body graph (bodies
/// joined when a group touches both), every group right after the **later** of its bodies
/// ([`interleave`] with [`After::Last`]). Every leading block is then the KKT matrix of some
/// bodies and joints touching only them, nonsingular when those joints' rows are independent,
/// so a zero pivot means redundant rows, not a bad order.
fn kkt_safe_order(nbody: usize, adj: &[Vec<usize>]) -> Vec<usize> {
    let mut body_adj = vec![Vec::new(); nbody];
    for row in &adj[nbody..] {
        if let [a, b] = row[..] {
            if !body_adj[a].contains(&b) {
                body_adj[a].push(b);
                body_adj[b].push(a);
            }
        }
    }
    let bodies = minimum_degree_with(&body_adj, &vec![6; nbody]);
    let perm = interleave(adj, &bodies, After::Last);
    postordered(adj, &perm)
}

/// Where the numbers of one group go: the storage offset of its diagonal block and, for each
/// of its bodies, of the off-diagonal block and whether it is stored as `G^T` (body after the
/// group) or `G` (group after the body).
#[derive(Clone, Copy, Debug)]
struct GroupSlots {
    diag: usize,
    size: usize,
    offset: usize,
    bodies: [Option<(usize, usize, bool)>; 2],
}

/// The sparse solver of one structure (bodies and constraint groups): the ordering, the
/// [`Multifrontal`] factorization (structure, numbers, buffers) and the maps from bodies and
/// groups to block rows. Build it once per structure with [`SpookSparse::new`]; every step calls
/// [`SpookSparse::solve`].
#[derive(Clone, Debug)]
pub struct SpookSparse {
    /// The groups it was built for.
    pub groups: Vec<Group>,
    /// Number of bodies.
    pub nbody: usize,
    /// The ordering used.
    pub ordering: BlockOrdering,
    /// Whether the KKT-safe order (bodies before the groups on them, see the chapter) replaced `ordering`
    /// because some `Sigma_ii = 0`.
    pub kkt_safe: bool,
    /// The nodes in factorization order.
    pub nodes: Vec<SpookNode>,
    /// The factorization.
    pub mf: Multifrontal,
    /// What the ordering costs.
    pub fill: Fill,
    /// Steps of iterative refinement after the solve (see [`SpookSparse::solve`]).
    pub refine: usize,
    /// The assembled `A` in the factor's block layout (read by the factorization, kept for the
    /// refinement's residual).
    pub a: Vec<f64>,
    body_block: Vec<usize>,
    slots: Vec<GroupSlots>,
    rhs: Vec<f64>,
    /// `b` as assembled, the solution, and a work vector.
    b: Vec<f64>,
    x: Vec<f64>,
    work: Vec<f64>,
}

/// Default number of steps of iterative refinement of the sparse solve.
pub const REFINE_STEPS: usize = 1;

impl SpookSparse {
    /// The solver for `nbody` bodies and the groups of the bilateral `rows` (all of
    /// [`RowKind::Joint`]), ordered by `ordering` when every `Sigma_ii > 0`, else by the
    /// KKT-safe order (see the chapter). Errors: a row that is not a joint row, a row on a body
    /// out of range.
    pub fn new(nbody: usize, rows: &[Row], ordering: BlockOrdering) -> Result<Self> {
        if let Some((r, row)) = rows.iter().enumerate().find(|(_, r)| !r.bilateral()) {
            return Err(Error::Unsupported {
                what: format!("row {r} ({:?}) in the sparse SPOOK solve", row.kind),
                why: "the direct solve handles bilateral (joint) rows; limits and contacts need PGS".into(),
            });
        }
        let groups = groups_of(rows);
        for g in &groups {
            if let Some(b) = [g.a, g.b].into_iter().flatten().find(|&b| b >= nbody) {
                return Err(Error::BadParameter {
                    what: format!("constraint {} body", g.constraint),
                    value: b as f64,
                    why: format!("there are {nbody} bodies"),
                });
            }
        }
        let (nodes, sizes, adj) = block_graph(nbody, &groups);
        let kkt_safe = rows.iter().any(|r| !(r.sigma > 0.0));
        let perm = if kkt_safe {
            kkt_safe_order(nbody, &adj)
        } else {
            let p = order(ordering, &adj, &sizes)?;
            postordered(&adj, &p)
        };
        let fill = fill(&adj, &sizes, &perm)?;
        let mut inv = vec![0; perm.len()];
        for (new, &old) in perm.iter().enumerate() {
            inv[old] = new;
        }
        let padj: Vec<Vec<usize>> = crate::sparse::etree::permute_pattern(&adj, &perm);
        let psizes: Vec<usize> = perm.iter().map(|&o| sizes[o]).collect();
        let signs: Vec<i8> = perm.iter().map(|&o| if o < nbody { 1 } else { -1 }).collect();
        let symbolic = BlockSymbolic::new(&psizes, &padj)?;
        let body_block: Vec<usize> = (0..nbody).map(|i| inv[i]).collect();
        let slots = groups
            .iter()
            .enumerate()
            .map(|(g, grp)| {
                let gb = inv[nbody + g];
                let mut bodies = [None, None];
                for (k, b) in [grp.a, grp.b].into_iter().enumerate() {
                    if let Some(b) = b {
                        let bb = body_block[b];
                        let (hi, lo) = (gb.max(bb), gb.min(bb));
                        let at = symbolic.find(hi, lo).unwrap_or(0);
                        bodies[k] = Some((b, at, bb > gb));
                    }
                }
                GroupSlots {
                    diag: symbolic.diag_at[gb],
                    size: grp.rows,
                    offset: symbolic.offsets[gb],
                    bodies,
                }
            })
            .collect();
        let (n, len) = (symbolic.n(), symbolic.len);
        let mf = Multifrontal::new(symbolic).with_signs(&signs)?;
        Ok(SpookSparse {
            groups,
            nbody,
            ordering,
            kkt_safe,
            nodes: perm
                .iter()
                .map(|&o| {
                    if o < nbody {
                        nodes[o]
                    } else {
                        SpookNode::Group(o - nbody)
                    }
                })
                .collect(),
            mf,
            fill,
            refine: REFINE_STEPS,
            body_block,
            slots,
            rhs: vec![0.0; n],
            a: vec![0.0; len],
            b: vec![0.0; n],
            x: vec![0.0; n],
            work: vec![0.0; n],
        })
    }

    /// Whether this solver was built for `nbody` bodies and the groups of `rows` (same
    /// constraints, row counts and bodies, and the same `Sigma = 0` status).
    pub fn matches(&self, nbody: usize, rows: &[Row]) -> bool {
        if nbody != self.nbody || self.kkt_safe != rows.iter().any(|r| !(r.sigma > 0.0)) {
            return false;
        }
        let mut k = 0;
        for (r, row) in rows.iter().enumerate() {
            let Some(g) = self.groups.get(k) else { return false };
            let c = match row.kind {
                RowKind::Joint { constraint, .. } => constraint,
                _ => return false,
            };
            if c != g.constraint || row.a.map(|x| x.0) != g.a || row.b.map(|x| x.0) != g.b {
                return false;
            }
            if r + 1 == g.first + g.rows {
                k += 1;
            }
        }
        k == self.groups.len()
    }

    // ANCHOR: assemble_sparse
    /// Assembles the step's matrix `A` (in the factor's block layout) and right-hand side:
    /// `M_i` on every body block,
    /// `-Sigma` on every group block, `G` (or `G^T`) on the blocks between them, and the
    /// right-hand side `[M v_k + h f_k; Upsilon (G v_k - (4/h) phi)]` in block order. `mass`,
    /// `v`, `f` are the stepper's per-body arrays; `rows` must match ([`SpookSparse::matches`]).
    pub fn assemble(&mut self, mass: &[(f64, Mat3)], v: &[f64], f: &[f64], h: f64, rows: &[Row]) {
        // every entry the factorization reads (lower diagonal blocks, blocks of A's pattern) is
        // written below, so nothing needs clearing; the numbers go into `a`, which the
        // factorization reads and the refinement keeps
        let sym = &self.mf.ldlt.symbolic;
        let vals = &mut self.a;
        for (i, (m, is)) in mass.iter().enumerate() {
            let bb = self.body_block[i];
            let (at, off) = (sym.diag_at[bb], sym.offsets[bb]);
            vals[at..at + 36].fill(0.0);
            for k in 0..3 {
                vals[at + 7 * k] = *m;
                for c in 0..3 {
                    // column-major 6 x 6: entry (3 + r, 3 + c) at (3 + c) * 6 + 3 + r
                    vals[at + (3 + c) * 6 + 3 + k] = is[(k, c)];
                }
            }
            for k in 0..3 {
                self.rhs[off + k] = m * v[6 * i + k] + h * f[6 * i + k];
                let iv: f64 = (0..3).map(|c| is[(k, c)] * v[6 * i + 3 + c]).sum();
                self.rhs[off + 3 + k] = iv + h * f[6 * i + 3 + k];
            }
        }
        for (grp, slot) in self.groups.iter().zip(&self.slots) {
            let s = slot.size;
            vals[slot.diag..slot.diag + s * s].fill(0.0);
            for k in 0..s {
                let row = &rows[grp.first + k];
                vals[slot.diag + k * s + k] = -row.sigma;
                let mut gv = 0.0;
                for (side, entry) in [row.a, row.b].into_iter().enumerate() {
                    let (Some((b, g)), Some((_, at, body_after))) = (entry, slot.bodies[side]) else {
                        continue;
                    };
                    for c in 0..6 {
                        // G block (s x 6) when the group comes after the body, G^T (6 x s) else
                        let idx = if body_after { at + k * 6 + c } else { at + c * s + k };
                        vals[idx] = g[c];
                        gv += g[c] * v[6 * b + c];
                    }
                }
                self.rhs[slot.offset + k] = row.upsilon * (gv - 4.0 / h * row.phi);
            }
        }
    }
    // ANCHOR_END: assemble_sparse

    // ANCHOR: sparse_solve
    /// Factors the assembled numbers and solves, writing `v_{k+1}` (6 per body) and
    /// `lambda~ = -mu` (one per row), then improves the solution by [`SpookSparse::refine`]
    /// steps of iterative refinement, `x <- x + A^-1 (b - A x)` with the same factor. Without
    /// pivoting, a constraint eliminated before its bodies has the pivot `-Sigma_ii`, tiny for a
    /// stiff joint, and the factor carries entries of size `G / Sigma`: the solve is backward
    /// stable only up to that growth, and one refinement step takes the residual back to
    /// roundoff (the chapter shows both). Errors: a zero or wrong-sign pivot, reported as
    /// [`Error::Singular`] naming the body or the constraint row it belongs to.
    pub fn solve(
        &mut self,
        v_next: &mut [f64],
        lambda: &mut [f64],
        names: &dyn Fn(usize) -> String,
        ops: &mut impl Counter,
    ) -> Result<()> {
        self.b.copy_from_slice(&self.rhs);
        if let Err(e) = self.mf.factor_from(&self.a, ops) {
            return Err(self.singular(e, names));
        }
        self.x.copy_from_slice(&self.b);
        self.mf.solve_mut(&mut self.x, ops);
        let sym = &self.mf.ldlt.symbolic;
        for _ in 0..self.refine {
            sym.sym_mul(&self.a, &self.x, &mut self.work, ops);
            for (w, b) in self.work.iter_mut().zip(&self.b) {
                *w = b - *w;
            }
            self.mf.solve_mut(&mut self.work, ops);
            for (x, d) in self.x.iter_mut().zip(&self.work) {
                *x += d;
            }
        }
        for (i, &bb) in self.body_block.iter().enumerate() {
            let off = sym.offsets[bb];
            v_next[6 * i..6 * i + 6].copy_from_slice(&self.x[off..off + 6]);
        }
        for (grp, slot) in self.groups.iter().zip(&self.slots) {
            for k in 0..slot.size {
                lambda[grp.first + k] = -self.x[slot.offset + k];
            }
        }
        Ok(())
    }
    // ANCHOR_END: sparse_solve

    /// The residual `max |b - A x| / (max |A| max |x|)` of the last solve (after refinement),
    /// with `A` and `b` as assembled.
    pub fn relative_residual(&mut self) -> f64 {
        let sym = &self.mf.ldlt.symbolic;
        sym.sym_mul(&self.a, &self.x, &mut self.work, &mut crate::sparse::NoCount);
        let r = self
            .work
            .iter()
            .zip(&self.b)
            .fold(0.0f64, |m, (w, b)| m.max((b - w).abs()));
        let amax = self.a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let xmax = self.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        r / (amax * xmax).max(f64::MIN_POSITIVE)
    }

    /// The error for a failed factorization: the scalar row's block, named.
    fn singular(&self, e: Error, names: &dyn Fn(usize) -> String) -> Error {
        let Error::ZeroPivot { index, value, .. } = e else {
            return e;
        };
        let sym = &self.mf.ldlt.symbolic;
        let block = sym.offsets.partition_point(|&o| o <= index).saturating_sub(1);
        let what = match self.nodes.get(block) {
            Some(SpookNode::Body(i)) => format!("body {i}"),
            Some(SpookNode::Group(g)) => {
                let grp = &self.groups[*g];
                format!(
                    "row {} of constraint '{}'",
                    index - sym.offsets[block],
                    names(grp.constraint)
                )
            }
            None => format!("scalar row {index}"),
        };
        Error::Singular {
            what: "SPOOK block system [[M, G^T], [G, -Sigma]] (sparse LDL^T)".into(),
            why: format!(
                "pivot {value:.3e} at {what}: a zero (or wrong-sign) pivot, so the rows are redundant \
                 (with epsilon = 0 nothing regularizes them)"
            ),
        }
    }
}

/// The body graphs of the chapter's test scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyGraph {
    /// A chain of `n` bodies hanging from the world by hinges.
    Chain,
    /// A random tree of `n` bodies (every body's parent drawn among the earlier ones that have
    /// fewer than three children), ball joints, the root hinged to the world.
    Tree,
    /// A ladder: two rails of `n / 2` bodies joined by rungs (ball joints), the first body
    /// hinged to the world (hinging both first bodies would make the first rung's joint
    /// redundant).
    Ladder,
    /// A `k x k` grid (`k = floor(sqrt n)`) of bodies joined to their right and lower
    /// neighbours by ball joints, one corner hinged to the world.
    Grid,
}

impl BodyGraph {
    /// The four graphs.
    pub const ALL: [BodyGraph; 4] = [BodyGraph::Chain, BodyGraph::Tree, BodyGraph::Ladder, BodyGraph::Grid];

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            BodyGraph::Chain => "chain",
            BodyGraph::Tree => "tree",
            BodyGraph::Ladder => "ladder",
            BodyGraph::Grid => "grid",
        }
    }
}

// ANCHOR: graph_scene
/// A scene of about `n` bodies (0.1 m boxes of 1 kg, spaced 0.2 m, slightly moving) on the body
/// graph `kind`, joints at the midpoints between bodies, every joint with `epsilon` and `tau`;
/// `seed` draws the tree and the initial velocities. For tests and the chapter's figures.
pub fn graph_scene(kind: BodyGraph, n: usize, seed: u64, epsilon: f64, tau: f64) -> SpookSystem {
    let mut s = seed.wrapping_add(0x2545_F491_4F6C_DD1D);
    let mut rnd = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -9.81));
    let half = Vec3::new(0.05, 0.04, 0.03);
    let spacing = 0.2;
    let add = |sys: &mut SpookSystem, k: usize, x: Vec3, rnd: &mut dyn FnMut() -> f64| {
        let mut b = Body::cuboid(&format!("body{k}"), 1.0, half, x, [1.0, 0.0, 0.0, 0.0]);
        b.nu = Vec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5) * 0.1;
        b.omega = Vec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5) * 0.1;
        sys.add_body(b)
    };
    let joint = |sys: &mut SpookSystem, kind: ConstraintKind, a: Option<usize>, b: usize| {
        let xb = sys.bodies[b].x;
        let xa = a.map_or(xb + Vec3::new(0.0, 0.0, spacing), |a| sys.bodies[a].x);
        let mid = 0.5 * (xa + xb);
        let fa = Frame::at(a.map_or(mid, |_| mid - xa));
        let name = format!("joint {} - {b}", a.map_or("world".to_string(), |a| a.to_string()));
        sys.add_constraint(Constraint::new(
            &name,
            kind,
            (a, fa),
            (Some(b), Frame::at(mid - xb)),
            epsilon,
            tau,
        ));
    };
    match kind {
        BodyGraph::Chain => {
            for k in 0..n.max(1) {
                let b = add(&mut sys, k, Vec3::new(spacing * k as f64, 0.0, 0.0), &mut rnd);
                joint(&mut sys, ConstraintKind::Hinge, k.checked_sub(1), b);
            }
        }
        BodyGraph::Tree => {
            let mut children = vec![0usize; n.max(1)];
            let mut depth = vec![0usize; n.max(1)];
            for k in 0..n.max(1) {
                let parent = if k == 0 {
                    None
                } else {
                    // the earlier bodies with fewer than three children; start at a random one
                    let start = (rnd() * k as f64) as usize;
                    (0..k).map(|d| (start + d) % k).find(|&p| children[p] < 3)
                };
                if let Some(p) = parent {
                    children[p] += 1;
                    depth[k] = depth[p] + 1;
                }
                let x = Vec3::new(spacing * depth[k] as f64, spacing * (k % 97) as f64, 0.0);
                let b = add(&mut sys, k, x, &mut rnd);
                let kind = if parent.is_none() {
                    ConstraintKind::Hinge
                } else {
                    ConstraintKind::Ball
                };
                joint(&mut sys, kind, parent, b);
            }
        }
        BodyGraph::Ladder => {
            let rungs = (n / 2).max(1);
            for k in 0..rungs {
                let l = add(&mut sys, 2 * k, Vec3::new(spacing * k as f64, 0.0, 0.0), &mut rnd);
                let r = add(
                    &mut sys,
                    2 * k + 1,
                    Vec3::new(spacing * k as f64, spacing, 0.0),
                    &mut rnd,
                );
                if k == 0 {
                    joint(&mut sys, ConstraintKind::Hinge, None, l);
                } else {
                    joint(&mut sys, ConstraintKind::Ball, Some(l - 2), l);
                    joint(&mut sys, ConstraintKind::Ball, Some(r - 2), r);
                }
                joint(&mut sys, ConstraintKind::Ball, Some(l), r);
            }
        }
        BodyGraph::Grid => {
            let k = ((n as f64).sqrt().floor() as usize).max(1);
            for r in 0..k {
                for c in 0..k {
                    let x = Vec3::new(spacing * c as f64, spacing * r as f64, 0.0);
                    let b = add(&mut sys, r * k + c, x, &mut rnd);
                    if r == 0 && c == 0 {
                        joint(&mut sys, ConstraintKind::Hinge, None, b);
                    }
                    if c > 0 {
                        joint(&mut sys, ConstraintKind::Ball, Some(b - 1), b);
                    }
                    if r > 0 {
                        joint(&mut sys, ConstraintKind::Ball, Some(b - k), b);
                    }
                }
            }
        }
    }
    sys
}
// ANCHOR_END: graph_scene
