#!/usr/bin/python3
"""The PP-OCR family (docs/model_families.md): the real trained PP-OCRv4 detector and recogniser and
the PP-OCR mobile v2 direction classifier of PyPI rapidocr-onnxruntime (requirements/test.txt), on
rendered text, normalised as PaddleOCR does.

Usage: .venv/bin/python export_ppocr.py OUT_DIR [--size full|test] [--only a,b] [--force] [--list]

  ppocrv4_det  page 1x3x480x480 (test: 1x3x320x320), ImageNet mean/std; the zoo quantizes it
  ppocrv4_rec  text line 1x3x48x320, mean/std 0.5; the zoo keeps it fp16
  ppocr_cls    text line 1x3x48x192, mean/std 0.5
The models' inputs have dynamic dims; the converter pins them to these shapes. Pages and lines come
from the INT8 tests' renderers (tests/models/make_calibration_sets.py, render_ocr_inputs.py).
"""
import os
import shutil
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # importing the renderers must not leave __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import make_calibration_sets as sets  # noqa: E402
import render_ocr_inputs as ocr  # noqa: E402

MODELS = {  # name: (file in the package, zoo quantizes it)
    "ppocrv4_det": ("ch_PP-OCRv4_det_infer.onnx", True),
    "ppocrv4_rec": ("ch_PP-OCRv4_rec_infer.onnx", False),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", False),
}
TEXTS = ["Invoice 4711", "Total 99.50 EUR", "hello world", "ORDER NO 2023-77", "The quick brown fox",
         "Delivery 15:30", "PAYMENT DUE", "lazy dog 8675309", "OpenRKNN test 42"]


def nchw(img, mean, std):
    x = np.asarray(img, np.float32) / 255
    return ((x - np.array(mean, np.float32)) / np.array(std, np.float32)).transpose(2, 0, 1)[None].astype(np.float32)


def export_one(name, d, size_kind, n_calib, assets):
    shutil.copyfile(os.path.join(assets, MODELS[name][0]), os.path.join(d, "model.onnx"))
    if name == "ppocrv4_det":
        side = 480 if size_kind == "full" else 320
        mean, std = ocr.IMAGENET_MEAN, ocr.IMAGENET_STD
        pages = [sets.render_page(7 + i).resize((side, side)) for i in range(n_calib + 1)]
        images = [nchw(p, mean, std) for p in pages]
        source = "rapidocr-onnxruntime PP-OCRv4 det"
    else:
        width = 320 if name == "ppocrv4_rec" else 192
        lines = [ocr.render_line(width, 48, TEXTS[i % len(TEXTS)], 24 + (i * 3) % 11, seed=100 + i)
                 for i in range(n_calib + 1)]
        images = [nchw(line, (0.5,) * 3, (0.5,) * 3) for line in lines]
        source = "rapidocr-onnxruntime " + ("PP-OCRv4 rec" if name == "ppocrv4_rec" else "PP-OCR mobile v2 cls")
    zoo_int8 = MODELS[name][1]
    common.write_model_dir(d, name, "OCR", source, [("x", images[0])],
                           [[c] for c in images[1:]] if zoo_int8 else None, zoo_int8)


def main():
    args = common.parse_args(__doc__.splitlines()[0], list(MODELS))
    assets = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "ppocr_models_dir.py")],
                            check=True, capture_output=True, text=True).stdout.strip()
    return common.run_exports(args, lambda name, d: export_one(name, d, args.size, args.calib, assets))


if __name__ == "__main__":
    sys.exit(main())
