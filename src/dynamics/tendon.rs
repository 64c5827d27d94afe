//! Tendon kinematics (MuJoCo's `mj_tendon`): each tendon's length `ten_length` and its moment
//! arms `ten_J` (one row of ntendon x nv), so that the tendon velocity is `ten_J qdot` and a
//! tendon force `f` contributes `ten_J^T f` to the joint forces.
//!
//! - A fixed tendon is linear in the joint coordinates: `L = sum_k coef_k q_k`, so its row of
//!   `ten_J` holds `coef_k` at the dof of joint k.
//! - A spatial tendon through sites is a polyline: `L = sum_s |x_{s+1} - x_s| / divisor`, and
//!   `dL/dq = sum_s u_s^T (J_{s+1} - J_s) / divisor` with `u_s` the unit segment direction and
//!   `J` the point Jacobians of the two ends (a pulley changes the divisor of what follows).
//! - A `<geom>` between two sites makes the tendon wrap around a sphere or a cylinder
//!   ([`wrap`], MuJoCo's `mju_wrap`): the segment becomes straight part, arc (or helix),
//!   straight part, the tangent points count as points fixed in the geom's body, and the arc
//!   adds to the length but not to the moments (its two ends move with one body, and the
//!   tangent points are where the length is stationary). Other geom types are refused by the
//!   reader (as MuJoCo's compiler does) and, in a model built by hand, by
//!   [`tendon_kinematics`] with [`Error::BadGeom`].

use crate::error::{Error, Result};
use crate::kinematics::WorldAxes;
use crate::model::constants::mjMINVAL;
use crate::model::GeomType;
use crate::model::{Model, TendonKind, TendonWrap};
use crate::spatial::{quat_to_mat, Mat3, Vec3, Xform};
use nalgebra::{DMatrix, Vector2};

/// Tendon lengths and moment arms at one configuration.
#[derive(Clone, Debug)]
pub struct TendonState {
    /// `ten_length` (ntendon).
    pub length: Vec<f64>,
    /// `ten_J` (ntendon x nv).
    pub moment: DMatrix<f64>,
    /// How many geoms each tendon is wrapped around at this configuration (MuJoCo lists each
    /// wrap as two extra path points: `ten_wrapnum` = sites + pulleys + 2 x this).
    pub wraps: Vec<usize>,
    /// The body poses and world dof axes spatial tendons read, kept between calls.
    pub(crate) bodies: WorldAxes,
}

/// Row `t` of `moment` plus `sign u . J(x) / divisor`: the point Jacobian at the world point `x`
/// of body `i` (its columns, one cross product each from the world dof axes of `bodies`, are
/// nonzero at the dofs of `i` and its ancestors), projected on `u`.
#[allow(clippy::too_many_arguments)]
fn add_projected(
    bodies: &WorldAxes,
    model: &Model,
    (i, x): (usize, &Vec3),
    u: &Vec3,
    sign: f64,
    divisor: f64,
    moment: &mut DMatrix<f64>,
    t: usize,
) {
    for dof in bodies.chain(model, i) {
        let s = bodies.axis(dof);
        moment[(t, dof)] += sign * u.dot(&(s.w.cross(x) + s.v)) / divisor;
    }
}

/// MuJoCo's `mj_tendon`: fixed tendons, and spatial tendons made of straight segments between
/// sites, pulleys and wraps around spheres and cylinders ([`wrap`]).
pub fn tendon_kinematics(model: &Model, q: &[f64]) -> Result<TendonState> {
    let mut out = TendonState::new(model);
    tendon_kinematics_into(model, q, &[], &mut out)?;
    Ok(out)
}

/// MuJoCo's `tendon_lengthspring` for the tendons whose rest length was not given (the
/// reader's `(-1, -1)`, left for tendons that wrap around geoms): their lengths at
/// `qpos_spring` ([`Model::qpos_spring`]), wrapping included. Returns how many were set. Run by
/// `mbd::mujoco::load`; until then [`check_spring_lengths`] refuses such a tendon with a spring.
pub fn set_spring_lengths(model: &mut Model) -> Result<usize> {
    let unset: Vec<usize> = (0..model.tendons.len())
        .filter(|&t| model.tendons[t].springlength == [-1.0, -1.0])
        .collect();
    if unset.is_empty() {
        return Ok(0);
    }
    let ten = tendon_kinematics(model, &model.qpos_spring())?;
    for &t in &unset {
        let l = ten.length[t];
        model.tendons[t].springlength = [l, l];
    }
    Ok(unset.len())
}

/// [`Error::Unresolved`] for a tendon with a spring whose rest length is still MuJoCo's "not
/// given" `(-1, -1)` (a wrapping tendon read by `mbd::mjcf::load` alone), or a joint whose
/// `springdamper` has not been turned into a stiffness and a damping.
pub fn check_spring_lengths(model: &Model) -> Result<()> {
    if let Some(i) = (1..=model.nb).find(|&i| model.joints[i].springdamper.is_some()) {
        return Err(Error::Unresolved {
            what: format!("the springdamper of joint '{}'", model.joints[i].name),
            how: "load the model with mbd::mujoco::load, which turns it into a stiffness and a damping (or call mbd::mujoco::set_springdamper)".into(),
        });
    }
    match model
        .tendons
        .iter()
        .enumerate()
        .find(|(_, t)| t.stiffness != 0.0 && t.springlength == [-1.0, -1.0])
    {
        Some((k, t)) => Err(Error::Unresolved {
            what: format!("the rest length (springlength) of tendon {k} ('{}'), which wraps", t.name),
            how: "load the model with mbd::mujoco::load, which computes it at qpos_spring (or call mbd::dynamics::set_spring_lengths)".into(),
        }),
        None => Ok(()),
    }
}

impl TendonState {
    /// Zeroed storage for `model`'s tendons.
    pub fn new(model: &Model) -> Self {
        TendonState {
            length: vec![0.0; model.tendons.len()],
            moment: DMatrix::zeros(model.tendons.len(), model.nv),
            wraps: vec![0; model.tendons.len()],
            bodies: WorldAxes::default(),
        }
    }
}

/// [`tendon_kinematics`] into `out` (made by [`TendonState::new`] for `model`; resized if not),
/// with the mocap bodies placed at `mocap` (one transform per mocap body,
/// [`crate::model::mocap_xform`]; empty: at their default poses, as [`tendon_kinematics`]).
/// A repeated call allocates nothing: the body poses and dof axes of spatial tendons are kept in
/// `out`, computed once per call, and each segment adds `u^T (J_b - J_a) / divisor` to its row
/// straight from them, at the dofs of the two sites' bodies and their ancestors.
pub fn tendon_kinematics_into(model: &Model, q: &[f64], mocap: &[Xform], out: &mut TendonState) -> Result<()> {
    crate::error::check_vector("qpos", q, model.nq)?;
    let nt = model.tendons.len();
    out.length.clear();
    out.length.resize(nt, 0.0);
    if out.moment.shape() != (nt, model.nv) {
        out.moment = DMatrix::zeros(nt, model.nv);
    }
    out.moment.fill(0.0);
    out.wraps.clear();
    out.wraps.resize(nt, 0);
    let (length, moment, bodies) = (&mut out.length, &mut out.moment, &mut out.bodies);
    if model
        .tendons
        .iter()
        .any(|t| matches!(t.kind, TendonKind::Spatial { .. }))
    {
        bodies.update(model, q, mocap);
    }
    for (t, ten) in model.tendons.iter().enumerate() {
        match &ten.kind {
            TendonKind::Fixed { joints } => {
                for &(j, coef) in joints {
                    length[t] += coef * q[model.q_adr[j]];
                    moment[(t, model.v_adr[j])] += coef;
                }
            }
            TendonKind::Spatial { path } => out.wraps[t] = spatial_tendon(model, t, path, bodies, length, moment)?,
        }
    }
    Ok(())
}

/// One spatial tendon's length and moment row (the spatial half of MuJoCo's `mj_tendon`): the
/// path is walked by [`walk_spatial`]; the moment row gets `u^T (J(x_b) - J(x_a)) / divisor`
/// for each straight part whose ends are on different bodies, a tangent point counting as a
/// point fixed in the geom's body (the arc adds nothing: its ends move with one body).
fn spatial_tendon(
    model: &Model,
    t: usize,
    path: &[TendonWrap],
    bodies: &WorldAxes,
    length: &mut [f64],
    moment: &mut DMatrix<f64>,
) -> Result<usize> {
    walk_spatial(model, t, path, bodies, |span| {
        let mut straight = |(b0, x0): (usize, Vec3), (b1, x1): (usize, Vec3)| {
            let d = x1 - x0;
            let l = d.norm();
            if b0 != b1 && l > crate::model::constants::mjMINVAL {
                let u = d / l;
                add_projected(bodies, model, (b1, &x1), &u, 1.0, span.divisor, moment, t);
                add_projected(bodies, model, (b0, &x0), &u, -1.0, span.divisor, moment, t);
            }
            l
        };
        length[t] += match span.wrap {
            None => straight(span.a, span.b),
            Some((gb, w)) => straight(span.a, (gb, w.t0)) + w.arc + straight((gb, w.t1), span.b),
        } / span.divisor;
    })
}

/// One span of a spatial tendon's path between two sites, as [`walk_spatial`] finds it.
#[derive(Clone, Copy, Debug)]
struct Span {
    /// The first site's body and world position.
    a: (usize, Vec3),
    /// The second site's.
    b: (usize, Vec3),
    /// The wrap around a geom between them, if the path wraps (the geom's body and the wrap).
    wrap: Option<(usize, Wrapped)>,
    /// The pulley divisor in force.
    divisor: f64,
}

/// Walks a spatial tendon's path pair by pair: a pulley sets the divisor for what follows; two
/// sites give a span; site, geom, site give a span with the wrap ([`wrap`]) when the geom is
/// in the way. Returns how many geoms the tendon wraps around.
fn walk_spatial(
    model: &Model,
    t: usize,
    path: &[TendonWrap],
    bodies: &WorldAxes,
    mut span: impl FnMut(Span),
) -> Result<usize> {
    let mut wraps = 0;
    let site = |s: usize| {
        let st = &model.sites[s];
        (st.body, bodies.point(st.body, &st.pos))
    };
    let mut divisor = 1.0;
    let mut j = 0;
    while j + 1 < path.len() {
        let (a, b) = match (&path[j], &path[j + 1]) {
            (&TendonWrap::Pulley { divisor: d }, _) => {
                divisor = d;
                j += 1;
                continue;
            }
            (_, TendonWrap::Pulley { .. }) => {
                j += 1;
                continue;
            }
            (&TendonWrap::Site(a), &TendonWrap::Site(b)) => (a, b),
            (&TendonWrap::Site(a), TendonWrap::Geom { .. }) => match path.get(j + 2) {
                Some(&TendonWrap::Site(b)) => (a, b),
                _ => return Err(not_bracketed(model, t, j + 1)),
            },
            (TendonWrap::Geom { .. }, _) => return Err(not_bracketed(model, t, j)),
        };
        let (ba, xa) = site(a);
        let (bb, xb) = site(b);
        let mut wrapped = None;
        if let TendonWrap::Geom { geom, sidesite } = path[j + 1] {
            let g = &model.geoms[geom];
            let shape = match g.gtype {
                GeomType::Sphere => WrapShape::Sphere,
                GeomType::Cylinder => WrapShape::Cylinder,
                other => {
                    return Err(Error::BadGeom {
                        geom,
                        name: g.name.clone(),
                        why: format!(
                            "tendon {t} ('{}') wraps around it, but a tendon wraps only around spheres and cylinders, not a {other:?}",
                            model.tendons[t].name
                        ),
                    })
                }
            };
            let c = bodies.point(g.body, &g.pos);
            let r = bodies.rotation(g.body) * quat_to_mat(&g.quat);
            let side = sidesite.map(|s| site(s).1);
            wrapped = wrap(shape, &xa, &xb, &c, &r, g.size[0], side.as_ref()).map(|w| (g.body, w));
            j += 2;
        } else {
            j += 1;
        }
        wraps += wrapped.is_some() as usize;
        span(Span {
            a: (ba, xa),
            b: (bb, xb),
            wrap: wrapped,
            divisor,
        });
    }
    Ok(wraps)
}

/// The straight parts of spatial tendon `t`'s path at the configuration of `ten` (the last
/// [`tendon_kinematics_into`]): `f((body a, x_a), (body b, x_b), divisor)` for each part of
/// nonzero length, in path order. A force `F` in the tendon pulls `x_a` towards `x_b` and back
/// with `F / divisor` (MuJoCo 4.0's `mj_rnePostConstraint` applies it so).
pub fn tendon_segments(
    model: &Model,
    t: usize,
    ten: &TendonState,
    mut f: impl FnMut((usize, Vec3), (usize, Vec3), f64),
) {
    let TendonKind::Spatial { path } = &model.tendons[t].kind else {
        return;
    };
    // the path was walked without error by tendon_kinematics_into at this configuration
    let _ = walk_spatial(model, t, path, &ten.bodies, |span| {
        let mut straight = |a: (usize, Vec3), b: (usize, Vec3)| {
            if (b.1 - a.1).norm() > crate::model::constants::mjMINVAL {
                f(a, b, span.divisor);
            }
        };
        match span.wrap {
            None => straight(span.a, span.b),
            Some((gb, w)) => {
                straight(span.a, (gb, w.t0));
                straight((gb, w.t1), span.b);
            }
        }
    });
}

/// A `<geom>` path element that does not sit between two sites (MuJoCo's compiler requires it).
fn not_bracketed(model: &Model, t: usize, k: usize) -> Error {
    Error::InvalidArgument {
        what: format!("tendon {t} ('{}'), path element {k}", model.tendons[t].name),
        why: "a wrapping geom must sit between two sites".into(),
    }
}

/// The shapes a spatial tendon can wrap around (MuJoCo's `mjWRAP_SPHERE` and `mjWRAP_CYLINDER`;
/// MuJoCo's compiler rejects a `<geom>` path element of any other type, and so do the reader
/// and [`tendon_kinematics`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrapShape {
    /// A sphere of radius `size[0]`: the tendon takes the great circle in the plane through the
    /// centre and the two end points.
    Sphere,
    /// A cylinder of radius `size[0]` about its local z axis (infinitely long for wrapping): the
    /// tendon takes a helix.
    Cylinder,
}

/// A tendon wrapped around a geom: where it touches the geom (world coordinates) and the length
/// of the curve between the two tangent points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wrapped {
    /// Tangent point on the side of the first site.
    pub t0: Vec3,
    /// Tangent point on the side of the second site.
    pub t1: Vec3,
    /// Length of the arc (sphere) or helix (cylinder) from `t0` to `t1`.
    pub arc: f64,
}

// ANCHOR: wrap
/// MuJoCo's `mju_wrap`: the path from `x0` to `x1` (world points) around a sphere or a cylinder
/// of radius `radius`, centre `c` and world orientation `r` (its columns are the geom's axes),
/// the shortest one or the one a side site asks for, or `None` ("no wrap", MuJoCo's -1) when
/// the straight segment misses the geom and no side site pulls it round.
///
/// 1. Local coordinates `p_k = R^T (x_k - c)`.
/// 2. A plane through the centre: for a sphere the plane of `0, p_0, p_1` with axes
///    `a_0 = p_0/|p_0|`, `a_1 = n x a_0`, `n = p_0 x p_1 / |p_0 x p_1|`; for a cylinder the
///    plane `z = 0` (axes x, y). In it the ends are 2-D points `d_k` and the geom a circle of
///    radius `rho` ([`wrap_circle`]).
/// 3. A side site `s` (optional) is projected into the plane and scaled onto the circle,
///    `sd = rho s_2d / |s_2d|`, and may choose the side ([`wrap_circle`] says when). If `s` is
///    inside the geom (`|s| < rho` in geom coordinates), the tendon is pulled through the
///    geom's inside instead ([`wrap_inside`]: one point on the circle, zero arc).
/// 4. Back to 3-D: `t_k = a_0 q_k,x + a_1 q_k,y`. For a cylinder the heights follow the
///    unrolled (developed) surface, on which the helix is straight: with the planar straight
///    lengths `L_0 = |d_0 - q_0|`, `L_1 = |d_1 - q_1|` and arc `phi rho`,
///    `z(t_0) = z_0 + (z_1 - z_0) L_0 / (L_0 + phi rho + L_1)`,
///    `z(t_1) = z_0 + (z_1 - z_0) (L_0 + phi rho) / (L_0 + phi rho + L_1)`, and the helix
///    length is `sqrt((phi rho)^2 + (z(t_1) - z(t_0))^2)`.
/// 5. World coordinates `x = c + R t`.
pub fn wrap(
    shape: WrapShape,
    x0: &Vec3,
    x1: &Vec3,
    c: &Vec3,
    r: &Mat3,
    radius: f64,
    side: Option<&Vec3>,
) -> Option<Wrapped> {
    let p0 = r.tr_mul(&(x0 - c));
    let p1 = r.tr_mul(&(x1 - c));
    if p0.norm() < mjMINVAL || p1.norm() < mjMINVAL {
        return None;
    }
    let (a0, a1) = match shape {
        WrapShape::Sphere => {
            let a0 = normalized(p0);
            let mut n = p0.cross(&p1);
            if n.norm() < mjMINVAL {
                // p0, p1 parallel: any plane through them; take a second axis with a 0 where
                // a0 is largest (MuJoCo's choice)
                let i = if a0.y.abs() > a0.x.abs() && a0.y.abs() > a0.z.abs() {
                    1
                } else if a0.z.abs() > a0.x.abs() && a0.z.abs() > a0.y.abs() {
                    2
                } else {
                    0
                };
                let mut b = Vec3::new(1.0, 1.0, 1.0);
                b[i] = 0.0;
                n = a0.cross(&b);
            }
            let n = normalized(n);
            (a0, normalized(n.cross(&a0)))
        }
        WrapShape::Cylinder => (Vec3::x(), Vec3::y()),
    };
    let plane = |p: &Vec3| Vector2::new(p.dot(&a0), p.dot(&a1));
    let (d0, d1) = (plane(&p0), plane(&p1));
    let (q0, q1, arc) = match side.map(|s| r.tr_mul(&(s - c))) {
        Some(s) if s.norm() < radius => {
            let q = wrap_inside(&d0, &d1, radius)?;
            (q, q, 0.0)
        }
        s => {
            let sd = s.map(|s| normalized2(plane(&s)) * radius);
            wrap_circle(&d0, &d1, sd.as_ref(), radius)?
        }
    };
    let mut t0 = a0 * q0.x + a1 * q0.y;
    let mut t1 = a0 * q1.x + a1 * q1.y;
    let mut arc = arc;
    if shape == WrapShape::Cylinder {
        let l0 = (d0 - q0).norm();
        let l1 = (d1 - q1).norm();
        let total = l0 + arc + l1;
        t0.z = p0.z + (p1.z - p0.z) * l0 / total;
        t1.z = p0.z + (p1.z - p0.z) * (l0 + arc) / total;
        arc = arc.hypot(t1.z - t0.z);
    }
    Some(Wrapped {
        t0: c + r * t0,
        t1: c + r * t1,
        arc,
    })
}

/// MuJoCo's `wrap_circle`: the 2-D problem. A circle of radius `rho` about the origin and two
/// points `d_0`, `d_1` outside it, and maybe a side point `sd` on the circle. The side point acts
/// only if the segment `d_0 d_1` crosses the ray from the centre away from it, `-lambda sd`
/// (`lambda > 0`): the segment passes behind the geom as seen from the side point, and the
/// tendon is pulled round to the side point's side, wrapping even if the segment misses the
/// circle. Otherwise the side point is ignored: no wrap if the segment misses the circle, and the
/// way round with the shorter chord if it does not. (This is MuJoCo 4.0.0's rule, measured on thousands of
/// random configurations and held by the 400 of `tests/tendon_wrap.rs`; the public source before
/// 4.0 lets the side point act whenever the segment's nearest point to the centre is on the
/// other side of the centre from it, `sd . near < 0`, and always when the segment meets the
/// circle.) The tangent point from `d` (with `|d|^2 = l^2`, `h = sqrt(l^2 - rho^2)` the tangent
/// length) is `q = (rho^2 d +- rho h d^perp) / l^2` with `d^perp = (d_y, -d_x)`: `q . q = rho^2`
/// and `q . (d - q) = 0`. The two candidate paths take opposite signs at the two ends (one
/// turns clockwise, the other counterclockwise). Without an acting side point the one with the
/// shorter chord is taken; with one, a candidate whose arc passes over `sd` (the shorter arc if
/// both do), and if neither does, the one whose chord midpoint is closest in direction to `sd`
/// (MuJoCo 4.0.0, measured as above; the public source before 4.0 always uses the chord
/// midpoint). A candidate whose two straight parts cross is never taken, and no wrap if the
/// chosen one crosses. Returns the tangent points and the arc `rho phi`, `phi` the angle from
/// `q_0` to `q_1` in the candidate's turning direction.
pub fn wrap_circle(
    d0: &Vector2<f64>,
    d1: &Vector2<f64>,
    sd: Option<&Vector2<f64>>,
    rho: f64,
) -> Option<(Vector2<f64>, Vector2<f64>, f64)> {
    let (l0, l1, r2) = (d0.norm_squared(), d1.norm_squared(), rho * rho);
    if l0 < r2 || l1 < r2 || rho < mjMINVAL {
        return None;
    }
    let dif = d1 - d0;
    let dd = dif.norm_squared();
    if dd < mjMINVAL {
        return None;
    }
    let a = (-dif.dot(d0) / dd).clamp(0.0, 1.0);
    let near = d0 + dif * a;
    // the side point acts only when the segment passes behind the geom as seen from it
    let sd = sd.filter(|sd| crosses_ray(d0, d1, &-*sd));
    if near.norm_squared() > r2 && sd.is_none() {
        return None;
    }
    let (h0, h1) = ((l0 - r2).sqrt(), (l1 - r2).sqrt());
    // the two ways round: sign +1 turns clockwise (the tangent point from d0 lies clockwise of
    // d0), -1 counterclockwise
    let candidate = |sgn: f64| {
        let q0 = Vector2::new(d0.x * r2 + sgn * rho * d0.y * h0, d0.y * r2 - sgn * rho * d0.x * h0) / l0;
        let q1 = Vector2::new(d1.x * r2 - sgn * rho * d1.y * h1, d1.y * r2 + sgn * rho * d1.x * h1) / l1;
        let crossing = segments_cross(d0, &q0, d1, &q1);
        (q0, q1, arc_angle(&q0, &q1, sgn > 0.0), crossing)
    };
    let (c0, c1) = (candidate(1.0), candidate(-1.0));
    // how good a candidate is without an arc over the side point: chord midpoint towards the
    // side point, or else a short chord; a candidate whose straight parts cross is worst
    let good = |(q0, q1, _, crossing): &(Vector2<f64>, Vector2<f64>, f64, bool)| {
        if *crossing {
            -10000.0
        } else {
            match sd {
                Some(sd) => normalized2(q0 + q1).dot(sd),
                None => -(q0 - q1).norm_squared(),
            }
        }
    };
    let over = |(q0, _, phi, crossing): &(Vector2<f64>, Vector2<f64>, f64, bool), cw: bool| {
        sd.is_some_and(|sd| !crossing && arc_angle(q0, sd, cw) < *phi)
    };
    let first = match (over(&c0, true), over(&c1, false)) {
        (true, true) => c0.2 < c1.2,
        (true, false) => true,
        (false, true) => false,
        (false, false) => good(&c0) > good(&c1),
    };
    let (q0, q1, phi, crossing) = if first { c0 } else { c1 };
    if crossing {
        return None;
    }
    Some((q0, q1, rho * phi))
}

/// The angle swept from the direction of `p` to that of `q` turning clockwise (`cw`) or
/// counterclockwise, in `[0, 2 pi)` (MuJoCo's `length_circle`: `acos` of the unit vectors'
/// product, the long way round when the turn goes the other way).
fn arc_angle(p: &Vector2<f64>, q: &Vector2<f64>, cw: bool) -> f64 {
    let angle = normalized2(*p).dot(&normalized2(*q)).clamp(-1.0, 1.0).acos();
    let cross = p.x * q.y - p.y * q.x;
    if (cw && cross > 0.0) || (!cw && cross < 0.0) {
        2.0 * std::f64::consts::PI - angle
    } else {
        angle
    }
}

/// MuJoCo's `wrap_inside`: the side site is inside the geom, so the tendon passes through the
/// circle's interior, touching it at one point `q` where the two straight parts make equal
/// angles with the radius (a light ray reflected by the circle seen from inside). With `A =
/// rho/|d_0|`, `B = rho/|d_1|`, `G` the angle between `d_0` and `d_1` and `theta` the angle of
/// incidence (between the radius to `q` and the segment from `d_0`), the angles of the triangle
/// `0, d_0, q` and `0, d_1, q` give
/// `g(theta) = asin(A sin theta) + asin(B sin theta) - 2 theta + G = 0`, whose root in
/// `(0, pi/2]` is found by at most 20 Newton steps from `theta = pi/2` to `|g| <= 1e-6`
/// (`g' = A cos / sqrt(1 - A^2 sin^2) + B cos / sqrt(1 - B^2 sin^2) - 2 < 0`); then `q` is
/// `d_0/|d_0|` rotated by `theta - asin(A sin theta)` (or `d_1/|d_1|` by
/// `theta - asin(B sin theta)`, whichever turns towards the other end), scaled to `rho`. (This is
/// MuJoCo 4.0.0's iteration, measured: its points agree to 2e-16; the public source before 4.0
/// iterates on `z = sin theta` from `1 - 1e-7`, which stops at a different point within the
/// same tolerance.) Without a root (`g(pi/2) > 0`, the ends nearly aligned with the centre) or
/// without convergence MuJoCo keeps the normalized midpoint of the two ends, and so does this.
/// `None` if an end is inside the circle or the segment crosses it.
pub fn wrap_inside(d0: &Vector2<f64>, d1: &Vector2<f64>, rho: f64) -> Option<Vector2<f64>> {
    let (l0, l1) = (d0.norm(), d1.norm());
    let dif = d1 - d0;
    let dd = dif.norm_squared();
    if l0 <= rho || l1 <= rho || rho < mjMINVAL || l0 < mjMINVAL || l1 < mjMINVAL {
        return None;
    }
    if dd > mjMINVAL {
        let a = -dif.dot(d0) / dd;
        if a > 0.0 && a < 1.0 && (d0 + dif * a).norm() <= rho {
            return None;
        }
    }
    let fallback = normalized2((d0 + d1) * 0.5) * rho;
    let (ca, cb) = (rho / l0, rho / l1);
    let cos_g = (l0 * l0 + l1 * l1 - dd) / (2.0 * l0 * l1);
    if cos_g < -1.0 + mjMINVAL {
        return None;
    } else if cos_g > 1.0 - mjMINVAL {
        return Some(fallback);
    }
    let g = cos_g.acos();
    let g_of = |th: f64| (ca * th.sin()).asin() + (cb * th.sin()).asin() - 2.0 * th + g;
    let mut th = std::f64::consts::FRAC_PI_2;
    let mut gv = g_of(th);
    if gv > 0.0 {
        return Some(fallback);
    }
    let mut converged = false;
    for _ in 0..20 {
        if gv.abs() <= 1e-6 {
            converged = true;
            break;
        }
        let (s, c) = th.sin_cos();
        let dg = ca * c / mjMINVAL.max((1.0 - ca * ca * s * s).sqrt())
            + cb * c / mjMINVAL.max((1.0 - cb * cb * s * s).sqrt())
            - 2.0;
        th -= gv / dg;
        gv = g_of(th);
    }
    if !converged || !th.is_finite() {
        return Some(fallback);
    }
    let (v, ang) = if d0.x * d1.y - d0.y * d1.x > 0.0 {
        (normalized2(*d0), th - (ca * th.sin()).asin())
    } else {
        (normalized2(*d1), th - (cb * th.sin()).asin())
    };
    let (s, c) = ang.sin_cos();
    Some(Vector2::new(c * v.x - s * v.y, s * v.x + c * v.y) * rho)
}
// ANCHOR_END: wrap

/// Whether the 2-D segments `p1 p2` and `p3 p4` cross (MuJoCo's `is_intersect`; parallel
/// segments do not).
fn segments_cross(p1: &Vector2<f64>, p2: &Vector2<f64>, p3: &Vector2<f64>, p4: &Vector2<f64>) -> bool {
    let det = (p4.y - p3.y) * (p2.x - p1.x) - (p4.x - p3.x) * (p2.y - p1.y);
    if det.abs() < mjMINVAL {
        return false;
    }
    let a = ((p4.x - p3.x) * (p1.y - p3.y) - (p4.y - p3.y) * (p1.x - p3.x)) / det;
    let b = ((p2.x - p1.x) * (p1.y - p3.y) - (p2.y - p1.y) * (p1.x - p3.x)) / det;
    (0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b)
}

/// Whether the 2-D segment `d0 d1` crosses the ray `lambda w`, `lambda > 0`: solving
/// `lambda w = d0 + u (d1 - d0)` by 2-D cross products, `lambda = (d0 x e) / (w x e)` and
/// `u = (d0 x w) / (w x e)` with `e = d1 - d0`; a segment parallel to the ray does not cross it.
fn crosses_ray(d0: &Vector2<f64>, d1: &Vector2<f64>, w: &Vector2<f64>) -> bool {
    let cross = |a: &Vector2<f64>, b: &Vector2<f64>| a.x * b.y - a.y * b.x;
    let e = d1 - d0;
    let den = cross(w, &e);
    if den.abs() < mjMINVAL {
        return false;
    }
    let (lambda, u) = (cross(d0, &e) / den, cross(d0, w) / den);
    lambda > 0.0 && (0.0..=1.0).contains(&u)
}

/// `v / |v|`, or `(1, 0, 0)` when `|v| < mjMINVAL` (MuJoCo's `mju_normalize3`).
fn normalized(v: Vec3) -> Vec3 {
    let n = v.norm();
    if n < mjMINVAL {
        Vec3::x()
    } else {
        v / n
    }
}

/// `v / |v|`, or `(1, 0)` when `|v| < mjMINVAL` (MuJoCo's `mju_normalize` in 2-D).
fn normalized2(v: Vector2<f64>) -> Vector2<f64> {
    let n = v.norm();
    if n < mjMINVAL {
        Vector2::x()
    } else {
        v / n
    }
}
