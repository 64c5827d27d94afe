//! Exercises of the chapter "Sparse direct solves for SPOOK" (`book/src/spook_sparse.md`).
//! Grade them with `cargo test -p exercises --test ch17`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use nalgebra::DMatrix;

/// Exercise 1, the elimination tree by elimination: `adj[j]` lists the neighbours of node `j` of
/// a block graph (symmetric, no self-loops). Play the elimination in the order `0, 1, ...`:
/// eliminating node `j` joins all its later neighbours into a clique. Return the parent of every
/// node, the smallest of its later neighbours at its elimination (`None` for a root). Do not call
/// `mbd::sparse::etree`.
pub fn exercise_1(adj: &[Vec<usize>]) -> Vec<Option<usize>> {
    todo!()
}

/// Exercise 2, fill by elimination: the number of edges the cliques of that game add to the
/// graph (`adj` as above) when the nodes are eliminated in the order `perm` (`perm[k]` is the
/// node eliminated `k`-th). Do not call `mbd::sparse::ordering::fill`.
pub fn exercise_2(adj: &[Vec<usize>], perm: &[usize]) -> usize {
    todo!()
}

/// Exercise 3, the chain in closed form: the multiply-adds of the multifrontal factorization of
/// SPOOK's step matrix for a chain of `n` bodies joined by hinges (the first hinged to the world),
/// in the minimum-degree order. A front of `r` rows whose first `s` columns are eliminated costs
/// `sum_{c < s} (r - c - 1)(r - c) / 2` multiply-adds.
pub fn exercise_3(n: usize) -> usize {
    todo!()
}

/// Exercise 4, signs of the pivots: factor the symmetric matrix `a` by a dense `L D L^T`
/// without pivoting, in the order `perm` (row and column `perm[k]` of `a` eliminated `k`-th), and
/// return the numbers of positive and negative pivots.
pub fn exercise_4(a: &DMatrix<f64>, perm: &[usize]) -> (usize, usize) {
    todo!()
}
