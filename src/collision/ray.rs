//! Ray casting against one geom, as MuJoCo's `engine_ray.c` does it (`mju_rayGeom` for the
//! primitives, `mj_rayMesh`, `mj_rayHfield`): pure geometry, no bodies and no filters (those are
//! `crate::mujoco::ray`, MuJoCo's `mj_ray`). Book chapter: "Collision detection", section
//! "Casting rays".
//!
//! A ray is `p(x) = pnt + x vec` for `x >= 0`. Every function here returns the smallest `x >= 0`
//! at which the ray meets the geom's surface, with the unit normal of the surface there pointing
//! **out of** the geom (also when the ray starts inside and leaves through the surface), or
//! `None` when it does not meet it. `x` is measured in units of `vec`, which need not be a unit
//! vector: the hit point is `pnt + x vec`, and its distance from `pnt` is `x |vec|`.
//!
//! Each shape is intersected in its own frame: with the geom at `pos` with axes `R` (columns),
//! the ray there is `l(x) = lp + x lv` with `lp = R^T (pnt - pos)` and `lv = R^T vec` (MuJoCo's
//! `ray_map`), and the normal found there is turned back by `R`.
//!
//! | shape | function | MuJoCo | the equation solved |
//! |---|---|---|---|
//! | plane | [`ray_plane`] | `ray_plane` | `lp_z + x lv_z = 0`, from the front only |
//! | sphere | [`ray_sphere`] | `ray_sphere` | `\|pnt + x vec - pos\|^2 = r^2` |
//! | capsule | [`ray_capsule`] | `ray_capsule` | the side `l_x^2 + l_y^2 = r^2`, the two end spheres |
//! | ellipsoid | [`ray_ellipsoid`] | `ray_ellipsoid` | `sum_i l_i^2 / s_i^2 = 1` |
//! | cylinder | [`ray_cylinder`] | `ray_cylinder` | the two discs `l_z = +-h`, the side |
//! | box | [`ray_box`] | `ray_box` | the six faces `l_i = +-s_i` |
//! | mesh | [`ray_mesh`] | `mj_rayMesh` | every triangle of the mesh ([`ray_triangle`]) |
//! | height field | [`ray_hfield`] | `mj_rayHfield` | the base box, the grid's triangles, the side walls |
//!
//! MuJoCo first tests the bounding sphere of capsules, cylinders and boxes ([`reaches_sphere`])
//! and the bounding box of meshes; they are kept here, although a ray that misses a bounding
//! volume misses what is inside, because of one side effect: the sphere test is a quadratic
//! with `a = vec.vec`, which gives up when `a < mjMINVAL`, so a ray with `|vec| < 3.2e-8` never
//! hits a sphere, capsule, cylinder, box, mesh or height field in MuJoCo (nor an ellipsoid
//! whose `sum lv_i^2 / s_i^2 < mjMINVAL`); only planes remain. The boxes of a mesh's
//! bounding-volume tree change nothing and are left out.

use super::{Assets, GeomPose};
use crate::model::constants::mjMINVAL;
use crate::model::mesh::{HField, Mesh};
use crate::model::GeomType;
use crate::spatial::Vec3;

/// Where a ray meets a surface: the ray parameter `dist` (the `x` of `pnt + x vec`, in units of
/// `vec`) and the unit normal of the surface there, pointing out of the geom, in world
/// coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// The ray parameter `x >= 0` of the hit point `pnt + x vec`.
    pub dist: f64,
    /// Unit outward normal at the hit point (world).
    pub normal: Vec3,
}

/// The ray in the geom's frame (MuJoCo's `ray_map`): `lp = R^T (pnt - pos)`, `lv = R^T vec`.
pub fn to_local(pose: &GeomPose, pnt: &Vec3, vec: &Vec3) -> (Vec3, Vec3) {
    let rt = pose.rot.transpose();
    (rt * (pnt - pose.pos), rt * vec)
}

/// Keeps `(x, what)` in `best` when it is nearer than what `best` holds (strictly: on a tie the
/// earlier candidate stays, as in MuJoCo).
fn offer<T>(best: &mut Option<(f64, T)>, x: f64, what: T) {
    if best.as_ref().is_none_or(|(b, _)| x < *b) {
        *best = Some((x, what));
    }
}

/// `v / |v|`, or `(1, 0, 0)` when `|v| < mjMINVAL` (MuJoCo's `mju_normalize3`).
fn unit(v: Vec3) -> Vec3 {
    let n = v.norm();
    if n < mjMINVAL {
        Vec3::x()
    } else {
        v * (1.0 / n)
    }
}

// ANCHOR: quadratic
/// The two real roots `x0 <= x1` of `a x^2 + 2 b x + c = 0` (MuJoCo's `ray_quad`, whose middle
/// coefficient is halved): `x = (-b -+ sqrt(b^2 - a c)) / a`. `None` when they are complex
/// (`b^2 - a c < 0`) or `a < mjMINVAL` (a ray parallel to the surface's axis, or a zero `vec`).
pub fn quadratic_roots(a: f64, b: f64, c: f64) -> Option<[f64; 2]> {
    let det = b * b - a * c;
    if det < 0.0 || a < mjMINVAL {
        return None;
    }
    let s = det.sqrt();
    Some([(-b - s) / a, (-b + s) / a])
}

/// The smallest non-negative root of `a x^2 + 2 b x + c = 0` ([`quadratic_roots`]): the first
/// crossing of a quadric surface ahead of the ray's origin (the far root when the origin is
/// inside).
pub fn first_root(a: f64, b: f64, c: f64) -> Option<f64> {
    let [x0, x1] = quadratic_roots(a, b, c)?;
    if x0 >= 0.0 {
        Some(x0)
    } else if x1 >= 0.0 {
        Some(x1)
    } else {
        None
    }
}

/// MuJoCo's bounding-sphere test (`ray_sphere` without a normal): whether the ray meets the
/// sphere of squared radius `r2` about `center` at some `x >= 0`.
pub fn reaches_sphere(center: &Vec3, r2: f64, pnt: &Vec3, vec: &Vec3) -> bool {
    let d = pnt - center;
    first_root(vec.dot(vec), vec.dot(&d), d.dot(&d) - r2).is_some()
}
// ANCHOR_END: quadratic

// ANCHOR: ray_plane
/// A plane (MuJoCo's `ray_plane`): its z axis is the normal, and it is **one-sided**: only a ray
/// coming from the front (`lv_z < 0`, read as `lv_z <= -mjMINVAL`) can hit it, at
/// `x = -lp_z / lv_z` (so an origin behind the plane never hits). `size[0]`, `size[1]` are the
/// half-sizes of the drawn rectangle, outside which the ray passes; a size of 0 leaves the plane
/// infinite along that axis. The normal is the plane's z axis.
pub fn ray_plane(pose: &GeomPose, size: &[f64; 3], pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let (lp, lv) = to_local(pose, pnt, vec);
    if lv.z > -mjMINVAL {
        return None;
    }
    let x = -lp.z / lv.z;
    if x < 0.0 {
        return None;
    }
    let (px, py) = (lp.x + x * lv.x, lp.y + x * lv.y);
    let inside = |p: f64, s: f64| s <= 0.0 || p.abs() <= s;
    if inside(px, size[0]) && inside(py, size[1]) {
        Some(Hit {
            dist: x,
            normal: pose.rot.column(2).into_owned(),
        })
    } else {
        None
    }
}
// ANCHOR_END: ray_plane

// ANCHOR: ray_sphere
/// A sphere of `radius` centred at `center` (MuJoCo's `ray_sphere`, in world coordinates): with
/// `d = pnt - center`, `|d + x vec|^2 = r^2` is `a x^2 + 2 b x + c = 0` with `a = vec.vec`,
/// `b = vec.d`, `c = d.d - r^2`. The normal is `(pnt + x vec - center) / r`, normalised.
pub fn ray_sphere(center: &Vec3, radius: f64, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let d = pnt - center;
    let x = first_root(vec.dot(vec), vec.dot(&d), d.dot(&d) - radius * radius)?;
    Some(Hit {
        dist: x,
        normal: unit(pnt + vec * x - center),
    })
}
// ANCHOR_END: ray_sphere

// ANCHOR: ray_capsule
/// A capsule of `radius` around the segment `-half <= z <= half` of its z axis (MuJoCo's
/// `ray_capsule`), three candidates in the local frame, the nearest kept:
/// - the side: the first root of `(lp_x + x lv_x)^2 + (lp_y + x lv_y)^2 = r^2`, kept if
///   `|l_z| <= half` there;
/// - the top sphere, centre `(0, 0, half)`: both roots, each kept if `l_z >= half` there
///   (the upper half of that sphere);
/// - the bottom sphere, centre `(0, 0, -half)`: both roots, each kept if `l_z <= -half`.
///
/// The normal is `(l_x, l_y, 0)` on the side and `l - (0, 0, +-half)` on an end, normalised
/// and turned back to the world.
pub fn ray_capsule(pose: &GeomPose, radius: f64, half: f64, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    if !reaches_sphere(&pose.pos, (radius + half) * (radius + half), pnt, vec) {
        return None;
    }
    let (lp, lv) = to_local(pose, pnt, vec);
    let rr = radius * radius;
    // (x, which surface: 0 the side, +1 the top end, -1 the bottom end)
    let mut best: Option<(f64, f64)> = None;
    let a = lv.x * lv.x + lv.y * lv.y;
    let b = lv.x * lp.x + lv.y * lp.y;
    let c = lp.x * lp.x + lp.y * lp.y - rr;
    if let Some(x) = first_root(a, b, c) {
        if (lp.z + x * lv.z).abs() <= half {
            offer(&mut best, x, 0.0);
        }
    }
    let a = lv.dot(&lv);
    for part in [1.0, -1.0] {
        let d = Vec3::new(lp.x, lp.y, lp.z - part * half);
        if let Some(roots) = quadratic_roots(a, lv.dot(&d), d.dot(&d) - rr) {
            for x in roots {
                let z = lp.z + x * lv.z;
                let on_end = if part > 0.0 { z >= half } else { z <= -half };
                if x >= 0.0 && on_end {
                    offer(&mut best, x, part);
                }
            }
        }
    }
    let (x, part) = best?;
    let l = lp + lv * x;
    let n = Vec3::new(l.x, l.y, if part == 0.0 { 0.0 } else { l.z - half * part });
    Some(Hit {
        dist: x,
        normal: pose.rot * unit(n),
    })
}
// ANCHOR_END: ray_capsule

// ANCHOR: ray_ellipsoid
/// An ellipsoid of semi-axes `s` (MuJoCo's `ray_ellipsoid`): in the local frame
/// `sum_i (lp_i + x lv_i)^2 / s_i^2 = 1`, a quadratic with `a = sum lv_i^2 / s_i^2`,
/// `b = sum lv_i lp_i / s_i^2`, `c = sum lp_i^2 / s_i^2 - 1`. The normal is the gradient
/// `(l_i / s_i^2)_i` at the hit point, normalised and turned back to the world.
pub fn ray_ellipsoid(pose: &GeomPose, s: &Vec3, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let (lp, lv) = to_local(pose, pnt, vec);
    let inv = Vec3::new(1.0 / (s.x * s.x), 1.0 / (s.y * s.y), 1.0 / (s.z * s.z));
    let a = inv.x * lv.x * lv.x + inv.y * lv.y * lv.y + inv.z * lv.z * lv.z;
    let b = inv.x * lv.x * lp.x + inv.y * lv.y * lp.y + inv.z * lv.z * lp.z;
    let c = inv.x * lp.x * lp.x + inv.y * lp.y * lp.y + inv.z * lp.z * lp.z - 1.0;
    let x = first_root(a, b, c)?;
    let l = lp + lv * x;
    Some(Hit {
        dist: x,
        normal: pose.rot * unit(l.component_mul(&inv)),
    })
}
// ANCHOR_END: ray_ellipsoid

// ANCHOR: ray_cylinder
/// A cylinder of `radius` and half-height `half` along its z axis (MuJoCo's `ray_cylinder`),
/// in the local frame:
/// - the two discs: `x = (+-half - lp_z) / lv_z` (when `|lv_z| > mjMINVAL`), kept if `x >= 0`
///   and `l_x^2 + l_y^2 <= r^2` there, normal `+-z`;
/// - the side: the first root of `(lp_x + x lv_x)^2 + (lp_y + x lv_y)^2 = r^2`, kept if
///   `|l_z| <= half` there, normal `(l_x, l_y, 0)` normalised.
pub fn ray_cylinder(pose: &GeomPose, radius: f64, half: f64, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    if !reaches_sphere(&pose.pos, radius * radius + half * half, pnt, vec) {
        return None;
    }
    let (lp, lv) = to_local(pose, pnt, vec);
    let rr = radius * radius;
    // (x, which surface: -1 the bottom disc, +1 the top disc, 0 the side)
    let mut best: Option<(f64, f64)> = None;
    if lv.z.abs() > mjMINVAL {
        for side in [-1.0, 1.0] {
            let x = (side * half - lp.z) / lv.z;
            if x >= 0.0 {
                let (px, py) = (lp.x + x * lv.x, lp.y + x * lv.y);
                if px * px + py * py <= rr {
                    offer(&mut best, x, side);
                }
            }
        }
    }
    let a = lv.x * lv.x + lv.y * lv.y;
    let b = lv.x * lp.x + lv.y * lp.y;
    let c = lp.x * lp.x + lp.y * lp.y - rr;
    if let Some(x) = first_root(a, b, c) {
        if (lp.z + x * lv.z).abs() <= half {
            offer(&mut best, x, 0.0);
        }
    }
    let (x, side) = best?;
    let n = if side == 0.0 {
        unit(Vec3::new(lp.x + lv.x * x, lp.y + lv.y * x, 0.0))
    } else {
        Vec3::new(0.0, 0.0, side)
    };
    Some(Hit {
        dist: x,
        normal: pose.rot * n,
    })
}
// ANCHOR_END: ray_cylinder

// ANCHOR: ray_box
/// Where a ray in a box's frame meets each of its six faces (MuJoCo's `ray_box` with its `all`
/// output): entry `2 i` is the face `l_i = -s_i`, entry `2 i + 1` the face `l_i = +s_i`, each
/// `x = (+-s_i - lp_i) / lv_i` when `|lv_i| > mjMINVAL`, `x >= 0` and the hit point lies within
/// the face (`|l_j| <= s_j` for the two other axes); `None` where the ray misses that face.
/// All `None` when the ray misses the box's bounding sphere ([`reaches_sphere`]).
pub fn box_faces(lp: &Vec3, lv: &Vec3, s: &Vec3) -> [Option<f64>; 6] {
    let mut out = [None; 6];
    if !reaches_sphere(&Vec3::zeros(), s.dot(s), lp, lv) {
        return out;
    }
    for i in 0..3 {
        if lv[i].abs() <= mjMINVAL {
            continue;
        }
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        for (f, side) in [(2 * i, -1.0), (2 * i + 1, 1.0)] {
            let x = (side * s[i] - lp[i]) / lv[i];
            if x >= 0.0 && (lp[j] + x * lv[j]).abs() <= s[j] && (lp[k] + x * lv[k]).abs() <= s[k] {
                out[f] = Some(x);
            }
        }
    }
    out
}

/// The nearest of [`box_faces`]: `(x, face)`, the first face in the order `-x, +x, -y, +y, -z,
/// +z` on a tie.
pub fn nearest_face(faces: &[Option<f64>; 6]) -> Option<(f64, usize)> {
    let mut best: Option<(f64, usize)> = None;
    for (f, x) in faces.iter().enumerate() {
        if let Some(x) = *x {
            offer(&mut best, x, f);
        }
    }
    best
}

/// The outward normal of face `f` of [`box_faces`] in the box's frame: `-+e_i` for `f = 2 i`,
/// `2 i + 1`.
pub fn face_normal(f: usize) -> Vec3 {
    let mut n = Vec3::zeros();
    n[f / 2] = if f.is_multiple_of(2) { -1.0 } else { 1.0 };
    n
}

/// A box of half-sizes `s` (MuJoCo's `ray_box`): the nearest face hit ([`box_faces`]), with
/// that face's outward normal (`+-` the box axis) turned back to the world.
pub fn ray_box(pose: &GeomPose, s: &Vec3, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let (lp, lv) = to_local(pose, pnt, vec);
    let (x, f) = nearest_face(&box_faces(&lp, &lv, s))?;
    Some(Hit {
        dist: x,
        normal: pose.rot * face_normal(f),
    })
}
// ANCHOR_END: ray_box

// ANCHOR: ray_triangle
/// Two unit vectors `(b0, b1)` spanning the plane perpendicular to `lv` (MuJoCo builds them
/// this way in `mj_rayHfield` and `mju_rayTree`): start from `(1, 1, 1)` with the entry of
/// `lv`'s largest component set to 0, take away its part along `lv` and normalise (`b1`), then
/// `b0 = b1 x lv`, normalised.
pub fn ray_basis(lv: &Vec3) -> (Vec3, Vec3) {
    let mut b = Vec3::new(1.0, 1.0, 1.0);
    let a = lv.map(f64::abs);
    if a.x >= a.y && a.x >= a.z {
        b.x = 0.0;
    } else if a.y >= a.z {
        b.y = 0.0;
    } else {
        b.z = 0.0;
    }
    let b1 = unit(b - lv * (lv.dot(&b) / lv.dot(lv)));
    let b0 = unit(b1.cross(lv));
    (b0, b1)
}

/// A triangle `v` (MuJoCo's `ray_triangle`; same frame as `lp`, `lv`; `basis` from
/// [`ray_basis`] of `lv`). Seen along the ray, the ray is a point: it passes through the
/// triangle when the origin lies inside the triangle projected on the plane `(b0, b1)`, i.e.
/// when the barycentric coordinates `(t0, t1, 1 - t0 - t1)` of the origin in the projected
/// triangle `q_i = (b0.(v_i - lp), b1.(v_i - lp))`, solved from
/// `t0 (q0 - q2) + t1 (q1 - q2) = -q2`, are all non-negative. Then the ray meets the
/// triangle's plane, normal `n = (v0 - v2) x (v1 - v2)`, at `x = -n.(lp - v2) / n.lv`
/// (MuJoCo 4.0 rejects `x < 0`, behind the origin). Returns `x` and the unit normal `n / |n|`
/// (in the frame of `v`; it points to the side from which `v0, v1, v2` turn counter-clockwise).
/// `None` when the projected triangle or `n.lv` is degenerate (`< mjMINVAL`).
pub fn ray_triangle(v: &[Vec3; 3], lp: &Vec3, lv: &Vec3, basis: &(Vec3, Vec3)) -> Option<(f64, Vec3)> {
    let (b0, b1) = basis;
    let q = v.map(|vi| {
        let d = vi - lp;
        [b0.dot(&d), b1.dot(&d)]
    });
    let (a00, a01) = (q[0][0] - q[2][0], q[1][0] - q[2][0]);
    let (a10, a11) = (q[0][1] - q[2][1], q[1][1] - q[2][1]);
    let (r0, r1) = (-q[2][0], -q[2][1]);
    let det = a00 * a11 - a01 * a10;
    if det.abs() < mjMINVAL {
        return None;
    }
    let t0 = (a11 * r0 - a01 * r1) / det;
    let t1 = (-a10 * r0 + a00 * r1) / det;
    if t0 < 0.0 || t1 < 0.0 || t0 + t1 > 1.0 {
        return None;
    }
    let n = (v[0] - v[2]).cross(&(v[1] - v[2]));
    let denom = lv.dot(&n);
    if denom.abs() < mjMINVAL {
        return None;
    }
    let x = -(lp - v[2]).dot(&n) / denom;
    if x < 0.0 {
        return None;
    }
    Some((x, unit(n)))
}
// ANCHOR_END: ray_triangle

// ANCHOR: ray_mesh
/// A mesh (MuJoCo's `mj_rayMesh`): first its box (`Mesh::half_extent`, [`box_faces`]), then
/// every **triangle** of the mesh (its faces, not its convex hull: a ray can pass through a
/// dent), the nearest hit kept, its normal from the triangle's winding turned back to the
/// world. MuJoCo walks a bounding-volume tree of the triangles; that only skips triangles the
/// ray cannot meet, so here all are tried.
pub fn ray_mesh(mesh: &Mesh, pose: &GeomPose, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let (lp, lv) = to_local(pose, pnt, vec);
    nearest_face(&box_faces(&lp, &lv, &mesh.half_extent))?;
    let basis = ray_basis(&lv);
    let mut best: Option<(f64, Vec3)> = None;
    for f in &mesh.faces {
        let tri = f.map(|k| mesh.vertices[k]);
        if let Some((x, n)) = ray_triangle(&tri, &lp, &lv, &basis) {
            offer(&mut best, x, n);
        }
    }
    let (x, n) = best?;
    Some(Hit {
        dist: x,
        normal: pose.rot * n,
    })
}
// ANCHOR_END: ray_mesh

// ANCHOR: ray_hfield
/// A height field (MuJoCo's `mj_rayHfield`), in its frame, as the union of
/// 1. the **base**, the box `-base <= z <= 0` under the grid (a hit there has a face normal);
/// 2. the **surface**: the two triangles of every grid cell, `(r, c), (r, c+1), (r+1, c+1)`
///    and `(r, c), (r+1, c+1), (r+1, c)`, normals up. Only the cells under the stretch of the
///    ray inside the top box `0 <= z <= size_z` are tried: its ends projected on the grid give
///    column and row ranges, widened by one cell each way;
/// 3. the four **side walls** of that top box, hit where the hit point lies under the edge of
///    the surface (the elevation interpolated linearly along the field's border), normal out
///    of the wall.
///
/// The nearest hit wins; a ray that misses the top box can only hit the base.
pub fn ray_hfield(h: &HField, pose: &GeomPose, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let [sx, sy, sz, base] = h.size;
    let (lp, lv) = to_local(pose, pnt, vec);
    let world = |best: Option<(f64, Vec3)>| {
        best.map(|(x, n)| Hit {
            dist: x,
            normal: pose.rot * n,
        })
    };
    // 1. the base box, centred 0.5 base below zero
    let base_half = Vec3::new(sx, sy, 0.5 * base);
    let mut best = nearest_face(&box_faces(&(lp + Vec3::new(0.0, 0.0, 0.5 * base)), &lv, &base_half))
        .map(|(x, f)| (x, face_normal(f)));
    // the top box holds the surface; without a hit on it, only the base can be hit
    let top_half = Vec3::new(sx, sy, 0.5 * sz);
    let top = box_faces(&(lp - Vec3::new(0.0, 0.0, 0.5 * sz)), &lv, &top_half);
    let Some((top_x, _)) = nearest_face(&top) else {
        return world(best);
    };
    // 2. the surface triangles under the stretch [s0, s1] of the ray in the top box: from the
    // origin (inside) or the entry to the farthest face hit
    let mut seg = [0.0, top_x];
    for x in top.iter().flatten() {
        if *x > seg[1] {
            seg = [top_x, *x];
        }
    }
    let (nrow, ncol) = (h.nrow as i64, h.ncol as i64);
    let dx = 2.0 * sx / (ncol - 1) as f64;
    let dy = 2.0 * sy / (nrow - 1) as f64;
    let gx = seg.map(|s| (lp.x + s * lv.x + sx) / dx);
    let gy = seg.map(|s| (lp.y + s * lv.y + sy) / dy);
    let cmin = (gx[0].min(gx[1]).floor() as i64 - 1).max(0);
    let cmax = (gx[0].max(gx[1]).ceil() as i64 + 1).min(ncol - 1);
    let rmin = (gy[0].min(gy[1]).floor() as i64 - 1).max(0);
    let rmax = (gy[0].max(gy[1]).ceil() as i64 + 1).min(nrow - 1);
    let basis = ray_basis(&lv);
    for r in rmin..rmax {
        for c in cmin..cmax {
            let (r, c) = (r as usize, c as usize);
            let p = |r: usize, c: usize| h.point(r, c);
            for tri in [
                [p(r, c), p(r, c + 1), p(r + 1, c + 1)],
                [p(r, c), p(r + 1, c + 1), p(r + 1, c)],
            ] {
                if let Some((x, n)) = ray_triangle(&tri, &lp, &lv, &basis) {
                    offer(&mut best, x, n);
                }
            }
        }
    }
    // 3. the side walls x = -+sx (faces 0, 1) and y = -+sy (faces 2, 3): a hit below the
    // border's elevation, interpolated between the two grid points around it
    let (nr, nc) = (h.nrow, h.ncol);
    for (f, x) in top.iter().enumerate().take(4) {
        let Some(x) = *x else { continue };
        if best.is_some_and(|(b, _)| x >= b) {
            continue;
        }
        let z = (lp.z + x * lv.z) / sz;
        // t: the hit's place along the border in grid steps, between grid points k and k + 1
        let (t, k, z0, z1) = if f < 2 {
            // along the border column: t counts rows
            let t = (lp.y + x * lv.y + sy) / dy;
            let k = t.floor().clamp(0.0, (nr - 2) as f64);
            let col = if f == 1 { nc - 1 } else { 0 };
            let i = k as usize;
            (t, k, h.data[i * nc + col], h.data[(i + 1) * nc + col])
        } else {
            // along the border row: t counts columns
            let t = (lp.x + x * lv.x + sx) / dx;
            let k = t.floor().clamp(0.0, (nc - 2) as f64);
            let row = if f == 3 { (nr - 1) * nc } else { 0 };
            let i = k as usize;
            (t, k, h.data[row + i], h.data[row + i + 1])
        };
        if z < z0 * (k + 1.0 - t) + z1 * (t - k) {
            offer(&mut best, x, face_normal(f));
        }
    }
    world(best)
}
// ANCHOR_END: ray_hfield

// ANCHOR: ray_geom
/// One geom of type `t`, MuJoCo `size` and world `pose` (MuJoCo's `mju_rayGeom` for the
/// primitives, `mj_rayMesh` and `mj_rayHfield`); meshes and height fields are looked up in
/// `assets` (`None` for an index outside them). Sizes are assumed valid (positive where the
/// type uses them).
pub fn ray_geom(assets: &Assets, t: GeomType, size: &[f64; 3], pose: &GeomPose, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let s = Vec3::new(size[0], size[1], size[2]);
    match t {
        GeomType::Plane => ray_plane(pose, size, pnt, vec),
        GeomType::Sphere => ray_sphere(&pose.pos, size[0], pnt, vec),
        GeomType::Capsule => ray_capsule(pose, size[0], size[1], pnt, vec),
        GeomType::Ellipsoid => ray_ellipsoid(pose, &s, pnt, vec),
        GeomType::Cylinder => ray_cylinder(pose, size[0], size[1], pnt, vec),
        GeomType::Box => ray_box(pose, &s, pnt, vec),
        GeomType::Mesh(k) => ray_mesh(assets.meshes.get(k)?, pose, pnt, vec),
        GeomType::HField(k) => ray_hfield(assets.hfields.get(k)?, pose, pnt, vec),
    }
}
// ANCHOR_END: ray_geom

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::{axis_angle_mat, Mat3};

    fn at(pos: Vec3) -> GeomPose {
        GeomPose {
            pos,
            rot: Mat3::identity(),
        }
    }

    #[test]
    fn sphere_from_outside_and_inside() {
        let c = Vec3::new(1.0, 2.0, 3.0);
        let h = ray_sphere(&c, 0.5, &Vec3::new(1.0, 2.0, 0.0), &Vec3::new(0.0, 0.0, 2.0)).unwrap();
        assert!((h.dist - 1.25).abs() < 1e-15);
        assert!((h.normal - Vec3::new(0.0, 0.0, -1.0)).norm() < 1e-15);
        // from the centre: the exit, normal still outward
        let h = ray_sphere(&c, 0.5, &c, &Vec3::new(0.0, 0.0, 1.0)).unwrap();
        assert!((h.dist - 0.5).abs() < 1e-15 && (h.normal - Vec3::z()).norm() < 1e-15);
        // behind
        assert!(ray_sphere(&c, 0.5, &Vec3::zeros(), &Vec3::new(0.0, 0.0, -1.0)).is_none());
    }

    #[test]
    fn plane_is_one_sided() {
        let p = at(Vec3::zeros());
        let down = Vec3::new(0.0, 0.0, -1.0);
        let h = ray_plane(&p, &[0.0; 3], &Vec3::new(5.0, 5.0, 2.0), &down).unwrap();
        assert_eq!(h.dist, 2.0);
        assert!(ray_plane(&p, &[0.0; 3], &Vec3::new(5.0, 5.0, -2.0), &-down).is_none());
        assert!(ray_plane(&p, &[1.0, 1.0, 0.1], &Vec3::new(5.0, 5.0, 2.0), &down).is_none());
    }

    #[test]
    fn box_exit_from_inside() {
        let p = GeomPose {
            pos: Vec3::new(0.0, 0.0, 1.0),
            rot: axis_angle_mat(&Vec3::z(), 0.5),
        };
        let s = Vec3::new(0.1, 0.2, 0.3);
        let h = ray_box(&p, &s, &p.pos, &Vec3::new(0.0, 0.0, 3.0)).unwrap();
        assert!((h.dist - 0.1).abs() < 1e-15);
        assert!((h.normal - Vec3::z()).norm() < 1e-15);
    }
}
