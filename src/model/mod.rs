//! Kinematic trees (Featherstone chapters 3-4): the [`Model`], its builder, canned models and
//! MuJoCo's constants ([`constants`]). The MJCF reader that fills a `Model` from a MuJoCo file is
//! `crate::mjcf`, one layer up.
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
mod elements;
mod joint;
pub mod loop_models;
mod loops;
pub mod mechanisms;
pub mod mesh;
mod options;
mod simple;

pub use builder::ModelBuilder;
pub(crate) use builder::{mj_eig3, principal_axes, quat_to_mat_mj};
pub use constants::{MJ_MAXVAL, MJ_MINVAL};
pub use elements::{
    Actuator, BiasType, ContactPair, DynType, GainType, Keyframe, Material, Sensor, SensorData, SensorFrame,
    SensorKind, SensorStage, Site, SolverParams, Tendon, TendonKind, TendonWrap, Transmission, SOLIMP_DEFAULT,
    SOLREF_DEFAULT,
};
pub use joint::{
    difference_joint, integrate_joint, jcalc, jcalc_into, jcalc_pos, Joint, JointCalc, JointType, Subspace,
};
pub(crate) use loops::frame_with_z;
pub use loops::LoopJoint;
pub use options::{Cone, Integrator, LengthRangeMode, LengthRangeOptions, Options, Solver};
pub use simple::{mj_body_parentid, simple_bodies, SimpleBodies, FRAME_EPS};

use crate::error::{check_magnitude, check_vector, Error, Result};
use crate::sparse::MjLayout;
use crate::spatial::{SpatialInertia, Vec3, Xform};
use nalgebra::DVector;

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
    /// Ellipsoid of semi-axes `size[0..3]`.
    Ellipsoid,
    /// A mesh (index into [`Model::meshes`]), collided through its convex hull.
    Mesh(usize),
    /// A height field (index into [`Model::hfields`]).
    HField(usize),
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
    /// Contact gap: contacts within `margin - gap` are included but inactive.
    pub gap: f64,
    /// Contact softness (`solref`, `solimp`).
    pub params: SolverParams,
    /// Weight of this geom's `solref`/`solimp` when mixed with another's (`solmix`).
    pub solmix: f64,
    /// Contact priority: the geom with the higher priority sets the contact's parameters.
    pub priority: i32,
    /// Visual group (MuJoCo's `geom_group`, default 0): what `inertiagrouprange` selects and
    /// what a ray's group filter reads (`crate::mujoco::ray`, clamped to 0 ..= 5 there).
    pub group: i32,
    /// Colour and opacity (MuJoCo's `geom_rgba`, default `0.5 0.5 0.5 1`, in single precision
    /// as MuJoCo stores it). Only the alpha is used: a geom with alpha 0 and no material is
    /// invisible to rays (`mj_ray`).
    pub rgba: [f64; 4],
    /// Its material (MuJoCo's `geom_matid`, an index into [`Model::materials`]; `None` for
    /// -1). When present, the material's alpha, not [`Geom::rgba`]'s, decides whether rays see
    /// the geom.
    pub material: Option<usize>,
}

impl Geom {
    /// MuJoCo's default `geom_rgba`.
    pub const RGBA_DEFAULT: [f64; 4] = [0.5, 0.5, 0.5, 1.0];
}

/// Equality constraints (MuJoCo's `<equality>`); they close kinematic loops.
///
/// Body indices are Featherstone body indices: for a MuJoCo body, the last body of its chain
/// ([`Model::mj_body_last`], whose frame is the MuJoCo body frame); 0 is the world. Joint
/// indices are the Featherstone body carrying that joint. The MJCF reader fills these from
/// `<connect>`, `<weld>` and `<joint>` (the reader is `crate::mjcf`, a layer above this module).
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
    /// Tendon coupling: `L1 - L1_0 = polycoef(L2 - L2_0)` with tendon lengths at qpos0, as for
    /// [`Equality::Joint`]; indices into [`Model::tendons`].
    Tendon {
        name: String,
        tendon1: usize,
        tendon2: Option<usize>,
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
    /// Cache of [`Model::subtree_dofs`], filled on first use.
    pub subtree_dofs_cache: Derived<Vec<Vec<usize>>>,
    /// Cache of [`Model::mj_layout`], filled on first use.
    pub mj_layout_cache: Derived<MjLayout>,
    /// Cache of [`Model::mj_layout_tree`], filled on first use.
    pub mj_layout_tree_cache: Derived<MjLayout>,
    /// Cache of [`Model::simple_bodies`], filled on first use.
    pub simple_cache: Derived<SimpleBodies>,
    /// Cache of MuJoCo's `dof_M0` (the diagonal of `M` at `qpos0`), filled on first use by
    /// `crate::mujoco::com::dof_m0`.
    pub dof_m0_cache: Derived<Vec<f64>>,
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
    /// Per MuJoCo body: false where the model turns MuJoCo's simple-body rule off
    /// (`<body simple="false">`, `mjsBody.simple`); see [`simple_bodies`].
    pub mj_body_simple: Vec<bool>,
    /// Loop joints closing kinematic loops on the spanning tree (Featherstone chapter 8); empty
    /// for a tree. See [`crate::loops`].
    pub loops: Vec<LoopJoint>,
    /// Softness of each equality constraint (`eq_solref`, `eq_solimp`), parallel to `equality`.
    pub eq_params: Vec<SolverParams>,
    /// Whether each equality constraint is active in the reference state (MuJoCo's
    /// `eq_active0`, `<equality ... active="false">`), parallel to `equality`; a missing entry
    /// (a model built by hand) is active. The state carries the flags a simulation uses
    /// (`eq_active`: [`crate::mujoco::Data::eq_active`], `crate::mujoco::state::State::eq_active`),
    /// set from these by a reset, as MuJoCo's `mj_resetData` does; an inactive constraint
    /// makes no constraint rows.
    pub eq_active0: Vec<bool>,
    /// Orientation of each body's principal axes of inertia in its frame (MuJoCo's
    /// `body_iquat`), per Featherstone body.
    pub body_iquat: Vec<[f64; 4]>,
    /// MuJoCo's `body_mocapid`, per Featherstone body: `Some(k)` for the k-th mocap body
    /// (`<body mocap="true">`), `None` for every other body. A mocap body is a child of the base
    /// with a [`JointType::Fixed`] joint whose placement in the world is an input of each state,
    /// like a control: `mocap_pos[k]`, `mocap_quat[k]` take the place of its `x_tree` (which
    /// keeps the default pose, [`Model::mocap_pos0`], for the algorithms that have no such
    /// input, as Featherstone's). Bodies below it move with it. Mocap ids follow the body order.
    pub body_mocapid: Vec<Option<usize>>,
    /// The default position of each mocap body in the world (MuJoCo's `body_pos` of the mocap
    /// bodies), what a reset (`mj_resetData`) copies into `mocap_pos`.
    pub mocap_pos0: Vec<[f64; 3]>,
    /// The default orientation (w, x, y, z) of each mocap body (MuJoCo's `body_quat` of the mocap
    /// bodies), what a reset copies into `mocap_quat`.
    pub mocap_quat0: Vec<[f64; 4]>,
    /// Gravity compensation per body (MuJoCo's `body_gravcomp`, `<body gravcomp>`): the fraction
    /// of the body's weight that a force at its centre of mass, `-gravcomp m g`, cancels
    /// ([`crate::dynamics::gravcomp_into`]). Indexed like [`Model::inertia`]; a MuJoCo body's
    /// value sits on the Featherstone body that carries its inertia.
    pub body_gravcomp: Vec<f64>,
    /// Principal moments of inertia about the centre of mass (MuJoCo's `body_inertia`), per
    /// Featherstone body, in the axes of `body_iquat`.
    pub body_inertia: Vec<Vec3>,
    /// Sites (MuJoCo's `site_*`).
    pub sites: Vec<Site>,
    /// Tendons (MuJoCo's `ten_*`).
    pub tendons: Vec<Tendon>,
    /// Actuators (MuJoCo's `actuator_*`).
    pub actuators: Vec<Actuator>,
    /// Named states (MuJoCo's `key_*`).
    pub keyframes: Vec<Keyframe>,
    /// Sensors (MuJoCo's `sensor_*`), in model order: `sensordata` is their values one after
    /// the other ([`SensorKind::dim`] numbers each).
    pub sensors: Vec<Sensor>,
    /// Explicit contact pairs (MuJoCo's `pair_*`).
    pub contact_pairs: Vec<ContactPair>,
    /// Body pairs excluded from contact (MuJoCo's `exclude_signature`), Featherstone bodies.
    pub contact_excludes: Vec<(usize, usize)>,
    /// Mesh assets (MuJoCo's `mesh_*`), referred to by [`GeomType::Mesh`].
    pub meshes: Vec<mesh::Mesh>,
    /// Height-field assets (MuJoCo's `hfield_*`), referred to by [`GeomType::HField`].
    pub hfields: Vec<mesh::HField>,
    /// Materials (MuJoCo's `mat_*`), referred to by [`Geom::material`]; only their colour is
    /// kept.
    pub materials: Vec<Material>,
}

/// The dofs in the subtree of every body (entry 0, the base, gets every dof), ascending, from
/// the parent array and the dof addresses.
pub(crate) fn subtree_dofs(lambda: &[usize], v_adr: &[usize], joints: &[Joint]) -> Vec<Vec<usize>> {
    let nb = lambda.len() - 1;
    let mut out = vec![Vec::new(); nb + 1];
    for b in 1..=nb {
        let dofs = v_adr[b]..v_adr[b] + joints[b].jtype.nv();
        let mut j = b;
        loop {
            out[j].extend(dofs.clone());
            if j == 0 {
                break;
            }
            j = lambda[j];
        }
    }
    for list in &mut out {
        list.sort_unstable();
    }
    out
}

/// Per-model data derived from the rest of the model and computed once, on first use: never by
/// a call that does not need it (a 100,000-body chain loads without building the `O(n d)`
/// structures of the inertia matrix that only CRBA and MuJoCo's sparse factorization read).
/// Equal for equal models, so it takes no part in `==`. Some of it reads more than the tree (the
/// simple-body flags read inertias and joint anchors, `dof_M0` the masses and armatures), so a
/// model edited after its first use must be rebuilt; a clone starts empty, so a clone edited
/// before its own first use is consistent.
#[derive(Debug)]
pub struct Derived<T>(std::sync::OnceLock<T>);

impl<T> Default for Derived<T> {
    fn default() -> Self {
        Derived(std::sync::OnceLock::new())
    }
}

impl<T> Clone for Derived<T> {
    /// An empty cache: the clone computes its own on first use.
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl<T> Derived<T> {
    /// The value, computed by `f` on first use (for caches that a layer above `model` fills, as
    /// `crate::mujoco::com::dof_m0` does).
    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(f)
    }
}

impl<T> PartialEq for Derived<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Model {
    /// For each body, the dofs of its subtree (its own and its descendants'), ascending; entry 0
    /// (the base) lists every dof. These are the columns of `F` that CRBA carries through the
    /// body. Derived from `lambda` and the joints on first use.
    pub fn subtree_dofs(&self) -> &Vec<Vec<usize>> {
        self.subtree_dofs_cache
            .0
            .get_or_init(|| subtree_dofs(&self.lambda, &self.v_adr, &self.joints))
    }

    /// MuJoCo's sparse layout of the inertia matrix `M` for this dof tree (`dof_Madr`, the column
    /// of every slot, the CSR arrays `M_rownnz`, `M_rowadr`, `M_colind`): what `mj_crb`,
    /// `mj_factorI` and `mj_solveLD` index with. The rows of simple dofs
    /// ([`Model::simple_bodies`]) hold only their diagonal, as MuJoCo's do
    /// ([`MjLayout::with_simple`]). Derived from `dof_parent` and the simple flags on first use.
    ///
    /// # Panics
    /// Only for a model whose `dof_parent` was corrupted by hand after it was built (every
    /// checked entry rejects such a model first, through [`Model::check_structure`]).
    pub fn mj_layout(&self) -> &MjLayout {
        self.mj_layout_cache.0.get_or_init(|| {
            MjLayout::with_simple(&self.dof_parent, &self.simple_bodies().dof_simplenum)
                .expect("dof_parent was checked when the model was built, and simple dofs have simple descendants")
        })
    }

    /// The layout of the whole ancestor pattern, with no row shortened ([`MjLayout::new`] of
    /// `dof_parent`): MuJoCo's legacy `qM` layout (`dof_Madr`, `nM`) and the pattern of the
    /// velocity derivative `qDeriv` and of `M - h qDeriv` (MuJoCo's `D` pattern, which keeps
    /// the entries of simple dofs: a derivative couples them). Derived on first use.
    ///
    /// # Panics
    /// As [`Model::mj_layout`].
    pub fn mj_layout_tree(&self) -> &MjLayout {
        self.mj_layout_tree_cache
            .0
            .get_or_init(|| MjLayout::new(&self.dof_parent).expect("dof_parent was checked when the model was built"))
    }

    /// MuJoCo's simple-body flags (`body_simple`, `dof_simplenum`; [`simple_bodies`]), computed on
    /// first use.
    pub fn simple_bodies(&self) -> &SimpleBodies {
        self.simple_cache.0.get_or_init(|| simple_bodies(self))
    }

    /// Number of MuJoCo bodies including the world body.
    pub fn mj_nbody(&self) -> usize {
        self.mj_body_last.len()
    }

    /// Number of mocap bodies (MuJoCo's `nmocap`).
    pub fn nmocap(&self) -> usize {
        self.mocap_pos0.len()
    }

    /// The Featherstone body of each mocap body, in mocap-id order.
    pub fn mocap_bodies(&self) -> impl Iterator<Item = usize> + '_ {
        (1..=self.nb).filter(|&i| self.body_mocapid[i].is_some())
    }

    // ANCHOR: x_tree_placed
    /// `X_tree(i)` where a state places body `i`: for the k-th mocap body `mocap[k]` (its pose
    /// input as a transform, [`mocap_xform`]), for every other body the model's `x_tree[i]`.
    /// An empty `mocap` places the mocap bodies at their default poses (their `x_tree`), so
    /// the kinematics of a state without mocap input reads as it always did.
    #[inline(always)]
    pub fn x_tree_placed<'a>(&'a self, i: usize, mocap: &'a [Xform]) -> &'a Xform {
        match self.body_mocapid[i] {
            Some(k) if !mocap.is_empty() => &mocap[k],
            _ => &self.x_tree[i],
        }
    }
    // ANCHOR_END: x_tree_placed

    /// Checks mocap inputs against the model: one `mocap_pos` and one `mocap_quat` per mocap
    /// body, every entry finite and at most `mjMAXVAL` in magnitude, and every quaternion of
    /// positive norm (it is normalized where used, as MuJoCo's `mj_kinematics` normalizes a
    /// copy; MuJoCo would turn a zero quaternion into the identity without a word).
    pub fn check_mocap(&self, mocap_pos: &[[f64; 3]], mocap_quat: &[[f64; 4]]) -> Result<()> {
        for (what, got) in [("mocap_pos", mocap_pos.len()), ("mocap_quat", mocap_quat.len())] {
            if got != self.nmocap() {
                return Err(Error::BadLength {
                    what: what.into(),
                    got,
                    expected: self.nmocap(),
                });
            }
        }
        check_magnitude("mocap_pos", mocap_pos.as_flattened())?;
        check_magnitude("mocap_quat", mocap_quat.as_flattened())?;
        for (k, q) in mocap_quat.iter().enumerate() {
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            if !(n > 1e-12) {
                let body = self
                    .mocap_bodies()
                    .nth(k)
                    .map_or(String::new(), |b| self.body_name[b].clone());
                return Err(Error::InvalidArgument {
                    what: format!("mocap_quat[{k}] (body '{body}')"),
                    why: format!("{q:?} has zero norm and cannot be normalized"),
                });
            }
        }
        Ok(())
    }

    /// The range of dof indices of body i.
    #[inline]
    pub fn dofs(&self, i: usize) -> std::ops::Range<usize> {
        self.v_adr[i]..self.v_adr[i] + self.joints[i].jtype.nv()
    }

    /// MuJoCo's `qpos_spring`: the configuration the springs pull towards, each hinge and slide
    /// at its `springref`, ball and free joints at `qpos0`. Tendon rest lengths not given in the
    /// model are the tendons' lengths here.
    pub fn qpos_spring(&self) -> Vec<f64> {
        let mut q = self.qpos0.as_slice().to_vec();
        for i in 1..=self.nb {
            let j = &self.joints[i];
            if j.jtype.nq() == 1 && j.jtype.nv() == 1 {
                q[self.q_adr[i]] = j.springref;
            }
        }
        q
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

    /// Checks that every sensor names an element of the model (checked by [`Model::validate`]
    /// and by `mbd::mujoco::forward::Forward::new`, which evaluates them).
    pub fn check_sensors(&self) -> Result<()> {
        elements::check_sensors(self)
    }

    /// Checks the structure of the model: `lambda(i) < i`, physical inertias, unit joint axes,
    /// consistent sizes. The builder calls it; call it again after editing fields by hand.
    pub fn validate(&self) -> Result<()> {
        self.check_structure()?;
        self.check_options()?;
        self.check_sensors()?;
        for i in 1..=self.nb {
            let name = self.body_name[i].clone();
            if self.lambda[i] >= i {
                return Err(Error::BadParent {
                    body: i,
                    name,
                    parent: self.lambda[i],
                });
            }
            let big = |x: &f64| x.is_finite() && x.abs() > MJ_MAXVAL;
            let inertia = &self.inertia[i];
            if big(&inertia.m) || inertia.h.iter().any(big) || inertia.ibar.iter().any(big) {
                return Err(Error::BadInertia {
                    body: i,
                    name,
                    why: format!(
                        "mass {:e}, first moment or rotational inertia exceeds mjMAXVAL = 1e10",
                        inertia.m
                    ),
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
            let e = &self.x_tree[i].e;
            let off = (e.transpose() * e - crate::spatial::Mat3::identity()).amax();
            if !(off <= 1e-6) || !(e.determinant() > 0.0) {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: format!(
                        "X_tree's rotation is not a rotation (max |E^T E - 1| = {off:.3e}, det E = {:.3e})",
                        e.determinant()
                    ),
                });
            }
            let (_, r) = self.x_tree[i].pose();
            if r.iter().any(big) {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: format!("X_tree position {:?} exceeds mjMAXVAL = 1e10", r.as_slice()),
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
            let pitch = match j.jtype {
                JointType::Helical { pitch, .. } => pitch,
                _ => 0.0,
            };
            let params = [j.stiffness, j.damping, j.armature, j.frictionloss, pitch];
            if j.pos.iter().any(big) || j.range.iter().any(big) || params.iter().any(big) {
                return Err(Error::BadJoint {
                    body: i,
                    name,
                    why: "anchor, range, pitch, stiffness, damping, armature or frictionloss exceeds mjMAXVAL = 1e10"
                        .into(),
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
            if let Some([lo, hi]) = j.actfrcrange {
                let scalar = j.jtype.nq() == 1 && j.jtype.nv() == 1;
                if !scalar || !(lo < hi) || big(&lo) || big(&hi) {
                    return Err(Error::BadJoint {
                        body: i,
                        name,
                        why: format!(
                            "actuator force range [{lo}, {hi}]: needs lo < hi, within mjMAXVAL, on a hinge or slide joint"
                        ),
                    });
                }
            }
            let g = self.body_gravcomp[i];
            if !g.is_finite() || big(&g) {
                return Err(Error::BadInertia {
                    body: i,
                    name,
                    why: format!("gravcomp {g} must be finite and within mjMAXVAL"),
                });
            }
        }
        for (k, lj) in self.loops.iter().enumerate() {
            lj.validate(self.nb, k)?;
        }
        self.check_mocap(&self.mocap_pos0, &self.mocap_quat0)
            .map_err(|e| rename_mocap(e, "the default pose"))?;
        self.check_qpos(self.qpos0.as_slice()).map_err(|e| rename(e, "qpos0"))?;
        self.validate_elements()
    }

    /// Checks sites, tendons and actuators: indices in range, finite parameters.
    fn validate_elements(&self) -> Result<()> {
        let bad = |kind: &str, index: usize, name: &str, why: String| Error::BadElement {
            kind: kind.into(),
            index,
            name: name.into(),
            why,
        };
        let scalar_joint =
            |j: usize| j >= 1 && j <= self.nb && self.joints[j].jtype.nq() == 1 && self.joints[j].jtype.nv() == 1;
        for (k, s) in self.sites.iter().enumerate() {
            if s.body > self.nb || !s.pos.iter().chain(s.quat.iter()).all(|x| x.is_finite()) {
                return Err(bad(
                    "site",
                    k,
                    &s.name,
                    format!("body {} must be <= nb and the pose finite", s.body),
                ));
            }
        }
        for (k, g) in self.geoms.iter().enumerate() {
            if g.material.is_some_and(|m| m >= self.materials.len()) {
                return Err(Error::BadGeom {
                    geom: k,
                    name: g.name.clone(),
                    why: format!(
                        "material {:?} is not one of the {} materials",
                        g.material,
                        self.materials.len()
                    ),
                });
            }
        }
        for (k, t) in self.tendons.iter().enumerate() {
            let params = [
                t.stiffness,
                t.damping,
                t.springlength[0],
                t.springlength[1],
                t.armature,
                t.range[0],
                t.range[1],
            ];
            if !params.iter().all(|x| x.is_finite()) || t.stiffness < 0.0 || t.damping < 0.0 {
                return Err(bad(
                    "tendon",
                    k,
                    &t.name,
                    "stiffness and damping must be finite and >= 0".into(),
                ));
            }
            if let Some([lo, hi]) = t.actfrcrange {
                if !(lo < hi && lo <= 0.0 && hi >= 0.0 && lo >= -MJ_MAXVAL && hi <= MJ_MAXVAL) {
                    return Err(bad(
                        "tendon",
                        k,
                        &t.name,
                        format!("actuator force range [{lo}, {hi}]: needs lo < hi, lo <= 0 <= hi, within mjMAXVAL"),
                    ));
                }
            }
            match &t.kind {
                TendonKind::Fixed { joints } => {
                    if let Some(&(j, _)) = joints.iter().find(|&&(j, c)| !scalar_joint(j) || !c.is_finite()) {
                        return Err(bad(
                            "tendon",
                            k,
                            &t.name,
                            format!("joint {j} must be a hinge or slide with a finite coefficient"),
                        ));
                    }
                }
                TendonKind::Spatial { path } => {
                    for w in path {
                        let ok = match *w {
                            TendonWrap::Site(s) => s < self.sites.len(),
                            TendonWrap::Geom { geom, sidesite } => {
                                geom < self.geoms.len() && sidesite.is_none_or(|s| s < self.sites.len())
                            }
                            TendonWrap::Pulley { divisor } => divisor > 0.0 && divisor.is_finite(),
                        };
                        if !ok {
                            return Err(bad("tendon", k, &t.name, format!("path element {w:?} is out of range")));
                        }
                    }
                }
            }
        }
        for (k, a) in self.actuators.iter().enumerate() {
            let trn_ok = match a.trn {
                Transmission::Joint(j) | Transmission::JointInParent(j) => (1..=self.nb).contains(&j),
                Transmission::Tendon(t) => t < self.tendons.len(),
                Transmission::SliderCrank { crank, slider } => {
                    crank < self.sites.len() && slider < self.sites.len() && a.cranklength > 0.0
                }
                Transmission::Site { site, refsite } => {
                    site < self.sites.len() && refsite.is_none_or(|r| r < self.sites.len())
                }
            };
            let finite = a
                .gear
                .iter()
                .chain(&a.gainprm)
                .chain(&a.biasprm)
                .chain(&a.dynprm)
                .all(|x| x.is_finite());
            if !trn_ok || !finite {
                return Err(bad(
                    "actuator",
                    k,
                    &a.name,
                    "its transmission must name a joint, tendon or site of the model (a slider-crank a positive cranklength) and its parameters be finite".into(),
                ));
            }
        }
        Ok(())
    }

    /// Whether equality constraint `k` is active in the reference state ([`Model::eq_active0`],
    /// true where the vector has no entry).
    pub fn eq_active0_of(&self, k: usize) -> bool {
        self.eq_active0.get(k).copied().unwrap_or(true)
    }

    /// The equality constraints active in the reference state ([`Model::eq_active0_of`]), in
    /// order: what a formulation that cannot switch constraints (Featherstone's loop joints,
    /// SPOOK's joints) builds.
    pub fn active0_equalities(&self) -> impl Iterator<Item = &Equality> {
        self.equality
            .iter()
            .enumerate()
            .filter(|&(k, _)| self.eq_active0_of(k))
            .map(|(_, eq)| eq)
    }

    /// The structural checks of [`Model::validate`], cheap enough (`O(nb + nv)`, no
    /// arithmetic) for every checked entry to run through [`Model::check_state`]: the per-body
    /// vectors have length nb + 1, `lambda(i) < i`, and `q_adr`, `v_adr`, `nq`, `nv`,
    /// `dof_body`, `dof_parent` agree with the joints, so that every walk towards the root ends
    /// and every slice the algorithms take is in range, even in a model edited by hand.
    pub fn check_structure(&self) -> Result<()> {
        let n1 = self.nb + 1;
        for (what, len) in [
            ("lambda", self.lambda.len()),
            ("joints", self.joints.len()),
            ("x_tree", self.x_tree.len()),
            ("inertia", self.inertia.len()),
            ("body_name", self.body_name.len()),
            ("body_gravcomp", self.body_gravcomp.len()),
            ("body_mocapid", self.body_mocapid.len()),
        ] {
            if len != n1 {
                return Err(Error::BadLength {
                    what: what.into(),
                    got: len,
                    expected: n1,
                });
            }
        }
        let (mut nq, mut nv) = (0, 0);
        for i in 1..=self.nb {
            if self.lambda[i] >= i {
                return Err(Error::BadParent {
                    body: i,
                    name: self.body_name[i].clone(),
                    parent: self.lambda[i],
                });
            }
            let ok = self.q_adr.get(i) == Some(&nq) && self.v_adr.get(i) == Some(&nv);
            if !ok {
                return Err(Error::BadJoint {
                    body: i,
                    name: self.body_name[i].clone(),
                    why: format!("q_adr / v_adr do not follow the joints (expected {nq} / {nv})"),
                });
            }
            nq += self.joints[i].jtype.nq();
            nv += self.joints[i].jtype.nv();
        }
        for (what, got, expected) in [
            ("nq", self.nq, nq),
            ("nv", self.nv, nv),
            ("qpos0", self.qpos0.len(), nq),
            ("dof_body", self.dof_body.len(), nv),
            ("dof_parent", self.dof_parent.len(), nv),
        ] {
            if got != expected {
                return Err(Error::BadLength {
                    what: what.into(),
                    got,
                    expected,
                });
            }
        }
        for (d, p) in self.dof_parent.iter().enumerate() {
            if matches!(p, Some(p) if *p >= d) || self.dof_body[d] > self.nb {
                return Err(Error::BadParent {
                    body: self.dof_body[d].min(self.nb),
                    name: format!("dof {d}"),
                    parent: p.unwrap_or(0),
                });
            }
        }
        self.check_mocap_structure()
    }

    /// The mocap part of [`Model::check_structure`]: one default pose per mocap body, the ids
    /// `0..nmocap` each on one body, in body order, and every mocap body a child of the base with
    /// a fixed joint (MuJoCo's "mocap body is not a fixed child of world").
    fn check_mocap_structure(&self) -> Result<()> {
        let nmocap = self.mocap_pos0.len();
        if self.mocap_quat0.len() != nmocap {
            return Err(Error::BadLength {
                what: "mocap_quat0".into(),
                got: self.mocap_quat0.len(),
                expected: nmocap,
            });
        }
        let mut next = 0;
        for i in 1..=self.nb {
            let Some(k) = self.body_mocapid[i] else {
                continue;
            };
            let bad = |why: String| Error::BadJoint {
                body: i,
                name: self.body_name[i].clone(),
                why,
            };
            if k != next {
                return Err(bad(format!(
                    "mocap id {k}: the mocap ids must be 0, 1, ... in body order (expected {next})"
                )));
            }
            if self.lambda[i] != 0 || self.joints[i].jtype != JointType::Fixed {
                return Err(bad(
                    "a mocap body must be a child of the world with a fixed joint".into()
                ));
            }
            next += 1;
        }
        if next != nmocap {
            return Err(Error::BadLength {
                what: "mocap_pos0 (one per mocap body)".into(),
                got: nmocap,
                expected: next,
            });
        }
        Ok(())
    }

    /// The options' checks of [`Model::validate`]: timestep in (0, mjMAXVAL], gravity finite and
    /// at most mjMAXVAL in magnitude.
    fn check_options(&self) -> Result<()> {
        let h = self.opt.timestep;
        if !(h > 0.0 && h <= MJ_MAXVAL) {
            return Err(Error::BadOption {
                option: "timestep".into(),
                why: format!("{h:e} must be positive, finite and at most mjMAXVAL = 1e10"),
            });
        }
        if !self.opt.gravity.iter().all(|g| g.abs() <= MJ_MAXVAL) {
            return Err(Error::BadOption {
                option: "gravity".into(),
                why: format!(
                    "{:?} must be finite and at most mjMAXVAL = 1e10",
                    self.opt.gravity.as_slice()
                ),
            });
        }
        Ok(())
    }

    /// Checks a state the way MuJoCo's `mj_checkPos` / `mj_checkVel` do, and more: `qpos` of
    /// length nq and `qvel` of length nv, every entry finite and at most `mjMAXVAL` = 1e10 in
    /// magnitude ([`Error::TooLarge`] names the entry), and every quaternion of norm in
    /// `(1e-12, mjMAXVAL]` (it is normalized where used).
    pub fn check_state(&self, q: &[f64], qd: &[f64]) -> Result<()> {
        self.check_qpos(q)?;
        check_vector("qvel", qd, self.nv)?;
        check_magnitude("qvel", qd)
    }

    /// The `qpos` half of [`Model::check_state`].
    pub fn check_qpos(&self, q: &[f64]) -> Result<()> {
        self.check_structure()?;
        check_vector("qpos", q, self.nq)?;
        check_magnitude("qpos", q)?;
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

    /// Integrates positions: `q <- q (+) h qd` joint by joint (MuJoCo's `mj_integratePos`),
    /// after checking `q` ([`Model::check_qpos`]), `qd` (length nv, entries finite and at most
    /// mjMAXVAL) and `h` (finite). Fails if the result is not a state [`Model::check_state`]
    /// accepts (an entry non-finite or above mjMAXVAL); `q` is then left unchanged.
    pub fn integrate(&self, q: &mut [f64], qd: &[f64], h: f64) -> Result<()> {
        self.check_qpos(q)?;
        check_vector("qd", qd, self.nv)?;
        check_magnitude("qd", qd)?;
        if !h.is_finite() {
            return Err(Error::InvalidArgument {
                what: "h".into(),
                why: format!("{h} is not finite"),
            });
        }
        let mut out = q.to_vec();
        self.integrate_with(&mut out, qd, h);
        check_magnitude("integrated qpos", &out)?;
        q.copy_from_slice(&out);
        Ok(())
    }

    /// The kernel of [`Model::integrate`], for integrators' inner loops: neither checks nor
    /// allocates; inputs are assumed valid (`q` of length nq, `qd` of length nv, as a checked
    /// entry sized them). Panics if a slice is shorter.
    pub fn integrate_with(&self, q: &mut [f64], qd: &[f64], h: f64) {
        for i in 1..=self.nb {
            let (qs, vs) = (self.qs(i), self.dofs(i));
            integrate_joint(&self.joints[i].jtype, &mut q[qs], &qd[vs], h);
        }
    }

    /// The velocity taking `q1` to `q2` in unit time (MuJoCo's `mj_differentiatePos`, h = 1),
    /// after checking both with [`Model::check_qpos`]. Fails with [`Error::Overflow`] if the
    /// difference is not finite.
    pub fn difference(&self, q1: &[f64], q2: &[f64]) -> Result<DVector<f64>> {
        self.check_qpos(q1).map_err(|e| rename(e, "q1"))?;
        self.check_qpos(q2).map_err(|e| rename(e, "q2"))?;
        let out = self.difference_with(q1, q2);
        crate::error::check_output("difference", out.as_slice())?;
        Ok(out)
    }

    /// The kernel of [`Model::difference`]: inputs are assumed valid (both of length nq).
    /// Panics if a slice is shorter.
    pub fn difference_with(&self, q1: &[f64], q2: &[f64]) -> DVector<f64> {
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

    /// Normalizes the quaternions in `q` in place, after checking it with [`Model::check_qpos`]
    /// (so every quaternion has a positive finite norm).
    pub fn normalize_quaternions(&self, q: &mut [f64]) -> Result<()> {
        self.check_qpos(q)?;
        self.normalize_quaternions_with(q);
        Ok(())
    }

    /// The kernel of [`Model::normalize_quaternions`]: inputs are assumed valid (`q` of length
    /// nq); a quaternion of zero or non-finite norm is left as it is. Panics if `q` is shorter.
    pub fn normalize_quaternions_with(&self, q: &mut [f64]) {
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

// ANCHOR: mocap_xform
/// The placement of a mocap body at position `pos` and orientation `quat` (MuJoCo's
/// `mocap_pos[k]`, `mocap_quat[k]`) as the transform from world to body coordinates, `X =
/// (E, r)` with `E = R(q)^T` and `r = pos`. The quaternion is normalized first, in a copy, as
/// `mj_kinematics` does (the input itself is never changed; a zero quaternion, which
/// [`Model::check_mocap`] refuses, is taken as the identity).
pub fn mocap_xform(pos: &[f64; 3], quat: &[f64; 4]) -> Xform {
    let mut q = *quat;
    if !crate::spatial::quat_normalize(&mut q) {
        q = [1.0, 0.0, 0.0, 0.0];
    }
    Xform::from_pose(&crate::spatial::quat_to_mat(&q), &Vec3::from(*pos))
}

/// [`mocap_xform`] of every mocap body into `out` (cleared first; no allocation once it has
/// `nmocap` entries of capacity).
pub fn mocap_xforms_into(mocap_pos: &[[f64; 3]], mocap_quat: &[[f64; 4]], out: &mut Vec<Xform>) {
    out.clear();
    out.extend(mocap_pos.iter().zip(mocap_quat).map(|(p, q)| mocap_xform(p, q)));
}
// ANCHOR_END: mocap_xform

/// An error about the mocap inputs renamed as the model's `what` (its default pose).
fn rename_mocap(e: Error, what: &str) -> Error {
    match e {
        Error::NonFinite { what: w, index, value } => Error::NonFinite {
            what: format!("{w} ({what})"),
            index,
            value,
        },
        Error::TooLarge { what: w, index, value } => Error::TooLarge {
            what: format!("{w} ({what})"),
            index,
            value,
        },
        Error::InvalidArgument { what: w, why } => Error::InvalidArgument {
            what: format!("{w} ({what})"),
            why,
        },
        other => other,
    }
}

/// An error about `qpos` renamed to the argument `name` (for functions taking two positions).
fn rename(e: Error, name: &str) -> Error {
    match e {
        Error::BadLength { got, expected, .. } => Error::BadLength {
            what: name.into(),
            got,
            expected,
        },
        Error::NonFinite { index, value, .. } => Error::NonFinite {
            what: name.into(),
            index,
            value,
        },
        Error::TooLarge { index, value, .. } => Error::TooLarge {
            what: name.into(),
            index,
            value,
        },
        Error::BadQuaternion { joint, index, .. } => Error::BadQuaternion {
            what: name.into(),
            joint,
            index,
        },
        other => other,
    }
}
