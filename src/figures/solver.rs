//! Figures and report of the chapter "Solvers" (MuJoCo's `mj_solPGS`, `mj_solCG`,
//! `mj_solNewton`; spec sections 5-6).
//!
//! - `solver_box_stack.svg`: distance to the optimum of the cost vs iteration for PGS (classic
//!   and MuJoCo's accelerated sweep), CG and Newton on MuJoCo's own solver inputs for the settled box stack (the committed fixture
//!   `tests/fixtures/solver/box_stack_pyramidal.json`, read at compile time: no Python).
//! - `solver_humanoid.svg`: the same for the settled humanoid with elliptic cones.
//! - `solver_gradient.svg`: the scaled gradient (CG, Newton) and scaled improvement (PGS, which
//!   has no gradient, and CG) per iteration, the quantities the termination tests read.
//! - `solver_cones.svg`: level sets of the constraint cost `s(x)` of one condim-3 contact in the
//!   plane `x_t2 = 0` for the pyramidal and the elliptic cone at several friction coefficients:
//!   both are zero on the same cone, and grow differently outside it.
//! - `solver_noslip.svg`: the box on the 20 degree incline, stepped for 2 s from rest with
//!   either cone, with and without the noslip pass: how far it creeps down the slope.

use crate::error::Result;
use crate::model::{Cone, Solver};
use crate::mujoco::collision::MjContact;
use crate::mujoco::constraint::{Efc, EfcState, EfcType, SparseRows};
use crate::mujoco::integrator::{Simulator, State};
use crate::mujoco::solver::cost::{cones, update};
use crate::mujoco::solver::pgs::{solve_pgs_with, PgsVariant};
use crate::mujoco::solver::primal::primal_cost;
use crate::mujoco::solver::problem::{blank_contact, Problem};
use crate::mujoco::solver::{solve, SolverOptions, SolverResult};
use crate::plot::{Chart, Series};
use nalgebra::DMatrix;
use std::path::{Path, PathBuf};

/// MuJoCo's inputs for the settled box stack, pyramidal cones (the committed fixture).
pub const BOX_STACK_JSON: &str = include_str!("../../tests/fixtures/solver/box_stack_pyramidal.json");
/// MuJoCo's inputs for the settled gymnasium humanoid, elliptic cones.
pub const HUMANOID_JSON: &str = include_str!("../../tests/fixtures/solver/humanoid_elliptic.json");

/// The problem of an embedded fixture.
pub fn fixture_problem(json: &str) -> Result<Problem> {
    let case: serde_json::Value = serde_json::from_str(json).map_err(|e| crate::Error::InvalidArgument {
        what: "solver fixture".into(),
        why: e.to_string(),
    })?;
    Problem::from_fixture_json(&case)
}

/// The options of the figures: tolerance 1e-15 (so every solver runs until its own test stops
/// it or 200 iterations), 100 line-search evaluations.
pub fn figure_options(solver: Solver) -> SolverOptions {
    SolverOptions {
        solver,
        iterations: 200,
        tolerance: 1e-15,
        ls_iterations: 100,
        ..Default::default()
    }
}

/// The three solvers on `p` as [`solve`] runs them: (PGS, CG, Newton).
pub fn run_three(p: &Problem) -> Result<[SolverResult; 3]> {
    let sm = p.smooth();
    Ok([
        solve(&sm, &p.efc, &figure_options(Solver::Pgs))?,
        solve(&sm, &p.efc, &figure_options(Solver::Cg))?,
        solve(&sm, &p.efc, &figure_options(Solver::Newton))?,
    ])
}

/// Distance to the optimum per iteration: `C(a_k) - C*` for CG and Newton, `D(f_k) + C*` for
/// PGS (strong duality: the dual optimum is `-C*`), with `C*` Newton's final cost; values below
/// `1e-16 |C*|` are drawn at that floor. Iteration 0 is the starting point.
pub fn suboptimality(p: &Problem, runs: &[SolverResult; 3]) -> Result<[Vec<(f64, f64)>; 3]> {
    let cs = cones(&p.efc)?;
    let n = p.efc.nefc();
    let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
    let c0 = primal_cost(&p.smooth(), &p.efc, &cs, &p.qacc_smooth, &mut f, &mut st);
    let cstar = runs[2].stats.last().map_or(c0, |s| s.cost);
    let floor = 1e-16 * cstar.abs().max(1e-300);
    let curve = |start: f64, r: &SolverResult, sign: f64| -> Vec<(f64, f64)> {
        std::iter::once((0.0, (start - sign * cstar).max(floor)))
            .chain(
                r.stats
                    .iter()
                    .enumerate()
                    .map(|(k, s)| ((k + 1) as f64, (s.cost - sign * cstar).max(floor))),
            )
            .collect()
    };
    Ok([
        curve(0.0, &runs[0], -1.0),
        curve(c0, &runs[1], 1.0),
        curve(c0, &runs[2], 1.0),
    ])
}

/// Classic PGS (sequential, no momentum) at the figures' options.
pub fn run_pgs_classic(p: &Problem) -> Result<SolverResult> {
    let cs = cones(&p.efc)?;
    solve_pgs_with(
        &p.smooth(),
        &p.efc,
        &cs,
        &figure_options(Solver::Pgs),
        PgsVariant::Classic,
    )
}

fn convergence_chart(title: &str, p: &Problem) -> Result<Chart> {
    let runs = run_three(p)?;
    let [pgs, cg, newton] = suboptimality(p, &runs)?;
    let classic = run_pgs_classic(p)?;
    let [pgs_classic, _, _] = suboptimality(p, &[classic.clone(), runs[1].clone(), runs[2].clone()])?;
    println!(
        "  {title}: iterations PGS {} (classic {}), CG {}, Newton {}",
        runs[0].iterations, classic.iterations, runs[1].iterations, runs[2].iterations
    );
    Ok(Chart::new(title, "iteration", "cost - optimum (dual for PGS)")
        .log(false, true)
        .with(Series::line_points("PGS, classic sweep (dual cost)", pgs_classic))
        .with(Series::line_points("PGS, MuJoCo's: shuffled + momentum", pgs))
        .with(Series::line_points("CG (Hager-Zhang)", cg))
        .with(Series::line_points("Newton", newton)))
}

/// One contact of condim 3 with friction `mu` in a two-row-per-edge pyramid or a 3-row ellipse,
/// `R_0 = 1` and impratio 1 (so `mu_reg = mu`): the rows [`update`] reads.
pub fn single_contact(mu: f64, elliptic: bool) -> Efc {
    let mut con: MjContact = blank_contact(3, [mu, mu, 0.005, 1e-4, 1e-4]);
    con.efc_address = Some(0);
    let (kind, n) = if elliptic {
        (EfcType::ContactElliptic, 3)
    } else {
        (EfcType::ContactPyramidal, 4)
    };
    let mut e = Efc::empty(3);
    e.efc_type = vec![kind; n];
    e.efc_id = vec![0; n];
    e.j = SparseRows::from_dense(&DMatrix::zeros(n, 3));
    e.frictionloss = vec![0.0; n];
    // spec 4.5: elliptic R_1 = R_0 / impratio, R_2 = R_1 mu_1^2 / mu_2^2; pyramidal 2 mu^2 R_0
    e.r = if elliptic { vec![1.0; 3] } else { vec![2.0 * mu * mu; 4] };
    e.d = e.r.iter().map(|r| 1.0 / r).collect();
    e.aref = vec![0.0; n];
    e.contacts = vec![con];
    e
}

/// The constraint cost `s` of [`single_contact`] at the contact-frame relative acceleration
/// `(x_n, x_t, 0)`: pyramidal edge rows see `x_n +- mu x_t` (and `x_n` for the second pair).
pub fn contact_cost(efc: &Efc, mu: f64, xn: f64, xt: f64) -> f64 {
    let cs = cones(efc).unwrap_or_default();
    let n = efc.nefc();
    let jar: Vec<f64> = if efc.efc_type[0] == EfcType::ContactElliptic {
        vec![xn, xt, 0.0]
    } else {
        vec![xn + mu * xt, xn - mu * xt, xn, xn]
    };
    let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
    update(efc, &cs, &jar, &mut f, &mut st, None)
}

/// The level set `s = level` of [`contact_cost`] as a polyline: along each direction from the
/// origin (angle measured from the +x_n axis) the cost grows monotonically (it is convex and 0 at
/// the origin), so bisection finds the radius; directions inside the zero-cost cone never reach
/// the level and are skipped, leaving one connected arc.
pub fn level_set(efc: &Efc, mu: f64, level: f64) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    let nang = 360;
    for k in 1..nang {
        let th = 2.0 * std::f64::consts::PI * k as f64 / nang as f64;
        let (c, s) = (th.cos(), th.sin());
        let mut hi = 100.0;
        if contact_cost(efc, mu, hi * c, hi * s) < level {
            continue;
        }
        let mut lo = 0.0;
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if contact_cost(efc, mu, mid * c, mid * s) < level {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // plot x_t horizontally, x_n vertically
        pts.push((hi * s, hi * c));
    }
    pts
}

/// Writes the chapter's figures into `dir` and prints what they show.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Solvers: PGS, CG and Newton on MuJoCo's own inputs");

    let stack = fixture_problem(BOX_STACK_JSON)?;
    let chart = convergence_chart("Settled box stack (12 contacts, pyramidal): cost vs iteration", &stack)?;
    let path = dir.join("solver_box_stack.svg");
    chart.save_svg(&path)?;
    out.push(path);

    let humanoid = fixture_problem(HUMANOID_JSON)?;
    let chart = convergence_chart("Settled humanoid (elliptic cones): cost vs iteration", &humanoid)?;
    let path = dir.join("solver_humanoid.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // gradient / improvement
    let runs = run_three(&stack)?;
    let floor = 1e-18;
    let pts = |r: &SolverResult, f: &dyn Fn(&crate::mujoco::solver::SolverStat) -> f64| -> Vec<(f64, f64)> {
        r.stats
            .iter()
            .enumerate()
            .map(|(k, s)| ((k + 1) as f64, f(s).max(floor)))
            .collect()
    };
    let chart = Chart::new(
        "Settled box stack: what the termination tests read",
        "iteration",
        "scaled gradient / improvement",
    )
    .log(false, true)
    .with(Series::line_points(
        "PGS improvement",
        pts(&runs[0], &|s| s.improvement),
    ))
    .with(Series::line_points("CG gradient", pts(&runs[1], &|s| s.gradient)))
    .with(Series::line("CG improvement", pts(&runs[1], &|s| s.improvement)))
    .with(Series::line_points("Newton gradient", pts(&runs[2], &|s| s.gradient)))
    .with(Series::dashed(
        "tolerance 1e-8 (default)",
        vec![(1.0, 1e-8), (runs[0].iterations.max(runs[1].iterations) as f64, 1e-8)],
    ));
    let path = dir.join("solver_gradient.svg");
    chart.save_svg(&path)?;
    out.push(path);
    for (name, r) in ["PGS", "CG", "Newton"].iter().zip(&runs) {
        let first_below = r.stats.iter().position(|s| {
            if *name == "PGS" {
                s.improvement < 1e-8
            } else {
                s.gradient < 1e-8 || (s.improvement > 0.0 && s.improvement < 1e-8)
            }
        });
        println!(
            "    {name:6}: would stop at the default tolerance 1e-8 after {} iterations",
            first_below.map_or("more than 200".into(), |k| (k + 1).to_string())
        );
    }

    // cone level sets
    let mut chart = Chart::new(
        "Cost s(x) = 1 of one condim-3 contact (x_t2 = 0): pyramidal (dashed) vs elliptic",
        "tangential relative acceleration x_t",
        "normal relative acceleration x_n",
    )
    .ranges(Some((-4.0, 4.0)), Some((-3.0, 4.0)));
    for mu in [0.5, 1.0, 2.0] {
        let ell = single_contact(mu, true);
        let pyr = single_contact(mu, false);
        // keep the part inside the window (the arcs run along the cone's edges to infinity)
        let window = |v: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
            v.into_iter()
                .filter(|&(x, y)| x.abs() <= 4.0 && (-3.0..=4.0).contains(&y))
                .collect()
        };
        chart = chart.with(Series::line(
            &format!("elliptic, mu = {mu}"),
            window(level_set(&ell, mu, 1.0)),
        ));
        chart = chart.with(Series::dashed(
            &format!("pyramidal, mu = {mu}"),
            window(level_set(&pyr, mu, 1.0)),
        ));
        println!(
            "    mu = {mu}: s at (x_t, x_n) = (2, 0): elliptic {:.3}, pyramidal {:.3}; at (0, -1): {:.3}, {:.3}",
            contact_cost(&ell, mu, 0.0, 2.0),
            contact_cost(&pyr, mu, 0.0, 2.0),
            contact_cost(&ell, mu, -1.0, 0.0),
            contact_cost(&pyr, mu, -1.0, 0.0)
        );
    }
    let path = dir.join("solver_cones.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // the noslip pass on the incline
    let mut chart = Chart::new(
        "Box on a 20 degree incline (friction 0.5): creep down the slope",
        "time (s)",
        "distance down the slope (mm)",
    );
    for cone in [Cone::Pyramidal, Cone::Elliptic] {
        for noslip in [0, NOSLIP_SWEEPS] {
            let path = creep(cone, noslip, 1000)?;
            let last = path.last().map_or(0.0, |p| p.1);
            println!("    creep on the incline, {cone:?} cone, {noslip:>2} noslip sweeps: {last:.4} mm in 2 s",);
            let label = format!(
                "{cone:?}, {}",
                if noslip > 0 {
                    "with the noslip pass"
                } else {
                    "soft friction"
                }
            );
            chart = chart.with(if noslip > 0 {
                Series::dashed(&label, path)
            } else {
                Series::line(&label, path)
            });
        }
    }
    let edges = pyramid_edges(200)?;
    println!(
        "    pyramidal, after 200 steps with the pass: edge forces (pair along t1, pair along t2) of each contact: {}",
        edges
            .iter()
            .map(|e| format!("({:.3}, {:.3} | {:.3}, {:.3})", e[0], e[1], e[2], e[3]))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let path = dir.join("solver_noslip.svg");
    chart.save_svg(&path)?;
    out.push(path);
    Ok(out)
}

/// The noslip sweeps per step of [`creep`]'s figure.
pub const NOSLIP_SWEEPS: usize = 10;

// ANCHOR: creep
/// The box on the 20 degree incline (`tests/fixtures/models/box_incline.xml`: friction 0.5,
/// above `tan 20 deg = 0.36`, so a rigid contact would hold it) stepped `steps` times from rest
/// with MuJoCo's semi-implicit Euler, the given cone and `noslip` sweeps of the noslip pass per
/// step: `(time, distance travelled down the slope in mm)` every 10 steps.
pub fn creep(cone: Cone, noslip: usize, steps: usize) -> Result<Vec<(f64, f64)>> {
    let mut model = crate::mjcf::load_str(crate::figures::constraint::BOX_INCLINE_XML)?.model;
    model.opt.cone = cone;
    model.opt.noslip_iterations = noslip;
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator)?;
    let q0 = sim.state.qpos.clone();
    let downhill = [20f64.to_radians().cos(), 0.0, -20f64.to_radians().sin()];
    let mut out = vec![(0.0, 0.0)];
    for k in 1..=steps {
        sim.step()?;
        if k % 10 == 0 {
            let q = &sim.state.qpos;
            let along: f64 = (0..3).map(|j| (q[j] - q0[j]) * downhill[j]).sum();
            out.push((sim.state.time, 1e3 * along));
        }
    }
    Ok(out)
}
// ANCHOR_END: creep

/// The four edge forces of each pyramidal contact of the box on the incline after `steps` steps
/// with the noslip pass ([`NOSLIP_SWEEPS`] sweeps), as the last evaluation left them.
pub fn pyramid_edges(steps: usize) -> Result<Vec<[f64; 4]>> {
    let mut model = crate::mjcf::load_str(crate::figures::constraint::BOX_INCLINE_XML)?.model;
    model.opt.noslip_iterations = NOSLIP_SWEEPS;
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator)?;
    for _ in 0..steps {
        sim.step()?;
    }
    sim.forward()?;
    let d = sim.forward_data().ok_or_else(|| crate::error::Error::InvalidArgument {
        what: "box_incline".into(),
        why: "the simulator made no constraint rows".into(),
    })?;
    Ok(d.efc
        .contacts
        .iter()
        .filter_map(|c| c.efc_address)
        .map(|a| {
            [
                d.efc_force[a],
                d.efc_force[a + 1],
                d.efc_force[a + 2],
                d.efc_force[a + 3],
            ]
        })
        .collect())
}
