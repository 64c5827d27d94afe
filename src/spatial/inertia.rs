//! Spatial rigid-body inertia (Featherstone 2.13 and 2.16).

use super::{skew, Force, Mat3, Mat6, Motion, Vec3, Xform};
use std::ops::{Add, AddAssign};

/// The spatial inertia of a rigid body about a frame's origin (Featherstone eq. 2.63):
/// `I = [Ibar, [h]x; [h]x^T, m 1]` with mass `m`, first moment `h = m c` (c the centre of mass)
/// and rotational inertia `Ibar` about the origin, `Ibar = Ic - m [c]x [c]x`.
///
/// Stored as the ten numbers (m, h, Ibar), which is also how MuJoCo's `cinert` stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialInertia {
    /// Mass.
    pub m: f64,
    /// First moment of mass `m c` about the origin.
    pub h: Vec3,
    /// Rotational inertia about the origin.
    pub ibar: Mat3,
}

impl Default for SpatialInertia {
    fn default() -> Self {
        SpatialInertia::zero()
    }
}

impl SpatialInertia {
    /// The zero inertia (a massless body).
    pub fn zero() -> Self {
        SpatialInertia {
            m: 0.0,
            h: Vec3::zeros(),
            ibar: Mat3::zeros(),
        }
    }
    // ANCHOR: inertia_mci
    /// `mcI(m, c, Ic)`: mass `m`, centre of mass `c`, rotational inertia `ic` about the centre of
    /// mass (Featherstone eq. 2.63).
    pub fn from_mass_com_inertia(m: f64, c: Vec3, ic: Mat3) -> Self {
        let cx = skew(&c);
        SpatialInertia {
            m,
            h: c * m,
            ibar: ic - cx * cx * m,
        }
    }
    // ANCHOR_END: inertia_mci
    /// The centre of mass `h / m` (the origin if the mass is zero).
    pub fn com(&self) -> Vec3 {
        if self.m > 0.0 {
            self.h / self.m
        } else {
            Vec3::zeros()
        }
    }
    /// Rotational inertia about the centre of mass.
    pub fn inertia_at_com(&self) -> Mat3 {
        if self.m > 0.0 {
            let hx = skew(&self.h);
            self.ibar + hx * hx / self.m
        } else {
            self.ibar
        }
    }
    /// The explicit 6x6 matrix `[Ibar, [h]x; [h]x^T, m 1]`.
    pub fn to_matrix(&self) -> Mat6 {
        let mut out = Mat6::zeros();
        let hx = skew(&self.h);
        out.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.ibar);
        out.fixed_view_mut::<3, 3>(0, 3).copy_from(&hx);
        out.fixed_view_mut::<3, 3>(3, 0).copy_from(&hx.transpose());
        out.fixed_view_mut::<3, 3>(3, 3).copy_from(&(Mat3::identity() * self.m));
        out
    }
    // ANCHOR: inertia_ops
    /// `I v`: the momentum of a body moving with velocity `v` (eq. 2.62).
    #[inline]
    pub fn mul_motion(&self, v: &Motion) -> Force {
        Force {
            n: self.ibar * v.w + self.h.cross(&v.v),
            f: v.v * self.m - self.h.cross(&v.w),
        }
    }
    /// The inertia expressed in frame B given `x = B_X_A` and the inertia in A coordinates:
    /// `I_B = X* I_A X^-1` (eq. 2.66), computed on the ten numbers.
    pub fn transform(&self, x: &Xform) -> SpatialInertia {
        // Move the origin to B's origin (at r in A coordinates), then rotate.
        let r = x.r;
        let h_a = self.h - r * self.m; // first moment about B's origin, A axes
        let rx = skew(&r);
        let hx = skew(&self.h);
        let ibar_a = self.ibar + rx * hx + skew(&h_a) * rx;
        SpatialInertia {
            m: self.m,
            h: x.e * h_a,
            ibar: x.e * ibar_a * x.e.transpose(),
        }
    }
    // ANCHOR_END: inertia_ops
    /// The inertia expressed in frame A given `x = B_X_A` and the inertia in B coordinates:
    /// `I_A = X^T I_B X` (eq. 2.66 read backwards). This is the step that accumulates a child's
    /// composite inertia into its parent in CRBA and ABA.
    ///
    /// Rotating gives `h_r = E^T h` and `Ibar_r = E^T Ibar E`; moving the origin by `-r` gives
    /// `h_A = h_r + m r` and `Ibar_A = Ibar_r - [r]x [h_r]x - [h_A]x [r]x`. With
    /// `[a]x [b]x = b a^T - (a . b) 1` and `p = h_r + m r / 2` the last two terms are
    /// `-(p r^T + r p^T) + 2 (r . p) 1`, which is how it is computed (no 3x3 products; this runs
    /// once per body in CRBA).
    #[inline(always)]
    pub fn transform_back(&self, x: &Xform) -> SpatialInertia {
        let h_r = x.e.tr_mul(&self.h); // rotate into A's axes, still about B's origin
        let ibar_r = sym_congruence(&x.e, &self.ibar);
        let r = x.r;
        let p = h_r + r * (0.5 * self.m);
        let shift = p * r.transpose() + r * p.transpose() - Mat3::identity() * (2.0 * r.dot(&p));
        SpatialInertia {
            m: self.m,
            h: h_r + r * self.m,
            ibar: ibar_r - shift,
        }
    }
    /// True if the mass is non-negative, and the inertia about the centre of mass is symmetric
    /// and satisfies positive semi-definiteness and the triangle inequality of principal moments
    /// (to a relative tolerance). Returns a description of the first violation.
    pub fn check_physical(&self) -> Result<(), String> {
        if !self.m.is_finite() || !self.h.iter().all(|x| x.is_finite()) || !self.ibar.iter().all(|x| x.is_finite()) {
            return Err("non-finite entries".into());
        }
        if self.m < 0.0 {
            return Err(format!("negative mass {}", self.m));
        }
        if self.m == 0.0 && (self.h.norm() > 0.0) {
            return Err(format!("zero mass with a nonzero first moment {:?}", self.h));
        }
        let ic = self.inertia_at_com();
        let scale = ic.abs().max().max(f64::MIN_POSITIVE);
        if (ic - ic.transpose()).abs().max() > 1e-9 * scale {
            return Err("rotational inertia is not symmetric".into());
        }
        // bounded iterations (the unbounded `SymmetricEigen::new` never returns on some inputs)
        let ev = nalgebra::SymmetricEigen::try_new(ic, f64::EPSILON, 1000)
            .ok_or("the eigenvalues of the rotational inertia did not converge")?
            .eigenvalues;
        let (a, b, c) = (ev[0], ev[1], ev[2]);
        let tol = 1e-9 * scale;
        if a < -tol || b < -tol || c < -tol {
            return Err(format!(
                "rotational inertia has a negative principal moment ({a:.3e}, {b:.3e}, {c:.3e})"
            ));
        }
        if a + b < c - tol || a + c < b - tol || b + c < a - tol {
            return Err(format!(
                "principal moments ({a:.3e}, {b:.3e}, {c:.3e}) violate the triangle inequality"
            ));
        }
        Ok(())
    }
}

impl Add for SpatialInertia {
    type Output = SpatialInertia;
    fn add(self, o: SpatialInertia) -> SpatialInertia {
        SpatialInertia {
            m: self.m + o.m,
            h: self.h + o.h,
            ibar: self.ibar + o.ibar,
        }
    }
}

impl AddAssign for SpatialInertia {
    fn add_assign(&mut self, o: SpatialInertia) {
        self.m += o.m;
        self.h += o.h;
        self.ibar += o.ibar;
    }
}

/// `E^T K E` for a symmetric `K` (the rotation part of eq. 2.66 read backwards, used by
/// [`SpatialInertia::transform_back`] and ABA's articulated inertias): with `T = K E`, entry (i, j) is column i of E dotted with
/// column j of T, and only the six entries with i <= j are computed.
#[inline(always)]
pub fn sym_congruence(e: &Mat3, k: &Mat3) -> Mat3 {
    let t = k * e;
    let entry = |i: usize, j: usize| e.column(i).dot(&t.column(j));
    sym_from_upper([
        entry(0, 0),
        entry(1, 1),
        entry(2, 2),
        entry(0, 1),
        entry(0, 2),
        entry(1, 2),
    ])
}

/// The symmetric 3x3 with diagonal `(xx, yy, zz)` and upper triangle `(xy, xz, yz)`.
#[inline(always)]
pub fn sym_from_upper([xx, yy, zz, xy, xz, yz]: [f64; 6]) -> Mat3 {
    Mat3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::{rotx, roty, xlt};
    use approx::assert_relative_eq;

    fn body() -> SpatialInertia {
        let ic = Mat3::new(0.3, 0.01, -0.02, 0.01, 0.25, 0.03, -0.02, 0.03, 0.2);
        SpatialInertia::from_mass_com_inertia(2.5, Vec3::new(0.1, -0.3, 0.2), ic)
    }

    #[test]
    fn transforms_agree_with_6x6_forms() {
        let i = body();
        let x = rotx(0.4) * xlt(Vec3::new(0.5, 1.0, -0.2)) * roty(-0.9);
        let xm = x.to_motion_matrix();
        let xinv = xm.try_inverse().unwrap();
        let xstar = x.to_force_matrix();
        assert_relative_eq!(
            i.transform(&x).to_matrix(),
            xstar * i.to_matrix() * xinv,
            epsilon = 1e-12
        );
        assert_relative_eq!(
            i.transform_back(&x).to_matrix(),
            xm.transpose() * i.to_matrix() * xm,
            epsilon = 1e-12
        );
        let v = Motion::new(Vec3::new(0.3, -0.1, 0.2), Vec3::new(1.0, 0.5, -0.7));
        assert_relative_eq!(i.mul_motion(&v).to_vec6(), i.to_matrix() * v.to_vec6(), epsilon = 1e-13);
        assert_relative_eq!(
            i.inertia_at_com(),
            Mat3::new(0.3, 0.01, -0.02, 0.01, 0.25, 0.03, -0.02, 0.03, 0.2),
            epsilon = 1e-14
        );
        assert!(i.check_physical().is_ok());
    }

    #[test]
    fn unphysical_inertias_are_rejected() {
        let bad =
            SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::from_diagonal(&Vec3::new(1.0, 1.0, 3.0)));
        assert!(bad.check_physical().unwrap_err().contains("triangle"));
        let neg = SpatialInertia::from_mass_com_inertia(-1.0, Vec3::zeros(), Mat3::identity());
        assert!(neg.check_physical().is_err());
    }
}
