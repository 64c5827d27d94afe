//! MuJoCo's soft-constraint parameters (`getsolparam`, `getimpedance`, `mj_makeImpedance`):
//! sanitizing `solref`/`solimp`, the impedance `d(r)`, the stiffness `K` and damping `B` of the
//! reference acceleration, and the regularizer `R`. Book chapter: "Soft constraints", section
//! "Impedance and reference acceleration" (spec 4.2-4.5).

use crate::model::constants::{mjMAXIMP, mjMINIMP, mjMINVAL};
use crate::model::SOLREF_DEFAULT;

/// What sanitizing changed, so that the caller can report it (the library never prints).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolrefWarning {
    /// `solref` had exactly one positive entry: replaced by the default (0.02, 1).
    MixedSolref,
    /// `solreffriction` had exactly one positive entry: replaced by (0, 0) (use `solref`).
    MixedSolreffriction,
}

impl std::fmt::Display for SolrefWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolrefWarning::MixedSolref => f.write_str("mixed solref format, replaced by the default (0.02, 1)"),
            SolrefWarning::MixedSolreffriction => {
                f.write_str("solreffriction values of mixed sign, replaced by (0, 0) (use solref)")
            }
        }
    }
}

/// A row group's parameters after [`sanitize`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolParams {
    /// `solref` (standard `(timeconst, dampratio)` or direct `(-stiffness, -damping)`).
    pub solref: [f64; 2],
    /// `solreffriction` (zeros: the friction rows of an elliptic contact use `solref`).
    pub solreffriction: [f64; 2],
    /// `solimp = (d0, dwidth, width, midpoint, power)`.
    pub solimp: [f64; 5],
}

// ANCHOR: sanitize
/// MuJoCo's `getsolparam` rules (spec 4.2), applied to one row group's parameters:
/// 1. `solref` with exactly one positive entry (standard and direct format mixed) becomes the
///    default (0.02, 1); `solreffriction` likewise becomes (0, 0). Each is reported in `warn`.
/// 2. `refsafe`: in the standard format, `timeconst >= 2 * timestep` (the constraint cannot be
///    stiffer than the integrator resolves).
/// 3. `solimp[0]`, `solimp[1]`, `solimp[3]` are clamped to `[mjMINIMP, mjMAXIMP]`,
///    `solimp[2] >= 0`, `solimp[4] >= 1`.
pub fn sanitize(mut p: SolParams, timestep: f64, refsafe: bool, mut warn: impl FnMut(SolrefWarning)) -> SolParams {
    let mixed = |r: &[f64; 2]| (r[0] > 0.0) != (r[1] > 0.0);
    if mixed(&p.solref) {
        warn(SolrefWarning::MixedSolref);
        p.solref = SOLREF_DEFAULT;
    }
    if refsafe && p.solref[0] > 0.0 {
        p.solref[0] = p.solref[0].max(2.0 * timestep);
    }
    if mixed(&p.solreffriction) {
        warn(SolrefWarning::MixedSolreffriction);
        p.solreffriction = [0.0; 2];
    }
    if refsafe && p.solreffriction[0] > 0.0 {
        p.solreffriction[0] = p.solreffriction[0].max(2.0 * timestep);
    }
    let clamp = |x: f64| x.clamp(mjMINIMP, mjMAXIMP);
    let s = &mut p.solimp;
    s[0] = clamp(s[0]);
    s[1] = clamp(s[1]);
    s[2] = s[2].max(0.0);
    s[3] = clamp(s[3]);
    s[4] = s[4].max(1.0);
    p
}
// ANCHOR_END: sanitize

/// `a^b` with MuJoCo's shortcuts for the common powers 1 and 2 (`power` of
/// `engine_core_constraint.c`), so that the default `p = 2` is computed as a product.
fn power(a: f64, b: f64) -> f64 {
    if b == 1.0 {
        a
    } else if b == 2.0 {
        a * a
    } else {
        a.powf(b)
    }
}

// ANCHOR: impedance
/// MuJoCo's `getimpedance` (spec 4.3): the impedance `d` in `(0, 1)` of a row group at
/// violation `r` (its position) with margin `m`, and its derivative `d'` with respect to `r`.
/// With `solimp = (d0, dw, width, mid, p)` (sanitized) and `x = |r - m| / width`:
///
/// ```text
/// d = d0 + y(x) (dw - d0),   y = x^p / mid^(p-1)                 for x <= mid,
///                            y = 1 - (1 - x)^p / (1 - mid)^(p-1)  for x >  mid,
/// ```
///
/// `y = x` when `p = 1`, `d = d0` for `x <= 0`, `d = dw` for `x >= 1`, and the flat value
/// `(d0 + dw) / 2` when `d0 = dw` or `width <= mjMINVAL`.
pub fn impedance(solimp: &[f64; 5], pos: f64, margin: f64) -> (f64, f64) {
    let [d0, dw, width, mid, p] = *solimp;
    if d0 == dw || width <= mjMINVAL {
        return (0.5 * (d0 + dw), 0.0);
    }
    let mut x = (pos - margin) / width;
    let sgn = if x < 0.0 {
        x = -x;
        -1.0
    } else {
        1.0
    };
    if x >= 1.0 || x <= 0.0 {
        return (if x >= 1.0 { dw } else { d0 }, 0.0);
    }
    let (y, dy) = if p == 1.0 {
        (x, 1.0)
    } else if x <= mid {
        let a = 1.0 / power(mid, p - 1.0);
        (a * power(x, p), p * a * power(x, p - 1.0))
    } else {
        let b = 1.0 / power(1.0 - mid, p - 1.0);
        (1.0 - b * power(1.0 - x, p), p * b * power(1.0 - x, p - 1.0))
    };
    (d0 + y * (dw - d0), dy * sgn * (dw - d0) / width)
}
// ANCHOR_END: impedance

// ANCHOR: stiffness_damping
/// MuJoCo's `K` and `B` of one row (spec 4.4), `dmax = solimp[1]` (sanitized). Standard format
/// `(tc, zeta)`: `K = 1 / (dmax^2 tc^2 zeta^2)`, `B = 2 / (dmax tc)`; direct format
/// `(-k, -b)`: `K = k / dmax^2`, `B = b / dmax` (each denominator at least `mjMINVAL`). The
/// two entries are tested separately, as MuJoCo does. `K = 0` for `no_stiffness` rows
/// (friction loss and the friction rows of an elliptic contact).
pub fn stiffness_damping(solref: &[f64; 2], dmax: f64, no_stiffness: bool) -> (f64, f64) {
    let k = if no_stiffness {
        0.0
    } else if solref[0] > 0.0 {
        1.0 / (dmax * dmax * solref[0] * solref[0] * solref[1] * solref[1]).max(mjMINVAL)
    } else {
        -solref[0] / (dmax * dmax).max(mjMINVAL)
    };
    let b = if solref[1] > 0.0 {
        2.0 / (dmax * solref[0]).max(mjMINVAL)
    } else {
        -solref[1] / dmax.max(mjMINVAL)
    };
    (k, b)
}
// ANCHOR_END: stiffness_damping

/// The regularizer of a row (spec 4.5 step 1): `R = max(mjMINVAL, (1 - d) / d * A-hat)`.
pub fn regularizer(imp: f64, diag_approx: f64) -> f64 {
    ((1.0 - imp) * diag_approx / imp).max(mjMINVAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impedance_is_continuous_monotone_and_its_derivative_matches() {
        let solimp = [0.8, 0.97, 0.01, 0.3, 3.0];
        let mut prev = impedance(&solimp, 0.0, 0.0).0;
        assert_eq!(prev, 0.8);
        for k in 1..=300 {
            let r = -0.012 * k as f64 / 300.0;
            let (d, dd) = impedance(&solimp, r, 0.0);
            assert!(d >= prev - 1e-15 && d <= 0.97);
            prev = d;
            let h = 1e-7;
            let fd = (impedance(&solimp, r + h, 0.0).0 - impedance(&solimp, r - h, 0.0).0) / (2.0 * h);
            if (r.abs() - 0.003).abs() > 1e-6 && (r.abs() - 0.01).abs() > 1e-6 {
                assert!((fd - dd).abs() <= 1e-6 * (1.0 + dd.abs()), "r {r}: {fd} vs {dd}");
            }
        }
        assert_eq!(impedance(&solimp, -0.02, 0.0).0, 0.97);
    }

    #[test]
    fn sanitize_replaces_mixed_solref_and_clamps_solimp() {
        let mut warnings = vec![];
        let p = sanitize(
            SolParams {
                solref: [0.01, -1.0],
                solreffriction: [-1.0, 2.0],
                solimp: [1.5, -0.2, -1.0, 2.0, 0.5],
            },
            0.002,
            true,
            |w| warnings.push(w),
        );
        assert_eq!(
            warnings,
            vec![SolrefWarning::MixedSolref, SolrefWarning::MixedSolreffriction]
        );
        assert_eq!(p.solref, SOLREF_DEFAULT);
        assert_eq!(p.solreffriction, [0.0, 0.0]);
        assert_eq!(p.solimp, [mjMAXIMP, mjMINIMP, 0.0, mjMAXIMP, 1.0]);
        let q = sanitize(
            SolParams {
                solref: [0.001, 1.0],
                solreffriction: [0.0; 2],
                solimp: [0.9, 0.95, 0.001, 0.5, 2.0],
            },
            0.002,
            true,
            |_| panic!("no warning expected"),
        );
        assert_eq!(q.solref, [0.004, 1.0]);
    }
}
