#!/usr/bin/env python3
"""Instructions per call of mbd's sparse kernels and of MuJoCo's, counted by valgrind's callgrind
(instruction counts do not depend on the machine's load; timings do). From the repository root:

    python3 tools/peers/icount.py [--algos factor_i,solve_ld] [--models chain_30_spatial,floating]

mbd's side: benches/dynamics.rs in its fixed-count mode (`MBD_BENCH_LOOP=algo/model:N`) run for
N and 2N calls; instructions per call = (Ir(2N) - Ir(N)) / N, so loading the model and drawing
the state cancel out. MuJoCo's side: tools/peers/bench_mujoco (built by tools/peers/build.sh)
under callgrind; the per-call cost is the inclusive cost of the MuJoCo function over all its
calls divided by their number, read from callgrind's call records. Both sides count the copy
that starts the call (qM into qLD, the right-hand side into x).

Prints one line per cell: mbd's instructions, MuJoCo's, and their ratio.

    python3 tools/peers/icount.py --slopes

counts instead mbd's RNEA, ABA, CRBA and factor_i on the Performance chapter's chains and
balanced binary trees of 255, 511 and 1,023 bodies (`chain_N`, `btree_K` in the fixed-count
mode) and prints the log-log slope of instructions per call against the number of bodies beside
the slope of the operation count the theory predicts (n; sum of d_k; the multiply-adds
sum of d_k (d_k - 1) / 2, d_k the depth of dof k counting itself): the load-free half of the
chapter's slope table, written to book/src/generated/perf_icount_slopes.md (--out), which the
chapter includes. For factor_i it counts the kernel's own instructions (callgrind's
inclusive count of factor_rows_avx), without the copy of qM that starts the benchmark's call:
valgrind counts that copy one instruction per byte, which would weigh it like the updates.
"""
import argparse
import datetime
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import MODELS, ROOT, bench_binary  # noqa: E402

# mbd function -> MuJoCo function of the same job
PEER = {"factor_i": "mj_factorM", "solve_ld": "mj_solveM", "smooth": None, "rnea": None, "crba": None, "aba": None}


def callgrind(cmd, env=None):
    """Runs cmd under callgrind; returns the path of its output file."""
    fd, out = tempfile.mkstemp(suffix=".cg")
    os.close(fd)
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd, check=True,
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def total_ir(path):
    for line in open(path):
        if line.startswith("totals:") or line.startswith("summary:"):
            return int(line.split()[1])
    sys.exit(f"icount.py: no total in {path}")


def per_call(path, name):
    """Inclusive instructions per call of function `name` (a full path, or the last part of one)
    over all its call sites."""
    ids, calls, ir = {}, 0, 0
    callee, pending = None, None
    for line in open(path):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            if m.group(3):
                ids[m.group(2)] = m.group(3)
            if m.group(1) == "cfn":
                callee = ids.get(m.group(2))
            continue
        if line.startswith("calls="):
            pending = int(line.split()[0][len("calls="):])
            continue
        if pending is not None:
            if callee is not None and (callee == name or callee.endswith("::" + name)):
                calls += pending
                ir += int(line.split()[1])
            pending = None
    return ir / calls if calls else float("nan")


def mbd_count(exe, algo, model, n):
    irs = []
    for k in (n, 2 * n):
        env = dict(os.environ, MBD_BENCH_LOOP=f"{algo}/{model}:{k}")
        path = callgrind([exe], env)
        irs.append(total_ir(path))
        os.remove(path)
    return (irs[1] - irs[0]) / n


def mujoco_count(driver, model, fn):
    xml = os.path.join(ROOT, "tests", "fixtures", "models", f"{model}.xml")
    path = callgrind([driver, xml, "--repeats", "1", "--target-ms", "100"])
    got = per_call(path, fn)
    os.remove(path)
    return got


def depth_sums(kind, n):
    """(sum d_k, sum d_k (d_k - 1) / 2) of a chain of n bodies or a balanced binary tree of
    n = 2^K - 1: the entries of H's pattern (CRBA) and the factorization's multiply-adds (the
    sum over its row updates of their lengths)."""
    if kind == "chain":
        d = list(range(1, n + 1))
    else:
        d = [k + 1 for k in range(n.bit_length()) for _ in range(1 << k)][:n]
    return sum(d), sum(x * (x - 1) // 2 for x in d)


def slope(xs, ys):
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def per_body_and_per_op(ns, counts, irs):
    """Least-squares (a, b) of irs ~ a n + b C over the sizes (b = 0 where C is n itself), in
    relative terms, so that each size weighs alike."""
    if counts == ns:
        return sum(ir / n for n, ir in zip(ns, irs)) / len(ns), 0.0
    # minimise sum ((a n + b c) / ir - 1)^2: the 2 x 2 normal equations
    rows = [(n / ir, c / ir) for n, c, ir in zip(ns, counts, irs)]
    s11 = sum(x * x for x, _ in rows)
    s12 = sum(x * y for x, y in rows)
    s22 = sum(y * y for _, y in rows)
    r1, r2 = sum(x for x, _ in rows), sum(y for _, y in rows)
    det = s11 * s22 - s12 * s12
    return (r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det


def kernel_count(exe, algo, model, n, fn):
    """Inclusive instructions per call of mbd's function `fn` (every call of it, the set-up's
    included: they all do the same work)."""
    path = callgrind([exe], dict(os.environ, MBD_BENCH_LOOP=f"{algo}/{model}:{n}"))
    got = per_call(path, fn)
    os.remove(path)
    return got


# the kernel whose own instructions the slopes count, where the benchmark's call does more: the
# factorization's call starts with the copy of qM into qLD (nM numbers, slope of sum d_k), which
# callgrind counts as one instruction per byte copied (`rep movsb`)
KERNEL = {"factor_i": "factor_rows_avx"}


def slopes(exe, algos, out):
    sizes = [255, 511, 1023]
    rows = []
    for kind in ("chain", "btree"):
        for algo in algos:
            counts, irs = [], []
            for n in sizes:
                label = f"chain_{n}" if kind == "chain" else f"btree_{n.bit_length()}"
                s1, s2 = depth_sums(kind, n)
                counts.append({"rnea": n, "aba": n, "crba": s1, "factor_i": s2, "solve_ld": s1}[algo])
                calls = 1 if kind == "chain" and algo in ("crba", "factor_i") else 20
                if algo in KERNEL:
                    irs.append(kernel_count(exe, algo, label, calls, KERNEL[algo]))
                else:
                    irs.append(mbd_count(exe, algo, label, calls))
            per = "  ".join(f"{n}: {ir:.0f}" for n, ir in zip(sizes, irs))
            print(f"{algo:9} {kind:6} slope of instructions {slope(sizes, irs):.3f}, of the count "
                  f"{slope(sizes, counts):.3f}   ({per})")
            sys.stdout.flush()
            name = {"rnea": "RNEA", "aba": "ABA", "crba": "CRBA", "factor_i": "`factor_i`"}.get(algo, algo)
            count = {"rnea": "n", "aba": "n", "crba": "sum d_k", "factor_i": "sum d_k (d_k - 1) / 2",
                     "solve_ld": "sum d_k"}[algo]
            a, b = per_body_and_per_op(sizes, counts, irs)
            rows.append(f"| {name} | {'chain' if kind == 'chain' else 'binary tree'} | {count} | "
                        f"{slope(sizes, counts):.2f} | {slope(sizes, irs):.2f} | "
                        f"{slope(sizes, irs) - slope(sizes, counts):+.2f} | "
                        + " | ".join(f"{ir:,.0f}" for ir in irs)
                        + f" | {a:,.0f} | " + ("-" if counts == sizes else f"{b:,.1f}") + " |")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"Generated by `python3 tools/peers/icount.py --slopes` on {when} (valgrind's callgrind; instruction "
             "counts do not depend on the machine's load).", "",
             "| kernel | tree | count C | slope of C | slope of instructions | difference | "
             "instructions at 255 | at 511 | at 1,023 | per body, a | per counted operation, b |",
             "|---|---|---|---|---|---|---|---|---|---|---|"] + rows + [
             "", "The last two columns fit the three counts by least squares with `a n + b C` (with `a n` "
             "alone where C is n): the instructions a kernel spends per body whatever the tree, and per "
             "operation the count counts."]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {out}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--algos", default="factor_i,solve_ld")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--bench", default="dynamics", help="dynamics, or sparse (which also has box_stack_10)")
    ap.add_argument("--calls", type=int, default=1000, help="N of the fixed-count runs")
    ap.add_argument("--peers-build", default=os.environ.get("PEERS_BUILD", "/tmp/peers_build"))
    ap.add_argument("--slopes", action="store_true", help="instruction-count slopes on chains and binary trees")
    ap.add_argument("--out", default=os.path.join(ROOT, "book", "src", "generated", "perf_icount_slopes.md"),
                    help="where --slopes writes its table (the Performance chapter includes it)")
    a = ap.parse_args()
    exe = bench_binary(a.bench)
    if a.slopes:
        return slopes(exe, a.algos.split(",") if a.algos != "factor_i,solve_ld" else ["rnea", "aba", "crba", "factor_i"],
                      a.out)
    driver = os.path.join(a.peers_build, "bench_mujoco")
    for model in a.models.split(","):
        for algo in a.algos.split(","):
            ours = mbd_count(exe, algo, model, a.calls)
            fn = PEER.get(algo)
            if fn and os.access(driver, os.X_OK):
                theirs = mujoco_count(driver, model, fn)
                print(f"{algo:9} {model:17} mbd {ours:9.0f}  {fn} {theirs:9.0f}  ratio {ours / theirs:.3f}")
            else:
                print(f"{algo:9} {model:17} mbd {ours:9.0f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
