//! The reader's core (MuJoCo's `xml_native_reader.cc`, `mjXReader::Parse`): the [`Reader`]
//! state, its warnings and attribute checks, the intermediate specs (bodies, joints, geoms and
//! their mass properties, MuJoCo's `mjs*`) and [`Reader::read`], which reads the sections in
//! MuJoCo's order of effect and hands the specs to `compile.rs` and `emit.rs` for the [`Model`].
//!
//! Each MJCF section has its own reader file: `options.rs` (`<compiler>`, `<option>`),
//! `body.rs` (the body tree, `<frame>`, `<inertial>`), `joint.rs`, `geom.rs`, `site.rs`,
//! `tendon.rs`, `equality.rs`, `actuator.rs`, `contact.rs` and `keyframe.rs`.

use super::attrs::{check_leaf, Attrs};
use super::defaults::Class;
use super::xml::{esc, model_error, one_line, Doc, Elem};
use super::Compiler;
use crate::error::{Error, Result};
use crate::model::constants::mjMINVAL;
use crate::model::{Geom, Joint, Model, Options, SolverParams, SOLIMP_DEFAULT, SOLREF_DEFAULT};
use crate::spatial::{Mat3, Vec3};
use std::collections::HashMap;

/// Attributes that only change how a model looks (or carry user data); skipped with a warning,
/// except a geom's `rgba` and `material`, which the reader keeps (rays skip invisible geoms).
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
    /// False for `simple="false"`: MuJoCo's simple-body rule may not apply (`mjsBody.simple`).
    pub simple: bool,
    /// `gravcomp` (MuJoCo's `body_gravcomp`, default 0).
    pub gravcomp: f64,
    /// `mocap="true"`: the body's placement is an input of each state (MuJoCo's `body_mocapid`).
    pub mocap: bool,
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
    pub sites: Vec<super::site::SiteSpec>,
    pub site_index: HashMap<String, usize>,
    pub tendon_index: HashMap<String, usize>,
    /// Meshes and height fields of `<asset>`.
    pub assets: super::assets::AssetSet,
    /// `<compiler meshdir>`.
    pub meshdir: Option<String>,
    /// The actuator default of every class (`actuator.rs`), indexed like `classes`.
    pub act_defaults: Vec<super::actuator::ActSpec>,
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
            act_defaults: Vec::new(),
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
        self.check_class_attrs(e, supported, &[])
    }

    /// [`Reader::check_attrs`] for an element kind with default classes: `list` is what its
    /// defaults may set, `own` what only the element itself takes (`name`, `class`, ...).
    pub fn check_class_attrs(&mut self, e: &Elem, list: &[&str], own: &[&str]) -> Result<()> {
        let tag = e.tag.as_str();
        for a in &e.attrs {
            let name = a.name.as_str();
            if list.contains(&name) || own.contains(&name) {
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
    pub(crate) fn sections(&self, tag: &str) -> Vec<&'d Elem> {
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
                "default" | "option" | "worldbody" | "equality" | "tendon" | "actuator" | "contact" | "keyframe"
                | "sensor" => {}
                "asset" => {
                    // meshes, height fields and materials are read below; the rest (textures,
                    // skins) only changes the look
                    self.check_skipped(child)?;
                    if child
                        .children
                        .iter()
                        .any(|&k| !matches!(doc.elems[k].tag.as_str(), "mesh" | "hfield" | "material"))
                    {
                        self.skip_element(child, "textures are visualisation only")
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
        self.read_materials()?;
        self.read_actuator_defaults()?;
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
            simple: true,
            gravcomp: 0.0,
            mocap: false,
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
        let mut eq_active0 = Vec::new();
        for child in self.sections("equality") {
            self.check_attrs(child, &[])?;
            for &eq in &child.children {
                let (e, p, active) = self.read_equality(&doc.elems[eq], &model, &joint_fs)?;
                equality.push(e);
                eq_params.push(p);
                eq_active0.push(active);
            }
        }
        model.equality = equality;
        model.eq_params = eq_params;
        model.eq_active0 = eq_active0;
        for child in self.sections("actuator") {
            let acts = self.read_actuators(child, &model, &joint_fs)?;
            model.actuators.extend(acts);
        }
        for child in self.sections("contact") {
            self.read_contact(child, &mut model)?;
        }
        for child in self.sections("sensor") {
            let s = self.read_sensors(child, &model, &joint_fs)?;
            model.sensors.extend(s);
        }
        for child in self.sections("keyframe") {
            let keys = self.read_keyframes(child, &model)?;
            model.keyframes.extend(keys);
        }
        model.validate()?;
        Ok(model)
    }

    /// Joint and geom names must be unique (MuJoCo: "repeated name").
    pub(crate) fn unique_name(&mut self, a: &Attrs, name: &str, joint: bool) -> Result<()> {
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
}

/// A constraint's `solref`/`solimp` pair (each may give fewer numbers than MuJoCo's `mjNREF`,
/// `mjNIMP`; the rest keep MuJoCo's defaults), after the default classes.
pub(crate) fn solver_params(a: &Attrs, ref_key: &str, imp_key: &str) -> Result<SolverParams> {
    Ok(SolverParams {
        solref: a.partial::<2>(ref_key, SOLREF_DEFAULT)?,
        solimp: a.partial::<5>(imp_key, SOLIMP_DEFAULT)?,
    })
}
