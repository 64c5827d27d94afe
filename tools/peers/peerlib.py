"""What the fixture scripts need from the two peer engines, MuJoCo 4.0.0 and Pinocchio 4.1.0:
seeded random states, MuJoCo's smooth quantities at a state, and Pinocchio's algorithms at the
same state with the map between the two engines' coordinates. Used by
tests/fixtures/make_peer_fixtures.py; run with the venv of tools/peers/setup.sh.

Coordinates. Both engines number joints depth-first in file order, so their dofs line up, with
two differences that the map handles: quaternions are (w, x, y, z) in MuJoCo and (x, y, z, w) in
Pinocchio, and a free joint's linear velocity is in world axes in MuJoCo and in body axes in
Pinocchio. With R the body's rotation, v_mj = T v_pin where T is blockdiag(R, 1) on a free
joint's six dofs and the identity elsewhere; accelerations pick up the derivative of R:
a_mj = T a_pin + Tdot_v with Tdot_v = R (w x v_body) on the free joint's linear part.
"""
import numpy as np
import mujoco

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3
TYPE_NAME = {FREE: "free", BALL: "ball", SLIDE: "slide", HINGE: "hinge"}


def tolist(x):
    """Nested numpy data as plain Python lists and numbers (for json)."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, dict):
        return {k: tolist(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [tolist(v) for v in x]
    return x


def random_state(m, seed):
    """A seeded state of MuJoCo model m: every joint moved at random (a limited hinge or slide
    uniformly in its range, an unlimited one by U(-1, 1) rad or U(-0.2, 0.2) m from qpos0; a free
    joint's position by N(0, 0.01) per axis; quaternions uniformly random), then qvel, a test
    acceleration qacc, ctrl and qfrc_applied, all N(0, 1) (ctrl uniform in its range if limited).
    The draws come from numpy's default generator in exactly this order."""
    rng = np.random.default_rng(seed)
    q = m.qpos0.copy()
    for j in range(m.njnt):
        adr, kind = m.jnt_qposadr[j], m.jnt_type[j]
        if kind in (HINGE, SLIDE):
            if m.jnt_limited[j]:
                q[adr] = rng.uniform(*m.jnt_range[j])
            else:
                q[adr] = m.qpos0[adr] + rng.uniform(-1.0, 1.0) * (1.0 if kind == HINGE else 0.2)
            continue
        quat = adr
        if kind == FREE:
            q[adr:adr + 3] = m.qpos0[adr:adr + 3] + 0.1 * rng.normal(size=3)
            quat = adr + 3
        u = rng.normal(size=4)
        q[quat:quat + 4] = u / np.linalg.norm(u)
    state = {"seed": seed, "qpos": q, "qvel": rng.normal(size=m.nv), "qacc": rng.normal(size=m.nv)}
    ctrl = rng.normal(size=m.nu)
    for i in range(m.nu):
        if m.actuator_ctrllimited[i]:
            ctrl[i] = rng.uniform(*m.actuator_ctrlrange[i])
    state["ctrl"] = ctrl
    state["qfrc_applied"] = rng.normal(size=m.nv)
    mujoco.mj_normalizeQuat(m, state["qpos"])
    return state


def set_state(m, d, st):
    """Resets d and loads the state st into it."""
    mujoco.mj_resetData(m, d)
    d.qpos[:] = st["qpos"]
    d.qvel[:] = st["qvel"]
    if m.nu:
        d.ctrl[:] = st["ctrl"]
    d.qfrc_applied[:] = st["qfrc_applied"]


def dense_ld(m, d):
    """MuJoCo 4.0's CSR qLD as a dense unit lower-triangular L and the diagonal D (M = L^T D L)."""
    L, D = np.eye(m.nv), np.zeros(m.nv)
    for i in range(m.nv):
        for adr in range(m.M_rowadr[i], m.M_rowadr[i] + m.M_rownnz[i]):
            j = m.M_colind[adr]
            if j == i:
                D[i] = d.qLD[adr]
            else:
                L[i, j] = d.qLD[adr]
    return L, D


def smooth(m, d, qacc):
    """MuJoCo's smooth quantities after mj_forward, plus the inverse dynamics M qacc + bias at the
    test acceleration qacc, and self-checks (each should be ~1e-15)."""
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    L, D = dense_ld(m, d)
    bias = np.zeros(m.nv)
    mujoco.mj_rne(m, d, 0, bias)
    m_qacc = np.zeros(m.nv)
    mujoco.mj_mulM(m, d, m_qacc, qacc)
    mujoco.mj_energyPos(m, d)
    mujoco.mj_energyVel(m, d)
    out = {name: np.array(getattr(d, name)) for name in
           ("xpos", "xquat", "xipos", "subtree_com", "cinert", "cdof", "cvel", "cdof_dot", "crb", "qLD",
            "qLDiagInv", "qfrc_passive", "qacc_smooth", "energy")}
    out.update(M_dense=M, qLD_L_dense=L, qLD_D=D, qfrc_bias=bias, inverse_dynamics_test=m_qacc + bias)
    out["checks"] = {
        "M = L^T D L": float(np.abs(L.T @ np.diag(D) @ L - M).max()),
        "mj_rne = qfrc_bias of mj_forward": float(np.abs(bias - d.qfrc_bias).max()),
        "M qacc_smooth = qfrc_smooth": float(np.abs(M @ d.qacc_smooth - d.qfrc_smooth).max()),
    }
    return out


def structure(m):
    """The model-level arrays the Rust tests compare with (parents and the sparse layout of M)."""
    return {"body_parentid": m.body_parentid, "dof_parentid": m.dof_parentid, "dof_Madr": m.dof_Madr,
            "M_rownnz": m.M_rownnz, "M_rowadr": m.M_rowadr, "M_colind": m.M_colind, "mapM2M": m.mapM2M}


def sizes(m):
    return {k: int(getattr(m, k)) for k in ("nq", "nv", "nbody", "njnt", "nM", "nC")}


# Pinocchio's one-joint types, by the kind of MuJoCo joint they stand for.
PIN_KIND = {"JointModelFreeFlyer": "free", "JointModelSpherical": "ball"}
for _axis in ("X", "Y", "Z"):
    PIN_KIND[f"JointModelR{_axis}"] = PIN_KIND[f"JointModelRUB{_axis}"] = "hinge"
    PIN_KIND[f"JointModelP{_axis}"] = "slide"
PIN_KIND.update({"JointModelRevoluteUnaligned": "hinge", "JointModelRevoluteUnboundedUnaligned": "hinge",
                 "JointModelPrismaticUnaligned": "slide"})


def pin_model(m, path):
    """Pinocchio's model of the MJCF file `path` (MuJoCo model m), and notes on what was changed.
    Pinocchio 4.1's MJCF parser places a root free joint at `pos - R pos` when the body has both a
    position and a rotation; MuJoCo's free-joint qpos is the absolute pose, so the placement is
    reset to the identity (this moves no dynamics in generalized coordinates)."""
    import pinocchio as pin
    pm = pin.buildModelFromMJCF(path)
    notes = []
    for jid in range(1, pm.njoints):
        if pm.joints[jid].shortname() == "JointModelFreeFlyer" and pm.parents[jid] == 0:
            placement = pm.jointPlacements[jid]
            if not np.allclose(placement.homogeneous, np.eye(4), atol=1e-12):
                notes.append(f"free joint '{pm.names[jid]}': placement translation "
                             f"{placement.translation.round(6).tolist()} reset to the identity")
                pm.jointPlacements[jid] = pin.SE3.Identity()
    pm.gravity.linear = np.array(m.opt.gravity)
    return pm, notes


def joint_map(m, pm):
    """One entry per MuJoCo joint: its qpos/dof addresses and those of the matching Pinocchio
    joint (composite joints are split into their parts), checked kind by kind."""
    parts = []
    for jid in range(1, pm.njoints):
        j = pm.joints[jid]
        subs = j.extract().joints if j.shortname() == "JointModelComposite" else [j]
        for sj in subs:
            parts.append((PIN_KIND[sj.shortname()], sj.idx_q, sj.nq, sj.idx_v))
    if len(parts) != m.njnt:
        raise SystemExit(f"joint count: MuJoCo {m.njnt}, Pinocchio {len(parts)}")
    rows = []
    for j, (kind, iq, nq, iv) in enumerate(parts):
        if TYPE_NAME[int(m.jnt_type[j])] != kind:
            raise SystemExit(f"joint {j}: MuJoCo {TYPE_NAME[int(m.jnt_type[j])]}, Pinocchio {kind}")
        rows.append({"kind": kind, "qadr": int(m.jnt_qposadr[j]), "dadr": int(m.jnt_dofadr[j]),
                     "pin_q": iq, "pin_nq": nq, "pin_v": iv})
    return rows


def to_pinocchio(m, rows, qpos, qvel):
    """(q, v) in Pinocchio's coordinates, T with v_mj = T v_pin, and Tdot_v."""
    q = np.zeros(sum(r["pin_nq"] for r in rows))
    v, T, tdot_v = np.zeros(m.nv), np.zeros((m.nv, m.nv)), np.zeros(m.nv)
    for r in rows:
        a, da, pq, pv = r["qadr"], r["dadr"], r["pin_q"], r["pin_v"]
        if r["kind"] == "free":
            rot = np.zeros(9)
            mujoco.mju_quat2Mat(rot, qpos[a + 3:a + 7])
            rot = rot.reshape(3, 3)
            w, x, y, z = qpos[a + 3:a + 7]
            q[pq:pq + 7] = [*qpos[a:a + 3], x, y, z, w]
            T[da:da + 3, pv:pv + 3] = rot
            T[da + 3:da + 6, pv + 3:pv + 6] = np.eye(3)
            v_body, omega = rot.T @ qvel[da:da + 3], qvel[da + 3:da + 6]
            v[pv:pv + 3], v[pv + 3:pv + 6] = v_body, omega
            tdot_v[da:da + 3] = rot @ np.cross(omega, v_body)
        elif r["kind"] == "ball":
            w, x, y, z = qpos[a:a + 4]
            q[pq:pq + 4] = [x, y, z, w]
            T[da:da + 3, pv:pv + 3] = np.eye(3)
            v[pv:pv + 3] = qvel[da:da + 3]
        else:
            if r["pin_nq"] == 2:  # an unbounded revolute joint keeps (cos, sin)
                q[pq:pq + 2] = [np.cos(qpos[a]), np.sin(qpos[a])]
            else:
                q[pq] = qpos[a]
            T[da, pv] = 1.0
            v[pv] = qvel[da]
    return q, v, T, tdot_v


def pinocchio_at(m, pm, rows, st, d):
    """Pinocchio's rnea (at the test acceleration), crba, nle, aba and M^-1 at state st, in
    Pinocchio's coordinates, with T and Tdot_v. d is MuJoCo's data after mj_forward at st: aba is
    given MuJoCo's applied and passive forces, tau = T^T (qfrc_passive + qfrc_actuator +
    qfrc_applied)."""
    import pinocchio as pin
    pd = pm.createData()
    q, v, T, tdot_v = to_pinocchio(m, rows, st["qpos"], st["qvel"])
    a = T.T @ (st["qacc"] - tdot_v)
    tau = T.T @ (d.qfrc_passive + d.qfrc_actuator + d.qfrc_applied)
    sym = lambda upper: np.triu(upper) + np.triu(upper, 1).T  # Pinocchio fills the upper triangle
    return {"T": T, "Tdot_v": tdot_v, "tau": tau,
            "rnea": pin.rnea(pm, pd, q, v, a).copy(),
            "crba": sym(pin.crba(pm, pd, q).copy()),
            "nle": pin.nonLinearEffects(pm, pd, q, v).copy(),
            "aba": pin.aba(pm, pd, q, v, tau).copy(),
            "Minv": sym(pin.computeMinverse(pm, pd, q).copy())}
