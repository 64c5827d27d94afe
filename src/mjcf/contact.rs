//! The `<contact>` reader (MuJoCo's `xml_native_reader.cc`: `Contact`): explicit `<pair>`s and
//! body `<exclude>`s, stored for the collision stage.

use super::attrs::{check_leaf, Attrs};
use super::reader::{solver_params, Reader};
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::{ContactPair, Model};

/// Attributes of a contact `<pair>` (besides `name`, `class`, `geom1`, `geom2`).
pub(crate) const PAIR_ATTRS: [&str; 7] = [
    "condim",
    "friction",
    "solref",
    "solreffriction",
    "solimp",
    "gap",
    "margin",
];

impl<'d> Reader<'d> {
    /// `<contact>`: explicit `<pair>`s and body `<exclude>`s.
    pub(crate) fn read_contact(&mut self, e: &'d Elem, model: &mut Model) -> Result<()> {
        let doc = self.doc;
        self.check_attrs(e, &[])?;
        for &c in &e.children {
            let p = &doc.elems[c];
            check_leaf(doc, p)?;
            match p.tag.as_str() {
                "exclude" => {
                    self.check_attrs(p, &["name", "body1", "body2"])?;
                    let a = Attrs::direct(&doc.files, p);
                    let body = |key: &str| -> Result<usize> {
                        match a.last(key) {
                            Some(src) => match self.body_index.get(src.value.as_str()) {
                                Some(&b) => Ok(model.mj_body_last[b]),
                                None => Err(a.err_attr(key, src, "unknown body")),
                            },
                            None => Err(a.err(format!("required attribute '{key}' is missing"))),
                        }
                    };
                    let pair = (body("body1")?, body("body2")?);
                    model.contact_excludes.push(pair);
                }
                "pair" => {
                    self.check_class_attrs(p, &PAIR_ATTRS, &["name", "class", "geom1", "geom2"])?;
                    let class = self.class_of(p, 0)?;
                    let a = self.resolved(p, "pair", class);
                    let geom = |key: &str| -> Result<usize> {
                        match a.last(key) {
                            Some(src) => model
                                .geoms
                                .iter()
                                .position(|g| g.name == src.value)
                                .ok_or_else(|| a.err_attr(key, src, "unknown geom")),
                            None => Err(a.err(format!("required attribute '{key}' is missing"))),
                        }
                    };
                    let (g1, g2) = (geom("geom1")?, geom("geom2")?);
                    // MuJoCo 4.0 gives what a pair leaves out its own defaults (condim 3,
                    // friction 1 1 0.005 1e-4 1e-4, the default solref and solimp, margin and
                    // gap 0), not values derived from the two geoms (measured)
                    let condim = a.int("condim")?.map_or(3, |c| c as usize);
                    if ![1, 3, 4, 6].contains(&condim) {
                        return Err(a.err_key("condim", "condim must be 1, 3, 4 or 6"));
                    }
                    let friction = a.partial::<5>("friction", [1.0, 1.0, 0.005, 0.0001, 0.0001])?;
                    model.contact_pairs.push(ContactPair {
                        name: a.string("name").unwrap_or_default(),
                        geom1: g1,
                        geom2: g2,
                        condim,
                        friction,
                        params: solver_params(&a, "solref", "solimp")?,
                        solreffriction: a.partial::<2>("solreffriction", [0.0, 0.0])?,
                        margin: a.real("margin")?.unwrap_or(0.0),
                        gap: a.real("gap")?.unwrap_or(0.0),
                    });
                }
                other => {
                    return Err(self.err_elem(p, format!("element <{}> is not allowed inside <contact>", esc(other))))
                }
            }
        }
        Ok(())
    }
}
