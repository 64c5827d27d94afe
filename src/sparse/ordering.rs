//! Fill-reducing orderings of a symmetric block pattern and the fill they cause (book chapter
//! "Sparse direct solves for SPOOK"; Davis, *Direct Methods for Sparse Linear Systems*, ch. 7;
//! Amestoy, Davis and Duff 1996 for the approximate minimum degree; George 1973 and George and
//! Liu 1981 for nested dissection).
//!
//! A pattern is a graph as in [`super::etree`]: node `i` is a block row of size `weights[i]`
//! (one per body, six rows, and one per constraint group), `adj[i]` lists its neighbours. An
//! ordering is a permutation `perm` with `perm[new] = old`. Three are here:
//!
//! | ordering | what |
//! |---|---|
//! | [`BlockOrdering::Natural`] | the order the nodes come in |
//! | [`BlockOrdering::MinimumDegree`] | [`minimum_degree`]: greedy minimum approximate external degree on the quotient graph |
//! | [`BlockOrdering::NestedDissection`] | [`nested_dissection`]: level-set separators, halves first, separator last |
//!
//! and [`fill`] counts what each costs: the blocks of `L`, the fill blocks, the scalar entries
//! and the multiply-adds of the factorization.

use super::etree::{check_pattern, check_permutation, etree, permute_pattern, postorder, symbolic};
use crate::error::{Error, Result};
use std::collections::BTreeSet;

/// Which fill-reducing ordering to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockOrdering {
    /// The order the nodes come in (`perm = 0..n`).
    Natural,
    /// Minimum approximate external degree on the quotient graph ([`minimum_degree`]).
    MinimumDegree,
    /// Nested dissection by level-set separators ([`nested_dissection`]).
    NestedDissection,
}

impl BlockOrdering {
    /// The three orderings, for tables and figures.
    pub const ALL: [BlockOrdering; 3] = [
        BlockOrdering::Natural,
        BlockOrdering::MinimumDegree,
        BlockOrdering::NestedDissection,
    ];

    /// A short name ("natural", "minimum degree", "nested dissection").
    pub fn name(self) -> &'static str {
        match self {
            BlockOrdering::Natural => "natural",
            BlockOrdering::MinimumDegree => "minimum degree",
            BlockOrdering::NestedDissection => "nested dissection",
        }
    }
}

/// Checks a weighted pattern: [`check_pattern`], one weight per node, every weight positive.
fn check_weighted(adj: &[Vec<usize>], weights: &[usize]) -> Result<()> {
    check_pattern(adj)?;
    if weights.len() != adj.len() {
        return Err(Error::BadLength {
            what: "node weights (block sizes)".into(),
            got: weights.len(),
            expected: adj.len(),
        });
    }
    if let Some(i) = weights.iter().position(|&w| w == 0) {
        return Err(Error::BadPattern {
            node: i,
            why: "weight (block size) 0".into(),
        });
    }
    Ok(())
}

/// The permutation `perm` (`perm[new] = old`) of the pattern `adj` with block sizes `weights`
/// for the chosen ordering. Errors: a malformed pattern or a zero weight.
pub fn order(method: BlockOrdering, adj: &[Vec<usize>], weights: &[usize]) -> Result<Vec<usize>> {
    check_weighted(adj, weights)?;
    Ok(match method {
        BlockOrdering::Natural => (0..adj.len()).collect(),
        BlockOrdering::MinimumDegree => minimum_degree_with(adj, weights),
        BlockOrdering::NestedDissection => nested_dissection_with(adj, weights),
    })
}

/// What an ordering costs: the structure of `L` in block and scalar terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fill {
    /// Blocks strictly below the diagonal in the lower triangle of `A`.
    pub a_blocks: usize,
    /// Blocks strictly below the diagonal of `L` (`A`'s plus the fill).
    pub l_blocks: usize,
    /// Fill blocks: `l_blocks - a_blocks`.
    pub fill_blocks: usize,
    /// Scalar entries of `L` strictly below the diagonal, counting whole blocks (diagonal
    /// blocks' strict lower triangles included).
    pub l_scalars: usize,
    /// Multiply-adds of a dense-block `L D L^T` on this structure: for every block column j of
    /// width `s` with `r` scalar rows below it, `sum_c (r + s - c - 1)(r + s - c) / 2` over its
    /// columns `c` (the Schur update of a front of `r + s` rows).
    pub madds: usize,
    /// Height of the block elimination tree (nodes on its longest root path).
    pub height: usize,
}

// ANCHOR: fill
/// The fill of the ordering `perm` of `adj` (block sizes `weights`): builds the permuted pattern,
/// its elimination tree and the symbolic factorization ([`super::etree::symbolic`]) and counts.
/// Errors: a malformed pattern, a zero weight or `perm` not a permutation.
pub fn fill(adj: &[Vec<usize>], weights: &[usize], perm: &[usize]) -> Result<Fill> {
    check_weighted(adj, weights)?;
    check_permutation(perm, adj.len())?;
    let pa = permute_pattern(adj, perm);
    let w: Vec<usize> = perm.iter().map(|&o| weights[o]).collect();
    let parent = etree(&pa);
    let pattern = symbolic(&pa, &parent);
    let mut f = Fill {
        a_blocks: adj.iter().map(Vec::len).sum::<usize>() / 2,
        ..Fill::default()
    };
    let mut depth = vec![0usize; pa.len()];
    for j in (0..pa.len()).rev() {
        depth[j] = parent[j].map_or(1, |p| depth[p] + 1);
        f.height = f.height.max(depth[j]);
    }
    for (j, col) in pattern.iter().enumerate() {
        let s = w[j];
        let r: usize = col.iter().map(|&i| w[i]).sum();
        f.l_blocks += col.len();
        f.l_scalars += s * (s - 1) / 2 + r * s;
        for c in 0..s {
            let below = r + s - c - 1;
            f.madds += below * (below + 1) / 2;
        }
    }
    f.fill_blocks = f.l_blocks - f.a_blocks;
    Ok(f)
}
// ANCHOR_END: fill

/// `perm` followed by a postorder of the elimination tree of the permuted pattern: the same
/// fill (an equivalent ordering), with every subtree numbered consecutively, which is what a
/// multifrontal factorization's stack of update matrices wants. Assumes a valid pattern and
/// permutation.
pub fn postordered(adj: &[Vec<usize>], perm: &[usize]) -> Vec<usize> {
    let pa = permute_pattern(adj, perm);
    let post = postorder(&etree(&pa));
    post.iter().map(|&k| perm[k]).collect()
}

// ANCHOR: minimum_degree
/// Minimum degree ordering of `adj` with node weights `weights` (block sizes): every step
/// eliminates a node of smallest approximate external degree, counted in scalar rows. Checks its
/// input ([`order`] with [`BlockOrdering::MinimumDegree`] is the same call).
///
/// Of the ideas of Amestoy, Davis and Duff's AMD this implements:
/// - the **quotient graph**: an eliminated node becomes an *element* `e` holding the list `L_e` of
///   the variables it couples (a clique of the elimination graph, stored as a list); a variable
///   keeps the elements `E_i` and the variables `A_i` it touches; the elements absorbed by a new
///   one are dropped, so the storage never grows beyond the original pattern;
/// - the **approximate external degree** `d_i = min(n_w - w_i, d_i + |L_p \ i|,
///   |A_i \ i| + |L_p \ i| + sum_{e in E_i, e != p} |L_e \ L_p|)`, an upper bound on the true
///   degree computed in time proportional to the lists touched;
/// - **aggressive absorption**: an element with `|L_e \ L_p| = 0` is absorbed into the new one;
/// - **supervariables**: variables of `L_p` with the same `A_i` and `E_i` (found by hashing, then
///   compared) are merged into one of summed weight and eliminated together;
/// - **mass elimination**: a variable whose only neighbour is the new element (`A_i` empty,
///   `E_i = {p}`) is eliminated right after `p`: it adds no fill and has the least degree.
///
/// Not implemented: dense-row skipping (our graphs have no dense rows; a body with thousands of
/// constraint neighbours would want it) and AMD's in-place compressed storage (lists here are
/// vectors). The ordering ends with a postorder of the elimination tree ([`postordered`]).
pub fn minimum_degree(adj: &[Vec<usize>], weights: &[usize]) -> Result<Vec<usize>> {
    order(BlockOrdering::MinimumDegree, adj, weights)
}

/// [`minimum_degree`] without the input checks: `adj` must be a valid symmetric pattern and
/// every weight positive.
pub fn minimum_degree_with(adj: &[Vec<usize>], weights: &[usize]) -> Vec<usize> {
    let n = adj.len();
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum State {
        Variable,
        Element,
        Merged,
        Dead,
    }
    let mut state = vec![State::Variable; n];
    let mut nv: Vec<usize> = weights.to_vec(); // supervariable weight
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut a_var: Vec<Vec<usize>> = adj.to_vec(); // A_i
    let mut e_el: Vec<Vec<usize>> = vec![Vec::new(); n]; // E_i
    let mut l_el: Vec<Vec<usize>> = vec![Vec::new(); n]; // L_e
    let mut l_weight = vec![0usize; n]; // weight of L_e
    let mut degree: Vec<usize> = (0..n).map(|i| adj[i].iter().map(|&j| weights[j]).sum()).collect();
    let mut heap: BTreeSet<(usize, usize)> = (0..n).map(|i| (degree[i], i)).collect();
    let mut remaining: usize = weights.iter().sum();
    // stamps: `mark[x] == stamp` means x was seen in the current step
    let mut mark = vec![0usize; n];
    let mut stamp = 0usize;
    let mut wmark = vec![0usize; n];
    let mut w = vec![0usize; n]; // |L_e \ L_p|
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut lp: Vec<usize> = Vec::new();
    let mut hashed: Vec<(u64, usize)> = Vec::new();
    while let Some((_, p)) = heap.pop_first() {
        // 1. the new element L_p = (A_p u union of L_e, e in E_p) \ p, live variables only
        stamp += 1;
        mark[p] = stamp;
        lp.clear();
        for &j in &a_var[p] {
            if state[j] == State::Variable && mark[j] != stamp {
                mark[j] = stamp;
                lp.push(j);
            }
        }
        for &e in &e_el[p] {
            if state[e] != State::Element {
                continue;
            }
            for &j in &l_el[e] {
                if state[j] == State::Variable && mark[j] != stamp {
                    mark[j] = stamp;
                    lp.push(j);
                }
            }
            state[e] = State::Dead; // absorbed into p
            l_el[e] = Vec::new();
        }
        state[p] = State::Element;
        order.extend(members[p].iter().copied());
        remaining -= nv[p];
        a_var[p] = Vec::new();
        e_el[p] = Vec::new();
        // 2. prune A_i and E_i of every i in L_p, add p to E_i; |L_e \ L_p| for their elements
        let wstamp = stamp;
        for &i in &lp {
            a_var[i].retain(|&j| state[j] == State::Variable && mark[j] != stamp && j != i);
            e_el[i].retain(|&e| state[e] == State::Element);
            for &e in &e_el[i] {
                if wmark[e] != wstamp {
                    wmark[e] = wstamp;
                    w[e] = l_weight[e];
                }
                w[e] = w[e].saturating_sub(nv[i]);
            }
            e_el[i].push(p);
        }
        // aggressive absorption: an element inside L_p is dropped
        for &i in &lp {
            e_el[i].retain(|&e| {
                if e != p && wmark[e] == wstamp && w[e] == 0 {
                    state[e] = State::Dead;
                    false
                } else {
                    true
                }
            });
        }
        // 3. mass elimination: variables adjacent to p only
        let mut lp_weight: usize = lp.iter().map(|&i| nv[i]).sum();
        let mut k = 0;
        while k < lp.len() {
            let i = lp[k];
            if a_var[i].is_empty() && e_el[i].len() == 1 {
                heap.remove(&(degree[i], i));
                order.extend(members[i].iter().copied());
                remaining -= nv[i];
                lp_weight -= nv[i];
                state[i] = State::Dead;
                lp.swap_remove(k);
            } else {
                k += 1;
            }
        }
        l_weight[p] = lp_weight;
        // 4. approximate external degrees
        for &i in &lp {
            let ext_a: usize = a_var[i].iter().map(|&j| nv[j]).sum();
            let ext_e: usize = e_el[i]
                .iter()
                .filter(|&&e| e != p)
                .map(|&e| if wmark[e] == wstamp { w[e] } else { l_weight[e] })
                .sum();
            let lp_i = lp_weight - nv[i];
            let d = (remaining - nv[i]).min(degree[i] + lp_i).min(ext_a + lp_i + ext_e);
            heap.remove(&(degree[i], i));
            degree[i] = d;
        }
        // 5. supervariables: same A_i and E_i (hash, then compare sorted lists)
        hashed.clear();
        for &i in &lp {
            a_var[i].sort_unstable();
            e_el[i].sort_unstable();
            let mut h: u64 = 0;
            for &x in a_var[i].iter().chain(&e_el[i]) {
                h = h.wrapping_add((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            }
            h = h.wrapping_add(a_var[i].len() as u64);
            hashed.push((h, i));
        }
        hashed.sort_unstable();
        let mut g = 0;
        while g < hashed.len() {
            let mut end = g + 1;
            while end < hashed.len() && hashed[end].0 == hashed[g].0 {
                end += 1;
            }
            for x in g..end {
                let i = hashed[x].1;
                if state[i] != State::Variable {
                    continue;
                }
                for &(_, j) in &hashed[x + 1..end] {
                    if state[j] == State::Variable && a_var[i] == a_var[j] && e_el[i] == e_el[j] {
                        // j joins i: its weight and members move over, i's degree drops by w_j
                        state[j] = State::Merged;
                        nv[i] += nv[j];
                        degree[i] = degree[i].saturating_sub(nv[j]);
                        let moved = std::mem::take(&mut members[j]);
                        members[i].extend(moved);
                        a_var[j] = Vec::new();
                        e_el[j] = Vec::new();
                    }
                }
            }
            g = end;
        }
        // the merged variables leave every list they were in lazily (state checks); insert the
        // principal ones with their new degrees
        for &i in &lp {
            if state[i] == State::Variable {
                heap.insert((degree[i], i));
            }
        }
        l_el[p] = lp.iter().copied().filter(|&i| state[i] == State::Variable).collect();
        l_weight[p] = l_el[p].iter().map(|&i| nv[i]).sum();
    }
    postordered(adj, &order)
}
// ANCHOR_END: minimum_degree

// ANCHOR: nested_dissection
/// Nested dissection of `adj` (weights `weights`), George's automatic form: in every connected
/// part find a pseudo-peripheral node (repeated breadth-first search), cut its level structure at
/// the lightest level leaving at least a quarter of the weight on each side (the median level if
/// none does), order the two sides first (recursively) and the separating level last. Parts of at most [`ND_LEAF`] nodes are ordered by [`minimum_degree`].
/// On a chain a level is one node, on a ladder two or three, on a `k x k` grid at most `2k`: the
/// separators the complexity section of the chapter counts. On a tree a level is wide (all the
/// nodes at one depth) and the separator a large clique: nested dissection by levels is a poor
/// order for trees, where [`minimum_degree`] is nearly fill-free. Checks its input.
pub fn nested_dissection(adj: &[Vec<usize>], weights: &[usize]) -> Result<Vec<usize>> {
    order(BlockOrdering::NestedDissection, adj, weights)
}

/// Parts of at most this many nodes are not dissected further.
pub const ND_LEAF: usize = 16;

/// [`nested_dissection`] without the input checks (valid pattern, positive weights).
pub fn nested_dissection_with(adj: &[Vec<usize>], weights: &[usize]) -> Vec<usize> {
    let n = adj.len();
    let mut out = Vec::with_capacity(n);
    // which part each node is in (usize::MAX: already ordered or not in the current part)
    let mut part = vec![0usize; n];
    let mut level = vec![usize::MAX; n];
    let mut next_part = 1usize;
    // explicit work list: (nodes of a part, its id); a part is pushed with its separator after it
    enum Work {
        Split(Vec<usize>, usize),
        Emit(Vec<usize>),
    }
    let mut work = vec![Work::Split((0..n).collect(), 0)];
    let mut queue = Vec::new();
    while let Some(item) = work.pop() {
        let (nodes, id) = match item {
            Work::Emit(sep) => {
                out.extend(sep);
                continue;
            }
            Work::Split(nodes, id) => (nodes, id),
        };
        if nodes.len() <= ND_LEAF {
            // order the small part by minimum degree on its induced subgraph
            let index = |x: usize, nodes: &[usize]| nodes.binary_search(&x).ok();
            let mut sorted = nodes.clone();
            sorted.sort_unstable();
            let sub: Vec<Vec<usize>> = sorted
                .iter()
                .map(|&x| adj[x].iter().filter_map(|&y| index(y, &sorted)).collect())
                .collect();
            let sw: Vec<usize> = sorted.iter().map(|&x| weights[x]).collect();
            for k in minimum_degree_with(&sub, &sw) {
                out.push(sorted[k]);
                part[sorted[k]] = usize::MAX;
            }
            continue;
        }
        // breadth-first levels from `root` within the part; returns the nodes in BFS order
        let bfs = |root: usize, level: &mut Vec<usize>, queue: &mut Vec<usize>, part: &[usize]| {
            queue.clear();
            queue.push(root);
            level[root] = 0;
            let mut head = 0;
            while head < queue.len() {
                let x = queue[head];
                head += 1;
                for &y in &adj[x] {
                    if part[y] == id && level[y] == usize::MAX {
                        level[y] = level[x] + 1;
                        queue.push(y);
                    }
                }
            }
        };
        // a pseudo-peripheral node: start anywhere, move to a far node of least degree while
        // the eccentricity grows (at most 8 rounds)
        let root = nodes[0];
        bfs(root, &mut level, &mut queue, &part);
        let reached = queue.len();
        let mut ecc = level[*queue.last().unwrap_or(&root)];
        for _ in 0..8 {
            let far = ecc;
            let cand = queue
                .iter()
                .copied()
                .filter(|&x| level[x] == far)
                .min_by_key(|&x| adj[x].len())
                .unwrap_or(root);
            for &x in &queue {
                level[x] = usize::MAX;
            }
            bfs(cand, &mut level, &mut queue, &part);
            let e = level[*queue.last().unwrap_or(&cand)];
            let grew = e > ecc;
            ecc = e;
            if !grew {
                break;
            }
        }
        if reached < nodes.len() {
            // the part is not connected: split off the component just searched
            let comp: Vec<usize> = queue.clone();
            for &x in &queue {
                level[x] = usize::MAX;
            }
            let id_c = next_part;
            next_part += 1;
            for &x in &comp {
                part[x] = id_c;
            }
            let rest: Vec<usize> = nodes.iter().copied().filter(|&x| part[x] == id).collect();
            work.push(Work::Split(rest, id));
            work.push(Work::Split(comp, id_c));
            continue;
        }
        // the level holding the median weight is the separator
        let total: usize = nodes.iter().map(|&x| weights[x]).sum();
        let mut per_level = vec![0usize; ecc + 1];
        for &x in &queue {
            per_level[level[x]] += weights[x];
        }
        // the median level, or a lighter one with at least a quarter of the weight on each side
        let mut acc = 0;
        let mut median = 0;
        let mut best: Option<(usize, usize, usize)> = None; // (level weight, distance, level)
        for (l, &wl) in per_level.iter().enumerate() {
            if 2 * (acc + wl) > total && 2 * acc <= total {
                median = l;
            }
            if l > 0 && 4 * acc >= total && 4 * (total - acc - wl) >= total {
                let key = (wl, l.abs_diff(median), l);
                best = Some(best.map_or(key, |b| b.min(key)));
            }
            acc += wl;
        }
        let cut = best.map_or(median, |b| b.2);
        if ecc == 0 {
            // one node (a part larger than ND_LEAF always has an edge): nothing to split
            for &x in &queue {
                level[x] = usize::MAX;
                part[x] = usize::MAX;
            }
            work.push(Work::Emit(nodes));
            continue;
        }
        let cut = cut.clamp(1, ecc);
        let (id_a, id_b) = (next_part, next_part + 1);
        next_part += 2;
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut sep = Vec::new();
        for &x in &queue {
            let l = level[x];
            level[x] = usize::MAX;
            if l < cut {
                part[x] = id_a;
                a.push(x);
            } else if l > cut {
                part[x] = id_b;
                b.push(x);
            } else {
                part[x] = usize::MAX;
                sep.push(x);
            }
        }
        work.push(Work::Emit(sep));
        if !b.is_empty() {
            work.push(Work::Split(b, id_b));
        }
        if !a.is_empty() {
            work.push(Work::Split(a, id_a));
        }
    }
    out
}
// ANCHOR_END: nested_dissection

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

    fn grid(k: usize) -> Vec<Vec<usize>> {
        let id = |r: usize, c: usize| r * k + c;
        let mut adj = vec![Vec::new(); k * k];
        for r in 0..k {
            for c in 0..k {
                if r + 1 < k {
                    adj[id(r, c)].push(id(r + 1, c));
                    adj[id(r + 1, c)].push(id(r, c));
                }
                if c + 1 < k {
                    adj[id(r, c)].push(id(r, c + 1));
                    adj[id(r, c + 1)].push(id(r, c));
                }
            }
        }
        adj
    }

    #[test]
    fn orderings_are_permutations_and_a_path_has_no_fill_with_minimum_degree() {
        for n in [1, 2, 5, 40, 333] {
            let adj = path(n);
            let w = vec![1; n];
            for m in BlockOrdering::ALL {
                let p = order(m, &adj, &w).unwrap();
                check_permutation(&p, n).unwrap();
            }
            let md = order(BlockOrdering::MinimumDegree, &adj, &w).unwrap();
            assert_eq!(fill(&adj, &w, &md).unwrap().fill_blocks, 0);
            let nd = order(BlockOrdering::NestedDissection, &adj, &w).unwrap();
            assert!(fill(&adj, &w, &nd).unwrap().l_blocks <= 2 * n);
        }
    }

    #[test]
    fn grid_orderings_beat_natural() {
        let adj = grid(12);
        let w = vec![1; adj.len()];
        let nat = fill(&adj, &w, &order(BlockOrdering::Natural, &adj, &w).unwrap()).unwrap();
        for m in [BlockOrdering::MinimumDegree, BlockOrdering::NestedDissection] {
            let f = fill(&adj, &w, &order(m, &adj, &w).unwrap()).unwrap();
            assert!(f.l_blocks < nat.l_blocks, "{m:?}: {f:?} vs natural {nat:?}");
        }
    }

    #[test]
    fn bad_input_is_rejected() {
        assert!(order(BlockOrdering::MinimumDegree, &[vec![1], vec![]], &[1, 1]).is_err());
        assert!(order(BlockOrdering::MinimumDegree, &path(3), &[1, 0, 1]).is_err());
        assert!(fill(&path(3), &[1, 1, 1], &[0, 0, 1]).is_err());
    }
}
