//! The `<sensor>` reader (MuJoCo's `xml_native_reader.cc`: `Sensor`): what the pipeline reports
//! from the position, velocity and acceleration stages ([`crate::model::SensorKind`]). Sensors
//! change nothing in the dynamics; they are evaluated by `crate::mujoco::sensor`.

use super::attrs::{check_leaf, Attrs};
use super::reader::Reader;
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::{JointType, Model, Sensor, SensorData, SensorFrame, SensorKind};
use std::collections::HashMap;

/// Attributes every sensor may have.
const COMMON: [&str; 3] = ["name", "noise", "cutoff"];

/// MuJoCo 4.0 sensors this reader refuses, with the reason.
const UNSUPPORTED: [(&str, &str); 11] = [
    ("camprojection", "cameras are not read"),
    ("insidesite", "not implemented"),
    ("distance", "needs mj_geomDistance, not implemented"),
    ("normal", "needs mj_geomDistance, not implemented"),
    ("fromto", "needs mj_geomDistance, not implemented"),
    ("contact", "not implemented"),
    ("tactile", "not implemented"),
    ("e_potential", "energy sensors are not implemented"),
    ("e_kinetic", "energy sensors are not implemented"),
    ("user", "user sensors need a callback"),
    ("plugin", "plugins are not supported"),
];

impl<'d> Reader<'d> {
    /// The children of one `<sensor>` section, in order.
    pub(crate) fn read_sensors(
        &mut self,
        section: &'d Elem,
        model: &Model,
        joint_fs: &HashMap<String, usize>,
    ) -> Result<Vec<Sensor>> {
        self.check_attrs(section, &[])?;
        let mut out = Vec::new();
        for &c in &section.children {
            let e = &self.doc.elems[c];
            out.push(self.read_sensor(e, model, joint_fs)?);
        }
        Ok(out)
    }

    fn read_sensor(&mut self, e: &'d Elem, model: &Model, joint_fs: &HashMap<String, usize>) -> Result<Sensor> {
        check_leaf(self.doc, e)?;
        let tag = e.tag.as_str();
        // the object attributes each type takes, besides COMMON
        let extra: &[&str] = match tag {
            "touch" | "accelerometer" | "velocimeter" | "gyro" | "force" | "torque" | "magnetometer" => &["site"],
            "rangefinder" => &["site", "data"],
            "jointpos" | "jointvel" | "jointlimitpos" | "jointlimitvel" | "jointlimitfrc" | "jointactuatorfrc"
            | "ballquat" | "ballangvel" => &["joint"],
            "tendonpos" | "tendonvel" | "tendonlimitpos" | "tendonlimitvel" | "tendonlimitfrc"
            | "tendonactuatorfrc" => &["tendon"],
            "actuatorpos" | "actuatorvel" | "actuatorfrc" => &["actuator"],
            "framepos" | "framequat" | "framexaxis" | "frameyaxis" | "framezaxis" | "framelinvel" | "frameangvel" => {
                &["objtype", "objname", "reftype", "refname"]
            }
            "framelinacc" | "frameangacc" => &["objtype", "objname"],
            "subtreecom" | "subtreelinvel" | "subtreeangmom" => &["body"],
            "clock" => &[],
            other => {
                let why = UNSUPPORTED
                    .iter()
                    .find(|(t, _)| *t == other)
                    .map(|(_, w)| *w)
                    .unwrap_or("unknown sensor type");
                return Err(self.err_elem(e, format!("sensor <{}> is not supported: {why}", esc(other))));
            }
        };
        let mut list: Vec<&str> = COMMON.to_vec();
        list.extend_from_slice(extra);
        // MuJoCo 4.0's sensor history (delayed and sampled readings) is not implemented
        for k in ["nsample", "interp", "delay", "interval"] {
            if e.has(k) {
                let a = Attrs::direct(&self.doc.files, e);
                return Err(a.err_key(
                    k,
                    "sensor history (nsample, interp, delay, interval) is not implemented",
                ));
            }
        }
        self.check_attrs(e, &list)?;
        let a = Attrs::direct(&self.doc.files, e);
        let name = a.string("name").unwrap_or_default();
        let noise = a.real("noise")?.unwrap_or(0.0);
        let cutoff = a.real("cutoff")?.unwrap_or(0.0);
        if cutoff < 0.0 {
            return Err(a.err_key("cutoff", "negative cutoff"));
        }
        let required = |key: &str| -> Result<&super::attrs::Src> {
            a.last(key)
                .ok_or_else(|| a.err(format!("required attribute '{key}' is missing")))
        };
        let site = || -> Result<usize> {
            let src = required("site")?;
            self.site_index
                .get(src.value.as_str())
                .copied()
                .ok_or_else(|| a.err_attr("site", src, "unknown site"))
        };
        let joint = |ok: fn(&JointType) -> bool, what: &str| -> Result<usize> {
            let src = required("joint")?;
            let Some(&fb) = joint_fs.get(src.value.as_str()) else {
                return Err(a.err_attr("joint", src, "unknown joint"));
            };
            if !ok(&model.joints[fb].jtype) {
                return Err(a.err_attr("joint", src, format!("the joint must be {what}")));
            }
            Ok(fb)
        };
        let scalar: fn(&JointType) -> bool = |t| matches!(t, JointType::Revolute { .. } | JointType::Prismatic { .. });
        let ball: fn(&JointType) -> bool = |t| matches!(t, JointType::Spherical);
        let tendon = || -> Result<usize> {
            let src = required("tendon")?;
            self.tendon_index
                .get(src.value.as_str())
                .copied()
                .ok_or_else(|| a.err_attr("tendon", src, "unknown tendon"))
        };
        let actuator = || -> Result<usize> {
            let src = required("actuator")?;
            model
                .actuators
                .iter()
                .position(|act| !act.name.is_empty() && act.name == src.value)
                .ok_or_else(|| a.err_attr("actuator", src, "unknown actuator"))
        };
        let body = || -> Result<usize> {
            let src = required("body")?;
            self.body_index
                .get(src.value.as_str())
                .copied()
                .ok_or_else(|| a.err_attr("body", src, "unknown body"))
        };
        // a frame named by (type, name) attributes; `None` when neither is given
        let frame = |tkey: &str, nkey: &str| -> Result<Option<SensorFrame>> {
            let (t, n) = (a.last(tkey), a.last(nkey));
            let (t, n) = match (t, n) {
                (None, None) => return Ok(None),
                (Some(_), None) => return Err(a.err(format!("'{tkey}' is given without '{nkey}'"))),
                (None, Some(_)) => return Err(a.err(format!("'{nkey}' is given without '{tkey}'"))),
                (Some(t), Some(n)) => (t, n),
            };
            let name = n.value.as_str();
            let unknown = |what: &str| a.err_attr(nkey, n, format!("unknown {what}"));
            Ok(Some(match t.value.as_str() {
                "body" | "xbody" => {
                    let b = *self.body_index.get(name).ok_or_else(|| unknown("body"))?;
                    if t.value == "body" {
                        SensorFrame::Body(b)
                    } else {
                        SensorFrame::XBody(b)
                    }
                }
                "geom" => SensorFrame::Geom(
                    model
                        .geoms
                        .iter()
                        .position(|g| !g.name.is_empty() && g.name == name)
                        .ok_or_else(|| unknown("geom"))?,
                ),
                "site" => SensorFrame::Site(*self.site_index.get(name).ok_or_else(|| unknown("site"))?),
                "camera" => return Err(a.err_attr(tkey, t, "cameras are not read")),
                other => {
                    return Err(a.err_attr(
                        tkey,
                        t,
                        format!("unknown object type '{}' (body, xbody, geom or site)", esc(other)),
                    ))
                }
            }))
        };
        let obj = || -> Result<SensorFrame> {
            frame("objtype", "objname")?.ok_or_else(|| a.err("required attribute 'objtype' is missing"))
        };
        use SensorKind as K;
        let kind = match tag {
            "touch" => K::Touch(site()?),
            "accelerometer" => K::Accelerometer(site()?),
            "velocimeter" => K::Velocimeter(site()?),
            "gyro" => K::Gyro(site()?),
            "force" => K::Force(site()?),
            "torque" => K::Torque(site()?),
            "magnetometer" => K::Magnetometer(site()?),
            "rangefinder" => {
                if let Some(src) = a.last("data") {
                    if src.value.trim() != "dist" {
                        return Err(a.err_attr("data", src, "only data=\"dist\" is supported"));
                    }
                }
                K::Rangefinder(site()?)
            }
            "jointpos" => K::JointPos(joint(scalar, "a hinge or a slide")?),
            "jointvel" => K::JointVel(joint(scalar, "a hinge or a slide")?),
            "jointlimitpos" => K::JointLimitPos(joint(scalar, "a hinge or a slide")?),
            "jointlimitvel" => K::JointLimitVel(joint(scalar, "a hinge or a slide")?),
            "jointlimitfrc" => K::JointLimitFrc(joint(scalar, "a hinge or a slide")?),
            "jointactuatorfrc" => K::JointActuatorFrc(joint(scalar, "a hinge or a slide")?),
            "ballquat" => K::BallQuat(joint(ball, "a ball joint")?),
            "ballangvel" => K::BallAngVel(joint(ball, "a ball joint")?),
            "tendonpos" => K::TendonPos(tendon()?),
            "tendonvel" => K::TendonVel(tendon()?),
            "tendonlimitpos" => K::TendonLimitPos(tendon()?),
            "tendonlimitvel" => K::TendonLimitVel(tendon()?),
            "tendonlimitfrc" => K::TendonLimitFrc(tendon()?),
            "tendonactuatorfrc" => K::TendonActuatorFrc(tendon()?),
            "actuatorpos" => K::ActuatorPos(actuator()?),
            "actuatorvel" => K::ActuatorVel(actuator()?),
            "actuatorfrc" => K::ActuatorFrc(actuator()?),
            "framepos" => K::FramePos {
                obj: obj()?,
                reference: frame("reftype", "refname")?,
            },
            "framexaxis" | "frameyaxis" | "framezaxis" => K::FrameAxis {
                axis: match tag {
                    "framexaxis" => 0,
                    "frameyaxis" => 1,
                    _ => 2,
                },
                obj: obj()?,
                reference: frame("reftype", "refname")?,
            },
            "framequat" => K::FrameQuat {
                obj: obj()?,
                reference: frame("reftype", "refname")?,
            },
            "framelinvel" => K::FrameLinVel {
                obj: obj()?,
                reference: frame("reftype", "refname")?,
            },
            "frameangvel" => K::FrameAngVel {
                obj: obj()?,
                reference: frame("reftype", "refname")?,
            },
            "framelinacc" => K::FrameLinAcc(obj()?),
            "frameangacc" => K::FrameAngAcc(obj()?),
            "subtreecom" => K::SubtreeCom(body()?),
            "subtreelinvel" => K::SubtreeLinVel(body()?),
            "subtreeangmom" => K::SubtreeAngMom(body()?),
            _ => K::Clock,
        };
        if cutoff > 0.0 && matches!(kind.datatype(), SensorData::Axis | SensorData::Quaternion) {
            return Err(a.err_key("cutoff", "a cutoff cannot apply to an axis or a quaternion"));
        }
        Ok(Sensor {
            name,
            kind,
            cutoff,
            noise,
        })
    }
}
