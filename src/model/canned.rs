//! Canned models used by the book, the examples and the tests.
//!
//! All are built with [`ModelBuilder`]; gravity is MuJoCo's default (0, 0, -9.81).

use super::{Joint, JointType, Model, ModelBuilder};
use crate::error::{Error, Result};
use crate::spatial::{xlt, Mat3, SpatialInertia, Vec3, Xform};

/// A slender rod of mass `m` and length `l` along the local `dir` axis, starting at the origin.
pub fn rod(m: f64, l: f64, dir: Vec3) -> SpatialInertia {
    let d = dir.normalize();
    // transverse m l^2/12, small axial inertia so the triangle inequality holds strictly
    let it = m * l * l / 12.0;
    let ia = 0.1 * it;
    let ic = Mat3::identity() * it - d * d.transpose() * (it - ia);
    SpatialInertia::from_mass_com_inertia(m, d * (0.5 * l), ic)
}

/// An n-link pendulum hanging along -z. `spatial = false`: every joint turns about y (a planar
/// chain); `spatial = true`: the axes cycle y, x, z and the centres of mass are offset sideways,
/// so H is dense and genuinely 3-D (the shape of the MuJoCo test models `chain_N[_spatial]`).
pub fn chain(n: usize, spatial: bool) -> Model {
    let mut b = ModelBuilder::new(&format!("chain_{n}{}", if spatial { "_spatial" } else { "" }));
    let axes = [Vec3::y(), Vec3::x(), Vec3::z()];
    let mut parent = 0;
    let mut prev_len = 0.0;
    for i in 1..=n {
        let l = (0.5 - 0.01 * (i as f64 - 1.0)).max(0.2);
        let m = 1.0 + 0.1 * (i as f64 - 1.0);
        let axis = if spatial { axes[(i - 1) % 3] } else { Vec3::y() };
        let mut inertia = rod(m, l, -Vec3::z());
        if spatial {
            let off = Vec3::new(
                0.02 * ((i % 3) as f64 - 1.0),
                0.015 * (((i + 1) % 3) as f64 - 1.0),
                -0.5 * l,
            );
            let ic = Mat3::new(1.0, 0.1, 0.0, 0.1, 1.05, 0.05, 0.0, 0.05, 0.3) * (m * l * l / 12.0);
            inertia = SpatialInertia::from_mass_com_inertia(m, off, ic);
        }
        parent = b.add_body(
            &format!("link{i}"),
            parent,
            Joint::revolute(axis),
            xlt(Vec3::new(0.0, 0.0, -prev_len)),
            inertia,
        );
        prev_len = l;
    }
    b.build().expect("canned chain is valid")
}

/// A binary tree of revolute joints with `depth` levels (2^depth - 1 bodies), the shape of the
/// MuJoCo test models `tree_D`: children at (+-w, 0, -l) scaled by 0.75 per level, axes mixing
/// x, y and z.
pub fn binary_tree(depth: usize) -> Model {
    let mut b = ModelBuilder::new(&format!("tree_{depth}"));
    fn node(b: &mut ModelBuilder, parent: usize, d: usize, side: i32, pos: Vec3, depth: usize) {
        let k = b.nb();
        let s = 0.75f64.powi(d as i32);
        let axis = match (d, d % 2, side) {
            (0, _, _) => Vec3::y(),
            (_, 1, -1) => Vec3::x(),
            (_, 1, _) => Vec3::y(),
            (_, _, -1) => Vec3::z(),
            _ => Vec3::x(),
        };
        let l = 0.3 * s;
        let m = s + 0.05 * k as f64;
        let it = m * l * l / 12.0;
        let ic = Mat3::from_diagonal(&Vec3::new(it, 1.1 * it, 0.15 * it));
        let com = Vec3::new(0.01 * side as f64, 0.005 * ((k % 3) as f64 - 1.0), -0.5 * l);
        let id = b.add_body(
            &format!("b{k}"),
            parent,
            Joint::revolute(axis),
            xlt(pos),
            SpatialInertia::from_mass_com_inertia(m, com, ic),
        );
        if d + 1 < depth {
            let w = 0.2 * s;
            for sd in [-1, 1] {
                node(b, id, d + 1, sd, Vec3::new(sd as f64 * w, 0.0, -l), depth);
            }
        }
    }
    if depth > 0 {
        node(&mut b, 0, 0, 0, Vec3::zeros(), depth);
    }
    b.build().expect("canned tree is valid")
}

/// A free-floating torso with two ball-jointed arms with revolute elbows and a prismatic +
/// revolute tail: every multi-dof joint type MuJoCo has, in one model (like `floating.xml`).
pub fn floating_base_ball_arms() -> Model {
    let mut b = ModelBuilder::new("floating_base");
    let box_inertia = |m: f64, sx: f64, sy: f64, sz: f64| {
        Mat3::from_diagonal(&Vec3::new(sy * sy + sz * sz, sx * sx + sz * sz, sx * sx + sy * sy)) * (m / 3.0)
    };
    let torso = b.add_body(
        "torso",
        0,
        Joint::new(JointType::Free),
        Xform::identity(),
        SpatialInertia::from_mass_com_inertia(5.0, Vec3::new(0.01, 0.02, -0.03), box_inertia(5.0, 0.1, 0.15, 0.2)),
    );
    b.set_qpos0(torso, &[0.1, -0.2, 1.0, 1.0, 0.0, 0.0, 0.0]);
    for (side, sgn) in [("r", -1.0), ("l", 1.0)] {
        let arm = b.add_body(
            &format!("arm_{side}"),
            torso,
            Joint::new(JointType::Spherical),
            xlt(Vec3::new(0.0, sgn * 0.17, 0.15)),
            rod(1.0, 0.3, Vec3::new(0.0, sgn, 0.0)),
        );
        b.add_body(
            &format!("forearm_{side}"),
            arm,
            Joint::revolute(Vec3::new(1.0, 0.0, 1.0)),
            xlt(Vec3::new(0.0, sgn * 0.3, 0.0)),
            rod(0.6, 0.24, Vec3::new(0.0, sgn, 0.0)),
        );
    }
    let tail = b.add_body(
        "tail",
        torso,
        Joint::prismatic(Vec3::new(0.0, 0.3, 1.0)),
        xlt(Vec3::new(0.0, 0.0, -0.22)),
        rod(0.5, 0.2, -Vec3::z()),
    );
    let mut tip = Joint::revolute(Vec3::x());
    tip.pos = Vec3::new(0.0, 0.0, 0.05);
    b.add_body(
        "tail_tip",
        tail,
        tip,
        xlt(Vec3::new(0.0, 0.0, -0.2)),
        rod(0.3, 0.16, -Vec3::z()),
    );
    b.build().expect("canned floating base is valid")
}

/// The planar four-bar linkage of `fourbar.xml` as a spanning tree (crank, coupler, rocker, all
/// about y); the loop closure at the rocker's tip is added by the closed-loop chapter.
pub fn four_bar_tree() -> Model {
    let mut b = ModelBuilder::new("four_bar");
    let y = Vec3::y();
    let crank = b.add_body(
        "crank",
        0,
        Joint::revolute(y),
        Xform::identity(),
        SpatialInertia::from_mass_com_inertia(
            0.5,
            Vec3::new(0.025, 0.0, 0.075),
            Mat3::from_diagonal(&Vec3::new(0.001, 0.001, 0.0001)),
        ),
    );
    let coupler = b.add_body(
        "coupler",
        crank,
        Joint::revolute(y),
        xlt(Vec3::new(0.05, 0.0, 0.15)),
        SpatialInertia::from_mass_com_inertia(
            1.0,
            Vec3::new(0.15, 0.0, 0.075),
            Mat3::from_diagonal(&Vec3::new(0.002, 0.01, 0.01)),
        ),
    );
    b.add_body(
        "rocker",
        coupler,
        Joint::revolute(y),
        xlt(Vec3::new(0.3, 0.0, 0.15)),
        SpatialInertia::from_mass_com_inertia(
            0.8,
            Vec3::new(0.025, 0.0, -0.15),
            Mat3::from_diagonal(&Vec3::new(0.006, 0.006, 0.0002)),
        ),
    );
    b.build().expect("canned four-bar is valid")
}

/// The spanning tree of Featherstone's figure 8.3 mechanism (../specs, section 6): link 1 and a
/// hydraulic cylinder pivoting on the base, a piston sliding in the cylinder, link 2 at the
/// elbow of link 1. Bodies: 1 link 1 (revolute z at O), 2 cylinder (revolute z at A = (l1, 0, 0)),
/// 3 piston (prismatic along the cylinder's x axis), 4 link 2 (revolute z at (l2, 0, 0) on link 1).
/// lambda = [0, 0, 2, 1]. The loop joint between the piston tip and link 1 comes later.
///
/// Fails with [`Error::InvalidArgument`] unless `0 < l1, l2 <= 1e5` (the bodies' inertias grow
/// as the square of the lengths and must stay below mjMAXVAL = 1e10).
pub fn figure_8_3_tree(l1: f64, l2: f64) -> Result<Model> {
    for (what, l) in [("l1", l1), ("l2", l2)] {
        if !(l > 0.0 && l <= 1e5) {
            return Err(Error::InvalidArgument {
                what: what.into(),
                why: format!("length {l} must be in (0, 1e5]"),
            });
        }
    }
    let mut b = ModelBuilder::new("figure_8_3");
    let z = Vec3::z();
    let thin = |m: f64, l: f64| rod(m, l, Vec3::x());
    let link1 = b.add_body("link1", 0, Joint::revolute(z), Xform::identity(), thin(2.0, l2 * 1.5));
    let cyl = b.add_body(
        "cylinder",
        0,
        Joint::revolute(z),
        xlt(Vec3::new(l1, 0.0, 0.0)),
        thin(1.0, 0.5 * l1.max(l2)),
    );
    b.add_body(
        "piston",
        cyl,
        Joint::prismatic(Vec3::x()),
        Xform::identity(),
        thin(0.5, 0.5 * l1.max(l2)),
    );
    b.add_body(
        "link2",
        link1,
        Joint::revolute(z),
        xlt(Vec3::new(l2 * 1.5, 0.0, 0.0)),
        thin(1.0, l2),
    );
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canned_models_have_expected_sizes() {
        assert_eq!(chain(7, true).nv, 7);
        let t = binary_tree(5);
        assert_eq!((t.nb, t.nv), (31, 31));
        let f = floating_base_ball_arms();
        assert_eq!((f.nq, f.nv), (7 + 4 + 1 + 4 + 1 + 1 + 1, 6 + 3 + 1 + 3 + 1 + 1 + 1));
        assert_eq!(figure_8_3_tree(1.0, 0.6).unwrap().lambda, vec![0, 0, 0, 2, 1]);
        assert_eq!(four_bar_tree().nv, 3);
    }
}
