// Tensor parallelism without sequence parallelism ([sync] tp_async_dgrad_allreduce): the backward's
// all-reduce of a column-parallel linear's input gradient runs beside its wgrad GEMM (Megatron-Core
// allreduce_dgrad, TE layernorm_linear.py), so only what outlasts the wgrad GEMM blocks; the
// forward's all-reduce of the row-parallel output blocks either way.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/overlap.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

TEST_CASE("workloads::plan_stage_costs: without sequence parallelism the dgrad all-reduce hides behind the wgrad GEMM") {
  // gpt3-13b at tp 8 on one DGX H100, no sequence parallelism: two all-reduces a layer and pass.
  testing::StageRig rig(testing::nodes_of("dgx-h100", 1), "gpt3-13b", 8);
  ParallelSpec par;
  par.tp = 8;
  par.sequence_parallel = false;
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  const auto costs = [&](bool async) {
    StageCostInputs in{rig.model, par, rig.tr, rig.compute, layout, rig.memo, CollectiveAlgo::Ring, 1, 8};
    in.tp_async_dgrad_allreduce = async;
    return plan_stage_costs(in).chunks.front();
  };
  const ChunkCost blocking = costs(false), async = costs(true);
  CHECK(blocking.bwd_tp == doctest::Approx(blocking.fwd_tp));  // one all-reduce a side each way
  CHECK(blocking.bwd_tp_hidden == 0.0);
  CHECK(async.fwd_tp == doctest::Approx(blocking.fwd_tp));
  CHECK(async.fwd_comm == doctest::Approx(blocking.fwd_comm));
  // Some of the backward's all-reduce now runs beside the wgrad GEMMs: exposed + hidden is the
  // blocking charge, and the hidden part is real.
  CHECK(async.bwd_tp < blocking.bwd_tp);
  CHECK(async.bwd_tp_hidden > 0.0);
  CHECK(async.bwd_tp + async.bwd_tp_hidden == doctest::Approx(blocking.bwd_tp));
  CHECK(async.bwd_comm == doctest::Approx(blocking.bwd_comm - async.bwd_tp_hidden));
  CHECK(async.bwd_compute == doctest::Approx(blocking.bwd_compute));
  // The bytes do not change.
  CHECK(async.bwd_tp_bytes == doctest::Approx(blocking.bwd_tp_bytes));
}

TEST_CASE("workloads::tp_dgrad_collective_exposed_s: the reduce-scatter rule for any dgrad collective") {
  const testing::BuiltCluster cluster(testing::nodes_of("dgx-h100", 1));
  const ComputeModel cm = cluster.compute(topology::Precision::Bf16);
  OpShape shape;
  shape.seq_len = 4096;
  shape.tp = 4;
  const std::vector<OpCost> layer = layer_ops(*find_model_preset("llama2-70b"), shape);
  for (double comm_s : {1e-7, 1e-3, 1.0}) {
    TpPassComm bwd;
    bwd.scatter_s = comm_s;
    for (TpSides sides : {TpSides::Both, TpSides::Attention, TpSides::Mlp})
      CHECK(tp_dgrad_collective_exposed_s(cm, layer, comm_s, sides) ==
            doctest::Approx(tp_dgrad_scatter_exposed_s(cm, layer, bwd, sides)));
  }
  CHECK(tp_dgrad_collective_exposed_s(cm, layer, 1.0, TpSides::Both) > 1.0);  // a second is far past both wgrads
  CHECK(tp_dgrad_collective_exposed_s(cm, layer, 1e-7, TpSides::Both) == 0.0);
}

TEST_CASE("workloads::plan_stage_costs: delay_wgrad_compute leaves the dgrad reduce-scatter nothing to hide behind") {
  // TE puts the wgrad GEMM in its WeightGradStore and waits for the reduce-scatter after the dgrad.
  testing::StageRig rig(testing::nodes_of("dgx-h100", 1), "gpt3-13b", 8);
  const auto costs = [&](bool delay) {
    ParallelSpec par;
    par.tp = 8;
    par.sequence_parallel = true;
    par.delay_wgrad_compute = delay;
    const ParallelLayout layout{par.tp, par.dp, par.pp};
    return rig.plan(rig.model, par, rig.tr, layout, 8).chunks.front();
  };
  const ChunkCost now = costs(false), delayed = costs(true);
  CHECK(delayed.fwd_tp == doctest::Approx(now.fwd_tp));
  CHECK(delayed.bwd_tp > now.bwd_tp);
  CHECK(delayed.bwd_tp_hidden < now.bwd_tp_hidden);
  // The re-gather still hides behind the dgrad: only the reduce-scatter's cover moves.
  CHECK(delayed.bwd_tp + delayed.bwd_tp_hidden == doctest::Approx(now.bwd_tp + now.bwd_tp_hidden));
  CHECK(delayed.bwd_tp_hidden > 0.0);
}
