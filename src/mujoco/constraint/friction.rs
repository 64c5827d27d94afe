//! Friction-loss rows (MuJoCo's `mj_instantiateFriction`, spec 3.4): dry friction on dofs and
//! tendons. Book chapter: "The constraint model", section "Friction loss".

use super::equality::refsafe;
use super::impedance::SolParams;
use super::invweight::Invweight;
use super::rows::{OneRow, Rows, Scratch};
use super::EfcType;
use crate::dynamics::TendonState;
use crate::model::{Model, SolverParams};
use std::fmt::Write;

// ANCHOR: friction_rows
/// Appends one row per dof whose joint has `frictionloss > 0` (each dof of a ball or free joint
/// its own row), `J = e_i`, then one per tendon with `frictionloss > 0`, `J = ten_J`; position
/// and margin 0, `efc_frictionloss = eta`, `A-hat` the dof's or tendon's `invweight0`.
pub(crate) fn friction_rows(
    model: &Model,
    inv: &Invweight,
    ten: Option<&TendonState>,
    s: &mut Scratch,
    rows: &mut Rows,
) {
    // one row of friction loss `eta` on a dof or tendon `id`, parameters `p`, `A-hat` `diag`
    let mut add = |rows: &mut Rows,
                   (efc_type, id): (EfcType, usize),
                   eta: f64,
                   diag: f64,
                   p: &SolverParams,
                   jac: &dyn Fn(&mut [f64])| {
        let params = SolParams {
            solref: p.solref,
            solreffriction: [0.0; 2],
            solimp: p.solimp,
        };
        let params = rows.sanitize(params, model.opt.timestep, refsafe(model), |s: &mut String| {
            let _ = match efc_type {
                EfcType::FrictionDof => write!(s, "friction loss of dof {id}"),
                _ => write!(s, "friction loss of tendon {id}"),
            };
        });
        let r = OneRow {
            efc_type,
            id,
            pos: 0.0,
            margin: 0.0,
            frictionloss: eta,
            diag,
        };
        rows.add_one(s, r, params, jac);
    };
    for dof in 0..model.nv {
        let j = &model.joints[model.dof_body[dof]];
        if j.frictionloss > 0.0 {
            let row = (EfcType::FrictionDof, dof);
            add(rows, row, j.frictionloss, inv.dof[dof], &j.friction_params, &|r| {
                r[dof] = 1.0
            });
        }
    }
    let Some(ten) = ten else { return };
    for (t, tendon) in model.tendons.iter().enumerate() {
        if tendon.frictionloss > 0.0 {
            let jac = |row: &mut [f64]| {
                for (c, x) in row.iter_mut().enumerate() {
                    *x = ten.moment[(t, c)];
                }
            };
            let row = (EfcType::FrictionTendon, t);
            add(rows, row, tendon.frictionloss, inv.tendon[t], &tendon.friction, &jac);
        }
    }
}
// ANCHOR_END: friction_rows
