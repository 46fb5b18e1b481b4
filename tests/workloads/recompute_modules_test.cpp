// Megatron-Core's recompute_modules ("layernorm", "moe_act", "moe"): what each one stops keeping for
// the backward (memory model) and what it runs again in the backward (stage costs).
#include <doctest/doctest.h>

#include <algorithm>

#include "iteration_fixture.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/stage_cost_parts.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

// 4 SwiGLU MoE layers: 16 experts of width 2048, top-4 (hidden 1024, dense ffn 2048), s 1024.
ModelSpec moe_model() {
  ModelSpec m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 8;
  m.ffn_hidden = 2048;
  m.seq_len = 1024;
  m.vocab = 32000;
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  m.tied_embeddings = false;
  m.flash_attention = true;
  m.experts = 16;
  m.experts_per_token = 4;
  m.moe_ffn_hidden = 2048;
  return m;
}

// One DGX H100 node with dp 8 = ep 8, the memo and compute model over it: chunk(recompute, modules)
// plans moe_model()'s stage costs with those recompute settings.
struct OneNodeEp8 {
  testing::BuiltCluster cluster{testing::nodes_of("dgx-h100")};
  ParallelSpec par = [] {
    ParallelSpec p;
    p.dp = 8;
    p.ep = 8;
    return p;
  }();
  ComputeModel compute = cluster.compute(topology::Precision::Bf16);
  ParallelLayout layout{par.tp, par.dp, par.pp};
  CollectiveMemo memo{cluster.collectives()};

  ChunkCost chunk(Recompute recompute, unsigned modules) {
    TrainingSpec tr;
    tr.global_batch = 8;
    tr.recompute = recompute;
    tr.recompute_modules = modules;
    return plan_stage_costs(StageCostInputs{moe_model(), par, tr, compute, layout, memo, CollectiveAlgo::Ring, 1, 1}).chunks.at(0);
  }
};

MemoryRequest request(unsigned modules) {
  MemoryRequest q;
  q.model = moe_model();
  q.parallel.dp = 8;
  q.parallel.ep = 8;
  q.training.global_batch = 8;
  q.training.micro_batch = 2;
  q.training.recompute_modules = modules;
  return q;
}

double line(const MemoryRequest& q, const char* name) {
  const MemoryBreakdown m = stage_memory(q, 0);  // kept alive: find_line points into it
  const MemoryLine* l = m.find_line(name);
  REQUIRE(l != nullptr);
  return l->bytes.value;
}

}  // namespace

TEST_CASE("workloads::estimate_memory: recompute_modules moe_act drops one expert tensor, layernorm the two norm outputs") {
  const double s = 1024, b = 2, h = 1024, e = 2.0, layers = 4;
  const char* moe_line = "MoE layers: dispatched tokens and expert activations";
  // In flight: one micro-batch (pp 1). moe_act: the SwiGLU output of every routed token-slot,
  // k x moe_ffn wide: 4 x 2048 x s x b x 2 B per layer.
  const double act_output = 4 * 2048 * s * b * e * layers;
  CHECK(line(request(0), moe_line) - line(request(kRecomputeMoeAct), moe_line) == doctest::Approx(act_output));
  CHECK(line(request(0), "layers: activations") == doctest::Approx(line(request(kRecomputeMoeAct), "layers: activations")));
  // layernorm: the QKV and MLP GEMM inputs, 2 x s x b x h x 2 B per layer; the MoE term is unchanged.
  const double norm_outputs = 2 * s * b * h * e * layers;
  CHECK(line(request(0), "layers: activations") - line(request(kRecomputeLayernorm), "layers: activations") ==
        doctest::Approx(norm_outputs));
  CHECK(line(request(kRecomputeLayernorm), moe_line) == doctest::Approx(line(request(0), moe_line)));
  // Under full recompute only the layer input is kept: the modules change nothing.
  MemoryRequest full = request(0), full_modules = request(kRecomputeLayernorm | kRecomputeMoeAct);
  full.training.recompute = full_modules.training.recompute = Recompute::Full;
  CHECK(line(full, "layers: activations") == doctest::Approx(line(full_modules, "layers: activations")));
  // moe: the whole MoE layer reruns, so none of its dispatched tokens or expert activations are kept.
  CHECK(line(request(0), moe_line) > 0);
  {
    // A zero term is left out of the breakdown.
    const MemoryBreakdown m = stage_memory(request(kRecomputeMoe), 0);
    const MemoryLine* l = m.find_line(moe_line);
    CHECK((l == nullptr || l->bytes.value == 0.0));
  }
  CHECK(line(request(kRecomputeMoe), "layers: activations") == doctest::Approx(line(request(0), "layers: activations")));
}

TEST_CASE("workloads::plan_stage_costs: recompute_modules rerun their ops' forward in the backward, nothing else") {
  OneNodeEp8 f;
  const auto chunk = [&](unsigned modules) { return f.chunk(Recompute::None, modules); };
  const ChunkCost none = chunk(0), norms = chunk(kRecomputeLayernorm), act = chunk(kRecomputeMoeAct);
  const ChunkCost both = chunk(kRecomputeLayernorm | kRecomputeMoeAct);
  CHECK(norms.fwd_compute == doctest::Approx(none.fwd_compute));
  CHECK(act.fwd_compute == doctest::Approx(none.fwd_compute));
  CHECK(norms.bwd_compute > none.bwd_compute);
  CHECK(act.bwd_compute > none.bwd_compute);
  // Each reruns a few memory-bound ops: far less than the forward pass it would be under full recompute.
  CHECK(both.bwd_compute - none.bwd_compute < 0.25 * none.fwd_compute);
  // Both rerun both op sets: at least either one's cost, at most their sum (a rerun pass is
  // max(device time, kernels x host launch), so the costs need not add).
  const double d_norms = norms.bwd_compute - none.bwd_compute, d_act = act.bwd_compute - none.bwd_compute;
  CHECK(both.bwd_compute - none.bwd_compute >= std::max(d_norms, d_act) * (1 - 1e-9));
  CHECK(both.bwd_compute - none.bwd_compute <= (d_norms + d_act) * (1 + 1e-9));
}

TEST_CASE("workloads::layer_compute: recompute_modules moe reruns the MoE layer from its router to its unpermute") {
  const topology::GpuSpec* gpu = topology::find_gpu("h100-sxm5-80gb");
  REQUIRE(gpu != nullptr);
  const ComputeModel compute(*gpu, topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
  OpShape shape;
  shape.micro_batch = 2;
  shape.seq_len = 1024;
  shape.ep = 8;
  const std::vector<OpCost> layer = layer_ops(moe_model(), shape, true);
  // Megatron-Core moe_layer.py checkpoints custom_forward: shared experts, router, preprocess,
  // dispatch, experts, combine. Not the pre-MLP norm, the attention or the residual add.
  std::vector<OpCost> moe;
  bool in = false;
  for (const OpCost& op : layer) {
    in = in || op.name == "moe_router";
    if (in) moe.push_back(op);
    if (op.name == "moe_unpermute") in = false;
  }
  REQUIRE(moe.size() >= 6);
  CHECK(moe.front().name == "moe_router");
  CHECK(moe.back().name == "moe_unpermute");
  const LayerCompute none = layer_compute(compute, layer, Recompute::None, 0);
  const LayerCompute rerun = layer_compute(compute, layer, Recompute::None, kRecomputeMoe);
  CHECK(rerun.fwd == doctest::Approx(none.fwd));
  CHECK(rerun.bwd - none.bwd == doctest::Approx(compute.ops_time(moe, Pass::Forward).seconds()));
  // The rerun includes the forward's token-count sync and the experts' GEMMs: a large share of the forward.
  CHECK(rerun.bwd - none.bwd > 0.3 * none.fwd);
  CHECK(rerun.bwd - none.bwd < none.fwd);
  // With "moe_act" beside it the activation is not rerun twice.
  CHECK(layer_compute(compute, layer, Recompute::None, kRecomputeMoe | kRecomputeMoeAct).bwd == doctest::Approx(rerun.bwd));
  // Under full recompute the module adds nothing.
  CHECK(layer_compute(compute, layer, Recompute::Full, kRecomputeMoe).bwd ==
        doctest::Approx(layer_compute(compute, layer, Recompute::Full, 0).bwd));
}

TEST_CASE("workloads::plan_stage_costs: recompute_modules moe repeats the dispatch and combine all-to-alls in the backward") {
  OneNodeEp8 f;
  const auto chunk = [&](Recompute recompute, unsigned modules) { return f.chunk(recompute, modules); };
  const ChunkCost none = chunk(Recompute::None, 0), moe = chunk(Recompute::None, kRecomputeMoe);
  const ChunkCost full = chunk(Recompute::Full, 0);
  REQUIRE(none.fwd_ep > 0);
  CHECK(moe.fwd_ep == doctest::Approx(none.fwd_ep));
  // The forward also all-gathers the token counts (dropless alltoall dispatcher, moe_test.cpp); the
  // backward reruns the whole forward, then runs its own dispatch and combine.
  CHECK(none.bwd_ep < none.fwd_ep);
  CHECK(moe.bwd_ep == doctest::Approx(none.fwd_ep + none.bwd_ep));
  CHECK(moe.bwd_ep == doctest::Approx(full.bwd_ep));
  CHECK(moe.bwd_ep_bytes == doctest::Approx(2.0 * none.bwd_ep_bytes));
  // "layernorm" and "moe_act" leave the all-to-alls alone.
  CHECK(chunk(Recompute::None, kRecomputeLayernorm | kRecomputeMoeAct).bwd_ep == doctest::Approx(none.bwd_ep));
}
