//! Exercises of the chapter "MuJoCo's com-based quantities" (book/src/com.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_com`.

use mbd::dynamics::{crba, kinetic_energy};
use mbd::kinematics::{body_jacobian, forward_kinematics, point_jacobian};
use mbd::mjcf;
use mbd::model::{canned, Model};
use mbd::mujoco::{forward_smooth, Data};
use mbd::spatial::{Mat3, Mat6, Motion, Vec3, Vec6};
use nalgebra::DMatrix;
use std::path::Path;

/// Exercise 1 (`mju_inertCom`): the ten numbers of `cinert` for one body, from its mass `m`, its
/// centre of mass `com` and rotational inertia `i_com` (about the centre of mass), both in body
/// coordinates, the body's world orientation `rot` (columns = body axes) and origin `pos`, and
/// the tree's centre of mass `c`: rotate the inertia to world axes, move it to `c` by the
/// parallel-axis theorem, `I_c = R I R^T + m (|d|^2 1 - d d^T)` with `d = xipos - c`, and store
/// `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m dx, m dy, m dz, m]`.
fn exercise_1_answer(m: f64, com: Vec3, i_com: Mat3, rot: Mat3, pos: Vec3, c: Vec3) -> [f64; 10] {
    let xipos = pos + rot * com;
    let d = xipos - c;
    let ic = rot * i_com * rot.transpose() + (Mat3::identity() * d.dot(&d) - d * d.transpose()) * m;
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

/// Exercise 2: `cdof` from the Jacobians. Column k of `cdof` is the spatial velocity (world
/// axes, about the tree's centre of mass c) that a unit rate of dof k gives its body b: its
/// angular part is b's angular velocity per unit `qdot_k`, its linear part the velocity of the
/// point of b that is passing through c. Both are columns of Jacobians of body b.
fn exercise_2_answer(model: &Model, q: &[f64], c: Vec3) -> Vec<[f64; 6]> {
    let kin = forward_kinematics(model, q).unwrap();
    (0..model.nv)
        .map(|k| {
            let b = model.dof_body[k];
            let rot = kin.rotation(b);
            // c in body b's coordinates
            let c_local = rot.transpose() * (c - kin.position(b));
            let jp = point_jacobian(model, q, b, &c_local).unwrap();
            let jb = body_jacobian(model, q, b).unwrap();
            let w = rot * Vec3::new(jb[(0, k)], jb[(1, k)], jb[(2, k)]);
            [w.x, w.y, w.z, jp[(0, k)], jp[(1, k)], jp[(2, k)]]
        })
        .collect()
}

/// Exercise 3: the inertia matrix as a sum over bodies, `M = sum_b J_b^T I_b J_b + diag(armature)`,
/// where `I_b` is body b's `cinert` as a 6x6 matrix and `J_b` is the 6 x nv com-frame Jacobian of
/// body b: column k is `cdof_k` if dof k moves body b (it belongs to b or to one of b's
/// ancestors), zero otherwise. (`d` is `forward_smooth`'s output; its `_fb` arrays are indexed by
/// the bodies 1..=nb of `model`.)
fn exercise_3_answer(model: &Model, d: &Data) -> DMatrix<f64> {
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
        let i6 = DMatrix::from_fn(6, 6, |r, s| inertia[(r, s)]);
        m += jac.transpose() * i6 * &jac;
    }
    for k in 0..n {
        m[(k, k)] += model.joints[model.dof_body[k]].armature;
    }
    m
}

/// Exercise 4: kinetic energy from the com-based body velocities,
/// `T = 1/2 sum_b cvel_b . (cinert_b cvel_b)`; every body of a tree uses the same frame, so the
/// terms simply add.
fn exercise_4_answer(model: &Model, d: &Data) -> f64 {
    let mut t = 0.0;
    for b in 1..=model.nb {
        let v: Vec6 = d.cvel_fb[b].to_vec6();
        t += 0.5 * v.dot(&(d.cinert_fb[b].to_matrix() * v));
    }
    t
}

/// Exercise 5: `cdof_dot` of a hinge or slide dof whose body's parent moves with the com-based
/// velocity `cvel` = [w; v]: the axis is carried along by the parent, so its rate is the spatial
/// (motion) cross product `cvel x cdof = [w x a; w x b + v x a]` for `cdof = [a; b]`. (The
/// hinge's own rotation adds `qdot cdof x cdof = 0`.)
fn exercise_5_answer(cvel: [f64; 6], cdof: [f64; 6]) -> [f64; 6] {
    let (w, v) = (
        Vec3::new(cvel[0], cvel[1], cvel[2]),
        Vec3::new(cvel[3], cvel[4], cvel[5]),
    );
    let (a, b) = (
        Vec3::new(cdof[0], cdof[1], cdof[2]),
        Vec3::new(cdof[3], cdof[4], cdof[5]),
    );
    let top = w.cross(&a);
    let bottom = w.cross(&b) + v.cross(&a);
    [top.x, top.y, top.z, bottom.x, bottom.y, bottom.z]
}

// ------------------------------------------------------------------------------------------
// The checks.

fn state(model: &Model) -> (Vec<f64>, Vec<f64>) {
    let mut q = model.qpos0.as_slice().to_vec();
    let v: Vec<f64> = (0..model.nv).map(|k| 0.7 * (1.3 * k as f64 + 0.5).sin()).collect();
    model.integrate(&mut q, &v, 1.0).unwrap();
    (q, v)
}

fn panda() -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/panda.xml");
    mjcf::load(&path).unwrap().model
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn exercise_1_cinert_by_the_parallel_axis_theorem() {
    // against mj_comPos's cinert (1e-12 relative to the largest entry) for every body of the
    // floating base and of the Panda arm
    for model in [canned::floating_base_ball_arms(), panda()] {
        let (q, v) = state(&model);
        let d = forward_smooth(&model, &q, &v).unwrap();
        let kin = forward_kinematics(&model, &q).unwrap();
        for b in 1..=model.nb {
            let inertia = &model.inertia[b];
            let c = d.subtree_com_fb[d.rootid_fb[b]];
            let got = exercise_1_answer(
                inertia.m,
                inertia.com(),
                inertia.inertia_at_com(),
                kin.rotation(b),
                kin.position(b),
                c,
            );
            let expected = mbd::mujoco::com::inertia_to_mj10(&d.cinert_fb[b]);
            let scale = expected.iter().fold(1e-300_f64, |m, x| m.max(x.abs()));
            assert!(
                max_diff(&got, &expected) <= 1e-12 * scale,
                "{} body {b}: {got:?} vs {expected:?}",
                model.name
            );
        }
    }
}

#[test]
fn exercise_2_cdof_is_a_jacobian_column() {
    // against mj_comPos's cdof, 1e-12 relative to max |cdof|, on the floating base (free, ball,
    // hinge, slide joints) and the Panda arm
    for model in [canned::floating_base_ball_arms(), panda()] {
        let (q, v) = state(&model);
        let d = forward_smooth(&model, &q, &v).unwrap();
        let c = d.subtree_com_fb[d.rootid_fb[1]];
        let got = exercise_2_answer(&model, &q, c);
        let scale = d.cdof.iter().map(|m| m.to_vec6().amax()).fold(1.0, f64::max);
        for (k, m) in d.cdof.iter().enumerate() {
            let e = max_diff(&got[k], m.to_vec6().as_slice());
            assert!(
                e <= 1e-12 * scale,
                "{} dof {k}: {:?} vs {:?}",
                model.name,
                got[k],
                m.to_vec6().as_slice()
            );
        }
    }
}

#[test]
fn exercise_3_the_same_inertia_matrix_as_a_sum_over_bodies() {
    // against Featherstone's body-frame CRBA, 1e-12 relative to max |H|, with armature
    let mut floating = canned::floating_base_ball_arms();
    for j in floating.joints.iter_mut().skip(2) {
        j.armature = 0.03;
    }
    for model in [floating, panda(), canned::binary_tree(4)] {
        let (q, v) = state(&model);
        let d = forward_smooth(&model, &q, &v).unwrap();
        let h = crba(&model, &q).unwrap();
        let got = exercise_3_answer(&model, &d);
        assert!(
            (&got - &h).amax() <= 1e-12 * h.amax(),
            "{}: max |M - H| = {:e}",
            model.name,
            (&got - &h).amax()
        );
    }
}

#[test]
fn exercise_4_kinetic_energy_from_cvel() {
    // against 1/2 qdot^T H qdot (H from CRBA, without armature) and the library's kinetic
    // energy, 1e-12 relative
    for model in [canned::floating_base_ball_arms(), panda(), canned::chain(6, true)] {
        let (q, v) = state(&model);
        let d = forward_smooth(&model, &q, &v).unwrap();
        let h = crba(&model, &q).unwrap();
        let qd = nalgebra::DVector::from_column_slice(&v);
        let t_h = 0.5 * qd.dot(&(&h * &qd));
        let t_lib = kinetic_energy(&model, &q, &v).unwrap();
        let got = exercise_4_answer(&model, &d);
        assert!(
            (got - t_h).abs() <= 1e-12 * t_h.abs().max(1.0),
            "{}: {got} vs 1/2 qd' H qd = {t_h}",
            model.name
        );
        assert!(
            (got - t_lib).abs() <= 1e-12 * t_lib.abs().max(1.0),
            "{}: {got} vs {t_lib}",
            model.name
        );
    }
}

#[test]
fn exercise_5_cdof_dot_of_a_hinge_on_a_moving_parent() {
    // (a) against mj_comVel's cdof_dot for every hinge and slide dof of the floating base and the
    // Panda arm (1e-12 relative); (b) against a central difference of cdof along the motion,
    // about the fixed point where the tree's centre of mass is now (step 1e-5: error ~1e-9)
    for model in [canned::floating_base_ball_arms(), panda()] {
        let (q, v) = state(&model);
        let d = forward_smooth(&model, &q, &v).unwrap();
        let c0 = d.subtree_com_fb[d.rootid_fb[1]];
        let h = 1e-5;
        let cdof_at = |t: f64| -> Vec<Motion> {
            let mut qt = q.clone();
            model.integrate(&mut qt, &v, t).unwrap();
            let dt = forward_smooth(&model, &qt, &v).unwrap();
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
            let got = exercise_5_answer(cvel, d.cdof[k].to_vec6().into());
            let lib = d.cdof_dot[k].to_vec6();
            assert!(
                max_diff(&got, lib.as_slice()) <= 1e-12 * scale,
                "{} dof {k}: {got:?} vs {lib:?}",
                model.name
            );
            let fd = (plus[k].to_vec6() - minus[k].to_vec6()) / (2.0 * h);
            assert!(
                max_diff(&got, fd.as_slice()) <= 1e-7 * scale,
                "{} dof {k}: {got:?} vs difference {fd:?}",
                model.name
            );
        }
    }
}
