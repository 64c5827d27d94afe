//! Featherstone 8.9: loop clusters. Two loops are coupled when they share a tree joint; the
//! minimal clusters are the connected components of that relation. Numbering the tree joints so
//! that each cluster's joints are consecutive (and the loop rows cluster by cluster) makes `K`
//! block diagonal, with gaps for joints in no loop, and `G` block diagonal with identity blocks
//! for the gaps: the elimination of 8.8 then runs on each cluster alone.

use super::constraints::{check_loops, loop_rows, LoopSystem};
use super::pivot::{null_space_with, NullSpace, PivotTol};
use crate::error::{Error, Result};
use crate::model::Model;
use nalgebra::{DMatrix, DVector};

/// The loop clusters of a model and the numbering that makes them consecutive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopClusters {
    /// The loops (indices into [`Model::loops`]) of every cluster, ascending; clusters ordered
    /// by their first loop.
    pub loops: Vec<Vec<usize>>,
    /// The tree dofs of every cluster, ascending.
    pub dofs: Vec<Vec<usize>>,
    /// The dofs in no loop (the gaps), ascending.
    pub free_dofs: Vec<usize>,
    /// The column numbering: `col_perm[new] = old` dof, clusters first, gaps last.
    pub col_perm: Vec<usize>,
    /// The row numbering of `K`: `row_perm[new] = old` row, cluster by cluster.
    pub row_perm: Vec<usize>,
}

/// The tree joints (bodies) on loop k's path: from `p(k)` and `s(k)` up to their nearest
/// common ancestor, which is not included (Featherstone 8.2).
pub fn loop_path(model: &Model, k: usize) -> Vec<usize> {
    let lj = &model.loops[k];
    let (mut i, mut j) = (lj.pred, lj.succ);
    let mut out = Vec::new();
    while i != j {
        if i > j {
            out.push(i);
            i = model.lambda[i];
        } else {
            out.push(j);
            j = model.lambda[j];
        }
    }
    out.sort_unstable();
    out
}

// ANCHOR: loop_clusters
/// The minimal loop clusters (Featherstone 8.9): union-find over the loops, joining two loops
/// whenever a tree joint lies on both paths; then each cluster's dofs, the gaps, and the
/// numbering of columns and rows that makes `K` block diagonal. The loop joints are assumed
/// valid ([`loop_clusters`] checks them).
pub fn loop_clusters_unchecked(model: &Model) -> LoopClusters {
    let nl = model.loops.len();
    let mut root: Vec<usize> = (0..nl).collect();
    fn find(root: &mut [usize], mut a: usize) -> usize {
        while root[a] != a {
            root[a] = root[root[a]];
            a = root[a];
        }
        a
    }
    // owner[body] = the first loop seen through that body's joint
    let mut owner: Vec<Option<usize>> = vec![None; model.nb + 1];
    for k in 0..nl {
        for b in loop_path(model, k) {
            match owner[b] {
                None => owner[b] = Some(k),
                Some(o) => {
                    let (ra, rb) = (find(&mut root, o), find(&mut root, k));
                    root[ra.max(rb)] = ra.min(rb);
                }
            }
        }
    }
    let mut cluster_of_root = vec![usize::MAX; nl];
    let mut loops: Vec<Vec<usize>> = Vec::new();
    for k in 0..nl {
        let r = find(&mut root, k);
        if cluster_of_root[r] == usize::MAX {
            cluster_of_root[r] = loops.len();
            loops.push(Vec::new());
        }
        loops[cluster_of_root[r]].push(k);
    }
    let mut dofs = vec![Vec::new(); loops.len()];
    let mut free_dofs = Vec::new();
    for b in 1..=model.nb {
        match owner[b] {
            Some(o) => dofs[cluster_of_root[find(&mut root, o)]].extend(model.dofs(b)),
            None => free_dofs.extend(model.dofs(b)),
        }
    }
    for d in &mut dofs {
        d.sort_unstable();
    }
    let rows = loop_rows(model);
    let col_perm = dofs.iter().flatten().chain(free_dofs.iter()).copied().collect();
    let row_perm = loops.iter().flatten().flat_map(|&k| rows[k].clone()).collect();
    LoopClusters {
        loops,
        dofs,
        free_dofs,
        col_perm,
        row_perm,
    }
}
// ANCHOR_END: loop_clusters

/// [`loop_clusters_unchecked`] after checking the model's loop joints.
pub fn loop_clusters(model: &Model) -> Result<LoopClusters> {
    check_loops(model)?;
    Ok(loop_clusters_unchecked(model))
}

impl LoopClusters {
    /// `K` (or any matrix with K's rows and columns) renumbered: rows by [`Self::row_perm`],
    /// columns by [`Self::col_perm`]. Block diagonal for `K`.
    pub fn permute(&self, kmat: &DMatrix<f64>) -> DMatrix<f64> {
        DMatrix::from_fn(self.row_perm.len(), self.col_perm.len(), |r, c| {
            kmat[(self.row_perm[r], self.col_perm[c])]
        })
    }
}

/// `G` and `g` cluster by cluster (Featherstone 8.9): for each cluster, complete pivoting
/// ([`null_space_with`]) on its own block `K_c qdd_c = k_c`; the gaps are independent
/// variables with identity columns. `G`'s columns come cluster by cluster, then the gaps; its
/// rows are the original dofs. The result solves the same equations as the monolithic
/// elimination: `K G = 0`, `K g = k`, the same rank.
pub fn null_space_clustered(sys: &LoopSystem, clusters: &LoopClusters, tol: &PivotTol) -> Result<NullSpace> {
    let n = sys.kmat.ncols();
    if clusters.col_perm.len() != n || clusters.row_perm.len() != sys.nc() {
        return Err(Error::BadLength {
            what: "loop clusters (columns) for this K".into(),
            got: clusters.col_perm.len(),
            expected: n,
        });
    }
    cluster_elimination(sys, clusters, tol)
}

// ANCHOR: null_space_clustered
/// The kernel of [`null_space_clustered`]: the clusters are assumed to belong to `sys`.
/// Fails only if a cluster's own elimination fails (inconsistent constraints).
pub fn cluster_elimination(sys: &LoopSystem, clusters: &LoopClusters, tol: &PivotTol) -> Result<NullSpace> {
    let n = sys.kmat.ncols();
    let mut blocks = Vec::with_capacity(clusters.loops.len());
    let mut row0 = 0;
    for (c, dofs) in clusters.dofs.iter().enumerate() {
        let nrows: usize = clusters.loops[c].iter().map(|&k| sys.rows[k].len()).sum();
        let rows = &clusters.row_perm[row0..row0 + nrows];
        row0 += nrows;
        let kc = DMatrix::from_fn(nrows, dofs.len(), |r, j| sys.kmat[(rows[r], dofs[j])]);
        let rhs = sys.rhs();
        let bc = DVector::from_fn(nrows, |r, _| rhs[rows[r]]);
        blocks.push(null_space_with(&kc, &bc, tol, None)?);
    }
    let rank: usize = blocks.iter().map(|b| b.rank).sum();
    let mut g_null = DMatrix::zeros(n, n - rank);
    let mut g_bias = DVector::zeros(n);
    let (mut independent, mut dependent) = (Vec::new(), Vec::new());
    let mut col = 0;
    let mut residual: f64 = 0.0;
    for (b, dofs) in blocks.iter().zip(&clusters.dofs) {
        for yc in 0..b.g_null.ncols() {
            for (r, &d) in dofs.iter().enumerate() {
                g_null[(d, col)] = b.g_null[(r, yc)];
            }
            col += 1;
        }
        for (r, &d) in dofs.iter().enumerate() {
            g_bias[d] = b.g_bias[r];
        }
        independent.extend(b.independent.iter().map(|&v| dofs[v]));
        dependent.extend(b.dependent.iter().map(|&v| dofs[v]));
        residual = residual.max(b.residual);
    }
    for &d in &clusters.free_dofs {
        g_null[(d, col)] = 1.0;
        col += 1;
        independent.push(d);
    }
    Ok(NullSpace {
        g_null,
        g_bias,
        rank,
        independent,
        dependent,
        residual,
    })
}
// ANCHOR_END: null_space_clustered
