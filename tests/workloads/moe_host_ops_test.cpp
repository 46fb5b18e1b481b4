// Mixture of experts, the host side: the framework ops and torch.distributed calls an eager
// Megatron-Core MoE layer runs besides its kernels (model/moe_host_ops.h), their exposure after
// the forward's host sync (the GPU queue is empty), and a full-iteration CUDA graph that pays none.
#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "tests/workloads/op_test_util.h"
#include "topology/catalog.h"
#include "topology/cluster_spec.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/moe_host_ops.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

ComputeModel b200() {
  const topology::GpuSpec* gpu = topology::find_gpu("b200");
  REQUIRE(gpu != nullptr);
  return ComputeModel(*gpu, topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
}

OpCost tiny(std::string_view name) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::Elementwise;
  op.fwd_flops = sim::Flops{1.0};
  op.fwd_bytes = sim::Bytes{64.0};
  op.bwd_flops = sim::Flops{1.0};
  op.bwd_bytes = sim::Bytes{64.0};
  return op;
}

OpCost big_gemm() {
  OpCost op;
  op.name = "gemm";
  op.kind = OpKind::Gemm;
  op.m = op.n = op.k = 8192;
  op.batch = 1;
  op.fwd_flops = sim::Flops{2.0 * 8192.0 * 8192 * 8192};
  op.bwd_flops = op.fwd_flops * 2.0;
  op.fwd_bytes = sim::Bytes{3.0 * 8192 * 8192 * 2};
  op.bwd_bytes = op.fwd_bytes * 2.0;
  return op;
}

}  // namespace

TEST_CASE("workloads::ComputeModel: after the host sync the host ops before the next kernel are exposed, ops x per-op cost") {
  const ComputeModel cm = b200();
  const double per_op = cm.constants().get("host_launch_us") * 1e-6;
  const double per_call = cm.constants().get("torch_distributed_call_us") * 1e-6;
  OpCost sync = tiny("moe_permute");
  sync.host_sync_after = true;
  OpCost issue = tiny("split_lists");  // no device work to speak of, 40 framework ops and 2 calls
  issue.fwd_host_ops = 40;
  issue.fwd_dist_calls = 2;
  const OpCost gemm = big_gemm();
  CHECK(cm.host_time(issue, Pass::Forward).seconds() == doctest::Approx(41 * per_op + 2 * per_call));

  const double dev_sync = cm.op_time(sync, Pass::Forward).seconds();
  const double host_sync = cm.host_time(sync, Pass::Forward).seconds();
  const double dev_issue = cm.op_time(issue, Pass::Forward).seconds();
  const double host_issue = cm.host_time(issue, Pass::Forward).seconds();
  const double dev_gemm = cm.op_time(gemm, Pass::Forward).seconds();
  const double host_gemm = cm.host_time(gemm, Pass::Forward).seconds();
  REQUIRE(dev_gemm > host_issue + host_gemm);  // a host running ahead would hide every host op
  const double round_trip = cm.constants().get("launch_blocking_sync_us") * 1e-6;
  // Queue drained: the GEMM starts only after the host has issued the 41 ops, 2 calls and itself.
  const double expected = std::max(dev_sync, host_sync) + round_trip +
                          std::max(host_issue + dev_issue, host_issue + host_gemm) + dev_gemm;
  CHECK(cm.ops_time({sync, issue, gemm}, Pass::Forward).seconds() == doctest::Approx(expected));
  // The exposed part is the host's issuing, ops x per-op cost: it exceeds max(device, host) by it.
  const double running_ahead = std::max(dev_sync, host_sync) + round_trip + std::max(dev_issue + dev_gemm, host_issue + host_gemm);
  CHECK(expected - running_ahead == doctest::Approx(host_issue + host_gemm - dev_issue).epsilon(1e-6));
  // Without the sync the host runs ahead and hides the same ops behind the GEMM.
  OpCost no_sync = sync;
  no_sync.host_sync_after = false;
  CHECK(cm.ops_time({no_sync, issue, gemm}, Pass::Forward).seconds() == doctest::Approx(dev_sync + dev_issue + dev_gemm));
  // The backward has no sync: the same ops hide behind the GEMM's backward.
  CHECK(cm.ops_time({sync, issue, gemm}, Pass::Backward).seconds() ==
        doctest::Approx(cm.op_time(sync, Pass::Backward).seconds() + cm.op_time(issue, Pass::Backward).seconds() +
                        cm.op_time(gemm, Pass::Backward).seconds()));
}

TEST_CASE("workloads::ComputeModel: a full-iteration CUDA graph pays no host time and no host sync") {
  ComputeModel cm = b200();
  OpCost sync = tiny("moe_permute");
  sync.host_sync_after = true;
  OpCost issue = tiny("split_lists");
  issue.fwd_host_ops = 500;  // host-bound if eager
  issue.fwd_dist_calls = 4;
  const std::vector<OpCost> ops{sync, issue, big_gemm()};
  double device = 0;
  for (const OpCost& op : ops) device += cm.op_time(op, Pass::Forward).seconds();
  const double eager = cm.ops_time(ops, Pass::Forward).seconds();
  CHECK(eager > device + 500 * cm.constants().get("host_launch_us") * 1e-6);
  cm.set_cuda_graphs(true);
  CHECK(cm.host_time(issue, Pass::Forward).seconds() == 0.0);
  CHECK(cm.ops_time(ops, Pass::Forward).seconds() == doctest::Approx(device));
}

TEST_CASE("workloads::layer_ops: an MoE layer carries Megatron-Core's host ops per phase, the dispatch's after the sync") {
  const ModelSpec m = qwen3_30b_moe_model();
  const std::vector<OpCost> ops = layer_ops(m, shape_with_ep(8), true);
  const MoeHostPhases p = moe_host_phases(8, 1, 1, 128.0 / 8);
  double fwd_ops = 0, bwd_ops = 0, fwd_calls = 0, bwd_calls = 0;
  for (const OpCost& op : ops) {
    fwd_ops += op.fwd_host_ops;
    bwd_ops += op.bwd_host_ops;
    fwd_calls += op.fwd_dist_calls;
    bwd_calls += op.bwd_dist_calls;
  }
  const double phases_fwd = p.router_fwd.ops + p.preprocess_fwd.ops + p.dispatch_fwd.ops + 2 * p.sort_fwd.ops +
                            p.experts_fwd.ops + p.combine_fwd.ops;
  CHECK(fwd_ops == doctest::Approx(phases_fwd));
  CHECK(fwd_ops >= 40);  // an eager MoE layer's forward: dozens of framework ops beyond its kernels
  CHECK(bwd_ops > 0);
  // torch.distributed calls: the token-count all-gather, two dispatch all-to-alls, the combine's.
  CHECK(fwd_calls == 4);
  CHECK(bwd_calls == 3);  // the backward's all-to-alls: the split lists are already on the host
  // The dispatch's split lists and all-to-all calls sit on the op right after the sync.
  const auto sync = std::find_if(ops.begin(), ops.end(), [](const OpCost& op) { return op.host_sync_after; });
  REQUIRE(sync != ops.end());
  REQUIRE(sync + 1 != ops.end());
  CHECK((sync + 1)->fwd_dist_calls == 2);
  CHECK((sync + 1)->name == "moe_sort_chunks");
  // A dense layer has none.
  const std::vector<OpCost> dense = layer_ops(m, shape_with_ep(8), false);
  CHECK(std::all_of(dense.begin(), dense.end(), [](const OpCost& op) { return op.fwd_host_ops == 0 && op.fwd_dist_calls == 0; }));
}

TEST_CASE("workloads::ComputeModel: a thin MoE layer's forward at ep 8 is longer by its exposed host work") {
  // Qwen3-30B-A3B at micro-batch 1: 16 local experts of width 768, so the expert GEMMs are short
  // and the host's framework ops after the sync are not hidden.
  const ComputeModel cm = b200();
  const std::vector<OpCost> ops = layer_ops(qwen3_30b_moe_model(), shape_with_ep(8), true);
  std::vector<OpCost> bare = ops;
  for (OpCost& op : bare) op.fwd_host_ops = op.bwd_host_ops = op.fwd_dist_calls = op.bwd_dist_calls = 0;
  const double with_host = cm.ops_time(ops, Pass::Forward).seconds();
  const double without = cm.ops_time(bare, Pass::Forward).seconds();
  CHECK(with_host > without);
  // At least the dispatch's host work right after the sync is exposed in full.
  const MoeHostPhases p = moe_host_phases(8, 1, 1, 16.0);
  const double dispatch_s = p.dispatch_fwd.ops * cm.constants().get("host_launch_us") * 1e-6 +
                            p.dispatch_fwd.dist_calls * cm.constants().get("torch_distributed_call_us") * 1e-6;
  CHECK(with_host - without >= dispatch_s * 0.999);
}

TEST_CASE("workloads::layer_ops: drop-and-pad under the alltoall dispatcher has no forward host sync") {
  // Megatron-Core core_r0.12.0 MoEAlltoAllTokenDispatcher.preprocess: with
  // moe_pad_expert_input_to_capacity every expert's count is the capacity, built on the host, and
  // the sync point stays "no_sync". Dropless (capacity_factor 0) and the flex dispatcher keep it.
  const auto has_sync = [](const std::vector<OpCost>& ops) {
    return std::any_of(ops.begin(), ops.end(), [](const OpCost& op) { return op.host_sync_after; });
  };
  ModelSpec padded = qwen3_30b_moe_model();
  padded.capacity_factor = 1.0;
  const std::vector<OpCost> pad_ops = layer_ops(padded, shape_with_ep(8), true);
  const std::vector<OpCost> dropless_ops = layer_ops(qwen3_30b_moe_model(), shape_with_ep(8), true);
  CHECK_FALSE(has_sync(pad_ops));
  CHECK(has_sync(dropless_ops));
  OpShape flex = shape_with_ep(8);
  flex.moe_dispatcher = MoeDispatcher::DeepEp;
  CHECK(has_sync(layer_ops(padded, flex, true)));
  // The thin layer's host work after the sync is exposed when dropless; padded, the host runs
  // ahead over the whole layer: max(device, host), and no round trip.
  const ComputeModel cm = b200();
  double device = 0, host = 0;
  for (const OpCost& op : pad_ops) {
    device += cm.op_time(op, Pass::Forward).seconds();
    host += cm.host_time(op, Pass::Forward).seconds();
  }
  CHECK(cm.ops_time(pad_ops, Pass::Forward).seconds() == doctest::Approx(std::max(device, host)));
  CHECK(cm.ops_time(pad_ops, Pass::Forward).seconds() < cm.ops_time(dropless_ops, Pass::Forward).seconds());
}

TEST_CASE("workloads::moe_dispatch_bytes: under context parallelism a rank dispatches its own s/cp tokens") {
  // Mixtral 8x22B at 64K tokens, tp 2, cp 8 (training_nemo_docs.csv:44): each rank holds 8,192 of
  // the 65,536 tokens and routes those, as its expert GEMMs see them (layer_ops' tokens / cp).
  ModelSpec m = qwen3_30b_moe_model();
  m.hidden = 6144;
  m.experts = 8;
  m.experts_per_token = 2;
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 65536;
  sh.tp = 2;
  sh.cp = 8;
  sh.ep = 8;
  sh.sequence_parallel = true;
  CHECK(moe_dispatch_bytes(m, sh) == doctest::Approx(65536.0 / 8 * 2 * 6144 * 2 / 2));
  OpShape no_cp = sh;
  no_cp.cp = 1;
  CHECK(moe_dispatch_bytes(m, sh) == doctest::Approx(moe_dispatch_bytes(m, no_cp) / 8));
}
