//! Derivatives: the analytic velocity derivative `D` of the implicit integrators against
//! central finite differences of the force, the actuators' moment arms against finite
//! differences of their lengths, and the finite-difference transition and inverse-dynamics
//! matrices against MuJoCo 4.0.0's `mjd_transitionFD` and `mjd_inverseFD`
//! (`tests/fixtures/make_derivative_fixtures.py` -> `tests/fixtures/derivatives.json`).

mod common;

use common::{config, model_spec, random_model, random_state, state_spec};
use mbd::dynamics::{actuator_na, bias_forces, tendon_kinematics, transmission, Workspace};
use mbd::model::{canned, Integrator, Model};
use mbd::mujoco::derivatives::{inverse, inverse_fd, transition_fd};
use mbd::mujoco::implicit::{pattern, qderiv, rne_vel, rne_vel_fd, RneVel};
use mbd::mujoco::integrator::{forward_pass, Forward, State};
use nalgebra::DMatrix;
use proptest::prelude::*;
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The model with every actuator kind and transmission (`tests/fixtures/models/actuated.xml`):
/// a hinge, a ball joint, a hinge and a slide, a damped fixed tendon, motor / position /
/// velocity / affine-gain actuators with and without activation dynamics, a slider-crank, a
/// site and a joint-in-parent on the ball.
fn actuated() -> Model {
    mbd::mjcf::load(format!("{FIXTURES}/models/actuated.xml"))
        .unwrap()
        .model
}

fn sample_state(model: &Model, scale: f64) -> State {
    let mut s = State::reference(model);
    let dq: Vec<f64> = (0..model.nv).map(|k| 0.3 * (0.7 * k as f64 + 0.2).sin()).collect();
    model.integrate(&mut s.qpos, &dq, 1.0).unwrap();
    s.qvel = (0..model.nv).map(|k| scale * (1.1 * k as f64).cos()).collect();
    s.ctrl = (0..model.actuators.len())
        .map(|i| 0.4 * (i as f64 + 1.0).sin())
        .collect();
    s.act = (0..actuator_na(model)).map(|i| 0.3 + 0.1 * i as f64).collect();
    s
}

/// `qfrc_passive + qfrc_actuator - qfrc_bias` at `v` (the force whose derivative D is).
fn smooth_force(model: &Model, s: &State, v: &[f64], fwd: &mut Forward) -> Vec<f64> {
    forward_pass(model, &s.qpos, v, &s.act, &s.ctrl, &s.qfrc_applied, fwd, None).unwrap();
    fwd.qfrc_smooth.clone()
}

/// D (with the RNE term: implicit; without: implicitfast) against central differences of the
/// force with step 1e-6: agreement to 1e-7 relative to the largest entry, on MuJoCo's pattern
/// (every entry here, the models having no tendon across branches).
fn check_d(model: &Model, s: &State, name: &str) {
    let nv = model.nv;
    let pat = pattern(model);
    let mut fwd = Forward::new(model);
    forward_pass(
        model,
        &s.qpos,
        &s.qvel,
        &s.act,
        &s.ctrl,
        &s.qfrc_applied,
        &mut fwd,
        None,
    )
    .unwrap();
    let ten = fwd.ten.as_ref().map(|t| t.moment.clone());
    let mut d = DMatrix::zeros(nv, nv);
    qderiv(model, &fwd.actuation, ten.as_ref(), &s.ctrl, &s.act, &pat, &mut d);
    let without_rne = d.clone();
    let mut rv = RneVel::new(model).unwrap();
    rne_vel(model, &mut rv, &s.qpos, &s.qvel, &mut d).unwrap();
    let eps = 1e-6;
    let mut fd = DMatrix::zeros(nv, nv);
    for j in 0..nv {
        let (mut vp, mut vm) = (s.qvel.clone(), s.qvel.clone());
        vp[j] += eps;
        vm[j] -= eps;
        let (fp, fm) = (
            smooth_force(model, s, &vp, &mut fwd),
            smooth_force(model, s, &vm, &mut fwd),
        );
        for i in 0..nv {
            fd[(i, j)] = (fp[i] - fm[i]) / (2.0 * eps);
        }
    }
    let scale = fd.amax().max(1.0);
    let err = (&d - &fd).amax() / scale;
    assert!(err < 1e-7, "{name}: |D - FD| / max|D| = {err:.2e}");
    // the RNE term really is there: without it the difference is visible (the velocities are
    // not small), so the check above is not passed by the damping alone
    let gap = (&without_rne - &fd).amax() / scale;
    assert!(
        gap > 1e-4,
        "{name}: the RNE derivative is negligible here ({gap:.2e}); pick a faster state"
    );
}

#[test]
fn qderiv_matches_central_differences_on_chains_trees_floating_and_ball_models() {
    let mut cases = vec![
        ("chain", canned::chain(5, true)),
        ("binary tree", canned::binary_tree(3)),
        ("floating base with ball arms", canned::floating_base_ball_arms()),
    ];
    for (_, m) in cases.iter_mut() {
        for i in 1..=m.nb {
            m.joints[i].damping = 0.1 * i as f64;
        }
    }
    cases.push((
        "floating.xml",
        mbd::mjcf::load(format!("{FIXTURES}/models/floating.xml"))
            .unwrap()
            .model,
    ));
    for (name, model) in &cases {
        check_d(model, &sample_state(model, 1.5), name);
    }
}

#[test]
fn qderiv_matches_central_differences_with_every_actuator_kind() {
    let model = actuated();
    check_d(&model, &sample_state(&model, 1.5), "actuated");
}

/// Moment arms are `d length / d q` for the transmissions whose length is a function of the
/// configuration: hinge and slide joints, tendons, the slider-crank (central differences on the
/// manifold, step 1e-6, agreement 1e-8). Ball joints (`length = rotvec(q) . gear`) and sites
/// take MuJoCo's moment, which is the derivative only at the reference.
#[test]
fn moment_arms_are_length_gradients() {
    let model = actuated();
    let s = sample_state(&model, 1.0);
    let nu = model.actuators.len();
    let lengths = |q: &[f64]| {
        let ten = tendon_kinematics(&model, q).unwrap();
        let mut l = vec![0.0; nu];
        let mut m = DMatrix::zeros(nu, model.nv);
        transmission(&model, q, &ten, &mut l, &mut m).unwrap();
        (l, m)
    };
    let (_, moment) = lengths(&s.qpos);
    let eps = 1e-6;
    for k in [0, 1, 2, 3, 4, 5, 6] {
        for c in 0..model.nv {
            let mut dq = vec![0.0; model.nv];
            dq[c] = 1.0;
            let (mut qp, mut qm) = (s.qpos.clone(), s.qpos.clone());
            model.integrate(&mut qp, &dq, eps).unwrap();
            model.integrate(&mut qm, &dq, -eps).unwrap();
            let fd = (lengths(&qp).0[k] - lengths(&qm).0[k]) / (2.0 * eps);
            assert!(
                (fd - moment[(k, c)]).abs() < 1e-8,
                "actuator {k}, dof {c}: {} vs {fd}",
                moment[(k, c)]
            );
        }
    }
}

fn matrix(v: &Value) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
        .collect();
    let ncols = rows.first().map_or(0, |r| r.len());
    DMatrix::from_fn(rows.len(), ncols, |i, j| rows[i][j])
}

fn vector(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// `A`, `B` (centred and forward, three integrators) and the inverse-dynamics derivatives agree
/// with MuJoCo's on the five models, and `qfrc_inverse` (to 1e-12) and its derivatives on two
/// contact scenes (the settled box stack with 12 contacts, the hopper lying on its floor), where
/// `mj_inverse`'s constraint stage subtracts the constraint force at the given `qacc`; and `A`,
/// `B` through the contacts of those two scenes (`mjd_transitionFD`, Euler centred and forward,
/// implicitfast centred), where every nudged step runs the constraint solver: there both sides
/// use Newton converged to 1e-12 without warm start (at the default tolerance 1e-8 each nudged
/// solve may stop short of the converged force by about the tolerance, which 1/eps amplifies a
/// millionfold), and agree to 4e-10
/// (the nudges of 1e-6 make and break no contact at these resting states; across a contact
/// event a difference means nothing, on either side). Both sides difference the same function with the same
/// eps = 1e-6, so the last-bit differences of the two evaluations (1e-16 of the state or
/// force) are amplified by 1/eps: with forces up to about 90 N (the gravity on `floating`, the
/// 500:1 geared motor of the double pendulum) that is 1e-8. The tolerance is 1e-7 relative to
/// max(1, largest entry of the matrix).
#[test]
fn finite_difference_derivatives_agree_with_mujoco() {
    let text = std::fs::read_to_string(format!("{FIXTURES}/derivatives.json")).unwrap();
    let fx: Value = serde_json::from_str(&text).unwrap();
    let eps = fx["eps"].as_f64().unwrap();
    let mut worst = 0.0_f64;
    let mut compare = |what: &str, got: &DMatrix<f64>, want: &DMatrix<f64>| {
        assert_eq!(got.shape(), want.shape(), "{what}");
        let scale = want.amax().max(1.0);
        let case_worst = (got - want).amax() / scale;
        if what.contains("box_stack") || what.contains("hopper") {
            eprintln!("{what}: {case_worst:.2e} of max(1, largest entry {:.3e})", want.amax());
        }
        for i in 0..got.nrows() {
            for j in 0..got.ncols() {
                let err = (got[(i, j)] - want[(i, j)]).abs() / scale;
                worst = worst.max(err);
                assert!(
                    err < 1e-7,
                    "{what}[{i}, {j}]: {} vs MuJoCo {}",
                    got[(i, j)],
                    want[(i, j)]
                );
            }
        }
    };
    for case in fx["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let model = mbd::mjcf::load(format!("{FIXTURES}/models/{}", case["model"].as_str().unwrap()))
            .unwrap()
            .model;
        let mut s = State::reference(&model);
        s.qpos = vector(&case["qpos"]);
        s.qvel = vector(&case["qvel"]);
        s.ctrl = vector(&case["ctrl"]);
        // the contact scenes' transitions: MuJoCo's comparison settings (Newton converged to
        // 1e-12, no warm start), so that both sides difference the converged contact forces
        let mut tmodel = model.clone();
        if let Some(o) = case.get("solver_options") {
            tmodel.opt.solver = mbd::model::Solver::parse(o["solver"].as_str().unwrap()).unwrap();
            tmodel.opt.tolerance = o["tolerance"].as_f64().unwrap();
            tmodel.opt.iterations = o["iterations"].as_u64().unwrap() as usize;
            // made with MuJoCo's warm start disabled (settled.comparison_options): disabled here
            // too, so that both solvers start cold from qacc_smooth
            tmodel.opt.flags.push(("warmstart".into(), false));
        }
        for (key, t) in case["transition"].as_object().unwrap() {
            let (integ, kind) = key.split_once('_').unwrap();
            let integrator = match integ {
                "euler" => Integrator::Euler,
                "implicit" => Integrator::Implicit,
                _ => Integrator::ImplicitFast,
            };
            let tr = transition_fd(&tmodel, &s, integrator, eps, kind == "centred").unwrap();
            compare(&format!("{name} {key} A"), &tr.a, &matrix(&t["A"]));
            compare(&format!("{name} {key} B"), &tr.b, &matrix(&t["B"]));
        }
        if let Some(want) = case.get("qfrc_inverse") {
            // a contact scene: mj_inverse's constraint stage, then its finite differences
            let got = inverse(&model, &s, &vector(&case["qacc"]), true).unwrap();
            let want = vector(want);
            let scale = want.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
            for k in 0..model.nv {
                assert!(
                    (got[k] - want[k]).abs() < 1e-12 * scale,
                    "{name} qfrc_inverse[{k}]: {} vs MuJoCo {}",
                    got[k],
                    want[k]
                );
            }
            let contact_part = vector(&case["qfrc_constraint"])
                .iter()
                .fold(0.0_f64, |m, x| m.max(x.abs()));
            assert!(contact_part > 1.0, "{name}: the constraint stage must matter");
        }
        let inv = inverse_fd(&model, &s, &vector(&case["qacc"]), eps, true).unwrap();
        compare(&format!("{name} DfDq"), &inv.dfdq, &matrix(&case["inverse"]["dfdq"]));
        compare(&format!("{name} DfDv"), &inv.dfdv, &matrix(&case["inverse"]["dfdv"]));
        compare(&format!("{name} DfDa"), &inv.dfda, &matrix(&case["inverse"]["dfda"]));
    }
    eprintln!("largest relative difference from MuJoCo's derivatives: {worst:.2e}");
}

proptest! {
    #![proptest_config(config(32))]

    /// The analytic `-d qfrc_bias / d qvel` ([`rne_vel`], MuJoCo's `mjd_rne_vel` recursion) on
    /// random trees with every joint type (revolute, prismatic, helical, cylindrical, planar,
    /// spherical, free): equal to the polarization form [`rne_vel_fd`] (exact for the quadratic
    /// bias up to rounding, two RNEA passes per column in body coordinates: an independent
    /// route) to 1e-10 relative to the largest entry, equal to central differences of RNEA's
    /// bias force (step 1e-6) to 1e-6, and zero where MuJoCo's pattern has no entry (dofs on
    /// different branches do not couple).
    #[test]
    fn rne_derivative_matches_central_differences_on_random_trees(ms in model_spec(), ss in state_spec()) {
        let model = random_model(&ms);
        let s = random_state(&model, &ss);
        let nv = model.nv;
        let pat = pattern(&model);
        let mut d = DMatrix::zeros(nv, nv);
        let mut rv = RneVel::new(&model).unwrap();
        rne_vel(&model, &mut rv, &s.q, &s.qd, &mut d).unwrap();
        let mut polar = DMatrix::zeros(nv, nv);
        let mut ws = Workspace::new(&model);
        let (z, mut a, mut b, mut c) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
        rne_vel_fd(&model, &mut ws, &s.q, &s.qd, &z, &mut a, &mut b, &mut c, &pat, &mut polar);
        let scale_p = polar.amax().max(1.0);
        prop_assert!((&d - &polar).amax() / scale_p < 1e-10, "|D - D_polar| = {:.2e}", (&d - &polar).amax());
        for i in 0..nv {
            for j in 0..nv {
                prop_assert!(pat[i * nv + j] || d[(i, j)] == 0.0, "entry ({}, {}) off the pattern", i, j);
            }
        }
        let eps = 1e-6;
        let mut fd = DMatrix::zeros(nv, nv);
        for j in 0..nv {
            let (mut vp, mut vm) = (s.qd.clone(), s.qd.clone());
            vp[j] += eps;
            vm[j] -= eps;
            let col = (bias_forces(&model, &s.q, &vm).unwrap() - bias_forces(&model, &s.q, &vp).unwrap()) / (2.0 * eps);
            fd.set_column(j, &col);
        }
        let scale = fd.amax().max(1.0);
        prop_assert!((&d - &fd).amax() / scale < 1e-6, "|D - FD| = {:.2e}", (&d - &fd).amax());
    }
}
