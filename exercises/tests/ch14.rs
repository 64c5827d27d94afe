//! Grader of the exercises of "The constrained pipeline" (`src/ch14.rs`):
//! `cargo test -p exercises --test ch14`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).
//! The states are MuJoCo's settled states of the fixtures (`tests/fixtures/forward/`), disturbed
//! at random.

use exercises::ch14;
use exercises::grade::{close, ensure, repo_root, run, Check, Exercise, Rng};
use mbd::mjcf;
use mbd::model::{Cone, Model};
use mbd::mujoco::forward::{contact_force, Forward, ForwardData};
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
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them (run by
/// `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_on;

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
}
