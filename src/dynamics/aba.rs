//! The articulated-body algorithm (Featherstone 7.3, table 7.1).

use super::{axis_dot, base_acceleration, check_fext, coordinate_axis, Workspace};
use crate::error::{check_vector, Error, Result};
use crate::model::{jcalc_into, Model};
use crate::spatial::{sym_congruence, sym_from_upper, Force, Mat3, Mat6, Motion, SpatialInertia, Vec3, Xform};
use crate::vector::AsVector;
use nalgebra::DVector;

/// Forward dynamics `qdd = FD(q, qdot, tau, f_ext)` by ABA (Featherstone table 7.1), with
/// armature added to each `D_i` (so the result solves `(H + diag(armature)) qdd = tau - C`).
///
/// Fails with [`Error::NotPositiveDefinite`] naming the dof if some `D_i` is not positive
/// definite (for example a massless body at the end of a chain). Book chapter: "The
/// articulated-body algorithm" (`book/src/aba.md`); MuJoCo's `qacc_smooth` (which MuJoCo computes
/// by factoring `M` instead), Pinocchio's `aba`.
///
/// ```
/// use mbd::dynamics::{aba, rnea};
/// use mbd::model::canned;
///
/// let model = canned::floating_base_ball_arms();
/// let q = model.qpos0.clone();
/// let qd = vec![0.1; model.nv];
/// let tau = vec![0.5; model.nv];
/// let qdd = aba(&model, &q, &qd, &tau, None)?;
/// // forward dynamics inverts inverse dynamics
/// let back = rnea(&model, &q, &qd, &qdd, None)?;
/// assert!((back - nalgebra::DVector::from_vec(tau)).amax() < 1e-10);
/// # Ok::<(), mbd::Error>(())
/// ```
#[doc(alias = "forward dynamics")]
#[doc(alias = "FD")]
#[doc(alias = "qacc_smooth")]
pub fn aba(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
    tau: &(impl AsVector + ?Sized),
    f_ext: Option<&[Force]>,
) -> Result<DVector<f64>> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    let tau = tau.as_vector();
    model.check_state(q, qd)?;
    check_vector("tau", tau, model.nv)?;
    check_fext(model, f_ext)?;
    let mut ws = Workspace::new(model);
    let mut qdd = DVector::zeros(model.nv);
    aba_with(model, &mut ws, q, qd, tau, f_ext, qdd.as_mut_slice())?;
    crate::error::check_output("qdd", qdd.as_slice())?;
    Ok(qdd)
}

// ANCHOR: sym_blocks
/// A symmetric spatial matrix `[A, B; B^T, D]` (an articulated-body inertia) as its three 3x3
/// blocks, `A` and `D` symmetric: what ABA's second pass works on between reading `I^A_i` and
/// adding the child's share into its parent's.
#[derive(Clone, Copy, Debug)]
struct SymBlocks {
    a: Mat3,
    b: Mat3,
    d: Mat3,
}

impl SymBlocks {
    /// The blocks of a symmetric 6x6 (its lower-left block is not read).
    #[inline(always)]
    fn of(m: &Mat6) -> SymBlocks {
        let block = |r: usize, c: usize| {
            let e = |i: usize, j: usize| m[(r + i, c + j)];
            Mat3::new(
                e(0, 0),
                e(0, 1),
                e(0, 2),
                e(1, 0),
                e(1, 1),
                e(1, 2),
                e(2, 0),
                e(2, 1),
                e(2, 2),
            )
        };
        SymBlocks {
            a: block(0, 0),
            b: block(0, 3),
            d: block(3, 3),
        }
    }

    /// `M v` for a motion `v = (w, v)`: the force `(A w + B v, B^T w + D v)`.
    #[inline(always)]
    fn mul_motion(&self, v: &Motion) -> Force {
        Force {
            n: self.a * v.w + self.b * v.v,
            f: self.b.tr_mul(&v.w) + self.d * v.v,
        }
    }

    /// `M -= w u^T` for two forces whose sum of such terms keeps M symmetric (ABA's
    /// `U_i D_i^-1 U_i^T` as rank-one terms): three 3x3 outer products.
    #[inline(always)]
    fn sub_outer(&mut self, w: &Force, u: &Force) {
        self.a -= w.n * u.n.transpose();
        self.b -= w.n * u.f.transpose();
        self.d -= w.f * u.f.transpose();
    }

    /// `X^T M X` for `X = x = rot(E) xlt(r)` (Featherstone eq. 2.66 read backwards), in two steps
    /// on the blocks. Rotating, `R^T M R` with `R = diag(E, E)`, turns every block `K` into
    /// `E^T K E` (the symmetric A and D need only their upper triangles). Moving the origin,
    /// `L^T M L` with `L = [1, 0; -[r]x, 1]`, then gives, with `P = B [r]x` and `W = D [r]x`,
    /// `A <- A - P - P^T - [r]x W`, `B <- B - W^T` and `D` unchanged.
    #[inline(always)]
    fn transform_back(&self, x: &Xform) -> SymBlocks {
        let e = &x.e;
        let (a, d) = (sym_congruence(e, &self.a), sym_congruence(e, &self.d));
        let b = e.tr_mul(&(self.b * e));
        let r = &x.r;
        let p = mul_skew(&b, r);
        let w = mul_skew(&d, r);
        // [r]x W is symmetric (W = D [r]x with D symmetric): its upper triangle, entry (i, j)
        // being row i of [r]x times column j of W, i.e. (r x W[:, j])_i
        let rw = |i: usize, j: usize| {
            let (c, (i1, i2)) = (w.column(j), ((i + 1) % 3, (i + 2) % 3));
            r[i1] * c[i2] - r[i2] * c[i1]
        };
        let upper = |i: usize, j: usize| a[(i, j)] - p[(i, j)] - p[(j, i)] - rw(i, j);
        SymBlocks {
            a: sym_from_upper([
                upper(0, 0),
                upper(1, 1),
                upper(2, 2),
                upper(0, 1),
                upper(0, 2),
                upper(1, 2),
            ]),
            b: b - w.transpose(),
            d,
        }
    }

    /// `m += [A, B; B^T, D]`.
    #[inline(always)]
    fn add_to(&self, m: &mut Mat6) {
        for j in 0..3 {
            for i in 0..3 {
                m[(i, j)] += self.a[(i, j)];
                m[(i, j + 3)] += self.b[(i, j)];
                m[(i + 3, j)] += self.b[(j, i)];
                m[(i + 3, j + 3)] += self.d[(i, j)];
            }
        }
    }
}

// ANCHOR_END: sym_blocks

/// `I` as its explicit 6x6 `[Ibar, [h]x; [h]x^T, m 1]`, written in place (ABA's `I^A_i = I_i`).
#[inline(always)]
fn set_rigid(out: &mut Mat6, inertia: &SpatialInertia) {
    let (h, m) = (&inertia.h, inertia.m);
    let hx = Mat3::new(0.0, -h.z, h.y, h.z, 0.0, -h.x, -h.y, h.x, 0.0);
    for j in 0..3 {
        for i in 0..3 {
            out[(i, j)] = inertia.ibar[(i, j)];
            out[(i, j + 3)] = hx[(i, j)];
            out[(i + 3, j)] = hx[(j, i)];
            out[(i + 3, j + 3)] = if i == j { m } else { 0.0 };
        }
    }
}

/// `M [r]x`, column by column: column j of `[r]x` is `r x e_j`, so column j of the product
/// mixes two columns of M (18 multiplications instead of a 3x3 product's 27).
#[inline(always)]
fn mul_skew(m: &Mat3, r: &Vec3) -> Mat3 {
    let (c0, c1, c2) = (m.column(0), m.column(1), m.column(2));
    Mat3::from_columns(&[c1 * r.z - c2 * r.y, c2 * r.x - c0 * r.z, c0 * r.y - c1 * r.x])
}

#[inline]
fn mat6_mul_motion(m: &Mat6, v: &Motion) -> Force {
    Force::from_vec6(&(m * v.to_vec6()))
}

/// Column `k` of `U D^-1` for the n columns of `U` and the n x n block of `D^-1`.
///
/// ABA's `U D^-1 U^T` is then a sum of n rank-one terms `(U D^-1)[:, k] U[:, k]^T` (36 n
/// multiplications) instead of the n^2 terms `U_k D^-1_kl U_l^T`.
#[inline]
fn u_dinv_column(u: &[Force; 6], d_inv: &Mat6, n: usize, k: usize) -> Force {
    let mut w = Force::zero();
    for (l, u_l) in u.iter().enumerate().take(n) {
        w += *u_l * d_inv[(l, k)];
    }
    w
}

/// The inverse of the symmetric n x n block `d` (n <= 6, top-left of a 6x6; the rest of the
/// result is zero), by Cholesky `D = L L^T`, `M = L^-1`, `D^-1 = M^T M`, on plain loops: ABA
/// inverts one such block per joint and n is tiny (a single division for one-dof joints), so
/// a general decomposition of the whole 6x6 would be mostly wasted work.
///
/// Fails with the index and value of the first pivot that is not positive (D not positive
/// definite).
fn spd_inverse(d: &Mat6, n: usize) -> std::result::Result<Mat6, (usize, f64)> {
    let mut out = Mat6::zeros();
    if n == 1 {
        if !(d[(0, 0)] > 0.0) {
            return Err((0, d[(0, 0)]));
        }
        out[(0, 0)] = 1.0 / d[(0, 0)];
        return Ok(out);
    }
    let mut l = Mat6::zeros();
    for j in 0..n {
        let mut pivot = d[(j, j)];
        for k in 0..j {
            pivot -= l[(j, k)] * l[(j, k)];
        }
        if !(pivot > 0.0) {
            return Err((j, pivot));
        }
        l[(j, j)] = pivot.sqrt();
        for i in j + 1..n {
            let mut x = d[(i, j)];
            for k in 0..j {
                x -= l[(i, k)] * l[(j, k)];
            }
            l[(i, j)] = x / l[(j, j)];
        }
    }
    let mut m = Mat6::zeros(); // L^-1, lower triangular, by forward substitution
    for j in 0..n {
        m[(j, j)] = 1.0 / l[(j, j)];
        for i in j + 1..n {
            let mut x = 0.0;
            for k in j..i {
                x -= l[(i, k)] * m[(k, j)];
            }
            m[(i, j)] = x / l[(i, i)];
        }
    }
    for i in 0..n {
        for j in 0..=i {
            let mut x = 0.0;
            for k in i..n {
                x += m[(k, i)] * m[(k, j)];
            }
            out[(i, j)] = x;
            out[(j, i)] = x;
        }
    }
    Ok(out)
}

// ANCHOR: aba
/// ABA on pre-allocated storage (Featherstone table 7.1, eqs. (7.38)-(7.43) for multi-dof
/// joints):
/// - pass 1 (root to leaves): `v_i`, `c_i = c_J + v_i x v_J`, `I^A_i = I_i`,
///   `p^A_i = v_i x* I_i v_i - iX_0* f^x_i`;
/// - pass 2 (leaves to root): `U_i = I^A_i S_i`, `D_i = S_i^T U_i`, `u_i = tau_i - S_i^T p^A_i`,
///   `I^a = I^A_i - U_i D_i^-1 U_i^T`, `p^a = p^A_i + I^a c_i + U_i D_i^-1 u_i`, and the parent
///   accumulates `lambda_X_i* I^a i_X_lambda` and `lambda_X_i* p^a`;
/// - pass 3 (root to leaves): `a' = iX_lambda a_lambda + c_i`, `qdd_i = D_i^-1 (u_i - U_i^T a')`,
///   `a_i = a' + S_i qdd_i`.
pub fn aba_with(
    model: &Model,
    ws: &mut Workspace,
    q: &[f64],
    qd: &[f64],
    tau: &[f64],
    f_ext: Option<&[Force]>,
    qdd: &mut [f64],
) -> Result<()> {
    crate::sparse::with_avx(
        #[inline(always)]
        || aba_passes(model, ws, q, qd, tau, f_ext, qdd),
    )
}

/// The three passes of [`aba_with`], compiled for AVX where the processor has it (see
/// `sparse::with_avx`).
#[inline(always)]
fn aba_passes(
    model: &Model,
    ws: &mut Workspace,
    q: &[f64],
    qd: &[f64],
    tau: &[f64],
    f_ext: Option<&[Force]>,
    qdd: &mut [f64],
) -> Result<()> {
    for i in 1..=model.nb {
        jcalc_into(&model.joints[i], &q[model.qs(i)], &qd[model.dofs(i)], &mut ws.jc[i]);
        let jc = &ws.jc[i];
        let p = model.lambda[i];
        ws.x_up[i] = jc.x_j.compose(&model.x_tree[i]);
        let v_p = if p == 0 { Motion::zero() } else { ws.v[p] };
        let v = ws.x_up[i].apply_motion(&v_p) + jc.v_j;
        ws.v[i] = v;
        ws.c[i] = jc.c_j + v.cross_motion(&jc.v_j);
        let inertia = &model.inertia[i];
        set_rigid(&mut ws.ia[i], inertia);
        ws.f[i] = v.cross_force(&inertia.mul_motion(&v));
        if let Some(fx) = f_ext {
            ws.x_0[i] = if p == 0 {
                ws.x_up[i]
            } else {
                ws.x_up[i].compose(&ws.x_0[p])
            };
            ws.f[i] -= ws.x_0[i].apply_force(&fx[i]);
        }
    }
    for i in (1..=model.nb).rev() {
        let s = &ws.jc[i].s;
        let n = s.n;
        let di = model.v_adr[i];
        // U = I^A S, D = S^T U (+ armature), u = tau - S^T p^A. A column of S that is a
        // coordinate axis e_a (a hinge about x, y or z) picks column a of I^A and the a-th
        // moment of a force: no products.
        let mut axes = [None; 6];
        let mut d = Mat6::zeros();
        for k in 0..n {
            axes[k] = coordinate_axis(&s.cols[k]);
            ws.u_cols[i][k] = match axes[k] {
                Some(a) => Force::from_vec6(&ws.ia[i].column(a).into_owned()),
                None => mat6_mul_motion(&ws.ia[i], &s.cols[k]),
            };
        }
        for k in 0..n {
            for l in 0..n {
                d[(k, l)] = axis_dot(axes[k], &s.cols[k], &ws.u_cols[i][l]);
            }
            d[(k, k)] += model.joints[i].armature;
            ws.u[i][k] = tau[di + k] - axis_dot(axes[k], &s.cols[k], &ws.f[i]);
        }
        let bad = |(k, pivot)| Error::NotPositiveDefinite {
            what: format!("ABA D_i of body '{}'", model.body_name[i]),
            dof: di + k,
            value: pivot,
        };
        if n == 1 {
            // one dof: D_i is a number, and D_i^-1 one division
            if !(d[(0, 0)] > 0.0) {
                return Err(bad((0, d[(0, 0)])));
            }
            ws.d_inv[i][(0, 0)] = 1.0 / d[(0, 0)];
        } else {
            ws.d_inv[i] = spd_inverse(&d, n).map_err(bad)?;
        }
        let p = model.lambda[i];
        if p != 0 {
            // I^a = I^A - U D^-1 U^T ;  p^a = p^A + I^a c + U D^-1 u, on the blocks of I^A
            let mut ia = SymBlocks::of(&ws.ia[i]);
            let mut pa = ws.f[i];
            for k in 0..n {
                let w_k = u_dinv_column(&ws.u_cols[i], &ws.d_inv[i], n, k); // (U D^-1)[:, k]
                ia.sub_outer(&w_k, &ws.u_cols[i][k]);
                pa += w_k * ws.u[i][k];
            }
            pa += ia.mul_motion(&ws.c[i]);
            // the parent's I^A += lambda_X_i* I^a i_X_lambda, its p^A += lambda_X_i* p^a
            ia.transform_back(&ws.x_up[i]).add_to(&mut ws.ia[p]);
            let pa_p = ws.x_up[i].inv_apply_force(&pa);
            ws.f[p] += pa_p;
        }
    }
    let a0 = base_acceleration(model);
    for i in 1..=model.nb {
        let p = model.lambda[i];
        let a_p = if p == 0 { a0 } else { ws.a[p] };
        let a_prime = ws.x_up[i].apply_motion(&a_p) + ws.c[i];
        let s = &ws.jc[i].s;
        let n = s.n;
        let di = model.v_adr[i];
        let mut rhs = [0.0; 6];
        for k in 0..n {
            rhs[k] = ws.u[i][k] - a_prime.dot(&ws.u_cols[i][k]);
        }
        let mut a = a_prime;
        for k in 0..n {
            let mut x = 0.0;
            for l in 0..n {
                x += ws.d_inv[i][(k, l)] * rhs[l];
            }
            qdd[di + k] = x;
            a += s.cols[k] * x;
        }
        ws.a[i] = a;
    }
    Ok(())
}
// ANCHOR_END: aba

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::{rotx, roty, xlt, SpatialInertia, Vec3};
    use approx::assert_relative_eq;

    #[test]
    fn small_spd_inverse_matches_nalgebra() {
        // D = A A^T + 0.5 1 for a fixed non-symmetric A: symmetric positive definite.
        let a = Mat6::from_fn(|i, j| ((i * 7 + j * 3) % 5) as f64 * 0.3 - 0.4 + if i == j { 1.0 } else { 0.0 });
        for n in 1..=6 {
            let full = a * a.transpose() + Mat6::identity() * 0.5;
            let block = nalgebra::DMatrix::from_fn(n, n, |i, j| full[(i, j)]);
            let reference = block.clone().try_inverse().unwrap();
            let mine = spd_inverse(&full, n).unwrap();
            for i in 0..6 {
                for j in 0..6 {
                    let expected = if i < n && j < n { reference[(i, j)] } else { 0.0 };
                    assert_relative_eq!(mine[(i, j)], expected, epsilon = 1e-12);
                }
            }
        }
        // An indefinite block is reported at its first bad pivot.
        let mut bad = Mat6::identity();
        bad[(1, 1)] = -2.0;
        assert_eq!(spd_inverse(&bad, 3).unwrap_err(), (1, -2.0));
    }

    /// `X^T M X` by [`SymBlocks::transform_back`], as a 6x6.
    fn transform_back_mat6(x: &Xform, m: &Mat6) -> Mat6 {
        let mut out = Mat6::zeros();
        SymBlocks::of(m).transform_back(x).add_to(&mut out);
        out
    }

    #[test]
    fn blockwise_transform_matches_6x6_products() {
        let x = rotx(0.3) * xlt(Vec3::new(0.2, -0.4, 0.9)) * roty(1.2);
        let i = SpatialInertia::from_mass_com_inertia(1.5, Vec3::new(0.1, 0.2, -0.3), Mat3::identity() * 0.2);
        let m = i.to_matrix() + Mat6::identity() * 0.1;
        let xm = x.to_motion_matrix();
        assert_relative_eq!(transform_back_mat6(&x, &m), xm.transpose() * m * xm, epsilon = 1e-12);
    }
}
