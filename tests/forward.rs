//! The constrained pipeline (`mbd::mujoco::forward`) against MuJoCo 4.0.0, end to end.
//!
//! The fixtures `tests/fixtures/forward/*.json` hold MuJoCo's `mj_forward` and `mj_inverse` at the
//! settled states of the constraint scenes and the public corpus models, for both friction cones
//! and the three solvers (made by `tests/fixtures/make_forward_fixtures.py`). Every comparison
//! uses one measure, relative to the size of the quantity:
//!
//! ```text
//! rel = max_k |ours_k - mujoco_k| / max(max_k |mujoco_k|, floor)
//! ```
//!
//! with `floor` 1e-12, except for two quantities that are small differences of large terms:
//! `qacc` (at rest, `qacc_smooth + M^-1 J^T f` nearly cancels) is measured against the size of
//! `qacc_smooth`, and `qfrc_inverse` (near zero at the forward solution) against the size of the
//! bias forces.
//!
//! Contacts are matched by geom pair and position (the order of contacts is not part of the
//! comparison), and the rows of each contact follow its match. The worst entry of each quantity
//! is reported with its row type and element: `cargo test --release --test forward --
//! --nocapture`.

use mbd::mjcf;
use mbd::model::{Cone, Model, Solver};
use mbd::mujoco::constraint::EfcType;
use mbd::mujoco::forward::{has_constraints, Forward, ForwardData};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Tolerance of the rows (efc_J, efc_R, efc_aref, efc_pos) and of `qfrc_inverse` at MuJoCo's
/// `qacc`: the same formulas evaluated in another order (worst seen 2e-12).
const TOL_ROWS: f64 = 1e-10;
/// Tolerance of Newton's efc_force, qacc and qfrc_constraint: both converge to 1e-12 (worst seen
/// 5e-10, on the humanoid's elliptic cones).
const TOL_NEWTON: f64 = 1e-8;
/// Tolerance of PGS's and CG's efc_force, qacc and qfrc_constraint: both follow MuJoCo's
/// iterations, but stop at MuJoCo's tolerance, short of the optimum, where a difference of
/// rounding in their inputs (1e-13) can change the last iterations (worst seen 2.6e-6).
const TOL_ITERATIVE: f64 = 1e-5;
/// Tolerance of the contact geometry (pos, frame, dist), absolute, in metres and unit vectors.
const TOL_CONTACT: f64 = 1e-9;

#[derive(Deserialize)]
struct Fixture {
    name: String,
    model: String,
    nv: usize,
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    cones: BTreeMap<String, ConeEntry>,
}

#[derive(Deserialize)]
struct ConeEntry {
    contacts: Vec<Contact>,
    nefc: usize,
    ne: usize,
    nf: usize,
    nl: usize,
    efc_type: Vec<i64>,
    efc_id: Vec<usize>,
    #[serde(rename = "efc_J")]
    efc_j: Vec<Vec<f64>>,
    efc_pos: Vec<f64>,
    #[serde(rename = "efc_R")]
    efc_r: Vec<f64>,
    efc_aref: Vec<f64>,
    qacc_smooth: Vec<f64>,
    solvers: BTreeMap<String, SolverEntry>,
}

#[derive(Deserialize)]
struct Contact {
    geom: [usize; 2],
    geom_name: [String; 2],
    pos: [f64; 3],
    frame: [f64; 9],
    dist: f64,
    dim: usize,
    efc_address: i64,
}

#[derive(Deserialize)]
struct SolverEntry {
    efc_force: Vec<f64>,
    qfrc_constraint: Vec<f64>,
    qacc: Vec<f64>,
    qfrc_inverse: Vec<f64>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> Vec<Fixture> {
    let dir = root().join("tests/fixtures/forward");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 41,
        "expected the 7 scenes, 2 more scenes and the 32 corpus models"
    );
    paths
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// The fixture's model with the comparison options of `settled.comparison_options`.
fn model(f: &Fixture, cone: &str, solver: Solver) -> Model {
    let mut m = mjcf::load(root().join(Path::new(&f.model))).unwrap().model;
    assert_eq!(m.nv, f.nv, "{}", f.name);
    m.opt.cone = Cone::parse(cone).unwrap();
    m.opt.solver = solver;
    m.opt.tolerance = 1e-12;
    m.opt.iterations = 1000;
    m
}

fn run<'m>(m: &'m Model, f: &Fixture) -> Forward<'m> {
    let mut fw = Forward::new(m).unwrap();
    fw.options.ls_iterations = 100;
    let zeros = vec![0.0; m.nv];
    fw.forward(&f.qpos, &f.qvel, &zeros)
        .unwrap_or_else(|e| panic!("{}: {e}", f.name));
    fw
}

/// The worst entry of a comparison: relative error, index, and the scale it is relative to.
#[derive(Clone, Copy, Debug, Default)]
struct Worst {
    rel: f64,
    index: usize,
}

fn rel(ours: &[f64], theirs: &[f64]) -> Worst {
    rel_to(ours, theirs, 0.0)
}

/// [`rel`] relative to `max(max_k |mujoco_k|, floor)`: for quantities that are small
/// differences of large terms (the acceleration of a body at rest, the inverse force at the
/// forward solution), `floor` is the size of the terms.
fn rel_to(ours: &[f64], theirs: &[f64], floor: f64) -> Worst {
    assert_eq!(ours.len(), theirs.len());
    let scale = theirs.iter().fold(floor.max(1e-12), |a, x| a.max(x.abs()));
    let mut w = Worst::default();
    for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let e = (a - b).abs() / scale;
        if e > w.rel || e.is_nan() {
            w = Worst { rel: e, index: k };
        }
    }
    w
}

/// MuJoCo's `mjtConstraint` number of a row type.
fn type_number(t: EfcType) -> i64 {
    t as i64
}

/// Row `i` of MuJoCo's rows, named for a report.
fn row_name(m: &Model, e: &ConeEntry, i: usize) -> String {
    let t = e.efc_type[i];
    let id = e.efc_id[i];
    let what = match t {
        0 => "equality",
        1 => "friction dof",
        2 => "friction tendon",
        3 => "joint limit",
        4 => "tendon limit",
        _ => "contact",
    };
    if t >= 5 {
        let c = &e.contacts[id];
        format!("row {i} ({what} {}/{})", c.geom_name[0], c.geom_name[1])
    } else if t == 1 && id < m.nv {
        format!("row {i} ({what} {id}, joint '{}')", m.joints[m.dof_body[id]].name)
    } else {
        format!("row {i} ({what} {id})")
    }
}

/// Whether our geom pair is MuJoCo's: by name when MuJoCo's geoms are named (our reader may
/// number geoms differently when it skips one), else by index.
fn same_pair(m: &Model, ours: [usize; 2], c: &Contact) -> bool {
    (0..2).all(|k| {
        if c.geom_name[k].is_empty() {
            ours[k] == c.geom[k]
        } else {
            m.geoms[ours[k]].name == c.geom_name[k]
        }
    })
}

/// For each of MuJoCo's contacts, ours: same geom pair, nearest position. Panics naming the
/// contact when there is none, or when the counts differ.
fn match_contacts(name: &str, m: &Model, ours: &ForwardData, theirs: &[Contact]) -> Vec<usize> {
    let ours_c = ours.contacts();
    assert_eq!(
        ours_c.len(),
        theirs.len(),
        "{name}: {} contacts, MuJoCo has {}",
        ours_c.len(),
        theirs.len()
    );
    let mut used = vec![false; ours_c.len()];
    theirs
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let best = ours_c
                .iter()
                .enumerate()
                .filter(|(j, o)| !used[*j] && same_pair(m, o.geom, c))
                .map(|(j, o)| {
                    let d =
                        ((o.pos.x - c.pos[0]).powi(2) + (o.pos.y - c.pos[1]).powi(2) + (o.pos.z - c.pos[2]).powi(2))
                            .sqrt();
                    (j, d)
                })
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let Some((j, d)) = best else {
                panic!(
                    "{name}: MuJoCo's contact {k} ({}/{}) has no counterpart",
                    c.geom_name[0], c.geom_name[1]
                )
            };
            assert!(
                d < TOL_CONTACT,
                "{name}: contact {k} ({}/{}) is {d} m from ours",
                c.geom_name[0],
                c.geom_name[1]
            );
            used[j] = true;
            j
        })
        .collect()
}

/// Rows of one contact of dimension `dim` under `cone`.
fn contact_rows(dim: usize, cone: &str) -> usize {
    match (dim, cone) {
        (1, _) => 1,
        (d, "pyramidal") => 2 * (d - 1),
        (d, _) => d,
    }
}

/// For each of MuJoCo's rows, ours: the non-contact rows in order, the contact rows through the
/// contact match.
fn match_rows(name: &str, cone: &str, ours: &ForwardData, e: &ConeEntry, cmatch: &[usize]) -> Vec<usize> {
    let first_contact = e.ne + e.nf + e.nl;
    assert_eq!(
        (ours.efc.ne, ours.efc.nf, ours.efc.nl, ours.efc.nefc()),
        (e.ne, e.nf, e.nl, e.nefc),
        "{name} ({cone}): (ne, nf, nl, nefc)"
    );
    let mut rows: Vec<usize> = (0..first_contact).collect();
    rows.resize(e.nefc, usize::MAX);
    for (k, c) in e.contacts.iter().enumerate() {
        if c.efc_address < 0 {
            continue;
        }
        let o = &ours.contacts()[cmatch[k]];
        let oa = o
            .efc_address
            .unwrap_or_else(|| panic!("{name}: contact {k} has rows in MuJoCo, none here"));
        for r in 0..contact_rows(c.dim, cone) {
            rows[c.efc_address as usize + r] = oa + r;
        }
    }
    assert!(rows.iter().all(|&r| r != usize::MAX), "{name}: unmatched rows");
    rows
}

/// One line of the agreement table: the worst relative error per quantity.
#[derive(Default)]
struct Agreement {
    lines: Vec<String>,
    failures: Vec<String>,
}

impl Agreement {
    fn check(&mut self, what: &str, w: Worst, tol: f64, label: &dyn Fn(usize) -> String) -> f64 {
        if !(w.rel <= tol) {
            self.failures.push(format!(
                "{what}: relative error {:.2e} > {tol:.0e} at {}",
                w.rel,
                label(w.index)
            ));
        }
        w.rel
    }
}

/// The smooth acceleration at every settled state equals MuJoCo's: the part of the pipeline
/// before the solver (passive, actuator at zero controls, bias, `M^-1`).
#[test]
fn qacc_smooth_agrees_with_mujoco() {
    for f in fixtures() {
        for (cone, e) in &f.cones {
            let m = model(&f, cone, Solver::Newton);
            let mut fw = Forward::new(&m).unwrap();
            let zeros = vec![0.0; m.nv];
            // the smooth stages only: the rows are compared by `constrained_forward_agrees_with_mujoco`
            fw.forward(&f.qpos, &f.qvel, &zeros).ok();
            let w = rel(&fw.d.qacc_smooth, &e.qacc_smooth);
            assert!(
                w.rel < 1e-9,
                "{} ({cone}): qacc_smooth off by {:.2e} at dof {}",
                f.name,
                w.rel,
                w.index
            );
        }
    }
}

/// Contacts, rows, forces and accelerations of every fixture, every cone and solver.
#[test]
fn constrained_forward_agrees_with_mujoco() {
    let mut report = Agreement::default();
    for f in fixtures() {
        for (cone, e) in &f.cones {
            let mut worst_rows = [0.0f64; 3];
            for (solver_name, s) in &e.solvers {
                let solver = Solver::parse(solver_name).unwrap();
                let m = model(&f, cone, solver);
                // a model that cannot have a constraint row (no contact pair, limit, equality or
                // friction loss: acrobot, cartpole, ...) must have none in MuJoCo either
                assert!(
                    has_constraints(&m) || (e.nefc == 0 && e.contacts.is_empty()),
                    "{}: MuJoCo has rows where mbd finds none possible",
                    f.name
                );
                let fw = run(&m, &f);
                let d = &fw.d;
                let tag = format!("{} {cone} {solver_name}", f.name);
                // contacts: geometry
                let cm = match_contacts(&tag, &m, d, &e.contacts);
                for (k, c) in e.contacts.iter().enumerate() {
                    let o = &d.contacts()[cm[k]];
                    let fr: Vec<f64> = (0..9).map(|i| o.frame[(i / 3, i % 3)]).collect();
                    let err = (0..9)
                        .map(|i| (fr[i] - c.frame[i]).abs())
                        .fold((o.dist - c.dist).abs(), f64::max);
                    assert!(
                        err < TOL_CONTACT,
                        "{tag}: contact {k} ({}/{}): frame or dist off by {err}",
                        c.geom_name[0],
                        c.geom_name[1]
                    );
                }
                let rows = match_rows(&tag, cone, d, e, &cm);
                let label = |i: usize| format!("{tag} {}", row_name(&m, e, i));
                for (i, &r) in rows.iter().enumerate() {
                    assert_eq!(
                        type_number(d.efc.efc_type[r]),
                        e.efc_type[i],
                        "{tag}: type of {}",
                        row_name(&m, e, i)
                    );
                }
                // rows: J (flattened row by row), R, aref
                let (nv, jd) = (m.nv, d.efc.dense_j());
                let jo: Vec<f64> = rows
                    .iter()
                    .flat_map(|&r| (0..nv).map(move |c| (r, c)))
                    .map(|rc| jd[rc])
                    .collect();
                let jt: Vec<f64> = e.efc_j.iter().flatten().copied().collect();
                let permute = |v: &[f64]| rows.iter().map(|&r| v[r]).collect::<Vec<_>>();
                let wj = rel(&jo, &jt);
                worst_rows[0] = worst_rows[0].max(report.check(
                    "efc_J",
                    Worst {
                        index: wj.index / nv.max(1),
                        ..wj
                    },
                    TOL_ROWS,
                    &label,
                ));
                worst_rows[1] =
                    worst_rows[1].max(report.check("efc_R", rel(&permute(&d.efc.r), &e.efc_r), TOL_ROWS, &label));
                worst_rows[2] = worst_rows[2].max(report.check(
                    "efc_aref",
                    rel(&permute(&d.efc.aref), &e.efc_aref),
                    TOL_ROWS,
                    &label,
                ));
                let pos = rel(&permute(&d.efc.pos), &e.efc_pos);
                report.check("efc_pos", pos, TOL_ROWS, &label);
                // solution
                let tol = if solver == Solver::Newton {
                    TOL_NEWTON
                } else {
                    TOL_ITERATIVE
                };
                let wf = report.check("efc_force", rel(&permute(&d.efc_force), &s.efc_force), tol, &label);
                let dof = |k: usize| format!("{tag} dof {k}");
                // qacc = qacc_smooth + M^-1 J^T f: at rest a small difference of large terms,
                // measured against the size of qacc_smooth
                let amax = e.qacc_smooth.iter().fold(0.0f64, |a, x| a.max(x.abs()));
                let wa = report.check("qacc", rel_to(&d.qacc, &s.qacc, amax), tol, &dof);
                let wc = report.check(
                    "qfrc_constraint",
                    rel(&d.qfrc_constraint, &s.qfrc_constraint),
                    tol,
                    &dof,
                );
                // inverse at MuJoCo's qacc: MuJoCo's qfrc_inverse
                let mut fi = Forward::new(&m).unwrap();
                let inv = fi.inverse(&f.qpos, &f.qvel, &s.qacc).unwrap();
                // qfrc_inverse = M a + c - passive - J^T f is near zero at the forward solution:
                // measured against the size of the bias forces c
                let cmax = d.data.qfrc_bias.iter().fold(0.0f64, |a, x| a.max(x.abs()));
                let wi = report.check(
                    "qfrc_inverse",
                    rel_to(&inv.qfrc_inverse, &s.qfrc_inverse, cmax),
                    TOL_ROWS,
                    &dof,
                );
                report.lines.push(format!(
                    "{:<14} {:<9} {:<6} ncon {:>2} nefc {:>3}  force {:.1e}  qacc {:.1e}  qfrc_constraint {:.1e}  qfrc_inverse {:.1e}",
                    f.name,
                    cone,
                    solver_name,
                    e.contacts.len(),
                    e.nefc,
                    wf,
                    wa,
                    wc,
                    wi
                ));
            }
            report.lines.push(format!(
                "{:<14} {:<9} rows: efc_J {:.1e}  efc_R {:.1e}  efc_aref {:.1e}",
                f.name, cone, worst_rows[0], worst_rows[1], worst_rows[2]
            ));
        }
    }
    println!("{}", report.lines.join("\n"));
    assert!(report.failures.is_empty(), "{}", report.failures.join("\n"));
}
