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

# The Debian packages the toolkit (and compare_python.py's images) use from the system site packages.
PACKAGES=(python3-venv python3-numpy python3-torch python3-onnx python3-protobuf python3-psutil python3-yaml
  python3-pil)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "^install ok installed$" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup_vendor.sh: missing packages: ${missing[*]}; run as root (sudo $0)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

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
