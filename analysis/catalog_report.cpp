#include "analysis/catalog_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "topology/catalog.h"
#include "workloads/model/model_presets.h"

namespace clustersim::analysis {
namespace {

using Row = std::vector<std::string>;

// Left-aligned columns two spaces apart; the last column (the source) is not padded.
std::string table(const std::string& title, const std::vector<Row>& rows) {
  std::vector<std::size_t> width;
  for (const Row& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  std::string out = title + "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (std::size_t c = 0; c < rows[i].size(); ++c)
      line += c + 1 == rows[i].size() ? rows[i][c] : fmt::format("{:<{}}  ", rows[i][c], width[c]);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
    if (i == 0) out += std::string(line.size(), '-') + "\n";
  }
  return out;
}

std::string tflops(sim::FlopsPerSec f) { return f.value > 0 ? fmt::format("{:g}", f.value / 1e12) : "-"; }
std::string gbs(sim::BytesPerSec b) { return fmt::format("{:g}", b.value / 1e9); }
std::string us(sim::SimTime t) { return fmt::format("{:g}", t.us()); }

std::string gpus() {
  std::vector<Row> rows{{"id", "FP32", "TF32", "FP16", "BF16", "FP8", "mem GiB", "HBM GB/s", "NVLink (usable/dir)",
                         "PCIe", "TDP W", "SMs", "price $", "source"}};
  for (const auto& g : topology::all_gpus()) {
    const std::string nvl = g.nvlink_links > 0 ? fmt::format("{} x {:g} = {:g} GB/s", g.nvlink_links,
                                                             g.nvlink_link_usable.value / 1e9,
                                                             g.nvlink_usable_per_dir().value / 1e9)
                                               : "-";
    rows.push_back({g.id, tflops(g.fp32), tflops(g.tf32), tflops(g.fp16), tflops(g.bf16), tflops(g.fp8),
                    fmt::format("{:g}", g.memory.value / 1073741824.0), gbs(g.memory_bandwidth), nvl,
                    fmt::format("gen{}", g.pcie_gen), fmt::format("{:g}", g.tdp.value), std::to_string(g.sms),
                    g.price_usd > 0 ? fmt::format("{:g}", g.price_usd) : "-", g.source});
  }
  return table("GPUs (dense peak TFLOP/s; GB = 1e9 B, GiB = 2^30 B: an \"80 GB\" part holds 80 GiB; NVLink: links x NCCL-usable GB/s per direction)", rows);
}

std::string nodes() {
  std::vector<Row> rows{{"id", "gpu", "gpus", "intra", "pcie", "sockets", "gpus/switch", "nics", "description"}};
  for (const auto& n : topology::all_node_presets())
    rows.push_back({n.id, n.gpu, std::to_string(n.gpus), std::string(topology::to_string(n.intra)),
                    fmt::format("gen{}", n.pcie_gen), std::to_string(n.sockets),
                    std::to_string(n.gpus_per_pcie_switch), fmt::format("{} x {}", n.nics, n.nic), n.description});
  return table("Node presets", rows);
}

std::string nics() {
  std::vector<Row> rows{{"id", "GB/s/dir", "Gb/s", "NIC+cable us", "switch hop us", "SHARP", "source"}};
  for (const auto& n : topology::all_nics())
    rows.push_back({n.id, gbs(n.per_dir), fmt::format("{:g}", n.per_dir.value * 8 / 1e9), us(n.latency),
                    us(n.switch_latency), n.sharp ? "yes" : "no", n.source});
  return table("NICs (line rate per direction; latency one way)", rows);
}

std::string links() {
  std::vector<Row> rows{{"link", "GB/s/dir", "latency us", "source"}};
  for (const int gen : {3, 4, 5, 6})
    rows.push_back({fmt::format("PCIe gen{} x16 (usable)", gen), gbs(topology::pcie_x16_bandwidth(gen)),
                    us(topology::pcie_hop_latency()), "NCCL 2.30.7 src/graph/topo.cc kvDictPciGen; tuning.cc PCI LL 1.0 us/step over 2 hops"});
  const char* nvlink_src = "NCCL 2.30.7 src/graph/topo.h SMxx_NVLINK_BW (usable) vs lane rate (raw); tuning.cc NVLINK LL 0.6 us/step over 2 hops";
  struct Gen { const char* name; const char* gpu; };
  for (const Gen& g : {Gen{"NVLink 2 (V100) per link", "v100-sxm2-32gb"}, Gen{"NVLink 3 (A100) per link", "a100-sxm4-80gb"},
                       Gen{"NVLink 3 GA102 bridge per link", "rtx-3090"}, Gen{"NVLink 4 (H100/H200) per link", "h100-sxm5-80gb"},
                       Gen{"NVLink 5 (B200) per link", "b200"}}) {
    const auto* gpu = topology::find_gpu(g.gpu);
    rows.push_back({g.name, fmt::format("{:g} (raw {:g})", gpu->nvlink_link_usable.value / 1e9, gpu->nvlink_link_raw.value / 1e9),
                    us(topology::nvlink_hop_latency()), nvlink_src});
  }
  rows.push_back({"CPU interconnect (socket-socket)", gbs(topology::cpu_interconnect_bandwidth()),
                  us(topology::cpu_interconnect_latency()), "NCCL topo.h AMD_BW 16 (EPYC xGMI); links.csv UPI ~100 ns hop"});
  return table("Internal links (per direction)", rows);
}

std::string models() {
  std::vector<Row> rows{{"id", "params B", "layers", "hidden", "heads", "kv_heads", "ffn", "seq", "vocab"}};
  for (const auto& m : workloads::all_model_presets())
    rows.push_back({m.id, fmt::format("{:.2f}", m.parameters() / 1e9), std::to_string(m.layers), std::to_string(m.hidden),
                    std::to_string(m.heads), std::to_string(m.kv_heads), std::to_string(m.ffn_hidden),
                    std::to_string(m.seq_len), std::to_string(m.vocab)});
  return table("Model presets", rows);
}

}  // namespace

std::string catalog_table(std::string_view what) {
  if (what == "gpus") return gpus();
  if (what == "nodes") return nodes();
  if (what == "nics") return nics();
  if (what == "links") return links();
  if (what == "models") return models();
  if (what.empty()) return gpus() + "\n" + nodes() + "\n" + nics() + "\n" + links() + "\n" + models();
  throw std::invalid_argument("unknown catalog '" + std::string(what) + "'; expected gpus, nodes, nics, links or models");
}

}  // namespace clustersim::analysis
