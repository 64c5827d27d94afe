//! The `<joint>` and `<freejoint>` reader (MuJoCo's `xml_native_reader.cc`: `OneJoint`).

use super::attrs::Attrs;
use super::reader::{solver_params, JointSpec, Reader};
use super::xml::Elem;
use crate::error::Result;
use crate::model::constants::mjEPS;
use crate::model::{Joint, JointType};
use crate::spatial::Vec3;

/// Attributes a `<joint>` may have (besides `name`, `class`); also what its defaults may set.
pub(crate) const JOINT_ATTRS: [&str; 20] = [
    "type",
    "ref",
    "springref",
    "margin",
    "solreflimit",
    "solimplimit",
    "solreffriction",
    "solimpfriction",
    "pos",
    "axis",
    "range",
    "limited",
    "damping",
    "armature",
    "frictionloss",
    "stiffness",
    "actuatorgravcomp",
    "actuatorfrcrange",
    "actuatorfrclimited",
    "springdamper",
];

impl<'d> Reader<'d> {
    pub(crate) fn read_joint(&mut self, e: &'d Elem, childclass: usize, body: usize) -> Result<JointSpec> {
        let free_elem = e.tag == "freejoint";
        let a = if free_elem {
            // <freejoint> takes no defaults (MuJoCo's AddFreeJoint).
            self.check_attrs(e, &["name"])?;
            Attrs::direct(&self.doc.files, e)
        } else {
            self.check_class_attrs(e, &JOINT_ATTRS, &["name", "class"])?;
            let class = self.class_of(e, childclass)?;
            self.resolved(e, "joint", class)
        };
        let name = a.string("name").unwrap_or_default();
        self.unique_name(&a, &name, true)?;
        let jt = if free_elem {
            "free"
        } else {
            a.keyword("type", &["hinge", "slide", "ball", "free"])?
                .unwrap_or("hinge")
        };
        let bname = &self.bodies[body].name;
        if jt == "free" && self.bodies[body].parent != 0 {
            let pname = &self.bodies[self.bodies[body].parent].name;
            return Err(a.err(format!(
                "free joint in body '{bname}', whose parent is '{pname}': a free joint is only allowed in a child of the world body"
            )));
        }
        let pos = Vec3::from(a.vec::<3>("pos")?.unwrap_or([0.0; 3]));
        let axis = Vec3::from(a.vec::<3>("axis")?.unwrap_or([0.0, 0.0, 1.0]));
        let mut range = a.vec::<2>("range")?.unwrap_or([0.0, 0.0]);
        let limited_kw = a.keyword("limited", &["true", "false", "auto"])?.unwrap_or("auto");
        let nonneg = |k: &str| -> Result<f64> {
            let v = a.real(k)?.unwrap_or(0.0);
            if v < 0.0 {
                return Err(a.err_attr(k, a.last(k).unwrap(), "must be >= 0"));
            }
            Ok(v)
        };
        let damping = nonneg("damping")?;
        let armature = nonneg("armature")?;
        let frictionloss = nonneg("frictionloss")?;
        let stiffness = a.real("stiffness")?.unwrap_or(0.0);
        let angular = jt == "hinge" && self.compiler.degree;
        let to_unit = |x: f64| if angular { x / 180.0 * std::f64::consts::PI } else { x };
        let reference = to_unit(a.real("ref")?.unwrap_or(0.0));
        let springref = to_unit(a.real("springref")?.unwrap_or(0.0));
        let margin = a.real("margin")?.unwrap_or(0.0);
        let limit_params = solver_params(&a, "solreflimit", "solimplimit")?;
        let friction_params = solver_params(&a, "solreffriction", "solimpfriction")?;

        let limited = match (jt, limited_kw) {
            ("free", _) => false,
            (_, "true") => true,
            (_, "false") => false,
            _ => {
                if !self.compiler.autolimits && range != [0.0, 0.0] {
                    return Err(a.err(
                        "joint has 'range' but not 'limited': set <compiler autolimits=\"true\"/> or give limited=\"true\" or \"false\"",
                    ));
                }
                self.compiler.autolimits && range[0] < range[1]
            }
        };
        if limited {
            if jt != "ball" && range[0] >= range[1] {
                return Err(a.err_maybe("range", "range[0] must be smaller than range[1] in a limited joint"));
            }
            if jt == "ball" && range[0] != 0.0 {
                return Err(a.err_attr("range", a.last("range").unwrap(), "range[0] must be 0 in a ball joint"));
            }
            if self.compiler.degree && (jt == "hinge" || jt == "ball") {
                // as MuJoCo writes it: range *= pi / 180
                let k = std::f64::consts::PI / 180.0;
                range = [range[0] * k, range[1] * k];
            }
        }
        // joint-level actuator force range (MuJoCo's `jnt_actfrcrange`): none on ball and free
        // joints; "auto" is limited when a range is given and autolimits is on
        let afr = a.vec::<2>("actuatorfrcrange")?.unwrap_or([0.0, 0.0]);
        let afr_kw = a
            .keyword("actuatorfrclimited", &["true", "false", "auto"])?
            .unwrap_or("auto");
        let afr_limited = match (jt, afr_kw) {
            ("free" | "ball", _) => false,
            (_, "true") => true,
            (_, "false") => false,
            _ => {
                if !self.compiler.autolimits && afr != [0.0, 0.0] {
                    return Err(a.err(
                        "joint has 'actuatorfrcrange' but not 'actuatorfrclimited': set <compiler autolimits=\"true\"/> or give actuatorfrclimited=\"true\" or \"false\"",
                    ));
                }
                self.compiler.autolimits && afr != [0.0, 0.0]
            }
        };
        if afr_limited && afr[0] >= afr[1] {
            return Err(a.err_maybe(
                "actuatorfrcrange",
                "actuatorfrcrange[0] must be smaller than actuatorfrcrange[1]",
            ));
        }
        let actgravcomp = a.boolean("actuatorgravcomp")?.unwrap_or(false);
        // springdamper = (timeconst, dampratio): both positive, or not given (0 0)
        let springdamper = match a.vec::<2>("springdamper")? {
            None | Some([0.0, 0.0]) => None,
            Some(sd) if sd[0] > 0.0 && sd[1] > 0.0 => Some(sd),
            Some(_) => return Err(a.err_maybe("springdamper", "when given, both springdamper values must be positive")),
        };
        let unit_axis = || -> Result<Vec3> {
            let n = axis.norm();
            if n < mjEPS {
                return Err(a.err_maybe("axis", "axis too small"));
            }
            Ok(axis / n)
        };
        let (jtype, pos) = match jt {
            "hinge" => (JointType::Revolute { axis: unit_axis()? }, pos),
            "slide" => (JointType::Prismatic { axis: unit_axis()? }, pos),
            "ball" => (JointType::Spherical, pos),
            _ => (JointType::Free, Vec3::zeros()),
        };
        let joint = Joint {
            jtype,
            pos,
            name,
            damping,
            armature,
            frictionloss,
            stiffness,
            limited,
            range,
            springref,
            margin,
            limit_params,
            friction_params,
            actgravcomp,
            actfrcrange: afr_limited.then_some(afr),
            springdamper,
        };
        Ok(JointSpec {
            joint,
            reference: if jt == "hinge" || jt == "slide" { reference } else { 0.0 },
            file: e.file,
            line: a.line,
        })
    }
}
