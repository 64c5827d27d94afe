//! MuJoCo's noslip pass (`mj_solNoSlip`, [`mbd::mujoco::solver::pgs::noslip::noslip_into`])
//! against MuJoCo 4.0.0 and against its own optimality conditions.
//!
//! Fixtures: `tests/fixtures/noslip.json`, made by `tests/fixtures/make_noslip_fixtures.py`: five
//! scenes (friction loss on joints and a tendon with condim 1, 4 and 6 contacts; a box on an
//! incline; a box stack; Gymnasium's humanoid and dm_control's quadruped on their floor), both
//! cones, the three solvers, each with 1 and 4 sweeps (tolerance 0) and with up to 100 sweeps at
//! MuJoCo's default tolerance; and the box on the incline stepped 1000 times with and without
//! the pass.

use mbd::mjcf;
use mbd::model::{Cone, Model, Solver};
use mbd::mujoco::constraint::{EfcState, EfcType};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::integrator::{Simulator, State};
use mbd::mujoco::solver::pgs::noslip::noslip_into;
use mbd::mujoco::solver::pgs::PgsScratch;
use mbd::mujoco::solver::{cost, JacStorage, SolverResult};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Fixtures {
    scenes: Vec<Scene>,
    creep: Creep,
}

#[derive(Deserialize)]
struct Scene {
    name: String,
    model: String,
    cone: String,
    solver: String,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    nefc: usize,
    efc_type: Vec<i64>,
    efc_id: Vec<usize>,
    before: Before,
    runs: Vec<Run>,
}

#[derive(Deserialize)]
struct Before {
    efc_force: Vec<f64>,
    niter: usize,
}

#[derive(Deserialize)]
struct Run {
    noslip_iterations: usize,
    noslip_tolerance: f64,
    efc_force: Vec<f64>,
    efc_state: Vec<i64>,
    qacc: Vec<f64>,
    qfrc_constraint: Vec<f64>,
    niter: usize,
    improvement: Vec<f64>,
}

#[derive(Deserialize)]
struct Creep {
    model: String,
    steps: usize,
    every: usize,
    noslip_iterations: usize,
    cones: BTreeMap<String, CreepRuns>,
}

#[derive(Deserialize)]
struct CreepRuns {
    qpos_without: Vec<Vec<f64>>,
    qpos_with: Vec<Vec<f64>>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> Fixtures {
    let p = root().join("tests/fixtures/noslip.json");
    let f: Fixtures = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(f.scenes.len(), 5 * 2 * 3, "five scenes, two cones, three solvers");
    f
}

/// The scene's model with `settled.comparison_options` (tight tolerance, many iterations).
fn model(s: &Scene) -> Model {
    let mut m = mjcf::load(root().join(&s.model)).unwrap().model;
    m.opt.cone = Cone::parse(&s.cone).unwrap();
    m.opt.solver = Solver::parse(&s.solver).unwrap();
    m.opt.tolerance = 1e-12;
    m.opt.iterations = 1000;
    m.opt.ls_iterations = 100;
    m
}

/// `max |a - b| / max(max |b|, floor)`.
fn rel(a: &[f64], b: &[f64], floor: f64) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(floor.max(1e-12), |s, x| s.max(x.abs()));
    a.iter().zip(b).map(|(x, y)| (x - y).abs() / scale).fold(0.0, f64::max)
}

/// MuJoCo's `mjtConstraintState` number.
fn state_number(s: EfcState) -> i64 {
    s as i64
}

/// Our forward pass at the scene's state without the pass, with its rows checked to be
/// MuJoCo's rows in MuJoCo's order (the sweep is Gauss-Seidel: the order is part of the result).
fn forward_rows<'m>(m: &'m Model, s: &Scene) -> Forward<'m> {
    let mut fw = Forward::new(m).unwrap();
    fw.options.noslip_iterations = 0;
    fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
    let efc = &fw.d.efc;
    let label = format!("{} {} {}", s.name, s.cone, s.solver);
    assert_eq!(efc.nefc(), s.nefc, "{label}: nefc");
    let types: Vec<i64> = efc.efc_type.iter().map(|&t| t as i64).collect();
    assert_eq!(types, s.efc_type, "{label}: row types");
    // the contacts in MuJoCo's order (other rows' ids number elements differently)
    let contact_ids =
        |ids: &[usize]| -> Vec<usize> { (0..s.nefc).filter(|&i| s.efc_type[i] >= 5).map(|i| ids[i]).collect() };
    assert_eq!(
        contact_ids(&efc.efc_id),
        contact_ids(&s.efc_id),
        "{label}: contact order"
    );
    fw
}

/// The pass alone: started from MuJoCo's forces of the main solver, on our rows, it gives
/// MuJoCo's forces, states, iteration counts and improvements.
#[test]
fn noslip_pass_from_mujocos_forces_agrees() {
    let mut worst = 0.0f64;
    for s in &fixtures().scenes {
        let m = model(s);
        let fw = forward_rows(&m, s);
        let smooth = fw.d.smooth(&m);
        let efc = &fw.d.efc;
        let cones = cost::cones(efc).unwrap();
        for r in &s.runs {
            let label = format!("{} {} {} ({} sweeps)", s.name, s.cone, s.solver, r.noslip_iterations);
            let mut opts = fw.options.clone();
            opts.noslip_iterations = r.noslip_iterations;
            opts.noslip_tolerance = r.noslip_tolerance;
            let mut out = SolverResult {
                efc_force: s.before.efc_force.clone(),
                efc_state: vec![EfcState::Satisfied; s.nefc],
                iterations: s.before.niter,
                ..Default::default()
            };
            let storage = JacStorage::mujoco(m.nv);
            noslip_into(
                &smooth,
                efc,
                &cones,
                &opts,
                storage,
                false,
                &mut PgsScratch::default(),
                &mut out,
            )
            .unwrap();
            let fmax = s.before.efc_force.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            let e = rel(&out.efc_force, &r.efc_force, fmax);
            worst = worst.max(e);
            assert!(e < 1e-10, "{label}: efc_force off by {e:.2e}");
            assert_eq!(out.iterations, r.niter, "{label}: solver_niter");
            let states: Vec<i64> = out.efc_state.iter().map(|&x| state_number(x)).collect();
            assert_eq!(states, r.efc_state, "{label}: efc_state");
            // the improvements, both divided by trace(M)
            let ours: Vec<f64> = out.stats.iter().map(|st| st.improvement).collect();
            let theirs = &r.improvement;
            let big = theirs.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            assert_eq!(ours.len(), theirs.len(), "{label}: sweeps");
            let e = rel(&ours, theirs, big);
            assert!(e < 1e-8, "{label}: improvements off by {e:.2e}: {ours:?} vs {theirs:?}");
            let e = rel(
                &out.qacc,
                &r.qacc,
                fw.d.qacc_smooth.iter().fold(1.0, |a: f64, x| a.max(x.abs())),
            );
            assert!(e < 1e-10, "{label}: qacc off by {e:.2e}");
        }
    }
    println!("noslip from MuJoCo's forces: worst relative force error {worst:.2e}");
}

/// The whole pipeline with `noslip_iterations` set: the main solver and then the pass, against
/// MuJoCo's `mj_forward`. Newton converges to 1e-12 before the pass; PGS and CG stop at their
/// tolerance where rounding can change the last iterations (tests/forward.rs's tolerances).
#[test]
fn forward_with_noslip_agrees_with_mujoco() {
    for s in &fixtures().scenes {
        for r in &s.runs {
            let label = format!("{} {} {} ({} sweeps)", s.name, s.cone, s.solver, r.noslip_iterations);
            let mut m = model(s);
            m.opt.noslip_iterations = r.noslip_iterations;
            m.opt.noslip_tolerance = r.noslip_tolerance;
            let mut fw = Forward::new(&m).unwrap();
            fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
            let tol = if s.solver == "Newton" { 1e-8 } else { 1e-5 };
            let fmax = r.efc_force.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            let e = rel(&fw.d.efc_force, &r.efc_force, fmax);
            assert!(e < tol, "{label}: efc_force off by {e:.2e}");
            let e = rel(&fw.d.qfrc_constraint, &r.qfrc_constraint, 0.0);
            assert!(e < tol, "{label}: qfrc_constraint off by {e:.2e}");
            let floor = fw.d.qacc_smooth.iter().fold(1.0f64, |a, x| a.max(x.abs()));
            let e = rel(&fw.d.qacc, &r.qacc, floor);
            assert!(e < tol, "{label}: qacc off by {e:.2e}");
            if s.solver == "Newton" {
                assert_eq!(fw.d.solver_niter, r.niter, "{label}: solver_niter");
            }
        }
    }
}

/// What the pass must do whatever MuJoCo does, checked from the pipeline's outputs alone
/// (`qacc`, `qfrc_constraint`, the rows), Newton's forces before the pass, and the pass run for
/// 100 and 400 sweeps (tolerance 0):
/// - the rows it does not own keep their forces; each pyramid keeps its normal force (the sum of
///   its edges), each elliptic contact its normal row, and the friction stays in its cone;
/// - its improvements account for the cost exactly: their sum times `trace(M)` is
///   `C_AR(f_before) - C_A(f_after)`, with `C_A(f) = 1/2 f^T A f + f^T b` evaluated as
///   `1/2 qfrc_constraint . (qacc - qacc_smooth) + f . b` and `C_AR = C_A + 1/2 f^T R f`;
///   no sweep raises the cost;
/// - the cost has converged: the last sweep improves it by less than 1e-10 (scaled);
/// - the friction solves the hard problem (first-order conditions, with `r = J qacc - aref`
///   recomputed from `qacc`): a friction-loss row inside its interval and the friction of a
///   contact inside its cone have `r = 0`, a pyramid edge pair with both edges pushing has equal
///   residuals, and a force at its bound opposes its residual. These are checked on friction
///   loss and on contacts that are alone between their two bodies: where several contacts hold
///   one body (a box on four corners), the friction rows outnumber the motions they act on, so
///   some combinations of friction forces cancel (`J^T f = 0`); the part of the residual along
///   them cannot be removed, and the sweeps drift along them with a constant, tiny improvement
///   (3.8e-12 per sweep on the box on the incline) without changing `qacc`.
#[test]
fn noslip_keeps_normals_and_solves_the_hard_friction_problem() {
    let mut checked = [0usize; 3];
    for s in fixtures().scenes.iter().filter(|s| s.solver == "Newton") {
        let label = format!("{} {}", s.name, s.cone);
        let mut m = model(s);
        let (before, main_niter) = {
            let fw = forward_rows(&m, s);
            (fw.d.efc_force.clone(), fw.d.solver_niter)
        };
        for sweeps in [100, 400] {
            m.opt.noslip_iterations = sweeps;
            m.opt.noslip_tolerance = 0.0;
            let mut fw = Forward::new(&m).unwrap();
            fw.forward(&s.qpos, &s.qvel, &vec![0.0; m.nv]).unwrap();
            let d = &fw.d;
            let (efc, f) = (&d.efc, &d.efc_force);
            let n = efc.nefc();
            // every sweep runs unless one stops improving (improvement not above tolerance 0)
            let ran = d.solver_niter - main_niter;
            assert!(
                ran == sweeps || d.solver[d.solver_niter - 1].improvement <= 0.0,
                "{label}: {ran} sweeps"
            );
            let last = d.solver[d.solver_niter - 1].improvement;
            assert!(last < 1e-10, "{label}: sweep {ran} still improves the cost by {last:e}");
            if sweeps == 400 {
                println!("{label}: {ran} sweeps, the last improves the cost by {last:.2e}");
            }
            // the cost accounting
            let mut b = vec![0.0; n];
            efc.j.mul(&d.qacc_smooth, &mut b);
            for (bi, a) in b.iter_mut().zip(&efc.aref) {
                *bi -= a;
            }
            let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>();
            let c_a = |f: &[f64], qfrc: &[f64], qacc: &[f64]| {
                let dq: Vec<f64> = qacc.iter().zip(&d.qacc_smooth).map(|(a, b)| a - b).collect();
                0.5 * dot(qfrc, &dq) + dot(f, &b)
            };
            let before_fw = forward_rows(&m, s);
            let bd = &before_fw.d;
            let half_rf2: f64 = (0..n).map(|i| 0.5 * efc.r[i] * before[i] * before[i]).sum();
            let c_before = c_a(&before, &bd.qfrc_constraint, &bd.qacc) + half_rf2;
            let c_after = c_a(f, &d.qfrc_constraint, &d.qacc);
            let smooth = d.smooth(&m);
            let trm = mbd::mujoco::solver::trace_m(smooth.layout, smooth.qm);
            let pass = &d.solver[main_niter..];
            let claimed: f64 = pass.iter().map(|st| st.improvement).sum::<f64>() * trm;
            let e = (claimed - (c_before - c_after)).abs() / c_before.abs().max(half_rf2).max(1e-12);
            assert!(
                e < 1e-9,
                "{label}: improvements {claimed:e} vs cost drop {:e}",
                c_before - c_after
            );
            for (k, st) in pass.iter().enumerate() {
                assert!(
                    st.improvement > -1e-9,
                    "{label}: sweep {k} raised the cost by {:e}",
                    -st.improvement
                );
            }
            if sweeps != 400 {
                continue;
            }
            let mut r = vec![0.0; n];
            efc.j.mul(&d.qacc, &mut r);
            for (ri, a) in r.iter_mut().zip(&efc.aref) {
                *ri -= a;
            }
            let fmax = before.iter().fold(1e-9f64, |a, x| a.max(x.abs()));
            // residuals are accelerations: compared with the size of J qacc_smooth and aref
            let amax = b.iter().chain(&efc.aref).fold(1e-9f64, |a, x| a.max(x.abs()));
            let tol_r = 1e-7 * amax;
            let (ne, nf) = (efc.ne, efc.nf);
            for i in (0..ne).chain(ne + nf..n) {
                let owned = matches!(efc.efc_type[i], EfcType::ContactPyramidal | EfcType::ContactElliptic);
                if !owned {
                    assert_eq!(f[i], before[i], "{label}: row {i} ({:?}) moved", efc.efc_type[i]);
                }
            }
            for i in ne..ne + nf {
                let eta = efc.frictionloss[i];
                if f[i].abs() < eta * (1.0 - 1e-9) {
                    assert!(
                        r[i].abs() < tol_r,
                        "{label}: friction-loss row {i} inside its bound, r = {:e}",
                        r[i]
                    );
                } else {
                    assert!(
                        f[i] * r[i] <= tol_r * eta,
                        "{label}: friction-loss row {i} at its bound pushes with r"
                    );
                }
                checked[0] += 1;
            }
            // contacts alone between their two bodies
            let bodies = |c: usize| {
                let g = efc.contacts[c].geom;
                let (a, b) = (m.geoms[g[0]].body, m.geoms[g[1]].body);
                (a.min(b), a.max(b))
            };
            let alone = |c: usize| (0..efc.contacts.len()).filter(|&k| bodies(k) == bodies(c)).count() == 1;
            let mut i = ne + nf;
            while i < n {
                match efc.efc_type[i] {
                    EfcType::ContactPyramidal => {
                        let mut end = i + 1;
                        while end < n
                            && efc.efc_type[end] == EfcType::ContactPyramidal
                            && efc.efc_id[end] == efc.efc_id[i]
                        {
                            end += 1;
                        }
                        let sum = |x: &[f64]| x[i..end].iter().sum::<f64>();
                        assert!(
                            (sum(f) - sum(&before)).abs() < 1e-12 * fmax,
                            "{label}: pyramid at {i} changed its normal"
                        );
                        for j in (i..end).step_by(2) {
                            assert!(f[j] >= 0.0 && f[j + 1] >= 0.0, "{label}: negative edge at {j}");
                            if !alone(efc.efc_id[i]) {
                                continue;
                            }
                            if f[j] > 1e-9 * fmax && f[j + 1] > 1e-9 * fmax {
                                assert!(
                                    (r[j] - r[j + 1]).abs() < tol_r,
                                    "{label}: edge pair {j} with both edges pushing has residuals {:e}, {:e}",
                                    r[j],
                                    r[j + 1]
                                );
                            } else {
                                // the loaded edge is the one with the smaller residual
                                let (lo, hi) = if f[j] > f[j + 1] { (j, j + 1) } else { (j + 1, j) };
                                assert!(r[lo] <= r[hi] + tol_r, "{label}: edge pair {j} loads the wrong edge");
                            }
                            checked[1] += 1;
                        }
                        i = end;
                    }
                    EfcType::ContactElliptic => {
                        let c = &efc.contacts[efc.efc_id[i]];
                        let dim = c.dim;
                        assert_eq!(f[i], before[i], "{label}: elliptic normal {i} moved");
                        let mu = &c.friction;
                        let t: f64 = (1..dim).map(|j| (f[i + j] / mu[j - 1]).powi(2)).sum::<f64>().sqrt();
                        assert!(
                            t <= f[i] * (1.0 + 1e-9),
                            "{label}: friction of contact {i} outside its cone"
                        );
                        if alone(efc.efc_id[i]) {
                            if t < f[i] * (1.0 - 1e-6) {
                                for j in 1..dim {
                                    assert!(
                                        r[i + j].abs() < tol_r,
                                        "{label}: sticking contact {i} has residual {:e} in row {}",
                                        r[i + j],
                                        i + j
                                    );
                                }
                            } else if f[i] > 0.0 {
                                // on the ellipse: the force opposes the residual
                                let dot: f64 = (1..dim).map(|j| f[i + j] * r[i + j]).sum();
                                assert!(
                                    dot <= tol_r * f[i],
                                    "{label}: sliding contact {i} pushes along its residual"
                                );
                            }
                            checked[2] += 1;
                        }
                        i += dim;
                    }
                    _ => i += 1,
                }
            }
        }
    }
    println!("first-order conditions checked on {checked:?} friction-loss rows, pyramid edge pairs, elliptic contacts");
    assert!(
        checked.iter().all(|&n| n >= 5),
        "every kind of row was checked: {checked:?}"
    );
}

/// The box on the 20 degree incline (friction 0.5 > tan 20 deg, so it should stick): MuJoCo's
/// soft contacts let it creep down the slope at a steady speed. Both rollouts of both cones agree
/// with MuJoCo's. With the elliptic cone, 10 noslip sweeps per step stop the creep (less than 5 %
/// of it is left); with the pyramidal cone they change nothing, because each contact has put
/// part of its normal force on the edge pair across the slope, and the pass keeps every pair's
/// share: the pair along the slope is already at its bound.
#[test]
fn noslip_stops_the_creep_on_an_incline_with_the_elliptic_cone() {
    let c = fixtures().creep;
    let downhill = [20f64.to_radians().cos(), 0.0, -20f64.to_radians().sin()];
    for (cone, runs) in &c.cones {
        let mut creep = [0.0; 2];
        for (k, (n, theirs)) in [(0, &runs.qpos_without), (c.noslip_iterations, &runs.qpos_with)]
            .into_iter()
            .enumerate()
        {
            let mut m = mjcf::load(root().join(&c.model)).unwrap().model;
            m.opt.cone = Cone::parse(cone).unwrap();
            m.opt.noslip_iterations = n;
            let mut sim = Simulator::new(&m, State::reference(&m), m.opt.integrator).unwrap();
            let q0 = sim.state.qpos.clone();
            let mut row = 0;
            for step in 1..=c.steps {
                sim.step().unwrap();
                if step % c.every == 0 {
                    let e = rel(&sim.state.qpos, &theirs[row], 1.0);
                    assert!(e < 1e-9, "{cone}, noslip {n}: qpos after step {step} off by {e:.2e}");
                    row += 1;
                }
            }
            let q = &sim.state.qpos;
            creep[k] = (0..3).map(|j| (q[j] - q0[j]) * downhill[j]).sum();
        }
        println!(
            "{cone}: creep over {} steps {:.3e} m without the pass, {:.3e} m with it",
            c.steps, creep[0], creep[1]
        );
        assert!(creep[0] > 1e-3, "{cone}: the soft contact creeps: {:e}", creep[0]);
        if cone == "elliptic" {
            assert!(
                creep[1] < 0.05 * creep[0],
                "{cone}: the pass stops the creep: {creep:?}"
            );
        } else {
            assert!(
                (creep[1] - creep[0]).abs() < 1e-3 * creep[0],
                "{cone}: the pass changes nothing: {creep:?}"
            );
        }
    }
}

/// The options are read from `<option>` and checked.
#[test]
fn options_are_read_and_checked() {
    let xml = |attrs: &str| {
        format!(
            r#"<mujoco><option {attrs}/><worldbody><geom type="plane" size="1 1 .1"/>
               <body pos="0 0 .09"><freejoint/><geom type="sphere" size=".1"/></body></worldbody></mujoco>"#
        )
    };
    let m = mjcf::load_str(&xml(
        r#"noslip_iterations="7" noslip_tolerance="1e-9" ls_iterations="9" ls_tolerance="0.1""#,
    ))
    .unwrap()
    .model;
    assert_eq!(
        (
            m.opt.noslip_iterations,
            m.opt.noslip_tolerance,
            m.opt.ls_iterations,
            m.opt.ls_tolerance
        ),
        (7, 1e-9, 9, 0.1)
    );
    let fw = Forward::new(&m).unwrap();
    assert_eq!((fw.options.noslip_iterations, fw.options.ls_iterations), (7, 9));
    for bad in [
        r#"noslip_iterations="-1""#,
        r#"noslip_tolerance="-1e-6""#,
        r#"ls_iterations="-2""#,
    ] {
        let Err(e) = mjcf::load_str(&xml(bad)) else {
            panic!("{bad} was accepted")
        };
        let e = e.to_string();
        assert!(e.contains("must be >= 0"), "{bad}: {e}");
    }
    // a negative tolerance set in code is refused by the solver, naming the option
    let mut m = m;
    m.opt.noslip_tolerance = -1.0;
    let mut fw = Forward::new(&m).unwrap();
    let q: Vec<f64> = m.qpos0.iter().copied().collect();
    let Err(e) = fw.forward(&q, &vec![0.0; m.nv], &vec![0.0; m.nv]) else {
        panic!("a negative noslip_tolerance was accepted")
    };
    let e = e.to_string();
    assert!(e.contains("noslip_tolerance"), "{e}");
}

/// The pass gives up the soft model's invertibility: `mj_inverse` at the pass's `qacc` reads
/// the friction forces back from `J a - aref` through the soft model, which the pass has driven
/// to the hard problem's residual, so forward then inverse (MuJoCo's `fwdinv`) no longer returns
/// the forward constraint force; without the pass it does, to rounding. On the incline that is
/// the elliptic cone; with the pyramidal one the pass changes nothing (every edge pair along the
/// slope is at its bound, see the creep test), and forward and inverse still agree.
#[test]
fn the_pass_breaks_forward_inverse_agreement() {
    use mbd::mujoco::forward::fwdinv;
    for s in fixtures()
        .scenes
        .iter()
        .filter(|s| s.solver == "Newton" && s.name == "box_incline")
    {
        let mut m = model(s);
        let zeros = vec![0.0; m.nv];
        let mut fw = Forward::new(&m).unwrap();
        let soft = fwdinv(&mut fw, &s.qpos, &s.qvel, &zeros).unwrap();
        let fmax = fw.d.qfrc_constraint.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        m.opt.noslip_iterations = 10;
        let mut fw = Forward::new(&m).unwrap();
        let hard = fwdinv(&mut fw, &s.qpos, &s.qvel, &zeros).unwrap();
        println!(
            "{} {}: fwdinv without the pass {soft:?}, with it {hard:?} (max |qfrc_constraint| {fmax:.2})",
            s.name, s.cone
        );
        assert!(
            soft[0] < 1e-9 * fmax,
            "{}: without the pass forward and inverse agree",
            s.cone
        );
        if s.cone == "elliptic" {
            assert!(hard[0] > 1e-3 * fmax, "{}: with the pass they differ", s.cone);
        } else {
            assert!(hard[0] < 1e-9 * fmax, "{}: the pass changed nothing", s.cone);
        }
    }
}

/// Rows built by hand that break a pyramid's pairs (an odd number of edge rows) are an error of
/// the pass, not an index out of range.
#[test]
fn an_odd_pyramid_is_an_error() {
    let s = fixtures()
        .scenes
        .into_iter()
        .find(|s| s.name == "box_incline" && s.cone == "pyramidal" && s.solver == "Newton")
        .unwrap();
    let m = model(&s);
    let fw = forward_rows(&m, &s);
    let mut efc = fw.d.efc.clone();
    let first = (0..efc.nefc())
        .find(|&i| efc.efc_type[i] == EfcType::ContactPyramidal)
        .unwrap();
    efc.efc_type[first] = EfcType::ContactFrictionless;
    let mut opts = fw.options.clone();
    opts.noslip_iterations = 3;
    let Err(e) = mbd::mujoco::solver::solve(&fw.d.smooth(&m), &efc, &opts) else {
        panic!("an odd pyramid was accepted")
    };
    assert!(e.to_string().contains("even number of rows"), "{e}");
}
