"""A model context over librknnrt.so: what RKNNLite and RKNN run models with."""
import ctypes
import threading

import numpy as np

from . import _capi as C

# numpy dtype -> rknn_tensor_type, for the inputs rknn_inputs_set() converts
_INPUT_TYPES = {
    np.dtype(np.float32): C.RKNN_TENSOR_FLOAT32,
    np.dtype(np.float16): C.RKNN_TENSOR_FLOAT16,
    np.dtype(np.int8): C.RKNN_TENSOR_INT8,
    np.dtype(np.uint8): C.RKNN_TENSOR_UINT8,
    np.dtype(np.int16): C.RKNN_TENSOR_INT16,
    np.dtype(np.uint16): C.RKNN_TENSOR_UINT16,
    np.dtype(np.int32): C.RKNN_TENSOR_INT32,
    np.dtype(np.uint32): C.RKNN_TENSOR_UINT32,
    np.dtype(np.int64): C.RKNN_TENSOR_INT64,
    np.dtype(np.bool_): C.RKNN_TENSOR_BOOL,
}


class RknnError(Exception):
    """A failed C call: its name, its RKNN_ERR_* code and what to log."""

    def __init__(self, msg, code=C.RKNN_ERR_FAIL):
        super().__init__(msg)
        self.code = code


def _check(ret, what):
    if ret != C.RKNN_SUCC:
        raise RknnError(f"{what} failed with {ret} (the runtime's log line above says why)", ret)


class TensorInfo:
    """One input or output as rknn_query reports it (dims in the order of `fmt`)."""

    def __init__(self, index, name, dims, fmt, type_):
        self.index = index
        self.name = name
        self.dims = list(dims)
        self.fmt = fmt
        self.type = type_

    @classmethod
    def from_attr(cls, attr):
        return cls(attr.index, attr.name.decode("utf-8", "replace"), [int(attr.dims[i]) for i in range(attr.n_dims)],
                   attr.fmt, attr.type)


class Context:
    """One rknn_context. Methods raise RknnError; the API classes turn that into their
    vendor-style return values."""

    def __init__(self, model_bytes, flags=0):
        self._lib = C.rknnrt()
        self._ctx = C.rknn_context(0)
        # One run is three C calls (inputs_set, run, outputs_get): threads sharing the context must
        # not interleave them, or one gets the outputs of another's inputs.
        self._run_lock = threading.Lock()
        # rknn_init copies the model (no zero-copy flag), so the bytes need not outlive the call.
        data = bytes(model_bytes)
        _check(self._lib.rknn_init(ctypes.byref(self._ctx), data, len(data), flags, None), "rknn_init")
        num = C.rknn_input_output_num()
        self._query(C.RKNN_QUERY_IN_OUT_NUM, num)
        self.inputs = [self._attr(C.RKNN_QUERY_INPUT_ATTR, i) for i in range(num.n_input)]
        self.outputs = [self._attr(C.RKNN_QUERY_OUTPUT_ATTR, i) for i in range(num.n_output)]
        # Dynamic-shape models: the inputs of each shape set the model lists (dims in the range's
        # order, NHWC for 4-D); None for a static model. The set in use is chosen by run().
        self.shape_sets = None
        self._active_set = None
        ranges = []
        for i in range(num.n_input):
            r = C.rknn_input_range()
            r.index = i
            ranges.append(self._query(C.RKNN_QUERY_INPUT_DYNAMIC_RANGE, r))
        if ranges and ranges[0].shape_number > 1:
            self.shape_sets = [[TensorInfo(i, r.name.decode("utf-8", "replace"),
                                           [int(r.dyn_range[s][d]) for d in range(r.n_dims)], r.fmt,
                                           self.inputs[i].type) for i, r in enumerate(ranges)]
                               for s in range(ranges[0].shape_number)]

    def _query(self, cmd, struct):
        _check(self._lib.rknn_query(self._ctx, cmd, ctypes.byref(struct), ctypes.sizeof(struct)), "rknn_query")
        return struct

    def _attr(self, cmd, index):
        attr = C.rknn_tensor_attr()
        attr.index = index
        return TensorInfo.from_attr(self._query(cmd, attr))

    def set_core_mask(self, mask):
        return self._lib.rknn_set_core_mask(self._ctx, int(mask))

    def run(self, arrays, fmts, pass_through, shape_set=None):
        """arrays: C-contiguous ndarrays, one per input; fmts: rknn_tensor_format per input;
        shape_set: for a dynamic-shape model, the index of the set the arrays have (switched to
        with rknn_set_input_shapes when it is not the one in use). Returns (list of float32
        ndarrays shaped as the outputs' dims, frame id)."""
        with self._run_lock:
            if shape_set is not None and shape_set != self._active_set:
                self._use_shape_set(shape_set)
            return self._run(arrays, fmts, pass_through)

    def _use_shape_set(self, s):
        infos = self.shape_sets[s]
        attrs = (C.rknn_tensor_attr * len(infos))()
        for a, info in zip(attrs, infos):
            a.index = info.index
            a.name = info.name.encode()
            a.n_dims = len(info.dims)
            for d, n in enumerate(info.dims):
                a.dims[d] = n
            a.fmt = info.fmt
            a.type = info.type
        _check(self._lib.rknn_set_input_shapes(self._ctx, len(infos), attrs), "rknn_set_input_shapes")
        self._active_set = s
        self.inputs = [self._attr(C.RKNN_QUERY_CURRENT_INPUT_ATTR, i) for i in range(len(self.inputs))]
        self.outputs = [self._attr(C.RKNN_QUERY_CURRENT_OUTPUT_ATTR, i) for i in range(len(self.outputs))]

    def match_shape_set(self, try_prepare):
        """Dynamic-shape models: the first shape set (the one in use first) for which
        try_prepare(infos) succeeds, as (set index, its result); raises the ValueError of the set
        in use (or of set 0) when none fits."""
        order = list(range(len(self.shape_sets)))
        if self._active_set is not None:
            order.remove(self._active_set)
            order.insert(0, self._active_set)
        first_error = None
        for s in order:
            try:
                return s, try_prepare(self.shape_sets[s])
            except ValueError as e:
                first_error = first_error or e
        shapes = [[i.dims for i in infos] for infos in self.shape_sets]
        raise ValueError(f"{first_error}; a dynamic-shape model: its shape sets are {shapes} (4-D as NHWC)")

    def _run(self, arrays, fmts, pass_through):
        n = len(arrays)
        ins = (C.rknn_input * n)()
        for i, a in enumerate(arrays):
            ins[i].index = i
            ins[i].buf = a.ctypes.data
            ins[i].size = a.nbytes
            ins[i].pass_through = 1 if pass_through[i] else 0
            ins[i].type = _INPUT_TYPES[a.dtype]
            ins[i].fmt = fmts[i]
        _check(self._lib.rknn_inputs_set(self._ctx, n, ins), "rknn_inputs_set")
        _check(self._lib.rknn_run(self._ctx, None), "rknn_run")
        # The runtime writes float32 results straight into the arrays handed back (is_prealloc).
        m = len(self.outputs)
        results = [np.empty(info.dims, np.float32) for info in self.outputs]
        outs = (C.rknn_output * m)()
        for i, r in enumerate(results):
            outs[i].index = i
            outs[i].want_float = 1
            outs[i].is_prealloc = 1
            outs[i].buf = r.ctypes.data
            outs[i].size = r.nbytes
        ext = C.rknn_output_extend()
        _check(self._lib.rknn_outputs_get(self._ctx, m, outs, ctypes.byref(ext)), "rknn_outputs_get")
        self._lib.rknn_outputs_release(self._ctx, m, outs)
        return results, int(ext.frame_id)

    def perf_detail(self):
        return (self._query(C.RKNN_QUERY_PERF_DETAIL, C.rknn_perf_detail()).perf_data or b"").decode("utf-8", "replace")

    def perf_run_us(self):
        return int(self._query(C.RKNN_QUERY_PERF_RUN, C.rknn_perf_run()).run_duration)

    def sdk_version(self):
        v = self._query(C.RKNN_QUERY_SDK_VERSION, C.rknn_sdk_version())
        return v.api_version.decode(), v.drv_version.decode()

    def mem_size(self):
        return self._query(C.RKNN_QUERY_MEM_SIZE, C.rknn_mem_size())

    def custom_string(self):
        return self._query(C.RKNN_QUERY_CUSTOM_STRING, C.rknn_custom_string()).string.decode("utf-8", "replace")

    def destroy(self):
        if self._ctx.value:
            self._lib.rknn_destroy(self._ctx)
            self._ctx = C.rknn_context(0)

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # interpreter shutdown: the library may be gone
            pass


def prepare_inputs(infos, inputs, data_format, pass_through, data_type=None):
    """Checks and arranges the inputs of inference() as the vendor's packages do. Returns
    (arrays, fmts, pass_through) or raises ValueError with the message to log.

    - `inputs`: a list (or tuple) of ndarrays, one per model input; a single ndarray is taken as
      a one-element list.
    - 4-D model inputs: arrays are NHWC unless `data_format` says 'nchw' (a string for all inputs,
      or a list with one entry per input). A 3-D array for a 4-D input of batch 1 is one image.
    - Other ranks are passed in the model's own dim order.
    - `data_type` (RKNNLite): when given, every array must have that dtype.
    """
    if isinstance(inputs, np.ndarray):
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)):
        raise ValueError(f"inputs must be a list of numpy arrays, not {type(inputs).__name__}")
    n = len(infos)
    if len(inputs) != n:
        raise ValueError(f"the model has {n} input(s), {len(inputs)} given")
    if data_format is None or isinstance(data_format, str):
        formats = [data_format] * n
    elif isinstance(data_format, (list, tuple)) and len(data_format) == n:
        formats = list(data_format)
    else:
        raise ValueError(f"data_format must be 'nhwc', 'nchw' or a list of {n} of them, not {data_format!r}")
    for f in formats:
        if f is not None and (not isinstance(f, str) or f.lower() not in ("nhwc", "nchw")):
            raise ValueError(f"data_format entries must be 'nhwc' or 'nchw', not {f!r}")
    if data_type is not None:
        try:
            data_type = np.dtype(data_type)
        except TypeError:
            raise ValueError(f"data_type must name a numpy dtype ('uint8', 'float32', ...), not {data_type!r}")
    if pass_through is None:
        pass_through = [0] * n
    elif not isinstance(pass_through, (list, tuple)) or len(pass_through) != n:
        raise ValueError(f"inputs_pass_through must be a list of {n} values 0/1, not {pass_through!r}")
    arrays, fmts = [], []
    for i, (x, info) in enumerate(zip(inputs, infos)):
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x)
            except Exception:
                raise ValueError(f"input {i} ('{info.name}') is a {type(x).__name__}, not a numpy array")
        if data_type is not None and x.dtype != np.dtype(data_type):
            raise ValueError(f"input {i} ('{info.name}') is {x.dtype}, but data_type is {np.dtype(data_type)}")
        if x.dtype not in _INPUT_TYPES:
            raise ValueError(f"input {i} ('{info.name}') has dtype {x.dtype}, which the runtime does not take "
                             f"(use one of {', '.join(sorted(str(d) for d in _INPUT_TYPES))})")
        x = np.ascontiguousarray(x)
        fmt = C.RKNN_TENSOR_UNDEFINED
        dims = info.dims
        if len(dims) == 4 and not pass_through[i]:
            # The model reports 4-D inputs NHWC when it takes images that way, NCHW otherwise;
            # compare with the NCHW order of the ONNX model.
            nchw = dims if info.fmt == C.RKNN_TENSOR_NCHW else [dims[0], dims[3], dims[1], dims[2]]
            nhwc = [nchw[0], nchw[2], nchw[3], nchw[1]]
            if x.ndim == 3 and nchw[0] == 1:
                x = x.reshape((1,) + x.shape)
            f = (formats[i] or "").lower()
            if not f:
                f = "nchw" if list(x.shape) == nchw and list(x.shape) != nhwc else "nhwc"
            want = nchw if f == "nchw" else nhwc
            if list(x.shape) != want:
                raise ValueError(f"input {i} ('{info.name}') has shape {list(x.shape)}; the model takes {want} "
                                 f"({f.upper()})")
            fmt = C.RKNN_TENSOR_NCHW if f == "nchw" else C.RKNN_TENSOR_NHWC
        elif not pass_through[i] and x.size != int(np.prod(dims)):
            raise ValueError(f"input {i} ('{info.name}') has {x.size} elements (shape {list(x.shape)}); the model "
                             f"takes {int(np.prod(dims))} (shape {dims})")
        arrays.append(x)
        fmts.append(fmt)
    return arrays, fmts, pass_through
