#!/usr/bin/env python3
"""The bridge to the board: our calibration exported as QDQ ONNX (rknn_convert --export-qdq) and
built by the vendor's rknn-toolkit2 without a calibration of its own, against the toolkit's own INT8
calibration of the same model on the same data set, and against our INT8 model; each output
compared with ONNX Runtime fp32 on held-out inputs (cosine, mean over the inputs).

    .venv/bin/python bench/vendor_parity/qdq_bridge.py [--models resnet18,mobilenet_v2] [--workdir DIR]

bench/vendor_parity/run.sh sets up .venv-vendor; run it once first. Models: the torchvision test
models (ORKNN_MODELS_DIR, default tests/models/work, from scripts/prepare_test_models.sh), calibrated
on calib/torchvision.txt (normal algorithm, both toolkits), evaluated on the held-out NAME.in.f32
input and on seeded uniform [0, 1) inputs. The vendor's worker runs in .venv-vendor (its `rknn`
package and ours share a name).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EVAL_INPUTS = 4  # the held-out test input and 3 seeded uniform ones


def vendor_worker(job_path):
    import numpy as np
    from rknn.api import RKNN
    job = json.load(open(job_path))
    xs = np.load(job["inputs"])
    out = {}
    for name, path, quant in [("vendor_own", job["onnx"], True), ("vendor_from_qdq", job["qdq"], False)]:
        r = RKNN(verbose=False)
        r.config(target_platform="rk3588")
        if r.load_onnx(path) != 0 or r.build(do_quantization=quant, dataset=job["dataset"] if quant else None) != 0 \
                or r.init_runtime() != 0:
            sys.exit(f"vendor toolkit failed on {path}")
        out[name] = np.stack([r.inference(inputs=[x[None]], data_format="nchw")[0] for x in xs])
        r.release()
    np.savez(job["result"], **out)


def cosine(a, b):
    import numpy as np
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="resnet18,mobilenet_v2")
    p.add_argument("--workdir")
    p.add_argument("--worker")
    args = p.parse_args()
    if args.worker:
        return vendor_worker(args.worker)
    import numpy as np
    import onnxruntime as ort
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from rknnlite.api import RKNNLite
    models_dir = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    build = os.environ.setdefault("OPENRKNN_LIB_DIR", os.path.join(ROOT, "build"))  # librknnrt.so and rknn_convert
    work = args.workdir or tempfile.mkdtemp(prefix="qdq-bridge-")
    os.makedirs(work, exist_ok=True)
    vendor_py = os.environ.get("VENDOR_PYTHON", os.path.join(ROOT, ".venv-vendor", "bin", "python"))
    # The vendor reads the list's paths as given: absolute ones.
    calib = os.path.join(models_dir, "calib", "torchvision.txt")
    dataset = os.path.join(work, "dataset.txt")
    with open(calib) as f, open(dataset, "w") as o:
        for line in f:
            if line.strip():
                o.write(os.path.join(os.path.dirname(calib), line.strip()) + "\n")
    print("| model | ours INT8 | vendor's own INT8 | vendor built from our QDQ export |")
    print("|---|---|---|---|")
    for m in args.models.split(","):
        onnx_path = os.path.join(models_dir, m + ".onnx")
        rknn, qdq = os.path.join(work, m + ".rknn"), os.path.join(work, m + "_qdq.onnx")
        subprocess.run([os.path.join(build, "rknn_convert"), onnx_path, "-t", "rk3588", "-o", rknn, "--quantize",
                        "--dataset", calib, "--export-qdq", qdq, "-q"], check=True)
        rng = np.random.default_rng(0)
        xs = [np.fromfile(os.path.join(models_dir, m + ".in.f32"), np.float32).reshape(3, 224, 224)]
        xs += [rng.random((3, 224, 224), dtype=np.float32) for _ in range(EVAL_INPUTS - 1)]
        xs = np.stack(xs)
        np.save(os.path.join(work, m + "_inputs.npy"), xs)
        sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        ref = [sess.run(None, {name: x[None]})[0] for x in xs]
        r = RKNNLite()
        if r.load_rknn(rknn) != 0 or r.init_runtime() != 0:
            sys.exit(f"our runtime failed on {rknn}")
        ours = [r.inference(inputs=[x[None]], data_format="nchw")[0] for x in xs]
        r.release()
        job = dict(onnx=onnx_path, qdq=qdq, dataset=dataset, inputs=os.path.join(work, m + "_inputs.npy"),
                   result=os.path.join(work, m + "_vendor.npz"))
        job_path = os.path.join(work, m + "_job.json")
        json.dump(job, open(job_path, "w"))
        subprocess.run([vendor_py, os.path.abspath(__file__), "--worker", job_path], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        v = np.load(job["result"])

        def mean_cos(outs):
            return np.mean([cosine(o, rf) for o, rf in zip(outs, ref)])
        print(f"| {m} | {mean_cos(ours):.5f} | {mean_cos(v['vendor_own']):.5f} | {mean_cos(v['vendor_from_qdq']):.5f} |")


if __name__ == "__main__":
    main()
