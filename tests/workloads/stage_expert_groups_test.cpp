// Each pipeline stage's expert all-to-all runs over that stage's own expert-parallel groups: a
// stage whose groups straddle two nodes pays the inter-node all-to-all even when stage 0's groups
// sit inside one node (the stage costs once charged every stage with stage 0's groups).
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

TEST_CASE("workloads::plan_stage_costs: a stage whose expert groups straddle nodes is charged the inter-node all-to-all") {
  // Two 6-GPU H100 nodes (NVSwitch inside, NDR 400 between), 8 ranks: pp 2 x dp 4, ep 4.
  // Stage 0 is ranks 0-3 (node 0); stage 1 is ranks 4-7, two on each node.
  topology::ClusterSpec spec = testing::nodes_of("dgx-h100", 2);
  spec.node.gpus = 6;
  spec.node.nics = 6;
  spec.node.sockets = 3;
  spec.gpus = 8;
  testing::StageRig rig(spec, "mixtral-8x7b", 8);  // every layer MoE, 16 per stage
  ParallelSpec par;
  par.pp = 2;
  par.dp = 4;
  par.ep = 4;
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  const StageCosts costs = rig.plan(rig.model, par, rig.tr, layout, 2);
  REQUIRE(costs.chunks.size() == 2);
  REQUIRE(costs.chunks[0].layers == costs.chunks[1].layers);
  // The same bytes on both stages; stage 1's cross the 50 GB/s NICs instead of NVLink (450 GB/s).
  CHECK(costs.chunks[1].fwd_ep_bytes == doctest::Approx(costs.chunks[0].fwd_ep_bytes));
  CHECK(costs.chunks[0].fwd_ep > 0);
  CHECK(costs.chunks[1].fwd_ep > 2.0 * costs.chunks[0].fwd_ep);
  CHECK(costs.chunks[1].bwd_ep > 2.0 * costs.chunks[0].bwd_ep);
}
