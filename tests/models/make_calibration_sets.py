#!/usr/bin/python3
"""Writes the calibration data sets and held-out inputs of the INT8 model tests (int8_models_test.cc).

Usage: .venv/bin/python make_calibration_sets.py WORK_DIR [--force]

Everything goes under WORK_DIR/calib/:
  torchvision/calib_NN.npy   8 calibration samples, float32 NCHW 1x3x224x224, uniform [0, 1) from a
                             fixed seed: the distribution of the torchvision models' reference input
                             (export_torchvision.py), already in the range the models take, so the
                             converter uses them as they are
  torchvision/test_NN.f32    4 held-out inputs of the same distribution (another seed), raw
                             little-endian float32 NCHW, fed to the runtime as FLOAT32
  torchvision.txt            the calibration list (one .npy per line); the INT8 tests that check
                             bits rather than accuracy, and the benchmarks, calibrate on it
  images/calib_NN.png        8 views (360x360 to 640x720, some not square) of the left halves of the
                             two sample photos of the ultralytics package (WORK_DIR/photos/bus.jpg,
                             zidane.jpg, copied there by scripts/prepare_test_models.sh), for the
                             classifiers' accuracy test; the converter resizes them to 224x224
  images/test_NN.png         6 held-out views of the photos' right halves, resized to 224x224, and
                             test_NN.u8: the same pixels as raw uint8 NHWC RGB
  images.txt                 the calibration list
  ppocrv4_det/calib_NN.png   6 rendered 480x480 text pages (different texts, sizes, colours, layouts)
  ppocrv4_det/test_NN.png    3 held-out pages, and test_NN.u8: the same pixels as raw uint8 NHWC RGB
                             (what the test passes to rknn_inputs_set as a UINT8 image)
  ppocrv4_det.txt            the calibration list (one .png per line)
  ppocrv4_rec/calib_NN.png   8 rendered 48x320 text lines, and test_NN.png / test_NN.u8 4 held-out lines
  ppocrv4_rec.txt            the calibration list
  ppocr_cls/calib_NN.png     8 rendered 48x192 text lines, 4 strings upright (even NN) and turned by
                             180 degrees (odd NN), and test_NN.png / test_NN.u8 8 held-out lines of 4
                             other strings, likewise
  ppocr_cls.txt              the calibration list
The PNG images are normalised by the converter with the mean/std the test gives the model (det:
ImageNet mean/std * 255, rec and cls: 127.5 / 127.5), exactly as the runtime normalises the UINT8 test images.
The held-out rec strings never appear in the rec calibration set; the det pages are drawn from other
seeds than the calibration pages. The classifiers (mean 0, std 255 in the test) calibrate on real
photos and are checked on other parts of them, never on a seeded stream of the calibration's kind.

Deterministic (fixed seeds, fixed strings): a re-run writes the same bytes. Files are written under a
temporary name and renamed; each list file is written last, so its presence marks its set as complete
and a set whose list exists is skipped unless --force is given.

Needs numpy and python3-pil; the glyphs come from the DejaVu fonts (fonts-dejavu-core) through
render_ocr_inputs.py, whose drawing helpers are reused here.
"""
import argparse
import os
import random
import sys

import numpy as np

sys.dont_write_bytecode = True  # importing the renderer must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render_ocr_inputs as ocr  # noqa: E402  (font, noisy_background, render_line)

from PIL import Image, ImageDraw  # noqa: E402

TORCHVISION_SHAPE = (1, 3, 224, 224)
TORCHVISION_CALIB = 8
TORCHVISION_TEST = 4
# Different from export_torchvision.py's INPUT_SEED (1234) and BN_SEED (99) and from each other, so
# calibration, held-out and reference inputs are all distinct draws from the same distribution.
CALIB_SEED = 20240
TEST_SEED = 20241

DET_SIZE = 480
REC_WIDTH, REC_HEIGHT = 320, 48

WORDS = ["invoice", "total", "amount", "date", "customer", "order", "receipt", "payment", "balance",
         "account", "number", "address", "street", "city", "phone", "email", "price", "quantity",
         "tax", "discount", "shipping", "delivery", "product", "service", "report", "summary",
         "OpenRKNN", "runtime", "model", "tensor", "kernel", "NPU", "Rockchip", "camera", "frame"]

# (text) of the rec lines: calibration and held-out sets share no string.
REC_CALIB_TEXTS = ["Invoice 4711", "Total 99.50 EUR", "hello world", "ORDER NO 2023-77",
                   "quick brown fox", "Main Street 12", "tel +49 30 1234", "Rockchip RK3588"]
REC_TEST_TEXTS = ["OpenRKNN test 42", "Delivery 15:30", "PAYMENT DUE", "lazy dog 8675309"]
# The text-direction classifier's lines (48x192), each string upright and turned: no held-out string in
# the calibration set, and none that reads the same turned (like the models test's "NOON 808").
CLS_WIDTH = 192
CLS_CALIB_TEXTS = ["Invoice 4711", "hello world", "quick brown fox", "Main Street 12"]
CLS_TEST_TEXTS = ["OpenRKNN test 42", "Delivery 15:30", "PAYMENT DUE", "Total 99.50 EUR"]


def write_atomically(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def save_png(img, path):
    img.save(path + ".tmp", format="PNG")
    os.replace(path + ".tmp", path)


def write_npy(path, array):
    with open(path + ".tmp", "wb") as f:
        np.save(f, array)
    os.replace(path + ".tmp", path)


def write_list(path, entries):
    write_atomically(path, "".join(e + "\n" for e in entries).encode())


# ---------------------------------------------------------------------------------------------------
def make_torchvision(calib_dir):
    sub = os.path.join(calib_dir, "torchvision")
    os.makedirs(sub, exist_ok=True)
    calib_rng = np.random.default_rng(CALIB_SEED)
    entries = []
    for i in range(TORCHVISION_CALIB):
        x = calib_rng.random(TORCHVISION_SHAPE, dtype=np.float32)
        name = f"calib_{i:02d}.npy"
        write_npy(os.path.join(sub, name), x)
        entries.append("torchvision/" + name)
    test_rng = np.random.default_rng(TEST_SEED)
    for i in range(TORCHVISION_TEST):
        x = test_rng.random(TORCHVISION_SHAPE, dtype=np.float32)
        write_atomically(os.path.join(sub, f"test_{i:02d}.f32"), x.astype("<f4").tobytes())
    write_list(os.path.join(calib_dir, "torchvision.txt"), entries)
    print(f"torchvision: {TORCHVISION_CALIB} calibration + {TORCHVISION_TEST} held-out inputs")


# ---------------------------------------------------------------------------------------------------
CLASSIFIER_SIZE = 224
# Views (photo, left, top, right, bottom) of the two sample photos of the ultralytics package:
# bus.jpg (810x1080: a street, a bus, people) and zidane.jpg (1280x720: two men in suits before a
# crowd). The calibration views lie in each photo's left half, the held-out views in its right half,
# so no held-out pixel is ever calibrated on: on the right the bus's side with its lettering and the
# pavement, the other man and the pointing hand.
CALIB_VIEWS = [("bus.jpg", 0, 0, 405, 405), ("bus.jpg", 0, 337, 405, 742), ("bus.jpg", 0, 675, 405, 1080),
               ("bus.jpg", 0, 200, 405, 1010), ("zidane.jpg", 0, 0, 640, 720), ("zidane.jpg", 0, 0, 360, 360),
               ("zidane.jpg", 280, 0, 640, 360), ("zidane.jpg", 200, 300, 500, 720)]
TEST_VIEWS = [("bus.jpg", 405, 0, 810, 405), ("bus.jpg", 405, 405, 810, 810), ("bus.jpg", 405, 675, 810, 1080),
              ("zidane.jpg", 640, 0, 1280, 640), ("zidane.jpg", 640, 0, 1000, 360), ("zidane.jpg", 920, 360, 1280, 720)]


def photo_view(photos_dir, name, box, size=None):
    """The box of the photo, as it is (calibration images: the converter resizes them to the input)
    or resized to size x size (held-out inputs, fed to the runtime as they are)."""
    with Image.open(os.path.join(photos_dir, name)) as photo:
        view = photo.convert("RGB").crop(box)
    return view.resize((size, size), Image.BILINEAR) if size else view


# ---------------------------------------------------------------------------------------------------
def random_text(rng, words):
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    if rng.random() < 0.5:  # digits too: receipts and forms are full of them
        text += f" {rng.randint(0, 99999)}"
    if rng.random() < 0.3:
        text = text.upper()
    elif rng.random() < 0.5:
        text = text.capitalize()
    return text


def render_page(seed):
    """A 480x480 page of seeded random lines: sizes 14-44 px, dark colours of varying hue, left margins
    and line gaps that differ per line, sometimes a frame around a block, as on forms and receipts."""
    rng = random.Random(seed)
    img = ocr.noisy_background(DET_SIZE, DET_SIZE, seed=seed)
    draw = ImageDraw.Draw(img)
    y = rng.randint(10, 30)
    while True:
        size = rng.randint(14, 44)
        if y + size + 10 > DET_SIZE:
            break
        face = ocr.font(size, rng.randint(0, len(ocr.FONT_FILES) - 1))
        x = rng.randint(10, 80)
        text = random_text(rng, rng.randint(1, 4))
        # Cut words off the end until the line fits the page (text running off the edge is fine for a
        # detector, but whole lines look like the pages it was trained on).
        while hasattr(face, "getlength") and face.getlength(text) > DET_SIZE - x - 10 and " " in text:
            text = text.rsplit(" ", 1)[0]
        colour = tuple(rng.randint(0, 90) for _ in range(3))
        draw.text((x, y), text, fill=colour, font=face)
        if rng.random() < 0.15:
            right = x + 12 + int(face.getlength(text)) if hasattr(face, "getlength") else DET_SIZE
            draw.rectangle((x - 6, y - 4, min(DET_SIZE - 4, right), y + size + 6), outline=(120, 120, 120), width=2)
        y += size + rng.randint(8, 30)
    return img


def make_image_set(calib_dir, name, calib_images, test_images):
    """calib_images / test_images: lists of zero-argument functions returning a PIL RGB image."""
    sub = os.path.join(calib_dir, name)
    os.makedirs(sub, exist_ok=True)
    entries = []
    for i, render in enumerate(calib_images):
        file = f"calib_{i:02d}.png"
        save_png(render(), os.path.join(sub, file))
        entries.append(f"{name}/{file}")
    for i, render in enumerate(test_images):
        img = render()
        save_png(img, os.path.join(sub, f"test_{i:02d}.png"))
        # tobytes() of an RGB image is rows of (R, G, B) pixels: NHWC with N = 1.
        write_atomically(os.path.join(sub, f"test_{i:02d}.u8"), img.tobytes())
    write_list(os.path.join(calib_dir, name + ".txt"), entries)
    print(f"{name}: {len(calib_images)} calibration + {len(test_images)} held-out images")


def rec_line(text, index, seed_base):
    # Sizes 24-34 px: render_line shrinks a long line until it fits the 320 px width.
    return lambda: ocr.render_line(REC_WIDTH, REC_HEIGHT, text, 24 + (index * 3) % 11, seed=seed_base + index)


def cls_lines(texts, seed_base):
    """Each text upright, then turned by 180 degrees: what PP-OCR's direction classifier tells apart."""
    def line(text, index, turned):
        img = ocr.render_line(CLS_WIDTH, REC_HEIGHT, text, 24 + (index * 3) % 11, seed=seed_base + index)
        return img.rotate(180) if turned else img
    return [lambda t=t, i=i, turned=turned: line(t, i, turned) for i, t in enumerate(texts) for turned in (False, True)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work_dir")
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    calib_dir = os.path.join(args.work_dir, "calib")
    os.makedirs(calib_dir, exist_ok=True)

    def done(name):
        if args.force or not os.path.exists(os.path.join(calib_dir, name + ".txt")):
            return False
        print(f"{name}: up to date")
        return True

    if not done("torchvision"):
        make_torchvision(calib_dir)
    if not done("images"):
        photos = os.path.join(args.work_dir, "photos")
        for name in sorted({v[0] for v in CALIB_VIEWS + TEST_VIEWS}):
            if not os.path.exists(os.path.join(photos, name)):
                sys.exit(f"{os.path.join(photos, name)} is missing: scripts/prepare_test_models.sh copies it there")
        make_image_set(calib_dir, "images", [lambda v=v: photo_view(photos, v[0], v[1:]) for v in CALIB_VIEWS],
                       [lambda v=v: photo_view(photos, v[0], v[1:], CLASSIFIER_SIZE) for v in TEST_VIEWS])
    if not done("ppocrv4_det"):
        make_image_set(calib_dir, "ppocrv4_det",
                       [lambda s=s: render_page(100 + s) for s in range(6)],
                       [lambda s=s: render_page(200 + s) for s in range(3)])
    if not done("ppocrv4_rec"):
        make_image_set(calib_dir, "ppocrv4_rec",
                       [rec_line(t, i, 300) for i, t in enumerate(REC_CALIB_TEXTS)],
                       [rec_line(t, i, 400) for i, t in enumerate(REC_TEST_TEXTS)])
    if not done("ppocr_cls"):
        make_image_set(calib_dir, "ppocr_cls", cls_lines(CLS_CALIB_TEXTS, 600), cls_lines(CLS_TEST_TEXTS, 700))


if __name__ == "__main__":
    main()
