#!/bin/bash
# The Python package on aarch64: Debian's arm64 python3.11 and numpy (unpacked into .cross/aarch64
# by scripts/setup.sh aarch64) run tests/python/smoke.py under qemu-user over the cross build's
# librknnrt.so and libopenrknn_convert.so. The ONNX model is written by the host's .venv (no arm64
# onnx needed). Usage: emulated_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
SYSROOT="$SRC/.cross/aarch64"
PY="$SYSROOT/usr/bin/python3.11"
[ -x "$PY" ] || { echo "emulated_test.sh: $PY is missing: run scripts/setup.sh aarch64" >&2; exit 1; }
WORK=$(mktemp -d -t openrknn-pyarm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
"$SRC/.venv/bin/python" "$SRC/tests/python/smoke.py" make-model "$WORK"
lib="$SYSROOT/usr/lib/aarch64-linux-gnu"
qemu-aarch64 -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$lib:$SYSROOT/lib/aarch64-linux-gnu:$lib/blas:$lib/lapack" \
  -E "PYTHONPATH=$SRC/python" -E "OPENRKNN_LIB_DIR=$BUILD" -E RKNN_LOG_LEVEL=1 \
  "$PY" "$SRC/tests/python/smoke.py" run "$WORK"
