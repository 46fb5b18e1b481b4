// The Megatron-Bridge rows whose release preset sets cuda_graph_impl "transformer_engine" carry its
// cuda_graph_scope (analysis/modern_row_recipes.cpp cuda_graph_scope_of); the others, and the
// full-iteration rows, carry none.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using namespace clustersim::workloads;

namespace {

unsigned scope_at(int line) {
  return clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", line)).training.cuda_graph_modules;
}

constexpr unsigned kAttnMoe = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
constexpr unsigned kMoeOnly = kGraphMoeRouter | kGraphMoePreprocess;
constexpr unsigned kHybridMoe = kAttnMoe | kGraphMamba;

}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: Megatron-Bridge rows carry their preset's per-layer CUDA graph scope") {
  CHECK(scope_at(432) == kAttnMoe);   // DeepSeek-V3 GB200 MXFP8 26.02: GB200_V1
  CHECK(scope_at(86) == kAttnMoe);    // DeepSeek-V3 B300 MXFP8 26.06: B300_FP8_MX_V2
  CHECK(scope_at(438) == kAttnMoe);   // GPT-OSS-120B GB300 BF16 26.02: GB300_BF16_V1
  CHECK(scope_at(286) == kMoeOnly);   // Qwen3-30B-A3B GB300 MXFP8 26.04
  CHECK(scope_at(454) == kMoeOnly);   // Qwen3-30B-A3B B200 MXFP8 26.02 (v0.3.0)
  CHECK(scope_at(380) == kAttnMoe);   // ... 26.02.01 (v0.3.1 adds attn)
  CHECK(scope_at(108) == kHybridMoe); // Nemotron 3 Nano GB300 MXFP8 26.06
  CHECK(scope_at(114) == kGraphMamba);  // Nemotron 3 Nano H100 FP8 26.06: mamba alone
  CHECK(scope_at(318) == kHybridMoe); // Nemotron 3 Super B200 NVFP4 26.04
  CHECK(scope_at(32) == kHybridMoe);  // Nemotron 3 Super GB200 NVFP4 26.08 (perf_recipes)
  CHECK(scope_at(128) == kGraphMlp);  // Llama3-70B SFT GB300 FP8 26.06
  CHECK(scope_at(144) == kGraphMlp);  // Llama3-70B LoRA GB200 MXFP8 26.06
  CHECK(scope_at(24) == kHybridMoe);  // Nemotron 3.5 Lightning GB200 MXFP8 26.08 (Nano's GB200 builder)
}

TEST_CASE("analysis::scenario_for_modern_row: presets without per-layer graphs, and full-iteration rows, carry no scope") {
  // DeepSeek-V3 GB300 26.04.01 (GB300_V1: cuda_graph_scope [] and no impl), GPT-OSS-120B B200 BF16,
  // Qwen3-30B-A3B H100 FP8, Qwen3-235B-A22B B300 MXFP8 26.04, Nemotron 3 Super B200 MXFP8,
  // Kimi-K2 GB300, Llama3-70B LoRA H100.
  for (int line : {176, 444, 294, 300, 326, 328, 146}) {
    CAPTURE(line);
    CHECK(scope_at(line) == 0u);
  }
  // The full-iteration MXFP8 recipes: cuda_graphs, no per-layer scope.
  for (int line : {2, 4, 38}) {
    CAPTURE(line);
    CHECK(scope_at(line) == 0u);
    CHECK(clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", line)).training.cuda_graphs);
  }
}
