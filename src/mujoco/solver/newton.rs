//! The Hessian of MuJoCo's `mj_solNewton` (`MakeHessian`, `HessianCone`):
//! `H = M + J^T diag(D_i [state_i = QUADRATIC]) J + sum_cones J_c^T H_c J_c`, assembled dense
//! and Cholesky-factored at every iteration (MuJoCo updates its sparse factor by rank-1 steps for
//! the rows whose state changed; the Hessian, and so every iterate, is the same). Book:
//! "Solvers", section "Newton's method".

use super::super::constraint::{Efc, EfcState};
use super::cost::Cone;
use nalgebra::DMatrix;

// ANCHOR: make_hessian
/// Writes the lower triangle of `H` into `h` (nv x nv): `m_dense` plus `D_i J_i^T J_i` for every
/// row in the quadratic state (an elliptic contact in the bottom zone counts as quadratic in all
/// its rows), plus `J_c^T H_c J_c` for every cone in the middle zone (`hcone`, from
/// [`super::cost::update`]). Inputs assumed valid; allocates nothing.
pub fn make_hessian(
    m_dense: &DMatrix<f64>,
    efc: &Efc,
    cones: &[Cone],
    state: &[EfcState],
    hcone: &[[f64; 36]],
    h: &mut DMatrix<f64>,
) {
    let nv = m_dense.nrows();
    h.copy_from(m_dense);
    let j = &efc.j;
    for i in 0..efc.nefc() {
        if state[i] != EfcState::Quadratic {
            continue;
        }
        let d = efc.d[i];
        for a in 0..nv {
            let dja = d * j[(i, a)];
            if dja == 0.0 {
                continue;
            }
            for b in 0..=a {
                h[(a, b)] += dja * j[(i, b)];
            }
        }
    }
    for (k, c) in cones.iter().enumerate() {
        if state[c.row] != EfcState::Cone {
            continue;
        }
        let (r0, dim, hc) = (c.row, c.dim, &hcone[k]);
        for a in 0..nv {
            // w = (J_c^T H_c)_a, one entry per cone row
            let mut w = [0.0; 6];
            for (s, ws) in w.iter_mut().enumerate().take(dim) {
                for t in 0..dim {
                    *ws += j[(r0 + t, a)] * hc[t * dim + s];
                }
            }
            for b in 0..=a {
                let mut acc = 0.0;
                for (s, ws) in w.iter().enumerate().take(dim) {
                    acc += ws * j[(r0 + s, b)];
                }
                h[(a, b)] += acc;
            }
        }
    }
}
// ANCHOR_END: make_hessian
