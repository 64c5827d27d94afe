//! Featherstone 8.12: inverse dynamics of closed-loop systems and actuator forces.

use super::constraints::loop_constraints;
use super::pivot::{null_space, rank};
use super::rnea::rnea_loops;
use crate::error::{check_vector, Error, Result};
use crate::model::Model;
use crate::sparse::pinv_solve_dense;
use nalgebra::{DMatrix, DVector};

/// How a set of actuated dofs relates to the mobility (Featherstone 8.12's three cases; the
/// first two can hold together).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Actuation {
    /// Number of actuated dofs `p`.
    pub p: usize,
    /// `rank(G_u)`.
    pub rank_gu: usize,
    /// Mobility `n - r`.
    pub mobility: usize,
}

impl Actuation {
    /// `rank(G_u) < n - r`: more freedoms than the actuators control.
    pub fn underactuated(&self) -> bool {
        self.rank_gu < self.mobility
    }
    /// `p > rank(G_u)`: infinitely many actuator forces give the same motion.
    pub fn redundant(&self) -> bool {
        self.p > self.rank_gu
    }
    /// `p = rank(G_u) = n - r`: `G_u` is invertible.
    pub fn proper(&self) -> bool {
        self.p == self.rank_gu && self.rank_gu == self.mobility
    }
}

/// Closed-loop inverse dynamics with actuators.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedLoopInverse {
    /// `tau_ID = ID(q, qdot, qdd) - tau^a` of the spanning tree.
    pub tau_id: DVector<f64>,
    /// Actuator forces `u` (one per actuated dof, in the given order); minimum-norm when the
    /// actuation is redundant.
    pub u: DVector<f64>,
    /// The tree joint forces `tau = Q [u; 0]`: `u` at the actuated dofs, zero elsewhere.
    pub tau: DVector<f64>,
    /// The classification of the actuation.
    pub actuation: Actuation,
}

// ANCHOR: actuator_forces
/// Solves `G_u^T u = G^T tau_ID` (eq. (8.63)), `G_u` the rows of `G` (any basis of the null
/// space of K; the solution does not depend on which) belonging to the `actuated` dofs:
/// - underactuated (`rank(G_u) < n - r`): an error, no `u` can produce an arbitrary motion;
/// - properly actuated: `u = G_u^-T G^T tau_ID` (LU);
/// - redundantly actuated: the minimum-norm `u` (SVD pseudo-inverse).
pub fn actuator_forces(
    g_null: &DMatrix<f64>,
    tau_id: &DVector<f64>,
    actuated: &[usize],
) -> Result<(DVector<f64>, Actuation)> {
    let (n, mob) = (g_null.nrows(), g_null.ncols());
    check_vector("g_null", g_null.as_slice(), n * mob)?;
    check_vector("tau_ID", tau_id.as_slice(), n)?;
    for (i, &d) in actuated.iter().enumerate() {
        if d >= n {
            return Err(Error::BadLength {
                what: format!("actuated dof index {d}"),
                got: d,
                expected: n,
            });
        }
        if actuated[..i].contains(&d) {
            return Err(Error::InvalidArgument {
                what: "actuated".into(),
                why: format!("dof {d} is listed twice"),
            });
        }
    }
    let mut gu = DMatrix::zeros(actuated.len(), mob);
    for (row, &d) in actuated.iter().enumerate() {
        gu.row_mut(row).copy_from(&g_null.row(d));
    }
    let act = Actuation {
        p: actuated.len(),
        rank_gu: rank(&gu),
        mobility: mob,
    };
    if act.underactuated() {
        return Err(Error::Singular {
            what: "closed-loop inverse dynamics".into(),
            why: format!(
                "underactuated: rank(G_u) = {} < mobility {} with actuated dofs {actuated:?}",
                act.rank_gu, mob
            ),
        });
    }
    let rhs = g_null.transpose() * tau_id;
    let gut = gu.transpose();
    // (an empty G_u^T, mobility 0, goes to the pseudo-inverse, which answers u = 0)
    let u = if act.proper() && mob > 0 {
        gut.lu().solve(&rhs).ok_or_else(|| Error::Singular {
            what: "G_u^T".into(),
            why: "LU failed".into(),
        })?
    } else {
        pinv_solve_dense(&gut, &rhs, 1e-10, "G_u^T")?
    };
    crate::error::check_output("u", u.as_slice())?;
    Ok((u, act))
}
// ANCHOR_END: actuator_forces

// ANCHOR: inverse_dynamics
/// Closed-loop inverse dynamics (Featherstone 8.12): given a state and acceleration that satisfy
/// the loop constraints, `tau_ID = ID(q, qdot, qdd) - tau^a` by [`rnea_loops`], `G` by complete
/// pivoting on K, and the actuator forces of [`actuator_forces`].
///
/// Fails if the input breaks the loop constraints (position error, `K qdot`, or
/// `K qdd - k` above `1e-6` relative), if the actuation is insufficient, or on bad sizes.
pub fn inverse_dynamics(
    model: &Model,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    tau_a: Option<&[f64]>,
    actuated: &[usize],
) -> Result<ClosedLoopInverse> {
    check_vector("qacc", qdd, model.nv)?;
    let sys = loop_constraints(model, q, qd, None)?;
    let qd_v = DVector::from_column_slice(qd);
    let qdd_v = DVector::from_column_slice(qdd);
    let scale = sys.kmat.amax().max(1.0);
    let checks = [
        ("position error", sys.err.amax()),
        ("velocity error K qdot", (&sys.kmat * &qd_v).amax() / scale),
        (
            "acceleration error K qdd - k",
            (&sys.kmat * &qdd_v - &sys.k).amax() / scale.max(sys.k.amax()),
        ),
    ];
    for (what, v) in checks {
        if v.is_nan() || v > 1e-6 {
            return Err(Error::ConstraintViolated {
                what: what.into(),
                value: v,
            });
        }
    }
    let ns = null_space(&sys.kmat, &sys.k)?;
    let tau_id = rnea_loops(model, q, qd, qdd, tau_a, None)?;
    let (u, actuation) = actuator_forces(&ns.g_null, &tau_id, actuated)?;
    let mut tau = DVector::zeros(model.nv);
    for (i, &d) in actuated.iter().enumerate() {
        tau[d] = u[i];
    }
    Ok(ClosedLoopInverse {
        tau_id,
        u,
        tau,
        actuation,
    })
}
// ANCHOR_END: inverse_dynamics
