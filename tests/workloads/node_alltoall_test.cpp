// The node-deduplicated all-to-all (DeepEP / HybridEP, node_alltoall_collective.h) and the routing
// statistics that size it (moe_node_routing.h): the bytes each NIC sends on a 2-node expert group,
// the schedule's totals, and the expected distinct remote nodes of DeepSeek-V3's routing.
#include <doctest/doctest.h>

#include <array>
#include <numeric>
#include <vector>

#include "collective_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/node_alltoall_collective.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/moe_node_routing.h"

using namespace clustersim;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;

namespace {

// Bytes every NIC sends into the fabric (links out of a NIC device), summed, for one collective.
double nic_bytes(const testing::CollectiveCluster& c, CollectiveAlgo algo, double bytes, double share) {
  workloads::CollectiveRequest req;
  req.op = CollectiveOp::AllToAll;
  req.algo = algo;
  req.ranks.resize(16);
  std::iota(req.ranks.begin(), req.ranks.end(), 0);
  req.bytes = sim::Bytes{bytes};
  req.remote_share = share;
  const std::array plans{workloads::plan_collective(c.env, req)};
  const workloads::CollectiveReplay r = workloads::replay_collectives(c.env, plans, true);
  double sum = 0;
  for (topology::LinkId l = 0; l < c.topo.link_count(); ++l) {
    const topology::Link& link = c.topo.link(l);
    if (c.topo.device(link.src).kind == topology::DeviceKind::Nic && link.kind == topology::LinkKind::Network)
      sum += r.link_bytes[l];
  }
  return sum;
}

}  // namespace

TEST_CASE("workloads::collectives: the node-deduplicated all-to-all sends share x the all-to-all's bytes through the NICs") {
  // 2 DGX H100 (8 GPUs, 8 NICs each), an expert group of all 16 GPUs, S = 64 MiB per GPU: the
  // alltoall dispatcher sends S/16 to each of the 8 GPUs of the other node, 8 x 16 x S/2 = 64 S
  // through the NICs; deduplicated, each GPU sends share x 8 S/16 to its one rail peer.
  testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 2));
  const double S = 64.0 * 1048576.0;
  const double direct = nic_bytes(c, CollectiveAlgo::Direct, S, 1.0);
  CHECK(direct == doctest::Approx(16 * S / 2));
  CHECK(nic_bytes(c, CollectiveAlgo::Hierarchical, S, 1.0) == doctest::Approx(direct));
  CHECK(nic_bytes(c, CollectiveAlgo::Hierarchical, S, 0.45) == doctest::Approx(0.45 * direct));
}

TEST_CASE("workloads::collectives: the node all-to-all schedule forwards every copy over NVLink and refuses uneven nodes") {
  // 4 nodes of 8: per rank S/32 to each own-node GPU, share x 8 S/32 to each of 3 rail peers, and
  // 3 x S/32 forwarded to each own-node GPU.
  std::vector<int> nodes;
  for (int p = 0; p < 32; ++p) nodes.push_back(p / 8);
  const double S = 32.0 * 8 * 1048576.0;
  const workloads::NodeAllToAllSchedule s(nodes, S, 0.5);
  CHECK(s.nodes() == 4);
  CHECK(s.per_node() == 8);
  CHECK(s.slices() == workloads::kNodeAllToAllMaxSlices);
  double net = 0, nvl = 0;
  for (int st = 0; st < s.stages(); ++st) {
    CHECK(s.recvs(5, st) == s.sends(5, st));
    for (int i = 0; i < s.sends(5, st); ++i) {
      const workloads::StageSend m = s.send(5, st, i);
      (nodes[static_cast<std::size_t>(m.peer)] == nodes[5] ? nvl : net) += m.bytes;
      if (nodes[static_cast<std::size_t>(m.peer)] != nodes[5]) CHECK(m.peer % 8 == 5);  // the rail peer
    }
  }
  CHECK(net == doctest::Approx(3 * 0.5 * 8 * S / 32));
  CHECK(nvl == doctest::Approx(7 * 4 * S / 32));
  CHECK(net == doctest::Approx(s.network_bytes_per_rank()));
  CHECK(nvl == doctest::Approx(s.nvlink_bytes_per_rank()));
  CHECK_THROWS(workloads::NodeAllToAllSchedule({0, 0, 0, 1}, S, 1.0));
}

TEST_CASE("workloads::moe_node_routing: DeepSeek-V3's top-8 of 256 over 4 nodes reaches fewer remote nodes than remote experts") {
  workloads::ModelSpec m = *workloads::find_model_preset("deepseek-v3");
  std::vector<int> four_nodes;
  for (int i = 0; i < 32; ++i) four_nodes.push_back(i / 8);  // EP 32 on 4 DGX nodes (row 182)
  // Group-limited routing (8 groups, 4 a token; 2 groups a node): a node is missed when neither
  // of its groups is picked (15/70) or all 8 experts land elsewhere.
  const workloads::NodeRouting grouped = workloads::expected_node_routing(m, four_nodes);
  CHECK(grouped.remote_copies == doctest::Approx(6.0));
  CHECK(grouped.remote_nodes == doctest::Approx(2.1962).epsilon(0.0005));
  // Without the group limit: 3 x (1 - C(192,8)/C(256,8)) = 2.71 (docs/validation.md, branch hybrid).
  m.router_groups = m.router_group_topk = 0;
  const workloads::NodeRouting free = workloads::expected_node_routing(m, four_nodes);
  CHECK(free.remote_nodes == doctest::Approx(2.7107).epsilon(0.0005));
  CHECK(free.share() == doctest::Approx(0.4518).epsilon(0.0005));
  // One node: nothing leaves it.
  CHECK(workloads::expected_node_routing(m, std::vector<int>(8, 0)).share() == 1.0);
}
