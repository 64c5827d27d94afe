//! Worked answers to the exercises of "Closed-loop systems" (statements in `src/ch07.rs`).

use mbd::spatial::Xform;
use nalgebra::{DMatrix, DVector};

/// The joint allows rotation about z and translation along z, so it transmits moments about x
/// and y and forces along x and y: `T = [e1 e2 e4 e5]`. Row 3 of E is S's z axis in P
/// coordinates; a small turn theta of S (P's axes) moves it from (0, 0, 1) to
/// (theta_y, -theta_x, 1), so `theta_x = -E32`, `theta_y = E31` whatever the joint angle; the
/// offset of S's origin from the axis is `(r_x, r_y)`.
pub fn exercise_1(x_sp: &Xform) -> (DMatrix<f64>, DVector<f64>) {
    let mut t = DMatrix::zeros(6, 4);
    for (col, row) in [0, 1, 3, 4].into_iter().enumerate() {
        t[(row, col)] = 1.0;
    }
    let e = &x_sp.e;
    let err = DVector::from_vec(vec![-e[(2, 1)], e[(2, 0)], x_sp.r.x, x_sp.r.y]);
    (t, err)
}

/// `e'' + (2/T) e' + e/T^2 = 0` has the double root `-1/T`: `e(t) = (A + B t) exp(-t/T)` with
/// `A = e(0)` and `B = e'(0) + e(0)/T`.
pub fn exercise_2(t: f64, t_stab: f64, e0: f64, edot0: f64) -> f64 {
    (e0 + (edot0 + e0 / t_stab) * t) * (-t / t_stab).exp()
}

/// A body turned by th about y maps its (x, z) to world as (c x + s z, -s x + c z); turning
/// about y through the hinge o at unit rate moves p with `y x (p - o) = (dz, 0, -dx)`.
pub fn exercise_3(q: [f64; 3]) -> [[f64; 3]; 2] {
    let turn = |th: f64, x: f64, z: f64| {
        let (s, c) = th.sin_cos();
        (c * x + s * z, -s * x + c * z)
    };
    let a = (0.0, 0.0);
    let ob = turn(q[0], 0.05, 0.15);
    let b = (a.0 + ob.0, a.1 + ob.1);
    let bc = turn(q[0] + q[1], 0.3, 0.15);
    let c = (b.0 + bc.0, b.1 + bc.1);
    let cp = turn(q[0] + q[1] + q[2], 0.05, -0.3);
    let p = (c.0 + cp.0, c.1 + cp.1);
    let mut jac = [[0.0; 3]; 2];
    for (j, o) in [a, b, c].into_iter().enumerate() {
        jac[0][j] = p.1 - o.1;
        jac[1][j] = -(p.0 - o.0);
    }
    jac
}

/// With `G = [[1, 0], [theta2', 0], [d', 0], [0, 1]]` the actuated rows (1 and 4) form
/// `G_u = 1`, so `u = G_u^-T G^T tau_ID = G^T tau_ID`, with no singularity at `y1 = 0`.
pub fn exercise_4(l1: f64, l2: f64, y1: f64, tau_id: [f64; 4]) -> [f64; 2] {
    let (s1, c1) = y1.sin_cos();
    let dd = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
    let d = dd.sqrt();
    let theta2_p = l2 * (l2 - l1 * c1) / dd;
    let d_p = l1 * l2 * s1 / d;
    [tau_id[0] + theta2_p * tau_id[1] + d_p * tau_id[2], tau_id[3]]
}
