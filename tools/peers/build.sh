#!/usr/bin/env bash
# Compiles the two peer drivers of the Performance chapter into $PEERS_BUILD (default
# /tmp/peers_build), against the venv that tools/peers/setup.sh makes (run first if missing).
#
#   bash tools/peers/build.sh [--mujoco-only]
#
# --mujoco-only builds bench_mujoco alone (all that `compare.py --constrained` needs).
#
# bench_mujoco:    gcc -O2; the timed code is the wheel's prebuilt libmujoco, only the driver is
#                  compiled here.
# bench_pinocchio: g++ -O3 -DNDEBUG for the default x86-64 target, like mbd's `cargo bench`.
#                  Pinocchio's algorithms are templates and get compiled here. No -march=native:
#                  it would change Eigen's alignment rules against the wheel's prebuilt MJCF
#                  parser, whose Model this program then frees. About two minutes on 2 cores.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${PEERS_VENV:-/tmp/peers}"
OUT="${PEERS_BUILD:-/tmp/peers_build}"
[ -f "$VENV/peers_paths.env" ] || bash "$HERE/setup.sh"
# shellcheck disable=SC1091
source "$VENV/peers_paths.env"
mkdir -p "$OUT"
gcc -O2 -std=c11 -D_POSIX_C_SOURCE=199309L -Wall -I"$MUJOCO_INCLUDE" -I"$HERE" "$HERE/bench_mujoco.c" \
  -o "$OUT/bench_mujoco" "$MUJOCO_LIB" -Wl,-rpath,"$(dirname "$MUJOCO_LIB")" -lm
echo "built $OUT/bench_mujoco"
[ "${1:-}" = "--mujoco-only" ] && exit 0
if [ ! -x "$OUT/bench_pinocchio" ] || [ "$HERE/bench_pinocchio.cpp" -nt "$OUT/bench_pinocchio" ] \
  || [ "$HERE/timing.h" -nt "$OUT/bench_pinocchio" ]; then
  g++ -std=c++17 -O3 -DNDEBUG -Wno-deprecated-declarations \
    -DBOOST_MPL_LIMIT_LIST_SIZE=30 -DBOOST_MPL_LIMIT_VECTOR_SIZE=30 -DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS \
    -DBOOST_FUSION_INVOKE_MAX_ARITY=12 \
    -DPINOCCHIO_WITH_URDFDOM -DPINOCCHIO_URDFDOM_HEADERS_MAJOR_VERSION=3 \
    -DPINOCCHIO_URDFDOM_HEADERS_MINOR_VERSION=0 -DPINOCCHIO_URDFDOM_HEADERS_PATCH_VERSION=0 \
    -I"$HERE" -I"$PIN_INCLUDE" -I"$EIGEN_INCLUDE" -I"$PIN_INCLUDE/urdfdom_headers" "$HERE/bench_pinocchio.cpp" -o "$OUT/bench_pinocchio" \
    -L"$PIN_LIBDIR" -lpinocchio_parsers -lpinocchio_default -Wl,-rpath,"$PIN_LIBDIR"
fi
echo "built $OUT/bench_pinocchio"
