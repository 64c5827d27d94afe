//! The MJCF subset reader (MuJoCo's XML model format). Book chapter: "Joint models and
//! kinematic trees", section "Reading MuJoCo models".
//!
//! [`load`] and [`parse`] turn an MJCF file into a [`Model`] with MuJoCo 4.0's semantics for
//! everything listed below, checked number by number against MuJoCo itself
//! (`tests/mjcf.rs`, `tests/fixtures/make_mjcf_structure.py`). Whatever is not listed is either
//! skipped with one warning line in [`Loaded::warnings`] (when it cannot change the dynamics) or
//! rejected with an [`Error::Model`] naming the file, the line, the element and the attribute.
//! The reader never silently drops something that changes how the model moves.
//!
//! # Supported
//!
//! | element | attributes | notes |
//! |---|---|---|
//! | `<mujoco>` | `model` | |
//! | `<compiler>` | `angle` (`degree` default, `radian`), `eulerseq`, `inertiafromgeom` (`auto`, `true`, `false`), `autolimits`, `inertiagrouprange` | `boundmass`, `boundinertia`, `settotalmass`, `balanceinertia`, `fusestatic`, `discardvisual`, `alignfree` only at their defaults; `meshdir`, `texturedir`, `assetdir`, `strippath`, `usethread` are skipped with a warning |
//! | `<option>` | `timestep`, `gravity`, `integrator`, `solver`, `cone`, `iterations`, `tolerance`, `impratio` | `magnetic` and `jacobian` skipped with a warning; the `<flag>` child is skipped with a warning (all flags keep MuJoCo's defaults) |
//! | `<default>` | nested `<default class>` with `<joint>` and `<geom>` defaults | the top-level class is `main`; an element's `class` wins over the `childclass` of its enclosing bodies, which applies to the body's own joints and geoms and to all its descendants until another `childclass` |
//! | `<worldbody>` | `<geom>`, `<body>` (no attributes) | several `<worldbody>` elements are concatenated, as MuJoCo does |
//! | `<body>` | `name`, `pos`, `quat`, `euler`, `axisangle`, `xyaxes`, `zaxis`, `childclass` | `mocap="false"` and `gravcomp="0"` are accepted |
//! | `<joint>` | `name`, `class`, `type` (`hinge`, `slide`, `ball`, `free`), `pos`, `axis`, `range`, `limited` (`true`, `false`, `auto`), `damping`, `armature`, `frictionloss`, `stiffness` | `<freejoint name>` too (it ignores defaults, as in MuJoCo) |
//! | `<inertial>` | `pos`, `mass` (both required), `quat`, `euler`, `axisangle`, `xyaxes`, `zaxis`, `diaginertia`, `fullinertia` | |
//! | `<geom>` | `name`, `class`, `type` (`plane`, `sphere`, `capsule`, `cylinder`, `box`), `size`, `pos`, `quat`, `euler`, `axisangle`, `xyaxes`, `zaxis`, `fromto` (capsule, cylinder, box), `friction`, `condim`, `contype`, `conaffinity`, `margin`, `mass`, `density`, `group` | |
//! | `<equality>` | `<connect body1 body2 anchor>`, `<weld body1 body2 relpose anchor>`, `<joint joint1 joint2 polycoef>`, each with `name`, `class`, `active="true"` | |
//!
//! Angles (`euler`, `axisangle`, hinge and ball `range`) are in degrees unless
//! `<compiler angle="radian"/>`. With `autolimits` (the default) a joint with `limited="auto"`
//! is limited when `range[0] < range[1]`.
//!
//! # Bodies, joints and inertia
//!
//! MuJoCo bodies are numbered depth-first in XML order. A body with `n > 1` joints becomes a
//! chain of `n` Featherstone bodies, one per joint in XML order: the first carries the body's
//! `pos`/`quat` as `X_tree`, the others have `X_tree = 1` (so each joint's `pos` and `axis` are
//! read in the body frame moved by the joints before it, as MuJoCo's `mj_kinematics` does), the
//! last one carries the inertia and the earlier ones are massless; they are named `body#joint`
//! (or `body#k` for an unnamed joint `k`). A body
//! without joints becomes one body with [`JointType::Fixed`]. A free joint is only allowed in a
//! child of the world body; its `X_tree` is the identity and its `qpos0` is the body's pose.
//! The resulting dof order is MuJoCo's. [`Model::mj_body`], [`Model::mj_body_last`] and
//! [`Model::mj_body_name`] keep the map between the two numberings.
//!
//! A body without `<inertial>` (or every body under `inertiafromgeom="true"`) gets its mass,
//! centre of mass and inertia from its geoms whose `group` lies in `inertiagrouprange` (0 to 5
//! by default): mass = `mass` if given, else `density` (default 1000) times the volume; planes
//! have no volume; a capsule is a cylinder plus two hemispheres with MuJoCo's formula. The
//! geoms' inertias are added about their common centre of mass. MuJoCo's checks follow: mass
//! and principal moments must be non-negative and satisfy `A + B >= C`, and a body with joints
//! needs mass and principal moments of at least `mjMINVAL` = 1e-15 unless one of its jointless
//! children has them.
//!
//! # Skipped with a warning (no effect on the dynamics computed here)
//!
//! `<visual>`, `<asset>`, `<statistic>`, `<size>`, `<sensor>`, `<keyframe>` (it does not change
//! `qpos0`), `<custom>`; `<site>`, `<camera>` and `<light>` inside bodies; default classes for
//! those and for actuators, tendons and contact pairs; the visual-only attributes `rgba`,
//! `material`, `group` (on joints) and `user`. One warning per kind (with its first line and a
//! count), not one per occurrence.
//!
//! `<actuator>`: a `<motor>` produces `gain * ctrl`, which is zero since this library has no
//! controls, so motors are skipped with a loud warning. Every other actuator kind (`position`,
//! `velocity`, `general`, ...) can produce force at zero control (bias terms) and is an error.
//!
//! MuJoCo's XML parser accepts `--` inside comments (strict XML does not); such comments are
//! accepted here too.
//!
//! # Rejected with an error
//!
//! `<tendon>` and `<contact>` (pairs and exclusions change forces and collisions), `<include>`,
//! `<frame>`, `<composite>`, `<flexcomp>`, meshes, height fields, ellipsoids, `ref`,
//! `springref`, `solref`/`solimp` and every other attribute or element not listed above; numbers
//! that do not parse or are not finite; wrong counts of numbers; unknown keywords, classes,
//! bodies or joints; repeated names; non-physical inertias; non-positive `timestep`; negative
//! `damping`, `armature` or `frictionloss`.

use crate::error::{Error, Result};
use crate::model::{Equality, Geom, GeomType, Joint, JointType, Model, ModelBuilder, Options};
use crate::spatial::{quat_mul, quat_to_mat, Mat3, SpatialInertia, Vec3, Xform};
use roxmltree::{Document, Node};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A model read from MJCF, with the warnings about skipped elements (visual, asset, sensor,
/// camera, light, ...), which do not affect dynamics.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The model.
    pub model: Model,
    /// One line per kind of skipped element or attribute, `file:line: message`, with the line
    /// of its first occurrence and the number of occurrences when there are several.
    pub warnings: Vec<String>,
}

/// Reads an MJCF file.
pub fn load(path: &Path) -> Result<Loaded> {
    let xml = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    parse(&xml, &path.display().to_string())
}

/// Parses MJCF text; `file` names the source in error messages.
///
/// MuJoCo's XML parser (tinyxml2) accepts `--` inside comments, which strict XML forbids;
/// such comments are relaxed first (same length, so positions are unchanged).
pub fn parse(xml: &str, file: &str) -> Result<Loaded> {
    let xml = relax_comments(xml);
    let doc = Document::parse(&xml).map_err(|e| Error::Model {
        file: file.into(),
        line: e.pos().row,
        why: format!("malformed XML: {e}"),
    })?;
    let mut reader = Reader::new(file);
    let model = reader.read(&doc)?;
    Ok(Loaded {
        model,
        warnings: reader.finish_warnings(),
    })
}

/// Replaces `--` inside `<!-- ... -->` comments by `- ` (tinyxml2 accepts them, roxmltree does
/// not). Text outside comments is untouched.
fn relax_comments(xml: &str) -> std::borrow::Cow<'_, str> {
    if !xml.contains("<!--") {
        return std::borrow::Cow::Borrowed(xml);
    }
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start + 4]);
        rest = &rest[start + 4..];
        match rest.find("-->") {
            Some(end) => {
                let mut body = rest[..end].replace("--", "- ");
                if body.ends_with('-') {
                    body.pop();
                    body.push(' '); // a comment may not end in "--->"
                }
                out.push_str(&body);
                out.push_str("-->");
                rest = &rest[end + 3..];
            }
            None => break, // unterminated: let the XML parser report it
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// MuJoCo's `mjMINVAL`: the smallest mass or principal moment a moving body may have.
const MJ_MINVAL: f64 = 1e-15;
/// MuJoCo's `mjEPS`: the smallest norm of an axis, and the smallest `fromto` half-length.
const MJ_EPS: f64 = 1e-14;

// ------------------------------------------------------------------------------------------------
// Attribute lists
// ------------------------------------------------------------------------------------------------

const ORIENTATION: [&str; 5] = ["quat", "axisangle", "xyaxes", "zaxis", "euler"];
const JOINT_ATTRS: [&str; 9] = [
    "type",
    "pos",
    "axis",
    "range",
    "limited",
    "damping",
    "armature",
    "frictionloss",
    "stiffness",
];
const GEOM_ATTRS: [&str; 17] = [
    "type",
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
];
/// Attributes that only change how a model looks (or carry user data); skipped with a warning.
const COSMETIC: [&str; 3] = ["rgba", "material", "user"];

/// Kinds of element that take default classes here.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Joint,
    Geom,
}

// ------------------------------------------------------------------------------------------------
// Attributes after default-class resolution
// ------------------------------------------------------------------------------------------------

/// One attribute value and where it was written.
#[derive(Clone, Debug)]
struct Src {
    value: String,
    line: u32,
    /// The default class it came from (None: written on the element itself).
    class: Option<String>,
}

/// The attributes of one element: for each attribute, its values from the outermost default
/// class down to the element itself. The last value wins, except for the arrays MuJoCo lets a
/// layer give partially (`size`, `friction`, `polycoef`): there each layer overwrites only the
/// leading numbers it gives.
struct Attrs<'f> {
    file: &'f str,
    /// How messages name the element, e.g. `<geom name="foot">`.
    tag: String,
    line: u32,
    map: BTreeMap<String, Vec<Src>>,
}

impl<'f> Attrs<'f> {
    fn err_at(&self, line: u32, why: String) -> Error {
        Error::Model {
            file: self.file.into(),
            line,
            why,
        }
    }

    /// An error about the element as a whole.
    fn err(&self, why: impl std::fmt::Display) -> Error {
        self.err_at(self.line, format!("{}: {why}", self.tag))
    }

    /// An error about one attribute value.
    fn err_attr(&self, key: &str, src: &Src, why: impl std::fmt::Display) -> Error {
        let from = match &src.class {
            Some(c) => format!(" (from default class '{c}')"),
            None => String::new(),
        };
        self.err_at(
            src.line,
            format!("{}: attribute {key}=\"{}\"{from}: {why}", self.tag, src.value),
        )
    }

    /// An error about attribute `key` if it is given, else about the element.
    fn err_maybe(&self, key: &str, why: impl std::fmt::Display) -> Error {
        match self.last(key) {
            Some(src) => self.err_attr(key, src, why),
            None => self.err(format!("{key}: {why}")),
        }
    }

    fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn last(&self, key: &str) -> Option<&Src> {
        self.map.get(key).and_then(|v| v.last())
    }

    fn string(&self, key: &str) -> Option<String> {
        self.last(key).map(|s| s.value.clone())
    }

    fn reals_of(&self, key: &str, src: &Src) -> Result<Vec<f64>> {
        parse_reals(&src.value).map_err(|why| self.err_attr(key, src, why))
    }

    /// A real scalar.
    fn real(&self, key: &str) -> Result<Option<f64>> {
        Ok(self.vec::<1>(key)?.map(|v| v[0]))
    }

    /// Exactly `N` reals.
    fn vec<const N: usize>(&self, key: &str) -> Result<Option<[f64; N]>> {
        let Some(src) = self.last(key) else {
            return Ok(None);
        };
        let v = self.reals_of(key, src)?;
        if v.len() != N {
            let what = if N == 1 {
                "1 number".to_string()
            } else {
                format!("{N} numbers")
            };
            return Err(self.err_attr(key, src, format!("expected {what}, got {}", v.len())));
        }
        let mut out = [0.0; N];
        out.copy_from_slice(&v);
        Ok(Some(out))
    }

    /// 1 to `N` reals per layer, each layer overwriting the leading entries of `init`.
    fn partial<const N: usize>(&self, key: &str, init: [f64; N]) -> Result<[f64; N]> {
        let mut out = init;
        for src in self.map.get(key).into_iter().flatten() {
            let v = self.reals_of(key, src)?;
            if v.is_empty() || v.len() > N {
                return Err(self.err_attr(key, src, format!("expected 1 to {N} numbers, got {}", v.len())));
            }
            out[..v.len()].copy_from_slice(&v);
        }
        Ok(out)
    }

    /// An integer (MuJoCo's `int`, 32 bits).
    fn int(&self, key: &str) -> Result<Option<i32>> {
        let Some(src) = self.last(key) else {
            return Ok(None);
        };
        let toks: Vec<&str> = src.value.split_ascii_whitespace().collect();
        if toks.len() != 1 {
            return Err(self.err_attr(key, src, format!("expected 1 integer, got {} values", toks.len())));
        }
        toks[0]
            .parse::<i32>()
            .map(Some)
            .map_err(|_| self.err_attr(key, src, "not a 32-bit integer"))
    }

    /// One of `options` (case-sensitive, as in MuJoCo).
    fn keyword(&self, key: &str, options: &[&'static str]) -> Result<Option<&'static str>> {
        let Some(src) = self.last(key) else {
            return Ok(None);
        };
        let v = src.value.trim();
        match options.iter().find(|o| **o == v) {
            Some(o) => Ok(Some(*o)),
            None => Err(self.err_attr(
                key,
                src,
                format!("unknown keyword, expected one of: {}", options.join(", ")),
            )),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>> {
        Ok(self.keyword(key, &["true", "false"])?.map(|k| k == "true"))
    }
}

/// Whitespace-separated finite reals.
fn parse_reals(s: &str) -> std::result::Result<Vec<f64>, String> {
    s.split_ascii_whitespace()
        .map(|t| match t.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            Ok(_) => Err(format!("'{t}' is not a finite number")),
            Err(_) => Err(format!("'{t}' is not a number")),
        })
        .collect()
}

// ------------------------------------------------------------------------------------------------
// Rotations, the way MuJoCo's compiler computes them
// ------------------------------------------------------------------------------------------------

fn normalized4(q: [f64; 4]) -> [f64; 4] {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}

/// The minimal rotation taking the z axis to the unit vector `v` (MuJoCo's `mjuu_z2quat`); an
/// antiparallel `v` gives the half turn about x.
fn z_to_quat(v: &Vec3) -> [f64; 4] {
    let mut axis = Vec3::z().cross(v);
    let s = axis.norm();
    if s < 1e-10 {
        axis = Vec3::x();
    } else {
        axis /= s;
    }
    let ang = s.atan2(v.z);
    let (sn, cs) = (0.5 * ang).sin_cos();
    [cs, axis.x * sn, axis.y * sn, axis.z * sn]
}

/// The quaternion of the frame whose axes are the columns x, y, z (MuJoCo's `mjuu_frame2quat`).
fn frame_to_quat(x: &Vec3, y: &Vec3, z: &Vec3) -> [f64; 4] {
    // m[c][r]: column c, row r
    let m = [[x[0], x[1], x[2]], [y[0], y[1], y[2]], [z[0], z[1], z[2]]];
    let mut q = [0.0; 4];
    if m[0][0] + m[1][1] + m[2][2] > 0.0 {
        q[0] = 0.5 * (1.0 + m[0][0] + m[1][1] + m[2][2]).sqrt();
        q[1] = 0.25 * (m[1][2] - m[2][1]) / q[0];
        q[2] = 0.25 * (m[2][0] - m[0][2]) / q[0];
        q[3] = 0.25 * (m[0][1] - m[1][0]) / q[0];
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        q[1] = 0.5 * (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt();
        q[0] = 0.25 * (m[1][2] - m[2][1]) / q[1];
        q[2] = 0.25 * (m[1][0] + m[0][1]) / q[1];
        q[3] = 0.25 * (m[2][0] + m[0][2]) / q[1];
    } else if m[1][1] > m[2][2] {
        q[2] = 0.5 * (1.0 - m[0][0] + m[1][1] - m[2][2]).sqrt();
        q[0] = 0.25 * (m[2][0] - m[0][2]) / q[2];
        q[1] = 0.25 * (m[1][0] + m[0][1]) / q[2];
        q[3] = 0.25 * (m[2][1] + m[1][2]) / q[2];
    } else {
        q[3] = 0.5 * (1.0 - m[0][0] - m[1][1] + m[2][2]).sqrt();
        q[0] = 0.25 * (m[0][1] - m[1][0]) / q[3];
        q[1] = 0.25 * (m[2][0] + m[0][2]) / q[3];
        q[2] = 0.25 * (m[2][1] + m[1][2]) / q[3];
    }
    normalized4(q)
}

// ------------------------------------------------------------------------------------------------
// Intermediate representation (MuJoCo's numbering)
// ------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum InertiaFromGeom {
    Auto,
    True,
    False,
}

/// `<compiler>` settings.
#[derive(Clone, Debug)]
struct Compiler {
    degree: bool,
    eulerseq: [u8; 3],
    inertia_from_geom: InertiaFromGeom,
    autolimits: bool,
    inertia_group_range: [i32; 2],
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            degree: true,
            eulerseq: *b"xyz",
            inertia_from_geom: InertiaFromGeom::Auto,
            autolimits: true,
            inertia_group_range: [0, 5],
        }
    }
}

/// A default class: its parent and the attributes it sets for joints and geoms.
#[derive(Clone, Debug)]
struct Class {
    name: String,
    parent: Option<usize>,
    joint: Vec<(String, Src)>,
    geom: Vec<(String, Src)>,
}

/// Mass properties of a MuJoCo body in its own frame.
#[derive(Clone, Copy, Debug)]
struct MassProps {
    mass: f64,
    com: Vec3,
    /// Rotational inertia about the centre of mass, body axes.
    inertia: Mat3,
    /// Principal moments (what MuJoCo's checks look at).
    principal: [f64; 3],
}

impl MassProps {
    fn zero() -> Self {
        MassProps {
            mass: 0.0,
            com: Vec3::zeros(),
            inertia: Mat3::zeros(),
            principal: [0.0; 3],
        }
    }
    fn big_enough(&self) -> bool {
        self.mass >= MJ_MINVAL && self.principal.iter().all(|&p| p >= MJ_MINVAL)
    }
}

/// A geom with the mass properties MuJoCo gives it.
#[derive(Clone, Debug)]
struct GeomSpec {
    geom: Geom,
    mass: f64,
    /// Principal moments about the geom's own axes.
    diag: [f64; 3],
    group: i32,
}

/// A joint as read, with its line.
#[derive(Clone, Debug)]
struct JointSpec {
    joint: Joint,
    line: u32,
}

/// A MuJoCo body as read.
#[derive(Clone, Debug)]
struct BodySpec {
    name: String,
    line: u32,
    parent: usize,
    pos: Vec3,
    quat: [f64; 4],
    joints: Vec<JointSpec>,
    geoms: Vec<GeomSpec>,
    mass: MassProps,
    /// True if neither this body nor any ancestor has a joint (MuJoCo's "weldid == 0").
    static_: bool,
}

// ------------------------------------------------------------------------------------------------
// The reader
// ------------------------------------------------------------------------------------------------

/// Warnings, one per kind: (key, first line, count, message).
type WarnList = Vec<(String, u32, usize, String)>;

struct Reader<'f> {
    file: &'f str,
    warnings: WarnList,
    compiler: Compiler,
    classes: Vec<Class>,
    class_index: HashMap<String, usize>,
    opt: Options,
    bodies: Vec<BodySpec>,
    body_index: HashMap<String, usize>,
    joint_names: HashMap<String, u32>,
    geom_names: HashMap<String, u32>,
}

fn line_of(node: &Node) -> u32 {
    node.document().text_pos_at(node.range().start).row
}

fn attr_line(node: &Node, name: &str) -> u32 {
    match node.attribute_node(name) {
        Some(a) => node.document().text_pos_at(a.range().start).row,
        None => line_of(node),
    }
}

/// `<tag name="...">` for messages.
fn describe(node: &Node) -> String {
    let tag = node.tag_name().name();
    if let Some(n) = node.attribute("name") {
        format!("<{tag} name=\"{n}\">")
    } else if let Some(c) = node.attribute("class") {
        format!("<{tag} class=\"{c}\">")
    } else {
        format!("<{tag}>")
    }
}

fn elements<'a, 'i>(node: &Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

impl<'f> Reader<'f> {
    fn new(file: &'f str) -> Self {
        Reader {
            file,
            warnings: Vec::new(),
            compiler: Compiler::default(),
            classes: Vec::new(),
            class_index: HashMap::new(),
            opt: Options::default(),
            bodies: Vec::new(),
            body_index: HashMap::new(),
            joint_names: HashMap::new(),
            geom_names: HashMap::new(),
        }
    }

    fn err_at(&self, line: u32, why: String) -> Error {
        Error::Model {
            file: self.file.into(),
            line,
            why,
        }
    }

    fn err_node(&self, node: &Node, why: impl std::fmt::Display) -> Error {
        self.err_at(line_of(node), format!("{}: {why}", describe(node)))
    }

    /// Records a warning; repeated warnings of the same kind are counted, not repeated.
    fn warn(&mut self, key: String, line: u32, message: String) {
        if let Some(w) = self.warnings.iter_mut().find(|w| w.0 == key) {
            w.2 += 1;
        } else {
            self.warnings.push((key, line, 1, message));
        }
    }

    fn skip_element(&mut self, node: &Node, reason: &str) {
        let tag = node.tag_name().name();
        self.warn(
            format!("element {tag}: {reason}"),
            line_of(node),
            format!("<{tag}> skipped: {reason}"),
        );
    }

    fn finish_warnings(&self) -> Vec<String> {
        self.warnings
            .iter()
            .map(|(_, line, n, msg)| {
                if *n > 1 {
                    format!("{}:{line}: {msg} ({n} occurrences, first on this line)", self.file)
                } else {
                    format!("{}:{line}: {msg}", self.file)
                }
            })
            .collect()
    }

    /// Checks an element's attribute names: `supported` pass, visual-only ones are skipped with
    /// a warning, anything else is an error naming the attribute.
    fn check_attrs(&mut self, node: &Node, supported: &[&str]) -> Result<()> {
        let tag = node.tag_name().name();
        for a in node.attributes() {
            let name = a.name();
            if a.namespace().is_some() {
                return Err(self.err_at(
                    attr_line(node, name),
                    format!("{}: namespaced attribute '{name}' is not supported", describe(node)),
                ));
            }
            if supported.contains(&name) {
                continue;
            }
            if COSMETIC.contains(&name)
                || (tag == "joint" && name == "group")
                || (tag == "freejoint" && name == "group")
            {
                self.warn(
                    format!("attr {tag}.{name}"),
                    attr_line(node, name),
                    format!("attribute '{name}' of <{tag}> skipped: visual only or user data"),
                );
                continue;
            }
            return Err(self.err_at(
                attr_line(node, name),
                format!("{}: attribute '{name}' is not supported by this reader", describe(node)),
            ));
        }
        Ok(())
    }

    /// The attributes of an element that takes no defaults.
    fn direct(&self, node: &Node) -> Attrs<'f> {
        let mut map = BTreeMap::new();
        for a in node.attributes() {
            let src = Src {
                value: a.value().to_string(),
                line: attr_line(node, a.name()),
                class: None,
            };
            map.insert(a.name().to_string(), vec![src]);
        }
        Attrs {
            file: self.file,
            tag: describe(node),
            line: line_of(node),
            map,
        }
    }

    /// The class an element uses: its own `class`, else the enclosing `childclass`, else main.
    fn class_of(&self, node: &Node, inherited: usize) -> Result<usize> {
        match node.attribute("class") {
            Some(c) => self.class_index.get(c).copied().ok_or_else(|| {
                self.err_at(
                    attr_line(node, "class"),
                    format!("{}: unknown default class '{c}'", describe(node)),
                )
            }),
            None => Ok(inherited),
        }
    }

    /// The attributes of a joint or geom after resolving its default class.
    fn resolved(&self, node: &Node, kind: Kind, class: usize) -> Attrs<'f> {
        let mut chain = vec![class];
        while let Some(p) = self.classes[*chain.last().unwrap()].parent {
            chain.push(p);
        }
        chain.reverse();
        let own_orientation = ORIENTATION.iter().any(|k| node.has_attribute(*k));
        let mut map: BTreeMap<String, Vec<Src>> = BTreeMap::new();
        for &c in &chain {
            let cls = &self.classes[c];
            let list = if kind == Kind::Joint { &cls.joint } else { &cls.geom };
            for (k, src) in list {
                // An orientation written on the element replaces any the classes give.
                if own_orientation && ORIENTATION.contains(&k.as_str()) {
                    continue;
                }
                map.entry(k.clone()).or_default().push(src.clone());
            }
        }
        for a in node.attributes() {
            if a.name() == "class" {
                continue;
            }
            let src = Src {
                value: a.value().to_string(),
                line: attr_line(node, a.name()),
                class: None,
            };
            map.entry(a.name().to_string()).or_default().push(src);
        }
        Attrs {
            file: self.file,
            tag: describe(node),
            line: line_of(node),
            map,
        }
    }

    // --------------------------------------------------------------------------------------------

    fn read(&mut self, doc: &Document) -> Result<Model> {
        let root = doc.root_element();
        if root.tag_name().name() != "mujoco" {
            return Err(self.err_node(&root, "the root element must be <mujoco>"));
        }
        self.check_attrs(&root, &["model"])?;
        let model_name = root.attribute("model").unwrap_or("MuJoCo Model").to_string();

        // Sections in MuJoCo's order of effect: the compiler settings first (they change how
        // angles are read), then defaults, options, bodies and equality constraints.
        for child in elements(&root) {
            match child.tag_name().name() {
                "compiler" => self.read_compiler(&child)?,
                "default" | "option" | "worldbody" | "equality" => {}
                "visual" | "asset" | "statistic" => self.skip_element(&child, "visualisation only"),
                "size" => self.skip_element(&child, "memory sizes only"),
                "sensor" => self.skip_element(&child, "sensors do not change the dynamics"),
                "keyframe" => self.skip_element(&child, "keyframes do not change qpos0 or the dynamics"),
                "custom" => self.skip_element(&child, "user data only"),
                "actuator" => self.read_actuators(&child)?,
                "tendon" => {
                    return Err(self.err_node(&child, "tendons are not supported (they add forces and constraints)"))
                }
                "contact" => {
                    return Err(self.err_node(
                        &child,
                        "contact pairs and exclusions are not supported (they change which geoms collide)",
                    ))
                }
                other => {
                    return Err(self.err_node(&child, format!("element <{other}> is not supported by this reader")))
                }
            }
        }

        // The main class always exists; every top-level <default> adds to it.
        self.classes.push(Class {
            name: "main".into(),
            parent: None,
            joint: vec![],
            geom: vec![],
        });
        self.class_index.insert("main".into(), 0);
        for child in elements(&root).filter(|c| c.has_tag_name("default")) {
            if let Some(c) = child.attribute("class") {
                if c != "main" {
                    return Err(self.err_at(
                        attr_line(&child, "class"),
                        format!(
                            "{}: the top-level default class is 'main' and cannot be renamed",
                            describe(&child)
                        ),
                    ));
                }
            }
            self.read_default(&child, 0)?;
        }
        for child in elements(&root).filter(|c| c.has_tag_name("option")) {
            self.read_option(&child)?;
        }

        self.bodies.push(BodySpec {
            name: "world".into(),
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
        for child in elements(&root).filter(|c| c.has_tag_name("worldbody")) {
            self.check_attrs(&child, &[])?;
            self.read_body_children(&child, 0, 0)?;
        }
        self.check_moving_masses()?;

        let (mut model, joint_fs) = self.emit(model_name)?;

        let mut equality = Vec::new();
        for child in elements(&root).filter(|c| c.has_tag_name("equality")) {
            self.check_attrs(&child, &[])?;
            for eq in elements(&child) {
                equality.push(self.read_equality(&eq, &model, &joint_fs)?);
            }
        }
        model.equality = equality;
        model.validate()?;
        Ok(model)
    }

    fn read_compiler(&mut self, node: &Node) -> Result<()> {
        let a = self.direct(node);
        for k in ["meshdir", "texturedir", "assetdir", "strippath", "usethread"] {
            if a.has(k) {
                self.warn(
                    format!("attr compiler.{k}"),
                    attr_line(node, k),
                    format!("attribute '{k}' of <compiler> skipped: no effect without meshes and textures"),
                );
            }
        }
        self.check_attrs(
            node,
            &[
                "angle",
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
        for (k, default) in [("boundmass", 0.0), ("boundinertia", 0.0), ("settotalmass", -1.0)] {
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

    fn read_option(&mut self, node: &Node) -> Result<()> {
        let a = self.direct(node);
        for k in ["magnetic", "jacobian"] {
            if a.has(k) {
                self.warn(
                    format!("attr option.{k}"),
                    attr_line(node, k),
                    format!("attribute '{k}' of <option> skipped: no effect on the dynamics computed here"),
                );
            }
        }
        self.check_attrs(
            node,
            &[
                "timestep",
                "gravity",
                "integrator",
                "solver",
                "cone",
                "iterations",
                "tolerance",
                "impratio",
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
        for child in elements(node) {
            match child.tag_name().name() {
                "flag" => {
                    let list: Vec<String> = child
                        .attributes()
                        .map(|x| format!("{}=\"{}\"", x.name(), x.value()))
                        .collect();
                    self.warn(
                        "element flag".into(),
                        line_of(&child),
                        format!(
                            "<flag {}> skipped: every flag keeps MuJoCo's default here (a disabled or enabled \
                             flag would change the dynamics in MuJoCo)",
                            list.join(" ")
                        ),
                    );
                }
                other => {
                    return Err(self.err_node(&child, format!("element <{other}> inside <option> is not supported")))
                }
            }
        }
        Ok(())
    }

    fn read_actuators(&mut self, node: &Node) -> Result<()> {
        self.check_attrs(node, &[])?;
        const MOTOR_ATTRS: [&str; 13] = [
            "name",
            "class",
            "joint",
            "jointinparent",
            "site",
            "tendon",
            "body",
            "gear",
            "ctrlrange",
            "ctrllimited",
            "forcerange",
            "forcelimited",
            "group",
        ];
        for child in elements(node) {
            match child.tag_name().name() {
                "motor" => {
                    self.check_attrs(&child, &MOTOR_ATTRS)?;
                    self.warn(
                        "element motor".into(),
                        line_of(&child),
                        "<motor> skipped: a motor's force is gear * ctrl and this library has no controls, so \
                         it exerts no force; the model has no actuators"
                            .into(),
                    );
                }
                other => {
                    return Err(self.err_node(
                        &child,
                        format!("actuator <{other}> is not supported (it can exert force at zero control); only <motor> is skipped"),
                    ))
                }
            }
        }
        Ok(())
    }

    fn read_default(&mut self, node: &Node, class: usize) -> Result<()> {
        if class == 0 {
            self.check_attrs(node, &["class"])?;
        }
        for child in elements(node) {
            let tag = child.tag_name().name();
            match tag {
                "default" => {
                    self.check_attrs(&child, &["class"])?;
                    let Some(name) = child.attribute("class") else {
                        return Err(self.err_node(&child, "a nested <default> needs a 'class' attribute"));
                    };
                    if self.class_index.contains_key(name) {
                        return Err(self.err_at(
                            attr_line(&child, "class"),
                            format!("{}: repeated default class name '{name}'", describe(&child)),
                        ));
                    }
                    let idx = self.classes.len();
                    self.classes.push(Class {
                        name: name.into(),
                        parent: Some(class),
                        joint: vec![],
                        geom: vec![],
                    });
                    self.class_index.insert(name.into(), idx);
                    self.read_default(&child, idx)?;
                }
                "joint" | "geom" => {
                    let list: &[&str] = if tag == "joint" { &JOINT_ATTRS } else { &GEOM_ATTRS };
                    self.check_attrs(&child, list)?;
                    let cname = self.classes[class].name.clone();
                    let attrs: Vec<(String, Src)> = child
                        .attributes()
                        .filter(|a| list.contains(&a.name()) && !COSMETIC.contains(&a.name()))
                        .map(|a| {
                            let src = Src {
                                value: a.value().into(),
                                line: attr_line(&child, a.name()),
                                class: Some(cname.clone()),
                            };
                            (a.name().to_string(), src)
                        })
                        .collect();
                    let cls = &mut self.classes[class];
                    if tag == "joint" {
                        cls.joint.extend(attrs);
                    } else {
                        cls.geom.extend(attrs);
                    }
                }
                "site" | "camera" | "light" | "mesh" | "material" | "texture" => {
                    self.skip_element(&child, "defaults for visual elements")
                }
                "motor" | "position" | "velocity" | "intvelocity" | "damper" | "cylinder" | "muscle" | "adhesion"
                | "general" | "tendon" | "pair" => self.warn(
                    "default of skipped or rejected element".into(),
                    line_of(&child),
                    format!("<{tag}> default skipped: the reader skips or rejects the elements it would apply to"),
                ),
                "equality" => {
                    if child.attributes().len() > 0 {
                        return Err(
                            self.err_node(&child, "equality defaults (active, solref, solimp) are not supported")
                        );
                    }
                }
                other => {
                    return Err(self.err_node(&child, format!("element <{other}> inside <default> is not supported")))
                }
            }
        }
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Bodies
    // --------------------------------------------------------------------------------------------

    /// Reads the orientation alternatives of an element (at most one of them) into a unit
    /// quaternion, the way MuJoCo's compiler does.
    fn orientation(&self, a: &Attrs) -> Result<Option<[f64; 4]>> {
        let given: Vec<&str> = ORIENTATION.iter().copied().filter(|k| a.has(k)).collect();
        if given.len() > 1 {
            return Err(a.err(format!(
                "multiple orientation specifiers ({}) are not allowed",
                given.join(", ")
            )));
        }
        let Some(&key) = given.first() else {
            return Ok(None);
        };
        let src = a.last(key).unwrap();
        // as MuJoCo writes it: x / 180 * pi
        let to_rad = |x: f64| {
            if self.compiler.degree {
                x / 180.0 * std::f64::consts::PI
            } else {
                x
            }
        };
        let q = match key {
            "quat" => {
                let q = a.vec::<4>(key)?.unwrap();
                let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
                if n < MJ_MINVAL {
                    return Err(a.err_attr(key, src, "zero quaternion is not allowed"));
                }
                normalized4(q)
            }
            "axisangle" => {
                let v = a.vec::<4>(key)?.unwrap();
                let axis = Vec3::new(v[0], v[1], v[2]);
                let n = axis.norm();
                if n < MJ_EPS {
                    return Err(a.err_attr(key, src, "axis too small"));
                }
                let axis = axis / n;
                let (s, c) = (0.5 * to_rad(v[3])).sin_cos();
                [c, s * axis.x, s * axis.y, s * axis.z]
            }
            "xyaxes" => {
                let v = a.vec::<6>(key)?.unwrap();
                let mut x = Vec3::new(v[0], v[1], v[2]);
                let mut y = Vec3::new(v[3], v[4], v[5]);
                let nx = x.norm();
                if nx < MJ_EPS {
                    return Err(a.err_attr(key, src, "x axis too small"));
                }
                x /= nx;
                y -= x * x.dot(&y);
                let ny = y.norm();
                if ny < MJ_EPS {
                    return Err(a.err_attr(key, src, "y axis too small or parallel to x"));
                }
                y /= ny;
                let mut z = x.cross(&y);
                z /= z.norm();
                frame_to_quat(&x, &y, &z)
            }
            "zaxis" => {
                let v = Vec3::from(a.vec::<3>(key)?.unwrap());
                let n = v.norm();
                if n < MJ_EPS {
                    return Err(a.err_attr(key, src, "z axis too small"));
                }
                z_to_quat(&(v / n))
            }
            _ => {
                let e = a.vec::<3>(key)?.unwrap();
                let mut q = [1.0, 0.0, 0.0, 0.0];
                for (i, &c) in self.compiler.eulerseq.iter().enumerate() {
                    let (s, cs) = (0.5 * to_rad(e[i])).sin_cos();
                    let r = match c.to_ascii_lowercase() {
                        b'x' => [cs, s, 0.0, 0.0],
                        b'y' => [cs, 0.0, s, 0.0],
                        _ => [cs, 0.0, 0.0, s],
                    };
                    // lowercase: rotations about the moving axes (post-multiply); uppercase: fixed axes
                    q = if c.is_ascii_lowercase() {
                        quat_mul(&q, &r)
                    } else {
                        quat_mul(&r, &q)
                    };
                }
                normalized4(q)
            }
        };
        Ok(Some(q))
    }

    /// Reads the child elements of MuJoCo body `me` (0 for `<worldbody>`): its joints, geoms,
    /// inertial and child bodies.
    fn read_body_children(&mut self, node: &Node, me: usize, childclass: usize) -> Result<()> {
        let mut inertial: Option<MassProps> = None;
        let mut inertial_line = 0;
        let is_world = me == 0;
        for child in elements(node) {
            let tag = child.tag_name().name();
            match tag {
                "body" => self.read_body(&child, me, childclass)?,
                "geom" => {
                    let class = self.class_of(&child, childclass)?;
                    let g = self.read_geom(&child, class, me)?;
                    self.bodies[me].geoms.push(g);
                }
                "joint" | "freejoint" if is_world => {
                    return Err(self.err_node(&child, "the world body cannot have joints"));
                }
                "inertial" if is_world => return Err(self.err_node(&child, "the world body cannot have an inertial")),
                "joint" | "freejoint" => {
                    let j = self.read_joint(&child, childclass, me)?;
                    self.bodies[me].joints.push(j);
                }
                "inertial" => {
                    if inertial.is_some() {
                        return Err(self.err_node(
                            &child,
                            format!("a body can have only one <inertial> (first at line {inertial_line})"),
                        ));
                    }
                    inertial_line = line_of(&child);
                    inertial = Some(self.read_inertial(&child)?);
                }
                "site" | "camera" | "light" => self.skip_element(&child, "no effect on the dynamics"),
                other => {
                    return Err(self.err_node(
                        &child,
                        format!("element <{other}> inside a body is not supported by this reader"),
                    ))
                }
            }
        }
        if !is_world {
            self.bodies[me].mass = self.body_mass(me, inertial)?;
        }
        Ok(())
    }

    fn read_body(&mut self, node: &Node, parent: usize, childclass: usize) -> Result<()> {
        self.check_attrs(
            node,
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
        let a = self.direct(node);
        let name = a.string("name").unwrap_or_default();
        if !name.is_empty() {
            if let Some(&other) = self.body_index.get(&name) {
                let first = self.bodies[other].line;
                return Err(a.err(format!("repeated body name '{name}' (first at line {first})")));
            }
        }
        if a.boolean("mocap")? == Some(true) {
            return Err(a.err_attr("mocap", a.last("mocap").unwrap(), "mocap bodies are not supported"));
        }
        if let Some(g) = a.real("gravcomp")? {
            if g != 0.0 {
                return Err(a.err_attr(
                    "gravcomp",
                    a.last("gravcomp").unwrap(),
                    "gravity compensation is not supported",
                ));
            }
        }
        let childclass = match a.last("childclass") {
            Some(src) => *self
                .class_index
                .get(src.value.as_str())
                .ok_or_else(|| a.err_attr("childclass", src, "unknown default class"))?,
            None => childclass,
        };
        let pos = Vec3::from(a.vec::<3>("pos")?.unwrap_or([0.0; 3]));
        let quat = self.orientation(&a)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        let idx = self.bodies.len();
        if !name.is_empty() {
            self.body_index.insert(name.clone(), idx);
        }
        let static_ = self.bodies[parent].static_
            && !elements(node).any(|c| c.has_tag_name("joint") || c.has_tag_name("freejoint"));
        self.bodies.push(BodySpec {
            name,
            line: a.line,
            parent,
            pos,
            quat,
            joints: vec![],
            geoms: vec![],
            mass: MassProps::zero(),
            static_,
        });
        self.read_body_children(node, idx, childclass)
    }

    fn read_joint(&mut self, node: &Node, childclass: usize, body: usize) -> Result<JointSpec> {
        let free_elem = node.has_tag_name("freejoint");
        let a = if free_elem {
            // <freejoint> takes no defaults (MuJoCo's AddFreeJoint).
            self.check_attrs(node, &["name"])?;
            self.direct(node)
        } else {
            let mut list: Vec<&str> = JOINT_ATTRS.to_vec();
            list.extend(["name", "class"]);
            self.check_attrs(node, &list)?;
            let class = self.class_of(node, childclass)?;
            self.resolved(node, Kind::Joint, class)
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
            if n < MJ_EPS {
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
        };
        Ok(JointSpec { joint, line: a.line })
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

    fn read_inertial(&mut self, node: &Node) -> Result<MassProps> {
        self.check_attrs(
            node,
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
        let a = self.direct(node);
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
        let (inertia, principal) = if let Some(f) = a.vec::<6>("fullinertia")? {
            let m = Mat3::new(f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]);
            let ev = nalgebra::SymmetricEigen::new(m).eigenvalues;
            let p = [ev[0], ev[1], ev[2]];
            if p.iter().any(|&x| x < MJ_EPS) {
                return Err(a.err_attr(
                    "fullinertia",
                    a.last("fullinertia").unwrap(),
                    "inertia must have positive eigenvalues",
                ));
            }
            (m, p)
        } else {
            let d = a.vec::<3>("diaginertia")?.unwrap_or([0.0; 3]);
            if d.iter().any(|&x| x < 0.0) {
                return Err(a.err_attr(
                    "diaginertia",
                    a.last("diaginertia").unwrap(),
                    "inertia cannot be negative",
                ));
            }
            let q = self.orientation(&a)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
            let r = quat_to_mat(&q);
            (r * Mat3::from_diagonal(&Vec3::from(d)) * r.transpose(), d)
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
        })
    }

    fn read_geom(&mut self, node: &Node, class: usize, body: usize) -> Result<GeomSpec> {
        let mut list: Vec<&str> = GEOM_ATTRS.to_vec();
        list.extend(["name", "class"]);
        self.check_attrs(node, &list)?;
        let a = self.resolved(node, Kind::Geom, class);
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
        let mut quat = self.orientation(&a)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        if let Some(ft) = a.vec::<6>("fromto")? {
            let src = a.last("fromto").unwrap();
            if !matches!(gtype, GeomType::Capsule | GeomType::Cylinder | GeomType::Box) {
                return Err(a.err_attr("fromto", src, "fromto needs a capsule, cylinder or box"));
            }
            if pos != Vec3::zeros() {
                return Err(a.err("both 'pos' and 'fromto' are given"));
            }
            if ORIENTATION.iter().any(|k| node.has_attribute(*k)) {
                return Err(a.err("both 'fromto' and an orientation are given"));
            }
            // MuJoCo points the geom's z axis from `to` towards `from`.
            let v = Vec3::new(ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]);
            let half = 0.5 * v.norm();
            if half < MJ_EPS {
                return Err(a.err_attr("fromto", src, "fromto points are too close"));
            }
            size[1] = half;
            if gtype == GeomType::Box {
                size[2] = size[1];
                size[1] = size[0];
            }
            pos = Vec3::new(0.5 * (ft[0] + ft[3]), 0.5 * (ft[1] + ft[4]), 0.5 * (ft[2] + ft[5]));
            quat = z_to_quat(&(v / v.norm()));
        }
        // size checks (MuJoCo's checksize)
        let needed = match gtype {
            GeomType::Plane => 0,
            GeomType::Sphere => 1,
            GeomType::Capsule | GeomType::Cylinder => 2,
            GeomType::Box => 3,
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
        let group = a.int("group")?.unwrap_or(0);
        let density = a.real("density")?.unwrap_or(1000.0);
        if density < 0.0 {
            return Err(a.err_attr("density", a.last("density").unwrap(), "density cannot be negative"));
        }
        let volume = geom_volume(gtype, &size);
        let mass = match a.real("mass")? {
            Some(m) if m < 0.0 => return Err(a.err_attr("mass", a.last("mass").unwrap(), "mass cannot be negative")),
            Some(m) if m == 0.0 || volume <= MJ_MINVAL => 0.0,
            Some(m) => m,
            None => density * volume,
        };
        let diag = geom_inertia(gtype, &size, mass);
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
        };
        Ok(GeomSpec {
            geom,
            mass,
            diag,
            group,
        })
    }

    /// Mass properties of MuJoCo body `b`: the `<inertial>`, or the geoms' (MuJoCo's
    /// `mjCBody::GeomFrame`).
    fn body_mass(&self, b: usize, inertial: Option<MassProps>) -> Result<MassProps> {
        let body = &self.bodies[b];
        let [lo, hi] = self.compiler.inertia_group_range;
        let sel: Vec<&GeomSpec> = body.geoms.iter().filter(|g| g.group >= lo && g.group <= hi).collect();
        let from_geoms = match self.compiler.inertia_from_geom {
            InertiaFromGeom::True => !sel.is_empty(),
            InertiaFromGeom::Auto => inertial.is_none(),
            InertiaFromGeom::False => false,
        };
        if !from_geoms {
            return Ok(inertial.unwrap_or_else(MassProps::zero));
        }
        if sel.len() == 1 {
            let g = sel[0];
            let r = quat_to_mat(&g.geom.quat);
            let inertia = r * Mat3::from_diagonal(&Vec3::from(g.diag)) * r.transpose();
            return Ok(MassProps {
                mass: g.mass,
                com: g.geom.pos,
                inertia,
                principal: g.diag,
            });
        }
        let mass: f64 = sel.iter().map(|g| g.mass).sum();
        if sel.is_empty() || mass < MJ_MINVAL {
            return Ok(MassProps {
                mass,
                ..MassProps::zero()
            });
        }
        let com = sel.iter().fold(Vec3::zeros(), |acc, g| acc + g.geom.pos * g.mass) / mass;
        let mut inertia = Mat3::zeros();
        for g in &sel {
            let r = quat_to_mat(&g.geom.quat);
            let d = g.geom.pos - com;
            inertia += r * Mat3::from_diagonal(&Vec3::from(g.diag)) * r.transpose()
                + (Mat3::identity() * d.dot(&d) - d * d.transpose()) * g.mass;
        }
        let ev = nalgebra::SymmetricEigen::new(inertia).eigenvalues;
        Ok(MassProps {
            mass,
            com,
            inertia,
            principal: [ev[0], ev[1], ev[2]],
        })
    }

    /// MuJoCo's check that moving bodies have mass: a body with joints needs mass and principal
    /// moments of at least mjMINVAL, unless a jointless child has them.
    fn check_moving_masses(&self) -> Result<()> {
        for (b, body) in self.bodies.iter().enumerate().skip(1) {
            if body.joints.is_empty() || body.mass.big_enough() {
                continue;
            }
            let rescued = self
                .bodies
                .iter()
                .any(|c| c.parent == b && c.joints.is_empty() && c.mass.big_enough());
            if !rescued {
                let name = if body.name.is_empty() {
                    format!("<body> (MuJoCo body {b})")
                } else {
                    format!("<body name=\"{}\">", body.name)
                };
                return Err(self.err_at(
                    body.line,
                    format!(
                        "{name}: mass {:e} and principal moments {:?} of a moving body must be at least mjMINVAL = 1e-15",
                        body.mass.mass, body.mass.principal
                    ),
                ));
            }
        }
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Featherstone bodies
    // --------------------------------------------------------------------------------------------

    /// Builds the [`Model`]: one Featherstone body per joint (one per jointless body), in
    /// MuJoCo's body and joint order. Returns the model and the Featherstone body of each
    /// joint name.
    fn emit(&mut self, name: String) -> Result<(Model, HashMap<String, usize>)> {
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
                    body.line,
                    format!("<body name=\"{}\">: more than 6 dofs in one body", body.name),
                ));
            }
            let mut ball = false;
            for j in &body.joints {
                if ball && matches!(j.joint.jtype, JointType::Revolute { .. } | JointType::Spherical) {
                    return Err(self.err_at(
                        j.line,
                        format!(
                            "<joint name=\"{}\">: a rotation follows a ball joint in the same body",
                            j.joint.name
                        ),
                    ));
                }
                ball |= matches!(j.joint.jtype, JointType::Spherical);
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
                let x_tree = if jk == 0 && !free { x_body } else { Xform::identity() };
                let i = b.add_body(
                    &fs_name,
                    parent,
                    js.joint.clone(),
                    x_tree,
                    if last { inertia } else { SpatialInertia::zero() },
                );
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
        model.mj_body = mj_body;
        model.mj_body_last = mj_body_last;
        model.mj_body_name = self.bodies.iter().map(|b| b.name.clone()).collect();
        Ok((model, joint_fs))
    }

    // --------------------------------------------------------------------------------------------
    // Equality constraints
    // --------------------------------------------------------------------------------------------

    fn read_equality(&mut self, node: &Node, model: &Model, joint_fs: &HashMap<String, usize>) -> Result<Equality> {
        let tag = node.tag_name().name();
        let list: &[&str] = match tag {
            "connect" => &["name", "class", "active", "body1", "body2", "anchor"],
            "weld" => &["name", "class", "active", "body1", "body2", "anchor", "relpose"],
            "joint" => &["name", "class", "active", "joint1", "joint2", "polycoef"],
            other => {
                return Err(self.err_node(
                    node,
                    format!("equality <{other}> is not supported (only connect, weld and joint)"),
                ))
            }
        };
        self.check_attrs(node, list)?;
        let _ = self.class_of(node, 0)?;
        let a = self.direct(node);
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
        Ok(match tag {
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
        })
    }
}

/// Geom volume (MuJoCo's `mjCGeom::GetVolume`); planes have none.
fn geom_volume(gtype: GeomType, s: &[f64; 3]) -> f64 {
    use std::f64::consts::PI;
    match gtype {
        GeomType::Sphere => 4.0 * PI * s[0] * s[0] * s[0] / 3.0,
        GeomType::Capsule => PI * (s[0] * s[0] * 2.0 * s[1] + 4.0 * s[0] * s[0] * s[0] / 3.0),
        GeomType::Cylinder => PI * s[0] * s[0] * 2.0 * s[1],
        GeomType::Box => 8.0 * s[0] * s[1] * s[2],
        GeomType::Plane => 0.0,
    }
}

/// Principal moments of a solid geom about its centre, in its own axes (MuJoCo's
/// `mjCGeom::SetInertia`). The capsule is a cylinder of height h = 2 size[1] plus two
/// hemispheres whose centres of mass sit 3r/8 beyond the cylinder's ends.
fn geom_inertia(gtype: GeomType, s: &[f64; 3], mass: f64) -> [f64; 3] {
    match gtype {
        GeomType::Sphere => [2.0 * mass * s[0] * s[0] / 5.0; 3],
        GeomType::Capsule => {
            let (r, h) = (s[0], 2.0 * s[1]);
            let m_sph = mass * 4.0 * r / (4.0 * r + 3.0 * h);
            let m_cyl = mass - m_sph;
            let i_sph = 2.0 * m_sph * r * r / 5.0;
            let ixx = m_cyl * (3.0 * r * r + h * h) / 12.0 + i_sph + m_sph * h * (3.0 * r + 2.0 * h) / 8.0;
            [ixx, ixx, m_cyl * r * r / 2.0 + i_sph]
        }
        GeomType::Cylinder => {
            let (r, h) = (s[0], 2.0 * s[1]);
            let ixx = mass * (3.0 * r * r + h * h) / 12.0;
            [ixx, ixx, mass * r * r / 2.0]
        }
        GeomType::Box => [
            mass * (s[1] * s[1] + s[2] * s[2]) / 3.0,
            mass * (s[0] * s[0] + s[2] * s[2]) / 3.0,
            mass * (s[0] * s[0] + s[1] * s[1]) / 3.0,
        ],
        GeomType::Plane => [0.0; 3],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// The capsule formula against a direct integration: slice the capsule along z into thin
    /// disks and add their moments (an independent route to MuJoCo's closed form).
    #[test]
    fn capsule_inertia_matches_slicing() {
        let (r, half) = (0.1f64, 0.3f64);
        let size = [r, half, 0.0];
        let density = 1000.0;
        let mass = density * geom_volume(GeomType::Capsule, &size);
        let closed = geom_inertia(GeomType::Capsule, &size, mass);
        let n = 200_000;
        let (zmax, dz) = (half + r, 2.0 * (half + r) / n as f64);
        let (mut m, mut ixx, mut izz) = (0.0, 0.0, 0.0);
        for k in 0..n {
            let z = -zmax + (k as f64 + 0.5) * dz;
            let rho = if z.abs() <= half {
                r
            } else {
                (r * r - (z.abs() - half).powi(2)).max(0.0).sqrt()
            };
            let dm = density * std::f64::consts::PI * rho * rho * dz;
            m += dm;
            ixx += dm * (rho * rho / 4.0 + z * z);
            izz += dm * rho * rho / 2.0;
        }
        assert_relative_eq!(m, mass, max_relative = 1e-8);
        assert_relative_eq!(closed[0], ixx, max_relative = 1e-8);
        assert_relative_eq!(closed[2], izz, max_relative = 1e-8);
    }

    /// `--` in comments is relaxed without moving anything; other text is untouched.
    #[test]
    fn comments_with_double_dashes_are_relaxed() {
        let xml = "<a x=\"--\"><!-- gen --axes y ---><b/><!----></a>";
        let out = relax_comments(xml);
        assert_eq!(out, "<a x=\"--\"><!-- gen - axes y  --><b/><!----></a>");
        assert_eq!(out.len(), xml.len());
        assert!(Document::parse(&out).is_ok());
    }

    /// z_to_quat rotates z onto the given direction; frame_to_quat inverts quat_to_mat.
    #[test]
    fn rotation_helpers_round_trip() {
        for v in [
            Vec3::new(0.3, -0.4, 0.8),
            Vec3::new(0.0, 0.0, -1.0),
            Vec3::new(1.0, 0.0, 0.0),
        ] {
            let v = v.normalize();
            let q = z_to_quat(&v);
            assert_relative_eq!(quat_to_mat(&q) * Vec3::z(), v, epsilon = 1e-15);
        }
        let q = normalized4([0.3, -0.5, 0.2, 0.7]);
        let r = quat_to_mat(&q);
        let back = frame_to_quat(&r.column(0).into(), &r.column(1).into(), &r.column(2).into());
        let s = if back[0] * q[0] < 0.0 { -1.0 } else { 1.0 };
        for k in 0..4 {
            assert_relative_eq!(s * back[k], q[k], epsilon = 1e-15);
        }
    }
}
