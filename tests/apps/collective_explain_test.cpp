// `clustersim collective --explain`: the teaching view names NCCL's choice, the steps and what
// limits the simulated time (a saturated link, or a per-flow ceiling when no link saturates).
#include <doctest/doctest.h>

#include <string>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

namespace {
bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }
}  // namespace

TEST_CASE("apps::collective --explain: a 1 GiB ring all-reduce on DGX A100 is bound by the GPU's NVSwitch edge") {
  const auto r = run_cli("collective --node dgx-a100-80gb --op allreduce --algo ring -b 1G -e 1G --explain");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "NCCL picks"));
  CHECK(has(r.out, "14 steps"));  // 2(n-1) for n = 8
  CHECK(has(r.out, "bottleneck link: node0/gpu0 -> node0/nvswitch"));
  CHECK(has(r.out, "latency term ~ NCCL's Ring/"));
  CHECK(has(r.out, "bandwidth term = the busiest link's"));
}

TEST_CASE("apps::collective --explain: H100 send/recv at 64 MiB is held by NCCL's p2p channels, not a link") {
  const auto r = run_cli("collective --node hgx-h100-8x --op sendrecv --algo direct -b 64M -e 64M --explain");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "8 flows"));
  CHECK(has(r.out, "NCCL p2p channels for this size: 4"));
  CHECK(has(r.out, "no link is saturated"));
}

TEST_CASE("apps::collective --explain: in-network across DGX H100 nodes describes the SHARP aggregation tree") {
  const auto r = run_cli("collective --node dgx-h100 --nodes 8 --op allreduce --algo in-network -b 256M -e 256M --explain");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "SHARP across nodes: yes"));
  CHECK(has(r.out, "aggregation spine"));
  CHECK(has(r.out, "CollNet launch latency (paid once) = 31.00 us"));
}

TEST_CASE("apps::collective --explain: halving-doubling counts its log2 p stages in the latency term") {
  // 12 GPUs: p = 8, 3 halving + 3 doubling stages, plus the hand-off before and after.
  const auto r = run_cli("collective --node dgx-h100 --nodes 2 --gpus 12 --op allreduce --algo halving-doubling -b 64M -e 64M --explain");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "latency term ~ 8 steps (log2 p halving + log2 p doubling)"));
}
