//! The body tree reader (MuJoCo's `xml_native_reader.cc`: `Body`): bodies
//! and `<frame>`s with their `<inertial>`s, read with an explicit stack (bodies are numbered
//! depth-first in XML order, as MuJoCo numbers them), never by recursion.

use super::attrs::{check_leaf, join, Attrs};
use super::orientation::{normalized4, orientation, pose, ORIENTATION, POSE};
use super::reader::{BodySpec, MassProps, Reader};
use super::xml::{esc, Elem};
use crate::error::Result;
use crate::model::constants::mjEPS;
use crate::spatial::{quat_to_mat, Mat3, Vec3};

/// Attributes of a `<frame>`.
const FRAME_ATTRS: [&str; 8] = join(&[&["name", "childclass"], &POSE]);
/// Attributes of a `<body>`.
const BODY_ATTRS: [&str; 11] = join(&[&FRAME_ATTRS, &["mocap", "gravcomp", "simple"]]);
/// Attributes of an `<inertial>`.
const INERTIAL_ATTRS: [&str; 9] = join(&[&POSE, &["mass", "diaginertia", "fullinertia"]]);

impl<'d> Reader<'d> {
    /// Reads a `<worldbody>`: bodies depth-first in XML order (MuJoCo's numbering) with an
    /// explicit stack, never recursion.
    pub(crate) fn read_body_tree(&mut self, world: &'d Elem) -> Result<()> {
        let mut stack: Vec<Pending<'d>> = Vec::new();
        self.read_body_children(world, 0, 0, &mut stack)?;
        while let Some(p) = stack.pop() {
            let (idx, childclass) = self.read_body(&p)?;
            self.read_body_children(p.elem, idx, childclass, &mut stack)?;
        }
        Ok(())
    }

    /// Reads the child elements of MuJoCo body `me` (0 for `<worldbody>`): its joints, geoms and
    /// inertial, and the contents of its `<frame>`s; child bodies are pushed on `stack` (in
    /// reverse, so they are read in XML order).
    fn read_body_children(
        &mut self,
        e: &'d Elem,
        me: usize,
        childclass: usize,
        stack: &mut Vec<Pending<'d>>,
    ) -> Result<()> {
        let doc = self.doc;
        let mut inertial: Option<MassProps> = None;
        let mut inertial_line = 0;
        let is_world = me == 0;
        let mut bodies = Vec::new();
        // (element, frame pose, childclass): the body's children, then those of its frames
        let mut todo: Vec<(&'d Elem, Option<Frame>, usize)> = e
            .children
            .iter()
            .rev()
            .map(|&c| (&doc.elems[c], None, childclass))
            .collect();
        while let Some((child, frame, cc)) = todo.pop() {
            let tag = child.tag.as_str();
            let in_frame = frame.is_some();
            match tag {
                "body" => bodies.push(Pending {
                    elem: child,
                    parent: me,
                    childclass: cc,
                    frame,
                }),
                "frame" => {
                    let (f, fcc) = self.read_frame(child, cc)?;
                    let f = compose(frame, f);
                    todo.extend(child.children.iter().rev().map(|&c| (&doc.elems[c], Some(f), fcc)));
                }
                "geom" => {
                    check_leaf(doc, child)?;
                    let class = self.class_of(child, cc)?;
                    let Some(mut g) = self.read_geom(child, class, me)? else {
                        continue;
                    };
                    if let Some(f) = frame {
                        let (p, q) = f.apply(&g.geom.pos, &g.geom.quat);
                        g.geom.pos = p;
                        g.geom.quat = q;
                    }
                    self.bodies[me].geoms.push(g);
                }
                "joint" | "freejoint" | "inertial" if in_frame => {
                    return Err(self.err_elem(
                        child,
                        format!("element <{tag}> is not allowed inside <frame> (MuJoCo's schema)"),
                    ));
                }
                "joint" | "freejoint" if is_world => {
                    return Err(self.err_elem(child, "the world body cannot have joints"));
                }
                "inertial" if is_world => return Err(self.err_elem(child, "the world body cannot have an inertial")),
                "joint" | "freejoint" => {
                    check_leaf(doc, child)?;
                    let j = self.read_joint(child, cc, me)?;
                    self.bodies[me].joints.push(j);
                }
                "inertial" => {
                    check_leaf(doc, child)?;
                    if inertial.is_some() {
                        return Err(self.err_elem(
                            child,
                            format!("a body can have only one <inertial> (first at line {inertial_line})"),
                        ));
                    }
                    inertial_line = child.line;
                    inertial = Some(self.read_inertial(child)?);
                }
                "site" => {
                    check_leaf(doc, child)?;
                    let class = self.class_of(child, cc)?;
                    let mut site = self.read_site(child, class)?;
                    if let Some(f) = frame {
                        (site.pos, site.quat) = f.apply(&site.pos, &site.quat);
                    }
                    if !site.name.is_empty() {
                        self.site_index.insert(site.name.clone(), self.sites.len());
                    }
                    site.body = me;
                    self.sites.push(site);
                }
                "camera" | "light" => {
                    check_leaf(doc, child)?;
                    self.skip_element(child, "no effect on the dynamics")
                }
                other => {
                    return Err(self.err_elem(
                        child,
                        format!("element <{}> inside a body is not supported by this reader", esc(other)),
                    ))
                }
            }
        }
        stack.extend(bodies.into_iter().rev());
        if !is_world {
            self.bodies[me].mass = self.body_mass(me, inertial)?;
        }
        Ok(())
    }

    /// A `<frame>`: its pose and the childclass its contents use.
    fn read_frame(&mut self, e: &'d Elem, childclass: usize) -> Result<(Frame, usize)> {
        self.check_attrs(e, &FRAME_ATTRS)?;
        let a = Attrs::direct(&self.doc.files, e);
        let childclass = self.childclass(&a, childclass)?;
        let (pos, quat) = pose(&a, &self.compiler)?;
        Ok((Frame { pos, quat }, childclass))
    }

    /// The default class the contents of a `<body>` or `<frame>` use: its own `childclass`, else
    /// the one it inherits.
    fn childclass(&self, a: &Attrs, inherited: usize) -> Result<usize> {
        match a.last("childclass") {
            Some(src) => self
                .class_index
                .get(src.value.as_str())
                .copied()
                .ok_or_else(|| a.err_attr("childclass", src, "unknown default class")),
            None => Ok(inherited),
        }
    }

    /// Creates MuJoCo body `self.bodies.len()` from a `<body>` element; returns its index and the
    /// childclass its children use.
    fn read_body(&mut self, p: &Pending<'d>) -> Result<(usize, usize)> {
        let e = p.elem;
        self.check_attrs(e, &BODY_ATTRS)?;
        let a = Attrs::direct(&self.doc.files, e);
        let name = a.string("name").unwrap_or_default();
        if !name.is_empty() {
            if let Some(&other) = self.body_index.get(&name) {
                let first = self.bodies[other].line;
                return Err(a.err(format!("repeated body name '{}' (first at line {first})", esc(&name))));
            }
        }
        // checked with the joints when the model is emitted (MuJoCo's compiler checks it there)
        let mocap = a.boolean("mocap")? == Some(true);
        let gravcomp = a.real("gravcomp")?.unwrap_or(0.0);
        // `simple="false"` keeps the body's rows of M whole (MuJoCo's `mjsBody.simple`)
        let simple = a.keyword("simple", &["false", "auto"])? != Some("false");
        let childclass = self.childclass(&a, p.childclass)?;
        let (mut pos, mut quat) = pose(&a, &self.compiler)?;
        if let Some(f) = p.frame {
            (pos, quat) = f.apply(&pos, &quat);
        }
        let idx = self.bodies.len();
        if !name.is_empty() {
            self.body_index.insert(name.clone(), idx);
        }
        let doc = self.doc;
        let static_ = self.bodies[p.parent].static_
            && !e
                .children
                .iter()
                .any(|&c| doc.elems[c].tag == "joint" || doc.elems[c].tag == "freejoint");
        self.bodies.push(BodySpec {
            name,
            file: e.file,
            line: a.line,
            parent: p.parent,
            pos,
            quat,
            joints: vec![],
            geoms: vec![],
            mass: MassProps::zero(),
            static_,
            simple,
            gravcomp,
            mocap,
        });
        Ok((idx, childclass))
    }

    fn read_inertial(&mut self, e: &'d Elem) -> Result<MassProps> {
        self.check_attrs(e, &INERTIAL_ATTRS)?;
        let a = Attrs::direct(&self.doc.files, e);
        let Some(pos) = a.vec::<3>("pos")? else {
            return Err(a.err("required attribute 'pos' is missing"));
        };
        let Some(mass) = a.real("mass")? else {
            return Err(a.err("required attribute 'mass' is missing"));
        };
        if a.has("fullinertia") {
            if let Some(k) = ORIENTATION.iter().find(|k| a.has(k)) {
                return Err(a.err(format!("'fullinertia' and '{k}' cannot both be given")));
            }
            if a.has("diaginertia") {
                return Err(a.err("'fullinertia' and 'diaginertia' cannot both be given"));
            }
        }
        if mass < 0.0 {
            return Err(a.err_attr("mass", a.last("mass").unwrap(), "mass cannot be negative"));
        }
        let (inertia, principal, iquat) = if let Some(f) = a.vec::<6>("fullinertia")? {
            let m = Mat3::new(f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]);
            let (iq, ev) = crate::model::principal_axes(&m);
            let p = [ev[0], ev[1], ev[2]];
            if p.iter().any(|&x| x < mjEPS) {
                return Err(a.err_attr(
                    "fullinertia",
                    a.last("fullinertia").unwrap(),
                    "inertia must have positive eigenvalues",
                ));
            }
            (m, p, iq)
        } else {
            let d = a.vec::<3>("diaginertia")?.unwrap_or([0.0; 3]);
            if d.iter().any(|&x| x < 0.0) {
                return Err(a.err_attr(
                    "diaginertia",
                    a.last("diaginertia").unwrap(),
                    "inertia cannot be negative",
                ));
            }
            let q = orientation(&a, &self.compiler)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
            let r = quat_to_mat(&q);
            (r * Mat3::from_diagonal(&Vec3::from(d)) * r.transpose(), d, q)
        };
        let [p0, p1, p2] = principal;
        if p0 + p1 < p2 || p0 + p2 < p1 || p1 + p2 < p0 {
            return Err(a.err(format!(
                "principal moments ({p0:e}, {p1:e}, {p2:e}) violate A + B >= C (MuJoCo's balanceinertia is not supported)"
            )));
        }
        Ok(MassProps {
            mass,
            com: Vec3::from(pos),
            inertia,
            principal,
            iquat,
        })
    }
}

/// A `<body>` waiting on the reader's stack: its element, parent, inherited childclass and the
/// pose of the `<frame>`s around it.
pub(crate) struct Pending<'d> {
    elem: &'d Elem,
    parent: usize,
    childclass: usize,
    frame: Option<Frame>,
}

/// The pose of a `<frame>` in its body (frames nest by composition).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pos: Vec3,
    quat: [f64; 4],
}

impl Frame {
    /// A pose given in the frame, expressed in the body: `(p_f + R_f p, q_f q)`.
    fn apply(&self, pos: &Vec3, quat: &[f64; 4]) -> (Vec3, [f64; 4]) {
        (
            self.pos + quat_to_mat(&self.quat) * pos,
            normalized4(crate::spatial::quat_mul(&self.quat, quat)),
        )
    }
}

/// The frame `inner` placed in `outer` (if any).
fn compose(outer: Option<Frame>, inner: Frame) -> Frame {
    match outer {
        None => inner,
        Some(o) => {
            let (pos, quat) = o.apply(&inner.pos, &inner.quat);
            Frame { pos, quat }
        }
    }
}
