//! MuJoCo 4.0's multi-contact for convex shapes (`multicontact` and `polygonClip` in
//! `engine_collision_gjk.c`), written from the method: one GJK/EPA contact gives a normal `n`;
//! when both shapes present a flat face to it, the contact patch is the overlap of the two faces,
//! found by clipping one face polygon against the side planes of the other; when one presents a
//! face and the other an edge lying in it, the edge is clipped. The patch's corners (at most 4,
//! pruned to the largest-area quadrilateral) are the contacts, each with its own depth.
//!
//! The faces and edges each shape offers:
//!
//! | shape | faces | edges |
//! |---|---|---|
//! | box | its 6 rectangles | the 3 edges at the support corner |
//! | cylinder | its two discs, as regular 16-gons | the side line through the support point |
//! | capsule | none | its segment, moved out by the radius |
//! | mesh hull | its flat polygons | the hull edges at the support vertex |
//! | sphere, ellipsoid | none | none |
//!
//! A face counts when its outward normal is within `acos(FACE_TOL)` (5.1 degrees) of the
//! direction to the other shape; an edge when it is within `asin(EDGE_TOL)` of parallel to the
//! other's face.

use super::convex::{ConvexShape, Shape};
use super::{frame::frame_from_normal, Contact};
use crate::model::constants::mjMINVAL;
use crate::spatial::Vec3;

/// Two faces are aligned when their normals' dot product is below `-FACE_TOL`.
pub const FACE_TOL: f64 = 0.996;
/// An edge lies in a face when `|edge . normal| < EDGE_TOL` (unit vectors).
pub const EDGE_TOL: f64 = 0.0888;
/// The number of sides of the polygon that stands for a cylinder's disc.
pub const CYLINDER_SIDES: usize = 16;

/// A flat face in world coordinates: vertices (clockwise seen from outside, MuJoCo's order)
/// and the outward unit normal.
struct Face {
    verts: Vec<Vec3>,
    normal: Vec3,
}

/// The face of `s` whose outward normal is within `FACE_TOL` of `d` (world, unit), if any.
fn face_toward(s: &ConvexShape, d: &Vec3) -> Option<Face> {
    let r = &s.pose.rot;
    let local = r.transpose() * d;
    let world = |p: Vec3| r * p + s.pose.pos;
    match s.shape {
        Shape::Box(h) => {
            // MuJoCo's boxFace order: +x, -x, +y, -y, +z, -z
            for (k, axis) in [0, 0, 1, 1, 2, 2].into_iter().enumerate() {
                let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                if sign * local[axis] > FACE_TOL {
                    let c: [[f64; 3]; 4] = match k {
                        0 => [[1., 1., 1.], [1., 1., -1.], [1., -1., -1.], [1., -1., 1.]],
                        1 => [[-1., 1., -1.], [-1., 1., 1.], [-1., -1., 1.], [-1., -1., -1.]],
                        2 => [[-1., 1., -1.], [1., 1., -1.], [1., 1., 1.], [-1., 1., 1.]],
                        3 => [[-1., -1., 1.], [1., -1., 1.], [1., -1., -1.], [-1., -1., -1.]],
                        4 => [[-1., 1., 1.], [1., 1., 1.], [1., -1., 1.], [-1., -1., 1.]],
                        _ => [[1., 1., -1.], [-1., 1., -1.], [-1., -1., -1.], [1., -1., -1.]],
                    };
                    let mut n = Vec3::zeros();
                    n[axis] = sign;
                    return Some(Face {
                        verts: c
                            .iter()
                            .map(|v| world(Vec3::new(v[0] * h.x, v[1] * h.y, v[2] * h.z)))
                            .collect(),
                        normal: r * n,
                    });
                }
            }
            None
        }
        Shape::Cylinder(rad, h) => {
            let sign = if local.z > FACE_TOL {
                1.0
            } else if local.z < -FACE_TOL {
                -1.0
            } else {
                return None;
            };
            // clockwise seen from outside: decreasing angle on the top disc, increasing below
            let verts = (0..CYLINDER_SIDES)
                .map(|k| {
                    let a = -sign * std::f64::consts::TAU * k as f64 / CYLINDER_SIDES as f64;
                    world(Vec3::new(rad * a.cos(), rad * a.sin(), sign * h))
                })
                .collect();
            Some(Face {
                verts,
                normal: r * Vec3::new(0.0, 0.0, sign),
            })
        }
        Shape::Hull(hull) => {
            let (k, best) = hull
                .normals
                .iter()
                .enumerate()
                .map(|(k, n)| (k, n.dot(&local)))
                .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
            (best > FACE_TOL).then(|| Face {
                // MuJoCo's meshFace walks the polygon backwards: clockwise from outside
                verts: hull.polygons[k]
                    .iter()
                    .rev()
                    .map(|&v| world(hull.vertices[v]))
                    .collect(),
                normal: r * hull.normals[k],
            })
        }
        _ => None,
    }
}

/// The edges of `s` at its support point along `d` (world), each as (start, end), in world
/// coordinates; a capsule's segment is moved out by its radius along `d`.
fn edges_toward(s: &ConvexShape, d: &Vec3) -> Vec<[Vec3; 2]> {
    let r = &s.pose.rot;
    let local = r.transpose() * d;
    let world = |p: Vec3| r * p + s.pose.pos;
    let sgn = |x: f64| if x >= 0.0 { 1.0 } else { -1.0 };
    match s.shape {
        Shape::Box(h) => {
            let c = Vec3::new(sgn(local.x) * h.x, sgn(local.y) * h.y, sgn(local.z) * h.z);
            (0..3)
                .map(|k| {
                    let mut e = c;
                    e[k] = -e[k];
                    [world(c), world(e)]
                })
                .collect()
        }
        Shape::Cylinder(rad, h) => {
            let n2 = (local.x * local.x + local.y * local.y).sqrt();
            if n2 < mjMINVAL {
                return vec![];
            }
            let (x, y) = (rad * local.x / n2, rad * local.y / n2);
            let z = sgn(local.z) * h;
            vec![[world(Vec3::new(x, y, z)), world(Vec3::new(x, y, -z))]]
        }
        Shape::Capsule(rad, h) => {
            let z = sgn(local.z) * h;
            let out = d.normalize() * rad;
            vec![[
                world(Vec3::new(0.0, 0.0, z)) + out,
                world(Vec3::new(0.0, 0.0, -z)) + out,
            ]]
        }
        Shape::Hull(hull) => {
            let v = hull.support_index(&local);
            hull.neighbors[v]
                .iter()
                .map(|&w| [world(hull.vertices[v]), world(hull.vertices[w])])
                .collect()
        }
        _ => vec![],
    }
}

/// Twice the area of the quadrilateral a b c d (MuJoCo's `area4`, halved there).
fn area4(a: &Vec3, b: &Vec3, c: &Vec3, d: &Vec3) -> f64 {
    0.5 * ((d - a).cross(&(b - d)) + (c - b).cross(&(a - c))).norm()
}

// ANCHOR: polygon_quad
/// MuJoCo's `polygonQuad`: the corners (indices) of a large-area quadrilateral of a convex
/// polygon, by rotating calipers: for each first corner, move the fourth, third and second
/// corners forward while the area grows. Bounded: each corner moves at most once round.
fn polygon_quad(p: &[Vec3]) -> [usize; 4] {
    let n = p.len();
    let nx = |k: usize| (k + 1) % n;
    let (mut b, mut c, mut d) = (1, 2, 3);
    let mut res = [0, 1, 2, 3];
    let mut m = area4(&p[0], &p[1], &p[2], &p[3]);
    for a in 0..n {
        for _ in 0..n {
            let m_next = area4(&p[a], &p[b], &p[c], &p[nx(d)]);
            if m_next <= m {
                break;
            }
            m = m_next;
            d = nx(d);
            res = [a, b, c, d];
            for _ in 0..n {
                let m_next = area4(&p[a], &p[b], &p[nx(c)], &p[d]);
                if m_next <= m {
                    break;
                }
                m = m_next;
                c = nx(c);
                res = [a, b, c, d];
            }
            for _ in 0..n {
                let m_next = area4(&p[a], &p[nx(b)], &p[c], &p[d]);
                if m_next <= m {
                    break;
                }
                m = m_next;
                b = nx(b);
                res = [a, b, c, d];
            }
        }
        if b == a {
            b = nx(b);
            if c == b {
                c = nx(c);
                if d == c {
                    d = nx(d);
                }
            }
        }
    }
    res
}
// ANCHOR_END: polygon_quad

// ANCHOR: polygon_clip
/// MuJoCo's `polygonClip`: clip polygon (or edge) `face2` by the side planes of `face1` (normal
/// `n`, at least a triangle; each side plane contains `n` and one edge, Sutherland-Hodgman),
/// keep the points with `(v - face1_0) . n <= margin` (penetrating, or within the margin) and
/// return them with that signed distance: at most 4 (the largest quadrilateral of more), or the
/// two farthest apart when `face2` is an edge.
fn polygon_clip(face1: &[Vec3], face2: &[Vec3], n: &Vec3, margin: f64) -> Vec<(Vec3, f64)> {
    if face1.len() < 3 {
        return vec![];
    }
    let m1 = face1.len();
    let planes: Vec<(Vec3, f64)> = (0..m1)
        .map(|i| {
            let (v1, v2) = (face1[i], face1[(i + 1) % m1]);
            let pn = (v2 - v1).cross(n).normalize();
            (pn, pn.dot(&v1))
        })
        .collect();
    let mut poly: Vec<Vec3> = face2.to_vec();
    for (e, (pn, pd)) in planes.iter().enumerate() {
        let a = face1[e];
        let inside = |p: &Vec3| (p - a).dot(pn) > -mjMINVAL;
        let mut clipped = Vec::with_capacity(poly.len() + 2);
        for i in 0..poly.len() {
            let p = poly[i];
            let q = poly[(i + 1) % poly.len()];
            let (in1, in2) = (inside(&p), inside(&q));
            if !in1 && !in2 {
                continue;
            }
            if in1 && in2 {
                clipped.push(q);
                continue;
            }
            let pq = q - p;
            let den = pn.dot(&pq);
            if den != 0.0 {
                let t = (pd - pn.dot(&p)) / den;
                if (0.0..=1.0).contains(&t) {
                    clipped.push(p + pq * t);
                }
            }
            if in2 {
                clipped.push(q);
            }
        }
        poly = clipped;
    }
    let kept: Vec<(Vec3, f64)> = poly
        .into_iter()
        .map(|v| (v, (v - face1[0]).dot(n)))
        .filter(|&(_, d)| d <= margin)
        .collect();
    if kept.len() > 4 {
        let pts: Vec<Vec3> = kept.iter().map(|k| k.0).collect();
        return polygon_quad(&pts).iter().map(|&i| kept[i]).collect();
    }
    if face2.len() == 2 && kept.len() > 2 {
        let mut best = (0, 1, 0.0);
        for i in 0..kept.len() {
            for j in i + 1..kept.len() {
                let d2 = (kept[j].0 - kept[i].0).norm_squared();
                if d2 > best.2 {
                    best = (i, j, d2);
                }
            }
        }
        return vec![kept[best.0], kept[best.1]];
    }
    kept
}
// ANCHOR_END: polygon_clip

// ANCHOR: patch
/// The multi-contact patch of two convex shapes whose first contact has normal `n` (from A into
/// B), appended to `out` (nothing when the shapes do not meet face to face or edge to face):
///
/// * face - face (A's face normal `n_1`, B's `n_2`, `n_1 . n_2 < -FACE_TOL`): B's face clipped
///   by A's; each point `v` (on B's face) has depth `d = (v - a_0) . n_1`, position
///   `v + d/2 n_2` and normal `-n_2`;
/// * edge of A in B's face: the edge clipped by B's face, position `v - d/2 n_2`, normal `-n_2`;
/// * edge of B in A's face: position `v - d/2 n_1`, normal `n_1`.
pub fn patch(sa: &ConvexShape, sb: &ConvexShape, n: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    let fa = face_toward(sa, n);
    let fb = face_toward(sb, &-n);
    let mut push = |pos: Vec3, normal: Vec3, dist: f64| {
        out.push(Contact {
            pos,
            frame: frame_from_normal(&normal),
            dist,
        })
    };
    match (&fa, &fb) {
        (Some(a), Some(b)) if a.normal.dot(&b.normal) < -FACE_TOL => {
            for (v, d) in polygon_clip(&a.verts, &b.verts, &a.normal, margin) {
                push(v + b.normal * (0.5 * d), -b.normal, d);
            }
        }
        (None, Some(b)) => {
            let Some(e) = edges_toward(sa, n)
                .into_iter()
                .find(|e| ((e[1] - e[0]).normalize().dot(&b.normal)).abs() < EDGE_TOL)
            else {
                return;
            };
            for (v, d) in polygon_clip(&b.verts, &e, &b.normal, margin) {
                push(v - b.normal * (0.5 * d), -b.normal, d);
            }
        }
        (Some(a), None) => {
            let Some(e) = edges_toward(sb, &-n)
                .into_iter()
                .find(|e| ((e[1] - e[0]).normalize().dot(&a.normal)).abs() < EDGE_TOL)
            else {
                return;
            };
            for (v, d) in polygon_clip(&a.verts, &e, &a.normal, margin) {
                push(v - a.normal * (0.5 * d), a.normal, d);
            }
        }
        _ => {}
    }
}
// ANCHOR_END: patch
