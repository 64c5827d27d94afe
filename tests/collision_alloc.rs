//! The multi-contact patch keeps its storage (chapter "Collision detection", section "What a
//! call costs"): with one `PatchScratch` kept between calls, a second call of `patch_with` on
//! the same pair allocates nothing, for every kind of patch (face clipped by face, with more
//! than 4 corners pruned to 4; an edge clipped by a face), and its contacts are those of the
//! allocating `patch`, bitwise; and so does a second `collide_with_scratch` with one
//! `ConvexScratch` on every kind of pair of the general convex collider (GJK, EPA, the patch, the
//! height-field walk, a plane under a convex shape), against the allocating `collide_with`. A
//! global allocator counts the allocations of each test's thread.

use mbd::collision::convex::{convex_contact, ConvexShape, Shape};
use mbd::collision::multicontact::{patch, patch_with, PatchScratch};
use mbd::collision::GeomPose;
use mbd::spatial::{axis_angle_mat, Mat3, Vec3};

#[path = "common/counting.rs"]
mod counting;
use counting::count;

fn at(shape: Shape<'static>, pos: Vec3, rot: Mat3) -> ConvexShape<'static> {
    ConvexShape {
        shape,
        pose: GeomPose { pos, rot },
    }
}

#[test]
fn a_second_patch_allocates_nothing() {
    let cube = Shape::Box(Vec3::new(0.1, 0.1, 0.1));
    let tilt = axis_angle_mat(&Vec3::z(), 0.3);
    // (A, B, the kind of patch expected)
    let cases = [
        // a turned box on a box: the incident face clipped to an octagon, pruned to 4
        (
            at(cube, Vec3::zeros(), Mat3::identity()),
            at(cube, Vec3::new(0.01, 0.02, 0.199), tilt),
            4,
        ),
        // a cylinder standing on a box: the box face clipped by the 16-gon of the disc
        (
            at(Shape::Cylinder(0.05, 0.1), Vec3::new(0.0, 0.0, 0.199), tilt),
            at(cube, Vec3::zeros(), Mat3::identity()),
            4,
        ),
        // a capsule lying on a box: its segment clipped by the top face, two points
        (
            at(cube, Vec3::zeros(), Mat3::identity()),
            at(
                Shape::Capsule(0.03, 0.05),
                Vec3::new(0.02, 0.0, 0.129),
                axis_angle_mat(&Vec3::y(), std::f64::consts::FRAC_PI_2),
            ),
            2,
        ),
    ];
    let mut ws = PatchScratch::default();
    let mut out = Vec::with_capacity(16);
    for (k, (a, b, expected)) in cases.iter().enumerate() {
        let first = convex_contact(a, b, 0.0).expect("the shapes touch");
        let n = first.normal();
        let mut fresh = vec![];
        patch(a, b, &n, 0.0, &mut fresh);
        assert_eq!(fresh.len(), *expected, "case {k}: patch size");
        // the first call may grow the scratch; the second must not allocate
        out.clear();
        patch_with(a, b, &n, 0.0, &mut ws, &mut out);
        out.clear();
        let allocations = count(|| patch_with(a, b, &n, 0.0, &mut ws, &mut out));
        assert_eq!(allocations, 0, "case {k}: patch_with allocated");
        assert_eq!(out, fresh, "case {k}: kept storage changes the contacts");
    }
}

/// Meshes (a cube and an octahedron, inline vertices) and a bumpy height field for
/// [`a_second_convex_collision_allocates_nothing`].
const ASSETS: &str = r#"<mujoco><asset>
  <mesh name="cube" vertex="-.1 -.1 -.1  .1 -.1 -.1  -.1 .1 -.1  .1 .1 -.1  -.1 -.1 .1  .1 -.1 .1  -.1 .1 .1  .1 .1 .1"/>
  <mesh name="octa" vertex=".12 0 0  -.12 0 0  0 .1 0  0 -.1 0  0 0 .08  0 0 -.08"/>
  <hfield name="bumps" nrow="5" ncol="5" size=".5 .5 .1 .05"
          elevation="0 1 2 1 0  1 2 3 2 1  2 3 4 3 2  1 2 3 2 1  0 1 2 1 0"/>
</asset><worldbody>
  <geom type="mesh" mesh="cube"/><geom type="mesh" mesh="octa"/><geom type="hfield" hfield="bumps"/>
</worldbody></mujoco>"#;

/// The general convex collider keeps its storage (chapter "Collision detection", section "What a
/// call costs"): with one `ConvexScratch` kept between calls, a second `collide_with_scratch` on
/// each kind of pair that goes through GJK, EPA, the contact patch or the height-field walk
/// allocates nothing, and its contacts are those of the allocating `collide_with`, bitwise. The
/// pairs that must run EPA are checked to overlap (GJK says so), so the polytope is grown.
#[test]
fn a_second_convex_collision_allocates_nothing() {
    use mbd::collision::convex::{gjk, ConvexScratch};
    use mbd::collision::{collide_with, collide_with_scratch, Assets};
    use mbd::model::GeomType::{self, *};

    let model = mbd::mjcf::load_str(ASSETS).unwrap().model;
    let assets = Assets {
        meshes: &model.meshes,
        hfields: &model.hfields,
    };
    let pose = |pos: Vec3, axis: Vec3, angle: f64| GeomPose {
        pos,
        rot: axis_angle_mat(&axis.normalize(), angle),
    };
    let origin = pose(Vec3::zeros(), Vec3::z(), 0.0);
    let tilt = Vec3::new(1.0, 2.0, 0.5);
    type Geom = (GeomType, [f64; 3], GeomPose);
    // (name, geom 1, geom 2, margin, whether EPA must run)
    let cases: [(&str, Geom, Geom, f64, bool); 9] = [
        (
            "mesh on mesh, overlapping",
            (Mesh(0), [0.0; 3], origin),
            (Mesh(0), [0.0; 3], pose(Vec3::new(0.02, 0.01, 0.18), Vec3::z(), 0.3)),
            0.0,
            true,
        ),
        (
            "octahedron into cube, tilted",
            (Mesh(0), [0.0; 3], origin),
            (Mesh(1), [0.0; 3], pose(Vec3::new(0.03, -0.02, 0.17), tilt, 0.4)),
            0.0,
            true,
        ),
        (
            "ellipsoid into box",
            (Box, [0.1, 0.1, 0.1], origin),
            (
                Ellipsoid,
                [0.08, 0.06, 0.05],
                pose(Vec3::new(0.01, 0.02, 0.14), tilt, 0.3),
            ),
            0.0,
            true,
        ),
        (
            "cylinder standing on a box",
            (Box, [0.1, 0.1, 0.1], origin),
            (
                Cylinder,
                [0.05, 0.1, 0.0],
                pose(Vec3::new(0.01, 0.02, 0.199), Vec3::z(), 0.3),
            ),
            0.0,
            true,
        ),
        (
            "capsule deep in a cylinder",
            (Cylinder, [0.1, 0.1, 0.0], origin),
            (
                Capsule,
                [0.03, 0.05, 0.0],
                pose(Vec3::new(0.01, 0.02, 0.08), Vec3::y(), 1.2),
            ),
            0.0,
            true,
        ),
        (
            "sphere near an ellipsoid, within the margin",
            (Sphere, [0.05, 0.0, 0.0], origin),
            (
                Ellipsoid,
                [0.08, 0.06, 0.05],
                pose(Vec3::new(0.0, 0.0, 0.105), tilt, 0.3),
            ),
            0.01,
            false,
        ),
        (
            "mesh on a height field",
            (HField(0), [0.0; 3], origin),
            (Mesh(0), [0.0; 3], pose(Vec3::new(0.05, 0.1, 0.195), tilt, 0.2)),
            0.0,
            false,
        ),
        (
            "mesh on a plane",
            (Plane, [0.0; 3], origin),
            (Mesh(1), [0.0; 3], pose(Vec3::new(0.0, 0.0, 0.07), tilt, 0.3)),
            0.0,
            false,
        ),
        (
            "ellipsoid on a plane",
            (Plane, [0.0; 3], origin),
            (
                Ellipsoid,
                [0.08, 0.06, 0.05],
                pose(Vec3::new(0.0, 0.0, 0.05), tilt, 0.3),
            ),
            0.0,
            false,
        ),
    ];
    let mut ws = ConvexScratch::default();
    let mut out = Vec::with_capacity(64);
    for (name, (t1, s1, p1), (t2, s2, p2), margin, runs_epa) in &cases {
        let (g1, g2) = ((*t1, s1, p1), (*t2, s2, p2));
        if *runs_epa {
            let shape = |t: GeomType, s: &[f64; 3], p: &GeomPose| ConvexShape {
                shape: Shape::of_mesh(t, s, &model.meshes).unwrap(),
                pose: *p,
            };
            assert!(
                gjk(&shape(*t1, s1, p1), &shape(*t2, s2, p2), None).overlap,
                "{name}: no overlap"
            );
        }
        let mut fresh = vec![];
        collide_with(&assets, g1, g2, *margin, &mut fresh);
        assert!(!fresh.is_empty(), "{name}: no contact");
        // the first call may grow the scratch; the second must not allocate
        out.clear();
        collide_with_scratch(&assets, &mut ws, g1, g2, *margin, &mut out);
        out.clear();
        let allocations = count(|| collide_with_scratch(&assets, &mut ws, g1, g2, *margin, &mut out));
        assert_eq!(allocations, 0, "{name}: collide_with_scratch allocated");
        assert_eq!(out, fresh, "{name}: kept storage changes the contacts");
        // and in the other order (the pair swapped, its normals flipped)
        let mut fresh = vec![];
        collide_with(&assets, g2, g1, *margin, &mut fresh);
        out.clear();
        collide_with_scratch(&assets, &mut ws, g2, g1, *margin, &mut out);
        out.clear();
        let allocations = count(|| collide_with_scratch(&assets, &mut ws, g2, g1, *margin, &mut out));
        assert_eq!(allocations, 0, "{name}, swapped: collide_with_scratch allocated");
        assert_eq!(out, fresh, "{name}, swapped: kept storage changes the contacts");
    }
}
