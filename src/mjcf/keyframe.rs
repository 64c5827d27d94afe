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
            // mocap poses: 3 and 4 numbers per mocap body, the bodies' default poses where the
            // key gives none, each quaternion normalized (as MuJoCo's compiler normalizes
            // `key_mquat`); MuJoCo ignores a list that is too short, here it is an error
            let nmocap = model.nmocap();
            let mpos = vec_of("mpos", 3 * nmocap, model.mocap_pos0.as_flattened().to_vec())?;
            let mut mquat = vec_of("mquat", 4 * nmocap, model.mocap_quat0.as_flattened().to_vec())?;
            for (k, q) in mquat.chunks_exact_mut(4).enumerate() {
                let mut unit = [q[0], q[1], q[2], q[3]];
                if !crate::spatial::quat_normalize(&mut unit) {
                    return Err(a.err_key("mquat", format!("the quaternion of mocap body {k} has zero norm")));
                }
                q.copy_from_slice(&unit);
            }
            out.push(Keyframe {
                name: a.string("name").unwrap_or_default(),
                time: a.real("time")?.unwrap_or(0.0),
                qpos: vec_of("qpos", model.nq, model.qpos0.as_slice().to_vec())?,
                qvel: vec_of("qvel", model.nv, vec![0.0; model.nv])?,
                act: vec_of("act", na, vec![0.0; na])?,
                ctrl: vec_of("ctrl", model.actuators.len(), vec![0.0; model.actuators.len()])?,
                mpos: mpos.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect(),
                mquat: mquat.chunks_exact(4).map(|q| [q[0], q[1], q[2], q[3]]).collect(),
            });
        }
        Ok(out)
    }
}
