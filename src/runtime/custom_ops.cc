#include "runtime/custom_ops.h"

#include <cstring>
#include <mutex>
#include <unordered_set>

#include "common/log.h"
#include "common/raw_enum.h"

namespace orknn {

// One typed attribute as rknn_custom_op_get_op_attr hands it out.
struct CustomAttr {
  rknn_tensor_type dtype = RKNN_TENSOR_FLOAT32;
  uint32_t n_elems = 0;
  std::vector<uint8_t> bytes;  // the values; strings carry one extra NUL byte
};

struct CustomOps::NodeState {
  const Node* node = nullptr;
  std::string type;
  rknn_custom_op_context op_ctx{};
  const rknn_custom_op* op = nullptr;  // registered description, or nullptr
  bool initialised = false;            // init ran (or there is none) and destroy is owed
  std::vector<std::pair<std::string, CustomAttr>> attrs;
  // The tensors `init` sees (described from the model's first shape set).
  std::vector<rknn_custom_op_tensor> input_tmpl, output_tmpl;
  CustomOps* owner = nullptr;
};

namespace {

// The op contexts this runtime created and not yet destroyed: rknn_custom_op_get_op_attr trusts
// an internal_ctx only if it is in this set, so a stale or forged op_ctx cannot crash it.
std::mutex& live_mu() {
  static std::mutex m;
  return m;
}
std::unordered_set<const void*>& live_nodes() {
  static std::unordered_set<const void*> s;
  return s;
}

CustomAttr to_custom_attr(const AttrValue& v) {
  CustomAttr a;
  auto put = [&](const void* p, size_t bytes) {
    a.bytes.assign(static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + bytes);
  };
  switch (v.kind) {
    case AttrValue::Kind::kInt:
      a.dtype = RKNN_TENSOR_INT64; a.n_elems = 1; put(&v.i, sizeof v.i); break;
    case AttrValue::Kind::kFloat:
      a.dtype = RKNN_TENSOR_FLOAT32; a.n_elems = 1; put(&v.f, sizeof v.f); break;
    case AttrValue::Kind::kString:
      a.dtype = RKNN_TENSOR_UINT8;
      a.n_elems = static_cast<uint32_t>(v.s.size());
      put(v.s.c_str(), v.s.size() + 1);  // NUL-terminated for convenience; not counted
      break;
    case AttrValue::Kind::kInts:
      a.dtype = RKNN_TENSOR_INT64; a.n_elems = static_cast<uint32_t>(v.ints.size());
      put(v.ints.data(), v.ints.size() * sizeof(int64_t)); break;
    case AttrValue::Kind::kFloats:
      a.dtype = RKNN_TENSOR_FLOAT32; a.n_elems = static_cast<uint32_t>(v.floats.size());
      put(v.floats.data(), v.floats.size() * sizeof(float)); break;
  }
  if (a.bytes.empty()) a.bytes.push_back(0);  // data is never NULL for a present attribute
  return a;
}

// A tensor as the callbacks see it (docs/api-contract.md §2.2): FLOAT32, the ONNX dims, NCHW for 4-D and
// UNDEFINED otherwise, dense, the data at mem.virt_addr (+ mem.offset 0). `data` may be NULL
// (init: activations do not hold data yet).
rknn_custom_op_tensor describe(const Tensor& t, uint32_t index, const void* data) {
  rknn_custom_op_tensor x;
  std::memset(&x, 0, sizeof x);
  rknn_tensor_attr& a = x.attr;
  a.index = index;
  a.n_dims = static_cast<uint32_t>(t.shape.size());
  for (size_t d = 0; d < t.shape.size() && d < RKNN_MAX_DIMS; ++d) a.dims[d] = static_cast<uint32_t>(t.shape[d]);
  std::snprintf(a.name, sizeof a.name, "%s", t.name.c_str());
  a.n_elems = static_cast<uint32_t>(t.numel());
  a.size = static_cast<uint32_t>(t.numel() * 4);
  a.fmt = t.shape.size() == 4 ? RKNN_TENSOR_NCHW : RKNN_TENSOR_UNDEFINED;
  a.type = RKNN_TENSOR_FLOAT32;
  a.qnt_type = RKNN_TENSOR_QNT_NONE;
  a.scale = 1.0f;
  if (t.shape.size() == 4) a.w_stride = static_cast<uint32_t>(t.shape[3]);
  a.size_with_stride = a.size;
  x.mem.virt_addr = const_cast<void*>(data);
  x.mem.fd = -1;
  x.mem.offset = 0;
  x.mem.size = a.size;
  x.mem.flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
  return x;
}

bool is_ok_code(int rc) { return rc == RKNN_SUCC || rc == RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE; }

// The Custom node's step: prepare + compute on the node's tensors in the context's arena.
// The tensor arrays are built once here (run() allocates nothing) from the graph the kernel runs
// (a dynamic-shape model has one per shape set); `inputs`/`outputs` are handed over and reset
// from the templates before every call, so a callback that scribbles on them cannot affect the next.
class CustomOpKernel : public Kernel {
 public:
  CustomOpKernel(CustomOps::NodeState* s, const Graph& g, const Node& n) : s_(s) {
    for (size_t i = 0; i < n.inputs.size(); ++i)
      input_tmpl_.push_back(describe(g.tensor(n.inputs[i]), static_cast<uint32_t>(i), nullptr));
    for (size_t i = 0; i < n.outputs.size(); ++i)
      output_tmpl_.push_back(describe(g.tensor(n.outputs[i]), static_cast<uint32_t>(i), nullptr));
    inputs_ = input_tmpl_;
    outputs_ = output_tmpl_;
  }
  void run(const KernelContext& ctx) override;

 private:
  void reset(const KernelContext& ctx) {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      inputs_[i] = input_tmpl_[i];
      inputs_[i].mem.virt_addr = const_cast<void*>(ctx.inputs[i]);
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      outputs_[i] = output_tmpl_[i];
      outputs_[i].mem.virt_addr = ctx.outputs[i];
    }
  }

  CustomOps::NodeState* s_;
  std::vector<rknn_custom_op_tensor> input_tmpl_, output_tmpl_, inputs_, outputs_;
};

}  // namespace

static void record_run_error(CustomOps::NodeState& s, const char* callback, int rc) {
  s.owner->note_run_error(
      ORKNN_ERR(kFail, "rknn_run: custom operator node '%s' (type '%s'): %s returned %d", s.node->name.c_str(),
                s.type.c_str(), callback, rc),
      rc);
}

void CustomOpKernel::run(const KernelContext& ctx) {
  CustomOps::NodeState& s = *s_;
  if (!s.op || !s.op->compute) return;  // Context::run refuses to start before registration
  const uint32_t n_in = static_cast<uint32_t>(inputs_.size());
  const uint32_t n_out = static_cast<uint32_t>(outputs_.size());
  reset(ctx);
  if (s.op->prepare) {
    int rc = s.op->prepare(&s.op_ctx, inputs_.data(), n_in, outputs_.data(), n_out);
    if (!is_ok_code(rc)) return record_run_error(s, "prepare", rc);
    if (rc == RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE) return;  // prepare asked to skip this run's compute
    reset(ctx);  // compute gets the arrays as they were before prepare
  }
  int rc = s.op->compute(&s.op_ctx, inputs_.data(), n_in, outputs_.data(), n_out);
  if (!is_ok_code(rc)) record_run_error(s, "compute", rc);
}

CustomOps::CustomOps(const Graph& g) : g_(g) {
  for (const Node& n : g.nodes) {
    if (n.op != OpId::Custom) continue;
    auto s = std::make_unique<NodeState>();
    s->node = &n;
    s->owner = this;
    s->type = n.attrs.get_string("custom_type", "");
    s->op_ctx.target = RKNN_TARGET_TYPE_CPU;
    s->op_ctx.internal_ctx = static_cast<rknn_custom_op_interal_context>(reinterpret_cast<uintptr_t>(s.get()));
    s->op_ctx.priv_data = nullptr;
    for (const auto& kv : n.attrs.all()) s->attrs.emplace_back(kv.first, to_custom_attr(kv.second));
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Tensor& t = g.tensor(n.inputs[i]);
      s->input_tmpl.push_back(describe(t, static_cast<uint32_t>(i), nullptr));
    }
    for (size_t i = 0; i < n.outputs.size(); ++i)
      s->output_tmpl.push_back(describe(g.tensor(n.outputs[i]), static_cast<uint32_t>(i), nullptr));
    {
      std::lock_guard<std::mutex> lock(live_mu());
      live_nodes().insert(s.get());
    }
    nodes_.push_back(std::move(s));
  }
}

CustomOps::~CustomOps() {
  for (auto& s : nodes_) destroy_node(*s);
  std::lock_guard<std::mutex> lock(live_mu());
  for (auto& s : nodes_) live_nodes().erase(s.get());
}

void CustomOps::destroy_node(NodeState& s) {
  if (!s.initialised) return;
  s.initialised = false;
  if (s.op && s.op->destroy) {
    int rc = s.op->destroy(&s.op_ctx);
    if (!is_ok_code(rc))
      ORKNN_LOGW("rknn_destroy: custom operator node '%s' (type '%s'): destroy returned %d", s.node->name.c_str(),
                 s.type.c_str(), rc);
  }
}

Status CustomOps::init_node(NodeState& s) {
  s.initialised = true;  // destroy is owed from here on, unless init fails
  if (!s.op->init) return Status::Ok();
  // At init activations hold no data yet: their mem.virt_addr is NULL (attr and mem.size are
  // final); constant inputs (weights) point at their data.
  std::vector<rknn_custom_op_tensor> ins = s.input_tmpl, outs = s.output_tmpl;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Tensor& t = g_.tensor(s.node->inputs[i]);
    if (t.is_const()) ins[i].mem.virt_addr = const_cast<uint8_t*>(t.data.ptr);
  }
  int rc = s.op->init(&s.op_ctx, ins.data(), static_cast<uint32_t>(ins.size()), outs.data(),
                      static_cast<uint32_t>(outs.size()));
  if (is_ok_code(rc)) return Status::Ok();
  s.initialised = false;
  callback_code_ = rc;
  return ORKNN_ERR(kFail, "rknn_register_custom_ops: custom operator node '%s' (type '%s'): init returned %d",
                   s.node->name.c_str(), s.type.c_str(), rc);
}

Status CustomOps::register_ops(const rknn_custom_op* ops, uint32_t n) {
  callback_code_ = 0;
  if (!ops) return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: op is NULL");
  if (n == 0) return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: custom_op_num is 0");
  std::string model_types;
  for (const auto& s : nodes_)
    if (model_types.find("'" + s->type + "'") == std::string::npos)
      model_types += (model_types.empty() ? "'" : ", '") + s->type + "'";
  if (model_types.empty()) model_types = "none";
  std::vector<std::string> types;
  for (uint32_t k = 0; k < n; ++k) {
    const rknn_custom_op& op = ops[k];
    if (!std::memchr(op.op_type, '\0', sizeof op.op_type) || op.op_type[0] == '\0')
      return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: op[%u].op_type is empty or not NUL-terminated", k);
    const std::string type = op.op_type;
    const int target = raw_enum(op.target);  // any int a client wrote into the field
    if (target == RKNN_TARGET_TYPE_GPU)
      return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: op[%u] ('%s') targets the GPU; OpenCL targets are not "
                       "supported by this CPU runtime (register a RKNN_TARGET_TYPE_CPU implementation)", k, type.c_str());
    if (target != RKNN_TARGET_TYPE_CPU)
      return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: op[%u] ('%s'): target %d is not RKNN_TARGET_TYPE_CPU",
                       k, type.c_str(), target);
    if (!op.compute)
      return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: op[%u] ('%s'): compute is NULL (it is required)", k,
                       type.c_str());
    bool in_model = false;
    for (const auto& s : nodes_) in_model |= s->type == type;
    if (!in_model)
      return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: op[%u]: the model has no custom operator of type '%s' "
                       "(its custom types: %s)", k, type.c_str(), model_types.c_str());
    for (const auto& r : registered_)
      if (type == r->op_type)
        return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: op[%u]: type '%s' is already registered with this "
                         "context", k, type.c_str());
    for (const auto& t : types)
      if (t == type)
        return ORKNN_ERR(kInvalidParam, "rknn_register_custom_ops: type '%s' appears twice in op[]", type.c_str());
    types.push_back(type);
  }
  {
    // All valid: copy and initialise; a failing init undoes this call.
    std::vector<NodeState*> done;
    const size_t first_new = registered_.size();
    for (uint32_t k = 0; k < n; ++k) {
      registered_.push_back(std::make_unique<rknn_custom_op>(ops[k]));
      const rknn_custom_op* copy = registered_.back().get();
      for (auto& s : nodes_) {
        if (s->type != types[k]) continue;
        s->op = copy;
        Status st = init_node(*s);
        if (!st.ok()) {
          for (NodeState* d : done) destroy_node(*d);
          for (auto& u : nodes_)
            for (size_t r = first_new; r < registered_.size(); ++r)
              if (u->op == registered_[r].get()) u->op = nullptr;
          registered_.resize(first_new);
          return st;
        }
        done.push_back(s.get());
      }
      ORKNN_LOGI("rknn_register_custom_ops: registered custom operator type '%s' (version %u)", copy->op_type,
                 copy->version);
    }
  }
  return Status::Ok();
}

Status CustomOps::begin_run() {
  run_error_ = Status::Ok();
  callback_code_ = 0;
  for (const auto& s : nodes_)
    if (!s->op)
      return ORKNN_ERR(kFail, "rknn_run: the model has custom operator node '%s' of type '%s', which has no "
                       "implementation; call rknn_register_custom_ops with a '%s' rknn_custom_op after rknn_init",
                       s->node->name.c_str(), s->type.c_str(), s->type.c_str());
  return Status::Ok();
}

std::unique_ptr<Kernel> CustomOps::make_kernel(const Graph& g, const Node& n) {
  // By name: the nodes of every shape set of a dynamic-shape model share one op context.
  for (auto& s : nodes_)
    if (s->node->name == n.name) return std::make_unique<CustomOpKernel>(s.get(), g, n);
  return nullptr;
}

Status CustomOps::take_run_error() {
  Status st = run_error_;
  run_error_ = Status::Ok();
  return st;
}

void custom_op_get_attr(rknn_custom_op_context* op_ctx, const char* name, rknn_custom_op_attr* out) {
  if (out) {
    std::memset(out, 0, sizeof *out);
    if (name) std::snprintf(out->name, sizeof out->name, "%s", name);
  }
  if (!op_ctx || !name || !out) {
    ORKNN_LOGE("rknn_custom_op_get_op_attr: %s is NULL", !op_ctx ? "op_ctx" : !name ? "attr_name" : "op_attr");
    return;
  }
  const void* key = reinterpret_cast<const void*>(static_cast<uintptr_t>(op_ctx->internal_ctx));
  const CustomOps::NodeState* s = nullptr;
  {
    std::lock_guard<std::mutex> lock(live_mu());
    if (live_nodes().count(key)) s = static_cast<const CustomOps::NodeState*>(key);
  }
  if (!s) {
    ORKNN_LOGE("rknn_custom_op_get_op_attr: op_ctx %p is not a live custom operator context (pass the op_ctx the "
               "callback received)", static_cast<void*>(op_ctx));
    return;
  }
  for (const auto& kv : s->attrs) {
    if (kv.first != name) continue;
    out->dtype = kv.second.dtype;
    out->n_elems = kv.second.n_elems;
    out->data = const_cast<uint8_t*>(kv.second.bytes.data());
    return;
  }
  ORKNN_LOGD("rknn_custom_op_get_op_attr: node '%s' (type '%s') has no attribute '%s'", s->node->name.c_str(),
             s->type.c_str(), name);
}

}  // namespace orknn
