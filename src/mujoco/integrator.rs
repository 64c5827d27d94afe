//! MuJoCo's time stepping: `mj_step` = `mj_forward` ([`forward_pass`]: the smooth dynamics, then
//! on models with constraints the constrained pipeline) followed by one of MuJoCo's four
//! integrators, with the state checks of `mj_checkPos`/`mj_checkVel`/`mj_checkAcc`.
//!
//! | MuJoCo | here |
//! |---|---|
//! | `mjData.{time, qpos, qvel, act, ctrl, qfrc_applied}` | [`State`] |
//! | `mj_forward` (smooth part: passive, actuation, bias, `qacc`) | [`forward_pass`] into [`Forward`] |
//! | `mj_Euler` (implicit joint damping unless `<flag eulerdamp="disable">`) | [`Integrator::Euler`]: `(M + h diag(damping)) a = f` |
//! | `mj_implicit` with `integrator="implicit"` | [`Integrator::Implicit`]: `(M - h D) a = f`, `D` with the RNE derivative, reverse LU ([`super::implicit`]) |
//! | `mj_implicit` with `integrator="implicitfast"` | [`Integrator::ImplicitFast`]: `D` symmetrized without RNE, `L^T D L` |
//! | `mj_RungeKutta` (RK4 tableau, `dexp^-1` on ball and free joints, `act` integrated too) | [`Integrator::Rk4`], [`crate::integrate::rk4_step_aux`] |
//! | `mj_advance` (`act` by `mj_nextActivation`, then `qvel`, `qpos`, `time`) | [`Simulator::step`] |
//! | `mj_checkPos`, `mj_checkVel`, `mj_checkAcc` (warning, `mj_resetData`) | [`check_finite`]; [`OnDivergence::Reset`] (the default: count a [`Warnings`] entry, reset to [`Simulator::reset_state`]) or [`OnDivergence::Error`] (an error naming step, time and entry) |
//! | `mjData.warning[mjWARN_BADQPOS / BADQVEL / BADQACC]` | [`Simulator::warnings`] |
//!
//! A student writes a controller against [`Simulator`]: set `sim.state.ctrl` (the actuator
//! controls) or `sim.state.qfrc_applied` (generalized forces) and call [`Simulator::step`].
//! Models with constraints (contacts, equality constraints, friction loss, joint limits;
//! [`has_constraints`]) take `qacc` and `qfrc_constraint` from the whole constrained
//! `mj_forward` of [`super::forward`] at every evaluation, and every integrator then uses them
//! as MuJoCo's does.

use super::collision::candidate_pairs;
use super::com::{mj_com_pos, mj_com_vel, mj_crb, mj_rne};
use super::forward::{has_constraints, Forward as Constrained, ForwardData};
use super::implicit::{
    check_implicit_supported, free_block, free_body_bias_vel, lu_tree_in_place, lu_tree_solve, m_minus_h_sym_d,
    m_minus_hd, qderiv_tree, rne_vel_of, solve_small, standalone_free_joints, RneVel, TreeMatrix, TreeSink,
};
use crate::dynamics::{
    aba_with, actuation_with, actuator_na, kinetic_energy, next_activation, passive_forces_into, potential_energy,
    potential_energy_placed, rnea_with, tendon_kinematics_into, transmission_with, Actuation, PassiveScratch,
    TendonState, Workspace,
};
use crate::error::{Error, Result};
use crate::integrate::{check_timestep, rk4_step_aux, Recorder, StageDynamics, StepScratch};
use crate::kinematics::WorldAxes;
use crate::model::{DynType, Equality, Integrator, Model};
use crate::sparse::{factor_i_in_place, solve_ld, NoCount, PivotPolicy};
use crate::spatial::Vec3;

pub use super::state::{check_finite, Divergence, OnDivergence, State, WarningStat, Warnings};

/// An error naming the first reason why a model's MuJoCo simulation involves constraints:
/// equality constraints, geoms that can touch (MuJoCo's broad-phase filter,
/// [`super::collision::may_collide`]) and dry joint friction (`frictionloss`); joint limits are
/// not checked here (see [`has_constraints`]). The [`Simulator`] steps such models through the
/// constrained pipeline; this check serves callers that want the smooth dynamics only.
pub fn check_unconstrained(model: &Model) -> Result<()> {
    if model.opt.disabled("constraint") {
        return Ok(());
    }
    if let Some(eq) = model.equality.first().filter(|_| !model.opt.disabled("equality")) {
        let name = match eq {
            Equality::Connect { name, .. }
            | Equality::Weld { name, .. }
            | Equality::Joint { name, .. }
            | Equality::Tendon { name, .. } => name,
        };
        return Err(Error::Unsupported {
            what: format!("equality constraint '{name}'"),
            why: "it makes constraint rows; this caller takes the smooth dynamics only".into(),
        });
    }
    if let Some(&(a, b)) = candidate_pairs(model)
        .first()
        .filter(|_| !model.opt.disabled("contact"))
    {
        let (ga, gb) = (&model.geoms[a], &model.geoms[b]);
        return Err(Error::Unsupported {
            what: format!(
                "geoms '{}' (body '{}') and '{}' (body '{}')",
                ga.name, model.mj_body_name[model.mj_body[ga.body]], gb.name, model.mj_body_name[model.mj_body[gb.body]]
            ),
            why: "they can collide, and this caller takes the smooth dynamics only (set contype=\"0\" conaffinity=\"0\" to remove the contacts)".into(),
        });
    }
    for i in 1..=model.nb {
        let j = &model.joints[i];
        if j.frictionloss > 0.0 && !model.opt.disabled("frictionloss") {
            return Err(Error::Unsupported {
                what: format!("joint '{}' with frictionloss {}", j.name, j.frictionloss),
                why: "dry friction is a constraint; this caller takes the smooth dynamics only".into(),
            });
        }
    }
    Ok(())
}

// ANCHOR: forward
/// What one forward pass computes and the integrators read (the smooth part of `mjData` after
/// `mj_forward`).
#[derive(Clone, Debug)]
pub struct Forward {
    /// `qfrc_passive` (nv).
    pub qfrc_passive: Vec<f64>,
    /// `qfrc_bias = c(q, v)` (nv). Not computed (NaN) by the steps of the ABA route (Euler
    /// without implicit damping, RK4: see [`Simulator::step`]), which need no bias vector;
    /// [`Simulator::forward`] always computes it.
    pub qfrc_bias: Vec<f64>,
    /// `qfrc_smooth = qfrc_passive + qfrc_actuator + qfrc_applied - qfrc_bias` (nv); NaN when
    /// `qfrc_bias` is.
    pub qfrc_smooth: Vec<f64>,
    /// `qfrc_constraint` (nv): from the constrained pipeline on models with constraints, zero
    /// otherwise.
    pub qfrc_constraint: Vec<f64>,
    /// `qacc = M^-1 (qfrc_smooth + qfrc_constraint)` (nv).
    pub qacc: Vec<f64>,
    /// The actuators: lengths, moments, forces, `act_dot`, `qfrc_actuator`.
    pub actuation: Actuation,
    /// Tendon lengths and `ten_J` (None when the model has no tendons).
    pub ten: Option<TendonState>,
    /// Empty tendon storage, the transmission's input on a model without tendons.
    no_tendons: TendonState,
    /// The fluid model's per-body storage.
    fluid: PassiveScratch,
    /// The body poses and world dof axes of the site and slider-crank transmissions.
    axes: WorldAxes,
    /// Recursive-algorithm scratch.
    pub ws: Workspace,
    /// Cartesian wrenches on the bodies (`xfrc_applied`, one per MuJoCo body): an input of the
    /// pass, set by the [`Simulator`] from its state; `J^T` of them goes into `tau`.
    pub xfrc_applied: Vec<[f64; 6]>,
    /// `tau = qfrc_passive + qfrc_actuator + qfrc_applied + J^T xfrc_applied`, the joint force
    /// ABA takes (nv).
    tau: Vec<f64>,
    /// Zeros (nv), the acceleration at which RNEA gives the bias forces.
    zeros: Vec<f64>,
    /// What the smooth pass computes on a model without constraints.
    route: Route,
}

// ANCHOR: route
/// The two ways the [`Simulator`] computes the smooth dynamics of a model without constraints.
/// MuJoCo's `mj_forward` always takes the second; the first is cheaper when nothing else needs
/// `M`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// Bias forces by RNEA, `qacc` by ABA: what [`forward_pass`] does for a caller.
    Full,
    /// `qacc` by ABA alone (Euler without implicit damping, RK4's stages): ABA takes
    /// `tau = qfrc_passive + qfrc_actuator + qfrc_applied` and forms the velocity-product and
    /// gravity terms itself, so no RNEA pass is made and `qfrc_bias`, `qfrc_smooth` are left
    /// NaN.
    Aba,
    /// MuJoCo's route (implicit, implicitfast, Euler with implicit damping): these
    /// integrators need `M` at the state anyway, so the simulator computes the com-based
    /// quantities once (`mj_comPos`, `mj_comVel`), `M` by `mj_crb`, the bias forces by the
    /// com-based `mj_rne`, factors `M` (`mj_factorM`) and solves `qacc = M^-1 qfrc_smooth`
    /// (`mj_solveM`), instead of running RNEA and ABA besides. [`forward_pass`] computes the
    /// passive and actuator forces only.
    Factor,
}
// ANCHOR_END: route

impl Forward {
    /// Storage for `model`.
    pub fn new(model: &Model) -> Self {
        let z = || vec![0.0; model.nv];
        Forward {
            qfrc_passive: z(),
            qfrc_bias: z(),
            qfrc_smooth: z(),
            qfrc_constraint: z(),
            qacc: z(),
            actuation: Actuation::new(model),
            ten: (!model.tendons.is_empty()).then(|| TendonState::new(model)),
            no_tendons: TendonState::new(model),
            fluid: PassiveScratch::default(),
            axes: WorldAxes::default(),
            ws: Workspace::new(model),
            xfrc_applied: vec![[0.0; 6]; model.mj_nbody()],
            tau: z(),
            zeros: z(),
            route: Route::Full,
        }
    }
}

/// The forward pass every integrator calls, once per step (Euler, implicit, implicitfast) or
/// per stage (RK4), MuJoCo's `mj_forward` on a model without constraints, in MuJoCo's order:
/// position stage (tendons, `mj_transmission`), velocity stage (`mj_passive`, bias forces by
/// RNEA), acceleration stage (`mj_fwdActuation`, `qfrc_smooth`, `qacc` by ABA). Given the
/// constrained pipeline (models with constraints), its whole `mj_forward` computes everything
/// instead: the forces, `qacc` and `qfrc_constraint` are copied (a few nv-vectors), and its
/// tendon and actuator quantities are moved into `out` by exchanging storage
/// ([`Constrained::exchange_actuation`]), so that nothing is computed twice.
///
/// Kernel: lengths are the model's (the [`Simulator`] checks the state at the door).
#[allow(clippy::too_many_arguments)]
pub fn forward_pass(
    model: &Model,
    q: &[f64],
    v: &[f64],
    act: &[f64],
    ctrl: &[f64],
    qfrc_applied: &[f64],
    out: &mut Forward,
    constrained: Option<&mut Constrained<'_>>,
) -> Result<()> {
    if let Some(c) = constrained {
        // the constrained mj_forward computes every stage itself, the tendons, transmissions
        // and actuator forces included
        c.ctrl.copy_from_slice(ctrl);
        c.act.copy_from_slice(act);
        c.xfrc_applied.copy_from_slice(&out.xfrc_applied);
        c.forward_with(q, v, qfrc_applied)?;
        c.exchange_actuation(&mut out.actuation, out.ten.as_mut());
        out.qfrc_passive.copy_from_slice(&c.d.qfrc_passive);
        out.qfrc_bias.copy_from_slice(&c.d.data.qfrc_bias);
        out.qfrc_smooth.copy_from_slice(&c.d.qfrc_smooth);
        out.qfrc_constraint.copy_from_slice(&c.d.qfrc_constraint);
        out.qacc.copy_from_slice(&c.d.qacc);
        return Ok(());
    }
    // position stage: tendons and transmissions (a model with mocap bodies always takes the
    // constrained pipeline, which places them: here every body is where the model puts it)
    if let Some(ten) = out.ten.as_mut() {
        tendon_kinematics_into(model, q, &[], ten)?;
    }
    if !model.actuators.is_empty() {
        let ten = out.ten.as_ref().unwrap_or(&out.no_tendons);
        let act = &mut out.actuation;
        transmission_with(model, q, &[], ten, &mut out.axes, &mut act.length, &mut act.moment)?;
    }
    // velocity stage: passive and bias forces
    passive_forces_into(
        model,
        q,
        v,
        &[],
        out.ten.as_ref(),
        &mut out.fluid,
        &mut out.qfrc_passive,
    );
    match out.route {
        Route::Full => rnea_with(model, &mut out.ws, q, v, &out.zeros, None, &mut out.qfrc_bias),
        Route::Aba => out.qfrc_bias.fill(f64::NAN),
        Route::Factor => {} // Simulator::qacc_by_factor
    }
    // acceleration stage: actuation, qfrc_smooth, qacc
    actuation_with(model, v, ctrl, act, &out.fluid.gravcomp, &mut out.actuation)?;
    for k in 0..model.nv {
        out.tau[k] = out.qfrc_passive[k] + out.actuation.qfrc[k] + qfrc_applied[k];
    }
    // mj_xfrcAccumulate: the Cartesian wrenches on bodies, through the world dof axes at q
    if crate::dynamics::has_xfrc(&out.xfrc_applied) {
        out.axes.update(model, q, &[]);
        crate::dynamics::xfrc_into(model, &out.axes, &out.xfrc_applied, &mut out.tau);
    }
    for k in 0..model.nv {
        out.qfrc_smooth[k] = out.tau[k] - out.qfrc_bias[k];
        out.qfrc_constraint[k] = 0.0;
    }
    if out.route != Route::Factor {
        aba_with(model, &mut out.ws, q, v, &out.tau, None, &mut out.qacc)?;
    } // else qfrc_bias, qfrc_smooth and qacc come from Simulator::qacc_by_factor
    Ok(())
}
// ANCHOR_END: forward

/// The stage dynamics of RK4: `(qacc, act_dot)` of [`forward_pass`] at a stage state. The first
/// stage is the state itself, whose forward pass the step has already made (`first`), as
/// MuJoCo's `mj_RungeKutta` reads `qacc` and `act_dot` of the `mj_forward` before it: four
/// forward passes per step, not five.
struct Stage<'a, 'b> {
    model: &'a Model,
    first: Option<(&'a [f64], &'a [f64])>,
    ctrl: &'a [f64],
    qfrc_applied: &'a [f64],
    fwd: &'a mut Forward,
    constrained: Option<&'a mut Constrained<'b>>,
}

impl StageDynamics for Stage<'_, '_> {
    fn eval(&mut self, q: &[f64], v: &[f64], act: &[f64], qacc: &mut [f64], act_dot: &mut [f64]) -> Result<()> {
        if let Some((a, ad)) = self.first.take() {
            qacc.copy_from_slice(a);
            act_dot.copy_from_slice(ad);
            return Ok(());
        }
        forward_pass(
            self.model,
            q,
            v,
            act,
            self.ctrl,
            self.qfrc_applied,
            self.fwd,
            self.constrained.as_deref_mut(),
        )?;
        qacc.copy_from_slice(&self.fwd.qacc);
        act_dot.copy_from_slice(&self.fwd.actuation.act_dot);
        Ok(())
    }
}

/// `f <- qh^-1 f`: `qh` (M with the integrator's `h` terms, in `M`'s legacy layout) factored in
/// place by `mj_factorI` and solved by `mj_solveM`'s passes.
fn factor_qh_solve(model: &Model, qh: &mut [f64], qh_diag_inv: &mut [f64], f: &mut [f64]) -> Result<()> {
    let layout = model.mj_layout();
    factor_i_in_place(
        layout,
        qh,
        qh_diag_inv,
        PivotPolicy::Error,
        &mut Vec::new(),
        &mut NoCount,
    )?;
    solve_ld(layout, qh, qh_diag_inv, f, &mut NoCount)
}

/// Whether the [`Simulator`] steps `model` through MuJoCo's pipeline ([`super::forward`]):
/// for a model with constraints ([`has_constraints`]), with mocap bodies (whose poses are
/// inputs only that pipeline reads: RNEA and ABA place every body by its `X_tree`), or with
/// sensors (which read what that pipeline keeps). Otherwise it takes the smooth route of
/// Featherstone's algorithms.
pub fn runs_mujoco_pipeline(model: &Model) -> bool {
    has_constraints(model) || model.nmocap() > 0 || !model.sensors.is_empty()
}

/// Whether `mj_Euler` integrates the joint damping implicitly: some dof is damped and
/// `<flag eulerdamp="disable">` is not set.
pub fn euler_damps_implicitly(model: &Model) -> bool {
    !model.opt.disabled("eulerdamp") && (1..=model.nb).any(|i| model.joints[i].damping > 0.0)
}

/// MuJoCo's `mj_step`, one call per step; allocation-free after [`Simulator::new`] for models
/// without constraints, tendons, site or slider-crank transmissions (those compute Jacobians
/// with allocating helpers).
pub struct Simulator<'m> {
    /// The model.
    pub model: &'m Model,
    /// The state, advanced by [`Simulator::step`]; set `state.ctrl` or `state.qfrc_applied` to
    /// control it, `state.eq_active` to switch equality constraints on or off.
    pub state: State,
    /// The scheme.
    pub integrator: Integrator,
    /// Steps taken.
    pub steps: usize,
    /// The acceleration of the last step's first stage (`qacc`, nv).
    pub qacc: Vec<f64>,
    /// The forward pass of the last step's first stage (its forces and actuator quantities).
    pub fwd: Forward,
    scratch: StepScratch,
    /// The forward passes of RK4's stages 2 to 4 (`fwd` keeps the first stage's).
    stage_fwd: Forward,
    /// The next state's `qpos`, `qvel`, `act`, swapped into `state` at the end of a step.
    qn: Vec<f64>,
    vn: Vec<f64>,
    actn: Vec<f64>,
    /// `qDeriv` on MuJoCo's pattern (implicit, implicitfast).
    d: TreeMatrix,
    /// `M - h D` (implicit), then its LU factor, on the same pattern.
    mhd: TreeMatrix,
    /// `M + h diag(damping)` (Euler) or `M - h sym(D)` (implicitfast) in the legacy sparse
    /// layout, then its `L^T D L` factor.
    qh: Vec<f64>,
    qh_diag_inv: Vec<f64>,
    /// First dofs of the standalone free bodies (implicitfast's 6 x 6 blocks).
    free_bodies: Vec<usize>,
    /// Scratch: the force solved for (nv).
    f: Vec<f64>,
    /// Scratch of the analytic RNE derivative (`mjd_rne_vel`); its `data` holds the com-based
    /// quantities, `M` and its factor of the [`Route::Factor`] route (models without
    /// constraints; the constrained pipeline keeps its own).
    rv: RneVel,
    /// `act_dot` used to advance `act` (na).
    act_rate: Vec<f64>,
    /// The constrained pipeline ([`super::forward`]), for models with constraints
    /// ([`has_constraints`]): contacts, limits, friction loss and equality constraints.
    constrained: Option<Constrained<'m>>,
    /// What a divergence does ([`OnDivergence::Reset`], MuJoCo's, unless set otherwise).
    pub on_divergence: OnDivergence,
    /// The state a divergence resets to (MuJoCo's `mj_resetData`: [`State::reference`]; put a
    /// [`State::keyframe`] here for `mj_resetDataKeyframe`).
    pub reset_state: State,
    /// The warnings raised by divergences so far.
    pub warnings: Warnings,
    /// The state at which [`Simulator::forward`] last evaluated `fwd` (valid when
    /// `fwd_fresh`): a step from that same state reuses the evaluation.
    fwd_at: State,
    fwd_fresh: bool,
}

impl<'m> Simulator<'m> {
    /// A simulator at `state`, after checking that the time step is positive and finite, the
    /// state valid,
    /// and (implicit, implicitfast) that the model has no fluid forces.
    pub fn new(model: &'m Model, state: State, integrator: Integrator) -> Result<Self> {
        check_timestep(model.opt.timestep)?;
        crate::dynamics::check_spring_lengths(model)?;
        if matches!(integrator, Integrator::Implicit | Integrator::ImplicitFast) {
            check_implicit_supported(model)?;
        }
        state.check(model)?;
        // MuJoCo's pipeline for models with constraints, for models with mocap bodies, whose
        // poses are inputs only it reads (RNEA and ABA place every body by its X_tree), and for
        // models with sensors, which read what it keeps
        let constrained = if runs_mujoco_pipeline(model) {
            Some(Constrained::new(model)?)
        } else {
            None
        };
        let nv = model.nv;
        let reference = State::reference(model);
        // the smooth route of a model without constraints (see Route): RNEA + M's factor when
        // the integrator needs M anyway, ABA alone otherwise
        let (mut fwd, mut stage_fwd) = (Forward::new(model), Forward::new(model));
        stage_fwd.route = Route::Aba;
        fwd.route = match integrator {
            Integrator::Rk4 => Route::Aba,
            Integrator::Euler if !euler_damps_implicitly(model) => Route::Aba,
            _ => Route::Factor,
        };
        Ok(Simulator {
            model,
            state,
            integrator,
            steps: 0,
            qacc: vec![0.0; nv],
            fwd,
            scratch: StepScratch::new(model),
            stage_fwd,
            qn: vec![0.0; model.nq],
            vn: vec![0.0; nv],
            actn: vec![0.0; actuator_na(model)],
            d: TreeMatrix::new(model),
            mhd: TreeMatrix::new(model),
            qh: vec![0.0; model.mj_layout().nm],
            qh_diag_inv: vec![0.0; nv],
            free_bodies: standalone_free_joints(model),
            f: vec![0.0; nv],
            rv: RneVel::new(model)?,
            act_rate: vec![0.0; actuator_na(model)],
            constrained,
            on_divergence: OnDivergence::Reset,
            reset_state: reference.clone(),
            warnings: Warnings::default(),
            fwd_at: reference,
            fwd_fresh: false,
        })
    }

    // ANCHOR: integrators
    /// The acceleration `a_used` each integrator advances the velocity with, from the forward
    /// pass at the step's start (already in `self.fwd`), into `self.f`:
    /// - Euler: `qacc`, or with damping `(M + h diag(damping))^-1 (qfrc_smooth + qfrc_constraint)`,
    ///   `L^T D L` in `M`'s legacy layout (`mj_factorI`);
    /// - implicit: `(M - h D)^-1 (...)`, `D` from [`qderiv_tree`] and [`rne_vel_of`], reverse
    ///   LU on the tree pattern ([`TreeMatrix`], [`lu_tree_in_place`]);
    /// - implicitfast: `(M - h sym(D))^-1 (...)` without the RNE term, `L^T D L` in the legacy
    ///   layout, with the standalone free bodies solved apart including their gyroscopic
    ///   derivative ([`free_block`], [`free_body_bias_vel`]).
    ///
    /// `M` and the com-based quantities the derivatives read (`cdof`, `cinert`, `cvel`, ...)
    /// are the forward pass's own at this state (the constrained pipeline's, or those of
    /// [`Simulator::qacc_by_factor`]): nothing is computed twice, and nothing here is dense.
    fn implicit_acceleration(&mut self) -> Result<()> {
        let model = self.model;
        let h = model.opt.timestep;
        let nv = model.nv;
        let layout = model.mj_layout();
        let Simulator {
            state,
            fwd,
            constrained,
            rv,
            f,
            d,
            mhd,
            qh,
            qh_diag_inv,
            free_bodies,
            ..
        } = self;
        for k in 0..nv {
            f[k] = fwd.qfrc_smooth[k] + fwd.qfrc_constraint[k];
        }
        let com = match constrained {
            Some(c) => &c.d.data,
            None => &rv.data,
        };
        let (qm, v) = (&com.qm, &state.qvel);
        match self.integrator {
            Integrator::Euler => {
                // mj_Euler: M + h diag(damping), factored by mj_factorI
                qh.copy_from_slice(qm);
                for i in 1..=model.nb {
                    for dof in model.dofs(i) {
                        qh[layout.dof_madr[dof]] += h * model.joints[i].damping;
                    }
                }
                factor_qh_solve(model, qh, qh_diag_inv, f)?;
            }
            Integrator::Implicit => {
                let ten = fwd.ten.as_ref().map(|t| &t.moment);
                qderiv_tree(model, &fwd.actuation, ten, &state.ctrl, &state.act, d);
                let tree = model.mj_layout_tree();
                rne_vel_of(model, com, &mut rv.chains, v, &mut TreeSink { layout: tree, m: d });
                m_minus_hd(model, qm, d, h, mhd);
                lu_tree_in_place(tree, mhd, "M - h qDeriv of the implicit step")?;
                lu_tree_solve(tree, mhd, f);
            }
            Integrator::ImplicitFast => {
                let ten = fwd.ten.as_ref().map(|t| &t.moment);
                qderiv_tree(model, &fwd.actuation, ten, &state.ctrl, &state.act, d);
                m_minus_h_sym_d(model, qm, d, h, qh);
                factor_qh_solve(model, qh, qh_diag_inv, f)?;
                // mjd_freeMhat: each standalone free body's block M - h (D - d bias / dv),
                // solved apart (it couples to no other dof), overwrites its rows of f
                for &adr in free_bodies.iter() {
                    let mut a = free_block(model, qm, d, h, adr);
                    let omega = Vec3::new(v[adr + 3], v[adr + 4], v[adr + 5]);
                    let [lin, rot] = free_body_bias_vel(model, com, model.dof_body[adr], &omega);
                    for r in 0..3 {
                        for c in 0..3 {
                            a[r][3 + c] += h * lin[(r, c)];
                            a[3 + r][3 + c] += h * rot[(r, c)];
                        }
                    }
                    let mut x: [f64; 6] =
                        std::array::from_fn(|r| fwd.qfrc_smooth[adr + r] + fwd.qfrc_constraint[adr + r]);
                    solve_small(&mut a, &mut x)?;
                    f[adr..adr + 6].copy_from_slice(&x);
                }
            }
            Integrator::Rk4 => unreachable!("RK4 has no implicit acceleration"),
        }
        Ok(())
    }
    // ANCHOR_END: integrators

    // ANCHOR: step_checks
    /// One step of size `model.opt.timestep` with the simulator's integrator, MuJoCo's
    /// `mj_step`: the incoming `qpos` and `qvel` are checked (`mj_checkPos`, `mj_checkVel`),
    /// then the step is taken and `qacc`, `qpos`, `qvel` and `act` are checked. A bad entry
    /// (not finite, or above `mjMAXVAL` in magnitude) is handled by
    /// [`Simulator::on_divergence`]:
    /// - [`OnDivergence::Reset`] (default): a warning is counted in [`Simulator::warnings`] and
    ///   the state becomes [`Simulator::reset_state`]; a bad `qacc` then steps from the reset
    ///   state, as `mj_checkAcc` re-runs `mj_forward` and integrates (a second divergence in
    ///   that same step is an error). (MuJoCo stores a bad new
    ///   state and resets at the start of the next `mj_step`; here the reset happens at once,
    ///   so the state after every later step is the same and no caller ever reads a NaN.)
    /// - [`OnDivergence::Error`]: [`Error::Diverged`] naming the step, time and first bad entry,
    ///   the state left as it was before the step.
    ///
    /// Other failures (a solver error, a limited joint outside its range) are errors under both
    /// policies, with the state as it was.
    pub fn step(&mut self) -> Result<()> {
        let step = Some(self.steps + 1);
        let incoming = check_finite(step, self.state.time, "qpos", &self.state.qpos)
            .and_then(|()| check_finite(step, self.state.time, "qvel", &self.state.qvel));
        if let Err(e) = incoming {
            self.diverged(e)?;
        }
        match self.advance() {
            Err(e @ Error::Diverged { .. }) => {
                let qacc = matches!(e, Error::Diverged { quantity: "qacc", .. });
                self.diverged(e)?;
                if qacc {
                    // mj_checkAcc: mj_forward again at the reset state, then integrate
                    return self.advance();
                }
                self.steps += 1;
                Ok(())
            }
            r => r,
        }
    }

    /// A divergence under the simulator's policy: the error itself ([`OnDivergence::Error`],
    /// or `<flag autoreset="disable">`), or a counted warning and the reset.
    fn diverged(&mut self, e: Error) -> Result<()> {
        let Error::Diverged {
            step,
            time,
            quantity,
            index,
            value,
        } = e
        else {
            return Err(e);
        };
        if self.on_divergence == OnDivergence::Error {
            return Err(e);
        }
        self.warnings.raise(Divergence {
            step: step.unwrap_or(self.steps + 1),
            time,
            quantity,
            index,
            value,
        });
        if self.model.opt.disabled("autoreset") {
            return Err(e);
        }
        self.reset();
        Ok(())
    }

    /// MuJoCo's `mj_resetData` (or `mj_resetDataKeyframe`): the state becomes
    /// [`Simulator::reset_state`]; the step count and the warnings are kept.
    pub fn reset(&mut self) {
        self.state.clone_from(&self.reset_state);
        self.fwd_fresh = false;
    }
    // ANCHOR_END: step_checks

    /// The step proper (see [`Simulator::step`]); a divergence is an [`Error::Diverged`] here,
    /// with the state as it was.
    fn advance(&mut self) -> Result<()> {
        let model = self.model;
        // a forward pass at exactly this state is already in `fwd` (from `forward`)
        let fresh = std::mem::replace(&mut self.fwd_fresh, false) && self.fwd_at == self.state;
        let h = model.opt.timestep;
        // ANCHOR: step
        // mj_forward at the state (the first stage of RK4)
        if !fresh {
            self.forward_at_state()?;
        }
        self.qacc.copy_from_slice(&self.fwd.qacc);
        self.qn.copy_from_slice(&self.state.qpos);
        self.vn.copy_from_slice(&self.state.qvel);
        if self.integrator == Integrator::Rk4 {
            if let Some(c) = self.constrained.as_mut() {
                c.sensors_enabled = false;
            }
            let mut stage = Stage {
                model,
                first: Some((&self.fwd.qacc, &self.fwd.actuation.act_dot)),
                ctrl: &self.state.ctrl,
                qfrc_applied: &self.state.qfrc_applied,
                fwd: &mut self.stage_fwd,
                constrained: self.constrained.as_mut(),
            };
            rk4_step_aux(
                model,
                &mut self.scratch,
                &mut stage,
                &mut self.qn,
                &mut self.vn,
                &self.state.act,
                &mut self.act_rate,
                h,
            )?;
        } else {
            self.act_rate.copy_from_slice(&self.fwd.actuation.act_dot);
            if self.integrator == Integrator::Euler && !euler_damps_implicitly(model) {
                self.f.copy_from_slice(&self.fwd.qacc);
            } else {
                self.implicit_acceleration()?;
            }
            // mj_advance: v += h a, q = q (+) h v (the new velocity)
            for k in 0..model.nv {
                self.vn[k] += h * self.f[k];
            }
            model.integrate_with(&mut self.qn, &self.vn, h);
            model.normalize_quaternions_with(&mut self.qn);
        }
        // mj_advance: act by mj_nextActivation (exact for filterexact)
        self.actn.copy_from_slice(&self.state.act);
        for (ia, a) in model
            .actuators
            .iter()
            .filter(|a| a.dyntype != DynType::None)
            .enumerate()
        {
            self.actn[ia] = next_activation(a, self.actn[ia], self.act_rate[ia], h);
        }
        // ANCHOR_END: step
        let step = Some(self.steps + 1);
        let t = self.state.time + h;
        check_finite(step, self.state.time, "qacc", &self.qacc)?;
        check_finite(step, t, "qpos", &self.qn)?;
        check_finite(step, t, "qvel", &self.vn)?;
        check_finite(step, t, "act", &self.actn)?;
        std::mem::swap(&mut self.state.qpos, &mut self.qn);
        std::mem::swap(&mut self.state.qvel, &mut self.vn);
        std::mem::swap(&mut self.state.act, &mut self.actn);
        // mj_advance: qacc_warmstart = the qacc of the last forward pass (the step's own for
        // Euler and the implicit integrators, the fourth stage's for RK4)
        let last = if self.integrator == Integrator::Rk4 {
            &self.stage_fwd.qacc
        } else {
            &self.fwd.qacc
        };
        self.state.qacc_warmstart.copy_from_slice(last);
        self.state.time = t;
        self.steps += 1;
        Ok(())
    }

    // ANCHOR: warmstart
    /// One [`forward_pass`] at the current state (time, positions, velocities, activations,
    /// controls, applied forces and active equality constraints of [`Simulator::state`]) into
    /// [`Simulator::fwd`], the
    /// constraint solver warm-started from the state's `qacc_warmstart` (MuJoCo's
    /// `mj_fwdConstraint`), and on the [`Route::Factor`] route `M`, the bias forces and `qacc`
    /// by [`Simulator::qacc_by_factor`].
    fn forward_at_state(&mut self) -> Result<()> {
        let s = &self.state;
        // the mocap poses may have been written since the last step: checked here, as the
        // pipeline's door checks them
        self.model.check_mocap(&s.mocap_pos, &s.mocap_quat)?;
        // the state's wrenches on bodies, for this pass and RK4's later stages
        crate::dynamics::check_xfrc(self.model, &s.xfrc_applied)?;
        self.fwd.xfrc_applied.copy_from_slice(&s.xfrc_applied);
        self.stage_fwd.xfrc_applied.copy_from_slice(&s.xfrc_applied);
        if let Some(c) = self.constrained.as_mut() {
            // mj_fwdConstraint's warmstart: the state's qacc_warmstart, unless disabled; RK4's
            // later stages keep this same one (mj_RungeKutta changes qacc_warmstart only in
            // mj_advance, after the last stage)
            let warm = !self.model.opt.disabled("warmstart");
            c.set_warmstart(warm.then_some(s.qacc_warmstart.as_slice()));
            // which equality constraints make rows: the state's, for every stage of the step
            c.d.data.eq_active.copy_from_slice(&s.eq_active);
            // the mocap poses: the state's, for every stage (never integrated)
            c.mocap_pos.copy_from_slice(&s.mocap_pos);
            c.mocap_quat.copy_from_slice(&s.mocap_quat);
            // the sensors, at the step's start only (mj_step's mj_forward)
            c.time = s.time;
            c.sensors_enabled = !self.model.sensors.is_empty();
        }
        forward_pass(
            self.model,
            &s.qpos,
            &s.qvel,
            &s.act,
            &s.ctrl,
            &s.qfrc_applied,
            &mut self.fwd,
            self.constrained.as_mut(),
        )?;
        if self.constrained.is_none() && self.fwd.route == Route::Factor {
            self.qacc_by_factor()?;
        }
        Ok(())
    }
    // ANCHOR_END: warmstart

    // ANCHOR: qacc_by_factor
    /// The [`Route::Factor`] route's bias forces and `qacc`, as `mj_forward` makes them, into
    /// the simulator's com-based [`super::Data`] (which the integrator then reads: `M`, the
    /// com positions and velocities of the velocity derivative): `mj_comPos`, `M` by `mj_crb`,
    /// `mj_comVel`, `qfrc_bias` by `mj_rne`, `qfrc_smooth`, `M`'s `L^T D L` factor
    /// (`mj_factorM`) and `qacc = M^-1 qfrc_smooth` (`mj_solveM`).
    fn qacc_by_factor(&mut self) -> Result<()> {
        let (model, layout) = (self.model, self.model.mj_layout());
        let (d, fwd, s) = (&mut self.rv.data, &mut self.fwd, &self.state);
        mj_com_pos(model, d, &s.qpos)?;
        mj_crb(model, layout, d);
        mj_com_vel(model, d, &s.qvel);
        mj_rne(model, d, &s.qvel, None, &mut fwd.qfrc_bias);
        for k in 0..model.nv {
            fwd.qfrc_smooth[k] = fwd.tau[k] - fwd.qfrc_bias[k];
        }
        d.qld.copy_from_slice(&d.qm);
        factor_i_in_place(
            layout,
            &mut d.qld,
            &mut d.qld_diag_inv,
            PivotPolicy::Error,
            &mut Vec::new(),
            &mut NoCount,
        )?;
        fwd.qacc.copy_from_slice(&fwd.qfrc_smooth);
        solve_ld(layout, &d.qld, &d.qld_diag_inv, &mut fwd.qacc, &mut NoCount)
    }
    // ANCHOR_END: qacc_by_factor

    /// MuJoCo's `mj_forward` at the current state without stepping: fills [`Simulator::fwd`]
    /// (forces, actuator quantities) and [`Simulator::qacc`].
    pub fn forward(&mut self) -> Result<()> {
        // every quantity, the bias forces included, whatever the step's route
        let route = self.fwd.route;
        if route == Route::Aba {
            self.fwd.route = Route::Full;
        }
        let r = self.forward_at_state();
        self.fwd.route = route;
        r?;
        self.qacc.copy_from_slice(&self.fwd.qacc);
        // remember the state evaluated: a step from it (Euler, implicit, implicitfast) reuses
        // this pass instead of repeating it
        let (at, s) = (&mut self.fwd_at, &self.state);
        at.time = s.time;
        at.qpos.copy_from_slice(&s.qpos);
        at.qvel.copy_from_slice(&s.qvel);
        at.act.copy_from_slice(&s.act);
        at.ctrl.copy_from_slice(&s.ctrl);
        at.qfrc_applied.copy_from_slice(&s.qfrc_applied);
        at.qacc_warmstart.copy_from_slice(&s.qacc_warmstart);
        at.eq_active.copy_from_slice(&s.eq_active);
        at.mocap_pos.copy_from_slice(&s.mocap_pos);
        at.mocap_quat.copy_from_slice(&s.mocap_quat);
        at.xfrc_applied.copy_from_slice(&s.xfrc_applied);
        self.fwd_fresh = true;
        Ok(())
    }

    /// The sensors' values (`sensordata`, [`super::sensor::sensors_into`]) at the start of the
    /// last step (or at the state of the last [`Simulator::forward`]), as MuJoCo's `mj_step`
    /// leaves them; empty for a model without sensors.
    pub fn sensordata(&self) -> &[f64] {
        self.constrained.as_ref().map(|c| &c.d.sensordata[..]).unwrap_or(&[])
    }

    /// The constrained pipeline's outputs at the last evaluation (contacts, rows, forces), for
    /// models with constraints: after an Euler or implicit step those of the step's state, after
    /// an RK4 step those of its last stage (as MuJoCo's `mjData` after `mj_RungeKutta`).
    pub fn forward_data(&self) -> Option<&ForwardData> {
        self.constrained.as_ref().map(|f| &f.d)
    }

    /// `[potential, kinetic]` energy of the current state (MuJoCo's `energy`), the mocap bodies
    /// at the state's poses.
    pub fn energy(&self) -> Result<[f64; 2]> {
        let s = &self.state;
        let potential = if self.model.nmocap() > 0 {
            potential_energy_placed(self.model, &s.qpos, &s.mocap_pos, &s.mocap_quat)?
        } else {
            potential_energy(self.model, &s.qpos)?
        };
        Ok([
            potential,
            kinetic_energy(self.model, &self.state.qpos, &self.state.qvel)?,
        ])
    }

    /// The signals [`Simulator::run`] records beside the state.
    pub const SIGNALS: [&'static str; 2] = ["energy_potential", "energy_kinetic"];

    /// Records the current state and its energy.
    fn sample(&self, rec: &mut impl Recorder) -> Result<()> {
        let e = self.energy()?;
        rec.record(self.state.time, &self.state.qpos, &self.state.qvel, &e)
    }

    /// Records the current state, then takes `steps` steps, recording every `every`-th state
    /// (and the last) with its energy into `rec`. A failure leaves every earlier sample recorded.
    pub fn run(&mut self, steps: usize, every: usize, rec: &mut impl Recorder) -> Result<()> {
        let every = every.max(1);
        self.sample(rec)?;
        for k in 1..=steps {
            self.step()?;
            if k % every == 0 || k == steps {
                self.sample(rec)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::{bias_forces, crba};
    use crate::integrate::Trajectory;
    use crate::model::canned;

    fn run(model: &Model, state: &State, steps: usize, integrator: Integrator) -> Trajectory {
        let mut sim = Simulator::new(model, state.clone(), integrator).unwrap();
        let mut tr = Trajectory::new(&Simulator::SIGNALS);
        sim.run(steps, 1, &mut tr).unwrap();
        tr
    }

    #[test]
    fn rk4_conserves_energy_and_euler_converges_to_it() {
        // Undamped double pendulum released from rest at an angle: total energy is constant.
        let model = canned::chain(2, false);
        let mut state = State::reference(&model);
        state.qpos = vec![1.0, -0.5];
        let rk = run(&model, &state, 500, Integrator::Rk4);
        let e: Vec<f64> = (0..rk.len())
            .map(|k| rk.signal("energy_potential").unwrap()[k] + rk.signal("energy_kinetic").unwrap()[k])
            .collect();
        let drift = e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max);
        assert!(drift < 1e-6 * e[0].abs().max(1.0), "RK4 energy drift {drift}");
        // The Euler trajectory approaches RK4's as O(h): halving h roughly halves the largest
        // gap over the run (both at the same times).
        let mut fine = model.clone();
        fine.opt.timestep = model.opt.timestep / 2.0;
        let eu = run(&model, &state, 500, Integrator::Euler);
        let eu2 = run(&fine, &state, 1000, Integrator::Euler);
        let gap = |tr: &Trajectory, every: usize| {
            (0..=500)
                .map(|k| {
                    (0..2)
                        .map(|i| (tr.qpos[k * every][i] - rk.qpos[k][i]).abs())
                        .fold(0.0, f64::max)
                })
                .fold(0.0, f64::max)
        };
        let (g1, g2) = (gap(&eu, 1), gap(&eu2, 2));
        assert!(g2 < 0.7 * g1 && g2 > 0.3 * g1, "Euler gaps {g1} {g2}");
    }

    #[test]
    fn implicit_damping_matches_the_closed_form_for_one_dof() {
        // One hinge: Euler with implicit damping gives v1 = v0 + h (f - c) / (m + h d), where f
        // includes -d v0.
        let mut model = canned::chain(1, false);
        model.joints[1].damping = 0.7;
        let mut state = State::reference(&model);
        state.qvel = vec![1.3];
        let h = model.opt.timestep;
        let m = crba(&model, &state.qpos).unwrap()[(0, 0)];
        let c = bias_forces(&model, &state.qpos, &state.qvel).unwrap()[0];
        let expected_v1 = 1.3 + h * (-0.7 * 1.3 - c) / (m + h * 0.7);
        let tr = run(&model, &state, 1, Integrator::Euler);
        assert!((tr.qvel[1][0] - expected_v1).abs() < 1e-12);
        assert!((tr.qpos[1][0] - (state.qpos[0] + h * expected_v1)).abs() < 1e-12);
    }

    #[test]
    fn implicit_damping_on_a_branched_tree_matches_the_dense_formula_every_step() {
        // A floating base with ball-jointed arms, damped: each Euler step's velocity must equal
        // v + h (M + h D)^-1 (f - C) with M from CRBA and a fresh dense solve, step after step
        // (a stale factor left in the scratch matrix would break the second step on).
        let mut model = canned::floating_base_ball_arms();
        for i in 1..=model.nb {
            model.joints[i].damping = 0.3 + 0.1 * i as f64;
        }
        let mut state = State::reference(&model);
        state.qvel = (0..model.nv).map(|k| 0.3 * (k as f64 * 1.3).sin()).collect();
        let h = model.opt.timestep;
        let mut sim = Simulator::new(&model, state, Integrator::Euler).unwrap();
        for _ in 0..5 {
            let (q, v) = (sim.state.qpos.clone(), sim.state.qvel.clone());
            let mut m = crba(&model, &q).unwrap();
            for i in 1..=model.nb {
                for dof in model.dofs(i) {
                    m[(dof, dof)] += h * model.joints[i].damping;
                }
            }
            let f = crate::dynamics::passive_forces(&model, &q, &v).unwrap() - bias_forces(&model, &q, &v).unwrap();
            let a = m.cholesky().unwrap().solve(&f);
            sim.step().unwrap();
            for k in 0..model.nv {
                assert!((sim.state.qvel[k] - (v[k] + h * a[k])).abs() < 1e-12, "dof {k}");
            }
        }
    }

    #[test]
    fn the_two_smooth_routes_agree_with_rnea_and_aba() {
        // The step's qacc and bias forces by each route (ABA alone; com-based RNE with M's
        // factor) against forward_pass's full route (RNEA, ABA) at the same state, on a
        // floating tree with ball joints, damped or not (Euler's route depends on it).
        for damping in [0.0, 0.4] {
            let mut model = canned::floating_base_ball_arms();
            for i in 1..=model.nb {
                model.joints[i].damping = damping;
            }
            let mut state = State::reference(&model);
            state.qvel = (0..model.nv).map(|k| 0.5 * (k as f64 * 0.7).cos()).collect();
            state.qfrc_applied = (0..model.nv).map(|k| 0.3 * (k as f64 * 1.9).sin()).collect();
            let mut full = Forward::new(&model);
            let s = &state;
            forward_pass(
                &model,
                &s.qpos,
                &s.qvel,
                &s.act,
                &s.ctrl,
                &s.qfrc_applied,
                &mut full,
                None,
            )
            .unwrap();
            let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-11 * (1.0 + y.abs()));
            for integ in [
                Integrator::Euler,
                Integrator::Implicit,
                Integrator::ImplicitFast,
                Integrator::Rk4,
            ] {
                let mut sim = Simulator::new(&model, state.clone(), integ).unwrap();
                let aba_alone = sim.fwd.route == Route::Aba;
                let euler_plain = integ == Integrator::Euler && damping == 0.0;
                assert_eq!(aba_alone, integ == Integrator::Rk4 || euler_plain, "{integ}");
                sim.step().unwrap();
                assert!(close(&sim.qacc, &full.qacc), "{integ} damping {damping}: qacc");
                if aba_alone {
                    assert!(sim.fwd.qfrc_bias.iter().all(|b| b.is_nan()), "{integ}");
                } else {
                    assert!(close(&sim.fwd.qfrc_bias, &full.qfrc_bias), "{integ}: bias");
                }
                // forward() computes everything whatever the route
                let mut sim = Simulator::new(&model, state.clone(), integ).unwrap();
                sim.forward().unwrap();
                assert!(close(&sim.fwd.qfrc_bias, &full.qfrc_bias), "{integ}: forward() bias");
                assert!(
                    close(&sim.fwd.qfrc_smooth, &full.qfrc_smooth),
                    "{integ}: forward() smooth"
                );
                assert!(close(&sim.qacc, &full.qacc), "{integ}: forward() qacc");
            }
        }
    }

    #[test]
    fn divergence_names_step_time_and_entry() {
        let mut model = canned::chain(2, false);
        model.opt.timestep = 1.0;
        let mut state = State::reference(&model);
        state.qvel = vec![1e5, -1e5];
        let mut sim = Simulator::new(&model, state, Integrator::Euler).unwrap();
        sim.on_divergence = OnDivergence::Error;
        let mut err = None;
        for _ in 0..1000 {
            if let Err(e) = sim.step() {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("the run must diverge");
        assert!(matches!(e, Error::Diverged { step: Some(_), .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("step") && text.contains("t = "), "{text}");
        // the state before the failing step is kept, and finite
        assert!(sim.state.qvel.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn divergence_resets_to_the_reset_state_and_counts_a_warning() {
        // The same blow-up under MuJoCo's policy: every step returns Ok, the first bad step
        // counts a warning naming the quantity and entry, and leaves the reset state (qpos0 at
        // rest, time 0); the run then goes on from there.
        let mut model = canned::chain(2, false);
        model.opt.timestep = 1.0;
        let mut state = State::reference(&model);
        state.qvel = vec![1e5, -1e5];
        let mut sim = Simulator::new(&model, state.clone(), Integrator::Euler).unwrap();
        let mut reset_at = None;
        for k in 1..=1000 {
            sim.step().unwrap();
            if sim.warnings.total() > 0 {
                reset_at = Some(k);
                break;
            }
        }
        let k = reset_at.expect("the run must diverge and reset");
        assert_eq!(sim.warnings.total(), 1);
        let w = sim.warnings.last.clone().unwrap();
        assert_eq!(w.step, k);
        let text = w.to_string();
        assert!(
            text.contains("Nan, Inf or huge value in") && text.contains("unstable"),
            "{text}"
        );
        assert_eq!(sim.steps, k);
        // reset to qpos0 at rest; a bad qacc (mj_checkAcc) then steps from there at once, a bad
        // new qpos or qvel leaves the reset state for the next step
        let mut fresh = Simulator::new(&model, State::reference(&model), Integrator::Euler).unwrap();
        if w.quantity == "qacc" {
            fresh.step().unwrap();
        }
        assert_eq!(sim.state, fresh.state, "{text}");
        fresh.step().unwrap();
        sim.step().unwrap();
        assert_eq!(sim.state.qpos, fresh.state.qpos);
        // a bad state set by the caller is caught at the start of the step (mj_checkPos), and
        // the reset state can be another one (a keyframe's, mj_resetDataKeyframe)
        let mut other = State::reference(&model);
        other.qpos = vec![0.3, 0.2];
        sim.reset_state = other.clone();
        sim.state.qpos[1] = f64::NAN;
        sim.step().unwrap();
        assert_eq!(sim.warnings.bad_qpos.number, 1);
        assert_eq!(sim.warnings.bad_qpos.lastinfo, 1);
        let mut from_other = Simulator::new(&model, other, Integrator::Euler).unwrap();
        from_other.step().unwrap();
        assert_eq!(
            sim.state.qpos, from_other.state.qpos,
            "reset, then one step from the reset state"
        );
        // with <flag autoreset="disable"> the warning is counted and the step fails
        model.opt.flags.push(("autoreset".into(), false));
        let mut sim = Simulator::new(&model, state, Integrator::Euler).unwrap();
        let failed = (0..1000).find_map(|_| sim.step().err()).expect("must fail");
        assert!(matches!(failed, Error::Diverged { .. }), "{failed}");
        assert_eq!(sim.warnings.total(), 1);
    }

    #[test]
    fn a_step_after_forward_reuses_it_and_agrees_with_a_plain_step() {
        // forward() at the state, then step(): the same state as a plain step, for each
        // integrator, on a damped, actuated model with constraints (the box stack) and without.
        for model in [
            canned::chain(3, false),
            crate::mjcf::load_str(include_str!("../../tests/fixtures/models/box_stack.xml"))
                .unwrap()
                .model,
        ] {
            for integ in [
                Integrator::Euler,
                Integrator::Implicit,
                Integrator::ImplicitFast,
                Integrator::Rk4,
            ] {
                let mut state = State::reference(&model);
                state.qvel = (0..model.nv).map(|k| 0.1 * (k as f64 + 1.0)).collect();
                let mut a = Simulator::new(&model, state.clone(), integ).unwrap();
                let mut b = Simulator::new(&model, state, integ).unwrap();
                for _ in 0..5 {
                    a.forward().unwrap();
                    a.step().unwrap();
                    b.step().unwrap();
                    assert_eq!(a.state, b.state, "{integ}");
                }
                // a changed control after forward() is not skipped over
                if !model.actuators.is_empty() {
                    a.forward().unwrap();
                    a.state.ctrl[0] = 1.0;
                    b.state.ctrl[0] = 1.0;
                    a.step().unwrap();
                    b.step().unwrap();
                    assert_eq!(a.state, b.state, "{integ}");
                }
                a.forward().unwrap();
                a.state.qfrc_applied[0] = 1.0;
                b.state.qfrc_applied[0] = 1.0;
                a.step().unwrap();
                b.step().unwrap();
                assert_eq!(a.state, b.state, "{integ}");
            }
        }
    }
}
