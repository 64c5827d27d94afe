//! Holonomic joint constraints between two bodies (or a body and the world) and their
//! Jacobians, built in two stages (book, "Holonomic constraints and their Jacobians"): first `d phi / d q` with respect to
//! `q = [x_a, rho_a, x_b, rho_b]` (14 numbers: positions and quaternions), then
//! `G = d phi / d q Gamma(q)` with `Gamma(q) = diag(1, Gamma(rho_a), 1, Gamma(rho_b))`, so each
//! row `g_i` has six entries `[d phi/dx, d phi/d rho Gamma(rho)]` per body.
//!
//! Every joint is written with a frame on each side, `A` on body `a` and `B` on body `b`
//! (position and axes in the body's centre-of-mass coordinates, or in world coordinates on the
//! world side), and a few scalar functions of the world positions `p_a`, `p_b` and the world
//! axes `x_a, y_a, z_a, x_b, y_b, z_b` of the frames, `d = p_b - p_a`:
//!
//! | kind | rows `phi` | count |
//! |---|---|---|
//! | ball and socket | `d` | 3 |
//! | hinge (about z) | `d`, `x_a.z_b`, `y_a.z_b` | 5 |
//! | prismatic (along z) | `y_a.z_b`, `z_a.x_b`, `x_a.y_b`, `x_a.d`, `y_a.d` | 5 |
//! | cylindrical (about and along z) | `x_a.z_b`, `y_a.z_b`, `x_a.d`, `y_a.d` | 4 |
//! | planar (normal z) | `x_a.z_b`, `y_a.z_b`, `z_a.d` | 3 |
//! | lock (fixed) | `d`, `y_a.z_b`, `z_a.x_b`, `x_a.y_b` | 6 |
//! | distance `L` | `|d| - L` | 1 |
//! | joint coupling (MuJoCo's `<equality><joint>`) | `(q_1 - r_1) - P(q_2 - r_2)` | 1 |
//!
//! A coupling's `q_1`, `q_2` are the joint coordinates (below) of two hinge or prismatic
//! constraints it carries in [`Constraint::coupled`], `P` MuJoCo's `polycoef` polynomial; its
//! own two bodies are the (at most two) bodies those joints move.
//!
//! Joint limits are unilateral rows on the joint coordinate: the hinge angle
//! `theta = atan2(y_a.x_b, x_a.x_b)` or the slide `s = z_a.d`, with `theta - lo >= 0` and
//! `hi - theta >= 0`.

use super::body::{d_rot, gamma, Body};
use crate::error::{Error, Result};
use crate::spatial::{Mat3, Vec3};
use nalgebra::{Matrix3x4, SVector};

/// `d phi_i / d q` of one row with respect to `[x_a (3), rho_a (4), x_b (3), rho_b (4)]`.
pub type Dq = SVector<f64, 14>;

/// The kinds of joint constraint (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstraintKind {
    /// Ball and socket: the frame origins coincide.
    Ball,
    /// Revolute about the frames' z axis.
    Hinge,
    /// Prismatic along the frames' z axis.
    Prismatic,
    /// Rotation about and translation along the frames' z axis.
    Cylindrical,
    /// Planar: rotation about z, translation in the x-y plane.
    Planar,
    /// Lock (fixed, weld): the frames coincide.
    Lock,
    /// The frame origins keep the distance `length` (a massless rod with ball ends).
    Distance {
        /// Rest distance (m), positive.
        length: f64,
    },
    /// MuJoCo's joint coupling `<equality><joint joint1 joint2 polycoef>`:
    /// `q_1 - ref1 = c_0 + c_1 x + ... + c_4 x^4` with `x = q_2 - ref2` (or `q_1 - ref1 = c_0`
    /// with one joint), `q_1`, `q_2` the joint coordinates ([`joint_coordinate`]) of the hinge
    /// or prismatic constraints in [`Constraint::coupled`]. Hinge angles are measured in
    /// `(-pi, pi]`, so a coupled hinge must stay within half a turn of that range.
    Coupling {
        /// MuJoCo's `polycoef` `c_0 .. c_4`.
        polycoef: [f64; 5],
        /// `q_1` at the reference configuration (MuJoCo: `qpos0`).
        ref1: f64,
        /// `q_2` at the reference configuration.
        ref2: f64,
    },
}

impl ConstraintKind {
    /// Number of bilateral rows.
    pub fn nrows(&self) -> usize {
        match self {
            ConstraintKind::Ball => 3,
            ConstraintKind::Hinge | ConstraintKind::Prismatic => 5,
            ConstraintKind::Cylindrical => 4,
            ConstraintKind::Planar => 3,
            ConstraintKind::Lock => 6,
            ConstraintKind::Distance { .. } | ConstraintKind::Coupling { .. } => 1,
        }
    }
    /// A short lowercase name.
    pub fn name(&self) -> &'static str {
        match self {
            ConstraintKind::Ball => "ball",
            ConstraintKind::Hinge => "hinge",
            ConstraintKind::Prismatic => "prismatic",
            ConstraintKind::Cylindrical => "cylindrical",
            ConstraintKind::Planar => "planar",
            ConstraintKind::Lock => "lock",
            ConstraintKind::Distance { .. } => "distance",
            ConstraintKind::Coupling { .. } => "coupling",
        }
    }
}

/// A frame attached to one side of a constraint: origin and axes (columns) in the body's
/// centre-of-mass coordinates, or in world coordinates when the side is the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Origin.
    pub pos: Vec3,
    /// Axes (columns, orthonormal).
    pub rot: Mat3,
}

impl Frame {
    /// A frame at `pos` with axes parallel to the body's.
    pub fn at(pos: Vec3) -> Self {
        Frame {
            pos,
            rot: Mat3::identity(),
        }
    }
}

/// One joint constraint with its SPOOK parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// Name (for errors and reports).
    pub name: String,
    /// Kind.
    pub kind: ConstraintKind,
    /// Body `a` (`None`: the world).
    pub body_a: Option<usize>,
    /// Frame `A` on body `a`.
    pub frame_a: Frame,
    /// Body `b` (`None`: the world).
    pub body_b: Option<usize>,
    /// Frame `B` on body `b`.
    pub frame_b: Frame,
    /// Regularization `epsilon` (compliance, 1/stiffness, in the units of `phi` per unit force):
    /// `epsilon >= 0`.
    pub epsilon: f64,
    /// Damping time `tau >= 0` (s) of the Rayleigh stabilization.
    pub tau: f64,
    /// Joint limit `[lo, hi]` on the hinge angle (rad) or the prismatic slide (m).
    pub limit: Option<[f64; 2]>,
    /// The joints a [`ConstraintKind::Coupling`] couples (one or two hinge or prismatic
    /// constraints, copies of the system's own, whose bodies are `body_a` and `body_b`); empty
    /// for the other kinds.
    pub coupled: Vec<Constraint>,
}

impl Constraint {
    /// A constraint of `kind` between frame `frame_a` of `body_a` and `frame_b` of `body_b`, with
    /// the given `epsilon` and `tau` and no limit.
    pub fn new(
        name: &str,
        kind: ConstraintKind,
        (body_a, frame_a): (Option<usize>, Frame),
        (body_b, frame_b): (Option<usize>, Frame),
        epsilon: f64,
        tau: f64,
    ) -> Self {
        Constraint {
            name: name.into(),
            kind,
            body_a,
            frame_a,
            body_b,
            frame_b,
            epsilon,
            tau,
            limit: None,
            coupled: vec![],
        }
    }

    /// A joint coupling ([`ConstraintKind::Coupling`]) of `joint1` and, when given, `joint2`
    /// (hinge or prismatic constraints): `q_1 - ref1 = P(q_2 - ref2)`. Its bodies are the
    /// bodies the joints move; [`Constraint::check`] refuses a coupling that moves more than
    /// two.
    pub fn coupling(
        name: &str,
        (joint1, ref1): (&Constraint, f64),
        joint2: Option<(&Constraint, f64)>,
        polycoef: [f64; 5],
        epsilon: f64,
        tau: f64,
    ) -> Self {
        let mut bodies: Vec<usize> = vec![];
        let joints = std::iter::once(joint1).chain(joint2.map(|j| j.0));
        for b in joints.flat_map(|j| [j.body_a, j.body_b]).flatten() {
            if !bodies.contains(&b) {
                bodies.push(b);
            }
        }
        let kind = ConstraintKind::Coupling {
            polycoef,
            ref1,
            ref2: joint2.map_or(0.0, |j| j.1),
        };
        // the bodies beyond two are kept in `coupled` and refused by `check`
        let mut c = Constraint::new(
            name,
            kind,
            (bodies.first().copied(), Frame::at(Vec3::zeros())),
            (bodies.get(1).copied(), Frame::at(Vec3::zeros())),
            epsilon,
            tau,
        );
        c.coupled = std::iter::once(joint1.clone())
            .chain(joint2.map(|j| j.0.clone()))
            .collect();
        c
    }

    /// Checks the constraint against a system of `nbody` bodies: existing distinct bodies,
    /// `epsilon >= 0` and `tau >= 0` finite, a positive distance, orthonormal frames, an ordered
    /// limit on a hinge or prismatic joint only.
    pub fn check(&self, nbody: usize) -> Result<()> {
        let bad = |what: &str, value: f64, why: &str| Error::BadParameter {
            what: format!("constraint '{}' {what}", self.name),
            value,
            why: why.into(),
        };
        for b in [self.body_a, self.body_b].into_iter().flatten() {
            if b >= nbody {
                return Err(bad(
                    "body index",
                    b as f64,
                    &format!("the system has bodies 0..{nbody}"),
                ));
            }
        }
        if let ConstraintKind::Coupling { polycoef, ref1, ref2 } = self.kind {
            if self.coupled.is_empty() || self.coupled.len() > 2 {
                return Err(Error::Unsupported {
                    what: format!("coupling '{}'", self.name),
                    why: format!("couples {} joints; one or two are allowed", self.coupled.len()),
                });
            }
            for j in &self.coupled {
                if !matches!(j.kind, ConstraintKind::Hinge | ConstraintKind::Prismatic) {
                    return Err(Error::Unsupported {
                        what: format!("coupling '{}'", self.name),
                        why: format!(
                            "couples a {} joint; only hinge and prismatic joints have a coordinate",
                            j.kind.name()
                        ),
                    });
                }
                j.check(nbody)?;
                for b in [j.body_a, j.body_b].into_iter().flatten() {
                    if Some(b) != self.body_a && Some(b) != self.body_b {
                        return Err(Error::Unsupported {
                            what: format!("coupling '{}'", self.name),
                            why: "its joints move more than two bodies (a SPOOK row joins at most two)".into(),
                        });
                    }
                }
            }
            if let Some(k) = polycoef.iter().chain([ref1, ref2].iter()).position(|x| !x.is_finite()) {
                return Err(Error::NonFinite {
                    what: format!("coupling '{}' polycoef, ref1, ref2", self.name),
                    index: k,
                    value: f64::NAN,
                });
            }
        }
        if self.body_a == self.body_b {
            return Err(Error::Unsupported {
                what: format!("constraint '{}'", self.name),
                why: "joins a body (or the world) to itself".into(),
            });
        }
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return Err(bad("epsilon", self.epsilon, "must be finite and >= 0"));
        }
        if !(self.tau.is_finite() && self.tau >= 0.0) {
            return Err(bad("tau", self.tau, "must be finite and >= 0"));
        }
        if let ConstraintKind::Distance { length } = self.kind {
            if !(length.is_finite() && length > 0.0) {
                return Err(bad("length", length, "must be positive and finite"));
            }
        }
        for f in [&self.frame_a, &self.frame_b] {
            let err = (f.rot.transpose() * f.rot - Mat3::identity()).norm();
            if !(err < 1e-9) || !f.pos.iter().all(|x| x.is_finite()) {
                return Err(bad(
                    "frame orthonormality error",
                    err,
                    "frames must be finite and orthonormal",
                ));
            }
        }
        if let Some([lo, hi]) = self.limit {
            if !matches!(self.kind, ConstraintKind::Hinge | ConstraintKind::Prismatic) {
                return Err(Error::Unsupported {
                    what: format!("constraint '{}'", self.name),
                    why: format!(
                        "limits exist for hinge and prismatic joints only, not {}",
                        self.kind.name()
                    ),
                });
            }
            if !(lo <= hi) {
                return Err(bad("limit lo", lo, "the limit range [lo, hi] is empty"));
            }
        }
        Ok(())
    }

    /// Number of bilateral rows.
    pub fn nrows(&self) -> usize {
        self.kind.nrows()
    }
}

/// The two ends of a constraint, evaluated at the current state.
struct Ends<'a> {
    a: Option<&'a Body>,
    b: Option<&'a Body>,
    fa: &'a Frame,
    fb: &'a Frame,
}

/// A body-fixed vector (or point) in world coordinates and its derivative with respect to the
/// body's quaternion (zero for the world).
fn world_vec(body: Option<&Body>, p: &Vec3) -> (Vec3, Matrix3x4<f64>) {
    match body {
        Some(b) => (b.rotation() * p, d_rot(&b.rho, p)),
        None => (*p, Matrix3x4::zeros()),
    }
}

fn origin(body: Option<&Body>) -> Vec3 {
    body.map_or(Vec3::zeros(), |b| b.x)
}

impl Ends<'_> {
    fn axis_a(&self, k: usize) -> (Vec3, Matrix3x4<f64>) {
        world_vec(self.a, &self.fa.rot.column(k).into_owned())
    }
    fn axis_b(&self, k: usize) -> (Vec3, Matrix3x4<f64>) {
        world_vec(self.b, &self.fb.rot.column(k).into_owned())
    }
    /// `d = p_b - p_a` and the derivatives of `R_a r_a` and `R_b r_b`.
    fn gap(&self) -> (Vec3, Matrix3x4<f64>, Matrix3x4<f64>) {
        let (ra, da) = world_vec(self.a, &self.fa.pos);
        let (rb, db) = world_vec(self.b, &self.fb.pos);
        (origin(self.b) + rb - origin(self.a) - ra, da, db)
    }
    /// Rows `d_k`, k = 0..3.
    fn point_rows(&self, phi: &mut Vec<f64>, dq: &mut Vec<Dq>) {
        let (d, da, db) = self.gap();
        for k in 0..3 {
            let mut row = Dq::zeros();
            row[k] = -1.0;
            row[7 + k] = 1.0;
            for j in 0..4 {
                row[3 + j] = -da[(k, j)];
                row[10 + j] = db[(k, j)];
            }
            phi.push(d[k]);
            dq.push(row);
        }
    }
    /// Row `u.w` with `u` axis `ka` of frame A and `w` axis `kb` of frame B.
    fn dot_row(&self, ka: usize, kb: usize) -> (f64, Dq) {
        let (u, du) = self.axis_a(ka);
        let (w, dw) = self.axis_b(kb);
        let mut row = Dq::zeros();
        row.fixed_rows_mut::<4>(3).copy_from(&(du.transpose() * w));
        row.fixed_rows_mut::<4>(10).copy_from(&(dw.transpose() * u));
        (u.dot(&w), row)
    }
    /// Row `u.d` with `u` axis `ka` of frame A.
    fn axis_gap_row(&self, ka: usize) -> (f64, Dq) {
        let (u, du) = self.axis_a(ka);
        let (d, da, db) = self.gap();
        let mut row = Dq::zeros();
        row.fixed_rows_mut::<3>(0).copy_from(&(-u));
        row.fixed_rows_mut::<3>(7).copy_from(&u);
        row.fixed_rows_mut::<4>(3)
            .copy_from(&(du.transpose() * d - da.transpose() * u));
        row.fixed_rows_mut::<4>(10).copy_from(&(db.transpose() * u));
        (u.dot(&d), row)
    }
    /// Row `|d| - L`.
    fn distance_row(&self, length: f64) -> (f64, Dq) {
        let (d, da, db) = self.gap();
        let r = d.norm();
        // At d = 0 the direction is undefined; any unit vector gives a valid subgradient.
        let n = if r > 0.0 { d / r } else { Vec3::z() };
        let mut row = Dq::zeros();
        row.fixed_rows_mut::<3>(0).copy_from(&(-n));
        row.fixed_rows_mut::<3>(7).copy_from(&n);
        row.fixed_rows_mut::<4>(3).copy_from(&(-(da.transpose() * n)));
        row.fixed_rows_mut::<4>(10).copy_from(&(db.transpose() * n));
        (r - length, row)
    }
    /// The hinge angle `theta = atan2(y_a.x_b, x_a.x_b)` and its derivative.
    fn angle_row(&self) -> (f64, Dq) {
        let (s, ds) = self.dot_row(1, 0);
        let (c, dc) = self.dot_row(0, 0);
        let r2 = s * s + c * c;
        (s.atan2(c), (ds * c - dc * s) / r2)
    }
}

// ANCHOR: rows
/// Appends the bilateral rows `phi_i` of `c` and their `d phi_i / d q` (see the module's table).
/// Kernel: `c` is assumed checked ([`Constraint::check`]).
pub fn constraint_rows(c: &Constraint, bodies: &[Body], phi: &mut Vec<f64>, dq: &mut Vec<Dq>) {
    let e = Ends {
        a: c.body_a.map(|i| &bodies[i]),
        b: c.body_b.map(|i| &bodies[i]),
        fa: &c.frame_a,
        fb: &c.frame_b,
    };
    // (x, y, z) = (0, 1, 2): x_a.z_b and y_a.z_b keep z_b along z_a; with z_a.x_b and x_a.y_b
    // they lock all three relative rotations.
    match c.kind {
        ConstraintKind::Ball => e.point_rows(phi, dq),
        ConstraintKind::Hinge => {
            e.point_rows(phi, dq);
            phi_push(&e, phi, dq, &[(0, 2), (1, 2)]);
        }
        ConstraintKind::Prismatic => {
            phi_push(&e, phi, dq, &[(1, 2), (2, 0), (0, 1)]);
            put(phi, dq, e.axis_gap_row(0));
            put(phi, dq, e.axis_gap_row(1));
        }
        ConstraintKind::Cylindrical => {
            phi_push(&e, phi, dq, &[(0, 2), (1, 2)]);
            put(phi, dq, e.axis_gap_row(0));
            put(phi, dq, e.axis_gap_row(1));
        }
        ConstraintKind::Planar => {
            phi_push(&e, phi, dq, &[(0, 2), (1, 2)]);
            put(phi, dq, e.axis_gap_row(2));
        }
        ConstraintKind::Lock => {
            e.point_rows(phi, dq);
            phi_push(&e, phi, dq, &[(1, 2), (2, 0), (0, 1)]);
        }
        ConstraintKind::Distance { length } => put(phi, dq, e.distance_row(length)),
        ConstraintKind::Coupling { .. } => put(phi, dq, coupling_row(c, bodies)),
    }
}
// ANCHOR_END: rows

// ANCHOR: coupling_row
/// The row of a joint coupling: `phi = (q_1 - ref1) - P(x)`, `x = q_2 - ref2`, and
/// `d phi/dq = d q_1/dq - P'(x) d q_2/dq`, each joint's derivative moved from its own bodies'
/// slots to the coupling's (`body_a` at 0, `body_b` at 7; the world's part is zero).
/// Kernel: `c` is a checked coupling.
fn coupling_row(c: &Constraint, bodies: &[Body]) -> (f64, Dq) {
    let ConstraintKind::Coupling { polycoef, ref1, ref2 } = c.kind else {
        return (0.0, Dq::zeros());
    };
    let mut row = Dq::zeros();
    let mut add = |j: &Constraint, scale: f64| -> f64 {
        let (q, d) = joint_coordinate(j, bodies).unwrap_or((0.0, Dq::zeros()));
        for (from, body) in [(0, j.body_a), (7, j.body_b)] {
            let to = match body {
                Some(_) if body == c.body_a => 0,
                Some(_) if body == c.body_b => 7,
                _ => continue,
            };
            for k in 0..7 {
                row[to + k] += scale * d[from + k];
            }
        }
        q
    };
    let (mut p, mut dp) = (polycoef[0], 0.0);
    if let Some(j2) = c.coupled.get(1) {
        let x = joint_coordinate(j2, bodies).map_or(0.0, |(q, _)| q) - ref2;
        // Horner for P(x) and P'(x)
        p = polycoef[4];
        for k in (0..4).rev() {
            dp = dp * x + p;
            p = p * x + polycoef[k];
        }
        add(j2, -dp);
    }
    let q1 = add(&c.coupled[0], 1.0);
    (q1 - ref1 - p, row)
}
// ANCHOR_END: coupling_row

fn put(phi: &mut Vec<f64>, dq: &mut Vec<Dq>, (p, d): (f64, Dq)) {
    phi.push(p);
    dq.push(d);
}

fn phi_push(e: &Ends, phi: &mut Vec<f64>, dq: &mut Vec<Dq>, pairs: &[(usize, usize)]) {
    for &(ka, kb) in pairs {
        let (p, d) = e.dot_row(ka, kb);
        phi.push(p);
        dq.push(d);
    }
}

/// The joint coordinate of a hinge (angle `theta`, rad) or prismatic joint (slide `s = z_a.d`,
/// m) and its `d/dq`; `None` for the other kinds. Limits are rows on this coordinate.
pub fn joint_coordinate(c: &Constraint, bodies: &[Body]) -> Option<(f64, Dq)> {
    let e = Ends {
        a: c.body_a.map(|i| &bodies[i]),
        b: c.body_b.map(|i| &bodies[i]),
        fa: &c.frame_a,
        fb: &c.frame_b,
    };
    match c.kind {
        ConstraintKind::Hinge => Some(e.angle_row()),
        ConstraintKind::Prismatic => Some(e.axis_gap_row(2)),
        _ => None,
    }
}

// ANCHOR: g_row
/// One row of `G`: `g_i = d phi_i / d q Gamma(q)`, six entries per body (book,
/// "Holonomic constraints and their Jacobians"): `[d phi/dx, d phi/d rho Gamma(rho)]` for body `a`, then for body `b`. A world side gives
/// zeros.
pub fn g_row(dq: &Dq, rho_a: Option<&[f64; 4]>, rho_b: Option<&[f64; 4]>) -> ([f64; 6], [f64; 6]) {
    let side = |off: usize, rho: Option<&[f64; 4]>| {
        let mut g = [0.0; 6];
        if let Some(rho) = rho {
            g[..3].copy_from_slice(dq.fixed_rows::<3>(off).as_slice());
            let w = dq.fixed_rows::<4>(off + 3).transpose() * gamma(rho);
            g[3..].copy_from_slice(w.as_slice());
        }
        g
    };
    (side(0, rho_a), side(7, rho_b))
}
// ANCHOR_END: g_row
