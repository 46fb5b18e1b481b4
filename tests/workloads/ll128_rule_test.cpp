// NCCL's LL128 platform rule (nccl_tuner.cpp ll128_enabled, tuning.cc): LL128 only with NVLink
// inside the node, and across nodes before Hopper only when a GPU reaches its NIC through PCIe
// switches (PXB or closer). Checked on the node presets it decides for and on custom nodes that
// change only the NIC's attachment, so the rule follows the topology, not the preset's name.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "collective_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/nccl_tuner.h"

using namespace clustersim;
using workloads::CollectiveOp;
using workloads::Protocol;

namespace {
using Cluster = testing::CollectiveCluster;

topology::ClusterSpec spec_of(const std::string& preset, int nodes) {
  topology::ClusterSpec s;
  s.node = *topology::find_node_preset(preset);
  s.nodes = nodes;
  return s;
}

workloads::NcclGraph graph_of(const Cluster& c) {
  std::vector<int> ranks;
  for (int r = 0; r < c.topo.gpu_count(); ++r) ranks.push_back(r);
  return workloads::nccl_graph(c.topo, c.router, ranks, c.env.gpu_compute_capability, c.env.hints);
}

constexpr double kMiB = 1048576.0;
}  // namespace

TEST_CASE("workloads::collectives: LL128 is off across Polaris nodes (NIC on a root port, PHB) and the tuner never picks it there") {
  const Cluster one(spec_of("polaris-a100-4x", 1));
  CHECK(graph_of(one).ll128);  // one node: NVLink only, no NIC path involved

  const Cluster two(spec_of("polaris-a100-4x", 2));
  const workloads::NcclGraph g = graph_of(two);
  CHECK_FALSE(g.ll128);
  CHECK(g.nic_path == topology::PathType::Phb);
  const workloads::NcclTuner tuner(g, CollectiveOp::AllReduce);
  for (double mib = 0.03125; mib <= 1024; mib *= 2) {
    INFO(mib << " MiB");
    CHECK(tuner.choose(mib * kMiB).protocol != Protocol::LL128);
  }
  // NCCL_PROTO=LL128 still forces it (--proto LL128).
  const Protocol forced = Protocol::LL128;
  CHECK(tuner.choose(4 * kMiB, nullptr, &forced).protocol == Protocol::LL128);
}

TEST_CASE("workloads::collectives: the LL128 rule follows the NIC's PCIe path and the GPU generation, not the preset") {
  // DGX A100 (NICs on the GPUs' PCIe switches): on. The same node with root-port NICs: off.
  topology::ClusterSpec a100 = spec_of("dgx-a100-80gb", 2);
  CHECK(graph_of(Cluster(a100)).ll128);
  a100.node.nic_attach = topology::NicAttach::RootPort;
  CHECK_FALSE(graph_of(Cluster(a100)).ll128);
  // Hopper also accepts PXN (NVLink to the GPU next to the NIC), so root-port NICs keep LL128.
  topology::ClusterSpec h100 = spec_of("dgx-h100", 2);
  h100.node.nic_attach = topology::NicAttach::RootPort;
  CHECK(graph_of(Cluster(h100)).ll128);
  // Without NVLink inside the node there is no LL128 even on one node.
  CHECK_FALSE(graph_of(Cluster(spec_of("8x-rtx4090-pcie", 1))).ll128);
  CHECK_FALSE(graph_of(Cluster(spec_of("8x-a100-pcie", 1))).ll128);
}

TEST_CASE("workloads::collectives: without LL128, mid-size all-reduce across Polaris nodes runs LL or Simple and is slower than with it") {
  const Cluster two(spec_of("polaris-a100-4x", 2));
  workloads::CollectiveRequest req;
  req.op = CollectiveOp::AllReduce;
  req.algo = workloads::CollectiveAlgo::Ring;
  for (int r = 0; r < two.topo.gpu_count(); ++r) req.ranks.push_back(r);
  req.bytes = sim::Bytes{2 * kMiB};
  const workloads::CollectiveResult dflt = workloads::simulate_collective(two.env, req);
  CHECK(dflt.protocol != Protocol::LL128);
  req.protocol = Protocol::LL128;
  const workloads::CollectiveResult forced = workloads::simulate_collective(two.env, req);
  CHECK(forced.protocol == Protocol::LL128);
  CHECK(dflt.time > forced.time);
}
