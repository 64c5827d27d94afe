//! Figures and report of the chapter "Joint models and kinematic trees" (Featherstone chapters 3-4).
//!
//! - `ch04_quat_drift.svg`: the norm of a quaternion advanced by the naive update
//!   `q += h qdot` against the exponential map that [`Model::integrate`] uses (MuJoCo's
//!   `mj_integratePos`).
//! - `ch04_chain_tip.svg`: forward kinematics of a planar three-link chain: the path of its tip
//!   over one period of a joint motion, with the arm drawn at three instants.
//! - `ch04_jacobian_fd.svg`: the difference between the point Jacobian times `qdot` and finite
//!   differences of forward kinematics, against the step size (the check behind the kinematics
//!   tests).
//!
//! The report lists the structure (`lambda`, `nq`, `nv`, the dof parents) of every canned model.

use crate::error::Result;
use crate::kinematics::{forward_kinematics, point_jacobian};
use crate::model::{canned, Model};
use crate::plot::{Chart, Series};
use crate::spatial::{quat_integrate, quat_mul, Vec3};
use nalgebra::DVector;
use std::f64::consts::PI;
use std::path::{Path, PathBuf};

/// One line describing a model's structure: sizes, parent array and dof parents.
pub fn describe(model: &Model) -> String {
    let dof_parent: Vec<String> = model
        .dof_parent
        .iter()
        .map(|p| p.map_or("-".to_string(), |d| d.to_string()))
        .collect();
    let joints: Vec<&str> = (1..=model.nb).map(|i| model.joints[i].jtype.name()).collect();
    format!(
        "{}: nb = {}, nq = {}, nv = {}\n  lambda = {:?}\n  joints = {:?}\n  dof_parent = [{}]",
        model.name,
        model.nb,
        model.nq,
        model.nv,
        &model.lambda[1..],
        joints,
        dof_parent.join(", ")
    )
}

/// The naive quaternion update `q += h qdot` with `qdot = 1/2 q (0, w)` for a body-frame angular
/// velocity `w` (the quaternion rate of a ball or free joint), without renormalization.
pub fn quat_step_naive(q: &[f64; 4], w: &Vec3, h: f64) -> [f64; 4] {
    let qdot = quat_mul(q, &[0.0, w.x, w.y, w.z]);
    [
        q[0] + 0.5 * h * qdot[0],
        q[1] + 0.5 * h * qdot[1],
        q[2] + 0.5 * h * qdot[2],
        q[3] + 0.5 * h * qdot[3],
    ]
}

fn quat_norm(q: &[f64; 4]) -> f64 {
    q.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// `| |q| - 1 |` during `steps` steps of size `h`, sampled at roughly log-spaced steps (10%
/// apart) for a log time axis.
fn norm_drift(step: impl Fn(&[f64; 4]) -> [f64; 4], steps: usize, h: f64) -> Vec<(f64, f64)> {
    let mut q = [1.0, 0.0, 0.0, 0.0];
    let mut out = Vec::new();
    let mut next = 1.0;
    for k in 1..=steps {
        q = step(&q);
        if k as f64 >= next || k == steps {
            // Floor at 1e-17 so that exact unit norms stay on the log axis.
            out.push((k as f64 * h, (quat_norm(&q) - 1.0).abs().max(1e-17)));
            next = (next * 1.1).max(k as f64 + 1.0);
        }
    }
    out
}

/// The joint angles of the tip-path figure at time `t` (s): three sines with periods 4, 2 and
/// 4/3 s, so the motion repeats every 4 s.
fn chain_motion(t: f64) -> [f64; 3] {
    [
        0.6 * (0.5 * PI * t).sin(),
        0.8 * (PI * t + 0.5).sin(),
        1.0 * (1.5 * PI * t + 1.0).sin(),
    ]
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    println!("== Joint models and kinematic trees (Featherstone ch. 3-4) ==");
    for model in [
        canned::chain(3, false),
        canned::chain(7, true),
        canned::binary_tree(3),
        canned::floating_base_ball_arms(),
        canned::four_bar_tree(),
        canned::figure_8_3_tree(1.0, 0.6)?,
    ] {
        println!("{}", describe(&model));
    }
    let mut paths = Vec::new();

    // Figure 1: quaternion norm drift.
    let w = Vec3::new(1.0, -2.0, 3.0);
    let t_end = 20.0;
    let mut chart = Chart::new(
        "Quaternion norm after integrating a constant spin |w| = 3.7 rad/s",
        "t, simulated time (s)",
        "| |q| - 1 |, norm error (unitless)",
    )
    .log(true, true)
    .ranges(None, Some((1e-18, 1e3)));
    for (h, naive) in [(0.01, true), (0.001, true), (0.01, false)] {
        let steps = (t_end / h) as usize;
        let (label, pts) = if naive {
            (
                format!("q += h qdot, h = {h} s"),
                norm_drift(|q| quat_step_naive(q, &w, h), steps, h),
            )
        } else {
            (
                format!("exponential map (integrate), h = {h} s; 0 drawn at 1e-17"),
                norm_drift(|q| quat_integrate(q, &w, h), steps, h),
            )
        };
        if let Some(&(t, e)) = pts.last() {
            println!("{label}: | |q| - 1 | = {e:.2e} at t = {t} s");
        }
        chart = chart.with(if naive {
            Series::line(&label, pts)
        } else {
            Series::points(&label, pts)
        });
    }
    let path = dir.join("ch04_quat_drift.svg");
    chart.save_svg(&path)?;
    paths.push(path);

    // Figure 2: tip path of a planar three-link chain (joints about y, links along -z).
    let model = canned::chain(3, false);
    let tip_local = Vec3::new(0.0, 0.0, -0.48); // the third link is 0.48 m long
    let n = 400;
    let mut tip_path = Vec::with_capacity(n + 1);
    for k in 0..=n {
        let t = 4.0 * k as f64 / n as f64;
        let kin = forward_kinematics(&model, &chain_motion(t))?;
        let p = kin.point(3, &tip_local);
        tip_path.push((p.x, p.z));
    }
    // Equal scales on both axes: the plotting area is 704 x 400 pixels.
    let (zmin, zmax) = (-1.55, 0.05);
    let half_width = 0.5 * (zmax - zmin) * 704.0 / 400.0;
    let mut chart = Chart::new(
        "Forward kinematics: tip path of a 3-link planar chain",
        "x (m)",
        "z (m)",
    )
    .ranges(Some((-half_width, half_width)), Some((zmin, zmax)))
    .with(Series::line("tip path over one 4 s period", tip_path));
    for t in [0.0, 0.7, 1.6] {
        let kin = forward_kinematics(&model, &chain_motion(t))?;
        let mut arm = vec![(0.0, 0.0)];
        for i in 2..=3 {
            let p = kin.position(i);
            arm.push((p.x, p.z));
        }
        let p = kin.point(3, &tip_local);
        arm.push((p.x, p.z));
        chart = chart.with(Series::line_points(&format!("arm at t = {t} s"), arm));
    }
    let path = dir.join("ch04_chain_tip.svg");
    chart.save_svg(&path)?;
    paths.push(path);

    // Figure 3: point Jacobian against finite differences of forward kinematics.
    let model = canned::floating_base_ball_arms();
    let mut q = model.qpos0.clone();
    for k in 0..model.nq {
        q[k] += 0.3 * (0.9 * k as f64 + 0.2).sin();
    }
    model.normalize_quaternions(q.as_mut_slice())?;
    let qd: Vec<f64> = (0..model.nv).map(|k| (1.7 * k as f64 + 0.3).cos()).collect();
    let body = model.nb;
    let p = Vec3::new(0.02, -0.03, -0.1);
    let jac = point_jacobian(&model, q.as_slice(), body, &p)?;
    let exact = &jac * DVector::from_column_slice(&qd);
    let exact = Vec3::new(exact[0], exact[1], exact[2]);
    let point_at = |h: f64| -> Result<Vec3> {
        let mut qh = q.clone();
        model.integrate(qh.as_mut_slice(), &qd, h)?;
        Ok(forward_kinematics(&model, qh.as_slice())?.point(body, &p))
    };
    let p0 = point_at(0.0)?;
    let (mut central, mut forward) = (Vec::new(), Vec::new());
    for k in 0..=48 {
        let h = 10f64.powf(-1.0 - 0.25 * k as f64);
        let (pp, pm) = (point_at(h)?, point_at(-h)?);
        central.push((h, ((pp - pm) / (2.0 * h) - exact).norm().max(1e-17)));
        forward.push((h, ((pp - p0) / h - exact).norm().max(1e-17)));
    }
    if let Some(&(h, e)) = central.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
        println!("Jacobian vs central differences: best error {e:.1e} m/s at h = {h:.0e}");
    }
    let hs: Vec<f64> = central.iter().map(|c| c.0).collect();
    let path = dir.join("ch04_jacobian_fd.svg");
    Chart::new(
        "Point Jacobian times qdot against finite differences of FK",
        "h, finite-difference step (s)",
        "| J qdot - difference quotient | (m/s)",
    )
    .log(true, true)
    .ranges(None, Some((1e-14, 1e4)))
    .with(Series::line_points("central difference", central))
    .with(Series::line_points("forward difference", forward))
    .with(Series::dashed(
        "slope 2 (truncation, central): h^2",
        hs.iter().filter(|&&h| h > 1e-7).map(|&h| (h, h * h)).collect(),
    ))
    .with(Series::dashed(
        "slope -1 (rounding): eps / h",
        hs.iter()
            .filter(|&&h| h < 1e-2)
            .map(|&h| (h, f64::EPSILON / h))
            .collect(),
    ))
    .save_svg(&path)?;
    paths.push(path);
    paths.push(super::schematics::kinematic_trees(dir)?);
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_quaternion_step_grows_the_norm_as_predicted() {
        // One naive step multiplies |q|^2 by exactly 1 + h^2 |w|^2 / 4 (q and q (0, w) are
        // orthogonal as 4-vectors).
        let w = Vec3::new(0.3, -1.1, 2.0);
        let h = 0.05;
        let q = quat_step_naive(&[1.0, 0.0, 0.0, 0.0], &w, h);
        let expected = (1.0 + h * h * w.norm_squared() / 4.0).sqrt();
        assert!((quat_norm(&q) - expected).abs() < 1e-15);
    }
}
