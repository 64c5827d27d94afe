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

    /tmp/peers/bin/python tools/peers/step_compare.py --callgrind [--only box_stack/rk4] [--batch 200]

counts instructions instead of timing, which the machine's load does not change: each case runs
once under `valgrind --tool=callgrind` on each side (mbd's benchmark binary in peer mode with one
batch, counting inside `Simulator::step`; MuJoCo's `mj_step` called from this script, counting
inside `mj_step`), and a table of instructions per step by stage is printed (nothing is written):
the step, the forward passes (every `mj_forward` of the step: four for RK4), and within them
collision (`Collider::collide_into` / `mj_collision`), the constraint rows (`make_constraint_into`
/ `mj_makeConstraint`, `mj_referenceConstraint`, `mj_island`), the solver (`solve_in`,
`solve_pgs_into` / `mj_fwdConstraint`, and `mj_projectConstraint`, where MuJoCo builds PGS's
`AR`) and the smooth rest (kinematics, `M` and its factor, bias, passive and actuator forces); the
integrator's own work is the step minus its forward passes. The default cases are the two scenes
with contacts. About half a minute per case (the Python interpreter starts under valgrind).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
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


def mj_steps(scene, integ, n):
    """Runs n mj_step from the scene's start state (what --callgrind counts on MuJoCo's side)."""
    name, rel, fixture = next(x for x in SCENES if x[0] == scene)
    m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, rel))
    m.opt.integrator = INTEGRATORS[integ]
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = start_state(m, fixture)
    for _ in range(n):
        mujoco.mj_step(m, d)


# callgrind's inclusive counts of these functions make the stages (see the module's docstring)
MBD_STAGES = {
    "forward": ["mbd::mujoco::forward::Forward::forward_with"],
    "collision": ["mbd::mujoco::collision::Collider::collide_into"],
    "rows": ["mbd::mujoco::constraint::make_constraint_with"],
    "solver": ["mbd::mujoco::solver::solve_in", "mbd::mujoco::solver::pgs::solve_pgs_into"],
}
MJ_STAGES = {
    "forward": ["mj_forwardSkip"],
    "collision": ["mj_collision"],
    "rows": ["mj_makeConstraint", "mj_referenceConstraint", "mj_island"],
    "solver": ["mj_fwdConstraint", "mj_projectConstraint"],
}


def callgrind(cmd, toggle, env=None):
    """Inclusive instruction counts by function name of `cmd` run under callgrind, counting
    inside `toggle` only; "TOTAL" is the whole count."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={toggle}",
                        f"--callgrind-out-file={out}"] + cmd, cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                              capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in text.splitlines():
        hit = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+[^: ]*:(.*?) \[", line)
        if hit:
            name = hit.group(2)
            counts[name] = counts.get(name, 0) + int(hit.group(1).replace(",", ""))
        elif "PROGRAM TOTALS" in line:
            counts["TOTAL"] = int(line.split()[0].replace(",", ""))
    return counts


def stages(counts, names, steps):
    """Instructions per step: total, forward passes, collision, rows, solver, smooth, integrator."""
    per = {k: sum(counts.get(n, 0) for n in v) / steps for k, v in names.items()}
    total = counts["TOTAL"] / steps
    smooth = per["forward"] - per["collision"] - per["rows"] - per["solver"]
    return [total, per["forward"], per["collision"], per["rows"], per["solver"], smooth,
            total - per["forward"]]


def callgrind_table(only, batch):
    built = subprocess.run(["cargo", "bench", "--bench", "integrators", "--no-run"], cwd=ROOT,
                           capture_output=True, text=True, check=True)
    exe = re.search(r"Executable .*\((.*)\)", built.stderr).group(1)
    cases = [only] if only else [f"{s}/{i}" for s in ("box_stack", "humanoid") for i in INTEGRATORS]
    cols = ["step", "forward passes", "collision", "rows", "solver", "smooth rest", "integrator"]
    print("Instructions per step (thousands), mbd / MuJoCo, "
          f"{batch} steps from the start state (`step_compare.py --callgrind`)\n")
    print("| case | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for case in cases:
        scene, integ = case.split("/")
        env = dict(os.environ, MBD_STEP_PEERS="1", MBD_STEP_ONLY=case, MBD_STEP_BATCH=str(batch),
                   MBD_STEP_BATCHES="1")
        ours = stages(callgrind([os.path.join(ROOT, exe)], "mbd::mujoco::integrator::Simulator::step", env),
                      MBD_STAGES, batch)
        theirs = stages(callgrind([sys.executable, os.path.abspath(__file__), "--mj-steps", scene, integ,
                                   str(batch)], "mj_step"), MJ_STAGES, batch)
        cells = [f"{a / 1e3:.1f} / {b / 1e3:.1f}" for a, b in zip(ours, theirs)]
        print(f"| {case} | " + " | ".join(cells) + " |", flush=True)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--mj-steps":
        mj_steps(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
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
    ap.add_argument("--callgrind", action="store_true",
                    help="count instructions per stage under valgrind instead of timing (prints a table)")
    ap.add_argument("--only", help="with --callgrind: one case, SCENE/INTEGRATOR")
    args = ap.parse_args()
    if args.callgrind:
        callgrind_table(args.only, args.batch)
        return
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
