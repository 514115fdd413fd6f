#!/usr/bin/env python3
"""The real-data checks of the INT8 calibration options (docs/quantization.md): our INT8 models on
held-out inputs calibration never saw, against ONNX Runtime fp32, with and without converter options.

    .venv/bin/python bench/vendor_parity/int8_real_data.py [--build DIR] [--convert-args="..."]
        [--classifiers efficientnet_b0:kl,mobilenet_v2:normal,...]

- PP-OCR's trained direction classifier (ppocr_cls, mmse and normal, calibrated on calib/ppocr_cls.txt):
  P(true orientation) of the 8 held-out lines (calib/ppocr_cls/test_NN.u8) and the largest change
  from float.
- The torchvision classifiers on the held-out photos (calib/images/test_NN.u8, calibrated on
  calib/images.txt): the lowest and the mean cosine over the 6 photos.
Inputs and calibration sets come from scripts/prepare_test_models.sh (ORKNN_MODELS_DIR, default
tests/models/work), as for tests/models/int8_models_test.cc; `--build` as in int8_parity.py.
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

from toolkits import cosine

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build")
    p.add_argument("--convert-args", default="")
    p.add_argument("--classifiers", default="efficientnet_b0:kl,mobilenet_v2:normal,mobilenet_v3_small:normal,"
                   "resnet18:normal")
    p.add_argument("--cls-algorithms", default="mmse,normal")
    args = p.parse_args()
    if args.build:
        os.environ["OPENRKNN_LIB_DIR"] = os.path.abspath(args.build)
    build = os.environ.setdefault("OPENRKNN_LIB_DIR", os.path.join(ROOT, "build"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from rknnlite.api import RKNNLite
    models = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    calib = os.path.join(models, "calib")
    extra = shlex.split(args.convert_args)
    work = tempfile.mkdtemp(prefix="int8-real-")

    def run_int8(onnx, conv_args, inputs):
        rknn = os.path.join(work, "m.rknn")
        subprocess.run([os.path.join(build, "rknn_convert"), onnx, "-t", "rk3588", "-o", rknn, "--quantize", "-q"]
                       + conv_args + extra, check=True)
        r = RKNNLite()
        if r.load_rknn(rknn) != 0 or r.init_runtime() != 0:
            sys.exit(f"our runtime failed on {rknn}")
        outs = [r.inference(inputs=[x[None]], data_format="nhwc")[0] for x in inputs]
        r.release()
        return outs

    # PP-OCR direction classifier.
    onnx = os.path.join(models, "ppocr_cls.onnx")
    lines = [np.fromfile(os.path.join(calib, "ppocr_cls", f"test_{i:02d}.u8"), np.uint8).reshape(48, 192, 3)
             for i in range(8)]
    sess = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    want = [sess.run(None, {name: ((x.astype(np.float32) - 127.5) / 127.5).transpose(2, 0, 1)[None]})[0].ravel()
            for x in lines]  # the model ends in Softmax
    for alg in args.cls_algorithms.split(","):
        got = run_int8(onnx, ["--input-shape", "x=1,3,48,192", "--mean", "127.5,127.5,127.5", "--std",
                              "127.5,127.5,127.5", "--dataset", os.path.join(calib, "ppocr_cls.txt"), "--algorithm",
                              alg], lines)
        got = [g.ravel() for g in got]
        cells = [f"{want[i][i % 2]:.3f}->{got[i][i % 2]:.3f}" for i in range(8)]
        worst = max(abs(got[i][i % 2] - want[i][i % 2]) for i in range(8))
        wrong = sum(int(np.argmax(got[i]) != i % 2) for i in range(8))
        print(f"ppocr_cls {alg}: P(truth) float->int8 {' '.join(cells)}; largest change {worst:.3f}, misread {wrong}",
              flush=True)

    # Classifiers on held-out photos.
    photos = [np.fromfile(os.path.join(calib, "images", f"test_{i:02d}.u8"), np.uint8).reshape(224, 224, 3)
              for i in range(6)]
    for spec in filter(None, args.classifiers.split(",")):
        m, alg = spec.split(":")
        onnx = os.path.join(models, m + ".onnx")
        sess = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        want = [sess.run(None, {name: (x.astype(np.float32) / 255).transpose(2, 0, 1)[None]})[0] for x in photos]
        got = run_int8(onnx, ["--mean", "0,0,0", "--std", "255,255,255", "--dataset",
                              os.path.join(calib, "images.txt"), "--algorithm", alg], photos)
        cos = [cosine(g, w) for g, w in zip(got, want)]
        print(f"{m} {alg} held-out photos: cosine min {min(cos):.4f} mean {np.mean(cos):.4f} "
              f"({' '.join(f'{c:.4f}' for c in cos)})", flush=True)


if __name__ == "__main__":
    main()
