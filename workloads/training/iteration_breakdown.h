// Where one iteration's time went on a pipeline rank (IterationBreakdown, seconds) from the
// times its state machine kept (RankTimes), and the sums over iterations. Split from
// iteration_sim.cpp, which uses it once per iteration.
#pragma once

#include "workloads/training/iteration_sim.h"
#include "workloads/training/pipeline_rank.h"

namespace clustersim::workloads {

// The breakdown of a rank that took `iteration_s` from `iteration_start`: compute, exposed
// communication, bubble (the compute span's idle time), optimizer, other.
IterationBreakdown breakdown_of(const RankTimes& st, double iteration_start, double iteration_s);

// sum += scale x b, field by field.
void accumulate(IterationBreakdown& sum, const IterationBreakdown& b, double scale = 1.0);

// Waits between passes are not bubble: `data_wait_s` for input batches ([data]) becomes the data
// stall, `comm_wait_s` for a collective the compute stream had to wait for (CUDA_LAUNCH_BLOCKING)
// exposed data-parallel communication.
void move_waits_out_of_bubble(IterationBreakdown& b, double data_wait_s, double comm_wait_s);

}  // namespace clustersim::workloads
