//! Joint limits as MuJoCo detects them (`mj_instantiateLimit`): a limited hinge or slide whose
//! position leaves `[range[0], range[1]]`, or a limited ball joint whose rotation angle exceeds
//! `range[1]`, would get a limit constraint row (with the default margin 0). The constraint rows
//! themselves come with the constraint model; today the detection tells the simulator when a
//! model leaves the unconstrained regime.

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
/// angle `2 atan2(|v|, |w|)` of its quaternion `(w, v)` by `range[1]`.
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
                let vnorm = (qpos[a + 1] * qpos[a + 1] + qpos[a + 2] * qpos[a + 2] + qpos[a + 3] * qpos[a + 3]).sqrt();
                let angle = 2.0 * vnorm.atan2(qpos[a].abs());
                if angle <= j.range[1] {
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
}
