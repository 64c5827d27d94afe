//! Narrow-phase collision: pure geometry, shared by the formulations above it (SPOOK now,
//! MuJoCo's constraint pipeline later). Row 2 of the layering: it knows poses and primitive
//! shapes, nothing about bodies, masses or solvers.
//!
//! | pair | function | contacts |
//! |---|---|---|
//! | plane - sphere | [`plane_sphere`] | 1 |
//! | plane - capsule | [`plane_capsule`] | up to 2 (the two end caps) |
//! | plane - box | [`plane_box`] | up to 4 (the deepest corners) |
//! | any supported pair | [`collide`] | dispatches on [`GeomType`] |
//!
//! A [`Contact`] follows MuJoCo's `mjContact` conventions so that MuJoCo's full collision issue
//! can extend this module without changing its users: `pos` is the point midway between the two
//! surfaces, `frame` has the contact normal as its **first** row (pointing from the first geom
//! into the second) followed by two tangents, and `dist` is the signed distance between the
//! surfaces (negative when they penetrate). Pairs not listed above return no contacts from
//! [`collide`] and are reported by [`supported`]; box-box, capsule-capsule and the mesh pairs
//! belong to that later issue.

use crate::model::GeomType;
use crate::spatial::{Mat3, Vec3};

/// The world pose of a geom: position of its centre and rotation (columns = geom axes in world
/// coordinates).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeomPose {
    /// Centre in world coordinates.
    pub pos: Vec3,
    /// Axes of the geom in world coordinates (columns).
    pub rot: Mat3,
}

/// One contact point between two geoms (MuJoCo's `mjContact` convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// The point midway between the two surfaces, world coordinates.
    pub pos: Vec3,
    /// Rows: the normal (from geom 1 into geom 2), then two unit tangents; orthonormal.
    pub frame: Mat3,
    /// Signed distance between the surfaces (negative: penetration depth).
    pub dist: f64,
}

impl Contact {
    /// The contact normal (first row of the frame).
    pub fn normal(&self) -> Vec3 {
        self.frame.row(0).transpose()
    }
    /// Tangent `k` (0 or 1) of the frame.
    pub fn tangent(&self, k: usize) -> Vec3 {
        self.frame.row(1 + k).transpose()
    }
}

/// A contact frame whose first row is the unit normal `n` and whose other rows complete a
/// right-handed orthonormal basis (MuJoCo's `mju_makeFrame` picks its own tangents; any
/// orthonormal pair serves a box friction model).
pub fn frame_from_normal(n: &Vec3) -> Mat3 {
    let helper = if n.x.abs() < 0.6 { Vec3::x() } else { Vec3::y() };
    let t1 = (helper - n * n.dot(&helper)).normalize();
    let t2 = n.cross(&t1);
    Mat3::from_rows(&[n.transpose(), t1.transpose(), t2.transpose()])
}

/// Plane (normal = the plane's z axis, through its centre) against a point with a radius: the
/// building block of the sphere and capsule tests. `None` when farther than `margin`.
fn plane_point(plane: &GeomPose, center: &Vec3, radius: f64, margin: f64) -> Option<Contact> {
    let n = plane.rot.column(2).into_owned();
    let dist = n.dot(&(center - plane.pos)) - radius;
    (dist <= margin).then(|| Contact {
        pos: center - n * (radius + 0.5 * dist),
        frame: frame_from_normal(&n),
        dist,
    })
}

/// Plane against sphere of `radius`: one contact when the signed distance is at most `margin`.
pub fn plane_sphere(plane: &GeomPose, sphere: &GeomPose, radius: f64, margin: f64) -> Option<Contact> {
    plane_point(plane, &sphere.pos, radius, margin)
}

/// Plane against a capsule of `radius` and half-length `half_length` along its z axis: one
/// contact per end-cap sphere within `margin` (a capsule lying flat touches at both ends).
pub fn plane_capsule(
    plane: &GeomPose,
    capsule: &GeomPose,
    radius: f64,
    half_length: f64,
    margin: f64,
    out: &mut Vec<Contact>,
) {
    let axis = capsule.rot.column(2).into_owned();
    for s in [-1.0, 1.0] {
        if let Some(c) = plane_point(plane, &(capsule.pos + axis * (s * half_length)), radius, margin) {
            out.push(c);
        }
    }
}

/// Plane against a box of half-sizes `half`: the corners within `margin`, at most the four
/// deepest (a box resting on a face has four, on an edge two, on a corner one).
pub fn plane_box(plane: &GeomPose, bx: &GeomPose, half: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    let mut corners: [(f64, Vec3); 8] = [(0.0, Vec3::zeros()); 8];
    let n = plane.rot.column(2).into_owned();
    for (k, c) in corners.iter_mut().enumerate() {
        let s = |bit: usize| if k & (1 << bit) == 0 { -1.0 } else { 1.0 };
        let local = Vec3::new(s(0) * half.x, s(1) * half.y, s(2) * half.z);
        let p = bx.pos + bx.rot * local;
        *c = (n.dot(&(p - plane.pos)), p);
    }
    corners.sort_by(|a, b| a.0.total_cmp(&b.0));
    for &(dist, p) in corners.iter().take(4) {
        if dist <= margin {
            out.push(Contact {
                pos: p - n * (0.5 * dist),
                frame: frame_from_normal(&n),
                dist,
            });
        }
    }
}

/// True when [`collide`] implements the pair (in either order).
pub fn supported(t1: GeomType, t2: GeomType) -> bool {
    matches!(
        (t1, t2),
        (GeomType::Plane, GeomType::Sphere | GeomType::Capsule | GeomType::Box)
            | (GeomType::Sphere | GeomType::Capsule | GeomType::Box, GeomType::Plane)
    )
}

/// The contacts between two geoms (types, MuJoCo `size` parameters, world poses) within
/// `margin`, appended to `out`. The normal points from the first geom into the second; when the
/// plane comes second the pair is swapped and the normals flipped so this still holds.
/// Unsupported pairs ([`supported`]) add nothing.
pub fn collide(
    g1: (GeomType, &[f64; 3], &GeomPose),
    g2: (GeomType, &[f64; 3], &GeomPose),
    margin: f64,
    out: &mut Vec<Contact>,
) {
    let (t1, s1, p1) = g1;
    let (t2, s2, p2) = g2;
    if t2 == GeomType::Plane && t1 != GeomType::Plane {
        let start = out.len();
        collide(g2, g1, margin, out);
        for c in &mut out[start..] {
            let n = -c.normal();
            c.frame = frame_from_normal(&n);
        }
        return;
    }
    match (t1, t2) {
        (GeomType::Plane, GeomType::Sphere) => out.extend(plane_sphere(p1, p2, s2[0], margin)),
        (GeomType::Plane, GeomType::Capsule) => plane_capsule(p1, p2, s2[0], s2[1], margin, out),
        (GeomType::Plane, GeomType::Box) => plane_box(p1, p2, &Vec3::new(s2[0], s2[1], s2[2]), margin, out),
        _ => {
            let _ = s1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::axis_angle_mat;

    fn floor() -> GeomPose {
        GeomPose {
            pos: Vec3::zeros(),
            rot: Mat3::identity(),
        }
    }

    #[test]
    fn sphere_on_floor_touches_at_its_lowest_point() {
        let s = GeomPose {
            pos: Vec3::new(0.3, -0.2, 0.45),
            rot: Mat3::identity(),
        };
        let c = plane_sphere(&floor(), &s, 0.5, 0.0).unwrap();
        assert!((c.dist + 0.05).abs() < 1e-15);
        assert!((c.pos - Vec3::new(0.3, -0.2, -0.025)).norm() < 1e-15);
        assert!((c.frame * c.frame.transpose() - Mat3::identity()).norm() < 1e-14);
        assert!(plane_sphere(&floor(), &s, 0.4, 0.0).is_none());
    }

    #[test]
    fn tilted_box_touches_with_its_lowest_corner_first() {
        let rot = axis_angle_mat(&Vec3::new(1.0, 1.0, 0.0).normalize(), 0.3);
        let half = Vec3::new(0.1, 0.2, 0.3);
        let bx = GeomPose {
            pos: Vec3::new(0.0, 0.0, 0.3),
            rot,
        };
        let mut out = vec![];
        plane_box(&floor(), &bx, &half, 10.0, &mut out);
        assert_eq!(out.len(), 4);
        // the deepest corner is the minimum over all eight of z
        let mut zmin = f64::INFINITY;
        for k in 0..8 {
            let s = |b: usize| if k & (1 << b) == 0 { -1.0 } else { 1.0 };
            let p = bx.pos + rot * Vec3::new(s(0) * half.x, s(1) * half.y, s(2) * half.z);
            zmin = zmin.min(p.z);
        }
        assert!((out[0].dist - zmin).abs() < 1e-15);
    }

    #[test]
    fn swapped_pair_flips_the_normal() {
        let s = GeomPose {
            pos: Vec3::new(0.0, 0.0, 0.4),
            rot: Mat3::identity(),
        };
        let mut a = vec![];
        let mut b = vec![];
        collide(
            (GeomType::Plane, &[0.0; 3], &floor()),
            (GeomType::Sphere, &[0.5, 0.0, 0.0], &s),
            0.0,
            &mut a,
        );
        collide(
            (GeomType::Sphere, &[0.5, 0.0, 0.0], &s),
            (GeomType::Plane, &[0.0; 3], &floor()),
            0.0,
            &mut b,
        );
        assert!((a[0].normal() + b[0].normal()).norm() < 1e-15);
        assert_eq!(a[0].dist, b[0].dist);
    }
}
