//! The `<keyframe>` reader (MuJoCo's `xml_native_reader.cc`: `Keyframe`): named states.

use super::attrs::{check_leaf, Attrs};
use super::reader::Reader;
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::{DynType, Keyframe, Model};

impl<'d> Reader<'d> {
    /// `<keyframe>`: named states; missing parts default to MuJoCo's (`qpos0`, zeros).
    pub(crate) fn read_keyframes(&mut self, e: &'d Elem, model: &Model) -> Result<Vec<Keyframe>> {
        let doc = self.doc;
        self.check_attrs(e, &[])?;
        let na = model.actuators.iter().filter(|a| a.dyntype != DynType::None).count();
        let mut out = Vec::new();
        for &c in &e.children {
            let k = &doc.elems[c];
            check_leaf(doc, k)?;
            if k.tag != "key" {
                return Err(self.err_elem(k, format!("element <{}> is not allowed inside <keyframe>", esc(&k.tag))));
            }
            self.check_attrs(k, &["name", "time", "qpos", "qvel", "act", "ctrl", "mpos", "mquat"])?;
            let a = Attrs::direct(&doc.files, k);
            let vec_of = |key: &str, n: usize, default: Vec<f64>| -> Result<Vec<f64>> {
                match a.reals(key)? {
                    None => Ok(default),
                    Some(v) if v.len() == n => Ok(v),
                    Some(v) => Err(a.err_key(key, format!("expected {n} numbers, got {}", v.len()))),
                }
            };
            for key in ["mpos", "mquat"] {
                if a.has(key) {
                    return Err(a.err_key(key, "the model has no mocap bodies"));
                }
            }
            out.push(Keyframe {
                name: a.string("name").unwrap_or_default(),
                time: a.real("time")?.unwrap_or(0.0),
                qpos: vec_of("qpos", model.nq, model.qpos0.as_slice().to_vec())?,
                qvel: vec_of("qvel", model.nv, vec![0.0; model.nv])?,
                act: vec_of("act", na, vec![0.0; na])?,
                ctrl: vec_of("ctrl", model.actuators.len(), vec![0.0; model.actuators.len()])?,
            });
        }
        Ok(out)
    }
}
