//! Joint models and `jcalc` (Featherstone chapter 4, table 4.1).

use super::elements::SolverParams;
use crate::spatial::{quat_to_mat, xlt, Motion, Vec3, Xform};
use nalgebra::DMatrix;

/// The joint types of the library (Featherstone table 4.1, plus MuJoCo's free joint convention).
///
/// Axes are unit vectors in the joint's frame (the successor body's frame, before the anchor
/// offset of [`Joint::pos`] is applied).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointType {
    /// One rotation about `axis`. q = angle (rad).
    Revolute { axis: Vec3 },
    /// One translation along `axis`. q = displacement (m).
    Prismatic { axis: Vec3 },
    /// Screw motion: rotation q about `axis` together with translation `pitch * q` along it.
    Helical { axis: Vec3, pitch: f64 },
    /// Rotation q1 about and translation q2 along the same `axis`.
    Cylindrical { axis: Vec3 },
    /// Planar joint of table 4.1: q = [theta, x, y], `X_J = rotz(theta) xlt([x, y, 0])`.
    Planar,
    /// Ball joint: q = unit quaternion (w, x, y, z), qdot = angular velocity in the body frame.
    Spherical,
    /// Six-dof joint with MuJoCo's convention: q = [position (3), quaternion (w, x, y, z)],
    /// qdot = [linear velocity of the body origin in the predecessor frame (3), body-frame
    /// angular velocity (3)]. The predecessor frame is the world frame when `X_tree` is the
    /// identity, as the MJCF reader makes it, so this is MuJoCo's free joint.
    Free,
    /// Zero dof: the body is welded to its parent.
    Fixed,
}

impl JointType {
    /// Number of position coordinates.
    pub fn nq(&self) -> usize {
        match self {
            JointType::Revolute { .. } | JointType::Prismatic { .. } | JointType::Helical { .. } => 1,
            JointType::Cylindrical { .. } => 2,
            JointType::Planar => 3,
            JointType::Spherical => 4,
            JointType::Free => 7,
            JointType::Fixed => 0,
        }
    }
    /// Number of velocity coordinates (degrees of freedom).
    pub fn nv(&self) -> usize {
        match self {
            JointType::Revolute { .. } | JointType::Prismatic { .. } | JointType::Helical { .. } => 1,
            JointType::Cylindrical { .. } => 2,
            JointType::Planar | JointType::Spherical => 3,
            JointType::Free => 6,
            JointType::Fixed => 0,
        }
    }
    /// A short lowercase name.
    pub fn name(&self) -> &'static str {
        match self {
            JointType::Revolute { .. } => "revolute",
            JointType::Prismatic { .. } => "prismatic",
            JointType::Helical { .. } => "helical",
            JointType::Cylindrical { .. } => "cylindrical",
            JointType::Planar => "planar",
            JointType::Spherical => "spherical",
            JointType::Free => "free",
            JointType::Fixed => "fixed",
        }
    }
    /// The zero configuration (identity quaternions for ball and free joints).
    pub fn neutral(&self) -> Vec<f64> {
        match self {
            JointType::Spherical => vec![1.0, 0.0, 0.0, 0.0],
            JointType::Free => vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
            j => vec![0.0; j.nq()],
        }
    }
}

/// A joint: its type, the anchor point `pos` in the successor's frame (MuJoCo's joint `pos`;
/// zero in Featherstone's own models), and the passive properties MuJoCo attaches to joints.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// Joint type and axis.
    pub jtype: JointType,
    /// Anchor point in the successor body's frame (the point the joint rotates about).
    pub pos: Vec3,
    /// Name (empty if none).
    pub name: String,
    /// Viscous damping coefficient applied to every dof: `qfrc_passive = -damping * qdot`.
    pub damping: f64,
    /// Armature (rotor) inertia added to the diagonal of H for every dof.
    pub armature: f64,
    /// Dry friction loss (used by constraint solvers; stored for completeness).
    pub frictionloss: f64,
    /// Spring stiffness towards `springref` (MuJoCo's `stiffness`).
    pub stiffness: f64,
    /// Whether `range` is enforced by a limit constraint.
    pub limited: bool,
    /// Joint range [lo, hi] (radians or metres).
    pub range: [f64; 2],
    /// Rest position of the spring of a hinge or slide joint (MuJoCo's `springref`, its
    /// `qpos_spring`): the spring force is `-stiffness (q - springref)`.
    pub springref: f64,
    /// Limit margin (MuJoCo's `jnt_margin`).
    pub margin: f64,
    /// Softness of the limit constraint (`solreflimit`, `solimplimit`).
    pub limit_params: SolverParams,
    /// Softness of the friction-loss constraint (`solreffriction`, `solimpfriction`).
    pub friction_params: SolverParams,
    /// The gravity compensation of the bodies this joint carries is applied through the
    /// actuators (MuJoCo's `jnt_actgravcomp`, `<joint actuatorgravcomp>`): added to
    /// `qfrc_actuator` at this joint's dofs, before [`Joint::actfrcrange`] clamps it, instead of
    /// to `qfrc_passive`.
    pub actgravcomp: bool,
    /// The range `qfrc_actuator` is clamped to at this joint's dof (MuJoCo's `jnt_actfrcrange`
    /// when `jnt_actfrclimited`; `<joint actuatorfrcrange>`), `None` for no clamp. Hinge and slide
    /// joints only: MuJoCo gives ball and free joints none.
    pub actfrcrange: Option<[f64; 2]>,
    /// `springdamper = (timeconst, dampratio)` not yet turned into `stiffness` and `damping`
    /// (MuJoCo's compiler does it from the joint's inertia at `qpos0`; here
    /// `mbd::mujoco::set_springdamper`, run by `mbd::mujoco::load`, which then clears it).
    pub springdamper: Option<[f64; 2]>,
}

impl Joint {
    /// A joint of type `jtype` with its anchor at the frame origin and no passive properties.
    pub fn new(jtype: JointType) -> Self {
        Joint {
            jtype,
            pos: Vec3::zeros(),
            name: String::new(),
            damping: 0.0,
            armature: 0.0,
            frictionloss: 0.0,
            stiffness: 0.0,
            limited: false,
            range: [0.0, 0.0],
            springref: 0.0,
            margin: 0.0,
            limit_params: SolverParams::default(),
            friction_params: SolverParams::default(),
            actgravcomp: false,
            actfrcrange: None,
            springdamper: None,
        }
    }
    /// Revolute joint about `axis` (normalized here).
    pub fn revolute(axis: Vec3) -> Self {
        Joint::new(JointType::Revolute { axis: axis.normalize() })
    }
    /// Prismatic joint along `axis` (normalized here).
    pub fn prismatic(axis: Vec3) -> Self {
        Joint::new(JointType::Prismatic { axis: axis.normalize() })
    }
}

/// The motion subspace `S` of a joint (6 x n_i, n_i <= 6), stored column by column as motion
/// vectors so that the algorithms never allocate.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Subspace {
    /// Columns; only the first `n` are meaningful.
    pub cols: [Motion; 6],
    /// Number of columns (degrees of freedom).
    pub n: usize,
}

impl Subspace {
    /// The motion `S qdot`.
    #[inline]
    pub fn mul(&self, qd: &[f64]) -> Motion {
        let mut m = Motion::zero();
        for k in 0..self.n {
            m += self.cols[k] * qd[k];
        }
        m
    }
    /// The explicit 6 x n matrix.
    pub fn to_matrix(&self) -> DMatrix<f64> {
        let mut s = DMatrix::zeros(6, self.n);
        for k in 0..self.n {
            s.column_mut(k).copy_from(&self.cols[k].to_vec6());
        }
        s
    }
}

/// What `jcalc` returns (Featherstone 4.4): the joint transform `X_J` (successor coordinates
/// from predecessor coordinates), the motion subspace `S` in successor coordinates, the joint
/// velocity `v_J = S qdot` and the velocity-product acceleration `c_J = S-ring qdot`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct JointCalc {
    /// Joint transform.
    pub x_j: Xform,
    /// Motion subspace.
    pub s: Subspace,
    /// Joint velocity.
    pub v_j: Motion,
    /// Velocity-product term of the joint acceleration.
    pub c_j: Motion,
}

// ANCHOR: jcalc
/// `jcalc(jtype, q, qdot)`: Featherstone table 4.1 and section 4.4, for every joint type of
/// [`JointType`]. `q` and `qd` are this joint's own slices of the generalized coordinates.
///
/// A joint anchored at `pos` (MuJoCo's joint `pos`) is the plain joint conjugated by the
/// translation to its anchor: `X_J' = xlt(-pos) X_J xlt(pos)`, and `S`, `v_J`, `c_J` are moved
/// from the anchor to the body origin by `xlt(-pos)`.
pub fn jcalc(joint: &Joint, q: &[f64], qd: &[f64]) -> JointCalc {
    let mut out = JointCalc::default();
    jcalc_into(joint, q, qd, &mut out);
    out
}

/// [`jcalc`] writing into existing storage. Only the first `n` columns of `out.s` are written
/// (the others keep whatever they held); every other field is overwritten. The dynamics
/// algorithms call this on storage in their [`Workspace`](crate::dynamics::Workspace), so that
/// the 500-byte result is neither zeroed nor copied for every body (see the Performance chapter).
#[inline]
pub fn jcalc_into(joint: &Joint, q: &[f64], qd: &[f64], out: &mut JointCalc) {
    out.x_j = jcalc_pos(joint, q, &mut out.s);
    let z = Vec3::zeros();
    let s = &out.s.cols;
    out.c_j = match joint.jtype {
        JointType::Planar => {
            // S-ring qdot: the translation columns rotate with the body.
            let v_lin = s[1].v * qd[1] + s[2].v * qd[2];
            Motion::new(z, -(Vec3::z() * qd[0]).cross(&v_lin))
        }
        JointType::Free => {
            // S-ring qdot = [0; -w x (R^T v)], R^T being X_J's rotation.
            let w = Vec3::new(qd[3], qd[4], qd[5]);
            let v_body = out.x_j.e * Vec3::new(qd[0], qd[1], qd[2]);
            Motion::new(z, -w.cross(&v_body))
        }
        _ => Motion::zero(),
    };
    out.v_j = out.s.mul(qd); // S is already moved to the body origin
    if joint.pos != Vec3::zeros() && !matches!(joint.jtype, JointType::Free) {
        out.c_j = xlt(-joint.pos).apply_motion(&out.c_j);
    }
}

/// The part of [`jcalc`] that depends on `q` alone: `S` (written into `subspace`) and `X_J`
/// (returned), both moved to the body origin for a joint anchored at `pos`. CRBA and the
/// com-based positions need nothing else, and skip the velocity terms' work this way. Always
/// inlined: `X_J` then stays in registers for the caller's next step, `X_J X_T`.
#[inline(always)]
pub fn jcalc_pos(joint: &Joint, q: &[f64], subspace: &mut Subspace) -> Xform {
    subspace.n = joint.jtype.nv();
    let s = &mut subspace.cols;
    let z = Vec3::zeros();
    let x_j = match joint.jtype {
        JointType::Revolute { axis } => {
            s[0] = Motion::new(axis, z);
            Xform::rot_axis(&axis, q[0])
        }
        JointType::Prismatic { axis } => {
            s[0] = Motion::new(z, axis);
            xlt(axis * q[0])
        }
        JointType::Helical { axis, pitch } => {
            s[0] = Motion::new(axis, axis * pitch);
            Xform::rot_axis(&axis, q[0]).compose(&xlt(axis * (pitch * q[0])))
        }
        JointType::Cylindrical { axis } => {
            s[0] = Motion::new(axis, z);
            s[1] = Motion::new(z, axis);
            Xform::rot_axis(&axis, q[0]).compose(&xlt(axis * q[1]))
        }
        JointType::Planar => {
            // X_J = rotz(theta) xlt([x, y, 0]); the translations are seen in the rotated frame.
            let (sn, cs) = q[0].sin_cos();
            s[0] = Motion::new(Vec3::z(), z);
            s[1] = Motion::new(z, Vec3::new(cs, -sn, 0.0));
            s[2] = Motion::new(z, Vec3::new(sn, cs, 0.0));
            Xform::rot_axis(&Vec3::z(), q[0]).compose(&xlt(Vec3::new(q[1], q[2], 0.0)))
        }
        JointType::Spherical => {
            for (k, col) in s.iter_mut().take(3).enumerate() {
                *col = Motion::new(Vec3::ith(k, 1.0), z);
            }
            let r = quat_to_mat(&[q[0], q[1], q[2], q[3]]);
            Xform::new(r.transpose(), z)
        }
        JointType::Free => {
            // qdot = [world linear velocity of the origin, body angular velocity]:
            // in body coordinates S = [0, 1; R^T, 0].
            let r = quat_to_mat(&[q[3], q[4], q[5], q[6]]);
            let rt = r.transpose();
            for k in 0..3 {
                s[k] = Motion::new(z, rt.column(k).into());
                s[k + 3] = Motion::new(Vec3::ith(k, 1.0), z);
            }
            Xform::new(rt, Vec3::new(q[0], q[1], q[2]))
        }
        JointType::Fixed => Xform::identity(),
    };
    if joint.pos != Vec3::zeros() && !matches!(joint.jtype, JointType::Free) {
        let to_origin = xlt(-joint.pos);
        for col in &mut subspace.cols[..subspace.n] {
            *col = to_origin.apply_motion(col);
        }
        return to_origin.compose(&x_j).compose(&xlt(joint.pos));
    }
    x_j
}
// ANCHOR_END: jcalc

// ANCHOR: integrate_joint
/// Integrates this joint's position coordinates `q` with velocity `qd` for time `h`
/// (MuJoCo's `mj_integratePos`): quaternions are advanced on the sphere with the body-frame
/// angular velocity, everything else by `q += h qd` (the planar joint's translation rates are in
/// the rotated frame, so it is integrated through its transform).
pub fn integrate_joint(jtype: &JointType, q: &mut [f64], qd: &[f64], h: f64) {
    use crate::spatial::quat_integrate;
    match jtype {
        JointType::Spherical => {
            let qn = quat_integrate(&[q[0], q[1], q[2], q[3]], &Vec3::new(qd[0], qd[1], qd[2]), h);
            q.copy_from_slice(&qn);
        }
        JointType::Free => {
            for k in 0..3 {
                q[k] += h * qd[k];
            }
            let qn = quat_integrate(&[q[3], q[4], q[5], q[6]], &Vec3::new(qd[3], qd[4], qd[5]), h);
            q[3..7].copy_from_slice(&qn);
        }
        _ => {
            for k in 0..q.len() {
                q[k] += h * qd[k];
            }
        }
    }
}
// ANCHOR_END: integrate_joint

/// The velocity that takes `q1` to `q2` in unit time for this joint (MuJoCo's
/// `mj_differentiatePos` with h = 1); the inverse of [`integrate_joint`] with h = 1.
pub fn difference_joint(jtype: &JointType, q1: &[f64], q2: &[f64], out: &mut [f64]) {
    use crate::spatial::quat_difference;
    match jtype {
        JointType::Spherical => {
            let d = quat_difference(&[q1[0], q1[1], q1[2], q1[3]], &[q2[0], q2[1], q2[2], q2[3]]);
            out.copy_from_slice(d.as_slice());
        }
        JointType::Free => {
            for k in 0..3 {
                out[k] = q2[k] - q1[k];
            }
            let d = quat_difference(&[q1[3], q1[4], q1[5], q1[6]], &[q2[3], q2[4], q2[5], q2[6]]);
            out[3..6].copy_from_slice(d.as_slice());
        }
        _ => {
            for k in 0..out.len() {
                out[k] = q2[k] - q1[k];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn all_joints() -> Vec<Joint> {
        let a = Vec3::new(0.3, -0.5, 0.8).normalize();
        let mut v = vec![
            Joint::new(JointType::Revolute { axis: a }),
            Joint::new(JointType::Prismatic { axis: a }),
            Joint::new(JointType::Helical { axis: a, pitch: 0.1 }),
            Joint::new(JointType::Cylindrical { axis: a }),
            Joint::new(JointType::Planar),
            Joint::new(JointType::Spherical),
            Joint::new(JointType::Free),
        ];
        let mut anchored = Joint::new(JointType::Revolute { axis: a });
        anchored.pos = Vec3::new(0.1, 0.2, -0.3);
        v.push(anchored);
        let mut ball = Joint::new(JointType::Spherical);
        ball.pos = Vec3::new(-0.2, 0.1, 0.05);
        v.push(ball);
        v
    }

    fn sample_q(j: &JointType) -> Vec<f64> {
        match j {
            JointType::Spherical => {
                let n = (0.9f64 * 0.9 + 0.1 + 0.04 + 0.09).sqrt();
                vec![0.9 / n, 0.1f64.sqrt() / n, -0.2 / n, 0.3 / n]
            }
            JointType::Free => {
                let n = (0.8f64 * 0.8 + 0.3 * 0.3 + 0.2 * 0.2 + 0.1 * 0.1).sqrt();
                vec![0.3, -0.1, 0.7, 0.8 / n, -0.3 / n, 0.2 / n, 0.1 / n]
            }
            j => (0..j.nq()).map(|k| 0.4 - 0.3 * k as f64).collect(),
        }
    }

    /// v_J and c_J agree with finite differences of X_J: the body velocity seen in the body frame
    /// is the derivative of the transform, and c_J is the derivative of S qdot at constant qdot.
    #[test]
    fn jcalc_velocities_match_finite_differences() {
        let h = 1e-6;
        for j in all_joints() {
            let q = sample_q(&j.jtype);
            let qd: Vec<f64> = (0..j.jtype.nv()).map(|k| 0.7 - 0.25 * k as f64).collect();
            let jc = jcalc(&j, &q, &qd);
            let mut qp = q.clone();
            integrate_joint(&j.jtype, &mut qp, &qd, h);
            let mut qm = q.clone();
            integrate_joint(&j.jtype, &mut qm, &qd, -h);
            let xp = jcalc(&j, &qp, &qd).x_j;
            let xm = jcalc(&j, &qm, &qd).x_j;
            // Body pose in predecessor coordinates: R = E^T, p = r. Body-frame velocity:
            // w = vee(R^T Rdot), v = R^T pdot.
            let (r0, _) = jc.x_j.pose();
            let (rp, pp) = xp.pose();
            let (rm, pm) = xm.pose();
            let rdot = (rp - rm) / (2.0 * h);
            let pdot = (pp - pm) / (2.0 * h);
            let wx = r0.transpose() * rdot;
            let w = Vec3::new(wx[(2, 1)], wx[(0, 2)], wx[(1, 0)]);
            let v = r0.transpose() * pdot;
            assert_relative_eq!(jc.v_j.w, w, epsilon = 1e-7);
            assert_relative_eq!(jc.v_j.v, v, epsilon = 1e-7);
            // c_J: derivative of S(q) qdot along the motion, with qdot fixed
            let vp = jcalc(&j, &qp, &qd).v_j;
            let vm = jcalc(&j, &qm, &qd).v_j;
            let cj = (vp - vm) * (0.5 / h);
            assert_relative_eq!(jc.c_j.to_vec6(), cj.to_vec6(), epsilon = 1e-7);
        }
    }

    /// `jcalc_into` on storage left over from other joints gives what a fresh `jcalc` gives, in
    /// the fields and columns that are defined.
    #[test]
    fn jcalc_into_reused_storage_matches_jcalc() {
        let mut out = JointCalc::default();
        let joints = all_joints();
        // every joint after every other one, in both orders
        for a in joints.iter().chain(joints.iter().rev()) {
            let q = sample_q(&a.jtype);
            let qd: Vec<f64> = (0..a.jtype.nv()).map(|k| 0.5 - 0.2 * k as f64).collect();
            jcalc_into(a, &q, &qd, &mut out);
            let fresh = jcalc(a, &q, &qd);
            assert_eq!(out.x_j, fresh.x_j);
            assert_eq!(out.v_j, fresh.v_j);
            assert_eq!(out.c_j, fresh.c_j);
            assert_eq!(out.s.n, fresh.s.n);
            assert_eq!(out.s.cols[..out.s.n], fresh.s.cols[..fresh.s.n]);
        }
    }

    #[test]
    fn difference_inverts_integration() {
        for j in all_joints() {
            let q = sample_q(&j.jtype);
            let qd: Vec<f64> = (0..j.jtype.nv()).map(|k| 0.3 + 0.2 * k as f64).collect();
            let mut q2 = q.clone();
            integrate_joint(&j.jtype, &mut q2, &qd, 1.0);
            let mut back = vec![0.0; qd.len()];
            difference_joint(&j.jtype, &q, &q2, &mut back);
            for k in 0..qd.len() {
                assert_relative_eq!(back[k], qd[k], epsilon = 1e-12);
            }
        }
    }
}
