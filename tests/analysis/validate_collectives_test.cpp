// The collective model against measured nccl-tests bandwidths: MAPE per group against the targets
// (>= 64 MiB: 10 %, 1-64 MiB: 20 %). Groups known to miss are listed with the reason and checked
// against the same targets in a may_fail case, so a fix shows up and a miss is never hidden by a
// wider tolerance.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "analysis/validate_collectives.h"

using namespace clustersim;

namespace {
const analysis::CollectiveValidation& validation() {
  static const analysis::CollectiveValidation v = analysis::run_collective_validation();
  return v;
}
std::string key(const analysis::CollectiveValidationGroup& g) { return g.system_label + " | " + g.collective + " | " + g.band; }

// Known misses and why (see the validation report; measurements are not edited):
const std::set<std::string> kKnownMisses = {
    // (send/recv left this list when the planner took NCCL's p2p channel count by size.)
    // (All-to-all 1-64 MiB on 8 GPUs and both 4-GPU bands left this list with the unoverlapped
    // NCCL step of each grouped send, p2p_channels.h p2p_drain_us.) 8-GPU all-to-all >= 64 MiB is
    // at 10.1 %: 256-512 MiB are +16 % (302-311 GB/s measured, barely above 128 MiB's 299).
    "hgx-h100-8x x1, 8 GPUs | alltoall | >=64MiB",
    // All-gather/reduce-scatter on 4 GPUs approach the NVLink rate only at GiB sizes (62-85 % at
    // 32-256 MiB); the flow model reaches it by 64 MiB.
    "hgx-h100-8x x1, 4 GPUs | all_gather | 1-64MiB", "hgx-h100-8x x1, 4 GPUs | all_gather | >=64MiB",
    "hgx-h100-8x x1, 4 GPUs | reduce_scatter | 1-64MiB", "hgx-h100-8x x1, 4 GPUs | reduce_scatter | >=64MiB",
    // Polaris reaches 36 GB/s busbw where two 200 Gb/s Slingshot NICs carry 48-50 (libfabric plugin);
    // its 2.21 log has non-monotone mid sizes (2 MiB: 4.8 GB/s).
    "polaris-a100-4x x2, 8 GPUs | all_reduce | 1-64MiB", "polaris-a100-4x x2, 8 GPUs | all_reduce | >=64MiB",
    // The A100 log (nccl-tests -g 8): 1-4 MiB are set by one thread issuing 8 GPUs x 24 channels
    // (host_launch.h) and now within 3 %; 8-32 MiB (+26 to +62 %) and 64-256 MiB (+20 to +28 %)
    // are slower than both NCCL's model and the log's own 1-16 GiB rate: no mechanism found.
    "dgx-a100-80gb x1, 8 GPUs | all_reduce | 1-64MiB", "dgx-a100-80gb x1, 8 GPUs | all_reduce | >=64MiB",
    // (The H200 torch.distributed rows left this list when the per-call host work was modelled.)
    // Multi-node H100 all-to-all (xxrjun/nccl-tests-cluster, 10 and 2 nodes; docs/validation.md
    // "NCCL's all-to-all across nodes below ~1 MB a peer"): 10 nodes lose a fixed ~0.3 ms at 32-128
    // MiB that NCCL's p2p schedule does not explain (every peer is in one wave); the 2-node cluster
    // reaches 40 GB/s a NIC where the preset's PCIe-bound NIC carries 48 (NIC and NCCL not stated).
    "hgx-h100-8x x10, 80 GPUs | alltoall | 1-64MiB", "hgx-h100-8x x2, 16 GPUs | alltoall | 1-64MiB",
    "hgx-h100-8x x2, 16 GPUs | alltoall | >=64MiB",
};
}  // namespace

TEST_CASE("analysis::validate_collectives: every row of every system maps to a preset or says why not") {
  const auto& v = validation();
  int simulated = 0;
  for (const auto& r : v.rows) {
    if (r.simulated) {
      ++simulated;
      CHECK(r.predicted_busbw > 0);
    } else {
      CHECK_FALSE(r.skip_reason.empty());
    }
  }
  CHECK(simulated >= 210);
  CHECK(v.wall_s < 60.0);
}

TEST_CASE("analysis::validate_collectives: groups meet their MAPE targets") {
  for (const auto& g : validation().groups) {
    if (kKnownMisses.count(key(g)) || g.target_pct <= 0) continue;
    INFO(key(g) << ": MAPE " << g.mape_pct << " % vs target " << g.target_pct << " %");
    CHECK(g.mape_pct <= g.target_pct);
  }
}

TEST_CASE("analysis::validate_collectives: the known misses against the same targets" * doctest::may_fail()) {
  for (const auto& g : validation().groups) {
    if (!kKnownMisses.count(key(g))) continue;
    INFO(key(g) << ": MAPE " << g.mape_pct << " % vs target " << g.target_pct << " %");
    CHECK(g.mape_pct <= g.target_pct);
  }
}

TEST_CASE("analysis::validate_collectives: the known-miss list names existing groups") {
  std::set<std::string> groups;
  for (const auto& g : validation().groups) groups.insert(key(g));
  for (const auto& k : kKnownMisses) {
    INFO(k);
    CHECK(groups.count(k) == 1);
  }
}

TEST_CASE("analysis::validate_collectives: a row's notes say how its benchmark issued the collective") {
  const auto g8 = analysis::benchmark_host_launch("[trust:A] nccl-tests all_reduce_perf -b 32k -e 16G -f 2 -g 8 -n 50");
  CHECK(g8.gpus_per_thread == 8);
  CHECK(g8.timing == workloads::HostTiming::Pipelined);
  const auto torch = analysis::benchmark_host_launch("[trust:A] torch.distributed all_reduce_bench.py (not nccl-tests)");
  CHECK(torch.timing == workloads::HostTiming::PerCall);
  CHECK(torch.framework_call_us > 0);
  const auto mpi = analysis::benchmark_host_launch("[trust:A raw nccl-tests log] nccl-tests 2.17.8, NCCL 2.29.2");
  CHECK(mpi.gpus_per_thread == 1);
  CHECK(mpi.timing == workloads::HostTiming::Pipelined);
}

TEST_CASE("analysis::validate_collectives: the DGX A100 -g 8 rows at 1-4 MiB are set by the host, within 5 %") {
  // 101.9, 101.4 and 101.5 us measured: one thread issuing 24 channels on each of 8 GPUs.
  int seen = 0;
  for (const auto& r : validation().rows) {
    if (!r.simulated || r.system_label != "dgx-a100-80gb x1, 8 GPUs" || r.bytes < 1048576.0 || r.bytes > 4194304.0) continue;
    ++seen;
    INFO(r.bytes << " B: " << r.predicted_busbw << " vs " << r.measured_busbw << " GB/s");
    CHECK(r.launch == "-g 8");
    CHECK(r.predicted_time_us > r.device_time_us);
    CHECK(std::abs(r.error_pct()) < 5.0);
  }
  CHECK(seen == 3);
}
