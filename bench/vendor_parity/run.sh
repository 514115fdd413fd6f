#!/bin/bash
# One command: readies the vendor's toolkit in .venv-vendor (setup_vendor.sh, only when
# requirements/vendor.txt changed since it was installed) and runs compare_python.py, which runs the
# same conversion script with the vendor's rknn-toolkit2 and with OpenRKNN and prints a markdown
# table per model. Arguments go to compare_python.py (--models a,b --workdir DIR).
# Needs: scripts/setup.sh (.venv with ONNX Runtime), a build in build/ (or OPENRKNN_LIB_DIR) and the
# test models (scripts/prepare_test_models.sh).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$ROOT/.venv-vendor"

stamp="$VENV/.installed-vendor.txt"
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$stamp" ] ||
   [ "$(cat "$stamp")" != "$(sha256sum "$ROOT/requirements/vendor.txt" | cut -d' ' -f1)" ]; then
  "$HERE/setup_vendor.sh"
fi
[ -x "$ROOT/.venv/bin/python" ] || { echo "run.sh: $ROOT/.venv is missing: run scripts/setup.sh" >&2; exit 1; }
export OPENRKNN_LIB_DIR="${OPENRKNN_LIB_DIR:-$ROOT/build}"
[ -f "$OPENRKNN_LIB_DIR/librknnrt.so" ] ||
  { echo "run.sh: no librknnrt.so in $OPENRKNN_LIB_DIR: build first (scripts/test.sh builds into build/)" >&2; exit 1; }
exec "$ROOT/.venv/bin/python" "$HERE/compare_python.py" "$@"
