#!/usr/bin/env python3
"""Runs the SAME conversion script (the model zoo's pattern) with the vendor's rknn-toolkit2 and with
OpenRKNN's `rknn` package, and compares what the two return and compute.

    RKNN() -> config(mean_values, std_values, target_platform='rk3588') -> load_onnx(path)
      -> build(do_quantization, dataset) -> export_rknn(path) -> init_runtime() -> inference([img])
      -> release()

once with do_quantization=False (fp16) and once with True (INT8), for each model.

The two packages are both called `rknn`, so they never meet in one process: this script (the
orchestrator, run with .venv's python, which has ONNX Runtime) starts itself as a worker
(`--worker JOB.json`) once in .venv-vendor (the vendor's toolkit, bench/vendor_parity/setup_vendor.sh)
and once in .venv with PYTHONPATH=python/ and OPENRKNN_LIB_DIR (ours). Each worker writes its step
results to results.json and its outputs to .npy files; the orchestrator compares them with each other
and with ONNX Runtime's fp32 result on the same ONNX model, and prints a markdown table per model.

    .venv/bin/python bench/vendor_parity/compare_python.py [--models mobilenet_v2,resnet18,ppocr_cls]
        [--workdir DIR]

bench/vendor_parity/run.sh does the setup and runs this. Environment: ORKNN_MODELS_DIR (default
tests/models/work, made by scripts/prepare_test_models.sh), OPENRKNN_LIB_DIR (default build/),
VENDOR_PYTHON / OURS_PYTHON (default .venv-vendor/bin/python / .venv/bin/python).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

IMAGENET_MEAN = [123.675, 116.28, 103.53]
IMAGENET_STD = [58.395, 57.12, 57.375]
MODELS = {
    # torchvision exports: input 'input' [1,3,224,224], output [1,1000] logits
    "mobilenet_v2": dict(file="mobilenet_v2.onnx", hw=(224, 224), mean=IMAGENET_MEAN, std=IMAGENET_STD, load={}),
    "resnet18": dict(file="resnet18.onnx", hw=(224, 224), mean=IMAGENET_MEAN, std=IMAGENET_STD, load={}),
    # PP-OCR direction classifier: input 'x' [N,3,?,?] (dynamic), output [N,2] softmax. The vendor's
    # load_onnx ignores input_size_list unless `inputs` names the inputs too (see "probe" below), so
    # the pipeline passes both.
    "ppocr_cls": dict(file="ppocr_cls.onnx", hw=(48, 192), mean=[127.5] * 3, std=[127.5] * 3,
                      load=dict(inputs=["x"], input_size_list=[[1, 3, 48, 192]]),
                      probe=dict(input_size_list=[[1, 3, 48, 192]])),
}
STEPS = ["RKNN()", "config", "load_onnx", "build", "export_rknn", "init_runtime", "inference", "release"]
CALIB_IMAGES = 6


# ------------------------------------------------------------------------------------------------
# worker: runs in the vendor's or our environment; imports `rknn` and nothing of the orchestrator's


class Recorder:
    """Calls one API step with the process's stdout/stderr (file descriptors 1 and 2, so the
    compiled libraries' prints too) sent to a log file of that step; records the return value, the
    exception if any, the time and the warning/error lines."""

    def __init__(self, logdir):
        import ctypes
        self.libc = ctypes.CDLL(None)
        self.logdir = logdir
        os.makedirs(logdir, exist_ok=True)
        self.steps = []

    def _flush(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.libc.fflush(None)  # C stdio buffers of the compiled code

    def call(self, name, fn):
        path = os.path.join(self.logdir, f"{len(self.steps):02d}_{re.sub(r'[^a-z_]', '', name.lower())}.log")
        self._flush()
        saved = os.dup(1), os.dup(2)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        ret, exc = None, None
        start = time.perf_counter()
        try:
            ret = fn()
        except (Exception, SystemExit) as e:  # the vendor raises on some errors instead of returning -1
            exc = exception_line(e)
        finally:
            seconds = time.perf_counter() - start
            self._flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        with open(path, encoding="utf-8", errors="replace") as f:
            log = f.read()
        self.steps.append(dict(step=name, ret=describe(ret), exc=exc, seconds=round(seconds, 3),
                               messages=log_messages(log), log=os.path.basename(path)))
        return ret, exc


def exception_line(e):
    """'Type: message'. The vendor's exceptions carry a whole traceback as their message: then the
    last 'XxxError: ...' line in it (the cause) is kept."""
    lines = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    causes = [l for l in lines if re.match(r"^\w+(Error|Exception): ", l)]
    text = causes[-1] if causes else f"{type(e).__name__}: {lines[0] if lines else ''}"
    return text[:240]


def describe(value):
    """A JSON-able summary of a return value: numbers and strings as they are, a list of arrays as
    its length, an object as its type."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{len(value)}]"
    return f"<{type(value).__name__}>"


ANSI = re.compile(r"\x1b\[[0-9;]*m")
STAMP = re.compile(r"\[\d\d:\d\d:\d\d\.\d+\] ")


def log_messages(log):
    """The warning and error lines of a step's log ('W ...', 'E ...'), colours and time stamps
    removed; information lines and progress bars are left out."""
    out = []
    for line in re.split(r"[\r\n]+", ANSI.sub("", log)):
        line = STAMP.sub("", line.strip())
        if re.match(r"^[WE] ", line) and line not in out:
            out.append(line[:240])
    return out


def pipeline(RKNN, job, quant, outdir):
    """The conversion script under test: the model zoo's call sequence, the same for both packages."""
    import numpy as np
    rec = Recorder(os.path.join(outdir, "logs"))
    img = np.load(job["input"])  # uint8 NHWC [1,H,W,3]
    rknn, exc = rec.call("RKNN()", lambda: RKNN(verbose=False))
    outputs = None
    if exc is None:
        ok = True
        for name, fn in [
            ("config", lambda: rknn.config(mean_values=[job["mean"]], std_values=[job["std"]],
                                           target_platform="rk3588")),
            ("load_onnx", lambda: rknn.load_onnx(job["onnx"], **job["load"])),
            ("build", lambda: rknn.build(do_quantization=quant, dataset=job["dataset"])),
            ("export_rknn", lambda: rknn.export_rknn(os.path.join(outdir, "model.rknn"))),
            ("init_runtime", lambda: rknn.init_runtime()),
            ("inference", lambda: rknn.inference(inputs=[img])),
        ]:
            if not ok:  # an earlier step failed: the rest would only fail for that reason
                rec.steps.append(dict(step=name, ret="(skipped)", exc=None, seconds=0, messages=[], log=None))
                continue
            ret, exc = rec.call(name, fn)
            if name == "export_rknn" and os.path.isfile(os.path.join(outdir, "model.rknn")):
                rec.steps[-1]["bytes"] = os.path.getsize(os.path.join(outdir, "model.rknn"))
            if name == "inference":
                outputs = ret
            ok = exc is None and not (isinstance(ret, int) and ret != 0 and name != "config")
        rec.call("release", rknn.release)
    info = []
    if isinstance(outputs, (list, tuple)):
        for i, o in enumerate(outputs):
            entry = dict(type=type(o).__name__)
            if isinstance(o, np.ndarray):
                np.save(os.path.join(outdir, f"out{i}.npy"), o)
                entry.update(shape=list(o.shape), dtype=str(o.dtype), file=f"out{i}.npy")
            info.append(entry)
    return dict(steps=rec.steps, outputs=info)


def probe(RKNN, job, outdir):
    """load_onnx with input_size_list alone (no `inputs`), then an fp16 build."""
    rec = Recorder(os.path.join(outdir, "logs"))
    rknn, exc = rec.call("RKNN()", lambda: RKNN(verbose=False))
    if exc is None:
        rec.call("config", lambda: rknn.config(mean_values=[job["mean"]], std_values=[job["std"]],
                                               target_platform="rk3588"))
        ret, exc = rec.call("load_onnx(input_size_list only)", lambda: rknn.load_onnx(job["onnx"], **job["probe"]))
        if exc is None and ret == 0:
            rec.call("build(fp16)", lambda: rknn.build(do_quantization=False))
        rec.call("release", rknn.release)
    return dict(steps=rec.steps)


def worker(job_path):
    with open(job_path) as f:
        job = json.load(f)
    out = job["outdir"]
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    from rknn.api import RKNN
    import_seconds = time.perf_counter() - start
    import rknn.api  # `rknn` itself is a namespace package in the vendor's wheel (no __file__)
    try:
        import importlib.metadata as md
        version = "rknn-toolkit2 " + md.version("rknn-toolkit2") if job["impl"] == "vendor" else "OpenRKNN"
    except Exception:
        version = "?"
    result = dict(impl=job["impl"], version=version, package=os.path.dirname(os.path.dirname(rknn.api.__file__)),
                  import_seconds=round(import_seconds, 2), runs={})
    for tag, quant in (("fp16", False), ("int8", True)):
        d = os.path.join(out, tag)
        os.makedirs(d, exist_ok=True)
        result["runs"][tag] = pipeline(RKNN, job, quant, d)
    if job.get("probe"):
        result["probe"] = probe(RKNN, job, os.path.join(out, "probe"))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)


# ------------------------------------------------------------------------------------------------
# orchestrator: makes the inputs, runs both workers, computes the reference, compares


def make_image(seed, h, w):
    """A structured uint8 RGB image: smooth gradients, a few filled shapes and lines, mild noise
    (closer to a photo's statistics than white noise, which is a poor calibration set)."""
    import numpy as np
    from PIL import Image, ImageDraw
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = np.stack([128 + 100 * np.sin(xx / w * rng.uniform(2, 6) + rng.uniform(0, 6)) * np.cos(yy / h * rng.uniform(1, 4)),
                     255 * yy / h, 255 * (xx + yy) / (w + h)], axis=-1)
    img = Image.fromarray(np.clip(base[..., rng.permutation(3)], 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(img)
    for _ in range(6):
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        x1, y1 = x0 + rng.integers(w // 8, w // 2), y0 + rng.integers(h // 8, h // 2)
        color = tuple(int(c) for c in rng.integers(0, 256, 3))
        shape = rng.integers(0, 3)
        if shape == 0:
            draw.ellipse([x0, y0, x1, y1], fill=color)
        elif shape == 1:
            draw.rectangle([x0, y0, x1, y1], fill=color)
        else:
            draw.line([x0, y0, x1, y1], fill=color, width=int(rng.integers(1, 5)))
    a = np.asarray(img).astype(np.float32) + rng.normal(0, 6, (h, w, 3))
    return np.clip(a, 0, 255).astype(np.uint8)


def prepare(name, spec, models_dir, work):
    import numpy as np
    from PIL import Image
    h, w = spec["hw"]
    d = os.path.join(work, "data", name)
    os.makedirs(d, exist_ok=True)
    paths = []
    for i in range(CALIB_IMAGES):
        p = os.path.join(d, f"calib{i}.png")
        Image.fromarray(make_image(100 + i, h, w)).save(p)
        paths.append(p)
    dataset = os.path.join(d, "dataset.txt")
    with open(dataset, "w") as f:
        f.write("\n".join(paths) + "\n")
    inp = os.path.join(d, "input.npy")
    np.save(inp, make_image(7, h, w)[None])  # not one of the calibration images
    return dict(onnx=os.path.join(models_dir, spec["file"]), mean=spec["mean"], std=spec["std"], load=spec["load"],
                probe=spec.get("probe"), dataset=dataset, input=inp)


def run_worker(impl, python, env, job, work, name):
    job = dict(job, impl=impl, outdir=os.path.join(work, impl, name))
    os.makedirs(job["outdir"], exist_ok=True)
    job_path = os.path.join(job["outdir"], "job.json")
    with open(job_path, "w") as f:
        json.dump(job, f, indent=1)
    start = time.perf_counter()
    with open(os.path.join(job["outdir"], "worker.log"), "w") as log:
        p = subprocess.run([python, os.path.abspath(__file__), "--worker", job_path], env=env, stdout=log,
                           stderr=subprocess.STDOUT, cwd=job["outdir"])
    seconds = time.perf_counter() - start
    results = os.path.join(job["outdir"], "results.json")
    if p.returncode != 0 or not os.path.isfile(results):
        sys.exit(f"compare_python: the {impl} worker failed on {name} (exit {p.returncode}); see "
                 f"{job['outdir']}/worker.log")
    with open(results) as f:
        r = json.load(f)
    r["seconds"] = round(seconds, 1)
    r["dir"] = job["outdir"]
    return r


def reference(job):
    """ONNX Runtime fp32 on the same model and the same image: (uint8 NHWC - mean) / std, as NCHW."""
    import numpy as np
    import onnxruntime as ort
    img = np.load(job["input"]).astype(np.float32)
    x = ((img - np.float32(job["mean"])) / np.float32(job["std"])).transpose(0, 3, 1, 2)
    sess = ort.InferenceSession(job["onnx"], providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})


def load_outputs(result, tag):
    import numpy as np
    run = result["runs"][tag]
    return [np.load(os.path.join(result["dir"], tag, o["file"])) if "file" in o else None for o in run["outputs"]]


def cosine(a, b):
    import numpy as np
    if a is None or b is None or a.size != b.size:
        return None
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    n = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / n) if n else None


def fmt(v, digits=5):
    return "n/a" if v is None else f"{v:.{digits}f}"


def per_output(fn, xs, ys):
    if not xs or not ys or len(xs) != len(ys):
        return "n/a"
    return ", ".join(fmt(fn(x, y)) for x, y in zip(xs, ys))


def top1(xs, ref):
    """'yes'/'no' per output: same argmax over the last axis as the float reference."""
    if not xs or len(xs) != len(ref):
        return "n/a"
    return ", ".join("n/a" if x is None or x.shape != r.shape else
                     ("yes" if (x.argmax(-1) == r.argmax(-1)).all() else "no") for x, r in zip(xs, ref))


def step_cell(s):
    if s["exc"]:
        return f"raises {s['exc'].split(':')[0]}"
    cell = "None" if s["ret"] is None else str(s["ret"])
    if s["step"] in ("build", "inference", "load_onnx") and s["seconds"] >= 0.01:
        cell += f" ({s['seconds']:.2f} s)"
    if "bytes" in s:
        cell += f" ({s['bytes'] / 1e6:.1f} MB file)"
    return cell


def report(name, job, ref, vendor, ours):
    import numpy as np
    lines = [f"### {name}", "",
             f"`{os.path.basename(job['onnx'])}`, input uint8 NHWC {list(np.load(job['input']).shape)}, "
             f"mean {job['mean']}, std {job['std']}, load_onnx({', '.join(f'{k}={v}' for k, v in job['load'].items())}), "
             f"target_platform='rk3588', {CALIB_IMAGES} calibration PNGs. Float reference: ONNX Runtime fp32, "
             f"outputs {[list(r.shape) for r in ref]}.", "",
             "| step | vendor fp16 | ours fp16 | vendor INT8 | ours INT8 |", "|---|---|---|---|---|"]
    runs = {(impl, tag): {s["step"]: s for s in r["runs"][tag]["steps"]}
            for impl, r in (("vendor", vendor), ("ours", ours)) for tag in ("fp16", "int8")}
    for step in STEPS:
        cells = [step_cell(runs[k][step]) if step in runs[k] else "-" for k in
                 (("vendor", "fp16"), ("ours", "fp16"), ("vendor", "int8"), ("ours", "int8"))]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    out = {k: load_outputs(r, tag) for k, r, tag in
           [(("vendor", "fp16"), vendor, "fp16"), (("ours", "fp16"), ours, "fp16"),
            (("vendor", "int8"), vendor, "int8"), (("ours", "int8"), ours, "int8")]}
    maxdiff = lambda a, b: None if a is None or b is None or a.shape != b.shape else float(np.abs(
        a.astype(np.float64) - b.astype(np.float64)).max())
    lines += ["", "| metric (per output) | value |", "|---|---|",
              f"| fp16: cosine ours vs vendor | {per_output(cosine, out['ours', 'fp16'], out['vendor', 'fp16'])} |",
              f"| fp16: max abs diff ours vs vendor | {per_output(maxdiff, out['ours', 'fp16'], out['vendor', 'fp16'])} |",
              f"| fp16: cosine vs float, vendor / ours | {per_output(cosine, out['vendor', 'fp16'], ref)} / "
              f"{per_output(cosine, out['ours', 'fp16'], ref)} |",
              f"| INT8: cosine vs float, vendor / ours | {per_output(cosine, out['vendor', 'int8'], ref)} / "
              f"{per_output(cosine, out['ours', 'int8'], ref)} |",
              f"| INT8: cosine ours vs vendor | {per_output(cosine, out['ours', 'int8'], out['vendor', 'int8'])} |",
              f"| top-1 = float's: vendor fp16 / ours fp16 / vendor INT8 / ours INT8 | "
              f"{top1(out['vendor', 'fp16'], ref)} / {top1(out['ours', 'fp16'], ref)} / "
              f"{top1(out['vendor', 'int8'], ref)} / {top1(out['ours', 'int8'], ref)} |",
              f"| worker wall time (import + both pipelines): vendor / ours | {vendor['seconds']} s / {ours['seconds']} s |"]
    lines += ["", "Differences:"]
    diffs = differences(vendor, ours)
    lines += [f"- {d}" for d in diffs] if diffs else ["- none"]
    return "\n".join(lines)


def differences(vendor, ours):
    """Every difference in behaviour between the two runs of the same script: return values,
    exceptions, output count/type/shape/dtype, warning and error lines per step."""
    diffs = []
    for tag in ("fp16", "int8"):
        v = {s["step"]: s for s in vendor["runs"][tag]["steps"]}
        o = {s["step"]: s for s in ours["runs"][tag]["steps"]}
        for step in STEPS:
            a, b = v.get(step), o.get(step)
            if a is None or b is None:
                continue
            if (a["ret"], a["exc"]) != (b["ret"], b["exc"]):
                diffs.append(f"{tag} `{step}`: vendor {a['exc'] or 'returns ' + repr(a['ret'])}; "
                             f"ours {b['exc'] or 'returns ' + repr(b['ret'])}")
            if a["messages"] != b["messages"]:
                diffs.append(f"{tag} `{step}` messages: vendor {a['messages'] or '(none)'}; "
                             f"ours {b['messages'] or '(none)'}")
        vo, oo = vendor["runs"][tag]["outputs"], ours["runs"][tag]["outputs"]
        if len(vo) != len(oo):
            diffs.append(f"{tag} output count: vendor {len(vo)}, ours {len(oo)}")
        for i, (a, b) in enumerate(zip(vo, oo)):
            for key in ("type", "shape", "dtype"):
                if a.get(key) != b.get(key):
                    diffs.append(f"{tag} output {i} {key}: vendor {a.get(key)}, ours {b.get(key)}")
    if "probe" in vendor or "probe" in ours:
        pv = {s["step"]: s for s in vendor.get("probe", {}).get("steps", [])}
        po = {s["step"]: s for s in ours.get("probe", {}).get("steps", [])}
        for step in dict.fromkeys(list(pv) + list(po)):
            a, b = pv.get(step), po.get(step)
            desc = lambda s: "not called" if s is None else (s["exc"] or "returns " + repr(s["ret"])) + (
                f", messages {s['messages']}" if s["messages"] else "")
            if a is None or b is None or (a["ret"], a["exc"], a["messages"]) != (b["ret"], b["exc"], b["messages"]):
                diffs.append(f"probe `{step}`: vendor {desc(a)}; ours {desc(b)}")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    ap.add_argument("--workdir", help="where inputs, models, logs and outputs go (default: a new temp dir, kept)")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)

    models_dir = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    vendor_py = os.environ.get("VENDOR_PYTHON", os.path.join(ROOT, ".venv-vendor", "bin", "python"))
    ours_py = os.environ.get("OURS_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
    lib_dir = os.environ.get("OPENRKNN_LIB_DIR", os.path.join(ROOT, "build"))
    names = [n for n in args.models.split(",") if n]
    for n in names:
        if n not in MODELS:
            sys.exit(f"compare_python: unknown model '{n}' (known: {', '.join(MODELS)})")
        if not os.path.isfile(os.path.join(models_dir, MODELS[n]["file"])):
            sys.exit(f"compare_python: {models_dir}/{MODELS[n]['file']} is missing: run scripts/prepare_test_models.sh")
    if not os.path.isfile(vendor_py):
        sys.exit(f"compare_python: {vendor_py} is missing: run bench/vendor_parity/setup_vendor.sh")
    work = os.path.abspath(args.workdir) if args.workdir else tempfile.mkdtemp(prefix="vendor_parity-")
    os.makedirs(work, exist_ok=True)

    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OPENRKNN_LIB_DIR")}
    env_vendor = dict(base)  # nothing of ours on the path
    env_ours = dict(base, PYTHONPATH=os.path.join(ROOT, "python"), OPENRKNN_LIB_DIR=lib_dir)

    total = time.perf_counter()
    sections = []
    for name in names:
        job = prepare(name, MODELS[name], models_dir, work)
        vendor = run_worker("vendor", vendor_py, env_vendor, job, work, name)
        ours = run_worker("ours", ours_py, env_ours, job, work, name)
        ref = reference(job)
        sections.append(report(name, job, ref, vendor, ours))
        print(sections[-1] + "\n", flush=True)
    print(f"vendor: {vendor['version']} ({vendor['package']}), ours: {ours['package']}; "
          f"total {time.perf_counter() - total:.0f} s; inputs, .rknn files, outputs and per-step logs in {work}")
    with open(os.path.join(work, "report.md"), "w") as f:
        f.write("\n\n".join(sections) + "\n")


if __name__ == "__main__":
    main()
