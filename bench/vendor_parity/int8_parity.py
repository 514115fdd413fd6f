#!/usr/bin/env python3
"""INT8 side by side with the vendor's rknn-toolkit2: for each model and calibration algorithm
(normal, kl_divergence, mmse), our INT8 model and the toolkit's, both calibrated on the same data
set; and the bridge to the board: our normal calibration exported as QDQ ONNX (rknn_convert
--export-qdq) and built by the toolkit without a calibration of its own. Each output is compared
with ONNX Runtime fp32 on held-out inputs: cosine, mean over the inputs (the vendor's through its
simulator).

    .venv/bin/python bench/vendor_parity/int8_parity.py [--models resnet18,...] [--algorithms normal,kl,mmse]
        [--workdir DIR] [--build DIR] [--vendor-from-docs] [--convert-args "..."]

bench/vendor_parity/run.sh sets up .venv-vendor; run it once first. Models: the torchvision test
models (ORKNN_MODELS_DIR, default tests/models/work, from scripts/prepare_test_models.sh), calibrated
on calib/torchvision.txt, evaluated on the held-out NAME.in.f32 input and on seeded uniform [0, 1)
inputs. The vendor's worker runs in .venv-vendor (its `rknn` package and ours share a name).

--build: the build directory holding rknn_convert and librknnrt.so (default: OPENRKNN_LIB_DIR, else
build/). --vendor-from-docs: no vendor runs; the vendor's cells are read from the results table of
docs/quantization.md (its numbers are deterministic), and the QDQ column is left out: a quick check
of a converter change. --convert-args: extra rknn_convert options for our side (e.g.
"--bias-correction --kl-keep-tails"). The last line counts the cells where ours is at least as close to float.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EVAL_INPUTS = 4  # the held-out test input and 3 seeded uniform ones
VENDOR_ALGORITHM = {"normal": "normal", "kl": "kl_divergence", "mmse": "mmse"}


def vendor_worker(job_path):
    """One vendor build (a process each: the toolkit can crash on a model)."""
    import numpy as np
    from rknn.api import RKNN
    job = json.load(open(job_path))
    xs = np.load(job["inputs"])
    algorithm = job["algorithm"]  # None: build the QDQ model without calibrating
    r = RKNN(verbose=False)
    r.config(target_platform="rk3588", quantized_algorithm=VENDOR_ALGORITHM[algorithm or "normal"])
    quant = algorithm is not None
    if r.load_onnx(job["model"]) != 0 or r.build(do_quantization=quant, dataset=job["dataset"] if quant else None) != 0 \
            or r.init_runtime() != 0:
        sys.exit(f"vendor toolkit failed on {job['model']}")
    np.save(job["result"], np.stack([r.inference(inputs=[x[None]], data_format="nchw")[0] for x in xs]))
    r.release()


def cosine(a, b):
    import numpy as np
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def documented_vendor_cells():
    """(model, algorithm) -> the vendor's cell of docs/quantization.md's results table."""
    cells = {}
    header = None
    for line in open(os.path.join(ROOT, "docs", "quantization.md")):
        if not line.startswith("|"):
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols[0] == "model":
            header = cols
        elif header and not cols[0].startswith("---"):
            for name, value in zip(header[1:], cols[1:]):
                if name.endswith(": vendor"):
                    cells[(cols[0], name.split(":")[0])] = value
    return cells


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,mobilenet_v3_small,squeezenet1_1,"
                   "shufflenet_v2_x1_0,efficientnet_b0")
    p.add_argument("--algorithms", default="normal,kl,mmse")
    p.add_argument("--workdir")
    p.add_argument("--build")
    p.add_argument("--vendor-from-docs", action="store_true")
    p.add_argument("--convert-args", default="")
    p.add_argument("--worker")
    args = p.parse_args()
    if args.worker:
        return vendor_worker(args.worker)
    import numpy as np
    import onnxruntime as ort
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from rknnlite.api import RKNNLite
    models_dir = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    if args.build:
        os.environ["OPENRKNN_LIB_DIR"] = os.path.abspath(args.build)
    build = os.environ.setdefault("OPENRKNN_LIB_DIR", os.path.join(ROOT, "build"))  # librknnrt.so and rknn_convert
    documented = documented_vendor_cells() if args.vendor_from_docs else None
    extra_args = shlex.split(args.convert_args)
    wins = cells_compared = 0
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
    algorithms = args.algorithms.split(",")
    head = " | ".join(f"{a}: ours | {a}: vendor" for a in algorithms)
    qdq_column = "normal" in algorithms and documented is None
    print(f"| model | {head} |" + (" vendor from our QDQ export (normal) |" if qdq_column else ""))
    print("|---|" + "---|---|" * len(algorithms) + ("---|" if qdq_column else ""))
    for m in args.models.split(","):
        onnx_path = os.path.join(models_dir, m + ".onnx")
        qdq = os.path.join(work, m + "_qdq.onnx")
        rng = np.random.default_rng(0)
        xs = [np.fromfile(os.path.join(models_dir, m + ".in.f32"), np.float32).reshape(3, 224, 224)]
        xs += [rng.random((3, 224, 224), dtype=np.float32) for _ in range(EVAL_INPUTS - 1)]
        xs = np.stack(xs)
        np.save(os.path.join(work, m + "_inputs.npy"), xs)
        sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        ref = [sess.run(None, {name: x[None]})[0] for x in xs]

        def mean_cos(outs):
            return np.mean([cosine(o, rf) for o, rf in zip(outs, ref)])
        ours = {}
        for a in algorithms:
            rknn = os.path.join(work, f"{m}.{a}.rknn")
            extra = (["--export-qdq", qdq] if a == "normal" and qdq_column else []) + extra_args
            subprocess.run([os.path.join(build, "rknn_convert"), onnx_path, "-t", "rk3588", "-o", rknn, "--quantize",
                            "--dataset", calib, "--algorithm", a, "-q"] + extra, check=True)
            r = RKNNLite()
            if r.load_rknn(rknn) != 0 or r.init_runtime() != 0:
                sys.exit(f"our runtime failed on {rknn}")
            ours[a] = mean_cos([r.inference(inputs=[x[None]], data_format="nchw")[0] for x in xs])
            r.release()
        def vendor(tag, model, algorithm):
            if documented is not None:
                return documented.get((m, algorithm), "-")
            job = dict(model=model, algorithm=algorithm, dataset=dataset, inputs=os.path.join(work, m + "_inputs.npy"),
                       result=os.path.join(work, f"{m}_{tag}.npy"))
            job_path = os.path.join(work, f"{m}_{tag}.json")
            json.dump(job, open(job_path, "w"))
            rc = subprocess.run([vendor_py, os.path.abspath(__file__), "--worker", job_path],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            if rc != 0:
                return "toolkit failed" if rc > 0 else f"toolkit crashed (signal {-rc})"
            return f"{mean_cos(np.load(job['result'])):.5f}"
        theirs = {a: vendor(a, onnx_path, a) for a in algorithms}
        for a in algorithms:
            try:
                wins += round(ours[a], 5) >= float(theirs[a])
                cells_compared += 1
            except ValueError:  # the toolkit failed: no number
                pass
        cells = " | ".join(f"{ours[a]:.5f} | {theirs[a]}" for a in algorithms)
        qdq_cell = f" {vendor('qdq', qdq, None)} |" if qdq_column else ""
        print(f"| {m} | {cells} |{qdq_cell}", flush=True)
    print(f"\nours at least as close to float as the vendor's (5 decimals): {wins} of {cells_compared} cells")


if __name__ == "__main__":
    main()
