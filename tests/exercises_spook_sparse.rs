//! Exercises of the chapter "Sparse direct solves for SPOOK" (book/src/spook_sparse.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_spook_sparse`.

use mbd::sparse::etree::{etree, permute_pattern};
use mbd::sparse::ordering::{fill, order, BlockOrdering};
use mbd::sparse::OpCount;
use mbd::spook::sparse::{block_graph, groups_of, SpookSparse};
use mbd::spook::{graph_scene, BodyGraph, StepSettings, Stepper};
use nalgebra::DMatrix;
use std::collections::BTreeSet;

const H: f64 = 0.01;

/// The block graph (sizes, neighbours) of a scene.
fn scene(kind: BodyGraph, n: usize, seed: u64) -> (Vec<usize>, Vec<Vec<usize>>, Stepper) {
    let sys = graph_scene(kind, n, seed, 1e-6, 2.0 * H);
    let mut st = Stepper::new(&sys, H, StepSettings::default()).unwrap();
    st.assemble(&sys);
    let (_, sizes, adj) = block_graph(st.nbody(), &groups_of(&st.rows));
    (sizes, adj, st)
}

/// Exercise 1: the elimination tree from its definition, by playing the elimination on the
/// graph: eliminating node j joins all its later neighbours into a clique, and `parent(j)` is
/// the smallest of them (the first nonzero below the diagonal in column j of L).
fn exercise_1_answer(adj: &[Vec<usize>]) -> Vec<Option<usize>> {
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

#[test]
fn exercise_1_elimination_tree_by_elimination() {
    for kind in BodyGraph::ALL {
        for m in BlockOrdering::ALL {
            let (sizes, adj, _) = scene(kind, 30, 2);
            let perm = order(m, &adj, &sizes).unwrap();
            let pa = permute_pattern(&adj, &perm);
            assert_eq!(exercise_1_answer(&pa), etree(&pa), "{kind:?} {m:?}");
        }
    }
}

/// Exercise 2: the number of fill blocks of an ordering, by the same game: count the edges the
/// cliques add that the graph did not have.
fn exercise_2_answer(adj: &[Vec<usize>], perm: &[usize]) -> usize {
    let pa = permute_pattern(adj, perm);
    let mut g: Vec<BTreeSet<usize>> = pa.iter().map(|r| r.iter().copied().collect()).collect();
    let mut added = 0;
    for j in 0..pa.len() {
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

#[test]
fn exercise_2_fill_by_elimination() {
    for kind in BodyGraph::ALL {
        for m in BlockOrdering::ALL {
            let (sizes, adj, _) = scene(kind, 40, 3);
            let perm = order(m, &adj, &sizes).unwrap();
            let f = fill(&adj, &sizes, &perm).unwrap();
            assert_eq!(exercise_2_answer(&adj, &perm), f.fill_blocks, "{kind:?} {m:?}");
        }
    }
}

/// Exercise 3: the multiply-adds of the multifrontal factorization of a hinge chain of `n`
/// bodies in the minimum-degree order. A front of `r` rows whose first `s` columns are
/// eliminated costs `sum_{c < s} (r - c - 1)(r - c) / 2`. In the minimum-degree order every
/// body (6 rows) is eliminated in a front with one hinge (5 rows), `r = 11, s = 6`, 200
/// multiply-adds; every hinge but one in a front with one body, `r = 11, s = 5`, 185; the last
/// hinge is the root, alone in its front, `r = s = 5`, 20.
fn exercise_3_answer(n: usize) -> usize {
    let front = |r: usize, s: usize| (0..s).map(|c| (r - c - 1) * (r - c) / 2).sum::<usize>();
    n * front(11, 6) + (n - 1) * front(11, 5) + front(5, 5)
}

#[test]
fn exercise_3_chain_cost_in_closed_form() {
    for n in [2, 3, 10, 77, 500] {
        let (_, _, st) = scene(BodyGraph::Chain, n, 1);
        let mut sp = SpookSparse::new(st.nbody(), &st.rows, BlockOrdering::MinimumDegree).unwrap();
        sp.assemble(&st.mass, st.v.as_slice(), st.f.as_slice(), H, &st.rows);
        let mut ops = OpCount::default();
        let a = sp.a.clone();
        sp.mf.factor_from(&a, &mut ops).unwrap();
        assert_eq!(exercise_3_answer(n), ops.madd, "chain of {n}");
    }
}

/// Exercise 4: the signs of the pivots. Factor the symmetric step matrix `[[M, G^T], [G, -Sigma]]`
/// by a dense `L D L^T` without pivoting in the order `perm` and return the numbers of positive
/// and negative pivots. For a quasi-definite matrix they are `6 nbody` and `m` in every order.
fn exercise_4_answer(a: &DMatrix<f64>, perm: &[usize]) -> (usize, usize) {
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
        // the Schur complement of the pivot, on the whole (symmetric) trailing matrix
        for r in j + 1..n {
            for c in j + 1..n {
                w[(r, c)] -= w[(r, j)] * w[(j, c)] / d;
            }
        }
    }
    (pos, neg)
}

#[test]
fn exercise_4_quasi_definite_pivot_signs() {
    let mut seed = 9u64;
    let mut rnd = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    for kind in BodyGraph::ALL {
        let (_, _, st) = scene(kind, 6, 4);
        let (k, _) = st.block_system();
        // symmetrize [[M, -G^T], [G, Sigma]] into [[M, G^T], [G, -Sigma]]
        let n6 = 6 * st.nbody();
        let a = DMatrix::from_fn(
            k.nrows(),
            k.ncols(),
            |r, c| if r >= n6 { -k[(r, c)] } else { k[(r, c)] },
        );
        let a = DMatrix::from_fn(a.nrows(), a.ncols(), |r, c| {
            if r < n6 && c >= n6 {
                a[(c, r)]
            } else {
                a[(r, c)]
            }
        });
        for _ in 0..5 {
            // a random symmetric order (Fisher-Yates)
            let mut perm: Vec<usize> = (0..a.nrows()).collect();
            for i in (1..perm.len()).rev() {
                perm.swap(i, rnd() % (i + 1));
            }
            assert_eq!(exercise_4_answer(&a, &perm), (n6, st.rows.len()), "{kind:?}");
        }
    }
}
