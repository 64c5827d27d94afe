//! Canned closed-loop mechanisms (Featherstone chapter 8): a spanning tree plus loop joints,
//! with `qpos0` a configuration that closes every loop. Book chapter: "Closed-loop systems".
//!
//! | mechanism | tree dofs n | loop joints | n^c | rank K | mobility |
//! |---|---|---|---|---|---|
//! | [`four_bar`] | 3 | 1 revolute | 5 | 2 | 1 |
//! | [`spatial_four_bar`] (RSSR) | 5 | 1 spherical | 3 | 3 | 2 |
//! | [`slider_crank`] | 3 | 1 revolute | 5 | 2 | 1 |
//! | [`figure_8_3`] | 4 | 1 revolute | 5 | 2 | 2 |
//! | [`double_four_bar`] | 5 | 2 revolute (coupled) | 10 | 4 | 1 |
//! | [`planar_3rrr`] | 9 | 3 revolute | 15 | 6 | 3 |
//! | [`four_bar_chain`]`(k)` | 2k + 1 | k revolute (coupled) | 5k | 2k | 1 |
//!
//! Planar mechanisms closed by full 3-D revolute loop joints are overconstrained (Featherstone
//! 8.10): three of each joint's five constraints are redundant for planar motion.

use super::canned::{figure_8_3_tree, four_bar_tree, rod};
use super::{Joint, JointType, LoopJoint, Model, ModelBuilder};
use crate::error::{Error, Result};
use crate::spatial::{xlt, Mat3, SpatialInertia, Vec3, Xform};

/// A rod of mass `m` from the origin to the point `to` (body coordinates).
fn rod_to(m: f64, to: Vec3) -> SpatialInertia {
    rod(m, to.norm(), to)
}

/// A revolute loop joint about `axis` between the point `at_p` of `pred` and the point `at_s`
/// of `succ` (frames otherwise aligned with the bodies).
fn revolute_loop(name: &str, axis: Vec3, pred: usize, at_p: Vec3, succ: usize, at_s: Vec3) -> LoopJoint {
    LoopJoint::new(name, JointType::Revolute { axis }, pred, succ, xlt(at_p), xlt(at_s))
}

// ANCHOR: four_bar
/// The planar four-bar linkage of `fourbar.xml` (crank-rocker, hinges about y): the tree of
/// [`four_bar_tree`] closed at D = (0.4, 0, 0) by a **revolute** loop joint about y between the
/// base (predecessor) and the rocker's tip (successor). Closed at `q = 0`.
pub fn four_bar() -> Model {
    let mut m = four_bar_tree();
    m.name = "four_bar_loop".into();
    let d = Vec3::new(0.4, 0.0, 0.0);
    m.loops
        .push(revolute_loop("closeD", Vec3::y(), 0, d, 3, Vec3::new(0.05, 0.0, -0.3)));
    m.validate().expect("canned four-bar is valid");
    m
}
// ANCHOR_END: four_bar

/// A spatial RSSR four-bar: crank (revolute about z at the origin), coupler (spherical joint at
/// the crank pin B = (0.1, 0, 0)), rocker (revolute about x at D = (0.05, 0.35, 0.1)), closed by a
/// **spherical** loop joint at C = (0.05, 0.3, 0.3) between the coupler (predecessor) and the
/// rocker (successor). Mobility 2: the crank and the coupler's idle spin about BC.
pub fn spatial_four_bar() -> Model {
    let b = Vec3::new(0.1, 0.0, 0.0);
    let c = Vec3::new(0.05, 0.3, 0.3);
    let d = Vec3::new(0.05, 0.35, 0.1);
    let mut mb = ModelBuilder::new("spatial_four_bar");
    let crank = mb.add_body(
        "crank",
        0,
        Joint::revolute(Vec3::z()),
        Xform::identity(),
        rod_to(0.5, b),
    );
    let coupler = mb.add_body(
        "coupler",
        crank,
        Joint::new(JointType::Spherical),
        xlt(b),
        rod_to(0.8, c - b),
    );
    let rocker = mb.add_body("rocker", 0, Joint::revolute(Vec3::x()), xlt(d), rod_to(0.6, c - d));
    mb.add_loop(LoopJoint::new(
        "sphere_C",
        JointType::Spherical,
        coupler,
        rocker,
        xlt(c - b),
        xlt(c - d),
    ));
    mb.build().expect("canned spatial four-bar is valid")
}

/// A slider-crank in the x-z plane (axes y): crank A = 0 -> B = (0.06, 0, 0.08), connecting rod
/// B -> P, slider on a prismatic joint along x through P = (0.3, 0, 0); a revolute loop joint
/// joins the rod's end (successor) to the slider (predecessor). Closed at `q = 0`.
pub fn slider_crank() -> Model {
    let b = Vec3::new(0.06, 0.0, 0.08);
    let p = Vec3::new(0.3, 0.0, 0.0);
    let mut mb = ModelBuilder::new("slider_crank");
    let crank = mb.add_body(
        "crank",
        0,
        Joint::revolute(Vec3::y()),
        Xform::identity(),
        rod_to(0.3, b),
    );
    let conrod = mb.add_body("conrod", crank, Joint::revolute(Vec3::y()), xlt(b), rod_to(0.6, p - b));
    let slider = mb.add_body(
        "slider",
        0,
        Joint::prismatic(Vec3::x()),
        xlt(p),
        SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::identity() * 1e-3),
    );
    mb.add_loop(revolute_loop("pin", Vec3::y(), slider, Vec3::zeros(), conrod, p - b));
    mb.build().expect("canned slider-crank is valid")
}

// ANCHOR: figure_8_3_gamma
/// The loop-closure function `q = gamma(y)` of Featherstone's figure 8.3 mechanism (8.11, worked
/// example), with `y = (q1, q4)`: `d = sqrt(l1^2 + l2^2 - 2 l1 l2 cos y1)`,
/// `theta2 = atan2(l2 sin y1, l2 cos y1 - l1)`, `q = (y1, theta2, d, y2)`. Requires `d > 0`.
pub fn figure_8_3_gamma(l1: f64, l2: f64, y: [f64; 2]) -> Result<[f64; 4]> {
    let (s1, c1) = y[0].sin_cos();
    let dd = l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * c1;
    if dd.is_nan() || dd <= 0.0 {
        return Err(Error::Singular {
            what: "figure 8.3 gamma".into(),
            why: format!("d = 0 at y1 = {} (l1 = l2 needs y1 != 0)", y[0]),
        });
    }
    Ok([y[0], (l2 * s1).atan2(l2 * c1 - l1), dd.sqrt(), y[1]])
}
// ANCHOR_END: figure_8_3_gamma

/// Featherstone's figure 8.3 mechanism (a two-link arm driven by a hydraulic cylinder): the tree
/// of [`figure_8_3_tree`] (link 1 at O, cylinder at A = (l1, 0, 0), piston sliding in it, link 2
/// at link 1's elbow) closed by a revolute loop joint about z between the piston's tip
/// (predecessor) and the point B = (l2, 0, 0) of link 1 (successor). The mechanism works in a
/// vertical plane: gravity is (0, -9.81, 0). `qpos0 = gamma(1, 0.5)`.
pub fn figure_8_3(l1: f64, l2: f64) -> Result<Model> {
    if !(l1.is_finite() && l2.is_finite() && l1 > 0.0 && l2 > 0.0) {
        return Err(Error::Other(format!(
            "figure 8.3 mechanism: lengths l1 = {l1}, l2 = {l2} must be positive"
        )));
    }
    let mut m = figure_8_3_tree(l1, l2);
    m.name = "figure_8_3_loop".into();
    m.opt.gravity = Vec3::new(0.0, -9.81, 0.0);
    m.loops.push(revolute_loop(
        "pin_B",
        Vec3::z(),
        3,
        Vec3::zeros(),
        1,
        Vec3::new(l2, 0.0, 0.0),
    ));
    let q = figure_8_3_gamma(l1, l2, [1.0, 0.5])?;
    m.qpos0 = nalgebra::DVector::from_column_slice(&q);
    m.validate()?;
    Ok(m)
}

/// Two coupled four-bars in the x-z plane (axes y): the four-bar of [`four_bar`] (A, B, C, D),
/// and a second coupler from E (the midpoint of the rocker CD) to F = (0.7, 0, 0.35) with a
/// second rocker from F to the ground pivot G = (0.75, 0, 0). Both loops run through the first
/// crank, coupler and rocker joints: one loop cluster (8.9). Closed at `q = 0`; mobility 1.
pub fn double_four_bar() -> Model {
    let (a, b, c) = (Vec3::zeros(), Vec3::new(0.05, 0.0, 0.15), Vec3::new(0.35, 0.0, 0.30));
    let d = Vec3::new(0.4, 0.0, 0.0);
    let e = (c + d) * 0.5;
    let f = Vec3::new(0.7, 0.0, 0.35);
    let g = Vec3::new(0.75, 0.0, 0.0);
    let y = Vec3::y();
    let mut mb = ModelBuilder::new("double_four_bar");
    let crank = mb.add_body("crank", 0, Joint::revolute(y), xlt(a), rod_to(0.5, b - a));
    let coupler = mb.add_body("coupler", crank, Joint::revolute(y), xlt(b - a), rod_to(1.0, c - b));
    let rocker = mb.add_body("rocker", coupler, Joint::revolute(y), xlt(c - b), rod_to(0.8, d - c));
    let coupler2 = mb.add_body("coupler2", rocker, Joint::revolute(y), xlt(e - c), rod_to(0.9, f - e));
    let rocker2 = mb.add_body("rocker2", coupler2, Joint::revolute(y), xlt(f - e), rod_to(0.7, g - f));
    mb.add_loop(revolute_loop("closeD", y, 0, d, rocker, d - c));
    mb.add_loop(revolute_loop("closeG", y, 0, g, rocker2, g - f));
    mb.build().expect("canned double four-bar is valid")
}

/// A planar 3-RRR parallel mechanism in the x-y plane (axes z): three legs, each a proximal link
/// pivoting on the base at `A_i` (radius 0.5) and a distal link, carry a triangular platform at
/// its joints `C_i` (radius 0.15). The spanning tree cuts all three platform joints: the
/// platform hangs on a planar joint from the base, and three revolute loop joints (predecessor:
/// distal link i, successor: the platform) close three loops. Closed at `q = 0`; mobility 3.
pub fn planar_3rrr() -> Model {
    let mut mb = ModelBuilder::new("planar_3rrr");
    let z = Vec3::z();
    let mut dist = [0; 3];
    let mut pins = [(Vec3::zeros(), Vec3::zeros()); 3];
    for (i, d_i) in dist.iter_mut().enumerate() {
        let ang = std::f64::consts::FRAC_PI_2 + 2.0 * std::f64::consts::PI * i as f64 / 3.0;
        let u = Vec3::new(ang.cos(), ang.sin(), 0.0);
        let perp = Vec3::new(-u.y, u.x, 0.0);
        let a = u * 0.5;
        let c = u * 0.15;
        let b = (a + c) * 0.5 + perp * 0.1;
        let prox = mb.add_body(
            &format!("proximal{i}"),
            0,
            Joint::revolute(z),
            xlt(a),
            rod_to(0.4, b - a),
        );
        *d_i = mb.add_body(
            &format!("distal{i}"),
            prox,
            Joint::revolute(z),
            xlt(b - a),
            rod_to(0.3, c - b),
        );
        pins[i] = (c - b, c);
    }
    let platform = mb.add_body(
        "platform",
        0,
        Joint::new(JointType::Planar),
        Xform::identity(),
        SpatialInertia::from_mass_com_inertia(1.2, Vec3::zeros(), Mat3::from_diagonal(&Vec3::new(0.004, 0.004, 0.008))),
    );
    for i in 0..3 {
        mb.add_loop(revolute_loop(
            &format!("platform_pin{i}"),
            z,
            dist[i],
            pins[i].0,
            platform,
            pins[i].1,
        ));
    }
    mb.build().expect("canned 3-RRR is valid")
}

/// A chain of `k >= 1` coupled planar four-bars in the x-z plane (axes y), the parametric family
/// of the chapter's cost figure. Unit 0 is the linkage of [`four_bar`] (crank A = 0 -> B, coupler
/// B -> C_0, rocker D_0 = (0.4, 0, 0) -> C_0); unit `i >= 1` is driven by the midpoint E of the
/// previous rocker: a coupler E -> C_i and a rocker from the ground pivot D_i = D_{i-1} +
/// (0.35, 0, 0) to C_i = D_i + (-0.05, 0, 0.35). For `k = 2` this is the mechanism of
/// [`double_four_bar`], bar for bar and mass for mass, on a different spanning tree.
///
/// The spanning tree is shallow: every rocker hangs from the base, coupler i from the previous
/// rocker (coupler 0 from the crank), and revolute loop joint i joins rocker i (predecessor) to
/// coupler i (successor) at C_i. Loop i then shares tree joints only with loops i - 1 and i + 1:
/// one cluster (8.9) whose `K` is banded. `n = 2k + 1`, `n^c = 5k`, `rank K = 2k`, mobility 1;
/// closed at `q = 0`. Fails for `k = 0`.
pub fn four_bar_chain(k: usize) -> Result<Model> {
    if k == 0 {
        return Err(Error::Other(
            "four_bar_chain needs at least one four-bar (k >= 1)".into(),
        ));
    }
    let y = Vec3::y();
    let b = Vec3::new(0.05, 0.0, 0.15);
    let mut mb = ModelBuilder::new(&format!("four_bar_chain_{k}"));
    let crank = mb.add_body("crank", 0, Joint::revolute(y), Xform::identity(), rod_to(0.5, b));
    // the input of unit i: (body, its origin in world coordinates, the driving point)
    let mut input = (crank, Vec3::zeros(), b);
    let mut d = Vec3::new(0.4, 0.0, 0.0);
    let mut c = Vec3::new(0.35, 0.0, 0.30);
    for i in 0..k {
        if i > 0 {
            d += Vec3::new(0.35, 0.0, 0.0);
            c = d + Vec3::new(-0.05, 0.0, 0.35);
        }
        let (body, origin, drive) = input;
        let coupler = mb.add_body(
            &format!("coupler{i}"),
            body,
            Joint::revolute(y),
            xlt(drive - origin),
            rod_to(if i == 0 { 1.0 } else { 0.9 }, c - drive),
        );
        let rocker = mb.add_body(
            &format!("rocker{i}"),
            0,
            Joint::revolute(y),
            xlt(d),
            rod_to(if i == 0 { 0.8 } else { 0.7 }, c - d),
        );
        mb.add_loop(revolute_loop(
            &format!("close{i}"),
            y,
            rocker,
            c - d,
            coupler,
            c - drive,
        ));
        input = (rocker, d, (c + d) * 0.5);
    }
    mb.build()
}

/// Every mechanism of this module with its name (the figure 8.3 mechanism with l1 = 1, l2 = 0.6).
pub fn all() -> Vec<(&'static str, Model)> {
    vec![
        ("four_bar", four_bar()),
        ("spatial_four_bar", spatial_four_bar()),
        ("slider_crank", slider_crank()),
        ("figure_8_3", figure_8_3(1.0, 0.6).expect("valid lengths")),
        ("double_four_bar", double_four_bar()),
        ("planar_3rrr", planar_3rrr()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops::{
        forward_dynamics, loop_constraints, loop_jacobian_dense, loop_properties, null_space_with, Method, PivotTol,
    };
    use nalgebra::DVector;

    /// The state at `qpos0` with the crank (dof 0) turning at `w`, and its closed-loop
    /// accelerations with zero joint forces (method 3).
    fn crank_acceleration(m: &Model, w: f64) -> DVector<f64> {
        let q = m.qpos0.as_slice();
        let s = loop_constraints(m, q, &vec![0.0; m.nv], None).unwrap();
        let ns = null_space_with(&s.kmat, &DVector::zeros(s.nc()), &PivotTol::default(), Some(&[0])).unwrap();
        let qd = ns.g_null.column(0) * w;
        let tau = vec![0.0; m.nv];
        forward_dynamics(m, q, qd.as_slice(), &tau, None, Method::NullSpace, None)
            .unwrap()
            .qdd
    }

    #[test]
    fn four_bar_chain_structure() {
        assert!(four_bar_chain(0).is_err());
        for k in 1..=5 {
            let m = four_bar_chain(k).unwrap();
            let q = m.qpos0.as_slice();
            let p = loop_properties(&m, q).unwrap();
            assert_eq!((p.n, p.nc, p.rank, p.mobility), (2 * k + 1, 5 * k, 2 * k, 1));
            let s = loop_constraints(&m, q, &vec![0.0; m.nv], None).unwrap();
            assert!(s.err.amax() < 1e-15, "k = {k}: not closed at qpos0");
            // table 8.4 against the dense formula (8.17), and the SVD's rank
            let kd = loop_jacobian_dense(&m, q).unwrap();
            assert!((&s.kmat - kd).amax() < 1e-12);
            let sv = s.kmat.clone().svd(false, false).singular_values;
            assert_eq!(sv.iter().filter(|&&x| x > 1e-10 * sv.amax()).count(), 2 * k);
            // loop i touches only the joints of units i - 1, i (banded K): dofs 0, 1 are the
            // crank and coupler 0, then rocker i at 2 + 2i and coupler i + 1 at 3 + 2i
            for (l, rows) in s.rows.iter().enumerate() {
                let unit = |dof: usize| {
                    if dof < 2 {
                        0
                    } else {
                        (dof - 2) / 2 + usize::from(dof % 2 == 1)
                    }
                };
                for dof in 0..m.nv {
                    if unit(dof) + 1 < l || unit(dof) > l {
                        assert!(s.kmat.rows(rows.start, rows.len()).column(dof).amax() == 0.0);
                    }
                }
            }
        }
    }

    #[test]
    fn two_chained_four_bars_move_like_the_double_four_bar() {
        // the same mechanism on two spanning trees: the crank's acceleration agrees
        let a = crank_acceleration(&four_bar_chain(2).unwrap(), 3.0);
        let b = crank_acceleration(&double_four_bar(), 3.0);
        assert!((a[0] - b[0]).abs() < 1e-9 * b[0].abs().max(1.0), "{} vs {}", a[0], b[0]);
        assert!(b[0].abs() > 1e-2, "a nontrivial acceleration");
    }
}
