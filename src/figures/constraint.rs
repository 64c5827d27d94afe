//! Figures and report of the chapters "The constraint model" and "Soft constraints" (MuJoCo's
//! `mj_makeConstraint`, `mj_makeImpedance`, `mj_referenceConstraint`).
//!
//! - `constraint_impedance.svg`: the impedance `d(r)` of [`impedance()`] against the violation
//!   for several `solimp`.
//! - `constraint_reference.svg`: the restoring acceleration `d aref` at rest of a limited slider
//!   pushed `x` past its limit, computed by [`make_constraint`], for several `solref` and one
//!   soft `solimp`; checked against the closed form `x / (tc zeta)^2` beyond the width.
//! - `constraint_box_incline.svg`: the contact rows of a box resting on a 20 degree incline:
//!   contact points, normals and the edges of the pyramidal friction cones, seen from the side.
//! - `constraint_soft_contact.svg`: one soft contact drawn as the spring-damper of its row: a 1 kg
//!   sphere 0.5 mm into a plane with MuJoCo's default `solref`/`solimp`, labelled with the
//!   `K`, `B`, `d`, `R`, `aref` and force the library computes (`Forward`, `efc.kbip`).
//! - `constraint_solimp_0.svg` ... `constraint_solimp_6.svg`: the interactive figure of
//!   "Soft constraints", one frame per impedance `d` of [`SLIDER_SOLIMP_D`]
//!   (`solimp = (d, d, 1 mm, 0.5, 2)`, the chapter's slider switches between them): a sphere
//!   released at rest touching a plane sinks into it and settles at the penetration
//!   [`steady_penetration`] `= g (1 - d) (timeconst dampratio dwidth / d)^2`, where the soft
//!   contact's reference acceleration `-K d r` balances the give `R f` of the weight.

use super::draw::{canvas, colour, finish, Side, Sketch, GREY, INK};
use crate::error::{Error, Result};
use crate::mjcf;
use crate::model::{Cone, Joint, JointType, Model, ModelBuilder, SolverParams};
use crate::mujoco::collision::collide_all;
use crate::mujoco::constraint::{impedance, make_constraint, Efc, Invweight};
use crate::mujoco::forward_smooth;
use crate::mujoco::integrator::{Simulator, State};
use crate::plot::{Chart, Series};
use crate::spatial::{Mat3, SpatialInertia, Vec3, Xform};
use std::path::{Path, PathBuf};

/// The scene of `constraint_box_incline.svg` (`tests/fixtures/models/box_incline.xml`).
pub const BOX_INCLINE_XML: &str = include_str!("../../tests/fixtures/models/box_incline.xml");

fn mismatch(what: &str, err: f64) -> Error {
    Error::Disagree {
        what: format!("figure check: {what}"),
        by: err,
    }
}

/// A body of mass 1 on a slide joint along z whose range `[0, 1]` is limited with `params`:
/// at `q = -x` its lower limit is violated by `x`.
pub fn limited_slider(params: SolverParams) -> Result<Model> {
    let mut b = ModelBuilder::new("limited slider");
    let mut j = Joint::new(JointType::Prismatic { axis: Vec3::z() });
    j.limited = true;
    j.range = [0.0, 1.0];
    j.limit_params = params;
    let inertia = SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::identity() * 0.01);
    b.add_body("slider", 0, j, Xform::identity(), inertia);
    b.build()
}

/// The limit row of [`limited_slider`] at `q = -x`, at rest: `(aref, d)`.
pub fn slider_reference(model: &Model, inv: &Invweight, x: f64) -> Result<(f64, f64)> {
    let d = forward_smooth(model, &[-x], &[0.0])?;
    let efc = make_constraint(model, &d, inv, &[-x], &[0.0], Vec::new())?;
    if efc.nefc() != 1 {
        return Err(mismatch("one limit row", efc.nefc() as f64));
    }
    Ok((efc.aref[0], efc.kbip[0][2]))
}

/// Prints the rows of `efc` as a table (type, id, pos, margin, A-hat, K, B, d, R, aref).
pub fn print_rows(efc: &Efc) {
    println!(
        "  {:>3} {:<20} {:>3} {:>11} {:>8} {:>10} {:>10} {:>8} {:>7} {:>10} {:>10}",
        "row", "type", "id", "pos", "margin", "A-hat", "K", "B", "d", "R", "aref"
    );
    for i in 0..efc.nefc() {
        let [k, b, d, _] = efc.kbip[i];
        println!(
            "  {:>3} {:<20} {:>3} {:>11.3e} {:>8.1e} {:>10.3e} {:>10.3e} {:>8.2} {:>7.4} {:>10.3e} {:>10.3e}",
            i,
            format!("{:?}", efc.efc_type[i]),
            efc.efc_id[i],
            efc.pos[i],
            efc.margin[i],
            efc.diag_approx[i],
            k,
            b,
            d,
            efc.r[i],
            efc.aref[i]
        );
    }
}

/// Writes the three figures into `dir` and prints the report.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("MuJoCo's constraint rows and their parameters (mj_makeConstraint, mj_makeImpedance)");

    // Figure 1: impedance curves.
    let cases: [(&str, [f64; 5]); 4] = [
        ("default (0.9, 0.95, 1 mm, 0.5, 2)", [0.9, 0.95, 0.001, 0.5, 2.0]),
        ("(0.9, 0.95, 1 mm, 0.5, 6): sharper", [0.9, 0.95, 0.001, 0.5, 6.0]),
        ("(0.5, 0.99, 1 mm, 0.2, 3)", [0.5, 0.99, 0.001, 0.2, 3.0]),
        ("(0.5, 0.99, 1 mm, 0.5, 1): linear", [0.5, 0.99, 0.001, 0.5, 1.0]),
    ];
    let path = dir.join("constraint_impedance.svg");
    let mut chart = Chart::new(
        "Impedance d(r) for several solimp = (d0, dwidth, width, midpoint, power)",
        "violation |r - margin| (mm)",
        "impedance d",
    )
    .ranges(Some((0.0, 1.5)), Some((0.45, 1.25)));
    for (label, s) in cases {
        let pts = (0..=150)
            .map(|k| {
                let r = 1e-5 * k as f64;
                (r * 1e3, impedance(&s, -r, 0.0).0)
            })
            .collect();
        chart = chart.with(Series::line(label, pts));
    }
    chart.save_svg(&path)?;
    out.push(path);
    let (d_mid, _) = impedance(&[0.9, 0.95, 0.001, 0.5, 2.0], -0.0005, 0.0);
    println!("  default solimp: d(0) = 0.9, d(width/2) = {d_mid:.4}, d(width) = 0.95");

    // Figure 2: reference acceleration of a limited slider.
    let default_imp = crate::model::SOLIMP_DEFAULT;
    let refs: [(&str, [f64; 2], [f64; 5]); 5] = [
        ("solref (0.02, 1): default", [0.02, 1.0], default_imp),
        ("solref (0.01, 1): stiffer", [0.01, 1.0], default_imp),
        ("solref (0.05, 1): softer", [0.05, 1.0], default_imp),
        ("solref (-2000, -20): direct k, b", [-2000.0, -20.0], default_imp),
        (
            "default solref, solimp (0.3, 0.99, 2 mm, 0.5, 2)",
            [0.02, 1.0],
            [0.3, 0.99, 0.002, 0.5, 2.0],
        ),
    ];
    let path = dir.join("constraint_reference.svg");
    let mut chart = Chart::new(
        "Restoring acceleration d · aref at rest of a slider pushed x past its limit",
        "penetration x (mm)",
        "d(x) · aref = d(x)² K x  (m/s²)",
    );
    for (label, solref, solimp) in refs {
        let model = limited_slider(SolverParams { solref, solimp })?;
        let inv = Invweight::new(&model)?;
        let mut pts = Vec::new();
        for k in 1..=60 {
            let x = 5e-5 * k as f64;
            let (aref, d) = slider_reference(&model, &inv, x)?;
            pts.push((x * 1e3, d * aref));
        }
        if solref[0] > 0.0 {
            // beyond the width d = dmax: d aref = dmax^2 K x = x / (tc^2 zeta^2), whatever dmax
            let (x, dmax) = (0.003, solimp[1]);
            let (aref, d) = slider_reference(&model, &inv, x)?;
            let expected = x / (solref[0] * solref[0] * solref[1] * solref[1]);
            if (d - dmax).abs() > 1e-15 || (d * aref - expected).abs() > 1e-12 * expected {
                return Err(mismatch("d aref against x / (tc^2 zeta^2)", d * aref - expected));
            }
            println!(
                "  {label}: d aref at 3 mm = {:.4} m/s² (closed form x / (tc zeta)^2 = {expected:.4})",
                d * aref
            );
        }
        chart = chart.with(Series::line(label, pts));
    }
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 3: the rows of a box on an incline.
    out.push(box_incline(dir)?);

    // Drawing of "Soft constraints": one soft contact with the library's numbers.
    out.push(soft_contact(dir)?);

    // Figure 4, interactive: one frame per solimp d, the same axes in every frame.
    println!(
        "  sphere on a plane, solimp (d, d, 1 mm, 0.5, 2), solref (0.02, 1), Euler h = {} ms:",
        SPHERE_STEP * 1e3
    );
    for (i, &d) in SLIDER_SOLIMP_D.iter().enumerate() {
        let run = sphere_settling(d, SLIDER_T_END)?;
        let last = run.last().map_or(0.0, |p| p.1);
        let predicted = steady_penetration(d, [0.02, 1.0], SPHERE_G);
        println!(
            "    d = {d:<5}: settles at {:.4} mm, predicted {:.4} mm",
            last * 1e3,
            predicted * 1e3
        );
        let path = dir.join(format!("constraint_solimp_{i}.svg"));
        Chart::new(
            &format!("Sphere resting on a plane, solimp d0 = dwidth = {d}, solref (0.02, 1)"),
            "time t (s)",
            "penetration (mm)",
        )
        .ranges(Some((0.0, SLIDER_T_END)), Some((0.0, 2.5)))
        .with(Series::line(
            &format!("simulated: settles at {:.3} mm", last * 1e3),
            run.iter().map(|p| (p.0, p.1 * 1e3)).collect(),
        ))
        .with(Series::dashed(
            &format!("g (1 - d) timeconst^2 = {:.3} mm", predicted * 1e3),
            vec![(0.0, predicted * 1e3), (SLIDER_T_END, predicted * 1e3)],
        ))
        .save_svg(&path)?;
        out.push(path);
    }
    Ok(out)
}

/// The impedances `d` (`solimp = (d, d, 1 mm, 0.5, 2)`) of the interactive figure, one frame
/// each, softest first.
pub const SLIDER_SOLIMP_D: [f64; 7] = [0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999];
/// The frame the slider shows first (`d` = 0.9, MuJoCo's default `d0`).
pub const SLIDER_SOLIMP_DEFAULT: usize = 3;
/// Length (s) of each frame's run.
pub const SLIDER_T_END: f64 = 0.3;
/// Time step (s) of the sphere's runs (MuJoCo's default).
pub const SPHERE_STEP: f64 = 0.002;
/// Gravity (m/s²) of the sphere's scene.
pub const SPHERE_G: f64 = 9.81;
/// Radius (m) of the sphere.
pub const SPHERE_RADIUS: f64 = 0.1;

/// The scene of the interactive figure: a sphere of mass 1 kg and radius [`SPHERE_RADIUS`] on a
/// free joint, touching a plane, with one frictionless contact row (`condim` 1) whose
/// `solimp = (d, d, 0.001, 0.5, 2)` and `solref = (0.02, 1)`.
pub fn sphere_on_plane_xml(d: f64) -> String {
    format!(
        r#"<mujoco model="sphere_on_plane">
  <option timestep="{SPHERE_STEP}" integrator="Euler" solver="Newton" gravity="0 0 -{SPHERE_G}"/>
  <default>
    <geom condim="1" solref="0.02 1" solimp="{d} {d} 0.001 0.5 2"/>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="ball" pos="0 0 {SPHERE_RADIUS}">
      <joint name="free" type="free"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.004 0.004 0.004"/>
      <geom name="ball" type="sphere" size="{SPHERE_RADIUS}"/>
    </body>
  </worldbody>
</mujoco>"#
    )
}

/// The sphere of [`sphere_on_plane_xml`] released at rest touching the plane, stepped by
/// MuJoCo's semi-implicit Euler for `t_end` seconds: `(t, penetration)` at every step (m,
/// positive into the plane).
pub fn sphere_settling(d: f64, t_end: f64) -> Result<Vec<(f64, f64)>> {
    let model = mjcf::load_str(&sphere_on_plane_xml(d))?.model;
    let mut sim = Simulator::new(&model, State::reference(&model), crate::model::Integrator::Euler)?;
    let steps = (t_end / SPHERE_STEP).round() as usize;
    let mut out = Vec::with_capacity(steps + 1);
    for k in 0..=steps {
        out.push((k as f64 * SPHERE_STEP, SPHERE_RADIUS - sim.state.qpos[2]));
        if k < steps {
            sim.step()?;
        }
    }
    Ok(out)
}

// ANCHOR: steady_penetration
/// The penetration at which a body resting on one frictionless soft contact settles, for
/// `solimp = (d, dwidth, ...)` with `d` constant over the penetration (`d0 = dwidth = d`),
/// `solref = (timeconst, dampratio)` and gravity `g`. At rest `qacc = 0`, so the row's force
/// carries the weight, `A f = g`; the soft model's force is `f = (aref - a0) / (A + R)` with
/// `a0 = -g`, `R = A (1 - d) / d` and `aref = -K d r`, `K = 1 / (dwidth timeconst dampratio)^2`;
/// together `aref = g (1 - d) / d`, so `-r = g (1 - d) / (K d^2)`.
pub fn steady_penetration(d: f64, solref: [f64; 2], g: f64) -> f64 {
    let [timeconst, dampratio] = solref;
    let k = 1.0 / (d * timeconst * dampratio).powi(2);
    g * (1.0 - d) / (k * d * d)
}
// ANCHOR_END: steady_penetration

/// `constraint_box_incline.svg` and the table of its rows.
fn box_incline(dir: &Path) -> Result<PathBuf> {
    let mut model = mjcf::load_str(BOX_INCLINE_XML)?.model;
    model.opt.cone = Cone::Pyramidal;
    let q = model.qpos0.as_slice().to_vec();
    let v = vec![0.0; model.nv];
    let inv = Invweight::new(&model)?;
    let d = forward_smooth(&model, &q, &v)?;
    let contacts = collide_all(&model, &d)?;
    let efc = make_constraint(&model, &d, &inv, &q, &v, contacts)?;
    println!(
        "  box on a 20° incline, pyramidal cones: {} contacts, {} rows",
        efc.contacts.len(),
        efc.nefc()
    );
    print_rows(&efc);
    let path = dir.join("constraint_box_incline.svg");
    draw_box_incline(&path, &model, &q, &efc)?;
    Ok(path)
}

/// Draws the side view of [`box_incline`].
fn draw_box_incline(path: &Path, model: &Model, q: &[f64], efc: &Efc) -> Result<()> {
    let root = canvas(
        path,
        900,
        560,
        "Box on a 20° incline: contact frames and pyramid edges n ± μ t (side view)",
    )?;
    let xz = |p: &Vec3| (p.x, p.z);
    let s = Sketch::new(root.clone(), (-0.25, 0.3), (-0.12, 0.22), 30.0);
    let n: Vec3 = efc.contacts[0].frame.row(0).transpose();
    let along = Vec3::new(n.z, 0.0, -n.x);
    s.line(&[xz(&(along * -0.25)), xz(&(along * 0.32))], INK, 3)?;
    // box outline: the corners of its face y = +0.1, in order
    let kin = crate::kinematics::forward_kinematics(model, q)?;
    let g = &model.geoms[1];
    let corners: Vec<(f64, f64)> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0)]
        .iter()
        .map(|&(a, c)| xz(&kin.point(g.body, &Vec3::new(a * g.size[0], g.size[1], c * g.size[2]))))
        .collect();
    s.fill(&corners, GREY, 0.25)?;
    s.line(&corners, INK, 2)?;
    let scale = 0.09;
    let mut labelled = false;
    for c in &efc.contacts {
        let p = c.pos;
        s.dot(xz(&p), 5, colour(0))?;
        if c.pos.y < 0.0 {
            continue; // the contact behind it draws the same arrows
        }
        let n: Vec3 = c.frame.row(0).transpose();
        let t2: Vec3 = c.frame.row(2).transpose();
        let mu = c.friction[1];
        s.arrow(xz(&p), xz(&(p + n * scale)), colour(1), 3)?;
        for sign in [1.0, -1.0] {
            let e = (n + t2 * (sign * mu)) * scale;
            s.arrow(xz(&p), xz(&(p + e)), colour(2), 2)?;
        }
        if !labelled && p.x < 0.0 {
            labelled = true;
            s.label(xz(&(p + n * scale)), "n", Side::Above, 15, colour(1))?;
            let tip = p + (n - t2 * mu) * scale;
            s.label(xz(&tip), "  n − μ t2", Side::Right, 14, colour(2))?;
            let tip = p + (n + t2 * mu) * scale;
            s.label(xz(&tip), "n + μ t2  ", Side::Left, 14, colour(2))?;
        }
    }
    s.label(
        (-0.24, 0.2),
        &format!(
            "{} contacts (two behind each drawn point), each with t1 out of the page:",
            efc.contacts.len()
        ),
        Side::Right,
        14,
        INK,
    )?;
    s.label(
        (-0.24, 0.18),
        "4 rows per contact: S0 ± μ S1 (edges along t1) and S0 ± μ S2 (drawn)",
        Side::Right,
        14,
        INK,
    )?;
    s.arrow((0.22, 0.12), (0.22, 0.05), GREY, 2)?;
    s.label((0.22, 0.05), "gravity", Side::Below, 13, GREY)?;
    finish(&root)
}

/// The scene of `constraint_soft_contact.svg`: a 1 kg sphere of radius 0.1 m on a plane, one
/// frictionless contact (`condim` 1) with MuJoCo's default `solref` and `solimp`.
pub const SOFT_CONTACT_XML: &str = r#"<mujoco model="soft contact">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" condim="1"/>
    <body name="ball">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1" condim="1"/>
    </body>
  </worldbody>
</mujoco>"#;

/// Penetration (m) of the sphere of [`SOFT_CONTACT_XML`] in the drawing.
pub const SOFT_CONTACT_PENETRATION: f64 = 0.0005;

/// The row of [`SOFT_CONTACT_XML`] at rest, [`SOFT_CONTACT_PENETRATION`] deep, as the library's
/// `mj_forward` computes it: `[K, B, d, R, aref, force, dist, margin - gap]` (`MjContact::includemargin`).
pub fn soft_contact_row() -> Result<[f64; 8]> {
    let model = mjcf::load_str(SOFT_CONTACT_XML)?.model;
    let mut q = model.qpos0.as_slice().to_vec();
    q[2] = 0.1 - SOFT_CONTACT_PENETRATION;
    let v = vec![0.0; model.nv];
    let mut fw = crate::mujoco::forward::Forward::new(&model)?;
    let d = fw.forward(&q, &v, &v)?;
    let efc = &d.efc;
    if efc.nefc() != 1 || efc.contacts.len() != 1 {
        return Err(mismatch("rows of the soft contact (expected 1)", efc.nefc() as f64));
    }
    let [k, b, imp, _] = efc.kbip[0];
    let c = &efc.contacts[0];
    Ok([
        k,
        b,
        imp,
        efc.r[0],
        efc.aref[0],
        d.efc_force[0],
        c.dist,
        c.includemargin(),
    ])
}

/// `constraint_soft_contact.svg`: the sphere, its contact frame, the penetration `r`, the margin
/// and the row drawn as a spring `K` and dashpot `B` in series with the impedance `d` (not to
/// scale: the penetration is exaggerated).
fn soft_contact(dir: &Path) -> Result<PathBuf> {
    let [k, b, imp, r, aref, force, dist, margin] = soft_contact_row()?;
    println!(
        "  soft contact, 1 kg sphere 0.5 mm deep, default solref/solimp: K = {k:.1}, B = {b:.3}, d = {imp:.4}, \
         R = {r:.4}, aref = {aref:.4}, f = {force:.4}"
    );
    let path = dir.join("constraint_soft_contact.svg");
    draw_soft_contact(&path, [k, b, imp, r, aref, force, dist, margin])?;
    Ok(path)
}

/// Draws [`soft_contact`] from its row `[K, B, d, R, aref, force, dist, margin - gap]`.
fn draw_soft_contact(path: &Path, row: [f64; 8]) -> Result<()> {
    let [k, b, imp, r, aref, force, dist, margin] = row;
    let root = canvas(
        path,
        900,
        600,
        "One soft contact: a 1 kg sphere 0.5 mm into a plane, default solref / solimp",
    )?;
    let s = Sketch::new(root.clone(), (-1.3, 2.1), (-0.55, 1.15), 20.0);
    // floor with hatching
    s.line(&[(-1.25, 0.0), (2.05, 0.0)], INK, 3)?;
    for i in 0..34 {
        let x = -1.22 + 0.1 * i as f64;
        s.line(&[(x, 0.0), (x - 0.07, -0.07)], GREY, 1)?;
    }
    // sphere, sunk by an exaggerated depth
    let (rad, pen) = (0.6, 0.12);
    let c = (0.0, rad - pen);
    let circle: Vec<(f64, f64)> = (0..=72)
        .map(|i| {
            let t = std::f64::consts::TAU * i as f64 / 72.0;
            (c.0 + rad * t.cos(), c.1 + rad * t.sin())
        })
        .collect();
    s.fill(&circle, GREY, 0.2)?;
    s.line(&circle, INK, 2)?;
    s.com(c, 8, INK)?;
    s.label(c, "m = 1 kg, radius 0.1 m", Side::Above, 15, INK)?;
    // contact frame at the midpoint of the overlap
    let p = (0.0, -pen / 2.0);
    s.dot(p, 5, colour(0))?;
    s.arrow(p, (0.0, 0.3), colour(1), 3)?;
    s.label((0.0, 0.2), "normal n (row 0)", Side::Right, 14, colour(1))?;
    s.arrow(p, (0.45, -pen / 2.0), colour(2), 2)?;
    s.label((0.45, -pen / 2.0), "t1", Side::Below, 14, colour(2))?;
    s.out_of_page((-0.12, -pen / 2.0), 7, colour(2))?;
    s.label((-0.12, -pen / 2.0), "t2", Side::Left, 14, colour(2))?;
    s.label((0.0, -pen - 0.02), "contact pos", Side::Below, 13, colour(0))?;
    // penetration bracket on the left
    let xb = -0.75;
    s.line(&[(xb - 0.05, 0.0), (xb + 0.05, 0.0)], colour(3), 2)?;
    s.line(&[(xb - 0.05, -pen), (xb + 0.05, -pen)], colour(3), 2)?;
    s.line(&[(xb, 0.0), (xb, -pen)], colour(3), 2)?;
    s.dashed((xb + 0.05, -pen), (-0.3, -pen), colour(3))?;
    s.label(
        (xb, -pen),
        &format!("r − m = dist − margin = {:.4} mm", (dist - margin) * 1e3),
        Side::Below,
        14,
        colour(3),
    )?;
    s.label(
        (-1.25, -0.3),
        &format!(
            "margin − gap = {margin} m: a row is made while dist < margin − gap (dist = {:.4} mm, drawn exaggerated)",
            dist * 1e3
        ),
        Side::Right,
        14,
        INK,
    )?;
    // spring and dashpot from the floor up to a bar carried by the sphere
    let (xs, xd, y0, y1) = (1.2, 1.6, 0.0, 0.95);
    let x_surface = c.0 + (rad * rad - 0.35f64 * 0.35).sqrt();
    s.line(&[(x_surface, c.1 + 0.35), (xd + 0.15, c.1 + 0.35)], INK, 2)?;
    s.line(&[(xs - 0.12, y1), (xd + 0.12, y1)], INK, 3)?;
    s.line(&[((xs + xd) / 2.0, y1), ((xs + xd) / 2.0, c.1 + 0.35)], INK, 2)?;
    // spring: zigzag
    let mut zig = vec![(xs, y0), (xs, 0.15)];
    for i in 0..8 {
        let y = 0.15 + 0.075 * (i as f64 + 0.5);
        zig.push((xs + if i % 2 == 0 { 0.08 } else { -0.08 }, y));
    }
    zig.extend([(xs, 0.75), (xs, y1)]);
    s.line(&zig, colour(0), 2)?;
    // dashpot: cylinder and piston
    s.line(&[(xd, y0), (xd, 0.3)], colour(4), 2)?;
    s.line(
        &[(xd - 0.09, 0.6), (xd - 0.09, 0.3), (xd + 0.09, 0.3), (xd + 0.09, 0.6)],
        colour(4),
        2,
    )?;
    s.line(&[(xd - 0.06, 0.45), (xd + 0.06, 0.45)], colour(4), 3)?;
    s.line(&[(xd, 0.45), (xd, y1)], colour(4), 2)?;
    s.label((xs - 0.1, 0.45), &format!("K = {k:.1} 1/s²"), Side::Left, 15, colour(0))?;
    s.label((xd + 0.1, 0.45), &format!("B = {b:.3} 1/s"), Side::Right, 15, colour(4))?;
    s.label(
        ((xs + xd) / 2.0, y1 + 0.03),
        &format!("impedance d = {imp:.4}, R = (1 − d)/d · Â = {r:.4}"),
        Side::Above,
        15,
        INK,
    )?;
    let lines = [
        "solref = (0.02, 1): K = 1/(dwidth² tc² ζ²), B = 2/(dwidth tc)".to_string(),
        "solimp = (0.9, 0.95, 1 mm, 0.5, 2): d(r) from mj_makeImpedance".to_string(),
        format!("aref = −B v − K d r = {aref:.4} m/s², force f = {force:.4} N"),
    ];
    for (i, t) in lines.iter().enumerate() {
        s.label((-1.25, -0.36 - 0.06 * (i + 1) as f64), t, Side::Right, 14, INK)?;
    }
    finish(&root)
}
