// Where an iteration's time went (see iteration_breakdown.h).
#include "workloads/training/iteration_breakdown.h"

#include <algorithm>

namespace clustersim::workloads {
namespace {

// Event times round up to the picosecond one by one; a difference of sums below this is rounding.
constexpr double kRoundingS = 1e-9;

}  // namespace

// Where one iteration's time went on a rank that took `iteration_s` from `iteration_start`.
IterationBreakdown breakdown_of(const RankTimes& st, double iteration_start, double iteration_s) {
  IterationBreakdown b;
  b.compute = st.busy;
  b.tp_comm = st.tp;
  b.cp_exposed = st.cp;
  const double compute_span = st.last_compute_end - iteration_start;
  b.pipeline_bubble = std::max(0.0, compute_span - st.busy - st.tp - st.cp - st.dp_in_steps);
  const double opt = st.optimizer;
  b.optimizer = opt;
  b.dp_exposed = st.dp_in_steps + std::max(0.0, (st.optimizer_start - st.last_compute_end)) +
                 std::max(0.0, st.done - st.optimizer_start - opt);
  if (b.dp_exposed < 1e-12) b.dp_exposed = 0;  // under the 1 ps tick: rounding of the sums, as `other`
  b.exposed_comm = b.tp_comm + b.cp_exposed + b.dp_exposed;
  b.other = std::max(0.0, iteration_s - b.compute - b.exposed_comm - b.pipeline_bubble - b.optimizer);
  // A remainder under the simulator's 1 ps tick is the rounding of the sums above, not time.
  if (b.other < 1e-12) b.other = 0;
  b.tp_overlapped = st.tp_hidden;
  b.dp_overlapped = std::max(0.0, st.dp_comm - b.dp_exposed);
  b.cp_overlapped = st.cp_hidden;
  b.overlap_sm_cost = st.sm_cost;
  b.dp_sm_cost = st.dp_sm_cost;
  return b;
}

// sum += scale x b, field by field.
void accumulate(IterationBreakdown& sum, const IterationBreakdown& b, double scale) {
  sum.compute += scale * b.compute;
  sum.tp_comm += scale * b.tp_comm;
  sum.ep_comm += scale * b.ep_comm;
  sum.dp_exposed += scale * b.dp_exposed;
  sum.cp_exposed += scale * b.cp_exposed;
  sum.cp_overlapped += scale * b.cp_overlapped;
  sum.exposed_comm += scale * b.exposed_comm;
  sum.pipeline_bubble += scale * b.pipeline_bubble;
  sum.optimizer += scale * b.optimizer;
  sum.other += scale * b.other;
  sum.tp_overlapped += scale * b.tp_overlapped;
  sum.dp_overlapped += scale * b.dp_overlapped;
  sum.overlap_sm_cost += scale * b.overlap_sm_cost;
  sum.dp_sm_cost += scale * b.dp_sm_cost;
  sum.data_stall += scale * b.data_stall;
}


void move_waits_out_of_bubble(IterationBreakdown& b, double data_wait_s, double comm_wait_s) {
  b.data_stall = data_wait_s;
  const double bubble = b.pipeline_bubble - data_wait_s - comm_wait_s;
  b.pipeline_bubble = bubble < kRoundingS ? 0.0 : bubble;
  b.dp_exposed += comm_wait_s;
  b.exposed_comm += comm_wait_s;
  b.dp_overlapped = std::max(0.0, b.dp_overlapped - comm_wait_s);
}

}  // namespace clustersim::workloads
