"""What the callgrind scripts of this folder share: the peers' paths, building a MuJoCo driver
beside one of mbd's criterion benches, and reading per-function counts out of callgrind_annotate."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def paths():
    """MUJOCO_LIB, MUJOCO_INCLUDE, ... from the peers' venv (made by tools/peers/setup.sh if absent)."""
    venv = os.environ.get("PEERS_VENV", "/tmp/peers")
    env_file = os.path.join(venv, "peers_paths.env")
    if not os.path.exists(env_file):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "peers", "setup.sh")], check=True)
    out = {}
    for line in open(env_file):
        k, _, v = line.strip().partition("=")
        out[k] = v.strip('"')
    return out


def build(out_dir, driver, bench):
    """Compiles tools/callgrind/DRIVER.c against MuJoCo's library into OUT_DIR and builds mbd's
    bench BENCH; returns (driver executable, bench executable)."""
    p = paths()
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, driver)
    src = os.path.join(ROOT, "tools", "callgrind", driver + ".c")
    lib = p["MUJOCO_LIB"]
    subprocess.run(["gcc", "-O2", "-std=c11", "-Wall", "-I" + p["MUJOCO_INCLUDE"], src, "-o", exe, lib,
                    "-Wl,-rpath," + os.path.dirname(lib), "-lm"], check=True)
    got = subprocess.run(["cargo", "bench", "--no-run", "--bench", bench], cwd=ROOT, check=True,
                         capture_output=True, text=True)
    mbd = re.search(r"\((target/[^)]*" + bench + r"-[0-9a-f]+)\)", got.stderr).group(1)
    return exe, os.path.join(ROOT, mbd)


def costs(cg, inclusive):
    """Instruction count per function name of a callgrind output file: the self cost summed over
    a name's entries, or (inclusive=True) the largest inclusive cost of a name."""
    flag = "--inclusive=yes" if inclusive else "--inclusive=no"
    text = subprocess.run(["callgrind_annotate", flag, "--threshold=100", cg],
                          capture_output=True, text=True, check=True).stdout
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*)$", line)
        if not m or m.group(2).startswith("PROGRAM TOTALS") or ":" not in m.group(2):
            continue
        name = re.sub(r"\s*\[.*\]$", "", m.group(2)).split(":", 1)[1]
        n = int(m.group(1).replace(",", ""))
        out[name] = max(out.get(name, 0), n) if inclusive else out.get(name, 0) + n
    return out
