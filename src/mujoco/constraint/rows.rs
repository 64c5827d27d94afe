//! The row builder shared by the row types (MuJoCo's `mj_addConstraint`) and the per-row
//! parameters computed once all rows exist (`mj_makeImpedance`, `mj_referenceConstraint`).

use nalgebra::Matrix3xX;

use super::impedance::{impedance, regularizer, sanitize, stiffness_damping, SolParams, SolrefWarning};
use super::{Efc, EfcType};
use crate::model::constants::mjMINVAL;
use crate::model::Cone;
use crate::mujoco::collision::MjContact;

/// Scratch Jacobians (3 x nv each) reused by every row: no allocation per row.
pub(crate) struct Scratch {
    pub p1: Matrix3xX<f64>,
    pub r1: Matrix3xX<f64>,
    pub p2: Matrix3xX<f64>,
    pub r2: Matrix3xX<f64>,
    /// 16 rows of nv, row-major: a group's rows (up to the 10 of a condim-6 pyramid) and a
    /// contact's 6 rows of `S`.
    pub rows: Vec<f64>,
    /// A contact's two paths of bodies, the union of their dofs (increasing) and on which
    /// path each lies ([`super::jacobian::chain_union`]).
    pub bodies: Vec<usize>,
    pub chains: Vec<usize>,
    pub side: Vec<u8>,
    /// The row groups and `A-hat` of the last call, kept for their storage.
    groups: Vec<Group>,
    diag: Vec<f64>,
    /// `qvel` gathered on a contact's columns ([`Rows::reference`]).
    pub qv: Vec<f64>,
}

impl Scratch {
    pub fn new(nv: usize) -> Self {
        Scratch {
            p1: Matrix3xX::zeros(nv),
            r1: Matrix3xX::zeros(nv),
            p2: Matrix3xX::zeros(nv),
            r2: Matrix3xX::zeros(nv),
            rows: vec![0.0; 16 * nv],
            bodies: Vec::with_capacity(2 * nv),
            chains: Vec::with_capacity(2 * nv),
            side: Vec::with_capacity(2 * nv),
            groups: Vec::new(),
            diag: Vec::new(),
            qv: Vec::with_capacity(nv),
        }
    }
}

/// How a connect or weld group gets its `Jdot v` term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum GroupKind {
    /// Rows whose impedance uses their own `efc_pos`.
    Plain,
    /// A connect (impedance from the norm of its 3 residuals).
    Connect,
    /// A weld (norm of its 6 residuals).
    Weld,
}

/// One constraint's block of consecutive rows, sharing an impedance.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub start: usize,
    pub n: usize,
    pub kind: GroupKind,
    pub params: SolParams,
}

/// The rows under construction.
pub(crate) struct Rows {
    pub nv: usize,
    pub efc: Efc,
    pub groups: Vec<Group>,
    /// `A-hat` of every row, before `mj_makeImpedance` adjusts it.
    pub diag: Vec<f64>,
    /// How many of `efc.warnings` this call has written: the strings after them are the last
    /// call's, kept to be written again (no allocation when the same rows warn again) and
    /// dropped by [`Rows::finish`] if no row needs them.
    nwarn: usize,
}

/// One row with its own impedance (see [`Rows::add_one`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OneRow {
    pub efc_type: EfcType,
    pub id: usize,
    pub pos: f64,
    pub margin: f64,
    pub frictionloss: f64,
    /// `A-hat`.
    pub diag: f64,
}

/// One row group to add (see [`Rows::add`]).
pub(crate) struct NewGroup<'a> {
    pub efc_type: EfcType,
    pub id: usize,
    /// `n * nv` numbers, row-major.
    pub jac: &'a [f64],
    pub pos: &'a [f64],
    pub margin: &'a [f64],
    pub frictionloss: f64,
    pub diag: &'a [f64],
    pub kind: GroupKind,
    pub params: SolParams,
}

impl Rows {
    /// Rows to be written into `efc`'s storage (emptied, its capacity kept) for the contacts
    /// `contacts`, with the group storage of `s`; [`Rows::finish`] gives both back.
    pub fn reuse(nv: usize, mut efc: Efc, contacts: Vec<MjContact>, s: &mut Scratch) -> Self {
        // the last call's warning strings are kept to be written again
        let warnings = std::mem::take(&mut efc.warnings);
        efc.clear(nv);
        efc.warnings = warnings;
        efc.contacts = contacts;
        let mut groups = std::mem::take(&mut s.groups);
        groups.clear();
        let mut diag = std::mem::take(&mut s.diag);
        diag.clear();
        Rows {
            nv,
            efc,
            groups,
            diag,
            nwarn: 0,
        }
    }

    /// The finished rows; the group storage goes back to `s`.
    pub fn finish(self, s: &mut Scratch) -> Efc {
        s.groups = self.groups;
        s.diag = self.diag;
        let mut efc = self.efc;
        efc.warnings.truncate(self.nwarn);
        efc
    }

    // ANCHOR: add_constraint
    /// MuJoCo's `mj_addConstraint`: appends a group of rows unless it is not a contact and its
    /// Jacobian is zero (a constraint no dof can move). Returns whether rows were added.
    pub fn add(&mut self, g: NewGroup) -> bool {
        self.add_in_cols(g, None)
    }
    // ANCHOR_END: add_constraint

    /// [`Rows::add`] for a group whose Jacobian can be nonzero only in the columns `cols`
    /// (increasing; `None`: any column): its sparse rows are gathered from those columns.
    pub fn add_in_cols(&mut self, g: NewGroup, cols: Option<&[usize]>) -> bool {
        if !is_contact(g.efc_type) && g.jac.iter().all(|x| *x == 0.0) {
            return false;
        }
        let n = g.pos.len();
        let nv = self.nv;
        for row in g.jac[..n * nv].chunks_exact(nv.max(1)).take(n) {
            match cols {
                Some(cols) => self.efc.j.push_row_in_cols(row, cols),
                None => self.efc.j.push_dense_row(row.iter().copied()),
            }
        }
        self.push_group(g, n);
        true
    }

    // ANCHOR: add_on_cols
    /// [`Rows::add`] for a contact's group of `n = g.pos.len()` rows on the columns `cols` only
    /// (increasing, the dofs of the two chains; the other columns are zero): `jac` writes the
    /// `n x cols.len()` numbers, row-major, straight into the rows' storage ([`Efc::j`]'s
    /// `values`, zeroed), with no copy from scratch; `g.jac` is not read. Every row keeps all
    /// of `cols`, zeros included: MuJoCo's structural pattern of a contact row (the dofs of the
    /// two chains), which lets the solvers' row blocks, and [`Rows::reference`], take the
    /// group's rows as sharing their columns. Contacts are never skipped.
    pub fn add_on_cols(&mut self, g: NewGroup, cols: &[usize], jac: impl FnOnce(&mut [f64])) {
        let n = g.pos.len();
        let r = &mut self.efc.j;
        let start = r.values.len();
        r.values.resize(start + n * cols.len(), 0.0);
        jac(&mut r.values[start..]);
        for _ in 0..n {
            r.colind.extend_from_slice(cols);
            r.rowadr.push(r.colind.len());
        }
        self.push_group(g, n);
    }
    // ANCHOR_END: add_on_cols

    /// The per-row numbers and the group record of `n` rows whose Jacobian is stored.
    fn push_group(&mut self, g: NewGroup, n: usize) {
        let start = self.efc.nefc();
        let e = &mut self.efc;
        e.efc_type.extend(std::iter::repeat_n(g.efc_type, n));
        e.efc_id.extend(std::iter::repeat_n(g.id, n));
        e.pos.extend_from_slice(&g.pos[..n]);
        e.margin.extend_from_slice(&g.margin[..n]);
        e.frictionloss.extend(std::iter::repeat_n(g.frictionloss, n));
        self.diag.extend_from_slice(&g.diag[..n]);
        match g.efc_type {
            EfcType::Equality => e.ne += n,
            EfcType::FrictionDof | EfcType::FrictionTendon => e.nf += n,
            EfcType::LimitJoint | EfcType::LimitTendon => e.nl += n,
            _ => {}
        }
        self.groups.push(Group {
            start,
            n,
            kind: g.kind,
            params: g.params,
        });
    }

    /// [`Rows::add`] for a group of one row with its own impedance and sanitized parameters
    /// `params` (a friction-loss row, one side of a limit, a joint or tendon equality): the row's
    /// Jacobian is written by `jac` into a zeroed scratch row of `s`.
    pub fn add_one(&mut self, s: &mut Scratch, r: OneRow, params: SolParams, jac: impl FnOnce(&mut [f64])) -> bool {
        let row = &mut s.rows[..self.nv];
        row.fill(0.0);
        jac(row);
        self.add(NewGroup {
            efc_type: r.efc_type,
            id: r.id,
            jac: row,
            pos: &[r.pos],
            margin: &[r.margin],
            frictionloss: r.frictionloss,
            diag: &[r.diag],
            kind: GroupKind::Plain,
            params,
        })
    }

    /// Sanitizes a group's parameters, recording MuJoCo's warnings with `what()` (the element's
    /// name, made only when there is something to report: no allocation per row otherwise).
    pub fn sanitize(&mut self, p: SolParams, timestep: f64, refsafe: bool, what: impl Fn(&mut String)) -> SolParams {
        let (warnings, nwarn) = (&mut self.efc.warnings, &mut self.nwarn);
        sanitize(p, timestep, refsafe, |w: SolrefWarning| {
            use std::fmt::Write;
            // the last call's string in this place, emptied (no allocation if it is long
            // enough), or a new one
            if *nwarn == warnings.len() {
                warnings.push(String::new());
            }
            let text = &mut warnings[*nwarn];
            text.clear();
            what(text);
            let _ = write!(text, ": {w}");
            *nwarn += 1;
        })
    }

    // ANCHOR: make_impedance
    /// MuJoCo's `mj_makeImpedance` (spec 4.3-4.5) on the finished rows: per group the impedance
    /// `d` at the group's position (the norm of a connect's 3 or a weld's 6 residuals, the first
    /// row's `efc_pos` otherwise) and margin; per row `R = (1-d)/d A-hat`, `K`, `B` (`K = 0` for
    /// friction loss and elliptic friction rows, which use `solreffriction` when it is set);
    /// then the friction rows of each contact: `R_1 = R_0 / impratio`, the regularized friction
    /// `mu = friction_0 sqrt(R_1 / R_0)`, elliptic `R_j = R_1 friction_0^2 / friction_j^2`,
    /// pyramidal `R = 2 mu^2 R_0` on every edge; finally `D = 1/R` and MuJoCo's adjusted
    /// `diagApprox = R d / (1 - d)`.
    pub fn make_impedance(&mut self, cone: Cone, impratio: f64) {
        let e = &mut self.efc;
        let nefc = e.nefc();
        e.kbip.clear();
        e.kbip.resize(nefc, [0.0; 4]);
        e.r.clear();
        e.r.resize(nefc, 0.0);
        for g in &self.groups {
            let s = g.start;
            let pos = match g.kind {
                GroupKind::Plain => e.pos[s],
                GroupKind::Connect | GroupKind::Weld => e.pos[s..s + g.n].iter().map(|x| x * x).sum::<f64>().sqrt(),
            };
            let p = &g.params;
            let (imp, imp_p) = impedance(&p.solimp, pos, e.margin[s]);
            // K and B of the group's first row, and of the friction rows of an elliptic
            // contact (no K, and solreffriction when it is set)
            let t = e.efc_type[s];
            let no_k = matches!(t, EfcType::FrictionDof | EfcType::FrictionTendon);
            let kb = stiffness_damping(&p.solref, p.solimp[1], no_k);
            let kb_friction = if t == EfcType::ContactElliptic {
                let reff = if p.solreffriction[0] != 0.0 || p.solreffriction[1] != 0.0 {
                    &p.solreffriction
                } else {
                    &p.solref
                };
                stiffness_damping(reff, p.solimp[1], true)
            } else {
                kb
            };
            for k in 0..g.n {
                let i = s + k;
                e.r[i] = regularizer(imp, self.diag[i]);
                let (kk, bb) = if k == 0 { kb } else { kb_friction };
                e.kbip[i] = [kk, bb, imp, imp_p];
            }
        }
        // frictional contacts
        e.mu.clear();
        e.mu.resize(e.contacts.len(), 0.0);
        for g in &self.groups {
            let t = e.efc_type[g.start];
            if !matches!(t, EfcType::ContactPyramidal | EfcType::ContactElliptic) {
                continue;
            }
            let (i, c) = (g.start, e.efc_id[g.start]);
            let con = &e.contacts[c];
            let fr = con.friction;
            let r1 = e.r[i] / impratio.max(mjMINVAL);
            let mu = fr[0] * (r1 / e.r[i]).sqrt();
            e.mu[c] = mu;
            match cone {
                Cone::Elliptic => {
                    e.r[i + 1] = r1;
                    for j in 1..con.dim - 1 {
                        e.r[i + j + 1] = r1 * fr[0] * fr[0] / (fr[j] * fr[j]);
                    }
                }
                Cone::Pyramidal => {
                    let rpy = 2.0 * mu * mu * e.r[i];
                    e.r[i..i + g.n].fill(rpy);
                }
            }
        }
        e.d.clear();
        e.d.extend(e.r.iter().map(|r| 1.0 / r));
        e.diag_approx.clear();
        e.diag_approx
            .extend((0..nefc).map(|i| e.r[i] * e.kbip[i][2] / (1.0 - e.kbip[i][2])));
    }
    // ANCHOR_END: make_impedance

    // ANCHOR: reference
    /// The velocity-level arrays of MuJoCo's `mj_referenceConstraint` before its `Jdot v`
    /// correction (which the caller subtracts): `efc_vel = J qvel` from the sparse rows
    /// (`mj_mulJacVec`) and `aref = -B vel - K d (pos - margin)`. The rows of a contact share
    /// their columns ([`Rows::add_on_cols`]): `qvel` is gathered on them once per contact, and
    /// each row is a dot product of two short contiguous vectors, the same products summed in
    /// the same order as [`super::SparseRows::dot_row`], which the other rows use.
    pub fn reference(&mut self, qvel: &[f64], qv: &mut Vec<f64>) {
        let e = &mut self.efc;
        let nefc = e.nefc();
        e.vel.clear();
        e.vel.resize(nefc, 0.0);
        for g in &self.groups {
            let rows = g.start..g.start + g.n;
            if !is_contact(e.efc_type[g.start]) {
                for i in rows {
                    e.vel[i] = e.j.dot_row(i, qvel);
                }
                continue;
            }
            qv.clear();
            qv.extend(e.j.row(g.start).0.iter().map(|&c| qvel[c]));
            for i in rows {
                e.vel[i] = e.j.row(i).1.iter().zip(qv.iter()).map(|(v, q)| v * q).sum();
            }
        }
        e.aref.clear();
        e.aref.extend((0..nefc).map(|i| {
            let [k, b, imp, _] = e.kbip[i];
            -b * e.vel[i] - k * imp * (e.pos[i] - e.margin[i])
        }));
    }
    // ANCHOR_END: reference
}

/// Whether rows of type `t` belong to a contact.
fn is_contact(t: EfcType) -> bool {
    matches!(
        t,
        EfcType::ContactFrictionless | EfcType::ContactPyramidal | EfcType::ContactElliptic
    )
}

/// Copies `a - b` row `r` of two 3 x nv matrices into `out` (length nv).
pub(crate) fn diff_row(a: &Matrix3xX<f64>, b: &Matrix3xX<f64>, r: usize, out: &mut [f64]) {
    for (k, o) in out.iter_mut().enumerate() {
        *o = a[(r, k)] - b[(r, k)];
    }
}
