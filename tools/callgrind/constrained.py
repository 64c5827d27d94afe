#!/usr/bin/env python3
"""Instructions per call of the constrained mj_forward, by stage, mbd's `Forward::forward_with`
beside MuJoCo 4.0's `mj_forward`, at the settled states of tests/fixtures/forward, for chosen
solvers and cones, counted by valgrind's callgrind (instruction counts do not depend on the
machine's load, unlike times). For each program: one run with N calls and one with 0 (both after
one forward that sets up), the difference of the inclusive counts over N. The chapter "The
constrained pipeline", section "Speed", quotes these tables.

    python3 tools/callgrind/constrained.py [--calls N] [--cases box_stack/pgs_elliptic,...]

Stages (inclusive counts): rows = mbd's `make_constraint_with` against MuJoCo's
`mj_makeConstraint` + `mj_referenceConstraint` + `mj_island`; solver = mbd's `solve_in` or
`solve_pgs_into` against `mj_fwdConstraint` + `mj_projectConstraint` (MuJoCo's AR, which PGS
reads); inside PGS, `make_y` + `make_ar_blocks` against `mj_projectConstraint`.

Needs valgrind, gcc, cargo and the peers' venv (tools/peers/setup.sh: MuJoCo 4.0's pip wheel,
whose libmujoco the driver tools/callgrind/mj_forward.c links). Builds into $CALLGRIND_BUILD
(default /tmp/callgrind_build)."""
import argparse
import json
import os
import subprocess
import sys

from cgtools import ROOT, build, costs
CASES = ["box_stack/newton_elliptic", "box_stack/pgs_elliptic", "box_stack_10/pgs_elliptic",
         "box_stack_10/pgs_pyramidal", "humanoid/pgs_pyramidal"]
MBD = {
    "forward": ["mbd::mujoco::forward::Forward::forward_with"],
    "rows": ["mbd::mujoco::constraint::make_constraint_with"],
    "solver": ["mbd::mujoco::solver::solve_in", "mbd::mujoco::solver::pgs::solve_pgs_into"],
    "AR": ["mbd::mujoco::solver::pgs::dual::make_y", "mbd::mujoco::solver::pgs::dual::make_ar_blocks"],
}
MJ = {
    "forward": ["mj_forward"],
    "rows": ["mj_makeConstraint", "mj_referenceConstraint", "mj_island"],
    "solver": ["mj_fwdConstraint", "mj_projectConstraint"],
    "AR": ["mj_projectConstraint"],
}


def per_call(cmd, env, n, out_dir, tag):
    files = []
    for calls in (0, n):
        cg = os.path.join(out_dir, f"{tag}_{calls}.cg")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}"] + cmd(calls),
                       env=dict(os.environ, **env(calls)), check=True, capture_output=True)
        files.append(costs(cg, inclusive=True))
    a, b = files
    return {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--cases", default=",".join(CASES), help="SCENE/SOLVER_CONE,...")
    a = ap.parse_args()
    out_dir = os.environ.get("CALLGRIND_BUILD", "/tmp/callgrind_build")
    mj, mbd = build(out_dir, "mj_forward", "constrained")
    print(f"Instructions per call (thousands), mbd / MuJoCo 4.0.0, {a.calls} calls "
          "(`tools/callgrind/constrained.py`)\n")
    print("| case | mj_forward | rows | solver | of which AR (PGS) |")
    print("|---|---:|---:|---:|---:|")
    for case in a.cases.split(","):
        label, setting = case.split("/")
        solver, cone = setting.split("_")
        fx = json.load(open(os.path.join(ROOT, "tests", "fixtures", "forward", f"{label}.json")))
        state = os.path.join(out_dir, f"state_{label}.txt")
        with open(state, "w") as fh:
            fh.write(" ".join(repr(x) for x in fx["qpos"] + fx["qvel"]) + "\n")
        model = os.path.join(ROOT, fx["model"])
        ours = per_call(lambda n: [mbd, case], lambda n: {"MBD_BENCH_CALLS": str(n)}, a.calls, out_dir,
                        f"mbd_{label}_{setting}")
        theirs = per_call(lambda n: [mj, model, state, solver, cone, str(n)], lambda n: {}, a.calls, out_dir,
                          f"mj_{label}_{setting}")
        cells = []
        for stage in ("forward", "rows", "solver", "AR"):
            x = sum(ours.get(f, 0) for f in MBD[stage])
            y = sum(theirs.get(f, 0) for f in MJ[stage])
            cells.append("-" if stage == "AR" and solver != "pgs" else f"{x / 1e3:.1f} / {y / 1e3:.1f}")
        print(f"| {case} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
