//! Grader of the exercises of "Solvers" (`src/ch13.rs`): `cargo test -p exercises --test ch13`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).

use exercises::ch13;
use exercises::grade::{close, ensure, run, Check, Exercise, Rng};
use mbd::model::constants::MJ_MINVAL;
use mbd::model::{canned, Model, Solver};
use mbd::mujoco::constraint::{Efc, EfcState, EfcType, SparseRows};
use mbd::mujoco::solver::cost::{cones, update, zone, Zone};
use mbd::mujoco::solver::linesearch::LineSearch;
use mbd::mujoco::solver::pgs::noslip::edge_pair;
use mbd::mujoco::solver::pgs::{make_dual, solve_pgs_with, PgsVariant};
use mbd::mujoco::solver::problem::{blank_contact, Problem, RowCounts};
use mbd::mujoco::solver::{mul_j, mul_m, solve, SolverOptions};
use nalgebra::DMatrix;

fn options(solver: Solver, tolerance: f64, iterations: usize) -> SolverOptions {
    SolverOptions {
        solver,
        iterations,
        tolerance,
        ls_iterations: 100,
        ..Default::default()
    }
}

fn problem(model: &Model, counts: &RowCounts, rng: &mut Rng) -> Result<Problem, String> {
    Problem::random(model, counts, rng.next_u64()).map_err(|e| format!("grader: a random problem: {e}"))
}

/// The forces `ours` against `theirs` row by row, each within `tol(theirs[i])`; the messages
/// start with `what` and name the reference as `against`.
fn same_forces(ours: &[f64], theirs: &[f64], tol: impl Fn(f64) -> f64, what: &str, against: &str) -> Check {
    ensure(ours.len() == theirs.len(), format_args!("{what}: the number of forces"))?;
    for (i, (&o, &t)) in ours.iter().zip(theirs).enumerate() {
        close(o, t, tol(t), format_args!("{what}: row {i}'s force against {against}"))?;
    }
    Ok(())
}

fn dual_with(rng: &mut Rng, f: fn(&DMatrix<f64>, &[f64]) -> Vec<f64>) -> Check {
    let model = canned::chain(5, true);
    for s in 0..6 {
        let counts = RowCounts {
            nl: rng.int(1, 4),
            frictionless: vec![1; rng.int(1, 4)],
            ..Default::default()
        };
        let p = problem(&model, &counts, rng)?;
        let dual = make_dual(&p.smooth(), &p.efc).map_err(|e| format!("grader: {e}"))?;
        let ours = f(&dual.ar, &dual.b);
        let r = solve(&p.smooth(), &p.efc, &options(Solver::Newton, 1e-15, 100)).map_err(|e| format!("grader: {e}"))?;
        let scale = r.efc_force.iter().fold(1e-3f64, |m, x| m.max(x.abs()));
        same_forces(
            &ours,
            &r.efc_force,
            |_| 1e-8 * scale,
            &format!("problem {s}"),
            "Newton's",
        )?;
    }
    Ok(())
}

fn dual_check(rng: &mut Rng) -> Check {
    dual_with(rng, ch13::exercise_1)
}

/// One elliptic contact of dimension `dim` with friction `fr`, `R_0 = 1`, impratio 1 and
/// MuJoCo's rule for the friction rows' R (so the regularized mu is `fr[0]`).
fn one_cone(dim: usize, fr: [f64; 5]) -> Efc {
    let mut e = Efc::empty(dim);
    e.efc_type = vec![EfcType::ContactElliptic; dim];
    e.efc_id = vec![0; dim];
    e.j = SparseRows::from_dense(&DMatrix::identity(dim, dim));
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

fn hessian_with(rng: &mut Rng, f: fn(&Efc, &[f64]) -> DMatrix<f64>) -> Check {
    for dim in [3usize, 4, 6] {
        let mu = rng.uniform(0.3, 1.2);
        let fr = [
            mu,
            mu,
            rng.uniform(0.01, 0.1),
            rng.uniform(0.005, 0.05),
            rng.uniform(0.005, 0.05),
        ];
        let efc = one_cone(dim, fr);
        let cs = cones(&efc).map_err(|e| format!("grader: {e}"))?;
        let mut tested = 0;
        for _ in 0..1000 {
            let x: Vec<f64> = (0..dim)
                .map(|j| rng.uniform(-1.0, 1.0) / if j < 2 { 1.0 } else { fr[j - 1] })
                .collect();
            let t = (1..dim).map(|j| (fr[j - 1] * x[j]).powi(2)).sum::<f64>().sqrt();
            let (n, mu) = (cs[0].mu * x[0], cs[0].mu);
            // away from the zone boundaries, where the cost is only C^1
            if zone(n, t, mu) != Zone::Middle || (n - mu * t).abs() < 0.05 || (mu * n + t).abs() < 0.05 {
                continue;
            }
            let (mut force, mut st) = (vec![0.0; dim], vec![EfcState::Satisfied; dim]);
            let mut hess = vec![[0.0; 36]; 1];
            update(&efc, &cs, &x, &mut force, &mut st, Some(&mut hess));
            let ours = f(&efc, &x);
            ensure(
                ours.shape() == (dim, dim),
                format_args!("dimension {dim}: a {:?} matrix", ours.shape()),
            )?;
            for a in 0..dim {
                for b in 0..dim {
                    let hab = hess[0][a * dim + b];
                    close(
                        ours[(a, b)],
                        hab,
                        1e-6 * (1.0 + hab.abs()),
                        format_args!("dimension {dim}, point {tested}: entry ({a}, {b}) against the cone's Hessian"),
                    )?;
                }
            }
            tested += 1;
            if tested == 5 {
                break;
            }
        }
        ensure(
            tested == 5,
            format_args!("grader: dimension {dim}: too few middle-zone points"),
        )?;
    }
    Ok(())
}

fn hessian_check(rng: &mut Rng) -> Check {
    hessian_with(rng, ch13::exercise_2)
}

fn gauss_seidel_with(rng: &mut Rng, f: fn(&DMatrix<f64>, &[f64], usize) -> Vec<f64>) -> Check {
    for s in 0..4 {
        let model = if s % 2 == 0 {
            canned::floating_base_ball_arms()
        } else {
            canned::chain(6, true)
        };
        let counts = RowCounts {
            ne: rng.int(2, 8),
            ..Default::default()
        };
        let p = problem(&model, &counts, rng)?;
        let dual = make_dual(&p.smooth(), &p.efc).map_err(|e| format!("grader: {e}"))?;
        let cs = cones(&p.efc).map_err(|e| format!("grader: {e}"))?;
        for sweeps in [1, 2, 5] {
            let ours = f(&dual.ar, &dual.b, sweeps);
            let o = options(Solver::Pgs, 0.0, sweeps);
            let r = solve_pgs_with(&p.smooth(), &p.efc, &cs, &o, PgsVariant::Classic)
                .map_err(|e| format!("grader: {e}"))?;
            let tol = |f: f64| 1e-12 * (1.0 + f.abs());
            let what = format!("problem {s}, {sweeps} sweeps");
            same_forces(&ours, &r.efc_force, tol, &what, "classic PGS")?;
        }
    }
    Ok(())
}

fn gauss_seidel_check(rng: &mut Rng) -> Check {
    gauss_seidel_with(rng, ch13::exercise_3)
}

fn line_search_with(rng: &mut Rng, f: fn(&Problem, &[f64], &[f64], f64, f64) -> f64) -> Check {
    let model = canned::binary_tree(3);
    for s in 0..3 {
        let counts = RowCounts {
            ne: rng.int(0, 2),
            nf: rng.int(0, 2),
            nl: rng.int(0, 2),
            frictionless: vec![1; rng.int(0, 2)],
            pyramidal: vec![],
            elliptic: (0..rng.int(1, 3)).map(|_| [3, 4, 6][rng.int(0, 2)]).collect(),
        };
        let p = problem(&model, &counts, rng)?;
        let (nv, n) = (p.layout.nv, p.efc.nefc());
        let cs = cones(&p.efc).map_err(|e| format!("grader: {e}"))?;
        let a: Vec<f64> = p.qacc_smooth.iter().map(|x| x + rng.uniform(-1.0, 1.0)).collect();
        let dir = rng.vec(nv, 1.0);
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
        for k in 0..10 {
            let alpha = rng.uniform(-1.0, 1.0);
            let exact = ls.eval(&p.efc, &cs, &jar, alpha);
            let ours = f(&p, &a, &dir, alpha, 1e-6);
            close(
                ours,
                exact.d1,
                1e-5 * (1.0 + exact.d1.abs()),
                format_args!("problem {s}, step {k}: phi' against the line search's exact derivative"),
            )?;
        }
    }
    Ok(())
}

fn line_search_check(rng: &mut Rng) -> Check {
    line_search_with(rng, ch13::exercise_4)
}

/// The kinds of pair the edge-pair check draws, in turn (named in its messages).
const PAIR_KINDS: [&str; 7] = [
    "a generic pair",
    "a pair whose minimum has edge 0 at zero",
    "a pair whose minimum has edge 1 at zero",
    "a pair with K1 near 0",
    "a pair with K1 = 0",
    "a pair without force",
    "a pair with one edge at zero",
];

/// A random pair of opposite edges of kind `PAIR_KINDS[kind]`: the block `a` (symmetric,
/// positive semidefinite), the linear term `c` and the current forces `f` (both >= 0).
fn random_pair(kind: usize, rng: &mut Rng) -> ([[f64; 2]; 2], [f64; 2], [f64; 2]) {
    let mut f = [rng.uniform(0.1, 2.0), rng.uniform(0.1, 2.0)];
    let mut c = [rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)];
    let a = if kind == 3 || kind == 4 {
        // a = u u^T with u along (1, 1) up to delta: K1 = (u0 - u1)^2 = s^2 delta^2, exactly 0
        // for delta = 0 (the pair's difference moves nothing)
        let s = rng.uniform(0.3, 1.5);
        let delta = if kind == 4 {
            0.0
        } else {
            [1e-9, 1e-6, 1e-4][rng.int(0, 2)]
        };
        let u = [s, s * (1.0 + delta)];
        [[u[0] * u[0], u[0] * u[1]], [u[1] * u[0], u[1] * u[1]]]
    } else {
        // a = L L^T with K1 = (l00 - l10)^2 + l11^2 >= 0.04, a well-conditioned vertex
        let (l00, l10, l11) = (rng.uniform(0.2, 1.5), rng.uniform(-1.0, 1.0), rng.uniform(0.2, 1.5));
        [[l00 * l00, l00 * l10], [l00 * l10, l10 * l10 + l11 * l11]]
    };
    // the slope K0 = m (a00 - a11) + c0 - c1 chosen through c0: the vertex -K0 / K1 beyond -m
    // (edge 0 at zero) or beyond m (edge 1 at zero), or a clear slope where K1 is (near) 0
    let (k1, m) = (a[0][0] + a[1][1] - a[0][1] - a[1][0], 0.5 * (f[0] + f[1]));
    let k0 = match kind {
        1 => Some(k1 * m + rng.uniform(0.05, 1.0)),
        2 => Some(-(k1 * m + rng.uniform(0.05, 1.0))),
        3 | 4 => Some(rng.uniform(0.1, 1.0) * if rng.int(0, 1) == 0 { 1.0 } else { -1.0 }),
        _ => None,
    };
    if let Some(k0) = k0 {
        c[0] = k0 - m * (a[0][0] - a[1][1]) + c[1];
    }
    if kind == 5 {
        f = [0.0, 0.0];
    } else if kind == 6 {
        f[rng.int(0, 1)] = 0.0;
    }
    (a, c, f)
}

/// `1/2 g^T a g + c^T g`.
fn pair_cost(a: &[[f64; 2]; 2], c: &[f64; 2], g: &[f64; 2]) -> f64 {
    let mut cost = 0.0;
    for p in 0..2 {
        cost += c[p] * g[p];
        for q in 0..2 {
            cost += 0.5 * g[p] * a[p][q] * g[q];
        }
    }
    cost
}

/// An answer to exercise 5: the block, the linear term and the forces to the new forces.
type EdgePair = fn(&[[f64; 2]; 2], &[f64; 2], &[f64; 2]) -> [f64; 2];

fn edge_pair_with(rng: &mut Rng, f: EdgePair) -> Check {
    for k in 0..42 {
        let kind = k % PAIR_KINDS.len();
        let (a, c, old) = random_pair(kind, rng);
        let what = format!("pair {k} ({})", PAIR_KINDS[kind]);
        let g = f(&a, &c, &old);
        let s = old[0] + old[1];
        // on the segment: the sum kept, both edges pushing
        close(
            g[0] + g[1],
            s,
            1e-12 * (1.0 + s),
            format_args!("{what}: the sum of the two edge forces"),
        )?;
        for (i, gi) in g.iter().enumerate() {
            ensure(
                *gi >= 0.0,
                format_args!("{what}: edge {i}'s force is negative (both edges must push)"),
            )?;
        }
        // no feasible point cheaper: 200 inside the segment and its two ends
        let anorm: f64 = a.iter().flatten().map(|x| x.abs()).sum();
        let scale = (0.5 * anorm * s + c[0].abs() + c[1].abs()) * (1.0 + s);
        let ours = pair_cost(&a, &c, &g);
        for i in 0..=201 {
            let t = if i == 201 { s } else { s * i as f64 / 201.0 };
            ensure(
                ours <= pair_cost(&a, &c, &[t, s - t]) + 1e-12 * scale,
                format_args!("{what}: a point of the segment costs less than your forces (tolerance 1e-12 relative)"),
            )?;
        }
        // the library's step, where it is the minimizer: below mjMINVAL it puts the pair at its
        // midpoint. Its guard (a rise of the cost above 1e-10 restores `old`) cannot fire here:
        // its step is the minimizer, and rounding on these scales is far below 1e-10.
        let k1 = a[0][0] + a[1][1] - a[0][1] - a[1][0];
        if k1 >= MJ_MINVAL {
            let mut ab = [0.0; 36];
            ab[..4].copy_from_slice(&[a[0][0], a[0][1], a[1][0], a[1][1]]);
            let res = [
                c[0] + a[0][0] * old[0] + a[0][1] * old[1],
                c[1] + a[1][0] * old[0] + a[1][1] * old[1],
            ];
            let mut theirs = old;
            edge_pair(&ab, &res, &old, &mut theirs);
            for i in 0..2 {
                close(
                    g[i],
                    theirs[i],
                    1e-12 * (1.0 + s),
                    format_args!("{what}: edge {i}'s force against noslip::edge_pair"),
                )?;
            }
        }
    }
    Ok(())
}

fn edge_pair_check(rng: &mut Rng) -> Check {
    edge_pair_with(rng, ch13::exercise_5)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch13",
        "Solvers",
        13,
        &[
            Exercise {
                number: 1,
                title: "The dual by brute force",
                hint: "for every subset S solve AR_SS f_S = -b_S; keep the set with f >= 0 on S and AR f + b >= 0 off it",
                check: dual_check,
            },
            Exercise {
                number: 2,
                title: "The cone Hessian by finite differences",
                hint: "the cost's gradient is -f, so the Hessian is -df/dx: column b is -(f(x + h e_b) - f(x - h e_b)) / 2h",
                check: hessian_check,
            },
            Exercise {
                number: 3,
                title: "One PGS sweep is a Gauss-Seidel sweep",
                hint: "update f_i in place, row after row, so later rows see the new values of earlier ones in the same sweep",
                check: gauss_seidel_check,
            },
            Exercise {
                number: 4,
                title: "The line search's derivative",
                hint: "(C(a + (alpha + h) dir) - C(a + (alpha - h) dir)) / 2h, with primal_cost",
                check: line_search_check,
            },
            Exercise {
                number: 5,
                title: "The noslip edge pair",
                hint: "with g = (m + y, m - y), m = (f0 + f1) / 2, the cost is 1/2 K1 y^2 + K0 y + const: take its vertex clamped to [-m, m], or the cheaper end where K1 = 0",
                check: edge_pair_check,
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
    use exercises::grade::{fails_naming, fails_on};
    use nalgebra::DVector;

    #[test]
    fn the_unconstrained_minimum_fails() {
        assert!(fails_on(0..3, |rng| dual_with(rng, |ar, b| {
            let rhs = -DVector::from_column_slice(b);
            ar.clone().cholesky().unwrap().solve(&rhs).iter().copied().collect()
        })));
    }

    #[test]
    fn the_derivative_of_the_force_with_the_wrong_sign_fails() {
        assert!(fails_on(0..3, |rng| hessian_with(rng, |efc, x| {
            let cs = cones(efc).unwrap();
            let n = x.len();
            let force = |x: &[f64]| {
                let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
                update(efc, &cs, x, &mut f, &mut st, None);
                f
            };
            DMatrix::from_fn(n, n, |a, b| {
                let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
                xp[b] += 1e-6;
                xm[b] -= 1e-6;
                (force(&xp)[a] - force(&xm)[a]) / 2e-6
            })
        })));
    }

    #[test]
    fn a_jacobi_sweep_fails() {
        assert!(fails_on(0..3, |rng| gauss_seidel_with(rng, |ar, b, sweeps| {
            let n = b.len();
            let mut f = vec![0.0; n];
            for _ in 0..sweeps {
                let old = f.clone();
                for i in 0..n {
                    let off: f64 = (0..n).filter(|&k| k != i).map(|k| ar[(i, k)] * old[k]).sum();
                    f[i] = -(b[i] + off) / ar[(i, i)];
                }
            }
            f
        })));
    }

    #[test]
    fn a_central_difference_over_h_fails() {
        assert!(fails_on(0..3, |rng| line_search_with(rng, |p, a, dir, alpha, h| {
            let cs = cones(&p.efc).unwrap();
            let n = p.efc.nefc();
            let cost = |t: f64| {
                let x: Vec<f64> = a.iter().zip(dir).map(|(ai, pi)| ai + t * pi).collect();
                let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
                mbd::mujoco::solver::primal::primal_cost(&p.smooth(), &p.efc, &cs, &x, &mut f, &mut st)
            };
            (cost(alpha + h) - cost(alpha - h)) / h // should be 2h
        })));
    }

    #[test]
    fn forgetting_the_clamp_fails() {
        assert!(fails_naming(0..3, "negative", |rng| edge_pair_with(rng, |a, c, f| {
            let m = 0.5 * (f[0] + f[1]);
            let k1 = a[0][0] + a[1][1] - a[0][1] - a[1][0];
            let k0 = m * (a[0][0] - a[1][1]) + c[0] - c[1];
            let y = -k0 / k1; // not clamped to [-m, m]
            [m + y, m - y]
        })));
    }

    #[test]
    fn each_edge_on_its_own_fails() {
        // one projected Gauss-Seidel sweep over the two rows: the pair's sum moves
        assert!(fails_naming(0..3, "sum", |rng| edge_pair_with(rng, |a, c, f| {
            let g0 = (-(c[0] + a[0][1] * f[1]) / a[0][0]).max(0.0);
            let g1 = (-(c[1] + a[1][0] * g0) / a[1][1]).max(0.0);
            [g0, g1]
        })));
    }

    #[test]
    fn the_midpoint_where_k1_vanishes_fails() {
        // MuJoCo's choice below mjMINVAL: harmless there, but not the minimizer the task asks for
        assert!(fails_naming(0..3, "costs less", |rng| edge_pair_with(
            rng,
            |a, c, f| {
                let m = 0.5 * (f[0] + f[1]);
                let k1 = a[0][0] + a[1][1] - a[0][1] - a[1][0];
                let k0 = m * (a[0][0] - a[1][1]) + c[0] - c[1];
                if k1 < MJ_MINVAL {
                    return [m, m];
                }
                let y = (-k0 / k1).clamp(-m, m);
                [m + y, m - y]
            }
        )));
    }
}
