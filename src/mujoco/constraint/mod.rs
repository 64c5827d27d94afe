//! MuJoCo's constraint rows (`mj_makeConstraint`, `mj_makeImpedance`, `mj_referenceConstraint`):
//! the `efc_*` arrays of `mjData` that the solvers of [`super::solver`] read.
//!
//! This module holds the shared vocabulary ([`EfcType`], [`EfcState`], [`Efc`]); the rows
//! themselves (equality, friction loss, limits, contacts) and the impedance, `K`, `B`, `R`,
//! `aref` of each row are built by the functions of this module's submodules. Rows are ordered
//! as MuJoCo orders them: equality, friction loss, limits, contacts.

use nalgebra::DMatrix;

use super::collision::MjContact;

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

/// The constraint rows of one state: MuJoCo's `efc_*` arrays (dense Jacobian, as with
/// `<option jacobian="dense">`) and the contacts they came from.
///
/// Row `i` has type `efc_type[i]`, model element `efc_id[i]` (equality index, dof, tendon,
/// joint (Featherstone body), or contact index into `contacts`), Jacobian row `j.row(i)` and the
/// per-row quantities below. Every vector has length `nefc()`.
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
    /// `efc_J` (nefc x nv).
    pub j: DMatrix<f64>,
    /// `efc_pos`: the constraint's position (residual or signed distance).
    pub pos: Vec<f64>,
    /// `efc_margin`.
    pub margin: Vec<f64>,
    /// `efc_frictionloss`: the bound `eta` of friction-loss rows, 0 on others.
    pub frictionloss: Vec<f64>,
    /// `efc_diagApprox`: the approximation `A-hat` of `(J M^-1 J^T)_ii` from `invweight0`.
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
}

impl Efc {
    /// No rows, for a model with `nv` dofs.
    pub fn empty(nv: usize) -> Self {
        Efc {
            ne: 0,
            nf: 0,
            nl: 0,
            efc_type: Vec::new(),
            efc_id: Vec::new(),
            j: DMatrix::zeros(0, nv),
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
        }
    }

    /// Number of rows (`nefc`).
    pub fn nefc(&self) -> usize {
        self.efc_type.len()
    }

    /// Number of dofs (columns of `j`).
    pub fn nv(&self) -> usize {
        self.j.ncols()
    }
}
