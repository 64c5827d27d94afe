//! The `<actuator>` reader (MuJoCo's `xml_native_reader.cc`: `OneActuator`): `general` and the
//! shortcuts `motor`, `position`, `velocity` and `muscle`, built layer by layer through the
//! default classes as MuJoCo's `mjs_setTo*` build them, and checked as `mjCActuator::Compile`
//! checks them.

use super::attrs::{check_leaf, join, limited_kw, Attrs, Limited};
use super::reader::Reader;
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::constants::mjMINVAL;
use crate::model::{Actuator, BiasType, DynType, GainType, Model, Transmission};
use std::collections::HashMap;

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

/// Attributes of any actuator element (besides `name`, `class` and the transmission).
pub(crate) const ACTUATOR_ATTRS: [&str; 32] = join(&[
    &[
        "group",
        "gear",
        "user",
        "kp",
        "kv",
        "cranklength",
        "lengthrange",
        "inheritrange",
    ],
    &[
        "ctrllimited",
        "forcelimited",
        "actlimited",
        "ctrlrange",
        "forcerange",
        "actrange",
    ],
    &[
        "dyntype", "gaintype", "biastype", "dynprm", "gainprm", "biasprm", "actearly", "actdim",
    ],
    &MUSCLE_ONLY_ATTRS,
]);

/// The actuator kinds read here; the others (`intvelocity`, `damper`, `cylinder`, `adhesion`)
/// are errors.
pub(crate) const ACTUATOR_TAGS: [&str; 5] = ["general", "motor", "position", "velocity", "muscle"];

/// An actuator while its layers (default classes, then the element) are applied.
struct ActSpec {
    act: Actuator,
    ctrllimited: Limited,
    forcelimited: Limited,
    actlimited: Limited,
}

fn partial10(a: &Attrs, key: &str, init: [f64; 10]) -> Result<[f64; 10]> {
    a.partial::<10>(key, init)
}

impl<'d> Reader<'d> {
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
            self.check_class_attrs(
                ae,
                &ACTUATOR_ATTRS,
                &[
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
                ],
            )?;
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
            s.act.dyntype = type_keyword(a, "dyntype", &DYN_TYPES, "dynamics")?.unwrap_or(s.act.dyntype);
            s.act.gaintype = type_keyword(a, "gaintype", &GAIN_TYPES, "gains")?.unwrap_or(s.act.gaintype);
            s.act.biastype = type_keyword(a, "biastype", &BIAS_TYPES, "biases")?.unwrap_or(s.act.biastype);
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
            set_servo(&mut s.act, kp, -kp, -kv);
        }
        "velocity" => {
            let kv = a.real("kv")?.unwrap_or(s.act.gainprm[0]);
            if kv < 0.0 {
                return Err(a.err_key("kv", "must be >= 0"));
            }
            set_servo(&mut s.act, kv, 0.0, -kv);
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

/// The servo MuJoCo's `position` and `velocity` shortcuts make (`mjs_setToPosition`,
/// `mjs_setToVelocity`): no activation dynamics, a fixed gain and an affine bias, so the force is
/// `gain ctrl + b1 length + b2 velocity`.
fn set_servo(act: &mut Actuator, gain: f64, b1: f64, b2: f64) {
    act.gainprm = [0.0; 10];
    act.gainprm[0] = gain;
    act.biasprm = [0.0; 10];
    act.biasprm[1] = b1;
    act.biasprm[2] = b2;
    act.dyntype = DynType::None;
    act.gaintype = GainType::Fixed;
    act.biastype = BiasType::Affine;
}

/// The keywords of `<general dyntype>` (MuJoCo's `mjtDyn`) but `user`.
const DYN_TYPES: [(&str, DynType); 5] = [
    ("none", DynType::None),
    ("integrator", DynType::Integrator),
    ("filter", DynType::Filter),
    ("filterexact", DynType::FilterExact),
    ("muscle", DynType::Muscle),
];
/// The keywords of `<general gaintype>` (MuJoCo's `mjtGain`) but `user`.
const GAIN_TYPES: [(&str, GainType); 3] = [
    ("fixed", GainType::Fixed),
    ("affine", GainType::Affine),
    ("muscle", GainType::Muscle),
];
/// The keywords of `<general biastype>` (MuJoCo's `mjtBias`) but `user`.
const BIAS_TYPES: [(&str, BiasType); 3] = [
    ("none", BiasType::None),
    ("affine", BiasType::Affine),
    ("muscle", BiasType::Muscle),
];

/// An actuator type attribute (`dyntype`, `gaintype`, `biastype`): one of the keywords of `table`
/// or `user`, which is an error (MuJoCo's user callbacks, `mjcb_act_*`, are not supported).
fn type_keyword<T: Copy>(a: &Attrs, key: &str, table: &[(&'static str, T)], what: &str) -> Result<Option<T>> {
    let mut keywords: Vec<&'static str> = table.iter().map(|&(k, _)| k).collect();
    keywords.push("user");
    match a.keyword(key, &keywords)? {
        None => Ok(None),
        Some("user") => Err(a.err_key(key, format!("user {what} are not supported"))),
        Some(k) => Ok(table.iter().find(|&&(name, _)| name == k).map(|&(_, t)| t)),
    }
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
