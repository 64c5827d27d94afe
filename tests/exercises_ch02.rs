//! Exercises of the chapter "Spatial vectors" (book/src/spatial.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written with plain 3x3 and 6x6
//! matrices and without the library routine it is checked against. Replace the body of one with
//! your own and run `cargo test --test exercises_ch02`.

use mbd::spatial::{axis_angle_mat, skew, xlt, Force, Mat3, Mat6, Motion, SpatialInertia, Vec3, Vec6, Xform};

/// Exercise 1: the 6x6 matrix of the Plücker transform `B_X_A = rot(E) xlt(r)` for motion
/// vectors, built as the product of its two factors: `rot(E) = [E, 0; 0, E]` and
/// `xlt(r) = [1, 0; -[r]x, 1]` (moving the reference point to `r` changes the linear part from
/// `v_O` to `v_O - r x w`).
fn exercise_1_answer(e: &Mat3, r: &Vec3) -> Mat6 {
    let mut rot = Mat6::zeros();
    rot.fixed_view_mut::<3, 3>(0, 0).copy_from(e);
    rot.fixed_view_mut::<3, 3>(3, 3).copy_from(e);
    let mut shift = Mat6::identity();
    shift.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-skew(r)));
    rot * shift
}

/// Exercise 2: the pitch `h` of the screw of a motion vector `[w; v_O]` with `w != 0`, and the
/// point of its screw axis nearest the origin. Split `v_O` into a part along `w` (the sliding
/// `h w`) and a part across it (`w x` something); the axis point `p` is where the across part
/// vanishes: `v_O - w x ... = h w`, which gives `p = (w x v_O) / |w|^2`.
fn exercise_2_answer(m: &Motion) -> (f64, Vec3) {
    let w2 = m.w.norm_squared();
    (m.w.dot(&m.v) / w2, m.w.cross(&m.v) / w2)
}

/// Exercise 3: the 6x6 spatial inertia about the origin of a body with mass `m`, centre of mass
/// `c` and rotational inertia `ic` about the centre of mass:
/// `[ic + m [c]x [c]x^T, m [c]x; m [c]x^T, m 1]`.
fn exercise_3_answer(m: f64, c: &Vec3, ic: &Mat3) -> Mat6 {
    let cx = skew(c);
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(ic + cx * cx.transpose() * m));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(cx * m));
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(cx.transpose() * m));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&(Mat3::identity() * m));
    out
}

/// Exercise 4: the 6x6 matrix `crf(v)` with `crf(v) f = v x* f`, the rate of change of a force
/// vector that is fixed in a body moving with velocity `v = [w; v_O]`:
/// `[[w]x, [v_O]x; 0, [w]x]`.
fn exercise_4_answer(v: &Motion) -> Mat6 {
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&skew(&v.w));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&skew(&v.v));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&skew(&v.w));
    out
}

// ---------------------------------------------------------------------------------------------
// The checks. Nothing below needs changing.

/// Largest absolute entry of a difference.
fn max_abs(x: impl IntoIterator<Item = f64>) -> f64 {
    x.into_iter().fold(0.0, |a, b| a.max(b.abs()))
}

fn samples() -> Vec<(Mat3, Vec3, Motion, Force)> {
    let mut out = Vec::new();
    for k in 0..5 {
        let t = k as f64;
        let axis = Vec3::new(0.3 + t, -1.0 + 0.5 * t, 0.7).normalize();
        let e = axis_angle_mat(&axis, 0.4 + 0.9 * t).transpose();
        let r = Vec3::new(0.5 - 0.3 * t, 1.2, -0.4 + 0.2 * t);
        let m = Motion::new(Vec3::new(0.3, -0.2 + 0.1 * t, 0.9), Vec3::new(-1.0, 0.5 * t, 0.25));
        let f = Force::new(Vec3::new(0.1 * t, 0.7, -0.3), Vec3::new(2.0, -1.0, 0.5 - t));
        out.push((e, r, m, f));
    }
    out
}

#[test]
fn exercise_1_plucker_transform_matrix() {
    for (e, r, m, f) in samples() {
        let x = exercise_1_answer(&e, &r);
        let lib = Xform::new(e, r);
        // The library applies the transform without forming the matrix.
        let err = max_abs((x * m.to_vec6() - lib.apply_motion(&m).to_vec6()).iter().cloned());
        assert!(err < 1e-12, "X m differs from Xform::apply_motion by {err:e}");
        // Its inverse transpose must transform forces (X* = X^-T), so power is unchanged.
        let x_star = x.try_inverse().expect("a Plücker transform is invertible").transpose();
        let err = max_abs((x_star * f.to_vec6() - lib.apply_force(&f).to_vec6()).iter().cloned());
        assert!(err < 1e-12, "X^-T f differs from Xform::apply_force by {err:e}");
        let power = (x * m.to_vec6()).dot(&(x_star * f.to_vec6()));
        assert!((power - m.dot(&f)).abs() < 1e-12, "power changed under the transform");
    }
}

#[test]
fn exercise_2_screw_axis() {
    for (k, (e, r, _, _)) in samples().into_iter().enumerate() {
        let dir: Vec3 = e.column(0).into();
        let pitch = 0.2 * k as f64 - 0.3;
        let rate = 1.5 + k as f64;
        // A screw motion about the axis through r along dir: body points p move with
        // pitch rate dir + rate dir x (p - r); at the origin that is v_O.
        let w = dir * rate;
        let m = Motion::new(w, w * pitch - w.cross(&r));
        let (h, p) = exercise_2_answer(&m);
        assert!((h - pitch).abs() < 1e-12, "pitch {h}, expected {pitch}");
        let nearest = r - dir * dir.dot(&r);
        assert!((p - nearest).norm() < 1e-12, "axis point {p:?}, expected {nearest:?}");
        // Seen from the axis point, the body only slides along the axis: v = h w.
        let on_axis = xlt(p).apply_motion(&m);
        assert!(
            (on_axis.v - w * h).norm() < 1e-12,
            "the point found is not on the screw axis"
        );
    }
}

#[test]
fn exercise_3_spatial_inertia_of_a_point_cloud() {
    // A rigid cloud of point masses: its total mass, centre of mass and rotational inertia about
    // the centre of mass, summed point by point.
    let pts: Vec<(f64, Vec3)> = (0..8)
        .map(|k| {
            let t = k as f64;
            (
                0.3 + 0.1 * t,
                Vec3::new((1.3 * t).sin(), 0.5 * (0.7 * t + 1.0).cos(), 0.2 * t - 0.6),
            )
        })
        .collect();
    let m: f64 = pts.iter().map(|(mk, _)| mk).sum();
    let c = pts.iter().map(|(mk, p)| p * *mk).sum::<Vec3>() / m;
    let ic = pts.iter().fold(Mat3::zeros(), |acc, (mk, p)| {
        let d = p - c;
        acc + (Mat3::identity() * d.norm_squared() - d * d.transpose()) * *mk
    });
    let inertia = exercise_3_answer(m, &c, &ic);
    for (_, _, v, _) in samples() {
        // Momentum about the origin and kinetic energy of the cloud, point by point.
        let (mut lin, mut ang, mut ke) = (Vec3::zeros(), Vec3::zeros(), 0.0);
        for (mk, p) in &pts {
            let vp = v.v + v.w.cross(p);
            lin += vp * *mk;
            ang += p.cross(&(vp * *mk));
            ke += 0.5 * mk * vp.norm_squared();
        }
        let h: Vec6 = inertia * v.to_vec6();
        let expected = Force::new(ang, lin).to_vec6();
        assert!(
            max_abs((h - expected).iter().cloned()) < 1e-12,
            "I v is not the cloud's momentum"
        );
        let ke_answer = 0.5 * v.to_vec6().dot(&h);
        assert!(
            (ke_answer - ke).abs() < 1e-12,
            "kinetic energy {ke_answer}, expected {ke}"
        );
    }
    let lib = SpatialInertia::from_mass_com_inertia(m, c, ic).to_matrix();
    assert!(
        max_abs((inertia - lib).iter().cloned()) < 1e-12,
        "differs from SpatialInertia"
    );
}

#[test]
fn exercise_4_force_cross_product() {
    let dt = 1e-5;
    for (_, _, v, f) in samples() {
        let crf = exercise_4_answer(&v);
        // A frame B moves with the body; at t = 0 it coincides with A. To first order its axes
        // turn as exp(t [w]x) and its origin moves with v_O. A force fixed in B, seen from A:
        // f_A(t) = A_X*_B(t) f_B, whose derivative at t = 0 must be v x* f.
        let f_a = |t: f64| {
            let rot = axis_angle_mat(&v.w.normalize(), t * v.w.norm());
            let b_x_a = Xform::new(rot.transpose(), v.v * t);
            b_x_a.inv_apply_force(&f).to_vec6()
        };
        let rate = (f_a(dt) - f_a(-dt)) / (2.0 * dt);
        let err = max_abs((crf * f.to_vec6() - rate).iter().cloned());
        assert!(
            err < 1e-8,
            "crf(v) f differs from the finite-difference rate by {err:e}"
        );
        let err = max_abs((crf * f.to_vec6() - v.cross_force(&f).to_vec6()).iter().cloned());
        assert!(err < 1e-12, "crf(v) f differs from Motion::cross_force by {err:e}");
        // Power stays invariant: crf(v) = -crm(v)^T.
        let err = max_abs((crf + v.crm().transpose()).iter().cloned());
        assert!(err < 1e-14, "crf(v) is not -crm(v)^T ({err:e})");
    }
}
