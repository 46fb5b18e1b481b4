#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

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

namespace {
// The cell of `nvidia-smi topo -m` text at (row, column), both by label; "" when absent.
std::string matrix_cell(const std::string& m, const std::string& row, const std::string& col) {
  std::istringstream in(m);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::vector<std::string> w;
    for (std::string x; f >> x;) w.push_back(x);
    if (w.empty()) continue;
    if (header.empty() && w[0] == "GPU0") {
      header = w;
      continue;
    }
    if (!header.empty() && w[0] == row) {
      for (std::size_t c = 0; c < header.size(); ++c)
        if (header[c] == col && c + 1 < w.size()) return w[c + 1];
    }
  }
  return "";
}

std::string matrix_of(const char* id) {
  const Topology t = build(id);
  const Router router(t);
  return analysis::topo_matrix(t, router, find_node_preset(id));
}
}  // namespace

TEST_CASE("analysis::topo_matrix: a DGX H100 reads PIX on its own switch, NODE across its socket, SYS across sockets") {
  const std::string m = matrix_of("dgx-h100");
  CHECK(matrix_cell(m, "GPU0", "NIC0") == "PIX");
  CHECK(matrix_cell(m, "GPU0", "NIC2") == "NODE");
  CHECK(matrix_cell(m, "GPU0", "NIC4") == "SYS");
  CHECK(matrix_cell(m, "GPU5", "NIC7") == "NODE");
  CHECK(m.find("CPU Affinity") != std::string::npos);
  CHECK(m.find("GPU NUMA ID") != std::string::npos);
  // 2 x Xeon 8480C, 56 cores with Hyper-Threading: socket 0 holds CPUs 0-55 and 112-167.
  // A GPU row ends with its CPU Affinity, NUMA Affinity and GPU NUMA ID.
  const auto tail = [&](const std::string& row) {
    std::istringstream in(m);
    for (std::string line; std::getline(in, line);) {
      std::istringstream f(line);
      std::vector<std::string> w;
      for (std::string x; f >> x;) w.push_back(x);
      if (w.size() >= 3 && line[0] != ' ' && w[0] == row) return std::vector<std::string>(w.end() - 3, w.end());
    }
    return std::vector<std::string>{};
  };
  CHECK(tail("GPU0") == std::vector<std::string>{"0-55,112-167", "0", "N/A"});
  CHECK(tail("GPU4") == std::vector<std::string>{"56-111,168-223", "1", "N/A"});
}

TEST_CASE("analysis::topo_matrix: a DGX A100's cascaded PCIe switches put its GPU-NIC pairs at PXB") {
  const std::string m = matrix_of("dgx-a100-80gb");
  CHECK(matrix_cell(m, "GPU0", "NIC0") == "PXB");
  CHECK(matrix_cell(m, "GPU0", "NIC1") == "PXB");
  CHECK(matrix_cell(m, "GPU0", "NIC2") == "NODE");
  CHECK(matrix_cell(m, "GPU3", "NIC4") == "SYS");
  CHECK(m.find("0-63,128-191") != std::string::npos);
}

TEST_CASE("analysis::topo_matrix: a node with one host bridge per socket keeps PHB, and unknown CPUs read N/A") {
  const std::string m = matrix_of("8x-a100-pcie");
  CHECK(matrix_cell(m, "GPU0", "GPU1") == "PIX");
  CHECK(matrix_cell(m, "GPU0", "GPU2") == "PHB");
  CHECK(matrix_cell(m, "GPU0", "GPU4") == "SYS");
  CHECK(m.find("NODE ") == m.find("NODE = "));  // only in the legend
  CHECK(matrix_cell(m, "GPU0", "NIC0") == "PIX");
}
