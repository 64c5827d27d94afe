//! The `<geom>` reader (MuJoCo's `xml_native_reader.cc`: `OneGeom`): shape, pose, contact
//! parameters and the mass properties MuJoCo gives the geom (`mjCGeom::SetInertia`).

use super::attrs::join;
use super::compile::{geom_inertia, geom_volume};
use super::orientation::{pose, z_to_quat, ORIENTATION, POSE};
use super::reader::{solver_params, GeomSpec, Reader};
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::constants::{mjEPS, mjMINVAL};
use crate::model::{Geom, GeomType};
use crate::spatial::{quat_to_mat, Vec3};

/// Attributes a `<geom>` may have (besides `name`, `class`); also what its defaults may set.
pub(crate) const GEOM_ATTRS: [&str; 26] = join(&[
    &["type", "size", "fromto", "mesh", "hfield", "group", "rgba", "material"],
    &POSE,
    &[
        "friction",
        "condim",
        "contype",
        "conaffinity",
        "margin",
        "gap",
        "priority",
        "solmix",
    ],
    &["solref", "solimp", "mass", "density"],
]);

impl<'d> Reader<'d> {
    /// Reads a geom; `None` for a height field or mesh, which are skipped (with a warning) when
    /// they carry no mass into a moving body.
    pub(crate) fn read_geom(&mut self, e: &'d Elem, class: usize, body: usize) -> Result<Option<GeomSpec>> {
        self.check_class_attrs(e, &GEOM_ATTRS, &["name", "class"])?;
        let a = self.resolved(e, "geom", class);
        let name = a.string("name").unwrap_or_default();
        self.unique_name(&a, &name, false)?;
        let tname = a
            .keyword(
                "type",
                &[
                    "plane",
                    "hfield",
                    "sphere",
                    "capsule",
                    "ellipsoid",
                    "cylinder",
                    "box",
                    "mesh",
                    "sdf",
                ],
            )?
            .unwrap_or("sphere");
        let gtype = match tname {
            "plane" => GeomType::Plane,
            "sphere" => GeomType::Sphere,
            "capsule" => GeomType::Capsule,
            "cylinder" => GeomType::Cylinder,
            "box" => GeomType::Box,
            "ellipsoid" => GeomType::Ellipsoid,
            "hfield" | "mesh" => {
                let aname = a
                    .string(tname)
                    .ok_or_else(|| a.err(format!("a {tname} geom needs the {tname} attribute naming its asset")))?;
                let index = if tname == "mesh" {
                    &self.assets.mesh_index
                } else {
                    &self.assets.hfield_index
                };
                let Some(&k) = index.get(&aname) else {
                    return Err(a.err_attr(
                        tname,
                        a.last(tname).unwrap(),
                        format!("unknown {tname} '{}'", esc(&aname)),
                    ));
                };
                if tname == "mesh" {
                    GeomType::Mesh(k)
                } else {
                    if !self.bodies[body].static_ {
                        return Err(a.err("a height field is only allowed in static bodies (MuJoCo's rule)"));
                    }
                    GeomType::HField(k)
                }
            }
            other => {
                return Err(a.err_attr(
                    "type",
                    a.last("type").unwrap(),
                    format!("geom type '{other}' is not supported"),
                ))
            }
        };
        let mut size = a.partial::<3>("size", [0.0; 3])?;
        let (mut pos, mut quat) = pose(&a, &self.compiler)?;
        if let Some(ft) = a.vec::<6>("fromto")? {
            let src = a.last("fromto").unwrap();
            if !matches!(
                gtype,
                GeomType::Capsule | GeomType::Cylinder | GeomType::Box | GeomType::Ellipsoid
            ) {
                return Err(a.err_attr("fromto", src, "fromto needs a capsule, cylinder, box or ellipsoid"));
            }
            if pos != Vec3::zeros() {
                return Err(a.err("both 'pos' and 'fromto' are given"));
            }
            if ORIENTATION.iter().any(|k| e.has(k)) {
                return Err(a.err("both 'fromto' and an orientation are given"));
            }
            // MuJoCo points the geom's z axis from `to` towards `from`.
            let v = Vec3::new(ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]);
            let half = 0.5 * v.norm();
            if half < mjEPS {
                return Err(a.err_attr("fromto", src, "fromto points are too close"));
            }
            size[1] = half;
            if matches!(gtype, GeomType::Box | GeomType::Ellipsoid) {
                size[2] = size[1];
                size[1] = size[0];
            }
            pos = Vec3::new(0.5 * (ft[0] + ft[3]), 0.5 * (ft[1] + ft[4]), 0.5 * (ft[2] + ft[5]));
            quat = z_to_quat(&(v / v.norm()));
        }
        // size checks (MuJoCo's checksize)
        let needed = match gtype {
            GeomType::Plane | GeomType::Mesh(_) | GeomType::HField(_) => 0,
            GeomType::Sphere => 1,
            GeomType::Capsule | GeomType::Cylinder => 2,
            GeomType::Box | GeomType::Ellipsoid => 3,
        };
        if gtype == GeomType::Plane && size[2] <= 0.0 {
            return Err(a.err(format!("plane size[2] must be positive (size = {size:?})")));
        }
        if let Some(k) = (0..needed).find(|&k| size[k] <= 0.0) {
            return Err(a.err(format!(
                "{tname} size[{k}] must be positive (size = {size:?}); a {tname} needs {needed} sizes"
            )));
        }
        if gtype == GeomType::Plane && !self.bodies[body].static_ {
            return Err(a.err("a plane is only allowed in the world body or in bodies without joints up to the world"));
        }
        let friction = a.partial::<3>("friction", [1.0, 0.005, 0.0001])?;
        let condim = a.int("condim")?.unwrap_or(3);
        if ![1, 3, 4, 6].contains(&condim) {
            return Err(a.err_attr("condim", a.last("condim").unwrap(), "condim must be 1, 3, 4 or 6"));
        }
        let contype = a.int("contype")?.unwrap_or(1);
        let conaffinity = a.int("conaffinity")?.unwrap_or(1);
        let margin = a.real("margin")?.unwrap_or(0.0);
        let gap = a.real("gap")?.unwrap_or(0.0);
        let solmix = a.real("solmix")?.unwrap_or(1.0);
        let priority = a.int("priority")?.unwrap_or(0);
        let params = solver_params(&a, "solref", "solimp")?;
        let group = a.int("group")?.unwrap_or(0);
        // the look matters to rays only (`mj_ray` skips geoms with alpha 0): the colour, and the
        // material, the geom's own or else its mesh's (MuJoCo's fallback)
        let rgba = a
            .vec::<4>("rgba")?
            .unwrap_or(Geom::RGBA_DEFAULT)
            .map(|x| x as f32 as f64);
        let material = match a.last("material") {
            Some(src) => match self.assets.material_index.get(src.value.as_str()) {
                Some(&k) => Some(k),
                None => return Err(a.err_attr("material", src, "unknown material")),
            },
            None => match gtype {
                GeomType::Mesh(k) => self.assets.mesh_material[k],
                _ => None,
            },
        };
        let density = a.real("density")?.unwrap_or(1000.0);
        if density < 0.0 {
            return Err(a.err_attr("density", a.last("density").unwrap(), "density cannot be negative"));
        }
        // a mesh geom's frame is its mesh's (principal) frame placed by the geom's pos/quat
        let mesh = match gtype {
            GeomType::Mesh(k) => Some(&self.assets.meshes[k]),
            _ => None,
        };
        if let Some(m) = mesh {
            pos += quat_to_mat(&quat) * m.pos;
            quat = crate::spatial::quat_mul(&quat, &m.quat);
        }
        let volume = mesh.map_or_else(|| geom_volume(gtype, &size), |m| m.volume);
        let mass = match a.real("mass")? {
            Some(m) if m < 0.0 => return Err(a.err_attr("mass", a.last("mass").unwrap(), "mass cannot be negative")),
            Some(m) if m == 0.0 || volume <= mjMINVAL => 0.0,
            Some(m) => m,
            None => density * volume,
        };
        let diag = match mesh {
            Some(m) => [0, 1, 2].map(|i| m.inertia[i] * mass / volume),
            None => geom_inertia(gtype, &size, mass),
        };
        // MuJoCo's compiler writes the asset's extent into the size of a mesh or height-field
        // geom (`mjCGeom::Compile`): the mesh's half extents about its frame; the field's
        // half-sizes and a quarter of its height plus half its base
        match gtype {
            GeomType::Mesh(k) => size = self.assets.meshes[k].half_extent.into(),
            GeomType::HField(k) => {
                let h = self.assets.hfields[k].size;
                size = [h[0], h[1], 0.25 * h[2] + 0.5 * h[3]];
            }
            _ => {}
        }
        let geom = Geom {
            name,
            body: 0, // Featherstone index, filled in by emit()
            gtype,
            size,
            pos,
            quat,
            friction,
            condim: condim as usize,
            contype: contype as u32,
            conaffinity: conaffinity as u32,
            margin,
            gap,
            params,
            solmix,
            priority,
            group,
            rgba,
            material,
        };
        Ok(Some(GeomSpec { geom, mass, diag }))
    }
}
