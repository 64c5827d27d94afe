//! Joint limits as MuJoCo detects them (`mj_instantiateLimit`): a limited hinge or slide whose
//! position leaves `[range[0], range[1]]`, or a limited ball joint whose rotation angle exceeds
//! `max(range)`, gets a limit constraint row (with the default margin 0). The rows themselves
//! (with margins, tendon limits and their parameters) are
//! [`super::constraint::limit`]'s; this detection tells a caller when a state leaves the
//! unconstrained regime without building any row.

use super::constraint::limit::ball_angle_axis;
use crate::model::{JointType, Model};

/// A limited joint found outside its range.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitViolation {
    /// Featherstone body carrying the joint.
    pub body: usize,
    /// The joint's name.
    pub joint: String,
    /// Its position (hinge, slide) or rotation angle (ball), in the model's units.
    pub value: f64,
    /// Its range.
    pub range: [f64; 2],
}

impl std::fmt::Display for LimitViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "joint '{}' at {} is outside its range [{}, {}]",
            self.joint, self.value, self.range[0], self.range[1]
        )
    }
}

// ANCHOR: limits
/// The first limited joint outside its range at `qpos`, or None. A ball joint's limit bounds the
/// rotation angle of its quaternion ([`ball_angle_axis`], in `[0, pi]`) by `max(range)`.
pub fn first_violated_limit(model: &Model, qpos: &[f64]) -> Option<LimitViolation> {
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if !j.limited {
            continue;
        }
        let a = model.q_adr[i];
        let value = match j.jtype {
            JointType::Revolute { .. } | JointType::Prismatic { .. } | JointType::Helical { .. } => {
                if qpos[a] >= j.range[0] && qpos[a] <= j.range[1] {
                    continue;
                }
                qpos[a]
            }
            JointType::Spherical => {
                let (angle, _) = ball_angle_axis(&qpos[a..a + 4]);
                if angle <= j.range[0].max(j.range[1]) {
                    continue;
                }
                angle
            }
            _ => continue,
        };
        return Some(LimitViolation {
            body: i,
            joint: j.name.clone(),
            value,
            range: j.range,
        });
    }
    None
}
// ANCHOR_END: limits

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::canned;

    #[test]
    fn a_hinge_outside_its_range_is_found() {
        let mut m = canned::chain(2, false);
        m.joints[2].limited = true;
        m.joints[2].range = [-0.5, 0.5];
        assert_eq!(first_violated_limit(&m, &[3.0, 0.4]), None);
        let v = first_violated_limit(&m, &[3.0, 0.6]).unwrap();
        assert_eq!((v.body, v.value), (2, 0.6));
        assert!(v.to_string().contains("outside its range [-0.5, 0.5]"));
    }

    /// The detection agrees with the limit rows of the constraint model (margin 0): a state has
    /// a violated limit exactly when `make_constraint` makes a limit row with negative distance.
    #[test]
    fn detection_agrees_with_the_limit_rows() {
        use crate::model::JointType;
        use crate::mujoco::constraint::{make_constraint, EfcType, Invweight};
        use crate::mujoco::forward_smooth;
        let mut m = canned::floating_base_ball_arms();
        for i in 2..=m.nb {
            let j = &mut m.joints[i];
            j.limited = matches!(j.jtype, JointType::Revolute { .. } | JointType::Spherical);
            j.range = if matches!(j.jtype, JointType::Spherical) {
                [0.0, 0.5]
            } else {
                [-0.4, 0.3]
            };
        }
        let inv = Invweight::new(&m).unwrap();
        let mut seen = [0, 0];
        for k in 0..40 {
            let mut q = m.qpos0.as_slice().to_vec();
            let v: Vec<f64> = (0..m.nv).map(|d| 0.35 * ((k * m.nv + d) as f64 * 0.71).sin()).collect();
            m.integrate(&mut q, &v, 1.0).unwrap();
            let d = forward_smooth(&m, &q, &v).unwrap();
            let efc = make_constraint(&m, &d, &inv, &q, &v, Vec::new()).unwrap();
            let violated_row = (0..efc.nefc()).any(|i| efc.efc_type[i] == EfcType::LimitJoint && efc.pos[i] < 0.0);
            let detected = first_violated_limit(&m, &q).is_some();
            assert_eq!(violated_row, detected, "state {k}");
            seen[detected as usize] += 1;
        }
        assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
    }
}
