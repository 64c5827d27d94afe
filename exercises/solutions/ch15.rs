//! Worked answers to the exercises of "Integrators and the simulation loop" (statements in
//! `src/ch15.rs`).

use mbd::dynamics::{crba, rnea, tendon_kinematics, transmission};
use mbd::model::Model;
use mbd::spatial::{SpatialInertia, Vec3};
use nalgebra::DMatrix;

/// Implicit damping evaluates the damping force at the new velocity: `m (v' - v) / h = f - c -
/// b v'` gives `(m + h b) a = f - b v - c` with `a = (v' - v) / h`; the explicit update uses
/// `a = (f - b v - c) / m`.
#[allow(clippy::too_many_arguments)]
pub fn exercise_1(m: f64, b: f64, c: f64, f: f64, v: f64, h: f64, implicit: bool) -> f64 {
    let force = f - b * v - c;
    let a = if implicit { force / (m + h * b) } else { force / m };
    v + h * a
}

/// `w' = (u - w) / tau` with `u` held: the exact solution multiplies the distance to `u` by
/// `exp(-h / tau)` each step, Euler by `1 - h / tau` (which overshoots, and for `tau < h / 2`
/// grows, once `h > tau`).
pub fn exercise_2(w0: f64, u: f64, tau: f64, h: f64, n: usize, exact: bool) -> f64 {
    let factor = if exact { (-h / tau).exp() } else { 1.0 - h / tau };
    u + (w0 - u) * factor.powi(n as i32)
}

/// The slider's point `s + l a` is at distance `rod` from the pin: `|d - l a|^2 = rod^2` gives
/// `l^2 - 2 (a.d) l + d.d - rod^2 = 0`, and the root nearer the slider site is
/// `a.d - sqrt((a.d)^2 + rod^2 - d.d)`. Without a real root MuJoCo takes `a.d`.
pub fn exercise_3(axis: Vec3, d: Vec3, rod: f64) -> f64 {
    let ad = axis.dot(&d);
    let det = ad * ad + rod * rod - d.dot(&d);
    if det <= 0.0 {
        ad
    } else {
        ad - det.sqrt()
    }
}

/// The discrete Riccati equation `P = q + a^2 P - (a b P)^2 / (r + b^2 P)` is, after
/// multiplying by `r + b^2 P`, the quadratic `b^2 P^2 + (r (1 - a^2) - q b^2) P - q r = 0`,
/// whose product of roots `-q r / b^2` is negative: exactly one root is positive. Then
/// `K = a b P / (r + b^2 P)`.
pub fn exercise_4(a: f64, b: f64, q: f64, r: f64) -> f64 {
    let beta = r * (1.0 - a * a) - q * b * b;
    let p = (-beta + (beta * beta + 4.0 * b * b * q * r).sqrt()) / (2.0 * b * b);
    a * b * p / (r + b * b * p)
}

/// With nothing moving RNEA's forward pass gives every body the base's acceleration `-g` (up),
/// carried into its frame, and its force `I_i a_i`, the force that holds the body against its
/// weight: `-m_i g` at the centre of mass. The force is linear in `I_i`, so scaling each body's
/// inertia by its `gravcomp` scales its share; the backward pass sums the shares of a joint's
/// descendants and projects them on its motion subspace, which is `J^T f` body by body.
pub fn exercise_5(model: &Model, q: &[f64]) -> Vec<f64> {
    let mut scaled = model.clone();
    for (inertia, &c) in scaled.inertia.iter_mut().zip(&model.body_gravcomp) {
        *inertia = SpatialInertia {
            m: c * inertia.m,
            h: inertia.h * c,
            ibar: inertia.ibar * c,
        };
    }
    let zero = vec![0.0; model.nv];
    rnea(&scaled, q, &zero, &zero, None)
        .expect("a valid configuration")
        .as_slice()
        .to_vec()
}

/// The actuator's length `x = J q` near `qpos0`: a force `f` along it is the joint force `J^T f`,
/// so its acceleration is `x'' = J M^-1 J^T f`, the motion of a mass `m = 1 / (J M^-1 J^T)`.
/// The oscillator `m x'' = -kp x - kv x'` has damping ratio `kv / (2 sqrt(kp m))`. `J M^-1 J^T`
/// by a Cholesky solve of `M y = J^T`.
pub fn exercise_6(model: &Model, actuator: usize, kp: f64, zeta: f64) -> f64 {
    let q0 = model.qpos0.as_slice().to_vec();
    let ten = tendon_kinematics(model, &q0).expect("a valid model");
    let nu = model.actuators.len();
    let (mut length, mut moment) = (vec![0.0; nu], DMatrix::zeros(nu, model.nv));
    transmission(model, &q0, &ten, &mut length, &mut moment).expect("a valid model");
    let m = crba(model, &q0).expect("a valid model");
    let j = moment.row(actuator).transpose();
    let jmj = j.dot(&m.cholesky().expect("M is positive definite").solve(&j));
    2.0 * zeta * (kp / jmj).sqrt()
}
