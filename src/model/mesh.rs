//! Mesh and height-field assets (MuJoCo's `mjModel.mesh_*` and `hfield_*`): the data a `mesh` or
//! `hfield` geom points to. Book chapter: "Collision detection", sections "Convex hulls" and
//! "Height fields".
//!
//! A mesh is collided through its **convex hull**, made here by [`quickhull`] (MuJoCo calls
//! qhull): the hull's vertices are what the support function maximises over, its faces merged
//! into flat polygons are what the multi-contact clipping uses, and its vertex graph is what
//! MuJoCo's hill-climbing support walks. Mass and inertia come from the mesh's volume
//! ([`mass_properties`], MuJoCo's `mjCMesh::ComputeVolume` / `ComputeInertia`), and the mesh is
//! re-expressed in its principal inertial frame, as MuJoCo's compiler does.

use crate::error::{Error, Result};
use crate::spatial::{Mat3, Vec3};

/// A convex hull: vertices, outward triangles, the triangles merged into flat polygons, and
/// each vertex's neighbours (the hull graph).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    /// Hull vertices (a subset of the input points), in the mesh frame.
    pub vertices: Vec<Vec3>,
    /// Triangles, counter-clockwise seen from outside (indices into `vertices`).
    pub triangles: Vec<[usize; 3]>,
    /// Flat faces: coplanar triangles merged, boundary counter-clockwise seen from outside.
    pub polygons: Vec<Vec<usize>>,
    /// Outward unit normal of each polygon.
    pub normals: Vec<Vec3>,
    /// For each vertex, the polygons it is a corner of, in increasing order (MuJoCo's
    /// `mesh_polymap`).
    pub vertex_polygons: Vec<Vec<usize>>,
    /// For each vertex, the vertices joined to it by a hull edge.
    pub neighbors: Vec<Vec<usize>>,
}

impl ConvexHull {
    /// Index of the hull vertex farthest along `d` (local frame): a scan of all vertices for
    /// small hulls; for hulls of more than [`HILL_CLIMB_MIN`] vertices MuJoCo's hill climbing
    /// on the hull graph (move to a neighbour while it is farther; on a convex polytope a local
    /// maximum is the global one). Bounded by the number of vertices.
    pub fn support_index(&self, d: &Vec3) -> usize {
        if self.vertices.len() <= HILL_CLIMB_MIN {
            let mut best = (0, f64::NEG_INFINITY);
            for (k, v) in self.vertices.iter().enumerate() {
                let s = v.dot(d);
                if s > best.1 {
                    best = (k, s);
                }
            }
            return best.0;
        }
        let mut cur = 0;
        let mut val = self.vertices[0].dot(d);
        for _ in 0..self.vertices.len() {
            let mut moved = false;
            for &n in &self.neighbors[cur] {
                let s = self.vertices[n].dot(d);
                if s > val {
                    val = s;
                    cur = n;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        cur
    }

    /// Radius of the smallest origin-centred sphere holding the hull (MuJoCo's `geom_rbound`
    /// of a mesh geom).
    pub fn rbound(&self) -> f64 {
        self.vertices.iter().map(|v| v.norm()).fold(0.0, f64::max)
    }
}

/// Hulls with more vertices than this use hill climbing in [`ConvexHull::support_index`].
pub const HILL_CLIMB_MIN: usize = 10;

/// A mesh asset (MuJoCo's `<asset><mesh>` after compilation).
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// Name.
    pub name: String,
    /// Vertices in the mesh frame (the principal inertial frame: centred at the centre of mass).
    pub vertices: Vec<Vec3>,
    /// Triangles of the mesh (after compilation; the hull's when none were given).
    pub faces: Vec<[usize; 3]>,
    /// The convex hull, in the mesh frame.
    pub hull: ConvexHull,
    /// Volume, or for a mesh with `inertia="shell"` its surface area (MuJoCo's
    /// `GetVolumeRef`): a geom's mass is `density * volume`.
    pub volume: f64,
    /// Principal moments of inertia per unit density (per unit area density for a shell),
    /// about the centre of mass.
    pub inertia: Vec3,
    /// Where the mesh frame sits in the frame the vertices were given in (MuJoCo's `mesh_pos`).
    pub pos: Vec3,
    /// Its orientation there (MuJoCo's `mesh_quat`, w x y z).
    pub quat: [f64; 4],
    /// The half-sizes of the smallest box centred at the mesh frame's origin, with its axes,
    /// that holds every vertex (MuJoCo's `max(|aamm_min|, |aamm_max|)` per axis, from the
    /// vertices before their rounding to single precision): what MuJoCo's compiler writes into
    /// the `size` of a mesh geom, and the box its ray test tries first.
    pub half_extent: Vec3,
}

/// A height field asset (MuJoCo's `hfield_*`): elevations on a regular `nrow x ncol` grid over
/// `[-size_x, size_x] x [-size_y, size_y]`, scaled to `[0, size_z]`, with a base of depth
/// `size_base` below zero.
#[derive(Clone, Debug, PartialEq)]
pub struct HField {
    /// Name.
    pub name: String,
    /// `size = (radius_x, radius_y, elevation_z, base_z)`.
    pub size: [f64; 4],
    /// Rows (along y).
    pub nrow: usize,
    /// Columns (along x).
    pub ncol: usize,
    /// Elevations, row-major (`data[r * ncol + c]`), normalised to `[0, 1]`.
    pub data: Vec<f64>,
}

impl HField {
    /// The height of grid point (row `r`, column `c`) in the geom frame: `data * size_z`.
    pub fn height(&self, r: usize, c: usize) -> f64 {
        self.data[r * self.ncol + c] * self.size[2]
    }
    /// The position in the geom frame of grid point (`r`, `c`): x from the column, y from the row.
    pub fn point(&self, r: usize, c: usize) -> Vec3 {
        let dx = 2.0 * self.size[0] / (self.ncol - 1) as f64;
        let dy = 2.0 * self.size[1] / (self.nrow - 1) as f64;
        Vec3::new(
            c as f64 * dx - self.size[0],
            r as f64 * dy - self.size[1],
            self.height(r, c),
        )
    }
}

// ANCHOR: quickhull
/// The convex hull of `points` by quickhull (Barber, Dobkin and Huhdanpaa 1996): start from a
/// tetrahedron of extreme points; give every other point to a face it lies above (its "outside
/// set"); then, while some face has an outside set, take that set's farthest point (the eye),
/// delete every face the eye sees, and close the hole with triangles from the eye to the
/// horizon (the boundary of the deleted region), handing the deleted faces' points to the new
/// faces. Points within `eps = 1e-10 * extent` of a face count as on it. Each round adds one
/// hull vertex, so it is bounded by the number of points.
///
/// Errors: [`Error::DegenerateHull`] when the points are fewer than 4, not finite, or all
/// (nearly) on a line or a plane.
pub fn quickhull(points: &[Vec3]) -> Result<ConvexHull> {
    let bad = |why: String| Error::DegenerateHull { why };
    if points.len() < 4 {
        return Err(bad(format!(
            "{} points cannot enclose a volume (4 needed)",
            points.len()
        )));
    }
    if let Some(k) = points.iter().position(|p| !p.iter().all(|x| x.is_finite())) {
        return Err(bad(format!("point {k} is not finite")));
    }
    let (lo, hi) = points.iter().fold(
        (Vec3::repeat(f64::INFINITY), Vec3::repeat(f64::NEG_INFINITY)),
        |(lo, hi), p| (lo.inf(p), hi.sup(p)),
    );
    let extent = (hi - lo).amax();
    let eps = 1e-10 * extent.max(f64::MIN_POSITIVE);
    // initial tetrahedron: the two extreme points of the widest axis, the farthest from their
    // line, the farthest from their plane
    let axis = (hi - lo).imax();
    let i0 = (0..points.len())
        .min_by(|&a, &b| points[a][axis].total_cmp(&points[b][axis]))
        .unwrap_or(0);
    let i1 = (0..points.len())
        .max_by(|&a, &b| points[a][axis].total_cmp(&points[b][axis]))
        .unwrap_or(0);
    let line = points[i1] - points[i0];
    let off_line = |p: &Vec3| line.cross(&(p - points[i0])).norm() / line.norm().max(f64::MIN_POSITIVE);
    let i2 = (0..points.len())
        .max_by(|&a, &b| off_line(&points[a]).total_cmp(&off_line(&points[b])))
        .unwrap_or(0);
    if line.norm() <= eps || off_line(&points[i2]) <= eps {
        return Err(bad("all points lie on a line".into()));
    }
    let pn = line.cross(&(points[i2] - points[i0])).normalize();
    let off_plane = |p: &Vec3| pn.dot(&(p - points[i0]));
    let i3 = (0..points.len())
        .max_by(|&a, &b| off_plane(&points[a]).abs().total_cmp(&off_plane(&points[b]).abs()))
        .unwrap_or(0);
    if off_plane(&points[i3]).abs() <= eps {
        return Err(bad(format!(
            "all points lie in one plane (the hull is flat: {:.3e} thick)",
            off_plane(&points[i3]).abs()
        )));
    }
    let inside = (points[i0] + points[i1] + points[i2] + points[i3]) / 4.0;
    struct Face {
        v: [usize; 3],
        n: Vec3,
        d: f64,
        outside: Vec<usize>,
        alive: bool,
    }
    let make = |v: [usize; 3]| {
        let n = (points[v[1]] - points[v[0]])
            .cross(&(points[v[2]] - points[v[0]]))
            .normalize();
        Face {
            v,
            n,
            d: n.dot(&points[v[0]]),
            outside: vec![],
            alive: true,
        }
    };
    let mut faces: Vec<Face> = vec![];
    for mut f in [[i0, i1, i2], [i0, i1, i3], [i0, i2, i3], [i1, i2, i3]] {
        let n = (points[f[1]] - points[f[0]]).cross(&(points[f[2]] - points[f[0]]));
        if n.dot(&(points[f[0]] - inside)) < 0.0 {
            f.swap(1, 2);
        }
        faces.push(make(f));
    }
    let assign = |faces: &mut Vec<Face>, from: usize, pts: &[usize]| {
        for &p in pts {
            if let Some(f) =
                (from..faces.len()).find(|&f| faces[f].alive && faces[f].n.dot(&points[p]) - faces[f].d > eps)
            {
                faces[f].outside.push(p);
            }
        }
    };
    let all: Vec<usize> = (0..points.len()).filter(|k| ![i0, i1, i2, i3].contains(k)).collect();
    assign(&mut faces, 0, &all);
    for _ in 0..points.len() {
        let Some(fi) = faces.iter().position(|f| f.alive && !f.outside.is_empty()) else {
            break;
        };
        let f = &faces[fi];
        let eye = *f
            .outside
            .iter()
            .max_by(|&&a, &&b| (f.n.dot(&points[a])).total_cmp(&f.n.dot(&points[b])))
            .unwrap_or(&f.outside[0]);
        // the faces the eye sees, their orphaned points, and the horizon (edges used once)
        let mut orphans = vec![];
        let mut edges: Vec<(usize, usize)> = vec![];
        for g in faces.iter_mut().filter(|g| g.alive) {
            if g.n.dot(&points[eye]) - g.d > eps {
                g.alive = false;
                orphans.append(&mut g.outside);
                for (a, b) in [(g.v[0], g.v[1]), (g.v[1], g.v[2]), (g.v[2], g.v[0])] {
                    if let Some(k) = edges.iter().position(|&e| e == (b, a)) {
                        edges.swap_remove(k);
                    } else {
                        edges.push((a, b));
                    }
                }
            }
        }
        let first = faces.len();
        for (a, b) in edges {
            faces.push(make([a, b, eye]));
        }
        orphans.retain(|&p| p != eye);
        assign(&mut faces, first, &orphans);
    }
    // keep the live faces, renumber the vertices they use
    let mut index = vec![usize::MAX; points.len()];
    let mut vertices = vec![];
    let mut triangles = vec![];
    for f in faces.iter().filter(|f| f.alive) {
        let mut t = [0; 3];
        for (k, &v) in f.v.iter().enumerate() {
            if index[v] == usize::MAX {
                index[v] = vertices.len();
                vertices.push(points[v]);
            }
            t[k] = index[v];
        }
        triangles.push(t);
    }
    let mut neighbors = vec![vec![]; vertices.len()];
    for t in &triangles {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            if !neighbors[a].contains(&b) {
                neighbors[a].push(b);
            }
            if !neighbors[b].contains(&a) {
                neighbors[b].push(a);
            }
        }
    }
    let mut hull = ConvexHull {
        polygons: vec![],
        normals: vec![],
        vertex_polygons: vec![],
        vertices,
        triangles,
        neighbors,
    };
    let key = hull.vertices.clone();
    hull.merge_polygons(&key);
    Ok(hull)
}
// ANCHOR_END: quickhull

/// The angle bin of MuJoCo's polygon merging (`kAngleTol` of `mjCMesh::MakePolygons`), radians.
pub const POLYGON_ANGLE_TOL: f64 = 0.01;

impl ConvexHull {
    // ANCHOR: merge_polygons
    /// Re-merges the hull's triangles into flat polygons, MuJoCo's `mjCMesh::MakePolygons`: a
    /// triangle's normal, computed from `key[v]` (the vertices in the frame MuJoCo bins them in:
    /// the mesh file's, before `refpos`, `refquat` and `scale`), goes to the bin of its azimuth
    /// `round(atan2(n_y, n_x) / 0.01)` and polar angle `round(acos(n_z) / 0.01)` (a normal within
    /// `1e-7` of the z axis bins by its sign only); the triangles of one bin that share edges
    /// form one polygon, traced counter-clockwise from outside. Each polygon's normal is that of
    /// its first three vertices (`MakePolygonNormals`). `key` is indexed like `self.vertices`.
    pub fn merge_polygons(&mut self, key: &[Vec3]) {
        let bin = |t: &[usize; 3]| {
            let n = (key[t[1]] - key[t[0]]).cross(&(key[t[2]] - key[t[0]]));
            let len = n.norm();
            if len < crate::model::constants::mjMINVAL {
                return None;
            }
            let n = n / len;
            if n.z.abs() > 1.0 - 1e-7 {
                let phi = if n.z < 0.0 {
                    (std::f64::consts::PI / POLYGON_ANGLE_TOL).round()
                } else {
                    0.0
                };
                return Some((0i64, phi as i64));
            }
            Some((
                ((n.y + 0.0).atan2(n.x + 0.0) / POLYGON_ANGLE_TOL).round() as i64,
                (n.z.acos() / POLYGON_ANGLE_TOL).round() as i64,
            ))
        };
        let nt = self.triangles.len();
        let keys: Vec<Option<(i64, i64)>> = self.triangles.iter().map(bin).collect();
        let mut group = vec![usize::MAX; nt];
        let mut polygons = vec![];
        let mut normals = vec![];
        for seed in 0..nt {
            if group[seed] != usize::MAX || keys[seed].is_none() {
                continue;
            }
            // the connected triangles of the seed's bin (sharing an edge)
            group[seed] = seed;
            let mut stack = vec![seed];
            let mut members = vec![];
            while let Some(t) = stack.pop() {
                members.push(t);
                for u in 0..nt {
                    if group[u] == usize::MAX
                        && keys[u] == keys[seed]
                        && self.triangles[u]
                            .iter()
                            .filter(|v| self.triangles[t].contains(v))
                            .count()
                            == 2
                    {
                        group[u] = seed;
                        stack.push(u);
                    }
                }
            }
            // boundary: directed edges of the group whose reverse is not in the group
            let mut edges = vec![];
            for &t in &members {
                let v = self.triangles[t];
                edges.extend([(v[0], v[1]), (v[1], v[2]), (v[2], v[0])]);
            }
            let boundary: Vec<(usize, usize)> = edges
                .iter()
                .copied()
                .filter(|&(a, b)| !edges.contains(&(b, a)))
                .collect();
            let mut path = vec![boundary[0].0];
            let mut cur = boundary[0].1;
            for _ in 0..boundary.len() {
                if cur == path[0] {
                    break;
                }
                path.push(cur);
                cur = boundary.iter().find(|e| e.0 == cur).map_or(path[0], |e| e.1);
            }
            let v = &self.vertices;
            let n = (v[path[1]] - v[path[0]]).cross(&(v[path[2]] - v[path[0]]));
            normals.push(n.normalize());
            polygons.push(path);
        }
        let mut vertex_polygons = vec![vec![]; self.vertices.len()];
        for (k, p) in polygons.iter().enumerate() {
            for &v in p {
                vertex_polygons[v].push(k);
            }
        }
        self.polygons = polygons;
        self.normals = normals;
        self.vertex_polygons = vertex_polygons;
    }
    // ANCHOR_END: merge_polygons
}

// ANCHOR: mass_properties
/// Volume, centre of mass and inertia (per unit density, about the centre of mass) of a closed
/// triangle mesh, MuJoCo's default (`inertia="legacy"`) rule (`mjCMesh::ComputeVolume`, then
/// `ComputeInertia`), in two passes of tetrahedra, one per triangle, each of volume
/// `|(g - a) . n| A / 3` for an apex `a` (`g` the triangle's centroid, `n` its unit normal, `A`
/// its area; the absolute value is the legacy rule and equals the signed one on convex meshes,
/// while on a non-convex mesh it counts some volume twice and depends on the apex):
/// 1. apex at the area-weighted centroid `c` of the faces: the centre of mass, the mean of the
///    tetrahedra's centroids `(3 g + c) / 4` weighted by their volumes;
/// 2. apex at that centre of mass: the volume (MuJoCo keeps this pass's total) and the second
///    moments, a tetrahedron with vertices `0, p_0, p_1, p_2` (about the apex) contributing
///    `V/20 (sum p_i p_i^T + (sum p_i)(sum p_i)^T)`, so `I = tr(S) 1 - S`.
///
/// Each sum is formed in MuJoCo's order, term by term: the inertia is the input of MuJoCo's
/// Jacobi iteration for the mesh frame (`crate::model::mj_eig3`), which stops at a tolerance and
/// so follows its input's last bits.
///
/// Errors: [`Error::DegenerateHull`] when the surface area or the volume is below `mjMINVAL`.
pub fn mass_properties(vertices: &[Vec3], faces: &[[usize; 3]]) -> Result<(f64, Vec3, Mat3)> {
    use crate::model::constants::mjMINVAL;
    let bad = |why: String| Error::DegenerateHull { why };
    let dot = |a: &Vec3, b: &Vec3| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    // area, unit normal and centroid of a triangle (MuJoCo's `triangle`): the normal is
    // (b - a) x (c - a) over its length, the area half that length (0 below mjMINVAL)
    let tri = |a: Vec3, b: Vec3, c: Vec3| {
        let (u, v) = (b - a, c - a);
        let n = Vec3::new(
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        );
        let g = Vec3::new(
            (a[0] + b[0] + c[0]) / 3.0,
            (a[1] + b[1] + c[1]) / 3.0,
            (a[2] + b[2] + c[2]) / 3.0,
        );
        let len = dot(&n, &n).sqrt();
        if len < mjMINVAL {
            (0.0, n, g)
        } else {
            (0.5 * len, Vec3::new(n[0] / len, n[1] / len, n[2] / len), g)
        }
    };
    let corners = |f: &[usize; 3]| (vertices[f[0]], vertices[f[1]], vertices[f[2]]);
    let mut area = 0.0;
    let mut facecen = Vec3::zeros();
    for f in faces {
        let (a, b, c) = corners(f);
        let (ar, _, g) = tri(a, b, c);
        for k in 0..3 {
            facecen[k] += ar * g[k];
        }
        area += ar;
    }
    if area < mjMINVAL {
        return Err(bad(format!("surface area {area:.3e} is too small")));
    }
    facecen /= area;
    // pass 1: the centre of mass, tetrahedra from the faces' centroid
    let mut volume = 0.0;
    let mut com = Vec3::zeros();
    for f in faces {
        let (a, b, c) = corners(f);
        let (ar, n, g) = tri(a, b, c);
        let v = (dot(&(g - facecen), &n) * ar / 3.0).abs();
        volume += v;
        for k in 0..3 {
            com[k] += v * (g[k] * 3.0 / 4.0 + facecen[k] / 4.0);
        }
    }
    if volume < mjMINVAL {
        return Err(bad(format!("volume {volume:.3e} is too small")));
    }
    com /= volume;
    // pass 2: volume and second moments s_jk, tetrahedra from the centre of mass
    let mut volume = 0.0;
    let mut s = [0.0; 6];
    let pairs = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];
    for f in faces {
        let (a, b, c) = corners(f);
        let (d, e, h) = (a - com, b - com, c - com);
        let (ar, n, g) = tri(d, e, h);
        let v = (dot(&g, &n) * ar / 3.0).abs();
        volume += v;
        for (sj, &(j, k)) in s.iter_mut().zip(&pairs) {
            *sj += v / 20.0
                * (2.0 * (d[j] * d[k] + e[j] * e[k] + h[j] * h[k])
                    + d[j] * e[k]
                    + d[k] * e[j]
                    + d[j] * h[k]
                    + d[k] * h[j]
                    + e[j] * h[k]
                    + e[k] * h[j]);
        }
    }
    let inertia = Mat3::new(
        s[1] + s[2],
        -s[3],
        -s[4],
        -s[3],
        s[0] + s[2],
        -s[5],
        -s[4],
        -s[5],
        s[0] + s[1],
    );
    Ok((volume, com, inertia))
}
// ANCHOR_END: mass_properties

// ANCHOR: shell_properties
/// Surface area, centre and inertia (per unit area density, about the centre) of a triangle
/// mesh taken as a thin shell, MuJoCo's `inertia="shell"` (`mjCMesh::ComputeSurfaceArea`,
/// `ComputeInertia` with `C = 12`): the mass sits on the surface, so each triangle of area `A`
/// and vertices `p_0, p_1, p_2` weighs `A`; the centre is the area-weighted mean of the
/// triangles' centroids, and the triangle's second moment about a point `o` is
/// `A/12 (sum q_i q_i^T + (sum q_i)(sum q_i)^T)`, `q_i = p_i - o` (exact for a uniform
/// triangle), giving `I = tr(S) 1 - S` summed. A geom of this mesh has mass `density * A`.
///
/// Errors: [`Error::DegenerateHull`] when the surface area is below `mjMINVAL`.
pub fn shell_properties(vertices: &[Vec3], faces: &[[usize; 3]]) -> Result<(f64, Vec3, Mat3)> {
    use crate::model::constants::mjMINVAL;
    let area_of = |f: &[usize; 3]| {
        let (a, b, c) = (vertices[f[0]], vertices[f[1]], vertices[f[2]]);
        let n = (b - a).cross(&(c - a)).norm();
        if n < mjMINVAL {
            0.0
        } else {
            0.5 * n
        }
    };
    let mut area = 0.0;
    let mut com = Vec3::zeros();
    for f in faces {
        let ar = area_of(f);
        area += ar;
        com += ar * (vertices[f[0]] + vertices[f[1]] + vertices[f[2]]) / 3.0;
    }
    if area < mjMINVAL {
        return Err(Error::DegenerateHull {
            why: format!("surface area {area:.3e} is too small"),
        });
    }
    com /= area;
    let mut second = Mat3::zeros();
    for f in faces {
        let ar = area_of(f);
        let q = [vertices[f[0]] - com, vertices[f[1]] - com, vertices[f[2]] - com];
        let sum: Vec3 = q.iter().sum();
        let mut m = sum * sum.transpose();
        for x in &q {
            m += x * x.transpose();
        }
        second += m * (ar / 12.0);
    }
    let inertia = Mat3::identity() * second.trace() - second;
    Ok((area, com, inertia))
}
// ANCHOR_END: shell_properties

#[cfg(test)]
mod tests {
    use super::*;

    fn cube_points() -> Vec<Vec3> {
        let mut p = vec![];
        for k in 0..8 {
            let s = |b: usize| if k & (1 << b) == 0 { -1.0 } else { 1.0 };
            p.push(Vec3::new(s(0) * 0.1, s(1) * 0.2, s(2) * 0.3));
        }
        p.push(Vec3::new(0.01, 0.02, -0.03)); // an interior point
        p
    }

    #[test]
    fn cube_hull_has_eight_vertices_six_square_faces() {
        let h = quickhull(&cube_points()).unwrap();
        assert_eq!(h.vertices.len(), 8);
        assert_eq!(h.triangles.len(), 12);
        assert_eq!(h.polygons.len(), 6);
        assert!(h.polygons.iter().all(|p| p.len() == 4));
        let (v, c, i) = mass_properties(&h.vertices, &h.triangles).unwrap();
        assert!((v - 0.2 * 0.4 * 0.6).abs() < 1e-15);
        assert!(c.norm() < 1e-15);
        // box: m/3 (b^2 + c^2) with half sizes
        let m = v;
        assert!((i[(0, 0)] - m / 3.0 * (0.04 + 0.09)).abs() < 1e-15);
        assert!((i[(2, 2)] - m / 3.0 * (0.01 + 0.04)).abs() < 1e-15);
    }

    #[test]
    fn cube_shell_matches_its_six_plates() {
        // six square plates of side 2a at distance a: I_zz = sum over plates of the plate's own
        // moment plus the parallel-axis term (A = 4 a^2 per plate)
        let h = quickhull(&cube_points()[..8]).unwrap();
        let a = 0.1;
        let pts: Vec<Vec3> = h.vertices.iter().map(|v| v.map(|x| x.signum() * a)).collect();
        let (area, c, i) = shell_properties(&pts, &h.triangles).unwrap();
        let plate = 4.0 * a * a;
        assert!((area - 6.0 * plate).abs() < 1e-15);
        assert!(c.norm() < 1e-15);
        // z-normal plates: (2a)^2 (2a^2)/12 + 0 each... both in-plane axes: A (a^2 + a^2)/3
        // x- and y-normal plates: A (a^2/3 + a^2) each
        let izz = 2.0 * plate * (2.0 * a * a / 3.0) + 4.0 * plate * (a * a / 3.0 + a * a);
        assert!((i[(2, 2)] - izz).abs() < 1e-15, "{} {}", i[(2, 2)], izz);
        assert!(i[(0, 1)].abs() < 1e-15);
    }

    #[test]
    fn flat_points_are_a_typed_error() {
        let p: Vec<Vec3> = (0..6).map(|k| Vec3::new(k as f64, (k * k) as f64, 0.0)).collect();
        assert!(matches!(quickhull(&p), Err(Error::DegenerateHull { .. })));
    }
}
