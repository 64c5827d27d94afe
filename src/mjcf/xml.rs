//! The XML layer (MuJoCo's `src/xml/xml_util`): files to a tree of elements with their file and
//! line, `<include>` spliced in, and one-line error text.
//!
//! The reader never walks `roxmltree` nodes directly: [`Doc::parse`] copies every element into a
//! flat arena ([`Elem`], children by index) in one iterative pass, computing each line number by
//! binary search in a table of line starts (linear overall; computing a line from the start of
//! the text per element would be quadratic). Every later pass over the tree uses an explicit
//! stack, so a chain nested 100,000 bodies deep neither recurses nor overflows.

use crate::error::{Error, Result};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// One attribute: name, raw value and the line it starts on.
#[derive(Clone, Debug)]
pub(crate) struct Attr {
    pub name: String,
    pub value: String,
    pub line: u32,
}

/// One element of the (include-expanded) document.
#[derive(Clone, Debug)]
pub(crate) struct Elem {
    pub tag: String,
    /// Index into [`Doc::files`].
    pub file: usize,
    pub line: u32,
    pub attrs: Vec<Attr>,
    /// Child elements, in document order.
    pub children: Vec<usize>,
}

impl Elem {
    /// The value of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.name == name).map(|a| a.value.as_str())
    }
    /// The line of attribute `name`, or of the element.
    pub fn attr_line(&self, name: &str) -> u32 {
        self.attrs.iter().find(|a| a.name == name).map_or(self.line, |a| a.line)
    }
    pub fn has(&self, name: &str) -> bool {
        self.attrs.iter().any(|a| a.name == name)
    }
    /// `<tag name="...">` (or `class`), escaped, for messages.
    pub fn describe(&self) -> String {
        if let Some(n) = self.attr("name") {
            format!("<{} name=\"{}\">", self.tag, esc(n))
        } else if let Some(c) = self.attr("class") {
            format!("<{} class=\"{}\">", self.tag, esc(c))
        } else {
            format!("<{}>", esc(&self.tag))
        }
    }
}

/// The include-expanded document: every element, the files they came from, the root.
#[derive(Clone, Debug)]
pub(crate) struct Doc {
    pub files: Vec<String>,
    pub elems: Vec<Elem>,
    pub root: usize,
}

/// Longest attribute value echoed in a message.
const ECHO_MAX: usize = 80;

/// A value made safe to echo inside a one-line message: control characters (a `&#10;` in an
/// attribute becomes a real newline) are written as escapes, and long values are cut.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(ECHO_MAX) + 8);
    for (n, c) in s.chars().enumerate() {
        if n == ECHO_MAX {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Escapes control characters in a whole message (no cut): the guarantee that an
/// [`Error::Model`] and every warning is one line.
pub(crate) fn one_line(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .flat_map(|c| {
            let v: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            v
        })
        .collect()
}

/// An [`Error::Model`] with file and message on one line.
pub(crate) fn model_error(file: &str, line: u32, why: impl AsRef<str>) -> Error {
    Error::Model {
        file: one_line(file),
        line,
        why: one_line(why.as_ref()),
    }
}

/// Byte offsets where lines start, for binary search (`line_of`).
struct LineTable(Vec<usize>);

impl LineTable {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineTable(starts)
    }
    /// 1-based line of byte offset `pos`.
    fn line_of(&self, pos: usize) -> u32 {
        self.0.partition_point(|&s| s <= pos) as u32
    }
}

/// Replaces `--` inside `<!-- ... -->` comments by `- ` (MuJoCo's XML parser, tinyxml2, accepts
/// them; strict XML and roxmltree do not). Same length, so positions are unchanged.
pub(crate) fn relax_comments(xml: &str) -> Cow<'_, str> {
    if !xml.contains("<!--") {
        return Cow::Borrowed(xml);
    }
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start + 4]);
        rest = &rest[start + 4..];
        match rest.find("-->") {
            Some(end) => {
                let mut body = rest[..end].replace("--", "- ");
                if body.ends_with('-') {
                    body.pop();
                    body.push(' '); // a comment may not end in "--->"
                }
                out.push_str(&body);
                out.push_str("-->");
                rest = &rest[end + 3..];
            }
            None => break, // unterminated: let the XML parser report it
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Deepest chain of `<include>` files (MuJoCo also refuses an included file twice).
const MAX_INCLUDE_DEPTH: usize = 32;

impl Doc {
    /// Parses `xml` (named `file` in messages); `<include file>` is resolved relative to `dir`.
    pub fn parse(xml: &str, file: &str, dir: Option<&Path>) -> Result<Doc> {
        let mut doc = Doc {
            files: Vec::new(),
            elems: Vec::new(),
            root: 0,
        };
        let mut seen = Vec::new();
        let top = doc.add_file(xml, file, dir, &mut seen, 0)?;
        if top.len() != 1 {
            return Err(model_error(file, 1, "expected one root element"));
        }
        doc.root = top[0];
        Ok(doc)
    }

    /// Adds the elements of one file; returns its root element (for the top file) or the
    /// children of its root `<mujoco>` (for an included file, `depth > 0`).
    fn add_file(
        &mut self,
        xml: &str,
        file: &str,
        dir: Option<&Path>,
        seen: &mut Vec<PathBuf>,
        depth: usize,
    ) -> Result<Vec<usize>> {
        let fidx = self.files.len();
        self.files.push(file.to_string());
        let relaxed = relax_comments(xml);
        let lines = LineTable::new(&relaxed);
        let rdoc = roxmltree::Document::parse(&relaxed)
            .map_err(|e| model_error(file, e.pos().row, format!("malformed XML: {e}")))?;
        let root = rdoc.root_element();
        if root.tag_name().name() != "mujoco" {
            return Err(model_error(
                file,
                lines.line_of(root.range().start),
                format!("<{}>: the root element must be <mujoco>", esc(root.tag_name().name())),
            ));
        }
        // Explicit stack of (roxmltree node, arena parent); children pushed in reverse so they
        // are visited in document order.
        let mut out_top = Vec::new();
        let mut stack: Vec<(roxmltree::Node, Option<usize>)> = vec![(root, None)];
        while let Some((node, parent)) = stack.pop() {
            let line = lines.line_of(node.range().start);
            let tag = node.tag_name().name();
            if node.tag_name().namespace().is_some() {
                return Err(model_error(
                    file,
                    line,
                    format!("<{}>: namespaced elements are not supported", esc(tag)),
                ));
            }
            let mut attrs = Vec::with_capacity(node.attributes().len());
            for a in node.attributes() {
                let aline = lines.line_of(a.range().start);
                if a.namespace().is_some() {
                    return Err(model_error(
                        file,
                        aline,
                        format!(
                            "<{}>: namespaced attribute '{}' is not supported",
                            esc(tag),
                            esc(a.name())
                        ),
                    ));
                }
                attrs.push(Attr {
                    name: a.name().to_string(),
                    value: a.value().to_string(),
                    line: aline,
                });
            }
            if let (Some(p), "include") = (parent, tag) {
                let elem = Elem {
                    tag: tag.into(),
                    file: fidx,
                    line,
                    attrs,
                    children: vec![],
                };
                let spliced = self.include(&elem, node.children().any(|c| c.is_element()), dir, seen, depth)?;
                self.elems[p].children.extend(spliced);
                continue;
            }
            let idx = self.elems.len();
            self.elems.push(Elem {
                tag: tag.into(),
                file: fidx,
                line,
                attrs,
                children: Vec::new(),
            });
            match parent {
                Some(p) => self.elems[p].children.push(idx),
                None => out_top.push(idx),
            }
            let kids: Vec<_> = node.children().filter(|c| c.is_element()).collect();
            for c in kids.into_iter().rev() {
                stack.push((c, Some(idx)));
            }
        }
        if depth == 0 {
            return Ok(out_top);
        }
        // An included file contributes its root's children.
        Ok(std::mem::take(&mut self.elems[out_top[0]].children))
    }

    /// MuJoCo's `<include file>`: the included file's `<mujoco>` children replace the element.
    fn include(
        &mut self,
        elem: &Elem,
        has_children: bool,
        dir: Option<&Path>,
        seen: &mut Vec<PathBuf>,
        depth: usize,
    ) -> Result<Vec<usize>> {
        let file = &self.files[elem.file].clone();
        if has_children {
            return Err(model_error(
                file,
                elem.line,
                "<include>: an include cannot have child elements",
            ));
        }
        if let Some(a) = elem.attrs.iter().find(|a| a.name != "file") {
            return Err(model_error(
                file,
                a.line,
                format!("<include>: attribute '{}' is not allowed", esc(&a.name)),
            ));
        }
        let Some(name) = elem.attr("file") else {
            return Err(model_error(
                file,
                elem.line,
                "<include>: required attribute 'file' is missing",
            ));
        };
        if depth + 1 > MAX_INCLUDE_DEPTH {
            return Err(model_error(
                file,
                elem.line,
                format!(
                    "<include file=\"{}\">: includes nested deeper than {MAX_INCLUDE_DEPTH}",
                    esc(name)
                ),
            ));
        }
        let path = match dir {
            Some(d) => d.join(name),
            None => PathBuf::from(name),
        };
        let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
        if seen.contains(&canon) {
            return Err(model_error(
                file,
                elem.attr_line("file"),
                format!("<include file=\"{}\">: file included twice", esc(name)),
            ));
        }
        let text = std::fs::read_to_string(&path).map_err(|e| {
            model_error(
                file,
                elem.attr_line("file"),
                format!("<include file=\"{}\">: cannot read {}: {e}", esc(name), path.display()),
            )
        })?;
        seen.push(canon);
        let sub_dir = path.parent().map(Path::to_path_buf);
        self.add_file(&text, &path.display().to_string(), sub_dir.as_deref(), seen, depth + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--` in comments is relaxed without moving anything; other text is untouched.
    #[test]
    fn comments_with_double_dashes_are_relaxed() {
        let xml = "<a x=\"--\"><!-- gen --axes y ---><b/><!----></a>";
        let out = relax_comments(xml);
        assert_eq!(out, "<a x=\"--\"><!-- gen - axes y  --><b/><!----></a>");
        assert_eq!(out.len(), xml.len());
        assert!(roxmltree::Document::parse(&out).is_ok());
    }

    /// The line table agrees with roxmltree's own (quadratic) line computation.
    #[test]
    fn line_table_matches_text_pos() {
        let xml = "<mujoco>\n<a/>\n\n  <b\n x=\"1\"/>\n</mujoco>\n";
        let t = LineTable::new(xml);
        let d = roxmltree::Document::parse(xml).unwrap();
        for n in d.descendants() {
            assert_eq!(t.line_of(n.range().start), d.text_pos_at(n.range().start).row);
        }
    }

    #[test]
    fn escaping_keeps_one_line() {
        assert_eq!(esc("a\nb\t"), "a\\nb\\t");
        assert_eq!(one_line("x\ny"), "x\\ny");
        assert!(esc(&"z".repeat(200)).ends_with("..."));
    }
}
