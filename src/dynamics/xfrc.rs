//! Cartesian forces applied to bodies (MuJoCo's `xfrc_applied` and `mj_xfrcAccumulate`), on
//! Featherstone's side: a force `f` and a torque `t` at a body's centre of mass become the
//! generalized force `J^T [t; f]`. Book chapter: "The constrained pipeline", section "Stage
//! order".

use crate::kinematics::WorldAxes;
use crate::model::Model;
use crate::spatial::Force;

/// Whether any body has a nonzero applied wrench.
pub fn has_xfrc(xfrc: &[[f64; 6]]) -> bool {
    xfrc.iter().skip(1).any(|w| w.iter().any(|&x| x != 0.0))
}

// ANCHOR: xfrc_into
/// MuJoCo's `mj_xfrcAccumulate` with the world dof axes of `axes` (updated at the
/// configuration): for each MuJoCo body `b` (index 0, the world, ignored) with `xfrc[b] =
/// [f; t]` (world force and torque, MuJoCo's layout) applied at its centre of mass `x_b`, the
/// spatial force about the world origin is `[t + x_b x f; f]`, and every dof `c` that moves the
/// body (its own and its ancestors', [`WorldAxes::chain`]) gets `S0_c . [t + x_b x f; f]` added
/// to `qfrc`: the transposed Jacobian of the point and of the body's rotation, one dot product
/// per dof.
pub fn xfrc_into(model: &Model, axes: &WorldAxes, xfrc: &[[f64; 6]], qfrc: &mut [f64]) {
    for (mb, w) in xfrc.iter().enumerate().skip(1) {
        if w.iter().all(|&x| x == 0.0) {
            continue;
        }
        let b = model.mj_body_last[mb];
        let x = axes.point(b, &model.inertia[b].com());
        let f = crate::spatial::Vec3::new(w[0], w[1], w[2]);
        let t = crate::spatial::Vec3::new(w[3], w[4], w[5]);
        let spatial = Force { n: t + x.cross(&f), f };
        for dof in axes.chain(model, b) {
            qfrc[dof] += axes.axis(dof).dot(&spatial);
        }
    }
}
// ANCHOR_END: xfrc_into

/// Checks `xfrc_applied`: one wrench per MuJoCo body, every entry finite; the error names the
/// entry (`xfrc_applied[6 b + k]`).
pub fn check_xfrc(model: &Model, xfrc: &[[f64; 6]]) -> crate::error::Result<()> {
    use crate::error::Error;
    if xfrc.len() != model.mj_nbody() {
        return Err(Error::BadLength {
            what: "xfrc_applied (one wrench per body, the world included)".into(),
            got: xfrc.len(),
            expected: model.mj_nbody(),
        });
    }
    match xfrc.iter().flatten().enumerate().find(|(_, v)| !v.is_finite()) {
        Some((index, &value)) => Err(Error::NonFinite {
            what: "xfrc_applied".into(),
            index,
            value,
        }),
        None => Ok(()),
    }
}
