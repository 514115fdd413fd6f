#!/bin/bash
# Builds with sanitizers and runs tests (CMake option ORKNN_SANITIZE, docs/decisions.md).
#   scripts/sanitize.sh asan   AddressSanitizer + UBSan in build-asan, every CTest test
#   scripts/sanitize.sh tsan   ThreadSanitizer in build-tsan, the api and runtime tests (threads)
# JOBS (default 2) sets the build parallelism; extra arguments go to ctest (e.g. -R api).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODE="${1:-}"
shift || true
JOBS="${JOBS:-2}"
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$ROOT"
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

case "$MODE" in
  asan)
    BUILD="$ROOT/build-asan"
    SAN="address,undefined"
    TARGETS=(all)
    CTEST_ARGS=()
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    ;;
  tsan)
    BUILD="$ROOT/build-tsan"
    SAN="thread"
    TARGETS=(test_api test_runtime)
    CTEST_ARGS=(-R '^(api|runtime)$')
    # libgomp and the prebuilt oneDNN are not instrumented: their internal synchronisation is
    # invisible to TSan and shows up as false races. The threads under test are the client's
    # (one per context), so run kernels single-threaded and on the reference backend.
    export OMP_NUM_THREADS=1 OPENRKNN_NUM_THREADS=1 OPENRKNN_REF_KERNELS=1
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
    ;;
  *)
    echo "usage: $0 asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORKNN_SANITIZE="$SAN" "${LAUNCHER[@]}"
cmake --build "$BUILD" --target "${TARGETS[@]}" -j"$JOBS"
cd "$BUILD"
ctest --output-on-failure -j1 "${CTEST_ARGS[@]}" "$@"
