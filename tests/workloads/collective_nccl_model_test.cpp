// Flat ring and tree all-reduce on 2-16 DGX H100 at >= 64 MiB against NCCL's own cost model
// (workloads/collectives/nccl_tuner.h, NCCL 2.30.7 tuning.cc): measured NCCL rings and trees track
// that model at large sizes, so a replay on a physical fabric must land close to it. Every
// fabric a DGX cluster is built with: the SuperPOD rail-optimized default, a plain fat-tree and one
// switch.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>

#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "collective_test_util.h"
#include "workloads/collectives/collective_runner.h"

using namespace clustersim;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;

namespace {
using Cluster = testing::CollectiveCluster;

topology::ClusterSpec dgx_h100(int nodes, std::optional<topology::Fabric> fabric) {
  topology::ClusterSpec s;
  s.node = *topology::find_node_preset("dgx-h100");
  s.nodes = nodes;
  s.fabric = fabric;
  return s;
}

// A std::string, not a const char*: doctest's INFO prints a char pointer as an address.
std::string name(std::optional<topology::Fabric> f) {
  if (!f) return "default (rail-optimized)";
  return *f == topology::Fabric::FatTree ? "fat-tree" : *f == topology::Fabric::SingleSwitch ? "single-switch" : "rail-optimized";
}

constexpr std::optional<topology::Fabric> kFabrics[] = {std::nullopt, topology::Fabric::FatTree,
                                                        topology::Fabric::SingleSwitch};
constexpr double kMiB = 1048576.0;

// Simulated time / NCCL's modelled time for a flat all-reduce of `bytes` over every GPU.
double ratio_to_nccl(const Cluster& c, CollectiveAlgo algo, double bytes) {
  workloads::CollectiveRequest req;
  req.op = CollectiveOp::AllReduce;
  req.algo = algo;
  for (int r = 0; r < c.topo.gpu_count(); ++r) req.ranks.push_back(r);
  req.bytes = sim::Bytes{bytes};
  const workloads::CollectiveResult res = workloads::simulate_collective(c.env, req);
  REQUIRE(res.nccl_model_us > 0);
  return res.time.us() / res.nccl_model_us;
}

void check_within_15_percent(CollectiveAlgo algo, int nodes, std::optional<topology::Fabric> fabric,
                             std::initializer_list<double> sizes_mib) {
  const Cluster c(dgx_h100(nodes, fabric));
  for (const double mib : sizes_mib) {
    const double ratio = ratio_to_nccl(c, algo, mib * kMiB);
    INFO(workloads::to_string(algo) << " on " << nodes << " DGX H100, " << name(fabric) << ", " << mib
                                    << " MiB: simulated / NCCL model = " << ratio);
    CHECK(std::abs(ratio - 1.0) <= 0.15);
  }
}
}  // namespace

TEST_CASE("workloads::collectives: a flat ring all-reduce on 2-16 DGX H100 is within 15% of NCCL's model on every fabric (64 MiB-1 GiB up to 4 nodes, 256 MiB-1 GiB beyond)") {
  for (const int nodes : {2, 4})
    for (const auto fabric : kFabrics)
      check_within_15_percent(CollectiveAlgo::Ring, nodes, fabric, {64.0, 128.0, 256.0, 1024.0});
  for (const int nodes : {8, 10, 16})
    for (const auto fabric : kFabrics) check_within_15_percent(CollectiveAlgo::Ring, nodes, fabric, {256.0, 1024.0});
}

TEST_CASE("workloads::collectives: a 10-node DGX H100 ring all-reduce of 1 GiB gets whole NDR ports on the fat-tree") {
  // The case: 8 channels cross leaf boundaries (nodes 3|4, 7|8, 9|0); destination routing
  // puts each on its own spine cable of 50 GB/s, so the ring runs as on the rail-optimized
  // default (where it never leaves the rail leaves) instead of at half a port (187 GB/s busbw).
  const Cluster fat(dgx_h100(10, topology::Fabric::FatTree));
  const Cluster rail(dgx_h100(10, std::nullopt));
  const double r_fat = ratio_to_nccl(fat, CollectiveAlgo::Ring, 1024 * kMiB);
  const double r_rail = ratio_to_nccl(rail, CollectiveAlgo::Ring, 1024 * kMiB);
  CHECK(r_fat == doctest::Approx(r_rail).epsilon(0.02));
  CHECK(std::abs(r_fat - 1.0) <= 0.15);
}

// Was a known gap (simulated / model 0.82-0.86): the NVLink hops of each channel streamed at the
// protocol ceiling while NCCL's model charges every step at the channel's search speed
// (NcclTuner::channel_wire_cap_GBps). With that bound the replay lands at 0.97-1.0.
TEST_CASE("workloads::collectives: a flat ring all-reduce on 8-16 DGX H100 at 64-128 MiB is within 15% of NCCL's model on every fabric") {
  for (const int nodes : {8, 10, 16})
    for (const auto fabric : kFabrics) check_within_15_percent(CollectiveAlgo::Ring, nodes, fabric, {64.0, 128.0});
}

// Was a known gap on 2 nodes (0.76-0.86) and at 64 MiB: tree channels now stream at the channel's
// search speed scaled by NCCL's treeCorrectionFactor for the size (channel_wire_cap_GBps). The
// 2-node tree stays the fastest against the model (0.86 at 64 MiB and 1 GiB): its one network edge
// per channel leaves it bound by the NVLink chain, which NCCL's model does not distinguish.
TEST_CASE("workloads::collectives: a flat tree all-reduce on 2-16 DGX H100 at 64 MiB-1 GiB is within 15% of NCCL's model on every fabric") {
  for (const int nodes : {2, 4, 8, 16})
    for (const auto fabric : kFabrics)
      check_within_15_percent(CollectiveAlgo::Tree, nodes, fabric, {64.0, 256.0, 1024.0});
}

TEST_CASE("workloads::collectives: every flow of a multi-node ring or tree channel is capped at the channel's search speed on the wire") {
  // 8 DGX H100: NCCL's search gives 16 channels of 24 GB/s (48 GB/s per NIC, duplicated). At
  // 64 MiB NCCL picks LL128, whose own ceiling (36.7 GB/s payload, 39.1 on the wire) is above
  // the channel speed, so the speed binds; the tree's channel also takes treeCorrectionFactor
  // (LL128, log2(64 MiB / 64) = 20: 0.9).
  const Cluster c(dgx_h100(8, std::nullopt));
  workloads::CollectiveRequest req;
  req.op = CollectiveOp::AllReduce;
  for (int r = 0; r < c.topo.gpu_count(); ++r) req.ranks.push_back(r);
  req.bytes = sim::Bytes{64 * kMiB};
  const auto g = workloads::nccl_graph(c.topo, c.router, req.ranks, c.env.gpu_compute_capability, c.env.hints);
  REQUIRE(g.bw_inter_GBps == doctest::Approx(24.0));
  req.algo = CollectiveAlgo::Ring;
  const workloads::CollectivePlan ring = workloads::plan_collective(c.env, req);
  REQUIRE(ring.protocol == workloads::Protocol::LL128);
  CHECK(ring.channel_rate_cap == doctest::Approx(24.0e9));
  req.algo = CollectiveAlgo::Tree;
  const workloads::CollectivePlan tree = workloads::plan_collective(c.env, req);
  REQUIRE(tree.protocol == workloads::Protocol::LL128);
  CHECK(tree.channel_rate_cap == doctest::Approx(0.9 * 24.0e9));
}
