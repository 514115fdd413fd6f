// runtime::Context, dynamic-shape part (docs/api-contract.md §4.4, docs/decisions.md "Dynamic
// shapes"): selecting a shape set from the client's input attributes (each set's executor bound
// on first use, then kept), and the queries that describe the sets. Kept apart so that the rest
// of the context stays shape-set agnostic: it always works on model_, the active set's model.
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "common/raw_enum.h"
#include "runtime/context.h"

namespace orknn {
namespace {

// The dims of an NCHW shape in the order the C API reports them (NHWC for 4-D inputs).
Shape reported_input_dims(const Shape& s) {
  if (s.size() != 4) return s;
  return {s[0], s[2], s[3], s[1]};
}

std::string dims_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

const Model* Context::shape_set_model(size_t set) const {
  if (set == 0 || base_model_->shape_set_models.empty()) return base_model_.get();
  return base_model_->shape_set_models[set].get();
}

Status Context::select_shape_set(size_t set) {
  if (set == active_set_) return Status::Ok();
  const size_t n_sets = n_shape_sets();
  if (set >= n_sets) return ORKNN_ERR(kInvalidParam, "shape set %zu does not exist (the model has %zu)", set, n_sets);

  // Every set's executor was planned with the context (the arena fits the largest); this one is
  // bound to the arena on its first selection and keeps its kernels prepared after that.
  const size_t prev_set = active_set_;
  std::shared_ptr<const Model> prev_model = model_;
  model_ = set == 0 ? base_model_ : base_model_->shape_set_models[set];
  active_set_ = set;
  last_run_exec_ = nullptr;
  if (Status st = bind_active(); !st.ok()) {
    model_ = std::move(prev_model);
    active_set_ = prev_set;
    return st;
  }

  // Inputs written for the previous shapes do not describe this set; outputs are gone too.
  input_set_.assign(n_inputs(), false);
  has_run_ = false;
  if (async()) {
    const Graph& g = model_->graph;
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const Tensor& t = g.tensor(g.outputs[i]);
      const size_t bytes = static_cast<size_t>(t.numel()) * dtype_size(t.dtype);
      async_latest_[i].assign(bytes, 0);
      async_delivered_[i].assign(bytes, 0);
    }
  }
  // Zero-copy bindings: re-checked against the new shapes (sizes, staging buffers); one that no
  // longer fits is dropped with a warning, so the client rebinds it.
  for (uint32_t i = 0; i < input_bindings_.size(); ++i) {
    IoBinding old = input_bindings_[i];
    if (!old.mem) continue;
    rknn_tensor_attr a;
    std::memset(&a, 0, sizeof(a));
    a.index = i;
    a.type = old.type;
    a.fmt = old.fmt;
    a.pass_through = old.native ? 1 : 0;
    Status st = bind_input(i, old.mem, old.serial, a);
    if (st.ok()) {
      input_bindings_[i].fmt = old.fmt;
    } else {
      input_bindings_[i] = IoBinding();
      ORKNN_LOGW("rknn_set_input_shapes: the mem bound to input %u no longer fits (%s); bind one with rknn_set_io_mem", i,
                 st.message().c_str());
    }
  }
  for (uint32_t i = 0; i < output_bindings_.size(); ++i) {
    IoBinding old = output_bindings_[i];
    if (!old.mem) continue;
    rknn_tensor_attr a;
    std::memset(&a, 0, sizeof(a));
    a.index = i;
    a.type = old.type;
    a.fmt = old.fmt;
    a.w_stride = static_cast<uint32_t>(old.w_stride);
    Status st = bind_output(i, old.mem, old.serial, a);
    if (!st.ok()) {
      output_bindings_[i] = IoBinding();
      ORKNN_LOGW("rknn_set_input_shapes: the mem bound to output %u no longer fits (%s); bind one with rknn_set_io_mem", i,
                 st.message().c_str());
    }
  }
  ORKNN_LOGI("shape set %zu of %zu active", set, n_sets);
  return Status::Ok();
}

namespace {

// The shape (NCHW) of input `input` in shape set `set` of model m.
Shape set_input_shape_of(const Model& m, size_t set, size_t input) {
  if (m.dynamic.empty()) return m.graph.tensor(m.graph.inputs[input].tensor).shape;
  return m.dynamic.sets[set].input_shapes[input];
}

// attr's dims (in its fmt) -> NCHW, for an input of rank `rank`.
Status attr_to_nchw(const char* fn, const rknn_tensor_attr& a, uint32_t input, size_t rank, const std::string& name,
                    Shape* out) {
  if (a.n_dims != rank)
    return ORKNN_ERR(kInvalidInput, "%s: input %u ('%s'): n_dims %u, the input has %zu dims", fn, input, name.c_str(),
                     a.n_dims, rank);
  const int fmt = raw_enum(a.fmt);
  const bool four_d = rank == 4;
  if (four_d ? (fmt != RKNN_TENSOR_NHWC && fmt != RKNN_TENSOR_NCHW)
             : (fmt != RKNN_TENSOR_NHWC && fmt != RKNN_TENSOR_NCHW && fmt != RKNN_TENSOR_UNDEFINED))
    return ORKNN_ERR(kInvalidParam, "%s: input %u ('%s'): fmt %d is not accepted (give the dims in NHWC, the format "
                     "RKNN_QUERY_INPUT_ATTR reports%s)", fn, input, name.c_str(), fmt, four_d ? ", or NCHW" : "");
  Shape s(a.dims, a.dims + rank);
  if (four_d && fmt == RKNN_TENSOR_NHWC) s = {s[0], s[3], s[1], s[2]};
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace

Status Context::set_input_shapes(uint32_t n, const rknn_tensor_attr* attrs) {
  const char* fn = "rknn_set_input_shapes";
  if (!attrs) return ORKNN_ERR(kInvalidParam, "%s: attr is NULL", fn);
  if (n != n_inputs())
    return ORKNN_ERR(kInvalidParam, "%s: n_inputs %u, but the model has %u inputs (give every input)", fn, n, n_inputs());
  const Model& base = *base_model_;
  // attr[k].index names the input; an array whose indices were all left 0 is taken in order.
  bool all_zero = n > 1;
  for (uint32_t k = 0; k < n; ++k) all_zero = all_zero && attrs[k].index == 0;
  std::vector<Shape> want(n);
  std::vector<bool> given(n, false);
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t idx = all_zero ? k : attrs[k].index;
    if (idx >= n) return ORKNN_ERR(kInvalidParam, "%s: attr[%u].index %u out of range (model has %u inputs)", fn, k, idx, n);
    if (given[idx]) return ORKNN_ERR(kInvalidParam, "%s: input %u is given twice", fn, idx);
    given[idx] = true;
    const Tensor& t = base.graph.tensor(base.graph.inputs[idx].tensor);
    ORKNN_RETURN_IF_ERROR(attr_to_nchw(fn, attrs[k], idx, t.shape.size(), t.name, &want[idx]));
  }
  const size_t n_sets = n_shape_sets();
  for (size_t s = 0; s < n_sets; ++s) {
    bool match = true;
    for (uint32_t i = 0; i < n && match; ++i) match = set_input_shape_of(base, s, i) == want[i];
    if (match) return select_shape_set(s);
  }
  std::string given_str, allowed;
  for (uint32_t i = 0; i < n; ++i) given_str += (i ? " " : "") + dims_str(reported_input_dims(want[i]));
  for (size_t s = 0; s < n_sets; ++s) {
    allowed += strfmt("%s{", s ? "; " : "");
    for (uint32_t i = 0; i < n; ++i) allowed += (i ? " " : "") + dims_str(reported_input_dims(set_input_shape_of(base, s, i)));
    allowed += "}";
  }
  return ORKNN_ERR(kInvalidInput, "%s: the shapes %s are not a shape set of the model%s; allowed (dims as "
                   "RKNN_QUERY_INPUT_DYNAMIC_RANGE reports them, NHWC for 4-D): %s", fn, given_str.c_str(),
                   base.dynamic.empty() ? " (a static model: only its own shapes)" : "", allowed.c_str());
}

Status Context::set_input_shape(const rknn_tensor_attr* attr) {
  const char* fn = "rknn_set_input_shape";
  if (!attr) return ORKNN_ERR(kInvalidParam, "%s: attr is NULL", fn);
  if (attr->index >= n_inputs())
    return ORKNN_ERR(kInvalidParam, "%s: attr->index %u out of range (model has %u inputs)", fn, attr->index, n_inputs());
  const Model& base = *base_model_;
  const uint32_t idx = attr->index;
  const Tensor& t = base.graph.tensor(base.graph.inputs[idx].tensor);
  Shape shape;
  ORKNN_RETURN_IF_ERROR(attr_to_nchw(fn, *attr, idx, t.shape.size(), t.name, &shape));
  // The other inputs keep their active shapes.
  const size_t n_sets = n_shape_sets();
  for (size_t s = 0; s < n_sets; ++s) {
    bool match = set_input_shape_of(base, s, idx) == shape;
    for (uint32_t i = 0; i < n_inputs() && match; ++i)
      if (i != idx) match = set_input_shape_of(base, s, i) == set_input_shape_of(base, active_set_, i);
    if (match) return select_shape_set(s);
  }
  std::string allowed;
  for (size_t s = 0; s < n_sets; ++s)
    allowed += (s ? " " : "") + dims_str(reported_input_dims(set_input_shape_of(base, s, idx)));
  return ORKNN_ERR(kInvalidInput, "%s: input %u ('%s'): shape %s is not allowed with the other inputs' active shapes; "
                   "allowed shapes of this input: %s", fn, idx, t.name.c_str(), dims_str(reported_input_dims(shape)).c_str(),
                   allowed.c_str());
}

Status Context::static_attr(int cmd, rknn_tensor_attr* a) const {
  const uint32_t index = a->index;
  const Model* base = base_model_.get();
  auto fill = [&](const Model* m, rknn_tensor_attr* out) -> Status {
    out->index = index;
    switch (cmd) {
      case RKNN_QUERY_INPUT_ATTR: return input_attr(index, out, m);
      case RKNN_QUERY_OUTPUT_ATTR: return output_attr(index, out, m);
      case RKNN_QUERY_NATIVE_INPUT_ATTR:
      case RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR:
        return native_input_attr(index, cmd == RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR, out, m);
      default: return native_output_attr(index, cmd == RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, out, m);
    }
  };
  ORKNN_RETURN_IF_ERROR(fill(base, a));
  // Set 0's dims; n_elems, size and size_with_stride cover the largest set, whichever of them a
  // client allocates from (docs/decisions.md "Dynamic shapes").
  for (size_t s = 1; s < n_shape_sets(); ++s) {
    rknn_tensor_attr other;
    std::memset(&other, 0, sizeof(other));
    ORKNN_RETURN_IF_ERROR(fill(shape_set_model(s), &other));
    a->n_elems = std::max(a->n_elems, other.n_elems);
    a->size = std::max(a->size, other.size);
    a->size_with_stride = std::max(a->size_with_stride, std::max(other.size_with_stride, other.size));
  }
  return Status::Ok();
}

Status Context::input_range(rknn_input_range* r) const {
  const uint32_t index = r->index;
  if (index >= n_inputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(INPUT_DYNAMIC_RANGE): index %u out of range (model has %u inputs)", index,
                     n_inputs());
  const Model& base = *base_model_;
  const Tensor& t = base.graph.tensor(base.graph.inputs[index].tensor);
  std::memset(r, 0, sizeof(*r));
  r->index = index;
  // A static model answers with its one shape (docs/decisions.md "Dynamic shapes").
  r->shape_number = static_cast<uint32_t>(n_shape_sets());
  r->fmt = t.shape.size() == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
  std::snprintf(r->name, sizeof(r->name), "%s", t.name.c_str());
  r->n_dims = static_cast<uint32_t>(std::min<size_t>(t.shape.size(), RKNN_MAX_DIMS));
  for (size_t s = 0; s < n_shape_sets() && s < RKNN_MAX_DYNAMIC_SHAPE_NUM; ++s) {
    const Shape dims = reported_input_dims(set_input_shape_of(base, s, index));
    for (size_t d = 0; d < dims.size() && d < RKNN_MAX_DIMS; ++d) r->dyn_range[s][d] = static_cast<uint32_t>(dims[d]);
  }
  return Status::Ok();
}

}  // namespace orknn
