//! The composite-rigid-body algorithm (Featherstone 6.2, table 6.2).

use super::{coordinate_axis, rnea_with, Workspace};
use crate::error::Result;
use crate::model::{jcalc_pos, Model};
use crate::spatial::{Force, SpatialInertia, Vec3};
use crate::vector::AsVector;
use nalgebra::{DMatrix, DVector};

/// The joint-space inertia matrix `H(q)` by CRBA, including armature on the diagonal
/// (MuJoCo's `M`); both triangles are filled. Book chapter: "The composite-rigid-body
/// algorithm" (`book/src/crba.md`); MuJoCo's `mj_crb`, Pinocchio's `crba`.
///
/// ```
/// use mbd::dynamics::{crba, kinetic_energy};
/// use mbd::model::canned;
///
/// let model = canned::binary_tree(3); // 7 bodies, one hinge each
/// let q = [0.3; 7];
/// let h = crba(&model, &q)?;
/// // symmetric, positive definite, and the kinetic energy is 1/2 qd' H qd
/// assert_eq!(h, h.transpose());
/// assert!(h.clone().cholesky().is_some());
/// let qd = nalgebra::DVector::from_element(7, 0.5);
/// let t = kinetic_energy(&model, &q, qd.as_slice())?;
/// assert!((0.5 * qd.dot(&(&h * &qd)) - t).abs() < 1e-12);
/// // two bodies on different branches (neither supports the other) give a zero entry
/// use mbd::kinematics::supports;
/// for i in 1..=7 {
///     for j in 1..=7 {
///         if !supports(&model, i, j) && !supports(&model, j, i) {
///             assert_eq!(h[(i - 1, j - 1)], 0.0);
///         }
///     }
/// }
/// # Ok::<(), mbd::Error>(())
/// ```
#[doc(alias = "mass matrix")]
#[doc(alias = "inertia matrix")]
#[doc(alias = "joint-space inertia")]
#[doc(alias = "mj_crb")]
pub fn crba(model: &Model, q: &(impl AsVector + ?Sized)) -> Result<DMatrix<f64>> {
    let q = q.as_vector();
    model.check_state(q, &vec![0.0; model.nv])?;
    let mut ws = Workspace::new(model);
    let mut h = DMatrix::zeros(model.nv, model.nv);
    crba_with(model, &mut ws, q, &mut h);
    fill_upper(model, &mut h);
    crate::error::check_output("H", h.as_slice())?;
    Ok(h)
}

/// Copies the lower triangle of H on the tree's pattern, as [`crba_with`] leaves it, into the
/// upper triangle, so that `h` holds the whole symmetric matrix.
pub fn fill_upper(model: &Model, h: &mut DMatrix<f64>) {
    for i in 1..=model.nb {
        let sub = &model.subtree_dofs()[i];
        for (l, dof) in model.dofs(i).enumerate() {
            for &col in &sub[l + 1..] {
                h[(dof, col)] = h[(col, dof)];
            }
        }
    }
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
    fill_upper(model, &mut h);
    crate::error::check_output("H", h.as_slice())?;
    crate::error::check_output("C", c.as_slice())?;
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
/// H is symmetric, so only its lower triangle is computed, and only on the tree's pattern:
/// `H[(r, c)]` for dof c and each dof r of c's subtree (r >= c). Entries above the diagonal and
/// entries between unrelated dofs are not touched: pass a matrix that is zero there (a new
/// `DMatrix::zeros`, or one this function filled before for the same model); [`fill_upper`]
/// mirrors the result when the whole matrix is wanted. Clearing a dense n x n matrix on every
/// call would cost O(n^2), more than the algorithm itself on a large branched tree.
///
/// Table 6.2 carries body i's `F` up to the root before it starts on body i - 1. Here the loops
/// are interchanged: the columns of `F` of all of body i's subtree (`model.subtree_dofs()[i]`)
/// are kept in `ws.f_cols`, in body i's coordinates, and move up one level together when body i
/// is done. Every column still meets the same transforms and the same `S_j`, so the arithmetic
/// is the same; the columns are independent of each other, which lets the processor overlap
/// their transforms instead of waiting on one chain of dependent products per column. The
/// subtree's dofs are walked as a range where they are consecutive (`ws.subtree_span`), which
/// leaves the arithmetic as it is and spares a chain of 1,023 bodies reading 4 MB of index lists
/// per call.
pub fn crba_with(model: &Model, ws: &mut Workspace, q: &[f64], h: &mut DMatrix<f64>) {
    crate::sparse::with_avx(
        #[inline(always)]
        || crba_body(model, ws, q, h),
    )
}

/// The body of [`crba_with`], compiled for AVX where the processor has it (see
/// `sparse::with_avx`).
#[inline(always)]
fn crba_body(model: &Model, ws: &mut Workspace, q: &[f64], h: &mut DMatrix<f64>) {
    for i in 1..=model.nb {
        let x_j = jcalc_pos(&model.joints[i], &q[model.qs(i)], &mut ws.jc[i].s); // X_J and S, no velocity
        ws.x_up[i] = x_j.compose(&model.x_tree[i]);
        ws.ic[i] = model.inertia[i];
    }
    let nv = model.nv;
    let h = h.as_mut_slice(); // column-major: H[(r, c)] is h[c * nv + r]
    for i in (1..=model.nb).rev() {
        // I^c_i is complete: its children have larger numbers and were done already.
        let s = &ws.jc[i].s;
        let subtree = &model.subtree_dofs()[i]; // i's own dofs first, then its descendants'
        let span = ws.subtree_span[i].clone(); // the same dofs as a range, when consecutive
        let mut axes = [None; 6]; // which columns of S are rotations about a coordinate axis
        for (k, dof) in model.dofs(i).enumerate() {
            axes[k] = coordinate_axis(&s.cols[k]);
            ws.f_cols[dof] = match axes[k] {
                Some(a) => inertia_axis_column(&ws.ic[i], a),
                None if s.cols[k].w == Vec3::zeros() => inertia_linear_column(&ws.ic[i], &s.cols[k].v),
                None => ws.ic[i].mul_motion(&s.cols[k]), // F = I^c_i S_i
            };
        }
        for (l, dof) in model.dofs(i).enumerate() {
            // column `dof` of H, rows `dof` and below: S_i^T F for this dof and the later ones
            // (table 6.2's H_ji = H_ij^T)
            let h_col = &mut h[dof * nv..(dof + 1) * nv];
            let (rows, rows_span) = (&subtree[l..], span.clone().map(|r| r.start + l..r.end));
            let f_cols = &ws.f_cols;
            match axes[l] {
                // a rotation about coordinate axis k: S^T F is F's k-th moment component
                Some(k) => for_each_dof(rows, rows_span, |r| h_col[r] = f_cols[r].n[k]),
                None if s.cols[l].w == Vec3::zeros() => {
                    let c = s.cols[l].v;
                    for_each_dof(rows, rows_span, |r| h_col[r] = c.dot(&f_cols[r].f));
                }
                None => {
                    let s_l = s.cols[l];
                    for_each_dof(rows, rows_span, |r| h_col[r] = s_l.dot(&f_cols[r]));
                }
            }
            h_col[dof] += model.joints[i].armature;
        }
        let p = model.lambda[i];
        if p != 0 {
            let x = ws.x_up[i];
            let back = ws.ic[i].transform_back(&x);
            ws.ic[p] += back;
            let f_cols = &mut ws.f_cols;
            for_each_dof(subtree, span, |r| f_cols[r] = x.inv_apply_force(&f_cols[r]));
            // F = lambda_X_i* F
        }
    }
}

/// `f(r)` for every dof r of `dofs`, in order; `span`, when given, is the same dofs as a range
/// (`Workspace::subtree_span`), walked without reading the list.
#[inline(always)]
fn for_each_dof(dofs: &[usize], span: Option<std::ops::Range<usize>>, mut f: impl FnMut(usize)) {
    debug_assert!(span.as_ref().is_none_or(|r| r.clone().eq(dofs.iter().copied())));
    match span {
        Some(range) => range.for_each(f),
        None => dofs.iter().for_each(|&r| f(r)),
    }
}

/// `I S` for `S = [0; c]`, a pure translation (the free joint's first three dofs, a prismatic
/// joint): `[h x c; m c]`, eq. (2.63) without the terms of the zero rotation.
#[inline(always)]
fn inertia_linear_column(ic: &SpatialInertia, c: &Vec3) -> Force {
    Force {
        n: ic.h.cross(c),
        f: c * ic.m,
    }
}

/// `I S` for `S = [e_a; 0]`, the rotation about coordinate axis `a`: column `a` of the 6x6
/// matrix of eq. (2.63), `[Ibar e_a; e_a x h]`, read off instead of multiplied.
#[inline(always)]
fn inertia_axis_column(ic: &SpatialInertia, a: usize) -> Force {
    let h = &ic.h;
    let f = match a {
        0 => Vec3::new(0.0, -h.z, h.y), // e_x x h
        1 => Vec3::new(h.z, 0.0, -h.x), // e_y x h
        _ => Vec3::new(-h.y, h.x, 0.0), // e_z x h
    };
    Force {
        n: ic.ibar.column(a).into(),
        f,
    }
}
// ANCHOR_END: crba
