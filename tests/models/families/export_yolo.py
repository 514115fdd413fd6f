#!/usr/bin/python3
"""Exports the YOLO families from Ultralytics' own model definitions with seeded random weights
(docs/model_families.md), each twice:
  NAME       the stock head: Ultralytics' exporter, YOLO(yaml).export(format="onnx", end2end=False),
             the ONNX file its format="rknn" export converts (output0 [1, 4+nc(+extra), anchors];
             segmentation adds output1, the mask prototypes)
  NAME_zoo   the vendor model zoo's head, DFL moved out of the model: per level i (strides 8, 16, 32)
             box_i [1, 64, H, W] (the 4 x 16 DFL logits), cls_i [1, nc, H, W] after Sigmoid and
             score_sum_i [1, 1, H, W] (the class scores summed, clamped to [0, 1]); then, by task,
             seg: mask coefficients mc_i [1, 32, H, W] per level and the prototypes last;
             pose: keypoints kpt_i [1, 51, H, W] (raw); obb: angle_i [1, 1, H, W] (after the head's
             (sigmoid - 0.25) * pi); YOLOv10 takes these from its one-to-one (NMS-free) branch.
Models: yolov5n, yolov6n, yolov7_tiny (a YOLOv7-tiny layer list written as an Ultralytics YAML: ELAN
blocks, max-pool downsampling, SPPCSP, LeakyReLU), yolov8n, yolov10n, yolo11n, yolov8n_seg,
yolov8n_pose, yolov8n_obb, and yolox_s: YOLOX-s, whose backbone and neck are YOLOv5-s's
(Ultralytics' yolov5s.yaml) with YOLOX's decoupled head written here; its stock head is YOLOX's
decoded export ([1, anchors, 85]: xy, wh, objectness, 80 classes), its zoo head per level
[1, 85, H, W] (box regression, Sigmoid objectness, Sigmoid classes).

Usage: .venv-ultralytics/bin/python export_yolo.py OUT_DIR [--size full|test] [--only a,b] [--force] [--list]
Input "images" [1, 3, S, S] in [0, 1] (pixels / 255): S = 640 (full) or 320 (test).

Runs in .venv-ultralytics (tests/python/ultralytics_test.sh --setup; Debian's torch 1.13). Nothing is
downloaded: Ultralytics runs offline (YOLO_OFFLINE) and installs nothing (YOLO_AUTOINSTALL=false).
"""
import math
import os
import shutil
import sys
import tempfile

os.environ["YOLO_OFFLINE"] = "true"
os.environ["YOLO_AUTOINSTALL"] = "false"
os.environ.setdefault("YOLO_VERBOSE", "false")
_settings = tempfile.mkdtemp(prefix="openrknn-yolo-settings-")
os.environ["YOLO_CONFIG_DIR"] = _settings  # Ultralytics' settings.json, not the user's ~/.config

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

sys.dont_write_bytecode = True  # importing common must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# name: (YAML, what the zoo calls the task)
YAMLS = {
    "yolov5n": ("yolov5n.yaml", "detect"),
    "yolov6n": ("yolov6n.yaml", "detect"),
    "yolov7_tiny": ("yolov7-tiny.yaml", "detect"),
    "yolov8n": ("yolov8n.yaml", "detect"),
    "yolov10n": ("yolov10n.yaml", "detect"),
    "yolo11n": ("yolo11n.yaml", "detect"),
    "yolov8n_seg": ("yolov8n-seg.yaml", "segment"),
    "yolov8n_pose": ("yolov8n-pose.yaml", "pose"),
    "yolov8n_obb": ("yolov8n-obb.yaml", "obb"),
    "yolox_s": ("yolov5s.yaml", "yolox"),
}
MODELS = [n + sfx for n in YAMLS for sfx in ("", "_zoo")]


def _elan(c, first):
    """A YOLOv7-tiny ELAN block: two 1x1 branches, two 3x3 convs on the second, all four concatenated,
    a 1x1 conv to 2c. `first`: the layer the block reads (-1 = the one before)."""
    return [[first, 1, "Conv", [c, 1, 1]], [-2 if first == -1 else first, 1, "Conv", [c, 1, 1]],
            [-1, 1, "Conv", [c, 3, 1]], [-1, 1, "Conv", [c, 3, 1]],
            [[-1, -2, -3, -4], 1, "Concat", [1]], [-1, 1, "Conv", [2 * c, 1, 1]]]


def yolov7_tiny_yaml():
    """YOLOv7-tiny's layer list (its cfg/training/yolov7-tiny.yaml) in Ultralytics' YAML dialect, with
    Ultralytics' Detect head in place of IDetect. Layer indices are counted as they are appended."""
    pool = [-1, 1, "nn.MaxPool2d", [2, 2]]
    bb = [[-1, 1, "Conv", [32, 3, 2]], [-1, 1, "Conv", [64, 3, 2]]]
    bb += _elan(32, -1)          # 2..7
    bb += [pool] + _elan(64, -1)   # 8, 9..14 (P3)
    bb += [pool] + _elan(128, -1)  # 15, 16..21 (P4)
    bb += [pool] + _elan(256, -1)  # 22, 23..28 (P5)
    head = [[-1, 1, "Conv", [256, 1, 1]], [-2, 1, "Conv", [256, 1, 1]],            # 29, 30: SPPCSP
            [-1, 1, "nn.MaxPool2d", [5, 1, 2]], [-2, 1, "nn.MaxPool2d", [9, 1, 4]],
            [-3, 1, "nn.MaxPool2d", [13, 1, 6]], [[-1, -2, -3, -4], 1, "Concat", [1]],
            [-1, 1, "Conv", [256, 1, 1]], [[-1, 29], 1, "Concat", [1]], [-1, 1, "Conv", [256, 1, 1]]]  # 37
    up = [-1, 1, "nn.Upsample", [None, 2, "nearest"]]
    head += [[-1, 1, "Conv", [128, 1, 1]], up, [21, 1, "Conv", [128, 1, 1]], [[-1, -2], 1, "Concat", [1]]]  # 38..41
    head += _elan(64, -1)                                                              # 42..47
    head += [[-1, 1, "Conv", [64, 1, 1]], up, [14, 1, "Conv", [64, 1, 1]], [[-1, -2], 1, "Concat", [1]]]  # 48..51
    head += _elan(32, -1)                                                              # 52..57 (P3 out)
    head += [[-1, 1, "Conv", [128, 3, 2]], [[-1, 47], 1, "Concat", [1]]] + _elan(64, -1)   # 58, 59, 60..65
    head += [[-1, 1, "Conv", [256, 3, 2]], [[-1, 37], 1, "Concat", [1]]] + _elan(128, -1)  # 66, 67, 68..73
    head += [[57, 1, "Conv", [128, 3, 1]], [65, 1, "Conv", [256, 3, 1]], [73, 1, "Conv", [512, 3, 1]],  # 74..76
             [[74, 75, 76], 1, "Detect", ["nc"]]]
    return {"nc": 80, "activation": "nn.LeakyReLU(0.1)", "backbone": bb, "head": head}


class YoloXHead(nn.Module):
    """YOLOX's decoupled head (YOLOXHead): per level a 1x1 stem, a classification and a regression
    branch of two 3x3 convs each, 1x1 predictions of 80 classes, 4 box values and 1 objectness."""

    def __init__(self, ch, strides, nc=80, hidden=128):
        super().__init__()
        from ultralytics.nn.modules import Conv
        self.strides = strides
        self.stems = nn.ModuleList(Conv(c, hidden, 1) for c in ch)
        self.cls_convs = nn.ModuleList(nn.Sequential(Conv(hidden, hidden, 3), Conv(hidden, hidden, 3)) for _ in ch)
        self.reg_convs = nn.ModuleList(nn.Sequential(Conv(hidden, hidden, 3), Conv(hidden, hidden, 3)) for _ in ch)
        self.cls_preds = nn.ModuleList(nn.Conv2d(hidden, nc, 1) for _ in ch)
        self.reg_preds = nn.ModuleList(nn.Conv2d(hidden, 4, 1) for _ in ch)
        self.obj_preds = nn.ModuleList(nn.Conv2d(hidden, 1, 1) for _ in ch)
        for conv in list(self.cls_preds) + list(self.obj_preds):  # YOLOX's prior: 1% of anchors hold objects
            nn.init.constant_(conv.bias, -math.log((1 - 0.01) / 0.01))

    def levels(self, feats):
        out = []
        for i, x in enumerate(feats):
            x = self.stems[i](x)
            r = self.reg_convs[i](x)
            out.append(torch.cat([self.reg_preds[i](r), self.obj_preds[i](r).sigmoid(),
                                  self.cls_preds[i](self.cls_convs[i](x)).sigmoid()], 1))
        return out

    def decoded(self, feats):
        """YOLOX's export with decode_in_inference: [1, anchors, 85], boxes in pixels."""
        outs, grids, strides = [], [], []
        for o, s in zip(self.levels(feats), self.strides):
            h, w = o.shape[2:]
            yv, xv = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
            grids.append(torch.stack((xv, yv), 2).reshape(1, -1, 2).float())
            strides.append(torch.full((1, h * w, 1), float(s)))
            outs.append(o.flatten(2))
        y = torch.cat(outs, 2).permute(0, 2, 1)
        grid, stride = torch.cat(grids, 1), torch.cat(strides, 1)
        return torch.cat([(y[..., :2] + grid) * stride, torch.exp(y[..., 2:4]) * stride, y[..., 4:]], -1)


class Backbone(nn.Module):
    """Runs an Ultralytics DetectionModel up to its head, as its _predict_once does, and hands the
    head's input feature maps to `head_fn`."""

    def __init__(self, det, head, head_fn):
        super().__init__()
        self.layers = det.model[:-1]
        self.save = det.save
        self.head_from = det.model[-1].f
        self.head = head
        self.head_fn = head_fn

    def forward(self, x):
        y = []
        for m in self.layers:
            if m.f != -1:
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]
            x = m(x)
            y.append(x if m.i in self.save else None)
        return self.head_fn(self.head, [x if j == -1 else y[j] for j in self.head_from])


def zoo_outputs(head, feats, task):
    """The model zoo's export of an Ultralytics head (module docstring)."""
    if task == "yolox":
        return tuple(head.levels(feats))
    one2one = getattr(head, "end2end", False)
    box_head, cls_head = (head.one2one_cv2, head.one2one_cv3) if one2one else (head.cv2, head.cv3)
    extra = {"segment": "cv4", "pose": "cv4", "obb": "cv4"}.get(task)
    extra_head = getattr(head, ("one2one_" if one2one else "") + extra) if extra else None
    outs = []
    for i, x in enumerate(feats):
        cls = cls_head[i](x).sigmoid()
        outs += [box_head[i](x), cls, torch.clamp(cls.sum(1, keepdim=True), 0, 1)]
        if task in ("segment", "pose"):
            outs.append(extra_head[i](x))
        elif task == "obb":
            outs.append((extra_head[i](x).sigmoid() - 0.25) * math.pi)
    if task == "segment":
        outs.append(head.proto(feats[0]))
    return tuple(outs)


def zoo_output_names(task, levels=3):
    extra = {"segment": ["mc"], "pose": ["kpt"], "obb": ["angle"]}.get(task, [])
    if task == "yolox":
        return [f"out_{i}" for i in range(levels)]
    names = [f"{n}_{i}" for i in range(levels) for n in ["box", "cls", "score_sum"] + extra]
    return names + (["proto"] if task == "segment" else [])


def build(name, size):
    """The Ultralytics model of `name` (YOLOX: its YOLOv5-s body and our YOLOX head) with
    variance-keeping random weights, in eval mode."""
    from ultralytics import YOLO
    from ultralytics.nn.modules import Conv
    yaml_name, task = YAMLS[name]
    # Ultralytics' parse_model sets Conv.default_act for the whole process when a YAML names an
    # activation (yolov7_tiny: LeakyReLU) and never sets it back, so every model after it would get
    # LeakyReLU: each model starts from the default, SiLU.
    Conv.default_act = nn.SiLU()
    torch.manual_seed(common.WEIGHT_SEED)
    if name == "yolov7_tiny":
        import yaml
        path = os.path.join(_settings, yaml_name)
        with open(path, "w") as f:
            yaml.safe_dump(yolov7_tiny_yaml(), f, sort_keys=False)
        yolo = YOLO(path)
    else:
        yolo = YOLO(yaml_name)
    det = yolo.model
    check_activation(name, det, Conv)
    head = det.model[-1]
    if task == "yolox":
        ch = [seq[0].conv.in_channels for seq in head.cv2]
        head = YoloXHead(ch, [int(s) for s in det.stride])
    init_weights(det, head, size)
    return yolo, det, head, task


def check_activation(name, det, conv_type):
    """Refuses a model whose Conv blocks do not all have the activation its YAML names (SiLU when it
    names none): the guard against the leaked Conv.default_act above."""
    named = det.yaml.get("activation")
    want = type(eval(named, {"nn": nn, "torch": torch})).__name__ if named else "SiLU"
    found = {type(m.act).__name__ for m in det.modules() if isinstance(m, conv_type)} - {"Identity"}
    if found != {want}:
        raise RuntimeError(f"{name}: Conv activations {sorted(found)}, its YAML names {want}")


def init_weights(det, head, size):
    """The definitions' own random initialisation, with BatchNorm statistics measured on seeded
    images: with the default statistics (mean 0, variance 1) the activations fade layer by layer and
    the outputs are almost the head's biases, so a comparison would say little."""
    body = Backbone(det, head, lambda h, feats: feats)
    images = torch.from_numpy(common.scene_images(8, size, size, common.NORM_SEED))
    common.estimate_norm_statistics(nn.ModuleList([body, head]), lambda m, b: run_all(m, b), [images])


def run_all(pair, images):
    body, head = pair
    feats = body(images)
    if isinstance(head, YoloXHead):
        head.levels(feats)
    else:  # the head's own convolutions, every branch (their BatchNorms need statistics too)
        for mods in [head.cv2, head.cv3] + [getattr(head, a) for a in ("cv4", "one2one_cv2", "one2one_cv3",
                                                                          "one2one_cv4") if hasattr(head, a)]:
            for i, x in enumerate(feats):
                mods[i](x)
        if hasattr(head, "proto"):
            head.proto(feats[0])


def export_stock(yolo, d, size):
    """Ultralytics' own ONNX export, as its format="rknn" runs it (end2end off)."""
    cwd = os.getcwd()
    work = tempfile.mkdtemp(prefix="openrknn-yolo-")
    try:
        os.chdir(work)  # the exporter writes next to the model's file name, here
        f = yolo.export(format="onnx", imgsz=size, simplify=False, end2end=False, verbose=False)
        shutil.move(str(f), os.path.join(d, "model.onnx"))
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)


def export_one(name, d, size_kind, n_calib):
    base = name[:-4] if name.endswith("_zoo") else name
    size = 640 if size_kind == "full" else 320
    yolo, det, head, task = build(base, size)
    x = common.scene_images(1, size, size, common.INPUT_SEED)
    zoo = name.endswith("_zoo")
    if zoo:
        model = Backbone(det, head, lambda h, feats: zoo_outputs(h, feats, task)).eval()
        common.onnx_export(model, [torch.from_numpy(x)], os.path.join(d, "model.onnx"), ["images"],
                           zoo_output_names(task))
        source = f"Ultralytics {YAMLS[base][0]}, the model zoo's head (DFL outside)"
    elif task == "yolox":
        model = Backbone(det, head, lambda h, feats: h.decoded(feats)).eval()
        common.onnx_export(model, [torch.from_numpy(x)], os.path.join(d, "model.onnx"), ["images"], ["output0"])
        source = "YOLOX-s: Ultralytics yolov5s.yaml body, YOLOX decoupled head, decoded output"
    else:
        export_stock(yolo, d, size)
        source = f"Ultralytics {YAMLS[base][0]}, export(format='onnx')"
    if task == "yolox":
        source = source.replace(f"Ultralytics {YAMLS[base][0]}", "YOLOX-s (yolov5s.yaml body, YOLOX head)")
    calib = common.scene_images(n_calib, size, size, common.CALIB_SEED)
    family = "YOLO " + {"detect": "detect", "segment": "seg", "pose": "pose", "obb": "obb", "yolox": "detect"}[task]
    common.write_model_dir(d, name, family, source, [("images", x)], [[c[None]] for c in calib], True)


def main():
    args = common.parse_args(__doc__.splitlines()[0], MODELS)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    try:
        return common.run_exports(args, lambda name, d: export_one(name, d, args.size, args.calib))
    finally:
        shutil.rmtree(_settings, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
