//! Exercises of the chapter "Solvers" (book/src/solvers.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_solver`.

use mbd::model::{canned, Solver};
use mbd::mujoco::constraint::{Efc, EfcState, EfcType};
use mbd::mujoco::solver::cost::{cones, update, zone, Zone};
use mbd::mujoco::solver::linesearch::LineSearch;
use mbd::mujoco::solver::pgs::{make_dual, solve_pgs_with, Dual, PgsVariant};
use mbd::mujoco::solver::primal::primal_cost;
use mbd::mujoco::solver::problem::{blank_contact, Problem, RowCounts, SplitMix};
use mbd::mujoco::solver::{mul_j, mul_m, solve, SolverOptions};
use nalgebra::{DMatrix, DVector};

fn options(solver: Solver, tolerance: f64, iterations: usize) -> SolverOptions {
    SolverOptions {
        solver,
        iterations,
        tolerance,
        ls_iterations: 100,
        ..Default::default()
    }
}

/// Exercise 1: the dual `min_{f >= 0} 1/2 f^T AR f + f^T b` of one-sided rows by enumerating
/// active sets: for each subset S solve `AR_SS f_S = -b_S` with the other forces 0, and keep the
/// set whose forces are non-negative and whose residual `AR f + b` is non-negative off S (the KKT
/// conditions; for a strictly convex problem exactly one set passes, up to ties).
fn exercise_1_answer(dual: &Dual) -> Vec<f64> {
    let n = dual.b.len();
    let mut best: Option<(f64, Vec<f64>)> = None;
    for mask in 0u32..(1 << n) {
        let s: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        let mut f = vec![0.0; n];
        if !s.is_empty() {
            let a = DMatrix::from_fn(s.len(), s.len(), |r, c| dual.ar[(s[r], s[c])]);
            let rhs = DVector::from_iterator(s.len(), s.iter().map(|&i| -dual.b[i]));
            let Some(x) = a.cholesky().map(|c| c.solve(&rhs)) else {
                continue;
            };
            for (k, &i) in s.iter().enumerate() {
                f[i] = x[k];
            }
        }
        let r: Vec<f64> = (0..n)
            .map(|i| dual.b[i] + (0..n).map(|k| dual.ar[(i, k)] * f[k]).sum::<f64>())
            .collect();
        let violation = f.iter().map(|x| (-x).max(0.0)).sum::<f64>()
            + (0..n)
                .filter(|i| mask & (1 << i) == 0)
                .map(|i| (-r[i]).max(0.0))
                .sum::<f64>();
        if best.as_ref().is_none_or(|(v, _)| violation < *v) {
            best = Some((violation, f));
        }
    }
    best.map(|(_, f)| f).unwrap_or_default()
}

#[test]
fn exercise_1_dual_by_enumeration() {
    for seed in 0..6u64 {
        let model = canned::chain(5, true);
        let counts = RowCounts {
            nl: 4,
            frictionless: vec![1, 1, 1],
            ..Default::default()
        };
        let p = Problem::random(&model, &counts, seed).unwrap();
        let dual = make_dual(&p.smooth(), &p.efc).unwrap();
        let f = exercise_1_answer(&dual);
        let r = solve(&p.smooth(), &p.efc, &options(Solver::Newton, 1e-15, 100)).unwrap();
        let scale = r.efc_force.iter().fold(1e-3f64, |m, x| m.max(x.abs()));
        for i in 0..f.len() {
            assert!(
                (f[i] - r.efc_force[i]).abs() < 1e-8 * scale,
                "seed {seed} row {i}: {} vs {}",
                f[i],
                r.efc_force[i]
            );
        }
    }
}

/// One elliptic contact of dimension `dim` with friction `fr`, `R_0 = 1`, impratio 1 and MuJoCo's
/// rule for the friction rows' R (so the regularized mu is `fr[0]`).
fn one_cone(dim: usize, fr: [f64; 5]) -> Efc {
    let mut e = Efc::empty(dim);
    e.efc_type = vec![EfcType::ContactElliptic; dim];
    e.efc_id = vec![0; dim];
    e.j = DMatrix::identity(dim, dim);
    e.frictionloss = vec![0.0; dim];
    e.r = (0..dim)
        .map(|j| {
            if j < 2 {
                1.0
            } else {
                fr[0] * fr[0] / (fr[j - 1] * fr[j - 1])
            }
        })
        .collect();
    e.d = e.r.iter().map(|r| 1.0 / r).collect();
    e.aref = vec![0.0; dim];
    let mut c = blank_contact(dim, fr);
    c.efc_address = Some(0);
    e.contacts = vec![c];
    e
}

/// Exercise 2: the cone Hessian `d^2 s / dx^2 = -df/dx` by central differences of the force.
fn exercise_2_answer(efc: &Efc, x: &[f64], h: f64) -> DMatrix<f64> {
    let cs = cones(efc).unwrap();
    let n = x.len();
    let force = |x: &[f64]| -> Vec<f64> {
        let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
        update(efc, &cs, x, &mut f, &mut st, None);
        f
    };
    DMatrix::from_fn(n, n, |a, b| {
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[b] += h;
        xm[b] -= h;
        -(force(&xp)[a] - force(&xm)[a]) / (2.0 * h)
    })
}

#[test]
fn exercise_2_cone_hessian_by_differences() {
    let mut rng = SplitMix(4);
    for dim in [3usize, 4, 6] {
        let fr = [0.8, 0.8, 0.05, 0.01, 0.01];
        let efc = one_cone(dim, fr);
        let cs = cones(&efc).unwrap();
        let mut tested = 0;
        // bounded: at most 200 draws
        for _ in 0..200 {
            let x: Vec<f64> = (0..dim)
                .map(|j| rng.uniform(-1.0, 1.0) / if j < 3 { 1.0 } else { fr[j - 1] })
                .collect();
            let t = (1..dim).map(|j| (fr[j - 1] * x[j]).powi(2)).sum::<f64>().sqrt();
            let (n, mu) = (cs[0].mu * x[0], cs[0].mu);
            // away from the zone boundaries, where s is only C^1
            if zone(n, t, mu) != Zone::Middle || (n - mu * t).abs() < 0.05 || (mu * n + t).abs() < 0.05 {
                continue;
            }
            let (mut f, mut st) = (vec![0.0; dim], vec![EfcState::Satisfied; dim]);
            let mut hess = vec![[0.0; 36]; 1];
            update(&efc, &cs, &x, &mut f, &mut st, Some(&mut hess));
            let fd = exercise_2_answer(&efc, &x, 1e-6);
            for a in 0..dim {
                for b in 0..dim {
                    let hab = hess[0][a * dim + b];
                    assert!(
                        (fd[(a, b)] - hab).abs() < 1e-6 * (1.0 + hab.abs()),
                        "dim {dim} H[{a}][{b}]"
                    );
                }
            }
            tested += 1;
            if tested == 10 {
                break;
            }
        }
        assert_eq!(tested, 10, "dim {dim}: not enough middle-zone points");
    }
}

/// Exercise 3: `sweeps` Gauss-Seidel sweeps on `AR f = -b` from `f = 0`.
fn exercise_3_answer(dual: &Dual, sweeps: usize) -> Vec<f64> {
    let n = dual.b.len();
    let mut f = vec![0.0; n];
    for _ in 0..sweeps {
        for i in 0..n {
            let off: f64 = (0..n).filter(|&k| k != i).map(|k| dual.ar[(i, k)] * f[k]).sum();
            f[i] = -(dual.b[i] + off) / dual.ar[(i, i)];
        }
    }
    f
}

#[test]
fn exercise_3_pgs_on_equalities_is_gauss_seidel() {
    let model = canned::floating_base_ball_arms();
    let counts = RowCounts {
        ne: 6,
        ..Default::default()
    };
    let p = Problem::random(&model, &counts, 9).unwrap();
    let dual = make_dual(&p.smooth(), &p.efc).unwrap();
    for sweeps in [1, 2, 5] {
        let gs = exercise_3_answer(&dual, sweeps);
        let cs = cones(&p.efc).unwrap();
        let o = options(Solver::Pgs, 0.0, sweeps);
        let r = solve_pgs_with(&p.smooth(), &p.efc, &cs, &o, PgsVariant::Classic).unwrap();
        assert_eq!(r.iterations, sweeps);
        for i in 0..gs.len() {
            assert!(
                (gs[i] - r.efc_force[i]).abs() < 1e-12 * (1.0 + gs[i].abs()),
                "{sweeps} sweeps, row {i}"
            );
        }
    }
}

/// Exercise 4: `phi'(alpha)` of `phi(alpha) = C(a + alpha p) - C(a)` by central differences of
/// the primal cost.
fn exercise_4_answer(p: &Problem, a: &[f64], dir: &[f64], alpha: f64, h: f64) -> f64 {
    let cs = cones(&p.efc).unwrap();
    let n = p.efc.nefc();
    let cost = |t: f64| {
        let x: Vec<f64> = a.iter().zip(dir).map(|(ai, pi)| ai + t * pi).collect();
        let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
        primal_cost(&p.smooth(), &p.efc, &cs, &x, &mut f, &mut st)
    };
    (cost(alpha + h) - cost(alpha - h)) / (2.0 * h)
}

#[test]
fn exercise_4_line_search_derivative() {
    let model = canned::binary_tree(3);
    let counts = RowCounts {
        ne: 1,
        nf: 2,
        nl: 2,
        frictionless: vec![1],
        pyramidal: vec![],
        elliptic: vec![3, 4, 6],
    };
    let p = Problem::random(&model, &counts, 21).unwrap();
    let (nv, n) = (p.layout.nv, p.efc.nefc());
    let cs = cones(&p.efc).unwrap();
    let mut rng = SplitMix(8);
    let a: Vec<f64> = p.qacc_smooth.iter().map(|x| x + rng.uniform(-1.0, 1.0)).collect();
    let dir: Vec<f64> = (0..nv).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let mut ma = vec![0.0; nv];
    mul_m(&p.layout, &p.qm, &a, &mut ma);
    let mut jar = vec![0.0; n];
    mul_j(&p.efc, &a, &mut jar);
    for (x, r) in jar.iter_mut().zip(&p.efc.aref) {
        *x -= r;
    }
    let mut ls = LineSearch::new(nv, n, cs.len());
    mul_m(&p.layout, &p.qm, &dir, &mut ls.mv);
    mul_j(&p.efc, &dir, &mut ls.jv);
    ls.prepare(&p.efc, &cs, &dir, &ma, &p.qfrc_smooth, &jar);
    for k in 0..20 {
        let alpha = -1.0 + 0.1 * k as f64;
        let exact = ls.eval(&p.efc, &cs, &jar, alpha);
        let fd = exercise_4_answer(&p, &a, &dir, alpha, 1e-6);
        assert!(
            (exact.d1 - fd).abs() < 1e-5 * (1.0 + fd.abs()),
            "alpha {alpha}: {} vs {fd}",
            exact.d1
        );
    }
}
