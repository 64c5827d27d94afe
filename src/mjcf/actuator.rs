//! The `<actuator>` reader (MuJoCo's `xml_native_reader.cc`: `OneActuator`): `general` and the
//! shortcuts `motor`, `position`, `velocity`, `intvelocity`, `damper`, `cylinder` and `muscle`,
//! each turned into a general actuator with the gains, biases and dynamics of its table (MuJoCo's
//! `mjs_setTo*`), through the default classes by MuJoCo 4.0's rule, and checked as
//! `mjCActuator::Compile` checks them.
//!
//! # Default classes (MuJoCo 4.0)
//!
//! Each class holds one actuator default. It starts as its parent's (the main class's as
//! MuJoCo's built-in `general` actuator) and takes the class's actuator elements in order, each
//! applied as an actuator element is:
//! - the element starts from the default it is applied to, so every mechanical attribute
//!   (`ctrlrange`, `gear`, `forcerange`, ...) of the class reaches it, whatever the default was
//!   written with;
//! - `general` keeps the raw gain, bias and dynamics parameters it starts with and sets those
//!   it is given;
//! - a shortcut takes its own parameters (`kp`, `kv`, `area`, ...) from the nearest default
//!   that can lend them, the class's own first and then its ancestors': one written with the
//!   same shortcut, or with `general` and the shortcut's gain type (whose raw parameters are
//!   read as the shortcut's: `kp = gainprm[0]`, `kv = -biasprm[2]`, ...); without one it uses
//!   its documented defaults. Then it overwrites every gain, bias and dynamics parameter with
//!   its table. So a `motor` in a class whose default is a `position` is a plain motor with the
//!   class's `ctrlrange`.

use super::attrs::{check_leaf, join, limited_kw, Attrs, Limited};
use super::reader::Reader;
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::constants::mjMINVAL;
use crate::model::{Actuator, BiasType, DynType, GainType, Model, Transmission};
use std::collections::HashMap;

/// What every actuator element takes besides its name, class and transmission (`damper` all
/// but `ctrllimited`: its control is always limited).
const COMMON_ATTRS: [&str; 9] = [
    "group",
    "gear",
    "user",
    "cranklength",
    "lengthrange",
    "ctrllimited",
    "forcelimited",
    "ctrlrange",
    "forcerange",
];

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

const GENERAL_ATTRS: [&str; 20] = join(&[
    &COMMON_ATTRS,
    &[
        "actlimited",
        "actrange",
        "dyntype",
        "gaintype",
        "biastype",
        "dynprm",
        "gainprm",
        "biasprm",
        "actearly",
        "actdim",
        "inheritrange",
    ],
]);
const POSITION_ATTRS: [&str; 14] = join(&[&COMMON_ATTRS, &["kp", "kv", "dampratio", "timeconst", "inheritrange"]]);
const VELOCITY_ATTRS: [&str; 10] = join(&[&COMMON_ATTRS, &["kv"]]);
const INTVELOCITY_ATTRS: [&str; 15] = join(&[
    &COMMON_ATTRS,
    &["kp", "kv", "dampratio", "inheritrange", "actlimited", "actrange"],
]);
const DAMPER_ATTRS: [&str; 9] = join(&[
    &[
        "group",
        "gear",
        "user",
        "cranklength",
        "lengthrange",
        "forcelimited",
        "ctrlrange",
        "forcerange",
    ],
    &["kv"],
]);
const CYLINDER_ATTRS: [&str; 13] = join(&[&COMMON_ATTRS, &["timeconst", "area", "diameter", "bias"]]);
const MUSCLE_ATTRS: [&str; 19] = join(&[&COMMON_ATTRS, &MUSCLE_ONLY_ATTRS]);

/// The attributes of the transmission and identity, which only the element itself takes.
const OWN_ATTRS: [&str; 10] = [
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
];

/// The actuator elements read here (MuJoCo's `mjtActuator`, the element an actuator is written
/// with); the others (`adhesion`, `pid`, `orientation`, `dcmotor`, `plugin`) are errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shortcut {
    General,
    Motor,
    Position,
    Velocity,
    IntVelocity,
    Damper,
    Cylinder,
    Muscle,
}

/// Every actuator element read, in MuJoCo's order.
const SHORTCUTS: [Shortcut; 8] = [
    Shortcut::General,
    Shortcut::Motor,
    Shortcut::Position,
    Shortcut::Velocity,
    Shortcut::IntVelocity,
    Shortcut::Damper,
    Shortcut::Cylinder,
    Shortcut::Muscle,
];

impl Shortcut {
    /// The element of tag `tag`.
    pub(crate) fn parse(tag: &str) -> Option<Self> {
        SHORTCUTS.into_iter().find(|s| s.tag() == tag)
    }

    /// Its tag.
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Shortcut::General => "general",
            Shortcut::Motor => "motor",
            Shortcut::Position => "position",
            Shortcut::Velocity => "velocity",
            Shortcut::IntVelocity => "intvelocity",
            Shortcut::Damper => "damper",
            Shortcut::Cylinder => "cylinder",
            Shortcut::Muscle => "muscle",
        }
    }

    /// The attributes its element (and its default) takes besides its name, class and
    /// transmission (MuJoCo's schema; a default takes neither `lengthrange` nor a muscle's
    /// `tausmooth`).
    pub(crate) fn attrs(self) -> &'static [&'static str] {
        match self {
            Shortcut::General => &GENERAL_ATTRS,
            Shortcut::Motor => &COMMON_ATTRS,
            Shortcut::Position => &POSITION_ATTRS,
            Shortcut::Velocity => &VELOCITY_ATTRS,
            Shortcut::IntVelocity => &INTVELOCITY_ATTRS,
            Shortcut::Damper => &DAMPER_ATTRS,
            Shortcut::Cylinder => &CYLINDER_ATTRS,
            Shortcut::Muscle => &MUSCLE_ATTRS,
        }
    }

    /// The gain type of its table: a `general` default with this gain type lends it its raw
    /// parameters (`None` for `general` itself).
    fn gain(self) -> Option<GainType> {
        match self {
            Shortcut::General => None,
            Shortcut::Damper => Some(GainType::Affine),
            Shortcut::Muscle => Some(GainType::Muscle),
            _ => Some(GainType::Fixed),
        }
    }
}

/// An actuator (or a class's actuator default) while its elements are applied.
#[derive(Clone, Debug)]
pub(crate) struct ActSpec {
    act: Actuator,
    ctrllimited: Limited,
    forcelimited: Limited,
    actlimited: Limited,
    /// The element it was last written with (MuJoCo's `mjsActuator.type`).
    written: Shortcut,
    /// `inheritrange` (0: off): the control range (the activation range of an integrator) taken
    /// from the transmission's joint or tendon range, scaled about its midpoint.
    inheritrange: f64,
}

impl ActSpec {
    /// MuJoCo's built-in actuator default: a `general` actuator with unit fixed gain, no bias,
    /// no dynamics (`dynprm[0] = 1`), nothing limited (`auto`).
    fn builtin() -> Self {
        ActSpec {
            act: Actuator {
                name: String::new(),
                trn: Transmission::Joint(0),
                gear: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                cranklength: 0.0,
                dyntype: DynType::None,
                dynprm: unit10(1.0),
                gaintype: GainType::Fixed,
                gainprm: unit10(1.0),
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
            written: Shortcut::General,
            inheritrange: 0.0,
        }
    }

    /// Whether shortcut `s` takes its parameters from this default: written with `s`, or with
    /// `general` and `s`'s gain type.
    fn lends_to(&self, s: Shortcut) -> bool {
        self.written == s || (self.written == Shortcut::General && s.gain() == Some(self.act.gaintype))
    }
}

/// `[x, 0, ..., 0]`.
fn unit10(x: f64) -> [f64; 10] {
    let mut v = [0.0; 10];
    v[0] = x;
    v
}

fn partial10(a: &Attrs, key: &str, init: [f64; 10]) -> Result<[f64; 10]> {
    a.partial::<10>(key, init)
}

impl<'d> Reader<'d> {
    /// The actuator default of every class (MuJoCo 4.0's rule, see the module documentation),
    /// into `self.act_defaults`: a class's parent comes before it, so one pass in class order
    /// sees every parent's final default. A bad value in a default is an error here, used or
    /// not, as in MuJoCo.
    pub(crate) fn read_actuator_defaults(&mut self) -> Result<()> {
        let doc = self.doc;
        let mut out: Vec<ActSpec> = Vec::with_capacity(self.classes.len());
        for c in 0..self.classes.len() {
            let class = &self.classes[c];
            let mut running = match class.parent {
                Some(p) => out[p].clone(),
                None => ActSpec::builtin(),
            };
            let ancestors = self.ancestors(c);
            for &el in &class.actuators {
                let e = &doc.elems[el];
                let sc = Shortcut::parse(&e.tag).expect("only actuator elements are kept");
                let mut layer = Attrs::direct(&doc.files, e);
                for src in layer.map.values_mut().flatten() {
                    src.class = Some(class.name.clone());
                }
                let lenders: Vec<&ActSpec> = ancestors.iter().map(|&p| &out[p]).collect();
                running = apply_element(sc, &layer, &running, &lenders)?;
            }
            out.push(running);
        }
        self.act_defaults = out;
        Ok(())
    }

    /// The ancestors of class `c`, nearest first.
    fn ancestors(&self, c: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = self.classes[c].parent;
        while let Some(p) = at {
            out.push(p);
            at = self.classes[p].parent;
        }
        out
    }

    /// Attribute names of an actuator element (or default) of kind `sc`: one another actuator
    /// element takes is named as such; the rest go to [`Reader::check_class_attrs`] (visual
    /// ones skipped with a warning, unknown ones errors).
    pub(crate) fn check_actuator_attrs(&mut self, e: &Elem, sc: Shortcut, own: &[&str]) -> Result<()> {
        let list = sc.attrs();
        for a in &e.attrs {
            let name = a.name.as_str();
            if list.contains(&name) || own.contains(&name) {
                continue;
            }
            if let Some(other) = SHORTCUTS.into_iter().find(|s| s.attrs().contains(&name)) {
                let why = if sc == Shortcut::Damper && name == "ctrllimited" {
                    "<damper> does not take 'ctrllimited' (its control is always limited)".to_string()
                } else {
                    format!("<{}> does not take '{}' (<{}> does)", sc.tag(), esc(name), other.tag())
                };
                return Err(self.err_at(e.file, a.line, format!("{}: {why}", e.describe())));
            }
        }
        self.check_class_attrs(e, list, own)
    }

    /// `<actuator>`: every element built from its class's default ([`Reader::read_actuator_defaults`])
    /// and its own attributes as MuJoCo's `OneActuator` builds it, then its transmission and
    /// MuJoCo's compile-time checks of the ranges.
    pub(crate) fn read_actuators(
        &mut self,
        e: &'d Elem,
        model: &Model,
        joint_fs: &HashMap<String, usize>,
    ) -> Result<Vec<Actuator>> {
        let doc = self.doc;
        self.check_attrs(e, &[])?;
        let mut out = Vec::new();
        for &c in &e.children {
            let ae = &doc.elems[c];
            check_leaf(doc, ae)?;
            let tag = ae.tag.as_str();
            let Some(sc) = Shortcut::parse(tag) else {
                let why = if tag == "adhesion" {
                    "actuator <adhesion> is not supported: its force acts through the contacts of a body (the body transmission), which are not implemented".to_string()
                } else {
                    format!(
                        "actuator <{}> is not supported (only general, motor, position, velocity, intvelocity, damper, cylinder and muscle)",
                        esc(tag)
                    )
                };
                return Err(self.err_elem(ae, why));
            };
            self.check_actuator_attrs(ae, sc, &OWN_ATTRS)?;
            let class = self.class_of(ae, 0)?;
            let lenders: Vec<&ActSpec> = self.ancestors(class).iter().map(|&p| &self.act_defaults[p]).collect();
            let own = Attrs::direct(&doc.files, ae);
            let mut spec = apply_element(sc, &own, &self.act_defaults[class], &lenders)?;
            spec.act.name = ae.attr("name").unwrap_or_default().to_string();
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
            if spec.inheritrange > 0.0 {
                inherit_range(&own, &mut spec, model)?;
            }
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
            if spec.act.actlimited && spec.act.dyntype == DynType::None {
                return Err(own.err_maybe(
                    "actrange",
                    "an activation range needs activation dynamics (this actuator's dyntype is none)",
                ));
            }
            check_muscle(&own, &spec.act)?;
            out.push(spec.act);
        }
        Ok(out)
    }
}

/// MuJoCo's `inheritrange`: a position servo ([`Actuator::is_position_servo`]) on a
/// joint or tendon with a range `[lo, hi]` gets the control range (the activation range, for an
/// `intvelocity`'s integrator) `mid -+ X (hi - lo) / 2` about the midpoint, `X` the
/// `inheritrange`, and that range limited; the joint's range is the compiled one (radians for
/// angles). Exclusive with the range it sets; a transmission without a range is an error. Other
/// actuators are left as they are, as MuJoCo leaves them.
fn inherit_range(a: &Attrs, s: &mut ActSpec, model: &Model) -> Result<()> {
    if !s.act.is_position_servo() {
        return Ok(());
    }
    let integrator = s.act.dyntype == DynType::Integrator;
    let key = if integrator { "actrange" } else { "ctrlrange" };
    if a.has(key) {
        return Err(a.err_key("inheritrange", format!("inheritrange and {key} cannot both be given")));
    }
    let range = match s.act.trn {
        Transmission::Joint(j) | Transmission::JointInParent(j) => {
            let joint = &model.joints[j];
            (joint.limited && joint.jtype.nq() == 1).then_some(joint.range)
        }
        Transmission::Tendon(t) => model.tendons[t].limited.then_some(model.tendons[t].range),
        _ => None,
    };
    let Some([lo, hi]) = range else {
        return Err(a.err_key(
            "inheritrange",
            "inheritrange needs a joint or tendon transmission whose target has a range",
        ));
    };
    let (mid, half) = (0.5 * (lo + hi), 0.5 * (hi - lo) * s.inheritrange);
    if integrator {
        s.act.actrange = [mid - half, mid + half];
        s.actlimited = Limited::True;
    } else {
        s.act.ctrlrange = [mid - half, mid + half];
        s.ctrllimited = Limited::True;
    }
    Ok(())
}

// ANCHOR: apply_element
/// One actuator element (of a default class, or the actuator itself) of kind `sc` with
/// attributes `a`, applied to `base` (the class's default as built so far) as MuJoCo's
/// `OneActuator` applies it: the common attributes, then `general`'s explicit parameters or a
/// shortcut's table. A shortcut's parameters not given in `a` come from the nearest of `base`
/// and `ancestors` (the ancestor classes' defaults, nearest first) that lends them
/// ([`ActSpec::lends_to`]), else from its documented defaults.
fn apply_element(sc: Shortcut, a: &Attrs, base: &ActSpec, ancestors: &[&ActSpec]) -> Result<ActSpec> {
    let mut s = base.clone();
    apply_common(a, &mut s)?;
    let lender = std::iter::once(base)
        .chain(ancestors.iter().copied())
        .find(|d| d.lends_to(sc))
        .map(|d| &d.act);
    let act = &mut s.act;
    let mut limit_ctrl = false;
    match sc {
        Shortcut::General => apply_general(a, act)?,
        Shortcut::Motor => set_table(
            act,
            (DynType::None, 1.0),
            (GainType::Fixed, 1.0),
            (BiasType::None, [0.0; 3]),
        ),
        Shortcut::Position | Shortcut::IntVelocity => {
            // kp = gainprm[0]; biasprm[2] is -kv (or, positive, a damping ratio); a position's
            // time constant is dynprm[0] of a filterexact
            let (kp, b2, tc) = lender.map_or((1.0, 0.0, None), |p| {
                let tc = (p.dyntype == DynType::FilterExact).then_some(p.dynprm[0]);
                (p.gainprm[0], p.biasprm[2], tc)
            });
            let kp = a.real("kp")?.unwrap_or(kp);
            let b2 = servo_damping(a, b2)?;
            let (dyntype, dyn0) = if sc == Shortcut::IntVelocity {
                (DynType::Integrator, 1.0)
            } else {
                let tc = match a.real("timeconst")? {
                    Some(t) if t < 0.0 => return Err(a.err_key("timeconst", "timeconst cannot be negative")),
                    Some(t) => Some(t),
                    None => tc,
                };
                match tc {
                    Some(t) if t > 0.0 => (DynType::FilterExact, t),
                    Some(t) => (DynType::None, t),
                    None => (DynType::None, 1.0),
                }
            };
            set_table(
                act,
                (dyntype, dyn0),
                (GainType::Fixed, kp),
                (BiasType::Affine, [0.0, -kp, b2]),
            );
        }
        Shortcut::Velocity => {
            let kv = a.real("kv")?.unwrap_or(lender.map_or(1.0, |p| p.gainprm[0]));
            set_table(
                act,
                (DynType::None, 1.0),
                (GainType::Fixed, kv),
                (BiasType::Affine, [0.0, 0.0, -kv]),
            );
        }
        Shortcut::Damper => {
            // MuJoCo 4.0 reads an omitted kv without a lender as 0 (its documentation says 1)
            let kv = a.real("kv")?.unwrap_or(lender.map_or(0.0, |p| -p.gainprm[2]));
            set_table(
                act,
                (DynType::None, 1.0),
                (GainType::Affine, 0.0),
                (BiasType::None, [0.0; 3]),
            );
            act.gainprm[2] = -kv;
            limit_ctrl = true;
            if kv < 0.0 {
                return Err(a.err_maybe("kv", "the damping coefficient kv cannot be negative"));
            }
            if act.ctrlrange[0] < 0.0 || act.ctrlrange[1] < 0.0 {
                return Err(a.err_maybe("ctrlrange", "a damper's control range cannot be negative"));
            }
        }
        Shortcut::Cylinder => {
            let (tc, area, bias) = lender.map_or((1.0, 1.0, [0.0; 3]), |p| {
                (p.dynprm[0], p.gainprm[0], [p.biasprm[0], p.biasprm[1], p.biasprm[2]])
            });
            let tc = a.real("timeconst")?.unwrap_or(tc);
            let mut area = a.real("area")?.unwrap_or(area);
            // a diameter (when not negative) wins over the area
            if let Some(d) = a.real("diameter")?.filter(|&d| d >= 0.0) {
                area = std::f64::consts::PI / 4.0 * d * d;
            }
            let bias = a.vec::<3>("bias")?.unwrap_or(bias);
            set_table(
                act,
                (DynType::Filter, tc),
                (GainType::Fixed, area),
                (BiasType::Affine, bias),
            );
        }
        Shortcut::Muscle => apply_muscle(a, lender, act)?,
    }
    if limit_ctrl {
        s.ctrllimited = Limited::True;
    }
    s.written = sc;
    if s.act.dynprm[0] < mjMINVAL && matches!(s.act.dyntype, DynType::Filter | DynType::FilterExact) {
        let key = if sc == Shortcut::General { "dynprm" } else { "timeconst" };
        return Err(a.err_maybe(key, "a filter needs a positive time constant (dynprm[0])"));
    }
    Ok(s)
}
// ANCHOR_END: apply_element

/// The attributes every actuator element may take: the ranges and their `limited` flags,
/// `gear`, `cranklength`, `lengthrange`, `inheritrange` (resolved once the transmission is known,
/// [`inherit_range`]); `actdim` and `actearly="true"` are errors (not implemented).
fn apply_common(a: &Attrs, s: &mut ActSpec) -> Result<()> {
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
    if let Some(r) = a.vec::<2>("lengthrange")? {
        s.act.lengthrange = r;
    }
    if let Some(x) = a.real("inheritrange")? {
        if x < 0.0 {
            return Err(a.err_key("inheritrange", "inheritrange cannot be negative"));
        }
        s.inheritrange = x;
    }
    Ok(())
}

/// `<general>`: the types and parameters given (each parameter array overwriting the leading
/// entries it gives); the rest stay as inherited.
fn apply_general(a: &Attrs, act: &mut Actuator) -> Result<()> {
    act.dyntype = type_keyword(a, "dyntype", &DYN_TYPES, "dynamics")?.unwrap_or(act.dyntype);
    act.gaintype = type_keyword(a, "gaintype", &GAIN_TYPES, "gains")?.unwrap_or(act.gaintype);
    act.biastype = type_keyword(a, "biastype", &BIAS_TYPES, "biases")?.unwrap_or(act.biastype);
    act.dynprm = partial10(a, "dynprm", act.dynprm)?;
    act.gainprm = partial10(a, "gainprm", act.gainprm)?;
    act.biasprm = partial10(a, "biasprm", act.biasprm)?;
    Ok(())
}

/// A servo's `biasprm[2]` (`position`, `intvelocity`): `-kv` for a given `kv`, a given
/// `dampratio` as it is (positive: MuJoCo's encoding of a damping ratio, which
/// [`crate::dynamics::set_dampratio`] turns into a damping when [`crate::mujoco::load`] compiles
/// the model), else the inherited `b2`. Neither may be negative, and not both given.
fn servo_damping(a: &Attrs, b2: f64) -> Result<f64> {
    let kv = a.real("kv")?;
    let ratio = a.real("dampratio")?;
    if kv.is_some() && ratio.is_some() {
        return Err(a.err_key("dampratio", "kv and dampratio cannot both be given"));
    }
    match (kv, ratio) {
        (Some(kv), _) if kv < 0.0 => Err(a.err_key("kv", "kv cannot be negative")),
        (Some(kv), _) => Ok(-kv),
        (_, Some(r)) if r < 0.0 => Err(a.err_key("dampratio", "dampratio cannot be negative")),
        (_, Some(r)) => Ok(r),
        (None, None) => Ok(b2),
    }
}

/// A shortcut's table (MuJoCo's `mjs_setTo*`): every dynamics, gain and bias parameter reset,
/// then `dynprm[0]`, `gainprm[0]` and `biasprm[0..3]` set.
fn set_table(act: &mut Actuator, dynamics: (DynType, f64), gain: (GainType, f64), bias: (BiasType, [f64; 3])) {
    (act.dyntype, act.dynprm) = (dynamics.0, unit10(dynamics.1));
    (act.gaintype, act.gainprm) = (gain.0, unit10(gain.1));
    act.biastype = bias.0;
    act.biasprm = [0.0; 10];
    act.biasprm[..3].copy_from_slice(&bias.1);
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

/// The documented muscle parameters: `dynprm = (tau_act, tau_deact, tausmooth)` and `gainprm =
/// (range, force, scale, lmin, lmax, vmax, fpmax, fvmax)`.
const MUSCLE_DYNPRM: [f64; 3] = [0.01, 0.04, 0.0];
const MUSCLE_GAINPRM: [f64; 9] = [0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2];

/// MuJoCo's `mjs_setToMuscle` as 4.0 applies it: the time constants, `tausmooth` and the nine
/// gain parameters come from the lender (`dynprm[0..3]`, `gainprm[0..9]`) or the documented
/// defaults (time constants 0.01 and 0.04 s, `range` 0.75..1.05, `force` -1 (automatic),
/// `scale` 200, `lmin` 0.5, `lmax` 1.6, `vmax` 1.5, `fpmax` 1.3, `fvmax` 1.2); a value given
/// here replaces them, a negative one resets it to the documented default; `biasprm = gainprm`
/// and all three types become muscle.
fn apply_muscle(a: &Attrs, lender: Option<&Actuator>, act: &mut Actuator) -> Result<()> {
    let (mut dynprm, mut gainprm) = (MUSCLE_DYNPRM, MUSCLE_GAINPRM);
    if let Some(p) = lender {
        dynprm.copy_from_slice(&p.dynprm[..3]);
        gainprm.copy_from_slice(&p.gainprm[..9]);
    }
    if let Some(t) = a.real("tausmooth")? {
        if t < 0.0 {
            return Err(a.err_key("tausmooth", "muscle tausmooth cannot be negative"));
        }
        dynprm[2] = t;
    }
    let set = |x: f64, slot: &mut f64, default: f64| *slot = if x >= 0.0 { x } else { default };
    if let Some(t) = a.vec::<2>("timeconst")? {
        set(t[0], &mut dynprm[0], MUSCLE_DYNPRM[0]);
        set(t[1], &mut dynprm[1], MUSCLE_DYNPRM[1]);
    }
    if let Some(r) = a.vec::<2>("range")? {
        set(r[0], &mut gainprm[0], MUSCLE_GAINPRM[0]);
        set(r[1], &mut gainprm[1], MUSCLE_GAINPRM[1]);
    }
    for (k, key) in ["force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"]
        .iter()
        .enumerate()
    {
        if let Some(x) = a.real(key)? {
            set(x, &mut gainprm[k + 2], MUSCLE_GAINPRM[k + 2]);
        }
    }
    act.dynprm = [0.0; 10];
    act.dynprm[..3].copy_from_slice(&dynprm);
    act.gainprm = [0.0; 10];
    act.gainprm[..9].copy_from_slice(&gainprm);
    act.biasprm = act.gainprm;
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
