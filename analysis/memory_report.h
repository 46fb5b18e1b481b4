// `clustersim memory`: will a scenario fit in GPU memory, and what would make it fit.
//
// Joins three models for the scenario's most loaded GPU:
//   * the analytical per-GPU model (workloads/memory/memory_model.h): named terms with formulas, for the
//     pipeline stage that holds the most (`breakdown.stage`, `breakdown.stage_reason`);
//   * the caching-allocator replay (workloads/memory/caching_allocator.h): one iteration's allocation and
//     free sequence on stage 0 through a model of PyTorch's allocator, giving reserved vs allocated;
//   * the GPU's capacity: the catalog's memory, or the MIG slice's when cluster.gpu_overrides.mig is
//     set (shared/reference/hardware.md section 5).
//
// Definitions (bytes; every one an integer in the JSON):
//   allocated_peak = breakdown.total - breakdown.runtime      what PyTorch's allocator hands out
//   fragmentation  = replay peak reserved - replay peak allocated (>= 0): the allocator's overhead,
//                    measured on the replayed sequence and added on top of the formula's peak
//   reserved_peak  = allocated_peak + fragmentation
//   required       = reserved_peak + breakdown.runtime        CUDA context, cuBLAS, NCCL: outside
//                                                              the allocator but on the same GPU
//   headroom       = capacity - required (negative: short by that much)
//   fits           = required <= capacity and the replay, run with capacity - runtime as the
//                    device limit (so it releases cached blocks and retries as PyTorch does),
//                    never ran out of memory.
// The replay covers stage 0's states, activations, attention workspace, logits and buckets; terms
// it does not replay (ZeRO-3 gathered weights, the last stage's output layer) count in
// allocated_peak through the formula but add no fragmentation.
//
// Advice: when it does not fit, concrete changes, each a list of `section.key=value` overrides that
// the loader accepts (dp and global-batch divisibility included): the scenario is re-loaded with
// them and re-estimated by this same function, so "fits" in the advice is exactly what
// `clustersim memory --set ...` would report. Single changes come in a fixed order of preference
// (cheapest in throughput first); when none fits alone, a greedy combination is added.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/scenario_spec.h"
#include "workloads/memory/caching_allocator.h"
#include "workloads/memory/memory_model.h"

namespace clustersim::analysis {

struct MemoryReportOptions {
  bool expandable_segments = false;  // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  bool advice = true;                // compute advice when the scenario does not fit
  // The scenario's TOML text, to re-parse it with the advice's overrides; empty: re-load
  // `spec.file` from disk (with `spec.overrides` first, then the advice's).
  std::string scenario_text;
};

struct MemoryAdviceItem {
  std::vector<std::string> overrides;  // "parallelism.tp=2", ... applied together
  std::string why;                     // what the change does, for a person
  std::int64_t saved_bytes = 0;        // required before - required after (negative: costs memory)
  std::int64_t required_bytes = 0;     // required after the change
  std::int64_t capacity_bytes = 0;     // capacity after the change (a larger GPU changes it)
  bool fits = false;

  std::string set_flags() const;       // "--set parallelism.tp=2 --set parallelism.dp=8"
};

struct MemoryReport {
  std::string scenario;                // the scenario's name
  std::string file;
  std::string gpu_id, gpu_name;
  std::string mig;                     // "" or the MIG profile
  int gpus = 0;
  workloads::MemoryRequest request;      // what the memory model was asked
  workloads::MemoryBreakdown breakdown;  // the formula terms of the most loaded GPU
  workloads::AllocatorReplay replay;     // stage 0's iteration through the caching allocator
  bool expandable_segments = false;

  std::int64_t capacity = 0;
  std::int64_t allocated_peak = 0, fragmentation = 0, reserved_peak = 0, runtime = 0, required = 0;
  bool fits = false;
  std::vector<MemoryAdviceItem> advice;  // empty when it fits (or advice was not asked for)

  std::int64_t headroom() const { return capacity - required; }
};

// Capacity of one GPU of the scenario: the catalog's memory, or the MIG slice's (hardware.md
// section 5, GiB as `nvidia-smi mig -lgip` lists them; the profile's nominal GB for GPUs not
// listed there), never more than the whole GPU.
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
