//! The multi-contact patch keeps its storage (chapter "Collision detection", section "What a
//! call costs"): with one `PatchScratch` kept between calls, a second call of `patch_with` on
//! the same pair allocates nothing, for every kind of patch (face clipped by face, with more
//! than 4 corners pruned to 4; an edge clipped by a face), and its contacts are those of the
//! allocating `patch`, bitwise. A global allocator counts the allocations of this test binary
//! (one test, so no other thread allocates meanwhile).

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
