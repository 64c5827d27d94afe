//! Assembly: finding a configuration that closes every loop (Newton's method on the loop-closure
//! errors of table 8.1, with the `G`/`g` machinery of 8.8 for the steps).

use super::constraints::{check_loops, loop_constraints};
use super::pivot::{null_space_with, PivotTol};
use crate::error::{check_vector, Error, Result};
use crate::model::Model;
use nalgebra::DVector;

/// Convergence tolerance of [`assemble`] on `max |err_i|` (metres and radians).
pub const ASSEMBLE_TOL: f64 = 1e-12;

/// A configuration near `q_guess` that closes every loop of the model: Newton's method on the
/// stacked loop-closure errors `err(q)` of [`super::loop_error`], whose Jacobian is `K`
/// (exactly at a closed loop, to first order elsewhere).
///
/// Each step solves `K dq = -err` by complete pivoting ([`super::null_space`]): `dq = g`, which
/// leaves the independent variables `y` where they are and moves only the dependent ones, then
/// `q <- q (+) dq` (quaternion-aware), halving the step while it does not reduce the error.
/// Rows left over by a rank-deficient `K` are ignored (the least-squares reading of 8.5).
pub fn assemble(model: &Model, q_guess: &[f64]) -> Result<DVector<f64>> {
    assemble_with(model, q_guess, None)
}

// ANCHOR: assemble
/// [`assemble`] keeping the given dofs (velocity indices) fixed: they are the independent
/// variables `y`, as in 8.11 where `q = gamma(y)`. Fails if they cannot all be kept fixed, or if
/// Newton does not converge in 50 iterations.
pub fn assemble_with(model: &Model, q_guess: &[f64], independent: Option<&[usize]>) -> Result<DVector<f64>> {
    check_vector("q_guess", q_guess, model.nq)?;
    check_loops(model)?;
    let zeros = vec![0.0; model.nv];
    let mut q = q_guess.to_vec();
    model.normalize_quaternions(&mut q)?;
    let tol = PivotTol {
        rank: 1e-10,
        consistency: f64::INFINITY,
    };
    let mut sys = loop_constraints(model, &q, &zeros, None)?;
    let size = |e: &DVector<f64>| e.amax();
    for _ in 0..50 {
        let e0 = size(&sys.err);
        if e0 <= ASSEMBLE_TOL {
            return Ok(DVector::from_vec(q));
        }
        let ns = null_space_with(&sys.kmat, &(-&sys.err), &tol, independent)?;
        // halve the step at most 10 times (down to alpha = 2^-10 < 1e-3), then take it anyway
        let mut alpha = 1.0;
        for halvings in 0..=10 {
            let mut q_try = q.clone();
            model.integrate_with(&mut q_try, ns.g_bias.as_slice(), alpha);
            let sys_try = loop_constraints(model, &q_try, &zeros, None)?;
            if size(&sys_try.err) < e0 || halvings == 10 {
                q = q_try;
                sys = sys_try;
                break;
            }
            alpha *= 0.5;
        }
    }
    let e = size(&sys.err);
    if e <= ASSEMBLE_TOL {
        return Ok(DVector::from_vec(q));
    }
    Err(Error::NotConverged {
        solver: "assemble (Newton on the loop-closure errors)".into(),
        iterations: 50,
        residual: Some(e),
    })
}
// ANCHOR_END: assemble
