//! Table 8.4: the loop-constraint equation `K qdd = k + k_stab` in base coordinates.

use super::table::loop_error;
use crate::error::{check_vector, Error, Result};
use crate::kinematics::body_jacobian;
use crate::model::{jcalc, LoopJoint, Model};
use crate::spatial::{Force, Motion, Xform};
use nalgebra::{DMatrix, DVector};
use std::ops::Range;

/// The loop-constraint equation of a closed-loop system at one state (Featherstone 8.2-8.3,
/// eqs. (8.17), (8.21)-(8.23)): `K qdd = k + k_stab`, plus the position errors it stabilizes.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopSystem {
    /// `K` (n^c x n): row block `l` is `T_k^T (J_s(k) - J_p(k))`, in base coordinates.
    pub kmat: DMatrix<f64>,
    /// `k` (n^c): the velocity-product term, eq. (8.47).
    pub k: DVector<f64>,
    /// `k_stab` (n^c): Baumgarte's stabilization term, eq. (8.22); zero without stabilization.
    pub k_stab: DVector<f64>,
    /// Position (loop-closure) error of every loop, stacked (table 8.1).
    pub err: DVector<f64>,
    /// The rows of each loop joint in `kmat`, `k`, `k_stab` and `err`.
    pub rows: Vec<Range<usize>>,
}

impl LoopSystem {
    /// Number of constraints `n^c`.
    pub fn nc(&self) -> usize {
        self.k.len()
    }
    /// The right-hand side `k + k_stab`.
    pub fn rhs(&self) -> DVector<f64> {
        &self.k + &self.k_stab
    }
    /// The Euclidean norm of the stacked position error.
    pub fn err_norm(&self) -> f64 {
        self.err.norm()
    }
}

/// Checks every loop joint of the model (bodies exist, no self-loop, no free joint).
pub(crate) fn check_loops(model: &Model) -> Result<()> {
    for (k, lj) in model.loops.iter().enumerate() {
        lj.validate(model.nb, k)?;
    }
    Ok(())
}

/// Row ranges of the loop joints, in model order.
pub(crate) fn loop_rows(model: &Model) -> Vec<Range<usize>> {
    let mut rows = Vec::with_capacity(model.loops.len());
    let mut start = 0;
    for lj in &model.loops {
        rows.push(start..start + lj.nc());
        start += lj.nc();
    }
    rows
}

/// Total number of loop constraints `n^c` of the model.
pub fn loop_nc(model: &Model) -> usize {
    model.loops.iter().map(LoopJoint::nc).sum()
}

/// The geometry of one loop joint at the current configuration, from the body transforms
/// `x_0[i] = i X 0` (`x_0[0]` the identity).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopFrames {
    /// `S X P`, the argument of table 8.1.
    pub x_sp: Xform,
    /// `P' X 0`: P's axes at S's origin, the frame `T` is expressed in (see [`loop_error`]).
    pub x_p0: Xform,
}

pub(crate) fn loop_frames(lj: &LoopJoint, x_0: &[Xform]) -> LoopFrames {
    let p0 = lj.x_p.compose(&x_0[lj.pred]);
    let s0 = lj.x_s.compose(&x_0[lj.succ]);
    let x_sp = s0.compose(&p0.inverse());
    let x_p0 = crate::spatial::xlt(x_sp.r).compose(&p0);
    LoopFrames { x_sp, x_p0 }
}

/// The columns of `0T = 0X*_P' T`: the constraint-force basis in base coordinates.
pub(crate) fn base_t(t: &DMatrix<f64>, x_p0: &Xform) -> Vec<Force> {
    (0..t.ncols())
        .map(|c| {
            let col = t.column(c);
            let f = Force::new(
                crate::spatial::Vec3::new(col[0], col[1], col[2]),
                crate::spatial::Vec3::new(col[3], col[4], col[5]),
            );
            x_p0.inv_apply_force(&f)
        })
        .collect()
}

/// Per-body kinematics in base coordinates for table 8.4: `i X 0`, `0v_i`, `0a^vp_i` (with
/// `a_0 = 0`, no gravity) and the motion subspaces `0S_i`.
pub(crate) struct BaseKinematics {
    pub x_0: Vec<Xform>,
    pub v: Vec<Motion>,
    pub avp: Vec<Motion>,
    pub s: Vec<[Motion; 6]>,
}

pub(crate) fn base_kinematics(model: &Model, q: &[f64], qd: &[f64]) -> BaseKinematics {
    let n1 = model.nb + 1;
    let mut out = BaseKinematics {
        x_0: vec![Xform::identity(); n1],
        v: vec![Motion::zero(); n1],
        avp: vec![Motion::zero(); n1],
        s: vec![[Motion::zero(); 6]; n1],
    };
    // body-coordinate velocities and velocity-product accelerations
    let mut v_b = vec![Motion::zero(); n1];
    let mut a_b = vec![Motion::zero(); n1];
    for i in 1..=model.nb {
        let jc = jcalc(&model.joints[i], &q[model.qs(i)], &qd[model.dofs(i)]);
        let p = model.lambda[i];
        let x_up = jc.x_j.compose(&model.x_tree[i]);
        out.x_0[i] = x_up.compose(&out.x_0[p]);
        v_b[i] = x_up.apply_motion(&v_b[p]) + jc.v_j;
        a_b[i] = x_up.apply_motion(&a_b[p]) + jc.c_j + v_b[i].cross_motion(&jc.v_j);
        let x = &out.x_0[i];
        out.v[i] = x.inv_apply_motion(&v_b[i]);
        out.avp[i] = x.inv_apply_motion(&a_b[i]);
        for c in 0..jc.s.n {
            out.s[i][c] = x.inv_apply_motion(&jc.s.cols[c]);
        }
    }
    out
}

/// Checks a Baumgarte time constant.
pub(crate) fn check_t_stab(t_stab: Option<f64>) -> Result<()> {
    if let Some(ts) = t_stab {
        if !(ts.is_finite() && ts > 0.0) {
            return Err(Error::InvalidArgument {
                what: "t_stab".into(),
                why: format!("Baumgarte time constant T_stab = {ts} must be positive and finite"),
            });
        }
    }
    Ok(())
}

// ANCHOR: loop_constraints
/// `K`, `k` and `k_stab` by Featherstone's table 8.4 (eqs. (8.19)-(8.23), (8.47)), in base
/// coordinates:
/// 1. one pass over the tree: `i X 0`, `v_i`, `a^vp_i` (with `a_0 = 0`: gravity cancels in
///    `a_s - a_p`), then `0v_i`, `0a^vp_i`, `0S_i`;
/// 2. for each loop joint k: `S X P = X_S(k) s X 0 (p X 0)^-1 X_P(k)^-1`, `(T, err)` by
///    [`loop_error`], `0T = 0X*_P' T`;
/// 3. walk `i = p(k)`, `j = s(k)` toward the root until they meet: joints passed from the
///    successor side get `K_li = +0T^T 0S_i`, from the predecessor side `-0T^T 0S_i`;
/// 4. `k_l = -0T^T (0a_s - 0a_p + 0v_s x 0v_p)`;
/// 5. with `T_stab = Some(ts)` (Baumgarte, `alpha = beta = 1/ts`):
///    `k_stab,l = -(2/ts) 0T^T (0v_s - 0v_p) - (1/ts^2) err_l`.
///
/// `k` is exact on the velocity constraint `K qdot = 0` (where it is used); see [`loop_error`]
/// for the frame P' of `T`. Inputs are assumed valid ([`loop_constraints`] checks them).
pub fn loop_constraints_unchecked(model: &Model, q: &[f64], qd: &[f64], t_stab: Option<f64>) -> LoopSystem {
    let bk = base_kinematics(model, q, qd);
    let rows = loop_rows(model);
    let nc = loop_nc(model);
    let mut kmat = DMatrix::zeros(nc, model.nv);
    let mut k = DVector::zeros(nc);
    let mut k_stab = DVector::zeros(nc);
    let mut err = DVector::zeros(nc);
    for (l, lj) in model.loops.iter().enumerate() {
        let fr = loop_frames(lj, &bk.x_0);
        let (t, e) = loop_error(&lj.jtype, &fr.x_sp);
        let t0 = base_t(&t, &fr.x_p0);
        let r0 = rows[l].start;
        let (p, s) = (lj.pred, lj.succ);
        let (mut i, mut j) = (p, s);
        while i != j {
            let (body, sign) = if i > j { (i, -1.0) } else { (j, 1.0) };
            for (c, dof) in model.dofs(body).enumerate() {
                for (row, tc) in t0.iter().enumerate() {
                    kmat[(r0 + row, dof)] = sign * tc.dot(&bk.s[body][c]);
                }
            }
            if i > j {
                i = model.lambda[i];
            } else {
                j = model.lambda[j];
            }
        }
        let dv = bk.v[s] - bk.v[p];
        let acc = bk.avp[s] - bk.avp[p] + bk.v[s].cross_motion(&bk.v[p]);
        for (row, tc) in t0.iter().enumerate() {
            k[r0 + row] = -tc.dot(&acc);
            err[r0 + row] = e[row];
            if let Some(ts) = t_stab {
                k_stab[r0 + row] = -(2.0 / ts) * tc.dot(&dv) - e[row] / (ts * ts);
            }
        }
    }
    LoopSystem {
        kmat,
        k,
        k_stab,
        err,
        rows,
    }
}
// ANCHOR_END: loop_constraints

/// [`loop_constraints_unchecked`] after checking the state, the loop joints and `t_stab`.
pub fn loop_constraints(model: &Model, q: &[f64], qd: &[f64], t_stab: Option<f64>) -> Result<LoopSystem> {
    model.check_state(q, qd)?;
    check_loops(model)?;
    check_t_stab(t_stab)?;
    let sys = loop_constraints_unchecked(model, q, qd, t_stab);
    for (what, x) in [
        ("K", sys.kmat.as_slice()),
        ("k", sys.k.as_slice()),
        ("k_stab", sys.k_stab.as_slice()),
        ("err", sys.err.as_slice()),
    ] {
        crate::error::check_output(what, x)?;
    }
    Ok(sys)
}

/// Dense reference for `K` (eq. (8.17)): `K_l = 0T_k^T (0J_s(k) - 0J_p(k))` with the body
/// Jacobians of [`crate::kinematics::body_jacobian`] carried to base coordinates column by
/// column. Slow and obviously right; used to test [`loop_constraints`].
pub fn loop_jacobian_dense(model: &Model, q: &[f64]) -> Result<DMatrix<f64>> {
    check_vector("qpos", q, model.nq)?;
    check_loops(model)?;
    let kin = crate::kinematics::forward_kinematics(model, q)?;
    let rows = loop_rows(model);
    let mut kmat = DMatrix::zeros(loop_nc(model), model.nv);
    let base_jac = |b: usize| -> Result<DMatrix<f64>> {
        let mut j0 = DMatrix::zeros(6, model.nv);
        if b == 0 {
            return Ok(j0);
        }
        let jb = body_jacobian(model, q, b)?;
        for c in 0..model.nv {
            let col = jb.column(c);
            let m = Motion::from_vec6(&crate::spatial::Vec6::from_iterator(col.iter().cloned()));
            j0.column_mut(c).copy_from(&kin.x_0[b].inv_apply_motion(&m).to_vec6());
        }
        Ok(j0)
    };
    for (l, lj) in model.loops.iter().enumerate() {
        let fr = loop_frames(lj, &kin.x_0);
        let (t, _) = loop_error(&lj.jtype, &fr.x_sp);
        let t0 = base_t(&t, &fr.x_p0);
        let jl = base_jac(lj.succ)? - base_jac(lj.pred)?;
        for (row, tc) in t0.iter().enumerate() {
            for c in 0..model.nv {
                let m = Motion::from_vec6(&crate::spatial::Vec6::from_iterator(jl.column(c).iter().cloned()));
                kmat[(rows[l].start + row, c)] = tc.dot(&m);
            }
        }
    }
    Ok(kmat)
}
