//! Exercises of the chapter "Collision detection" (book/src/collision.md).
//!
//! Each `exercise_k_answer` holds a worked reference answer, written without the library routine
//! it is checked against. Replace the body of one with your own and run
//! `cargo test --test exercises_collision`.

use mbd::collision::convex::{gjk, ConvexShape, Shape};
use mbd::collision::{collide, make_frame, GeomPose};
use mbd::model::{Geom, GeomType, SolverParams};
use mbd::mujoco::collision::contact_param;
use mbd::spatial::{axis_angle_mat, Mat3, Vec3};
use serde::Deserialize;

/// Exercise 1 (`mju_makeFrame`): rows normal, tangent 1, tangent 2. The tangent starts from the
/// hint when |hint|^2 >= 1/4, else from y (or z when |n_y| >= 1/2); it is made orthogonal to
/// the unit normal and normalized; the third row is n x t1.
fn exercise_1_answer(normal: Vec3, hint: Vec3) -> [Vec3; 3] {
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

/// Exercise 2: sphere (centre `c`, radius `r`) against capsule (centre `p`, unit axis `a`,
/// radius `rc`, half-length `h`): returns (dist, normal from sphere to capsule, pos), or None
/// beyond `margin`.
fn exercise_2_answer(c: Vec3, r: f64, p: Vec3, a: Vec3, rc: f64, h: f64, margin: f64) -> Option<(f64, Vec3, Vec3)> {
    let x = a.dot(&(c - p)).clamp(-h, h);
    let q = p + a * x; // nearest point of the segment
    let d = q - c;
    let len = d.norm();
    let dist = len - r - rc;
    if dist > margin {
        return None;
    }
    let n = d / len;
    Some((dist, n, c + n * (r + dist / 2.0)))
}

/// What exercise 3 mixes: one geom's contact properties.
#[derive(Clone, Copy)]
struct Props {
    priority: i32,
    condim: usize,
    friction: [f64; 3],
    solref: [f64; 2],
    solimp: [f64; 5],
    solmix: f64,
}

/// Exercise 3 (`mj_contactParam`): (condim, friction[5], solref, solimp).
fn exercise_3_answer(a: Props, b: Props) -> (usize, [f64; 5], [f64; 2], [f64; 5]) {
    let expand = |f: [f64; 3]| [f[0], f[0], f[1], f[2], f[2]];
    if a.priority != b.priority {
        let w = if a.priority > b.priority { a } else { b };
        return (w.condim, expand(w.friction), w.solref, w.solimp);
    }
    let small = 1e-15;
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

/// Exercise 4: the support point of a cylinder (radius `r`, half-length `h` along its z axis) at
/// pose `p` in world direction `d`: the rim point in the direction of d's radial part, on the
/// disk d points to.
fn exercise_4_answer(r: f64, h: f64, p: &GeomPose, d: &Vec3) -> Vec3 {
    let l = p.rot.transpose() * d;
    let radial = (l.x * l.x + l.y * l.y).sqrt();
    let (x, y) = if radial > 1e-15 {
        (r * l.x / radial, r * l.y / radial)
    } else {
        (0.0, 0.0)
    };
    let z = if l.z >= 0.0 { h } else { -h };
    p.pos + p.rot * Vec3::new(x, y, z)
}

/// Exercise 5: the signed distance of two shapes from their support functions alone,
/// `-min_u (h_A(u) + h_B(-u))` over `n` directions spread on the sphere (a Fibonacci lattice).
fn exercise_5_answer(a: &ConvexShape, b: &ConvexShape, n: usize) -> f64 {
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

// ---------------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct Fixture {
    pairs: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    pair: [String; 2],
    geoms: Vec<FGeom>,
    contacts: Vec<FContact>,
}

#[derive(Deserialize)]
struct FGeom {
    #[serde(rename = "type")]
    gtype: String,
    size: [f64; 3],
    pos: [f64; 3],
    mat: [f64; 9],
    margin: f64,
}

#[derive(Deserialize)]
struct FContact {
    pos: [f64; 3],
    frame: [f64; 9],
    dist: f64,
}

fn fixture() -> Fixture {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/collision.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn exercise_1_make_frame() {
    let mut checked = 0;
    for case in fixture().pairs {
        for c in &case.contacts {
            let f = Mat3::from_row_slice(&c.frame);
            let n = f.row(0).transpose();
            // plane-capsule frames start from the capsule axis: pass it as the hint
            let hint = if case.pair == ["plane", "capsule"] {
                let g = case.geoms.iter().find(|g| g.gtype == "capsule").unwrap();
                Vec3::new(g.mat[2], g.mat[5], g.mat[8])
            } else {
                Vec3::zeros()
            };
            let rows = exercise_1_answer(n, hint);
            for k in 0..3 {
                assert!(
                    (rows[k] - f.row(k).transpose()).amax() < 1e-12,
                    "{:?}: row {k}",
                    case.pair
                );
            }
            assert!((make_frame(&n, &hint) - f).amax() < 1e-12);
            checked += 1;
        }
    }
    assert!(checked > 300);
}

#[test]
fn exercise_2_sphere_capsule() {
    let mut checked = 0;
    for case in fixture().pairs.iter().filter(|c| c.pair == ["sphere", "capsule"]) {
        let s = case.geoms.iter().find(|g| g.gtype == "sphere").unwrap();
        let k = case.geoms.iter().find(|g| g.gtype == "capsule").unwrap();
        let margin = s.margin + k.margin;
        let got = exercise_2_answer(
            Vec3::from_column_slice(&s.pos),
            s.size[0],
            Vec3::from_column_slice(&k.pos),
            Vec3::new(k.mat[2], k.mat[5], k.mat[8]),
            k.size[0],
            k.size[1],
            margin,
        );
        match (got, case.contacts.first()) {
            (None, None) => {}
            (Some((dist, n, pos)), Some(f)) => {
                assert!((dist - f.dist).abs() < 1e-12);
                assert!((n - Vec3::new(f.frame[0], f.frame[1], f.frame[2])).amax() < 1e-12);
                assert!((pos - Vec3::from_column_slice(&f.pos)).amax() < 1e-12);
                checked += 1;
            }
            (a, b) => panic!("contact found by one side only: ours {a:?}, MuJoCo {}", b.is_some()),
        }
    }
    assert!(checked >= 10);
}

fn geom_of(p: &Props) -> Geom {
    Geom {
        name: String::new(),
        body: 0,
        gtype: GeomType::Sphere,
        size: [0.1, 0.0, 0.0],
        pos: Vec3::zeros(),
        quat: [1.0, 0.0, 0.0, 0.0],
        friction: p.friction,
        condim: p.condim,
        contype: 1,
        conaffinity: 1,
        margin: 0.0,
        gap: 0.0,
        params: SolverParams {
            solref: p.solref,
            solimp: p.solimp,
        },
        solmix: p.solmix,
        priority: p.priority,
    }
}

#[test]
fn exercise_3_mixing() {
    let a = Props {
        priority: 0,
        condim: 3,
        friction: [0.8, 0.01, 0.001],
        solref: [0.02, 1.0],
        solimp: [0.9, 0.95, 0.001, 0.5, 2.0],
        solmix: 1.0,
    };
    let b = Props {
        priority: 0,
        condim: 4,
        friction: [0.5, 0.02, 0.0001],
        solref: [0.04, 0.7],
        solimp: [0.8, 0.99, 0.002, 0.3, 3.0],
        solmix: 3.0,
    };
    let variants = [
        (a, b),
        (Props { priority: 1, ..a }, b),
        (a, Props { priority: 2, ..b }),
        (Props { solmix: 0.0, ..a }, Props { solmix: 0.0, ..b }),
        (Props { solmix: 0.0, ..a }, b),
        (a, Props { solmix: 0.0, ..b }),
        (
            Props {
                solref: [-1000.0, -10.0],
                ..a
            },
            Props {
                solref: [-500.0, -30.0],
                ..b
            },
        ),
    ];
    for (x, y) in variants {
        let (dim, fr, sr, si) = exercise_3_answer(x, y);
        let mut model = mbd::model::canned::chain(1, false);
        model.geoms = vec![geom_of(&x), geom_of(&y)];
        let p = contact_param(&model, 0, 1);
        assert_eq!(dim, p.dim);
        assert_eq!(fr, p.friction);
        assert_eq!(sr, p.solref);
        assert_eq!(si, p.solimp);
    }
}

#[test]
fn exercise_4_cylinder_support() {
    let (r, h) = (0.3, 0.2);
    let pose = GeomPose {
        pos: Vec3::new(0.1, -0.2, 0.3),
        rot: axis_angle_mat(&Vec3::new(1.0, 2.0, 3.0).normalize(), 0.8),
    };
    // brute force: the farthest of many surface points
    let mut surface = vec![];
    for i in 0..720 {
        let t = 2.0 * std::f64::consts::PI * i as f64 / 720.0;
        for z in [-h, h] {
            surface.push(pose.pos + pose.rot * Vec3::new(r * t.cos(), r * t.sin(), z));
        }
    }
    let shape = ConvexShape {
        shape: Shape::Cylinder(r, h),
        pose,
    };
    for k in 0..50 {
        let d = Vec3::new(
            (k as f64 * 1.3).sin(),
            (k as f64 * 0.7).cos(),
            (k as f64 * 2.1).sin() - 0.2,
        );
        let s = exercise_4_answer(r, h, &pose, &d);
        let brute = surface.iter().map(|p| p.dot(&d)).fold(f64::NEG_INFINITY, f64::max);
        assert!(s.dot(&d) >= brute - 1e-12 && s.dot(&d) <= brute + 1e-4 * d.norm());
        assert!((s - shape.support(&d)).amax() < 1e-12);
    }
    // GJK with it: a cylinder above a unit-radius sphere
    let ball = ConvexShape {
        shape: Shape::Sphere(0.1),
        pose: GeomPose {
            pos: Vec3::new(0.1, -0.2, -0.5),
            rot: Mat3::identity(),
        },
    };
    let g = gjk(&ball, &shape, None);
    assert!(g.dist > 0.0 && (g.b - g.a).norm() - g.dist < 1e-12);
}

#[test]
fn exercise_5_distance_from_supports() {
    let rot = axis_angle_mat(&Vec3::new(1.0, 1.0, 0.3).normalize(), 0.7);
    for (k, offset) in [0.25, 0.4, 0.55, 0.7].iter().enumerate() {
        let a = ConvexShape {
            shape: Shape::Ellipsoid(Vec3::new(0.3, 0.2, 0.15)),
            pose: GeomPose {
                pos: Vec3::zeros(),
                rot: Mat3::identity(),
            },
        };
        let b = ConvexShape {
            shape: Shape::Ellipsoid(Vec3::new(0.25, 0.2, 0.1)),
            pose: GeomPose {
                pos: Vec3::new(*offset, 0.1 * k as f64, 0.05),
                rot,
            },
        };
        let est = exercise_5_answer(&a, &b, 20000);
        let mut out = vec![];
        collide(
            (GeomType::Ellipsoid, &[0.3, 0.2, 0.15], &a.pose),
            (GeomType::Ellipsoid, &[0.25, 0.2, 0.1], &b.pose),
            10.0,
            &mut out,
        );
        let exact = out[0].dist;
        // the sampled minimum is above the true minimum: the estimate is below the distance
        assert!(est <= exact + 1e-9, "estimate {est} above {exact}");
        assert!(exact - est < 2e-3, "estimate {est}, GJK/EPA {exact}");
    }
}
