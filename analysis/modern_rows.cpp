// Modern training rows as data (see modern_rows.h): reading the CSV files, the GPU generation and
// publication of a row, its measured step time, and the virtual-stage / micro-batch cells one
// release leaves out that the same recipe's other releases state. How a row becomes a scenario is
// in its neighbours: modern_row_layout (nodes, parallel sizes, pipeline split), modern_row_defaults
// (the recipe settings the tables leave out), modern_row_skips (what cannot be expressed yet),
// modern_row_scenario (the scenario TOML), modern_row_archs and modern_row_recipes.
#include "analysis/modern_rows.h"

#include <stdexcept>
#include <vector>

#include "analysis/csv.h"
#include "analysis/modern_row_archs.h"

namespace clustersim::analysis {
namespace {

using modern_detail::has;

constexpr std::string_view kColumns[] = {"source", "model", "params_B", "layers", "hidden", "heads", "kv_heads",
                                    "ffn_hidden", "seq_len", "vocab", "global_batch", "micro_batch", "tp", "pp",
                                    "cp", "dp", "virtual_stages", "zero_or_fsdp", "recompute", "seq_parallel",
                                    "precision", "gpu", "num_gpus", "interconnect", "metric", "value", "unit",
                                    "notes"};
constexpr std::size_t kColumnCount = std::size(kColumns);

void check_header(const std::vector<std::string>& header, const std::string& path) {
  check_csv_header(header, kColumns, path);
}

ModernRow row_of(const CsvRecord& rec, const std::string& path, const std::string& file) {
  const std::string where = path + ":" + std::to_string(rec.line);
  if (rec.fields.size() != kColumnCount)
    throw std::runtime_error(where + ": expected " + std::to_string(kColumnCount) + " fields, found " +
                             std::to_string(rec.fields.size()));
  const auto& f = rec.fields;
  ModernRow r;
  r.file = file;
  r.line = rec.line;
  r.source = f[0];
  r.model = f[1];
  r.params_b = csv_number(f[2], where, "params_B");
  int* ints[] = {&r.layers, &r.hidden, &r.heads, &r.kv_heads, &r.ffn_hidden, &r.seq_len, &r.vocab,
                 &r.global_batch, &r.micro_batch, &r.tp, &r.pp, &r.cp, &r.dp, &r.virtual_stages};
  for (std::size_t i = 0; i < std::size(ints); ++i) *ints[i] = csv_integer(f[3 + i], where, kColumns[3 + i]);
  r.zero_or_fsdp = f[17];
  r.recompute = f[18];
  r.seq_parallel = f[19];
  r.precision = f[20];
  r.gpu = f[21];
  r.num_gpus = csv_integer(f[22], where, "num_gpus");
  r.interconnect = f[23];
  r.metric = f[24];
  r.value = csv_number(f[25], where, "value");
  r.unit = f[26];
  r.notes = f[27];
  return r;
}

}  // namespace

std::string_view to_string(Generation g) {
  switch (g) {
    case Generation::Volta: return "Volta";
    case Generation::Ampere: return "Ampere";
    case Generation::Hopper: return "Hopper";
    case Generation::Blackwell: return "Blackwell";
    case Generation::Other: return "other";
  }
  return "other";
}

Generation generation_of(std::string_view gpu) {
  if (has(gpu, "V100") || has(gpu, "v100")) return Generation::Volta;
  if (has(gpu, "A100") || has(gpu, "a100")) return Generation::Ampere;
  if (has(gpu, "H100") || has(gpu, "H200") || has(gpu, "h100") || has(gpu, "h200")) return Generation::Hopper;
  if (has(gpu, "B200") || has(gpu, "B300") || has(gpu, "b200")) return Generation::Blackwell;
  return Generation::Other;
}

std::vector<ModernRow> load_modern_rows(const std::string& path) {
  const std::vector<CsvRecord> records = read_csv_file(path);
  if (records.empty()) throw std::runtime_error(path + ": empty file");
  check_header(records.front().fields, path);
  const std::string file = path.substr(path.find_last_of('/') + 1);
  std::vector<ModernRow> rows;
  for (std::size_t i = 1; i < records.size(); ++i) rows.push_back(row_of(records[i], path, file));
  return rows;
}

std::vector<ModernRow> load_modern_set(const std::string& dir) {
  std::vector<ModernRow> all;
  for (const char* file : kModernTrainingFiles) {
    std::vector<ModernRow> rows = load_modern_rows(dir + "/" + file);
    all.insert(all.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  }
  return all;
}

std::string modern_source_group(const ModernRow& row) {
  if (has(row.source, "dgxc-benchmarking")) return "dgxc-benchmarking";
  if (has(row.source, "Megatron-Bridge")) return "Megatron-Bridge";
  if (has(row.source, "NVIDIA/NeMo") || has(row.file, "nemo_docs")) return "NeMo docs";
  if (has(row.source, "Megatron-LM")) return "Megatron-LM";
  return "other";
}

bool is_step_metric(const ModernRow& row) {
  return row.metric == "step_time" || row.metric == "throughput_total" || row.metric == "throughput_per_gpu";
}

std::optional<double> measured_step_time_s(const ModernRow& row, std::string* why_not) {
  const auto refuse = [&](std::string why) -> std::optional<double> {
    if (why_not) *why_not = std::move(why);
    return std::nullopt;
  };
  if (!is_step_metric(row)) return refuse("metric " + row.metric + " is not scored (FLOP conventions differ, README §1)");
  if (row.value <= 0) return refuse("no measured value");
  if (row.metric == "step_time") return row.value;
  if (row.global_batch <= 0 || row.seq_len <= 0) return refuse("batch or sequence length not stated");
  const double tokens = static_cast<double>(row.global_batch) * row.seq_len;
  if (row.metric == "throughput_total") return tokens / row.value;
  if (row.num_gpus <= 0) return refuse("GPU count not stated");
  return tokens / (row.value * row.num_gpus);
}

namespace {

// The one value `field` takes in the rows of `rows` that `same` accepts and that state a virtual
// stage count; 0 when none does or when they disagree.
template <class Same, class Field>
int agreed_value(const std::vector<ModernRow>& rows, Same same, Field field) {
  int stated = 0;
  bool agree = true;
  for (const ModernRow& other : rows) {
    if (other.virtual_stages <= 0 || !same(other)) continue;
    agree = agree && (stated == 0 || stated == field(other));
    stated = field(other);
  }
  return agree ? stated : 0;
}

}  // namespace

int fill_unstated_virtual_stages(std::vector<ModernRow>& rows) {
  const auto repository = [](const ModernRow& r) { return r.source.substr(0, r.source.find('@')); };
  const auto same_recipe = [&](const ModernRow& a, const ModernRow& b) {
    return repository(a) == repository(b) && a.model == b.model && a.gpu == b.gpu && a.tp == b.tp && a.pp == b.pp &&
           a.layers == b.layers;
  };
  struct Fill { std::size_t row; int vp, micro_batch; };
  std::vector<Fill> fills;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ModernRow& r = rows[i];
    if (r.pp <= 1 || r.virtual_stages > 0) continue;
    const int vp = agreed_value(rows, [&](const ModernRow& o) { return same_recipe(r, o); },
                                [](const ModernRow& o) { return o.virtual_stages; });
    if (vp <= 0) continue;
    // The cell that drops VP may also carry another layout's micro-batch: take the one the same
    // recipe states at the same precision and global batch in the other releases when they agree
    // on it. A release with another global batch ran another configuration, so its micro-batch is
    // no evidence: Megatron-Bridge's GPT-OSS-120B H100 cells state MBS 1 at GBS 1280 (26.02-26.04.01)
    // where 25.11 states MBS 4 at GBS 512, and taking 4 made the layout need 93 GiB of 80.
    const auto same_precision = [&](const ModernRow& o) {
      return same_recipe(r, o) && o.precision == r.precision && o.cp == r.cp && o.global_batch == r.global_batch;
    };
    const int mbs = agreed_value(rows, same_precision, [](const ModernRow& o) { return o.micro_batch; });
    fills.push_back({i, vp, mbs > 0 && mbs != r.micro_batch ? mbs : 0});
  }
  for (const Fill& f : fills) {
    ModernRow& r = rows[f.row];
    r.virtual_stages = f.vp;
    r.notes += "; virtual_stages " + std::to_string(f.vp) + " assumed from the same recipe's other releases";
    if (f.micro_batch > 0) {
      r.notes += "; micro_batch " + std::to_string(f.micro_batch) + " (table: " + std::to_string(r.micro_batch) +
                 ") from the same recipe's other releases at this precision";
      r.micro_batch = f.micro_batch;
    }
  }
  return static_cast<int>(fills.size());
}

}  // namespace clustersim::analysis
