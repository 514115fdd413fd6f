#!/usr/bin/python3
"""Writes the torchvision test models and their PyTorch reference outputs.

Usage: .venv/bin/python export_torchvision.py OUT_DIR [--models a,b,...] [--force]

For every model NAME it writes, into OUT_DIR:
  NAME.onnx     ONNX opset 13, fixed shape 1x3x224x224, input "input", output "output"
  NAME.in.f32   the reference input: raw little-endian float32, NCHW, seeded uniform [0, 1)
  NAME.out.f32  PyTorch's output for that input (float32, eval mode)
A model whose three files all exist is skipped unless --force is given, so the script can be re-run
cheaply. Files are written under a temporary name and renamed, so an interrupted run never leaves a
file that looks complete.

Nothing is downloaded: the weights are torchvision's random initialisation under a fixed seed. Purely
random weights with BatchNorm statistics mean 0 / variance 1 let activations grow layer after layer
(deep nets overflow fp16, which would make every fp16 comparison meaningless), so the BatchNorm running
statistics are first measured on a few seeded random images in train mode (no gradient step). The
weights stay random, but every BatchNorm then normalises its input to a sane range as in a trained net.

Needs Debian's python3-torch and python3-torchvision; run it with the project's .venv python, which
sees them (scripts/setup.sh).
"""
import argparse
import os
import sys
import time

import torch
import torchvision

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
          "shufflenet_v2_x1_0", "efficientnet_b0"]
INPUT_SHAPE = (1, 3, 224, 224)
OPSET = 13
WEIGHT_SEED = 0
INPUT_SEED = 1234
BN_SEED = 99
# Batch statistics from 16 images are plenty to keep activations in range; more only costs CI time.
BN_IMAGES = 16


def estimate_batchnorm_statistics(model):
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for bn in norms:
        bn.reset_running_stats()
        bn.momentum = None  # None = plain average over all batches seen
    gen = torch.Generator().manual_seed(BN_SEED)
    images = torch.rand((BN_IMAGES,) + INPUT_SHAPE[1:], generator=gen)
    model.train()
    with torch.no_grad():
        model(images)


def write_atomically(path, write):
    tmp = path + ".tmp"
    write(tmp)
    os.replace(tmp, path)


def export_one(name, out_dir):
    torch.manual_seed(WEIGHT_SEED)
    model = getattr(torchvision.models, name)(weights=None)  # weights=None: random init, no download
    estimate_batchnorm_statistics(model)
    model.eval()
    x = torch.rand(INPUT_SHAPE, generator=torch.Generator().manual_seed(INPUT_SEED))
    with torch.no_grad():
        y = model(x)
    base = os.path.join(out_dir, name)
    write_atomically(base + ".in.f32", lambda p: x.numpy().astype("<f4").tofile(p))
    write_atomically(base + ".out.f32", lambda p: y.numpy().astype("<f4").tofile(p))
    # The .onnx goes last: its presence is what marks the model as done.
    write_atomically(base + ".onnx", lambda p: torch.onnx.export(
        model, x, p, opset_version=OPSET, input_names=["input"], output_names=["output"],
        do_constant_folding=True, training=torch.onnx.TrainingMode.EVAL))
    return y


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in args.models.split(","):
        base = os.path.join(args.out_dir, name)
        if not args.force and all(os.path.exists(base + ext) for ext in (".onnx", ".in.f32", ".out.f32")):
            print(f"{name}: up to date")
            continue
        start = time.time()
        y = export_one(name, args.out_dir)
        print(f"{name}: output {tuple(y.shape)}, |y| max {y.abs().max().item():.3g}, "
              f"std {y.std().item():.3g}, {time.time() - start:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
