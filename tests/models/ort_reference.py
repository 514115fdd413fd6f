"""Reference outputs from ONNX Runtime for the PP-OCR test models and the QDQ (already-quantized)
torchvision models, and a cross-check of the torchvision exports.

Usage (with the project's .venv python, scripts/setup.sh):
  ort_reference.py WORK_DIR [--force]   write the reference outputs (below)
  ort_reference.py WORK_DIR --check     compare ONNX Runtime with PyTorch on the torchvision models

Reference mode reads WORK_DIR/NAME.onnx and WORK_DIR/NAME.in.f32 (raw little-endian float32, NCHW, from
render_ocr_inputs.py) and writes ONNX Runtime's output as WORK_DIR/NAME.out.f32 (same encoding) for
every PP-OCR model NAME; and for the QDQ models (make_qdq.py) it runs WORK_DIR/NAME_qdq.onnx on the
float model's input NAME.in.f32 and writes WORK_DIR/NAME_qdq.out.f32. ONNX Runtime runs a QDQ model
with its default optimisations, i.e. with the Q/DQ pairs fused into its integer kernels (QLinearConv,
QLinearAdd, QGemm, ...): the output a user of ONNX Runtime gets from that file. An output newer than
its model and input is left alone unless --force is given. ONNX Runtime runs on one thread so the
reference does not depend on how work is split.

Check mode runs each torchvision NAME.onnx on NAME.in.f32 and compares with NAME.out.f32 (PyTorch).
It exits non-zero when they disagree: then the export, not our runtime, would be wrong.
"""
import argparse
import os
import sys
import time

import numpy as np
import onnxruntime as ort

# Input shapes of the PP-OCR models, whose ONNX inputs have dynamic dims. Input "x" in all three.
OCR_MODELS = {
    "ppocrv4_det": (1, 3, 480, 480),
    "ppocrv4_rec": (1, 3, 48, 320),
    "ppocr_cls": (1, 3, 48, 192),
}
# Torchvision models that make_qdq.py turns into NAME_qdq.onnx (input "input", 1x3x224x224).
QDQ_MODELS = ["resnet18", "resnet50", "mobilenet_v2"]
TORCHVISION_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
                      "shufflenet_v2_x1_0", "efficientnet_b0"]


def read_f32(path):
    return np.fromfile(path, dtype="<f4")


def write_f32_atomically(path, data):
    np.ascontiguousarray(data, dtype="<f4").tofile(path + ".tmp")
    os.replace(path + ".tmp", path)


def run_model(model, x, shape):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if len(inputs) != 1 or len(outputs) != 1:
        raise RuntimeError(f"{model}: expected one input and one output, got "
                           f"{[i.name for i in inputs]} -> {[o.name for o in outputs]}")
    if x.size != int(np.prod(shape)):
        raise RuntimeError(f"{model}: input has {x.size} floats, shape {'x'.join(map(str, shape))} "
                           f"needs {int(np.prod(shape))}")
    return session.run(None, {inputs[0].name: x.reshape(shape)})[0]


def compare(got, want):
    got, want = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    cosine = float(got @ want / np.sqrt((got @ got) * (want @ want)))
    return cosine, float(np.max(np.abs(got - want))), float(np.max(np.abs(want)))


def write_references(work, force):
    jobs = [(name, shape, name, name, None) for name, shape in OCR_MODELS.items()]
    # For the QDQ models, PyTorch's output of the float model is printed beside as a sanity check.
    jobs += [(base + "_qdq", (1, 3, 224, 224), base + "_qdq", base, base) for base in QDQ_MODELS]
    for name, shape, model_stem, input_stem, float_stem in jobs:
        model = os.path.join(work, model_stem + ".onnx")
        x = os.path.join(work, input_stem + ".in.f32")
        out = os.path.join(work, name + ".out.f32")
        for f in (model, x):
            if not os.path.exists(f):
                raise RuntimeError(f"{f} is missing")
        if (not force and os.path.exists(out)
                and os.path.getmtime(out) >= max(os.path.getmtime(model), os.path.getmtime(x))):
            print(f"{name}: up to date")
            continue
        start = time.monotonic()
        y = run_model(model, read_f32(x), shape)
        write_f32_atomically(out, y)
        print(f"{name}: output {'x'.join(map(str, y.shape))} in [{y.min():.3g}, {y.max():.3g}], "
              f"{(time.monotonic() - start) * 1e3:.0f} ms -> {out}")
        float_out = float_stem and os.path.join(work, float_stem + ".out.f32")
        if float_out and os.path.exists(float_out):
            print(f"{name}: vs the float model (PyTorch) cosine {compare(y, read_f32(float_out))[0]:.5f}")


def check_torchvision(work):
    bad = 0
    for name in TORCHVISION_MODELS:
        base = os.path.join(work, name)
        y = run_model(base + ".onnx", read_f32(base + ".in.f32"), (1, 3, 224, 224))
        cosine, max_abs, ref_max = compare(y, read_f32(base + ".out.f32"))
        # fp32 vs fp32 with different summation orders: anything short of this is a broken export.
        ok = cosine > 0.999999 and max_abs <= 1e-4 * max(1.0, ref_max)
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {name}: ORT vs PyTorch cosine {cosine:.8f}, max abs diff "
              f"{max_abs:.2e} (output max abs {ref_max:.3g})")
    if bad:
        raise RuntimeError(f"{bad} torchvision export(s) disagree with ONNX Runtime")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work_dir")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--force", action="store_true", help="rewrite every reference output")
    mode.add_argument("--check", action="store_true", help="cross-check the torchvision exports")
    args = parser.parse_args()
    try:
        if args.check:
            check_torchvision(args.work_dir)
        else:
            write_references(args.work_dir, args.force)
    except RuntimeError as e:
        sys.exit(f"ort_reference.py: {e}")


if __name__ == "__main__":
    main()
