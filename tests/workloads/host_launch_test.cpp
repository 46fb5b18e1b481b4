// The host's share of a measured collective (workloads/collectives/host_launch.h) and the channel
// count NCCL launches for a size (LaunchShape::nccl_channels): the two mechanisms behind the
// DGX A100 nccl-tests `-g 8` log's 44 us floor and its flat 101 us from 1 to 4 MiB.
#include <doctest/doctest.h>

#include "collective_test_util.h"
#include "workloads/collectives/host_launch.h"
#include "workloads/collectives/nccl_tuner.h"

using namespace clustersim;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;

namespace {
using Cluster = testing::CollectiveCluster;
constexpr double kMiB = 1048576.0;

topology::ClusterSpec dgx_a100() {
  topology::ClusterSpec s;
  s.node = *topology::find_node_preset("dgx-a100-80gb");
  s.nodes = 1;
  return s;
}

workloads::CollectiveRequest all_reduce(const Cluster& c, double bytes) {
  workloads::CollectiveRequest req;
  req.op = CollectiveOp::AllReduce;
  req.algo = CollectiveAlgo::Auto;
  for (int r = 0; r < c.topo.gpu_count(); ++r) req.ranks.push_back(r);
  req.bytes = sim::Bytes{bytes};
  return req;
}
}  // namespace

TEST_CASE("workloads::collectives: NCCL launches twice the searched ring channels, fewer for small sizes") {
  // DGX A100: the search gives 12 ring channels (6 x 40 GB/s duplicated to 12 x 20, search.cc);
  // ncclTopoPostset doubles them to 24 (connect.cc). Ring/LL drops a channel while bytes <
  // channels x 512 threads x 8 B x 8 ranks = channels x 32 KiB (enqueue.cc).
  const Cluster c(dgx_a100());
  const auto req = all_reduce(c, kMiB);
  const auto g = workloads::nccl_graph(c.topo, c.router, req.ranks, c.env.gpu_compute_capability, c.env.hints);
  REQUIRE(g.channels == 12);
  const workloads::NcclTuner tuner(g, CollectiveOp::AllReduce);
  using workloads::nccl::NcclAlgo;
  using workloads::Protocol;
  CHECK(tuner.launch_shape(NcclAlgo::Ring, Protocol::LL, 32768).nccl_channels == 1);
  CHECK(tuner.launch_shape(NcclAlgo::Ring, Protocol::LL, 512 * 1024).nccl_channels == 16);
  CHECK(tuner.launch_shape(NcclAlgo::Ring, Protocol::LL, kMiB).nccl_channels == 24);
  const auto large = tuner.launch_shape(NcclAlgo::Ring, Protocol::Simple, 1024 * kMiB);
  CHECK(large.nccl_channels == 24);
  CHECK(large.channels == 12);  // the replay folds each duplicated pair (same ring, same links)
}

TEST_CASE("workloads::collectives: one host thread issuing N GPUs pays N launches, and pipelined iterations hide a shorter host") {
  const auto k = workloads::default_host_launch_constants();
  workloads::HostLaunch one;
  workloads::HostLaunch eight;
  eight.gpus_per_thread = 8;
  const double per_gpu = k.kernel_launch_us + 24 * k.channel_enqueue_us;
  CHECK(workloads::host_issue_us(one, 24, k) == doctest::Approx(per_gpu));
  CHECK(workloads::host_issue_us(eight, 24, k) == doctest::Approx(8 * per_gpu));
  CHECK(workloads::host_issue_us(eight, 1, k) < workloads::host_issue_us(eight, 24, k));
  // Pipelined: max(device, host); per call: device + host + the framework's own work.
  const sim::SimTime long_device = sim::SimTime::from_us(1000);
  CHECK(workloads::measured_time(long_device, eight, 24, k) == long_device);
  const sim::SimTime short_device = sim::SimTime::from_us(10);
  CHECK(workloads::measured_time(short_device, eight, 24, k).us() == doctest::Approx(8 * per_gpu).epsilon(1e-6));
  workloads::HostLaunch torch;
  torch.timing = workloads::HostTiming::PerCall;
  torch.framework_call_us = 10;
  CHECK(workloads::measured_time(short_device, torch, 1, k).us() ==
        doctest::Approx(10 + 10 + k.kernel_launch_us + k.channel_enqueue_us).epsilon(1e-6));
}

TEST_CASE("workloads::collectives: a 1 MiB ring all-reduce on DGX A100 issued with -g 8 lands in the published band") {
  // stas00 ml-engineering, nccl-tests all_reduce_perf -g 8 on 8 x A100 NVSwitch: 18.0 GB/s busbw at
  // 1 MiB (101.9 us). The device alone (one process per GPU) is 2x faster than that; one thread
  // issuing 24 channels on 8 GPUs sets the time. The 20 % band is the 1-64 MiB validation target.
  const Cluster c(dgx_a100());
  const auto req = all_reduce(c, kMiB);
  const workloads::CollectiveResult r = workloads::simulate_collective(c.env, req);
  REQUIRE(r.nccl_channels == 24);
  workloads::HostLaunch g8;
  g8.gpus_per_thread = 8;
  const auto k = workloads::default_host_launch_constants();
  const double busbw = kMiB / workloads::measured_time(r.time, g8, r.nccl_channels, k).seconds() / 1e9 * 2 * 7 / 8;
  CHECK(busbw == doctest::Approx(18.0).epsilon(0.20));
  const double device_busbw = kMiB / r.time.seconds() / 1e9 * 2 * 7 / 8;
  CHECK(device_busbw > 2 * busbw);
}
