//! Worked answers to the exercises of "SPOOK: a variational stepper" (statements in
//! `src/ch16.rs`).

use nalgebra::Matrix2;

/// `[0; w] (x) [r0; r] = [-w.r; r0 w + w x r]`; read off the coefficient of each `w_j`.
pub fn exercise_1(rho: [f64; 4]) -> [[f64; 3]; 4] {
    let [r0, r1, r2, r3] = rho;
    [
        [-0.5 * r1, -0.5 * r2, -0.5 * r3],
        [0.5 * r0, 0.5 * r3, -0.5 * r2],
        [-0.5 * r3, 0.5 * r0, 0.5 * r1],
        [0.5 * r2, -0.5 * r1, 0.5 * r0],
    ]
}

/// `a = 4 / (h (1 + 4 d))`, `b = 4 d / (1 + 4 d)`, `eps = 4 / (h^2 k (1 + 4 d))`: SPOOK's
/// `Upsilon = 1 / (1 + 4 d)` and `Sigma = 4 epsilon / (h^2 (1 + 4 d))` with `epsilon = 1/k`.
pub fn exercise_2(h: f64, k: f64, d: f64) -> (f64, f64, f64) {
    let den = 1.0 + 4.0 * d;
    (4.0 / (h * den), 4.0 * d / den, 4.0 / (h * h * k * den))
}

/// With `U = 1 / (1 + 4 tau / h)` and `w = h G v`, the stiff limit of the step is
/// `[phi; w]_{k+1} = [[1 - 4 U, U], [-4 U, U]] [phi; w]_k`; the factor is its spectral radius.
pub fn exercise_3(h: f64, tau: f64) -> f64 {
    let u = 1.0 / (1.0 + 4.0 * tau / h);
    let a = Matrix2::new(1.0 - 4.0 * u, u, -4.0 * u, u);
    a.complex_eigenvalues().iter().map(|z| z.norm()).fold(0.0, f64::max)
}

/// At rest the row reads `epsilon lambda + phi = 0`, with `lambda` the rod's tension `m g`
/// (pulling back): the rod stretches by `epsilon m g`, a spring of stiffness `1/epsilon`.
pub fn exercise_4(epsilon: f64, m: f64, g: f64) -> f64 {
    epsilon * m * g
}
