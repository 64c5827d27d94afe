//! Fuzz test: bad and extreme input never panics, never hangs, and never comes back as `Ok` with
//! a NaN or an infinity in it.
//!
//! Three generators, each a proptest over a case seed (a fixed proptest seed and fixed case
//! counts, so that CI runs the same cases every time):
//! - (a) mutated MJCF models: a small fixture of `tests/fixtures/models/` with one to three
//!   mutations (an attribute value made huge, NaN, negative, empty or garbage; an element
//!   deleted, duplicated or nested inside another), loaded and, if accepted, run through the
//!   dynamics at `qpos0`;
//! - (b) random states (wrong lengths, huge and non-finite entries, unnormalized quaternions) on
//!   canned models and mechanisms, through every checked entry that takes a state;
//! - (c) random calls of the public library functions (spatial, model builder, canned models,
//!   mechanisms, dynamics, kinematics, sparse, loops) with random and extreme arguments.
//!
//! Every case runs on its own thread under a watchdog ([`CASE_SECONDS`]). Run more cases locally
//! with `FUZZ_CASES=5000 cargo test --release --test fuzz` (the count applies to each of the
//! three generators) and another seed with `FUZZ_SEED=...`.

use mbd::dynamics::{
    aba, bias_forces, crba, hand_c, kinetic_energy, passive_forces, potential_energy, qacc_smooth, rnea,
};
use mbd::kinematics::{body_jacobian, body_velocities, forward_kinematics, point_jacobian};
use mbd::loops::{
    actuator_forces, assemble, forward_dynamics, inverse_dynamics, loop_constraints, loop_properties, null_space, rank,
    rnea_loops, solve_kkt, solve_lambda_first, solve_null_space, with_loops_from_equality, Method,
};
use mbd::model::{canned, mechanisms, Joint, JointType, LoopJoint, Model, ModelBuilder};
use mbd::sparse::{
    cholesky_dense, factor_i, ltdl, ltl, mpy_h, pinv_solve_dense, solve_ld, solve_ltdl, MjLayout, OpCount, PivotPolicy,
};
use mbd::spatial::{mat_to_quat, xlt, Force, Mat3, SpatialInertia, Vec3, Xform};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

/// The MJCF reader, called in one place (it moves from `mbd::model::mjcf` to `mbd::mjcf`).
fn load_mjcf(xml: &str) -> mbd::Result<Model> {
    mbd::mjcf::parse(xml, "fuzz.xml").map(|loaded| loaded.model)
}

/// The watchdog: a case that has not returned after this many seconds has hung.
const CASE_SECONDS: u64 = 10;

/// Cases per generator: `FUZZ_CASES` or the CI default.
fn cases(default: u32) -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn config(default_cases: u32) -> Config {
    let seed = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d62_6466_757a_7a01);
    Config {
        cases: cases(default_cases),
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: 0, // the case seed is opaque: shrinking it does not simplify the case
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The case generator: SplitMix64 driven by the proptest case seed.

struct Gen(u64);

impl Gen {
    fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.u64() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
    /// A value: mostly moderate, often at or past MuJoCo's limits, sometimes not finite.
    fn value(&mut self) -> f64 {
        const EXTREMES: [f64; 16] = [
            0.0,
            -0.0,
            1.0,
            1e-300,
            1e-15,
            1e10,
            -1e10,
            1.0000001e10,
            1e11,
            1e154,
            -1e200,
            1e300,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        if self.chance(70) {
            (self.unit() - 0.5) * 4.0
        } else {
            self.pick(&EXTREMES)
        }
    }
    /// A moderate value.
    fn small(&mut self) -> f64 {
        (self.unit() - 0.5) * 2.0
    }
    fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.value(), self.value(), self.value())
    }
    /// A length near `n`: mostly `n`, sometimes one off, rarely zero or far off.
    fn len_near(&mut self, n: usize) -> usize {
        match self.below(10) {
            0 => n.saturating_sub(1),
            1 => n + 1,
            2 => self.below(2 * n + 3),
            _ => n,
        }
    }
    /// A vector near `base`: entries kept, perturbed, or replaced by extreme values.
    fn vec_near(&mut self, base: &[f64]) -> Vec<f64> {
        let n = self.len_near(base.len());
        let wild = self.chance(50);
        (0..n)
            .map(|k| {
                let b = base.get(k).copied().unwrap_or(0.3);
                if wild && self.chance(25) {
                    self.value()
                } else {
                    b + 0.2 * self.small()
                }
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Running a case: no panic, no hang, no Ok with a non-finite number.

/// The numbers in a result, to check that an `Ok` holds only finite ones.
trait Numbers {
    fn numbers(&self) -> Vec<f64>;
}
impl Numbers for f64 {
    fn numbers(&self) -> Vec<f64> {
        vec![*self]
    }
}
impl Numbers for usize {
    fn numbers(&self) -> Vec<f64> {
        vec![]
    }
}
impl Numbers for () {
    fn numbers(&self) -> Vec<f64> {
        vec![]
    }
}
impl Numbers for Vec<f64> {
    fn numbers(&self) -> Vec<f64> {
        self.clone()
    }
}
impl Numbers for [f64; 4] {
    fn numbers(&self) -> Vec<f64> {
        self.to_vec()
    }
}
impl Numbers for DVector<f64> {
    fn numbers(&self) -> Vec<f64> {
        self.as_slice().to_vec()
    }
}
impl Numbers for DMatrix<f64> {
    fn numbers(&self) -> Vec<f64> {
        self.as_slice().to_vec()
    }
}
impl<A: Numbers, B: Numbers> Numbers for (A, B) {
    fn numbers(&self) -> Vec<f64> {
        let mut v = self.0.numbers();
        v.extend(self.1.numbers());
        v
    }
}
impl Numbers for Model {
    fn numbers(&self) -> Vec<f64> {
        let mut v = self.qpos0.as_slice().to_vec();
        for i in &self.inertia {
            v.push(i.m);
            v.extend(i.h.iter());
            v.extend(i.ibar.iter());
        }
        for x in &self.x_tree {
            v.extend(x.e.iter());
            v.extend(x.r.iter());
        }
        v.extend(self.opt.gravity.iter());
        v.push(self.opt.timestep);
        v
    }
}

/// The outcome of one call, reduced to what the fuzzer checks.
type Outcome = std::result::Result<Vec<f64>, String>;

fn outcome<T: Numbers>(r: mbd::Result<T>) -> Outcome {
    r.map(|t| t.numbers()).map_err(|e| e.to_string())
}

/// Runs `calls` on a watched thread; fails on a panic, on a hang, and on an `Ok` holding a
/// non-finite number. `what` describes the case for the failure message.
fn watched(
    what: String,
    calls: impl FnOnce() -> Vec<(&'static str, Outcome)> + Send + 'static,
) -> Result<(), TestCaseError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(calls)).map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        });
        let _ = tx.send(r);
    });
    match rx.recv_timeout(Duration::from_secs(CASE_SECONDS)) {
        Err(_) => Err(TestCaseError::fail(format!("hang (> {CASE_SECONDS} s): {what}"))),
        Ok(Err(msg)) => Err(TestCaseError::fail(format!("panic '{msg}': {what}"))),
        Ok(Ok(results)) => {
            for (name, r) in results {
                if let Ok(v) = r {
                    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                        return Err(TestCaseError::fail(format!("{name} returned Ok with {x}: {what}")));
                    }
                }
            }
            Ok(())
        }
    }
}

/// Silences the panic messages of the watched (unnamed) case threads; the test threads, named
/// after their tests, still report.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name().is_some() {
                default(info);
            }
        }));
    });
}

// ---------------------------------------------------------------------------------------------
// Every checked entry that takes a state.

fn state_calls(m: &Model, q: &[f64], qd: &[f64], x: &[f64], g: &mut Gen) -> Vec<(&'static str, Outcome)> {
    let f_ext: Option<Vec<Force>> = match g.below(4) {
        0 => Some(vec![Force::new(g.vec3(), g.vec3()); m.nb + 1]),
        1 => Some(vec![Force::zero(); g.len_near(m.nb + 1)]),
        _ => None,
    };
    let f = f_ext.as_deref();
    let body = if g.chance(90) {
        g.below(m.nb + 1)
    } else {
        m.nb + 1 + g.below(3)
    };
    let point = g.vec3();
    let h = g.value();
    let mut out = vec![
        ("aba", outcome(aba(m, q, qd, x, f))),
        ("rnea", outcome(rnea(m, q, qd, x, f))),
        ("bias_forces", outcome(bias_forces(m, q, qd))),
        ("crba", outcome(crba(m, q))),
        ("hand_c", outcome(hand_c(m, q, qd, f))),
        ("kinetic_energy", outcome(kinetic_energy(m, q, qd))),
        ("potential_energy", outcome(potential_energy(m, q))),
        ("passive_forces", outcome(passive_forces(m, q, qd))),
        ("qacc_smooth", outcome(qacc_smooth(m, q, qd, x))),
        (
            "forward_kinematics",
            outcome(forward_kinematics(m, q).map(|k| {
                (1..=m.nb)
                    .flat_map(|i| {
                        let mut v: Vec<f64> = k.rotation(i).iter().copied().collect();
                        v.extend(k.position(i).iter());
                        v
                    })
                    .collect::<Vec<f64>>()
            })),
        ),
        (
            "body_velocities",
            outcome(body_velocities(m, q, qd).map(|v| {
                v.iter()
                    .flat_map(|m| m.to_vec6().as_slice().to_vec())
                    .collect::<Vec<f64>>()
            })),
        ),
        ("body_jacobian", outcome(body_jacobian(m, q, body))),
        ("point_jacobian", outcome(point_jacobian(m, q, body, &point))),
        (
            "mujoco::forward_smooth",
            outcome(mbd::mujoco::forward_smooth(m, q, qd).map(|d| d.qm)),
        ),
        ("check_state", outcome(m.check_state(q, qd))),
        ("difference", outcome(m.difference(m.qpos0.as_slice(), q))),
        (
            "normalize_quaternions",
            outcome({
                let mut qq = q.to_vec();
                m.normalize_quaternions(&mut qq).map(|_| qq)
            }),
        ),
        (
            "integrate",
            outcome({
                let mut qq = q.to_vec();
                m.integrate(&mut qq, qd, h).map(|_| qq)
            }),
        ),
    ];
    if !m.loops.is_empty() {
        let t_stab = if g.chance(50) { Some(g.value()) } else { None };
        let method = g.pick(&Method::ALL);
        let tau_a: Option<Vec<f64>> = if g.chance(30) {
            Some((0..g.below(4)).map(|_| g.value()).collect())
        } else {
            None
        };
        let actuated: Vec<usize> = (0..g.below(3)).map(|_| g.below(m.nv + 1)).collect();
        out.extend([
            (
                "loop_constraints",
                outcome(loop_constraints(m, q, qd, t_stab).map(|s| (s.kmat, (s.k, (s.k_stab, s.err))))),
            ),
            (
                "forward_dynamics",
                outcome(forward_dynamics(m, q, qd, x, tau_a.as_deref(), method, t_stab).map(|s| s.qdd)),
            ),
            ("rnea_loops", outcome(rnea_loops(m, q, qd, x, tau_a.as_deref(), None))),
            ("loop_properties", outcome(loop_properties(m, q).map(|p| p.rank))),
            ("assemble", outcome(assemble(m, q))),
            (
                "inverse_dynamics",
                outcome(inverse_dynamics(m, q, qd, x, tau_a.as_deref(), &actuated).map(|r| (r.u, r.tau))),
            ),
        ]);
    }
    out
}

/// The canned models and mechanisms the state fuzzer draws from.
fn models() -> Vec<Model> {
    let mut v = vec![
        canned::chain(3, true),
        canned::binary_tree(2),
        canned::floating_base_ball_arms(),
        canned::four_bar_tree(),
    ];
    v.extend(mechanisms::all().into_iter().map(|(_, m)| m));
    v
}

// ---------------------------------------------------------------------------------------------
// (a) mutated MJCF

const FIXTURES: [&str; 8] = [
    include_str!("fixtures/models/chain_1.xml"),
    include_str!("fixtures/models/chain_2.xml"),
    include_str!("fixtures/models/sphere_plane.xml"),
    include_str!("fixtures/models/capsule_plane.xml"),
    include_str!("fixtures/models/box_incline.xml"),
    include_str!("fixtures/models/fourbar.xml"),
    include_str!("fixtures/models/weld.xml"),
    include_str!("fixtures/models/floating.xml"),
];

/// Byte ranges of every element `<tag ...>...</tag>` or `<tag .../>` (not the root).
fn elements(xml: &str) -> Vec<(usize, usize, usize)> {
    let b = xml.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = xml[i..].find('<') {
        let start = i + off;
        i = start + 1;
        if matches!(b.get(start + 1), Some(b'/' | b'!' | b'?') | None) {
            continue;
        }
        let name_end = xml[start + 1..]
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .map_or(xml.len(), |k| start + 1 + k);
        let name = &xml[start + 1..name_end];
        let Some(gt) = xml[start..].find('>').map(|k| start + k) else {
            continue;
        };
        let open_end = gt + 1;
        if b[gt - 1] == b'/' {
            out.push((start, open_end, open_end));
            continue;
        }
        // the matching close tag, counting nested elements of the same name
        let (open, close) = (format!("<{name}"), format!("</{name}>"));
        let (mut depth, mut j) = (1, open_end);
        let mut end = None;
        for _ in 0..10_000 {
            let next_close = xml[j..].find(&close).map(|k| j + k);
            let next_open = xml[j..].find(&open).map(|k| j + k);
            match (next_open, next_close) {
                (Some(o), Some(c)) if o < c => {
                    depth += 1;
                    j = o + 1;
                }
                (_, Some(c)) => {
                    depth -= 1;
                    j = c + close.len();
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                _ => break,
            }
        }
        if let Some(end) = end {
            out.push((start, open_end, end));
        }
    }
    out.into_iter()
        .filter(|e| e.0 > 0 && !xml[..e.0].trim().is_empty())
        .collect()
}

/// Positions of every attribute value `="..."` (start and end of the value).
fn attribute_values(xml: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = xml[i..].find("=\"") {
        let start = i + off + 2;
        let Some(len) = xml[start..].find('"') else { break };
        out.push((start, start + len));
        i = start + len + 1;
    }
    out
}

fn mutate(xml: &str, g: &mut Gen) -> String {
    const GARBAGE: [&str; 18] = [
        "1e300",
        "-1e300",
        "nan",
        "inf",
        "-inf",
        "-1",
        "0",
        "",
        "abc",
        "1e10 1e10 1e10",
        "0 0 0",
        "0 0 0 0",
        "1e-300",
        "-0",
        "2 2 2 2 2 2 2 2 2 2 2",
        "1,2",
        " ",
        "1e11",
    ];
    let mut s = xml.to_string();
    for _ in 0..1 + g.below(3) {
        match g.below(6) {
            0..=2 => {
                let vals = attribute_values(&s);
                if vals.is_empty() {
                    continue;
                }
                let (a, b) = g.pick(&vals);
                let new = if g.chance(60) {
                    g.pick(&GARBAGE).to_string()
                } else {
                    // scale every number of the value
                    let k = g.pick(&[-1.0, 0.0, 1e-12, 1e6, 1e12, -1e300]);
                    s[a..b]
                        .split_whitespace()
                        .map(|t| t.parse::<f64>().map_or(t.to_string(), |x| format!("{}", x * k)))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                s.replace_range(a..b, &new);
            }
            3 => {
                let els = elements(&s);
                if !els.is_empty() {
                    let (a, _, c) = g.pick(&els);
                    s.replace_range(a..c, "");
                }
            }
            4 => {
                let els = elements(&s);
                if !els.is_empty() {
                    let (a, _, c) = g.pick(&els);
                    let copy = s[a..c].to_string();
                    s.insert_str(c, &copy);
                }
            }
            _ => {
                let els = elements(&s);
                if els.len() >= 2 {
                    let (a, _, c) = g.pick(&els);
                    let copy = s[a..c].to_string();
                    let hosts: Vec<_> = els.iter().filter(|e| e.1 < e.2).collect();
                    if !hosts.is_empty() {
                        let (_, open_end, _) = *g.pick(&hosts);
                        s.insert_str(open_end, &copy);
                    }
                }
            }
        }
    }
    s
}

fn mjcf_case(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Gen(seed);
    let xml = mutate(FIXTURES[g.below(FIXTURES.len())], &mut g);
    let what = format!("seed {seed:#x}, MJCF:\n{xml}");
    watched(what, move || {
        let loaded = load_mjcf(&xml);
        let mut out = vec![("load_mjcf", outcome(loaded.clone()))];
        if let Ok(m) = loaded {
            let q = m.qpos0.as_slice().to_vec();
            let qd: Vec<f64> = (0..m.nv).map(|_| g.small()).collect();
            let x: Vec<f64> = (0..m.nv).map(|_| g.small()).collect();
            out.extend(state_calls(&m, &q, &qd, &x, &mut g));
            out.push(("with_loops_from_equality", outcome(with_loops_from_equality(&m))));
            if let Ok(ml) = with_loops_from_equality(&m) {
                out.extend(state_calls(&ml, &q, &qd, &x, &mut g));
            }
        }
        out
    })
}

// ---------------------------------------------------------------------------------------------
// (b) random states

fn state_case(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Gen(seed);
    let all = models();
    let m = all[g.below(all.len())].clone();
    let mut q = g.vec_near(m.qpos0.as_slice());
    // unnormalized or extreme quaternions
    if g.chance(30) {
        for i in 1..=m.nb {
            let start = match m.joints[i].jtype {
                JointType::Spherical => m.q_adr[i],
                JointType::Free => m.q_adr[i] + 3,
                _ => continue,
            };
            let scale = g.pick(&[0.0, 1e-13, 1e-6, 3.0, 1e10, 1e200, f64::NAN]);
            for k in start..(start + 4).min(q.len()) {
                q[k] *= scale;
            }
        }
    }
    let qd = g.vec_near(&vec![0.0; m.nv]);
    let x = g.vec_near(&vec![0.0; m.nv]);
    let what = format!("seed {seed:#x}, model {}, q {q:?}, qd {qd:?}, x {x:?}", m.name);
    watched(what, move || state_calls(&m, &q, &qd, &x, &mut g))
}

// ---------------------------------------------------------------------------------------------
// (c) random calls

fn random_matrix(g: &mut Gen, r: usize, c: usize) -> DMatrix<f64> {
    let wild = g.chance(30);
    DMatrix::from_fn(r, c, |_, _| if wild && g.chance(20) { g.value() } else { g.small() })
}

fn random_spd(g: &mut Gen, n: usize) -> DMatrix<f64> {
    let a = random_matrix(g, n, n);
    let mut h = &a * a.transpose() + DMatrix::identity(n, n) * 0.1;
    if n > 0 && g.chance(20) {
        let (i, j) = (g.below(n), g.below(n));
        h[(i, j)] = g.value();
    }
    h
}

fn random_parent(g: &mut Gen, n: usize) -> Vec<Option<usize>> {
    (0..n)
        .map(|i| match g.below(20) {
            0 => Some(i),              // self-loop
            1 => Some(i + g.below(3)), // forward or out of range
            _ if i == 0 || g.chance(20) => None,
            _ => Some(g.below(i)),
        })
        .collect()
}

fn random_inertia(g: &mut Gen) -> SpatialInertia {
    if g.chance(70) {
        let m = 0.1 + g.unit();
        let it = 0.01 + 0.1 * g.unit();
        SpatialInertia::from_mass_com_inertia(m, Vec3::new(g.small(), g.small(), g.small()), Mat3::identity() * it)
    } else {
        SpatialInertia::from_mass_com_inertia(g.value(), g.vec3(), Mat3::from_fn(|_, _| g.value()))
    }
}

fn random_joint(g: &mut Gen) -> Joint {
    let axis = if g.chance(70) {
        Vec3::new(g.small(), g.small(), g.small() + 2.0).normalize()
    } else {
        g.vec3()
    };
    let jtype = match g.below(8) {
        0 => JointType::Revolute { axis },
        1 => JointType::Prismatic { axis },
        2 => JointType::Helical {
            axis,
            pitch: if g.chance(70) { g.small() } else { g.value() },
        },
        3 => JointType::Cylindrical { axis },
        4 => JointType::Planar,
        5 => JointType::Spherical,
        6 => JointType::Free,
        _ => JointType::Fixed,
    };
    let mut j = Joint::new(jtype);
    if g.chance(20) {
        j.pos = g.vec3();
    }
    if g.chance(20) {
        j.damping = g.value();
        j.stiffness = g.value();
        j.armature = g.value();
    }
    if g.chance(10) {
        j.limited = true;
        j.range = [g.value(), g.value()];
    }
    j
}

fn random_xform(g: &mut Gen) -> Xform {
    if g.chance(70) {
        xlt(Vec3::new(g.small(), g.small(), g.small()))
    } else {
        Xform::new(Mat3::from_fn(|_, _| g.value()), g.vec3())
    }
}

fn random_builder_model(g: &mut Gen) -> mbd::Result<Model> {
    let mut b = ModelBuilder::new("fuzz");
    let n = 1 + g.below(5);
    for i in 1..=n {
        let parent = if g.chance(95) { g.below(i) } else { i + g.below(2) };
        b.add_body(
            &format!("b{i}"),
            parent,
            random_joint(g),
            random_xform(g),
            random_inertia(g),
        );
    }
    if g.chance(30) {
        let k = g.below(n + 2);
        let q: Vec<f64> = (0..g.below(8)).map(|_| g.value()).collect();
        b.set_qpos0(k, &q);
    }
    if g.chance(40) {
        let jt = random_joint(g).jtype;
        b.add_loop(LoopJoint::new(
            "close",
            jt,
            g.below(n + 2),
            g.below(n + 2),
            random_xform(g),
            random_xform(g),
        ));
    }
    if g.chance(10) {
        b.opt.gravity = g.vec3();
        b.opt.timestep = g.value();
    }
    b.build()
}

fn call_case(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Gen(seed);
    let kind = g.below(12);
    let what = format!("seed {seed:#x}, call kind {kind}");
    watched(what, move || {
        let g = &mut g;
        match kind {
            0 => {
                let r = if g.chance(50) {
                    Mat3::from_fn(|_, _| g.value())
                } else {
                    Mat3::identity() * g.value()
                };
                vec![("mat_to_quat", outcome(mat_to_quat(&r)))]
            }
            1 => {
                let m = random_builder_model(g);
                let mut out = vec![("ModelBuilder::build", outcome(m.clone()))];
                if let Ok(m) = m {
                    let q = g.vec_near(m.qpos0.as_slice());
                    let qd = g.vec_near(&vec![0.0; m.nv]);
                    let x = g.vec_near(&vec![0.0; m.nv]);
                    out.extend(state_calls(&m, &q, &qd, &x, g));
                }
                out
            }
            2 => {
                let (l1, l2) = (g.value(), g.value());
                vec![
                    ("figure_8_3_tree", outcome(canned::figure_8_3_tree(l1, l2))),
                    ("figure_8_3", outcome(mechanisms::figure_8_3(l1, l2))),
                    (
                        "figure_8_3_gamma",
                        outcome(mechanisms::figure_8_3_gamma(l1, l2, [g.value(), g.value()]).map(|q| q.to_vec())),
                    ),
                    ("four_bar_chain", outcome(mechanisms::four_bar_chain(g.below(4)))),
                ]
            }
            3 => {
                let n = g.below(6);
                let parent = random_parent(g, n);
                let hn = g.len_near(n);
                let h = random_spd(g, hn);
                let b: Vec<f64> = (0..g.len_near(n)).map(|_| g.small()).collect();
                let mut ops = OpCount::default();
                let mut ld = h.clone();
                let r1 = ltdl(&mut ld, &parent, &mut ops);
                let mut l = h.clone();
                let r2 = ltl(&mut l, &parent, &mut ops);
                // only the entries on the ancestor pattern belong to the factor
                let mut out = vec![
                    ("ltdl", outcome(r1.map(|_| mbd::sparse::split_ltdl(&ld, &parent)))),
                    ("ltl", outcome(r2.map(|_| mbd::sparse::lower_ltl(&l, &parent)))),
                ];
                out.push(("solve_ltdl", outcome(solve_ltdl(&ld, &parent, &b, &mut ops))));
                out.push(("mpy_h", outcome(mpy_h(&h, &parent, &b, &mut ops))));
                out.push((
                    "depths",
                    Ok(mbd::sparse::depths(&parent).iter().map(|&d| d as f64).collect()),
                ));
                out.push(("llt_fill_in", Ok(vec![mbd::sparse::llt_fill_in(&parent) as f64])));
                out
            }
            4 => {
                let n = g.below(6);
                let parent = random_parent(g, n);
                let h = random_spd(g, n);
                let mut out = vec![];
                if let Ok(lay) = MjLayout::new(&parent) {
                    let qm = lay.from_dense(&h);
                    let policy = if g.chance(50) {
                        PivotPolicy::Error
                    } else {
                        PivotPolicy::ClampAndWarn
                    };
                    let f = factor_i(&lay, &qm, policy, &mut OpCount::default());
                    if let Ok(f) = &f {
                        let mut x: Vec<f64> = (0..g.len_near(n)).map(|_| g.small()).collect();
                        let r = solve_ld(&lay, &f.qld, &f.qld_diag_inv, &mut x, &mut OpCount::default());
                        out.push(("solve_ld", outcome(r.map(|_| x))));
                    }
                    out.push(("factor_i", outcome(f.map(|f| f.qld))));
                }
                out
            }
            5 => {
                let (r, c) = (g.below(5), g.below(5));
                let a = if g.chance(50) {
                    random_spd(g, r)
                } else {
                    random_matrix(g, r, c)
                };
                let b = DVector::from_fn(g.len_near(r), |_, _| g.small());
                vec![
                    ("cholesky_dense", outcome(cholesky_dense(&a))),
                    ("pinv_solve_dense", outcome(pinv_solve_dense(&a, &b, 1e-10, "A"))),
                ]
            }
            6..=8 => {
                let n = g.below(5);
                let nc = g.below(5);
                let (hc, kc) = (g.len_near(n), g.len_near(n));
                let h = if g.chance(80) {
                    random_spd(g, n)
                } else {
                    random_matrix(g, n, hc)
                };
                let k = random_matrix(g, nc, kc);
                let tau = DVector::from_fn(g.len_near(n), |_, _| g.small());
                let rhs = DVector::from_fn(g.len_near(nc), |_, _| g.small());
                let parent: Vec<Option<usize>> = if g.chance(80) {
                    (0..n).map(|i| i.checked_sub(1)).collect()
                } else {
                    random_parent(g, n)
                };
                vec![
                    ("solve_kkt", outcome(solve_kkt(&h, &tau, &k, &rhs))),
                    (
                        "solve_lambda_first",
                        outcome(solve_lambda_first(&h, &parent, &tau, &k, &rhs)),
                    ),
                    (
                        "solve_null_space",
                        outcome(solve_null_space(&h, &tau, &k, &rhs).map(|r| r.0)),
                    ),
                    (
                        "null_space",
                        outcome(null_space(&k, &rhs).map(|ns| (ns.g_null, ns.g_bias))),
                    ),
                    ("rank", Ok(vec![rank(&k) as f64])),
                ]
            }
            9 => {
                let (n, mob) = (g.below(5), g.below(4));
                let gn = random_matrix(g, n, mob);
                let tau = DVector::from_fn(g.len_near(n), |_, _| g.small());
                let actuated: Vec<usize> = (0..g.below(4)).map(|_| g.below(n + 2)).collect();
                vec![(
                    "actuator_forces",
                    outcome(actuator_forces(&gn, &tau, &actuated).map(|r| r.0)),
                )]
            }
            10 => {
                let mut b = ModelBuilder::new("fuzz");
                let n = 1 + g.below(3);
                for i in 1..=n {
                    b.add_body(
                        &format!("b{i}"),
                        i - 1,
                        Joint::revolute(Vec3::y()),
                        random_xform(g),
                        random_inertia(g),
                    );
                }
                let k = if g.chance(50) { g.below(n + 3) } else { usize::MAX };
                b.set_qpos0(k, &[g.value()]);
                vec![("set_qpos0 + build", outcome(b.build()))]
            }
            _ => {
                let all = models();
                let mut m = all[g.below(all.len())].clone();
                // a model edited by hand, without validate
                match g.below(4) {
                    0 if m.nb > 0 => {
                        let i = 1 + g.below(m.nb);
                        m.lambda[i] = i + g.below(2);
                    }
                    1 => m.nq += 1,
                    2 if m.nb > 0 => {
                        m.inertia[1 + g.below(m.nb)].m = g.value();
                    }
                    _ => m.opt.gravity = g.vec3(),
                }
                let q = m.qpos0.as_slice().to_vec();
                let z = vec![0.0; m.nv];
                let mut out = vec![("validate", outcome(m.validate()))];
                out.extend(state_calls(&m, &q, &z, &z, g));
                out
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(300))]
    #[test]
    fn mutated_mjcf_models(seed in any::<u64>()) {
        quiet_panics();
        mjcf_case(seed)?;
    }
}

proptest! {
    #![proptest_config(config(400))]
    #[test]
    fn random_states(seed in any::<u64>()) {
        quiet_panics();
        state_case(seed)?;
    }
}

proptest! {
    #![proptest_config(config(600))]
    #[test]
    fn random_calls(seed in any::<u64>()) {
        quiet_panics();
        call_case(seed)?;
    }
}
