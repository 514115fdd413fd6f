"""ctypes declarations of the C libraries the Python package stands on.

librknnrt.so (rknn_api.h) runs models, exactly as a C client calls it; libopenrknn_convert.so
(openrknn_convert.h) converts ONNX in process. ctypes releases the GIL during every call, so
other Python threads run while rknn_run() computes.
"""
import ctypes
import os
import threading

RKNN_SUCC = 0
RKNN_ERR_FAIL = -1
RKNN_ERR_PARAM_INVALID = -5
RKNN_MAX_DIMS = 16
RKNN_MAX_NAME_LEN = 256

# rknn_init flags
RKNN_FLAG_ASYNC_MASK = 0x4
RKNN_FLAG_COLLECT_PERF_MASK = 0x8

# rknn_query commands
RKNN_QUERY_IN_OUT_NUM = 0
RKNN_QUERY_INPUT_ATTR = 1
RKNN_QUERY_OUTPUT_ATTR = 2
RKNN_QUERY_PERF_DETAIL = 3
RKNN_QUERY_PERF_RUN = 4
RKNN_QUERY_SDK_VERSION = 5
RKNN_QUERY_MEM_SIZE = 6
RKNN_QUERY_CUSTOM_STRING = 7
RKNN_QUERY_INPUT_DYNAMIC_RANGE = 13
RKNN_QUERY_CURRENT_INPUT_ATTR = 14
RKNN_QUERY_CURRENT_OUTPUT_ATTR = 15
RKNN_MAX_DYNAMIC_SHAPE_NUM = 512

# rknn_tensor_type
RKNN_TENSOR_FLOAT32 = 0
RKNN_TENSOR_FLOAT16 = 1
RKNN_TENSOR_INT8 = 2
RKNN_TENSOR_UINT8 = 3
RKNN_TENSOR_INT16 = 4
RKNN_TENSOR_UINT16 = 5
RKNN_TENSOR_INT32 = 6
RKNN_TENSOR_UINT32 = 7
RKNN_TENSOR_INT64 = 8
RKNN_TENSOR_BOOL = 9

# rknn_tensor_format
RKNN_TENSOR_NCHW = 0
RKNN_TENSOR_NHWC = 1
RKNN_TENSOR_UNDEFINED = 3

rknn_context = ctypes.c_uint64


class rknn_input_output_num(ctypes.Structure):
    _fields_ = [("n_input", ctypes.c_uint32), ("n_output", ctypes.c_uint32)]


class rknn_tensor_attr(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("n_dims", ctypes.c_uint32),
        ("dims", ctypes.c_uint32 * RKNN_MAX_DIMS),
        ("name", ctypes.c_char * RKNN_MAX_NAME_LEN),
        ("n_elems", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("fmt", ctypes.c_int),
        ("type", ctypes.c_int),
        ("qnt_type", ctypes.c_int),
        ("fl", ctypes.c_int8),
        ("zp", ctypes.c_int32),
        ("scale", ctypes.c_float),
        ("w_stride", ctypes.c_uint32),
        ("size_with_stride", ctypes.c_uint32),
        ("pass_through", ctypes.c_uint8),
        ("h_stride", ctypes.c_uint32),
    ]


class rknn_input_range(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("shape_number", ctypes.c_uint32),
        ("fmt", ctypes.c_int),
        ("name", ctypes.c_char * RKNN_MAX_NAME_LEN),
        ("dyn_range", (ctypes.c_uint32 * RKNN_MAX_DIMS) * RKNN_MAX_DYNAMIC_SHAPE_NUM),
        ("n_dims", ctypes.c_uint32),
    ]


class rknn_perf_detail(ctypes.Structure):
    _fields_ = [("perf_data", ctypes.c_char_p), ("data_len", ctypes.c_uint64)]


class rknn_perf_run(ctypes.Structure):
    _fields_ = [("run_duration", ctypes.c_int64)]


class rknn_sdk_version(ctypes.Structure):
    _fields_ = [("api_version", ctypes.c_char * 256), ("drv_version", ctypes.c_char * 256)]


class rknn_mem_size(ctypes.Structure):
    _fields_ = [
        ("total_weight_size", ctypes.c_uint32),
        ("total_internal_size", ctypes.c_uint32),
        ("total_dma_allocated_size", ctypes.c_uint64),
        ("total_sram_size", ctypes.c_uint32),
        ("free_sram_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32 * 10),
    ]


class rknn_custom_string(ctypes.Structure):
    _fields_ = [("string", ctypes.c_char * 1024)]


class rknn_input(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("buf", ctypes.c_void_p),
        ("size", ctypes.c_uint32),
        ("pass_through", ctypes.c_uint8),
        ("type", ctypes.c_int),
        ("fmt", ctypes.c_int),
    ]


class rknn_output(ctypes.Structure):
    _fields_ = [
        ("want_float", ctypes.c_uint8),
        ("is_prealloc", ctypes.c_uint8),
        ("index", ctypes.c_uint32),
        ("buf", ctypes.c_void_p),
        ("size", ctypes.c_uint32),
    ]


class rknn_output_extend(ctypes.Structure):
    _fields_ = [("frame_id", ctypes.c_uint64)]


# Layout checks against the sizes rknn_api.h states for 64-bit platforms.
assert ctypes.sizeof(rknn_tensor_attr) == 376
assert ctypes.sizeof(rknn_input) == 32
assert ctypes.sizeof(rknn_output) == 24
assert ctypes.sizeof(rknn_mem_size) == 64
assert ctypes.sizeof(rknn_input_range) == 33040


def library_dir():
    """Where the libraries are: $OPENRKNN_LIB_DIR (a build tree), else the package's lib/."""
    env = os.environ.get("OPENRKNN_LIB_DIR")
    if env:
        return os.path.abspath(env)
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def resource(relative):
    """A file or directory the package ships (include/, examples/): inside the installed package,
    else in the checkout the modules are imported from. None when neither has it."""
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (here, os.path.dirname(os.path.dirname(here))):
        path = os.path.join(base, relative)
        if os.path.exists(path):
            return path
    return None


_lock = threading.Lock()
_libs = {}


def _load(name):
    with _lock:
        if name not in _libs:
            path = os.path.join(library_dir(), name)
            if not os.path.exists(path):
                raise OSError(f"{path} not found: install the package with 'pip install .' from an OpenRKNN "
                              "checkout, or set OPENRKNN_LIB_DIR to a build directory")
            _libs[name] = _declare(name, ctypes.CDLL(path))
        return _libs[name]


def _declare(name, lib):
    P = ctypes.POINTER
    if name == "librknnrt.so":
        sigs = {
            "rknn_init": ([P(rknn_context), ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p],),
            "rknn_destroy": ([rknn_context],),
            "rknn_query": ([rknn_context, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32],),
            "rknn_inputs_set": ([rknn_context, ctypes.c_uint32, P(rknn_input)],),
            "rknn_run": ([rknn_context, ctypes.c_void_p],),
            "rknn_outputs_get": ([rknn_context, ctypes.c_uint32, P(rknn_output), P(rknn_output_extend)],),
            "rknn_outputs_release": ([rknn_context, ctypes.c_uint32, P(rknn_output)],),
            "rknn_set_core_mask": ([rknn_context, ctypes.c_int],),
            "rknn_set_input_shapes": ([rknn_context, ctypes.c_uint32, P(rknn_tensor_attr)],),
        }
        for fn, (args,) in sigs.items():
            f = getattr(lib, fn)
            f.argtypes = args
            f.restype = ctypes.c_int
    else:
        lib.orknn_convert_onnx.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                           ctypes.c_char_p, P(ctypes.c_void_p), P(ctypes.c_size_t)]
        lib.orknn_convert_onnx.restype = ctypes.c_int
        lib.orknn_accuracy_analysis.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                                P(ctypes.c_char_p), ctypes.c_size_t, P(ctypes.c_void_p)]
        lib.orknn_accuracy_analysis.restype = ctypes.c_int
        lib.orknn_last_error.argtypes = []
        lib.orknn_last_error.restype = ctypes.c_char_p
        lib.orknn_free.argtypes = [ctypes.c_void_p]
        lib.orknn_free.restype = None
    return lib


def rknnrt():
    """librknnrt.so, loaded once."""
    return _load("librknnrt.so")


def converter():
    """libopenrknn_convert.so, loaded once."""
    return _load("libopenrknn_convert.so")
