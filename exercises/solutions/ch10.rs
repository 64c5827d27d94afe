//! Worked answers to the exercises of "Collision detection" (statements in `src/ch10.rs`).

use crate::types::ContactProps;
use mbd::collision::convex::ConvexShape;
use mbd::collision::GeomPose;
use mbd::spatial::Vec3;

/// Normalize the normal; pick the start of the tangent (the hint if long enough, else y, or z
/// when the normal is too close to y); Gram-Schmidt it against the normal; the third row closes
/// a right-handed frame.
pub fn exercise_1(normal: Vec3, hint: Vec3) -> [Vec3; 3] {
    let n = normal / normal.norm();
    let start = if hint.dot(&hint) >= 0.25 {
        hint
    } else if n.y.abs() < 0.5 {
        Vec3::new(0.0, 1.0, 0.0)
    } else {
        Vec3::new(0.0, 0.0, 1.0)
    };
    let t = start - n * n.dot(&start);
    let t = t / t.norm();
    [n, t, n.cross(&t)]
}

/// The capsule is the set of points within `rc` of its segment: the nearest point of the
/// segment to the sphere's centre (the projection on the axis, clamped to `[-h, h]`) turns the
/// pair into two spheres. Their distance is `|q - c| - r - rc`, the normal points from the
/// sphere's centre to `q`, and the midpoint lies `r + dist / 2` from `c` along it.
#[allow(clippy::too_many_arguments)]
pub fn exercise_2(c: Vec3, r: f64, p: Vec3, a: Vec3, rc: f64, h: f64, margin: f64) -> Option<(f64, Vec3, Vec3)> {
    let x = a.dot(&(c - p)).clamp(-h, h);
    let q = p + a * x;
    let d = q - c;
    let len = d.norm();
    let dist = len - r - rc;
    if dist > margin {
        return None;
    }
    let n = d / len;
    Some((dist, n, c + n * (r + dist / 2.0)))
}

/// Unequal priorities: the higher one's properties. Equal: the larger condim and the larger
/// friction of each kind; `solref` and `solimp` mixed with the weight `solmix_a / (solmix_a +
/// solmix_b)` (0.5 when both weights vanish, all of the other geom's when one does), except that
/// direct `solref` (either one non-positive) takes the smaller of each entry.
pub fn exercise_3(a: ContactProps, b: ContactProps) -> (usize, [f64; 5], [f64; 2], [f64; 5]) {
    let expand = |f: [f64; 3]| [f[0], f[0], f[1], f[2], f[2]];
    if a.priority != b.priority {
        let w = if a.priority > b.priority { a } else { b };
        return (w.condim, expand(w.friction), w.solref, w.solimp);
    }
    let small = 1e-15; // MuJoCo's mjMINVAL
    let mix = match (a.solmix < small, b.solmix < small) {
        (true, true) => 0.5,
        (true, false) => 0.0,
        (false, true) => 1.0,
        (false, false) => a.solmix / (a.solmix + b.solmix),
    };
    let solref = if a.solref[0] > 0.0 && b.solref[0] > 0.0 {
        [0, 1].map(|i| mix * a.solref[i] + (1.0 - mix) * b.solref[i])
    } else {
        [0, 1].map(|i| a.solref[i].min(b.solref[i]))
    };
    let solimp = [0, 1, 2, 3, 4].map(|i| mix * a.solimp[i] + (1.0 - mix) * b.solimp[i]);
    let friction = [0, 1, 2].map(|i| a.friction[i].max(b.friction[i]));
    (a.condim.max(b.condim), expand(friction), solref, solimp)
}

/// In the cylinder's frame the support separates: the radial part of `d` picks the rim point
/// `r d_xy / |d_xy|`, the sign of `d_z` picks the cap. Back to the world with the pose.
pub fn exercise_4(r: f64, h: f64, pose: &GeomPose, d: &Vec3) -> Vec3 {
    let l = pose.rot.transpose() * d;
    let radial = (l.x * l.x + l.y * l.y).sqrt();
    let (x, y) = if radial > 1e-15 {
        (r * l.x / radial, r * l.y / radial)
    } else {
        (0.0, 0.0)
    };
    let z = if l.z >= 0.0 { h } else { -h };
    pose.pos + pose.rot * Vec3::new(x, y, z)
}

/// Along a unit `u`, A reaches at most `h_A(u)` and B starts at `-h_B(-u)`: the gap along `u`
/// is `-(h_A(u) + h_B(-u))`, and the signed distance is the largest gap over all directions
/// (the negative penetration depth when they overlap). Directions from a Fibonacci lattice.
pub fn exercise_5(a: &ConvexShape, b: &ConvexShape, n: usize) -> f64 {
    let mut best = f64::INFINITY;
    for i in 0..n {
        let z = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
        let t = std::f64::consts::PI * (1.0 + 5f64.sqrt()) * (i as f64 + 0.5);
        let s = (1.0 - z * z).sqrt();
        let u = Vec3::new(s * t.cos(), s * t.sin(), z);
        let h = u.dot(&a.support(&u)) + (-u).dot(&b.support(&-u));
        best = best.min(h);
    }
    -best
}
