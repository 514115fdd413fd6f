#!/bin/bash
# zero_copy_compare.sh - per-frame cost of the copy API (rknn_inputs_set + rknn_run + rknn_outputs_get
# + rknn_outputs_release) against zero copy (rknn_create_mem + rknn_set_io_mem once, then rknn_run per
# frame), with normal attributes and with native ones, on the benchmark models (docs/benchmarks.md,
# section "Zero-copy vs copy").
#
# Usage: bench/zero_copy_compare.sh [--build DIR] [--models a,b,...] [--precisions fp16,int8]
#                                   [--repeat R] [--iters N] [--warmup N] [--min-time-ms MS]
#                                   [--out RESULTS.jsonl]
#   --build       build tree with bench/rknn_bench (default: build)
#   --models      default: the nine benchmark models
#   --precisions  default fp16,int8: WORK_DIR/bench/NAME.PRECISION.rknn, made by bench/run_bench.sh
#                 (run it once with --precision fp16 and --precision int8 first)
#   --repeat      rounds (default 3); in each round every model runs copy, zero_copy and native in
#                 turn, one fresh process each, so the modes alternate and see the same machine
#   --out         raw JSON lines of every run (default: WORK_DIR/bench/zero_copy.jsonl)
# Threads: OPENRKNN_NUM_THREADS as set by the caller (the documented table uses 1).
# The table: medians over the rounds of each run's median frame time (ms): copy, zero_copy and
# zero-copy/copy; native and native/copy; bare rknn_run (the copy runs' run_median_ms); and the copy
# calls' own cost per frame (the copy runs' io_median_ms: frame minus its rknn_run, paired).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK_DIR="${ORKNN_MODELS_DIR:-$ROOT/tests/models/work}"
BUILD="$ROOT/build"
MODELS="resnet18,mobilenet_v2,mobilenet_v3_small,squeezenet1_1,shufflenet_v2_x1_0,efficientnet_b0,ppocrv4_det,ppocrv4_rec,ppocr_cls"
PRECISIONS="fp16,int8"
REPEAT=3
ITERS=15
WARMUP=3
MIN_TIME_MS=1500
OUT=""

die() { echo "zero_copy_compare.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --precisions) PRECISIONS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --min-time-ms) MIN_TIME_MS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;/^set -e/d'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
RKNN_BENCH="$BUILD/bench/rknn_bench"
[ -x "$RKNN_BENCH" ] || die "$RKNN_BENCH not found: build it (cmake --build $BUILD --target rknn_bench)"
OUT="${OUT:-$WORK_DIR/bench/zero_copy.jsonl}"
mkdir -p "$(dirname "$OUT")"
: > "$OUT"

IFS=, read -r -a model_list <<< "$MODELS"
IFS=, read -r -a precision_list <<< "$PRECISIONS"
for m in "${model_list[@]}"; do
  for p in "${precision_list[@]}"; do
    [ -f "$WORK_DIR/bench/$m.$p.rknn" ] ||
      die "$WORK_DIR/bench/$m.$p.rknn is missing: run bench/run_bench.sh --precision $p --models $m first"
  done
done

export RKNN_LOG_LEVEL="${RKNN_LOG_LEVEL:-1}"
for ((r = 1; r <= REPEAT; ++r)); do
  for m in "${model_list[@]}"; do
    for p in "${precision_list[@]}"; do
      echo "round $r/$REPEAT: $m $p" >&2
      for mode in copy --zero-copy --native; do
        args=()
        [ "$mode" != copy ] && args=("$mode")
        "$RKNN_BENCH" "$WORK_DIR/bench/$m.$p.rknn" --label "$m.$p" --iters "$ITERS" --warmup "$WARMUP" \
          --min-time-ms "$MIN_TIME_MS" "${args[@]}" >> "$OUT"
      done
    done
  done
done

/usr/bin/python3 - "$OUT" "${OPENRKNN_NUM_THREADS:-0}" <<'EOF'
import json, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    j = json.loads(line)
    runs[(j["model"], j["mode"])].append(j)
models = []
for (label, _mode) in runs:
    if label not in models: models.append(label)
med = lambda key, label, mode: statistics.median(r[key] for r in runs[(label, mode)])
print(f"OPENRKNN_NUM_THREADS={sys.argv[2]}; medians over {len(runs[(models[0], 'copy')])} rounds of each run's median frame (ms)\n")
print("| model | precision | copy ms | zero-copy ms | zero-copy/copy | native ms | native/copy | bare rknn_run ms | copy calls ms |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for label in models:
    name, prec = label.rsplit(".", 1)
    copy, zc, nat = med("median_ms", label, "copy"), med("median_ms", label, "zero_copy"), med("median_ms", label, "native")
    bare, calls = med("run_median_ms", label, "copy"), med("io_median_ms", label, "copy")
    print(f"| {name} | {prec} | {copy:.2f} | {zc:.2f} | {zc / copy:.2f} | {nat:.2f} | {nat / copy:.2f} | {bare:.2f} | {calls:.3f} |")
EOF
