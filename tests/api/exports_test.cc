// Checks the dynamic symbol table of librknnrt.so: it must export exactly the functions declared
// in the three public headers, nothing less (clients would fail to link or dlsym) and nothing more
// (internal symbols would leak into every client's namespace). The expected list is typed in here
// from the API contract, independently of the headers.

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

namespace {

const std::set<std::string>& expected_functions() {
  static const std::set<std::string> names = {
      // rknn_api.h
      "rknn_init", "rknn_dup_context", "rknn_destroy", "rknn_query", "rknn_inputs_set",
      "rknn_set_batch_core_num", "rknn_set_core_mask", "rknn_run", "rknn_wait",
      "rknn_outputs_get", "rknn_outputs_release", "rknn_create_mem_from_phys",
      "rknn_create_mem_from_fd", "rknn_create_mem_from_mb_blk", "rknn_create_mem",
      "rknn_create_mem2", "rknn_destroy_mem", "rknn_set_weight_mem", "rknn_set_internal_mem",
      "rknn_set_io_mem", "rknn_set_input_shape", "rknn_set_input_shapes", "rknn_mem_sync",
      // rknn_matmul_api.h
      "rknn_matmul_create", "rknn_matmul_create_dynamic_shape", "rknn_matmul_set_io_mem",
      "rknn_matmul_set_core_mask", "rknn_matmul_set_quant_params",
      "rknn_matmul_get_quant_params", "rknn_matmul_set_dynamic_shape", "rknn_matmul_run",
      "rknn_matmul_destroy", "rknn_B_normal_layout_to_native_layout",
      // rknn_custom_op.h
      "rknn_register_custom_ops", "rknn_custom_op_get_op_attr"};
  return names;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Path of the librknnrt.so this test is linked against. dladdr() on one of its functions is the
// direct way; if the address resolves to a PLT stub in the executable (non-PIE builds), ask the
// dynamic linker for the already loaded library instead.
std::string runtime_library_path() {
  Dl_info info;
  std::memset(&info, 0, sizeof(info));
  void* fn = reinterpret_cast<void*>(&rknn_init);
  if (dladdr(fn, &info) != 0 && info.dli_fname != nullptr &&
      ends_with(info.dli_fname, "librknnrt.so")) {
    return info.dli_fname;
  }
  void* handle = dlopen("librknnrt.so", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return std::string();
  struct link_map* map = nullptr;
  std::string path;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr)
    path = map->l_name;
  dlclose(handle);
  return path;
}

struct DynamicSymbol {
  char type;  // nm's one-letter class: T/t text, W/w weak, i indirect, D/B/R/V/u data...
  std::string name;
};

// Runs `nm -D --defined-only` on `path` and parses "<address> <class> <name>[@version]" lines.
bool read_defined_dynamic_symbols(const std::string& path, std::vector<DynamicSymbol>* out,
                                  std::string* error) {
  const std::string command = "nm -D --defined-only '" + path + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *error = "popen failed for: " + command;
    return false;
  }
  std::string all_output;
  char line[4096];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    all_output += line;
    std::istringstream fields(line);
    std::string address, type, name;
    if (!(fields >> address >> type >> name) || type.size() != 1) continue;
    const size_t at = name.find('@');
    if (at != std::string::npos) name.resize(at);
    out->push_back(DynamicSymbol{type[0], name});
  }
  const int status = pclose(pipe);
  if (status != 0) {
    *error = "`" + command + "` failed (status " + std::to_string(status) + "): " + all_output;
    return false;
  }
  return true;
}

bool is_function_class(char type) {
  return type == 'T' || type == 'W' || type == 'i';
}

class ExportsTest : public ::testing::Test {
 protected:
  // nm runs once for the whole suite; every test checks the same table.
  static void SetUpTestSuite() {
    path_ = new std::string(runtime_library_path());
    symbols_ = new std::vector<DynamicSymbol>();
    error_ = new std::string();
    if (path_->empty())
      *error_ = "could not locate the loaded librknnrt.so";
    else if (read_defined_dynamic_symbols(*path_, symbols_, error_) && symbols_->empty())
      *error_ = "nm listed no symbols for " + *path_;
  }
  static void TearDownTestSuite() {
    delete path_;
    delete symbols_;
    delete error_;
  }
  void SetUp() override { ASSERT_TRUE(error_->empty()) << *error_; }

  static std::string* path_;
  static std::vector<DynamicSymbol>* symbols_;
  static std::string* error_;
};

std::string* ExportsTest::path_ = nullptr;
std::vector<DynamicSymbol>* ExportsTest::symbols_ = nullptr;
std::string* ExportsTest::error_ = nullptr;

TEST_F(ExportsTest, LibraryIsLibrknnrt) {
  EXPECT_TRUE(ends_with(*path_, "/librknnrt.so") || *path_ == "librknnrt.so") << *path_;
}

TEST_F(ExportsTest, ExportedFunctionsAreExactlyTheHeaderFunctions) {
  std::set<std::string> exported;
  for (const DynamicSymbol& s : *symbols_)
    if (is_function_class(s.type)) exported.insert(s.name);

  for (const std::string& name : expected_functions())
    EXPECT_TRUE(exported.count(name)) << "missing export: " << name;
  for (const std::string& name : exported)
    EXPECT_TRUE(expected_functions().count(name)) << "unexpected exported function: " << name;
}

TEST_F(ExportsTest, NoDataOrOtherSymbolsExported) {
  for (const DynamicSymbol& s : *symbols_) {
    if (is_function_class(s.type)) continue;
    ADD_FAILURE() << "unexpected exported symbol '" << s.name << "' of class " << s.type;
  }
}

TEST_F(ExportsTest, EveryHeaderFunctionResolvesThroughDlsym) {
  void* handle = dlopen(path_->c_str(), RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const std::string& name : expected_functions())
    EXPECT_NE(dlsym(handle, name.c_str()), nullptr) << name;
  // The plugin entry point belongs to custom-op plugins, never to the runtime itself.
  EXPECT_EQ(dlsym(handle, "get_rknn_custom_op"), nullptr);
  dlclose(handle);
}

}  // namespace
