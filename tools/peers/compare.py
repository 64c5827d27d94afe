#!/usr/bin/env python3
"""The speed comparison of the book's Performance chapter: mbd against Pinocchio 4.1.0 and
MuJoCo 4.0.0, interleaved in rounds on one machine. From the repository root:

    python3 tools/peers/compare.py [--stat min]

(the first run also runs tools/peers/build.sh, which runs tools/peers/setup.sh: the venv with
mujoco==4.0.0 and pin==4.1.0, and the two drivers; a few minutes).

Each round runs, model by model, mbd's benchmark in peer mode (`MBD_BENCH_PEERS`, see
benches/dynamics.rs), then bench_pinocchio, then bench_mujoco, so all three engines see the same
conditions. Every program times its functions by the same rule (tools/peers/timing.h: the median
of REPEATS batches of back-to-back calls, each batch about TARGET_MS long). For each cell the
ratio mbd / peer is formed within each round; the table gives the median of the rounds' ratios
and their range. `--stat min` uses each program's fastest batch instead of its median batch, the
time least disturbed by other work when the machine is busy. Raw JSON lines go to --jsonl; the tables to --out, which the chapter includes.

    python3 tools/peers/compare.py --constrained [--stat min]

    python3 tools/peers/compare.py --slopes [--stat min]

times the sparse factorization and solve on the largest balanced binary trees of the chapter's
scaling figure (255, 511 and 1,023 bodies: `btree_K`, the library's canned trees, and for MuJoCo
the same trees written as MJCF by tests/fixtures/models/gen_models.py) beside MuJoCo's mj_factorM
and mj_solveM, in rounds as above; each round gives each program's log-log slope over the three
sizes, and the table (book/src/generated/perf_slopes_peers.md) the median and range over the
rounds beside the slope of the operation count. (Pinocchio has no such kernels, and its MJCF
reader needs more memory than the machine has for a thousand bodies.)

--constrained compares the constrained `mj_forward` instead (benches/constrained.rs against `bench_mujoco --state
--constrained`): three scenes at MuJoCo's settled states (tests/fixtures/forward/*.json), each
solver and cone, cold start on both sides; the tables go to
book/src/generated/constrained_peers.md (the chapter "The constrained pipeline" includes them).
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
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["chain_7_spatial", "chain_30_spatial", "tree_5", "floating", "panda"]
# (row label, mbd function, peer engine, peer function)
PAIRS = [
    ("RNEA / Pinocchio `rnea`", "rnea", "pinocchio", "rnea"),
    ("CRBA / Pinocchio `crba`", "crba", "pinocchio", "crba"),
    ("ABA / Pinocchio `aba`", "aba", "pinocchio", "aba"),
    ("`factor_i` / MuJoCo `mj_factorM`", "factor_i", "mujoco", "factorM"),
    ("`solve_ld` / MuJoCo `mj_solveM`", "solve_ld", "mujoco", "solveM"),
    ("smooth pipeline / MuJoCo's", "smooth", "mujoco", "smooth"),
    ("ABA / MuJoCo `mj_forward`", "aba", "mujoco", "forward"),
]


def bench_binary(name="dynamics"):
    """Builds benches/NAME.rs (release, default target) and returns the executable's path."""
    out = subprocess.run(["cargo", "bench", "--bench", name, "--no-run", "--message-format=json"],
                         cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == name and msg.get("executable"):
            return msg["executable"]
    sys.exit(f"compare.py: cargo did not report the {name} benchmark's executable")


# The slopes comparison: (kernel, count, mbd function, MuJoCo function), on balanced binary trees of
# 2^K - 1 bodies.
SLOPE_KERNELS = [
    ("`factor_i` / `mj_factorM`", "sum d_k (d_k - 1) / 2", "factor_i", "factorM"),
    ("`solve_ld` / `mj_solveM`", "sum d_k", "solve_ld", "solveM"),
]
SLOPE_SHAPES = [("binary tree", [8, 9, 10])]


def slope_label(shape, size):
    return f"chain_{size}" if shape == "chain" else f"btree_{size}"


def depths(shape, size):
    """Depth of every dof counting itself: k on a chain, the level on a binary tree of `size` levels."""
    if shape == "chain":
        return list(range(1, size + 1))
    return [level for level in range(1, size + 1) for _ in range(2 ** (level - 1))]


def count(name, d):
    n = len(d)
    return {"n": n, "sum d_k": sum(d), "sum d_k (d_k - 1) / 2": sum(x * (x - 1) / 2 for x in d)}[name]


def loglog_slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def slopes(a):
    """`--slopes`: the scaling models in rounds, mbd and the peers, and the table of slopes."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "models"))
    import gen_models  # noqa: E402 (the repository's MJCF generators)

    if a.out is None:
        a.out = os.path.join(ROOT, "book", "src", "generated", "perf_slopes_peers.md")
    # bench_mujoco is rebuilt every time (a second of gcc) so that it knows --fns
    subprocess.run(["bash", os.path.join(ROOT, "tools", "peers", "build.sh"), "--mujoco-only"], check=True,
                   env=dict(os.environ, PEERS_BUILD=a.peers_build))
    tmp = tempfile.mkdtemp(prefix="mbd_slopes_")
    files = {}
    for shape, sizes in SLOPE_SHAPES:
        for size in sizes:
            label = slope_label(shape, size)
            _, text = gen_models.chain_xml(size, "spatial") if shape == "chain" else gen_models.tree_xml(size)
            # below level 8 the generator's floor on a body's third moment exceeds the sum of the other
            # two, which MuJoCo rejects; `balanceinertia` lowers it to that sum (the cost of a call does
            # not depend on the numbers)
            text = text.replace("  <option", '  <compiler balanceinertia="true"/>\n  <option', 1)
            files[label] = os.path.join(tmp, label + ".xml")
            with open(files[label], "w") as fh:
                fh.write(text)
    mbd = bench_binary()
    timing = ["--repeats", str(a.repeats), "--target-ms", str(a.target_ms)]
    labels = [slope_label(shape, size) for shape, sizes in SLOPE_SHAPES for size in sizes]
    rows, loads, ns = in_rounds(a, labels, lambda label: run_json(
        [mbd, label], {"MBD_BENCH_PEERS": f"{a.repeats}:{a.target_ms:g}"}) + run_json(
        [os.path.join(a.peers_build, "bench_mujoco"), files[label], "--label", label, "--fns", "factorM,solveM"]
        + timing))

    def cell(values):
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    per_round = "median batch" if a.stat == "median" else "fastest batch"
    lines = [f"Generated by `python3 tools/peers/compare.py --slopes --rounds {a.rounds} --repeats {a.repeats} "
             f"--target-ms {a.target_ms:g} --stat {a.stat}` on {when}: {cpu}, {os.cpu_count()} cores, "
             f"{platform.system()} {platform.release()}; load average (1 min) at the start and after each "
             f"round: {', '.join(loads)}.", "",
             f"Slopes of log time against log n over 255, 511 and 1,023 bodies, from each program's {per_round} "
             f"per size: median over the {a.rounds} rounds, in brackets the smallest and largest round.", "",
             "| kernel | tree | count C | slope of C | mbd | MuJoCo |",
             "|---|---|---|---|---|---|"]
    for title, cname, fn, pfn in SLOPE_KERNELS:
        for shape, sizes in SLOPE_SHAPES:
            labels = [slope_label(shape, s) for s in sizes]
            ns_ = [len(depths(shape, s)) for s in sizes]
            c_slope = loglog_slope(ns_, [count(cname, depths(shape, s)) for s in sizes])
            mine = [loglog_slope(ns_, [ns("mbd", l, fn, r) for l in labels]) for r in range(a.rounds)]
            peer = [loglog_slope(ns_, [ns("mujoco", l, pfn, r) for l in labels]) for r in range(a.rounds)]
            lines.append(f"| {title} | {shape} | {cname} | {c_slope:.2f} | {cell(mine)} | {cell(peer)} |")
    lines += ["", f"Time per call at each size ({per_round}, median over the rounds), in microseconds:", "",
              "| kernel | engine | " + " | ".join(f"`{slope_label(sh, s)}`" for sh, ss in SLOPE_SHAPES for s in ss)
              + " |", "|---|---" + "|---" * sum(len(ss) for _, ss in SLOPE_SHAPES) + "|"]
    for title, _, fn, pfn in SLOPE_KERNELS:
        for eng, f in (("mbd", fn), ("mujoco", pfn)):
            cells = [f"{statistics.median(ns(eng, slope_label(sh, s), f, r) for r in range(a.rounds)) / 1e3:.2f}"
                     for sh, ss in SLOPE_SHAPES for s in ss]
            lines.append(f"| {title} | {eng} `{f}` | " + " | ".join(cells) + " |")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {a.out}", file=sys.stderr)


# The constrained comparison: scenes (fixtures in tests/fixtures/forward) and settings.
SCENES = ["box_stack", "box_stack_10", "humanoid"]
SETTINGS = [f"{s}_{c}" for s in ("newton", "cg", "pgs") for c in ("pyramidal", "elliptic")]


def constrained(a):
    """The --constrained comparison: interleaved rounds of mbd's and MuJoCo's mj_forward."""
    exe = os.path.join(a.peers_build, "bench_mujoco")
    if not os.access(exe, os.X_OK):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "peers", "build.sh"), "--mujoco-only"], check=True,
                       env=dict(os.environ, PEERS_BUILD=a.peers_build))
    mbd = bench_binary("constrained")
    states = {}
    for label in SCENES:
        fx = json.load(open(os.path.join(ROOT, "tests", "fixtures", "forward", f"{label}.json")))
        path = os.path.join(a.peers_build, f"state_{label}.txt")
        with open(path, "w") as fh:
            fh.write(" ".join(repr(x) for x in fx["qpos"] + fx["qvel"]) + "\n")
        states[label] = (fx["model"], path)
    timing = ["--repeats", str(a.repeats), "--target-ms", str(a.target_ms)]
    rows, loads, ns = in_rounds(a, SCENES, lambda label: run_json(
        [mbd, label], {"MBD_BENCH_PEERS": f"{a.repeats}:{a.target_ms:g}"}) + run_json(
        [exe, states[label][0], "--label", label, "--state", states[label][1], "--constrained"] + timing))

    def niter(engine, label, setting):
        return next(g["niter"][setting] for g in rows if g["engine"] == engine and g["label"] == label)

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    per_round = "median batch" if a.stat == "median" else "fastest batch"
    lines = [f"Generated by `python3 tools/peers/compare.py --constrained --rounds {a.rounds} --repeats {a.repeats} "
             f"--target-ms {a.target_ms:g} --stat {a.stat}` on {when}: {cpu}, {os.cpu_count()} cores, "
             f"{platform.system()} {platform.release()}; load average (1 min) at the start and after each round: "
             f"{', '.join(loads)}.", "",
             f"Ratio of mbd's `mj_forward` time to MuJoCo 4.0.0's (below 1: mbd is faster), each program's "
             f"{per_round} per round: median over the {a.rounds} rounds, and in brackets the smallest and largest "
             f"round; then the solver iterations of each (mbd / MuJoCo).", "",
             "| solver, cone | " + " | ".join(f"`{m}`" for m in SCENES) + " |",
             "|---" * (len(SCENES) + 1) + "|"]
    for setting in SETTINGS:
        cells = []
        for label in SCENES:
            ratios = [ns("mbd", label, f"forward_{setting}", r) / ns("mujoco", label, f"forward_{setting}", r)
                      for r in range(a.rounds)]
            cells.append(f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}), "
                         f"{niter('mbd', label, setting)} / {niter('mujoco', label, setting)} it.")
        lines.append(f"| {setting.replace('_', ', ')} | " + " | ".join(cells) + " |")
    lines += ["", f"Median over the rounds of each program's {per_round} time per call, in microseconds:", "",
              "| engine | solver, cone | " + " | ".join(f"`{m}`" for m in SCENES) + " |",
              "|---|---" + "|---" * len(SCENES) + "|"]
    for setting in SETTINGS:
        for eng in ("mbd", "mujoco"):
            cells = [f"{statistics.median(ns(eng, m, f'forward_{setting}', r) for r in range(a.rounds)) / 1e3:.1f}"
                     for m in SCENES]
            lines.append(f"| {eng} | {setting.replace('_', ', ')} | " + " | ".join(cells) + " |")
    out = a.out if a.out_given else os.path.join(ROOT, "book", "src", "generated", "constrained_peers.md")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {out}", file=sys.stderr)


def load():
    return open("/proc/loadavg").read().split()[0]


def run_json(cmd, env=None):
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, **(env or {}))).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def in_rounds(a, labels, run_one):
    """Runs `run_one(label)` (a list of JSON lines) for every label, round after round, tags each
    line with its round and writes them all to a.jsonl. Returns the lines, the load averages (at
    the start and after each round) and `ns(engine, label, fn, round)`, the time per call of the
    chosen statistic (--stat) in one round."""
    rows, loads = [], [load()]
    for r in range(a.rounds):
        for label in labels:
            print(f"[round {r + 1}/{a.rounds}] {label} (load {load()})", file=sys.stderr)
            for g in run_one(label):
                g["round"] = r
                rows.append(g)
        loads.append(load())
    with open(a.jsonl, "w") as fh:
        for g in rows:
            fh.write(json.dumps(g) + "\n")

    def ns(engine, label, fn, r):
        for g in rows:
            if g["engine"] == engine and g["label"] == label and g["round"] == r:
                return g["fn"][fn][f"{a.stat}_ns"]
        raise KeyError((engine, label, fn, r))

    return rows, loads, ns


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--target-ms", type=float, default=20.0)
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="per program and round: the median batch (default) or the fastest")
    ap.add_argument("--peers-build", default=os.environ.get("PEERS_BUILD", "/tmp/peers_build"))
    ap.add_argument("--jsonl", default="/tmp/mbd_compare.jsonl")
    ap.add_argument("--out", default=None)
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of the models (for a quick look; the chapter's table uses all)")
    ap.add_argument("--constrained", action="store_true",
                    help="compare the constrained mj_forward (benches/constrained.rs) instead")
    ap.add_argument("--slopes", action="store_true",
                    help="the slopes of the tree kernels on chains and binary trees of 255 to 1,023 bodies")
    a = ap.parse_args()
    a.out_given = a.out is not None
    models = a.models.split(",")
    if a.constrained:
        return constrained(a)
    if a.slopes:
        return slopes(a)
    if a.out is None:
        a.out = os.path.join(ROOT, "book", "src", "generated", "performance_peers.md")
    if not all(os.access(os.path.join(a.peers_build, exe), os.X_OK) for exe in ("bench_pinocchio", "bench_mujoco")):
        # the drivers are missing: make the venv (if needed) and build them
        subprocess.run(["bash", os.path.join(ROOT, "tools", "peers", "build.sh")], check=True,
                       env=dict(os.environ, PEERS_BUILD=a.peers_build))
    mbd = bench_binary()
    timing = ["--repeats", str(a.repeats), "--target-ms", str(a.target_ms)]

    def run_one(label):
        path = os.path.join("tests", "fixtures", "models", f"{label}.xml")
        return (run_json([mbd, label], {"MBD_BENCH_PEERS": f"{a.repeats}:{a.target_ms:g}"})
                + run_json([os.path.join(a.peers_build, "bench_pinocchio"), path, "--label", label] + timing)
                + run_json([os.path.join(a.peers_build, "bench_mujoco"), path, "--label", label] + timing))

    rows, loads, median_ns = in_rounds(a, models, run_one)

    lines = []
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines.append(f"Generated by `python3 tools/peers/compare.py --rounds {a.rounds} --repeats {a.repeats} "
                 f"--target-ms {a.target_ms:g} --stat {a.stat}` on {when}: {cpu}, {os.cpu_count()} cores, "
                 f"{platform.system()} {platform.release()}; load average (1 min) at the start and after each "
                 f"round: {', '.join(loads)}.")
    lines.append("")
    per_round = "median batch" if a.stat == "median" else "fastest batch"
    lines.append(f"Ratio of mbd's time to the peer's (below 1: mbd is faster), each program's {per_round} "
                 f"per round: median over the {a.rounds} rounds, and in brackets the smallest and largest round.")
    lines.append("")
    lines.append("| | " + " | ".join(f"`{m}`" for m in models) + " |")
    lines.append("|---" * (len(models) + 1) + "|")
    worst = 0.0
    for title, fn, engine, pfn in PAIRS:
        cells = []
        for m in models:
            ratios = [median_ns("mbd", m, fn, r) / median_ns(engine, m, pfn, r) for r in range(a.rounds)]
            med = statistics.median(ratios)
            worst = max(worst, med)
            cells.append(f"{med:.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Median over the rounds of each program's {per_round} time per call, in nanoseconds:")
    lines.append("")
    lines.append("| engine | function | " + " | ".join(f"`{m}`" for m in models) + " |")
    lines.append("|---|---" + "|---" * len(models) + "|")
    seen = []
    for _, fn, engine, pfn in PAIRS:
        for eng, f in (("mbd", fn), (engine, pfn)):
            if (eng, f) in seen:
                continue
            seen.append((eng, f))
            cells = [f"{statistics.median(median_ns(eng, m, f, r) for r in range(a.rounds)):.0f}" for m in models]
            lines.append(f"| {eng} | `{f}` | " + " | ".join(cells) + " |")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {a.out}; worst median ratio {worst:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
