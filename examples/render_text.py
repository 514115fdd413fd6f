#!/usr/bin/python3
"""Writes a line of dark text on a light background as a binary PPM, for the demo.

usage: render_text.py TEXT OUT.ppm [--width 192] [--height 48] [--upside-down]
Needs python3-pil (installed with python3-torchvision) and fonts-dejavu-core.
"""
import argparse

from PIL import Image, ImageDraw, ImageFont

ap = argparse.ArgumentParser()
ap.add_argument("text")
ap.add_argument("out")
ap.add_argument("--width", type=int, default=192)
ap.add_argument("--height", type=int, default=48)
ap.add_argument("--upside-down", action="store_true")
a = ap.parse_args()
try:
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", a.height * 26 // 48)
except OSError:
    font = ImageFont.load_default()
img = Image.new("RGB", (a.width, a.height), (245, 245, 240))
ImageDraw.Draw(img).text((6, a.height // 6), a.text, fill=(20, 20, 30), font=font)
if a.upside_down:
    img = img.rotate(180)
img.save(a.out, format="PPM")
