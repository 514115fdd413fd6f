// Small valid models for the fuzz targets, built from the IR: used by fuzz_io_args (the models it
// drives through the C API) and by fuzz_make_seeds (the committed seed corpus of
// fuzz_model_loader), so the seeds follow the current format without binary blobs to maintain.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "graph/ir.h"
#include "model/model_io.h"

namespace orknn_fuzz {

inline std::vector<uint8_t> serialise(const orknn::Graph& g) {
  std::vector<uint8_t> bytes;
  const orknn::Status st = orknn::write_model(g, &bytes);
  if (!st.ok()) {  // a harness bug, not a finding
    std::fprintf(stderr, "fuzz_models: write_model: %s\n", st.message().c_str());
    std::abort();
  }
  return bytes;
}

// int8 Relu (one table op) with per-channel UINT8 mean/std: quantized I/O, pass_through, UINT8
// normalisation tables.
inline std::vector<uint8_t> quantized_relu_model() {
  orknn::Graph g;
  g.platform = "rk3568";
  const int x = g.add_tensor("x", {1, 3, 2, 2}, orknn::DType::kI8);
  const int y = g.add_tensor("y", {1, 3, 2, 2}, orknn::DType::kI8);
  g.tensor(x).quant.scale = {0.05f};
  g.tensor(x).quant.zero_point = {-3};
  g.tensor(y).quant.scale = {0.025f};
  g.tensor(y).quant.zero_point = {-128};
  orknn::Node relu;
  relu.name = "relu0";
  relu.op = orknn::OpId::Relu;
  relu.inputs = {x};
  relu.outputs = {y};
  g.nodes = {relu};
  orknn::GraphInput gi;
  gi.tensor = x;
  gi.mean = {10.f, 20.f, 30.f};
  gi.std = {2.f, 4.f, 8.f};
  g.inputs = {gi};
  g.outputs = {y};
  return serialise(g);
}

// float Add of two inputs; H != W and C not a multiple of the native C2 block, so every layout
// conversion does real work.
inline std::vector<uint8_t> float_add_model() {
  orknn::Graph g;
  g.platform = "rk3588";
  const int a = g.add_tensor("a", {1, 3, 2, 5}, orknn::DType::kF32);
  const int b = g.add_tensor("b", {1, 3, 2, 5}, orknn::DType::kF32);
  const int c = g.add_tensor("c", {1, 3, 2, 5}, orknn::DType::kF32);
  orknn::Node add;
  add.name = "add0";
  add.op = orknn::OpId::Add;
  add.inputs = {a, b};
  add.outputs = {c};
  g.nodes = {add};
  orknn::GraphInput ga, gb;
  ga.tensor = a;
  gb.tensor = b;
  g.inputs = {ga, gb};
  g.outputs = {c};
  return serialise(g);
}

// float Conv 3x3 (constant weights and bias, padded) followed by Relu: constants in the weight
// block and a two-node plan with an intermediate tensor in the arena.
inline std::vector<uint8_t> float_conv_relu_model() {
  orknn::Graph g;
  g.platform = "rk3588";
  const int x = g.add_tensor("x", {1, 2, 4, 4}, orknn::DType::kF32);
  std::vector<float> w(3 * 2 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.125f * static_cast<float>(static_cast<int>(i % 7) - 3);
  const std::vector<float> bias = {0.5f, -0.25f, 0.f};
  const int wt = g.add_const("w", {3, 2, 3, 3}, orknn::DType::kF32, w.data(), w.size() * sizeof(float));
  const int bt = g.add_const("b", {3}, orknn::DType::kF32, bias.data(), bias.size() * sizeof(float));
  const int h = g.add_tensor("h", {1, 3, 4, 4}, orknn::DType::kF32);
  const int y = g.add_tensor("y", {1, 3, 4, 4}, orknn::DType::kF32);
  orknn::Node conv;
  conv.name = "conv0";
  conv.op = orknn::OpId::Conv;
  conv.inputs = {x, wt, bt};
  conv.outputs = {h};
  conv.attrs.set_ints("kernel_shape", {3, 3});
  conv.attrs.set_ints("pads", {1, 1, 1, 1});
  conv.attrs.set_ints("strides", {1, 1});
  conv.attrs.set_ints("dilations", {1, 1});
  conv.attrs.set_int("group", 1);
  conv.attrs.set_string("auto_pad", "NOTSET");  // the format stores normalised nodes
  orknn::Node relu;
  relu.name = "relu0";
  relu.op = orknn::OpId::Relu;
  relu.inputs = {h};
  relu.outputs = {y};
  g.nodes = {conv, relu};
  orknn::GraphInput gi;
  gi.tensor = x;
  g.inputs = {gi};
  g.outputs = {y};
  return serialise(g);
}

}  // namespace orknn_fuzz
