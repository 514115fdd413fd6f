"""A real client: Ultralytics' own RKNN exporter, `YOLO("yolov8n.yaml").export(format="rknn",
name="rk3588")`, converts a YOLOv8n built from its YAML (random weights, nothing downloaded) with
OpenRKNN's rknn.api.RKNN, and OpenRKNN's rknnlite.api.RKNNLite runs the .rknn it wrote. Its outputs
must match ONNX Runtime on the ONNX file Ultralytics exported on the way (cosine >= 0.999 per output).
A second export of the same YAML with variance-keeping random weights makes that comparison carry
signal. Last, Ultralytics' own RKNN inference path (AutoBackend, predict) runs the .rknn with our
RKNNLite: its predictor refuses hosts that are not Rockchip boards, so its is_rockchip() is patched
in this process (no file of Ultralytics is changed).

Usage: ultralytics_client.py WORK_DIR (tests/python/ultralytics_test.sh sets up the environment).

Ultralytics is kept from reaching the network and from pip-installing the vendor's rknn-toolkit2
over our modules by two of its own environment switches, set here before it is imported:
YOLO_OFFLINE=true (its online probe answers False: no AutoUpdate, no analytics) and
YOLO_AUTOINSTALL=false (a missing requirement is reported and the export goes on). Sockets and
subprocesses are guarded as well, so any attempt to download or install fails the test."""
import os
import socket
import subprocess
import sys
import time

import numpy as np

os.environ["YOLO_OFFLINE"] = "true"
os.environ["YOLO_AUTOINSTALL"] = "false"

COS_MIN = 0.999
IMGSZ = 640
PLATFORM = "rk3588"
failures = []
passed = []
attempts = []  # network connections and installs Ultralytics tried


def check(ok, what):
    print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
    (passed if ok else failures).append(what)


# ---- guards: nothing leaves the machine, nothing is installed ----
def _local(host):
    return host in (None, "", "localhost") or str(host).startswith("127.") or str(host) == "::1"


_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect


def _guarded_getaddrinfo(host, *args, **kwargs):
    if not _local(host):
        attempts.append(f"name lookup of {host}")
        raise socket.gaierror(f"ultralytics_client: name lookup of {host} blocked (no network in this test)")
    return _getaddrinfo(host, *args, **kwargs)


def _guarded_connect(self, address):
    if self.family != socket.AF_UNIX and not _local(address[0] if isinstance(address, tuple) else address):
        attempts.append(f"connection to {address}")
        raise OSError(f"ultralytics_client: connection to {address} blocked (no network in this test)")
    return _connect(self, address)


_popen_init = subprocess.Popen.__init__


def _guarded_popen(self, args, *a, **kw):
    cmd = args if isinstance(args, str) else " ".join(map(str, args))
    if "install" in cmd and ("pip" in cmd or "uv" in cmd):
        attempts.append(f"install: {cmd}")
        raise OSError(f"ultralytics_client: '{cmd}' blocked (this test installs nothing)")
    return _popen_init(self, args, *a, **kw)


socket.getaddrinfo = _guarded_getaddrinfo
socket.socket.connect = _guarded_connect
subprocess.Popen.__init__ = _guarded_popen


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def compare(name, ref, got):
    """Cosine per output (and its boxes and class rows, for the report) of got against ref."""
    check(len(ref) == len(got), f"{name}: {len(got)} outputs (ONNX Runtime: {len(ref)})")
    for i, (r, g) in enumerate(zip(ref, got)):
        r, g = np.asarray(r), np.asarray(g)
        if r.shape != g.shape:
            check(False, f"{name}: output {i} shape {g.shape} (ONNX Runtime: {r.shape})")
            continue
        cos = cosine(r, g)
        parts = ""
        if r.ndim == 3 and r.shape[1] == 84:  # detect head: 4 box rows (xywh, pixels), 80 class rows
            # per part, for the report: cosine, cosine about the reference's mean (what varies), max |d|
            for part, sl in (("boxes", slice(0, 4)), ("classes", slice(4, None))):
                a, b = r[:, sl], g[:, sl]
                parts += (f"; {part} cos {cosine(a, b):.7f} centred {cosine(a - a.mean(), b - a.mean()):.7f} "
                          f"max|d| {np.abs(a - b).max():.3g} (range {a.min():.3g}..{a.max():.3g})")
        check(cos >= COS_MIN, f"{name}: output {i} {tuple(r.shape)} cosine {cos:.7f} (>= {COS_MIN}), "
              f"max|d| {np.abs(r - g).max():.3g}{parts}")


def images():
    """Two 640x640 RGB uint8 images (NHWC, batch 1): noise, and a smooth scene with blocks."""
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 256, (1, IMGSZ, IMGSZ, 3), dtype=np.uint8)
    y, x = np.mgrid[0:IMGSZ, 0:IMGSZ].astype(np.float32) / IMGSZ
    scene = np.stack([255 * x, 255 * y, 128 + 127 * np.sin(12 * x * y)], -1)
    for _ in range(12):
        x0, y0 = rng.integers(0, IMGSZ - 64, 2)
        w, h = rng.integers(32, 200, 2)
        scene[y0:y0 + h, x0:x0 + w] = rng.integers(0, 256, 3)
    return {"noise": noise, "scene": scene.clip(0, 255).astype(np.uint8)[None]}


def rescale_weights(yolo):
    """Variance-keeping random weights (He-normal convolutions, random batch-norm statistics and
    biases; the DFL's fixed 0..15 kernel untouched), so every layer carries signal as a trained
    model's do: with the YAML's own initialisation the activations fade layer by layer and the
    outputs are almost the head's biases, which would make the comparison say little."""
    import torch
    from ultralytics.nn.modules.block import DFL
    fixed = {id(p) for m in yolo.model.modules() if isinstance(m, DFL) for p in m.parameters()}
    for m in yolo.model.modules():
        if isinstance(m, torch.nn.Conv2d) and id(m.weight) not in fixed:
            torch.nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            if m.bias is not None:
                torch.nn.init.uniform_(m.bias, -1, 1)
        elif isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2)
            torch.nn.init.uniform_(m.weight, 0.5, 1.5)
            torch.nn.init.uniform_(m.bias, -0.5, 0.5)


def export_and_compare(label, subdir, ours, rescale=False):
    """YOLO("yolov8n.yaml").export(format="rknn") in subdir, then RKNNLite on the .rknn against ONNX
    Runtime on the .onnx. Returns (the _rknn_model directory, the .onnx) or None."""
    import onnx
    import onnxruntime as ort
    import torch
    from rknnlite.api import RKNNLite
    from ultralytics import YOLO

    print(f"-- {label}", flush=True)
    os.makedirs(subdir, exist_ok=True)
    os.chdir(subdir)  # the exporter writes yolov8n.onnx and yolov8n_rknn_model/ in the working directory
    torch.manual_seed(0)  # the same random weights on every run
    yolo = YOLO("yolov8n.yaml")
    if rescale:
        rescale_weights(yolo)
    t = time.time()
    out_dir = yolo.export(format="rknn", name=PLATFORM)  # as a user writes it
    t_export = time.time() - t
    api = sys.modules.get("rknn.api")  # imported by Ultralytics' export_rknn, not by this script
    check(api is not None and os.path.abspath(api.__file__).startswith(ours + os.sep),
          f"Ultralytics' exporter imported rknn.api from OpenRKNN ({getattr(api, '__file__', None)})")
    out_dir = os.path.abspath(str(out_dir or "yolov8n_rknn_model"))
    onnx_path = os.path.abspath("yolov8n.onnx")
    rknn_path = os.path.join(out_dir, f"yolov8n-{PLATFORM}.rknn")
    check(os.path.isfile(onnx_path), f"Ultralytics exported {onnx_path}")
    check(os.path.isfile(rknn_path), f"Ultralytics exported {rknn_path} (export {t_export:.1f} s)")
    check(os.path.isfile(os.path.join(out_dir, "metadata.yaml")), "and its metadata.yaml")
    if not (os.path.isfile(onnx_path) and os.path.isfile(rknn_path)):
        return None
    model = onnx.load(onnx_path)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    print(f"  ONNX opset {opset}, {len(model.graph.node)} nodes; .rknn {os.path.getsize(rknn_path)} bytes",
          flush=True)

    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    lite = RKNNLite()
    check(lite.load_rknn(rknn_path) == 0, "RKNNLite.load_rknn")
    check(lite.init_runtime() == 0, "RKNNLite.init_runtime")
    for name, img in images().items():
        ref = sess.run(None, {sess.get_inputs()[0].name: img.transpose(0, 3, 1, 2).astype(np.float32) / 255})
        t = time.time()
        got = lite.inference(inputs=[img])  # uint8 NHWC, as Ultralytics' AutoBackend feeds it
        dt = time.time() - t
        if got is None:
            check(False, f"RKNNLite.inference on the {name} image")
            continue
        compare(f"RKNNLite vs ONNX Runtime, {name} image ({dt * 1000:.0f} ms)", ref, got)
    lite.release()
    return out_dir, onnx_path


def main():
    work = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(work, "config"), exist_ok=True)
    os.environ["YOLO_CONFIG_DIR"] = os.path.join(work, "config")  # Ultralytics' settings.json, not ~/.config

    from importlib import metadata

    import onnxruntime as ort
    import torch

    import openrknn
    import ultralytics
    from ultralytics import YOLO
    from ultralytics.utils import ONLINE
    from ultralytics.utils.checks import check_requirements

    ours = os.path.dirname(os.path.dirname(os.path.abspath(openrknn.__file__)))
    print(f"ultralytics {ultralytics.__version__}, torch {torch.__version__}, numpy {np.__version__}, "
          f"onnxruntime {ort.__version__}; OpenRKNN's modules from {ours}", flush=True)
    check(not ONLINE, "Ultralytics sees itself offline (YOLO_OFFLINE=true)")
    for dist in ("rknn-toolkit2", "rknn-toolkit-lite2"):
        try:
            check(False, f"the vendor's {dist} {metadata.version(dist)} is installed: it would shadow ours")
        except metadata.PackageNotFoundError:
            pass
    names = {d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"]}
    print(f"  note: check_requirements('rknn-toolkit2') is {check_requirements('rknn-toolkit2', install=False)}: "
          f"OpenRKNN's modules are {'the distribution openrknn' if 'openrknn' in names else 'on PYTHONPATH'}, "
          "not a distribution named rknn-toolkit2; with YOLO_AUTOINSTALL=false (or offline) Ultralytics "
          "goes on and imports them", flush=True)

    export_and_compare("the YAML's own random weights", os.path.join(work, "yaml"), ours)
    exported = export_and_compare("variance-keeping random weights (a numerics check)",
                                  os.path.join(work, "rescaled"), ours, rescale=True)
    if exported is None:
        return finish()
    out_dir, onnx_path = exported

    # ---- Ultralytics' own RKNN inference path (AutoBackend, predict) over our RKNNLite ----
    print("-- Ultralytics' predictor, on the second model", flush=True)
    from ultralytics.nn import autobackend
    from ultralytics.utils.checks import is_rockchip
    scene = images()["scene"]
    if not is_rockchip():
        try:
            YOLO(out_dir, task="detect").predict(scene[0], verbose=False)
            check(False, "Ultralytics' predictor ran a .rknn on a host that is not a Rockchip board")
        except OSError as e:
            print(f"  note: Ultralytics' predictor refuses this host: '{e}' (its is_rockchip() reads "
                  "/proc/device-tree); is_rockchip is patched in this process for what follows", flush=True)
        autobackend.is_rockchip = lambda: True
    be_rknn = autobackend.AutoBackend(out_dir, device=torch.device("cpu"))
    check(type(be_rknn.rknn_model).__module__ == "rknnlite.api" and
          os.path.abspath(sys.modules["rknnlite.api"].__file__).startswith(ours + os.sep),
          "Ultralytics' AutoBackend loaded the .rknn with OpenRKNN's RKNNLite")
    be_onnx = autobackend.AutoBackend(onnx_path, device=torch.device("cpu"))
    im = torch.from_numpy(scene).permute(0, 3, 1, 2).float() / 255  # the predictor's BCHW 0..1
    with torch.no_grad():
        y_rknn, y_onnx = be_rknn(im), be_onnx(im)
    y_rknn, y_onnx = ([np.asarray(v) for v in (y if isinstance(y, (list, tuple)) else [y])] for y in (y_rknn, y_onnx))
    compare("AutoBackend .rknn vs AutoBackend .onnx, scene image", y_onnx, y_rknn)

    # predict() end to end (letterbox, AutoBackend, NMS). Its boxes are not matched one by one: these
    # random weights give hundreds of boxes with scores saturated near 1, so which of them survive
    # NMS and the top max_det turns on differences far below fp16's step; the raw outputs above are
    # what is compared.
    bgr = np.ascontiguousarray(scene[0][..., ::-1])  # predict() takes OpenCV's BGR
    n = {what: len(YOLO(path, task="detect").predict(bgr, verbose=False)[0].boxes)
         for what, path in (("rknn", out_dir), ("onnx", onnx_path))}
    check(n["rknn"] > 0 and n["onnx"] > 0, f"YOLO('{os.path.basename(out_dir)}').predict() ran on OpenRKNN: "
          f"{n['rknn']} boxes (on the .onnx with ONNX Runtime: {n['onnx']})")
    return finish()


def finish():
    check(not attempts, "Ultralytics tried no download or install" + (f": {attempts}" if attempts else ""))
    for what in failures:
        print(f"ultralytics_client: FAILED: {what}", flush=True)
    print(f"ultralytics_client: {len(passed)} passed, {len(failures)} failed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
