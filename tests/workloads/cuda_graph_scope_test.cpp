// Per-layer CUDA graphs ([training] cuda_graph_scope; ComputeModel::set_cuda_graph_modules): which
// part of a layer each op runs in (OpCost::graph_part), a captured op losing its host time while
// an uncaptured one keeps it, one graph launch per captured stretch, and the MoE forward's host
// sync staying unless the whole MoE layer is captured.
#include <doctest/doctest.h>

#include <string_view>
#include <vector>

#include "tests/workloads/op_test_util.h"
#include "topology/cluster_spec.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

ComputeModel on(std::string_view id, unsigned modules = 0) {
  ComputeModel cm(gpu(id), topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
  cm.set_cuda_graph_modules(modules);
  return cm;
}

double host_s(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass) {
  double s = 0;
  for (const OpCost& op : ops) s += cm.host_time(op, pass).seconds();
  return s;
}

}  // namespace

TEST_CASE("workloads::layer_ops: each op is tagged with the part of its layer a CUDA graph scope names") {
  const auto dense = layer_ops(qwen3_30b_moe_model(0), shape_with_ep(1), false);
  for (std::string_view name : {"input_norm", "qkv_proj", "flash_attention", "attention_out_proj", "attention_residual"})
    CHECK(op_named(dense, name).graph_part == GraphPart::Attention);
  for (std::string_view name : {"post_attention_norm", "mlp_gate", "swiglu", "mlp_down", "mlp_residual"})
    CHECK(op_named(dense, name).graph_part == GraphPart::Mlp);
  const auto moe = layer_ops(qwen3_30b_moe_model(1), shape_with_ep(8), true);
  CHECK(op_named(moe, "attention_residual").graph_part == GraphPart::Attention);
  for (std::string_view name : {"post_attention_norm", "moe_router", "moe_router_topk"})
    CHECK(op_named(moe, name).graph_part == GraphPart::MoeRouter);
  CHECK(op_named(moe, "moe_permute").graph_part == GraphPart::MoePreprocess);
  for (std::string_view name : {"mlp_gate", "swiglu", "shared_expert_down"})
    CHECK(op_named(moe, name).graph_part == GraphPart::MoeSharedExperts);
  for (std::string_view name : {"moe_sort_chunks", "expert_up_gate", "expert_act", "expert_down", "moe_unpermute", "mlp_residual"})
    CHECK(op_named(moe, name).graph_part == GraphPart::MoeRest);
  for (const OpCost& op : head_ops(qwen3_30b_moe_model(0), shape_with_ep(1))) CHECK(op.graph_part == GraphPart::None);
}

TEST_CASE("workloads::ComputeModel: a captured module loses its host time, an uncaptured one keeps it") {
  const auto ops = layer_ops(qwen3_30b_moe_model(1), shape_with_ep(8), true);
  const ComputeModel eager = on("gb200");
  const ComputeModel graphed = on("gb200", kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess);
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    for (std::string_view name : {"qkv_proj", "flash_attention", "moe_router", "moe_permute", "shared_expert_down"}) {
      CHECK(eager.host_time(op_named(ops, name), pass) > sim::SimTime::zero());
      CHECK(graphed.host_time(op_named(ops, name), pass) == sim::SimTime::zero());
    }
    // The routed experts, the sorts and the unpermute stay eager under moe_router / moe_preprocess.
    for (std::string_view name : {"moe_sort_chunks", "expert_up_gate", "expert_act", "expert_down", "moe_unpermute"}) {
      CHECK(graphed.host_time(op_named(ops, name), pass) > sim::SimTime::zero());
      CHECK(graphed.host_time(op_named(ops, name), pass) == eager.host_time(op_named(ops, name), pass));
    }
  }
  // attn alone leaves the MoE router eager; moe_router alone leaves attention eager.
  const ComputeModel attn = on("gb200", kGraphAttn), router = on("gb200", kGraphMoeRouter);
  CHECK(attn.host_time(op_named(ops, "moe_router"), Pass::Forward) == eager.host_time(op_named(ops, "moe_router"), Pass::Forward));
  CHECK(router.host_time(op_named(ops, "qkv_proj"), Pass::Forward) == eager.host_time(op_named(ops, "qkv_proj"), Pass::Forward));
  CHECK(router.host_time(op_named(ops, "moe_permute"), Pass::Forward) > sim::SimTime::zero());
  // With moe_shared_expert_overlap the shared experts run outside the router's graph.
  ComputeModel overlapped = on("gb200");
  overlapped.set_cuda_graph_modules(kGraphMoeRouter, true);
  CHECK(overlapped.host_time(op_named(ops, "shared_expert_down"), Pass::Forward) > sim::SimTime::zero());
  CHECK(router.host_time(op_named(ops, "shared_expert_down"), Pass::Forward) == sim::SimTime::zero());
  // mlp captures a dense layer's MLP, never an MoE layer's experts.
  const ComputeModel mlp = on("gb200", kGraphMlp);
  const auto dense = layer_ops(qwen3_30b_moe_model(0), shape_with_ep(1), false);
  CHECK(mlp.host_time(op_named(dense, "mlp_down"), Pass::Forward) == sim::SimTime::zero());
  CHECK(mlp.host_time(op_named(dense, "qkv_proj"), Pass::Forward) > sim::SimTime::zero());
  CHECK(mlp.host_time(op_named(ops, "expert_down"), Pass::Forward) > sim::SimTime::zero());
}

TEST_CASE("workloads::ComputeModel: each captured stretch of a pass costs one graph launch and the MoE host sync stays") {
  // A host-bound micro-batch (one 4096-token sequence, EP 8 on a Grace host): capturing attention,
  // router and preprocess removes their host time, less one eager op's launch per captured stretch.
  const auto ops = layer_ops(qwen3_30b_moe_model(0), shape_with_ep(8), true);
  const ComputeModel eager = on("gb200");
  const unsigned scope = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
  const ComputeModel graphed = on("gb200", scope);
  const double launch_s = eager.constants().get("host_launch_us") * eager.constants().get("grace_host_ratio") * 1e-6;
  double captured_host = 0;
  for (const OpCost& op : ops)
    if (graphed.captured(op)) captured_host += eager.host_time(op, Pass::Forward).seconds();
  REQUIRE(captured_host > 10 * launch_s);
  CHECK(host_s(eager, ops, Pass::Forward) - host_s(graphed, ops, Pass::Forward) == doctest::Approx(captured_host));
  // With the host-issued time reduced, the eager forward is slower than the graphed one.
  const double t_eager = eager.ops_time(ops, Pass::Forward).seconds();
  const double t_graphed = graphed.ops_time(ops, Pass::Forward).seconds();
  CHECK(t_graphed < t_eager);
  // One stretch (input norm .. permute), one launch: the graphed ops cost exactly that on a layer
  // of only captured ops.
  std::vector<OpCost> head;
  for (const OpCost& op : ops)
    if (graphed.captured(op) && !op.host_sync_after) head.push_back(op);
  double head_device = 0;
  for (const OpCost& op : head) head_device += graphed.op_time(op, Pass::Forward).seconds();
  CHECK(graphed.ops_time(head, Pass::Forward).seconds() == doctest::Approx(std::max(head_device, launch_s)));
  // Two stretches split by an eager op: two launches.
  std::vector<OpCost> split = {op_named(ops, "qkv_proj"), op_named(ops, "expert_act"), op_named(ops, "moe_router")};
  const ComputeModel launches_only = [&] {
    ComputeConstants c;
    c.set("kernel_launch_us", 0.0);
    ComputeModel cm(gpu("gb200"), topology::ClusterSpec{}, topology::Precision::Bf16, c);
    cm.set_cuda_graph_modules(scope);
    return cm;
  }();
  double expected_host = 2 * launch_s + launches_only.host_time(op_named(ops, "expert_act"), Pass::Forward).seconds();
  double split_device = 0;
  for (const OpCost& op : split) split_device += launches_only.op_time(op, Pass::Forward).seconds();
  CHECK(launches_only.ops_time(split, Pass::Forward).seconds() == doctest::Approx(std::max(split_device, expected_host)));
  // The dropless dispatcher's host sync stays under moe_router / moe_preprocess: the forward is
  // longer than the same ops without the sync flag.
  std::vector<OpCost> unsynced = ops;
  for (OpCost& op : unsynced) op.host_sync_after = false;
  CHECK(graphed.ops_time(ops, Pass::Forward) > graphed.ops_time(unsynced, Pass::Forward));
  // "moe" captures the whole (drop-and-pad) layer: no per-op host time and no sync.
  const ComputeModel whole = on("gb200", kGraphAttn | kGraphMoe);
  for (const OpCost& op : ops) CHECK(whole.host_time(op, Pass::Forward) == sim::SimTime::zero());
  CHECK(whole.ops_time(ops, Pass::Forward) == whole.ops_time(unsynced, Pass::Forward));
}

TEST_CASE("workloads::ComputeModel: mamba captures a Mamba layer and nothing of an attention layer") {
  const ModelSpec m = *find_model_preset("nemotron-h-8b");
  const auto mamba = mamba_layer_ops(m, shape_with_ep(1));
  REQUIRE_FALSE(mamba.empty());
  const ComputeModel graphed = on("h100-sxm5-80gb", kGraphMamba), eager = on("h100-sxm5-80gb");
  for (const OpCost& op : mamba) {
    CHECK(op.graph_part == GraphPart::Mamba);
    CHECK(graphed.host_time(op, Pass::Forward) == sim::SimTime::zero());
    // Eager, every op that launches in the forward costs host time; the SSD gradient kernels
    // (model/mamba_ops.h) launch nothing there.
    if (op.fwd_kernels == 0)
      CHECK(eager.host_time(op, Pass::Forward) == sim::SimTime::zero());
    else
      CHECK(eager.host_time(op, Pass::Forward) > sim::SimTime::zero());
  }
  const auto attention = layer_ops(m, shape_with_ep(1), false);
  for (const OpCost& op : attention) CHECK(graphed.host_time(op, Pass::Forward) == eager.host_time(op, Pass::Forward));
}
