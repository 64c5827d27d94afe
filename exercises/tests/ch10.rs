//! Grader of the exercises of "Collision detection" (`src/ch10.rs`):
//! `cargo test -p exercises --test ch10`.
//!
//! Each check is written against an implementation passed in (`*_with`), so that
//! `tests/wrong_answers.rs` can feed it deliberately wrong answers (the tests at the bottom).

use exercises::ch10;
use exercises::grade::{close, close_all, ensure, run, Check, Exercise, Rng};
use exercises::types::ContactProps;
use mbd::collision::convex::{ConvexShape, Shape};
use mbd::collision::{collide, make_frame, GeomPose};
use mbd::model::GeomType;
use mbd::mujoco::collision::contact_param;
use mbd::spatial::Vec3;

fn v3(v: &Vec3) -> [f64; 3] {
    [v.x, v.y, v.z]
}

fn pose(rng: &mut Rng, r: f64) -> GeomPose {
    GeomPose {
        pos: rng.vec3(r),
        rot: rng.rotation(),
    }
}

fn frame_with(rng: &mut Rng, f: impl Fn(Vec3, Vec3) -> [Vec3; 3]) -> Check {
    for s in 0..40 {
        let normal = rng.unit3() * rng.uniform(0.2, 3.0);
        // no hint, a hint too short to be used, or a usable one
        let hint = match s % 3 {
            0 => Vec3::zeros(),
            1 => rng.unit3() * rng.uniform(0.0, 0.45),
            _ => rng.unit3() * rng.uniform(0.6, 2.0),
        };
        if (hint.normalize().cross(&normal.normalize())).norm() < 0.05 {
            continue; // a hint (nearly) along the normal gives no tangent
        }
        let ours = f(normal, hint);
        let lib = make_frame(&normal, &hint);
        for (k, row) in ours.iter().enumerate() {
            close_all(
                &v3(row),
                &[lib[(k, 0)], lib[(k, 1)], lib[(k, 2)]],
                1e-12,
                format_args!("sample {s}: row {k} of the frame against the library's"),
            )?;
            close(
                row.norm(),
                1.0,
                1e-12,
                format_args!("sample {s}: the length of row {k}"),
            )?;
        }
    }
    Ok(())
}

fn frame_check(rng: &mut Rng) -> Check {
    frame_with(rng, ch10::exercise_1)
}

type SphereCapsule = fn(Vec3, f64, Vec3, Vec3, f64, f64, f64) -> Option<(f64, Vec3, Vec3)>;

fn sphere_capsule_with(rng: &mut Rng, f: SphereCapsule) -> Check {
    let mut found = 0;
    for s in 0..60 {
        let cap = pose(rng, 1.0);
        let (rc, h) = (rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.5));
        let r = rng.uniform(0.05, 0.3);
        let margin = if s % 2 == 0 { 0.0 } else { rng.uniform(0.0, 0.1) };
        // the sphere's centre beside the capsule, some beyond its ends, some inside
        let local = Vec3::new(
            rng.uniform(-0.6, 0.6),
            rng.uniform(-0.6, 0.6),
            rng.uniform(-1.5, 1.5) * h,
        );
        let c = cap.pos + cap.rot * local;
        let axis = cap.rot.column(2).into_owned();
        let sphere = GeomPose {
            pos: c,
            rot: rng.rotation(),
        };
        let mut out = Vec::new();
        collide(
            (GeomType::Sphere, &[r, 0.0, 0.0], &sphere),
            (GeomType::Capsule, &[rc, h, 0.0], &cap),
            margin,
            &mut out,
        );
        match (f(c, r, cap.pos, axis, rc, h, margin), out.first()) {
            (None, None) => {}
            (Some(_), None) => return Err(format!("sample {s}: a contact where the shapes are beyond the margin")),
            (None, Some(_)) => return Err(format!("sample {s}: no contact where the shapes are within the margin")),
            (Some((dist, n, p)), Some(lib)) => {
                close(dist, lib.dist, 1e-12, format_args!("sample {s}: dist"))?;
                close_all(
                    &v3(&n),
                    &v3(&lib.normal()),
                    1e-12,
                    format_args!("sample {s}: the normal"),
                )?;
                close_all(&v3(&p), &v3(&lib.pos), 1e-12, format_args!("sample {s}: pos"))?;
                found += 1;
            }
        }
    }
    // the grader's own sanity: the samples must exercise contacts
    ensure(found >= 10, "grader: too few contacts among the samples")
}

fn sphere_capsule_check(rng: &mut Rng) -> Check {
    sphere_capsule_with(rng, ch10::exercise_2)
}

fn props(rng: &mut Rng) -> ContactProps {
    let d0 = rng.uniform(0.5, 0.95);
    ContactProps {
        priority: rng.int(0, 2) as i32,
        condim: [1, 3, 4, 6][rng.int(0, 3)],
        friction: [
            rng.uniform(0.1, 1.5),
            rng.uniform(0.001, 0.05),
            rng.uniform(0.0001, 0.005),
        ],
        solref: if rng.uniform(0.0, 1.0) < 0.3 {
            [-rng.uniform(100.0, 5000.0), -rng.uniform(1.0, 100.0)]
        } else {
            [rng.uniform(0.005, 0.05), rng.uniform(0.5, 2.0)]
        },
        solimp: [
            d0,
            rng.uniform(d0, 0.999),
            rng.uniform(0.0005, 0.02),
            rng.uniform(0.1, 0.9),
            rng.uniform(1.0, 4.0),
        ],
        solmix: if rng.uniform(0.0, 1.0) < 0.25 {
            0.0
        } else {
            rng.uniform(0.1, 5.0)
        },
    }
}

fn geom_xml(p: &ContactProps, x: f64) -> String {
    let j = |v: &[f64]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(" ");
    format!(
        r#"<geom type="sphere" size="0.1" pos="{x} 0 0" priority="{}" condim="{}" friction="{}" solref="{}" solimp="{}" solmix="{:?}"/>"#,
        p.priority,
        p.condim,
        j(&p.friction),
        j(&p.solref),
        j(&p.solimp),
        p.solmix
    )
}

type Mix = fn(ContactProps, ContactProps) -> (usize, [f64; 5], [f64; 2], [f64; 5]);

fn mixing_with(rng: &mut Rng, f: Mix) -> Check {
    for s in 0..40 {
        let (a, b) = (props(rng), props(rng));
        let xml = format!(
            "<mujoco><worldbody>{}{}</worldbody></mujoco>",
            geom_xml(&a, 0.0),
            geom_xml(&b, 1.0)
        );
        let model = mbd::mjcf::load_str(&xml)
            .map_err(|e| format!("grader: the model of sample {s}: {e}"))?
            .model;
        let lib = contact_param(&model, 0, 1);
        let (dim, fr, sr, si) = f(a, b);
        ensure(dim == lib.dim, format_args!("sample {s}: condim"))?;
        let tol = |x: &[f64]| 1e-14 * x.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        close_all(
            &fr,
            &lib.friction,
            tol(&lib.friction),
            format_args!("sample {s}: friction"),
        )?;
        close_all(&sr, &lib.solref, tol(&lib.solref), format_args!("sample {s}: solref"))?;
        close_all(&si, &lib.solimp, tol(&lib.solimp), format_args!("sample {s}: solimp"))?;
    }
    Ok(())
}

fn mixing_check(rng: &mut Rng) -> Check {
    mixing_with(rng, ch10::exercise_3)
}

fn support_with(rng: &mut Rng, f: fn(f64, f64, &GeomPose, &Vec3) -> Vec3) -> Check {
    for s in 0..10 {
        let (r, h) = (rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5));
        let pose = pose(rng, 1.0);
        let shape = ConvexShape {
            shape: Shape::Cylinder(r, h),
            pose,
        };
        // brute force: the farthest of many points of the rims
        let mut rims = Vec::new();
        for i in 0..720 {
            let t = 2.0 * std::f64::consts::PI * i as f64 / 720.0;
            for z in [-h, h] {
                rims.push(pose.pos + pose.rot * Vec3::new(r * t.cos(), r * t.sin(), z));
            }
        }
        for k in 0..20 {
            let d = rng.unit3() * rng.uniform(0.5, 2.0);
            let ours = f(r, h, &pose, &d);
            let brute = rims.iter().map(|p| p.dot(&d)).fold(f64::NEG_INFINITY, f64::max);
            let reach = ours.dot(&d);
            ensure(
                reach >= brute - 1e-12 && reach <= brute + 1e-4 * d.norm(),
                format_args!("pose {s}, direction {k}: the point is not the farthest of the cylinder's rim points"),
            )?;
            close_all(
                &v3(&ours),
                &v3(&shape.support(&d)),
                1e-12,
                format_args!("pose {s}, direction {k}: the support point against the library's"),
            )?;
        }
    }
    Ok(())
}

fn support_check(rng: &mut Rng) -> Check {
    support_with(rng, ch10::exercise_4)
}

fn distance_with(rng: &mut Rng, f: fn(&ConvexShape, &ConvexShape, usize) -> f64) -> Check {
    for s in 0..4 {
        let (ra, rb) = (
            Vec3::new(rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.3)),
            Vec3::new(rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.3)),
        );
        let a = ConvexShape {
            shape: Shape::Ellipsoid(ra),
            pose: pose(rng, 0.2),
        };
        // overlapping in about half the samples
        let reach = ra.max() + rb.max();
        let b = ConvexShape {
            shape: Shape::Ellipsoid(rb),
            pose: GeomPose {
                pos: a.pose.pos + rng.unit3() * rng.uniform(0.5, 1.5) * reach,
                rot: rng.rotation(),
            },
        };
        let est = f(&a, &b, 20_000);
        let mut out = Vec::new();
        collide(
            (GeomType::Ellipsoid, &v3(&ra), &a.pose),
            (GeomType::Ellipsoid, &v3(&rb), &b.pose),
            10.0,
            &mut out,
        );
        let exact = out.first().ok_or("grader: GJK/EPA found no contact")?.dist;
        ensure(est.is_finite(), format_args!("pair {s}: the estimate is not finite"))?;
        ensure(
            est <= exact + 1e-9,
            format_args!("pair {s}: the estimate is above GJK/EPA's signed distance (it cannot be)"),
        )?;
        ensure(
            exact - est < 2e-3,
            format_args!("pair {s}: the estimate is more than 2e-3 below GJK/EPA's signed distance"),
        )?;
    }
    Ok(())
}

fn distance_check(rng: &mut Rng) -> Check {
    distance_with(rng, ch10::exercise_5)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch10",
        "Collision detection",
        10,
        &[
            Exercise {
                number: 1,
                title: "The contact frame",
                hint: "normalize the normal first; remove the normal's component from the start vector, then normalize; t2 = n x t1",
                check: frame_check,
            },
            Exercise {
                number: 2,
                title: "Sphere against capsule",
                hint: "clamp the projection of the sphere's centre on the axis to [-h, h]: that point is a sphere of radius rc",
                check: sphere_capsule_check,
            },
            Exercise {
                number: 3,
                title: "Mixing",
                hint: "priority first; then the larger condim and frictions, solmix weights for solref/solimp (0.5 when both vanish), and the entry-wise minimum for direct solref",
                check: mixing_check,
            },
            Exercise {
                number: 4,
                title: "A support function",
                hint: "turn d into the cylinder's frame, pick the rim point along d's radial part and the cap by the sign of d_z, turn back and add the centre",
                check: support_check,
            },
            Exercise {
                number: 5,
                title: "Distance from support functions alone",
                hint: "h_S(u) = u . support_S(u); spread the directions evenly (a Fibonacci lattice) and take minus the minimum of h_A(u) + h_B(-u)",
                check: distance_check,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them (run by
/// `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_on;

    #[test]
    fn a_frame_from_an_unnormalized_normal_fails() {
        assert!(fails_on(0..3, |rng| frame_with(rng, |n, hint| {
            let t = make_frame(&n, &hint).row(1).transpose();
            [n, t, n.cross(&t)]
        })));
    }

    #[test]
    fn a_capsule_without_its_ends_fails() {
        assert!(fails_on(0..3, |rng| sphere_capsule_with(
            rng,
            |c, r, p, a, rc, _h, margin| {
                let q = p + a * a.dot(&(c - p)); // not clamped: an infinite cylinder
                let d = q - c;
                let dist = d.norm() - r - rc;
                (dist <= margin).then(|| (dist, d.normalize(), c + d.normalize() * (r + dist / 2.0)))
            }
        )));
    }

    #[test]
    fn swapped_mixing_weights_fail() {
        assert!(fails_on(0..3, |rng| mixing_with(rng, |a, b| {
            let mut out = ch10_reference(a, b);
            if a.priority == b.priority && a.solmix > 0.0 && b.solmix > 0.0 {
                let mix = b.solmix / (a.solmix + b.solmix); // the weights swapped
                out.3 = [0, 1, 2, 3, 4].map(|i| mix * a.solimp[i] + (1.0 - mix) * b.solimp[i]);
            }
            out
        })));
    }

    /// The right mixing through the library, to alter one part of it.
    fn ch10_reference(a: ContactProps, b: ContactProps) -> (usize, [f64; 5], [f64; 2], [f64; 5]) {
        let xml = format!(
            "<mujoco><worldbody>{}{}</worldbody></mujoco>",
            geom_xml(&a, 0.0),
            geom_xml(&b, 1.0)
        );
        let p = contact_param(&mbd::mjcf::load_str(&xml).unwrap().model, 0, 1);
        (p.dim, p.friction, p.solref, p.solimp)
    }

    #[test]
    fn a_support_left_in_the_geom_frame_fails() {
        assert!(fails_on(0..3, |rng| support_with(rng, |r, h, pose, d| {
            let radial = (d.x * d.x + d.y * d.y).sqrt();
            pose.pos + Vec3::new(r * d.x / radial, r * d.y / radial, h * d.z.signum())
        })));
    }

    #[test]
    fn the_largest_instead_of_the_smallest_overlap_fails() {
        assert!(fails_on(0..3, |rng| distance_with(rng, |a, b, n| {
            let largest = (0..n)
                .map(|i| {
                    let z = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
                    let t = 2.399_963 * i as f64;
                    let u = Vec3::new((1.0 - z * z).sqrt() * t.cos(), (1.0 - z * z).sqrt() * t.sin(), z);
                    u.dot(&a.support(&u)) + (-u).dot(&b.support(&-u))
                })
                .fold(f64::NEG_INFINITY, f64::max);
            -largest
        })));
    }
}
