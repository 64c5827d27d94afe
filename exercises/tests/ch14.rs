//! Grader of the exercises of "The constrained pipeline" (`src/ch14.rs`):
//! `cargo test -p exercises --test ch14`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).
//! The states are MuJoCo's settled states of the fixtures (`tests/fixtures/forward/`), disturbed
//! at random, and `tests/fixtures/models/sensors.xml` at random velocities.

use exercises::ch14;
use exercises::grade::{close, ensure, repo_root, run, Check, Exercise, Rng};
use mbd::mjcf;
use mbd::model::{Cone, Equality, Model, Sensor, SensorFrame, SensorKind, TendonKind};
use mbd::mujoco::constraint::EfcType;
use mbd::mujoco::forward::{contact_force, Forward, ForwardData};
use mbd::mujoco::sensor::{frame_pose, PostConstraint};
use mbd::mujoco::solver::mul_m;
use serde::Deserialize;

#[derive(Deserialize)]
struct Settled {
    model: String,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
}

/// A fixture's model and MuJoCo's settled state.
fn settled(name: &str) -> Result<(Model, Vec<f64>, Vec<f64>), String> {
    let root = repo_root();
    let path = root.join(format!("tests/fixtures/forward/{name}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("grader: {}: {e}", path.display()))?;
    let s: Settled = serde_json::from_str(&text).map_err(|e| format!("grader: {}: {e}", path.display()))?;
    let model = mjcf::load(root.join(&s.model))
        .map_err(|e| format!("grader: {}: {e}", s.model))?
        .model;
    Ok((model, s.qpos, s.qvel))
}

const SCENES: [&str; 4] = ["box_stack", "box_incline", "ant", "quadruped"];

/// A random scene at its settled state, velocities disturbed by up to `shake`, random applied
/// forces of size up to `push`, the cone `cone`.
struct Scene {
    name: &'static str,
    model: Model,
    q: Vec<f64>,
    v: Vec<f64>,
    applied: Vec<f64>,
}

fn scene(rng: &mut Rng, cone: Cone, shake: f64, push: f64) -> Result<Scene, String> {
    let name = SCENES[rng.int(0, SCENES.len() - 1)];
    let (mut model, q, v) = settled(name)?;
    model.opt.cone = cone;
    let v = v.iter().map(|x| x + rng.uniform(-shake, shake)).collect();
    let applied = rng.vec(model.nv, push);
    Ok(Scene {
        name,
        model,
        q,
        v,
        applied,
    })
}

/// The forward pass of a scene, solved tightly.
fn pass(s: &Scene) -> Result<Forward<'_>, String> {
    let mut fw = Forward::new(&s.model).map_err(|e| format!("grader: {e}"))?;
    fw.options.tolerance = 1e-12;
    fw.options.iterations = 1000;
    fw.forward(&s.q, &s.v, &s.applied)
        .map_err(|e| format!("grader: {}: {e}", s.name))?;
    Ok(fw)
}

fn inverse_with(rng: &mut Rng, f: fn(&Model, &ForwardData) -> Vec<f64>) -> Check {
    for s in 0..4 {
        let cone = if s % 2 == 0 { Cone::Pyramidal } else { Cone::Elliptic };
        let sc = scene(rng, cone, 0.2, 2.0)?;
        let fw = pass(&sc)?;
        let (name, model, d) = (sc.name, &sc.model, &fw.d);
        let ours = f(model, d);
        ensure(
            ours.len() == model.nv,
            format_args!("{name}: {} numbers for {} dofs", ours.len(), model.nv),
        )?;
        // the library's pieces: M qacc by the sparse product, and qfrc_constraint = J^T f
        let mut ma = vec![0.0; model.nv];
        mul_m(model.mj_layout(), &d.data.qm, &d.qacc, &mut ma);
        let scale = ma.iter().chain(&d.data.qfrc_bias).fold(1.0f64, |a, x| a.max(x.abs()));
        for k in 0..model.nv {
            let want = ma[k] + d.data.qfrc_bias[k] - d.qfrc_passive[k] - d.qfrc_constraint[k];
            close(
                ours[k],
                want,
                1e-10 * scale,
                format_args!("{name} ({cone} cones), dof {k}: against the library's M qacc + c - passive - constraint"),
            )?;
            // and the forward pass read backwards: the applied and actuator forces come back
            // (to the solver's convergence, tight for pyramidal cones)
            if cone == Cone::Pyramidal {
                close(
                    ours[k],
                    sc.applied[k] + d.qfrc_actuator[k],
                    1e-8 * scale,
                    format_args!("{name} (pyramidal cones), dof {k}: against the applied plus actuator forces"),
                )?;
            }
        }
    }
    Ok(())
}

fn inverse_check(rng: &mut Rng) -> Check {
    inverse_with(rng, ch14::exercise_1)
}

fn world_force_with(rng: &mut Rng, f: fn(&ForwardData, usize) -> [f64; 3]) -> Check {
    // first the box stack at rest: the floor carries the weight; then disturbed random scenes
    for s in 0..5 {
        let cone = if rng.uniform(0.0, 1.0) < 0.5 {
            Cone::Pyramidal
        } else {
            Cone::Elliptic
        };
        let sc = if s < 2 {
            let (mut model, q, v) = settled("box_stack")?;
            model.opt.cone = if s == 0 { Cone::Pyramidal } else { Cone::Elliptic };
            let applied = vec![0.0; model.nv];
            Scene {
                name: "box_stack",
                model,
                q,
                v,
                applied,
            }
        } else {
            scene(rng, cone, 0.5, 2.0)?
        };
        let fw = pass(&sc)?;
        let (name, model, d) = (sc.name, &sc.model, &fw.d);
        let cone = model.opt.cone;
        ensure(!d.contacts().is_empty(), format_args!("grader: {name}: no contacts"))?;
        let scale = d.efc_force.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        let mut up = 0.0;
        for k in 0..d.contacts().len() {
            let ours = f(d, k);
            let lib = contact_force(d, k);
            let c = &d.contacts()[k];
            for x in 0..3 {
                let want: f64 = (0..3).map(|r| c.frame[(r, x)] * lib[r]).sum();
                close(
                    ours[x],
                    want,
                    1e-9 * scale,
                    format_args!("{name} ({cone} cones), contact {k}: world component {x} against mj_contactForce's"),
                )?;
            }
            if c.geom[0] == 0 {
                up += ours[2];
            }
        }
        if s < 2 {
            // at rest (MuJoCo's settled state) the floor carries the stack's weight, up to the
            // residual vertical accelerations of the three unit-mass boxes
            let weight = (1..=model.nb).map(|i| model.inertia[i].m).sum::<f64>() * model.opt.gravity.norm();
            let residual: f64 = (0..3).map(|b| d.qacc[6 * b + 2]).sum();
            close(
                up,
                weight + residual,
                1e-6 * weight,
                format_args!("box stack ({cone} cones): the floor's vertical force against the weight"),
            )?;
        }
    }
    Ok(())
}

fn world_force_check(rng: &mut Rng) -> Check {
    world_force_with(rng, ch14::exercise_2)
}

fn cone_with(rng: &mut Rng, f: fn(&ForwardData) -> f64) -> Check {
    for s in 0..4 {
        // disturbed enough that some contacts slide (their force on the cone's surface)
        let sc = scene(rng, Cone::Elliptic, 1.0, 5.0)?;
        let fw = pass(&sc)?;
        let (name, d) = (sc.name, &fw.d);
        let mut worst = f64::NEG_INFINITY;
        for (k, c) in d.contacts().iter().enumerate() {
            if c.dim >= 3 && c.efc_address.is_some() {
                let cf = contact_force(d, k);
                worst = worst.max((cf[1] * cf[1] + cf[2] * cf[2]).sqrt() - c.friction[0] * cf[0]);
            }
        }
        let scale = d.efc_force.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        let ours = f(d);
        if worst == f64::NEG_INFINITY {
            ensure(
                ours == worst,
                format_args!("sample {s} ({name}): no contact, so negative infinity"),
            )?;
            continue;
        }
        close(
            ours,
            worst,
            1e-9 * scale,
            format_args!("sample {s} ({name}): the largest cone violation"),
        )?;
        ensure(
            ours <= 1e-9 * scale,
            format_args!("sample {s} ({name}): a force outside its cone (check how you read the rows)"),
        )?;
    }
    Ok(())
}

fn cone_check(rng: &mut Rng) -> Check {
    cone_with(rng, ch14::exercise_3)
}

/// An accelerometer's reading at a site from a forward pass and its `mj_rnePostConstraint`.
type Accelerometer = fn(&Model, &ForwardData, &PostConstraint, usize) -> [f64; 3];
/// The force a dof's joint carries, from the same.
type Carried = fn(&Model, &ForwardData, &PostConstraint, usize) -> f64;

/// A static site and a free body in the air with a site off its centre of mass, both at random
/// orientations (the independent check of exercise 4).
fn falling_box_xml(rng: &mut Rng) -> String {
    let mut e = || {
        format!(
            "{:?} {:?} {:?}",
            rng.uniform(-90.0, 90.0),
            rng.uniform(-90.0, 90.0),
            rng.uniform(-90.0, 90.0)
        )
    };
    let (fixed, imu) = (e(), e());
    let pos = rng.vec3(0.1);
    format!(
        r#"<mujoco><worldbody>
  <site name="fixed" pos="0.2 -0.1 0.3" euler="{fixed}"/>
  <body name="falling" pos="0 0 5"><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/>
    <site name="imu" pos="{:?} {:?} {:?}" euler="{imu}"/></body>
</worldbody></mujoco>"#,
        pos.x, pos.y, pos.z
    )
}

/// Settled corpus scenes with sites (their models load with `mbd::mjcf::load`).
const SITE_SCENES: [&str; 5] = ["dmc_humanoid", "quadruped", "manipulator", "stacker", "humanoid_CMU"];

/// The model with its sensors replaced by an accelerometer on each site, in site order.
fn with_accelerometers(model: &Model) -> Model {
    let mut m = model.clone();
    m.sensors = (0..m.sites.len())
        .map(|s| Sensor {
            name: format!("acc_{s}"),
            kind: SensorKind::Accelerometer(s),
            cutoff: 0.0,
            noise: 0.0,
        })
        .collect();
    m
}

/// A forward pass at `(q, v)` with random controls, solved tightly, and its
/// `mj_rnePostConstraint`.
fn pass_post<'m>(
    rng: &mut Rng,
    name: &str,
    model: &'m Model,
    q: &[f64],
    v: &[f64],
    applied: &[f64],
) -> Result<(Forward<'m>, PostConstraint), String> {
    let mut fw = Forward::new(model).map_err(|e| format!("grader: {name}: {e}"))?;
    fw.options.tolerance = 1e-12;
    fw.options.iterations = 1000;
    for c in fw.ctrl.iter_mut() {
        *c = rng.uniform(-1.0, 1.0);
    }
    fw.forward(q, v, applied).map_err(|e| format!("grader: {name}: {e}"))?;
    let post = fw.rne_post_constraint(q, v).clone();
    Ok((fw, post))
}

fn accelerometer_with(rng: &mut Rng, f: Accelerometer) -> Check {
    // independently first: a site on the world at rest reads +g upwards, whatever the gravity's
    // direction, and a site on a free body without spin, in the air, reads zero
    for s in 0..3 {
        let mut model = mbd::mjcf::load_str(&falling_box_xml(rng))
            .map_err(|e| format!("grader: {e}"))?
            .model;
        if s > 0 {
            model.opt.gravity = rng.unit3() * rng.uniform(3.0, 15.0);
        }
        let g = model.opt.gravity;
        let mut q = model.qpos0.as_slice().to_vec();
        q[3..7].copy_from_slice(&rng.quat());
        let mut v = vec![0.0; 6];
        v[..3].copy_from_slice(rng.vec3(2.0).as_slice());
        let (fw, post) = pass_post(rng, "falling box", &model, &q, &v, &[0.0; 6])?;
        ensure(fw.d.contacts().is_empty(), "grader: the falling box touches something")?;
        let (_, r, _) = frame_pose(&model, &fw.d.data, SensorFrame::Site(0));
        let up = r.tr_mul(&-g);
        let (at_rest, falling) = (f(&model, &fw.d, &post, 0), f(&model, &fw.d, &post, 1));
        for x in 0..3 {
            close(
                at_rest[x],
                up[x],
                1e-10 * g.norm(),
                format_args!("sample {s}, a site on the world at rest: the accelerometer, component {x}, against +g upwards in the site's frame"),
            )?;
        }
        for x in 0..3 {
            close(
                falling[x],
                0.0,
                1e-10 * g.norm(),
                format_args!("sample {s}, a free body without spin in the air: the accelerometer, component {x}, against zero (free fall)"),
            )?;
        }
    }
    // then against sensors_into's accelerometers: sensors.xml, then settled corpus scenes
    for s in 0..5 {
        let (name, model, q, v) = if s == 0 {
            let path = repo_root().join("tests/fixtures/models/sensors.xml");
            let model = mbd::mujoco::load(&path)
                .map_err(|e| format!("grader: {}: {e}", path.display()))?
                .model;
            let q = model.qpos0.as_slice().to_vec();
            let v = rng.vec(model.nv, 1.5);
            ("sensors", model, q, v)
        } else {
            let name = SITE_SCENES[rng.int(0, SITE_SCENES.len() - 1)];
            let (model, q, v) = settled(name)?;
            let v = v.iter().map(|x| x + rng.uniform(-1.0, 1.0)).collect();
            (name, model, q, v)
        };
        let model = with_accelerometers(&model);
        ensure(!model.sites.is_empty(), format_args!("grader: {name} has no site"))?;
        let applied = vec![0.0; model.nv];
        let (fw, post) = pass_post(rng, name, &model, &q, &v, &applied)?;
        let want = &fw.d.sensordata;
        ensure(
            want.len() == 3 * model.sites.len(),
            format_args!("grader: {name}: the accelerometers were not evaluated"),
        )?;
        let scale = want.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        for site in 0..model.sites.len() {
            let ours = f(&model, &fw.d, &post, site);
            for x in 0..3 {
                close(
                    ours[x],
                    want[3 * site + x],
                    1e-10 * scale,
                    format_args!(
                        "{name}, site {site} ('{}'): the accelerometer, component {x}, against sensors_into's",
                        model.sites[site].name
                    ),
                )?;
            }
        }
    }
    Ok(())
}

fn accelerometer_check(rng: &mut Rng) -> Check {
    accelerometer_with(rng, ch14::exercise_4)
}

/// The dm_control humanoid and quadruped: fixed tendons only, so every row acts either on
/// bodies (contacts) or on joints alone.
const JOINT_SCENES: [&str; 2] = ["dmc_humanoid", "quadruped"];

/// `J^T f` of the rows that act on the joints themselves: limits and friction of dofs and of
/// fixed tendons, joint and tendon couplings; not contacts, connects and welds, which act on
/// bodies (and spatial tendons, which the scenes do not have).
fn joint_rows(model: &Model, d: &ForwardData) -> Vec<f64> {
    let mut out = vec![0.0; model.nv];
    for i in 0..d.efc.efc_type.len() {
        let on_bodies = match d.efc.efc_type[i] {
            EfcType::ContactFrictionless | EfcType::ContactPyramidal | EfcType::ContactElliptic => true,
            EfcType::Equality => matches!(
                model.equality[d.efc.efc_id[i]],
                Equality::Connect { .. } | Equality::Weld { .. }
            ),
            _ => false,
        };
        if !on_bodies {
            let (cols, vals) = d.efc.j.row(i);
            for (&col, &val) in cols.iter().zip(vals) {
                out[col] += val * d.efc_force[i];
            }
        }
    }
    out
}

fn carried_with(rng: &mut Rng, f: Carried) -> Check {
    for s in 0..4 {
        let name = JOINT_SCENES[s % 2];
        let (model, q, v) = settled(name)?;
        ensure(
            model.tendons.iter().all(|t| matches!(t.kind, TendonKind::Fixed { .. })),
            format_args!("grader: {name} has a spatial tendon"),
        )?;
        let v: Vec<f64> = v.iter().map(|x| x + rng.uniform(-1.0, 1.0)).collect();
        let applied = rng.vec(model.nv, 2.0);
        let (fw, post) = pass_post(rng, name, &model, &q, &v, &applied)?;
        let d = &fw.d;
        ensure(!d.contacts().is_empty(), format_args!("grader: {name}: no contacts"))?;
        // what the joint carries, from the rows' Jacobians (not from the recursion)
        let rows = joint_rows(&model, d);
        let armature = model.dof_armature();
        let scale = d
            .qfrc_constraint
            .iter()
            .chain(&d.data.qfrc_bias)
            .fold(1.0f64, |a, x| a.max(x.abs()));
        for dof in 0..model.nv {
            let want = d.qfrc_applied[dof] + d.qfrc_actuator[dof] + d.qfrc_passive[dof] + rows[dof]
                - armature[dof] * d.qacc[dof];
            close(
                f(&model, d, &post, dof),
                want,
                1e-10 * scale,
                format_args!(
                    "{name}, sample {s}, dof {dof}: against what the joint carries (applied + actuator + passive + its rows - armature qacc)"
                ),
            )?;
        }
    }
    Ok(())
}

fn carried_check(rng: &mut Rng) -> Check {
    carried_with(rng, ch14::exercise_5)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch14",
        "The constrained pipeline",
        14,
        &[
            Exercise {
                number: 1,
                title: "Inverse dynamics by hand",
                hint: "M = model.mj_layout().to_dense(&d.data.qm); then M qacc + qfrc_bias - qfrc_passive - J^T efc_force, row by row",
                check: inverse_check,
            },
            Exercise {
                number: 2,
                title: "Contacts carry the weight",
                hint: "pyramidal: f_n is the sum of the edges, f_j = mu_j (f_2j - f_2j+1); the frame's rows are the directions, so world = frame^T local",
                check: world_force_check,
            },
            Exercise {
                number: 3,
                title: "Inside the cone",
                hint: "an elliptic contact's first three rows are f_n, f_1, f_2 in its frame; mu is friction[0]",
                check: cone_check,
            },
            Exercise {
                number: 4,
                title: "An accelerometer by hand",
                hint: "c = d.data.subtree_com_fb[d.data.rootid_fb[b]]; a spatial vector [w; v] at c moves to p as v + w x (p - c), cacc and cvel alike; read R^T (a_p + w x v_p), gravity is already in cacc",
                check: accelerometer_check,
            },
            Exercise {
                number: 5,
                title: "What the joint carries",
                hint: "d.data.cdof[dof].dot(&post.cfrc_int[model.dof_body[dof]]): cfrc_int, not cfrc_ext, and the subtree's sum it holds, not the body's own force",
                check: carried_check,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them (run by
/// `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::{fails_naming, fails_on};
    use mbd::spatial::Vec3;

    #[test]
    fn inverse_dynamics_without_the_constraint_forces_fails() {
        assert!(fails_on(0..3, |rng| inverse_with(rng, |model, d| {
            let m = model.mj_layout().to_dense(&d.data.qm);
            (0..model.nv)
                .map(|r| {
                    (0..model.nv).map(|c| m[(r, c)] * d.qacc[c]).sum::<f64>() + d.data.qfrc_bias[r] - d.qfrc_passive[r]
                })
                .collect()
        })));
    }

    #[test]
    fn the_frame_not_transposed_fails() {
        assert!(fails_on(0..3, |rng| world_force_with(rng, |d, k| {
            let lib = contact_force(d, k);
            let c = &d.contacts()[k];
            std::array::from_fn(|x| (0..3).map(|r| c.frame[(x, r)] * lib[r]).sum())
        })));
    }

    #[test]
    fn squared_tangential_forces_fail() {
        assert!(fails_on(0..3, |rng| cone_with(rng, |d| {
            d.contacts()
                .iter()
                .enumerate()
                .filter(|(_, c)| c.dim >= 3 && c.efc_address.is_some())
                .map(|(k, c)| {
                    let f = contact_force(d, k);
                    f[1] * f[1] + f[2] * f[2] - c.friction[0] * f[0]
                })
                .fold(f64::NEG_INFINITY, f64::max)
        })));
    }

    #[test]
    fn forgetting_omega_cross_v_fails() {
        // cacc moved to the site: dv/dt of the spatial velocity, not the point's acceleration
        assert!(fails_naming(0..3, "the accelerometer", |rng| accelerometer_with(
            rng,
            |model, d, post, site| {
                let (p, r, b) = frame_pose(model, &d.data, SensorFrame::Site(site));
                let offset = p - d.data.subtree_com_fb[d.data.rootid_fb[b]];
                let a = &post.cacc[b];
                let local = r.tr_mul(&(a.v + a.w.cross(&offset)));
                [local.x, local.y, local.z]
            }
        )));
    }

    #[test]
    fn cacc_left_at_the_centre_of_mass_fails() {
        // w x v added, but cacc read at the tree's centre of mass, not moved to the site
        assert!(fails_naming(0..3, "the accelerometer", |rng| accelerometer_with(
            rng,
            |model, d, post, site| {
                let (p, r, b) = frame_pose(model, &d.data, SensorFrame::Site(site));
                let offset = p - d.data.subtree_com_fb[d.data.rootid_fb[b]];
                let (a, v) = (&post.cacc[b], &d.data.cvel_fb[b]);
                let v_p = v.v + v.w.cross(&offset);
                let local = r.tr_mul(&(a.v + v.w.cross(&v_p)));
                [local.x, local.y, local.z]
            }
        )));
    }

    #[test]
    fn gravity_subtracted_twice_fails() {
        // the right point acceleration, then "proper acceleration = a - g" once more: 2g at rest
        assert!(fails_naming(0..3, "+g upwards", |rng| accelerometer_with(
            rng,
            |model, d, post, site| {
                let (p, r, b) = frame_pose(model, &d.data, SensorFrame::Site(site));
                let offset = p - d.data.subtree_com_fb[d.data.rootid_fb[b]];
                let (a, v) = (&post.cacc[b], &d.data.cvel_fb[b]);
                let v_p = v.v + v.w.cross(&offset);
                let a_p: Vec3 = a.v + a.w.cross(&offset) + v.w.cross(&v_p) - model.opt.gravity;
                let local = r.tr_mul(&a_p);
                [local.x, local.y, local.z]
            }
        )));
    }

    #[test]
    fn cfrc_ext_instead_of_cfrc_int_fails() {
        assert!(fails_naming(0..3, "what the joint carries", |rng| carried_with(
            rng,
            |model, d, post, dof| d.data.cdof[dof].dot(&post.cfrc_ext[model.dof_body[dof]])
        )));
    }

    #[test]
    fn the_bodys_own_force_without_its_children_fails() {
        // I a + v x* I v of the dof's body alone: neither its descendants nor the world's wrench
        assert!(fails_naming(0..3, "what the joint carries", |rng| carried_with(
            rng,
            |model, d, post, dof| {
                let b = model.dof_body[dof];
                let (inertia, v) = (&d.data.cinert_fb[b], &d.data.cvel_fb[b]);
                let own = inertia.mul_motion(&post.cacc[b]) + v.cross_force(&inertia.mul_motion(v));
                d.data.cdof[dof].dot(&own)
            }
        )));
    }
}
