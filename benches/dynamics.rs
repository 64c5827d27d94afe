//! Timing of the kernels that the book's "Performance" chapter sets beside Pinocchio 4.1.0 and
//! MuJoCo 4.0.0, on the test models:
//! - `rnea`, `crba`, `aba`: the recursive algorithms (against Pinocchio's `rnea`, `crba`, `aba`;
//!   `aba` also against MuJoCo's whole `mj_forward`, which finds no constraints in these models);
//! - `factor_i`, `solve_ld`: MuJoCo's sparse factorization and solve (against `mj_factorM` and
//!   `mj_solveM`);
//! - `smooth`: the com-based pipeline `mj_kinematics`, `mj_comPos`, `mj_comVel`, `mj_crb`,
//!   `mj_factorM`, `mj_rne` ([`forward_smooth_with`], against the same six MuJoCo calls).
//!
//! ```text
//! cargo bench --bench dynamics                  # criterion, every case
//! cargo bench --bench dynamics -- crba/panda    # criterion, cases whose name contains this
//! MBD_BENCH_PEERS=11:20 cargo bench --bench dynamics [-- panda]
//!     # one JSON line per model, timed by the rule of tools/peers/timing.h; the model may also
//!     # be chain_N or btree_K (the Performance chapter's scaling models)
//! MBD_BENCH_LOOP=crba/panda:2000 cargo bench --bench dynamics
//!     # a fixed number of calls and nothing else, to run under valgrind --tool=callgrind;
//!     # the model may also be chain_N or btree_K (the Performance chapter's scaling models)
//! ```
//! `python3 tools/peers/compare.py` runs the peer mode and the peers' drivers in rounds;
//! `python3 tools/peers/icount.py` counts instructions per call with the fixed-count mode.
//!
//! The state is drawn the way `tools/peers/bench_pinocchio.cpp` draws it: `q = integrate(neutral,
//! u)` with `u ~ U(-1, 1)^nv`, and `v`, `a`, `tau ~ U(-1, 1)^nv` (another generator, so other
//! numbers; the cost does not depend on them). Every call uses the allocation-free `*_with`
//! variant on one [`Workspace`] (or [`Data`]) per model, which is what Pinocchio's `Data` and
//! MuJoCo's `mjData` are to their functions. Our CRBA fills the lower triangle of H on the tree's
//! pattern, Pinocchio's the upper triangle; both include the forward kinematics they need.

#[path = "common/peers_timing.rs"]
mod peers_timing;

use criterion::Criterion;
use mbd::dynamics::{aba_with, crba, crba_with, rnea_with, Workspace};
use mbd::mjcf;
use mbd::model::{canned, JointType, Model};
use mbd::mujoco::{forward_smooth_with, Data};
use mbd::sparse::{factor_i_in_place, solve_ld, NoCount, PivotPolicy};
use nalgebra::{DMatrix, DVector};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// The benchmarked models: (label, file in `tests/fixtures/models`).
const MODELS: [(&str, &str); 5] = [
    ("chain_7_spatial", "chain_7_spatial.xml"),
    ("chain_30_spatial", "chain_30_spatial.xml"),
    ("tree_5", "tree_5.xml"),
    ("floating", "floating.xml"),
    ("panda", "panda.xml"),
];

/// The timed algorithms.
#[derive(Clone, Copy)]
enum Algo {
    Rnea,
    Crba,
    Aba,
    FactorI,
    SolveLd,
    Smooth,
}
const ALGORITHMS: [Algo; 6] = [
    Algo::Rnea,
    Algo::Crba,
    Algo::Aba,
    Algo::FactorI,
    Algo::SolveLd,
    Algo::Smooth,
];

impl Algo {
    fn name(self) -> &'static str {
        match self {
            Algo::Rnea => "rnea",
            Algo::Crba => "crba",
            Algo::Aba => "aba",
            Algo::FactorI => "factor_i",
            Algo::SolveLd => "solve_ld",
            Algo::Smooth => "smooth",
        }
    }
}

/// SplitMix64: a tiny seedable generator, enough for a benchmark state.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform on [-1, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vector(&mut self, n: usize) -> DVector<f64> {
        DVector::from_fn(n, |_, _| self.uniform())
    }
}

/// One model at one state, with its workspace and outputs.
struct Case {
    model: Model,
    q: DVector<f64>,
    v: DVector<f64>,
    a: DVector<f64>,
    tau: DVector<f64>,
    ws: Workspace,
    out: DVector<f64>,
    h: DMatrix<f64>,
    /// MuJoCo's storage for the com-based pipeline.
    data: Data,
    /// `qM` at `q` (legacy layout), the input of every `factor_i` call.
    qm: Vec<f64>,
    /// `qLD` and `1/D`: the factor of `qm`, the input of every `solve_ld` call.
    qld: Vec<f64>,
    diag_inv: Vec<f64>,
    /// `solve_ld`'s right-hand side and result.
    x: Vec<f64>,
}

impl Case {
    /// Loads `file` with the library's MJCF reader and draws the state.
    fn new(file: &str) -> Case {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/models")
            .join(file);
        match mjcf::load(&path) {
            Ok(loaded) => Case::with_model(loaded.model),
            Err(e) => panic!("cannot load {}: {e}", path.display()),
        }
    }

    /// The Performance chapter's scaling models: `chain_N` (N bodies, spatial axes,
    /// `canned::chain`) or `btree_K` (a balanced binary tree of 2^K - 1 bodies,
    /// `canned::binary_tree`), for the instruction-count slopes of `tools/peers/icount.py --slopes`.
    fn canned(label: &str) -> Case {
        let usage = "model: a label of MODELS, chain_N or btree_K";
        let model = if let Some(n) = label.strip_prefix("chain_") {
            canned::chain(n.parse().expect(usage), true)
        } else if let Some(k) = label.strip_prefix("btree_") {
            canned::binary_tree(k.parse().expect(usage))
        } else {
            panic!("{usage}, not {label}")
        };
        Case::with_model(model)
    }

    /// Draws the state of `model` (the same rule for every model).
    fn with_model(model: Model) -> Case {
        // Pinocchio's `neutral`: zero for scalar joints, identity quaternions, origin.
        let mut q = DVector::zeros(model.nq);
        for i in 1..=model.nb {
            q.as_mut_slice()[model.qs(i)].copy_from_slice(&model.joints[i].jtype.neutral());
        }
        let mut rng = SplitMix(1);
        let u = rng.vector(model.nv);
        model.integrate(q.as_mut_slice(), u.as_slice(), 1.0).unwrap();
        let (v, a, tau) = (rng.vector(model.nv), rng.vector(model.nv), rng.vector(model.nv));
        let qm = model
            .mj_layout()
            .from_dense(&crba(&model, q.as_slice()).expect("H of a test model"));
        let mut qld = qm.clone();
        let mut diag_inv = vec![0.0; model.nv];
        factor_i_in_place(
            model.mj_layout(),
            &mut qld,
            &mut diag_inv,
            PivotPolicy::Error,
            &mut Vec::new(),
            &mut NoCount,
        )
        .expect("factor of a test model");
        Case {
            ws: Workspace::new(&model),
            out: DVector::zeros(model.nv),
            h: DMatrix::zeros(model.nv, model.nv),
            data: Data::new(&model).expect("storage"),
            x: tau.as_slice().to_vec(),
            qm,
            qld,
            diag_inv,
            model,
            q,
            v,
            a,
            tau,
        }
    }

    /// One call of `algo`.
    #[inline]
    fn run(&mut self, algo: Algo) {
        let (m, ws) = (&self.model, &mut self.ws);
        let (q, v) = (black_box(self.q.as_slice()), black_box(self.v.as_slice()));
        match algo {
            Algo::Rnea => rnea_with(m, ws, q, v, black_box(self.a.as_slice()), None, self.out.as_mut_slice()),
            Algo::Crba => crba_with(m, ws, q, &mut self.h),
            Algo::Aba => aba_with(
                m,
                ws,
                q,
                v,
                black_box(self.tau.as_slice()),
                None,
                self.out.as_mut_slice(),
            )
            .expect("ABA on a test model"),
            Algo::FactorI => {
                // mj_factorM too starts by copying M into qLD
                self.qld.copy_from_slice(black_box(&self.qm));
                factor_i_in_place(
                    m.mj_layout(),
                    &mut self.qld,
                    &mut self.diag_inv,
                    PivotPolicy::Error,
                    &mut Vec::new(),
                    &mut NoCount,
                )
                .expect("factor of a test model");
            }
            Algo::SolveLd => {
                // mj_solveM too copies its right-hand side into the result first
                self.x.copy_from_slice(black_box(self.tau.as_slice()));
                solve_ld(m.mj_layout(), &self.qld, &self.diag_inv, &mut self.x, &mut NoCount).expect("sizes");
            }
            Algo::Smooth => forward_smooth_with(m, &mut self.data, q, v).expect("smooth dynamics of a test model"),
        }
        black_box((&self.out, &self.h, &self.qld, &self.x, &self.data.qfrc_bias));
    }

    fn describe(&self, label: &str) {
        let m = &self.model;
        let free = (1..=m.nb)
            .filter(|&i| matches!(m.joints[i].jtype, JointType::Free))
            .count();
        eprintln!(
            "[model] {label}: nb = {}, nq = {}, nv = {}, free joints = {free}",
            m.nb, m.nq, m.nv
        );
    }
}

/// The criterion benchmarks: `rnea/<model>`, `crba/<model>`, `aba/<model>`.
fn criterion_benches(c: &mut Criterion) {
    for (label, file) in MODELS {
        let mut case = Case::new(file);
        case.describe(label);
        for algo in ALGORITHMS {
            c.bench_function(&format!("{}/{label}", algo.name()), |b| b.iter(|| case.run(algo)));
        }
    }
}

/// `MBD_BENCH_LOOP=algo/model:count`: `count` calls and nothing else, for
/// `valgrind --tool=callgrind` (instruction counts do not depend on the machine's load; timings
/// do). Instructions per call = (Ir at 2n calls - Ir at n calls) / n. `model` is a label of
/// `MODELS`, or `chain_N` / `btree_K` (see `Case::canned`).
fn fixed_loop(spec: &str) {
    let usage = "MBD_BENCH_LOOP=algo/model:count";
    let (case, n) = spec.split_once(':').expect(usage);
    let n: usize = n.parse().expect(usage);
    let (name, label) = case.split_once('/').expect(usage);
    let algo = *ALGORITHMS.iter().find(|a| a.name() == name).expect("unknown algorithm");
    let mut case = match MODELS.iter().find(|m| m.0 == label) {
        Some(m) => Case::new(m.1),
        None => Case::canned(label),
    };
    case.describe(label);
    for _ in 0..n {
        case.run(algo);
    }
}

/// `MBD_BENCH_PEERS=REPEATS[:TARGET_MS]`: one JSON line per model with the median ns per call of
/// every algorithm, in the format of the peers' drivers (engine "mbd"), so that the three
/// engines can be run back to back on the same footing.
fn peers_style(spec: &str, only: Option<&str>) {
    let (repeats, target_ms) = peers_timing::parse_spec(spec);
    let cases: Vec<(String, Case)> = match only {
        // a scaling model, `chain_N` or `btree_K` (`python3 tools/peers/compare.py --slopes`)
        Some(o) if !MODELS.iter().any(|m| m.0 == o) => vec![(o.to_string(), Case::canned(o))],
        _ => MODELS
            .iter()
            .filter(|m| only.is_none_or(|o| o == m.0))
            .map(|&(label, file)| (label.to_string(), Case::new(file)))
            .collect(),
    };
    for (label, mut case) in cases {
        let times: Vec<String> = ALGORITHMS
            .iter()
            .map(|&algo| peers_timing::time_batches(repeats, target_ms, || case.run(algo)).json(algo.name()))
            .collect();
        println!(
            "{{\"engine\":\"mbd\",\"label\":\"{label}\",\"nv\":{},\"repeats\":{repeats},\"fn\":{{{}}}}}",
            case.model.nv,
            times.join(",")
        );
    }
}

fn main() {
    if let Ok(spec) = std::env::var("MBD_BENCH_LOOP") {
        fixed_loop(&spec);
        return;
    }
    if let Ok(spec) = std::env::var("MBD_BENCH_PEERS") {
        // `cargo bench` passes `--bench`; a further free argument selects one model.
        peers_style(&spec, peers_timing::only_arg().as_deref());
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(50)
        .configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
}
