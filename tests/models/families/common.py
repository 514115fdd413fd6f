"""What the model-family exporters share (docs/model_families.md): the model directory they write,
seeded inputs, weight initialisations that keep activations in a trained network's range, and
torch.onnx.export across torch 1.13 (.venv, .venv-ultralytics) and torch 2.x (.venv-families).

A model directory OUT/NAME holds:
  model.onnx     the network, fixed input shapes
  in_K.npy       input K of the reference run (float32 NCHW images, int64 tokens, ...)
  calib.txt      the INT8 calibration list (calib/NN_K.npy, one line per sample), for the models the
                 vendor's model zoo quantizes
  meta.json      written last (its presence marks the directory complete): name, family, source,
                 the inputs' names, shapes and dtypes, whether the zoo quantizes the model
reference.py adds ref.npz (ONNX Runtime fp32 outputs on in_K.npy).

Only numpy, torch and the standard library are imported here: every exporter's environment has them.
"""
import json
import os
import shutil

import numpy as np
import torch

OPSET = 13
WEIGHT_SEED = 0
INPUT_SEED = 1234
CALIB_SEED = 4321
NORM_SEED = 99


def parse_args(description, models):
    """The exporters' shared command line: OUT_DIR [--size full|test] [--only a,b] [--force] [--list]."""
    import argparse
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--size", choices=("full", "test"), default="full",
                    help="full: the deployed input sizes (bench); test: the reduced sizes of the CTest subset")
    ap.add_argument("--only", help="comma-separated model names (others are skipped; unknown names are ignored, "
                    "so one list can be given to every exporter)")
    ap.add_argument("--calib", type=int, default=8, help="calibration samples per INT8 model")
    ap.add_argument("--force", action="store_true", help="export even when the model's directory is complete")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(models))
        raise SystemExit(0)
    if not args.out_dir:
        ap.error("OUT_DIR is required")
    wanted = set(args.only.split(",")) if args.only else None
    args.names = [m for m in models if wanted is None or m in wanted]
    return args


def is_complete(out_dir, name):
    return os.path.isfile(os.path.join(out_dir, name, "meta.json"))


def run_exports(args, export_one):
    """Calls export_one(name, model_dir) for every selected model whose directory is not complete.
    A model that fails to export is reported and the others go on; the exit status says so."""
    import time
    import traceback
    failed = []
    for name in args.names:
        if not args.force and is_complete(args.out_dir, name):
            print(f"{name}: up to date", flush=True)
            continue
        d = os.path.join(args.out_dir, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        start = time.time()
        try:
            export_one(name, d)
        except Exception as e:  # an exporter's failure is a result to report, not a reason to stop
            traceback.print_exc()
            print(f"{name}: EXPORT FAILED: {type(e).__name__}: {e}", flush=True)
            failed.append(name)
            continue
        print(f"{name}: exported in {time.time() - start:.1f} s", flush=True)
    return 1 if failed else 0


def onnx_export(module, args, path, input_names, output_names, opset=OPSET):
    """torch.onnx.export with the TorchScript exporter on every torch (torch >= 2.9 defaults to the
    dynamo exporter, which needs onnxscript and exports other graphs than the vendors' tools saw)."""
    import inspect
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    module.eval()
    # Not under no_grad: torch 1.13's nn.MultiheadAttention then takes its fused fast path, which has
    # no ONNX symbolic (aten::_native_multi_head_attention).
    torch.onnx.export(module, tuple(args), path, opset_version=opset, input_names=list(input_names),
                      output_names=list(output_names), do_constant_folding=True, **kwargs)


def write_model_dir(d, name, family, source, inputs, calib=None, zoo_int8=False):
    """inputs: [(name, ndarray)] of the reference run; calib: list of samples, each a list of
    ndarrays in input order, or None. model.onnx must already be in d."""
    if not os.path.isfile(os.path.join(d, "model.onnx")):
        raise RuntimeError(f"{d}/model.onnx was not written")
    for k, (_, x) in enumerate(inputs):
        np.save(os.path.join(d, f"in_{k}.npy"), np.ascontiguousarray(x))
    if calib:
        os.makedirs(os.path.join(d, "calib"), exist_ok=True)
        lines = []
        for i, sample in enumerate(calib):
            files = []
            for k, x in enumerate(sample):
                f = f"calib/{i:02d}_{k}.npy"
                np.save(os.path.join(d, f), np.ascontiguousarray(x))
                files.append(f)
            lines.append(" ".join(files))
        with open(os.path.join(d, "calib.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    meta = {"name": name, "family": family, "source": source, "zoo_int8": bool(zoo_int8) and bool(calib),
            "inputs": [{"name": n, "shape": list(x.shape), "dtype": str(x.dtype)} for n, x in inputs]}
    tmp = os.path.join(d, "meta.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, os.path.join(d, "meta.json"))


# ---- inputs -----------------------------------------------------------------------------------------

def scene_images(n, h, w, seed):
    """n RGB images, float32 NCHW in [0, 1]: smooth gradients with a few flat blocks, the kind of
    structure a camera frame has (uniform noise would calibrate INT8 on a distribution no
    deployed model sees)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, 3, h, w), np.float32)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    y /= h
    x /= w
    for i in range(n):
        a, b, c = rng.uniform(2, 12, 3)
        img = np.stack([x * rng.uniform(0.3, 1), y * rng.uniform(0.3, 1),
                        0.5 + 0.5 * np.sin(a * x * y + b * x + c * y)])
        for _ in range(rng.integers(4, 12)):
            bh, bw = rng.integers(max(2, h // 16), max(3, h // 3)), rng.integers(max(2, w // 16), max(3, w // 3))
            y0, x0 = rng.integers(0, h - bh), rng.integers(0, w - bw)
            img[:, y0:y0 + bh, x0:x0 + bw] = rng.uniform(0, 1, (3, 1, 1))
        img += rng.normal(0, 0.03, img.shape)
        out[i] = img.clip(0, 1)
    return out


IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)


def imagenet_images(n, h, w, seed):
    """scene_images normalised as torchvision's classifiers expect (ImageNet mean/std)."""
    return ((scene_images(n, h, w, seed) - IMAGENET_MEAN) / IMAGENET_STD).astype(np.float32)


# ---- weights ----------------------------------------------------------------------------------------

def estimate_norm_statistics(model, forward, batches):
    """Random weights with BatchNorm statistics mean 0 / variance 1 let activations grow (or fade)
    layer after layer, so deep nets overflow fp16 or output nothing but biases. The running statistics
    are measured instead on seeded inputs in train mode (no gradient step): every BatchNorm then
    normalises its input to a sane range, as in a trained net. forward(model, batch) runs one batch."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in norms:
        bn.reset_running_stats()
        bn.momentum = None  # a plain average over every batch seen
    model.train()
    with torch.no_grad():
        for b in batches:
            forward(model, b)
    model.eval()


def randomize_affine(model, gen):
    """Random BatchNorm / LayerNorm / GroupNorm scales and shifts (lecun_init's norm layers), so they
    do not all compute the plain normalisation their default initialisation gives."""
    for m in model.modules():
        if isinstance(m, (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm, torch.nn.GroupNorm)) or \
                type(m).__name__.endswith("LayerNorm"):
            w, b = getattr(m, "weight", None), getattr(m, "bias", None)
            if isinstance(w, torch.nn.Parameter):
                with torch.no_grad():
                    w.copy_(torch.empty_like(w).uniform_(0.5, 1.5, generator=gen))
            if isinstance(b, torch.nn.Parameter):
                with torch.no_grad():
                    b.copy_(torch.empty_like(b).uniform_(-0.3, 0.3, generator=gen))


def lecun_init(model, seed, skip=()):
    """Every weight of fan-in n drawn from N(0, 1/n) (biases U(-0.1, 0.1), embeddings and other free
    parameters N(0, 0.5^2)), norm layers random affine: variance-keeping weights, as training leaves
    them in range. Some configurations' own initialisation draws weights near 0 (transformers'
    SamConfig: |w| < 1e-9), whose outputs underflow fp16 and say nothing. `skip`: parameters kept."""
    gen = torch.Generator().manual_seed(seed)
    skip = {id(p) for p in skip}
    with torch.no_grad():
        for m in model.modules():
            for pname, p in m.named_parameters(recurse=False):
                if id(p) in skip or not p.dtype.is_floating_point:
                    continue
                if isinstance(m, (torch.nn.Linear, torch.nn.modules.conv._ConvNd)) and pname == "weight":
                    fan_in = p.shape[1] * int(np.prod(p.shape[2:])) if p.dim() > 1 else p.shape[0]
                    if isinstance(m, torch.nn.modules.conv._ConvTransposeNd):
                        fan_in = p.shape[0] * int(np.prod(p.shape[2:])) // max(1, m.groups)
                    p.copy_(torch.randn(p.shape, generator=gen) / np.sqrt(max(1, fan_in)))
                elif pname == "bias":
                    p.copy_(torch.empty(p.shape).uniform_(-0.1, 0.1, generator=gen))
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    randomize_affine(model, gen)
