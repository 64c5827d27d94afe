//! The book's figures: one module per chapter, each with a `run(dir)` that prints a short
//! report and writes that chapter's SVG figures into `dir`. The examples call these, and
//! `mbd book` calls [`generate_all`]. Besides plots, each chapter's `run` writes a schematic
//! drawing from [`schematics`] (drawn with the helpers of [`draw`]), computed from the library's
//! own models.

pub mod ch02;
pub mod ch04;
pub mod ch05;
pub mod ch06;
pub mod ch07;
pub mod collision;
pub mod com;
pub mod comparison;
pub mod constraint;
pub mod draw;
pub mod forward;
pub mod integrators;
pub mod loops;
pub mod loops2;
pub mod muscle;
pub mod perf;
pub mod schematics;
pub mod sensors;
pub mod solver;
pub mod sparse;
pub mod spook;
pub mod spook_sparse;
pub mod tendon_wrap;

use crate::error::Result;
use std::path::{Path, PathBuf};

/// Writes every figure of the book into `dir` and returns their paths.
pub fn generate_all(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    out.extend(ch02::run(dir)?);
    out.extend(ch04::run(dir)?);
    out.extend(ch05::run(dir)?);
    out.extend(ch06::run(dir)?);
    out.extend(ch07::run(dir)?);
    out.extend(sparse::run(dir)?);
    out.extend(com::run(dir)?);
    out.extend(collision::run(dir)?);
    out.extend(constraint::run(dir)?);
    out.extend(loops::run(dir)?);
    out.extend(loops2::run(dir)?);
    out.extend(solver::run(dir)?);
    out.extend(spook::run(dir)?);
    out.extend(spook_sparse::run(dir)?);
    out.extend(integrators::run(dir)?);
    out.extend(muscle::run(dir)?);
    out.extend(forward::run(dir)?);
    out.extend(sensors::run(dir)?);
    out.extend(perf::run(dir)?);
    out.extend(comparison::run(dir)?);
    out.extend(tendon_wrap::run(dir)?);
    Ok(out)
}

/// Writes `text` to `generated/NAME` beside the figures' directory (the chapter includes it).
pub(crate) fn write_generated(dir: &Path, name: &str, text: &str) -> Result<()> {
    if let Some(src) = dir.parent() {
        let g = src.join("generated");
        std::fs::create_dir_all(&g)
            .and_then(|_| std::fs::write(g.join(name), text))
            .map_err(|e| crate::error::Error::Io {
                path: g.display().to_string(),
                why: e.to_string(),
            })?;
    }
    Ok(())
}

/// A JSON fixture read from `path` (errors name the file, and the line for bad JSON).
pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).map_err(|e| crate::error::Error::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| crate::error::Error::Model {
        file: path.display().to_string(),
        line: e.line() as u32,
        why: e.to_string(),
    })
}

/// The numbers of a JSON list (none for anything else).
pub(crate) fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
        .unwrap_or_default()
}
