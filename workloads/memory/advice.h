// What would make a training job that does not fit in GPU memory fit: concrete changes, each a list
// of `section.key=value` scenario overrides, each re-evaluated through the caller's evaluator (the
// analysis layer re-loads the scenario with them, so the loader's checks -- layout divisibility,
// global-batch divisibility -- decide what is valid, and "fits" is exactly what the scenario with
// those overrides reports).
//
// Single changes come in a fixed order of preference, the cheapest in throughput first: selective
// recompute, sequence parallelism, the distributed optimizer, ZeRO stages, smaller micro-batches,
// larger tp then pp at the same GPU count, full recompute. Then a GPU with more memory (or a larger
// MIG slice): the smallest that fits, else the largest that loads. When no single change fits, a
// greedy combination is added (up to six changes). Changes that fit come first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/memory/fit.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

struct MemoryAdviceItem {
  std::vector<std::string> overrides;  // "parallelism.tp=2", ... applied together
  std::string why;                     // what the change does, for a person
  std::int64_t saved_bytes = 0;        // required before - required after (negative: costs memory)
  std::int64_t required_bytes = 0;     // required after the change
  std::int64_t capacity_bytes = 0;     // capacity after the change (a larger GPU changes it)
  bool fits = false;

  std::string set_flags() const;       // "--set parallelism.tp=2 --set parallelism.dp=8"
};

// The job as the advisor reads it to propose changes.
struct AdviceSubject {
  ParallelSpec parallel;
  TrainingSpec training;
  bool dp_derived = false;  // dp not given explicitly: a layout change leaves it to be derived
  std::string gpu;          // catalog id
  std::string mig;          // "" or the MIG profile
};

// Re-evaluates the job with extra overrides (applied after the job's own; a key set again replaces
// its earlier value). Both return nullopt when the combination is invalid.
class AdviceEvaluator {
 public:
  virtual ~AdviceEvaluator() = default;
  virtual std::optional<AdviceSubject> load(const std::vector<std::string>& overrides) const = 0;
  virtual std::optional<MemoryFit> fit(const std::vector<std::string>& overrides) const = 0;
};

// `before`: the job's own fit (normally one that does not fit).
std::vector<MemoryAdviceItem> advise_memory(const AdviceSubject& job, const MemoryFit& before,
                                            const AdviceEvaluator& evaluator);

// `base` with `extra` applied: a key set again replaces its earlier value.
std::vector<std::string> merge_overrides(std::vector<std::string> base, const std::vector<std::string>& extra);

}  // namespace clustersim::workloads
