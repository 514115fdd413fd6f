#!/bin/bash
# pip install from a checkout, as a user does it: builds the wheel offline (no build isolation:
# scikit-build-core comes pinned from requirements/test.txt), installs it into a fresh virtual
# environment and runs a conversion and an inference from outside the checkout, so the modules and
# libraries come from the installed wheel. Usage: wheel_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
SRC=$(cd "$1" && pwd)
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK"
"$SRC/.venv/bin/pip" wheel --no-build-isolation --no-deps --no-index -q -w "$WORK/dist" "$SRC"
wheel=$(ls "$WORK"/dist/openrknn-*.whl)
# Debian's python, seeing Debian's numpy and onnx (as .venv does); the wheel's own dependency is numpy.
/usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/pip" install -q --no-deps --no-index "$wheel"
unset OPENRKNN_LIB_DIR PYTHONPATH
"$WORK/venv/bin/python" "$SRC/tests/python/smoke.py" make-model "$WORK"
cd /  # nothing of the checkout on the module path
"$WORK/venv/bin/python" "$SRC/tests/python/smoke.py" run "$WORK" --installed
