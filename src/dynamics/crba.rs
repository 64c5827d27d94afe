//! The composite-rigid-body algorithm (Featherstone 6.2, table 6.2).

use super::{rnea_with, Workspace};
use crate::error::Result;
use crate::model::{jcalc_into, Model};
use crate::spatial::Force;
use crate::vector::AsVector;
use nalgebra::{DMatrix, DVector};

/// The joint-space inertia matrix `H(q)` by CRBA, including armature on the diagonal
/// (MuJoCo's `M`).
pub fn crba(model: &Model, q: &(impl AsVector + ?Sized)) -> Result<DMatrix<f64>> {
    let q = q.as_vector();
    model.check_state(q, &vec![0.0; model.nv])?;
    let mut ws = Workspace::new(model);
    let mut h = DMatrix::zeros(model.nv, model.nv);
    crba_with(model, &mut ws, q, &mut h);
    Ok(h)
}

// ANCHOR: hand_c
/// `HandC` (Featherstone table 6.2's companion): H by CRBA and C by RNEA with qdd = 0.
pub fn hand_c(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
    f_ext: Option<&[Force]>,
) -> Result<(DMatrix<f64>, DVector<f64>)> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    model.check_state(q, qd)?;
    super::check_fext(model, f_ext)?;
    let mut ws = Workspace::new(model);
    let mut c = DVector::zeros(model.nv);
    rnea_with(model, &mut ws, q, qd, &vec![0.0; model.nv], f_ext, c.as_mut_slice());
    let mut h = DMatrix::zeros(model.nv, model.nv);
    crba_with(model, &mut ws, q, &mut h);
    Ok((h, c))
}
// ANCHOR_END: hand_c

// ANCHOR: crba
/// CRBA on pre-allocated storage (Featherstone table 6.2, eqs. (6.17)-(6.22)), leaves to root:
/// - composite inertias: `I^c_i = I_i + sum over children`,
///   `I^c_lambda(i) += lambda_X_i* I^c_i i_X_lambda`;
/// - `F = I^c_i S_i`, `H_ii = S_i^T F`, and for every ancestor j of i, after `F = lambda_X_j* F`,
///   `H_ij = F^T S_j = H_ji^T`.
///
/// Table 6.2 carries body i's `F` up to the root before it starts on body i - 1. Here the loops
/// are interchanged: the columns of `F` of all of body i's subtree are kept in `ws.f_cols`, in
/// body i's coordinates, and move up one level together when body i is done. Every column still
/// meets the same transforms and the same `S_j`, so the arithmetic is the same; the columns are
/// independent of each other, which lets the processor overlap their transforms instead of
/// waiting on one chain of dependent products per column.
pub fn crba_with(model: &Model, ws: &mut Workspace, q: &[f64], h: &mut DMatrix<f64>) {
    let zeros = [0.0; 6];
    for i in 1..=model.nb {
        let nv = model.joints[i].jtype.nv();
        jcalc_into(&model.joints[i], &q[model.qs(i)], &zeros[..nv], &mut ws.jc[i]);
        ws.x_up[i] = ws.jc[i].x_j.compose(&model.x_tree[i]);
        ws.ic[i] = model.inertia[i];
    }
    h.as_mut_slice().fill(0.0); // (a plain memset; `DMatrix::fill` walks the entries)
    for i in (1..=model.nb).rev() {
        // I^c_i is complete: its children have larger numbers and were done already.
        for (k, dof) in model.dofs(i).enumerate() {
            ws.f_cols[dof] = ws.ic[i].mul_motion(&ws.jc[i].s.cols[k]); // F = I^c_i S_i
        }
        for (l, dof) in model.dofs(i).enumerate() {
            let s_l = ws.jc[i].s.cols[l];
            for &col in &ws.subtree_dofs[i] {
                let h_ij = s_l.dot(&ws.f_cols[col]); // S_i^T F: table 6.2's H_ji = H_ij^T
                h[(col, dof)] = h_ij;
                h[(dof, col)] = h_ij;
            }
            h[(dof, dof)] += model.joints[i].armature;
        }
        let p = model.lambda[i];
        if p != 0 {
            let x = ws.x_up[i];
            let back = ws.ic[i].transform_back(&x);
            ws.ic[p] += back;
            for &col in &ws.subtree_dofs[i] {
                ws.f_cols[col] = x.inv_apply_force(&ws.f_cols[col]); // F = lambda_X_i* F
            }
        }
    }
}
// ANCHOR_END: crba
