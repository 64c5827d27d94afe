//! Building a [`Model`] body by body.

use super::{Joint, JointType, LoopJoint, Model, Options};
use crate::error::{Error, Result};
use crate::sparse::MjLayout;
use crate::spatial::{SpatialInertia, Xform};
use nalgebra::DVector;

/// Builds a [`Model`] one body at a time, in an order where every parent comes before its
/// children (so `lambda(i) < i` holds by construction when parents are given as returned ids).
///
/// ```
/// use mbd::model::{Joint, ModelBuilder};
/// use mbd::spatial::{xlt, SpatialInertia, Vec3, Mat3};
/// let rod = SpatialInertia::from_mass_com_inertia(1.0, Vec3::new(0.5, 0.0, 0.0), Mat3::identity() * 0.01);
/// let mut b = ModelBuilder::new("double pendulum");
/// let b1 = b.add_body("upper", 0, Joint::revolute(Vec3::z()), xlt(Vec3::zeros()), rod);
/// b.add_body("lower", b1, Joint::revolute(Vec3::z()), xlt(Vec3::new(1.0, 0.0, 0.0)), rod);
/// let model = b.build().unwrap();
/// assert_eq!(model.lambda, vec![0, 0, 1]);
/// ```
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    name: String,
    lambda: Vec<usize>,
    joints: Vec<Joint>,
    x_tree: Vec<Xform>,
    inertia: Vec<SpatialInertia>,
    body_name: Vec<String>,
    qpos0: Vec<Option<Vec<f64>>>,
    loops: Vec<LoopJoint>,
    /// Options of the model being built.
    pub opt: Options,
}

impl ModelBuilder {
    /// An empty tree (only the base, body 0).
    pub fn new(name: &str) -> Self {
        ModelBuilder {
            name: name.into(),
            lambda: vec![0],
            joints: vec![Joint::new(JointType::Fixed)],
            x_tree: vec![Xform::identity()],
            inertia: vec![SpatialInertia::zero()],
            body_name: vec!["world".into()],
            qpos0: vec![None],
            loops: Vec::new(),
            opt: Options::default(),
        }
    }

    /// Adds body `name` connected to `parent` by `joint`; `x_tree` goes from the parent's
    /// coordinates to the joint's predecessor frame. Returns the new body's index.
    pub fn add_body(
        &mut self,
        name: &str,
        parent: usize,
        joint: Joint,
        x_tree: Xform,
        inertia: SpatialInertia,
    ) -> usize {
        self.lambda.push(parent);
        self.joints.push(joint);
        self.x_tree.push(x_tree);
        self.inertia.push(inertia);
        self.body_name.push(name.into());
        self.qpos0.push(None);
        self.lambda.len() - 1
    }

    /// Adds a loop joint (Featherstone 8.1) closing a kinematic loop on the tree built so far;
    /// returns its index in [`Model::loops`]. It is checked by [`ModelBuilder::build`].
    pub fn add_loop(&mut self, joint: LoopJoint) -> usize {
        self.loops.push(joint);
        self.loops.len() - 1
    }

    /// Sets the reference configuration of body `i`'s joint (default: zero, identity quaternions).
    pub fn set_qpos0(&mut self, i: usize, q: &[f64]) {
        self.qpos0[i] = Some(q.to_vec());
    }

    /// Number of bodies added so far (not counting the base).
    pub fn nb(&self) -> usize {
        self.lambda.len() - 1
    }

    /// Finishes the model: computes the coordinate addresses and the dof-level parent array,
    /// then validates it (parent order, inertias, joint axes).
    pub fn build(self) -> Result<Model> {
        let nb = self.lambda.len() - 1;
        let mut q_adr = vec![0; nb + 1];
        let mut v_adr = vec![0; nb + 1];
        let (mut nq, mut nv) = (0, 0);
        for i in 1..=nb {
            q_adr[i] = nq;
            v_adr[i] = nv;
            nq += self.joints[i].jtype.nq();
            nv += self.joints[i].jtype.nv();
        }
        // Check the parent order before anything indexes with it.
        for i in 1..=nb {
            if self.lambda[i] >= i {
                return Err(Error::BadParent {
                    body: i,
                    name: self.body_name[i].clone(),
                    parent: self.lambda[i],
                });
            }
        }
        let mut dof_body = Vec::with_capacity(nv);
        let mut dof_parent = Vec::with_capacity(nv);
        // last dof of each body's path to the root (None if the path has no dofs)
        let mut last_dof: Vec<Option<usize>> = vec![None; nb + 1];
        for i in 1..=nb {
            let mut prev = last_dof[self.lambda[i]];
            for k in 0..self.joints[i].jtype.nv() {
                dof_body.push(i);
                dof_parent.push(prev);
                prev = Some(v_adr[i] + k);
            }
            last_dof[i] = prev;
        }
        let mut qpos0 = DVector::zeros(nq);
        for i in 1..=nb {
            let q = self.qpos0[i].clone().unwrap_or_else(|| self.joints[i].jtype.neutral());
            if q.len() != self.joints[i].jtype.nq() {
                return Err(Error::BadLength {
                    what: format!("qpos0 of body '{}'", self.body_name[i]),
                    got: q.len(),
                    expected: self.joints[i].jtype.nq(),
                });
            }
            qpos0.rows_mut(q_adr[i], q.len()).copy_from_slice(&q);
        }
        let subtree_dofs = super::subtree_dofs(&self.lambda, &v_adr, &self.joints);
        let mj_layout = MjLayout::new(&dof_parent)?;
        let mut mj_body_name = self.body_name.clone();
        mj_body_name[0] = "world".into();
        let model = Model {
            name: self.name,
            nb,
            nq,
            nv,
            lambda: self.lambda,
            joints: self.joints,
            x_tree: self.x_tree,
            inertia: self.inertia,
            body_name: self.body_name,
            q_adr,
            v_adr,
            dof_body,
            dof_parent,
            subtree_dofs,
            mj_layout,
            qpos0,
            opt: self.opt,
            geoms: Vec::new(),
            equality: Vec::new(),
            mj_body: (0..=nb).collect(),
            mj_body_last: (0..=nb).collect(),
            mj_body_name,
            loops: self.loops,
        };
        model.validate()?;
        Ok(model)
    }
}
