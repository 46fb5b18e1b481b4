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
//   Combined 1F1B (MoE expert-parallel a2a overlap): either 1F1B order with one more warm-up
//     forward, its steady-phase backwards run together with the forwards before them.
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
  // Combined 1F1B (moe_a2a_overlap): this backward runs together with the forward before it in the
  // order (ep_overlap.h), a different micro-batch's.
  bool paired = false;
};

// The ordered steps of pipeline rank `rank`. With `combined_1f1b` (Megatron-Core's
// --overlap-moe-expert-parallel-comm: pipeline_parallel/schedules.py "we schedule one extra
// micro-batch forward step before the 1f1b stages ... to ensure the forward and backward
// computations are independent in all 1f1b steps"; combined_1f1b_schedule_for_no_pipelining for
// p = 1) the 1F1B orders run one more warm-up forward, and every backward of the steady phase is
// marked `paired` with the forward just before it. GPipe has no steady phase.
std::vector<PipelineStep> pipeline_order(Schedule schedule, int p, int v, int m, int rank, bool combined_1f1b = false);

}  // namespace clustersim::workloads
