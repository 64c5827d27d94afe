//! The compile step (MuJoCo's `src/user`: `mjCGeom::SetInertia`, `mjCBody::GeomFrame`,
//! `mjCModel`'s mass checks): geom volumes and inertias, body mass properties from geoms, and the
//! check that every moving body has mass.

use super::reader::{GeomSpec, MassProps, Reader};
use super::InertiaFromGeom;
use crate::error::Result;
use crate::model::constants::mjMINVAL;
use crate::model::{principal_axes, GeomType};
use crate::spatial::{quat_to_mat, Mat3, Vec3};

impl<'d> Reader<'d> {
    /// Mass properties of MuJoCo body `b`: the `<inertial>`, or the geoms' (MuJoCo's
    /// `mjCBody::GeomFrame`).
    pub(crate) fn body_mass(&self, b: usize, inertial: Option<MassProps>) -> Result<MassProps> {
        let body = &self.bodies[b];
        let [lo, hi] = self.compiler.inertia_group_range;
        let sel: Vec<&GeomSpec> = body
            .geoms
            .iter()
            .filter(|g| g.geom.group >= lo && g.geom.group <= hi)
            .collect();
        let from_geoms = match self.compiler.inertia_from_geom {
            InertiaFromGeom::True => !sel.is_empty(),
            InertiaFromGeom::Auto => inertial.is_none(),
            InertiaFromGeom::False => false,
        };
        if !from_geoms {
            return Ok(inertial.unwrap_or_else(MassProps::zero));
        }
        if sel.len() == 1 {
            let g = sel[0];
            let r = quat_to_mat(&g.geom.quat);
            let inertia = r * Mat3::from_diagonal(&Vec3::from(g.diag)) * r.transpose();
            return Ok(MassProps {
                mass: g.mass,
                com: g.geom.pos,
                inertia,
                principal: g.diag,
                iquat: g.geom.quat,
            });
        }
        let mass: f64 = sel.iter().map(|g| g.mass).sum();
        if sel.is_empty() || mass < mjMINVAL {
            return Ok(MassProps {
                mass,
                ..MassProps::zero()
            });
        }
        let com = sel.iter().fold(Vec3::zeros(), |acc, g| acc + g.geom.pos * g.mass) / mass;
        let mut inertia = Mat3::zeros();
        for g in &sel {
            let r = quat_to_mat(&g.geom.quat);
            let d = g.geom.pos - com;
            inertia += r * Mat3::from_diagonal(&Vec3::from(g.diag)) * r.transpose()
                + (Mat3::identity() * d.dot(&d) - d * d.transpose()) * g.mass;
        }
        let (iquat, ev) = principal_axes(&inertia);
        Ok(MassProps {
            mass,
            com,
            inertia,
            principal: [ev[0], ev[1], ev[2]],
            iquat,
        })
    }

    /// MuJoCo's `settotalmass`: scales every body's mass and inertia so that they add up to
    /// `total` (a non-positive `total` leaves them alone).
    pub(crate) fn set_total_mass(&mut self, total: f64) {
        let sum: f64 = self.bodies.iter().skip(1).map(|b| b.mass.mass).sum();
        if total <= 0.0 || sum < mjMINVAL {
            return;
        }
        let scale = total / sum;
        for b in self.bodies.iter_mut().skip(1) {
            b.mass.mass *= scale;
            b.mass.inertia *= scale;
            for p in &mut b.mass.principal {
                *p *= scale;
            }
        }
    }

    /// MuJoCo's check that moving bodies have mass: a body with joints needs mass and principal
    /// moments of at least mjMINVAL, unless a jointless child has them.
    pub(crate) fn check_moving_masses(&self) -> Result<()> {
        // one pass over the children (linear, whatever the tree's shape)
        let mut rescued = vec![false; self.bodies.len()];
        for c in self.bodies.iter().skip(1) {
            if c.joints.is_empty() && c.mass.big_enough() {
                rescued[c.parent] = true;
            }
        }
        for (b, body) in self.bodies.iter().enumerate().skip(1) {
            if body.joints.is_empty() || body.mass.big_enough() {
                continue;
            }
            if !rescued[b] {
                let name = if body.name.is_empty() {
                    format!("<body> (MuJoCo body {b})")
                } else {
                    format!("<body name=\"{}\">", super::xml::esc(&body.name))
                };
                return Err(self.err_at(
                    body.file,
                    body.line,
                    format!(
                        "{name}: mass {:e} and principal moments {:?} of a moving body must be at least mjMINVAL = 1e-15",
                        body.mass.mass, body.mass.principal
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Geom volume (MuJoCo's `mjCGeom::GetVolume`); planes have none.
pub(crate) fn geom_volume(gtype: GeomType, s: &[f64; 3]) -> f64 {
    use std::f64::consts::PI;
    match gtype {
        GeomType::Sphere => 4.0 * PI * s[0] * s[0] * s[0] / 3.0,
        GeomType::Capsule => PI * (s[0] * s[0] * 2.0 * s[1] + 4.0 * s[0] * s[0] * s[0] / 3.0),
        GeomType::Cylinder => PI * s[0] * s[0] * 2.0 * s[1],
        GeomType::Box => 8.0 * s[0] * s[1] * s[2],
        GeomType::Ellipsoid => 4.0 * PI * s[0] * s[1] * s[2] / 3.0,
        // meshes carry their volume in the asset (the reader uses it); height fields none
        GeomType::Plane | GeomType::HField(_) | GeomType::Mesh(_) => 0.0,
    }
}

/// Principal moments of a solid geom about its centre, in its own axes (MuJoCo's
/// `mjCGeom::SetInertia`). The capsule is a cylinder of height h = 2 size[1] plus two
/// hemispheres whose centres of mass sit 3r/8 beyond the cylinder's ends.
pub(crate) fn geom_inertia(gtype: GeomType, s: &[f64; 3], mass: f64) -> [f64; 3] {
    match gtype {
        GeomType::Sphere => [2.0 * mass * s[0] * s[0] / 5.0; 3],
        GeomType::Capsule => {
            let (r, h) = (s[0], 2.0 * s[1]);
            let m_sph = mass * 4.0 * r / (4.0 * r + 3.0 * h);
            let m_cyl = mass - m_sph;
            let i_sph = 2.0 * m_sph * r * r / 5.0;
            let ixx = m_cyl * (3.0 * r * r + h * h) / 12.0 + i_sph + m_sph * h * (3.0 * r + 2.0 * h) / 8.0;
            [ixx, ixx, m_cyl * r * r / 2.0 + i_sph]
        }
        GeomType::Cylinder => {
            let (r, h) = (s[0], 2.0 * s[1]);
            let ixx = mass * (3.0 * r * r + h * h) / 12.0;
            [ixx, ixx, mass * r * r / 2.0]
        }
        GeomType::Box => [
            mass * (s[1] * s[1] + s[2] * s[2]) / 3.0,
            mass * (s[0] * s[0] + s[2] * s[2]) / 3.0,
            mass * (s[0] * s[0] + s[1] * s[1]) / 3.0,
        ],
        GeomType::Ellipsoid => [
            mass * (s[1] * s[1] + s[2] * s[2]) / 5.0,
            mass * (s[0] * s[0] + s[2] * s[2]) / 5.0,
            mass * (s[0] * s[0] + s[1] * s[1]) / 5.0,
        ],
        GeomType::Plane | GeomType::HField(_) | GeomType::Mesh(_) => [0.0; 3],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// The capsule formula against a direct integration: slice the capsule along z into thin
    /// disks and add their moments (an independent route to MuJoCo's closed form).
    #[test]
    fn capsule_inertia_matches_slicing() {
        let (r, half) = (0.1f64, 0.3f64);
        let size = [r, half, 0.0];
        let density = 1000.0;
        let mass = density * geom_volume(GeomType::Capsule, &size);
        let closed = geom_inertia(GeomType::Capsule, &size, mass);
        let n = 200_000;
        let (zmax, dz) = (half + r, 2.0 * (half + r) / n as f64);
        let (mut m, mut ixx, mut izz) = (0.0, 0.0, 0.0);
        for k in 0..n {
            let z = -zmax + (k as f64 + 0.5) * dz;
            let rho = if z.abs() <= half {
                r
            } else {
                (r * r - (z.abs() - half).powi(2)).max(0.0).sqrt()
            };
            let dm = density * std::f64::consts::PI * rho * rho * dz;
            m += dm;
            ixx += dm * (rho * rho / 4.0 + z * z);
            izz += dm * rho * rho / 2.0;
        }
        assert_relative_eq!(m, mass, max_relative = 1e-8);
        assert_relative_eq!(closed[0], ixx, max_relative = 1e-8);
        assert_relative_eq!(closed[2], izz, max_relative = 1e-8);
    }

    /// The ellipsoid's volume and moments against slicing it into thin elliptic disks.
    #[test]
    fn ellipsoid_inertia_matches_slicing() {
        let size = [0.3f64, 0.2, 0.5];
        let density = 700.0;
        let mass = density * geom_volume(GeomType::Ellipsoid, &size);
        let closed = geom_inertia(GeomType::Ellipsoid, &size, mass);
        let (a, b, c) = (size[0], size[1], size[2]);
        let n = 200_000;
        let dz = 2.0 * c / n as f64;
        let (mut m, mut ixx, mut izz) = (0.0, 0.0, 0.0);
        for k in 0..n {
            let z = -c + (k as f64 + 0.5) * dz;
            let s2 = 1.0 - z * z / (c * c);
            let dm = density * std::f64::consts::PI * a * b * s2 * dz;
            m += dm;
            ixx += dm * (b * b * s2 / 4.0 + z * z);
            izz += dm * (a * a + b * b) * s2 / 4.0;
        }
        assert_relative_eq!(m, mass, max_relative = 1e-8);
        assert_relative_eq!(closed[0], ixx, max_relative = 1e-8);
        assert_relative_eq!(closed[2], izz, max_relative = 1e-8);
    }
}
