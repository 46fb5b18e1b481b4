// DeepSpeed 2021 ZeRO-3 (workloads/training/deepspeed_zero3_2021.h): which tensors a GPT layer
// gathers and reduces, and that a call's host work grows with the ranks of the group.
#include <doctest/doctest.h>

#include "workloads/training/deepspeed_zero3_2021.h"

using namespace clustersim::workloads;

namespace {

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.seq_len = 2048;
  m.vocab = 51200;
  return m;
}

}  // namespace

TEST_CASE("workloads::deepspeed_layer_tensors: a GELU layer gathers its 4 weights and reduces 12 tensors") {
  const LayerTensors t = deepspeed_layer_tensors(gpt3_175b(), 1);
  const double h2 = 12288.0 * 12288.0;
  REQUIRE(t.gathered.size() == 4);
  CHECK(t.gathered[0] == doctest::Approx(3 * h2));  // QKV
  CHECK(t.gathered[1] == doctest::Approx(h2));      // attention output
  CHECK(t.gathered[2] == doctest::Approx(4 * h2));  // MLP up
  CHECK(t.gathered[3] == doctest::Approx(4 * h2));  // MLP down
  CHECK(t.reduced == 12);                           // + 4 biases and 2 LayerNorms' weight and bias
}

TEST_CASE("workloads::deepspeed_zero3_2021_layer: host work per rank dominates a wide group, recompute gathers again") {
  const ComputeConstants k;
  const LayerTensors t = deepspeed_layer_tensors(gpt3_175b(), 1);
  const double gather = 0.025, scatter = 0.025;  // NCCL time of the whole layer's collectives
  const DeepSpeedZero3Cost narrow = deepspeed_zero3_2021_layer(t, 384, gather, scatter, true, k);
  const DeepSpeedZero3Cost wide = deepspeed_zero3_2021_layer(t, 1536, gather, scatter, true, k);
  // 1,536 ranks: each weight's call costs the host 2 x 1536 x host_launch_us, over its NCCL time.
  const double us = 1e-6;
  const double per_call = k.get("launch_blocking_sync_us") * us + k.get("torch_distributed_call_us") * us +
                          2 * 1536 * k.get("host_launch_us") * us;
  CHECK(wide.forward_gather == doctest::Approx(4 * per_call));
  CHECK(wide.reduce_scatter == doctest::Approx(12 * (k.get("torch_distributed_call_us") * us +
                                                     2 * 1536 * k.get("host_launch_us") * us)));
  CHECK(wide.forward_gather > narrow.forward_gather);
  // Recompute: the recomputed forward gathers all 4; the backward keeps the MLP's two (the weights
  // used between their two uses, 4h^2 = 0.6e9, are under stage3_max_reuse_distance 1e9).
  CHECK(wide.backward_gather == doctest::Approx(wide.forward_gather + 2 * per_call));
  const DeepSpeedZero3Cost no_recompute = deepspeed_zero3_2021_layer(t, 1536, gather, scatter, false, k);
  CHECK(no_recompute.backward_gather == doctest::Approx(wide.forward_gather));
  // One rank: nothing to gather.
  CHECK(deepspeed_zero3_2021_layer(t, 1, gather, scatter, true, k).forward_gather == 0.0);
}
