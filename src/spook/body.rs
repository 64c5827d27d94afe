//! Rigid bodies in maximal coordinates (Lacoursière 2007, ch. 4; book section "Rigid bodies in maximal coordinates"): position `x` of
//! the centre of mass and unit quaternion `rho = (w, x, y, z)` per body, velocity `[nu; omega]`
//! in world coordinates.

use crate::error::{Error, Result};
use crate::spatial::{quat_mul, quat_normalize, quat_to_mat, Mat3, Vec3};
use nalgebra::{Matrix3x4, Matrix4x3};

/// One rigid body of a SPOOK system.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Name (for errors and reports).
    pub name: String,
    /// Mass `m` (kg), positive.
    pub mass: f64,
    /// Rotational inertia about the centre of mass in body coordinates, `I^b` (kg m^2).
    pub inertia: Mat3,
    /// Centre of mass in world coordinates, `x` (m).
    pub x: Vec3,
    /// Orientation, a unit quaternion `rho = (rho_0, rho_1, rho_2, rho_3)` (w first).
    pub rho: [f64; 4],
    /// Linear velocity of the centre of mass, world coordinates, `nu` (m/s).
    pub nu: Vec3,
    /// Angular velocity, world coordinates, `omega` (rad/s).
    pub omega: Vec3,
}

impl Body {
    /// A body at rest at `x` with orientation `rho`.
    pub fn new(name: &str, mass: f64, inertia: Mat3, x: Vec3, rho: [f64; 4]) -> Self {
        Body {
            name: name.into(),
            mass,
            inertia,
            x,
            rho,
            nu: Vec3::zeros(),
            omega: Vec3::zeros(),
        }
    }

    /// A uniform solid sphere of `mass` and `radius` at rest at `x`.
    pub fn sphere(name: &str, mass: f64, radius: f64, x: Vec3) -> Self {
        Body::new(
            name,
            mass,
            Mat3::identity() * (0.4 * mass * radius * radius),
            x,
            [1.0, 0.0, 0.0, 0.0],
        )
    }

    /// A uniform solid box of `mass` and half-sizes `half` at rest at `x` with orientation `rho`.
    pub fn cuboid(name: &str, mass: f64, half: Vec3, x: Vec3, rho: [f64; 4]) -> Self {
        let (a, b, c) = (half.x * half.x, half.y * half.y, half.z * half.z);
        let i = Mat3::from_diagonal(&Vec3::new(b + c, a + c, a + b)) * (mass / 3.0);
        Body::new(name, mass, i, x, rho)
    }

    /// The rotation matrix `R(rho)`: body coordinates to world coordinates (`x^s = R x^b`).
    pub fn rotation(&self) -> Mat3 {
        quat_to_mat(&self.rho)
    }

    /// The world-frame inertia `I^s = R I^b R^T` (book, "Rigid bodies in maximal coordinates").
    pub fn inertia_world(&self) -> Mat3 {
        let r = self.rotation();
        r * self.inertia * r.transpose()
    }

    /// Kinetic energy `1/2 m nu.nu + 1/2 omega^T I^s omega` (J).
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.mass * self.nu.norm_squared() + 0.5 * self.omega.dot(&(self.inertia_world() * self.omega))
    }

    /// Checks the body as user input: positive finite mass, symmetric positive-definite finite
    /// inertia, finite state and a unit quaternion (to 1e-9; the stepper keeps it unit).
    pub fn check(&self, index: usize) -> Result<()> {
        let what = |f: &str| format!("body {index} ('{}') {f}", self.name);
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(Error::BadParameter {
                what: what("mass"),
                value: self.mass,
                why: "must be positive and finite".into(),
            });
        }
        let sym = (self.inertia - self.inertia.transpose()).norm();
        let eig = self.inertia.symmetric_eigenvalues();
        let min = eig.iter().fold(f64::INFINITY, |m, x| m.min(*x));
        if !(self.inertia.iter().all(|x| x.is_finite()) && sym <= 1e-12 * self.inertia.norm() && min > 0.0) {
            return Err(Error::BadParameter {
                what: what("inertia, smallest eigenvalue"),
                value: min,
                why: "must be symmetric positive definite".into(),
            });
        }
        for (name, v) in [("x", &self.x), ("nu", &self.nu), ("omega", &self.omega)] {
            if let Some(k) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::NonFinite {
                    what: what(name),
                    index: k,
                    value: v[k],
                });
            }
        }
        let norm = self.rho.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !((norm - 1.0).abs() <= 1e-9) {
            return Err(Error::NotUnitQuaternion {
                what: what("rho"),
                body: index,
                norm,
            });
        }
        Ok(())
    }
}

// ANCHOR: gamma
/// `Gamma(rho)` (book, "The quaternion step"): `rho-dot = Gamma(rho) omega` for the world-frame
/// angular velocity `omega` (from `rho-dot = 1/2 [0; omega] (x) rho`). A 4 x 3 matrix with
/// `rho^T Gamma = 0`: every column is tangent to the unit sphere.
pub fn gamma(rho: &[f64; 4]) -> Matrix4x3<f64> {
    let [r0, r1, r2, r3] = *rho;
    Matrix4x3::new(-r1, -r2, -r3, r0, r3, -r2, -r3, r0, r1, r2, -r1, r0) * 0.5
}
// ANCHOR_END: gamma

// ANCHOR: quat_step
/// The world-frame quaternion step (book, "The quaternion step"): with `theta = |omega| h / 2`,
/// `delta rho = [cos theta; sin theta omega / |omega|]` and `rho_{k+1} = delta rho (x) rho_k`
/// (multiplied on the **left** because `omega` is in world coordinates), then renormalized so
/// that rounding never accumulates off the unit sphere.
pub fn quat_step(rho: &[f64; 4], omega: &Vec3, h: f64) -> [f64; 4] {
    let w = omega.norm();
    if w == 0.0 {
        return *rho;
    }
    let theta = 0.5 * w * h;
    let (s, c) = theta.sin_cos();
    let n = omega / w;
    let delta = [c, s * n.x, s * n.y, s * n.z];
    let mut out = quat_mul(&delta, rho);
    quat_normalize(&mut out);
    out
}
// ANCHOR_END: quat_step

// ANCHOR: d_rot
/// `d (R(rho) p) / d rho`, the 3 x 4 derivative of a body-fixed vector `p` turned to world
/// coordinates, from `R(rho) p = (rho_0^2 - r.r) p + 2 (r.p) r + 2 rho_0 r x p` with
/// `r = (rho_1, rho_2, rho_3)`. This extends `R` off the unit sphere in one particular way;
/// `d(Rp)/d rho Gamma(rho)` does not depend on the extension, and equals `-[R p]x`.
pub fn d_rot(rho: &[f64; 4], p: &Vec3) -> Matrix3x4<f64> {
    let w = rho[0];
    let r = Vec3::new(rho[1], rho[2], rho[3]);
    let d_w = 2.0 * w * p + 2.0 * r.cross(p);
    // d/dr: -2 p r^T + 2 r p^T + 2 (r.p) 1 - 2 w [p]x
    let d_r = -2.0 * p * r.transpose() + 2.0 * r * p.transpose() + Mat3::identity() * (2.0 * r.dot(p))
        - 2.0 * w * crate::spatial::skew(p);
    let mut out = Matrix3x4::zeros();
    out.column_mut(0).copy_from(&d_w);
    out.fixed_columns_mut::<3>(1).copy_from(&d_r);
    out
}
// ANCHOR_END: d_rot

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::{quat_from_axis_angle, skew};

    fn rho() -> [f64; 4] {
        quat_from_axis_angle(&Vec3::new(0.3, -0.5, 0.8).normalize(), 1.1)
    }

    #[test]
    fn gamma_is_tangent_and_gives_the_world_rate() {
        let q = rho();
        let g = gamma(&q);
        let qv = nalgebra::Vector4::new(q[0], q[1], q[2], q[3]);
        assert!((qv.transpose() * g).norm() < 1e-15);
        // finite difference of the quaternion step
        let w = Vec3::new(0.4, 0.9, -1.3);
        let dt = 1e-6;
        let (qp, qm) = (quat_step(&q, &w, dt), quat_step(&q, &(-w), dt));
        let fd = nalgebra::Vector4::from_fn(|i, _| (qp[i] - qm[i]) / (2.0 * dt));
        assert!((fd - g * w).norm() < 1e-9);
    }

    #[test]
    fn d_rot_times_gamma_is_minus_skew() {
        let q = rho();
        let p = Vec3::new(0.2, -0.7, 0.4);
        let rp = quat_to_mat(&q) * p;
        assert!((d_rot(&q, &p) * gamma(&q) + skew(&rp)).norm() < 1e-14);
        // the extension agrees with R on the unit sphere
        let w = q[0];
        let r = Vec3::new(q[1], q[2], q[3]);
        let formula = (w * w - r.dot(&r)) * p + 2.0 * r.dot(&p) * r + 2.0 * w * r.cross(&p);
        assert!((formula - rp).norm() < 1e-15);
    }
}
