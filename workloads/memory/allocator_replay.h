// One training iteration's allocations replayed through the caching-allocator model
// (caching_allocator.h) on one pipeline stage, to measure reserved vs allocated memory and
// fragmentation (fit.h joins it with the analytical model, memory_model.h). The tensors are the
// ones the memory model sums (saved_layer_tensors), so the two describe the same iteration.
#pragma once

#include <cstdint>

#include "workloads/memory/caching_allocator.h"
#include "workloads/memory/memory_model.h"

namespace clustersim::workloads {

// Replays the allocations of one training iteration on pipeline stage `options.stage` (its layers:
// ParallelSpec::layers_on_stage; the word embeddings on the first and last stages): weights, fp32
// main grads and optimizer states once; then, in 1F1B order, each micro-batch's
// per-layer activation tensors (Korthikanti et al.'s tensor list) allocated in forward and freed in
// backward, activation-gradient temporaries, and the gradient buckets during the last backward.
struct AllocatorReplay {
  AllocatorStats stats;
  std::uint64_t fragmentation = 0;  // peak reserved - peak allocated
  bool out_of_memory = false;
};
AllocatorReplay replay_training_iteration(const MemoryRequest& request, const AllocatorOptions& options);

}  // namespace clustersim::workloads
