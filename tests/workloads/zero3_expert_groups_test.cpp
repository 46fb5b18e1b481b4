// ZeRO-3 / Megatron-FSDP with expert parallelism: the routed experts' parameters are gathered and
// their gradients reduce-scattered on the expert-data-parallel groups, after the dense parameters'
// on the data-parallel ones (layer_zero3), and their states shard over edp ranks (the memory model).
// Mixtral 8x7B cut to 4 layers on two DGX H100 at dp 16, ep 4: edp 4, groups {0, 4, 8, 12} ...
#include <doctest/doctest.h>

#include <vector>

#include "iteration_fixture.h"
#include "workloads/memory/memory_model.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

// A rank's routed expert parameters in one layer of the job (every Mixtral layer is MoE).
double rank_expert_params(const testing::Job& j) { return j.model.expert_parameters() / j.parallel.ep / j.parallel.expert_tp(); }

// The rest of a layer's parameters on a rank.
double rank_dense_params(const testing::Job& j) {
  return j.model.layer_parameters_per_ep_rank(j.parallel.ep) / j.parallel.tp - rank_expert_params(j);
}

testing::Job zero3_job() {
  testing::Job j = testing::small_moe_job();
  j.parallel.zero = 3;
  return j;
}

}  // namespace

TEST_CASE("workloads::plan_stage_costs: ZeRO-3 gathers and reduce-scatters expert parameters on the expert-data-parallel groups") {
  const testing::Job j = zero3_job();
  const testing::BuiltCluster cluster(j.cluster);
  const ComputeModel compute = cluster.compute(j.training.precision);
  CollectiveMemo memo(cluster.collectives());
  const ParallelLayout layout{j.parallel.tp, j.parallel.dp, j.parallel.pp, j.parallel.cp};
  const StageCosts costs =
      plan_stage_costs(StageCostInputs{j.model, j.parallel, j.training, compute, layout, memo, CollectiveAlgo::Ring, 1, 1});
  REQUIRE(costs.chunks.size() == 1);
  const ChunkCost& c = costs.chunks[0];
  // The groups written out: every GPU for the dense part, one GPU in four for the experts.
  std::vector<int> all;
  for (int g = 0; g < 16; ++g) all.push_back(g);
  const std::vector<std::vector<int>> dense{all};
  const std::vector<std::vector<int>> experts{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}};
  const double weight = 2.0, grad = bucket_grad_bytes(j.training);
  auto seconds = [&](CollectiveOp op, const std::vector<std::vector<int>>& groups, double bytes) {
    return memo.concurrent(op, CollectiveAlgo::Ring, groups, sim::Bytes{bytes}).seconds();
  };
  const double gather = seconds(CollectiveOp::AllGather, dense, rank_dense_params(j) * weight) +
                        seconds(CollectiveOp::AllGather, experts, rank_expert_params(j) * weight);
  const double scatter = seconds(CollectiveOp::ReduceScatter, dense, rank_dense_params(j) * grad) +
                         seconds(CollectiveOp::ReduceScatter, experts, rank_expert_params(j) * grad);
  CHECK(c.fwd_dp == doctest::Approx(c.layers * gather).epsilon(1e-12));
  CHECK(c.bwd_dp == doctest::Approx(c.layers * (gather + scatter)).epsilon(1e-12));
  // On the data-parallel group with all the layer's bytes (what it did before) it would differ.
  const double dense_only =
      seconds(CollectiveOp::AllGather, dense, j.model.layer_parameters_per_ep_rank(j.parallel.ep) / j.parallel.tp * weight);
  CHECK(c.fwd_dp != doctest::Approx(c.layers * dense_only).epsilon(1e-6));
}

TEST_CASE("workloads::simulate_iteration: ZeRO-3's expert bytes a GPU sends are its own experts' over edp ranks") {
  const testing::Job j = zero3_job();
  const IterationResult r = testing::simulate_job(j);
  const double m = j.training.micro_batches_per_replica(j.parallel.dp);
  const double grad = bucket_grad_bytes(j.training);
  // Gather (2 B) before forward and backward, reduce-scatter (grad bytes) after backward, (n-1)/n each.
  const double expert = j.model.layers * m * rank_expert_params(j) * (2 * 2.0 + grad) * 3 / 4;
  const double dense = j.model.layers * m * rank_dense_params(j) * (2 * 2.0 + grad) * 15 / 16;
  CHECK(r.expert_dp_bytes_per_gpu == doctest::Approx(expert).epsilon(1e-9));
  CHECK(r.dp_bytes_per_gpu == doctest::Approx(dense + expert).epsilon(1e-9));
}

TEST_CASE("workloads::memory model: expert states shard over the expert-data-parallel group, context parallelism included") {
  // tp 1 x cp 2 x dp 8 with ep 4: edp = cp x dp / ep = 4, and the expert grid has no cp of its own,
  // so ZeRO-3's expert weight shard is 1/4 (1/8 with cp counted twice).
  MemoryRequest q;
  q.model = testing::model_preset("mixtral-8x7b");
  q.model.layers = 4;
  q.parallel.dp = 8;
  q.parallel.cp = 2;
  q.parallel.ep = 4;
  q.parallel.zero = 3;
  q.training.precision = topology::Precision::Bf16;
  const MemoryBreakdown b = stage_memory(q, 0);
  const MemoryLine* weights = b.find_line("routed experts (/ep): weights");
  REQUIRE(weights != nullptr);
  const double params = q.model.layers * q.model.expert_parameters() / 4;
  CHECK(weights->bytes.value == doctest::Approx(params * 2.0 / 4));
  const MemoryLine* grads = b.find_line("routed experts (/ep): gradients");
  REQUIRE(grads != nullptr);
  CHECK(grads->bytes.value == doctest::Approx(params * state_bytes_per_param(q.training).grads / 4));
}
