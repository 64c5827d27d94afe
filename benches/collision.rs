//! The narrow phase of `mbd::collision` on two pairs MuJoCo does analytically: box-box (separating
//! axes and face clipping, four contacts for a box resting on another) and capsule-capsule (one
//! closest-point solve). Run briefly: `cargo bench --bench collision -- --warm-up-time 1
//! --measurement-time 2`.

use criterion::{criterion_group, criterion_main, Criterion};
use mbd::collision::{collide, GeomPose};
use mbd::model::GeomType;
use mbd::spatial::{axis_angle_mat, Mat3, Vec3};
use std::hint::black_box;

fn narrow_phase(c: &mut Criterion) {
    let base = GeomPose {
        pos: Vec3::zeros(),
        rot: Mat3::identity(),
    };
    let top = GeomPose {
        pos: Vec3::new(0.02, 0.01, 0.1999),
        rot: axis_angle_mat(&Vec3::z(), 0.1),
    };
    let cube = [0.1, 0.1, 0.1];
    let mut out = Vec::with_capacity(8);
    c.bench_function("box_box_resting", |b| {
        b.iter(|| {
            out.clear();
            collide(
                (GeomType::Box, &cube, &base),
                (GeomType::Box, &cube, black_box(&top)),
                0.0,
                &mut out,
            );
            black_box(out.len())
        })
    });
    let cap1 = GeomPose {
        pos: Vec3::zeros(),
        rot: axis_angle_mat(&Vec3::x(), 1.2),
    };
    let cap2 = GeomPose {
        pos: Vec3::new(0.05, 0.1, 0.12),
        rot: axis_angle_mat(&Vec3::y(), 0.7),
    };
    let size = [0.05, 0.2, 0.0];
    c.bench_function("capsule_capsule", |b| {
        b.iter(|| {
            out.clear();
            collide(
                (GeomType::Capsule, &size, &cap1),
                (GeomType::Capsule, &size, black_box(&cap2)),
                0.0,
                &mut out,
            );
            black_box(out.len())
        })
    });
}

criterion_group!(benches, narrow_phase);
criterion_main!(benches);
