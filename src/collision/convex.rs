//! General convex collision, as MuJoCo's native convex collider (`engine_collision_gjk.c`,
//! `mjc_Convex` in `engine_collision_convex.c`) does it, written from the method rather than
//! from MuJoCo's code:
//!
//! 1. **Support functions** ([`ConvexShape::support`]): the farthest point of a shape along a
//!    direction. A convex shape is known to GJK and EPA only through it.
//! 2. **GJK** ([`gjk`]): the distance between two shapes is the distance from the origin to their
//!    Minkowski difference `D = A - B`, whose support is `s_A(d) - s_B(-d)`. A simplex of at most
//!    four points of `D` is grown towards the origin; each iteration finds the point `v` of the
//!    simplex closest to the origin (here by Johnson's rule: the sub-simplex whose affine
//!    closest point has positive barycentric coordinates and the smallest norm), asks the support
//!    in `-v`, and stops when the new point brings `v` no closer (`|v|^2 - v.w <= tol |v|^2`) or
//!    the simplex encloses the origin (the shapes overlap).
//! 3. **EPA** ([`epa`]): when they overlap, the penetration is the distance from the origin to
//!    the boundary of `D`. Starting from GJK's tetrahedron, the face of the polytope nearest to
//!    the origin is pushed out to the support point in its normal; faces that see the new point
//!    are removed and the hole is closed with new faces on its horizon. The nearest face's
//!    normal is the contact normal, its distance the depth, and the barycentric coordinates of
//!    the origin's projection give the witness points on A and B.
//! 4. **Contacts** ([`convex_contacts`]): as MuJoCo, a sphere or capsule is first shrunk to its
//!    centre point or segment and GJK's distance is inflated by the radii (exact, and cheap);
//!    only a deep penetration of the cores runs EPA on the full shapes. When the features the
//!    shapes meet with hold flat faces (or an edge and a face) facing each other, MuJoCo 4.0's
//!    multi-contact replaces the one contact by the corners of the contact patch
//!    ([`super::multicontact`]), within the margin whether they penetrate or not.

use super::multicontact::PatchScratch;
use super::{Contact, GeomPose};
use crate::model::constants::mjMINVAL;
use crate::model::mesh::ConvexHull;
use crate::model::GeomType;
use crate::spatial::{Mat3, Vec3};

/// A convex primitive in its geom frame (MuJoCo's sizes), as the convex collider sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape<'a> {
    /// A point (a sphere's core).
    Point,
    /// A segment of half-length `h` along z (a capsule's core).
    Segment(f64),
    /// Sphere of radius `r`.
    Sphere(f64),
    /// Capsule of radius `r` and half-length `h` along z.
    Capsule(f64, f64),
    /// Ellipsoid of semi-axes `s`.
    Ellipsoid(Vec3),
    /// Cylinder of radius `r` and half-length `h` along z.
    Cylinder(f64, f64),
    /// Box of half-sizes `s`.
    Box(Vec3),
    /// The convex hull of a mesh, in the geom frame.
    Hull(&'a ConvexHull),
    /// A triangular prism of a height field: three bottom vertices, then the three top ones
    /// above them (`mjc_prism_support`).
    Prism([Vec3; 6]),
}

impl<'a> Shape<'a> {
    /// The shape of a geom of type `t` and MuJoCo `size` (`None` for a plane, a height field,
    /// and a mesh: see [`Shape::of_mesh`]).
    pub fn of(t: GeomType, size: &[f64; 3]) -> Option<Shape<'static>> {
        Some(match t {
            GeomType::Plane | GeomType::HField(_) | GeomType::Mesh(_) => return None,
            GeomType::Sphere => Shape::Sphere(size[0]),
            GeomType::Capsule => Shape::Capsule(size[0], size[1]),
            GeomType::Cylinder => Shape::Cylinder(size[0], size[1]),
            GeomType::Ellipsoid => Shape::Ellipsoid(Vec3::new(size[0], size[1], size[2])),
            GeomType::Box => Shape::Box(Vec3::new(size[0], size[1], size[2])),
        })
    }

    /// MuJoCo's `geom_rbound`: the radius of a sphere about the centre that holds the shape.
    pub fn rbound(&self) -> f64 {
        match *self {
            Shape::Point => 0.0,
            Shape::Segment(h) => h,
            Shape::Sphere(r) => r,
            Shape::Capsule(r, h) => r + h,
            Shape::Ellipsoid(s) => s.max(),
            Shape::Cylinder(r, h) => (r * r + h * h).sqrt(),
            Shape::Box(s) => s.norm(),
            Shape::Hull(h) => h.rbound(),
            Shape::Prism(p) => p.iter().map(|v| v.norm()).fold(0.0, f64::max),
        }
    }

    /// The shape of a geom of type `t`, looking a mesh's hull up in `meshes`.
    pub fn of_mesh(t: GeomType, size: &[f64; 3], meshes: &'a [crate::model::mesh::Mesh]) -> Option<Shape<'a>> {
        match t {
            GeomType::Mesh(k) => meshes.get(k).map(|m| Shape::Hull(&m.hull)),
            _ => Shape::of(t, size),
        }
    }
}

/// A shape at a world pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConvexShape<'a> {
    /// The shape.
    pub shape: Shape<'a>,
    /// Its world pose.
    pub pose: GeomPose,
}

impl ConvexShape<'_> {
    // ANCHOR: support
    /// The support point: the point of the shape farthest along `dir` (world), MuJoCo's
    /// `mjc_*Support`. `dir` need not be unit. In the geom frame, with `d` the local direction:
    /// sphere `r d/|d|`; capsule the sphere plus `+-h` on z by the sign of `d_z`; ellipsoid
    /// `S u / |u|` with `u = S d`, `S = diag(s)` (the unit sphere's support mapped by S);
    /// cylinder the rim point `r (d_x, d_y)/|(d_x, d_y)|` at height `+-h`; box the corner
    /// `sign(d) s`; a hull its vertex of largest `v . d` (`mjc_meshSupport`, or hill climbing on
    /// the hull graph for large hulls, `mjc_hillclimbSupport`).
    pub fn support(&self, dir: &Vec3) -> Vec3 {
        let r = &self.pose.rot;
        let d = r.transpose() * dir;
        let unit = |v: Vec3| {
            let n = v.norm();
            if n < mjMINVAL {
                Vec3::zeros()
            } else {
                v / n
            }
        };
        let sgn = |x: f64| if x >= 0.0 { 1.0 } else { -1.0 };
        let local = match self.shape {
            Shape::Point => Vec3::zeros(),
            Shape::Segment(h) => Vec3::new(0.0, 0.0, sgn(d.z) * h),
            Shape::Sphere(rad) => unit(d) * rad,
            Shape::Capsule(rad, h) => unit(d) * rad + Vec3::new(0.0, 0.0, sgn(d.z) * h),
            Shape::Ellipsoid(s) => {
                let u = d.component_mul(&s);
                if u.norm_squared() < mjMINVAL * mjMINVAL {
                    Vec3::new(s.x, 0.0, 0.0)
                } else {
                    (u / u.norm()).component_mul(&s)
                }
            }
            Shape::Cylinder(rad, h) => {
                let n2 = d.x * d.x + d.y * d.y;
                let scl = if n2 >= mjMINVAL * mjMINVAL {
                    rad / n2.sqrt()
                } else {
                    0.0
                };
                Vec3::new(scl * d.x, scl * d.y, sgn(d.z) * h)
            }
            Shape::Box(s) => Vec3::new(sgn(d.x) * s.x, sgn(d.y) * s.y, sgn(d.z) * s.z),
            Shape::Hull(h) => h.vertices[h.support_index(&d)],
            Shape::Prism(p) => {
                // the top or bottom triangle by the sign of d_z, then its farthest vertex
                let k0 = if d.z < 0.0 { 0 } else { 3 };
                let mut best = p[k0];
                for v in &p[k0 + 1..k0 + 3] {
                    if v.dot(&d) > best.dot(&d) {
                        best = *v;
                    }
                }
                best
            }
        };
        r * local + self.pose.pos
    }
    // ANCHOR_END: support
}

/// A point of the Minkowski difference `w = a - b` with the two support points that made it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MinkowskiPoint {
    /// `a - b`.
    pub w: Vec3,
    /// Support point on A.
    pub a: Vec3,
    /// Support point on B.
    pub b: Vec3,
}

/// The support of `D = A - B` along `dir`: `s_A(dir) - s_B(-dir)`.
pub fn minkowski_support(sa: &ConvexShape, sb: &ConvexShape, dir: &Vec3) -> MinkowskiPoint {
    let a = sa.support(dir);
    let b = sb.support(&-dir);
    MinkowskiPoint { w: a - b, a, b }
}

/// One GJK iteration, kept for figures: the simplex after reduction and its closest point `v`.
#[derive(Clone, Debug, PartialEq)]
pub struct GjkStep {
    /// Points of `D` in the simplex.
    pub simplex: Vec<Vec3>,
    /// The closest point of the simplex to the origin.
    pub v: Vec3,
}

// ANCHOR: simplex
/// GJK's simplex: at most four points of `D`, in the order they were added, kept in a fixed
/// array (no allocation). It reads as a slice of [`MinkowskiPoint`]s (`Deref`); only GJK and
/// EPA's start grow and shrink it.
#[derive(Clone, Copy, Default)]
pub struct Simplex {
    pts: [MinkowskiPoint; 4],
    len: usize,
}

impl Simplex {
    /// The simplex of the points `pts` (at most 4).
    pub(crate) fn from_slice(pts: &[MinkowskiPoint]) -> Self {
        let mut s = Simplex::default();
        for p in pts {
            s.push(*p);
        }
        s
    }

    /// Adds a point (the simplex must hold fewer than 4).
    pub(crate) fn push(&mut self, p: MinkowskiPoint) {
        self.pts[self.len] = p;
        self.len += 1;
    }

    /// Keeps the points whose bit is set in `mask` (bit `k` for point `k`), in order, and
    /// returns their entries of `coords` (one per point before) in the same order, zero after.
    pub(crate) fn retain(&mut self, mask: usize, coords: &[f64; 4]) -> [f64; 4] {
        let mut kept_coords = [0.0; 4];
        let mut kept = 0;
        for k in 0..self.len {
            if mask & (1 << k) != 0 {
                self.pts[kept] = self.pts[k];
                kept_coords[kept] = coords[k];
                kept += 1;
            }
        }
        self.len = kept;
        kept_coords
    }

    /// The points, in order.
    pub fn as_slice(&self) -> &[MinkowskiPoint] {
        &self.pts[..self.len]
    }
}
// ANCHOR_END: simplex

impl std::ops::Deref for Simplex {
    type Target = [MinkowskiPoint];
    fn deref(&self) -> &[MinkowskiPoint] {
        self.as_slice()
    }
}

impl PartialEq for Simplex {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl std::fmt::Debug for Simplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// What GJK found.
#[derive(Clone, Debug, PartialEq)]
pub struct GjkResult {
    /// Distance between the shapes (0 when they overlap).
    pub dist: f64,
    /// Closest point on A (meaningful when `dist > 0`).
    pub a: Vec3,
    /// Closest point on B.
    pub b: Vec3,
    /// The final simplex (4 points enclosing the origin when they overlap).
    pub simplex: Simplex,
    /// Whether the simplex reached the origin (overlap or touching).
    pub overlap: bool,
    /// Iterations used.
    pub iterations: usize,
}

/// GJK's iteration bound.
pub const GJK_ITERATIONS: usize = 100;
/// GJK's relative tolerance on `|v|^2 - v.w`.
pub const GJK_TOLERANCE: f64 = 1e-14;

// ANCHOR: johnson
/// The point of the simplex `pts` (1 to 4 points) closest to the origin, by Johnson's rule
/// written as an enumeration: for every non-empty subset, the closest point of its affine hull
/// (the normal equations `E^T E t = -E^T y0`, `E = [y_k - y0]`); among subsets whose
/// barycentric coordinates are all non-negative, the one with the smallest norm. Returns the
/// point, the barycentric coordinates over `pts` and the bit mask of the subset.
pub fn closest_on_simplex(pts: &[Vec3]) -> (Vec3, [f64; 4], usize) {
    let n = pts.len();
    let mut best = (pts[0], [1.0, 0.0, 0.0, 0.0], 1usize);
    let mut best_norm = f64::INFINITY;
    for mask in 1..(1usize << n) {
        // the subset's points, in order (at most 4: no allocation)
        let mut idx = [0usize; 4];
        let mut len = 0;
        for k in (0..n).filter(|k| mask & (1 << k) != 0) {
            idx[len] = k;
            len += 1;
        }
        let idx = &idx[..len];
        let y0 = pts[idx[0]];
        let m = idx.len() - 1;
        let mut lam = [0.0; 4];
        let p = if m == 0 {
            lam[idx[0]] = 1.0;
            y0
        } else {
            let mut g = Mat3::identity();
            let mut rhs = Vec3::zeros();
            let mut e = [Vec3::zeros(); 3];
            for (r, &k) in idx[1..].iter().enumerate() {
                e[r] = pts[k] - y0;
            }
            let e = &e[..m];
            for r in 0..m {
                for c in 0..m {
                    g[(r, c)] = e[r].dot(&e[c]);
                }
                rhs[r] = -e[r].dot(&y0);
            }
            let scale: f64 = e.iter().map(|x| x.norm_squared()).sum::<f64>().max(mjMINVAL);
            if g.determinant().abs() <= 1e-12 * scale.powi(m as i32) {
                continue; // affinely dependent: a smaller subset covers it
            }
            let Some(t) = g.lu().solve(&rhs) else { continue };
            let mut p = y0;
            let mut l0 = 1.0;
            for r in 0..m {
                p += e[r] * t[r];
                lam[idx[r + 1]] = t[r];
                l0 -= t[r];
            }
            lam[idx[0]] = l0;
            p
        };
        if idx.iter().any(|&k| lam[k] < 0.0) {
            continue;
        }
        let nrm = p.norm_squared();
        if nrm < best_norm {
            best_norm = nrm;
            best = (p, lam, mask);
        }
    }
    best
}
// ANCHOR_END: johnson

// ANCHOR: gjk
/// GJK distance between two convex shapes (see the module map). `trace`, when given, receives
/// every iteration's simplex and closest point. Bounded by [`GJK_ITERATIONS`].
pub fn gjk(sa: &ConvexShape, sb: &ConvexShape, mut trace: Option<&mut Vec<GjkStep>>) -> GjkResult {
    let mut simplex = Simplex::default();
    let mut v = sa.pose.pos - sb.pose.pos;
    if v.norm_squared() < mjMINVAL {
        v = Vec3::x();
    }
    let mut lam = [1.0, 0.0, 0.0, 0.0];
    let mut overlap = false;
    let mut iterations = 0;
    while iterations < GJK_ITERATIONS {
        iterations += 1;
        let w = minkowski_support(sa, sb, &-v);
        let vv = v.norm_squared();
        if !simplex.is_empty() && vv - v.dot(&w.w) <= GJK_TOLERANCE * vv {
            break; // w brings v no closer: v is the distance vector
        }
        if simplex.iter().any(|p| p.w == w.w) {
            break; // a repeated support point: no progress is possible
        }
        simplex.push(w);
        let mut pts = [Vec3::zeros(); 4];
        for (x, p) in pts.iter_mut().zip(simplex.iter()) {
            *x = p.w;
        }
        let (p, l, mask) = closest_on_simplex(&pts[..simplex.len()]);
        // keep the points of the closest subset, in order, with their coordinates
        lam = simplex.retain(mask, &l);
        v = p;
        if let Some(t) = trace.as_deref_mut() {
            t.push(GjkStep {
                simplex: simplex.iter().map(|q| q.w).collect(),
                v,
            });
        }
        let scale = simplex.iter().map(|q| q.w.norm_squared()).fold(0.0, f64::max);
        if simplex.len() == 4 || v.norm_squared() <= 1e-24 * scale.max(1.0) {
            overlap = true;
            break;
        }
    }
    let a = simplex.iter().zip(lam.iter()).map(|(q, l)| q.a * *l).sum();
    let b = simplex.iter().zip(lam.iter()).map(|(q, l)| q.b * *l).sum();
    GjkResult {
        dist: if overlap { 0.0 } else { v.norm() },
        a,
        b,
        simplex,
        overlap,
        iterations,
    }
}
// ANCHOR_END: gjk

/// What EPA found: depth, normal (from A into B) and witness points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Penetration {
    /// Penetration depth (>= 0).
    pub depth: f64,
    /// Unit normal from A into B.
    pub normal: Vec3,
    /// Deepest point of A inside B.
    pub a: Vec3,
    /// Deepest point of B inside A.
    pub b: Vec3,
    /// Iterations used.
    pub iterations: usize,
}

/// What [`epa`] found: the [`Penetration`] of [`epa_with`] and the depth bound of each
/// iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct EpaResult {
    /// Penetration depth (>= 0).
    pub depth: f64,
    /// Unit normal from A into B.
    pub normal: Vec3,
    /// Deepest point of A inside B.
    pub a: Vec3,
    /// Deepest point of B inside A.
    pub b: Vec3,
    /// Iterations used.
    pub iterations: usize,
    /// The depth bound of each iteration (the nearest face's distance), for figures.
    pub history: Vec<f64>,
}

/// EPA's iteration bound.
pub const EPA_ITERATIONS: usize = 300;
/// EPA's tolerance on the gap between the nearest face and the support in its normal,
/// relative to the size of the polytope.
pub const EPA_TOLERANCE: f64 = 1e-11;

#[derive(Clone, Copy, Debug)]
struct Face {
    v: [usize; 3],
    n: Vec3,
    d: f64,
}

/// A face through three vertices, normal from the vertex order (counter-clockwise seen from
/// outside); `orient` flips the order when the normal points towards `inside` (only for the
/// first tetrahedron: later faces inherit their order from the horizon edges).
fn make_face(verts: &[MinkowskiPoint], v: [usize; 3], inside: &Vec3, orient: bool) -> Face {
    let (p0, p1, p2) = (verts[v[0]].w, verts[v[1]].w, verts[v[2]].w);
    let mut n = (p1 - p0).cross(&(p2 - p0));
    let mut v = v;
    if orient && n.dot(&(p0 - inside)) < 0.0 {
        n = -n;
        v.swap(1, 2);
    }
    let len = n.norm();
    if len < mjMINVAL {
        return Face {
            v,
            n: Vec3::x(),
            d: f64::INFINITY,
        };
    }
    let n = n / len;
    Face { v, n, d: n.dot(&p0) }
}

/// Grows GJK's final simplex to a tetrahedron (adding supports normal to its affine hull) so that
/// EPA can start; `None` when the difference is flat (the shapes only touch), or when
/// `simplex` is empty or holds more than 4 points.
fn tetrahedron(sa: &ConvexShape, sb: &ConvexShape, simplex: &[MinkowskiPoint]) -> Option<[MinkowskiPoint; 4]> {
    if simplex.is_empty() || simplex.len() > 4 {
        return None;
    }
    let mut s = Simplex::from_slice(simplex);
    let dirs = [Vec3::x(), Vec3::y(), Vec3::z()];
    let mut guard = 0;
    while s.len() < 4 && guard < 12 {
        guard += 1;
        let d = match s.len() {
            1 => dirs[(guard - 1) % 3],
            2 => {
                let e = s[1].w - s[0].w;
                let k = (0..3).min_by(|&i, &j| e[i].abs().total_cmp(&e[j].abs())).unwrap_or(0);
                e.cross(&dirs[k])
            }
            _ => (s[1].w - s[0].w).cross(&(s[2].w - s[0].w)),
        };
        if d.norm() < mjMINVAL {
            continue;
        }
        for dir in [d, -d] {
            let p = minkowski_support(sa, sb, &dir);
            let independent = match s.len() {
                1 => (p.w - s[0].w).norm() > 1e-12,
                2 => (s[1].w - s[0].w).cross(&(p.w - s[0].w)).norm() > 1e-12,
                _ => (s[1].w - s[0].w).cross(&(s[2].w - s[0].w)).dot(&(p.w - s[0].w)).abs() > 1e-14,
            };
            if independent {
                s.push(p);
                break;
            }
        }
    }
    (s.len() == 4).then(|| [s[0], s[1], s[2], s[3]])
}

/// EPA's polytope, kept between calls: its vertices (points of `D`), its faces, the horizon
/// edges of one expansion, and the depth bound of each iteration. Every vector is cleared,
/// never shrunk, and reserved on first use to the size [`EPA_ITERATIONS`] bounds (4 + 300
/// vertices, twice as many faces), so that a repeated [`epa_with`] allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct EpaScratch {
    verts: Vec<MinkowskiPoint>,
    faces: Vec<Face>,
    edges: Vec<(usize, usize)>,
    history: Vec<f64>,
}

impl EpaScratch {
    /// Empties every vector, reserving on first use the sizes EPA's iteration bound allows
    /// (later calls find the capacity there and allocate nothing).
    fn clear(&mut self) {
        let nmax = 4 + EPA_ITERATIONS;
        self.verts.clear();
        self.verts.reserve(nmax);
        self.faces.clear();
        self.faces.reserve(2 * nmax);
        self.edges.clear();
        self.edges.reserve(nmax);
        self.history.clear();
        self.history.reserve(EPA_ITERATIONS);
    }

    /// The depth bound of each iteration of the last [`epa_with`] (the nearest face's
    /// distance).
    pub fn history(&self) -> &[f64] {
        &self.history
    }
}

// ANCHOR: epa
/// EPA on GJK's final simplex (see the module map), with the polytope in the storage `ws` (its
/// history is left there). Returns `None` when no tetrahedron can be formed (flat difference:
/// touching shapes). Bounded by [`EPA_ITERATIONS`].
pub fn epa_with(
    sa: &ConvexShape,
    sb: &ConvexShape,
    simplex: &[MinkowskiPoint],
    ws: &mut EpaScratch,
) -> Option<Penetration> {
    ws.clear();
    let EpaScratch {
        verts,
        faces,
        edges,
        history,
    } = ws;
    verts.extend(tetrahedron(sa, sb, simplex)?);
    let inside = verts.iter().map(|p| p.w).sum::<Vec3>() / 4.0;
    faces.extend(
        [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]
            .iter()
            .map(|&f| make_face(verts, f, &inside, true)),
    );
    let size = verts.iter().map(|p| p.w.norm()).fold(0.0, f64::max).max(mjMINVAL);
    let mut iterations = 0;
    let nearest = |faces: &[Face]| faces.iter().copied().min_by(|a, b| a.d.total_cmp(&b.d));
    let mut f = nearest(faces)?;
    while iterations < EPA_ITERATIONS {
        iterations += 1;
        history.push(f.d);
        let p = minkowski_support(sa, sb, &f.n);
        if p.w.dot(&f.n) - f.d <= EPA_TOLERANCE * size {
            break;
        }
        // remove every face that sees p; the horizon is the set of their edges used once
        let id = verts.len();
        verts.push(p);
        let eps = 1e-14 * size;
        edges.clear();
        let mut k = 0;
        while k < faces.len() {
            let g = faces[k];
            if g.d.is_finite() && g.n.dot(&(p.w - verts[g.v[0]].w)) > eps {
                for (a, b) in [(g.v[0], g.v[1]), (g.v[1], g.v[2]), (g.v[2], g.v[0])] {
                    if let Some(pos) = edges.iter().position(|&e| e == (b, a)) {
                        edges.swap_remove(pos);
                    } else {
                        edges.push((a, b));
                    }
                }
                faces.swap_remove(k);
            } else {
                k += 1;
            }
        }
        if edges.is_empty() {
            break;
        }
        let before = faces.len();
        for &(a, b) in edges.iter() {
            faces.push(make_face(verts, [a, b, id], &inside, false));
        }
        // a closed triangulated polytope has 2 V - 4 faces, and every new face must face away
        // from the interior: rounding that breaks either ends the expansion
        let broken = faces.len() != 2 * verts.len() - 4
            || faces[before..]
                .iter()
                .any(|g| g.d.is_finite() && g.n.dot(&(verts[g.v[0]].w - inside)) < 0.0);
        if broken {
            break;
        }
        f = nearest(faces)?;
    }
    // barycentric coordinates of the origin's projection n d on the face
    let (p0, p1, p2) = (verts[f.v[0]], verts[f.v[1]], verts[f.v[2]]);
    let q = f.n * f.d;
    let (e1, e2, e0) = (p1.w - p0.w, p2.w - p0.w, q - p0.w);
    let (d11, d12, d22) = (e1.dot(&e1), e1.dot(&e2), e2.dot(&e2));
    let (d01, d02) = (e0.dot(&e1), e0.dot(&e2));
    let den = d11 * d22 - d12 * d12;
    let (l1, l2) = if den.abs() < mjMINVAL {
        (0.0, 0.0)
    } else {
        ((d22 * d01 - d12 * d02) / den, (d11 * d02 - d12 * d01) / den)
    };
    let l0 = 1.0 - l1 - l2;
    Some(Penetration {
        depth: f.d,
        normal: f.n,
        a: p0.a * l0 + p1.a * l1 + p2.a * l2,
        b: p0.b * l0 + p1.b * l1 + p2.b * l2,
        iterations,
    })
}
// ANCHOR_END: epa

/// [`epa_with`] with fresh storage (allocates), returning the history of depth bounds too.
pub fn epa(sa: &ConvexShape, sb: &ConvexShape, simplex: &[MinkowskiPoint]) -> Option<EpaResult> {
    let mut ws = EpaScratch::default();
    let e = epa_with(sa, sb, simplex, &mut ws)?;
    Some(EpaResult {
        depth: e.depth,
        normal: e.normal,
        a: e.a,
        b: e.b,
        iterations: e.iterations,
        history: ws.history,
    })
}
// ANCHOR: penetration
/// One contact between two convex shapes within `margin`, the way MuJoCo's native collider
/// reports it (`mjc_penetration`): `pos` midway between the witness points, the normal from A
/// into B, `dist` signed. Spheres and capsules are first reduced to their cores. EPA's polytope
/// is grown in `ws`.
pub fn convex_contact_with(sa: &ConvexShape, sb: &ConvexShape, margin: f64, ws: &mut EpaScratch) -> Option<Contact> {
    let core = |s: &ConvexShape| match s.shape {
        Shape::Sphere(r) => Some((Shape::Point, r)),
        Shape::Capsule(r, h) => Some((Shape::Segment(h), r)),
        _ => None,
    };
    let (ca, cb) = (core(sa), core(sb));
    if ca.is_some() || cb.is_some() {
        let a = ConvexShape {
            shape: ca.map_or(sa.shape, |c| c.0),
            pose: sa.pose,
        };
        let b = ConvexShape {
            shape: cb.map_or(sb.shape, |c| c.0),
            pose: sb.pose,
        };
        let (ra, rb) = (ca.map_or(0.0, |c| c.1), cb.map_or(0.0, |c| c.1));
        let g = gjk(&a, &b, None);
        if !g.overlap && g.dist > 1e-10 {
            // shallow: inflate the cores' closest points by the radii
            let dist = g.dist - ra - rb;
            if dist > margin {
                return None;
            }
            let n = (g.b - g.a) / g.dist;
            let pos = ((g.a + n * ra) + (g.b - n * rb)) * 0.5;
            return Some(Contact {
                pos,
                frame: super::frame::make_frame(&n, &Vec3::zeros()),
                dist,
            });
        }
    }
    let g = gjk(sa, sb, None);
    if !g.overlap {
        if g.dist > margin || g.dist <= 0.0 {
            return None;
        }
        let n = (g.b - g.a) / g.dist;
        return Some(Contact {
            pos: (g.a + g.b) * 0.5,
            frame: super::frame::make_frame(&n, &Vec3::zeros()),
            dist: g.dist,
        });
    }
    let e = epa_with(sa, sb, &g.simplex, ws)?;
    Some(Contact {
        pos: (e.a + e.b) * 0.5,
        frame: super::frame::make_frame(&e.normal, &Vec3::zeros()),
        dist: -e.depth,
    })
}
// ANCHOR_END: penetration

/// [`convex_contact_with`] with fresh storage for EPA (allocates when the shapes overlap).
pub fn convex_contact(sa: &ConvexShape, sb: &ConvexShape, margin: f64) -> Option<Contact> {
    convex_contact_with(sa, sb, margin, &mut EpaScratch::default())
}

// ANCHOR: convex_scratch
/// The storage of the general convex collider, kept between calls (the `Collider` keeps one):
/// EPA's polytope and the multi-contact patch's features and clipping buffers. GJK needs none
/// (its simplex is a [`Simplex`] on the stack). A repeated call of [`convex_contacts_with`] or
/// [`super::hfield::hfield_convex_with`] allocates nothing once the vectors have grown.
#[derive(Clone, Debug, Default)]
pub struct ConvexScratch {
    /// EPA's polytope.
    pub epa: EpaScratch,
    /// The contact patch.
    pub patch: PatchScratch,
}
// ANCHOR_END: convex_scratch

// ANCHOR: multiccd
/// The contacts of two convex shapes (`mjc_Convex`): [`convex_contact`], then MuJoCo 4.0's
/// multi-contact: when the features the shapes meet with at the first contact (read off the
/// first contact's normal, [`super::multicontact::patch`]) hold a face facing a face, or an edge
/// lying in a face, the contact patch is found by clipping one against the other and its points
/// replace the single contact. MuJoCo 4.0 does this for every contact within the margin:
/// penetrating or not, and for a capsule whose core stays separated (GJK's case) as well. The
/// polytope is grown and the patch clipped in the storage `ws`.
pub fn convex_contacts_with(
    sa: &ConvexShape,
    sb: &ConvexShape,
    margin: f64,
    ws: &mut ConvexScratch,
    out: &mut Vec<Contact>,
) {
    let Some(first) = convex_contact_with(sa, sb, margin, &mut ws.epa) else {
        return;
    };
    let start = out.len();
    super::multicontact::patch_with(sa, sb, &first.normal(), margin, &mut ws.patch, out);
    if out.len() == start {
        out.push(first);
    }
}

/// [`convex_contacts_with`] with fresh storage (allocates).
pub fn convex_contacts(sa: &ConvexShape, sb: &ConvexShape, margin: f64, out: &mut Vec<Contact>) {
    convex_contacts_with(sa, sb, margin, &mut ConvexScratch::default(), out)
}
// ANCHOR_END: multiccd

// ANCHOR: plane_convex
/// MuJoCo's `mjc_PlaneConvex` (plane - ellipsoid, plane - mesh): the support point of `s` along
/// `-n` is the first contact. For a mesh hull, up to two more (`maxplanemesh` = 3 in all): the
/// hull neighbours of that support vertex lying below the plane's margin, each at its own depth.
/// (MuJoCo 3.x also skipped a neighbour closer than `0.3 rbound` to the first contact,
/// `tolplanemesh`; 4.0 keeps it, as the fixture's `plane_blob` shows.)
pub fn plane_convex(plane: &GeomPose, s: &ConvexShape, margin: f64, out: &mut Vec<Contact>) {
    let n = plane.rot.column(2).into_owned();
    let start = out.len();
    super::primitives::plane_support(plane, &s.support(&-n), margin, out);
    let Shape::Hull(h) = s.shape else { return };
    if out.len() == start {
        return;
    }
    let best = h.support_index(&(s.pose.rot.transpose() * -n));
    for &k in &h.neighbors[best] {
        if out.len() - start >= 3 {
            break;
        }
        let p = s.pose.rot * h.vertices[k] + s.pose.pos;
        let dist = n.dot(&(p - plane.pos));
        if dist < margin {
            out.push(Contact {
                pos: p - n * (0.5 * dist),
                frame: super::frame::frame_from_normal(&n),
                dist,
            });
        }
    }
}
// ANCHOR_END: plane_convex
