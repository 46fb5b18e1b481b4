// Where the collective validation misses are not (issue #10 item 4, branch coll4): on every group
// `validate --collectives` still misses, the replay of NCCL's pick already lands on NCCL's own
// cost model (tuning.cc: latency + bytes / algBw, NcclResult::nccl_model_us), so the measured
// shortfall is a gap between the logs and NCCL's model, not a step of NCCL's algorithm the
// replay leaves out. Each case would fail if the replay drifted from NCCL's model at these sizes,
// or if the tuner picked another algorithm than the one the misses were analysed under.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_runner.h"

using namespace clustersim;
using workloads::CollectiveOp;
using workloads::Protocol;

namespace {
using Cluster = testing::CollectiveCluster;
constexpr double kMiB = 1048576.0;

topology::ClusterSpec spec_of(const std::string& preset, int nodes) {
  topology::ClusterSpec s;
  s.node = *topology::find_node_preset(preset);
  s.nodes = nodes;
  return s;
}

workloads::CollectiveResult run_auto(const Cluster& c, CollectiveOp op, int gpus, double bytes) {
  workloads::CollectiveRequest req;
  req.op = op;
  req.algo = workloads::CollectiveAlgo::Auto;
  for (int r = 0; r < gpus; ++r) req.ranks.push_back(r);
  req.bytes = sim::Bytes{bytes};
  return workloads::simulate_collective(c.env, req);
}

// Simulated time over NCCL's own model time for its choice.
double ratio_to_nccl(const workloads::CollectiveResult& r) {
  REQUIRE(r.nccl_model_us > 0);
  return r.time.us() / r.nccl_model_us;
}
}  // namespace

TEST_CASE("workloads::collectives: 4 of the 8 H100 GPUs replay ring all-gather/reduce-scatter at NCCL's own cost (the 4-GPU miss is outside NCCL's model)") {
  const Cluster h100(spec_of("hgx-h100-8x", 1));
  for (CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    for (double mib : {32.0, 256.0, 1024.0}) {
      INFO(workloads::to_string(op) << " " << mib << " MiB");
      const workloads::CollectiveResult r = run_auto(h100, op, 4, mib * kMiB);
      CHECK(r.algo == workloads::CollectiveAlgo::Ring);
      CHECK(r.protocol == Protocol::Simple);
      // Measured (xxrjun log, G4 on the 8-GPU node): 109.6 us at 32 MiB all-gather, 1.24x NCCL's
      // 88.5 us; the replay must stay on NCCL's model, not drift towards either.
      CHECK(std::abs(ratio_to_nccl(r) - 1.0) < 0.05);
    }
  }
}

TEST_CASE("workloads::collectives: across 2 Polaris nodes the >= 64 MiB all-reduce replays at NCCL's own Ring/Simple cost, bound by the GPU's PCIe path") {
  const Cluster polaris(spec_of("polaris-a100-4x", 2));
  for (double mib : {64.0, 256.0, 1024.0}) {
    INFO(mib << " MiB");
    const workloads::CollectiveResult r = run_auto(polaris, CollectiveOp::AllReduce, 8, mib * kMiB);
    CHECK(r.algo == workloads::CollectiveAlgo::Ring);
    CHECK(r.protocol == Protocol::Simple);
    CHECK(std::abs(ratio_to_nccl(r) - 1.0) < 0.05);
    // NCCL's search: 2 NICs x 24 GB/s (speed array entry under the 24 GB/s Gen4 x16 path): busbw
    // at most 48 GB/s; the logs plateau at 36 (0.75 of NCCL's own model, both NCCL 2.18 and 2.21).
    const double busbw = mib * kMiB / r.time.seconds() / 1e9 * workloads::busbw_factor(CollectiveOp::AllReduce, 8);
    CHECK(busbw < 48.0);
    CHECK(busbw > 0.9 * 48.0);
  }
}

TEST_CASE("workloads::collectives: DGX A100 all-reduce at 64-256 MiB replays at NCCL's own cost, not at the log's 1.3x slower times") {
  const Cluster a100(spec_of("dgx-a100-80gb", 1));
  for (double mib : {64.0, 128.0, 256.0}) {
    INFO(mib << " MiB");
    const workloads::CollectiveResult r = run_auto(a100, CollectiveOp::AllReduce, 8, mib * kMiB);
    CHECK(r.algo == workloads::CollectiveAlgo::Ring);
    CHECK(std::abs(ratio_to_nccl(r) - 1.0) < 0.05);
  }
}
