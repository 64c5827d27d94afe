//! Spatial vector algebra (Featherstone, *Rigid Body Dynamics Algorithms*, chapter 2).
//!
//! Book chapter: "Spatial vectors". Motion and force vectors are distinct types so that the
//! compiler refuses to add a velocity to a force or to take the "dot product" of two motions.
//! Both are stored as an angular part and a linear part, in that order ([w; v] and [n; f]),
//! which is also MuJoCo's order.

mod inertia;
mod xform;

pub use inertia::{sym_congruence, sym_from_upper, SpatialInertia};
pub use xform::{rotx, roty, rotz, xlt, Xform};

use crate::error::{Error, Result};
use nalgebra::{Matrix3, Matrix6, UnitQuaternion, Vector3, Vector6};
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// 3-vector of f64 (used for every angular and linear part).
pub type Vec3 = Vector3<f64>;
/// 3x3 matrix of f64.
pub type Mat3 = Matrix3<f64>;
/// Plain 6-vector, for the explicit "teaching" forms.
pub type Vec6 = Vector6<f64>;
/// Plain 6x6 matrix, for the explicit "teaching" forms.
pub type Mat6 = Matrix6<f64>;

/// The skew-symmetric matrix `[a]x` with `[a]x b = a x b` (Featherstone eq. 2.23's 3-D cross).
#[inline]
pub fn skew(a: &Vec3) -> Mat3 {
    Mat3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

// ANCHOR: motion_force
/// A spatial motion vector `m = [w; v]` (Featherstone 2.2): angular velocity `w` and the linear
/// velocity `v` of the body-fixed point at the coordinate frame's origin.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Motion {
    /// Angular part.
    pub w: Vec3,
    /// Linear part (velocity of the point at the origin).
    pub v: Vec3,
}

/// A spatial force vector `f = [n; f]` (Featherstone 2.4): the moment `n` about the origin and
/// the resultant force `f`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Force {
    /// Moment about the origin.
    pub n: Vec3,
    /// Resultant linear force.
    pub f: Vec3,
}
// ANCHOR_END: motion_force

impl Motion {
    /// Builds a motion vector from its angular and linear parts.
    #[inline]
    pub const fn new(w: Vec3, v: Vec3) -> Self {
        Motion { w, v }
    }
    /// The zero motion.
    #[inline]
    pub fn zero() -> Self {
        Motion::default()
    }
    /// From a plain 6-vector `[w; v]`.
    #[inline]
    pub fn from_vec6(x: &Vec6) -> Self {
        Motion {
            w: x.fixed_rows::<3>(0).into(),
            v: x.fixed_rows::<3>(3).into(),
        }
    }
    /// As a plain 6-vector `[w; v]`.
    #[inline]
    pub fn to_vec6(&self) -> Vec6 {
        Vec6::new(self.w.x, self.w.y, self.w.z, self.v.x, self.v.y, self.v.z)
    }
    // ANCHOR: cross
    /// Spatial cross product for motions, `self x m` (Featherstone eq. 2.31):
    /// `[w; v] x [w2; v2] = [w x w2; w x v2 + v x w2]`.
    #[inline]
    pub fn cross_motion(&self, m: &Motion) -> Motion {
        Motion {
            w: self.w.cross(&m.w),
            v: self.w.cross(&m.v) + self.v.cross(&m.w),
        }
    }
    /// Spatial cross product for forces, `self x* f` (Featherstone eq. 2.32):
    /// `[w; v] x* [n; f] = [w x n + v x f; w x f]`.
    #[inline]
    pub fn cross_force(&self, f: &Force) -> Force {
        Force {
            n: self.w.cross(&f.n) + self.v.cross(&f.f),
            f: self.w.cross(&f.f),
        }
    }
    /// The 6x6 matrix `crm(m)` with `crm(m) x = m x x` (Featherstone eq. 2.31).
    pub fn crm(&self) -> Mat6 {
        let mut out = Mat6::zeros();
        let ww = skew(&self.w);
        out.fixed_view_mut::<3, 3>(0, 0).copy_from(&ww);
        out.fixed_view_mut::<3, 3>(3, 0).copy_from(&skew(&self.v));
        out.fixed_view_mut::<3, 3>(3, 3).copy_from(&ww);
        out
    }
    /// The 6x6 matrix `crf(m) = -crm(m)^T` with `crf(m) f = m x* f` (Featherstone eq. 2.32).
    pub fn crf(&self) -> Mat6 {
        -self.crm().transpose()
    }
    /// The scalar product `m . f` (power), Featherstone eq. 2.8.
    #[inline]
    pub fn dot(&self, f: &Force) -> f64 {
        self.w.dot(&f.n) + self.v.dot(&f.f)
    }
    // ANCHOR_END: cross
    /// True if every component is finite.
    pub fn is_finite(&self) -> bool {
        self.w.iter().chain(self.v.iter()).all(|x| x.is_finite())
    }
}

impl Force {
    /// Builds a force vector from its moment and linear parts.
    #[inline]
    pub const fn new(n: Vec3, f: Vec3) -> Self {
        Force { n, f }
    }
    /// The zero force.
    #[inline]
    pub fn zero() -> Self {
        Force::default()
    }
    /// From a plain 6-vector `[n; f]`.
    #[inline]
    pub fn from_vec6(x: &Vec6) -> Self {
        Force {
            n: x.fixed_rows::<3>(0).into(),
            f: x.fixed_rows::<3>(3).into(),
        }
    }
    /// As a plain 6-vector `[n; f]`.
    #[inline]
    pub fn to_vec6(&self) -> Vec6 {
        Vec6::new(self.n.x, self.n.y, self.n.z, self.f.x, self.f.y, self.f.z)
    }
    /// The scalar product `f . m`.
    #[inline]
    pub fn dot(&self, m: &Motion) -> f64 {
        m.dot(self)
    }
}

macro_rules! linear_ops {
    ($t:ident, $a:ident, $b:ident) => {
        impl Add for $t {
            type Output = $t;
            #[inline]
            fn add(self, o: $t) -> $t {
                $t {
                    $a: self.$a + o.$a,
                    $b: self.$b + o.$b,
                }
            }
        }
        impl Sub for $t {
            type Output = $t;
            #[inline]
            fn sub(self, o: $t) -> $t {
                $t {
                    $a: self.$a - o.$a,
                    $b: self.$b - o.$b,
                }
            }
        }
        impl Neg for $t {
            type Output = $t;
            #[inline]
            fn neg(self) -> $t {
                $t {
                    $a: -self.$a,
                    $b: -self.$b,
                }
            }
        }
        impl Mul<f64> for $t {
            type Output = $t;
            #[inline]
            fn mul(self, s: f64) -> $t {
                $t {
                    $a: self.$a * s,
                    $b: self.$b * s,
                }
            }
        }
        impl Mul<$t> for f64 {
            type Output = $t;
            #[inline]
            fn mul(self, m: $t) -> $t {
                m * self
            }
        }
        impl AddAssign for $t {
            #[inline]
            fn add_assign(&mut self, o: $t) {
                self.$a += o.$a;
                self.$b += o.$b;
            }
        }
        impl SubAssign for $t {
            #[inline]
            fn sub_assign(&mut self, o: $t) {
                self.$a -= o.$a;
                self.$b -= o.$b;
            }
        }
    };
}
linear_ops!(Motion, w, v);
linear_ops!(Force, n, f);

/// Rotation matrix of a unit quaternion given as (w, x, y, z) (MuJoCo's order). The columns are
/// the rotated frame's axes in the reference frame. The quaternion is normalized first.
pub fn quat_to_mat(q: &[f64; 4]) -> Mat3 {
    let uq = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]));
    uq.to_rotation_matrix().into_inner()
}

/// Unit quaternion (w, x, y, z) of a rotation matrix, with w >= 0, after checking that `r` is a
/// rotation: finite, `max |R^T R - 1| <= 1e-6` and `det R > 0` ([`Error::InvalidArgument`]
/// naming `r` otherwise). The conversion is [`mat_to_quat_with`].
pub fn mat_to_quat(r: &Mat3) -> Result<[f64; 4]> {
    let bad = |why: String| Error::InvalidArgument {
        what: "r".into(),
        why: format!("not a rotation matrix: {why}"),
    };
    if !r.iter().all(|x| x.is_finite()) {
        return Err(bad("an entry is not finite".into()));
    }
    let off = (r.transpose() * r - Mat3::identity()).amax();
    if !(off <= 1e-6) {
        return Err(bad(format!("max |R^T R - 1| = {off:.3e} > 1e-6")));
    }
    if !(r.determinant() > 0.0) {
        return Err(bad("det R < 0 (a reflection)".into()));
    }
    Ok(mat_to_quat_with(r))
}

/// The kernel of [`mat_to_quat`]: Shepperd's method (what MuJoCo's `mju_mat2Quat` does), a
/// closed form with no iteration. Picks the largest of `4 w^2 = 1 + tr R` and
/// `4 x^2 = 1 + 2 R_xx - tr R` (and likewise y, z), takes its square root, and reads the other
/// three components from sums and differences of off-diagonal pairs; then normalizes and makes
/// `w >= 0`. Inputs are assumed valid (`r` a rotation); otherwise the result is the
/// quaternion of no particular matrix.
pub fn mat_to_quat_with(r: &Mat3) -> [f64; 4] {
    let tr = r[(0, 0)] + r[(1, 1)] + r[(2, 2)];
    let mut q = if tr > 0.0 {
        let s = 2.0 * (1.0 + tr).sqrt(); // 4 w
        [
            0.25 * s,
            (r[(2, 1)] - r[(1, 2)]) / s,
            (r[(0, 2)] - r[(2, 0)]) / s,
            (r[(1, 0)] - r[(0, 1)]) / s,
        ]
    } else if r[(0, 0)] > r[(1, 1)] && r[(0, 0)] > r[(2, 2)] {
        let s = 2.0 * (1.0 + r[(0, 0)] - r[(1, 1)] - r[(2, 2)]).sqrt(); // 4 x
        [
            (r[(2, 1)] - r[(1, 2)]) / s,
            0.25 * s,
            (r[(0, 1)] + r[(1, 0)]) / s,
            (r[(0, 2)] + r[(2, 0)]) / s,
        ]
    } else if r[(1, 1)] > r[(2, 2)] {
        let s = 2.0 * (1.0 - r[(0, 0)] + r[(1, 1)] - r[(2, 2)]).sqrt(); // 4 y
        [
            (r[(0, 2)] - r[(2, 0)]) / s,
            (r[(0, 1)] + r[(1, 0)]) / s,
            0.25 * s,
            (r[(1, 2)] + r[(2, 1)]) / s,
        ]
    } else {
        let s = 2.0 * (1.0 - r[(0, 0)] - r[(1, 1)] + r[(2, 2)]).sqrt(); // 4 z
        [
            (r[(1, 0)] - r[(0, 1)]) / s,
            (r[(0, 2)] + r[(2, 0)]) / s,
            (r[(1, 2)] + r[(2, 1)]) / s,
            0.25 * s,
        ]
    };
    quat_normalize(&mut q);
    if q[0] < 0.0 {
        for x in q.iter_mut() {
            *x = -*x;
        }
    }
    q
}

/// Hamilton product of two quaternions in (w, x, y, z) order.
pub fn quat_mul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// The quaternion (w, x, y, z) of a rotation by `angle` about the unit vector `axis`.
pub fn quat_from_axis_angle(axis: &Vec3, angle: f64) -> [f64; 4] {
    let (s, c) = (0.5 * angle).sin_cos();
    [c, s * axis.x, s * axis.y, s * axis.z]
}

/// Normalizes a quaternion in place; returns false (and leaves it) if its norm is not positive
/// and finite.
pub fn quat_normalize(q: &mut [f64; 4]) -> bool {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if !(n.is_finite() && n > 0.0) {
        return false;
    }
    for x in q.iter_mut() {
        *x /= n;
    }
    true
}

/// Rotation vector (axis times angle, angle in [-pi, pi]) of a unit quaternion (w, x, y, z):
/// the inverse of the exponential map used by [`quat_integrate`].
pub fn quat_to_rotvec(q: &[f64; 4]) -> Vec3 {
    let (mut w, mut v) = (q[0], Vec3::new(q[1], q[2], q[3]));
    if w < 0.0 {
        w = -w;
        v = -v;
    }
    let s = v.norm();
    if s < 1e-15 {
        return 2.0 * v; // small-angle limit: angle ~ 2 s
    }
    let angle = 2.0 * s.atan2(w);
    v * (angle / s)
}

// ANCHOR: quat_integrate
/// Integrates a quaternion with a *local* (body-frame) angular velocity for time `h`:
/// `q <- normalize(q) * exp(h w / 2)` (what MuJoCo's `mj_integratePos` does for ball and free
/// joints).
pub fn quat_integrate(q: &[f64; 4], w: &Vec3, h: f64) -> [f64; 4] {
    let mut qn = *q;
    quat_normalize(&mut qn);
    let theta = h * w.norm();
    if theta == 0.0 {
        return qn;
    }
    let axis = w / w.norm();
    let mut out = quat_mul(&qn, &quat_from_axis_angle(&axis, theta));
    quat_normalize(&mut out);
    out
}
// ANCHOR_END: quat_integrate

/// The local angular displacement taking `q1` to `q2` in unit time: `rotvec(q1^* q2)`
/// (MuJoCo's `mj_differentiatePos` for ball joints, with h = 1).
pub fn quat_difference(q1: &[f64; 4], q2: &[f64; 4]) -> Vec3 {
    let conj = [q1[0], -q1[1], -q1[2], -q1[3]];
    quat_to_rotvec(&quat_mul(&conj, q2))
}

/// Rotation matrix for a rotation by `angle` about the unit vector `axis` (Rodrigues' formula
/// `1 + sin(angle) [a]x + (1 - cos(angle)) [a]x [a]x`, written out entry by entry with
/// `[a]x [a]x = a a^T - 1` so that no 3x3 products are formed: this runs once per revolute joint
/// in every call of the dynamics algorithms). The matrix maps coordinates in the rotated frame to
/// the original frame.
#[inline]
pub fn axis_angle_mat(axis: &Vec3, angle: f64) -> Mat3 {
    let (s, c) = angle.sin_cos();
    let t = 1.0 - c;
    let (x, y, z) = (axis.x, axis.y, axis.z);
    let (txy, txz, tyz) = (t * x * y, t * x * z, t * y * z);
    Mat3::new(
        c + t * x * x,
        txy - s * z,
        txz + s * y,
        txy + s * z,
        c + t * y * y,
        tyz - s * x,
        txz - s * y,
        tyz + s * x,
        c + t * z * z,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn cross_products_match_their_matrices() {
        let m = Motion::new(Vec3::new(0.1, -0.4, 0.7), Vec3::new(1.0, 2.0, -3.0));
        let x = Motion::new(Vec3::new(-0.3, 0.2, 0.9), Vec3::new(0.5, -1.5, 0.25));
        let f = Force::new(Vec3::new(0.3, -0.8, 1.1), Vec3::new(-2.0, 0.4, 0.6));
        assert_relative_eq!(m.cross_motion(&x).to_vec6(), m.crm() * x.to_vec6(), epsilon = 1e-14);
        assert_relative_eq!(m.cross_force(&f).to_vec6(), m.crf() * f.to_vec6(), epsilon = 1e-14);
        // Power is invariant: (m x x) . f = - x . (m x* f)   (Featherstone eq. 2.33)
        assert_relative_eq!(m.cross_motion(&x).dot(&f), -x.dot(&m.cross_force(&f)), epsilon = 1e-13);
    }

    #[test]
    fn rodrigues_entries_match_the_product_form() {
        let axis = Vec3::new(-0.3, 0.8, 0.2).normalize();
        for angle in [-2.5f64, -0.3, 0.0, 0.7, 3.0] {
            let k = skew(&axis);
            let product = Mat3::identity() + k * angle.sin() + k * k * (1.0 - angle.cos());
            assert_relative_eq!(axis_angle_mat(&axis, angle), product, epsilon = 1e-14);
        }
    }

    #[test]
    fn quaternion_round_trips() {
        let axis = Vec3::new(1.0, 2.0, -0.5).normalize();
        let q = quat_from_axis_angle(&axis, 0.8);
        assert_relative_eq!(quat_to_mat(&q), axis_angle_mat(&axis, 0.8), epsilon = 1e-14);
        let back = mat_to_quat(&quat_to_mat(&q)).unwrap();
        for k in 0..4 {
            assert_relative_eq!(back[k], q[k], epsilon = 1e-14);
        }
        assert_relative_eq!(quat_to_rotvec(&q), axis * 0.8, epsilon = 1e-14);
        let w = Vec3::new(0.3, -0.2, 0.5);
        let q2 = quat_integrate(&q, &w, 0.7);
        assert_relative_eq!(quat_difference(&q, &q2), w * 0.7, epsilon = 1e-13);
    }
}
