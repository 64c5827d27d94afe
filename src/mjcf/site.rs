//! The `<site>` reader (MuJoCo's `xml_native_reader.cc`: `OneSite`): named points on bodies.

use super::attrs::join;
use super::orientation::{pose, z_to_quat, POSE};
use super::reader::Reader;
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::constants::mjEPS;
use crate::model::{Model, Site};
use crate::spatial::Vec3;

/// Attributes a `<site>` may have (besides `name`, `class`).
pub(crate) const SITE_ATTRS: [&str; 11] = join(&[&["type", "size", "fromto", "group", "user"], &POSE]);

impl<'d> Reader<'d> {
    /// A `<site>` of MuJoCo body `body`; returns its pose in the body frame.
    pub(crate) fn read_site(&mut self, e: &'d Elem, class: usize) -> Result<(String, Vec3, [f64; 4])> {
        self.check_class_attrs(e, &SITE_ATTRS, &["name", "class"])?;
        let a = self.resolved(e, "site", class);
        a.keyword("type", &["sphere", "capsule", "ellipsoid", "cylinder", "box"])?;
        a.partial::<3>("size", [0.005; 3])?;
        let name = a.string("name").unwrap_or_default();
        let (mut pos, mut quat) = pose(&a, &self.compiler)?;
        if let Some(ft) = a.vec::<6>("fromto")? {
            let v = Vec3::new(ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]);
            if v.norm() < mjEPS {
                return Err(a.err_key("fromto", "fromto points are too close"));
            }
            pos = Vec3::new(0.5 * (ft[0] + ft[3]), 0.5 * (ft[1] + ft[4]), 0.5 * (ft[2] + ft[5]));
            quat = z_to_quat(&(v / v.norm()));
        }
        if !name.is_empty() && self.site_index.contains_key(&name) {
            return Err(a.err(format!("repeated site name '{}'", esc(&name))));
        }
        Ok((name, pos, quat))
    }

    /// The sites with their Featherstone bodies (after emit).
    pub(crate) fn emit_sites(&self, model: &mut Model) {
        model.sites = self
            .sites
            .iter()
            .map(|(b, name, pos, quat)| Site {
                name: name.clone(),
                body: model.mj_body_last[*b],
                pos: *pos,
                quat: *quat,
            })
            .collect();
    }
}
