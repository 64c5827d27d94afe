//! Worked answers to the exercises of "Integrators and the simulation loop" (statements in
//! `src/ch15.rs`).

use mbd::spatial::Vec3;

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
