//! A submission that does not compile (a type error in exercise 2).

use mbd::spatial::{Mat3, Mat6, Motion, Vec3};

pub fn exercise_1(e: &Mat3, r: &Vec3) -> Mat6 {
    let _ = (e, r);
    todo!()
}

pub fn exercise_2(m: &Motion) -> (f64, Vec3) {
    let w2 = m.w.norm_squared();
    (m.w.dot(&m.v) / w2, m.w.cross(&m.v) / w2, 0.0)
}

pub fn exercise_3(m: f64, c: &Vec3, ic: &Mat3) -> Mat6 {
    let _ = (m, c, ic);
    todo!()
}

pub fn exercise_4(v: &Motion) -> Mat6 {
    let _ = v;
    todo!()
}
