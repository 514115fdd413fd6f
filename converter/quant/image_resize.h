// Resizing calibration images (converter/quant/dataset.cc): a separable triangle (tent) filter
// over interleaved uint8 pixels, written here so that no image size can make it abort (the stb
// resizer it replaces asserted on ordinary sizes, e.g. 500x333 -> 224x224).
#pragma once
#include <cstdint>
#include <vector>

namespace orknn {

// src: h rows of w pixels of `channels` interleaved uint8 values; returns oh x ow x channels.
// Pixel centres map as (o + 0.5) * in / out - 0.5. Enlarging: bilinear interpolation; shrinking:
// the tent widened by in / out, so each output is a weighted average of the source pixels it
// covers (no aliasing). Edges are clamped; weights are normalised by their sum; the result is
// rounded to nearest and clamped to 0..255. Every size >= 1 is accepted.
std::vector<uint8_t> resize_triangle_u8(const uint8_t* src, int w, int h, int channels, int ow, int oh);

}  // namespace orknn
