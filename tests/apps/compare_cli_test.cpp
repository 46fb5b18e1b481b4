// `clustersim compare` from the command line: one row per combination in order, speed-up against
// the first, invalid combinations reported in their row, JSON and CSV forms, exit codes.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/csv.h"
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
  // The varied keys, status, reason, then run --format csv's own columns, then the speed-up.
  CHECK(lines[0].rfind("sync.algorithm,status,reason,scenario,gpus,nodes,iteration_time_s,tokens_per_s,", 0) == 0);
  CHECK(lines[0].find(",time_to_train_s,energy_kwh,cost_usd,speedup") != std::string::npos);
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

TEST_CASE("apps::compare: the guide's three budget tiers in one line -- time, fits-or-not, time to train, cost, energy") {
  const std::string tiers = "scenarios/library/tier1-entry-2x-rtx4090.toml scenarios/library/tier2-mid-2x-a100-40gb.toml "
                            "scenarios/library/tier3-high-8x-h100.toml";
  const auto r = run_cli("compare " + tiers);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);  // a tier that does not fit is a row, not an abort
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rfind("scenario_file", 0) == 0);
  for (const char* column : {"time to train", "energy", "cost"}) CHECK(lines[0].find(column) != std::string::npos);
  // GPT-3 2.7B with ZeRO-2 over two GPUs needs more than a 24 GB RTX 4090 holds.
  CHECK(lines[1].find("tier1-entry-2x-rtx4090  does not fit (needs ") != std::string::npos);
  CHECK(lines[2].find("days") != std::string::npos);
  CHECK(lines[2].find("kWh") != std::string::npos);
  CHECK(lines[2].find("$") != std::string::npos);

  const auto csv = run_cli("compare " + tiers + " --format csv");
  REQUIRE_MESSAGE(csv.exit_code == 0, csv.err);
  const auto records = clustersim::analysis::parse_csv(csv.out, "stdout");
  REQUIRE(records.size() == 4);
  const auto& h = records[0].fields;
  const auto col = [&h](const std::string& name) {
    return static_cast<std::size_t>(std::find(h.begin(), h.end(), name) - h.begin());
  };
  REQUIRE(col("cost_usd") < h.size());
  const auto value = [&](std::size_t row, const char* name) { return std::stod(records[row].fields[col(name)]); };
  CHECK(records[1].fields[col("status")] == "infeasible");
  CHECK(records[1].fields[col("iteration_time_s")].empty());
  CHECK(records[1].fields[col("fits_in_memory")] == "false");
  // Eight H100s beat two A100s per iteration and to the end of training; both spend money and energy.
  CHECK(value(3, "iteration_time_s") < value(2, "iteration_time_s"));
  CHECK(value(3, "time_to_train_s") < value(2, "time_to_train_s"));
  for (std::size_t row : {2, 3}) {
    CHECK(value(row, "cost_usd") > 0);
    CHECK(value(row, "energy_kwh") > 0);
  }
}

TEST_CASE("apps::compare: --format csv carries run --format csv's columns, in its order") {
  const auto run = run_cli("run " + kSmall + " --format csv");
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const std::string run_header = lines_of(run.out)[0];
  const auto cmp = run_cli("compare " + kSmall + " --vary sync.bucket_mb=25,50 --format csv");
  REQUIRE_MESSAGE(cmp.exit_code == 0, cmp.err);
  CHECK(lines_of(cmp.out)[0] == "sync.bucket_mb,status,reason," + run_header + ",speedup");
  // The values of the same run are the same text in both.
  const auto run_row = clustersim::analysis::parse_csv(run.out, "run")[1].fields;
  const auto cmp_row = clustersim::analysis::parse_csv(cmp.out, "compare")[1].fields;
  REQUIRE(cmp_row.size() == run_row.size() + 4);
  CHECK(std::vector<std::string>(cmp_row.begin() + 3, cmp_row.end() - 1) == run_row);
  CHECK(cmp_row.back() == "1.000000");
}

TEST_CASE("apps::compare: a --vary of several keys varies them together, one tuple per row") {
  // tp x dp = 2 on two GPUs: (1, 2) and (2, 1); a cartesian product would also try (1, 1) and (2, 2).
  const auto r = run_cli("compare " + kSmall + " --vary \"parallelism.tp,parallelism.dp=1,2;2,1\" --format csv");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("parallelism.tp,parallelism.dp,status,", 0) == 0);
  CHECK(lines[1].rfind("1,2,", 0) == 0);
  CHECK(lines[2].rfind("2,1,", 0) == 0);
  // A tuple with the wrong number of values is bad input that names the fix.
  const auto bad = run_cli("compare " + kSmall + " --vary \"parallelism.tp,parallelism.dp=1,2;2\"");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("2 keys but a tuple of 1 values") != std::string::npos);
  // One scenario still needs a --vary.
  CHECK(run_cli("compare " + kSmall).exit_code == 2);
}

TEST_CASE("apps::compare: progress goes to stderr only with --progress (stderr is not a terminal here)") {
  const auto quiet = run_cli("compare " + kSmall + " --vary sync.bucket_mb=25,50");
  CHECK(quiet.err.find("[1/2]") == std::string::npos);
  const auto shown = run_cli("compare " + kSmall + " --vary sync.bucket_mb=25,50 --progress");
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.err);
  CHECK(shown.err.find("[1/2] sync.bucket_mb=25  ok  ") != std::string::npos);
  CHECK(shown.err.find("ETA") != std::string::npos);
  CHECK(shown.err.find("[2/2] sync.bucket_mb=50  ok  ") != std::string::npos);
  CHECK(shown.out == quiet.out);  // stdout is the same either way
}
