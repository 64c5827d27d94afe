//! Figures and report of chapter 07 (being written).

use crate::error::Result;
use std::path::{Path, PathBuf};

/// Prints the chapter's short report and writes its figures into `dir`.
pub fn run(dir: &Path) -> Result<Vec<PathBuf>> {
    let _ = dir;
    Ok(Vec::new())
}
