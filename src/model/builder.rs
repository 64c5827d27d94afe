//! Building a [`Model`] body by body.

use super::{Joint, JointType, LoopJoint, Model, Options};
use crate::error::{Error, Result};
use crate::spatial::{Mat3, SpatialInertia, Vec3, Xform};
use nalgebra::DVector;

/// Builds a [`Model`] one body at a time, in an order where every parent comes before its
/// children (so `lambda(i) < i` holds by construction when parents are given as returned ids).
///
/// ```
/// use mbd::model::{Joint, ModelBuilder};
/// use mbd::spatial::{xlt, SpatialInertia, Vec3, Mat3};
/// let rod = SpatialInertia::from_mass_com_inertia(1.0, Vec3::new(0.5, 0.0, 0.0), Mat3::identity() * 0.01);
/// let mut b = ModelBuilder::new("double pendulum");
/// let b1 = b.add_body("upper", 0, Joint::revolute(Vec3::z()), xlt(Vec3::zeros()), rod);
/// b.add_body("lower", b1, Joint::revolute(Vec3::z()), xlt(Vec3::new(1.0, 0.0, 0.0)), rod);
/// let model = b.build().unwrap();
/// assert_eq!(model.lambda, vec![0, 0, 1]);
/// ```
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    name: String,
    lambda: Vec<usize>,
    joints: Vec<Joint>,
    x_tree: Vec<Xform>,
    inertia: Vec<SpatialInertia>,
    body_name: Vec<String>,
    qpos0: Vec<Option<Vec<f64>>>,
    /// `Some(k)` for the k-th mocap body ([`ModelBuilder::add_mocap_body`]).
    body_mocapid: Vec<Option<usize>>,
    /// The default pose of each mocap body.
    mocap_pose0: Vec<([f64; 3], [f64; 4])>,
    loops: Vec<LoopJoint>,
    /// The first body index given to [`ModelBuilder::set_qpos0`] that named no body (reported by
    /// [`ModelBuilder::build`]).
    bad_qpos0_body: Option<usize>,
    /// Options of the model being built.
    pub opt: Options,
}

impl ModelBuilder {
    /// An empty tree (only the base, body 0).
    pub fn new(name: &str) -> Self {
        ModelBuilder {
            name: name.into(),
            lambda: vec![0],
            joints: vec![Joint::new(JointType::Fixed)],
            x_tree: vec![Xform::identity()],
            inertia: vec![SpatialInertia::zero()],
            body_name: vec!["world".into()],
            qpos0: vec![None],
            body_mocapid: vec![None],
            mocap_pose0: Vec::new(),
            loops: Vec::new(),
            bad_qpos0_body: None,
            opt: Options::default(),
        }
    }

    /// Adds body `name` connected to `parent` by `joint`; `x_tree` goes from the parent's
    /// coordinates to the joint's predecessor frame. Returns the new body's index.
    pub fn add_body(
        &mut self,
        name: &str,
        parent: usize,
        joint: Joint,
        x_tree: Xform,
        inertia: SpatialInertia,
    ) -> usize {
        self.lambda.push(parent);
        self.joints.push(joint);
        self.x_tree.push(x_tree);
        self.inertia.push(inertia);
        self.body_name.push(name.into());
        self.qpos0.push(None);
        self.body_mocapid.push(None);
        self.lambda.len() - 1
    }

    /// Adds a mocap body `name` (MuJoCo's `<body mocap="true">`): a child of the base with a
    /// fixed joint, whose placement in the world is an input of each state (MuJoCo's
    /// `mocap_pos`, `mocap_quat`; [`Model::body_mocapid`]), at position `pos` and orientation
    /// `quat` (w, x, y, z) by default. Returns the new body's index; its mocap id is the number
    /// of mocap bodies added before it. [`ModelBuilder::build`] checks the pose.
    pub fn add_mocap_body(&mut self, name: &str, pos: [f64; 3], quat: [f64; 4], inertia: SpatialInertia) -> usize {
        let x_tree = super::mocap_xform(&pos, &quat);
        let i = self.add_body(name, 0, Joint::new(JointType::Fixed), x_tree, inertia);
        self.body_mocapid[i] = Some(self.mocap_pose0.len());
        self.mocap_pose0.push((pos, quat));
        i
    }

    /// Adds a loop joint (Featherstone 8.1) closing a kinematic loop on the tree built so far;
    /// returns its index in [`Model::loops`]. It is checked by [`ModelBuilder::build`].
    pub fn add_loop(&mut self, joint: LoopJoint) -> usize {
        self.loops.push(joint);
        self.loops.len() - 1
    }

    /// Sets the reference configuration of body `i`'s joint (default: zero, identity quaternions).
    /// Checked by [`ModelBuilder::build`]: an index that names no body added so far (0, the
    /// base, has no joint) makes it fail with [`Error::Unknown`], a `q` of the wrong length with
    /// [`Error::BadLength`], a bad value as [`Model::check_qpos`] says.
    pub fn set_qpos0(&mut self, i: usize, q: &[f64]) {
        match self.qpos0.get_mut(i) {
            Some(slot) if i > 0 => *slot = Some(q.to_vec()),
            _ => {
                self.bad_qpos0_body.get_or_insert(i);
            }
        }
    }

    /// Number of bodies added so far (not counting the base).
    pub fn nb(&self) -> usize {
        self.lambda.len() - 1
    }

    /// Finishes the model: computes the coordinate addresses and the dof-level parent array,
    /// then validates it (parent order, inertias, joint axes).
    pub fn build(self) -> Result<Model> {
        let nb = self.lambda.len() - 1;
        if let Some(i) = self.bad_qpos0_body {
            return Err(Error::Unknown {
                kind: "body index given to set_qpos0".into(),
                name: format!("{i} (the builder has bodies 1..={nb})"),
            });
        }
        let mut q_adr = vec![0; nb + 1];
        let mut v_adr = vec![0; nb + 1];
        let (mut nq, mut nv) = (0, 0);
        for i in 1..=nb {
            q_adr[i] = nq;
            v_adr[i] = nv;
            nq += self.joints[i].jtype.nq();
            nv += self.joints[i].jtype.nv();
        }
        // Check the parent order before anything indexes with it.
        for i in 1..=nb {
            if self.lambda[i] >= i {
                return Err(Error::BadParent {
                    body: i,
                    name: self.body_name[i].clone(),
                    parent: self.lambda[i],
                });
            }
        }
        let mut dof_body = Vec::with_capacity(nv);
        let mut dof_parent = Vec::with_capacity(nv);
        // last dof of each body's path to the root (None if the path has no dofs)
        let mut last_dof: Vec<Option<usize>> = vec![None; nb + 1];
        for i in 1..=nb {
            let mut prev = last_dof[self.lambda[i]];
            for k in 0..self.joints[i].jtype.nv() {
                dof_body.push(i);
                dof_parent.push(prev);
                prev = Some(v_adr[i] + k);
            }
            last_dof[i] = prev;
        }
        let mut qpos0 = DVector::zeros(nq);
        for i in 1..=nb {
            let q = self.qpos0[i].clone().unwrap_or_else(|| self.joints[i].jtype.neutral());
            if q.len() != self.joints[i].jtype.nq() {
                return Err(Error::BadLength {
                    what: format!("qpos0 of body '{}'", self.body_name[i]),
                    got: q.len(),
                    expected: self.joints[i].jtype.nq(),
                });
            }
            qpos0.rows_mut(q_adr[i], q.len()).copy_from_slice(&q);
        }
        // principal axes of each body's rotational inertia about its centre of mass
        let (mut body_iquat, mut body_inertia) = (Vec::with_capacity(nb + 1), Vec::with_capacity(nb + 1));
        for si in &self.inertia {
            let (q, d) = principal_axes(&si.inertia_at_com());
            body_iquat.push(q);
            body_inertia.push(d);
        }
        crate::sparse::check_parent(&dof_parent)?;
        let mut mj_body_name = self.body_name.clone();
        mj_body_name[0] = "world".into();
        let model = Model {
            name: self.name,
            nb,
            nq,
            nv,
            lambda: self.lambda,
            joints: self.joints,
            x_tree: self.x_tree,
            inertia: self.inertia,
            body_name: self.body_name,
            q_adr,
            v_adr,
            dof_body,
            dof_parent,
            subtree_dofs_cache: Default::default(),
            mj_layout_cache: Default::default(),
            mj_layout_tree_cache: Default::default(),
            simple_cache: Default::default(),
            dof_m0_cache: Default::default(),
            qpos0,
            opt: self.opt,
            geoms: Vec::new(),
            equality: Vec::new(),
            mj_body: (0..=nb).collect(),
            mj_body_last: (0..=nb).collect(),
            mj_body_name,
            mj_body_simple: vec![true; nb + 1],
            loops: self.loops,
            eq_params: Vec::new(),
            eq_active0: Vec::new(),
            body_iquat,
            body_inertia,
            body_gravcomp: vec![0.0; nb + 1],
            body_mocapid: self.body_mocapid,
            mocap_pos0: self.mocap_pose0.iter().map(|p| p.0).collect(),
            mocap_quat0: self.mocap_pose0.iter().map(|p| p.1).collect(),
            sites: Vec::new(),
            tendons: Vec::new(),
            actuators: Vec::new(),
            keyframes: Vec::new(),
            sensors: Vec::new(),
            contact_pairs: Vec::new(),
            contact_excludes: Vec::new(),
            meshes: Vec::new(),
            hfields: Vec::new(),
            materials: Vec::new(),
        };
        model.validate()?;
        Ok(model)
    }
}

/// MuJoCo's tolerance of its 3 x 3 eigen-decomposition (`kEigEPS` of `mjuu_eig3`): principal
/// moments closer than it are not reordered.
const EIG_EPS: f64 = 1e-12;

// ANCHOR: principal_axes
/// Principal moments and the quaternion of the principal axes of a rotational inertia (MuJoCo's
/// `body_inertia` and `body_iquat`), in MuJoCo's order: the moments decreasing, as MuJoCo's
/// compiler leaves them (`mjuu_eig3` sorts its Jacobi iteration's result by quarter turns, and
/// does not reorder two moments closer than 1e-12), and each axis the eigenvector with a
/// non-negative component along the same axis of the body frame (the third one's sign then makes
/// a rotation). The eigenvectors are nalgebra's symmetric eigen-decomposition, accurate to
/// rounding (MuJoCo's Jacobi iteration stops at a rotation angle of about `1e-6`). The order and
/// the signs matter beyond the physics: MuJoCo's simple bodies ([`crate::model::simple_bodies`])
/// need to know when the principal frame is the body frame itself, which for a diagonal inertia
/// means moments already in decreasing order. Identity and the diagonal if the matrix is not
/// finite or the bounded eigen-iteration does not converge (the model's validation reports it).
pub(crate) fn principal_axes(i: &Mat3) -> ([f64; 4], Vec3) {
    let fallback = ([1.0, 0.0, 0.0, 0.0], i.diagonal());
    if !i.iter().all(|x| x.is_finite()) {
        return fallback;
    }
    let Some(eig) = nalgebra::SymmetricEigen::try_new(*i, f64::EPSILON, 1000) else {
        return fallback;
    };
    // MuJoCo's bubble sort over the pairs (0, 1), (1, 2), (0, 1), swapping only clear inversions
    let mut order = [0usize, 1, 2];
    for j in [0, 1, 0] {
        if eig.eigenvalues[order[j]] + EIG_EPS < eig.eigenvalues[order[j + 1]] {
            order.swap(j, j + 1);
        }
    }
    let mut r = Mat3::from_fn(|row, k| eig.eigenvectors[(row, order[k])]);
    for k in 0..2 {
        if r[(k, k)] < 0.0 {
            r.column_mut(k).neg_mut();
        }
    }
    if r.determinant() < 0.0 {
        r.column_mut(2).neg_mut();
    }
    let ev = Vec3::new(
        eig.eigenvalues[order[0]],
        eig.eigenvalues[order[1]],
        eig.eigenvalues[order[2]],
    );
    (crate::spatial::mat_to_quat_with(&r), ev)
}
// ANCHOR_END: principal_axes

/// The rotation matrix of a quaternion by the products MuJoCo's compiler uses
/// (`mjuu_quat2mat`), exactly the identity for `(1, 0, 0, 0)`.
pub(crate) fn quat_to_mat_mj(q: &[f64; 4]) -> Mat3 {
    if *q == [1.0, 0.0, 0.0, 0.0] {
        return Mat3::identity();
    }
    let (q00, q01, q02, q03) = (q[0] * q[0], q[0] * q[1], q[0] * q[2], q[0] * q[3]);
    let (q11, q12, q13) = (q[1] * q[1], q[1] * q[2], q[1] * q[3]);
    let (q22, q23, q33) = (q[2] * q[2], q[2] * q[3], q[3] * q[3]);
    Mat3::new(
        q00 + q11 - q22 - q33,
        2.0 * (q12 - q03),
        2.0 * (q13 + q02),
        2.0 * (q12 + q03),
        q00 - q11 + q22 - q33,
        2.0 * (q23 - q01),
        2.0 * (q13 - q02),
        2.0 * (q23 + q01),
        q00 - q11 - q22 + q33,
    )
}

/// `q / |q|` as MuJoCo's compiler normalises (`mjuu_normvec`): left alone when `|q|^2 < mjEPS`
/// or `|q|` is within `mjEPS` of 1.
fn normalized(q: [f64; 4]) -> [f64; 4] {
    use crate::model::constants::mjEPS;
    let n2 = q.iter().fold(0.0, |s, x| s + x * x);
    if n2 < mjEPS {
        return q;
    }
    let n = n2.sqrt();
    if (n - 1.0).abs() > mjEPS {
        q.map(|x| x / n)
    } else {
        q
    }
}

/// `cos(pi/4)` as MuJoCo's source writes it (`0.707106781186548`, four units in the last place
/// above `1/sqrt(2)`): the quarter turns that sort the moments.
#[allow(clippy::approx_constant)]
const MJ_HALF_SQRT2: f64 = 0.707106781186548;

/// The Jacobi eigen-decomposition of a symmetric 3 x 3 matrix `I` that MuJoCo's compiler uses
/// for the frame of a mesh (`mjuu_eig3`): the frame is kept as a quaternion `q`; each step
/// forms `D = R(q)^T I R(q)`, picks its largest off-diagonal entry `(r, c)` (ties to the
/// earlier of `(0, 1)`, `(0, 2)`, `(1, 2)`), stops when it is below `1e-12`, and otherwise
/// turns the frame about the third axis by the angle that zeroes it (the 2 x 2 symmetric Schur
/// rotation: `tau = (D_cc - D_rr) / 2 D_rc`, `t = sign(tau) / (|tau| + sqrt(1 + tau^2))`,
/// `c = 1 / sqrt(1 + t^2)`, the quaternion `(sqrt(1 - s^2), -+s)` with
/// `s = sqrt((1 - c) / 2)`), at most 500 steps. The moments (the diagonal of the last `D`) are
/// then sorted decreasing by quarter turns of the frame, two moments closer than `1e-12` left
/// in place. Returns the quaternion and the moments.
///
/// The older source of `mjuu_eig3` also stops once the rotation is below ~1.4e-6 rad
/// (`c > 1 - 1e-12`); MuJoCo 4.0's compiler does not (its mesh frames are converged further:
/// with that stop the 116-triangle mesh of `tests/fixtures/models/ray_scene.xml` comes out
/// 2e-7 rad from 4.0's), so here the iteration only stops early when the rotation vanishes
/// (`c = 1`). The result agrees with 4.0's `mesh_quat` to 1e-10 on the test meshes (read in
/// `tests/ray.rs`). The frame matters, signs included: the mesh's vertices are stored in
/// single precision in it. [`principal_axes`] (exact to rounding, signs normalised) stays the
/// rule for bodies.
pub(crate) fn mj_eig3(i: &Mat3) -> ([f64; 4], Vec3) {
    // D = A B, each entry summed in the order of the inner index (`mjuu_mulmat`)
    let mul_mj = |a: &Mat3, b: &Mat3| {
        Mat3::from_fn(|i, j| a[(i, 0)] * b[(0, j)] + a[(i, 1)] * b[(1, j)] + a[(i, 2)] * b[(2, j)])
    };
    let mut q = [1.0, 0.0, 0.0, 0.0];
    let mut ev = i.diagonal();
    for _ in 0..500 {
        let r = quat_to_mat_mj(&q);
        let d = mul_mj(&mul_mj(&r.transpose(), i), &r);
        ev = d.diagonal();
        let (a01, a02, a12) = (d[(0, 1)].abs(), d[(0, 2)].abs(), d[(1, 2)].abs());
        let (rk, ck, rotk) = if a01 > a02 && a01 > a12 {
            (0, 1, 2)
        } else if a02 > a12 {
            (0, 2, 1)
        } else {
            (1, 2, 0)
        };
        if d[(rk, ck)].abs() < EIG_EPS {
            break;
        }
        let tau: f64 = (d[(ck, ck)] - d[(rk, rk)]) / (2.0 * d[(rk, ck)]);
        let t: f64 = if tau >= 0.0 {
            1.0 / (tau + (1.0 + tau * tau).sqrt())
        } else {
            -1.0 / (-tau + (1.0 + tau * tau).sqrt())
        };
        let c = 1.0 / (1.0 + t * t).sqrt();
        if c >= 1.0 {
            break;
        }
        let mut s = (0.5 - 0.5 * c).sqrt();
        if tau >= 0.0 {
            s = -s;
        }
        if rotk == 1 {
            s = -s;
        }
        let mut turn = [0.0; 4];
        turn[rotk + 1] = s;
        turn[0] = (1.0 - s * s).sqrt();
        q = normalized(normalized(crate::spatial::quat_mul(&q, &normalized(turn))));
    }
    for j in 0..3 {
        let j1 = j % 2;
        if ev[j1] + EIG_EPS < ev[j1 + 1] {
            ev.swap_rows(j1, j1 + 1);
            let mut turn = [MJ_HALF_SQRT2, 0.0, 0.0, 0.0];
            turn[(j1 + 2) % 3 + 1] = MJ_HALF_SQRT2;
            q = normalized(normalized(crate::spatial::quat_mul(&q, &turn)));
        }
    }
    (q, ev)
}
