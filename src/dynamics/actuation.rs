//! MuJoCo's actuation model (`mj_transmission`, `mj_fwdActuation`, `mj_nextActivation`): every
//! actuator is single-input single-output. Its transmission defines a scalar length `l(q)`
//! (`actuator_length`) whose gradient is the moment arm (`actuator_moment`, one row of nu x nv);
//! its activation dynamics turn the control `ctrl` into an activation `act` with rate
//! `act_dot`; its force generation makes the scalar force `p = gain * (ctrl or act) + bias`
//! (`actuator_force`), mapped to the joints by `qfrc_actuator = moment^T p`.
//!
//! | part | MuJoCo | here |
//! |---|---|---|
//! | lengths and moment arms | `mj_transmission` | [`transmission`] |
//! | `act_dot`, gain, bias, clamping, `qfrc_actuator` | `mj_fwdActuation` | [`actuation_with`] |
//! | advancing `act` (Euler, or exact for `filterexact`) | `mj_nextActivation` | [`next_activation`] |
//! | muscle length-force curve `FL` | `mju_muscleGainLength` | [`muscle_gain_length`] |
//! | muscle active force `-F0 FL FV` and its velocity derivative | `mju_muscleGain`, `mjd_muscleGain_vel` | [`muscle_gain`], [`muscle_gain_vel`] |
//! | muscle passive force `-F0 fpmax FP` | `mju_muscleBias` | [`muscle_bias`] |
//! | muscle activation dynamics (`tausmooth` blend) | `mju_muscleDynamics`, `mju_muscleDynamicsTimescale` | [`muscle_dynamics`], [`muscle_timescale`] |
//! | `actuator_acc0` (scale of the automatic muscle force) | `mj_setConst` | [`actuator_acc0`] |
//!
//! Book chapter: "Integrators and the simulation loop", section Actuation.

use super::tendon::TendonState;
use crate::error::{check_vector, Error, Result};
use crate::kinematics::WorldAxes;
use crate::model::constants::mjMINVAL;
use crate::model::{Actuator, BiasType, DynType, GainType, JointType, Model, Transmission};
use crate::spatial::{quat_difference, quat_mul, quat_to_mat, quat_to_rotvec, Mat3, Vec3, Xform};
use nalgebra::DMatrix;

/// MuJoCo's `na`: the number of activations, one per actuator with dynamics.
pub fn actuator_na(model: &Model) -> usize {
    model.actuators.iter().filter(|a| a.dyntype != DynType::None).count()
}

/// What [`actuation_with`] computes (MuJoCo's names).
#[derive(Clone, Debug, PartialEq)]
pub struct Actuation {
    /// `actuator_length` (nu).
    pub length: Vec<f64>,
    /// `actuator_moment` (nu x nv, dense): `d length / d qpos` in velocity coordinates.
    pub moment: DMatrix<f64>,
    /// `actuator_velocity = moment qvel` (nu).
    pub velocity: Vec<f64>,
    /// `actuator_force` (nu), after the tendons' `actuatorfrcrange` scaling and `forcerange`
    /// clamping.
    pub force: Vec<f64>,
    /// Whether each force is saturated, so that MuJoCo 4.0 leaves its velocity derivative out
    /// of the implicit integrators (`mjd_actuator_vel`): clamped by its own `forcerange`, or
    /// pulling on a tendon whose actuators' total force reaches or leaves its
    /// `actuatorfrcrange`, or (a joint transmission) driving a joint whose `qfrc_actuator`
    /// reaches or leaves the joint's `actuatorfrcrange`.
    pub clamped: Vec<bool>,
    /// The summed force of the actuators on each tendon with an `actuatorfrcrange`, before it is
    /// scaled into the range (ntendon; zero for the other tendons).
    pub tendon_force: Vec<f64>,
    /// `act_dot` (na).
    pub act_dot: Vec<f64>,
    /// `qfrc_actuator = moment^T force` (nv).
    pub qfrc: Vec<f64>,
    /// `actuator_acc0` (nu): `|M^-1 moment^T|` at `qpos0`, the model constant a muscle with
    /// `force < 0` scales by (`F0 = scale / acc0`). Computed here, once, only for models with
    /// such a muscle (zero otherwise); NaN if it could not be computed, which
    /// [`actuation_with`] reports when a muscle needs it.
    pub acc0: Vec<f64>,
}

/// Whether an actuator's force uses `actuator_acc0`: a muscle gain or bias with `force < 0`.
fn needs_acc0(a: &Actuator) -> bool {
    (a.gaintype == GainType::Muscle && a.gainprm[2] < 0.0) || (a.biastype == BiasType::Muscle && a.biasprm[2] < 0.0)
}

impl Actuation {
    /// Zeroed storage for `model`, with `actuator_acc0` computed when a muscle needs it
    /// ([`actuator_acc0`]).
    pub fn new(model: &Model) -> Self {
        let nu = model.actuators.len();
        let acc0 = if model.actuators.iter().any(needs_acc0) {
            actuator_acc0(model).unwrap_or_else(|_| vec![f64::NAN; nu])
        } else {
            vec![0.0; nu]
        };
        Actuation {
            length: vec![0.0; nu],
            moment: DMatrix::zeros(nu, model.nv),
            velocity: vec![0.0; nu],
            force: vec![0.0; nu],
            clamped: vec![false; nu],
            tendon_force: vec![0.0; model.tendons.len()],
            act_dot: vec![0.0; actuator_na(model)],
            qfrc: vec![0.0; model.nv],
            acc0,
        }
    }
}

/// MuJoCo's `actuator_acc0` (`mj_setConst`): for every actuator, the norm of the joint
/// acceleration its unit force causes at `qpos0` from rest, `|M^-1 moment^T|`, with `M` and the
/// moment arms at `qpos0`. A muscle with `force < 0` takes `F0 = scale / acc0`, so that its
/// peak force accelerates the model by about `scale`.
pub fn actuator_acc0(model: &Model) -> Result<Vec<f64>> {
    let q0 = model.qpos0.as_slice();
    let ten = super::tendon_kinematics(model, q0)?;
    let nu = model.actuators.len();
    let mut length = vec![0.0; nu];
    let mut moment = DMatrix::zeros(nu, model.nv);
    transmission(model, q0, &ten, &mut length, &mut moment)?;
    let m = super::crba(model, q0)?;
    let chol = m.cholesky().ok_or_else(|| Error::Singular {
        what: "the inertia matrix at qpos0 (for actuator_acc0)".into(),
        why: "it is not positive definite".into(),
    })?;
    Ok((0..nu).map(|k| chol.solve(&moment.row(k).transpose()).norm()).collect())
}

// ANCHOR: dampratio
/// MuJoCo 4.0's `dampratio` (`mj_setConst`): a position servo ([`Actuator::is_position_servo`]) whose
/// `biasprm[2]` is positive holds a damping ratio `zeta`; its damping becomes
/// `kv = zeta 2 sqrt(kp m)`, stored as `biasprm[2] = -kv`, with `m = 1 / (J M^-1 J^T)` the
/// inertia the actuator sees at `qpos0` (`J` its moment arm, `M` the joint-space inertia with
/// the joints' armature): a harmonic oscillator `m x'' = -kp x - kv x'` with that ratio. Returns
/// how many actuators were set. Run by [`crate::mujoco::load`]; until then such an actuator is
/// refused by [`actuation_with`] ([`Error::Unresolved`]).
pub fn set_dampratio(model: &mut Model) -> Result<usize> {
    let servos: Vec<usize> = (0..model.actuators.len())
        .filter(|&k| model.actuators[k].is_position_servo() && model.actuators[k].biasprm[2] > 0.0)
        .collect();
    if servos.is_empty() {
        return Ok(0);
    }
    let q0 = model.qpos0.as_slice().to_vec();
    let ten = super::tendon_kinematics(model, &q0)?;
    let nu = model.actuators.len();
    let mut length = vec![0.0; nu];
    let mut moment = DMatrix::zeros(nu, model.nv);
    transmission(model, &q0, &ten, &mut length, &mut moment)?;
    let m = super::crba(model, &q0)?;
    let chol = m.cholesky().ok_or_else(|| Error::Singular {
        what: "the inertia matrix at qpos0 (for dampratio)".into(),
        why: "it is not positive definite".into(),
    })?;
    for &k in &servos {
        let j = moment.row(k).transpose();
        let jmj = j.dot(&chol.solve(&j));
        let a = &mut model.actuators[k];
        if !(jmj > 0.0) {
            return Err(Error::Singular {
                what: format!("the reflected inertia of actuator {k} ('{}') for its dampratio", a.name),
                why: "its moment arm at qpos0 is zero".into(),
            });
        }
        let (kp, zeta) = (a.gainprm[0], a.biasprm[2]);
        if !(kp >= 0.0) {
            // MuJoCo 4.0 writes a NaN damping here
            return Err(Error::BadParameter {
                what: format!(
                    "kp (gainprm[0]) of actuator {k} ('{}'), whose damping is a dampratio",
                    a.name
                ),
                value: kp,
                why: "a damping ratio needs a non-negative stiffness".into(),
            });
        }
        a.biasprm[2] = -zeta * 2.0 * (kp / jmj).sqrt();
    }
    Ok(servos.len())
}
// ANCHOR_END: dampratio

// ANCHOR: muscle
/// MuJoCo's `mju_muscleGainLength`: the normalized active force-length curve `FL(L)`, two
/// quadratic pieces on each side of the optimum `L = 1` (where `FL = 1`), meeting at the
/// midpoints `a = (lmin + 1) / 2` and `b = (1 + lmax) / 2` with `FL = 1/2`, and zero outside
/// `[lmin, lmax]`.
pub fn muscle_gain_length(length: f64, lmin: f64, lmax: f64) -> f64 {
    if !(lmin <= length && length <= lmax) {
        return 0.0;
    }
    let a = 0.5 * (lmin + 1.0);
    let b = 0.5 * (1.0 + lmax);
    if length <= a {
        let x = (length - lmin) / (a - lmin).max(mjMINVAL);
        0.5 * x * x
    } else if length <= 1.0 {
        let x = (1.0 - length) / (1.0 - a).max(mjMINVAL);
        1.0 - 0.5 * x * x
    } else if length <= b {
        let x = (length - 1.0) / (b - 1.0).max(mjMINVAL);
        1.0 - 0.5 * x * x
    } else {
        let x = (lmax - length) / (lmax - b).max(mjMINVAL);
        0.5 * x * x
    }
}

/// The muscle's peak force `F0` (`force`, or `scale / acc0` when `force < 0`), its optimal
/// length `L0 = (lengthrange[1] - lengthrange[0]) / (range[1] - range[0])` and its normalized
/// length `L = range[0] + (len - lengthrange[0]) / L0`, shared by gain and bias.
fn muscle_scales(len: f64, lengthrange: &[f64; 2], acc0: f64, prm: &[f64; 10]) -> (f64, f64, f64) {
    let (range, force, scale) = ([prm[0], prm[1]], prm[2], prm[3]);
    let f0 = if force < 0.0 { scale / acc0.max(mjMINVAL) } else { force };
    let l0 = (lengthrange[1] - lengthrange[0]) / (range[1] - range[0]).max(mjMINVAL);
    let l = range[0] + (len - lengthrange[0]) / l0.max(mjMINVAL);
    (f0, l0, l)
}

/// The force-velocity curve `FV(V)` of a normalized velocity `V = ldot / (L0 vmax)` and its
/// derivative `dFV/dV`: zero below `V = -1` (shortening faster than `vmax`), `(V + 1)^2` up to
/// the isometric `FV(0) = 1`, then rising to the lengthening plateau `fvmax` at `V = fvmax - 1`
/// along `fvmax - (y - V)^2 / y`, `y = fvmax - 1`.
pub fn muscle_gain_velocity(v: f64, fvmax: f64) -> (f64, f64) {
    let y = fvmax - 1.0;
    if v <= -1.0 {
        (0.0, 0.0)
    } else if v <= 0.0 {
        ((v + 1.0) * (v + 1.0), 2.0 * v + 2.0)
    } else if v <= y {
        (
            fvmax - (y - v) * (y - v) / y.max(mjMINVAL),
            (2.0 * y - 2.0 * v) / y.max(mjMINVAL),
        )
    } else {
        (fvmax, 0.0)
    }
}

/// MuJoCo's `mju_muscleGain`: the active force per unit activation, `-F0 FL(L) FV(V)`
/// (negative: a muscle pulls, shortening its length), `prm = (range[2], force, scale, lmin,
/// lmax, vmax, fpmax, fvmax)`.
pub fn muscle_gain(len: f64, vel: f64, lengthrange: &[f64; 2], acc0: f64, prm: &[f64; 10]) -> f64 {
    let (f0, l0, l) = muscle_scales(len, lengthrange, acc0, prm);
    let v = vel / (l0 * prm[6]).max(mjMINVAL);
    let fl = muscle_gain_length(l, prm[4], prm[5]);
    let (fv, _) = muscle_gain_velocity(v, prm[8]);
    -f0 * fl * fv
}

/// MuJoCo's `mjd_muscleGain_vel`: `d muscle_gain / d vel = -F0 FL dFV/dV / (L0 vmax)`, the term a
/// muscle adds to `qDeriv` (times its activation) in the implicit integrators.
pub fn muscle_gain_vel(len: f64, vel: f64, lengthrange: &[f64; 2], acc0: f64, prm: &[f64; 10]) -> f64 {
    let (f0, l0, l) = muscle_scales(len, lengthrange, acc0, prm);
    let v = vel / (l0 * prm[6]).max(mjMINVAL);
    let fl = muscle_gain_length(l, prm[4], prm[5]);
    let (_, dfv) = muscle_gain_velocity(v, prm[8]);
    -f0 * fl * dfv / (l0 * prm[6]).max(mjMINVAL)
}

/// MuJoCo's `mju_muscleBias`: the passive force `-F0 fpmax FP(L)`, zero up to the optimal
/// length, a half quadratic up to `b = (1 + lmax) / 2` (where `FP = 1/2`), linear beyond.
pub fn muscle_bias(len: f64, lengthrange: &[f64; 2], acc0: f64, prm: &[f64; 10]) -> f64 {
    let (f0, _, l) = muscle_scales(len, lengthrange, acc0, prm);
    let (lmax, fpmax) = (prm[5], prm[7]);
    let b = 0.5 * (1.0 + lmax);
    if l <= 1.0 {
        0.0
    } else if l <= b {
        let x = (l - 1.0) / (b - 1.0).max(mjMINVAL);
        -f0 * fpmax * 0.5 * x * x
    } else {
        let x = (l - b) / (b - 1.0).max(mjMINVAL);
        -f0 * fpmax * (0.5 + x)
    }
}

/// MuJoCo's `mju_sigmoid`: the quintic smoothstep `6x^5 - 15x^4 + 10x^3` on `[0, 1]` (flat
/// to second order at both ends), 0 below and 1 above.
pub fn sigmoid(x: f64) -> f64 {
    if x <= 0.0 {
        0.0
    } else if x >= 1.0 {
        1.0
    } else {
        x * x * x * (3.0 * x * (2.0 * x - 5.0) + 10.0)
    }
}

/// MuJoCo's `mju_muscleDynamicsTimescale`: `tau_act` when the excitation exceeds the
/// activation (`dctrl > 0`), `tau_deact` otherwise; with `tausmooth > 0` the switch is the
/// [`sigmoid`] blend `tau_deact + (tau_act - tau_deact) sigmoid(dctrl / tausmooth + 1/2)` over
/// `|dctrl| < tausmooth / 2`.
pub fn muscle_timescale(dctrl: f64, tau_act: f64, tau_deact: f64, tausmooth: f64) -> f64 {
    if tausmooth < mjMINVAL {
        if dctrl > 0.0 {
            tau_act
        } else {
            tau_deact
        }
    } else {
        tau_deact + (tau_act - tau_deact) * sigmoid(dctrl / tausmooth + 0.5)
    }
}

/// MuJoCo's `mju_muscleDynamics` (Millard et al. 2013): `act_dot = (u - act) / tau` with the
/// excitation `u = clamp(ctrl, 0, 1)` and a time constant that depends on the clamped
/// activation `a`: `tau_act (0.5 + 1.5 a)` when activating, `tau_deact / (0.5 + 1.5 a)` when
/// deactivating ([`muscle_timescale`]); `prm = (tau_act, tau_deact, tausmooth)`.
pub fn muscle_dynamics(ctrl: f64, act: f64, prm: &[f64; 10]) -> f64 {
    let u = ctrl.clamp(0.0, 1.0);
    let a = act.clamp(0.0, 1.0);
    let tau_act = prm[0] * (0.5 + 1.5 * a);
    let tau_deact = prm[1] / (0.5 + 1.5 * a);
    let dctrl = u - act;
    dctrl / muscle_timescale(dctrl, tau_act, tau_deact, prm[2]).max(mjMINVAL)
}
// ANCHOR_END: muscle

/// A site's world position and orientation (`site_xpos`, `site_xmat`).
fn site_frame(model: &Model, axes: &WorldAxes, s: usize) -> (Vec3, Mat3) {
    let site = &model.sites[s];
    (
        axes.point(site.body, &site.pos),
        axes.rotation(site.body) * quat_to_mat(&site.quat),
    )
}

/// The world orientation of a site as a quaternion (`site_quat` composed with the body's).
fn site_quat(model: &Model, axes: &WorldAxes, s: usize) -> [f64; 4] {
    let site = &model.sites[s];
    let body = crate::spatial::mat_to_quat_with(&axes.rotation(site.body));
    quat_mul(&body, &site.quat)
}

/// Whether body `k` is body `b` or one of its ancestors (so that its dofs move `b`).
fn moves(model: &Model, k: usize, mut b: usize) -> bool {
    while b != 0 {
        if b == k {
            return true;
        }
        b = model.lambda[b];
    }
    false
}

/// Adds to row `i` of `moment`, with the sign `sign`, the site `s` at world point `x` seen
/// through the force direction `wf` and torque direction `wt`: `J_p^T wf + J_r^T wt` at the dofs
/// that move the site, leaving out those that also move body `other` (`mj_transmission` clears
/// the common ancestors of a site and its reference site: their motion moves both together).
#[allow(clippy::too_many_arguments)]
fn add_site_moment(
    model: &Model,
    axes: &WorldAxes,
    (s, x): (usize, &Vec3),
    other: Option<usize>,
    (wf, wt): (&Vec3, &Vec3),
    sign: f64,
    moment: &mut DMatrix<f64>,
    i: usize,
) {
    for c in axes.chain(model, model.sites[s].body) {
        if other.is_some_and(|o| moves(model, model.dof_body[c], o)) {
            continue;
        }
        let a = axes.axis(c);
        moment[(i, c)] += sign * ((a.w.cross(x) + a.v).dot(wf) + a.w.dot(wt));
    }
}

// ANCHOR: transmission
/// MuJoCo's `mj_transmission`: `actuator_length` and `actuator_moment` of every actuator at
/// `q` (`ten` the tendon state at `q`). Per transmission ([`Transmission`]):
/// - hinge/slide joint: `l = gear_0 q`, moment `gear_0` at the dof;
/// - ball joint: `l = rotvec(q) . g`, moment `g` on the 3 dofs, where `g = gear[0..3]`
///   (`jointinparent`: `g = R^T gear`, the parent-frame axis in the child frame);
/// - free joint: `l = 0`, moment `(gear[0..3], g)` with `g` as for a ball;
/// - tendon: `l = gear_0 L`, moment `gear_0 ten_J`;
/// - slider-crank: with `a` the slider's z axis, `v = x_crank - x_slider`, `r` the rod,
///   `l = a.v - sqrt((a.v)^2 + r^2 - v.v)` and the moment by the chain rule through the
///   Jacobians of `v` and `a`;
/// - site: `l = 0`, moment `J^T (R gear)` (force and torque along the gear in the site frame);
///   with a reference site, `l` is the site's position and rotation vector relative to it,
///   projected on `gear` in the reference frame, and the Jacobians are relative (common
///   ancestors removed).
///
/// The sizes of `q` (nq), `ten` (ntendon x nv), `length` (nu) and `moment` (nu x nv) are
/// checked first: a wrong one is an [`Error::BadLength`].
pub fn transmission(
    model: &Model,
    q: &[f64],
    ten: &TendonState,
    length: &mut [f64],
    moment: &mut DMatrix<f64>,
) -> Result<()> {
    let (nu, nt) = (model.actuators.len(), model.tendons.len());
    check_vector("qpos", q, model.nq)?;
    for (what, got, expected) in [
        ("actuator_length", length.len(), nu),
        ("actuator_moment rows", moment.nrows(), nu),
        ("actuator_moment columns", moment.ncols(), model.nv),
        ("ten_length", ten.length.len(), nt),
        ("ten_J rows", ten.moment.nrows(), nt),
        ("ten_J columns", ten.moment.ncols(), model.nv),
    ] {
        if got != expected {
            return Err(Error::BadLength {
                what: what.into(),
                got,
                expected,
            });
        }
    }
    transmission_with(model, q, &[], ten, &mut WorldAxes::default(), length, moment)
}

/// [`transmission`] with the mocap bodies placed at `mocap` (one transform per mocap body,
/// [`crate::model::mocap_xform`]; empty: at their default poses, as [`transmission`]) and the
/// body poses and world dof axes that the site and slider-crank transmissions read kept in
/// `axes` (no allocation once sized). Kernel: the sizes are assumed valid (see
/// [`transmission`]).
pub fn transmission_with(
    model: &Model,
    q: &[f64],
    mocap: &[Xform],
    ten: &TendonState,
    axes: &mut WorldAxes,
    length: &mut [f64],
    moment: &mut DMatrix<f64>,
) -> Result<()> {
    moment.as_mut_slice().fill(0.0);
    if model
        .actuators
        .iter()
        .any(|a| matches!(a.trn, Transmission::SliderCrank { .. } | Transmission::Site { .. }))
    {
        axes.update(model, q, mocap);
    }
    for (i, a) in model.actuators.iter().enumerate() {
        let gear = &a.gear;
        match a.trn {
            Transmission::Joint(j) | Transmission::JointInParent(j) => {
                let (qa, va) = (model.q_adr[j], model.v_adr[j]);
                let in_parent = matches!(a.trn, Transmission::JointInParent(_));
                match model.joints[j].jtype {
                    JointType::Spherical | JointType::Free => {
                        let free = model.joints[j].jtype == JointType::Free;
                        let qo = if free { qa + 3 } else { qa };
                        let mut quat = [q[qo], q[qo + 1], q[qo + 2], q[qo + 3]];
                        crate::spatial::quat_normalize(&mut quat);
                        let g0 = if free {
                            Vec3::new(gear[3], gear[4], gear[5])
                        } else {
                            Vec3::new(gear[0], gear[1], gear[2])
                        };
                        let g = if in_parent {
                            quat_to_mat(&quat).transpose() * g0
                        } else {
                            g0
                        };
                        if free {
                            length[i] = 0.0;
                            for k in 0..3 {
                                moment[(i, va + k)] = gear[k];
                                moment[(i, va + 3 + k)] = g[k];
                            }
                        } else {
                            length[i] = quat_to_rotvec(&quat).dot(&g);
                            for k in 0..3 {
                                moment[(i, va + k)] = g[k];
                            }
                        }
                    }
                    _ => {
                        length[i] = q[qa] * gear[0];
                        moment[(i, va)] = gear[0];
                    }
                }
            }
            Transmission::Tendon(t) => {
                length[i] = ten.length[t] * gear[0];
                for c in 0..model.nv {
                    moment[(i, c)] = ten.moment[(t, c)] * gear[0];
                }
            }
            Transmission::SliderCrank { crank, slider } => {
                let (xs, rs) = site_frame(model, axes, slider);
                let (xc, _) = site_frame(model, axes, crank);
                let axis: Vec3 = rs.column(2).into();
                let v = xc - xs;
                let rod = a.cranklength;
                let av = axis.dot(&v);
                let det = av * av + rod * rod - v.dot(&v);
                let (dlda, dldv);
                if det <= 0.0 {
                    // the rod cannot reach: MuJoCo falls back to the projection a.v
                    length[i] = av;
                    dlda = v;
                    dldv = axis;
                } else {
                    let sdet = det.sqrt();
                    length[i] = av - sdet;
                    dldv = axis * (1.0 - av / sdet) + v / sdet;
                    dlda = v * (1.0 - av / sdet);
                }
                // d v / dq_c = J_crank,c - J_slider,c; d axis / dq_c = w_c x axis at the dofs that
                // turn the slider
                let none = Vec3::zeros();
                add_site_moment(model, axes, (crank, &xc), None, (&dldv, &none), 1.0, moment, i);
                add_site_moment(model, axes, (slider, &xs), None, (&dldv, &none), -1.0, moment, i);
                for c in axes.chain(model, model.sites[slider].body) {
                    moment[(i, c)] += dlda.dot(&axes.axis(c).w.cross(&axis));
                }
                for c in 0..model.nv {
                    moment[(i, c)] *= gear[0];
                }
                length[i] *= gear[0];
            }
            Transmission::Site { site, refsite } => {
                let (xs, rs) = site_frame(model, axes, site);
                let gf = Vec3::new(gear[0], gear[1], gear[2]);
                let gt = Vec3::new(gear[3], gear[4], gear[5]);
                length[i] = 0.0;
                match refsite {
                    None => {
                        let (wf, wt) = (rs * gf, rs * gt);
                        add_site_moment(model, axes, (site, &xs), None, (&wf, &wt), 1.0, moment, i);
                    }
                    Some(r) => {
                        // relative to the reference site, in its frame: the site's position and
                        // rotation vector, and the difference of the two Jacobians
                        let (xr, rr) = site_frame(model, axes, r);
                        let (bs, br) = (model.sites[site].body, model.sites[r].body);
                        if gf != Vec3::zeros() {
                            length[i] += (rr.transpose() * (xs - xr)).dot(&gf);
                        }
                        if gt != Vec3::zeros() {
                            let vec = quat_difference(&site_quat(model, axes, r), &site_quat(model, axes, site));
                            length[i] += vec.dot(&gt);
                        }
                        let (wf, wt) = (rr * gf, rr * gt);
                        add_site_moment(model, axes, (site, &xs), Some(br), (&wf, &wt), 1.0, moment, i);
                        add_site_moment(model, axes, (r, &xr), Some(bs), (&wf, &wt), -1.0, moment, i);
                    }
                }
            }
        }
    }
    Ok(())
}
// ANCHOR_END: transmission

// ANCHOR: activation
/// MuJoCo's `mj_nextActivation`: the activation after one step of size `h` from `act` with
/// rate `act_dot`. `filterexact` integrates the filter `act_dot = (ctrl - act) / tau` exactly,
/// `act + act_dot tau (1 - exp(-h / tau))`, which is stable for every `tau > 0`; the others
/// take an Euler step `act + h act_dot` (for `filter` stable only when `h < 2 tau`). The result
/// is clamped to `actrange` when limited.
pub fn next_activation(a: &Actuator, act: f64, act_dot: f64, h: f64) -> f64 {
    let next = if a.dyntype == DynType::FilterExact {
        let tau = a.dynprm[0].max(mjMINVAL);
        act + act_dot * tau * (1.0 - (-h / tau).exp())
    } else {
        act + h * act_dot
    };
    if a.actlimited {
        next.clamp(a.actrange[0], a.actrange[1])
    } else {
        next
    }
}
// ANCHOR_END: activation

/// The control an actuator sees: `ctrl` clamped to `ctrlrange` when limited (MuJoCo's default
/// `clampctrl`).
pub fn clamped_ctrl(a: &Actuator, ctrl: f64) -> f64 {
    if a.ctrllimited {
        ctrl.clamp(a.ctrlrange[0], a.ctrlrange[1])
    } else {
        ctrl
    }
}

/// The dofs where [`transmission`] may put a non-zero moment arm for actuator `a`: a joint
/// transmission's own dofs, every dof for the others (MuJoCo stores `actuator_moment` sparse
/// for the same reason).
fn moment_columns(model: &Model, a: &Actuator) -> std::ops::Range<usize> {
    match a.trn {
        Transmission::Joint(j) | Transmission::JointInParent(j) => model.dofs(j),
        _ => 0..model.nv,
    }
}

// ANCHOR: fwd_actuation
/// MuJoCo's `mj_fwdActuation` after `mj_transmission` (`out.length`, `out.moment` filled):
/// - `act_dot`: `integrator` `ctrl`; `filter`/`filterexact` `(ctrl - act) / max(tau, mjMINVAL)`;
///   `muscle` [`muscle_dynamics`];
/// - force `p = gain * input + bias` with input `ctrl` (no dynamics) or `act`, `gain` fixed
///   (`gainprm[0]`), affine (`gainprm[0] + gainprm[1] l + gainprm[2] ldot`) or muscle
///   ([`muscle_gain`]), `bias` none, affine (`biasprm[0] + biasprm[1] l + biasprm[2] ldot`) or
///   muscle ([`muscle_bias`]);
/// - the forces on a tendon with an `actuatorfrcrange` scaled so that their sum stays in it
///   ([`tendon_actuator_limits`]), then each force clamped to its `forcerange`;
/// - `qfrc_actuator = moment^T p`;
/// - then, joint by joint ([`joint_actuator_forces`]), the gravity compensation of joints with
///   `actuatorgravcomp` (`gravcomp`, MuJoCo's `qfrc_gravcomp` of the velocity stage; empty for
///   none) added, and `qfrc_actuator` clamped to the joint's `actuatorfrcrange`.
///
/// Controls are clamped to `ctrlrange` (unless `<flag clampctrl="disable">`); activations are
/// used as they are (clamped to `actrange` only by [`next_activation`], as MuJoCo 4.0 does).
/// Each actuator's saturation for the implicit integrators is left in `out.clamped`. A muscle
/// whose `actuator_acc0` could not be computed (`out.acc0` NaN) is an [`Error::Singular`]; one
/// without a length range (`lengthrange[0] >= lengthrange[1]`, left for
/// `mbd::mujoco::lengthrange::set_length_range`) an [`Error::LengthRangeMissing`]. Kernel:
/// lengths are assumed valid (see [`actuation`]).
pub fn actuation_with(
    model: &Model,
    qd: &[f64],
    ctrl: &[f64],
    act: &[f64],
    gravcomp: &[f64],
    out: &mut Actuation,
) -> Result<()> {
    out.qfrc.fill(0.0);
    let mut ia = 0;
    for (k, a) in model.actuators.iter().enumerate() {
        let row = out.moment.row(k);
        // the columns the moment arm can use (a joint transmission: the joint's dofs)
        let velocity: f64 = moment_columns(model, a).map(|c| row[c] * qd[c]).sum();
        out.velocity[k] = velocity;
        let length = out.length[k];
        let muscle = a.gaintype == GainType::Muscle || a.biastype == BiasType::Muscle;
        if muscle && a.lengthrange[0] >= a.lengthrange[1] {
            return Err(Error::LengthRangeMissing {
                actuator: k,
                name: a.name.clone(),
                range: a.lengthrange,
            });
        }
        if a.is_position_servo() && a.biasprm[2] > 0.0 {
            return Err(Error::Unresolved {
                what: format!("the dampratio of actuator {k} ('{}')", a.name),
                how: "load the model with mbd::mujoco::load, which computes it (or call mbd::dynamics::set_dampratio)"
                    .into(),
            });
        }
        if needs_acc0(a) && out.acc0[k].is_nan() {
            return Err(Error::Singular {
                what: format!("actuator_acc0 of muscle actuator {k} ('{}')", a.name),
                why: "M^-1 moment^T at qpos0 could not be computed".into(),
            });
        }
        let u = if model.opt.disabled("clampctrl") {
            ctrl[k]
        } else {
            clamped_ctrl(a, ctrl[k])
        };
        let input = match a.dyntype {
            DynType::None => u,
            dyn_type => {
                let x = act[ia];
                out.act_dot[ia] = match dyn_type {
                    DynType::Integrator => u,
                    DynType::Muscle => muscle_dynamics(u, x, &a.dynprm),
                    _ => (u - x) / a.dynprm[0].max(mjMINVAL),
                };
                ia += 1;
                // the activation as it is: MuJoCo clamps it to actrange only when it advances
                // it (mj_nextActivation), so one set outside the range (or an RK4 stage's)
                // acts unclamped
                x
            }
        };
        let gain = match a.gaintype {
            GainType::Fixed => a.gainprm[0],
            GainType::Affine => a.gainprm[0] + a.gainprm[1] * length + a.gainprm[2] * velocity,
            GainType::Muscle => muscle_gain(length, velocity, &a.lengthrange, out.acc0[k], &a.gainprm),
        };
        let bias = match a.biastype {
            BiasType::None => 0.0,
            BiasType::Affine => a.biasprm[0] + a.biasprm[1] * length + a.biasprm[2] * velocity,
            BiasType::Muscle => muscle_bias(length, &a.lengthrange, out.acc0[k], &a.biasprm),
        };
        out.force[k] = gain * input + bias;
        out.clamped[k] = false;
    }
    tendon_actuator_limits(model, out);
    for (k, a) in model.actuators.iter().enumerate() {
        let mut force = out.force[k];
        if a.forcelimited {
            // MuJoCo's mjd_actuator_vel drops an actuator whose force sits on a bound
            out.clamped[k] |= force <= a.forcerange[0] || force >= a.forcerange[1];
            force = force.clamp(a.forcerange[0], a.forcerange[1]);
            out.force[k] = force;
        }
        let row = out.moment.row(k);
        for c in moment_columns(model, a) {
            out.qfrc[c] += row[c] * force;
        }
    }
    joint_actuator_forces(model, gravcomp, &mut out.qfrc);
    // a joint transmission on a joint whose actuator force is at its limit is saturated too
    for (k, a) in model.actuators.iter().enumerate() {
        if let Transmission::Joint(j) | Transmission::JointInParent(j) = a.trn {
            if let Some([lo, hi]) = model.joints[j].actfrcrange {
                let f = out.qfrc[model.v_adr[j]];
                out.clamped[k] |= f <= lo || f >= hi;
            }
        }
    }
    Ok(())
}
// ANCHOR_END: fwd_actuation

// ANCHOR: tendon_actuator_limits
/// The tendon stage of MuJoCo's `mj_fwdActuation`, before each actuator's own `forcerange`:
/// on a tendon with an `actuatorfrcrange` `[lo, hi]`, the forces of the actuators pulling on it
/// (`out.force`, tendon transmissions) sum to `total`; when `total` leaves the range, each of
/// them is multiplied by `lo / total` (or `hi / total`), so that their sum is the bound and
/// their shares are kept. A tendon whose total reaches or leaves the range (`total <= lo` or
/// `total >= hi`) marks its actuators saturated (`out.clamped`). The totals are left in
/// `out.tendon_force`.
pub fn tendon_actuator_limits(model: &Model, out: &mut Actuation) {
    let on_limited_tendon = |a: &Actuator| match a.trn {
        Transmission::Tendon(t) => model.tendons[t].actfrcrange.map(|r| (t, r)),
        _ => None,
    };
    if !model.actuators.iter().any(|a| on_limited_tendon(a).is_some()) {
        return;
    }
    out.tendon_force.fill(0.0);
    for (k, a) in model.actuators.iter().enumerate() {
        if let Some((t, _)) = on_limited_tendon(a) {
            out.tendon_force[t] += out.force[k];
        }
    }
    for (k, a) in model.actuators.iter().enumerate() {
        let Some((t, [lo, hi])) = on_limited_tendon(a) else {
            continue;
        };
        let total = out.tendon_force[t];
        out.clamped[k] = total <= lo || total >= hi;
        if total < lo {
            out.force[k] *= lo / total;
        } else if total > hi {
            out.force[k] *= hi / total;
        }
    }
}
// ANCHOR_END: tendon_actuator_limits

// ANCHOR: joint_actuator_forces
/// The joint-level end of MuJoCo's `mj_fwdActuation`, for each joint: a joint with
/// `actuatorgravcomp` takes its dofs' share of `qfrc_gravcomp` (`gravcomp`, empty for none) into
/// `qfrc_actuator` instead of `qfrc_passive` (so that the actuators' limit applies to it), and a
/// joint with an `actuatorfrcrange` has `qfrc_actuator` at its dof clamped to that range (a
/// motor's torque limit, whatever the actuators and the compensation ask).
pub fn joint_actuator_forces(model: &Model, gravcomp: &[f64], qfrc: &mut [f64]) {
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if j.actgravcomp && !gravcomp.is_empty() {
            for dof in model.dofs(i) {
                qfrc[dof] += gravcomp[dof];
            }
        }
        if let Some([lo, hi]) = j.actfrcrange {
            let dof = model.v_adr[i];
            qfrc[dof] = qfrc[dof].clamp(lo, hi);
        }
    }
}
// ANCHOR_END: joint_actuator_forces

/// Checks `ctrl` (nu) and `act` (na) against `model`: lengths and finiteness.
pub fn check_controls(model: &Model, ctrl: &[f64], act: &[f64]) -> Result<()> {
    check_vector("ctrl", ctrl, model.actuators.len())?;
    check_vector("act", act, actuator_na(model))
}

/// [`transmission`] and [`actuation_with`] at `(q, qd, ctrl, act)` after checking them:
/// every actuator quantity of MuJoCo's `mj_fwdActuation` (with the gravity compensation of
/// joints with `actuatorgravcomp`, [`super::gravcomp_into`]).
pub fn actuation(
    model: &Model,
    ten: &TendonState,
    q: &[f64],
    qd: &[f64],
    ctrl: &[f64],
    act: &[f64],
) -> Result<Actuation> {
    model.check_state(q, qd)?;
    check_controls(model, ctrl, act)?;
    let mut out = Actuation::new(model);
    transmission(model, q, ten, &mut out.length, &mut out.moment)?;
    let mut passive = super::PassiveScratch::default();
    if model.joints.iter().any(|j| j.actgravcomp) {
        super::gravcomp_into(model, q, &mut passive)?;
    }
    actuation_with(model, qd, ctrl, act, &passive.gravcomp, &mut out)?;
    crate::error::check_output("qfrc_actuator", &out.qfrc)?;
    Ok(out)
}

/// `qfrc_actuator` at controls `ctrl` (nu) and activations `act` (na, in actuator order), see
/// [`actuation`]. `ten` are the tendon lengths and moments at `q`
/// ([`tendon_kinematics`](super::tendon_kinematics)).
pub fn actuator_forces(
    model: &Model,
    ten: &TendonState,
    q: &[f64],
    qd: &[f64],
    ctrl: &[f64],
    act: &[f64],
) -> Result<Vec<f64>> {
    Ok(actuation(model, ten, q, qd, ctrl, act)?.qfrc)
}
