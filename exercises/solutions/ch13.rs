//! Worked answers to the exercises of "Solvers" (statements in `src/ch13.rs`).

use mbd::mujoco::constraint::{Efc, EfcState};
use mbd::mujoco::solver::cost::{cones, update};
use mbd::mujoco::solver::primal::primal_cost;
use mbd::mujoco::solver::problem::Problem;
use nalgebra::{DMatrix, DVector};

/// For each subset S of rows taken as active, solve `AR_SS f_S = -b_S` with the other forces 0.
/// The KKT conditions of the dual ask `f >= 0` and a residual `AR f + b >= 0` off S (zero on S by
/// construction); a strictly convex problem has exactly one such set (up to ties), so keep the
/// set whose violation of both is smallest.
pub fn exercise_1(ar: &DMatrix<f64>, b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut best: Option<(f64, Vec<f64>)> = None;
    for mask in 0u32..(1 << n) {
        let s: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        let mut f = vec![0.0; n];
        if !s.is_empty() {
            let a = DMatrix::from_fn(s.len(), s.len(), |r, c| ar[(s[r], s[c])]);
            let rhs = DVector::from_iterator(s.len(), s.iter().map(|&i| -b[i]));
            let Some(x) = a.cholesky().map(|c| c.solve(&rhs)) else {
                continue;
            };
            for (k, &i) in s.iter().enumerate() {
                f[i] = x[k];
            }
        }
        let r: Vec<f64> = (0..n)
            .map(|i| b[i] + (0..n).map(|k| ar[(i, k)] * f[k]).sum::<f64>())
            .collect();
        let violation = f.iter().map(|x| (-x).max(0.0)).sum::<f64>()
            + (0..n)
                .filter(|i| mask & (1 << i) == 0)
                .map(|i| (-r[i]).max(0.0))
                .sum::<f64>();
        if best.as_ref().is_none_or(|(v, _)| violation < *v) {
            best = Some((violation, f));
        }
    }
    best.map(|(_, f)| f).unwrap_or_default()
}

/// The cost's gradient in `x` is `-f`, so its Hessian is `-df/dx`: difference the force column
/// by column with a step of `1e-6` (the middle zone's cost is smooth, so the error is
/// `O(h^2)` plus rounding `O(eps / h)`).
pub fn exercise_2(efc: &Efc, x: &[f64]) -> DMatrix<f64> {
    let h = 1e-6;
    let cs = cones(efc).expect("valid rows");
    let n = x.len();
    let force = |x: &[f64]| -> Vec<f64> {
        let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
        update(efc, &cs, x, &mut f, &mut st, None);
        f
    };
    DMatrix::from_fn(n, n, |a, b| {
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[b] += h;
        xm[b] -= h;
        -(force(&xp)[a] - force(&xm)[a]) / (2.0 * h)
    })
}

/// Row i solves its own equation for `f_i` with the newest values of the others (rows before
/// i already updated in this sweep): `f_i = -(b_i + sum_{k != i} AR_ik f_k) / AR_ii`.
pub fn exercise_3(ar: &DMatrix<f64>, b: &[f64], sweeps: usize) -> Vec<f64> {
    let n = b.len();
    let mut f = vec![0.0; n];
    for _ in 0..sweeps {
        for i in 0..n {
            let off: f64 = (0..n).filter(|&k| k != i).map(|k| ar[(i, k)] * f[k]).sum();
            f[i] = -(b[i] + off) / ar[(i, i)];
        }
    }
    f
}

/// `(C(a + (alpha + h) dir) - C(a + (alpha - h) dir)) / 2h`.
pub fn exercise_4(p: &Problem, a: &[f64], dir: &[f64], alpha: f64, h: f64) -> f64 {
    let cs = cones(&p.efc).expect("valid rows");
    let n = p.efc.nefc();
    let cost = |t: f64| {
        let x: Vec<f64> = a.iter().zip(dir).map(|(ai, pi)| ai + t * pi).collect();
        let (mut f, mut st) = (vec![0.0; n], vec![EfcState::Satisfied; n]);
        primal_cost(&p.smooth(), &p.efc, &cs, &x, &mut f, &mut st)
    };
    (cost(alpha + h) - cost(alpha - h)) / (2.0 * h)
}

/// Keep the sum: `g = (m + y, m - y)` with `m = (f_0 + f_1) / 2`. Along that line the cost is the
/// parabola `1/2 K1 y^2 + K0 y + const`, with `K1 = a00 + a11 - a01 - a10 = (e0 - e1)^T a (e0 -
/// e1)` (never negative, `a` being semidefinite) and `K0 = m (a00 - a11) + c0 - c1`, and both
/// edges push when `y` lies in `[-m, m]`. With `K1 > 0` the minimum is the vertex `-K0 / K1`
/// clamped to that interval; with `K1 = 0` (the pair's difference moves nothing) the cost is
/// linear in `y` and the minimum is the end its slope `K0` points away from. (`noslip::edge_pair`
/// instead moves a pair whose `K1` is below `mjMINVAL` to its midpoint: where the difference
/// moves nothing, the choice changes no acceleration.)
pub fn exercise_5(a: &[[f64; 2]; 2], c: &[f64; 2], f: &[f64; 2]) -> [f64; 2] {
    let m = 0.5 * (f[0] + f[1]);
    let k1 = a[0][0] + a[1][1] - a[0][1] - a[1][0];
    let k0 = m * (a[0][0] - a[1][1]) + c[0] - c[1];
    let y = if k1 > 0.0 {
        (-k0 / k1).clamp(-m, m)
    } else if k0 > 0.0 {
        -m
    } else if k0 < 0.0 {
        m
    } else {
        0.0
    };
    [m + y, m - y]
}
