//! The MJCF subset reader (MuJoCo's XML model format). Book chapter: "Joint models and
//! kinematic trees", section "Reading MuJoCo models".
//!
//! (Being written: the API below is fixed; the body is a stub.)

use crate::error::{Error, Result};
use crate::model::Model;
use std::path::Path;

/// A model read from MJCF, with the warnings about skipped elements (visual, asset, sensor,
/// camera, light, ...), which do not affect dynamics.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The model.
    pub model: Model,
    /// One line per skipped element or attribute.
    pub warnings: Vec<String>,
}

/// Reads an MJCF file.
pub fn load(path: &Path) -> Result<Loaded> {
    let xml = std::fs::read_to_string(path).map_err(|e| Error::Io { path: path.display().to_string(), why: e.to_string() })?;
    parse(&xml, &path.display().to_string())
}

/// Parses MJCF text; `file` names the source in error messages.
pub fn parse(xml: &str, file: &str) -> Result<Loaded> {
    let _ = xml;
    Err(Error::Model { file: file.into(), line: 0, why: "MJCF reader not written yet".into() })
}
