//! Worked answers to the exercises of "Soft constraints" (statements in `src/ch12.rs`).

/// With `x` the violation in widths, `y(x) = x^p / mid^(p-1)` below the midpoint and
/// `1 - (1 - x)^p / (1 - mid)^(p-1)` above it (both equal `mid` at `x = mid`, with equal slopes),
/// and `d = d0 + y (dwidth - d0)`.
pub fn exercise_1(solimp: &[f64; 5], pos: f64, margin: f64) -> f64 {
    let [d0, dw, width, mid, p] = *solimp;
    if d0 == dw || width <= 1e-15 {
        return 0.5 * (d0 + dw);
    }
    let x = (pos - margin).abs() / width;
    if x >= 1.0 {
        return dw;
    }
    if x <= 0.0 {
        return d0;
    }
    let y = if x <= mid {
        x.powf(p) / mid.powf(p - 1.0)
    } else {
        1.0 - (1.0 - x).powf(p) / (1.0 - mid).powf(p - 1.0)
    };
    d0 + y * (dw - d0)
}

/// Standard: a mass-spring-damper of time constant `tc` and damping ratio `zeta`, scaled so the
/// impedance `dmax` is taken out: `K = 1 / (dmax tc zeta)^2`, `B = 2 / (dmax tc)`. Direct:
/// `K = k / dmax^2`, `B = b / dmax`.
pub fn exercise_2(solref: [f64; 2], dmax: f64) -> (f64, f64) {
    if solref[0] > 0.0 {
        (1.0 / (dmax * solref[0] * solref[1]).powi(2), 2.0 / (dmax * solref[0]))
    } else {
        (-solref[0] / (dmax * dmax), -solref[1] / dmax)
    }
}

/// The free body's `J M^-1 J^T` at its origin: `1/m` times the identity for the translation and
/// `R I^-1 R^T` for the rotation; MuJoCo keeps the mean of each block's diagonal, and the trace
/// of `R I^-1 R^T` is `sum 1 / I_k` whatever the orientation.
pub fn exercise_3(m: f64, moments: [f64; 3]) -> [f64; 2] {
    [1.0 / m, moments.iter().map(|i| 1.0 / i).sum::<f64>() / 3.0]
}
