// Sampling the simulated iterations like `dcgmi dmon` (see dmon.h).
#include "analysis/dmon.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "analysis/link_traffic.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/compute/power_model.h"

namespace clustersim::analysis {
namespace {

constexpr std::array<DmonField, 11> kFields{{
    {100, "SMCLK", false},
    {155, "POWER", true},
    {203, "GPUTL", false},
    {204, "MCUTL", false},
    {1002, "SMACT", true},
    {1004, "TENSO", true},
    {1005, "DRAMA", true},
    {1009, "PCITX", false},
    {1010, "PCIRX", false},
    {1011, "NVLTX", false},
    {1012, "NVLRX", false},
}};
constexpr int kHeaderEvery = 14;  // dcgmi's MAX_PRINT_HEADER_COUNT
constexpr int kEntityWidth = 16;  // DCGM >= 4.x
constexpr int kFieldWidth = 18;   // width(10) + 6, plus 2 of padding

const DmonField* find_field(int id) {
  for (const auto& f : kFields) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::string supported_list() {
  std::string out;
  for (const auto& f : kFields) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", f.id, f.short_name);
  return out;
}

struct Interval {
  double lo, hi;
};

double overlap(double a0, double a1, double b0, double b1) { return std::max(0.0, std::min(a1, b1) - std::max(a0, b0)); }

// One representative GPU: its busy intervals, memory-busy weights and links.
struct Entity {
  int gpu = 0;
  std::vector<Interval> busy;                        // merged compute-stream intervals
  std::vector<std::pair<Interval, double>> memory;   // compute spans and their memory-busy share
  std::vector<std::pair<Interval, double>> tensor;   // compute spans and their tensor-busy share
  std::vector<Interval> comm;                        // blocking collectives nested in the passes
  int host = 0, local = 0;                           // server and its GPU index (dcgmi's "GPU <id>")
  std::vector<topology::LinkId> nvl_tx, nvl_rx, pci_tx, pci_rx;
};

std::vector<Entity> entities(const RunReport& r, const topology::Topology& topo) {
  std::vector<Entity> out(static_cast<std::size_t>(r.spec.parallel.pp));
  for (std::size_t k = 0; k < out.size(); ++k) out[k].gpu = -1;
  std::vector<std::vector<Interval>> spans(out.size());
  for (const auto& s : r.iteration.timeline) {
    if (s.stream != 0 || s.rank < 0 || static_cast<std::size_t>(s.rank) >= out.size()) continue;
    Entity& e = out[static_cast<std::size_t>(s.rank)];
    e.gpu = s.gpu;
    spans[static_cast<std::size_t>(s.rank)].push_back({s.start_s, s.end_s});
    if (s.kind != workloads::SpanKind::TensorParallel && s.kind != workloads::SpanKind::ContextParallel &&
        s.kind != workloads::SpanKind::ExpertParallel) {
      e.memory.push_back({{s.start_s, s.end_s}, s.memory_busy});
      e.tensor.push_back({{s.start_s, s.end_s}, s.tensor_busy});
    } else {
      e.comm.push_back({s.start_s, s.end_s});
    }
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    auto& v = spans[k];
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    for (const Interval& i : v) {
      if (!out[k].busy.empty() && i.lo <= out[k].busy.back().hi) {
        out[k].busy.back().hi = std::max(out[k].busy.back().hi, i.hi);
      } else {
        out[k].busy.push_back(i);
      }
    }
    Entity& e = out[k];
    if (e.gpu < 0) e.gpu = static_cast<int>(k) * r.spec.parallel.tp * r.spec.parallel.cp * r.spec.parallel.dp;
    e.host = topo.server_of_gpu(e.gpu);
    e.local = e.gpu - e.host * topo.gpus_per_server();
    for (topology::LinkId l : topo.out_links(topo.gpu(e.gpu))) {
      const auto kind = topo.link(l).kind;
      if (kind == topology::LinkKind::NvLink) {
        e.nvl_tx.push_back(l);
        e.nvl_rx.push_back(topology::Topology::reverse(l));
      } else if (kind == topology::LinkKind::Pcie) {
        e.pci_tx.push_back(l);
        e.pci_rx.push_back(topology::Topology::reverse(l));
      }
    }
  }
  return out;
}

// dcgmi numbers GPUs per host ("GPU 0" .. "GPU 7" on each); a cluster's rows name the host first,
// as `dcgmi dmon --host node3` output gathered from several hosts reads: "node3 GPU 5".
std::string entity_name(const Entity& e, bool multi_host) {
  return multi_host ? fmt::format("node{} GPU {}", e.host, e.local) : fmt::format("GPU {}", e.local);
}

std::string header(const std::vector<const DmonField*>& fields) {
  std::string names = fmt::format("{:<{}}", "#Entity", kEntityWidth);
  std::string ids = fmt::format("{:<{}}", "ID", kEntityWidth);
  for (const DmonField* f : fields) {
    names += fmt::format("{:<{}}", f->short_name, kFieldWidth);
    ids += fmt::format("{:<{}}", "", kFieldWidth);
  }
  return names + "\n" + ids + "\n";
}

}  // namespace

std::span<const DmonField> dmon_fields() { return kFields; }

std::vector<int> parse_dmon_fields(std::string_view list) {
  std::vector<int> ids;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item(list.substr(pos, comma - pos));
    int id = -1;
    try {
      std::size_t used = 0;
      id = std::stoi(item, &used);
      if (used != item.size()) id = -1;
    } catch (const std::exception&) {
      id = -1;
    }
    if (id < 0 || find_field(id) == nullptr) {
      throw std::invalid_argument("-e: unsupported field id '" + item + "'; supported: " + supported_list());
    }
    ids.push_back(id);
    pos = comma + 1;
  }
  return ids;
}

std::string dmon_text(const RunReport& r, const DmonOptions& options) {
  if (options.period_ms < 1) throw std::invalid_argument("-d: the period is in milliseconds, at least 1");
  std::vector<const DmonField*> fields;
  for (int id : options.fields) {
    const DmonField* f = find_field(id);
    if (f == nullptr) throw std::invalid_argument("-e: unsupported field id " + std::to_string(id) + "; supported: " + supported_list());
    fields.push_back(f);
  }
  if (r.topology == nullptr || !r.compute) throw std::invalid_argument("dmon: the run was not simulated");
  const topology::Topology& topo = *r.topology;
  const topology::GpuSpec* gpu = topology::find_gpu(r.spec.cluster.node.gpu);
  if (gpu == nullptr) throw std::invalid_argument("unknown GPU '" + r.spec.cluster.node.gpu + "'");
  const workloads::ComputeModel& compute = *r.compute;
  const workloads::PowerDraw power = workloads::power_draw(*gpu, r.spec.cluster.power_limit_w, compute.constants());

  const double period = options.period_ms / 1e3;
  const double total = r.iteration.simulated_s;
  const int samples = std::max(1, static_cast<int>(std::ceil(total / period - 1e-9)));
  const LinkTrafficGrid grid = link_traffic_grid(r.iteration, topo, period, samples);
  const std::vector<Entity> gpus = entities(r, topo);
  const bool multi_host = topo.servers() > 1;

  std::string out = fmt::format(
      "# clustersim dmon: {} ({:.6f} s simulated, {} iteration(s)); one row per pipeline rank's representative GPU "
      "(tp rank 0, dp rank 0): tensor- and data-parallel replicas are folded onto it\n",
      r.spec.name, total, r.iteration.iterations);
  int rows = 0;
  for (int k = 0; k < samples; ++k) {
    const double lo = k * period, hi = std::min(total, (k + 1) * period);
    const double len = std::max(hi - lo, 1e-12);
    for (const Entity& e : gpus) {
      if (rows % kHeaderEvery == 0) out += header(fields);
      ++rows;
      double busy = 0, memory = 0, tensor = 0, kernels = 0;
      for (const Interval& i : e.busy) busy += overlap(i.lo, i.hi, lo, hi);
      for (const auto& [i, share] : e.memory) memory += overlap(i.lo, i.hi, lo, hi) * share;
      for (const auto& [i, share] : e.tensor) tensor += overlap(i.lo, i.hi, lo, hi) * share;
      for (const auto& [i, share] : e.memory) kernels += overlap(i.lo, i.hi, lo, hi);
      for (const Interval& i : e.comm) kernels -= overlap(i.lo, i.hi, lo, hi);
      const double busy_share = std::min(1.0, busy / len);
      const auto rate = [&](const std::vector<topology::LinkId>& links) {
        double bytes = 0;
        for (topology::LinkId l : links) {
          if (const LinkSeries* s = grid.find(l)) bytes += s->bytes[static_cast<std::size_t>(k)];
        }
        return bytes / len;
      };
      std::string row = fmt::format("{:<{}}", entity_name(e, multi_host), kEntityWidth);
      for (const DmonField* f : fields) {
        double v = 0;
        switch (f->id) {
          case 100: v = busy_share * compute.sustained_clock_mhz() + (1.0 - busy_share) * gpu->boost_clock_mhz; break;
          case 155: v = power.at_busy_share(busy_share); break;
          case 203: v = 100.0 * busy_share; break;
          case 204: v = 100.0 * std::min(1.0, memory / len); break;
          case 1002: v = std::clamp(kernels / len, 0.0, 1.0); break;
          case 1004: v = std::clamp(tensor / len, 0.0, 1.0); break;
          case 1005: v = std::clamp(memory / len, 0.0, 1.0); break;
          case 1009: v = rate(e.pci_tx); break;
          case 1010: v = rate(e.pci_rx); break;
          case 1011: v = rate(e.nvl_tx); break;
          case 1012: v = rate(e.nvl_rx); break;
          default: break;
        }
        const std::string cell = f->is_double ? fmt::format("{:.3f}", v) : fmt::format("{}", std::llround(v));
        row += fmt::format("{:<{}}", cell, kFieldWidth);
      }
      out += row + "\n";
    }
  }
  return out;
}

}  // namespace clustersim::analysis
