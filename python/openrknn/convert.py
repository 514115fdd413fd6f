"""ONNX -> .rknn in process, through libopenrknn_convert.so (openrknn_convert.h)."""
import ctypes
import json
import os

from . import _capi as C


class ConvertError(Exception):
    pass


def convert_onnx(model, config, base_dir=None):
    """Converts an ONNX model (a path, or the bytes of a ModelProto) with `config`, a dict of the
    vendor YAML config's keys (docs/convert.md). Returns the .rknn bytes; raises ConvertError."""
    lib = C.converter()
    out = ctypes.c_void_p()
    size = ctypes.c_size_t()
    cfg = json.dumps(config).encode()  # JSON is YAML: the converter's config reader takes it as is
    base = os.fsencode(base_dir) if base_dir else None
    if isinstance(model, (bytes, bytearray)):
        data = bytes(model)
        ret = lib.orknn_convert_onnx(None, data, len(data), cfg, base, ctypes.byref(out), ctypes.byref(size))
    else:
        ret = lib.orknn_convert_onnx(os.fsencode(model), None, 0, cfg, base, ctypes.byref(out), ctypes.byref(size))
    if ret != 0:
        raise ConvertError(lib.orknn_last_error().decode("utf-8", "replace") or f"conversion failed ({ret})")
    try:
        return ctypes.string_at(out, size.value)
    finally:
        lib.orknn_free(out)
