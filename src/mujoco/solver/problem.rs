//! A self-contained solver problem: the smooth arrays a [`Smooth`] borrows, owned, plus the rows.
//! Built three ways: from a dense `M` ([`Problem::from_dense`]), from MuJoCo's own solver inputs
//! written by `tests/fixtures/make_solver_fixtures.py` ([`Problem::from_fixture`]), or with
//! random rows of every kind on a model's inertia ([`Problem::random`]). The tests, the
//! figures, the example and the benchmark of the chapter "Solvers" use it.

use super::super::collision::MjContact;
use super::super::constraint::{Efc, EfcType, SparseRows};
use super::{mul_j, solve_m, Smooth};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::sparse::{factor_i, MjLayout, NoCount, PivotPolicy};
use crate::spatial::{Mat3, Vec3};
use nalgebra::DMatrix;

/// The owned inputs of a solve.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The dof tree's sparse layout.
    pub layout: MjLayout,
    /// `qM` (legacy layout).
    pub qm: Vec<f64>,
    /// `qLD`.
    pub qld: Vec<f64>,
    /// `qLDiagInv`.
    pub qld_diag_inv: Vec<f64>,
    /// `qfrc_smooth`.
    pub qfrc_smooth: Vec<f64>,
    /// `qacc_smooth = M^-1 qfrc_smooth`.
    pub qacc_smooth: Vec<f64>,
    /// The rows.
    pub efc: Efc,
}

impl Problem {
    /// The borrowed view the solvers take.
    pub fn smooth(&self) -> Smooth<'_> {
        Smooth {
            layout: &self.layout,
            qm: &self.qm,
            qld: &self.qld,
            qld_diag_inv: &self.qld_diag_inv,
            qfrc_smooth: &self.qfrc_smooth,
            qacc_smooth: &self.qacc_smooth,
        }
    }

    /// From a dense symmetric `M` on the dof tree of `layout` (only the tree's pattern is read;
    /// [`Error::InvalidArgument`] if `M` has an entry off it larger than `1e-12 max|M|`), the
    /// smooth force and the rows: factors `M` (`mj_factorM`) and solves `qacc_smooth`.
    pub fn from_dense(layout: MjLayout, m: &DMatrix<f64>, qfrc_smooth: Vec<f64>, efc: Efc) -> Result<Self> {
        let nv = layout.nv;
        if m.nrows() != nv || m.ncols() != nv {
            return Err(Error::BadShape {
                what: "M".into(),
                rows: m.nrows(),
                cols: m.ncols(),
                expected: format!("{nv} x {nv}"),
            });
        }
        let qm = layout.from_dense(m);
        let back = layout.to_dense(&qm);
        let off = (m - &back).amax();
        if off > 1e-12 * m.amax() {
            return Err(Error::InvalidArgument {
                what: "M".into(),
                why: format!("an entry off the dof tree's pattern is {off:e}: the layouts disagree"),
            });
        }
        let f = factor_i(&layout, &qm, PivotPolicy::Error, &mut NoCount)?;
        let mut p = Problem {
            layout,
            qm,
            qld: f.qld,
            qld_diag_inv: f.qld_diag_inv,
            qacc_smooth: qfrc_smooth.clone(),
            qfrc_smooth,
            efc,
        };
        crate::error::check_vector("qfrc_smooth", &p.qfrc_smooth, nv)?;
        let mut a = p.qacc_smooth.clone();
        solve_m(&p.smooth(), &mut a)?;
        p.qacc_smooth = a;
        Ok(p)
    }

    /// From one case of `tests/fixtures/solver/*.json` (MuJoCo's inputs: dense `M`, `qfrc_smooth`,
    /// the `efc_*` arrays and the contacts' dim, friction, `efc_address`) on `layout`, the layout
    /// of the model the case names. MuJoCo's `qacc_smooth` and `con->mu` (into `efc.mu`) are kept
    /// as written.
    pub fn from_fixture(layout: MjLayout, case: &serde_json::Value) -> Result<Self> {
        let nv = layout.nv;
        let m = DMatrix::from_row_slice(nv, nv, &floats(case, "M", nv * nv)?);
        let types = ints(case, "efc_type")?;
        let n = types.len();
        let mut efc = Efc::empty(nv);
        efc.ne = int(case, "ne")?;
        efc.nf = int(case, "nf")?;
        efc.nl = int(case, "nl")?;
        efc.efc_type = types.iter().map(|&t| efc_type(t)).collect::<Result<Vec<_>>>()?;
        efc.efc_id = ints(case, "efc_id")?;
        efc.j = SparseRows::from_dense(&DMatrix::from_row_slice(n, nv, &floats(case, "efc_J", n * nv)?));
        efc.frictionloss = floats(case, "efc_frictionloss", n)?;
        efc.r = floats(case, "efc_R", n)?;
        efc.d = floats(case, "efc_D", n)?;
        efc.aref = floats(case, "efc_aref", n)?;
        for v in [&mut efc.pos, &mut efc.margin, &mut efc.diag_approx, &mut efc.vel] {
            *v = vec![0.0; n];
        }
        efc.kbip = vec![[0.0; 4]; n];
        let contacts = case
            .get("contacts")
            .and_then(|c| c.as_array())
            .ok_or_else(|| fixture_error("contacts"))?;
        for c in contacts {
            let fr = floats(c, "friction", 5)?;
            let addr = c
                .get("efc_address")
                .and_then(|v| v.as_i64())
                .ok_or_else(|| fixture_error("efc_address"))?;
            let mut con = blank_contact(int(c, "dim")?, [fr[0], fr[1], fr[2], fr[3], fr[4]]);
            con.efc_address = usize::try_from(addr).ok();
            efc.contacts.push(con);
            efc.mu.push(
                c.get("mu")
                    .and_then(|m| m.as_f64())
                    .ok_or_else(|| fixture_error("mu"))?,
            );
        }
        let qfrc_smooth = floats(case, "qfrc_smooth", nv)?;
        let mut p = Problem::from_dense(layout, &m, qfrc_smooth, efc)?;
        p.qacc_smooth = floats(case, "qacc_smooth", nv)?;
        Ok(p)
    }

    /// [`Problem::from_fixture`] on the layout of the case's own `dof_parentid` (MuJoCo's, -1 for
    /// none), so that no model file is needed.
    pub fn from_fixture_json(case: &serde_json::Value) -> Result<Self> {
        let parents = case
            .get("dof_parentid")
            .and_then(|a| a.as_array())
            .ok_or_else(|| fixture_error("dof_parentid"))?
            .iter()
            .map(|x| {
                x.as_i64()
                    .map(|p| usize::try_from(p).ok())
                    .ok_or_else(|| fixture_error("dof_parentid"))
            })
            .collect::<Result<Vec<_>>>()?;
        Problem::from_fixture(MjLayout::new(&parents)?, case)
    }

    /// Random rows on `model`'s inertia at a configuration drawn from `seed`: `counts` says how
    /// many of each kind. Jacobian rows are random (friction-loss rows are unit rows of a dof,
    /// as in MuJoCo); `R = (1 - d)/d A_ii` with `d` in [0.5, 0.95] and `A = J M^-1 J^T`, as
    /// MuJoCo's impedance would give with `A-hat = A_ii`, and for elliptic contacts MuJoCo's
    /// rule `R_j mu_j^2 = R_1 mu_1^2 = R_0 mu_reg^2` with impratio in [0.5, 2]; `aref` is drawn
    /// so that some rows are active and some not. Deterministic for a given seed.
    pub fn random(model: &Model, counts: &RowCounts, seed: u64) -> Result<Self> {
        let nv = model.nv;
        let mut rng = SplitMix(seed);
        let mut q = model.qpos0.as_slice().to_vec();
        let v: Vec<f64> = (0..nv).map(|_| rng.uniform(-0.8, 0.8)).collect();
        model.integrate_with(&mut q, &v, 1.0);
        let d = super::super::forward_smooth(model, q.as_slice(), &vec![0.0; nv])?;
        let m = model.mj_layout().to_dense(&d.qm);
        let qfrc: Vec<f64> = (0..nv).map(|_| rng.uniform(-5.0, 5.0)).collect();
        // rows
        let mut efc = Efc::empty(nv);
        let mut types = Vec::new();
        let mut ids = Vec::new();
        let mut eta = Vec::new();
        for k in 0..counts.ne {
            types.push(EfcType::Equality);
            ids.push(k);
            eta.push(0.0);
        }
        for k in 0..counts.nf {
            types.push(EfcType::FrictionDof);
            ids.push(k % nv);
            eta.push(rng.uniform(0.1, 2.0));
        }
        for k in 0..counts.nl {
            types.push(EfcType::LimitJoint);
            ids.push(k);
            eta.push(0.0);
        }
        let mut elliptic_blocks = Vec::new();
        for (kind, dims) in [
            (EfcType::ContactFrictionless, &counts.frictionless),
            (EfcType::ContactPyramidal, &counts.pyramidal),
            (EfcType::ContactElliptic, &counts.elliptic),
        ] {
            for &dim in dims {
                let c = efc.contacts.len();
                let fr = [
                    rng.uniform(0.2, 1.5),
                    rng.uniform(0.2, 1.5),
                    rng.uniform(0.005, 0.1),
                    rng.uniform(0.0001, 0.01),
                    rng.uniform(0.0001, 0.01),
                ];
                let dim = if kind == EfcType::ContactFrictionless { 1 } else { dim };
                let mut con = blank_contact(dim, fr);
                con.efc_address = Some(types.len());
                let nrow = if kind == EfcType::ContactPyramidal {
                    2 * (dim - 1)
                } else {
                    dim
                };
                if kind == EfcType::ContactElliptic {
                    elliptic_blocks.push((types.len(), dim, fr, rng.uniform(0.5, 2.0)));
                }
                for _ in 0..nrow {
                    types.push(kind);
                    ids.push(c);
                    eta.push(0.0);
                }
                efc.contacts.push(con);
            }
        }
        let n = types.len();
        efc.ne = counts.ne;
        efc.nf = counts.nf;
        efc.nl = counts.nl;
        efc.efc_type = types;
        efc.efc_id = ids;
        efc.frictionloss = eta;
        let mut j = DMatrix::from_fn(n, nv, |_, _| rng.uniform(-1.0, 1.0));
        for i in counts.ne..counts.ne + counts.nf {
            let dof = efc.efc_id[i];
            j.row_mut(i).fill(0.0);
            j[(i, dof)] = 1.0;
        }
        efc.j = SparseRows::from_dense(&j);
        // R from the exact diagonal of A
        let mut p = Problem::from_dense(model.mj_layout().clone(), &m, qfrc, efc)?;
        let mut r = vec![0.0; n];
        let mut col = vec![0.0; nv];
        for i in 0..n {
            for k in 0..nv {
                col[k] = j[(i, k)];
            }
            solve_m(&p.smooth(), &mut col)?;
            let aii: f64 = (0..nv).map(|k| j[(i, k)] * col[k]).sum();
            let imp = rng.uniform(0.5, 0.95);
            r[i] = (1.0 - imp) / imp * aii.max(1e-6);
        }
        for &(row, dim, fr, impratio) in &elliptic_blocks {
            let r1 = r[row] / impratio;
            r[row + 1] = r1;
            for j in 1..dim - 1 {
                r[row + j + 1] = r1 * fr[0] * fr[0] / (fr[j] * fr[j]);
            }
        }
        // aref: half the rows pushing at a_s, half not
        let mut jas = vec![0.0; n];
        mul_j(&p.efc, &p.qacc_smooth, &mut jas);
        p.efc.aref = jas.iter().map(|x| x + rng.uniform(-3.0, 1.5)).collect();
        p.efc.d = r.iter().map(|r| 1.0 / r).collect();
        // con->mu as mj_makeImpedance stores it (0 for frictionless contacts)
        p.efc.mu = p
            .efc
            .contacts
            .iter()
            .map(|c| match c.efc_address {
                Some(a) if c.dim > 1 => c.friction[0] * (r[a + 1] / r[a]).sqrt(),
                _ => 0.0,
            })
            .collect();
        p.efc.r = r;
        for v in [
            &mut p.efc.pos,
            &mut p.efc.margin,
            &mut p.efc.diag_approx,
            &mut p.efc.vel,
        ] {
            *v = vec![0.0; n];
        }
        p.efc.kbip = vec![[0.0; 4]; n];
        Ok(p)
    }
}

/// How many rows of each kind [`Problem::random`] makes: `ne` equality, `nf` friction-loss and
/// `nl` limit rows, then one contact per entry of `frictionless` (entries ignored), `pyramidal`
/// and `elliptic` (each entry a condim: 3, 4 or 6).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowCounts {
    /// Equality rows.
    pub ne: usize,
    /// Friction-loss rows.
    pub nf: usize,
    /// Limit rows.
    pub nl: usize,
    /// Frictionless contacts.
    pub frictionless: Vec<usize>,
    /// Pyramidal contacts (condim each).
    pub pyramidal: Vec<usize>,
    /// Elliptic contacts (condim each).
    pub elliptic: Vec<usize>,
}

/// A contact with only `dim` and `friction` set (the solver reads nothing else).
pub fn blank_contact(dim: usize, friction: [f64; 5]) -> MjContact {
    MjContact {
        geom: [0, 0],
        pos: Vec3::zeros(),
        frame: Mat3::identity(),
        dist: 0.0,
        dim,
        friction,
        solref: [0.02, 1.0],
        solreffriction: [0.0, 0.0],
        solimp: [0.9, 0.95, 0.001, 0.5, 2.0],
        margin: 0.0,
        gap: 0.0,
        efc_address: None,
    }
}

/// MuJoCo's `mjtConstraint` number as an [`EfcType`].
pub fn efc_type(t: usize) -> Result<EfcType> {
    Ok(match t {
        0 => EfcType::Equality,
        1 => EfcType::FrictionDof,
        2 => EfcType::FrictionTendon,
        3 => EfcType::LimitJoint,
        4 => EfcType::LimitTendon,
        5 => EfcType::ContactFrictionless,
        6 => EfcType::ContactPyramidal,
        7 => EfcType::ContactElliptic,
        _ => {
            return Err(Error::InvalidArgument {
                what: "efc_type".into(),
                why: format!("{t} is not a MuJoCo constraint type (0..=7)"),
            })
        }
    })
}

fn fixture_error(key: &str) -> Error {
    Error::InvalidArgument {
        what: format!("solver fixture field {key}"),
        why: "missing or of the wrong type".into(),
    }
}

/// The array `key` of `v` as floats, of length `n`.
pub fn floats(v: &serde_json::Value, key: &str, n: usize) -> Result<Vec<f64>> {
    let a = v
        .get(key)
        .and_then(|a| a.as_array())
        .ok_or_else(|| fixture_error(key))?;
    let out = a
        .iter()
        .map(|x| x.as_f64().ok_or_else(|| fixture_error(key)))
        .collect::<Result<Vec<_>>>()?;
    crate::error::check_vector(key, &out, n)?;
    Ok(out)
}

/// The array `key` of `v` as non-negative integers.
pub fn ints(v: &serde_json::Value, key: &str) -> Result<Vec<usize>> {
    let a = v
        .get(key)
        .and_then(|a| a.as_array())
        .ok_or_else(|| fixture_error(key))?;
    a.iter()
        .map(|x| x.as_u64().map(|u| u as usize).ok_or_else(|| fixture_error(key)))
        .collect()
}

fn int(v: &serde_json::Value, key: &str) -> Result<usize> {
    v.get(key)
        .and_then(|x| x.as_u64())
        .map(|u| u as usize)
        .ok_or_else(|| fixture_error(key))
}

/// A small deterministic generator (SplitMix64), so that figures and benches need no `rand`.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
