// Will one GPU of a training job fit in its memory: the analytical per-GPU model joined with a
// replay of PyTorch's caching allocator, against the GPU's (or MIG slice's) capacity.
//
//   * the analytical model (memory_model.h): named terms with formulas for the pipeline stage that
//     holds the most (`breakdown.stage`, `breakdown.stage_reason`);
//   * the caching-allocator replay (allocator_replay.h): one iteration's allocation and free
//     sequence on that same stage, giving reserved vs allocated;
//   * the capacity: `request.capacity` (topology::gpu_memory_capacity, the one capacity rule).
//
// Definitions (bytes, integers):
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
// The replay covers the stage's states, activations, attention workspace, logits and buckets; terms
// it does not replay (ZeRO-3 gathered weights, the output layer's input activations) count in
// allocated_peak through the formula but add no fragmentation.
#pragma once

#include <cstdint>

#include "workloads/memory/allocator_replay.h"
#include "workloads/memory/memory_model.h"

namespace clustersim::workloads {

struct MemoryFit {
  MemoryRequest request;        // what the memory model was asked (capacity included)
  MemoryBreakdown breakdown;    // the formula terms of the most loaded GPU
  AllocatorReplay replay;       // breakdown.stage's iteration through the caching allocator
  bool expandable_segments = false;

  std::int64_t capacity = 0;
  std::int64_t allocated_peak = 0, fragmentation = 0, reserved_peak = 0, runtime = 0, required = 0;
  bool fits = false;

  std::int64_t headroom() const { return capacity - required; }
};

// `expandable_segments`: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True for the replay.
MemoryFit fit_memory(const MemoryRequest& request, bool expandable_segments);

}  // namespace clustersim::workloads
