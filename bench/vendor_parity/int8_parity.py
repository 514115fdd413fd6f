#!/usr/bin/env python3
"""INT8 side by side with the vendor's rknn-toolkit2: for each model and calibration algorithm
(normal, kl_divergence, mmse), our INT8 model and the toolkit's, both calibrated on the same data
set; and the bridge to the board: our normal calibration exported as QDQ ONNX (rknn_convert
--export-qdq) and built by the toolkit without a calibration of its own. Each output is compared
with ONNX Runtime fp32 on held-out inputs: cosine, mean over the inputs (the vendor's through its
simulator; bench/vendor_parity/toolkits.py runs both toolkits).

    .venv/bin/python bench/vendor_parity/int8_parity.py [--models resnet18,...] [--algorithms normal,kl,mmse]
        [--workdir DIR] [--build DIR] [--vendor-from-docs] [--convert-args "..."]

bench/vendor_parity/run.sh sets up .venv-vendor; run it once first. Models: the torchvision test
models (ORKNN_MODELS_DIR, default tests/models/work, from scripts/prepare_test_models.sh), calibrated
on calib/torchvision.txt, evaluated on the held-out NAME.in.f32 input and on seeded uniform [0, 1)
inputs.

--build: the build directory holding rknn_convert and librknnrt.so (default: OPENRKNN_LIB_DIR, else
build/). --vendor-from-docs: no vendor runs; the vendor's cells are read from the results table of
docs/quantization.md (its numbers are deterministic), and the QDQ column is left out: a quick check
of a converter change. --convert-args: extra rknn_convert options for our side (e.g.
"--bias-correction --kl-keep-tails"). The last line counts the cells where ours is at least as close to float.
"""
import argparse
import os
import shlex
import tempfile

from toolkits import convert_ours, cosine, run_ours, run_vendor, set_build, write_dataset

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVAL_INPUTS = 4  # the held-out test input and 3 seeded uniform ones


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
    args = p.parse_args()
    import numpy as np
    import onnxruntime as ort
    models_dir = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    build = set_build(args.build)
    documented = documented_vendor_cells() if args.vendor_from_docs else None
    extra_args = shlex.split(args.convert_args)
    wins = cells_compared = 0
    work = args.workdir or tempfile.mkdtemp(prefix="qdq-bridge-")
    os.makedirs(work, exist_ok=True)
    calib = os.path.join(models_dir, "calib", "torchvision.txt")
    with open(calib) as f:
        dataset = write_dataset(os.path.join(work, "dataset.txt"),
                                [[os.path.join(os.path.dirname(calib), line.strip())] for line in f if line.strip()])
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
        samples = []
        for i, x in enumerate(xs):
            np.save(os.path.join(work, f"{m}_input{i}.npy"), x[None])
            samples.append([os.path.join(work, f"{m}_input{i}.npy")])
        sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        ref = [sess.run(None, {name: x[None]})[0] for x in xs]

        def mean_cos(outs):
            return np.mean([cosine(o[0], rf) for o, rf in zip(outs, ref)])
        ours = {}
        for a in algorithms:
            rknn = os.path.join(work, f"{m}.{a}.rknn")
            extra = (["--export-qdq", qdq] if a == "normal" and qdq_column else []) + extra_args
            convert_ours(build, onnx_path, rknn, ["--quantize", "--dataset", calib, "--algorithm", a] + extra)
            ours[a] = mean_cos(run_ours(rknn, samples))

        def vendor(model, mode):
            if documented is not None:
                return documented.get((m, mode), "-")
            outs = run_vendor(work, f"{m}.{mode}", model, mode, samples, dataset)
            return outs if isinstance(outs, str) else f"{mean_cos(outs):.5f}"
        theirs = {a: vendor(onnx_path, a) for a in algorithms}
        for a in algorithms:
            try:
                wins += round(ours[a], 5) >= float(theirs[a])
                cells_compared += 1
            except ValueError:  # the toolkit failed: no number
                pass
        cells = " | ".join(f"{ours[a]:.5f} | {theirs[a]}" for a in algorithms)
        qdq_cell = f" {vendor(qdq, 'qdq')} |" if qdq_column else ""
        print(f"| {m} | {cells} |{qdq_cell}", flush=True)
    print(f"\nours at least as close to float as the vendor's (5 decimals): {wins} of {cells_compared} cells")


if __name__ == "__main__":
    main()
