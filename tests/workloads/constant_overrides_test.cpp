// The model constants that used to be fixed in code (the host's share of a collective, the p2p
// drain step, the HBM floor under contention, idle power) are [model_constants] entries now: each
// test overrides one and checks that the result moves the way the mechanism says it must.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "collective_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/host_launch.h"
#include "workloads/compute/compute_model.h"
#include "workloads/compute/power_model.h"

using namespace clustersim;
using workloads::ComputeConstants;

namespace {

ComputeConstants with(const char* name, double value) {
  ComputeConstants c;
  c.set(name, value);
  return c;
}

workloads::OpCost elementwise(double elements) {
  workloads::OpCost op;
  op.name = "gelu";
  op.kind = workloads::OpKind::Elementwise;
  op.fwd_flops = sim::Flops{8.0 * elements};
  op.bwd_flops = op.fwd_flops;
  op.fwd_bytes = sim::Bytes{4.0 * elements};
  op.bwd_bytes = sim::Bytes{6.0 * elements};
  return op;
}

// Device time of a 4 MiB send between two H100s of one HGX board (NVLink through NVSwitch).
double sendrecv_us(double drain_steps) {
  testing::CollectiveCluster c(topology::preset_cluster("hgx-h100-8x", 1));
  c.env.hints.p2p_drain_steps = drain_steps;
  workloads::CollectiveRequest req;
  req.op = workloads::CollectiveOp::SendRecv;
  req.algo = workloads::CollectiveAlgo::Direct;
  req.ranks = {0, 1};
  req.bytes = sim::Bytes{4.0 * 1048576.0};
  return workloads::simulate_collective(c.env, req).time.seconds() * 1e6;
}

}  // namespace

TEST_CASE("workloads::ComputeConstants: the host-launch constants are model constants and move the host's issue time") {
  const auto base = workloads::default_host_launch_constants();
  CHECK(base.kernel_launch_us == 5.2);
  CHECK(base.channel_enqueue_us == 0.30);
  CHECK(base.torch_distributed_call_us == 10.0);
  workloads::HostLaunch eight;
  eight.gpus_per_thread = 8;
  const double issue = workloads::host_issue_us(eight, 24, base);  // 8 x (5.2 + 24 x 0.30) = 99.2 us
  CHECK(issue == doctest::Approx(99.2));
  const auto slower_launch = workloads::host_launch_constants(with("nccl_kernel_launch_us", 10.0));
  CHECK(workloads::host_issue_us(eight, 24, slower_launch) == doctest::Approx(issue + 8 * 4.8));
  const auto slower_enqueue = workloads::host_launch_constants(with("nccl_channel_enqueue_us", 0.5));
  CHECK(workloads::host_issue_us(eight, 24, slower_enqueue) == doctest::Approx(issue + 8 * 24 * 0.2));
  // A pipelined nccl-tests iteration of a short device time is the host's; more host work, longer.
  const sim::SimTime device = sim::SimTime::from_us(20.0);
  CHECK(workloads::measured_time(device, eight, 24, slower_launch) > workloads::measured_time(device, eight, 24, base));
  // torch.distributed's per-call work is added to a per-call timing.
  const auto torch = workloads::host_launch_constants(with("torch_distributed_call_us", 30.0));
  CHECK(torch.torch_distributed_call_us == 30.0);
  workloads::HostLaunch per_call;
  per_call.timing = workloads::HostTiming::PerCall;
  per_call.framework_call_us = torch.torch_distributed_call_us;
  CHECK(workloads::measured_time(device, per_call, 1, torch).seconds() * 1e6 == doctest::Approx(20.0 + 30.0 + 5.2 + 0.3));
}

TEST_CASE("workloads::ComputeConstants: p2p_drain_steps charges that many unoverlapped NCCL steps per NVLink send") {
  // 4 MiB to one peer over 16 channels: 256 KiB chunks, below NCCL's 512 KiB step, so each drained
  // step is 256 KiB at one 20.6 GB/s lane = 12.7 us (p2p_drain_us).
  const double none = sendrecv_us(0.0), one = sendrecv_us(1.0), three = sendrecv_us(3.0);
  INFO("0 steps ", none, " us, 1 step ", one, " us, 3 steps ", three, " us");
  CHECK(one > none);
  CHECK(three > one);
  CHECK(one - none == doctest::Approx(256.0 * 1024 / 20.6e3).epsilon(0.02));
  CHECK(three - one == doctest::Approx(2 * (one - none)).epsilon(0.01));
}

TEST_CASE("workloads::ComputeConstants: min_hbm_share is the bandwidth a starved memory-bound op keeps") {
  const topology::GpuSpec& h100 = *topology::find_gpu("h100-sxm5-80gb");
  const topology::ClusterSpec cluster = topology::preset_cluster("dgx-h100", 1);
  const workloads::OpCost ew = elementwise(64e6);
  const workloads::Contention flood{0.0, 100e12};  // far more than the 3.35 TB/s there is
  const auto starved_s = [&](double share) {
    const workloads::ComputeModel cm(h100, cluster, topology::Precision::Bf16, with("min_hbm_share", share));
    return cm.op_time(ew, workloads::Pass::Forward, flood).seconds();
  };
  CHECK(starved_s(0.2) < starved_s(0.1));
  CHECK(starved_s(0.05) > starved_s(0.1));
}

TEST_CASE("workloads::ComputeConstants: idle_power_fraction sets an idle GPU's draw, capped by the limit") {
  const topology::GpuSpec& h100 = *topology::find_gpu("h100-sxm5-80gb");  // TDP 700 W
  CHECK(workloads::power_draw(h100, 0.0, ComputeConstants{}).idle_w == doctest::Approx(210.0));
  CHECK(workloads::power_draw(h100, 0.0, with("idle_power_fraction", 0.2)).idle_w == doctest::Approx(140.0));
  CHECK(workloads::power_draw(h100, 300.0, with("idle_power_fraction", 0.5)).idle_w == doctest::Approx(300.0));
}

TEST_CASE("workloads::ComputeConstants: the new constants are named, described and range-checked") {
  for (const char* name : {"nccl_kernel_launch_us", "nccl_channel_enqueue_us", "torch_distributed_call_us",
                           "p2p_drain_steps", "min_hbm_share", "idle_power_fraction"}) {
    INFO(name);
    const auto names = ComputeConstants::names();
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
    CHECK(!ComputeConstants{}.describe(name).empty());
    CHECK_THROWS_AS(with(name, -1.0), std::invalid_argument);
  }
  CHECK_THROWS_AS(ComputeConstants{}.get("p2p_drain_step"), std::invalid_argument);
}
