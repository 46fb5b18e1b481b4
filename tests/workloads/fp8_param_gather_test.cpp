// [sync] fp8_param_gather: the distributed optimizer's parameter all-gathers carry the fp8 linears'
// weights at 1 byte and the rest (embeddings, final norm, router, bf16 layers) at 2
// (workloads/training/iteration_run.h param_bytes). mixtral-8x7b (4 layers) at fp8, dp 16, ep 4 on
// two DGX H100 nodes: dense buckets gathered over 16 ranks, expert buckets over 4.
#include <doctest/doctest.h>

#include "topology/catalog.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/stage_costs.h"
#include "iteration_fixture.h"

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
  testing::Job job = testing::small_moe_job();
  job.parallel.distributed_optimizer = true;
  job.training.precision = topology::Precision::Fp8;
  job.training.bf16_layers_at_start = bf16_first_layers;
  job.sync.fp8_param_gather = fp8_param_gather;
  Gathers out;
  out.model = job.model;
  out.training = job.training;
  const IterationResult result = testing::simulate_job(job, {.timeline = true, .explain = true});
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
