//! Featherstone 8.11: loop-closure functions. With independent coordinates `y` and a function
//! `q = gamma(y)` that closes every loop (eq. (8.56)),
//!
//! ```text
//! qdot = G ydot,  G = d gamma / d y                (8.57), (8.58)
//! qdd  = G ydd + g,  g = Gdot ydot                 (8.59), (8.60)
//! ```
//!
//! and the equation of motion reduced to `y` is `G^T H G ydd = G^T (tau - C - H g)`. Simulating
//! in `y` (integrate `ydd`, recover `q = gamma(y)`, `qdot = G ydot`) cannot drift off the loop
//! closure: `q` satisfies the loop constraints by construction, and no stabilization is needed.

use super::assemble::assemble_with;
use super::constraints::loop_constraints;
use super::pivot::{null_space_with, PivotTol};
use super::simulate::{ENERGY, LOOP_ERROR};
use crate::dynamics::{bias_forces, crba, kinetic_energy, passive_forces, potential_energy};
use crate::error::{check_vector, Error, Result};
use crate::integrate::{check_timestep, Recorder, Trajectory, RK4_A, RK4_B};
use crate::model::Model;
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

// ANCHOR: loop_closure_trait
/// A user-supplied loop-closure function (Featherstone 8.11): `gamma(y)`, `G(y)` and
/// `g(y, ydot)` for a closed-loop model with `nq` position variables and `ny` independent ones.
pub trait LoopClosure {
    /// Number of independent variables `y`.
    fn ny(&self) -> usize;
    /// `q = gamma(y)` (eq. (8.56)).
    fn gamma(&self, y: &[f64]) -> Result<DVector<f64>>;
    /// `G = d gamma / d y` (nv x ny, eq. (8.58)).
    fn g_null(&self, y: &[f64]) -> Result<DMatrix<f64>>;
    /// `g = Gdot ydot` (nv, eq. (8.60)).
    fn g_bias(&self, y: &[f64], yd: &[f64]) -> Result<DVector<f64>>;
}
// ANCHOR_END: loop_closure_trait

/// The closed forms of Featherstone's figure 8.3 mechanism
/// ([`crate::model::mechanisms::figure_8_3`]), `y = (q1, q4)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure83Closure {
    /// Distance from the arm's pivot O to the cylinder's pivot A.
    pub l1: f64,
    /// Distance from O to the piston's pin B on link 1.
    pub l2: f64,
}

impl Figure83Closure {
    /// `(c1, s1, D, d)` at `y1`, failing where `d = 0` (the piston would have zero length).
    fn geometry(&self, y: &[f64]) -> Result<(f64, f64, f64, f64)> {
        check_vector("y", y, 2)?;
        let (s1, c1) = y[0].sin_cos();
        let dd = self.l1 * self.l1 + self.l2 * self.l2 - 2.0 * self.l1 * self.l2 * c1;
        if dd.is_nan() || dd <= 0.0 {
            return Err(Error::Singular {
                what: "figure 8.3 loop-closure function".into(),
                why: format!("d = 0 at y1 = {} (outside the admissible set C)", y[0]),
            });
        }
        Ok((c1, s1, dd, dd.sqrt()))
    }
}

// ANCHOR: figure_8_3_closure
impl LoopClosure for Figure83Closure {
    fn ny(&self) -> usize {
        2
    }
    /// `gamma(y) = (y1, theta2, d, y2)`, `D = d^2 = l1^2 + l2^2 - 2 l1 l2 c1`,
    /// `theta2 = atan2(l2 s1, l2 c1 - l1)`.
    fn gamma(&self, y: &[f64]) -> Result<DVector<f64>> {
        let (c1, s1, _, d) = self.geometry(y)?;
        let (l1, l2) = (self.l1, self.l2);
        let theta2 = (l2 * s1).atan2(l2 * c1 - l1);
        Ok(DVector::from_column_slice(&[y[0], theta2, d, y[1]]))
    }
    /// `G = [[1, 0], [theta2', 0], [d', 0], [0, 1]]` with `theta2' = l2 (l2 - l1 c1) / D`,
    /// `d' = l1 l2 s1 / d`: a 3 x 1 and a 1 x 1 block.
    fn g_null(&self, y: &[f64]) -> Result<DMatrix<f64>> {
        let (c1, s1, dd, d) = self.geometry(y)?;
        let (l1, l2) = (self.l1, self.l2);
        let th = l2 * (l2 - l1 * c1) / dd;
        let dp = l1 * l2 * s1 / d;
        Ok(DMatrix::from_row_slice(4, 2, &[1.0, 0.0, th, 0.0, dp, 0.0, 0.0, 1.0]))
    }
    /// `g = (0, theta2'' y1dot^2, d'' y1dot^2, 0)` with
    /// `theta2'' = l1 l2 (l1^2 - l2^2) s1 / D^2`, `d'' = (l1 l2 c1 D - l1^2 l2^2 s1^2) / d^3`.
    fn g_bias(&self, y: &[f64], yd: &[f64]) -> Result<DVector<f64>> {
        check_vector("ydot", yd, 2)?;
        let (c1, s1, dd, d) = self.geometry(y)?;
        let (l1, l2) = (self.l1, self.l2);
        let th2 = l1 * l2 * (l1 * l1 - l2 * l2) * s1 / (dd * dd);
        let d2 = (l1 * l2 * c1 * dd - l1 * l1 * l2 * l2 * s1 * s1) / (d * d * d);
        let w2 = yd[0] * yd[0];
        Ok(DVector::from_column_slice(&[0.0, th2 * w2, d2 * w2, 0.0]))
    }
}
// ANCHOR_END: figure_8_3_closure

/// A loop-closure function computed numerically for any closed-loop model without quaternions:
/// `y` are the chosen dofs `independent`; `gamma(y)` is Newton's method ([`assemble_with`])
/// from the last configuration it returned (which keeps it on one assembly branch, the
/// configuration ambiguity of 8.10), `G` and `g` come from complete pivoting with those dofs
/// as the independent variables ([`null_space_with`] on `K qdd = k`).
///
/// `gamma` is then exact only to [`super::ASSEMBLE_TOL`]. Recomputing `q` from `y` at every
/// step is what stabilizes it: the closure error stays at that tolerance instead of growing,
/// with no Baumgarte term.
#[derive(Debug)]
pub struct NumericalClosure<'a> {
    model: &'a Model,
    independent: Vec<usize>,
    last_q: RefCell<DVector<f64>>,
}

impl<'a> NumericalClosure<'a> {
    /// A numerical `gamma` for `model` with independent dofs `independent`, starting from the
    /// configuration `q_start` (which picks the assembly branch). Fails if the model has
    /// quaternions (`nq != nv`), an index is out of range, or `q_start` is malformed.
    pub fn new(model: &'a Model, independent: &[usize], q_start: &[f64]) -> Result<Self> {
        check_vector("q_start", q_start, model.nq)?;
        if model.nq != model.nv {
            return Err(Error::BadLength {
                what: "model positions (NumericalClosure needs nq = nv, no quaternions)".into(),
                got: model.nq,
                expected: model.nv,
            });
        }
        if let Some(&bad) = independent.iter().find(|&&d| d >= model.nv) {
            return Err(Error::BadLength {
                what: format!("independent dof {bad}"),
                got: bad,
                expected: model.nv,
            });
        }
        Ok(NumericalClosure {
            model,
            independent: independent.to_vec(),
            last_q: RefCell::new(DVector::from_column_slice(q_start)),
        })
    }

    fn null_space_at(&self, y: &[f64], yd: &[f64]) -> Result<super::NullSpace> {
        let q = self.gamma(y)?;
        let nv = self.model.nv;
        // qdot = G ydot needs G first: one pass with zero velocity, one with qdot
        let s0 = loop_constraints(self.model, q.as_slice(), &vec![0.0; nv], None)?;
        let ns0 = null_space_with(
            &s0.kmat,
            &DVector::zeros(s0.nc()),
            &PivotTol::default(),
            Some(&self.independent),
        )?;
        let qd = &ns0.g_null * DVector::from_column_slice(yd);
        let s = loop_constraints(self.model, q.as_slice(), qd.as_slice(), None)?;
        null_space_with(&s.kmat, &s.k, &PivotTol::default(), Some(&self.independent))
    }
}

impl LoopClosure for NumericalClosure<'_> {
    fn ny(&self) -> usize {
        self.independent.len()
    }
    fn gamma(&self, y: &[f64]) -> Result<DVector<f64>> {
        check_vector("y", y, self.independent.len())?;
        let mut guess = self.last_q.borrow().clone();
        for (v, &d) in y.iter().zip(&self.independent) {
            guess[d] = *v;
        }
        let q = assemble_with(self.model, guess.as_slice(), Some(&self.independent))?;
        *self.last_q.borrow_mut() = q.clone();
        Ok(q)
    }
    fn g_null(&self, y: &[f64]) -> Result<DMatrix<f64>> {
        Ok(self.null_space_at(y, &vec![0.0; self.independent.len()])?.g_null)
    }
    fn g_bias(&self, y: &[f64], yd: &[f64]) -> Result<DVector<f64>> {
        check_vector("ydot", yd, self.independent.len())?;
        Ok(self.null_space_at(y, yd)?.g_bias)
    }
}

// ANCHOR: gamma_acceleration
/// `ydd` of a closed-loop system in the coordinates of a loop-closure function: at
/// `q = gamma(y)`, `qdot = G ydot`, solve `G^T H G ydd = G^T (tau - C - H g)` (Cholesky), with
/// `tau` the model's passive forces. Returns `(ydd, q, qdot)`.
pub fn gamma_acceleration(
    model: &Model,
    closure: &dyn LoopClosure,
    y: &[f64],
    yd: &[f64],
) -> Result<(DVector<f64>, DVector<f64>, DVector<f64>)> {
    let q = closure.gamma(y)?;
    let g_null = closure.g_null(y)?;
    let g_bias = closure.g_bias(y, yd)?;
    let qd = &g_null * DVector::from_column_slice(yd);
    let h = crba(model, q.as_slice())?;
    let c = bias_forces(model, q.as_slice(), qd.as_slice())?;
    let tau = passive_forces(model, q.as_slice(), qd.as_slice())?;
    let m = g_null.transpose() * &h * &g_null;
    let f = g_null.transpose() * (tau - c - &h * &g_bias);
    let ydd = m
        .cholesky()
        .ok_or_else(|| Error::Singular {
            what: "G^T H G".into(),
            why: "not positive definite (Cholesky failed)".into(),
        })?
        .solve(&f);
    Ok((ydd, q, qd))
}
// ANCHOR_END: gamma_acceleration

/// Name of the signal holding `y[i]` in the trajectory of [`simulate_gamma`].
pub fn y_signal(i: usize) -> String {
    format!("y{i}")
}

// ANCHOR: simulate_gamma
/// Simulates in `y` coordinates for `steps` steps of `h`, with MuJoCo's RK4 tableau
/// ([`RK4_A`], [`RK4_B`] of [`crate::integrate`]) on the vector space of `(y, ydot)`: every
/// stage evaluates [`gamma_acceleration`], and `q = gamma(y)`, `qdot = G ydot` are recovered at
/// every sample, so the loop-closure error is that of `gamma` itself (round-off for a closed
/// form). Records `q`, `qdot` and the signals [`LOOP_ERROR`], [`ENERGY`] and `y0, y1, ...`
/// ([`y_signal`]). The sizes of `y0`, `yd0` and `h > 0` are assumed valid ([`simulate_gamma`]
/// checks them); fails if `gamma`, `G` or `g` fail on the way (leaving the admissible set).
pub fn simulate_gamma_unchecked(
    model: &Model,
    closure: &dyn LoopClosure,
    y0: &[f64],
    yd0: &[f64],
    h: f64,
    steps: usize,
) -> Result<Trajectory> {
    let ny = closure.ny();
    let names: Vec<String> = (0..ny).map(y_signal).collect();
    let mut signal_names = vec![LOOP_ERROR, ENERGY];
    signal_names.extend(names.iter().map(String::as_str));
    let mut out = Trajectory::new(&signal_names);
    let (mut y, mut yd) = (DVector::from_column_slice(y0), DVector::from_column_slice(yd0));
    let zeros = vec![0.0; model.nv];
    let mut signals = vec![0.0; 2 + ny];
    // stage velocities k_i = ydot_i and accelerations a_i
    let mut k: Vec<DVector<f64>> = vec![DVector::zeros(ny); 4];
    let mut a: Vec<DVector<f64>> = vec![DVector::zeros(ny); 4];
    for step in 0..=steps {
        let (a0, q, qd) = gamma_acceleration(model, closure, y.as_slice(), yd.as_slice())?;
        signals[0] = loop_constraints(model, q.as_slice(), &zeros, None)?.err_norm();
        signals[1] = kinetic_energy(model, q.as_slice(), qd.as_slice())? + potential_energy(model, q.as_slice())?;
        signals[2..].copy_from_slice(y.as_slice());
        out.record(step as f64 * h, q.as_slice(), qd.as_slice(), &signals)?;
        if step == steps {
            break;
        }
        k[0].copy_from(&yd);
        a[0] = a0;
        for (i, row) in RK4_A.iter().enumerate() {
            let (mut yi, mut vi) = (y.clone(), yd.clone());
            for j in 0..=i {
                yi += &k[j] * (h * row[j]);
                vi += &a[j] * (h * row[j]);
            }
            a[i + 1] = gamma_acceleration(model, closure, yi.as_slice(), vi.as_slice())?.0;
            k[i + 1] = vi;
        }
        for j in 0..4 {
            y += &k[j] * (h * RK4_B[j]);
            yd += &a[j] * (h * RK4_B[j]);
        }
    }
    Ok(out)
}
// ANCHOR_END: simulate_gamma

/// [`simulate_gamma_unchecked`] after checking `y0`, `yd0` (length `ny`, finite) and `h > 0`.
pub fn simulate_gamma(
    model: &Model,
    closure: &dyn LoopClosure,
    y0: &[f64],
    yd0: &[f64],
    h: f64,
    steps: usize,
) -> Result<Trajectory> {
    let ny = closure.ny();
    check_vector("y0", y0, ny)?;
    check_vector("yd0", yd0, ny)?;
    check_timestep(h)?;
    simulate_gamma_unchecked(model, closure, y0, yd0, h, steps)
}
