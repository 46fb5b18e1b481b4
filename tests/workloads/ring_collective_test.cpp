// Ring collectives on real topologies: physics bounds, contention, determinism.
#include <doctest/doctest.h>

#include <numeric>

#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_runner.h"
#include "collective_test_util.h"

using namespace clustersim;
using clustersim::testing::first_ranks;
using workloads::CollectiveOp;
using workloads::CollectiveRequest;

namespace {
struct Cluster {
  topology::Topology topo;
  topology::Router router;
  workloads::CollectiveEnvironment env;
  explicit Cluster(const std::string& node, int nodes = 1)
      : topo(topology::build_cluster(topology::preset_cluster(node, nodes))), router(topo), env{topo, router, 80} {}
};

CollectiveRequest allreduce(std::vector<int> ranks, double bytes) {
  CollectiveRequest r;
  r.op = CollectiveOp::AllReduce;
  r.ranks = std::move(ranks);
  r.bytes = sim::Bytes{bytes};
  r.protocol = workloads::Protocol::Simple;
  return r;
}
// The ring all-reduce bandwidth bound: 2(n-1)/n * S / B.
double ring_bound_s(int n, double bytes, double bottleneck_Bps) {
  return 2.0 * (n - 1) / n * bytes / bottleneck_Bps;
}
}  // namespace

TEST_CASE("workloads::RingCollective: an isolated NVSwitch ring is within 3% of its bandwidth bound at 1 GiB") {
  Cluster c("dgx-a100-80gb");
  const double S = 1073741824.0;
  const auto route = c.router.route(0, 1);
  const double B = route.bottleneck.value;  // GPU <-> NVSwitch edge, one direction
  const auto r = workloads::simulate_collective(c.env, allreduce(first_ranks(8), S));
  const double bound = ring_bound_s(8, S, B);
  CHECK(r.time.seconds() >= bound);
  CHECK(r.time.seconds() <= bound * 1.03);
}

TEST_CASE("workloads::RingCollective: no size and no node preset beats the ring bandwidth bound") {
  for (const char* node : {"dgx-a100-80gb", "dgx-h100", "8x-a100-pcie", "2x-rtx4090-pcie4", "2x-a100-40gb-nvlink-bridge"}) {
    Cluster c(node);
    const int n = c.topo.gpu_count();
    double slowest = 1e300;
    for (int i = 0; i < n; ++i) slowest = std::min(slowest, c.router.route(i, (i + 1) % n).bottleneck.value);
    for (double S : {1048576.0, 67108864.0, 1073741824.0}) {
      INFO(node << " size " << S);
      const auto r = workloads::simulate_collective(c.env, allreduce(first_ranks(n), S));
      CHECK(r.time.seconds() >= ring_bound_s(n, S, slowest));
    }
  }
}

TEST_CASE("workloads::RingCollective: crossing the sockets is slower than staying under one PCIe switch, by the link ratio") {
  // 8x-a100-pcie: GPUs 0 and 1 share a PCIe switch (bottleneck: their own x16 Gen4 links);
  // GPUs 0 and 4 sit on different sockets, so both directions cross the CPU interconnect.
  // A 2-GPU ring moves S/2 each way twice: time ~ S / bottleneck, so the time ratio is the
  // ratio of the bottleneck capacities.
  Cluster c("8x-a100-pcie");
  const double S = 1073741824.0;
  const double local_bw = c.router.route(0, 1).bottleneck.value;
  const double cross_bw = c.router.route(0, 4).bottleneck.value;
  REQUIRE(cross_bw < local_bw);
  const auto local = workloads::simulate_collective(c.env, allreduce({0, 1}, S));
  const auto cross = workloads::simulate_collective(c.env, allreduce({0, 4}, S));
  const double ratio = cross.time.seconds() / local.time.seconds();
  CHECK(ratio == doctest::Approx(local_bw / cross_bw).epsilon(0.02));
}

TEST_CASE("workloads::RingCollective: multi-node rings use every NIC through their channels") {
  Cluster c("dgx-a100-80gb", 2);
  const double S = 1073741824.0;
  auto req = allreduce(first_ranks(16), S);
  const auto r = workloads::simulate_collective(c.env, req);
  CHECK(r.channels == 8);
  // One channel would be limited by a single NIC path; eight channels spread over eight NICs.
  req.channels = 1;
  const auto one = workloads::simulate_collective(c.env, req);
  CHECK(one.time.seconds() > 4 * r.time.seconds());
}

TEST_CASE("workloads::RingCollective: the same request gives the same simulated time") {
  Cluster c("dgx-h100", 2);
  auto req = allreduce(first_ranks(16), 100e6);
  req.protocol.reset();
  const auto a = workloads::simulate_collective(c.env, req);
  const auto b = workloads::simulate_collective(c.env, req);
  CHECK(a.time == b.time);
  CHECK(a.protocol == b.protocol);
  CHECK(a.transfers == b.transfers);
}

TEST_CASE("workloads::RingCollective: all-gather and reduce-scatter take half the steps of all-reduce") {
  Cluster c("dgx-a100-80gb");
  auto ar = allreduce(first_ranks(8), 1073741824.0);
  auto ag = ar;
  ag.op = CollectiveOp::AllGather;
  auto rs = ar;
  rs.op = CollectiveOp::ReduceScatter;
  const double t_ar = workloads::simulate_collective(c.env, ar).time.seconds();
  const double t_ag = workloads::simulate_collective(c.env, ag).time.seconds();
  const double t_rs = workloads::simulate_collective(c.env, rs).time.seconds();
  CHECK(t_ag == doctest::Approx(t_ar / 2).epsilon(0.02));
  CHECK(t_rs == doctest::Approx(t_ag));
}
