//! `<asset>`: meshes, height fields and materials (MuJoCo's `mjCMesh`, `mjCHField`,
//! `mjCMaterial` in `user_mesh.cc`, `user_objects.cc`). Textures only change how a model looks
//! and are skipped; of a material only the colour is read (a material with alpha 0 hides its
//! geoms from rays), its other attributes are skipped with a warning.
//!
//! A mesh comes from inline `vertex=` (and optional `face=`) or from a `file=` (binary or ASCII
//! STL, OBJ) found relative to the model file's directory and `<compiler meshdir>`. As MuJoCo:
//! vertices are stored in single precision; `refpos`, `refquat` then `scale` are applied; volume,
//! centre of mass and inertia come from the faces (or the convex hull's when no faces are given,
//! [`crate::model::mesh::mass_properties`]); the mesh is moved to its centre of mass and turned
//! to its principal axes (`mesh_pos`, `mesh_quat` keep where that frame was), and the geom frame
//! of a mesh geom is composed with it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::attrs::{Attrs, Src};
use super::reader::Reader;
use super::xml::{esc, model_error, Elem};
use crate::error::{Error, Result};
use crate::model::mesh::{mass_properties, quickhull, shell_properties, HField, Mesh};
use crate::model::{mj_eig3, quat_to_mat_mj, Material};
use crate::spatial::{quat_to_mat, Mat3, Vec3};

/// The meshes, height fields and materials of a model, by name.
#[derive(Default)]
pub(crate) struct AssetSet {
    pub meshes: Vec<Mesh>,
    pub mesh_index: HashMap<String, usize>,
    /// Each mesh's `material` attribute as written (resolved by [`Reader::read_materials`]).
    pub mesh_material_name: Vec<Option<Src>>,
    /// Each mesh's material, the fallback of its geoms that name none (MuJoCo's rule).
    pub mesh_material: Vec<Option<usize>>,
    pub hfields: Vec<HField>,
    pub hfield_index: HashMap<String, usize>,
    pub materials: Vec<Material>,
    pub material_index: HashMap<String, usize>,
}

/// The attributes of a `<material>` that only change how the model looks (skipped with a
/// warning; `rgba` is read).
const MATERIAL_VISUAL: [&str; 9] = [
    "texture",
    "texrepeat",
    "texuniform",
    "emission",
    "specular",
    "shininess",
    "reflectance",
    "metallic",
    "roughness",
];

impl<'d> Reader<'d> {
    /// Checks the attributes of a `<material>` (in `<asset>` or `<default>`): `rgba` and `own`
    /// pass, the visual ones are skipped with one warning per kind, anything else is an error.
    pub(crate) fn check_material_attrs(&mut self, e: &Elem, own: &[&str]) -> Result<()> {
        for a in &e.attrs {
            let name = a.name.as_str();
            if name == "rgba" || own.contains(&name) {
                continue;
            }
            if MATERIAL_VISUAL.contains(&name) {
                self.warn(
                    format!("attr material.{name}"),
                    e.file,
                    a.line,
                    format!("attribute '{name}' of <material> skipped: visual only"),
                );
                continue;
            }
            return Err(self.err_at(
                e.file,
                a.line,
                format!(
                    "{}: attribute '{}' is not supported by this reader",
                    e.describe(),
                    esc(name)
                ),
            ));
        }
        Ok(())
    }

    /// Reads every `<asset><material>` (name, default class, `rgba`, default `1 1 1 1`) in
    /// document order, MuJoCo's `mat_` numbering, then resolves the meshes' `material`
    /// fallbacks. Needs the default classes.
    pub(crate) fn read_materials(&mut self) -> Result<()> {
        let doc = self.doc;
        for sec in self.sections("asset") {
            for &c in &sec.children {
                let e = &doc.elems[c];
                if e.tag != "material" {
                    continue;
                }
                self.check_material_attrs(e, &["name", "class"])?;
                for &k in &e.children {
                    let child = &doc.elems[k];
                    if child.tag != "layer" {
                        return Err(self.err_elem(child, "only <layer> is allowed inside <material>"));
                    }
                    super::attrs::check_leaf(doc, child)?;
                    self.skip_element(child, "visualisation only");
                }
                let class = self.class_of(e, 0)?;
                let a = self.resolved(e, "material", class);
                let name = a.string("name").ok_or_else(|| a.err("a material needs a name"))?;
                if self.assets.material_index.contains_key(&name) {
                    return Err(a.err(format!("repeated material name '{}'", esc(&name))));
                }
                let rgba = a.vec::<4>("rgba")?.unwrap_or([1.0; 4]).map(f32r);
                self.assets
                    .material_index
                    .insert(name.clone(), self.assets.materials.len());
                self.assets.materials.push(Material { name, rgba });
            }
        }
        let mut resolved = Vec::with_capacity(self.assets.meshes.len());
        for src in &self.assets.mesh_material_name {
            resolved.push(match src {
                None => None,
                Some(s) => match self.assets.material_index.get(s.value.as_str()) {
                    Some(&k) => Some(k),
                    None => {
                        return Err(model_error(
                            &doc.files[s.file],
                            s.line,
                            format!("<mesh>: attribute material=\"{}\": unknown material", esc(&s.value)),
                        ))
                    }
                },
            });
        }
        self.assets.mesh_material = resolved;
        Ok(())
    }
}

/// Rounds to single precision, as MuJoCo stores mesh vertices and height-field data (`float`).
fn f32r(x: f64) -> f64 {
    x as f32 as f64
}

/// MuJoCo's scaling of height-field data to `[0, 1]` (end of `mjCHField::Compile`), in single
/// precision as MuJoCo stores it: subtract the minimum, then divide by the range when that
/// exceeds `mjEPS` = 1e-14 (a flat field stays all zeros).
fn normalize_elevation(raw: &[f32]) -> Vec<f64> {
    let (lo, hi) = raw
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
    let range = hi - lo;
    raw.iter()
        .map(|&x| {
            let y = x - lo;
            (if (range as f64) > 1e-14 { y / range } else { y }) as f64
        })
        .collect()
}

/// The triangles and vertices of an STL file (binary or ASCII); errors name the file and line.
pub(crate) fn read_stl(path: &Path) -> Result<(Vec<Vec3>, Vec<[usize; 3]>)> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| model_error(&name, 0, format!("cannot read mesh file: {e}")))?;
    let mut verts: Vec<Vec3> = vec![];
    let mut index: HashMap<[u32; 3], usize> = HashMap::new();
    let mut add = |p: [f32; 3], verts: &mut Vec<Vec3>| {
        let key = p.map(f32::to_bits);
        *index.entry(key).or_insert_with(|| {
            verts.push(Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64));
            verts.len() - 1
        })
    };
    let mut faces = vec![];
    let is_ascii = bytes.starts_with(b"solid")
        && std::str::from_utf8(&bytes).is_ok_and(|s| s.contains("facet") || s.trim_end().ends_with("endsolid"));
    if is_ascii {
        let text = std::str::from_utf8(&bytes).unwrap_or_default();
        let mut tri: Vec<usize> = vec![];
        for (k, line) in text.lines().enumerate() {
            let mut w = line.split_whitespace();
            if w.next() != Some("vertex") {
                continue;
            }
            let nums: Vec<&str> = w.collect();
            let p: Vec<f32> = nums.iter().filter_map(|t| t.parse().ok()).collect();
            if nums.len() != 3 || p.len() != 3 || !p.iter().all(|x| x.is_finite()) {
                return Err(model_error(
                    &name,
                    k as u32 + 1,
                    format!("malformed STL vertex '{}': expected 3 finite numbers", line.trim()),
                ));
            }
            tri.push(add([p[0], p[1], p[2]], &mut verts));
            if tri.len() == 3 {
                faces.push([tri[0], tri[1], tri[2]]);
                tri.clear();
            }
        }
        if !tri.is_empty() {
            return Err(model_error(
                &name,
                text.lines().count() as u32,
                "STL facet with fewer than 3 vertices",
            ));
        }
    } else {
        if bytes.len() < 84 {
            return Err(model_error(
                &name,
                0,
                format!("binary STL shorter than its 84-byte header ({} bytes)", bytes.len()),
            ));
        }
        let n = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
        if bytes.len() != 84 + 50 * n {
            return Err(model_error(
                &name,
                0,
                format!(
                    "binary STL of {n} triangles must have {} bytes, has {}",
                    84 + 50 * n,
                    bytes.len()
                ),
            ));
        }
        for t in 0..n {
            let base = 84 + 50 * t + 12;
            let mut f = [0; 3];
            for (v, slot) in f.iter_mut().enumerate() {
                let mut p = [0f32; 3];
                for (c, x) in p.iter_mut().enumerate() {
                    let o = base + 12 * v + 4 * c;
                    *x = f32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
                }
                if !p.iter().all(|x| x.is_finite()) {
                    return Err(model_error(
                        &name,
                        0,
                        format!("binary STL triangle {t} has a non-finite vertex"),
                    ));
                }
                *slot = add(p, &mut verts);
            }
            faces.push(f);
        }
    }
    if faces.is_empty() {
        return Err(model_error(&name, 0, "STL file has no triangles"));
    }
    Ok((verts, faces))
}

// ANCHOR: png_hfield
/// The elevation grid of a PNG height field, as MuJoCo's `mjCHField::LoadPNG` reads it: the
/// image decoded to 8-bit grey (lodepng's `LCT_GREY`: palettes expanded, 16-bit samples cut
/// to their high byte, and a colour pixel's grey taken as its **red** sample), `ncol` = width,
/// `nrow` = height, and the rows reversed (the image's top row is the grid's last row, at
/// `+size_y`). Returns `(nrow, ncol, data)` with `data[r * ncol + c]` in `0..=255`.
///
/// Errors: [`Error::Model`] naming the file when it cannot be read or decoded, or is empty.
pub(crate) fn read_png_hfield(path: &Path) -> Result<(usize, usize, Vec<f32>)> {
    let name = path.display().to_string();
    let bad = |why: String| model_error(&name, 0, why);
    let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot read height-field file: {e}")))?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder
        .read_info()
        .map_err(|e| bad(format!("error decoding PNG file: {e}")))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| bad("PNG image too large".into()))?;
    let mut buf = vec![0u8; size];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| bad(format!("error decoding PNG file: {e}")))?;
    let (ncol, nrow) = (info.width as usize, info.height as usize);
    if nrow == 0 || ncol == 0 {
        return Err(bad("empty PNG image".into()));
    }
    // samples per pixel after the transformations (8 bits each): grey, grey + alpha, RGB, RGBA
    let channels = info.color_type.samples();
    let mut data = Vec::with_capacity(nrow * ncol);
    for r in 0..nrow {
        let row = &buf[(nrow - 1 - r) * info.line_size..];
        for c in 0..ncol {
            data.push(row[c * channels] as f32);
        }
    }
    Ok((nrow, ncol, data))
}
// ANCHOR_END: png_hfield

/// The vertices and (fan-triangulated) faces of an OBJ file (`v` and `f` lines; `f` entries may
/// be `i`, `i/t`, `i//n`, `i/t/n`, negative = from the end); errors name the file and line.
pub(crate) fn read_obj(path: &Path) -> Result<(Vec<Vec3>, Vec<[usize; 3]>)> {
    let name = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| model_error(&name, 0, format!("cannot read mesh file: {e}")))?;
    let mut verts = vec![];
    let mut faces = vec![];
    for (k, line) in text.lines().enumerate() {
        let lineno = k as u32 + 1;
        let mut w = line.split_whitespace();
        match w.next() {
            Some("v") => {
                let nums: Vec<f32> = w.clone().take(3).filter_map(|t| t.parse().ok()).collect();
                if nums.len() != 3 || !nums.iter().all(|x| x.is_finite()) {
                    return Err(model_error(
                        &name,
                        lineno,
                        format!("malformed OBJ vertex '{}'", line.trim()),
                    ));
                }
                verts.push(Vec3::new(nums[0] as f64, nums[1] as f64, nums[2] as f64));
            }
            Some("f") => {
                let mut idx = vec![];
                for t in w {
                    let first = t.split('/').next().unwrap_or("");
                    let i: i64 = first
                        .parse()
                        .map_err(|_| model_error(&name, lineno, format!("malformed OBJ face entry '{t}'")))?;
                    let n = verts.len() as i64;
                    let j = if i < 0 { n + i } else { i - 1 };
                    if !(0..n).contains(&j) {
                        return Err(model_error(
                            &name,
                            lineno,
                            format!("OBJ face refers to vertex {i}, but {n} vertices are defined so far"),
                        ));
                    }
                    idx.push(j as usize);
                }
                if idx.len() < 3 {
                    return Err(model_error(&name, lineno, "OBJ face with fewer than 3 vertices"));
                }
                for k in 1..idx.len() - 1 {
                    faces.push([idx[0], idx[k], idx[k + 1]]);
                }
            }
            _ => {}
        }
    }
    if verts.is_empty() {
        return Err(model_error(&name, 0, "OBJ file has no vertices"));
    }
    Ok((verts, faces))
}

/// The `<mesh>` attributes that shape the compiled mesh: `refpos`, `refquat`, `scale` and
/// whether `inertia="shell"`.
pub(crate) struct MeshOptions {
    pub refpos: Vec3,
    pub refquat: [f64; 4],
    pub scale: Vec3,
    pub shell: bool,
}

/// Compiles a mesh: transforms, hull, mass properties (of the volume, or of the surface for a
/// shell), principal frame (see the module map). `at` names the `<mesh>` element for errors.
pub(crate) fn compile_mesh(
    name: &str,
    raw: Vec<Vec3>,
    faces: Vec<[usize; 3]>,
    opts: &MeshOptions,
    at: &dyn Fn(String) -> Error,
) -> Result<Mesh> {
    let MeshOptions {
        refpos,
        refquat,
        scale,
        shell,
    } = *opts;
    let q = {
        let n = refquat.iter().map(|x| x * x).sum::<f64>().sqrt();
        refquat.map(|x| x / n)
    };
    let rq: Mat3 = quat_to_mat(&q);
    let verts: Vec<Vec3> = raw
        .iter()
        .map(|v| {
            let v = v.map(f32r);
            (rq.transpose() * (v - refpos)).component_mul(&scale)
        })
        .collect();
    if let Some(f) = faces.iter().find(|f| f.iter().any(|&i| i >= verts.len())) {
        return Err(at(format!(
            "face {f:?} refers to a vertex past the {} vertices",
            verts.len()
        )));
    }
    let mut faces = faces;
    if scale.x * scale.y * scale.z < 0.0 {
        for f in &mut faces {
            f.swap(1, 2);
        }
    }
    let hull = quickhull(&verts).map_err(|e| at(format!("mesh '{}': {e}", esc(name))))?;
    let tri = if faces.is_empty() {
        // the hull's triangles, in the input vertices' numbering
        hull.triangles
            .iter()
            .map(|t| t.map(|k| verts.iter().position(|v| *v == hull.vertices[k]).unwrap_or(0)))
            .collect()
    } else {
        faces
    };
    let (volume, com, inertia) = if shell {
        shell_properties(&verts, &tri)
    } else {
        mass_properties(&verts, &tri)
    }
    .map_err(|e| at(format!("mesh '{}': {e}", esc(name))))?;
    // the mesh frame as MuJoCo's compiler finds it (its Jacobi iteration, signs and last
    // digits included): the vertices are rounded to single precision in this frame
    let (quat, principal) = mj_eig3(&inertia);
    // into that frame as MuJoCo's compiler turns them (`mjCMesh::Rotate`): R(q*) (v - com),
    // each entry summed in its order
    let rt = quat_to_mat_mj(&[quat[0], -quat[1], -quat[2], -quat[3]]);
    let exact = |v: &Vec3| {
        let d = v - com;
        Vec3::new(
            rt[(0, 0)] * d[0] + rt[(0, 1)] * d[1] + rt[(0, 2)] * d[2],
            rt[(1, 0)] * d[0] + rt[(1, 1)] * d[1] + rt[(1, 2)] * d[2],
            rt[(2, 0)] * d[0] + rt[(2, 1)] * d[1] + rt[(2, 2)] * d[2],
        )
    };
    let local = |v: &Vec3| exact(v).map(f32r);
    let vertices: Vec<Vec3> = verts.iter().map(local).collect();
    let half_extent = verts
        .iter()
        .fold(Vec3::zeros(), |h, v| h.zip_map(&exact(v), |a, b| a.max(b.abs())));
    // MuJoCo bins the hull's triangles into polygons in the file's frame (before refpos,
    // refquat and scale) and takes each polygon's normal in the mesh frame
    let key: Vec<Vec3> = hull
        .vertices
        .iter()
        .map(|h| verts.iter().position(|v| v == h).map_or(*h, |i| raw[i].map(f32r)))
        .collect();
    let mut hull = hull;
    for v in &mut hull.vertices {
        *v = local(v);
    }
    hull.merge_polygons(&key);
    Ok(Mesh {
        name: name.to_string(),
        vertices,
        faces: tri,
        hull,
        volume,
        inertia: principal,
        pos: com,
        quat,
        half_extent,
    })
}

/// Reads the `<mesh>` and `<hfield>` children of every `<asset>`; other asset kinds are left
/// to the caller's warning. `model_dir` is the directory of the model file, `meshdir` the
/// compiler's.
pub(crate) fn read_assets(
    files: &[String],
    sections: &[&Elem],
    elems: &[Elem],
    model_dir: &Path,
    meshdir: Option<&str>,
) -> Result<AssetSet> {
    let mut set = AssetSet::default();
    for sec in sections {
        for &c in &sec.children {
            let e = &elems[c];
            match e.tag.as_str() {
                "mesh" => {
                    let a = Attrs::direct(files, e);
                    let err = |why: String| a.err(why);
                    let file = a.string("file");
                    let name = a
                        .string("name")
                        .or_else(|| {
                            file.as_ref().map(|f| {
                                Path::new(f)
                                    .file_stem()
                                    .map_or(f.clone(), |s| s.to_string_lossy().into_owned())
                            })
                        })
                        .ok_or_else(|| a.err("a mesh needs a name or a file"))?;
                    let (raw, faces) = if let Some(f) = &file {
                        let mut p = PathBuf::from(model_dir);
                        if let Some(d) = meshdir {
                            p.push(d);
                        }
                        p.push(f);
                        if !p.exists() {
                            return Err(a.err(format!(
                                "mesh file '{}' not found (looked for {})",
                                esc(f),
                                p.display()
                            )));
                        }
                        match p
                            .extension()
                            .and_then(|x| x.to_str())
                            .map(|x| x.to_ascii_lowercase())
                            .as_deref()
                        {
                            Some("stl") => read_stl(&p)?,
                            Some("obj") => read_obj(&p)?,
                            _ => return Err(a.err(format!("mesh file '{}': only .stl and .obj are read", esc(f)))),
                        }
                    } else {
                        let v = a
                            .reals("vertex")?
                            .ok_or_else(|| a.err("a mesh needs vertex= or file="))?;
                        if v.len() % 3 != 0 {
                            return Err(a.err(format!("vertex has {} numbers, not a multiple of 3", v.len())));
                        }
                        let verts = v.chunks(3).map(|c| Vec3::new(c[0], c[1], c[2])).collect();
                        let f = a.reals("face")?.unwrap_or_default();
                        if f.len() % 3 != 0 || f.iter().any(|x| *x < 0.0 || x.fract() != 0.0) {
                            return Err(a.err("face must be a list of vertex index triples"));
                        }
                        let faces = f
                            .chunks(3)
                            .map(|c| [c[0] as usize, c[1] as usize, c[2] as usize])
                            .collect();
                        (verts, faces)
                    };
                    let opts = MeshOptions {
                        refpos: Vec3::from(a.vec::<3>("refpos")?.unwrap_or([0.0; 3])),
                        refquat: a.vec::<4>("refquat")?.unwrap_or([1.0, 0.0, 0.0, 0.0]),
                        scale: Vec3::from(a.vec::<3>("scale")?.unwrap_or([1.0; 3])),
                        shell: a.keyword("inertia", &["legacy", "convex", "exact", "shell"])? == Some("shell"),
                    };
                    if set.mesh_index.contains_key(&name) {
                        return Err(a.err(format!("repeated mesh name '{}'", esc(&name))));
                    }
                    let mesh = compile_mesh(&name, raw, faces, &opts, &err)?;
                    set.mesh_index.insert(name, set.meshes.len());
                    set.meshes.push(mesh);
                    set.mesh_material_name.push(a.last("material").cloned());
                }
                "hfield" => {
                    let a = Attrs::direct(files, e);
                    let name = a.string("name").ok_or_else(|| a.err("a height field needs a name"))?;
                    let size = a.vec::<4>("size")?.ok_or_else(|| a.err("a height field needs size"))?;
                    if size.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
                        return Err(a.err(format!("size {size:?} must be 4 positive numbers")));
                    }
                    let (nr, nc, raw) = if let Some(f) = a.string("file") {
                        if a.has("nrow") || a.has("ncol") || a.has("elevation") {
                            return Err(
                                a.err("a height field is given by file or by nrow, ncol and elevation, not both")
                            );
                        }
                        let mut p = PathBuf::from(model_dir);
                        if let Some(d) = meshdir {
                            p.push(d);
                        }
                        p.push(&f);
                        let is_png = p
                            .extension()
                            .and_then(|x| x.to_str())
                            .is_some_and(|x| x.eq_ignore_ascii_case("png"));
                        if !is_png {
                            return Err(a.err(format!("height-field file '{}': only PNG is read", esc(&f))));
                        }
                        if !p.exists() {
                            return Err(a.err(format!(
                                "height-field file '{}' not found (looked for {})",
                                esc(&f),
                                p.display()
                            )));
                        }
                        read_png_hfield(&p)?
                    } else {
                        let nrow = a.int("nrow")?.unwrap_or(0);
                        let ncol = a.int("ncol")?.unwrap_or(0);
                        if nrow < 2 || ncol < 2 {
                            return Err(a.err(format!("nrow = {nrow} and ncol = {ncol} must both be at least 2")));
                        }
                        let (nr, nc) = (nrow as usize, ncol as usize);
                        let data: Vec<f32> = match a.reals("elevation")? {
                            Some(v) if v.len() != nr * nc => {
                                return Err(a.err(format!(
                                    "elevation has {} numbers, nrow x ncol = {}",
                                    v.len(),
                                    nr * nc
                                )))
                            }
                            Some(v) => v.iter().map(|&x| x as f32).collect(),
                            None => vec![0.0; nr * nc],
                        };
                        // MuJoCo's rows run bottom to top: the XML's first row is the last
                        let mut flipped = vec![0.0; nr * nc];
                        for r in 0..nr {
                            flipped[(nr - 1 - r) * nc..(nr - r) * nc].copy_from_slice(&data[r * nc..(r + 1) * nc]);
                        }
                        (nr, nc, flipped)
                    };
                    if nr < 2 || nc < 2 {
                        return Err(a.err(format!("a height field needs at least 2 x 2 points, has {nr} x {nc}")));
                    }
                    let flipped = normalize_elevation(&raw);
                    if set.hfield_index.contains_key(&name) {
                        return Err(a.err(format!("repeated hfield name '{}'", esc(&name))));
                    }
                    set.hfield_index.insert(name.clone(), set.hfields.len());
                    set.hfields.push(HField {
                        name,
                        size,
                        nrow: nr,
                        ncol: nc,
                        data: flipped,
                    });
                }
                _ => {}
            }
        }
    }
    Ok(set)
}
