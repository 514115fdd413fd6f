"""OpenRKNN's own Python module: what goes beyond the vendor's rknn.api / rknnlite.api surface.

- openrknn.convert.convert_onnx: ONNX -> .rknn bytes in process;
- openrknn.runtime.Context: one librknnrt.so context.
"""
__version__ = "0.1.0"
