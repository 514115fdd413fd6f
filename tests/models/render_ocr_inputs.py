#!/usr/bin/python3
"""Renders the text images fed to the PP-OCR test models and writes them as network inputs.

Usage: .venv/bin/python render_ocr_inputs.py OUT_DIR [--force] [--png]

Writes OUT_DIR/NAME.in.f32 (raw little-endian float32, NCHW, already normalised the way PaddleOCR
preprocesses that model's input) for:
  ppocrv4_det   1x3x480x480  a page with several lines of text of different sizes and colours,
                             normalised with the ImageNet mean/std (PaddleOCR's det preprocessing)
  ppocrv4_rec   1x3x48x320   one line of text,    (x/255 - 0.5) / 0.5
  ppocr_cls     1x3x48x192   "NOON 808", which reads the same upside down, (x/255 - 0.5) / 0.5
Real text (rather than noise) makes the detector produce a real probability map and the recogniser a
peaked per-step distribution, so a wrong kernel shows up as a visibly wrong output, not as a shift in
noise. The classifier's line is symmetric under a half turn, so the classifier is undecided (about
0.39 / 0.61) instead of saturated at 0 / 1, where fp16 rounding and real errors alike would vanish.
Everything is deterministic: fixed strings, fixed positions, a fixed-seed background.
--png also writes NAME.png for a person to look at.

Needs python3-pil (a dependency of python3-torchvision) and, for nicer glyphs, the DejaVu fonts;
without them PIL's built-in bitmap font is used.
"""
import argparse
import os
import random

from PIL import Image, ImageDraw, ImageFont

FONT_FILES = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
              "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
              "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def font(size, index=0):
    for path in FONT_FILES[index:] + FONT_FILES[:index]:
        if os.path.exists(path):
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def noisy_background(width, height, seed):
    """A light, smoothly varying paper-like background with a little seeded grain."""
    rng = random.Random(seed)
    img = Image.new("RGB", (width, height))
    pixels = img.load()
    for y in range(height):
        for x in range(width):
            base = 235 + int(12 * (x / width)) - int(10 * (y / height))
            grain = rng.randint(-4, 4)
            pixels[x, y] = (base + grain, base - 3 + grain, base - 8 + grain)
    return img


def render_det():
    img = noisy_background(480, 480, seed=7)
    draw = ImageDraw.Draw(img)
    lines = [  # (text, x, y, size, font index, colour)
        ("OpenRKNN 0.1", 24, 20, 44, 1, (20, 20, 20)),
        ("CPU runtime test page", 24, 88, 30, 0, (40, 40, 90)),
        ("resnet18 mobilenet_v2 ppocr", 24, 140, 22, 0, (10, 10, 10)),
        ("Invoice No. 2024-0815", 40, 200, 26, 2, (90, 20, 20)),
        ("Total: 1,234.56 EUR", 40, 244, 26, 2, (20, 20, 20)),
        ("The quick brown fox jumps", 24, 310, 20, 0, (30, 30, 30)),
        ("over the lazy dog 0123456789", 24, 340, 20, 0, (30, 30, 30)),
        ("HELLO WORLD", 220, 410, 28, 1, (0, 60, 0)),
    ]
    for text, x, y, size, face, colour in lines:
        draw.text((x, y), text, fill=colour, font=font(size, face))
    draw.rectangle((20, 190, 330, 280), outline=(120, 120, 120), width=2)
    return img


def render_line(width, height, text, size, seed):
    img = noisy_background(width, height, seed=seed)
    draw = ImageDraw.Draw(img)
    face = font(size)
    while size > 8 and hasattr(face, "getlength") and face.getlength(text) > width - 12:
        size -= 1  # shrink until the line fits with a small margin, as a text-line crop would
        face = font(size)
    draw.text((6, (height - size) // 2 - 2), text, fill=(15, 15, 15), font=face)
    return img


def to_nchw_f32(img, mean, std):
    """HWC uint8 RGB -> CHW float32 bytes, (x/255 - mean[c]) / std[c]. PaddleOCR feeds BGR images, but
    channel order does not matter to the comparison: both runtimes receive exactly these bytes."""
    import array
    width, height = img.size
    data = img.tobytes()
    out = array.array("f")
    for c in range(3):
        m, s = mean[c], std[c]
        out.extend((data[i] / 255.0 - m) / s for i in range(c, len(data), 3))
    assert len(out) == 3 * width * height
    if out.itemsize != 4:
        raise RuntimeError("float is not 32-bit here")
    import sys
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--png", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    half = (0.5, 0.5, 0.5)
    jobs = {
        "ppocrv4_det": (render_det, IMAGENET_MEAN, IMAGENET_STD),
        "ppocrv4_rec": (lambda: render_line(320, 48, "OpenRKNN 2024 test", 30, seed=11), half, half),
        "ppocr_cls": (lambda: render_line(192, 48, "NOON 808", 30, seed=13), half, half),
    }
    for name, (render, mean, std) in jobs.items():
        path = os.path.join(args.out_dir, name + ".in.f32")
        if os.path.exists(path) and not args.force and not args.png:
            print(f"{name}: up to date")
            continue
        img = render()
        if args.png:
            img.save(os.path.join(args.out_dir, name + ".png"))
        with open(path + ".tmp", "wb") as f:
            f.write(to_nchw_f32(img, mean, std))
        os.replace(path + ".tmp", path)
        print(f"{name}: {img.size[0]}x{img.size[1]} -> {path}")


if __name__ == "__main__":
    main()
