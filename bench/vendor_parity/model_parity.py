#!/usr/bin/env python3
"""INT8 and fp16 side by side with the vendor's rknn-toolkit2 on the deployed model kinds: stock-head
YOLO detectors, PP-OCR text detection and recognition, segmentation, RetinaFace and a vision
transformer. For each model and build mode (fp16; INT8 with normal, kl, mmse calibration on the same
data set in both toolkits), both toolkits' outputs on held-out inputs are compared with ONNX Runtime
fp32: per output, the cosine and the SQNR (mean over the inputs), and the task-level agreement with
float:
  boxes       YOLO detectors: the float model's 20 best boxes after class-wise NMS (IoU 0.45) found
              again (same class, IoU >= 0.5) among the quantized model's 20 best, in %. On random
              weights the class scores lie near 3e-4, below any deployment threshold, so the boxes
              are ranked, not thresholded.
  text map    PP-OCR det: IoU of the text maps (probability > 0.3, DBNet's binarisation), in %.
  text        PP-OCR rec: lines read exactly as float reads them (CTC greedy), and the edit distance
              summed over the lines.
  pixels      segmentation: pixels of the same argmax class, in %.
  top-1       classifiers: inputs with the same top-1 class (PP-OCR's direction classifier: the
              text line's orientation).
The fp16 rows also compare the two toolkits' fp16 outputs with each other (how close our fp16
storage emulation is to the vendor simulator's).

    .venv/bin/python bench/vendor_parity/model_parity.py [--models a,b] [--modes fp16,normal,kl,mmse]
        [--build DIR] [--workdir DIR] [--convert-args "..."]

Models: PP-OCRv4 det (480x480) and rec (48x320) and the direction classifier (48x192) with their
trained weights and the rendered pages and lines of tests/models/work/calib (calibration samples and held-out test inputs kept apart); the
others from the model-family directories of scripts/prepare_test_models.sh (WORK_DIR/families_quick,
random weights, test sizes), calibrated on their calib.txt (8 samples; ViT has none: 8 scene images
of tests/models/families/common.py, another seed) and run on in_0.npy and 3 more scene images of
another seed. bench/vendor_parity/run.sh sets up .venv-vendor; run it once first. Vendor results
are kept in --workdir and reused (the toolkit is deterministic): a second run with other
--convert-args redoes only our side. The last line counts the INT8 cells where ours is at least as
close to float as the vendor's (the least output cosine, at 4 decimals).
"""
import argparse
import os
import shlex
import sys
import tempfile

import numpy as np

from toolkits import convert_ours, cosine, run_ours, run_vendor, set_build, sqnr_db, write_dataset

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "models", "families"))
import common  # noqa: E402  (scene_images, imagenet_images)

MODELS = {  # name: task
    "yolov5n": "boxes", "yolov8n": "boxes", "yolo11n": "boxes", "yolox_s": "boxes",
    "ppocrv4_det": "text map", "ppocrv4_rec": "text", "ppocr_cls": "top-1",
    "deeplabv3_mobilenet_v3_large": "pixels", "lraspp_mobilenet_v3_large": "pixels",
    "retinaface_mobilenet0.25": None, "vit_b_16": "top-1",
}
OCR = {  # PP-OCR: input shape, mean, std (of 0-255 pixels), held-out lines
    "ppocrv4_det": ((1, 3, 480, 480), np.array([0.485, 0.456, 0.406]) * 255, np.array([0.229, 0.224, 0.225]) * 255),
    "ppocrv4_rec": ((1, 3, 48, 320), np.full(3, 127.5), np.full(3, 127.5)),
    "ppocr_cls": ((1, 3, 48, 192), np.full(3, 127.5), np.full(3, 127.5)),
}
TOP_BOXES, NMS_IOU, MATCH_IOU = 20, 0.45, 0.5
TEXT_THRESHOLD = 0.3


# ---- task metrics -----------------------------------------------------------------------------------

def iou_matrix(a, b):
    """IoU of every box of a against every box of b (x1, y1, x2, y2)."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
    area = lambda x: np.prod(x[:, 2:] - x[:, :2], axis=1)  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter + 1e-9)


def best_boxes(out):
    """The TOP_BOXES best (box, class) of a YOLO head's output after class-wise NMS: Ultralytics'
    (1, 4 + classes, anchors), or YOLOX's (1, anchors, 5 + classes) whose scores are objectness
    times class score."""
    if out.shape[1] < out.shape[2]:  # Ultralytics
        out = out[0].T
        scores = out[:, 4:]
    else:
        out = out[0]
        scores = out[:, 4:5] * out[:, 5:]
    xy, wh = out[:, :2], out[:, 2:4]
    boxes = np.concatenate([xy - wh / 2, xy + wh / 2], axis=1)
    cls, score = scores.argmax(1), scores.max(1)
    keep = []
    for i in np.argsort(-score, kind="stable"):
        if keep and (iou_matrix(boxes[i:i + 1], boxes[keep])[0][cls[keep] == cls[i]] > NMS_IOU).any():
            continue
        keep.append(i)
        if len(keep) == TOP_BOXES:
            break
    return boxes[keep], cls[keep]


def boxes_found(got, want):
    (gb, gc), (wb, wc) = best_boxes(got), best_boxes(want)
    iou = iou_matrix(wb, gb) * (wc[:, None] == gc[None, :])
    found, used = 0, set()
    for row in iou:
        for j in np.argsort(-row):
            if row[j] >= MATCH_IOU and j not in used:
                used.add(j)
                found += 1
                break
    return found / len(wb)


def ctc_greedy(probs):
    ids = probs.reshape(-1, probs.shape[-1]).argmax(1)
    return [int(k) for i, k in enumerate(ids) if k != 0 and (i == 0 or k != ids[i - 1])]


def edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diag, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            diag, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1]))
    return row[-1]


def task_cell(task, got, want):
    """The task-level agreement of outputs got ([sample][output]) with the float ones."""
    if task == "boxes":
        return f"{100 * np.mean([boxes_found(g[0], w[0]) for g, w in zip(got, want)]):.0f} %"
    if task == "text map":
        ious = [np.sum((g[0] > TEXT_THRESHOLD) & (w[0] > TEXT_THRESHOLD)) /
                max(1, np.sum((g[0] > TEXT_THRESHOLD) | (w[0] > TEXT_THRESHOLD))) for g, w in zip(got, want)]
        return f"{100 * np.mean(ious):.1f} %"
    if task == "text":
        pairs = [(ctc_greedy(g[0]), ctc_greedy(w[0])) for g, w in zip(got, want)]
        same = sum(a == b for a, b in pairs)
        return f"{same}/{len(pairs)} lines, {sum(edit_distance(a, b) for a, b in pairs)} edits"
    if task == "pixels":
        return f"{100 * np.mean([np.mean(g[0].argmax(1) == w[0].argmax(1)) for g, w in zip(got, want)]):.1f} %"
    if task == "top-1":
        return f"{sum(int(g[0].argmax() == w[0].argmax()) for g, w in zip(got, want))}/{len(got)}"
    return "-"


# ---- inputs -----------------------------------------------------------------------------------------

def save_samples(work, tag, arrays):
    """Each array (one input, batch dimension included) as a .npy file; the one-input samples."""
    samples = []
    for i, x in enumerate(arrays):
        path = os.path.join(work, f"{tag}_{i:02d}.npy")
        np.save(path, np.ascontiguousarray(x, np.float32))
        samples.append([path])
    return samples


def ocr_model(models_dir, work, m):
    """(onnx, input shape, calibration samples, held-out samples) of a PP-OCR model: its rendered
    images, normalised as the model reads them."""
    from PIL import Image
    shape, mean, std = OCR[m]
    calib_dir = os.path.join(models_dir, "calib", m)
    norm = lambda img: ((img.astype(np.float32) - mean) / std).transpose(2, 0, 1)[None]  # noqa: E731
    calib = [norm(np.asarray(Image.open(os.path.join(calib_dir, f)).convert("RGB").resize(shape[:1:-1])))
             for f in sorted(os.listdir(calib_dir)) if f.startswith("calib_")]
    tests = [norm(np.fromfile(os.path.join(calib_dir, f), np.uint8).reshape(shape[2], shape[3], 3))
             for f in sorted(os.listdir(calib_dir)) if f.endswith(".u8")]
    return (os.path.join(models_dir, m + ".onnx"), list(shape), save_samples(work, m + "_calib", calib),
            save_samples(work, m + "_test", tests))


def family_model(families, work, m):
    d = os.path.join(families, m)
    x0 = np.load(os.path.join(d, "in_0.npy"))
    _, _, h, w = x0.shape
    images = common.scene_images if x0.min() >= 0 and x0.max() <= 1 else common.imagenet_images
    if os.path.exists(os.path.join(d, "calib.txt")):
        with open(os.path.join(d, "calib.txt")) as f:
            calib = [[os.path.join(d, p) for p in line.split()] for line in f if line.strip()]
    else:
        calib = save_samples(work, m + "_calib", images(8, h, w, seed=71)[:, None])
    tests = [[os.path.join(d, "in_0.npy")]] + save_samples(work, m + "_test", images(3, h, w, seed=72)[:, None])
    return os.path.join(d, "model.onnx"), list(x0.shape), calib, tests


# ---- main -------------------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--modes", default="fp16,normal,kl,mmse")
    p.add_argument("--build")
    p.add_argument("--workdir")
    p.add_argument("--convert-args", default="")
    args = p.parse_args()
    import onnxruntime as ort
    build = set_build(args.build)
    models_dir = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    families = os.path.join(models_dir, "families_quick")
    work = args.workdir or tempfile.mkdtemp(prefix="model-parity-")
    os.makedirs(work, exist_ok=True)
    extra = shlex.split(args.convert_args)
    print("| model | mode | cosine: ours | cosine: vendor | SQNR dB: ours | SQNR dB: vendor | task | task: ours | "
          "task: vendor | ours vs vendor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    wins = compared = 0
    for m in args.models.split(","):
        onnx, shape, calib, tests = (ocr_model if m in OCR else family_model)(
            models_dir if m in OCR else families, work, m)
        dataset = write_dataset(os.path.join(work, m + ".dataset.txt"), calib)
        sess = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        want = [sess.run(None, {name: np.load(s[0])}) for s in tests]
        for mode in args.modes.split(","):
            rknn = os.path.join(work, f"{m}.{mode}.rknn")
            options = ["--input-shape", f"{name}={','.join(map(str, shape))}"]
            if mode != "fp16":
                options += ["--quantize", "--dataset", dataset, "--algorithm", mode] + extra
            convert_ours(build, onnx, rknn, options)
            ours = run_ours(rknn, tests)
            theirs = run_vendor(work, f"{m}.{mode}", onnx, mode, tests, dataset, [name], [shape])

            def per_output(metric, got):
                return [np.mean([metric(g[k], w[k]) for g, w in zip(got, want)]) for k in range(len(want[0]))]
            cos_ours = per_output(cosine, ours)
            row = [m, mode, " / ".join(f"{c:.4f}" for c in cos_ours)]
            if isinstance(theirs, str):
                row += [theirs, " / ".join(f"{s:.1f}" for s in per_output(sqnr_db, ours)), theirs,
                        MODELS[m] or "-", task_cell(MODELS[m], ours, want), theirs, theirs]
            else:
                cos_theirs = per_output(cosine, theirs)
                row += [" / ".join(f"{c:.4f}" for c in cos_theirs),
                        " / ".join(f"{s:.1f}" for s in per_output(sqnr_db, ours)),
                        " / ".join(f"{s:.1f}" for s in per_output(sqnr_db, theirs)),
                        MODELS[m] or "-", task_cell(MODELS[m], ours, want), task_cell(MODELS[m], theirs, want),
                        " / ".join(f"{np.mean([cosine(a[k], b[k]) for a, b in zip(ours, theirs)]):.5f}"
                                   for k in range(len(want[0])))]
                if mode != "fp16":
                    compared += 1
                    wins += round(min(cos_ours), 4) >= round(min(cos_theirs), 4)
            print("| " + " | ".join(row) + " |", flush=True)
    print(f"\nINT8: ours at least as close to float as the vendor's (least output cosine, 4 decimals): "
          f"{wins} of {compared} cells")


if __name__ == "__main__":
    main()
