"""The Python package end to end in a fresh environment: tests/python/wheel_test.sh runs it from an
installed wheel, tests/python/emulated_test.sh on an emulated aarch64 Python.

    smoke.py make-model DIR   writes DIR/m.onnx (needs onnx; run where onnx is installed)
    smoke.py run DIR [--installed]
        converts DIR/m.onnx with RKNN, runs the .rknn with RKNNLite and checks the values with
        numpy; --installed also checks that the modules, the libraries and codegen's headers come
        from the installed package (site-packages), not from a checkout.
"""
import os
import sys

import numpy as np

W = [1.0, -2.0, 3.0]  # y = relu(x * w), one w per channel, on a 1x3x2x2 input


def make_model(directory):
    from onnx import TensorProto, helper, save
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 3, 1, 1], W)
    graph = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    save(model, os.path.join(directory, "m.onnx"))


def run(directory, installed):
    import openrknn
    from rknn.api import RKNN
    from rknnlite.api import RKNNLite

    pkg = os.path.dirname(openrknn.__file__)
    if installed:
        for mod in (openrknn, sys.modules[RKNN.__module__], sys.modules[RKNNLite.__module__]):
            assert "site-packages" in mod.__file__, f"{mod.__name__} imported from {mod.__file__}, not the install"
        assert os.path.isfile(os.path.join(pkg, "lib", "librknnrt.so"))
    os.chdir(directory)
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
    want = np.maximum(x.transpose(0, 3, 1, 2).astype(np.float32) * np.array(W, np.float32).reshape(1, 3, 1, 1), 0)
    assert y.dtype == np.float32 and y.shape == (1, 3, 2, 2), (y.dtype, y.shape)
    assert np.array_equal(y, want), (y, want)
    lite.release()

    if installed:  # codegen's C project takes the headers and the library from the installed package
        gen = RKNN()
        assert gen.load_rknn("m.rknn") == 0 and gen.codegen("app") == 0
        with open("app/CMakeLists.txt") as f:
            cmake_text = f.read()
        assert os.path.join(pkg, "include") in cmake_text and os.path.join(pkg, "lib") in cmake_text, cmake_text
        assert os.path.isfile(os.path.join(pkg, "include", "rknn_api.h"))
    print(f"smoke: converted and ran a model with {pkg} ({os.uname().machine})")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "make-model":
        make_model(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], "--installed" in sys.argv[3:])
    else:
        raise SystemExit(__doc__)
