//! A partial submission: exercises 1 and 2 right, 3 wrong (the parallel-axis term is missing),
//! 4 not attempted.

use mbd::spatial::{skew, Mat3, Mat6, Motion, Vec3};

pub fn exercise_1(e: &Mat3, r: &Vec3) -> Mat6 {
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(e);
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(e);
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-e * skew(r)));
    out
}

pub fn exercise_2(m: &Motion) -> (f64, Vec3) {
    let w2 = m.w.norm_squared();
    (m.w.dot(&m.v) / w2, m.w.cross(&m.v) / w2)
}

pub fn exercise_3(m: f64, c: &Vec3, ic: &Mat3) -> Mat6 {
    let cx = skew(c);
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(ic);
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(cx * m));
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(cx.transpose() * m));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&(Mat3::identity() * m));
    out
}

pub fn exercise_4(v: &Motion) -> Mat6 {
    let _ = v;
    todo!()
}
