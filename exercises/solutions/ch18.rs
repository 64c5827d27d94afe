//! Worked answers to the exercises of "One mechanism, every formulation" (statements in
//! `src/ch18.rs`).

/// Place B, intersect the circle of the coupler's length about B with the circle of the rocker's
/// length about D, keep the intersection on the left of B -> D (where the linkage starts), and
/// read each absolute angle as the turn that carries the link's body-frame vector onto its
/// world vector; the joint angles are the differences.
pub fn exercise_1(theta1: f64) -> [f64; 3] {
    // a point (x, z) of a frame turned by a about y, and the turn that carries u onto v
    let rot = |a: f64, (x, z): (f64, f64)| (x * a.cos() + z * a.sin(), -x * a.sin() + z * a.cos());
    let turn = |u: (f64, f64), v: (f64, f64)| u.1.atan2(u.0) - v.1.atan2(v.0);
    let (u, w): ((f64, f64), (f64, f64)) = ((0.3, 0.15), (0.05, -0.3));
    let (lc, lr) = ((u.0 * u.0 + u.1 * u.1).sqrt(), (w.0 * w.0 + w.1 * w.1).sqrt());
    let b = rot(theta1, (0.05, 0.15));
    let d = (0.4, 0.0);
    // C on both circles: |C - B| = lc, |C - D| = lr
    let bd = (d.0 - b.0, d.1 - b.1);
    let l = (bd.0 * bd.0 + bd.1 * bd.1).sqrt();
    let a = (lc * lc - lr * lr + l * l) / (2.0 * l);
    let hgt = (lc * lc - a * a).max(0.0).sqrt();
    let (ex, ez) = (bd.0 / l, bd.1 / l);
    // the side of BD where the linkage starts: cross(BD, BC) > 0 at q = 0
    let (nx, nz) = (-ez, ex);
    let c = (b.0 + a * ex + hgt * nx, b.1 + a * ez + hgt * nz);
    let phi2 = turn(u, (c.0 - b.0, c.1 - b.1));
    let phi3 = turn(w, (d.0 - c.0, d.1 - c.1));
    [theta1, phi2 - theta1, phi3 - phi2]
}

/// The two runs are `x* + c h^p` and `x* + c (h/2)^p` to leading order: eliminate `c`.
pub fn exercise_2(x_h: f64, x_h2: f64, p: f64) -> f64 {
    x_h2 + (x_h2 - x_h) / (2f64.powf(p) - 1.0)
}
