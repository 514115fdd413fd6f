#!/bin/bash
# pip install from a checkout, as a user does it: builds the wheel offline (no build isolation:
# scikit-build-core comes pinned from requirements/test.txt), installs it into a fresh virtual
# environment and runs a conversion and an inference from outside the checkout, so the modules and
# libraries come from the installed wheel. Usage: wheel_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
SRC=$(cd "$1" && pwd)
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK"
"$SRC/.venv/bin/pip" wheel --no-build-isolation --no-deps --no-index -q -w "$WORK/dist" "$SRC"
wheel=$(ls "$WORK"/dist/openrknn-*.whl)
# Debian's python, seeing Debian's numpy and onnx (as .venv does); the wheel's own dependency is numpy.
/usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/pip" install -q --no-deps --no-index "$wheel"
cd "$WORK"
unset OPENRKNN_LIB_DIR PYTHONPATH
"$WORK/venv/bin/python" - <<'PY'
import os
import numpy as np
import onnx
from onnx import TensorProto, helper

import openrknn
from rknn.api import RKNN
from rknnlite.api import RKNNLite

for m in (openrknn, RKNN, RKNNLite):
    f = getattr(m, "__file__", None) or __import__(m.__module__).__file__
    assert "/venv/" in f, f"{m} imported from {f}, not from the installed wheel"
assert os.path.isfile(os.path.join(os.path.dirname(openrknn.__file__), "lib", "librknnrt.so"))

# y = relu(x * w), w = [1, -2, 3] per channel, on a 1x3x2x2 input
w = helper.make_tensor("w", TensorProto.FLOAT, [1, 3, 1, 1], [1.0, -2.0, 3.0])
graph = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])], [w])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "m.onnx")

rknn = RKNN()
rknn.config(target_platform="rk3588", mean_values=[[0, 0, 0]], std_values=[[1, 1, 1]])
assert rknn.load_onnx("m.onnx") == 0
assert rknn.build(do_quantization=False) == 0
assert rknn.export_rknn("m.rknn") == 0
rknn.release()

lite = RKNNLite()
assert lite.load_rknn("m.rknn") == 0
assert lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0) == 0
x = np.arange(12, dtype=np.uint8).reshape(1, 2, 2, 3)  # NHWC image
(y,) = lite.inference(inputs=[x])
want = np.maximum(x.transpose(0, 3, 1, 2).astype(np.float32) * np.array([1, -2, 3], np.float32).reshape(1, 3, 1, 1), 0)
assert y.dtype == np.float32 and y.shape == (1, 3, 2, 2), (y.dtype, y.shape)
assert np.array_equal(y, want), (y, want)
lite.release()

# codegen's C project takes the headers and the library from the installed package
gen = RKNN()
assert gen.load_rknn("m.rknn") == 0 and gen.codegen("app") == 0
cmake_text = open("app/CMakeLists.txt").read()
pkg = os.path.dirname(openrknn.__file__)
assert os.path.join(pkg, "include") in cmake_text and os.path.join(pkg, "lib") in cmake_text, cmake_text
assert os.path.isfile(os.path.join(pkg, "include", "rknn_api.h"))
print("wheel_test: the installed wheel converted and ran a model and wrote a C project")
PY
