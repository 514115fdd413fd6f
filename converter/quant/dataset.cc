#include "converter/quant/dataset.h"

#include <stb/stb_image.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/log.h"
#include "converter/quant/image_resize.h"

// stb comes from Debian's libstb (libstb.so holds the implementations): no STB_*_IMPLEMENTATION here.

namespace orknn {

namespace {

bool is_float_dtype(DType t) { return t == DType::kF32 || t == DType::kF16; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string input_desc(const Graph& g, size_t i) {
  const Tensor& t = g.tensor(g.inputs[i].tensor);
  return strfmt("input %zu ('%s' %s %s)", i, t.name.c_str(), shape_str(t.shape).c_str(), dtype_name(t.dtype));
}

// The runtime's UINT8 normalisation for channel c (src/runtime/context_io.cc, inputs_set).
Status channel_norm(const Graph& g, size_t i, int64_t c, float* mean, float* sd) {
  const GraphInput& gi = g.inputs[i];
  auto pick = [&](const std::vector<float>& v, float def, float* out) {
    if (v.empty()) {
      *out = def;
      return true;
    }
    const size_t k = v.size() == 1 ? 0 : static_cast<size_t>(c);
    if (k >= v.size()) return false;
    *out = v[k];
    return true;
  };
  if (!pick(gi.mean, 0.f, mean) || !pick(gi.std, 1.f, sd))
    return ORKNN_ERR(kInvalidParam, "%s: mean/std have %zu/%zu values, channel %lld has none", input_desc(g, i).c_str(),
                     gi.mean.size(), gi.std.size(), static_cast<long long>(c));
  return Status::Ok();
}

// Converts uint8 values in NCHW order (channel of element k: (k / plane) % channels) to
// x = (float(u) - mean[c]) / std[c], exactly as the runtime does.
Status normalise_u8(const Graph& g, size_t i, const uint8_t* u, int64_t count, int64_t channels, int64_t plane,
                    std::vector<float>* out) {
  std::vector<float> mean(static_cast<size_t>(channels)), sd(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c)
    ORKNN_RETURN_IF_ERROR(channel_norm(g, i, c, &mean[static_cast<size_t>(c)], &sd[static_cast<size_t>(c)]));
  out->resize(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    const size_t c = static_cast<size_t>((k / plane) % channels);
    (*out)[static_cast<size_t>(k)] = (static_cast<float>(u[k]) - mean[c]) / sd[c];
  }
  return Status::Ok();
}

// ---- images ----

Status load_image(const std::string& path, const Graph& g, size_t i, std::vector<float>* out) {
  const Tensor& t = g.tensor(g.inputs[i].tensor);
  const Shape& s = t.shape;
  if (s.size() != 4 || s[0] != 1 || (s[1] != 1 && s[1] != 3) || s[2] <= 0 || s[3] <= 0 || s[2] > (1 << 15) || s[3] > (1 << 15))
    return ORKNN_ERR(kInvalidParam,
                     "'%s': an image needs a 4-D NCHW input with batch 1 and 1 or 3 channels, but %s is not one; "
                     "give a .npy file instead",
                     path.c_str(), input_desc(g, i).c_str());
  const int channels = static_cast<int>(s[1]), height = static_cast<int>(s[2]), width = static_cast<int>(s[3]);
  int w = 0, h = 0, file_channels = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> pixels(stbi_load(path.c_str(), &w, &h, &file_channels, channels),
                                                          stbi_image_free);
  if (!pixels) {
    const char* why = stbi_failure_reason();
    return ORKNN_ERR(kInvalidParam, "'%s': cannot decode the image (%s); expected a .jpg, .png or .bmp image or a .npy file",
                     path.c_str(), why ? why : "unknown reason");
  }
  const unsigned char* src = pixels.get();
  std::vector<uint8_t> resized;
  if (w != width || h != height) {
    resized = resize_triangle_u8(src, w, h, channels, width, height);
    src = resized.data();
  }
  // Interleaved HWC -> planar CHW, then the runtime's normalisation.
  const int64_t plane = static_cast<int64_t>(width) * height;
  std::vector<uint8_t> chw(static_cast<size_t>(plane * channels));
  for (int c = 0; c < channels; ++c)
    for (int64_t p = 0; p < plane; ++p) chw[static_cast<size_t>(c * plane + p)] = src[p * channels + c];
  return normalise_u8(g, i, chw.data(), plane * channels, channels, plane, out);
}

// ---- .npy ----

struct NpyArray {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
};

// Finds `key` (quoted with ' or ") in a header dict and returns the position after its ':'.
bool npy_find_key(const std::string& h, const std::string& key, size_t* pos) {
  for (const char q : {'\'', '"'}) {
    const std::string k = std::string(1, q) + key + q;
    size_t p = h.find(k);
    if (p == std::string::npos) continue;
    p += k.size();
    while (p < h.size() && std::isspace(static_cast<unsigned char>(h[p]))) ++p;
    if (p >= h.size() || h[p] != ':') return false;
    ++p;
    while (p < h.size() && std::isspace(static_cast<unsigned char>(h[p]))) ++p;
    *pos = p;
    return true;
  }
  return false;
}

// Format (numpy's NEP 1 / numpy.lib.format): magic "\x93NUMPY", major and minor version bytes, a
// little-endian header length (2 bytes in version 1, 4 bytes in versions 2 and 3), then that many
// bytes of a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
// spaces and '\n', then the raw data.
Status parse_npy(const std::string& path, const std::string& bytes, NpyArray* a) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    return ORKNN_ERR(kInvalidParam, "'%s': not a .npy file (no \\x93NUMPY magic)", path.c_str());
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return ORKNN_ERR(kInvalidParam, "'%s': truncated .npy header", path.c_str());
    header_len = 0;
    for (int k = 3; k >= 0; --k) header_len = (header_len << 8) | static_cast<uint8_t>(bytes[8 + static_cast<size_t>(k)]);
    header_start = 12;
  } else {
    return ORKNN_ERR(kInvalidParam, "'%s': .npy format version %d is not supported (1, 2 or 3)", path.c_str(), major);
  }
  if (header_len > bytes.size() - header_start)
    return ORKNN_ERR(kInvalidParam, "'%s': truncated .npy header (%zu bytes announced)", path.c_str(), header_len);
  const std::string h = bytes.substr(header_start, header_len);
  auto bad = [&](const char* what) {
    return ORKNN_ERR(kInvalidParam, "'%s': cannot read the .npy header's %s: %s", path.c_str(), what, h.c_str());
  };
  size_t p;
  if (!npy_find_key(h, "descr", &p) || (h[p] != '\'' && h[p] != '"')) return bad("'descr'");
  const size_t close = h.find(h[p], p + 1);
  if (close == std::string::npos) return bad("'descr'");
  a->descr = h.substr(p + 1, close - p - 1);
  if (!npy_find_key(h, "fortran_order", &p)) return bad("'fortran_order'");
  if (h.compare(p, 4, "True") == 0) a->fortran_order = true;
  else if (h.compare(p, 5, "False") == 0) a->fortran_order = false;
  else return bad("'fortran_order'");
  if (!npy_find_key(h, "shape", &p) || h[p] != '(') return bad("'shape'");
  a->shape.clear();
  ++p;
  while (true) {
    while (p < h.size() && (std::isspace(static_cast<unsigned char>(h[p])) || h[p] == ',')) ++p;
    if (p >= h.size()) return bad("'shape'");
    if (h[p] == ')') break;
    if (!std::isdigit(static_cast<unsigned char>(h[p]))) return bad("'shape'");
    int64_t d = 0;
    while (p < h.size() && std::isdigit(static_cast<unsigned char>(h[p]))) {
      d = d * 10 + (h[p] - '0');
      if (d > (int64_t{1} << 40)) return bad("'shape'");
      ++p;
    }
    if (p < h.size() && h[p] == 'L') ++p;  // written by Python 2
    a->shape.push_back(d);
  }
  a->data = reinterpret_cast<const uint8_t*>(bytes.data()) + header_start + header_len;
  a->nbytes = bytes.size() - header_start - header_len;
  return Status::Ok();
}

Status load_npy(const std::string& path, const Graph& g, size_t i, std::vector<float>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return ORKNN_ERR(kInvalidParam, "'%s': cannot open the file", path.c_str());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  NpyArray a;
  ORKNN_RETURN_IF_ERROR(parse_npy(path, bytes, &a));

  const Tensor& t = g.tensor(g.inputs[i].tensor);
  const Shape& s = t.shape;
  const bool float_input = is_float_dtype(t.dtype);
  size_t item = 0;
  const std::string d = a.descr;
  if (d == "<f4") item = 4;
  else if (d == "|u1" || d == "<u1" || d == "u1") item = 1;
  else if (!float_input && d == "<i8") item = 8;
  else if (!float_input && d == "<i4") item = 4;
  if (item == 0)
    return ORKNN_ERR(kInvalidParam, "'%s': .npy dtype '%s' is not accepted for %s; expected '<f4' (float32, used as is) or "
                     "'|u1' (uint8, normalised with mean/std like an image)%s",
                     path.c_str(), d.c_str(), input_desc(g, i).c_str(),
                     float_input ? "" : ", or '<i8'/'<i4' for an integer input");
  if (a.fortran_order)
    return ORKNN_ERR(kInvalidParam, "'%s': Fortran-ordered .npy arrays are not accepted; save np.ascontiguousarray(x)",
                     path.c_str());

  // Layout: the input's NCHW shape, or for a 4-D input its NHWC shape; either without the batch
  // dim when the batch is 1. NCHW wins when both match.
  Shape nhwc;
  if (s.size() == 4) nhwc = {s[0], s[2], s[3], s[1]};
  auto drop_batch = [](const Shape& x) { return Shape(x.begin() + 1, x.end()); };
  bool transpose = false;
  if (a.shape == s || (!s.empty() && s[0] == 1 && a.shape == drop_batch(s))) {
    transpose = false;
  } else if (s.size() == 4 && (a.shape == nhwc || (s[0] == 1 && a.shape == drop_batch(nhwc)))) {
    transpose = true;
  } else {
    return ORKNN_ERR(kInvalidParam, "'%s': .npy shape %s does not fit %s; expected %s%s%s", path.c_str(),
                     shape_str(a.shape).c_str(), input_desc(g, i).c_str(), shape_str(s).c_str(),
                     s.size() == 4 ? strfmt(" (NCHW) or %s (NHWC)", shape_str(nhwc).c_str()).c_str() : "",
                     !s.empty() && s[0] == 1 ? ", with or without the batch dim" : "");
  }
  const int64_t count = t.numel();
  if (a.nbytes != static_cast<size_t>(count) * item)
    return ORKNN_ERR(kInvalidParam, "'%s': .npy data is %zu bytes, shape %s of '%s' needs %zu", path.c_str(), a.nbytes,
                     shape_str(a.shape).c_str(), d.c_str(), static_cast<size_t>(count) * item);

  // Source element of NCHW destination element k.
  const int64_t C = s.size() == 4 ? s[1] : 1, H = s.size() == 4 ? s[2] : 1, W = s.size() == 4 ? s[3] : 1;
  const int64_t plane = H * W;
  auto src_index = [&](int64_t k) -> int64_t {
    if (!transpose) return k;
    const int64_t w = k % W, h = (k / W) % H, c = (k / plane) % C, n = k / (plane * C);
    return ((n * H + h) * W + w) * C + c;
  };
  if (item == 1) {
    std::vector<uint8_t> u(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) u[static_cast<size_t>(k)] = a.data[src_index(k)];
    return normalise_u8(g, i, u.data(), count, C, plane, out);
  }
  out->resize(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    const uint8_t* p = a.data + src_index(k) * static_cast<int64_t>(item);
    float v;
    if (d == "<f4") {
      std::memcpy(&v, p, 4);
    } else {
      int64_t iv;
      if (item == 8) {
        std::memcpy(&iv, p, 8);
      } else {
        int32_t i32;
        std::memcpy(&i32, p, 4);
        iv = i32;
      }
      if (iv > (int64_t{1} << 24) || iv < -(int64_t{1} << 24))
        return ORKNN_ERR(kInvalidParam, "'%s': element %lld is %lld; calibration carries integer inputs as float32, exact "
                         "only up to 2^24",
                         path.c_str(), static_cast<long long>(src_index(k)), static_cast<long long>(iv));
      v = static_cast<float>(iv);
    }
    (*out)[static_cast<size_t>(k)] = v;
  }
  return Status::Ok();
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Status load_calibration_file(const std::string& path, const Graph& g, size_t input_index, std::vector<float>* out) {
  if (input_index >= g.inputs.size())
    return ORKNN_ERR(kInvalidParam, "'%s': graph input %zu does not exist (the model has %zu)", path.c_str(), input_index,
                     g.inputs.size());
  if (!file_exists(path)) return ORKNN_ERR(kInvalidParam, "'%s': file not found", path.c_str());
  if (ends_with(lower(path), ".npy")) return load_npy(path, g, input_index, out);
  return load_image(path, g, input_index, out);
}

Status load_calibration_set(const std::string& list_path, const Graph& g, std::vector<CalibrationSample>* out) {
  out->clear();
  if (g.inputs.empty()) return ORKNN_ERR(kInvalidParam, "calibration list '%s': the model has no inputs", list_path.c_str());
  std::ifstream f(list_path);
  if (!f) return ORKNN_ERR(kInvalidParam, "calibration list '%s': cannot open the file", list_path.c_str());
  const std::string dir = directory_of(list_path);
  std::string line;
  int line_no = 0;
  while (std::getline(f, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF lists
    std::istringstream words(line);
    std::vector<std::string> files;
    std::string w;
    while (words >> w) files.push_back(w);
    if (files.empty() || files[0][0] == '#') continue;
    if (files.size() != g.inputs.size()) {
      std::string names;
      for (size_t i = 0; i < g.inputs.size(); ++i)
        names += (i ? ", '" : "'") + g.tensor(g.inputs[i].tensor).name + "'";
      return ORKNN_ERR(kInvalidParam,
                       "calibration list '%s' line %d: %zu file%s, but the model has %zu input%s (%s); give one file "
                       "per input, separated by spaces, in this order",
                       list_path.c_str(), line_no, files.size(), files.size() == 1 ? "" : "s", g.inputs.size(),
                       g.inputs.size() == 1 ? "" : "s", names.c_str());
    }
    CalibrationSample sample;
    sample.inputs.resize(files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string path = files[i][0] == '/' ? files[i] : dir + "/" + files[i];
      Status st = load_calibration_file(path, g, i, &sample.inputs[i]);
      if (!st.ok())
        return Status(st.code(), strfmt("calibration list '%s' line %d: ", list_path.c_str(), line_no) + st.message());
    }
    out->push_back(std::move(sample));
  }
  if (out->empty())
    return ORKNN_ERR(kInvalidParam, "calibration list '%s' has no samples (every line is blank or a # comment)",
                     list_path.c_str());
  ORKNN_LOGI("calibration list '%s': %zu samples", list_path.c_str(), out->size());
  return Status::Ok();
}

}  // namespace orknn
