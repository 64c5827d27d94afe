//! Kinematic trees (Featherstone chapters 3-4): the [`Model`], its builder, canned models and the
//! MJCF reader.
//!
//! Numbering follows the book: bodies are `1..=nb`, body 0 is the fixed base, and the parent
//! array satisfies `lambda(i) < i`. Every per-body vector has length `nb + 1` and its entry 0
//! belongs to the base (unused). Body `i` is connected to `lambda(i)` by joint `i`.
//!
//! A MuJoCo body with several joints becomes a chain of Featherstone bodies, one per joint, the
//! first ones massless (what Featherstone 4.2 recommends for multi-joint connections). The map
//! between the two numberings is kept in [`Model::mj_body`] and [`Model::mj_body_last`].

mod builder;
pub mod canned;
pub mod constants;
mod joint;
mod loops;
pub mod mechanisms;
pub mod mjcf;

pub use builder::ModelBuilder;
pub use constants::{MJ_MAXVAL, MJ_MINVAL};
pub use joint::{difference_joint, integrate_joint, jcalc, jcalc_into, Joint, JointCalc, JointType, Subspace};
pub use loops::LoopJoint;

use crate::error::{check_vector, Error, Result};
use crate::spatial::{SpatialInertia, Vec3, Xform};
use nalgebra::DVector;

/// Declares an option enum with MuJoCo's names: `name()` gives the name MuJoCo's XML and
/// `mj_printModel` use, `parse` accepts it in any case.
macro_rules! mj_enum {
    ($(#[$doc:meta])* $ty:ident, $kind:literal { $($(#[$vdoc:meta])* $var:ident = $name:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty {
            $($(#[$vdoc])* $var),+
        }

        impl $ty {
            /// Every value, in MuJoCo's order.
            pub const ALL: &'static [$ty] = &[$($ty::$var),+];

            /// MuJoCo's name of the value.
            pub fn name(&self) -> &'static str {
                match self {
                    $($ty::$var => $name),+
                }
            }

            /// Parses MuJoCo's name of a value, in any case.
            pub fn parse(s: &str) -> Result<Self> {
                $ty::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name().eq_ignore_ascii_case(s))
                    .ok_or_else(|| Error::UnknownOption {
                        kind: $kind,
                        value: s.to_string(),
                        expected: $ty::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", "),
                    })
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

mj_enum!(
    /// MuJoCo's time integrators (`mjtIntegrator`, `<option integrator>`).
    Integrator, "integrator" {
        /// Semi-implicit Euler with implicit joint damping (`mjINT_EULER`).
        Euler = "Euler",
        /// Fourth-order Runge-Kutta (`mjINT_RK4`).
        Rk4 = "RK4",
        /// Implicit in velocity, with the RNE derivative (`mjINT_IMPLICIT`).
        Implicit = "implicit",
        /// Implicit in velocity without the RNE derivative, symmetrized (`mjINT_IMPLICITFAST`).
        ImplicitFast = "implicitfast",
    }
);

mj_enum!(
    /// MuJoCo's constraint solvers (`mjtSolver`, `<option solver>`).
    Solver, "solver" {
        /// Projected Gauss-Seidel on the dual (`mjSOL_PGS`).
        Pgs = "PGS",
        /// Nonlinear conjugate gradient on the reduced primal (`mjSOL_CG`).
        Cg = "CG",
        /// Newton's method on the reduced primal (`mjSOL_NEWTON`).
        Newton = "Newton",
    }
);

mj_enum!(
    /// MuJoCo's friction cones (`mjtCone`, `<option cone>`).
    Cone, "cone" {
        /// Pyramidal approximation (`mjCONE_PYRAMIDAL`).
        Pyramidal = "pyramidal",
        /// Elliptic cone (`mjCONE_ELLIPTIC`).
        Elliptic = "elliptic",
    }
);

/// Simulation options (MuJoCo's `<option>`), with MuJoCo's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Time step (s).
    pub timestep: f64,
    /// Gravity in world coordinates (m/s^2).
    pub gravity: Vec3,
    /// Time integrator (MuJoCo's `mjtIntegrator`).
    pub integrator: Integrator,
    /// Constraint solver (MuJoCo's `mjtSolver`).
    pub solver: Solver,
    /// Friction cone (MuJoCo's `mjtCone`).
    pub cone: Cone,
    /// Maximum solver iterations.
    pub iterations: usize,
    /// Solver tolerance.
    pub tolerance: f64,
    /// Ratio of frictional to normal constraint impedance.
    pub impratio: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timestep: 0.002,
            gravity: Vec3::new(0.0, 0.0, -9.81),
            integrator: Integrator::Euler,
            solver: Solver::Newton,
            cone: Cone::Pyramidal,
            iterations: 100,
            tolerance: 1e-8,
            impratio: 1.0,
        }
    }
}

/// Geometric primitive types (for collision and inertia from geometry).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GeomType {
    /// Infinite plane, normal along the geom's z axis.
    Plane,
    /// Sphere of radius `size[0]`.
    Sphere,
    /// Capsule of radius `size[0]` and half-length `size[1]` along z.
    Capsule,
    /// Cylinder of radius `size[0]` and half-length `size[1]` along z.
    Cylinder,
    /// Box of half-sizes `size[0..3]`.
    Box,
}

/// A geom attached to a body.
#[derive(Clone, Debug, PartialEq)]
pub struct Geom {
    /// Name (may be empty).
    pub name: String,
    /// Featherstone body the geom is attached to (0 = world).
    pub body: usize,
    /// Type.
    pub gtype: GeomType,
    /// Size parameters (meaning depends on the type).
    pub size: [f64; 3],
    /// Position in the body frame.
    pub pos: Vec3,
    /// Orientation (w, x, y, z) in the body frame.
    pub quat: [f64; 4],
    /// Friction coefficients: sliding, torsional, rolling.
    pub friction: [f64; 3],
    /// Contact dimensionality (1, 3, 4 or 6).
    pub condim: usize,
    /// Contact type bitmask.
    pub contype: u32,
    /// Contact affinity bitmask.
    pub conaffinity: u32,
    /// Contact margin.
    pub margin: f64,
}

/// Equality constraints (MuJoCo's `<equality>`); they close kinematic loops.
///
/// Body indices are Featherstone body indices: for a MuJoCo body, the last body of its chain
/// ([`Model::mj_body_last`], whose frame is the MuJoCo body frame); 0 is the world. Joint
/// indices are the Featherstone body carrying that joint. The MJCF reader fills these from
/// `<connect>`, `<weld>` and `<joint>` (see [`mjcf`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Equality {
    /// Point-to-point: `anchor` (in body1's frame) coincides with a point of body2.
    Connect {
        name: String,
        body1: usize,
        body2: usize,
        anchor: Vec3,
    },
    /// Full pose: body1 and body2 keep a fixed relative pose `relpose` = (position of body2's
    /// origin... in MuJoCo's convention) or the one at qpos0 when `relpose` is None.
    ///
    /// `anchor` is MuJoCo's weld `anchor`, a point in body2's frame. `relpose` is MuJoCo's weld
    /// `relpose` as stored in its `eq_data[3..10]`: a position and a unit quaternion
    /// (w, x, y, z); `None` when the file gives none (or gives a zero quaternion, MuJoCo's
    /// default), and MuJoCo then uses the relative pose at qpos0.
    Weld {
        name: String,
        body1: usize,
        body2: usize,
        anchor: Vec3,
        relpose: Option<[f64; 7]>,
    },
    /// Joint coupling: q1 = polycoef(q2).
    ///
    /// In MuJoCo's convention, with y = q(joint1), x = q(joint2) and y0, x0 their qpos0
    /// values: `y - y0 = c0 + c1 (x - x0) + ... + c4 (x - x0)^4`; with no joint2,
    /// `y - y0 = c0`. Only hinge and slide joints can be coupled.
    Joint {
        name: String,
        joint1: usize,
        joint2: Option<usize>,
        polycoef: [f64; 5],
    },
}

/// A kinematic tree with its inertias, joints, geometry and options.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Model name.
    pub name: String,
    /// Number of bodies, not counting the base.
    pub nb: usize,
    /// Number of position coordinates.
    pub nq: usize,
    /// Number of velocity coordinates (degrees of freedom).
    pub nv: usize,
    /// Parent array `lambda` (length nb + 1; `lambda[0]` unused).
    pub lambda: Vec<usize>,
    /// Joint `i` connects body `i` to `lambda(i)`.
    pub joints: Vec<Joint>,
    /// `X_tree(i)`: the transform from `lambda(i)`'s coordinates to joint i's predecessor frame.
    pub x_tree: Vec<Xform>,
    /// Spatial inertia of each body in its own coordinates.
    pub inertia: Vec<SpatialInertia>,
    /// Body names.
    pub body_name: Vec<String>,
    /// First position coordinate of body i's joint.
    pub q_adr: Vec<usize>,
    /// First velocity coordinate (dof) of body i's joint.
    pub v_adr: Vec<usize>,
    /// The body that each dof belongs to.
    pub dof_body: Vec<usize>,
    /// The dof-level parent array ("expandLambda", Featherstone 6.5): parent dof of each dof,
    /// `None` at a root. Equal to MuJoCo's `dof_parentid`.
    pub dof_parent: Vec<Option<usize>>,
    /// The reference configuration (MuJoCo's `qpos0`).
    pub qpos0: DVector<f64>,
    /// Options.
    pub opt: Options,
    /// Geoms.
    pub geoms: Vec<Geom>,
    /// Equality constraints.
    pub equality: Vec<Equality>,
    /// For each Featherstone body, the MuJoCo body it belongs to (0 = world).
    pub mj_body: Vec<usize>,
    /// For each MuJoCo body (0 = world), the last Featherstone body of its chain: the one that
    /// carries its inertia and whose frame is the MuJoCo body frame.
    pub mj_body_last: Vec<usize>,
    /// MuJoCo body names (index 0 = "world").
    pub mj_body_name: Vec<String>,
    /// Loop joints closing kinematic loops on the spanning tree (Featherstone chapter 8); empty
    /// for a tree. See [`crate::loops`].
    pub loops: Vec<LoopJoint>,
}

impl Model {
    /// Number of MuJoCo bodies including the world body.
    pub fn mj_nbody(&self) -> usize {
        self.mj_body_last.len()
    }

    /// The range of dof indices of body i.
    #[inline]
    pub fn dofs(&self, i: usize) -> std::ops::Range<usize> {
        self.v_adr[i]..self.v_adr[i] + self.joints[i].jtype.nv()
    }

    /// The range of position coordinates of body i.
    #[inline]
    pub fn qs(&self, i: usize) -> std::ops::Range<usize> {
        self.q_adr[i]..self.q_adr[i] + self.joints[i].jtype.nq()
    }

    /// The joint damping of each dof.
    pub fn dof_damping(&self) -> DVector<f64> {
        DVector::from_iterator(self.nv, self.dof_body.iter().map(|&b| self.joints[b].damping))
    }

    /// The armature of each dof.
    pub fn dof_armature(&self) -> DVector<f64> {
        DVector::from_iterator(self.nv, self.dof_body.iter().map(|&b| self.joints[b].armature))
    }

    /// Finds a Featherstone body by name.
    pub fn body_id(&self, name: &str) -> Result<usize> {
        self.body_name
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| Error::Unknown {
                kind: "body".into(),
                name: name.into(),
            })
    }

    /// Checks the structure of the model: `lambda(i) < i`, physical inertias, unit joint axes,
    /// consistent sizes. The builder calls it; call it again after editing fields by hand.
    pub fn validate(&self) -> Result<()> {
        let n1 = self.nb + 1;
        for (what, len) in [
            ("lambda", self.lambda.len()),
            ("joints", self.joints.len()),
            ("x_tree", self.x_tree.len()),
            ("inertia", self.inertia.len()),
            ("body_name", self.body_name.len()),
        ] {
            if len != n1 {
                return Err(Error::BadLength {
                    what: what.into(),
                    got: len,
                    expected: n1,
                });
            }
        }
        let options_ok =
            self.opt.gravity.iter().all(|x| x.is_finite()) && self.opt.timestep > 0.0 && self.opt.timestep.is_finite();
        if !options_ok {
            return Err(Error::Other(format!(
                "options: gravity {:?} and timestep {} must be finite (timestep > 0)",
                self.opt.gravity, self.opt.timestep
            )));
        }
        for i in 1..=self.nb {
            let name = self.body_name[i].clone();
            if self.lambda[i] >= i {
                return Err(Error::BadParent {
                    body: i,
                    name,
                    parent: self.lambda[i],
                });
            }
            self.inertia[i].check_physical().map_err(|why| Error::BadInertia {
                body: i,
                name: name.clone(),
                why,
            })?;
            if !self.x_tree[i].is_finite() {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: "X_tree is not finite".into(),
                });
            }
            let j = &self.joints[i];
            let axis = match j.jtype {
                JointType::Revolute { axis }
                | JointType::Prismatic { axis }
                | JointType::Helical { axis, .. }
                | JointType::Cylindrical { axis } => Some(axis),
                _ => None,
            };
            if let Some(a) = axis {
                if !((a.norm() - 1.0).abs() < 1e-9) {
                    return Err(Error::BadJoint {
                        body: i,
                        name,
                        why: format!("axis {a:?} is not a unit vector"),
                    });
                }
            }
            let finite = |v: &Vec3| v.iter().all(|x| x.is_finite());
            let pitch_ok = match j.jtype {
                JointType::Helical { pitch, .. } => pitch.is_finite(),
                _ => true,
            };
            if !finite(&j.pos) || !pitch_ok || !j.stiffness.is_finite() || !j.range.iter().all(|x| x.is_finite()) {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: "anchor, pitch, stiffness and range must be finite".into(),
                });
            }
            if matches!(j.jtype, JointType::Free) && self.lambda[i] != 0 {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: "a free joint must connect to the base".into(),
                });
            }
            if j.limited && !(j.range[0] <= j.range[1]) {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: format!("range [{}, {}] is empty", j.range[0], j.range[1]),
                });
            }
            if !(j.damping >= 0.0 && j.armature >= 0.0 && j.frictionloss >= 0.0) {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: "damping, armature and frictionloss must be >= 0".into(),
                });
            }
        }
        for (k, lj) in self.loops.iter().enumerate() {
            lj.validate(self.nb, k)?;
        }
        Ok(())
    }

    /// Checks a state: `qpos` of length nq with unit-normable quaternions, `qvel` of length nv,
    /// every entry finite.
    pub fn check_state(&self, q: &[f64], qd: &[f64]) -> Result<()> {
        check_vector("qpos", q, self.nq)?;
        check_vector("qvel", qd, self.nv)?;
        for i in 1..=self.nb {
            let start = match self.joints[i].jtype {
                JointType::Spherical => self.q_adr[i],
                JointType::Free => self.q_adr[i] + 3,
                _ => continue,
            };
            let n: f64 = q[start..start + 4].iter().map(|x| x * x).sum::<f64>().sqrt();
            if !(n > 1e-12) {
                return Err(Error::BadQuaternion {
                    what: "qpos".into(),
                    joint: self.joints[i].name.clone(),
                    index: start,
                });
            }
        }
        Ok(())
    }

    /// Integrates positions: `q <- q (+) h qd` joint by joint (MuJoCo's `mj_integratePos`).
    ///
    /// # Panics
    /// If a slice is shorter than the model's `nq` / `nv`: these are the inner-loop helpers of
    /// integrators, called on vectors the caller sized from the model. States that come from
    /// outside (files, the command line) are checked by [`Model::check_state`] first.
    pub fn integrate(&self, q: &mut [f64], qd: &[f64], h: f64) {
        for i in 1..=self.nb {
            let (qs, vs) = (self.qs(i), self.dofs(i));
            integrate_joint(&self.joints[i].jtype, &mut q[qs], &qd[vs], h);
        }
    }

    /// The velocity taking `q1` to `q2` in unit time (MuJoCo's `mj_differentiatePos`, h = 1).
    ///
    /// # Panics
    /// If a slice is shorter than the model's `nq` / `nv`: these are the inner-loop helpers of
    /// integrators, called on vectors the caller sized from the model. States that come from
    /// outside (files, the command line) are checked by [`Model::check_state`] first.
    pub fn difference(&self, q1: &[f64], q2: &[f64]) -> DVector<f64> {
        let mut out = DVector::zeros(self.nv);
        for i in 1..=self.nb {
            let (qs, vs) = (self.qs(i), self.dofs(i));
            difference_joint(
                &self.joints[i].jtype,
                &q1[qs.clone()],
                &q2[qs],
                &mut out.as_mut_slice()[vs],
            );
        }
        out
    }

    /// Normalizes the quaternions in `q` in place.
    ///
    /// # Panics
    /// If a slice is shorter than the model's `nq` / `nv`: these are the inner-loop helpers of
    /// integrators, called on vectors the caller sized from the model. States that come from
    /// outside (files, the command line) are checked by [`Model::check_state`] first.
    pub fn normalize_quaternions(&self, q: &mut [f64]) {
        for i in 1..=self.nb {
            let start = match self.joints[i].jtype {
                JointType::Spherical => self.q_adr[i],
                JointType::Free => self.q_adr[i] + 3,
                _ => continue,
            };
            let mut quat = [q[start], q[start + 1], q[start + 2], q[start + 3]];
            if crate::spatial::quat_normalize(&mut quat) {
                q[start..start + 4].copy_from_slice(&quat);
            }
        }
    }
}
