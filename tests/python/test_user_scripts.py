"""Users' scripts, unchanged: a conversion script in the model zoo's pattern and an inference
script in the light runtime's pattern (tests/python/user_scripts/), run as programs against the
package, their printed top-5 checked against ONNX Runtime."""
import os
import re
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from conftest import ROOT, cosine, ort_run

SCRIPTS = os.path.join(ROOT, "tests", "python", "user_scripts")


def make_classifier(path, seed=61):
    """x [1,3,16,16] -> Conv 3x3 (8) -> Relu -> GlobalAveragePool -> Flatten -> Gemm (10) -> Softmax."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.4).astype(np.float32), "W"),
             numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "B"),
             numpy_helper.from_array((rng.standard_normal((10, 8)) * 2.0).astype(np.float32), "Wf"),
             numpy_helper.from_array((rng.standard_normal(10) * 0.1).astype(np.float32), "Bf")]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "Wf", "Bf"], ["g"], transB=1),
             helper.make_node("Softmax", ["g"], ["y"], axis=1)]
    graph = helper.make_graph(nodes, "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    import onnx
    onnx.save(model, str(path))
    return str(path)


def run_script(name, args, cwd):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    if "OPENRKNN_LIB_DIR" in env:  # the scripts run in another directory
        env["OPENRKNN_LIB_DIR"] = os.path.abspath(env["OPENRKNN_LIB_DIR"])
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name)] + args, cwd=cwd, env=env,
                          capture_output=True, text=True)


def test_model_zoo_convert_and_lite_infer_scripts_unchanged(tmp_path):
    onnx_path = make_classifier(tmp_path / "classifier.onnx")
    rng = np.random.default_rng(62)
    lines = []
    for i in range(6):  # the calibration set the script expects next to it: dataset.txt
        np.save(tmp_path / f"calib_{i}.npy", rng.integers(0, 256, (16, 16, 3), dtype=np.uint8))
        lines.append(f"calib_{i}.npy")
    (tmp_path / "dataset.txt").write_text("\n".join(lines) + "\n")
    img = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    np.save(tmp_path / "img.npy", img)
    want = ort_run(onnx_path, {"x": (img.astype(np.float32) / 255).transpose(2, 0, 1)[None]})[0].reshape(-1)

    for dtype, name, bound in (("fp", "fp.rknn", 0.9999), ("i8", "i8.rknn", 0.99)):
        conv = run_script("convert.py", [onnx_path, "rk3588", dtype, name], tmp_path)
        assert conv.returncode == 0, conv.stdout + conv.stderr
        assert conv.stdout.count("done") == 4, conv.stdout
        infer = run_script("infer.py", [name, "img.npy"], tmp_path)
        assert infer.returncode == 0, infer.stdout + infer.stderr
        top = [(int(i), float(s)) for i, s in re.findall(r"\[\s*(\d+)\] score:([\d.]+)", infer.stdout)]
        assert len(top) == 5, infer.stdout
        assert top[0][0] == int(np.argmax(want)), (dtype, top, want)
        got = np.zeros_like(want)
        for i, s in top:
            got[i] = s
        masked = np.where(got > 0, want, 0)
        assert cosine(got, masked) >= bound, (dtype, got, want)

    bad = run_script("convert.py", [str(tmp_path / "missing.onnx"), "rk3588", "fp"], tmp_path)
    assert bad.returncode != 0 and "Load model failed!" in bad.stdout
