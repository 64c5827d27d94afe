//! MuJoCo model elements beyond the kinematic tree, as MuJoCo stores them in `mjModel`: sites,
//! tendons (`ten_*`, `wrap_*`), actuators (`actuator_*`), keyframes (`key_*`), contact pairs and
//! exclusions, and the solver parameters (`solref`, `solimp`) that the constraint stage will use.
//!
//! Body indices here are Featherstone bodies: for a MuJoCo body, the last body of its chain
//! ([`Model::mj_body_last`](super::Model::mj_body_last)); 0 is the world. A joint is named by
//! the Featherstone body that carries it.

use crate::spatial::Vec3;

/// MuJoCo's default `solref` (time constant, damping ratio).
pub const SOLREF_DEFAULT: [f64; 2] = [0.02, 1.0];
/// MuJoCo's default `solimp` (d0, d_width, width, midpoint, power).
pub const SOLIMP_DEFAULT: [f64; 5] = [0.9, 0.95, 0.001, 0.5, 2.0];

/// A constraint's softness (MuJoCo's `solref` and `solimp`), stored for the constraint stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverParams {
    /// `solref`: (timeconst, dampratio), or (-stiffness, -damping) when both are negative.
    pub solref: [f64; 2],
    /// `solimp`: (d0, d_width, width, midpoint, power).
    pub solimp: [f64; 5],
}

impl Default for SolverParams {
    fn default() -> Self {
        SolverParams {
            solref: SOLREF_DEFAULT,
            solimp: SOLIMP_DEFAULT,
        }
    }
}

/// A site: a named frame on a body (MuJoCo's `site_bodyid`, `site_pos`, `site_quat`).
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    /// Name (empty if none).
    pub name: String,
    /// Featherstone body it is attached to.
    pub body: usize,
    /// Position in the body frame.
    pub pos: Vec3,
    /// Orientation in the body frame (w, x, y, z).
    pub quat: [f64; 4],
    /// Shape (`site_type`): sphere, capsule, ellipsoid, cylinder or box. A site has no mass and
    /// never collides; its shape is the zone a touch sensor counts contacts in.
    pub gtype: super::GeomType,
    /// Size (`site_size`), with a geom's meaning for its shape.
    pub size: [f64; 3],
}

/// A material (MuJoCo's `<asset><material>`, `mat_rgba`): of its visual properties only the
/// colour is kept, because a material with alpha 0 makes its geoms invisible to rays
/// (`mj_ray`).
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// Name.
    pub name: String,
    /// Colour and opacity (`mat_rgba`, default `1 1 1 1`).
    pub rgba: [f64; 4],
}

/// One element of a spatial tendon's path (MuJoCo's `wrap_type`, `wrap_objid`, `wrap_prm`).
#[derive(Clone, Debug, PartialEq)]
pub enum TendonWrap {
    /// A site the tendon passes through (index into [`Model::sites`](super::Model::sites)).
    Site(usize),
    /// A sphere or cylinder geom the tendon wraps around, with its optional side site.
    Geom { geom: usize, sidesite: Option<usize> },
    /// A pulley: the path restarts, later segments are divided by `divisor`.
    Pulley { divisor: f64 },
}

/// What a tendon is made of.
#[derive(Clone, Debug, PartialEq)]
pub enum TendonKind {
    /// `<fixed>`: length = sum of `coef * q` over hinge and slide joints (joint = Featherstone
    /// body carrying it).
    Fixed { joints: Vec<(usize, f64)> },
    /// `<spatial>`: a path through sites, around geoms and over pulleys.
    Spatial { path: Vec<TendonWrap> },
}

/// A tendon (MuJoCo's `ten_*` arrays).
#[derive(Clone, Debug, PartialEq)]
pub struct Tendon {
    /// Name (empty if none).
    pub name: String,
    /// Fixed or spatial, with its path.
    pub kind: TendonKind,
    /// Whether `range` is enforced by a limit constraint.
    pub limited: bool,
    /// Length range.
    pub range: [f64; 2],
    /// Spring stiffness (`ten_stiffness`).
    pub stiffness: f64,
    /// Damping (`ten_damping`).
    pub damping: f64,
    /// Spring rest length range (`ten_lengthspring`): no spring force between the two.
    pub springlength: [f64; 2],
    /// Armature (`ten_armature`): inertia added along the tendon, `M += armature J^T J`.
    pub armature: f64,
    /// Dry friction loss.
    pub frictionloss: f64,
    /// Limit margin.
    pub margin: f64,
    /// Limit softness (`solreflimit`, `solimplimit`).
    pub limit: SolverParams,
    /// Friction-loss softness (`solreffriction`, `solimpfriction`).
    pub friction: SolverParams,
    /// The range the summed force of the actuators pulling on this tendon is scaled back into
    /// (MuJoCo's `tendon_actfrcrange` when `tendon_actfrclimited`; `<tendon actuatorfrcrange>`),
    /// `None` for no limit. It contains 0 (`lo <= 0 <= hi`, `lo < hi`). See
    /// `crate::dynamics::actuation_with`.
    pub actfrcrange: Option<[f64; 2]>,
}

/// An actuator's transmission (MuJoCo's `actuator_trntype` and `actuator_trnid`): what its
/// length `l(q)` is, and so its moment arm `dl/dq` (see `dynamics::transmission`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transmission {
    /// A joint (the Featherstone body carrying it), `mjTRN_JOINT`: hinge and slide use
    /// `gear[0]`; a ball joint takes a torque `gear[0..3]` in the child frame; a free joint a
    /// force `gear[0..3]` (world) and a torque `gear[3..6]` (body frame).
    Joint(usize),
    /// A ball or free joint with the torque axis given in the parent frame
    /// (`mjTRN_JOINTINPARENT`); on hinge and slide joints the same as [`Transmission::Joint`].
    JointInParent(usize),
    /// A tendon (index into [`Model::tendons`](super::Model::tendons)), `mjTRN_TENDON`.
    Tendon(usize),
    /// A slider-crank (`mjTRN_SLIDERCRANK`): a rod of length `cranklength` joins the crank
    /// site to the slider site; the length is the slider's travel along its site's z axis.
    SliderCrank {
        /// The crank pin (index into [`Model::sites`](super::Model::sites)).
        crank: usize,
        /// The slider (its z axis is the slider's direction).
        slider: usize,
    },
    /// A site (`mjTRN_SITE`): a wrench `gear` (force, torque) in the site's frame; with a
    /// reference site, the length is the site's pose relative to it projected on `gear`.
    Site {
        /// The site the wrench acts at.
        site: usize,
        /// The optional reference site.
        refsite: Option<usize>,
    },
}

/// Activation dynamics (MuJoCo's `mjtDyn`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DynType {
    /// No internal state: the force uses `ctrl`.
    None,
    /// `act_dot = ctrl`.
    Integrator,
    /// `act_dot = (ctrl - act) / dynprm[0]`.
    Filter,
    /// Filter integrated exactly.
    FilterExact,
    /// Muscle activation dynamics.
    Muscle,
}

/// Gain type (MuJoCo's `mjtGain`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GainType {
    /// `gain = gainprm[0]`.
    Fixed,
    /// `gain = gainprm[0] + gainprm[1] length + gainprm[2] velocity`.
    Affine,
    /// Muscle gain.
    Muscle,
}

/// Bias type (MuJoCo's `mjtBias`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BiasType {
    /// No bias.
    None,
    /// `bias = biasprm[0] + biasprm[1] length + biasprm[2] velocity`.
    Affine,
    /// Muscle bias.
    Muscle,
}

/// An actuator (MuJoCo's `actuator_*` arrays): force = `gain * (act or ctrl) + bias`, applied
/// through the transmission with `gear`.
#[derive(Clone, Debug, PartialEq)]
pub struct Actuator {
    /// Name (empty if none).
    pub name: String,
    /// The joint or tendon it drives.
    pub trn: Transmission,
    /// Gear (only `gear[0]` acts on a hinge, slide or tendon; ball, free and site
    /// transmissions use more, see [`Transmission`]).
    pub gear: [f64; 6],
    /// Length of the connecting rod of a slider-crank (`actuator_cranklength`).
    pub cranklength: f64,
    /// Activation dynamics and its parameters.
    pub dyntype: DynType,
    /// `dynprm`.
    pub dynprm: [f64; 10],
    /// Gain type and parameters.
    pub gaintype: GainType,
    /// `gainprm`.
    pub gainprm: [f64; 10],
    /// Bias type and parameters.
    pub biastype: BiasType,
    /// `biasprm`.
    pub biasprm: [f64; 10],
    /// Whether `ctrl` is clamped to `ctrlrange`.
    pub ctrllimited: bool,
    /// Control range.
    pub ctrlrange: [f64; 2],
    /// Whether the force is clamped to `forcerange`.
    pub forcelimited: bool,
    /// Force range.
    pub forcerange: [f64; 2],
    /// Whether the activation is clamped to `actrange`.
    pub actlimited: bool,
    /// Activation range.
    pub actrange: [f64; 2],
    /// `actuator_lengthrange`: the range of the actuator length over the joint space, which a
    /// muscle maps to its normalized length range `gainprm[0..2]` (given in the model; MuJoCo's
    /// simulation-based `mj_setLengthRange` is not implemented).
    pub lengthrange: [f64; 2],
}

impl Actuator {
    /// Whether this is a position servo (MuJoCo's test in `mj_setConst`): fixed gain, affine
    /// bias and `gainprm[0] = -biasprm[1]`, so that its force is `kp (ctrl - length) +
    /// biasprm[2] velocity`. For such an actuator a positive `biasprm[2]` is a damping *ratio*
    /// (`dampratio`), which `mbd::dynamics::set_dampratio` turns into the damping `-biasprm[2]`.
    pub fn is_position_servo(&self) -> bool {
        self.gaintype == GainType::Fixed && self.biastype == BiasType::Affine && self.gainprm[0] == -self.biasprm[1]
    }
}

/// A named state (MuJoCo's `<keyframe><key>`): what `mj_resetDataKeyframe` loads.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyframe {
    /// Name (empty if none).
    pub name: String,
    /// Simulation time.
    pub time: f64,
    /// Positions (nq).
    pub qpos: Vec<f64>,
    /// Velocities (nv).
    pub qvel: Vec<f64>,
    /// Actuator activations (one per actuator with dynamics).
    pub act: Vec<f64>,
    /// Controls (nu).
    pub ctrl: Vec<f64>,
    /// Mocap body positions (MuJoCo's `key_mpos`, nmocap; the bodies' default positions where
    /// the key gives none).
    pub mpos: Vec<[f64; 3]>,
    /// Mocap body orientations (MuJoCo's `key_mquat`, nmocap), normalized as MuJoCo's compiler
    /// normalizes them; the default orientations where the key gives none.
    pub mquat: Vec<[f64; 4]>,
}

/// An explicit contact pair (MuJoCo's `<contact><pair>`), geoms by index into `Model::geoms`.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactPair {
    /// Name (empty if none).
    pub name: String,
    /// The two geoms.
    pub geom1: usize,
    /// Second geom.
    pub geom2: usize,
    /// Contact dimensionality.
    pub condim: usize,
    /// Friction (tangent 1, tangent 2, torsion, rolling 1, rolling 2).
    pub friction: [f64; 5],
    /// Softness of the normal direction.
    pub params: SolverParams,
    /// `solreffriction` (zeros: use `solref`).
    pub solreffriction: [f64; 2],
    /// Margin and gap.
    pub margin: f64,
    /// Gap.
    pub gap: f64,
}

/// A frame a sensor reads (MuJoCo's `sensor_objtype` for the frame sensors): a body's frame
/// (`xbody`: `xpos`, `xmat`), its inertial frame (`body`: `xipos`, `ximat`), a geom's or a
/// site's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensorFrame {
    /// The frame of MuJoCo body `b` (`mjOBJ_XBODY`).
    XBody(usize),
    /// The principal inertial frame of MuJoCo body `b`, at its centre of mass (`mjOBJ_BODY`).
    Body(usize),
    /// A geom (index into [`Model::geoms`](super::Model::geoms)).
    Geom(usize),
    /// A site (index into [`Model::sites`](super::Model::sites)).
    Site(usize),
}

/// What a sensor measures and where (MuJoCo's `mjtSensor` with `sensor_objid`/`sensor_refid`).
/// Joints are named by the Featherstone body carrying them, bodies by their MuJoCo index, sites,
/// geoms, tendons and actuators by their index in the model. Book: "The constrained pipeline",
/// section "What the pipeline reports".
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SensorKind {
    // --- position stage
    /// `qpos` of a hinge or slide joint.
    JointPos(usize),
    /// The unit quaternion of a ball joint (`qpos` normalized).
    BallQuat(usize),
    /// `ten_length`.
    TendonPos(usize),
    /// `actuator_length`.
    ActuatorPos(usize),
    /// A joint limit's distance minus its margin (`efc_pos - efc_margin`), 0 when no limit row.
    JointLimitPos(usize),
    /// A tendon limit's distance minus its margin, 0 when no limit row.
    TendonLimitPos(usize),
    /// A frame's origin, in the world or relative to a reference frame (in its coordinates).
    FramePos {
        obj: SensorFrame,
        reference: Option<SensorFrame>,
    },
    /// A frame's x (k = 0), y (1) or z (2) axis, in the world or in a reference frame.
    FrameAxis {
        axis: usize,
        obj: SensorFrame,
        reference: Option<SensorFrame>,
    },
    /// A frame's orientation quaternion, in the world or relative to a reference frame.
    FrameQuat {
        obj: SensorFrame,
        reference: Option<SensorFrame>,
    },
    /// `subtree_com` of a MuJoCo body.
    SubtreeCom(usize),
    /// The magnetic field (`<option magnetic>`) in a site's frame.
    Magnetometer(usize),
    /// Distance along a site's +z axis to the nearest visible geom not on the site's body, -1 if
    /// none (`mj_ray`).
    Rangefinder(usize),
    /// The simulation time.
    Clock,
    // --- velocity stage
    /// `qvel` of a hinge or slide joint.
    JointVel(usize),
    /// The angular velocity of a ball joint (its three `qvel`).
    BallAngVel(usize),
    /// `ten_velocity`.
    TendonVel(usize),
    /// `actuator_velocity`.
    ActuatorVel(usize),
    /// A joint limit row's velocity, 0 when no limit row.
    JointLimitVel(usize),
    /// A tendon limit row's velocity, 0 when no limit row.
    TendonLimitVel(usize),
    /// A site's linear velocity, in the site frame.
    Velocimeter(usize),
    /// A site's angular velocity, in the site frame.
    Gyro(usize),
    /// A frame's linear velocity, in the world or relative to a reference frame.
    FrameLinVel {
        obj: SensorFrame,
        reference: Option<SensorFrame>,
    },
    /// A frame's angular velocity, in the world or relative to a reference frame.
    FrameAngVel {
        obj: SensorFrame,
        reference: Option<SensorFrame>,
    },
    /// The velocity of a body's subtree's centre of mass (`subtree_linvel`).
    SubtreeLinVel(usize),
    /// A body subtree's angular momentum about its centre of mass (`subtree_angmom`).
    SubtreeAngMom(usize),
    // --- acceleration stage
    /// The sum of the normal forces of the contacts of the site's body whose normal ray, cast
    /// from the contact point, crosses the site's volume.
    Touch(usize),
    /// A site's proper linear acceleration (gravity's `-g` included), in the site frame.
    Accelerometer(usize),
    /// The force the site's body receives from its parent, in the site frame (`cfrc_int`).
    Force(usize),
    /// The torque the site's body receives from its parent, about the site, in its frame.
    Torque(usize),
    /// `actuator_force`.
    ActuatorFrc(usize),
    /// `qfrc_actuator` at a hinge or slide joint's dof.
    JointActuatorFrc(usize),
    /// The summed `actuator_force` of the actuators with this tendon as transmission.
    TendonActuatorFrc(usize),
    /// A joint limit row's force, 0 when no limit row.
    JointLimitFrc(usize),
    /// A tendon limit row's force, 0 when no limit row.
    TendonLimitFrc(usize),
    /// A frame's linear acceleration in the world (`mj_objectAcceleration`).
    FrameLinAcc(SensorFrame),
    /// A frame's angular acceleration in the world.
    FrameAngAcc(SensorFrame),
}

/// The stage a sensor can be computed at (MuJoCo's `sensor_needstage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SensorStage {
    /// After the position stage.
    Pos,
    /// After the velocity stage.
    Vel,
    /// After the constraint solver.
    Acc,
}

/// How `cutoff` applies (MuJoCo's `sensor_datatype`): real values are clipped to
/// `[-cutoff, cutoff]`, positive ones to at most `cutoff`; axes and quaternions are not clipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensorData {
    /// Any real number.
    Real,
    /// Non-negative (or -1 for "no value").
    Positive,
    /// A unit vector.
    Axis,
    /// A unit quaternion.
    Quaternion,
}

impl SensorKind {
    /// How many numbers the sensor writes (`sensor_dim`).
    pub fn dim(&self) -> usize {
        use SensorKind::*;
        match self {
            BallQuat(_) | FrameQuat { .. } => 4,
            FramePos { .. }
            | FrameAxis { .. }
            | SubtreeCom(_)
            | Magnetometer(_)
            | BallAngVel(_)
            | Velocimeter(_)
            | Gyro(_)
            | FrameLinVel { .. }
            | FrameAngVel { .. }
            | SubtreeLinVel(_)
            | SubtreeAngMom(_)
            | Accelerometer(_)
            | Force(_)
            | Torque(_)
            | FrameLinAcc(_)
            | FrameAngAcc(_) => 3,
            _ => 1,
        }
    }

    /// The stage the sensor needs (`sensor_needstage`).
    pub fn stage(&self) -> SensorStage {
        use SensorKind::*;
        match self {
            JointPos(_)
            | BallQuat(_)
            | TendonPos(_)
            | ActuatorPos(_)
            | JointLimitPos(_)
            | TendonLimitPos(_)
            | FramePos { .. }
            | FrameAxis { .. }
            | FrameQuat { .. }
            | SubtreeCom(_)
            | Magnetometer(_)
            | Rangefinder(_)
            | Clock => SensorStage::Pos,
            JointVel(_)
            | BallAngVel(_)
            | TendonVel(_)
            | ActuatorVel(_)
            | JointLimitVel(_)
            | TendonLimitVel(_)
            | Velocimeter(_)
            | Gyro(_)
            | FrameLinVel { .. }
            | FrameAngVel { .. }
            | SubtreeLinVel(_)
            | SubtreeAngMom(_) => SensorStage::Vel,
            _ => SensorStage::Acc,
        }
    }

    /// How `cutoff` applies (`sensor_datatype`).
    pub fn datatype(&self) -> SensorData {
        use SensorKind::*;
        match self {
            Touch(_) | Rangefinder(_) => SensorData::Positive,
            FrameAxis { .. } => SensorData::Axis,
            BallQuat(_) | FrameQuat { .. } => SensorData::Quaternion,
            _ => SensorData::Real,
        }
    }

    /// Whether the sensor reads `cacc`, `cfrc_int` or `cfrc_ext`, so that the pipeline must run
    /// `mj_rnePostConstraint` for it.
    pub fn needs_rne_post(&self) -> bool {
        use SensorKind::*;
        matches!(
            self,
            Accelerometer(_) | Force(_) | Torque(_) | FrameLinAcc(_) | FrameAngAcc(_)
        )
    }
}

/// A sensor (MuJoCo's `sensor_*` arrays for one `<sensor>` child).
#[derive(Clone, Debug, PartialEq)]
pub struct Sensor {
    /// Name (empty if none).
    pub name: String,
    /// What it measures.
    pub kind: SensorKind,
    /// `cutoff`: 0 for none, otherwise the bound applied by [`SensorKind::datatype`].
    pub cutoff: f64,
    /// `noise`: kept for the user (MuJoCo 4.0 adds no noise itself).
    pub noise: f64,
}

/// Checks that every sensor names an element the model has (a site, geom, MuJoCo body, joint
/// carrying the right kind of dofs, tendon or actuator) and has a finite, non-negative cutoff,
/// so that evaluating the sensors cannot index past the model.
pub(crate) fn check_sensors(model: &super::Model) -> crate::error::Result<()> {
    use crate::error::Error;
    let bad = |k: usize, s: &Sensor, why: String| Error::InvalidArgument {
        what: if s.name.is_empty() {
            format!("sensor {k}")
        } else {
            format!("sensor {k} ('{}')", s.name)
        },
        why,
    };
    let frame_ok = |f: &SensorFrame| match *f {
        SensorFrame::XBody(b) | SensorFrame::Body(b) => b < model.mj_nbody(),
        SensorFrame::Geom(g) => g < model.geoms.len(),
        SensorFrame::Site(s) => s < model.sites.len(),
    };
    let joint_ok = |j: usize, nv: usize| (1..=model.nb).contains(&j) && model.joints[j].jtype.nv() == nv;
    for (k, s) in model.sensors.iter().enumerate() {
        if !(s.cutoff.is_finite() && s.cutoff >= 0.0) {
            return Err(bad(
                k,
                s,
                format!("cutoff {} is not a finite non-negative number", s.cutoff),
            ));
        }
        use SensorKind as K;
        let ok = match s.kind {
            K::Touch(i)
            | K::Accelerometer(i)
            | K::Velocimeter(i)
            | K::Gyro(i)
            | K::Force(i)
            | K::Torque(i)
            | K::Magnetometer(i)
            | K::Rangefinder(i) => i < model.sites.len(),
            K::JointPos(j)
            | K::JointVel(j)
            | K::JointLimitPos(j)
            | K::JointLimitVel(j)
            | K::JointLimitFrc(j)
            | K::JointActuatorFrc(j) => joint_ok(j, 1),
            K::BallQuat(j) | K::BallAngVel(j) => {
                joint_ok(j, 3) && matches!(model.joints[j].jtype, super::JointType::Spherical)
            }
            K::TendonPos(t)
            | K::TendonVel(t)
            | K::TendonLimitPos(t)
            | K::TendonLimitVel(t)
            | K::TendonLimitFrc(t)
            | K::TendonActuatorFrc(t) => t < model.tendons.len(),
            K::ActuatorPos(a) | K::ActuatorVel(a) | K::ActuatorFrc(a) => a < model.actuators.len(),
            K::FramePos { obj, reference }
            | K::FrameAxis { obj, reference, .. }
            | K::FrameQuat { obj, reference }
            | K::FrameLinVel { obj, reference }
            | K::FrameAngVel { obj, reference } => frame_ok(&obj) && reference.as_ref().is_none_or(frame_ok),
            K::FrameLinAcc(obj) | K::FrameAngAcc(obj) => frame_ok(&obj),
            K::SubtreeCom(b) | K::SubtreeLinVel(b) | K::SubtreeAngMom(b) => b < model.mj_nbody(),
            K::Clock => true,
        } && !matches!(s.kind, K::FrameAxis { axis, .. } if axis > 2);
        if !ok {
            return Err(bad(k, s, format!("{:?} names no such element of the model", s.kind)));
        }
    }
    Ok(())
}
