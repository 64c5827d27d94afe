//! Closed-loop systems (Featherstone chapter 8, sections 8.1-8.7, 8.10 and 8.12). Book chapter:
//! "Closed-loop systems".
//!
//! A closed-loop system is modelled as its spanning tree ([`crate::model::Model`]) plus loop
//! joints ([`crate::model::LoopJoint`], in [`Model::loops`](crate::model::Model::loops)). The
//! loop joints add constraint forces `K^T lambda` to the tree's equation of motion and the
//! acceleration constraint `K qdd = k + k_stab`:
//!
//! ```text
//! H qdd + C = tau + tau^a + K^T lambda          (8.34)
//! K qdd     = k + k_stab                        (8.35)
//! ```
//!
//! | book | here |
//! |---|---|
//! | table 8.1, `(T, err)` per loop-joint type | [`loop_error`] |
//! | tables 8.2/8.3, `C - tau^a` | [`rnea_loops`], [`bias_minus_active`] |
//! | table 8.4, `K`, `k`, `k_stab` (Baumgarte, 8.3) | [`loop_constraints`], [`LoopSystem`] |
//! | 8.5, the three solution methods | [`solve_kkt`], [`solve_lambda_first`], [`solve_null_space`], [`forward_dynamics`] |
//! | 8.8, `G` and `g` by complete pivoting | [`null_space`] |
//! | 8.10, rank, mobility, overconstraint | [`LoopProperties`] |
//! | 8.12, inverse dynamics and actuators | [`inverse_dynamics`], [`actuator_forces`] |
//! | assembly and simulation | [`assemble`], [`simulate`] |
//! | MuJoCo's connect/weld as loop joints | [`loops_from_equality`] |
//!
//! Canned mechanisms live in [`crate::model::mechanisms`].

mod assemble;
mod constraints;
mod equality;
mod inverse;
mod pivot;
mod rnea;
mod simulate;
mod solve;
mod table;

pub use assemble::{assemble, assemble_with, ASSEMBLE_TOL};
pub use constraints::{loop_constraints, loop_jacobian_dense, loop_nc, LoopSystem};
pub use equality::{loops_from_equality, with_loops_from_equality};
pub use inverse::{actuator_forces, inverse_dynamics, Actuation, ClosedLoopInverse};
pub use pivot::{null_space, null_space_with, rank, LoopProperties, NullSpace, PivotTol};
pub use rnea::{bias_minus_active, loop_active_len, loop_active_tau_dense, rnea_loops};
pub use simulate::{simulate, SimulateOptions, ENERGY, LOOP_ERROR};
pub use solve::{forward_dynamics, solve_kkt, solve_lambda_first, solve_null_space, ClosedLoopSolution, Method};
pub use table::{loop_active_basis, loop_error, loop_motion_subspace};

use crate::error::Result;
use crate::model::Model;

/// Featherstone 8.10 for a model at configuration `q`: `n`, `n^c`, `rank(K)`, mobility.
pub fn loop_properties(model: &Model, q: &[f64]) -> Result<LoopProperties> {
    let sys = loop_constraints(model, q, &vec![0.0; model.nv], None)?;
    Ok(LoopProperties::of(&sys.kmat))
}
