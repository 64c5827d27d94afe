//! Mechanisms of the chapter "Solving the constraint equations, sparsity and ladders"
//! (Featherstone 8.8-8.13): the system of four loops in three clusters (figure 8.1), the
//! parallelogram four-bar with its variable mobility and its two assembly branches (figure 8.2),
//! and the ladder of the sparse matrix method (figure 8.4).
//!
//! | model | tree dofs n | loop joints | n^c | rank K | mobility |
//! |---|---|---|---|---|---|
//! | [`four_loops`] | 13 | 4 revolute, 3 clusters | 20 | 8 | 5 |
//! | [`parallelogram`] | 3 | 1 revolute | 5 | 2 (1 when folded flat) | 1 (2) |
//! | [`ladder`]`(N)` | 5N | N spherical | 3N | 3N | 2N |

use super::canned::rod;
use super::{Joint, JointType, LoopJoint, Model, ModelBuilder};
use crate::error::{Error, Result};
use crate::spatial::{xlt, Mat3, SpatialInertia, Vec3, Xform};

fn rod_to(m: f64, to: Vec3) -> SpatialInertia {
    rod(m, to.norm(), to)
}

fn revolute_y_loop(name: &str, pred: usize, at_p: Vec3, succ: usize, at_s: Vec3) -> LoopJoint {
    LoopJoint::new(
        name,
        JointType::Revolute { axis: Vec3::y() },
        pred,
        succ,
        xlt(at_p),
        xlt(at_s),
    )
}

// ANCHOR: four_loops
/// Featherstone's figure 8.1 rebuilt: four loops in three clusters, in the x-z plane (hinges
/// about y), numbered so that no cluster's joints are consecutive.
///
/// - a **carrier** arm hinged to the base (its joint is in no loop: the loops it carries close
///   on the carrier itself);
/// - cluster A on the carrier at (0.1, 0, 0): two coupled four-bars (the linkage of
///   [`super::mechanisms::double_four_bar`]), loops `A1` and `A2`;
/// - cluster B on the carrier at (1.0, 0, 0): one four-bar, loop `B`;
/// - cluster C on the base at (-1.0, 0, -0.7): one four-bar, loop `C`;
/// - a pendulum hinged to the base at (-0.3, 0, -0.7): in no loop.
///
/// Bodies in the order added (1..=13): carrier, crankA, crankC, pendulum, couplerA, crankB,
/// couplerC, rockerA, couplerB, rockerC, rockerB, couplerA2, rockerA2. Closed at `q = 0`.
pub fn four_loops() -> Model {
    let (b, c, d) = (
        Vec3::new(0.05, 0.0, 0.15),
        Vec3::new(0.35, 0.0, 0.30),
        Vec3::new(0.4, 0.0, 0.0),
    );
    let e = (c + d) * 0.5;
    let (f, g) = (Vec3::new(0.7, 0.0, 0.35), Vec3::new(0.75, 0.0, 0.0));
    let (o_a, o_b, o_c) = (
        Vec3::new(0.1, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(-1.0, 0.0, -0.7),
    );
    let hinge = || Joint::revolute(Vec3::y());
    let mut mb = ModelBuilder::new("four_loops");
    let carrier = mb.add_body(
        "carrier",
        0,
        hinge(),
        Xform::identity(),
        rod_to(2.0, Vec3::new(1.5, 0.0, 0.0)),
    );
    let crank_a = mb.add_body("crankA", carrier, hinge(), xlt(o_a), rod_to(0.5, b));
    let crank_c = mb.add_body("crankC", 0, hinge(), xlt(o_c), rod_to(0.5, b));
    mb.add_body(
        "pendulum",
        0,
        hinge(),
        xlt(Vec3::new(-0.3, 0.0, -0.7)),
        rod_to(0.4, Vec3::new(0.0, 0.0, -0.3)),
    );
    let coupler_a = mb.add_body("couplerA", crank_a, hinge(), xlt(b), rod_to(1.0, c - b));
    let crank_b = mb.add_body("crankB", carrier, hinge(), xlt(o_b), rod_to(0.5, b));
    let coupler_c = mb.add_body("couplerC", crank_c, hinge(), xlt(b), rod_to(1.0, c - b));
    let rocker_a = mb.add_body("rockerA", coupler_a, hinge(), xlt(c - b), rod_to(0.8, d - c));
    let coupler_b = mb.add_body("couplerB", crank_b, hinge(), xlt(b), rod_to(1.0, c - b));
    let rocker_c = mb.add_body("rockerC", coupler_c, hinge(), xlt(c - b), rod_to(0.8, d - c));
    let rocker_b = mb.add_body("rockerB", coupler_b, hinge(), xlt(c - b), rod_to(0.8, d - c));
    let coupler_a2 = mb.add_body("couplerA2", rocker_a, hinge(), xlt(e - c), rod_to(0.9, f - e));
    let rocker_a2 = mb.add_body("rockerA2", coupler_a2, hinge(), xlt(f - e), rod_to(0.7, g - f));
    mb.add_loop(revolute_y_loop("A1", carrier, o_a + d, rocker_a, d - c));
    mb.add_loop(revolute_y_loop("B", carrier, o_b + d, rocker_b, d - c));
    mb.add_loop(revolute_y_loop("C", 0, o_c + d, rocker_c, d - c));
    mb.add_loop(revolute_y_loop("A2", carrier, o_a + g, rocker_a2, g - f));
    mb.build().expect("canned four-loop system is valid")
}
// ANCHOR_END: four_loops

// ANCHOR: parallelogram
/// A parallelogram four-bar in the x-z plane (hinges about y): ground pivots A = 0 and
/// D = (a, 0, 0), crank A -> B of length `b` (straight up at `q = 0`), coupler B -> C of length
/// `a`, rocker C -> D of length `b`; a revolute loop joint joins the rocker's end (successor) to
/// the base at D (predecessor). Featherstone's figure 8.2: when the crank lies along the ground
/// ([`parallelogram_branches`] at `phi = pi/2`) `rank K` drops from 2 to 1 and the mobility
/// rises to 2 (variable mobility); at every other crank angle two closures exist (configuration
/// ambiguity). Closed at `q = 0`. Fails unless `a`, `b` are positive and finite.
pub fn parallelogram(a: f64, b: f64) -> Result<Model> {
    if !(a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0) {
        return Err(Error::BadJoint {
            body: 0,
            name: "parallelogram".into(),
            why: format!("link lengths a = {a}, b = {b} must be positive and finite"),
        });
    }
    let up = Vec3::new(0.0, 0.0, b);
    let mut mb = ModelBuilder::new("parallelogram");
    let crank = mb.add_body(
        "crank",
        0,
        Joint::revolute(Vec3::y()),
        Xform::identity(),
        rod_to(0.5, up),
    );
    let coupler = mb.add_body(
        "coupler",
        crank,
        Joint::revolute(Vec3::y()),
        xlt(up),
        rod_to(1.0, Vec3::new(a, 0.0, 0.0)),
    );
    let rocker = mb.add_body(
        "rocker",
        coupler,
        Joint::revolute(Vec3::y()),
        xlt(Vec3::new(a, 0.0, 0.0)),
        rod_to(0.5, -up),
    );
    mb.add_loop(revolute_y_loop("closeD", 0, Vec3::new(a, 0.0, 0.0), rocker, -up));
    mb.build()
}

/// The two closures of [`parallelogram`] at crank angle `phi` (about y, `phi = 0` straight
/// up): `[parallelogram branch, crossed branch]`, each `q = (phi, coupler, rocker)` in relative
/// joint angles. Both close the loop; on the parallelogram branch the coupler stays parallel to
/// the ground. At `phi = pi/2` (crank along the ground) the two branches meet.
pub fn parallelogram_branches(a: f64, b: f64, phi: f64) -> [[f64; 3]; 2] {
    // points in (x, z); a rotation by t about y takes (0, b) to (b sin t, b cos t)
    let bp = (b * phi.sin(), b * phi.cos());
    let dp = (a, 0.0);
    // C is at distance a from B and b from D: the two intersections of those circles
    let (dx, dz) = (dp.0 - bp.0, dp.1 - bp.1);
    let dist2 = dx * dx + dz * dz;
    let along = (a * a - b * b + dist2) / (2.0 * dist2);
    let h = (a * a / dist2 - along * along).max(0.0).sqrt();
    let mid = (bp.0 + along * dx, bp.1 + along * dz);
    let branch = |sign: f64| -> [f64; 3] {
        let cp = (mid.0 - sign * h * dz, mid.1 + sign * h * dx);
        // coupler along its local x: C - B = (a cos t, -a sin t)
        let beta = (-(cp.1 - bp.1)).atan2(cp.0 - bp.0);
        // rocker along its local -z: D - C = (-b sin t, -b cos t)
        let alpha = (-(dp.0 - cp.0)).atan2(-(dp.1 - cp.1));
        let wrap = |t: f64| (t + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI) - std::f64::consts::PI;
        [phi, wrap(beta - phi), wrap(alpha - beta)]
    };
    let (p, x) = (branch(1.0), branch(-1.0));
    // the parallelogram branch keeps the coupler level (absolute angle 0)
    if (p[0] + p[1]).sin().abs() <= (x[0] + x[1]).sin().abs() {
        [p, x]
    } else {
        [x, p]
    }
}
// ANCHOR_END: parallelogram

// ANCHOR: ladder
/// A ladder with `n` rungs (Featherstone 8.13, figure 8.4) standing on the base in the x-y
/// plane, gravity along -y: two rails of `n` links each, hinged about z one above the other (left rail at x = 0, right rail at x = `w`, links of height `h`),
/// and `n` rungs. Rung i is joined to the top of left link i by a spherical joint and reaches
/// across to the top of right link i, where a **spherical loop joint** closes loop i.
///
/// The spanning tree is the two rails (rung i hangs on left link i): bodies in the order left
/// link, right link, rung, level by level, so body `3i + 1` is left link i + 1. Every loop runs
/// down both rails to the base, so loop i couples every rail joint below rung i. Spherical
/// closures make the system properly constrained in 3-D (`rank K = n^c = 3n`, the sparse matrix
/// method's assumption); mobility 2n (the rails' sway and each rung's spin). Closed at
/// `qpos0` (straight rails, level rungs). Fails for `n = 0` or bad lengths.
pub fn ladder(n: usize, w: f64, h: f64) -> Result<Model> {
    if n == 0 || !(w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0) {
        return Err(Error::BadJoint {
            body: 0,
            name: "ladder".into(),
            why: format!("needs n >= 1 rungs and positive width and height (n = {n}, w = {w}, h = {h})"),
        });
    }
    let up = Vec3::new(0.0, h, 0.0);
    let rail = || rod_to(1.0, up);
    let rung = SpatialInertia::from_mass_com_inertia(
        0.5,
        Vec3::new(0.5 * w, 0.0, 0.0),
        Mat3::from_diagonal(&Vec3::new(2e-3, 0.5 * w * w / 12.0, 0.5 * w * w / 12.0)),
    );
    let mut mb = ModelBuilder::new(&format!("ladder_{n}"));
    let (mut left, mut right) = (0, 0);
    for i in 0..n {
        let at = |parent: usize, x: f64| {
            if parent == 0 {
                xlt(Vec3::new(x, 0.0, 0.0))
            } else {
                xlt(up)
            }
        };
        let l = mb.add_body(
            &format!("left{i}"),
            left,
            Joint::revolute(Vec3::z()),
            at(left, 0.0),
            rail(),
        );
        let r = mb.add_body(
            &format!("right{i}"),
            right,
            Joint::revolute(Vec3::z()),
            at(right, w),
            rail(),
        );
        let g = mb.add_body(&format!("rung{i}"), l, Joint::new(JointType::Spherical), xlt(up), rung);
        mb.add_loop(LoopJoint::new(
            &format!("close{i}"),
            JointType::Spherical,
            r,
            g,
            xlt(up),
            xlt(Vec3::new(w, 0.0, 0.0)),
        ));
        left = l;
        right = r;
    }
    let mut m = mb.build()?;
    m.opt.gravity = Vec3::new(0.0, -9.81, 0.0);
    Ok(m)
}
// ANCHOR_END: ladder

/// A fixed state of a model near `qpos0` that does **not** close the loops (positions moved by
/// `0.05 sin(1.3 k + 0.4)` per dof, velocities `0.3 cos(2.1 k + 1.1)`): the sparse matrix method
/// and the spanning-tree method solve the same equations at any state, so their comparisons,
/// figures and benchmarks use it.
pub fn sample_state(m: &Model) -> (Vec<f64>, Vec<f64>) {
    let mut q = m.qpos0.as_slice().to_vec();
    let dq: Vec<f64> = (0..m.nv).map(|k| 0.05 * (1.3 * k as f64 + 0.4).sin()).collect();
    m.integrate_with(&mut q, &dq, 1.0);
    let qd = (0..m.nv).map(|k| 0.3 * (2.1 * k as f64 + 1.1).cos()).collect();
    (q, qd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops::{loop_constraints, loop_properties};

    #[test]
    fn models_close_at_qpos0_with_the_stated_ranks() {
        let cases: Vec<(Model, [usize; 4])> = vec![
            (four_loops(), [13, 20, 8, 5]),
            (parallelogram(0.4, 0.25).unwrap(), [3, 5, 2, 1]),
            (ladder(3, 0.5, 0.3).unwrap(), [15, 9, 9, 6]),
        ];
        for (m, want) in cases {
            let q = m.qpos0.as_slice();
            let s = loop_constraints(&m, q, &vec![0.0; m.nv], None).unwrap();
            assert!(s.err.amax() < 1e-15, "{}: {}", m.name, s.err);
            let p = loop_properties(&m, q).unwrap();
            assert_eq!([p.n, p.nc, p.rank, p.mobility], want, "{}", m.name);
        }
    }

    #[test]
    fn parallelogram_branches_close_and_fold_flat() {
        let m = parallelogram(0.4, 0.25).unwrap();
        for phi in [-1.0, 0.3, 0.9, 2.0] {
            for q in parallelogram_branches(0.4, 0.25, phi) {
                let s = loop_constraints(&m, &q, &[0.0; 3], None).unwrap();
                assert!(s.err.amax() < 1e-12, "phi {phi}: {q:?} {}", s.err);
            }
        }
        let [p, x] = parallelogram_branches(0.4, 0.25, 0.3);
        assert!((p[0] + p[1]).abs() < 1e-12, "coupler level on the parallelogram branch");
        assert!((p[1] - x[1]).abs() > 0.1, "two distinct closures");
        let flat = parallelogram_branches(0.4, 0.25, std::f64::consts::FRAC_PI_2)[0];
        let pr = loop_properties(&m, &flat).unwrap();
        assert_eq!((pr.rank, pr.mobility), (1, 2));
        assert!(parallelogram(0.0, 1.0).is_err());
        assert!(ladder(0, 1.0, 1.0).is_err());
    }
}
