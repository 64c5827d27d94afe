//! Worked answers to the exercises of "The articulated-body algorithm" (statements in
//! `src/ch05.rs`).

use mbd::dynamics::{aba, hand_c};
use mbd::model::Model;
use mbd::spatial::{Mat6, Vec6};
use nalgebra::DVector;

/// With `a = L/2` and `J = m a^2 + m L^2 / 12`, the centre of mass is at
/// `(x - a sin th, -a cos th)`: `T = (M+m)/2 x'^2 - m a cos(th) x' th' + J/2 th'^2`,
/// `U = -m g a cos th`, and Lagrange's equations
/// `(M+m) x'' - m a c th'' + m a s th'^2 = force`, `-m a c x'' + J th'' + m g a s = torque`
/// are a 2x2 system.
pub fn exercise_1(theta: f64, thetad: f64, force: f64, torque: f64) -> [f64; 2] {
    let (big_m, m, l, g) = (2.0, 0.5, 0.8, 9.81);
    let a = 0.5 * l;
    let j = m * a * a + m * l * l / 12.0;
    let (s, c) = theta.sin_cos();
    let (h11, h12, h22) = (big_m + m, -m * a * c, j);
    let r1 = force - m * a * s * thetad * thetad;
    let r2 = torque - m * g * a * s;
    let det = h11 * h22 - h12 * h12;
    [(h22 * r1 - h12 * r2) / det, (h11 * r2 - h12 * r1) / det]
}

/// `U = I_2 s`, `D = s^T U`, `I^a_2 = I_2 - U U^T / D`, carried to body 1 by `X^T (.) X`.
pub fn exercise_2(i1: &Mat6, i2: &Mat6, x21: &Mat6, s: &Vec6) -> Mat6 {
    let u = i2 * s;
    let d = s.dot(&u);
    let ia2 = i2 - u * u.transpose() / d;
    i1 + x21.transpose() * ia2 * x21
}

/// The four stages of the classical tableau on the first-order system `(q, qd)`.
pub fn exercise_3(model: &Model, q: &[f64], qd: &[f64], h: f64) -> (Vec<f64>, Vec<f64>) {
    let n = model.nv;
    let tau = vec![0.0; n];
    let acc = |q: &[f64], v: &[f64]| aba(model, q, v, &tau, None).expect("valid state");
    let shift = |x: &[f64], dx: &[f64], c: f64| -> Vec<f64> { x.iter().zip(dx).map(|(a, b)| a + c * b).collect() };
    let k1v = acc(q, qd);
    let k1q = qd.to_vec();
    let (q2, v2) = (shift(q, &k1q, 0.5 * h), shift(qd, k1v.as_slice(), 0.5 * h));
    let k2v = acc(&q2, &v2);
    let k2q = v2;
    let (q3, v3) = (shift(q, &k2q, 0.5 * h), shift(qd, k2v.as_slice(), 0.5 * h));
    let k3v = acc(&q3, &v3);
    let k3q = v3;
    let (q4, v4) = (shift(q, &k3q, h), shift(qd, k3v.as_slice(), h));
    let k4v = acc(&q4, &v4);
    let k4q = v4;
    let q_new = (0..n)
        .map(|i| q[i] + h / 6.0 * (k1q[i] + 2.0 * k2q[i] + 2.0 * k3q[i] + k4q[i]))
        .collect();
    let v_new = (0..n)
        .map(|i| qd[i] + h / 6.0 * (k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i] + k4v[i]))
        .collect();
    (q_new, v_new)
}

/// Armature is already on H's diagonal (`hand_c` calls `crba`).
pub fn exercise_4(model: &Model, q: &[f64], qd: &[f64], tau: &[f64]) -> DVector<f64> {
    let (h, c) = hand_c(model, q, qd, None).expect("valid state");
    let rhs = DVector::from_column_slice(tau) - c;
    h.cholesky().expect("H is positive definite").solve(&rhs)
}
