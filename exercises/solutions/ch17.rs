//! Worked answers to the exercises of "Sparse direct solves for SPOOK" (statements in
//! `src/ch17.rs`).

use nalgebra::DMatrix;
use std::collections::BTreeSet;

/// The first nonzero below the diagonal in column j of L is the smallest later neighbour of j
/// in the graph as the elimination has filled it by then.
pub fn exercise_1(adj: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = adj.len();
    let mut g: Vec<BTreeSet<usize>> = adj.iter().map(|r| r.iter().copied().collect()).collect();
    let mut parent = vec![None; n];
    for j in 0..n {
        let later: Vec<usize> = g[j].iter().copied().filter(|&i| i > j).collect();
        parent[j] = later.first().copied();
        for &a in &later {
            for &b in &later {
                if a != b {
                    g[a].insert(b);
                }
            }
        }
    }
    parent
}

/// Renumber the graph so that node `perm[k]` becomes `k`, play the game, count the new edges.
pub fn exercise_2(adj: &[Vec<usize>], perm: &[usize]) -> usize {
    let n = adj.len();
    let mut pos = vec![0; n];
    for (k, &p) in perm.iter().enumerate() {
        pos[p] = k;
    }
    let mut g: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (i, row) in adj.iter().enumerate() {
        for &j in row {
            g[pos[i]].insert(pos[j]);
        }
    }
    let mut added = 0;
    for j in 0..n {
        let later: Vec<usize> = g[j].iter().copied().filter(|&i| i > j).collect();
        for (k, &a) in later.iter().enumerate() {
            for &b in &later[k + 1..] {
                if g[a].insert(b) {
                    g[b].insert(a);
                    added += 1;
                }
            }
        }
    }
    added
}

/// In the minimum-degree order the chain is eaten from its free end: every body (6 rows) is
/// eliminated in a front with the one hinge still joining it (5 rows), `r = 11, s = 6`, 200
/// multiply-adds; every hinge but the root one in a front with the next body, `r = 11, s = 5`,
/// 185; the hinge to the world ends alone in its front, `r = s = 5`, 20.
pub fn exercise_3(n: usize) -> usize {
    let front = |r: usize, s: usize| (0..s).map(|c| (r - c - 1) * (r - c) / 2).sum::<usize>();
    n * front(11, 6) + (n - 1) * front(11, 5) + front(5, 5)
}

/// Symmetric Gaussian elimination: pivot `d = w_jj`, then the Schur complement of the pivot on
/// the trailing matrix. By Sylvester's law of inertia the signs of the pivots are those of the
/// eigenvalues, in any order that meets no zero pivot.
pub fn exercise_4(a: &DMatrix<f64>, perm: &[usize]) -> (usize, usize) {
    let n = a.nrows();
    let mut w = DMatrix::from_fn(n, n, |r, c| a[(perm[r], perm[c])]);
    let (mut pos, mut neg) = (0, 0);
    for j in 0..n {
        let d = w[(j, j)];
        if d > 0.0 {
            pos += 1;
        } else if d < 0.0 {
            neg += 1;
        }
        for r in j + 1..n {
            for c in j + 1..n {
                w[(r, c)] -= w[(r, j)] * w[(j, c)] / d;
            }
        }
    }
    (pos, neg)
}
