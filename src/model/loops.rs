//! Loop joints (Featherstone 8.1 and 4.2's numbering rules): the joints that are left over when a
//! closed-loop system is reduced to a spanning tree. Book chapter: "Closed-loop systems".

use super::JointType;
use crate::error::{Error, Result};
use crate::spatial::{Mat3, Vec3, Xform};

/// A loop joint `k` of a closed-loop system (Featherstone 8.1, 8.2).
///
/// The joint connects its predecessor body `pred = p(k)` and its successor body `succ = s(k)`
/// (0 is the fixed base). It has a frame on each: `x_p = X_P(k) = P_k X p(k)` maps predecessor
/// body coordinates to the joint's predecessor frame, `x_s = X_S(k) = S_k X s(k)` maps successor
/// coordinates to the successor frame. The loop is closed when `S_k X P_k` is a transform the
/// joint allows (identity for a fixed joint, a rotation about z for a revolute one, ...).
///
/// Axes follow Featherstone's table 8.1: every loop joint moves about or along the **z axis** of
/// its frames. [`LoopJoint::new`] accepts any axis and folds the rotation that takes z to it into
/// `x_p` and `x_s`, so the stored `jtype` always has axis z.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopJoint {
    /// Name (may be empty).
    pub name: String,
    /// Joint type: revolute, prismatic, helical, cylindrical, planar, spherical or fixed (axis z).
    pub jtype: JointType,
    /// Predecessor body `p(k)` (0 = base).
    pub pred: usize,
    /// Successor body `s(k)` (0 = base).
    pub succ: usize,
    /// `X_P(k) = P_k X p(k)`: predecessor body coordinates to the joint's predecessor frame.
    pub x_p: Xform,
    /// `X_S(k) = S_k X s(k)`: successor body coordinates to the joint's successor frame.
    pub x_s: Xform,
}

/// A rotation whose third column is the unit vector `a` (columns: the axes of a frame whose z
/// axis is `a`, in the original coordinates).
pub(crate) fn frame_with_z(a: &Vec3) -> Mat3 {
    let a = a.normalize();
    // pick the coordinate axis least aligned with a to build the first column
    let helper = if a.x.abs() <= a.y.abs() && a.x.abs() <= a.z.abs() {
        Vec3::x()
    } else if a.y.abs() <= a.z.abs() {
        Vec3::y()
    } else {
        Vec3::z()
    };
    let x = helper.cross(&a).normalize();
    let y = a.cross(&x);
    Mat3::from_columns(&[x, y, a])
}

impl LoopJoint {
    /// A loop joint of type `jtype` between `pred` and `succ`, with frames `x_p = P X pred` and
    /// `x_s = S X succ`. An axis other than z (revolute, prismatic, helical, cylindrical) is
    /// moved into the frames: both frames are turned so that their z axis is the given axis
    /// (expressed in the frames' own coordinates), and the stored axis becomes z.
    pub fn new(name: &str, jtype: JointType, pred: usize, succ: usize, x_p: Xform, x_s: Xform) -> Self {
        let axis = match jtype {
            JointType::Revolute { axis }
            | JointType::Prismatic { axis }
            | JointType::Helical { axis, .. }
            | JointType::Cylindrical { axis } => Some(axis),
            _ => None,
        };
        let z = Vec3::z();
        let (jtype, x_p, x_s) = match axis {
            // a zero or non-finite axis is left for `validate` to report
            Some(a) if a.norm() > 0.0 && a.norm().is_finite() => {
                let a = a.normalize();
                let turn = if (a - z).norm() <= 1e-15 {
                    Xform::identity()
                } else {
                    Xform::from_pose(&frame_with_z(&a), &Vec3::zeros())
                };
                let jt = match jtype {
                    JointType::Revolute { .. } => JointType::Revolute { axis: z },
                    JointType::Prismatic { .. } => JointType::Prismatic { axis: z },
                    JointType::Helical { pitch, .. } => JointType::Helical { axis: z, pitch },
                    JointType::Cylindrical { .. } => JointType::Cylindrical { axis: z },
                    other => other,
                };
                (jt, turn.compose(&x_p), turn.compose(&x_s))
            }
            _ => (jtype, x_p, x_s),
        };
        LoopJoint {
            name: name.into(),
            jtype,
            pred,
            succ,
            x_p,
            x_s,
        }
    }

    /// Number of constraints the joint imposes, `n^c_k = 6 - n_k`.
    pub fn nc(&self) -> usize {
        6 - self.jtype.nv()
    }

    /// Checks the joint against a tree of `nb` bodies; `index` is its position in
    /// [`super::Model::loops`] (used in the error). Rejects unknown bodies, a joint between a body
    /// and itself, free joints, axes other than z, and non-finite frames.
    pub fn validate(&self, nb: usize, index: usize) -> Result<()> {
        let bad = |why: String| Error::BadLoopJoint {
            index,
            name: self.name.clone(),
            why,
        };
        for (role, b) in [("predecessor", self.pred), ("successor", self.succ)] {
            if b > nb {
                return Err(bad(format!(
                    "{role} body {b} does not exist (the tree has bodies 0..={nb})"
                )));
            }
        }
        if self.pred == self.succ {
            return Err(bad(format!("connects body {} to itself", self.pred)));
        }
        match self.jtype {
            JointType::Free => return Err(bad("a free joint imposes no constraint and cannot close a loop".into())),
            JointType::Revolute { axis }
            | JointType::Prismatic { axis }
            | JointType::Helical { axis, .. }
            | JointType::Cylindrical { axis }
                if (axis - Vec3::z()).norm().is_nan() || (axis - Vec3::z()).norm() > 1e-12 =>
            {
                return Err(bad(format!(
                    "axis {axis:?} is not z (build the joint with LoopJoint::new, which folds \
                     the axis into the frames)"
                )));
            }
            JointType::Helical { pitch, .. } if !pitch.is_finite() => {
                return Err(bad(format!("helical pitch {pitch} is not finite")));
            }
            _ => {}
        }
        if !self.x_p.is_finite() || !self.x_s.is_finite() {
            return Err(bad("frame transform is not finite".into()));
        }
        Ok(())
    }
}
