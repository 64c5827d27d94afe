//! MuJoCo's constraint rows (`mj_makeConstraint`, `mj_makeImpedance`, `mj_referenceConstraint`):
//! the `efc_*` arrays of `mjData` that the solvers of [`super::solver`] read.
//!
//! This module holds the shared vocabulary ([`EfcType`], [`EfcState`], [`Efc`]) and the entry
//! point [`make_constraint`]; the rows themselves (equality, friction loss, limits, contacts)
//! and the impedance, `K`, `B`, `R`, `aref` of each row are built by the submodules. Rows are
//! ordered as MuJoCo orders them: equality, friction loss, limits, contacts. Book chapters: "The
//! constraint model" and "Soft constraints".

pub mod contact;
pub mod equality;
pub mod friction;
pub mod impedance;
pub mod invweight;
pub mod jacobian;
pub mod limit;
mod rows;
pub mod sparse;

pub use impedance::{impedance, sanitize, stiffness_damping, SolParams, SolrefWarning};
pub use invweight::{EqData, Invweight};
pub use sparse::SparseRows;

use nalgebra::DMatrix;

use super::collision::MjContact;
use super::Data;
use crate::dynamics::{tendon_kinematics_into, TendonState};
use crate::error::{Error, Result};
use crate::model::{Equality, Model};
use rows::{Rows, Scratch};

/// MuJoCo's `mjtConstraint`: what a row of the constraint Jacobian constrains. The explicit
/// discriminants are MuJoCo's numbers (`efc_type` in its JSON and Python output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EfcType {
    /// `mjCNSTR_EQUALITY`: a row of a connect, weld, joint or tendon equality.
    Equality = 0,
    /// `mjCNSTR_FRICTION_DOF`: dry friction on one dof.
    FrictionDof = 1,
    /// `mjCNSTR_FRICTION_TENDON`: dry friction on one tendon.
    FrictionTendon = 2,
    /// `mjCNSTR_LIMIT_JOINT`: one side of a joint range.
    LimitJoint = 3,
    /// `mjCNSTR_LIMIT_TENDON`: one side of a tendon range.
    LimitTendon = 4,
    /// `mjCNSTR_CONTACT_FRICTIONLESS`: a condim-1 contact.
    ContactFrictionless = 5,
    /// `mjCNSTR_CONTACT_PYRAMIDAL`: an edge of a pyramidal friction cone.
    ContactPyramidal = 6,
    /// `mjCNSTR_CONTACT_ELLIPTIC`: a row of an elliptic-cone contact (normal first).
    ContactElliptic = 7,
}

/// MuJoCo's `mjtConstraintState`: which piece of the row's cost is active at the solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EfcState {
    /// `mjCNSTRSTATE_SATISFIED`: zero cost, zero force.
    Satisfied = 0,
    /// `mjCNSTRSTATE_QUADRATIC`: quadratic cost `1/2 D x^2`.
    Quadratic = 1,
    /// `mjCNSTRSTATE_LINEARNEG`: friction loss saturated, force `+eta`.
    LinearNeg = 2,
    /// `mjCNSTRSTATE_LINEARPOS`: friction loss saturated, force `-eta`.
    LinearPos = 3,
    /// `mjCNSTRSTATE_CONE`: the middle zone of an elliptic cone.
    Cone = 4,
}

// ANCHOR: efc
/// The constraint rows of one state: MuJoCo's `efc_*` arrays and the contacts they came from.
///
/// Row `i` has type `efc_type[i]`, model element `efc_id[i]` (equality index, dof, tendon,
/// joint (Featherstone body), or contact index into `contacts`), Jacobian row `j.row(i)` (its
/// columns and values) and the per-row quantities below. Every vector has length `nefc()`.
///
/// The Jacobian is stored only by rows of their structural nonzeros ([`SparseRows`], MuJoCo's
/// sparse `efc_J` with `efc_J_rownnz`, `efc_J_rowadr`, `efc_J_colind`): a contact row keeps
/// the dofs of its two bodies' chains, whatever `nv` is. The dense `nefc x nv` matrix, which
/// MuJoCo keeps below 60 dofs (`mj_isSparse`), is made only on request by [`Efc::dense_j`],
/// for tests, figures and `mbd inspect --json`; the pipeline never writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Efc {
    /// Number of equality rows (`ne`); they come first.
    pub ne: usize,
    /// Number of friction-loss rows (`nf`); they follow the equality rows.
    pub nf: usize,
    /// Number of limit rows (`nl`); they follow the friction-loss rows. Contact rows follow.
    pub nl: usize,
    /// `efc_type`.
    pub efc_type: Vec<EfcType>,
    /// `efc_id`.
    pub efc_id: Vec<usize>,
    /// `efc_J` (nefc rows of `nv` columns) by rows: `efc_J_rowadr`, `efc_J_rownnz`
    /// ([`SparseRows::rownnz`]), `efc_J_colind` and the values. Rows built by hand are set
    /// with [`SparseRows::from_dense`].
    pub j: SparseRows,
    /// `efc_pos`: the constraint's position (residual or signed distance).
    pub pos: Vec<f64>,
    /// `efc_margin`.
    pub margin: Vec<f64>,
    /// `efc_frictionloss`: the bound `eta` of friction-loss rows, 0 on others.
    pub frictionloss: Vec<f64>,
    /// `efc_diagApprox`: the approximation `A-hat` of `(J M^-1 J^T)_ii` from `invweight0`, as
    /// MuJoCo leaves it after `mj_makeImpedance`: `R d / (1 - d)`, which differs from the
    /// `invweight0` sum on the friction rows of a contact (whose `R` is set from the normal's).
    pub diag_approx: Vec<f64>,
    /// `efc_KBIP`: stiffness `K`, damping `B`, impedance `d` and its derivative `d'`.
    pub kbip: Vec<[f64; 4]>,
    /// `efc_R`: the regularizer.
    pub r: Vec<f64>,
    /// `efc_D = 1 / R`.
    pub d: Vec<f64>,
    /// `efc_vel = J qvel`.
    pub vel: Vec<f64>,
    /// `efc_aref`: the reference acceleration `-B vel - K d (pos - margin)`.
    pub aref: Vec<f64>,
    /// The contacts of this state (`mjData.contact`), with their first row (`efc_address`).
    pub contacts: Vec<MjContact>,
    /// `contact.mu` per contact (parallel to `contacts`): the friction coefficient of the
    /// regularized cone, `friction[0] sqrt(R_1 / R_0)` (0 for a frictionless contact). The
    /// elliptic cone of the primal solvers uses it.
    pub mu: Vec<f64>,
    /// What MuJoCo would have warned about while making the rows (a mixed-sign `solref`
    /// replaced by the default), one line per row group, naming the element.
    pub warnings: Vec<String>,
}
// ANCHOR_END: efc

impl Efc {
    /// No rows, for a model with `nv` dofs.
    pub fn empty(nv: usize) -> Self {
        Efc {
            j: SparseRows::new(nv),
            ..Efc::placeholder()
        }
    }

    /// Removes every row and contact, keeping the storage (no allocation when refilled to a
    /// size seen before); the Jacobian gets `nv` columns.
    pub fn clear(&mut self, nv: usize) {
        self.ne = 0;
        self.nf = 0;
        self.nl = 0;
        self.efc_type.clear();
        self.efc_id.clear();
        self.j.clear(nv);
        for v in [
            &mut self.pos,
            &mut self.margin,
            &mut self.frictionloss,
            &mut self.diag_approx,
            &mut self.r,
            &mut self.d,
            &mut self.vel,
            &mut self.aref,
            &mut self.mu,
        ] {
            v.clear();
        }
        self.kbip.clear();
        self.contacts.clear();
        self.warnings.clear();
    }

    /// Number of rows (`nefc`).
    pub fn nefc(&self) -> usize {
        self.efc_type.len()
    }

    /// An `Efc` that owns no storage (no columns either), to hold the place of one being filled.
    fn placeholder() -> Self {
        Efc {
            ne: 0,
            nf: 0,
            nl: 0,
            efc_type: Vec::new(),
            efc_id: Vec::new(),
            j: SparseRows::default(),
            pos: Vec::new(),
            margin: Vec::new(),
            frictionloss: Vec::new(),
            diag_approx: Vec::new(),
            kbip: Vec::new(),
            r: Vec::new(),
            d: Vec::new(),
            vel: Vec::new(),
            aref: Vec::new(),
            contacts: Vec::new(),
            mu: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Number of dofs (columns of `j`).
    pub fn nv(&self) -> usize {
        self.j.ncols
    }

    /// The rows of `efc_J` ([`Efc::j`]), under the name the solvers use.
    pub fn sparse_rows(&self) -> &SparseRows {
        &self.j
    }

    // ANCHOR: dense_j
    /// The dense `efc_J` (`nefc x nv`, MuJoCo's layout when `mj_isSparse` is false), made from
    /// the rows [`Efc::j`] on request: for tests, figures and `mbd inspect --json`. Allocates.
    pub fn dense_j(&self) -> DMatrix<f64> {
        self.j.to_dense()
    }
    // ANCHOR_END: dense_j
}

// ANCHOR: make_constraint
/// MuJoCo's `mj_makeConstraint` + `mj_makeImpedance` + `mj_referenceConstraint`: the constraint
/// rows of the state `(qpos, qvel)` with the given contacts.
///
/// - `d` is the smooth data of the same state ([`super::forward_smooth`]: poses, `subtree_com`,
///   `cdof`, `cvel`, `cdof_dot`); `invweight` the model constants of [`Invweight::new`].
/// - `contacts` are MuJoCo's `mjData.contact` (from [`super::collision::collide_all`], or any
///   list); each gets rows, in order, and its `efc_address` is set, unless it lies in the gap
///   (`dist >= margin - gap`, [`MjContact::exclude`]).
/// - The cone, `impratio`, time step and the `refsafe` flag are the model's options.
///
/// Rows: equality (connect, weld, joint, tendon; those active in `d.eq_active`), friction loss
/// (dofs then tendons), limits (joints then tendons, lower side first) and contacts; a
/// non-contact group whose Jacobian is zero is skipped. Then per row `efc_diagApprox`, `efc_KBIP`, `efc_R`, `efc_D`, `efc_vel = J
/// qvel` and `efc_aref = -B vel - K d (pos - margin)` minus `Jdot qvel` on connect and weld rows,
/// and the regularized friction `mu` of each contact. Sanitized parameters are recorded in
/// [`Efc::warnings`].
///
/// Errors: a state that [`Model::check_state`] rejects (wrong length, NaN, infinity, a zero
/// quaternion), `d` or `invweight` of another model (wrong sizes), a malformed contact
/// ([`Error::BadContact`]), a limited joint MuJoCo cannot limit, a tendon whose length cannot be
/// computed.
pub fn make_constraint(
    model: &Model,
    d: &Data,
    invweight: &Invweight,
    qpos: &[f64],
    qvel: &[f64],
    contacts: Vec<MjContact>,
) -> Result<Efc> {
    let mut efc = Efc::empty(model.nv);
    make_constraint_into(
        model,
        d,
        invweight,
        qpos,
        qvel,
        contacts,
        &mut efc,
        &mut RowScratch::new(model),
    )?;
    Ok(efc)
}
// ANCHOR_END: make_constraint

/// The scratch of [`make_constraint_into`] (point Jacobians, a contact's rows, the row groups),
/// kept between calls.
pub struct RowScratch {
    s: Scratch,
    /// the tendon lengths and moments the tendon rows read
    ten: TendonState,
    /// the body quaternions the weld rows read (`jacobian::xquat`)
    quats: Vec<[f64; 4]>,
}

impl RowScratch {
    /// Scratch for `model`.
    pub fn new(model: &Model) -> Self {
        RowScratch {
            s: Scratch::new(model.nv),
            ten: TendonState::new(model),
            quats: Vec::new(),
        }
    }
}

/// [`make_constraint`] into `efc`'s storage, with reused scratch: the rows are appended to
/// emptied vectors that keep their capacity, so a second call on a state of the same size
/// allocates nothing here. On an error `efc` holds no rows.
#[allow(clippy::too_many_arguments)]
pub fn make_constraint_into(
    model: &Model,
    d: &Data,
    invweight: &Invweight,
    qpos: &[f64],
    qvel: &[f64],
    contacts: Vec<MjContact>,
    efc: &mut Efc,
    scratch: &mut RowScratch,
) -> Result<()> {
    if let Err(e) = model.check_state(qpos, qvel) {
        efc.clear(model.nv);
        return Err(e);
    }
    make_constraint_with(model, d, invweight, qpos, qvel, contacts, efc, scratch)
}

/// [`make_constraint_into`] without the check of the state (`qpos` and `qvel` are assumed to be
/// of the model's lengths, finite, with unit quaternions: [`super::forward::Forward`] checks them
/// at the door); the sizes of `d` and `invweight`, `impratio` and the contacts are still
/// checked.
#[allow(clippy::too_many_arguments)]
pub fn make_constraint_with(
    model: &Model,
    d: &Data,
    invweight: &Invweight,
    qpos: &[f64],
    qvel: &[f64],
    contacts: Vec<MjContact>,
    efc: &mut Efc,
    scratch: &mut RowScratch,
) -> Result<()> {
    // the warning strings of the last call, which `Rows` writes again in place
    let warnings = std::mem::take(&mut efc.warnings);
    efc.clear(model.nv);
    let sizes = [
        ("d.cdof", d.cdof.len(), model.nv),
        ("d.x_0", d.x_0.len(), model.nb + 1),
        ("d.eq_active", d.eq_active.len(), model.equality.len()),
        ("invweight.dof", invweight.dof.len(), model.nv),
        ("invweight.body", invweight.body.len(), model.mj_nbody()),
        ("invweight.eq", invweight.eq.len(), model.equality.len()),
        ("invweight.tendon", invweight.tendon.len(), model.tendons.len()),
    ];
    for (what, got, expected) in sizes {
        if got != expected {
            return Err(Error::BadLength {
                what: what.into(),
                got,
                expected,
            });
        }
    }
    if !(model.opt.impratio > 0.0 && model.opt.impratio.is_finite()) {
        return Err(Error::BadOption {
            option: "impratio".into(),
            why: format!("{} must be positive and finite", model.opt.impratio),
        });
    }
    let ten = if model.tendons.is_empty() {
        None
    } else {
        tendon_kinematics_into(model, qpos, &d.mocap_x, &mut scratch.ten)?;
        Some(&scratch.ten)
    };
    // the body quaternions, which only the weld rows read
    scratch.quats.clear();
    if model
        .equality
        .iter()
        .zip(&d.eq_active)
        .any(|(e, &on)| on && matches!(e, Equality::Weld { .. }))
    {
        jacobian::xquat_into(model, qpos, &d.mocap_quat, &mut scratch.quats);
    }
    let quats = &scratch.quats[..];
    let s = &mut scratch.s;
    efc.warnings = warnings;
    let mut rows = Rows::reuse(model.nv, std::mem::replace(efc, Efc::placeholder()), contacts, s);
    let made = (|| {
        equality::equality_rows(model, d, invweight, qpos, ten, quats, s, &mut rows)?;
        friction::friction_rows(model, invweight, ten, s, &mut rows);
        limit::limit_rows(model, invweight, qpos, ten, s, &mut rows)?;
        contact::contact_rows(model, d, invweight, s, &mut rows)
    })();
    if made.is_ok() {
        rows.make_impedance(model.opt.cone, model.opt.impratio);
        rows.reference(qvel, &mut s.qv);
        equality::subtract_jdot_v(model, d, invweight, quats, qvel, &mut rows);
    }
    *efc = rows.finish(s);
    let checked = made
        .and_then(|_| crate::error::check_output("efc_aref", &efc.aref))
        .and_then(|_| crate::error::check_output("efc_R", &efc.r));
    if checked.is_err() {
        efc.clear(model.nv);
    }
    checked
}
