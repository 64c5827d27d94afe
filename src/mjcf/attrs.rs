//! Attribute access and the schema (MuJoCo's `xml_util` `ReadAttr` and the `MJCF[]` schema table
//! of `xml_native_reader`): typed reads that name the attribute, its line and the default class
//! it came from; which children each element may have.

use super::xml::{esc, model_error, Elem};
use crate::error::{Error, Result};
use crate::model::constants::mjMAXVAL;
use std::collections::BTreeMap;

/// One attribute value and where it was written.
#[derive(Clone, Debug)]
pub(crate) struct Src {
    pub value: String,
    pub file: usize,
    pub line: u32,
    /// The default class it came from (None: written on the element itself).
    pub class: Option<String>,
}

/// The attributes of one element: for each attribute, its values from the outermost default
/// class down to the element itself. The last value wins, except for the arrays MuJoCo lets a
/// layer give partially (`size`, `friction`, `polycoef`, ...): there each layer overwrites only
/// the leading numbers it gives.
pub(crate) struct Attrs<'d> {
    pub files: &'d [String],
    pub file: usize,
    /// How messages name the element, e.g. `<geom name="foot">`.
    pub tag: String,
    pub line: u32,
    pub map: BTreeMap<String, Vec<Src>>,
}

impl<'d> Attrs<'d> {
    /// The attributes written on `e` itself (no defaults).
    pub fn direct(files: &'d [String], e: &Elem) -> Self {
        let mut map = BTreeMap::new();
        for a in &e.attrs {
            let src = Src {
                value: a.value.clone(),
                file: e.file,
                line: a.line,
                class: None,
            };
            map.insert(a.name.clone(), vec![src]);
        }
        Attrs {
            files,
            file: e.file,
            tag: e.describe(),
            line: e.line,
            map,
        }
    }

    /// An error about the element as a whole.
    pub fn err(&self, why: impl std::fmt::Display) -> Error {
        model_error(&self.files[self.file], self.line, format!("{}: {why}", self.tag))
    }

    /// An error about one attribute value.
    pub fn err_attr(&self, key: &str, src: &Src, why: impl std::fmt::Display) -> Error {
        let from = match &src.class {
            Some(c) => format!(" (from default class '{}')", esc(c)),
            None => String::new(),
        };
        model_error(
            &self.files[src.file],
            src.line,
            format!("{}: attribute {key}=\"{}\"{from}: {why}", self.tag, esc(&src.value)),
        )
    }

    /// An error about attribute `key` if it is given, else about the element.
    pub fn err_maybe(&self, key: &str, why: impl std::fmt::Display) -> Error {
        match self.last(key) {
            Some(src) => self.err_attr(key, src, why),
            None => self.err(format!("{key}: {why}")),
        }
    }

    /// An error about attribute `key`, which must be present.
    pub fn err_key(&self, key: &str, why: impl std::fmt::Display) -> Error {
        self.err_maybe(key, why)
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub fn last(&self, key: &str) -> Option<&Src> {
        self.map.get(key).and_then(|v| v.last())
    }

    pub fn string(&self, key: &str) -> Option<String> {
        self.last(key).map(|s| s.value.clone())
    }

    fn reals_of(&self, key: &str, src: &Src) -> Result<Vec<f64>> {
        parse_reals(&src.value).map_err(|why| self.err_attr(key, src, why))
    }

    /// A real scalar.
    pub fn real(&self, key: &str) -> Result<Option<f64>> {
        Ok(self.vec::<1>(key)?.map(|v| v[0]))
    }

    /// A real scalar that must be `>= 0`.
    #[allow(dead_code)]
    pub fn nonneg(&self, key: &str, default: f64) -> Result<f64> {
        let v = self.real(key)?.unwrap_or(default);
        if v < 0.0 {
            return Err(self.err_key(key, "must be >= 0"));
        }
        Ok(v)
    }

    /// Exactly `N` reals.
    pub fn vec<const N: usize>(&self, key: &str) -> Result<Option<[f64; N]>> {
        let Some(src) = self.last(key) else {
            return Ok(None);
        };
        let v = self.reals_of(key, src)?;
        if v.len() != N {
            let what = if N == 1 {
                "1 number".to_string()
            } else {
                format!("{N} numbers")
            };
            return Err(self.err_attr(key, src, format!("expected {what}, got {}", v.len())));
        }
        let mut out = [0.0; N];
        out.copy_from_slice(&v);
        Ok(Some(out))
    }

    /// Any number of reals (MuJoCo's variable-length arrays).
    #[allow(dead_code)]
    pub fn reals(&self, key: &str) -> Result<Option<Vec<f64>>> {
        match self.last(key) {
            Some(src) => Ok(Some(self.reals_of(key, src)?)),
            None => Ok(None),
        }
    }

    /// 1 to `N` reals per layer, each layer overwriting the leading entries of `init`.
    pub fn partial<const N: usize>(&self, key: &str, init: [f64; N]) -> Result<[f64; N]> {
        let mut out = init;
        for src in self.map.get(key).into_iter().flatten() {
            let v = self.reals_of(key, src)?;
            if v.is_empty() || v.len() > N {
                return Err(self.err_attr(key, src, format!("expected 1 to {N} numbers, got {}", v.len())));
            }
            out[..v.len()].copy_from_slice(&v);
        }
        Ok(out)
    }

    /// An integer (MuJoCo's `int`, 32 bits).
    pub fn int(&self, key: &str) -> Result<Option<i32>> {
        let Some(src) = self.last(key) else {
            return Ok(None);
        };
        let toks: Vec<&str> = src.value.split_ascii_whitespace().collect();
        if toks.len() != 1 {
            return Err(self.err_attr(key, src, format!("expected 1 integer, got {} values", toks.len())));
        }
        toks[0]
            .parse::<i32>()
            .map(Some)
            .map_err(|_| self.err_attr(key, src, "not a 32-bit integer"))
    }

    /// One of `options` (case-sensitive, as in MuJoCo).
    pub fn keyword(&self, key: &str, options: &[&'static str]) -> Result<Option<&'static str>> {
        let Some(src) = self.last(key) else {
            return Ok(None);
        };
        let v = src.value.trim();
        match options.iter().find(|o| **o == v) {
            Some(o) => Ok(Some(*o)),
            None => Err(self.err_attr(
                key,
                src,
                format!("unknown keyword, expected one of: {}", options.join(", ")),
            )),
        }
    }

    pub fn boolean(&self, key: &str) -> Result<Option<bool>> {
        Ok(self.keyword(key, &["true", "false"])?.map(|k| k == "true"))
    }
}

/// The attribute lists `parts` one after another, built at compile time: `N` must be their
/// total length (a wrong `N` stops the build).
pub(crate) const fn join<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[n] = parts[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(n == N, "join: N is not the total length of the lists");
    out
}

/// Whitespace-separated finite reals of magnitude at most MuJoCo's `mjMAXVAL` (1e10): larger
/// values turn into infinities and NaNs downstream (a mass of 1e308 times a velocity).
pub(crate) fn parse_reals(s: &str) -> std::result::Result<Vec<f64>, String> {
    s.split_ascii_whitespace()
        .map(|t| match t.parse::<f64>() {
            Ok(x) if !x.is_finite() => Err(format!("'{}' is not a finite number", esc(t))),
            Ok(x) if x.abs() > mjMAXVAL => Err(format!("'{}' exceeds mjMAXVAL = 1e10 in magnitude", esc(t))),
            Ok(x) => Ok(x),
            Err(_) => Err(format!("'{}' is not a number", esc(t))),
        })
        .collect()
}

// ------------------------------------------------------------------------------------------------
// The schema: which children an element may have
// ------------------------------------------------------------------------------------------------

/// Elements MuJoCo's schema allows no children in (or only children this reader rejects):
/// anything inside them is an error, never silently dropped.
pub(crate) fn check_leaf(doc: &super::xml::Doc, e: &Elem) -> Result<()> {
    if let Some(&c) = e.children.first() {
        let child = &doc.elems[c];
        return Err(model_error(
            &doc.files[child.file],
            child.line,
            format!(
                "{}: element <{}> is not allowed inside <{}> (MuJoCo's schema gives <{}> no child elements)",
                child.describe(),
                esc(&child.tag),
                e.tag,
                e.tag
            ),
        ));
    }
    Ok(())
}

/// MuJoCo's tri-state `limited` attributes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Limited {
    True,
    False,
    Auto,
}

/// A tri-state `limited` attribute (`true`, `false`, `auto`).
pub(crate) fn limited_kw(a: &Attrs, key: &str) -> Result<Option<Limited>> {
    Ok(a.keyword(key, &["true", "false", "auto"])?.map(|k| match k {
        "true" => Limited::True,
        "false" => Limited::False,
        _ => Limited::Auto,
    }))
}
