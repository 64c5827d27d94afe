//! The box pairs of MuJoCo's `engine_collision_box.c`: sphere-box, capsule-box and box-box.

use super::primitives::{axis, push};
use super::{make_frame, Contact, GeomPose};
use crate::model::constants::{mjMAXVAL, mjMINVAL};
use crate::spatial::{Mat3, Vec3};

// ANCHOR: sphere_box
/// Sphere of radius `r` against a box of half-sizes `half` (`mjraw_SphereBox`). In the box
/// frame the sphere centre `c` is clamped to the box; the normal runs from `c` to the clamped
/// point (sphere to box) and `pos` is midway between the clamped point and the sphere's deepest
/// point. A centre inside the box (clamped point = centre) takes the nearest face: normal
/// against that face's outward direction, `dist = -(distance to the face) - r`.
pub fn sphere_box_raw(center: &Vec3, r: f64, bx: &GeomPose, half: &Vec3, margin: f64, out: &mut Vec<Contact>) -> bool {
    let c = bx.rot.transpose() * (center - bx.pos);
    let clamped = Vec3::new(
        c.x.clamp(-half.x, half.x),
        c.y.clamp(-half.y, half.y),
        c.z.clamp(-half.z, half.z),
    );
    let mut t = clamped - c;
    let mut dist = t.norm();
    if dist < mjMINVAL {
        t = Vec3::x();
    } else {
        t /= dist;
    }
    if dist - r > margin {
        return false;
    }
    let (pos, n) = if dist <= mjMINVAL {
        let mut closest = 2.0 * (half.x + half.y + half.z);
        let mut k = 0;
        for i in 0..6 {
            let face = if i % 2 == 1 { half[i / 2] } else { -half[i / 2] };
            let gap = (face - c[i / 2]).abs();
            if closest > gap {
                closest = gap;
                k = i;
            }
        }
        let mut nearest = Vec3::zeros();
        nearest[k / 2] = if k % 2 == 1 { -1.0 } else { 1.0 };
        dist = -closest;
        (c + nearest * (0.5 * (r - closest)), bx.rot * nearest)
    } else {
        let deepest = c + t * r;
        ((clamped + deepest) * 0.5, bx.rot * t)
    };
    push(out, bx.rot * pos + bx.pos, &n, &Vec3::zeros(), dist - r);
    true
}
// ANCHOR_END: sphere_box

/// Sphere against box (`mjc_SphereBox`): one contact.
pub fn sphere_box(s: &GeomPose, r: f64, bx: &GeomPose, half: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    sphere_box_raw(&s.pos, r, bx, half, margin, out);
}

/// Box-box rounding slack on the separation tests, times the summed half-sizes
/// (`mjBOXBOX_SEPEPS`).
const SEPEPS: f64 = 1e-13;
/// sin^2 of the angle below which an edge-cross axis is rounding noise (`mjBOXBOX_PAREPS`).
const PAREPS: f64 = 1e-16;
/// Axis component below which the supporting edge is ambiguous (`mjBOXBOX_SGNEPS`).
const SGNEPS: f64 = 1e-9;
/// Squared relative radius for dropping duplicate clipped vertices (`mjBOXBOX_DUPEPS`).
const DUPEPS: f64 = 1e-14;
/// Relative penalty of an edge axis on near-ties with a face axis (`mjBOXBOX_EDGEBIAS`).
const EDGEBIAS: f64 = 1e-6;

/// Vertex capacity of a clipped face: a 4-gon clipped by 4 half-planes has at most 8 vertices
/// (`mjBOXBOX_MAXVERT`, with room to spare).
const MAXVERT: usize = 12;

/// Each axis with the two that follow it cyclically: `(k, k + 1 mod 3, k + 2 mod 3)`.
const CYCLE: [(usize, usize, usize); 3] = [(0, 1, 2), (1, 2, 0), (2, 0, 1)];

/// A polygon of at most [`MAXVERT`] vertices (in-plane x, y and the height z carried along),
/// on the stack.
#[derive(Clone, Copy)]
struct Polygon {
    v: [Vec3; MAXVERT],
    n: usize,
}

impl Polygon {
    /// No vertices.
    const EMPTY: Polygon = Polygon {
        v: [Vec3::new(0.0, 0.0, 0.0); MAXVERT],
        n: 0,
    };
}

// ANCHOR: clip
/// One Sutherland-Hodgman pass: the part of `src` with `sign v[coord] <= limit` into `dst`,
/// keeping the inside vertices and adding the crossing points of edges that strictly cross.
/// Returns false, and leaves `dst` alone, when every vertex of `src` is inside (the pass would
/// copy it unchanged).
fn clip_half_plane(src: &Polygon, dst: &mut Polygon, coord: usize, sign: f64, limit: f64) -> bool {
    let n = src.n;
    let d = |k: usize| sign * src.v[k][coord] - limit;
    if (0..n).all(|k| d(k) <= 0.0) {
        return false;
    }
    dst.n = 0;
    let mut dp = d(0);
    for k in 0..n {
        let k1 = if k + 1 == n { 0 } else { k + 1 };
        let dq = d(k1);
        if dp <= 0.0 && dst.n < MAXVERT {
            dst.v[dst.n] = src.v[k];
            dst.n += 1;
        }
        if ((dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0)) && dst.n < MAXVERT {
            let t = dp / (dp - dq);
            dst.v[dst.n] = src.v[k] + (src.v[k1] - src.v[k]) * t;
            dst.n += 1;
        }
        dp = dq;
    }
    true
}

/// `poly` clipped to the rectangle `|x| <= lx`, `|y| <= ly` by four [`clip_half_plane`] passes
/// (`+x`, `-x`, `+y`, `-y`), each writing into the other of the two buffers `poly` and `spare`
/// (no copying back and forth); returns the buffer that holds the result.
fn clip_to_rectangle<'p>(poly: &'p mut Polygon, spare: &'p mut Polygon, lx: f64, ly: f64) -> &'p mut Polygon {
    let (mut cur, mut other) = (poly, spare);
    for (coord, sign, limit) in [(0, 1.0, lx), (0, -1.0, lx), (1, 1.0, ly), (1, -1.0, ly)] {
        if clip_half_plane(cur, other, coord, sign, limit) {
            std::mem::swap(&mut cur, &mut other);
        }
    }
    cur
}
// ANCHOR_END: clip

// ANCHOR: box_box
/// Box against box (`mjc_BoxBox`), in two stages.
///
/// 1. Separating axes: the 3 face normals of each box and the 9 cross products of their edge
///    directions. The separation along an axis is `|c . u| - r1(u) - r2(u)` (centre offset minus
///    the two support radii); any axis separating by more than `margin` ends the test. The
///    largest separation wins; an edge axis must beat the best face by a relative `1e-6`, and a
///    winning edge axis within ~8 degrees of the best face axis (|cos| > 0.99) that is not 5 %
///    better gives way to the face.
/// 2. Contacts. Edge axis: one contact at the midpoint of the closest points of the two
///    supporting edges, `dist` their offset along the axis. Face axis: the face's owner is the
///    reference box; the incident box's face most opposed to the reference normal is clipped by
///    the four side planes of the reference face; every clipped vertex within `margin` of the
///    reference face is a contact (up to 8), placed midway between the reference plane and the
///    vertex.
pub fn box_box(p1: &GeomPose, size1: &Vec3, p2: &GeomPose, size2: &Vec3, margin: f64, out: &mut Vec<Contact>) {
    let (m1, m2) = (p1.rot, p2.rot);
    let pos21 = m1.transpose() * (p2.pos - p1.pos);
    let pos12 = m2.transpose() * (p1.pos - p2.pos);
    let rot: Mat3 = m1.transpose() * m2; // columns: box2's axes in box1's frame
    let rotabs = rot.abs();
    let septol = margin + SEPEPS * (size1.sum() + size2.sum());

    // stage 1: codes 0..2 faces of box 1, 3..5 faces of box 2, 6 + 3 i + j edge pairs
    let mut sep_best = -mjMAXVAL;
    let mut code = 0;
    for i in 0..3 {
        let r2 = rotabs[(i, 0)] * size2[0] + rotabs[(i, 1)] * size2[1] + rotabs[(i, 2)] * size2[2];
        let sep = pos21[i].abs() - size1[i] - r2;
        if sep > septol {
            return;
        }
        if sep > sep_best {
            sep_best = sep;
            code = i;
        }
    }
    for j in 0..3 {
        let r1 = rotabs[(0, j)] * size1[0] + rotabs[(1, j)] * size1[1] + rotabs[(2, j)] * size1[2];
        let sep = pos12[j].abs() - size2[j] - r1;
        if sep > septol {
            return;
        }
        if sep > sep_best {
            sep_best = sep;
            code = 3 + j;
        }
    }
    let (sep_face, code_face) = (sep_best, code);
    // the edge axis e_i x (column j of rot), in box 1's frame (component i is zero)
    let edge_axis = |i: usize, j: usize| -> Vec3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let mut a = Vec3::zeros();
        a[i1] = -rot[(i2, j)];
        a[i2] = rot[(i1, j)];
        a
    };
    for &(i, i1, i2) in &CYCLE {
        for &(j, j1, j2) in &CYCLE {
            // the components i1, i2 of edge_axis(i, j), unit length
            let (a1, a2) = (-rot[(i2, j)], rot[(i1, j)]);
            let norm2 = a1 * a1 + a2 * a2;
            if norm2 < PAREPS {
                continue;
            }
            let inv = 1.0 / norm2.sqrt();
            let (ax1, ax2) = (a1 * inv, a2 * inv);
            let r1 = size1[i1] * ax1.abs() + size1[i2] * ax2.abs();
            let b1 = ax1 * rot[(i1, j1)] + ax2 * rot[(i2, j1)];
            let b2 = ax1 * rot[(i1, j2)] + ax2 * rot[(i2, j2)];
            let r2 = size2[j1] * b1.abs() + size2[j2] * b2.abs();
            let sep = (ax1 * pos21[i1] + ax2 * pos21[i2]).abs() - r1 - r2;
            if sep > septol {
                return;
            }
            if sep > sep_face && sep - EDGEBIAS * sep.abs() > sep_best {
                sep_best = sep;
                code = 6 + 3 * i + j;
            }
        }
    }
    if code >= 6 {
        let a = edge_axis((code - 6) / 3, (code - 6) % 3).normalize();
        let face_dot = if code_face < 3 {
            a[code_face].abs()
        } else {
            a.dot(&rot.column(code_face - 3)).abs()
        };
        if face_dot > 0.99 && sep_best < sep_face + 0.05 * sep_face.abs() + mjMINVAL {
            code = code_face;
        }
    }

    // stage 2a: edge-edge
    if code >= 6 {
        let (i, j) = ((code - 6) / 3, (code - 6) % 3);
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
        let mut a = edge_axis(i, j).normalize();
        if a.dot(&pos21) < 0.0 {
            a = -a;
        }
        let a2 = rot.transpose() * a;
        // an ambiguous sign (a component near zero) tries both supporting edges
        let amb1 = if a[i1].abs() < SGNEPS {
            Some(i1)
        } else if a[i2].abs() < SGNEPS {
            Some(i2)
        } else {
            None
        };
        let amb2 = if a2[j1].abs() < SGNEPS {
            Some(j1)
        } else if a2[j2].abs() < SGNEPS {
            Some(j2)
        } else {
            None
        };
        let d2: Vec3 = rot.column(j).into_owned();
        let b = d2[i];
        let denom = 1.0 - b * b;
        let mut best = mjMAXVAL;
        let (mut w1, mut w2) = (Vec3::zeros(), Vec3::zeros());
        for v1 in 0..(if amb1.is_some() { 2 } else { 1 }) {
            for v2 in 0..(if amb2.is_some() { 2 } else { 1 }) {
                let mut c1 = Vec3::zeros();
                c1[i1] = if a[i1] >= 0.0 { size1[i1] } else { -size1[i1] };
                c1[i2] = if a[i2] >= 0.0 { size1[i2] } else { -size1[i2] };
                if let (Some(k), 1) = (amb1, v1) {
                    c1[k] = -c1[k];
                }
                let mut cc = Vec3::zeros();
                cc[j1] = if a2[j1] >= 0.0 { -size2[j1] } else { size2[j1] };
                cc[j2] = if a2[j2] >= 0.0 { -size2[j2] } else { size2[j2] };
                if let (Some(k), 1) = (amb2, v2) {
                    cc[k] = -cc[k];
                }
                let c2 = rot * cc + pos21;
                let e = c2 - c1;
                let d1e = e[i];
                let d2e = d2.dot(&e);
                let s = if denom < mjMINVAL { 0.0 } else { (d1e - b * d2e) / denom };
                let s = s.clamp(-size1[i], size1[i]);
                let t = (b * s - d2e).clamp(-size2[j], size2[j]);
                let s = (d1e + b * t).clamp(-size1[i], size1[i]);
                let mut q1 = c1;
                q1[i] += s;
                let q2 = c2 + d2 * t;
                let g2 = (q2 - q1).norm_squared();
                if g2 < best {
                    best = g2;
                    w1 = q1;
                    w2 = q2;
                }
            }
        }
        let dist = (w2 - w1).dot(&a);
        if dist > septol {
            return;
        }
        let mid = (w1 + w2) * 0.5;
        push(out, m1 * mid + p1.pos, &(m1 * a), &Vec3::zeros(), dist);
        return;
    }

    // stage 2b: face contact
    let ref1 = code < 3;
    let a = if ref1 { code } else { code - 3 };
    let (sizeref, sizeinc) = if ref1 { (size1, size2) } else { (size2, size1) };
    let (posref, matref) = if ref1 { (p1.pos, m1) } else { (p2.pos, m2) };
    let posoi = if ref1 { pos21 } else { pos12 };
    let rinc = if ref1 { rot } else { rot.transpose() };
    let sgn = if posoi[a] >= 0.0 { 1.0 } else { -1.0 };
    let mut binc = 0;
    for k in 1..3 {
        if rinc[(a, k)].abs() > rinc[(a, binc)].abs() {
            binc = k;
        }
    }
    let tinc = if sgn * rinc[(a, binc)] > 0.0 { -1.0 } else { 1.0 };
    let (ax, ay) = ((a + 1) % 3, (a + 2) % 3);
    let (bu, bv) = ((binc + 1) % 3, (binc + 2) % 3);
    // incident face in (x, y, z) = (reference axis ax, axis ay, height above the reference face)
    let mut cx = Vec3::zeros();
    let mut du = Vec3::zeros();
    let mut dv = Vec3::zeros();
    for (r, c) in [ax, ay, a].into_iter().enumerate() {
        cx[r] = posoi[c] + tinc * sizeinc[binc] * rinc[(c, binc)];
        du[r] = sizeinc[bu] * rinc[(c, bu)];
        dv[r] = sizeinc[bv] * rinc[(c, bv)];
    }
    cx[2] = sgn * cx[2] - sizeref[a];
    du[2] *= sgn;
    dv[2] *= sgn;
    let mut poly = Polygon { n: 4, ..Polygon::EMPTY };
    for (k, (su, sv)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .into_iter()
        .enumerate()
    {
        poly.v[k] = cx + du * su + dv * sv;
    }
    let mut spare = Polygon::EMPTY;
    let poly = clip_to_rectangle(&mut poly, &mut spare, sizeref[ax], sizeref[ay]);
    let dupe2 = DUPEPS * (sizeref[ax] * sizeref[ax] + sizeref[ay] * sizeref[ay]);
    let nsign = if ref1 { sgn } else { -sgn };
    let normal: Vec3 = matref.column(a) * nsign;
    // every contact has the reference face's frame, made once
    let mut frame = None;
    // the accepted vertices are moved to the front of the polygon, poly.v[..kept]
    let mut kept = 0;
    for k in 0..poly.n {
        let v = poly.v[k];
        if v[2] > margin
            || poly.v[..kept]
                .iter()
                .any(|q| (q.x - v.x).powi(2) + (q.y - v.y).powi(2) < dupe2)
        {
            continue;
        }
        poly.v[kept] = v;
        kept += 1;
        let mut posc = Vec3::zeros();
        posc[ax] = v[0];
        posc[ay] = v[1];
        posc[a] = sgn * (sizeref[a] + 0.5 * v[2]);
        out.push(Contact {
            pos: matref * posc + posref,
            frame: *frame.get_or_insert_with(|| make_frame(&normal, &Vec3::zeros())),
            dist: v[2],
        });
    }
}
// ANCHOR_END: box_box

/// Capsule against box (`mjc_CapsuleBox`), in MuJoCo's two steps: find the point of the capsule
/// axis closest to the box, then possibly a second point along the axis (when the capsule lies
/// along a face or an edge), and collide a sphere of the capsule's radius at each with the box
/// ([`sphere_box_raw`]). Up to 2 contacts.
pub fn capsule_box(
    cap: &GeomPose,
    radius: f64,
    half_length: f64,
    bx: &GeomPose,
    half: &Vec3,
    margin: f64,
    out: &mut Vec<Contact>,
) {
    let (first, second) = capsule_box_points(cap, half_length, bx, half, margin, radius);
    let Some(first) = first else { return };
    let pos = bx.rot.transpose() * (cap.pos - bx.pos);
    let ha = bx.rot.transpose() * axis(cap, 2) * half_length;
    let at = |x: f64| bx.rot * (pos + ha * x) + bx.pos;
    sphere_box_raw(&at(first), radius, bx, half, margin, out);
    if let Some(s) = second {
        sphere_box_raw(&at(s + first), radius, bx, half, margin, out);
    }
}

// ANCHOR: capsule_box_points
/// The axis parameters (in [-1, 1] along the scaled half-axis) of the capsule-box contact
/// points, MuJoCo's rules (`mjraw_CapsuleBox`), all in the box frame:
///
/// * first point: the closest of (a) each end of the segment clamped to the box, when at most one
///   coordinate needed clamping (the end faces one box face), and (b) the closest points of the
///   segment and each of the 12 box edges (a 2x2 system clamped like capsule-capsule). The kind
///   of winner is remembered: an end over a face, or an edge with a box corner or edge interior
///   nearest.
/// * second point, when the capsule lies along the box: from a corner, along the edge the axis
///   mostly follows (|axis_k|^2 > 1/2) or across the face; from an edge interior in an X
///   crossing, along the face the axis is flattest on; from an end over a face, towards the
///   other end; each time stopped where the axis leaves the box's extent.
///
/// Returns `(first, second offset from first)`; `first` is `None` when no candidate exists.
fn capsule_box_points(
    cap: &GeomPose,
    half_length: f64,
    bx: &GeomPose,
    size: &Vec3,
    margin: f64,
    radius: f64,
) -> (Option<f64>, Option<f64>) {
    let pos = bx.rot.transpose() * (cap.pos - bx.pos);
    let ax_c = bx.rot.transpose() * axis(cap, 2);
    let ha = ax_c * half_length;
    let axisdir = (ha[0] > 0.0) as usize + 2 * (ha[1] > 0.0) as usize + 4 * (ha[2] > 0.0) as usize;
    let mut bestdist = margin + 2.0 * (radius + half_length + size.sum());
    let mut best = 0.0; // bestsegmentpos
    let mut boxpos = 0.0; // bestboxpos
    let mut cltype: i32 = -4;
    let mut clface: i32 = -1;
    let mut clcorner = 0usize;
    let mut cledge = 0usize;

    // (a) an end of the segment over a face
    for i in [-1.0, 1.0] {
        let end = pos + ha * i;
        let mut clamped = end;
        let (mut count, mut last) = (0, -1);
        for j in 0..3 {
            if end[j] < -size[j] || end[j] > size[j] {
                count += 1;
                last = j as i32;
                clamped[j] = end[j].clamp(-size[j], size[j]);
            }
        }
        if count > 1 {
            continue;
        }
        let d = (clamped - end).norm_squared();
        if d < bestdist {
            bestdist = d;
            best = i;
            cltype = -2 + i as i32;
            clface = last;
        }
    }
    // (b) the segment against each edge: corner i with bit j clear, running along axis j
    for j in 0..3 {
        for i in 0..8usize {
            if i & (1 << j) != 0 {
                continue;
            }
            let mut start = Vec3::new(
                if i & 1 != 0 { size[0] } else { -size[0] },
                if i & 2 != 0 { size[1] } else { -size[1] },
                if i & 4 != 0 { size[2] } else { -size[2] },
            );
            start[j] = 0.0;
            let dif = start - pos;
            let ma = size[j] * size[j];
            let mb = -size[j] * ha[j];
            let mc = half_length * half_length;
            let u = -size[j] * dif[j];
            let v = ha.dot(&dif);
            let det = ma * mc - mb * mb;
            if det.abs() < mjMINVAL {
                continue;
            }
            let idet = 1.0 / det;
            let mut x1 = (mc * u - mb * v) * idet;
            let mut x2 = (ma * v - mb * u) * idet;
            let (mut s1, mut s2) = (1, 1);
            if x1 > 1.0 {
                x1 = 1.0;
                s1 = 2;
                x2 = (v - mb) * (1.0 / mc);
            } else if x1 < -1.0 {
                x1 = -1.0;
                s1 = 0;
                x2 = (v + mb) * (1.0 / mc);
            }
            if !(-1.0..=1.0).contains(&x2) {
                let (xx, ss, num) = if x2 > 1.0 { (1.0, 2, u - mb) } else { (-1.0, 0, u + mb) };
                x2 = xx;
                s2 = ss;
                x1 = num * (1.0 / ma);
                if x1 > 1.0 {
                    x1 = 1.0;
                    s1 = 2;
                } else if x1 < -1.0 {
                    x1 = -1.0;
                    s1 = 0;
                }
            }
            let mut d = start - pos - ha * x2;
            d[j] += size[j] * x1;
            let d = d.norm_squared();
            let c1 = s1 * 3 + s2;
            if d < bestdist - mjMINVAL {
                bestdist = d;
                best = x2;
                boxpos = x1;
                clcorner = i + (1 << j) * (c1 / 6);
                cledge = j;
                cltype = c1 as i32;
            }
        }
    }
    if cltype == -4 {
        return (None, None);
    }
    let inv = |k: usize| 1.0 / ha[k].abs();
    let second = if cltype >= 0 && cltype / 3 != 1 {
        // a box corner is closest
        let mut c1 = axisdir ^ clcorner;
        if c1 == 0 || c1 == 7 {
            None
        } else {
            let (mul, de, dp) = if matches!(c1, 1 | 2 | 4) {
                (1.0, 1.0 - best, 1.0 + best)
            } else {
                c1 = 7 - c1;
                (-1.0, 1.0 + best, 1.0 - best)
            };
            let (ax, ax1, ax2) = match c1 {
                1 => (0, 1, 2),
                2 => (1, 2, 0),
                _ => (2, 0, 1),
            };
            if ax_c[ax] * ax_c[ax] > 0.5 {
                Some(de.min(2.0 * size[ax] * inv(ax)) * mul)
            } else {
                Some(dp.min(2.0 * size[ax1] * inv(ax1)).min(2.0 * size[ax2] * inv(ax2)) * -mul)
            }
        }
    } else if cltype >= 0 {
        // the interior of a box edge is closest
        let c1 = (axisdir ^ clcorner) & (7 - (1 << cledge));
        if !matches!(c1, 1 | 2 | 4) {
            None
        } else {
            let ax = cledge;
            let (mut ax1, ax2) = match cledge {
                0 => (1, 2),
                1 => (2, 0),
                _ => (0, 1),
            };
            if ax_c[ax1].abs() > ax_c[ax2].abs() {
                ax1 = ax2;
            }
            let ax2 = 3 - ax - ax1;
            let (mul, mut s) = if c1 & (1 << ax2) != 0 {
                (1.0, 1.0 - best)
            } else {
                (-1.0, 1.0 + best)
            };
            s = s.min(2.0 * size[ax2] * inv(ax2));
            let e2 = if ((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0) {
                1.0 - boxpos
            } else {
                1.0 + boxpos
            };
            s = s.min(size[ax] * e2 * inv(ax));
            Some(s * mul)
        }
    } else if clface == -1 {
        // the end is inside the box
        None
    } else {
        // an end over a face: towards the other end, until the axis leaves the box's extent
        let mul = if cltype == -3 { 1.0 } else { -1.0 };
        let mut s = 2.0;
        let end = pos - ha * mul;
        for i in 0..3 {
            if i as i32 == clface {
                continue;
            }
            for bound in [size[i], -size[i]] {
                let e = (bound - end[i]) / ha[i] * mul;
                if e > 0.0 && e < s {
                    s = e;
                }
            }
        }
        Some(s * mul)
    };
    (Some(best), second)
}
// ANCHOR_END: capsule_box_points
