#!/bin/bash
# busy_host.sh - latency by core mask on an idle host and on a host where another process keeps one
# CPU busy (docs/benchmarks.md "Core masks and a busy host"). Threads are set as clients set them:
# rknn_set_core_mask (rknn_bench --core-mask), next to the default (no call: RKNN_NPU_CORE_AUTO)
# and OPENRKNN_NUM_THREADS equal to the CPUs this process may use.
#
# Usage: bench/busy_host.sh [--build DIR] [--models a.rknn,b.rknn] [--masks 1,3,7] [--repeat R]
#                           [--iters N] [--min-time-ms MS]
#   --models  .rknn files (default: resnet18 fp16 and resnet50 int8 made by bench/run_bench.sh)
# The busy process is a shell loop pinned to CPU 0 (taskset). Every measurement is a fresh process;
# each cell is the best median of R passes (the least disturbed one).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK_DIR="${ORKNN_MODELS_DIR:-$ROOT/tests/models/work}"
BUILD="$ROOT/build"
MODELS="$WORK_DIR/bench/resnet18.fp16.rknn,$WORK_DIR/bench/resnet50.int8.rknn"
MASKS="1,3,7"
REPEAT=3
ITERS=20
MIN_TIME_MS=1000

die() { echo "busy_host.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --masks) MASKS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --min-time-ms) MIN_TIME_MS="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;/^set -e/d'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
RKNN_BENCH="$BUILD/bench/rknn_bench"
[ -x "$RKNN_BENCH" ] || die "$RKNN_BENCH not found: build it (cmake --build $BUILD --target rknn_bench)"
command -v taskset >/dev/null || die "taskset not found (Debian util-linux)"
CPUS=$(nproc)
IFS=, read -r -a MODEL_LIST <<< "$MODELS"
IFS=, read -r -a MASK_LIST <<< "$MASKS"
for m in "${MODEL_LIST[@]}"; do [ -f "$m" ] || die "$m is missing: run bench/run_bench.sh first"; done

SPIN_PID=""
stop_spinner() {
  if [ -n "$SPIN_PID" ]; then kill "$SPIN_PID" 2>/dev/null || true; wait "$SPIN_PID" 2>/dev/null || true; fi
  SPIN_PID=""
}
trap stop_spinner EXIT

# median_ms of one fresh rknn_bench process; $1 model, $2 "mask:M" | "threads:T" | "default".
measure() {
  local model=$1 how=$2 args=() env=()
  case "$how" in
    mask:*) args=(--core-mask "${how#mask:}") ;;
    threads:*) env=(OPENRKNN_NUM_THREADS="${how#threads:}") ;;
  esac
  env "${env[@]}" "$RKNN_BENCH" "$model" --iters "$ITERS" --warmup 3 --min-time-ms "$MIN_TIME_MS" "${args[@]}" |
    tail -n 1 | sed -E 's/.*"median_ms":([0-9.]+).*/\1/'
}

CONFIGS=(default)
for k in "${MASK_LIST[@]}"; do CONFIGS+=("mask:$k"); done
CONFIGS+=("threads:$CPUS")

echo "host: $CPUS CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| model | host |'
for c in "${CONFIGS[@]}"; do
  case "$c" in
    default) printf ' default (AUTO) ms |' ;;
    mask:*) printf ' mask %s ms |' "${c#mask:}" ;;
    threads:*) printf ' OPENRKNN_NUM_THREADS=%s ms |' "${c#threads:}" ;;
  esac
done
echo
printf '|---|---|'; for _ in "${CONFIGS[@]}"; do printf -- '---|'; done; echo
for m in "${MODEL_LIST[@]}"; do
  for host in idle busy; do
    [ "$host" = busy ] && { taskset -c 0 sh -c 'while :; do :; done' & SPIN_PID=$!; sleep 0.5; }
    printf '| %s | %s |' "$(basename "$m" .rknn)" "$host"
    for c in "${CONFIGS[@]}"; do
      best=""
      for ((r = 0; r < REPEAT; ++r)); do
        v=$(measure "$m" "$c")
        if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$v; fi
      done
      printf ' %s |' "$best"
    done
    echo
    stop_spinner
  done
done
