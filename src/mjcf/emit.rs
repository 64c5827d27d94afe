//! Emitting the [`Model`] (MuJoCo's `mjCModel::CopyObjects`, here into Featherstone's numbering):
//! one Featherstone body per joint, in MuJoCo's body and joint order, with the maps between the
//! two numberings.

use super::reader::Reader;
use crate::error::Result;
use crate::model::{jcalc, Joint, JointType, Model, ModelBuilder};
use crate::spatial::{quat_to_mat, SpatialInertia, Xform};
use std::collections::HashMap;

impl<'d> Reader<'d> {
    /// Builds the [`Model`]: one Featherstone body per joint (one per jointless body), in
    /// MuJoCo's body and joint order. Returns the model and the Featherstone body of each
    /// joint name.
    pub(crate) fn emit(&mut self, name: String) -> Result<(Model, HashMap<String, usize>)> {
        let mut b = ModelBuilder::new(&name);
        b.opt = self.opt.clone();
        let nbody = self.bodies.len();
        let mut mj_body_last = vec![0usize; nbody];
        let mut mj_body = vec![0usize];
        let mut joint_fs = HashMap::new();
        for (k, body) in self.bodies.iter().enumerate().skip(1) {
            let parent_fs = mj_body_last[body.parent];
            let x_body = Xform::from_pose(&quat_to_mat(&body.quat), &body.pos);
            let mp = &body.mass;
            let inertia = SpatialInertia::from_mass_com_inertia(mp.mass, mp.com, mp.inertia);
            // MuJoCo's per-body joint checks: at most 6 dofs, no rotation after a ball joint.
            let ndof: usize = body.joints.iter().map(|j| j.joint.jtype.nv()).sum();
            if ndof > 6 {
                return Err(self.err_at(
                    body.file,
                    body.line,
                    format!("<body name=\"{}\">: more than 6 dofs in one body", body.name),
                ));
            }
            let mut ball = false;
            for j in &body.joints {
                if ball && matches!(j.joint.jtype, JointType::Revolute { .. } | JointType::Spherical) {
                    return Err(self.err_at(
                        j.file,
                        j.line,
                        format!(
                            "<joint name=\"{}\">: a rotation follows a ball joint in the same body",
                            j.joint.name
                        ),
                    ));
                }
                ball |= matches!(j.joint.jtype, JointType::Spherical);
            }
            // MuJoCo's compiler: "mocap body is not a fixed child of world"
            if body.mocap && (!body.joints.is_empty() || body.parent != 0) {
                let why = if body.parent != 0 {
                    format!("its parent is body '{}', not the world", self.bodies[body.parent].name)
                } else {
                    let j = &body.joints[0];
                    match j.joint.name.as_str() {
                        "" => format!("it has a joint (line {})", j.line),
                        name => format!("it has the joint '{name}' (line {})", j.line),
                    }
                };
                return Err(self.err_at(
                    body.file,
                    body.line,
                    format!(
                        "<body name=\"{}\" mocap=\"true\">: a mocap body must be a child of the world without joints ({why}; MuJoCo: \"mocap body '{}' is not a fixed child of world\")",
                        body.name, body.name
                    ),
                ));
            }
            if body.mocap {
                let p = body.pos;
                let i = b.add_mocap_body(&body.name, [p.x, p.y, p.z], body.quat, inertia);
                mj_body.push(k);
                mj_body_last[k] = i;
                continue;
            }
            if body.joints.is_empty() {
                let i = b.add_body(&body.name, parent_fs, Joint::new(JointType::Fixed), x_body, inertia);
                mj_body.push(k);
                mj_body_last[k] = i;
                continue;
            }
            let n = body.joints.len();
            let mut parent = parent_fs;
            for (jk, js) in body.joints.iter().enumerate() {
                let last = jk + 1 == n;
                let fs_name = if last {
                    body.name.clone()
                } else if js.joint.name.is_empty() {
                    format!("{}#{jk}", body.name)
                } else {
                    format!("{}#{}", body.name, js.joint.name)
                };
                let free = matches!(js.joint.jtype, JointType::Free);
                let mut x_tree = if jk == 0 && !free { x_body } else { Xform::identity() };
                if js.reference != 0.0 {
                    // MuJoCo moves a hinge or slide by q - ref (`mj_kinematics` uses
                    // qpos - qpos0): fold X_J(-ref) into X_tree, so that X_J(q) X_tree' =
                    // X_J(q - ref) X_tree (motions about one axis commute), and qpos0 = ref.
                    x_tree = jcalc(&js.joint, &[-js.reference], &[0.0]).x_j.compose(&x_tree);
                }
                let i = b.add_body(
                    &fs_name,
                    parent,
                    js.joint.clone(),
                    x_tree,
                    if last { inertia } else { SpatialInertia::zero() },
                );
                if js.reference != 0.0 {
                    b.set_qpos0(i, &[js.reference]);
                }
                if free {
                    let p = body.pos;
                    let q = body.quat;
                    b.set_qpos0(i, &[p.x, p.y, p.z, q[0], q[1], q[2], q[3]]);
                }
                if !js.joint.name.is_empty() {
                    joint_fs.insert(js.joint.name.clone(), i);
                }
                mj_body.push(k);
                parent = i;
            }
            mj_body_last[k] = parent;
        }
        let mut model = b.build()?;
        let mut geoms = Vec::new();
        for (k, body) in self.bodies.iter().enumerate() {
            for g in &body.geoms {
                let mut geom = g.geom.clone();
                geom.body = mj_body_last[k];
                geoms.push(geom);
            }
        }
        model.geoms = geoms;
        model.meshes = self.assets.meshes.clone();
        model.hfields = self.assets.hfields.clone();
        model.materials = self.assets.materials.clone();
        model.mj_body = mj_body;
        model.mj_body_last = mj_body_last;
        model.mj_body_name = self.bodies.iter().map(|b| b.name.clone()).collect();
        model.mj_body_simple = self.bodies.iter().map(|b| b.simple).collect();
        for (k, body) in self.bodies.iter().enumerate().skip(1) {
            let i = model.mj_body_last[k];
            model.body_iquat[i] = body.mass.iquat;
            model.body_gravcomp[i] = body.gravcomp;
            model.body_inertia[i] = crate::spatial::Vec3::from(body.mass.principal);
        }
        Ok((model, joint_fs))
    }
}
