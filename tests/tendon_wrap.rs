//! Spatial tendons wrapping around spheres and cylinders (MuJoCo's `mju_wrap` inside
//! `mj_tendon`), held against MuJoCo 4.0.0 on `tests/fixtures/models/tendon_wrap.xml` at 24
//! seeded states (fixtures by `tests/fixtures/make_wrap_fixtures.py`), and the moment arms
//! against central finite differences of our own lengths.
//!
//! Measured worst (this machine): lengths 1.1e-15 relative and moment arms 3.2e-15 of the
//! row's largest entry, with the same wraps as MuJoCo at every state; wrap tangent points
//! 9.5e-16 and arcs 2.7e-13 relative (MuJoCo's arc is a difference of lengths) over the arm's
//! states and 400 random configurations, with the same wrap decisions; finite differences
//! (h = 1e-6) 5.5e-9, except the inside wrap, 1.1e-7 (its contact point is a Newton iterate);
//! 500-step rollouts with springs and motors on wrapping tendons 4.7e-15.

use mbd::dynamics::{tendon_kinematics, tendon_kinematics_into, wrap, TendonState, WrapShape};
use mbd::model::{Integrator, Model, TendonKind, TendonWrap};
use mbd::mujoco::integrator::{Simulator, State};
use mbd::spatial::{Mat3, Vec3};
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture() -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/tendon_wrap.json")).unwrap()).unwrap()
}

fn model() -> Model {
    mbd::mjcf::load(format!("{FIXTURES}/models/tendon_wrap.xml"))
        .unwrap()
        .model
}

fn reals(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn vec3(v: &Value) -> Vec3 {
    let r = reals(v);
    Vec3::new(r[0], r[1], r[2])
}

/// MuJoCo's qpos in our coordinates: the model has only hinges and slides, one coordinate each
/// in MuJoCo's joint order, which is our body order here (one joint chain).
fn qpos(m: &Model, s: &Value) -> Vec<f64> {
    let q = reals(&s["qpos"]);
    assert_eq!(q.len(), m.nq);
    q
}

/// MuJoCo's wrap count from `ten_wrapnum` (sites + pulleys + 2 per wrap).
fn mujoco_wraps(m: &Model, t: usize, wrapnum: u64) -> usize {
    let TendonKind::Spatial { path } = &m.tendons[t].kind else {
        return 0;
    };
    let fixed = path.iter().filter(|w| !matches!(w, TendonWrap::Geom { .. })).count();
    (wrapnum as usize - fixed) / 2
}

/// Lengths to 1e-10 relative and moment arms to 1e-10 of the row's largest entry, tendon by
/// tendon, with the same wraps as MuJoCo at every state.
#[test]
fn lengths_and_moments_match_mujoco() {
    let (m, fx) = (model(), fixture());
    let states = fx["states"].as_array().unwrap();
    assert_eq!(states.len(), 24);
    let nt = m.tendons.len();
    let (mut worst_l, mut worst_j) = (vec![0.0f64; nt], vec![0.0f64; nt]);
    let mut out = TendonState::new(&m);
    for (k, s) in states.iter().enumerate() {
        tendon_kinematics_into(&m, &qpos(&m, s), &[], &mut out).unwrap();
        let len = reals(&s["ten_length"]);
        for (t, &l) in len.iter().enumerate() {
            let mj = mujoco_wraps(&m, t, s["ten_wrapnum"][t].as_u64().unwrap());
            assert_eq!(out.wraps[t], mj, "state {k} tendon {}: wraps", m.tendons[t].name);
            worst_l[t] = worst_l[t].max((out.length[t] - l).abs() / l.abs());
            let row = reals(&s["ten_J"][t]);
            let scale = row.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            for (c, &j) in row.iter().enumerate() {
                worst_j[t] = worst_j[t].max((out.moment[(t, c)] - j).abs() / scale);
            }
        }
    }
    for t in 0..nt {
        println!(
            "{:>14}: worst relative length {:.1e}, moment {:.1e}",
            m.tendons[t].name, worst_l[t], worst_j[t]
        );
        assert!(worst_l[t] < 1e-10 && worst_j[t] < 1e-10, "tendon {}", m.tendons[t].name);
    }
}

/// The fixture exercises what it claims: every wrapping tendon but `miss` wraps at some states
/// and not at others, `miss` never wraps, and the pulley tendon wraps on both branches at some.
#[test]
fn fixture_covers_wrap_and_no_wrap() {
    let fx = fixture();
    let names: Vec<&str> = fx["tendons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let states = fx["states"].as_array().unwrap();
    for (t, name) in names.iter().enumerate() {
        let nums: Vec<u64> = states.iter().map(|s| s["ten_wrapnum"][t].as_u64().unwrap()).collect();
        match *name {
            "miss" => assert!(nums.iter().all(|&n| n == 2), "{name}: {nums:?}"),
            // 2 branches of 2 sites (+ a pulley entry, + the mid site) with 0, 1 or 2 wraps
            "pulley" => assert!(nums.contains(&11) && nums.contains(&7), "{name}: {nums:?}"),
            _ => assert!(nums.contains(&4) && nums.contains(&2), "{name}: {nums:?}"),
        }
    }
}

/// The wrap kernel alone, fed MuJoCo's own site and geom poses (the arm's wraps and 400 random
/// configurations): the same answer (wrap or no wrap), tangent points to 1e-10 of the ends'
/// distance from the centre and arcs to 1e-10 relative. The random cases must include
/// side-forced wraps (the straight segment misses the geom, so without the side site there is no
/// wrap), side sites that do not force one, and inside wraps, where MuJoCo's contact point also
/// satisfies the reflection equation to its Newton tolerance.
#[test]
fn wrap_kernel_matches_mju_wrap() {
    let fx = fixture();
    let (mut n, mut worst_p, mut worst_a) = (0, 0.0f64, 0.0f64);
    let (mut forced, mut not_forced, mut inside_wraps) = (0, 0, 0);
    let arm = fx["states"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["wraps"].as_array().unwrap());
    let random = fx["random_wraps"].as_array().unwrap();
    assert_eq!(random.len(), 400);
    for (k, w) in arm.chain(random).enumerate() {
        let shape = if w["cylinder"].as_bool().unwrap() {
            WrapShape::Cylinder
        } else {
            WrapShape::Sphere
        };
        let r = Mat3::from_row_slice(&reals(&w["rot"]));
        let (x0, x1, c) = (vec3(&w["x0"]), vec3(&w["x1"]), vec3(&w["centre"]));
        let radius = w["radius"].as_f64().unwrap();
        let side = (!w["side"].is_null()).then(|| vec3(&w["side"]));
        let got = wrap(shape, &x0, &x1, &c, &r, radius, side.as_ref());
        let name = w["tendon"].as_str().unwrap();
        let inside = side.is_some_and(|s| r.tr_mul(&(s - c)).norm() < radius);
        let free = wrap(shape, &x0, &x1, &c, &r, radius, None).is_some();
        let wrapped = w["wrapped"].as_bool().unwrap();
        if side.is_some() && !inside && !free {
            if wrapped {
                forced += 1;
            } else {
                not_forced += 1;
            }
        }
        match (got, wrapped) {
            (None, false) => {}
            (Some(g), true) => {
                n += 1;
                let (t0, t1, arc) = (vec3(&w["t0"]), vec3(&w["t1"]), w["arc"].as_f64().unwrap());
                let e = ((g.t0 - t0).norm().max((g.t1 - t1).norm())) / (x0 - c).norm().min((x1 - c).norm());
                assert!(e < 1e-10, "case {k} {name}: tangent points {g:?} vs {t0} {t1}");
                worst_p = worst_p.max(e);
                if inside {
                    inside_wraps += 1;
                    assert_eq!(g.arc, 0.0);
                    // geom coordinates; a cylinder's problem is the one projected along its axis
                    let l = |p: Vec3| {
                        let v = r.tr_mul(&(p - c));
                        if shape == WrapShape::Cylinder {
                            Vec3::new(v.x, v.y, 0.0)
                        } else {
                            v
                        }
                    };
                    assert!(reflection_residual(&l(x0), &l(x1), &l(t0), radius) < 1e-6, "case {k}");
                    continue;
                }
                // MuJoCo's arc is ten_length minus the straight parts (rounding ~1e-16 of
                // the length)
                let e = (g.arc - arc).abs() / arc.abs();
                assert!(e < 1e-10, "case {k} {name}: arc {} vs {arc}", g.arc);
                worst_a = worst_a.max(e);
            }
            (g, _) => panic!("case {k} {name}: wrap {g:?}, MuJoCo wrapped = {wrapped}"),
        }
    }
    println!(
        "{n} wraps ({inside_wraps} inside); worst relative: tangent points {worst_p:.1e}, arc {worst_a:.1e}; side sites forcing a wrap {forced}, not forcing one {not_forced}"
    );
    assert!(n >= 200 && inside_wraps >= 20 && forced >= 20 && not_forced >= 20);
}

/// `|asin(A z) + asin(B z) - 2 asin z + G|` at the contact point `q` of an inside wrap, ends
/// `p0`, `p1` (geom coordinates, centred at 0, in the plane of `0, p0, p1`): `z` is the sine of
/// the angle between the radius to `q` and the segment from `p0` (the angle of incidence),
/// recovered from `q`.
fn reflection_residual(p0: &Vec3, p1: &Vec3, q: &Vec3, rho: f64) -> f64 {
    let (l0, l1) = (p0.norm(), p1.norm());
    let g = (p0.dot(p1) / (l0 * l1)).clamp(-1.0, 1.0).acos();
    // angle at q between -q and p0 - q: sin = |q x (p0 - q)| / (|q| |p0 - q|)
    let d = p0 - q;
    let z = q.cross(&d).norm() / (q.norm() * d.norm());
    ((rho / l0 * z).asin() + (rho / l1 * z).asin() - 2.0 * z.asin() + g).abs()
}

/// The side site of `cyl_flip` sends the tendon round the back of the elbow: where it wraps,
/// the same ends without a side site wrap round the other side (tangent points on the other
/// side of the plane through the axis and the side site).
#[test]
fn side_site_flips_the_wrap_side() {
    let fx = fixture();
    let mut flipped = 0;
    for s in fx["states"].as_array().unwrap() {
        for w in s["wraps"].as_array().unwrap() {
            if w["tendon"] != "cyl_flip" || !w["wrapped"].as_bool().unwrap() {
                continue;
            }
            let (x0, x1, c) = (vec3(&w["x0"]), vec3(&w["x1"]), vec3(&w["centre"]));
            let r = Mat3::from_row_slice(&reals(&w["rot"]));
            let radius = w["radius"].as_f64().unwrap();
            let side = vec3(&w["side"]);
            let with = wrap(WrapShape::Cylinder, &x0, &x1, &c, &r, radius, Some(&side)).unwrap();
            let without = wrap(WrapShape::Cylinder, &x0, &x1, &c, &r, radius, None).unwrap();
            // local x, y of a point: the side site's direction decides the side
            let sd = r.tr_mul(&(side - c));
            let on_side = |p: &Vec3| {
                let l = r.tr_mul(&(p - c));
                l.x * sd.x + l.y * sd.y > 0.0
            };
            let mid = |a: &Vec3, b: &Vec3| (a + b) / 2.0;
            assert!(on_side(&mid(&with.t0, &with.t1)));
            if !on_side(&mid(&without.t0, &without.t1)) {
                flipped += 1;
                assert!(with.arc > without.arc, "the forced side is the longer way round");
            }
        }
    }
    assert!(flipped >= 3, "the side site flipped only {flipped} wraps");
}

/// Moment arms against central differences of the lengths (an independent route: only lengths
/// are differenced), at every fixture state and every dof.
#[test]
fn moments_are_length_gradients() {
    let (m, fx) = (model(), fixture());
    let h = 1e-6;
    let (mut worst, mut worst_inside) = (0.0f64, 0.0f64);
    for (k, s) in fx["states"].as_array().unwrap().iter().enumerate() {
        let q = qpos(&m, s);
        let ten = tendon_kinematics(&m, &q).unwrap();
        for c in 0..m.nv {
            let (mut qp, mut qm) = (q.clone(), q.clone());
            qp[c] += h;
            qm[c] -= h;
            let (lp, lm) = (tendon_kinematics(&m, &qp).unwrap(), tendon_kinematics(&m, &qm).unwrap());
            for t in 0..m.tendons.len() {
                let fd = (lp.length[t] - lm.length[t]) / (2.0 * h);
                let scale = ten.moment.row(t).amax().max(1e-3);
                let e = (fd - ten.moment[(t, c)]).abs() / scale;
                // the inside wrap's contact point is a Newton iterate (tolerance 1e-6 on the
                // reflection equation), not the exact stationary point, so its moment arm is
                // the length gradient only to that order
                let tol = if m.tendons[t].name == "sphere_inside" {
                    1e-6
                } else {
                    1e-7
                };
                assert!(
                    e < tol,
                    "state {k} tendon {t} dof {c}: moment {} vs fd {fd}",
                    ten.moment[(t, c)]
                );
                if m.tendons[t].name == "sphere_inside" {
                    worst_inside = worst_inside.max(e);
                } else {
                    worst = worst.max(e);
                }
            }
        }
    }
    println!("worst relative fd error {worst:.1e} (inside wrap {worst_inside:.1e})");
}

/// A geom type MuJoCo does not wrap around is refused by the reader, and so is a geom that is
/// not between two sites.
#[test]
fn bad_wrap_geoms_are_errors() {
    let xml = |geom: &str, path: &str| {
        format!(
            r#"<mujoco><worldbody><geom name="g" type="{geom}" size="0.1 0.1 0.1"/><site name="a" pos="1 0 0"/>
            <body><joint type="hinge" axis="0 0 1"/><geom size="0.1"/><site name="b" pos="-1 0 0"/></body>
            </worldbody><tendon><spatial>{path}</spatial></tendon></mujoco>"#
        )
    };
    let ok = r#"<site site="a"/><geom geom="g"/><site site="b"/>"#;
    assert!(mbd::mjcf::load_str(&xml("sphere", ok)).is_ok());
    assert!(mbd::mjcf::load_str(&xml("cylinder", ok)).is_ok());
    for g in ["box", "capsule", "ellipsoid"] {
        let e = mbd::mjcf::load_str(&xml(g, ok)).unwrap_err().to_string();
        assert!(e.contains("sphere or cylinder"), "{g}: {e}");
    }
    let e = mbd::mjcf::load_str(&xml(
        "sphere",
        r#"<site site="a"/><geom geom="g"/><pulley divisor="2"/><site site="b"/><site site="a"/>"#,
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("between two sites"), "{e}");
    // a spring on a wrapping tendon without springlength: the reader leaves MuJoCo's "not given",
    // mbd::mujoco::load measures the length at qpos_spring, wrap included
    let spring = |attrs: &str| xml("sphere", ok).replace("<spatial>", &format!("<spatial stiffness=\"10\" {attrs}>"));
    let read = mbd::mjcf::load_str(&spring("")).unwrap().model;
    assert_eq!(read.tendons[0].springlength, [-1.0, -1.0]);
    let compiled = mbd::mujoco::load_str(&spring("")).unwrap().model;
    let at_spring = mbd::dynamics::tendon_kinematics(&compiled, &compiled.qpos_spring()).unwrap();
    assert_eq!(compiled.tendons[0].springlength, [at_spring.length[0]; 2]);
    assert!(at_spring.wraps[0] > 0, "the rest length is a wrapped one");
    assert_eq!(
        mbd::mjcf::load_str(&spring(r#"springlength="1.5""#))
            .unwrap()
            .model
            .tendons[0]
            .springlength,
        [1.5, 1.5]
    );
}

/// 500 steps (1 s) of the arm with two spring-loaded wrapping tendons and three motors on
/// wrapping tendons (one forced round by its side site, one through a pulley), under a fixed
/// control sequence, with the Euler and RK4 integrators: qpos and qvel agree with MuJoCo's to
/// 1e-10 relative to max(1, |x|) (measured 4.7e-15). The joint limits engage (the finger's slide reaches its stop),
/// so the constraint solver is in the loop too.
#[test]
fn rollouts_agree_with_mujoco() {
    let (m, fx) = (model(), fixture());
    let r = &fx["rollout"];
    let steps = r["steps"].as_u64().unwrap() as usize;
    let mut worst = 0.0f64;
    for (name, integ) in [("euler", Integrator::Euler), ("rk4", Integrator::Rk4)] {
        let mut state = State::reference(&m);
        state.qpos = reals(&r["qpos"]);
        state.qvel = reals(&r["qvel"]);
        let mut sim = Simulator::new(&m, state, integ).unwrap();
        for k in 0..steps {
            sim.state.ctrl = (0..m.actuators.len())
                .map(|i| 3.0 * (0.02 * k as f64 + 1.3 * i as f64).sin())
                .collect();
            sim.step().unwrap();
        }
        let want = &r["integrators"][name];
        for (key, got) in [("qpos", &sim.state.qpos), ("qvel", &sim.state.qvel)] {
            for (g, w) in got.iter().zip(reals(&want[key])) {
                let e = (g - w).abs() / w.abs().max(1.0);
                assert!(e < 1e-10, "{name} {key}: {got:?} vs {:?}", reals(&want[key]));
                worst = worst.max(e);
            }
        }
    }
    println!("rollouts: worst relative {worst:.1e}");
}
