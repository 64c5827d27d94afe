//! Worked answers to the exercises of "MuJoCo's com-based quantities" (statements in
//! `src/ch09.rs`).

use mbd::kinematics::{body_jacobian, forward_kinematics, point_jacobian};
use mbd::model::Model;
use mbd::mujoco::Data;
use mbd::spatial::{Mat3, Mat6, Vec3, Vec6};
use nalgebra::DMatrix;

/// Rotate the inertia to world axes, move it to `c` by the parallel-axis theorem:
/// `I_c = R I R^T + m (|d|^2 1 - d d^T)`.
pub fn exercise_1(m: f64, com: Vec3, i_com: Mat3, rot: Mat3, pos: Vec3, c: Vec3) -> [f64; 10] {
    let d = pos + rot * com - c;
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

/// The angular part is the body's angular velocity per unit rate (the body Jacobian, rotated to
/// world axes); the linear part is the velocity of the body point passing through `c` (the point
/// Jacobian at `c` expressed in body coordinates).
pub fn exercise_2(model: &Model, q: &[f64], c: Vec3) -> Vec<[f64; 6]> {
    let kin = forward_kinematics(model, q).expect("valid state");
    (0..model.nv)
        .map(|k| {
            let b = model.dof_body[k];
            let rot = kin.rotation(b);
            let c_local = rot.transpose() * (c - kin.position(b));
            let jp = point_jacobian(model, q, b, &c_local).expect("valid state");
            let jb = body_jacobian(model, q, b).expect("valid state");
            let w = rot * Vec3::new(jb[(0, k)], jb[(1, k)], jb[(2, k)]);
            [w.x, w.y, w.z, jp[(0, k)], jp[(1, k)], jp[(2, k)]]
        })
        .collect()
}

/// One `J_b^T I_b J_b` per body; every body of a tree uses the same frame, so they add.
pub fn exercise_3(model: &Model, d: &Data) -> DMatrix<f64> {
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

/// Every body's `cvel` and `cinert` are in the same (com-centred, world-aligned) frame.
pub fn exercise_4(model: &Model, d: &Data) -> f64 {
    let mut t = 0.0;
    for b in 1..=model.nb {
        let v: Vec6 = d.cvel_fb[b].to_vec6();
        t += 0.5 * v.dot(&(d.cinert_fb[b].to_matrix() * v));
    }
    t
}

/// The axis is carried by the parent: `cvel x cdof = [w x a; w x b + v x a]` for `cdof = [a; b]`
/// (the hinge's own rotation adds `qdot cdof x cdof = 0`).
pub fn exercise_5(cvel: [f64; 6], cdof: [f64; 6]) -> [f64; 6] {
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
