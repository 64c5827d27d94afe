//! Exercises of the chapter "SPOOK: a variational stepper" (`book/src/spook.md`). Grade them with
//! `cargo test -p exercises --test ch16`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

/// Exercise 1, Gamma by hand: the 4 x 3 matrix `Gamma(rho)` with `rho-dot = Gamma(rho) omega`
/// for a world-frame `omega`, from `rho-dot = 1/2 [0; omega] (x) rho` (quaternions (w, x, y, z)).
/// Returns the matrix row by row.
pub fn exercise_1(rho: [f64; 4]) -> [[f64; 3]; 4] {
    todo!()
}

/// Exercise 2, the game engine's scalars: cannon.js's per-row scalars `(a, b, eps)` from the
/// time step `h`, the stiffness `k` and the damping rate `d = tau / h`, so that the Schur
/// system's right-hand side is `B = -a phi - b G v - h G M^-1 f` and its diagonal shift is `eps`.
pub fn exercise_2(h: f64, k: f64, d: f64) -> (f64, f64, f64) {
    todo!()
}

/// Exercise 3, the return rate: the factor by which SPOOK shrinks a constraint violation per
/// step in the stiff limit (epsilon -> 0), the spectral radius of the recurrence of
/// `[phi; h G v]`, for time step `h` and damping time `tau`.
pub fn exercise_3(h: f64, tau: f64) -> f64 {
    todo!()
}

/// Exercise 4, a soft rod: a distance row of compliance `epsilon` holds a mass `m` hanging at
/// rest under gravity `g`. Return the constraint's violation `phi` (how much longer the rod is
/// than its rest length).
pub fn exercise_4(epsilon: f64, m: f64, g: f64) -> f64 {
    todo!()
}
