//! Schematic drawings of the book, computed from the library's own models so that a picture
//! cannot disagree with the code: kinematic trees from `lambda`, frames and vectors from
//! `mj_comPos`, a free-body diagram from the forces RNEA returns, a velocity field from
//! `Xform::apply_motion`, a composite body from CRBA's `I^c`, and articulated inertias from ABA's
//! `I^A`. Each function checks what it draws against a second route (stated in its doc comment)
//! and fails rather than draw a wrong picture. The chapter modules call these from their `run`.

use super::draw::{canvas, colour, finish, Side, Sketch, GREY, INK};
use crate::dynamics::{aba_with, crba_with, rnea_with, Workspace};
use crate::error::{Error, Result};
use crate::kinematics::forward_kinematics;
use crate::model::{canned, Model};
use crate::mujoco::forward_smooth;
use crate::spatial::{skew, xlt, Mat3, Mat6, Motion, Vec3};
use nalgebra::{DMatrix, Matrix3x6, Vector3};
use std::path::{Path, PathBuf};

fn mismatch(what: &str, err: f64) -> Error {
    Error::Singular {
        what: format!("figure check: {what}"),
        why: format!("the drawn quantity and its independent check differ by {err:e}"),
    }
}

/// Plane coordinates (x, z) of a world point: the drawings of planar models look along +y, with
/// x to the right and z up (so +y points into the page).
fn xz(p: &Vec3) -> (f64, f64) {
    (p.x, p.z)
}

/// The bounding box `((x_lo, x_hi), (z_lo, z_hi))` of plane points.
fn bounds(pts: &[(f64, f64)]) -> ((f64, f64), (f64, f64)) {
    pts.iter().fold(
        ((f64::MAX, f64::MIN), (f64::MAX, f64::MIN)),
        |((x0, x1), (z0, z1)), p| ((x0.min(p.0), x1.max(p.0)), (z0.min(p.1), z1.max(p.1))),
    )
}

/// Lines of text centred at their points (a figure's caption inside the drawing).
fn caption(s: &Sketch, lines: &[((f64, f64), &str)]) -> Result<()> {
    for &(at, text) in lines {
        s.label(at, text, Side::Centre, 14, INK)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Joints chapter: kinematic trees.

/// x positions of the nodes of a tree given by `lambda` (leaves one unit apart in depth-first
/// order, parents centred over their children) and depths (base 0).
fn tree_layout(lambda: &[usize]) -> (Vec<f64>, Vec<usize>) {
    let n = lambda.len();
    let mut children = vec![Vec::new(); n];
    for i in 1..n {
        children[lambda[i]].push(i);
    }
    let mut depth = vec![0; n];
    for i in 1..n {
        depth[i] = depth[lambda[i]] + 1;
    }
    let mut x = vec![0.0; n];
    let mut next_leaf = 0.0;
    // Iterative post-order walk (bodies are numbered parents first, so a reverse sweep would do
    // for the centring, but the leaves must be numbered in depth-first order).
    let mut stack = vec![(0usize, false)];
    while let Some((i, done)) = stack.pop() {
        if done || children[i].is_empty() {
            if children[i].is_empty() {
                x[i] = next_leaf;
                next_leaf += 1.0;
            } else {
                let c = &children[i];
                x[i] = 0.5 * (x[c[0]] + x[c[c.len() - 1]]);
            }
        } else {
            stack.push((i, true));
            for &c in children[i].iter().rev() {
                stack.push((c, false));
            }
        }
    }
    (x, depth)
}

fn tree_panel(s: &Sketch, model: &Model, title: &str, w: f64, h: f64) -> Result<()> {
    let (x, depth) = tree_layout(&model.lambda);
    let leaves = x.iter().cloned().fold(0.0, f64::max) + 1.0;
    let levels = *depth.iter().max().unwrap_or(&0) as f64 + 1.0;
    let dx = ((w - 120.0) / leaves).min(150.0);
    let x_off = 0.5 * (w - dx * (leaves - 1.0));
    let top = h - 70.0;
    let dy = ((h - 190.0) / (levels - 1.0).max(1.0)).min(110.0);
    let pos = |i: usize| (x_off + dx * x[i], top - dy * depth[i] as f64);
    s.label((0.5 * w, h - 22.0), title, Side::Centre, 17, INK)?;
    for i in 1..=model.nb {
        let (a, b) = (pos(model.lambda[i]), pos(i));
        s.line(&[a, b], GREY, 2)?;
        let j = &model.joints[i];
        // Slanted edges are labelled nearer the parent, vertical ones nearer the child, so that
        // the labels of siblings do not run into each other.
        let t = if (b.0 - a.0).abs() > 1.0 { 0.3 } else { 0.62 };
        let mid = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
        let text = format!("{} ({} dof)", j.jtype.name(), j.jtype.nv());
        let side = if b.0 < a.0 - 1.0 { Side::Left } else { Side::Right };
        s.label(mid, &text, side, 13, colour(1))?;
    }
    let base = pos(0);
    s.fill(
        &[
            (base.0 - 38.0, base.1 - 14.0),
            (base.0 + 38.0, base.1 - 14.0),
            (base.0 + 38.0, base.1 + 14.0),
            (base.0 - 38.0, base.1 + 14.0),
        ],
        GREY,
        0.5,
    )?;
    s.label(base, "0: base", Side::Centre, 15, INK)?;
    for i in 1..=model.nb {
        let p = pos(i);
        s.joint(p, 17, colour(0))?;
        s.label(p, &i.to_string(), Side::Centre, 16, INK)?;
        s.label_px(
            {
                let c = s.px(p);
                (c.0 + 14, c.1)
            },
            &model.body_name[i],
            Side::Right,
            12,
            GREY,
        )?;
    }
    let lambda: Vec<String> = model.lambda[1..].iter().map(|p| p.to_string()).collect();
    s.label(
        (0.5 * w, 52.0),
        &format!("parent array λ(1..{}) = [{}]", model.nb, lambda.join(", ")),
        Side::Centre,
        15,
        INK,
    )?;
    s.label(
        (0.5 * w, 28.0),
        &format!("{} bodies, nq = {}, nv = {}", model.nb, model.nq, model.nv),
        Side::Centre,
        14,
        INK,
    )
}

/// `joints_trees.svg`: the spanning tree of Featherstone's figure 8.3 mechanism and the branched
/// floating-base robot, drawn from their parent arrays (`lambda`); every edge is labelled with
/// its joint type. Checked: every body's number exceeds its parent's (the numbering rule the
/// drawing illustrates).
pub fn kinematic_trees(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("joints_trees.svg");
    let models = [
        (
            canned::figure_8_3_tree(1.0, 0.6)?,
            "figure 8.3 mechanism, spanning tree",
        ),
        (
            canned::floating_base_ball_arms(),
            "floating base with two arms and a tail",
        ),
    ];
    for (m, _) in &models {
        if let Some(i) = (1..=m.nb).find(|&i| m.lambda[i] >= i) {
            return Err(mismatch(&format!("{}: lambda({i}) >= {i}", m.name), 1.0));
        }
    }
    {
        let root = canvas(
            &path,
            1000,
            520,
            "Kinematic trees: body i hangs from body λ(i) < i by joint i",
        )?;
        let panels = root.split_evenly((1, 2));
        for (area, (model, title)) in panels.into_iter().zip(&models) {
            let (w, h) = area.dim_in_pixel();
            let (w, h) = (w as f64, h as f64);
            let s = Sketch::new(area, (0.0, w), (0.0, h), 0.0);
            tree_panel(&s, model, title, w, h)?;
        }
        finish(&root)?;
    }
    Ok(path)
}

// ---------------------------------------------------------------------------------------------
// Com chapter: the quantities of mj_comPos.

/// `com_frames.svg`: a planar three-link pendulum at a bent configuration with what `mj_comPos`
/// computes for joint 2: the subtree centre of mass `c`, the anchor `a`, the axis `u` (into the
/// page), `r = c - a` and the linear part `u x r` of `cdof`, drawn at `c`. Checked: the drawn
/// `u x r` is `cdof`'s linear part and `c` is the mass-weighted mean of the bodies' `xipos`.
pub fn com_frames(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("com_frames.svg");
    let model = canned::chain(3, false);
    let q = [0.3, 1.3, 1.5];
    let d = forward_smooth(&model, &q, &[0.0; 3])?;
    let kin = forward_kinematics(&model, &q)?;
    let anchors: Vec<Vec3> = (1..=3).map(|i| kin.position(i)).collect();
    let tip = kin.point(3, &Vec3::new(0.0, 0.0, -0.48));
    let c = d.subtree_com_fb[1];
    let mass: f64 = (1..=3).map(|i| model.inertia[i].m).sum();
    let mean = (1..=3).fold(Vec3::zeros(), |s, i| s + d.xipos_fb[i] * model.inertia[i].m) / mass;
    if (mean - c).norm() > 1e-12 {
        return Err(mismatch("subtree_com vs mean of xipos", (mean - c).norm()));
    }
    let (j, dof) = (2, 1);
    let a = anchors[j - 1];
    let u = kin.rotation(j) * Vec3::y();
    let r = c - a;
    let lin = d.cdof[dof].v;
    if (lin - u.cross(&r)).norm() > 1e-12 || (d.cdof[dof].w - u).norm() > 1e-12 {
        return Err(mismatch("cdof vs [u; u x r]", (lin - u.cross(&r)).norm()));
    }
    {
        let root = canvas(
            &path,
            900,
            620,
            "mj_comPos for joint 2 of a planar pendulum: cdof = [u; u × r]",
        )?;
        let mut pts: Vec<(f64, f64)> = anchors.iter().map(xz).collect();
        pts.extend([xz(&tip), xz(&c), xz(&(c + lin)), (0.0, 0.0)]);
        let ((lo_x, hi_x), (lo_z, hi_z)) = bounds(&pts);
        let s = Sketch::new(
            root.clone(),
            (lo_x - 0.35, hi_x + 0.55),
            (lo_z - 0.12, hi_z + 0.12),
            30.0,
        );
        // world frame, beside the fixed anchor
        let o = (hi_x + 0.25, hi_z - 0.05);
        s.arrow(o, (o.0 + 0.12, o.1), INK, 2)?;
        s.label((o.0 + 0.12, o.1), "x", Side::Right, 14, INK)?;
        s.arrow(o, (o.0, o.1 + 0.12), INK, 2)?;
        s.label((o.0, o.1 + 0.1), "z", Side::Right, 14, INK)?;
        s.into_page(o, 7, INK)?;
        s.label(o, "y", Side::Below, 14, INK)?;
        let chain: Vec<(f64, f64)> = anchors.iter().chain(std::iter::once(&tip)).map(xz).collect();
        s.line(&chain, INK, 5)?;
        for i in 1..=3 {
            s.com(xz(&d.xipos_fb[i]), 6, GREY)?;
            s.label(
                xz(&d.xipos_fb[i]),
                &format!("xipos{i} ({:.1} kg)", model.inertia[i].m),
                Side::Above,
                13,
                GREY,
            )?;
        }
        for (k, an) in anchors.iter().enumerate() {
            if k + 1 == j {
                s.into_page(xz(an), 10, colour(0))?;
            } else {
                s.joint(xz(an), 7, INK)?;
            }
        }
        let right_of_a = {
            let p = s.px(xz(&a));
            (p.0 + 8, p.1)
        };
        s.label_px(
            right_of_a,
            "a = anchor of joint 2;  u = its axis, into the page",
            Side::Right,
            15,
            colour(0),
        )?;
        s.arrow(xz(&a), xz(&c), colour(1), 2)?;
        let mid = 0.5 * (a + c);
        s.label(xz(&mid), "r = c − a", Side::Right, 15, colour(1))?;
        s.com(xz(&c), 9, colour(2))?;
        s.label(xz(&c), "c = subtree_com of the root", Side::Below, 15, colour(2))?;
        s.arrow(xz(&c), xz(&(c + lin)), colour(3), 3)?;
        s.label(
            xz(&(c + lin)),
            "u × r = linear part of cdof:",
            Side::Right,
            14,
            colour(3),
        )?;
        let below = {
            let p = s.px(xz(&(c + lin)));
            (p.0, p.1 + 18)
        };
        s.label_px(
            below,
            "velocity of the point at c per unit rate of joint 2",
            Side::Right,
            13,
            colour(3),
        )?;
        finish(&root)?;
    }
    Ok(path)
}

// ---------------------------------------------------------------------------------------------
// RNEA chapter: a free-body diagram.

/// `rnea_free_body.svg`: body 2 of a moving planar three-link pendulum cut free, with the forces
/// RNEA computes on it: `f_2` from its parent through joint 2, the reaction `-f_3` of its child
/// at joint 3, and gravity; their sum is drawn at the centre of mass. Checked: the sum equals the
/// body's mass times the acceleration of its centre of mass, found by differencing positions
/// twice along `q(t) = q + qd t + qdd t^2 / 2` (to 1e-6 relative).
pub fn rnea_free_body(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("rnea_free_body.svg");
    let model = canned::chain(3, false);
    let (q, qd, qdd) = ([0.5, -0.9, 0.7], [3.0, -2.5, 2.0], [-25.0, 30.0, -10.0]);
    let mut ws = Workspace::new(&model);
    let mut tau = [0.0; 3];
    rnea_with(&model, &mut ws, &q, &qd, &qdd, None, &mut tau);
    let kin = forward_kinematics(&model, &q)?;
    let b = 2;
    let rot = |i: usize| kin.rotation(i);
    let (a2, a3) = (kin.position(2), kin.position(3));
    let f2 = rot(2) * ws.f[2].f;
    let n2 = rot(2) * ws.f[2].n;
    let f3 = -(rot(3) * ws.f[3].f);
    let n3 = -(rot(3) * ws.f[3].n);
    let m = model.inertia[b].m;
    let g = model.opt.gravity * m;
    let com = kin.point(b, &model.inertia[b].com());
    let sum = f2 + f3 + g;
    // independent: second difference of the centre of mass along the motion
    let com_at = |t: f64| -> Result<Vec3> {
        let qt: Vec<f64> = (0..3).map(|k| q[k] + qd[k] * t + 0.5 * qdd[k] * t * t).collect();
        Ok(forward_kinematics(&model, &qt)?.point(b, &model.inertia[b].com()))
    };
    let h = 1e-4;
    let acc = (com_at(h)? - com_at(0.0)? * 2.0 + com_at(-h)?) / (h * h);
    let err = (sum - acc * m).norm();
    if err > 1e-6 * (f2.norm() + f3.norm() + g.norm()) {
        return Err(mismatch("sum of forces on body 2 vs m a_c", err));
    }
    println!(
        "free body 2: f2 = ({:.2}, {:.2}) N, -f3 = ({:.2}, {:.2}) N, m g = {:.2} N; sum - m a_c = {err:.1e} N",
        f2.x, f2.z, f3.x, f3.z, g.z
    );
    {
        let root = canvas(
            &path,
            900,
            640,
            "Free body 2: the forces RNEA finds on it add up to m a_c",
        )?;
        let tip = kin.point(3, &Vec3::new(0.0, 0.0, -0.48));
        let biggest = [f2.norm(), f3.norm(), g.norm(), sum.norm()]
            .into_iter()
            .fold(0.0, f64::max);
        let k = 0.3 / biggest; // metres of drawing per newton
        let mut pts = vec![(0.0, 0.0), xz(&tip)];
        for (p, f) in [(a2, f2), (a3, f3), (com, g), (com, sum)] {
            pts.push(xz(&p));
            pts.push(xz(&(p + f * k)));
        }
        let ((lo_x, hi_x), (lo_z, hi_z)) = bounds(&pts);
        let s = Sketch::new(root.clone(), (lo_x - 0.3, hi_x + 0.4), (lo_z - 0.06, hi_z + 0.06), 30.0);
        // the rest of the chain, for context
        s.line(&[(0.0, 0.0), xz(&a2)], GREY, 3)?;
        s.line(&[xz(&a3), xz(&tip)], GREY, 3)?;
        s.label(xz(&(0.5 * a2)), "body 1", Side::Left, 13, GREY)?;
        s.label(xz(&(0.5 * (a3 + tip))), "body 3", Side::Right, 13, GREY)?;
        s.line(&[xz(&a2), xz(&a3)], INK, 7)?;
        s.joint(xz(&a2), 7, INK)?;
        s.joint(xz(&a3), 7, INK)?;
        s.com(xz(&com), 7, INK)?;
        let tip_of = |p: &Vec3, f: &Vec3| xz(&(p + f * k));
        // labels go on the side the arrow points to, away from its shaft
        let side = |f: &Vec3| if f.x < 0.0 { Side::Left } else { Side::Right };
        let left_of = |p: &Vec3| {
            let c = s.px(xz(p));
            (c.0 - 26, c.1)
        };
        // the two joints' forces and moments: (joint, force, moment about y, names)
        let cuts = [
            (a2, f2, n2.y, "f₂ from body 1", "n₂"),
            (a3, f3, n3.y, "−f₃ from body 3", "−n₃"),
        ];
        for (c, (at, f, n, f_name, n_name)) in cuts.into_iter().enumerate() {
            s.arrow(xz(&at), tip_of(&at, &f), colour(c), 3)?;
            let f_text = format!("{f_name}: {:.1} N", f.norm());
            s.label(tip_of(&at, &f), &f_text, side(&f), 14, colour(c))?;
            s.turn(xz(&at), 22.0, n < 0.0, colour(c))?;
            s.label_px(
                left_of(&at),
                &format!("{n_name} = {n:.2} N m"),
                Side::Left,
                13,
                colour(c),
            )?;
        }
        s.arrow(xz(&com), tip_of(&com, &g), colour(2), 3)?;
        s.label(
            tip_of(&com, &g),
            &format!("m₂ g = {:.1} N", g.norm()),
            Side::Left,
            14,
            colour(2),
        )?;
        s.arrow(xz(&com), tip_of(&com, &sum), colour(3), 2)?;
        s.label(tip_of(&com, &sum), "sum = m₂ a_c", side(&sum), 14, colour(3))?;
        finish(&root)?;
    }
    Ok(path)
}

// ---------------------------------------------------------------------------------------------
// Spatial chapter: one spatial velocity, many point velocities.

/// `spatial_velocity.svg`: a plate moving in its plane with spatial velocity `v = (w; v_O)` at
/// the origin, and the velocity of points of the plate, each the linear part of the same `v`
/// moved to that point (`xlt(p).apply_motion(v)`). Checked: the velocity vanishes at the point on
/// the screw axis `z x v_O / w`, and every drawn velocity is perpendicular to the line from it.
pub fn spatial_velocity(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("spatial_velocity.svg");
    let w = 1.5;
    let v = Motion::new(Vec3::new(0.0, 0.0, w), Vec3::new(0.9, 0.45, 0.0));
    let at = |p: (f64, f64)| xlt(Vec3::new(p.0, p.1, 0.0)).apply_motion(&v).v;
    let axis = Vec3::z().cross(&v.v) / w;
    let centre = (axis.x, axis.y);
    let err = at(centre).norm();
    if err > 1e-12 {
        return Err(mismatch("velocity at the screw axis", err));
    }
    let plate = [
        (-0.2, -0.35),
        (1.5, -0.35),
        (1.5, 0.25),
        (0.5, 0.25),
        (0.5, 0.95),
        (-0.2, 0.95),
    ];
    let inside = |p: (f64, f64)| {
        (p.0 >= -0.2 && p.0 <= 1.5 && p.1 >= -0.35 && p.1 <= 0.25) || (p.0 >= -0.2 && p.0 <= 0.5 && p.1 <= 0.95)
    };
    let k = 0.13; // metres of drawing per m/s
    {
        let root = canvas(
            &path,
            900,
            620,
            "One spatial velocity, a different point velocity at every point",
        )?;
        let s = Sketch::new(root.clone(), (-0.75, 1.85), (-0.55, 1.2), 25.0);
        s.fill(&plate, colour(4), 0.25)?;
        let mut outline = plate.to_vec();
        outline.push(plate[0]);
        s.line(&outline, INK, 2)?;
        for ix in 0..=8 {
            for iy in 0..=6 {
                let p = (-0.1 + 0.2 * ix as f64, -0.25 + 0.2 * iy as f64);
                if !inside(p) {
                    continue;
                }
                let vp = at(p);
                if vp.dot(&Vec3::new(p.0 - centre.0, p.1 - centre.1, 0.0)).abs() > 1e-12 {
                    return Err(mismatch("point velocity not perpendicular to the radius", 1.0));
                }
                s.dot(p, 2, GREY)?;
                s.arrow(p, (p.0 + k * vp.x, p.1 + k * vp.y), GREY, 1)?;
            }
        }
        let o = (0.0, 0.0);
        s.out_of_page(o, 9, colour(0))?;
        s.arrow(o, (k * v.v.x, k * v.v.y), colour(0), 3)?;
        s.label(o, "O: ω = 1.5 rad/s (out of page), v_O", Side::Below, 15, colour(0))?;
        let qp = (1.3, 0.05);
        let vq = at(qp);
        s.dot(qp, 5, colour(1))?;
        s.arrow(qp, (qp.0 + k * vq.x, qp.1 + k * vq.y), colour(1), 3)?;
        s.label(qp, "Q: v_Q = v_O + ω × OQ", Side::Below, 15, colour(1))?;
        s.dashed(centre, o, GREY)?;
        s.dashed(centre, qp, GREY)?;
        s.dot(centre, 6, colour(2))?;
        s.label(centre, "screw axis: zero velocity", Side::Above, 15, colour(2))?;
        caption(
            &s,
            &[
                (
                    (0.55, 1.12),
                    "the six numbers (ω; v_O) describe the whole field; moving the",
                ),
                (
                    (0.55, 1.04),
                    "reference point to Q changes only the linear part: (ω; v_Q)",
                ),
            ],
        )?;
        finish(&root)?;
    }
    Ok(path)
}

// ---------------------------------------------------------------------------------------------
// CRBA chapter: the composite rigid body.

/// Convex hull (monotone chain), counter-clockwise.
fn hull(mut pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0);
    let mut lower: Vec<(f64, f64)> = Vec::new();
    for &p in &pts {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], p) <= 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<(f64, f64)> = Vec::new();
    for &p in pts.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], p) <= 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// `crba_composite.svg`: the binary tree `tree_3` at rest, with the subtree `nu(2)` that moves
/// as one rigid body when only joint 2 accelerates, its composite centre of mass from CRBA's
/// `I^c_2`, and the diagonal entry `H_22 = S_2^T I^c_2 S_2`. Checked: `I^c_2`'s mass and centre
/// of mass equal the sums over the subtree's bodies, and `H_22` is CRBA's entry.
pub fn crba_composite(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("crba_composite.svg");
    let model = canned::binary_tree(3);
    let q = model.qpos0.as_slice().to_vec();
    let mut ws = Workspace::new(&model);
    let mut h = DMatrix::zeros(model.nv, model.nv);
    crba_with(&model, &mut ws, &q, &mut h);
    let kin = forward_kinematics(&model, &q)?;
    let j = 2;
    let sub: Vec<usize> = (1..=model.nb)
        .filter(|&i| crate::kinematics::supports(&model, j, i))
        .collect();
    let ic = ws.ic[j];
    let com_c = kin.point(j, &ic.com());
    let mass: f64 = sub.iter().map(|&i| model.inertia[i].m).sum();
    let com_sum = sub.iter().fold(Vec3::zeros(), |s, &i| {
        s + kin.point(i, &model.inertia[i].com()) * model.inertia[i].m
    }) / mass;
    if (ic.m - mass).abs() > 1e-12 * mass || (com_c - com_sum).norm() > 1e-12 {
        return Err(mismatch("I^c_2 vs the sum over nu(2)", (com_c - com_sum).norm()));
    }
    let s_j = ws.jc[j].s.cols[0];
    let hjj = s_j.dot(&ic.mul_motion(&s_j));
    let dof = model.dofs(j).start;
    if (hjj - h[(dof, dof)]).abs() > 1e-12 * hjj.abs() {
        return Err(mismatch("S^T I^c S vs H_jj", (hjj - h[(dof, dof)]).abs()));
    }
    let anchor = |i: usize| xz(&kin.position(i));
    let com_of = |i: usize| xz(&kin.point(i, &model.inertia[i].com()));
    {
        let root = canvas(
            &path,
            900,
            600,
            "CRBA: accelerate joint 2 alone and ν(2) moves as one rigid body",
        )?;
        let s = Sketch::new(root.clone(), (-0.72, 0.72), (-0.92, 0.06), 24.0);
        let mut pts = Vec::new();
        for &i in &sub {
            for p in [anchor(i), com_of(i)] {
                for (dx, dy) in [(-0.05, -0.05), (0.05, -0.05), (0.05, 0.05), (-0.05, 0.05)] {
                    pts.push((p.0 + dx, p.1 + dy));
                }
            }
        }
        s.fill(&hull(pts), colour(0), 0.15)?;
        for i in 1..=model.nb {
            let inside = sub.contains(&i);
            let col = if inside { colour(0) } else { GREY };
            let kids: Vec<usize> = (i + 1..=model.nb).filter(|&c| model.lambda[c] == i).collect();
            if kids.is_empty() {
                s.line(&[anchor(i), com_of(i)], col, 4)?;
            }
            for c in kids {
                s.line(&[anchor(i), anchor(c)], col, 4)?;
            }
            s.com(com_of(i), 4, col)?;
        }
        for i in 1..=model.nb {
            let p = anchor(i);
            if i == j {
                s.joint(p, 9, colour(1))?;
                s.turn(p, 20.0, true, colour(1))?;
            } else if sub.contains(&i) {
                s.dot(p, 6, colour(0))?;
            } else {
                s.joint(p, 6, GREY)?;
            }
            s.label(p, &i.to_string(), Side::Left, 13, INK)?;
        }
        let right_of = |p: (f64, f64), dx: i32| {
            let c = s.px(p);
            (c.0 + dx, c.1)
        };
        s.label_px(
            right_of(anchor(j), 24),
            "joint 2 accelerates",
            Side::Right,
            14,
            colour(1),
        )?;
        s.com(xz(&com_c), 9, colour(2))?;
        s.label(
            xz(&com_c),
            &format!("centre of mass of I^c₂ ({mass:.2} kg)"),
            Side::Below,
            14,
            colour(2),
        )?;
        let h22 = format!("H₂₂ = S₂ᵀ I^c₂ S₂ = {hjj:.4} kg m², the inertia of the welded subtree about joint 2's axis");
        caption(
            &s,
            &[
                (
                    (0.0, -0.8),
                    "blue: ν(2), joints inside it locked (filled dots); grey: bodies that stay still",
                ),
                ((0.0, -0.88), &h22),
            ],
        )?;
        finish(&root)?;
    }
    Ok(path)
}

// ---------------------------------------------------------------------------------------------
// ABA chapter: articulated against composite inertia.

/// The in-plane (x, z) response of a point `p` (body coordinates) to a unit force: the 2 x 2
/// block of `G I^-1 G^T`, with `G = [skew(p)^T, 1]` mapping a spatial acceleration to the
/// acceleration of the point (at rest).
fn point_mobility(inertia: &Mat6, p: &Vec3) -> Result<Mat3> {
    let inv = inertia
        .try_inverse()
        .ok_or_else(|| mismatch("inertia is singular", f64::INFINITY))?;
    let mut g = Matrix3x6::zeros();
    g.fixed_view_mut::<3, 3>(0, 0).copy_from(&skew(p).transpose());
    g.fixed_view_mut::<3, 3>(0, 3).copy_from(&Mat3::identity());
    Ok(g * inv * g.transpose())
}

/// `aba_articulated.svg`: body 1 of a planar three-link pendulum as the handle of the articulated
/// body {1, 2, 3}, and for a push at its centre of mass the acceleration per newton in every
/// direction of the plane for three inertias: body 1 alone (`I_1`), the articulated body (`I^A_1`
/// from ABA, joints 2 and 3 free) and the welded subtree (`I^c_1` from CRBA). Checked: the three
/// ellipses are nested, `I_1 <= I^A_1 <= I^c_1` in the sense of their mobilities (eigenvalues of
/// the differences >= -1e-12).
pub fn aba_articulated(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("aba_articulated.svg");
    let model = canned::chain(3, false);
    let q = [0.35, 0.9, -0.6];
    let mut ws = Workspace::new(&model);
    let mut qdd = [0.0; 3];
    aba_with(&model, &mut ws, &q, &[0.0; 3], &[0.0; 3], None, &mut qdd)?;
    let ia = ws.ia[1];
    let mut h = DMatrix::zeros(3, 3);
    crba_with(&model, &mut ws, &q, &mut h);
    let ic = ws.ic[1].to_matrix();
    let i1 = model.inertia[1].to_matrix();
    let p = model.inertia[1].com();
    let mob = [
        point_mobility(&i1, &p)?,
        point_mobility(&ia, &p)?,
        point_mobility(&ic, &p)?,
    ];
    for (a, b, what) in [(0, 1, "I_1 vs I^A_1"), (1, 2, "I^A_1 vs I^c_1")] {
        let lo = (mob[a] - mob[b]).symmetric_eigen().eigenvalues.min();
        if lo < -1e-12 * mob[a].norm() {
            return Err(mismatch(&format!("mobility ordering {what}"), lo));
        }
    }
    let kin = forward_kinematics(&model, &q)?;
    let rot = kin.rotation(1);
    let centre = kin.point(1, &p);
    let biggest = mob[0].symmetric_eigen().eigenvalues.max();
    let k = 0.32 / biggest; // metres of drawing per (m/s^2)/N
    {
        let root = canvas(
            &path,
            900,
            620,
            "Pushing the handle of an articulated body: acceleration per newton",
        )?;
        let tip = kin.point(3, &Vec3::new(0.0, 0.0, -0.48));
        let anchors: Vec<(f64, f64)> = (1..=3).map(|i| xz(&kin.position(i))).collect();
        let curves: Vec<Vec<(f64, f64)>> = mob
            .iter()
            .map(|m| {
                (0..=72)
                    .map(|t| {
                        let th = std::f64::consts::TAU * t as f64 / 72.0;
                        let f_world = Vector3::new(th.cos(), 0.0, th.sin());
                        let a_world = rot * (m * (rot.transpose() * f_world));
                        (centre.x + k * a_world.x, centre.z + k * a_world.z)
                    })
                    .collect()
            })
            .collect();
        let mut pts = anchors.clone();
        pts.push(xz(&tip));
        pts.extend(curves[0].iter().cloned());
        let ((lo_x, hi_x), (lo_z, hi_z)) = bounds(&pts);
        let s = Sketch::new(
            root.clone(),
            (lo_x - 0.1, hi_x + 0.75),
            (lo_z - 0.05, hi_z + 0.05),
            28.0,
        );
        s.line(&[anchors[1], anchors[2], xz(&tip)], GREY, 4)?;
        s.line(&[anchors[0], anchors[1]], INK, 7)?;
        s.joint(anchors[0], 7, GREY)?;
        s.label(anchors[0], "joint 1 cut: body 1 is the handle", Side::Right, 13, GREY)?;
        for (i, &a) in anchors.iter().enumerate().skip(1) {
            s.joint(a, 7, INK)?;
            s.label(a, &format!("joint {} free", i + 1), Side::Right, 13, GREY)?;
        }
        let names = [
            "body 1 alone, I₁",
            "articulated body, I^A₁ (joints 2, 3 free)",
            "welded subtree, I^c₁",
        ];
        let (w, h) = s.area().dim_in_pixel();
        let (w, h) = (w as i32, h as i32);
        for (n, pts) in curves.iter().enumerate() {
            s.line(pts, colour(n), 3)?;
            let y = h - 110 + 24 * n as i32;
            s.line_px(&[(w - 390, y), (w - 365, y)], colour(n), 3)?;
            s.label_px((w - 360, y), names[n], Side::Right, 14, colour(n))?;
        }
        s.label_px(
            (w - 390, h - 140),
            "1 N pushed at P in each direction of the plane:",
            Side::Right,
            13,
            INK,
        )?;
        s.label_px(
            (w - 390, h - 124),
            "the acceleration of P (closed curves)",
            Side::Right,
            13,
            INK,
        )?;
        s.com(xz(&centre), 6, INK)?;
        s.label(xz(&centre), "push point P", Side::Left, 13, INK)?;
        finish(&root)?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_layout_centres_parents_over_their_children() {
        // 0 -> 1 -> {2, 3}, 0 -> 4
        let (x, depth) = tree_layout(&[0, 0, 1, 1, 0]);
        assert_eq!(depth, vec![0, 1, 2, 2, 1]);
        assert_eq!((x[2], x[3], x[4]), (0.0, 1.0, 2.0));
        assert_eq!(x[1], 0.5);
        assert_eq!(x[0], 1.25);
    }

    #[test]
    fn bounds_of_points() {
        assert_eq!(
            bounds(&[(0.5, -1.0), (-2.0, 3.0), (1.0, 0.0)]),
            ((-2.0, 1.0), (-1.0, 3.0))
        );
    }

    #[test]
    fn hull_of_a_square_with_an_inner_point() {
        let h = hull(vec![(0.0, 0.0), (1.0, 0.0), (0.5, 0.5), (1.0, 1.0), (0.0, 1.0)]);
        assert_eq!(h.len(), 4);
        assert!(!h.contains(&(0.5, 0.5)));
    }
}
