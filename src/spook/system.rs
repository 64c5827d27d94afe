//! A SPOOK system: bodies in maximal coordinates, joint constraints and contact geoms, built by
//! hand or from any [`Model`] (so from MJCF): every tree joint, every loop joint and every
//! connect or weld equality becomes a [`Constraint`] between two bodies.

use super::body::Body;
use super::constraint::{Constraint, ConstraintKind, Frame};
use crate::error::{Error, Result};
use crate::kinematics::{body_velocities, forward_kinematics};
use crate::model::{Equality, GeomType, JointType, Model};
use crate::spatial::{mat_to_quat, quat_to_mat, Mat3, Vec3};

/// A collision geom attached to a body (or the world).
#[derive(Clone, Debug, PartialEq)]
pub struct SpookGeom {
    /// The body (`None`: the world).
    pub body: Option<usize>,
    /// Shape.
    pub gtype: GeomType,
    /// MuJoCo's size parameters of the shape.
    pub size: [f64; 3],
    /// Pose in the body's centre-of-mass coordinates (world coordinates for the world).
    pub frame: Frame,
    /// Sliding friction coefficient `mu`.
    pub friction: f64,
}

/// Bodies, constraints, geoms and gravity.
#[derive(Clone, Debug, PartialEq)]
pub struct SpookSystem {
    /// The bodies.
    pub bodies: Vec<Body>,
    /// The joint constraints.
    pub constraints: Vec<Constraint>,
    /// Collision geoms.
    pub geoms: Vec<SpookGeom>,
    /// Gravity (m/s^2), world coordinates.
    pub gravity: Vec3,
    /// For a system made by [`SpookSystem::from_model`]: the Featherstone body of each SPOOK
    /// body (`featherstone[k]` is in `1..=nb`); empty otherwise.
    pub featherstone: Vec<usize>,
}

/// Mass given to a massless Featherstone body (the intermediate bodies MuJoCo's multi-joint
/// bodies become), relative to the lightest body with mass: maximal coordinates need a positive
/// mass matrix.
pub const MASSLESS_FRACTION: f64 = 1e-3;

impl SpookSystem {
    /// An empty system with gravity `gravity`.
    pub fn new(gravity: Vec3) -> Self {
        SpookSystem {
            bodies: vec![],
            constraints: vec![],
            geoms: vec![],
            gravity,
            featherstone: vec![],
        }
    }

    /// Adds a body; returns its index.
    pub fn add_body(&mut self, body: Body) -> usize {
        self.bodies.push(body);
        self.bodies.len() - 1
    }

    /// Adds a constraint; returns its index.
    pub fn add_constraint(&mut self, c: Constraint) -> usize {
        self.constraints.push(c);
        self.constraints.len() - 1
    }

    /// Number of bilateral constraint rows `m`.
    pub fn nrows(&self) -> usize {
        self.constraints.iter().map(Constraint::nrows).sum()
    }

    /// Checks every body, constraint and geom (the stepper calls this at its door).
    pub fn check(&self) -> Result<()> {
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return Err(Error::NonFinite {
                what: "gravity".into(),
                index: self.gravity.iter().position(|g| !g.is_finite()).unwrap_or(0),
                value: f64::NAN,
            });
        }
        for (i, b) in self.bodies.iter().enumerate() {
            b.check(i)?;
        }
        for c in &self.constraints {
            c.check(self.bodies.len())?;
        }
        for (k, g) in self.geoms.iter().enumerate() {
            if g.body.is_some_and(|b| b >= self.bodies.len()) || !(g.friction >= 0.0 && g.friction.is_finite()) {
                return Err(Error::BadParameter {
                    what: format!("geom {k} friction (or body index)"),
                    value: g.friction,
                    why: "friction must be finite and >= 0 and the body must exist".into(),
                });
            }
        }
        Ok(())
    }

    /// The state as `qpos` (per body `[x (3), rho (4)]`) and `qvel` (per body
    /// `[nu (3), omega (3)]`): the layout SPOOK records in a [`crate::integrate::Trajectory`].
    pub fn state(&self, qpos: &mut Vec<f64>, qvel: &mut Vec<f64>) {
        qpos.clear();
        qvel.clear();
        for b in &self.bodies {
            qpos.extend(b.x.iter().chain(b.rho.iter()));
            qvel.extend(b.nu.iter().chain(b.omega.iter()));
        }
    }

    /// Total kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies.iter().map(Body::kinetic_energy).sum()
    }

    /// Total potential energy of gravity, `sum -m g.x` (J).
    pub fn potential_energy(&self) -> f64 {
        self.bodies.iter().map(|b| -b.mass * self.gravity.dot(&b.x)).sum()
    }

    /// Builds the system of `model` at the reduced state `(q, qd)`: one body per Featherstone
    /// body (centre of mass, orientation and world velocities from forward kinematics), one
    /// constraint per tree joint (revolute -> hinge, prismatic -> prismatic, cylindrical,
    /// planar, spherical -> ball, fixed -> lock, free -> none; limits kept), per loop joint
    /// (`model.loops`) and per connect or weld equality (completed, as MuJoCo completes them, from
    /// the pose at `qpos0`, so a state away from `qpos0` may start off them), all with `epsilon`
    /// and `tau`; geoms
    /// with their bodies. Massless bodies get [`MASSLESS_FRACTION`] of the lightest mass.
    ///
    /// Joint equalities (MuJoCo's `<equality><joint>`) become [`ConstraintKind::Coupling`] rows
    /// on the two joints' coordinates, with `qpos0` as the reference.
    ///
    /// Errors: a bad state or model, a helical joint (its screw is not holonomic in this
    /// table's simple rows), a tendon equality, a joint coupling of other than hinge and slide
    /// joints or moving more than two bodies, bad `epsilon` or `tau`.
    pub fn from_model(model: &Model, q: &[f64], qd: &[f64], epsilon: f64, tau: f64) -> Result<Self> {
        model.validate()?;
        model.check_state(q, qd)?;
        let kin = forward_kinematics(model, q)?;
        let vel = body_velocities(model, q, qd)?;
        // MuJoCo completes connect and weld equalities from the pose at qpos0
        let kin0 = forward_kinematics(model, model.qpos0.as_slice())?;
        let mut sys = SpookSystem::new(model.opt.gravity);
        let min_mass = (1..=model.nb)
            .map(|i| model.inertia[i].m)
            .filter(|m| *m > 0.0)
            .fold(f64::INFINITY, f64::min);
        let floor = if min_mass.is_finite() {
            MASSLESS_FRACTION * min_mass
        } else {
            1.0
        };
        // com of each Featherstone body in its own coordinates (index 0: the world)
        let mut com = vec![Vec3::zeros(); model.nb + 1];
        for i in 1..=model.nb {
            let inert = &model.inertia[i];
            let (mass, c, ic) = if inert.m > 0.0 {
                (inert.m, inert.com(), inert.inertia_at_com())
            } else {
                (floor, Vec3::zeros(), Mat3::identity() * (floor * 1e-2))
            };
            com[i] = c;
            let r = kin.rotation(i);
            let mut body = Body::new(&model.body_name[i], mass, ic, kin.point(i, &c), mat_to_quat(&r)?);
            // Featherstone body velocity: angular w and the velocity of the body origin, body axes
            body.omega = r * vel[i].w;
            body.nu = r * (vel[i].v + vel[i].w.cross(&c));
            sys.add_body(body);
            sys.featherstone.push(i);
        }
        let side = |b: usize| if b == 0 { None } else { Some(b - 1) };
        // A frame given in Featherstone body b's coordinates, moved to its com coordinates.
        let frame_in = |b: usize, pos: Vec3, rot: Mat3| Frame { pos: pos - com[b], rot };
        // the constraint of each Featherstone body's tree joint (none for a free joint)
        let mut tree_joint = vec![None; model.nb + 1];
        for i in 1..=model.nb {
            let j = &model.joints[i];
            let (kind, axis) = match j.jtype {
                JointType::Revolute { axis } => (ConstraintKind::Hinge, axis),
                JointType::Prismatic { axis } => (ConstraintKind::Prismatic, axis),
                JointType::Cylindrical { axis } => (ConstraintKind::Cylindrical, axis),
                JointType::Planar => (ConstraintKind::Planar, Vec3::z()),
                JointType::Spherical => (ConstraintKind::Ball, Vec3::z()),
                JointType::Fixed => (ConstraintKind::Lock, Vec3::z()),
                JointType::Free => continue,
                JointType::Helical { .. } => {
                    return Err(Error::Unsupported {
                        what: format!("joint of body '{}'", model.body_name[i]),
                        why: "helical joints have no SPOOK row set here (their screw couples angle and slide)".into(),
                    })
                }
            };
            // Frame B on the child: origin at the anchor, z along the axis. Frame A on the parent:
            // the same frame at joint zero, mapped by X_tree(i) (child origin r, axes E^T).
            let f = crate::model::frame_with_z(&axis);
            let xt = &model.x_tree[i];
            let fb = frame_in(i, j.pos, f);
            let fa = frame_in(model.lambda[i], xt.r + xt.e.tr_mul(&j.pos), xt.e.transpose() * f);
            let mut c = Constraint::new(
                &format!("joint {} ({})", model.body_name[i], kind.name()),
                kind,
                (side(model.lambda[i]), fa),
                (side(i), fb),
                epsilon,
                tau,
            );
            if j.limited && matches!(kind, ConstraintKind::Hinge | ConstraintKind::Prismatic) {
                c.limit = Some(j.range);
            }
            tree_joint[i] = Some(sys.add_constraint(c));
        }
        for lj in &model.loops {
            let kind = match lj.jtype {
                JointType::Revolute { .. } => ConstraintKind::Hinge,
                JointType::Prismatic { .. } => ConstraintKind::Prismatic,
                JointType::Cylindrical { .. } => ConstraintKind::Cylindrical,
                JointType::Planar => ConstraintKind::Planar,
                JointType::Spherical => ConstraintKind::Ball,
                JointType::Fixed => ConstraintKind::Lock,
                _ => {
                    return Err(Error::Unsupported {
                        what: format!("loop joint '{}'", lj.name),
                        why: format!("a {} loop joint has no SPOOK row set here", lj.jtype.name()),
                    })
                }
            };
            // X_P = P X pred: the joint frame's origin r and axes E^T in pred coordinates.
            let fa = frame_in(lj.pred, lj.x_p.r, lj.x_p.e.transpose());
            let fb = frame_in(lj.succ, lj.x_s.r, lj.x_s.e.transpose());
            sys.add_constraint(Constraint::new(
                &format!("loop {}", lj.name),
                kind,
                (side(lj.pred), fa),
                (side(lj.succ), fb),
                epsilon,
                tau,
            ));
        }
        // the equality constraints active in the reference state (eq_active0)
        for eq in model.active0_equalities() {
            match eq {
                Equality::Connect {
                    name,
                    body1,
                    body2,
                    anchor,
                } => {
                    // anchor in body1; body2's point is where the anchor sits at qpos0 (MuJoCo's
                    // rule), so a state off qpos0 may start violated, as in MuJoCo
                    let world = kin0.point(*body1, anchor);
                    let local2 = kin0.x_0[*body2].apply_point(&world);
                    sys.add_constraint(Constraint::new(
                        &format!("connect {name}"),
                        ConstraintKind::Ball,
                        (side(*body1), frame_in(*body1, *anchor, Mat3::identity())),
                        (side(*body2), frame_in(*body2, local2, Mat3::identity())),
                        epsilon,
                        tau,
                    ));
                }
                Equality::Weld {
                    name,
                    body1,
                    body2,
                    anchor,
                    relpose,
                } => {
                    // MuJoCo's weld (`mj_equalityAnchors`, `eq_data` = anchor, relpose): the
                    // point `anchor` of body2 coincides with the point `relpose_pos` of body1 (used
                    // directly, not moved by the anchor), and body2's axes are body1's turned by
                    // `relpose_quat` (normalized). Frame B: the anchor with body2's axes; frame A:
                    // relpose_pos with the relpose axes; without relpose both from this state.
                    let (pos_a, rot_a) = match relpose {
                        Some(rp) => {
                            let mut q = [rp[3], rp[4], rp[5], rp[6]];
                            crate::spatial::quat_normalize(&mut q);
                            (Vec3::new(rp[0], rp[1], rp[2]), quat_to_mat(&q))
                        }
                        None => {
                            let world = kin0.point(*body2, anchor);
                            let r1 = kin0.rotation(*body1);
                            (
                                kin0.x_0[*body1].apply_point(&world),
                                r1.transpose() * kin0.rotation(*body2),
                            )
                        }
                    };
                    sys.add_constraint(Constraint::new(
                        &format!("weld {name}"),
                        ConstraintKind::Lock,
                        (side(*body1), frame_in(*body1, pos_a, rot_a)),
                        (side(*body2), frame_in(*body2, *anchor, Mat3::identity())),
                        epsilon,
                        tau,
                    ));
                }
                Equality::Joint {
                    name,
                    joint1,
                    joint2,
                    polycoef,
                } => {
                    // MuJoCo's joint coupling on the joint coordinates of the two tree joints,
                    // with qpos0 as the reference
                    let joint = |j: usize| {
                        let c = tree_joint.get(j).copied().flatten().map(|k| &sys.constraints[k]);
                        match c {
                            Some(c) if matches!(c.kind, ConstraintKind::Hinge | ConstraintKind::Prismatic) => {
                                Ok((c, model.qpos0[model.q_adr[j]]))
                            }
                            _ => Err(Error::Unsupported {
                                what: format!("joint equality '{name}'"),
                                why: "couples a joint that is not a hinge or a slide".into(),
                            }),
                        }
                    };
                    let j1 = joint(*joint1)?;
                    let j2 = joint2.map(joint).transpose()?;
                    let c = Constraint::coupling(&format!("coupling {name}"), j1, j2, *polycoef, epsilon, tau);
                    sys.add_constraint(c);
                }
                Equality::Tendon { name, .. } => {
                    return Err(Error::Unsupported {
                        what: format!("equality '{name}'"),
                        why: "tendon couplings act on tendon lengths; SPOOK has no tendons".into(),
                    })
                }
            }
        }
        for g in &model.geoms {
            let rot = quat_to_mat(&g.quat);
            sys.geoms.push(SpookGeom {
                body: side(g.body),
                gtype: g.gtype,
                size: g.size,
                frame: frame_in(g.body, g.pos, rot),
                friction: g.friction[0],
            });
        }
        sys.check()?;
        Ok(sys)
    }
}

/// World pose of a point given in body `i`'s coordinates, the inverse direction.
trait ApplyPoint {
    fn apply_point(&self, world: &Vec3) -> Vec3;
}

impl ApplyPoint for crate::spatial::Xform {
    /// Coordinates in this transform's target frame of a point given in its source frame.
    fn apply_point(&self, p: &Vec3) -> Vec3 {
        self.e * (p - self.r)
    }
}
