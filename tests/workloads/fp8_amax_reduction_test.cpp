// FP8 delayed scaling's amax all-reduce ([sync] fp8_amax_reduction, specs.h Fp8AmaxReduction): one
// blocking all-reduce per pass of each model chunk over the stage's tp x dp x cp ranks (or tp x cp),
// none for current or block scaling, bf16, or a group of one.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

struct AmaxRun {
  const testing::BuiltCluster cluster{testing::nodes_of("dgx-h100", 2)};
  const ModelSpec model = *find_model_preset("gpt3-13b");
  CollectiveMemo memo{cluster.collectives()};

  // gpt3-13b at tp 4, pp 2, dp 2 on 2 DGX H100 (16 GPUs): a stage holds tp x dp = 8 ranks.
  StageCosts costs(topology::Precision precision, Fp8AmaxReduction amax, double amax_bytes_per_element = 0,
                   double block_scale = 0, int dp = 2) {
    TrainingSpec tr;
    tr.global_batch = 16;
    tr.micro_batch = 1;
    tr.precision = precision;
    ComputeConstants k;
    k.set("fp8_amax_bytes_per_element", amax_bytes_per_element);
    k.set("fp8_block_scale_bytes_per_element", block_scale);
    const ComputeModel compute = cluster.compute(precision, k);
    ParallelSpec par;
    par.tp = 4;
    par.pp = 2;
    par.dp = dp;
    par.sequence_parallel = true;
    const ParallelLayout layout{par.tp, par.dp, par.pp};
    StageCostInputs in{model, par, tr, compute, layout, memo, CollectiveAlgo::Ring, 1, 8};
    in.fp8_amax = amax;
    return plan_stage_costs(in);
  }
};

}  // namespace

TEST_CASE("workloads::plan_stage_costs: fp8 delayed scaling adds one blocking amax all-reduce per chunk and pass") {
  AmaxRun run;
  const StageCosts none = run.costs(topology::Precision::Fp8, Fp8AmaxReduction::None);
  const StageCosts stage = run.costs(topology::Precision::Fp8, Fp8AmaxReduction::Stage);
  REQUIRE(stage.chunks.size() == 2);
  for (std::size_t i = 0; i < stage.chunks.size(); ++i) {
    const ChunkCost& c = stage.chunks[i];
    CHECK(none.chunks[i].fwd_amax == 0.0);
    // A latency-bound all-reduce of a few hundred bytes: microseconds, not milliseconds.
    CHECK(c.fwd_amax > 1e-6);
    CHECK(c.fwd_amax < 1e-3);
    CHECK(c.bwd_amax > 1e-6);
    CHECK(c.bwd_amax <= c.fwd_amax);  // 2 amaxes a GEMM backward against 3 forward
    // Blocking: the pass's comm grows by it, the compute does not.
    CHECK(c.fwd_comm == doctest::Approx(none.chunks[i].fwd_comm + c.fwd_amax));
    CHECK(c.bwd_comm == doctest::Approx(none.chunks[i].bwd_comm + c.bwd_amax));
    CHECK(c.fwd_compute == doctest::Approx(none.chunks[i].fwd_compute));
  }
  // --tp-only-amax-red: each replica's tp ranks (4 GPUs of one node) instead of 8 over both nodes' ranks.
  const StageCosts tp_only = run.costs(topology::Precision::Fp8, Fp8AmaxReduction::Tp);
  CHECK(tp_only.chunks[0].fwd_amax > 0.0);
  CHECK(tp_only.chunks[0].fwd_amax <= stage.chunks[0].fwd_amax);
}

TEST_CASE("workloads::plan_stage_costs: current scaling, MXFP8 and bf16 keep no amax buffer to reduce") {
  AmaxRun run;
  const auto amax_of = [](const StageCosts& c) { return c.chunks[0].fwd_amax + c.chunks[0].bwd_amax; };
  CHECK(amax_of(run.costs(topology::Precision::Fp8, Fp8AmaxReduction::Stage, 2.0)) == 0.0);        // FP8-CS
  CHECK(amax_of(run.costs(topology::Precision::Fp8, Fp8AmaxReduction::Stage, 0.0, 0.03125)) == 0.0);  // MXFP8
  CHECK(amax_of(run.costs(topology::Precision::Bf16, Fp8AmaxReduction::Stage)) == 0.0);
  // One replica: the stage's ranks are its tp ranks, so both groups are the same.
  const double tp_only = amax_of(run.costs(topology::Precision::Fp8, Fp8AmaxReduction::Tp, 0.0, 0.0, 1));
  CHECK(tp_only > 0.0);
  CHECK(tp_only == doctest::Approx(amax_of(run.costs(topology::Precision::Fp8, Fp8AmaxReduction::Stage, 0.0, 0.0, 1))));
}
