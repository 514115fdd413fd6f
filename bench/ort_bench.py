"""ONNX Runtime counterpart of rknn_bench: whole-model latency, load time and peak memory of one ONNX
model, printed as one JSON line with the same fields.

Usage: .venv/bin/python bench/ort_bench.py MODEL.onnx --shape NAME=1x3x224x224 [--shape ...]
           [--threads T] [--iters N] [--warmup N] [--min-time-ms MS] [--max-iters N] [--label NAME]

--shape fixes the dims of a graph input: the model is rewritten with those dims (by a child process,
into a temporary file, so the copy never counts in this process's peak memory) and ONNX Runtime loads
that, optimising a static graph as our converter does (it pins the same dims). ONNX Runtime's own
free-dimension overrides cannot do this: they reach only named dims, and the PP-OCR models also have
unnamed ones.

Measured the way rknn_bench measures (see bench/rknn_bench.c):
  load_ms      wall time of InferenceSession() on the model file (read from the page cache).
  first_ms     the first session.run().
  median/min/max_ms  session.run() after `warmup` untimed runs; at least `iters` samples and at least
               `min-time-ms` of sampling, at most `max-iters`.
  rss_*_mb     getrusage's ru_maxrss (peak resident set, MiB) before the session, after it, and after
               all runs. The Python process with onnxruntime and numpy imported accounts for rss_start.
  cpu_per_wall the process's CPU time over the timed runs divided by their wall time (cores kept
               busy, ONNX Runtime's spinning threads included).
  onnx         the file name of the model run (run_bench.sh labels QDQ INT8 and fp32 rows by it).
Session options: CPU provider, graph optimisation level ORT_ENABLE_ALL, intra_op_num_threads T,
inter_op_num_threads 1, sequential execution; everything else ONNX Runtime's defaults.
Inputs: float32, seeded uniform [0, 1), the same values as rknn_bench's.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1].replace("Usage: ", ""))
    p.add_argument("model")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DxDxD")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--min-time-ms", type=float, default=2000)
    p.add_argument("--max-iters", type=int, default=1000)
    p.add_argument("--label")
    p.add_argument("--write-pinned", help=argparse.SUPPRESS)  # the child process's job
    args = p.parse_args()
    args.shapes = {}
    for s in args.shape:
        name, _, dims = s.partition("=")
        if not re.fullmatch(r"\d+(x\d+)*", dims):
            p.error(f"bad --shape {s}")
        args.shapes[name] = [int(d) for d in dims.split("x")]
    return args


def write_pinned(model, shapes, out):
    """Runs in the child process: writes MODEL with the graph inputs' dims replaced by SHAPES."""
    import onnx
    m = onnx.load(model)
    for name, dims in shapes.items():
        inputs = [i for i in m.graph.input if i.name == name]
        if not inputs:
            sys.exit(f"--shape {name}: the model has no graph input of that name")
        shape = inputs[0].type.tensor_type.shape
        del shape.dim[:]
        for d in dims:
            shape.dim.add().dim_value = d
    onnx.save(m, out)


def pinned_copy(args):
    fd, path = tempfile.mkstemp(prefix="ort_bench_", suffix="_" + os.path.basename(args.model))
    os.close(fd)
    shape_args = [a for n, d in args.shapes.items() for a in ("--shape", f"{n}={'x'.join(map(str, d))}")]
    child = subprocess.run([sys.executable, __file__, args.model, *shape_args, "--write-pinned", path],
                           capture_output=True, text=True)
    if child.returncode != 0:
        os.unlink(path)
        raise RuntimeError(child.stderr.strip() or "pinning the input shapes failed")
    return path


def seeded_uniform(count, state):
    """The next COUNT values of xorshift32 as (s >> 8) / 2^24, as in rknn_bench.c; state = [seed]."""
    import numpy as np
    out = np.empty(count, dtype=np.float32)
    s = state[0]
    for k in range(count):
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        out[k] = (s >> 8) / 16777216.0
    state[0] = s
    return out


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # ru_maxrss is in KiB


def main():
    args = parse_args()
    if args.write_pinned:
        write_pinned(args.model, args.shapes, args.write_pinned)
        return
    import numpy as np
    import onnxruntime as ort

    model = pinned_copy(args) if args.shapes else args.model
    rss_start = rss_mb()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    t0 = time.perf_counter()
    try:
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    finally:
        if model != args.model:
            os.unlink(model)
    load_ms = (time.perf_counter() - t0) * 1e3
    rss_load = rss_mb()

    feeds, state = {}, [42]
    for i in session.get_inputs():
        dims = args.shapes.get(i.name) or [d if isinstance(d, int) else 1 for d in i.shape]
        if i.type != "tensor(float)":
            raise RuntimeError(f"input {i.name}: only float32 inputs are supported")
        feeds[i.name] = seeded_uniform(int(np.prod(dims)), state).reshape(dims)

    t0 = time.perf_counter()
    session.run(None, feeds)
    first_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(args.warmup):
        session.run(None, feeds)
    samples = []
    iters = max(1, args.iters)
    start, cpu_start = time.perf_counter(), time.process_time()
    while len(samples) < max(iters, args.max_iters) and (
            len(samples) < iters or (time.perf_counter() - start) * 1e3 < args.min_time_ms):
        t0 = time.perf_counter()
        session.run(None, feeds)
        samples.append((time.perf_counter() - t0) * 1e3)
    cpu_per_wall = (time.process_time() - cpu_start) / (time.perf_counter() - start)
    samples.sort()
    mid = len(samples) // 2
    median = samples[mid] if len(samples) % 2 else (samples[mid - 1] + samples[mid]) / 2
    print(json.dumps({
        "runtime": "onnxruntime", "model": args.label or os.path.basename(args.model),
        "threads": args.threads, "load_ms": round(load_ms, 3), "first_ms": round(first_ms, 3),
        "n": len(samples), "median_ms": round(median, 4), "min_ms": round(samples[0], 4),
        "max_ms": round(samples[-1], 4), "rss_start_mb": round(rss_start, 1),
        "rss_load_mb": round(rss_load, 1), "rss_peak_mb": round(rss_mb(), 1),
        "cpu_per_wall": round(cpu_per_wall, 2), "onnx": os.path.basename(args.model),
        "ort_version": ort.__version__,
    }))


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        sys.exit(f"ort_bench.py: {e}")
