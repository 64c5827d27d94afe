//! MuJoCo's `mj_collision`: which geoms may touch (the broad phase), their contacts (the narrow
//! phase of [`crate::collision`]) and the parameters each contact carries (`mj_contactParam`).
//! Book chapter: "Collision detection".
//!
//! | stage | MuJoCo | here |
//! |---|---|---|
//! | geom world poses | `mj_kinematics` (`geom_xpos`, `geom_xmat`) | [`geom_poses`] |
//! | body filter | `filterBodyPair` (weld bodies, parent, `<exclude>`) | [`weld_ids`], [`may_collide`] |
//! | geom filter | `filterBitmask` | [`may_collide`] |
//! | pairs in MuJoCo's order | `mj_broadphase` + merging of `<pair>`s by signature | [`collision_pairs`] |
//! | narrow phase | `mjCOLLISIONFUNC` | [`crate::collision::collide`] |
//! | parameters | `mj_contactParam`, `mj_setContact` | [`contact_param`] |
//! | all of it | `mj_collision` | [`collide_all`] |

use crate::collision::convex::ConvexScratch;
use crate::collision::{collide_with_scratch, mj_type, Assets, Contact, GeomPose};
use crate::error::{Error, Result};
use crate::model::constants::{mjMINMU, mjMINVAL};
use crate::model::{mj_body_parentid, GeomType, Model};
use crate::spatial::{quat_to_mat, Mat3, Vec3, Xform};

use super::Data;

/// One contact as MuJoCo stores it in `mjData.contact` (`mjContact`): the geometry of
/// [`crate::collision::Contact`] plus the parameters mixed from the two geoms (or taken from an
/// explicit `<pair>`), which the constraint rows read.
#[derive(Clone, Debug, PartialEq)]
pub struct MjContact {
    /// The two geoms (indices into `model.geoms`); the normal points from `geom[0]` to `geom[1]`.
    pub geom: [usize; 2],
    /// Point midway between the surfaces (world).
    pub pos: Vec3,
    /// Rows: normal, tangent 1, tangent 2 (MuJoCo's `frame`, 9 numbers row by row).
    pub frame: Mat3,
    /// Signed distance (negative: penetration).
    pub dist: f64,
    /// Contact dimensionality: 1, 3, 4 or 6.
    pub dim: usize,
    /// Friction (tangent 1, tangent 2, spin, roll 1, roll 2), each at least `mjMINMU`.
    pub friction: [f64; 5],
    /// `solref` of the normal direction.
    pub solref: [f64; 2],
    /// `solreffriction` (zeros: use `solref`).
    pub solreffriction: [f64; 2],
    /// `solimp`.
    pub solimp: [f64; 5],
    /// The detection distance: the narrow phase reports the contact when `dist <= margin`. MuJoCo
    /// 4.0 detects at (its margin) + (its gap), so this field holds that sum; see
    /// [`MjContact::includemargin`].
    pub margin: f64,
    /// MuJoCo's gap: contacts with `includemargin <= dist <= margin` are kept in the list but make
    /// no constraint rows ([`MjContact::exclude`]).
    pub gap: f64,
    /// `efc_address`: the contact's first constraint row, `None` when it has none.
    pub efc_address: Option<usize>,
}

impl MjContact {
    /// MuJoCo's `mjContact.includemargin = margin - gap`: the distance below which the contact
    /// makes constraint rows (it equals MuJoCo 4.0's margin of the pair, the sum of the two geoms'
    /// margins or the `<pair>`'s margin).
    pub fn includemargin(&self) -> f64 {
        self.margin - self.gap
    }

    /// MuJoCo's `mjContact.exclude`: the contact lies in the gap (`dist >= includemargin`) and
    /// makes no constraint rows.
    pub fn exclude(&self) -> bool {
        self.dist >= self.includemargin()
    }

    /// The contact normal (first row of the frame), from `geom[0]` into `geom[1]`.
    pub fn normal(&self) -> Vec3 {
        self.frame.row(0).transpose()
    }
}

/// MuJoCo's `body_weldid`: for every MuJoCo body, the nearest body on its path to the world
/// (itself included) that has degrees of freedom or is a mocap body (MuJoCo 4.0: a mocap body
/// is the root of its own weld group); 0 (the world) when there is none. Bodies with the same
/// weld id move as one rigid body and never collide with each other.
pub fn weld_ids(model: &Model, parents: &[usize]) -> Vec<usize> {
    let nb = model.mj_nbody();
    let mut root = vec![false; nb];
    for fb in 1..=model.nb {
        root[model.mj_body[fb]] |= model.joints[fb].jtype.nv() > 0 || model.body_mocapid[fb].is_some();
    }
    let mut weld = vec![0; nb];
    // parents come before children (parents[b] < b)
    for b in 1..nb {
        weld[b] = if root[b] { b } else { weld[parents[b]] };
    }
    weld
}

/// The filter state of a model: MuJoCo body of each geom, parents, weld ids, and which weld
/// roots can move (have dofs: not the world, not a mocap body).
struct Bodies {
    parents: Vec<usize>,
    weld: Vec<usize>,
    moves: Vec<bool>,
}

impl Bodies {
    fn new(model: &Model) -> Self {
        let parents = mj_body_parentid(model);
        let weld = weld_ids(model, &parents);
        let mut moves = vec![false; model.mj_nbody()];
        for fb in 1..=model.nb {
            moves[model.mj_body[fb]] |= model.joints[fb].jtype.nv() > 0;
        }
        Bodies { parents, weld, moves }
    }

    // ANCHOR: body_filter
    /// MuJoCo's `filterBodyPair`: false when two MuJoCo bodies are welded together (same weld
    /// id: the same body, or static bodies both welded to the world, or bodies fixed to one
    /// mocap body), when neither weld body can move (both without dofs: the world and mocap
    /// bodies, which no contact force could move; MuJoCo 4.0), or when one's weld body is the
    /// parent of the other's weld body (neither welded to the world).
    fn bodies_may_collide(&self, b1: usize, b2: usize) -> bool {
        let (w1, w2) = (self.weld[b1], self.weld[b2]);
        if w1 == w2 || !(self.moves[w1] || self.moves[w2]) {
            return false;
        }
        let (pw1, pw2) = (self.weld[self.parents[w1]], self.weld[self.parents[w2]]);
        !(w1 != 0 && w2 != 0 && (w1 == pw2 || w2 == pw1))
    }
    // ANCHOR_END: body_filter
}

// ANCHOR: filter
/// Whether MuJoCo's broad phase would consider geoms `a` and `b` (indices into `model.geoms`)
/// when no `<pair>` names them: bitmasks compatible (`filterBitmask`: `contype_a &
/// conaffinity_b` or `contype_b & conaffinity_a`), bodies not welded together and not
/// parent and child ([`weld_ids`]), body pair not in `<exclude>`, and not two planes. `parents`
/// is [`mj_body_parentid`].
pub fn may_collide(model: &Model, parents: &[usize], a: usize, b: usize) -> bool {
    let mut bodies = Bodies::new(model);
    bodies.parents = parents.to_vec();
    bodies.weld = weld_ids(model, parents);
    geoms_may_collide(model, &bodies, a, b)
}
// ANCHOR_END: filter

fn geoms_may_collide(model: &Model, bodies: &Bodies, a: usize, b: usize) -> bool {
    let (ga, gb) = (&model.geoms[a], &model.geoms[b]);
    let masks = (ga.contype & gb.conaffinity) != 0 || (gb.contype & ga.conaffinity) != 0;
    let (ba, bb) = (model.mj_body[ga.body], model.mj_body[gb.body]);
    masks
        && bodies.bodies_may_collide(ba, bb)
        && !excluded(model, ba, bb)
        && !(ga.gtype == GeomType::Plane && gb.gtype == GeomType::Plane)
}

/// Whether `<exclude>` names the MuJoCo body pair.
fn excluded(model: &Model, b1: usize, b2: usize) -> bool {
    model.contact_excludes.iter().any(|&(x, y)| {
        let (x, y) = (model.mj_body[x], model.mj_body[y]);
        (x, y) == (b1, b2) || (x, y) == (b2, b1)
    })
}

/// Every pair `(a, b)`, `a < b`, that passes [`may_collide`] (no explicit pairs).
pub fn candidate_pairs(model: &Model) -> Vec<(usize, usize)> {
    let bodies = Bodies::new(model);
    let n = model.geoms.len();
    let mut out = vec![];
    for a in 0..n {
        for b in a + 1..n {
            if geoms_may_collide(model, &bodies, a, b) {
                out.push((a, b));
            }
        }
    }
    out
}

/// One geom pair for the narrow phase: the two geoms in MuJoCo's type order (lower `mjtGeom`
/// first) and the `<pair>` it came from, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeomPair {
    /// The geoms; `geom[0]` has the lower type (ties keep the broad phase's order).
    pub geom: [usize; 2],
    /// Index into `model.contact_pairs` of an explicit `<pair>`.
    pub pair: Option<usize>,
}

// ANCHOR: pairs
/// The geom pairs of `mj_collision`, in MuJoCo's order. MuJoCo walks body pairs `(b1 < b2)` in
/// increasing signature `b1 * 2^16 + b2`; before each it emits the `<pair>`s whose signature (the
/// bodies of their geoms, smaller first) is not larger (they are sorted by signature, stably);
/// then, unless the body pair is excluded, every geom of `b1` against every geom of `b2` in geom
/// order that passes the filters and that no `<pair>` of the same signature already names. The
/// `<pair>`s left over come last. Each pair is put in type order (`pushGeomGeom`).
pub fn collision_pairs(model: &Model) -> Vec<GeomPair> {
    let bodies = Bodies::new(model);
    let nb = model.mj_nbody();
    let body_of = |g: usize| model.mj_body[model.geoms[g].body];
    let sig = |b1: usize, b2: usize| (b1.min(b2) << 16) + b1.max(b2);
    let mut explicit: Vec<(usize, usize)> = model
        .contact_pairs
        .iter()
        .enumerate()
        .map(|(k, p)| (sig(body_of(p.geom1), body_of(p.geom2)), k))
        .collect();
    explicit.sort_by_key(|&(s, _)| s); // stable, as MuJoCo's compiler
    let mut by_body: Vec<Vec<usize>> = vec![vec![]; nb];
    for (g, geom) in model.geoms.iter().enumerate() {
        by_body[model.mj_body[geom.body]].push(g);
    }
    let ordered = |g1: usize, g2: usize, pair: Option<usize>| {
        let swap = mj_type(model.geoms[g1].gtype) > mj_type(model.geoms[g2].gtype);
        GeomPair {
            geom: if swap { [g2, g1] } else { [g1, g2] },
            pair,
        }
    };
    let mut out = vec![];
    let mut next = 0;
    for b1 in 0..nb {
        for b2 in b1 + 1..nb {
            if by_body[b1].is_empty() || by_body[b2].is_empty() || !bodies.bodies_may_collide(b1, b2) {
                continue;
            }
            let s = sig(b1, b2);
            let start = next;
            while next < explicit.len() && explicit[next].0 <= s {
                let p = &model.contact_pairs[explicit[next].1];
                out.push(ordered(p.geom1, p.geom2, Some(explicit[next].1)));
                next += 1;
            }
            if excluded(model, b1, b2) {
                continue;
            }
            let named = |g1: usize, g2: usize| {
                explicit[start..next].iter().any(|&(ps, k)| {
                    let p = &model.contact_pairs[k];
                    ps == s && ((p.geom1, p.geom2) == (g1, g2) || (p.geom1, p.geom2) == (g2, g1))
                })
            };
            for &g1 in &by_body[b1] {
                for &g2 in &by_body[b2] {
                    if geoms_may_collide(model, &bodies, g1, g2) && !named(g1, g2) {
                        out.push(ordered(g1, g2, None));
                    }
                }
            }
        }
    }
    for &(_, k) in &explicit[next..] {
        let p = &model.contact_pairs[k];
        out.push(ordered(p.geom1, p.geom2, Some(k)));
    }
    out
}
// ANCHOR_END: pairs

/// The mixed contact parameters of a geom pair: condim, friction (5), solref, solimp.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactParam {
    /// Contact dimensionality.
    pub dim: usize,
    /// [slide, slide, spin, roll, roll], before clamping to `mjMINMU`.
    pub friction: [f64; 5],
    /// Mixed `solref`.
    pub solref: [f64; 2],
    /// Mixed `solimp`.
    pub solimp: [f64; 5],
}

// ANCHOR: contact_param
/// MuJoCo's `mj_contactParam` for two geoms. The geom with the higher `priority` gives all its
/// parameters. At equal priority: condim the larger, friction the element-wise maximum, and
/// `solref`, `solimp` the weighted mean with weight `mix = solmix_1 / (solmix_1 + solmix_2)`
/// (0.5 when both weights are below `mjMINVAL`, 0 or 1 when only one is); a `solref` in direct
/// form (either first entry not positive) takes the element-wise minimum instead. The three
/// geom frictions (slide, spin, roll) expand to five: [slide, slide, spin, roll, roll].
pub fn contact_param(model: &Model, g1: usize, g2: usize) -> ContactParam {
    let (a, b) = (&model.geoms[g1], &model.geoms[g2]);
    let (dim, fri, solref, solimp) = if a.priority != b.priority {
        let w = if a.priority > b.priority { a } else { b };
        (w.condim, w.friction, w.params.solref, w.params.solimp)
    } else {
        let mix = if a.solmix >= mjMINVAL && b.solmix >= mjMINVAL {
            a.solmix / (a.solmix + b.solmix)
        } else if a.solmix < mjMINVAL && b.solmix < mjMINVAL {
            0.5
        } else if a.solmix < mjMINVAL {
            0.0
        } else {
            1.0
        };
        let (r1, r2) = (a.params.solref, b.params.solref);
        let solref = if r1[0] > 0.0 && r2[0] > 0.0 {
            [0, 1].map(|i| mix * r1[i] + (1.0 - mix) * r2[i])
        } else {
            [0, 1].map(|i| r1[i].min(r2[i]))
        };
        let solimp = [0, 1, 2, 3, 4].map(|i| mix * a.params.solimp[i] + (1.0 - mix) * b.params.solimp[i]);
        let fri = [0, 1, 2].map(|i| a.friction[i].max(b.friction[i]));
        (a.condim.max(b.condim), fri, solref, solimp)
    };
    ContactParam {
        dim,
        friction: [fri[0], fri[0], fri[1], fri[2], fri[2]],
        solref,
        solimp,
    }
}
// ANCHOR_END: contact_param

/// World pose of every geom (MuJoCo's `geom_xpos`, `geom_xmat`) from the body transforms
/// `d.x_0` (`i_X_0`, filled by [`super::forward_smooth`]): the geom's `pos`/`quat` are in its
/// body's frame, so `xpos = r_i + E_i^T pos`, `xmat = E_i^T R(quat)`.
pub fn geom_poses(model: &Model, d: &Data) -> Vec<GeomPose> {
    let mut out = Vec::with_capacity(model.geoms.len());
    geom_poses_into(model, d, &mut out);
    out
}

/// [`geom_poses`] into `out` (cleared first, its capacity kept).
pub fn geom_poses_into(model: &Model, d: &Data, out: &mut Vec<GeomPose>) {
    out.clear();
    out.extend(
        model
            .geoms
            .iter()
            .map(|g| geom_pose(&d.x_0[g.body], &g.pos, &quat_to_mat(&g.quat))),
    );
}

/// The world pose of a geom at `pos` with rotation `rot` in the frame of a body whose transform
/// is `x` (`i_X_0`): `xpos = r + E^T pos`, `xmat = E^T rot`, each entry summed in the order
/// `E^T`'s row times the column (the products `x.e.transpose() * pos` and `x.e.transpose() *
/// rot` form, without a transposed copy of `E`).
fn geom_pose(x: &Xform, pos: &Vec3, rot: &Mat3) -> GeomPose {
    let e = &x.e;
    // (E^T v)_i = E_0i v_0 + E_1i v_1 + E_2i v_2
    let et = |v: &Vec3| {
        Vec3::new(
            e[(0, 0)] * v[0] + e[(1, 0)] * v[1] + e[(2, 0)] * v[2],
            e[(0, 1)] * v[0] + e[(1, 1)] * v[1] + e[(2, 1)] * v[2],
            e[(0, 2)] * v[0] + e[(1, 2)] * v[1] + e[(2, 2)] * v[2],
        )
    };
    let col = |k: usize| Vec3::new(rot[(0, k)], rot[(1, k)], rot[(2, k)]);
    GeomPose {
        pos: x.r + et(pos),
        rot: Mat3::from_columns(&[et(&col(0)), et(&col(1)), et(&col(2))]),
    }
}

/// The number of sizes a geom type uses (plane: none for collision).
fn sizes_used(t: GeomType) -> usize {
    match t {
        GeomType::Plane | GeomType::HField(_) | GeomType::Mesh(_) => 0,
        GeomType::Sphere => 1,
        GeomType::Capsule | GeomType::Cylinder => 2,
        GeomType::Box | GeomType::Ellipsoid => 3,
    }
}

// ANCHOR: check
/// The checks at the door of [`collide_all`]: every geom has condim 1, 3, 4 or 6, finite
/// non-negative frictions, positive finite sizes where its type uses them, finite margin and
/// gap, finite solmix; every `<pair>` names existing geoms and has a valid condim and friction.
pub fn check_contact_model(model: &Model) -> Result<()> {
    for (k, g) in model.geoms.iter().enumerate() {
        let bad = |why: String| Error::BadGeom {
            geom: k,
            name: g.name.clone(),
            why,
        };
        if ![1, 3, 4, 6].contains(&g.condim) {
            return Err(bad(format!("condim = {} must be 1, 3, 4 or 6", g.condim)));
        }
        if let Some(f) = g.friction.iter().find(|f| !(f.is_finite() && **f >= 0.0)) {
            return Err(bad(format!(
                "friction {f} must be finite and non-negative (friction = {:?})",
                g.friction
            )));
        }
        if let Some(i) = (0..sizes_used(g.gtype)).find(|&i| !(g.size[i].is_finite() && g.size[i] > 0.0)) {
            return Err(bad(format!(
                "size[{i}] = {} must be positive and finite for a {:?}",
                g.size[i], g.gtype
            )));
        }
        match g.gtype {
            GeomType::Mesh(m) if m >= model.meshes.len() => {
                return Err(bad(format!(
                    "mesh index {m} out of range ({} meshes)",
                    model.meshes.len()
                )))
            }
            GeomType::HField(h) if h >= model.hfields.len() => {
                return Err(bad(format!(
                    "height-field index {h} out of range ({} hfields)",
                    model.hfields.len()
                )))
            }
            _ => {}
        }
        if !(g.margin.is_finite() && g.gap.is_finite() && g.solmix.is_finite()) {
            return Err(bad(format!(
                "margin {}, gap {} and solmix {} must be finite",
                g.margin, g.gap, g.solmix
            )));
        }
    }
    for (k, p) in model.contact_pairs.iter().enumerate() {
        let bad = |why: String| Error::BadContactPair {
            pair: k,
            name: p.name.clone(),
            why,
        };
        if p.geom1 >= model.geoms.len() || p.geom2 >= model.geoms.len() {
            return Err(bad(format!("geom index {} or {} out of range", p.geom1, p.geom2)));
        }
        if ![1, 3, 4, 6].contains(&p.condim) {
            return Err(bad(format!("condim = {} must be 1, 3, 4 or 6", p.condim)));
        }
        if p.friction.iter().any(|f| !(f.is_finite() && *f >= 0.0)) {
            return Err(bad(format!(
                "friction {:?} must be finite and non-negative",
                p.friction
            )));
        }
        if !(p.margin.is_finite() && p.gap.is_finite()) {
            return Err(bad(format!("margin {} and gap {} must be finite", p.margin, p.gap)));
        }
    }
    Ok(())
}
// ANCHOR_END: check

/// Whether `<option><flag name="disable">` turns off MuJoCo's flag `name` (`contact`,
/// `constraint`).
fn disabled(model: &Model, name: &str) -> bool {
    model.opt.flags.iter().any(|(n, on)| n == name && !on)
}

// ANCHOR: bound
/// The radius of a sphere about the geom's centre that holds the whole geom (MuJoCo's
/// `geom_rbound`): sphere `r`, capsule `r + h`, cylinder `sqrt(r^2 + h^2)`, box `|size|`,
/// ellipsoid the largest semi-axis, mesh the farthest vertex. `None` for a plane (infinite: the
/// filter measures the other geom's height above it instead) and for a height field (never
/// filtered here).
pub fn bounding_radius(model: &Model, g: usize) -> Option<f64> {
    let geom = &model.geoms[g];
    let s = &geom.size;
    match geom.gtype {
        GeomType::Plane | GeomType::HField(_) => None,
        GeomType::Sphere => Some(s[0]),
        GeomType::Capsule => Some(s[0] + s[1]),
        GeomType::Cylinder => Some(s[0].hypot(s[1])),
        GeomType::Box => Some(Vec3::new(s[0], s[1], s[2]).norm()),
        GeomType::Ellipsoid => Some(s[0].max(s[1]).max(s[2])),
        GeomType::Mesh(k) => model.meshes.get(k).map(|m| {
            let far = |v: &[Vec3]| v.iter().map(|x| x.norm()).fold(0.0, f64::max);
            far(&m.vertices).max(far(&m.hull.vertices))
        }),
    }
}

/// MuJoCo's bounding-sphere filter (`mj_filterSphere`) for one geom pair, with everything that
/// does not depend on the state added up once per model ([`Collider::new`]). A pair it
/// rejects would give the narrow phase nothing to report, so the filter changes no result, only
/// the time.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SphereFilter {
    /// Two solids, certainly apart when their centres are farther than `reach = r_1 + r_2 +
    /// margin`: holds `reach^2`, so the test needs no square root.
    Spheres { reach2: f64 },
    /// A plane (first, as in MuJoCo's type order; its normal is its z axis) and a solid,
    /// certainly apart when the solid's centre lies more than `reach = r + margin` above it.
    Plane { reach: f64 },
    /// No bound (a height field): always collided.
    Never,
}

impl SphereFilter {
    /// The filter of a pair of geoms with bounding radii `bound` ([`bounding_radius`]), types
    /// `types` and detection distance `margin`.
    fn new(bound: [Option<f64>; 2], types: [GeomType; 2], margin: f64) -> Self {
        match (bound[0], bound[1]) {
            (Some(r1), Some(r2)) => {
                let reach = r1 + r2 + margin;
                SphereFilter::Spheres { reach2: reach * reach }
            }
            (None, Some(r)) if types[0] == GeomType::Plane => SphereFilter::Plane { reach: margin + r },
            _ => SphereFilter::Never,
        }
    }

    /// True when the two geoms at poses `p1`, `p2` are certainly farther apart than the margin.
    fn far_apart(&self, p1: &GeomPose, p2: &GeomPose) -> bool {
        match *self {
            SphereFilter::Spheres { reach2 } => (p1.pos - p2.pos).norm_squared() > reach2,
            SphereFilter::Plane { reach } => (p2.pos - p1.pos).dot(&p1.rot.column(2)) > reach,
            SphereFilter::Never => false,
        }
    }
}
// ANCHOR_END: bound

/// One geom pair of [`collision_pairs`] with everything about it that does not depend on the
/// state and that only its contacts need: the detection distance, the gap and the mixed
/// parameters.
#[derive(Clone, Debug)]
struct PairConst {
    /// margin + gap: the narrow phase reports contacts with `dist` up to this
    margin: f64,
    gap: f64,
    dim: usize,
    /// clamped to at least `mjMINMU` (`mj_assignFriction`)
    friction: [f64; 5],
    solref: [f64; 2],
    solreffriction: [f64; 2],
    solimp: [f64; 5],
}

/// What the loop over pairs reads for every pair on every call, kept apart from [`PairConst`]
/// (read only for the pairs that reach the narrow phase) so that the loop walks a compact array.
#[derive(Clone, Copy, Debug)]
struct PairTest {
    geom: [usize; 2],
    filter: SphereFilter,
}

/// MuJoCo's `mj_collision` split into what a model fixes and what a state changes. Made once
/// per model ([`Collider::new`]: the checks of [`check_contact_model`], the pairs of
/// [`collision_pairs`] with their margins and mixed parameters, each pair's bounding-sphere
/// reach from [`bounding_radius`]); each call ([`Collider::collide_into`]) then computes the
/// geom poses, drops the pairs the bounding-sphere filter rejects, and runs the narrow phase on
/// the rest, into storage it keeps. [`super::forward::Forward`] keeps one.
#[derive(Clone, Debug)]
pub struct Collider {
    tests: Vec<PairTest>,
    pairs: Vec<PairConst>,
    /// each geom's rotation in its body's frame (`geom_quat` as a matrix), `None` when the geom
    /// sits at its body's origin with the body's axes (its pose is then the body's)
    rot: Vec<Option<Mat3>>,
    /// `<flag contact="disable">` or `constraint="disable"`
    off: bool,
    poses: Vec<GeomPose>,
    found: Vec<Contact>,
    /// the convex pairs' storage (EPA's polytope, the contact patch)
    convex: ConvexScratch,
}

// ANCHOR: collide_all
impl Collider {
    /// The model-constant part of `mj_collision` for `model`, after [`check_contact_model`].
    pub fn new(model: &Model) -> Result<Self> {
        check_contact_model(model)?;
        let bound: Vec<Option<f64>> = (0..model.geoms.len()).map(|g| bounding_radius(model, g)).collect();
        let (tests, pairs) = collision_pairs(model)
            .into_iter()
            .map(|pair| {
                let [g1, g2] = pair.geom;
                let (a, b) = (&model.geoms[g1], &model.geoms[g2]);
                let (margin, gap, p, solreffriction) = match pair.pair {
                    Some(k) => {
                        let cp = &model.contact_pairs[k];
                        let p = ContactParam {
                            dim: cp.condim,
                            friction: cp.friction,
                            solref: cp.params.solref,
                            solimp: cp.params.solimp,
                        };
                        (cp.margin, cp.gap, p, cp.solreffriction)
                    }
                    None => (
                        a.margin + b.margin,
                        a.gap + b.gap,
                        contact_param(model, g1, g2),
                        [0.0; 2],
                    ),
                };
                let test = PairTest {
                    geom: [g1, g2],
                    filter: SphereFilter::new([bound[g1], bound[g2]], [a.gtype, b.gtype], margin + gap),
                };
                let param = PairConst {
                    margin: margin + gap,
                    gap,
                    dim: p.dim,
                    friction: p.friction.map(|f| f.max(mjMINMU)),
                    solref: p.solref,
                    solreffriction,
                    solimp: p.solimp,
                };
                (test, param)
            })
            .unzip();
        Ok(Collider {
            tests,
            pairs,
            rot: model
                .geoms
                .iter()
                .map(|g| (g.pos != Vec3::zeros() || g.quat != [1.0, 0.0, 0.0, 0.0]).then(|| quat_to_mat(&g.quat)))
                .collect(),
            off: disabled(model, "contact") || disabled(model, "constraint"),
            poses: Vec::with_capacity(model.geoms.len()),
            found: Vec::with_capacity(8),
            convex: ConvexScratch::default(),
        })
    }

    /// The geom pairs the narrow phase may see, in MuJoCo's order.
    pub fn pairs(&self) -> impl Iterator<Item = [usize; 2]> + '_ {
        self.tests.iter().map(|p| p.geom)
    }

    /// The contacts at the state whose body transforms `d.x_0` hold, replacing the contents of
    /// `out` (which keeps its capacity: a repeated call allocates nothing once `out` and the
    /// collider's own storage have grown to the scene's size). `model` must be the one
    /// [`Collider::new`] was made for. Errors: [`Error::BadLength`] when `d` was made for
    /// another model.
    pub fn collide_into(&mut self, model: &Model, d: &Data, out: &mut Vec<MjContact>) -> Result<()> {
        if d.x_0.len() != model.nb + 1 || self.rot.len() != model.geoms.len() {
            return Err(Error::BadLength {
                what: "d.x_0".into(),
                got: d.x_0.len(),
                expected: model.nb + 1,
            });
        }
        out.clear();
        if self.off {
            return Ok(());
        }
        // geom_xpos, geom_xmat, as geom_poses
        self.poses.clear();
        self.poses
            .extend(model.geoms.iter().zip(&self.rot).map(|(g, r)| match r {
                Some(r) => geom_pose(&d.x_0[g.body], &g.pos, r),
                None => GeomPose {
                    pos: d.x_0[g.body].r,
                    rot: d.x_0[g.body].e.transpose(),
                },
            }));
        let assets = Assets {
            meshes: &model.meshes,
            hfields: &model.hfields,
        };
        for (test, pair) in self.tests.iter().zip(&self.pairs) {
            let [g1, g2] = test.geom;
            let (p1, p2) = (&self.poses[g1], &self.poses[g2]);
            if test.filter.far_apart(p1, p2) {
                continue;
            }
            let (a, b) = (&model.geoms[g1], &model.geoms[g2]);
            self.found.clear();
            collide_with_scratch(
                &assets,
                &mut self.convex,
                (a.gtype, &a.size, p1),
                (b.gtype, &b.size, p2),
                pair.margin,
                &mut self.found,
            );
            out.extend(self.found.iter().map(|c| MjContact {
                geom: [g1, g2],
                pos: c.pos,
                frame: c.frame,
                dist: c.dist,
                dim: pair.dim,
                friction: pair.friction,
                solref: pair.solref,
                solreffriction: pair.solreffriction,
                solimp: pair.solimp,
                margin: pair.margin,
                gap: pair.gap,
                efc_address: None,
            }));
        }
        Ok(())
    }
}

/// MuJoCo's `mj_collision`: the contacts of the model at the state whose body transforms `d.x_0`
/// hold (run [`super::forward_smooth`] first), in `d.contact`'s order.
///
/// For each pair of [`collision_pairs`]: margin and gap are the `<pair>`'s, or the sums of the
/// two geoms' (MuJoCo 4.0 adds them, `getMargin`/`getGap`); pairs whose bounding spheres are
/// farther apart than margin + gap are skipped (MuJoCo's `mj_filterSphere`); the narrow phase
/// reports contacts with `dist <= margin + gap`; the parameters are the `<pair>`'s or
/// [`contact_param`]'s; the friction is clamped to at least `mjMINMU` (`mj_assignFriction`).
/// The frame is `mju_makeFrame`'s. Nothing when `<flag contact="disable">` or
/// `constraint="disable"`. A [`Collider`] does the same into kept storage.
///
/// Errors: [`Error::BadGeom`] / [`Error::BadContactPair`] from [`check_contact_model`];
/// [`Error::BadLength`] when `d` was made for another model.
pub fn collide_all(model: &Model, d: &Data) -> Result<Vec<MjContact>> {
    let mut out = vec![];
    Collider::new(model)?.collide_into(model, d, &mut out)?;
    Ok(out)
}
// ANCHOR_END: collide_all

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{canned, Geom, GeomType};
    use crate::spatial::Vec3;

    fn geom(body: usize, contype: u32, conaffinity: u32) -> Geom {
        Geom {
            name: String::new(),
            body,
            gtype: GeomType::Sphere,
            size: [0.1, 0.0, 0.0],
            pos: Vec3::zeros(),
            quat: [1.0, 0.0, 0.0, 0.0],
            friction: [1.0, 0.005, 0.0001],
            condim: 3,
            contype,
            conaffinity,
            margin: 0.0,
            gap: 0.0,
            params: Default::default(),
            solmix: 1.0,
            priority: 0,
            group: 0,
            rgba: Geom::RGBA_DEFAULT,
            material: None,
        }
    }

    #[test]
    fn the_three_rules_of_the_filter() {
        // chain of 3: bodies 1-2-3, world 0
        let mut m = canned::chain(3, false);
        m.geoms = vec![
            geom(0, 1, 1),
            geom(1, 1, 1),
            geom(2, 1, 1),
            geom(3, 1, 1),
            geom(3, 2, 2),
        ];
        let pairs = candidate_pairs(&m);
        // world-1 collide (the world's children are not filtered), 1-2 and 2-3 are parent-child,
        // 3-3 same body, geom 4 has an incompatible mask with everything but itself.
        assert_eq!(pairs, vec![(0, 1), (0, 2), (0, 3), (1, 3)]);
    }
}
