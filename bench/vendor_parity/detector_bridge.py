#!/usr/bin/env python3
"""The bridge to the board on detectors: our INT8 calibration exported as QDQ ONNX
(rknn_convert --export-qdq) and built by the vendor's rknn-toolkit2 without a calibration of its
own, against the toolkit's own calibration of the float model and against our INT8 model. Every
output is compared with ONNX Runtime fp32 (cosine) on the model's test input.

    .venv/bin/python bench/vendor_parity/detector_bridge.py [--models a,b] [--families DIR] [--build DIR]

Models: model-family directories (tests/models/families, made by scripts/prepare_test_models.sh in
WORK_DIR/families_quick: model.onnx, calib.txt, in_0.npy, ref.npz with ONNX Runtime's outputs);
default the detectors with the vendor model zoo's heads and RetinaFace. bench/vendor_parity/run.sh
sets up .venv-vendor; run it once first. Each vendor build runs in a process of its own in
.venv-vendor (the toolkit crashes on some models; its `rknn` package and ours share a name).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODELS = ("retinaface_mobilenet0.25,yolov5n_zoo,yolov6n_zoo,yolov7_tiny_zoo,yolov8n_zoo,yolov10n_zoo,"
                  "yolo11n_zoo,yolox_s_zoo")


def vendor_worker(job_path):
    """One vendor build and inference; saves every output (runs in .venv-vendor)."""
    import numpy as np
    from rknn.api import RKNN
    job = json.load(open(job_path))
    r = RKNN(verbose=False)
    r.config(target_platform="rk3588")
    calibrate = job["dataset"] is not None
    if r.load_onnx(job["model"]) != 0 or r.build(do_quantization=calibrate, dataset=job["dataset"]) != 0 \
            or r.init_runtime() != 0:
        sys.exit(f"vendor toolkit failed on {job['model']}")
    outs = r.inference(inputs=[np.load(x) for x in job["inputs"]], data_format="nchw")
    np.savez(job["result"], *outs)
    r.release()


def cosine(a, b):
    import numpy as np
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:  # an output quantized to all zeros
        return 1.0 if na == nb else 0.0
    return float(a @ b / (na * nb))


def cells(coss):
    """'least (mean)' over the outputs."""
    return f"{min(coss):.4f} ({sum(coss) / len(coss):.4f})"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--families", help="family directories (default WORK_DIR/families_quick)")
    p.add_argument("--build", help="build tree with rknn_convert and librknnrt.so (default build)")
    p.add_argument("--workdir")
    p.add_argument("--worker")
    args = p.parse_args()
    if args.worker:
        return vendor_worker(args.worker)
    import numpy as np
    import onnx
    sys.path.insert(0, os.path.join(ROOT, "python"))
    models_dir = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    families = args.families or os.path.join(models_dir, "families_quick")
    os.environ["OPENRKNN_LIB_DIR"] = os.path.abspath(args.build or os.path.join(ROOT, "build"))
    from rknnlite.api import RKNNLite
    convert = os.path.join(os.environ["OPENRKNN_LIB_DIR"], "rknn_convert")
    vendor_py = os.environ.get("VENDOR_PYTHON", os.path.join(ROOT, ".venv-vendor", "bin", "python"))
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
        inputs = [os.path.join(d, f"in_{k}.npy") for k in range(len(meta["inputs"]))]
        # The vendor reads the list's paths as given: absolute ones.
        dataset = os.path.join(work, m + ".dataset.txt")
        with open(os.path.join(d, "calib.txt")) as f, open(dataset, "w") as o:
            o.writelines(" ".join(os.path.join(d, p) for p in line.split()) + "\n" for line in f if line.strip())
        rknn, qdq = os.path.join(work, m + ".int8.rknn"), os.path.join(work, m + ".qdq.onnx")
        qdq_float_sigmoid = os.path.join(work, m + ".qdq_float_sigmoid.onnx")
        onnx_model = onnx.load(os.path.join(d, "model.onnx"))
        writer = {o: n.op_type for n in onnx_model.graph.node for o in n.output}
        sigmoid_outputs = [o.name for o in onnx_model.graph.output if writer.get(o.name) == "Sigmoid"]
        base = [convert, os.path.join(d, "model.onnx"), "-t", "rk3588", "--quantize", "--dataset",
                os.path.join(d, "calib.txt"), "-q"]
        subprocess.run(base + ["-o", rknn, "--export-qdq", qdq], check=True)
        rknn_float_sigmoid = os.path.join(work, m + ".float_sigmoid.rknn")
        if sigmoid_outputs:
            subprocess.run(base + ["-o", rknn_float_sigmoid, "--export-qdq", qdq_float_sigmoid,
                                   "--float-layers", ",".join(sigmoid_outputs)], check=True)
        def ours(path):
            r = RKNNLite()
            if r.load_rknn(path) != 0 or r.init_runtime() != 0:
                sys.exit(f"our runtime failed on {path}")
            outs = r.inference(inputs=[np.load(x) for x in inputs], data_format="nchw")
            r.release()
            return cells([cosine(o, rf) for o, rf in zip(outs, refs)])

        def vendor(tag, model, calib):
            job = dict(model=model, dataset=calib, inputs=inputs, result=os.path.join(work, f"{m}.{tag}.npz"))
            job_path = os.path.join(work, f"{m}.{tag}.json")
            json.dump(job, open(job_path, "w"))
            rc = subprocess.run([vendor_py, os.path.abspath(__file__), "--worker", job_path],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            if rc != 0:
                return "toolkit failed" if rc > 0 else f"toolkit crashed (signal {-rc})"
            got = np.load(job["result"])
            return cells([cosine(got[f"arr_{k}"], rf) for k, rf in enumerate(refs)])
        no = "no output Sigmoid"
        print(f"| {m} | {len(refs)} | {ours(rknn)} | {vendor('qdq', qdq, None)} | "
              f"{ours(rknn_float_sigmoid) if sigmoid_outputs else no} | "
              f"{vendor('qdq_float_sigmoid', qdq_float_sigmoid, None) if sigmoid_outputs else no} | "
              f"{vendor('own', os.path.join(d, 'model.onnx'), dataset)} |", flush=True)


if __name__ == "__main__":
    main()
