//! Chapter "Joint models and kinematic trees": prints the structure of the canned models, writes
//! the chapter's figures into book/src/figures, and builds a small tree by hand.
//!
//! Run with `cargo run --release --example ch02_joints`.

use mbd::kinematics::{body_jacobian, forward_kinematics};
use mbd::model::{canned, Joint, JointType, ModelBuilder};
use mbd::spatial::{xlt, Vec3};
use std::path::Path;

fn main() -> mbd::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/figures");
    for path in mbd::figures::ch04::run(&dir)? {
        println!("wrote {}", path.display());
    }

    // ANCHOR: build
    // A floating torso (MuJoCo's free joint) carrying a two-link arm: bodies are added parents
    // first, so the returned indices satisfy lambda(i) < i.
    let mut b = ModelBuilder::new("torso with arm");
    let torso = b.add_body(
        "torso",
        0,
        Joint::new(JointType::Free),
        xlt(Vec3::zeros()),
        canned::rod(4.0, 0.4, -Vec3::z()),
    );
    let upper = b.add_body(
        "upper",
        torso,
        Joint::new(JointType::Spherical),
        xlt(Vec3::new(0.0, 0.2, 0.0)),
        canned::rod(1.0, 0.3, Vec3::y()),
    );
    b.add_body(
        "lower",
        upper,
        Joint::revolute(Vec3::x()),
        xlt(Vec3::new(0.0, 0.3, 0.0)),
        canned::rod(0.5, 0.25, Vec3::y()),
    );
    let model = b.build()?;
    println!("{}", mbd::figures::ch04::describe(&model));
    // qpos = [torso position, torso quaternion (w, x, y, z), shoulder quaternion, elbow angle]
    let mut q = model.qpos0.clone();
    q[2] = 1.0; // lift the torso 1 m
    q[model.nq - 1] = 0.5; // bend the elbow
    let kin = forward_kinematics(&model, q.as_slice())?;
    println!("elbow at {:?}", kin.position(3).as_slice());
    println!("hand at  {:?}", kin.point(3, &Vec3::new(0.0, 0.25, 0.0)).as_slice());
    // The body Jacobian of the forearm: 6 x nv, zero in no column, since every joint supports it.
    let jac = body_jacobian(&model, q.as_slice(), 3)?;
    println!("forearm Jacobian is {} x {}", jac.nrows(), jac.ncols());
    // ANCHOR_END: build

    // ANCHOR: mjcf
    // A MuJoCo model whose right hip has three hinges: the reader turns that body into a chain
    // of three Featherstone bodies, the first two massless.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mjcf/humanoid_mix.xml");
    let loaded = mbd::mjcf::load(&file)?;
    let m = &loaded.model;
    println!(
        "{}: {} MuJoCo bodies (world included) -> {} Featherstone bodies, nq = {}, nv = {}",
        m.name,
        m.mj_nbody(),
        m.nb,
        m.nq,
        m.nv
    );
    for i in 1..=m.nb {
        let mj = m.mj_body[i];
        println!(
            "  body {i:2} {:18} parent {:2}  {:9} mass {:.3}  (MuJoCo body {mj} '{}')",
            m.body_name[i],
            m.lambda[i],
            m.joints[i].jtype.name(),
            m.inertia[i].m,
            m.mj_body_name[mj]
        );
    }
    for w in &loaded.warnings {
        println!("  warning: {w}");
    }
    // ANCHOR_END: mjcf

    // ANCHOR: mjcf_public
    // A model people train on: Gymnasium's hopper, as shipped in the `gymnasium` package.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/public/gymnasium/hopper.xml");
    let hopper = mbd::mjcf::load(&file)?.model;
    let joints: Vec<&str> = (1..=hopper.nb).map(|i| hopper.joints[i].name.as_str()).collect();
    println!("hopper: nv = {}, joints {joints:?}", hopper.nv);
    println!("  qpos0 = {:?} (rootz has ref = 1.25)", hopper.qpos0.as_slice());
    let h = mbd::dynamics::crba(&hopper, hopper.qpos0.as_slice())?;
    let diag: Vec<String> = (0..hopper.nv).map(|k| format!("{:.4}", h[(k, k)])).collect();
    println!(
        "  diag(M) at qpos0 = [{}] (armature 1 on the leg joints)",
        diag.join(", ")
    );
    println!(
        "  {} actuators, gear {:?}",
        hopper.actuators.len(),
        hopper.actuators.iter().map(|a| a.gear[0]).collect::<Vec<_>>()
    );
    // ANCHOR_END: mjcf_public
    Ok(())
}
