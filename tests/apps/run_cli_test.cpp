// `clustersim run` from the command line: the JSON contract, the trace, memory refusal, errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

TEST_CASE("apps::run: the flagship scenario prints every JSON key of the contract") {
  const auto r = run_cli("run scenarios/library/gpt3-175b-dgx-a100.toml --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"scenario", "gpus", "nodes", "iteration_time_s", "tokens_per_s", "samples_per_s",
                          "model_tflops_per_gpu", "mfu", "hfu", "breakdown_s", "comm", "memory_per_gpu_bytes",
                          "fits_in_memory", "time_to_train_s", "cost_usd", "energy_kwh", "sim"}) {
    CHECK_MESSAGE(j.contains(key), key);
  }
  for (const char* key : {"compute", "exposed_comm", "pipeline_bubble", "optimizer", "other"}) {
    CHECK(j["breakdown_s"].contains(key));
  }
  CHECK(j["gpus"] == 1024);
  CHECK(j["nodes"] == 128);
  CHECK(j["fits_in_memory"] == true);
  // The breakdown accounts for the whole iteration.
  double sum = 0;
  for (const auto& [k, v] : j["breakdown_s"].items()) sum += v.get<double>();
  CHECK(sum == doctest::Approx(j["iteration_time_s"].get<double>()).epsilon(1e-6));
  CHECK(j["mfu"].get<double>() > 0.2);
  CHECK(j["mfu"].get<double>() < 0.7);
}

TEST_CASE("apps::run: --trace writes Chrome trace events with one track per stream") {
  const std::string path = "/tmp/clustersim_run_trace_test.json";
  const auto r = run_cli("run scenarios/library/gpt3-2.7b-a100-nvlink-bridge.toml --trace " + path);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(clustersim::testing::slurp(path));
  REQUIRE(j.contains("traceEvents"));
  int spans = 0, thread_names = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") ++spans;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++thread_names;
  }
  CHECK(spans > 10);
  CHECK(thread_names >= 3);
  std::remove(path.c_str());
}

TEST_CASE("apps::run: a scenario that does not fit exits 3 without a throughput unless --ignore-memory") {
  const auto refused = run_cli("run tests/analysis/data/gpt3-175b-a100-40gb-tp1.toml");
  CHECK(refused.exit_code == 3);
  CHECK(refused.out.find("tokens/s") == std::string::npos);
  CHECK(refused.err.find("does not fit") != std::string::npos);
  const auto forced = run_cli("run tests/analysis/data/gpt3-175b-a100-40gb-tp1.toml --ignore-memory --format json");
  REQUIRE(forced.exit_code == 0);
  CHECK(nlohmann::json::parse(forced.out)["fits_in_memory"] == false);
}

TEST_CASE("apps::run: a bad override is a located error, exit 2") {
  const auto r = run_cli("run scenarios/library/gpt3-175b-dgx-a100.toml --set parallelism.tp=7");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("tp") != std::string::npos);
  CHECK(run_cli("run does-not-exist.toml").exit_code == 2);
}

TEST_CASE("apps::run: the same scenario prints byte-identical text apart from the simulator's wall time") {
  const auto a = run_cli("run scenarios/library/llama3-8b-hgx-h100.toml");
  const auto b = run_cli("run scenarios/library/llama3-8b-hgx-h100.toml");
  REQUIRE(a.exit_code == 0);
  const auto strip = [](const std::string& s) { return s.substr(0, s.find("simulator:")); };
  CHECK(strip(a.out) == strip(b.out));
}
