// Issue 5, target 3: no heap allocation inside rknn_run. Real networks (mobilenet_v2 in fp16 and
// resnet18 quantized from its QDQ file, converted in-process) run through the public C API of
// librknnrt.so; after warm-up frames, the heap allocations made by the process while the measured
// calls execute (on any thread, OpenMP workers included) are counted:
//   - rknn_run alone (inputs set once, before);
//   - the copy path around it: rknn_inputs_set + rknn_outputs_get into preallocated buffers
//     (is_prealloc) + rknn_outputs_release;
//   - the zero-copy path: inputs and outputs bound with rknn_create_mem + rknn_set_io_mem, a frame
//     being rknn_run alone;
// each with 1 and with 2 threads (OPENRKNN_NUM_THREADS, read by rknn_init). Allocations made by our
// code and by libgomp must be zero; those made inside oneDNN are printed and must not grow (see
// expect_no_allocations, and docs/benchmarks.md "Load time, memory and allocations").
// CountsADeliberateAllocation shows that the counter sees allocations made through each family
// (malloc, calloc, realloc, posix_memalign, aligned_alloc, operator new, aligned new), also from a
// thread other than the one that switched counting on, and attributes oneDNN's and libgomp's;
// RuntimeAllocatedOutputIsCounted, that it sees one librknnrt.so makes (rknn_outputs_get without
// is_prealloc).
//
// How allocations are counted: this executable defines malloc, free, calloc, realloc, memalign,
// posix_memalign, aligned_alloc, valloc and pvalloc and forwards each to glibc's __libc_* entry
// points. Symbols of the executable come first in the dynamic linker's lookup order, so every call
// from librknnrt.so, oneDNN, libgomp and libstdc++ reaches these definitions: no LD_PRELOAD and no
// __malloc_hook (removed in glibc 2.34). operator new/delete (every variant) are defined here too
// and forward to __libc_malloc / __libc_memalign directly, so a new is counted once whether or not
// the C++ runtime's own operator new would have called malloc. Counting is one atomic flag checked
// in each function: off (a load and a branch) outside the measured windows; inside them each
// allocation also takes a backtrace to attribute it. Sanitizer builds
// replace the allocator themselves, so there the hooks are not compiled and the tests skip.
// Setting ORKNN_ALLOC_BACKTRACE=1 prints a backtrace of each counted allocation, to find it.
#include <execinfo.h>
#include <link.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#ifdef ORKNN_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include "converter/convert.h"
#include "model/model_io.h"
#include "models/model_test_util.h"
#include "rknn_api.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__SANITIZE_MEMORY__)
#define ORKNN_ALLOC_HOOKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ORKNN_ALLOC_HOOKS 0
#endif
#endif
#ifndef ORKNN_ALLOC_HOOKS
#define ORKNN_ALLOC_HOOKS 1
#endif

namespace {

// Who made an allocation, from the return addresses on its call stack: oneDNN's own code (any frame
// in libdnnl), else libgomp (a frame in libgomp: the team of a parallel region), else anything else
// (our code, the C++ runtime on our behalf, ...).
enum Source { kOurs = 0, kOneDnn = 1, kOpenMp = 2, kSources = 3 };

struct CodeRange {
  uintptr_t lo = 0, hi = 0;
  bool contains(uintptr_t a) const { return a >= lo && a < hi; }
};
CodeRange g_onednn_code, g_gomp_code;  // executable segments, found before counting starts

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations[kSources];
bool g_backtrace = false;               // ORKNN_ALLOC_BACKTRACE, read before counting starts
thread_local bool t_in_hook = false;    // backtrace() may allocate: do not count or recurse

int find_code_range(struct dl_phdr_info* info, size_t, void*) {
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  CodeRange* r = std::strstr(name, "libdnnl") ? &g_onednn_code : std::strstr(name, "libgomp") ? &g_gomp_code : nullptr;
  if (!r) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (r->hi == 0 || lo < r->lo) r->lo = lo;
    if (hi > r->hi) r->hi = hi;
  }
  return 0;
}

void note_allocation(size_t bytes) {
  if (!g_counting.load(std::memory_order_relaxed) || t_in_hook) return;
  t_in_hook = true;
  void* frames[64];
  const int n = backtrace(frames, 64);
  Source source = kOurs;
  for (int i = 0; i < n && source != kOneDnn; ++i) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(frames[i]);
    if (g_onednn_code.contains(a)) source = kOneDnn;
    else if (g_gomp_code.contains(a)) source = kOpenMp;
  }
  g_allocations[source].fetch_add(1, std::memory_order_relaxed);
  if (g_backtrace) {
    static const char* const kNames[] = {"ours", "oneDNN", "libgomp"};
    char line[96];
    const int len = std::snprintf(line, sizeof(line), "allocation of %zu bytes (%s):\n", bytes, kNames[source]);
    if (len > 0) (void)!write(2, line, static_cast<size_t>(len));
    backtrace_symbols_fd(frames, n, 2);
  }
  t_in_hook = false;
}

struct Counts {
  long ours = 0, onednn = 0, openmp = 0;
  long total() const { return ours + onednn + openmp; }
};

// Counts while alive; stop() ends counting and returns the counts.
class AllocationCounter {
 public:
  AllocationCounter() {
    if (g_onednn_code.hi == 0 && g_gomp_code.hi == 0) dl_iterate_phdr(find_code_range, nullptr);
    void* warm[4];
    backtrace(warm, 4);  // its first call loads the unwinder (allocates): not inside the window
    for (auto& c : g_allocations) c.store(0);
    g_counting.store(true);
  }
  ~AllocationCounter() { g_counting.store(false); }
  Counts stop() {
    g_counting.store(false);
    return Counts{g_allocations[kOurs].load(), g_allocations[kOneDnn].load(), g_allocations[kOpenMp].load()};
  }
};

}  // namespace

#if ORKNN_ALLOC_HOOKS
extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);

void* malloc(size_t n) {
  note_allocation(n);
  return __libc_malloc(n);
}
void free(void* p) { __libc_free(p); }
void* calloc(size_t n, size_t size) {
  note_allocation(n * size);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  note_allocation(n);
  return __libc_realloc(p, n);
}
void* memalign(size_t align, size_t n) {
  note_allocation(n);
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  note_allocation(n);
  void* p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void* aligned_alloc(size_t align, size_t n) {
  note_allocation(n);
  return __libc_memalign(align, n);
}
void* valloc(size_t n) {
  note_allocation(n);
  return __libc_valloc(n);
}
void* pvalloc(size_t n) {
  note_allocation(n);
  return __libc_pvalloc(n);
}
}  // extern "C"

namespace {
void* counted_new(size_t n) {
  note_allocation(n);
  void* p = __libc_malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void* counted_new(size_t n, std::align_val_t a) {
  note_allocation(n);
  void* p = __libc_memalign(static_cast<size_t>(a), n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void* counted_new_nothrow(size_t n) noexcept {
  note_allocation(n);
  return __libc_malloc(n ? n : 1);
}
void* counted_new_nothrow(size_t n, std::align_val_t a) noexcept {
  note_allocation(n);
  return __libc_memalign(static_cast<size_t>(a), n ? n : 1);
}
}  // namespace

void* operator new(size_t n) { return counted_new(n); }
void* operator new[](size_t n) { return counted_new(n); }
void* operator new(size_t n, std::align_val_t a) { return counted_new(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return counted_new(n, a); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_new_nothrow(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_new_nothrow(n); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_new_nothrow(n, a); }
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_new_nothrow(n, a); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
#endif  // ORKNN_ALLOC_HOOKS

namespace orknn {
namespace {

using namespace model_test;

#define SKIP_WITHOUT_HOOKS() \
  if (!ORKNN_ALLOC_HOOKS) GTEST_SKIP() << "allocation hooks are not compiled in sanitizer builds"

// A value the optimiser cannot prove unused, so that deliberate allocations below stay.
void* volatile g_sink;

TEST(RunAllocations, CountsADeliberateAllocation) {
  SKIP_WITHOUT_HOOKS();
  g_backtrace = false;
  struct Case {
    const char* what;
    void (*alloc_and_free)();
  };
  const Case cases[] = {
      {"malloc", [] { g_sink = std::malloc(24); std::free(g_sink); }},
      {"calloc", [] { g_sink = std::calloc(3, 8); std::free(g_sink); }},
      {"realloc", [] { g_sink = std::realloc(nullptr, 40); std::free(g_sink); }},
      {"posix_memalign", [] { void* p = nullptr; if (posix_memalign(&p, 64, 100) == 0) g_sink = p; std::free(p); }},
      {"aligned_alloc", [] { g_sink = aligned_alloc(64, 128); std::free(g_sink); }},
      {"operator new", [] { int* p = new int(7); g_sink = p; delete p; }},
      {"aligned new", [] { struct alignas(64) A { char c[64]; }; A* p = new A(); g_sink = p; delete p; }},
      {"std::vector", [] { std::vector<float> v(10); g_sink = v.data(); }},
  };
  for (const Case& c : cases) {
    AllocationCounter counter;
    c.alloc_and_free();
    const Counts n = counter.stop();
    EXPECT_EQ(n.ours, 1) << c.what;
    EXPECT_EQ(n.total(), 1) << c.what;
  }
  // An allocation on another thread (as an OpenMP worker would make) is counted too. The thread is
  // started before counting: creating it allocates.
  std::atomic<int> go{0};
  std::thread worker([&] {
    while (go.load() == 0) std::this_thread::yield();
    g_sink = std::malloc(16);
    std::free(g_sink);
    go.store(2);
  });
  {
    AllocationCounter counter;
    go.store(1);
    while (go.load() != 2) std::this_thread::yield();
    EXPECT_EQ(counter.stop().ours, 1) << "malloc on another thread";
  }
  worker.join();
  // Attribution: a oneDNN call that allocates (the C API creating a memory object that owns its
  // buffer) counts as oneDNN; a single-thread OpenMP parallel region (libgomp allocates its team)
  // as OpenMP. The first region of a thread also sets up its thread pool: done before counting.
#ifdef ORKNN_WITH_ONEDNN
  {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::memory::desc md({16}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    AllocationCounter counter;
    dnnl_memory_t m = nullptr;
    ASSERT_EQ(dnnl_memory_create(&m, &md.data, eng.get(), DNNL_MEMORY_ALLOCATE), dnnl_success);
    dnnl_memory_destroy(m);
    const Counts n = counter.stop();
    EXPECT_GT(n.onednn, 0);
    EXPECT_EQ(n.ours, 0);
  }
#endif
  {
    int one = 1;
#pragma omp parallel num_threads(one)
    { g_sink = &one; }
    AllocationCounter counter;
#pragma omp parallel num_threads(one)
    { g_sink = &one; }
    const Counts n = counter.stop();
    EXPECT_EQ(n.openmp, 1) << "libgomp allocates the team of every single-thread region";
    EXPECT_EQ(n.ours, 0);
  }
  // And nothing is counted when nothing allocates.
  AllocationCounter counter;
  g_sink = &counter;
  EXPECT_EQ(counter.stop().total(), 0);
}

const char kPrepare[] = ": run scripts/prepare_test_models.sh";

// Converted models, shared between the tests of this file.
const std::vector<uint8_t>* converted(const std::string& onnx_name) {
  static std::map<std::string, std::vector<uint8_t>> cache;
  auto it = cache.find(onnx_name);
  if (it != cache.end()) return &it->second;
  const std::string onnx = models_dir() + "/" + onnx_name + ".onnx";
  EXPECT_TRUE(file_exists(onnx)) << onnx << " is missing" << kPrepare;
  if (!file_exists(onnx)) return nullptr;
  Graph graph;
  Status st = convert_onnx(onnx, ConvertOptions(), &graph);  // fp16 storage; a QDQ file gives int8
  EXPECT_TRUE(st.ok()) << "convert_onnx(" << onnx << "): " << st.message();
  if (!st.ok()) return nullptr;
  std::vector<uint8_t> bytes;
  st = write_model(graph, &bytes);
  EXPECT_TRUE(st.ok()) << "write_model: " << st.message();
  if (!st.ok()) return nullptr;
  return &(cache[onnx_name] = std::move(bytes));
}

struct Params {
  const char* onnx;  // file in the models directory, without .onnx
  int threads;
  // The host taken to be busy (OPENRKNN_BUSY_HOST=1: runs on the context's one-thread executor,
  // made during the warm-up frames), else idle (=0), whatever the machine running the test does.
  bool busy = false;
};

void PrintTo(const Params& p, std::ostream* os) {
  *os << p.onnx << " at " << p.threads << " thread(s)" << (p.busy ? " on a busy host" : "");
}

// What is asserted about a frame after warm-up:
//   - no allocation outside oneDNN and libgomp: strict;
//   - oneDNN 2.6's allocations, made by dnnl_primitive_execute itself (its argument map, a
//     std::unordered_map built per call, and std::function copies in its parallel loops): a library
//     we do not control, so they are counted and printed, and must only stay the same every frame;
//   - libgomp's: strict too. GOMP_parallel allocates a team for every region that runs on ONE
//     thread (libgomp frees single-thread teams at the region's end instead of caching them) and for
//     a region whose thread count differs from the previous one's; our kernels split their work
//     with kernels/parallel.h, which calls the body directly instead of entering a one-thread region.

std::string param_name(const testing::TestParamInfo<Params>& p) {
  return std::string(p.param.onnx) + "_" + std::to_string(p.param.threads) + "threads" + (p.param.busy ? "_busy" : "");
}

class RunAllocations : public testing::TestWithParam<Params> {
 protected:
  void SetUp() override {
    if (!ORKNN_ALLOC_HOOKS) GTEST_SKIP() << "allocation hooks are not compiled in sanitizer builds";
    g_backtrace = std::getenv("ORKNN_ALLOC_BACKTRACE") && std::atoi(std::getenv("ORKNN_ALLOC_BACKTRACE")) != 0;
    const std::vector<uint8_t>* bytes = converted(GetParam().onnx);
    ASSERT_NE(bytes, nullptr);
    model_ = *bytes;
    busy_ = std::make_unique<SetEnv>("OPENRKNN_BUSY_HOST", GetParam().busy ? "1" : "0");  // read by every run
    // rknn_init reads both: the threads asked, used even for a model of few MACs.
    const SetEnv threads("OPENRKNN_NUM_THREADS", std::to_string(GetParam().threads).c_str());
    const SetEnv every_model("OPENRKNN_MIN_THREADED_MACS", "0");
    ASSERT_EQ(rknn_init(&ctx_, model_.data(), uint32_t(model_.size()), 0, nullptr), RKNN_SUCC);
    rknn_input_output_num io{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
    ASSERT_EQ(io.n_input, 1u);
    ASSERT_EQ(io.n_output, 1u);
    std::memset(&in_attr_, 0, sizeof(in_attr_));
    std::memset(&out_attr_, 0, sizeof(out_attr_));
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &in_attr_, sizeof(in_attr_)), RKNN_SUCC);
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_OUTPUT_ATTR, &out_attr_, sizeof(out_attr_)), RKNN_SUCC);
    input_.resize(in_attr_.n_elems);
    for (size_t i = 0; i < input_.size(); ++i) input_[i] = float((i * 7919) % 1000) / 1000.0f;
    output_.resize(out_attr_.n_elems);
  }
  void TearDown() override {
    g_backtrace = false;
    if (ctx_) EXPECT_EQ(rknn_destroy(ctx_), RKNN_SUCC);
    busy_.reset();
  }

  // rknn_inputs_set of the float32 NCHW input.
  int set_input() {
    rknn_input in;
    std::memset(&in, 0, sizeof(in));
    in.index = 0;
    in.buf = input_.data();
    in.size = uint32_t(input_.size() * sizeof(float));
    in.type = RKNN_TENSOR_FLOAT32;
    in.fmt = RKNN_TENSOR_NCHW;
    return rknn_inputs_set(ctx_, 1, &in);
  }
  // rknn_outputs_get (float32, into output_) + rknn_outputs_release.
  int get_output() {
    rknn_output out;
    std::memset(&out, 0, sizeof(out));
    out.want_float = 1;
    out.is_prealloc = 1;
    out.buf = output_.data();
    out.size = uint32_t(output_.size() * sizeof(float));
    int rc = rknn_outputs_get(ctx_, 1, &out, nullptr);
    if (rc != RKNN_SUCC) return rc;
    return rknn_outputs_release(ctx_, 1, &out);
  }

  // Runs `frame` (returning an RKNN code) kMeasured times, counting allocations during each, and
  // checks them (see "What is asserted" above).
  template <typename Frame>
  void expect_no_allocations(const char* what, Frame&& frame) {
    std::vector<Counts> counts;
    for (int i = 0; i < kMeasured; ++i) {
      int rc;
      Counts n;
      {
        AllocationCounter counter;
        rc = frame();
        n = counter.stop();
      }
      ASSERT_EQ(rc, RKNN_SUCC) << what;
      counts.push_back(n);
      EXPECT_EQ(n.ours, 0) << what << " allocated " << n.ours << " times outside oneDNN/libgomp (frame " << i
                           << " after warm-up); rerun with ORKNN_ALLOC_BACKTRACE=1 to see where";
      EXPECT_EQ(n.openmp, 0) << what << ": " << n.openmp
                             << " OpenMP team allocations (one-thread regions, or a changed thread count); rerun with "
                                "ORKNN_ALLOC_BACKTRACE=1 to see where";
      if (i > 0) {
        EXPECT_EQ(n.onednn, counts[0].onednn) << what << ": oneDNN's allocations must not grow from frame to frame";
      }
    }
    std::printf("[  metrics ] %s, %s, %d thread(s): allocations per frame: ours %ld, inside oneDNN %ld, "
                "libgomp teams %ld\n", GetParam().onnx, what, GetParam().threads, counts.back().ours,
                counts.back().onednn, counts.back().openmp);
  }

  static constexpr int kWarmup = 2;
  static constexpr int kMeasured = 3;

  std::vector<uint8_t> model_;
  std::unique_ptr<SetEnv> busy_;
  rknn_context ctx_ = 0;
  rknn_tensor_attr in_attr_, out_attr_;
  std::vector<float> input_, output_;
};

TEST_P(RunAllocations, RunAloneAllocatesNothing) {
  ASSERT_EQ(set_input(), RKNN_SUCC);
  for (int i = 0; i < kWarmup; ++i) ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
  expect_no_allocations("rknn_run", [&] { return rknn_run(ctx_, nullptr); });
  ASSERT_EQ(get_output(), RKNN_SUCC);
}

TEST_P(RunAllocations, CopyPathWithPreallocatedOutputsAllocatesNothing) {
  for (int i = 0; i < kWarmup; ++i) {
    ASSERT_EQ(set_input(), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    ASSERT_EQ(get_output(), RKNN_SUCC);
  }
  const std::vector<float> warm_output = output_;
  expect_no_allocations("inputs_set+run+outputs_get(prealloc)+outputs_release", [&] {
    int rc = set_input();
    if (rc == RKNN_SUCC) rc = rknn_run(ctx_, nullptr);
    if (rc == RKNN_SUCC) rc = get_output();
    return rc;
  });
  EXPECT_EQ(output_, warm_output) << "the same input must give the same output every frame";
}

TEST_P(RunAllocations, ZeroCopyRunAllocatesNothing) {
  rknn_tensor_mem* in_mem = rknn_create_mem(ctx_, uint32_t(input_.size() * sizeof(float)));
  rknn_tensor_mem* out_mem = rknn_create_mem(ctx_, uint32_t(output_.size() * sizeof(float)));
  ASSERT_NE(in_mem, nullptr);
  ASSERT_NE(out_mem, nullptr);
  struct Release {
    rknn_context ctx;
    rknn_tensor_mem* a;
    rknn_tensor_mem* b;
    ~Release() {
      rknn_destroy_mem(ctx, a);
      rknn_destroy_mem(ctx, b);
    }
  } release{ctx_, in_mem, out_mem};
  std::memcpy(in_mem->virt_addr, input_.data(), input_.size() * sizeof(float));
  rknn_tensor_attr in = in_attr_;
  in.type = RKNN_TENSOR_FLOAT32;
  in.fmt = RKNN_TENSOR_NCHW;
  in.pass_through = 0;
  rknn_tensor_attr out = out_attr_;
  out.type = RKNN_TENSOR_FLOAT32;
  ASSERT_EQ(rknn_set_io_mem(ctx_, in_mem, &in), RKNN_SUCC);
  ASSERT_EQ(rknn_set_io_mem(ctx_, out_mem, &out), RKNN_SUCC);
  for (int i = 0; i < kWarmup; ++i) ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
  const float* got = static_cast<const float*>(out_mem->virt_addr);
  const std::vector<float> warm_output(got, got + output_.size());
  expect_no_allocations("zero-copy rknn_run", [&] { return rknn_run(ctx_, nullptr); });
  EXPECT_EQ(std::vector<float>(got, got + output_.size()), warm_output);
}

// The counter sees allocations librknnrt.so makes in our code: rknn_outputs_get without
// is_prealloc mallocs the output buffer (freed by rknn_outputs_release), which must be counted as ours.
TEST_P(RunAllocations, RuntimeAllocatedOutputIsCounted) {
  ASSERT_EQ(set_input(), RKNN_SUCC);
  ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
  rknn_output out;
  std::memset(&out, 0, sizeof(out));
  out.want_float = 1;
  Counts n;
  {
    AllocationCounter counter;
    ASSERT_EQ(rknn_outputs_get(ctx_, 1, &out, nullptr), RKNN_SUCC);
    n = counter.stop();
  }
  EXPECT_GE(n.ours, 1);
  EXPECT_EQ(n.onednn + n.openmp, 0);
  EXPECT_EQ(rknn_outputs_release(ctx_, 1, &out), RKNN_SUCC);
}

INSTANTIATE_TEST_SUITE_P(Models, RunAllocations,
                         testing::Values(Params{"mobilenet_v2", 1}, Params{"mobilenet_v2", 2},
                                         Params{"resnet18_qdq", 1}, Params{"resnet18_qdq", 2},
                                         Params{"mobilenet_v2", 2, true}, Params{"resnet18_qdq", 2, true},
                                         // Concat / Transpose / Slice copies on threads, views,
                                         // x86_pw_f32, x86_stem_f32, the head's ReduceMean on x86_gap_f32.
                                         Params{"shufflenet_v2_x1_0", 2},
                                         // x86_recurrent_f32 (bidirectional LSTM, GRU): its scratch.
                                         Params{"crnn_lstm", 1}, Params{"crnn_lstm", 2}, Params{"gru", 1}),
                         param_name);

}  // namespace
}  // namespace orknn
