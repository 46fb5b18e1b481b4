#include "scenarios/loader.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "scenarios/source_text.h"
#include "topology/catalog.h"
#include "workloads/model/hf_config.h"
#include "workloads/model/model_presets.h"

namespace clustersim::scenarios {
namespace {

namespace fs = std::filesystem;
using topology::Fabric;
using topology::IntraKind;
using topology::Precision;
using workloads::MlpKind;
using workloads::NormKind;
using workloads::Optimizer;
using workloads::Recompute;
using workloads::Schedule;
using workloads::SyncAlgorithm;

// ---------------------------------------------------------------------------------------------
// Names of the enum values as written in scenario files.

template <class E>
struct Choice {
  std::string_view name;
  E value;
};

constexpr Choice<Fabric> kFabrics[] = {
    {"fat-tree", Fabric::FatTree}, {"rail-optimized", Fabric::RailOptimized}, {"single-switch", Fabric::SingleSwitch}};
constexpr Choice<topology::FabricRouting> kRoutings[] = {{"destination-mod-k", topology::FabricRouting::DestinationModK},
                                                         {"flow-hash", topology::FabricRouting::FlowHash}};
constexpr Choice<IntraKind> kIntra[] = {
    {"nvswitch", IntraKind::NvSwitch}, {"nvlink-bridge", IntraKind::NvlinkBridge}, {"pcie", IntraKind::Pcie}};
constexpr Choice<int> kPcieGens[] = {{"gen3", 3}, {"gen4", 4}, {"gen5", 5}};
constexpr Choice<Precision> kPrecisions[] = {{"fp32", Precision::Fp32}, {"tf32", Precision::Tf32},
                                             {"fp16", Precision::Fp16}, {"bf16", Precision::Bf16},
                                             {"fp8", Precision::Fp8}};
constexpr Choice<Optimizer> kOptimizers[] = {
    {"adam", Optimizer::Adam}, {"sgd", Optimizer::Sgd}, {"sgd-momentum", Optimizer::SgdMomentum}};
constexpr Choice<Recompute> kRecompute[] = {
    {"none", Recompute::None}, {"selective", Recompute::Selective}, {"full", Recompute::Full}};
constexpr Choice<Schedule> kSchedules[] = {
    {"gpipe", Schedule::GPipe}, {"1f1b", Schedule::OneFOneB}, {"interleaved", Schedule::Interleaved}};
constexpr Choice<SyncAlgorithm> kSyncAlgorithms[] = {
    {"ring", SyncAlgorithm::Ring},         {"tree", SyncAlgorithm::Tree},
    {"halving-doubling", SyncAlgorithm::HalvingDoubling}, {"hierarchical", SyncAlgorithm::Hierarchical},
    {"direct", SyncAlgorithm::Direct},     {"in-network", SyncAlgorithm::InNetwork},
    {"auto", SyncAlgorithm::Auto}};
constexpr Choice<MlpKind> kMlps[] = {{"gelu", MlpKind::Gelu}, {"swiglu", MlpKind::SwiGlu}};
constexpr Choice<NormKind> kNorms[] = {{"layernorm", NormKind::LayerNorm}, {"rmsnorm", NormKind::RmsNorm}};

template <class E, std::size_t N>
std::string_view name_of(const Choice<E> (&choices)[N], E v) {
  for (const auto& c : choices)
    if (c.value == v) return c.name;
  return "?";
}

// ---------------------------------------------------------------------------------------------
// The keys each table accepts.

constexpr std::string_view kRootKeys[] = {"name",  "cluster",         "model", "parallelism", "training",
                                          "sync", "model_constants", "cost"};
constexpr std::string_view kClusterKeys[] = {"node",          "nodes", "fabric", "oversubscription",
                                             "routing",       "gpus",  "gpu_overrides"};
constexpr std::string_view kNodeKeys[] = {"preset", "gpu",     "gpus", "intra", "pcie", "gpus_per_pcie_switch",
                                          "sockets", "nic", "nics"};
constexpr std::string_view kGpuOverrideKeys[] = {"power_limit_w", "mig", "tf32"};
constexpr std::string_view kModelKeys[] = {"preset",     "layers",  "hidden", "heads",     "kv_heads",
                                           "ffn_hidden", "seq_len", "vocab",  "hf_config", "mlp",
                                           "norm",       "tied_embeddings", "flash_attention"};
constexpr std::string_view kParallelKeys[] = {"tp",       "pp",   "dp", "virtual_stages", "schedule", "sequence_parallel",
                                              "zero", "distributed_optimizer"};
constexpr std::string_view kTrainingKeys[] = {"global_batch", "micro_batch", "precision", "optimizer",
                                              "recompute",    "iterations",  "tokens"};
constexpr std::string_view kSyncKeys[] = {"algorithm", "bucket_mb", "overlap", "overlap_grad_reduce",
                                          "overlap_param_gather", "tp_comm_overlap", "fsdp_prefetch"};
constexpr std::string_view kCostKeys[] = {"gpu_hour_usd", "electricity_usd_per_kwh"};

// ---------------------------------------------------------------------------------------------
// Small text helpers.

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc{}) return std::to_string(v);
  return std::string(buf, end);
}

// A TOML float literal (always with '.', 'e' or an exponent so it re-reads as a float).
std::string toml_float(double v) {
  std::string s = format_number(v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quote_str(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

std::string join(std::span<const std::string_view> items, std::string_view sep, bool quote = false) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += quote ? quote_str(items[i]) : std::string(items[i]);
  }
  return out;
}

template <class E, std::size_t N>
std::vector<std::string_view> names_of(const Choice<E> (&choices)[N]) {
  std::vector<std::string_view> out;
  for (const auto& c : choices) out.push_back(c.name);
  return out;
}

std::string section_label(std::string_view section) {
  return section.empty() ? std::string("at the top level") : "in [" + std::string(section) + "]";
}

std::string key_label(std::string_view section, std::string_view key) {
  std::string out;
  out.reserve(key.size() + section.size() + 24);
  out.append("'").append(key).append("' ").append(section_label(section));
  return out;
}

std::string dotted(std::string_view section, std::string_view key) {
  return section.empty() ? std::string(key) : std::string(section) + "." + std::string(key);
}

std::string type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: return "a date/time";
    default: return "nothing";
  }
}

// Divisors of n that are <= limit, as "1, 2, 4, 8" (at most 8 shown, then "...").
std::string divisor_list(int n, int limit) {
  std::string out;
  int shown = 0;
  for (int d = 1; d <= n && d <= limit; ++d) {
    if (n % d != 0) continue;
    if (shown == 8) return out + ", ...";
    out += (shown++ ? ", " : "") + std::to_string(d);
  }
  return out;
}

// A path from the scenario file's folder, kept relative when the scenario's path is relative.
std::string resolve_relative(const std::string& scenario_file, const std::string& rel) {
  const fs::path p(rel);
  if (p.is_absolute()) return rel;
  return (fs::path(scenario_file).parent_path() / p).lexically_normal().generic_string();
}

// TOML++ reports errors by exception or by result, depending on TOML_EXCEPTIONS.
struct ParseOutcome {
  std::optional<toml::table> table;
  std::string error;
  toml::source_region error_at;
};

ParseOutcome try_parse(std::string_view text, std::string_view source_path) {
  ParseOutcome out;
#if TOML_EXCEPTIONS
  try {
    out.table = toml::parse(text, source_path);
  } catch (const toml::parse_error& e) {
    out.error = std::string(e.description());
    out.error_at = e.source();
  }
#else
  toml::parse_result r = toml::parse(text, source_path);
  if (r) {
    out.table = std::move(r).table();
  } else {
    out.error = std::string(r.error().description());
    out.error_at = r.error().source();
  }
#endif
  return out;
}

bool is_bare_key(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// ---------------------------------------------------------------------------------------------
// The loader: one per scenario; collects diagnostics instead of stopping at the first.

class Loader;

// One TOML table being read: records which keys were used (the rest are unknown-key errors),
// reports type and range errors, and remembers where each key came from.
class Section {
 public:
  Section(Loader& loader, const toml::table* table, std::string name, std::span<const std::string_view> keys)
      : loader_(loader), table_(table), name_(std::move(name)), keys_(keys) {}

  bool present() const { return table_ != nullptr; }
  const toml::table* table() const { return table_; }
  const std::string& name() const { return name_; }

  const toml::node* find(std::string_view key);
  bool has(std::string_view key) const { return table_ && table_->contains(key); }

  std::optional<int> integer(std::string_view key, int lo, int hi, std::string_view example);
  std::optional<double> number(std::string_view key, double lo, bool lo_exclusive, std::string_view example);
  std::optional<bool> boolean(std::string_view key);
  std::optional<std::string> string(std::string_view key, std::string_view example);
  const toml::table* subtable(std::string_view key);

  template <class E, std::size_t N>
  std::optional<E> choice(std::string_view key, const Choice<E> (&choices)[N]);

  // Errors for every key of the table that no accessor asked for.
  void finish();

  void wrong_type(std::string_view key, const toml::node& n, std::string_view expected, std::string_view example);

 private:
  Loader& loader_;
  const toml::table* table_;
  std::string name_;
  std::span<const std::string_view> keys_;
  std::vector<std::string> used_;
};

class Loader {
 public:
  Loader(std::string file, std::string_view text, std::vector<std::string> overrides)
      : text_(text), overrides_(std::move(overrides)) {
    spec_.file = std::move(file);
    spec_.overrides = overrides_;
  }

  ScenarioSpec run();

  // Where a node (or key) of the merged document came from.
  KeyOrigin origin_of(const std::string& dotted_key, const toml::source_region& region) const {
    if (auto it = override_of_.find(dotted_key); it != override_of_.end())
      return KeyOrigin{SourceLocation{"--set " + it->second, 0, 0}, {}};
    KeyOrigin o;
    o.where.file = region.path ? *region.path : spec_.file;
    o.where.line = static_cast<int>(region.begin.line);
    o.where.column = static_cast<int>(region.begin.column);
    if (auto it = lines_.find(o.where.file); it != lines_.end() && o.where.line > 0 &&
                                              static_cast<std::size_t>(o.where.line) <= it->second.size())
      o.source_line = it->second[static_cast<std::size_t>(o.where.line - 1)];
    return o;
  }

  void error(const KeyOrigin& at, std::string message, std::string hint = {}) {
    diagnostics_.push_back(Diagnostic{at.where, std::move(message), std::move(hint), at.source_line});
  }
  void error_in_file(std::string message, std::string hint = {}) {
    error(KeyOrigin{SourceLocation{spec_.file, 0, 0}, {}}, std::move(message), std::move(hint));
  }
  // An error about a key's value, at the value (or at the file when the key was defaulted).
  void error_at_key(const std::string& dotted_key, std::string message, std::string hint = {}) {
    error(spec_.origin_of(dotted_key), std::move(message), std::move(hint));
  }

  void record(const std::string& dotted_key, const toml::node& n) {
    spec_.origins[dotted_key] = origin_of(dotted_key, n.source());
  }

  std::size_t error_count() const { return diagnostics_.size(); }

 private:
  bool parse_document();
  void apply_override(const std::string& text);
  void read_root();
  bool read_cluster(const toml::table* t);
  bool read_node_table(const toml::table& t);
  bool read_gpu_overrides(Section& cluster);
  bool read_model(const toml::table* t);
  bool read_parallelism(const toml::table* t);
  bool read_training(const toml::table* t);
  bool read_sync(const toml::table* t);
  void check_overlap(std::optional<bool> overlap, std::optional<bool> overlap_grad_reduce);
  void read_model_constants(const toml::table* t);
  void read_cost(const toml::table* t);
  void read_constants_file(const std::string& path, const KeyOrigin& include_at);
  void check_model_shape();
  void check_layout();
  void check_gpu_count();
  void check_batch();
  void check_precision();
  [[noreturn]] void throw_diagnostics();

  std::string_view text_;
  std::vector<std::string> overrides_;
  ScenarioSpec spec_;
  toml::table doc_;
  std::map<std::string, std::vector<std::string>> lines_;
  std::map<std::string, std::string> override_of_;  // dotted key -> the --set text
  std::vector<Diagnostic> diagnostics_;

  // Facts the cross-key checks need.
  const topology::GpuSpec* gpu_ = nullptr;
  bool cluster_ok_ = false, model_ok_ = false, parallel_ok_ = false, training_ok_ = false;
  bool layout_ok_ = true;
  bool dp_given_ = false, global_batch_given_ = false, precision_given_ = false, schedule_given_ = false;
};

// ---- Section ------------------------------------------------------------------------------

const toml::node* Section::find(std::string_view key) {
  if (!table_) return nullptr;
  const toml::node* n = table_->get(key);
  if (!n) return nullptr;
  used_.emplace_back(key);
  loader_.record(dotted(name_, key), *n);
  return n;
}

void Section::wrong_type(std::string_view key, const toml::node& n, std::string_view expected,
                         std::string_view example) {
  std::string hint = "for example: " + std::string(key) + " = " + std::string(example);
  if (const auto* s = n.as_string(); s && expected != "a string") {
    const std::string& v = s->get();
    const ParseOutcome r = try_parse("v = " + v, "value");
    if (r.table && r.table->get("v") && !r.table->get("v")->is_string())
      hint = "remove the quotes: " + std::string(key) + " = " + v;
  }
  loader_.error(loader_.origin_of(dotted(name_, key), n.source()),
                key_label(name_, key) + " must be " + std::string(expected) + ", not " + type_name(n.type()),
                std::move(hint));
}

std::optional<int> Section::integer(std::string_view key, int lo, int hi, std::string_view example) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  const auto* v = n->as_integer();
  if (!v) {
    wrong_type(key, *n, "an integer", example);
    return std::nullopt;
  }
  const std::int64_t x = v->get();
  if (x < lo || x > hi) {
    const std::string range = hi == INT_MAX ? "at least " + std::to_string(lo)
                                            : "between " + std::to_string(lo) + " and " + std::to_string(hi);
    loader_.error(loader_.origin_of(dotted(name_, key), n->source()),
                  key_label(name_, key) + " must be " + range + ", got " + std::to_string(x),
                  "for example: " + std::string(key) + " = " + std::string(example));
    return std::nullopt;
  }
  return static_cast<int>(x);
}

std::optional<double> Section::number(std::string_view key, double lo, bool lo_exclusive, std::string_view example) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  std::optional<double> x;
  if (const auto* i = n->as_integer()) x = static_cast<double>(i->get());
  if (const auto* f = n->as_floating_point()) x = f->get();
  if (!x) {
    wrong_type(key, *n, "a number", example);
    return std::nullopt;
  }
  if (!std::isfinite(*x)) {
    loader_.error(loader_.origin_of(dotted(name_, key), n->source()),
                  key_label(name_, key) + " must be a finite number, got " + format_number(*x),
                  "for example: " + std::string(key) + " = " + std::string(example));
    return std::nullopt;
  }
  const bool below = lo_exclusive ? !(*x > lo) : !(*x >= lo);
  if (below) {
    loader_.error(loader_.origin_of(dotted(name_, key), n->source()),
                  key_label(name_, key) + " must be " + (lo_exclusive ? "greater than " : "at least ") +
                      format_number(lo) + ", got " + format_number(*x),
                  "for example: " + std::string(key) + " = " + std::string(example));
    return std::nullopt;
  }
  return x;
}

std::optional<bool> Section::boolean(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  if (const auto* b = n->as_boolean()) return b->get();
  wrong_type(key, *n, "true or false", "true");
  return std::nullopt;
}

std::optional<std::string> Section::string(std::string_view key, std::string_view example) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  if (const auto* s = n->as_string()) return s->get();
  wrong_type(key, *n, "a string", quote_str(example));
  return std::nullopt;
}

const toml::table* Section::subtable(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return nullptr;
  if (const auto* t = n->as_table()) return t;
  loader_.error(loader_.origin_of(dotted(name_, key), n->source()),
                key_label(name_, key) + " must be a table [" + dotted(name_, key) + "], not " + type_name(n->type()),
                "write it as a section: [" + dotted(name_, key) + "]");
  return nullptr;
}

template <class E, std::size_t N>
std::optional<E> Section::choice(std::string_view key, const Choice<E> (&choices)[N]) {
  const auto names = names_of(choices);
  const auto s = string(key, names.front());
  if (!s) return std::nullopt;
  for (const auto& c : choices)
    if (c.name == *s) return c.value;
  std::string message = "unknown value " + quote_str(*s) + " for " + key_label(name_, key);
  if (auto close = did_you_mean(*s, names); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
  loader_.error_at_key(dotted(name_, key), std::move(message), "valid values: " + join(names, ", ", true));
  return std::nullopt;
}

void Section::finish() {
  if (!table_) return;
  for (auto&& [k, v] : *table_) {
    if (std::find(used_.begin(), used_.end(), k.str()) != used_.end()) continue;
    const std::string dk = dotted(name_, k.str());
    KeyOrigin at = loader_.origin_of(dk, k.source());
    if (at.where.line == 0 && at.where.file.rfind("--set", 0) != 0) at = loader_.origin_of(dk, v.source());
    std::string message;
    std::string close = did_you_mean(k.str(), keys_);
    if (name_.empty() && v.is_table()) {
      message = "unknown section [" + std::string(k.str()) + "]";
      if (!close.empty()) message += "; did you mean [" + close + "]?";
    } else {
      message = "unknown key '" + std::string(k.str()) + "' " + section_label(name_);
      if (!close.empty()) message += "; did you mean '" + close + "'?";
    }
    loader_.error(at, std::move(message),
                  (name_.empty() ? "valid top-level keys and sections: " : "valid keys in [" + name_ + "]: ") +
                      join(keys_, ", "));
  }
}

// ---- Loader: document and overrides ------------------------------------------------------------

bool Loader::parse_document() {
  lines_[spec_.file] = split_lines(text_);
  ParseOutcome result = try_parse(text_, spec_.file);
  if (!result.table) {
    error(origin_of("", result.error_at), "invalid TOML: " + result.error, "see https://toml.io for the syntax");
    return false;
  }
  doc_ = std::move(*result.table);
  return true;
}

void Loader::apply_override(const std::string& text) {
  const KeyOrigin at{SourceLocation{"--set " + text, 0, 0}, {}};
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error(at, "an override must look like section.key=value", "for example: --set parallelism.tp=4");
    return;
  }
  std::string key_path = text.substr(0, eq);
  std::string value_text = text.substr(eq + 1);
  while (!key_path.empty() && key_path.back() == ' ') key_path.pop_back();
  while (!value_text.empty() && value_text.front() == ' ') value_text.erase(0, 1);
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = key_path.find('.', start);
    parts.push_back(key_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts) {
    if (!is_bare_key(p)) {
      error(at, "invalid key '" + key_path + "' in override", "for example: --set parallelism.tp=4");
      return;
    }
  }

  // The value as TOML; anything that is not a TOML value is taken as a bare string.
  ParseOutcome parsed = try_parse("v = " + value_text, "--set " + text);
  toml::table holder;
  if (parsed.table && parsed.table->get("v")) {
    holder = std::move(*parsed.table);
  } else {
    holder.insert_or_assign("v", value_text);
  }
  toml::node* v = holder.get("v");

  toml::table* t = &doc_;
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    walked = walked.empty() ? parts[i] : walked + "." + parts[i];
    toml::node* child = t->get(parts[i]);
    if (!child) {
      t->insert_or_assign(parts[i], toml::table{});
      child = t->get(parts[i]);
    } else if (!child->is_table()) {
      // `node = "preset"` can still take field overrides: it becomes [cluster.node] preset = ...
      if (walked == "cluster.node" && child->is_string()) {
        toml::table node_table;
        node_table.insert_or_assign("preset", child->as_string()->get());
        t->insert_or_assign(parts[i], std::move(node_table));
        child = t->get(parts[i]);
      } else {
        error(at, "'" + walked + "' is not a table, so '" + key_path + "' cannot be set",
              "override '" + walked + "' itself");
        return;
      }
    }
    t = child->as_table();
  }
  t->insert_or_assign(parts.back(), std::move(*v));
  override_of_[key_path] = text;
}

// ---- Loader: sections ---------------------------------------------------------------------------

ScenarioSpec Loader::run() {
  if (!parse_document()) throw_diagnostics();
  for (const auto& o : overrides_) apply_override(o);
  read_root();
  if (!diagnostics_.empty()) throw_diagnostics();
  return std::move(spec_);
}

void Loader::read_root() {
  Section root(*this, &doc_, "", kRootKeys);
  spec_.name = fs::path(spec_.file).stem().string();
  if (auto n = root.string("name", "GPT-3 175B on 128 DGX A100")) spec_.name = *n;

  const toml::table* cluster = root.subtable("cluster");
  const toml::table* model = root.subtable("model");
  const bool cluster_typed_ok = cluster || !root.has("cluster");
  const bool model_typed_ok = model || !root.has("model");
  const toml::table* parallelism = root.subtable("parallelism");
  const toml::table* training = root.subtable("training");
  const toml::table* sync = root.subtable("sync");
  const toml::table* constants = root.subtable("model_constants");
  const toml::table* cost = root.subtable("cost");

  // A misspelt section ([modle]) is reported as unknown; do not also call [model] missing.
  std::vector<std::string> misspelt;
  for (auto&& [k, v] : doc_) {
    if (std::find(std::begin(kRootKeys), std::end(kRootKeys), k.str()) == std::end(kRootKeys))
      misspelt.push_back(did_you_mean(k.str(), kRootKeys));
  }
  const auto is_misspelt = [&](std::string_view section) {
    return std::find(misspelt.begin(), misspelt.end(), section) != misspelt.end();
  };
  if (!cluster && cluster_typed_ok && !is_misspelt("cluster"))
    error_in_file("missing [cluster] section",
                  "add [cluster] with node = \"dgx-a100-80gb\" (a node preset; `clustersim catalog nodes` lists them)");
  if (!model && model_typed_ok && !is_misspelt("model"))
    error_in_file("missing [model] section",
                  "add [model] with preset = \"gpt3-175b\" (`clustersim catalog models` lists them), "
                  "or the fields layers, hidden and heads");

  cluster_ok_ = cluster && read_cluster(cluster);
  model_ok_ = model && read_model(model);
  parallel_ok_ = read_parallelism(parallelism);
  training_ok_ = read_training(training);
  read_sync(sync);
  read_model_constants(constants);
  read_cost(cost);
  root.finish();

  if (model_ok_) check_model_shape();
  if (model_ok_ && parallel_ok_) check_layout();
  if (cluster_ok_ && parallel_ok_) check_gpu_count();
  if (cluster_ok_ && parallel_ok_ && training_ok_) check_batch();
  if (cluster_ok_ && training_ok_) check_precision();
}

bool Loader::read_cluster(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "cluster", kClusterKeys);
  auto& c = spec_.cluster;
  bool node_ok = false;
  if (const toml::node* n = s.find("node")) {
    if (const auto* str = n->as_string()) {
      const std::string& id = str->get();
      if (const auto* preset = topology::find_node_preset(id)) {
        c.node = *preset;
        spec_.node_preset = id;
        node_ok = true;
      } else {
        std::vector<std::string_view> ids;
        for (const auto& p : topology::all_node_presets()) ids.push_back(p.id);
        std::string message = "unknown node preset " + quote_str(id) + " in [cluster]";
        if (auto close = did_you_mean(id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
        error_at_key("cluster.node", std::move(message),
                     "valid node presets: " + join(ids, ", ") + "; or describe the node in a [cluster.node] table");
      }
    } else if (const auto* table = n->as_table()) {
      node_ok = read_node_table(*table);
    } else {
      s.wrong_type("node", *n, "a node preset id or a [cluster.node] table", "\"dgx-a100-80gb\"");
    }
  } else {
    error(origin_of("cluster", t->source()), "missing 'node' in [cluster]",
          "name a node preset, e.g. node = \"dgx-a100-80gb\", or describe it in a [cluster.node] table");
  }
  if (node_ok) gpu_ = topology::find_gpu(c.node.gpu);

  if (auto v = s.integer("nodes", 1, topology::kMaxNodes, "1")) c.nodes = *v;
  if (auto v = s.choice("fabric", kFabrics)) c.fabric = *v;
  if (auto v = s.number("oversubscription", 1.0, false, "1.0")) c.oversubscription = *v;
  if (auto v = s.choice("routing", kRoutings)) c.routing = *v;
  if (auto v = s.integer("gpus", 1, INT_MAX, "8")) c.gpus = *v;
  const bool overrides_ok = read_gpu_overrides(s);
  s.finish();

  if (node_ok && c.nodes > 1 && c.node.nics == 0)
    error_at_key("cluster.nodes",
                 "nodes = " + std::to_string(c.nodes) + " but node '" + c.node.id + "' has no NICs to connect them",
                 "set nics in [cluster.node], or use nodes = 1");
  if (node_ok && c.gpus > c.total_gpus()) {
    const int per_node = c.node.gpus;
    error_at_key("cluster.gpus",
                 "gpus = " + std::to_string(c.gpus) + " but the cluster has " + std::to_string(c.total_gpus()) +
                     " GPUs (" + std::to_string(c.nodes) + " nodes x " + std::to_string(per_node) + ")",
                 "use at most gpus = " + std::to_string(c.total_gpus()) + ", or nodes = " +
                     std::to_string((c.gpus + per_node - 1) / per_node));
  }
  return node_ok && overrides_ok && error_count() == before;
}

bool Loader::read_node_table(const toml::table& t) {
  const std::size_t before = error_count();
  Section s(*this, &t, "cluster.node", kNodeKeys);
  topology::NodeSpec node;
  node.id = "custom";
  node.intra = IntraKind::Pcie;
  node.nic = "ib-hdr-200";
  bool have_base = false;
  if (auto id = s.string("preset", "dgx-a100-80gb")) {
    if (const auto* preset = topology::find_node_preset(*id)) {
      node = *preset;
      spec_.node_preset = *id;
      have_base = true;
    } else {
      std::vector<std::string_view> ids;
      for (const auto& p : topology::all_node_presets()) ids.push_back(p.id);
      std::string message = "unknown node preset " + quote_str(*id) + " in [cluster.node]";
      if (auto close = did_you_mean(*id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
      error_at_key("cluster.node.preset", std::move(message), "valid node presets: " + join(ids, ", "));
      s.finish();
      return false;
    }
  }
  const topology::NodeSpec base = node;

  const topology::GpuSpec* gpu = have_base ? topology::find_gpu(node.gpu) : nullptr;
  if (auto id = s.string("gpu", "a100-sxm4-80gb")) {
    gpu = topology::find_gpu(*id);
    if (gpu) {
      node.gpu = *id;
    } else {
      std::vector<std::string_view> ids;
      for (const auto& g : topology::all_gpus()) ids.push_back(g.id);
      std::string message = "unknown GPU " + quote_str(*id) + " in [cluster.node]";
      if (auto close = did_you_mean(*id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
      error_at_key("cluster.node.gpu", std::move(message), "valid GPUs: " + join(ids, ", "));
    }
  } else if (!have_base && !s.has("gpu")) {
    error(origin_of("cluster.node", t.source()), "missing 'gpu' in [cluster.node]",
          "name a GPU from the catalog, e.g. gpu = \"a100-sxm4-80gb\", or start from preset = \"dgx-a100-80gb\"");
  }

  if (gpu) gpu_ = gpu;  // lets [cluster.gpu_overrides] be checked even if other node fields are wrong
  if (auto v = s.integer("gpus", 1, 1024, "8")) {
    node.gpus = *v;
  } else if (!have_base) {
    node.gpus = 8;
  }
  if (!have_base) {
    node.nics = node.gpus;
    node.sockets = node.gpus % 2 == 0 ? 2 : 1;
    node.gpus_per_pcie_switch = node.gpus == 1 ? 1 : 2;
    if (gpu) node.pcie_gen = gpu->pcie_gen;
  }
  if (auto v = s.choice("intra", kIntra)) node.intra = *v;
  if (auto v = s.choice("pcie", kPcieGens)) node.pcie_gen = *v;
  if (auto v = s.integer("gpus_per_pcie_switch", 1, 1024, "2")) node.gpus_per_pcie_switch = *v;
  if (auto v = s.integer("sockets", 1, 8, "2")) node.sockets = *v;
  if (auto id = s.string("nic", "ib-hdr-200")) {
    if (topology::find_nic(*id)) {
      node.nic = *id;
    } else {
      std::vector<std::string_view> ids;
      for (const auto& n : topology::all_nics()) ids.push_back(n.id);
      std::string message = "unknown NIC " + quote_str(*id) + " in [cluster.node]";
      if (auto close = did_you_mean(*id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
      error_at_key("cluster.node.nic", std::move(message), "valid NICs: " + join(ids, ", "));
    }
  }
  if (auto v = s.integer("nics", 0, 1024, "8")) node.nics = *v;
  s.finish();
  if (error_count() != before || !gpu) return false;

  // The shape must be buildable.
  const std::string gpus_text = std::to_string(node.gpus);
  if (node.gpus % node.sockets != 0)
    error_at_key("cluster.node.sockets",
                 "sockets = " + std::to_string(node.sockets) + " does not divide the node's " + gpus_text + " GPUs",
                 "GPUs are split evenly over sockets; use sockets = " + divisor_list(node.gpus, 8));
  if (node.intra == IntraKind::Pcie && node.gpus % node.gpus_per_pcie_switch != 0)
    error_at_key("cluster.node.gpus_per_pcie_switch",
                 "gpus_per_pcie_switch = " + std::to_string(node.gpus_per_pcie_switch) + " does not divide the node's " +
                     gpus_text + " GPUs",
                 "use gpus_per_pcie_switch = " + divisor_list(node.gpus, node.gpus));
  if (node.intra != IntraKind::Pcie && gpu->nvlink_links == 0)
    error_at_key("cluster.node.intra",
                 "intra = " + quote_str(name_of(kIntra, node.intra)) + " needs NVLink, which " + node.gpu + " does not have",
                 "use intra = \"pcie\"");
  if (node.intra == IntraKind::NvlinkBridge && node.gpus % 2 != 0)
    error_at_key("cluster.node.intra", "intra = \"nvlink-bridge\" joins GPUs in pairs, but the node has " + gpus_text + " GPUs",
                 "use an even number of gpus");
  if (error_count() != before) return false;

  const bool same_as_base = have_base && node.gpu == base.gpu && node.gpus == base.gpus && node.intra == base.intra &&
                            node.pcie_gen == base.pcie_gen && node.gpus_per_pcie_switch == base.gpus_per_pcie_switch &&
                            node.sockets == base.sockets && node.nic == base.nic && node.nics == base.nics;
  if (!same_as_base) {
    node.id = "custom";
    node.description = have_base ? "custom (from " + base.id + ")" : "custom";
  }
  spec_.cluster.node = node;
  return true;
}

bool Loader::read_gpu_overrides(Section& cluster) {
  const std::size_t before = error_count();
  Section s(*this, cluster.subtable("gpu_overrides"), "cluster.gpu_overrides", kGpuOverrideKeys);
  auto& c = spec_.cluster;
  if (auto v = s.number("power_limit_w", 0.0, true, "250")) {
    c.power_limit_w = *v;
    if (gpu_ && gpu_->tdp.value > 0 && *v > gpu_->tdp.value)
      error_at_key("cluster.gpu_overrides.power_limit_w",
                   "power_limit_w = " + format_number(*v) + " exceeds the TDP of " + gpu_->id + " (" +
                       format_number(gpu_->tdp.value) + " W)",
                   "a power limit can only lower the TDP; use at most " + format_number(gpu_->tdp.value));
  }
  if (auto v = s.string("mig", "3g.40gb")) {
    // "<slices>g.<memory>gb" as nvidia-smi names MIG profiles.
    int slices = 0, gb = 0;
    const bool shaped = std::sscanf(v->c_str(), "%dg.%dgb", &slices, &gb) == 2 &&
                        *v == std::to_string(slices) + "g." + std::to_string(gb) + "gb";
    const bool valid_slices = slices == 1 || slices == 2 || slices == 3 || slices == 4 || slices == 7;
    if (!shaped || !valid_slices) {
      error_at_key("cluster.gpu_overrides.mig", "invalid MIG profile " + quote_str(*v),
                   "write it as nvidia-smi does, <slices>g.<memory>gb with 1, 2, 3, 4 or 7 slices, e.g. mig = \"3g.40gb\"");
    } else if (gpu_ && !(gpu_->compute_capability == 80 || gpu_->compute_capability == 90 ||
                         gpu_->compute_capability == 100)) {
      error_at_key("cluster.gpu_overrides.mig", gpu_->id + " does not support MIG",
                   "MIG exists on A100, H100, H200 and B200; remove mig");
    } else if (gpu_ && gb > gpu_->memory.value / 1e9 + 0.5) {
      error_at_key("cluster.gpu_overrides.mig",
                   "MIG profile " + quote_str(*v) + " has more memory than " + gpu_->id + " (" +
                       format_number(gpu_->memory.value / 1e9) + " GB)",
                   "pick a profile of this GPU, e.g. \"1g." + std::to_string(static_cast<int>(gpu_->memory.value / 1e9 / 8)) +
                       "gb\"");
    } else {
      c.mig = *v;
    }
  }
  if (auto v = s.boolean("tf32")) c.tf32 = *v;
  s.finish();
  return error_count() == before;
}

bool Loader::read_model(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "model", kModelKeys);
  workloads::ModelSpec m;
  const workloads::ModelSpec* preset = nullptr;
  if (auto id = s.string("preset", "gpt3-175b")) {
    preset = workloads::find_model_preset(*id);
    if (preset) {
      m = *preset;
      spec_.model_preset = *id;
    } else {
      std::vector<std::string_view> ids;
      for (const auto& p : workloads::all_model_presets()) ids.push_back(p.id);
      std::string message = "unknown model preset " + quote_str(*id);
      if (auto close = did_you_mean(*id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
      error_at_key("model.preset", std::move(message), "valid model presets: " + join(ids, ", "));
    }
  }
  std::optional<workloads::ModelSpec> imported;
  if (auto path = s.string("hf_config", "config.json")) {
    spec_.hf_config = resolve_relative(spec_.file, *path);
    if (s.has("preset")) {
      error_at_key("model.hf_config", "[model] takes a preset or an hf_config, not both",
                   "remove preset, or remove hf_config");
    } else {
      try {
        imported = workloads::load_hf_config(spec_.hf_config);
      } catch (const workloads::HfConfigError& e) {
        error_at_key("model.hf_config", "cannot import hf_config: " + std::string(e.what()),
                     "the path is relative to the scenario file; Llama/Mistral, GPT-2 and GPT-NeoX configs are understood");
      }
    }
  }
  if (imported) m = *imported;
  const bool have_base = preset != nullptr || imported.has_value();
  if (!preset) preset = imported ? &*imported : nullptr;

  const auto layers = s.integer("layers", 1, 100000, "96");
  const auto hidden = s.integer("hidden", 1, 1 << 24, "12288");
  const auto heads = s.integer("heads", 1, 1 << 16, "96");
  const auto kv_heads = s.integer("kv_heads", 1, 1 << 16, "8");
  const auto mlp = s.choice("mlp", kMlps);
  const auto ffn = s.integer("ffn_hidden", 1, 1 << 26, "49152");
  const auto seq_len = s.integer("seq_len", 1, 1 << 24, "2048");
  const auto vocab = s.integer("vocab", 1, 1 << 24, "51200");
  const auto norm = s.choice("norm", kNorms);
  const auto tied = s.boolean("tied_embeddings");
  const auto flash = s.boolean("flash_attention");
  s.finish();
  if (error_count() != before) return false;

  if (!have_base) {
    for (std::string_view k : {"layers", "hidden", "heads"}) {
      if (!s.has(k))
        error(origin_of("model", t->source()), "missing '" + std::string(k) + "' in [model]",
              "give layers, hidden and heads, or start from a preset, e.g. preset = \"gpt3-175b\", or an hf_config");
    }
    if (error_count() != before) return false;
  }
  if (layers) m.layers = *layers;
  if (hidden) m.hidden = *hidden;
  if (heads) m.heads = *heads;
  if (mlp) m.mlp = *mlp;
  if (norm) m.norm = *norm;
  if (seq_len) m.seq_len = *seq_len;
  if (vocab) m.vocab = *vocab;
  if (tied) m.tied_embeddings = *tied;
  if (flash) m.flash_attention = *flash;
  if (kv_heads) m.kv_heads = *kv_heads;
  else if (!have_base) m.kv_heads = m.heads;
  if (ffn) {
    m.ffn_hidden = *ffn;
  } else if (!have_base) {
    m.ffn_hidden = m.mlp == MlpKind::SwiGlu ? (8 * m.hidden / 3 + 255) / 256 * 256 : 4 * m.hidden;
  }
  if (have_base) {
    const bool same = m.layers == preset->layers && m.hidden == preset->hidden && m.heads == preset->heads &&
                      m.kv_heads == preset->kv_heads && m.ffn_hidden == preset->ffn_hidden &&
                      m.seq_len == preset->seq_len && m.vocab == preset->vocab && m.mlp == preset->mlp &&
                      m.norm == preset->norm && m.tied_embeddings == preset->tied_embeddings &&
                      m.flash_attention == preset->flash_attention;
    m.id = same ? preset->id : imported ? preset->id + " (modified)" : "custom";
  } else {
    m.id = "custom";
  }
  spec_.model = m;
  return true;
}

bool Loader::read_parallelism(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "parallelism", kParallelKeys);
  auto& p = spec_.parallel;
  if (auto v = s.integer("tp", 1, 1 << 20, "8")) p.tp = *v;
  if (auto v = s.integer("pp", 1, 1 << 20, "8")) p.pp = *v;
  if (auto v = s.integer("dp", 1, 1 << 24, "16")) {
    p.dp = *v;
    dp_given_ = true;
  }
  if (auto v = s.integer("virtual_stages", 1, 1 << 16, "2")) p.virtual_stages = *v;
  const auto schedule = s.choice("schedule", kSchedules);
  if (auto v = s.boolean("sequence_parallel")) p.sequence_parallel = *v;
  if (auto v = s.integer("zero", 0, 3, "1")) p.zero = *v;
  if (auto v = s.boolean("distributed_optimizer")) p.distributed_optimizer = *v;
  s.finish();
  if (error_count() != before) return false;

  schedule_given_ = schedule.has_value();
  p.schedule = schedule ? *schedule : p.virtual_stages > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  if (p.schedule == Schedule::Interleaved && p.virtual_stages == 1)
    error_at_key("parallelism.schedule", "schedule = \"interleaved\" needs virtual_stages > 1",
                 "set virtual_stages = 2 (model chunks per pipeline stage), or use schedule = \"1f1b\"");
  if (p.schedule != Schedule::Interleaved && p.virtual_stages > 1)
    error_at_key("parallelism.virtual_stages",
                 "virtual_stages = " + std::to_string(p.virtual_stages) + " needs the interleaved schedule, but schedule = " +
                     quote_str(name_of(kSchedules, p.schedule)),
                 "remove schedule (virtual_stages > 1 selects \"interleaved\"), or use virtual_stages = 1");
  if (p.virtual_stages > 1 && p.pp == 1)
    error_at_key("parallelism.virtual_stages", "virtual_stages = " + std::to_string(p.virtual_stages) + " needs pipeline parallelism, but pp = 1",
                 "use pp >= 2, or virtual_stages = 1");
  return error_count() == before;
}

bool Loader::read_training(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "training", kTrainingKeys);
  auto& tr = spec_.training;
  if (auto v = s.integer("global_batch", 1, INT_MAX, "1536")) {
    tr.global_batch = *v;
    global_batch_given_ = true;
  }
  if (auto v = s.integer("micro_batch", 1, INT_MAX, "1")) tr.micro_batch = *v;
  if (auto v = s.choice("precision", kPrecisions)) {
    tr.precision = *v;
    precision_given_ = true;
  }
  if (auto v = s.choice("optimizer", kOptimizers)) tr.optimizer = *v;
  if (auto v = s.choice("recompute", kRecompute)) tr.recompute = *v;
  if (auto v = s.integer("iterations", 1, INT_MAX, "1")) tr.iterations = *v;
  if (auto v = s.number("tokens", 0.0, false, "300e9")) tr.tokens = *v;
  s.finish();
  return error_count() == before;
}

bool Loader::read_sync(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "sync", kSyncKeys);
  if (auto v = s.choice("algorithm", kSyncAlgorithms)) spec_.sync.algorithm = *v;
  if (auto v = s.number("bucket_mb", 0.0, true, "25")) spec_.sync.bucket_mb = *v;
  const auto overlap = s.boolean("overlap");
  const auto overlap_grad_reduce = s.boolean("overlap_grad_reduce");
  if (overlap) spec_.sync.overlap = *overlap;
  if (overlap_grad_reduce) spec_.sync.overlap = *overlap_grad_reduce;
  if (auto v = s.boolean("overlap_param_gather")) spec_.sync.overlap_param_gather = *v;
  if (auto v = s.boolean("tp_comm_overlap")) spec_.sync.tp_comm_overlap = *v;
  if (auto v = s.boolean("fsdp_prefetch")) spec_.sync.fsdp_prefetch = *v;
  s.finish();
  check_overlap(overlap, overlap_grad_reduce);
  return error_count() == before;
}

// The overlap switches against each other and the layout (workloads/training/overlap.h).
void Loader::check_overlap(std::optional<bool> overlap, std::optional<bool> overlap_grad_reduce) {
  if (overlap && overlap_grad_reduce && *overlap != *overlap_grad_reduce) {
    const bool overlap_set = override_of_.count("sync.overlap") > 0;
    if (overlap_set != (override_of_.count("sync.overlap_grad_reduce") > 0)) {
      spec_.sync.overlap = overlap_set ? *overlap : *overlap_grad_reduce;  // --set wins over the file
    } else {
      error_at_key("sync.overlap_grad_reduce",
                   std::string("overlap_grad_reduce = ") + (*overlap_grad_reduce ? "true" : "false") +
                       " contradicts overlap = " + (*overlap ? "true" : "false") +
                       " in [sync]; overlap is the older name of the same switch",
                   "keep one of the two keys");
    }
  }
  // With tp = 1 there is nothing to overlap (Megatron-Bridge turns it off); no error.
  if (parallel_ok_ && spec_.sync.tp_comm_overlap && spec_.parallel.tp > 1 && !spec_.parallel.sequence_parallel)
    error_at_key("sync.tp_comm_overlap",
                 "tp_comm_overlap = true needs sequence parallelism, but [parallelism] sequence_parallel = false",
                 "Transformer Engine overlaps the sequence-parallel all-gathers and reduce-scatters with their GEMMs: "
                 "set [parallelism] sequence_parallel = true, or tp_comm_overlap = false");
}

void Loader::read_constants_file(const std::string& path, const KeyOrigin& include_at) {
  const auto text = read_file(path);
  if (!text) {
    error(include_at, "cannot read model constants file '" + path + "'",
          "the include path is relative to the scenario file");
    return;
  }
  lines_[path] = split_lines(*text);
  ParseOutcome result = try_parse(*text, path);
  if (!result.table) {
    error(origin_of("", result.error_at), "invalid TOML: " + result.error);
    return;
  }
  for (auto&& [k, v] : *result.table) {
    const std::string dk = "model_constants." + std::string(k.str());
    if (const auto* i = v.as_integer()) {
      spec_.model_constants[std::string(k.str())] = static_cast<double>(i->get());
    } else if (const auto* f = v.as_floating_point(); f && std::isfinite(f->get())) {
      spec_.model_constants[std::string(k.str())] = f->get();
    } else {
      error(origin_of(dk, v.source()), "model constant '" + std::string(k.str()) + "' must be a number, not " + type_name(v.type()),
            "a constants file holds only name = number lines");
      continue;
    }
    spec_.origins[dk] = origin_of(dk, v.source());
  }
}

void Loader::read_model_constants(const toml::table* t) {
  if (!t) return;
  Section s(*this, t, "model_constants", {});
  if (auto path = s.string("include", "overrides.toml")) {
    spec_.constants_include = resolve_relative(spec_.file, *path);
    read_constants_file(spec_.constants_include, spec_.origin_of("model_constants.include"));
  }
  for (auto&& [k, v] : *t) {
    if (k.str() == "include") continue;
    const std::string name(k.str());
    const toml::node* n = s.find(name);
    if (const auto* i = n->as_integer()) {
      spec_.model_constants[name] = static_cast<double>(i->get());
    } else if (const auto* f = n->as_floating_point(); f && std::isfinite(f->get())) {
      spec_.model_constants[name] = f->get();
    } else {
      s.wrong_type(name, *n, "a number", "0.85");
    }
  }
}

void Loader::read_cost(const toml::table* t) {
  Section s(*this, t, "cost", kCostKeys);
  if (auto v = s.number("gpu_hour_usd", 0.0, false, "2.0")) {
    spec_.cost.gpu_hour_usd = *v;
    spec_.cost.has_gpu_hour = true;
  }
  if (auto v = s.number("electricity_usd_per_kwh", 0.0, false, "0.12")) spec_.cost.electricity_usd_per_kwh = *v;
  s.finish();
}

// ---- Loader: cross-key checks -----------------------------------------------------------------

void Loader::check_model_shape() {
  const std::size_t before = error_count();
  const auto& m = spec_.model;
  if (m.hidden % m.heads != 0)
    error_at_key(spec_.origins.count("model.heads") ? "model.heads" : "model.hidden",
                 "hidden = " + std::to_string(m.hidden) + " is not divisible by heads = " + std::to_string(m.heads),
                 "the head size is hidden / heads; use heads = " + divisor_list(m.hidden, std::min(m.hidden, 256)));
  if (m.heads % m.kv_heads != 0)
    error_at_key(spec_.origins.count("model.kv_heads") ? "model.kv_heads" : "model.heads",
                 "heads = " + std::to_string(m.heads) + " is not a multiple of kv_heads = " + std::to_string(m.kv_heads),
                 "grouped-query attention shares each KV head among heads / kv_heads query heads; use kv_heads = " +
                     divisor_list(m.heads, m.heads));
  if (error_count() != before) model_ok_ = false;
}

// Virtual stages that split a pipeline stage's layers evenly (more than one of them).
std::string interleaved_hint(int layers_per_stage) {
  std::string list;
  int shown = 0;
  for (int v = 2; v <= layers_per_stage && shown < 6; ++v)
    if (layers_per_stage % v == 0) list += (shown++ ? ", " : "") + std::to_string(v);
  if (list.empty()) return "each stage holds a single layer, so it cannot be interleaved; use schedule = \"1f1b\"";
  return "each stage holds " + std::to_string(layers_per_stage) + " layers; use virtual_stages = " + list;
}

void Loader::check_layout() {
  const std::size_t before = error_count();
  const auto& m = spec_.model;
  const auto& p = spec_.parallel;
  const std::string model_name = spec_.model_preset.empty() ? std::string("the model") : spec_.model_preset;
  const int tp_limit = cluster_ok_ ? spec_.cluster.used_gpus() : 1 << 20;
  const int heads_gcd = std::gcd(m.heads, m.kv_heads);
  if (m.heads % p.tp != 0) {
    error_at_key("parallelism.tp",
                 "tp = " + std::to_string(p.tp) + " does not divide heads = " + std::to_string(m.heads) + " of " + model_name,
                 "tensor parallelism splits attention heads evenly; use tp = " + divisor_list(heads_gcd, tp_limit));
  } else if (m.kv_heads % p.tp != 0) {
    error_at_key("parallelism.tp",
                 "tp = " + std::to_string(p.tp) + " does not divide kv_heads = " + std::to_string(m.kv_heads) + " of " + model_name,
                 "tensor parallelism splits the KV heads evenly; use tp = " + divisor_list(heads_gcd, tp_limit));
  }
  if (m.layers % p.pp != 0) {
    error_at_key("parallelism.pp",
                 "pp = " + std::to_string(p.pp) + " does not divide layers = " + std::to_string(m.layers) + " of " + model_name +
                     " (uneven pipeline stages are not supported)",
                 "use pp = " + divisor_list(m.layers, tp_limit));
  } else if (p.schedule == Schedule::Interleaved && m.layers % (p.pp * p.virtual_stages) != 0) {
    error_at_key("parallelism.virtual_stages",
                 "the interleaved schedule needs layers = " + std::to_string(m.layers) + " divisible by pp * virtual_stages = " +
                     std::to_string(p.pp) + " * " + std::to_string(p.virtual_stages) + " = " +
                     std::to_string(p.pp * p.virtual_stages),
                 interleaved_hint(m.layers / p.pp));
  }
  if (error_count() != before) layout_ok_ = false;
}

void Loader::check_gpu_count() {
  auto& p = spec_.parallel;
  const auto& c = spec_.cluster;
  const int used = c.used_gpus();
  const int total = c.total_gpus();
  const long long tpp = static_cast<long long>(p.tp) * p.pp;
  const std::string tpp_text = "tp * pp = " + std::to_string(p.tp) + " * " + std::to_string(p.pp);
  const std::string cluster_text = std::to_string(total) + " GPUs (" + std::to_string(c.nodes) + " nodes x " +
                                   std::to_string(c.node.gpus) + ")";
  if (dp_given_) {
    const long long need = tpp * p.dp;
    if (need == used) return;
    const std::string product = "tp * pp * dp = " + std::to_string(p.tp) + " * " + std::to_string(p.pp) + " * " +
                                std::to_string(p.dp) + " = " + std::to_string(need);
    std::string fix = used % tpp == 0 ? "use dp = " + std::to_string(used / tpp) + ", or " : std::string("use ");
    if (c.gpus > 0) {
      error_at_key("parallelism.dp", product + " does not match gpus = " + std::to_string(c.gpus) + " in [cluster]",
                   fix + "gpus = " + std::to_string(need) + " in [cluster]" + (need > total ? " (with more nodes)" : ""));
    } else if (need > total) {
      error_at_key("parallelism.dp", product + " GPUs, but the cluster has " + cluster_text,
                   fix + "nodes = " + std::to_string((need + c.node.gpus - 1) / c.node.gpus));
    } else {
      error_at_key("parallelism.dp", product + " GPUs, but the cluster has " + cluster_text,
                   fix + "gpus = " + std::to_string(need) + " in [cluster] to use only part of the cluster");
    }
    parallel_ok_ = false;
    return;
  }
  if (used % tpp != 0) {
    const char* key = spec_.origins.count("parallelism.pp") ? "parallelism.pp" : "parallelism.tp";
    error_at_key(key,
                 "the " + std::to_string(used) + " GPUs used are not a multiple of " + tpp_text + " = " + std::to_string(tpp),
                 "use tp and pp whose product divides " + std::to_string(used) + ", or set gpus in [cluster]");
    parallel_ok_ = false;
    return;
  }
  p.dp = static_cast<int>(used / tpp);
  spec_.dp_derived = true;
}

void Loader::check_batch() {
  auto& tr = spec_.training;
  const auto& p = spec_.parallel;
  const long long per_step = static_cast<long long>(tr.micro_batch) * p.dp;
  if (!global_batch_given_) {
    if (per_step * p.pp > INT_MAX) {
      error_at_key("training.micro_batch", "the default global batch micro_batch * dp * pp is too large",
                   "set global_batch explicitly");
      return;
    }
    tr.global_batch = static_cast<int>(per_step * p.pp);  // enough micro-batches to fill the pipeline
  } else if (tr.global_batch % per_step != 0) {
    const long long lower = tr.global_batch / per_step * per_step;
    const long long upper = lower + per_step;
    error_at_key("training.global_batch",
                 "global_batch = " + std::to_string(tr.global_batch) + " is not divisible by micro_batch * dp = " +
                     std::to_string(tr.micro_batch) + " * " + std::to_string(p.dp) + " = " + std::to_string(per_step),
                 "every data-parallel replica runs the same number of micro-batches; use global_batch = " +
                     (lower > 0 ? std::to_string(lower) + " or " : std::string()) + std::to_string(upper));
    return;
  }
  const int micro_batches = tr.micro_batches_per_replica(p.dp);
  if (layout_ok_ && p.schedule == Schedule::Interleaved && micro_batches % p.pp != 0)
    error_at_key(global_batch_given_ ? "training.global_batch" : "parallelism.virtual_stages",
                 "the interleaved schedule needs the micro-batches per replica (global_batch / (micro_batch * dp) = " +
                     std::to_string(micro_batches) + ") to be a multiple of pp = " + std::to_string(p.pp),
                 "use global_batch = " + std::to_string(per_step * p.pp * ((micro_batches + p.pp - 1) / p.pp)) +
                     ", or the 1f1b schedule");
}

void Loader::check_precision() {
  if (!gpu_) return;
  auto& tr = spec_.training;
  if (!precision_given_) {
    tr.precision = gpu_->bf16.value > 0 ? Precision::Bf16 : Precision::Fp16;
    return;
  }
  if (tr.precision == Precision::Fp8 && !(gpu_->fp8.value > 0))
    error_at_key("training.precision", "precision = \"fp8\" needs FP8 tensor cores, which " + gpu_->id + " does not have",
                 "use precision = \"bf16\", or a GPU with FP8 (Hopper or newer, Ada)");
  if (tr.precision == Precision::Bf16 && !(gpu_->bf16.value > 0))
    error_at_key("training.precision", "precision = \"bf16\" is not supported by " + gpu_->id + " (no BF16 math)",
                 "use precision = \"fp16\" (mixed precision with loss scaling)");
}

[[noreturn]] void Loader::throw_diagnostics() {
  // Source order: the scenario file (file-level problems first), then included files, then --set.
  auto rank = [&](const Diagnostic& d) {
    if (d.where.file == spec_.file) return 0;
    if (d.where.file.rfind("--set ", 0) == 0) return 2;
    return 1;
  };
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(rank(a), a.where.line, a.where.column) < std::tuple(rank(b), b.where.line, b.where.column);
  });
  throw ScenarioError(std::move(diagnostics_));
}

// ---------------------------------------------------------------------------------------------
// show_config

std::string toml_key(std::string_view k) { return is_bare_key(k) ? std::string(k) : quote_str(k); }

}  // namespace

ScenarioSpec parse_scenario(std::string_view toml_text, const std::string& file_name,
                            const std::vector<std::string>& overrides) {
  Loader loader(file_name, toml_text, overrides);
  return loader.run();
}

ScenarioSpec load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  std::string why;
  const auto text = read_file(path, why);
  if (!text)
    throw ScenarioError(SourceLocation{path, 0, 0}, "cannot read scenario file: " + why,
                        "check the path; scenarios/library/ holds ready-made scenarios");
  return parse_scenario(*text, path, overrides);
}

void check_model_constant_names(const ScenarioSpec& spec, std::span<const std::string_view> known) {
  std::vector<Diagnostic> diagnostics;
  for (const auto& [name, value] : spec.model_constants) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const KeyOrigin at = spec.origin_of("model_constants." + name);
    std::string message = "unknown model constant '" + name + "'";
    if (auto close = did_you_mean(name, known); !close.empty()) message += "; did you mean '" + close + "'?";
    diagnostics.push_back(Diagnostic{at.where, std::move(message), "known constants: " + join(known, ", "), at.source_line});
  }
  if (!diagnostics.empty()) throw ScenarioError(std::move(diagnostics));
}

std::string show_config(const ScenarioSpec& spec) {
  std::ostringstream out;
  const auto& c = spec.cluster;
  const auto& n = c.node;
  const auto& m = spec.model;
  const auto& p = spec.parallel;
  const auto& tr = spec.training;
  const auto b = [](bool v) { return v ? "true" : "false"; };
  const topology::GpuSpec* gpu = topology::find_gpu(n.gpu);

  out << "# Resolved scenario " << spec.file << ": every key, defaults included.\n";
  for (const auto& o : spec.overrides) out << "# --set " << o << "\n";
  out << "name = " << quote_str(spec.name) << "\n\n";

  out << "[cluster]\n"
      << "nodes = " << c.nodes << "\n"
      << "fabric = " << quote_str(name_of(kFabrics, c.resolved_fabric())) << "\n"
      << "oversubscription = " << toml_float(c.oversubscription) << "\n"
      << "routing = " << quote_str(name_of(kRoutings, c.resolved_routing())) << "\n"
      << "gpus = " << c.used_gpus() << "\n\n";

  out << "[cluster.node]\n";
  if (!spec.node_preset.empty()) out << "preset = " << quote_str(spec.node_preset) << "\n";
  out << "gpu = " << quote_str(n.gpu) << "\n"
      << "gpus = " << n.gpus << "\n"
      << "intra = " << quote_str(name_of(kIntra, n.intra)) << "\n"
      << "pcie = " << quote_str("gen" + std::to_string(n.pcie_gen)) << "\n"
      << "gpus_per_pcie_switch = " << n.gpus_per_pcie_switch << "\n"
      << "sockets = " << n.sockets << "\n"
      << "nic = " << quote_str(n.nic) << "\n"
      << "nics = " << n.nics << "\n\n";

  out << "[cluster.gpu_overrides]\n";
  if (c.power_limit_w > 0)
    out << "power_limit_w = " << toml_float(c.power_limit_w) << "\n";
  else
    out << "# power_limit_w = " << (gpu ? format_number(gpu->tdp.value) : std::string("?")) << "  # default: the GPU's TDP\n";
  if (!c.mig.empty())
    out << "mig = " << quote_str(c.mig) << "\n";
  else
    out << "# mig = \"3g.40gb\"  # default: the whole GPU\n";
  out << "tf32 = " << b(c.tf32) << "\n\n";

  out << "[model]\n";
  if (!spec.model_preset.empty()) out << "preset = " << quote_str(spec.model_preset) << "\n";
  if (!spec.hf_config.empty()) out << "# imported from hf_config = " << quote_str(spec.hf_config) << "\n";
  out << "layers = " << m.layers << "\n"
      << "hidden = " << m.hidden << "\n"
      << "heads = " << m.heads << "\n"
      << "kv_heads = " << m.kv_heads << "\n"
      << "ffn_hidden = " << m.ffn_hidden << "\n"
      << "seq_len = " << m.seq_len << "\n"
      << "vocab = " << m.vocab << "\n"
      << "mlp = " << quote_str(name_of(kMlps, m.mlp)) << "\n"
      << "norm = " << quote_str(name_of(kNorms, m.norm)) << "\n"
      << "tied_embeddings = " << b(m.tied_embeddings) << "\n"
      << "flash_attention = " << b(m.flash_attention) << "\n\n";

  out << "[parallelism]\n"
      << "tp = " << p.tp << "\n"
      << "pp = " << p.pp << "\n"
      << "dp = " << p.dp << (spec.dp_derived ? "  # derived: gpus / (tp * pp)" : "") << "\n"
      << "virtual_stages = " << p.virtual_stages << "\n"
      << "schedule = " << quote_str(name_of(kSchedules, p.schedule)) << "\n"
      << "sequence_parallel = " << b(p.sequence_parallel) << "\n"
      << "zero = " << p.zero << "\n"
      << "distributed_optimizer = " << b(p.distributed_optimizer) << "\n\n";

  out << "[training]\n"
      << "global_batch = " << tr.global_batch << "\n"
      << "micro_batch = " << tr.micro_batch << "\n"
      << "precision = " << quote_str(name_of(kPrecisions, tr.precision)) << "\n"
      << "optimizer = " << quote_str(name_of(kOptimizers, tr.optimizer)) << "\n"
      << "recompute = " << quote_str(name_of(kRecompute, tr.recompute)) << "\n"
      << "iterations = " << tr.iterations << "\n";
  if (tr.tokens > 0)
    out << "tokens = " << toml_float(tr.tokens) << "\n\n";
  else
    out << "# tokens = 300e9  # default: not given (no time-to-train)\n\n";

  out << "[sync]\n"
      << "algorithm = " << quote_str(name_of(kSyncAlgorithms, spec.sync.algorithm)) << "\n"
      << "bucket_mb = " << toml_float(spec.sync.bucket_mb) << "\n"
      << "overlap_grad_reduce = " << b(spec.sync.overlap) << "  # also accepted as overlap\n"
      << "overlap_param_gather = " << b(spec.sync.param_gather_overlapped(p)) << "\n"
      << "tp_comm_overlap = " << b(spec.sync.tp_comm_overlap) << "\n"
      << "fsdp_prefetch = " << b(spec.sync.fsdp_prefetch) << "\n\n";

  out << "[model_constants]\n";
  if (!spec.constants_include.empty()) out << "# included from " << quote_str(spec.constants_include) << "\n";
  for (const auto& [name, value] : spec.model_constants) out << toml_key(name) << " = " << toml_float(value) << "\n";
  out << "\n";

  out << "[cost]\n";
  if (spec.cost.has_gpu_hour)
    out << "gpu_hour_usd = " << toml_float(spec.cost.gpu_hour_usd) << "\n";
  else
    out << "# gpu_hour_usd = 2.0  # default: capex derived from catalog prices\n";
  out << "electricity_usd_per_kwh = " << toml_float(spec.cost.electricity_usd_per_kwh) << "\n";
  return out.str();
}

}  // namespace clustersim::scenarios
