//! The `<tendon>` reader (MuJoCo's `xml_native_reader.cc`: `Tendon`): fixed and spatial
//! tendons, resolved against the default classes and checked as MuJoCo's compiler checks them.

use super::attrs::{check_leaf, limited_kw, Attrs, Limited};
use super::reader::{solver_params, Reader};
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::{jcalc, GeomType, JointType, Model, Tendon, TendonKind, TendonWrap};
use crate::spatial::Xform;
use std::collections::HashMap;

/// Attributes a `<fixed>` or `<spatial>` tendon may have (besides `name`, `class`).
pub(crate) const TENDON_ATTRS: [&str; 17] = [
    "limited",
    "actuatorfrcrange",
    "actuatorfrclimited",
    "range",
    "solreflimit",
    "solimplimit",
    "solreffriction",
    "solimpfriction",
    "frictionloss",
    "margin",
    "springlength",
    "stiffness",
    "damping",
    "armature",
    "width",
    "group",
    "user",
];

impl<'d> Reader<'d> {
    /// `<tendon>`: fixed and spatial tendons, in order.
    pub(crate) fn read_tendons(
        &mut self,
        e: &'d Elem,
        model: &Model,
        joint_fs: &HashMap<String, usize>,
    ) -> Result<Vec<Tendon>> {
        let doc = self.doc;
        self.check_attrs(e, &[])?;
        let mut out = Vec::new();
        for &c in &e.children {
            let t = &doc.elems[c];
            let fixed = match t.tag.as_str() {
                "fixed" => true,
                "spatial" => false,
                other => {
                    return Err(self.err_elem(t, format!("element <{}> is not allowed inside <tendon>", esc(other))))
                }
            };
            self.check_class_attrs(t, &TENDON_ATTRS, &["name", "class"])?;
            let class = self.class_of(t, 0)?;
            let a = self.resolved(t, "tendon", class);
            let name = a.string("name").unwrap_or_default();
            if !name.is_empty() && self.tendon_index.contains_key(&name) {
                return Err(a.err(format!("repeated tendon name '{}'", esc(&name))));
            }
            let kind = if fixed {
                let mut joints = Vec::new();
                for &j in &t.children {
                    let je = &doc.elems[j];
                    check_leaf(doc, je)?;
                    if je.tag != "joint" {
                        return Err(
                            self.err_elem(je, format!("element <{}> is not allowed inside <fixed>", esc(&je.tag)))
                        );
                    }
                    self.check_attrs(je, &["joint", "coef"])?;
                    let ja = Attrs::direct(&doc.files, je);
                    let Some(src) = ja.last("joint") else {
                        return Err(ja.err("required attribute 'joint' is missing"));
                    };
                    let Some(&fb) = joint_fs.get(src.value.as_str()) else {
                        return Err(ja.err_attr("joint", src, "unknown joint"));
                    };
                    if !matches!(
                        model.joints[fb].jtype,
                        JointType::Revolute { .. } | JointType::Prismatic { .. }
                    ) {
                        return Err(ja.err_attr("joint", src, "a fixed tendon can only use hinge and slide joints"));
                    }
                    joints.push((fb, ja.real("coef")?.unwrap_or(1.0)));
                }
                if joints.is_empty() {
                    return Err(a.err("a fixed tendon needs at least one <joint>"));
                }
                TendonKind::Fixed { joints }
            } else {
                let mut path = Vec::new();
                for &w in &t.children {
                    let we = &doc.elems[w];
                    check_leaf(doc, we)?;
                    let wa = Attrs::direct(&doc.files, we);
                    match we.tag.as_str() {
                        "site" => {
                            self.check_attrs(we, &["site"])?;
                            path.push(TendonWrap::Site(self.site_ref(&wa, "site", true)?.unwrap()));
                        }
                        "geom" => {
                            self.check_attrs(we, &["geom", "sidesite"])?;
                            let Some(src) = wa.last("geom") else {
                                return Err(wa.err("required attribute 'geom' is missing"));
                            };
                            let Some(g) = model.geoms.iter().position(|g| g.name == src.value) else {
                                return Err(wa.err_attr("geom", src, "unknown geom"));
                            };
                            if !matches!(model.geoms[g].gtype, GeomType::Sphere | GeomType::Cylinder) {
                                return Err(wa.err_attr(
                                    "geom",
                                    src,
                                    "a tendon wraps only around a sphere or cylinder geom",
                                ));
                            }
                            let sidesite = self.site_ref(&wa, "sidesite", false)?;
                            path.push(TendonWrap::Geom { geom: g, sidesite });
                        }
                        "pulley" => {
                            self.check_attrs(we, &["divisor"])?;
                            let d = wa.real("divisor")?.unwrap_or(0.0);
                            if !(d > 0.0) {
                                return Err(wa.err_maybe("divisor", "a pulley divisor must be positive"));
                            }
                            path.push(TendonWrap::Pulley { divisor: d });
                        }
                        other => {
                            return Err(
                                self.err_elem(we, format!("element <{}> is not allowed inside <spatial>", esc(other)))
                            )
                        }
                    }
                }
                if !matches!(path.first(), Some(TendonWrap::Site(_)))
                    || !matches!(path.last(), Some(TendonWrap::Site(_)))
                {
                    return Err(a.err("a spatial tendon must begin and end at a site"));
                }
                for k in 1..path.len() - 1 {
                    if matches!(path[k], TendonWrap::Geom { .. })
                        && !(matches!(path[k - 1], TendonWrap::Site(_)) && matches!(path[k + 1], TendonWrap::Site(_)))
                    {
                        return Err(a.err(format!("path element {k}: a wrapping geom must sit between two sites")));
                    }
                }
                TendonKind::Spatial { path }
            };
            let range = a.vec::<2>("range")?.unwrap_or([0.0, 0.0]);
            let limited = match limited_kw(&a, "limited")?.unwrap_or(Limited::Auto) {
                Limited::True => true,
                Limited::False => false,
                Limited::Auto => self.compiler.autolimits && range[0] < range[1],
            };
            if limited && range[0] >= range[1] {
                return Err(a.err_maybe("range", "range[0] must be smaller than range[1] in a limited tendon"));
            }
            let actfrcrange = self.tendon_actfrcrange(&a)?;
            let armature = a.nonneg("armature", 0.0)?;
            if armature != 0.0 {
                return Err(a.err_key("armature", "tendon armature (it adds to M) is not implemented"));
            }
            let springlength = match a.reals("springlength")? {
                None => [-1.0, -1.0],
                Some(v) if v.len() == 1 => [v[0], v[0]],
                Some(v) if v.len() == 2 => [v[0], v[1]],
                Some(v) => return Err(a.err_key("springlength", format!("expected 1 or 2 numbers, got {}", v.len()))),
            };
            let mut tendon = Tendon {
                name: name.clone(),
                kind,
                limited,
                range,
                stiffness: a.nonneg("stiffness", 0.0)?,
                damping: a.nonneg("damping", 0.0)?,
                springlength,
                armature,
                frictionloss: a.nonneg("frictionloss", 0.0)?,
                margin: a.real("margin")?.unwrap_or(0.0),
                limit: solver_params(&a, "solreflimit", "solimplimit")?,
                friction: solver_params(&a, "solreffriction", "solimpfriction")?,
                actfrcrange,
            };
            let wraps = matches!(&tendon.kind, TendonKind::Spatial { path } if path.iter().any(|w| matches!(w, TendonWrap::Geom { .. })));
            // a wrapping tendon keeps MuJoCo's "not given" (-1, -1): its length at qpos_spring
            // needs the wrap, which `mbd::dynamics::set_spring_lengths` computes when
            // `mbd::mujoco::load` compiles the model
            if tendon.springlength == [-1.0, -1.0] && !wraps {
                let l = self.tendon_length_at_spring(&tendon, model);
                tendon.springlength = [l, l];
            } else if tendon.springlength[0] > tendon.springlength[1] {
                return Err(a.err_key("springlength", "springlength[0] cannot exceed springlength[1]"));
            }
            if !name.is_empty() {
                self.tendon_index.insert(name, out.len());
            }
            out.push(tendon);
        }
        Ok(out)
    }

    /// `actuatorfrcrange` with `actuatorfrclimited` (MuJoCo's `tendon_actfrcrange`,
    /// `tendon_actfrclimited`), checked as `mjCTendon::Compile` checks them: `auto` (the
    /// default) is limited when `range[0] < range[1]` (so an inverted range without
    /// `actuatorfrclimited="true"` is no limit, as in MuJoCo), and an error when `autolimits` is
    /// off and a range is given; a limited range must satisfy `lo < hi` and contain 0.
    fn tendon_actfrcrange(&self, a: &Attrs) -> Result<Option<[f64; 2]>> {
        let range = a.vec::<2>("actuatorfrcrange")?.unwrap_or([0.0, 0.0]);
        let limited = match limited_kw(a, "actuatorfrclimited")?.unwrap_or(Limited::Auto) {
            Limited::True => true,
            Limited::False => false,
            Limited::Auto => {
                if !self.compiler.autolimits && range != [0.0, 0.0] {
                    return Err(a.err(
                        "tendon has 'actuatorfrcrange' but not 'actuatorfrclimited': set <compiler autolimits=\"true\"/> or give actuatorfrclimited=\"true\" or \"false\"",
                    ));
                }
                range[0] < range[1]
            }
        };
        if !limited {
            return Ok(None);
        }
        if range[0] >= range[1] {
            return Err(a.err_maybe(
                "actuatorfrcrange",
                "actuatorfrcrange[0] must be smaller than actuatorfrcrange[1] in a limited tendon",
            ));
        }
        if range[0] > 0.0 || range[1] < 0.0 {
            return Err(a.err_maybe(
                "actuatorfrcrange",
                "actuatorfrcrange must contain 0 (the actuators' total force is scaled back into it)",
            ));
        }
        Ok(Some(range))
    }

    /// A site named by attribute `key` (index into the model's sites).
    fn site_ref(&self, a: &Attrs, key: &str, required: bool) -> Result<Option<usize>> {
        match a.last(key) {
            Some(src) => match self.site_index.get(src.value.as_str()) {
                Some(&s) => Ok(Some(s)),
                None => Err(a.err_attr(key, src, "unknown site")),
            },
            None if required => Err(a.err(format!("required attribute '{key}' is missing"))),
            None => Ok(None),
        }
    }

    /// The tendon length at MuJoCo's `qpos_spring` ([`Model::qpos_spring`]: hinges and slides at
    /// their `springref`), which is the rest length when `springlength` is not given: for a fixed
    /// tendon `sum coef springref`; for a spatial one (without wrapping geoms) the site
    /// distances with the bodies placed by the joints at `qpos_spring`, divided by the pulleys'
    /// divisors.
    fn tendon_length_at_spring(&self, t: &Tendon, model: &Model) -> f64 {
        match &t.kind {
            TendonKind::Fixed { joints } => joints.iter().map(|&(j, c)| c * model.joints[j].springref).sum(),
            TendonKind::Spatial { path } => {
                // the bodies' world transforms at qpos_spring (X_0 = X_J X_tree X_0(parent))
                let q = model.qpos_spring();
                let mut x0 = vec![Xform::identity(); model.nb + 1];
                let rest = [0.0; 6];
                for i in 1..=model.nb {
                    let j = &model.joints[i];
                    let jc = jcalc(j, &q[model.qs(i)], &rest[..j.jtype.nv()]);
                    x0[i] = jc.x_j.compose(&model.x_tree[i]).compose(&x0[model.lambda[i]]);
                }
                let world = |s: usize| {
                    let site = &model.sites[s];
                    let (rot, origin) = x0[site.body].pose();
                    origin + rot * site.pos
                };
                let (mut len, mut div, mut prev) = (0.0, 1.0, None);
                for w in path {
                    match *w {
                        TendonWrap::Site(s) => {
                            if let Some(p) = prev {
                                len += (world(s) - world(p)).norm() / div;
                            }
                            prev = Some(s);
                        }
                        TendonWrap::Pulley { divisor } => {
                            div = divisor;
                            prev = None;
                        }
                        TendonWrap::Geom { .. } => {}
                    }
                }
                len
            }
        }
    }
}
