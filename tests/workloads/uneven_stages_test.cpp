// Uneven pipeline stages (Megatron's first/last stage layer counts): ParallelSpec::layers_on_stage
// against the even split and a hand count, the stage costs it gives each rank, the pipeline that
// runs them, and the memory model's most loaded stage.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "iteration_fixture.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/fit.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

ParallelSpec split(int pp, int first, int last) {
  ParallelSpec p;
  p.pp = pp;
  p.first_stage_layers = first;
  p.last_stage_layers = last;
  return p;
}

int total_layers(const ParallelSpec& p, int layers) {
  int sum = 0;
  for (int s = 0; s < p.pp; ++s) sum += p.layers_on_stage(layers, s);
  return sum;
}

// Llama 3 405B's shape, seq 8192, on TP 8 x PP 16 (Dubey et al. 2024, Table 4).
MemoryRequest llama3_405b(int first, int last) {
  MemoryRequest q;
  q.model = *find_model_preset("llama3-405b");
  q.model.seq_len = 8192;
  q.parallel = split(16, first, last);
  q.parallel.tp = 8;
  q.parallel.dp = 128;
  q.parallel.sequence_parallel = true;
  q.parallel.zero = 2;
  q.training.global_batch = 2048;
  q.training.micro_batch = 1;
  q.capacity = sim::Bytes{80e9};
  return q;
}

}  // namespace

TEST_CASE("workloads::ParallelSpec::layers_on_stage: without first/last counts every stage holds layers / pp") {
  ParallelSpec p;
  p.pp = 8;
  for (int s = 0; s < 8; ++s) CHECK(p.layers_on_stage(96, s) == 12);
  CHECK_FALSE(p.uneven_stages());
}

TEST_CASE("workloads::ParallelSpec::layers_on_stage: Llama 3 405B and BLOOM's published splits, stage by stage") {
  // 126 = 7 + 14 x 8 + 7 (Llama 3, Section 3.3.2); 70 = 5 + 10 x 6 + 5 (BLOOM tr11-176B-ml).
  const ParallelSpec llama = split(16, 7, 7);
  CHECK(llama.layers_on_stage(126, 0) == 7);
  for (int s = 1; s < 15; ++s) CHECK(llama.layers_on_stage(126, s) == 8);
  CHECK(llama.layers_on_stage(126, 15) == 7);
  const ParallelSpec bloom = split(12, 5, 5);
  CHECK(bloom.layers_on_stage(70, 0) == 5);
  CHECK(bloom.layers_on_stage(70, 6) == 6);
  CHECK(bloom.layers_on_stage(70, 11) == 5);
  // Only one end given: the other stages share the rest, the last included.
  const ParallelSpec first_only = split(4, 3, 0);
  CHECK(first_only.layers_on_stage(30, 0) == 3);
  CHECK(first_only.layers_on_stage(30, 3) == 9);
  const ParallelSpec last_only = split(4, 0, 6);
  CHECK(last_only.layers_on_stage(30, 0) == 8);
  CHECK(last_only.layers_on_stage(30, 3) == 6);
}

TEST_CASE("workloads::ParallelSpec::layers_on_stage: every valid split adds up to the model's layers") {
  int checked = 0;
  for (int layers = 2; layers <= 130; ++layers) {
    for (int pp = 2; pp <= 16; ++pp) {
      for (int first = 0; first <= layers; ++first) {
        for (int last : {0, 1, first, layers - first - (pp - 2)}) {
          if (last < 0 || first + last > layers) continue;
          const int middle_stages = pp - (first > 0) - (last > 0);
          const int middle_layers = layers - first - last;
          const bool valid = middle_stages == 0 ? middle_layers == 0
                                                : middle_layers >= middle_stages && middle_layers % middle_stages == 0;
          if (!valid) continue;
          const ParallelSpec p = split(pp, first, last);
          INFO("layers ", layers, " pp ", pp, " first ", first, " last ", last);
          CHECK(total_layers(p, layers) == layers);
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 1000);
}

TEST_CASE("workloads::plan_stage_costs: the first and last ranks' passes carry fewer layers plus the embedding and head") {
  // gpt3-13b (40 layers) on 4 DGX A100 nodes, tp 8, pp 4: 9 + 11 + 11 + 9.
  const testing::BuiltCluster cluster(testing::nodes_of("dgx-a100-80gb", 4));
  const ModelSpec model = testing::model_preset("gpt3-13b");
  ParallelSpec par = split(4, 9, 9);
  par.tp = 8;
  TrainingSpec tr;
  tr.global_batch = 16;
  tr.micro_batch = 1;
  const ComputeModel compute = cluster.compute(tr.precision);
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  CollectiveMemo memo(cluster.collectives());
  const StageCosts c =
      plan_stage_costs(StageCostInputs{model, par, tr, compute, layout, memo, CollectiveAlgo::Ring, 1, 16});
  REQUIRE(c.chunks.size() == 4);
  CHECK(c.chunks[0].layers == 9);
  CHECK(c.chunks[1].layers == 11);
  CHECK(c.chunks[2].layers == 11);
  CHECK(c.chunks[3].layers == 9);
  // A middle pass is 11 identical layers; the ends are 9 of them plus their extra ops.
  const double layer_fwd = c.chunks[1].fwd_compute / 11;
  CHECK(c.chunks[2].fwd_compute == doctest::Approx(c.chunks[1].fwd_compute));
  CHECK(c.chunks[0].fwd_compute > 9 * layer_fwd);
  CHECK(c.chunks[3].fwd_compute > 9 * layer_fwd);
  CHECK(c.chunks[0].fwd_compute < c.chunks[1].fwd_compute);  // the embedding lookup is cheap
  // The output head (logits GEMM over a 51,200 vocabulary + loss) costs more than the lookup.
  CHECK(c.chunks[3].fwd_compute - 9 * layer_fwd > c.chunks[0].fwd_compute - 9 * layer_fwd);
  CHECK(c.chunks[0].fwd_comm == doctest::Approx(c.chunks[1].fwd_comm * 9 / 11));
  const double layer_params = model.layer_parameters() / 8;
  CHECK(c.chunks[1].params == doctest::Approx(11 * layer_params));
  CHECK(c.chunks[0].params == doctest::Approx(9 * layer_params + model.embedding_parameters() / 8));
}

TEST_CASE("workloads::simulate_iteration: lighter end stages shorten an iteration whose ends carry the embedding and head") {
  // gpt3-13b with a 256k vocabulary on pp 4: the logits GEMM is 2hV / (24h + 4s) ~ 3.9 layers of
  // FLOPs, so the last stage is the slowest; moving one layer from each end stage to the middle
  // (9 + 11 + 11 + 9 instead of 10 x 4) shortens it, and the slowest stage sets 1F1B's pace.
  auto run = [](int first, int last) {
    testing::Job j;
    j.cluster = testing::nodes_of("dgx-a100-80gb", 4);
    j.model = testing::model_preset("gpt3-13b");
    j.model.vocab = 256000;
    j.parallel = split(4, first, last);
    j.parallel.tp = 8;
    j.training.global_batch = 32;
    j.training.micro_batch = 1;
    return testing::simulate_job(j);
  };
  const IterationResult even = run(0, 0);
  const IterationResult uneven = run(9, 9);
  INFO("even ", even.iteration_time_s, " s, uneven ", uneven.iteration_time_s, " s");
  CHECK(uneven.iteration_time_s < even.iteration_time_s);
  CHECK(uneven.model_flops == doctest::Approx(even.model_flops));
}

TEST_CASE("workloads::estimate_memory: with Llama 3's 7 + 14 x 8 + 7 split the peak is stage 1, not stage 0") {
  // Stage 0: 7 layers x 16 micro-batches in flight + the embedding; stage 1: 8 layers x 15. At
  // ~0.5 GB of activations per layer and micro-batch, 8 x 15 = 120 > 7 x 16 = 112 layer-batches.
  const MemoryRequest q = llama3_405b(7, 7);
  const MemoryBreakdown peak = estimate_memory(q);
  CHECK(peak.stage == 1);
  CHECK(peak.stage_reason == "uneven stages: its 8 layers with 15 micro-batches in flight outweigh every other stage's");
  for (int s = 0; s < q.parallel.pp; ++s) CHECK(stage_memory(q, s).total <= peak.total);
  CHECK(stage_memory(q, 0).total < peak.total);
  // The fit replays the same stage through the caching allocator.
  const MemoryFit fit = fit_memory(q, false);
  CHECK(fit.breakdown.stage == 1);
  CHECK(fit.fits);
}

TEST_CASE("workloads::estimate_memory: an even split keeps the first stage as the peak, with its reason") {
  MemoryRequest q = llama3_405b(0, 0);
  q.model.layers = 128;
  const MemoryBreakdown peak = estimate_memory(q);
  CHECK(peak.stage == 0);
  CHECK(peak.stage_reason.find("first pipeline stage") == 0);
}

TEST_CASE("workloads::ParallelSpec::layers_on_stage: a split the loader refuses still adds up (the first stages take the rest)") {
  ParallelSpec p;
  p.pp = 5;
  CHECK(total_layers(p, 96) == 96);  // 20 + 19 x 4
  CHECK(p.layers_on_stage(96, 0) == 20);
  CHECK(p.layers_on_stage(96, 4) == 19);
  CHECK(total_layers(split(4, 3, 0), 30) == 30);  // 3 + 9 + 9 + 9
  CHECK(total_layers(split(5, 2, 2), 31) == 31);  // 2 + 9 + 9 + 9 + 2
}
