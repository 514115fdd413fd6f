#!/usr/bin/python3
"""Writes the ONNX model of the custom-operator tests (tests/api/custom_op_test.cc) with python3-onnx.

Usage: /usr/bin/python3 make_custom_op_model.py OUT.onnx

    x [1,2,4,4] -> Conv(3 filters 3x3, pad 1) -> cstSigmoid -> Add(bias [1,3,1,1]) -> cstScale -> y [1,3,16]

cstSigmoid and cstScale are in domain "rknn_cst_test", so rknn_convert turns them into custom operators:
  cstSigmoid: y = 1 / (1 + exp(-alpha * x)); attributes alpha (float), count (int), coeffs (floats), label (string).
  cstScale:   y[n, c, h*W + w] = x[n, c, h, w] * (c + 1) for mode "mul" (x + (c + 1) for "add"); axes (ints) = [2, 3],
              the axes it flattens. Its output shape [1,3,16] is declared in value_info (no shape inference
              knows the op); cstSigmoid's is left to the converter's default (the first input's shape).
The weights are fixed formulas, so custom_op_test.cc builds the same model with OnnxBuilder and computes
the reference itself.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DOMAIN = "rknn_cst_test"


def weights():
    w = np.array([((i * 7) % 11 - 5) * 0.1 for i in range(3 * 2 * 3 * 3)], dtype=np.float32).reshape(3, 2, 3, 3)
    b = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    bias = np.array([0.5, -0.25, 1.0], dtype=np.float32).reshape(1, 3, 1, 1)
    return w, b, bias


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    w, b, bias = weights()
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["conv"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("cstSigmoid", ["conv"], ["sig"], name="sig_node", domain=DOMAIN, alpha=0.75, count=7,
                         coeffs=[0.5, 1.5], label="hello"),
        helper.make_node("Add", ["sig", "bias"], ["sum"], name="add"),
        helper.make_node("cstScale", ["sum"], ["y"], name="scale_node", domain=DOMAIN, axes=[2, 3], mode="mul"),
    ]
    graph = helper.make_graph(
        nodes, "custom_op_test",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 16])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
                     numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph, producer_name="openrknn-custom-op-test",
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(DOMAIN, 1)])
    model.ir_version = 8
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
