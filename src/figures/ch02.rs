//! Figures and report of the chapter "Spatial vectors" (Featherstone chapter 2).
//!
//! - `ch02_screw_velocity.svg`: the speed of the body-fixed point under a screw motion, as the
//!   point moves along a line that crosses the screw axis (section 2.5, line vectors and screws);
//!   the minimum sits on the axis and equals `pitch * |w|`.
//! - `ch02_rounding.svg`: the rounding error of recovering a body's velocity from a motion vector
//!   whose reference point is far from the body (why MuJoCo centres its spatial quantities at
//!   each tree's centre of mass).

use crate::error::Result;
use crate::plot::{Chart, Series};
use crate::spatial::{xlt, Force, Motion, Vec3, Xform};
use std::path::{Path, PathBuf};

/// A small deterministic generator (64-bit LCG) so the figures are reproducible without a
/// random-number dependency.
struct Lcg(u64);

impl Lcg {
    /// Uniform in [-1, 1).
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
    fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.next(), self.next(), self.next())
    }
}

/// The motion vector, at the origin, of a screw motion with unit direction `dir`, angular rate
/// `w` (rad/s), axis through the point `a` and pitch `h` (m/rad): every body point `p` moves with
/// `h w dir + w dir x (p - a)`, so the origin moves with `h w dir - w dir x a`.
pub fn screw_motion(dir: &Vec3, w: f64, a: &Vec3, h: f64) -> Motion {
    let omega = dir * w;
    Motion::new(omega, omega * h - omega.cross(a))
}

/// Pitch `h = (w . v) / |w|^2` and the point of the screw axis nearest the origin,
/// `(w x v) / |w|^2`, of a motion vector with non-zero angular part (section 2.5).
pub fn screw_axis(m: &Motion) -> Option<(f64, Vec3)> {
    let w2 = m.w.norm_squared();
    if w2.is_nan() || w2 <= 0.0 {
        return None;
    }
    Some((m.w.dot(&m.v) / w2, m.w.cross(&m.v) / w2))
}

/// Error of recovering the velocity of a body point at distance `d` from the reference point:
/// the motion vector is expressed at the origin, whose linear part is then of size `|w| d`, and
/// moved back to the point with `xlt(p)`. Returns the largest error over `trials` directions.
fn far_transform_error(d: f64, trials: usize, rng: &mut Lcg) -> f64 {
    let mut worst: f64 = 0.0;
    for _ in 0..trials {
        let p = rng.vec3().normalize() * d;
        let w = rng.vec3();
        let v_p = rng.vec3();
        // The same motion with the origin as reference point: v_O = v_p + w x (O - p) = v_p + p x w
        // (section 2.2), written out independently of Xform.
        let m_origin = Motion::new(w, v_p + p.cross(&w));
        let back = xlt(p).apply_motion(&m_origin);
        worst = worst.max((back.v - v_p).norm());
    }
    worst
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    println!("== Spatial vectors (Featherstone ch. 2) ==");
    let x_ba = Xform::rot_axis(&Vec3::new(1.0, 1.0, 0.0).normalize(), 0.7) * xlt(Vec3::new(0.3, -0.2, 1.1));
    let m = Motion::new(Vec3::new(0.2, -0.5, 1.0), Vec3::new(1.5, 0.3, -0.4));
    let f = Force::new(Vec3::new(-0.3, 0.8, 0.1), Vec3::new(2.0, -1.0, 0.5));
    let (mb, fb) = (x_ba.apply_motion(&m), x_ba.apply_force(&f));
    println!(
        "power m . f in frame A = {:.15}, in frame B = {:.15}",
        m.dot(&f),
        mb.dot(&fb)
    );
    let xm = x_ba.to_motion_matrix();
    let dual_err = match xm.try_inverse() {
        Some(inv) => (x_ba.to_force_matrix() - inv.transpose()).abs().max(),
        None => f64::NAN,
    };
    println!("max |X* - X^-T| = {dual_err:.1e}");

    // Figure 1: speed of the body point along a line crossing the screw axis.
    let axis_dir = Vec3::z();
    let axis_at = Vec3::new(0.4, 0.0, 0.0);
    let w = 1.0;
    let pitches = [0.0, 0.1, 0.3];
    let xs: Vec<f64> = (0..=250).map(|k| -1.0 + 2.5 * k as f64 / 250.0).collect();
    let mut chart = Chart::new(
        "Screw motion: speed of the body point at (x, 0, 0)",
        "x, position of the reference point (m)",
        "|v_P|, linear speed (m/s)",
    );
    let mut minima = Vec::new();
    for &h in &pitches {
        let m0 = screw_motion(&axis_dir, w, &axis_at, h);
        // Moving the reference point to P is the transform xlt(P) (table 2.2).
        let pts = xs
            .iter()
            .map(|&x| (x, xlt(Vec3::new(x, 0.0, 0.0)).apply_motion(&m0).v.norm()))
            .collect();
        chart = chart.with(Series::line(&format!("pitch h = {h} m/rad"), pts));
        if let Some((pitch, a)) = screw_axis(&m0) {
            println!(
                "screw with h = {h}: recovered pitch {pitch:.3}, axis through ({:.3}, {:.3}, {:.3})",
                a.x, a.y, a.z
            );
            minima.push((a.x, pitch.abs() * w));
        }
    }
    chart = chart.with(Series::points("axis from (w x v_O)/|w|^2, speed h|w|", minima));
    let screw_path = dir.join("ch02_screw_velocity.svg");
    chart.save_svg(&screw_path)?;

    // Figure 2: rounding error when the reference point is far from the body.
    let mut rng = Lcg(0x5eed_2024);
    let ds: Vec<f64> = (0..=32).map(|k| 10f64.powf(k as f64 * 0.25)).collect();
    let errs: Vec<(f64, f64)> = ds.iter().map(|&d| (d, far_transform_error(d, 40, &mut rng))).collect();
    for &(d, e) in errs
        .iter()
        .filter(|(d, _)| [1.0, 1e4, 1e8].iter().any(|x| (d / x - 1.0).abs() < 1e-9))
    {
        println!("reference point {d:.0e} m away: velocity error {e:.1e} m/s");
    }
    // Floor the plotted values at 1e-17 so that exact results stay on the log axis.
    let plotted: Vec<(f64, f64)> = errs.iter().map(|&(d, e)| (d, e.max(1e-17))).collect();
    let reference: Vec<(f64, f64)> = ds.iter().map(|&d| (d, f64::EPSILON * d)).collect();
    let rounding_path = dir.join("ch02_rounding.svg");
    Chart::new(
        "Velocity of a body point recovered from a distant reference point",
        "d, distance from the reference point to the body (m)",
        "error in the point's velocity (m/s)",
    )
    .log(true, true)
    .with(Series::line_points("measured (worst of 40 random directions)", plotted))
    .with(Series::dashed("machine epsilon x d", reference))
    .save_svg(&rounding_path)?;
    let drawing = super::schematics::spatial_velocity(dir)?;
    Ok(vec![drawing, screw_path, rounding_path])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screw_axis_recovers_the_construction() {
        let dir = Vec3::new(1.0, -2.0, 0.5).normalize();
        let a = Vec3::new(0.3, 0.1, -0.2);
        let a_perp = a - dir * dir.dot(&a); // the axis point nearest the origin
        let (h, p) = screw_axis(&screw_motion(&dir, 1.7, &a, 0.25)).unwrap();
        assert!((h - 0.25).abs() < 1e-14);
        assert!((p - a_perp).norm() < 1e-14);
        assert!(screw_axis(&Motion::new(Vec3::zeros(), Vec3::x())).is_none());
    }
}
