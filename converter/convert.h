// ONNX -> graph IR -> .rknn conversion, the library behind tools/rknn_convert.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"
#include "graph/passes/passes.h"
#include "model/dynamic_shapes.h"

namespace orknn {

// INT8 quantization (docs/convert.md, docs/numerics.md). A model that already holds
// QuantizeLinear/DequantizeLinear pairs is quantized with their parameters without a data set.
struct QuantOptions {
  bool enabled = false;                   // --quantize, or YAML quantized_dtype
  std::string dataset;                    // calibration list: one sample per line (images or .npy)
  std::string algorithm = "normal";       // observer: normal (min/max) | kl | mmse
  std::string method = "channel";         // weight scales: channel | layer
  std::vector<std::string> float_layers;  // hybrid quantization: node names kept in float
  // --custom-op-lib, YAML custom_op_libs: plugin libraries exporting get_rknn_custom_op (the
  // vendor's plugin convention, rknn_custom_op.h), one operator each. Calibration runs the custom
  // nodes of their types through their callbacks, so the nodes after them can be int8
  // (docs/custom_ops.md). The plugin's calls to rknn_custom_op_get_op_attr must reach this
  // converter: rknn_convert exports that function for them.
  std::vector<std::string> custom_op_libs;
  // --auto-hybrid [COS], YAML auto_hybrid / auto_hybrid_cos_thresh, Python build(auto_hybrid=True):
  // > 0 keeps layers float, one at a time, each the INT8 layer whose quantization alone costs the
  // most (the accuracy analysis' "single" error), until every model output reaches this cosine
  // against the fp32 model on the first data set samples (docs/convert.md "Auto hybrid").
  double auto_hybrid_cos = 0.0;
  // --bias-correction, YAML bias_correction: true. After calibration, each int8 Conv/Gemm's int32
  // bias is moved so that the mean of its output per channel over the calibration samples is the
  // float model's despite its int8 weights and input (converter/quant/bias_correction.h).
  bool bias_correction = false;
  // --kl-keep-tails, YAML kl_keep_tails: true. kl calibration refuses thresholds whose clipping
  // error passes 1e-4 of a tensor's energy (docs/numerics.md, "kl").
  bool kl_keep_tails = false;
  // --adaptive-rounding, YAML adaptive_rounding: true. After calibration, each int8 Conv/Gemm weight
  // may round to its other integer neighbour where that lowers the layer's output error on the
  // calibration samples (converter/quant/bias_correction.h, round_weights_adaptively).
  bool adaptive_rounding = false;
  // --clip-saturated, YAML clip_saturated: true. After calibration, the range of a tensor only
  // HardSwish/HardSigmoid/Relu read ends where they saturate (converter/quant/calibrate.h,
  // narrow_saturated_ranges).
  bool clip_saturated = false;
};

struct ConvertOptions {
  std::string platform = "rk3588";                  // one of platform_names() (runtime/platform.h)
  std::map<std::string, Shape> input_shapes;        // pins dynamic dims, by ONNX input name
  // Per-input normalisation applied by the runtime to UINT8 inputs: (x - mean[c]) / std[c].
  // Key "" applies to every input that has no entry of its own.
  // In all three maps a key "#i" (i = 0, 1, ...) names the model's i-th input (how the vendor
  // YAML's per-input lists arrive); an entry under the input's name wins over "#i". In
  // input_shapes, "" pins the only input of a one-input model.
  std::map<std::string, std::vector<float>> mean_values;
  std::map<std::string, std::vector<float>> std_values;
  std::string custom_string;
  // --custom-op, YAML custom_ops: ONNX op types imported as custom operators in any domain, the
  // default one included (the vendor's way: a node renamed to e.g. "cstSigmoid" in the default
  // domain). Nodes of other non-standard domains are custom operators without being listed.
  std::vector<std::string> custom_op_types;
  FloatPrecision precision = FloatPrecision::kFp16;
  bool run_passes = true;  // graph passes (folding always runs; this controls fusion/cleanup)
  QuantOptions quant;
  // Dynamic shapes (--dynamic-shape, YAML dynamic_input; docs/convert.md): per input (keys as in
  // input_shapes: name, "#i", or "" for the only input), its shape in each shape set; every
  // listed input lists the same number of sets, set s taking entry s of each. Inputs not listed
  // keep one shape (input_shapes or the ONNX one) in every set. Empty: a static model.
  std::map<std::string, std::vector<Shape>> dynamic_shapes;
  // Subgraph cut (--inputs/--outputs, YAML subgraphs.inputs/outputs, Python load_onnx(inputs=,
  // outputs=)): tensor names that become the model's inputs / outputs; the nodes the outputs do
  // not need are dropped before import. Empty: the model's own.
  std::vector<std::string> subgraph_inputs;
  std::vector<std::string> subgraph_outputs;
  // --batch-size, YAML rknn_batch_size, Python build(rknn_batch_size=N): every input's dim 0
  // becomes N (also in input shapes given with batch 1); 0: the model's own.
  int64_t batch_size = 0;
};

// Reads an ONNX file (external data next to it is loaded) into a verified, shape-complete graph.
Status convert_onnx(const std::string& onnx_path, const ConvertOptions& opts, Graph* out);
// Same, from an in-memory ONNX ModelProto serialisation (no external data).
Status convert_onnx_bytes(const void* data, size_t size, const ConvertOptions& opts, Graph* out);

// Reads the vendor toolkit's YAML conversion config (mean_values, std_values, target_platform,
// custom_string, ...) into opts; options already set on the command line win (see docs/convert.md).
Status load_config_yaml(const std::string& path, ConvertOptions* opts);
// Same, from the config's text (YAML or JSON); a relative dataset path is taken from base_dir.
Status load_config_yaml_text(const std::string& text, const std::string& base_dir, ConvertOptions* opts);

// ---- additions (same conversion, with a report for tools) ----

// What a conversion did, for rknn_convert's summary.
struct ConvertReport {
  int opset = 0;
  int ir_version = 0;
  std::string producer;          // the ONNX file's producer_name/version
  int onnx_nodes = 0;            // nodes in the ONNX graph (Constant nodes included)
  int nodes_folded_at_import = 0;
  std::vector<PassStat> passes;  // in the order they ran
  // Quantized conversions: the final precision of every node, in graph order.
  struct LayerPrecision {
    std::string node;
    std::string op;
    std::string precision;  // "int8" or "float"
    std::string why;        // for float nodes: why they stayed float ("--float-layers", "no int8 kernel", ...)
  };
  std::vector<LayerPrecision> layer_precision;
  int calibration_samples = 0;
  // --auto-hybrid: the layers it kept float (in the order chosen) and the lowest output cosine
  // against fp32 it reached on its evaluation samples.
  std::vector<std::string> auto_hybrid_layers;
  double auto_hybrid_cosine = 0.0;
};

Status convert_onnx(const std::string& onnx_path, const ConvertOptions& opts, Graph* out, ConvertReport* report);
Status convert_onnx_bytes(const void* data, size_t size, const ConvertOptions& opts, Graph* out,
                          ConvertReport* report);

// Dynamic-shape conversion: converts the model once per shape set (opts.dynamic_shapes), stores
// set 0's graph in *out and the per-set differences in *dyn (empty when opts.dynamic_shapes is).
// Fails naming the first differing node when the sets' graphs differ in structure. INT8: set 0 is
// calibrated (the data set's samples have set 0's shapes) and the other sets reuse its activation
// ranges, so that every set has the same quantization parameters; QDQ models use their own.
Status convert_onnx(const std::string& onnx_path, const ConvertOptions& opts, Graph* out, ConvertReport* report,
                    DynamicShapes* dyn);
Status convert_onnx_bytes(const void* data, size_t size, const ConvertOptions& opts, Graph* out,
                          ConvertReport* report, DynamicShapes* dyn);

// --export-qdq (docs/convert.md "QDQ export"): writes the ONNX model at onnx_path, with the edits the
// conversion made (opts' subgraph cut and batch size), as a QDQ model carrying the INT8 graph
// `quantized`'s activation parameters and per-channel int8 weights (onnx/export_qdq.h), to
// out_path. `quantized` must come from converting that model with opts.
Status export_qdq_onnx(const std::string& onnx_path, const ConvertOptions& opts, const Graph& quantized,
                       const std::string& out_path);

// Converts the ONNX model at onnx_path again with opts (its --float-layers included) but with the
// quantization parameters of `quantized`, an INT8 conversion of it, instead of a calibration (the
// data set is not read): each activation takes the parameters of the tensor of its name in
// `quantized` (or of "<name>_quant" where `quantized` keeps it float), each weight, bias and
// operand the int8/int32 values of "<name>_int8"/"<name>_int32" (bias correction and adaptive
// rounding included); nodes float in `quantized` stay float. Without new float layers the result
// is `quantized` again. What `rknn_inspect accuracy --try` measures keeping layers float with.
Status requantize_onnx(const std::string& onnx_path, const ConvertOptions& opts, const Graph& quantized, Graph* out);

// Sets g's GraphInput mean/std from opts (validated against each input's channel count: dim 1 of
// a 4-D input, or 1 value for all channels) and checks/sets platform, custom string and precision.
// Part of convert_onnx; exposed for tests and for graphs built by other front ends.
Status apply_io_options(const ConvertOptions& opts, Graph* g);

// Parses "d0,d1,..." (positive integers) / "v1,v2,..." (floats), as the command line writes them.
Status parse_dims(const std::string& text, Shape* out);
Status parse_floats(const std::string& text, std::vector<float>* out);

}  // namespace orknn
