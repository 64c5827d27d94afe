//! The `<compiler>`, `<option>` and `<option><flag>` readers (MuJoCo's `xml_native_reader.cc`:
//! `Compiler`, `Option`): the settings that change how the rest of the file is read and the
//! simulation options of [`Options`](crate::model::Options).

use super::attrs::{check_leaf, Attrs};
use super::reader::Reader;
use super::xml::{esc, Elem};
use super::InertiaFromGeom;
use crate::error::Result;
use crate::model::LengthRangeMode;
use crate::spatial::Vec3;

impl<'d> Reader<'d> {
    /// `<compiler>`'s one child, `<lengthrange>` (MuJoCo's `mjLROpt`): every attribute is read
    /// into [`Options::lengthrange`](crate::model::Options::lengthrange), which
    /// `mbd::mujoco::lengthrange::set_length_range` (MuJoCo's `mj_setLengthRange`, a
    /// simulation, so above this reader's layer) uses to fill the actuator length ranges.
    fn read_compiler_lengthrange(&mut self, e: &'d Elem) -> Result<()> {
        let doc = self.doc;
        for (k, &c) in e.children.iter().enumerate() {
            let child = &doc.elems[c];
            if child.tag != "lengthrange" || k > 0 {
                return Err(self.err_elem(
                    child,
                    format!(
                        "element <{}> is not allowed inside <compiler> (only one <lengthrange>)",
                        esc(&child.tag)
                    ),
                ));
            }
            check_leaf(doc, child)?;
            self.check_attrs(
                child,
                &[
                    "mode",
                    "useexisting",
                    "uselimit",
                    "accel",
                    "maxforce",
                    "timeconst",
                    "timestep",
                    "inttotal",
                    "interval",
                    "tolrange",
                ],
            )?;
            let a = Attrs::direct(&doc.files, child);
            let lr = &mut self.opt.lengthrange;
            if let Some(mode) = a.keyword("mode", &["none", "muscle", "muscleuser", "all"])? {
                lr.mode = match mode {
                    "none" => LengthRangeMode::None,
                    "muscle" => LengthRangeMode::Muscle,
                    "muscleuser" => LengthRangeMode::MuscleUser,
                    _ => LengthRangeMode::All,
                };
            }
            lr.useexisting = a.boolean("useexisting")?.unwrap_or(lr.useexisting);
            lr.uselimit = a.boolean("uselimit")?.unwrap_or(lr.uselimit);
            for (key, x) in [
                ("accel", &mut lr.accel),
                ("maxforce", &mut lr.maxforce),
                ("timeconst", &mut lr.timeconst),
                ("timestep", &mut lr.timestep),
                ("inttotal", &mut lr.inttotal),
                ("interval", &mut lr.interval),
                ("tolrange", &mut lr.tolrange),
            ] {
                if let Some(v) = a.real(key)? {
                    *x = v;
                }
            }
        }
        Ok(())
    }

    pub(crate) fn read_compiler(&mut self, e: &'d Elem) -> Result<()> {
        self.read_compiler_lengthrange(e)?;
        let a = Attrs::direct(&self.doc.files, e);
        self.meshdir = a.string("meshdir").or(a.string("assetdir"));
        for k in ["texturedir", "strippath", "usethread"] {
            if a.has(k) {
                self.warn(
                    format!("attr compiler.{k}"),
                    e.file,
                    e.attr_line(k),
                    format!("attribute '{k}' of <compiler> skipped: no effect without meshes and textures"),
                );
            }
        }
        self.check_attrs(
            e,
            &[
                "angle",
                "coordinate",
                "eulerseq",
                "inertiafromgeom",
                "autolimits",
                "inertiagrouprange",
                "boundmass",
                "boundinertia",
                "settotalmass",
                "balanceinertia",
                "fusestatic",
                "discardvisual",
                "alignfree",
                "meshdir",
                "texturedir",
                "assetdir",
                "strippath",
                "usethread",
            ],
        )?;
        if let Some(k) = a.keyword("angle", &["degree", "radian"])? {
            self.compiler.degree = k == "degree";
        }
        if let Some(src) = a.last("eulerseq") {
            let s = src.value.trim().as_bytes();
            if s.len() != 3 || !s.iter().all(|c| b"xyzXYZ".contains(c)) {
                return Err(a.err_attr("eulerseq", src, "expected 3 characters from x, y, z, X, Y, Z"));
            }
            self.compiler.eulerseq = [s[0], s[1], s[2]];
        }
        if let Some(k) = a.keyword("inertiafromgeom", &["auto", "true", "false"])? {
            self.compiler.inertia_from_geom = match k {
                "true" => InertiaFromGeom::True,
                "false" => InertiaFromGeom::False,
                _ => InertiaFromGeom::Auto,
            };
        }
        if let Some(b) = a.boolean("autolimits")? {
            self.compiler.autolimits = b;
        }
        if let Some(src) = a.last("inertiagrouprange") {
            let toks: Vec<&str> = src.value.split_ascii_whitespace().collect();
            let parsed: Option<Vec<i32>> = toks.iter().map(|t| t.parse::<i32>().ok()).collect();
            match parsed {
                Some(v) if v.len() == 2 => self.compiler.inertia_group_range = [v[0], v[1]],
                _ => return Err(a.err_attr("inertiagrouprange", src, "expected 2 integers")),
            }
        }
        // Settings that would change masses or the body list: only their defaults are accepted.
        // MuJoCo 4.0 only reads frames in local coordinates
        a.keyword("coordinate", &["local"])?;
        if let Some(t) = a.real("settotalmass")? {
            self.settotalmass = t;
        }
        for (k, default) in [("boundmass", 0.0), ("boundinertia", 0.0)] {
            if let Some(v) = a.real(k)? {
                if v != default {
                    return Err(a.err_attr(
                        k,
                        a.last(k).unwrap(),
                        format!("only the default {default} is supported"),
                    ));
                }
            }
        }
        for k in ["balanceinertia", "fusestatic", "discardvisual", "alignfree"] {
            if a.boolean(k)? == Some(true) {
                return Err(a.err_attr(k, a.last(k).unwrap(), "only \"false\" is supported"));
            }
        }
        Ok(())
    }

    pub(crate) fn read_option(&mut self, e: &'d Elem) -> Result<()> {
        let a = Attrs::direct(&self.doc.files, e);
        for k in ["jacobian"] {
            if a.has(k) {
                self.warn(
                    format!("attr option.{k}"),
                    e.file,
                    e.attr_line(k),
                    format!("attribute '{k}' of <option> skipped: no effect on the dynamics computed here"),
                );
            }
        }
        self.check_attrs(
            e,
            &[
                "timestep",
                "gravity",
                "integrator",
                "solver",
                "cone",
                "iterations",
                "tolerance",
                "ls_iterations",
                "ls_tolerance",
                "noslip_iterations",
                "noslip_tolerance",
                "impratio",
                "density",
                "viscosity",
                "wind",
                "magnetic",
                "jacobian",
            ],
        )?;
        if let Some(t) = a.real("timestep")? {
            if t <= 0.0 {
                return Err(a.err_attr("timestep", a.last("timestep").unwrap(), "must be positive"));
            }
            self.opt.timestep = t;
        }
        if let Some(g) = a.vec::<3>("gravity")? {
            self.opt.gravity = Vec3::from(g);
        }
        if let Some(k) = a.keyword("integrator", &["Euler", "RK4", "implicit", "implicitfast"])? {
            self.opt.integrator = crate::model::Integrator::parse(k)?;
        }
        if let Some(k) = a.keyword("solver", &["PGS", "CG", "Newton"])? {
            self.opt.solver = crate::model::Solver::parse(k)?;
        }
        if let Some(k) = a.keyword("cone", &["pyramidal", "elliptic"])? {
            self.opt.cone = crate::model::Cone::parse(k)?;
        }
        if let Some(n) = a.int("iterations")? {
            if n < 0 {
                return Err(a.err_attr("iterations", a.last("iterations").unwrap(), "must be >= 0"));
            }
            self.opt.iterations = n as usize;
        }
        if let Some(t) = a.real("tolerance")? {
            self.opt.tolerance = t;
        }
        for (key, slot) in [
            ("ls_iterations", &mut self.opt.ls_iterations),
            ("noslip_iterations", &mut self.opt.noslip_iterations),
        ] {
            if let Some(n) = a.int(key)? {
                if n < 0 {
                    return Err(a.err_attr(key, a.last(key).unwrap(), "must be >= 0"));
                }
                *slot = n as usize;
            }
        }
        for (key, slot) in [
            ("ls_tolerance", &mut self.opt.ls_tolerance),
            ("noslip_tolerance", &mut self.opt.noslip_tolerance),
        ] {
            if let Some(t) = a.real(key)? {
                if !(t >= 0.0) {
                    return Err(a.err_attr(key, a.last(key).unwrap(), "must be >= 0"));
                }
                *slot = t;
            }
        }
        if let Some(r) = a.real("impratio")? {
            self.opt.impratio = r;
        }
        if let Some(x) = a.real("density")? {
            self.opt.density = x;
        }
        if let Some(x) = a.real("viscosity")? {
            if x < 0.0 {
                return Err(a.err_key("viscosity", "must be >= 0"));
            }
            self.opt.viscosity = x;
        }
        if let Some(w) = a.vec::<3>("wind")? {
            self.opt.wind = Vec3::from(w);
        }
        if let Some(m) = a.vec::<3>("magnetic")? {
            self.opt.magnetic = Vec3::from(m);
        }
        for child in e.children.iter().map(|&c| &self.doc.elems[c]) {
            match child.tag.as_str() {
                "flag" => {
                    check_leaf(self.doc, child)?;
                    self.read_flags(child)?;
                }
                other => {
                    return Err(self.err_elem(child, format!("element <{other}> inside <option> is not supported")))
                }
            }
        }
        Ok(())
    }

    /// `<flag>`: MuJoCo's `disableflags`/`enableflags`. A disabled gravity is applied (gravity
    /// set to zero, as `mj_rne` then ignores it); disabling springs, dampers or actuation would
    /// change the passive and actuator forces and is rejected; every other flag concerns stages
    /// not computed here and is stored in [`Options::flags`] with a warning.
    fn read_flags(&mut self, e: &'d Elem) -> Result<()> {
        const FLAGS: [(&str, bool); 26] = [
            ("constraint", true),
            ("equality", true),
            ("frictionloss", true),
            ("limit", true),
            ("contact", true),
            ("spring", true),
            ("damper", true),
            ("gravity", true),
            ("clampctrl", true),
            ("warmstart", true),
            ("filterparent", true),
            ("actuation", true),
            ("refsafe", true),
            ("sensor", true),
            ("midphase", true),
            ("eulerdamp", true),
            ("autoreset", true),
            ("nativeccd", true),
            ("island", true),
            ("override", false),
            ("energy", false),
            ("fwdinv", false),
            ("invdiscrete", false),
            ("multiccd", false),
            ("sleep", false),
            ("passive", true),
        ];
        let a = Attrs::direct(&self.doc.files, e);
        for attr in &e.attrs {
            let Some(&(name, default)) = FLAGS.iter().find(|(n, _)| *n == attr.name) else {
                return Err(self.err_at(e.file, attr.line, format!("<flag>: unknown flag '{}'", esc(&attr.name))));
            };
            let on = a.keyword(name, &["enable", "disable"])? == Some("enable");
            if on == default {
                continue;
            }
            match name {
                "gravity" => self.opt.gravity = Vec3::zeros(),
                "spring" | "damper" | "actuation" | "passive" => {
                    return Err(a.err_key(name, "disabling passive or actuator forces is not implemented"))
                }
                // honoured by the simulator (mujoco::integrator, dynamics::actuation)
                "eulerdamp" | "clampctrl" | "warmstart" => {}
                _ => self.warn(
                    format!("flag {name}"),
                    e.file,
                    attr.line,
                    format!(
                        "<flag {name}=\"{}\"> stored in Options::flags: it concerns a stage (constraints, contacts, integration, energy) not computed yet",
                        if on { "enable" } else { "disable" }
                    ),
                ),
            }
            self.opt.flags.push((name.to_string(), on));
        }
        Ok(())
    }
}
