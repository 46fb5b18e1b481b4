// `clustersim collective SCENARIO.toml` and `run` read the scenario's [model_constants]: the host's
// share of a collective (nccl_kernel_launch_us), the p2p drain step (p2p_drain_steps) move the
// times they should, and a misspelt name is an error at its file and line, exit 2.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

namespace {

// The out-of-place time (us) of the size row of nccl-tests-style output; -1 when there is none.
double time_us(const std::string& out, const std::string& size) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream row(line);
    std::string size_col, count, type, redop, root;
    double t = -1;
    if (row >> size_col >> count >> type >> redop >> root >> t && size_col == size) return t;
  }
  return -1;
}

}  // namespace

TEST_CASE("apps::collective SCENARIO.toml: [model_constants] reach the host launch and the p2p drain") {
  const std::string with = "collective tests/apps/data/hgx-h100-host-constants.toml ";
  const std::string without = "collective --node hgx-h100-8x ";
  // 8 GPUs issued by one thread at 32 KiB (one channel): 8 x (launch + 0.30 us) of host time.
  const std::string small = "--op allreduce --algo ring -b 32K -e 32K --gpus-per-thread 8";
  const auto base = run_cli(without + small), slow = run_cli(with + small);
  REQUIRE(base.exit_code == 0);
  REQUIRE(slow.exit_code == 0);
  CHECK(time_us(base.out, "32768") == doctest::Approx(8 * (5.2 + 0.3)).epsilon(0.01));
  CHECK(time_us(slow.out, "32768") == doctest::Approx(8 * (20.0 + 0.3)).epsilon(0.01));
  // A 4 MiB send between two GPUs pays three 256 KiB steps at one 20.6 GB/s lane instead of one.
  const std::string send = "--op sendrecv --algo direct -b 4M -e 4M --gpus 2";
  const auto one = run_cli(without + send), three = run_cli(with + send);
  REQUIRE(one.exit_code == 0);
  REQUIRE(three.exit_code == 0);
  CHECK(time_us(three.out, "4194304") - time_us(one.out, "4194304") == doctest::Approx(2 * 262144 / 20.6e3).epsilon(0.02));
}

TEST_CASE("apps::collective SCENARIO.toml: an unknown model constant is named at its line, exit 2") {
  const auto r = run_cli("collective tests/apps/data/hgx-h100-misspelt-constant.toml --op sendrecv --algo direct -b 4M -e 4M --gpus 2");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("tests/apps/data/hgx-h100-misspelt-constant.toml:8:18: error: unknown model constant 'p2p_drain_step'; "
                   "did you mean 'p2p_drain_steps'?") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("apps::run: p2p_drain_steps slows the expert-parallel all-to-all of a mixture of experts") {
  const std::string s = "run scenarios/library/mixtral-8x7b-dgx-h100.toml --format json --set model_constants.p2p_drain_steps=";
  const auto parse = [](const std::string& json) {
    const std::size_t at = json.find("\"iteration_time_s\":");
    REQUIRE(at != std::string::npos);
    return std::stod(json.substr(at + 19));
  };
  const auto none = run_cli(s + "0"), one = run_cli(s + "1"), eight = run_cli(s + "8");
  REQUIRE(none.exit_code == 0);
  REQUIRE(one.exit_code == 0);
  REQUIRE(eight.exit_code == 0);
  CHECK(parse(none.out) < parse(one.out));
  CHECK(parse(one.out) < parse(eight.out));
  const auto bad = run_cli("run scenarios/library/mixtral-8x7b-dgx-h100.toml --set model_constants.p2p_drain_step=2");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("did you mean 'p2p_drain_steps'?") != std::string::npos);
}
