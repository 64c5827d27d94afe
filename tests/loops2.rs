//! Closed-loop systems II (Featherstone 8.8-8.13): clusters, loop-closure functions, the sparse
//! matrix method on ladders.

mod common;

use mbd::dynamics::{aba, crba};
use mbd::loops::{
    assemble, assemble_with, bias_minus_active, body_accelerations, forward_dynamics, loop_clusters, loop_constraints,
    loop_properties, null_space, null_space_clustered, null_space_opts, null_space_with, simulate, simulate_gamma,
    spanning_tree_counted, sparse_forward_dynamics, y_signal, Figure83Closure, Inconsistency, LoopClosure, Method,
    NumericalClosure, Ordering, PivotOptions, PivotTol, SimulateOptions, SparseMethod, LOOP_ERROR,
};
use mbd::model::canned::{binary_tree, chain, floating_base_ball_arms};
use mbd::model::loop_models::{four_loops, ladder, parallelogram, parallelogram_branches};
use mbd::model::mechanisms::{self, figure_8_3};
use mbd::model::Model;
use mbd::sparse::{BlockLdlt, BlockSymbolic, OpCount};
use nalgebra::{DMatrix, DVector};

/// A random state near qpos0 (not closed: the comparison holds at any state).
fn random_state(m: &Model, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut s = seed;
    let mut rnd = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let mut q = m.qpos0.as_slice().to_vec();
    let dq: Vec<f64> = (0..m.nv).map(|_| 0.2 * rnd()).collect();
    m.integrate(&mut q, &dq, 1.0).unwrap();
    let qd: Vec<f64> = (0..m.nv).map(|_| rnd()).collect();
    (q, qd)
}

#[test]
fn sparse_method_matches_the_spanning_tree_method_on_ladders() {
    for n in [2usize, 3, 5, 10, 20, 50] {
        let m = ladder(n, 0.5, 0.3).unwrap();
        let (q, qd) = random_state(&m, n as u64);
        let tau: Vec<f64> = (0..m.nv).map(|i| 0.1 * ((i % 7) as f64 - 3.0)).collect();
        for t_stab in [None, Some(0.05)] {
            let st = forward_dynamics(&m, &q, &qd, &tau, None, Method::LambdaFirst, t_stab).unwrap();
            let a_ref = body_accelerations(&m, &q, &qd, st.qdd.as_slice()).unwrap();
            for ord in [Ordering::Banded, Ordering::Natural] {
                let sp = sparse_forward_dynamics(&m, &q, &qd, &tau, None, t_stab, ord).unwrap();
                let scale = a_ref.iter().map(|a| a.to_vec6().amax()).fold(1.0, f64::max);
                for i in 1..=m.nb {
                    let d = (sp.a[i].to_vec6() - a_ref[i].to_vec6()).amax();
                    assert!(d < 1e-9 * scale, "n = {n}, body {i}, {ord:?}: {d:e} (scale {scale:e})");
                }
            }
        }
    }
}

/// Every closed-loop model of the two chapters with its mobility and rank at a generic state.
fn all_mechanisms() -> Vec<(&'static str, Model, usize, usize)> {
    let mut v: Vec<(&'static str, Model, usize, usize)> = mechanisms::all()
        .into_iter()
        .map(|(name, m)| {
            let p = loop_properties(&m, m.qpos0.as_slice()).unwrap();
            (name, m, p.rank, p.mobility)
        })
        .collect();
    // the stated ranks of the two tables (mechanisms.rs, loop_models.rs)
    let expected = [2, 3, 2, 2, 4, 6];
    for (row, r) in v.iter().zip(expected) {
        assert_eq!(row.2, r, "{}", row.0);
    }
    v.push(("four_loops", four_loops(), 8, 5));
    v.push(("parallelogram", parallelogram(0.4, 0.25).unwrap(), 2, 1));
    v.push(("ladder_4", ladder(4, 0.5, 0.3).unwrap(), 12, 8));
    v
}

/// A random closed state: `qpos0` perturbed and re-assembled, `qdot = G` times random `ydot`.
fn random_closed_state(m: &Model, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let (q, _) = random_state(m, seed);
    let q = assemble(m, &q).unwrap();
    let s = loop_constraints(m, q.as_slice(), &vec![0.0; m.nv], None).unwrap();
    let ns = null_space(&s.kmat, &DVector::zeros(s.nc())).unwrap();
    let yd = DVector::from_fn(ns.g_null.ncols(), |i, _| {
        ((i * 7 + seed as usize) % 5) as f64 * 0.4 - 0.8
    });
    (q.as_slice().to_vec(), (ns.g_null * yd).as_slice().to_vec())
}

#[test]
fn complete_pivoting_on_random_states_of_every_mechanism() {
    for (name, m, rank, mobility) in all_mechanisms() {
        for seed in 1..=4u64 {
            let (q, qd) = random_closed_state(&m, seed);
            let s = loop_constraints(&m, &q, &qd, None).unwrap();
            let ns = null_space(&s.kmat, &s.k).unwrap();
            let scale = s.kmat.amax().max(1.0);
            assert!((&s.kmat * &ns.g_null).amax() < 1e-10 * scale, "{name}: K G");
            assert!(
                (&s.kmat * &ns.g_bias - &s.k).amax() < 1e-10 * s.k.amax().max(1.0),
                "{name}: K g - k"
            );
            assert_eq!((ns.rank, ns.g_null.ncols()), (rank, mobility), "{name}, seed {seed}");
        }
    }
}

#[test]
fn column_mask_and_least_squares() {
    let m = mechanisms::four_bar();
    let (q, qd) = random_closed_state(&m, 3);
    let s = loop_constraints(&m, &q, &qd, None).unwrap();
    // the mask forbids solving for the crank: it becomes the independent variable
    let mask = [false, true, true];
    let opts = PivotOptions {
        mask: Some(&mask),
        ..PivotOptions::default()
    };
    let ns = null_space_opts(&s.kmat, &s.k, &opts).unwrap();
    assert_eq!(ns.independent, vec![0]);
    assert_eq!(ns.g_null[(0, 0)], 1.0);
    // a mask that leaves nothing to solve for fails
    let none = [false, false, false];
    assert!(null_space_opts(
        &s.kmat,
        &s.k,
        &PivotOptions {
            mask: Some(&none),
            ..PivotOptions::default()
        }
    )
    .is_err());
    // slightly inconsistent: k pushed off range(K) by 1e-6 along a left null vector of K
    let svd = s.kmat.clone().svd(true, false);
    let u = svd.u.unwrap();
    let (imin, _) = svd.singular_values.argmin();
    let off = u.column(imin).into_owned() * 1e-6;
    let k_bad = &s.k + &off;
    let e = null_space_opts(&s.kmat, &k_bad, &PivotOptions::default()).unwrap_err();
    assert!(e.to_string().contains("inconsistent"), "{e}");
    let ls = PivotOptions {
        inconsistency: Inconsistency::LeastSquares,
        ..PivotOptions::default()
    };
    let ns_ls = null_space_opts(&s.kmat, &k_bad, &ls).unwrap();
    let r = &s.kmat * &ns_ls.g_bias - &k_bad;
    assert!((s.kmat.transpose() * &r).amax() < 1e-12, "normal equations");
    assert!(
        (r.amax() - 1e-6 * u.column(imin).amax()).abs() < 1e-9,
        "the leftover is the push"
    );
    let exact = null_space(&s.kmat, &s.k).unwrap();
    assert!((&ns_ls.g_bias - &exact.g_bias).amax() < 1e-9);
    // on consistent data the two modes agree
    let same = null_space_opts(&s.kmat, &s.k, &ls).unwrap();
    assert!((&same.g_bias - &exact.g_bias).amax() < 1e-12);
}

#[test]
fn parallelogram_variable_mobility_and_two_branches() {
    let (a, b) = (0.4, 0.25);
    let m = parallelogram(a, b).unwrap();
    for phi in [0.4, 1.2, -0.7] {
        let branches = parallelogram_branches(a, b, phi);
        for (k, q) in branches.iter().enumerate() {
            // Newton from a guess near each branch, crank held: converges to that branch
            let guess = [q[0], q[1] + 0.05, q[2] - 0.05];
            let got = assemble_with(&m, &guess, Some(&[0])).unwrap();
            assert!(
                (got[1] - q[1]).abs() < 1e-9 && (got[2] - q[2]).abs() < 1e-9,
                "phi {phi}, branch {k}"
            );
            assert_eq!(loop_properties(&m, q).unwrap().mobility, 1);
        }
    }
    let flat = parallelogram_branches(a, b, std::f64::consts::FRAC_PI_2)[0];
    assert_eq!(loop_properties(&m, &flat).unwrap().mobility, 2);
}

#[test]
fn clusters_are_block_diagonal_and_equal_the_monolithic_elimination() {
    let m = four_loops();
    let c = loop_clusters(&m).unwrap();
    assert_eq!(c.loops, vec![vec![0, 3], vec![1], vec![2]]);
    assert_eq!(c.free_dofs, vec![0, 3]);
    assert_eq!(c.dofs.iter().map(Vec::len).collect::<Vec<_>>(), vec![5, 3, 3]);
    for seed in 1..=3u64 {
        let (q, qd) = random_closed_state(&m, seed);
        let s = loop_constraints(&m, &q, &qd, Some(0.1)).unwrap();
        // K renumbered is block diagonal
        let kp = c.permute(&s.kmat);
        let (mut r0, mut c0) = (0, 0);
        for (loops, dofs) in c.loops.iter().zip(&c.dofs) {
            let nr: usize = loops.iter().map(|&k| s.rows[k].len()).sum();
            for r in 0..kp.nrows() {
                for col in 0..kp.ncols() {
                    let inside_rows = (r0..r0 + nr).contains(&r);
                    let inside_cols = (c0..c0 + dofs.len()).contains(&col);
                    if inside_rows && !inside_cols {
                        assert_eq!(kp[(r, col)], 0.0);
                    }
                }
            }
            r0 += nr;
            c0 += dofs.len();
        }
        let ns_c = null_space_clustered(&s, &c, &PivotTol::default()).unwrap();
        let ns_m = null_space_with(&s.kmat, &s.rhs(), &PivotTol::default(), Some(&ns_c.independent)).unwrap();
        assert_eq!(ns_c.rank, ns_m.rank);
        assert!((&ns_c.g_null - &ns_m.g_null).amax() < 1e-12);
        assert!((&ns_c.g_bias - &ns_m.g_bias).amax() < 1e-12);
        // G renumbered is block diagonal with identity blocks for the gaps
        let gp = DMatrix::from_fn(m.nv, ns_c.g_null.ncols(), |r, col| ns_c.g_null[(c.col_perm[r], col)]);
        assert_eq!(gp[(11, 3)], 1.0);
        assert_eq!(gp[(12, 4)], 1.0);
        // and method 3 with either G gives the same accelerations
        let h = crba(&m, &q).unwrap();
        let tau_p = -bias_minus_active(&m, &q, &qd, None).unwrap();
        let solve = |ns: &mbd::loops::NullSpace| {
            let g = &ns.g_null;
            let ydd = (g.transpose() * &h * g)
                .cholesky()
                .unwrap()
                .solve(&(g.transpose() * (&tau_p - &h * &ns.g_bias)));
            g * ydd + &ns.g_bias
        };
        let full = forward_dynamics(&m, &q, &qd, &vec![0.0; m.nv], None, Method::NullSpace, Some(0.1)).unwrap();
        assert!((solve(&ns_c) - &full.qdd).amax() < 1e-10 * full.qdd.amax().max(1.0));
    }
    // a ladder is one cluster: every loop shares the rails' bottom joints
    let c = loop_clusters(&ladder(5, 0.5, 0.3).unwrap()).unwrap();
    assert_eq!(c.loops.len(), 1);
}

#[test]
fn figure_8_3_closed_forms_against_finite_differences_and_pivoting() {
    let (l1, l2) = (1.0, 0.6);
    let m = figure_8_3(l1, l2).unwrap();
    let cl = Figure83Closure { l1, l2 };
    let eps = 1e-6;
    for (y, yd) in [
        ([1.0, 0.5], [0.7, -0.3]),
        ([2.2, -1.0], [-1.3, 0.4]),
        ([-0.8, 0.1], [2.0, 1.0]),
    ] {
        let q = cl.gamma(&y).unwrap();
        let g = cl.g_null(&y).unwrap();
        let gb = cl.g_bias(&y, &yd).unwrap();
        // gamma closes the loop
        let qd = &g * DVector::from_column_slice(&yd);
        let s = loop_constraints(&m, q.as_slice(), qd.as_slice(), None).unwrap();
        assert!(s.err.amax() < 1e-14);
        assert!((&s.kmat * &g).amax() < 1e-10);
        assert!((&s.kmat * &gb - &s.k).amax() < 1e-10);
        // G = dgamma/dy and g = Gdot ydot by central differences
        for c in 0..2 {
            let mut yp = y;
            let mut ym = y;
            yp[c] += eps;
            ym[c] -= eps;
            let fd = (cl.gamma(&yp).unwrap() - cl.gamma(&ym).unwrap()) / (2.0 * eps);
            assert!((fd - g.column(c)).amax() < 1e-8);
        }
        let yp = [y[0] + eps * yd[0], y[1] + eps * yd[1]];
        let ym = [y[0] - eps * yd[0], y[1] - eps * yd[1]];
        let gdot = (cl.g_null(&yp).unwrap() - cl.g_null(&ym).unwrap()) / (2.0 * eps);
        assert!((gdot * DVector::from_column_slice(&yd) - &gb).amax() < 1e-7);
        // the numerical closure with the same independent variables agrees
        let num = NumericalClosure::new(&m, &[0, 3], q.as_slice()).unwrap();
        assert!((num.gamma(&y).unwrap() - &q).amax() < 1e-10);
        assert!((num.g_null(&y).unwrap() - &g).amax() < 1e-9);
        assert!((num.g_bias(&y, &yd).unwrap() - &gb).amax() < 1e-9);
    }
    assert!(cl.gamma(&[0.0, 0.0]).is_ok());
    assert!(Figure83Closure { l1: 1.0, l2: 1.0 }.gamma(&[0.0, 0.0]).is_err());
}

#[test]
fn simulating_in_y_keeps_the_loop_closed_while_q_drifts() {
    let (l1, l2) = (1.0, 0.6);
    let m = figure_8_3(l1, l2).unwrap();
    let cl = Figure83Closure { l1, l2 };
    let (y0, yd0) = ([1.0, 0.5], [0.0, 0.0]);
    let (h, steps) = (2e-3, 5000);
    let ty = simulate_gamma(&m, &cl, &y0, &yd0, h, steps).unwrap();
    let e_y = ty.max_of(LOOP_ERROR);
    let q0 = cl.gamma(&y0).unwrap();
    let qd0 = cl.g_null(&y0).unwrap() * DVector::from_column_slice(&yd0);
    let opts = SimulateOptions {
        method: Method::NullSpace,
        ..SimulateOptions::new(h, steps)
    };
    let tq = simulate(&m, q0.as_slice(), qd0.as_slice(), &opts).unwrap();
    let e_q = *tq.signal(LOOP_ERROR).unwrap().last().unwrap();
    assert!((ty.time[steps] - 10.0).abs() < 1e-9);
    assert!(e_y < 1e-14, "y coordinates: {e_y:e}");
    assert!(e_q > 1e3 * e_y.max(1e-16), "q coordinates drift: {e_q:e} vs {e_y:e}");
    // both are the same motion while the drift is small
    assert!((ty.signal(&y_signal(0)).unwrap()[500] - tq.qpos[500][0]).abs() < 1e-6);
    assert!((ty.qpos[500][0] - tq.qpos[500][0]).abs() < 1e-6);
}

#[test]
fn baraff_order_has_no_fill_on_trees_and_matches_aba() {
    for m in [chain(8, true), binary_tree(4), floating_base_ball_arms()] {
        let (q, qd) = random_state(&m, 5);
        let tau: Vec<f64> = (0..m.nv).map(|i| 0.2 * i as f64 - 0.5).collect();
        let qdd = aba(&m, &q, &qd, &tau, None).unwrap();
        let a_ref = body_accelerations(&m, &q, &qd, qdd.as_slice()).unwrap();
        let sp = sparse_forward_dynamics(&m, &q, &qd, &tau, None, None, Ordering::Baraff).unwrap();
        assert_eq!(sp.fill_blocks, 0, "{}", m.name);
        let scale = a_ref.iter().map(|a| a.to_vec6().amax()).fold(1.0, f64::max);
        for i in 1..=m.nb {
            assert!(
                (sp.a[i].to_vec6() - a_ref[i].to_vec6()).amax() < 1e-9 * scale,
                "{} body {i}",
                m.name
            );
        }
    }
}

fn ladder_ops(n: usize) -> (OpCount, OpCount) {
    let m = ladder(n, 0.5, 0.3).unwrap();
    let (q, qd) = random_state(&m, 1);
    let tau = vec![0.0; m.nv];
    let sp = sparse_forward_dynamics(&m, &q, &qd, &tau, None, None, Ordering::Banded).unwrap();
    let s = loop_constraints(&m, &q, &qd, None).unwrap();
    let h = crba(&m, &q).unwrap();
    let tau_p = -bias_minus_active(&m, &q, &qd, None).unwrap();
    let mut ops = OpCount::default();
    spanning_tree_counted(&h, &m.dof_parent, &tau_p, &s.kmat, &s.rhs(), &mut ops).unwrap();
    (sp.ops, ops)
}

#[test]
fn operation_counts_grow_linearly_for_the_sparse_method_and_cubically_for_the_tree() {
    let counts: Vec<(OpCount, OpCount)> = [10, 20, 30, 40].iter().map(|&n| ladder_ops(n)).collect();
    let total = |o: &OpCount| o.madd + o.div + o.sqrt;
    let sparse: Vec<usize> = counts.iter().map(|c| total(&c.0)).collect();
    // exactly linear: each 10 rungs add the same number of operations
    assert_eq!(sparse[1] - sparse[0], sparse[2] - sparse[1]);
    assert_eq!(sparse[2] - sparse[1], sparse[3] - sparse[2]);
    let tree: Vec<f64> = counts.iter().map(|c| total(&c.1) as f64).collect();
    // doubling N (20 -> 40) multiplies the spanning-tree count by nearly 8
    assert!(tree[3] / tree[1] > 6.5, "{tree:?}");
    assert!(tree[3] > 10.0 * sparse[3] as f64);
}

#[test]
fn block_factor_reads_only_the_pattern() {
    let m = ladder(6, 0.5, 0.3).unwrap();
    let (q, qd) = random_state(&m, 2);
    let mut sm = SparseMethod::new(&m, Ordering::Banded).unwrap();
    sm.assemble(&m, &q, &qd, &vec![0.1; m.nv], None, Some(0.1));
    let a = sm.dense_matrix();
    let sizes = sm.structure.sizes.clone();
    let adj = sm.structure.adj.clone();
    let mut poisoned = a.clone();
    let offs: Vec<usize> = std::iter::once(0)
        .chain(sizes.iter().scan(0, |s, x| {
            *s += x;
            Some(*s)
        }))
        .collect();
    for bi in 0..sizes.len() {
        for bj in 0..sizes.len() {
            if bi != bj && !adj[bi].contains(&bj) {
                for r in offs[bi]..offs[bi + 1] {
                    for c in offs[bj]..offs[bj + 1] {
                        poisoned[(r, c)] = f64::NAN;
                    }
                }
            }
        }
        // the upper triangle of a diagonal block is not read either
        for r in offs[bi]..offs[bi + 1] {
            for c in r + 1..offs[bi + 1] {
                poisoned[(r, c)] = f64::NAN;
            }
        }
    }
    let sym = BlockSymbolic::new(&sizes, &adj).unwrap();
    let clean = BlockLdlt::factor(sym.clone(), &a, &mut OpCount::default()).unwrap();
    let dirty = BlockLdlt::factor(sym, &poisoned, &mut OpCount::default()).unwrap();
    assert!(clean
        .values
        .iter()
        .zip(&dirty.values)
        .all(|(x, y)| x.to_bits() == y.to_bits()));
    // assembling into storage full of NaN gives the same bits as into zeros
    let mut sm2 = SparseMethod::new(&m, Ordering::Banded).unwrap();
    sm2.factor.values.fill(f64::NAN);
    sm2.rhs.fill(f64::NAN);
    sm2.assemble(&m, &q, &qd, &vec![0.1; m.nv], None, Some(0.1));
    assert!(sm
        .factor
        .values
        .iter()
        .zip(&sm2.factor.values)
        .all(|(x, y)| x.to_bits() == y.to_bits()));
    // and the in-place solve equals a dense LU solve
    let mut ops = OpCount::default();
    let b = sm.rhs.clone();
    sm.solve_in_place(&mut ops).unwrap();
    let x = a.clone().lu().solve(&DVector::from_column_slice(&b)).unwrap();
    assert!((DVector::from_column_slice(&sm.rhs) - x).amax() < 1e-9);
}
