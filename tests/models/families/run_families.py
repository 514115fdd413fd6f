#!/usr/bin/python3
"""Converts and runs the model-family directories with OpenRKNN's Python API and compares every
output with ONNX Runtime fp32 (docs/model_families.md).

Usage: .venv/bin/python run_families.py WORK_DIR [--only a,b] [--int8] [--time] [--json FILE]

Needs PYTHONPATH=python and OPENRKNN_LIB_DIR=<build tree> (bench/model_families/run.sh sets them).
For every complete directory (meta.json and reference.py's ref.npz):
  - fp16: rknn.api.RKNN config(target_platform="rk3588") / load_onnx / build(do_quantization=False) /
    init_runtime / inference (float32 inputs, 4-D ones NCHW); the cosine of every output with ONNX
    Runtime's, the least of them reported; pass when it is >= 0.999.
  - fp32 (config float_dtype="float32"), only when fp16 stays below 0.999 or its outputs are not
    finite: says whether fp16 storage alone loses the accuracy (or ONNX Runtime's outputs lie beyond
    fp16's range); and then ONNX Runtime fp32 on the inputs rounded to fp16, against its
    own output: how much this network (random weights) amplifies one rounding of its input alone.
  - --int8: build(do_quantization=True, dataset=calib.txt) for the models the vendor's zoo quantizes.
  - --time: median milliseconds of one inference, ours (RKNN.inference; fp16, and INT8 with --int8)
    and ONNX Runtime fp32 (session.run), each on one thread (set OPENRKNN_NUM_THREADS=1 for ours),
    after one warm-up, at least 3 runs and 1 s of them.
A conversion or run that fails is reported with the converter's or runtime's message. Prints one
line per model as it goes, then the markdown accuracy table (docs/model_families.md) and with --time
the speed table (docs/benchmarks.md); --json writes one JSON object per model.
"""
import argparse
import glob
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True  # importing common must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

COS_MIN = 0.999
FP16_MAX = 65504.0
SPEED_TARGET = 0.8  # issue 28: ours fp16 at 1 thread against ONNX Runtime fp32 at 1 thread
PLATFORM = "rk3588"


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if not np.isfinite(na) or not np.isfinite(nb):
        return float("nan")
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return float(a @ b / (na * nb))


def load(d):
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    inputs = reference.load_inputs(d, meta)
    ref = np.load(os.path.join(d, "ref.npz"))
    names = [str(n) for n in ref["names"]]
    return meta, [inputs[i["name"]] for i in meta["inputs"]], names, [ref[f"out_{k}"] for k in range(len(names))]


class Run:
    """One conversion and run: outputs, or the message of what failed, and the RKNN object for timing."""

    def __init__(self, d, inputs, float_dtype="float16", int8=False):
        # Every input's shape pinned as the reference ran it (the PP-OCR models have dynamic dims).
        sizes = [list(x.shape) for x in inputs]
        from rknn.api import RKNN
        self.error, self.outputs, self.convert_s = None, None, None
        with tempfile.NamedTemporaryFile("r", suffix=".log") as log:
            self.rknn = RKNN(verbose=False, verbose_file=log.name)
            self.rknn.config(target_platform=PLATFORM, float_dtype=float_dtype)
            self.rknn.load_onnx(os.path.join(d, "model.onnx"), input_size_list=sizes)
            t = time.time()
            if self.rknn.build(do_quantization=int8, dataset=os.path.join(d, "calib.txt") if int8 else None) != 0:
                self.error = last_error(log)
                return
            self.convert_s = time.time() - t
            if self.rknn.init_runtime() != 0:
                self.error = last_error(log)
                return
            self.outputs = self.rknn.inference(inputs=inputs, data_format="nchw")
            if self.outputs is None:
                self.error = last_error(log)

    def compare(self, names, refs):
        """(least cosine, [cosine per output]); raises ValueError when the outputs do not line up."""
        if len(self.outputs) != len(refs):
            raise ValueError(f"{len(self.outputs)} outputs, ONNX Runtime has {len(refs)}")
        cos = []
        for n, r, o in zip(names, refs, self.outputs):
            if o.size != r.size:
                raise ValueError(f"output '{n}' has shape {list(o.shape)}, ONNX Runtime's {list(r.shape)}")
            cos.append(cosine(r, o))
        finite = [c for c in cos if np.isfinite(c)]
        return (min(finite) if len(finite) == len(cos) else float("nan")), cos

    def release(self):
        self.rknn.release()


def last_error(log):
    lines = [ln.strip() for ln in log.read().splitlines() if ln.startswith("E ")]
    return lines[-1][2:] if lines else "failed (no message)"


def evaluate(d, float_dtype="float16", int8=False, timed=False):
    """Converts and runs one directory: {'cos', 'per_output', 'error', 'ran', 'overflow', 'convert_s', 'ms'};
    'ran': converted and ran (the outputs may still be wrong); 'overflow': some output is not finite
    where ONNX Runtime's are; 'ms': the median time of one inference when timed, else None."""
    meta, inputs, names, refs = load(d)
    run = Run(d, inputs, float_dtype, int8)
    result = {"cos": None, "per_output": None, "error": run.error, "ran": run.error is None, "overflow": False,
              "convert_s": run.convert_s, "ms": None}
    if run.error is None:
        try:
            result["cos"], result["per_output"] = run.compare(names, refs)
            if not np.isfinite(result["cos"]):
                result["error"] = "non-finite outputs (NaN or inf)"
                result["overflow"] = True
        except ValueError as e:
            result["error"] = str(e)
    if timed and result["ran"]:
        result["ms"] = median_ms(lambda: run.rknn.inference(inputs=inputs, data_format="nchw"))
    run.release()
    return result


def input_rounding_cosine(d):
    """The least output cosine of ONNX Runtime fp32 on the float inputs rounded to fp16 against its
    output on the inputs themselves."""
    meta, inputs, names, refs = load(d)
    sess = reference.session(os.path.join(d, "model.onnx"))
    feeds = {i["name"]: x.astype(np.float16).astype(np.float32) if x.dtype == np.float32 else x
             for i, x in zip(meta["inputs"], inputs)}
    return min(cosine(r, o) for r, o in zip(refs, sess.run(None, feeds)))


def median_ms(fn, min_runs=3, min_time=1.0):
    fn()  # warm-up: first-run allocations, lazy binding
    times, start = [], time.time()
    while len(times) < min_runs or time.time() - start < min_time:
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
        if len(times) >= 50:
            break
    return float(np.median(times))


def ort_ms(d, meta, inputs):
    sess = reference.session(os.path.join(d, "model.onnx"), threads=1)
    feeds = {i["name"]: x for i, x in zip(meta["inputs"], inputs)}
    return median_ms(lambda: sess.run(None, feeds))


def fmt_ms(ms):
    return "-" if not ms else (f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}")


def fmt_cos(c):
    return "-" if c is None else ("NaN" if not np.isfinite(c) else f"{c:.6f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work_dir")
    ap.add_argument("--only")
    ap.add_argument("--int8", action="store_true")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    dirs = [os.path.dirname(m) for m in sorted(glob.glob(os.path.join(args.work_dir, "*", "meta.json")))]
    dirs = [d for d in dirs if wanted is None or os.path.basename(d) in wanted]
    rows = []
    out = open(args.json, "w") if args.json else None
    for d in dirs:
        name = os.path.basename(d)
        if not os.path.isfile(os.path.join(d, "ref.npz")):
            print(f"{name}: no ref.npz (run reference.py)", flush=True)
            continue
        meta, inputs, _, refs = load(d)
        t0 = time.time()
        row = {"name": name, "family": meta["family"], "source": meta["source"],
               "inputs": [f"{i['name']} {'x'.join(map(str, i['shape']))}" + ("" if i["dtype"] == "float32" else
                                                                          f" {i['dtype']}") for i in meta["inputs"]]}
        row["fp16"] = evaluate(d, timed=args.time)
        if row["fp16"]["overflow"] or (row["fp16"]["error"] is None and row["fp16"]["cos"] < COS_MIN):
            row["fp32"] = evaluate(d, "float32")
            row["input_rounding"] = input_rounding_cosine(d)
            row["ref_max"] = max(float(np.abs(r).max()) for r in refs if r.size and r.dtype.kind == "f")
        if args.int8 and meta["zoo_int8"] and row["fp16"]["ran"]:
            row["int8"] = evaluate(d, int8=True, timed=args.time)
        if args.time and row["fp16"]["ran"]:
            row["ours_ms"], row["ort_ms"] = row["fp16"]["ms"], ort_ms(d, meta, inputs)
        row["passed"] = row["fp16"]["error"] is None and row["fp16"]["cos"] >= COS_MIN
        row["seconds"] = time.time() - t0
        rows.append(row)
        print(f"{name}: fp16 {fmt_cos(row['fp16']['cos'])}"
              + (f" fp32 {fmt_cos(row['fp32']['cos'])} input-rounding {fmt_cos(row['input_rounding'])}"
                 if "fp32" in row else "")
              + (f" int8 {fmt_cos(row['int8']['cos'])}" if "int8" in row else "")
              + (f" ours {fmt_ms(row['ours_ms'])} ms ORT {fmt_ms(row['ort_ms'])} ms" if row.get("ours_ms") else "")
              + (f" ours INT8 {fmt_ms(row['int8']['ms'])} ms" if row.get("int8", {}).get("ms") else "")
              + (f" FAILS {row['fp16']['error']}" if row["fp16"]["error"] else "")
              + (f" int8 FAILS {row['int8']['error']}" if row.get("int8", {}).get("error") else "")
              + f" ({row['seconds']:.0f} s)", flush=True)
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()
    print()
    print(table(rows))
    if args.time:
        print()
        print(speed_table(rows))
    failed = [r["name"] for r in rows if not r["passed"]]
    print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def result_text(row):
    f16 = row["fp16"]
    fp32 = row.get("fp32", {})
    fp32_exact = fp32.get("error") is None and (fp32.get("cos") or 0) >= 0.99999
    if f16["overflow"] and fp32_exact and row["ref_max"] > FP16_MAX:
        return (f"outside fp16's range: ONNX Runtime's outputs reach {row['ref_max']:.0f} (fp16's largest value: "
                f"{FP16_MAX:.0f}), which fp16 storage makes inf; fp32 {fmt_cos(fp32['cos'])}")
    if f16["error"]:
        return "fails: " + f16["error"]
    if row["passed"]:
        return "pass"
    if fp32_exact:
        return (f"below 0.999 in fp16 storage only: fp32 {fmt_cos(fp32['cos'])}; ONNX Runtime on the input "
                f"rounded to fp16 {fmt_cos(row['input_rounding'])}")
    return "fails: cosine below 0.999"


def md_row(cells):
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def table(rows):
    head = ["model", "family", "inputs", "fp16 cos", "INT8 cos", "result"]
    lines = [md_row(head), "|" + "---|" * len(head)]
    for r in rows:
        i8 = r.get("int8")
        i8_text = "-" if i8 is None else (f"fails: {i8['error']}" if i8["error"] else fmt_cos(i8["cos"]))
        cells = [r["name"], r["family"], "<br>".join(r["inputs"]), fmt_cos(r["fp16"]["cos"]), i8_text, result_text(r)]
        lines.append(md_row(cells))
    return "\n".join(lines)


def speed_table(rows):
    """Issue 28's targets per model: ours fp16 at 1 thread <= SPEED_TARGET x ONNX Runtime fp32 at 1
    thread, and our INT8 faster than our fp16 (models the zoo quantizes)."""
    head = ["model", "input", "ours fp16 ms", "ORT fp32 ms", "ours/ORT", f"<= {SPEED_TARGET}x ORT", "ours INT8 ms",
            "INT8/fp16", "INT8 faster"]
    lines = [md_row(head), "|" + "---|" * len(head)]
    for r in rows:
        o, t, q = r.get("ours_ms"), r.get("ort_ms"), (r.get("int8") or {}).get("ms")
        if not o or not t:
            continue
        cells = [r["name"], "<br>".join(r["inputs"]), fmt_ms(o), fmt_ms(t), f"{o / t:.2f}",
                 "met" if o <= SPEED_TARGET * t else "missed",
                 fmt_ms(q), f"{q / o:.2f}" if q else "-", ("met" if q < o else "missed") if q else "-"]
        lines.append(md_row(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
