//! The composite-rigid-body algorithm (Featherstone 6.2, table 6.2).

use super::{rnea_with, Workspace};
use crate::error::Result;
use crate::model::{jcalc, Model};
use crate::spatial::Force;
use nalgebra::{DMatrix, DVector};

/// The joint-space inertia matrix `H(q)` by CRBA, including armature on the diagonal
/// (MuJoCo's `M`).
pub fn crba(model: &Model, q: &[f64]) -> Result<DMatrix<f64>> {
    model.check_state(q, &vec![0.0; model.nv])?;
    let mut ws = Workspace::new(model);
    let mut h = DMatrix::zeros(model.nv, model.nv);
    crba_with(model, &mut ws, q, &mut h);
    Ok(h)
}

/// `HandC` (Featherstone table 6.2's companion): H by CRBA and C by RNEA with qdd = 0.
pub fn hand_c(model: &Model, q: &[f64], qd: &[f64], f_ext: Option<&[Force]>) -> Result<(DMatrix<f64>, DVector<f64>)> {
    model.check_state(q, qd)?;
    super::check_fext(model, f_ext)?;
    let mut ws = Workspace::new(model);
    let mut c = DVector::zeros(model.nv);
    rnea_with(model, &mut ws, q, qd, &vec![0.0; model.nv], f_ext, c.as_mut_slice());
    let mut h = DMatrix::zeros(model.nv, model.nv);
    crba_with(model, &mut ws, q, &mut h);
    Ok((h, c))
}

// ANCHOR: crba
/// CRBA on pre-allocated storage (Featherstone table 6.2, eqs. (6.17)-(6.22)):
/// - composite inertias, leaves to root: `I^c_i = I_i + sum over children`,
///   `I^c_lambda(i) += lambda_X_i* I^c_i i_X_lambda`;
/// - for each body: `F = I^c_i S_i`, `H_ii = S_i^T F`; then walk to the root,
///   `F = lambda_X_j* F`, `j = lambda(j)`, `H_ij = F^T S_j = H_ji^T`.
pub fn crba_with(model: &Model, ws: &mut Workspace, q: &[f64], h: &mut DMatrix<f64>) {
    let zeros = [0.0; 6];
    for i in 1..=model.nb {
        let nv = model.joints[i].jtype.nv();
        let jc = jcalc(&model.joints[i], &q[model.qs(i)], &zeros[..nv]);
        ws.x_up[i] = jc.x_j.compose(&model.x_tree[i]);
        ws.s[i] = jc.s;
        ws.ic[i] = model.inertia[i];
    }
    for i in (1..=model.nb).rev() {
        let p = model.lambda[i];
        if p != 0 {
            let back = ws.ic[i].transform_back(&ws.x_up[i]);
            ws.ic[p] += back;
        }
    }
    h.fill(0.0);
    for i in 1..=model.nb {
        let ni = ws.s[i].n;
        let di = model.v_adr[i];
        let mut f = [Force::zero(); 6];
        for k in 0..ni {
            f[k] = ws.ic[i].mul_motion(&ws.s[i].cols[k]);
        }
        for k in 0..ni {
            // the joint's own block is symmetric: compute the lower half and mirror it
            for l in 0..=k {
                let hkl = ws.s[i].cols[l].dot(&f[k]);
                h[(di + k, di + l)] = hkl;
                h[(di + l, di + k)] = hkl;
            }
            h[(di + k, di + k)] += model.joints[i].armature;
        }
        let mut j = i;
        while model.lambda[j] != 0 {
            for fk in f.iter_mut().take(ni) {
                *fk = ws.x_up[j].inv_apply_force(fk);
            }
            j = model.lambda[j];
            let dj = model.v_adr[j];
            for k in 0..ni {
                for l in 0..ws.s[j].n {
                    let hij = ws.s[j].cols[l].dot(&f[k]);
                    h[(di + k, dj + l)] = hij;
                    h[(dj + l, di + k)] = hij;
                }
            }
        }
    }
}
// ANCHOR_END: crba
