#!/usr/bin/env python3
"""Instructions per call of the collision stage, mbd's `Collider::collide_into` beside MuJoCo
4.0's `mj_collision`, at the settled states of tests/fixtures/forward (box_stack, box_stack_10,
humanoid), counted by valgrind's callgrind (instruction counts do not depend on the machine's
load, unlike times). For each program: one run with N calls and one with 0, the difference over
N per function (self cost), largest first. The table in the "Collision detection" chapter,
section "What a call costs", comes from this script.

    python3 tools/callgrind/collision.py [--calls N] [--top K] [--scenes a,b]

Needs valgrind, gcc, cargo and the peers' venv (tools/peers/setup.sh makes it: MuJoCo 4.0's
pip wheel, whose libmujoco the small driver tools/callgrind/mj_collision.c links). Builds into
$CALLGRIND_BUILD (default /tmp/callgrind_build)."""
import argparse
import json
import os
import subprocess
import sys

from cgtools import ROOT, build, costs
SCENES = ["box_stack", "box_stack_10", "humanoid"]


def per_call(cmd, env, n, out_dir, tag):
    files = []
    for calls in (0, n):
        cg = os.path.join(out_dir, f"{tag}_{calls}.cg")
        e = dict(os.environ, **env(calls))
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}"] + cmd(calls), env=e,
                       check=True, capture_output=True)
        files.append(costs(cg, inclusive=False))
    a, b = files
    return {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--scenes", default=",".join(SCENES))
    a = ap.parse_args()
    out_dir = os.environ.get("CALLGRIND_BUILD", "/tmp/callgrind_build")
    mj, mbd = build(out_dir, "mj_collision", "collision")
    for label in a.scenes.split(","):
        fx = json.load(open(os.path.join(ROOT, "tests", "fixtures", "forward", f"{label}.json")))
        state = os.path.join(out_dir, f"state_{label}.txt")
        with open(state, "w") as fh:
            fh.write(" ".join(repr(x) for x in fx["qpos"] + fx["qvel"]) + "\n")
        model = os.path.join(ROOT, fx["model"])
        ours = per_call(lambda n: [mbd, label], lambda n: {"MBD_BENCH_CALLS": str(n)}, a.calls, out_dir,
                        f"mbd_{label}")
        theirs = per_call(lambda n: [mj, model, state, str(n)], lambda n: {}, a.calls, out_dir, f"mj_{label}")
        print(f"## {label}: mbd {sum(ours.values()):.0f}, MuJoCo {sum(theirs.values()):.0f} instructions per call")
        for name, counts in (("mbd", ours), ("MuJoCo", theirs)):
            top = sorted(((v, k) for k, v in counts.items() if abs(v) >= 1), reverse=True)[: a.top]
            print(f"  {name}: " + ", ".join(f"{k.split('::')[-1]} {v:.0f}" for v, k in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
