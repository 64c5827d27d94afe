//! Featherstone 8.13: the sparse matrix method. Every body is free (six coordinates), every
//! joint, tree or loop, is a constraint, and the dynamics is one sparse symmetric system
//! (eq. (8.64)) in maximal coordinates:
//!
//! ```text
//! [ I       P T ] [  a      ]   [ P T^a tau - v x* I v + f^x ]
//! [ T^T P^T  0  ] [ -lambda ] = [ -Tdot^T P^T v  (+ k_stab)  ]
//! ```
//!
//! `I` (6 N_B square) holds the body inertias and `T` the joints' constraint-force subspaces,
//! both block diagonal; `P_ij = +1` (6 x 6 identity) if body i is the successor of joint j and
//! `-1` if it is the predecessor. The unknowns are the bodies' spatial accelerations `a` and the
//! joints' constraint forces `lambda`; all quantities are in base coordinates.
//!
//! The system is factored by the block `L D L^T` of [`crate::sparse::block`] in an order where
//! every joint follows one of its bodies: on a tree that is Baraff's zero-fill order, on a
//! ladder it is the banded order of figure 8.4, and the cost is `O(N)`.

use super::constraints::{base_kinematics, check_loops, check_t_stab, loop_frames};
use super::rnea::active_forces_base;
use super::table::loop_error;
use crate::error::{check_vector, Error, Result};
use crate::model::{jcalc, Model};
use crate::sparse::etree::{interleave, permute_pattern, After};
use crate::sparse::{BlockLdlt, BlockSymbolic, Multifrontal, OpCount};
use crate::spatial::{xlt, Force, Motion, Vec3, Vec6, Xform};
use nalgebra::{DMatrix, DVector};

/// A node of the body-joint graph of (8.64): a block row of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// Body `i` (1..=nb): six rows of accelerations.
    Body(usize),
    /// Tree joint `i` (between `lambda(i)` and `i`): `6 - n_i` constraint rows. Joints with six
    /// freedoms (free joints) impose nothing and have no node.
    TreeJoint(usize),
    /// Loop joint `k` (index into [`Model::loops`]): `n^c_k` constraint rows.
    LoopJoint(usize),
}

/// The order of the block rows of (8.64). Without pivoting, the block `L D L^T` needs every
/// leading block of the reordered matrix to be nonsingular.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// Bodies 1..=nb, then tree joints, then loop joints (the order (8.64) is written in).
    /// Valid for any properly constrained system; the joints fill in among themselves.
    Natural,
    /// Bodies from nb down to 1, every joint right after the **later** of its two bodies
    /// ([`interleave`] with [`After::Last`]). Valid for any properly constrained system (each
    /// leading block is the KKT matrix of a set of free bodies and joints that touch only them);
    /// on the ladder it is the banded order of figure 8.4.
    Banded,
    /// Bodies from nb down to 1, every joint right after the **first** of its bodies
    /// ([`After::First`]): Baraff's order, no fill on a tree. For a loop-free system only: a
    /// loop joint may then be eliminated while a body it pulls on is held by a joint to a body
    /// not yet eliminated, and meet a zero pivot.
    Baraff,
}

/// The structure of (8.64) for one model and ordering: the nodes, their sizes and the graph.
#[derive(Clone, Debug)]
pub struct MaximalStructure {
    /// The nodes in factorization order.
    pub nodes: Vec<Node>,
    /// Rows of every node, in factorization order.
    pub sizes: Vec<usize>,
    /// The block pattern (neighbours), in factorization order.
    pub adj: Vec<Vec<usize>>,
    /// Position of body i's node (`body_pos[0]` unused).
    pub body_pos: Vec<usize>,
}

/// The node list and graph of (8.64) in the natural order.
fn natural_structure(model: &Model) -> (Vec<Node>, Vec<usize>, Vec<Vec<usize>>) {
    let nb = model.nb;
    let mut nodes: Vec<Node> = (1..=nb).map(Node::Body).collect();
    let mut sizes = vec![6; nb];
    let mut edges = Vec::new();
    for i in 1..=nb {
        let nc = 6 - model.joints[i].jtype.nv();
        if nc > 0 {
            edges.push((nodes.len(), i, model.lambda[i]));
            nodes.push(Node::TreeJoint(i));
            sizes.push(nc);
        }
    }
    for (k, lj) in model.loops.iter().enumerate() {
        edges.push((nodes.len(), lj.succ, lj.pred));
        nodes.push(Node::LoopJoint(k));
        sizes.push(lj.nc());
    }
    let mut adj = vec![Vec::new(); nodes.len()];
    for (j, s, p) in edges {
        for b in [s, p] {
            if b != 0 {
                adj[j].push(b - 1);
                adj[b - 1].push(j);
            }
        }
    }
    (nodes, sizes, adj)
}

impl MaximalStructure {
    /// The structure of (8.64) for `model` in the given order.
    pub fn new(model: &Model, ordering: Ordering) -> Self {
        let (nodes, sizes, adj) = natural_structure(model);
        let perm: Vec<usize> = match ordering {
            Ordering::Natural => (0..nodes.len()).collect(),
            Ordering::Banded | Ordering::Baraff => {
                let bodies: Vec<usize> = (0..model.nb).rev().collect();
                let after = if ordering == Ordering::Banded {
                    After::Last
                } else {
                    After::First
                };
                interleave(&adj, &bodies, after)
            }
        };
        let adj = permute_pattern(&adj, &perm);
        let nodes: Vec<Node> = perm.iter().map(|&o| nodes[o]).collect();
        let sizes = perm.iter().map(|&o| sizes[o]).collect();
        let mut body_pos = vec![0; model.nb + 1];
        for (pos, n) in nodes.iter().enumerate() {
            if let Node::Body(b) = n {
                body_pos[*b] = pos;
            }
        }
        MaximalStructure {
            nodes,
            sizes,
            adj,
            body_pos,
        }
    }
}

/// An orthonormal basis of the complement of the columns of `s` (6 x n): the constraint-force
/// subspace `T` of a joint with motion subspace `S` (`T^T S = 0`), by Gram-Schmidt on S's
/// columns followed by the unit vectors.
fn complement(s: &[Vec6]) -> Vec<Vec6> {
    let mut basis: Vec<Vec6> = Vec::with_capacity(6);
    let mut out = Vec::with_capacity(6);
    let unit = |i: usize| {
        let mut e = Vec6::zeros();
        e[i] = 1.0;
        e
    };
    for (k, v) in s.iter().cloned().chain((0..6).map(unit)).enumerate() {
        let mut w = v;
        for b in &basis {
            w -= b * b.dot(&w);
        }
        let norm = w.norm();
        if norm > 1e-6 {
            basis.push(w / norm);
            if k >= s.len() {
                out.push(w / norm);
            }
        }
        if basis.len() == 6 {
            break;
        }
    }
    out
}

/// The sparse matrix method's system (8.64) for one model, as a value: the structure, the block
/// factorization (which also holds the assembled matrix) and the right-hand side.
#[derive(Clone, Debug)]
pub struct SparseMethod {
    /// Nodes, sizes and graph in factorization order.
    pub structure: MaximalStructure,
    /// The block `L D L^T` (symbolic and numeric parts).
    pub factor: BlockLdlt,
    /// The right-hand side of (8.64), overwritten by the solution `[a; -lambda]` in
    /// [`SparseMethod::solve_in_place`].
    pub rhs: Vec<f64>,
    /// The origin `p_i` of every body's frame `B_i` (base coordinates), set by
    /// [`SparseMethod::assemble`].
    pub origin: Vec<Vec3>,
}

impl SparseMethod {
    /// The structure and zero storage for `model` in the given order. Fails if a joint has
    /// armature (a joint-space inertia has no place in maximal coordinates).
    pub fn new(model: &Model, ordering: Ordering) -> Result<Self> {
        check_loops(model)?;
        for i in 1..=model.nb {
            if model.joints[i].armature != 0.0 {
                return Err(Error::BadJoint {
                    body: i,
                    name: model.body_name[i].clone(),
                    why: "armature has no counterpart in the sparse matrix method (maximal coordinates)".into(),
                });
            }
        }
        let structure = MaximalStructure::new(model, ordering);
        let symbolic = BlockSymbolic::new(&structure.sizes, &structure.adj)?;
        let n = symbolic.n();
        Ok(SparseMethod {
            structure,
            factor: BlockLdlt::new(symbolic),
            rhs: vec![0.0; n],
            origin: vec![Vec3::zeros(); model.nb + 1],
        })
    }

    /// Writes one joint-body block `sign * T` (body rows, joint columns) into the lower block
    /// triangle.
    fn put_coupling(&mut self, joint: usize, body: usize, sign: f64, t: &[Force]) {
        let (nj, transpose) = (t.len(), joint > body);
        let (r, c) = if transpose { (joint, body) } else { (body, joint) };
        let blk = self.factor.block_mut(r, c).expect("joint-body block is in the pattern");
        for (col, tc) in t.iter().enumerate() {
            let v = tc.to_vec6();
            for row in 0..6 {
                if transpose {
                    // block (joint, body): nj x 6, entry (col, row)
                    blk[row * nj + col] = sign * v[row];
                } else {
                    blk[col * 6 + row] = sign * v[row];
                }
            }
        }
    }

    // ANCHOR: assemble_8_64
    /// Assembles (8.64) at `(q, qd)` with tree joint forces `tau`, active loop-joint forces
    /// `tau_a` and Baumgarte's `t_stab` on the loop joints (tree joints are exact by
    /// construction). Inputs are assumed valid (see [`sparse_forward_dynamics`]).
    ///
    /// Body i's rows use the frame `B_i` with the base's axes at the body's origin `p_i` (the
    /// choice of frame per body is free in (8.64); base coordinates at a far-away origin would
    /// make the inertia blocks ill-conditioned, as MuJoCo's com-based frames avoid). Then `P_ij`
    /// is `+-` a short translation `xlt(p_s - p_i)` instead of `+-1`:
    /// - body i: `I_i` in `B_i`, and `f^x_i = I_i a_g - v_i x* I_i v_i` plus the joint forces
    ///   `+T^a tau` from its own joint, `-T^a tau` from its children's joints, `+-f^a_k` from
    ///   loop joints;
    /// - joint j between p and s, with `T_j` in `B_s`: the blocks `+T_j` (body s) and
    ///   `-X*_{p s} T_j` (body p), and the row `-Tdot_j^T (v_s - v_p) = T_j^T (v_p x v_s)` (T
    ///   moves with either body; the two derivatives agree on `T^T (v_s - v_p) = 0`), plus
    ///   `k_stab` on loop joints.
    pub fn assemble(
        &mut self,
        model: &Model,
        q: &[f64],
        qd: &[f64],
        tau: &[f64],
        tau_a: Option<&[f64]>,
        t_stab: Option<f64>,
    ) {
        self.factor.clear();
        self.rhs.fill(0.0);
        let bk = base_kinematics(model, q, qd);
        let a_g = Motion::new(Vec3::zeros(), model.opt.gravity);
        // p_i, the origin of B_i; v_i in B_i; i X B_i = rot(E_i)
        for i in 0..=model.nb {
            self.origin[i] = bk.x_0[i].r;
        }
        let p = self.origin.clone();
        let v: Vec<Motion> = (0..=model.nb).map(|i| xlt(p[i]).apply_motion(&bk.v[i])).collect();
        let rot = |i: usize| Xform::new(bk.x_0[i].e, Vec3::zeros());
        // B_to X B_from: a translation by p_to - p_from
        let shift = |to: usize, from: usize| xlt(p[to] - p[from]);
        let mut f_body = vec![Force::zero(); model.nb + 1];
        let pos = self.structure.body_pos.clone();
        for i in 1..=model.nb {
            let ib = model.inertia[i].transform_back(&rot(i));
            let blk = self.factor.block_mut(pos[i], pos[i]).expect("diagonal block");
            blk.copy_from_slice(ib.to_matrix().as_slice());
            f_body[i] += ib.mul_motion(&a_g) - v[i].cross_force(&ib.mul_motion(&v[i]));
        }
        // T^a = S (S^T S)^-1: the force on body i that does work tau_i on joint i (every joint,
        // also a free one, which has no constraint node)
        for i in 1..=model.nb {
            let (qs, vs) = (model.qs(i), model.dofs(i));
            let jc = jcalc(&model.joints[i], &q[qs], &qd[vs.clone()]);
            let s_mat = jc.s.to_matrix();
            if s_mat.ncols() == 0 {
                continue;
            }
            let gram = s_mat.transpose() * &s_mat;
            if let Some(gi) = gram.try_inverse() {
                let f6 = s_mat * gi * DVector::from_column_slice(&tau[vs]);
                let fa = rot(i).inv_apply_force(&Force::from_vec6(&Vec6::from_iterator(f6.iter().cloned())));
                let lam = model.lambda[i];
                f_body[lam] -= shift(lam, i).apply_force(&fa);
                f_body[i] += fa;
            }
        }
        let mut t_cols: Vec<Force> = Vec::with_capacity(6);
        let mut t_pred: Vec<Force> = Vec::with_capacity(6);
        for jn in 0..self.structure.nodes.len() {
            t_cols.clear();
            let (s, pr, stab) = match self.structure.nodes[jn] {
                Node::Body(_) => continue,
                Node::TreeJoint(i) => {
                    let (qs, vs) = (model.qs(i), model.dofs(i));
                    let jc = jcalc(&model.joints[i], &q[qs], &qd[vs]);
                    let s_cols: Vec<Vec6> = (0..jc.s.n).map(|c| jc.s.cols[c].to_vec6()).collect();
                    for t in complement(&s_cols) {
                        t_cols.push(rot(i).inv_apply_force(&Force::from_vec6(&t)));
                    }
                    (i, model.lambda[i], None)
                }
                Node::LoopJoint(k) => {
                    let lj = &model.loops[k];
                    let fr = loop_frames(lj, &bk.x_0);
                    let (t, e) = loop_error(&lj.jtype, &fr.x_sp);
                    // T in P' coordinates, carried to B_s (P' X B_s = P' X 0 * 0 X B_s)
                    let x = fr.x_p0.compose(&xlt(-p[lj.succ]));
                    for c in 0..t.ncols() {
                        let col = Vec6::from_iterator(t.column(c).iter().cloned());
                        t_cols.push(x.inv_apply_force(&Force::from_vec6(&col)));
                    }
                    (lj.succ, lj.pred, t_stab.map(|ts| (ts, e)))
                }
            };
            let off = self.factor.symbolic.offsets[jn];
            let v_p = shift(s, pr).apply_motion(&v[pr]);
            let dv = v[s] - v_p;
            let vpvs = v_p.cross_motion(&v[s]);
            for (r, tc) in t_cols.iter().enumerate() {
                self.rhs[off + r] = tc.dot(&vpvs);
                if let Some((ts, e)) = &stab {
                    self.rhs[off + r] += -(2.0 / ts) * tc.dot(&dv) - e[r] / (ts * ts);
                }
            }
            t_pred.clear();
            t_pred.extend(t_cols.iter().map(|t| shift(pr, s).apply_force(t)));
            let (cols, cols_p) = (t_cols.clone(), t_pred.clone());
            if s != 0 {
                self.put_coupling(jn, pos[s], 1.0, &cols);
            }
            if pr != 0 {
                self.put_coupling(jn, pos[pr], -1.0, &cols_p);
            }
        }
        if let Some(ta) = tau_a {
            for (lj, fa) in model.loops.iter().zip(active_forces_base(model, &bk.x_0, ta)) {
                f_body[lj.succ] += xlt(p[lj.succ]).apply_force(&fa);
                f_body[lj.pred] -= xlt(p[lj.pred]).apply_force(&fa);
            }
        }
        for i in 1..=model.nb {
            let off = self.factor.symbolic.offsets[pos[i]];
            self.rhs[off..off + 6].copy_from_slice(f_body[i].to_vec6().as_slice());
        }
    }
    // ANCHOR_END: assemble_8_64

    /// Factors the assembled matrix and solves for `[a; -lambda]` in place of the right-hand
    /// side, counting operations.
    pub fn solve_in_place(&mut self, ops: &mut OpCount) -> Result<()> {
        self.factor.factor_in_place(ops)?;
        self.factor.solve_mut(&mut self.rhs, ops);
        Ok(())
    }

    /// A block multifrontal factorization ([`crate::sparse::multifrontal`], the machinery of the
    /// chapter "Sparse direct solves for SPOOK") on this system's structure and order, for
    /// [`SparseMethod::solve_multifrontal_in_place`]. Build it once; it holds its own storage.
    pub fn multifrontal(&self) -> Multifrontal {
        Multifrontal::new(self.factor.symbolic.clone())
    }

    /// [`SparseMethod::solve_in_place`] by the block multifrontal method: `mf` (from
    /// [`SparseMethod::multifrontal`]) factors the assembled matrix, which stays in
    /// [`SparseMethod::factor`], and solves for `[a; -lambda]` in place of the right-hand side.
    /// The same factor as the right-looking kernel, organised by fronts along the elimination
    /// tree. Errors: a zero pivot ([`Error::ZeroPivot`]), an `mf` of another structure
    /// ([`Error::BadLength`]).
    pub fn solve_multifrontal_in_place(&mut self, mf: &mut Multifrontal, ops: &mut OpCount) -> Result<()> {
        mf.factor_from(&self.factor.values, ops)?;
        mf.solve_mut(&mut self.rhs, ops);
        Ok(())
    }

    /// The spatial acceleration of every body (base coordinates; entry 0 the base, zero) from
    /// the solution of [`SparseMethod::solve_in_place`] (which is in the frames `B_i`).
    pub fn accelerations(&self, model: &Model) -> Vec<Motion> {
        let mut out = vec![Motion::zero(); model.nb + 1];
        for (i, a) in out.iter_mut().enumerate().skip(1) {
            let off = self.factor.symbolic.offsets[self.structure.body_pos[i]];
            let a_b = Motion::from_vec6(&Vec6::from_column_slice(&self.rhs[off..off + 6]));
            *a = xlt(self.origin[i]).inv_apply_motion(&a_b);
        }
        out
    }

    /// The assembled matrix of (8.64) as a dense symmetric matrix (before factoring), in the
    /// structure's order; for spy plots and tests.
    pub fn dense_matrix(&self) -> DMatrix<f64> {
        let sym = &self.factor.symbolic;
        let n = sym.n();
        let mut a = DMatrix::zeros(n, n);
        for j in 0..sym.nblocks() {
            let mut blocks = vec![(j, sym.diag_at[j])];
            blocks.extend(sym.pattern[j].iter().zip(&sym.off_at[j]).map(|(&i, &at)| (i, at)));
            for (i, at) in blocks {
                let (si, sj) = (sym.sizes[i], sym.sizes[j]);
                for c in 0..sj {
                    for r in 0..si {
                        if i == j && r < c {
                            continue;
                        }
                        let v = self.factor.values[at + c * si + r];
                        a[(sym.offsets[i] + r, sym.offsets[j] + c)] = v;
                        a[(sym.offsets[j] + c, sym.offsets[i] + r)] = v;
                    }
                }
            }
        }
        a
    }
}

/// The result of [`sparse_forward_dynamics`].
#[derive(Clone, Debug)]
pub struct SparseSolution {
    /// Spatial acceleration of every body in base coordinates (entry 0: the base, zero).
    pub a: Vec<Motion>,
    /// Operations of the factorization and solve.
    pub ops: OpCount,
    /// Number of fill blocks of the factor.
    pub fill_blocks: usize,
}

/// Closed-loop forward dynamics by the sparse matrix method (Featherstone 8.13): assemble
/// (8.64), factor, solve; returns the body accelerations. `tau` are the tree joint forces,
/// `tau_a` the active loop-joint forces, `t_stab` Baumgarte's time constant. The loop
/// constraints must be independent (properly constrained, `rank K = n^c`), as the method
/// assumes; otherwise the factorization meets a zero pivot ([`Error::ZeroPivot`]).
pub fn sparse_forward_dynamics(
    model: &Model,
    q: &[f64],
    qd: &[f64],
    tau: &[f64],
    tau_a: Option<&[f64]>,
    t_stab: Option<f64>,
    ordering: Ordering,
) -> Result<SparseSolution> {
    model.check_state(q, qd)?;
    check_vector("tau", tau, model.nv)?;
    check_t_stab(t_stab)?;
    if let Some(ta) = tau_a {
        check_vector("tau_a (active loop-joint forces)", ta, super::loop_active_len(model))?;
    }
    let mut sm = SparseMethod::new(model, ordering)?;
    sm.assemble(model, q, qd, tau, tau_a, t_stab);
    let mut ops = OpCount::default();
    sm.solve_in_place(&mut ops)?;
    Ok(SparseSolution {
        a: sm.accelerations(model),
        ops,
        fill_blocks: sm.factor.symbolic.fill_blocks(),
    })
}

/// The spatial accelerations of the bodies (base coordinates, true accelerations: gravity is
/// not folded into the base) for joint accelerations `qdd`: `a_i = a_lambda(i) + S_i qdd_i +
/// c_J + v_i x v_J` carried to base coordinates. How the spanning-tree result is compared with
/// the sparse matrix method's.
pub fn body_accelerations(model: &Model, q: &[f64], qd: &[f64], qdd: &[f64]) -> Result<Vec<Motion>> {
    model.check_state(q, qd)?;
    check_vector("qacc", qdd, model.nv)?;
    let bk = base_kinematics(model, q, qd);
    let mut a_b = vec![Motion::zero(); model.nb + 1];
    let mut out = vec![Motion::zero(); model.nb + 1];
    for i in 1..=model.nb {
        let vs = model.dofs(i);
        let jc = jcalc(&model.joints[i], &q[model.qs(i)], &qd[vs.clone()]);
        let x_up = jc.x_j.compose(&model.x_tree[i]);
        a_b[i] = x_up.apply_motion(&a_b[model.lambda[i]]) + jc.s.mul(&qdd[vs]);
        out[i] = bk.avp[i] + bk.x_0[i].inv_apply_motion(&a_b[i]);
    }
    Ok(out)
}

// ANCHOR: spanning_tree_counted
/// The spanning-tree method (Featherstone 8.5, method 2) with every operation counted, for the
/// cost comparison of 8.13: `H = L^T L` on the parent array, `Y = L^-T K^T`, `z = L^-T tau'`,
/// `A = Y^T Y` (the lower triangle, dense), `A = R R^T` by Cholesky, `lambda = A^-1 (rhs - Y^T
/// z)`, `qdd = H^-1 (tau' + K^T lambda)`. Assumes `rank K = n^c` and valid sizes; returns `qdd`.
/// On a ladder `n^c = 3N`, and `Y^T Y` and the Cholesky factor of `A` cost `O(N^3)`.
pub fn spanning_tree_counted(
    h: &DMatrix<f64>,
    parent: &[Option<usize>],
    tau_prime: &DVector<f64>,
    kmat: &DMatrix<f64>,
    rhs: &DVector<f64>,
    ops: &mut OpCount,
) -> Result<DVector<f64>> {
    let (n, nc) = (h.nrows(), kmat.nrows());
    let mut l = h.clone();
    crate::sparse::ltl(&mut l, parent, ops)?;
    let mut y = DMatrix::zeros(n, nc);
    let mut col = vec![0.0; n];
    for i in 0..nc {
        for (c, v) in col.iter_mut().enumerate() {
            *v = kmat[(i, c)];
        }
        crate::sparse::solve_lt(&l, parent, false, &mut col, ops)?;
        y.column_mut(i).copy_from_slice(&col);
    }
    let mut z = tau_prime.as_slice().to_vec();
    crate::sparse::solve_lt(&l, parent, false, &mut z, ops)?;
    // A = Y^T Y (lower triangle) and b = rhs - Y^T z
    let mut a = DMatrix::zeros(nc, nc);
    let mut b = rhs.clone();
    for j in 0..nc {
        for i in j..nc {
            a[(i, j)] = y.column(i).dot(&y.column(j));
        }
        b[j] -= y.column(j).dot(&DVector::from_column_slice(&z));
    }
    ops.madd += n * nc * (nc + 1) / 2 + n * nc;
    // Cholesky A = R R^T in place (lower), then the two triangular solves
    for j in 0..nc {
        for k in 0..j {
            let rjk = a[(j, k)];
            for i in j..nc {
                a[(i, j)] -= a[(i, k)] * rjk;
            }
            ops.madd += nc - j;
        }
        let d = a[(j, j)];
        if !(d > 0.0) {
            return Err(Error::NotPositiveDefinite {
                what: "K H^-1 K^T".into(),
                dof: j,
                value: d,
            });
        }
        let r = d.sqrt();
        ops.sqrt += 1;
        for i in j..nc {
            a[(i, j)] /= r;
        }
        ops.div += nc - j;
    }
    for i in 0..nc {
        for k in 0..i {
            b[i] -= a[(i, k)] * b[k];
        }
        b[i] /= a[(i, i)];
    }
    for i in (0..nc).rev() {
        for k in i + 1..nc {
            b[i] -= a[(k, i)] * b[k];
        }
        b[i] /= a[(i, i)];
    }
    ops.madd += nc * nc;
    ops.div += 2 * nc;
    let f = tau_prime + kmat.transpose() * &b;
    ops.madd += n * nc;
    crate::sparse::solve_ltl(&l, parent, f.as_slice(), ops)
}
// ANCHOR_END: spanning_tree_counted
