//! The contact frame: MuJoCo's `mju_makeFrame` rule (spec section 9).

use crate::spatial::{Mat3, Vec3};

// ANCHOR: make_frame
/// MuJoCo's `mju_makeFrame`: the contact frame whose first row is the unit normal `n` and whose
/// second row is the tangent `hint` made orthogonal to `n`. When the hint is shorter than 1/2
/// (|hint|^2 < 0.25; every pair but plane-capsule passes zero) the tangent starts from the world
/// y axis, or from the world z axis when `n` is within 60 degrees of y (|n_y| >= 1/2). The third
/// row is `n x t1`, so the frame is right-handed and orthonormal.
///
/// `n` need not be unit; it must not be zero (the callers never pass a zero normal).
pub fn make_frame(n: &Vec3, hint: &Vec3) -> Mat3 {
    let x = n.normalize();
    let start = if hint.norm_squared() >= 0.25 {
        *hint
    } else if x.y < 0.5 && x.y > -0.5 {
        Vec3::y()
    } else {
        Vec3::z()
    };
    let y = (start - x * x.dot(&start)).normalize();
    let z = x.cross(&y);
    Mat3::from_rows(&[x.transpose(), y.transpose(), z.transpose()])
}
// ANCHOR_END: make_frame

/// [`make_frame`] with no tangent hint (every pair except plane-capsule).
pub fn frame_from_normal(n: &Vec3) -> Mat3 {
    make_frame(n, &Vec3::zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tangent_starts_from_y_or_z_or_the_hint() {
        let f = frame_from_normal(&Vec3::new(0.0, 0.0, 2.0));
        assert_eq!(f.row(1).transpose(), Vec3::y());
        let f = frame_from_normal(&Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(f.row(1).transpose(), Vec3::z());
        let f = make_frame(&Vec3::z(), &Vec3::new(1.0, 0.0, 0.3));
        assert_eq!(f.row(1).transpose(), Vec3::x());
        assert!((f * f.transpose() - Mat3::identity()).norm() < 1e-15);
        assert!((f.determinant() - 1.0).abs() < 1e-15);
    }
}
