// Quantization accuracy analysis behind `rknn_inspect accuracy` (docs/inspect.md): runs a float
// graph and its quantized conversion on the same inputs and measures, tensor by tensor, how far the
// quantized values are from the float ones.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "graph/ir.h"

namespace orknn {

// Error of a tensor x against its reference ref (both as real values), computed in double:
//   cosine  = sum(ref*x) / (sqrt(sum ref^2) * sqrt(sum x^2))
//   sqnr_db = 10 * log10(sum ref^2 / sum (ref - x)^2)
//   max_abs = max |ref - x|
//   euclidean = sqrt(sum (ref - x)^2)   (the vendor's error_analysis.txt "euc")
// Edge cases:
// - x equal to ref element for element (including both empty): cosine 1, sqnr_db +inf, max_abs and
//   euclidean 0.
// - ref all zero but x not: sqnr_db -inf (no signal, some noise); cosine 0 (one vector has no
//   direction, so nothing is shared). x all zero but ref not: cosine 0, sqnr_db 0 dB.
// - Positions where ref and x hold the same non-finite value (both NaN, or the same infinity, as in
//   an attention mask) agree and are left out of every sum. Any other position where ref or x is
//   NaN or infinite makes every metric NaN: the difference cannot be measured.
struct TensorError {
  double cosine = 1.0;
  double sqnr_db = 0.0;
  double max_abs = 0.0;
  double euclidean = 0.0;
};
TensorError tensor_error(const float* ref, const float* x, size_t n);
// Different sizes give NaN in every metric.
TensorError tensor_error(const std::vector<float>& ref, const std::vector<float>& x);

// One compared tensor: a non-constant tensor whose name exists in both graphs, with a float dtype
// in the float graph and, in the quantized graph, a float dtype or INT8 with quantization
// parameters, and the same shape in both.
struct AccuracyRow {
  std::string node;       // the quantized graph's node that writes the tensor; "" for a graph input
  std::string op;         // its op type; "input" for a graph input
  std::string precision;  // "int8" when the node (or the graph input) is quantized, else "float"
  std::string tensor;
  DType dtype = DType::kF32;  // the tensor's dtype in the quantized graph
  Shape shape;
  TensorError entire;  // the quantized model run from its inputs: errors accumulated from the start
  TensorError single;  // this layer alone, fed with the float values (re-quantized where int8)
  // The int8 nodes (QuantizeLinear/DequantizeLinear excluded) whose arithmetic `single` measures:
  // the row's node and, when it reads tensors the float graph does not have (a Conv split from its
  // activation, "<x>_quant", "<x>_dequant"), the nodes that produced those from float values.
  std::vector<std::string> single_int8_nodes;
  // INT8 output only: in the single run the node wrote exactly the float value quantized with the
  // tensor's parameters. Its single error is then the int8 grid of the tensor itself, which stays
  // as long as the layers reading it are int8: keeping the node in float gains nothing (data
  // movement such as Reshape or Flatten is the usual case).
  bool single_on_grid = false;
};

// Int8 layers whose quantization alone costs the most (see AccuracyReport::suggestions).
struct AccuracySuggestion {
  std::vector<std::string> nodes;  // for --float-layers
  std::string tensor;              // the row that measured it
  double single_sqnr_db = 0.0;
};

struct AccuracyReport {
  std::vector<AccuracyRow> rows;   // graph inputs first, then in the quantized graph's node order
  std::vector<std::string> notes;  // tensors both graphs name but that could not be compared, and why

  // The first row whose entire SQNR is below threshold_db or NaN; nullptr when there is none.
  const AccuracyRow* first_below(double threshold_db) const;
  // Rule: the single error isolates what quantizing one layer costs when everything before it is
  // exact, so the layers with the lowest single SQNR are the ones whose float version gains the
  // most. Candidates are rows with at least one int8 node in single_int8_nodes, a single SQNR that
  // is not +inf (no error: nothing to gain) and single_on_grid false; NaN counts as the worst. Rows covering the same
  // nodes count once, with their lowest SQNR. The result is sorted by single SQNR, lowest first
  // (ties in graph order), at most max_count entries.
  std::vector<AccuracySuggestion> suggestions(size_t max_count = 3) const;
};

struct AccuracyOptions {
  // Fast kernels, as the runtime would choose them (quantized fast kernels are bit-exact with the
  // reference; float ones differ from the reference by rounding). false: reference kernels only.
  bool allow_fast_kernels = true;
  int num_threads = 1;
};

// A tensor's buffer as real values: float32, fp16, or INT8 dequantized with the tensor's
// parameters (per tensor or per channel; the caller checks that an INT8 tensor has usable ones).
std::vector<float> real_values(const Tensor& t, const void* data);

// The bytes graph input t takes for the real values v (as the runtime prepares them): copied
// (float32), rounded (fp16), quantized with t's parameters (INT8 with parameters), or converted
// to t's integer type (rounded to nearest). `which` names the graph in messages.
Status graph_input_bytes(const Tensor& t, const std::vector<float>& v, const char* which, std::vector<uint8_t>* out);

// For each input of `quant_graph`, the index of the `float_graph` input of the same name (the two
// conversions of one model may order them differently). Returns "" or the first unmatched name.
std::string inputs_by_name(const Graph& quant_graph, const Graph& float_graph, std::vector<size_t>* order);

// Runs float_graph (meant to be the fp32 conversion of the same model; an fp16 graph is run as it
// is) and quant_graph on the same inputs and fills *out (see docs/inspect.md).
// inputs: real values (already normalised, NCHW), one vector per graph input of quant_graph, in
// quant_graph.inputs order; float_graph must have an input of the same name and size for each.
// Inputs of quant_graph that are INT8 get the values quantized with their parameters (as the
// runtime does); integer inputs get the values converted to their type.
//   entire: both graphs run from the inputs; each compared tensor of the quantized graph
//           (dequantized when INT8) against the float graph's tensor of the same name.
//   single: the quantized graph's nodes run one at a time in order; before node k runs, each
//           tensor with a float counterpart holds the float value (quantized with the tensor's
//           parameters when INT8), other tensors what their producer computed; node k's compared
//           outputs are measured and then overwritten with their float values.
Status compare_float_and_quantized(const Graph& float_graph, const Graph& quant_graph,
                                   const std::vector<std::vector<float>>& inputs, AccuracyReport* out,
                                   const AccuracyOptions& opts = AccuracyOptions());

// The report as JSON (docs/inspect.md shows the layout). Strings are escaped (quote, backslash,
// control characters as \uXXXX; other bytes are passed through, so UTF-8 names stay UTF-8).
// JSON has no NaN or infinity: those metrics are written as the strings "nan", "inf" and "-inf".
// `info` adds string key/value pairs under "info" (model paths, where the inputs came from);
// `members` (`"key": value` pairs, comma-separated) go after "suggestions".
std::string accuracy_report_json(const AccuracyReport& r, double threshold_db, size_t max_suggestions,
                                 const std::vector<std::pair<std::string, std::string>>& info = {},
                                 const std::string& members = "");

// A JSON string literal (with the quotes) holding s, escaped as above.
std::string json_quote(const std::string& s);
// A JSON number with 9 significant digits; "nan", "inf", "-inf" as strings.
std::string json_number(double v);
// A JSON array of string literals.
std::string json_names(const std::vector<std::string>& names);

}  // namespace orknn
