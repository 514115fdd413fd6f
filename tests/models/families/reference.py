#!/usr/bin/python3
"""ONNX Runtime fp32 reference outputs of the model-family directories (docs/model_families.md).

Usage: .venv/bin/python reference.py WORK_DIR [--only a,b] [--force]

For every complete directory WORK_DIR/NAME (meta.json present) it runs model.onnx on in_K.npy with
ONNX Runtime's CPU provider on one thread (so the reference does not depend on how work is split) and
writes ref.npz: out_0, out_1, ... in the model's output order, and `names`. A ref.npz newer than the
model and its inputs is kept unless --force is given.
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import onnxruntime as ort


def load_inputs(d, meta):
    return {i["name"]: np.load(os.path.join(d, f"in_{k}.npy")) for k, i in enumerate(meta["inputs"])}


def session(path, threads=1):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def write_reference(d, force=False):
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    ref = os.path.join(d, "ref.npz")
    sources = [os.path.join(d, "model.onnx")] + glob.glob(os.path.join(d, "in_*.npy"))
    if not force and os.path.isfile(ref) and all(os.path.getmtime(ref) >= os.path.getmtime(s) for s in sources):
        return False
    sess = session(os.path.join(d, "model.onnx"))
    outs = sess.run(None, load_inputs(d, meta))
    names = [o.name for o in sess.get_outputs()]
    for n, y in zip(names, outs):
        if not np.all(np.isfinite(y)):
            raise RuntimeError(f"{d}: ONNX Runtime's output '{n}' is not finite: the export is broken")
        if y.size > 1 and np.ptp(y) == 0:  # e.g. a classifier initialised to zeros: any runtime would match
            raise RuntimeError(f"{d}: ONNX Runtime's output '{n}' is constant: the comparison would say nothing")
    np.savez(ref + ".tmp.npz", names=np.array(names), **{f"out_{k}": y for k, y in enumerate(outs)})
    os.replace(ref + ".tmp.npz", ref)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work_dir")
    ap.add_argument("--only")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    for meta in sorted(glob.glob(os.path.join(args.work_dir, "*", "meta.json"))):
        d = os.path.dirname(meta)
        if wanted is not None and os.path.basename(d) not in wanted:
            continue
        if write_reference(d, args.force):
            print(f"{os.path.basename(d)}: ONNX Runtime reference written", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
