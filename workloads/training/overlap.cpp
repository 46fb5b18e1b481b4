// Overlap rules (see overlap.h for the mechanisms and their sources).
#include "workloads/training/overlap.h"

#include <algorithm>
#include <string_view>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

// Megatron's column-parallel linears take the all-gathered sequence-parallel input; the
// row-parallel ones feed the reduce-scatter (Korthikanti et al. 2022, Fig. 5; the ops of
// transformer_ops.cpp). Megatron fuses SwiGLU's gate and up projections into one GEMM.
bool is_column_parallel(std::string_view name) {
  return name == "qkv_proj" || name == "mlp_fc1" || name == "mlp_gate" || name == "mlp_up";
}
bool is_row_parallel(std::string_view name) { return name == "attention_out_proj" || name == "mlp_fc2" || name == "mlp_down"; }
bool is_attention_side(std::string_view name) { return name == "qkv_proj" || name == "attention_out_proj"; }

}  // namespace

TpOverlap overlap_tp_collective(double gemm_s, double comm_s, int steps, double sm_share) {
  CLUSTERSIM_CHECK(sm_share >= 0 && sm_share < 1, "the SM share of the overlapped collective is in [0, 1)");
  TpOverlap o;
  if (steps < 2 || comm_s <= 0) {
    o.time_s = gemm_s + comm_s;
    o.exposed_s = comm_s;
    return o;
  }
  const double chunk = gemm_s / steps;       // one GEMM chunk alone
  const double step = comm_s / (steps - 1);  // one collective step alone
  // While a step is in flight the chunk runs at (1 - share); it is done by max(chunk + share x
  // the contended time, step). The contended time is the step, or the whole chunk if it ends first.
  const double contended = std::min(step, chunk / (1 - sm_share));
  const double slowed_chunk = chunk + sm_share * contended;
  const double step_s = std::max(slowed_chunk, step);
  o.time_s = (steps - 1) * step_s + chunk;
  o.sm_cost_s = (steps - 1) * sm_share * contended;
  o.exposed_s = (steps - 1) * (step_s - slowed_chunk);
  o.hidden_s = comm_s - o.exposed_s;
  return o;
}

TpPassOverlap overlap_tp_layer(const ComputeModel& cm, const std::vector<OpCost>& layer, Pass pass, double ag_s,
                               double rs_s, int tp, double sm_share) {
  // GEMM time next to each of the layer's four collectives: [attention, MLP] x [gather, scatter].
  double column[2] = {0, 0}, row[2] = {0, 0};
  for (const OpCost& op : layer) {
    const int side = is_attention_side(op.name) ? 0 : 1;
    if (is_column_parallel(op.name)) column[side] += cm.op_time(op, pass).seconds();
    if (is_row_parallel(op.name)) row[side] += cm.op_time(op, pass).seconds();
  }
  TpPassOverlap out;
  const auto add = [&](const TpOverlap& o) {
    out.exposed_s += o.exposed_s;
    out.hidden_s += o.hidden_s;
    out.sm_cost_s += o.sm_cost_s;
  };
  for (int side = 0; side < 2; ++side) {
    add(overlap_tp_collective(column[side], ag_s, tp, sm_share));
    add(overlap_tp_collective(row[side], rs_s, tp, sm_share));
  }
  return out;
}

double fsdp_pass_s(int layers, double compute_s, double gather_s, double scatter_s, bool prefetch) {
  if (layers <= 0) return 0;
  if (!prefetch) return layers * (gather_s + compute_s + scatter_s);
  return gather_s + layers * std::max(compute_s, gather_s + scatter_s) + scatter_s;
}

ParamGatherSchedule schedule_param_gathers(const std::vector<std::vector<GatherBucket>>& chunks) {
  ParamGatherSchedule s;
  s.buckets = chunks;
  double t = 0;
  for (const auto& buckets : chunks) {
    double total = 0;
    for (const GatherBucket& b : buckets) total += b.bytes;
    std::vector<double> ends, fractions;
    double done = 0;
    for (const GatherBucket& b : buckets) {
      t += b.seconds;
      done += b.bytes;
      ends.push_back(t);
      fractions.push_back(total > 0 ? done / total : 1.0);
    }
    s.ends.push_back(std::move(ends));
    s.fractions.push_back(std::move(fractions));
  }
  s.total_s = t;
  return s;
}

double gated_pass_end(double start_s, double work_s, const std::vector<double>& fractions,
                      const std::vector<double>& ends) {
  CLUSTERSIM_CHECK(fractions.size() == ends.size(), "one gather end per bucket");
  double t = start_s, done = 0;
  for (std::size_t i = 0; i < fractions.size(); ++i) {
    t = std::max(t, ends[i]) + work_s * (fractions[i] - done);
    done = fractions[i];
  }
  return t + work_s * std::max(0.0, 1.0 - done);
}

}  // namespace clustersim::workloads
