#!/bin/bash
# Installs the vendor's toolkit (rknn-toolkit2, requirements/vendor.txt) into its own virtual
# environment .venv-vendor (git-ignored), to measure OpenRKNN against it. Never into .venv: the two
# `rknn` packages share a name. Like scripts/setup.sh: a venv on Debian's python3 that sees Debian's
# site packages (numpy, torch, onnx, protobuf come from there), then every pinned line of the
# requirements file with --no-deps. A second run installs and downloads nothing (the file's hash is
# recorded in the venv once it is in).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="${VENDOR_VENV:-$ROOT/.venv-vendor}"
REQ="$ROOT/requirements/vendor.txt"

# The Debian packages the toolkit uses from the system site packages (numpy, torch, onnx,
# protobuf, PyYAML, psutil, PIL for compare_python.py's images) are the project's own.
"$ROOT/scripts/setup.sh" >/dev/null

if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
stamp="$VENV/.installed-vendor.txt"
hash="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$hash" ]; then
  while read -r spec; do
    if ! "$VENV/bin/pip" install --quiet --no-deps --disable-pip-version-check "$spec"; then
      echo "setup_vendor.sh: pip could not install $spec (from requirements/vendor.txt)" >&2
      exit 1
    fi
  done < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$REQ")
  echo "$hash" > "$stamp"
  echo "setup_vendor.sh: installed requirements/vendor.txt into $VENV"
fi
# The check that matters: the vendor's class imports (it loads torch, onnx, scipy, cv2 at import).
# PYTHONPATH is dropped so that OpenRKNN's own rknn package (python/) cannot be the one found.
env -u PYTHONPATH "$VENV/bin/python" -c "from rknn.api import RKNN" >/dev/null
echo "setup_vendor.sh: $VENV ready (rknn-toolkit2 $(env -u PYTHONPATH "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("rknn-toolkit2"))'))"
