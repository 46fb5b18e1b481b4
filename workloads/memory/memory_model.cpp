// The memory model's assembly (memory_model.h): a stage's breakdown is its model states,
// activations, buffers and runtime (memory_lines.h's sections) with the largest transient phase
// at the peak; the job's is that of its most loaded pipeline stage, with the reason it is.
#include "workloads/memory/memory_model.h"

#include <string>
#include <string_view>
#include <utility>

#include "workloads/memory/memory_lines.h"

namespace clustersim::workloads {

namespace {

// Why `stage` holds the most, in the terms that differ between stages.
std::string peak_stage_reason(const MemoryRequest& r, int stage) {
  const ParallelSpec& par = r.parallel;
  const bool first = stage == 0, last = stage == par.pp - 1;
  if (!par.uneven_stages() && first)
    return "first pipeline stage: it keeps the most micro-batches in flight and the input embedding";
  if (!par.uneven_stages() && last)
    return "last pipeline stage: the output layer and fp32 logits outweigh the first stage's extra micro-batches "
           "in flight";
  const int layers = par.layers_on_stage(r.model.layers, stage);
  const double in_flight = micro_batches_in_flight(par, micro_batches_per_replica(r), stage);
  const std::string what = first ? " and the input embedding" : last ? ", the output layer and the fp32 logits" : "";
  return format_text("uneven stages: its %g layers with %g micro-batches in flight", layers, in_flight) + what +
         " outweigh every other stage's";
}

}  // namespace

const MemoryLine* MemoryBreakdown::find_line(std::string_view name) const {
  for (const MemoryLine& l : lines) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

MemoryBreakdown stage_memory(const MemoryRequest& request, int stage) {
  MemoryBreakdown b;
  b.capacity = request.capacity;
  b.stage = stage;
  MemoryLineBuilder out(b);
  add_model_states(out, request, stage);
  add_activations(out, request, stage);
  add_buffers(out, request, stage);
  add_runtime(out, request);
  out.finish();
  return b;
}

MemoryBreakdown estimate_memory(const MemoryRequest& request) {
  const int pp = request.parallel.pp;
  MemoryBreakdown peak = stage_memory(request, 0);
  if (pp <= 1) {
    peak.stage_reason = "single pipeline stage: every GPU holds the same";
    return peak;
  }
  // Every stage, since uneven stages can move the peak inside the pipeline; ties go to the earlier.
  for (int stage = 1; stage < pp; ++stage) {
    MemoryBreakdown b = stage_memory(request, stage);
    if (b.total > peak.total) peak = std::move(b);
  }
  peak.stage_reason = peak_stage_reason(request, peak.stage);
  return peak;
}

}  // namespace clustersim::workloads
