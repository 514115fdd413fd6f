// Four contexts of one model on the core mask 0_1_2 (split over every CPU), running at the same
// time on client threads of their own (rknn_dup_context: shared weights, own arena, kernels and
// OpenMP teams), compute the bits a one-thread context computes. Real models, so the layers run on the fast
// kernels: INT8 (the mobilenet_v2 and resnet18 QDQ models: the hand-written INT8 stem, depthwise,
// pointwise, Add, max and global pooling kernels, oneDNN's INT8 convolutions and fully-connected
// layers, the I/O quantization loops) and fp16 (efficientnet_b0: oneDNN's float convolutions, the
// float depthwise and pointwise kernels, the SiLU fusion, the squeeze-and-excitation pooling,
// Sigmoid and broadcast Mul, the one-row Gemm).
//
// scripts/sanitize.sh tsan runs this file under ThreadSanitizer, with LLVM's OpenMP runtime and
// its Archer tool so that OpenMP's own synchronisation is seen: there a data race between the
// contexts, their kernels' threads and the runtime's shared state is a failure too.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "converter/convert.h"
#include "model_test_util.h"
#include "rknn_api.h"

namespace orknn {
namespace {

using namespace model_test;

constexpr int kContexts = 4;  // the context rknn_init made and three duplicates: more than the CPUs
constexpr int kHeldOut = 2;   // held-out inputs besides the reference input
constexpr int kRounds = 2;    // each client thread runs every input this many times

struct Case {
  const char* name;      // NAME.onnx in the work directory
  const char* input_of;  // whose reference input and held-out inputs it takes ("": its own)
  const char* expected;  // a reference output of NAME.in.f32 (ONNX Runtime's or PyTorch's)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ThreadedContexts : public ::testing::TestWithParam<Case> {};

// rknn_inputs_set + rknn_run + rknn_outputs_get into `y`; the first failing API code, or RKNN_SUCC.
int infer(rknn_context ctx, const std::vector<float>& x, std::vector<float>* y) {
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.buf = const_cast<float*>(x.data());
  in.size = static_cast<uint32_t>(x.size() * sizeof(float));
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  int r = rknn_inputs_set(ctx, 1, &in);
  if (r != RKNN_SUCC) return r;
  if ((r = rknn_run(ctx, nullptr)) != RKNN_SUCC) return r;
  rknn_output out;
  std::memset(&out, 0, sizeof(out));
  out.want_float = 1;
  out.is_prealloc = 1;
  out.buf = y->data();
  out.size = static_cast<uint32_t>(y->size() * sizeof(float));
  if ((r = rknn_outputs_get(ctx, 1, &out, nullptr)) != RKNN_SUCC) return r;
  return rknn_outputs_release(ctx, 1, &out);
}

TEST_P(ThreadedContexts, DupedContextsOnClientThreadsMatchOneThread) {
  const Case& c = GetParam();
  const std::string input_of = *c.input_of ? c.input_of : c.name;
  ReferenceModel ref;
  ASSERT_NO_FATAL_FAILURE(load_reference_model(c.name, &ref, input_of));
  std::vector<uint8_t> model;
  ASSERT_NO_FATAL_FAILURE(convert_model(ref.onnx, ConvertOptions(), &model));

  // The reference input and the held-out inputs of the INT8 tests (same distribution, other seeds).
  std::vector<std::vector<float>> inputs = {ref.input};
  for (int i = 0; i < kHeldOut; ++i) {
    const std::string path = models_dir() + "/calib/torchvision/test_0" + std::to_string(i) + ".f32";
    std::vector<float> x;
    ASSERT_TRUE(read_f32(path, &x)) << path << " is missing: run scripts/prepare_test_models.sh";
    ASSERT_EQ(x.size(), ref.input.size()) << path;
    inputs.push_back(std::move(x));
  }
  std::vector<ModelInput> run_inputs;
  for (const std::vector<float>& x : inputs)
    run_inputs.push_back({x.data(), x.size() * sizeof(float), RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW});

  // One thread, one context: the bits every threaded run must reproduce. That they are the model's
  // output and not some degenerate constant: the reference input's output against the reference
  // runtime (the tolerances proper are models_test.cc's and int8_models_test.cc's).
  std::vector<std::vector<float>> want;
  {
    const SetEnv one("OPENRKNN_NUM_THREADS", "1");
    ASSERT_NO_FATAL_FAILURE(run_model(model, run_inputs, &want));
  }
  std::vector<float> expected;
  const std::string expected_path = models_dir() + "/" + c.expected;
  ASSERT_TRUE(read_f32(expected_path, &expected)) << expected_path << " is missing: run scripts/prepare_test_models.sh";
  ASSERT_EQ(want[0].size(), expected.size());
  EXPECT_GT(compare(want[0], expected).cosine, 0.99);

  // Threads as clients ask for them: every context on the core mask 0_1_2 (all three RK3588 cores,
  // so every CPU of the host), planned for several threads whatever the model's MACs, and its runs
  // kept threaded while the other contexts run (common/threads.h).
  const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");
  const SetEnv idle_host("OPENRKNN_BUSY_HOST", "0");
  std::vector<rknn_context> ctxs(kContexts, 0);
  ASSERT_EQ(rknn_init(&ctxs[0], model.data(), static_cast<uint32_t>(model.size()), 0, nullptr), RKNN_SUCC);
  for (int k = 1; k < kContexts; ++k) ASSERT_EQ(rknn_dup_context(&ctxs[0], &ctxs[k]), RKNN_SUCC);
  for (rknn_context ctx : ctxs) ASSERT_EQ(rknn_set_core_mask(ctx, RKNN_NPU_CORE_0_1_2), RKNN_SUCC);

  std::atomic<int> ready{0}, mismatches{0}, api_errors{0};
  std::vector<std::thread> clients;
  for (int k = 0; k < kContexts; ++k)
    clients.emplace_back([&, k] {
      std::vector<float> y(want[0].size());
      // Start together, so the contexts' runs overlap from the first one.
      ready.fetch_add(1);
      while (ready.load() < kContexts) std::this_thread::yield();
      // Each client starts at another input: at any time the contexts run different data.
      for (size_t i = 0; i < kRounds * inputs.size(); ++i) {
        const size_t which = (i + static_cast<size_t>(k)) % inputs.size();
        if (infer(ctxs[k], inputs[which], &y) != RKNN_SUCC) ++api_errors;
        else if (std::memcmp(y.data(), want[which].data(), y.size() * sizeof(float)) != 0) ++mismatches;
      }
    });
  for (std::thread& t : clients) t.join();
  for (rknn_context ctx : ctxs) EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
  EXPECT_EQ(api_errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0) << "of " << kContexts * kRounds * inputs.size() << " threaded runs";
}

INSTANTIATE_TEST_SUITE_P(Models, ThreadedContexts,
                         ::testing::Values(Case{"mobilenet_v2_qdq", "mobilenet_v2", "mobilenet_v2_qdq.out.f32"},
                                           Case{"resnet18_qdq", "resnet18", "resnet18_qdq.out.f32"},
                                           Case{"efficientnet_b0", "", "efficientnet_b0.out.f32"}),
                         [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace orknn
