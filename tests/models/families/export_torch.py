#!/usr/bin/python3
"""Exports the convolutional and vision-transformer families with seeded random weights
(docs/model_families.md): torchvision classifiers and segmenters, timm's MaxViT, a
RetinaFace-MobileNet0.25, an LPRNet and CRNNs with LSTM and GRU, written from their papers' and
reference implementations' layer lists.

Usage: .venv/bin/python export_torch.py OUT_DIR [--size full|test] [--only a,b] [--force] [--list]

Runs in the project's .venv: Debian's torch 1.13 / torchvision 0.14, and timm (requirements/test.txt;
torchvision 0.14 has no MaxViT). Writes the model directories described in common.py.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing common must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


# ---- torchvision / timm ---------------------------------------------------------------------------
# name: (constructor, full input size, test input size, the zoo quantizes it, family)
def _tv(name, **kw):
    import torchvision
    return lambda size: getattr(torchvision.models, name)(weights=None, **kw)


def _tv_seg(name):
    import torchvision

    class Out(nn.Module):  # torchvision's segmenters return a dict; the deployed model returns "out"
        def __init__(self):
            super().__init__()
            self.m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None,
                                                                    aux_loss=False)

        def forward(self, x):
            return self.m(x)["out"]
    return lambda size: Out()


def _vit(size):
    import torchvision
    if size >= 224:
        model = torchvision.models.vit_b_16(weights=None)
    else:  # test size: ViT-B/16's layout, narrower and shallower (ViT fixes its image size in the weights)
        model = torchvision.models.VisionTransformer(image_size=size, patch_size=16, num_layers=3, num_heads=4,
                                                     hidden_dim=128, mlp_dim=256)
    # torchvision initialises the classifier to zeros (for fine-tuning): every output would be 0.
    head = model.heads.head
    nn.init.normal_(head.weight, std=head.in_features ** -0.5)
    nn.init.uniform_(head.bias, -0.1, 0.1)
    return model


def _maxvit(size):
    import timm
    return timm.create_model("maxvit_tiny_tf_224", pretrained=False, img_size=size)


TORCHVISION = {
    "resnet50": (_tv("resnet50"), 224, 96, True, "classification"),
    "mobilenet_v2": (_tv("mobilenet_v2"), 224, 96, True, "classification"),
    "mobilenet_v3_large": (_tv("mobilenet_v3_large"), 224, 96, True, "classification"),
    "efficientnet_b0": (_tv("efficientnet_b0"), 224, 96, True, "classification"),
    "regnet_y_400mf": (_tv("regnet_y_400mf"), 224, 96, True, "classification"),
    "convnext_tiny": (_tv("convnext_tiny"), 224, 64, False, "classification"),
    "vit_b_16": (_vit, 224, 64, False, "classification"),
    "swin_t": (_tv("swin_t"), 224, 64, False, "classification"),
    "swin_v2_t": (_tv("swin_v2_t"), 224, 64, False, "classification"),
    "maxvit_t": (_maxvit, 224, 64, False, "classification"),
    "deeplabv3_mobilenet_v3_large": (_tv_seg("deeplabv3_mobilenet_v3_large"), 512, 128, True, "segmentation"),
    "lraspp_mobilenet_v3_large": (_tv_seg("lraspp_mobilenet_v3_large"), 512, 128, True, "segmentation"),
}


def _register_swin_v2_symbolic():
    """torch 1.13 has no ONNX symbolic for aten::zero_ (swin_v2's attention mask zeroes a tensor in
    place): export it as x * 0, which is what it computes for finite x."""
    def zero(g, self):
        return g.op("Mul", self, g.op("Constant", value_t=torch.tensor(0, dtype=torch.float32)))
    torch.onnx.register_custom_op_symbolic("aten::zero", zero, 9)


def export_torchvision(name, d, size_kind, n_calib):
    make, full, test, zoo_int8, family = TORCHVISION[name]
    size = full if size_kind == "full" else test
    torch.manual_seed(common.WEIGHT_SEED)
    model = make(size)
    calib = common.imagenet_images(n_calib, size, size, common.CALIB_SEED) if zoo_int8 else None
    # Batch statistics from 16 images are enough to keep activations in range.
    common.estimate_norm_statistics(model, lambda m, b: m(b),
                                    [torch.from_numpy(common.imagenet_images(16, size, size, common.NORM_SEED))])
    x = common.imagenet_images(1, size, size, common.INPUT_SEED)
    if name == "swin_v2_t":
        _register_swin_v2_symbolic()
    common.onnx_export(model, [torch.from_numpy(x)], os.path.join(d, "model.onnx"), ["input"], ["output"])
    source = "timm maxvit_tiny_tf_224" if name == "maxvit_t" else f"torchvision {name}"
    if name == "vit_b_16" and size < 224:
        source = "torchvision VisionTransformer (ViT-B/16 layout: 3 layers, width 128)"
    write(d, name, family, source, [("input", x)], calib, zoo_int8)


# ---- RetinaFace (MobileNet0.25 backbone) ------------------------------------------------------------
# After the reference PyTorch implementation the model zoo converts (biubug6/Pytorch_Retinaface):
# MobileNetV1 x0.25 with LeakyReLU(0.1), an FPN over its three stages, an SSH context module per
# level, and class / box / landmark heads of 2 anchors per position; conf after Softmax.
def _conv_bn(cin, cout, stride=1, leaky=0.0, k=3):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.LeakyReLU(leaky, inplace=True) if leaky else nn.ReLU(inplace=True))


def _conv_dw(cin, cout, stride, leaky=0.1):
    return nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                         nn.LeakyReLU(leaky, inplace=True),
                         nn.Conv2d(cin, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout),
                         nn.LeakyReLU(leaky, inplace=True))


class _SSH(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        leaky = 0.1 if cout <= 64 else 0.0
        self.conv3 = nn.Sequential(nn.Conv2d(cin, cout // 2, 3, 1, 1, bias=False), nn.BatchNorm2d(cout // 2))
        self.conv5_1 = _conv_bn(cin, cout // 4, leaky=leaky)
        self.conv5_2 = nn.Sequential(nn.Conv2d(cout // 4, cout // 4, 3, 1, 1, bias=False), nn.BatchNorm2d(cout // 4))
        self.conv7_2 = _conv_bn(cout // 4, cout // 4, leaky=leaky)
        self.conv7_3 = nn.Sequential(nn.Conv2d(cout // 4, cout // 4, 3, 1, 1, bias=False), nn.BatchNorm2d(cout // 4))

    def forward(self, x):
        c3 = self.conv3(x)
        c5_1 = self.conv5_1(x)
        c5 = self.conv5_2(c5_1)
        c7 = self.conv7_3(self.conv7_2(c5_1))
        return F.relu(torch.cat([c3, c5, c7], 1))


class RetinaFace(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(_conv_bn(3, 8, 2, leaky=0.1), _conv_dw(8, 16, 1), _conv_dw(16, 32, 2),
                                    _conv_dw(32, 32, 1), _conv_dw(32, 64, 2), _conv_dw(64, 64, 1))
        self.stage2 = nn.Sequential(*[_conv_dw(64, 128, 2)] + [_conv_dw(128, 128, 1) for _ in range(5)])
        self.stage3 = nn.Sequential(_conv_dw(128, 256, 2), _conv_dw(256, 256, 1))
        out = 64
        self.lateral = nn.ModuleList(_conv_bn(c, out, leaky=0.1, k=1) for c in (64, 128, 256))
        self.merge = nn.ModuleList(_conv_bn(out, out, leaky=0.1) for _ in range(2))
        self.ssh = nn.ModuleList(_SSH(out, out) for _ in range(3))
        self.cls = nn.ModuleList(nn.Conv2d(out, 2 * 2, 1) for _ in range(3))
        self.box = nn.ModuleList(nn.Conv2d(out, 2 * 4, 1) for _ in range(3))
        self.ldm = nn.ModuleList(nn.Conv2d(out, 2 * 10, 1) for _ in range(3))

    def forward(self, x):
        c1 = self.stage1(x)
        c2 = self.stage2(c1)
        c3 = self.stage3(c2)
        p = [lat(c) for lat, c in zip(self.lateral, (c1, c2, c3))]
        p[1] = self.merge[1](p[1] + F.interpolate(p[2], size=p[1].shape[2:], mode="nearest"))
        p[0] = self.merge[0](p[0] + F.interpolate(p[1], size=p[0].shape[2:], mode="nearest"))
        f = [s(q) for s, q in zip(self.ssh, p)]

        def head(convs, k):
            return torch.cat([c(q).permute(0, 2, 3, 1).reshape(q.shape[0], -1, k) for c, q in zip(convs, f)], 1)
        return head(self.box, 4), F.softmax(head(self.cls, 2), dim=-1), head(self.ldm, 10)


# ---- LPRNet -----------------------------------------------------------------------------------------
# After the LPRNet reference implementation the model zoo converts (sirius-ai/LPRNet_Pytorch): input
# 1x3x24x94, small basic blocks, MaxPool3d layers whose (1, 3, 3) windows with stride 2 or 4 in the
# first dim also subsample the channels, four global-context maps (each divided by its mean square)
# concatenated, a 1x1 container conv; logits [1, 68, 18] (68 characters of Chinese plates, 18 steps).
class _SmallBasicBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(cin, cout // 4, 1), nn.ReLU(),
            nn.Conv2d(cout // 4, cout // 4, (3, 1), padding=(1, 0)), nn.ReLU(),
            nn.Conv2d(cout // 4, cout // 4, (1, 3), padding=(0, 1)), nn.ReLU(),
            nn.Conv2d(cout // 4, cout, 1))

    def forward(self, x):
        return self.block(x)


class _MaxPool3d(nn.Module):
    """The reference applies nn.MaxPool3d to the 4-D NCHW map, which torch takes as one unbatched
    C x D x H x W volume: the depth windows run over the channels. Exported as that 4-D call, the
    ONNX MaxPool has 3-D windows on a 4-D tensor (invalid: ONNX Runtime refuses it), so the map is
    given a batch dim of 1 around a 5-D MaxPool, which computes the same for batch 1."""

    def __init__(self, kernel, stride):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel, stride)

    def forward(self, x):
        return self.pool(x.unsqueeze(0)).squeeze(0)


class LPRNet(nn.Module):
    CLASSES = 68

    def __init__(self):
        super().__init__()
        nc = self.CLASSES
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(),                          # 2
            _MaxPool3d((1, 3, 3), (1, 1, 1)),
            _SmallBasicBlock(64, 128), nn.BatchNorm2d(128), nn.ReLU(),                   # 6
            _MaxPool3d((1, 3, 3), (2, 1, 2)),
            _SmallBasicBlock(64, 256), nn.BatchNorm2d(256), nn.ReLU(),
            _SmallBasicBlock(256, 256), nn.BatchNorm2d(256), nn.ReLU(),                  # 13
            _MaxPool3d((1, 3, 3), (4, 1, 2)),
            nn.Dropout(0.5),
            nn.Conv2d(64, 256, (1, 4)), nn.BatchNorm2d(256), nn.ReLU(),
            nn.Dropout(0.5),
            nn.Conv2d(256, nc, (13, 1)), nn.BatchNorm2d(nc), nn.ReLU())                  # 22
        self.container = nn.Conv2d(448 + nc, nc, 1)

    def forward(self, x):
        keep = []
        for i, layer in enumerate(self.backbone.children()):
            x = layer(x)
            if i in (2, 6, 13, 22):
                keep.append(x)
        context = []
        for i, f in enumerate(keep):
            if i in (0, 1):
                f = F.avg_pool2d(f, 5, 5)
            if i == 2:
                f = F.avg_pool2d(f, (4, 10), (4, 2))
            context.append(f / torch.mean(torch.pow(f, 2)))
        return torch.mean(self.container(torch.cat(context, 1)), dim=2)


# ---- CRNN -------------------------------------------------------------------------------------------
# The CRNN of Shi et al. (a VGG-style conv stack over a 32-pixel-high grey text line, one time step per
# column of its 1-row feature map, two bidirectional recurrent layers, per-step class scores for CTC):
# with LSTM as in the paper, and with GRU. Test size: narrower convs and a 64-pixel-wide line.
class CRNN(nn.Module):
    def __init__(self, cell, width, hidden, classes=37):
        super().__init__()
        c = [width, 2 * width, 4 * width, 4 * width, 8 * width, 8 * width, 8 * width]
        layers, cin = [], 1
        # MaxPool2d arguments: 2x2 halving, then 2x2 windows of stride (2, 1) padded by one column
        pools = {0: (2, 2), 1: (2, 2), 3: (2, (2, 1), (0, 1)), 5: (2, (2, 1), (0, 1))}
        for i, cout in enumerate(c):
            k, p = (2, 0) if i == 6 else (3, 1)
            layers += [nn.Conv2d(cin, cout, k, 1, p)]
            if i in (4, 5, 6):
                layers += [nn.BatchNorm2d(cout)]
            layers += [nn.ReLU(inplace=True)]
            if i in pools:
                layers += [nn.MaxPool2d(*pools[i])]
            cin = cout
        self.cnn = nn.Sequential(*layers)
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn1 = rnn(cin, hidden, bidirectional=True)
        self.fc1 = nn.Linear(2 * hidden, hidden)
        self.rnn2 = rnn(hidden, hidden, bidirectional=True)
        self.fc2 = nn.Linear(2 * hidden, classes)

    def forward(self, image):
        f = self.cnn(image)                         # [1, C, 1, W']
        seq = f.squeeze(2).permute(2, 0, 1)         # [W', 1, C]: one step per column
        y, _ = self.rnn1(seq)
        y, _ = self.rnn2(self.fc1(y))
        return self.fc2(y)                          # [W', 1, classes]


def export_retinaface(name, d, size_kind, n_calib):
    size = 320 if size_kind == "full" else 160
    torch.manual_seed(common.WEIGHT_SEED)
    model = RetinaFace()
    # RetinaFace's preprocessing subtracts the BGR mean (104, 117, 123) from 0..255 pixels.
    def images(n, seed):
        return (common.scene_images(n, size, size, seed) * 255 - np.array([104, 117, 123], np.float32)
                .reshape(1, 3, 1, 1)).astype(np.float32)
    common.estimate_norm_statistics(model, lambda m, b: m(b), [torch.from_numpy(images(16, common.NORM_SEED))])
    x = images(1, common.INPUT_SEED)
    common.onnx_export(model, [torch.from_numpy(x)], os.path.join(d, "model.onnx"), ["input"],
                       ["loc", "conf", "landms"])
    calib = images(n_calib, common.CALIB_SEED)
    write(d, name, "face detection", "RetinaFace MobileNet0.25 (Pytorch_Retinaface layer list)",
          [("input", x)], calib, True)


def export_lprnet(name, d, size_kind, n_calib):
    torch.manual_seed(common.WEIGHT_SEED)
    model = LPRNet()
    # LPRNet's preprocessing: (pixel - 127.5) * 0.0078125. Its input size is fixed by the layer list.
    def images(n, seed):
        return ((common.scene_images(n, 24, 94, seed) * 255 - 127.5) * 0.0078125).astype(np.float32)
    common.estimate_norm_statistics(model, lambda m, b: m(b), [torch.from_numpy(images(16, common.NORM_SEED))])
    x = images(1, common.INPUT_SEED)
    common.onnx_export(model, [torch.from_numpy(x)], os.path.join(d, "model.onnx"), ["input"], ["logits"])
    write(d, name, "licence plate", "LPRNet (LPRNet_Pytorch layer list)", [("input", x)],
          images(n_calib, common.CALIB_SEED), True)


def export_crnn(name, d, size_kind, n_calib):
    cell = name.split("_")[1]
    torch.manual_seed(common.WEIGHT_SEED)
    if size_kind == "full":
        model, shape = CRNN(cell, 64, 256), (1, 1, 32, 100)
    else:
        model, shape = CRNN(cell, 8, 32), (1, 1, 32, 64)
    # A grey text line normalised to [-1, 1]: the scene generator's first channel.
    def lines(n, seed):
        return (common.scene_images(n, shape[2], shape[3], seed)[:, :1] * 2 - 1).astype(np.float32)
    common.estimate_norm_statistics(model, lambda m, b: m(b), [torch.from_numpy(lines(16, common.NORM_SEED))])
    x = lines(1, common.INPUT_SEED)
    common.onnx_export(model, [torch.from_numpy(x)], os.path.join(d, "model.onnx"), ["image"], ["logits"])
    write(d, name, "text recognition", f"CRNN (Shi et al.) with bidirectional {cell.upper()}",
          [("image", x)], None, False)


def write(d, name, family, source, inputs, calib, zoo_int8):
    samples = [[c[None]] for c in calib] if calib is not None else None
    common.write_model_dir(d, name, family, source, inputs, samples, zoo_int8)


EXPORTERS = {name: export_torchvision for name in TORCHVISION}
EXPORTERS.update({"retinaface_mobilenet0.25": export_retinaface, "lprnet": export_lprnet,
                  "crnn_lstm": export_crnn, "crnn_gru": export_crnn})


def main():
    args = common.parse_args(__doc__.splitlines()[0], list(EXPORTERS))
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    return common.run_exports(args, lambda name, d: EXPORTERS[name](name, d, args.size, args.calib))


if __name__ == "__main__":
    sys.exit(main())
