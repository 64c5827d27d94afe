//! Table 8.1: the constraint-force subspace `T` and the position error of every loop-joint type.

use crate::model::JointType;
use crate::spatial::Xform;
use nalgebra::{DMatrix, DVector};

/// Unit 6-vector `e_i` (0-based index), angular part first.
fn e(i: usize) -> [f64; 6] {
    let mut v = [0.0; 6];
    v[i] = 1.0;
    v
}

fn columns(cols: &[[f64; 6]]) -> DMatrix<f64> {
    let mut t = DMatrix::zeros(6, cols.len());
    for (j, c) in cols.iter().enumerate() {
        for i in 0..6 {
            t[(i, j)] = c[i];
        }
    }
    t
}

// ANCHOR: loop_error
/// `(T, err) = loop_error(jtype, S X P)`: Featherstone table 8.1 (eqs. (8.23)-(8.27)), the
/// loop-joint counterpart of `jcalc`.
///
/// `x_sp = S X P = rot(E) xlt(r)` is the current transform from the joint's predecessor frame to
/// its successor frame; every joint moves about or along z. Returns
/// - `T` (6 x (6 - n)): the constraint-force subspace, columns in the order of the table
///   (angular part first), with `T^T Psi = 0` for the joint's motion subspace `Psi`;
/// - `err` (6 - n): the position error, zero exactly when `S X P` is a transform the joint
///   allows.
///
/// **Sign, scale and frame.** `err` is an approximate displacement of the successor frame away
/// from where the joint allows it to be, measured with P's axes: the small-angle rotation
/// `theta = 1/2 [E23 - E32, E31 - E13, E12 - E21]`, the tilt `(-E32, E31)` of S's z axis
/// (exact for any rotation about z), and the offset `r` of S's origin from P's, in P
/// coordinates. Its rate is `T^T (v_s - v_p)` when the velocities are expressed with P's axes at
/// **S's origin** (the frame P moved by `xlt(r)`, called P' in this module): exactly for the
/// translation rows, and at a closed loop for the rotation rows. [`super::loop_constraints`] therefore
/// expresses `T` in P'; for revolute, spherical and fixed joints P' is P once the loop is closed.
///
/// | type (axis z) | T columns | err |
/// |---|---|---|
/// | revolute | e1 e2 e4 e5 e6 | `[-E32, E31, r_x, r_y, r_z]` |
/// | prismatic | e1 e2 e3 e4 e5 | `[theta, r_x, r_y]` |
/// | helical, pitch p | e1 e2 e4 e5, (0 0 -p 0 0 1) | `[-E32, E31, r_x, r_y, r_z - p q]` |
/// | cylindrical | e1 e2 e4 e5 | `[-E32, E31, r_x, r_y]` |
/// | planar (rotate z, slide x y) | e1 e2 e6 | `[-E32, E31, r_z]` |
/// | spherical | e4 e5 e6 | `r` |
/// | fixed | e1 ... e6 | `[theta, r]` |
///
/// For the helical joint `q = atan2(E12, E11)` is taken on the branch (`+ 2 pi m`) nearest to
/// `r_z / p`, which makes the error continuous as the joint turns past pi. A free joint imposes
/// no constraint: the result is empty.
pub fn loop_error(jtype: &JointType, x_sp: &Xform) -> (DMatrix<f64>, DVector<f64>) {
    let m = &x_sp.e;
    let r = &x_sp.r;
    let tilt = [-m[(2, 1)], m[(2, 0)]];
    let theta = [
        0.5 * (m[(1, 2)] - m[(2, 1)]),
        0.5 * (m[(2, 0)] - m[(0, 2)]),
        0.5 * (m[(0, 1)] - m[(1, 0)]),
    ];
    let (cols, err): (Vec<[f64; 6]>, Vec<f64>) = match *jtype {
        JointType::Revolute { .. } => (
            vec![e(0), e(1), e(3), e(4), e(5)],
            vec![tilt[0], tilt[1], r.x, r.y, r.z],
        ),
        JointType::Prismatic { .. } => (
            vec![e(0), e(1), e(2), e(3), e(4)],
            vec![theta[0], theta[1], theta[2], r.x, r.y],
        ),
        JointType::Helical { pitch, .. } => {
            let mut q = m[(0, 1)].atan2(m[(0, 0)]);
            if pitch != 0.0 {
                let two_pi = 2.0 * std::f64::consts::PI;
                q += two_pi * ((r.z / pitch - q) / two_pi).round();
            }
            (
                vec![e(0), e(1), e(3), e(4), [0.0, 0.0, -pitch, 0.0, 0.0, 1.0]],
                vec![tilt[0], tilt[1], r.x, r.y, r.z - pitch * q],
            )
        }
        JointType::Cylindrical { .. } => (vec![e(0), e(1), e(3), e(4)], vec![tilt[0], tilt[1], r.x, r.y]),
        JointType::Planar => (vec![e(0), e(1), e(5)], vec![tilt[0], tilt[1], r.z]),
        JointType::Spherical => (vec![e(3), e(4), e(5)], vec![r.x, r.y, r.z]),
        JointType::Fixed => (
            (0..6).map(e).collect(),
            vec![theta[0], theta[1], theta[2], r.x, r.y, r.z],
        ),
        JointType::Free => (vec![], vec![]),
    };
    (columns(&cols), DVector::from_vec(err))
}
// ANCHOR_END: loop_error

/// The loop joint's motion subspace `Psi` (6 x n) in its own frame, axis z: the directions the
/// joint lets S move relative to P. `T^T Psi = 0` for the `T` of [`loop_error`].
pub fn loop_motion_subspace(jtype: &JointType) -> DMatrix<f64> {
    let cols: Vec<[f64; 6]> = match *jtype {
        JointType::Revolute { .. } => vec![e(2)],
        JointType::Prismatic { .. } => vec![e(5)],
        JointType::Helical { pitch, .. } => vec![[0.0, 0.0, 1.0, 0.0, 0.0, pitch]],
        JointType::Cylindrical { .. } => vec![e(2), e(5)],
        JointType::Planar => vec![e(2), e(3), e(4)],
        JointType::Spherical => vec![e(0), e(1), e(2)],
        JointType::Fixed => vec![],
        JointType::Free => (0..6).map(e).collect(),
    };
    columns(&cols)
}

// ANCHOR: active_basis
/// `T^a`: the active-force basis of a loop joint (Featherstone 8.6, table 8.3), with
/// `Psi^T T^a = 1`. We take `T^a = Psi (Psi^T Psi)^-1`, the choice orthogonal to the
/// constraint-force subspace; any other choice differs by constraint forces, which the
/// multipliers `lambda` absorb. `T^a tau^a_k` is the spatial force the joint's actuator exerts on
/// its successor (and, negated, on its predecessor), in the joint frame.
pub fn loop_active_basis(jtype: &JointType) -> DMatrix<f64> {
    let psi = loop_motion_subspace(jtype);
    let gram = psi.transpose() * &psi;
    // Psi has orthogonal columns for every type, so the Gram matrix is diagonal and positive
    let inv = DMatrix::from_diagonal(&gram.diagonal().map(|d| 1.0 / d));
    psi * inv
}
// ANCHOR_END: active_basis

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::{rotx, roty, rotz, xlt, Vec3};
    use approx::assert_relative_eq;

    fn all_types() -> Vec<JointType> {
        let z = Vec3::z();
        vec![
            JointType::Revolute { axis: z },
            JointType::Prismatic { axis: z },
            JointType::Helical { axis: z, pitch: 0.3 },
            JointType::Cylindrical { axis: z },
            JointType::Planar,
            JointType::Spherical,
            JointType::Fixed,
        ]
    }

    #[test]
    fn t_is_orthogonal_to_psi_and_active_basis_is_dual() {
        for jt in all_types() {
            let (t, err) = loop_error(&jt, &Xform::identity());
            let psi = loop_motion_subspace(&jt);
            assert_eq!(t.ncols() + psi.ncols(), 6, "{}", jt.name());
            assert_eq!(err.len(), t.ncols());
            assert!((t.transpose() * &psi).amax() < 1e-15);
            let ta = loop_active_basis(&jt);
            assert_relative_eq!(
                psi.transpose() * &ta,
                DMatrix::identity(psi.ncols(), psi.ncols()),
                epsilon = 1e-15
            );
            // T and Psi together span all of R^6
            let mut both = DMatrix::zeros(6, 6);
            both.columns_mut(0, t.ncols()).copy_from(&t);
            both.columns_mut(t.ncols(), psi.ncols()).copy_from(&psi);
            assert!(both.determinant().abs() > 1e-12);
        }
    }

    /// The error vanishes on every transform the joint allows (its own jcalc), for large motions,
    /// and grows linearly with a small disallowed displacement.
    #[test]
    fn error_vanishes_on_allowed_motions() {
        use crate::model::{jcalc, Joint};
        for jt in all_types() {
            let j = Joint::new(jt);
            let q: Vec<f64> = match jt {
                JointType::Spherical => {
                    let a = Vec3::new(0.3, -0.5, 0.8).normalize();
                    crate::spatial::quat_from_axis_angle(&a, 2.5).to_vec()
                }
                _ => (0..jt.nq()).map(|k| 2.9 + 0.7 * k as f64).collect(),
            };
            let x = jcalc(&j, &q, &vec![0.0; jt.nv()]).x_j;
            let (_, err) = loop_error(&jt, &x);
            assert!(err.amax() < 1e-14, "{}: {err}", jt.name());
            // a tilt away from z and an offset across it are disallowed by every type but the
            // spherical joint (which allows all rotations) and are seen by every type
            let bad = rotx(1e-4) * roty(-2e-4) * xlt(Vec3::new(0.0, 0.0, 0.0)) * x;
            let (_, err_bad) = loop_error(&jt, &bad);
            if !matches!(jt, JointType::Spherical) {
                assert!(err_bad.amax() > 0.5e-4, "{}", jt.name());
            }
        }
    }

    #[test]
    fn helical_error_is_continuous_past_pi() {
        let p = 0.2;
        let jt = JointType::Helical {
            axis: Vec3::z(),
            pitch: p,
        };
        for q in [3.0, 3.1, 3.2, 6.5, -4.0] {
            let x = rotz(q) * xlt(Vec3::new(0.0, 0.0, p * q + 1e-3));
            let (_, err) = loop_error(&jt, &x);
            assert_relative_eq!(err[4], 1e-3, epsilon = 1e-12);
        }
    }
}
