#include "analysis/validate_gemm.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>

#include "analysis/csv.h"
#include "analysis/training_rows.h"
#include "analysis/validate_modern.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/op_builders.h"
#include "workloads/training/tp_gather_format.h"

namespace clustersim::analysis {
namespace {

constexpr std::array<std::string_view, 9> kHeader = {"gpu",    "power_limit_w", "precision",   "scaling", "mode",
                                                     "label",  "shapes",        "measured_ms", "source"};

struct Shape {
  double m = 0, k = 0, n = 0;
};

// "MxKxN;MxKxN;..." (the benchmark's M x K x N: tokens, input width, output width).
std::vector<Shape> parse_shapes(const std::string& cell, const std::string& where) {
  std::vector<Shape> out;
  std::size_t start = 0;
  while (start <= cell.size()) {
    const std::size_t end = std::min(cell.find(';', start), cell.size());
    const std::string one = cell.substr(start, end - start);
    double dims[3] = {0, 0, 0};
    std::size_t pos = 0;
    for (int i = 0; i < 3; ++i) {
      const std::size_t x = i < 2 ? one.find('x', pos) : one.size();
      if (x == std::string::npos) throw std::runtime_error(where + ": column shapes: '" + one + "' is not MxKxN");
      dims[i] = csv_integer(one.substr(pos, x - pos), where, "shapes");
      if (dims[i] <= 0) throw std::runtime_error(where + ": column shapes: '" + one + "' has a dimension below 1");
      pos = x + 1;
    }
    out.push_back({dims[0], dims[1], dims[2]});
    start = end + 1;
  }
  return out;
}

topology::Precision precision_of(const std::string& cell, const std::string& where) {
  for (const auto& c : topology::kPrecisionNames)
    if (cell == c.name && (c.value == topology::Precision::Bf16 || topology::quantized_linears(c.value))) return c.value;
  throw std::runtime_error(where + ": column precision: '" + cell + "' (expected bf16, fp8 or nvfp4)");
}

// The row's GEMMs on its GPU. Kernel mode: roofline + one launch each, no cast (pre-quantized
// inputs). Autocast mode (a te.Linear forward per GEMM with gradients enabled): the GEMM with the
// cast of its input A[m,k] that ComputeModel charges a forward linear, plus the same recipe's cast
// of the weight [k,n], which this call repeats (training casts a weight once per step).
double predicted_ms(const topology::GpuSpec& gpu, double power_limit_w, topology::Precision precision,
                    const std::string& scaling, bool autocast, const std::vector<Shape>& shapes) {
  topology::ClusterSpec cluster;
  cluster.power_limit_w = power_limit_w;
  workloads::ComputeConstants constants;
  if (scaling == "current") constants.set("fp8_amax_bytes_per_element", 2.0);
  if (scaling == "mxfp8") constants.set("fp8_block_scale_bytes_per_element", workloads::kMxfp8ScaleBytesPerElement);
  const workloads::ComputeModel model(gpu, cluster, precision, constants);
  const double launch_s = constants.get("kernel_launch_us") * 1e-6;
  const bool quantized = topology::quantized_linears(precision);
  double seconds = 0;
  for (const Shape& s : shapes) {
    const workloads::OpCost op = workloads::ops::gemm("gemm", workloads::OpKind::Gemm, s.m, s.n, s.k, 1, 2.0, quantized);
    const workloads::OpTimeParts parts = model.op_time_parts(op, workloads::Pass::Forward);
    if (!autocast) {
      seconds += std::max(parts.flops_s, parts.bytes_s) + launch_s;
      continue;
    }
    // The weight's cast: a forward cast of n x k elements (an op whose A is the weight).
    const workloads::OpCost weight = workloads::ops::gemm("gemm", workloads::OpKind::Gemm, s.n, s.m, s.k, 1, 2.0, quantized);
    const workloads::OpTimeParts w = model.op_time_parts(weight, workloads::Pass::Forward);
    seconds += parts.time_s() + w.cast_s + (w.kernels - 1) * launch_s;
  }
  return seconds * 1e3;
}

std::string format_of(const GemmValidationRow& r) {
  if (r.precision != "fp8") return r.precision;
  return r.scaling == "mxfp8" ? "mxfp8" : "fp8 " + r.scaling;
}

// The group a row is summarised in: its GPU, format and mode.
bool same_group(const GemmValidationRow& r, const GemmValidationGroup& g) {
  return r.gpu == g.gpu && format_of(r) == g.format && r.mode == g.mode;
}

// Summed bf16 time of the same GPU over the labels of `g`'s rows (0 when a label has no bf16 row).
std::pair<double, double> bf16_of(const GemmValidation& v, const GemmValidationGroup& g) {
  double measured = 0, predicted = 0;
  for (const GemmValidationRow& r : v.rows) {
    if (!same_group(r, g)) continue;
    const auto same = std::find_if(v.rows.begin(), v.rows.end(), [&](const GemmValidationRow& b) {
      return b.gpu == r.gpu && b.precision == "bf16" && b.label == r.label;
    });
    if (same == v.rows.end()) return {0, 0};
    measured += same->measured_ms;
    predicted += same->predicted_ms;
  }
  return {measured, predicted};
}

}  // namespace

double GemmValidationRow::error_pct() const { return (predicted_ms - measured_ms) / measured_ms * 100.0; }

GemmValidation run_gemm_validation(const std::string& csv_path) {
  GemmValidation v;
  v.path = csv_path.empty() ? validation_data_dir() + "/gemm/te_gemm_benchmark.csv" : csv_path;
  const std::vector<CsvRecord> records = read_csv_file(v.path);
  if (records.empty()) throw std::runtime_error(v.path + ": empty (expected a header and rows)");
  check_csv_header(records.front().fields, kHeader, v.path);
  for (std::size_t i = 1; i < records.size(); ++i) {
    const CsvRecord& rec = records[i];
    const std::string where = v.path + ":" + std::to_string(rec.line);
    if (rec.fields.size() != kHeader.size())
      throw std::runtime_error(where + ": " + std::to_string(rec.fields.size()) + " fields, expected " +
                               std::to_string(kHeader.size()));
    GemmValidationRow r;
    r.line = rec.line;
    r.gpu = rec.fields[0];
    const topology::GpuSpec* gpu = topology::find_gpu(r.gpu);
    if (gpu == nullptr) throw std::runtime_error(where + ": column gpu: '" + r.gpu + "' is not in the catalog (clustersim catalog gpus)");
    r.power_limit_w = csv_number(rec.fields[1], where, "power_limit_w");
    // Empty (0) is the GPU's TDP; a limit is what `nvidia-smi -pl` accepts: above 0, at most the TDP
    // (the scenario's cluster.gpu_overrides.power_limit_w refuses the same).
    if (r.power_limit_w < 0 || r.power_limit_w > gpu->tdp.value)
      throw std::runtime_error(where + ": column power_limit_w: " + rec.fields[1] + " W (expected empty for the TDP, or a limit above 0 and at most " +
                               r.gpu + "'s TDP of " + std::to_string(static_cast<int>(gpu->tdp.value)) + " W)");
    const topology::Precision precision = precision_of(rec.fields[2], where);
    r.precision = rec.fields[2];
    r.scaling = rec.fields[3];
    r.mode = rec.fields[4];
    if (r.mode != "kernel" && r.mode != "autocast")
      throw std::runtime_error(where + ": column mode: '" + r.mode + "' (expected kernel or autocast)");
    const bool fp8 = precision == topology::Precision::Fp8;
    const bool autocast = r.mode == "autocast";
    const bool known = r.scaling == "current" || r.scaling == "mxfp8" || (autocast && r.scaling == "delayed");
    if (fp8 ? !known : !r.scaling.empty())
      throw std::runtime_error(where + ": column scaling: '" + r.scaling +
                               "' (fp8 rows: current or mxfp8, or delayed in autocast mode; others: empty)");
    if (autocast && !topology::quantized_linears(precision))
      throw std::runtime_error(where + ": column mode: autocast needs a quantized precision (a bf16 GEMM casts nothing: mode kernel)");
    r.label = rec.fields[5];
    const std::vector<Shape> shapes = parse_shapes(rec.fields[6], where);
    r.gemms = static_cast<int>(shapes.size());
    r.measured_ms = csv_number(rec.fields[7], where, "measured_ms");
    if (r.measured_ms <= 0) throw std::runtime_error(where + ": column measured_ms: expected a time above 0");
    r.predicted_ms = predicted_ms(*gpu, r.power_limit_w, precision, r.scaling, autocast, shapes);
    v.rows.push_back(std::move(r));
  }
  std::vector<double> all;
  std::vector<std::vector<double>> errors;  // per group, fractions
  for (const GemmValidationRow& r : v.rows) {
    auto g = std::find_if(v.groups.begin(), v.groups.end(), [&](const GemmValidationGroup& x) { return same_group(r, x); });
    if (g == v.groups.end()) {
      g = v.groups.insert(v.groups.end(), GemmValidationGroup{r.gpu, format_of(r), r.mode});
      errors.emplace_back();
    }
    g->rows += 1;
    g->measured_ms += r.measured_ms;
    g->predicted_ms += r.predicted_ms;
    errors[static_cast<std::size_t>(g - v.groups.begin())].push_back(r.error_pct() / 100.0);
    all.push_back(r.error_pct() / 100.0);
  }
  for (std::size_t i = 0; i < v.groups.size(); ++i) {
    const ErrorStats st = error_stats(errors[i]);
    v.groups[i].mape_pct = 100.0 * st.mape;
    v.groups[i].median_error_pct = 100.0 * st.median_signed;
  }
  v.mape_pct = 100.0 * error_stats(all).mape;
  return v;
}

std::string gemm_validation_text(const GemmValidation& v) {
  std::string out =
      "GEMM kernels: simulated vs measured (analysis/validation/data/gemm/te_gemm_benchmark.csv; Transformer Engine's\n"
      "GEMM profiling guide; mode kernel: pre-quantized inputs, the kernel alone; mode autocast: each call also\n"
      "quantizes its input and its weight; error = predicted / measured - 1)\n\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%5s  %-15s %6s  %-12s %-8s %-17s %5s %11s %11s %8s\n", "line", "gpu", "limit",
                "format", "mode", "GEMMs", "count", "measured", "predicted", "error");
  out += buf;
  for (const GemmValidationRow& r : v.rows) {
    const std::string limit = r.power_limit_w > 0 ? std::to_string(static_cast<int>(r.power_limit_w)) + "W" : "TDP";
    std::snprintf(buf, sizeof buf, "%5d  %-15s %6s  %-12s %-8s %-17s %5d %8.3f ms %8.3f ms %+7.1f%%\n", r.line,
                  r.gpu.c_str(), limit.c_str(), format_of(r).c_str(), r.mode.c_str(), r.label.c_str(), r.gemms,
                  r.measured_ms, r.predicted_ms, r.error_pct());
    out += buf;
  }
  out += "\nPer GPU, format and mode (speed-up = the same GEMMs' bf16 time / this format's; measured vs model):\n";
  std::snprintf(buf, sizeof buf, "  %-15s %-12s %-8s %4s %7s %11s  %s\n", "gpu", "format", "mode", "rows", "MAPE",
                "median err", "speed-up over bf16 (measured / model)");
  out += buf;
  for (const GemmValidationGroup& g : v.groups) {
    std::string speedup = "-";
    if (g.format != "bf16") {
      const auto [bm, bp] = bf16_of(v, g);
      if (bm > 0) {
        char s[64];
        std::snprintf(s, sizeof s, "%.2fx / %.2fx", bm / g.measured_ms, bp / g.predicted_ms);
        speedup = s;
      }
    }
    std::snprintf(buf, sizeof buf, "  %-15s %-12s %-8s %4d %6.1f%% %+10.1f%%  %s\n", g.gpu.c_str(), g.format.c_str(),
                  g.mode.c_str(), g.rows, g.mape_pct, g.median_error_pct, speedup.c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "MAPE %.1f%% over %zu rows\n", v.mape_pct, v.rows.size());
  out += buf;
  return out;
}

std::string gemm_validation_json(const GemmValidation& v) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array(), groups = nlohmann::ordered_json::array();
  for (const GemmValidationRow& r : v.rows) {
    rows.push_back({{"line", r.line}, {"gpu", r.gpu}, {"power_limit_w", r.power_limit_w}, {"format", format_of(r)},
                    {"mode", r.mode}, {"label", r.label}, {"gemms", r.gemms}, {"measured_ms", r.measured_ms},
                    {"predicted_ms", r.predicted_ms}, {"error_pct", r.error_pct()}});
  }
  for (const GemmValidationGroup& g : v.groups) {
    nlohmann::ordered_json j = {{"gpu", g.gpu},           {"format", g.format}, {"mode", g.mode},
                                {"rows", g.rows},         {"mape_pct", g.mape_pct},
                                {"median_error_pct", g.median_error_pct}};
    if (g.format != "bf16") {
      const auto [bm, bp] = bf16_of(v, g);
      j["speedup_over_bf16_measured"] = bm > 0 ? nlohmann::ordered_json(bm / g.measured_ms) : nlohmann::ordered_json();
      j["speedup_over_bf16_predicted"] = bm > 0 ? nlohmann::ordered_json(bp / g.predicted_ms) : nlohmann::ordered_json();
    }
    groups.push_back(j);
  }
  return nlohmann::ordered_json{{"rows", rows}, {"groups", groups}, {"mape_pct", v.mape_pct}}.dump(2) + "\n";
}

}  // namespace clustersim::analysis
