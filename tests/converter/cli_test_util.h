// Shared by the command-line tests (cli_test.cc, quantize_cli_test.cc, inspect_cli_test.cc): a
// fixture that runs a tool built next to the tests inside a scratch directory of its own, loading
// a written model back, and writing float32 .npy inputs (testutil/npy.h).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "model/model_io.h"
#include "testutil/npy.h"

namespace orknn::test {

// Runs a tool (rknn_convert, rknn_inspect) from ORKNN_BINARY_DIR in the scratch directory dir_.
class ToolTest : public ::testing::Test {
 protected:
  // For SetUp: false when the tool is not built (the caller skips the test); else makes dir_,
  // <tmp>/orknn_<tag>_<pid>.
  bool use_tool(const std::string& tool_name, const std::string& tag) {
    tool_ = std::filesystem::path(ORKNN_BINARY_DIR) / tool_name;
    if (!std::filesystem::exists(tool_)) return false;
    dir_ = std::filesystem::temp_directory_path() / ("orknn_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    return true;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Runs `<tool> <args>`; *out (if given) gets its stdout and stderr. Returns the exit status, -1
  // when the tool did not exit normally.
  int run(const std::string& args, std::string* out = nullptr) {
    const std::filesystem::path log = dir_ / "out.txt";
    const std::string cmd = ORKNN_TOOL_LAUNCHER + tool_.string() + " " + args + " > " + log.string() + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream f(log);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (out) *out = text;
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  // Loads a written model; a test failure (and *ok false, if given) when it does not load.
  Graph load(const std::filesystem::path& p, bool* ok = nullptr) {
    std::ifstream f(p, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::shared_ptr<uint8_t> buf(static_cast<uint8_t*>(::operator new[](bytes.size() + 1, std::align_val_t(64))),
                                 [](uint8_t* q) { ::operator delete[](q, std::align_val_t(64)); });
    std::memcpy(buf.get(), bytes.data(), bytes.size());
    Graph g;
    Status st = load_model(buf, buf.get(), bytes.size(), &g);
    EXPECT_TRUE(st.ok()) << st.message();
    if (ok) *ok = st.ok();
    return g;
  }

  std::filesystem::path tool_, dir_;
};

}  // namespace orknn::test
