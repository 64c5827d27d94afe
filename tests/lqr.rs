//! The LQR example of the chapter "Integrators and the simulation loop": the discrete Riccati
//! iteration against its closed form, and the Gymnasium inverted double pendulum balanced by
//! the gain designed on `transition_fd`'s A, B.

use mbd::figures::integrators::{lqr_balance, LQR_DURATION};
use mbd::mujoco::derivatives::lqr_gain;
use nalgebra::DMatrix;
use std::path::Path;

/// Scalar `x+ = x + u`, cost `x^2 + u^2`: the Riccati fixed point is `P = 1 + P - P^2 / (1 + P)`,
/// i.e. `P^2 = 1 + P`, `P = (1 + sqrt 5) / 2`, and `K = P / (1 + P)`.
#[test]
fn riccati_iteration_reaches_the_closed_form() {
    let one = DMatrix::from_element(1, 1, 1.0);
    let k = lqr_gain(&one, &one, &one, &one, 1e-14, 1000).unwrap();
    let p = (1.0 + 5.0_f64.sqrt()) / 2.0;
    assert!((k[(0, 0)] - p / (1.0 + p)).abs() < 1e-12, "{}", k[(0, 0)]);
    // an unstabilizable system (B = 0, |A| > 1) has no fixed point: the bound stops it
    let e = lqr_gain(
        &DMatrix::from_element(1, 1, 2.0),
        &DMatrix::zeros(1, 1),
        &one,
        &one,
        1e-14,
        1000,
    );
    assert!(e.is_err());
}

/// From poles tilted by 0.08 and -0.05 rad, the LQR-controlled pendulum stays within 0.1 rad of
/// upright for the full 10 s and ends within 1e-6 rad of it, while the uncontrolled one passes
/// 1 rad in well under a second.
#[test]
fn lqr_keeps_the_double_pendulum_up_and_without_it_it_falls() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models/public/gymnasium/inverted_double_pendulum.xml");
    let ctl = lqr_balance(&path, true).unwrap();
    assert!(
        *ctl.time.last().unwrap() >= LQR_DURATION - 1e-9,
        "stopped at {}",
        ctl.time.last().unwrap()
    );
    let worst = ctl.qpos.iter().map(|q| q[1].abs().max(q[2].abs())).fold(0.0, f64::max);
    assert!(worst < 0.1, "largest angle {worst}");
    let last = ctl.qpos.last().unwrap();
    assert!(last[1].abs() < 1e-6 && last[2].abs() < 1e-6, "{last:?}");
    let free = lqr_balance(&path, false).unwrap();
    let t_fall = *free.time.last().unwrap();
    let q = free.qpos.last().unwrap();
    assert!(
        t_fall < 2.0 && (q[1].abs() > 1.0 || q[2].abs() > 1.0),
        "uncontrolled at t = {t_fall}: {q:?}"
    );
}
