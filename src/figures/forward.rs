//! Figures of the chapter "The constrained pipeline" ([`crate::mujoco::forward`]).
//!
//! - `forward_fwdinv.svg`: MuJoCo's forward/inverse check (`fwdinv`, [`fwdinv`]) along a
//!   trajectory of the Gymnasium humanoid dropped on its floor: at every sampled state the
//!   pipeline is run with each solver, `mj_inverse` is run at the resulting `qacc`, and the
//!   difference between the inverse force and the applied plus actuator force is plotted,
//!   relative to the humanoid's weight.
//! - `forward_contacts.svg`: the settled humanoid (MuJoCo's state after 1000 steps, from the
//!   fixture `tests/fixtures/forward/humanoid.json`) seen from the side and from above, with its
//!   active contacts: contact frames (normal and first tangent) and the contact forces
//!   ([`contact_force`]) as arrows.

use super::draw::{canvas, finish, Side, Sketch, GREY, INK};
use crate::error::{Error, Result};
use crate::model::{Cone, GeomType, Model, Solver};
use crate::mujoco::forward::{contact_force, fwdinv, Forward};
use crate::mujoco::integrator::{Simulator, State};
use crate::plot::{Chart, Series, PALETTE};
use crate::spatial::{quat_to_mat, Vec3};
use std::path::{Path, PathBuf};

/// The Gymnasium humanoid (MIT licence, `tests/fixtures/models/public/gymnasium/`).
const HUMANOID: &str = include_str!("../../tests/fixtures/models/public/gymnasium/humanoid.xml");
/// MuJoCo's settled humanoid state and its constrained forward pass.
const HUMANOID_SETTLED: &str = include_str!("../../tests/fixtures/forward/humanoid.json");

/// Residuals below this are drawn at this value on the log axis.
pub const FLOOR: f64 = 1e-16;

/// The humanoid model.
pub fn humanoid() -> Result<Model> {
    Ok(crate::mjcf::load_str(HUMANOID)?.model)
}

/// MuJoCo's settled humanoid state `(qpos, qvel)`.
pub fn humanoid_settled() -> Result<(Vec<f64>, Vec<f64>)> {
    let v: serde_json::Value = serde_json::from_str(HUMANOID_SETTLED).map_err(|e| Error::Model {
        file: "tests/fixtures/forward/humanoid.json".into(),
        line: e.line() as u32,
        why: e.to_string(),
    })?;
    let list = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default()
    };
    Ok((list("qpos"), list("qvel")))
}

/// The fwdinv residual `|qfrc_inverse - qfrc_applied - qfrc_actuator| / (m g)` along `steps`
/// Euler steps of the humanoid dropped from qpos0 (Newton), sampled every `every` steps, for
/// each solver: `(time, [Newton, CG, PGS], ncon)`.
pub fn fwdinv_trajectory(steps: usize, every: usize) -> Result<Vec<(f64, [f64; 3], usize)>> {
    let model = humanoid()?;
    let weight = (1..=model.nb).map(|i| model.inertia[i].m).sum::<f64>() * model.opt.gravity.norm();
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator)?;
    let mut per_solver: Vec<(Model, Solver)> = vec![];
    for s in [Solver::Newton, Solver::Cg, Solver::Pgs] {
        let mut m = model.clone();
        m.opt.solver = s;
        per_solver.push((m, s));
    }
    let mut out = vec![];
    let zeros = vec![0.0; model.nv];
    for k in 0..=steps {
        if k % every == 0 {
            let mut r = [0.0; 3];
            let mut ncon = 0;
            for (j, (m, _)) in per_solver.iter().enumerate() {
                let mut fw = Forward::new(m)?;
                r[j] = fwdinv(&mut fw, &sim.state.qpos, &sim.state.qvel, &zeros)?[1] / weight;
                ncon = fw.d.contacts().len();
            }
            out.push((sim.state.time, r, ncon));
        }
        if k < steps {
            sim.step()?;
        }
    }
    Ok(out)
}

/// The world end points and radius of a geom, for a drawing: capsules and cylinders as their
/// axis segment, other shapes as their centre with their largest half size.
fn geom_segment(model: &Model, fw: &Forward<'_>, g: usize) -> (Vec3, Vec3, f64) {
    let geom = &model.geoms[g];
    let x = &fw.d.data.x_0[geom.body];
    let centre = x.r + x.e.transpose() * geom.pos;
    let rot = x.e.transpose() * quat_to_mat(&geom.quat);
    match geom.gtype {
        GeomType::Capsule | GeomType::Cylinder => {
            let axis = rot * Vec3::z() * geom.size[1];
            (centre - axis, centre + axis, geom.size[0])
        }
        _ => {
            let r = geom.size.iter().copied().fold(0.0, f64::max);
            (centre, centre, r)
        }
    }
}

/// Draws the settled humanoid with its contacts: side view (x, z) and top view (x, y).
pub fn draw_contacts(path: &Path) -> Result<String> {
    let mut model = humanoid()?;
    model.opt.cone = Cone::Elliptic;
    let (qpos, qvel) = humanoid_settled()?;
    let mut fw = Forward::new(&model)?;
    fw.forward(&qpos, &qvel, &vec![0.0; model.nv])?;
    let weight = (1..=model.nb).map(|i| model.inertia[i].m).sum::<f64>() * model.opt.gravity.norm();
    let root = canvas(
        path,
        1000,
        520,
        "The settled humanoid's contacts: frames (normal blue, tangent green) and forces (red)",
    )?;
    let panels = root.split_evenly((1, 2));
    // the region the humanoid occupies
    let segs: Vec<(Vec3, Vec3, f64)> = (0..model.geoms.len())
        .filter(|&g| model.geoms[g].gtype != GeomType::Plane)
        .map(|g| geom_segment(&model, &fw, g))
        .collect();
    let (mut lo, mut hi) = (Vec3::repeat(f64::INFINITY), Vec3::repeat(f64::NEG_INFINITY));
    for (a, b, r) in &segs {
        for p in [a, b] {
            lo = lo.inf(&(p - Vec3::repeat(*r)));
            hi = hi.sup(&(p + Vec3::repeat(*r)));
        }
    }
    let pad = 0.25;
    let mut report = String::new();
    let mut total = 0.0;
    for (view, panel) in panels.into_iter().enumerate() {
        // view 0: side (x right, z up); view 1: top (x right, y up)
        let ax = if view == 0 { 2 } else { 1 };
        let sk = Sketch::new(
            panel,
            (lo.x - pad, hi.x + pad),
            (lo[ax].min(0.0) - pad, hi[ax] + pad),
            30.0,
        );
        let pr = |p: &Vec3| (p.x, p[ax]);
        if view == 0 {
            sk.line(&[(lo.x - pad, 0.0), (hi.x + pad, 0.0)], GREY, 2)?;
        }
        for (a, b, r) in &segs {
            let w = (2.0 * r * sk.scale()).round().max(2.0) as u32;
            if a == b {
                sk.dot(pr(a), (r * sk.scale()).round().max(2.0) as i32, LIGHT)?;
            } else {
                sk.line(&[pr(a), pr(b)], LIGHT, w)?;
            }
        }
        for (k, c) in fw.d.contacts().iter().enumerate() {
            let f = contact_force(&fw.d, k);
            let n = Vec3::new(c.frame[(0, 0)], c.frame[(0, 1)], c.frame[(0, 2)]);
            let t1 = Vec3::new(c.frame[(1, 0)], c.frame[(1, 1)], c.frame[(1, 2)]);
            let t2 = Vec3::new(c.frame[(2, 0)], c.frame[(2, 1)], c.frame[(2, 2)]);
            let world = n * f[0] + t1 * f[1] + t2 * f[2];
            if view == 0 {
                // the floor's contacts carry the weight; contacts between two bodies of the
                // humanoid push both ways and add nothing
                if model.geoms[c.geom[0]].body == 0 {
                    total += world.z;
                }
                report += &format!(
                    "    contact {k}: {}/{} at ({:.3}, {:.3}, {:.3}), dist {:.2e} m, normal force {:.2} N\n",
                    model.geoms[c.geom[0]].name, model.geoms[c.geom[1]].name, c.pos.x, c.pos.y, c.pos.z, c.dist, f[0]
                );
            }
            let p = c.pos;
            sk.arrow(pr(&p), pr(&(p + n * 0.08)), PALETTE[0], 2)?;
            sk.arrow(pr(&p), pr(&(p + t1 * 0.08)), PALETTE[2], 2)?;
            // forces drawn at 1.5 m per body weight
            sk.arrow(pr(&p), pr(&(p + world * (1.5 / weight))), PALETTE[1], 3)?;
            sk.dot(pr(&p), 4, INK)?;
        }
        let name = if view == 0 {
            "side view (x, z)"
        } else {
            "top view (x, y)"
        };
        sk.label_px((20, 20), name, Side::Right, 16, INK)?;
    }
    sk_note(&root)?;
    finish(&root)?;
    Ok(format!(
        "  settled humanoid: {} contacts, vertical force of the floor {:.2} N = {:.4} of its weight {:.2} N\n{report}",
        fw.d.contacts().len(),
        total,
        total / weight,
        weight
    ))
}

/// The light grey of bodies drawn for context.
const LIGHT: plotters::style::RGBColor = plotters::style::RGBColor(200, 200, 200);

/// The scale note at the bottom of the contact drawing.
fn sk_note(
    root: &plotters::drawing::DrawingArea<plotters::backend::SVGBackend<'_>, plotters::coord::Shift>,
) -> Result<()> {
    use plotters::prelude::*;
    let (w, h) = root.dim_in_pixel();
    root.draw(&Text::new(
        "frame axes 8 cm; forces 1.5 m per body weight; elliptic cone, Newton".to_string(),
        (w as i32 / 2 - 220, h as i32 - 22),
        ("sans-serif", 14).into_font().color(&INK),
    ))
    .map_err(|e| Error::Plot {
        title: "forward_contacts".into(),
        why: format!("{e:?}"),
    })
}

/// The worst relative error per quantity of one fixture, cone and solver against MuJoCo:
/// `max |ours - mujoco| / max |mujoco|` over the entries (rows matched through the contacts,
/// which are matched by geom pair and nearest position).
#[derive(Clone, Debug, Default)]
pub struct Agreement {
    /// Scene or corpus model.
    pub name: String,
    /// Cone.
    pub cone: String,
    /// Solver.
    pub solver: String,
    /// Contacts (ours, MuJoCo's).
    pub ncon: (usize, usize),
    /// Rows (ours, MuJoCo's).
    pub nefc: (usize, usize),
    /// efc_J, efc_R, efc_aref, efc_force, qacc, qfrc_inverse (at MuJoCo's qacc); NaN when the
    /// rows could not be matched.
    pub rel: [f64; 6],
}

fn rel_err(ours: &[f64], theirs: &[f64]) -> f64 {
    rel_err_to(ours, theirs, 0.0)
}

/// [`rel_err`] relative to `max(max |mujoco|, floor)` (for small differences of large terms).
fn rel_err_to(ours: &[f64], theirs: &[f64], floor: f64) -> f64 {
    if ours.len() != theirs.len() {
        return f64::NAN;
    }
    let scale = theirs.iter().fold(floor.max(1e-12), |a, x| a.max(x.abs()));
    ours.iter()
        .zip(theirs)
        .map(|(a, b)| (a - b).abs() / scale)
        .fold(0.0, |w, e| if e.is_nan() { f64::NAN } else { w.max(e) })
}

/// Compares the pipeline with every fixture in `dir` (`tests/fixtures/forward/*.json`, made by
/// `tests/fixtures/make_forward_fixtures.py`), with the fixtures' solver settings.
pub fn agreement(dir: &Path) -> Result<Vec<Agreement>> {
    let io = |e: std::io::Error| Error::Io {
        path: dir.display().to_string(),
        why: e.to_string(),
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let root = dir.join("../../..");
    let mut out = vec![];
    for p in paths {
        let v = super::read_json(&p)?;
        let nums = super::numbers;
        let base = crate::mjcf::load(root.join(v["model"].as_str().unwrap_or_default()))?.model;
        let (qpos, qvel) = (nums(&v["qpos"]), nums(&v["qvel"]));
        let zeros = vec![0.0; base.nv];
        for cone in ["pyramidal", "elliptic"] {
            let e = &v["cones"][cone];
            for solver in ["Newton", "CG", "PGS"] {
                let s = &e["solvers"][solver];
                let mut m = base.clone();
                m.opt.cone = Cone::parse(cone)?;
                m.opt.solver = Solver::parse(solver)?;
                m.opt.tolerance = 1e-12;
                m.opt.iterations = 1000;
                let theirs = e["contacts"].as_array().cloned().unwrap_or_default();
                let nefc = e["nefc"].as_u64().unwrap_or(0) as usize;
                let mut a = Agreement {
                    name: v["name"].as_str().unwrap_or_default().into(),
                    cone: cone.into(),
                    solver: solver.into(),
                    ncon: (0, theirs.len()),
                    nefc: (0, nefc),
                    rel: [f64::NAN; 6],
                };
                let mut fw = Forward::new(&m)?;
                fw.options.ls_iterations = 100;
                if let Err(err) = fw.forward(&qpos, &qvel, &zeros) {
                    // a failure shows as n/a in the table and is reported, not fatal to the book
                    println!("  {} {cone} {solver}: {err}", a.name);
                    out.push(a);
                    continue;
                }
                let d = &fw.d;
                a.ncon.0 = d.contacts().len();
                a.nefc.0 = d.efc.nefc();
                // rows: the non-contact ones in order, the contact ones through the contacts
                let first = (e["ne"].as_u64().unwrap_or(0)
                    + e["nf"].as_u64().unwrap_or(0)
                    + e["nl"].as_u64().unwrap_or(0)) as usize;
                let mut rows: Vec<Option<usize>> = (0..nefc).map(|i| (i < first).then_some(i)).collect();
                let mut used = vec![false; d.contacts().len()];
                for c in &theirs {
                    let (g, pos) = (nums(&c["geom"]), nums(&c["pos"]));
                    let names: Vec<&str> = (0..2).map(|k| c["geom_name"][k].as_str().unwrap_or_default()).collect();
                    // by name when named (our reader may number geoms differently), else by index
                    let same = |o: &crate::mujoco::collision::MjContact| {
                        (0..2).all(|k| {
                            if names[k].is_empty() {
                                o.geom[k] as f64 == g[k]
                            } else {
                                m.geoms[o.geom[k]].name == names[k]
                            }
                        })
                    };
                    let adr = c["efc_address"].as_i64().unwrap_or(-1);
                    let dim = c["dim"].as_u64().unwrap_or(1) as usize;
                    let best = d
                        .contacts()
                        .iter()
                        .enumerate()
                        .filter(|(j, o)| !used[*j] && same(o))
                        .map(|(j, o)| (j, (o.pos - Vec3::new(pos[0], pos[1], pos[2])).norm()))
                        .min_by(|x, y| x.1.total_cmp(&y.1));
                    if let (Some((j, _)), true) = (best, adr >= 0) {
                        used[j] = true;
                        let n = match (dim, cone) {
                            (1, _) => 1,
                            (k, "pyramidal") => 2 * (k - 1),
                            (k, _) => k,
                        };
                        if let Some(oa) = d.contacts()[j].efc_address {
                            for r in 0..n {
                                if let Some(slot) = rows.get_mut(adr as usize + r) {
                                    *slot = Some(oa + r);
                                }
                            }
                        }
                    }
                }
                let rows: Option<Vec<usize>> = rows.into_iter().collect();
                if let Some(rows) = rows.filter(|r| r.iter().all(|&i| i < d.efc.nefc())) {
                    let jd = d.efc.dense_j();
                    let jo: Vec<f64> = rows
                        .iter()
                        .flat_map(|&r| (0..m.nv).map(move |c| (r, c)))
                        .map(|rc| jd[rc])
                        .collect();
                    let jt: Vec<f64> = e["efc_J"]
                        .as_array()
                        .map(|a| a.iter().flat_map(nums).collect())
                        .unwrap_or_default();
                    let perm = |x: &[f64]| rows.iter().map(|&r| x[r]).collect::<Vec<f64>>();
                    a.rel[0] = rel_err(&jo, &jt);
                    a.rel[1] = rel_err(&perm(&d.efc.r), &nums(&e["efc_R"]));
                    a.rel[2] = rel_err(&perm(&d.efc.aref), &nums(&e["efc_aref"]));
                    a.rel[3] = rel_err(&perm(&d.efc_force), &nums(&s["efc_force"]));
                }
                // qacc relative to the size of qacc_smooth, qfrc_inverse to the size of the bias
                // forces (both are small differences of large terms at rest)
                let amax = nums(&e["qacc_smooth"]).iter().fold(0.0f64, |x, y| x.max(y.abs()));
                a.rel[4] = rel_err_to(&d.qacc, &nums(&s["qacc"]), amax);
                let cmax = d.data.qfrc_bias.iter().fold(0.0f64, |x, y| x.max(y.abs()));
                let mut fi = Forward::new(&m)?;
                if let Ok(inv) = fi.inverse(&qpos, &qvel, &nums(&s["qacc"])) {
                    a.rel[5] = rel_err_to(&inv.qfrc_inverse, &nums(&s["qfrc_inverse"]), cmax);
                }
                out.push(a);
            }
        }
    }
    Ok(out)
}

/// The agreement table of the chapter (markdown): per scene and cone the worst row errors over
/// the solvers, and per solver the force and acceleration errors.
pub fn agreement_table(rows: &[Agreement]) -> String {
    let f = |x: f64| {
        if x.is_nan() {
            "n/a".to_string()
        } else {
            format!("{x:.0e}")
        }
    };
    let mut t = String::from(
        "| model | cone | ncon (MuJoCo) | nefc (MuJoCo) | efc_J | efc_R | efc_aref | efc_force Newton / CG / PGS | qacc Newton / CG / PGS | qfrc_inverse |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for chunk in rows.chunks(3) {
        let a = &chunk[0];
        let worst = |k: usize| {
            chunk
                .iter()
                .map(|r| r.rel[k])
                .fold(0.0, |w: f64, e| if e.is_nan() { f64::NAN } else { w.max(e) })
        };
        t += &format!(
            "| `{}` | {} | {} ({}) | {} ({}) | {} | {} | {} | {} | {} | {} |\n",
            a.name,
            a.cone,
            a.ncon.0,
            a.ncon.1,
            a.nefc.0,
            a.nefc.1,
            f(worst(0)),
            f(worst(1)),
            f(worst(2)),
            chunk.iter().map(|r| f(r.rel[3])).collect::<Vec<_>>().join(" / "),
            chunk.iter().map(|r| f(r.rel[4])).collect::<Vec<_>>().join(" / "),
            f(worst(5)),
        );
    }
    t
}

/// Generates the chapter's figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    println!("The constrained pipeline (mj_forward with contacts, rows and solvers)");
    let rows = fwdinv_trajectory(600, 10)?;
    let mut chart = Chart::new(
        "Forward/inverse residual of the humanoid dropped on its floor",
        "time t (s)",
        "|qfrc_inverse - applied - actuator| / weight",
    )
    .log(false, true)
    .ranges(None, Some((FLOOR, 1.0)));
    for (j, name) in ["Newton", "CG", "PGS"].iter().enumerate() {
        let pts: Vec<(f64, f64)> = rows.iter().map(|(t, r, _)| (*t, r[j].max(FLOOR))).collect();
        let worst = rows.iter().map(|(_, r, _)| r[j]).fold(0.0, f64::max);
        println!("  fwdinv over 600 steps, {name}: worst {worst:.2e} of the weight");
        chart = chart.with(Series::line_points(name, pts));
    }
    let p = dir.join("forward_fwdinv.svg");
    chart.save_svg(&p)?;
    out.push(p);
    let p = dir.join("forward_contacts.svg");
    print!("{}", draw_contacts(&p)?);
    out.push(p);
    // the agreement table, written beside the figures' directory into `generated/`
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forward");
    let table = agreement_table(&agreement(&fixtures)?);
    super::write_generated(dir, "forward_agreement.md", &table)?;
    print!("{table}");
    Ok(out)
}
