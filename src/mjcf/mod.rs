//! The MJCF reader (MuJoCo's XML model format). Book chapter: "Joint models and kinematic
//! trees", section "Reading MuJoCo models".
//!
//! [`load`] (a path) and [`load_str`] / [`parse`] (text) turn an MJCF file into a [`Model`]
//! with MuJoCo 4.0's semantics for everything listed below, checked number by number against
//! MuJoCo itself (`tests/mjcf.rs`, `tests/fixtures/make_mjcf_structure.py`). Whatever is not
//! listed is either skipped with one warning line in [`Loaded::warnings`] (when it cannot change
//! the dynamics) or rejected with an [`Error::Model`] naming the file, the line, the element and
//! the attribute, on one line. The reader never silently drops something that changes how the
//! model moves.
//!
//! # Map
//!
//! The reader is split the way MuJoCo splits its XML parser (`src/xml`) from its model compiler
//! (`src/user`):
//!
//! | stage | file | MuJoCo |
//! |---|---|---|
//! | XML text to an element tree with files and lines, `<include>` | [`xml`](self) (`xml.rs`) | `xml.cc`, `xml_util.cc` |
//! | attribute access and the schema of allowed children | `attrs.rs` | `xml_util.cc` (`ReadAttr`), `xml_native_reader.cc` (`MJCF[]`) |
//! | default classes | `defaults.rs` | `mjsDefault`, `xml_native_reader.cc` (`Default`) |
//! | orientation attributes | `orientation.rs` | `user_util.cc` (`mjuu_frame2quat`, ...) |
//! | the reader's state, warnings, attribute checks, the intermediate specs and the order the sections are read in | `reader.rs` | `xml_native_reader.cc` (`mjXReader::Parse`) |
//! | `<compiler>`, `<option>`, `<flag>` | `options.rs` | `xml_native_reader.cc` (`Compiler`, `Option`) |
//! | bodies and frames (iterative), inertials | `body.rs` | `xml_native_reader.cc` (`Body`) |
//! | joints | `joint.rs` | `xml_native_reader.cc` (`OneJoint`) |
//! | geoms | `geom.rs` | `xml_native_reader.cc` (`OneGeom`) |
//! | sites | `site.rs` | `xml_native_reader.cc` (`OneSite`) |
//! | tendons | `tendon.rs` | `xml_native_reader.cc` (`Tendon`) |
//! | equality constraints | `equality.rs` | `xml_native_reader.cc` (`Equality`) |
//! | actuators | `actuator.rs` | `xml_native_reader.cc` (`Actuator`, `OneActuator`) |
//! | contact pairs and exclusions | `contact.rs` | `xml_native_reader.cc` (`Contact`) |
//! | keyframes | `keyframe.rs` | `xml_native_reader.cc` (`Keyframe`) |
//! | the compile step: mass and inertia from geoms, mass checks | `compile.rs` | `user_model.cc`, `user_objects.cc` (`mjCBody::Compile`, `mjCGeom::SetInertia`) |
//! | emitting the [`Model`] (one Featherstone body per joint) | `emit.rs` | `mjCModel::CopyObjects` |
//! | `<asset>`: meshes (inline, STL, OBJ; hull, volume, inertia, principal frame), height fields and materials | `assets.rs` | `user_mesh.cc` (`mjCMesh::Process`), `mjCHField`, `mjCMaterial` |
//!
//! # Supported
//!
//! | element | attributes | notes |
//! |---|---|---|
//! | `<mujoco>` | `model` | |
//! | `<include>` | `file` | relative to the including file; the included `<mujoco>`'s children replace it; a file included twice is an error |
//! | `<compiler>` | `angle` (`degree` default, `radian`), `coordinate` (`local`), `eulerseq`, `inertiafromgeom` (`auto`, `true`, `false`), `autolimits`, `inertiagrouprange`, `settotalmass`; the child `<lengthrange>` (every attribute, into `Options::lengthrange`; `mbd::mujoco::load` then computes the missing actuator length ranges as MuJoCo's compiler does) | `boundmass`, `boundinertia`, `balanceinertia`, `fusestatic`, `discardvisual`, `alignfree` only at their defaults; `meshdir` (and `assetdir`) locate mesh files; `texturedir`, `strippath`, `usethread` are skipped with a warning |
//! | `<option>` | `timestep`, `gravity`, `integrator`, `solver`, `cone`, `iterations`, `tolerance`, `ls_iterations`, `ls_tolerance`, `noslip_iterations`, `noslip_tolerance`, `impratio`, `density`, `viscosity`, `wind` | `magnetic` and `jacobian` skipped with a warning |
//! | `<option><flag>` | every MuJoCo flag | `gravity="disable"` sets the gravity to zero (as `mj_rne` then ignores it); disabling `spring`, `damper`, `actuation` or `passive` is an error; the others are stored in [`Options::flags`](crate::model::Options::flags) with a warning (they concern stages not computed yet) |
//! | `<default>` | nested `<default class>` with `<joint>`, `<geom>`, `<site>`, `<tendon>`, `<equality>`, `<pair>`, `<material>` (its `rgba`) and actuator (`<general>`, `<motor>`, `<position>`, `<velocity>`, `<intvelocity>`, `<damper>`, `<cylinder>`, `<muscle>`) defaults | the top-level class is `main`; an element's `class` wins over the `childclass` of its enclosing bodies and frames; each class has one actuator default (MuJoCo 4.0's rule, see `actuator.rs`): every actuator inherits its class's mechanical attributes (`ctrlrange`, `gear`, ...), a shortcut its `kp`, `kv`, `area`, ... only from the nearest default written with the same shortcut or with `general` of its gain type, and each shortcut sets gains, biases and dynamics as MuJoCo's `mjs_setTo*` do; an `<adhesion>` default is an error |
//! | `<worldbody>` | `<geom>`, `<site>`, `<body>`, `<frame>` (no attributes) | several `<worldbody>` elements are concatenated, as MuJoCo does |
//! | `<body>` | `name`, `pos`, `quat`, `euler`, `axisangle`, `xyaxes`, `zaxis`, `childclass`, `simple` (`false` or `auto`: [`crate::model::simple_bodies`]), `gravcomp` ([`Model::body_gravcomp`](crate::model::Model::body_gravcomp), [`crate::dynamics::gravcomp_into`]), `mocap` ([`Model::body_mocapid`](crate::model::Model::body_mocapid): the body's pose becomes the inputs `mocap_pos`, `mocap_quat` of every state, its pose in the file the default, [`Model::mocap_pos0`](crate::model::Model::mocap_pos0)) | a mocap body must be a child of the world without joints (MuJoCo's "mocap body ... is not a fixed child of world"), an error with its line otherwise; it is the root of its own weld group (MuJoCo 4.0) |
//! | `<frame>` | `name`, `childclass`, `pos` and the orientations | its bodies, geoms, sites and frames are placed in it |
//! | `<joint>` | `name`, `class`, `type` (`hinge`, `slide`, `ball`, `free`), `pos`, `axis`, `range`, `limited` (`true`, `false`, `auto`), `ref`, `springref`, `stiffness`, `damping`, `armature`, `frictionloss`, `margin`, `solreflimit`, `solimplimit`, `solreffriction`, `solimpfriction`, `actuatorgravcomp`, `actuatorfrcrange`, `actuatorfrclimited` ([`crate::dynamics::joint_actuator_forces`]; no range on ball and free joints, as MuJoCo), `springdamper` (turned into `stiffness` and `damping` by `mbd::mujoco::load`, [`crate::mujoco::set_springdamper`]) | `<freejoint name>` too (it ignores defaults, as in MuJoCo); `ref` becomes `qpos0` and is folded into `X_tree` (MuJoCo moves a hinge by `q - ref`); ball and free springs pull towards `qpos0` |
//! | `<inertial>` | `pos`, `mass` (both required), `quat`, `euler`, `axisangle`, `xyaxes`, `zaxis`, `diaginertia`, `fullinertia` | |
//! | `<geom>` | `name`, `class`, `type` (`plane`, `sphere`, `capsule`, `ellipsoid`, `cylinder`, `box`, `mesh` with `mesh`, `hfield` with `hfield`), `size`, `pos`, the orientations, `fromto` (capsule, cylinder, box, ellipsoid), `friction`, `condim`, `contype`, `conaffinity`, `margin`, `gap`, `solref`, `solimp`, `solmix`, `priority`, `mass`, `density`, `group`, `rgba`, `material` ([`Geom::group`](crate::model::Geom::group), [`Geom::rgba`](crate::model::Geom::rgba), [`Geom::material`](crate::model::Geom::material): what `mj_ray` filters on, [`crate::mujoco::ray`]) | a mesh geom's mass and inertia come from its mesh's volume, and its frame is composed with the mesh's principal frame; a mesh geom without `material` takes its mesh's; the `size` of a mesh or height-field geom is the asset's extent, as MuJoCo's compiler writes it; a height field only in static bodies |
//! | `<asset>` | `<mesh name file vertex face scale refpos refquat inertia material>` (file: binary or ASCII `.stl`, `.obj`, relative to the model file and `meshdir`; `inertia="shell"` puts the mass on the surface), `<hfield name nrow ncol size elevation file>` (`file`: a PNG, grey from the red sample), `<material name class rgba>` ([`Model::materials`](crate::model::Model::materials)) | textures are skipped, and so are a material's other attributes (`texture`, `specular`, ...) and `<layer>`s, with a warning |
//! | `<site>` | `name`, `class`, `type`, `size`, `pos`, the orientations, `fromto` | stored in [`Model::sites`](crate::model::Model::sites) with their shape and size (a touch sensor's zone) |
//! | `<tendon>` | `<fixed>` (`<joint joint coef>` on hinges and slides) and `<spatial>` (`<site>`, `<geom geom sidesite>`, `<pulley divisor>`), with `name`, `class`, `limited`, `range`, `stiffness`, `damping`, `springlength` (default: the length at `springref`), `frictionloss`, `margin`, `solreflimit`, `solimplimit`, `solreffriction`, `solimpfriction`, `armature` (0 only), `actuatorfrcrange`, `actuatorfrclimited` ([`Tendon::actfrcrange`](crate::model::Tendon::actfrcrange): the forces of the actuators on the tendon scaled into it, [`crate::dynamics::tendon_actuator_limits`]; it must contain 0) | lengths and moments in [`crate::dynamics::tendon_kinematics`], wrapping around spheres and cylinders with [`crate::dynamics::wrap`] (MuJoCo's `mju_wrap`); a wrap geom of another type, or one not between two sites, is an error; without `springlength` the rest length is the length at `qpos_spring` (the joints at `springref`), for a wrapping tendon left to [`crate::dynamics::set_spring_lengths`] (run by `mbd::mujoco::load`) |
//! | `<actuator>` | `<general>` (`dyntype`, `gaintype`, `biastype`, `dynprm`, `gainprm`, `biasprm`, `actrange`, `actlimited`), `<motor>`, `<position>` (`kp`, `kv` or `dampratio` (computed into a damping by `mbd::mujoco::load`, [`crate::dynamics::set_dampratio`]), `timeconst`: a `filterexact` filter, `inheritrange`: the control range from the joint's or tendon's range), `<velocity>` (`kv`), `<intvelocity>` (`kp`, `kv`, `actrange`, `actlimited`: an `integrator` whose activation is a position servo's setpoint), `<damper>` (`kv`; force `-kv ctrl velocity`, `ctrlrange` required and non-negative, always limited), `<cylinder>` (`timeconst`, `area` or `diameter`, `bias`: a `filter` whose activation is the pressure), `<muscle>` (`timeconst`, `tausmooth`, `range`, `force`, `scale`, `lmin`, `lmax`, `vmax`, `fpmax`, `fvmax`; `lengthrange`, computed by `mbd::mujoco::load` when missing), each with `name`, `class`, a transmission (`joint`, `jointinparent`, `tendon`, `cranksite` with `slidersite` and `cranklength`, `site` with an optional `refsite`), `gear`, `ctrlrange`, `ctrllimited`, `forcerange`, `forcelimited` | transmissions, activation dynamics and forces in [`crate::dynamics::actuation`]; `qacc_smooth` includes them at `ctrl = 0`; `actearly`, `actdim` and the body (adhesion) transmission are errors, and so is a filter time constant `<= 0`, which MuJoCo accepts |
//! | `<equality>` | `<connect body1 body2 anchor>`, `<weld body1 body2 relpose anchor>`, `<joint joint1 joint2 polycoef>`, `<tendon tendon1 tendon2 polycoef>`, each with `name`, `class`, `active`, `solref`, `solimp` | softness in [`Model::eq_params`](crate::model::Model::eq_params), `active` in [`Model::eq_active0`](crate::model::Model::eq_active0) (an inactive constraint makes no rows until the state switches it on) |
//! | `<contact>` | `<pair geom1 geom2 condim friction solref solreffriction solimp margin gap>`, `<exclude body1 body2>` | stored for the collision stage |
//! | `<sensor>` | `touch`, `accelerometer`, `velocimeter`, `gyro`, `force`, `torque`, `magnetometer`, `rangefinder` (`data="dist"`), `jointpos`, `jointvel`, `ballquat`, `ballangvel`, `jointlimitpos/vel/frc`, `jointactuatorfrc`, `tendonpos`, `tendonvel`, `tendonlimitpos/vel/frc`, `tendonactuatorfrc`, `actuatorpos/vel/frc`, `framepos`, `framequat`, `framexaxis/yaxis/zaxis`, `framelinvel`, `frameangvel` (with `reftype`/`refname`), `framelinacc`, `frameangacc`, `subtreecom`, `subtreelinvel`, `subtreeangmom`, `clock`; each with `name`, `noise` (kept, not added), `cutoff` | [`Model::sensors`](crate::model::Model::sensors), evaluated by `crate::mujoco::sensor`; camera, geometry-distance, contact, tactile, energy, user and plugin sensors and sensor history (`nsample`, `delay`, `interval`) are errors |
//! | `<keyframe>` | `<key name time qpos qvel act ctrl mpos mquat>` | [`Model::keyframes`](crate::model::Model::keyframes); `mbd inspect --key NAME`; `mpos`, `mquat` (3 and 4 numbers per mocap body, the default poses where missing, `mquat` normalized as MuJoCo's compiler does; a list of the wrong length, which MuJoCo ignores when it is too short, and a zero quaternion are errors) |
//!
//! Angles (`euler`, `axisangle`, hinge `range`, `ref`, `springref`) are in degrees unless
//! `<compiler angle="radian"/>`. With `autolimits` (the default) a `limited="auto"` joint,
//! tendon or actuator range is limited when it is given.
//!
//! # Bodies, joints and inertia
//!
//! MuJoCo bodies are numbered depth-first in XML order. A body with `n > 1` joints becomes a
//! chain of `n` Featherstone bodies, one per joint in XML order: the first carries the body's
//! `pos`/`quat` as `X_tree`, the others have `X_tree = 1` (so each joint's `pos` and `axis` are
//! read in the body frame moved by the joints before it, as MuJoCo's `mj_kinematics` does), the
//! last one carries the inertia and the earlier ones are massless; they are named `body#joint`
//! (or `body#k` for an unnamed joint `k`). A body
//! without joints becomes one body with [`JointType::Fixed`](crate::model::JointType); so does a
//! mocap body, marked in [`Model::body_mocapid`](crate::model::Model::body_mocapid). A free
//! joint is only allowed in a child of the world body; its `X_tree` is the identity and its
//! `qpos0` is the body's pose. The resulting dof order is MuJoCo's. [`Model::mj_body`],
//! [`Model::mj_body_last`] and [`Model::mj_body_name`] keep the map between the two numberings.
//!
//! A body without `<inertial>` (or every body under `inertiafromgeom="true"`) gets its mass,
//! centre of mass and inertia from its geoms whose `group` lies in `inertiagrouprange` (0 to 5
//! by default): mass = `mass` if given, else `density` (default 1000) times the volume; planes
//! have no volume; a capsule is a cylinder plus two hemispheres with MuJoCo's formula. The
//! geoms' inertias are added about their common centre of mass; the principal axes are kept as
//! [`Model::body_iquat`] (the geom's own frame for a single geom, as MuJoCo does), which the
//! inertia-box fluid model needs. `settotalmass` then scales all masses and inertias. MuJoCo's
//! checks follow: mass and principal moments must be non-negative and satisfy `A + B >= C`,
//! and a body with joints needs mass and principal moments of at least `mjMINVAL` = 1e-15
//! unless one of its jointless children has them.
//!
//! # Skipped with a warning (no effect on the dynamics computed here)
//!
//! `<visual>`, `<asset>`'s textures, `<statistic>`, `<size>`, `<custom>`; `<camera>` and
//! `<light>` inside bodies; defaults for visual elements (but a `<material>` default's `rgba`
//! is read); a material's attributes other than `rgba`;
//! the visual-only attributes `rgba` and `material` (except on geoms), `group` (on joints) and
//! `user`; the flags
//! that concern later stages. One warning per kind (with its first line and a count), not one
//! per occurrence.
//!
//! MuJoCo's XML parser accepts `--` inside comments (strict XML does not); such comments are
//! accepted here too.
//!
//! # Rejected with an error
//!
//! Every element where MuJoCo's schema does not allow it (a `<body>` inside a `<geom>`, a
//! `<site>` or a `<joint>`; anything inside `<joint>`, `<freejoint>`, `<geom>`, `<inertial>`,
//! `<site>`, `<connect>`, `<weld>`, `<compiler>`, `<key>`, `<exclude>`, `<pair>`, an actuator);
//! `<composite>`, `<flexcomp>`, `<deformable>`, `<extension>`; actuators other than the eight
//! above (`adhesion`, `pid`, `orientation`, `dcmotor`, `plugin`); and transmissions other
//! than joint and tendon; flat meshes (no volume: their hull is degenerate), mesh files that do not parse (the error names the file and line); `fluidshape`; tendon
//! armature; and every other attribute or element not listed above; numbers that do not parse,
//! are not finite or exceed MuJoCo's `mjMAXVAL` = 1e10 in magnitude (`mass="1e308"`,
//! `timestep="1e308"`); wrong counts of numbers; unknown keywords, classes, bodies, joints,
//! sites, tendons or geoms; repeated names; non-physical inertias; non-positive `timestep`;
//! negative `damping`, `armature`, `frictionloss` or `stiffness` of tendons.
//!
//! # Scale
//!
//! Reading is linear in the size of the file and iterative: line numbers come from a table of
//! line starts, and every pass over the body tree (reading, the mass checks, emitting) uses an
//! explicit stack or the parent-before-child order, so a chain of 100,000 nested bodies loads
//! like a flat tree of 100,000 bodies (`tests/mjcf.rs`, `benches/mjcf.rs`).

mod actuator;
mod assets;
mod attrs;
mod body;
mod compile;
mod contact;
mod defaults;
mod emit;
mod equality;
mod geom;
mod joint;
mod keyframe;
mod options;
mod orientation;
mod reader;
mod sensor;
mod site;
mod tendon;
mod xml;

use crate::error::{Error, Result};
use crate::model::Model;
use std::path::Path;

/// A model read from MJCF, with the warnings about skipped elements (visual, asset,
/// camera, light, ...), which do not affect dynamics.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The model.
    pub model: Model,
    /// One line per kind of skipped element or attribute, `file:line: message`, with the line
    /// of its first occurrence and the number of occurrences when there are several.
    pub warnings: Vec<String>,
}

/// Reads an MJCF file: `mbd::mjcf::load("model.xml")`. `<include file>` is resolved relative to
/// the including file.
pub fn load(path: impl AsRef<Path>) -> Result<Loaded> {
    let path = path.as_ref();
    let xml = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    read(&xml, &path.display().to_string(), path.parent())
}

/// Reads MJCF text (named `<string>` in messages; `<include>` is resolved relative to the
/// current directory).
///
/// ```
/// use mbd::dynamics::crba;
///
/// let xml = r#"<mujoco>
///   <worldbody>
///     <body name="arm">
///       <joint name="shoulder" type="hinge" axis="0 1 0"/>
///       <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05" mass="1"/>
///     </body>
///   </worldbody>
/// </mujoco>"#;
/// let model = mbd::mjcf::load_str(xml)?.model;
/// assert_eq!((model.nq, model.nv), (1, 1));
/// let h = crba(&model, &[0.0])?;
/// assert!(h[(0, 0)] > 0.0);
/// // bad input is an error naming the line, not a panic
/// assert!(mbd::mjcf::load_str("<mujoco><worldbody><body><joint type=\"bogus\"/>").is_err());
/// # Ok::<(), mbd::Error>(())
/// ```
#[doc(alias = "MJCF")]
#[doc(alias = "mj_loadXML")]
pub fn load_str(xml: &str) -> Result<Loaded> {
    read(xml, "<string>", None)
}

/// Reads MJCF text; `file` names the source in error messages, and `<include>` is resolved
/// relative to `file`'s directory.
///
/// MuJoCo's XML parser (tinyxml2) accepts `--` inside comments, which strict XML forbids;
/// such comments are relaxed first (same length, so positions are unchanged).
pub fn parse(xml: &str, file: &str) -> Result<Loaded> {
    read(xml, file, Path::new(file).parent())
}

fn read(xml: &str, file: &str, dir: Option<&Path>) -> Result<Loaded> {
    let dir = dir.filter(|d| !d.as_os_str().is_empty());
    let doc = xml::Doc::parse(xml, file, dir)?;
    let mut reader = reader::Reader::new(&doc);
    let model = reader.read()?;
    Ok(Loaded {
        model,
        warnings: reader.finish_warnings(),
    })
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum InertiaFromGeom {
    Auto,
    True,
    False,
}

/// `<compiler>` settings.
#[derive(Clone, Debug)]
pub(crate) struct Compiler {
    pub degree: bool,
    pub eulerseq: [u8; 3],
    pub inertia_from_geom: InertiaFromGeom,
    pub autolimits: bool,
    pub inertia_group_range: [i32; 2],
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
