"""rknnlite.api.RKNNLite: the vendor light runtime's class, running .rknn models on this CPU
through OpenRKNN's librknnrt.so (docs/python.md)."""
from openrknn.log import Logger
from openrknn.model_info import model_platform
from openrknn.session import PLATFORMS, CoreMasks, Session

__all__ = ["RKNNLite"]


class RKNNLite(CoreMasks):
    def __init__(self, verbose=False, verbose_file=None):
        self._log = Logger(verbose, verbose_file)
        self._s = Session(self._log)

    def load_rknn(self, path):
        """Reads a .rknn file (or, beyond the vendor, takes its bytes). 0, or -1 after a log line."""
        return self._s.load_rknn(path)

    def init_runtime(self, target=None, device_id=None, async_mode=False, core_mask=CoreMasks.NPU_CORE_AUTO):
        """Creates the runtime context: 0, or -1 after a log line. `target` must be None (this CPU)."""
        return self._s.init_runtime(target, async_mode=async_mode, core_mask=core_mask)

    def inference(self, inputs, data_type=None, data_format=None, inputs_pass_through=None, get_frame_id=False):
        """Runs the model: a list of float32 ndarrays (plus the frame id with get_frame_id=True), or
        None after a log line."""
        return self._s.inference(inputs, data_format, inputs_pass_through, get_frame_id, data_type)

    def get_sdk_version(self):
        return self._s.sdk_version()

    def list_support_target_platform(self, rknn_model=None):
        """The platforms a model converted by rknn_convert may name (OpenRKNN runs any of them on
        this CPU) and, for a model file, the one it was converted for ('filled_target_platform')."""
        result = {"support_target_platform": list(PLATFORMS)}
        if rknn_model is not None:
            try:
                with open(rknn_model, "rb") as f:
                    platform = model_platform(f.read())
            except OSError as e:
                self._log.error("list_support_target_platform", f"cannot read '{rknn_model}': {e.strerror}")
                return None
            if platform is None:
                self._log.error("list_support_target_platform", f"'{rknn_model}' is not an OpenRKNN model")
                return None
            result["filled_target_platform"] = [platform]
        return result

    def list_devices(self):
        self._log.info("list_devices", "OpenRKNN runs models on this CPU; there are no devices to list")
        return [], []

    def release(self):
        self._s.release()
        self._log.close()
