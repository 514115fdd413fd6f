"""What RKNNLite and RKNN share: a loaded model, its context and the vendor-style inference."""
import os

from . import _capi as C
from .model_info import NPU_CORES, model_platform
from .runtime import Context, RknnError, prepare_inputs

# The target platforms rknn_convert knows (src/runtime/platform.cc); a board would be named by one.
PLATFORMS = ("rk3588", "rk3576", "rk3566", "rk3568", "rk3562", "rv1106", "rv1103", "rv1106b", "rv1103b", "rk2118",
             "rv1126b")


class CoreMasks:
    """The core-mask constants of RKNNLite and RKNN (rknn_core_mask's values)."""
    NPU_CORE_AUTO = 0
    NPU_CORE_0 = 1
    NPU_CORE_1 = 2
    NPU_CORE_2 = 4
    NPU_CORE_0_1 = 3
    NPU_CORE_0_1_2 = 7
    NPU_CORE_ALL = 0xFFFF


class Session:
    def __init__(self, log):
        self.log = log
        self.model = None  # the .rknn bytes
        self.ctx = None
        self.perf = False
        self.last_inputs = None

    def load_rknn(self, path):
        if isinstance(path, (bytes, bytearray, memoryview)):
            data = bytes(path)
            if not data:
                self.log.error("load_rknn", "the model bytes are empty")
                return -1
        else:
            if not isinstance(path, (str, os.PathLike)):
                self.log.error("load_rknn", f"expected a file path or bytes, not {type(path).__name__}")
                return -1
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                self.log.error("load_rknn", f"cannot read '{path}': {e.strerror}")
                return -1
        self.release_context()
        self.model = data
        return 0

    def init_runtime(self, target=None, async_mode=False, core_mask=0, perf_debug=False):
        if target is not None and str(target).lower() != "cpu":
            known = str(target).lower() in PLATFORMS
            self.log.error("init_runtime", f"target '{target}': OpenRKNN runs the model on this CPU, it does not "
                           f"drive {'a board' if known else 'devices'}; call init_runtime() without a target")
            return -1
        if self.model is None:
            self.log.error("init_runtime", "no model: call load_rknn() (or build()) first")
            return -1
        flags = (C.RKNN_FLAG_ASYNC_MASK if async_mode else 0) | (C.RKNN_FLAG_COLLECT_PERF_MASK if perf_debug else 0)
        self.release_context()
        try:
            self.ctx = Context(self.model, flags)
        except (RknnError, OSError) as e:
            self.log.error("init_runtime", str(e))
            return -1
        self.perf = bool(perf_debug)
        if self._apply_core_mask(core_mask) != 0:
            self.release_context()
            return -1
        return 0

    def _apply_core_mask(self, mask):
        """The vendor's Python rules: AUTO is the new context's own setting (not set again); a
        single-core platform (rk3566, rv1106, ...) ignores masks with a warning; on rk3576, which
        has two cores, a mask naming core 2 is mapped to cores 0 / 0_1 with a log line."""
        if mask == CoreMasks.NPU_CORE_AUTO:
            return 0
        platform = model_platform(self.model)
        cores = NPU_CORES.get(platform, 1)
        if cores == 1:
            self.log.warning("init_runtime", f"core_mask {mask:#x} ignored: {platform} has one NPU core")
            return 0
        if cores == 2 and mask != CoreMasks.NPU_CORE_ALL and mask & CoreMasks.NPU_CORE_2:
            mapped = (mask & CoreMasks.NPU_CORE_0_1) or CoreMasks.NPU_CORE_0
            self.log.warning("init_runtime", f"core_mask {mask:#x}: {platform} has no core 2, using {mapped:#x}")
            mask = mapped
        ret = self.ctx.set_core_mask(mask)
        if ret != 0:
            self.log.error("init_runtime", f"core_mask {mask:#x} was refused ({ret})")
        return ret

    def inference(self, inputs, data_format=None, inputs_pass_through=None, get_frame_id=False, data_type=None):
        if self.ctx is None:
            self.log.error("inference", "the runtime is not initialised: call init_runtime() first")
            return None
        try:
            def prepare(infos):
                return prepare_inputs(infos, inputs, data_format, inputs_pass_through, data_type)
            shape_set = None
            if self.ctx.shape_sets:  # a dynamic-shape model: the inputs' shapes pick the set
                shape_set, (arrays, fmts, passes) = self.ctx.match_shape_set(prepare)
            else:
                arrays, fmts, passes = prepare(self.ctx.inputs)
            outputs, frame_id = self.ctx.run(arrays, fmts, passes, shape_set)
        except (ValueError, RknnError) as e:
            self.log.error("inference", str(e))
            return None
        self.last_inputs = (arrays, fmts, passes, shape_set)
        if get_frame_id:
            outputs.append(frame_id)
        return outputs

    def sdk_version(self):
        if self.ctx is None:
            self.log.error("get_sdk_version", "the runtime is not initialised: call init_runtime() first")
            return None
        api, drv = self.ctx.sdk_version()
        return f"API: {api}\nDRV: {drv}"

    def release_context(self):
        if self.ctx is not None:
            self.ctx.destroy()
            self.ctx = None
        self.last_inputs = None

    def release(self):
        self.release_context()
        self.model = None
