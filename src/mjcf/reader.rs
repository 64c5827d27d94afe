//! The element readers (MuJoCo's `xml_native_reader.cc`): `<compiler>`, `<option>`, the body
//! tree with its joints, geoms and inertials, `<actuator>` and `<equality>`, into the
//! intermediate specs that `compile.rs` checks and `emit.rs` turns into a [`Model`].
//!
//! The body tree is read with an explicit stack (bodies are numbered depth-first in XML order,
//! as MuJoCo numbers them), never by recursion.

use super::attrs::{check_leaf, Attrs};
use super::compile::{geom_inertia, geom_volume};
use super::defaults::Class;
use super::orientation::{normalized4, orientation, z_to_quat, ORIENTATION};
use super::xml::{esc, model_error, one_line, Doc, Elem};
use super::{Compiler, InertiaFromGeom};
use crate::error::{Error, Result};
use crate::model::constants::{mjEPS, mjMINVAL};
use crate::model::{
    Equality, Geom, GeomType, Joint, JointType, LengthRangeMode, Model, Options, SolverParams, SOLIMP_DEFAULT,
    SOLREF_DEFAULT,
};
use crate::spatial::{quat_to_mat, Mat3, Vec3};
use std::collections::HashMap;

// ------------------------------------------------------------------------------------------------
// Attribute lists
// ------------------------------------------------------------------------------------------------

pub(crate) const JOINT_ATTRS: [&str; 16] = [
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
];
pub(crate) const GEOM_ATTRS: [&str; 26] = [
    "type",
    "solref",
    "solimp",
    "solmix",
    "priority",
    "gap",
    "hfield",
    "mesh",
    "size",
    "pos",
    "quat",
    "axisangle",
    "xyaxes",
    "zaxis",
    "euler",
    "fromto",
    "friction",
    "condim",
    "contype",
    "conaffinity",
    "margin",
    "mass",
    "density",
    "group",
    "mesh",
    "hfield",
];
/// Attributes that only change how a model looks (or carry user data); skipped with a warning.
pub(crate) const COSMETIC: [&str; 3] = ["rgba", "material", "user"];

// ------------------------------------------------------------------------------------------------
// Intermediate representation (MuJoCo's numbering; MuJoCo's `mjs*` specs)
// ------------------------------------------------------------------------------------------------

/// Mass properties of a MuJoCo body in its own frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MassProps {
    pub mass: f64,
    pub com: Vec3,
    /// Rotational inertia about the centre of mass, body axes.
    pub inertia: Mat3,
    /// Principal moments (what MuJoCo's checks look at).
    pub principal: [f64; 3],
    /// The principal axes in the body frame (MuJoCo's `body_iquat`).
    pub iquat: [f64; 4],
}

impl MassProps {
    pub fn zero() -> Self {
        MassProps {
            mass: 0.0,
            com: Vec3::zeros(),
            inertia: Mat3::zeros(),
            principal: [0.0; 3],
            iquat: [1.0, 0.0, 0.0, 0.0],
        }
    }
    pub fn big_enough(&self) -> bool {
        self.mass >= mjMINVAL && self.principal.iter().all(|&p| p >= mjMINVAL)
    }
}

/// A geom with the mass properties MuJoCo gives it.
#[derive(Clone, Debug)]
pub(crate) struct GeomSpec {
    pub geom: Geom,
    pub mass: f64,
    /// Principal moments about the geom's own axes.
    pub diag: [f64; 3],
    pub group: i32,
}

/// A joint as read, with its place.
#[derive(Clone, Debug)]
pub(crate) struct JointSpec {
    pub joint: Joint,
    /// MuJoCo's `ref` (hinge, slide): the joint value at which the body has its XML pose; it
    /// becomes the joint's `qpos0`.
    pub reference: f64,
    pub file: usize,
    pub line: u32,
}

/// A MuJoCo body as read.
#[derive(Clone, Debug)]
pub(crate) struct BodySpec {
    pub name: String,
    pub file: usize,
    pub line: u32,
    pub parent: usize,
    pub pos: Vec3,
    pub quat: [f64; 4],
    pub joints: Vec<JointSpec>,
    pub geoms: Vec<GeomSpec>,
    pub mass: MassProps,
    /// True if neither this body nor any ancestor has a joint (MuJoCo's "weldid == 0").
    pub static_: bool,
}

// ------------------------------------------------------------------------------------------------
// The reader
// ------------------------------------------------------------------------------------------------

/// One warning kind: its key, where it first occurred (file, line), the count and the message.
pub(crate) struct Warning {
    key: String,
    file: usize,
    line: u32,
    count: usize,
    message: String,
}

/// The reader's state: the document, the compiler settings and classes read so far, and the
/// bodies (MuJoCo numbering) with their names.
pub(crate) struct Reader<'d> {
    pub doc: &'d Doc,
    pub warnings: Vec<Warning>,
    pub compiler: Compiler,
    pub classes: Vec<Class>,
    pub class_index: HashMap<String, usize>,
    pub opt: Options,
    pub bodies: Vec<BodySpec>,
    pub body_index: HashMap<String, usize>,
    pub joint_names: HashMap<String, u32>,
    pub geom_names: HashMap<String, u32>,
    /// `<compiler settotalmass>` (non-positive: off).
    pub settotalmass: f64,
    /// Sites as read: (MuJoCo body, name, position, orientation in the body frame).
    pub sites: Vec<(usize, String, Vec3, [f64; 4])>,
    pub site_index: HashMap<String, usize>,
    pub tendon_index: HashMap<String, usize>,
    /// Meshes and height fields of `<asset>`.
    pub assets: super::assets::AssetSet,
    /// `<compiler meshdir>`.
    pub meshdir: Option<String>,
}

impl<'d> Reader<'d> {
    pub fn new(doc: &'d Doc) -> Self {
        Reader {
            doc,
            warnings: Vec::new(),
            compiler: Compiler::default(),
            classes: Vec::new(),
            class_index: HashMap::new(),
            opt: Options::default(),
            bodies: Vec::new(),
            body_index: HashMap::new(),
            joint_names: HashMap::new(),
            geom_names: HashMap::new(),
            settotalmass: -1.0,
            sites: Vec::new(),
            site_index: HashMap::new(),
            tendon_index: HashMap::new(),
            assets: Default::default(),
            meshdir: None,
        }
    }

    pub fn err_at(&self, file: usize, line: u32, why: String) -> Error {
        model_error(&self.doc.files[file], line, why)
    }

    pub fn err_elem(&self, e: &Elem, why: impl std::fmt::Display) -> Error {
        self.err_at(e.file, e.line, format!("{}: {why}", e.describe()))
    }

    /// Records a warning; repeated warnings of the same kind are counted, not repeated.
    pub fn warn(&mut self, key: String, file: usize, line: u32, message: String) {
        if let Some(w) = self.warnings.iter_mut().find(|w| w.key == key) {
            w.count += 1;
        } else {
            self.warnings.push(Warning {
                key,
                file,
                line,
                count: 1,
                message,
            });
        }
    }

    pub fn skip_element(&mut self, e: &Elem, reason: &str) {
        let tag = esc(&e.tag);
        self.warn(
            format!("element {tag}: {reason}"),
            e.file,
            e.line,
            format!("<{tag}> skipped: {reason}"),
        );
    }

    pub fn finish_warnings(&self) -> Vec<String> {
        self.warnings
            .iter()
            .map(|w| {
                let (file, line, n, msg) = (&self.doc.files[w.file], w.line, w.count, &w.message);
                one_line(&if n > 1 {
                    format!("{file}:{line}: {msg} ({n} occurrences, first on this line)")
                } else {
                    format!("{file}:{line}: {msg}")
                })
            })
            .collect()
    }

    /// Checks an element's attribute names: `supported` pass, visual-only ones are skipped with
    /// a warning, anything else is an error naming the attribute.
    pub fn check_attrs(&mut self, e: &Elem, supported: &[&str]) -> Result<()> {
        let tag = e.tag.as_str();
        for a in &e.attrs {
            let name = a.name.as_str();
            if supported.contains(&name) {
                continue;
            }
            if COSMETIC.contains(&name) || ((tag == "joint" || tag == "freejoint") && name == "group") {
                self.warn(
                    format!("attr {tag}.{name}"),
                    e.file,
                    a.line,
                    format!("attribute '{name}' of <{tag}> skipped: visual only or user data"),
                );
                continue;
            }
            return Err(self.err_at(
                e.file,
                a.line,
                format!(
                    "{}: attribute '{}' is not supported by this reader",
                    e.describe(),
                    esc(name)
                ),
            ));
        }
        Ok(())
    }

    /// A skipped section must not hide elements that build the model (a `<body>` inside
    /// `<asset>` would vanish with its joints and mass): MuJoCo's schema allows none there.
    fn check_skipped(&self, e: &'d Elem) -> Result<()> {
        const MODEL_ELEMENTS: [&str; 11] = [
            "body",
            "worldbody",
            "frame",
            "joint",
            "freejoint",
            "geom",
            "inertial",
            "site",
            "camera",
            "light",
            "default",
        ];
        let doc = self.doc;
        let mut stack: Vec<usize> = e.children.clone();
        while let Some(c) = stack.pop() {
            let child = &doc.elems[c];
            if MODEL_ELEMENTS.contains(&child.tag.as_str()) {
                return Err(self.err_elem(
                    child,
                    format!(
                        "element <{}> is not allowed inside <{}> (MuJoCo's schema)",
                        child.tag, e.tag
                    ),
                ));
            }
            stack.extend(child.children.iter().copied());
        }
        Ok(())
    }

    /// The children of the root with tag `tag`.
    fn sections(&self, tag: &str) -> Vec<&'d Elem> {
        let doc = self.doc;
        doc.elems[doc.root]
            .children
            .iter()
            .map(|&c| &doc.elems[c])
            .filter(|c| c.tag == tag)
            .collect()
    }

    // --------------------------------------------------------------------------------------------

    pub fn read(&mut self) -> Result<Model> {
        let doc = self.doc;
        let root = &doc.elems[doc.root];
        self.check_attrs(root, &["model"])?;
        let model_name = root.attr("model").unwrap_or("MuJoCo Model").to_string();

        // Sections in MuJoCo's order of effect: the compiler settings first (they change how
        // angles are read), then defaults, options, bodies, and what refers to bodies, joints,
        // sites and tendons.
        for &c in &root.children {
            let child = &doc.elems[c];
            match child.tag.as_str() {
                "compiler" => self.read_compiler(child)?,
                "default" | "option" | "worldbody" | "equality" | "tendon" | "actuator" | "contact" | "keyframe" => {}
                "asset" => {
                    // meshes and height fields are read below; the rest only changes the look
                    self.check_skipped(child)?;
                    if child
                        .children
                        .iter()
                        .any(|&k| !matches!(doc.elems[k].tag.as_str(), "mesh" | "hfield"))
                    {
                        self.skip_element(child, "textures and materials are visualisation only")
                    }
                }
                "visual" | "statistic" => {
                    self.check_skipped(child)?;
                    self.skip_element(child, "visualisation only")
                }
                "size" => {
                    check_leaf(doc, child)?;
                    self.skip_element(child, "memory sizes only")
                }
                "sensor" => {
                    self.check_skipped(child)?;
                    self.skip_element(child, "sensors do not change the dynamics")
                }
                "custom" => {
                    self.check_skipped(child)?;
                    self.skip_element(child, "user data only")
                }
                other => {
                    return Err(self.err_elem(
                        child,
                        format!("element <{}> is not supported by this reader", esc(other)),
                    ))
                }
            }
        }

        let model_dir = std::path::Path::new(&doc.files[0])
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        self.assets = super::assets::read_assets(
            &doc.files,
            &self.sections("asset"),
            &doc.elems,
            &model_dir,
            self.meshdir.as_deref(),
        )?;
        self.read_defaults()?;
        for child in self.sections("option") {
            self.read_option(child)?;
        }

        self.bodies.push(BodySpec {
            name: "world".into(),
            file: 0,
            line: 0,
            parent: 0,
            pos: Vec3::zeros(),
            quat: [1.0, 0.0, 0.0, 0.0],
            joints: vec![],
            geoms: vec![],
            mass: MassProps::zero(),
            static_: true,
        });
        self.body_index.insert("world".into(), 0);
        for child in self.sections("worldbody") {
            self.check_attrs(child, &[])?;
            self.read_body_tree(child)?;
        }
        self.set_total_mass(self.settotalmass);
        self.check_moving_masses()?;

        let (mut model, joint_fs) = self.emit(model_name)?;
        self.emit_sites(&mut model);

        for child in self.sections("tendon") {
            let t = self.read_tendons(child, &model, &joint_fs)?;
            model.tendons.extend(t);
        }
        let mut equality = Vec::new();
        let mut eq_params = Vec::new();
        for child in self.sections("equality") {
            self.check_attrs(child, &[])?;
            for &eq in &child.children {
                let (e, p) = self.read_equality(&doc.elems[eq], &model, &joint_fs)?;
                equality.push(e);
                eq_params.push(p);
            }
        }
        model.equality = equality;
        model.eq_params = eq_params;
        for child in self.sections("actuator") {
            let acts = self.read_actuators(child, &model, &joint_fs)?;
            model.actuators.extend(acts);
        }
        for child in self.sections("contact") {
            self.read_contact(child, &mut model)?;
        }
        for child in self.sections("keyframe") {
            let keys = self.read_keyframes(child, &model)?;
            model.keyframes.extend(keys);
        }
        model.validate()?;
        Ok(model)
    }

    /// `<compiler>`'s one child, `<lengthrange>` (MuJoCo's `mjLROpt`): every attribute is read
    /// into [`Options::lengthrange`](crate::model::Options::lengthrange), which
    /// `mbd::mujoco::lengthrange::set_length_range` (MuJoCo's `mj_setLengthRange`, a
    /// simulation, so above this reader's layer) uses to fill the actuator length ranges.
    fn read_compiler_lengthrange(&mut self, e: &'d Elem) -> Result<()> {
        let doc = self.doc;
        for (k, &c) in e.children.iter().enumerate() {
            let child = &doc.elems[c];
            if child.tag != "lengthrange" || k > 0 {
                return Err(self.err_elem(
                    child,
                    format!(
                        "element <{}> is not allowed inside <compiler> (only one <lengthrange>)",
                        esc(&child.tag)
                    ),
                ));
            }
            check_leaf(doc, child)?;
            self.check_attrs(
                child,
                &[
                    "mode",
                    "useexisting",
                    "uselimit",
                    "accel",
                    "maxforce",
                    "timeconst",
                    "timestep",
                    "inttotal",
                    "interval",
                    "tolrange",
                ],
            )?;
            let a = Attrs::direct(&doc.files, child);
            let lr = &mut self.opt.lengthrange;
            if let Some(mode) = a.keyword("mode", &["none", "muscle", "muscleuser", "all"])? {
                lr.mode = match mode {
                    "none" => LengthRangeMode::None,
                    "muscle" => LengthRangeMode::Muscle,
                    "muscleuser" => LengthRangeMode::MuscleUser,
                    _ => LengthRangeMode::All,
                };
            }
            lr.useexisting = a.boolean("useexisting")?.unwrap_or(lr.useexisting);
            lr.uselimit = a.boolean("uselimit")?.unwrap_or(lr.uselimit);
            for (key, x) in [
                ("accel", &mut lr.accel),
                ("maxforce", &mut lr.maxforce),
                ("timeconst", &mut lr.timeconst),
                ("timestep", &mut lr.timestep),
                ("inttotal", &mut lr.inttotal),
                ("interval", &mut lr.interval),
                ("tolrange", &mut lr.tolrange),
            ] {
                if let Some(v) = a.real(key)? {
                    *x = v;
                }
            }
        }
        Ok(())
    }

    fn read_compiler(&mut self, e: &'d Elem) -> Result<()> {
        self.read_compiler_lengthrange(e)?;
        let a = Attrs::direct(&self.doc.files, e);
        self.meshdir = a.string("meshdir").or(a.string("assetdir"));
        for k in ["texturedir", "strippath", "usethread"] {
            if a.has(k) {
                self.warn(
                    format!("attr compiler.{k}"),
                    e.file,
                    e.attr_line(k),
                    format!("attribute '{k}' of <compiler> skipped: no effect without meshes and textures"),
                );
            }
        }
        self.check_attrs(
            e,
            &[
                "angle",
                "coordinate",
                "eulerseq",
                "inertiafromgeom",
                "autolimits",
                "inertiagrouprange",
                "boundmass",
                "boundinertia",
                "settotalmass",
                "balanceinertia",
                "fusestatic",
                "discardvisual",
                "alignfree",
                "meshdir",
                "texturedir",
                "assetdir",
                "strippath",
                "usethread",
            ],
        )?;
        if let Some(k) = a.keyword("angle", &["degree", "radian"])? {
            self.compiler.degree = k == "degree";
        }
        if let Some(src) = a.last("eulerseq") {
            let s = src.value.trim().as_bytes();
            if s.len() != 3 || !s.iter().all(|c| b"xyzXYZ".contains(c)) {
                return Err(a.err_attr("eulerseq", src, "expected 3 characters from x, y, z, X, Y, Z"));
            }
            self.compiler.eulerseq = [s[0], s[1], s[2]];
        }
        if let Some(k) = a.keyword("inertiafromgeom", &["auto", "true", "false"])? {
            self.compiler.inertia_from_geom = match k {
                "true" => InertiaFromGeom::True,
                "false" => InertiaFromGeom::False,
                _ => InertiaFromGeom::Auto,
            };
        }
        if let Some(b) = a.boolean("autolimits")? {
            self.compiler.autolimits = b;
        }
        if let Some(src) = a.last("inertiagrouprange") {
            let toks: Vec<&str> = src.value.split_ascii_whitespace().collect();
            let parsed: Option<Vec<i32>> = toks.iter().map(|t| t.parse::<i32>().ok()).collect();
            match parsed {
                Some(v) if v.len() == 2 => self.compiler.inertia_group_range = [v[0], v[1]],
                _ => return Err(a.err_attr("inertiagrouprange", src, "expected 2 integers")),
            }
        }
        // Settings that would change masses or the body list: only their defaults are accepted.
        // MuJoCo 4.0 only reads frames in local coordinates
        a.keyword("coordinate", &["local"])?;
        if let Some(t) = a.real("settotalmass")? {
            self.settotalmass = t;
        }
        for (k, default) in [("boundmass", 0.0), ("boundinertia", 0.0)] {
            if let Some(v) = a.real(k)? {
                if v != default {
                    return Err(a.err_attr(
                        k,
                        a.last(k).unwrap(),
                        format!("only the default {default} is supported"),
                    ));
                }
            }
        }
        for k in ["balanceinertia", "fusestatic", "discardvisual", "alignfree"] {
            if a.boolean(k)? == Some(true) {
                return Err(a.err_attr(k, a.last(k).unwrap(), "only \"false\" is supported"));
            }
        }
        Ok(())
    }

    fn read_option(&mut self, e: &'d Elem) -> Result<()> {
        let a = Attrs::direct(&self.doc.files, e);
        for k in ["magnetic", "jacobian"] {
            if a.has(k) {
                self.warn(
                    format!("attr option.{k}"),
                    e.file,
                    e.attr_line(k),
                    format!("attribute '{k}' of <option> skipped: no effect on the dynamics computed here"),
                );
            }
        }
        self.check_attrs(
            e,
            &[
                "timestep",
                "gravity",
                "integrator",
                "solver",
                "cone",
                "iterations",
                "tolerance",
                "impratio",
                "density",
                "viscosity",
                "wind",
                "magnetic",
                "jacobian",
            ],
        )?;
        if let Some(t) = a.real("timestep")? {
            if t <= 0.0 {
                return Err(a.err_attr("timestep", a.last("timestep").unwrap(), "must be positive"));
            }
            self.opt.timestep = t;
        }
        if let Some(g) = a.vec::<3>("gravity")? {
            self.opt.gravity = Vec3::from(g);
        }
        if let Some(k) = a.keyword("integrator", &["Euler", "RK4", "implicit", "implicitfast"])? {
            self.opt.integrator = crate::model::Integrator::parse(k)?;
        }
        if let Some(k) = a.keyword("solver", &["PGS", "CG", "Newton"])? {
            self.opt.solver = crate::model::Solver::parse(k)?;
        }
        if let Some(k) = a.keyword("cone", &["pyramidal", "elliptic"])? {
            self.opt.cone = crate::model::Cone::parse(k)?;
        }
        if let Some(n) = a.int("iterations")? {
            if n < 0 {
                return Err(a.err_attr("iterations", a.last("iterations").unwrap(), "must be >= 0"));
            }
            self.opt.iterations = n as usize;
        }
        if let Some(t) = a.real("tolerance")? {
            self.opt.tolerance = t;
        }
        if let Some(r) = a.real("impratio")? {
            self.opt.impratio = r;
        }
        if let Some(x) = a.real("density")? {
            self.opt.density = x;
        }
        if let Some(x) = a.real("viscosity")? {
            if x < 0.0 {
                return Err(a.err_key("viscosity", "must be >= 0"));
            }
            self.opt.viscosity = x;
        }
        if let Some(w) = a.vec::<3>("wind")? {
            self.opt.wind = Vec3::from(w);
        }
        for child in e.children.iter().map(|&c| &self.doc.elems[c]) {
            match child.tag.as_str() {
                "flag" => {
                    check_leaf(self.doc, child)?;
                    self.read_flags(child)?;
                }
                other => {
                    return Err(self.err_elem(child, format!("element <{other}> inside <option> is not supported")))
                }
            }
        }
        Ok(())
    }

    /// `<flag>`: MuJoCo's `disableflags`/`enableflags`. A disabled gravity is applied (gravity
    /// set to zero, as `mj_rne` then ignores it); disabling springs, dampers or actuation would
    /// change the passive and actuator forces and is rejected; every other flag concerns stages
    /// not computed here and is stored in [`Options::flags`] with a warning.
    fn read_flags(&mut self, e: &'d Elem) -> Result<()> {
        const FLAGS: [(&str, bool); 26] = [
            ("constraint", true),
            ("equality", true),
            ("frictionloss", true),
            ("limit", true),
            ("contact", true),
            ("spring", true),
            ("damper", true),
            ("gravity", true),
            ("clampctrl", true),
            ("warmstart", true),
            ("filterparent", true),
            ("actuation", true),
            ("refsafe", true),
            ("sensor", true),
            ("midphase", true),
            ("eulerdamp", true),
            ("autoreset", true),
            ("nativeccd", true),
            ("island", true),
            ("override", false),
            ("energy", false),
            ("fwdinv", false),
            ("invdiscrete", false),
            ("multiccd", false),
            ("sleep", false),
            ("passive", true),
        ];
        let a = Attrs::direct(&self.doc.files, e);
        for attr in &e.attrs {
            let Some(&(name, default)) = FLAGS.iter().find(|(n, _)| *n == attr.name) else {
                return Err(self.err_at(e.file, attr.line, format!("<flag>: unknown flag '{}'", esc(&attr.name))));
            };
            let on = a.keyword(name, &["enable", "disable"])? == Some("enable");
            if on == default {
                continue;
            }
            match name {
                "gravity" => self.opt.gravity = Vec3::zeros(),
                "spring" | "damper" | "actuation" | "passive" => {
                    return Err(a.err_key(name, "disabling passive or actuator forces is not implemented"))
                }
                // honoured by the simulator (mujoco::integrator, dynamics::actuation)
                "eulerdamp" | "clampctrl" => {}
                _ => self.warn(
                    format!("flag {name}"),
                    e.file,
                    attr.line,
                    format!(
                        "<flag {name}=\"{}\"> stored in Options::flags: it concerns a stage (constraints, contacts, integration, energy) not computed yet",
                        if on { "enable" } else { "disable" }
                    ),
                ),
            }
            self.opt.flags.push((name.to_string(), on));
        }
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Bodies
    // --------------------------------------------------------------------------------------------

    /// Reads a `<worldbody>`: bodies depth-first in XML order (MuJoCo's numbering) with an
    /// explicit stack, never recursion.
    fn read_body_tree(&mut self, world: &'d Elem) -> Result<()> {
        let mut stack: Vec<Pending<'d>> = Vec::new();
        self.read_body_children(world, 0, 0, &mut stack)?;
        while let Some(p) = stack.pop() {
            let (idx, childclass) = self.read_body(&p)?;
            self.read_body_children(p.elem, idx, childclass, &mut stack)?;
        }
        Ok(())
    }

    /// Reads the child elements of MuJoCo body `me` (0 for `<worldbody>`): its joints, geoms and
    /// inertial, and the contents of its `<frame>`s; child bodies are pushed on `stack` (in
    /// reverse, so they are read in XML order).
    fn read_body_children(
        &mut self,
        e: &'d Elem,
        me: usize,
        childclass: usize,
        stack: &mut Vec<Pending<'d>>,
    ) -> Result<()> {
        let doc = self.doc;
        let mut inertial: Option<MassProps> = None;
        let mut inertial_line = 0;
        let is_world = me == 0;
        let mut bodies = Vec::new();
        // (element, frame pose, childclass): the body's children, then those of its frames
        let mut todo: Vec<(&'d Elem, Option<Frame>, usize)> = e
            .children
            .iter()
            .rev()
            .map(|&c| (&doc.elems[c], None, childclass))
            .collect();
        while let Some((child, frame, cc)) = todo.pop() {
            let tag = child.tag.as_str();
            let in_frame = frame.is_some();
            match tag {
                "body" => bodies.push(Pending {
                    elem: child,
                    parent: me,
                    childclass: cc,
                    frame,
                }),
                "frame" => {
                    let (f, fcc) = self.read_frame(child, cc)?;
                    let f = compose(frame, f);
                    todo.extend(child.children.iter().rev().map(|&c| (&doc.elems[c], Some(f), fcc)));
                }
                "geom" => {
                    check_leaf(doc, child)?;
                    let class = self.class_of(child, cc)?;
                    let Some(mut g) = self.read_geom(child, class, me)? else {
                        continue;
                    };
                    if let Some(f) = frame {
                        let (p, q) = f.apply(&g.geom.pos, &g.geom.quat);
                        g.geom.pos = p;
                        g.geom.quat = q;
                    }
                    self.bodies[me].geoms.push(g);
                }
                "joint" | "freejoint" | "inertial" if in_frame => {
                    return Err(self.err_elem(
                        child,
                        format!("element <{tag}> is not allowed inside <frame> (MuJoCo's schema)"),
                    ));
                }
                "joint" | "freejoint" if is_world => {
                    return Err(self.err_elem(child, "the world body cannot have joints"));
                }
                "inertial" if is_world => return Err(self.err_elem(child, "the world body cannot have an inertial")),
                "joint" | "freejoint" => {
                    check_leaf(doc, child)?;
                    let j = self.read_joint(child, cc, me)?;
                    self.bodies[me].joints.push(j);
                }
                "inertial" => {
                    check_leaf(doc, child)?;
                    if inertial.is_some() {
                        return Err(self.err_elem(
                            child,
                            format!("a body can have only one <inertial> (first at line {inertial_line})"),
                        ));
                    }
                    inertial_line = child.line;
                    inertial = Some(self.read_inertial(child)?);
                }
                "site" => {
                    check_leaf(doc, child)?;
                    let class = self.class_of(child, cc)?;
                    let (name, mut pos, mut quat) = self.read_site(child, class)?;
                    if let Some(f) = frame {
                        (pos, quat) = f.apply(&pos, &quat);
                    }
                    if !name.is_empty() {
                        self.site_index.insert(name.clone(), self.sites.len());
                    }
                    self.sites.push((me, name, pos, quat));
                }
                "camera" | "light" => {
                    check_leaf(doc, child)?;
                    self.skip_element(child, "no effect on the dynamics")
                }
                other => {
                    return Err(self.err_elem(
                        child,
                        format!("element <{}> inside a body is not supported by this reader", esc(other)),
                    ))
                }
            }
        }
        stack.extend(bodies.into_iter().rev());
        if !is_world {
            self.bodies[me].mass = self.body_mass(me, inertial)?;
        }
        Ok(())
    }

    /// A `<frame>`: its pose and the childclass its contents use.
    fn read_frame(&mut self, e: &'d Elem, childclass: usize) -> Result<(Frame, usize)> {
        self.check_attrs(
            e,
            &[
                "name",
                "childclass",
                "pos",
                "quat",
                "axisangle",
                "xyaxes",
                "zaxis",
                "euler",
            ],
        )?;
        let a = Attrs::direct(&self.doc.files, e);
        let childclass = match a.last("childclass") {
            Some(src) => *self
                .class_index
                .get(src.value.as_str())
                .ok_or_else(|| a.err_attr("childclass", src, "unknown default class"))?,
            None => childclass,
        };
        let pos = Vec3::from(a.vec::<3>("pos")?.unwrap_or([0.0; 3]));
        let quat = orientation(&a, &self.compiler)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        Ok((Frame { pos, quat }, childclass))
    }

    /// Creates MuJoCo body `self.bodies.len()` from a `<body>` element; returns its index and the
    /// childclass its children use.
    fn read_body(&mut self, p: &Pending<'d>) -> Result<(usize, usize)> {
        let e = p.elem;
        self.check_attrs(
            e,
            &[
                "name",
                "childclass",
                "pos",
                "quat",
                "axisangle",
                "xyaxes",
                "zaxis",
                "euler",
                "mocap",
                "gravcomp",
            ],
        )?;
        let a = Attrs::direct(&self.doc.files, e);
        let name = a.string("name").unwrap_or_default();
        if !name.is_empty() {
            if let Some(&other) = self.body_index.get(&name) {
                let first = self.bodies[other].line;
                return Err(a.err(format!("repeated body name '{}' (first at line {first})", esc(&name))));
            }
        }
        if a.boolean("mocap")? == Some(true) {
            return Err(a.err_key("mocap", "mocap bodies are not supported"));
        }
        if let Some(g) = a.real("gravcomp")? {
            if g != 0.0 {
                return Err(a.err_key("gravcomp", "gravity compensation is not supported"));
            }
        }
        let childclass = match a.last("childclass") {
            Some(src) => *self
                .class_index
                .get(src.value.as_str())
                .ok_or_else(|| a.err_attr("childclass", src, "unknown default class"))?,
            None => p.childclass,
        };
        let mut pos = Vec3::from(a.vec::<3>("pos")?.unwrap_or([0.0; 3]));
        let mut quat = orientation(&a, &self.compiler)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        if let Some(f) = p.frame {
            (pos, quat) = f.apply(&pos, &quat);
        }
        let idx = self.bodies.len();
        if !name.is_empty() {
            self.body_index.insert(name.clone(), idx);
        }
        let doc = self.doc;
        let static_ = self.bodies[p.parent].static_
            && !e
                .children
                .iter()
                .any(|&c| doc.elems[c].tag == "joint" || doc.elems[c].tag == "freejoint");
        self.bodies.push(BodySpec {
            name,
            file: e.file,
            line: a.line,
            parent: p.parent,
            pos,
            quat,
            joints: vec![],
            geoms: vec![],
            mass: MassProps::zero(),
            static_,
        });
        Ok((idx, childclass))
    }

    fn read_joint(&mut self, e: &'d Elem, childclass: usize, body: usize) -> Result<JointSpec> {
        let free_elem = e.tag == "freejoint";
        let a = if free_elem {
            // <freejoint> takes no defaults (MuJoCo's AddFreeJoint).
            self.check_attrs(e, &["name"])?;
            Attrs::direct(&self.doc.files, e)
        } else {
            let mut list: Vec<&str> = JOINT_ATTRS.to_vec();
            list.extend(["name", "class"]);
            self.check_attrs(e, &list)?;
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
        };
        Ok(JointSpec {
            joint,
            reference: if jt == "hinge" || jt == "slide" { reference } else { 0.0 },
            file: e.file,
            line: a.line,
        })
    }

    /// Joint and geom names must be unique (MuJoCo: "repeated name").
    fn unique_name(&mut self, a: &Attrs, name: &str, joint: bool) -> Result<()> {
        if name.is_empty() {
            return Ok(());
        }
        let map = if joint {
            &mut self.joint_names
        } else {
            &mut self.geom_names
        };
        if let Some(first) = map.get(name) {
            let kind = if joint { "joint" } else { "geom" };
            return Err(a.err(format!("repeated {kind} name '{name}' (first at line {first})")));
        }
        map.insert(name.into(), a.line);
        Ok(())
    }

    fn read_inertial(&mut self, e: &'d Elem) -> Result<MassProps> {
        self.check_attrs(
            e,
            &[
                "pos",
                "quat",
                "axisangle",
                "xyaxes",
                "zaxis",
                "euler",
                "mass",
                "diaginertia",
                "fullinertia",
            ],
        )?;
        let a = Attrs::direct(&self.doc.files, e);
        let Some(pos) = a.vec::<3>("pos")? else {
            return Err(a.err("required attribute 'pos' is missing"));
        };
        let Some(mass) = a.real("mass")? else {
            return Err(a.err("required attribute 'mass' is missing"));
        };
        if a.has("fullinertia") {
            if let Some(k) = ORIENTATION.iter().find(|k| a.has(k)) {
                return Err(a.err(format!("'fullinertia' and '{k}' cannot both be given")));
            }
            if a.has("diaginertia") {
                return Err(a.err("'fullinertia' and 'diaginertia' cannot both be given"));
            }
        }
        if mass < 0.0 {
            return Err(a.err_attr("mass", a.last("mass").unwrap(), "mass cannot be negative"));
        }
        let (inertia, principal, iquat) = if let Some(f) = a.vec::<6>("fullinertia")? {
            let m = Mat3::new(f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]);
            let (iq, ev) = crate::model::principal_axes(&m);
            let p = [ev[0], ev[1], ev[2]];
            if p.iter().any(|&x| x < mjEPS) {
                return Err(a.err_attr(
                    "fullinertia",
                    a.last("fullinertia").unwrap(),
                    "inertia must have positive eigenvalues",
                ));
            }
            (m, p, iq)
        } else {
            let d = a.vec::<3>("diaginertia")?.unwrap_or([0.0; 3]);
            if d.iter().any(|&x| x < 0.0) {
                return Err(a.err_attr(
                    "diaginertia",
                    a.last("diaginertia").unwrap(),
                    "inertia cannot be negative",
                ));
            }
            let q = orientation(&a, &self.compiler)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
            let r = quat_to_mat(&q);
            (r * Mat3::from_diagonal(&Vec3::from(d)) * r.transpose(), d, q)
        };
        let [p0, p1, p2] = principal;
        if p0 + p1 < p2 || p0 + p2 < p1 || p1 + p2 < p0 {
            return Err(a.err(format!(
                "principal moments ({p0:e}, {p1:e}, {p2:e}) violate A + B >= C (MuJoCo's balanceinertia is not supported)"
            )));
        }
        Ok(MassProps {
            mass,
            com: Vec3::from(pos),
            inertia,
            principal,
            iquat,
        })
    }

    /// Reads a geom; `None` for a height field or mesh, which are skipped (with a warning) when
    /// they carry no mass into a moving body.
    fn read_geom(&mut self, e: &'d Elem, class: usize, body: usize) -> Result<Option<GeomSpec>> {
        let mut list: Vec<&str> = GEOM_ATTRS.to_vec();
        list.extend(["name", "class"]);
        self.check_attrs(e, &list)?;
        let a = self.resolved(e, "geom", class);
        let name = a.string("name").unwrap_or_default();
        self.unique_name(&a, &name, false)?;
        let tname = a
            .keyword(
                "type",
                &[
                    "plane",
                    "hfield",
                    "sphere",
                    "capsule",
                    "ellipsoid",
                    "cylinder",
                    "box",
                    "mesh",
                    "sdf",
                ],
            )?
            .unwrap_or("sphere");
        let gtype = match tname {
            "plane" => GeomType::Plane,
            "sphere" => GeomType::Sphere,
            "capsule" => GeomType::Capsule,
            "cylinder" => GeomType::Cylinder,
            "box" => GeomType::Box,
            "ellipsoid" => GeomType::Ellipsoid,
            "hfield" | "mesh" => {
                let aname = a
                    .string(tname)
                    .ok_or_else(|| a.err(format!("a {tname} geom needs the {tname} attribute naming its asset")))?;
                let index = if tname == "mesh" {
                    &self.assets.mesh_index
                } else {
                    &self.assets.hfield_index
                };
                let Some(&k) = index.get(&aname) else {
                    return Err(a.err_attr(
                        tname,
                        a.last(tname).unwrap(),
                        format!("unknown {tname} '{}'", esc(&aname)),
                    ));
                };
                if tname == "mesh" {
                    GeomType::Mesh(k)
                } else {
                    if !self.bodies[body].static_ {
                        return Err(a.err("a height field is only allowed in static bodies (MuJoCo's rule)"));
                    }
                    GeomType::HField(k)
                }
            }
            other => {
                return Err(a.err_attr(
                    "type",
                    a.last("type").unwrap(),
                    format!("geom type '{other}' is not supported"),
                ))
            }
        };
        let mut size = a.partial::<3>("size", [0.0; 3])?;
        let mut pos = Vec3::from(a.vec::<3>("pos")?.unwrap_or([0.0; 3]));
        let mut quat = orientation(&a, &self.compiler)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        if let Some(ft) = a.vec::<6>("fromto")? {
            let src = a.last("fromto").unwrap();
            if !matches!(
                gtype,
                GeomType::Capsule | GeomType::Cylinder | GeomType::Box | GeomType::Ellipsoid
            ) {
                return Err(a.err_attr("fromto", src, "fromto needs a capsule, cylinder, box or ellipsoid"));
            }
            if pos != Vec3::zeros() {
                return Err(a.err("both 'pos' and 'fromto' are given"));
            }
            if ORIENTATION.iter().any(|k| e.has(k)) {
                return Err(a.err("both 'fromto' and an orientation are given"));
            }
            // MuJoCo points the geom's z axis from `to` towards `from`.
            let v = Vec3::new(ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]);
            let half = 0.5 * v.norm();
            if half < mjEPS {
                return Err(a.err_attr("fromto", src, "fromto points are too close"));
            }
            size[1] = half;
            if matches!(gtype, GeomType::Box | GeomType::Ellipsoid) {
                size[2] = size[1];
                size[1] = size[0];
            }
            pos = Vec3::new(0.5 * (ft[0] + ft[3]), 0.5 * (ft[1] + ft[4]), 0.5 * (ft[2] + ft[5]));
            quat = z_to_quat(&(v / v.norm()));
        }
        // size checks (MuJoCo's checksize)
        let needed = match gtype {
            GeomType::Plane | GeomType::Mesh(_) | GeomType::HField(_) => 0,
            GeomType::Sphere => 1,
            GeomType::Capsule | GeomType::Cylinder => 2,
            GeomType::Box | GeomType::Ellipsoid => 3,
        };
        if gtype == GeomType::Plane && size[2] <= 0.0 {
            return Err(a.err(format!("plane size[2] must be positive (size = {size:?})")));
        }
        if let Some(k) = (0..needed).find(|&k| size[k] <= 0.0) {
            return Err(a.err(format!(
                "{tname} size[{k}] must be positive (size = {size:?}); a {tname} needs {needed} sizes"
            )));
        }
        if gtype == GeomType::Plane && !self.bodies[body].static_ {
            return Err(a.err("a plane is only allowed in the world body or in bodies without joints up to the world"));
        }
        let friction = a.partial::<3>("friction", [1.0, 0.005, 0.0001])?;
        let condim = a.int("condim")?.unwrap_or(3);
        if ![1, 3, 4, 6].contains(&condim) {
            return Err(a.err_attr("condim", a.last("condim").unwrap(), "condim must be 1, 3, 4 or 6"));
        }
        let contype = a.int("contype")?.unwrap_or(1);
        let conaffinity = a.int("conaffinity")?.unwrap_or(1);
        let margin = a.real("margin")?.unwrap_or(0.0);
        let gap = a.real("gap")?.unwrap_or(0.0);
        let solmix = a.real("solmix")?.unwrap_or(1.0);
        let priority = a.int("priority")?.unwrap_or(0);
        let params = solver_params(&a, "solref", "solimp")?;
        let group = a.int("group")?.unwrap_or(0);
        let density = a.real("density")?.unwrap_or(1000.0);
        if density < 0.0 {
            return Err(a.err_attr("density", a.last("density").unwrap(), "density cannot be negative"));
        }
        // a mesh geom's frame is its mesh's (principal) frame placed by the geom's pos/quat
        let mesh = match gtype {
            GeomType::Mesh(k) => Some(&self.assets.meshes[k]),
            _ => None,
        };
        if let Some(m) = mesh {
            pos += quat_to_mat(&quat) * m.pos;
            quat = crate::spatial::quat_mul(&quat, &m.quat);
        }
        let volume = mesh.map_or_else(|| geom_volume(gtype, &size), |m| m.volume);
        let mass = match a.real("mass")? {
            Some(m) if m < 0.0 => return Err(a.err_attr("mass", a.last("mass").unwrap(), "mass cannot be negative")),
            Some(m) if m == 0.0 || volume <= mjMINVAL => 0.0,
            Some(m) => m,
            None => density * volume,
        };
        let diag = match mesh {
            Some(m) => [0, 1, 2].map(|i| m.inertia[i] * mass / volume),
            None => geom_inertia(gtype, &size, mass),
        };
        let geom = Geom {
            name,
            body: 0, // Featherstone index, filled in by emit()
            gtype,
            size,
            pos,
            quat,
            friction,
            condim: condim as usize,
            contype: contype as u32,
            conaffinity: conaffinity as u32,
            margin,
            gap,
            params,
            solmix,
            priority,
        };
        Ok(Some(GeomSpec {
            geom,
            mass,
            diag,
            group,
        }))
    }

    // --------------------------------------------------------------------------------------------
    // Equality constraints
    // --------------------------------------------------------------------------------------------

    fn read_equality(
        &mut self,
        e: &'d Elem,
        model: &Model,
        joint_fs: &HashMap<String, usize>,
    ) -> Result<(Equality, SolverParams)> {
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
        if a.boolean("active")? == Some(false) {
            return Err(a.err_attr(
                "active",
                a.last("active").unwrap(),
                "inactive equality constraints are not supported",
            ));
        }
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
        Ok((eq, params))
    }
}

/// A `<body>` waiting on the reader's stack: its element, parent, inherited childclass and the
/// pose of the `<frame>`s around it.
pub(crate) struct Pending<'d> {
    elem: &'d Elem,
    parent: usize,
    childclass: usize,
    frame: Option<Frame>,
}

/// The pose of a `<frame>` in its body (frames nest by composition).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pos: Vec3,
    quat: [f64; 4],
}

impl Frame {
    /// A pose given in the frame, expressed in the body: `(p_f + R_f p, q_f q)`.
    fn apply(&self, pos: &Vec3, quat: &[f64; 4]) -> (Vec3, [f64; 4]) {
        (
            self.pos + quat_to_mat(&self.quat) * pos,
            normalized4(crate::spatial::quat_mul(&self.quat, quat)),
        )
    }
}

/// The frame `inner` placed in `outer` (if any).
fn compose(outer: Option<Frame>, inner: Frame) -> Frame {
    match outer {
        None => inner,
        Some(o) => {
            let (pos, quat) = o.apply(&inner.pos, &inner.quat);
            Frame { pos, quat }
        }
    }
}

/// A constraint's `solref`/`solimp` pair (each may give fewer numbers than MuJoCo's `mjNREF`,
/// `mjNIMP`; the rest keep MuJoCo's defaults), after the default classes.
pub(crate) fn solver_params(a: &Attrs, ref_key: &str, imp_key: &str) -> Result<SolverParams> {
    Ok(SolverParams {
        solref: a.partial::<2>(ref_key, SOLREF_DEFAULT)?,
        solimp: a.partial::<5>(imp_key, SOLIMP_DEFAULT)?,
    })
}
