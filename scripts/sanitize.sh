#!/bin/bash
# Builds with sanitizers and runs tests (CMake option ORKNN_SANITIZE, docs/fuzzing.md "In CI").
#   scripts/sanitize.sh asan   AddressSanitizer + UBSan (float-cast-overflow included) in build-asan,
#                              every CTest test (GCC)
#   scripts/sanitize.sh tsan   ThreadSanitizer in build-tsan (clang, LLVM's OpenMP with its Archer
#                              tool): the api and runtime tests and CTest models_threads (real models,
#                              several contexts on client threads), fast kernels, two threads per
#                              context; needs the test models (scripts/prepare_test_models.sh)
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
    COMPILERS=()
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
    # clang: OpenMP is then LLVM's libomp, whose Archer tool (OMPT) tells TSan about OpenMP's own
    # fork, join and barriers; GCC's libgomp synchronises out of TSan's sight, so every kernel
    # split over threads would show false races. Debian's oneDNN, built with GCC, asks for libgomp,
    # but its OpenMP calls bind to the libomp the executables load first (checked below).
    command -v clang++ >/dev/null || { echo "sanitize.sh: clang++ not found (scripts/setup.sh installs clang)" >&2; exit 1; }
    COMPILERS=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
    TARGETS=(test_api test_runtime test_models)
    CTEST_ARGS=(-j1 -R '^(api|runtime|models_threads)$')
    # The kernels users run (fast, not OPENRKNN_REF_KERNELS), and real threads: every context
    # split over two whatever its model's MACs and the host's load (docs/kernels.md), while the
    # tests run several contexts on client threads of their own.
    export OPENRKNN_NUM_THREADS=2 OPENRKNN_MIN_THREADED_MACS=0 OPENRKNN_BUSY_HOST=0
    OMP_TOOL_LIBRARIES="$(dirname "$(readlink -f "$(command -v clang)")")/../lib/libarcher.so"
    export OMP_TOOL_LIBRARIES
    [ -f "$OMP_TOOL_LIBRARIES" ] || { echo "sanitize.sh: $OMP_TOOL_LIBRARIES not found (Debian's libomp-dev has it)" >&2; exit 1; }
    # Code TSan cannot see: oneDNN (prebuilt) and libomp are not instrumented. Their memory accesses
    # are never checked; ignore_noninstrumented_modules also keeps the calls they make into the
    # intercepted C library (malloc, memcpy, mutexes) from being taken for ours. Our kernels, the
    # oneDNN glue and the runtime are instrumented.
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1}"
    ;;
  *)
    echo "usage: $0 asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac

START=$(date +%s)
# -O1: instrumented code at -O2 takes about twice the compile time for little test-time gain, and
# the asan build of everything is the longest stage of .ci/run (docs/fuzzing.md, "CI").
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORKNN_SANITIZE="$SAN" "${COMPILERS[@]}" "${LAUNCHER[@]}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
cmake --build "$BUILD" --target "${TARGETS[@]}" -j"$JOBS"
BUILT=$(date +%s)
cd "$BUILD"
if [ "$MODE" = tsan ]; then
  # Without these two, TSan would see OpenMP teams without their synchronisation (false races)
  # or oneDNN's threads on a second runtime: stop with the reason instead. One model run starts
  # the OpenMP runtime, which loads Archer; the bindings are the dynamic linker's.
  preflight=$(LD_BIND_NOW=1 LD_DEBUG=bindings ARCHER_OPTIONS=verbose=1 \
    tests/test_api --gtest_filter=Contexts.DupSharesModelAndGivesIndependentResults 2>&1 || true)
  if ! grep -q "Archer detected OpenMP application with TSan" <<<"$preflight"; then
    echo "sanitize.sh tsan: FAIL - the Archer OpenMP tool ($OMP_TOOL_LIBRARIES) did not start" >&2
    exit 1
  fi
  if ! grep -Eq "libdnnl[^ ]* .* to [^ ]*libomp[^ ]* .*GOMP_parallel" <<<"$preflight"; then
    echo "sanitize.sh tsan: FAIL - oneDNN's OpenMP calls do not bind to LLVM's libomp" >&2
    exit 1
  fi
fi
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
