//! The composite-rigid-body algorithm (Featherstone 6.2, table 6.2).

use super::{coordinate_axis, rnea_with, Workspace};
use crate::error::Result;
use crate::model::{jcalc_pos, Model, Subspace};
use crate::spatial::{Force, Mat3, SpatialInertia, Vec3, Xform};
use crate::vector::AsVector;
use nalgebra::{DMatrix, DVector};
use std::ops::Range;

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
/// is done. Every column still meets the same transforms and the same `S_j`; the columns are
/// independent of each other, which lets the processor overlap their transforms instead of
/// waiting on one chain of dependent products per column. So at body i, row r of H in i's
/// columns is `S_i^T F_r` for every dof r of i's subtree, filled in one pass over the subtree
/// (`fill_block_and_rows`). The subtree's dofs are walked as a range where they are
/// consecutive (`ws.subtree_span`), which spares a chain of 1,023 bodies reading 4 MB of index
/// lists per call.
///
/// `S_i^T F` and `F = I^c_i S_i` take the joint's [`SubspaceShape`] (found once per model, in
/// `ws.shapes`): a coordinate axis reads one component, a ball joint three, a translation
/// takes a 3-term dot product, and the free joint's own 6x6 block is read off `I^c_i`
/// (`free_joint_block`); other joints take the general products. The numbers agree with the
/// plain table 6.2 to a few units of rounding (a unit test holds them to 1e-14 of the largest
/// entry).
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
        let x_t = &model.x_tree[i];
        ws.x_up[i] = match ws.tree_translation[i] {
            true => Xform::new(x_j.e, x_t.r + x_j.r), // X_J xlt(r): no rotation to multiply by
            false => x_j.compose(x_t),
        };
        ws.ic[i] = model.inertia[i];
    }
    let nv = model.nv;
    let h = h.as_mut_slice(); // column-major: H[(r, c)] is h[c * nv + r]
    let f_cols = &mut ws.f_cols[..];
    for i in (1..=model.nb).rev() {
        // I^c_i is complete: its children have larger numbers and were done already.
        let (s, ic, shape, p) = (&ws.jc[i].s, &ws.ic[i], ws.shapes[i], model.lambda[i]);
        let d0 = model.v_adr[i]; // i's dofs are d0, d0 + 1, ...
        if shape != SubspaceShape::Free || p != 0 {
            for k in 0..s.n {
                f_cols[d0 + k] = shape.inertia_column(ic, s, k); // F = I^c_i S_i
            }
        }
        // Rows of H in i's columns: S_i^T F_r for every dof r of i's subtree, i's own dofs first
        // (H_ii, its lower triangle), then its descendants' (table 6.2's H_ji = H_ij^T).
        let (subtree, span) = (&model.subtree_dofs()[i][..], ws.subtree_span[i].clone());
        let below = |l: usize| (&subtree[l..], span.clone().map(|r| r.start + l..r.end)); // from dof d0 + l on
        match shape {
            SubspaceShape::Axis(k) => fill_block_and_rows(h, nv, d0, below(1), f_cols, |f| [f.n[k]]),
            SubspaceShape::Translation => {
                let c = s.cols[0].v;
                fill_block_and_rows(h, nv, d0, below(1), f_cols, |f| [c.dot(&f.f)]);
            }
            SubspaceShape::Ball => fill_block_and_rows(h, nv, d0, below(3), f_cols, |f| [f.n.x, f.n.y, f.n.z]),
            SubspaceShape::Free => {
                let e = Mat3::from_columns(&[s.cols[0].v, s.cols[1].v, s.cols[2].v]);
                free_joint_block(h, nv, d0, ic, s); // H_ii read off I^c_i and E
                fill_rows(h, nv, d0, below(6), f_cols, |f| {
                    let lin = e.tr_mul(&f.f);
                    [lin.x, lin.y, lin.z, f.n.x, f.n.y, f.n.z]
                });
            }
            SubspaceShape::General => {
                // column by column: column d0 + l takes rows from dof d0 + l on
                for (l, s_l) in s.cols[..s.n].iter().enumerate() {
                    fill_block_and_rows(h, nv, d0 + l, below(l + 1), f_cols, |f| [s_l.dot(f)]);
                }
            }
        }
        let armature = model.joints[i].armature;
        for dof in d0..d0 + s.n {
            h[dof * (nv + 1)] += armature; // the diagonal entry (dof, dof)
        }
        if p != 0 {
            let x = ws.x_up[i];
            let back = ws.ic[i].transform_back(&x);
            ws.ic[p] += back;
            for_each_dof_mut(below(0), f_cols, |f| *f = x.inv_apply_force(f)); // F = lambda_X_i* F
        }
    }
}

// ANCHOR_END: crba

// ANCHOR: crba_rows
/// The lower triangle of the block `H_ii` of body i's `N` dofs `d0..d0 + N`, entry
/// `(d0 + a, d0 + b) = S_b^T F_a` for `b <= a` (`st(F) = S_i^T F`), then [`fill_rows`] for
/// the dofs of `below`.
#[inline(always)]
fn fill_block_and_rows<const N: usize>(
    h: &mut [f64],
    nv: usize,
    d0: usize,
    below: (&[usize], Option<Range<usize>>),
    f_cols: &[Force],
    st: impl Fn(&Force) -> [f64; N],
) {
    for a in 0..N {
        let v = st(&f_cols[d0 + a]);
        for (b, x) in v.into_iter().enumerate().take(a + 1) {
            h[(d0 + b) * nv + d0 + a] = x;
        }
    }
    fill_rows(h, nv, d0, below, f_cols, st);
}

/// For every dof r of `below` (a list, with the same dofs as a range when they are
/// consecutive), row r of H in body i's `N` columns `d0..d0 + N`: the numbers
/// `st(F_r) = S_i^T F_r`.
#[inline(always)]
fn fill_rows<const N: usize>(
    h: &mut [f64],
    nv: usize,
    d0: usize,
    (list, span): (&[usize], Option<Range<usize>>),
    f_cols: &[Force],
    st: impl Fn(&Force) -> [f64; N],
) {
    debug_assert!(span.as_ref().is_none_or(|r| r.clone().eq(list.iter().copied())));
    let block = &mut h[d0 * nv..(d0 + N) * nv]; // i's N columns of H
    match span {
        Some(range) => {
            // the rows `range` of each column, as slices of equal length
            let mut cols = block.chunks_exact_mut(nv).map(|c| &mut c[range.clone()]);
            let mut cols: [&mut [f64]; N] = std::array::from_fn(|_| cols.next().expect("N columns"));
            for (j, f) in f_cols[range].iter().enumerate() {
                for (c, x) in cols.iter_mut().zip(st(f)) {
                    c[j] = x;
                }
            }
        }
        None => {
            for &r in list {
                for (k, x) in st(&f_cols[r]).into_iter().enumerate() {
                    block[k * nv + r] = x;
                }
            }
        }
    }
}

/// `f(&mut cols[r])` for every dof r of `dofs.0`, in order; `dofs.1`, when given, is the same
/// dofs as a range (`Workspace::subtree_span`), walked as a slice without reading the list.
#[inline(always)]
fn for_each_dof_mut<B>((list, span): (&[usize], Option<Range<usize>>), cols: &mut [B], mut f: impl FnMut(&mut B)) {
    debug_assert!(span.as_ref().is_none_or(|r| r.clone().eq(list.iter().copied())));
    match span {
        Some(range) => cols[range].iter_mut().for_each(f),
        None => list.iter().for_each(|&r| f(&mut cols[r])),
    }
}

// ANCHOR_END: crba_rows

// ANCHOR: crba_shapes
/// The form of a joint's motion subspace `S`, which decides how CRBA forms `F = I^c S` and
/// `S^T F`. It depends on the joint alone, never on `q`: the angular parts of `jcalc`'s columns
/// are constant, and so are the linear parts of its rotation columns (only the directions of the
/// free and planar joints' translations turn with q). So [`Workspace::new`] finds it once per
/// body ([`SubspaceShape::of`]) instead of every call testing the columns again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubspaceShape {
    /// One unit rotation about coordinate axis k, `S = [e_k; 0]`: Featherstone's `Rx`, `Ry`,
    /// `Rz` (table 4.1) without an anchor offset. `I S` is column k of the 6x6 inertia and
    /// `S^T f` is `f.n[k]`.
    Axis(usize),
    /// One pure translation `S = [0; c]` (a prismatic joint): `I S = [h x c; m c]`,
    /// `S^T f = c . f.f`.
    Translation,
    /// A ball joint, `S = [1; 0]`, the three coordinate axes as rotations: `S^T f = f.n`.
    Ball,
    /// A free joint in MuJoCo's coordinates (world-frame linear velocity, body-frame angular
    /// velocity), `S = [0, 1; E, 0]` with `E` the rotation part of `X_J`: translations along
    /// E's columns, then rotations about the body axes. `S^T f = [E^T f.f; f.n]`.
    Free,
    /// Anything else: the general products, column by column.
    General,
}

impl SubspaceShape {
    /// The shape of `s`.
    pub fn of(s: &Subspace) -> Self {
        let axes: [Option<usize>; 6] = std::array::from_fn(|k| coordinate_axis(&s.cols[k]));
        let translation = |k: usize| s.cols[k].w == Vec3::zeros();
        match (s.n, &axes[..s.n]) {
            (1, [Some(k)]) => SubspaceShape::Axis(*k),
            (1, _) if translation(0) => SubspaceShape::Translation,
            (3, [Some(0), Some(1), Some(2)]) => SubspaceShape::Ball,
            (6, [None, None, None, Some(0), Some(1), Some(2)]) if (0..3).all(translation) => SubspaceShape::Free,
            _ => SubspaceShape::General,
        }
    }
    /// Of every body of `model` (entry 0, the base, is `General`), read off S at each joint's
    /// neutral configuration (any configuration gives the same shapes).
    pub fn of_model(model: &Model) -> Vec<Self> {
        let mut s = Subspace::default();
        let mut shapes = vec![SubspaceShape::General; model.nb + 1];
        for i in 1..=model.nb {
            jcalc_pos(&model.joints[i], &model.joints[i].jtype.neutral(), &mut s);
            shapes[i] = SubspaceShape::of(&s);
        }
        shapes
    }
    /// Column k of `F = I S` for the subspace `s` of this shape.
    #[inline(always)]
    fn inertia_column(self, ic: &SpatialInertia, s: &Subspace, k: usize) -> Force {
        match self {
            SubspaceShape::Axis(a) => inertia_axis_column(ic, a),
            SubspaceShape::Ball => inertia_axis_column(ic, k),
            SubspaceShape::Free if k >= 3 => inertia_axis_column(ic, k - 3),
            SubspaceShape::Translation | SubspaceShape::Free => inertia_linear_column(ic, &s.cols[k].v),
            SubspaceShape::General => ic.mul_motion(&s.cols[k]),
        }
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

/// The free joint's own block `H_ii = S^T I^c S` (lower triangle), for `S = [0, 1; E, 0]`
/// (translations along E's columns `c_k`, then rotations about the body axes) and
/// `I^c = [Ibar, [h]x; [h]x^T, m 1]`: `[m 1, ([h]x E)^T; [h]x E, Ibar]`, read off the ten
/// numbers of the inertia instead of forming F. The translation block is `m c_a . c_b = m`
/// on the diagonal and 0 elsewhere because E is a rotation; the coupling entry `(3 + j, k)` is
/// `(h x c_k)_j`.
#[inline(always)]
fn free_joint_block(h: &mut [f64], nv: usize, d0: usize, ic: &SpatialInertia, s: &Subspace) {
    let mut at = |r: usize, c: usize, x: f64| h[(d0 + c) * nv + d0 + r] = x;
    for k in 0..3 {
        let hc = ic.h.cross(&s.cols[k].v); // c_k = s.cols[k].v
        for a in k..3 {
            at(a, k, if a == k { ic.m } else { 0.0 });
        }
        for j in 0..3 {
            at(3 + j, k, hc[j]);
        }
        for j in k..3 {
            at(3 + j, 3 + k, ic.ibar[(j, k)]);
        }
    }
}
// ANCHOR_END: crba_shapes

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{canned, Joint, JointType, ModelBuilder};
    use crate::spatial::{rotx, roty, rotz, xlt, Mat3};

    /// Table 6.2 as the book prints it, with none of `crba_with`'s shortcuts: every column of S
    /// general (`F = I^c S` by the 6x6 product's ten-number form, `S^T F` by six-term dot
    /// products), `X_J X_T` by the full composition, and each column of F carried to the root
    /// on its own.
    fn crba_plain(model: &Model, q: &[f64]) -> DMatrix<f64> {
        let (nb, nv) = (model.nb, model.nv);
        let mut h = DMatrix::zeros(nv, nv);
        let mut s = vec![Subspace::default(); nb + 1];
        let mut x_up = vec![Xform::identity(); nb + 1];
        let mut ic = model.inertia.clone();
        for i in 1..=nb {
            x_up[i] = jcalc_pos(&model.joints[i], &q[model.qs(i)], &mut s[i]).compose(&model.x_tree[i]);
        }
        for i in (1..=nb).rev() {
            let p = model.lambda[i];
            if p != 0 {
                let back = ic[i].transform_back(&x_up[i]);
                ic[p] += back;
            }
            for (k, dk) in model.dofs(i).enumerate() {
                let mut f = ic[i].mul_motion(&s[i].cols[k]);
                for (l, dl) in model.dofs(i).enumerate() {
                    h[(dk, dl)] = s[i].cols[l].dot(&f);
                }
                let mut j = i;
                while model.lambda[j] != 0 {
                    f = x_up[j].inv_apply_force(&f);
                    j = model.lambda[j];
                    for (l, dl) in model.dofs(j).enumerate() {
                        h[(dk, dl)] = s[j].cols[l].dot(&f);
                        h[(dl, dk)] = h[(dk, dl)];
                    }
                }
            }
            for dk in model.dofs(i) {
                h[(dk, dk)] += model.joints[i].armature;
            }
        }
        h
    }

    /// Every joint type and shape, anchors on and off the body origin, trees numbered so that
    /// some subtrees' dofs are not consecutive (body 2's subtree is {2, 4, 6}, body 3 sits
    /// between), two roots, rotated and translated `X_T`.
    fn every_shape() -> Model {
        let mut b = ModelBuilder::new("every shape");
        let body = |k: f64| {
            let ic = Mat3::new(0.3, 0.01, -0.02, 0.01, 0.25, 0.03, -0.02, 0.03, 0.2) * (0.5 + 0.1 * k);
            SpatialInertia::from_mass_com_inertia(1.0 + 0.3 * k, Vec3::new(0.1, -0.05 * k, 0.2), ic)
        };
        let joint = |t: JointType, pos: Vec3| {
            let mut j = Joint::new(t);
            j.pos = pos;
            j.armature = 0.05;
            j
        };
        let z = Vec3::zeros();
        let tilted = Vec3::new(1.0, 0.0, 1.0).normalize();
        let bodies = [
            (0, joint(JointType::Free, z), xlt(z)),
            (
                1,
                joint(JointType::Revolute { axis: Vec3::x() }, z),
                rotz(0.4) * xlt(Vec3::new(0.0, 0.2, 0.1)),
            ),
            (1, joint(JointType::Planar, z), xlt(Vec3::new(0.0, -0.2, 0.1))),
            (
                2,
                joint(JointType::Spherical, Vec3::new(0.0, 0.05, 0.0)),
                xlt(Vec3::new(0.3, 0.0, 0.0)),
            ),
            (3, joint(JointType::Cylindrical { axis: tilted }, z), roty(-0.3)),
            (
                4,
                joint(
                    JointType::Helical {
                        axis: Vec3::y(),
                        pitch: 0.1,
                    },
                    z,
                ),
                xlt(Vec3::new(0.0, 0.0, -0.25)),
            ),
            (
                0,
                joint(JointType::Prismatic { axis: tilted }, z),
                rotx(0.2) * xlt(Vec3::new(1.0, 0.0, 0.0)),
            ),
            (7, joint(JointType::Spherical, z), xlt(Vec3::new(0.0, 0.0, -0.3))),
            (8, joint(JointType::Revolute { axis: Vec3::z() }, z), rotx(-0.7)),
            (
                9,
                joint(JointType::Revolute { axis: Vec3::x() }, Vec3::new(0.0, 0.0, 0.05)),
                xlt(z),
            ),
            (9, joint(JointType::Fixed, z), xlt(Vec3::new(0.1, 0.0, 0.0))),
        ];
        for (k, (parent, j, x_tree)) in bodies.into_iter().enumerate() {
            b.add_body(&format!("b{k}"), parent, j, x_tree, body(k as f64));
        }
        b.build().expect("a valid model")
    }

    /// A configuration away from `qpos0`: every coordinate moved by `sin` of its index.
    fn some_q(model: &Model, t: f64) -> Vec<f64> {
        let mut q = model.qpos0.as_slice().to_vec();
        let dq: Vec<f64> = (0..model.nv).map(|k| (t + 1.7 * k as f64).sin()).collect();
        model.integrate(&mut q, &dq, 1.0).expect("a valid step");
        q
    }

    #[test]
    fn crba_with_equals_plain_table_6_2() {
        let models = [
            every_shape(),
            canned::floating_base_ball_arms(),
            canned::binary_tree(3),
            canned::chain(5, true),
        ];
        for model in &models {
            let mut ws = Workspace::new(model);
            assert!(ws.subtree_span.iter().skip(1).all(Option::is_some) || model.name == "every shape");
            let mut h = DMatrix::zeros(model.nv, model.nv);
            for t in [0.3, -1.1, 2.0] {
                let q = some_q(model, t);
                crba_with(model, &mut ws, &q, &mut h); // reused storage: every entry is rewritten
                fill_upper(model, &mut h);
                let plain = crba_plain(model, &q);
                let scale = plain.amax();
                assert!(
                    (&h - &plain).amax() <= 1e-14 * scale,
                    "{}: {:e}",
                    model.name,
                    (&h - &plain).amax() / scale
                );
            }
        }
        let shapes = &Workspace::new(&models[0]).shapes;
        use SubspaceShape::*;
        let expected = [
            General,
            Free,
            Axis(0),
            General,
            General,
            General,
            General,
            Translation,
            Ball,
            Axis(2),
        ];
        assert_eq!(&shapes[..10], &expected);
        assert!(Workspace::new(&models[0]).subtree_span[2].is_none()); // the list is walked too
    }

    /// The shape of S does not depend on q (what lets `Workspace::new` find it once).
    #[test]
    fn subspace_shapes_do_not_depend_on_q() {
        let model = every_shape();
        let ws = Workspace::new(&model);
        let mut s = Subspace::default();
        for t in [0.3, -1.1, 2.0, 5.0] {
            let q = some_q(&model, t);
            for i in 1..=model.nb {
                jcalc_pos(&model.joints[i], &q[model.qs(i)], &mut s);
                assert_eq!(SubspaceShape::of(&s), ws.shapes[i], "body {i}");
            }
        }
    }
}
