//! Figure of spatial tendons wrapping around a cylinder (chapter "Integrators and the simulation
//! loop", section Actuation; MuJoCo's `mju_wrap`).
//!
//! - `tendon_wrap.svg`: an elbow seen along the axis of its wrapping cylinder, with an extensor
//!   running from the upper arm (solid, vertical), behind the elbow (held there by a side
//!   site), to the forearm (dashed), at five elbow angles: each path is computed by
//!   [`crate::dynamics::wrap`], straight part, arc, straight part, drawn true to scale.

use super::draw::{canvas, colour, finish, Side, Sketch, GREY, INK};
use crate::dynamics::{wrap, WrapShape};
use crate::error::Result;
use crate::spatial::{Mat3, Vec3};
use std::path::{Path, PathBuf};

/// Radius of the elbow cylinder (m), centred at the joint.
pub const RADIUS: f64 = 0.04;
/// The extensor's site on the upper arm (behind it; the upper arm points up from the elbow).
pub const UPPER_SITE: (f64, f64) = (-0.05, 0.2);
/// The extensor's site on the forearm, in the forearm's frame (the forearm points down at 0).
pub const FORE_SITE: (f64, f64) = (-0.05, -0.16);
/// The side site, behind the elbow on the upper arm.
pub const SIDE_SITE: (f64, f64) = (-0.2, 0.0);
/// The elbow angles drawn (rad; positive flexes the forearm forwards, towards +x).
pub const ANGLES: [f64; 5] = [0.0, 0.45, 0.9, 1.35, 1.8];

/// The forearm point `p` (forearm frame) at elbow angle `q`.
fn forearm(p: (f64, f64), q: f64) -> (f64, f64) {
    let (s, c) = q.sin_cos();
    (c * p.0 - s * p.1, s * p.0 + c * p.1)
}

/// The extensor's path at elbow angle `q` (plane points, the arc sampled every 3 degrees) and
/// its length: [`wrap`] around the cylinder (axis out of the page), or the straight segment when
/// it does not wrap.
pub fn extensor_path(q: f64) -> (Vec<(f64, f64)>, f64) {
    let v = |p: (f64, f64)| Vec3::new(p.0, p.1, 0.0);
    let (a, b) = (UPPER_SITE, forearm(FORE_SITE, q));
    let side = v(SIDE_SITE);
    let w = wrap(
        WrapShape::Cylinder,
        &v(a),
        &v(b),
        &Vec3::zeros(),
        &Mat3::identity(),
        RADIUS,
        Some(&side),
    );
    let Some(w) = w else {
        let l = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        return (vec![a, b], l);
    };
    // the arc turns from t0 by phi = arc / radius one way or the other: the way that lands on t1
    let phi = w.arc / RADIUS;
    let a0 = w.t0.y.atan2(w.t0.x);
    let turn = |s: f64| (a0 + s * phi).cos() * RADIUS - w.t1.x;
    let sign = if turn(1.0).abs() + ((a0 + phi).sin() * RADIUS - w.t1.y).abs()
        < turn(-1.0).abs() + ((a0 - phi).sin() * RADIUS - w.t1.y).abs()
    {
        1.0
    } else {
        -1.0
    };
    let n = ((phi.to_degrees() / 3.0).ceil() as usize).max(1);
    let mut pts = vec![a];
    pts.extend((0..=n).map(|k| {
        let t = a0 + sign * phi * k as f64 / n as f64;
        (RADIUS * t.cos(), RADIUS * t.sin())
    }));
    pts.push(b);
    let straight = |p: (f64, f64), x: &Vec3| ((p.0 - x.x).powi(2) + (p.1 - x.y).powi(2)).sqrt();
    (pts, straight(a, &w.t0) + w.arc + straight(b, &w.t1))
}

/// Prints the section's short report and writes its figure into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    println!("Spatial tendons wrapping around a cylinder (mju_wrap)");
    let path = dir.join("tendon_wrap.svg");
    draw_extensor(&path)?;
    Ok(vec![path])
}

/// Draws the figure into `path`.
fn draw_extensor(path: &Path) -> Result<()> {
    let root = canvas(path, 560, 520, "An extensor wrapping the elbow, at five elbow angles")?;
    let sk = Sketch::new(root, (-0.24, 0.24), (-0.22, 0.26), 20.0);
    // the upper arm, the cylinder and the side site
    sk.line(&[(0.0, 0.25), (0.0, 0.0)], INK, 4)?;
    let circle: Vec<(f64, f64)> = (0..=72)
        .map(|k| {
            let t = k as f64 * std::f64::consts::TAU / 72.0;
            (RADIUS * t.cos(), RADIUS * t.sin())
        })
        .collect();
    sk.fill(&circle, GREY, 0.35)?;
    sk.line(&circle, GREY, 1)?;
    sk.dot(SIDE_SITE, 4, GREY)?;
    sk.label(SIDE_SITE, "side site", Side::Below, 14, GREY)?;
    sk.dot(UPPER_SITE, 4, INK)?;
    for (k, &q) in ANGLES.iter().enumerate() {
        let c = colour(k);
        sk.dashed((0.0, 0.0), forearm((0.0, -0.2), q), c)?;
        let (pts, l) = extensor_path(q);
        sk.line(&pts, c, 2)?;
        sk.dot(forearm(FORE_SITE, q), 4, c)?;
        let tip = forearm((0.0, -0.215), q);
        sk.label(tip, &format!("{q:.2} rad"), Side::Centre, 13, c)?;
        println!("  elbow {q:.2} rad: extensor length {l:.4} m ({} points)", pts.len());
    }
    sk.joint((0.0, 0.0), 5, INK)?;
    finish(sk.area())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drawn paths are what the figure claims: straight at the extended elbow, wrapped
    /// (more than two points) once flexed, and longer the more the elbow flexes.
    #[test]
    fn the_extensor_wraps_and_lengthens_as_the_elbow_flexes() {
        let paths: Vec<_> = ANGLES.iter().map(|&q| extensor_path(q)).collect();
        assert_eq!(paths[0].0.len(), 2);
        assert!(paths[2..].iter().all(|(p, _)| p.len() > 2));
        assert!(paths.windows(2).all(|w| w[1].1 > w[0].1));
    }
}
