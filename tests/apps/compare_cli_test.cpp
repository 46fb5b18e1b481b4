// `clustersim compare` from the command line: one row per combination in order, speed-up against
// the first, invalid combinations reported in their row, JSON and CSV forms, exit codes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

namespace {

const std::string kSmall = "scenarios/library/gpt3-1.3b-2x-rtx4090.toml";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("apps::compare: one row per combination in order, first --vary slowest, speed-up 1.00 on the first") {
  const auto r = run_cli("compare " + kSmall + " --vary sync.algorithm=ring,halving-doubling --vary sync.bucket_mb=5,100");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("sync.algorithm    sync.bucket_mb", 0) == 0);
  for (const char* h : {"iteration", "speed-up", "tokens/s", "MFU", "exposed comm", "bubble", "memory/GPU", "fits"})
    CHECK_MESSAGE(lines[0].find(h) != std::string::npos, h);
  const char* expected[][2] = {{"ring", "5"}, {"ring", "100"}, {"halving-doubling", "5"}, {"halving-doubling", "100"}};
  for (int i = 0; i < 4; ++i) {
    std::istringstream row(lines[static_cast<std::size_t>(i + 1)]);
    std::string algorithm, bucket;
    row >> algorithm >> bucket;
    CHECK(algorithm == expected[i][0]);
    CHECK(bucket == expected[i][1]);
    CHECK(lines[static_cast<std::size_t>(i + 1)].find("GiB") != std::string::npos);
  }
  CHECK(lines[1].find(" 1.00x ") != std::string::npos);
}

TEST_CASE("apps::compare: an invalid combination shows 'invalid' in its row while the others run") {
  const auto r = run_cli("compare " + kSmall + " --vary parallelism.tp=1,2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].find("1.00x") != std::string::npos);
  CHECK(lines[2].rfind("2", 0) == 0);
  CHECK(lines[2].find("invalid: ") != std::string::npos);
}

TEST_CASE("apps::compare: JSON lists vary, status, reason and the run JSON of each combination") {
  const auto r = run_cli("compare " + kSmall + " --vary parallelism.tp=1,2 --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 2);
  CHECK(j[0]["vary"]["parallelism.tp"] == "1");
  CHECK(j[0]["status"] == "ok");
  CHECK(j[0]["result"]["iteration_time_s"].get<double>() > 0);
  CHECK(j[0]["result"].contains("memory_per_gpu_bytes"));
  CHECK(j[1]["status"] == "invalid");
  CHECK(!j[1]["reason"].get<std::string>().empty());
  CHECK(j[1]["result"].is_null());
}

TEST_CASE("apps::compare: CSV has a header and one row per combination") {
  const auto r = run_cli("compare " + kSmall + " --vary sync.algorithm=ring,halving-doubling --format csv");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("sync.algorithm,status,reason,iteration_time_s,speedup,", 0) == 0);
  CHECK(lines[1].rfind("ring,ok,,", 0) == 0);
  CHECK(lines[2].rfind("halving-doubling,ok,,", 0) == 0);
}

TEST_CASE("apps::compare: a combination that does not fit says how much it needs") {
  // GPT-3 1.3B fits on an RTX 4090 (24 GB) only with ZeRO-2 sharding the Adam state over the 2 GPUs.
  const auto r = run_cli("compare " + kSmall + " --vary parallelism.zero=2,0");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[2].find("does not fit (needs ") != std::string::npos);
  CHECK(lines[2].find(" GiB)") != std::string::npos);
  // Nothing fits: valid but infeasible, exit 3.
  CHECK(run_cli("compare " + kSmall + " --vary parallelism.zero=0 --vary training.micro_batch=2,4").exit_code == 3);
}

TEST_CASE("apps::compare: when every combination is invalid it exits 2 with the messages") {
  const auto r = run_cli("compare " + kSmall + " --vary parallelism.tp=2,4");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("with parallelism.tp=2:\n") != std::string::npos);
  CHECK(r.err.find("with parallelism.tp=4:\n") != std::string::npos);
  CHECK(r.err.find("error:") != std::string::npos);
}

TEST_CASE("apps::compare: a malformed --vary is a command-line error") {
  CHECK(run_cli("compare " + kSmall + " --vary sync.algorithm").exit_code == 2);
  CHECK(run_cli("compare " + kSmall + " --vary sync.algorithm=ring,,tree").exit_code == 2);
  CHECK(run_cli("compare " + kSmall).exit_code == 2);
  CHECK(run_cli("compare " + kSmall + " --vary sync.algorithm=ring --format xml").exit_code == 2);
}

TEST_CASE("apps::compare: varying the fabric's routing builds each topology (the cluster cache keys on it)") {
  // GPT-3 175B on 128 DGX A100 (HDR InfiniBand): with ECMP-style flow hashing some data-parallel
  // ring hops collide on a spine link, so the exposed communication grows; destination routing
  // (the HDR fabric's default) keeps them apart. Each value must be simulated on its own topology,
  // and each must match a plain `run` with the same --set.
  const auto r = run_cli("compare scenarios/library/gpt3-175b-dgx-a100.toml --vary cluster.routing=flow-hash,destination-mod-k --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 2);
  const double hashed = j[0]["result"]["iteration_time_s"].get<double>();
  const double by_destination = j[1]["result"]["iteration_time_s"].get<double>();
  CHECK(hashed > by_destination);
  const auto plain = run_cli("run scenarios/library/gpt3-175b-dgx-a100.toml --format json");
  REQUIRE(plain.exit_code == 0);
  CHECK(nlohmann::json::parse(plain.out)["iteration_time_s"].get<double>() == by_destination);
}
