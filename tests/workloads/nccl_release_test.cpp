// NCCL's per-release rules (workloads/collectives/nccl_release.h): the version lookup, the NVLS
// channels and NVLSTree latency by release, the release reaching NCCL's graph and cost model, and a
// GB200 NVL72 one-rack all-reduce replayed with 2.25.1's 32 NVLS channels against v2.30.7's 24.
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "collective_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/nccl_release.h"
#include "workloads/collectives/nccl_tuner.h"

using namespace clustersim;
using clustersim::testing::first_ranks;
using workloads::CollectiveOp;
using workloads::Protocol;
using workloads::nccl::find_release;
using workloads::nccl::NcclAlgo;

TEST_CASE("workloads::nccl::find_release: exact tags, short forms, the nearest earlier, refusals") {
  bool exact = false;
  REQUIRE(find_release("2.25", &exact) != nullptr);
  CHECK(std::string(find_release("2.25")->version) == "2.25.1");
  CHECK(exact);
  CHECK(std::string(find_release("v2.25.1-1", &exact)->version) == "2.25.1");
  CHECK(exact);
  CHECK(std::string(find_release("2.26.6", &exact)->version) == "2.26.2");  // between two entries
  CHECK_FALSE(exact);
  CHECK(std::string(find_release("2.27.7")->version) == "2.27.3");
  CHECK(std::string(find_release("2.31.1")->version) == "2.30.7");  // newer than all: the newest
  CHECK(find_release("2.18") == nullptr);                             // older than every entry
  CHECK(find_release("two") == nullptr);
  CHECK(find_release("2.") == nullptr);
  CHECK(find_release("2") == nullptr);
  CHECK(std::string(workloads::nccl::default_release().version) == "2.30.7");
  // A value-initialised release (GraphHints, NcclGraph) is the default one, field by field.
  const workloads::nccl::NcclRelease v{};
  const workloads::nccl::NcclRelease& d = workloads::nccl::default_release();
  CHECK(std::string(v.version) == d.version);
  CHECK((v.major == d.major && v.minor == d.minor && v.patch == d.patch));
  CHECK(v.nvls_channels_sm90 == d.nvls_channels_sm90);
  CHECK(v.nvls_channels_sm100_one_node == d.nvls_channels_sm100_one_node);
  CHECK(v.nvls_channels_sm100_multi_node == d.nvls_channels_sm100_multi_node);
  CHECK(v.nvls_tree_net_latency_us == d.nvls_tree_net_latency_us);
  CHECK(v.nvls_efficiency_model == d.nvls_efficiency_model);
}

TEST_CASE("workloads::nccl::nvls_channels: 32 on one Blackwell domain before 2.27, 24 from 2.27 on") {
  using workloads::nccl::nvls_channels;
  CHECK(nvls_channels(*find_release("2.25.1"), 3, 1) == 32);  // nvls.cc v2.25.1-1 NVLS_NCHANNELS_SM100
  CHECK(nvls_channels(*find_release("2.26.2"), 3, 1) == 32);
  CHECK(nvls_channels(*find_release("2.27.3"), 3, 1) == 24);  // NVLS_NCHANNELS_SM100_NVL
  CHECK(nvls_channels(workloads::nccl::default_release(), 3, 1) == 24);
  CHECK(nvls_channels(*find_release("2.25.1"), 3, 2) == 32);
  CHECK(nvls_channels(workloads::nccl::default_release(), 3, 2) == 32);
  CHECK(nvls_channels(*find_release("2.24.3"), 3, 1) == 16);  // NCCL_NVLS_NCHANNELS default 16
  CHECK(nvls_channels(*find_release("2.25.1"), 2, 1) == 16);  // Hopper: 16 at every tag
  // hwLat NET NVLSTree: 14 us to 2.28, 20.9 from 2.29.
  using workloads::nccl::hw_latency_us;
  CHECK(hw_latency_us(workloads::nccl::HwClass::Net, NcclAlgo::NvlsTree, Protocol::Simple, *find_release("2.28.3")) == 14.0);
  CHECK(hw_latency_us(workloads::nccl::HwClass::Net, NcclAlgo::NvlsTree, Protocol::Simple) == 20.9);
}

TEST_CASE("workloads::nccl_graph: the release reaches NCCL's NVLS channels and cost model (GB200 NVL72)") {
  testing::CollectiveCluster one(topology::preset_cluster("gb200-nvl72"));
  workloads::GraphHints h = one.env.hints;
  h.nccl_release = *find_release("2.25.1");
  const auto g = workloads::nccl_graph(one.topo, one.router, first_ranks(72), 100, h);
  CHECK(g.nvls_channels == 32);
  // tuning.cc v2.25.1-1: busBw = nChannels x min(bwIntra, bwInter) = 721.8, algBw = x 5/6.
  const workloads::NcclTuner t(g, CollectiveOp::AllReduce);
  CHECK(t.cost(NcclAlgo::Nvls, Protocol::Simple).bus_bw_GBps == doctest::Approx(721.8).epsilon(1e-3));
  CHECK(t.cost(NcclAlgo::Nvls, Protocol::Simple).alg_bw_GBps == doctest::Approx(601.5).epsilon(1e-3));
  // NCCL_NVLS_ENABLE=0: no NVLS.
  h.nvls_enabled = false;
  CHECK_FALSE(workloads::nccl_graph(one.topo, one.router, first_ranks(72), 100, h).nvls);
  // Two racks, NVLSTree latency 25 + 2 x 14.
  testing::CollectiveCluster two(topology::preset_cluster("gb200-nvl72", 2));
  workloads::GraphHints h2 = two.env.hints;
  h2.nccl_release = *find_release("2.25.1");
  const workloads::NcclTuner t2(workloads::nccl_graph(two.topo, two.router, first_ranks(144), 100, h2), CollectiveOp::AllReduce);
  CHECK(t2.cost(NcclAlgo::NvlsTree, Protocol::Simple).latency_us == doctest::Approx(53.0));
}

TEST_CASE("workloads::simulate_collective: one GB200 NVL72 rack, 512 MiB, NCCL 2.25.1 (32 channels) vs 2.30.7 (24)") {
  testing::CollectiveCluster one(topology::preset_cluster("gb200-nvl72"));
  workloads::CollectiveRequest req;
  req.op = CollectiveOp::AllReduce;
  req.algo = workloads::CollectiveAlgo::Auto;
  req.ranks = first_ranks(72);
  req.bytes = sim::Bytes{512.0 * 1048576.0};
  workloads::CollectiveEnvironment env25 = one.env;
  env25.hints.nccl_release = *find_release("2.25");
  const auto p30 = workloads::plan_collective(one.env, req);
  const auto p25 = workloads::plan_collective(env25, req);
  CHECK(p30.nccl_algo == NcclAlgo::Nvls);
  CHECK(p25.nccl_algo == NcclAlgo::Nvls);
  CHECK(p30.channels == 24);
  CHECK(p25.channels == 32);
  const double t30 = workloads::simulate_plan(one.env, p30).time.seconds();
  const double t25 = workloads::simulate_plan(env25, p25).time.seconds();
  // 2.25.1's loops are 32 x 32 heads x 64 KiB = 64 MiB against 48 MiB: a third longer fill.
  CHECK(t25 > t30 * 1.03);
}
