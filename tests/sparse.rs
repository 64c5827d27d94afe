//! Property tests of the sparse factorizations (`mbd::sparse`, Featherstone 6.5, MuJoCo's
//! `mj_factorI` / `mj_solveLD` and its storage) and of the com-based inertia and bias of
//! `mbd::mujoco::forward_smooth`, on random kinematic trees of every joint type (the generator is
//! `tests/common/mod.rs`).
//!
//! What is held against what:
//! - LTL, LTDL, `factor_i` and a dense Cholesky (nalgebra) each rebuild H (from CRBA) to 1e-10
//!   relative (`max|rebuilt - H| / max|H|`), and their four solutions of `H x = b` agree to 1e-9
//!   relative to `max|x|` (the dense LU solution is the reference);
//! - no fill-in: off the ancestor pattern the factor is exactly zero, an H with NaN planted off
//!   the pattern factors to exactly the same numbers (so those entries are never read), and a
//!   dense, pattern-blind reverse-order Cholesky gives the same L with exact zeros there;
//! - the root-first `L L^T` does fill in: `llt_fill_in` equals the number of nonzeros nalgebra's
//!   Cholesky creates off the pattern;
//! - operation counts equal closed forms computed from the depths;
//! - legacy, dense and CSR storage round-trip exactly;
//! - the pivot policies of `factor_i`;
//! - the com-based M and bias (`forward_smooth`) equal the body-frame CRBA and RNEA.
//!
//! Run with `cargo test --release --test ch06`; `MBD_PROP_REPORT=1` prints how close each
//! check came.

mod common;

use common::*;
use mbd::dynamics::{bias_forces, crba};
use mbd::model::Model;
use mbd::mujoco::forward_smooth;
use mbd::sparse::{
    cholesky_dense, factor_i, llt_fill_in, lower_ltl, ltdl, ltl, mpy_h, predicted_ltdl_ops, solve_l, solve_ld,
    solve_lt, solve_ltdl, solve_ltl, split_ltdl, MjLayout, OpCount, PivotPolicy, MJ_MINVAL,
};
use mbd::Error;
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

fn amax(m: &DMatrix<f64>) -> f64 {
    m.iter().fold(0.0, |a, x| a.max(x.abs()))
}

/// The ancestor pattern, computed by walking the parent array: `pat[i][j]` is true when j is i or
/// one of its ancestors (j <= i), or i one of j's.
fn pattern(parent: &[Option<usize>]) -> Vec<Vec<bool>> {
    let n = parent.len();
    let mut pat = vec![vec![false; n]; n];
    for i in 0..n {
        let mut j = Some(i);
        while let Some(jj) = j {
            pat[i][jj] = true;
            pat[jj][i] = true;
            j = parent[jj];
        }
    }
    pat
}

/// Number of proper ancestors of each dof, by walking the parent array.
fn ancestor_counts(parent: &[Option<usize>]) -> Vec<usize> {
    (0..parent.len())
        .map(|i| {
            let (mut c, mut j) = (0, parent[i]);
            while let Some(jj) = j {
                c += 1;
                j = parent[jj];
            }
            c
        })
        .collect()
}

/// A model (fixed base or floating) and a state.
fn tree_and_state() -> impl Strategy<Value = (ModelSpec, StateSpec)> {
    (prop_oneof![model_spec(), floating_spec(MAX_BODIES)], state_spec())
}

fn h_of(model: &Model, q: &[f64]) -> DMatrix<f64> {
    crba(model, q).expect("valid state")
}

/// A symmetric positive-definite matrix with exactly the ancestor pattern of `parent` and generic
/// values (strictly diagonally dominant).
fn generic_spd(parent: &[Option<usize>], values: &[f64]) -> DMatrix<f64> {
    let n = parent.len();
    let pat = pattern(parent);
    let mut h = DMatrix::zeros(n, n);
    let mut k = 0;
    for i in 0..n {
        for j in 0..i {
            if pat[i][j] {
                let v = 0.1 + values[k % values.len()].abs() + 1e-3 * k as f64;
                h[(i, j)] = v;
                h[(j, i)] = v;
                k += 1;
            }
        }
    }
    for i in 0..n {
        h[(i, i)] = 1.0 + h.row(i).iter().map(|x| x.abs()).sum::<f64>();
    }
    h
}

proptest! {
    #![proptest_config(config(96))]

    /// Four factorizations of the same H (from CRBA): each rebuilds H to 1e-10 relative, and
    /// their solutions of `H x = b` agree with the dense LU solution to 1e-9 relative. `mpy_h`
    /// (lower triangle on the pattern only) equals the dense product to 1e-12.
    #[test]
    fn factorizations_rebuild_h_and_solve_alike((ms, ss) in tree_and_state()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let parent = &model.dof_parent;
        let n = model.nv;
        let h = h_of(&model, &s.q);
        let scale = amax(&h).max(f64::MIN_POSITIVE);
        let mut ops = OpCount::default();

        let mut ld = h.clone();
        ltdl(&mut ld, parent, &mut ops).unwrap();
        let (l, d) = split_ltdl(&ld, parent);
        let rebuilt = l.transpose() * DMatrix::from_diagonal(&d) * &l;
        close("LTDL rebuilds H", amax(&(rebuilt - &h)), scale, 1e-10)?;

        let mut lt = h.clone();
        ltl(&mut lt, parent, &mut ops).unwrap();
        let l1 = lower_ltl(&lt, parent);
        close("LTL rebuilds H", amax(&(l1.transpose() * &l1 - &h)), scale, 1e-10)?;

        let lc = cholesky_dense(&h).unwrap();
        close("dense L L^T rebuilds H", amax(&(&lc * lc.transpose() - &h)), scale, 1e-10)?;

        let lay = MjLayout::new(parent).unwrap();
        let f = factor_i(&lay, &lay.from_dense(&h), PivotPolicy::Error, &mut ops).unwrap();
        prop_assert!(f.warnings.is_empty());
        let (lf, df) = lay.unpack_ld(&f.qld);
        let rebuilt = lf.transpose() * DMatrix::from_diagonal(&DVector::from_vec(df.clone())) * &lf;
        close("factor_i rebuilds H", amax(&(rebuilt - &h)), scale, 1e-10)?;
        for i in 0..n {
            prop_assert_eq!(f.qld_diag_inv[i], 1.0 / df[i]);
        }

        if n == 0 {
            return Ok(()); // a tree of fixed joints: nothing to solve (nalgebra's LU needs n > 0)
        }
        let b: Vec<f64> = s.tau.clone();
        let bv = DVector::from_column_slice(&b);
        let x_ref = h.clone().lu().solve(&bv).expect("H is invertible");
        let xs = x_ref.amax().max(f64::MIN_POSITIVE);
        let x_ltdl = solve_ltdl(&ld, parent, &b, &mut ops).unwrap();
        close("LTDL solve", (&x_ltdl - &x_ref).amax(), xs, 1e-9)?;
        let x_ltl = solve_ltl(&lt, parent, &b, &mut ops).unwrap();
        close("LTL solve", (&x_ltl - &x_ref).amax(), xs, 1e-9)?;
        let x_chol = lc.transpose().solve_upper_triangular(&lc.solve_lower_triangular(&bv).unwrap()).unwrap();
        close("dense Cholesky solve", (&x_chol - &x_ref).amax(), xs, 1e-9)?;
        let mut x_mj = b.clone();
        solve_ld(&lay, &f.qld, &f.qld_diag_inv, &mut x_mj, &mut ops).unwrap();
        close("mj_solveLD", (DVector::from_vec(x_mj) - &x_ref).amax(), xs, 1e-9)?;
        // the two half solves of LTL, one at a time: L^-T b then L^-1
        let mut y = b.clone();
        solve_lt(&lt, parent, false, &mut y, &mut ops).unwrap();
        close("L^-T b", (&l1.transpose() * DVector::from_vec(y.clone()) - &bv).amax(), bv.amax().max(1.0), 1e-10)?;
        solve_l(&lt, parent, false, &mut y, &mut ops).unwrap();
        close("L^-1 L^-T b", (DVector::from_vec(y) - &x_ref).amax(), xs, 1e-9)?;

        let y = mpy_h(&h, parent, &b, &mut ops).unwrap();
        close("mpyH", (&y - &h * &bv).amax(), scale * bv.amax().max(1.0), 1e-12)?;
    }

    /// No fill-in. (1) After LTDL and LTL the strict lower triangle is exactly zero off the
    /// ancestor pattern, and the upper triangle is untouched. (2) With NaN planted at every
    /// entry off the pattern (both triangles), the factorizations give bit-for-bit the same
    /// numbers on the pattern and leave the NaNs where they were: those entries are never read.
    /// (3) A dense Cholesky that knows nothing of the tree, run on the reversed matrix
    /// (`P H P = C C^T` with P the reversal, so `H = L^T L` with `L = (P C P)^T`), has exact
    /// zeros off the pattern and equals LTL's L to 1e-10.
    #[test]
    fn factors_keep_the_ancestor_pattern((ms, ss) in tree_and_state()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let parent = &model.dof_parent;
        let n = model.nv;
        let pat = pattern(parent);
        let h = h_of(&model, &s.q);
        let mut poisoned = h.clone();
        for i in 0..n {
            for j in 0..n {
                if !pat[i][j] {
                    prop_assert_eq!(h[(i, j)], 0.0, "CRBA wrote off the pattern at ({}, {})", i, j);
                    poisoned[(i, j)] = f64::NAN;
                }
            }
        }
        type Factor = fn(&mut DMatrix<f64>, &[Option<usize>], &mut OpCount) -> mbd::Result<()>;
        for (name, factor) in [("LTDL", ltdl as Factor), ("LTL", ltl as Factor)] {
            let mut clean = h.clone();
            factor(&mut clean, parent, &mut OpCount::default()).unwrap();
            let mut dirty = poisoned.clone();
            factor(&mut dirty, parent, &mut OpCount::default()).unwrap();
            for i in 0..n {
                for j in 0..n {
                    if j > i {
                        prop_assert_eq!(clean[(i, j)].to_bits(), h[(i, j)].to_bits(), "{}: upper ({}, {}) written", name, i, j);
                    } else if pat[i][j] {
                        prop_assert_eq!(dirty[(i, j)].to_bits(), clean[(i, j)].to_bits(), "{}: ({}, {}) changed by NaN off the pattern", name, i, j);
                    } else {
                        prop_assert_eq!(clean[(i, j)], 0.0, "{}: fill-in at ({}, {})", name, i, j);
                        prop_assert!(dirty[(i, j)].is_nan(), "{}: ({}, {}) overwritten", name, i, j);
                    }
                }
            }
        }
        // (3) dense reverse-order Cholesky
        if n > 0 {
            let rev = DMatrix::from_fn(n, n, |i, j| h[(n - 1 - i, n - 1 - j)]);
            let c = nalgebra::Cholesky::new(rev).expect("H is positive definite").l();
            let l_dense = DMatrix::from_fn(n, n, |i, j| c[(n - 1 - j, n - 1 - i)]);
            let mut lt = h.clone();
            ltl(&mut lt, parent, &mut OpCount::default()).unwrap();
            let l_sparse = lower_ltl(&lt, parent);
            for i in 0..n {
                for j in 0..=i {
                    if !pat[i][j] {
                        prop_assert_eq!(l_dense[(i, j)], 0.0, "dense reverse Cholesky fills in at ({}, {})", i, j);
                    }
                }
            }
            close("dense reverse Cholesky = LTL", amax(&(l_dense - l_sparse)), amax(&h).sqrt(), 1e-10)?;
        }
    }

    /// The root-first `H = L L^T` (nalgebra's Cholesky, natural order) fills in: the number of
    /// entries it makes nonzero off the ancestor pattern equals `llt_fill_in` (symbolic
    /// elimination). Generic values on the pattern, so no entry vanishes by accident.
    #[test]
    fn root_first_cholesky_fills_in_as_predicted(ms in prop_oneof![model_spec(), floating_spec(MAX_BODIES)], values in prop::collection::vec(-1.0f64..1.0, 64)) {
        let model = random_model(&ms);
        let parent = &model.dof_parent;
        let n = model.nv;
        let h = generic_spd(parent, &values);
        let pat = pattern(parent);
        let l = cholesky_dense(&h).unwrap();
        let mut fill = 0;
        for i in 0..n {
            for j in 0..i {
                if !pat[i][j] && l[(i, j)] != 0.0 {
                    fill += 1;
                }
            }
        }
        prop_assert_eq!(llt_fill_in(parent), fill);
        // and leaves to root there is none
        let mut lt = h.clone();
        ltl(&mut lt, parent, &mut OpCount::default()).unwrap();
        for i in 0..n {
            for j in 0..i {
                if !pat[i][j] {
                    prop_assert_eq!(lt[(i, j)], 0.0);
                }
            }
        }
    }

    /// Operation counts equal closed forms in the depths `d_k` (number of dofs on the path from
    /// k to the root, k included): LTDL and `factor_i` `sum (d_k - 1)` divisions and
    /// `sum d_k (d_k - 1) / 2` multiply-adds, LTL the same plus n square roots, each triangular
    /// solve `sum (d_k - 1)` multiply-adds, mpyH twice that, `mj_solveLD` both triangles plus n
    /// scalings.
    #[test]
    fn operation_counts_equal_the_formulas((ms, ss) in tree_and_state()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let parent = &model.dof_parent;
        let n = model.nv;
        let d: Vec<usize> = ancestor_counts(parent).iter().map(|a| a + 1).collect();
        let tri: usize = d.iter().map(|dk| dk - 1).sum();
        let madd: usize = d.iter().map(|dk| dk * (dk - 1) / 2).sum();
        let h = h_of(&model, &s.q);

        let mut o = OpCount::default();
        ltdl(&mut h.clone(), parent, &mut o).unwrap();
        prop_assert_eq!(o, OpCount { div: tri, madd, sqrt: 0, mul: 0 });
        prop_assert_eq!(predicted_ltdl_ops(parent), o);
        let mut o = OpCount::default();
        let mut lt = h.clone();
        ltl(&mut lt, parent, &mut o).unwrap();
        prop_assert_eq!(o, OpCount { div: tri, madd, sqrt: n, mul: 0 });
        let lay = MjLayout::new(parent).unwrap();
        let mut o = OpCount::default();
        let f = factor_i(&lay, &lay.from_dense(&h), PivotPolicy::Error, &mut o).unwrap();
        // one reciprocal per row instead of one division per pair
        prop_assert_eq!(o, OpCount { div: n, madd, sqrt: 0, mul: tri });

        let mut x = s.tau.clone();
        let mut o = OpCount::default();
        solve_lt(&lt, parent, true, &mut x, &mut o).unwrap();
        prop_assert_eq!(o, OpCount { div: 0, madd: tri, sqrt: 0, mul: 0 });
        let mut o = OpCount::default();
        solve_l(&lt, parent, false, &mut x, &mut o).unwrap();
        prop_assert_eq!(o, OpCount { div: n, madd: tri, sqrt: 0, mul: 0 });
        let mut o = OpCount::default();
        mpy_h(&h, parent, &x, &mut o).unwrap();
        prop_assert_eq!(o, OpCount { div: 0, madd: 2 * tri, sqrt: 0, mul: 0 });
        let mut o = OpCount::default();
        solve_ld(&lay, &f.qld, &f.qld_diag_inv, &mut x, &mut o).unwrap();
        prop_assert_eq!(o, OpCount { div: n, madd: 2 * tri, sqrt: 0, mul: 0 });
    }

    /// Storage: legacy <-> dense <-> CSR round trips are exact; the legacy layout has MuJoCo's
    /// addresses (`dof_Madr[i] = sum_{j<i} d_j`, `nM = sum d_j`); each CSR row lists the
    /// ancestors in increasing order and then the diagonal; `mapM2M` is a permutation of the
    /// legacy slots; and the CSR values equal the dense entries they name.
    #[test]
    fn legacy_dense_and_csr_round_trip(ms in prop_oneof![model_spec(), floating_spec(MAX_BODIES)], values in prop::collection::vec(-1.0f64..1.0, 64)) {
        let model = random_model(&ms);
        let parent = &model.dof_parent;
        let n = model.nv;
        let d: Vec<usize> = ancestor_counts(parent).iter().map(|a| a + 1).collect();
        let lay = MjLayout::new(parent).unwrap();
        let mut adr = 0;
        for i in 0..n {
            prop_assert_eq!(lay.dof_madr[i], adr);
            adr += d[i];
        }
        prop_assert_eq!(lay.nm, adr);

        let h = generic_spd(parent, &values);
        let qm = lay.from_dense(&h);
        prop_assert_eq!(lay.to_dense(&qm), h.clone());
        let csr = lay.legacy_to_csr(&qm);
        prop_assert_eq!(lay.csr_to_legacy(&csr), qm.clone());
        // a legacy vector with a distinct value in every slot round-trips too
        let qm2: Vec<f64> = (0..lay.nm).map(|k| k as f64 + 0.5).collect();
        prop_assert_eq!(lay.from_dense(&lay.to_dense(&qm2)), qm2.clone());
        prop_assert_eq!(lay.csr_to_legacy(&lay.legacy_to_csr(&qm2)), qm2);

        let mut seen = vec![false; lay.nm];
        for &k in &lay.map_m2m {
            prop_assert!(!seen[k], "mapM2M repeats slot {}", k);
            seen[k] = true;
        }
        prop_assert!(seen.iter().all(|&s| s));
        let mut start = 0;
        for i in 0..n {
            prop_assert_eq!(lay.m_rowadr[i], start);
            prop_assert_eq!(lay.m_rownnz[i], d[i]);
            let cols = &lay.m_colind[start..start + d[i]];
            prop_assert_eq!(*cols.last().unwrap(), i);
            prop_assert!(cols.windows(2).all(|w| w[0] < w[1]));
            for (c, &j) in cols.iter().enumerate() {
                prop_assert!(pattern(parent)[i][j]);
                prop_assert_eq!(csr[start + c], h[(i, j)]);
            }
            start += d[i];
        }
        prop_assert_eq!(start, lay.nm);
    }

    /// The com-based M and bias of `forward_smooth` (`mj_comPos`, `mj_crb`, `mj_rne`, all in
    /// world-aligned frames at each tree's centre of mass) equal Featherstone's body-frame CRBA
    /// and RNEA with zero acceleration, to 1e-10 relative, for every joint type; its `qLD` is the
    /// LTDL factor of CRBA's H (1e-10 relative).
    #[test]
    fn com_based_m_and_bias_equal_crba_and_rnea((ms, ss) in tree_and_state()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let parent = &model.dof_parent;
        let d = forward_smooth(&model, &s.q, &s.qd).unwrap();
        let h = h_of(&model, &s.q);
        let scale = amax(&h).max(f64::MIN_POSITIVE);
        close("com-based M = CRBA", amax(&(model.mj_layout().to_dense(&d.qm) - &h)), scale, 1e-10)?;
        let c = bias_forces(&model, &s.q, &s.qd).unwrap();
        let bias = DVector::from_vec(d.qfrc_bias.clone());
        close("com-based bias = RNEA(q, qd, 0)", (&bias - &c).amax(), c.amax().max(1.0), 1e-10)?;
        let mut ld = h.clone();
        ltdl(&mut ld, parent, &mut OpCount::default()).unwrap();
        let (l_ref, d_ref) = split_ltdl(&ld, parent);
        let (l, dd) = model.mj_layout().unpack_ld(&d.qld);
        close("qLD's L = LTDL's L", amax(&(l - l_ref)), 1.0, 1e-10)?;
        let dd = DVector::from_vec(dd);
        close("qLD's D = LTDL's D", (&dd - &d_ref).amax(), d_ref.amax().max(f64::MIN_POSITIVE), 1e-10)?;
    }

    /// Pivot policies: lowering one diagonal entry of H so that the pivot of dof k becomes -1
    /// makes LTDL, LTL and `factor_i` with `PivotPolicy::Error` fail naming dof k; with
    /// `PivotPolicy::ClampAndWarn`, `factor_i` goes on, sets that pivot to `mjMINVAL` and warns
    /// first about dof k. (Dofs after k are factored before k and are not affected.)
    #[test]
    fn a_bad_pivot_is_named_or_clamped((ms, ss) in tree_and_state(), pick in any::<prop::sample::Index>()) {
        let model = random_model(&ms);
        prop_assume!(model.nv > 0);
        let s = random_state(&model, &ss);
        let parent = &model.dof_parent;
        let k = pick.index(model.nv);
        let mut h = h_of(&model, &s.q);
        let mut ld = h.clone();
        ltdl(&mut ld, parent, &mut OpCount::default()).unwrap();
        // the pivot of k is H_kk minus what the dofs after k subtract: shift it to -1
        h[(k, k)] -= ld[(k, k)] + 1.0;
        let lay = MjLayout::new(parent).unwrap();
        let qm = lay.from_dense(&h);
        let named = |e: Error| matches!(e, Error::NotPositiveDefinite { dof, value, .. } if dof == k && (value + 1.0).abs() < 1e-6 * (1.0 + h[(k, k)].abs()));
        let e = ltdl(&mut h.clone(), parent, &mut OpCount::default()).unwrap_err();
        prop_assert!(named(e.clone()), "LTDL: {}", e);
        let e = ltl(&mut h.clone(), parent, &mut OpCount::default()).unwrap_err();
        prop_assert!(named(e.clone()), "LTL: {}", e);
        let e = factor_i(&lay, &qm, PivotPolicy::Error, &mut OpCount::default()).unwrap_err();
        prop_assert!(named(e.clone()), "factor_i: {}", e);
        // a clamped pivot scales its ancestors' rows by up to 1/mjMINVAL = 1e15; when the
        // ancestors are clamped in turn the factor overflows, which is an error (MuJoCo: inf)
        let f = match factor_i(&lay, &qm, PivotPolicy::ClampAndWarn, &mut OpCount::default()) {
            Ok(f) => f,
            Err(Error::Overflow { .. }) => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("factor_i (clamp): {e}"))),
        };
        prop_assert!(!f.warnings.is_empty());
        prop_assert!(f.warnings[0].contains(&format!("dof {k} ")), "{:?}", f.warnings);
        prop_assert_eq!(f.qld[lay.dof_madr[k]], MJ_MINVAL);
        prop_assert_eq!(f.qld_diag_inv[k], 1.0 / MJ_MINVAL);
    }
}

/// Closed forms for the two extreme shapes: a chain of n one-dof joints costs
/// `n (n - 1) / 2` divisions and `(n^3 - n) / 6` multiply-adds (as dense), and a balanced binary
/// tree of depth D (level k holds 2^(k-1) bodies at depth k) costs
/// `sum_k 2^(k-1) (k - 1)` and `sum_k 2^(k-1) k (k - 1) / 2`.
#[test]
fn chain_and_balanced_tree_costs() {
    for n in [1usize, 2, 7, 30, 100] {
        let parent: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        let mut h = generic_spd(&parent, &[0.3, -0.7, 0.5]);
        let mut o = OpCount::default();
        ltdl(&mut h, &parent, &mut o).unwrap();
        assert_eq!(
            o,
            OpCount {
                div: n * (n - 1) / 2,
                madd: (n * n * n - n) / 6,
                sqrt: 0,
                mul: 0
            },
            "chain {n}"
        );
        assert_eq!(llt_fill_in(&parent), 0, "chain {n}");
    }
    for depth in 1..=7u32 {
        let model = mbd::model::canned::binary_tree(depth as usize);
        let parent = &model.dof_parent;
        let mut h = generic_spd(parent, &[0.3, -0.7, 0.5]);
        let mut o = OpCount::default();
        ltdl(&mut h, parent, &mut o).unwrap();
        let div: usize = (1..=depth).map(|k| (1usize << (k - 1)) * (k as usize - 1)).sum();
        let madd: usize = (1..=depth)
            .map(|k| (1usize << (k - 1)) * (k as usize) * (k as usize - 1) / 2)
            .sum();
        assert_eq!(
            o,
            OpCount {
                div,
                madd,
                sqrt: 0,
                mul: 0
            },
            "binary tree depth {depth}"
        );
    }
}

/// The fill-in of a small tree by hand: dof 0 with children 1, 2 and 3 (a star). Eliminating
/// the root first connects every pair of its children: 3 fill-ins; a chain 0-1 with 2 and 3
/// hanging from 1 fills in only (3, 2).
#[test]
fn fill_in_of_small_trees_by_hand() {
    assert_eq!(llt_fill_in(&[None, Some(0), Some(0), Some(0)]), 3);
    assert_eq!(llt_fill_in(&[None, Some(0), Some(1), Some(1)]), 1);
    assert_eq!(llt_fill_in(&[None, None, Some(0), Some(1)]), 0);
}
