#!/bin/bash
# Builds the libFuzzer targets (tests/fuzz/) with clang + ASan + UBSan and runs each for a bounded
# time on a scratch copy of its committed seed corpus (tests/fuzz/corpus/<target>/ is never grown).
# Each target picks its kernels itself: fuzz_model_loader the reference kernels, fuzz_fast_kernels
# and fuzz_io_args the fast ones users get (docs/fuzzing.md). Fails on any crash, sanitizer report,
# leak, timeout (>10 s per input), RSS above 2 GB, or fast INT8 outputs that differ from the
# reference kernels'.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60; the longer campaigns of docs/fuzzing.md: 1800)
# Env: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (build parallelism, default 2),
#      FUZZ_TARGETS (default "fuzz_model_loader fuzz_fast_kernels fuzz_io_args").
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
BUILD="${FUZZ_BUILD_DIR:-$HERE/build-fuzz}"
JOBS="${FUZZ_JOBS:-2}"
TARGETS=(${FUZZ_TARGETS:-fuzz_model_loader fuzz_fast_kernels fuzz_io_args})

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/setup.sh installs clang)" >&2; exit 1; }
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$HERE"
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
START=$(date +%s)
# -O1, as the sanitizer builds (whose instrumented files compiled about twice as fast as at -O2):
# this build is one of the longest steps of .ci/run (docs/fuzzing.md, "CI").
cmake -S "$HERE" -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DORKNN_FUZZ=ON -DORKNN_BUILD_TESTS=OFF "${LAUNCHER[@]}" >/dev/null
cmake --build "$BUILD" --target "${TARGETS[@]}" -j"$JOBS"
BUILD_MIN=$(( ($(date +%s) - START + 30) / 60 ))

# Every rejected call logs an error line (errors cannot be silenced); -close_fd_mask=2 below
# closes the target's stderr while libFuzzer and the sanitizers keep reporting on a duplicate.
# OpenMP threads sleep between regions instead of spinning: the fast kernels' two threads per
# context would otherwise hold the second core of the machine for every run.
export RKNN_LOG_LEVEL=0 OMP_WAIT_POLICY=passive
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

status=0
summary=()
for t in "${TARGETS[@]}"; do
  work="$(mktemp -d "${TMPDIR:-/tmp}/orknn-fuzz-$t.XXXXXX")"
  cp -r "$HERE/tests/fuzz/corpus/$t/." "$work/"
  rm -rf "$BUILD/fuzz-artifacts/$t"; mkdir -p "$BUILD/fuzz-artifacts/$t"
  echo "fuzz.sh: $t for ${SECONDS_PER_TARGET}s (scratch corpus $work)"
  log="$BUILD/fuzz-artifacts/$t.log"
  target_status=0
  if ! (cd "$BUILD/fuzz-artifacts/$t" && "$BUILD/tests/fuzz/$t" "$work" \
          -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
          -artifact_prefix="$BUILD/fuzz-artifacts/$t/" -print_final_stats=1 \
          -close_fd_mask=2 > "$log" 2>&1); then
    target_status=1
  fi
  tail -n 60 "$log"
  # Also catch any artifact the fuzzer left.
  artifacts=$(ls "$BUILD/fuzz-artifacts/$t" | grep -cE '^(crash|leak|timeout|oom)-' || true)
  [ "$artifacts" -gt 0 ] && target_status=1
  execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}' | tail -n 1)
  summary+=("$t ${SECONDS_PER_TARGET}s ${execs:-?} execs $artifacts findings")
  [ $target_status -eq 0 ] || status=1
  rm -rf "$work"
done
line="$(printf '%s; ' "${summary[@]}")build ${BUILD_MIN} min"
if [ $status -eq 0 ]; then
  echo "fuzz.sh: PASS - $line"
else
  echo "fuzz.sh: FAIL - $line (reproducers and logs under $BUILD/fuzz-artifacts/)" >&2
fi
exit $status
