//! Grader of the exercises of "The constraint model" (`src/ch11.rs`):
//! `cargo test -p exercises --test ch11`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).

use exercises::ch11;
use exercises::grade::{close, close_mat, ensure, repo_root, run, Check, Exercise, Rng};
use mbd::mjcf;
use mbd::model::{Cone, Equality, Joint, JointType, Model, ModelBuilder};
use mbd::mujoco::collision::MjContact;
use mbd::mujoco::constraint::limit::ball_angle_axis;
use mbd::mujoco::constraint::{make_constraint, EqData, Invweight};
use mbd::mujoco::forward_smooth;
use mbd::spatial::{Mat3, SpatialInertia, Vec3, Xform};
use nalgebra::{DMatrix, DVector};

fn load(name: &str) -> Result<Model, String> {
    let path = repo_root().join(format!("tests/fixtures/models/{name}.xml"));
    mjcf::load(&path)
        .map(|l| l.model)
        .map_err(|e| format!("grader: {}: {e}", path.display()))
}

fn pyramid_with(rng: &mut Rng, f: fn(&[f64], &[f64; 5], usize) -> Vec<f64>) -> Check {
    let mut model = load("limits_friction")?;
    let q = model.qpos0.as_slice().to_vec();
    let v = vec![0.0; model.nv];
    let d = forward_smooth(&model, &q, &v).map_err(|e| format!("grader: {e}"))?;
    let inv = Invweight::new(&model).map_err(|e| format!("grader: {e}"))?;
    for s in 0..5 {
        // the ball, the rod and the block against the floor, in random frames and dimensions
        let contacts: Vec<MjContact> = [5, 6, 7]
            .iter()
            .map(|&g| {
                let mu = rng.uniform(0.2, 1.2);
                MjContact {
                    geom: [0, g],
                    pos: rng.vec3(0.5),
                    frame: rng.rotation().transpose(),
                    dist: -rng.uniform(0.0, 0.01),
                    dim: [3, 4, 6][rng.int(0, 2)],
                    friction: [
                        mu,
                        mu,
                        rng.uniform(0.001, 0.05),
                        rng.uniform(0.0001, 0.01),
                        rng.uniform(0.0001, 0.01),
                    ],
                    solref: [0.02, 1.0],
                    solreffriction: [0.0; 2],
                    solimp: [0.9, 0.95, 0.001, 0.5, 2.0],
                    margin: 0.0,
                    gap: 0.0,
                    efc_address: None,
                }
            })
            .collect();
        model.opt.cone = Cone::Pyramidal;
        let pyr = make_constraint(&model, &d, &inv, &q, &v, contacts.clone()).map_err(|e| format!("grader: {e}"))?;
        model.opt.cone = Cone::Elliptic;
        let ell = make_constraint(&model, &d, &inv, &q, &v, contacts).map_err(|e| format!("grader: {e}"))?;
        for (k, c) in pyr.contacts.iter().enumerate() {
            let (ap, ae) = (
                c.efc_address.ok_or("grader: no rows")?,
                ell.contacts[k].efc_address.ok_or("grader: no rows")?,
            );
            let ne = 2 * (c.dim - 1);
            let edges = rng.vec(ne, 1.0).iter().map(|x| x.abs()).collect::<Vec<_>>();
            let force = f(&edges, &c.friction, c.dim);
            ensure(
                force.len() == c.dim,
                format_args!(
                    "sample {s}, contact {k}: {} numbers for a contact of dimension {}",
                    force.len(),
                    c.dim
                ),
            )?;
            let jp = pyr.dense_j().rows(ap, ne).transpose() * DVector::from_column_slice(&edges);
            let je = ell.dense_j().rows(ae, c.dim).transpose() * DVector::from_column_slice(&force);
            close_mat(
                &je,
                &jp,
                1e-12 * jp.amax(),
                format_args!(
                    "sample {s}, contact {k} (dimension {}): J_ell^T f against J_pyr^T f_edges",
                    c.dim
                ),
            )?;
        }
    }
    Ok(())
}

fn pyramid_check(rng: &mut Rng) -> Check {
    pyramid_with(rng, ch11::exercise_1)
}

type ConnectFd = fn(&Model, &[f64], usize, &Vec3, usize, &Vec3) -> DMatrix<f64>;

fn connect_with(rng: &mut Rng, f: ConnectFd) -> Check {
    let model = load("fourbar")?;
    let inv = Invweight::new(&model).map_err(|e| format!("grader: {e}"))?;
    let (b1, b2) = match model.equality.first() {
        Some(Equality::Connect { body1, body2, .. }) => (*body1, *body2),
        _ => return Err("grader: fourbar.xml has no connect".into()),
    };
    let Some(EqData::Connect { anchor1, anchor2 }) = inv.eq.first() else {
        return Err("grader: fourbar.xml has no connect".into());
    };
    for s in 0..5 {
        let mut q = model.qpos0.as_slice().to_vec();
        model
            .integrate(&mut q, &rng.vec(model.nv, 0.8), 1.0)
            .map_err(|e| format!("grader: {e}"))?;
        let v = vec![0.0; model.nv];
        let d = forward_smooth(&model, &q, &v).map_err(|e| format!("grader: {e}"))?;
        let efc = make_constraint(&model, &d, &inv, &q, &v, Vec::new()).map_err(|e| format!("grader: {e}"))?;
        let j = efc.dense_j().rows(0, 3).into_owned();
        let fd = f(&model, &q, b1, anchor1, b2, anchor2);
        close_mat(
            &fd,
            &j,
            1e-6 * j.amax(),
            format_args!("state {s}: the difference Jacobian against the connect's rows"),
        )?;
    }
    Ok(())
}

fn connect_check(rng: &mut Rng) -> Check {
    connect_with(rng, ch11::exercise_2)
}

type Limit = fn(f64, f64, f64, f64) -> Vec<(f64, f64)>;

fn limit_with(rng: &mut Rng, f: Limit) -> Check {
    for s in 0..60 {
        let hinge = s % 2 == 0;
        let (lo, hi) = (rng.uniform(-1.0, 0.0), rng.uniform(0.1, 1.0));
        let margin = if s % 3 == 0 { 0.0 } else { rng.uniform(0.0, 0.1) };
        // near one of the two sides, within a margin's reach of it or beyond
        let q = [match s % 3 {
            0 => rng.uniform(lo - 0.2, hi + 0.2),
            1 => lo + rng.uniform(-1.5, 1.5) * margin,
            _ => hi + rng.uniform(-1.5, 1.5) * margin,
        }];
        let axis = rng.unit3();
        let mut b = ModelBuilder::new("limited");
        let mut j = Joint::new(if hinge {
            JointType::Revolute { axis }
        } else {
            JointType::Prismatic { axis }
        });
        j.limited = true;
        j.range = [lo, hi];
        j.margin = margin;
        let inertia = SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::identity());
        b.add_body("s", 0, j, Xform::identity(), inertia);
        let model = b.build().map_err(|e| format!("grader: {e}"))?;
        let inv = Invweight::new(&model).map_err(|e| format!("grader: {e}"))?;
        let d = forward_smooth(&model, &q, &[0.0]).map_err(|e| format!("grader: {e}"))?;
        let efc = make_constraint(&model, &d, &inv, &q, &[0.0], Vec::new()).map_err(|e| format!("grader: {e}"))?;
        let ours = f(q[0], lo, hi, margin);
        let what = if hinge { "hinge" } else { "slide" };
        ensure(
            ours.len() == efc.nefc(),
            format_args!("sample {s} ({what}): the number of active rows"),
        )?;
        for (i, (dist, jac)) in ours.iter().enumerate() {
            close(
                *dist,
                efc.pos[i],
                1e-14,
                format_args!("sample {s} ({what}): row {i}'s distance"),
            )?;
            close(
                *jac,
                efc.dense_j()[(i, 0)],
                1e-14,
                format_args!("sample {s} ({what}): row {i}'s Jacobian"),
            )?;
        }
    }
    Ok(())
}

fn limit_check(rng: &mut Rng) -> Check {
    limit_with(rng, ch11::exercise_3)
}

fn ball_with(rng: &mut Rng, f: fn(&[f64; 4]) -> f64) -> Check {
    for s in 0..200 {
        let q = rng.quat();
        let q = if s % 2 == 0 { q } else { q.map(|x| -x) };
        let (theta, _) = ball_angle_axis(&q);
        close(
            f(&q),
            theta,
            1e-7,
            format_args!("quaternion {s}: the angle against the library's"),
        )?;
    }
    Ok(())
}

fn ball_check(rng: &mut Rng) -> Check {
    ball_with(rng, ch11::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch11",
        "The constraint model",
        11,
        &[
            Exercise {
                number: 1,
                title: "Decode a pyramid",
                hint: "every edge S0 +- mu_k S_k has the full normal component; the tangential component k is mu_k times the difference of its pair",
                check: pyramid_check,
            },
            Exercise {
                number: 2,
                title: "Connect by finite differences",
                hint: "central differences (r(q + h e_k) - r(q - h e_k)) / 2h, through Model::integrate, with h about 1e-6; residual p1 - p2, in that order",
                check: connect_check,
            },
            Exercise {
                number: 3,
                title: "A limit by hand",
                hint: "distances q - lo (Jacobian +1) and hi - q (Jacobian -1), each kept when below the margin, the lower side first",
                check: limit_check,
            },
            Exercise {
                number: 4,
                title: "A ball joint's angle",
                hint: "q and -q are the same rotation: use |w|",
                check: ball_check,
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
    fn edges_without_the_friction_coefficients_fail() {
        assert!(fails_on(0..3, |rng| pyramid_with(rng, |edges, _friction, dim| {
            let mut out = vec![edges.iter().sum()];
            out.extend((1..dim).map(|k| edges[2 * k - 2] - edges[2 * k - 1]));
            out
        })));
    }

    #[test]
    fn the_residual_the_wrong_way_round_fails() {
        assert!(fails_on(0..3, |rng| connect_with(rng, |model, q, b1, a1, b2, a2| {
            let h = 1e-6;
            let r = |q: &[f64]| {
                let kin = mbd::kinematics::forward_kinematics(model, q).unwrap();
                kin.point(b2, a2) - kin.point(b1, a1)
            };
            DMatrix::from_fn(3, model.nv, |row, k| {
                let (mut qp, mut qm) = (q.to_vec(), q.to_vec());
                qp[k] += h;
                qm[k] -= h;
                (r(&qp)[row] - r(&qm)[row]) / (2.0 * h)
            })
        })));
    }

    #[test]
    fn a_limit_without_its_margin_fails() {
        assert!(fails_on(0..3, |rng| limit_with(rng, |q, lo, hi, _margin| {
            [(q - lo, 1.0), (hi - q, -1.0)]
                .into_iter()
                .filter(|(d, _)| *d < 0.0)
                .collect()
        })));
    }

    #[test]
    fn an_angle_of_the_signed_w_fails() {
        assert!(fails_on(0..3, |rng| ball_with(rng, |q| 2.0 * q[0].clamp(-1.0, 1.0).acos())));
    }
}
