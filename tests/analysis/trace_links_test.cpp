// The Chrome trace's link counters and the richer timeline behind them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "analysis/link_traffic.h"
#include "run_outputs_test_util.h"
#include "topology/builders.h"

using namespace clustersim;

TEST_CASE("analysis::chrome_trace: a two-node pipeline has byte-rate counters for the links it used") {
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  const auto j = nlohmann::json::parse(analysis::chrome_trace(r));
  int links_pid = -1;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "links") links_pid = e["pid"];
  }
  REQUIRE(links_pid >= 0);
  std::set<std::string> counters;
  std::size_t samples = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "C") continue;
    CHECK(e["pid"] == links_pid);
    CHECK(e["args"]["bytes/s"].get<double>() >= 0);
    counters.insert(e["name"].get<std::string>());
    ++samples;
  }
  // Activations leave node 0 through a NIC to its rail's leaf switch (DGX A100 nodes default to the
  // rail-optimized fabric) and come back the other way.
  bool out_of_node0 = false, into_node1 = false, nvlink = false;
  for (const auto& name : counters) {
    if (name.rfind("node0/nic", 0) == 0 && name.find("-> rail") != std::string::npos) out_of_node0 = true;
    if (name.find("-> node1/nic") != std::string::npos) into_node1 = true;
    if (name.find("node0/gpu0 -> node0/nvswitch") != std::string::npos) nvlink = true;  // tensor-parallel
  }
  CHECK(out_of_node0);
  CHECK(into_node1);
  CHECK(nvlink);
  CHECK(samples <= counters.size() * 2001);
}

TEST_CASE("workloads::simulate_iteration: the timeline carries pipeline sends with their bytes and link class") {
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  int sends = 0, tp = 0;
  for (const auto& s : r.iteration.timeline) {
    if (s.kind == workloads::SpanKind::PipelineSend) {
      ++sends;
      CHECK(s.stream == 1);
      CHECK(s.bytes > 0);
      CHECK(s.link_class == "network");
      CHECK(s.end_s > s.start_s);
    }
    if (s.kind == workloads::SpanKind::TensorParallel) {
      ++tp;
      CHECK(s.link_class == "nvlink");
    }
  }
  CHECK(sends == 2 * 4);  // 4 activations forward, 4 gradients back
  CHECK(tp == 2 * 2 * 4);  // every pass of both ranks
  // Bytes are conserved by the binning.
  const auto topo = topology::build_cluster(r.spec.cluster);
  const auto coarse = analysis::link_traffic_grid(r.iteration, topo, r.iteration.simulated_s, 1);
  const auto fine = analysis::link_traffic_grid(r.iteration, topo, r.iteration.simulated_s / 100, 100);
  REQUIRE(coarse.links.size() == fine.links.size());
  for (std::size_t i = 0; i < fine.links.size(); ++i) {
    double sum = 0;
    for (double b : fine.links[i].bytes) sum += b;
    CHECK(sum == doctest::Approx(coarse.links[i].total_bytes).epsilon(1e-9));
  }
}

TEST_CASE("workloads::simulate_iteration: recording the timeline does not change simulated times") {
  analysis::RunOptions plain;
  plain.ignore_memory = true;
  const std::string body = testing::small_pipeline(2, 4, 2);
  const auto a = analysis::run_scenario(scenarios::parse_scenario(body, "t.toml"), plain);
  const auto b = testing::run_with_timeline(body);
  CHECK(a.iteration.iteration_time_s == b.iteration.iteration_time_s);
  int dp = 0;
  for (const auto& s : b.iteration.timeline) {
    if (s.kind == workloads::SpanKind::DataParallel) {
      ++dp;
      CHECK(s.bytes > 0);
      CHECK(s.load >= 0);
    }
  }
  CHECK(dp > 0);
}
