// Test helper: builds small ONNX models in memory with the protobuf API, so converter tests need
// no model files.
#pragma once
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace orknn::test {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset, int ir_version = 8) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("openrknn-test");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    graph_ = model_.mutable_graph();
    graph_->set_name("test");
  }

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *graph_; }

  // dims: -1 = dynamic (dim_param "<name>_d<i>", or `params[i]` when given).
  void input(const std::string& name, const std::vector<int64_t>& dims, int elem = onnx::TensorProto::FLOAT,
             const std::vector<std::string>& params = {}) {
    auto* vi = graph_->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* sh = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = sh->add_dim();
      if (dims[i] >= 0) d->set_dim_value(dims[i]);
      else d->set_dim_param(i < params.size() ? params[i] : name + "_d" + std::to_string(i));
    }
  }
  void output(const std::string& name) {
    auto* vi = graph_->add_output();
    vi->set_name(name);
  }

  static void fill(onnx::TensorProto* t, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  }
  static void fill(onnx::TensorProto* t, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t->add_dims(d);
    for (auto x : v) t->add_int64_data(x);
  }
  void init_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    fill(t, dims, v);
  }
  void init_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    fill(t, dims, v);
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph_->node_size()) : name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return n;
  }

  static void attr_i(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_f(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_s(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr_floats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (auto x : v) a->add_floats(x);
  }
  static onnx::TensorProto* attr_t(onnx::NodeProto* n, const std::string& name) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    return a->mutable_t();
  }

  std::string bytes() const {
    std::string s;
    model_.SerializeToString(&s);
    return s;
  }

 private:
  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
};

}  // namespace orknn::test
