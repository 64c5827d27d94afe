//! MuJoCo's `mj_ray`: the first geom a ray meets, among the geoms its filters let through. What
//! a `<rangefinder>` sensor measures. Book chapter: "Collision detection", section "Casting
//! rays".
//!
//! The per-shape intersections are [`crate::collision::ray`]; this module adds what needs the
//! model: the geoms' world poses (from `geom_poses_into`), their assets, and MuJoCo's filters
//! (`ray_eliminate`), which drop a geom when
//!
//! | filter | the geom is dropped when |
//! |---|---|
//! | `bodyexclude` | it belongs to that MuJoCo body (a rangefinder excludes its own body) |
//! | visibility | it has no material and its `rgba` alpha is 0, or its material's alpha is 0 (a material decides even when the geom's own `rgba` is given) |
//! | `flg_static` | `flg_static` is false and its body is welded to the world (`body_weldid == 0`: no joint on its path to the world; since MuJoCo 3.12 a mocap body is the root of its own weld group and not static, and this reader has none) |
//! | `geomgroup` | a group mask is given and the geom's group, clamped to `0 ..= 5`, is off in it |

use crate::collision::ray::{ray_geom, Hit};
use crate::collision::{Assets, GeomPose};
use crate::error::{Error, Result};
use crate::model::constants::mjMINVAL;
use crate::model::Model;
use crate::spatial::Vec3;

/// MuJoCo's number of geom groups (`mjNGROUP`).
pub const NGROUP: usize = 6;

/// Which geoms a ray may hit (the filter arguments of MuJoCo's `mj_ray`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RayFilter {
    /// Geom groups to include (`geomgroup`); `None` includes every group (MuJoCo's `NULL`).
    pub geomgroup: Option<[bool; NGROUP]>,
    /// Include static geoms, those of bodies welded to the world (`flg_static`).
    pub flg_static: bool,
    /// Skip the geoms of this MuJoCo body (`bodyexclude`; `None` for MuJoCo's -1). `Some(0)`
    /// skips the world's geoms.
    pub bodyexclude: Option<usize>,
}

impl Default for RayFilter {
    /// Every visible geom: no group mask, static geoms included, no body excluded.
    fn default() -> Self {
        RayFilter {
            geomgroup: None,
            flg_static: true,
            bodyexclude: None,
        }
    }
}

/// The nearest hit of a ray (MuJoCo's `mj_ray` outputs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The ray parameter `x` of the hit point `pnt + x vec`: the distance in units of `|vec|`
    /// (the distance itself when `vec` is a unit vector).
    pub dist: f64,
    /// The geom hit (index into `model.geoms`, MuJoCo's `geomid`).
    pub geom: usize,
    /// Unit normal of the surface at the hit point, pointing out of the geom (world).
    pub normal: Vec3,
}

/// Whether geom `g`'s body is welded to the world: every joint on its path to the world is
/// fixed (MuJoCo's `body_weldid == 0`).
fn is_static(model: &Model, g: usize) -> bool {
    let mut b = model.geoms[g].body;
    while b != 0 {
        // MuJoCo 4.0: a mocap body roots its own weld group, so it is not static either
        if model.joints[b].jtype.nv() > 0 || model.body_mocapid[b].is_some() {
            return false;
        }
        b = model.lambda[b];
    }
    true
}

// ANCHOR: eliminate
/// Whether MuJoCo's `ray_eliminate` drops geom `g` from the ray test (the table in the module
/// map).
pub fn eliminated(model: &Model, g: usize, filter: &RayFilter) -> bool {
    let geom = &model.geoms[g];
    if filter.bodyexclude == Some(model.mj_body[geom.body]) {
        return true;
    }
    let alpha = match geom.material {
        Some(m) => model.materials[m].rgba[3],
        None => geom.rgba[3],
    };
    if alpha == 0.0 {
        return true;
    }
    if !filter.flg_static && is_static(model, g) {
        return true;
    }
    match filter.geomgroup {
        None => false,
        Some(mask) => !mask[geom.group.clamp(0, NGROUP as i32 - 1) as usize],
    }
}
// ANCHOR_END: eliminate

// ANCHOR: ray
/// MuJoCo's `mj_ray`: the nearest hit of the ray `pnt + x vec`, `x >= 0`, on the geoms of
/// `model` at the world poses `geoms` (`geom_poses_into`, MuJoCo's `geom_xpos`, `geom_xmat`)
/// that `filter` keeps; `None` when it hits none (MuJoCo returns -1). `x` is in units of
/// `vec`, which need not be a unit vector. Each geom is intersected by
/// [`crate::collision::ray::ray_geom`]; on equal distances the geom that comes first wins.
///
/// Errors: [`Error::NonFinite`] for a non-finite `pnt` or `vec`, [`Error::InvalidArgument`]
/// when `|vec| < mjMINVAL` (MuJoCo stops with "vector length is too small"),
/// [`Error::BadLength`] when `geoms` does not have one pose per geom, [`Error::BadGeom`] for a
/// material index outside `model.materials`.
pub fn ray(model: &Model, geoms: &[GeomPose], pnt: &Vec3, vec: &Vec3, filter: &RayFilter) -> Result<Option<RayHit>> {
    crate::error::check_vector("ray pnt", pnt.as_slice(), 3)?;
    crate::error::check_vector("ray vec", vec.as_slice(), 3)?;
    if vec.norm() < mjMINVAL {
        return Err(Error::InvalidArgument {
            what: "vec".into(),
            why: format!("the ray direction has length {:e} < mjMINVAL = 1e-15", vec.norm()),
        });
    }
    if geoms.len() != model.geoms.len() {
        return Err(Error::BadLength {
            what: "geom poses".into(),
            got: geoms.len(),
            expected: model.geoms.len(),
        });
    }
    if let Some((g, geom)) = model
        .geoms
        .iter()
        .enumerate()
        .find(|(_, geom)| geom.material.is_some_and(|m| m >= model.materials.len()))
    {
        return Err(Error::BadGeom {
            geom: g,
            name: geom.name.clone(),
            why: format!(
                "material {:?} is not one of the {} materials",
                geom.material,
                model.materials.len()
            ),
        });
    }
    let assets = Assets {
        meshes: &model.meshes,
        hfields: &model.hfields,
    };
    let mut best: Option<RayHit> = None;
    for (g, geom) in model.geoms.iter().enumerate() {
        if eliminated(model, g, filter) {
            continue;
        }
        if let Some(Hit { dist, normal }) = ray_geom(&assets, geom.gtype, &geom.size, &geoms[g], pnt, vec) {
            if best.is_none_or(|b| dist < b.dist) {
                best = Some(RayHit { dist, geom: g, normal });
            }
        }
    }
    Ok(best)
}
// ANCHOR_END: ray
