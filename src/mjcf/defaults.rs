//! Default classes (MuJoCo's `<default>`, `mjsDefault`): a tree of named classes, each holding
//! attribute values per element kind; an element's attributes are its class chain's values from
//! the root `main` down, then its own.

use super::actuator::Shortcut;
use super::attrs::{check_leaf, Attrs, Src};
use super::orientation::ORIENTATION;
use super::reader::Reader;
use super::xml::{esc, Elem};
use crate::error::Result;
use std::collections::BTreeMap;

/// A default class: its parent and the attributes it sets, per element kind (`joint`, `geom`),
/// and its actuator elements in order (indices into the document's elements), which
/// `actuator.rs` turns into the class's one actuator default.
#[derive(Clone, Debug)]
pub(crate) struct Class {
    pub name: String,
    pub parent: Option<usize>,
    pub items: Vec<(&'static str, Vec<(String, Src)>)>,
    pub actuators: Vec<usize>,
}

/// Attributes a `<default>` may set, per element kind: the element's own list without `name`
/// and `class`.
pub(crate) fn default_kind(tag: &str) -> Option<(&'static str, &'static [&'static str])> {
    match tag {
        "joint" => Some(("joint", &super::joint::JOINT_ATTRS)),
        "geom" => Some(("geom", &super::geom::GEOM_ATTRS)),
        "site" => Some(("site", &super::site::SITE_ATTRS)),
        "tendon" => Some(("tendon", &super::tendon::TENDON_ATTRS)),
        "equality" => Some(("equality", &super::equality::EQUALITY_ATTRS)),
        "pair" => Some(("pair", &super::contact::PAIR_ATTRS)),
        _ => None,
    }
}

impl<'d> Reader<'d> {
    /// Reads every top-level `<default>` into the class tree (iteratively: nesting depth is the
    /// stack's, not the call stack's).
    pub(crate) fn read_defaults(&mut self) -> Result<()> {
        // The main class always exists; every top-level <default> adds to it.
        self.classes.push(Class {
            name: "main".into(),
            parent: None,
            items: vec![],
            actuators: vec![],
        });
        self.class_index.insert("main".into(), 0);
        let doc = self.doc;
        let tops: Vec<usize> = doc.elems[doc.root]
            .children
            .iter()
            .copied()
            .filter(|&c| doc.elems[c].tag == "default")
            .collect();
        for top in tops {
            let e = &doc.elems[top];
            self.check_attrs(e, &["class"])?;
            if let Some(c) = e.attr("class") {
                if c != "main" {
                    return Err(self.err_at(
                        e.file,
                        e.attr_line("class"),
                        format!(
                            "{}: the top-level default class is 'main' and cannot be renamed",
                            e.describe()
                        ),
                    ));
                }
            }
            let mut stack = vec![(top, 0usize)];
            while let Some((node, class)) = stack.pop() {
                let kids = doc.elems[node].children.clone();
                let mut nested = Vec::new();
                for c in kids {
                    if let Some(n) = self.read_default_child(c, class)? {
                        nested.push((c, n));
                    }
                }
                stack.extend(nested.into_iter().rev());
            }
        }
        Ok(())
    }

    /// One child of a `<default>` (element `index`): a nested class (returned, to be read next)
    /// or the defaults of one element kind.
    fn read_default_child(&mut self, index: usize, class: usize) -> Result<Option<usize>> {
        let doc = self.doc;
        let child = &doc.elems[index];
        let tag = child.tag.as_str();
        if tag == "default" {
            self.check_attrs(child, &["class"])?;
            let Some(name) = child.attr("class") else {
                return Err(self.err_elem(child, "a nested <default> needs a 'class' attribute"));
            };
            if self.class_index.contains_key(name) {
                return Err(self.err_at(
                    child.file,
                    child.attr_line("class"),
                    format!("{}: repeated default class name '{}'", child.describe(), esc(name)),
                ));
            }
            let idx = self.classes.len();
            self.classes.push(Class {
                name: name.into(),
                parent: Some(class),
                items: vec![],
                actuators: vec![],
            });
            self.class_index.insert(name.into(), idx);
            return Ok(Some(idx));
        }
        check_leaf(doc, child)?;
        if let Some(sc) = Shortcut::parse(tag) {
            // one actuator default per class, built from these elements in order
            self.check_actuator_attrs(child, sc, &[])?;
            let no_default = ["lengthrange", "tausmooth"];
            if let Some(a) = child.attrs.iter().find(|a| no_default.contains(&a.name.as_str())) {
                return Err(self.err_at(
                    child.file,
                    a.line,
                    format!(
                        "{}: attribute '{}' is not allowed in a default",
                        child.describe(),
                        a.name
                    ),
                ));
            }
            self.classes[class].actuators.push(index);
            return Ok(None);
        }
        if tag == "material" {
            // a material default: its rgba (the rest is visual only, skipped with a warning)
            self.check_material_attrs(child, &[])?;
            let cname = self.classes[class].name.clone();
            let rgba: Vec<(String, Src)> = child
                .attrs
                .iter()
                .filter(|a| a.name == "rgba")
                .map(|a| {
                    let src = Src {
                        value: a.value.clone(),
                        file: child.file,
                        line: a.line,
                        class: Some(cname.clone()),
                    };
                    (a.name.clone(), src)
                })
                .collect();
            self.classes[class].items.push(("material", rgba));
            return Ok(None);
        }
        if let Some((kind, list)) = default_kind(tag) {
            self.check_attrs(child, list)?;
            let cname = self.classes[class].name.clone();
            // a geom's `rgba` and `material` are read (rays skip invisible geoms); other
            // elements' visual attributes are not
            let cosmetic = |n: &str| kind != "geom" && super::reader::COSMETIC.contains(&n);
            let attrs: Vec<(String, Src)> = child
                .attrs
                .iter()
                .filter(|a| list.contains(&a.name.as_str()) && !cosmetic(a.name.as_str()))
                .map(|a| {
                    let src = Src {
                        value: a.value.clone(),
                        file: child.file,
                        line: a.line,
                        class: Some(cname.clone()),
                    };
                    (a.name.clone(), src)
                })
                .collect();
            let cls = &mut self.classes[class];
            match cls.items.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, v)) => v.extend(attrs),
                None => cls.items.push((kind, attrs)),
            }
            return Ok(None);
        }
        match tag {
            "camera" | "light" | "mesh" | "texture" => self.skip_element(child, "defaults for visual elements"),
            "adhesion" => {
                // it would become the class's actuator default, whose ctrlrange and gear every
                // actuator of the class inherits: refused rather than skipped
                return Err(self.err_elem(
                    child,
                    "an <adhesion> default is not supported (the reader rejects adhesion actuators, and the class's other actuators would inherit from it)",
                ));
            }
            other => {
                return Err(self.err_elem(
                    child,
                    format!("element <{}> inside <default> is not supported", esc(other)),
                ))
            }
        }
        Ok(None)
    }

    /// The class an element uses: its own `class`, else the enclosing `childclass`, else main.
    pub(crate) fn class_of(&self, e: &Elem, inherited: usize) -> Result<usize> {
        match e.attr("class") {
            Some(c) => self.class_index.get(c).copied().ok_or_else(|| {
                self.err_at(
                    e.file,
                    e.attr_line("class"),
                    format!("{}: unknown default class '{}'", e.describe(), esc(c)),
                )
            }),
            None => Ok(inherited),
        }
    }

    /// The attributes of an element of `kind` after resolving its default class.
    pub(crate) fn resolved(&self, e: &Elem, kind: &str, class: usize) -> Attrs<'d> {
        let mut chain = vec![class];
        while let Some(p) = self.classes[*chain.last().unwrap()].parent {
            chain.push(p);
        }
        chain.reverse();
        let own_orientation = ORIENTATION.iter().any(|k| e.has(k));
        let mut map: BTreeMap<String, Vec<Src>> = BTreeMap::new();
        for &c in &chain {
            let cls = &self.classes[c];
            for (_, list) in cls.items.iter().filter(|(k, _)| *k == kind) {
                for (k, src) in list {
                    // An orientation written on the element replaces any the classes give.
                    if own_orientation && ORIENTATION.contains(&k.as_str()) {
                        continue;
                    }
                    map.entry(k.clone()).or_default().push(src.clone());
                }
            }
        }
        for a in &e.attrs {
            if a.name == "class" {
                continue;
            }
            let src = Src {
                value: a.value.clone(),
                file: e.file,
                line: a.line,
                class: None,
            };
            map.entry(a.name.clone()).or_default().push(src);
        }
        Attrs {
            files: &self.doc.files,
            file: e.file,
            tag: e.describe(),
            line: e.line,
            map,
        }
    }
}
