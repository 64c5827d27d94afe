//! The `<equality>` reader (MuJoCo's `xml_native_reader.cc`: `Equality`): `connect`, `weld`,
//! `joint` and `tendon` constraints with their softness and their `active` flag (MuJoCo's
//! `eq_active0`).

use super::attrs::check_leaf;
use super::orientation::normalized4;
use super::reader::{solver_params, Reader};
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::{Equality, JointType, Model, SolverParams};
use crate::spatial::Vec3;
use std::collections::HashMap;

/// Attributes of an equality element that defaults may set.
pub(crate) const EQUALITY_ATTRS: [&str; 3] = ["active", "solref", "solimp"];

impl<'d> Reader<'d> {
    /// One equality element: the constraint, its softness and whether it starts active.
    pub(crate) fn read_equality(
        &mut self,
        e: &'d Elem,
        model: &Model,
        joint_fs: &HashMap<String, usize>,
    ) -> Result<(Equality, SolverParams, bool)> {
        check_leaf(self.doc, e)?;
        let tag = e.tag.as_str();
        let list: &[&str] = match tag {
            "connect" => &[
                "name", "class", "active", "body1", "body2", "anchor", "solref", "solimp",
            ],
            "weld" => &[
                "name",
                "class",
                "active",
                "body1",
                "body2",
                "anchor",
                "relpose",
                "solref",
                "solimp",
                "torquescale",
            ],
            "joint" => &[
                "name", "class", "active", "joint1", "joint2", "polycoef", "solref", "solimp",
            ],
            "tendon" => &[
                "name", "class", "active", "tendon1", "tendon2", "polycoef", "solref", "solimp",
            ],
            other => {
                return Err(self.err_elem(
                    e,
                    format!(
                        "equality <{}> is not supported (only connect, weld, joint and tendon)",
                        esc(other)
                    ),
                ))
            }
        };
        self.check_attrs(e, list)?;
        let class = self.class_of(e, 0)?;
        let a = self.resolved(e, "equality", class);
        let params = solver_params(&a, "solref", "solimp")?;
        if let Some(t) = a.real("torquescale")? {
            if t != 1.0 {
                return Err(a.err_key("torquescale", "only the default 1 is supported"));
            }
        }
        // MuJoCo's eq_active0: an inactive constraint makes no rows until the state switches it on
        let active = a.boolean("active")?.unwrap_or(true);
        let name = a.string("name").unwrap_or_default();
        let body = |key: &str, required: bool| -> Result<usize> {
            match a.last(key) {
                Some(src) => match self.body_index.get(src.value.as_str()) {
                    Some(&mb) => Ok(model.mj_body_last[mb]),
                    None => Err(a.err_attr(key, src, "unknown body")),
                },
                None if required => Err(a.err(format!("required attribute '{key}' is missing"))),
                None => Ok(0),
            }
        };
        let eq = match tag {
            "connect" => {
                let body1 = body("body1", true)?;
                let body2 = body("body2", false)?;
                let Some(anchor) = a.vec::<3>("anchor")? else {
                    return Err(a.err("required attribute 'anchor' is missing"));
                };
                Equality::Connect {
                    name,
                    body1,
                    body2,
                    anchor: Vec3::from(anchor),
                }
            }
            "weld" => {
                let body1 = body("body1", true)?;
                let body2 = body("body2", false)?;
                let anchor = Vec3::from(a.vec::<3>("anchor")?.unwrap_or([0.0; 3]));
                // MuJoCo's default relpose "0 1 0 0 0 0 0" has a zero quaternion: use qpos0.
                let relpose = match a.vec::<7>("relpose")? {
                    Some(r) if r[3..].iter().any(|&x| x != 0.0) => {
                        let q = normalized4([r[3], r[4], r[5], r[6]]);
                        Some([r[0], r[1], r[2], q[0], q[1], q[2], q[3]])
                    }
                    _ => None,
                };
                Equality::Weld {
                    name,
                    body1,
                    body2,
                    anchor,
                    relpose,
                }
            }
            "tendon" => {
                let tendon = |key: &str| -> Result<Option<usize>> {
                    let Some(src) = a.last(key) else {
                        return Ok(None);
                    };
                    match self.tendon_index.get(src.value.as_str()) {
                        Some(&t) => Ok(Some(t)),
                        None => Err(a.err_attr(key, src, "unknown tendon")),
                    }
                };
                let Some(tendon1) = tendon("tendon1")? else {
                    return Err(a.err("required attribute 'tendon1' is missing"));
                };
                Equality::Tendon {
                    name,
                    tendon1,
                    tendon2: tendon("tendon2")?,
                    polycoef: a.partial::<5>("polycoef", [0.0, 1.0, 0.0, 0.0, 0.0])?,
                }
            }
            _ => {
                let joint = |key: &str| -> Result<Option<usize>> {
                    let Some(src) = a.last(key) else {
                        return Ok(None);
                    };
                    let Some(&i) = joint_fs.get(src.value.as_str()) else {
                        return Err(a.err_attr(key, src, "unknown joint"));
                    };
                    if !matches!(
                        model.joints[i].jtype,
                        JointType::Revolute { .. } | JointType::Prismatic { .. }
                    ) {
                        return Err(a.err_attr(key, src, "only hinge and slide joints can be coupled"));
                    }
                    Ok(Some(i))
                };
                let Some(joint1) = joint("joint1")? else {
                    return Err(a.err("required attribute 'joint1' is missing"));
                };
                let joint2 = joint("joint2")?;
                let polycoef = a.partial::<5>("polycoef", [0.0, 1.0, 0.0, 0.0, 0.0])?;
                Equality::Joint {
                    name,
                    joint1,
                    joint2,
                    polycoef,
                }
            }
        };
        Ok((eq, params, active))
    }
}
