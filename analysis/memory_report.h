// `clustersim memory`: will a scenario fit in GPU memory, and what would make it fit.
//
// The fit itself (analytical model + caching-allocator replay against the capacity, with its
// definitions of allocated/reserved/required) is workloads/memory/fit.h; the advice when it does
// not fit is workloads/memory/advice.h. This file gives them the scenario: the request and the
// capacity (topology::gpu_memory_capacity: the catalog's memory or the MIG slice's), and the
// advisor's evaluator, which re-loads the scenario with each change's `section.key=value`
// overrides (dp and global-batch divisibility included) and re-estimates it with this same
// function, so "fits" in the advice is exactly what `clustersim memory --set ...` would report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/scenario_spec.h"
#include "workloads/memory/advice.h"
#include "workloads/memory/fit.h"

namespace clustersim::analysis {

struct MemoryReportOptions {
  bool expandable_segments = false;  // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  bool advice = true;                // compute advice when the scenario does not fit
  // The scenario's TOML text, to re-parse it with the advice's overrides; empty: re-load
  // `spec.file` from disk (with `spec.overrides` first, then the advice's).
  std::string scenario_text;
};

// A scenario's memory fit, with who it is and, when it does not fit, the advice.
struct MemoryReport : workloads::MemoryFit {
  std::string scenario;                // the scenario's name
  std::string file;
  std::string gpu_id, gpu_name;
  std::string mig;                     // "" or the MIG profile
  int gpus = 0;
  std::vector<workloads::MemoryAdviceItem> advice;  // empty when it fits (or advice was not asked for)
};

// Capacity of one GPU of the scenario: topology::gpu_memory_capacity, rounded to bytes (0 for a
// GPU the catalog does not know).
std::int64_t gpu_capacity_bytes(const topology::ClusterSpec& cluster);

// The request the memory model sees for this scenario (capacity included).
workloads::MemoryRequest memory_request(const scenarios::ScenarioSpec& spec);

// Throws scenarios::ScenarioError only through re-loading for advice (never for the scenario itself,
// which the loader has already validated).
MemoryReport memory_for_scenario(const scenarios::ScenarioSpec& spec, const MemoryReportOptions& options = {});

// `run`'s "memory_per_gpu_bytes": {params, grads, optimizer, activations, other, total, capacity},
// integers. other = buffers + runtime + fragmentation, so the parts sum to total = required.
nlohmann::json memory_json_block(const MemoryReport& report);

// The whole report: breakdown lines with formulas, allocator stats, capacity, fits, advice.
std::string memory_report_json(const MemoryReport& report);

// For a person: header, per-term table, a torch.cuda.memory_summary()-style block, capacity and
// headroom, and when it does not fit, by how much and the advice.
std::string memory_report_text(const MemoryReport& report);

}  // namespace clustersim::analysis
