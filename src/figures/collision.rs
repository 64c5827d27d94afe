//! Figures and report of the chapter "Collision detection" (MuJoCo's `mj_collision`, the narrow
//! phase of [`crate::collision`]).
//!
//! - `collision_pairs.svg`: nine primitive pairs in cross-section (every shape is turned about
//!   the page normal y, so the slice y = 0 shows it exactly): the two outlines, each contact's
//!   point `pos` (black), the two surface points `pos -+ n dist/2` (hollow), and the normal.
//! - `collision_gjk.svg`: GJK on an ellipsoid and a capsule in the page plane: the outline of the
//!   Minkowski difference `A - B`, the origin, and the simplex and closest point `v` of every
//!   iteration.
//! - `collision_epa.svg`: EPA's lower bound on the depth (the nearest face of the polytope)
//!   against iterations for two boxes, a box and an ellipsoid, and two ellipsoids, as the gap to
//!   the converged depth.
//! - `collision_scene.svg` ([`scene_figure`] on [`SCENE_XML`]): a model's contacts seen along y,
//!   geom centres and contact normals. The example draws any model the same way.
//! - `collision_hull.svg`: quickhull on 40 random points seen along z: the points, the hull's
//!   edges, and its flat faces (merged coplanar triangles) of more than three corners.
//! - `collision_patch.svg`: MuJoCo 4.0's multi-contact seen from above: a cylinder tilted by 3
//!   degrees standing on a box, the box's top face, the cylinder's bottom disc as a 16-gon
//!   (clipped by the top face's side planes), and the four contacts (the largest quadrilateral
//!   of the clipped polygon) with their depths.
//! - `collision_hfield.svg`: a height field cut along one grid row: the surface, the prisms'
//!   walls down to the base, a sphere and a capsule resting on it and their contacts, one per
//!   prism.
//! - `collision_rays.svg` ([`ray_picture`]): the scene of `tests/fixtures/models/ray_scene.xml`
//!   drawn by MuJoCo's `mj_ray` alone ([`crate::mujoco::ray::ray`]): one ray per pixel from a
//!   pinhole camera, each pixel coloured by the type of the geom hit and shaded by the normal
//!   there; the geoms made invisible by an alpha of 0 are not in the picture.

use super::draw::{canvas, finish, Side, Sketch, GREY, INK};
use crate::collision::convex::{epa, gjk, ConvexShape, GjkStep, Shape};
use crate::collision::{collide, Contact, GeomPose};
use crate::error::Result;
use crate::model::{GeomType, Model};
use crate::mujoco::collision::{collide_all, geom_poses};
use crate::mujoco::forward_smooth;
use crate::mujoco::ray::{ray, RayFilter, RayHit};
use crate::plot::{Chart, Series, PALETTE};
use crate::spatial::{axis_angle_mat, Mat3, Vec3};
use plotters::style::RGBColor;
use std::path::{Path, PathBuf};

/// A pose turned by `angle` about y, centred at (x, 0, z).
fn pose_xz(x: f64, z: f64, angle: f64) -> GeomPose {
    GeomPose {
        pos: Vec3::new(x, 0.0, z),
        rot: axis_angle_mat(&Vec3::y(), angle),
    }
}

/// The outline of a shape's cross-section y = 0 (its axes turned about y only), as (x, z) points.
pub fn outline(t: GeomType, s: &[f64; 3], p: &GeomPose) -> Vec<(f64, f64)> {
    let map = |lx: f64, lz: f64| {
        let w = p.pos + p.rot * Vec3::new(lx, 0.0, lz);
        (w.x, w.z)
    };
    let arc = |cx: f64, cz: f64, r: f64, a0: f64, a1: f64, out: &mut Vec<(f64, f64)>| {
        for k in 0..=24 {
            let a = a0 + (a1 - a0) * k as f64 / 24.0;
            out.push(map(cx + r * a.cos(), cz + r * a.sin()));
        }
    };
    let mut out = vec![];
    let pi = std::f64::consts::PI;
    match t {
        GeomType::Plane | GeomType::HField(_) | GeomType::Mesh(_) => {
            out.push(map(-1.0, 0.0));
            out.push(map(1.0, 0.0));
        }
        GeomType::Sphere => arc(0.0, 0.0, s[0], 0.0, 2.0 * pi, &mut out),
        GeomType::Capsule => {
            arc(0.0, s[1], s[0], 0.0, pi, &mut out);
            arc(0.0, -s[1], s[0], pi, 2.0 * pi, &mut out);
            out.push(out[0]);
        }
        GeomType::Ellipsoid => {
            for k in 0..=48 {
                let a = 2.0 * pi * k as f64 / 48.0;
                out.push(map(s[0] * a.cos(), s[2] * a.sin()));
            }
        }
        GeomType::Cylinder | GeomType::Box => {
            let (hx, hz) = if t == GeomType::Box { (s[0], s[2]) } else { (s[0], s[1]) };
            for (x, z) in [(hx, hz), (-hx, hz), (-hx, -hz), (hx, -hz), (hx, hz)] {
                out.push(map(x, z));
            }
        }
    }
    out
}

/// One panel's pair: types, sizes, poses.
type Pair = (
    &'static str,
    (GeomType, [f64; 3], GeomPose),
    (GeomType, [f64; 3], GeomPose),
);

fn example_pairs() -> Vec<Pair> {
    use GeomType::*;
    vec![
        (
            "plane - sphere",
            (Plane, [1.0; 3], pose_xz(0.0, 0.0, 0.0)),
            (Sphere, [0.3, 0.0, 0.0], pose_xz(0.0, 0.25, 0.0)),
        ),
        (
            "plane - capsule",
            (Plane, [1.0; 3], pose_xz(0.0, 0.0, 0.0)),
            (Capsule, [0.15, 0.35, 0.0], pose_xz(0.0, 0.2, 1.3)),
        ),
        (
            "plane - box",
            (Plane, [1.0; 3], pose_xz(0.0, 0.0, 0.0)),
            (Box, [0.3, 0.2, 0.2], pose_xz(0.0, 0.26, 0.35)),
        ),
        (
            "plane - cylinder",
            (Plane, [1.0; 3], pose_xz(0.0, 0.0, 0.0)),
            (Cylinder, [0.3, 0.2, 0.0], pose_xz(0.0, 0.17, 0.0)),
        ),
        (
            "sphere - sphere",
            (Sphere, [0.3, 0.0, 0.0], pose_xz(-0.25, 0.0, 0.0)),
            (Sphere, [0.25, 0.0, 0.0], pose_xz(0.25, 0.15, 0.0)),
        ),
        (
            "capsule - capsule",
            (Capsule, [0.15, 0.3, 0.0], pose_xz(-0.2, 0.0, 0.3)),
            (Capsule, [0.12, 0.3, 0.0], pose_xz(0.22, 0.05, -0.5)),
        ),
        (
            "sphere - box",
            (Sphere, [0.25, 0.0, 0.0], pose_xz(-0.2, 0.3, 0.0)),
            (Box, [0.3, 0.2, 0.25], pose_xz(0.2, -0.05, 0.3)),
        ),
        (
            "capsule - box",
            (Capsule, [0.12, 0.35, 0.0], pose_xz(0.0, 0.38, 1.45)),
            (Box, [0.45, 0.2, 0.25], pose_xz(0.0, 0.0, 0.0)),
        ),
        (
            "box - box",
            (Box, [0.4, 0.3, 0.15], pose_xz(0.0, 0.0, 0.0)),
            (Box, [0.2, 0.2, 0.15], pose_xz(0.1, 0.27, 0.15)),
        ),
    ]
}

/// Draws one pair and its contacts in a panel.
fn draw_pair(sk: &Sketch, pair: &Pair, contacts: &[Contact]) -> Result<()> {
    let (_, a, b) = pair;
    for (k, g) in [a, b].iter().enumerate() {
        let pts = outline(g.0, &g.1, &g.2);
        if g.0 != GeomType::Plane {
            sk.fill(&pts, PALETTE[k], 0.15)?;
        }
        sk.line(&pts, PALETTE[k], 2)?;
    }
    for c in contacts {
        let n = c.normal();
        let p = (c.pos.x, c.pos.z);
        let s1 = c.pos - n * (0.5 * c.dist);
        let s2 = c.pos + n * (0.5 * c.dist);
        sk.line(&[(s1.x, s1.z), (s2.x, s2.z)], INK, 1)?;
        sk.joint((s1.x, s1.z), 4, PALETTE[0])?;
        sk.joint((s2.x, s2.z), 4, PALETTE[1])?;
        sk.dot(p, 3, INK)?;
        sk.arrow(p, (p.0 + 0.2 * n.x, p.1 + 0.2 * n.z), PALETTE[2], 2)?;
    }
    Ok(())
}

/// The contacts of `example_pairs` (margin 0).
pub fn pair_contacts() -> Vec<(&'static str, Vec<Contact>)> {
    example_pairs()
        .iter()
        .map(|(name, a, b)| {
            let mut out = vec![];
            collide((a.0, &a.1, &a.2), (b.0, &b.1, &b.2), 0.0, &mut out);
            (*name, out)
        })
        .collect()
}

fn pairs_figure(path: &Path) -> Result<()> {
    let root = canvas(
        path,
        1200,
        1250,
        "Primitive pairs in cross-section: contacts (dots), surface points pos -+ n dist/2 (rings), normals from A (blue) to B (orange)",
    )?;
    let panels = root.split_evenly((3, 3));
    for (area, pair) in panels.into_iter().zip(example_pairs()) {
        let mut out = vec![];
        collide(
            (pair.1 .0, &pair.1 .1, &pair.1 .2),
            (pair.2 .0, &pair.2 .1, &pair.2 .2),
            0.0,
            &mut out,
        );
        let sk = Sketch::new(area, (-0.7, 0.7), (-0.45, 0.75), 12.0);
        let name = pair.0.split(" (").next().unwrap_or(pair.0);
        sk.label(
            (-0.65, 0.7),
            &format!("{name}: {} contact(s)", out.len()),
            Side::Right,
            17,
            INK,
        )?;
        draw_pair(&sk, &pair, &out)?;
    }
    finish(&root)
}

/// The GJK example: an ellipsoid and a capsule in the page plane, separated.
pub fn gjk_example() -> (ConvexShape<'static>, ConvexShape<'static>) {
    (
        ConvexShape {
            shape: Shape::Ellipsoid(Vec3::new(0.5, 0.3, 0.25)),
            pose: pose_xz(-0.2, -0.1, 0.4),
        },
        ConvexShape {
            shape: Shape::Capsule(0.15, 0.3),
            pose: pose_xz(0.9, 0.6, -0.9),
        },
    )
}

fn gjk_figure(path: &Path) -> Result<(usize, f64)> {
    let (a, b) = gjk_example();
    let mut trace: Vec<GjkStep> = vec![];
    let g = gjk(&a, &b, Some(&mut trace));
    let root = canvas(
        path,
        900,
        760,
        "GJK on A - B (ellipsoid minus capsule): simplex and closest point v per iteration",
    )?;
    let sk = Sketch::new(root, (-2.0, 0.6), (-1.5, 0.6), 20.0);
    // the Minkowski difference, traced by its support in the page plane
    let d: Vec<(f64, f64)> = (0..=180)
        .map(|k| {
            let t = 2.0 * std::f64::consts::PI * k as f64 / 180.0;
            let u = Vec3::new(t.cos(), 0.0, t.sin());
            let w = a.support(&u) - b.support(&-u);
            (w.x, w.z)
        })
        .collect();
    sk.fill(&d, GREY, 0.2)?;
    sk.line(&d, GREY, 2)?;
    sk.dot((0.0, 0.0), 4, INK)?;
    sk.label((0.03, 0.03), "origin", Side::Right, 16, INK)?;
    for (k, step) in trace.iter().enumerate() {
        let c = PALETTE[k % PALETTE.len()];
        let mut pts: Vec<(f64, f64)> = step.simplex.iter().map(|w| (w.x, w.z)).collect();
        if pts.len() > 1 {
            pts.push(pts[0]);
        }
        sk.line(&pts, c, 2)?;
        for p in &pts {
            sk.dot(*p, 4, c)?;
        }
        sk.arrow((0.0, 0.0), (step.v.x, step.v.z), c, 1)?;
        sk.label((step.v.x, step.v.z), &format!("v{}", k + 1), Side::Below, 14, c)?;
    }
    sk.label(
        (-1.95, 0.5),
        &format!("{} iterations, distance |v| = {:.6} m", trace.len(), g.dist),
        Side::Right,
        16,
        INK,
    )?;
    finish(sk.area())?;
    Ok((trace.len(), g.dist))
}

/// EPA's depth bound per iteration for a penetrating pair, as the gap to its final depth.
pub fn epa_history(a: &ConvexShape, b: &ConvexShape) -> Option<(Vec<f64>, f64)> {
    let g = gjk(a, b, None);
    if !g.overlap {
        return None;
    }
    let e = epa(a, b, &g.simplex)?;
    Some((e.history, e.depth))
}

fn epa_figure(path: &Path) -> Result<Vec<(String, usize, f64)>> {
    let rot = axis_angle_mat(&Vec3::new(1.0, 2.0, 0.5).normalize(), 0.6);
    let cases = [
        (
            "two boxes",
            Shape::Box(Vec3::new(0.3, 0.2, 0.1)),
            Shape::Box(Vec3::new(0.2, 0.2, 0.2)),
        ),
        (
            "box - ellipsoid",
            Shape::Box(Vec3::new(0.3, 0.2, 0.1)),
            Shape::Ellipsoid(Vec3::new(0.3, 0.2, 0.25)),
        ),
        (
            "two ellipsoids",
            Shape::Ellipsoid(Vec3::new(0.3, 0.2, 0.15)),
            Shape::Ellipsoid(Vec3::new(0.3, 0.2, 0.25)),
        ),
    ];
    let mut chart = Chart::new(
        "EPA: nearest face of the polytope against iterations",
        "iteration",
        "depth - nearest face distance (m)",
    )
    .log(false, true);
    let mut rows = vec![];
    for (name, sa, sb) in cases {
        let a = ConvexShape {
            shape: sa,
            pose: GeomPose {
                pos: Vec3::zeros(),
                rot: Mat3::identity(),
            },
        };
        let b = ConvexShape {
            shape: sb,
            pose: GeomPose {
                pos: Vec3::new(0.15, 0.1, 0.25),
                rot,
            },
        };
        if let Some((h, depth)) = epa_history(&a, &b) {
            let pts: Vec<(f64, f64)> = h
                .iter()
                .enumerate()
                .map(|(k, d)| ((k + 1) as f64, (depth - d).max(1e-16)))
                .collect();
            rows.push((name.to_string(), h.len(), depth));
            chart = chart.with(Series::line_points(name, pts));
        }
    }
    chart.save_svg(path)?;
    Ok(rows)
}

/// The contacts of a model at `qpos` drawn along y: geom centres and every contact with its
/// normal. Returns the contacts.
pub fn scene_figure(
    model: &Model,
    qpos: &[f64],
    path: &Path,
    title: &str,
) -> Result<Vec<crate::mujoco::collision::MjContact>> {
    let d = forward_smooth(model, qpos, &vec![0.0; model.nv][..])?;
    let contacts = collide_all(model, &d)?;
    let poses = geom_poses(model, &d);
    let (mut lo, mut hi) = ((f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, f64::NEG_INFINITY));
    for (g, p) in model.geoms.iter().zip(&poses) {
        if g.gtype == GeomType::Plane {
            continue;
        }
        lo = (lo.0.min(p.pos.x), lo.1.min(p.pos.z));
        hi = (hi.0.max(p.pos.x), hi.1.max(p.pos.z));
    }
    lo = (lo.0.min(0.0) - 0.5, lo.1.min(0.0) - 0.3);
    hi = (hi.0 + 0.5, hi.1 + 0.3);
    let root = canvas(path, 900, 700, title)?;
    let sk = Sketch::new(root, (lo.0, hi.0), (lo.1, hi.1), 20.0);
    sk.line(&[(lo.0, 0.0), (hi.0, 0.0)], GREY, 2)?;
    for (g, p) in model.geoms.iter().zip(&poses) {
        if g.gtype != GeomType::Plane {
            // the slice through the geom's centre in its own x-z plane (exact for geoms turned
            // about y only)
            sk.line(&outline(g.gtype, &g.size, p), GREY, 1)?;
            sk.joint((p.pos.x, p.pos.z), 3, GREY)?;
        }
    }
    let scale = 0.1 * (hi.1 - lo.1);
    for c in &contacts {
        let n = c.normal();
        let p = (c.pos.x, c.pos.z);
        sk.dot(p, 4, PALETTE[1])?;
        sk.arrow(p, (p.0 + scale * n.x, p.1 + scale * n.z), PALETTE[2], 2)?;
    }
    sk.label(
        (lo.0 + 0.05, hi.1 - 0.05),
        &format!(
            "{} contacts; geom centres grey, contacts orange, normals green",
            contacts.len()
        ),
        Side::Right,
        16,
        INK,
    )?;
    finish(sk.area())?;
    Ok(contacts)
}

/// The chapter's example scene: a box, a capsule, a cylinder and an ellipsoid dropped on a
/// plane, a sphere resting on the box.
pub const SCENE_XML: &str = r#"<mujoco model="collision_scene">
  <compiler angle="radian"/>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1"/>
    <body name="box" pos="-0.6 0 0.148" euler="0 0.05 0"><freejoint/><geom name="box" type="box" size="0.2 0.15 0.15"/></body>
    <body name="ball" pos="-0.58 0 0.39"><freejoint/><geom name="ball" type="sphere" size="0.1"/></body>
    <body name="capsule" pos="0 0 0.098" euler="0 1.4 0"><freejoint/><geom name="capsule" type="capsule" size="0.1 0.2"/></body>
    <body name="cylinder" pos="0.6 0 0.119"><freejoint/><geom name="cylinder" type="cylinder" size="0.15 0.12"/></body>
    <body name="egg" pos="1.1 0 0.09" euler="0 0.3 0"><freejoint/><geom name="egg" type="ellipsoid" size="0.2 0.12 0.1"/></body>
  </worldbody>
</mujoco>"#;

/// The 40 points of the hull figure (seeded, inside a box of half-size 0.3).
pub fn hull_points() -> Vec<Vec3> {
    // a small linear congruential generator: the figure needs no statistics
    let mut state: u64 = 20261124;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 0.6 - 0.3
    };
    (0..40).map(|_| Vec3::new(next(), next(), next())).collect()
}

fn hull_figure(path: &Path) -> Result<(usize, usize, usize)> {
    let pts = hull_points();
    let h = crate::model::mesh::quickhull(&pts)?;
    let root = canvas(path, 800, 760, "Quickhull of 40 random points, seen along z")?;
    let sk = Sketch::new(root, (-0.4, 0.4), (-0.4, 0.4), 20.0);
    for (k, poly) in h.polygons.iter().enumerate() {
        let mut ring: Vec<(f64, f64)> = poly.iter().map(|&v| (h.vertices[v].x, h.vertices[v].y)).collect();
        if poly.len() > 3 && h.normals[k].z > 0.0 {
            sk.fill(&ring, PALETTE[2], 0.25)?;
        }
        ring.push(ring[0]);
        let c = if h.normals[k].z > 0.0 { INK } else { GREY };
        sk.line(&ring, c, 1)?;
    }
    for p in &pts {
        sk.dot((p.x, p.y), 3, PALETTE[1])?;
    }
    for v in &h.vertices {
        sk.joint((v.x, v.y), 4, INK)?;
    }
    sk.label(
        (-0.39, 0.38),
        &format!(
            "{} points, {} hull vertices, {} triangles, {} flat faces; upper faces black, lower grey",
            pts.len(),
            h.vertices.len(),
            h.triangles.len(),
            h.polygons.len()
        ),
        Side::Right,
        15,
        INK,
    )?;
    finish(sk.area())?;
    Ok((h.vertices.len(), h.triangles.len(), h.polygons.len()))
}

/// The patch figure's pair: a box (half sizes 0.6, 0.4, 0.1) and a cylinder (radius 0.25,
/// half-length 0.2) tilted by 3 degrees about x, sunk about 1 cm into it.
pub fn patch_example() -> (GeomPose, Vec3, GeomPose, [f64; 3]) {
    let bx = GeomPose {
        pos: Vec3::zeros(),
        rot: Mat3::identity(),
    };
    let cyl = GeomPose {
        pos: Vec3::new(0.05, -0.03, 0.29),
        rot: axis_angle_mat(&Vec3::x(), 3f64.to_radians()),
    };
    (bx, Vec3::new(0.6, 0.4, 0.1), cyl, [0.25, 0.2, 0.0])
}

fn patch_figure(path: &Path) -> Result<Vec<Contact>> {
    let (bx, half, cyl, size) = patch_example();
    let mut out = vec![];
    collide(
        (GeomType::Cylinder, &size, &cyl),
        (GeomType::Box, &[half.x, half.y, half.z], &bx),
        0.0,
        &mut out,
    );
    let root = canvas(
        path,
        860,
        640,
        "Multi-contact: a tilted cylinder on a box, seen from above",
    )?;
    let sk = Sketch::new(root, (-0.65, 0.65), (-0.45, 0.45), 20.0);
    let rect = [
        (-half.x, -half.y),
        (half.x, -half.y),
        (half.x, half.y),
        (-half.x, half.y),
        (-half.x, -half.y),
    ];
    sk.fill(&rect, GREY, 0.15)?;
    sk.line(&rect, GREY, 2)?;
    let n = crate::collision::multicontact::CYLINDER_SIDES;
    let disc: Vec<(f64, f64)> = (0..=n)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / n as f64;
            let p = cyl.pos + cyl.rot * Vec3::new(size[0] * a.cos(), size[0] * a.sin(), -size[1]);
            (p.x, p.y)
        })
        .collect();
    sk.line(&disc, PALETTE[0], 2)?;
    for c in &out {
        sk.dot((c.pos.x, c.pos.y), 6, PALETTE[1])?;
        sk.label((c.pos.x, c.pos.y), &format!("{:.4}", c.dist), Side::Right, 15, INK)?;
    }
    sk.label(
        (-0.63, 0.43),
        &format!(
            "box top face grey, cylinder's bottom disc as a {n}-gon blue, {} contacts (orange, with dist)",
            out.len()
        ),
        Side::Right,
        15,
        INK,
    )?;
    finish(sk.area())?;
    Ok(out)
}

/// The height field of the figure and the tests: 9 x 11 points over 2 x 1.6 m, a bump of
/// height 0.3 m on a base 0.1 m deep.
pub fn bump_hfield() -> crate::model::mesh::HField {
    let (nrow, ncol) = (9, 11);
    let mut data = vec![];
    for r in 0..nrow {
        for c in 0..ncol {
            let (x, y) = (c as f64, r as f64);
            data.push((-((x - 5.0).powi(2) + (y - 4.0).powi(2)) / 6.0).exp() + 0.05 * x.sin());
        }
    }
    let (lo, hi) = data
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
    crate::model::mesh::HField {
        name: "bump".into(),
        size: [1.0, 0.8, 0.3, 0.1],
        nrow,
        ncol,
        data: data.iter().map(|x| (x - lo) / (hi - lo)).collect(),
    }
}

fn hfield_figure(path: &Path) -> Result<Vec<Contact>> {
    let h = bump_hfield();
    let assets_h = [h.clone()];
    let assets = crate::collision::Assets {
        meshes: &[],
        hfields: &assets_h,
    };
    let field = GeomPose {
        pos: Vec3::zeros(),
        rot: Mat3::identity(),
    };
    let row = 4;
    let ball = pose_xz(-0.42, 0.0, 0.0);
    let ball = GeomPose {
        pos: Vec3::new(ball.pos.x, h.point(row, 0).y, 0.21),
        rot: ball.rot,
    };
    let cap = GeomPose {
        pos: Vec3::new(0.45, h.point(row, 0).y, 0.22),
        rot: axis_angle_mat(&Vec3::y(), 1.2),
    };
    let mut out = vec![];
    for (t, s, p) in [
        (GeomType::Sphere, [0.12, 0.0, 0.0], &ball),
        (GeomType::Capsule, [0.06, 0.15, 0.0], &cap),
    ] {
        crate::collision::collide_with(
            &assets,
            (GeomType::HField(0), &[0.0; 3], &field),
            (t, &s, p),
            0.0,
            &mut out,
        );
    }
    let root = canvas(
        path,
        900,
        520,
        "A height field cut along its middle row: prisms and contacts",
    )?;
    let sk = Sketch::new(root, (-1.05, 1.05), (-0.15, 0.45), 20.0);
    let surf: Vec<(f64, f64)> = (0..h.ncol).map(|c| (h.point(row, c).x, h.point(row, c).z)).collect();
    let mut area = surf.clone();
    area.push((1.0, -0.1));
    area.push((-1.0, -0.1));
    sk.fill(&area, GREY, 0.15)?;
    sk.line(&surf, INK, 2)?;
    for &(x, z) in &surf {
        sk.line(&[(x, -0.1), (x, z)], GREY, 1)?;
    }
    sk.line(&[(-1.0, -0.1), (1.0, -0.1)], GREY, 1)?;
    sk.line(&outline(GeomType::Sphere, &[0.12, 0.0, 0.0], &ball), PALETTE[0], 2)?;
    sk.line(&outline(GeomType::Capsule, &[0.06, 0.15, 0.0], &cap), PALETTE[0], 2)?;
    for c in &out {
        let n = c.normal();
        sk.dot((c.pos.x, c.pos.z), 4, PALETTE[1])?;
        sk.arrow(
            (c.pos.x, c.pos.z),
            (c.pos.x + 0.1 * n.x, c.pos.z + 0.1 * n.z),
            PALETTE[2],
            2,
        )?;
    }
    sk.label(
        (-1.0, 0.43),
        &format!(
            "surface black, prism walls grey (base 0.1 m below zero), {} contacts (one per prism), normals green",
            out.len()
        ),
        Side::Right,
        15,
        INK,
    )?;
    finish(sk.area())?;
    Ok(out)
}

/// The model of the ray picture: `tests/fixtures/models/ray_scene.xml` (its meshes are files
/// beside it, so it is read from the source tree).
pub fn ray_scene() -> Result<Model> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/ray_scene.xml");
    Ok(crate::mjcf::load(path)?.model)
}

// ANCHOR: ray_picture
/// A picture made of rays: a pinhole camera at `eye` looking at `target` (z up) with a vertical
/// field of view `fov` (radians) casts one ray per pixel of a `width x height` image through
/// the geoms of `model` at `qpos` ([`ray`], every visible geom, no body excluded). Returns the
/// hits row by row, the top row first. The direction of pixel `(i, j)` is
/// `f + (2 (i + 1/2) / width - 1) a r + (1 - 2 (j + 1/2) / height) tan(fov / 2) u` with `f`
/// the unit forward vector, `r`, `u` the camera's right and up, `a = tan(fov / 2) width /
/// height`; it is not normalised, so each hit's `dist` is a depth along `f`, in metres.
pub fn ray_picture(
    model: &Model,
    qpos: &[f64],
    eye: &Vec3,
    target: &Vec3,
    fov: f64,
    (width, height): (usize, usize),
) -> Result<Vec<Option<RayHit>>> {
    let d = forward_smooth(model, qpos, &vec![0.0; model.nv])?;
    let poses = geom_poses(model, &d);
    let f = (target - eye).normalize();
    let r = f.cross(&Vec3::z()).normalize();
    let u = r.cross(&f);
    let (th, tw) = ((0.5 * fov).tan(), (0.5 * fov).tan() * width as f64 / height as f64);
    let mut out = Vec::with_capacity(width * height);
    for j in 0..height {
        for i in 0..width {
            let x = 2.0 * (i as f64 + 0.5) / width as f64 - 1.0;
            let y = 1.0 - 2.0 * (j as f64 + 0.5) / height as f64;
            let vec = f + r * (x * tw) + u * (y * th);
            out.push(ray(model, &poses, eye, &vec, &RayFilter::default())?);
        }
    }
    Ok(out)
}
// ANCHOR_END: ray_picture

/// The colour of a geom type in the ray picture.
fn type_colour(t: GeomType) -> RGBColor {
    match t {
        GeomType::Plane => RGBColor(170, 175, 185),
        GeomType::HField(_) => RGBColor(120, 160, 70),
        GeomType::Sphere => PALETTE[0],
        GeomType::Capsule => PALETTE[1],
        GeomType::Ellipsoid => PALETTE[3],
        GeomType::Cylinder => PALETTE[4],
        GeomType::Box => PALETTE[5],
        GeomType::Mesh(_) => RGBColor(150, 60, 200),
    }
}

/// Draws [`ray_picture`] of the ray scene; returns (rays cast, hits).
fn rays_figure(path: &Path) -> Result<(usize, usize)> {
    let model = ray_scene()?;
    let mut qpos: Vec<f64> = model.qpos0.iter().copied().collect();
    // the free ball a little aside and turned, the arm swung up, the slider moved and turned
    let (c, s) = ((0.35f64).cos(), (0.35f64).sin());
    qpos[..7].copy_from_slice(&[0.25, -0.35, 1.05, c, 0.6 * s, 0.0, 0.8 * s]);
    qpos[7] = -0.5;
    qpos[8] = 0.2;
    qpos[9] = 0.6;
    let (w, h) = (170usize, 130usize);
    let eye = Vec3::new(-3.3, -3.0, 2.3);
    let target = Vec3::new(0.3, 0.1, 0.5);
    let hits = ray_picture(&model, &qpos, &eye, &target, 0.85, (w, h))?;
    let light = Vec3::new(-0.3, -0.5, 0.81).normalize();
    let root = canvas(path, 900, 650, "The ray scene drawn by mj_ray alone: one ray per pixel")?;
    let (left, right) = root.split_horizontally(705);
    let sk = Sketch::new(left, (0.0, w as f64), (0.0, h as f64), 6.0);
    // a pixel's colour: its geom type's, shaded by the light on the normal in 8 steps
    let shade = |hit: &Option<RayHit>| -> Option<RGBColor> {
        let hit = hit.as_ref()?;
        let base = type_colour(model.geoms[hit.geom].gtype);
        let b = ((0.35 + 0.65 * hit.normal.dot(&light).max(0.0)) * 8.0).round() / 8.0;
        let f = |x: u8| (x as f64 * b).round().min(255.0) as u8;
        Some(RGBColor(f(base.0), f(base.1), f(base.2)))
    };
    sk.fill(
        &[(0.0, 0.0), (w as f64, 0.0), (w as f64, h as f64), (0.0, h as f64)],
        RGBColor(236, 240, 245),
        1.0,
    )?;
    for j in 0..h {
        let top = (h - j) as f64;
        let mut i = 0;
        while i < w {
            let colour = shade(&hits[j * w + i]);
            let mut k = i + 1;
            while k < w && shade(&hits[j * w + k]) == colour {
                k += 1;
            }
            if let Some(c) = colour {
                let (x0, x1) = (i as f64, k as f64);
                sk.fill(&[(x0, top - 1.0), (x1, top - 1.0), (x1, top), (x0, top)], c, 1.0)?;
            }
            i = k;
        }
    }
    let legend = Sketch::new(right, (0.0, 1.0), (0.0, 3.0), 6.0);
    let types = [
        ("plane", GeomType::Plane),
        ("height field", GeomType::HField(0)),
        ("sphere", GeomType::Sphere),
        ("capsule", GeomType::Capsule),
        ("ellipsoid", GeomType::Ellipsoid),
        ("cylinder", GeomType::Cylinder),
        ("box", GeomType::Box),
        ("mesh", GeomType::Mesh(0)),
    ];
    for (k, (name, t)) in types.iter().enumerate() {
        let y = 2.8 - 0.13 * k as f64;
        legend.fill(
            &[(0.02, y - 0.04), (0.12, y - 0.04), (0.12, y + 0.04), (0.02, y + 0.04)],
            type_colour(*t),
            1.0,
        )?;
        legend.label((0.12, y), name, Side::Right, 15, INK)?;
    }
    let hit = hits.iter().filter(|h| h.is_some()).count();
    let hidden = (0..model.geoms.len())
        .filter(|&g| crate::mujoco::ray::eliminated(&model, g, &RayFilter::default()))
        .count();
    let notes = [
        format!("{} rays, {hit} hits", w * h),
        "shading: light . normal".to_string(),
        format!("not drawn: the {hidden} geoms"),
        "with alpha 0 (in their rgba,".to_string(),
        "material, mesh's material".to_string(),
        "or default class)".to_string(),
        "planes are one-sided: the".to_string(),
        "wall shows its front face".to_string(),
    ];
    for (k, n) in notes.iter().enumerate() {
        legend.label((0.0, 1.55 - 0.11 * k as f64), n, Side::Right, 14, INK)?;
    }
    finish(sk.area())?;
    Ok((w * h, hit))
}

/// Writes the chapter's figures into `dir` and prints a short report.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("Collision detection (MuJoCo's mj_collision)");
    for (name, cs) in pair_contacts() {
        let dists: Vec<String> = cs.iter().map(|c| format!("{:.4}", c.dist)).collect();
        println!("  {name:<34} {} contact(s), dist {}", cs.len(), dists.join(" "));
    }
    let p = dir.join("collision_pairs.svg");
    pairs_figure(&p)?;
    out.push(p);
    let p = dir.join("collision_gjk.svg");
    let (iters, dist) = gjk_figure(&p)?;
    println!("  GJK, ellipsoid - capsule: {iters} iterations, distance {dist:.9} m");
    out.push(p);
    let p = dir.join("collision_epa.svg");
    for (name, iters, depth) in epa_figure(&p)? {
        println!("  EPA, {name}: {iters} iterations, depth {depth:.9} m");
    }
    out.push(p);
    let model = crate::mjcf::load_str(SCENE_XML)?.model;
    let qpos: Vec<f64> = model.qpos0.iter().copied().collect();
    let p = dir.join("collision_scene.svg");
    let contacts = scene_figure(
        &model,
        &qpos,
        &p,
        "Contacts of the example scene at qpos0, seen along y",
    )?;
    println!("  example scene: {} contacts", contacts.len());
    out.push(p);
    let p = dir.join("collision_hull.svg");
    let (nv, nt, np) = hull_figure(&p)?;
    println!("  quickhull of 40 points: {nv} vertices, {nt} triangles, {np} flat faces");
    out.push(p);
    let p = dir.join("collision_patch.svg");
    let cs = patch_figure(&p)?;
    let d: Vec<String> = cs.iter().map(|c| format!("{:.4}", c.dist)).collect();
    println!(
        "  cylinder on box (tilted 3 deg): {} contacts, dist {}",
        cs.len(),
        d.join(" ")
    );
    out.push(p);
    let p = dir.join("collision_hfield.svg");
    let cs = hfield_figure(&p)?;
    println!("  height field: {} contacts for a sphere and a capsule", cs.len());
    out.push(p);
    let p = dir.join("collision_rays.svg");
    let (rays, hits) = rays_figure(&p)?;
    println!("  ray picture of the ray scene: {rays} rays, {hits} hits");
    out.push(p);
    Ok(out)
}
