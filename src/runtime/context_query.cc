// runtime::Context: rknn_query and the tensor attributes it reports (docs/api-contract.md §4.1,
// §4.4).
#include <cstdio>
#include <cstring>

#include "common/version.h"
#include "ops/op.h"
#include "runtime/context.h"
#include "runtime/layout_assignment.h"
#include "runtime/layouts.h"
#include "runtime/platform.h"
#include "runtime/tensor_io.h"

namespace orknn {

static void fill_common_attr(const Tensor& t, uint32_t index, rknn_tensor_attr* a) {
  std::memset(a, 0, sizeof(*a));
  a->index = index;
  std::snprintf(a->name, sizeof(a->name), "%s", t.name.c_str());
  a->type = reported_type(t);
  if (is_float(t.dtype)) {
    a->qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
    a->zp = 0;
    a->scale = 1.0f;
  } else if (!t.quant.empty()) {
    a->qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
    a->zp = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
    a->scale = t.quant.scale[0];
  } else {
    a->qnt_type = RKNN_TENSOR_QNT_NONE;
    a->scale = 1.0f;
  }
  a->n_elems = static_cast<uint32_t>(t.numel());
  a->size = static_cast<uint32_t>(t.numel() * rknn_type_size(a->type));
  a->size_with_stride = a->size;
}

Status Context::input_attr(uint32_t index, rknn_tensor_attr* a, const Model* m) const {
  if (index >= n_inputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(INPUT_ATTR): index %u out of range (model has %u inputs)", index, n_inputs());
  const Model& md = m ? *m : *model_;
  const Tensor& t = md.graph.tensor(md.graph.inputs[index].tensor);
  fill_common_attr(t, index, a);
  const Shape& s = t.shape;
  a->n_dims = static_cast<uint32_t>(s.size());
  if (s.size() == 4) {  // 4-D inputs are reported NHWC (docs/api-contract.md §4.1)
    a->fmt = RKNN_TENSOR_NHWC;
    a->dims[0] = static_cast<uint32_t>(s[0]); a->dims[1] = static_cast<uint32_t>(s[2]);
    a->dims[2] = static_cast<uint32_t>(s[3]); a->dims[3] = static_cast<uint32_t>(s[1]);
    a->w_stride = static_cast<uint32_t>(s[3]);
  } else {
    a->fmt = RKNN_TENSOR_UNDEFINED;
    for (size_t i = 0; i < s.size() && i < RKNN_MAX_DIMS; ++i) a->dims[i] = static_cast<uint32_t>(s[i]);
  }
  return Status::Ok();
}

Status Context::output_attr(uint32_t index, rknn_tensor_attr* a, const Model* m) const {
  if (index >= n_outputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(OUTPUT_ATTR): index %u out of range (model has %u outputs)", index, n_outputs());
  const Model& md = m ? *m : *model_;
  const Tensor& t = md.graph.tensor(md.graph.outputs[index]);
  fill_common_attr(t, index, a);
  const Shape& s = t.shape;
  a->n_dims = static_cast<uint32_t>(s.size());
  a->fmt = s.size() == 4 ? RKNN_TENSOR_NCHW : RKNN_TENSOR_UNDEFINED;  // outputs keep their layout
  for (size_t i = 0; i < s.size() && i < RKNN_MAX_DIMS; ++i) a->dims[i] = static_cast<uint32_t>(s[i]);
  if (s.size() == 4) a->w_stride = static_cast<uint32_t>(s[3]);
  return Status::Ok();
}

Status Context::query(int cmd, void* info, uint32_t size) {
  auto need = [&](size_t n, const char* what) -> Status {
    if (size < n)
      return ORKNN_ERR(kInvalidParam, "rknn_query(%s): size %u is smaller than sizeof(%s) = %zu", what, size, what, n);
    return Status::Ok();
  };
  const Graph& g = model_->graph;
  switch (cmd) {
    case RKNN_QUERY_IN_OUT_NUM: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_input_output_num), "rknn_input_output_num"));
      auto* p = static_cast<rknn_input_output_num*>(info);
      p->n_input = n_inputs();
      p->n_output = n_outputs();
      return Status::Ok();
    }
    case RKNN_QUERY_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return input_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return output_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    // Dynamic shapes (docs/api-contract.md §4.4): the active shape set; on a static model, its only shapes.
    case RKNN_QUERY_CURRENT_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return input_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_CURRENT_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return output_attr(static_cast<rknn_tensor_attr*>(info)->index, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return native_input_attr(static_cast<rknn_tensor_attr*>(info)->index, false, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      return native_output_attr(static_cast<rknn_tensor_attr*>(info)->index, false, static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_INPUT_DYNAMIC_RANGE:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_input_range), "rknn_input_range"));
      return input_range(static_cast<rknn_input_range*>(info));
    case RKNN_QUERY_NATIVE_INPUT_ATTR:
    case RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return native_input_attr(static_cast<rknn_tensor_attr*>(info)->index, cmd == RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR,
                               static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_NATIVE_OUTPUT_ATTR:
    case RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR:
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
      if (!base_model_->dynamic.empty()) return static_attr(cmd, static_cast<rknn_tensor_attr*>(info));
      return native_output_attr(static_cast<rknn_tensor_attr*>(info)->index, cmd == RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR,
                                static_cast<rknn_tensor_attr*>(info));
    case RKNN_QUERY_SDK_VERSION: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_sdk_version), "rknn_sdk_version"));
      auto* p = static_cast<rknn_sdk_version*>(info);
      std::memset(p, 0, sizeof(*p));
      std::snprintf(p->api_version, sizeof(p->api_version), "%s", kApiVersionString);
      std::snprintf(p->drv_version, sizeof(p->drv_version), "%s", kDriverVersionString);
      return Status::Ok();
    }
    // DEVICE_MEM_INFO fills the same rknn_mem_size (the header gives it no struct of its own): the
    // context's sizes, and no on-chip SRAM on a CPU (total/free_sram_size 0). docs/decisions.md.
    case RKNN_QUERY_DEVICE_MEM_INFO:
    case RKNN_QUERY_MEM_SIZE: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_mem_size), "rknn_mem_size"));
      auto* p = static_cast<rknn_mem_size*>(info);
      std::memset(p, 0, sizeof(*p));
      p->total_weight_size = static_cast<uint32_t>(model_->weight_bytes);
      p->total_internal_size = static_cast<uint32_t>(arena_size_);
      p->total_dma_allocated_size = model_->weight_bytes + arena_size_;
      return Status::Ok();
    }
    case RKNN_QUERY_CUSTOM_STRING: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_custom_string), "rknn_custom_string"));
      auto* p = static_cast<rknn_custom_string*>(info);
      std::memset(p, 0, sizeof(*p));
      std::snprintf(p->string, sizeof(p->string), "%s", g.custom_string.c_str());
      return Status::Ok();
    }
    case RKNN_QUERY_PERF_RUN: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_perf_run), "rknn_perf_run"));
      static_cast<rknn_perf_run*>(info)->run_duration = last_run_us_;
      return Status::Ok();
    }
    case RKNN_QUERY_PERF_DETAIL: {
      ORKNN_RETURN_IF_ERROR(need(sizeof(rknn_perf_detail), "rknn_perf_detail"));
      auto* p = static_cast<rknn_perf_detail*>(info);
      if (!(flags_ & RKNN_FLAG_COLLECT_PERF_MASK)) {
        perf_detail_ = "per-layer timing is collected when rknn_init is given RKNN_FLAG_COLLECT_PERF_MASK\n";
      } else {
        // Layout: how the runtime holds the output between kernels (NCHW order, or blocked:
        // blocked_layout_name).
        // MACs: multiply-accumulates of the layer (convolutions and matrix products; 0 otherwise).
        perf_detail_ = strfmt("%-5s %-22s %-32s %-18s %-20s %-8s %12s %10s\n", "ID", "OpType", "Name", "Kernel",
                              "OutputShape", "Layout", "MACs", "Time(us)");
        int64_t total = 0;
        const Executor& e = last_run_exec_ ? *last_run_exec_ : exec();
        for (size_t i = 0; i < e.num_steps(); ++i) {
          const Node& n = e.step_node(i);
          const Tensor& y = model_->graph.tensor(n.outputs[0]);
          perf_detail_ += strfmt("%-5zu %-22s %-32s %-18s %-20s %-8s %12lld %10lld\n", i, op_name(n.op), n.name.c_str(),
                                 e.kernel_name(i).c_str(), shape_str(y.shape).c_str(),
                                 e.output_blocked(i) ? blocked_layout_name(y.dtype) : "plain",
                                 static_cast<long long>(node_macs(model_->graph, n)),
                                 static_cast<long long>(e.step_last_us(i)));
          total += e.step_last_us(i);
        }
        perf_detail_ += strfmt("Total operator time (us): %lld\n", static_cast<long long>(total));
      }
      p->perf_data = perf_detail_.data();
      p->data_len = perf_detail_.size();
      return Status::Ok();
    }
    default:
      return ORKNN_ERR(kInvalidParam, "rknn_query: %d is not an rknn_query_cmd value this runtime answers "
                       "(RKNN_QUERY_IN_OUT_NUM .. RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, 0 .. %d)", cmd,
                       RKNN_QUERY_CMD_MAX - 1);
  }
}

namespace {

void set_nhwc_dims(const Shape& s, rknn_tensor_attr* a) {
  a->fmt = RKNN_TENSOR_NHWC;
  a->n_dims = 4;
  a->dims[0] = static_cast<uint32_t>(s[0]); a->dims[1] = static_cast<uint32_t>(s[2]);
  a->dims[2] = static_cast<uint32_t>(s[3]); a->dims[3] = static_cast<uint32_t>(s[1]);
  a->w_stride = static_cast<uint32_t>(s[3]);
}

}  // namespace

Status Context::native_input_attr(uint32_t index, bool nhwc, rknn_tensor_attr* a, const Model* m) const {
  (void)nhwc;  // both native input views are NHWC (docs/api-contract.md §4.4): the normal attribute already is
  if (index >= n_inputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(NATIVE_INPUT_ATTR): index %u out of range (model has %u inputs)", index, n_inputs());
  ORKNN_RETURN_IF_ERROR(input_attr(index, a, m));
  a->pass_through = 0;
  return Status::Ok();
}

Status Context::native_output_attr(uint32_t index, bool nhwc, rknn_tensor_attr* a, const Model* m) const {
  if (index >= n_outputs())
    return ORKNN_ERR(kInvalidParam, "rknn_query(NATIVE_OUTPUT_ATTR): index %u out of range (model has %u outputs)", index,
                     n_outputs());
  ORKNN_RETURN_IF_ERROR(output_attr(index, a, m));
  const Model& md = m ? *m : *model_;
  const Tensor& t = md.graph.tensor(md.graph.outputs[index]);
  const Shape& s = t.shape;
  if (s.size() != 4) return Status::Ok();  // non-4-D outputs have no other native layout
  const int c2 = native_c2(*md.platform, a->type);
  if (!nhwc && c2 > 0) {
    const Nc1hwc2Geometry g = geometry_of(s, c2, 0);
    a->fmt = RKNN_TENSOR_NC1HWC2;
    a->n_dims = 5;
    a->dims[0] = static_cast<uint32_t>(g.n); a->dims[1] = static_cast<uint32_t>(g.c1());
    a->dims[2] = static_cast<uint32_t>(g.h); a->dims[3] = static_cast<uint32_t>(g.w);
    a->dims[4] = static_cast<uint32_t>(c2);
    a->n_elems = static_cast<uint32_t>(g.num_elements());  // padding included, as the vendor reports
    a->size = static_cast<uint32_t>(g.num_elements() * static_cast<int64_t>(rknn_type_size(a->type)));
    a->size_with_stride = a->size;
    a->w_stride = static_cast<uint32_t>(g.w);
  } else if (nhwc || a->type == RKNN_TENSOR_INT8 || a->type == RKNN_TENSOR_FLOAT16) {
    // NATIVE_NHWC_OUTPUT_ATTR, or a platform without NC1HWC2 for this dtype (docs/decisions.md).
    set_nhwc_dims(s, a);
  }
  return Status::Ok();
}

}  // namespace orknn
