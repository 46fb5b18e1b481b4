// Pipeline schedules: the order in which each pipeline rank runs its forward and backward passes.
//
// A pipeline of p ranks, each holding v model chunks (virtual stages; v = 1 unless interleaved),
// runs m micro-batches. Virtual stage `chunk * p + rank` holds layers in pipeline order. Orders:
//   GPipe: all forwards, then all backwards (in reverse micro-batch order) -- holds m activations.
//   1F1B (PipeDream-Flush, Narayanan et al. 2021): rank r runs min(p - r - 1, m) warm-up
//     forwards, then alternates one forward and one backward, then drains the backwards.
//   Interleaved 1F1B (Narayanan et al. SC'21 §2.2, Megatron-LM schedules.py): warm-up
//     (p - r - 1)·2 + (v - 1)·p forwards (capped at m·v), forwards and backwards of model chunks
//     taken in groups of p micro-batches; needs m to be a multiple of p.
// The schedule is only an order; when each step can start depends on data arriving from the
// neighbouring stages, which the iteration simulator decides.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/specs.h"

namespace clustersim::workloads {

struct PipelineStep {
  int chunk = 0;        // model chunk on this rank (virtual stage = chunk * p + rank)
  int micro_batch = 0;
  bool forward = true;
};

// The ordered steps of pipeline rank `rank`.
std::vector<PipelineStep> pipeline_order(Schedule schedule, int p, int v, int m, int rank);

}  // namespace clustersim::workloads
