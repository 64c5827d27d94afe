//! Exercises of the chapter "The composite-rigid-body algorithm" (book/src/crba.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_ch06`.

use mbd::dynamics::{crba, rnea};
use mbd::kinematics::supports;
use mbd::model::canned;
use mbd::model::{Joint, Model, ModelBuilder};
use mbd::spatial::{xlt, Mat3, SpatialInertia, Vec3};
use nalgebra::DMatrix;

/// Exercise 1: H by Featherstone 6.1's method, one inverse-dynamics call per column. With
/// gravity off and `qdot = 0` the bias force vanishes, so `ID(q, 0, e_j)` is column j of H.
fn exercise_1_answer(model: &Model, q: &[f64]) -> DMatrix<f64> {
    let mut m0 = model.clone();
    m0.opt.gravity = Vec3::zeros();
    let n = model.nv;
    let mut h = DMatrix::zeros(n, n);
    let zeros = vec![0.0; n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let col = rnea(&m0, q, &zeros, &e, None).expect("valid state");
        h.set_column(j, &col);
    }
    h
}

/// Exercise 2: `H_11` of the planar triple pendulum `canned::chain(3, false)` by the
/// parallel-axis theorem: the moment of inertia of all three links about joint 1's axis (y
/// through the origin) with joints 2 and 3 locked at `q`. Links: masses 1.0, 1.1, 1.2 kg,
/// lengths 0.5, 0.49, 0.48 m, uniform rods (inertia m l^2 / 12 about a transverse axis through
/// the centre of mass), centres of mass at mid-length.
fn exercise_2_answer(q: [f64; 3]) -> f64 {
    let m = [1.0, 1.1, 1.2];
    let l = [0.5, 0.49, 0.48];
    let mut h11 = 0.0;
    let mut joint = (0.0f64, 0.0f64); // (x, z) of the current joint
    let mut angle = 0.0;
    for k in 0..3 {
        angle += q[k];
        // the link hangs along (-sin angle, -cos angle) in the x-z plane
        let dir = (-angle.sin(), -angle.cos());
        let com = (joint.0 + 0.5 * l[k] * dir.0, joint.1 + 0.5 * l[k] * dir.1);
        let d2 = com.0 * com.0 + com.1 * com.1;
        h11 += m[k] * l[k] * l[k] / 12.0 + m[k] * d2;
        joint = (joint.0 + l[k] * dir.0, joint.1 + l[k] * dir.1);
    }
    h11
}

/// Exercise 3: the sparsity pattern of H predicted from the parent array alone (bodies 1..=n,
/// one dof each; `lambda[0]` unused): `pattern[i-1][j-1]` is true when body i is body j, an
/// ancestor of it, or a descendant of it.
fn exercise_3_answer(lambda: &[usize]) -> Vec<Vec<bool>> {
    let n = lambda.len() - 1;
    let mut pattern = vec![vec![false; n]; n];
    for i in 1..=n {
        // walk from i to the base, marking i with each of its ancestors (and symmetrically)
        let mut j = i;
        while j != 0 {
            pattern[i - 1][j - 1] = true;
            pattern[j - 1][i - 1] = true;
            j = lambda[j];
        }
    }
    pattern
}

/// Exercise 4: the number of entries of H that may be nonzero for a balanced binary tree with
/// `depth` levels (2^depth - 1 bodies). Level k holds 2^(k-1) bodies, each at depth k, and a
/// body at depth d contributes 2 d - 1 entries (its diagonal and d - 1 ancestor pairs counted
/// twice): sum_k 2^(k-1) (2k - 1) = (2 depth - 3) 2^depth + 3.
fn exercise_4_answer(depth: u32) -> usize {
    let d = depth as i64;
    ((2 * d - 3) * (1i64 << d) + 3) as usize
}

/// A tree with generic geometry (no symmetry, so every allowed entry of H is really nonzero):
/// two branches from body 1, and a second tree hanging from the base.
fn generic_tree() -> Model {
    let lambda = [0, 0, 1, 1, 2, 2, 3, 0, 7, 8];
    let mut b = ModelBuilder::new("generic tree");
    for (i, &parent) in lambda.iter().enumerate().skip(1) {
        let t = i as f64;
        let axis = Vec3::new(0.3 * t.sin(), 1.0, 0.4 * (2.0 * t).cos());
        let com = Vec3::new(0.05 * t.cos(), 0.03 * (1.0 + t).sin(), -0.2);
        let ic = Mat3::new(0.02, 0.0005 * t, 0.0, 0.0005 * t, 0.025, 0.002, 0.0, 0.002, 0.015);
        let pos = Vec3::new(0.1 * (t * 0.7).sin(), 0.05 * t.cos(), -0.3);
        b.add_body(
            &format!("b{i}"),
            parent,
            Joint::revolute(axis),
            xlt(pos),
            SpatialInertia::from_mass_com_inertia(1.0 + 0.1 * t, com, ic),
        );
    }
    b.build().unwrap()
}

fn generic_q(model: &Model) -> Vec<f64> {
    (0..model.nq).map(|k| 0.4 + 0.37 * (k as f64 * 1.9).sin()).collect()
}

#[test]
fn exercise_1_h_from_inverse_dynamics_columns() {
    // against CRBA, 1e-12 relative to max |H|, on a 3-D chain, a tree and a floating base with
    // ball joints and armature
    let mut floating = canned::floating_base_ball_arms();
    for j in floating.joints.iter_mut() {
        j.armature = 0.05;
    }
    for model in [canned::chain(7, true), generic_tree(), floating] {
        let mut q = model.qpos0.clone();
        let v: Vec<f64> = (0..model.nv).map(|k| 0.5 * (k as f64 * 1.3 + 0.2).sin()).collect();
        model.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
        let expected = crba(&model, q.as_slice()).unwrap();
        let got = exercise_1_answer(&model, q.as_slice());
        let err = (&got - &expected).amax();
        assert!(
            err < 1e-12 * expected.amax().max(1.0),
            "{}: max |H - CRBA| = {err:e}",
            model.name
        );
    }
}

#[test]
fn exercise_2_h11_by_the_parallel_axis_theorem() {
    // against CRBA's H[0][0], 1e-12 kg m^2, at several configurations
    let model = canned::chain(3, false);
    for q in [[0.0, 0.0, 0.0], [0.4, -1.0, 2.0], [2.5, 0.3, -0.8], [-1.2, 3.0, 1.0]] {
        let h = crba(&model, &q).unwrap();
        let got = exercise_2_answer(q);
        assert!(
            (got - h[(0, 0)]).abs() < 1e-12,
            "q = {q:?}: {got} vs CRBA {}",
            h[(0, 0)]
        );
    }
}

#[test]
fn exercise_3_sparsity_from_the_parent_array() {
    // every entry the pattern forbids must be exactly zero in CRBA's H, and every entry it
    // allows must be nonzero for a model with generic geometry (|H_ij| > 1e-9 max |H|)
    for model in [generic_tree(), canned::chain(6, true)] {
        let h = crba(&model, &generic_q(&model)).unwrap();
        let pattern = exercise_3_answer(&model.lambda);
        assert_eq!(pattern.len(), model.nb);
        for i in 0..model.nb {
            for j in 0..model.nb {
                if pattern[i][j] {
                    assert!(
                        h[(i, j)].abs() > 1e-9 * h.amax(),
                        "{}: H[{i}][{j}] = {:e} is allowed but zero",
                        model.name,
                        h[(i, j)]
                    );
                } else {
                    assert_eq!(h[(i, j)], 0.0, "{}: H[{i}][{j}] is forbidden but nonzero", model.name);
                }
            }
        }
    }
}

#[test]
fn exercise_4_nonzero_count_of_a_balanced_tree() {
    // against a direct count of supporting pairs on canned::binary_tree(depth), depth 1..=8
    for depth in 1..=8u32 {
        let model = canned::binary_tree(depth as usize);
        let mut count = 0;
        for i in 1..=model.nb {
            for j in 1..=model.nb {
                if supports(&model, i, j) || supports(&model, j, i) {
                    count += 1;
                }
            }
        }
        assert_eq!(exercise_4_answer(depth), count, "depth {depth} ({} bodies)", model.nb);
    }
}
