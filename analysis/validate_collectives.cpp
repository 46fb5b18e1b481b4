// Collective validation against published measurements (see validate_collectives.h).
#include "analysis/validate_collectives.h"

#include "analysis/csv.h"
#include "analysis/human_units.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/nccl_release.h"

#ifndef CLUSTERSIM_DATA_DIR
#error "CLUSTERSIM_DATA_DIR must be defined for the analysis library"
#endif

namespace clustersim::analysis {
namespace {

double number(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? v : NAN;
  } catch (const std::exception&) {
    return NAN;
  }
}

struct SystemMap {
  const char* prefix;   // the CSV system column starts with this
  const char* preset;   // node preset id
  const char* why;      // how the mapping was chosen
};
// The systems of collectives.csv and the presets that model them.
constexpr SystemMap kSystems[] = {
    {"H100 80GB HBM3 x8 per node", "hgx-h100-8x", "HGX/DGX-class H100 node, NVSwitch gen3"},
    {"ALCF Polaris", "polaris-a100-4x", "ALCF Polaris node (4x A100 NVLink, 2x Slingshot 11)"},
    {"single 8x A100 node", "dgx-a100-80gb", "8x A100 on NVSwitch gen2 (DGX/HGX A100 class)"},
    {"single 8x H200 node", "dgx-h200", "8x H200 on NVSwitch gen3"},
    // CoreWeave's GB200 rows (../shared/reference/modern/collectives_gb200_coreweave.csv): the
    // preset's node is one NVL72 rack, so the nodes column counts racks (1, 2, 20).
    {"GB200 NVL72 racks", "gb200-nvl72", "GB200 NVL72 rack: 72 GPUs in one NVLink 5 domain, IB between racks"},
};

// The largest group validate replays: CoreWeave's 20 NVL72 racks (1,440 GPUs). NCCL runs NVLSTree
// there (NVLS in each rack, a tree of racks), whose replay takes ~2 s per size on one core; a
// flat ring of that many GPUs would take minutes per size.
constexpr int kMaxSimulatedGpus = 1440;
// Events one row's replay may take (~10-20 s on one core): a replay that does not fold (e.g. Tree's
// chain pairs on 20 GB200 racks at 16 GiB, ~94 M transfers) is reported as skipped, not waited for.
constexpr std::uint64_t kValidationEventBudget = 20'000'000;

std::optional<workloads::CollectiveOp> op_of(const std::string& c) {
  using workloads::CollectiveOp;
  if (c == "all_reduce") return CollectiveOp::AllReduce;
  if (c == "all_gather") return CollectiveOp::AllGather;
  if (c == "reduce_scatter") return CollectiveOp::ReduceScatter;
  if (c == "alltoall") return CollectiveOp::AllToAll;
  if (c == "sendrecv") return CollectiveOp::SendRecv;
  if (c == "broadcast") return CollectiveOp::Broadcast;
  if (c == "reduce") return CollectiveOp::Reduce;
  return std::nullopt;
}

// One cluster per (preset, nodes), built once.
struct Cluster {
  topology::ClusterSpec spec;
  topology::Topology topo;
  topology::Router router;
  explicit Cluster(const topology::ClusterSpec& s) : spec(s), topo(topology::build_cluster(s)), router(topo) {}
};

// The release whose rules replay the row (see run_collective_validation); sets row.nccl_rules.
workloads::nccl::NcclRelease release_of(CollectiveValidationRow& row) {
  const workloads::nccl::NcclRelease* r = nullptr;
  if (!row.nccl_stated.empty()) {
    r = workloads::nccl::find_release(row.nccl_stated);
    if (r == nullptr) r = &workloads::nccl::known_releases().front();  // older than every entry
  } else {
    r = &workloads::nccl::default_release();
  }
  row.nccl_rules = r->version;
  return *r;
}

void simulate(CollectiveValidationRow& row, const SystemMap& sys, std::map<std::string, std::unique_ptr<Cluster>>& clusters) {
  const auto op = op_of(row.collective);
  if (!op) {
    row.skip_reason = "'" + row.collective + "' is not an nccl-tests collective";
    return;
  }
  const topology::NodeSpec* node = topology::find_node_preset(sys.preset);
  const int total = node->gpus * row.nodes;
  if (row.gpus < 2 || row.gpus > total || row.gpus % row.nodes != 0) {
    row.skip_reason = fmt::format("{} GPUs on {} x {} cannot be laid out", row.gpus, row.nodes, sys.preset);
    return;
  }
  if (row.gpus > kMaxSimulatedGpus) {
    row.skip_reason = fmt::format("{} GPUs: a flow-level replay takes minutes per size at this scale; run `clustersim "
                                  "collective --node {} --nodes {}` to see it", row.gpus, sys.preset, row.nodes);
    return;
  }
  if (!(row.bytes > 0) || !(row.measured_time_us > 0)) {
    row.skip_reason = "no size or time in the row";
    return;
  }
  const std::string key = fmt::format("{}x{}", sys.preset, row.nodes);
  auto& c = clusters[key];
  if (!c) {
    topology::ClusterSpec spec;
    spec.node = *node;
    spec.nodes = row.nodes;
    c = std::make_unique<Cluster>(spec);
  }
  const topology::GpuSpec* gpu = topology::find_gpu(node->gpu);
  workloads::GraphHints hints = workloads::graph_hints(c->spec);
  hints.nccl_release = release_of(row);
  workloads::CollectiveEnvironment env{c->topo, c->router, gpu->compute_capability, hints};
  env.event_budget = kValidationEventBudget;
  workloads::CollectiveRequest req;
  req.op = *op;
  req.algo = workloads::CollectiveAlgo::Auto;
  // The first gpus/nodes GPUs of every node (nccl-tests -g or a CUDA_VISIBLE_DEVICES subset).
  const int per_node = row.gpus / row.nodes;
  for (int s = 0; s < row.nodes; ++s) {
    for (int g = 0; g < per_node; ++g) req.ranks.push_back(s * node->gpus + g);
  }
  req.bytes = sim::Bytes{row.bytes};
  workloads::CollectiveResult r;
  try {
    r = workloads::simulate_collective(env, req);
  } catch (const workloads::SimulationBudgetExceeded& e) {
    const workloads::CollectivePlan plan = workloads::plan_collective(env, req);
    row.skip_reason = collective_budget_skip_reason(workloads::to_string(plan.request.algo),
                                                    workloads::to_string(plan.protocol), e.what(), sys.preset,
                                                    row.nodes, row.bytes);
    return;
  }
  const workloads::HostLaunch launch = benchmark_host_launch(row.notes);
  const sim::SimTime measured =
      workloads::measured_time(r.time, launch, r.nccl_channels, workloads::default_host_launch_constants());
  row.simulated = true;
  row.device_time_us = r.time.us();
  row.predicted_time_us = measured.us();
  row.predicted_busbw = row.bytes / measured.seconds() / 1e9 * workloads::busbw_factor(*op, row.gpus);
  row.launch = launch.timing == workloads::HostTiming::PerCall ? "torch per call"
               : launch.gpus_per_thread > 1                   ? fmt::format("-g {}", launch.gpus_per_thread)
                                                              : "";
  row.algo = std::string(workloads::to_string(r.algo));
  row.protocol = std::string(workloads::to_string(r.protocol));
  if (!(row.measured_busbw > 0)) {
    row.measured_busbw = row.bytes / (row.measured_time_us * 1e-6) / 1e9 * workloads::busbw_factor(*op, row.gpus);
  }
}

}  // namespace

std::string collective_budget_skip_reason(std::string_view algo, std::string_view protocol, std::string_view why,
                                         std::string_view preset, int nodes, double bytes) {
  const std::string flag = size_flag(bytes);
  return fmt::format("NCCL's tuner picks {}/{} here at {}, and {}: over the validation budget; run `clustersim "
                     "collective --node {} --nodes {} -b {} -e {}` to see it",
                     algo, protocol, human_binary_bytes(bytes), why, preset, nodes, flag, flag);
}

std::string default_collectives_csv() { return std::string(CLUSTERSIM_DATA_DIR) + "/collectives.csv"; }
std::string gb200_collectives_csv() { return std::string(CLUSTERSIM_DATA_DIR) + "/collectives_gb200.csv"; }

workloads::HostLaunch benchmark_host_launch(const std::string& notes) {
  workloads::HostLaunch launch;
  if (notes.find("torch.distributed") != std::string::npos) {
    launch.timing = workloads::HostTiming::PerCall;
    launch.framework_call_us = workloads::default_host_launch_constants().torch_distributed_call_us;
    return launch;
  }
  const std::size_t g = notes.find(" -g ");
  if (g != std::string::npos) {
    const int n = std::atoi(notes.c_str() + g + 4);
    if (n > 0) launch.gpus_per_thread = n;
  }
  return launch;
}

std::string CollectiveValidationRow::nccl_label() const {
  if (nccl_stated.empty()) return "";
  return nccl_stated == nccl_rules ? nccl_stated : nccl_stated + " as " + nccl_rules;
}

double CollectiveValidationRow::error_pct() const { return (predicted_busbw - measured_busbw) / measured_busbw * 100.0; }

std::string collective_size_band(double bytes) {
  if (bytes < 1048576.0) return "<1MiB";
  if (bytes < 67108864.0) return "1-64MiB";
  return ">=64MiB";
}

double collective_target_pct(const std::string& band) {
  if (band == ">=64MiB") return 10.0;
  if (band == "1-64MiB") return 20.0;
  return 0.0;
}

CollectiveValidation run_collective_validation(const std::string& csv_path) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string path = csv_path.empty() ? default_collectives_csv() : csv_path;
  const std::vector<CsvRecord> records = read_csv_file(path);
  if (records.empty()) throw std::runtime_error(path + ": empty file");
  const std::vector<std::string>& header = records.front().fields;
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"source", "system", "gpus", "nodes", "collective", "bytes", "time_us", "busbw_GBps"}) {
    if (!col.count(need)) throw std::runtime_error(path + ": missing column '" + need + "'");
  }
  CollectiveValidation v;
  v.data_file = path.substr(path.find_last_of('/') + 1);
  std::map<std::string, std::unique_ptr<Cluster>> clusters;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const std::vector<std::string>& f = records[r].fields;
    auto get = [&](const char* name) { return col[name] < f.size() ? f[col[name]] : std::string(); };
    CollectiveValidationRow row;
    row.line = records[r].line;
    row.source = get("source");
    row.system = get("system");
    row.collective = get("collective");
    row.gpus = static_cast<int>(number(get("gpus")));
    row.nodes = static_cast<int>(number(get("nodes")));
    row.bytes = number(get("bytes"));
    row.measured_time_us = number(get("time_us"));
    row.measured_busbw = number(get("busbw_GBps"));
    row.notes = col.count("notes") ? get("notes") : std::string();
    row.nccl_stated = col.count("nccl_version") ? get("nccl_version") : std::string();
    row.band = std::isnan(row.bytes) ? "" : collective_size_band(row.bytes);
    const SystemMap* sys = nullptr;
    for (const SystemMap& s : kSystems) {
      if (row.system.rfind(s.prefix, 0) == 0) sys = &s;
    }
    if (!op_of(row.collective)) {
      row.skip_reason = "'" + row.collective + "' is not an nccl-tests collective (nothing to simulate)";
    } else if (sys == nullptr) {
      row.skip_reason = "no node preset models system '" + row.system + "'";
    } else {
      row.system_label = fmt::format("{} x{}, {} GPUs", sys->preset, row.nodes, row.gpus);
      simulate(row, *sys, clusters);
    }
    v.rows.push_back(std::move(row));
  }
  std::map<std::string, std::size_t> group_index;
  std::vector<std::vector<double>> errors;
  for (const auto& r : v.rows) {
    if (!r.simulated) continue;
    const std::string key = r.system_label + "|" + r.collective + "|" + r.band;
    auto [it, fresh] = group_index.emplace(key, v.groups.size());
    if (fresh) {
      v.groups.push_back({r.system_label, r.collective, r.band, 0, 0, collective_target_pct(r.band)});
      errors.emplace_back();
    }
    errors[it->second].push_back(std::abs(r.error_pct()));
  }
  for (std::size_t g = 0; g < v.groups.size(); ++g) {
    v.groups[g].rows = static_cast<int>(errors[g].size());
    v.groups[g].mape_pct = std::accumulate(errors[g].begin(), errors[g].end(), 0.0) / static_cast<double>(errors[g].size());
  }
  v.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return v;
}

std::string collective_validation_text(const CollectiveValidation& v) {
  std::string out = "# Collectives: simulated (--algo auto, NCCL's tuner) vs measured busbw, "
                    "analysis/validation/data/" + v.data_file + "\n";
  out += fmt::format("{:>5}  {:<28} {:<15} {:>12} {:>10} {:>10} {:>8}  {}\n", "line", "system", "collective", "bytes",
                     "measured", "predicted", "error", "ran");
  out += fmt::format("{:>5}  {:<28} {:<15} {:>12} {:>10} {:>10} {:>8}\n", "", "", "", "", "(GB/s)", "(GB/s)", "(%)");
  for (const auto& r : v.rows) {
    if (!r.simulated) continue;
    out += fmt::format("{:>5}  {:<28} {:<15} {:>12.0f} {:>10.2f} {:>10.2f} {:>+8.1f}  {}/{}{}{}\n", r.line, r.system_label,
                       r.collective, r.bytes, r.measured_busbw, r.predicted_busbw, r.error_pct(), r.algo, r.protocol,
                       r.launch.empty() ? "" : " (" + r.launch + ")",
                       r.nccl_label().empty() ? "" : " [NCCL " + r.nccl_label() + "]");
  }
  out += fmt::format("# Each row replays with the NCCL release its source states ([NCCL x]; \"a as b\": the nearest earlier "
                     "release whose rules clustersim has, or the oldest, {}); unmarked rows: the default {}. Known: {}\n",
                     workloads::nccl::known_releases().front().version, workloads::nccl::default_release().version,
                     workloads::nccl::known_release_list());
  out += "\n# MAPE per group (system x collective x size band); targets: >=64MiB 10%, 1-64MiB 20%, <1MiB none\n";
  out += fmt::format("{:<28} {:<15} {:<8} {:>5} {:>8} {:>7}  {}\n", "system", "collective", "band", "rows", "MAPE(%)",
                     "target", "status");
  int misses = 0;
  for (const auto& g : v.groups) {
    const std::string target = g.target_pct > 0 ? fmt::format("{:.0f}%", g.target_pct) : "-";
    const char* status = g.target_pct <= 0 ? "(no target)" : (g.meets() ? "ok" : "MISS");
    misses += g.meets() ? 0 : 1;
    out += fmt::format("{:<28} {:<15} {:<8} {:>5} {:>8.1f} {:>7}  {}\n", g.system_label, g.collective, g.band, g.rows,
                       g.mape_pct, target, status);
  }
  int skipped = 0;
  for (const auto& r : v.rows) skipped += r.simulated ? 0 : 1;
  if (skipped > 0) {
    out += "\n# Skipped rows\n";
    for (const auto& r : v.rows) {
      if (!r.simulated) out += fmt::format("{:>5}  {}: {}\n", r.line, r.system, r.skip_reason);
    }
  }
  out += fmt::format("\n# {} rows simulated, {} skipped, {} of {} groups miss their target; {:.2f} s\n",
                     v.rows.size() - static_cast<std::size_t>(skipped), skipped, misses, v.groups.size(), v.wall_s);
  return out;
}

std::string collective_validation_json(const CollectiveValidation& v) {
  nlohmann::json rows = nlohmann::json::array(), skipped = nlohmann::json::array(), groups = nlohmann::json::array();
  for (const auto& r : v.rows) {
    if (!r.simulated) {
      skipped.push_back({{"line", r.line}, {"system", r.system}, {"collective", r.collective}, {"reason", r.skip_reason}});
      continue;
    }
    rows.push_back({{"line", r.line},
                    {"source", r.source},
                    {"system", r.system_label},
                    {"collective", r.collective},
                    {"gpus", r.gpus},
                    {"nodes", r.nodes},
                    {"bytes", r.bytes},
                    {"band", r.band},
                    {"measured_busbw", r.measured_busbw},
                    {"measured_time_us", r.measured_time_us},
                    {"predicted_busbw", r.predicted_busbw},
                    {"predicted_time_us", r.predicted_time_us},
                    {"device_time_us", r.device_time_us},
                    {"launch", r.launch},
                    {"error_pct", r.error_pct()},
                    {"algo", r.algo},
                    {"protocol", r.protocol},
                    {"nccl_version", r.nccl_stated},
                    {"nccl_rules", r.nccl_rules}});
  }
  for (const auto& g : v.groups) {
    groups.push_back({{"system", g.system_label},
                      {"collective", g.collective},
                      {"band", g.band},
                      {"rows", g.rows},
                      {"mape_pct", g.mape_pct},
                      {"target_pct", g.target_pct > 0 ? nlohmann::json(g.target_pct) : nlohmann::json(nullptr)},
                      {"meets_target", g.meets()}});
  }
  nlohmann::json out{{"rows", rows}, {"groups", groups}, {"skipped", skipped}, {"wall_s", v.wall_s}};
  return out.dump(2) + "\n";
}

}  // namespace clustersim::analysis
