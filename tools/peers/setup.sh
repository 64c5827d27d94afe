#!/usr/bin/env bash
# Installs the two peer engines that the fixtures and the benchmarks compare against, from PyPI,
# into a Python venv (default /tmp/peers; override with PEERS_VENV). Run from anywhere:
#
#   bash tools/peers/setup.sh
#
# Safe to run again: a package already present at the pinned version is not reinstalled.
#
#   mujoco 4.0.0   Python bindings, and the C headers and libmujoco.so that bench_mujoco.c links
#   pin 4.1.0      Pinocchio's Python bindings, and the C++ headers and libraries it ships
#   cmeel-eigen, cmeel-urdfdom-headers (headers only, --no-deps): what compiling against
#                  Pinocchio's C++ headers needs beyond the pin wheel
#
# At the end it writes $PEERS_VENV/peers_paths.env with the include and library directories that
# tools/peers/build.sh reads.
set -euo pipefail
VENV="${PEERS_VENV:-/tmp/peers}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PY="$VENV/bin/python"

pinned() { # pinned NAME VERSION: is NAME installed at exactly VERSION?
  "$PY" -c 'import sys, importlib.metadata as m
try: sys.exit(m.version(sys.argv[1]) != sys.argv[2])
except m.PackageNotFoundError: sys.exit(1)' "$1" "$2"
}

want=()
pinned mujoco 4.0.0 || want+=(mujoco==4.0.0)
pinned pin 4.1.0 || want+=(pin==4.1.0)
[ ${#want[@]} -eq 0 ] || "$PY" -m pip install --quiet "${want[@]}"
headers=()
pinned cmeel-eigen 3.4.1 || headers+=(cmeel-eigen==3.4.1)
pinned cmeel-urdfdom-headers 3.0.0 || headers+=(cmeel-urdfdom-headers==3.0.0)
[ ${#headers[@]} -eq 0 ] || "$PY" -m pip install --quiet --no-deps "${headers[@]}"

"$PY" - "$VENV" <<'PYEOF'
import os, sys, sysconfig
import mujoco, pinocchio
site = sysconfig.get_paths()["purelib"]
mj = os.path.dirname(mujoco.__file__)
cmeel = os.path.join(site, "cmeel.prefix")
env = {
    "MUJOCO_INCLUDE": os.path.join(mj, "include"),
    "MUJOCO_LIB": os.path.join(mj, f"libmujoco.so.{mujoco.__version__}"),
    "PIN_INCLUDE": os.path.join(cmeel, "include"),
    "EIGEN_INCLUDE": os.path.join(cmeel, "include", "eigen3"),
    "PIN_LIBDIR": os.path.join(cmeel, "lib"),
}
missing = [k for k, v in env.items() if not os.path.exists(v)]
if missing:
    sys.exit(f"setup.sh: not found after install: {missing}")
with open(os.path.join(sys.argv[1], "peers_paths.env"), "w") as f:
    for k, v in env.items():
        f.write(f'{k}="{v}"\n')
print(f"mujoco {mujoco.__version__}, pinocchio {pinocchio.__version__} in {sys.argv[1]}")
PYEOF
