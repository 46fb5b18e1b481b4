// A hybrid Mamba + MoE model (Nemotron 3 Nano: 23 Mamba-2, 23 MoE, 6 attention layers) runs end to
// end with expert parallelism: its 'E' layers send the expert all-to-all, its model FLOPs are its
// layers' own, and ep = 8 holds fewer parameters per GPU than ep = 1.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run.h"
#include "scenarios/loader.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;

namespace {

// The layout of Megatron-Bridge's Nemotron 3 Nano H100 rows (FP8, TP 1, EP 8, micro-batch 1 on
// 16 GPUs, bf16 gradient reduction as NeMo does for FP8), with a smaller global batch to keep the test short.
std::string nano_scenario(int ep) {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"nemotron-3-nano-30b-a3b\"\n"
         "[parallelism]\ntp = 1\npp = 1\ndp = 16\nep = " +
         std::to_string(ep) +
         "\ndistributed_optimizer = true\n[training]\nglobal_batch = 32\nmicro_batch = 1\nprecision = \"fp8\"\ngrad_dtype = \"bf16\"\n"
         "recompute = \"none\"\niterations = 1\n";
}

}  // namespace

TEST_CASE("analysis::run_scenario: Nemotron 3 Nano (Mamba-2 + MoE layers) runs end to end with ep = 8") {
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(nano_scenario(8), "nano.toml");
  const analysis::RunReport r = analysis::run_scenario(spec, analysis::RunOptions{});
  REQUIRE(r.memory.fits);
  const double t = r.iteration.iteration_time_s;
  INFO("iteration ", t, " s");
  CHECK(t > 0.0);
  // The 23 'E' layers send each token's hidden state to its 6 experts and back: the all-to-all
  // moves bytes and costs time.
  CHECK(r.iteration.ep_bytes_per_gpu > 0.0);
  // Model FLOPs are the hybrid's own layers (about 6 x 3.2 B non-embedding active parameters per
  // token plus the attention and the scan), far below 6 x 31.6 B total.
  const double flops = workloads::model_flops_per_iteration(spec.model, 32).value;
  const double tokens = 32.0 * spec.model.seq_len;
  CHECK(flops / tokens > 6 * 3.0e9);
  CHECK(flops / tokens < 6 * 6.0e9);
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu < 1.0);
  // ep = 1 keeps all 128 experts of every 'E' layer on each GPU: more memory than ep = 8.
  const analysis::RunReport whole =
      analysis::run_scenario(scenarios::parse_scenario(nano_scenario(1), "nano.toml"), analysis::RunOptions{});
  CHECK(whole.memory.required > r.memory.required + 20e9);
}
