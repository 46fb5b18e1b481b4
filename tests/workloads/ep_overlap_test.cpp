// Megatron-Core's MoE all-to-all overlaps (workloads/training/ep_overlap.h): the combined 1F1B
// layer pair on two streams, the combined schedule's order (one more warm-up forward, paired
// backwards), and the shared experts beside the all-to-alls.
#include <doctest/doctest.h>

#include <vector>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/ep_overlap.h"
#include "workloads/training/pipeline_schedule.h"

using namespace clustersim;
using namespace clustersim::workloads;

TEST_CASE("workloads::combined_layer_pair_s: the pair hides every all-to-all behind the other pass's compute") {
  const EpLayerPass f{1.0, 2.0, 1.0, 1.0};  // attention, experts, dispatch, combine
  const EpLayerPass b{2.0, 4.0, 1.0, 1.0};
  // comm:    combine_b [0,1] | dispatch_f [1,2], dispatch_b [5,6] | combine_f [7,8]
  // compute: attn_f [0,1]    | experts_b [1,5], experts_f [5,7]   | attn_b [7,9]
  CHECK(combined_layer_pair_s(f, b, 0.0) == doctest::Approx(9.0));
  CHECK(f.alone() + b.alone() == doctest::Approx(13.0));
  CHECK(combined_layer_saving_s({f, b}, 0.0) == doctest::Approx(4.0));
  // Half the SMs to the all-to-alls: each compute node runs at half rate while one is in flight.
  CHECK(combined_layer_pair_s(f, b, 0.5) == doctest::Approx(11.0));
  // Nothing to hide: the pair is the two passes' compute back to back.
  const EpLayerPass cf{1.0, 2.0, 0.0, 0.0}, cb{2.0, 4.0, 0.0, 0.0};
  CHECK(combined_layer_pair_s(cf, cb, 0.15) == doctest::Approx(9.0));
  // An all-to-all longer than the compute beside it stays partly exposed.
  const EpLayerPass slow{1.0, 1.0, 5.0, 5.0};
  CHECK(combined_layer_pair_s(slow, slow, 0.0) > 10.0);
  CHECK(combined_layer_pair_s(slow, slow, 0.0) < slow.alone() * 2);
}

TEST_CASE("workloads::pipeline_order: the combined 1F1B order runs one more warm-up forward and pairs the steady backwards") {
  // p = 1 (combined_1f1b_schedule_for_no_pipelining): F0, (F1, B0), (F2, B1), (F3, B2), B3.
  const std::vector<PipelineStep> o = pipeline_order(Schedule::OneFOneB, 1, 1, 4, 0, true);
  REQUIRE(o.size() == 8);
  CHECK((o[0].forward && o[1].forward && !o[2].forward));
  CHECK(o[2].micro_batch == 0);
  CHECK(o[2].paired);
  CHECK(o[1].micro_batch == 1);
  CHECK(!o[7].paired);  // the cool-down backward runs alone
  int paired = 0;
  for (const PipelineStep& s : o) paired += s.paired ? 1 : 0;
  CHECK(paired == 3);
  // Without the overlap nothing is paired and the order is plain 1F1B.
  for (const PipelineStep& s : pipeline_order(Schedule::OneFOneB, 1, 1, 4, 0)) CHECK(!s.paired);
  // Interleaved: (p - r - 1) x 2 + (v - 1) x p + 1 warm-up forwards.
  const std::vector<PipelineStep> i = pipeline_order(Schedule::Interleaved, 2, 2, 4, 1, true);
  int warmup = 0;
  while (i[static_cast<std::size_t>(warmup)].forward) ++warmup;
  CHECK(warmup == 0 * 2 + 1 * 2 + 1 + 1);  // the warm-up, then the steady phase opens with a forward
  CHECK(i[static_cast<std::size_t>(warmup)].paired);
}

TEST_CASE("workloads::shared_expert_hidden_s: the shared experts' own exchange takes its seconds of each window first") {
  // DeepSeek-V3's MoE layer (one shared expert) on an H100, ep 8.
  const ModelSpec* m = find_model_preset("deepseek-v3");
  REQUIRE(m != nullptr);
  const std::vector<OpCost> layer = layer_ops(*m, testing::shape_with_ep(8), true);
  const ComputeModel cm(testing::gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, topology::Precision::Bf16,
                        ComputeConstants{});
  const double share = 0.15;
  // All-to-alls far longer than the shared experts: fc1 and fc2 hide whole, w seconds.
  const double w = shared_expert_hidden_s(cm, layer, Pass::Forward, 1000.0, share);
  REQUIRE(w > 0.0);
  // The side stream's gather and scatter (0.5 s each) hide whole too, beside the compute.
  CHECK(shared_expert_hidden_s(cm, layer, Pass::Forward, 1000.0, share, 0.5, 0.5) == doctest::Approx(w + 1.0));
  // Windows of d = w: without comm the compute hides d x (1 - share) at most a window; a comm of
  // d / 2 first leaves (d / 2) x (1 - share) for the compute.
  const double d = w;
  const double alone = shared_expert_hidden_s(cm, layer, Pass::Forward, 2.0 * d, share);
  CHECK(alone <= 2.0 * d * (1.0 - share) + 1e-12);
  const double with_comm = shared_expert_hidden_s(cm, layer, Pass::Forward, 2.0 * d, share, d / 2, d / 2);
  CHECK(with_comm > alone);
  CHECK(with_comm <= 2.0 * d + 1e-12);
  // Never more than the all-to-all itself, however long the comm.
  CHECK(shared_expert_hidden_s(cm, layer, Pass::Backward, 1e-4, share, 1.0, 1.0) == doctest::Approx(1e-4));
  // No comm given: the result is the one without it.
  CHECK(shared_expert_hidden_s(cm, layer, Pass::Backward, 2.0 * d, share, 0.0, 0.0) ==
        doctest::Approx(shared_expert_hidden_s(cm, layer, Pass::Backward, 2.0 * d, share)));
}

TEST_CASE("workloads::combined_layer_pair_s: delay_wgrad_compute lets the backward dispatch start after the dgrad") {
  const EpLayerPass f{1.0, 2.0, 1.0, 1.0};
  // The backward without delay_wgrad_compute: attention 2 s, experts 4 s, each half wgrad.
  const EpLayerPass b{2.0, 4.0, 3.0, 1.0};
  // comm:    combine_b [0,1] | dispatch_f [1,2], dispatch_b [5,8] | combine_f [8,9]
  // compute: attn_f [0,1]    | experts_b [1,5], experts_f [5,7]   | attn_b [8,10]
  CHECK(combined_layer_pair_s(f, b, 0.0) == doctest::Approx(10.0));
  // The same work with the wgrads as their own nodes (attention, experts, dispatch, combine,
  // attention_wgrad, experts_wgrad):
  const EpLayerPass delayed{1.0, 2.0, 3.0, 1.0, 1.0, 2.0};
  CHECK(delayed.alone() == doctest::Approx(b.alone()));
  // comm:    combine_b [0,1] | dispatch_f [2,3], dispatch_b [4,7]                       | combine_f [8,9]
  // compute: attn_w [0,1], attn_f [1,2] | experts_b [2,4], experts_w [4,6], experts_f [6,8] | attn_b [8,9]
  CHECK(combined_layer_pair_s(f, delayed, 0.0) == doctest::Approx(9.0));
  // Empty wgrad nodes change nothing.
  const EpLayerPass zero{2.0, 4.0, 3.0, 1.0, 0.0, 0.0};
  CHECK(combined_layer_pair_s(f, zero, 0.15) == doctest::Approx(combined_layer_pair_s(f, b, 0.15)));
}

TEST_CASE("workloads::split_moe_layer: delay_wgrad_compute moves half of each trained GEMM's backward to the wgrad nodes") {
  const ModelSpec* m = find_model_preset("deepseek-v3");
  REQUIRE(m != nullptr);
  std::vector<OpCost> layer = layer_ops(*m, testing::shape_with_ep(8), true);
  const ComputeModel cm(testing::gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, topology::Precision::Bf16,
                        ComputeConstants{});
  const EpLayerSplit plain = split_moe_layer(cm, layer, 1.0, 2.0, 0.1, 0.2, 0.4, 0.6);
  const EpLayerSplit delayed = split_moe_layer(cm, layer, 1.0, 2.0, 0.1, 0.2, 0.4, 0.6, 0.0, 0.0, true);
  CHECK(plain.bwd.attention_wgrad == 0.0);
  CHECK(plain.bwd.experts_wgrad == 0.0);
  CHECK(delayed.bwd.attention_wgrad > 0.0);
  CHECK(delayed.bwd.experts_wgrad > 0.0);
  // The same seconds, split: each side less than half its compute (GEMMs are not all of it).
  CHECK(delayed.bwd.attention + delayed.bwd.attention_wgrad == doctest::Approx(plain.bwd.attention));
  CHECK(delayed.bwd.experts + delayed.bwd.experts_wgrad == doctest::Approx(plain.bwd.experts));
  CHECK(delayed.bwd.experts_wgrad < 0.5 * (plain.bwd.experts + 1e-12));
  CHECK(delayed.bwd.alone() == doctest::Approx(plain.bwd.alone()));
  // The forward has no weight gradient.
  CHECK(delayed.fwd.attention == doctest::Approx(plain.fwd.attention));
  CHECK(delayed.fwd.attention_wgrad == 0.0);
  // Frozen weights (LoRA) run no wgrad GEMM.
  for (OpCost& op : layer) op.frozen = op.kind == OpKind::Gemm;
  const EpLayerSplit frozen = split_moe_layer(cm, layer, 1.0, 2.0, 0.1, 0.2, 0.4, 0.6, 0.0, 0.0, true);
  CHECK(frozen.bwd.attention_wgrad == 0.0);
  CHECK(frozen.bwd.experts_wgrad == 0.0);
}

TEST_CASE("workloads::ep_overlap_sm_share: the flex dispatcher's SMs over the GPU's, the constant for NCCL's all-to-all") {
  ParallelSpec p;
  p.ep = 16;
  CHECK(ep_overlap_sm_share(p, 132, true, 0.15) == doctest::Approx(0.15));  // alltoall: the constant
  p.moe_dispatcher = MoeDispatcher::DeepEp;
  CHECK(ep_overlap_sm_share(p, 132, true, 0.15) == doctest::Approx(20.0 / 132));  // Megatron-Core's 20
  CHECK(ep_overlap_sm_share(p, 148, false, 0.15) == doctest::Approx(20.0 / 148));
  p.moe_dispatcher = MoeDispatcher::HybridEp;  // DeepEP hybrid-ep config.cuh: 24 in a domain, 8 across
  CHECK(ep_overlap_sm_share(p, 132, false, 0.15) == doctest::Approx(24.0 / 132));
  CHECK(ep_overlap_sm_share(p, 132, true, 0.15) == doctest::Approx(8.0 / 132));
  p.moe_dispatcher_sms = 32;  // Megatron-Bridge's performance scripts
  CHECK(ep_overlap_sm_share(p, 132, true, 0.15) == doctest::Approx(32.0 / 132));
  CHECK(ep_overlap_sm_share(p, 148, false, 0.15) == doctest::Approx(32.0 / 148));
  p.moe_dispatcher_sms = 512;
  CHECK(ep_overlap_sm_share(p, 132, true, 0.15) == doctest::Approx(0.9));
  // Feeding the pair: more SMs held, less saved.
  const EpLayerPass f{1.0, 2.0, 1.0, 1.0}, b{2.0, 4.0, 1.0, 1.0};
  p.moe_dispatcher_sms = 0;
  const double at_default = combined_layer_saving_s({f, b}, ep_overlap_sm_share(p, 132, true, 0.15));
  p.moe_dispatcher_sms = 32;
  CHECK(combined_layer_saving_s({f, b}, ep_overlap_sm_share(p, 132, true, 0.15)) < at_default);
}
