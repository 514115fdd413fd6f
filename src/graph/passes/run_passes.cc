// The pass driver: the fixed order documented in passes.h and docs/convert.md.
#include "common/log.h"
#include "graph/passes/passes.h"

namespace orknn {

Status run_graph_passes(Graph& g, const PassOptions& opts, std::vector<PassStat>* stats) {
  using PassFn = Status (*)(Graph&, int*);
  struct Step {
    const char* name;
    PassFn fn;
    bool run;
  };
  const Step steps[] = {
      {"fold_constants", &fold_constants, true},
      {"remove_noop_nodes", &remove_noop_nodes, opts.fusion},
      {"fold_batchnorm_into_conv", &fold_batchnorm_into_conv, opts.fusion},
      {"fold_mul_add_into_conv", &fold_mul_add_into_conv, opts.fusion},
      {"fuse_layernorm", &fuse_layernorm, opts.fusion},
      {"fuse_hardswish", &fuse_hardswish, opts.fusion},
      {"fuse_conv_add", &fuse_conv_add, opts.fusion && opts.fuse_residual},
      {"fuse_conv_activation", &fuse_conv_activation, opts.fusion},
      {"rewrite_channel_shuffle", &rewrite_channel_shuffle, opts.fusion},
      {"dead_code", &remove_dead_code, true},
      {"round_weights_fp16", &round_weights_fp16, opts.precision == FloatPrecision::kFp16},
  };
  for (const Step& s : steps) {
    if (!s.run) continue;
    int changes = 0;
    Status st = s.fn(g, &changes);
    if (!st.ok()) return Status(st.code(), strfmt("pass %s: %s", s.name, st.message().c_str()));
    ORKNN_LOGI("pass %s: %d change(s)", s.name, changes);
    if (stats) stats->push_back({s.name, changes});
  }
  return Status::Ok();
}

}  // namespace orknn
