#!/bin/bash
# The README's demo: builds OpenRKNN, converts the default model (PP-OCR's text-orientation
# classifier, ch_ppocr_mobile_v2.0_cls, from the PyPI package rapidocr-onnxruntime that
# scripts/setup.sh installs into .venv) for RK3588, renders a line of text upright and upside down,
# and runs the unchanged C client examples/rknn_demo.c on both pictures. Output 0 of the model is
# [P(0 degrees), P(180 degrees)].
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
WORK="$BUILD/demo"
mkdir -p "$WORK"
MODEL="$("$ROOT/.venv/bin/python" "$ROOT/tests/models/ppocr_models_dir.py")/ch_ppocr_mobile_v2.0_cls_infer.onnx"

echo "== converting $(basename "$MODEL") =="
"$BUILD/rknn_convert" "$MODEL" -o "$WORK/cls.rknn" -t rk3588 --input-shape x=1,3,48,192 \
  --mean 127.5,127.5,127.5 --std 127.5,127.5,127.5 --custom-string "OpenRKNN demo: text orientation"

/usr/bin/python3 "$ROOT/examples/render_text.py" "Hello RKNN 2026" "$WORK/upright.ppm"
/usr/bin/python3 "$ROOT/examples/render_text.py" "Hello RKNN 2026" "$WORK/upside_down.ppm" --upside-down

for pic in upright upside_down; do
  echo "== $pic text =="
  LD_LIBRARY_PATH="$BUILD" "$BUILD/rknn_demo" "$WORK/cls.rknn" "$WORK/$pic.ppm"
done
