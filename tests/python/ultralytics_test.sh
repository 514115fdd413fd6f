#!/bin/bash
# Ultralytics as a real client of the Python package: its own exporter,
# YOLO("yolov8n.yaml").export(format="rknn", name="rk3588"), must convert with OUR rknn.api, and the
# .rknn it writes must run with our rknnlite.api and match ONNX Runtime on the ONNX file it exported
# on the way (tests/python/ultralytics_client.py). One command: the first run creates the virtual
# environment .venv-ultralytics (Debian's python3, seeing Debian's torch, torchvision, onnx and
# numpy) with the pinned packages of requirements/ultralytics.txt and ONNX Runtime's pins from
# requirements/test.txt, one at a time with --no-deps; later runs install nothing unless a pin changed.
#
# Usage: tests/python/ultralytics_test.sh [--setup | --wheel] [WORK_DIR]
#   --setup   only readies .venv-ultralytics (scripts/setup.sh runs this, so tests download nothing)
#   default   the modules of python/ over the libraries in $OPENRKNN_LIB_DIR (default: build/)
#   --wheel   builds the wheel as tests/python/wheel_test.sh does (with .venv's scikit-build-core)
#             and runs from it, so the package is the installed distribution `openrknn`
# WORK_DIR receives Ultralytics' files (yolov8n.onnx, yolov8n_rknn_model/, its settings) and is
# kept; without it a temporary directory is used and removed unless the test fails. The network is
# needed only for the first setup (PyPI); the test itself blocks every connection and install.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV="$ROOT/.venv-ultralytics"
WHEEL=0
SETUP_ONLY=0
if [ "${1:-}" = "--wheel" ]; then WHEEL=1; shift; fi
if [ "${1:-}" = "--setup" ]; then SETUP_ONLY=1; shift; fi
KEEP=1
if [ -n "${1:-}" ]; then WORK=$1; else WORK=$(mktemp -d -t openrknn-ultralytics.XXXXXX); KEEP=0; fi

# ---- setup ----
t0=$(date +%s)
if ! /usr/bin/python3 -c "import torch, torchvision, onnx, numpy, PIL, yaml, requests, psutil, venv" 2>/dev/null; then
  echo "ultralytics_test: Debian's Python packages are missing; as root: apt-get install python3-venv" \
    "python3-torch python3-torchvision python3-onnx python3-numpy python3-pil python3-yaml python3-requests" \
    "python3-psutil (scripts/setup.sh installs most of them)" >&2
  exit 1
fi
ORT='^(onnxruntime|flatbuffers|packaging|protobuf)=='  # the reference runtime, as pinned for the other tests
pins() {  # the packages to install, one spec a line
  sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$ROOT/requirements/ultralytics.txt"
  sed 's/#.*//; s/[[:space:]]//g' "$ROOT/requirements/test.txt" | grep -E "$ORT"
}
[ "$(pins | grep -cE "$ORT")" -eq 4 ] || {
  echo "ultralytics_test: requirements/test.txt no longer pins onnxruntime, flatbuffers, packaging and protobuf" >&2
  exit 1
}
hash=$(pins | sha256sum | cut -d' ' -f1)
stamp="$VENV/.installed-ultralytics"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$hash" ]; then
  # A changed pin list gets a fresh environment, so nothing unlisted stays behind.
  rm -rf "$VENV"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
  while read -r spec; do
    if ! "$VENV/bin/pip" install --quiet --no-deps --disable-pip-version-check "$spec"; then
      echo "ultralytics_test: pip could not install $spec; check that PyPI is reachable and the version" \
        "is still published" >&2
      exit 1
    fi
  done < <(pins)
  echo "$hash" > "$stamp"
  echo "ultralytics_test: set up .venv-ultralytics in $(( $(date +%s) - t0 )) s"
fi

[ "$SETUP_ONLY" = 1 ] && exit 0

# ---- the package under test ----
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ "$WHEEL" = 1 ]; then
  t1=$(date +%s)
  rm -rf "$WORK/dist" "$WORK/site"
  "$ROOT/.venv/bin/pip" wheel --no-build-isolation --no-deps --no-index -q -w "$WORK/dist" "$ROOT"
  # Into a directory of its own (with its .dist-info, so it is the distribution `openrknn`), not
  # into .venv-ultralytics: that stays as its pins made it.
  "$VENV/bin/pip" install -q --no-deps --no-index --target "$WORK/site" "$WORK"/dist/openrknn-*.whl
  unset OPENRKNN_LIB_DIR
  export PYTHONPATH="$WORK/site"
  echo "ultralytics_test: built and installed the wheel in $(( $(date +%s) - t1 )) s"
else
  export OPENRKNN_LIB_DIR="${OPENRKNN_LIB_DIR:-$ROOT/build}"
  for lib in librknnrt.so libopenrknn_convert.so; do
    [ -f "$OPENRKNN_LIB_DIR/$lib" ] || {
      echo "ultralytics_test: $OPENRKNN_LIB_DIR/$lib is missing: build first (scripts/build.sh)" >&2
      exit 1
    }
  done
  export PYTHONPATH="$ROOT/python"
fi

# ---- run ----
t2=$(date +%s)
cd "$WORK"
status=0
"$VENV/bin/python" "$ROOT/tests/python/ultralytics_client.py" "$WORK" || status=$?
echo "ultralytics_test: ran in $(( $(date +%s) - t2 )) s"
cd /
if [ "$KEEP" = 1 ] || [ "$status" != 0 ]; then echo "ultralytics_test: files in $WORK"; else rm -rf "$WORK"; fi
exit $status
