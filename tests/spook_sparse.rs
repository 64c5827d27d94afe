//! SPOOK's sparse direct solve (`mbd::sparse::{ordering, multifrontal}`, `mbd::spook::sparse`;
//! book chapter "Sparse direct solves for SPOOK"), held against independent routes:
//!
//! - the sparse solution of the step's system equals nalgebra's dense LU of the whole block
//!   system (`Stepper::block_system`) to 1e-10 relative, on random chains, trees, ladders and
//!   grids of bodies, in all three orderings (property test);
//! - the block elimination tree equals its definition `parent(j) = min{i > j : L_ij != 0}` read
//!   off a dense, pattern-blind `L D L^T` of the permuted matrix, and the symbolic pattern of `L`
//!   equals the dense factor's nonzero blocks;
//! - minimum degree never fills more than the natural order on the test graphs, and its fill is
//!   within a stated ratio of SuiteSparse's AMD on the same graphs (`tests/fixtures/amd_fill.json`,
//!   made by `tests/fixtures/make_amd_fixtures.py`); the symbolic count of AMD's own permutation
//!   equals the fixture's independent Python count exactly;
//! - the multifrontal operation count is linear in the number of bodies on chains and trees
//!   (counts, not times);
//! - a singular system (`Sigma = 0` with a redundant constraint) is an error naming the row,
//!   while `Sigma = 0` without redundancy still solves (the KKT-safe order).
//!
//! Run with `cargo test --release --test spook_sparse`.

use mbd::sparse::etree::{etree, permute_pattern, symbolic};
use mbd::sparse::ordering::{fill, order, BlockOrdering};
use mbd::sparse::{BlockSymbolic, Multifrontal, OpCount};
use mbd::spook::sparse::{block_graph, groups_of, SpookSparse};
use mbd::spook::{graph_scene, BodyGraph, SpookSolver, SpookSystem, StepSettings, Stepper};
use mbd::Error;
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

const H: f64 = 0.01;

/// A stepper assembled at the scene's state.
fn assembled(sys: &SpookSystem, solver: SpookSolver, ordering: BlockOrdering) -> Stepper {
    let settings = StepSettings {
        solver,
        ordering,
        ..Default::default()
    };
    let mut st = Stepper::new(sys, H, settings).unwrap();
    st.assemble(sys);
    st
}

/// The sparse solution against nalgebra's dense LU (partial pivoting, plus one step of
/// iterative refinement, as the sparse solve does) of `[[M, -G^T], [G, Sigma]]`: the max
/// relative difference of `v_next` and of `lambda`, and the sparse solve's relative residual.
fn sparse_vs_dense_with_residual(sys: &SpookSystem, ordering: BlockOrdering) -> (f64, f64) {
    let mut st = assembled(sys, SpookSolver::Sparse, ordering);
    st.solve_sparse().unwrap();
    let residual = st.sparse.as_mut().unwrap().relative_residual();
    let x = DVector::from_iterator(
        st.v_next.len() + st.lambda.len(),
        st.v_next.iter().chain(st.lambda.iter()).copied(),
    );
    let (k, rhs) = st.block_system();
    let lu = k.clone().lu();
    let mut xd = lu.solve(&rhs).unwrap();
    let r = &rhs - &k * &xd;
    xd += lu.solve(&r).unwrap();
    let n6 = st.v_next.len();
    let rel = |a: nalgebra::DVectorView<f64>, b: nalgebra::DVectorView<f64>| (a - b).amax() / b.amax().max(1e-300);
    let d = rel(x.rows(0, n6), xd.rows(0, n6)).max(rel(x.rows(n6, x.len() - n6), xd.rows(n6, x.len() - n6)));
    (d, residual)
}

fn sparse_vs_dense(sys: &SpookSystem, ordering: BlockOrdering) -> f64 {
    sparse_vs_dense_with_residual(sys, ordering).0
}

fn graph() -> impl Strategy<Value = BodyGraph> {
    prop_oneof![
        Just(BodyGraph::Chain),
        Just(BodyGraph::Tree),
        Just(BodyGraph::Ladder),
        Just(BodyGraph::Grid)
    ]
}

fn ordering() -> impl Strategy<Value = BlockOrdering> {
    prop_oneof![
        Just(BlockOrdering::Natural),
        Just(BlockOrdering::MinimumDegree),
        Just(BlockOrdering::NestedDissection)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn sparse_equals_dense(kind in graph(), n in 2usize..60, seed in any::<u64>(), ord in ordering(),
                           log_eps in -8.0f64..-3.0) {
        let sys = graph_scene(kind, n, seed, 10f64.powf(log_eps), 2.0 * H);
        let (d, res) = sparse_vs_dense_with_residual(&sys, ord);
        prop_assert!(d < 1e-10, "{kind:?} n {n} {ord:?}: relative difference {d:.2e}");
        prop_assert!(res < 1e-14, "{kind:?} n {n} {ord:?}: relative residual {res:.2e}");
    }

    /// Stiffer joints (`epsilon` down to 1e-12): the difference to the dense solve is bounded
    /// by the conditioning (both are then only as good as `cond(K) eps`), but the sparse solve's
    /// residual stays at roundoff.
    #[test]
    fn sparse_residual_is_roundoff_for_stiff_joints(kind in graph(), n in 2usize..60, seed in any::<u64>(),
                                                    ord in ordering(), log_eps in -12.0f64..-8.0) {
        let sys = graph_scene(kind, n, seed, 10f64.powf(log_eps), 2.0 * H);
        let (_, res) = sparse_vs_dense_with_residual(&sys, ord);
        prop_assert!(res < 1e-14, "{kind:?} n {n} {ord:?}: relative residual {res:.2e}");
    }
}

/// A dense `L D L^T` without pivoting, pattern-blind (every entry computed).
fn dense_ldlt(a: &DMatrix<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let n = a.nrows();
    let mut l = DMatrix::identity(n, n);
    let mut d = DVector::zeros(n);
    for j in 0..n {
        let mut djj = a[(j, j)];
        for k in 0..j {
            djj -= l[(j, k)] * l[(j, k)] * d[k];
        }
        d[j] = djj;
        for i in j + 1..n {
            let mut x = a[(i, j)];
            for k in 0..j {
                x -= l[(i, k)] * l[(j, k)] * d[k];
            }
            l[(i, j)] = x / djj;
        }
    }
    (l, d)
}

/// The symmetric matrix `[[M, G^T], [G, -Sigma]]` of a stepper, permuted into the block order of
/// `sp`, and the block offsets.
fn permuted_kkt(st: &Stepper, sp: &SpookSparse) -> (DMatrix<f64>, Vec<usize>) {
    let (k, _) = st.block_system();
    let n6 = 6 * st.nbody();
    // symmetrize: negate the constraint rows (unknown mu = -lambda)
    let mut a = k.clone();
    for r in n6..a.nrows() {
        for c in 0..a.ncols() {
            a[(r, c)] = if c >= n6 { -k[(r, c)] } else { k[(r, c)] };
        }
    }
    for r in 0..n6 {
        for c in n6..a.ncols() {
            a[(r, c)] = -k[(r, c)];
        }
    }
    // scalar indices of every node in the natural layout, in block order
    let mut idx = Vec::new();
    let mut offsets = vec![0];
    for node in &sp.nodes {
        match node {
            mbd::spook::sparse::SpookNode::Body(i) => idx.extend(6 * i..6 * i + 6),
            mbd::spook::sparse::SpookNode::Group(g) => {
                let grp = &sp.groups[*g];
                idx.extend(n6 + grp.first..n6 + grp.first + grp.rows);
            }
        }
        offsets.push(idx.len());
    }
    let p = DMatrix::from_fn(idx.len(), idx.len(), |r, c| a[(idx[r], idx[c])]);
    (p, offsets)
}

#[test]
fn elimination_tree_and_pattern_match_the_dense_factor() {
    for (kind, n) in [
        (BodyGraph::Chain, 7),
        (BodyGraph::Tree, 12),
        (BodyGraph::Ladder, 10),
        (BodyGraph::Grid, 16),
    ] {
        for ord in BlockOrdering::ALL {
            let sys = graph_scene(kind, n, 5, 1e-6, 2.0 * H);
            let st = assembled(&sys, SpookSolver::Sparse, ord);
            let sp = SpookSparse::new(st.nbody(), &st.rows, ord).unwrap();
            let (a, offs) = permuted_kkt(&st, &sp);
            let (l, _) = dense_ldlt(&a);
            let nb = offs.len() - 1;
            let nonzero = |i: usize, j: usize| {
                (offs[i]..offs[i + 1]).any(|r| (offs[j]..offs[j + 1]).any(|c| l[(r, c)].abs() > 1e-14))
            };
            let sym = &sp.mf.ldlt.symbolic;
            for j in 0..nb {
                let by_definition = (j + 1..nb).find(|&i| nonzero(i, j));
                assert_eq!(sym.parent[j], by_definition, "{kind:?} {ord:?}: parent of block {j}");
                let dense_pattern: Vec<usize> = (j + 1..nb).filter(|&i| nonzero(i, j)).collect();
                assert_eq!(sym.pattern[j], dense_pattern, "{kind:?} {ord:?}: pattern of column {j}");
            }
        }
    }
}

#[test]
fn minimum_degree_never_fills_more_than_natural() {
    for kind in BodyGraph::ALL {
        for n in [5, 30, 200, 900] {
            for seed in 0..3 {
                let sys = graph_scene(kind, n, seed, 1e-6, 2.0 * H);
                let st = assembled(&sys, SpookSolver::Sparse, BlockOrdering::MinimumDegree);
                let (_, sizes, adj) = block_graph(st.nbody(), &groups_of(&st.rows));
                let cost = |m| fill(&adj, &sizes, &order(m, &adj, &sizes).unwrap()).unwrap();
                let (nat, md) = (cost(BlockOrdering::Natural), cost(BlockOrdering::MinimumDegree));
                assert!(
                    md.l_blocks <= nat.l_blocks && md.l_scalars <= nat.l_scalars,
                    "{kind:?} n {n}: minimum degree {md:?} vs natural {nat:?}"
                );
                if kind == BodyGraph::Chain {
                    assert_eq!(md.fill_blocks, 0, "{kind:?} n {n}: a chain needs no fill");
                }
                if kind == BodyGraph::Tree {
                    // counted in blocks (unit weights) minimum degree takes leaves first: no fill
                    let ones = vec![1; sizes.len()];
                    let unit = fill(&adj, &sizes, &order(BlockOrdering::MinimumDegree, &adj, &ones).unwrap()).unwrap();
                    assert_eq!(
                        unit.fill_blocks, 0,
                        "{kind:?} n {n}: unit-weight minimum degree on a tree"
                    );
                }
            }
        }
    }
}

#[derive(serde::Deserialize)]
struct AmdGraph {
    name: String,
    sizes: Vec<usize>,
    edges: Vec<[usize; 2]>,
    amd_perm: Vec<usize>,
    amd_block_nnz_l: usize,
    natural_block_nnz_l: usize,
    amd_scalar_nnz_l: usize,
}

#[derive(serde::Deserialize)]
struct AmdFixture {
    graphs: Vec<AmdGraph>,
}

/// Our minimum degree may fill at most this factor more than SuiteSparse's AMD (blocks of `L` on
/// the block graph, and scalars of `L` with block weights against AMD on the scalar matrix).
const AMD_RATIO: f64 = 1.10;

#[test]
fn minimum_degree_fill_is_close_to_suitesparse_amd() {
    let text = std::fs::read_to_string("tests/fixtures/amd_fill.json").unwrap();
    let fx: AmdFixture = serde_json::from_str(&text).unwrap();
    assert!(fx.graphs.len() >= 10);
    for g in &fx.graphs {
        let n = g.sizes.len();
        let mut adj = vec![Vec::new(); n];
        for &[a, b] in &g.edges {
            adj[a].push(b);
            adj[b].push(a);
        }
        let ones = vec![1; n];
        // our symbolic count of AMD's permutation and of the natural order: the same as the
        // fixture's independent Python count
        let amd = fill(&adj, &ones, &g.amd_perm).unwrap();
        assert_eq!(
            amd.l_blocks, g.amd_block_nnz_l,
            "{}: symbolic count of AMD's order",
            g.name
        );
        let nat = fill(&adj, &ones, &(0..n).collect::<Vec<_>>()).unwrap();
        assert_eq!(nat.l_blocks, g.natural_block_nnz_l, "{}: natural order", g.name);
        // our minimum degree, unit weights, against AMD on the block graph
        let md = fill(&adj, &ones, &order(BlockOrdering::MinimumDegree, &adj, &ones).unwrap()).unwrap();
        let ratio = md.l_blocks as f64 / g.amd_block_nnz_l as f64;
        // block weights (scalar rows) against AMD on the expanded scalar matrix
        let mdw = fill(
            &adj,
            &g.sizes,
            &order(BlockOrdering::MinimumDegree, &adj, &g.sizes).unwrap(),
        )
        .unwrap();
        let sratio = mdw.l_scalars as f64 / g.amd_scalar_nnz_l as f64;
        if std::env::var("MBD_PROP_REPORT").is_ok() {
            println!(
                "{}: nnz(L) blocks md {} amd {} ({ratio:.3}); scalars md {} amd {} ({sratio:.3})",
                g.name, md.l_blocks, g.amd_block_nnz_l, mdw.l_scalars, g.amd_scalar_nnz_l
            );
        }
        assert!(
            md.l_blocks <= nat.l_blocks,
            "{}: minimum degree fills more than natural",
            g.name
        );
        assert!(ratio <= AMD_RATIO, "{}: block fill ratio {ratio:.3} to AMD", g.name);
        assert!(sratio <= AMD_RATIO, "{}: scalar fill ratio {sratio:.3} to AMD", g.name);
    }
}

/// Multiply-adds of one multifrontal factorization of the scene's step system.
fn factor_madds(kind: BodyGraph, n: usize) -> usize {
    let sys = graph_scene(kind, n, 11, 1e-6, 2.0 * H);
    let st = assembled(&sys, SpookSolver::Sparse, BlockOrdering::MinimumDegree);
    let mut sp = SpookSparse::new(st.nbody(), &st.rows, BlockOrdering::MinimumDegree).unwrap();
    sp.assemble(&st.mass, st.v.as_slice(), st.f.as_slice(), H, &st.rows);
    let mut ops = OpCount::default();
    let a = sp.a.clone();
    sp.mf.factor_from(&a, &mut ops).unwrap();
    assert_eq!(
        ops.madd, sp.fill.madds,
        "counted multiply-adds equal the symbolic prediction"
    );
    ops.madd
}

#[test]
fn operation_count_is_linear_on_chains_and_trees() {
    // chains: every body and joint costs the same, so the count is affine in n exactly
    let c: Vec<usize> = [1000, 2000, 4000, 8000]
        .iter()
        .map(|&n| factor_madds(BodyGraph::Chain, n))
        .collect();
    let per = c[1] - c[0];
    assert_eq!(c[2] - c[1], 2 * per, "chain: counts {c:?}");
    assert_eq!(c[3] - c[2], 4 * per, "chain: counts {c:?}");
    // trees of bounded degree: count per body within 10 % between 1,000 and 16,000 bodies
    let per_body: Vec<f64> = [1000, 4000, 16000]
        .iter()
        .map(|&n| factor_madds(BodyGraph::Tree, n) as f64 / n as f64)
        .collect();
    let (lo, hi) = per_body
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(hi / lo < 1.1, "tree: multiply-adds per body {per_body:?}");
}

#[test]
fn natural_order_on_a_tree_is_not_linear() {
    // the contrast the chapter draws: bodies first, then joints, fills a tree's factor
    let sys = graph_scene(BodyGraph::Tree, 400, 3, 1e-6, 2.0 * H);
    let st = assembled(&sys, SpookSolver::Sparse, BlockOrdering::Natural);
    let (_, sizes, adj) = block_graph(st.nbody(), &groups_of(&st.rows));
    let nat = fill(&adj, &sizes, &(0..adj.len()).collect::<Vec<_>>()).unwrap();
    let md = fill(
        &adj,
        &sizes,
        &order(BlockOrdering::MinimumDegree, &adj, &sizes).unwrap(),
    )
    .unwrap();
    assert!(
        nat.madds > 20 * md.madds,
        "natural {} vs minimum degree {}",
        nat.madds,
        md.madds
    );
}

/// A chain with its third joint duplicated: redundant rows.
fn redundant_chain(epsilon: f64) -> SpookSystem {
    let mut sys = graph_scene(BodyGraph::Chain, 6, 1, epsilon, 2.0 * H);
    let dup = sys.constraints[2].clone();
    sys.add_constraint(dup);
    sys
}

#[test]
fn singular_system_is_reported_and_regularized_one_solves() {
    // Sigma = 0 with a redundant joint: the error names a constraint row
    let mut sys = redundant_chain(0.0);
    let mut st = Stepper::new(
        &sys,
        H,
        StepSettings {
            solver: SpookSolver::Sparse,
            ..Default::default()
        },
    )
    .unwrap();
    let e = st.step(&mut sys).unwrap_err();
    assert!(matches!(e, Error::Singular { .. }), "{e}");
    assert!(e.to_string().contains("constraint 'joint 1 - 2'"), "{e}");
    // Sigma = 0 without redundancy: the KKT-safe order solves it, equal to the dense LU
    let sys = graph_scene(BodyGraph::Tree, 16, 2, 0.0, 2.0 * H);
    let d = sparse_vs_dense(&sys, BlockOrdering::MinimumDegree);
    assert!(d < 1e-10, "{d:e}");
    // Sigma > 0 with the redundant joint: quasi-definite, solves like the dense LU
    let sys = redundant_chain(1e-6);
    let d = sparse_vs_dense(&sys, BlockOrdering::MinimumDegree);
    assert!(d < 1e-9, "{d:e}");
}

#[test]
fn auto_switches_to_sparse_and_steps_like_schur() {
    let mut a = graph_scene(BodyGraph::Ladder, 20, 4, 1e-6, 2.0 * H);
    let mut b = a.clone();
    let mut sa = Stepper::new(&a, H, StepSettings::default()).unwrap();
    let mut sb = Stepper::new(
        &b,
        H,
        StepSettings {
            solver: SpookSolver::Schur,
            ..Default::default()
        },
    )
    .unwrap();
    for _ in 0..50 {
        sa.step(&mut a).unwrap();
        sb.step(&mut b).unwrap();
    }
    assert!(sa.sparse.is_some(), "Auto used the sparse solve");
    let d = a
        .bodies
        .iter()
        .zip(&b.bodies)
        .map(|(x, y)| (x.x - y.x).amax())
        .fold(0.0, f64::max);
    assert!(d < 1e-9, "positions after 50 steps differ by {d:e}");
}

#[test]
fn multifrontal_on_a_given_pattern_matches_symbolic_etree() {
    // the symbolic structure the multifrontal uses is etree + symbolic of the permuted graph
    let sys = graph_scene(BodyGraph::Grid, 25, 0, 1e-6, 2.0 * H);
    let st = assembled(&sys, SpookSolver::Sparse, BlockOrdering::NestedDissection);
    let (_, sizes, adj) = block_graph(st.nbody(), &groups_of(&st.rows));
    let perm = order(BlockOrdering::NestedDissection, &adj, &sizes).unwrap();
    let pa = permute_pattern(&adj, &perm);
    let ps: Vec<usize> = perm.iter().map(|&o| sizes[o]).collect();
    let mf = Multifrontal::new(BlockSymbolic::new(&ps, &pa).unwrap());
    assert_eq!(mf.ldlt.symbolic.parent, etree(&pa));
    assert_eq!(mf.ldlt.symbolic.pattern, symbolic(&pa, &etree(&pa)));
    assert!(mf.plan.max_front <= 6 + mf.plan.front_rows.iter().copied().max().unwrap());
}

/// The sparse-factorization chapter's dof parent array is the elimination tree of `H`: `H`'s
/// structural pattern is the ancestor relation (every numeric nonzero of `H` lies on it, checked
/// here); number the dofs leaves first (`k -> n - 1 - k`, the order Featherstone's `L^T D L`
/// eliminates in), and `etree` of that pattern gives back `dof_parent`, renumbered, with no fill.
#[test]
fn dof_parent_is_the_elimination_tree_of_h() {
    use mbd::model::canned;
    use mbd::sparse::is_ancestor_or_self;
    for model in [
        canned::chain(7, true),
        canned::binary_tree(4),
        canned::floating_base_ball_arms(),
    ] {
        let n = model.nv;
        let q: Vec<f64> = model
            .qpos0
            .iter()
            .enumerate()
            .map(|(k, x)| x + 0.01 * k as f64)
            .collect();
        let h = mbd::dynamics::crba(&model, &q).unwrap();
        let related = |i: usize, j: usize| {
            is_ancestor_or_self(&model.dof_parent, i, j) || is_ancestor_or_self(&model.dof_parent, j, i)
        };
        for i in 0..n {
            for j in 0..n {
                assert!(
                    related(i, j) || h[(i, j)] == 0.0,
                    "{}: H[{i}][{j}] off the pattern",
                    model.name
                );
            }
        }
        let adj: Vec<Vec<usize>> = (0..n)
            .map(|i| (0..n).filter(|&j| j != i && related(i, j)).collect())
            .collect();
        let rev: Vec<usize> = (0..n).rev().collect();
        let pa = permute_pattern(&adj, &rev);
        let parent = etree(&pa);
        for k in 0..n {
            let dof = n - 1 - k;
            let expected = model.dof_parent[dof].map(|p| n - 1 - p);
            assert_eq!(parent[k], expected, "{}: dof {dof}", model.name);
        }
        // leaves first there is no fill: the pattern of L is H's
        let pat = symbolic(&pa, &parent);
        for (j, col) in pat.iter().enumerate() {
            let lower: Vec<usize> = pa[j].iter().copied().filter(|&i| i > j).collect();
            assert_eq!(col, &lower, "{}: column {j}", model.name);
        }
    }
}

/// The loops II ladder (Featherstone 8.13's sparse matrix method) factored by the same
/// multifrontal machinery in its banded order: the same solution as the right-looking kernel.
#[test]
fn ladder_of_the_sparse_matrix_method_factors_by_fronts() {
    use mbd::loops::{Ordering, SparseMethod};
    use mbd::model::loop_models::{ladder, sample_state};
    for rungs in [3, 10, 40] {
        let m = ladder(rungs, 0.5, 0.3).unwrap();
        let (q, qd) = sample_state(&m);
        let tau = vec![0.1; m.nv];
        let mut right = SparseMethod::new(&m, Ordering::Banded).unwrap();
        right.assemble(&m, &q, &qd, &tau, None, None);
        let k = right.dense_matrix();
        let b = DVector::from_vec(right.rhs.clone());
        let mut fronts = right.clone();
        let mut mf = fronts.multifrontal();
        right.solve_in_place(&mut OpCount::default()).unwrap();
        fronts
            .solve_multifrontal_in_place(&mut mf, &mut OpCount::default())
            .unwrap();
        let (x1, x2) = (
            DVector::from_vec(right.rhs.clone()),
            DVector::from_vec(fronts.rhs.clone()),
        );
        // (8.64) has a zero (2,2) block: without pivoting its elimination is not backward stable
        // to the last bit (about 1e-14 at 40 rungs for either kernel), hence 1e-13
        for (name, x) in [("right-looking", &x1), ("multifrontal", &x2)] {
            let res = (&k * x - &b).amax() / (k.amax() * x.amax());
            assert!(res < 1e-13, "{rungs} rungs, {name}: relative residual {res:e}");
        }
        // the two differ only by rounding, amplified by the conditioning of the KKT matrix
        let d = (&x1 - &x2).amax() / x1.amax();
        assert!(d < 1e-10, "{rungs} rungs: relative difference {d:e}");
    }
}
