// An explicit per-chunk layout (ParallelSpec::stage_layers) sets what each pipeline rank's passes
// carry: the stage costs follow the listed counts, not the even split.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

TEST_CASE("workloads::plan_stage_costs: stage_layers moves layers between ranks' passes") {
  // gpt3-13b (40 layers) on 4 DGX A100 nodes, tp 8, pp 4: even 10 x 4 against 9 + 12 + 10 + 9.
  testing::StageRig rig(testing::nodes_of("dgx-a100-80gb", 4), "gpt3-13b", 16);
  auto costs = [&](const std::vector<int>& stage_layers) {
    ParallelSpec par;
    par.pp = 4;
    par.tp = 8;
    par.stage_layers = stage_layers;
    const ParallelLayout layout{par.tp, par.dp, par.pp};
    return rig.plan(rig.model, par, rig.tr, layout, 16);
  };
  const StageCosts even = costs({});
  const StageCosts listed = costs({9, 12, 10, 9});
  REQUIRE(listed.chunks.size() == 4);
  CHECK(listed.chunks[0].layers == 9);
  CHECK(listed.chunks[1].layers == 12);
  CHECK(listed.chunks[2].layers == 10);
  CHECK(listed.chunks[3].layers == 9);
  // Stage 2 holds 10 in both; stage 1's pass grows by two layers' work.
  CHECK(listed.chunks[2].fwd_compute == doctest::Approx(even.chunks[2].fwd_compute));
  const double layer_fwd = even.chunks[2].fwd_compute / 10;
  CHECK(listed.chunks[1].fwd_compute == doctest::Approx(even.chunks[1].fwd_compute + 2 * layer_fwd));
  CHECK(listed.chunks[0].fwd_compute < even.chunks[0].fwd_compute);
}
