//! Grader of the exercises of "Solving the constraint equations, sparsity and ladders"
//! (`src/ch08.rs`): `cargo test -p exercises --test ch08`.

use exercises::ch08;
use exercises::grade::{close_mat, ensure, run, Check, Exercise, Rng};
use mbd::loops::{least_squares_bias, loop_clusters, loop_constraints, null_space, Figure83Closure, LoopClosure};
use mbd::model::loop_models::{four_loops, ladder};
use mbd::model::mechanisms::{figure_8_3, four_bar};
use mbd::model::Model;
use nalgebra::{DMatrix, DVector};

fn clusters_with(rng: &mut Rng, answer: fn(&Model) -> Vec<Vec<usize>>) -> Check {
    let n = rng.int(1, 6);
    for m in [
        four_loops(),
        ladder(n, 0.5, 0.3).expect("valid"),
        four_bar(),
        figure_8_3(1.0, 0.6).expect("valid"),
    ] {
        let expected = loop_clusters(&m).expect("valid").loops;
        ensure(
            answer(&m) == expected,
            format_args!("'{}': the clusters differ from loop_clusters", m.name),
        )?;
    }
    Ok(())
}

fn clusters(rng: &mut Rng) -> Check {
    clusters_with(rng, ch08::exercise_1)
}

fn gamma_second_derivative_with(rng: &mut Rng, answer: fn(f64, f64, [f64; 2], [f64; 2]) -> DVector<f64>) -> Check {
    let (l1, l2) = (1.0, 0.6);
    let m = figure_8_3(l1, l2).expect("valid");
    let cl = Figure83Closure { l1, l2 };
    for s in 0..8 {
        let y = [rng.uniform(-2.8, 2.8), rng.uniform(-1.5, 1.5)];
        let yd = [rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)];
        let q = cl.gamma(&y).expect("valid");
        let qd = cl.g_null(&y).expect("valid") * DVector::from_column_slice(&yd);
        let sys = loop_constraints(&m, q.as_slice(), qd.as_slice(), None).expect("valid");
        let g = answer(l1, l2, y, yd);
        ensure(g.len() == 4, "g should hold 4 numbers, one per joint")?;
        close_mat(&(&sys.kmat * &g), &sys.k, 1e-10, format_args!("state {s}: K g = k"))?;
    }
    Ok(())
}

fn gamma_second_derivative(rng: &mut Rng) -> Check {
    gamma_second_derivative_with(rng, ch08::exercise_2)
}

type LeastSquares = fn(&DMatrix<f64>, &DVector<f64>, &[usize]) -> DVector<f64>;

fn least_squares_with(rng: &mut Rng, answer: LeastSquares) -> Check {
    let m = four_loops();
    let q = m.qpos0.as_slice();
    for s in 0..4 {
        let qd = rng.vec(m.nv, 1.0);
        let sys = loop_constraints(&m, q, &qd, None).expect("valid");
        let ns = null_space(&sys.kmat, &sys.k).expect("valid");
        // push k off range(K) along a direction K cannot reach
        let svd = sys.kmat.clone().svd(true, false);
        let (imin, _) = svd.singular_values.argmin();
        let k_bad = &sys.k + svd.u.expect("computed").column(imin) * rng.uniform(1e-6, 1e-4);
        let g = answer(&sys.kmat, &k_bad, &ns.dependent);
        ensure(g.len() == m.nv, "g should hold one number per joint variable")?;
        close_mat(
            &(sys.kmat.transpose() * (&sys.kmat * &g - &k_bad)),
            &DVector::zeros(m.nv),
            1e-9,
            format_args!("state {s}: the normal equations K^T (K g - k) = 0"),
        )?;
        let reference = least_squares_bias(&sys.kmat, &k_bad, &ns.dependent).expect("valid");
        close_mat(
            &g,
            &reference,
            1e-9,
            format_args!("state {s}: against least_squares_bias"),
        )?;
    }
    Ok(())
}

fn least_squares(rng: &mut Rng) -> Check {
    least_squares_with(rng, ch08::exercise_3)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch08",
        "Solving the constraint equations, sparsity and ladders",
        13,
        &[
            Exercise {
                number: 1,
                title: "Clusters by hand",
                hint: "climb from the higher-numbered end of each loop (lambda(i) < i) until the two ends meet; loops sharing a body on their paths are coupled; merge until nothing changes",
                check: clusters,
            },
            Exercise {
                number: 2,
                title: "The second derivative of gamma",
                hint: "only theta2(y1) and d(y1) are nonlinear; g holds their second derivatives times y1'^2",
                check: gamma_second_derivative,
            },
            Exercise {
                number: 3,
                title: "Least squares",
                hint: "take the dependent columns K_D of K and solve K_D^T K_D g_D = K_D^T k; leave the independent entries zero",
                check: least_squares,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them, naming what is
/// wrong (run by `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_naming;

    #[test]
    fn one_cluster_per_loop_fails() {
        // loops that share a joint belong to one cluster
        assert!(fails_naming(0..3, "clusters differ", |rng| clusters_with(
            rng,
            |model| { (0..model.loops.len()).map(|k| vec![k]).collect() }
        )));
    }

    #[test]
    fn gdot_ydot_without_the_square_of_the_rate_fails() {
        assert!(fails_naming(0..3, "K g = k", |rng| gamma_second_derivative_with(
            rng,
            |l1, l2, y, _yd| {
                let (s1, c1) = y[0].sin_cos();
                let dd = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
                let d = dd.sqrt();
                let th2 = l1 * l2 * (l1 * l1 - l2 * l2) * s1 / (dd * dd);
                let d2 = (l1 * l2 * c1 * dd - l1 * l1 * l2 * l2 * s1 * s1) / (d * d * d);
                DVector::from_column_slice(&[0.0, th2, d2, 0.0]) // forgot * y1'^2
            }
        )));
    }

    #[test]
    fn the_minimum_norm_solution_over_every_column_fails() {
        // a least-squares solution, but not the one with the independent entries at zero
        assert!(fails_naming(0..3, "least_squares_bias", |rng| least_squares_with(
            rng,
            |kmat, k, _dependent| kmat.clone().pseudo_inverse(1e-12).expect("svd") * k
        )));
    }
}
