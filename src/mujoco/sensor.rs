//! What the pipeline reports after a forward pass: MuJoCo's `mj_rnePostConstraint` (body
//! accelerations `cacc`, the interaction forces `cfrc_int` between each body and its parent,
//! the external forces `cfrc_ext`), `mj_subtreeVel`, `mj_objectVelocity`,
//! `mj_objectAcceleration` and the sensors of `mj_sensorPos`, `mj_sensorVel` and
//! `mj_sensorAcc` (MuJoCo's `engine_sensor.c`, `engine_core_smooth.c`). Book chapter: "The
//! constrained pipeline", section "What the pipeline reports".
//!
//! Everything here is per Featherstone body, like [`Data`]; a MuJoCo body's values are those of
//! the last Featherstone body of its chain ([`Model::mj_body_last`]), which carries its mass,
//! its geoms and its sites (the massless bodies before it pass their child's interaction force
//! on unchanged).

use super::constraint::{EfcType, EqData};
use super::forward::{contact_force, ForwardData};
use super::Data;
use crate::dynamics::{Actuation, TendonState};
use crate::model::{Equality, Model, SensorData, SensorFrame, SensorKind, SensorStage, TendonKind, Transmission};
use crate::spatial::{quat_mul, quat_to_mat, Force, Mat3, Motion, Vec3};

/// The outputs of `mj_rnePostConstraint`, per Featherstone body (entry 0 is the world).
#[derive(Clone, Debug, Default)]
pub struct PostConstraint {
    /// `cacc`: each body's acceleration at the centre of mass of its tree, world axes, with the
    /// world's set to `[0; -g]` (so that gravity enters as an acceleration of the base).
    pub cacc: Vec<Motion>,
    /// `cfrc_int`: the wrench the body receives from its parent through its joint, summed over
    /// its subtree, about the centre of mass of its tree, world axes.
    pub cfrc_int: Vec<Force>,
    /// `cfrc_ext`: the wrench the world applies to the body (contacts, connect and weld
    /// constraints, spatial tendons), about the same point.
    pub cfrc_ext: Vec<Force>,
}

/// A spatial vector moved from `old` to `new` (MuJoCo's `mju_transformSpatial`): a motion's
/// linear part becomes `v - (new - old) x w`, a force's moment `n - (new - old) x f`; then, with
/// `rot`, both parts are expressed in the frame whose axes are `rot`'s columns.
pub fn transform_motion(m: &Motion, new: &Vec3, old: &Vec3, rot: Option<&Mat3>) -> Motion {
    let v = m.v - (new - old).cross(&m.w);
    match rot {
        Some(r) => Motion::new(r.tr_mul(&m.w), r.tr_mul(&v)),
        None => Motion::new(m.w, v),
    }
}

/// [`transform_motion`] for a force.
pub fn transform_force(f: &Force, new: &Vec3, old: &Vec3, rot: Option<&Mat3>) -> Force {
    let n = f.n - (new - old).cross(&f.f);
    match rot {
        Some(r) => Force {
            n: r.tr_mul(&n),
            f: r.tr_mul(&f.f),
        },
        None => Force { n, f: f.f },
    }
}

/// The wrench of a force `f` and a torque `t` applied at the world point `p` of Featherstone
/// body `b`, moved to the point its com-based quantities refer to (its tree's centre of mass).
fn wrench_at(d: &Data, b: usize, p: &Vec3, t: &Vec3, f: &Vec3) -> Force {
    let c = d.subtree_com_fb[d.rootid_fb[b]];
    Force {
        n: t + (p - c).cross(f),
        f: *f,
    }
}

/// World position and orientation of a sensor frame (MuJoCo's `xpos`/`xmat`, `xipos`/`ximat`,
/// `geom_xpos`/`geom_xmat`, `site_xpos`/`site_xmat`), and the Featherstone body it moves with.
pub fn frame_pose(model: &Model, d: &Data, f: SensorFrame) -> (Vec3, Mat3, usize) {
    let body_pose = |b: usize| (d.x_0[b].r, d.x_0[b].e.transpose());
    match f {
        SensorFrame::XBody(mb) => {
            let b = model.mj_body_last[mb];
            let (p, r) = body_pose(b);
            (p, r, b)
        }
        SensorFrame::Body(mb) => {
            let b = model.mj_body_last[mb];
            let (_, r) = body_pose(b);
            (d.xipos_fb[b], r * quat_to_mat(&model.body_iquat[b]), b)
        }
        SensorFrame::Geom(g) => {
            let g = &model.geoms[g];
            let (p, r) = body_pose(g.body);
            (p + r * g.pos, r * quat_to_mat(&g.quat), g.body)
        }
        SensorFrame::Site(s) => {
            let s = &model.sites[s];
            let (p, r) = body_pose(s.body);
            (p + r * s.pos, r * quat_to_mat(&s.quat), s.body)
        }
    }
}

/// The world quaternion of a sensor frame, composed as MuJoCo composes it (body `xquat` times
/// the element's local quaternion), from the body quaternions `xquat` (per Featherstone body).
fn frame_quat(model: &Model, xquat: &[[f64; 4]], f: SensorFrame) -> [f64; 4] {
    match f {
        SensorFrame::XBody(mb) => xquat[model.mj_body_last[mb]],
        SensorFrame::Body(mb) => {
            let b = model.mj_body_last[mb];
            quat_mul(&xquat[b], &model.body_iquat[b])
        }
        SensorFrame::Geom(g) => quat_mul(&xquat[model.geoms[g].body], &model.geoms[g].quat),
        SensorFrame::Site(s) => quat_mul(&xquat[model.sites[s].body], &model.sites[s].quat),
    }
}

// ANCHOR: object_velocity
/// MuJoCo's `mj_objectVelocity`: the velocity `[w; v]` of the frame at `pos` moving with body
/// `b`, its linear part that of the point `pos` itself: `cvel` moved from the tree's centre of
/// mass to `pos`, in world axes or, with `rot`, in the frame's own.
pub fn object_velocity(d: &Data, b: usize, pos: &Vec3, rot: Option<&Mat3>) -> Motion {
    transform_motion(&d.cvel_fb[b], pos, &d.subtree_com_fb[d.rootid_fb[b]], rot)
}
// ANCHOR_END: object_velocity

// ANCHOR: object_acceleration
/// MuJoCo's `mj_objectAcceleration`: the acceleration of the point `pos` moving with body `b`,
/// `cacc` moved to `pos` (which gives `dv/dt` of the spatial velocity, not the point's
/// acceleration) plus `w x v`, the term that turns it into the classical acceleration of the
/// point. Because the world's `cacc` is `[0; -g]`, the linear part is the *proper*
/// acceleration an accelerometer feels: `+g` upwards for a body at rest.
pub fn object_acceleration(d: &Data, post: &PostConstraint, b: usize, pos: &Vec3, rot: Option<&Mat3>) -> Motion {
    let c = d.subtree_com_fb[d.rootid_fb[b]];
    let mut a = transform_motion(&post.cacc[b], pos, &c, rot);
    let v = transform_motion(&d.cvel_fb[b], pos, &c, rot);
    a.v += v.w.cross(&v.v);
    a
}
// ANCHOR_END: object_acceleration

/// The scalar force each tendon carries (`ntendon`), positive when it pushes its ends apart:
/// spring and damper, the actuators pulling on it (`actuator_force` times `gear`), and the
/// forces of its limit, friction-loss and equality rows (MuJoCo 4.0's `mj_rnePostConstraint`
/// applies it to the bodies along a spatial tendon's path). `ten_velocity = ten_J qvel`.
pub fn tendon_forces(
    model: &Model,
    fd: &ForwardData,
    eq: &[EqData],
    ten: &TendonState,
    act: &Actuation,
    qvel: &[f64],
    out: &mut Vec<f64>,
) {
    let nt = model.tendons.len();
    out.clear();
    out.resize(nt, 0.0);
    let nv = model.nv;
    let ten_vel = |t: usize| (0..nv).map(|k| ten.moment[(t, k)] * qvel[k]).sum::<f64>();
    for (t, tendon) in model.tendons.iter().enumerate() {
        if tendon.stiffness != 0.0 || tendon.damping != 0.0 {
            out[t] += crate::dynamics::tendon_spring_force(tendon, ten.length[t], ten_vel(t));
        }
    }
    for (a, actuator) in model.actuators.iter().enumerate() {
        if let Transmission::Tendon(t) = actuator.trn {
            out[t] += act.force[a] * actuator.gear[0];
        }
    }
    // a limit row's Jacobian is +ten_J (lower side) or -ten_J (upper side), a friction row's +ten_J
    let efc = &fd.efc;
    let row_dot = |i: usize, t: usize| -> f64 {
        let (a, b) = (efc.j.rowadr[i], efc.j.rowadr[i + 1]);
        (a..b).map(|k| efc.j.values[k] * ten.moment[(t, efc.j.colind[k])]).sum()
    };
    for i in 0..efc.efc_type.len() {
        let f = fd.efc_force[i];
        match efc.efc_type[i] {
            EfcType::FrictionTendon => out[efc.efc_id[i]] += f,
            EfcType::LimitTendon => {
                let t = efc.efc_id[i];
                out[t] += row_dot(i, t).signum() * f;
            }
            EfcType::Equality => {
                let k = efc.efc_id[i];
                if let (
                    Equality::Tendon {
                        tendon1,
                        tendon2,
                        polycoef,
                        ..
                    },
                    EqData::Scalar { ref2, .. },
                ) = (&model.equality[k], &eq[k])
                {
                    // J = J_1 - p'(x) J_2 with x = L_2 - L_2(qpos0)
                    out[*tendon1] += f;
                    if let Some(t2) = tendon2 {
                        let x = ten.length[*t2] - ref2;
                        let a = polycoef;
                        let deriv = a[1] + 2.0 * a[2] * x + 3.0 * a[3] * x * x + 4.0 * a[4] * x * x * x;
                        out[*t2] -= deriv * f;
                    }
                }
            }
            _ => {}
        }
    }
}

// ANCHOR: rne_post_constraint
/// MuJoCo's `mj_rnePostConstraint` (MuJoCo 4.0): with `qacc` the solved acceleration,
///
/// ```text
/// cacc_0 = [0; -g],   cacc_i = cacc_lambda(i) + sum_dofs (cdof_dot qvel + cdof qacc),
/// cfrc_int_i = I_i cacc_i + cvel_i x* (I_i cvel_i) - cfrc_ext_i,  then summed leaves to root,
/// ```
///
/// the recursive Newton-Euler algorithm run once more with the constrained acceleration, the
/// external wrenches subtracted so that what is left is what the joints carry. `cfrc_ext` holds
/// the user's `xfrc_applied` at each centre of mass, each contact's force (`mj_contactForce` turned to world axes, on `geom[1]`'s body and
/// opposite on `geom[0]`'s, at the contact point), each connect's and weld's force at its two
/// anchors (a weld's torque is `A^T f_rot` with `A` the map of [`super::constraint::equality::weld_rotation`]
/// from angular velocity to its rotation rows), and each spatial tendon's force `F`
/// ([`tendon_forces`]) pulling every straight part of its path at both ends (`F / divisor`
/// along the part, on the bodies the ends move with). `xquat` are the body quaternions the
/// weld rows used.
#[allow(clippy::too_many_arguments)]
pub fn rne_post_constraint(
    model: &Model,
    fd: &ForwardData,
    eq: &[EqData],
    xquat: &[[f64; 4]],
    ten: Option<(&TendonState, &[f64])>,
    qvel: &[f64],
    out: &mut PostConstraint,
) {
    let d = &fd.data;
    let n = model.nb + 1;
    out.cacc.clear();
    out.cacc.resize(n, Motion::zero());
    out.cfrc_int.clear();
    out.cfrc_int.resize(n, Force::default());
    out.cfrc_ext.clear();
    out.cfrc_ext.resize(n, Force::default());
    let ext = &mut out.cfrc_ext;

    // the wrenches applied by the user (xfrc_applied), at each body's centre of mass
    for (mb, w) in fd.xfrc_applied.iter().enumerate().skip(1) {
        if w.iter().any(|&x| x != 0.0) {
            let b = model.mj_body_last[mb];
            let (f, t) = (Vec3::new(w[0], w[1], w[2]), Vec3::new(w[3], w[4], w[5]));
            ext[b] += wrench_at(d, b, &d.xipos_fb[b], &t, &f);
        }
    }

    // contacts: the force acts on geom[1]'s body, its opposite on geom[0]'s
    for (k, c) in fd.contacts().iter().enumerate() {
        if c.efc_address.is_none() {
            continue;
        }
        let l = contact_force(fd, k);
        let f = c.frame.tr_mul(&Vec3::new(l[0], l[1], l[2]));
        let t = c.frame.tr_mul(&Vec3::new(l[3], l[4], l[5]));
        let (b0, b1) = (model.geoms[c.geom[0]].body, model.geoms[c.geom[1]].body);
        if b0 != 0 {
            let w = wrench_at(d, b0, &c.pos, &t, &f);
            ext[b0].n -= w.n;
            ext[b0].f -= w.f;
        }
        if b1 != 0 {
            let w = wrench_at(d, b1, &c.pos, &t, &f);
            ext[b1] += w;
        }
    }

    // connect and weld rows: +f at anchor 1 on body1, -f at anchor 2 on body2
    let efc = &fd.efc;
    let mut i = 0;
    while i < efc.ne {
        let k = efc.efc_id[i];
        let rows = match (&model.equality[k], &eq[k]) {
            (Equality::Connect { body1, body2, .. }, data @ EqData::Connect { .. })
            | (Equality::Weld { body1, body2, .. }, data @ EqData::Weld { .. }) => {
                let (b1, b2) = (*body1, *body2);
                let (p1, p2) = super::constraint::equality::anchors(d, data, b1, b2);
                let f = Vec3::new(fd.efc_force[i], fd.efc_force[i + 1], fd.efc_force[i + 2]);
                let mut t = Vec3::zeros();
                let rows = if let EqData::Weld {
                    relquat, torquescale, ..
                } = data
                {
                    let fr = Vec3::new(fd.efc_force[i + 3], fd.efc_force[i + 4], fd.efc_force[i + 5]);
                    t = weld_torque(&xquat[b1], &xquat[b2], relquat, *torquescale, &fr);
                    6
                } else {
                    3
                };
                if b1 != 0 {
                    ext[b1] += wrench_at(d, b1, &p1, &t, &f);
                }
                if b2 != 0 {
                    let w = wrench_at(d, b2, &p2, &t, &f);
                    ext[b2].n -= w.n;
                    ext[b2].f -= w.f;
                }
                rows
            }
            _ => 1,
        };
        i += rows;
    }

    // spatial tendons: F / divisor along each straight part, at both ends
    if let Some((ten, force)) = ten {
        for (t, tendon) in model.tendons.iter().enumerate() {
            if !matches!(tendon.kind, TendonKind::Spatial { .. }) || force[t] == 0.0 {
                continue;
            }
            crate::dynamics::tendon_segments(model, t, ten, |(ba, xa), (bb, xb), divisor| {
                let u = (xb - xa).normalize();
                let f = u * (force[t] / divisor);
                if bb != 0 {
                    ext[bb] += wrench_at(d, bb, &xb, &Vec3::zeros(), &f);
                }
                if ba != 0 {
                    let w = wrench_at(d, ba, &xa, &Vec3::zeros(), &f);
                    ext[ba].n -= w.n;
                    ext[ba].f -= w.f;
                }
            });
        }
    }

    // forward pass: accelerations and the wrench each body needs; backward pass: sums
    out.cacc[0] = Motion::new(Vec3::zeros(), -model.opt.gravity);
    for b in 1..n {
        let mut a = out.cacc[model.lambda[b]];
        for dof in model.dofs(b) {
            a += d.cdof_dot[dof] * qvel[dof];
            a += d.cdof[dof] * fd.qacc[dof];
        }
        out.cacc[b] = a;
        let inertia = &d.cinert_fb[b];
        let body = inertia.mul_motion(&a) + d.cvel_fb[b].cross_force(&inertia.mul_motion(&d.cvel_fb[b]));
        out.cfrc_int[b] = Force {
            n: body.n - out.cfrc_ext[b].n,
            f: body.f - out.cfrc_ext[b].f,
        };
    }
    for b in (1..n).rev() {
        let f = out.cfrc_int[b];
        out.cfrc_int[model.lambda[b]] += f;
    }
}
// ANCHOR_END: rne_post_constraint

/// The world torque of a weld's rotation rows with forces `fr`: the rows are `A (w_1 - w_2)`
/// with `A e_k = ts / 2 vec(q_2^* (x) (0, e_k) (x) q_1 (x) r_0)`, so the torque on body1 is
/// `A^T fr` (and its opposite on body2).
fn weld_torque(q1: &[f64; 4], q2: &[f64; 4], r0: &[f64; 4], ts: f64, fr: &Vec3) -> Vec3 {
    let quat = quat_mul(q1, r0);
    let q2c = [q2[0], -q2[1], -q2[2], -q2[3]];
    let mut t = Vec3::zeros();
    for k in 0..3 {
        let mut axis = [0.0; 4];
        axis[k + 1] = 1.0;
        let col = quat_mul(&quat_mul(&q2c, &axis), &quat);
        t[k] = 0.5 * ts * (col[1] * fr[0] + col[2] * fr[1] + col[3] * fr[2]);
    }
    t
}

/// `mj_subtreeVel`'s outputs, per Featherstone body.
#[derive(Clone, Debug, Default)]
pub struct SubtreeVel {
    /// The velocity of the subtree's centre of mass (`subtree_linvel`).
    pub linvel: Vec<Vec3>,
    /// The subtree's angular momentum about its centre of mass (`subtree_angmom`).
    pub angmom: Vec<Vec3>,
}

// ANCHOR: subtree_vel
/// MuJoCo's `mj_subtreeVel`: with `v_i`, `w_i` the velocity of body `i`'s centre of mass and
/// its angular velocity,
///
/// ```text
/// linvel_i = sum_{k in subtree(i)} m_k v_k / M_i,
/// angmom_i = sum_k [ I_k w_k + m_k (x_k - c_i) x (v_k - linvel_i) ],
/// ```
///
/// accumulated leaves to root: a child's momentum about its own centre of mass is moved to the
/// parent's with the term `M_child (c_child - c_i) x (linvel_child - linvel_i)`.
pub fn subtree_vel(model: &Model, d: &Data, out: &mut SubtreeVel) {
    let n = model.nb + 1;
    out.linvel.clear();
    out.linvel.resize(n, Vec3::zeros());
    out.angmom.clear();
    out.angmom.resize(n, Vec3::zeros());
    let mass = |b: usize| model.inertia[b].m;
    // body-wise momentum; the world and massless bodies have none
    for b in 1..n {
        let vel = object_velocity(d, b, &d.xipos_fb[b], None);
        out.linvel[b] = vel.v * mass(b);
        let r = d.x_0[b].e.transpose() * quat_to_mat(&model.body_iquat[b]);
        let local = r.tr_mul(&vel.w).component_mul(&model.body_inertia[b]);
        out.angmom[b] = r * local;
    }
    for b in (0..n).rev() {
        if b != 0 {
            let p = model.lambda[b];
            let lin = out.linvel[b];
            out.linvel[p] += lin;
        }
        out.linvel[b] /= d.subtree_mass_fb[b].max(crate::model::MJ_MINVAL);
    }
    for b in (1..n).rev() {
        let p = model.lambda[b];
        let vel = object_velocity(d, b, &d.xipos_fb[b], None);
        let dx = d.xipos_fb[b] - d.subtree_com_fb[b];
        let dv = vel.v - out.linvel[b];
        let own = dx.cross(&(dv * mass(b)));
        out.angmom[b] += own;
        let child = out.angmom[b];
        out.angmom[p] += child;
        let dx = d.subtree_com_fb[b] - d.subtree_com_fb[p];
        let dv = (out.linvel[b] - out.linvel[p]) * d.subtree_mass_fb[b];
        out.angmom[p] += dx.cross(&dv);
    }
}
// ANCHOR_END: subtree_vel

/// Everything the sensors read besides the model: the forward pass's outputs and the state.
pub struct SensorInputs<'a> {
    /// The forward pass's outputs (`mj_forward`).
    pub fd: &'a ForwardData,
    /// Tendon lengths and `ten_J` of the same pass.
    pub ten: &'a TendonState,
    /// Actuator lengths, velocities and forces of the same pass.
    pub act: &'a Actuation,
    /// Body quaternions (per Featherstone body, MuJoCo's `xquat`).
    pub xquat: &'a [[f64; 4]],
    /// `qpos`.
    pub qpos: &'a [f64],
    /// `qvel`.
    pub qvel: &'a [f64],
    /// The simulation time (`clock` sensors).
    pub time: f64,
}

/// Storage for [`sensors_into`]: `mj_rnePostConstraint` and `mj_subtreeVel` results, computed
/// only when a sensor needs them.
#[derive(Clone, Debug, Default)]
pub struct SensorScratch {
    /// `cacc`, `cfrc_int`, `cfrc_ext`.
    pub post: PostConstraint,
    /// `subtree_linvel`, `subtree_angmom`.
    pub subtree: SubtreeVel,
    /// Per-tendon scalar forces.
    pub tendon_force: Vec<f64>,
    /// The geoms' world poses, for rangefinders (computed at the first one of a call).
    pub geoms: Vec<crate::collision::GeomPose>,
}

/// The first limit row of joint or tendon `id` (`efc_type` `kind`), as MuJoCo's limit sensors
/// find it.
fn limit_row(fd: &ForwardData, kind: EfcType, id: usize) -> Option<usize> {
    let e = &fd.efc;
    (e.ne + e.nf..e.efc_type.len()).find(|&i| e.efc_type[i] == kind && e.efc_id[i] == id)
}

// ANCHOR: sensors
/// MuJoCo's `mj_sensorPos`, `mj_sensorVel` and `mj_sensorAcc` for every sensor of the model at
/// once, into `out` (`sensordata`, [`SensorKind::dim`] numbers per sensor, in model order), each
/// value clipped by its `cutoff`. `touch` sensors count the contacts whose normal ray from the
/// contact point crosses the site's volume; `rangefinder` casts a ray along the site's z axis
/// ([`super::ray::ray`]). Runs `mj_rnePostConstraint` ([`rne_post_constraint`]) and
/// `mj_subtreeVel` ([`subtree_vel`]) only if a sensor needs them.
pub fn sensors_into(
    model: &Model,
    inp: &SensorInputs<'_>,
    eq: &[EqData],
    scratch: &mut SensorScratch,
    out: &mut Vec<f64>,
) {
    let fd = inp.fd;
    let d = &fd.data;
    out.clear();
    if model.sensors.iter().any(|s| s.kind.needs_rne_post()) {
        let ten = if model.tendons.is_empty() {
            None
        } else {
            tendon_forces(model, fd, eq, inp.ten, inp.act, inp.qvel, &mut scratch.tendon_force);
            Some((inp.ten, &scratch.tendon_force[..]))
        };
        rne_post_constraint(model, fd, eq, inp.xquat, ten, inp.qvel, &mut scratch.post);
    }
    if model
        .sensors
        .iter()
        .any(|s| matches!(s.kind, SensorKind::SubtreeLinVel(_) | SensorKind::SubtreeAngMom(_)))
    {
        subtree_vel(model, d, &mut scratch.subtree);
    }
    scratch.geoms.clear();
    let post = &scratch.post;
    let site = |s: usize| frame_pose(model, d, SensorFrame::Site(s));
    // the first Featherstone body of MuJoCo body mb: its subtree is the MuJoCo body's
    let first = |mb: usize| {
        let mut f = model.mj_body_last[mb];
        while f != 0 && model.lambda[f] != 0 && model.mj_body[model.lambda[f]] == mb {
            f = model.lambda[f];
        }
        f
    };
    let v3 = |out: &mut Vec<f64>, v: &Vec3| out.extend_from_slice(v.as_slice());
    for s in &model.sensors {
        let start = out.len();
        use SensorKind as K;
        match s.kind {
            K::JointPos(j) => out.push(inp.qpos[model.q_adr[j]]),
            K::BallQuat(j) => {
                let a = model.q_adr[j];
                let mut q = [inp.qpos[a], inp.qpos[a + 1], inp.qpos[a + 2], inp.qpos[a + 3]];
                crate::spatial::quat_normalize(&mut q);
                out.extend_from_slice(&q);
            }
            K::TendonPos(t) => out.push(inp.ten.length[t]),
            K::ActuatorPos(a) => out.push(inp.act.length[a]),
            K::JointLimitPos(j) => out.push(
                limit_row(fd, EfcType::LimitJoint, j)
                    .map(|i| fd.efc.pos[i] - fd.efc.margin[i])
                    .unwrap_or(0.0),
            ),
            K::TendonLimitPos(t) => out.push(
                limit_row(fd, EfcType::LimitTendon, t)
                    .map(|i| fd.efc.pos[i] - fd.efc.margin[i])
                    .unwrap_or(0.0),
            ),
            K::FramePos { obj, reference } => {
                let (p, _, _) = frame_pose(model, d, obj);
                match reference {
                    None => v3(out, &p),
                    Some(r) => {
                        let (pr, rr, _) = frame_pose(model, d, r);
                        v3(out, &rr.tr_mul(&(p - pr)));
                    }
                }
            }
            K::FrameAxis { axis, obj, reference } => {
                let (_, r, _) = frame_pose(model, d, obj);
                let a: Vec3 = r.column(axis).into();
                match reference {
                    None => v3(out, &a),
                    Some(rf) => {
                        let (_, rr, _) = frame_pose(model, d, rf);
                        v3(out, &rr.tr_mul(&a));
                    }
                }
            }
            K::FrameQuat { obj, reference } => {
                let q = frame_quat(model, inp.xquat, obj);
                match reference {
                    None => out.extend_from_slice(&q),
                    Some(r) => {
                        let qr = frame_quat(model, inp.xquat, r);
                        let qrc = [qr[0], -qr[1], -qr[2], -qr[3]];
                        out.extend_from_slice(&quat_mul(&qrc, &q));
                    }
                }
            }
            K::SubtreeCom(mb) => v3(out, &d.subtree_com_fb[first(mb)]),
            K::Magnetometer(si) => {
                let (_, r, _) = site(si);
                v3(out, &r.tr_mul(&model.opt.magnetic));
            }
            K::Rangefinder(si) => out.push(rangefinder(model, d, &mut scratch.geoms, si)),
            K::Clock => out.push(inp.time),
            K::JointVel(j) => out.push(inp.qvel[model.v_adr[j]]),
            K::BallAngVel(j) => {
                let a = model.v_adr[j];
                out.extend_from_slice(&inp.qvel[a..a + 3]);
            }
            K::TendonVel(t) => out.push((0..model.nv).map(|k| inp.ten.moment[(t, k)] * inp.qvel[k]).sum()),
            K::ActuatorVel(a) => out.push(inp.act.velocity[a]),
            K::JointLimitVel(j) => out.push(
                limit_row(fd, EfcType::LimitJoint, j)
                    .map(|i| fd.efc.vel[i])
                    .unwrap_or(0.0),
            ),
            K::TendonLimitVel(t) => out.push(
                limit_row(fd, EfcType::LimitTendon, t)
                    .map(|i| fd.efc.vel[i])
                    .unwrap_or(0.0),
            ),
            K::Velocimeter(si) | K::Gyro(si) => {
                let (p, r, b) = site(si);
                let v = object_velocity(d, b, &p, Some(&r));
                v3(out, if matches!(s.kind, K::Gyro(_)) { &v.w } else { &v.v });
            }
            K::FrameLinVel { obj, reference } | K::FrameAngVel { obj, reference } => {
                let (p, _, b) = frame_pose(model, d, obj);
                let mut v = object_velocity(d, b, &p, None);
                if let Some(rf) = reference {
                    let (pr, rr, br) = frame_pose(model, d, rf);
                    let vr = object_velocity(d, br, &pr, None);
                    // relative velocity, corrected for the rotating reference frame
                    let w = v.w - vr.w;
                    let lin = v.v - vr.v + (p - pr).cross(&vr.w);
                    v = Motion::new(rr.tr_mul(&w), rr.tr_mul(&lin));
                }
                v3(
                    out,
                    if matches!(s.kind, K::FrameAngVel { .. }) {
                        &v.w
                    } else {
                        &v.v
                    },
                );
            }
            K::SubtreeLinVel(mb) => v3(out, &scratch.subtree.linvel[first(mb)]),
            K::SubtreeAngMom(mb) => v3(out, &scratch.subtree.angmom[first(mb)]),
            K::Touch(si) => out.push(touch(model, fd, si)),
            K::Accelerometer(si) => {
                let (p, r, b) = site(si);
                v3(out, &object_acceleration(d, post, b, &p, Some(&r)).v);
            }
            K::Force(si) | K::Torque(si) => {
                let (p, r, b) = site(si);
                let c = d.subtree_com_fb[d.rootid_fb[b]];
                let f = transform_force(&post.cfrc_int[b], &p, &c, Some(&r));
                v3(out, if matches!(s.kind, K::Force(_)) { &f.f } else { &f.n });
            }
            K::ActuatorFrc(a) => out.push(inp.act.force[a]),
            K::JointActuatorFrc(j) => out.push(fd.qfrc_actuator[model.v_adr[j]]),
            K::TendonActuatorFrc(t) => out.push(
                model
                    .actuators
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.trn == Transmission::Tendon(t))
                    .map(|(k, _)| inp.act.force[k])
                    .sum(),
            ),
            K::JointLimitFrc(j) => out.push(
                limit_row(fd, EfcType::LimitJoint, j)
                    .map(|i| fd.efc_force[i])
                    .unwrap_or(0.0),
            ),
            K::TendonLimitFrc(t) => out.push(
                limit_row(fd, EfcType::LimitTendon, t)
                    .map(|i| fd.efc_force[i])
                    .unwrap_or(0.0),
            ),
            K::FrameLinAcc(obj) | K::FrameAngAcc(obj) => {
                let (p, _, b) = frame_pose(model, d, obj);
                let a = object_acceleration(d, post, b, &p, None);
                v3(
                    out,
                    if matches!(s.kind, K::FrameAngAcc(_)) {
                        &a.w
                    } else {
                        &a.v
                    },
                );
            }
        }
        // cutoff (MuJoCo's apply_cutoff)
        if s.cutoff > 0.0 {
            for x in &mut out[start..] {
                match s.kind.datatype() {
                    SensorData::Real => *x = x.clamp(-s.cutoff, s.cutoff),
                    SensorData::Positive => *x = x.min(s.cutoff),
                    _ => {}
                }
            }
        }
    }
}
// ANCHOR_END: sensors

/// The stage each sensor value belongs to, parallel to `sensordata` (for plots and tables).
pub fn sensor_stages(model: &Model) -> Vec<SensorStage> {
    model
        .sensors
        .iter()
        .flat_map(|s| std::iter::repeat_n(s.kind.stage(), s.kind.dim()))
        .collect()
}

/// The names of the `sensordata` entries: a sensor's name (or `sensor<k>`), with `[i]` for
/// each component of a sensor with more than one.
pub fn sensor_labels(model: &Model) -> Vec<String> {
    let mut out = Vec::new();
    for (k, s) in model.sensors.iter().enumerate() {
        let name = if s.name.is_empty() {
            format!("sensor{k}")
        } else {
            s.name.clone()
        };
        let dim = s.kind.dim();
        if dim == 1 {
            out.push(name);
        } else {
            out.extend((0..dim).map(|i| format!("{name}[{i}]")));
        }
    }
    out
}

// ANCHOR: touch
/// A touch sensor on site `si` (MuJoCo's `mjSENS_TOUCH`): the normal forces of the contacts of
/// the site's body that push on it (`mj_contactForce`'s first entry positive) and whose normal,
/// cast as a ray from the contact point into the body, crosses the site's volume (a contact
/// point inside the volume always does). The ray test is the one of `mj_ray`
/// ([`crate::collision::ray::ray_geom`]) against the site's shape.
fn touch(model: &Model, fd: &ForwardData, si: usize) -> f64 {
    let site = &model.sites[si];
    let (pos, rot, b) = frame_pose(model, &fd.data, SensorFrame::Site(si));
    let pose = crate::collision::GeomPose { pos, rot };
    let assets = crate::collision::Assets {
        meshes: &model.meshes,
        hfields: &model.hfields,
    };
    let mut total = 0.0;
    for (k, c) in fd.contacts().iter().enumerate() {
        let (b0, b1) = (model.geoms[c.geom[0]].body, model.geoms[c.geom[1]].body);
        if c.efc_address.is_none() || (b != b0 && b != b1) {
            continue;
        }
        let normal_force = contact_force(fd, k)[0];
        if normal_force <= 0.0 {
            continue;
        }
        // the normal points from geom[0] into geom[1]: into the body when it is geom[1]'s
        let mut ray = c.normal() * normal_force;
        ray /= ray.norm();
        if b == b1 {
            ray = -ray;
        }
        if crate::collision::ray::ray_geom(&assets, site.gtype, &site.size, &pose, &c.pos, &ray).is_some() {
            total += normal_force;
        }
    }
    total
}
// ANCHOR_END: touch

// ANCHOR: rangefinder
/// A rangefinder on site `si` (MuJoCo's `mjSENS_RANGEFINDER` with `data="dist"`): the distance
/// along the site's z axis to the nearest geom not on the site's body and not invisible
/// ([`super::ray::ray`], static geoms included, every group), -1 when the ray hits nothing.
fn rangefinder(model: &Model, d: &Data, geoms: &mut Vec<crate::collision::GeomPose>, si: usize) -> f64 {
    let (pos, rot, b) = frame_pose(model, d, SensorFrame::Site(si));
    if geoms.is_empty() {
        super::collision::geom_poses_into(model, d, geoms);
    }
    let filter = super::ray::RayFilter {
        geomgroup: None,
        flg_static: true,
        bodyexclude: Some(model.mj_body[b]),
    };
    let z: Vec3 = rot.column(2).into();
    // the site's z axis is a unit vector and its origin finite: the ray's errors cannot occur
    match super::ray::ray(model, geoms, &pos, &z, &filter) {
        Ok(Some(hit)) => hit.dist,
        _ => -1.0,
    }
}
// ANCHOR_END: rangefinder
