#!/bin/bash
# run.sh - the model-family matrix (docs/model_families.md): every family's ONNX model built from its
# definition with seeded random weights, converted with OpenRKNN (fp16; INT8 on a small calibration
# set where the vendor's model zoo quantizes), run with OpenRKNN's Python API over the build tree's
# librknnrt.so, compared with ONNX Runtime fp32 on the same inputs; prints the accuracy table and
# (with timings) the speed table of docs/benchmarks.md.
#
# Usage: bench/model_families/run.sh [--quick] [--only a,b,...] [--no-int8] [--no-time] [--build DIR] [--out DIR]
#   --quick    the reduced input sizes of the CTest subset (default: the deployed sizes)
#   --only     model names (tests/models/families/export_*.py --list prints them)
#   --no-int8  skip the INT8 conversions; --no-time: skip the timings
#   --build    build tree with librknnrt.so and libopenrknn_convert.so (default: build)
#   --out      work directory (default: WORK_DIR/families_full, or WORK_DIR/families_quick with
#              --quick; WORK_DIR = $ORKNN_MODELS_DIR or tests/models/work)
# Exports run in three environments: .venv (torchvision, timm, hand-written nets, PP-OCR),
# .venv-ultralytics (YOLO) and .venv-families (transformers); scripts/setup.sh makes all three.
# A model whose directory is complete is not exported again (delete it to redo). Timings: one thread
# each, ours (OPENRKNN_NUM_THREADS=1, RKNN.inference) and ONNX Runtime (intra_op_num_threads=1,
# session.run), median of at least 3 runs and 1 s; the results also go to OUT/results.jsonl.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
FAM="$ROOT/tests/models/families"
WORK_DIR="${ORKNN_MODELS_DIR:-$ROOT/tests/models/work}"
BUILD="$ROOT/build"
SIZE=full
ONLY=""
INT8=--int8
TIME=--time
OUT=""
die() { echo "run.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) SIZE=test; shift ;;
    --only) ONLY="$2"; shift 2 ;;
    --no-int8) INT8=""; shift ;;
    --no-time) TIME=""; shift ;;
    --build) BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;/^set -e/d'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ "$SIZE" = full ] && OUT="${OUT:-$WORK_DIR/families_full}" || OUT="${OUT:-$WORK_DIR/families_quick}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
for lib in librknnrt.so libopenrknn_convert.so; do
  [ -f "$BUILD/$lib" ] || die "$BUILD/$lib is missing: build first (scripts/build.sh)"
done
for py in .venv .venv-ultralytics .venv-families; do
  [ -x "$ROOT/$py/bin/python" ] || die "$ROOT/$py is missing: run scripts/setup.sh"
done

start=$(date +%s)
only=(); [ -n "$ONLY" ] && only=(--only "$ONLY")
status=0
# Each exporter skips the names that are not its own; a failed export is reported and the rest go on.
PYTHONWARNINGS=ignore "$ROOT/.venv/bin/python" "$FAM/export_torch.py" "$OUT" --size "$SIZE" "${only[@]}" || status=1
"$ROOT/.venv/bin/python" "$FAM/export_ppocr.py" "$OUT" --size "$SIZE" "${only[@]}" || status=1
PYTHONWARNINGS=ignore "$ROOT/.venv-ultralytics/bin/python" "$FAM/export_yolo.py" "$OUT" --size "$SIZE" "${only[@]}" || status=1
PYTHONWARNINGS=ignore "$ROOT/.venv-families/bin/python" "$FAM/export_transformers.py" "$OUT" --size "$SIZE" "${only[@]}" || status=1
echo "run.sh: exports took $(( $(date +%s) - start )) s"
"$ROOT/.venv/bin/python" "$FAM/reference.py" "$OUT" "${only[@]}"

echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086  # INT8 and TIME are empty or one option each
OPENRKNN_NUM_THREADS=1 OPENRKNN_LIB_DIR="$BUILD" PYTHONPATH="$ROOT/python" RKNN_LOG_LEVEL=0 \
  "$ROOT/.venv/bin/python" "$FAM/run_families.py" "$OUT" "${only[@]}" $INT8 $TIME --json "$OUT/results.jsonl" || status=1
echo "run.sh: $(( $(date +%s) - start )) s in all; results in $OUT/results.jsonl"
exit $status
