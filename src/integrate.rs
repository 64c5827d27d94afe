//! One integrator vocabulary for every simulator in the crate: the tree (Featherstone), closed
//! loops (Featherstone ch. 8), MuJoCo's pipeline and SPOOK all step `(qpos, qvel)` with the
//! schemes below and record what they compute into one [`Trajectory`] (or stream it through a
//! [`Recorder`]).
//!
//! | scheme | function | MuJoCo |
//! |---|---|---|
//! | explicit (forward) Euler | [`explicit_euler_step`] | (none; shown in the ABA chapter to explain why not) |
//! | semi-implicit Euler: `v += h a(q, v)`, then `q = q (+) h v` | [`euler_step`] | `mj_Euler` (with implicit damping the caller's acceleration solves `(M + h D) a = f`, see `mujoco::integrator`) |
//! | classic RK4, positions on the joint manifolds | [`rk4_step`] | `mj_RungeKutta` |
//!
//! The schemes only need the model's joint layout (to add a velocity to a position on the
//! manifold of each joint, [`Model::integrate`]); the acceleration comes from the caller as an
//! [`Acceleration`], so this module sits beside `model/` and every formulation above it can use
//! it. Book chapters: "The articulated-body algorithm" (energy of the schemes), "Closed-loop
//! systems" (simulation with Baumgarte stabilization).

use crate::error::{Error, Result};
use crate::model::{JointType, Model};
use crate::spatial::Vec3;

/// A generalized acceleration `qacc = a(qpos, qvel)`: what every scheme evaluates once per stage.
/// Closures `FnMut(&[f64], &[f64], &mut [f64]) -> Result<()>` are accelerations.
pub trait Acceleration {
    /// Writes `a(qpos, qvel)` into `qacc` (length nv).
    fn qacc(&mut self, qpos: &[f64], qvel: &[f64], qacc: &mut [f64]) -> Result<()>;
}

impl<F> Acceleration for F
where
    F: FnMut(&[f64], &[f64], &mut [f64]) -> Result<()>,
{
    fn qacc(&mut self, qpos: &[f64], qvel: &[f64], qacc: &mut [f64]) -> Result<()> {
        self(qpos, qvel, qacc)
    }
}

/// Scratch storage of the schemes, sized once for a model so that a step allocates nothing.
#[derive(Clone, Debug)]
pub struct StepScratch {
    /// `qpos` at the start of the step.
    q0: Vec<f64>,
    /// `qvel` at the start of the step.
    v0: Vec<f64>,
    /// Stage velocities `k_i` (RK4), with the `dexp^-1` correction on ball and free joints.
    k: [Vec<f64>; 4],
    /// Stage accelerations `a_i`.
    a: [Vec<f64>; 4],
    /// `sum_j A_ij k_j` (then `sum_j B_j k_j`).
    dq: Vec<f64>,
    /// `sum_j A_ij a_j` (then `sum_j B_j a_j`).
    dv: Vec<f64>,
    /// Stage position and velocity.
    qi: Vec<f64>,
    vi: Vec<f64>,
    /// First dof of the rotation of every ball and free joint (the `dexp^-1` correction).
    rotation_dofs: Vec<usize>,
    /// Stage rates of the auxiliary state ([`rk4_step_aux`]), sized on first use.
    aux_dot: [Vec<f64>; 4],
    /// Stage auxiliary state.
    aux_i: Vec<f64>,
}

impl StepScratch {
    /// Storage for `model`.
    pub fn new(model: &Model) -> Self {
        let (nq, nv) = (model.nq, model.nv);
        let zv = || vec![0.0; nv];
        StepScratch {
            q0: vec![0.0; nq],
            v0: zv(),
            k: [zv(), zv(), zv(), zv()],
            a: [zv(), zv(), zv(), zv()],
            dq: zv(),
            dv: zv(),
            qi: vec![0.0; nq],
            vi: zv(),
            rotation_dofs: rotation_dofs(model),
            aux_dot: [vec![], vec![], vec![], vec![]],
            aux_i: vec![],
        }
    }
}

/// The first dof of the rotational part of every ball and free joint.
pub fn rotation_dofs(model: &Model) -> Vec<usize> {
    (1..=model.nb)
        .filter_map(|i| match model.joints[i].jtype {
            JointType::Spherical => Some(model.v_adr[i]),
            JointType::Free => Some(model.v_adr[i] + 3),
            _ => None,
        })
        .collect()
}

/// Checks a step size: positive and finite.
pub fn check_timestep(h: f64) -> Result<()> {
    if h.is_finite() && h > 0.0 {
        Ok(())
    } else {
        Err(Error::BadTimestep { value: h })
    }
}

// ANCHOR: euler
/// One semi-implicit (symplectic-looking, but see the ABA chapter) Euler step, MuJoCo's
/// `mj_Euler`: `v <- v + h a(q, v)`, then `q <- q (+) h v` with the *new* velocity, and the
/// quaternions renormalized. `qacc` receives `a(q, v)` of the step's start.
///
/// Kernel: `qpos`, `qvel` and `qacc` must have the model's lengths (checked by the simulators
/// that call it).
pub fn euler_step(
    model: &Model,
    f: &mut impl Acceleration,
    qpos: &mut [f64],
    qvel: &mut [f64],
    qacc: &mut [f64],
    h: f64,
) -> Result<()> {
    f.qacc(qpos, qvel, qacc)?;
    for (v, a) in qvel.iter_mut().zip(qacc.iter()) {
        *v += h * a;
    }
    model.integrate_with(qpos, qvel, h);
    model.normalize_quaternions_with(qpos);
    Ok(())
}
// ANCHOR_END: euler

/// One explicit (forward) Euler step: `q <- q (+) h v` with the *old* velocity, then
/// `v <- v + h a(q_old, v_old)`. It gains energy on every oscillator; it is here to be compared.
pub fn explicit_euler_step(
    model: &Model,
    f: &mut impl Acceleration,
    qpos: &mut [f64],
    qvel: &mut [f64],
    qacc: &mut [f64],
    h: f64,
) -> Result<()> {
    f.qacc(qpos, qvel, qacc)?;
    model.integrate_with(qpos, qvel, h);
    model.normalize_quaternions_with(qpos);
    for (v, a) in qvel.iter_mut().zip(qacc.iter()) {
        *v += h * a;
    }
    Ok(())
}

// ANCHOR: rk4
/// MuJoCo 4.0's RK4 tableau (`mj_RungeKutta`): `A = [[1/2], [0, 1/2], [0, 0, 1]]`,
/// `B = [1/6, 1/3, 1/3, 1/6]`.
pub const RK4_A: [[f64; 3]; 3] = [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 1.0]];
/// The weights `B` of [`RK4_A`]'s tableau.
pub const RK4_B: [f64; 4] = [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0];

/// A first-order system beside `(qpos, qvel)`: the acceleration and the rate of an auxiliary
/// state `aux` (MuJoCo's actuator activations `act`) at one stage. [`rk4_step_aux`] integrates
/// both with the same tableau, as `mj_RungeKutta` integrates `(qpos, qvel, act)`.
pub trait StageDynamics {
    /// Writes `a(qpos, qvel, aux)` into `qacc` (nv) and `aux_dot(qpos, qvel, aux)` into
    /// `aux_dot` (the length of `aux`).
    fn eval(&mut self, qpos: &[f64], qvel: &[f64], aux: &[f64], qacc: &mut [f64], aux_dot: &mut [f64]) -> Result<()>;
}

/// An [`Acceleration`] as a [`StageDynamics`] without auxiliary state.
struct NoAux<'a, F: Acceleration>(&'a mut F);

impl<F: Acceleration> StageDynamics for NoAux<'_, F> {
    fn eval(&mut self, qpos: &[f64], qvel: &[f64], _aux: &[f64], qacc: &mut [f64], _aux_dot: &mut [f64]) -> Result<()> {
        self.0.qacc(qpos, qvel, qacc)
    }
}

/// One step of the classic fourth-order Runge-Kutta method on the joint manifolds, as MuJoCo's
/// `mj_RungeKutta` does it. Stage `i` sits at
/// `q_i = q_0 (+) h sum_j A_ij k_j`, `v_i = v_0 + h sum_j A_ij a_j`, where `a_j` is the stage
/// acceleration and `k_j` the stage velocity; on ball and free joints the angular part of
/// `k_j` is `dexp^-1(Theta, w)` with `Theta = h sum_j A_ij k_j`, the rate at which the rotation
/// vector that produced the stage must change to turn the body at `w` (a Munthe-Kaas
/// correction). Then `q <- q_0 (+) h sum_j B_j k_j`, `v <- v_0 + h sum_j B_j a_j`.
///
/// Kernel: lengths are the model's (checked by the simulators that call it).
pub fn rk4_step(
    model: &Model,
    s: &mut StepScratch,
    f: &mut impl Acceleration,
    qpos: &mut [f64],
    qvel: &mut [f64],
    h: f64,
) -> Result<()> {
    rk4_step_aux(model, s, &mut NoAux(f), qpos, qvel, &[], &mut [], h)
}

/// [`rk4_step`] with an auxiliary state `aux` (MuJoCo's `act`): stage `i` also sits at
/// `aux_i = aux_0 + h sum_j A_ij aux_dot_j`. `aux` itself is left unchanged: the weighted rate
/// `sum_j B_j aux_dot_j` is written into `aux_rate` for the caller to advance `aux` with its own
/// rule (MuJoCo's `mj_advance` calls `mj_nextActivation`, exact for `filterexact`).
///
/// Kernel: lengths are the model's and `aux_rate` has the length of `aux`.
#[allow(clippy::too_many_arguments)]
pub fn rk4_step_aux(
    model: &Model,
    s: &mut StepScratch,
    f: &mut impl StageDynamics,
    qpos: &mut [f64],
    qvel: &mut [f64],
    aux: &[f64],
    aux_rate: &mut [f64],
    h: f64,
) -> Result<()> {
    let na = aux.len();
    for buf in s.aux_dot.iter_mut().chain([&mut s.aux_i]) {
        buf.resize(na, 0.0);
    }
    s.q0.copy_from_slice(qpos);
    s.v0.copy_from_slice(qvel);
    s.k[0].copy_from_slice(qvel);
    f.eval(&s.q0, &s.v0, aux, &mut s.a[0], &mut s.aux_dot[0])?;
    for (i, a_row) in RK4_A.iter().enumerate() {
        // dq = sum_j A_ij k_j, dv = sum_j A_ij a_j over the stages computed so far (j <= i)
        s.dq.fill(0.0);
        s.dv.fill(0.0);
        s.aux_i.copy_from_slice(aux);
        for j in 0..=i {
            for d in 0..model.nv {
                s.dq[d] += a_row[j] * s.k[j][d];
                s.dv[d] += a_row[j] * s.a[j][d];
            }
            for d in 0..na {
                s.aux_i[d] += h * a_row[j] * s.aux_dot[j][d];
            }
        }
        s.qi.copy_from_slice(&s.q0);
        model.integrate_with(&mut s.qi, &s.dq, h);
        for d in 0..model.nv {
            s.vi[d] = s.v0[d] + h * s.dv[d];
        }
        f.eval(&s.qi, &s.vi, &s.aux_i, &mut s.a[i + 1], &mut s.aux_dot[i + 1])?;
        s.k[i + 1].copy_from_slice(&s.vi);
        for &r in &s.rotation_dofs {
            let theta = h * Vec3::new(s.dq[r], s.dq[r + 1], s.dq[r + 2]);
            let w = Vec3::new(s.vi[r], s.vi[r + 1], s.vi[r + 2]);
            let k = dexp_inv(&theta, &w);
            s.k[i + 1][r..r + 3].copy_from_slice(k.as_slice());
        }
    }
    s.dq.fill(0.0);
    s.dv.fill(0.0);
    aux_rate.fill(0.0);
    for (j, b) in RK4_B.iter().enumerate() {
        for d in 0..model.nv {
            s.dq[d] += b * s.k[j][d];
            s.dv[d] += b * s.a[j][d];
        }
        for d in 0..na {
            aux_rate[d] += b * s.aux_dot[j][d];
        }
    }
    qpos.copy_from_slice(&s.q0);
    model.integrate_with(qpos, &s.dq, h);
    model.normalize_quaternions_with(qpos);
    for d in 0..model.nv {
        qvel[d] = s.v0[d] + h * s.dv[d];
    }
    Ok(())
}

/// The inverse of the differential of the exponential map on rotations,
/// `dexp^-1(Theta, w) = w + 1/2 Theta x w + (1/theta^2 - cot(theta/2) / (2 theta)) Theta x (Theta x w)`
/// with `theta = |Theta|`: the rate of the rotation vector `Theta` of a body turning at the
/// body-frame angular velocity `w`.
pub fn dexp_inv(theta: &Vec3, w: &Vec3) -> Vec3 {
    let t = theta.norm();
    // The coefficient tends to 1/12 + theta^2/720 as theta -> 0 (series of the cotangent).
    let c = if t < 1e-4 {
        1.0 / 12.0 + t * t / 720.0
    } else {
        1.0 / (t * t) - 1.0 / (2.0 * t * (t / 2.0).tan())
    };
    w + 0.5 * theta.cross(w) + c * theta.cross(&theta.cross(w))
}
// ANCHOR_END: rk4

/// Where a simulator puts each sample: a [`Trajectory`] in memory, or a writer that streams rows
/// to a file as they are computed (the command's `simulate`).
pub trait Recorder {
    /// Takes one sample: time, positions, velocities, and the values of the signals named when
    /// the recording started (same order).
    fn record(&mut self, time: f64, qpos: &[f64], qvel: &[f64], signals: &[f64]) -> Result<()>;
}

/// One named scalar signal of a [`Trajectory`] (`energy_kinetic`, `loop_error`, `ncon`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct Signal {
    /// Its name, as a column header.
    pub name: String,
    /// One value per sample.
    pub values: Vec<f64>,
}

/// A simulated trajectory, the one record type of every simulator: sample `k` is the time, the
/// state and the named signals after `k` recorded steps (sample 0 is the initial state).
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// Simulation time of each sample (s).
    pub time: Vec<f64>,
    /// Positions of each sample (length nq each).
    pub qpos: Vec<Vec<f64>>,
    /// Velocities of each sample (length nv each).
    pub qvel: Vec<Vec<f64>>,
    /// Scalar signals recorded beside the state, one value per sample each.
    pub signals: Vec<Signal>,
}

impl Trajectory {
    /// An empty trajectory that will record the named signals.
    pub fn new(signal_names: &[&str]) -> Self {
        Trajectory {
            time: vec![],
            qpos: vec![],
            qvel: vec![],
            signals: signal_names
                .iter()
                .map(|n| Signal {
                    name: (*n).to_string(),
                    values: vec![],
                })
                .collect(),
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// True when nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The values of the signal `name`, or None when it was not recorded.
    pub fn signal(&self, name: &str) -> Option<&[f64]> {
        self.signals
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.values.as_slice())
    }

    /// Largest `|x_k - x_0|` of a signal over the trajectory (0 when absent or empty): the drift
    /// of a quantity that should stay constant, such as the total energy.
    pub fn max_drift(&self, name: &str) -> f64 {
        match self.signal(name) {
            Some(v) if !v.is_empty() => v.iter().fold(0.0, |m, x| m.max((x - v[0]).abs())),
            _ => 0.0,
        }
    }

    /// Largest value of a signal (0 when absent or empty).
    pub fn max_of(&self, name: &str) -> f64 {
        self.signal(name).map_or(0.0, |v| v.iter().fold(0.0, |m, x| m.max(*x)))
    }

    /// CSV text: a header (`time`, the position and velocity column names, the signal names),
    /// then one line per sample in Rust's shortest round-trip form. `qpos_names`/`qvel_names`
    /// default to `qpos_0, qpos_1, ...` when empty.
    pub fn to_csv(&self, qpos_names: &[String], qvel_names: &[String]) -> String {
        let nq = self.qpos.first().map_or(0, Vec::len);
        let nv = self.qvel.first().map_or(0, Vec::len);
        let mut out = csv_header(qpos_names, qvel_names, nq, nv, &self.signal_names());
        for k in 0..self.len() {
            let signals: Vec<f64> = self.signals.iter().map(|s| s.values[k]).collect();
            out += &csv_row(self.time[k], &self.qpos[k], &self.qvel[k], &signals);
        }
        out
    }

    /// The signal names, in order.
    pub fn signal_names(&self) -> Vec<&str> {
        self.signals.iter().map(|s| s.name.as_str()).collect()
    }
}

impl Recorder for Trajectory {
    fn record(&mut self, time: f64, qpos: &[f64], qvel: &[f64], signals: &[f64]) -> Result<()> {
        if signals.len() != self.signals.len() {
            return Err(Error::BadLength {
                what: "recorded signals".into(),
                got: signals.len(),
                expected: self.signals.len(),
            });
        }
        self.time.push(time);
        self.qpos.push(qpos.to_vec());
        self.qvel.push(qvel.to_vec());
        for (s, &x) in self.signals.iter_mut().zip(signals) {
            s.values.push(x);
        }
        Ok(())
    }
}

/// The CSV header line of a trajectory (with its newline).
pub fn csv_header(qpos_names: &[String], qvel_names: &[String], nq: usize, nv: usize, signals: &[&str]) -> String {
    let mut out = String::from("time");
    for i in 0..nq {
        out.push(',');
        match qpos_names.get(i) {
            Some(n) => out += n,
            None => out += &format!("qpos_{i}"),
        }
    }
    for i in 0..nv {
        out.push(',');
        match qvel_names.get(i) {
            Some(n) => out += n,
            None => out += &format!("qvel_{i}"),
        }
    }
    for s in signals {
        out.push(',');
        out += s;
    }
    out.push('\n');
    out
}

/// One CSV line of a trajectory (with its newline), numbers in shortest round-trip form.
pub fn csv_row(time: f64, qpos: &[f64], qvel: &[f64], signals: &[f64]) -> String {
    let mut out = time.to_string();
    for x in qpos.iter().chain(qvel).chain(signals) {
        out.push(',');
        out += &x.to_string();
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::canned;

    /// A harmonic oscillator `a = -q` on a one-dof chain's layout (a hinge, so `(+)` is `+`).
    struct Oscillator;

    impl Acceleration for Oscillator {
        fn qacc(&mut self, q: &[f64], _v: &[f64], a: &mut [f64]) -> Result<()> {
            a[0] = -q[0];
            Ok(())
        }
    }

    fn oscillator() -> (Model, Oscillator) {
        (canned::chain(1, false), Oscillator)
    }

    #[test]
    fn rk4_is_fourth_order_on_the_oscillator() {
        // Error at t = 1 of q'' = -q from (1, 0) against cos(1): halving h divides it by ~16.
        let err = |n: usize| {
            let (model, mut f) = oscillator();
            let mut s = StepScratch::new(&model);
            let (mut q, mut v) = (vec![1.0], vec![0.0]);
            for _ in 0..n {
                rk4_step(&model, &mut s, &mut f, &mut q, &mut v, 1.0 / n as f64).unwrap();
            }
            (q[0] - 1f64.cos()).abs()
        };
        let ratio = err(10) / err(20);
        assert!((ratio - 16.0).abs() < 1.0, "ratio {ratio}");
    }

    #[test]
    fn euler_variants_are_first_order_and_differ_in_energy() {
        let run = |explicit: bool, n: usize| {
            let (model, mut f) = oscillator();
            let (mut q, mut v, mut a) = (vec![1.0], vec![0.0], vec![0.0]);
            let h = 10.0 / n as f64;
            for _ in 0..n {
                if explicit {
                    explicit_euler_step(&model, &mut f, &mut q, &mut v, &mut a, h).unwrap();
                } else {
                    euler_step(&model, &mut f, &mut q, &mut v, &mut a, h).unwrap();
                }
            }
            (q[0], 0.5 * (q[0] * q[0] + v[0] * v[0]))
        };
        // Explicit Euler multiplies the energy by (1 + h^2) per step; semi-implicit keeps it
        // within O(h) of 1/2 for ever.
        let (_, e_explicit) = run(true, 1000);
        let (_, e_semi) = run(false, 1000);
        assert!(e_explicit > 0.5 * 1.09, "{e_explicit}");
        assert!((e_semi - 0.5).abs() < 0.01, "{e_semi}");
        // First order: halving h halves the position error at t = 10.
        let exact = 10f64.cos();
        let (q1, _) = run(false, 2000);
        let (q2, _) = run(false, 4000);
        let ratio = (q1 - exact).abs() / (q2 - exact).abs();
        assert!((ratio - 2.0).abs() < 0.2, "{ratio}");
    }

    #[test]
    fn dexp_inv_is_the_rate_of_the_rotation_vector() {
        // exp(Theta + eps dexp^-1(Theta, w)) = exp(Theta) exp(eps w) + O(eps^2): w is a
        // body-frame (right-multiplied) angular velocity, as in MuJoCo's ball and free joints.
        use crate::spatial::quat_integrate;
        let theta = Vec3::new(0.7, -1.1, 0.4);
        let w = Vec3::new(-0.3, 0.5, 1.2);
        let exp = |t: &Vec3| quat_integrate(&[1.0, 0.0, 0.0, 0.0], t, 1.0);
        let eps = 1e-6;
        let lhs = exp(&(theta + eps * dexp_inv(&theta, &w)));
        let rhs = quat_integrate(&exp(&theta), &w, eps);
        let err = (0..4).map(|k| (lhs[k] - rhs[k]).abs()).fold(0.0, f64::max);
        assert!(err < 1e-11, "{err}");
        // The uncorrected rate is wrong at first order, so the check can fail.
        let naive = exp(&(theta + eps * w));
        let err_naive = (0..4).map(|k| (naive[k] - rhs[k]).abs()).fold(0.0, f64::max);
        assert!(err_naive > 1e-8, "{err_naive}");
        // Small-angle branch: continuous with the closed form.
        let small = Vec3::new(1e-5, 0.0, 0.0);
        let a = dexp_inv(&small, &w);
        let b = w + 0.5 * small.cross(&w) + (1.0 / 12.0) * small.cross(&small.cross(&w));
        assert!((a - b).norm() < 1e-15);
    }

    #[test]
    fn trajectory_records_signals_and_writes_csv() {
        let mut t = Trajectory::new(&["energy"]);
        t.record(0.0, &[1.0], &[0.5], &[2.0]).unwrap();
        t.record(0.1, &[1.5], &[0.25], &[2.5]).unwrap();
        assert!(t.record(0.2, &[1.5], &[0.25], &[]).is_err());
        assert_eq!(t.len(), 2);
        assert_eq!(t.signal("energy"), Some(&[2.0, 2.5][..]));
        assert_eq!(t.max_drift("energy"), 0.5);
        assert_eq!(
            t.to_csv(&["hinge.qpos".into()], &[]),
            "time,hinge.qpos,qvel_0,energy\n0,1,0.5,2\n0.1,1.5,0.25,2.5\n"
        );
    }
}
