#!/usr/bin/env python3
"""What Python's RKNNLite.inference() adds over a C client of the same librknnrt.so.

For each model: converts it (rknn_convert, mean/std so that uint8 NHWC images go in, as users feed
them), then alternates rounds of the C client (bench/rknn_bench --uint8-nhwc: rknn_inputs_set of a
uint8 NHWC image + rknn_run + rknn_outputs_get(want_float) + release, the per-frame work a C
application does) with rounds of RKNNLite.inference([img]) in this process, both at the default
core mask (one thread). Prints per model the median frame time of each and the difference.
Targets (issue: Python package): at most 5 % on resnet18, at most 0.2 ms on a small model.

Usage (after scripts/test.sh, which builds and prepares the models):
  OPENRKNN_LIB_DIR=build PYTHONPATH=python .venv/bin/python bench/python_overhead.py [--rounds N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.environ.get("OPENRKNN_LIB_DIR", os.path.join(ROOT, "build")))
MODELS = os.path.join(ROOT, "tests", "models", "work")
# name, ONNX file, pinned input shape, target ratio or absolute bound
CASES = [
    ("resnet18", "resnet18.onnx", None, "5 %"),
    ("ppocr_cls", "ppocr_cls.onnx", "1,3,48,192", "0.2 ms"),
    ("mobilenet_v3_small", "mobilenet_v3_small.onnx", None, "0.2 ms"),
]


def c_median_ms(model, iters):
    out = subprocess.run([os.path.join(BUILD, "bench", "rknn_bench"), model, "--uint8-nhwc", "--iters", str(iters),
                          "--warmup", "3", "--min-time-ms", "0"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["median_ms"]


def py_median_ms(lite, img, iters):
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        if lite.inference(inputs=[img]) is None:
            raise SystemExit("python_overhead: inference failed")
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5, help="alternating C / Python rounds per model")
    ap.add_argument("--iters", type=int, default=30, help="frames per round")
    args = ap.parse_args()
    from rknnlite.api import RKNNLite

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, onnx_file, shape, target in CASES:
            src = os.path.join(MODELS, onnx_file)
            model = os.path.join(tmp, name + ".rknn")
            cmd = [os.path.join(BUILD, "rknn_convert"), src, "-o", model, "-t", "rk3588", "-q",
                   "--mean", "127.5,127.5,127.5", "--std", "127.5,127.5,127.5"]
            if shape:
                cmd += ["--input-shape", shape]
            subprocess.run(cmd, check=True)
            lite = RKNNLite()
            assert lite.load_rknn(model) == 0 and lite.init_runtime() == 0
            info = lite._s.ctx.inputs[0]
            n, h, w, c = info.dims if info.fmt == 1 else [info.dims[i] for i in (0, 2, 3, 1)]  # 1: NHWC
            img = np.random.RandomState(0).randint(0, 256, (n, h, w, c)).astype(np.uint8)
            py_median_ms(lite, img, 3)  # warm-up
            c, py = [], []
            for _ in range(args.rounds):
                c.append(c_median_ms(model, args.iters))
                py.append(py_median_ms(lite, img, args.iters))
            lite.release()
            cm, pm = statistics.median(c), statistics.median(py)
            rows.append((name, cm, pm, target))
    print("| model | C client (ms) | RKNNLite.inference (ms) | difference | target |")
    print("|---|---|---|---|---|")
    for name, cm, pm, target in rows:
        print(f"| {name} | {cm:.3f} | {pm:.3f} | {pm - cm:+.3f} ms ({(pm / cm - 1) * 100:+.1f} %) | {target} |")


if __name__ == "__main__":
    sys.exit(main())
