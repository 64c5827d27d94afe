//! The narrow phase of `mbd::collision` on two pairs MuJoCo does analytically: box-box (separating
//! axes and face clipping, four contacts for a box resting on another) and capsule-capsule (one
//! closest-point solve); and the whole collision stage of the constrained pipeline (MuJoCo's
//! `mj_collision`) at the settled states of `tests/fixtures/forward` (`box_stack`,
//! `box_stack_10`, `humanoid`): `Collider::collide_into`, the per-call part, beside
//! `collide_all`, which also redoes the per-model part (checks, pair list, mixed parameters).
//! Run briefly: `cargo bench --bench collision -- --warm-up-time 1 --measurement-time 2`.
//!
//! ```text
//! MBD_BENCH_CALLS=1000 target/release/deps/collision-HASH box_stack_10   # or mesh_mesh, ...
//!     # that scene's `collide_into` 1000 times and nothing else, for callgrind:
//!     # valgrind --tool=callgrind --toggle-collect='*collide_into*' ...
//! ```

use criterion::{criterion_group, Criterion};
use mbd::collision::{collide, GeomPose};
use mbd::mjcf;
use mbd::model::{GeomType, Model};
use mbd::mujoco::collision::{collide_all, Collider};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::integrator::State;
use mbd::spatial::{axis_angle_mat, Mat3, Vec3};
use std::hint::black_box;
use std::path::Path;

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

/// The scenes of the collision stage (fixtures in `tests/fixtures/forward`).
const SCENES: [&str; 4] = ["box_stack", "box_stack_10", "humanoid", "quadruped"];

/// One-pair scenes of the general convex collider (free bodies at `qpos0`, each pair
/// overlapping by a millimetre or two): (name, MJCF).
const CONVEX: [(&str, &str); 5] = [
    (
        "mesh_mesh",
        r#"<mujoco><asset><mesh name="cube" vertex="-.1 -.1 -.1 .1 -.1 -.1 -.1 .1 -.1 .1 .1 -.1 -.1 -.1 .1 .1 -.1 .1 -.1 .1 .1 .1 .1 .1"/></asset>
        <worldbody><body><freejoint/><geom type="mesh" mesh="cube"/></body>
        <body pos=".02 .01 .199" euler="0 0 17"><freejoint/><geom type="mesh" mesh="cube"/></body></worldbody></mujoco>"#,
    ),
    (
        "ellipsoid_box",
        r#"<mujoco><worldbody><body><freejoint/><geom type="box" size=".1 .1 .1"/></body>
        <body pos=".01 .02 .149" euler="5 3 20"><freejoint/><geom type="ellipsoid" size=".08 .06 .05"/></body></worldbody></mujoco>"#,
    ),
    (
        "cylinder_box",
        r#"<mujoco><worldbody><body><freejoint/><geom type="box" size=".1 .1 .1"/></body>
        <body pos=".01 .02 .199" euler="0 0 20"><freejoint/><geom type="cylinder" size=".05 .1"/></body></worldbody></mujoco>"#,
    ),
    (
        "capsule_cylinder",
        r#"<mujoco><worldbody><body><freejoint/><geom type="cylinder" size=".1 .1"/></body>
        <body pos=".01 .02 .129" euler="0 90 20"><freejoint/><geom type="capsule" size=".03 .05"/></body></worldbody></mujoco>"#,
    ),
    (
        "mesh_hfield",
        r#"<mujoco><asset><hfield name="bumps" nrow="5" ncol="5" size=".5 .5 .1 .05" elevation="0 1 2 1 0 1 2 3 2 1 2 3 4 3 2 1 2 3 2 1 0 1 2 1 0"/>
        <mesh name="cube" vertex="-.1 -.1 -.1 .1 -.1 -.1 -.1 .1 -.1 .1 .1 -.1 -.1 -.1 .1 .1 -.1 .1 -.1 .1 .1 .1 .1 .1"/></asset>
        <worldbody><geom type="hfield" hfield="bumps"/>
        <body pos=".05 .1 .195" euler="10 5 0"><freejoint/><geom type="mesh" mesh="cube"/></body></worldbody></mujoco>"#,
    ),
];

/// The model of `scene` and its fixture's settled state (qpos, qvel).
fn settled(scene: &str) -> (Model, Vec<f64>, Vec<f64>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(format!("tests/fixtures/forward/{scene}.json"))).expect("fixture");
    let fx: serde_json::Value = serde_json::from_str(&text).expect("fixture JSON");
    let floats = |k: &str| -> Vec<f64> { fx[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
    let model = mjcf::load(root.join(fx["model"].as_str().unwrap()))
        .expect("model")
        .model;
    (model, floats("qpos"), floats("qvel"))
}

/// A forward pass at the state (its `d.x_0` is what the collision stage reads).
fn forward<'m>(model: &'m Model, qpos: &[f64], qvel: &[f64]) -> Forward<'m> {
    let mut fw = Forward::new(model).expect("forward");
    fw.forward(qpos, qvel, &vec![0.0; model.nv]).expect("forward");
    fw
}

fn collision_stage(c: &mut Criterion) {
    for scene in SCENES {
        let (model, qpos, qvel) = settled(scene);
        let fw = forward(&model, &qpos, &qvel);
        let d = &fw.d.data;
        let mut collider = Collider::new(&model).expect("collider");
        let mut contacts = vec![];
        c.bench_function(&format!("mj_collision/{scene}/collide_into"), |b| {
            b.iter(|| {
                collider
                    .collide_into(&model, black_box(d), &mut contacts)
                    .expect("collision");
                black_box(contacts.len())
            })
        });
        c.bench_function(&format!("mj_collision/{scene}/collide_all"), |b| {
            b.iter(|| black_box(collide_all(&model, black_box(d)).expect("collision").len()))
        });
    }
}

/// `MBD_BENCH_CALLS=N` with a scene: one `collide_into` to grow the storage, then `N` more.
fn calls(n: &str, scene: &str) {
    let n: usize = n.parse().expect("MBD_BENCH_CALLS=N");
    let (model, qpos, qvel) = match convex_scene(scene) {
        Some(s) => s,
        None => {
            assert!(
                SCENES.contains(&scene),
                "scene must be one of {SCENES:?} or a convex scene"
            );
            settled(scene)
        }
    };
    let fw = forward(&model, &qpos, &qvel);
    let d = &fw.d.data;
    let mut collider = Collider::new(&model).expect("collider");
    let mut contacts = vec![];
    collider.collide_into(&model, d, &mut contacts).expect("collision");
    for _ in 0..n {
        collider
            .collide_into(&model, black_box(d), &mut contacts)
            .expect("collision");
    }
    eprintln!("{scene}: {} contacts", contacts.len());
}

/// The model of the convex scene `name` and its `qpos0` (at rest).
fn convex_scene(name: &str) -> Option<(Model, Vec<f64>, Vec<f64>)> {
    let (_, xml) = CONVEX.iter().find(|(n, _)| *n == name)?;
    let model = mjcf::load_str(xml).expect("convex scene").model;
    let (qpos, qvel) = (State::reference(&model).qpos, vec![0.0; model.nv]);
    Some((model, qpos, qvel))
}

fn convex_pairs(c: &mut Criterion) {
    for (name, _) in CONVEX {
        let (model, qpos, qvel) = convex_scene(name).expect("scene");
        let fw = forward(&model, &qpos, &qvel);
        let d = &fw.d.data;
        let mut collider = Collider::new(&model).expect("collider");
        let mut contacts = vec![];
        collider.collide_into(&model, d, &mut contacts).expect("collision");
        assert!(!contacts.is_empty(), "{name}: no contact");
        c.bench_function(&format!("convex/{name}"), |b| {
            b.iter(|| {
                collider
                    .collide_into(&model, black_box(d), &mut contacts)
                    .expect("collision");
                black_box(contacts.len())
            })
        });
    }
}

criterion_group!(benches, narrow_phase, collision_stage, convex_pairs);

fn main() {
    if let Ok(n) = std::env::var("MBD_BENCH_CALLS") {
        let scene = std::env::args()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .expect("MBD_BENCH_CALLS needs a scene");
        calls(&n, &scene);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
