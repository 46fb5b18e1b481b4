// GPT-OSS's eager kernels under Megatron-Bridge: the routed experts' output bias
// (workloads/model/expert_bias.h: TEGroupedMLP adds the second linear's bias weighted by the router
// probability in a per-expert loop) and YaRN RoPE run unfused (workloads/model/unfused_rope.h).
// The op's numbers put in, the preset that turns it on, and that a model without expert biases
// builds the same layer as before.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/expert_bias.h"
#include "workloads/model/unfused_rope.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

TEST_CASE("workloads::layer_ops: GPT-OSS's expert output bias is charged as the eager per-expert loop") {
  const ModelSpec* preset = find_model_preset("gpt-oss-120b");
  REQUIRE(preset != nullptr);
  CHECK(preset->expert_bias);
  // ep 8: 16 local experts; 4096 tokens x top-4 = 16,384 slots x 2880 wide at 2 bytes:
  // forward 6 accesses per element, backward 8.
  const std::vector<OpCost> ops = layer_ops(*preset, shape_with_ep(8), true);
  const OpCost* bias = find_op(ops, "expert_bias");
  REQUIRE(bias != nullptr);
  const double elements = 16384.0 * 2880.0;
  CHECK(bias->fwd_bytes.value == doctest::Approx(6.0 * 2.0 * elements));
  CHECK(bias->bwd_bytes.value == doctest::Approx(8.0 * 2.0 * elements));
  CHECK(bias->fwd_flops.value == doctest::Approx(2.0 * elements));
  CHECK(bias->bwd_flops.value == doctest::Approx(4.0 * elements));
  // The loop's host work: 2 x 16 + 1 kernels and 3 framework ops forward, less the op's own kernel;
  // 4 x 16 + 1 kernels and 16 slice views backward, less the op's own.
  CHECK(bias->fwd_host_ops == doctest::Approx(35.0));
  CHECK(bias->bwd_host_ops == doctest::Approx(80.0));
  // It runs after the expert GEMMs, before the chunks are unsorted for the combine.
  std::size_t down = ops.size(), at = ops.size(), unsort = ops.size();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == "expert_down") down = i;
    if (ops[i].name == "expert_bias") at = i;
    if (ops[i].name == "moe_unsort_chunks") unsort = i;
  }
  CHECK(down < at);
  CHECK(at < unsort);

  // On an H100 the forward pass reads and writes 566 MB: at least 0.17 ms at 3.35 TB/s.
  const ComputeModel cm(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
  CHECK(cm.op_time(*bias, Pass::Forward).seconds() > 6.0 * 2.0 * elements / 3.35e12);
}

TEST_CASE("workloads::layer_ops: a model without expert biases has no expert_bias op") {
  ModelSpec m = *find_model_preset("gpt-oss-120b");
  const std::vector<OpCost> with = layer_ops(m, shape_with_ep(8), true);
  m.expert_bias = false;
  const std::vector<OpCost> without = layer_ops(m, shape_with_ep(8), true);
  CHECK(find_op(without, "expert_bias") == nullptr);
  CHECK(with.size() == without.size() + 1);
  // Every other MoE preset (Mixtral, Qwen3, DeepSeek-V3) keeps its layer: no expert biases.
  for (const char* id : {"mixtral-8x7b", "deepseek-v3"}) {
    const ModelSpec* other = find_model_preset(id);
    if (other == nullptr) continue;
    CHECK_FALSE(other->expert_bias);
  }
}

TEST_CASE("workloads::layer_ops: YaRN RoPE runs as Megatron-Core's unfused rotation, 6x the fused kernel's bytes") {
  ModelSpec m = *find_model_preset("gpt-oss-120b");
  CHECK(m.yarn_rope);
  // 4096 tokens x (64 + 8) heads x 64 wide at 2 bytes: forward and backward 12 accesses each.
  const double elements = 4096.0 * 72.0 * 64.0;
  const std::vector<OpCost> yarn = layer_ops(m, shape_with_ep(8), true);
  const OpCost* unfused = find_op(yarn, "rotary_embedding");
  REQUIRE(unfused != nullptr);
  CHECK(unfused->fwd_bytes.value == doctest::Approx(12.0 * 2.0 * elements));
  CHECK(unfused->bwd_bytes.value == doctest::Approx(12.0 * 2.0 * elements));
  CHECK(unfused->fwd_host_ops == doctest::Approx(5.0));
  m.yarn_rope = false;  // plain RoPE: Transformer Engine's fused kernel, one read and write
  const std::vector<OpCost> plain = layer_ops(m, shape_with_ep(8), true);
  const OpCost* fused = find_op(plain, "rotary_embedding");
  REQUIRE(fused != nullptr);
  CHECK(fused->fwd_bytes.value == doctest::Approx(2.0 * 2.0 * elements));
  CHECK(unfused->fwd_bytes.value == doctest::Approx(6.0 * fused->fwd_bytes.value));
}
