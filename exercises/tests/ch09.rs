//! Grader of the exercises of "MuJoCo's com-based quantities" (`src/ch09.rs`):
//! `cargo test -p exercises --test ch09`.

use exercises::ch09;
use exercises::grade::{close, close_all, close_mat, repo_root, run, Check, Exercise, Rng};
use mbd::dynamics::{crba, kinetic_energy};
use mbd::kinematics::forward_kinematics;
use mbd::mjcf;
use mbd::model::{canned, Model};
use mbd::mujoco::{forward_smooth, Data};
use mbd::spatial::{Mat3, Motion, Vec3};
use nalgebra::DMatrix;

fn state(rng: &mut Rng, model: &Model) -> (Vec<f64>, Vec<f64>) {
    let mut q = model.qpos0.as_slice().to_vec();
    let v = rng.vec(model.nv, 1.0);
    model.integrate(&mut q, &v, 1.0).expect("valid");
    (q, rng.vec(model.nv, 1.0))
}

fn panda() -> Result<Model, String> {
    let path = repo_root().join("tests/fixtures/models/panda.xml");
    mjcf::load(&path)
        .map(|l| l.model)
        .map_err(|e| format!("grader: {}: {e}", path.display()))
}

fn cinert_with(rng: &mut Rng, answer: fn(f64, Vec3, Mat3, Mat3, Vec3, Vec3) -> [f64; 10]) -> Check {
    for model in [canned::floating_base_ball_arms(), panda()?] {
        let (q, v) = state(rng, &model);
        let d = forward_smooth(&model, &q, &v).expect("valid state");
        let kin = forward_kinematics(&model, &q).expect("valid state");
        for b in 1..=model.nb {
            let inertia = &model.inertia[b];
            let c = d.subtree_com_fb[d.rootid_fb[b]];
            let got = answer(
                inertia.m,
                inertia.com(),
                inertia.inertia_at_com(),
                kin.rotation(b),
                kin.position(b),
                c,
            );
            let expected = mbd::mujoco::com::inertia_to_mj10(&d.cinert_fb[b]);
            let scale = expected.iter().fold(1e-300_f64, |m, x| m.max(x.abs()));
            close_all(
                &got,
                &expected,
                1e-12 * scale,
                format_args!("'{}' body {b}: cinert against mj_comPos", model.name),
            )?;
        }
    }
    Ok(())
}

fn cinert(rng: &mut Rng) -> Check {
    cinert_with(rng, ch09::exercise_1)
}

fn cdof_with(rng: &mut Rng, answer: fn(&Model, &[f64], Vec3) -> Vec<[f64; 6]>) -> Check {
    for model in [canned::floating_base_ball_arms(), panda()?] {
        let (q, v) = state(rng, &model);
        let d = forward_smooth(&model, &q, &v).expect("valid state");
        let c = d.subtree_com_fb[d.rootid_fb[1]];
        let got = answer(&model, &q, c);
        let scale = d.cdof.iter().map(|m| m.to_vec6().amax()).fold(1.0, f64::max);
        close(
            got.len() as f64,
            model.nv as f64,
            0.0,
            "the number of columns (one per dof)",
        )?;
        for (k, m) in d.cdof.iter().enumerate() {
            close_all(
                &got[k],
                m.to_vec6().as_slice(),
                1e-12 * scale,
                format_args!("'{}' dof {k}: cdof against mj_comPos", model.name),
            )?;
        }
    }
    Ok(())
}

fn cdof(rng: &mut Rng) -> Check {
    cdof_with(rng, ch09::exercise_2)
}

fn sum_over_bodies_with(rng: &mut Rng, answer: fn(&Model, &Data) -> DMatrix<f64>) -> Check {
    let mut floating = canned::floating_base_ball_arms();
    for j in floating.joints.iter_mut().skip(2) {
        j.armature = 0.03;
    }
    for model in [floating, panda()?, canned::binary_tree(4)] {
        let (q, v) = state(rng, &model);
        let d = forward_smooth(&model, &q, &v).expect("valid state");
        let h = crba(&model, &q).expect("valid state");
        close_mat(
            &answer(&model, &d),
            &h,
            1e-12 * h.amax(),
            format_args!("'{}': M against body-frame CRBA", model.name),
        )?;
    }
    Ok(())
}

fn sum_over_bodies(rng: &mut Rng) -> Check {
    sum_over_bodies_with(rng, ch09::exercise_3)
}

fn energy_with(rng: &mut Rng, answer: fn(&Model, &Data) -> f64) -> Check {
    for model in [canned::floating_base_ball_arms(), panda()?, canned::chain(6, true)] {
        let (q, v) = state(rng, &model);
        let d = forward_smooth(&model, &q, &v).expect("valid state");
        let h = crba(&model, &q).expect("valid state");
        let qd = nalgebra::DVector::from_column_slice(&v);
        // H carries armature, which is rotor energy the bodies do not have: take it out.
        let mut t_h = 0.5 * qd.dot(&(&h * &qd));
        for k in 0..model.nv {
            t_h -= 0.5 * model.joints[model.dof_body[k]].armature * v[k] * v[k];
        }
        let t_lib = kinetic_energy(&model, &q, &v).expect("valid state");
        let got = answer(&model, &d);
        close(
            got,
            t_h,
            1e-12 * t_h.abs().max(1.0),
            format_args!("'{}': T against 1/2 qd' H qd", model.name),
        )?;
        close(
            got,
            t_lib,
            1e-12 * t_lib.abs().max(1.0),
            format_args!("'{}': T against kinetic_energy", model.name),
        )?;
    }
    Ok(())
}

fn energy(rng: &mut Rng) -> Check {
    energy_with(rng, ch09::exercise_4)
}

fn cdof_dot_with(rng: &mut Rng, answer: fn([f64; 6], [f64; 6]) -> [f64; 6]) -> Check {
    for model in [canned::floating_base_ball_arms(), panda()?] {
        let (q, v) = state(rng, &model);
        let d = forward_smooth(&model, &q, &v).expect("valid state");
        let c0 = d.subtree_com_fb[d.rootid_fb[1]];
        let h = 1e-5;
        // cdof about the fixed point where the tree's centre of mass is now, along the motion
        let cdof_at = |t: f64| -> Vec<Motion> {
            let mut qt = q.clone();
            model.integrate(&mut qt, &v, t).expect("valid");
            let dt = forward_smooth(&model, &qt, &v).expect("valid state");
            let c = dt.subtree_com_fb[dt.rootid_fb[1]];
            dt.cdof
                .iter()
                .map(|m| Motion::new(m.w, m.v + m.w.cross(&(c0 - c))))
                .collect()
        };
        let (plus, minus) = (cdof_at(h), cdof_at(-h));
        let scale = d.cdof_dot.iter().map(|m| m.to_vec6().amax()).fold(1.0, f64::max);
        for k in 0..model.nv {
            let b = model.dof_body[k];
            if model.joints[b].jtype.nv() != 1 {
                continue;
            }
            let parent = model.lambda[b];
            let cvel = if parent == 0 {
                [0.0; 6]
            } else {
                d.cvel_fb[parent].to_vec6().into()
            };
            let got = answer(cvel, d.cdof[k].to_vec6().into());
            close_all(
                &got,
                d.cdof_dot[k].to_vec6().as_slice(),
                1e-12 * scale,
                format_args!("'{}' dof {k}: cdof_dot against mj_comVel", model.name),
            )?;
            let fd = (plus[k].to_vec6() - minus[k].to_vec6()) / (2.0 * h);
            close_all(
                &got,
                fd.as_slice(),
                1e-7 * scale,
                format_args!(
                    "'{}' dof {k}: cdof_dot against a central difference of cdof",
                    model.name
                ),
            )?;
        }
    }
    Ok(())
}

fn cdof_dot(rng: &mut Rng) -> Check {
    cdof_dot_with(rng, ch09::exercise_5)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch09",
        "MuJoCo's com-based quantities",
        12,
        &[
            Exercise {
                number: 1,
                title: "cinert",
                hint: "R I R^T, then the parallel-axis theorem with d = xipos - c; the last four numbers are m d and m",
                check: cinert,
            },
            Exercise {
                number: 2,
                title: "cdof is a Jacobian column",
                hint: "angular part: the body Jacobian's column rotated to world axes; linear part: the point Jacobian at c (give it c in body coordinates)",
                check: cdof,
            },
            Exercise {
                number: 3,
                title: "The same H a third way",
                hint: "build J_b from cdof of the dofs on the path from b to the base; add armature on the diagonal",
                check: sum_over_bodies,
            },
            Exercise {
                number: 4,
                title: "Kinetic energy",
                hint: "one term per body, 1/2 cvel . (cinert cvel), all in the same frame",
                check: energy,
            },
            Exercise {
                number: 5,
                title: "cdof_dot of a hinge",
                hint: "the motion cross product [w x a; w x b + v x a] for cvel = [w; v], cdof = [a; b]",
                check: cdof_dot,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them, naming what is
/// wrong (run by `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_naming;
    use mbd::kinematics::{body_jacobian, point_jacobian};
    use mbd::spatial::{Mat6, Vec6};

    #[test]
    fn the_inertia_left_in_body_axes_fails() {
        assert!(fails_naming(0..3, "cinert", |rng| cinert_with(
            rng,
            |m, com, i_com, rot, pos, c| {
                let d = pos + rot * com - c;
                // forgot R I R^T: the body-axes inertia used as if it were in world axes
                let ic = i_com + (Mat3::identity() * d.dot(&d) - d * d.transpose()) * m;
                [
                    ic[(0, 0)],
                    ic[(1, 1)],
                    ic[(2, 2)],
                    ic[(0, 1)],
                    ic[(0, 2)],
                    ic[(1, 2)],
                    m * d.x,
                    m * d.y,
                    m * d.z,
                    m,
                ]
            }
        )));
    }

    #[test]
    fn the_linear_part_at_the_body_origin_fails() {
        assert!(fails_naming(0..3, "cdof against", |rng| cdof_with(
            rng,
            |model, q, _c| {
                let kin = forward_kinematics(model, q).expect("valid state");
                (0..model.nv)
                    .map(|k| {
                        let b = model.dof_body[k];
                        // the velocity of the body's origin, not of the body point at c
                        let jp = point_jacobian(model, q, b, &Vec3::zeros()).expect("valid state");
                        let jb = body_jacobian(model, q, b).expect("valid state");
                        let w = kin.rotation(b) * Vec3::new(jb[(0, k)], jb[(1, k)], jb[(2, k)]);
                        [w.x, w.y, w.z, jp[(0, k)], jp[(1, k)], jp[(2, k)]]
                    })
                    .collect()
            }
        )));
    }

    #[test]
    fn the_sum_over_bodies_without_armature_fails() {
        assert!(fails_naming(0..3, "M against", |rng| sum_over_bodies_with(
            rng,
            |model, d| {
                let n = model.nv;
                let mut m = DMatrix::zeros(n, n);
                for b in 1..=model.nb {
                    let inertia: Mat6 = d.cinert_fb[b].to_matrix();
                    let mut jac = DMatrix::zeros(6, n);
                    let mut a = b;
                    while a != 0 {
                        for k in model.dofs(a) {
                            jac.column_mut(k).copy_from(&d.cdof[k].to_vec6());
                        }
                        a = model.lambda[a];
                    }
                    m += jac.transpose() * DMatrix::from_fn(6, 6, |r, s| inertia[(r, s)]) * &jac;
                }
                m // forgot diag(armature)
            }
        )));
    }

    #[test]
    fn the_energy_without_its_half_fails() {
        assert!(fails_naming(0..3, "T against", |rng| energy_with(rng, |model, d| {
            (1..=model.nb)
                .map(|b| {
                    let v: Vec6 = d.cvel_fb[b].to_vec6();
                    v.dot(&(d.cinert_fb[b].to_matrix() * v)) // forgot 1/2
                })
                .sum()
        })));
    }

    #[test]
    fn cdof_dot_without_the_linear_velocity_term_fails() {
        assert!(fails_naming(0..3, "cdof_dot", |rng| cdof_dot_with(
            rng,
            |cvel, cdof| {
                let w = Vec3::new(cvel[0], cvel[1], cvel[2]);
                let (a, b) = (
                    Vec3::new(cdof[0], cdof[1], cdof[2]),
                    Vec3::new(cdof[3], cdof[4], cdof[5]),
                );
                let (top, bottom) = (w.cross(&a), w.cross(&b)); // forgot + v x a
                [top.x, top.y, top.z, bottom.x, bottom.y, bottom.z]
            }
        )));
    }
}
