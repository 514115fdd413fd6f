"""ONNX -> .rknn and the per-layer accuracy analysis, in process, through libopenrknn_convert.so
(openrknn_convert.h)."""
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


def analyze_accuracy(onnx_path, cut, model, input_files):
    """The per-tensor float-vs-quantized report (JSON text, docs/inspect.md) of `model` (.rknn
    bytes) against `onnx_path`; `cut`: the subgraph cut it was converted with ({"inputs": [...],
    "outputs": [...]} or {}). Raises ConvertError."""
    lib = C.converter()
    report = ctypes.c_void_p()
    files = (ctypes.c_char_p * max(len(input_files), 1))(*[os.fsencode(p) for p in input_files])
    data = bytes(model)
    ret = lib.orknn_accuracy_analysis(os.fsencode(onnx_path), json.dumps(cut).encode(), data, len(data),
                                      files, len(input_files), ctypes.byref(report))
    if ret != 0:
        raise ConvertError(lib.orknn_last_error().decode("utf-8", "replace") or f"accuracy analysis failed ({ret})")
    try:
        return ctypes.string_at(report.value).decode("utf-8", "replace")
    finally:
        lib.orknn_free(report)


def error_analysis_text(report):
    """The vendor's error_analysis.txt layout from our report (a parsed accuracy JSON): one row per
    compared tensor, entire and single, cosine and euclidean distance."""
    def num(v, fmt):
        return v if isinstance(v, str) else format(v, fmt)

    lines = [
        "# entire: the quantized model run from the inputs: errors accumulate layer by layer.",
        "# single: each layer alone, fed the float values: what quantizing that layer costs.",
        "# cos: cosine similarity with the float model's tensor; euc: euclidean distance.",
        "",
        f"{'layer_name':<64}{'entire':>24}{'single':>24}",
        f"{'':<64}{'cos':>12}{'euc':>12}{'cos':>12}{'euc':>12}",
        "-" * 112,
    ]
    for r in report["rows"]:
        name = f"[{r['op'] if r['node'] else 'Input'}] {r['tensor']}"
        e, s = r["entire"], r["single"]
        lines.append(f"{name:<64}{num(e['cosine'], '.5f'):>12}{num(e['euclidean'], '.5g'):>12}"
                     f"{num(s['cosine'], '.5f'):>12}{num(s['euclidean'], '.5g'):>12}")
    return "\n".join(lines) + "\n"
