//! Figures and report of the chapter "SPOOK: a variational stepper".
//!
//! - `spook_violation.svg`: the pendulum released at rest 5 cm outside its constraint, no
//!   gravity: the violation per step without stabilization (`tau = 0`) and with `d = tau/h` =
//!   2, 5, 10, beside the decay the parameters predict ([`violation_decay_factor`]).
//! - `spook_energy.svg`: the pendulum's total energy over 30 s for `d` = 0, 0.5, 2, 4.
//! - `spook_compare.svg`: the pendulum's height over 3 s by SPOOK (h = 1/60), by Featherstone's
//!   closed-loop method with Baumgarte stabilization and RK4 (a free body held by a spherical
//!   loop joint, h = 1/60), and in reduced coordinates (ABA + RK4, h = 1e-4, the reference).
//!   and by MuJoCo's soft constraints (the free body held by a `connect` equality with MuJoCo's
//!   default `solref` and `solimp`, `tests/fixtures/spook/spook_pendulum.xml`, through
//!   [`crate::mujoco::integrator::Simulator`]'s Euler step, h = 1/60). Its errors go to
//!   `book/src/generated/spook_compare.md`.
//! - `spook_solref.svg`: one constraint returning from 5 cm off under MuJoCo's
//!   `solref = (0.02, 1)` and under SPOOK with `(epsilon, tau)` from [`from_solref`], beside the
//!   continuous critically damped return.
//! - `spook_tau_K.svg`, `spook_eps_K.svg` (interactive): the pendulum released 5 cm off its rod
//!   under gravity: violation and energy over 2 s for each `tau / h` of [`SLIDER_D`] and each
//!   `epsilon` of [`SLIDER_EPS`].
//! - `spook_gyro.svg`: Dzhanibekov's T-handle ([`scenes::dzhanibekov`]) over 20 s: the energy
//!   with the explicit and the implicit gyroscopic term ([`crate::spook::gyroscopic_inertia`]).
//! - `spook_heavy_chain.svg`: the stretch of a hanging 20-link chain with an end mass 100 times a
//!   link's, by the direct solve and by projected Gauss-Seidel with 20 and 200 sweeps.
//! - `spook_falling_chain.svg`: a chain of 8 capsules falling onto the floor: heights and the
//!   number of contacts.
//! - `spook_block_spy.svg`: the nonzeros of SPOOK's block matrix `[[M, -G^T], [G, Sigma]]` for a
//!   4-link spatial chain ([`crate::model::canned::chain`]).

use crate::dynamics::aba;
use crate::error::Result;
use crate::integrate::{rk4_step, StepScratch, Trajectory};
use crate::loops::{simulate as loops_simulate, Method, SimulateOptions};
use crate::mjcf;
use crate::model::{canned, Integrator, Joint, JointType, LoopJoint, Model, ModelBuilder};
use crate::mujoco::integrator::{Simulator, State};
use crate::plot::{Chart, Series, Spy, SpyPanel};
use crate::spatial::{xlt, Mat3, SpatialInertia, Vec3, Xform};
use crate::spook::{
    from_solref, run as spook_run, scenes, violation_decay_factor, SpookSolver, SpookSystem, StepSettings, Stepper,
    SIGNALS,
};
use std::path::{Path, PathBuf};

fn spook_trajectory(sys: &mut SpookSystem, h: f64, steps: usize, settings: StepSettings) -> Result<Trajectory> {
    let mut st = Stepper::new(sys, h, settings)?;
    let mut tr = Trajectory::new(&SIGNALS);
    spook_run(sys, &mut st, steps, &mut tr)?;
    Ok(tr)
}

fn direct() -> StepSettings {
    StepSettings {
        solver: SpookSolver::Direct,
        ..Default::default()
    }
}

/// The pendulum at rest at the bottom, pulled `phi0` outward, without gravity, with
/// `epsilon = 1e-10` and `tau = d h`: the violation per step for 1 s at h = 1/60.
pub fn violation_decay(d: f64, phi0: f64) -> Result<Vec<f64>> {
    let h = scenes::PENDULUM_H;
    let mut sys = scenes::pendulum(1e-10, d * h);
    sys.gravity = Vec3::zeros();
    sys.bodies[0].x = Vec3::new(0.0, 0.0, -(1.0 + phi0));
    let tr = spook_trajectory(&mut sys, h, 60, direct())?;
    Ok(tr.signal("violation").unwrap_or(&[]).to_vec())
}

/// The thesis pendulum (h = 1/60, `epsilon = 1e-6`, `tau = d h`) for `t_end` seconds.
pub fn pendulum_run(d: f64, t_end: f64) -> Result<Trajectory> {
    let h = scenes::PENDULUM_H;
    let mut sys = scenes::pendulum(1e-6, d * h);
    spook_trajectory(&mut sys, h, (t_end / h).round() as usize, direct())
}

/// The pendulum bob as a free body (inertia of a sphere of radius 0.05) held at distance 1 from
/// the origin by a spherical loop joint: the same maximal coordinates as SPOOK's, for
/// Featherstone's closed-loop method.
pub fn pendulum_free_body() -> Result<Model> {
    let mut b = ModelBuilder::new("pendulum_free_body");
    b.opt.gravity = Vec3::new(0.0, 0.0, -10.0);
    let inertia = SpatialInertia::from_mass_com_inertia(1.0, Vec3::zeros(), Mat3::identity() * (0.4 * 0.05 * 0.05));
    let bob = b.add_body("bob", 0, Joint::new(JointType::Free), Xform::identity(), inertia);
    b.set_qpos0(bob, &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    b.add_loop(LoopJoint::new(
        "rod",
        JointType::Spherical,
        0,
        bob,
        Xform::identity(),
        xlt(Vec3::new(-1.0, 0.0, 0.0)),
    ));
    b.build()
}

/// The pendulum in reduced coordinates: one hinge about y, the bob at `(1, 0, 0)`.
pub fn pendulum_reduced() -> Result<Model> {
    let mut b = ModelBuilder::new("pendulum_reduced");
    b.opt.gravity = Vec3::new(0.0, 0.0, -10.0);
    let inertia =
        SpatialInertia::from_mass_com_inertia(1.0, Vec3::new(1.0, 0.0, 0.0), Mat3::identity() * (0.4 * 0.05 * 0.05));
    b.add_body("bob", 0, Joint::revolute(Vec3::y()), Xform::identity(), inertia);
    b.build()
}

/// The pendulum as MuJoCo models it in maximal coordinates: a free body held by a `connect`
/// equality with MuJoCo's default `solref` and `solimp` (`tests/fixtures/spook/spook_pendulum.xml`).
pub const MUJOCO_PENDULUM: &str = include_str!("../../tests/fixtures/spook/spook_pendulum.xml");

/// The one soft constraint of the `solref` comparison: a free unit mass held at the origin by a
/// `connect` with `solref = (0.02, 1)` and constant impedance 0.9, started 5 cm off (keyframe
/// "off"), h = 0.2 ms (`tests/fixtures/spook/spook_decay.xml`).
pub const MUJOCO_DECAY: &str = include_str!("../../tests/fixtures/spook/spook_decay.xml");

/// Runs `xml` through MuJoCo's pipeline ([`Simulator`], Euler, Newton converged to 1e-12 without
/// warm start, as the fixtures of `tests/fixtures/make_spook_fixtures.py` are) from `key` (or `qpos0` at rest) for
/// `steps` steps of `h` (the file's step when `None`); returns `qpos` at every step.
pub fn mujoco_rollout(xml: &str, key: Option<&str>, h: Option<f64>, steps: usize) -> Result<Vec<Vec<f64>>> {
    let mut m = mjcf::load_str(xml)?.model;
    m.opt.tolerance = 1e-12;
    m.opt.iterations = 1000;
    m.opt.flags.push(("warmstart".into(), false));
    if let Some(h) = h {
        m.opt.timestep = h;
    }
    let state = match key {
        Some(k) => State::keyframe(&m, k)?,
        None => State::reference(&m),
    };
    let mut sim = Simulator::new(&m, state, Integrator::Euler)?;
    let mut out = vec![sim.state.qpos.clone()];
    for _ in 0..steps {
        sim.step()?;
        out.push(sim.state.qpos.clone());
    }
    Ok(out)
}

/// Height of the pendulum's bob over `t_end` seconds by the four formulations: SPOOK
/// (h = 1/60, `d` = 2, `epsilon = 1e-8`), Baumgarte + RK4 on the free body (h = 1/60,
/// `T_stab` = 0.05 s), MuJoCo's soft `connect` ([`MUJOCO_PENDULUM`], Euler, h = 1/60) and
/// reduced coordinates (ABA + RK4, h = 1e-4, the reference). Each is `(t, z)` samples.
#[allow(clippy::type_complexity)]
pub fn pendulum_comparison(t_end: f64) -> Result<[Vec<(f64, f64)>; 4]> {
    let h = scenes::PENDULUM_H;
    let steps = (t_end / h).round() as usize;
    let mut sys = scenes::pendulum(1e-8, 2.0 * h);
    let tr = spook_trajectory(&mut sys, h, steps, direct())?;
    let spook: Vec<(f64, f64)> = tr.time.iter().zip(&tr.qpos).map(|(t, q)| (*t, q[2])).collect();
    let free = pendulum_free_body()?;
    let bt = loops_simulate(
        &free,
        free.qpos0.as_slice(),
        &[0.0; 6],
        &SimulateOptions {
            method: Method::Kkt,
            integrator: Integrator::Rk4,
            h,
            steps,
            t_stab: Some(0.05),
        },
    )?;
    let baumgarte: Vec<(f64, f64)> = bt.time.iter().zip(&bt.qpos).map(|(t, q)| (*t, q[2])).collect();
    let red = pendulum_reduced()?;
    let (mut q, mut qd) = (vec![0.0], vec![0.0]);
    let mut s = StepScratch::new(&red);
    let mut f = |q: &[f64], qd: &[f64], a: &mut [f64]| -> Result<()> {
        a.copy_from_slice(aba(&red, q, qd, &[0.0], None)?.as_slice());
        Ok(())
    };
    let hr = 1e-4;
    let per = (h / hr).round() as usize;
    let mut reduced = vec![(0.0, 0.0)];
    for k in 1..=steps {
        for _ in 0..per {
            rk4_step(&red, &mut s, &mut f, &mut q, &mut qd, hr)?;
        }
        reduced.push((k as f64 * h, -q[0].sin()));
    }
    let mj = mujoco_rollout(MUJOCO_PENDULUM, None, None, steps)?;
    let mujoco: Vec<(f64, f64)> = mj.iter().enumerate().map(|(k, q)| (k as f64 * h, q[2])).collect();
    Ok([spook, baumgarte, mujoco, reduced])
}

/// One sample of [`solref_decay`]: time (s) and the distance from the anchor (m) under MuJoCo,
/// under SPOOK and in the continuous return.
pub type DecaySample = (f64, f64, f64, f64);

/// The `solref` comparison: the distance of the decay scene's body from its anchor per step of
/// h = 0.2 ms over 0.1 s under MuJoCo ([`MUJOCO_DECAY`]) and under SPOOK with
/// `(epsilon, tau) = from_solref((0.02, 1), 0.9, 0.9, 1)`, and the continuous critically damped
/// return `r0 (1 + t/tc) exp(-t/tc)`. Returns `(t, mujoco, spook, continuous)` per step.
pub fn solref_decay(h: f64, t_end: f64) -> Result<Vec<DecaySample>> {
    let steps = (t_end / h).round() as usize;
    let mj = mujoco_rollout(MUJOCO_DECAY, Some("off"), Some(h), steps)?;
    let m = mjcf::load_str(MUJOCO_DECAY)?.model;
    let q0 = State::keyframe(&m, "off")?.qpos;
    let tc = 0.02;
    let (eps, tau) = from_solref([tc, 1.0], 0.9, 0.9, 1.0)?;
    let mut sys = SpookSystem::from_model(&m, &q0, &[0.0; 6], eps, tau)?;
    let mut st = Stepper::new(&sys, h, direct())?;
    let r0 = q0[0];
    let mut out = Vec::with_capacity(steps + 1);
    for (k, q) in mj.iter().enumerate() {
        let t = k as f64 * h;
        if k > 0 {
            st.step(&mut sys)?;
        }
        let exact = r0 * (1.0 + t / tc) * (-t / tc).exp();
        out.push((t, Vec3::new(q[0], q[1], q[2]).norm(), sys.bodies[0].x.norm(), exact));
    }
    Ok(out)
}

/// The values of `d = tau / h` of the interactive `tau` figure (`epsilon = 1e-6`).
pub const SLIDER_D: [f64; 8] = [0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0];
/// The frame the `tau` slider shows first (`d = 2`).
pub const SLIDER_D_DEFAULT: usize = 3;
/// The values of `epsilon` (m/N) of the interactive `epsilon` figure (`d = 2`).
pub const SLIDER_EPS: [f64; 7] = [1e-10, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2];
/// The frame the `epsilon` slider shows first (`epsilon = 1e-6`).
pub const SLIDER_EPS_DEFAULT: usize = 2;

/// The thesis pendulum (h = 1/60, g = 10) released at rest 5 cm outside its rod, at
/// (1.05, 0, 0), with `epsilon` and `tau`, for `t_end` seconds: `(t, |phi|, E(t) - E(0))`.
pub fn violated_pendulum(epsilon: f64, tau: f64, t_end: f64) -> Result<Vec<(f64, f64, f64)>> {
    let h = scenes::PENDULUM_H;
    let mut sys = scenes::pendulum(epsilon, tau);
    sys.bodies[0].x = Vec3::new(1.05, 0.0, 0.0);
    let tr = spook_trajectory(&mut sys, h, (t_end / h).round() as usize, direct())?;
    let (v, e) = (
        tr.signal("violation").unwrap_or(&[]),
        tr.signal("energy").unwrap_or(&[]),
    );
    let e0 = e.first().copied().unwrap_or(0.0);
    Ok(tr
        .time
        .iter()
        .zip(v)
        .zip(e)
        .map(|((t, v), e)| (*t, *v, e - e0))
        .collect())
}

/// [`scenes::dzhanibekov`] for `t_end` seconds at step `h` with the explicit or implicit
/// gyroscopic term: `(t, E / E(0), |L - L(0)| / |L(0)|)` per step.
pub fn dzhanibekov_run(h: f64, t_end: f64, implicit: bool) -> Result<Vec<(f64, f64, f64)>> {
    let mut sys = scenes::dzhanibekov();
    let settings = StepSettings {
        solver: SpookSolver::Schur,
        gyroscopic_implicit: implicit,
        ..Default::default()
    };
    let mut st = Stepper::new(&sys, h, settings)?;
    let l = |sys: &SpookSystem| sys.bodies[0].inertia_world() * sys.bodies[0].omega;
    let (e0, l0) = (sys.kinetic_energy(), l(&sys));
    let mut out = vec![(0.0, 1.0, 0.0)];
    for k in 1..=(t_end / h).round() as usize {
        st.step(&mut sys)?;
        out.push((
            k as f64 * h,
            sys.kinetic_energy() / e0,
            (l(&sys) - l0).norm() / l0.norm(),
        ));
    }
    Ok(out)
}

/// One frame of an interactive figure: violation and `|E - E(0)|` on one log axis.
fn slider_frame(path: &Path, title: &str, run: &[(f64, f64, f64)]) -> Result<()> {
    let floor = 1e-8;
    Chart::new(title, "time t (s)", "violation |phi| (m), |E - E(0)| (J)")
        .log(false, true)
        .ranges(Some((0.0, 3.0)), Some((floor, 1e4)))
        .with(Series::line(
            "violation |phi| (m)",
            run.iter().map(|(t, v, _)| (*t, v.max(floor))).collect(),
        ))
        .with(Series::line(
            "energy change |E(t) - E(0)| (J)",
            run.iter().map(|(t, _, e)| (*t, e.abs().max(floor))).collect(),
        ))
        .save_svg(path)
}

/// Stretch (largest joint violation, m) per step of the hanging heavy-end chain (20 links,
/// mass ratio `ratio`, `epsilon = 1e-8`, d = 2, h = 1/60) over `steps` steps, by the direct
/// solve (`pgs_sweeps = None`) or by projected Gauss-Seidel with that many sweeps.
pub fn heavy_chain_stretch(ratio: f64, pgs_sweeps: Option<usize>, steps: usize) -> Result<Vec<f64>> {
    let h = 1.0 / 60.0;
    let mut sys = scenes::heavy_chain(20, ratio, 1e-8, 2.0 * h);
    let settings = match pgs_sweeps {
        None => direct(),
        Some(n) => StepSettings {
            solver: SpookSolver::Pgs,
            pgs_iterations: n,
            ..Default::default()
        },
    };
    let tr = spook_trajectory(&mut sys, h, steps, settings)?;
    Ok(tr.signal("violation").unwrap_or(&[]).to_vec())
}

/// The falling chain of 8 capsules for `t_end` seconds at h = 1/60 (PGS).
pub fn falling_chain_run(t_end: f64) -> Result<Trajectory> {
    let h = 1.0 / 60.0;
    let mut sys = scenes::falling_chain(8, 1e-8, 2.0 * h);
    spook_trajectory(&mut sys, h, (t_end / h).round() as usize, StepSettings::default())
}

/// The spy-plot cells of SPOOK's block matrix for `model` at `qpos0`: classes 0 = `M`,
/// 1 = `G` and `-G^T`, 2 = `Sigma`. Returns the panel and `(6 nbody, m)`.
pub fn block_spy(model: &Model, title: &str) -> Result<(SpyPanel, usize, usize)> {
    let sys = SpookSystem::from_model(model, model.qpos0.as_slice(), &vec![0.0; model.nv], 1e-8, 0.03)?;
    let mut st = Stepper::new(&sys, 0.01, StepSettings::default())?;
    st.assemble(&sys);
    let (k, _) = st.block_system();
    let n6 = 6 * sys.bodies.len();
    let m = st.rows.len();
    let scale = k.amax();
    let mut cells = vec![];
    for i in 0..k.nrows() {
        for j in 0..k.ncols() {
            if k[(i, j)].abs() > 1e-12 * scale {
                let class = match (i < n6, j < n6) {
                    (true, true) => 0,
                    (false, false) => 2,
                    _ => 1,
                };
                cells.push((i, j, class));
            }
        }
    }
    Ok((
        SpyPanel {
            title: title.into(),
            rows: k.nrows(),
            cols: k.ncols(),
            cells,
        },
        n6,
        m,
    ))
}

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    println!("SPOOK: a variational stepper (Lacoursiere 2007, ch. 4; Lacoursiere and Linde 2011)");
    let h = scenes::PENDULUM_H;

    // Figure 1: return to the constraint.
    let phi0 = 0.05;
    let mut chart = Chart::new(
        "Pendulum released 5 cm off its constraint (no gravity, h = 1/60)",
        "time t (s)",
        "violation |phi| (m)",
    )
    .log(false, true)
    .ranges(None, Some((1e-12, 1.0)));
    println!("  return to the constraint from |phi| = {phi0} m (h = 1/60):");
    for d in [0.0, 2.0, 5.0, 10.0] {
        let v = violation_decay(d, phi0)?;
        let rate = violation_decay_factor(h, d * h);
        println!(
            "    d = tau/h = {d:>4}: predicted factor per step {rate:.3}, |phi| after 30 steps {:.2e} m",
            v[30]
        );
        let pts: Vec<(f64, f64)> = v
            .iter()
            .enumerate()
            .map(|(k, x)| (k as f64 * h, x.max(1e-12)))
            .collect();
        let label = if d == 0.0 {
            "tau = 0 (no stabilization)".to_string()
        } else {
            format!("d = {d}")
        };
        chart = chart.with(Series::line(&label, pts));
        if d == 5.0 {
            let pred: Vec<(f64, f64)> = (0..=60)
                .map(|k| (k as f64 * h, (phi0 * (k as f64 + 1.0) * rate.powi(k)).max(1e-12)))
                .collect();
            chart = chart.with(Series::dashed("prediction (k+1) r^k, d = 5", pred));
        }
    }
    let path = dir.join("spook_violation.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 2: energy for several d.
    let mut chart = Chart::new(
        "Thesis pendulum: total energy (h = 1/60, epsilon = 1e-6)",
        "time t (s)",
        "energy E (J)",
    );
    println!("  pendulum energy over 30 s (E(0) = 0):");
    for d in [0.0, 0.5, 2.0, 4.0] {
        let tr = pendulum_run(d, 30.0)?;
        let e = tr.signal("energy").unwrap_or(&[]);
        println!(
            "    d = {d:>3}: max |phi| {:.2e} m, E in [{:.3}, {:.3}] J, E(30 s) = {:.3} J",
            tr.max_of("violation"),
            e.iter().copied().fold(f64::MAX, f64::min),
            e.iter().copied().fold(f64::MIN, f64::max),
            e.last().copied().unwrap_or(0.0)
        );
        let pts: Vec<(f64, f64)> = tr.time.iter().zip(e).map(|(t, x)| (*t, *x)).step_by(2).collect();
        chart = chart.with(Series::line(&format!("d = tau/h = {d}"), pts));
    }
    let path = dir.join("spook_energy.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 3: four formulations of the pendulum.
    let [spook, baum, mujoco, red] = pendulum_comparison(3.0)?;
    let err = |a: &[(f64, f64)]| a.iter().zip(&red).map(|(x, y)| (x.1 - y.1).abs()).fold(0.0, f64::max);
    let (e_spook, e_baum, e_mujoco) = (err(&spook), err(&baum), err(&mujoco));
    let mj_model = mjcf::load_str(MUJOCO_PENDULUM)?.model;
    let stretch = mujoco_rollout(MUJOCO_PENDULUM, None, None, spook.len() - 1)?
        .iter()
        .map(|q| (Vec3::new(q[0], q[1], q[2]).norm() - 1.0).abs())
        .fold(0.0, f64::max);
    let table = format!(
        "| formulation (h = 1/60 s unless noted) | largest height error over 3 s | rod length error |\n\
         |---|---|---|\n\
         | reduced coordinates, ABA + RK4, h = 10<sup>-4</sup> s | (the reference) | 0 |\n\
         | SPOOK, epsilon = 10<sup>-8</sup> m/N, tau = 2h | {e_spook:.2e} m | {:.2e} m |\n\
         | free body + loop joint, Baumgarte (T<sub>stab</sub> = 0.05 s) + RK4 | {e_baum:.2e} m | (not recorded) |\n\
         | MuJoCo, free body + `connect`, solref = ({:.4}, {}) after refsafe, solimp = ({}, {}, {}), Euler | {e_mujoco:.2e} m | {stretch:.2e} m |\n",
        {
            let mut sys = scenes::pendulum(1e-8, 2.0 * h);
            spook_trajectory(&mut sys, h, spook.len() - 1, direct())?.max_of("violation")
        },
        2.0 * mj_model.opt.timestep,
        mj_model.eq_params[0].solref[1],
        mj_model.eq_params[0].solimp[0],
        mj_model.eq_params[0].solimp[1],
        mj_model.eq_params[0].solimp[2],
    );
    println!(
        "  pendulum height over 3 s against reduced coordinates: SPOOK {e_spook:.3e} m, Baumgarte + RK4 \
         {e_baum:.3e} m, MuJoCo {e_mujoco:.3e} m (MuJoCo's rod stretches up to {stretch:.3e} m)"
    );
    super::write_generated(dir, "spook_compare.md", &table)?;
    let path = dir.join("spook_compare.svg");
    Chart::new(
        "Pendulum: four formulations at h = 1/60",
        "time t (s)",
        "bob height z (m)",
    )
    .ranges(None, Some((-1.1, 0.6)))
    .with(Series::line("reduced coordinates, ABA + RK4, h = 1e-4", red))
    .with(Series::line("SPOOK, h = 1/60, d = 2", spook))
    .with(Series::dashed(
        "free body + loop joint, Baumgarte + RK4, h = 1/60",
        baum,
    ))
    .with(Series::dashed("MuJoCo, free body + connect, Euler, h = 1/60", mujoco))
    .save_svg(&path)?;
    out.push(path);

    // Figure 3b: one soft constraint under MuJoCo's solref and SPOOK's matching (epsilon, tau).
    let decay = solref_decay(2e-4, 0.1)?;
    let worst = |f: &dyn Fn(&DecaySample) -> f64| decay.iter().map(f).fold(0.0, f64::max) / 0.05;
    println!(
        "  solref (0.02, 1) vs SPOOK from_solref, h = 0.2 ms: |SPOOK - MuJoCo| {:.2e}, |MuJoCo - continuous| {:.2e}, \
         |SPOOK - continuous| {:.2e} (of r0)",
        worst(&|x| (x.2 - x.1).abs()),
        worst(&|x| (x.1 - x.3).abs()),
        worst(&|x| (x.2 - x.3).abs())
    );
    let path = dir.join("spook_solref.svg");
    Chart::new(
        "One constraint returning from 5 cm: MuJoCo solref (0.02, 1) and SPOOK's match",
        "time t (s)",
        "distance from the anchor (m)",
    )
    .with(Series::line(
        "MuJoCo, solref (0.02, 1), d = 0.9, Euler h = 0.2 ms",
        decay.iter().map(|x| (x.0, x.1)).collect(),
    ))
    .with(Series::dashed(
        "SPOOK, (epsilon, tau) = from_solref, h = 0.2 ms",
        decay.iter().map(|x| (x.0, x.2)).collect(),
    ))
    .with(Series::dashed(
        "continuous r0 (1 + t/tc) exp(-t/tc)",
        decay.iter().map(|x| (x.0, x.3)).collect(),
    ))
    .save_svg(&path)?;
    out.push(path);

    // Figures 3c, 3d, interactive: the violated pendulum over a grid of tau and of epsilon.
    println!("  pendulum released 5 cm off its rod (h = 1/60), |phi| at 0.5 s and max |E - E(0)| over 3 s:");
    for (i, &d) in SLIDER_D.iter().enumerate() {
        let run = violated_pendulum(1e-6, d * h, 3.0)?;
        println!(
            "    epsilon = 1e-6, d = {d:>4}: |phi|(0.5 s) {:.2e} m, max |dE| {:.2e} J",
            run[30].1,
            run.iter().map(|x| x.2.abs()).fold(0.0, f64::max)
        );
        let path = dir.join(format!("spook_tau_{i}.svg"));
        slider_frame(
            &path,
            &format!("Pendulum 5 cm off its rod: epsilon = 1e-6 m/N, tau = {d} h (h = 1/60)"),
            &run,
        )?;
        out.push(path);
    }
    for (i, &eps) in SLIDER_EPS.iter().enumerate() {
        let run = violated_pendulum(eps, 2.0 * h, 3.0)?;
        println!(
            "    d = 2, epsilon = {eps:.0e}: |phi|(0.5 s) {:.2e} m, max |dE| {:.2e} J",
            run[30].1,
            run.iter().map(|x| x.2.abs()).fold(0.0, f64::max)
        );
        let path = dir.join(format!("spook_eps_{i}.svg"));
        slider_frame(
            &path,
            &format!("Pendulum 5 cm off its rod: epsilon = {eps:.0e} m/N, tau = 2 h (h = 1/60)"),
            &run,
        )?;
        out.push(path);
    }

    // Figure: Dzhanibekov's T-handle, explicit vs implicit gyroscopic term.
    let mut chart = Chart::new(
        "T-handle spinning about its intermediate axis: energy (inertias 1, 2, 3)",
        "time t (s)",
        "kinetic energy E / E(0)",
    );
    println!("  Dzhanibekov's T-handle over 20 s: E(20 s) / E(0) and |L - L(0)| / |L(0)|:");
    for (hn, h) in [("1/60", 1.0 / 60.0), ("1/240", 1.0 / 240.0)] {
        for implicit in [false, true] {
            let run = dzhanibekov_run(h, 20.0, implicit)?;
            let last = run.last().copied().unwrap_or((0.0, 1.0, 0.0));
            let name = if implicit { "implicit" } else { "explicit" };
            println!("    h = {hn:<5} {name}: E {:.4} E(0), |dL| {:.2e}", last.1, last.2);
            let pts: Vec<(f64, f64)> = run.iter().map(|x| (x.0, x.1)).collect();
            let label = format!("{name} gyroscopic term, h = {hn}");
            chart = chart.with(if h > 0.01 {
                Series::line(&label, pts)
            } else {
                Series::dashed(&label, pts)
            });
        }
    }
    let path = dir.join("spook_gyro.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 4: heavy-end chain.
    let steps = 180;
    let mut chart = Chart::new(
        "Hanging chain, 20 links, end mass 100 x a link (h = 1/60)",
        "time t (s)",
        "stretch max |phi| (m)",
    )
    .log(false, true);
    println!("  heavy-end chain (ratio 100), largest stretch over 3 s:");
    for (label, sweeps) in [
        ("direct solve", None),
        ("PGS, 20 sweeps", Some(20)),
        ("PGS, 200 sweeps", Some(200)),
    ] {
        let v = heavy_chain_stretch(100.0, sweeps, steps)?;
        println!("    {label:<16} {:.3e} m", v.iter().copied().fold(0.0, f64::max));
        let pts: Vec<(f64, f64)> = v
            .iter()
            .enumerate()
            .skip(1)
            .map(|(k, x)| (k as f64 * h, x.max(1e-9)))
            .collect();
        chart = chart.with(Series::line(label, pts));
    }
    let path = dir.join("spook_heavy_chain.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 5: falling chain.
    let tr = falling_chain_run(3.0)?;
    let mut chart = Chart::new(
        "Eight capsules falling onto the floor (h = 1/60, PGS)",
        "time t (s)",
        "height z (m) / contacts x 0.01",
    );
    for (k, name) in [(0, "capsule 1"), (4, "capsule 5"), (7, "capsule 8")] {
        let pts: Vec<(f64, f64)> = tr.time.iter().zip(&tr.qpos).map(|(t, q)| (*t, q[7 * k + 2])).collect();
        chart = chart.with(Series::line(&format!("{name} centre height"), pts));
    }
    let ncon = tr.signal("ncon").unwrap_or(&[]);
    let pts: Vec<(f64, f64)> = tr.time.iter().zip(ncon).map(|(t, n)| (*t, 0.01 * n)).collect();
    chart = chart.with(Series::dashed("contacts / 100", pts));
    println!(
        "  falling chain: {} contacts at the end, largest joint violation {:.2e} m",
        ncon.last().copied().unwrap_or(0.0),
        tr.max_of("violation")
    );
    let path = dir.join("spook_falling_chain.svg");
    chart.save_svg(&path)?;
    out.push(path);

    // Figure 6: the block matrix.
    let chain = canned::chain(4, true);
    let (panel, n6, m) = block_spy(&chain, "4-link spatial chain (hinges)")?;
    println!("  block matrix of a 4-link chain: 6 nbody = {n6} velocity rows, m = {m} constraint rows");
    let path = dir.join("spook_block_spy.svg");
    Spy {
        title: "SPOOK's block matrix [[M, -G^T], [G, Sigma]]".into(),
        x_label: "column (velocity dofs, then impulses)".into(),
        y_label: "row".into(),
        classes: vec!["M (mass, I^s)".into(), "G and -G^T".into(), "Sigma".into()],
        panels: vec![panel],
    }
    .save_svg(&path)?;
    out.push(path);
    Ok(out)
}
