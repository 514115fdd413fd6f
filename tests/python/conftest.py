"""Shared helpers of the Python package's tests (rknnlite.api, rknn.api, openrknn).

Run from the repository root:
    OPENRKNN_LIB_DIR=build PYTHONPATH=python .venv/bin/python -m pytest -q tests/python

Models are built here with onnx.helper (opset 13) into pytest's temporary directories. Expected
values come from ONNX Runtime on the same ONNX file, or from numpy, never from the code under test.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Convenience when PYTHONPATH / OPENRKNN_LIB_DIR are not given: the checkout's package and build tree.
if os.path.join(ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "python"))
if "OPENRKNN_LIB_DIR" not in os.environ and not os.path.isdir(os.path.join(ROOT, "python", "openrknn", "lib")):
    os.environ["OPENRKNN_LIB_DIR"] = os.path.join(ROOT, "build")

OPSET = 13
MEAN = [10.0, 20.0, 30.0]
STD = [50.0, 60.0, 70.0]
# fp16 storage (the default float_dtype): every op output is rounded to fp16.
FP16_ATOL = 1e-2
FP16_COS = 0.999


# ---------------------------------------------------------------------------------------------
# model building


def _save(nodes, inputs, outputs, inits, path, value_info=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits, value_info=list(value_info))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 7  # onnxruntime and onnx 1.12 both read IR 7
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def _vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def make_conv_model(path, cin=3, cout=4, hw=8, seed=0):
    """x [1,cin,hw,hw] -> Conv 3x3 pad 1 (bias) -> Relu -> y [1,cout,hw,hw]."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((cout, cin, 3, 3)) * 0.3).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    return _save(nodes, [_vi("x", [1, cin, hw, hw])], [_vi("y", [1, cout, hw, hw])],
                 [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")], path)


def make_add_model(path, shape=(1, 3, 4, 4)):
    """Two inputs a, b of `shape` -> Add -> y."""
    nodes = [helper.make_node("Add", ["a", "b"], ["y"])]
    return _save(nodes, [_vi("a", list(shape)), _vi("b", list(shape))], [_vi("y", list(shape))], [], path)


def make_matmul_model(path, m=2, k=6, n=5, seed=1):
    """x [m,k] (2-D) -> MatMul with a constant W [k,n] -> y [m,n]. Returns (path, W)."""
    w = (np.random.default_rng(seed).standard_normal((k, n)) * 0.5).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["y"])]
    path = _save(nodes, [_vi("x", [m, k])], [_vi("y", [m, n])], [numpy_helper.from_array(w, "W")], path)
    return path, w


def make_chain_model(path, seed=2, with_value_info=False):
    """x [1,3,8,8] -> Conv 3x3 (c1) -> Relu (r1) -> MaxPool 2x2 (p1) -> Conv 1x1 (c2) -> Sigmoid -> y [1,2,4,4].
    Intermediate tensors c1, r1, p1, c2 allow subgraph cuts. with_value_info stores their shapes."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((2, 4, 1, 1)) * 0.5).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "W2"], ["c2"]),
             helper.make_node("Sigmoid", ["c2"], ["y"])]
    vis = []
    if with_value_info:
        vis = [_vi("c1", [1, 4, 8, 8]), _vi("r1", [1, 4, 8, 8]), _vi("p1", [1, 4, 4, 4]), _vi("c2", [1, 2, 4, 4])]
    return _save(nodes, [_vi("x", [1, 3, 8, 8])], [_vi("y", [1, 2, 4, 4])],
                 [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2")], path, vis)


def make_wide_conv_model(path, hw=32, cmid=64, seed=3):
    """x [1,3,hw,hw] -> Conv 3x3 (3->cmid) -> Relu -> Conv 1x1 (cmid->cmid) -> y: outputs and
    activations of a few hundred KB, so that a leak per run or per context shows in the RSS."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((cmid, 3, 3, 3)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((cmid, cmid, 1, 1)) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "W2"], ["y"])]
    return _save(nodes, [_vi("x", [1, 3, hw, hw])], [_vi("y", [1, cmid, hw, hw])],
                 [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2")], path)


def convert(onnx_path, out_path=None, do_quantization=False, dataset=None, load_kwargs=None, **config):
    """RKNN(): config(**config) -> load_onnx -> build -> export_rknn. Returns the .rknn bytes (and
    writes out_path when given). Asserts every step returns 0."""
    from rknn.api import RKNN
    config.setdefault("target_platform", "rk3588")
    r = RKNN()
    try:
        assert r.config(**config) == 0
        assert r.load_onnx(onnx_path, **(load_kwargs or {})) == 0
        assert r.build(do_quantization=do_quantization, dataset=dataset) == 0
        if out_path is None:
            out_path = str(onnx_path) + ".rknn"
        assert r.export_rknn(str(out_path)) == 0
    finally:
        r.release()
    with open(out_path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------------------------
# references and comparisons


def ort_run(onnx_path, feeds):
    """ONNX Runtime outputs (list of ndarrays) of the model for the feeds (name -> NCHW array)."""
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def normalise(img_nhwc_u8, mean=MEAN, std=STD):
    """(img - mean) / std per channel, as float32 NCHW: what the model sees for a uint8 NHWC image."""
    x = img_nhwc_u8.astype(np.float32).transpose(0, 3, 1, 2)
    m = np.asarray(mean, np.float32).reshape(1, -1, 1, 1)
    s = np.asarray(std, np.float32).reshape(1, -1, 1, 1)
    return ((x - m) / s).astype(np.float32)


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def assert_fp16_close(got, want, atol=FP16_ATOL, cos=FP16_COS):
    assert got.shape == want.shape, (got.shape, want.shape)
    c = cosine(got, want)
    err = float(np.max(np.abs(got - want)))
    assert c >= cos and err <= atol, f"cosine {c:.6f} (>= {cos}), max abs error {err:.3g} (<= {atol})"


def assert_fp32_close(got, want):
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def error_lines(text):
    """The 'E ...' log lines of captured stderr."""
    return [line for line in text.splitlines() if line.startswith("E ")]


def rss_bytes():
    """The process's resident set size, from /proc/self/statm (second field, in pages)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def random_image(shape=(1, 8, 8, 3), seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


# ---------------------------------------------------------------------------------------------
# fixtures: models shared by the tests of a session (converted once)


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def conv_onnx(model_dir):
    return make_conv_model(model_dir / "conv.onnx")


@pytest.fixture(scope="session")
def conv_rknn(model_dir, conv_onnx):
    """The Conv+Relu model with mean/std, fp16 storage (the default). Returns the .rknn path."""
    path = str(model_dir / "conv_fp16.rknn")
    convert(conv_onnx, path, mean_values=[MEAN], std_values=[STD])
    return path


@pytest.fixture(scope="session")
def conv_rknn_fp32(model_dir, conv_onnx):
    """The Conv+Relu model with mean/std, float_dtype='float32'. Returns the .rknn path."""
    path = str(model_dir / "conv_fp32.rknn")
    convert(conv_onnx, path, mean_values=[MEAN], std_values=[STD], float_dtype="float32")
    return path


@pytest.fixture(scope="session")
def wide_rknn(model_dir):
    """make_wide_conv_model ([1,3,32,32] -> [1,64,32,32]) with mean/std, fp16. Returns the .rknn bytes."""
    onnx_path = make_wide_conv_model(model_dir / "wide.onnx")
    return convert(onnx_path, str(model_dir / "wide.rknn"), mean_values=[MEAN], std_values=[STD])


@pytest.fixture
def lite(conv_rknn):
    """An RKNNLite with the fp16 conv model loaded and initialised; released afterwards."""
    from rknnlite.api import RKNNLite
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    assert r.init_runtime() == 0
    yield r
    r.release()
