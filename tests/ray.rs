//! Ray casting (`mbd::collision::ray`, `mbd::mujoco::ray::ray`, MuJoCo's `mj_ray`) against
//! MuJoCo 4.0.0 and against properties that hold whatever the reference.
//!
//! The fixture `tests/fixtures/ray.json` is written by
//! `/tmp/peers/bin/python tests/fixtures/make_ray_fixtures.py` (see its header): 3090 rays in
//! the scene `tests/fixtures/models/ray_scene.xml` at three configurations (90 of them with
//! `|vec|` between 1e-9 and 1e-6), each with the default filter and a random one (6180 casts),
//! and the 20 rangefinder rays and 30 more rays of
//! dm_control's quadruped over a filled height field at four states.
//!
//! Tolerances:
//! * hit or miss, and the geom hit, must agree exactly, except for a ray that passes within
//!   [`GRAZE`] of an edge or a tangent point of the geom concerned: such a ray is recognised by
//!   moving its origin by `GRAZE` along each axis and seeing the hit appear or vanish for that
//!   geom (our own intersection, [`mbd::collision::ray::ray_geom`]); it is then counted and
//!   printed, not failed. For two different geoms hit, both distances must lie within `GRAZE`
//!   of each other (a tie between touching surfaces) for the case to pass the same way.
//! * the distance to [`DIST_REL`] relative, the normal to [`NORMAL_TOL`] (each component).

mod common;
use mbd::collision::ray::{
    ray_box, ray_capsule, ray_cylinder, ray_ellipsoid, ray_geom, ray_hfield, ray_plane, ray_sphere, Hit,
};
use mbd::collision::{Assets, GeomPose};
use mbd::model::{GeomType, Model};
use mbd::mujoco::collision::geom_poses_into;
use mbd::mujoco::forward_smooth;
use mbd::mujoco::ray::{eliminated, ray, RayFilter, RayHit};
use mbd::spatial::{quat_to_mat, Mat3, Vec3};
use proptest::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

/// A ray within this distance (in units of `vec` times `|vec|`, i.e. metres) of an edge or a
/// tangent may be called a hit by one side and a miss by the other.
const GRAZE: f64 = 1e-9;
/// Relative tolerance of the distance.
const DIST_REL: f64 = 1e-12;
/// Tolerance of each component of the unit normal.
const NORMAL_TOL: f64 = 1e-9;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> Value {
    let text = std::fs::read_to_string(root().join("tests/fixtures/ray.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn nums(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(nums).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        other => panic!("not a number: {other}"),
    }
}

fn v3(v: &Value) -> Vec3 {
    let x = nums(v);
    Vec3::new(x[0], x[1], x[2])
}

fn scene() -> Model {
    mbd::mjcf::load(root().join("tests/fixtures/models/ray_scene.xml"))
        .unwrap()
        .model
}

/// World poses of every geom at `qpos`.
fn poses_at(model: &Model, qpos: &[f64]) -> (mbd::mujoco::Data, Vec<GeomPose>) {
    let d = forward_smooth(model, qpos, &vec![0.0; model.nv]).unwrap();
    let mut poses = vec![];
    geom_poses_into(model, &d, &mut poses);
    (d, poses)
}

/// MuJoCo's `[dist, geomid, normal]`, as an `Option`.
fn theirs(v: &Value) -> Option<RayHit> {
    let dist = v[0].as_f64().unwrap();
    let geom = v[1].as_i64().unwrap();
    (geom >= 0).then(|| RayHit {
        dist,
        geom: geom as usize,
        normal: v3(&v[2]),
    })
}

/// The filter of a fixture ray: `[mask, flg_static, bodyexclude]`.
fn filter_of(v: &Value) -> RayFilter {
    let mask = nums(&v[0]);
    let body = v[2].as_i64().unwrap();
    RayFilter {
        geomgroup: Some([0, 1, 2, 3, 4, 5].map(|k| mask[k] != 0.0)),
        flg_static: v[1].as_i64().unwrap() != 0,
        bodyexclude: (body >= 0).then_some(body as usize),
    }
}

/// Tolerances of a comparison for a geom: relative distance, normal component, grazing
/// distance.
#[derive(Clone, Copy, Debug)]
struct Tol {
    dist: f64,
    normal: f64,
    graze: f64,
}

/// The tolerances of the header, for every geom.
fn strict(_: usize) -> Tol {
    Tol {
        dist: DIST_REL,
        normal: NORMAL_TOL,
        graze: GRAZE,
    }
}

/// Whether geom `g`'s hit by this ray changes (appears, vanishes) when the origin moves by
/// `graze` along any axis: the ray grazes an edge or a tangent point of the geom.
fn grazes(model: &Model, poses: &[GeomPose], g: usize, pnt: &Vec3, vec: &Vec3, graze: f64) -> bool {
    let assets = Assets {
        meshes: &model.meshes,
        hfields: &model.hfields,
    };
    let geom = &model.geoms[g];
    let hit = |p: &Vec3| ray_geom(&assets, geom.gtype, &geom.size, &poses[g], p, vec).is_some();
    let here = hit(pnt);
    (0..6).any(|k| {
        let mut p = *pnt;
        p[k / 2] += if k % 2 == 0 { graze } else { -graze };
        hit(&p) != here
    })
}

/// Tally of one comparison run.
#[derive(Default, Debug)]
struct Tally {
    casts: usize,
    hits: usize,
    grazing: usize,
    ties: usize,
    max_dist_rel: f64,
    max_normal: f64,
}

/// Compares one cast with the tolerances `tol` of the geoms concerned; failures are pushed to
/// `bad`.
#[allow(clippy::too_many_arguments)]
fn compare(
    model: &Model,
    poses: &[GeomPose],
    what: &str,
    pnt: &Vec3,
    vec: &Vec3,
    ours: Option<RayHit>,
    reference: Option<RayHit>,
    tol: &dyn Fn(usize) -> Tol,
    t: &mut Tally,
    bad: &mut Vec<String>,
) {
    t.casts += 1;
    let grazes = |g: usize| grazes(model, poses, g, pnt, vec, tol(g).graze);
    match (ours, reference) {
        (None, None) => {}
        (Some(a), Some(b)) if a.geom == b.geom => {
            t.hits += 1;
            let rel = (a.dist - b.dist).abs() / b.dist.abs().max(f64::MIN_POSITIVE);
            let nerr = (a.normal - b.normal).amax();
            t.max_dist_rel = t.max_dist_rel.max(rel);
            t.max_normal = t.max_normal.max(nerr);
            if rel > tol(a.geom).dist || nerr > tol(a.geom).normal {
                bad.push(format!(
                    "{what}: geom {} dist {} vs MuJoCo {} (rel {rel:.1e}), normal {:?} vs {:?}",
                    a.geom,
                    a.dist,
                    b.dist,
                    a.normal.as_slice(),
                    b.normal.as_slice()
                ));
            }
        }
        (Some(a), Some(b)) => {
            // two surfaces at (nearly) the same distance, or one of them grazed
            let tie = (a.dist - b.dist).abs() * vec.norm() <= tol(a.geom).graze.max(tol(b.geom).graze);
            if tie || grazes(a.geom) || grazes(b.geom) {
                t.ties += 1;
            } else {
                bad.push(format!(
                    "{what}: we hit geom {} at {}, MuJoCo geom {} at {}",
                    a.geom, a.dist, b.geom, b.dist
                ));
            }
        }
        (Some(h), None) | (None, Some(h)) => {
            if grazes(h.geom) {
                t.grazing += 1;
            } else {
                bad.push(format!(
                    "{what}: only {} hit geom {} at {}",
                    if ours.is_some() { "we" } else { "MuJoCo" },
                    h.geom,
                    h.dist
                ));
            }
        }
    }
}

#[test]
fn scene_colours_groups_and_materials_match_mujoco() {
    let r = fixture();
    let m = &r["scene"]["model"];
    let model = scene();
    let ng = model.geoms.len();
    assert_eq!(ng, m["geom_group"].as_array().unwrap().len());
    let group: Vec<f64> = model.geoms.iter().map(|g| g.group as f64).collect();
    assert_eq!(group, nums(&m["geom_group"]));
    let rgba: Vec<f64> = model.geoms.iter().flat_map(|g| g.rgba).collect();
    assert_eq!(rgba, nums(&m["geom_rgba"]));
    let matid: Vec<f64> = model
        .geoms
        .iter()
        .map(|g| g.material.map_or(-1.0, |k| k as f64))
        .collect();
    assert_eq!(matid, nums(&m["geom_matid"]));
    let mat: Vec<f64> = model.materials.iter().flat_map(|m| m.rgba).collect();
    assert_eq!(mat, nums(&m["mat_rgba"]));
    let body: Vec<f64> = model.geoms.iter().map(|g| model.mj_body[g.body] as f64).collect();
    assert_eq!(body, nums(&m["geom_bodyid"]));
    // static = welded to the world: the flg_static filter drops exactly those geoms
    let weld = nums(&m["body_weldid"]);
    let no_static = RayFilter {
        flg_static: false,
        ..RayFilter::default()
    };
    for g in 0..ng {
        let invisible = eliminated(&model, g, &RayFilter::default());
        let is_static = weld[body[g] as usize] == 0.0;
        assert_eq!(
            eliminated(&model, g, &no_static),
            invisible || is_static,
            "geom {} ({})",
            g,
            model.geoms[g].name
        );
    }
}

/// The scene with MuJoCo's compiled meshes in place of ours: its single-precision vertices
/// and faces (`mesh_vert`, `mesh_face`) and its box (the `geom_size` of a geom of the mesh).
fn scene_with_mujoco_meshes(m: &Value) -> Model {
    let mut model = scene();
    let size = nums(&m["geom_size"]);
    for k in 0..model.meshes.len() {
        let g = model.geoms.iter().position(|g| g.gtype == GeomType::Mesh(k)).unwrap();
        let mesh = &mut model.meshes[k];
        let v = nums(&m["mesh_vert"][k]);
        mesh.vertices = v.chunks(3).map(|c| Vec3::new(c[0], c[1], c[2])).collect();
        let f = nums(&m["mesh_face"][k]);
        mesh.faces = f
            .chunks(3)
            .map(|c| [c[0] as usize, c[1] as usize, c[2] as usize])
            .collect();
        mesh.half_extent = Vec3::new(size[3 * g], size[3 * g + 1], size[3 * g + 2]);
    }
    model
}

/// MuJoCo's geom poses of a fixture state (`geom_xpos`, `geom_xmat` by rows).
fn mujoco_poses(state: &Value) -> Vec<GeomPose> {
    let (xpos, xmat) = (nums(&state["geom_xpos"]), nums(&state["geom_xmat"]));
    (0..xpos.len() / 3)
        .map(|g| GeomPose {
            pos: Vec3::new(xpos[3 * g], xpos[3 * g + 1], xpos[3 * g + 2]),
            rot: Mat3::from_row_slice(&xmat[9 * g..9 * g + 9]),
        })
        .collect()
}

/// Casts every scene ray of the fixture with both filters in `model` at the poses `poses_of`
/// gives for each state, compares with MuJoCo and returns the tallies (default filter, random
/// filter) and the failures.
fn cast_scene(
    model: &Model,
    poses_of: &dyn Fn(&Value) -> Vec<GeomPose>,
    tol: &dyn Fn(usize) -> Tol,
) -> ([Tally; 2], Vec<String>) {
    let r = fixture();
    let mut bad = vec![];
    let mut tally = [Tally::default(), Tally::default()];
    for (s, state) in r["scene"]["states"].as_array().unwrap().iter().enumerate() {
        let poses = poses_of(state);
        for (k, ray_v) in state["rays"].as_array().unwrap().iter().enumerate() {
            let (pnt, vec) = (v3(&ray_v[0]), v3(&ray_v[1]));
            let filters = [RayFilter::default(), filter_of(&ray_v[2])];
            for (f, filter) in filters.iter().enumerate() {
                let ours = ray(model, &poses, &pnt, &vec, filter).unwrap();
                let what = format!("state {s} ray {k} filter {f}");
                let reference = theirs(&ray_v[3][f]);
                compare(
                    model,
                    &poses,
                    &what,
                    &pnt,
                    &vec,
                    ours,
                    reference,
                    tol,
                    &mut tally[f],
                    &mut bad,
                );
            }
        }
    }
    for (f, t) in tally.iter().enumerate() {
        println!("filter {}: {t:?}", ["default", "random"][f]);
    }
    (tally, bad)
}

/// The ray casting itself: on MuJoCo's geometry (its geom poses and compiled meshes), every
/// cast agrees to the tolerances of the header.
#[test]
fn scene_rays_match_mujoco() {
    let r = fixture();
    let model = scene_with_mujoco_meshes(&r["scene"]["model"]);
    let (tally, bad) = cast_scene(&model, &mujoco_poses, &strict);
    assert!(tally[0].casts == 3090 && tally[0].hits > 2000, "{tally:?}");
    assert!(
        bad.is_empty(),
        "{} of 6180 casts differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Our own compile of the scene: the geom poses agree with MuJoCo's to 1e-13, except the
/// orientation of mesh geoms, which comes from MuJoCo's Jacobi eigen-iteration over the mesh's
/// inertia (`mjuu_eig3`, reproduced by the reader, `mbd::model::mj_eig3`): it stops at an
/// absolute threshold, so inertias that differ in their last bits (summed in another order)
/// leave it a few 1e-10 apart (measured 2.2e-10, in an entry of the rotation). The world
/// vertices of the meshes then agree to 7e-9 m (single precision in frames that far apart; 2e-8
/// asserted), and every ray of the fixture cast on our own geometry agrees with MuJoCo to
/// 1e-12 away from meshes, and on them to 1e-8 in distance (measured 2.2e-9) and 1e-6 in the
/// normal (measured 8.5e-8: a small triangle's normal tilts with its corners).
#[test]
fn scene_compiles_like_mujoco() {
    let r = fixture();
    let m = &r["scene"]["model"];
    let model = scene();
    let mesh_geom = |g: usize| matches!(model.geoms[g].gtype, GeomType::Mesh(_));
    let (mut worst_mesh_rot, mut worst_vertex): (f64, f64) = (0.0, 0.0);
    for (s, state) in r["scene"]["states"].as_array().unwrap().iter().enumerate() {
        let (_, ours) = poses_at(&model, &nums(&state["qpos"]));
        let theirs = mujoco_poses(state);
        for (g, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert!((a.pos - b.pos).amax() < 1e-13, "state {s} geom {g} xpos");
            let rot = (a.rot - b.rot).amax();
            if mesh_geom(g) {
                worst_mesh_rot = worst_mesh_rot.max(rot);
                assert!(rot < 1e-9, "state {s} mesh geom {g} xmat off by {rot:e}");
            } else {
                assert!(rot < 1e-13, "state {s} geom {g} xmat off by {rot:e}");
            }
        }
        // the meshes' world vertices, face by face
        for (g, geom) in model.geoms.iter().enumerate() {
            let GeomType::Mesh(k) = geom.gtype else { continue };
            let mesh = &model.meshes[k];
            let v = nums(&m["mesh_vert"][k]);
            let f = nums(&m["mesh_face"][k]);
            assert_eq!(mesh.faces.len() * 3, f.len(), "mesh {k}: face count");
            for (i, face) in mesh.faces.iter().enumerate() {
                for c in 0..3 {
                    let j = f[3 * i + c] as usize;
                    let theirs_v = theirs[g].pos + theirs[g].rot * Vec3::new(v[3 * j], v[3 * j + 1], v[3 * j + 2]);
                    let ours_v = ours[g].pos + ours[g].rot * mesh.vertices[face[c]];
                    let e = (ours_v - theirs_v).amax();
                    worst_vertex = worst_vertex.max(e);
                    assert!(e < 2e-8, "state {s} mesh {k} face {i} corner {c}: {e:e}");
                }
            }
        }
    }
    println!("mesh geoms' orientation: at most {worst_mesh_rot:e} from MuJoCo's, world vertices {worst_vertex:e} m");
    let pos = nums(&m["mesh_pos"]);
    let quat = nums(&m["mesh_quat"]);
    for (k, mesh) in model.meshes.iter().enumerate() {
        assert!((mesh.pos - Vec3::new(pos[3 * k], pos[3 * k + 1], pos[3 * k + 2])).amax() < 1e-12);
        let q = &quat[4 * k..4 * k + 4];
        let e = (0..4).map(|i| (mesh.quat[i] - q[i]).abs()).fold(0.0, f64::max);
        assert!(e < 1e-9, "mesh {k} quat {:?} vs {q:?}", mesh.quat);
    }
    let tol = |g: usize| {
        if mesh_geom(g) {
            Tol {
                dist: 1e-8,
                normal: 1e-6,
                graze: 1e-8,
            }
        } else {
            strict(g)
        }
    };
    let (_, bad) = cast_scene(&model, &|state| poses_at(&model, &nums(&state["qpos"])).1, &tol);
    assert!(bad.is_empty(), "{} casts differ:\n{}", bad.len(), bad.join("\n"));
}

/// The quadruped's terrain of the fixture: a bowl with ridges (`terrain()` of
/// make_ray_fixtures.py), in exact arithmetic, rounded to single precision.
fn terrain(nrow: usize, ncol: usize) -> Vec<f64> {
    let (cr, cc) = (((nrow - 1) / 2) as i64, ((ncol - 1) / 2) as i64);
    let rmax = (cr * cr + cc * cc) as f64;
    let mut out = Vec::with_capacity(nrow * ncol);
    for r in 0..nrow as i64 {
        for c in 0..ncol as i64 {
            let bowl = ((r - cr).pow(2) + (c - cc).pow(2)) as f64 / rmax;
            let ridge = ((3 * r + 7 * c) % 11) as f64 / 220.0;
            out.push((0.8 * bowl + ridge) as f32 as f64);
        }
    }
    out
}

#[test]
fn quadruped_rangefinders_match_mujoco() {
    let r = fixture();
    let q = &r["quadruped"];
    let path = root().join("tests/fixtures/models/public/dm_control/quadruped.xml");
    let mut model = mbd::mjcf::load(&path).unwrap().model;
    let (nrow, ncol) = (
        q["hfield"]["nrow"].as_u64().unwrap() as usize,
        q["hfield"]["ncol"].as_u64().unwrap() as usize,
    );
    assert_eq!((model.hfields[0].nrow, model.hfields[0].ncol), (nrow, ncol));
    model.hfields[0].data = terrain(nrow, ncol);
    // the reader's materials, colours and groups
    let matid: Vec<f64> = model
        .geoms
        .iter()
        .map(|g| g.material.map_or(-1.0, |k| k as f64))
        .collect();
    assert_eq!(matid, nums(&q["geom_matid"]));
    assert_eq!(
        model.geoms.iter().flat_map(|g| g.rgba).collect::<Vec<_>>(),
        nums(&q["geom_rgba"])
    );
    assert_eq!(
        model.materials.iter().flat_map(|m| m.rgba).collect::<Vec<_>>(),
        nums(&q["mat_rgba"])
    );
    assert_eq!(
        model.geoms.iter().map(|g| g.group as f64).collect::<Vec<_>>(),
        nums(&q["geom_group"])
    );
    let names: Vec<String> = q["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let sites: Vec<usize> = names
        .iter()
        .map(|n| model.sites.iter().position(|s| &s.name == n).unwrap())
        .collect();
    let site_body = nums(&q["site_bodyid"]);
    let torso = model.mj_body_name.iter().position(|n| n == "torso").unwrap();
    let mut bad = vec![];
    let mut t = Tally::default();
    for (s, state) in q["states"].as_array().unwrap().iter().enumerate() {
        let (d, poses) = poses_at(&model, &nums(&state["qpos"]));
        let (sx, sm) = (&state["site_xpos"], &state["site_xmat"]);
        for (k, &site) in sites.iter().enumerate() {
            // the site's origin and z axis: where a rangefinder casts from, and along what
            let st = &model.sites[site];
            assert_eq!(model.mj_body[st.body] as f64, site_body[k]);
            let x = &d.x_0[st.body];
            let pnt = x.r + x.e.transpose() * st.pos;
            let rot: Mat3 = x.e.transpose() * quat_to_mat(&st.quat);
            let vec = rot.column(2).into_owned();
            assert!((pnt - v3(&sx[k])).amax() < 1e-13, "state {s} site {k} xpos");
            let xm = nums(&sm[k]);
            for i in 0..3 {
                for j in 0..3 {
                    assert!((rot[(i, j)] - xm[3 * i + j]).abs() < 1e-13, "state {s} site {k} xmat");
                }
            }
            let filter = RayFilter {
                bodyexclude: Some(model.mj_body[st.body]),
                ..RayFilter::default()
            };
            let ours = ray(&model, &poses, &pnt, &vec, &filter).unwrap();
            let ray_v = &state["rays"][k];
            let reference = theirs(&ray_v[2]);
            let what = format!("quadruped state {s} {}", names[k]);
            compare(
                &model, &poses, &what, &pnt, &vec, ours, reference, &strict, &mut t, &mut bad,
            );
            // the rangefinder sensor reports the same number (-1 for no hit)
            let sensor = nums(&state["sensordata"])[k];
            assert_eq!(ray_v[2][0].as_f64().unwrap(), sensor, "{what}: mj_ray and the sensor");
        }
        for (k, ray_v) in state["torso_rays"].as_array().unwrap().iter().enumerate() {
            let (pnt, vec) = (v3(&ray_v[0]), v3(&ray_v[1]));
            let filter = RayFilter {
                bodyexclude: Some(torso),
                ..RayFilter::default()
            };
            let ours = ray(&model, &poses, &pnt, &vec, &filter).unwrap();
            let what = format!("quadruped state {s} torso ray {k}");
            compare(
                &model,
                &poses,
                &what,
                &pnt,
                &vec,
                ours,
                theirs(&ray_v[2]),
                &strict,
                &mut t,
                &mut bad,
            );
        }
    }
    println!("quadruped: {t:?}");
    assert!(t.hits >= 140, "{t:?}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn bad_rays_are_errors() {
    let model = scene();
    let (_, poses) = poses_at(&model, model.qpos0.as_slice());
    let f = RayFilter::default();
    let p = Vec3::new(0.0, 0.0, 3.0);
    let down = Vec3::new(0.0, 0.0, -1.0);
    assert!(matches!(
        ray(&model, &poses, &Vec3::new(f64::NAN, 0.0, 0.0), &down, &f),
        Err(mbd::Error::NonFinite { .. })
    ));
    assert!(matches!(
        ray(&model, &poses, &p, &Vec3::new(0.0, f64::INFINITY, 0.0), &f),
        Err(mbd::Error::NonFinite { .. })
    ));
    assert!(matches!(
        ray(&model, &poses, &p, &Vec3::zeros(), &f),
        Err(mbd::Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ray(&model, &poses, &p, &(down * 1e-16), &f),
        Err(mbd::Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ray(&model, &poses[1..], &p, &down, &f),
        Err(mbd::Error::BadLength { .. })
    ));
    // a tiny but valid vec: MuJoCo's quadratics (and the bounding spheres tested first) give up
    // when |vec|^2 < mjMINVAL, so the ball is missed and the floor, a plane, is hit, at a
    // distance in units of vec
    let name = |h: &RayHit| model.geoms[h.geom].name.clone();
    let a = ray(&model, &poses, &p, &down, &f).unwrap().unwrap();
    assert_eq!(name(&a), "ball");
    let b = ray(&model, &poses, &p, &(down * 1e-12), &f).unwrap().unwrap();
    assert_eq!(name(&b), "floor");
    assert!((b.dist * 1e-12 - 3.0).abs() < 1e-12);
}

// ---------------------------------------------------------------------------------------------
// independent checks: hit points on the surfaces, surface points hit, invariances

/// How far `p` (geom frame) is from the surface of a primitive, by the shape's own formula
/// (0 on it), and the outward normal there from the formula's gradient.
fn surface(t: GeomType, s: &[f64; 3], p: &Vec3) -> (f64, Vec3) {
    match t {
        GeomType::Plane => (p.z, Vec3::z()),
        GeomType::Sphere => (p.norm() - s[0], p.normalize()),
        GeomType::Capsule => {
            let c = Vec3::new(0.0, 0.0, p.z.clamp(-s[1], s[1]));
            ((p - c).norm() - s[0], (p - c).normalize())
        }
        GeomType::Ellipsoid => {
            let q = Vec3::new(p.x / s[0], p.y / s[1], p.z / s[2]);
            let grad = Vec3::new(q.x / s[0], q.y / s[1], q.z / s[2]);
            // first order: (|q|^2 - 1) / |grad of |q|^2| is the distance to the surface
            ((q.norm_squared() - 1.0) / (2.0 * grad.norm()), grad.normalize())
        }
        GeomType::Cylinder => {
            let rho = (p.x * p.x + p.y * p.y).sqrt();
            let (side, cap) = (rho - s[0], p.z.abs() - s[1]);
            if side > cap {
                (side, Vec3::new(p.x, p.y, 0.0) / rho)
            } else {
                (cap, Vec3::new(0.0, 0.0, p.z.signum()))
            }
        }
        GeomType::Box => {
            let mut best = (f64::NEG_INFINITY, Vec3::zeros());
            for i in 0..3 {
                let d = p[i].abs() - s[i];
                if d > best.0 {
                    let mut n = Vec3::zeros();
                    n[i] = p[i].signum();
                    best = (d, n);
                }
            }
            best
        }
        _ => unreachable!("primitives only"),
    }
}

/// A random primitive: type, size, pose.
fn primitive() -> impl Strategy<Value = (GeomType, [f64; 3], GeomPose)> {
    (
        0usize..5,
        prop::array::uniform3(0.05f64..1.0),
        common::rotation_vector(),
        prop::array::uniform3(-1.0f64..1.0),
    )
        .prop_map(|(k, s, rv, c)| {
            let t = [
                GeomType::Sphere,
                GeomType::Capsule,
                GeomType::Ellipsoid,
                GeomType::Cylinder,
                GeomType::Box,
            ][k];
            let pose = GeomPose {
                pos: Vec3::from(c),
                rot: common::rot(&rv),
            };
            (t, s, pose)
        })
}

fn cast(t: GeomType, s: &[f64; 3], pose: &GeomPose, pnt: &Vec3, vec: &Vec3) -> Option<Hit> {
    let v = Vec3::from(*s);
    match t {
        GeomType::Sphere => ray_sphere(&pose.pos, s[0], pnt, vec),
        GeomType::Capsule => ray_capsule(pose, s[0], s[1], pnt, vec),
        GeomType::Ellipsoid => ray_ellipsoid(pose, &v, pnt, vec),
        GeomType::Cylinder => ray_cylinder(pose, s[0], s[1], pnt, vec),
        GeomType::Box => ray_box(pose, &v, pnt, vec),
        GeomType::Plane => ray_plane(pose, s, pnt, vec),
        _ => unreachable!(),
    }
}

/// A point on the surface of a primitive (geom frame) from three numbers in [0, 1], and its
/// outward normal.
fn surface_point(t: GeomType, s: &[f64; 3], u: [f64; 3]) -> (Vec3, Vec3) {
    use std::f64::consts::PI;
    let (phi, th) = (2.0 * PI * u[0], PI * (0.05 + 0.9 * u[1]));
    let dir = Vec3::new(th.sin() * phi.cos(), th.sin() * phi.sin(), th.cos());
    match t {
        GeomType::Sphere => (dir * s[0], dir),
        GeomType::Capsule => {
            // the side for u[2] < 0.5, else an end cap
            if u[2] < 0.5 {
                let z = s[1] * (4.0 * u[2] - 1.0);
                let n = Vec3::new(phi.cos(), phi.sin(), 0.0);
                (n * s[0] + Vec3::new(0.0, 0.0, z), n)
            } else {
                let sign = if u[2] < 0.75 { 1.0 } else { -1.0 };
                let n = Vec3::new(dir.x, dir.y, sign * dir.z.abs());
                (n * s[0] + Vec3::new(0.0, 0.0, sign * s[1]), n)
            }
        }
        GeomType::Ellipsoid => {
            let p = dir.component_mul(&Vec3::from(*s));
            let n = Vec3::new(p.x / (s[0] * s[0]), p.y / (s[1] * s[1]), p.z / (s[2] * s[2])).normalize();
            (p, n)
        }
        GeomType::Cylinder => {
            if u[2] < 0.5 {
                let n = Vec3::new(phi.cos(), phi.sin(), 0.0);
                (n * s[0] + Vec3::new(0.0, 0.0, s[1] * (4.0 * u[2] - 1.0)), n)
            } else {
                let sign = if u[2] < 0.75 { 1.0 } else { -1.0 };
                let rho = s[0] * u[1].sqrt() * 0.98;
                (
                    Vec3::new(rho * phi.cos(), rho * phi.sin(), sign * s[1]),
                    Vec3::new(0.0, 0.0, sign),
                )
            }
        }
        GeomType::Box => {
            let face = ((u[2] * 6.0) as usize).min(5);
            let (i, sign) = (face / 2, if face.is_multiple_of(2) { -1.0 } else { 1.0 });
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            let mut p = Vec3::zeros();
            p[i] = sign * s[i];
            p[j] = s[j] * (2.0 * u[0] - 1.0) * 0.98;
            p[k] = s[k] * (2.0 * u[1] - 1.0) * 0.98;
            let mut n = Vec3::zeros();
            n[i] = sign;
            (p, n)
        }
        _ => unreachable!(),
    }
}

proptest! {
    #![proptest_config(common::config(400))]

    /// Every hit lies on the surface by the shape's own formula, its normal is that formula's
    /// outward normal, and a ray from outside enters (vec . n <= 0) while one from inside
    /// leaves (vec . n >= 0).
    #[test]
    fn hits_lie_on_the_surface(
        (t, s, pose) in primitive(),
        o in prop::array::uniform3(-2.0f64..2.0),
        dir in common::unit_vector(),
        scale in 0.1f64..10.0,
    ) {
        let pnt = Vec3::from(o);
        let vec = dir * scale;
        let local = |p: &Vec3| pose.rot.transpose() * (p - pose.pos);
        if let Some(h) = cast(t, &s, &pose, &pnt, &vec) {
            prop_assert!(h.dist >= 0.0);
            let p = local(&(pnt + vec * h.dist));
            let (gap, n) = surface(t, &s, &p);
            prop_assert!(gap.abs() < 1e-9, "{t:?}: hit point {gap:e} off the surface");
            prop_assert!((pose.rot * n - h.normal).amax() < 1e-7, "{t:?}: normal {:?} vs {:?}", h.normal, pose.rot * n);
            let inside = surface(t, &s, &local(&pnt)).0 < 0.0;
            let along = vec.dot(&h.normal);
            prop_assert!(if inside { along >= -1e-12 } else { along <= 1e-12 }, "{t:?}: inside {inside}, vec.n {along}");
        } else {
            // a miss from inside is impossible
            prop_assert!(surface(t, &s, &local(&pnt)).0 > -1e-12, "{t:?}: a ray from inside missed");
        }
    }

    /// A point on the surface is hit by a ray aimed at it from outside (from its outer side):
    /// at x = 1 when vec runs from the origin to the point, with the surface's normal there.
    #[test]
    fn surface_points_are_hit_from_outside(
        (t, s, pose) in primitive(),
        u in prop::array::uniform3(0.0f64..1.0),
        away in common::unit_vector(),
        reach in 0.05f64..3.0,
    ) {
        let (p, n) = surface_point(t, &s, u);
        // an origin on the outer side of the tangent plane: the segment to p meets nothing else
        // of a convex shape
        let a = if away.dot(&n) < 0.1 { (away - n * (away.dot(&n) - 0.5)).normalize() } else { away };
        let (pw, nw) = (pose.pos + pose.rot * p, pose.rot * n);
        let origin = pw + pose.rot * a * reach;
        let h = cast(t, &s, &pose, &origin, &(pw - origin));
        prop_assert!(h.is_some(), "{t:?}: a surface point was missed");
        let h = h.unwrap();
        prop_assert!((h.dist - 1.0).abs() < 1e-9, "{t:?}: dist {}", h.dist);
        prop_assert!((h.normal - nw).amax() < 1e-7, "{t:?}: normal {:?} vs {:?}", h.normal, nw);
    }

    /// Scaling vec scales the distance by its inverse, and a rigid motion of shape and ray
    /// moves the normal with it and keeps the distance.
    #[test]
    fn scale_and_rigid_motion_invariance(
        (t, s, pose) in primitive(),
        o in prop::array::uniform3(-2.0f64..2.0),
        dir in common::unit_vector(),
        k in 0.05f64..20.0,
        rv in common::rotation_vector(),
        shift in prop::array::uniform3(-3.0f64..3.0),
    ) {
        let pnt = Vec3::from(o);
        let a = cast(t, &s, &pose, &pnt, &dir);
        let b = cast(t, &s, &pose, &pnt, &(dir * k));
        let (r, c) = (common::rot(&rv), Vec3::from(shift));
        let moved = GeomPose { pos: r * pose.pos + c, rot: r * pose.rot };
        let m = cast(t, &s, &moved, &(r * pnt + c), &(r * dir));
        match (a, b, m) {
            (Some(a), Some(b), Some(m)) => {
                prop_assert!((b.dist * k - a.dist).abs() <= 1e-12 * a.dist.max(1.0));
                prop_assert!((b.normal - a.normal).amax() < 1e-12);
                prop_assert!((m.dist - a.dist).abs() <= 1e-10 * a.dist.max(1.0));
                prop_assert!((m.normal - r * a.normal).amax() < 1e-8);
            }
            (None, None, None) => {}
            // only a grazing ray may change its mind
            _ => {
                let near = |p: Vec3| cast(t, &s, &pose, &p, &dir).is_some();
                let here = a.is_some();
                let flips = (0..6).any(|i| {
                    let mut p = pnt;
                    p[i / 2] += if i % 2 == 0 { 1e-9 } else { -1e-9 };
                    near(p) != here
                });
                prop_assert!(flips, "{t:?}: hit {:?} / scaled {:?} / moved {:?}", a, b, m);
            }
        }
    }
}

/// A 9 x 11 height field with a bump and a ripple, 2 x 1.6 m, 0.3 m high on a 0.1 m base.
fn bump() -> mbd::model::mesh::HField {
    let (nrow, ncol) = (9, 11);
    let mut data = vec![];
    for r in 0..nrow {
        for c in 0..ncol {
            let (x, y) = (c as f64, r as f64);
            data.push(0.5 * (-((x - 5.0).powi(2) + (y - 4.0).powi(2)) / 6.0).exp() + 0.2 + 0.1 * (1.3 * x).sin());
        }
    }
    mbd::model::mesh::HField {
        name: "bump".into(),
        size: [1.0, 0.8, 0.3, 0.1],
        nrow,
        ncol,
        data,
    }
}

/// The height field: a ray straight down onto any point of the grid hits the surface there,
/// at the height of the triangle under it; the normal points up and is the triangle's.
#[test]
fn vertical_rays_on_a_height_field_hit_its_triangles() {
    let h = bump();
    let pose = GeomPose {
        pos: Vec3::new(0.3, -0.2, 0.1),
        rot: common::rot(&Vec3::new(0.1, -0.2, 0.7)),
    };
    let [sx, sy, sz, _] = h.size;
    let (dx, dy) = (2.0 * sx / (h.ncol - 1) as f64, 2.0 * sy / (h.nrow - 1) as f64);
    let mut n = 0;
    for i in 0..40 {
        for j in 0..40 {
            let (x, y) = (
                -sx + 2.0 * sx * (i as f64 + 0.37) / 40.0,
                -sy + 2.0 * sy * (j as f64 + 0.61) / 40.0,
            );
            // the triangle under (x, y): cell (r, c), lower or upper half of its diagonal
            let (c, r) = (((x + sx) / dx).floor() as usize, ((y + sy) / dy).floor() as usize);
            let (fx, fy) = ((x + sx) / dx - c as f64, (y + sy) / dy - r as f64);
            let z = |r: usize, c: usize| h.data[r * h.ncol + c] * sz;
            let height = if fx >= fy {
                z(r, c) + fx * (z(r, c + 1) - z(r, c)) + fy * (z(r + 1, c + 1) - z(r, c + 1))
            } else {
                z(r, c) + fy * (z(r + 1, c) - z(r, c)) + fx * (z(r + 1, c + 1) - z(r + 1, c))
            };
            let top = pose.pos + pose.rot * Vec3::new(x, y, sz + 0.5);
            let down = pose.rot * Vec3::new(0.0, 0.0, -2.0);
            let hit = ray_hfield(&h, &pose, &top, &down).expect("a vertical ray hits the field");
            let local = pose.rot.transpose() * (top + down * hit.dist - pose.pos);
            assert!((local.z - height).abs() < 1e-12, "({x}, {y}): {} vs {height}", local.z);
            assert!((pose.rot.transpose() * hit.normal).z > 0.0);
            n += 1;
        }
    }
    assert_eq!(n, 1600);
}
