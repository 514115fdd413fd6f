#!/bin/bash
# Builds with sanitizers and runs tests (CMake option ORKNN_SANITIZE, docs/decisions.md).
#   scripts/sanitize.sh asan   AddressSanitizer + UBSan in build-asan, every CTest test
#   scripts/sanitize.sh tsan   ThreadSanitizer in build-tsan, the api and runtime tests (threads;
#                              without the real-model DynamicShape.PpOcr* test, see below)
# Ends with one summary line: "sanitize.sh MODE: PASS|FAIL - ctest counts; failed tests; number of
# sanitizer reports in the log (build and test minutes)".
# JOBS (default 2) sets the build parallelism, SAN_BUILD_DIR the build directory; extra arguments
# go to ctest (e.g. -R api).
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
    BUILD="${SAN_BUILD_DIR:-$ROOT/build-asan}"
    SAN="address,undefined"
    TARGETS=(all)
    # Two suites at a time: the long ones (models, converter; tests/CMakeLists.txt gives them a
    # COST so CTest starts them first) overlap instead of running back to back, the stage's
    # biggest cut (docs/fuzzing.md, "CI"). Every suite writes its scratch files under names of
    # its own (pid or test name). Passive OpenMP waiting: two suites' kernel threads share the 2
    # cores instead of spinning against each other.
    CTEST_ARGS=(-j2)
    export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    ;;
  tsan)
    BUILD="${SAN_BUILD_DIR:-$ROOT/build-tsan}"
    SAN="thread"
    TARGETS=(test_api test_runtime)
    CTEST_ARGS=(-j1 -R '^(api|runtime)$')
    # libgomp and the prebuilt oneDNN are not instrumented: their internal synchronisation is
    # invisible to TSan and shows up as false races. The threads under test are the client's
    # (one per context), so run kernels single-threaded and on the reference backend.
    export OMP_NUM_THREADS=1 OPENRKNN_NUM_THREADS=1 OPENRKNN_REF_KERNELS=1
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
    # Real-model conversions + inference start no threads of their own, and on instrumented
    # reference kernels one PP-OCR det test alone takes over 10 minutes: left to the asan stage.
    export GTEST_FILTER="${GTEST_FILTER:--DynamicShape.PpOcr*}"
    ;;
  *)
    echo "usage: $0 asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac

START=$(date +%s)
# -O1: instrumented code at -O2 takes about twice the compile time for little test-time gain, and
# the asan build of everything is the longest stage of .ci/run (docs/fuzzing.md, "CI").
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORKNN_SANITIZE="$SAN" "${LAUNCHER[@]}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
cmake --build "$BUILD" --target "${TARGETS[@]}" -j"$JOBS"
BUILT=$(date +%s)
cd "$BUILD"
# The tests halt on the first sanitizer report (abort_on_error / halt_on_error), so a report fails
# its test; the log is also searched for reports to name them in the summary line.
LOG="$BUILD/sanitize-ctest.log"
set +e
ctest --output-on-failure "${CTEST_ARGS[@]}" "$@" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
set -e
DONE=$(date +%s)
reports=$(grep -cE '(ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:)' "$LOG" || true)
# CTest 3.x says "100% tests passed, 0 tests failed out of 9", CTest 4 "100% tests passed out of 9".
counts=$(grep -oE '[0-9]+% tests passed[^.]* out of [0-9]+' "$LOG" | tail -n 1 || true)
failed=$(sed -n '/The following tests FAILED:/,$p' "$LOG" | grep -oE '^[[:space:]]+[0-9]+ - [^ ]+' | awk '{print $3}' | paste -sd, - || true)
times="build $(( (BUILT - START + 30) / 60 )) min, tests $(( (DONE - BUILT + 30) / 60 )) min"
if [ "$rc" -eq 0 ]; then
  echo "sanitize.sh $MODE: PASS - ${counts:-no tests run}; sanitizer reports: $reports ($times)"
else
  echo "sanitize.sh $MODE: FAIL - ${counts:-ctest failed}; failed: ${failed:-?}; sanitizer reports: $reports ($times; log $LOG)" >&2
fi
exit "$rc"
