#!/bin/bash
# Cross-builds OpenRKNN for another CPU and runs its tests there under qemu-user (docs/aarch64.md).
#
# Usage: scripts/cross_test.sh aarch64 [--full] [CTEST_ARGS...]
#   Installs what is missing (scripts/setup.sh aarch64), prepares the test models, builds into
#   build-aarch64 (BUILD_DIR overrides) and runs every CTest suite under emulation. The real-model
#   tests that take minutes each under emulation are left out (the list below, with the reason);
#   --full runs them too (an hour or more). CTEST_ARGS go to ctest (-R SUITE, ...).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TARGET="${1:-}"
[ "$TARGET" = aarch64 ] || { echo "usage: scripts/cross_test.sh aarch64 [--full] [CTEST_ARGS...]" >&2; exit 2; }
shift
FULL=0
if [ "${1:-}" = --full ]; then FULL=1; shift; fi
BUILD="${BUILD_DIR:-$ROOT/build-aarch64}"

"$ROOT/scripts/setup.sh" aarch64
"$ROOT/scripts/prepare_test_models.sh"
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$ROOT"
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}" >/dev/null
cmake --build "$BUILD" -j"$(nproc)"

# Left out by default: the float cases of the bigger real models (ResNet, MobileNetV2,
# EfficientNet, PP-OCRv4) and the INT8 ones that calibrate on them: float runs on the reference
# kernels on aarch64, which emulation makes 10 s to 3 min per case. The small real models still run
# end to end against their outside references (MobileNetV3-small, SqueezeNet, ShuffleNetV2, the
# PP-OCR classifier, the C example), and so do the INT8 QDQ models on the XNNPACK convolutions
# (resnet18/50 and mobilenet_v2 against ONNX Runtime, the executor modes, nothing allocated in a run).
SLOW=(
  'Models/ModelTest.*/resnet*' 'Models/ModelTest.*/mobilenet_v2*' 'Models/*/efficientnet*' 'Models/*/ppocrv4*'
  'Models/RealModels.*/resnet*' 'Models/RealModels.*/mobilenet_v2'                         # converter
  'Models/RunAllocations.*/mobilenet_v2*' 'Models/RunAllocations.*/resnet18_qdq_2threads*'
  'DynamicShape.PpOcrV4*'                                                                   # api
  'BusyHostRun.*Fp16*' 'BusyHostRun.EfficientnetB0Int8SameBits' 'OneExecutor.*Fp*'
  'SiluFusion.*' 'Int8Chains.*' 'Int8Classifiers.*' 'Int8Hybrid.*' 'Int8TextDetector.*' 'Int8TextRecognizer.*'
  'Models/ThreadedContexts.*'  # four contexts on every input, for threads natively and under TSan
)
cd "$BUILD"
if [ $FULL -eq 0 ]; then
  # GoogleTest reads GTEST_FILTER; qemu-user hands the environment to the emulated program.
  export GTEST_FILTER="-$(IFS=:; echo "${SLOW[*]}")"
  echo "cross_test.sh: left out (--full runs them): ${SLOW[*]}"
fi
ctest --output-on-failure -j1 "$@"
