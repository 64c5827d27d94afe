//! Friction-loss rows (MuJoCo's `mj_instantiateFriction`, spec 3.4): dry friction on dofs and
//! tendons. Book chapter: "The constraint model", section "Friction loss".

use super::equality::refsafe;
use super::impedance::SolParams;
use super::invweight::Invweight;
use super::rows::{GroupKind, NewGroup, Rows, Scratch};
use super::EfcType;
use crate::dynamics::TendonState;
use crate::model::Model;

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
    let nv = model.nv;
    for dof in 0..nv {
        let j = &model.joints[model.dof_body[dof]];
        if j.frictionloss <= 0.0 {
            continue;
        }
        let params = rows.sanitize(
            SolParams {
                solref: j.friction_params.solref,
                solreffriction: [0.0; 2],
                solimp: j.friction_params.solimp,
            },
            model.opt.timestep,
            refsafe(model),
            || format!("friction loss of dof {dof}"),
        );
        let row = &mut s.rows[..nv];
        row.fill(0.0);
        row[dof] = 1.0;
        rows.add(NewGroup {
            efc_type: EfcType::FrictionDof,
            id: dof,
            jac: row,
            pos: &[0.0],
            margin: &[0.0],
            frictionloss: j.frictionloss,
            diag: &[inv.dof[dof]],
            kind: GroupKind::Plain,
            params,
        });
    }
    let Some(ten) = ten else { return };
    for (t, tendon) in model.tendons.iter().enumerate() {
        if tendon.frictionloss <= 0.0 {
            continue;
        }
        let params = rows.sanitize(
            SolParams {
                solref: tendon.friction.solref,
                solreffriction: [0.0; 2],
                solimp: tendon.friction.solimp,
            },
            model.opt.timestep,
            refsafe(model),
            || format!("friction loss of tendon {t}"),
        );
        let row = &mut s.rows[..nv];
        for (c, r) in row.iter_mut().enumerate() {
            *r = ten.moment[(t, c)];
        }
        rows.add(NewGroup {
            efc_type: EfcType::FrictionTendon,
            id: t,
            jac: row,
            pos: &[0.0],
            margin: &[0.0],
            frictionloss: tendon.frictionloss,
            diag: &[inv.tendon[t]],
            kind: GroupKind::Plain,
            params,
        });
    }
}
// ANCHOR_END: friction_rows
