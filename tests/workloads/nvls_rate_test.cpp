// The NVLS rate on NVLink switch domains: NCCL's NVLS graph speed (search.cc) and NCCL's NVLS cost
// formula with that speed (tuning.cc) where the domain has more GPUs than NVLS heads, with the
// numbers put in; then the replay of one GB200 NVL72 rack and of 8 H100s against them.
#include <doctest/doctest.h>

#include <numeric>

#include "collective_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/nccl_tuner.h"

using namespace clustersim;
using workloads::CollectiveOp;
using workloads::nccl::NcclAlgo;
using workloads::nccl::nvls_channel_speed_GBps;
using workloads::nccl::nvls_wire_efficiency;

namespace {
constexpr double kMiB = 1048576.0, kGiB = 1073741824.0;
constexpr double kNvl5GBps = 18 * 40.1;  // 18 NVLink 5 links x SM100_NVLINK_BW (NCCL topo.h)
}  // namespace

TEST_CASE("workloads::nvls_channel_speed_GBps: the fastest speed with (heads + 1) x speed within a GPU's NVLink") {
  // Blackwell (row 3, sm100 intra array 90, 80, 70, ..., 24, 20, 19, 18).
  CHECK(nvls_channel_speed_GBps(3, 8, kNvl5GBps) == 80.0);   // 9 x 80 = 720 <= 721.8; 9 x 90 > it
  CHECK(nvls_channel_speed_GBps(3, 32, kNvl5GBps) == 20.0);  // 33 x 20 = 660; 33 x 24 = 792 > 721.8
  CHECK(nvls_channel_speed_GBps(3, 4, kNvl5GBps) == 90.0);   // 5 x 90 = 450
  // Hopper (row 2, sm90 intra array 60, 50, 40, ...): 8 H100s, 18 x 20.6 GB/s: 9 x 40 = 360.
  CHECK(nvls_channel_speed_GBps(2, 8, 18 * 20.6) == 40.0);
  CHECK(nvls_channel_speed_GBps(3, 32, 100.0) == 0.0);  // nothing fits
}

TEST_CASE("workloads::nvls_wire_efficiency: NCCL's NVLS rate where a domain has more GPUs than heads") {
  // One NVL72 rack: busBw 32 x 2 x 20 x 0.74 x 31/32 = 917.6 (measured 835-847 at 4-8 GiB,
  // CoreWeave, NCCL 2.26.2); algBw x 72/142 = 465.3; the replay's heads carry 33/32 of it: 0.665.
  CHECK(nvls_wire_efficiency(3, 32, 72, 72, kNvl5GBps) == doctest::Approx(917.6 * 72 / 142 * 33 / 32 / kNvl5GBps));
  CHECK(nvls_wire_efficiency(3, 32, 72, 72, kNvl5GBps) == doctest::Approx(0.6647).epsilon(1e-3));
  // Two racks (NVLSTree, n = 144): algBw x 144/286 = 462.0 -> 0.660.
  CHECK(nvls_wire_efficiency(3, 32, 72, 144, kNvl5GBps) == doctest::Approx(917.6 * 144 / 286 * 33 / 32 / kNvl5GBps));
  // Every GPU a head: nvlsEfficiency alone (8 B200 830 GB/s busBw measured, NVIDIA/nccl#1807; 4 H100
  // 367, where the speed of 60 GB/s would give NCCL's model 306).
  CHECK(nvls_wire_efficiency(3, 8, 8, 8, kNvl5GBps) == doctest::Approx(0.74));
  CHECK(nvls_wire_efficiency(2, 4, 4, 4, 18 * 20.6) == doctest::Approx(0.85));
  CHECK(nvls_wire_efficiency(3, 32, 32, 32, kNvl5GBps) == doctest::Approx(0.74));
  // No speed fits: NCCL's constant alone.
  CHECK(nvls_wire_efficiency(3, 32, 72, 72, 100.0) == doctest::Approx(0.74));
}

TEST_CASE("workloads::InNetworkCollective (GB200 NVL72): one rack's NVLS streams at NCCL's rate for the rack") {
  testing::CollectiveCluster one(topology::preset_cluster("gb200-nvl72"));
  std::vector<int> ranks(72);
  std::iota(ranks.begin(), ranks.end(), 0);
  const double eff = nvls_wire_efficiency(3, 32, 72, 72, kNvl5GBps);
  for (double S : {512 * kMiB, 4 * kGiB}) {
    CAPTURE(S);
    workloads::CollectiveRequest req;
    req.op = CollectiveOp::AllReduce;
    req.algo = workloads::CollectiveAlgo::Auto;
    req.ranks = ranks;
    req.bytes = sim::Bytes{S};
    const auto plan = workloads::plan_collective(one.env, req);
    REQUIRE(plan.nccl_algo == NcclAlgo::Nvls);
    CHECK(plan.in_network_efficiency == doctest::Approx(eff));
    // A head moves S (1 + 1/32) each way at 0.665 x 721.8 GB/s, after NCCL's 25 us; the pieces (one
    // NCCL loop each) add at most two and a half pieces of fill and drain.
    const double stream_s = S * (1 + 1.0 / 32) / (eff * kNvl5GBps * 1e9);
    const double t = workloads::simulate_plan(one.env, plan).time.seconds();
    CHECK(t >= stream_s + 25e-6);
    CHECK(t <= (stream_s + 25e-6) * (1 + 2.5 / plan.chunks));
  }
}
