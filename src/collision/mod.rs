//! Narrow-phase collision: pure geometry, shared by the formulations above it (SPOOK and
//! MuJoCo's constraint pipeline). Row 2 of the layering: it knows poses and primitive shapes,
//! nothing about bodies, masses or solvers. Book chapter: "Collision detection".
//!
//! Every pair is done the way MuJoCo 4.0's `mjCOLLISIONFUNC` table does it:
//!
//! | pair (MuJoCo's type order) | function | MuJoCo | contacts |
//! |---|---|---|---|
//! | plane - sphere | [`primitives::plane_sphere`] | `mjc_PlaneSphere` | 1 |
//! | plane - capsule | [`primitives::plane_capsule`] | `mjc_PlaneCapsule` | up to 2 |
//! | plane - ellipsoid | [`convex::plane_convex`] | `mjc_PlaneConvex` | 1 |
//! | plane - cylinder | [`primitives::plane_cylinder`] | `mjc_PlaneCylinder` | up to 4 |
//! | plane - box | [`primitives::plane_box`] | `mjc_PlaneBox` | up to 4 |
//! | sphere - sphere | [`primitives::sphere_sphere`] | `mjc_SphereSphere` | 1 |
//! | sphere - capsule | [`primitives::sphere_capsule`] | `mjc_SphereCapsule` | 1 |
//! | sphere - cylinder | [`primitives::sphere_cylinder`] | `mjc_SphereCylinder` | 1 |
//! | sphere - box | [`boxes::sphere_box`] | `mjc_SphereBox` | 1 |
//! | capsule - capsule | [`primitives::capsule_capsule`] | `mjc_CapsuleCapsule` | 1, or 2 when parallel |
//! | capsule - box | [`boxes::capsule_box`] | `mjc_CapsuleBox` | up to 2 |
//! | box - box | [`boxes::box_box`] | `mjc_BoxBox` | up to 8 |
//! | plane - mesh | [`convex::plane_convex`] | `mjc_PlaneConvex` | up to 3 |
//! | height field - any solid | [`hfield::hfield_convex_with`] | `mjc_ConvexHField` (one convex collision per prism) | up to 50 |
//! | every other pair (ellipsoid - any, cylinder - capsule, cylinder, box, mesh - any) | [`convex::convex_contacts_with`] | `mjc_Convex` (GJK + EPA, then the face/edge patch of [`multicontact`]) | 1, up to 4 for flat faces |
//!
//! The same shapes are also cast rays at ([`ray`], MuJoCo's `engine_ray.c`: the first point of a
//! half-line on a geom's surface and the normal there), which `crate::mujoco::ray` turns into
//! MuJoCo's `mj_ray`.
//!
//! A [`Contact`] follows MuJoCo's `mjContact`: `pos` is the point midway between the two
//! surfaces, `frame` has the contact normal as its **first** row (pointing from the first geom
//! into the second) followed by two tangents made by [`frame::make_frame`] (`mju_makeFrame`),
//! and `dist` is the signed distance between the surfaces (negative when they penetrate). A
//! contact is reported when `dist <= margin`.

pub mod boxes;
pub mod convex;
pub mod frame;
pub mod hfield;
pub mod multicontact;
pub mod primitives;
pub mod ray;

pub use frame::{frame_from_normal, make_frame};

use crate::model::GeomType;
use crate::spatial::{Mat3, Vec3};
use convex::ConvexScratch;
use convex::{ConvexShape, Shape};

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

/// MuJoCo's number of a geom type (`mjtGeom`: plane 0, height field 1, sphere 2, capsule 3,
/// ellipsoid 4, cylinder 5, box 6, mesh 7). MuJoCo collides a pair with the lower number first.
pub fn mj_type(t: GeomType) -> u8 {
    match t {
        GeomType::Plane => 0,
        GeomType::HField(_) => 1,
        GeomType::Mesh(_) => 7,
        GeomType::Sphere => 2,
        GeomType::Capsule => 3,
        GeomType::Ellipsoid => 4,
        GeomType::Cylinder => 5,
        GeomType::Box => 6,
    }
}

/// True when [`collide`] has a collision function for the pair (every pair but plane-plane,
/// plane - height field and height field - height field, as MuJoCo).
pub fn supported(t1: GeomType, t2: GeomType) -> bool {
    let flat = |t: GeomType| matches!(t, GeomType::Plane | GeomType::HField(_));
    !(flat(t1) && flat(t2))
}

/// The largest number of contacts [`collide`] returns for the pair (MuJoCo's `mj_maxContact`
/// for these primitives).
pub fn max_contacts(t1: GeomType, t2: GeomType) -> usize {
    use GeomType::*;
    let (a, b) = if mj_type(t1) <= mj_type(t2) { (t1, t2) } else { (t2, t1) };
    match (a, b) {
        (Plane | HField(_), Plane | HField(_)) => 0,
        (HField(_), _) => hfield::MAX_CONTACTS,
        (Plane, Mesh(_)) => 3,
        (_, Mesh(_)) if matches!(a, Sphere | Ellipsoid) => 1,
        (_, Mesh(_)) => 4,
        (Sphere | Ellipsoid, _) | (_, Sphere | Ellipsoid) => 1,
        (Box, Box) => 8,
        (Capsule, Capsule) => 2,
        (Capsule, Box) => 2,
        (Plane, Capsule) => 2,
        (Plane, Cylinder | Box) => 4,
        _ => 4,
    }
}

/// The assets a mesh or height-field geom points to (MuJoCo's `mesh_*`, `hfield_*`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Assets<'a> {
    /// Meshes, indexed by [`GeomType::Mesh`].
    pub meshes: &'a [crate::model::mesh::Mesh],
    /// Height fields, indexed by [`GeomType::HField`].
    pub hfields: &'a [crate::model::mesh::HField],
}

/// [`collide_with`] for geoms that are not meshes or height fields (those add nothing here).
pub fn collide(
    g1: (GeomType, &[f64; 3], &GeomPose),
    g2: (GeomType, &[f64; 3], &GeomPose),
    margin: f64,
    out: &mut Vec<Contact>,
) {
    collide_with(&Assets::default(), g1, g2, margin, out)
}

/// [`collide_with_scratch`] with fresh storage for the convex collider (allocates for the pairs
/// that go through EPA or the multi-contact patch).
pub fn collide_with(
    assets: &Assets,
    g1: (GeomType, &[f64; 3], &GeomPose),
    g2: (GeomType, &[f64; 3], &GeomPose),
    margin: f64,
    out: &mut Vec<Contact>,
) {
    collide_with_scratch(assets, &mut ConvexScratch::default(), g1, g2, margin, out)
}

// ANCHOR: collide
/// The contacts between two geoms (types, MuJoCo `size` parameters, world poses) within
/// `margin`, appended to `out`, by MuJoCo's collision function for the pair (the table in the
/// module map). The normal points from the first geom into the second: when MuJoCo's type order
/// puts the second geom first, the pair is collided swapped and each normal flipped (and its
/// frame rebuilt). Plane-plane adds nothing. The analytic pairs allocate nothing; the convex
/// pairs and the height field keep what they grow in `ws` (EPA's polytope, the contact patch's
/// features and clipping buffers; GJK's simplex is on the stack), so that a repeated call
/// allocates nothing once `ws` and `out` have grown.
///
/// Meshes and height fields are looked up in `assets`. Sizes and asset indices are assumed
/// valid (positive where the type uses them); `crate::mujoco::collision` checks them at its door.
pub fn collide_with_scratch(
    assets: &Assets,
    ws: &mut ConvexScratch,
    g1: (GeomType, &[f64; 3], &GeomPose),
    g2: (GeomType, &[f64; 3], &GeomPose),
    margin: f64,
    out: &mut Vec<Contact>,
) {
    if mj_type(g1.0) > mj_type(g2.0) {
        let start = out.len();
        collide_with_scratch(assets, ws, g2, g1, margin, out);
        for c in &mut out[start..] {
            c.frame = frame_from_normal(&-c.normal());
        }
        return;
    }
    use GeomType::*;
    let (t1, s1, p1) = g1;
    let (t2, s2, p2) = g2;
    let v = |s: &[f64; 3]| Vec3::new(s[0], s[1], s[2]);
    match (t1, t2) {
        (Plane | HField(_), Plane | HField(_)) => {}
        (HField(k), _) => {
            if let (Some(h), Some(b)) = (assets.hfields.get(k), Shape::of_mesh(t2, s2, assets.meshes)) {
                let s = ConvexShape { shape: b, pose: *p2 };
                hfield::hfield_convex_with(h, p1, &s, margin, &mut ws.epa, out);
            }
        }
        (Plane, Mesh(_)) => {
            if let Some(b) = Shape::of_mesh(t2, s2, assets.meshes) {
                convex::plane_convex(p1, &ConvexShape { shape: b, pose: *p2 }, margin, out);
            }
        }
        (Plane, Sphere) => primitives::plane_sphere(p1, p2, s2[0], margin, out),
        (Plane, Capsule) => primitives::plane_capsule(p1, p2, s2[0], s2[1], margin, out),
        (Plane, Cylinder) => primitives::plane_cylinder(p1, p2, s2[0], s2[1], margin, out),
        (Plane, Box) => primitives::plane_box(p1, p2, &v(s2), margin, out),
        (Plane, Ellipsoid) => convex::plane_convex(
            p1,
            &ConvexShape {
                shape: Shape::Ellipsoid(v(s2)),
                pose: *p2,
            },
            margin,
            out,
        ),
        (Sphere, Sphere) => primitives::sphere_sphere(p1, s1[0], p2, s2[0], margin, out),
        (Sphere, Capsule) => primitives::sphere_capsule(p1, s1[0], p2, s2[0], s2[1], margin, out),
        (Sphere, Cylinder) => primitives::sphere_cylinder(p1, s1[0], p2, s2[0], s2[1], margin, out),
        (Sphere, Box) => boxes::sphere_box(p1, s1[0], p2, &v(s2), margin, out),
        (Capsule, Capsule) => primitives::capsule_capsule(p1, [s1[0], s1[1]], p2, [s2[0], s2[1]], margin, out),
        (Capsule, Box) => boxes::capsule_box(p1, s1[0], s1[1], p2, &v(s2), margin, out),
        (Box, Box) => boxes::box_box(p1, &v(s1), p2, &v(s2), margin, out),
        _ => {
            // both are solids here (planes were handled above)
            if let (Some(a), Some(b)) = (
                Shape::of_mesh(t1, s1, assets.meshes),
                Shape::of_mesh(t2, s2, assets.meshes),
            ) {
                convex::convex_contacts_with(
                    &ConvexShape { shape: a, pose: *p1 },
                    &ConvexShape { shape: b, pose: *p2 },
                    margin,
                    ws,
                    out,
                );
            }
        }
    }
}
// ANCHOR_END: collide

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
        let mut out = vec![];
        primitives::plane_sphere(&floor(), &s, 0.5, 0.0, &mut out);
        let c = out[0];
        assert!((c.dist + 0.05).abs() < 1e-15);
        assert!((c.pos - Vec3::new(0.3, -0.2, -0.025)).norm() < 1e-15);
        assert!((c.frame * c.frame.transpose() - Mat3::identity()).norm() < 1e-14);
        out.clear();
        primitives::plane_sphere(&floor(), &s, 0.4, 0.0, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn tilted_box_touches_with_its_lower_corners() {
        let rot = axis_angle_mat(&Vec3::new(1.0, 1.0, 0.0).normalize(), 0.3);
        let half = Vec3::new(0.1, 0.2, 0.3);
        let bx = GeomPose {
            pos: Vec3::new(0.0, 0.0, 0.3),
            rot,
        };
        let mut out = vec![];
        primitives::plane_box(&floor(), &bx, &half, 10.0, &mut out);
        assert_eq!(out.len(), 4);
        // the deepest corner is the minimum over all eight of z
        let mut zmin = f64::INFINITY;
        for k in 0..8 {
            let s = |b: usize| if k & (1 << b) == 0 { -1.0 } else { 1.0 };
            let p = bx.pos + rot * Vec3::new(s(0) * half.x, s(1) * half.y, s(2) * half.z);
            zmin = zmin.min(p.z);
        }
        let dmin = out.iter().map(|c| c.dist).fold(f64::INFINITY, f64::min);
        assert!((dmin - zmin).abs() < 1e-15);
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
