//! Featherstone 8.5: three ways to solve the closed-loop equations of motion
//!
//! ```text
//! H qdd + C = tau + tau^a + K^T lambda,     K qdd = k + k_stab          (8.34), (8.35)
//! ```

use super::constraints::loop_constraints;
use super::pivot::{null_space, rank, NullSpace};
use super::rnea::bias_minus_active;
use crate::dynamics::crba;
use crate::error::{check_vector, Error, Result};
use crate::model::Model;
use crate::sparse::{ltl, solve_lt, solve_ltl, OpCount};
use crate::vector::AsVector;
use nalgebra::{DMatrix, DVector};

/// Relative tolerance on singular values in the pseudo-inverse solves.
const SVD_TOL: f64 = 1e-10;

/// Which method of Featherstone 8.5 solves the closed-loop equations of motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Method 1: the whole KKT system (8.36) at once.
    Kkt,
    /// Method 2: `lambda` first from `K H^-1 K^T lambda = b` (8.37)-(8.40), with H's sparse
    /// `L^T L` factor.
    LambdaFirst,
    /// Method 3: `qdd = G ydd + g` (8.42) with G and g by complete pivoting, then (8.46).
    NullSpace,
}

impl Method {
    /// All three methods.
    pub const ALL: [Method; 3] = [Method::Kkt, Method::LambdaFirst, Method::NullSpace];
}

/// The result of closed-loop forward dynamics.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedLoopSolution {
    /// Tree joint accelerations `qdd`.
    pub qdd: DVector<f64>,
    /// Loop-joint constraint forces `lambda` (methods 1 and 2; `None` for method 3, which
    /// eliminates them). Unique when `rank(K) = n^c`; otherwise the minimum-norm solution.
    pub lambda: Option<DVector<f64>>,
    /// `rank(K)`.
    pub rank: usize,
}

/// Solves `A x = b` for a symmetric matrix by SVD with singular values below
/// `SVD_TOL * sigma_max` treated as zero: the minimum-norm least-squares solution.
fn pinv_solve(a: &DMatrix<f64>, b: &DVector<f64>, what: &str) -> Result<DVector<f64>> {
    let svd = a.clone().svd(true, true);
    let smax = svd.singular_values.iter().fold(0.0f64, |m, s| m.max(*s));
    svd.solve(b, SVD_TOL * smax).map_err(|e| Error::Singular {
        what: what.into(),
        why: e.into(),
    })
}

fn check_sizes(h: &DMatrix<f64>, tau_prime: &DVector<f64>, kmat: &DMatrix<f64>, rhs: &DVector<f64>) -> Result<()> {
    let n = h.nrows();
    if h.ncols() != n {
        return Err(Error::BadLength {
            what: "H (columns)".into(),
            got: h.ncols(),
            expected: n,
        });
    }
    check_vector("tau - C + tau^a", tau_prime.as_slice(), n)?;
    if kmat.ncols() != n {
        return Err(Error::BadLength {
            what: "K (columns)".into(),
            got: kmat.ncols(),
            expected: n,
        });
    }
    check_vector("k + k_stab", rhs.as_slice(), kmat.nrows())
}

// ANCHOR: solve_kkt
/// Method 1 (eq. (8.36)): solve
/// ```text
/// [ H  K^T ] [  qdd    ]   [ tau - C + tau^a ]
/// [ K   0  ] [ -lambda ] = [ k + k_stab      ]
/// ```
/// directly: by LU when `rank(K) = n^c`, otherwise (the matrix is then singular) by the SVD
/// pseudo-inverse, whose minimum-norm solution has the unique `qdd` and the minimum-norm
/// `lambda`. `tau_prime = tau - C + tau^a`, `rhs = k + k_stab`. Returns `(qdd, lambda)`.
pub fn solve_kkt(
    h: &DMatrix<f64>,
    tau_prime: &DVector<f64>,
    kmat: &DMatrix<f64>,
    rhs: &DVector<f64>,
) -> Result<(DVector<f64>, DVector<f64>)> {
    check_sizes(h, tau_prime, kmat, rhs)?;
    let (n, nc) = (h.nrows(), kmat.nrows());
    let mut m = DMatrix::zeros(n + nc, n + nc);
    m.view_mut((0, 0), (n, n)).copy_from(h);
    m.view_mut((0, n), (n, nc)).copy_from(&kmat.transpose());
    m.view_mut((n, 0), (nc, n)).copy_from(kmat);
    let mut b = DVector::zeros(n + nc);
    b.rows_mut(0, n).copy_from(tau_prime);
    b.rows_mut(n, nc).copy_from(rhs);
    let x = if rank(kmat) == nc {
        m.lu().solve(&b).ok_or_else(|| Error::Singular {
            what: "KKT matrix [H K^T; K 0]".into(),
            why: "LU failed".into(),
        })?
    } else {
        pinv_solve(&m, &b, "KKT matrix [H K^T; K 0]")?
    };
    Ok((x.rows(0, n).into_owned(), -x.rows(n, nc).into_owned()))
}
// ANCHOR_END: solve_kkt

// ANCHOR: solve_lambda_first
/// Method 2 (eqs. (8.37)-(8.41)) with the sparse factor `H = L^T L` of Featherstone 6.5
/// ([`crate::sparse::ltl`], on the dof parent array `parent`):
/// 1. factor `H = L^T L`;
/// 2. `Y = L^-T K^T`, `z = L^-T tau'` (back-substitutions, [`crate::sparse::solve_lt`]);
/// 3. `A = Y^T Y = K H^-1 K^T`, `b = k + k_stab - Y^T z`;
/// 4. `lambda = A^-1 b` (Cholesky) when `rank(K) = n^c`, else `lambda = A^+ b` by SVD (the
///    `z = 0` member of (8.41));
/// 5. `qdd = H^-1 (tau' + K^T lambda) = L^-1 L^-T (...)`.
///
/// Returns `(qdd, lambda)`.
pub fn solve_lambda_first(
    h: &DMatrix<f64>,
    parent: &[Option<usize>],
    tau_prime: &DVector<f64>,
    kmat: &DMatrix<f64>,
    rhs: &DVector<f64>,
) -> Result<(DVector<f64>, DVector<f64>)> {
    check_sizes(h, tau_prime, kmat, rhs)?;
    let (n, nc) = (h.nrows(), kmat.nrows());
    let mut ops = OpCount::default();
    let mut l = h.clone();
    ltl(&mut l, parent, &mut ops)?;
    let mut y = DMatrix::zeros(n, nc);
    let mut col = vec![0.0; n];
    for i in 0..nc {
        for (c, v) in col.iter_mut().enumerate() {
            *v = kmat[(i, c)];
        }
        solve_lt(&l, parent, false, &mut col, &mut ops);
        y.column_mut(i).copy_from_slice(&col);
    }
    let mut z = tau_prime.as_slice().to_vec();
    solve_lt(&l, parent, false, &mut z, &mut ops);
    let a = y.transpose() * &y;
    let b = rhs - y.transpose() * DVector::from_vec(z);
    let lambda = if rank(kmat) == nc {
        a.cholesky()
            .ok_or_else(|| Error::NotPositiveDefinite {
                what: "K H^-1 K^T".into(),
                dof: 0,
                value: f64::NAN,
            })?
            .solve(&b)
    } else {
        pinv_solve(&a, &b, "K H^-1 K^T")?
    };
    let f = tau_prime + kmat.transpose() * &lambda;
    let qdd = solve_ltl(&l, parent, f.as_slice(), &mut ops);
    Ok((qdd, lambda))
}
// ANCHOR_END: solve_lambda_first

// ANCHOR: solve_null_space
/// Method 3 (eqs. (8.42)-(8.46)): `G` and `g` from `K qdd = k + k_stab` by complete pivoting
/// ([`super::null_space`]), then the reduced equation of motion
/// `G^T H G ydd = G^T (tau' - H g)` by Cholesky, and `qdd = G ydd + g`. The constraint forces
/// are eliminated. Fails if the constraints are inconsistent. Returns `(qdd, G and g)`.
pub fn solve_null_space(
    h: &DMatrix<f64>,
    tau_prime: &DVector<f64>,
    kmat: &DMatrix<f64>,
    rhs: &DVector<f64>,
) -> Result<(DVector<f64>, NullSpace)> {
    check_sizes(h, tau_prime, kmat, rhs)?;
    let ns = null_space(kmat, rhs)?;
    let g = &ns.g_null;
    let m = g.transpose() * h * g;
    let f = g.transpose() * (tau_prime - h * &ns.g_bias);
    let ydd = m
        .cholesky()
        .ok_or_else(|| Error::NotPositiveDefinite {
            what: "G^T H G".into(),
            dof: 0,
            value: f64::NAN,
        })?
        .solve(&f);
    Ok((g * ydd + &ns.g_bias, ns))
}
// ANCHOR_END: solve_null_space

// ANCHOR: forward_dynamics
/// Closed-loop forward dynamics (Featherstone 8.5): `H` by CRBA, `C - tau^a` by
/// [`super::rnea_loops`], `K`, `k`, `k_stab` by [`super::loop_constraints`], then `method`.
///
/// `tau` are the tree joint forces (add [`crate::dynamics::passive_forces`] yourself if the
/// model has damping or springs), `tau_a` the active loop-joint forces (stacked `n_k` per loop
/// joint; `None` if all are passive), `t_stab` Baumgarte's time constant (`None`: no
/// stabilization).
pub fn forward_dynamics(
    model: &Model,
    q: &(impl AsVector + ?Sized),
    qd: &(impl AsVector + ?Sized),
    tau: &(impl AsVector + ?Sized),
    tau_a: Option<&[f64]>,
    method: Method,
    t_stab: Option<f64>,
) -> Result<ClosedLoopSolution> {
    let q = q.as_vector();
    let qd = qd.as_vector();
    let tau = tau.as_vector();
    check_vector("tau", tau, model.nv)?;
    let sys = loop_constraints(model, q, qd, t_stab)?;
    let h = crba(model, q)?;
    let c = bias_minus_active(model, q, qd, tau_a)?;
    let tau_prime = DVector::from_column_slice(tau) - c;
    let rhs = sys.rhs();
    match method {
        Method::Kkt => {
            let (qdd, lambda) = solve_kkt(&h, &tau_prime, &sys.kmat, &rhs)?;
            Ok(ClosedLoopSolution {
                qdd,
                lambda: Some(lambda),
                rank: rank(&sys.kmat),
            })
        }
        Method::LambdaFirst => {
            let (qdd, lambda) = solve_lambda_first(&h, &model.dof_parent, &tau_prime, &sys.kmat, &rhs)?;
            Ok(ClosedLoopSolution {
                qdd,
                lambda: Some(lambda),
                rank: rank(&sys.kmat),
            })
        }
        Method::NullSpace => {
            let (qdd, ns) = solve_null_space(&h, &tau_prime, &sys.kmat, &rhs)?;
            Ok(ClosedLoopSolution {
                qdd,
                lambda: None,
                rank: ns.rank,
            })
        }
    }
}
// ANCHOR_END: forward_dynamics
