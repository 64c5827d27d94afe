#!/usr/bin/env python3
"""MuJoCo 4.0.0's state after N steps from qpos0 with a given qvel, as one JSON line
{"qpos": [...], "qvel": [...]} (the reference numbers of tests/cli.rs). From the repository root,
with the venv of tools/peers/setup.sh:

    /tmp/peers/bin/python tools/peers/rollout.py tests/fixtures/models/floating.xml \\
        --qvel 0.1,-0.2,0.3,1,-2,0.5,0.3,-0.4,0.2,0.5,0.1,-0.3,0.4,-0.6,0.7,0.2 --steps 200 --integrator RK4
"""
import argparse
import json

import mujoco
import numpy as np

INTEGRATORS = {"Euler": mujoco.mjtIntegrator.mjINT_EULER, "RK4": mujoco.mjtIntegrator.mjINT_RK4,
               "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--qvel", required=True, help="comma-separated, nv numbers")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--integrator", choices=sorted(INTEGRATORS), default="Euler")
    a = ap.parse_args()
    m = mujoco.MjModel.from_xml_path(a.model)
    m.opt.integrator = INTEGRATORS[a.integrator]
    d = mujoco.MjData(m)
    qvel = np.array([float(x) for x in a.qvel.split(",")])
    if qvel.size != m.nv:
        raise SystemExit(f"--qvel: {qvel.size} numbers for nv = {m.nv}")
    d.qvel[:] = qvel
    for _ in range(a.steps):
        mujoco.mj_step(m, d)
    print(json.dumps({"qpos": d.qpos.tolist(), "qvel": d.qvel.tolist()}))


if __name__ == "__main__":
    main()
