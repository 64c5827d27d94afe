//! The collision stage of the constrained pipeline (chapter "The constrained pipeline", section
//! "Collision: once per model, once per call"): the `Collider`'s bounding-sphere filter
//! (MuJoCo's `mj_filterSphere`) drops only pairs the narrow phase would find apart. Against the
//! narrow phase run on every pair of `collision_pairs` with no filter, on every scene of
//! `tests/fixtures/forward` at its settled state and at 40 states around it (positions moved by
//! random velocities over up to 0.3 s, so that bodies pass through each other and leave the
//! floor), the contacts are the same, bitwise and in the same order; the `Forward`'s contacts
//! are the `Collider`'s.

use mbd::collision::{collide_with, Assets, Contact};
use mbd::mjcf;
use mbd::mujoco::collision::{bounding_radius, collide_all, collision_pairs, geom_poses, Collider};
use mbd::mujoco::forward::Forward;
use std::path::Path;

/// The contacts of every pair, no filter: (geoms, contact).
fn unfiltered(model: &mbd::model::Model, d: &mbd::mujoco::Data) -> Vec<([usize; 2], Contact)> {
    let poses = geom_poses(model, d);
    let assets = Assets {
        meshes: &model.meshes,
        hfields: &model.hfields,
    };
    let mut out = vec![];
    // MuJoCo's <flag contact="disable"> (dm_control's cartpole) or constraint="disable": none
    if model.opt.disabled("contact") || model.opt.disabled("constraint") {
        return out;
    }
    for pair in collision_pairs(model) {
        let [g1, g2] = pair.geom;
        let (a, b) = (&model.geoms[g1], &model.geoms[g2]);
        let (margin, gap) = match pair.pair {
            Some(k) => (model.contact_pairs[k].margin, model.contact_pairs[k].gap),
            None => (a.margin + b.margin, a.gap + b.gap),
        };
        let mut found = vec![];
        collide_with(
            &assets,
            (a.gtype, &a.size, &poses[g1]),
            (b.gtype, &b.size, &poses[g2]),
            margin + gap,
            &mut found,
        );
        out.extend(found.into_iter().map(|c| ([g1, g2], c)));
    }
    out
}

#[test]
fn the_bounding_sphere_filter_drops_no_contact() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<_> = std::fs::read_dir(root.join("tests/fixtures/forward"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let n_files = names.len();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut checked, mut filtered_pairs, mut contacts) = (0, 0usize, 0usize);
    for path in names {
        let fx: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let floats = |k: &str| -> Vec<f64> { fx[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
        let (q0, v) = (floats("qpos"), floats("qvel"));
        let model = mjcf::load(root.join(fx["model"].as_str().unwrap())).unwrap().model;
        let zeros = vec![0.0; model.nv];
        let mut fw = Forward::new(&model).unwrap();
        let mut collider = Collider::new(&model).unwrap();
        let mut ours = vec![];
        for k in 0..41 {
            let mut q = q0.clone();
            if k > 0 {
                let u: Vec<f64> = (0..model.nv).map(|_| 2.0 * uniform() - 1.0).collect();
                model.integrate(&mut q, &u, 0.3 * uniform()).unwrap();
            }
            fw.forward(&q, &v, &zeros).unwrap();
            let d = &fw.d.data;
            collider.collide_into(&model, d, &mut ours).unwrap();
            let all = unfiltered(&model, d);
            let name = path.file_stem().unwrap().to_string_lossy();
            assert_eq!(ours.len(), all.len(), "{name} state {k}: contact count");
            for (c, (geom, e)) in ours.iter().zip(&all) {
                assert_eq!(c.geom, *geom, "{name} state {k}");
                assert_eq!((c.pos, c.frame, c.dist), (e.pos, e.frame, e.dist), "{name} state {k}");
            }
            assert_eq!(ours, collide_all(&model, d).unwrap(), "{name} state {k}: collide_all");
            // the pipeline's contacts (their row addresses aside)
            assert!(
                ours.iter().map(|c| (c.geom, c.pos, c.dist)).eq(fw
                    .d
                    .contacts()
                    .iter()
                    .map(|c| (c.geom, c.pos, c.dist))),
                "{name} state {k}: the Forward's contacts"
            );
            checked += 1;
            contacts += all.len();
            // pairs of two solids whose bounding spheres are apart, which the filter drops
            let poses = geom_poses(&model, d);
            filtered_pairs += collider
                .pairs()
                .filter(
                    |&[a, b]| match (bounding_radius(&model, a), bounding_radius(&model, b)) {
                        (Some(ra), Some(rb)) => (poses[a].pos - poses[b].pos).norm() > ra + rb + 1.0,
                        _ => false,
                    },
                )
                .count();
        }
    }
    // the states did put geoms in contact, and the filter had pairs to drop (counted here: only
    // the pairs of solids more than a metre apart)
    assert!(
        checked == n_files * 41 && n_files >= 41 && contacts > 1000 && filtered_pairs > 1000,
        "{checked} states, {contacts} contacts, {filtered_pairs} pairs far apart"
    );
}
