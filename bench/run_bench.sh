#!/bin/bash
# run_bench.sh - OpenRKNN and ONNX Runtime side by side on the test models: median latency, load time
# and peak memory at 1 and 2 threads, as a markdown table (see docs/benchmarks.md).
#
# Usage: bench/run_bench.sh [--build DIR] [--models a,b,...] [--threads 1,2] [--repeat R]
#                           [--iters N] [--warmup N] [--min-time-ms MS] [--precision fp16|fp32]
#                           [--out RESULTS.jsonl]
#   --build      build tree with rknn_convert and bench/rknn_bench (default: build)
#   --models     default: the nine test models (docs/benchmarks.md)
#   --repeat     passes over all configurations; the table keeps each one's least disturbed pass
#   --precision  fp16 (default, the runtime's float default), fp32, or int8: our models quantized on
#                the calibration sets (WORK_DIR/calib), compared with ONNX Runtime on an INT8 QDQ
#                model (its fused INT8 kernels): NAME_qdq.onnx where the preparation made one, else
#                our own calibration exported with rknn_convert --export-qdq (opset 13 and newer
#                models), else the float model
#   --out        raw JSON lines (default: WORK_DIR/bench/results.jsonl)
# Models come from scripts/prepare_test_models.sh (WORK_DIR = $ORKNN_MODELS_DIR or tests/models/work);
# they are converted to WORK_DIR/bench/NAME.PRECISION.rknn when missing or older than the ONNX file or
# the converter. Every measurement is a fresh process (bench/ort_bench.py in .venv / rknn_bench), one at
# a time, the two runtimes alternating, so both see the same machine. Threads T: ONNX Runtime
# intra_op_num_threads T; our runtime as clients set it, rknn_set_core_mask with T NPU cores
# (1: RKNN_NPU_CORE_0, 2: RKNN_NPU_CORE_0_1, 3: RKNN_NPU_CORE_0_1_2; more: RKNN_NPU_CORE_ALL, every
# CPU), which on the rk3588 models gives a run min(T, CPUs) threads, or one below 200 M MACs
# (docs/decisions.md "Threads"); the table's CPU/wall columns show what each run really used.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK_DIR="${ORKNN_MODELS_DIR:-$ROOT/tests/models/work}"
BUILD="$ROOT/build"
MODELS="resnet18,resnet50,mobilenet_v2,mobilenet_v3_small,squeezenet1_1,shufflenet_v2_x1_0,efficientnet_b0,ppocrv4_det,ppocrv4_rec,ppocr_cls"
THREADS="1,2"
REPEAT=1
ITERS=30
WARMUP=5
MIN_TIME_MS=2000
PRECISION=fp16
OUT=""

die() { echo "run_bench.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --min-time-ms) MIN_TIME_MS="$2"; shift 2 ;;
    --precision) PRECISION="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;/^set -e/d'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case "$PRECISION" in fp16|fp32|int8) ;; *) die "--precision must be fp16, fp32 or int8" ;; esac

# Input shape of each model (graph input name = dims): the PP-OCR models have dynamic dims, pinned here
# for both runtimes alike.
input_shape() {
  case "$1" in
    ppocrv4_det) echo "x=1x3x480x480" ;;
    ppocrv4_rec) echo "x=1x3x48x320" ;;
    ppocr_cls) echo "x=1x3x48x192" ;;
    *) echo "input=1x3x224x224" ;;
  esac
}

# INT8 conversion options of each model: calibration list (prepare_test_models.sh), the runtime's
# UINT8 normalisation of the images in it, and the calibration algorithm the model tests use.
int8_options() {
  case "$1" in
    ppocrv4_det) echo "--dataset $WORK_DIR/calib/ppocrv4_det.txt --algorithm mmse --mean 123.675,116.28,103.53 --std 58.395,57.12,57.375" ;;
    ppocrv4_rec|ppocr_cls) echo "--dataset $WORK_DIR/calib/ppocrv4_rec.txt --algorithm mmse --mean 127.5,127.5,127.5 --std 127.5,127.5,127.5" ;;
    *) echo "--dataset $WORK_DIR/calib/torchvision.txt" ;;
  esac
}
# The ONNX model ONNX Runtime runs: in int8 mode a QDQ INT8 version when there is one (the
# preparation's, else our export), else the float model.
ort_model() {
  if [ "$PRECISION" = int8 ] && [ -f "$WORK_DIR/${1}_qdq.onnx" ]; then echo "$WORK_DIR/${1}_qdq.onnx"
  elif [ "$PRECISION" = int8 ] && [ -f "$WORK_DIR/bench/$1.int8.export_qdq.onnx" ]; then
    echo "$WORK_DIR/bench/$1.int8.export_qdq.onnx"
  else echo "$WORK_DIR/$1.onnx"; fi
}

CONVERT="$BUILD/rknn_convert"
RKNN_BENCH="$BUILD/bench/rknn_bench"
[ -x "$CONVERT" ] || die "$CONVERT not found: build it (cmake --build $BUILD --target rknn_convert)"
[ -x "$RKNN_BENCH" ] || die "$RKNN_BENCH not found: build it (cmake --build $BUILD --target rknn_bench)"
PY="$ROOT/.venv/bin/python"
ORT_VERSION="$("$PY" -c 'import onnxruntime; print(onnxruntime.__version__)' 2>/dev/null)" ||
  die "onnxruntime is missing from .venv: run scripts/setup.sh"
mkdir -p "$WORK_DIR/bench"
OUT="${OUT:-$WORK_DIR/bench/results.jsonl}"
: > "$OUT"

# ---- convert ----------------------------------------------------------------------------------------
IFS=, read -r -a MODEL_LIST <<< "$MODELS"
IFS=, read -r -a THREAD_LIST <<< "$THREADS"
# Our calibration as QDQ ONNX too (int8), for ONNX Runtime where the preparation made no QDQ model;
# the export needs opset 13 (per-channel DequantizeLinear), so older models convert without it.
wants_export() {  # MODEL
  [ "$PRECISION" = int8 ] && [ ! -f "$WORK_DIR/${1}_qdq.onnx" ] && "$PY" -c 'import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
sys.exit(0 if any(o.domain in ("", "ai.onnx") and o.version >= 13 for o in m.opset_import) else 1)' "$WORK_DIR/$1.onnx"
}
for m in "${MODEL_LIST[@]}"; do
  onnx="$WORK_DIR/$m.onnx"
  rknn="$WORK_DIR/bench/$m.$PRECISION.rknn"
  qdq="$WORK_DIR/bench/$m.int8.export_qdq.onnx"
  [ -f "$onnx" ] || die "$onnx is missing: run scripts/prepare_test_models.sh"
  export_qdq=()
  if wants_export "$m"; then export_qdq=(--export-qdq "$qdq"); fi
  if [ ! -f "$rknn" ] || [ "$onnx" -nt "$rknn" ] || [ "$CONVERT" -nt "$rknn" ] ||
     { [ ${#export_qdq[@]} -gt 0 ] && [ ! -f "$qdq" ]; }; then
    shape="$(input_shape "$m")"
    echo "converting $m ($PRECISION)" >&2
    dims="${shape#*=}"
    rm -f "$qdq"
    if [ "$PRECISION" = int8 ]; then
      # shellcheck disable=SC2046  # the options are words
      "$CONVERT" "$onnx" -o "$rknn.tmp" -t rk3588 --input-shape "${shape%%=*}=${dims//x/,}" --quantize $(int8_options "$m") \
        "${export_qdq[@]}" -q >&2 || die "rknn_convert --quantize failed on $onnx"
    else
      "$CONVERT" "$onnx" -o "$rknn.tmp" -t rk3588 --input-shape "${shape%%=*}=${dims//x/,}" --float-precision "$PRECISION" -q >&2 ||
        die "rknn_convert failed on $onnx"
    fi
    mv "$rknn.tmp" "$rknn"
  fi
done

# ---- measure ----------------------------------------------------------------------------------------
run_ort() {  # MODEL THREADS
  "$PY" "$ROOT/bench/ort_bench.py" "$(ort_model "$1")" --shape "$(input_shape "$1")" --threads "$2" \
    --iters "$ITERS" --warmup "$WARMUP" --min-time-ms "$MIN_TIME_MS" --label "$1"
}
core_mask() {  # THREADS -> the rknn_core_mask value with that many NPU cores
  case "$1" in 1) echo 1 ;; 2) echo 3 ;; 3) echo 7 ;; *) echo 65535 ;; esac
}
run_ours() {  # MODEL THREADS
  "$RKNN_BENCH" "$WORK_DIR/bench/$1.$PRECISION.rknn" --core-mask "$(core_mask "$2")" \
    --iters "$ITERS" --warmup "$WARMUP" --min-time-ms "$MIN_TIME_MS" --label "$1"
}
record() {  # RUNNER MODEL THREADS
  local line
  if line="$("$1" "$2" "$3" | tail -n 1)" && [ -n "$line" ]; then
    line="${line%\}},\"requested_threads\":$3}"  # the table's row key, for both runtimes
    echo "$line" >> "$OUT"
    echo "  $line" >&2
  else
    echo "  FAILED: $1 $2 threads=$3" >&2
  fi
}
for ((pass = 0; pass < REPEAT; pass++)); do
  for m in "${MODEL_LIST[@]}"; do
    for t in "${THREAD_LIST[@]}"; do
      echo "[pass $pass] $m threads=$t" >&2
      # Alternate who goes first, so neither always runs on a machine the other has just warmed.
      if (( pass % 2 == 0 )); then record run_ort "$m" "$t"; record run_ours "$m" "$t"
      else record run_ours "$m" "$t"; record run_ort "$m" "$t"; fi
    done
  done
done

echo "raw results: $OUT" >&2
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$PRECISION" = int8 ]; then
  echo "our models: INT8 (calibrated); ONNX Runtime $ORT_VERSION on an INT8 QDQ model where there is one" \
    "(NAME_qdq.onnx, else our calibration exported with --export-qdq), else on the fp32 model (column 'ORT runs')"
else echo "our models: $PRECISION storage; ONNX Runtime $ORT_VERSION (Python), fp32"; fi
echo
"$PY" "$ROOT/bench/bench_table.py" "$OUT" --precision "$PRECISION"
