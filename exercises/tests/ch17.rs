//! Grader of the exercises of "Sparse direct solves for SPOOK" (`src/ch17.rs`):
//! `cargo test -p exercises --test ch17`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).

use exercises::ch17;
use exercises::grade::{ensure, run, Check, Exercise, Rng};
use mbd::sparse::etree::{etree, permute_pattern};
use mbd::sparse::ordering::{fill, order, BlockOrdering};
use mbd::sparse::OpCount;
use mbd::spook::sparse::{block_graph, groups_of, SpookSparse};
use mbd::spook::{graph_scene, BodyGraph, StepSettings, Stepper};
use nalgebra::{DMatrix, DVector};

const H: f64 = 0.01;

/// The block graph (sizes, neighbours) and the assembled stepper of a scene.
/// Block sizes, block graph and the assembled stepper.
type Scene = (Vec<usize>, Vec<Vec<usize>>, Stepper);

fn scene(kind: BodyGraph, n: usize, seed: u64) -> Result<Scene, String> {
    let sys = graph_scene(kind, n, seed, 1e-6, 2.0 * H);
    let mut st = Stepper::new(&sys, H, StepSettings::default()).map_err(|e| format!("grader: {e}"))?;
    st.assemble(&sys);
    let (_, sizes, adj) = block_graph(st.nbody(), &groups_of(&st.rows));
    Ok((sizes, adj, st))
}

/// A random permutation of `0..n` (Fisher-Yates).
fn shuffle(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.int(0, i));
    }
    p
}

/// A random scene's block graph and an order: one of the library's orderings or a random one.
/// What the sample is, its block graph and an elimination order.
type Sample = (String, Vec<Vec<usize>>, Vec<usize>);

fn graph_and_order(rng: &mut Rng) -> Result<Sample, String> {
    let kind = BodyGraph::ALL[rng.int(0, BodyGraph::ALL.len() - 1)];
    let (sizes, adj, _) = scene(kind, rng.int(8, 40), rng.next_u64())?;
    let k = rng.int(0, BlockOrdering::ALL.len());
    let (what, perm) = if k == BlockOrdering::ALL.len() {
        ("a random order".to_string(), shuffle(rng, adj.len()))
    } else {
        let m = BlockOrdering::ALL[k];
        (
            format!("{m:?}"),
            order(m, &adj, &sizes).map_err(|e| format!("grader: {e}"))?,
        )
    };
    Ok((format!("{kind:?} graph of {} nodes, {what}", adj.len()), adj, perm))
}

fn etree_with(rng: &mut Rng, f: fn(&[Vec<usize>]) -> Vec<Option<usize>>) -> Check {
    for s in 0..12 {
        let (what, adj, perm) = graph_and_order(rng)?;
        let pa = permute_pattern(&adj, &perm);
        let ours = f(&pa);
        let lib = etree(&pa);
        ensure(
            ours.len() == lib.len(),
            format_args!("sample {s} ({what}): the number of parents"),
        )?;
        if let Some(j) = (0..lib.len()).find(|&j| ours[j] != lib[j]) {
            return Err(format!(
                "sample {s} ({what}): the parent of node {j} differs from the elimination tree's"
            ));
        }
    }
    Ok(())
}

fn etree_check(rng: &mut Rng) -> Check {
    etree_with(rng, ch17::exercise_1)
}

fn fill_with(rng: &mut Rng, f: fn(&[Vec<usize>], &[usize]) -> usize) -> Check {
    for s in 0..12 {
        let (what, adj, perm) = graph_and_order(rng)?;
        let sizes = vec![1; adj.len()];
        let lib = fill(&adj, &sizes, &perm).map_err(|e| format!("grader: {e}"))?;
        ensure(
            f(&adj, &perm) == lib.fill_blocks,
            format_args!("sample {s} ({what}): the number of fill blocks"),
        )?;
    }
    Ok(())
}

fn fill_check(rng: &mut Rng) -> Check {
    fill_with(rng, ch17::exercise_2)
}

fn chain_with(rng: &mut Rng, f: fn(usize) -> usize) -> Check {
    for n in [2, rng.int(3, 20), rng.int(21, 300)] {
        let (_, _, st) = scene(BodyGraph::Chain, n, rng.next_u64())?;
        let mut sp =
            SpookSparse::new(st.nbody(), &st.rows, BlockOrdering::MinimumDegree).map_err(|e| format!("grader: {e}"))?;
        sp.assemble(&st.mass, st.v.as_slice(), st.f.as_slice(), H, &st.rows);
        let mut ops = OpCount::default();
        let a = sp.a.clone();
        sp.mf.factor_from(&a, &mut ops).map_err(|e| format!("grader: {e}"))?;
        ensure(
            f(n) == ops.madd,
            format_args!("a chain of {n} bodies: the count against the multifrontal's counted multiply-adds"),
        )?;
    }
    Ok(())
}

fn chain_check(rng: &mut Rng) -> Check {
    chain_with(rng, ch17::exercise_3)
}

fn pivots_with(rng: &mut Rng, f: fn(&DMatrix<f64>, &[usize]) -> (usize, usize)) -> Check {
    // SPOOK's symmetric step matrix [[M, G^T], [G, -Sigma]]: 6 n positive and m negative pivots
    for kind in BodyGraph::ALL {
        let (_, _, st) = scene(kind, rng.int(3, 6), rng.next_u64())?;
        let (k, _) = st.block_system();
        let n6 = 6 * st.nbody();
        // k is [[M, -G^T], [G, Sigma]]: negate the lower rows, mirror them into the upper right
        let a = DMatrix::from_fn(k.nrows(), k.ncols(), |r, c| {
            if r >= n6 {
                -k[(r, c)]
            } else if c >= n6 {
                -k[(c, r)]
            } else {
                k[(r, c)]
            }
        });
        for t in 0..3 {
            let perm = shuffle(rng, a.nrows());
            ensure(
                f(&a, &perm) == (n6, st.rows.len()),
                format_args!("{kind:?} scene, order {t}: the signs of the step matrix's pivots"),
            )?;
        }
    }
    // symmetric matrices Q diag(lambda) Q^T of known inertia, whose diagonal does not show it
    for s in 0..6 {
        let n = rng.int(4, 12);
        let q = DMatrix::from_fn(n, n, |_, _| rng.uniform(-1.0, 1.0)).qr().q();
        let lambda: Vec<f64> = (0..n)
            .map(|_| rng.uniform(0.5, 2.0) * if rng.uniform(0.0, 1.0) < 0.5 { -1.0 } else { 1.0 })
            .collect();
        let a = &q * DMatrix::from_diagonal(&DVector::from_vec(lambda.clone())) * q.transpose();
        let a = (&a + a.transpose()) * 0.5;
        let want = (
            lambda.iter().filter(|&&l| l > 0.0).count(),
            lambda.iter().filter(|&&l| l < 0.0).count(),
        );
        let perm = shuffle(rng, n);
        ensure(
            f(&a, &perm) == want,
            format_args!("random symmetric matrix {s} ({n} x {n}): the signs of the pivots against its eigenvalues"),
        )?;
    }
    Ok(())
}

fn pivots_check(rng: &mut Rng) -> Check {
    pivots_with(rng, ch17::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch17",
        "Sparse direct solves for SPOOK",
        17,
        &[
            Exercise {
                number: 1,
                title: "The elimination tree by elimination",
                hint: "keep the graph as sets; at node j take its neighbours greater than j, join them pairwise, and the smallest is the parent",
                check: etree_check,
            },
            Exercise {
                number: 2,
                title: "Fill by elimination",
                hint: "renumber so that perm[k] becomes k, play the same game, and count each new undirected edge once",
                check: fill_check,
            },
            Exercise {
                number: 3,
                title: "The chain in closed form",
                hint: "the fronts are body + hinge (r = 11, s = 6), hinge + next body (r = 11, s = 5), and the last hinge alone (r = s = 5)",
                check: chain_check,
            },
            Exercise {
                number: 4,
                title: "Signs of the pivots",
                hint: "after each pivot subtract w_rj w_jc / d from the whole trailing matrix; count the pivots' signs, not the diagonal's",
                check: pivots_check,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them (run by
/// `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_on;

    #[test]
    fn a_tree_without_the_fill_fails() {
        assert!(fails_on(0..3, |rng| etree_with(rng, |adj| {
            (0..adj.len())
                .map(|j| adj[j].iter().copied().filter(|&i| i > j).min())
                .collect()
        })));
    }

    #[test]
    fn fill_counted_in_the_natural_order_fails() {
        assert!(fails_on(0..3, |rng| fill_with(rng, |adj, perm| {
            let natural: Vec<usize> = (0..perm.len()).collect();
            fill(adj, &vec![1; adj.len()], &natural).unwrap().fill_blocks
        })));
    }

    #[test]
    fn a_chain_without_its_root_front_fails() {
        assert!(fails_on(0..3, |rng| chain_with(rng, |n| {
            let front = |r: usize, s: usize| (0..s).map(|c| (r - c - 1) * (r - c) / 2).sum::<usize>();
            n * front(11, 6) + (n - 1) * front(11, 5)
        })));
    }

    #[test]
    fn the_signs_of_the_diagonal_fail() {
        assert!(fails_on(0..3, |rng| pivots_with(rng, |a, _| {
            let d = a.diagonal();
            (
                d.iter().filter(|&&x| x > 0.0).count(),
                d.iter().filter(|&&x| x < 0.0).count(),
            )
        })));
    }
}
