//! SPOOK (src/spook/) against independent methods: finite differences of `phi` along the
//! quaternion step, the reduced-coordinate solution (ABA + RK4), the closed-loop solution with
//! Baumgarte stabilization (`loops::simulate`), the direct solve against the Schur solve, the
//! predicted decay of a violation, conservation of energy, and the typed errors.

mod common;

use mbd::dynamics::aba;
use mbd::error::Error;
use mbd::integrate::{rk4_step, StepScratch, Trajectory};
use mbd::kinematics::forward_kinematics;
use mbd::loops::{self, Method, SimulateOptions};
use mbd::mjcf;
use mbd::model::{canned, mechanisms, Integrator, Model};
use mbd::spatial::Vec3;
use mbd::spook::{
    constraint_rows, g_row, joint_coordinate, run, scenes, simulate, violation, violation_decay_factor, Body,
    Constraint, ConstraintKind, Frame, SpookOptions, SpookSolver, SpookSystem, StepSettings, Stepper, SIGNALS,
};
use nalgebra::DVector;
use proptest::prelude::*;

fn settings(solver: SpookSolver) -> StepSettings {
    StepSettings {
        solver,
        ..Default::default()
    }
}

/// Runs `sys` for `steps` steps with step `h` and `solver`.
fn trajectory(sys: &mut SpookSystem, h: f64, steps: usize, solver: SpookSolver) -> Trajectory {
    let mut st = Stepper::new(sys, h, settings(solver)).unwrap();
    let mut tr = Trajectory::new(&SIGNALS);
    run(sys, &mut st, steps, &mut tr).unwrap();
    tr
}

/// Moves every body along the velocity `v` (6 per body) for time `t`: `x + t nu`, and the
/// quaternion step with `t omega`.
fn displaced(sys: &SpookSystem, v: &[f64], t: f64) -> SpookSystem {
    let mut s = sys.clone();
    for (i, b) in s.bodies.iter_mut().enumerate() {
        b.x += Vec3::new(v[6 * i], v[6 * i + 1], v[6 * i + 2]) * t;
        b.rho = mbd::spook::quat_step(&b.rho, &Vec3::new(v[6 * i + 3], v[6 * i + 4], v[6 * i + 5]), t);
    }
    s
}

fn all_phi(sys: &SpookSystem) -> Vec<f64> {
    let (mut phi, mut dq) = (vec![], vec![]);
    for c in &sys.constraints {
        constraint_rows(c, &sys.bodies, &mut phi, &mut dq);
    }
    phi
}

/// Largest difference between `G v` and the central difference of `phi` along the quaternion
/// step, relative to `1 + |G v|`.
fn jacobian_fd_error(sys: &SpookSystem, v: &[f64]) -> f64 {
    let mut st = Stepper::new(sys, 0.01, StepSettings::default()).unwrap();
    st.assemble(sys);
    let g = st.g_matrix();
    let gv = &g * DVector::from_column_slice(v);
    let dt = 1e-6;
    let (p, m) = (all_phi(&displaced(sys, v, dt)), all_phi(&displaced(sys, v, -dt)));
    let mut err: f64 = 0.0;
    // the bilateral rows come first in every constraint's block; compare those `phi` covers
    let bilateral: Vec<usize> = (0..st.rows.len()).filter(|&r| st.rows[r].bilateral()).collect();
    for (k, &r) in bilateral.iter().enumerate() {
        let (p, m) = (p[k], m[k]);
        let fd = (p - m) / (2.0 * dt);
        err = err.max((fd - gv[r]).abs() / (1.0 + gv[r].abs()));
    }
    err
}

fn pseudo_random(n: usize, seed: f64) -> Vec<f64> {
    (0..n).map(|k| ((k as f64 + 1.0) * seed).sin()).collect()
}

/// Two bodies in general poses joined by a constraint of every kind, with frames that are not
/// aligned with the bodies.
fn two_body_system(kind: ConstraintKind, to_world: bool) -> SpookSystem {
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -9.81));
    let q1 = mbd::spatial::quat_from_axis_angle(&Vec3::new(0.2, 0.9, -0.4).normalize(), 0.7);
    let q2 = mbd::spatial::quat_from_axis_angle(&Vec3::new(-0.6, 0.1, 0.8).normalize(), 1.9);
    let a = sys.add_body(Body::cuboid(
        "a",
        1.3,
        Vec3::new(0.2, 0.1, 0.3),
        Vec3::new(0.1, -0.2, 0.3),
        q1,
    ));
    let b = sys.add_body(Body::cuboid(
        "b",
        0.7,
        Vec3::new(0.1, 0.3, 0.2),
        Vec3::new(0.5, 0.4, -0.1),
        q2,
    ));
    let fa = Frame {
        pos: Vec3::new(0.05, 0.1, -0.2),
        rot: mbd::spatial::axis_angle_mat(&Vec3::new(1.0, 1.0, 0.0).normalize(), 0.4),
    };
    let fb = Frame {
        pos: Vec3::new(-0.1, 0.02, 0.15),
        rot: mbd::spatial::axis_angle_mat(&Vec3::new(0.0, 1.0, 1.0).normalize(), -0.8),
    };
    let mut c = Constraint::new(
        "c",
        kind,
        (if to_world { None } else { Some(a) }, fa),
        (Some(b), fb),
        1e-6,
        0.03,
    );
    if matches!(kind, ConstraintKind::Hinge | ConstraintKind::Prismatic) {
        c.limit = Some([-0.5, 0.5]);
    }
    sys.add_constraint(c);
    for (i, bd) in sys.bodies.iter_mut().enumerate() {
        let v = pseudo_random(6, 1.7 + i as f64);
        bd.nu = Vec3::new(v[0], v[1], v[2]);
        bd.omega = Vec3::new(v[3], v[4], v[5]);
    }
    sys
}

const KINDS: [ConstraintKind; 7] = [
    ConstraintKind::Ball,
    ConstraintKind::Hinge,
    ConstraintKind::Prismatic,
    ConstraintKind::Cylindrical,
    ConstraintKind::Planar,
    ConstraintKind::Lock,
    ConstraintKind::Distance { length: 0.4 },
];

#[test]
fn every_jacobian_matches_finite_differences_along_the_quaternion_step() {
    // Away from the constraint manifold too: G = d phi/dq Gamma must hold everywhere.
    for kind in KINDS {
        for to_world in [false, true] {
            let sys = two_body_system(kind, to_world);
            let v = pseudo_random(12, 0.37);
            let err = jacobian_fd_error(&sys, &v);
            assert!(
                err < 1e-8,
                "{} (to world: {to_world}): |G v - dphi/dt| = {err:.2e}",
                kind.name()
            );
        }
    }
}

#[test]
fn limit_coordinate_jacobians_match_finite_differences() {
    for kind in [ConstraintKind::Hinge, ConstraintKind::Prismatic] {
        let sys = two_body_system(kind, false);
        let c = &sys.constraints[0];
        let (_, dq) = joint_coordinate(c, &sys.bodies).unwrap();
        let (ga, gb) = g_row(&dq, Some(&sys.bodies[0].rho), Some(&sys.bodies[1].rho));
        let v = pseudo_random(12, 0.91);
        let gv: f64 = (0..6).map(|k| ga[k] * v[k] + gb[k] * v[6 + k]).sum();
        let dt = 1e-6;
        let s = |t: f64| {
            joint_coordinate(&displaced(&sys, &v, t).constraints[0], &displaced(&sys, &v, t).bodies)
                .unwrap()
                .0
        };
        let fd = (s(dt) - s(-dt)) / (2.0 * dt);
        assert!(
            (fd - gv).abs() < 1e-8 * (1.0 + gv.abs()),
            "{}: {fd} vs {gv}",
            kind.name()
        );
    }
}

#[test]
fn joint_coordinates_equal_the_reduced_coordinates() {
    // A hinge chain and a slider from the canned models: theta (or s) of the SPOOK rows is q.
    let model = canned::chain(4, true);
    let q: Vec<f64> = pseudo_random(4, 0.8).iter().map(|x| 1.3 * x).collect();
    let sys = SpookSystem::from_model(&model, &q, &[0.0; 4], 0.0, 0.0).unwrap();
    for (k, c) in sys.constraints.iter().enumerate() {
        let (theta, _) = joint_coordinate(c, &sys.bodies).unwrap();
        assert!((theta - q[k]).abs() < 1e-12, "joint {k}: theta {theta} vs q {}", q[k]);
    }
    let slider = mechanisms::slider_crank();
    let q = slider.qpos0.clone();
    let sys = SpookSystem::from_model(&slider, q.as_slice(), &vec![0.0; slider.nv], 0.0, 0.0).unwrap();
    for (k, c) in sys.constraints.iter().take(slider.nb).enumerate() {
        if let Some((s, _)) = joint_coordinate(c, &sys.bodies) {
            assert!((s - q[k]).abs() < 1e-12);
        }
    }
}

// ANCHOR: pendulum_test
#[test]
fn thesis_pendulum_stays_on_its_constraint_with_bounded_energy() {
    // h = 1/60, d = tau/h = 2, epsilon = 1e-8, 100 s from the horizontal at rest.
    let h = scenes::PENDULUM_H;
    let mut sys = scenes::pendulum(1e-8, 2.0 * h);
    let tr = trajectory(&mut sys, h, 6000, SpookSolver::Direct);
    let viol = tr.max_of("violation");
    assert!(
        viol < 8e-3,
        "max |phi| = {viol:.3e} (thesis: below 8e-3, 6.9e-3 at d = 2)"
    );
    // Energy: bounded, and the envelope (largest energy over each 10 s window) never rises.
    let e = tr.signal("energy").unwrap();
    let windows: Vec<f64> = e
        .chunks(600)
        .map(|c| c.iter().copied().fold(f64::MIN, f64::max))
        .collect();
    for w in windows.windows(2) {
        assert!(w[1] <= w[0] + 1e-9, "energy envelope rose: {windows:?}");
    }
    assert!(e.iter().all(|x| x.abs() < 2.5), "energy left [-2.5, 2.5] J");
}
// ANCHOR_END: pendulum_test

#[test]
fn unstabilized_pendulum_keeps_its_energy_envelope() {
    // tau = 0: no dissipation, the envelope stays put (to 1 mJ over 100 s). With epsilon = 1e-6
    // (k = 1e6): a much stiffer unstabilized constraint (1e-8) diverges once it leaves the
    // constraint, as Lacoursière's thesis reports.
    let h = scenes::PENDULUM_H;
    let mut sys = scenes::pendulum(1e-6, 0.0);
    let tr = trajectory(&mut sys, h, 6000, SpookSolver::Schur);
    let e = tr.signal("energy").unwrap();
    let windows: Vec<f64> = e
        .chunks(600)
        .take(10)
        .map(|c| c.iter().copied().fold(f64::MIN, f64::max))
        .collect();
    let spread = windows.iter().copied().fold(f64::MIN, f64::max) - windows.iter().copied().fold(f64::MAX, f64::min);
    assert!(spread < 1e-3, "envelope spread {spread:.2e} J: {windows:?}");
}

/// The pendulum at rest at the bottom, its bob pulled `phi0` outward, in zero gravity.
fn violated_pendulum(tau: f64, phi0: f64) -> SpookSystem {
    let mut sys = scenes::pendulum(1e-10, tau);
    sys.gravity = Vec3::zeros();
    sys.bodies[0].x = Vec3::new(0.0, 0.0, -(1.0 + phi0));
    sys
}

#[test]
fn stabilization_returns_a_violation_in_the_predicted_time() {
    let h = scenes::PENDULUM_H;
    let phi0 = 0.05;
    for d in [2.0, 5.0, 10.0] {
        let rho = violation_decay_factor(h, d * h);
        let mut sys = violated_pendulum(d * h, phi0);
        let tr = trajectory(&mut sys, h, 200, SpookSolver::Direct);
        let v = tr.signal("violation").unwrap();
        // the step count at which the prediction reaches 1e-4 of the start
        let n = (1e-4f64).ln() / rho.ln();
        let n = n.ceil() as usize;
        let predicted = phi0 * (n as f64 + 1.0) * rho.powi(n as i32);
        assert!(
            v[n] <= predicted,
            "d = {d}: violation {:.3e} after {n} steps, predicted {predicted:.3e}",
            v[n]
        );
        // and not much faster than predicted: the rate is the parameters', not a fluke
        assert!(
            v[n / 2] >= 0.01 * phi0 * rho.powi((n / 2) as i32),
            "d = {d}: decays faster than predicted"
        );
    }
    // Without stabilization the violation oscillates and does not decay.
    let mut sys = violated_pendulum(0.0, phi0);
    let tr = trajectory(&mut sys, h, 200, SpookSolver::Direct);
    let v = tr.signal("violation").unwrap();
    let late = v[150..].iter().copied().fold(0.0, f64::max);
    assert!(late > 0.5 * phi0, "tau = 0: late violation {late:.3e} (start {phi0})");
}

#[test]
fn direct_and_schur_solves_agree() {
    for model in [
        canned::chain(6, true),
        canned::binary_tree(3),
        mechanisms::four_bar(),
        mechanisms::spatial_four_bar(),
    ] {
        let q = model.qpos0.clone();
        let qd = pseudo_random(model.nv, 0.61);
        let sys = SpookSystem::from_model(&model, q.as_slice(), &qd, 1e-7, 0.03).unwrap();
        let mut st = Stepper::new(&sys, 0.01, StepSettings::default()).unwrap();
        st.assemble(&sys);
        st.solve_direct().unwrap();
        let (v1, l1) = (st.v_next.clone(), st.lambda.clone());
        st.solve_schur().unwrap();
        let dv = (&v1 - &st.v_next).amax() / (1.0 + v1.amax());
        let dl = (&l1 - &st.lambda).amax() / (1.0 + l1.amax());
        assert!(
            dv < 1e-10 && dl < 1e-10,
            "{}: dv {dv:.2e}, dlambda {dl:.2e}",
            model.name
        );
        // PGS converges to the same solution when given enough sweeps
        st.settings.pgs_iterations = 20000;
        st.solve_pgs().unwrap();
        let dv = (&v1 - &st.v_next).amax() / (1.0 + v1.amax());
        assert!(dv < 1e-6, "{}: PGS dv {dv:.2e}", model.name);
    }
}

/// Reduced-coordinate reference: ABA + RK4 from `(q0, 0)` for time `t` at step `h`.
fn reduced_reference(model: &Model, q0: &[f64], t: f64, h: f64) -> Vec<f64> {
    let steps = (t / h).round() as usize;
    let (mut q, mut qd) = (q0.to_vec(), vec![0.0; model.nv]);
    let mut s = StepScratch::new(model);
    let mut f = |q: &[f64], qd: &[f64], a: &mut [f64]| -> mbd::Result<()> {
        a.copy_from_slice(aba(model, q, qd, &vec![0.0; model.nv], None)?.as_slice());
        Ok(())
    };
    for _ in 0..steps {
        rk4_step(model, &mut s, &mut f, &mut q, &mut qd, h).unwrap();
    }
    q
}

/// Centre of mass of every Featherstone body at `q`.
fn coms(model: &Model, q: &[f64]) -> Vec<Vec3> {
    let kin = forward_kinematics(model, q).unwrap();
    (1..=model.nb).map(|i| kin.point(i, &model.inertia[i].com())).collect()
}

fn spook_coms_at(model: &Model, q0: &[f64], t: f64, h: f64, epsilon: f64, tau: f64) -> Vec<Vec3> {
    let mut sys = SpookSystem::from_model(model, q0, &vec![0.0; model.nv], epsilon, tau).unwrap();
    let mut st = Stepper::new(&sys, h, settings(SpookSolver::Schur)).unwrap();
    for _ in 0..(t / h).round() as usize {
        st.step(&mut sys).unwrap();
    }
    sys.bodies.iter().map(|b| b.x).collect()
}

fn max_dist(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).norm()).fold(0.0, f64::max)
}

// ANCHOR: convergence_test
#[test]
fn spook_double_pendulum_converges_to_the_reduced_solution_at_first_order() {
    let model = scenes::double_pendulum();
    let q0 = [1.2, -0.4];
    let t = 1.0;
    let reference = coms(&model, &reduced_reference(&model, &q0, t, 1e-4));
    let hs = [1.0 / 200.0, 1.0 / 400.0, 1.0 / 800.0, 1.0 / 1600.0];
    let errs: Vec<f64> = hs
        .iter()
        .map(|&h| max_dist(&spook_coms_at(&model, &q0, t, h, 0.0, 2.0 * h), &reference))
        .collect();
    eprintln!("SPOOK vs reduced, double pendulum at t = 1 s: h = {hs:?}, errors {errs:?} m");
    for k in 1..errs.len() {
        let rate = (errs[k - 1] / errs[k]).log2();
        assert!(
            (0.85..1.15).contains(&rate),
            "h {:.4}: errors {errs:?}, observed order {rate:.2}",
            hs[k]
        );
    }
}
// ANCHOR_END: convergence_test

#[test]
fn energy_envelope_never_rises_with_stabilization() {
    // The double pendulum (chaotic, conservative) for 20 s at h = 1/60 with d = 1, 2, 4: the
    // per-step energy of a first-order scheme oscillates within a swing, but its 2 s envelope
    // must not rise.
    let model = scenes::double_pendulum();
    let h = 1.0 / 60.0;
    for d in [1.0, 2.0, 4.0] {
        let mut sys = SpookSystem::from_model(&model, &[1.5, 0.0], &[0.0, 0.0], 1e-8, d * h).unwrap();
        let tr = trajectory(&mut sys, h, 1200, SpookSolver::Schur);
        let e = tr.signal("energy").unwrap();
        let w: Vec<f64> = e
            .chunks(120)
            .map(|c| c.iter().copied().fold(f64::MIN, f64::max))
            .collect();
        for pair in w.windows(2) {
            assert!(pair[1] <= pair[0] + 1e-9, "d = {d}: envelope rose: {w:?}");
        }
    }
}

// ANCHOR: heavy_chain_test
#[test]
fn heavy_end_chain_holds_with_the_direct_solve_and_stretches_under_pgs() {
    // 20 links of 0.1 kg hanging at rest with an end mass 100 and 1000 times heavier. The direct
    // solve's stretch is Hooke's law on the top joint, epsilon_row T_top (T_top = the weight
    // below it); 20 sweeps of projected Gauss-Seidel leave the chain visibly longer.
    let h = 1.0 / 60.0;
    for ratio in [100.0, 1000.0] {
        let (eps, m) = (1e-8, 0.1);
        let t_top = (20.0 * m + ratio * m) * 9.81;
        let hooke = eps / m * t_top;
        let mut direct = scenes::heavy_chain(20, ratio, eps, 2.0 * h);
        let tr = trajectory(&mut direct, h, 300, SpookSolver::Direct);
        let stretch_direct = tr.max_of("violation");
        assert!(
            (stretch_direct - hooke).abs() < 0.05 * hooke,
            "ratio {ratio}: direct stretch {stretch_direct:.3e} m, Hooke {hooke:.3e} m"
        );
        let mut pgs = scenes::heavy_chain(20, ratio, eps, 2.0 * h);
        let mut st = Stepper::new(
            &pgs,
            h,
            StepSettings {
                solver: SpookSolver::Pgs,
                pgs_iterations: 20,
                ..Default::default()
            },
        )
        .unwrap();
        let mut tr = Trajectory::new(&SIGNALS);
        run(&mut pgs, &mut st, 300, &mut tr).unwrap();
        let stretch_pgs = tr.max_of("violation");
        assert!(
            stretch_pgs > 1000.0 * stretch_direct,
            "ratio {ratio}: PGS {stretch_pgs:.2e} vs direct {stretch_direct:.2e}"
        );
    }
    // Swinging (end kicked at 1 m/s, links of 1 m, ratio 100): the direct solve still holds it
    // to a few millimetres.
    let mut swing = scenes::heavy_chain_with(20, 100.0, 1e-8, 2.0 * h, 1.0, 1.0);
    let tr = trajectory(&mut swing, h, 600, SpookSolver::Direct);
    assert!(
        tr.max_of("violation") < 5e-3,
        "swinging stretch {:.2e}",
        tr.max_of("violation")
    );
}
// ANCHOR_END: heavy_chain_test

#[test]
fn four_bar_tracks_the_closed_loop_solution() {
    // Reference: Featherstone's closed-loop method (null space, RK4, h = 1e-4, Baumgarte 0.01 s).
    let model = mechanisms::four_bar();
    let q0 = model.qpos0.clone();
    let t = 0.5;
    let reference = loops::simulate(
        &model,
        q0.as_slice(),
        &vec![0.0; model.nv],
        &SimulateOptions {
            method: Method::NullSpace,
            integrator: Integrator::Rk4,
            h: 1e-4,
            steps: (t / 1e-4) as usize,
            t_stab: Some(0.01),
        },
    )
    .unwrap();
    let q_ref = reference.qpos.last().unwrap();
    let ref_coms = coms(&model, q_ref);
    let mut errs = vec![];
    for (h, eps) in [(1.0 / 250.0, 1e-6), (1.0 / 1000.0, 1e-8), (1.0 / 4000.0, 1e-10)] {
        let ours = spook_coms_at(&model, q0.as_slice(), t, h, eps, 2.0 * h);
        errs.push(max_dist(&ours, &ref_coms));
    }
    eprintln!("four-bar vs loops::simulate at t = 0.5 s: errors {errs:?} m");
    assert!(errs[2] < 5e-4, "four-bar: errors {errs:?} m");
    assert!(
        errs[0] > errs[1] && errs[1] > errs[2],
        "error must shrink with h and epsilon: {errs:?}"
    );
}

#[test]
fn sphere_chain_box_chain_and_falling_chain_run() {
    let (mut sys, h) = scenes::sphere_chain();
    let tr = trajectory(&mut sys, h, 240, SpookSolver::Auto);
    assert!(
        tr.max_of("violation") < 0.05,
        "sphere chain stretch {:.3e}",
        tr.max_of("violation")
    );
    let (mut sys, h) = scenes::box_chain(8);
    let tr = trajectory(&mut sys, h, 200, SpookSolver::Schur);
    // compliance 1e-3 m/N: the sag of a soft chain, but bounded
    assert!(
        tr.max_of("violation") < 0.5,
        "box chain sag {:.3e}",
        tr.max_of("violation")
    );
    let mut sys = scenes::falling_chain(8, 1e-8, 2.0 / 60.0);
    let tr = trajectory(&mut sys, 1.0 / 60.0, 240, SpookSolver::Auto);
    assert!(tr.max_of("ncon") >= 8.0, "the chain must land");
    // resting on the floor: capsule radius 0.04, centres above 0.04 - 5 mm, slow at the end
    for b in &sys.bodies {
        assert!(b.x.z > 0.035 && b.x.z < 0.06, "{} at z = {}", b.name, b.x.z);
        assert!(b.nu.norm() < 0.05, "{} still moving at {}", b.name, b.nu.norm());
    }
}

#[test]
fn simulate_runs_an_mjcf_model_and_records_the_documented_layout() {
    let model = mjcf::load(std::path::Path::new("tests/fixtures/models/chain_2.xml"))
        .unwrap()
        .model;
    let mut tr = Trajectory::new(&SIGNALS);
    let opts = SpookOptions::default();
    simulate(&model, &opts, 50, &mut tr).unwrap();
    assert_eq!(tr.len(), 51);
    assert_eq!(tr.qpos[0].len(), 7 * model.nb);
    assert_eq!(tr.qvel[0].len(), 6 * model.nb);
    assert!(tr.max_of("violation") < 1e-3);
}

#[test]
fn bad_parameters_give_typed_errors() {
    let model = scenes::double_pendulum();
    let mut tr = Trajectory::new(&SIGNALS);
    let bad_eps = SpookOptions {
        epsilon: -1.0,
        ..Default::default()
    };
    assert!(matches!(
        simulate(&model, &bad_eps, 1, &mut tr),
        Err(Error::BadParameter { .. })
    ));
    for h in [0.0, -0.01, f64::NAN] {
        let opts = SpookOptions {
            timestep: Some(h),
            ..Default::default()
        };
        assert!(matches!(
            simulate(&model, &opts, 1, &mut tr),
            Err(Error::BadTimestep { .. })
        ));
        assert!(matches!(
            Stepper::new(&scenes::pendulum(0.0, 0.0), h, StepSettings::default()),
            Err(Error::BadTimestep { .. })
        ));
    }
    let mut sys = scenes::pendulum(1e-8, 0.03);
    sys.bodies[0].rho = [1.0, 0.1, 0.0, 0.0];
    assert!(matches!(
        Stepper::new(&sys, 0.01, StepSettings::default()),
        Err(Error::NotUnitQuaternion { body: 0, .. })
    ));
    let sys = scenes::pendulum(-1e-8, 0.03);
    assert!(matches!(
        Stepper::new(&sys, 0.01, StepSettings::default()),
        Err(Error::BadParameter { .. })
    ));
    let sys = scenes::pendulum(1e-8, -0.03);
    assert!(matches!(
        Stepper::new(&sys, 0.01, StepSettings::default()),
        Err(Error::BadParameter { .. })
    ));
    // contacts need a solver with bounds
    let sys = scenes::falling_chain(2, 1e-8, 0.03);
    let mut s2 = sys.clone();
    for b in &mut s2.bodies {
        b.x.z = 0.0;
    }
    let mut st = Stepper::new(&s2, 0.01, settings(SpookSolver::Direct)).unwrap();
    assert!(matches!(st.step(&mut s2), Err(Error::Unsupported { .. })));
    // a helical joint has no SPOOK rows
    let mut b = mbd::model::ModelBuilder::new("screw");
    b.add_body(
        "nut",
        0,
        mbd::model::Joint::new(mbd::model::JointType::Helical {
            axis: Vec3::z(),
            pitch: 0.1,
        }),
        mbd::spatial::Xform::identity(),
        canned::rod(1.0, 1.0, Vec3::x()),
    );
    let m = b.build().unwrap();
    assert!(matches!(
        SpookSystem::from_model(&m, &[0.0], &[0.0], 0.0, 0.0),
        Err(Error::Unsupported { .. })
    ));
}

#[test]
fn violation_function_is_zero_at_an_assembled_mechanism() {
    for (name, m) in mechanisms::all() {
        let q = m.qpos0.clone();
        let sys = match SpookSystem::from_model(&m, q.as_slice(), &vec![0.0; m.nv], 1e-8, 0.03) {
            Ok(s) => s,
            Err(e) => panic!("{name}: {e}"),
        };
        assert!(violation(&sys) < 1e-9, "{name}: {:.2e}", violation(&sys));
    }
}

proptest! {
    #![proptest_config(common::config(24))]

    // ANCHOR: proptest
    #[test]
    fn canned_trees_convert_with_phi_zero_and_g_matching_finite_differences(
        which in 0usize..4,
        n in 1usize..8,
        seed in 0.1f64..3.0,
    ) {
        let model = match which {
            0 => canned::chain(n, false),
            1 => canned::chain(n, true),
            2 => canned::binary_tree(1 + n % 3),
            _ => canned::floating_base_ball_arms(),
        };
        let mut q = model.qpos0.clone();
        model.integrate(q.as_mut_slice(), &pseudo_random(model.nv, seed), 1.0).unwrap();
        let qd = pseudo_random(model.nv, seed + 0.3);
        let sys = SpookSystem::from_model(&model, q.as_slice(), &qd, 1e-8, 0.03).unwrap();
        let phi = all_phi(&sys);
        prop_assert!(phi.iter().all(|p| p.abs() < 1e-12), "{}: phi = {:?}", model.name, phi);
        let v = pseudo_random(6 * sys.bodies.len(), seed + 0.7);
        let err = jacobian_fd_error(&sys, &v);
        prop_assert!(err < 1e-7, "{}: G vs finite differences {:.2e}", model.name, err);
        // the reduced velocity maps to a velocity that satisfies G v = 0
        let mut st = Stepper::new(&sys, 0.01, StepSettings::default()).unwrap();
        st.assemble(&sys);
        let gv = st.g_matrix() * &st.v;
        prop_assert!(gv.amax() < 1e-10 * (1.0 + st.v.amax()), "{}: |G v| = {:.2e}", model.name, gv.amax());
    }
    // ANCHOR_END: proptest
}

#[test]
fn mjcf_welds_and_connects_convert_on_their_constraint_and_stay_there() {
    // weld.xml gives relpose equal to the qpos0 pose (body2 in body1's frame): phi = 0 exactly
    // only if the conversion reads relpose the way MuJoCo does.
    for (file, bound) in [("weld.xml", 1e-3), ("fourbar.xml", 1e-3)] {
        let model = mjcf::load(std::path::Path::new(&format!("tests/fixtures/models/{file}")))
            .unwrap()
            .model;
        let sys = SpookSystem::from_model(&model, model.qpos0.as_slice(), &vec![0.0; model.nv], 1e-8, 0.004).unwrap();
        assert!(
            violation(&sys) < 1e-12,
            "{file}: phi at qpos0 = {:.2e}",
            violation(&sys)
        );
        let mut tr = Trajectory::new(&SIGNALS);
        simulate(&model, &SpookOptions::default(), 500, &mut tr).unwrap();
        assert!(
            tr.max_of("violation") < bound,
            "{file}: violation {:.2e} over 1 s",
            tr.max_of("violation")
        );
    }
}

#[test]
fn a_hinge_limit_stops_the_joint() {
    // One link swung at 4 rad/s against a limit at 0.3 rad (no gravity): the joint coordinate
    // stops at the limit, overshooting it by less than 0.01 rad.
    let mut model = canned::chain(1, false);
    model.opt.gravity = Vec3::zeros();
    model.joints[1].limited = true;
    model.joints[1].range = [-0.3, 0.3];
    let h = 0.01;
    let mut sys = SpookSystem::from_model(&model, &[0.0], &[4.0], 1e-8, 2.0 * h).unwrap();
    let mut st = Stepper::new(&sys, h, StepSettings::default()).unwrap();
    let mut theta_max: f64 = 0.0;
    let mut limited_steps = 0;
    for _ in 0..100 {
        st.step(&mut sys).unwrap();
        limited_steps += st.rows.iter().filter(|r| !r.bilateral()).count().min(1);
        theta_max = theta_max.max(joint_coordinate(&sys.constraints[0], &sys.bodies).unwrap().0);
    }
    assert!(limited_steps > 0, "the limit row was never created");
    assert!(theta_max > 0.29 && theta_max < 0.31, "theta reached {theta_max}");
}

#[test]
fn every_mechanism_runs_under_spook_and_keeps_its_loops_closed() {
    // Planar and spatial mechanisms of the closed-loop chapter, 1 s under gravity at h = 1/240
    // from rest at qpos0; the first-order stepper's violation grows with the speed of the motion.
    let h = 1.0 / 240.0;
    for (name, m) in mechanisms::all() {
        let mut sys = scenes::mechanism(&m, 1e-9, 2.0 * h).unwrap();
        let tr = trajectory(&mut sys, h, 240, SpookSolver::Schur);
        // measured: 1e-8 (3-RRR) to 4.4e-3 (figure 8.3, whose arm falls fastest)
        assert!(
            tr.max_of("violation") < 5e-3,
            "{name}: violation {:.2e}",
            tr.max_of("violation")
        );
    }
    let mut sys = scenes::chain(6, true, &[0.3; 6], 1e-9, 2.0 * h).unwrap();
    let tr = trajectory(&mut sys, h, 240, SpookSolver::Schur);
    assert!(
        tr.max_of("violation") < 2e-3,
        "spatial chain: {:.2e}",
        tr.max_of("violation")
    );
}

// ANCHOR: limits_test
#[test]
fn heavy_hinge_chain_with_active_limits_holds_with_the_active_set_solve() {
    // A horizontal 10-link hinge chain (0.1 m, 0.1 kg links) with an end 100 times a link's
    // mass and limits of +-0.2 rad at every joint but the first, released at rest, 2 s at
    // h = 1/600: the chain swings down and the limits take part of the heavy end's load. (At
    // h = 1/60 the swinging heavy chain breaks up under either solve: the explicit geometric
    // stiffness of the chapter's "Energy" section.) The direct active-set solve holds the
    // joints; projected Gauss-Seidel with 50 sweeps stretches them ten times more.
    let h = 1.0 / 600.0;
    let run = |solver: SpookSolver| {
        let mut sys = scenes::heavy_hinge_chain(10, 100.0, 1e-8, 2.0 * h, 0.1, 0.2);
        let mut st = Stepper::new(&sys, h, settings(solver)).unwrap();
        let (mut stretch, mut limited, mut over, mut iters): (f64, usize, f64, usize) = (0.0, 0, 0.0, 0);
        for _ in 0..1200 {
            st.step(&mut sys).unwrap();
            stretch = stretch.max(violation(&sys));
            limited = limited.max(st.rows.iter().filter(|r| !r.bilateral()).count());
            iters = iters.max(st.active_set_used);
            for c in &sys.constraints[1..] {
                let theta = joint_coordinate(c, &sys.bodies).unwrap().0;
                over = over.max(theta.abs() - 0.2);
            }
        }
        (stretch, limited, over, iters)
    };
    let (direct, limited, over, iters) = run(SpookSolver::ActiveSet);
    let (pgs, _, pgs_over, _) = run(SpookSolver::Pgs);
    println!(
        "limits active: up to {limited} rows; stretch active set {direct:.2e} m ({iters} pivoting iterations at most), \
         PGS 50 sweeps {pgs:.2e} m; past the limit: {over:.2e} rad / {pgs_over:.2e} rad"
    );
    // measured: 4 limit rows, stretch 1.9e-4 m (active set) and 1.9e-3 m (PGS), 1.6e-4 rad past
    // the limit (the stabilization's return, like the joints' own violation)
    assert!(limited >= 2, "only {limited} limit rows were ever active");
    assert!(direct < 1e-3, "active set: stretch {direct:.2e} m");
    assert!(
        pgs > 3.0 * direct,
        "PGS {pgs:.2e} m is not worse than the active set {direct:.2e} m"
    );
    assert!(over < 1e-3, "a joint passed its limit by {over:.2e} rad");
}

#[test]
fn active_set_solves_the_complementarity_problem() {
    // At one step with limit rows active, the active-set impulses satisfy the complementarity
    // conditions to rounding and agree with projected Gauss-Seidel run to convergence.
    let h = 1.0 / 60.0;
    let mut sys = scenes::heavy_hinge_chain(4, 10.0, 1e-6, 2.0 * h, 0.1, 0.05);
    let mut st = Stepper::new(&sys, h, settings(SpookSolver::ActiveSet)).unwrap();
    let mut checked = 0;
    for _ in 0..60 {
        st.assemble(&sys);
        if st.rows.iter().any(|r| !r.bilateral()) {
            st.solve_active_set().unwrap();
            let (s, b, _, _) = st.schur_system();
            let w = &s * &st.lambda - &b;
            for (i, r) in st.rows.iter().enumerate() {
                let scale = 1e-10 * (1.0 + b.amax());
                if r.bilateral() {
                    assert!(w[i].abs() < scale, "joint row {i}: residual {:.2e}", w[i]);
                } else {
                    assert!(
                        st.lambda[i] >= -scale && w[i] >= -scale,
                        "row {i}: {} {}",
                        st.lambda[i],
                        w[i]
                    );
                    assert!((st.lambda[i] * w[i]).abs() < scale * (1.0 + st.lambda.amax()));
                }
            }
            let (lambda, v) = (st.lambda.clone(), st.v_next.clone());
            st.settings.pgs_iterations = 20000;
            st.solve_pgs().unwrap();
            st.settings.pgs_iterations = 50;
            let dl = (&st.lambda - &lambda).amax() / (1.0 + lambda.amax());
            assert!(dl < 1e-6, "active set vs PGS: {dl:.2e}");
            st.lambda = lambda;
            st.v_next = v;
            checked += 1;
        }
        st.step(&mut sys).unwrap();
    }
    assert!(checked > 10, "limits were active in only {checked} steps");
    // friction rows are refused with a typed error
    let mut sys = scenes::falling_chain(3, 1e-8, 2.0 * h);
    let mut st = Stepper::new(&sys, h, settings(SpookSolver::ActiveSet)).unwrap();
    let err = (0..120).find_map(|_| st.step(&mut sys).err());
    assert!(matches!(err, Some(Error::Unsupported { .. })), "{err:?}");
}
// ANCHOR_END: limits_test

/// Two gears hinged to the world about y: gear 1 balanced (I = 0.02), gear 2 with its centre of
/// mass 0.2 m off its axis (m = 1, I about the axis 0.05), coupled by MuJoCo's joint equality
/// `q1 = polycoef(q2)`.
fn gears(polycoef: &str) -> Model {
    let xml = format!(
        r#"<mujoco model="gears">
      <option gravity="0 0 -9.81"/>
      <worldbody>
        <body name="gear1"><joint name="j1" type="hinge" axis="0 1 0"/>
          <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.02 0.01"/></body>
        <body name="gear2" pos="0.6 0 0"><joint name="j2" type="hinge" axis="0 1 0"/>
          <inertial pos="0.2 0 0" mass="1" diaginertia="0.01 0.01 0.01"/></body>
      </worldbody>
      <equality><joint joint1="j1" joint2="j2" polycoef="{polycoef}"/></equality>
    </mujoco>"#
    );
    mjcf::load_str(&xml).unwrap().model
}

// ANCHOR: coupling_test
#[test]
fn joint_coupling_row_matches_finite_differences() {
    // A nonlinear polycoef, at states off the coupling: G v of the coupling row equals the
    // central difference of its phi along the quaternion step.
    let model = gears("0.1 -0.5 0.3 0 0.05");
    for (k, q) in [[0.3, -0.7], [-1.2, 0.4], [2.0, 1.5]].iter().enumerate() {
        let sys = SpookSystem::from_model(&model, q, &[0.0; 2], 1e-8, 0.01).unwrap();
        assert_eq!(sys.constraints.len(), 3);
        assert!(matches!(sys.constraints[2].kind, ConstraintKind::Coupling { .. }));
        let v = pseudo_random(12, 0.3 + k as f64);
        let err = jacobian_fd_error(&sys, &v);
        assert!(err < 1e-8, "state {k}: G v vs finite differences {err:.2e}");
        // phi is q1 - P(q2) with qpos0 = 0
        let (mut phi, mut dq) = (vec![], vec![]);
        constraint_rows(&sys.constraints[2], &sys.bodies, &mut phi, &mut dq);
        let x = q[1];
        let p = 0.1 - 0.5 * x + 0.3 * x * x + 0.05 * x.powi(4);
        assert!((phi[0] - (q[0] - p)).abs() < 1e-12, "phi {} vs {}", phi[0], q[0] - p);
    }
}

#[test]
fn two_gears_keep_their_ratio_and_follow_the_one_degree_of_freedom_solution() {
    // Gear ratio q1 = -0.5 q2; gear 2 falls from the horizontal under gravity. Reference: the
    // one-degree-of-freedom system (I2 + c^2 I1) q2'' = 0.2 m g cos q2 by RK4 at h = 1e-4.
    // Over 1 s SPOOK (epsilon = 1e-8, tau = 2h) keeps |q1 - c q2| below 1e-6 rad (measured
    // 3.6e-9: the row is linear in the angles of two fixed-axis hinges, so its linearization is
    // exact and only the compliance epsilon times the gear torque, about 1e-8 rad, is left),
    // and its q2 converges to the reference at first order (measured errors 1.2e-2 and
    // 6.9e-3 rad at h = 1/240 and 1/480).
    let model = gears("0 -0.5 0 0 0");
    let c = -0.5;
    let reference = |t_end: f64| {
        let (mut q, mut w, hr) = (0.0f64, 0.0f64, 1e-4);
        let acc = |q: f64| 0.2 * 9.81 * q.cos() / (0.05 + c * c * 0.02);
        for _ in 0..(t_end / hr).round() as usize {
            let (k1q, k1w) = (w, acc(q));
            let (k2q, k2w) = (w + 0.5 * hr * k1w, acc(q + 0.5 * hr * k1q));
            let (k3q, k3w) = (w + 0.5 * hr * k2w, acc(q + 0.5 * hr * k2q));
            let (k4q, k4w) = (w + hr * k3w, acc(q + hr * k3q));
            q += hr / 6.0 * (k1q + 2.0 * k2q + 2.0 * k3q + k4q);
            w += hr / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
        }
        q
    };
    let q_ref = reference(1.0);
    let mut errs = vec![];
    for h in [1.0 / 240.0, 1.0 / 480.0] {
        let mut sys = SpookSystem::from_model(&model, &[0.0, 0.0], &[0.0, 0.0], 1e-8, 2.0 * h).unwrap();
        let mut st = Stepper::new(&sys, h, settings(SpookSolver::Schur)).unwrap();
        let mut ratio_err: f64 = 0.0;
        for _ in 0..(1.0 / h).round() as usize {
            st.step(&mut sys).unwrap();
            let q1 = joint_coordinate(&sys.constraints[0], &sys.bodies).unwrap().0;
            let q2 = joint_coordinate(&sys.constraints[1], &sys.bodies).unwrap().0;
            ratio_err = ratio_err.max((q1 - c * q2).abs());
        }
        let q2 = joint_coordinate(&sys.constraints[1], &sys.bodies).unwrap().0;
        println!("h = {h:.5}: |q1 - c q2| <= {ratio_err:.2e} rad, q2(1 s) = {q2:.5} (reference {q_ref:.5})");
        assert!(ratio_err < 1e-6, "h = {h}: the gears slipped by {ratio_err:.2e} rad");
        errs.push((q2 - q_ref).abs());
    }
    assert!(q_ref > 0.5, "gear 2 hardly moved: {q_ref}");
    assert!(
        errs[0] < 3e-2 && errs[1] < 0.65 * errs[0],
        "not converging at first order: {errs:?}"
    );
}
// ANCHOR_END: coupling_test

/// [`scenes::dzhanibekov`] stepped by SPOOK at `h` for `steps` steps with the explicit or the
/// implicit gyroscopic term: the energy and `|L(t) - L(0)| / |L(0)|` (world angular momentum)
/// per step.
fn dzhanibekov(h: f64, steps: usize, implicit: bool) -> (Vec<f64>, Vec<f64>) {
    let mut sys = scenes::dzhanibekov();
    let s = StepSettings {
        gyroscopic_implicit: implicit,
        ..settings(SpookSolver::Schur)
    };
    let mut st = Stepper::new(&sys, h, s).unwrap();
    let l = |sys: &SpookSystem| sys.bodies[0].inertia_world() * sys.bodies[0].omega;
    let l0 = l(&sys);
    let (mut e, mut dl) = (vec![sys.kinetic_energy()], vec![0.0]);
    for _ in 0..steps {
        st.step(&mut sys).unwrap();
        e.push(sys.kinetic_energy());
        dl.push((l(&sys) - l0).norm() / l0.norm());
    }
    (e, dl)
}

// ANCHOR: gyro_test
#[test]
fn implicit_gyroscopic_term_never_gains_energy_where_the_explicit_one_does() {
    // The T-handle for 20 s. Measured at h = 1/60 (1/240): explicit, the energy rises at every
    // step, to 1.082 (1.020) E(0), and |L| drifts by 4.3e-2 (1.0e-2); implicit, the energy
    // never rises and ends at 0.855 (0.963) E(0), |L| drifts by 6.5e-2 (1.8e-2). Both are first
    // order: a quarter of the step leaves about a quarter of the drift.
    let mut drift = vec![];
    for h in [1.0 / 60.0, 1.0 / 240.0f64] {
        let steps = (20.0 / h).round() as usize;
        let (e_ex, l_ex) = dzhanibekov(h, steps, false);
        let (e_im, l_im) = dzhanibekov(h, steps, true);
        let rises = |e: &[f64]| e.windows(2).filter(|w| w[1] > w[0] * (1.0 + 1e-13)).count();
        let (gain, loss) = (e_ex[steps] / e_ex[0], e_im[steps] / e_im[0]);
        println!(
            "h = {h:.4}: explicit E {gain:.4} E(0), {} rises, |dL| {:.2e}; implicit E {loss:.4} E(0), {} rises, |dL| {:.2e}",
            rises(&e_ex),
            l_ex[steps],
            rises(&e_im),
            l_im[steps]
        );
        assert_eq!(rises(&e_im), 0, "h = {h}: the implicit step gained energy");
        assert!(
            rises(&e_ex) > steps / 2 && gain > 1.01,
            "h = {h}: the explicit step did not gain energy"
        );
        drift.push((gain - 1.0, 1.0 - loss, l_ex[steps], l_im[steps]));
    }
    let (a, b) = (drift[0], drift[1]);
    for (x, y) in [(a.0, b.0), (a.1, b.1), (a.2, b.2), (a.3, b.3)] {
        assert!(y < 0.35 * x, "not first order: {x:.3e} -> {y:.3e} for h / 4");
    }
}
// ANCHOR_END: gyro_test
