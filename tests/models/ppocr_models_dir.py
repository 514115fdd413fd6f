"""Prints the folder that holds the PP-OCR ONNX models of the pinned rapidocr-onnxruntime package
(requirements/test.txt): ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx and
ch_ppocr_mobile_v2.0_cls_infer.onnx. Used by scripts/prepare_test_models.sh and scripts/demo.sh.

The package is located without being imported: its OCR pipeline needs packages the project does not
install (setup.sh installs it with --no-deps, for the model files only).
"""
import importlib.util
import os
import sys

spec = importlib.util.find_spec("rapidocr_onnxruntime")
if spec is None or spec.origin is None:
    sys.exit("rapidocr-onnxruntime (the PP-OCR models) is not installed in this python: run scripts/setup.sh")
print(os.path.join(os.path.dirname(spec.origin), "models"))
