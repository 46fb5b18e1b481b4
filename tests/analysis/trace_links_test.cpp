// The Chrome trace's link counters and the richer timeline behind them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <map>
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
  // Each counter's link and its capacity in one direction.
  const auto topo = topology::build_cluster(r.spec.cluster);
  std::map<std::string, double> capacity_Bps;
  for (topology::LinkId l = 0; l < topo.link_count(); ++l) capacity_Bps[analysis::link_name(topo, l)] = topo.link(l).bandwidth.value;
  std::set<std::string> counters;
  std::size_t samples = 0;
  std::map<std::string, double> bytes;  // integral of each counter over the iteration
  std::map<std::string, std::pair<double, double>> last;  // counter -> (ts in s, bytes/s)
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "C") continue;
    CHECK(e["pid"] == links_pid);
    const std::string name = e["name"].get<std::string>();
    const double rate = e["args"]["bytes/s"].get<double>(), ts = e["ts"].get<double>() * 1e-6;
    REQUIRE(capacity_Bps.count(name) == 1);
    CHECK(rate >= 0);
    CHECK(rate <= capacity_Bps.at(name) * (1 + 1e-9));
    if (last.count(name)) bytes[name] += last[name].second * (ts - last[name].first);
    last[name] = {ts, rate};
    counters.insert(name);
    ++samples;
  }
  // By hand: node 0's GPU 0 sends its tp share of 4 micro-batches' activations to node 1 through
  // its NIC, 4 x (2048 tokens x hidden 768 x 2 bytes) / tp 8 = 4 x 393216 bytes; the gradients
  // come back the other way.
  CHECK(bytes["node0/gpu0 -> node0/pcie-sw0"] == doctest::Approx(4 * 393216.0).epsilon(1e-6));
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
      CHECK(s.bytes == 2048 * 768 * 2 / 8);  // one micro-batch's activations / tp
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
  std::map<int, double> dp_bytes;
  for (const auto& s : b.iteration.timeline) {
    if (s.kind == workloads::SpanKind::DataParallel) {
      ++dp;
      CHECK(s.bytes > 0);
      CHECK(s.load >= 0);
      CHECK(s.load < static_cast<int>(b.iteration.link_loads.size()));
      dp_bytes[s.rank] += s.bytes;
    }
  }
  CHECK(dp > 0);
  // By hand: a ring all-reduce over dp 2 sends 2 (dp - 1) / dp = 1 x the fp32 gradients of the
  // GPU's tp 8 shard. Stage 0 holds 6 layers of 12 h^2 + 13 h and the token and position
  // embeddings (V + s) h; stage 1 the other 6 layers, the final norm (2 h) and its copy of the tied
  // embeddings. h 768, s 2048, V 51200.
  const double h = 768, layers = 6 * (12 * h * h + 13 * h), embeddings = (51200 + 2048) * h;
  REQUIRE(dp_bytes.size() == 2);
  CHECK(dp_bytes[0] == doctest::Approx((layers + embeddings) / 8 * 4).epsilon(1e-12));
  CHECK(dp_bytes[1] == doctest::Approx((layers + embeddings + 2 * h) / 8 * 4).epsilon(1e-12));
  // The report's per-GPU figure is their mean over the pipeline ranks.
  CHECK(b.iteration.dp_bytes_per_gpu == doctest::Approx((dp_bytes[0] + dp_bytes[1]) / 2).epsilon(1e-12));
}
