//! Orientation (MuJoCo's `mjuu_*` frame helpers in `user_util` and the alternative orientation
//! attributes of MJCF): `quat`, `axisangle`, `xyaxes`, `zaxis` and `euler`, each turned into a unit
//! quaternion (w, x, y, z) with MuJoCo's arithmetic.

use super::attrs::{join, Attrs};
use super::Compiler;
use crate::error::Result;
use crate::model::constants::{mjEPS, mjMINVAL};
use crate::spatial::{quat_mul, Vec3};

/// The attributes that give an orientation; at most one may be used.
pub(crate) const ORIENTATION: [&str; 5] = ["quat", "axisangle", "xyaxes", "zaxis", "euler"];
/// The attributes that place an element in its parent's frame: `pos` and the orientations.
pub(crate) const POSE: [&str; 6] = join(&[&["pos"], &ORIENTATION]);

/// The pose an element gives in its parent's frame: `pos` (default zero) and its orientation
/// (default the identity).
pub(crate) fn pose(a: &Attrs, compiler: &Compiler) -> Result<(Vec3, [f64; 4])> {
    let pos = Vec3::from(a.vec::<3>("pos")?.unwrap_or([0.0; 3]));
    let quat = orientation(a, compiler)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
    Ok((pos, quat))
}

pub(crate) fn normalized4(q: [f64; 4]) -> [f64; 4] {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}

/// The minimal rotation taking the z axis to the unit vector `v` (MuJoCo's `mjuu_z2quat`); an
/// antiparallel `v` gives the half turn about x.
pub(crate) fn z_to_quat(v: &Vec3) -> [f64; 4] {
    let mut axis = Vec3::z().cross(v);
    let s = axis.norm();
    if s < 1e-10 {
        axis = Vec3::x();
    } else {
        axis /= s;
    }
    let ang = s.atan2(v.z);
    let (sn, cs) = (0.5 * ang).sin_cos();
    [cs, axis.x * sn, axis.y * sn, axis.z * sn]
}

/// The quaternion of the frame whose axes are the columns x, y, z (MuJoCo's `mjuu_frame2quat`).
pub(crate) fn frame_to_quat(x: &Vec3, y: &Vec3, z: &Vec3) -> [f64; 4] {
    // m[c][r]: column c, row r
    let m = [[x[0], x[1], x[2]], [y[0], y[1], y[2]], [z[0], z[1], z[2]]];
    let mut q = [0.0; 4];
    if m[0][0] + m[1][1] + m[2][2] > 0.0 {
        q[0] = 0.5 * (1.0 + m[0][0] + m[1][1] + m[2][2]).sqrt();
        q[1] = 0.25 * (m[1][2] - m[2][1]) / q[0];
        q[2] = 0.25 * (m[2][0] - m[0][2]) / q[0];
        q[3] = 0.25 * (m[0][1] - m[1][0]) / q[0];
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        q[1] = 0.5 * (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt();
        q[0] = 0.25 * (m[1][2] - m[2][1]) / q[1];
        q[2] = 0.25 * (m[1][0] + m[0][1]) / q[1];
        q[3] = 0.25 * (m[2][0] + m[0][2]) / q[1];
    } else if m[1][1] > m[2][2] {
        q[2] = 0.5 * (1.0 - m[0][0] + m[1][1] - m[2][2]).sqrt();
        q[0] = 0.25 * (m[2][0] - m[0][2]) / q[2];
        q[1] = 0.25 * (m[1][0] + m[0][1]) / q[2];
        q[3] = 0.25 * (m[2][1] + m[1][2]) / q[2];
    } else {
        q[3] = 0.5 * (1.0 - m[0][0] - m[1][1] + m[2][2]).sqrt();
        q[0] = 0.25 * (m[0][1] - m[1][0]) / q[3];
        q[1] = 0.25 * (m[2][0] + m[0][2]) / q[3];
        q[2] = 0.25 * (m[2][1] + m[1][2]) / q[3];
    }
    normalized4(q)
}

/// Reads the orientation alternatives of an element (at most one of them) into a unit
/// quaternion, the way MuJoCo's compiler does.
pub(crate) fn orientation(a: &Attrs, compiler: &Compiler) -> Result<Option<[f64; 4]>> {
    let given: Vec<&str> = ORIENTATION.iter().copied().filter(|k| a.has(k)).collect();
    if given.len() > 1 {
        return Err(a.err(format!(
            "multiple orientation specifiers ({}) are not allowed",
            given.join(", ")
        )));
    }
    let Some(&key) = given.first() else {
        return Ok(None);
    };
    let src = a.last(key).unwrap();
    // as MuJoCo writes it: x / 180 * pi
    let to_rad = |x: f64| {
        if compiler.degree {
            x / 180.0 * std::f64::consts::PI
        } else {
            x
        }
    };
    let q = match key {
        "quat" => {
            let q = a.vec::<4>(key)?.unwrap();
            let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
            if n < mjMINVAL {
                return Err(a.err_attr(key, src, "zero quaternion is not allowed"));
            }
            normalized4(q)
        }
        "axisangle" => {
            let v = a.vec::<4>(key)?.unwrap();
            let axis = Vec3::new(v[0], v[1], v[2]);
            let n = axis.norm();
            if n < mjEPS {
                return Err(a.err_attr(key, src, "axis too small"));
            }
            let axis = axis / n;
            let (s, c) = (0.5 * to_rad(v[3])).sin_cos();
            [c, s * axis.x, s * axis.y, s * axis.z]
        }
        "xyaxes" => {
            let v = a.vec::<6>(key)?.unwrap();
            let mut x = Vec3::new(v[0], v[1], v[2]);
            let mut y = Vec3::new(v[3], v[4], v[5]);
            let nx = x.norm();
            if nx < mjEPS {
                return Err(a.err_attr(key, src, "x axis too small"));
            }
            x /= nx;
            y -= x * x.dot(&y);
            let ny = y.norm();
            if ny < mjEPS {
                return Err(a.err_attr(key, src, "y axis too small or parallel to x"));
            }
            y /= ny;
            let mut z = x.cross(&y);
            z /= z.norm();
            frame_to_quat(&x, &y, &z)
        }
        "zaxis" => {
            let v = Vec3::from(a.vec::<3>(key)?.unwrap());
            let n = v.norm();
            if n < mjEPS {
                return Err(a.err_attr(key, src, "z axis too small"));
            }
            z_to_quat(&(v / n))
        }
        _ => {
            let e = a.vec::<3>(key)?.unwrap();
            let mut q = [1.0, 0.0, 0.0, 0.0];
            for (i, &c) in compiler.eulerseq.iter().enumerate() {
                let (s, cs) = (0.5 * to_rad(e[i])).sin_cos();
                let r = match c.to_ascii_lowercase() {
                    b'x' => [cs, s, 0.0, 0.0],
                    b'y' => [cs, 0.0, s, 0.0],
                    _ => [cs, 0.0, 0.0, s],
                };
                // lowercase: rotations about the moving axes (post-multiply); uppercase: fixed axes
                q = if c.is_ascii_lowercase() {
                    quat_mul(&q, &r)
                } else {
                    quat_mul(&r, &q)
                };
            }
            normalized4(q)
        }
    };
    Ok(Some(q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::quat_to_mat;
    use approx::assert_relative_eq;

    /// z_to_quat rotates z onto the given direction; frame_to_quat inverts quat_to_mat.
    #[test]
    fn rotation_helpers_round_trip() {
        for v in [
            Vec3::new(0.3, -0.4, 0.8),
            Vec3::new(0.0, 0.0, -1.0),
            Vec3::new(1.0, 0.0, 0.0),
        ] {
            let v = v.normalize();
            let q = z_to_quat(&v);
            assert_relative_eq!(quat_to_mat(&q) * Vec3::z(), v, epsilon = 1e-15);
        }
        let q = normalized4([0.3, -0.5, 0.2, 0.7]);
        let r = quat_to_mat(&q);
        let back = frame_to_quat(&r.column(0).into(), &r.column(1).into(), &r.column(2).into());
        let s = if back[0] * q[0] < 0.0 { -1.0 } else { 1.0 };
        for k in 0..4 {
            assert_relative_eq!(s * back[k], q[k], epsilon = 1e-15);
        }
    }
}
