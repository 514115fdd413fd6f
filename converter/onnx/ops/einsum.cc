// Einsum with one or two operands, mapped at import onto ReduceSum, Transpose, Reshape and one
// batched MatMul (no Einsum kernel): for A[labels a] x B[labels b] -> out[labels o],
//   batch    = labels in a, b and o          (MatMul's broadcast leading dims)
//   kept_a   = in a and o only (M), kept_b = in b and o only (N)
//   contract = in a and b, not in o          (K)
//   summed   = in one operand only, not in o (ReduceSum first)
// A -> [batch, M, K], B -> [batch, K, N], MatMul -> [batch, M, N] -> reshape -> transpose to o.
// Repeated labels inside one operand (diagonals, "ii->i") and three or more operands are refused.
#include <algorithm>
#include <map>
#include <numeric>

#include "converter/onnx/mapper.h"

namespace orknn::onnx_import {
namespace {

using Labels = std::vector<int>;  // a letter's char code; ellipsis dims: -1 (rightmost), -2, ...

// Parses one operand's term against its rank, expanding "..." to the dims it stands for.
Status parse_term(MapContext& ctx, const std::string& term, size_t rank, Labels* out, size_t* ellipsis_rank) {
  out->clear();
  const size_t dots = term.find("...");
  size_t letters = 0;
  for (char c : term)
    if (std::isalpha(static_cast<unsigned char>(c))) ++letters;
    else if (c != '.') return ctx.error("equation term '%s': '%c' is not a letter", term.c_str(), c);
  if (dots == std::string::npos ? letters != rank : letters > rank)
    return ctx.error("equation term '%s' has %zu labels for an operand of rank %zu", term.c_str(), letters, rank);
  const size_t ell = dots == std::string::npos ? 0 : rank - letters;
  *ellipsis_rank = ell;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (term.compare(i, 3, "...") != 0 || i != dots)
        return ctx.error("equation term '%s': '.' outside one '...'", term.c_str());
      for (size_t k = 0; k < ell; ++k) out->push_back(-static_cast<int>(ell - k));
      i += 2;
      continue;
    }
    const int l = static_cast<unsigned char>(term[i]);
    if (std::find(out->begin(), out->end(), l) != out->end())
      return ctx.unsupported("label '%c' repeats in term '%s' (a diagonal); take the diagonal before the Einsum",
                             term[i], term.c_str());
    out->push_back(l);
  }
  return Status::Ok();
}

bool has(const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }

class EinsumBuilder {
 public:
  explicit EinsumBuilder(MapContext& ctx) : ctx_(ctx) {}

  // Emits `op` on `in` with attributes set by the caller; writes the node's output (out >= 0: that
  // tensor, else a new one) and returns its id in *result.
  Status emit(OpId op, std::vector<int> in, const std::string& suffix, int out, Attrs attrs, int* result) {
    Node n;
    n.name = ctx_.name() + (out >= 0 ? "" : "/" + suffix);
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = {out >= 0 ? out : ctx_.new_tensor(suffix)};
    n.attrs = std::move(attrs);
    *result = n.outputs[0];
    return ctx_.emit(std::move(n));
  }
  Status reduce_sum(int x, const Labels& labels, const Labels& drop, Labels* left, int* result) {
    std::vector<int64_t> axes;
    left->clear();
    for (size_t d = 0; d < labels.size(); ++d)
      (has(drop, labels[d]) ? axes.push_back(static_cast<int64_t>(d)) : left->push_back(labels[d]));
    if (axes.empty()) return *result = x, Status::Ok();
    Attrs a;
    a.set_ints("axes", axes);
    a.set_int("keepdims", 0);
    return emit(OpId::ReduceSum, {x, -1}, "sum" + std::to_string(++count_), -1, a, result);
  }
  // Transposes x (dims labelled `from`) into the order `to` (a permutation of from).
  Status transpose(int x, const Labels& from, const Labels& to, int out, int* result) {
    std::vector<int64_t> perm;
    for (int l : to) perm.push_back(std::find(from.begin(), from.end(), l) - from.begin());
    std::vector<int64_t> identity(perm.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (perm == identity && out < 0) return *result = x, Status::Ok();
    Attrs a;
    a.set_ints("perm", perm);
    return emit(OpId::Transpose, {x}, "transpose" + std::to_string(++count_), out, a, result);
  }
  Status reshape(int x, const Shape& shape, int out, int* result) {
    if (ctx_.graph().tensor(x).shape == shape && out < 0) return *result = x, Status::Ok();
    Attrs a;
    a.set_ints("shape", shape);
    a.set_int("allowzero", 0);
    return emit(OpId::Reshape, {x, -1}, "reshape" + std::to_string(++count_), out, a, result);
  }

 private:
  MapContext& ctx_;
  int count_ = 0;
};

}  // namespace

Status map_Einsum(MapContext& ctx) {
  const onnx::AttributeProto* eq_attr = ctx.attr("equation");
  if (!eq_attr) return ctx.error("has no 'equation' attribute");
  std::string eq;
  for (char c : eq_attr->s())
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs())
    return ctx.error("equation '%s' has %zu operands, the node %zu inputs", eq.c_str(), terms.size(), ctx.num_inputs());
  if (terms.size() > 2)
    return ctx.unsupported("equation '%s' has %zu operands; only one or two are supported: split it into "
                           "pairwise Einsum nodes", eq.c_str(), terms.size());

  std::vector<Labels> in(terms.size());
  std::map<int, int64_t> size;  // label -> dim (the larger one where an ellipsis dim broadcasts)
  size_t ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Tensor* t = ctx.input_tensor(i);
    if (!t) return ctx.error("input %zu is missing", i);
    size_t ell = 0;
    ORKNN_RETURN_IF_ERROR(parse_term(ctx, terms[i], t->shape.size(), &in[i], &ell));
    ellipsis = std::max(ellipsis, ell);
    for (size_t d = 0; d < in[i].size(); ++d) {
      const int l = in[i][d];
      const int64_t n = t->shape[d];
      auto it = size.find(l);
      if (it == size.end() || it->second == 1) size[l] = n;
      else if (n != 1 && n != it->second)
        return ctx.error("label '%s' has size %lld in one operand and %lld in another",
                         l < 0 ? "..." : std::string(1, static_cast<char>(l)).c_str(), static_cast<long long>(n),
                         static_cast<long long>(it->second));
      else if (n != it->second && l >= 0)  // a size-1 letter dim against a larger one: not einsum
        return ctx.error("label '%c' has sizes 1 and %lld", static_cast<char>(l), static_cast<long long>(it->second));
    }
  }
  Labels out;
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (rhs.compare(i, 3, "...") == 0) {
        for (size_t k = 0; k < ellipsis; ++k) out.push_back(-static_cast<int>(ellipsis - k));
        i += 2;
        continue;
      }
      const int l = static_cast<unsigned char>(rhs[i]);
      if (!std::isalpha(l) || has(out, l) || !size.count(l))
        return ctx.error("output term '%s': '%c' is not a label of the operands, or repeats", rhs.c_str(), rhs[i]);
      out.push_back(l);
    }
  } else {  // implicit output: the ellipsis dims, then the letters used once, alphabetically
    for (size_t k = 0; k < ellipsis; ++k) out.push_back(-static_cast<int>(ellipsis - k));
    for (const auto& [l, n] : size)
      if (l >= 0 && (has(in[0], l) + (in.size() > 1 && has(in[1], l))) == 1) out.push_back(l);
  }
  for (size_t k = 0; k < ellipsis; ++k)
    if (!has(out, -static_cast<int>(k + 1)))
      return ctx.unsupported("equation '%s' sums over the '...' dims; name them with letters", eq.c_str());

  int y;
  ORKNN_RETURN_IF_ERROR(ctx.output(0, &y));
  EinsumBuilder b(ctx);
  if (in.size() == 1) {
    Labels left;
    int x;
    ORKNN_RETURN_IF_ERROR(b.reduce_sum(ctx.input(0), in[0], [&] {
      Labels drop;
      for (int l : in[0])
        if (!has(out, l)) drop.push_back(l);
      return drop;
    }(), &left, &x));
    return b.transpose(x, left, out, y, &x);
  }

  const Labels &a = in[0], &bl = in[1];
  Labels batch, kept_a, kept_b, contract, sum_a, sum_b;
  for (int l : out)
    if (has(a, l) && has(bl, l)) batch.push_back(l);
  for (int l : a) {
    if (has(out, l) && !has(bl, l)) kept_a.push_back(l);
    if (!has(out, l) && has(bl, l)) contract.push_back(l);
    if (!has(out, l) && !has(bl, l)) sum_a.push_back(l);
  }
  for (int l : bl) {
    if (has(out, l) && !has(a, l)) kept_b.push_back(l);
    if (!has(out, l) && !has(a, l)) sum_b.push_back(l);
  }
  auto prod = [&](const Labels& ls) {
    int64_t p = 1;
    for (int l : ls) p *= size.at(l);
    return p;
  };
  // Each operand: sum its own labels away, order as [batch, rows, cols], flatten rows and cols.
  auto operand = [&](size_t i, const Labels& drop, const Labels& rows, const Labels& cols, int* result) {
    Labels left;
    int x;
    ORKNN_RETURN_IF_ERROR(b.reduce_sum(ctx.input(i), in[i], drop, &left, &x));
    Labels order = batch;
    order.insert(order.end(), rows.begin(), rows.end());
    order.insert(order.end(), cols.begin(), cols.end());
    ORKNN_RETURN_IF_ERROR(b.transpose(x, left, order, -1, &x));
    Shape shape;
    const Shape& xs = ctx.graph().tensor(x).shape;
    for (size_t d = 0; d < batch.size(); ++d) shape.push_back(xs[d]);  // this operand's own (maybe 1)
    shape.push_back(prod(rows));
    shape.push_back(prod(cols));
    return b.reshape(x, shape, -1, result);
  };
  int ma, mb, mm;
  ORKNN_RETURN_IF_ERROR(operand(0, sum_a, kept_a, contract, &ma));
  ORKNN_RETURN_IF_ERROR(operand(1, sum_b, contract, kept_b, &mb));
  ORKNN_RETURN_IF_ERROR(b.emit(OpId::MatMul, {ma, mb}, "matmul", -1, Attrs(), &mm));
  Labels mm_labels = batch;
  mm_labels.insert(mm_labels.end(), kept_a.begin(), kept_a.end());
  mm_labels.insert(mm_labels.end(), kept_b.begin(), kept_b.end());
  Shape full;
  for (int l : mm_labels) full.push_back(size.at(l));
  if (mm_labels == out) return b.reshape(mm, full, y, &mm);
  ORKNN_RETURN_IF_ERROR(b.reshape(mm, full, -1, &mm));
  return b.transpose(mm, mm_labels, out, y, &mm);
}

}  // namespace orknn::onnx_import
