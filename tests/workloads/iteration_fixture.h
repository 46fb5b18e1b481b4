// A built cluster and a simulated training iteration, for the workloads tests that plan stage
// costs or simulate iterations from the topology and workloads APIs directly: a cluster of catalog
// nodes, its GPU, topology and router, the compute model at a precision (default constants unless
// given), the collective environment plan_stage_costs' memo reads (no graph hints), and one
// iteration of a job with the six invariants (docs/model.md) checked. The topology, router and GPU
// belong to the BuiltCluster: keep it alive while anything built over it is used.
#pragma once

#include <doctest/doctest.h>

#include <string_view>
#include <utility>

#include "sim/invariant_report.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/stage_costs.h"

namespace clustersim::testing {

// `nodes` servers of a catalog node preset on the node's default fabric (topology::preset_cluster
// names the fat-tree instead); the test stops when the preset is unknown.
inline topology::ClusterSpec nodes_of(std::string_view preset, int nodes = 1) {
  const topology::NodeSpec* node = topology::find_node_preset(preset);
  REQUIRE_MESSAGE(node != nullptr, preset);
  topology::ClusterSpec c;
  c.node = *node;
  c.nodes = nodes;
  return c;
}

// A catalog model preset; the test stops when the name is unknown.
inline workloads::ModelSpec model_preset(std::string_view name) {
  const workloads::ModelSpec* m = workloads::find_model_preset(name);
  REQUIRE_MESSAGE(m != nullptr, name);
  return *m;
}

// The GPU of a cluster's nodes; the test stops when the catalog lacks it.
inline const topology::GpuSpec& gpu_of(const topology::ClusterSpec& cluster) {
  const topology::GpuSpec* g = topology::find_gpu(cluster.node.gpu);
  REQUIRE(g != nullptr);
  return *g;
}

// A cluster built from its spec. Non-copyable: the router refers to the topology.
struct BuiltCluster {
  topology::ClusterSpec spec;
  const topology::GpuSpec& gpu;
  topology::Topology topo;
  topology::Router router;

  explicit BuiltCluster(topology::ClusterSpec s)
      : spec(std::move(s)), gpu(gpu_of(spec)), topo(topology::build_cluster(spec)), router(topo) {}
  BuiltCluster(const BuiltCluster&) = delete;
  BuiltCluster& operator=(const BuiltCluster&) = delete;

  workloads::ComputeModel compute(topology::Precision precision, workloads::ComputeConstants constants = {}) const {
    return workloads::ComputeModel(gpu, spec, precision, std::move(constants));
  }
  // The environment plan_stage_costs' collectives are memoised over: no graph hints.
  workloads::CollectiveEnvironment collectives() const {
    return workloads::CollectiveEnvironment{topo, router, gpu.compute_capability, {}};
  }
};

// What a plan_stage_costs test holds: `nodes` servers of a node preset, a model preset, a training
// spec of `global_batch` sequences at micro-batch 1 in the default precision, the compute model at
// that precision and the collective memo over the cluster. Non-copyable (the memo refers to the
// cluster); members are built in declaration order.
struct StageRig {
  BuiltCluster cluster;
  workloads::ModelSpec model;
  workloads::TrainingSpec tr;
  workloads::ComputeModel compute;
  workloads::CollectiveMemo memo;

  StageRig(topology::ClusterSpec spec, std::string_view model_name, int global_batch)
      : cluster(std::move(spec)),
        model(model_preset(model_name)),
        tr(training(global_batch)),
        compute(cluster.compute(tr.precision)),
        memo(cluster.collectives()) {}
  StageRig(const StageRig&) = delete;
  StageRig& operator=(const StageRig&) = delete;

  // plan_stage_costs for `m` under `p` and `t` on `layout`: ring data-parallel collectives, one
  // chunk a rank, `micro_batches` a step, the rest of StageCostInputs at its defaults.
  workloads::StageCosts plan(const workloads::ModelSpec& m, const workloads::ParallelSpec& p,
                             const workloads::TrainingSpec& t, const workloads::ParallelLayout& layout,
                             int micro_batches = 1) {
    return workloads::plan_stage_costs(
        workloads::StageCostInputs{m, p, t, compute, layout, memo, workloads::CollectiveAlgo::Ring, 1, micro_batches});
  }

 private:
  static workloads::TrainingSpec training(int global_batch) {
    workloads::TrainingSpec t;
    t.global_batch = global_batch;
    t.micro_batch = 1;
    return t;
  }
};

// What a scenario would say: a cluster, a model and the job's layout, training and sync settings.
struct Job {
  topology::ClusterSpec cluster;
  workloads::ModelSpec model;
  workloads::ParallelSpec parallel;
  workloads::TrainingSpec training;
  workloads::SyncSpec sync;
};

// gpt3-1.3b at a short sequence on pp x dp DGX H100 (rail-optimised fabric), tp 8: tp fills a
// node, so every data-parallel group is one GPU per node on one rail; pp stages sit on consecutive
// nodes. The live_replay and live_position_folding tests' job.
inline Job rail_job(int pp, int dp, int micro_batches, int bucket_mb = 25) {
  Job j;
  j.cluster = nodes_of("dgx-h100", pp * dp);
  j.model = model_preset("gpt3-1.3b");
  j.model.seq_len = 512;
  j.parallel.tp = 8;
  j.parallel.pp = pp;
  j.parallel.dp = dp;
  j.training.global_batch = dp * micro_batches;
  j.training.micro_batch = 1;
  j.training.precision = topology::Precision::Bf16;
  j.sync.bucket_mb = bucket_mb;
  return j;
}

// Mixtral 8x7B cut to 4 layers at sequence 256 on two DGX H100, dp 16 and ep 4 (expert-data-parallel
// groups of 4 ranks), bf16, 40 M-parameter buckets: the expert-bucket and fp8_param_gather tests' job.
inline Job small_moe_job() {
  Job j;
  j.cluster = nodes_of("dgx-h100", 2);
  j.model = model_preset("mixtral-8x7b");
  j.model.layers = 4;
  j.model.seq_len = 256;
  j.parallel.dp = 16;
  j.parallel.ep = 4;
  j.training.global_batch = 16;
  j.training.micro_batch = 1;
  j.training.precision = topology::Precision::Bf16;
  j.sync.bucket_params = 40e6;
  return j;
}

// How simulate_job runs the job (IterationInputs' switches of the same names).
struct IterationFlags {
  bool full = false;
  bool timeline = false;
  bool explain = false;
  bool fold_live_channels = true;
  bool fold_live_positions = true;
  bool replay_live_alone = true;
  // The six invariants are checked and must hold. Off only where a test compares a --full path
  // that checking switches off (live replay is planned only without invariants).
  bool check_invariants = true;
  // Where the checks write, for a test that reads them; null: a report of the call's own.
  sim::InvariantReport* report = nullptr;
};

// One iteration of `j` on its cluster built anew, the compute model at the job's precision.
inline workloads::IterationResult simulate_job(const Job& j, const IterationFlags& flags = {}) {
  const BuiltCluster c(j.cluster);
  const workloads::ComputeModel compute = c.compute(j.training.precision);
  workloads::IterationInputs in{c.topo, c.router, c.gpu, compute, j.model, j.parallel, j.training, j.sync,
                                flags.full, flags.timeline};
  in.explain = flags.explain;
  in.fold_live_channels = flags.fold_live_channels;
  in.fold_live_positions = flags.fold_live_positions;
  in.replay_live_alone = flags.replay_live_alone;
  sim::InvariantReport own;
  if (flags.check_invariants) in.invariants = flags.report != nullptr ? flags.report : &own;
  workloads::IterationResult r = workloads::simulate_iteration(in);
  if (in.invariants != nullptr) CHECK_MESSAGE(in.invariants->all_hold(), in.invariants->summary());
  return r;
}

}  // namespace clustersim::testing
