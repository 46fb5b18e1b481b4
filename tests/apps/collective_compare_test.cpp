// `clustersim collective --algo A,B,...`: several algorithms side by side on the same sizes, with
// the fastest per size and the reason for any that cannot run.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

TEST_CASE("apps::collective: --algo with a list prints busbw per algorithm and the fastest per size") {
  const auto r = run_cli("collective --node dgx-h100 --nodes 2 --op allreduce --algo ring,in-network,halving-doubling -b 1G -e 1G --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["algorithms"].size() == 3);
  REQUIRE(j["rows"].size() == 1);
  const auto& res = j["rows"][0]["results"];
  // Each column is the same simulation a single-algorithm run gives.
  for (const char* a : {"ring", "in-network", "halving-doubling"}) {
    const auto one = run_cli(std::string("collective --node dgx-h100 --nodes 2 --op allreduce --algo ") + a +
                             " -b 1G -e 1G --format json");
    REQUIRE(one.exit_code == 0);
    CHECK(res[a]["busbw"].get<double>() == nlohmann::json::parse(one.out)[0]["busbw"].get<double>());
  }
  // The fastest is the one with the lowest time.
  std::string fastest;
  double best = 1e300;
  for (const auto& [name, v] : res.items()) {
    if (v["time_us"].get<double>() < best) best = v["time_us"].get<double>(), fastest = name;
  }
  CHECK(j["rows"][0]["fastest"] == fastest);
}

TEST_CASE("apps::collective: an algorithm the hardware cannot run shows '-' and its reason, the others still run") {
  const auto r = run_cli("collective --node dgx-a100-80gb --op allreduce --algo ring,in-network -b 1M -e 4M -f 4");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("fastest") != std::string::npos);
  CHECK(r.out.find("in-network cannot run: ") != std::string::npos);
  CHECK(r.out.find("NVLS") != std::string::npos);
}

TEST_CASE("apps::collective: when no listed algorithm can run, exit 2 with the reason") {
  const auto r = run_cli("collective --node dgx-h100 --op alltoall --algo ring,tree");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("point-to-point") != std::string::npos);
  const auto bad = run_cli("collective --node dgx-h100 --algo ring,rign");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--algo 'rign'") != std::string::npos);
}

TEST_CASE("apps::collective: without --algo, alltoall and sendrecv run direct and the reductions a ring") {
  for (const char* op : {"alltoall", "sendrecv"}) {
    const auto dflt = run_cli(std::string("collective --node dgx-h100 --nodes 2 --op ") + op + " -b 1M -e 1M --format json");
    REQUIRE_MESSAGE(dflt.exit_code == 0, dflt.err);
    const auto direct = run_cli(std::string("collective --node dgx-h100 --nodes 2 --op ") + op +
                                " --algo direct -b 1M -e 1M --format json");
    REQUIRE(direct.exit_code == 0);
    CHECK(nlohmann::json::parse(dflt.out)[0]["algo"] == "direct");
    CHECK(dflt.out == direct.out);
  }
  const auto reduce = run_cli("collective --node dgx-h100 --nodes 2 --op allreduce -b 1M -e 1M --format json");
  const auto ring = run_cli("collective --node dgx-h100 --nodes 2 --op allreduce --algo ring -b 1M -e 1M --format json");
  REQUIRE(reduce.exit_code == 0);
  CHECK(reduce.out == ring.out);
}
