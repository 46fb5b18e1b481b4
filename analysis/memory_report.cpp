#include "analysis/memory_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "scenarios/loader.h"
#include "sim/enum_names.h"
#include "scenarios/stage_split.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"

namespace clustersim::analysis {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;

std::int64_t to_bytes(sim::Bytes b) { return static_cast<std::int64_t>(std::llround(b.value)); }

template <typename... Args>
std::string fmt(const char* format, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// ---- the fit of a scenario ----------------------------------------------------------------------

MemoryReport estimate(const scenarios::ScenarioSpec& spec, bool expandable_segments) {
  MemoryReport r;
  static_cast<workloads::MemoryFit&>(r) = workloads::fit_memory(memory_request(spec), expandable_segments);
  r.scenario = spec.name;
  r.file = spec.file;
  const topology::GpuSpec* gpu = topology::find_gpu(spec.cluster.node.gpu);
  r.gpu_id = spec.cluster.node.gpu;
  r.gpu_name = gpu != nullptr ? gpu->name : spec.cluster.node.gpu;
  r.mig = spec.cluster.mig;
  r.gpus = spec.cluster.used_gpus();
  return r;
}

// ---- advice: the scenario re-loaded with each change --------------------------------------------

workloads::AdviceSubject subject_of(const scenarios::ScenarioSpec& spec) {
  return {spec.parallel, spec.training, spec.dp_derived, spec.cluster.node.gpu, spec.cluster.mig};
}

class ScenarioEvaluator final : public workloads::AdviceEvaluator {
 public:
  ScenarioEvaluator(const scenarios::ScenarioSpec& spec, const MemoryReportOptions& options)
      : spec_(spec), options_(options) {}

  std::optional<workloads::AdviceSubject> load(const std::vector<std::string>& extra) const override {
    const auto spec = reload(extra);
    if (!spec) return std::nullopt;
    return subject_of(*spec);
  }

  std::optional<workloads::MemoryFit> fit(const std::vector<std::string>& extra) const override {
    const auto spec = reload(extra);
    if (!spec) return std::nullopt;
    return estimate(*spec, options_.expandable_segments);
  }

 private:
  // The scenario re-loaded with the user's overrides and then `extra`; nullopt when the loader
  // rejects the combination (a layout that does not divide, a batch that is not divisible, ...).
  std::optional<scenarios::ScenarioSpec> reload(const std::vector<std::string>& extra) const {
    const std::vector<std::string> all = workloads::merge_overrides(spec_.overrides, extra);
    try {
      if (!options_.scenario_text.empty()) return scenarios::parse_scenario(options_.scenario_text, spec_.file, all);
      return scenarios::load_scenario(spec_.file, all);
    } catch (const scenarios::ScenarioError&) {
      return std::nullopt;
    }
  }

  const scenarios::ScenarioSpec& spec_;
  const MemoryReportOptions& options_;
};

// ---- text ---------------------------------------------------------------------------------------

std::string gib(double bytes) {
  if (bytes == 0) return "0 B";
  if (std::abs(bytes) < kMiB) return fmt("%.1f KiB", bytes / 1024.0);
  if (std::abs(bytes) < kGiB) return fmt("%.1f MiB", bytes / kMiB);
  return fmt("%.2f GiB", bytes / kGiB);
}

const char* category_name(workloads::MemoryCategory c) {
  switch (c) {
    case workloads::MemoryCategory::Params: return "params";
    case workloads::MemoryCategory::Grads: return "grads";
    case workloads::MemoryCategory::Optimizer: return "optimizer";
    case workloads::MemoryCategory::Activations: return "activations";
    case workloads::MemoryCategory::Buffers: return "buffers";
    case workloads::MemoryCategory::Runtime: return "runtime";
    case workloads::MemoryCategory::Host: return "host";
  }
  return "";
}

sim::Bytes category_total(const workloads::MemoryBreakdown& b, workloads::MemoryCategory c) {
  switch (c) {
    case workloads::MemoryCategory::Params: return b.params;
    case workloads::MemoryCategory::Grads: return b.grads;
    case workloads::MemoryCategory::Optimizer: return b.optimizer;
    case workloads::MemoryCategory::Activations: return b.activations;
    case workloads::MemoryCategory::Buffers: return b.buffers;
    case workloads::MemoryCategory::Runtime: return b.runtime;
    case workloads::MemoryCategory::Host: return b.host;
  }
  return {};
}

// torch/cuda/memory.py memory_summary()'s formatters: sizes in B/KiB/MiB/GiB chosen by the value,
// integer-divided; counts with K/M from 750,000.
std::string torch_size(std::uint64_t sz) {
  static constexpr const char* kPrefixes[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double pref = static_cast<double>(sz);
  int i = 0;
  while (i < 5 && pref >= 768 * 1024) {
    ++i;
    sz /= 1024;
    pref /= 1024;
  }
  return fmt("%6llu %s", static_cast<unsigned long long>(sz), kPrefixes[i]);
}

std::string torch_count(std::uint64_t n) {
  static constexpr const char* kPrefixes[] = {" ", "K", "M"};
  double pref = static_cast<double>(n);
  int i = 0;
  while (i < 2 && pref >= 750 * 1000) {
    ++i;
    n /= 1000;
    pref /= 1000;
  }
  return fmt("%7llu %s ", static_cast<unsigned long long>(n), kPrefixes[i]);
}

constexpr const char* kNotTracked = "    n/a   ";

// The layout of torch.cuda.memory_summary() (torch/cuda/memory.py, not abbreviated): 75 columns,
// Cur Usage (after the iteration), Peak Usage (over it), Tot Alloc and Tot Freed (over it), each
// metric with its "from large pool" / "from small pool" rows (large: blocks > 1 MiB). Values the
// allocator model does not track print n/a.
std::string memory_summary_block(const MemoryReport& r) {
  const workloads::AllocatorStats& s = r.replay.stats;
  const std::string rule_eq(75, '='), rule(75, '-');
  std::string out;
  auto line = [&](const std::string& text) { out += "|" + text + "|\n"; };
  auto cells = [&](const char* name, const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
    line(fmt(" %-21s | %s | %s | %s | %s ", name, a.c_str(), b.c_str(), c.c_str(), d.c_str()));
  };
  constexpr const char* kRowNames[3] = {nullptr, "      from small pool", "      from large pool"};
  // A metric: its aggregate row, then large pool, then small pool (memory_summary's order).
  auto metric = [&](const char* name, const workloads::AllocatorStat (&stat)[3], auto format) {
    line(rule);
    for (const int i : {static_cast<int>(workloads::kAllPools), static_cast<int>(workloads::kLargePool),
                        static_cast<int>(workloads::kSmallPool)}) {
      cells(i == workloads::kAllPools ? name : kRowNames[i], format(stat[i].current), format(stat[i].peak),
            format(stat[i].allocated), format(stat[i].freed));
    }
  };
  auto current_only = [&](const char* name, const std::uint64_t (&cur)[3], auto format) {
    line(rule);
    for (const int i : {static_cast<int>(workloads::kAllPools), static_cast<int>(workloads::kLargePool),
                        static_cast<int>(workloads::kSmallPool)}) {
      cells(i == workloads::kAllPools ? name : kRowNames[i], format(cur[i]), kNotTracked, kNotTracked, kNotTracked);
    }
  };
  line(rule_eq);
  line(fmt(" %-16s PyTorch CUDA memory summary, device ID %-17d ", "", 0));
  line(rule);
  line(fmt("  %-9s CUDA OOMs: %-12d | %-6s cudaMalloc retries: %-8d  ", "", s.num_ooms, "", s.num_alloc_retries));
  line(rule_eq);
  line("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
  metric("Allocated memory", s.allocated_bytes, torch_size);
  // One stream and no recordStream: every freed block is inactive at once, so active == allocated.
  metric("Active memory", s.allocated_bytes, torch_size);
  metric("Requested memory", s.requested_bytes, torch_size);
  metric("GPU reserved memory", s.reserved_bytes, torch_size);
  current_only("Non-releasable memory", s.inactive_split_pool, torch_size);
  metric("Allocations", s.allocations, torch_count);
  metric("Active allocs", s.allocations, torch_count);
  metric("GPU reserved segments", s.segments, torch_count);
  current_only("Non-releasable allocs", s.inactive_split_blocks, torch_count);
  line(rule);
  cells("Oversize allocations", kNotTracked, kNotTracked, kNotTracked, kNotTracked);
  line(rule);
  cells("Oversize GPU segments", kNotTracked, kNotTracked, kNotTracked, kNotTracked);
  line(rule_eq);
  out += "  (device ID 0: the replayed GPU, the most loaded pipeline stage's)\n";
  return out;
}

// The state lines' formulas with the numbers put in: parameters x bytes per parameter / sharding.
std::string formula_of(const workloads::MemoryLine& l, const workloads::MemoryRequest& q) {
  const workloads::StateBytes sb = workloads::state_bytes_per_param(q.training);
  const workloads::ParallelSpec& p = q.parallel;
  // Routed experts (MoE, and the MTP modules' experts) shard over the expert-data-parallel group,
  // dp / ep; the rest over the data- and context-parallel ranks together.
  const bool experts = l.name.find("routed experts") != std::string::npos;
  // Hybrid sharding (shard_group): over one of the shard_instances groups.
  const double dp = experts ? std::max(1, p.expert_dp() / std::max(1, p.shard_instances)) : p.shard_ranks();
  double per = 0, shard = 1;
  switch (l.category) {
    case workloads::MemoryCategory::Params: per = sb.weights, shard = p.zero >= 3 ? dp : 1; break;
    case workloads::MemoryCategory::Grads: per = sb.grads, shard = p.zero >= 2 ? dp : 1; break;
    case workloads::MemoryCategory::Optimizer:
      per = sb.optimizer, shard = p.shards_optimizer() ? dp : 1;
      if (p.outer_dp_sharding == workloads::OuterDpSharding::Optim)  // HFSDP: over every group
        shard = experts ? std::max(1, p.expert_dp() * p.cp) : p.optimizer_shard_ranks();
      break;
    default: return l.formula;
  }
  const double params = l.bytes.value * shard / per;
  const bool all_groups = p.outer_dp_sharding == workloads::OuterDpSharding::Optim && l.category == workloads::MemoryCategory::Optimizer;
  const char* over = all_groups             ? (experts ? " / (dp/ep) %g, optim over the groups" : " / dp x cp %g, optim over the groups")
                     : p.shard_instances > 1 ? " / shard_group %g"
                     : experts            ? " / (dp/ep) %g"
                     : p.cp > 1           ? " / dp x cp %g"
                                          : " / dp %g";
  return fmt("%.4g params x %g B", params, per) + (shard > 1 ? fmt(over, shard) : std::string());
}

}  // namespace

// ---- public -------------------------------------------------------------------------------------

std::int64_t gpu_capacity_bytes(const topology::ClusterSpec& cluster) {
  const topology::GpuSpec* gpu = topology::find_gpu(cluster.node.gpu);
  if (gpu == nullptr) return 0;
  return static_cast<std::int64_t>(
      std::llround(topology::gpu_memory_capacity(topology::gpu_as_configured(*gpu, cluster), cluster.mig).value));
}

workloads::MemoryRequest memory_request(const scenarios::ScenarioSpec& spec) {
  workloads::MemoryRequest q;
  q.model = spec.model;
  q.parallel = spec.parallel;
  q.training = spec.training;
  q.sync = spec.sync;
  q.capacity = sim::Bytes{static_cast<double>(gpu_capacity_bytes(spec.cluster))};
  // MoE: the busiest expert-parallel GPU's share, as the stage costs take it (stage_costs.h
  // moe_load_factor): the moe_load_imbalance constant, capped by the capacity factor.
  const auto given = spec.model_constants.find("moe_load_imbalance");
  const double imbalance = given != spec.model_constants.end() ? given->second
                                                                : workloads::ComputeConstants{}.get("moe_load_imbalance");
  q.moe_load_factor = spec.model.capacity_factor > 0 ? std::min(imbalance, spec.model.capacity_factor) : imbalance;
  return q;
}

MemoryReport memory_for_scenario(const scenarios::ScenarioSpec& spec, const MemoryReportOptions& options) {
  MemoryReport r = estimate(spec, options.expandable_segments);
  if (!r.fits && options.advice) r.advice = workloads::advise_memory(subject_of(spec), r, ScenarioEvaluator(spec, options));
  return r;
}

nlohmann::json memory_json_block(const MemoryReport& r) {
  const workloads::MemoryBreakdown& b = r.breakdown;
  const std::int64_t params = to_bytes(b.params), grads = to_bytes(b.grads), optimizer = to_bytes(b.optimizer);
  const std::int64_t activations = to_bytes(b.activations);
  return nlohmann::json{{"params", params},
                        {"grads", grads},
                        {"optimizer", optimizer},
                        {"activations", activations},
                        {"other", r.required - params - grads - optimizer - activations},
                        {"total", r.required},
                        {"capacity", r.capacity}};
}

std::string memory_report_json(const MemoryReport& r) {
  using nlohmann::json;
  const workloads::MemoryBreakdown& b = r.breakdown;
  json lines = json::array();
  for (const workloads::MemoryLine& l : b.lines) {
    lines.push_back({{"name", l.name}, {"category", category_name(l.category)}, {"bytes", to_bytes(l.bytes)},
                     {"formula", l.formula}, {"at_peak", l.at_peak}});
  }
  const workloads::AllocatorStats& s = r.replay.stats;
  json allocator = {{"replayed_stage", b.stage},
                    {"expandable_segments", r.expandable_segments},
                    {"allocated_bytes", {{"current", s.allocated}, {"peak", s.peak_allocated}}},
                    {"active_bytes", {{"current", s.active}, {"peak", s.peak_allocated}}},
                    {"reserved_bytes", {{"current", s.reserved}, {"peak", s.peak_reserved}}},
                    {"inactive_split_bytes", {{"current", s.inactive_split}}},
                    {"segment", {{"current", s.num_segments}}},
                    {"largest_free_block_bytes", s.largest_free_block},
                    {"fragmentation_bytes", r.fragmentation},
                    {"num_alloc_retries", s.num_alloc_retries},
                    {"num_ooms", s.num_ooms},
                    {"out_of_memory", r.replay.out_of_memory}};
  json advice = json::array();
  for (const workloads::MemoryAdviceItem& a : r.advice) {
    advice.push_back({{"overrides", a.overrides}, {"set", a.set_flags()}, {"why", a.why}, {"saved_bytes", a.saved_bytes},
                      {"required_bytes", a.required_bytes}, {"capacity_bytes", a.capacity_bytes}, {"fits", a.fits}});
  }
  json categories = json::object();
  for (auto c : {workloads::MemoryCategory::Params, workloads::MemoryCategory::Grads, workloads::MemoryCategory::Optimizer,
                 workloads::MemoryCategory::Activations, workloads::MemoryCategory::Buffers, workloads::MemoryCategory::Runtime}) {
    categories[category_name(c)] = to_bytes(category_total(b, c));
  }
  const json out = {{"scenario", r.scenario},
                    {"file", r.file},
                    {"gpu", r.gpu_id},
                    {"mig", r.mig.empty() ? json(nullptr) : json(r.mig)},
                    {"gpus", r.gpus},
                    {"stage", b.stage},
                    {"stage_reason", b.stage_reason},
                    {"lines", lines},
                    {"categories_bytes", categories},
                    {"allocator", allocator},
                    {"allocated_peak_bytes", r.allocated_peak},
                    {"fragmentation_bytes", r.fragmentation},
                    {"reserved_peak_bytes", r.reserved_peak},
                    {"runtime_bytes", r.runtime},
                    {"host_bytes", to_bytes(b.host)},
                    {"required_bytes", r.required},
                    {"capacity_bytes", r.capacity},
                    {"headroom_bytes", r.headroom()},
                    {"fits", r.fits},
                    {"memory_per_gpu_bytes", memory_json_block(r)},
                    {"advice", advice}};
  return out.dump(2) + "\n";
}

std::string memory_report_text(const MemoryReport& r) {
  const workloads::MemoryBreakdown& b = r.breakdown;
  std::string out;
  out += "Memory of " + r.scenario + " (" + r.file + ")\n";
  out += fmt("GPU: %s (%s)%s, capacity %s per GPU; %d GPUs\n", r.gpu_name.c_str(), r.gpu_id.c_str(),
             r.mig.empty() ? "" : (", MIG slice " + r.mig).c_str(), gib(static_cast<double>(r.capacity)).c_str(), r.gpus);
  const workloads::ParallelSpec& p = r.request.parallel;
  const std::string recompute(sim::name_of(workloads::kRecomputeNames, r.request.training.recompute));
  const std::string cp = p.cp > 1 ? " x cp " + std::to_string(p.cp) : std::string();
  out += fmt("Layout: tp %d%s x pp %d x dp %d%s, zero %d%s; micro-batch %d, global batch %d, recompute %s\n", p.tp, cp.c_str(),
             p.pp, p.dp, p.sequence_parallel ? " (sequence parallel)" : "", p.zero, p.distributed_optimizer ? ", distributed optimizer" : "",
             r.request.training.micro_batch, r.request.training.global_batch, recompute.c_str());
  if (p.uneven_stages())
    out += "Stage layers, first to last: " + scenarios::stage_layers_text(r.request.model.layers, p) + "\n";
  out += fmt("Most loaded GPU: pipeline stage %d (every tp/dp rank of a stage holds the same): %s\n\n", b.stage,
             b.stage_reason.c_str());

  // The per-term table, grouped by category with subtotals.
  out += fmt("%-34s %12s  %s\n", "term", "bytes", "formula");
  out += std::string(100, '-') + "\n";
  for (auto c : {workloads::MemoryCategory::Params, workloads::MemoryCategory::Grads, workloads::MemoryCategory::Optimizer,
                 workloads::MemoryCategory::Activations, workloads::MemoryCategory::Buffers, workloads::MemoryCategory::Runtime,
                 workloads::MemoryCategory::Host}) {
    bool any = false;
    for (const workloads::MemoryLine& l : b.lines) {
      if (l.category != c) continue;
      any = true;
      // A transient of a phase smaller than the peak one prints in parentheses: not in the totals.
      const std::string bytes = l.at_peak ? gib(l.bytes.value) : fmt("(%s)", gib(l.bytes.value).c_str());
      out += fmt("  %-32s %12s  %s\n", l.name.c_str(), bytes.c_str(), formula_of(l, r.request).c_str());
    }
    if (any && c == workloads::MemoryCategory::Host) {
      out += fmt("%-34s %12s  (host memory per GPU, not in the GPU total)\n", "host total", gib(b.host.value).c_str());
    } else if (any) {
      out += fmt("%-34s %12s\n", (std::string(category_name(c)) + " total").c_str(), gib(category_total(b, c).value).c_str());
    }
  }
  out += std::string(100, '-') + "\n";
  out += fmt("%-34s %12s  (formula total)\n\n", "total", gib(b.total.value).c_str());

  out += "Caching allocator (one iteration of stage " + std::to_string(b.stage) + " replayed" + std::string(r.expandable_segments ? ", expandable_segments:True" : "") +
         "; Cur = after the iteration):\n";
  out += memory_summary_block(r);
  out += fmt("  largest free block %s, fragmentation (peak reserved - peak allocated) %s\n\n",
             gib(static_cast<double>(r.replay.stats.largest_free_block)).c_str(), gib(static_cast<double>(r.fragmentation)).c_str());

  out += fmt("  %-42s %12s\n", "peak allocated (formula, without runtime)", gib(static_cast<double>(r.allocated_peak)).c_str());
  out += fmt("  %-42s %12s\n", "+ fragmentation (allocator replay)", gib(static_cast<double>(r.fragmentation)).c_str());
  out += fmt("  %-42s %12s\n", "= peak reserved", gib(static_cast<double>(r.reserved_peak)).c_str());
  out += fmt("  %-42s %12s\n", "+ runtime (CUDA context, cuBLAS, NCCL)", gib(static_cast<double>(r.runtime)).c_str());
  out += fmt("  %-42s %12s\n", "= required", gib(static_cast<double>(r.required)).c_str());
  out += fmt("  %-42s %12s\n", "capacity", gib(static_cast<double>(r.capacity)).c_str());
  out += fmt("  %-42s %12s (%.1f%% of capacity)\n", "headroom", gib(static_cast<double>(r.headroom())).c_str(),
             r.capacity > 0 ? 100.0 * static_cast<double>(r.headroom()) / static_cast<double>(r.capacity) : 0.0);
  if (r.replay.out_of_memory) out += "  the allocator replay ran out of memory before the iteration ended\n";
  if (r.fits) {
    out += "fits: yes\n";
    return out;
  }
  const std::int64_t short_by = std::max<std::int64_t>(0, r.required - r.capacity);
  out += fmt("\ndoes not fit: needs %s more (required %s, capacity %s)\n", gib(static_cast<double>(short_by)).c_str(),
             gib(static_cast<double>(r.required)).c_str(), gib(static_cast<double>(r.capacity)).c_str());
  if (r.advice.empty()) {
    out += "no single change the model knows makes it fit; more GPUs (a larger dp with ZeRO) would\n";
    return out;
  }
  out += "\nWhat would make it fit (each change re-loaded and re-estimated):\n";
  out += fmt("  %-64s %12s %12s  %s\n", "change", "saves", "new total", "fits");
  for (const workloads::MemoryAdviceItem& a : r.advice) {
    const std::string flags = a.set_flags();
    if (flags.size() > 64) out += "  " + flags + "\n";
    out += fmt("  %-64s %12s %12s  %s\n", flags.size() > 64 ? "" : flags.c_str(), gib(static_cast<double>(a.saved_bytes)).c_str(),
               gib(static_cast<double>(a.required_bytes)).c_str(),
               a.fits ? "yes" : "no");
    out += "      " + a.why + (a.capacity_bytes != r.capacity ? fmt(" (capacity %s)", gib(static_cast<double>(a.capacity_bytes)).c_str()) : std::string()) + "\n";
  }
  return out;
}

}  // namespace clustersim::analysis
