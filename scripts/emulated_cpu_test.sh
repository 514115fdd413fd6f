#!/bin/bash
# Runs test binaries of a build under QEMU's user-mode emulation of a CPU without AVX-512 and VNNI
# (default EPYC-Milan: AVX2, FMA, F16C), so that a machine with AVX-512 can check what CPUs without
# it do: which kernels are chosen, and the tests' expectations that depend on the CPU
# (docs/kernels.md, "CPUs without AVX-512"). The code under test sees the emulated CPU's CPUID,
# oneDNN included. Timings mean nothing there, and it is slow: ops takes about 1.5 min (CI runs it,
# .ci/run stage avx2), api and converter 2-4 min each, models about 16 min.
#
# Usage: scripts/emulated_cpu_test.sh [--cpu MODEL] [--build DIR] [SUITE[=GTEST_FILTER] ...]
#   SUITE: a test binary of DIR/tests without its test_ prefix (ops, api, models, ...);
#   default: ops api runtime graph model conformance. MODEL: see `qemu-x86_64 -cpu help`.
# Installs Debian's qemu-user when it is missing (as root). Exits non-zero when a suite fails.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CPU=EPYC-Milan
BUILD="$ROOT/build"
suites=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) CPU="$2"; shift 2 ;;
    --build) BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;/^set -e/d'; exit 0 ;;
    *) suites+=("$1"); shift ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || suites=(ops api runtime graph model conformance)

if ! command -v qemu-x86_64 >/dev/null; then
  [ "$(id -u)" -eq 0 ] || { echo "emulated_cpu_test.sh: qemu-user is missing; run as root to install it" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user
fi

failed=()
cd "$BUILD/tests"  # where CTest runs the binaries (the model tests find their files from here)
for s in "${suites[@]}"; do
  name=${s%%=*}
  filter=""
  [ "$name" = "$s" ] || filter="--gtest_filter=${s#*=}"
  bin="./test_$name"
  [ -x "$bin" ] || { echo "emulated_cpu_test.sh: $BUILD/tests/test_$name not found (build it first)" >&2; exit 1; }
  echo "=== $name on an emulated $CPU ${filter}"
  # QEMU warns once per CPUID feature its translator does not implement: not ours to see.
  if ! qemu-x86_64 -cpu "$CPU" "$bin" $filter 2> >(grep -v "TCG doesn't support requested feature" >&2); then
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "emulated_cpu_test.sh: failed on $CPU: ${failed[*]}" >&2
  exit 1
fi
echo "emulated_cpu_test.sh: all suites passed on $CPU"
