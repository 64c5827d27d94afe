//! Figures and report of the chapter "MuJoCo's com-based quantities" (MuJoCo's `mj_comPos`,
//! `mj_comVel`, `mj_crb`, `mj_rne`; MuJoCo's `engine_core_smooth.c`).
//!
//! - `com_rounding.svg`: the relative rounding error of H for the floating base with arms when
//!   the whole configuration is moved `10^k` m away from the origin (k = 0..8), computed three
//!   ways: Featherstone's body frames (CRBA), MuJoCo's world-aligned frame at the tree's centre
//!   of mass (`mj_crb`), and a world frame at the fixed origin ([`h_about_point`]).
//! - `com_cdof_dot.svg`: `cdof_dot` from `mj_comVel` against a central difference of `cdof` along
//!   the motion, as the step shrinks: single hinge and slide dofs converge, single ball and
//!   free-rotation dofs do not (MuJoCo's rule uses the velocity before the joint's own motion),
//!   and their sums weighted by `qvel` (what the bias force uses) converge again.

use super::ch05::slope_line;
use crate::dynamics::crba;
use crate::error::Result;
use crate::kinematics::forward_kinematics;
use crate::model::{canned, jcalc, JointType, Model};
use crate::mujoco::forward_smooth;
use crate::plot::{Chart, Series};
use crate::spatial::{Mat3, Motion, SpatialInertia, Vec3, Xform};
use nalgebra::DMatrix;
use std::path::{Path, PathBuf};

/// H computed like `mj_crb`, but with every spatial quantity in world-aligned coordinates about
/// the fixed point `p` instead of the tree's centre of mass: `cinert_i = p_X_i I_i`,
/// `cdof = p_X_i S_i`, composite inertias summed leaves to root, `H_ij = cdof_j . crb cdof_i`.
/// The result does not depend on `p` in exact arithmetic; in floating point it loses about
/// `2 log10(|x - p| / size)` digits for bodies at `x` (the figure `com_rounding.svg`).
pub fn h_about_point(model: &Model, q: &[f64], p: &Vec3) -> Result<DMatrix<f64>> {
    let kin = forward_kinematics(model, q)?;
    let n = model.nv;
    let zeros = [0.0; 6];
    let mut cdof = vec![Motion::zero(); n];
    let mut crb = vec![SpatialInertia::zero(); model.nb + 1];
    for i in 1..=model.nb {
        let to_p = Xform::new(Mat3::identity(), *p).compose(&kin.x_0[i].inverse()); // p_X_i
        crb[i] = model.inertia[i].transform(&to_p);
        let j = &model.joints[i];
        let jc = jcalc(j, &q[model.qs(i)], &zeros[..j.jtype.nv()]);
        for (k, dof) in model.dofs(i).enumerate() {
            cdof[dof] = to_p.apply_motion(&jc.s.cols[k]);
        }
    }
    for i in (1..=model.nb).rev() {
        let pi = model.lambda[i];
        if pi > 0 {
            let c = crb[i];
            crb[pi] += c;
        }
    }
    let mut h = DMatrix::zeros(n, n);
    for i in 0..n {
        let b = model.dof_body[i];
        let f = crb[b].mul_motion(&cdof[i]);
        h[(i, i)] = cdof[i].dot(&f) + model.joints[b].armature;
        let mut j = model.dof_parent[i];
        while let Some(jj) = j {
            h[(i, jj)] = cdof[jj].dot(&f);
            h[(jj, i)] = h[(i, jj)];
            j = model.dof_parent[jj];
        }
    }
    Ok(h)
}

/// `max|a - b| / max|b|`.
fn rel(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax().max(f64::MIN_POSITIVE)
}

/// The floating base with arms at a generic configuration, with the base moved so that the
/// tree's centre of mass is `offset` (m) along a fixed direction from where it was. Returns qpos.
pub fn shifted_configuration(model: &Model, offset: f64) -> Vec<f64> {
    let mut q = model.qpos0.as_slice().to_vec();
    let v: Vec<f64> = (0..model.nv).map(|k| 0.5 * (0.9 * k as f64 + 0.3).cos()).collect();
    model.integrate_with(&mut q, &v, 1.0); // qpos0 and v are valid by construction
    let dir = Vec3::new(0.6, -0.48, 0.64);
    for k in 0..3 {
        q[k] += offset * dir[k];
    }
    q
}

/// Errors below this are drawn at this value on the log axes (an exact zero has no logarithm).
pub const FLOOR: f64 = 1e-17;

/// Relative rounding error of H at base offsets `10^k` m, k = 0..=8, for the three frames:
/// `(offset, body frames, com frame, world-origin frame)`. The reference is Featherstone's CRBA at
/// the same configuration with zero offset.
pub fn rounding_errors(model: &Model) -> Result<Vec<(f64, f64, f64, f64)>> {
    let h_ref = crba(model, &shifted_configuration(model, 0.0))?;
    let mut rows = Vec::new();
    for k in 0..=8 {
        let offset = 10f64.powi(k);
        let q = shifted_configuration(model, offset);
        let body = rel(&crba(model, &q)?, &h_ref);
        let d = forward_smooth(model, &q, &vec![0.0; model.nv])?;
        let com = rel(&model.mj_layout().to_dense(&d.qm), &h_ref);
        let world = rel(&h_about_point(model, &q, &Vec3::zeros())?, &h_ref);
        rows.push((offset, body, com, world));
    }
    Ok(rows)
}

/// The `cdof` of `qpos` moved to the fixed reference point `c0`: a motion vector about the
/// tree's centre of mass `c` becomes `[w; v + w x (c0 - c)]` about `c0`.
fn cdof_about(model: &Model, qpos: &[f64], qvel: &[f64], c0: &Vec3) -> Result<Vec<Motion>> {
    let d = forward_smooth(model, qpos, qvel)?;
    let mut out = d.cdof.clone();
    for (k, m) in out.iter_mut().enumerate() {
        let c = d.subtree_com_fb[d.rootid_fb[model.dof_body[k]]];
        m.v += m.w.cross(&(c0 - c));
    }
    Ok(out)
}

/// One row of the `cdof_dot` convergence study at step `h`: the largest difference between
/// `cdof_dot` and the central difference `(cdof(q + h qdot) - cdof(q - h qdot)) / 2h` (all about
/// the fixed point where the tree's centre of mass is at q), over (a) single dofs of hinge, slide
/// and free-translation joints, (b) single dofs of ball joints and free-joint rotations, (c) the
/// sums `sum_k cdof_dot_k qdot_k` over the dofs of each ball and free joint. Relative to
/// `max |cdof_dot|`.
pub fn cdof_dot_errors(model: &Model, qpos: &[f64], qvel: &[f64], h: f64) -> Result<(f64, f64, f64)> {
    let d = forward_smooth(model, qpos, qvel)?;
    let scale = d
        .cdof_dot
        .iter()
        .map(|m| m.to_vec6().amax())
        .fold(f64::MIN_POSITIVE, f64::max);
    let mut qp = qpos.to_vec();
    model.integrate(&mut qp, qvel, h)?;
    let mut qm = qpos.to_vec();
    model.integrate(&mut qm, qvel, -h)?;
    let mut errs = (0.0f64, 0.0f64, 0.0f64);
    let mut fd = Vec::with_capacity(model.nv);
    for (k, (p, m)) in (0..model.nv).zip(
        cdof_about(model, &qp, qvel, &Vec3::zeros())?
            .into_iter()
            .zip(cdof_about(model, &qm, qvel, &Vec3::zeros())?),
    ) {
        // differenced about the (fixed) world origin, then moved to the fixed point c0 where the
        // tree's centre of mass is at q: v_c0 = v_0 + w x c0, and likewise for the derivatives
        let c0 = d.subtree_com_fb[d.rootid_fb[model.dof_body[k]]];
        let mut diff = (p.to_vec6() - m.to_vec6()) / (2.0 * h);
        let w = Vec3::new(diff[0], diff[1], diff[2]);
        let shift = w.cross(&c0);
        for r in 0..3 {
            diff[3 + r] += shift[r];
        }
        fd.push(diff);
    }
    for i in 1..=model.nb {
        let jt = model.joints[i].jtype;
        let dofs = model.dofs(i);
        let mut sum = crate::spatial::Vec6::zeros();
        for (k, dof) in dofs.clone().enumerate() {
            let e = (fd[dof] - d.cdof_dot[dof].to_vec6()).amax();
            let rotational = matches!(jt, JointType::Spherical) || (matches!(jt, JointType::Free) && k >= 3);
            if rotational {
                errs.1 = errs.1.max(e);
            } else {
                errs.0 = errs.0.max(e);
            }
            sum += (fd[dof] - d.cdof_dot[dof].to_vec6()) * qvel[dof];
        }
        if matches!(jt, JointType::Spherical | JointType::Free) {
            errs.2 = errs.2.max(sum.amax());
        }
    }
    Ok((errs.0 / scale, errs.1 / scale, errs.2 / scale))
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("MuJoCo's com-based quantities (mj_comPos, mj_comVel, mj_crb, mj_rne)");
    let model = canned::floating_base_ball_arms();

    // The same H two ways, at one state.
    let q = shifted_configuration(&model, 0.0);
    let v: Vec<f64> = (0..model.nv).map(|k| 0.8 * (1.7 * k as f64 + 0.2).sin()).collect();
    let d = forward_smooth(&model, &q, &v)?;
    let h = crba(&model, &q)?;
    let c = crate::dynamics::bias_forces(&model, &q, &v)?;
    let bias_err = c
        .iter()
        .zip(&d.qfrc_bias)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / c.amax().max(1.0);
    println!(
        "  {} ({} dofs): |M_com - H_CRBA| / |H| = {:.1e}, |bias_com - C_RNEA| / |C| = {:.1e}",
        model.name,
        model.nv,
        rel(&model.mj_layout().to_dense(&d.qm), &h),
        bias_err
    );

    // Figure 1: rounding far from the origin.
    let rows = rounding_errors(&model)?;
    let pick = |f: fn(&(f64, f64, f64, f64)) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (r.0, f(r).max(FLOOR))).collect()
    };
    let eps = f64::EPSILON;
    let xs: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let body_label = if rows.iter().all(|r| r.1 == 0.0) {
        "Featherstone: body frames (CRBA), exactly 0, drawn at 1e-17"
    } else {
        "Featherstone: body frames (CRBA)"
    };
    let path = dir.join("com_rounding.svg");
    Chart::new(
        "Rounding error of H far from the origin (floating base, 16 dofs)",
        "offset d of the whole model from the origin (m)",
        "relative error of H",
    )
    .log(true, true)
    .ranges(Some((0.5, 2e8)), Some((FLOOR / 2.0, 1e6)))
    .with(Series::line_points("world frame at the origin", pick(|r| r.3)))
    .with(Series::line_points(
        "MuJoCo: world axes at the tree's centre of mass",
        pick(|r| r.2),
    ))
    .with(Series::line_points(body_label, pick(|r| r.1)))
    .with(slope_line("eps (d / 1 m)^2", &xs, 1.0, eps, 2.0))
    .with(slope_line("eps (d / 1 m)", &xs, 1.0, eps, 1.0))
    .save_svg(&path)?;
    out.push(path);
    for r in [&rows[0], &rows[4], &rows[8]] {
        println!(
            "  offset {:7.0e} m: relative error of H: body frames {:.1e}, com frame {:.1e}, world origin {:.1e}",
            r.0, r.1, r.2, r.3
        );
    }

    // Figure 2: the cdof_dot rules against a finite difference.
    let mut pts = (Vec::new(), Vec::new(), Vec::new());
    let hs: Vec<f64> = (1..=13).map(|k| 10f64.powf(-0.5 * k as f64)).collect();
    for &step in &hs {
        let (a, b, s) = cdof_dot_errors(&model, &q, &v, step)?;
        pts.0.push((step, a.max(FLOOR)));
        pts.1.push((step, b.max(FLOOR)));
        pts.2.push((step, s.max(FLOOR)));
    }
    let (hx, ey) = pts.0[4];
    let path = dir.join("com_cdof_dot.svg");
    Chart::new(
        "cdof_dot (mj_comVel) vs a central difference of cdof",
        "step h (s)",
        "relative difference",
    )
    .log(true, true)
    .ranges(None, Some((1e-13, 1e4)))
    .with(Series::line_points(
        "ball and free-rotation dofs, one at a time",
        pts.1.clone(),
    ))
    .with(Series::line_points(
        "ball and free joints, sum of cdof_dot qvel",
        pts.2.clone(),
    ))
    .with(Series::line_points(
        "hinge, slide and free-translation dofs",
        pts.0.clone(),
    ))
    .with(slope_line("slope 2 (reference, shifted down)", &hs, hx, 0.1 * ey, 2.0))
    .save_svg(&path)?;
    out.push(path);
    let k = 5;
    println!(
        "  cdof_dot vs central difference at h = {:.0e}: hinge/slide {:.1e}, ball dofs singly {:.1e}, summed with qvel {:.1e}",
        hs[k], pts.0[k].1, pts.1[k].1, pts.2[k].1
    );
    out.push(super::schematics::com_frames(dir)?);
    Ok(out)
}
