//! The `<site>` reader (MuJoCo's `xml_native_reader.cc`: `OneSite`): named points on bodies.

use super::attrs::join;
use super::orientation::{pose, z_to_quat, POSE};
use super::reader::Reader;
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::constants::mjEPS;
use crate::model::{GeomType, Model, Site};
use crate::spatial::Vec3;

/// Attributes a `<site>` may have (besides `name`, `class`).
pub(crate) const SITE_ATTRS: [&str; 11] = join(&[&["type", "size", "fromto", "group", "user"], &POSE]);

/// A site as read, on MuJoCo body `body`.
#[derive(Clone, Debug)]
pub(crate) struct SiteSpec {
    pub body: usize,
    pub name: String,
    pub pos: Vec3,
    pub quat: [f64; 4],
    pub gtype: GeomType,
    pub size: [f64; 3],
}

impl<'d> Reader<'d> {
    /// A `<site>` of MuJoCo body `body`; returns its name, pose in the body frame, shape and
    /// size.
    pub(crate) fn read_site(&mut self, e: &'d Elem, class: usize) -> Result<SiteSpec> {
        self.check_class_attrs(e, &SITE_ATTRS, &["name", "class"])?;
        let a = self.resolved(e, "site", class);
        let gtype = match a.keyword("type", &["sphere", "capsule", "ellipsoid", "cylinder", "box"])? {
            None | Some("sphere") => GeomType::Sphere,
            Some("capsule") => GeomType::Capsule,
            Some("ellipsoid") => GeomType::Ellipsoid,
            Some("cylinder") => GeomType::Cylinder,
            _ => GeomType::Box,
        };
        let mut size = a.partial::<3>("size", [0.005; 3])?;
        let name = a.string("name").unwrap_or_default();
        let (mut pos, mut quat) = pose(&a, &self.compiler)?;
        if let Some(ft) = a.vec::<6>("fromto")? {
            let v = Vec3::new(ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]);
            if v.norm() < mjEPS {
                return Err(a.err_key("fromto", "fromto points are too close"));
            }
            pos = Vec3::new(0.5 * (ft[0] + ft[3]), 0.5 * (ft[1] + ft[4]), 0.5 * (ft[2] + ft[5]));
            quat = z_to_quat(&(v / v.norm()));
            // as for geoms: the half length goes to the size along z
            size[1] = 0.5 * v.norm();
            if matches!(gtype, GeomType::Box | GeomType::Ellipsoid) {
                size[2] = size[1];
                size[1] = size[0];
            }
        }
        if !name.is_empty() && self.site_index.contains_key(&name) {
            return Err(a.err(format!("repeated site name '{}'", esc(&name))));
        }
        Ok(SiteSpec {
            body: 0,
            name,
            pos,
            quat,
            gtype,
            size,
        })
    }

    /// The sites with their Featherstone bodies (after emit).
    pub(crate) fn emit_sites(&self, model: &mut Model) {
        model.sites = self
            .sites
            .iter()
            .map(|s| Site {
                name: s.name.clone(),
                body: model.mj_body_last[s.body],
                pos: s.pos,
                quat: s.quat,
                gtype: s.gtype,
                size: s.size,
            })
            .collect();
    }
}
