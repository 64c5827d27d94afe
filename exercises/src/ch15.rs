//! Exercises of the chapter "Integrators and the simulation loop" (`book/src/integrators.md`).
//! Grade them with `cargo test -p exercises --test ch15`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

use mbd::model::Model;
use mbd::spatial::Vec3;

/// Exercise 1, implicit damping by hand: one hinge with joint-space inertia `m`, damping `b`,
/// bias force `c` and applied force `f`, at velocity `v`. Return the velocity after one
/// semi-implicit Euler step of size `h`: with MuJoCo's implicit joint damping when `implicit`
/// is true, with the damping force taken explicitly (`eulerdamp` disabled) when false.
#[allow(clippy::too_many_arguments)]
pub fn exercise_1(m: f64, b: f64, c: f64, f: f64, v: f64, h: f64, implicit: bool) -> f64 {
    todo!()
}

/// Exercise 2, the exact filter: the activation of a first-order filter actuator of time
/// constant `tau` after `n` steps of size `h` from activation `w0`, with the control held at `u`:
/// the `filterexact` dynamics when `exact` is true, the `filter` dynamics (integrated by Euler)
/// when false. A closed form, no loop over the steps.
pub fn exercise_2(w0: f64, u: f64, tau: f64, h: f64, n: usize, exact: bool) -> f64 {
    todo!()
}

/// Exercise 3, slider-crank length: the actuator length of a slider-crank transmission, given
/// the slider's unit axis `axis`, the vector `d` from the slider site to the crank pin, and the
/// rod length `rod` (MuJoCo's `cranklength`); when the rod cannot reach, MuJoCo's fallback.
pub fn exercise_3(axis: Vec3, d: Vec3, rod: f64) -> f64 {
    todo!()
}

/// Exercise 4, scalar LQR in closed form: the gain `K` of the infinite-horizon discrete LQR for
/// `x_{k+1} = a x_k + b u_k` with cost `sum q x^2 + r u^2` (`q, r > 0`, `b != 0`), from the
/// positive root `P` of the scalar Riccati equation. Do not call `lqr_gain`.
pub fn exercise_4(a: f64, b: f64, q: f64, r: f64) -> f64 {
    todo!()
}

/// Exercise 5, gravity compensation from RNEA: MuJoCo's `qfrc_gravcomp` at configuration `q`,
/// the joint forces of a force `-gravcomp_i m_i g` at each body's centre of mass
/// (`model.body_gravcomp`, indexed like `model.inertia`), computed with
/// `mbd::dynamics::rnea` alone (not `gravcomp_into`): for example the gravity term
/// `rnea(q, 0, 0)` of a copy of the model whose body inertias are scaled by their `gravcomp`.
pub fn exercise_5(model: &Model, q: &[f64]) -> Vec<f64> {
    todo!()
}

/// Exercise 6, a damping ratio's damping: the velocity gain `kv = 2 zeta sqrt(kp m)` that
/// MuJoCo's compiler gives the position servo `actuator` of `model` (stiffness `kp`, damping
/// ratio `zeta`), with `m = 1 / (J M^-1 J^T)` the inertia it sees at `model.qpos0`: `J` its row
/// of the moment arms (`mbd::dynamics::transmission`), `M` the joint-space inertia
/// (`mbd::dynamics::crba`). Do not call `set_dampratio`.
pub fn exercise_6(model: &Model, actuator: usize, kp: f64, zeta: f64) -> f64 {
    todo!()
}
