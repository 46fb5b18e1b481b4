// [sync] fp8_param_gather: the distributed optimizer's parameter all-gathers carry the fp8 linears'
// weights at 1 byte and the rest (embeddings, final norm, router, bf16 layers) at 2
// (workloads/training/iteration_run.h param_bytes). mixtral-8x7b (4 layers) at fp8, dp 16, ep 4 on
// two DGX H100 nodes: dense buckets gathered over 16 ranks, expert buckets over 4.
#include <doctest/doctest.h>

#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

struct Gathers {
  ModelSpec model;
  TrainingSpec training;
  StageExplanation x;
  double gathered = 0;  // bytes rank 0 sends in its parameter all-gathers
};

Gathers run(bool fp8_param_gather, int bf16_first_layers = 0) {
  const topology::NodeSpec* node = topology::find_node_preset("dgx-h100");
  const ModelSpec* preset = find_model_preset("mixtral-8x7b");
  REQUIRE(node != nullptr);
  REQUIRE(preset != nullptr);
  topology::ClusterSpec cluster;
  cluster.node = *node;
  cluster.nodes = 2;
  Gathers out;
  out.model = *preset;
  out.model.layers = 4;
  out.model.seq_len = 256;
  ParallelSpec parallel;
  parallel.dp = 16;
  parallel.ep = 4;
  parallel.distributed_optimizer = true;
  out.training.global_batch = 16;
  out.training.micro_batch = 1;
  out.training.precision = topology::Precision::Fp8;
  out.training.bf16_layers_at_start = bf16_first_layers;
  SyncSpec sync;
  sync.bucket_params = 40e6;
  sync.fp8_param_gather = fp8_param_gather;
  const topology::GpuSpec* gpu = topology::find_gpu(cluster.node.gpu);
  REQUIRE(gpu != nullptr);
  const topology::Topology topo = topology::build_cluster(cluster);
  const topology::Router router(topo);
  const ComputeModel compute(*gpu, cluster, out.training.precision, ComputeConstants{});
  IterationInputs in{topo, router, *gpu, compute, out.model, parallel, out.training, sync, false, true};
  in.explain = true;
  sim::InvariantReport invariants;
  in.invariants = &invariants;
  const IterationResult result = simulate_iteration(in);
  CHECK_MESSAGE(invariants.all_hold(), invariants.summary());
  REQUIRE(!result.explained.empty());
  out.x = result.explained[0];
  for (const TimelineSpan& s : result.timeline)
    if (s.kind == SpanKind::DataParallel && s.rank == 0 && s.name == "all-gather") out.gathered += s.bytes;
  return out;
}

}  // namespace

TEST_CASE("workloads::simulate_iteration: fp8_param_gather gathers the fp8 linears' weights at 1 byte") {
  const Gathers bf16 = run(false), fp8 = run(true);
  const double grad = bucket_grad_bytes(fp8.training);
  const double dense = fp8.x.dp_bucket_bytes / grad, experts = fp8.x.expert_bucket_bytes / grad;
  REQUIRE(dense > 0);
  REQUIRE(experts > 0);
  // Without the key every parameter goes at 2 bytes.
  CHECK(bf16.gathered == doctest::Approx(2 * (dense * 15 / 16 + experts * 3 / 4)).epsilon(1e-9));
  // With it: the routed experts all at 1 byte; of the dense buckets, the layers' weights but the
  // router's at 1 byte, the embeddings, final norm and router at 2.
  const ModelSpec& m = fp8.model;
  const double fp8_dense = m.layers * (m.moe_layer_dense_parameters() - m.hidden * static_cast<double>(m.experts));
  REQUIRE(fp8_dense < dense);
  const double expected = (2 * dense - fp8_dense) * 15 / 16 + experts * 3 / 4;
  CHECK(fp8.gathered == doctest::Approx(expected).epsilon(1e-9));
  CHECK(fp8.gathered < 0.6 * bf16.gathered);
}

TEST_CASE("workloads::simulate_iteration: fp8_param_gather leaves layers kept in bf16 at 2 bytes") {
  const Gathers all = run(true), first_bf16 = run(true, 1);
  const ModelSpec& m = all.model;
  // One of four layers in bf16: its weights but the router's, and its experts, go at 2 bytes again.
  const double layer_dense = m.moe_layer_dense_parameters() - m.hidden * static_cast<double>(m.experts);
  const double layer_experts = m.expert_parameters() / 4;
  CHECK(first_bf16.gathered - all.gathered == doctest::Approx(layer_dense * 15 / 16 + layer_experts * 3 / 4).epsilon(1e-9));
}
