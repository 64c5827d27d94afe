//! The book's figures: one module per chapter, each with a `run(dir)` that prints a short
//! report and writes that chapter's SVG figures into `dir`. The examples call these, and
//! `mbd book` calls [`generate_all`].

use crate::error::Result;
use std::path::{Path, PathBuf};

/// Writes every figure of the book into `dir` and returns their paths.
pub fn generate_all(dir: &Path) -> Result<Vec<PathBuf>> {
    let _ = dir;
    Ok(Vec::new())
}
