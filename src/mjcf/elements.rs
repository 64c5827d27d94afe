//! The element readers for what hangs on the tree (MuJoCo's `xml_native_reader.cc`: `Site`,
//! `Tendon`, `OneActuator`, `Keyframe`, `Contact`): sites, tendons, actuators, keyframes and
//! contact pairs and exclusions, each resolved against the default classes and checked as
//! MuJoCo's compiler checks it.

use super::attrs::{check_leaf, Attrs};
use super::orientation::{orientation, z_to_quat};
use super::reader::{solver_params, Reader};
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::constants::{mjEPS, mjMINVAL};
use crate::model::{
    Actuator, BiasType, ContactPair, DynType, GainType, JointType, Keyframe, Model, Site, Tendon, TendonKind,
    TendonWrap, Transmission,
};
use crate::spatial::{quat_to_mat, Vec3};
use std::collections::HashMap;

/// Attributes a `<site>` may have (besides `name`, `class`).
pub(crate) const SITE_ATTRS: [&str; 11] = [
    "type",
    "size",
    "pos",
    "quat",
    "axisangle",
    "xyaxes",
    "zaxis",
    "euler",
    "fromto",
    "group",
    "user",
];
/// Attributes a `<fixed>` or `<spatial>` tendon may have (besides `name`, `class`).
pub(crate) const TENDON_ATTRS: [&str; 15] = [
    "limited",
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
/// Attributes of any actuator element (besides `name`, `class` and the transmission).
pub(crate) const ACTUATOR_ATTRS: [&str; 32] = [
    "group",
    "ctrllimited",
    "forcelimited",
    "actlimited",
    "ctrlrange",
    "forcerange",
    "actrange",
    "gear",
    "dyntype",
    "gaintype",
    "biastype",
    "dynprm",
    "gainprm",
    "biasprm",
    "kp",
    "kv",
    "actearly",
    "actdim",
    "lengthrange",
    "cranklength",
    "user",
    "inheritrange",
    "timeconst",
    "tausmooth",
    "range",
    "force",
    "scale",
    "lmin",
    "lmax",
    "vmax",
    "fpmax",
    "fvmax",
];
/// Attributes of an equality element that defaults may set.
pub(crate) const EQUALITY_ATTRS: [&str; 3] = ["active", "solref", "solimp"];
/// Attributes of a contact `<pair>` (besides `name`, `class`, `geom1`, `geom2`).
pub(crate) const PAIR_ATTRS: [&str; 7] = [
    "condim",
    "friction",
    "solref",
    "solreffriction",
    "solimp",
    "gap",
    "margin",
];

/// The actuator kinds read here; the others (`intvelocity`, `damper`, `cylinder`, `adhesion`)
/// are errors.
pub(crate) const ACTUATOR_TAGS: [&str; 5] = ["general", "motor", "position", "velocity", "muscle"];

/// The attributes only the `<muscle>` shortcut takes (MuJoCo's `mjs_setToMuscle` arguments).
const MUSCLE_ONLY_ATTRS: [&str; 10] = [
    "timeconst",
    "tausmooth",
    "range",
    "force",
    "scale",
    "lmin",
    "lmax",
    "vmax",
    "fpmax",
    "fvmax",
];

/// MuJoCo's tri-state `limited` attributes.
#[derive(Clone, Copy, PartialEq)]
enum Limited {
    True,
    False,
    Auto,
}

/// An actuator while its layers (default classes, then the element) are applied.
struct ActSpec {
    act: Actuator,
    ctrllimited: Limited,
    forcelimited: Limited,
    actlimited: Limited,
}

fn limited_kw(a: &Attrs, key: &str) -> Result<Option<Limited>> {
    Ok(a.keyword(key, &["true", "false", "auto"])?.map(|k| match k {
        "true" => Limited::True,
        "false" => Limited::False,
        _ => Limited::Auto,
    }))
}

fn partial10(a: &Attrs, key: &str, init: [f64; 10]) -> Result<[f64; 10]> {
    a.partial::<10>(key, init)
}

impl<'d> Reader<'d> {
    // --------------------------------------------------------------------------------------------
    // Sites
    // --------------------------------------------------------------------------------------------

    /// A `<site>` of MuJoCo body `body`; returns its pose in the body frame.
    pub(crate) fn read_site(&mut self, e: &'d Elem, class: usize) -> Result<(String, Vec3, [f64; 4])> {
        let mut list: Vec<&str> = SITE_ATTRS.to_vec();
        list.extend(["name", "class"]);
        self.check_attrs(e, &list)?;
        let a = self.resolved(e, "site", class);
        a.keyword("type", &["sphere", "capsule", "ellipsoid", "cylinder", "box"])?;
        a.partial::<3>("size", [0.005; 3])?;
        let name = a.string("name").unwrap_or_default();
        let mut pos = Vec3::from(a.vec::<3>("pos")?.unwrap_or([0.0; 3]));
        let mut quat = orientation(&a, &self.compiler)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        if let Some(ft) = a.vec::<6>("fromto")? {
            let v = Vec3::new(ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]);
            if v.norm() < mjEPS {
                return Err(a.err_key("fromto", "fromto points are too close"));
            }
            pos = Vec3::new(0.5 * (ft[0] + ft[3]), 0.5 * (ft[1] + ft[4]), 0.5 * (ft[2] + ft[5]));
            quat = z_to_quat(&(v / v.norm()));
        }
        if !name.is_empty() && self.site_index.contains_key(&name) {
            return Err(a.err(format!("repeated site name '{}'", esc(&name))));
        }
        Ok((name, pos, quat))
    }

    /// The sites with their Featherstone bodies (after emit).
    pub(crate) fn emit_sites(&self, model: &mut Model) {
        model.sites = self
            .sites
            .iter()
            .map(|(b, name, pos, quat)| Site {
                name: name.clone(),
                body: model.mj_body_last[*b],
                pos: *pos,
                quat: *quat,
            })
            .collect();
    }

    // --------------------------------------------------------------------------------------------
    // Tendons
    // --------------------------------------------------------------------------------------------

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
            let mut list: Vec<&str> = TENDON_ATTRS.to_vec();
            list.extend(["name", "class"]);
            self.check_attrs(t, &list)?;
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
            };
            if tendon.springlength == [-1.0, -1.0] {
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

    /// The tendon length at MuJoCo's `qpos_spring` (the joints' `springref`), which is the rest
    /// length when `springlength` is not given: for a fixed tendon `sum coef springref`; for a
    /// spatial one the site distances in the bodies' XML poses (where hinges and slides are at
    /// their `ref`).
    fn tendon_length_at_spring(&self, t: &Tendon, model: &Model) -> f64 {
        match &t.kind {
            TendonKind::Fixed { joints } => joints.iter().map(|&(j, c)| c * model.joints[j].springref).sum(),
            TendonKind::Spatial { path } => {
                let world = |s: usize| {
                    let (b, _, pos, _) = &self.sites[s];
                    let (mut p, mut body) = (*pos, *b);
                    while body != 0 {
                        let bs = &self.bodies[body];
                        p = bs.pos + quat_to_mat(&bs.quat) * p;
                        body = bs.parent;
                    }
                    p
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

    // --------------------------------------------------------------------------------------------
    // Actuators
    // --------------------------------------------------------------------------------------------

    /// `<actuator>`: `general`, `motor`, `position` and `velocity`, each built the way MuJoCo's
    /// `mjs_setTo*` shortcuts build a general actuator, layer by layer through the default
    /// classes.
    pub(crate) fn read_actuators(
        &mut self,
        e: &'d Elem,
        _model: &Model,
        joint_fs: &HashMap<String, usize>,
    ) -> Result<Vec<Actuator>> {
        let doc = self.doc;
        self.check_attrs(e, &[])?;
        let mut out = Vec::new();
        for &c in &e.children {
            let ae = &doc.elems[c];
            check_leaf(doc, ae)?;
            let tag = ae.tag.as_str();
            if !ACTUATOR_TAGS.contains(&tag) {
                return Err(self.err_elem(
                    ae,
                    format!(
                        "actuator <{}> is not supported (only general, motor, position, velocity and muscle)",
                        esc(tag)
                    ),
                ));
            }
            let mut list: Vec<&str> = ACTUATOR_ATTRS.to_vec();
            list.extend([
                "name",
                "class",
                "joint",
                "tendon",
                "site",
                "body",
                "jointinparent",
                "refsite",
                "cranksite",
                "slidersite",
            ]);
            self.check_attrs(ae, &list)?;
            let class = self.class_of(ae, 0)?;
            let mut spec = ActSpec {
                act: Actuator {
                    name: ae.attr("name").unwrap_or_default().to_string(),
                    trn: Transmission::Joint(0),
                    gear: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                    cranklength: 0.0,
                    dyntype: DynType::None,
                    dynprm: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                    gaintype: GainType::Fixed,
                    gainprm: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                    biastype: BiasType::None,
                    biasprm: [0.0; 10],
                    ctrllimited: false,
                    ctrlrange: [0.0, 0.0],
                    forcelimited: false,
                    forcerange: [0.0, 0.0],
                    actlimited: false,
                    actrange: [0.0, 0.0],
                    lengthrange: [0.0, 0.0],
                },
                ctrllimited: Limited::Auto,
                forcelimited: Limited::Auto,
                actlimited: Limited::Auto,
            };
            // the class chain, outermost first, then the element
            let mut chain = vec![class];
            while let Some(p) = self.classes[*chain.last().unwrap()].parent {
                chain.push(p);
            }
            chain.reverse();
            for &cl in &chain {
                for (kind, attrs) in &self.classes[cl].items {
                    if let Some(t) = kind.strip_prefix("actuator:") {
                        let layer = Attrs {
                            files: &doc.files,
                            file: ae.file,
                            tag: ae.describe(),
                            line: ae.line,
                            map: attrs.iter().map(|(k, s)| (k.clone(), vec![s.clone()])).collect(),
                        };
                        apply_actuator_layer(t, &layer, &mut spec)?;
                    }
                }
            }
            let own = Attrs::direct(&doc.files, ae);
            apply_actuator_layer(tag, &own, &mut spec)?;
            // transmission: exactly one of joint, jointinparent, tendon, cranksite (with
            // slidersite), site (with an optional refsite)
            let given: Vec<&str> = ["joint", "jointinparent", "tendon", "cranksite", "site", "body"]
                .into_iter()
                .filter(|k| own.has(k))
                .collect();
            if given.len() > 1 {
                return Err(own.err(format!(
                    "an actuator needs exactly one transmission (got {})",
                    given.join(", ")
                )));
            }
            let site_of = |key: &str| -> Result<usize> {
                let src = own.last(key).expect("checked by has");
                self.site_index
                    .get(src.value.as_str())
                    .copied()
                    .ok_or_else(|| own.err_attr(key, src, "unknown site"))
            };
            let trn = match given.first().copied() {
                Some(key @ ("joint" | "jointinparent")) => {
                    let src = own.last(key).expect("checked by has");
                    let Some(&fb) = joint_fs.get(src.value.as_str()) else {
                        return Err(own.err_attr(key, src, "unknown joint"));
                    };
                    if key == "joint" {
                        Transmission::Joint(fb)
                    } else {
                        Transmission::JointInParent(fb)
                    }
                }
                Some("tendon") => {
                    let src = own.last("tendon").expect("checked by has");
                    match self.tendon_index.get(src.value.as_str()) {
                        Some(&t) => Transmission::Tendon(t),
                        None => return Err(own.err_attr("tendon", src, "unknown tendon")),
                    }
                }
                Some("cranksite") => {
                    if !own.has("slidersite") {
                        return Err(own.err_key("cranksite", "a slider-crank needs a slidersite"));
                    }
                    if !(spec.act.cranklength > 0.0) {
                        return Err(own.err_key("cranksite", "a slider-crank needs a positive cranklength"));
                    }
                    Transmission::SliderCrank {
                        crank: site_of("cranksite")?,
                        slider: site_of("slidersite")?,
                    }
                }
                Some("site") => Transmission::Site {
                    site: site_of("site")?,
                    refsite: if own.has("refsite") {
                        Some(site_of("refsite")?)
                    } else {
                        None
                    },
                },
                Some(_) => {
                    return Err(own.err_key("body", "the body (adhesion) transmission is not implemented"));
                }
                None => {
                    return Err(
                        own.err("an actuator needs a transmission (joint, jointinparent, tendon, cranksite or site)")
                    )
                }
            };
            if own.has("refsite") && !matches!(trn, Transmission::Site { .. }) {
                return Err(own.err_key("refsite", "refsite goes with a site transmission"));
            }
            if own.has("slidersite") && !matches!(trn, Transmission::SliderCrank { .. }) {
                return Err(own.err_key("slidersite", "slidersite goes with cranksite"));
            }
            spec.act.trn = trn;
            let resolve = |l: Limited, range: [f64; 2], key: &str| -> Result<bool> {
                let on = match l {
                    Limited::True => true,
                    Limited::False => false,
                    Limited::Auto => self.compiler.autolimits && range != [0.0, 0.0],
                };
                if on && range[0] >= range[1] {
                    return Err(own.err_maybe(key, format!("invalid {key}: range[0] must be smaller than range[1]")));
                }
                Ok(on)
            };
            spec.act.ctrllimited = resolve(spec.ctrllimited, spec.act.ctrlrange, "ctrlrange")?;
            spec.act.forcelimited = resolve(spec.forcelimited, spec.act.forcerange, "forcerange")?;
            spec.act.actlimited = resolve(spec.actlimited, spec.act.actrange, "actrange")?;
            check_muscle(&own, &spec.act)?;
            out.push(spec.act);
        }
        Ok(out)
    }

    // --------------------------------------------------------------------------------------------
    // Keyframes and contact
    // --------------------------------------------------------------------------------------------

    /// `<keyframe>`: named states; missing parts default to MuJoCo's (`qpos0`, zeros).
    pub(crate) fn read_keyframes(&mut self, e: &'d Elem, model: &Model) -> Result<Vec<Keyframe>> {
        let doc = self.doc;
        self.check_attrs(e, &[])?;
        let na = model.actuators.iter().filter(|a| a.dyntype != DynType::None).count();
        let mut out = Vec::new();
        for &c in &e.children {
            let k = &doc.elems[c];
            check_leaf(doc, k)?;
            if k.tag != "key" {
                return Err(self.err_elem(k, format!("element <{}> is not allowed inside <keyframe>", esc(&k.tag))));
            }
            self.check_attrs(k, &["name", "time", "qpos", "qvel", "act", "ctrl", "mpos", "mquat"])?;
            let a = Attrs::direct(&doc.files, k);
            let vec_of = |key: &str, n: usize, default: Vec<f64>| -> Result<Vec<f64>> {
                match a.reals(key)? {
                    None => Ok(default),
                    Some(v) if v.len() == n => Ok(v),
                    Some(v) => Err(a.err_key(key, format!("expected {n} numbers, got {}", v.len()))),
                }
            };
            for key in ["mpos", "mquat"] {
                if a.has(key) {
                    return Err(a.err_key(key, "the model has no mocap bodies"));
                }
            }
            out.push(Keyframe {
                name: a.string("name").unwrap_or_default(),
                time: a.real("time")?.unwrap_or(0.0),
                qpos: vec_of("qpos", model.nq, model.qpos0.as_slice().to_vec())?,
                qvel: vec_of("qvel", model.nv, vec![0.0; model.nv])?,
                act: vec_of("act", na, vec![0.0; na])?,
                ctrl: vec_of("ctrl", model.actuators.len(), vec![0.0; model.actuators.len()])?,
            });
        }
        Ok(out)
    }

    /// `<contact>`: explicit `<pair>`s and body `<exclude>`s.
    pub(crate) fn read_contact(&mut self, e: &'d Elem, model: &mut Model) -> Result<()> {
        let doc = self.doc;
        self.check_attrs(e, &[])?;
        for &c in &e.children {
            let p = &doc.elems[c];
            check_leaf(doc, p)?;
            match p.tag.as_str() {
                "exclude" => {
                    self.check_attrs(p, &["name", "body1", "body2"])?;
                    let a = Attrs::direct(&doc.files, p);
                    let body = |key: &str| -> Result<usize> {
                        match a.last(key) {
                            Some(src) => match self.body_index.get(src.value.as_str()) {
                                Some(&b) => Ok(model.mj_body_last[b]),
                                None => Err(a.err_attr(key, src, "unknown body")),
                            },
                            None => Err(a.err(format!("required attribute '{key}' is missing"))),
                        }
                    };
                    let pair = (body("body1")?, body("body2")?);
                    model.contact_excludes.push(pair);
                }
                "pair" => {
                    let mut list: Vec<&str> = PAIR_ATTRS.to_vec();
                    list.extend(["name", "class", "geom1", "geom2"]);
                    self.check_attrs(p, &list)?;
                    let class = self.class_of(p, 0)?;
                    let a = self.resolved(p, "pair", class);
                    let geom = |key: &str| -> Result<usize> {
                        match a.last(key) {
                            Some(src) => model
                                .geoms
                                .iter()
                                .position(|g| g.name == src.value)
                                .ok_or_else(|| a.err_attr(key, src, "unknown geom")),
                            None => Err(a.err(format!("required attribute '{key}' is missing"))),
                        }
                    };
                    let (g1, g2) = (geom("geom1")?, geom("geom2")?);
                    // MuJoCo 4.0 gives what a pair leaves out its own defaults (condim 3,
                    // friction 1 1 0.005 1e-4 1e-4, the default solref and solimp, margin and
                    // gap 0), not values derived from the two geoms (measured)
                    let condim = a.int("condim")?.map_or(3, |c| c as usize);
                    if ![1, 3, 4, 6].contains(&condim) {
                        return Err(a.err_key("condim", "condim must be 1, 3, 4 or 6"));
                    }
                    let friction = a.partial::<5>("friction", [1.0, 1.0, 0.005, 0.0001, 0.0001])?;
                    model.contact_pairs.push(ContactPair {
                        name: a.string("name").unwrap_or_default(),
                        geom1: g1,
                        geom2: g2,
                        condim,
                        friction,
                        params: solver_params(&a, "solref", "solimp")?,
                        solreffriction: a.partial::<2>("solreffriction", [0.0, 0.0])?,
                        margin: a.real("margin")?.unwrap_or(0.0),
                        gap: a.real("gap")?.unwrap_or(0.0),
                    });
                }
                other => {
                    return Err(self.err_elem(p, format!("element <{}> is not allowed inside <contact>", esc(other))))
                }
            }
        }
        Ok(())
    }
}

/// Applies one layer of actuator attributes (a default class's `<tag>` or the element itself)
/// the way MuJoCo's reader does: the common attributes, then the shortcut's implied gain, bias
/// and dynamics (`mjs_setToMotor`, `mjs_setToPosition`, `mjs_setToVelocity`).
fn apply_actuator_layer(tag: &str, a: &Attrs, s: &mut ActSpec) -> Result<()> {
    if let Some(r) = a.vec::<2>("ctrlrange")? {
        s.act.ctrlrange = r;
    }
    if let Some(r) = a.vec::<2>("forcerange")? {
        s.act.forcerange = r;
    }
    if let Some(r) = a.vec::<2>("actrange")? {
        s.act.actrange = r;
    }
    if let Some(l) = limited_kw(a, "ctrllimited")? {
        s.ctrllimited = l;
    }
    if let Some(l) = limited_kw(a, "forcelimited")? {
        s.forcelimited = l;
    }
    if let Some(l) = limited_kw(a, "actlimited")? {
        s.actlimited = l;
    }
    s.act.gear = a.partial::<6>("gear", s.act.gear)?;
    if a.has("actdim") {
        return Err(a.err_key("actdim", "not implemented"));
    }
    if a.boolean("actearly")? == Some(true) {
        return Err(a.err_key("actearly", "using the next activation in the force is not implemented"));
    }
    if let Some(c) = a.real("cranklength")? {
        s.act.cranklength = c;
    }
    if a.has("lengthrange") {
        s.act.lengthrange = a.vec::<2>("lengthrange")?.unwrap_or(s.act.lengthrange);
    }
    if a.real("inheritrange")?.is_some_and(|x| x != 0.0) {
        return Err(a.err_key("inheritrange", "inheriting the joint range is not implemented"));
    }
    match tag {
        "general" => {
            if let Some(k) = a.keyword(
                "dyntype",
                &["none", "integrator", "filter", "filterexact", "muscle", "user"],
            )? {
                s.act.dyntype = match k {
                    "none" => DynType::None,
                    "integrator" => DynType::Integrator,
                    "filter" => DynType::Filter,
                    "filterexact" => DynType::FilterExact,
                    "muscle" => DynType::Muscle,
                    _ => return Err(a.err_key("dyntype", "user dynamics are not supported")),
                };
            }
            if let Some(k) = a.keyword("gaintype", &["fixed", "affine", "muscle", "user"])? {
                s.act.gaintype = match k {
                    "fixed" => GainType::Fixed,
                    "affine" => GainType::Affine,
                    "muscle" => GainType::Muscle,
                    _ => return Err(a.err_key("gaintype", "user gains are not supported")),
                };
            }
            if let Some(k) = a.keyword("biastype", &["none", "affine", "muscle", "user"])? {
                s.act.biastype = match k {
                    "none" => BiasType::None,
                    "affine" => BiasType::Affine,
                    "muscle" => BiasType::Muscle,
                    _ => return Err(a.err_key("biastype", "user biases are not supported")),
                };
            }
            s.act.dynprm = partial10(a, "dynprm", s.act.dynprm)?;
            s.act.gainprm = partial10(a, "gainprm", s.act.gainprm)?;
            s.act.biasprm = partial10(a, "biasprm", s.act.biasprm)?;
        }
        "motor" => {
            s.act.gainprm[0] = 1.0;
            s.act.dyntype = DynType::None;
            s.act.gaintype = GainType::Fixed;
            s.act.biastype = BiasType::None;
        }
        "position" => {
            let kp = a.real("kp")?.unwrap_or(s.act.gainprm[0]);
            let kv = a.nonneg("kv", 0.0)?;
            if kp < 0.0 {
                return Err(a.err_key("kp", "must be >= 0"));
            }
            s.act.gainprm = [0.0; 10];
            s.act.gainprm[0] = kp;
            s.act.biasprm = [0.0; 10];
            s.act.biasprm[1] = -kp;
            s.act.biasprm[2] = -kv;
            s.act.dyntype = DynType::None;
            s.act.gaintype = GainType::Fixed;
            s.act.biastype = BiasType::Affine;
        }
        "velocity" => {
            let kv = a.real("kv")?.unwrap_or(s.act.gainprm[0]);
            if kv < 0.0 {
                return Err(a.err_key("kv", "must be >= 0"));
            }
            s.act.gainprm = [0.0; 10];
            s.act.gainprm[0] = kv;
            s.act.biasprm = [0.0; 10];
            s.act.biasprm[2] = -kv;
            s.act.dyntype = DynType::None;
            s.act.gaintype = GainType::Fixed;
            s.act.biastype = BiasType::Affine;
        }
        "muscle" => apply_muscle(a, &mut s.act)?,
        _ => {}
    }
    if tag != "muscle" {
        for key in MUSCLE_ONLY_ATTRS {
            if a.has(key) {
                return Err(a.err_key(key, format!("<{tag}> does not take '{key}' (only <muscle> does)")));
            }
        }
    }
    if tag != "general" {
        for key in ["dyntype", "gaintype", "biastype", "dynprm", "gainprm", "biasprm"] {
            if a.has(key) {
                return Err(a.err_key(key, format!("<{tag}> does not take '{key}' (use <general>)")));
            }
        }
    }
    if s.act.dynprm[0] < mjMINVAL && matches!(s.act.dyntype, DynType::Filter | DynType::FilterExact) {
        return Err(a.err_maybe("dynprm", "a filter needs a positive time constant dynprm[0]"));
    }
    Ok(())
}

/// MuJoCo's `mjs_setToMuscle` for one layer: parameters still at the global defaults of
/// `<general>` take the muscle defaults (time constants 0.01 and 0.04 s, `range` 0.75..1.05,
/// `force` -1 (automatic), `scale` 200, `lmin` 0.5, `lmax` 1.6, `vmax` 1.5, `fpmax` 1.3,
/// `fvmax` 1.2), then the attributes given here override them; `biasprm = gainprm` and all
/// three types become muscle. `dynprm = (tau_act, tau_deact, tausmooth)`, `gainprm = (range,
/// force, scale, lmin, lmax, vmax, fpmax, fvmax)`.
fn apply_muscle(a: &Attrs, act: &mut Actuator) -> Result<()> {
    let defaults = [0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2];
    let globals = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    if act.dynprm[0] == 1.0 {
        act.dynprm[0] = 0.01;
    }
    if act.dynprm[1] == 0.0 {
        act.dynprm[1] = 0.04;
    }
    for k in 0..9 {
        if act.gainprm[k] == globals[k] {
            act.gainprm[k] = defaults[k];
        }
    }
    if let Some(t) = a.real("tausmooth")? {
        if t < 0.0 {
            return Err(a.err_key("tausmooth", "muscle tausmooth cannot be negative"));
        }
        act.dynprm[2] = t;
    }
    // as MuJoCo's reader: a negative value leaves the parameter as it was
    let set = |x: f64, slot: &mut f64| {
        if x >= 0.0 {
            *slot = x;
        }
    };
    if let Some(t) = a.vec::<2>("timeconst")? {
        set(t[0], &mut act.dynprm[0]);
        set(t[1], &mut act.dynprm[1]);
    }
    if let Some(r) = a.vec::<2>("range")? {
        set(r[0], &mut act.gainprm[0]);
        set(r[1], &mut act.gainprm[1]);
    }
    for (k, key) in ["force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"]
        .iter()
        .enumerate()
    {
        if let Some(x) = a.real(key)? {
            set(x, &mut act.gainprm[k + 2]);
        }
    }
    act.biasprm[..9].copy_from_slice(&act.gainprm[..9]);
    act.dyntype = DynType::Muscle;
    act.gaintype = GainType::Muscle;
    act.biastype = BiasType::Muscle;
    Ok(())
}

/// MuJoCo's compile-time checks of a muscle gain or bias (`mjCActuator::Compile`): `range[0] <
/// range[1]`, `lmin < 1 < lmax`, positive `scale`, `vmax`, `fpmax`, `fvmax`. A missing
/// `lengthrange` is computed later by `mbd::mujoco::lengthrange::set_length_range` (MuJoCo's
/// `mj_setLengthRange`).
fn check_muscle(a: &Attrs, act: &Actuator) -> Result<()> {
    let prms = [
        (act.gaintype == GainType::Muscle, &act.gainprm),
        (act.biastype == BiasType::Muscle, &act.biasprm),
    ];
    for (_, prm) in prms.iter().filter(|(on, _)| *on) {
        if prm[0] >= prm[1] {
            return Err(a.err("range[0]<range[1] required in muscle"));
        }
        if prm[4] >= 1.0 || prm[5] <= 1.0 {
            return Err(a.err("lmin<1<lmax required in muscle"));
        }
        if prm[3] <= 0.0 || prm[6] <= 0.0 || prm[7] <= 0.0 || prm[8] <= 0.0 {
            return Err(a.err("positive scale, vmax, fpmax, fvmax required in muscle"));
        }
    }
    Ok(())
}
