//! Worked answers to the exercises of "Spatial vectors" (statements in `src/ch01.rs`).

use mbd::spatial::{skew, Mat3, Mat6, Motion, Vec3};

/// `rot(E) = [E, 0; 0, E]` and `xlt(r) = [1, 0; -[r]x, 1]` (moving the reference point to `r`
/// changes the linear part from `v_O` to `v_O - r x w`); the transform is their product.
pub fn exercise_1(e: &Mat3, r: &Vec3) -> Mat6 {
    let mut rot = Mat6::zeros();
    rot.fixed_view_mut::<3, 3>(0, 0).copy_from(e);
    rot.fixed_view_mut::<3, 3>(3, 3).copy_from(e);
    let mut shift = Mat6::identity();
    shift.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-skew(r)));
    rot * shift
}

/// Split `v_O` into a part along `w` (the sliding `h w`) and a part across it; the axis point
/// `p` is where the across part vanishes, `v_O + w x p = h w`, which gives
/// `h = w.v_O / |w|^2` and `p = (w x v_O) / |w|^2`.
pub fn exercise_2(m: &Motion) -> (f64, Vec3) {
    let w2 = m.w.norm_squared();
    (m.w.dot(&m.v) / w2, m.w.cross(&m.v) / w2)
}

/// `[ic + m [c]x [c]x^T, m [c]x; m [c]x^T, m 1]`.
pub fn exercise_3(m: f64, c: &Vec3, ic: &Mat3) -> Mat6 {
    let cx = skew(c);
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(ic + cx * cx.transpose() * m));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(cx * m));
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(cx.transpose() * m));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&(Mat3::identity() * m));
    out
}

/// `[[w]x, [v_O]x; 0, [w]x]`, which is `-crm(v)^T`.
pub fn exercise_4(v: &Motion) -> Mat6 {
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&skew(&v.w));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&skew(&v.v));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&skew(&v.w));
    out
}
