//! MuJoCo's loop-closing equality constraints as Featherstone loop joints.

use crate::error::{Error, Result};
use crate::kinematics::forward_kinematics;
use crate::model::{Equality, JointType, LoopJoint, Model};
use crate::spatial::{quat_to_mat, xlt, Vec3, Xform};

/// Checks an equality's body index (a Featherstone body, 0 = world).
fn featherstone_body(model: &Model, b: usize, eq: &str) -> Result<usize> {
    if b <= model.nb {
        Ok(b)
    } else {
        Err(Error::Unknown {
            kind: format!("body (index {b}, the tree has 0..={}) of equality", model.nb),
            name: eq.into(),
        })
    }
}

// ANCHOR: loops_from_equality
/// The loop joints equivalent to the model's `connect` and `weld` equality constraints
/// (MuJoCo's `<equality>`, whose rows MuJoCo builds in `mj_instantiateEquality`): "the
/// Featherstone formulation" of the same closed loops. Equality bodies are Featherstone body
/// indices (see [`Equality`]: the MJCF reader maps each MuJoCo body to the last body of its
/// chain, whose frame is the MuJoCo body frame).
///
/// - `Connect { body1, body2, anchor }` becomes a **spherical** loop joint with predecessor
///   body2 and successor body1. S sits at `anchor` on body1; P sits on body2 at the point that
///   coincides with it at `qpos0` (MuJoCo's second anchor). The position error is MuJoCo's
///   residual `p1 - p2` in body2's axes.
/// - `Weld { body1, body2, anchor, relpose }` becomes a **fixed** loop joint, predecessor body2,
///   successor body1. P sits at `anchor` on body2 with body2's axes; S sits on body1 at the
///   relpose position with orientation `r0` (the relpose quaternion, body2's orientation seen
///   from body1). Without relpose (or with a zero quaternion) both come from `qpos0`, as MuJoCo
///   computes them. MuJoCo's `torquescale` only weights its rotation rows and has no
///   counterpart here.
/// - `Joint` couplings are not loop joints and are skipped, and so are constraints inactive in
///   the reference state ([`Model::eq_active0`]): a loop joint cannot be switched off.
pub fn loops_from_equality(model: &Model) -> Result<Vec<LoopJoint>> {
    let kin = forward_kinematics(model, model.qpos0.as_slice())?;
    // coordinates, in body b's frame, of a world point
    let local = |b: usize, p: &Vec3| -> Vec3 { kin.x_0[b].e * (p - kin.x_0[b].r) };
    let mut out = Vec::new();
    for eq in model.active0_equalities() {
        match eq {
            Equality::Connect {
                name,
                body1,
                body2,
                anchor,
            } => {
                let (b1, b2) = (
                    featherstone_body(model, *body1, name)?,
                    featherstone_body(model, *body2, name)?,
                );
                let anchor2 = local(b2, &kin.point(b1, anchor));
                out.push(LoopJoint::new(
                    name,
                    JointType::Spherical,
                    b2,
                    b1,
                    xlt(anchor2),
                    xlt(*anchor),
                ));
            }
            Equality::Weld {
                name,
                body1,
                body2,
                anchor,
                relpose,
            } => {
                let (b1, b2) = (
                    featherstone_body(model, *body1, name)?,
                    featherstone_body(model, *body2, name)?,
                );
                let given = relpose.filter(|rp| rp[3..].iter().any(|v| *v != 0.0));
                let (pos, rot) = match given {
                    Some(rp) => (
                        Vec3::new(rp[0], rp[1], rp[2]),
                        quat_to_mat(&[rp[3], rp[4], rp[5], rp[6]]),
                    ),
                    None => {
                        let pos = local(b1, &kin.point(b2, anchor));
                        // body2's axes in body1 coordinates: R1^T R2 = E1 E2^T
                        (pos, kin.x_0[b1].e * kin.x_0[b2].e.transpose())
                    }
                };
                out.push(LoopJoint::new(
                    name,
                    JointType::Fixed,
                    b2,
                    b1,
                    xlt(*anchor),
                    Xform::from_pose(&rot, &pos),
                ));
            }
            Equality::Joint { .. } | Equality::Tendon { .. } => {}
        }
    }
    for (k, lj) in out.iter().enumerate() {
        lj.validate(model.nb, k)?;
    }
    Ok(out)
}
// ANCHOR_END: loops_from_equality

/// A copy of `model` whose [`Model::loops`] are [`loops_from_equality`] (replacing any loop
/// joints it had).
pub fn with_loops_from_equality(model: &Model) -> Result<Model> {
    let mut m = model.clone();
    m.loops = loops_from_equality(model)?;
    Ok(m)
}
