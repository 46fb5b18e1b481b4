// The memory fit of one GPU (see fit.h).
#include "workloads/memory/fit.h"

#include <algorithm>
#include <cmath>

namespace clustersim::workloads {
namespace {

std::int64_t to_bytes(sim::Bytes b) { return static_cast<std::int64_t>(std::llround(b.value)); }

}  // namespace

MemoryFit fit_memory(const MemoryRequest& request, bool expandable_segments) {
  MemoryFit f;
  f.request = request;
  f.expandable_segments = expandable_segments;
  f.breakdown = estimate_memory(request);
  f.capacity = to_bytes(request.capacity);
  f.runtime = to_bytes(f.breakdown.runtime);

  AllocatorOptions alloc;
  alloc.expandable_segments = expandable_segments;
  alloc.capacity_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, f.capacity - f.runtime));
  alloc.stage = f.breakdown.stage;
  f.replay = replay_training_iteration(request, alloc);

  const AllocatorStats& st = f.replay.stats;
  f.fragmentation = static_cast<std::int64_t>(st.peak_reserved >= st.peak_allocated ? st.peak_reserved - st.peak_allocated : 0);
  f.allocated_peak = to_bytes(f.breakdown.total) - f.runtime;
  f.reserved_peak = f.allocated_peak + f.fragmentation;
  f.required = f.reserved_peak + f.runtime;
  f.fits = f.required <= f.capacity && !f.replay.out_of_memory;
  return f;
}

}  // namespace clustersim::workloads
