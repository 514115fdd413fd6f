#!/usr/bin/env python3
"""The bridge to the board on detectors: our INT8 calibration exported as QDQ ONNX
(rknn_convert --export-qdq) and built by the vendor's rknn-toolkit2 without a calibration of its
own, against the toolkit's own calibration of the float model and against our INT8 model. Every
output is compared with ONNX Runtime fp32 (cosine) on the model's test input.

    .venv/bin/python bench/vendor_parity/detector_bridge.py [--models a,b] [--families DIR] [--build DIR]

Models: model-family directories (tests/models/families, made by scripts/prepare_test_models.sh in
WORK_DIR/families_quick: model.onnx, calib.txt, in_0.npy, ref.npz with ONNX Runtime's outputs);
default the detectors with the vendor model zoo's heads and RetinaFace. bench/vendor_parity/run.sh
sets up .venv-vendor; run it once first. bench/vendor_parity/toolkits.py runs both toolkits.
"""
import argparse
import json
import os
import tempfile

from toolkits import convert_ours, cosine, run_ours, run_vendor, set_build, write_dataset

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MODELS = ("retinaface_mobilenet0.25,yolov5n_zoo,yolov6n_zoo,yolov7_tiny_zoo,yolov8n_zoo,yolov10n_zoo,"
                  "yolo11n_zoo,yolox_s_zoo")


def cells(coss):
    """'least (mean)' over the outputs."""
    return f"{min(coss):.4f} ({sum(coss) / len(coss):.4f})"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--families", help="family directories (default WORK_DIR/families_quick)")
    p.add_argument("--build", help="build tree with rknn_convert and librknnrt.so (default build)")
    p.add_argument("--workdir")
    args = p.parse_args()
    import numpy as np
    import onnx
    models_dir = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    families = args.families or os.path.join(models_dir, "families_quick")
    build = set_build(args.build)
    work = args.workdir or tempfile.mkdtemp(prefix="detector-bridge-")
    os.makedirs(work, exist_ok=True)

    print("| model | outputs | ours INT8 | vendor, from our QDQ export | ours INT8, output Sigmoids float | "
          "vendor, from that QDQ export | vendor, own calibration (normal) |")
    print("|---|---|---|---|---|---|---|")
    for m in args.models.split(","):
        d = os.path.join(families, m)
        meta = json.load(open(os.path.join(d, "meta.json")))
        ref = np.load(os.path.join(d, "ref.npz"))
        refs = [ref[f"out_{k}"] for k in range(len(ref["names"]))]
        samples = [[os.path.join(d, f"in_{k}.npy") for k in range(len(meta["inputs"]))]]
        with open(os.path.join(d, "calib.txt")) as f:
            dataset = write_dataset(os.path.join(work, m + ".dataset.txt"),
                                    [[os.path.join(d, p) for p in line.split()] for line in f if line.strip()])
        rknn, qdq = os.path.join(work, m + ".int8.rknn"), os.path.join(work, m + ".qdq.onnx")
        qdq_float_sigmoid = os.path.join(work, m + ".qdq_float_sigmoid.onnx")
        onnx_model = onnx.load(os.path.join(d, "model.onnx"))
        writer = {o: n.op_type for n in onnx_model.graph.node for o in n.output}
        sigmoid_outputs = [o.name for o in onnx_model.graph.output if writer.get(o.name) == "Sigmoid"]
        onnx_path = os.path.join(d, "model.onnx")
        base = ["--quantize", "--dataset", os.path.join(d, "calib.txt")]
        convert_ours(build, onnx_path, rknn, base + ["--export-qdq", qdq])
        rknn_float_sigmoid = os.path.join(work, m + ".float_sigmoid.rknn")
        if sigmoid_outputs:
            convert_ours(build, onnx_path, rknn_float_sigmoid,
                         base + ["--export-qdq", qdq_float_sigmoid, "--float-layers", ",".join(sigmoid_outputs)])

        def ours(path):
            return cells([cosine(o, rf) for o, rf in zip(run_ours(path, samples)[0], refs)])

        def vendor(tag, model, mode):
            outs = run_vendor(work, f"{m}.{tag}", model, mode, samples, dataset)
            return outs if isinstance(outs, str) else cells([cosine(o, rf) for o, rf in zip(outs[0], refs)])
        no = "no output Sigmoid"
        print(f"| {m} | {len(refs)} | {ours(rknn)} | {vendor('qdq', qdq, 'qdq')} | "
              f"{ours(rknn_float_sigmoid) if sigmoid_outputs else no} | "
              f"{vendor('qdq_float_sigmoid', qdq_float_sigmoid, 'qdq') if sigmoid_outputs else no} | "
              f"{vendor('own', onnx_path, 'normal')} |", flush=True)


if __name__ == "__main__":
    main()
