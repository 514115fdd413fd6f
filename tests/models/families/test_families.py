"""CTest model_families: the model-family subset of test_models.txt (reduced input sizes), converted
in fp16 with OpenRKNN's Python API (rknn.api.RKNN) and run over this build's librknnrt.so; every
output must reach cosine >= 0.999 against ONNX Runtime fp32 on the same inputs. The models, inputs
and ONNX Runtime outputs come from scripts/prepare_test_models.sh (WORK_DIR/families, WORK_DIR =
$ORKNN_MODELS_DIR or tests/models/work); a missing model fails its test. docs/model_families.md has
the whole matrix at full size (bench/model_families/run.sh).

Run: OPENRKNN_LIB_DIR=build PYTHONPATH=python .venv/bin/python -m pytest -q tests/models/families
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.dont_write_bytecode = True  # importing run_families must not leave __pycache__ in the source tree
sys.path.insert(0, HERE)
if os.path.join(ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("OPENRKNN_LIB_DIR", os.path.join(ROOT, "build"))
import run_families  # noqa: E402

WORK = os.path.join(os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work")), "families")


def subset():
    with open(os.path.join(HERE, "test_models.txt")) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


@pytest.mark.parametrize("name", subset())
def test_fp16_matches_onnx_runtime(name):
    d = os.path.join(WORK, name)
    for f in ("meta.json", "ref.npz"):
        assert os.path.isfile(os.path.join(d, f)), f"{d}/{f} is missing: run scripts/prepare_test_models.sh"
    meta, inputs, names, refs = run_families.load(d)
    run = run_families.Run(d, inputs)
    try:
        assert run.error is None, f"{name}: {run.error}"
        assert len(run.outputs) == len(refs), f"{len(run.outputs)} outputs, ONNX Runtime has {len(refs)}"
        worst = None
        for n, ref, out in zip(names, refs, run.outputs):
            assert out.size == ref.size, f"output '{n}': shape {list(out.shape)}, ONNX Runtime {list(ref.shape)}"
            assert np.all(np.isfinite(out)), f"output '{n}' is not finite"
            cos = run_families.cosine(ref, out)
            print(f"[  metrics ] {name} {n}: fp16 cosine {cos:.7f}, max abs diff "
                  f"{np.abs(out.reshape(ref.shape) - ref).max():.3g} (reference max abs {np.abs(ref).max():.3g})")
            worst = cos if worst is None else min(worst, cos)
            # fp16 storage rounds every op output: measured 0.99973 (yolov8n_zoo cls_1, the worst) to
            # 1.0000000 on this subset; 0.999 is the matrix's bar (issue 28).
            assert cos >= run_families.COS_MIN, f"output '{n}': cosine {cos:.7f} < {run_families.COS_MIN}"
    finally:
        run.release()
