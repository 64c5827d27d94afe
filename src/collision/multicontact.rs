//! MuJoCo 4.0's multi-contact for convex shapes (`multicontact` and `polygonClip` in
//! `engine_collision_gjk.c`), written from the method: one GJK/EPA contact gives a normal `n`;
//! the features each shape meets the other with there (a vertex, an edge or a face: the support
//! points MuJoCo's final simplex or polytope face holds on it) offer faces and edges; when a
//! face of one opposes a face of the other, the contact patch is the overlap of the two faces,
//! found by clipping one face polygon against the side planes of the other; when an edge of
//! one lies in a face of the other, the edge is clipped. The patch's corners (at most 4, pruned
//! to the largest-area quadrilateral) within the margin are the contacts, each with its own
//! depth.
//!
//! The features each shape offers (`features`):
//!
//! | shape | at a vertex | at an edge | at a face |
//! |---|---|---|---|
//! | box | its 3 faces and 3 edges | the edge and its 2 faces | the rectangle |
//! | mesh hull | its polygons and hull edges | the edge and its 2 polygons | the polygon |
//! | cylinder | nothing (a rim point) | the side line | the disc, as a regular 16-gon |
//! | capsule | its segment, moved out by the radius (always counted a vertex) | | |
//! | sphere, ellipsoid | nothing | | |
//!
//! Two faces oppose when their normals' dot product is below `-FACE_TOL` (within 5.1 degrees);
//! an edge lies in a face when it is within `asin(EDGE_TOL)` (5.1 degrees) of parallel to it.
//!
//! MuJoCo's source mirror read for this (3.x) does the patch for boxes and meshes only, and for
//! penetrating shapes without margin only; 4.0 does more, and the rules for capsules,
//! cylinders, margins and which face clips which are inferred from 4.0's output on
//! purpose-built cases (named where they are used), not read.

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

/// A flat face in world coordinates: its vertices (clockwise seen from outside, MuJoCo's order)
/// are `Features::verts[start..start + len]`; `normal` is the outward unit normal.
#[derive(Clone, Copy, Debug)]
struct Face {
    start: usize,
    len: usize,
    normal: Vec3,
}

/// The features a shape presents along a direction, as MuJoCo 4.0's multi-contact reads them
/// off the support points of its GJK simplex or EPA face (`meshNormals`, `boxNormals`,
/// `meshEdgeNormals`, `boxEdgeNormals` of `engine_collision_gjk.c`): the dimension of the
/// feature (1 a vertex, 2 an edge, 3 a face), the flat faces that contain it (their vertices
/// one after another in `verts`) and the edges that end at it. Cleared and refilled by
/// `features` (a repeated call allocates nothing once the vectors have grown).
#[derive(Clone, Debug, Default)]
pub struct Features {
    dim: usize,
    verts: Vec<Vec3>,
    faces: Vec<Face>,
    edges: Vec<[Vec3; 2]>,
    /// the hull vertices of the feature (hulls only), grown over the hull graph
    ids: Vec<usize>,
}

impl Features {
    /// The vertices of face `f`.
    fn face(&self, f: &Face) -> &[Vec3] {
        &self.verts[f.start..f.start + f.len]
    }

    /// Adds a face with the vertices `verts` and outward normal `normal`.
    fn push_face(&mut self, verts: impl Iterator<Item = Vec3>, normal: Vec3) {
        let start = self.verts.len();
        self.verts.extend(verts);
        self.faces.push(Face {
            start,
            len: self.verts.len() - start,
            normal,
        });
    }
}

/// The storage of [`patch_with`], kept between calls: the features of both shapes and the
/// clipping buffers. Every vector is cleared and refilled, never shrunk, so that a repeated
/// call allocates nothing once they have grown to the largest patch seen.
#[derive(Clone, Debug, Default)]
pub struct PatchScratch {
    /// The features of shape A along `n`.
    fa: Features,
    /// The features of shape B along `-n`.
    fb: Features,
    /// The polygon being clipped, and the one each clipping pass writes.
    poly: Vec<Vec3>,
    clipped: Vec<Vec3>,
    /// The clipped points kept (within the margin) with their depths, then the ones returned.
    kept: Vec<(Vec3, f64)>,
    /// The kept points alone, for `polygon_quad`.
    pts: Vec<Vec3>,
}

/// The corners of a box (bit `i` of `k` set: `+h_i`) that attain its support along `d` (local
/// frame), to within `FEATURE_TOL` of its size: the vertices of the feature the contact lies
/// on, at most 8, in increasing order. In exact arithmetic these are the support points
/// MuJoCo's converged simplex or polytope face holds on that shape.
fn extremal(corner: impl Fn(usize) -> Vec3, d: &Vec3) -> ([usize; 8], usize) {
    let size = (0..8).map(|k| corner(k).norm()).fold(0.0, f64::max).max(mjMINVAL);
    let best = (0..8).map(|k| corner(k).dot(d)).fold(f64::NEG_INFINITY, f64::max);
    let mut ids = [0; 8];
    let mut n = 0;
    for k in 0..8 {
        if corner(k).dot(d) >= best - FEATURE_TOL * size {
            ids[n] = k;
            n += 1;
        }
    }
    (ids, n)
}

/// Tolerance (relative to the shape's size) on the support value within which a vertex
/// belongs to the contact feature. MuJoCo's features come from its EPA, which stops within
/// `ccd_tolerance` (1e-6) of the boundary, and mesh vertices are single precision: a cylinder
/// turned by 1.5708 rad (its side 3.7e-6 off parallel to the face, its two ends 1.5e-6 apart
/// along the normal) still lies on its side line in MuJoCo 4.0 (fixture `rule_cyl_side_on_box`).
pub const FEATURE_TOL: f64 = 1e-5;

/// MuJoCo's box face `k` (order +x, -x, +y, -y, +z, -z; `boxFace`), clockwise seen from
/// outside: its 4 corners (as signs of the half-sizes) and outward normal, in the box frame.
fn box_face(k: usize) -> ([[f64; 3]; 4], Vec3) {
    let c: [[f64; 3]; 4] = match k {
        0 => [[1., 1., 1.], [1., 1., -1.], [1., -1., -1.], [1., -1., 1.]],
        1 => [[-1., 1., -1.], [-1., 1., 1.], [-1., -1., 1.], [-1., -1., -1.]],
        2 => [[-1., 1., -1.], [1., 1., -1.], [1., 1., 1.], [-1., 1., 1.]],
        3 => [[-1., -1., 1.], [1., -1., 1.], [1., -1., -1.], [-1., -1., -1.]],
        4 => [[-1., 1., 1.], [1., 1., 1.], [1., -1., 1.], [-1., -1., 1.]],
        _ => [[1., 1., -1.], [-1., 1., -1.], [-1., -1., -1.], [1., -1., -1.]],
    };
    let mut n = Vec3::zeros();
    n[k / 2] = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
    (c, n)
}

// ANCHOR: features
/// The features of `s` at its support along `d` (world, unit, pointing from `s` towards the
/// other shape):
///
/// * box: the corners attaining the support; one corner offers its three faces and three
///   edges, two corners their edge and its two faces, four corners their face;
/// * mesh hull: likewise with the hull's vertices and flat polygons (a vertex offers every
///   polygon around it and every hull edge leaving it);
/// * capsule: its segment moved out by the radius along `d`, an edge; MuJoCo 4.0 counts it as a
///   vertex (dimension 1) however it lies, so a capsule's edge is always tried first (inferred
///   from 4.0's output: a capsule whose segment is perpendicular to the normal, against a mesh
///   vertex, still gets its segment clipped by one of that vertex's faces);
/// * cylinder: the disc facing `d` within `FACE_TOL`, as a regular 16-gon (dimension 3), else,
///   when the side is perpendicular to `d`, the side line through the support point (dimension
///   2), else a rim point with no edge (dimension 1);
/// * sphere and ellipsoid: nothing.
fn features(s: &ConvexShape, d: &Vec3, f: &mut Features) {
    let r = &s.pose.rot;
    let local = r.transpose() * d;
    let world = |p: Vec3| r * p + s.pose.pos;
    let sgn = |x: f64| if x >= 0.0 { 1.0 } else { -1.0 };
    f.verts.clear();
    f.faces.clear();
    f.edges.clear();
    f.dim = 3;
    match s.shape {
        Shape::Box(h) => {
            let corner = |k: usize| {
                let b = |i: usize| if k & (1 << i) != 0 { 1.0 } else { -1.0 };
                Vec3::new(b(0) * h.x, b(1) * h.y, b(2) * h.z)
            };
            let (ids, n) = extremal(corner, &local);
            let ids = &ids[..n];
            let first = ids[0];
            f.dim = n.min(3);
            // the faces containing every extremal corner: axis k with one sign for all
            for k in 0..3 {
                let bit = |c: usize| c & (1 << k) != 0;
                if ids.iter().all(|&c| bit(c) == bit(first)) {
                    let (c, normal) = box_face(2 * k + usize::from(!bit(first)));
                    f.push_face(
                        c.iter().map(|v| world(Vec3::new(v[0] * h.x, v[1] * h.y, v[2] * h.z))),
                        r * normal,
                    );
                }
            }
            match n {
                1 => f
                    .edges
                    .extend((0..3).map(|k| [world(corner(first)), world(corner(first ^ (1 << k)))])),
                2 => f.edges.push([world(corner(ids[0])), world(corner(ids[1]))]),
                _ => {}
            }
        }
        Shape::Hull(hull) => {
            // the support vertex and its neighbours within the tolerance, grown over the hull
            // graph (the feature is connected)
            let best_k = hull.support_index(&local);
            let best = hull.vertices[best_k].dot(&local);
            let tol = FEATURE_TOL * hull.vertices[best_k].norm().max(mjMINVAL);
            f.ids.clear();
            f.ids.push(best_k);
            let mut k = 0;
            while k < f.ids.len() {
                for &w in &hull.neighbors[f.ids[k]] {
                    if !f.ids.contains(&w) && hull.vertices[w].dot(&local) >= best - tol {
                        f.ids.push(w);
                    }
                }
                k += 1;
            }
            f.dim = f.ids.len().min(3);
            let id0 = f.ids[0];
            for &k in &hull.vertex_polygons[id0] {
                if f.ids[1..].iter().all(|v| hull.polygons[k].contains(v)) {
                    // MuJoCo's meshFace walks the polygon backwards: clockwise from outside
                    let start = f.verts.len();
                    f.verts
                        .extend(hull.polygons[k].iter().rev().map(|&v| world(hull.vertices[v])));
                    f.faces.push(Face {
                        start,
                        len: f.verts.len() - start,
                        normal: r * hull.normals[k],
                    });
                }
            }
            let v = world(hull.vertices[id0]);
            match f.ids.len() {
                1 => f
                    .edges
                    .extend(hull.neighbors[id0].iter().map(|&w| [v, world(hull.vertices[w])])),
                2 => f.edges.push([v, world(hull.vertices[f.ids[1]])]),
                _ => {}
            }
        }
        Shape::Capsule(rad, h) => {
            let z = sgn(local.z) * h;
            let out = d * rad;
            f.dim = 1;
            f.edges.push([
                world(Vec3::new(0.0, 0.0, z)) + out,
                world(Vec3::new(0.0, 0.0, -z)) + out,
            ]);
        }
        Shape::Cylinder(rad, h) => {
            if local.z.abs() > FACE_TOL {
                let sign = sgn(local.z);
                // clockwise seen from outside: decreasing angle on the top disc, increasing below
                f.push_face(
                    (0..CYLINDER_SIDES).map(|k| {
                        let a = -sign * std::f64::consts::TAU * k as f64 / CYLINDER_SIDES as f64;
                        world(Vec3::new(rad * a.cos(), rad * a.sin(), sign * h))
                    }),
                    r * Vec3::new(0.0, 0.0, sign),
                );
                return;
            }
            let n2 = (local.x * local.x + local.y * local.y).sqrt();
            if n2 < mjMINVAL {
                return;
            }
            let (x, y) = (rad * local.x / n2, rad * local.y / n2);
            let z = sgn(local.z) * h;
            if local.z.abs() * h > FEATURE_TOL * (h + rad) {
                // a rim point: no edge (inferred from 4.0, which keeps one contact for a
                // cylinder whose side is tilted to a face, within the margin or not)
                f.dim = 1;
                return;
            }
            f.dim = 2;
            f.edges.push([world(Vec3::new(x, y, z)), world(Vec3::new(x, y, -z))]);
        }
        _ => {}
    }
}
// ANCHOR_END: features

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
/// leave them in `ws.kept` with that signed distance: at most 4 (the largest quadrilateral of
/// more), or the two farthest apart when `face2` is an edge. With `prune` false, every point is
/// kept. The clipping passes write into `ws.poly` and `ws.clipped` in turn.
fn polygon_clip(face1: &[Vec3], face2: &[Vec3], n: &Vec3, margin: f64, prune: bool, ws: &mut PatchScratch) {
    ws.kept.clear();
    if face1.len() < 3 {
        return;
    }
    let m1 = face1.len();
    ws.poly.clear();
    ws.poly.extend_from_slice(face2);
    for e in 0..m1 {
        // the side plane through edge e: outward normal pn, offset pd
        let (a, v2) = (face1[e], face1[(e + 1) % m1]);
        let pn = (v2 - a).cross(n).normalize();
        let pd = pn.dot(&a);
        let inside = |p: &Vec3| (p - a).dot(&pn) > -mjMINVAL;
        let (poly, clipped) = (&ws.poly, &mut ws.clipped);
        clipped.clear();
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
        std::mem::swap(&mut ws.poly, &mut ws.clipped);
    }
    ws.kept.extend(
        ws.poly
            .iter()
            .map(|&v| (v, (v - face1[0]).dot(n)))
            .filter(|&(_, d)| d <= margin),
    );
    if !prune {
        return;
    }
    if ws.kept.len() > 4 {
        ws.pts.clear();
        ws.pts.extend(ws.kept.iter().map(|k| k.0));
        let quad = polygon_quad(&ws.pts);
        let chosen = quad.map(|i| ws.kept[i]);
        ws.kept.clear();
        ws.kept.extend_from_slice(&chosen);
        return;
    }
    if face2.len() == 2 && ws.kept.len() > 2 {
        let kept = &ws.kept;
        let mut best = (0, 1, 0.0);
        for i in 0..kept.len() {
            for j in i + 1..kept.len() {
                let d2 = (kept[j].0 - kept[i].0).norm_squared();
                if d2 > best.2 {
                    best = (i, j, d2);
                }
            }
        }
        let chosen = [kept[best.0], kept[best.1]];
        ws.kept.clear();
        ws.kept.extend_from_slice(&chosen);
    }
}
// ANCHOR_END: polygon_clip

// ANCHOR: patch
/// The multi-contact patch of two convex shapes whose first contact has normal `n` (from A into
/// B), appended to `out` (nothing when the shapes do not meet face to face or edge to face),
/// in the storage `ws` (a repeated call allocates nothing once it has grown). MuJoCo 4.0's
/// `multicontact`, with the features of `features`:
///
/// 1. face - face: the face of A and face of B whose normals oppose most, within `FACE_TOL`
///    (`n_1 . n_2 < -FACE_TOL`): the face with more corners is clipped by the other, B's by
///    A's on a tie (the 3.x code always clips B's by A's; 4.0's points of a tilted disc on a
///    box are the disc's corners, of a tilted box mesh on a box the mesh's, inferred from the
///    fixture's `cyl_tilted_on_box_*` and `rule_mesh_tilted_margin_*`); each point `v` on the
///    clipped face has the depth `d` of its distance to the other face's plane, position midway
///    (`v -+ d/2 n_2`) and normal `-n_2`;
/// 2. otherwise, when A's feature is an edge or a vertex of no higher dimension than B's: the
///    edge of A closest to lying in a face of B (`|e . n_2| < EDGE_TOL`) is clipped by that
///    face, position `v - d/2 n_2`, normal `-n_2`; if none lies in one, no patch;
/// 3. otherwise, when B's feature is an edge or a vertex: the edge of B (that edge, or one
///    leaving the vertex) lying in a face of A, position `v - d/2 n_1`, normal `n_1`. Against a
///    cylinder's disc only B's edge, not a vertex's edges (inferred from 4.0, which keeps one
///    contact for a box corner whose edge lies in a disc within `EDGE_TOL` but not exactly,
///    though the far end of that edge is within the margin).
pub fn patch_with(
    sa: &ConvexShape,
    sb: &ConvexShape,
    n: &Vec3,
    margin: f64,
    ws: &mut PatchScratch,
    out: &mut Vec<Contact>,
) {
    patch_into(sa, sb, n, margin, true, ws, out)
}

/// [`patch_with`] with fresh storage (allocates).
pub fn patch(sa: &ConvexShape, sb: &ConvexShape, n: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    patch_with(sa, sb, n, margin, &mut PatchScratch::default(), out)
}

/// [`patch`] without the pruning to 4 points (or the edge's 2): every corner of the clipped
/// polygon, each with its depth. Where the polygon has more than 4 corners, MuJoCo keeps the 4
/// of `polygonQuad`; for the regular 16-gon of a cylinder's disc several quadrilaterals have
/// the same area and which one it keeps is decided by rounding, so tests compare MuJoCo's
/// points with these candidates.
pub fn patch_polygon(sa: &ConvexShape, sb: &ConvexShape, n: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    patch_into(sa, sb, n, margin, false, &mut PatchScratch::default(), out)
}

fn patch_into(
    sa: &ConvexShape,
    sb: &ConvexShape,
    n: &Vec3,
    margin: f64,
    prune: bool,
    ws: &mut PatchScratch,
    out: &mut Vec<Contact>,
) {
    // the features live in the scratch; taken out for the call so the clipping buffers can be
    // borrowed beside them (moving a Vec moves no elements), and put back at the end
    let (mut fa, mut fb) = (std::mem::take(&mut ws.fa), std::mem::take(&mut ws.fb));
    features(sa, n, &mut fa);
    features(sb, &-n, &mut fb);
    patch_of(sa, sb, &fa, &fb, margin, prune, ws, out);
    (ws.fa, ws.fb) = (fa, fb);
}

/// The patch rule on the features `fa`, `fb` of the two shapes (see [`patch_with`]).
#[allow(clippy::too_many_arguments)]
fn patch_of(
    sa: &ConvexShape,
    sb: &ConvexShape,
    fa: &Features,
    fb: &Features,
    margin: f64,
    prune: bool,
    ws: &mut PatchScratch,
    out: &mut Vec<Contact>,
) {
    let mut push = |pos: Vec3, normal: Vec3, dist: f64| {
        out.push(Contact {
            pos,
            frame: frame_from_normal(&normal),
            dist,
        })
    };
    // the most opposed pair of faces, if within FACE_TOL
    let mut best: Option<(&Face, &Face, f64)> = None;
    for a in &fa.faces {
        for b in &fb.faces {
            let c = a.normal.dot(&b.normal);
            if c < -FACE_TOL && best.is_none_or(|x| c < x.2) {
                best = Some((a, b, c));
            }
        }
    }
    if let Some((a, b, _)) = best {
        if a.len > b.len {
            // A's face clipped by B's: points on A's face
            polygon_clip(fb.face(b), fa.face(a), &b.normal, margin, prune, ws);
            for &(v, d) in &ws.kept {
                push(v - b.normal * (0.5 * d), -b.normal, d);
            }
        } else {
            // B's face clipped by A's: points on B's face
            polygon_clip(fa.face(a), fb.face(b), &a.normal, margin, prune, ws);
            for &(v, d) in &ws.kept {
                push(v + b.normal * (0.5 * d), -b.normal, d);
            }
        }
        return;
    }
    // the (face, edge) pair with the edge closest to lying in the face, if within EDGE_TOL
    fn in_face<'f>(faces: &'f [Face], edges: &[[Vec3; 2]]) -> Option<(&'f Face, [Vec3; 2], f64)> {
        let mut best: Option<(&Face, [Vec3; 2], f64)> = None;
        for f in faces {
            for e in edges {
                let c = ((e[1] - e[0]).normalize().dot(&f.normal)).abs();
                if c < EDGE_TOL && best.is_none_or(|x| c < x.2) {
                    best = Some((f, *e, c));
                }
            }
        }
        best
    }
    if fa.dim < 3 && fa.dim <= fb.dim {
        if let Some((f, e, _)) = in_face(&fb.faces, &fa.edges) {
            polygon_clip(fb.face(f), &e, &f.normal, margin, prune, ws);
            for &(v, d) in &ws.kept {
                push(v - f.normal * (0.5 * d), -f.normal, d);
            }
        }
    } else if fb.dim == 2 || (fb.dim == 1 && !matches!(sa.shape, Shape::Cylinder(..))) {
        // a cylinder's side line is an edge only as MuJoCo's first geom (inferred from 4.0: a
        // cylinder lying on its side on another's disc keeps one contact, on a box or mesh two)
        let edges: &[[Vec3; 2]] = if matches!(sb.shape, Shape::Cylinder(..)) {
            &[]
        } else {
            &fb.edges
        };
        if let Some((f, e, _)) = in_face(&fa.faces, edges) {
            polygon_clip(fa.face(f), &e, &f.normal, margin, prune, ws);
            for &(v, d) in &ws.kept {
                push(v - f.normal * (0.5 * d), f.normal, d);
            }
        }
    }
}
// ANCHOR_END: patch
