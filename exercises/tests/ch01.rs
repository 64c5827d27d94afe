//! Grader of the exercises of "Spatial vectors" (`src/ch01.rs`): `cargo test -p exercises --test ch01`.

use exercises::ch01;
use exercises::grade::{close, close_mat, ensure, run, Check, Exercise, Rng};
use mbd::spatial::{axis_angle_mat, xlt, Force, Mat3, Mat6, Motion, SpatialInertia, Vec3, Vec6, Xform};

fn random_motion(rng: &mut Rng) -> Motion {
    Motion::new(rng.vec3(2.0), rng.vec3(2.0))
}

fn random_force(rng: &mut Rng) -> Force {
    Force::new(rng.vec3(2.0), rng.vec3(2.0))
}

fn plucker_with(rng: &mut Rng, answer: fn(&Mat3, &Vec3) -> Mat6) -> Check {
    for s in 0..8 {
        let (e, r) = (rng.rotation(), rng.vec3(1.5));
        let (m, f) = (random_motion(rng), random_force(rng));
        let x = answer(&e, &r);
        let lib = Xform::new(e, r);
        close_mat(
            &(x * m.to_vec6()),
            &lib.apply_motion(&m).to_vec6(),
            1e-12,
            format_args!("sample {s}: X m (against Xform::apply_motion)"),
        )?;
        let inv = x.try_inverse();
        ensure(inv.is_some(), format_args!("sample {s}: your matrix is not invertible"))?;
        let x_star = inv.unwrap().transpose();
        close_mat(
            &(x_star * f.to_vec6()),
            &lib.apply_force(&f).to_vec6(),
            1e-12,
            format_args!("sample {s}: X^-T f (against Xform::apply_force)"),
        )?;
        close(
            (x * m.to_vec6()).dot(&(x_star * f.to_vec6())),
            m.dot(&f),
            1e-12,
            format_args!("sample {s}: power m . f after the transform"),
        )?;
    }
    Ok(())
}

fn plucker(rng: &mut Rng) -> Check {
    plucker_with(rng, ch01::exercise_1)
}

fn screw_with(rng: &mut Rng, answer: fn(&Motion) -> (f64, Vec3)) -> Check {
    for s in 0..8 {
        let dir = rng.unit3();
        let through = rng.vec3(1.5);
        let pitch = rng.uniform(-1.0, 1.0);
        let rate = rng.uniform(0.5, 3.0) * if rng.uniform(0.0, 1.0) < 0.5 { -1.0 } else { 1.0 };
        // A screw motion about the axis through `through` along `dir`.
        let w = dir * rate;
        let m = Motion::new(w, w * pitch - w.cross(&through));
        let (h, p) = answer(&m);
        close(h, pitch, 1e-12, format_args!("sample {s}: the pitch"))?;
        let nearest = through - dir * dir.dot(&through);
        close_mat(&p, &nearest, 1e-12, format_args!("sample {s}: the axis point"))?;
        let on_axis = xlt(p).apply_motion(&m);
        close_mat(
            &on_axis.v,
            &(w * h),
            1e-12,
            format_args!("sample {s}: seen from your point the body should only slide (v = h w)"),
        )?;
    }
    Ok(())
}

fn screw(rng: &mut Rng) -> Check {
    screw_with(rng, ch01::exercise_2)
}

fn point_cloud_with(rng: &mut Rng, answer: fn(f64, &Vec3, &Mat3) -> Mat6) -> Check {
    for s in 0..4 {
        let pts: Vec<(f64, Vec3)> = (0..8).map(|_| (rng.uniform(0.2, 1.5), rng.vec3(1.0))).collect();
        let m: f64 = pts.iter().map(|(mk, _)| mk).sum();
        let c = pts.iter().map(|(mk, p)| p * *mk).sum::<Vec3>() / m;
        let ic = pts.iter().fold(Mat3::zeros(), |acc, (mk, p)| {
            let d = p - c;
            acc + (Mat3::identity() * d.norm_squared() - d * d.transpose()) * *mk
        });
        let inertia = answer(m, &c, &ic);
        for k in 0..4 {
            let v = random_motion(rng);
            let (mut lin, mut ang, mut ke) = (Vec3::zeros(), Vec3::zeros(), 0.0);
            for (mk, p) in &pts {
                let vp = v.v + v.w.cross(p);
                lin += vp * *mk;
                ang += p.cross(&(vp * *mk));
                ke += 0.5 * mk * vp.norm_squared();
            }
            let h: Vec6 = inertia * v.to_vec6();
            close_mat(
                &h,
                &Force::new(ang, lin).to_vec6(),
                1e-12,
                format_args!("cloud {s}, velocity {k}: I v against the points' momentum"),
            )?;
            close(
                0.5 * v.to_vec6().dot(&h),
                ke,
                1e-12,
                format_args!("cloud {s}, velocity {k}: kinetic energy"),
            )?;
        }
        let lib = SpatialInertia::from_mass_com_inertia(m, c, ic).to_matrix();
        close_mat(&inertia, &lib, 1e-12, format_args!("cloud {s}: against SpatialInertia"))?;
    }
    Ok(())
}

fn point_cloud(rng: &mut Rng) -> Check {
    point_cloud_with(rng, ch01::exercise_3)
}

fn force_cross_with(rng: &mut Rng, answer: fn(&Motion) -> Mat6) -> Check {
    let dt = 1e-5;
    for s in 0..8 {
        let (v, f) = (random_motion(rng), random_force(rng));
        let crf = answer(&v);
        // A frame B moving with the body coincides with A at t = 0; a force fixed in B, seen from
        // A, changes at the rate v x* f.
        let f_a = |t: f64| {
            let rot = axis_angle_mat(&v.w.normalize(), t * v.w.norm());
            let b_x_a = Xform::new(rot.transpose(), v.v * t);
            b_x_a.inv_apply_force(&f).to_vec6()
        };
        let rate = (f_a(dt) - f_a(-dt)) / (2.0 * dt);
        close_mat(
            &(crf * f.to_vec6()),
            &rate,
            1e-8,
            format_args!("sample {s}: crf(v) f against the finite-difference rate"),
        )?;
        close_mat(
            &(crf * f.to_vec6()),
            &v.cross_force(&f).to_vec6(),
            1e-12,
            format_args!("sample {s}: crf(v) f against Motion::cross_force"),
        )?;
        close_mat(
            &crf,
            &(-v.crm().transpose()),
            1e-14,
            format_args!("sample {s}: crf(v) = -crm(v)^T"),
        )?;
    }
    Ok(())
}

fn force_cross(rng: &mut Rng) -> Check {
    force_cross_with(rng, ch01::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch01",
        "Spatial vectors",
        2,
        &[
            Exercise {
                number: 1,
                title: "The Plücker matrix",
                hint: "rot(E) puts E on both diagonal blocks; xlt(r) has -[r]x in the lower-left block; multiply in that order",
                check: plucker,
            },
            Exercise {
                number: 2,
                title: "Find the screw",
                hint: "split v_O into a part along w and a part across it; the axis point p satisfies v_O + w x p = h w",
                check: screw,
            },
            Exercise {
                number: 3,
                title: "Inertia of a point cloud",
                hint: "the upper-left block is the rotational inertia about the origin (parallel-axis theorem); the off-diagonal blocks are m [c]x and its transpose",
                check: point_cloud,
            },
            Exercise {
                number: 4,
                title: "The force cross product",
                hint: "crf(v) = -crm(v)^T: write crm(v) = [[w]x, 0; [v_O]x, [w]x] first",
                check: force_cross,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them, naming what is
/// wrong (run by `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_naming;
    use mbd::spatial::skew;

    fn blocks(a: Mat3, b: Mat3, c: Mat3, d: Mat3) -> Mat6 {
        let mut out = Mat6::zeros();
        out.fixed_view_mut::<3, 3>(0, 0).copy_from(&a);
        out.fixed_view_mut::<3, 3>(0, 3).copy_from(&b);
        out.fixed_view_mut::<3, 3>(3, 0).copy_from(&c);
        out.fixed_view_mut::<3, 3>(3, 3).copy_from(&d);
        out
    }

    #[test]
    fn the_factors_in_the_wrong_order_fail() {
        assert!(fails_naming(0..3, "X m", |rng| plucker_with(rng, |e, r| {
            let rot = blocks(*e, Mat3::zeros(), Mat3::zeros(), *e);
            let shift = blocks(Mat3::identity(), Mat3::zeros(), -skew(r), Mat3::identity());
            shift * rot // should be rot * shift
        })));
    }

    #[test]
    fn the_axis_point_with_its_sign_flipped_fails() {
        assert!(fails_naming(0..3, "the axis point", |rng| screw_with(rng, |m| {
            let w2 = m.w.norm_squared();
            (m.w.dot(&m.v) / w2, m.v.cross(&m.w) / w2) // should be w x v_O
        })));
    }

    #[test]
    fn inertia_without_the_parallel_axis_term_fails() {
        assert!(fails_naming(0..3, "I v", |rng| point_cloud_with(rng, |m, c, ic| {
            let cx = skew(c);
            blocks(*ic, cx * m, cx.transpose() * m, Mat3::identity() * m) // forgot m [c]x [c]x^T
        })));
    }

    #[test]
    fn crm_instead_of_crf_fails() {
        assert!(fails_naming(0..3, "crf(v) f", |rng| force_cross_with(rng, |v| {
            v.crm() // should be -crm(v)^T
        })));
    }
}
