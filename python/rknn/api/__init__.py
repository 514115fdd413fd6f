"""rknn.api.RKNN: the vendor toolkit's class. Conversion runs OpenRKNN's converter in process;
init_runtime() runs the model, built here or loaded from a .rknn file, on this CPU
(docs/python.md lists where it differs from the vendor's)."""
import json
import os
import shutil

import numpy as np

from openrknn import _capi as C
from openrknn._capi import resource
from openrknn.convert import ConvertError, analyze_accuracy, convert_onnx, error_analysis_text
from openrknn.log import Logger
from openrknn.runtime import Context, RknnError
from openrknn.session import PLATFORMS, CoreMasks, Session

__all__ = ["RKNN"]

# config() keywords (the vendor's defaults) that the converter applies.
_APPLIED = {
    "mean_values": None, "std_values": None, "quantized_dtype": "w8a8", "quantized_algorithm": "normal",
    "quantized_method": "channel", "float_dtype": "float16", "target_platform": None, "custom_string": None,
    "dynamic_input": None, "auto_hybrid_cos_thresh": 0.98, "auto_hybrid_euc_thresh": None,
}
# Keywords accepted for compatibility; a value other than the default changes nothing on a CPU.
_NO_EFFECT = {
    "quant_img_RGB2BGR": False, "optimization_level": 3, "remove_weight": False, "compress_weight": False,
    "single_core_mode": False, "model_pruning": False, "quantize_weight": False, "remove_reshape": False,
    "sparse_infer": False, "enable_flash_attention": False, "op_target": None, "inputs_yuv_fmt": None, "disable_rules": None, "quantized_hybrid_level": 0,
    "float_dtype_mode": None, "npu_do_output_nhwc": None,
}
DEFAULT_PLATFORM = "rk3566"


class RKNN(CoreMasks):
    def __init__(self, verbose=False, verbose_file=None):
        self._log = Logger(verbose, verbose_file)
        self._s = Session(self._log)
        self._config = dict(_APPLIED)
        self._config.update(_NO_EFFECT)
        self._onnx = None  # (path, inputs, outputs, input_size_list)
        self._tmp = None  # load_pytorch's ONNX export

    # ---- conversion ----
    def config(self, **kwargs):
        """Stores the conversion settings (section 3 of the vendor's reference). Keywords without
        effect on a CPU are accepted and named once in a warning."""
        for key, value in kwargs.items():
            if key not in _APPLIED and key not in _NO_EFFECT:
                raise TypeError(f"config() got an unexpected keyword argument '{key}'")
            if key in _NO_EFFECT and value != _NO_EFFECT[key]:
                self._log.warning_once("config", f"{key}={value!r} has no effect on OpenRKNN's CPU runtime; it is "
                                       "accepted and ignored")
            self._config[key] = value
        platform = self._config.get("target_platform")
        if isinstance(platform, str):
            self._config["target_platform"] = platform.lower()
        return 0  # rknn-toolkit2 2.5.0 returns 0 (older references say None)

    def load_onnx(self, model, inputs=None, input_size_list=None, input_initial_val=None, outputs=None):
        if not isinstance(model, (str, os.PathLike)) or not os.path.isfile(model):
            self._log.error("load_onnx", f"'{model}' is not an ONNX file")
            return -1
        if input_initial_val is not None:
            self._log.error("load_onnx", "input_initial_val is not supported by OpenRKNN yet: fold the constant "
                            "input into the ONNX model (onnx-simplifier or onnx.helper) before converting")
            return -1
        for what, names in (("inputs", inputs), ("outputs", outputs)):
            if names is not None and (not isinstance(names, (list, tuple)) or
                                      not all(isinstance(n, str) for n in names)):
                self._log.error("load_onnx", f"{what} must be a list of tensor names, not {names!r}")
                return -1
        if input_size_list is not None:
            if not isinstance(input_size_list, (list, tuple)) or not all(
                    isinstance(s, (list, tuple)) and s and all(isinstance(d, (int, np.integer)) and d > 0 for d in s)
                    for s in input_size_list):
                self._log.error("load_onnx", f"input_size_list must list one shape of positive ints per input, not "
                                f"{input_size_list!r}")
                return -1
        self._onnx = (os.fspath(model), list(inputs or []), list(outputs or []),
                      [list(map(int, s)) for s in input_size_list] if input_size_list else None)
        return 0

    def _unsupported_front_end(self, name):
        self._log.error(name, "OpenRKNN converts ONNX models only: export the model to ONNX and call load_onnx()")
        return -1

    def load_pytorch(self, model, input_size_list):
        """A TorchScript file (torch.jit.save), exported to ONNX with torch's own exporter on
        zero inputs of input_size_list's shapes, then load_onnx. Needs torch."""
        try:
            import torch
        except ImportError:
            self._log.error("load_pytorch", "torch is not installed: install it, or export the model to ONNX "
                            "yourself and call load_onnx()")
            return -1
        if not isinstance(model, (str, os.PathLike)) or not os.path.isfile(model):
            self._log.error("load_pytorch", f"'{model}' is not a TorchScript file")
            return -1
        if not isinstance(input_size_list, (list, tuple)) or not input_size_list:
            self._log.error("load_pytorch", "input_size_list must list one shape per input, e.g. [[1, 3, 224, 224]]")
            return -1
        import inspect
        import tempfile
        self._tmp = tempfile.TemporaryDirectory(prefix="openrknn-")
        path = os.path.join(self._tmp.name, os.path.splitext(os.path.basename(model))[0] + ".onnx")
        try:
            module = torch.jit.load(model, map_location="cpu").eval()
            args = tuple(torch.zeros(*map(int, shape)) for shape in input_size_list)
            kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
            torch.onnx.export(module, args, path, opset_version=13, **kwargs)
        except Exception as e:  # torch raises many kinds; its message says what failed
            self._log.error("load_pytorch", f"torch could not export '{model}' to ONNX: {e}")
            return -1
        return self.load_onnx(path)

    def load_tflite(self, model, **kwargs):
        return self._unsupported_front_end("load_tflite")

    def load_tensorflow(self, tf_pb, inputs=None, input_size_list=None, outputs=None, **kwargs):
        return self._unsupported_front_end("load_tensorflow")

    def load_caffe(self, model, blobs=None, **kwargs):
        return self._unsupported_front_end("load_caffe")

    def load_darknet(self, model, weight, **kwargs):
        return self._unsupported_front_end("load_darknet")

    def build(self, do_quantization=True, dataset=None, rknn_batch_size=None, auto_hybrid=False):
        if self._onnx is None:
            self._log.error("build", "no model: call load_onnx() first")
            return -1
        if rknn_batch_size is not None and (not isinstance(rknn_batch_size, int) or rknn_batch_size < 1):
            self._log.error("build", f"rknn_batch_size must be a positive integer, not {rknn_batch_size!r}")
            return -1
        return self._convert("build", do_quantization, dataset, auto_hybrid=auto_hybrid, batch_size=rknn_batch_size)

    def _conversion_config(self, where, do_quantization, dataset, float_layers=(), auto_hybrid=False,
                           batch_size=None):
        """The converter's config (vendor YAML keys) for the loaded ONNX model; None after a log line."""
        path, inputs, outputs, sizes = self._onnx
        cfg = {k: v for k, v in self._config.items() if k in _APPLIED and v is not None}
        if "target_platform" not in cfg:
            self._log.warning_once(where, f"target_platform is not set: using {DEFAULT_PLATFORM}")
            cfg["target_platform"] = DEFAULT_PLATFORM
        elif cfg["target_platform"] not in PLATFORMS:
            self._log.error(where, f"target_platform '{cfg['target_platform']}' is not one of {', '.join(PLATFORMS)}")
            return None
        cfg["quantize"] = bool(do_quantization)
        if not do_quantization:
            cfg.pop("quantized_dtype", None)
        if inputs:
            cfg["inputs"] = inputs
        if outputs:
            cfg["outputs"] = outputs
        if sizes:
            cfg["input_size_list"] = sizes
        if float_layers:
            cfg["float_layers"] = list(float_layers)
        if auto_hybrid:  # with the config's auto_hybrid_cos_thresh (docs/convert.md "Auto hybrid")
            cfg["auto_hybrid"] = True
        if batch_size and batch_size > 1:
            cfg["rknn_batch_size"] = batch_size
        if dataset is not None:
            if not os.path.isfile(dataset):
                self._log.error(where, f"dataset '{dataset}' is not a file (a text file listing one sample per line)")
                return None
            cfg["dataset"] = os.path.abspath(dataset)
        return cfg

    def _convert(self, where, do_quantization, dataset, float_layers=(), auto_hybrid=False, batch_size=None):
        cfg = self._conversion_config(where, do_quantization, dataset, float_layers, auto_hybrid, batch_size)
        if cfg is None:
            return -1
        path = self._onnx[0]
        try:
            model = convert_onnx(path, cfg)
        except (ConvertError, OSError) as e:
            self._log.error(where, str(e))
            return -1
        self._s.release_context()
        self._s.model = model
        self._log.info(where, f"{path} -> {len(model)} bytes ({'int8' if do_quantization else 'float'})")
        return 0

    def export_rknn(self, export_path, **kwargs):
        if self._s.model is None:
            self._log.error("export_rknn", "no model: call build() or load_rknn() first")
            return -1
        try:
            with open(export_path, "wb") as f:
                f.write(self._s.model)
        except OSError as e:
            self._log.error("export_rknn", f"cannot write '{export_path}': {e.strerror}")
            return -1
        return 0

    def load_rknn(self, path):
        return self._s.load_rknn(path)

    # ---- running ----
    def init_runtime(self, target=None, device_id=None, perf_debug=False, eval_mem=False, async_mode=False,
                     core_mask=CoreMasks.NPU_CORE_AUTO, fallback_prior_device="cpu"):
        return self._s.init_runtime(target, async_mode=async_mode, core_mask=core_mask, perf_debug=perf_debug)

    def inference(self, inputs, data_format=None, inputs_pass_through=None, get_frame_id=False):
        return self._s.inference(inputs, data_format, inputs_pass_through, get_frame_id)

    def eval_perf(self, is_print=True, fix_freq=True):
        """Per-layer times of one run (the last inference's inputs, else zeros), as the runtime's
        RKNN_QUERY_PERF_DETAIL text; None after a log line."""
        s = self._s
        if s.ctx is None:
            self._log.error("eval_perf", "the runtime is not initialised: call init_runtime() first")
            return None
        try:
            ctx = s.ctx if s.perf else Context(s.model, C.RKNN_FLAG_COLLECT_PERF_MASK)
            if s.last_inputs is not None:
                arrays, fmts, passes, shape_set = s.last_inputs
            else:  # zeros of the (first set's) input shapes
                shape_set = 0 if ctx.shape_sets else None
                infos = ctx.shape_sets[0] if ctx.shape_sets else ctx.inputs
                arrays = [np.zeros(i.dims, np.float32) for i in infos]
                fmts = [i.fmt if len(i.dims) == 4 else C.RKNN_TENSOR_UNDEFINED for i in infos]
                passes = [0] * len(arrays)
            ctx.run(arrays, fmts, passes, shape_set)
            text = ctx.perf_detail()
            if ctx is not s.ctx:
                ctx.destroy()
        except (RknnError, OSError) as e:
            self._log.error("eval_perf", str(e))
            return None
        if is_print:
            print(text)
        return text

    def eval_memory(self, is_print=True):
        """The context's memory in the vendor's dict (bytes); None after a log line."""
        if self._s.ctx is None:
            self._log.error("eval_memory", "the runtime is not initialised: call init_runtime() first")
            return None
        m = self._s.ctx.mem_size()
        total = int(m.total_dma_allocated_size)
        weight, internal = int(m.total_weight_size), int(m.total_internal_size)
        result = {"weight_memory": weight, "internal_memory": internal,
                  "other_memory": max(total - weight - internal, 0), "total_memory": total}
        if is_print:
            for k, v in result.items():
                print(f"{k:16s} {v / 1048576:10.2f} MiB")
        return result

    def get_sdk_version(self):
        return self._s.sdk_version()

    def list_devices(self):
        self._log.info("list_devices", "OpenRKNN runs models on this CPU; there are no devices to list")
        return [], []

    # ---- not in OpenRKNN (yet) ----
    def _not_yet(self, name, instead):
        self._log.error(name, f"not implemented in OpenRKNN yet; {instead}")
        return -1

    def accuracy_analysis(self, inputs, output_dir="./snapshot", target=None, device_id=None):
        """Per-layer error of the built model against its float ONNX model on `inputs` (one image or
        .npy path per model input), as `rknn_inspect accuracy` measures it: writes
        OUTPUT_DIR/error_analysis.txt (the vendor's columns: entire and single, cosine and
        euclidean distance, per tensor) and OUTPUT_DIR/accuracy.json (ours, docs/inspect.md).
        0 / -1."""
        if target is not None:
            self._log.error("accuracy_analysis", f"target '{target}': OpenRKNN analyses on this CPU; call it "
                            "without a target")
            return -1
        if self._onnx is None or self._s.model is None:
            self._log.error("accuracy_analysis", "needs the model built in this session: call load_onnx() and "
                            "build() first")
            return -1
        if isinstance(inputs, (str, os.PathLike)):
            inputs = [inputs]
        if not isinstance(inputs, (list, tuple)) or not all(isinstance(p, (str, os.PathLike)) for p in inputs):
            self._log.error("accuracy_analysis", "inputs must list one image or .npy file path per model input")
            return -1
        path, cut_inputs, cut_outputs, _ = self._onnx
        cut = {k: v for k, v in (("inputs", cut_inputs), ("outputs", cut_outputs)) if v}
        try:
            report = analyze_accuracy(path, cut, self._s.model, [os.fspath(p) for p in inputs])
            os.makedirs(output_dir, exist_ok=True)
            with open(os.path.join(output_dir, "accuracy.json"), "w", encoding="utf-8") as f:
                f.write(report)
            with open(os.path.join(output_dir, "error_analysis.txt"), "w", encoding="utf-8") as f:
                f.write(error_analysis_text(json.loads(report)))
        except (ConvertError, OSError, ValueError) as e:
            self._log.error("accuracy_analysis", str(e))
            return -1
        self._log.info("accuracy_analysis", f"wrote {output_dir}/error_analysis.txt and accuracy.json")
        return 0

    def hybrid_quantization_step1(self, dataset=None, rknn_batch_size=None, proposal=False, proposal_dataset_size=1,
                                  custom_hybrid=None):
        """Calibrates the loaded ONNX model in INT8 and writes, in the current directory,
        NAME.model (what step 2 converts: the ONNX path and the settings), NAME.data (the INT8
        model as calibrated) and NAME.quantization.cfg, whose custom_quantize_layers lists the
        layers to keep in float (edit it; with proposal=True it starts with the layers that lose
        the most on their own, measured on the data set's first sample). 0 / -1."""
        where = "hybrid_quantization_step1"
        if self._onnx is None:
            self._log.error(where, "no model: call load_onnx() first")
            return -1
        if dataset is None:
            self._log.error(where, "needs the calibration data set (dataset=LIST.txt)")
            return -1
        if rknn_batch_size not in (None, 1) or custom_hybrid:
            self._log.error(where, "rknn_batch_size and custom_hybrid are not supported by OpenRKNN yet: list the "
                            "layers to keep in float in NAME.quantization.cfg")
            return -1
        if self._convert(where, True, dataset) != 0:
            return -1
        first = _first_sample(dataset)
        path, inputs, outputs, sizes = self._onnx
        cut = {k: v for k, v in (("inputs", inputs), ("outputs", outputs)) if v}
        try:
            report = json.loads(analyze_accuracy(path, cut, self._s.model, first))
        except (ConvertError, OSError, ValueError) as e:
            self._log.error(where, str(e))
            return -1
        # Every int8 layer the report saw, in graph order: the rows' nodes and the nodes their single
        # runs measured (a Conv whose output tensor the float model lacks shows up only there).
        ops = {row["node"]: row["op"] for row in report["rows"] if row["node"]}
        layers = []  # (node, op or "")
        for row in report["rows"]:
            for node in row["single_int8_nodes"]:
                if all(node != n for n, _ in layers):
                    layers.append((node, ops.get(node, "")))
        proposed = [n for sug in report["suggestions"] for n in sug["nodes"]] if proposal else []
        name = os.path.splitext(os.path.basename(path))[0]
        description = {"onnx": os.path.abspath(path), "config": self._conversion_config(where, True, dataset),
                       "load_onnx": {"inputs": inputs, "outputs": outputs, "input_size_list": sizes}}
        try:
            with open(f"{name}.model", "w", encoding="utf-8") as f:
                json.dump(description, f, indent=1)
            with open(f"{name}.data", "wb") as f:
                f.write(self._s.model)
            with open(f"{name}.quantization.cfg", "w", encoding="utf-8") as f:
                f.write(_quantization_cfg(layers, proposed, report["info"].get("inputs", "")))
        except OSError as e:
            self._log.error(where, f"cannot write {name}.*: {e.strerror}")
            return -1
        self._log.info(where, f"wrote {name}.model, {name}.data, {name}.quantization.cfg")
        return 0

    def hybrid_quantization_step2(self, model_input, data_input, model_quantization_cfg):
        """Converts the model step 1 described with the layers under custom_quantize_layers in
        float and the rest in INT8; then export_rknn / init_runtime as after build(). 0 / -1."""
        where = "hybrid_quantization_step2"
        try:
            with open(model_input, encoding="utf-8") as f:
                description = json.load(f)
            with open(model_quantization_cfg, encoding="utf-8") as f:
                float_layers = _custom_quantize_layers(f.read())
            if not os.path.isfile(data_input):
                raise OSError(2, "No such file", data_input)
        except (OSError, ValueError, KeyError) as e:
            self._log.error(where, f"cannot read the files of hybrid_quantization_step1: {e}")
            return -1
        cfg = dict(description["config"])
        if float_layers:
            cfg["float_layers"] = float_layers
        try:
            model = convert_onnx(description["onnx"], cfg)
        except (ConvertError, OSError) as e:
            self._log.error(where, str(e))
            return -1
        lo = description["load_onnx"]
        self._onnx = (description["onnx"], lo["inputs"], lo["outputs"], lo["input_size_list"])
        self._s.release_context()
        self._s.model = model
        self._log.info(where, f"{len(float_layers)} layer(s) in float: {', '.join(float_layers) or '-'}")
        return 0

    def reg_custom_op(self, custom_op):
        return self._not_yet("reg_custom_op", "custom operators run through the C API's rknn_register_custom_ops")

    def codegen(self, output_path, inputs=None, overwrite=False):
        """Writes a C project that runs the model through the C API: the project's example client
        (examples/rknn_demo.c: init, query, a UINT8 NHWC image input, run, float outputs, top-5),
        the model, and a CMakeLists.txt that builds it against this package's rknn_api.h and
        librknnrt.so (or the vendor's: the client is the same). `inputs`: one picture for the
        client (a .ppm, or a uint8 HxWx3 .npy); without it the client makes a synthetic one. 0 / -1."""
        where = "codegen"
        if self._s.model is None:
            self._log.error(where, "no model: call build() or load_rknn() first")
            return -1
        if os.path.isdir(output_path) and os.listdir(output_path) and not overwrite:
            self._log.error(where, f"'{output_path}' exists and is not empty; pass overwrite=True to write into it")
            return -1
        if inputs is not None and (not isinstance(inputs, (list, tuple)) or len(inputs) != 1):
            self._log.error(where, "inputs: give one picture (a .ppm file or a uint8 HxWx3 .npy) in a list")
            return -1
        demo, include_dir = resource("examples/rknn_demo.c"), resource("include")
        if demo is None or include_dir is None:
            self._log.error(where, "the package's example client or headers are missing: reinstall it")
            return -1
        try:
            os.makedirs(output_path, exist_ok=True)
            shutil.copyfile(demo, os.path.join(output_path, "rknn_demo.c"))
            with open(os.path.join(output_path, "model.rknn"), "wb") as f:
                f.write(self._s.model)
            if inputs:
                _write_ppm(inputs[0], os.path.join(output_path, "input.ppm"))
            with open(os.path.join(output_path, "CMakeLists.txt"), "w", encoding="utf-8") as f:
                f.write(_CODEGEN_CMAKE.format(include=include_dir, lib=C.library_dir()))
        except (OSError, ValueError) as e:
            self._log.error(where, str(e))
            return -1
        self._log.info(where, f"wrote {output_path}: cmake -S {output_path} -B {output_path}/build && "
                       f"cmake --build {output_path}/build && {output_path}/build/rknn_app {output_path}/model.rknn")
        return 0

    def export_encrypted_rknn_model(self, input_model, output_model=None, crypt_level=1):
        self._log.error("export_encrypted_rknn_model", "OpenRKNN's models are an open format and are not "
                        "encrypted; use the model as exported")
        return -1

    def release(self):
        self._s.release()
        self._onnx = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self._log.close()


def _first_sample(dataset):
    """The files of the data set's first sample (one per input), as absolute paths."""
    base = os.path.dirname(os.path.abspath(dataset))
    with open(dataset, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                return [p if os.path.isabs(p) else os.path.join(base, p) for p in line.split()]
    return []


def _quantization_cfg(layers, proposed, inputs_desc):
    """NAME.quantization.cfg: YAML whose custom_quantize_layers (the vendor's key) maps the layers
    to keep in float to float16; the int8 layers are listed as comments to copy from."""
    q = lambda n: "'" + n.replace("'", "''") + "'"  # a YAML single-quoted string
    out = ["# OpenRKNN hybrid quantization (RKNN.hybrid_quantization_step1). Layers listed under",
           "# custom_quantize_layers stay in float; hybrid_quantization_step2 converts the model.",
           "custom_quantize_layers:" + ("" if proposed else " {}")]
    if proposed:
        out.append(f"    # proposed: the int8 layers that lose the most on their own ({inputs_desc})")
        out += [f"    {q(n)}: float16" for n in proposed]
    out.append("# the model's int8 layers (name: op), to copy into custom_quantize_layers:")
    out += [f"#   {q(n)}" + (f": {op}" if op else "") for n, op in layers]
    return "\n".join(out) + "\n"


def _custom_quantize_layers(text):
    """The layer names under custom_quantize_layers in a .quantization.cfg (block or {} form)."""
    names, inside = [], False
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if not raw[0].isspace():
            key, _, rest = line.partition(":")
            inside = key.strip() == "custom_quantize_layers" and rest.strip() in ("", "{}")
            if key.strip() == "custom_quantize_layers" and rest.strip() not in ("", "{}"):
                raise ValueError(f"custom_quantize_layers: expected a block of 'name: float16' lines, not {rest!r}")
            continue
        if inside:
            name, sep, dtype = line.strip().rpartition(":")
            if not sep or not name:
                raise ValueError(f"custom_quantize_layers: expected 'name: float16', not {line.strip()!r}")
            if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
                name = name[1:-1].replace("''", "'") if name[0] == "'" else name[1:-1]
            if dtype.strip() not in ("float16", "float32", "float"):
                raise ValueError(f"custom_quantize_layers: {name}: {dtype.strip()!r} (only float16 keeps a layer in "
                                 "float)")
            names.append(name)
    return names


_CODEGEN_CMAKE = """# Made by RKNN.codegen (OpenRKNN): the C API client examples/rknn_demo.c for model.rknn.
#   cmake -S . -B build && cmake --build build && build/rknn_app model.rknn [input.ppm]
cmake_minimum_required(VERSION 3.10)
project(rknn_app C)
# rknn_api.h and librknnrt.so: OpenRKNN's (the defaults) or the vendor's, on a board.
set(RKNN_INCLUDE_DIR "{include}" CACHE PATH "directory of rknn_api.h")
set(RKNN_LIB_DIR "{lib}" CACHE PATH "directory of librknnrt.so")
add_executable(rknn_app rknn_demo.c)
target_include_directories(rknn_app PRIVATE ${{RKNN_INCLUDE_DIR}})
target_link_libraries(rknn_app PRIVATE ${{RKNN_LIB_DIR}}/librknnrt.so)
set_target_properties(rknn_app PROPERTIES BUILD_RPATH ${{RKNN_LIB_DIR}})
"""


def _write_ppm(src, dst):
    """The picture codegen's client reads: a .ppm as it is, a uint8 HxWx3 .npy as a binary PPM."""
    src = os.fspath(src)
    if src.lower().endswith(".ppm"):
        shutil.copyfile(src, dst)
        return
    if not src.lower().endswith(".npy"):
        raise ValueError(f"inputs: '{src}' is neither a .ppm nor a .npy picture")
    img = np.load(src)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"inputs: '{src}' holds {img.dtype} {list(img.shape)}; a uint8 HxWx3 (RGB) array is needed")
    with open(dst, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (img.shape[1], img.shape[0]))
        f.write(np.ascontiguousarray(img).tobytes())
