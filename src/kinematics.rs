//! Forward kinematics, body velocities and Jacobians (Featherstone 4.1-4.2 and 8.2's use of
//! base coordinates). Book chapter: "Joint models and kinematic trees".

use crate::error::Result;
use crate::model::{jcalc, Model};
use crate::spatial::{mat_to_quat_with, Force, Mat3, Motion, Vec3, Xform};
use crate::vector::AsVector;
use nalgebra::DMatrix;

/// The pose of every body: `x_up[i] = i_X_lambda(i)` and `x_0[i] = i_X_0` (base to body).
#[derive(Clone, Debug)]
pub struct Kinematics {
    /// `i_X_lambda(i) = X_J(i) X_tree(i)`.
    pub x_up: Vec<Xform>,
    /// `i_X_0`: from base coordinates to body i coordinates.
    pub x_0: Vec<Xform>,
}

impl Kinematics {
    /// World position of body i's frame origin.
    pub fn position(&self, i: usize) -> Vec3 {
        self.x_0[i].r
    }
    /// World orientation of body i (columns = body axes in world coordinates).
    pub fn rotation(&self, i: usize) -> Mat3 {
        self.x_0[i].e.transpose()
    }
    /// World position of a point given in body i's coordinates.
    pub fn point(&self, i: usize, p: &Vec3) -> Vec3 {
        self.x_0[i].r + self.x_0[i].e.tr_mul(p)
    }
}

/// Every body's `i_X_0` and every dof's motion subspace column in world coordinates about the
/// world origin, `S0_c = 0_X_i S_c = [w_c; v_c]`, kept between calls (no allocation once sized):
/// the world velocity of a point at `x` moved by a unit rate of dof `c` alone is `w_c x x + v_c`,
/// its angular velocity `w_c`, so a column of a point or rotation Jacobian is one cross product,
/// nonzero only at the dofs of the point's body and its ancestors ([`WorldAxes::chain`]).
#[derive(Clone, Debug, Default)]
pub struct WorldAxes {
    x_0: Vec<Xform>,
    s0: Vec<Motion>,
    jc: crate::model::JointCalc,
}

impl WorldAxes {
    /// Forward kinematics at `q` (`i_X_0 = X_J(q_i) X_tree(i) lambda(i)_X_0`) and the world dof
    /// axes, with the mocap bodies placed at `mocap` (one transform per mocap body,
    /// [`Model::x_tree_placed`]; empty: at their default poses). `q` is assumed valid (length
    /// `nq`), and `mocap` empty or of length `nmocap`.
    pub fn update(&mut self, model: &Model, q: &[f64], mocap: &[Xform]) {
        self.x_0.clear();
        self.x_0.resize(model.nb + 1, Xform::identity());
        self.s0.clear();
        self.s0.resize(model.nv, Motion::zero());
        let zeros = [0.0; 6];
        for i in 1..=model.nb {
            let j = &model.joints[i];
            crate::model::jcalc_into(j, &q[model.qs(i)], &zeros[..j.jtype.nv()], &mut self.jc);
            self.x_0[i] = self
                .jc
                .x_j
                .compose(model.x_tree_placed(i, mocap))
                .compose(&self.x_0[model.lambda[i]]);
            for (k, dof) in model.dofs(i).enumerate() {
                self.s0[dof] = self.x_0[i].inv_apply_motion(&self.jc.s.cols[k]);
            }
        }
    }

    /// World position of the point `p` of body `i` (`p` in body coordinates).
    pub fn point(&self, i: usize, p: &Vec3) -> Vec3 {
        self.x_0[i].r + self.x_0[i].e.tr_mul(p)
    }

    /// World orientation of body `i` (columns: the body axes in world coordinates).
    pub fn rotation(&self, i: usize) -> Mat3 {
        self.x_0[i].e.transpose()
    }

    /// The world axis `[w_c; v_c]` of dof `c`.
    pub fn axis(&self, c: usize) -> &Motion {
        &self.s0[c]
    }

    /// The dofs that move body `i`: its own and its ancestors', from `i` to the root.
    pub fn chain<'m>(&self, model: &'m Model, i: usize) -> impl Iterator<Item = usize> + 'm {
        std::iter::successors((i != 0).then_some(i), move |&k| {
            let p = model.lambda[k];
            (p != 0).then_some(p)
        })
        .flat_map(move |k| model.dofs(k))
    }
}

// ANCHOR: fk
/// Forward kinematics: `i_X_lambda(i) = X_J(q_i) X_tree(i)`, `i_X_0 = i_X_lambda(i) lambda(i)_X_0`.
pub fn forward_kinematics(model: &Model, q: &(impl AsVector + ?Sized)) -> Result<Kinematics> {
    let q = q.as_vector();
    model.check_state(q, &vec![0.0; model.nv])?;
    let mut x_up = vec![Xform::identity(); model.nb + 1];
    let mut x_0 = vec![Xform::identity(); model.nb + 1];
    let zeros = [0.0; 6];
    for i in 1..=model.nb {
        let jc = jcalc(&model.joints[i], &q[model.qs(i)], &zeros[..model.joints[i].jtype.nv()]);
        x_up[i] = jc.x_j.compose(&model.x_tree[i]);
        x_0[i] = x_up[i].compose(&x_0[model.lambda[i]]);
    }
    Ok(Kinematics { x_up, x_0 })
}
// ANCHOR_END: fk

/// MuJoCo-style body poses (`xpos`, `xquat` with w >= 0) for every MuJoCo body (index 0 = world).
pub fn mj_body_poses(model: &Model, kin: &Kinematics) -> (Vec<Vec3>, Vec<[f64; 4]>) {
    let mut xpos = Vec::with_capacity(model.mj_nbody());
    let mut xquat = Vec::with_capacity(model.mj_nbody());
    for &fb in &model.mj_body_last {
        xpos.push(kin.position(fb));
        xquat.push(mat_to_quat_with(&kin.rotation(fb)));
    }
    (xpos, xquat)
}

/// Body velocities in body coordinates: `v_i = i_X_lambda v_lambda + S_i qdot_i` (eq. 4.x).
pub fn body_velocities(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
) -> Result<Vec<Motion>> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    model.check_state(q, qd)?;
    let mut v = vec![Motion::zero(); model.nb + 1];
    for i in 1..=model.nb {
        let jc = jcalc(&model.joints[i], &q[model.qs(i)], &qd[model.dofs(i)]);
        let x_up = jc.x_j.compose(&model.x_tree[i]);
        v[i] = x_up.apply_motion(&v[model.lambda[i]]) + jc.v_j;
    }
    Ok(v)
}

/// Whether body `j` supports body `i` (j is i or an ancestor of i: `j in kappa(i)`).
/// An index out of range, or a parent array that breaks `lambda(i) < i`, gives `false`.
pub fn supports(model: &Model, j: usize, mut i: usize) -> bool {
    while i > j {
        match model.lambda.get(i) {
            Some(&p) if p < i => i = p,
            _ => return false,
        }
    }
    i == j
}

/// A body index must name a body of the model (0 = the base is allowed).
fn check_body(model: &Model, i: usize) -> Result<()> {
    if i > model.nb {
        return Err(crate::Error::Unknown {
            kind: "body index".into(),
            name: format!("{i} (the model has bodies 0..={})", model.nb),
        });
    }
    Ok(())
}

// ANCHOR: jacobian
/// The body Jacobian `J_i` (6 x nv) in body i's coordinates: `v_i = J_i qdot`. Column block of
/// joint j is `i_X_j S_j` for j supporting i and zero otherwise.
pub fn body_jacobian(model: &Model, q: &(impl AsVector + ?Sized), i: usize) -> Result<DMatrix<f64>> {
    let q = q.as_vector();
    check_body(model, i)?;
    let kin = forward_kinematics(model, q)?;
    let mut jac = DMatrix::zeros(6, model.nv);
    let zeros = [0.0; 6];
    let mut j = i;
    while j != 0 {
        let jc = jcalc(&model.joints[j], &q[model.qs(j)], &zeros[..model.joints[j].jtype.nv()]);
        // i_X_j = i_X_0 (j_X_0)^-1
        let x_ij = kin.x_0[i].compose(&kin.x_0[j].inverse());
        for (k, dof) in model.dofs(j).enumerate() {
            jac.column_mut(dof)
                .copy_from(&x_ij.apply_motion(&jc.s.cols[k]).to_vec6());
        }
        j = model.lambda[j];
    }
    crate::error::check_output("body Jacobian", jac.as_slice())?;
    Ok(jac)
}
// ANCHOR_END: jacobian

/// The point Jacobian (3 x nv): the world-frame linear velocity of the point `p` (given in body
/// i's coordinates) is `J qdot`.
pub fn point_jacobian(model: &Model, q: &(impl AsVector + ?Sized), i: usize, p: &Vec3) -> Result<DMatrix<f64>> {
    let q = q.as_vector();
    check_body(model, i)?;
    crate::error::check_magnitude("p", p.as_slice())?;
    let kin = forward_kinematics(model, q)?;
    let jb = body_jacobian(model, q, i)?;
    let r_world = kin.rotation(i);
    let mut out = DMatrix::zeros(3, model.nv);
    for c in 0..model.nv {
        let m = Motion::new(
            Vec3::new(jb[(0, c)], jb[(1, c)], jb[(2, c)]),
            Vec3::new(jb[(3, c)], jb[(4, c)], jb[(5, c)]),
        );
        let vp = m.v + m.w.cross(p); // velocity of the point, body axes
        out.column_mut(c).copy_from(&(r_world * vp));
    }
    crate::error::check_output("point Jacobian", out.as_slice())?;
    Ok(out)
}

/// Converts a force given in world coordinates and applied at a world point into the spatial
/// force in base coordinates that the dynamics routines take as external force.
pub fn world_force_at_point(force: &Vec3, torque: &Vec3, point: &Vec3) -> Force {
    Force::new(torque + point.cross(force), *force)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::canned;
    use approx::assert_relative_eq;

    #[test]
    fn jacobian_matches_finite_differences_of_point_positions() {
        let model = canned::floating_base_ball_arms();
        let mut q = model.qpos0.clone();
        for k in 0..model.nq {
            q[k] += 0.1 * ((k as f64) * 0.7).sin();
        }
        model.normalize_quaternions(q.as_mut_slice()).unwrap();
        let qd: Vec<f64> = (0..model.nv).map(|k| 0.3 * ((k as f64) * 1.3).cos()).collect();
        let body = model.nb;
        let p = Vec3::new(0.1, -0.2, 0.05);
        let jac = point_jacobian(&model, q.as_slice(), body, &p).unwrap();
        let h = 1e-6;
        let mut qp = q.clone();
        model.integrate(qp.as_mut_slice(), &qd, h).unwrap();
        let mut qm = q.clone();
        model.integrate(qm.as_mut_slice(), &qd, -h).unwrap();
        let pp = forward_kinematics(&model, qp.as_slice()).unwrap().point(body, &p);
        let pm = forward_kinematics(&model, qm.as_slice()).unwrap().point(body, &p);
        let fd = (pp - pm) / (2.0 * h);
        let an = &jac * nalgebra::DVector::from_column_slice(&qd);
        assert_relative_eq!(Vec3::new(an[0], an[1], an[2]), fd, epsilon = 1e-7);
        // and the body Jacobian reproduces the body velocity of the recursive formula
        let v = body_velocities(&model, q.as_slice(), &qd).unwrap();
        let jb = body_jacobian(&model, q.as_slice(), body).unwrap();
        let vj = &jb * nalgebra::DVector::from_column_slice(&qd);
        assert_relative_eq!(
            v[body].to_vec6(),
            nalgebra::Vector6::from_iterator(vj.iter().cloned()),
            epsilon = 1e-12
        );
    }
}
