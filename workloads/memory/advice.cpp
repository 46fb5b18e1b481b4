// Memory advice (see advice.h).
#include "workloads/memory/advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "topology/catalog.h"

namespace clustersim::workloads {
namespace {

template <typename... Args>
std::string fmt(const char* format, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

struct Change {
  std::vector<std::string> overrides;
  std::string why;
};

std::string key_of(const std::string& override_text) { return override_text.substr(0, override_text.find('=')); }

// Layout change by `factor` on `key` (tp or pp), keeping the GPU count: dp shrinks by the factor
// (written out only when the job gives dp explicitly).
std::optional<Change> layout_change(const AdviceSubject& s, const char* key, int current, int factor) {
  const ParallelSpec& p = s.parallel;
  if (p.dp % factor != 0) return std::nullopt;
  Change c;
  c.overrides.push_back(fmt("parallelism.%s=%d", key, current * factor));
  if (!s.dp_derived) c.overrides.push_back(fmt("parallelism.dp=%d", p.dp / factor));
  c.why = fmt("%s %d -> %d, dp %d -> %d (same GPUs)", std::string(key) == "tp" ? "tensor parallel" : "pipeline parallel",
              current, current * factor, p.dp, p.dp / factor);
  return c;
}

// Sharding the model states over dp: the distributed optimizer, then each ZeRO stage above the job's.
void sharding_changes(const ParallelSpec& p, std::vector<Change>& out) {
  if (p.grad_replicas() <= 1) return;
  if (!p.shards_optimizer()) {
    out.push_back({{"parallelism.distributed_optimizer=true"}, "Megatron's distributed optimizer: optimizer states / dp"});
  }
  for (int z = p.zero + 1; z <= 3; ++z) {
    static constexpr const char* kWhat[] = {"", "optimizer states / dp", "optimizer states and gradients / dp",
                                            "optimizer states, gradients and weights / dp"};
    out.push_back({{fmt("parallelism.zero=%d", z)}, fmt("ZeRO stage %d: %s", z, kWhat[z])});
  }
}

// Single changes, in order of preference: the cheaper in throughput first.
std::vector<Change> single_changes(const AdviceSubject& s) {
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  std::vector<Change> out;
  if (t.recompute == Recompute::None) {
    out.push_back({{"training.recompute=selective"}, "selective recompute: attention scores are recomputed, not kept"});
  }
  if (p.tp > 1 && !p.sequence_parallel) {
    out.push_back({{"parallelism.sequence_parallel=true"}, "sequence parallelism: norms and dropouts sharded over tp"});
  }
  sharding_changes(p, out);
  for (int mb = t.micro_batch / 2; mb >= 1; mb /= 2) {
    out.push_back({{fmt("training.micro_batch=%d", mb)}, fmt("micro-batch %d -> %d (more gradient accumulation)", t.micro_batch, mb)});
    if (mb == 1) break;
  }
  for (int f : {2, 4, 8}) {
    if (auto c = layout_change(s, "tp", p.tp, f)) out.push_back(*c);
  }
  for (int f : {2, 4, 8}) {
    if (auto c = layout_change(s, "pp", p.pp, f)) out.push_back(*c);
  }
  if (t.recompute != Recompute::Full) {
    out.push_back({{"training.recompute=full"}, "full recompute: keep only each layer's input"});
  }
  return out;
}

// A GPU with more memory (or a larger MIG slice): every candidate, smallest first.
std::vector<Change> larger_gpus(const AdviceSubject& s, std::int64_t capacity) {
  std::vector<Change> out;
  if (!s.mig.empty()) {
    for (const topology::MigProfile& m : topology::mig_profiles(s.gpu)) {
      if (m.memory().value <= static_cast<double>(capacity)) continue;
      const std::string profile(m.profile);
      out.push_back({{"cluster.gpu_overrides.mig=" + profile}, fmt("a larger MIG slice, %s (%.2f GiB)", profile.c_str(), m.memory_gib)});
    }
    return out;
  }
  std::vector<const topology::GpuSpec*> gpus;
  for (const topology::GpuSpec& g : topology::all_gpus()) {
    if (std::llround(g.memory.value) > capacity) gpus.push_back(&g);
  }
  std::stable_sort(gpus.begin(), gpus.end(), [](auto* a, auto* b) { return a->memory.value < b->memory.value; });
  for (const topology::GpuSpec* g : gpus) {
    out.push_back({{"cluster.node.gpu=" + g->id}, fmt("a GPU with more memory: %s (%.0f GB)", g->name.c_str(), g->memory.value / 1e9)});
  }
  return out;
}

MemoryAdviceItem item_of(const Change& c, const MemoryFit& before, const MemoryFit& after) {
  MemoryAdviceItem a;
  a.overrides = c.overrides;
  a.why = c.why;
  a.required_bytes = after.required;
  a.capacity_bytes = after.capacity;
  a.saved_bytes = before.required - after.required;
  a.fits = after.fits;
  return a;
}

// The smallest larger GPU that fits, else the largest that loads.
std::optional<MemoryAdviceItem> gpu_advice(const AdviceEvaluator& ev, const AdviceSubject& s, const MemoryFit& before) {
  std::optional<MemoryAdviceItem> best;
  for (const Change& c : larger_gpus(s, before.capacity)) {
    const auto after = ev.fit(c.overrides);
    if (!after) continue;
    best = item_of(c, before, *after);
    if (after->fits) break;
  }
  return best;
}

// The single change to apply next in a combination: the first (in preference order) that makes it
// fit, else the one that brings `required` lowest below `now`.
std::optional<std::pair<Change, MemoryFit>> next_step(const AdviceEvaluator& ev, const AdviceSubject& current,
                                                      const std::vector<std::string>& applied, std::int64_t now) {
  std::optional<std::pair<Change, MemoryFit>> pick;
  for (const Change& c : single_changes(current)) {
    const auto after = ev.fit(merge_overrides(applied, c.overrides));
    if (!after) continue;
    if (after->fits) return std::pair{c, *after};
    if (after->required < now && (!pick || after->required < pick->second.required)) pick.emplace(c, *after);
  }
  return pick;
}

// Greedy: apply the first single change (in preference order) that makes it fit, else the one
// that saves the most; up to kMaxSteps changes.
std::optional<MemoryAdviceItem> combined_advice(const AdviceEvaluator& ev, const MemoryFit& before) {
  constexpr int kMaxSteps = 6;
  std::vector<std::string> applied;
  std::vector<std::string> whys;
  std::optional<MemoryFit> current;
  for (int step = 0; step < kMaxSteps; ++step) {
    const auto subject = ev.load(applied);
    if (!subject) break;
    const auto pick = next_step(ev, *subject, applied, current ? current->required : before.required);
    if (!pick) break;
    applied = merge_overrides(applied, pick->first.overrides);
    whys.push_back(pick->first.why);
    current = pick->second;
    if (current->fits) break;
  }
  if (!current || applied.size() < 2) return std::nullopt;
  Change c{applied, {}};
  for (std::size_t i = 0; i < whys.size(); ++i) c.why += (i > 0 ? "; " : "") + whys[i];
  return item_of(c, before, *current);
}

}  // namespace

std::string MemoryAdviceItem::set_flags() const {
  std::string out;
  for (const std::string& o : overrides) {
    if (!out.empty()) out.push_back(' ');
    out.append("--set ").append(o);
  }
  return out;
}

std::vector<std::string> merge_overrides(std::vector<std::string> base, const std::vector<std::string>& extra) {
  for (const std::string& e : extra) {
    const std::string k = key_of(e);
    std::erase_if(base, [&](const std::string& b) { return key_of(b) == k; });
    base.push_back(e);
  }
  return base;
}

std::vector<MemoryAdviceItem> advise_memory(const AdviceSubject& job, const MemoryFit& before,
                                            const AdviceEvaluator& evaluator) {
  std::vector<MemoryAdviceItem> out;
  for (const Change& c : single_changes(job)) {
    const auto after = evaluator.fit(c.overrides);
    if (!after) continue;
    MemoryAdviceItem a = item_of(c, before, *after);
    if (a.fits || a.saved_bytes > 0) out.push_back(std::move(a));
  }
  if (auto g = gpu_advice(evaluator, job, before)) out.push_back(std::move(*g));
  const bool any_fits = std::any_of(out.begin(), out.end(), [](const MemoryAdviceItem& a) { return a.fits; });
  if (!any_fits) {
    if (auto c = combined_advice(evaluator, before)) out.push_back(std::move(*c));
  }
  std::stable_partition(out.begin(), out.end(), [](const MemoryAdviceItem& a) { return a.fits; });
  return out;
}

}  // namespace clustersim::workloads
