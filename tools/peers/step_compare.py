#!/usr/bin/env python3
"""Time per step of mbd's Simulator against MuJoCo 4.0.0's mj_step, per integrator, on
chain_30_spatial, panda, box_stack and the Gymnasium humanoid, interleaved in rounds on one
machine (book chapter "Integrators and the simulation loop"). From the repository root:

    /tmp/peers/bin/python tools/peers/step_compare.py [--rounds 3] [--batch 200] [--stat min]
        [--out book/src/generated/step_peers.md]

(the venv of tools/peers/setup.sh). Both engines time the same thing: batches of BATCH
consecutive steps from the same start state with zero controls, each batch starting with a zero
qacc_warmstart (MuJoCo: mujoco.rollout from the full physics state, which zeroes it; mbd: a fresh
Simulator) and warm-starting every later step's solver from the step before, and report the median batch's time per step. The start states are the ones of
benches/integrators.rs: chain_30_spatial and panda in the middle of every limited joint's range
with qvel_k = 0.3 sin(1.3 k); box_stack and humanoid at MuJoCo's settled states of
tests/fixtures/forward/*.json. Each round runs mbd's benchmark in peer mode (MBD_STEP_PEERS, see
benches/integrators.rs), then MuJoCo on every case; the ratio mbd / MuJoCo is formed within each
round and the table gives the median over rounds and the range. `--stat min` uses each
program's fastest batch instead of its median batch. The page it writes (by default
book/src/generated/step_peers.md, which the chapter includes) states the command, the date, the
machine and its load average at the start and after each round.
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import mujoco
import numpy as np
from mujoco import rollout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerlib import tolist  # noqa: E402  (the shared helpers of the peer scripts)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENES = [
    ("chain_30_spatial", "tests/fixtures/models/chain_30_spatial.xml", None),
    ("panda", "tests/fixtures/models/panda.xml", None),
    ("box_stack", "tests/fixtures/models/box_stack.xml", "tests/fixtures/forward/box_stack.json"),
    ("humanoid", "tests/fixtures/models/public/gymnasium/humanoid.xml", "tests/fixtures/forward/humanoid.json"),
]
INTEGRATORS = {"euler": mujoco.mjtIntegrator.mjINT_EULER, "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST, "rk4": mujoco.mjtIntegrator.mjINT_RK4}


def start_state(m, fixture):
    """(qpos, qvel) of benches/integrators.rs's start for this scene."""
    if fixture is not None:
        with open(os.path.join(ROOT, fixture)) as f:
            s = json.load(f)
        return np.array(s["qpos"]), np.array(s["qvel"])
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        if m.jnt_limited[j] and m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            qpos[m.jnt_qposadr[j]] = 0.5 * (m.jnt_range[j][0] + m.jnt_range[j][1])
    qvel = np.array([0.3 * math.sin(1.3 * k) for k in range(m.nv)])
    return qpos, qvel


def mujoco_times(batch, batches):
    out = []
    for name, rel, fixture in SCENES:
        for label, integ in INTEGRATORS.items():
            m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, rel))
            m.opt.integrator = integ
            d = mujoco.MjData(m)
            d.qpos[:], d.qvel[:] = start_state(m, fixture)
            spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
            x0 = np.zeros(mujoco.mj_stateSize(m, spec))
            mujoco.mj_getState(m, d, x0, spec)
            ctrl = np.zeros((1, batch, m.nu))
            state = np.zeros((1, batch, x0.size))
            sens = np.zeros((1, batch, m.nsensordata))
            x0 = x0.reshape(1, -1)
            rollout.rollout(m, d, x0, ctrl, state=state, sensordata=sens)  # warm-up
            times = []
            for _ in range(batches):
                t = time.perf_counter()
                rollout.rollout(m, d, x0, ctrl, state=state, sensordata=sens)
                times.append((time.perf_counter() - t) * 1e6 / batch)
            times.sort()
            out.append({"engine": "mujoco", "scene": name, "integrator": label,
                        "us_median": times[len(times) // 2], "us_min": times[0]})
    return out


def mbd_times(batch, batches):
    env = dict(os.environ, MBD_STEP_PEERS="1", MBD_STEP_BATCH=str(batch), MBD_STEP_BATCHES=str(batches))
    r = subprocess.run(["cargo", "bench", "--bench", "integrators"], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--batches", type=int, default=9)
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="each program's median batch (default) or fastest batch, the time least "
                         "disturbed by other work on a busy machine")
    ap.add_argument("--out", default=os.path.join(ROOT, "book", "src", "generated", "step_peers.md"),
                    help="the markdown page to write (default: the book's book/src/generated/step_peers.md)")
    ap.add_argument("--jsonl", help="append the raw timings here")
    args = ap.parse_args()
    ratios, ours, theirs = {}, {}, {}
    loads = [load_average()]
    for r in range(args.rounds):
        a = mbd_times(args.batch, args.batches)
        b = mujoco_times(args.batch, args.batches)
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                for row in a + b:
                    f.write(json.dumps(tolist(dict(row, round=r))) + "\n")
        stat = "us_" + args.stat
        mj = {(x["scene"], x["integrator"]): x[stat] for x in b}
        for x in a:
            key = (x["scene"], x["integrator"])
            ratios.setdefault(key, []).append(x[stat] / mj[key])
            ours.setdefault(key, []).append(x[stat])
            theirs.setdefault(key, []).append(mj[key])
        loads.append(load_average())
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    per_round = "median batch" if args.stat == "median" else "fastest batch"
    header = [
        f"Generated by `/tmp/peers/bin/python tools/peers/step_compare.py --rounds {args.rounds} "
        f"--batch {args.batch} --batches {args.batches} --stat {args.stat}` on {when}: {cpu}, "
        f"{os.cpu_count()} cores, {platform.system()} {platform.release()}; load average (1 min) at the "
        f"start and after each round: {', '.join(loads)}.",
        "",
        f"Time per step of mbd's `Simulator::step` and MuJoCo {mujoco.__version__}'s `mj_step`, each "
        f"program's {per_round} of {args.batch} steps per round, median over the {args.rounds} rounds; the "
        f"ratio mbd / MuJoCo (below 1: mbd is faster) formed within each round, median and in brackets the "
        f"smallest and largest round.",
        "",
    ]
    lines = [
        "| scene | integrator | mbd (us/step) | MuJoCo mj_step (us/step) | mbd / MuJoCo (range) |",
        "|---|---|---:|---:|---:|",
    ]
    for (scene, integ), rs in ratios.items():
        lines.append(f"| {scene} | {integ} | {statistics.median(ours[(scene, integ)]):.1f} | "
                     f"{statistics.median(theirs[(scene, integ)]):.1f} | {statistics.median(rs):.2f} "
                     f"({min(rs):.2f}-{max(rs):.2f}) |")
    table = "\n".join(lines)
    print(table)
    with open(args.out, "w") as f:
        f.write("\n".join(header) + "\n" + table + "\n")
    print("wrote", args.out, file=sys.stderr)


def load_average():
    return open("/proc/loadavg").read().split()[0]


if __name__ == "__main__":
    main()
