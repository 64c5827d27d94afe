//! The SPOOK stepper (Lacoursière's thesis, 2007, eqs. 4.30-4.31; Lacoursière and Linde 2011):
//! one linear system per step for the new velocities and the constraint impulses,
//!
//! ```text
//! [ M   -G^T  ] [ v_{k+1} ]   [ M v_k + h f_k                          ]
//! [ G   Sigma ] [ lambda~ ] = [ -(4/h) Upsilon phi_k + Upsilon G v_k   ]
//! ```
//!
//! with `Upsilon = diag(1 / (1 + 4 tau_i / h))` (the **thesis's** Upsilon; some course notes call
//! `1 + 4 tau / h` Upsilon and divide by it, which is the same system) and
//! `Sigma = (4 / h^2) diag(epsilon_i Upsilon_i)`, then `x_{k+1} = x_k + h nu_{k+1}` and the
//! quaternion step. The unknown `lambda~ = h lambda-bar` is an impulse (N s).

use super::body::quat_step;
use super::constraint::{constraint_rows, g_row, joint_coordinate, Dq};
use super::sparse::SpookSparse;
use super::system::SpookSystem;
use crate::collision::{collide, Contact, GeomPose};
use crate::error::{Error, Result};
use crate::integrate::check_timestep;
use crate::model::GeomType;
use crate::sparse::{BlockOrdering, NoCount};
use crate::spatial::{Mat3, Vec3};
use nalgebra::{DMatrix, DVector};

/// How the stepper solves its linear system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpookSolver {
    /// Bilateral rows only: the sparse direct solve ([`SpookSolver::Sparse`]) from
    /// [`StepSettings::sparse_threshold`] bodies up, the dense Schur complement below. With limit
    /// or frictionless contact rows: the active-set solve ([`SpookSolver::ActiveSet`]), projected
    /// Gauss-Seidel should it not converge; with friction rows: projected Gauss-Seidel.
    Auto,
    /// Block multifrontal `L D L^T` of the whole quasi-definite system
    /// `[[M, G^T], [G, -Sigma]]` in a fill-reducing order (book chapter "Sparse direct solves
    /// for SPOOK"; bilateral rows only). Linear time on chains and trees.
    Sparse,
    /// Dense LU of the whole block system `[[M, -G^T], [G, Sigma]]` (the reference; bilateral
    /// rows only).
    Direct,
    /// Dense Cholesky of the Schur complement `S = G M^-1 G^T + Sigma` (book, "The matrix form";
    /// bilateral rows only).
    Schur,
    /// Projected Gauss-Seidel on the Schur system, with bounds on every row (any rows).
    Pgs,
    /// A direct solve with limits and frictionless contact normals: block principal pivoting
    /// on the Schur system, each iteration a Cholesky solve with the current active rows as
    /// equalities ([`Stepper::solve_active_set`]); friction rows are refused.
    ActiveSet,
}

/// The stepper's parameters (the per-constraint `epsilon` and `tau` live in the constraints).
#[derive(Clone, Debug, PartialEq)]
pub struct StepSettings {
    /// Linear solver.
    pub solver: SpookSolver,
    /// Include the gyroscopic torque `-omega x I^s omega` (explicit, at the step's start). A
    /// world-frame derivation may drop it; it vanishes for planar motion about a principal axis.
    pub gyroscopic: bool,
    /// With `gyroscopic`: the thesis's linearized implicit form instead of the explicit torque
    /// alone, `(I^s + h^2 [L]x^T (I^s)^-1 [L]x) omega_{k+1} = I^s omega_k + h [L]x omega_k + h tau`
    /// with `L = I^s omega_k` ([`gyroscopic_inertia`]): never gains rotational energy.
    pub gyroscopic_implicit: bool,
    /// Projected Gauss-Seidel sweeps per step (the bound on the iteration).
    pub pgs_iterations: usize,
    /// Pivoting iterations of [`SpookSolver::ActiveSet`] per step (the bound on the iteration).
    pub active_set_iterations: usize,
    /// `epsilon` of contact normal and friction rows.
    pub contact_epsilon: f64,
    /// `tau` of contact normal rows (s).
    pub contact_tau: f64,
    /// Contacts are created when the surfaces are closer than this (m).
    pub contact_margin: f64,
    /// A limit row is created when the joint is closer than this to its limit (rad or m).
    pub limit_margin: f64,
    /// Fill-reducing ordering of the sparse solve (when every `Sigma_ii > 0`).
    pub ordering: BlockOrdering,
    /// [`SpookSolver::Auto`] solves bilateral systems of at least this many bodies sparsely.
    pub sparse_threshold: usize,
}

/// The default [`StepSettings::sparse_threshold`]: from this many bodies up the sparse solve
/// beats the dense Schur complement (measured on chains: `benches/spook_sparse.rs`).
pub const SPARSE_THRESHOLD: usize = 8;

impl Default for StepSettings {
    fn default() -> Self {
        StepSettings {
            solver: SpookSolver::Auto,
            gyroscopic: true,
            gyroscopic_implicit: false,
            pgs_iterations: 50,
            active_set_iterations: 50,
            contact_epsilon: 1e-7,
            contact_tau: 2.0 / 60.0,
            contact_margin: 0.01,
            limit_margin: 0.05,
            ordering: BlockOrdering::MinimumDegree,
            sparse_threshold: SPARSE_THRESHOLD,
        }
    }
}

/// What a row of the system stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// Row `row` of joint constraint `constraint` (bilateral).
    Joint { constraint: usize, row: usize },
    /// Lower (`upper = false`) or upper limit of a joint constraint (unilateral, `lambda >= 0`).
    Limit { constraint: usize, upper: bool },
    /// Normal row of contact `contact` (unilateral).
    Normal { contact: usize },
    /// Friction row of the contact whose normal is row `normal` (box bounds `mu lambda_n`).
    Friction { normal: usize },
}

/// One row of the system: its Jacobian entries on its (at most two) bodies and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// What the row stands for.
    pub kind: RowKind,
    /// Body `a` and its six entries of `g_i`.
    pub a: Option<(usize, [f64; 6])>,
    /// Body `b` and its six entries of `g_i`.
    pub b: Option<(usize, [f64; 6])>,
    /// `phi_i` at the step's start.
    pub phi: f64,
    /// `Sigma_ii = 4 epsilon_i Upsilon_i / h^2`.
    pub sigma: f64,
    /// `Upsilon_i = 1 / (1 + 4 tau_i / h)` (thesis convention); 0 on friction rows.
    pub upsilon: f64,
    /// Friction coefficient (friction rows).
    pub mu: f64,
}

impl Row {
    /// Whether the row is an equality (its impulse has no bounds).
    pub fn bilateral(&self) -> bool {
        matches!(self.kind, RowKind::Joint { .. })
    }
}

// ANCHOR: gyroscopic
/// The rotational block of the thesis's linearized implicit gyroscopic step (Lacoursière 2007;
/// written in world coordinates): `I^s + h^2 [L]x^T (I^s)^-1 [L]x` with `L = I^s omega`. With
/// the right-hand side `I^s omega_k + h [L]x omega_k` (`[L]x omega = -omega x I^s omega`, the
/// explicit torque) it is one step of the linearized implicit Euler method for Euler's
/// equations; the added term is symmetric positive semidefinite, so the block stays positive
/// definite. Kernel: assumes `is` symmetric positive definite and finite inputs (the stepper's
/// bodies are checked by [`SpookSystem::check`]).
pub fn gyroscopic_inertia(is: &Mat3, omega: &Vec3, h: f64) -> Mat3 {
    let l = crate::spatial::skew(&(is * omega));
    let inv = is.try_inverse().unwrap_or_else(Mat3::zeros);
    is + l.transpose() * inv * l * (h * h)
}
// ANCHOR_END: gyroscopic

// ANCHOR: params
/// SPOOK's per-row scalars from `(h, epsilon, tau)`: `Upsilon = 1 / (1 + 4 tau / h)` (thesis;
/// some course notes' `1 + 4 tau / h` is its reciprocal) and `Sigma = 4 epsilon Upsilon / h^2`.
pub fn spook_parameters(h: f64, epsilon: f64, tau: f64) -> (f64, f64) {
    let upsilon = 1.0 / (1.0 + 4.0 * tau / h);
    (upsilon, 4.0 * epsilon * upsilon / (h * h))
}
// ANCHOR_END: params

/// The stepper with its scratch storage. Per-step arrays are cleared and refilled; the matrices
/// keep their storage while the number of rows stays the same.
#[derive(Clone, Debug)]
pub struct Stepper {
    /// Time step `h` (s).
    pub h: f64,
    /// Settings.
    pub settings: StepSettings,
    /// `M^-1` per body: `(1/m, (I^s)^-1)` (nbody).
    pub minv: Vec<(f64, Mat3)>,
    /// `M` per body: `(m, I^s)` (nbody).
    pub mass: Vec<(f64, Mat3)>,
    /// `v_k = [nu; omega]` per body, stacked (6 nbody).
    pub v: DVector<f64>,
    /// `f_k`: gravity and gyroscopic torque per body, stacked (6 nbody).
    pub f: DVector<f64>,
    /// The rows of the step (m).
    pub rows: Vec<Row>,
    /// The contacts of the step: the contact, the bodies of its two geoms and the pair's
    /// friction `mu` (the larger of the two, MuJoCo's rule).
    pub contacts: Vec<(Contact, Option<usize>, Option<usize>, f64)>,
    /// `lambda~ = h lambda-bar`, the impulses of the last solve (m).
    pub lambda: DVector<f64>,
    /// `v_{k+1}` of the last solve (6 nbody).
    pub v_next: DVector<f64>,
    /// Sweeps the last projected Gauss-Seidel solve used.
    pub pgs_sweeps: usize,
    /// Pivoting iterations the last active-set solve used.
    pub active_set_used: usize,
    /// `phi` of one constraint's rows while it is assembled (at most 6).
    phi_buf: Vec<f64>,
    /// `d phi / dq` (14 entries each) of one constraint's rows while it is assembled.
    dq_buf: Vec<Dq>,
    /// The sparse solver of the current row structure (built on first use, rebuilt when the
    /// structure changes).
    pub sparse: Option<SpookSparse>,
    /// Constraint names, for the errors of the sparse solve.
    names: Vec<String>,
}

impl Stepper {
    /// A stepper of step `h` for `sys`. Errors: `h` not positive and finite, bad settings, or a
    /// bad system ([`SpookSystem::check`]).
    pub fn new(sys: &SpookSystem, h: f64, settings: StepSettings) -> Result<Self> {
        check_timestep(h)?;
        sys.check()?;
        for (what, v) in [
            ("contact_epsilon", settings.contact_epsilon),
            ("contact_tau", settings.contact_tau),
            ("contact_margin", settings.contact_margin),
            ("limit_margin", settings.limit_margin),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::BadParameter {
                    what: format!("step settings {what}"),
                    value: v,
                    why: "must be finite and >= 0".into(),
                });
            }
        }
        let n = sys.bodies.len();
        Ok(Stepper {
            h,
            settings,
            minv: vec![(0.0, Mat3::zeros()); n],
            mass: vec![(0.0, Mat3::zeros()); n],
            v: DVector::zeros(6 * n),
            f: DVector::zeros(6 * n),
            rows: vec![],
            contacts: vec![],
            lambda: DVector::zeros(0),
            v_next: DVector::zeros(6 * n),
            pgs_sweeps: 0,
            active_set_used: 0,
            phi_buf: vec![],
            dq_buf: vec![],
            sparse: None,
            names: sys.constraints.iter().map(|c| c.name.clone()).collect(),
        })
    }

    /// Number of bodies.
    pub fn nbody(&self) -> usize {
        self.minv.len()
    }

    // ANCHOR: assemble
    /// Fills `M`, `f_k`, `v_k` and the rows at the system's current state: every joint
    /// constraint's rows (`g_i = d phi_i / dq Gamma(q)`), the limit rows within
    /// `limit_margin` of a limit, and a normal and two friction rows per contact.
    pub fn assemble(&mut self, sys: &SpookSystem) {
        let h = self.h;
        for (i, b) in sys.bodies.iter().enumerate() {
            let is = b.inertia_world();
            let mut gyro = if self.settings.gyroscopic {
                -b.omega.cross(&(is * b.omega))
            } else {
                Vec3::zeros()
            };
            let mut rot = is;
            if self.settings.gyroscopic && self.settings.gyroscopic_implicit {
                // M's rotational block becomes I^s + E; the right-hand side must stay
                // I^s omega_k + h tau, so f carries -E omega_k / h (all solves use M v_k + h f)
                rot = gyroscopic_inertia(&is, &b.omega, h);
                gyro -= (rot - is) * b.omega / h;
            }
            self.mass[i] = (b.mass, rot);
            // I^s (and I^s + E, E positive semidefinite) is symmetric positive definite (checked),
            // so the inverse exists
            self.minv[i] = (1.0 / b.mass, rot.try_inverse().unwrap_or_else(Mat3::zeros));
            self.v.fixed_rows_mut::<3>(6 * i).copy_from(&b.nu);
            self.v.fixed_rows_mut::<3>(6 * i + 3).copy_from(&b.omega);
            self.f.fixed_rows_mut::<3>(6 * i).copy_from(&(sys.gravity * b.mass));
            self.f.fixed_rows_mut::<3>(6 * i + 3).copy_from(&gyro);
        }
        self.rows.clear();
        let rho = |k: Option<usize>| k.map(|i| &sys.bodies[i].rho);
        for (ci, c) in sys.constraints.iter().enumerate() {
            let (upsilon, sigma) = spook_parameters(h, c.epsilon, c.tau);
            self.phi_buf.clear();
            self.dq_buf.clear();
            constraint_rows(c, &sys.bodies, &mut self.phi_buf, &mut self.dq_buf);
            for (r, (phi, dq)) in self.phi_buf.iter().zip(&self.dq_buf).enumerate() {
                let (ga, gb) = g_row(dq, rho(c.body_a), rho(c.body_b));
                self.rows.push(Row {
                    kind: RowKind::Joint { constraint: ci, row: r },
                    a: c.body_a.map(|i| (i, ga)),
                    b: c.body_b.map(|i| (i, gb)),
                    phi: *phi,
                    sigma,
                    upsilon,
                    mu: 0.0,
                });
            }
            if let (Some([lo, hi]), Some((s, dq))) = (c.limit, joint_coordinate(c, &sys.bodies)) {
                let (ga, gb) = g_row(&dq, rho(c.body_a), rho(c.body_b));
                let neg = |g: [f64; 6]| g.map(|x| -x);
                for (upper, phi, sign) in [(false, s - lo, 1.0), (true, hi - s, -1.0)] {
                    if phi < self.settings.limit_margin {
                        let (ga, gb) = if sign > 0.0 { (ga, gb) } else { (neg(ga), neg(gb)) };
                        self.rows.push(Row {
                            kind: RowKind::Limit { constraint: ci, upper },
                            a: c.body_a.map(|i| (i, ga)),
                            b: c.body_b.map(|i| (i, gb)),
                            phi,
                            sigma,
                            upsilon,
                            mu: 0.0,
                        });
                    }
                }
            }
        }
        self.collide(sys);
        let (upsilon, sigma) = spook_parameters(h, self.settings.contact_epsilon, self.settings.contact_tau);
        let sigma_f = 4.0 * self.settings.contact_epsilon / (h * h);
        for (k, (c, ba, bb, mu)) in self.contacts.iter().enumerate() {
            let mu = *mu;
            let normal = self.rows.len();
            // g for direction u at the contact point: [u, r x u] on body b, minus that on body a
            let jac = |body: Option<usize>, u: &Vec3, sign: f64| {
                body.map(|i| {
                    let r = c.pos - sys.bodies[i].x;
                    let w = r.cross(u);
                    (i, [u.x, u.y, u.z, w.x, w.y, w.z].map(|x| sign * x))
                })
            };
            let n = c.normal();
            self.rows.push(Row {
                kind: RowKind::Normal { contact: k },
                a: jac(*ba, &n, -1.0),
                b: jac(*bb, &n, 1.0),
                phi: c.dist,
                sigma,
                upsilon,
                mu,
            });
            if mu > 0.0 {
                for t in [c.tangent(0), c.tangent(1)] {
                    self.rows.push(Row {
                        kind: RowKind::Friction { normal },
                        a: jac(*ba, &t, -1.0),
                        b: jac(*bb, &t, 1.0),
                        phi: 0.0,
                        sigma: sigma_f,
                        // a velocity row targets G v_{k+1} = 0: Upsilon = 0 drops the
                        // Upsilon G v_k term (the tau -> infinity limit of a holonomic row)
                        upsilon: 0.0,
                        mu,
                    });
                }
            }
        }
    }
    // ANCHOR_END: assemble

    /// Narrow phase: every plane geom against every sphere, capsule and box on another body.
    fn collide(&mut self, sys: &SpookSystem) {
        self.contacts.clear();
        let pose = |g: &super::system::SpookGeom| match g.body {
            Some(i) => {
                let r = sys.bodies[i].rotation();
                GeomPose {
                    pos: sys.bodies[i].x + r * g.frame.pos,
                    rot: r * g.frame.rot,
                }
            }
            None => GeomPose {
                pos: g.frame.pos,
                rot: g.frame.rot,
            },
        };
        let mut found = vec![];
        for (i, g1) in sys.geoms.iter().enumerate() {
            if g1.gtype != GeomType::Plane {
                continue;
            }
            for (j, g2) in sys.geoms.iter().enumerate() {
                if i == j || g2.body == g1.body || g2.gtype == GeomType::Plane {
                    continue;
                }
                found.clear();
                let (p1, p2) = (pose(g1), pose(g2));
                collide(
                    (g1.gtype, &g1.size, &p1),
                    (g2.gtype, &g2.size, &p2),
                    self.settings.contact_margin,
                    &mut found,
                );
                for c in &found {
                    self.contacts.push((*c, g1.body, g2.body, g1.friction.max(g2.friction)));
                }
            }
        }
    }

    /// Whether any row is unilateral (a limit or a contact).
    pub fn has_unilateral_rows(&self) -> bool {
        self.rows.iter().any(|r| !r.bilateral())
    }

    /// The dense `G` (m x 6 nbody) of the assembled rows.
    pub fn g_matrix(&self) -> DMatrix<f64> {
        let mut g = DMatrix::zeros(self.rows.len(), 6 * self.nbody());
        for (r, row) in self.rows.iter().enumerate() {
            for (i, gi) in row.a.iter().chain(row.b.iter()) {
                for k in 0..6 {
                    g[(r, 6 * i + k)] += gi[k];
                }
            }
        }
        g
    }

    /// `M` (6 nbody x 6 nbody), block diagonal `diag(m_i 1, I^s_i)`.
    pub fn mass_matrix(&self) -> DMatrix<f64> {
        let n = self.nbody();
        let mut m = DMatrix::zeros(6 * n, 6 * n);
        for (i, (mass, is)) in self.mass.iter().enumerate() {
            for k in 0..3 {
                m[(6 * i + k, 6 * i + k)] = *mass;
            }
            m.fixed_view_mut::<3, 3>(6 * i + 3, 6 * i + 3).copy_from(is);
        }
        m
    }

    // ANCHOR: block_system
    /// The whole block system of the step: `K = [[M, -G^T], [G, Sigma]]` and its right-hand side
    /// `[M v_k + h f_k; -(4/h) Upsilon phi + Upsilon G v_k]` (the thesis, eqs. 4.30-4.31).
    pub fn block_system(&self) -> (DMatrix<f64>, DVector<f64>) {
        let (n6, m) = (6 * self.nbody(), self.rows.len());
        let g = self.g_matrix();
        let mm = self.mass_matrix();
        let mut k = DMatrix::zeros(n6 + m, n6 + m);
        k.view_mut((0, 0), (n6, n6)).copy_from(&mm);
        k.view_mut((0, n6), (n6, m)).copy_from(&(-g.transpose()));
        k.view_mut((n6, 0), (m, n6)).copy_from(&g);
        let mut rhs = DVector::zeros(n6 + m);
        rhs.rows_mut(0, n6).copy_from(&(&mm * &self.v + &self.f * self.h));
        let gv = &g * &self.v;
        for (r, row) in self.rows.iter().enumerate() {
            k[(n6 + r, n6 + r)] = row.sigma;
            rhs[n6 + r] = row.upsilon * (gv[r] - 4.0 / self.h * row.phi);
        }
        (k, rhs)
    }
    // ANCHOR_END: block_system

    /// `M^-1 x` for a stacked body vector.
    fn minv_mul(&self, x: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(x.len());
        for (i, (im, iinv)) in self.minv.iter().enumerate() {
            out.fixed_rows_mut::<3>(6 * i)
                .copy_from(&(x.fixed_rows::<3>(6 * i) * *im));
            out.fixed_rows_mut::<3>(6 * i + 3)
                .copy_from(&(iinv * x.fixed_rows::<3>(6 * i + 3)));
        }
        out
    }

    // ANCHOR: schur_system
    /// The Schur complement form (book, "The matrix form"): `S = G M^-1 G^T + Sigma` and
    /// `b = -(4/h) Upsilon phi + Upsilon G v_k - G (v_k + h M^-1 f_k)`, with `S lambda~ = b` and
    /// then `v_{k+1} = v_k + h M^-1 f_k + M^-1 G^T lambda~`. Also returns
    /// `v_free = v_k + h M^-1 f_k` and `W = M^-1 G^T`.
    pub fn schur_system(&self) -> (DMatrix<f64>, DVector<f64>, DVector<f64>, DMatrix<f64>) {
        let g = self.g_matrix();
        let m = self.rows.len();
        let mut w = DMatrix::zeros(6 * self.nbody(), m);
        for r in 0..m {
            let col = self.minv_mul(&g.row(r).transpose());
            w.column_mut(r).copy_from(&col);
        }
        let mut s = &g * &w;
        let v_free = &self.v + self.minv_mul(&self.f) * self.h;
        let gv = &g * &self.v;
        let gvf = &g * &v_free;
        let mut b = DVector::zeros(m);
        for (r, row) in self.rows.iter().enumerate() {
            s[(r, r)] += row.sigma;
            b[r] = row.upsilon * (gv[r] - 4.0 / self.h * row.phi) - gvf[r];
        }
        (s, b, v_free, w)
    }
    // ANCHOR_END: schur_system

    /// Solves the assembled system directly: LU of the whole block matrix (nalgebra's dense
    /// LU, the reference). Writes `v_next` and `lambda`.
    pub fn solve_direct(&mut self) -> Result<()> {
        let (k, rhs) = self.block_system();
        let sol = k.lu().solve(&rhs).ok_or_else(|| Error::Singular {
            what: "SPOOK block system [[M, -G^T], [G, Sigma]]".into(),
            why: "LU found a zero pivot (redundant rows with epsilon = 0?)".into(),
        })?;
        let n6 = 6 * self.nbody();
        self.v_next = sol.rows(0, n6).into_owned();
        self.lambda = sol.rows(n6, self.rows.len()).into_owned();
        Ok(())
    }

    /// Solves by the Schur complement with the crate's dense Cholesky
    /// ([`crate::sparse::cholesky_dense`]). Writes `v_next` and `lambda`.
    pub fn solve_schur(&mut self) -> Result<()> {
        let (s, b, v_free, w) = self.schur_system();
        let l = crate::sparse::cholesky_dense(&s).map_err(|_| Error::Singular {
            what: "SPOOK Schur complement S = G M^-1 G^T + Sigma".into(),
            why: "not positive definite (redundant rows with epsilon = 0?)".into(),
        })?;
        let y = l.solve_lower_triangular(&b).unwrap_or(b);
        self.lambda = l.tr_solve_lower_triangular(&y).unwrap_or(y);
        self.v_next = v_free + w * &self.lambda;
        Ok(())
    }

    // ANCHOR: solve_sparse
    /// Solves the assembled (bilateral) system with the sparse direct solver: builds
    /// [`SpookSparse`] for the row structure on first use or when it changed (ordering and
    /// symbolic factorization), then assembles the numbers, factors and solves. Writes `v_next`
    /// and `lambda`. Errors: unilateral rows ([`Error::Unsupported`]), a singular system
    /// ([`Error::Singular`], e.g. redundant rows with `epsilon = 0`).
    pub fn solve_sparse(&mut self) -> Result<()> {
        let n = self.nbody();
        let mut sp = match self.sparse.take() {
            Some(sp) if sp.matches(n, &self.rows) => sp,
            _ => SpookSparse::new(n, &self.rows, self.settings.ordering)?,
        };
        sp.assemble(&self.mass, self.v.as_slice(), self.f.as_slice(), self.h, &self.rows);
        if self.lambda.len() != self.rows.len() {
            self.lambda = DVector::zeros(self.rows.len());
        }
        let names = &self.names;
        let name = |c: usize| names.get(c).cloned().unwrap_or_else(|| format!("{c}"));
        let out = sp.solve(
            self.v_next.as_mut_slice(),
            self.lambda.as_mut_slice(),
            &name,
            &mut NoCount,
        );
        self.sparse = Some(sp);
        out
    }
    // ANCHOR_END: solve_sparse

    // ANCHOR: pgs
    /// Projected Gauss-Seidel on the Schur system: sweep the rows, each
    /// `lambda_i <- clamp(lambda_i + (b_i - S_i lambda) / S_ii, lo_i, hi_i)` with
    /// `[lo, hi] = (-inf, inf)` for joint rows, `[0, inf)` for limits and contact normals and
    /// `[-mu lambda_n, mu lambda_n]` for friction rows, where `lambda_n` is the normal impulse
    /// of the same sweep. Bounds and unknowns are both impulses (N s), so no factor `h` goes
    /// missing (the unit slip the spec warns about). At most `pgs_iterations` sweeps; stops
    /// early when no impulse changes by more than `1e-12 (1 + max |lambda|)`.
    pub fn solve_pgs(&mut self) -> Result<()> {
        let (s, b, v_free, w) = self.schur_system();
        let m = self.rows.len();
        let mut lambda: DVector<f64> = DVector::zeros(m);
        self.pgs_sweeps = 0;
        for _ in 0..self.settings.pgs_iterations {
            self.pgs_sweeps += 1;
            let mut change: f64 = 0.0;
            for r in 0..m {
                let (lo, hi) = match self.rows[r].kind {
                    RowKind::Joint { .. } => (f64::NEG_INFINITY, f64::INFINITY),
                    RowKind::Limit { .. } | RowKind::Normal { .. } => (0.0, f64::INFINITY),
                    RowKind::Friction { normal } => {
                        let bound: f64 = self.rows[r].mu * lambda[normal];
                        (-bound, bound)
                    }
                };
                let sr = s.row(r);
                let residual = b[r] - sr.dot(&lambda.transpose());
                let new = (lambda[r] + residual / s[(r, r)]).clamp(lo, hi);
                change = change.max((new - lambda[r]).abs());
                lambda[r] = new;
            }
            if change <= 1e-12 * (1.0 + lambda.amax()) {
                break;
            }
        }
        self.v_next = v_free + w * &lambda;
        self.lambda = lambda;
        Ok(())
    }
    // ANCHOR_END: pgs

    // ANCHOR: active_set
    /// The unilateral rows solved directly: the linear complementarity problem
    /// `S lambda - b = w`, `lambda_i >= 0`, `w_i >= 0`, `lambda_i w_i = 0` on every limit and
    /// contact-normal row (`w_i = 0` with `lambda_i` free on joint rows), by block principal
    /// pivoting (Judice and Pires 1994). An iteration takes the active rows as equalities,
    /// solves `S_AA lambda_A = b_A` by Cholesky with `lambda = 0` elsewhere, and flips every
    /// infeasible row (an active row pulling, `lambda_i < 0`, or an inactive row sinking,
    /// `w_i < 0`); when three such block flips in a row fail to lower the number of infeasible
    /// rows it flips only the last one (Murty's rule, finite on the positive definite `S`).
    /// At most `active_set_iterations` iterations ([`Error::NotConverged`] after them).
    /// Friction rows, whose bounds move with the normal impulse, are refused.
    pub fn solve_active_set(&mut self) -> Result<()> {
        if self.rows.iter().any(|r| matches!(r.kind, RowKind::Friction { .. })) {
            return Err(Error::Unsupported {
                what: "SPOOK friction rows in the active-set solve".into(),
                why: "their bounds mu lambda_n move with the normal impulse: use SpookSolver::Pgs".into(),
            });
        }
        let (s, b, v_free, w) = self.schur_system();
        let m = self.rows.len();
        let unilateral: Vec<bool> = self.rows.iter().map(|r| !r.bilateral()).collect();
        // start with every row holding as an equality (a limit row exists only near its limit)
        let mut active = vec![true; m];
        let mut lambda = DVector::zeros(m);
        let (mut best, mut tries) = (usize::MAX, 3);
        let tol = 1e-12 * (1.0 + b.amax());
        self.active_set_used = 0;
        let mut infeasible = Vec::with_capacity(m);
        for _ in 0..self.settings.active_set_iterations {
            self.active_set_used += 1;
            let idx: Vec<usize> = (0..m).filter(|&i| active[i]).collect();
            let sa = DMatrix::from_fn(idx.len(), idx.len(), |i, j| s[(idx[i], idx[j])]);
            let ba = DVector::from_fn(idx.len(), |i, _| b[idx[i]]);
            let l = crate::sparse::cholesky_dense(&sa).map_err(|_| Error::Singular {
                what: "SPOOK active-set system S_AA".into(),
                why: "not positive definite (redundant rows with epsilon = 0?)".into(),
            })?;
            let y = l.solve_lower_triangular(&ba).unwrap_or(ba);
            let x = l.tr_solve_lower_triangular(&y).unwrap_or(y);
            lambda.fill(0.0);
            for (k, &i) in idx.iter().enumerate() {
                lambda[i] = x[k];
            }
            let slack = &s * &lambda - &b;
            infeasible.clear();
            infeasible.extend(
                (0..m).filter(|&i| unilateral[i] && if active[i] { lambda[i] < -tol } else { slack[i] < -tol }),
            );
            if infeasible.is_empty() {
                self.v_next = v_free + w * &lambda;
                self.lambda = lambda;
                return Ok(());
            }
            if infeasible.len() < best {
                (best, tries) = (infeasible.len(), 3);
            } else {
                tries -= 1;
            }
            if tries > 0 {
                for &i in &infeasible {
                    active[i] = !active[i];
                }
            } else if let Some(&i) = infeasible.last() {
                active[i] = !active[i];
                tries = 1;
            }
        }
        Err(Error::NotConverged {
            solver: "SPOOK active-set solve".into(),
            iterations: self.settings.active_set_iterations,
            residual: Some(infeasible.len() as f64),
        })
    }
    // ANCHOR_END: active_set

    // ANCHOR: step
    /// One SPOOK step of `sys`: assemble, solve for `v_{k+1}` and `lambda~`, then
    /// `x_{k+1} = x_k + h nu_{k+1}` and `rho_{k+1} = exp(h omega_{k+1} / 2) (x) rho_k`.
    pub fn step(&mut self, sys: &mut SpookSystem) -> Result<()> {
        self.assemble(sys);
        let unilateral = self.has_unilateral_rows();
        let friction = self.rows.iter().any(|r| matches!(r.kind, RowKind::Friction { .. }));
        match (self.settings.solver, unilateral) {
            (SpookSolver::ActiveSet, _) => self.solve_active_set()?,
            // limits and frictionless contacts: the direct active-set solve, and projected
            // Gauss-Seidel should it not converge within its bound
            (SpookSolver::Auto, true) if !friction => {
                if self.solve_active_set().is_err() {
                    self.solve_pgs()?
                }
            }
            (SpookSolver::Pgs, _) | (SpookSolver::Auto, true) => self.solve_pgs()?,
            (SpookSolver::Auto, false) if self.nbody() >= self.settings.sparse_threshold => self.solve_sparse()?,
            (SpookSolver::Sparse, false) => self.solve_sparse()?,
            (SpookSolver::Auto, false) | (SpookSolver::Schur, false) => self.solve_schur()?,
            (SpookSolver::Direct, false) => self.solve_direct()?,
            (_, true) => {
                return Err(Error::Unsupported {
                    what: "SPOOK limit and contact rows".into(),
                    why: "unilateral rows need SpookSolver::Pgs, ActiveSet or Auto".into(),
                })
            }
        }
        if let Some(k) = self.v_next.iter().position(|x| !x.is_finite()) {
            return Err(Error::NonFinite {
                what: "SPOOK v_{k+1}".into(),
                index: k,
                value: self.v_next[k],
            });
        }
        for (i, b) in sys.bodies.iter_mut().enumerate() {
            b.nu = self.v_next.fixed_rows::<3>(6 * i).into_owned();
            b.omega = self.v_next.fixed_rows::<3>(6 * i + 3).into_owned();
            b.x += b.nu * self.h;
            b.rho = quat_step(&b.rho, &b.omega, self.h);
        }
        Ok(())
    }
    // ANCHOR_END: step
}

/// Largest `|phi_i|` over the bilateral rows of `sys` at its current state: the constraint
/// violation (m or rad, rows mixed).
pub fn violation(sys: &SpookSystem) -> f64 {
    let mut phi = vec![];
    let mut dq = vec![];
    for c in &sys.constraints {
        constraint_rows(c, &sys.bodies, &mut phi, &mut dq);
    }
    phi.iter().fold(0.0, |m, p| m.max(p.abs()))
}
