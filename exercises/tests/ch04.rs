//! Grader of the exercises of "The composite-rigid-body algorithm" (`src/ch04.rs`):
//! `cargo test -p exercises --test ch04`.

use exercises::ch04;
use exercises::grade::{close, close_mat, ensure, run, Check, Exercise, Rng};
use mbd::dynamics::crba;
use mbd::kinematics::supports;
use mbd::model::{canned, Joint, Model, ModelBuilder};
use mbd::spatial::{xlt, Mat3, SpatialInertia, Vec3};
use nalgebra::DMatrix;

/// A random tree with generic geometry (no symmetry, so every allowed entry of H is nonzero).
fn generic_tree(rng: &mut Rng, nb: usize) -> Model {
    let mut b = ModelBuilder::new("generic tree");
    for i in 1..=nb {
        let parent = if i == 1 { 0 } else { rng.int(0, i - 1) };
        let (x, y, z) = (rng.uniform(0.05, 0.3), rng.uniform(0.05, 0.3), rng.uniform(0.05, 0.3));
        let m = rng.uniform(0.5, 2.0);
        let d = Mat3::from_diagonal(&Vec3::new(y * y + z * z, x * x + z * z, x * x + y * y)) * (m / 12.0);
        let r = rng.rotation();
        b.add_body(
            &format!("b{i}"),
            parent,
            Joint::revolute(rng.unit3()),
            xlt(rng.vec3(0.3)),
            SpatialInertia::from_mass_com_inertia(m, rng.vec3(0.2), r * d * r.transpose()),
        );
    }
    b.build().expect("valid model")
}

fn random_q(rng: &mut Rng, model: &Model) -> Vec<f64> {
    let mut q = model.qpos0.as_slice().to_vec();
    let v = rng.vec(model.nv, 1.5);
    model.integrate(&mut q, &v, 1.0).expect("valid");
    q
}

fn h_by_columns_with(rng: &mut Rng, answer: fn(&Model, &[f64]) -> DMatrix<f64>) -> Check {
    let mut floating = canned::floating_base_ball_arms();
    for j in floating.joints.iter_mut() {
        j.armature = 0.05;
    }
    let nb = rng.int(5, 10);
    for model in [canned::chain(7, true), generic_tree(rng, nb), floating] {
        for s in 0..2 {
            let q = random_q(rng, &model);
            let expected = crba(&model, &q).expect("valid state");
            close_mat(
                &answer(&model, &q),
                &expected,
                1e-12 * expected.amax().max(1.0),
                format_args!("model '{}', configuration {s}: against CRBA", model.name),
            )?;
        }
    }
    Ok(())
}

fn h_by_columns(rng: &mut Rng) -> Check {
    h_by_columns_with(rng, ch04::exercise_1)
}

fn parallel_axis_with(rng: &mut Rng, answer: fn([f64; 3]) -> f64) -> Check {
    let model = canned::chain(3, false);
    for s in 0..10 {
        let q = [rng.uniform(-3.2, 3.2), rng.uniform(-3.2, 3.2), rng.uniform(-3.2, 3.2)];
        let h = crba(&model, &q).expect("valid state");
        close(
            answer(q),
            h[(0, 0)],
            1e-12,
            format_args!("configuration {s}: against CRBA's H_11"),
        )?;
    }
    Ok(())
}

fn parallel_axis(rng: &mut Rng) -> Check {
    parallel_axis_with(rng, ch04::exercise_2)
}

fn sparsity_with(rng: &mut Rng, answer: fn(&[usize]) -> Vec<Vec<bool>>) -> Check {
    let mut models = vec![canned::chain(6, true)];
    for _ in 0..4 {
        let nb = rng.int(4, 12);
        models.push(generic_tree(rng, nb));
    }
    for (s, model) in models.iter().enumerate() {
        let q = random_q(rng, model);
        let h = crba(model, &q).expect("valid state");
        let pattern = answer(&model.lambda);
        ensure(
            pattern.len() == model.nb && pattern.iter().all(|r| r.len() == model.nb),
            format_args!("model {s}: the pattern should be {} x {}", model.nb, model.nb),
        )?;
        for i in 0..model.nb {
            for j in 0..model.nb {
                if pattern[i][j] {
                    ensure(
                        h[(i, j)].abs() > 1e-9 * h.amax(),
                        format_args!("model {s}: your pattern allows H[{i}][{j}], which is zero"),
                    )?;
                } else {
                    ensure(
                        h[(i, j)] == 0.0,
                        format_args!("model {s}: your pattern forbids H[{i}][{j}], which is nonzero"),
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn sparsity(rng: &mut Rng) -> Check {
    sparsity_with(rng, ch04::exercise_3)
}

fn counting_with(_rng: &mut Rng, answer: fn(u32) -> usize) -> Check {
    for depth in 1..=8u32 {
        let model = canned::binary_tree(depth as usize);
        let mut count = 0;
        for i in 1..=model.nb {
            for j in 1..=model.nb {
                if supports(&model, i, j) || supports(&model, j, i) {
                    count += 1;
                }
            }
        }
        ensure(
            answer(depth) == count,
            format_args!("depth {depth}: the count differs from the supporting pairs of binary_tree({depth})"),
        )?;
    }
    Ok(())
}

fn counting(rng: &mut Rng) -> Check {
    counting_with(rng, ch04::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch04",
        "The composite-rigid-body algorithm",
        6,
        &[
            Exercise {
                number: 1,
                title: "H by inverse dynamics",
                hint: "with gravity off and qdot = 0, rnea(q, 0, e_j) is column j of H",
                check: h_by_columns,
            },
            Exercise {
                number: 2,
                title: "The parallel-axis theorem",
                hint: "sum m l^2/12 + m d^2 over the links, d the distance of each centre of mass from joint 1's axis",
                check: parallel_axis,
            },
            Exercise {
                number: 3,
                title: "Sparsity from the parent array",
                hint: "walk from every body to the base with lambda; mark each pair (body, ancestor) and its transpose",
                check: sparsity,
            },
            Exercise {
                number: 4,
                title: "Counting",
                hint: "level k has 2^(k-1) bodies; a body at depth d gives 2d - 1 entries",
                check: counting,
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
    use mbd::dynamics::rnea;

    #[test]
    fn columns_of_inverse_dynamics_with_gravity_on_fail() {
        assert!(fails_naming(0..3, "against CRBA", |rng| h_by_columns_with(
            rng,
            |model, q| {
                let n = model.nv;
                let mut h = DMatrix::zeros(n, n);
                for j in 0..n {
                    let mut e = vec![0.0; n];
                    e[j] = 1.0;
                    // gravity left on: every column carries the gravity torques too
                    let col = rnea(model, q, &vec![0.0; n], &e, None).expect("valid state");
                    h.set_column(j, &col);
                }
                h
            }
        )));
    }

    #[test]
    fn h11_without_the_links_own_inertia_fails() {
        assert!(fails_naming(0..3, "H_11", |rng| parallel_axis_with(rng, |q| {
            let (m, l) = ([1.0, 1.1, 1.2], [0.5, 0.49, 0.48]);
            let (mut h11, mut joint, mut angle) = (0.0, (0.0f64, 0.0f64), 0.0);
            for k in 0..3 {
                angle += q[k];
                let dir = (-f64::sin(angle), -f64::cos(angle));
                let com = (joint.0 + 0.5 * l[k] * dir.0, joint.1 + 0.5 * l[k] * dir.1);
                h11 += m[k] * (com.0 * com.0 + com.1 * com.1); // forgot m l^2 / 12
                joint = (joint.0 + l[k] * dir.0, joint.1 + l[k] * dir.1);
            }
            h11
        })));
    }

    #[test]
    fn a_pattern_of_parents_only_fails() {
        assert!(fails_naming(0..3, "your pattern forbids", |rng| sparsity_with(
            rng,
            |lambda| {
                let n = lambda.len() - 1;
                let mut pattern = vec![vec![false; n]; n];
                for i in 1..=n {
                    pattern[i - 1][i - 1] = true;
                    if lambda[i] != 0 {
                        // the parent only, not every ancestor
                        pattern[i - 1][lambda[i] - 1] = true;
                        pattern[lambda[i] - 1][i - 1] = true;
                    }
                }
                pattern
            }
        )));
    }

    #[test]
    fn counting_the_ancestor_pairs_once_fails() {
        assert!(fails_naming(0..3, "the count differs", |rng| counting_with(
            rng,
            |depth| {
                // sum_k 2^(k-1) k: the diagonal and each pair once, not twice
                (1..=depth).map(|k| (1usize << (k - 1)) * k as usize).sum()
            }
        )));
    }
}
