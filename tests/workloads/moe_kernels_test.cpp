// Mixture of experts, the kernels around the experts' GEMMs: the alltoall dispatcher's chunk sort,
// the expert GEMMs named by position, one host launch per expert of a grouped GEMM, and the
// forward's token-count sync that stops the host running ahead. Each with its numbers put in.
#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "tests/workloads/op_test_util.h"
#include "topology/catalog.h"
#include "topology/cluster_spec.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

// GPT-OSS-120B's MoE layer (its config.json): hidden 2880, 128 experts of width 2880, top-4.
ModelSpec gpt_oss_like() {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.attention_head_dim = 64;
  m.ffn_hidden = 2880;
  m.seq_len = 4096;
  m.vocab = 201088;
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  m.experts = 128;
  m.experts_per_token = 4;
  m.moe_ffn_hidden = 2880;
  return m;
}

ComputeModel h100(const ComputeConstants& c = {}) {
  const topology::GpuSpec* gpu = topology::find_gpu("h100-sxm5-80gb");
  REQUIRE(gpu != nullptr);
  return ComputeModel(*gpu, topology::ClusterSpec{}, topology::Precision::Bf16, c);
}

}  // namespace

TEST_CASE("workloads::layer_ops: the alltoall dispatcher sorts the received token-slots by local expert and back") {
  const ModelSpec m = gpt_oss_like();
  // ep 8: 16 local experts; 4096 tokens x top-4 = 16,384 slots x 2880 wide, read and written at
  // 2 bytes: 2 x 2 x 16384 x 2880 = 188,743,680 B each way, in both passes.
  const std::vector<OpCost> ops = layer_ops(m, shape_with_ep(8), true);
  const OpCost* sort = find_op(ops, "moe_sort_chunks");
  const OpCost* unsort = find_op(ops, "moe_unsort_chunks");
  REQUIRE(sort != nullptr);
  REQUIRE(unsort != nullptr);
  CHECK(sort->fwd_bytes.value == doctest::Approx(2.0 * 2.0 * 16384 * 2880));
  CHECK(sort->bwd_bytes.value == doctest::Approx(2.0 * 2.0 * 16384 * 2880));
  CHECK(unsort->fwd_bytes.value == doctest::Approx(sort->fwd_bytes.value));
  // The sort sits between the permute and the experts, the unsort between the experts and the unpermute.
  const auto at = [&](std::string_view n) { return find_op(ops, n) - ops.data(); };
  CHECK(at("moe_permute") < at("moe_sort_chunks"));
  CHECK(at("moe_sort_chunks") < at("expert_up_gate"));
  CHECK(at("expert_down") < at("moe_unsort_chunks"));
  CHECK(at("moe_unsort_chunks") < at("moe_unpermute"));
  // No expert parallelism: the permute already groups by expert; one expert per GPU (ep 128):
  // nothing to regroup.
  CHECK(find_op(layer_ops(m, shape_with_ep(1), true), "moe_sort_chunks") == nullptr);
  CHECK(find_op(layer_ops(m, shape_with_ep(128), true), "moe_sort_chunks") == nullptr);
}

TEST_CASE("workloads::layer_ops: expert GEMMs are named by position when the experts are as wide as hidden") {
  const std::vector<OpCost> ops = layer_ops(gpt_oss_like(), shape_with_ep(8), true);
  int up_gate = 0, up = 0, down = 0;
  for (const OpCost& op : ops) {
    up_gate += op.name == "expert_up_gate" ? 1 : 0;
    up += op.name == "expert_up" ? 1 : 0;
    down += op.name == "expert_down" ? 1 : 0;
  }
  CHECK(up_gate == 1);  // SwiGLU's gate projection, and its up projection (one linear_fc1 between them)
  CHECK(up == 1);
  CHECK(down == 1);
}

TEST_CASE("workloads::ComputeModel::launches: a grouped expert GEMM issues one GEMM per local expert") {
  const std::vector<OpCost> ops = layer_ops(gpt_oss_like(), shape_with_ep(8), true);
  const OpCost* down = find_op(ops, "expert_down");
  REQUIRE(down != nullptr);
  REQUIRE(down->batch == 16);
  const ComputeModel cm = h100();
  // Forward: one GEMM per expert, 16; backward: data and weight gradients per expert, 32.
  CHECK(cm.launches(*down, Pass::Forward) == doctest::Approx(16.0));
  CHECK(cm.launches(*down, Pass::Backward) == doctest::Approx(32.0));
  // Host: the GEMM's own two kernels at host_launch_us (8 us), the 30 per-expert GEMMs beyond the
  // first at grouped_gemm_expert_host_us (33 us, TE PR #3134's multi-stream path); the forward also
  // runs the GroupedLinear module once (te_module_host_us, 22.8 us).
  CHECK(cm.host_time(*down, Pass::Backward).seconds() == doctest::Approx(2 * 8e-6 + 30 * 33e-6));
  CHECK(cm.host_time(*down, Pass::Forward).seconds() == doctest::Approx(1 * 8e-6 + 15 * 33e-6 + 22.8e-6));
  // A fused grouped kernel: the kernels of one GEMM.
  ComputeConstants fused;
  fused.apply({{"grouped_gemm_launches_per_expert", 0.0}});
  const ComputeModel cf = h100(fused);
  CHECK(cf.launches(*down, Pass::Forward) == doctest::Approx(1.0));
  CHECK(cf.launches(*down, Pass::Backward) == doctest::Approx(2.0));
  // A dense GEMM is one launch whatever the constant.
  const OpCost* qkv = find_op(ops, "qkv_proj");
  REQUIRE(qkv != nullptr);
  CHECK(cm.launches(*qkv, Pass::Backward) == doctest::Approx(2.0));
}

TEST_CASE("workloads::ComputeModel::ops_time: the dropless dispatch's host sync splits the forward in two") {
  const ComputeModel cm = h100();
  // A: a device-bound op (a large GEMM) that ends in the sync; B: twenty host-bound launches.
  OpCost a;
  a.name = "a";
  a.kind = OpKind::Gemm;
  a.m = a.n = a.k = 4096;
  a.batch = 1;
  a.fwd_flops = sim::Flops{2.0 * 4096.0 * 4096 * 4096};
  a.fwd_bytes = sim::Bytes{3.0 * 4096 * 4096 * 2};
  OpCost b;
  b.name = "b";
  b.kind = OpKind::Elementwise;
  b.fwd_flops = sim::Flops{1.0};
  b.fwd_bytes = sim::Bytes{64.0};
  std::vector<OpCost> ops{a};
  for (int i = 0; i < 20; ++i) ops.push_back(b);
  const double dev_a = cm.op_time(a, Pass::Forward).seconds(), dev_b = cm.op_time(b, Pass::Forward).seconds();
  const double host_a = cm.host_time(a, Pass::Forward).seconds(), host_b = cm.host_time(b, Pass::Forward).seconds();
  REQUIRE(dev_a > host_a + 20 * host_b);  // without the sync the host hides behind A entirely
  REQUIRE(host_b > dev_b);
  CHECK(cm.ops_time(ops, Pass::Forward).seconds() == doctest::Approx(dev_a + 20 * dev_b));
  ops.front().host_sync_after = true;
  // max(A's device, A's host) + the 5 us round trip + the 20 B's issued from an empty queue: each
  // runs once the host has issued it, so the last ends its device time after the host's 20 issues.
  CHECK(cm.ops_time(ops, Pass::Forward).seconds() == doctest::Approx(dev_a + 5e-6 + 20 * host_b + dev_b));
  // The backward does not sync (the splits are already on the host).
  CHECK(cm.ops_time(ops, Pass::Backward).seconds() ==
        doctest::Approx(std::max(cm.op_time(a, Pass::Backward).seconds() + 20 * cm.op_time(b, Pass::Backward).seconds(),
                                 cm.host_time(a, Pass::Backward).seconds() + 20 * cm.host_time(b, Pass::Backward).seconds())));
}

TEST_CASE("workloads::layer_ops: an MoE layer syncs its forward with the host once, a dense layer never") {
  const ModelSpec m = gpt_oss_like();
  const auto syncs = [&](int ep) {
    const std::vector<OpCost> ops = layer_ops(m, shape_with_ep(ep), true);
    return std::count_if(ops.begin(), ops.end(), [](const OpCost& op) { return op.host_sync_after; });
  };
  CHECK(syncs(8) == 1);
  CHECK(syncs(1) == 1);  // no expert parallelism: the grouped GEMM still needs its token counts
  const std::vector<OpCost> dense = layer_ops(m, shape_with_ep(8), false);
  CHECK(std::none_of(dense.begin(), dense.end(), [](const OpCost& op) { return op.host_sync_after; }));
}

TEST_CASE("workloads::ComputeModel::host_time: a GroupedLinear's per-expert GEMMs cost grouped_gemm_expert_host_us each, fc1 once") {
  const std::vector<OpCost> ops = layer_ops(gpt_oss_like(), shape_with_ep(8), true);
  const OpCost* gate = find_op(ops, "expert_up_gate");
  const OpCost* up = find_op(ops, "expert_up");
  REQUIRE(gate != nullptr);
  REQUIRE(up != nullptr);
  const ComputeModel cm = h100();
  // linear_fc1 issues its 16 GEMMs per expert once, from the gate half; the up half only its own kernel.
  CHECK(cm.launches(*gate, Pass::Forward) == doctest::Approx(16.0));
  CHECK(cm.launches(*up, Pass::Forward) == doctest::Approx(1.0));
  CHECK(cm.host_time(*up, Pass::Backward).seconds() == doctest::Approx(2 * 8e-6));
  // The per-expert cost is its own constant: at host_launch_us it is the old count x 8 us.
  ComputeConstants same;
  same.apply({{"grouped_gemm_expert_host_us", 8.0}});
  CHECK(h100(same).host_time(*gate, Pass::Backward).seconds() == doctest::Approx(32 * 8e-6));
  ComputeConstants slow;
  slow.apply({{"grouped_gemm_expert_host_us", 100.0}});
  CHECK(h100(slow).host_time(*gate, Pass::Forward).seconds() == doctest::Approx(8e-6 + 15 * 100e-6 + 22.8e-6));
  // The up half is no module call of its own: the forward is its one kernel.
  CHECK(cm.host_time(*up, Pass::Forward).seconds() == doctest::Approx(8e-6));
  // A full-iteration CUDA graph pays none of it.
  ComputeModel graphed = h100();
  graphed.set_cuda_graphs(true);
  CHECK(graphed.host_time(*gate, Pass::Forward).seconds() == 0.0);
}

TEST_CASE("workloads::layer_ops: fp8 experts copy their rows into a per-expert padded tensor and back, unless HybridEP dispatched them padded") {
  const ModelSpec m = gpt_oss_like();
  OpShape sh = shape_with_ep(8);
  // bf16 experts: no padding.
  CHECK(find_op(layer_ops(m, sh, true), "expert_pad") == nullptr);
  sh.quantized_experts = true;
  const std::vector<OpCost> ops = layer_ops(m, sh, true);
  const OpCost* pad = find_op(ops, "expert_pad");
  const OpCost* unpad = find_op(ops, "expert_unpad");
  REQUIRE(pad != nullptr);
  REQUIRE(unpad != nullptr);
  // 4096 tokens x top-4 = 16,384 slots x 2880 wide, read and written at 2 bytes each pass; the pad
  // also reads and writes the slots' fp32 probabilities, in a second kernel (one more host op).
  const double rows = 2.0 * 2.0 * 16384 * 2880;
  CHECK(pad->fwd_bytes.value == doctest::Approx(rows + 2.0 * 4.0 * 16384));
  CHECK(pad->bwd_bytes.value == doctest::Approx(rows + 2.0 * 4.0 * 16384));
  CHECK(unpad->fwd_bytes.value == doctest::Approx(rows));
  CHECK(unpad->bwd_bytes.value == doctest::Approx(rows));
  CHECK(pad->fwd_host_ops == 1.0);
  CHECK(unpad->fwd_host_ops == 0.0);
  // Between the chunk sort and linear_fc1, and between linear_fc2 and the unsort.
  const auto at = [&](std::string_view n) { return find_op(ops, n) - ops.data(); };
  CHECK(at("moe_sort_chunks") < at("expert_pad"));
  CHECK(at("expert_pad") < at("expert_up_gate"));
  CHECK(at("expert_down") < at("expert_unpad"));
  CHECK(at("expert_unpad") < at("moe_unsort_chunks"));
  // DeepEP pads in the experts as the alltoall dispatcher does; HybridEP's dispatch writes padded rows.
  sh.moe_dispatcher = MoeDispatcher::DeepEp;
  CHECK(find_op(layer_ops(m, sh, true), "expert_pad") != nullptr);
  sh.moe_dispatcher = MoeDispatcher::HybridEp;
  CHECK(find_op(layer_ops(m, sh, true), "expert_pad") == nullptr);
  CHECK(find_op(layer_ops(m, sh, true), "expert_unpad") == nullptr);
}

TEST_CASE("workloads::layer_ops: the flex dispatcher sorts no chunks but still permutes and unpermutes every slot") {
  const ModelSpec m = gpt_oss_like();
  OpShape sh = shape_with_ep(8);
  const std::vector<OpCost> alltoall = layer_ops(m, sh, true);
  REQUIRE(find_op(alltoall, "moe_sort_chunks") != nullptr);
  const double permute_bytes = find_op(alltoall, "moe_permute")->fwd_bytes.value;
  CHECK(permute_bytes == doctest::Approx(2.0 * 2.0 * 16384 * 2880));
  for (const MoeDispatcher flex : {MoeDispatcher::DeepEp, MoeDispatcher::HybridEp}) {
    sh.moe_dispatcher = flex;
    const std::vector<OpCost> ops = layer_ops(m, sh, true);
    CHECK(find_op(ops, "moe_sort_chunks") == nullptr);
    CHECK(find_op(ops, "moe_unsort_chunks") == nullptr);
    REQUIRE(find_op(ops, "moe_permute") != nullptr);
    CHECK(find_op(ops, "moe_permute")->fwd_bytes.value == doctest::Approx(permute_bytes));
    CHECK(find_op(ops, "moe_permute")->host_sync_after);
    CHECK(find_op(ops, "moe_unpermute")->bwd_bytes.value == doctest::Approx(permute_bytes));
  }
}
