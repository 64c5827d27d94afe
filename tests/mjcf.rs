//! The MJCF reader against MuJoCo 4.0.0's own compiler.
//!
//! `tests/fixtures/mjcf_structure.json` holds what MuJoCo makes of every model in
//! `tests/fixtures/models/` and of the hand-written models in `tests/fixtures/mjcf/`; it is
//! written by `tests/fixtures/make_mjcf_structure.py` (the command is at its top). Every number
//! the reader produces is compared with it at a relative tolerance of 1e-12: for each compared
//! array, `max |ours - mujoco| <= 1e-12 * max |mujoco|` (quaternions up to sign). Body poses are
//! compared at qpos0 and at a random configuration, through our own forward kinematics.
//!
//! The second half feeds the reader bad input, one test per error path, and checks the error
//! variant, the line and that the message names the element and the attribute.

use mbd::kinematics::{forward_kinematics, mj_body_poses};
use mbd::mjcf::{load, parse};
use mbd::model::{Equality, GeomType, JointType, Model};
use mbd::spatial::{mat_to_quat, Xform};
use mbd::Error;
use serde_json::Value;
use std::path::PathBuf;

const TOL: f64 = 1e-12;
/// Tolerance of what depends on a mesh's frame (the orientation of mesh geoms, the inertia of
/// their bodies): MuJoCo's compiler finds that frame by a Jacobi iteration that stops at an
/// absolute threshold on the mesh's inertia, which the reader reproduces (`mj_eig3`) but feeds
/// with an inertia summed in another order, so the frames agree to a few 1e-10 (see
/// `tests/ray.rs`, `scene_compiles_like_mujoco`).
const MESH_TOL: f64 = 1e-9;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn reference() -> Value {
    let text = std::fs::read_to_string(fixtures().join("mjcf_structure.json")).expect("read mjcf_structure.json");
    serde_json::from_str(&text).expect("parse mjcf_structure.json")
}

/// All numbers of a (nested) JSON array, flattened; booleans count as 0/1.
fn nums(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(nums).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        Value::Bool(b) => vec![if *b { 1.0 } else { 0.0 }],
        other => panic!("not numeric: {other}"),
    }
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// `max |ours - theirs| <= TOL * max |theirs|` (exact equality for an all-zero reference).
fn close(what: &str, ours: &[f64], theirs: &[f64]) {
    close_to(what, ours, theirs, TOL)
}

/// [`close`] with relative tolerance `tol`.
fn close_to(what: &str, ours: &[f64], theirs: &[f64], tol: f64) {
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{what}: length {} vs MuJoCo's {}",
        ours.len(),
        theirs.len()
    );
    let scale = theirs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let err = ours.iter().zip(theirs).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(
        err <= tol * scale,
        "{what}: max error {err:e} (scale {scale:e})\n ours   {ours:?}\n mujoco {theirs:?}"
    );
}

/// Quaternions up to sign.
fn close_quat(what: &str, ours: &[f64; 4], theirs: &[f64]) {
    close_quat_to(what, ours, theirs, TOL)
}

/// [`close_quat`] with relative tolerance `tol`.
fn close_quat_to(what: &str, ours: &[f64; 4], theirs: &[f64], tol: f64) {
    let s = if ours.iter().zip(theirs).map(|(a, b)| a * b).sum::<f64>() < 0.0 {
        -1.0
    } else {
        1.0
    };
    let signed: Vec<f64> = ours.iter().map(|x| s * x).collect();
    close_to(what, &signed, theirs, tol);
}

/// The Featherstone bodies that carry a joint, in order: MuJoCo's joints.
fn joint_bodies(model: &Model) -> Vec<usize> {
    (1..=model.nb)
        .filter(|&i| !matches!(model.joints[i].jtype, JointType::Fixed))
        .collect()
}

fn load_fixture(rel: &str) -> mbd::mjcf::Loaded {
    load(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Compares everything the reader produces for `rel`, completed by the compile step MuJoCo's
/// compiler also runs (`mbd::mujoco::compile`: springdamper, rest lengths, dampratio, length
/// ranges), with MuJoCo's numbers.
fn check_model(rel: &str, r: &Value) {
    let mut model = load_fixture(rel).model;
    mbd::mujoco::compile(&mut model).unwrap_or_else(|e| panic!("{rel}: compile: {e}"));
    let w = |what: &str| format!("{rel}: {what}");
    let nbody = r["nbody"].as_u64().unwrap() as usize;
    assert_eq!(model.nq, r["nq"].as_u64().unwrap() as usize, "{}", w("nq"));
    assert_eq!(model.nv, r["nv"].as_u64().unwrap() as usize, "{}", w("nv"));
    assert_eq!(model.mj_nbody(), nbody, "{}", w("nbody"));
    assert_eq!(model.mj_body_name, strings(&r["body_name"]), "{}", w("body names"));

    // dof tree and body tree
    let dof_parent: Vec<i64> = model.dof_parent.iter().map(|p| p.map_or(-1, |x| x as i64)).collect();
    assert_eq!(dof_parent, ints(&r["dof_parentid"]), "{}", w("dof_parentid"));
    let first: Vec<usize> = (0..nbody)
        .map(|b| {
            if b == 0 {
                0
            } else {
                model.mj_body.iter().position(|&x| x == b).unwrap()
            }
        })
        .collect();
    let body_parent: Vec<i64> = (0..nbody)
        .map(|b| {
            if b == 0 {
                0
            } else {
                model.mj_body[model.lambda[first[b]]] as i64
            }
        })
        .collect();
    assert_eq!(body_parent, ints(&r["body_parentid"]), "{}", w("body_parentid"));
    let library: Vec<i64> = mbd::model::mj_body_parentid(&model).iter().map(|&p| p as i64).collect();
    assert_eq!(library, ints(&r["body_parentid"]), "{}", w("mj_body_parentid"));
    for i in 1..=model.nb {
        // a MuJoCo body's Featherstone bodies form a chain ending at mj_body_last
        let b = model.mj_body[i];
        assert!(i <= model.mj_body_last[b], "{}", w("chain order"));
        if i != first[b] {
            assert_eq!(model.lambda[i], i - 1, "{}", w("multi-joint chain"));
            assert_eq!(model.x_tree[i], Xform::identity(), "{}", w("X_tree of a chained joint"));
        }
        if i != model.mj_body_last[b] {
            assert_eq!(model.inertia[i].m, 0.0, "{}", w("virtual bodies are massless"));
        }
    }

    // body poses relative to the parent: X_tree of the first body, or qpos0 of a free joint
    let mut body_pos = vec![0.0; 3];
    let mut body_quat = vec![1.0, 0.0, 0.0, 0.0];
    for &f in &first[1..] {
        let (rot, pos) = if matches!(model.joints[f].jtype, JointType::Free) {
            let q = &model.qpos0.as_slice()[model.qs(f)];
            let quat = [q[3], q[4], q[5], q[6]];
            (
                mbd::spatial::quat_to_mat(&quat),
                mbd::spatial::Vec3::new(q[0], q[1], q[2]),
            )
        } else {
            model.x_tree[f].pose()
        };
        body_pos.extend(pos.iter());
        let q = mat_to_quat(&rot).unwrap();
        let theirs = &nums(&r["body_quat"])[body_quat.len()..body_quat.len() + 4];
        let s = if q.iter().zip(theirs).map(|(a, b)| a * b).sum::<f64>() < 0.0 {
            -1.0
        } else {
            1.0
        };
        body_quat.extend(q.iter().map(|x| s * x));
    }
    close(&w("body_pos"), &body_pos, &nums(&r["body_pos"]));
    close(&w("body_quat"), &body_quat, &nums(&r["body_quat"]));

    // mass, centre of mass, inertia about the centre of mass (body axes)
    let masses: Vec<f64> = (0..nbody)
        .map(|b| {
            if b == 0 {
                0.0
            } else {
                model.inertia[model.mj_body_last[b]].m
            }
        })
        .collect();
    close(&w("body_mass"), &masses, &nums(&r["body_mass"]));
    let ipos_ref = nums(&r["body_ipos"]);
    let (mut ipos, mut ipos_theirs) = (vec![], vec![]);
    for b in 1..nbody {
        let inertia = &model.inertia[model.mj_body_last[b]];
        if inertia.m == 0.0 {
            continue; // MuJoCo's ipos of a massless body is meaningless
        }
        ipos.extend(inertia.com().iter());
        ipos_theirs.extend(&ipos_ref[3 * b..3 * b + 3]);
        let ic = inertia.inertia_at_com();
        let ours: Vec<f64> = (0..3).flat_map(|i| (0..3).map(move |j| ic[(i, j)])).collect();
        let has_mesh = model
            .geoms
            .iter()
            .any(|g| model.mj_body[g.body] == b && matches!(g.gtype, GeomType::Mesh(_)));
        close_to(
            &w(&format!("inertia of body {b}")),
            &ours,
            &nums(&r["body_inertia_full"][b]),
            if has_mesh { MESH_TOL } else { TOL },
        );
    }
    close(&w("body_ipos"), &ipos, &ipos_theirs);

    // joints, in MuJoCo's order
    let jb = joint_bodies(&model);
    assert_eq!(jb.len(), r["njnt"].as_u64().unwrap() as usize, "{}", w("njnt"));
    let names: Vec<String> = jb.iter().map(|&i| model.joints[i].name.clone()).collect();
    assert_eq!(names, strings(&r["jnt_name"]), "{}", w("joint names"));
    let jtype: Vec<i64> = jb
        .iter()
        .map(|&i| match model.joints[i].jtype {
            JointType::Free => 0,
            JointType::Spherical => 1,
            JointType::Prismatic { .. } => 2,
            JointType::Revolute { .. } => 3,
            other => panic!("unexpected joint type {other:?}"),
        })
        .collect();
    assert_eq!(jtype, ints(&r["jnt_type"]), "{}", w("jnt_type"));
    let body_of: Vec<i64> = jb.iter().map(|&i| model.mj_body[i] as i64).collect();
    assert_eq!(body_of, ints(&r["jnt_bodyid"]), "{}", w("jnt_bodyid"));
    let qadr: Vec<i64> = jb.iter().map(|&i| model.q_adr[i] as i64).collect();
    assert_eq!(qadr, ints(&r["jnt_qposadr"]), "{}", w("jnt_qposadr"));
    let vadr: Vec<i64> = jb.iter().map(|&i| model.v_adr[i] as i64).collect();
    assert_eq!(vadr, ints(&r["jnt_dofadr"]), "{}", w("jnt_dofadr"));
    let jpos: Vec<f64> = jb
        .iter()
        .flat_map(|&i| model.joints[i].pos.iter().copied().collect::<Vec<_>>())
        .collect();
    close(&w("jnt_pos"), &jpos, &nums(&r["jnt_pos"]));
    let jaxis: Vec<f64> = jb
        .iter()
        .flat_map(|&i| match model.joints[i].jtype {
            JointType::Revolute { axis } | JointType::Prismatic { axis } => {
                vec![axis.x, axis.y, axis.z]
            }
            _ => vec![0.0, 0.0, 1.0], // MuJoCo stores z for ball and free joints
        })
        .collect();
    close(&w("jnt_axis"), &jaxis, &nums(&r["jnt_axis"]));
    let limited: Vec<f64> = jb
        .iter()
        .map(|&i| if model.joints[i].limited { 1.0 } else { 0.0 })
        .collect();
    assert_eq!(limited, nums(&r["jnt_limited"]), "{}", w("jnt_limited"));
    let range: Vec<f64> = jb.iter().flat_map(|&i| model.joints[i].range).collect();
    close(&w("jnt_range"), &range, &nums(&r["jnt_range"]));
    let stiffness: Vec<f64> = jb.iter().map(|&i| model.joints[i].stiffness).collect();
    close(&w("jnt_stiffness"), &stiffness, &nums(&r["jnt_stiffness"]));
    close(
        &w("dof_damping"),
        model.dof_damping().as_slice(),
        &nums(&r["dof_damping"]),
    );
    close(
        &w("dof_armature"),
        model.dof_armature().as_slice(),
        &nums(&r["dof_armature"]),
    );
    let frictionloss: Vec<f64> = model.dof_body.iter().map(|&b| model.joints[b].frictionloss).collect();
    close(&w("dof_frictionloss"), &frictionloss, &nums(&r["dof_frictionloss"]));
    close(&w("qpos0"), model.qpos0.as_slice(), &nums(&r["qpos0"]));

    // world poses of every body, at qpos0 and at a random configuration
    for (q, xpos_key, xquat_key) in [
        (nums(&r["qpos0"]), "xpos0", "xquat0"),
        (nums(&r["qpos_random"]), "xpos_random", "xquat_random"),
    ] {
        let kin = forward_kinematics(&model, &q).unwrap();
        let (xpos, xquat) = mj_body_poses(&model, &kin);
        let ours: Vec<f64> = xpos
            .iter()
            .flat_map(|p| p.iter().copied().collect::<Vec<_>>())
            .collect();
        close(&w(xpos_key), &ours, &nums(&r[xpos_key]));
        let theirs = nums(&r[xquat_key]);
        for (b, q) in xquat.iter().enumerate() {
            close_quat(&w(&format!("{xquat_key} of body {b}")), q, &theirs[4 * b..4 * b + 4]);
        }
    }

    // geoms
    let ngeom = r["ngeom"].as_u64().unwrap() as usize;
    assert_eq!(model.geoms.len(), ngeom, "{}", w("ngeom"));
    let gnames: Vec<String> = model.geoms.iter().map(|g| g.name.clone()).collect();
    assert_eq!(gnames, strings(&r["geom_name"]), "{}", w("geom names"));
    let gbody: Vec<i64> = model.geoms.iter().map(|g| model.mj_body[g.body] as i64).collect();
    assert_eq!(gbody, ints(&r["geom_bodyid"]), "{}", w("geom_bodyid"));
    for g in &model.geoms {
        assert_eq!(
            g.body,
            model.mj_body_last[model.mj_body[g.body]],
            "{}",
            w("geom on the body's last frame")
        );
    }
    let gtype: Vec<i64> = model
        .geoms
        .iter()
        .map(|g| match g.gtype {
            GeomType::Plane => 0,
            GeomType::Sphere => 2,
            GeomType::Capsule => 3,
            GeomType::Cylinder => 5,
            GeomType::Ellipsoid => 4,
            GeomType::Box => 6,
            GeomType::HField(_) => 1,
            GeomType::Mesh(_) => 7,
        })
        .collect();
    assert_eq!(gtype, ints(&r["geom_type"]), "{}", w("geom_type"));
    let flat = |f: &dyn Fn(&mbd::model::Geom) -> Vec<f64>| -> Vec<f64> { model.geoms.iter().flat_map(f).collect() };
    // a mesh geom's size is its mesh's extent in the mesh frame
    let gsize = nums(&r["geom_size"]);
    for (k, g) in model.geoms.iter().enumerate() {
        let tol = if matches!(g.gtype, GeomType::Mesh(_)) {
            MESH_TOL
        } else {
            TOL
        };
        close_to(&w(&format!("geom_size {k}")), &g.size, &gsize[3 * k..3 * k + 3], tol);
    }
    close(
        &w("geom_pos"),
        &flat(&|g| g.pos.iter().copied().collect()),
        &nums(&r["geom_pos"]),
    );
    let gq = nums(&r["geom_quat"]);
    for (k, g) in model.geoms.iter().enumerate() {
        let tol = if matches!(g.gtype, GeomType::Mesh(_)) {
            MESH_TOL
        } else {
            TOL
        };
        close_quat_to(&w(&format!("geom_quat {k}")), &g.quat, &gq[4 * k..4 * k + 4], tol);
    }
    // sites: body, shape, size and position (the shape is a touch sensor's zone)
    let site_body: Vec<i64> = model.sites.iter().map(|s| model.mj_body[s.body] as i64).collect();
    assert_eq!(site_body, ints(&r["site_bodyid"]), "{}", w("site_bodyid"));
    let site_type: Vec<i64> = model
        .sites
        .iter()
        .map(|s| match s.gtype {
            GeomType::Sphere => 2,
            GeomType::Capsule => 3,
            GeomType::Ellipsoid => 4,
            GeomType::Cylinder => 5,
            _ => 6,
        })
        .collect();
    assert_eq!(site_type, ints(&r["site_type"]), "{}", w("site_type"));
    let sflat = |f: &dyn Fn(&mbd::model::Site) -> Vec<f64>| -> Vec<f64> { model.sites.iter().flat_map(f).collect() };
    close(&w("site_size"), &sflat(&|s| s.size.to_vec()), &nums(&r["site_size"]));
    close(
        &w("site_pos"),
        &sflat(&|s| s.pos.iter().copied().collect()),
        &nums(&r["site_pos"]),
    );
    // sensors: how many numbers each writes, and its cutoff (types are compared by value in
    // tests/sensors.rs)
    let dims: Vec<i64> = model.sensors.iter().map(|s| s.kind.dim() as i64).collect();
    assert_eq!(dims, ints(&r["sensor_dim"]), "{}", w("sensor_dim"));
    let cut: Vec<f64> = model.sensors.iter().map(|s| s.cutoff).collect();
    close(&w("sensor_cutoff"), &cut, &nums(&r["sensor_cutoff"]));
    close(
        &w("geom_friction"),
        &flat(&|g| g.friction.to_vec()),
        &nums(&r["geom_friction"]),
    );
    close(&w("geom_margin"), &flat(&|g| vec![g.margin]), &nums(&r["geom_margin"]));
    let condim: Vec<i64> = model.geoms.iter().map(|g| g.condim as i64).collect();
    assert_eq!(condim, ints(&r["geom_condim"]), "{}", w("geom_condim"));
    let contype: Vec<i64> = model.geoms.iter().map(|g| g.contype as i32 as i64).collect();
    assert_eq!(contype, ints(&r["geom_contype"]), "{}", w("geom_contype"));
    let conaff: Vec<i64> = model.geoms.iter().map(|g| g.conaffinity as i32 as i64).collect();
    assert_eq!(conaff, ints(&r["geom_conaffinity"]), "{}", w("geom_conaffinity"));
    // what rays read: groups, colours (single precision, as MuJoCo stores them) and materials
    let group: Vec<i64> = model.geoms.iter().map(|g| g.group as i64).collect();
    assert_eq!(group, ints(&r["geom_group"]), "{}", w("geom_group"));
    assert_eq!(flat(&|g| g.rgba.to_vec()), nums(&r["geom_rgba"]), "{}", w("geom_rgba"));
    let matid: Vec<i64> = model
        .geoms
        .iter()
        .map(|g| g.material.map_or(-1, |k| k as i64))
        .collect();
    assert_eq!(matid, ints(&r["geom_matid"]), "{}", w("geom_matid"));
    let mat_rgba: Vec<f64> = model.materials.iter().flat_map(|m| m.rgba).collect();
    assert_eq!(mat_rgba, nums(&r["mat_rgba"]), "{}", w("mat_rgba"));

    // equality constraints
    assert_eq!(
        model.equality.len(),
        r["neq"].as_u64().unwrap() as usize,
        "{}",
        w("neq")
    );
    let (etype, o1, o2) = (ints(&r["eq_type"]), ints(&r["eq_obj1id"]), ints(&r["eq_obj2id"]));
    for (k, eq) in model.equality.iter().enumerate() {
        let data = nums(&r["eq_data"][k]);
        let last = |id: i64| model.mj_body_last[id as usize];
        match eq {
            Equality::Connect {
                body1, body2, anchor, ..
            } => {
                assert_eq!(
                    (etype[k], *body1, *body2),
                    (0, last(o1[k]), last(o2[k])),
                    "{}",
                    w("connect")
                );
                close(&w("connect anchor"), anchor.as_slice(), &data[0..3]);
            }
            Equality::Weld {
                body1,
                body2,
                anchor,
                relpose,
                ..
            } => {
                assert_eq!(
                    (etype[k], *body1, *body2),
                    (1, last(o1[k]), last(o2[k])),
                    "{}",
                    w("weld")
                );
                close(&w("weld anchor"), anchor.as_slice(), &data[0..3]);
                if let Some(rp) = relpose {
                    close(&w("weld relpose"), rp, &data[3..10]);
                }
            }
            Equality::Joint {
                joint1,
                joint2,
                polycoef,
                ..
            } => {
                let j2 = if o2[k] < 0 { None } else { Some(jb[o2[k] as usize]) };
                assert_eq!(
                    (etype[k], *joint1, *joint2),
                    (2, jb[o1[k] as usize], j2),
                    "{}",
                    w("joint equality")
                );
                close(&w("polycoef"), polycoef, &data[0..5]);
            }
            Equality::Tendon {
                tendon1,
                tendon2,
                polycoef,
                ..
            } => {
                let t2 = (o2[k] >= 0).then_some(o2[k] as usize);
                assert_eq!(
                    (etype[k], *tendon1 as i64, *tendon2),
                    (3, o1[k], t2),
                    "{}",
                    w("tendon equality")
                );
                close(&w("polycoef"), polycoef, &data[0..5]);
            }
        }
    }

    // options
    let o = &r["opt"];
    close(
        &w("timestep"),
        &[model.opt.timestep],
        &[o["timestep"].as_f64().unwrap()],
    );
    close(&w("gravity"), model.opt.gravity.as_slice(), &nums(&o["gravity"]));
    assert_eq!(
        model.opt.integrator.name(),
        o["integrator"].as_str().unwrap(),
        "{}",
        w("integrator")
    );
    assert_eq!(
        model.opt.solver.name(),
        o["solver"].as_str().unwrap(),
        "{}",
        w("solver")
    );
    assert_eq!(model.opt.cone.name(), o["cone"].as_str().unwrap(), "{}", w("cone"));
    assert_eq!(
        model.opt.iterations as u64,
        o["iterations"].as_u64().unwrap(),
        "{}",
        w("iterations")
    );
    close(
        &w("tolerance"),
        &[model.opt.tolerance],
        &[o["tolerance"].as_f64().unwrap()],
    );
    close(
        &w("impratio"),
        &[model.opt.impratio],
        &[o["impratio"].as_f64().unwrap()],
    );
}

#[test]
fn every_test_model_matches_mujoco() {
    let r = reference();
    let models = r["models"].as_object().unwrap();
    // every model file in tests/fixtures/models has reference numbers (none is skipped)
    let mut files: Vec<String> = std::fs::read_dir(fixtures().join("models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".xml"))
        .map(|n| format!("models/{n}"))
        .collect();
    files.sort();
    assert!(files.len() >= 18, "expected the 18 peer models, found {files:?}");
    for f in &files {
        assert!(
            models.contains_key(f),
            "{f} has no reference numbers: rerun make_mjcf_structure.py"
        );
        check_model(f, &models[f]);
    }
}

#[test]
fn humanoid_mix_matches_mujoco() {
    let r = reference();
    check_model("mjcf/humanoid_mix.xml", &r["models"]["mjcf/humanoid_mix.xml"]);
}

#[test]
fn radian_geoms_matches_mujoco() {
    let r = reference();
    check_model("mjcf/radian_geoms.xml", &r["models"]["mjcf/radian_geoms.xml"]);
}

/// The three-hinge hip of humanoid_mix.xml becomes a chain of three Featherstone bodies: the
/// first two massless and named after their joints, the first carrying the body's pose.
#[test]
fn multi_joint_body_becomes_a_chain() {
    let m = load_fixture("mjcf/humanoid_mix.xml").model;
    let thigh = m.body_id("thigh_r").unwrap();
    assert_eq!(m.body_name[thigh - 2], "thigh_r#hip_x_r");
    assert_eq!(m.body_name[thigh - 1], "thigh_r#hip_z_r");
    assert_eq!((m.lambda[thigh], m.lambda[thigh - 1]), (thigh - 1, thigh - 2));
    assert_eq!(m.inertia[thigh - 2].m + m.inertia[thigh - 1].m, 0.0);
    assert!(m.inertia[thigh].m > 0.0);
    assert_ne!(m.x_tree[thigh - 2], Xform::identity());
    let anchors: Vec<[f64; 3]> = (thigh - 2..=thigh).map(|i| m.joints[i].pos.into()).collect();
    assert_eq!(anchors, vec![[0.0, 0.0, 0.02], [0.01, 0.0, 0.0], [0.0, 0.01, -0.01]]);
    let mjb = m.mj_body[thigh];
    assert_eq!((m.mj_body_last[mjb], m.mj_body_name[mjb].as_str()), (thigh, "thigh_r"));
    // the free root: identity X_tree, pose in qpos0
    let torso = m.body_id("torso").unwrap();
    assert!(matches!(m.joints[torso].jtype, JointType::Free));
    assert_eq!(m.x_tree[torso], Xform::identity());
    assert_eq!(m.qpos0.as_slice()[0..3], [0.0, 0.0, 1.3]);
}

// ------------------------------------------------------------------------------------------------
// Warnings
// ------------------------------------------------------------------------------------------------

#[test]
fn visual_and_asset_give_one_warning_each() {
    let loaded = load_fixture("mjcf/skipped.xml");
    assert_eq!(loaded.warnings.len(), 2, "{:#?}", loaded.warnings);
    // the sensor is read (one jointpos)
    assert_eq!(loaded.model.sensors.len(), 1);
    for (w, (tag, line)) in loaded.warnings.iter().zip([("<visual>", 3), ("<asset>", 6)]) {
        assert!(w.contains(tag), "{w}");
        assert!(w.contains(&format!("skipped.xml:{line}:")), "{w}");
    }
    let r = reference();
    check_model("mjcf/skipped.xml", &r["models"]["mjcf/skipped.xml"]);
}

#[test]
fn repeated_skips_are_counted_and_flags_and_colours_warn() {
    let xml = r#"<mujoco>
  <option><flag contact="disable"/></option>
  <worldbody>
    <body name="b">
      <joint name="j" group="2"/>
      <geom size="0.1" rgba="1 0 0 1"/>
      <camera name="c1"/>
      <camera name="c2"/>
      <site name="s" rgba="0 1 0 1"/>
    </body>
  </worldbody>
  <actuator><motor joint="j" gear="2"/></actuator>
</mujoco>"#;
    let loaded = parse(xml, "w.xml").unwrap();
    let w = &loaded.warnings;
    assert_eq!(w.len(), 4, "{w:#?}");
    // sites and motors are read, not skipped
    assert_eq!(loaded.model.sites.len(), 1);
    assert_eq!(loaded.model.actuators[0].gear[0], 2.0);
    assert_eq!(loaded.model.opt.flags, vec![("contact".to_string(), false)]);
    let find = |needle: &str| {
        w.iter()
            .find(|x| x.contains(needle))
            .unwrap_or_else(|| panic!("no warning with {needle}: {w:#?}"))
    };
    assert!(find("<camera>").contains("2 occurrences"));
    assert!(find("<camera>").starts_with("w.xml:7:"));
    assert!(find("<flag").contains("contact=\"disable\""));
    // a site's colour is skipped; a geom's is read (rays skip invisible geoms)
    assert!(find("'rgba' of <site>").starts_with("w.xml:9:"));
    assert_eq!(loaded.model.geoms[0].rgba, [1.0, 0.0, 0.0, 1.0]);
    assert!(find("'group' of <joint>").starts_with("w.xml:5:"));
}

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

/// Parses `xml` expecting `Error::Model` at `line` whose message contains every needle.
fn expect_error(xml: &str, line: u32, needles: &[&str]) {
    match parse(xml, "bad.xml") {
        Err(Error::Model { file, line: l, why }) => {
            assert_eq!(file, "bad.xml");
            assert_eq!(l, line, "wrong line for: {why}");
            for n in needles {
                assert!(why.contains(n), "message {why:?} lacks {n:?}");
            }
            // the Display form is file:line: message
            let shown = Error::Model {
                file,
                line: l,
                why: why.clone(),
            }
            .to_string();
            assert!(shown.starts_with(&format!("bad.xml:{line}: ")), "{shown}");
        }
        Err(other) => panic!("expected Error::Model, got {other:?}"),
        Ok(_) => panic!("expected an error for\n{xml}"),
    }
}

/// A one-body model with `joint` and `geom` lines substituted (lines 4 and 5).
fn body_model(joint: &str, geom: &str) -> String {
    format!("<mujoco>\n<worldbody>\n<body name=\"b\">\n{joint}\n{geom}\n</body>\n</worldbody>\n</mujoco>\n")
}

#[test]
fn malformed_xml() {
    expect_error(
        "<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>\n",
        4,
        &["malformed XML", "body"],
    );
}

/// Materials: a geom or a mesh naming an unknown one, a repeated name and an unknown attribute
/// are errors naming the line; the visual attributes of a material are skipped with a warning.
#[test]
fn materials_and_their_errors() {
    expect_error(
        "<mujoco>\n<worldbody>\n<geom size=\"1\" material=\"nope\"/>\n</worldbody>\n</mujoco>",
        3,
        &["material", "unknown material"],
    );
    expect_error(
        "<mujoco>\n<asset>\n<mesh name=\"m\" vertex=\"0 0 0 1 0 0 0 1 0 0 0 1\" material=\"nope\"/>\n</asset>\n</mujoco>",
        3,
        &["material", "unknown material"],
    );
    expect_error(
        "<mujoco>\n<asset>\n<material name=\"a\"/>\n<material name=\"a\"/>\n</asset>\n</mujoco>",
        4,
        &["repeated material name"],
    );
    expect_error(
        "<mujoco>\n<asset>\n<material name=\"a\" bogus=\"1\"/>\n</asset>\n</mujoco>",
        3,
        &["bogus", "not supported"],
    );
    let xml = r#"<mujoco>
  <default><default class="c"><material rgba="0 0 1 0"/></default></default>
  <asset>
    <material name="shiny" specular="0.5" rgba="1 0 0 1"/>
    <material name="clear" class="c"/>
  </asset>
  <worldbody>
    <geom size="0.1" material="shiny"/>
    <geom size="0.1" material="clear" rgba="0 1 0 1"/>
  </worldbody>
</mujoco>"#;
    let loaded = parse(xml, "m.xml").unwrap();
    let m = &loaded.model;
    assert_eq!(m.materials.len(), 2);
    assert_eq!(m.materials[1].rgba, [0.0, 0.0, 1.0, 0.0]);
    assert_eq!((m.geoms[0].material, m.geoms[1].material), (Some(0), Some(1)));
    assert_eq!(m.geoms[1].rgba, [0.0, 1.0, 0.0, 1.0]);
    assert!(
        loaded.warnings.iter().any(|w| w.contains("'specular' of <material>")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn unknown_element() {
    expect_error(&body_model("<joint/>", "<bogus/>"), 5, &["<bogus>", "not supported"]);
    expect_error(
        "<mujoco>\n<deformable/>\n</mujoco>",
        2,
        &["<deformable>", "not supported"],
    );
    expect_error(
        "<mujoco>\n<tendon>\n<bogus/>\n</tendon>\n</mujoco>",
        3,
        &["<bogus>", "not allowed"],
    );
    expect_error("<notmujoco/>", 1, &["<notmujoco>", "<mujoco>"]);
}

#[test]
fn unknown_attribute() {
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" bogus=\"1\"/>"),
        5,
        &["<geom>", "'bogus'"],
    );
    // attributes MuJoCo knows but this reader does not support are errors too
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" fluidcoef=\"0.5 0.25 1.5 1 1\"/>"),
        5,
        &["<geom>", "'fluidcoef'"],
    );
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" fluidshape=\"ellipsoid\"/>"),
        5,
        &["<geom>", "'fluidshape'"],
    );
}

#[test]
fn bad_float() {
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" pos=\"0 0 x\"/>"),
        5,
        &["<geom>", "pos", "'x' is not a number"],
    );
    expect_error(
        &body_model("<joint damping=\"inf\"/>", "<geom size=\"0.1\"/>"),
        4,
        &["<joint>", "damping", "not a finite"],
    );
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" condim=\"3.0\"/>"),
        5,
        &["<geom>", "condim", "integer"],
    );
}

#[test]
fn wrong_number_count() {
    // the line is the attribute's, not the element's
    let xml = "<mujoco>\n<worldbody>\n<body>\n<joint\n axis=\"1 0\"/>\n<geom size=\"0.1\"/>\n</body>\n</worldbody>\n</mujoco>";
    expect_error(xml, 5, &["<joint>", "axis", "expected 3 numbers, got 2"]);
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1 0.2 0.3 0.4\"/>"),
        5,
        &["<geom>", "size", "1 to 3 numbers, got 4"],
    );
    expect_error(
        &body_model("<joint/>", "<geom type=\"capsule\" size=\"0.1\"/>"),
        5,
        &["<geom>", "size[1] must be positive"],
    );
}

#[test]
fn unknown_joint_type_and_keywords() {
    expect_error(
        &body_model("<joint type=\"weird\"/>", "<geom size=\"0.1\"/>"),
        4,
        &["<joint>", "type", "unknown keyword"],
    );
    expect_error(
        "<mujoco>\n<option integrator=\"rk4\"/>\n</mujoco>",
        2,
        &["<option>", "integrator", "RK4"],
    );
    expect_error(
        &body_model("<joint/>", "<geom type=\"mesh\"/>"),
        5,
        &["<geom>", "needs the mesh attribute naming its asset"],
    );
}

#[test]
fn free_joint_in_a_non_root_body() {
    let xml = "<mujoco>\n<worldbody>\n<body name=\"a\">\n<geom size=\"0.1\"/>\n<body name=\"b\">\n<freejoint name=\"f\"/>\n<geom size=\"0.1\"/>\n</body>\n</body>\n</worldbody>\n</mujoco>";
    expect_error(
        xml,
        6,
        &["<freejoint name=\"f\">", "free joint", "'b'", "child of the world body"],
    );
}

#[test]
fn unknown_body_or_joint_in_equality() {
    let base = "<mujoco>\n<worldbody>\n<body name=\"a\">\n<joint name=\"j\"/>\n<geom size=\"0.1\"/>\n</body>\n</worldbody>\n<equality>\n";
    expect_error(
        &format!("{base}<connect body1=\"zz\" anchor=\"0 0 0\"/>\n</equality>\n</mujoco>"),
        9,
        &["<connect>", "body1", "unknown body"],
    );
    expect_error(
        &format!("{base}<joint joint1=\"j\" joint2=\"q\"/>\n</equality>\n</mujoco>"),
        9,
        &["<joint>", "joint2", "unknown joint"],
    );
    expect_error(
        &format!("{base}<connect body1=\"a\"/>\n</equality>\n</mujoco>"),
        9,
        &["<connect>", "'anchor' is missing"],
    );
}

#[test]
fn non_physical_inertia() {
    let inertial = |s: &str| body_model("<joint/>", &format!("<inertial pos=\"0 0 0\" mass=\"1\" {s}/>"));
    expect_error(&inertial("diaginertia=\"1 1 3\""), 5, &["<inertial>", "A + B >= C"]);
    expect_error(
        &inertial("fullinertia=\"1 1 1 2 0 0\""),
        5,
        &["<inertial>", "fullinertia", "positive eigenvalues"],
    );
    expect_error(
        &body_model("<joint/>", "<inertial pos=\"0 0 0\" mass=\"-1\"/>"),
        5,
        &["<inertial>", "mass", "negative"],
    );
    // a moving body without mass (MuJoCo's mjMINVAL check), reported at the body
    expect_error(
        &body_model("<joint/>", "<site/>"),
        3,
        &["<body name=\"b\">", "mjMINVAL"],
    );
}

#[test]
fn missing_file() {
    match load(fixtures().join("mjcf/does_not_exist.xml")) {
        Err(Error::Io { path, why }) => {
            assert!(path.ends_with("does_not_exist.xml"));
            assert!(!why.is_empty());
        }
        other => panic!("expected Error::Io, got {other:?}"),
    }
}

#[test]
fn classes_names_and_geometry_errors() {
    expect_error(
        &body_model("<joint class=\"nope\"/>", "<geom size=\"0.1\"/>"),
        4,
        &["<joint class=\"nope\">", "unknown default class 'nope'"],
    );
    // a bad value inherited from a class points at the class's line
    let xml = "<mujoco>\n<default>\n<default class=\"c\">\n<joint damping=\"x\"/>\n</default>\n</default>\n<worldbody>\n<body childclass=\"c\">\n<joint/>\n<geom size=\"0.1\"/>\n</body>\n</worldbody>\n</mujoco>";
    expect_error(xml, 4, &["<joint>", "damping", "default class 'c'"]);
    let xml = "<mujoco>\n<worldbody>\n<body name=\"a\"><joint/><geom size=\"0.1\"/></body>\n<body name=\"a\"><joint/><geom size=\"0.1\"/></body>\n</worldbody>\n</mujoco>";
    expect_error(xml, 4, &["<body name=\"a\">", "repeated body name", "line 3"]);
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" quat=\"1 0 0 0\" euler=\"0 0 1\"/>"),
        5,
        &["<geom>", "multiple orientation"],
    );
    expect_error(
        &body_model(
            "<joint/>",
            "<geom type=\"sphere\" size=\"0.1\" fromto=\"0 0 0 0 0 1\"/>",
        ),
        5,
        &["<geom>", "fromto"],
    );
    expect_error(
        &body_model("<joint/>", "<geom type=\"plane\" size=\"1 1 1\"/>"),
        5,
        &["<geom>", "plane"],
    );
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" condim=\"2\"/>"),
        5,
        &["<geom>", "condim"],
    );
    expect_error(
        &body_model("<joint damping=\"-1\"/>", "<geom size=\"0.1\"/>"),
        4,
        &["<joint>", "damping", ">= 0"],
    );
    expect_error(
        &body_model("<joint range=\"1 0\" limited=\"true\"/>", "<geom size=\"0.1\"/>"),
        4,
        &["<joint>", "range"],
    );
    expect_error(
        "<mujoco>\n<actuator>\n<adhesion body=\"world\"/>\n</actuator>\n</mujoco>",
        3,
        &["<adhesion>", "not supported"],
    );
    // a muscle without lengthrange is read with (0, 0), left to the length-range simulation
    // (mbd::mujoco::load), which refuses an unlimited hinge as MuJoCo's compiler does
    let muscle = body_model("<joint name=\"j\"/>", "<geom size=\"0.1\"/>")
        .replace("</mujoco>", "<actuator>\n<muscle joint=\"j\"/>\n</actuator>\n</mujoco>");
    assert_eq!(
        mbd::mjcf::load_str(&muscle).unwrap().model.actuators[0].lengthrange,
        [0.0, 0.0]
    );
    let err = mbd::mujoco::load_str(&muscle).unwrap_err().to_string();
    assert!(err.contains("did not converge"), "{err}");
    expect_error(
        "<mujoco>\n<worldbody>\n<joint/>\n</worldbody>\n</mujoco>",
        3,
        &["<joint>", "world body"],
    );
    expect_error(
        "<mujoco>\n<option timestep=\"0\"/>\n</mujoco>",
        2,
        &["<option>", "timestep", "positive"],
    );
}

// ------------------------------------------------------------------------------------------------
// Bad input found by fuzzing: misplaced elements, multi-line messages, huge magnitudes
// ------------------------------------------------------------------------------------------------

#[test]
fn elements_where_the_schema_allows_none_are_errors() {
    // a body inside a geom used to vanish with its joints and mass
    let hidden = "<body name=\"lost\"><joint/><geom size=\"0.1\"/></body>";
    for (parent, line) in [
        ("<geom size=\"0.1\">{}</geom>", 5),
        ("<joint>{}</joint>", 5),
        ("<inertial pos=\"0 0 0\" mass=\"1\">{}</inertial>", 5),
        ("<site>{}</site>", 5),
    ] {
        let inner = parent.replace("{}", &format!("\n{hidden}\n"));
        let xml = format!("<mujoco>\n<worldbody>\n<body name=\"b\">\n<joint/><geom size=\"0.1\"/>{inner}</body>\n</worldbody>\n</mujoco>\n");
        expect_error(&xml, line, &["<body name=\"lost\">", "not allowed inside"]);
    }
    expect_error(
        "<mujoco>\n<worldbody>\n<body>\n<freejoint>\n<geom size=\"1\"/>\n</freejoint>\n</body>\n</worldbody>\n</mujoco>",
        5,
        &["<geom>", "not allowed inside <freejoint>"],
    );
    expect_error(
        "<mujoco>\n<asset>\n<texture name=\"t\"/>\n<body name=\"lost\"/>\n</asset>\n</mujoco>",
        4,
        &["<body name=\"lost\">", "not allowed inside <asset>"],
    );
    expect_error(
        "<mujoco>\n<compiler>\n<body/>\n</compiler>\n</mujoco>",
        3,
        &["<body>", "not allowed inside <compiler>"],
    );
    let base = "<mujoco>\n<worldbody>\n<body name=\"a\">\n<joint name=\"j\"/>\n<geom size=\"0.1\"/>\n</body>\n</worldbody>\n<equality>\n";
    for eq in ["<connect body1=\"a\" anchor=\"0 0 0\">", "<weld body1=\"a\">"] {
        let tag = &eq[1..eq.find(' ').unwrap()];
        expect_error(
            &format!("{base}{eq}\n<body/>\n</{tag}>\n</equality>\n</mujoco>"),
            10,
            &["<body>", &format!("not allowed inside <{tag}>")],
        );
    }
}

#[test]
fn every_error_is_one_line() {
    // a newline inside an attribute value (&#10;) and a name with a tab are escaped
    let err = parse(
        &body_model("<joint damping=\"1&#10;2\"/>", "<geom size=\"0.1\"/>"),
        "bad.xml",
    )
    .unwrap_err();
    let shown = err.to_string();
    assert!(!shown.contains('\n') && shown.contains("1\\n2"), "{shown}");
    let err = parse(&body_model("<joint/>", "<geom name=\"a&#9;b\" size=\"x\"/>"), "bad.xml").unwrap_err();
    let shown = err.to_string();
    assert!(!shown.contains('\t') && shown.contains("a\\tb"), "{shown}");
    // the XML parser's own message
    let err = parse("<mujoco>\n<worldbody attr=\"&#10;\n</mujoco>", "bad.xml").unwrap_err();
    assert!(!err.to_string().contains('\n'), "{err}");
}

#[test]
fn magnitudes_beyond_mjmaxval_are_rejected() {
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" mass=\"1e308\"/>"),
        5,
        &["<geom>", "mass", "mjMAXVAL"],
    );
    expect_error(
        &body_model("<joint/>", "<geom size=\"0.1\" pos=\"0 0 1e308\"/>"),
        5,
        &["<geom>", "pos", "mjMAXVAL"],
    );
    expect_error(
        &body_model("<joint pos=\"1e308 0 0\"/>", "<geom size=\"0.1\"/>"),
        4,
        &["<joint>", "pos", "mjMAXVAL"],
    );
    expect_error(
        "<mujoco>\n<option timestep=\"1e308\"/>\n</mujoco>",
        2,
        &["<option>", "timestep", "mjMAXVAL"],
    );
    // 1e10 itself is allowed
    parse(&body_model("<joint/>", "<geom size=\"0.1\" mass=\"1e10\"/>"), "ok.xml").unwrap();
}

#[test]
fn load_takes_any_path_like_and_text() {
    let m = mbd::mjcf::load("tests/fixtures/mjcf/humanoid_mix.xml").unwrap().model;
    let s = std::fs::read_to_string("tests/fixtures/mjcf/humanoid_mix.xml").unwrap();
    assert_eq!(mbd::mjcf::load_str(&s).unwrap().model, m);
}

/// `n` bodies, each with a hinge and a sphere, either nested (a chain) or side by side.
fn many_bodies(n: usize, nested: bool) -> String {
    let mut s = String::with_capacity(n * 80);
    s.push_str("<mujoco>\n<worldbody>\n");
    for k in 0..n {
        s.push_str(&format!(
            "<body name=\"b{k}\" pos=\"0 0 0.1\"><joint axis=\"0 1 0\"/><geom size=\"0.05\"/>"
        ));
        if !nested {
            s.push_str("</body>\n");
        } else {
            s.push('\n');
        }
    }
    if nested {
        for _ in 0..n {
            s.push_str("</body>");
        }
    }
    s.push_str("\n</worldbody>\n</mujoco>\n");
    s
}

/// A chain nested 100,000 bodies deep and a flat tree of 100,000 bodies both load (the reader
/// is iterative and linear; `benches/mjcf.rs` times them).
#[test]
fn hundred_thousand_bodies_load_as_chain_and_as_flat_tree() {
    let n = 100_000;
    for nested in [true, false] {
        let m = parse(&many_bodies(n, nested), "big.xml").unwrap().model;
        assert_eq!(m.nb, n);
        assert_eq!(m.nv, n);
        assert_eq!(m.lambda[n], if nested { n - 1 } else { 0 });
    }
}

// ------------------------------------------------------------------------------------------------
// What the public models need: include, frame, tendons, actuators, keyframes
// ------------------------------------------------------------------------------------------------

#[test]
fn include_and_frame_place_elements_like_mujoco() {
    let dir = std::env::temp_dir().join(format!("mbd_include_{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/part.xml"),
        "<mujoco>\n<default><joint damping=\"0.5\"/></default>\n</mujoco>\n",
    )
    .unwrap();
    let main = "<mujoco>\n<include file=\"sub/part.xml\"/>\n<worldbody>\n<frame pos=\"1 0 0\" euler=\"0 0 90\">\n<body name=\"b\" pos=\"1 0 0\"><joint/><geom size=\"0.1\"/></body>\n</frame>\n</worldbody>\n</mujoco>\n";
    std::fs::write(dir.join("main.xml"), main).unwrap();
    let m = load(dir.join("main.xml")).unwrap().model;
    assert_eq!(m.joints[1].damping, 0.5);
    // the frame rotates the body's offset by 90 degrees about z: (1, 0, 0) + (0, 1, 0)
    let kin = forward_kinematics(&m, m.qpos0.as_slice()).unwrap();
    let p = kin.position(1);
    assert!((p - mbd::spatial::Vec3::new(1.0, 1.0, 0.0)).norm() < 1e-12, "{p:?}");
    // a missing include names the including file and line
    std::fs::write(
        dir.join("bad.xml"),
        "<mujoco>\n\n<include file=\"nope.xml\"/>\n</mujoco>\n",
    )
    .unwrap();
    match load(dir.join("bad.xml")) {
        Err(Error::Model { file, line, why }) => {
            assert!(
                file.ends_with("bad.xml") && line == 3 && why.contains("nope.xml"),
                "{file}:{line}: {why}"
            )
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tendon_moments_are_the_derivatives_of_tendon_lengths() {
    use mbd::dynamics::tendon_kinematics;
    for rel in [
        "models/public/dm_control/ball_in_cup.xml",
        "models/public/dm_control/quadruped.xml",
    ] {
        let m = load_fixture(rel).model;
        let mut q = m.qpos0.clone();
        let v: Vec<f64> = (0..m.nv).map(|k| 0.3 * (1.3 * k as f64 + 0.4).sin()).collect();
        m.integrate(q.as_mut_slice(), &v, 1.0).unwrap();
        let t = tendon_kinematics(&m, q.as_slice()).unwrap();
        let h = 1e-6;
        for dof in 0..m.nv {
            let mut e = vec![0.0; m.nv];
            e[dof] = 1.0;
            let (mut qp, mut qm) = (q.clone(), q.clone());
            m.integrate(qp.as_mut_slice(), &e, h).unwrap();
            m.integrate(qm.as_mut_slice(), &e, -h).unwrap();
            let (lp, lm) = (
                tendon_kinematics(&m, qp.as_slice()).unwrap().length,
                tendon_kinematics(&m, qm.as_slice()).unwrap().length,
            );
            for k in 0..m.tendons.len() {
                let fd = (lp[k] - lm[k]) / (2.0 * h);
                assert!(
                    (fd - t.moment[(k, dof)]).abs() < 1e-7,
                    "{rel}: tendon {k} dof {dof}: {fd} vs {}",
                    t.moment[(k, dof)]
                );
            }
        }
    }
}

#[test]
fn actuators_and_keyframes_are_stored() {
    let xml = r#"<mujoco>
  <default>
    <general ctrllimited="true" ctrlrange="-1 1" biastype="affine" biasprm="0 -5"/>
    <default class="servo"><position kp="7"/></default>
  </default>
  <worldbody>
    <body name="b"><joint name="j"/><geom size="0.1"/></body>
  </worldbody>
  <actuator>
    <general name="g" joint="j"/>
    <position name="p" class="servo" joint="j" ctrlrange="-2 2"/>
    <motor name="m" joint="j" gear="3"/>
  </actuator>
  <keyframe><key name="up" qpos="0.5" ctrl="1 2 3"/></keyframe>
</mujoco>"#;
    let m = parse(xml, "a.xml").unwrap().model;
    let [g, p, mo] = [&m.actuators[0], &m.actuators[1], &m.actuators[2]];
    assert_eq!((g.biasprm[1], g.ctrlrange, g.ctrllimited), (-5.0, [-1.0, 1.0], true));
    assert_eq!((p.gainprm[0], p.biasprm[1], p.ctrlrange), (7.0, -7.0, [-2.0, 2.0]));
    assert_eq!(
        (mo.gear[0], mo.gainprm[0], mo.biastype),
        (3.0, 1.0, mbd::model::BiasType::None)
    );
    assert_eq!(m.keyframes[0].name, "up");
    assert_eq!(m.keyframes[0].qpos, vec![0.5]);
    let bad = |xml: &str, line: u32, needles: &[&str]| expect_error(xml, line, needles);
    bad(
        "<mujoco>\n<worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>\n<keyframe>\n<key qpos=\"1 2\"/>\n</keyframe>\n</mujoco>",
        4,
        &["<key>", "qpos", "expected 1 numbers, got 2"],
    );
    bad(
        "<mujoco>\n<worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>\n<actuator>\n<motor tendon=\"t\"/>\n</actuator>\n</mujoco>",
        4,
        &["<motor>", "tendon", "unknown tendon"],
    );
    bad(
        "<mujoco>\n<worldbody><body><joint name=\"j\" type=\"ball\"/><geom size=\"1\"/></body></worldbody>\n<tendon>\n<fixed>\n<joint joint=\"j\"/>\n</fixed>\n</tendon>\n</mujoco>",
        5,
        &["<joint>", "hinge and slide"],
    );
}
