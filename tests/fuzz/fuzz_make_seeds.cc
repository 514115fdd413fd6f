// Writes the seed models of fuzz_model_loader into the directory given as argv[1]
// (tests/fuzz/corpus/fuzz_model_loader/ in the tree; regenerate after a format change).
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const struct { const char* name; std::vector<uint8_t> bytes; } seeds[] = {
      {"quantized_relu.rknn", orknn_fuzz::quantized_relu_model()},
      {"float_add.rknn", orknn_fuzz::float_add_model()},
      {"float_conv_relu.rknn", orknn_fuzz::float_conv_relu_model()},
  };
  for (const auto& s : seeds) {
    const std::string path = dir + "/" + s.name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(s.bytes.data(), 1, s.bytes.size(), f) != s.bytes.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    std::printf("%s: %zu bytes\n", path.c_str(), s.bytes.size());
  }
  return 0;
}
