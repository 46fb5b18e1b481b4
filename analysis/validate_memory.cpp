#include "analysis/validate_memory.h"

#include "analysis/csv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/enum_names.h"
#include "workloads/memory/memory_model.h"

#ifndef CLUSTERSIM_DATA_DIR
#error "CLUSTERSIM_DATA_DIR must name analysis/validation/data (set by CMakeLists.txt)"
#endif

namespace clustersim::analysis {
namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> read_csv(const std::string& path) {
  const std::vector<CsvRecord> records = read_csv_file(path);
  if (records.empty()) throw std::runtime_error(path + ": empty file");
  const std::vector<std::string>& header = records.front().fields;
  std::vector<Row> rows;
  for (std::size_t n = 1; n < records.size(); ++n) {
    const std::vector<std::string>& cells = records[n].fields;
    if (cells.size() != header.size()) {
      throw std::runtime_error(path + ":" + std::to_string(records[n].line) + ": expected " + std::to_string(header.size()) +
                               " fields, found " + std::to_string(cells.size()));
    }
    Row r;
    for (std::size_t i = 0; i < header.size(); ++i) r[header[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }
int as_int(const Row& r, const char* key) { return std::atoi(r.at(key).c_str()); }

std::string trust_of(const Row& r) {
  const std::string& note = r.at("notes");
  const auto at = note.find("[trust:");
  if (at == std::string::npos) return "";
  return note.substr(at + 7, note.find(']', at) - at - 7);
}

// Korthikanti et al. Table 3 as Calculon encodes it (validation/seqsel/fig1/*.json).
workloads::MemoryRequest korthikanti_request(const Row& r) {
  struct Setup {
    int global_batch, virtual_stages;
  };
  const std::string& model = r.at("model");
  const Setup setup = model == "megatron-22B" ? Setup{4, 1}
                      : model == "gpt3-175B"  ? Setup{64, 3}
                      : model == "turing-530B" ? Setup{280, 3}
                                               : Setup{512, 1};
  workloads::MemoryRequest q;
  q.model.id = model;
  q.model.layers = as_int(r, "layers");
  q.model.hidden = as_int(r, "hidden");
  q.model.heads = as_int(r, "heads");
  q.model.kv_heads = q.model.heads;
  q.model.ffn_hidden = 4 * q.model.hidden;
  q.model.seq_len = as_int(r, "seq_len");
  q.model.vocab = 51200;
  q.model.flash_attention = false;  // the paper's Table 2 counts the materialised s x s scores
  q.parallel.tp = as_int(r, "tp");
  q.parallel.pp = as_int(r, "pp");
  q.parallel.dp = 1;
  q.parallel.virtual_stages = setup.virtual_stages;
  q.parallel.schedule = setup.virtual_stages > 1 ? workloads::Schedule::Interleaved : workloads::Schedule::OneFOneB;
  q.parallel.sequence_parallel = r.at("seq_parallel") == "yes";
  q.training.global_batch = setup.global_batch;
  q.training.micro_batch = std::max(1, as_int(r, "micro_batch"));
  q.training.precision = topology::Precision::Fp16;
  // An empty or unknown cell means no recomputation.
  q.training.recompute = sim::parse(workloads::kRecomputeNames, r.at("recompute")).value_or(workloads::Recompute::None);
  q.capacity = sim::Bytes{80e9};
  q.options.exact_layer_params = false;
  q.training.grad_dtype = workloads::StateDtype::Fp32;  // Megatron's fp32 main_grad
  return q;
}

std::string korthikanti_config(const Row& r) {
  return "tp " + r.at("tp") + " pp " + r.at("pp") + ", recompute " + r.at("recompute") +
         (r.at("seq_parallel") == "yes" ? " + sp" : "");
}

MemoryValidationRow zero_row(const Row& r) {
  const std::string& stage = r.at("zero_or_sharding");
  workloads::ParallelSpec par;
  par.dp = as_int(r, "dp");
  par.zero = contains(stage, "stage 3") ? 3 : contains(stage, "stage 2") ? 2 : contains(stage, "stage 1") ? 1 : 0;
  workloads::TrainingSpec tr;
  tr.precision = topology::Precision::Fp16;
  tr.grad_dtype = workloads::StateDtype::Fp16;  // the paper's 2 + 2 + K
  const double psi = std::atof(r.at("params_B").c_str()) * 1e9;
  MemoryValidationRow v;
  v.source = "ZeRO Fig. 1";
  v.kind = "model states";
  v.model = r.at("model");
  v.config = stage + ", dp " + r.at("dp");
  v.unit = "GB";
  v.predicted = workloads::model_state_bytes(psi, par, tr).total().value / 1e9;
  return v;
}

MemoryValidationRow fig1_row(const Row& r, bool states) {
  const workloads::MemoryBreakdown b = workloads::stage_memory(korthikanti_request(r), 0);
  double bytes = 0;
  const std::vector<const char*> lines = states ? std::vector<const char*>{"layers: weights", "layers: gradients",
                                                                          "layers: optimizer states"}
                                                : std::vector<const char*>{"layers: activations"};
  for (const char* name : lines) {
    const workloads::MemoryLine* l = b.find_line(name);
    if (l == nullptr) throw std::runtime_error(std::string("memory model has no line '") + name + "'");
    bytes += l->bytes.value;
  }
  MemoryValidationRow v;
  v.source = "Korthikanti Fig. 1";
  v.kind = states ? "params+grads+optimizer" : "activations";
  v.model = r.at("model");
  v.config = korthikanti_config(r);
  v.unit = "GB";
  v.predicted = bytes / 1e9;
  return v;
}

MemoryValidationRow fig7_row(const Row& r) {
  const workloads::MemoryRequest q = korthikanti_request(r);
  const int t = q.parallel.tp;
  const double baseline = workloads::activation_bytes_per_layer(q.model, 1, t, false, workloads::Recompute::None).value;
  const double mode =
      workloads::activation_bytes_per_layer(q.model, 1, t, q.parallel.sequence_parallel, q.training.recompute).value;
  const std::string& kind = r.at("kind");
  MemoryValidationRow v;
  v.source = "Korthikanti Fig. 7";
  v.kind = "relative activations";
  v.model = r.at("model");
  v.config = korthikanti_config(r);
  v.unit = "%";
  v.predicted = 100.0 * mode / baseline;
  v.published = std::atof(kind.substr(kind.find('=') + 1).c_str());
  return v;
}

}  // namespace

double MemoryValidationRow::error_pct() const { return published != 0 ? (predicted - published) / published * 100.0 : 0.0; }

MemoryValidation run_memory_validation(const std::string& csv_path) {
  const std::string path = csv_path.empty() ? std::string(CLUSTERSIM_DATA_DIR) + "/memory.csv" : csv_path;
  MemoryValidation out;
  for (const Row& r : read_csv(path)) {
    const std::string& kind = r.at("kind");
    MemoryValidationRow v;
    if (contains(kind, "model states only")) {
      v = zero_row(r);
    } else if (contains(kind, "params+grads+optimizer")) {
      v = fig1_row(r, true);
    } else if (contains(kind, "- activations")) {
      v = fig1_row(r, false);
    } else if (contains(kind, "RELATIVE")) {
      v = fig7_row(r);
    } else {
      throw std::runtime_error(path + ": row of unknown kind '" + kind + "'");
    }
    if (v.unit == "GB") v.published = std::atof(r.at("measured_GB").c_str());
    v.trust = trust_of(r);
    out.rows.push_back(std::move(v));
  }
  double total = 0;
  for (const MemoryValidationRow& v : out.rows) {
    auto g = std::find_if(out.groups.begin(), out.groups.end(),
                          [&](const MemoryValidationGroup& x) { return x.source == v.source && x.kind == v.kind; });
    if (g == out.groups.end()) g = out.groups.insert(out.groups.end(), MemoryValidationGroup{v.source, v.kind, 0, 0});
    g->rows += 1;
    g->mape_pct += std::abs(v.error_pct());
    total += std::abs(v.error_pct());
  }
  for (MemoryValidationGroup& g : out.groups) g.mape_pct /= g.rows;
  out.mape_pct = out.rows.empty() ? 0.0 : total / static_cast<double>(out.rows.size());
  return out;
}

std::string validate_memory(bool json) {
  const MemoryValidation v = run_memory_validation();
  if (json) {
    nlohmann::json rows = nlohmann::json::array(), groups = nlohmann::json::array();
    for (const MemoryValidationRow& r : v.rows) {
      rows.push_back({{"source", r.source}, {"kind", r.kind}, {"model", r.model}, {"config", r.config},
                      {"unit", r.unit}, {"trust", r.trust}, {"predicted", r.predicted}, {"published", r.published},
                      {"error_pct", r.error_pct()}});
    }
    for (const MemoryValidationGroup& g : v.groups) {
      groups.push_back({{"source", g.source}, {"kind", g.kind}, {"rows", g.rows}, {"mape_pct", g.mape_pct}});
    }
    return nlohmann::json{{"memory", {{"rows", rows}, {"groups", groups}, {"mape_pct", v.mape_pct}}}}.dump(2) + "\n";
  }
  std::string out = "Memory model vs published (analysis/validation/data/memory.csv; analytical figures, trust B/C)\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-19s %-23s %-13s %-34s %11s %11s %8s %5s\n", "source", "kind", "model", "config",
                "predicted", "published", "error", "trust");
  out += buf;
  for (const MemoryValidationRow& r : v.rows) {
    std::snprintf(buf, sizeof buf, "%-19s %-23s %-13s %-34s %8.3f %-2s %8.3f %-2s %+7.2f%% %5s\n", r.source.c_str(),
                  r.kind.c_str(), r.model.c_str(), r.config.c_str(), r.predicted, r.unit.c_str(), r.published,
                  r.unit.c_str(), r.error_pct(), r.trust.c_str());
    out += buf;
  }
  out += "\nMAPE per source and kind:\n";
  for (const MemoryValidationGroup& g : v.groups) {
    std::snprintf(buf, sizeof buf, "  %-19s %-23s %3d rows  MAPE %6.3f%%\n", g.source.c_str(), g.kind.c_str(), g.rows,
                  g.mape_pct);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "  %-43s %3zu rows  MAPE %6.3f%%\n", "all", v.rows.size(), v.mape_pct);
  out += buf;
  return out;
}

}  // namespace clustersim::analysis
