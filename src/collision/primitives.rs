//! The analytic pairs of MuJoCo's `engine_collision_primitive.c`: planes against spheres,
//! capsules, cylinders, boxes and ellipsoids; spheres and capsules against each other; the
//! sphere against a cylinder. Each function takes world poses and MuJoCo `size` parameters,
//! appends at most MuJoCo's number of contacts to `out` and follows its conventions: the normal
//! points from the first shape into the second, `dist` is signed, `pos` is midway between the
//! surfaces, a contact is reported when `dist <= margin`.

use super::frame::make_frame;
use super::{Contact, GeomPose};
use crate::model::constants::mjMINVAL;
use crate::spatial::Vec3;

/// Appends the contact at `pos` with normal `n` (any length but zero), tangent hint and `dist`.
pub(crate) fn push(out: &mut Vec<Contact>, pos: Vec3, n: &Vec3, hint: &Vec3, dist: f64) {
    out.push(Contact {
        pos,
        frame: make_frame(n, hint),
        dist,
    });
}

/// Column `k` of a pose's rotation: geom axis `k` in world coordinates.
pub(crate) fn axis(p: &GeomPose, k: usize) -> Vec3 {
    p.rot.column(k).into_owned()
}

// ANCHOR: plane_sphere
/// Plane (normal = its z axis, through its centre, infinite) against a sphere of `radius` at
/// `center` (`mjraw_PlaneSphere`): `dist = n.(c - p) - r`, `pos = c - n (r + dist/2)`. Returns
/// whether a contact was added.
pub fn plane_point(
    plane: &GeomPose,
    center: &Vec3,
    radius: f64,
    margin: f64,
    hint: &Vec3,
    out: &mut Vec<Contact>,
) -> bool {
    let n = axis(plane, 2);
    let c = n.dot(&(center - plane.pos));
    if c > margin + radius {
        return false;
    }
    let dist = c - radius;
    push(out, center - n * (radius + 0.5 * dist), &n, hint, dist);
    true
}
// ANCHOR_END: plane_sphere

/// Plane against sphere (`mjc_PlaneSphere`): one contact.
pub fn plane_sphere(plane: &GeomPose, sphere: &GeomPose, radius: f64, margin: f64, out: &mut Vec<Contact>) {
    plane_point(plane, &sphere.pos, radius, margin, &Vec3::zeros(), out);
}

/// Plane against a capsule of `radius` and half-length `half_length` along its z axis
/// (`mjc_PlaneCapsule`): plane-sphere at the `+z` end, then at the `-z` end, each frame's first
/// tangent along the capsule axis. Up to 2 contacts.
pub fn plane_capsule(
    plane: &GeomPose,
    capsule: &GeomPose,
    radius: f64,
    half_length: f64,
    margin: f64,
    out: &mut Vec<Contact>,
) {
    let a = axis(capsule, 2);
    let seg = a * half_length;
    plane_point(plane, &(capsule.pos + seg), radius, margin, &a, out);
    plane_point(plane, &(capsule.pos - seg), radius, margin, &a, out);
}

// ANCHOR: plane_cylinder
/// Plane against a cylinder of `radius` and half-length `half_length` (`mjc_PlaneCylinder`).
///
/// The axis `a` is flipped to point towards the plane. `v` is the radial direction of the rim
/// point nearest the plane (the component of `-n` normal to the axis, scaled to the radius; the
/// cylinder's x axis when the disk is parallel to the plane). Candidates, in MuJoCo's order:
/// 1. the rim point `c + v + a h` of the near disk (none of the others if it is beyond `margin`);
/// 2. the rim point `c + v - a h` of the far disk;
/// 3. and 4. two more points of the near disk, `c + a h - v/2 +- w`, `w` of length `r sqrt(3)/2`
///    along `v x a`: with point 1 they form an equilateral triangle on the rim, so a cylinder
///    standing on its disk gets three contacts spread around it.
pub fn plane_cylinder(
    plane: &GeomPose,
    cyl: &GeomPose,
    radius: f64,
    half_length: f64,
    margin: f64,
    out: &mut Vec<Contact>,
) {
    let n = axis(plane, 2);
    let mut a = axis(cyl, 2);
    let mut prjaxis = n.dot(&a);
    if prjaxis > 0.0 {
        a = -a;
        prjaxis = -prjaxis;
    }
    let dist0 = (cyl.pos - plane.pos).dot(&n);
    let mut v = a * prjaxis - n;
    let len_sqr = v.norm_squared();
    if len_sqr >= mjMINVAL * mjMINVAL {
        v *= radius / len_sqr.sqrt();
    } else {
        v = axis(cyl, 0) * radius;
    }
    let prjvec = v.dot(&n);
    let ah = a * half_length;
    let prjaxis = prjaxis * half_length;
    let zero = Vec3::zeros();

    let d1 = dist0 + prjaxis + prjvec;
    if d1 > margin {
        return;
    }
    push(out, cyl.pos + v + ah - n * (0.5 * d1), &n, &zero, d1);
    let d2 = dist0 - prjaxis + prjvec;
    if d2 <= margin {
        push(out, cyl.pos + v - ah - n * (0.5 * d2), &n, &zero, d2);
    }
    let d3 = dist0 + prjaxis - 0.5 * prjvec;
    if d3 <= margin {
        let w = v.cross(&ah).normalize() * (radius * 3f64.sqrt() / 2.0);
        push(out, cyl.pos + w + ah - v * 0.5 - n * (0.5 * d3), &n, &zero, d3);
        push(out, cyl.pos - w + ah - v * 0.5 - n * (0.5 * d3), &n, &zero, d3);
    }
}
// ANCHOR_END: plane_cylinder

// ANCHOR: plane_box
/// Plane against a box of half-sizes `half` (`mjc_PlaneBox`): the corners in MuJoCo's order
/// (bit `k` of the corner index set gives `+half[k]`), skipping a corner farther than `margin`
/// or on the upper half of the box (`n.o > 0`, `o` the corner relative to the centre); at most
/// the first 4 that pass.
pub fn plane_box(plane: &GeomPose, bx: &GeomPose, half: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    let n = axis(plane, 2);
    let dist = (bx.pos - plane.pos).dot(&n);
    let mut count = 0;
    // every contact has the plane's frame, made once
    let mut frame = None;
    for i in 0..8 {
        let s = |bit: usize| if i & (1 << bit) != 0 { 1.0 } else { -1.0 };
        let o = bx.rot * Vec3::new(s(0) * half.x, s(1) * half.y, s(2) * half.z);
        let ldist = n.dot(&o);
        if dist + ldist > margin || ldist > 0.0 {
            continue;
        }
        let d = dist + ldist;
        out.push(Contact {
            pos: o + bx.pos - n * (0.5 * d),
            frame: *frame.get_or_insert_with(|| make_frame(&n, &Vec3::zeros())),
            dist: d,
        });
        count += 1;
        if count == 4 {
            return;
        }
    }
}
// ANCHOR_END: plane_box

/// Plane against a convex shape through its support point in `-n` (`mjc_PlaneConvex` for an
/// ellipsoid): `support` is the shape's farthest point along `-n`. One contact.
pub fn plane_support(plane: &GeomPose, support: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    let n = axis(plane, 2);
    let dist = n.dot(&(support - plane.pos));
    if dist > margin {
        return;
    }
    push(out, support - n * (0.5 * dist), &n, &Vec3::zeros(), dist);
}

/// A sphere as the sphere-based pairs pass it: centre, radius and the z axis of its geom (used
/// only when two centres coincide).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ball {
    /// Centre (world).
    pub center: Vec3,
    /// Radius (0 for a point).
    pub radius: f64,
    /// The z axis of the geom it stands for.
    pub z: Vec3,
}

/// Shorthand for a [`Ball`].
fn ball(center: Vec3, radius: f64, z: Vec3) -> Ball {
    Ball { center, radius, z }
}

// ANCHOR: sphere_sphere
/// Two spheres (`mjraw_SphereSphere`), the building block of the sphere and capsule pairs:
/// `dist = |c2 - c1| - r1 - r2`, `n = (c2 - c1)/|c2 - c1|`, `pos = c1 + n (r1 + dist/2)`. When the
/// centres coincide the normal is `z1 x z2` (the two shapes' z axes, normalized; MuJoCo's choice).
pub fn sphere_sphere_raw(b1: Ball, b2: Ball, margin: f64, out: &mut Vec<Contact>) -> bool {
    let Ball {
        center: c1,
        radius: r1,
        z: z1,
    } = b1;
    let Ball {
        center: c2,
        radius: r2,
        z: z2,
    } = b2;
    let (c1, z1, c2, z2) = (&c1, &z1, &c2, &z2);
    let dif = c1 - c2;
    let cdist_sqr = dif.norm_squared();
    let min_dist = margin + r1 + r2;
    if cdist_sqr > min_dist * min_dist {
        return false;
    }
    let dist = cdist_sqr.sqrt() - r1 - r2;
    let mut n = c2 - c1;
    let len = n.norm();
    if len < mjMINVAL {
        n = z1.cross(z2);
        // MuJoCo's mju_normalize3 leaves (1, 0, 0) for a vector too short to normalize
        n = if n.norm() < mjMINVAL { Vec3::x() } else { n.normalize() };
    } else {
        n /= len;
    }
    push(out, c1 + n * (r1 + 0.5 * dist), &n, &Vec3::zeros(), dist);
    true
}
// ANCHOR_END: sphere_sphere

/// Sphere against sphere (`mjc_SphereSphere`).
pub fn sphere_sphere(s1: &GeomPose, r1: f64, s2: &GeomPose, r2: f64, margin: f64, out: &mut Vec<Contact>) {
    sphere_sphere_raw(
        ball(s1.pos, r1, axis(s1, 2)),
        ball(s2.pos, r2, axis(s2, 2)),
        margin,
        out,
    );
}

/// Sphere against capsule (`mjraw_SphereCapsule`): the sphere centre's projection onto the
/// capsule axis, clamped to the segment, is the centre of a sphere of the capsule's radius.
pub fn sphere_capsule(
    s: &GeomPose,
    r: f64,
    cap: &GeomPose,
    radius: f64,
    half_length: f64,
    margin: f64,
    out: &mut Vec<Contact>,
) {
    let a = axis(cap, 2);
    let x = a.dot(&(s.pos - cap.pos)).clamp(-half_length, half_length);
    sphere_sphere_raw(
        ball(s.pos, r, axis(s, 2)),
        ball(cap.pos + a * x, radius, a),
        margin,
        out,
    );
}

// ANCHOR: sphere_cylinder
/// Sphere against cylinder (`mjc_SphereCylinder`). With `x` the sphere centre's coordinate along
/// the axis and `p` its radial offset: the side when `|x| < h` (sphere-sphere with the axis
/// point), the cap when `|p| < r` (plane-sphere with the cap's plane, normal flipped so that it
/// points from the sphere into the cylinder); when both hold (centre inside) the nearer surface
/// wins; otherwise the rim point is a sphere of radius zero.
pub fn sphere_cylinder(
    s: &GeomPose,
    r: f64,
    cyl: &GeomPose,
    radius: f64,
    half_length: f64,
    margin: f64,
    out: &mut Vec<Contact>,
) {
    let a = axis(cyl, 2);
    let vec = s.pos - cyl.pos;
    let x = a.dot(&vec);
    let a_proj = a * x;
    let p_proj = vec - a_proj;
    let p_sqr = p_proj.norm_squared();
    let mut side = x.abs() < half_length;
    let mut cap = p_sqr < radius * radius;
    if side && cap {
        let dist_cap = half_length - x.abs();
        let dist_radius = radius - p_sqr.sqrt();
        if dist_cap < dist_radius {
            side = false;
        } else {
            cap = false;
        }
    }
    let zs = axis(s, 2);
    if side {
        sphere_sphere_raw(ball(s.pos, r, zs), ball(a_proj + cyl.pos, radius, a), margin, out);
        return;
    }
    if cap {
        // the cap's plane: the top disk faces +a, the bottom one -a (MuJoCo flips x and z)
        let (pos_cap, rot) = if x > 0.0 {
            (cyl.pos + a * half_length, cyl.rot)
        } else {
            let mut m = cyl.rot;
            m.set_column(0, &(-axis(cyl, 0)));
            m.set_column(2, &(-a));
            (cyl.pos - a * half_length, m)
        };
        let start = out.len();
        let plane = GeomPose { pos: pos_cap, rot };
        if plane_point(&plane, &s.pos, r, margin, &Vec3::zeros(), out) {
            let c = &mut out[start];
            let n = -c.normal();
            c.frame = make_frame(&n, &Vec3::zeros());
        }
        return;
    }
    let rim = cyl.pos + a * if x > 0.0 { half_length } else { -half_length } + p_proj * (radius / p_sqr.sqrt());
    sphere_sphere_raw(ball(s.pos, r, zs), ball(rim, 0.0, a), margin, out);
}
// ANCHOR_END: sphere_cylinder

/// `sin^2` of the angle between two capsule axes below which MuJoCo 4.0 treats them as parallel.
const PARALLEL: f64 = 1e-8;

// ANCHOR: capsule_capsule
/// Capsule against capsule (`mjraw_CapsuleCapsule`). With scaled half-axes `a1 = z1 h1`,
/// `a2 = z2 h2` and the segment points `c1 + x1 a1`, `c2 + x2 a2` (`x` in [-1, 1]), the closest
/// pair solves the 2x2 normal equations `[a -b; -b c] [x1; x2]`, clamped to the segments one
/// parameter at a time; then sphere-sphere at those points: one contact.
///
/// Parallel axes (`sin^2` of their angle below `1e-8`, i.e. `det < 1e-8 a c`; measured on MuJoCo
/// 4.0, which changed this case): the two ends `lo`, `hi` of the overlap of the segments,
/// projected on axis 1 and clamped to segment 1, each a sphere-sphere test with its clamped
/// projection on segment 2: 2 contacts (the same point twice when the segments do not overlap
/// along the axis).
pub fn capsule_capsule(p1: &GeomPose, s1: [f64; 2], p2: &GeomPose, s2: [f64; 2], margin: f64, out: &mut Vec<Contact>) {
    let (z1, z2) = (axis(p1, 2), axis(p2, 2));
    let a1 = z1 * s1[1];
    let a2 = z2 * s2[1];
    let dif = p1.pos - p2.pos;
    let ma = a1.dot(&a1);
    let mb = -a1.dot(&a2);
    let mc = a2.dot(&a2);
    let u = -a1.dot(&dif);
    let v = a2.dot(&dif);
    let det = ma * mc - mb * mb;
    let ss = |x1: f64, x2: f64, out: &mut Vec<Contact>| {
        sphere_sphere_raw(
            ball(p1.pos + a1 * x1, s1[0], z1),
            ball(p2.pos + a2 * x2, s2[0], z2),
            margin,
            out,
        )
    };
    if det >= PARALLEL * ma * mc {
        let mut x1 = (mc * u - mb * v) / det;
        let mut x2 = (ma * v - mb * u) / det;
        if x1 > 1.0 {
            x1 = 1.0;
            x2 = (v - mb) / mc;
        } else if x1 < -1.0 {
            x1 = -1.0;
            x2 = (v + mb) / mc;
        }
        if x2 > 1.0 {
            x2 = 1.0;
            x1 = ((u - mb) / ma).clamp(-1.0, 1.0);
        } else if x2 < -1.0 {
            x2 = -1.0;
            x1 = ((u + mb) / ma).clamp(-1.0, 1.0);
        }
        ss(x1, x2, out);
        return;
    }
    // (nearly) parallel: the ends of the overlap of the two segments along axis 1
    let (ta, tb) = (z1.dot(&(p2.pos + a2 - p1.pos)), z1.dot(&(p2.pos - a2 - p1.pos)));
    let lo = ta.min(tb).max(-s1[1]).min(s1[1]);
    let hi = ta.max(tb).min(s1[1]).max(-s1[1]);
    for t in [lo, hi] {
        let p = p1.pos + z1 * t;
        let x2 = (z2.dot(&(p - p2.pos))).clamp(-s2[1], s2[1]);
        sphere_sphere_raw(ball(p, s1[0], z1), ball(p2.pos + z2 * x2, s2[0], z2), margin, out);
    }
}
// ANCHOR_END: capsule_capsule
