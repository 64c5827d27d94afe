//! Plücker coordinate transforms (Featherstone 2.8 and table 2.2).

use super::{axis_angle_mat, skew, Force, Mat3, Mat6, Motion, Vec3};
use std::ops::Mul;

/// A Plücker transform `B_X_A = rot(E) xlt(r)` from frame A coordinates to frame B coordinates
/// (Featherstone eq. 2.24 and table 2.2).
///
/// `e` maps 3-D vectors in A coordinates to B coordinates; `r` is the position of B's origin
/// relative to A's origin, expressed in A coordinates. The 6x6 matrix is
/// `[E, 0; -E [r]x, E]` for motions and `[E, -E [r]x; 0, E]` for forces; the code never forms
/// them in the algorithms (they are offered by [`Xform::to_motion_matrix`] and
/// [`Xform::to_force_matrix`] for teaching and testing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Xform {
    /// Rotation: A coordinates to B coordinates.
    pub e: Mat3,
    /// B's origin relative to A's origin, in A coordinates.
    pub r: Vec3,
}

impl Default for Xform {
    fn default() -> Self {
        Xform::identity()
    }
}

/// `rotx(theta)`: the coordinate transform to a frame rotated by `theta` about x (table 2.2).
pub fn rotx(theta: f64) -> Xform {
    let (s, c) = theta.sin_cos();
    Xform::new(Mat3::new(1.0, 0.0, 0.0, 0.0, c, s, 0.0, -s, c), Vec3::zeros())
}
/// `roty(theta)`: the coordinate transform to a frame rotated by `theta` about y (table 2.2).
pub fn roty(theta: f64) -> Xform {
    let (s, c) = theta.sin_cos();
    Xform::new(Mat3::new(c, 0.0, -s, 0.0, 1.0, 0.0, s, 0.0, c), Vec3::zeros())
}
/// `rotz(theta)`: the coordinate transform to a frame rotated by `theta` about z (table 2.2).
pub fn rotz(theta: f64) -> Xform {
    let (s, c) = theta.sin_cos();
    Xform::new(Mat3::new(c, s, 0.0, -s, c, 0.0, 0.0, 0.0, 1.0), Vec3::zeros())
}
/// `xlt(r)`: the coordinate transform to a frame translated by `r` (table 2.2).
pub fn xlt(r: Vec3) -> Xform {
    Xform::new(Mat3::identity(), r)
}

impl Xform {
    /// `rot(e) xlt(r)`.
    #[inline]
    pub const fn new(e: Mat3, r: Vec3) -> Self {
        Xform { e, r }
    }
    /// The identity transform.
    #[inline]
    pub fn identity() -> Self {
        Xform {
            e: Mat3::identity(),
            r: Vec3::zeros(),
        }
    }
    /// The transform to a frame whose origin is at `pos` and whose axes are the columns of
    /// `rot` (both given in the current frame): `rot(rot^T) xlt(pos)`. This is how a body's
    /// `pos`/`quat` in a model file become `X_tree`.
    #[inline]
    pub fn from_pose(rot: &Mat3, pos: &Vec3) -> Self {
        Xform {
            e: rot.transpose(),
            r: *pos,
        }
    }
    /// The coordinate transform for a frame rotated by `angle` about the unit vector `axis`.
    ///
    /// Axes along +-x, +-y or +-z (most joints in real models) go to [`rotx`], [`roty`],
    /// [`rotz`] of table 2.2, which need only the sine and cosine; other axes use Rodrigues'
    /// formula ([`axis_angle_mat`]). Both give the same matrix to rounding.
    #[inline(always)]
    pub fn rot_axis(axis: &Vec3, angle: f64) -> Self {
        match (axis.x, axis.y, axis.z) {
            (1.0, 0.0, 0.0) => rotx(angle),
            (-1.0, 0.0, 0.0) => rotx(-angle),
            (0.0, 1.0, 0.0) => roty(angle),
            (0.0, -1.0, 0.0) => roty(-angle),
            (0.0, 0.0, 1.0) => rotz(angle),
            (0.0, 0.0, -1.0) => rotz(-angle),
            _ => Xform {
                e: axis_angle_mat(axis, angle).transpose(),
                r: Vec3::zeros(),
            },
        }
    }
    // ANCHOR: xform_apply
    /// `X m`: transform a motion vector from A to B coordinates.
    #[inline]
    pub fn apply_motion(&self, m: &Motion) -> Motion {
        Motion {
            w: self.e * m.w,
            v: self.e * (m.v - self.r.cross(&m.w)),
        }
    }
    /// `X* f`: transform a force vector from A to B coordinates.
    #[inline]
    pub fn apply_force(&self, f: &Force) -> Force {
        Force {
            n: self.e * (f.n - self.r.cross(&f.f)),
            f: self.e * f.f,
        }
    }
    /// `X^-1 m`: transform a motion vector from B back to A coordinates.
    #[inline]
    pub fn inv_apply_motion(&self, m: &Motion) -> Motion {
        let w = self.e.tr_mul(&m.w);
        Motion {
            w,
            v: self.e.tr_mul(&m.v) + self.r.cross(&w),
        }
    }
    /// `X^T f` (= `(X*)^-1 f`): transform a force vector from B back to A coordinates.
    #[inline]
    pub fn inv_apply_force(&self, f: &Force) -> Force {
        let lin = self.e.tr_mul(&f.f);
        Force {
            n: self.e.tr_mul(&f.n) + self.r.cross(&lin),
            f: lin,
        }
    }
    /// The inverse transform `A_X_B`.
    #[inline]
    pub fn inverse(&self) -> Xform {
        Xform {
            e: self.e.transpose(),
            r: -(self.e * self.r),
        }
    }
    /// Composition `self * other`: if `self = C_X_B` and `other = B_X_A` the result is `C_X_A`.
    #[inline]
    pub fn compose(&self, other: &Xform) -> Xform {
        Xform {
            e: self.e * other.e,
            r: other.r + other.e.tr_mul(&self.r),
        }
    }
    // ANCHOR_END: xform_apply
    // ANCHOR: xform_matrix
    /// The explicit 6x6 motion transform `[E, 0; -E [r]x, E]` (eq. 2.24).
    pub fn to_motion_matrix(&self) -> Mat6 {
        let mut x = Mat6::zeros();
        x.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.e);
        x.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-self.e * skew(&self.r)));
        x.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.e);
        x
    }
    /// The explicit 6x6 force transform `X* = [E, -E [r]x; 0, E]` (eq. 2.25).
    pub fn to_force_matrix(&self) -> Mat6 {
        let mut x = Mat6::zeros();
        x.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.e);
        x.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-self.e * skew(&self.r)));
        x.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.e);
        x
    }
    // ANCHOR_END: xform_matrix
    /// World-style pose of frame B seen from frame A: the rotation whose columns are B's axes
    /// in A coordinates (`E^T`) and B's origin in A coordinates (`r`).
    #[inline]
    pub fn pose(&self) -> (Mat3, Vec3) {
        (self.e.transpose(), self.r)
    }
    /// True if every entry is finite.
    pub fn is_finite(&self) -> bool {
        self.e.iter().chain(self.r.iter()).all(|x| x.is_finite())
    }
}

impl Mul for Xform {
    type Output = Xform;
    #[inline]
    fn mul(self, o: Xform) -> Xform {
        self.compose(&o)
    }
}

impl Mul<Motion> for Xform {
    type Output = Motion;
    #[inline]
    fn mul(self, m: Motion) -> Motion {
        self.apply_motion(&m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn sample() -> (Xform, Xform, Motion, Force) {
        let a = rotx(0.3) * roty(-1.1) * xlt(Vec3::new(0.2, -0.5, 1.5));
        let b = rotz(0.7) * xlt(Vec3::new(-1.0, 0.25, 0.4)) * roty(0.2);
        let m = Motion::new(Vec3::new(0.1, 0.2, -0.3), Vec3::new(1.0, -2.0, 0.5));
        let f = Force::new(Vec3::new(-0.7, 0.4, 0.2), Vec3::new(0.3, 0.9, -1.2));
        (a, b, m, f)
    }

    #[test]
    fn operations_agree_with_the_6x6_forms() {
        let (a, b, m, f) = sample();
        let xm = a.to_motion_matrix();
        assert_relative_eq!(a.apply_motion(&m).to_vec6(), xm * m.to_vec6(), epsilon = 1e-13);
        assert_relative_eq!(
            a.apply_force(&f).to_vec6(),
            a.to_force_matrix() * f.to_vec6(),
            epsilon = 1e-13
        );
        // X* = X^-T (eq. 2.26)
        assert_relative_eq!(
            a.to_force_matrix(),
            xm.try_inverse().unwrap().transpose(),
            epsilon = 1e-12
        );
        assert_relative_eq!(
            a.inverse().to_motion_matrix(),
            xm.try_inverse().unwrap(),
            epsilon = 1e-12
        );
        assert_relative_eq!(
            a.inv_apply_motion(&m).to_vec6(),
            a.inverse().apply_motion(&m).to_vec6(),
            epsilon = 1e-13
        );
        assert_relative_eq!(
            a.inv_apply_force(&f).to_vec6(),
            xm.transpose() * f.to_vec6(),
            epsilon = 1e-13
        );
        assert_relative_eq!((b * a).to_motion_matrix(), b.to_motion_matrix() * xm, epsilon = 1e-12);
        // Power is frame-invariant.
        assert_relative_eq!(a.apply_motion(&m).dot(&a.apply_force(&f)), m.dot(&f), epsilon = 1e-13);
    }

    #[test]
    fn rotations_match_axis_angle() {
        let x = Vec3::x();
        assert_relative_eq!(rotx(0.4).e, Xform::rot_axis(&x, 0.4).e, epsilon = 1e-15);
        assert_relative_eq!(roty(0.4).e, Xform::rot_axis(&Vec3::y(), 0.4).e, epsilon = 1e-15);
        assert_relative_eq!(rotz(0.4).e, Xform::rot_axis(&Vec3::z(), 0.4).e, epsilon = 1e-15);
        // the axis-aligned shortcuts of rot_axis agree with Rodrigues' formula, signs included
        for axis in [Vec3::x(), -Vec3::x(), Vec3::y(), -Vec3::y(), Vec3::z(), -Vec3::z()] {
            let rodrigues = axis_angle_mat(&axis, -0.9).transpose();
            assert_relative_eq!(Xform::rot_axis(&axis, -0.9).e, rodrigues, epsilon = 1e-15);
        }
    }
}
