//! Exercises of the chapter "SPOOK: a variational stepper" (book/src/spook.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_spook`.

use mbd::integrate::Trajectory;
use mbd::spatial::{quat_from_axis_angle, Vec3};
use mbd::spook::{
    gamma, quat_step, run, scenes, spook_parameters, violation_decay_factor, SpookSolver, StepSettings, Stepper,
    SIGNALS,
};
use nalgebra::{Matrix2, Vector4};

/// Exercise 1: `Gamma(rho)` with `rho-dot = Gamma(rho) omega` for a world-frame `omega`, from
/// `rho-dot = 1/2 [0; omega] (x) rho`. Returns the 4 x 3 matrix row by row.
fn exercise_1_answer(rho: [f64; 4]) -> [[f64; 3]; 4] {
    // [0; w] (x) [r0; r] = [-w.r; r0 w + w x r]; read off the coefficient of each w_j.
    let [r0, r1, r2, r3] = rho;
    [
        [-0.5 * r1, -0.5 * r2, -0.5 * r3],
        [0.5 * r0, 0.5 * r3, -0.5 * r2],
        [-0.5 * r3, 0.5 * r0, 0.5 * r1],
        [0.5 * r2, -0.5 * r1, 0.5 * r0],
    ]
}

/// Exercise 2: cannon.js's per-row scalars from the time step `h`, the stiffness `k` and the
/// damping rate `d = tau / h`: returns `(a, b, eps)` with `a = 4 / (h (1 + 4 d))`,
/// `b = 4 d / (1 + 4 d)`, `eps = 4 / (h^2 k (1 + 4 d))`, so that the Schur system's right-hand
/// side is `B = -a phi - b G v - h G M^-1 f` and its diagonal shift is `eps`.
fn exercise_2_answer(h: f64, k: f64, d: f64) -> (f64, f64, f64) {
    let den = 1.0 + 4.0 * d;
    (4.0 / (h * den), 4.0 * d / den, 4.0 / (h * h * k * den))
}

/// Exercise 3: the factor by which SPOOK shrinks a violation per step in the stiff limit: the
/// spectral radius of `[phi; w]_{k+1} = A [phi; w]_k` with `w = h G v`,
/// `A = [[1 - 4 U, U], [-4 U, U]]` and `U = 1 / (1 + 4 tau / h)`.
fn exercise_3_answer(h: f64, tau: f64) -> f64 {
    let u = 1.0 / (1.0 + 4.0 * tau / h);
    let a = Matrix2::new(1.0 - 4.0 * u, u, -4.0 * u, u);
    a.complex_eigenvalues().iter().map(|z| z.norm()).fold(0.0, f64::max)
}

/// Exercise 4: the static stretch of a regularized constraint. A distance row of compliance
/// `epsilon` holds a mass `m` hanging at rest under gravity `g`: the row's equation at rest is
/// `epsilon lambda + phi = 0` with `lambda` the rod's tension, so `phi` = ?
fn exercise_4_answer(epsilon: f64, m: f64, g: f64) -> f64 {
    // the rod pulls up with m g; the constraint's spring k = 1/epsilon stretches by m g / k
    epsilon * m * g
}

#[test]
fn exercise_1_gamma() {
    for (axis, angle) in [(Vec3::x(), 0.3), (Vec3::new(1.0, -2.0, 0.5), 2.4), (Vec3::z(), -3.0)] {
        let rho = quat_from_axis_angle(&axis.normalize(), angle);
        let ours = exercise_1_answer(rho);
        let lib = gamma(&rho);
        for i in 0..4 {
            for j in 0..3 {
                assert!((ours[i][j] - lib[(i, j)]).abs() < 1e-15, "Gamma[{i}][{j}]");
            }
        }
        // and against a finite difference of the quaternion step
        let w = Vec3::new(0.7, -0.2, 1.1);
        let dt = 1e-6;
        let (p, m) = (quat_step(&rho, &w, dt), quat_step(&rho, &(-w), dt));
        for i in 0..4 {
            let fd = (p[i] - m[i]) / (2.0 * dt);
            let gw: f64 = (0..3).map(|j| ours[i][j] * w[j]).sum();
            assert!((fd - gw).abs() < 1e-9);
        }
        let q = Vector4::from(rho);
        let tangent: f64 = (0..3)
            .map(|j| (0..4).map(|i| q[i] * ours[i][j]).sum::<f64>().abs())
            .sum();
        assert!(tangent < 1e-15, "rho^T Gamma must vanish");
    }
}

#[test]
fn exercise_2_cannon_scalars() {
    // The pendulum moving and off its constraint: the library's Schur right-hand side must be
    // -a phi - b G v - h G M^-1 f row by row, and its diagonal shift eps.
    let h = 1.0 / 60.0;
    let (k, d) = (1e6, 3.0);
    let (a, b, eps) = exercise_2_answer(h, k, d);
    let (upsilon, sigma) = spook_parameters(h, 1.0 / k, d * h);
    assert!((eps - sigma).abs() < 1e-12 * sigma);
    assert!((1.0 - b - upsilon).abs() < 1e-15);
    let mut sys = scenes::pendulum(1.0 / k, d * h);
    sys.bodies[0].x = Vec3::new(0.9, 0.1, -0.5);
    sys.bodies[0].nu = Vec3::new(0.3, -1.0, 2.0);
    let mut st = Stepper::new(&sys, h, StepSettings::default()).unwrap();
    st.assemble(&sys);
    let (s, rhs, v_free, _) = st.schur_system();
    let g = st.g_matrix();
    let gv = &g * &st.v;
    let g_dv = &g * (&v_free - &st.v);
    for (r, row) in st.rows.iter().enumerate() {
        let cannon = -a * row.phi - b * gv[r] - g_dv[r];
        assert!(
            (cannon - rhs[r]).abs() < 1e-12 * (1.0 + rhs[r].abs()),
            "row {r}: {cannon} vs {}",
            rhs[r]
        );
        assert!(s[(r, r)] > eps);
    }
}

#[test]
fn exercise_3_decay_factor() {
    let h = 0.01;
    for d in [0.0, 0.5, 1.0, 2.0, 3.0, 8.0] {
        let ours = exercise_3_answer(h, d * h);
        assert!((ours - violation_decay_factor(h, d * h)).abs() < 1e-7, "d = {d}");
    }
    // Measured: the pendulum (no gravity) 5 cm off, d = 6; the late ratio of violations.
    let d = 6.0;
    let mut sys = scenes::pendulum(1e-12, d * h);
    sys.gravity = Vec3::zeros();
    sys.bodies[0].x = Vec3::new(0.0, 0.0, -1.05);
    let mut st = Stepper::new(
        &sys,
        h,
        StepSettings {
            solver: SpookSolver::Direct,
            ..Default::default()
        },
    )
    .unwrap();
    let mut tr = Trajectory::new(&SIGNALS);
    run(&mut sys, &mut st, 60, &mut tr).unwrap();
    let v = tr.signal("violation").unwrap();
    let measured = v[50] / v[49];
    assert!(
        (measured - exercise_3_answer(h, d * h)).abs() < 0.01,
        "measured {measured}"
    );
}

#[test]
fn exercise_4_static_stretch() {
    // The pendulum hanging at rest at the bottom with a soft rod: after the transient the
    // violation is the spring's stretch.
    let (eps, h) = (1e-4, 1.0 / 60.0);
    let mut sys = scenes::pendulum(eps, 2.0 * h);
    sys.bodies[0].x = Vec3::new(0.0, 0.0, -1.0);
    let mut st = Stepper::new(&sys, h, StepSettings::default()).unwrap();
    let mut tr = Trajectory::new(&SIGNALS);
    run(&mut sys, &mut st, 120, &mut tr).unwrap();
    let stretch = sys.bodies[0].x.norm() - 1.0;
    let ours = exercise_4_answer(eps, 1.0, 10.0);
    assert!(
        (stretch - ours).abs() < 1e-6 * ours.max(1.0),
        "stretch {stretch} vs {ours}"
    );
}
