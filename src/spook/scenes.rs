//! SPOOK's test scenes: the thesis pendulum, the sphere chain of cannon.js's constraints demo,
//! a hanging chain with a heavy end mass, fmigo's chain of boxes, a chain falling onto the floor,
//! and the double pendulum as a reduced-coordinate [`Model`] for comparison. The closed-loop
//! mechanisms come from [`crate::model::mechanisms`] through [`SpookSystem::from_model`].

use super::body::Body;
use super::constraint::{Constraint, ConstraintKind, Frame};
use super::system::{SpookGeom, SpookSystem};
use crate::error::Result;
use crate::model::canned::rod;
use crate::model::{GeomType, Joint, Model, ModelBuilder};
use crate::spatial::{quat_from_axis_angle, xlt, Mat3, Vec3};

/// The thesis pendulum's step, `h = 1/60` s.
pub const PENDULUM_H: f64 = 1.0 / 60.0;

/// Lacoursière's pendulum (thesis ch. 6): unit mass, unit length, `g = 10`, released at rest
/// from the horizontal: a body at `(1, 0, 0)` held at distance 1 from the world origin by a
/// [`ConstraintKind::Distance`] row (its rotation is free and plays no part; its inertia is that
/// of a small sphere of radius 0.05).
pub fn pendulum(epsilon: f64, tau: f64) -> SpookSystem {
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -10.0));
    let bob = sys.add_body(Body::sphere("bob", 1.0, 0.05, Vec3::new(1.0, 0.0, 0.0)));
    sys.add_constraint(Constraint::new(
        "rod",
        ConstraintKind::Distance { length: 1.0 },
        (None, Frame::at(Vec3::zeros())),
        (Some(bob), Frame::at(Vec3::zeros())),
        epsilon,
        tau,
    ));
    sys
}

/// The sphere chain of cannon.js's constraints demo: 20 spheres of radius 0.5 and mass 1 at
/// distance 1.12, the first static (here: the world point it sat at), gravity 40 m/s^2 down,
/// `k = 1e6` (`epsilon = 1e-6`), `d = tau/h = 3` at 60 Hz. Hanging straight down, the last
/// sphere kicked sideways at 5 m/s. Returns the system and its step.
pub fn sphere_chain() -> (SpookSystem, f64) {
    let h = 1.0 / 60.0;
    let (eps, tau) = (1e-6, 3.0 * h);
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -40.0));
    let mut prev: Option<usize> = None;
    for k in 1..20 {
        let mut sphere = Body::sphere(&format!("sphere{k}"), 1.0, 0.5, Vec3::new(0.0, 0.0, -1.12 * k as f64));
        if k == 19 {
            sphere.nu = Vec3::new(5.0, 0.0, 0.0);
        }
        let b = sys.add_body(sphere);
        sys.add_constraint(Constraint::new(
            &format!("link{k}"),
            ConstraintKind::Distance { length: 1.12 },
            (prev, Frame::at(Vec3::zeros())),
            (Some(b), Frame::at(Vec3::zeros())),
            eps,
            tau,
        ));
        prev = Some(b);
    }
    (sys, h)
}

/// A chain of `n` links (rods of length 0.1 and mass 0.1, ball joints) hanging at rest straight
/// down from the world origin with a sphere of mass `ratio * 0.1` at its end. `epsilon` is
/// scaled by the link mass as the spec suggests (`epsilon_i = epsilon / m_link`).
pub fn heavy_chain(n: usize, ratio: f64, epsilon: f64, tau: f64) -> SpookSystem {
    heavy_chain_with(n, ratio, epsilon, tau, 0.1, 0.0)
}

/// [`heavy_chain`] with link length `l` and the end's initial sideways speed `v0`. A moving
/// chain under high tension meets the stepper's explicit geometric stiffness (see the chapter):
/// stable when `h sqrt(T / (m l))` stays below about 1.
pub fn heavy_chain_with(n: usize, ratio: f64, epsilon: f64, tau: f64, l: f64, v0: f64) -> SpookSystem {
    let m = 0.1;
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -9.81));
    let eps = epsilon / m;
    let ic = rod(m, l, Vec3::z()).inertia_at_com();
    let mut prev: Option<usize> = None;
    for k in 0..n {
        let b = sys.add_body(Body::new(
            &format!("link{k}"),
            m,
            ic,
            Vec3::new(0.0, 0.0, -(k as f64 + 0.5) * l),
            [1.0, 0.0, 0.0, 0.0],
        ));
        let top = if prev.is_some() {
            Vec3::new(0.0, 0.0, -0.5 * l)
        } else {
            Vec3::zeros()
        };
        sys.add_constraint(Constraint::new(
            &format!("joint{k}"),
            ConstraintKind::Ball,
            (prev, Frame::at(top)),
            (Some(b), Frame::at(Vec3::new(0.0, 0.0, 0.5 * l))),
            eps,
            tau,
        ));
        prev = Some(b);
    }
    let r = 0.05;
    let mut end = Body::sphere("end", ratio * m, r, Vec3::new(0.0, 0.0, -(n as f64) * l - r));
    end.nu = Vec3::new(v0, 0.0, 0.0);
    let e = sys.add_body(end);
    sys.add_constraint(Constraint::new(
        "end joint",
        ConstraintKind::Ball,
        (prev, Frame::at(Vec3::new(0.0, 0.0, -0.5 * l))),
        (Some(e), Frame::at(Vec3::new(0.0, 0.0, r))),
        eps,
        tau,
    ));
    sys
}

/// The heavy-end chain with hinges and joint limits: `n` links of 0.1 kg and length `l` along x
/// (horizontal), the first hinged to the world at the origin, every joint a hinge about y with
/// the limit `[-limit, limit]`, and a sphere of `ratio` times a link's mass hinged (with the same
/// limit) to the last link's end. Released at rest, the chain swings down and its joints bend
/// into their limits, which then carry the heavy end's load.
pub fn heavy_hinge_chain(n: usize, ratio: f64, epsilon: f64, tau: f64, l: f64, limit: f64) -> SpookSystem {
    let m = 0.1;
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -9.81));
    let eps = epsilon / m;
    let ic = rod(m, l, Vec3::x()).inertia_at_com();
    let axis = crate::model::frame_with_z(&Vec3::y());
    let frame = |p: Vec3| Frame { pos: p, rot: axis };
    let mut prev: Option<usize> = None;
    let r = 0.05;
    for k in 0..=n {
        let body = if k < n {
            Body::new(
                &format!("link{k}"),
                m,
                ic,
                Vec3::new((k as f64 + 0.5) * l, 0.0, 0.0),
                [1.0, 0.0, 0.0, 0.0],
            )
        } else {
            Body::sphere("end", ratio * m, r, Vec3::new(n as f64 * l + r, 0.0, 0.0))
        };
        let b = sys.add_body(body);
        let parent_end = if prev.is_some() {
            Vec3::new(0.5 * l, 0.0, 0.0)
        } else {
            Vec3::zeros()
        };
        let own = if k < n { -0.5 * l } else { -r };
        let mut c = Constraint::new(
            &format!("hinge{k}"),
            ConstraintKind::Hinge,
            (prev, frame(parent_end)),
            (Some(b), frame(Vec3::new(own, 0.0, 0.0))),
            eps,
            tau,
        );
        if prev.is_some() {
            c.limit = Some([-limit, limit]);
        }
        sys.add_constraint(c);
        prev = Some(b);
    }
    sys
}

/// Dzhanibekov's T-handle: one free body with principal inertias (1, 2, 3) kg m^2 (unit mass),
/// no gravity, spinning at 2 rad/s about its intermediate axis y with a perturbation of
/// 0.01 rad/s about the other two; the spin is unstable and the body flips periodically.
pub fn dzhanibekov() -> SpookSystem {
    let mut sys = SpookSystem::new(Vec3::zeros());
    let mut b = Body::new(
        "handle",
        1.0,
        Mat3::from_diagonal(&Vec3::new(1.0, 2.0, 3.0)),
        Vec3::zeros(),
        [1.0, 0.0, 0.0, 0.0],
    );
    b.omega = Vec3::new(0.01, 2.0, 0.01);
    sys.add_body(b);
    sys
}

/// fmigo's chain of boxes: `n` boxes of half extents 0.1 x 0.05 x 0.05 (mass 2 kg, water's
/// density) along x, the first locked to the world, then alternately lock and hinge (about y)
/// joints; compliance `epsilon = 1e-3`, `d = 3`, `h = 0.01`. Returns the system and its step.
pub fn box_chain(n: usize) -> (SpookSystem, f64) {
    let h = 0.01;
    let (eps, tau) = (1e-3, 3.0 * h);
    let half = Vec3::new(0.1, 0.05, 0.05);
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -9.81));
    let mut prev: Option<usize> = None;
    for k in 0..n {
        let b = sys.add_body(Body::cuboid(
            &format!("box{k}"),
            2.0,
            half,
            Vec3::new(0.2 * k as f64, 0.0, 0.0),
            [1.0, 0.0, 0.0, 0.0],
        ));
        let (kind, fa) = match prev {
            None => (ConstraintKind::Lock, Frame::at(Vec3::new(-0.1, 0.0, 0.0))),
            Some(_) => (
                if k % 2 == 1 {
                    ConstraintKind::Hinge
                } else {
                    ConstraintKind::Lock
                },
                Frame::at(Vec3::new(0.1, 0.0, 0.0)),
            ),
        };
        // hinges turn about y: frames with z along y
        let rot = crate::model::frame_with_z(&Vec3::y());
        let (fa, fb) = (
            Frame { pos: fa.pos, rot },
            Frame {
                pos: Vec3::new(-0.1, 0.0, 0.0),
                rot,
            },
        );
        sys.add_constraint(Constraint::new(
            &format!("joint{k}"),
            kind,
            (prev, fa),
            (Some(b), fb),
            eps,
            tau,
        ));
        sys.geoms.push(SpookGeom {
            body: Some(b),
            gtype: GeomType::Box,
            size: [half.x, half.y, half.z],
            frame: Frame::at(Vec3::zeros()),
            friction: 0.5,
        });
        prev = Some(b);
    }
    (sys, h)
}

/// A chain of `n` capsules (radius 0.04, half-length 0.1 along x, mass 0.5) joined end to end
/// by ball joints, released at rest 0.5 m above a floor plane (friction 0.5) with a small tilt,
/// so it falls, lands and settles. Needs [`super::SpookSolver::Pgs`] (or `Auto`).
pub fn falling_chain(n: usize, epsilon: f64, tau: f64) -> SpookSystem {
    let mut sys = SpookSystem::new(Vec3::new(0.0, 0.0, -9.81));
    sys.geoms.push(SpookGeom {
        body: None,
        gtype: GeomType::Plane,
        size: [0.0; 3],
        frame: Frame::at(Vec3::zeros()),
        friction: 0.5,
    });
    let (r, hl, m) = (0.04, 0.1, 0.5);
    // capsule axis (its z) along the body's x
    let capsule_rot = crate::model::frame_with_z(&Vec3::x());
    // a solid cylinder's inertia, axis along x
    let it = m * (3.0 * r * r + 4.0 * hl * hl) / 12.0;
    let ic = Mat3::from_diagonal(&Vec3::new(0.5 * m * r * r, it, it));
    let tilt = quat_from_axis_angle(&Vec3::y(), 0.15);
    let mut prev: Option<usize> = None;
    for k in 0..n {
        let b = sys.add_body(Body::new(&format!("capsule{k}"), m, ic, Vec3::new(0.0, 0.0, 0.5), tilt));
        if let Some(p) = prev {
            sys.add_constraint(Constraint::new(
                &format!("joint{k}"),
                ConstraintKind::Ball,
                (Some(p), Frame::at(Vec3::new(hl, 0.0, 0.0))),
                (Some(b), Frame::at(Vec3::new(-hl, 0.0, 0.0))),
                epsilon,
                tau,
            ));
        }
        sys.geoms.push(SpookGeom {
            body: Some(b),
            gtype: GeomType::Capsule,
            size: [r, hl, 0.0],
            frame: Frame {
                pos: Vec3::zeros(),
                rot: capsule_rot,
            },
            friction: 0.5,
        });
        prev = Some(b);
    }
    // place the bodies on the tilted line the joints expect
    let r_tilt = sys.bodies[0].rotation();
    let x0 = sys.bodies[0].x;
    for (k, b) in sys.bodies.iter_mut().enumerate() {
        b.x = x0 + r_tilt * Vec3::new(2.0 * hl * k as f64, 0.0, 0.0);
    }
    sys
}

/// An `n`-link chain of hinges ([`crate::model::canned::chain`], planar or spatial) converted to
/// SPOOK at rest at `q`, with `epsilon` and `tau` on every joint.
pub fn chain(n: usize, spatial: bool, q: &[f64], epsilon: f64, tau: f64) -> Result<SpookSystem> {
    let model = crate::model::canned::chain(n, spatial);
    SpookSystem::from_model(&model, q, &vec![0.0; model.nv], epsilon, tau)
}

/// A closed-loop mechanism of [`crate::model::mechanisms`] (the planar four-bar, the spatial
/// RSSR four-bar, ...) converted to SPOOK at its `qpos0` (which closes its loops) at rest: the
/// tree joints and the loop joints all become constraints.
pub fn mechanism(model: &Model, epsilon: f64, tau: f64) -> Result<SpookSystem> {
    SpookSystem::from_model(model, model.qpos0.as_slice(), &vec![0.0; model.nv], epsilon, tau)
}

/// The double pendulum in reduced coordinates: two uniform rods of mass 1 and length 1 hanging
/// along -z from hinges about y, `g = 10`. Its SPOOK twin is
/// `SpookSystem::from_model(&double_pendulum(), ...)`.
pub fn double_pendulum() -> Model {
    let mut b = ModelBuilder::new("double_pendulum");
    b.opt.gravity = Vec3::new(0.0, 0.0, -10.0);
    let l1 = b.add_body(
        "upper",
        0,
        Joint::revolute(Vec3::y()),
        xlt(Vec3::zeros()),
        rod(1.0, 1.0, -Vec3::z()),
    );
    b.add_body(
        "lower",
        l1,
        Joint::revolute(Vec3::y()),
        xlt(Vec3::new(0.0, 0.0, -1.0)),
        rod(1.0, 1.0, -Vec3::z()),
    );
    b.build().expect("the double pendulum is valid")
}
