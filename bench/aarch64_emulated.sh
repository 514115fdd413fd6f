#!/bin/bash
# aarch64_emulated.sh - relative evidence for the aarch64 fast kernels, from an x86-64 machine: each
# model's run time under qemu-aarch64 on the reference kernels and on the fast kernels, one thread,
# and their ratio. Emulated milliseconds say nothing about a board (qemu translates every
# instruction, NEON included); only the ratio between the two columns is evidence. On a real aarch64
# machine run bench/run_bench.sh there instead: the same side-by-side table with ONNX Runtime as on
# x86-64 (docs/benchmarks.md).
#
# Usage: bench/aarch64_emulated.sh [--build DIR] [--models a,b,...] [--cpu MODEL] [--iters N]
#   --build   the cross build (default: build-aarch64, made by scripts/cross_test.sh aarch64)
#   --models  ONNX files of the test models without .onnx (default: resnet18_qdq,mobilenet_v2_qdq,
#             the INT8 QDQ models of scripts/prepare_test_models.sh)
#   --cpu     qemu's CPU model (default cortex-a76, RK3588's big core, with the dot-product
#             instructions; cortex-a53: NEON without them; `qemu-aarch64 -cpu help` lists them)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK_DIR="${ORKNN_MODELS_DIR:-$ROOT/tests/models/work}"
BUILD="$ROOT/build-aarch64"
MODELS="resnet18_qdq,mobilenet_v2_qdq"
CPU=cortex-a76
ITERS=3
die() { echo "aarch64_emulated.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --cpu) CPU="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;/^set -e/d'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ -x "$BUILD/bench/rknn_bench" ] || die "$BUILD/bench/rknn_bench missing: run scripts/cross_test.sh aarch64 first"
PKG="$ROOT/.cross/aarch64"
QEMU=(qemu-aarch64 -cpu "$CPU" -L /usr/aarch64-linux-gnu
      -E "LD_LIBRARY_PATH=$PKG/usr/lib/aarch64-linux-gnu:$PKG/lib/aarch64-linux-gnu")
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

median_ms() {  # median_ms MODEL.rknn [ENV=VALUE...]: the run's median from rknn_bench's JSON line
  local model=$1
  shift
  env OPENRKNN_NUM_THREADS=1 "$@" "${QEMU[@]}" "$BUILD/bench/rknn_bench" "$model" --iters "$ITERS" --warmup 1 \
    --min-time-ms 0 2>/dev/null | tail -1 | sed -E 's/.*"median_ms":([0-9.]+).*/\1/'
}

echo "qemu-aarch64 -cpu $CPU, 1 thread, median of $ITERS runs (emulated ms: compare within a row only)"
echo
echo "| model | reference kernels ms | fast kernels ms | speed-up |"
echo "|---|---|---|---|"
IFS=, read -ra names <<< "$MODELS"
for name in "${names[@]}"; do
  onnx="$WORK_DIR/$name.onnx"
  [ -f "$onnx" ] || die "$onnx missing: run scripts/prepare_test_models.sh"
  "${QEMU[@]}" "$BUILD/rknn_convert" -q "$onnx" -o "$OUT/$name.rknn" -t rk3588 >/dev/null
  ref=$(median_ms "$OUT/$name.rknn" OPENRKNN_REF_KERNELS=1)
  fast=$(median_ms "$OUT/$name.rknn")
  awk -v n="$name" -v r="$ref" -v f="$fast" 'BEGIN { printf "| %s | %.0f | %.0f | %.1fx |\n", n, r, f, r / f }'
done
