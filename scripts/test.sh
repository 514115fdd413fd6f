#!/bin/bash
# The README's test command: installs what is missing, builds, prepares the test models and runs
# every test with CTest.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
"$ROOT/scripts/prepare_test_models.sh"
cd "${BUILD_DIR:-$ROOT/build}"
ctest --output-on-failure -j1
