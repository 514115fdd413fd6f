#!/usr/bin/env python3
"""One model run in either toolkit, for the side-by-side scripts of bench/vendor_parity
(int8_parity.py, detector_bridge.py, model_parity.py), and the output metrics they share.

Run as a program (`.venv-vendor/bin/python toolkits.py JOB.json`) it is the vendor's side: one build
and inference in the vendor's rknn-toolkit2. run_vendor() starts it in .venv-vendor, a process per
build: the toolkit crashes on some models, and its `rknn` package and ours share a name.

A sample is a list of .npy paths, one per model input, each holding the input with its batch
dimension (float32 NCHW for images, fed as they are: no mean/std on either side).
"""
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENDOR_ALGORITHM = {"normal": "normal", "kl": "kl_divergence", "mmse": "mmse"}
# A build mode: "fp16" (no quantization), "qdq" (a QDQ model built without calibration: its own
# scales) or a calibration algorithm of VENDOR_ALGORITHM.


def vendor_job(job_path):
    """The vendor's side of run_vendor(); saves every output of every sample."""
    import numpy as np
    from rknn.api import RKNN
    job = json.load(open(job_path))
    mode = job["mode"]
    r = RKNN(verbose=False)
    r.config(target_platform="rk3588", quantized_algorithm=VENDOR_ALGORITHM.get(mode, "normal"))
    calibrate = mode in VENDOR_ALGORITHM
    if r.load_onnx(job["model"], inputs=job["input_names"], input_size_list=job["input_shapes"]) != 0 \
            or r.build(do_quantization=calibrate, dataset=job["dataset"] if calibrate else None) != 0 \
            or r.init_runtime() != 0:
        sys.exit(f"vendor toolkit failed on {job['model']}")
    results = {}
    for i, sample in enumerate(job["samples"]):
        for k, out in enumerate(r.inference(inputs=[np.load(p) for p in sample], data_format="nchw")):
            results[f"s{i}_o{k}"] = out
    np.savez(job["result"], **results)
    r.release()


def write_dataset(path, samples):
    """The calibration list both toolkits read: one line per sample, its inputs' absolute paths."""
    with open(path, "w") as f:
        f.writelines(" ".join(os.path.abspath(p) for p in sample) + "\n" for sample in samples)
    return path


def run_vendor(work, tag, model, mode, samples, dataset=None, input_names=None, input_shapes=None):
    """The vendor's outputs ([sample][output] arrays), or a string saying how the toolkit failed.
    The toolkit is deterministic: a result already in `work` for the same job is reused."""
    import numpy as np
    job = dict(model=os.path.abspath(model), mode=mode, dataset=dataset, samples=samples,
               input_names=input_names, input_shapes=input_shapes)
    digest = hashlib.sha256(json.dumps(job, sort_keys=True).encode())
    with open(model, "rb") as f:  # a model rewritten under the same name is another job
        digest.update(f.read())
    key = digest.hexdigest()[:12]
    job["result"] = os.path.join(work, f"{tag}.vendor.{key}.npz")
    if not os.path.exists(job["result"]):
        job_path = os.path.join(work, f"{tag}.vendor.{key}.json")
        json.dump(job, open(job_path, "w"))
        vendor_py = os.environ.get("VENDOR_PYTHON", os.path.join(ROOT, ".venv-vendor", "bin", "python"))
        rc = subprocess.run([vendor_py, os.path.abspath(__file__), job_path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        if rc != 0:
            return "toolkit failed" if rc > 0 else f"toolkit crashed (signal {-rc})"
    got = np.load(job["result"])
    outputs = len([k for k in got.files if k.startswith("s0_")])
    return [[got[f"s{i}_o{k}"] for k in range(outputs)] for i in range(len(samples))]


def set_build(build):
    """Points our Python API at BUILD's librknnrt.so (default: OPENRKNN_LIB_DIR, else build/) and
    returns the directory, which also holds rknn_convert."""
    if build:
        os.environ["OPENRKNN_LIB_DIR"] = os.path.abspath(build)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    return os.environ.setdefault("OPENRKNN_LIB_DIR", os.path.join(ROOT, "build"))


def convert_ours(build, model, out, args):
    subprocess.run([os.path.join(build, "rknn_convert"), model, "-t", "rk3588", "-o", out, "-q"] + args, check=True)


def run_ours(rknn, samples):
    """Our outputs ([sample][output] arrays) of the .rknn model on the samples."""
    import numpy as np
    from rknnlite.api import RKNNLite
    r = RKNNLite()
    if r.load_rknn(rknn) != 0 or r.init_runtime() != 0:
        sys.exit(f"our runtime failed on {rknn}")
    outs = [r.inference(inputs=[np.load(p) for p in sample], data_format="nchw") for sample in samples]
    r.release()
    return outs


def cosine(a, b):
    import numpy as np
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:  # an output quantized to all zeros
        return 1.0 if na == nb else 0.0
    return float(a @ b / (na * nb))


def sqnr_db(got, want):
    """Signal to quantization noise: the reference's energy over the error's, in dB."""
    import numpy as np
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    noise = np.sum((got - want) ** 2)
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(want ** 2) / noise))


if __name__ == "__main__":
    vendor_job(sys.argv[1])
