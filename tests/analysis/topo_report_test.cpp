#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/catalog_report.h"
#include "analysis/topo_report.h"
#include "topology/builders.h"

using namespace clustersim;
using namespace clustersim::topology;

namespace {
Topology build(const char* id, int nodes = 1) {
  ClusterSpec spec;
  spec.node = *find_node_preset(id);
  spec.nodes = nodes;
  return build_cluster(spec);
}

int occurrences(const std::string& text, const std::string& word) {
  int n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("analysis::topo_matrix: a DGX A100 shows NV12 between every pair of GPUs") {
  const Topology t = build("dgx-a100-80gb");
  const Router router(t);
  const std::string m = analysis::topo_matrix(t, router);
  CHECK(occurrences(m, "NV12") == 8 * 7);
  CHECK(m.find("GPU7") != std::string::npos);
  CHECK(m.find("NIC7") != std::string::npos);
  CHECK(m.find("Legend:") != std::string::npos);
}

TEST_CASE("analysis::topo_matrix: a GB200 NVL72 rack shows NV18 between GPUs on different compute trays") {
  const Topology t = build("gb200-nvl72");
  const Router router(t);
  const std::string m = analysis::topo_matrix(t, router);
  CHECK(occurrences(m, "NV18") == 72 * 71);  // every pair, across all 18 trays, through the switch trays
  CHECK(m.find("GPU71") != std::string::npos);
}

TEST_CASE("analysis::topo_matrix: an MI300X node shows one scale-up link per GPU pair") {
  const Topology t = build("mi300x-8x");
  const Router router(t);
  const std::string m = analysis::topo_matrix(t, router);
  CHECK(occurrences(m, "NV1 ") == 8 * 7);  // the xGMI mesh: one link to each peer, no switch
}

TEST_CASE("analysis::topo_matrix: an 8x A100 PCIe box shows PIX, PHB and SYS") {
  const Topology t = build("8x-a100-pcie");
  const Router router(t);
  const std::string m = analysis::topo_matrix(t, router);
  CHECK(m.find(" PIX ") != std::string::npos);
  CHECK(m.find(" PHB ") != std::string::npos);
  CHECK(m.find(" SYS ") != std::string::npos);
  CHECK(m.find("NV") == m.find("NV#"));  // no NVLink cell, only the legend
}

TEST_CASE("analysis::topo_matrix: a large cluster shows two servers and says so") {
  const Topology t = build("dgx-h100", 16);
  const Router router(t);
  const std::string m = analysis::topo_matrix(t, router);
  CHECK(m.find("showing servers 0-1 of 16") != std::string::npos);
  CHECK(m.find(" NET ") != std::string::npos);
  CHECK(m.find("GPU16") == std::string::npos);
  CHECK(m.find("Fabric routing: destination-mod-k") != std::string::npos);  // NDR InfiniBand
}

TEST_CASE("analysis::topo_json: lists every device and directed link with bandwidth and latency") {
  const Topology t = build("dgx-a100-80gb", 2);
  const auto j = nlohmann::json::parse(analysis::topo_json(t));
  CHECK(j["nodes"].size() == t.device_count());
  CHECK(j["links"].size() == t.link_count());
  CHECK(j["links"][0]["kind"] == "nvlink");
  CHECK(j["links"][0]["bandwidth_Bps"].get<double>() == doctest::Approx(240e9));
  CHECK(j["links"][0]["latency_s"].get<double>() == doctest::Approx(0.3e-6));
  CHECK(j["nodes"][0]["kind"] == "gpu");
  CHECK(j["fabric_routing"] == "destination-mod-k");
  ClusterSpec roce;
  roce.node = *find_node_preset("8x-a100-pcie");  // RoCE 100 GbE: ECMP hashing
  roce.nodes = 2;
  CHECK(nlohmann::json::parse(analysis::topo_json(build_cluster(roce)))["fabric_routing"] == "flow-hash");
}

TEST_CASE("analysis::topo_dot: one Graphviz cluster per server") {
  const std::string dot = analysis::topo_dot(build("dgx-a100-80gb", 2));
  CHECK(dot.rfind("graph topology {", 0) == 0);
  CHECK(occurrences(dot, "subgraph cluster_node") == 2);
  CHECK(dot.find("240 GB/s") != std::string::npos);
}

TEST_CASE("analysis::catalog_table: lists ids with numbers and sources, rejects unknown tables") {
  const std::string g = analysis::catalog_table("gpus");
  CHECK(g.find("h100-sxm5-80gb") != std::string::npos);
  CHECK(g.find("989.4") != std::string::npos);
  CHECK(g.find("datasheet") != std::string::npos);
  CHECK(analysis::catalog_table("nodes").find("8x-a100-pcie") != std::string::npos);
  CHECK(analysis::catalog_table("nics").find("ib-ndr-400") != std::string::npos);
  CHECK(analysis::catalog_table("links").find("PCIe gen4 x16") != std::string::npos);
  CHECK_THROWS_AS(analysis::catalog_table("gpu"), std::invalid_argument);
}
