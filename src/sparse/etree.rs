//! Elimination trees, orderings and symbolic factorization of a symmetric sparsity pattern
//! (George and Liu; Davis, *Direct Methods for Sparse Linear Systems*, ch. 4). The pattern is a
//! graph: node `i` is a scalar row or a whole block row, `adj[i]` lists the `j != i` with
//! `A_ij != 0`. Used by the block factorization of [`super::block`] (the sparse matrix method of
//! Featherstone 8.13, Baraff's block-tree factorization) and meant for every later sparse solve.

use crate::error::{Error, Result};

/// Checks a symmetric pattern: indices in range, no self-loops, `j` in `adj[i]` exactly when
/// `i` is in `adj[j]`.
pub fn check_pattern(adj: &[Vec<usize>]) -> Result<()> {
    let n = adj.len();
    for (i, row) in adj.iter().enumerate() {
        for &j in row {
            if j >= n || j == i {
                return Err(Error::BadPattern {
                    node: i,
                    why: format!("neighbour {j} is out of range 0..{n} or the node itself"),
                });
            }
            if !adj[j].contains(&i) {
                return Err(Error::BadPattern {
                    node: i,
                    why: format!("lists {j} but {j} does not list {i} (the pattern must be symmetric)"),
                });
            }
        }
    }
    Ok(())
}

/// Checks that `perm` is a permutation of `0..n`.
pub fn check_permutation(perm: &[usize], n: usize) -> Result<()> {
    let mut seen = vec![false; n];
    if perm.len() != n {
        return Err(Error::BadLength {
            what: "permutation".into(),
            got: perm.len(),
            expected: n,
        });
    }
    for (k, &p) in perm.iter().enumerate() {
        if p >= n || seen[p] {
            return Err(Error::BadPattern {
                node: k,
                why: format!("permutation entry {p} is out of range or repeated"),
            });
        }
        seen[p] = true;
    }
    Ok(())
}

/// The pattern renumbered by `perm` (`perm[new] = old`): `out[new]` lists new indices, sorted.
pub fn permute_pattern(adj: &[Vec<usize>], perm: &[usize]) -> Vec<Vec<usize>> {
    let mut inv = vec![0; perm.len()];
    for (new, &old) in perm.iter().enumerate() {
        inv[old] = new;
    }
    perm.iter()
        .map(|&old| {
            let mut row: Vec<usize> = adj[old].iter().map(|&j| inv[j]).collect();
            row.sort_unstable();
            row
        })
        .collect()
}

/// The half-bandwidth `max |i - j|` over the pattern's entries.
pub fn bandwidth(adj: &[Vec<usize>]) -> usize {
    adj.iter()
        .enumerate()
        .flat_map(|(i, row)| row.iter().map(move |&j| i.abs_diff(j)))
        .max()
        .unwrap_or(0)
}

// ANCHOR: etree
/// The elimination tree of a symmetric pattern (Liu's algorithm): `parent[j]` is the smallest
/// `i > j` with `L_ij != 0` in the factor `A = L D L^T`, `None` at a root. Walks from every
/// neighbour `j < i` up to its current root and hangs that root under `i`; `ancestor` shortcuts
/// the walks (path compression), so the cost is nearly `O(nnz)`.
pub fn etree(adj: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = adj.len();
    let mut parent = vec![None; n];
    let mut ancestor: Vec<Option<usize>> = vec![None; n];
    for i in 0..n {
        for &j0 in &adj[i] {
            let mut j = j0;
            while j < i {
                let next = ancestor[j];
                ancestor[j] = Some(i);
                match next {
                    None => {
                        parent[j] = Some(i);
                        break;
                    }
                    Some(a) => j = a,
                }
            }
        }
    }
    parent
}
// ANCHOR_END: etree

/// A postorder of a forest given by `parent` (every node after its children, siblings in
/// ascending order): `out[k]` is the k-th node. With a postorder the factor of a tree-shaped
/// pattern has no fill (Baraff 1996).
pub fn postorder(parent: &[Option<usize>]) -> Vec<usize> {
    let n = parent.len();
    let mut children = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (j, p) in parent.iter().enumerate() {
        match p {
            Some(p) => children[*p].push(j),
            None => roots.push(j),
        }
    }
    let mut out = Vec::with_capacity(n);
    // iterative depth-first search: (node, next child to visit)
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for &r in &roots {
        stack.push((r, 0));
        while let Some(top) = stack.last_mut() {
            let (node, k) = *top;
            if k < children[node].len() {
                top.1 += 1;
                stack.push((children[node][k], 0));
            } else {
                out.push(node);
                stack.pop();
            }
        }
    }
    out
}

// ANCHOR: symbolic
/// Symbolic factorization: the row pattern of every column of `L` below the diagonal, sorted.
/// Column j's pattern is its own lower neighbours joined with its children's patterns (minus
/// j itself): `L(:, j) = A(j+1.., j) + sum_{c: parent(c) = j} L(:, c) \ {j}` (Davis, thm. 4.2).
/// Its smallest entry is `parent[j]`.
pub fn symbolic(adj: &[Vec<usize>], parent: &[Option<usize>]) -> Vec<Vec<usize>> {
    let n = adj.len();
    let mut pattern: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut mark = vec![usize::MAX; n];
    let mut children = vec![Vec::new(); n];
    for (c, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(c);
        }
    }
    for j in 0..n {
        let mut col = Vec::new();
        mark[j] = j;
        for &i in &adj[j] {
            if i > j && mark[i] != j {
                mark[i] = j;
                col.push(i);
            }
        }
        for &c in &children[j] {
            for &i in &pattern[c] {
                if mark[i] != j {
                    mark[i] = j;
                    col.push(i);
                }
            }
        }
        col.sort_unstable();
        pattern[j] = col;
    }
    pattern
}
// ANCHOR_END: symbolic

/// Where [`interleave`] puts a secondary node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Right after the first of its primary neighbours in the order.
    First,
    /// Right after the last of its primary neighbours.
    Last,
}

/// An ordering of a graph whose nodes come in two kinds: the `primary` nodes in the given order,
/// and every other node placed right after the first or the last of its primary neighbours
/// (after all primary nodes if it has none). For the body-joint graph of a mechanism (bodies
/// primary, joints the rest) it interleaves bodies and joints: with bodies taken leaves first on
/// a tree and [`After::First`] it is Baraff's zero-fill order; with bodies taken rung by rung
/// along a ladder and [`After::Last`] it is the banded order of Featherstone's figure 8.4.
/// Returns `perm` with `perm[new] = old`.
pub fn interleave(adj: &[Vec<usize>], primary: &[usize], after: After) -> Vec<usize> {
    let n = adj.len();
    let mut rank = vec![usize::MAX; n];
    for (k, &p) in primary.iter().enumerate() {
        rank[p] = k;
    }
    let mut slot: Vec<Vec<usize>> = vec![Vec::new(); primary.len() + 1];
    for node in 0..n {
        if rank[node] != usize::MAX {
            continue;
        }
        let ranks = adj[node].iter().map(|&j| rank[j]).filter(|&r| r != usize::MAX);
        let at = match after {
            After::First => ranks.min(),
            After::Last => ranks.max(),
        };
        slot[at.unwrap_or(primary.len())].push(node);
    }
    let mut perm = Vec::with_capacity(n);
    for (k, &p) in primary.iter().enumerate() {
        perm.push(p);
        perm.extend(slot[k].iter().copied());
    }
    perm.extend(slot[primary.len()].iter().copied());
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: usize) -> Vec<Vec<usize>> {
        (0..n)
            .map(|i| {
                let mut r = Vec::new();
                if i > 0 {
                    r.push(i - 1);
                }
                if i + 1 < n {
                    r.push(i + 1);
                }
                r
            })
            .collect()
    }

    #[test]
    fn path_graph_has_a_chain_etree_and_no_fill() {
        let adj = path(5);
        check_pattern(&adj).unwrap();
        let p = etree(&adj);
        assert_eq!(p, vec![Some(1), Some(2), Some(3), Some(4), None]);
        let s = symbolic(&adj, &p);
        assert_eq!(s, vec![vec![1], vec![2], vec![3], vec![4], vec![]]);
        assert_eq!(postorder(&p), vec![0, 1, 2, 3, 4]);
        assert_eq!(bandwidth(&adj), 1);
    }

    #[test]
    fn star_centre_first_fills_everything() {
        // node 0 joined to 1, 2, 3: eliminating 0 first couples 1, 2, 3
        let adj = vec![vec![1, 2, 3], vec![0], vec![0], vec![0]];
        let p = etree(&adj);
        let s = symbolic(&adj, &p);
        assert_eq!(s[0], vec![1, 2, 3]);
        assert_eq!(s[1], vec![2, 3]);
        assert_eq!(s[2], vec![3]);
        // leaves first (a postorder of the star rooted at 0): no fill
        let perm = vec![1, 2, 3, 0];
        let a2 = permute_pattern(&adj, &perm);
        let s2 = symbolic(&a2, &etree(&a2));
        assert_eq!(s2, vec![vec![3], vec![3], vec![3], vec![]]);
    }

    #[test]
    fn bad_patterns_are_rejected() {
        assert!(check_pattern(&[vec![1], vec![]]).is_err());
        assert!(check_pattern(&[vec![0]]).is_err());
        assert!(check_permutation(&[0, 0], 2).is_err());
        assert!(check_permutation(&[1, 0], 2).is_ok());
    }
}
