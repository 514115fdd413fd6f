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

# Left out by default: the float cases of the biggest real models (ResNet-18/50, PP-OCRv4: 20 s to
# minutes per case under emulation even on XNNPACK's float kernels, whose vector float qemu emulates
# lane by lane), and the INT8 ones that calibrate on the float models. The other real models run end
# to end against their outside references: float MobileNetV2 and EfficientNet-B0 on XNNPACK (about
# 5 s per case), MobileNetV3-small, SqueezeNet, ShuffleNetV2, the PP-OCR classifier, the C example;
# the float blocked-layout tests of MobileNetV3-small and SqueezeNet (NHWC); and the INT8 QDQ models
# on the XNNPACK convolutions (resnet18/50 and mobilenet_v2 against ONNX Runtime, the executor
# modes, nothing allocated in a run).
SLOW=(
  'Models/ModelTest.*/resnet*' 'Models/RealModels.*/efficientnet*' 'Models/*/ppocrv4*'
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
