#include "converter/onnx/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/fp16.h"

namespace orknn::onnx_import {
namespace {

namespace fs = std::filesystem;

// Size in bytes of one element as stored by ONNX in raw_data / external data.
size_t onnx_elem_size(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::UINT8: case onnx::TensorProto::INT8: case onnx::TensorProto::BOOL: return 1;
    case onnx::TensorProto::UINT16: case onnx::TensorProto::INT16: case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: return 2;
    case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: case onnx::TensorProto::DOUBLE: return 8;
    default: return 0;
  }
}

float bf16_to_f32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Converts `n` elements stored in ONNX's representation at `src` into out (IR dtype).
void convert_raw(int elem, const uint8_t* src, int64_t n, TensorBytes* out) {
  const size_t count = static_cast<size_t>(n);
  out->bytes.resize(count * dtype_size(out->dtype));
  uint8_t* dst = out->bytes.data();
  switch (elem) {
    case onnx::TensorProto::FLOAT16: {
      float* d = reinterpret_cast<float*>(dst);
      for (size_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        d[i] = fp16_to_fp32(h);
      }
      return;
    }
    case onnx::TensorProto::BFLOAT16: {
      float* d = reinterpret_cast<float*>(dst);
      for (size_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        d[i] = bf16_to_f32(h);
      }
      return;
    }
    case onnx::TensorProto::DOUBLE: {
      float* d = reinterpret_cast<float*>(dst);
      for (size_t i = 0; i < count; ++i) {
        double v;
        std::memcpy(&v, src + 8 * i, 8);
        d[i] = static_cast<float>(v);
      }
      return;
    }
    case onnx::TensorProto::BOOL:
      for (size_t i = 0; i < count; ++i) dst[i] = src[i] ? 1 : 0;
      return;
    default:  // same representation (uint64 -> int64 keeps the bits)
      if (!out->bytes.empty()) std::memcpy(dst, src, out->bytes.size());
      return;
  }
}

// External data: "location" relative to the model's directory, optional "offset"/"length".
Status read_external(const onnx::TensorProto& t, const std::string& model_dir, const std::string& what,
                     size_t expect_bytes, std::vector<uint8_t>* raw) {
  if (model_dir.empty())
    return ORKNN_ERR(kInvalidModel,
                     "%s: data is stored in an external file, which needs the model's path; convert from "
                     "the .onnx file (convert_onnx) rather than from memory", what.c_str());
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      return ORKNN_ERR(kInvalidModel, "%s: external data '%s' is not a number: '%s'", what.c_str(), kv.key().c_str(),
                       kv.value().c_str());
    }
  }
  if (location.empty()) return ORKNN_ERR(kInvalidModel, "%s: external data has no 'location'", what.c_str());
  if (offset < 0 || length < -1)
    return ORKNN_ERR(kInvalidModel, "%s: external data offset/length are negative", what.c_str());
  // The ONNX spec: locations are relative to the model's directory and must not leave it.
  fs::path rel = fs::path(location).lexically_normal();
  bool escapes = rel.is_absolute() || rel.has_root_name() || rel.has_root_directory();
  if (!escapes && !rel.empty() && *rel.begin() == "..") escapes = true;
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(model_dir), ec);
  fs::path full = fs::weakly_canonical(fs::path(model_dir) / rel, ec);
  if (!escapes) {
    // After resolving symbolic links the file must still be inside the model's directory.
    auto b = base.begin(), f = full.begin();
    for (; b != base.end(); ++b, ++f)
      if (f == full.end() || *b != *f) { escapes = true; break; }
  }
  if (escapes)
    return ORKNN_ERR(kInvalidModel,
                     "%s: external data location '%s' points outside the model's directory '%s'; refused "
                     "(keep the data file next to the .onnx file)", what.c_str(), location.c_str(), model_dir.c_str());
  std::ifstream f(full, std::ios::binary);
  if (!f)
    return ORKNN_ERR(kInvalidModel, "%s: cannot open external data file '%s'", what.c_str(), full.string().c_str());
  f.seekg(0, std::ios::end);
  const int64_t file_size = static_cast<int64_t>(f.tellg());
  if (length < 0) length = file_size - offset;
  if (offset > file_size || length > file_size - offset)
    return ORKNN_ERR(kInvalidModel, "%s: external data [offset %lld, length %lld] exceeds file '%s' (%lld bytes)",
                     what.c_str(), static_cast<long long>(offset), static_cast<long long>(length),
                     full.string().c_str(), static_cast<long long>(file_size));
  if (static_cast<size_t>(length) != expect_bytes)
    return ORKNN_ERR(kInvalidModel, "%s: external data has %lld bytes, the tensor's shape needs %zu", what.c_str(),
                     static_cast<long long>(length), expect_bytes);
  raw->resize(expect_bytes);
  f.seekg(offset);
  if (expect_bytes && !f.read(reinterpret_cast<char*>(raw->data()), static_cast<std::streamsize>(expect_bytes)))
    return ORKNN_ERR(kInvalidModel, "%s: reading external data from '%s' failed", what.c_str(), full.string().c_str());
  return Status::Ok();
}

template <typename Src, typename Dst>
void copy_typed(const Src& field, Dst* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
}

}  // namespace

bool dtype_from_onnx(int elem_type, DType* out, bool* widened) {
  bool w = false;
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: *out = DType::kF32; break;
    case onnx::TensorProto::UINT8: *out = DType::kU8; break;
    case onnx::TensorProto::INT8: *out = DType::kI8; break;
    case onnx::TensorProto::UINT16: *out = DType::kU16; break;
    case onnx::TensorProto::INT16: *out = DType::kI16; break;
    case onnx::TensorProto::INT32: *out = DType::kI32; break;
    case onnx::TensorProto::INT64: *out = DType::kI64; break;
    case onnx::TensorProto::BOOL: *out = DType::kBool; break;
    case onnx::TensorProto::UINT32: *out = DType::kU32; break;
    case onnx::TensorProto::UINT64: *out = DType::kI64; w = true; break;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::DOUBLE:
      *out = DType::kF32; w = true; break;
    default: return false;
  }
  if (widened) *widened = w;
  return true;
}

const char* onnx_type_name(int t) {
  static const char* const kNames[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
                                       "string", "bool", "float16", "double", "uint32", "uint64", "complex64",
                                       "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
                                       "float8e5m2fnuz", "uint4", "int4"};
  return (t >= 0 && t < static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) ? kNames[t] : "unknown";
}

Status read_tensor_proto(const onnx::TensorProto& t, const std::string& model_dir, const std::string& what,
                         TensorBytes* out) {
  const int elem = t.data_type();
  if (!dtype_from_onnx(elem, &out->dtype))
    return ORKNN_ERR(kInvalidModel, "%s: data type %s (%d) is not supported", what.c_str(), onnx_type_name(elem), elem);
  out->shape.clear();
  for (int64_t d : t.dims()) {
    if (d < 0) return ORKNN_ERR(kInvalidModel, "%s: negative dimension %lld", what.c_str(), static_cast<long long>(d));
    out->shape.push_back(d);
  }
  if (t.has_segment()) return ORKNN_ERR(kInvalidModel, "%s: segmented tensors are not supported", what.c_str());
  const int64_t n = shape_numel(out->shape);
  const size_t esize = onnx_elem_size(elem);
  const size_t raw_bytes = static_cast<size_t>(n) * esize;

  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::vector<uint8_t> raw;
    ORKNN_RETURN_IF_ERROR(read_external(t, model_dir, what, raw_bytes, &raw));
    convert_raw(elem, raw.data(), n, out);
    return Status::Ok();
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != raw_bytes)
      return ORKNN_ERR(kInvalidModel, "%s: raw_data has %zu bytes, shape %s of %s needs %zu", what.c_str(),
                       t.raw_data().size(), shape_str(out->shape).c_str(), onnx_type_name(elem), raw_bytes);
    convert_raw(elem, reinterpret_cast<const uint8_t*>(t.raw_data().data()), n, out);
    return Status::Ok();
  }

  // Typed fields (onnx.proto: which field holds which element type).
  auto check = [&](int have) -> Status {
    if (have != n)
      return ORKNN_ERR(kInvalidModel, "%s: holds %d values, shape %s needs %lld", what.c_str(), have,
                       shape_str(out->shape).c_str(), static_cast<long long>(n));
    return Status::Ok();
  };
  out->bytes.assign(static_cast<size_t>(n) * dtype_size(out->dtype), 0);
  uint8_t* dst = out->bytes.data();
  switch (elem) {
    case onnx::TensorProto::FLOAT:
      ORKNN_RETURN_IF_ERROR(check(t.float_data_size()));
      copy_typed(t.float_data(), reinterpret_cast<float*>(dst), n);
      break;
    case onnx::TensorProto::DOUBLE:
      ORKNN_RETURN_IF_ERROR(check(t.double_data_size()));
      copy_typed(t.double_data(), reinterpret_cast<float*>(dst), n);
      break;
    case onnx::TensorProto::INT64:
      ORKNN_RETURN_IF_ERROR(check(t.int64_data_size()));
      copy_typed(t.int64_data(), reinterpret_cast<int64_t*>(dst), n);
      break;
    case onnx::TensorProto::UINT32:
      ORKNN_RETURN_IF_ERROR(check(t.uint64_data_size()));
      copy_typed(t.uint64_data(), reinterpret_cast<uint32_t*>(dst), n);
      break;
    case onnx::TensorProto::UINT64:
      ORKNN_RETURN_IF_ERROR(check(t.uint64_data_size()));
      copy_typed(t.uint64_data(), reinterpret_cast<int64_t*>(dst), n);
      break;
    case onnx::TensorProto::INT32:
      ORKNN_RETURN_IF_ERROR(check(t.int32_data_size()));
      copy_typed(t.int32_data(), reinterpret_cast<int32_t*>(dst), n);
      break;
    case onnx::TensorProto::INT16:
      ORKNN_RETURN_IF_ERROR(check(t.int32_data_size()));
      copy_typed(t.int32_data(), reinterpret_cast<int16_t*>(dst), n);
      break;
    case onnx::TensorProto::UINT16:
      ORKNN_RETURN_IF_ERROR(check(t.int32_data_size()));
      copy_typed(t.int32_data(), reinterpret_cast<uint16_t*>(dst), n);
      break;
    case onnx::TensorProto::INT8:
      ORKNN_RETURN_IF_ERROR(check(t.int32_data_size()));
      copy_typed(t.int32_data(), reinterpret_cast<int8_t*>(dst), n);
      break;
    case onnx::TensorProto::UINT8:
      ORKNN_RETURN_IF_ERROR(check(t.int32_data_size()));
      copy_typed(t.int32_data(), reinterpret_cast<uint8_t*>(dst), n);
      break;
    case onnx::TensorProto::BOOL:
      ORKNN_RETURN_IF_ERROR(check(t.int32_data_size()));
      for (int64_t i = 0; i < n; ++i) dst[i] = t.int32_data(static_cast<int>(i)) ? 1 : 0;
      break;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: {
      // int32_data holds the 16-bit patterns
      ORKNN_RETURN_IF_ERROR(check(t.int32_data_size()));
      float* d = reinterpret_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
        d[i] = elem == onnx::TensorProto::FLOAT16 ? fp16_to_fp32(h) : bf16_to_f32(h);
      }
      break;
    }
    default:
      return ORKNN_ERR(kInvalidModel, "%s: data type %s is not supported", what.c_str(), onnx_type_name(elem));
  }
  return Status::Ok();
}

}  // namespace orknn::onnx_import
