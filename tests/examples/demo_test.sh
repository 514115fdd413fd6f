#!/bin/bash
# Builds nothing: runs the C example (examples/rknn_demo.c, linked only against librknnrt.so) the way
# the README demo does and checks what it prints: the PP-OCR text-orientation classifier, converted
# with rknn_convert, must call upright text "0 degrees" (class 0) and the same text turned upside down
# "180 degrees" (class 1).
# usage: demo_test.sh BUILD_DIR SOURCE_DIR [LAUNCHER...]  (LAUNCHER: the emulator of a cross build)
set -euo pipefail
BUILD="$1"
SRC="$2"
LAUNCH=("${@:3}")
WORK_MODELS="${ORKNN_MODELS_DIR:-$SRC/tests/models/work}"
MODEL="$WORK_MODELS/ppocr_cls.onnx"
if [ ! -f "$MODEL" ]; then
  echo "FAIL: $MODEL missing: run scripts/prepare_test_models.sh" >&2
  exit 1
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"${LAUNCH[@]}" "$BUILD/rknn_convert" -q "$MODEL" -o "$TMP/cls.rknn" -t rk3588 --input-shape x=1,3,48,192 \
  --mean 127.5,127.5,127.5 --std 127.5,127.5,127.5
/usr/bin/python3 "$SRC/examples/render_text.py" "Hello RKNN 2026" "$TMP/up.ppm"
/usr/bin/python3 "$SRC/examples/render_text.py" "Hello RKNN 2026" "$TMP/down.ppm" --upside-down

top_class() {  # prints the index of the best class of output 0
  "${LAUNCH[@]}" "$BUILD/rknn_demo" "$TMP/cls.rknn" "$1" | tee "$TMP/log" >&2
  grep -m1 '^output 0' "$TMP/log" | sed -E 's/.*top-5: \[([0-9]+)\].*/\1/'
}
up=$(top_class "$TMP/up.ppm")
down=$(top_class "$TMP/down.ppm")
echo "upright -> class $up, upside down -> class $down"
[ "$up" = "0" ] || { echo "FAIL: upright text classified as $up" >&2; exit 1; }
[ "$down" = "1" ] || { echo "FAIL: upside-down text classified as $down" >&2; exit 1; }
# A missing model file must make the example fail cleanly (non-zero exit, no crash).
set +e
"${LAUNCH[@]}" "$BUILD/rknn_demo" "$TMP/missing.rknn" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = "1" ] || { echo "FAIL: rknn_demo on a missing model exited with $rc" >&2; exit 1; }
echo "demo test passed"
