// Overlap rules (see overlap.h for the mechanisms and their sources).
#include "workloads/training/overlap.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

// Megatron's column-parallel linears take the all-gathered sequence-parallel input; the
// row-parallel ones feed the reduce-scatter (Korthikanti et al. 2022, Fig. 5; the ops of
// transformer_ops.cpp). Megatron fuses SwiGLU's gate and up projections into one GEMM. An MoE
// layer's shared experts are such an MLP (SharedExpertMLP: TEColumnParallelLinear fc1,
// TERowParallelLinear fc2), their down projection named "shared_expert_down". A Mamba mixer's
// in_proj (TE LayerNormColumnParallelLinear) and out_proj (TERowParallelLinear) are built with
// the MLP's userbuffers (Megatron-Core core_r0.13.0 - core_v0.15.0 ssm/mamba_mixer.py l. 256
// tp_comm_buffer_name="fc1", l. 359 "fc2"; core_r0.12.0 l. 187, 276), so they sit on the MLP side
// here as in tp_gather_format.cpp.
bool is_column_parallel(std::string_view name) {
  return name == "qkv_proj" || name == "mlp_fc1" || name == "mlp_gate" || name == "mlp_up" || name == "mamba_in_proj";
}
bool is_row_parallel(std::string_view name) {
  return name == "attention_out_proj" || name == "mlp_fc2" || name == "mlp_down" || name == "shared_expert_down" ||
         name == "mamba_out_proj";
}
bool is_attention_side(std::string_view name) { return name == "qkv_proj" || name == "attention_out_proj"; }

}  // namespace

TpOverlap overlap_tp_pipelined(double gemm_s, double chunk_s, double contended_chunk_s, double comm_s, int steps) {
  CLUSTERSIM_CHECK(contended_chunk_s >= chunk_s, "a chunk is not faster with a collective beside it");
  TpOverlap o;
  if (steps < 2 || comm_s <= 0) {
    o.time_s = gemm_s + comm_s;
    o.exposed_s = comm_s;
    return o;
  }
  const double step = comm_s / (steps - 1);  // one collective step alone
  // While a step is in flight the chunk runs at its contended rate; if the step ends first, the
  // rest of the chunk runs alone. A step never ends before its own time alone.
  const double slowed_chunk =
      step >= contended_chunk_s ? contended_chunk_s : step + chunk_s * (1 - step / contended_chunk_s);
  const double step_s = std::max(slowed_chunk, step);
  o.time_s = (steps - 1) * step_s + chunk_s;
  o.exposed_s = (steps - 1) * (step_s - slowed_chunk);
  o.hidden_s = comm_s - o.exposed_s;
  o.sm_cost_s = o.time_s - gemm_s - o.exposed_s;
  return o;
}

TpOverlap overlap_tp_collective(double gemm_s, double comm_s, int steps, double sm_share) {
  CLUSTERSIM_CHECK(sm_share >= 0 && sm_share < 1, "the SM share of the overlapped collective is in [0, 1)");
  const double chunk = gemm_s / std::max(steps, 1);
  return overlap_tp_pipelined(gemm_s, chunk, chunk / (1 - sm_share), comm_s, steps);
}

namespace {

// One of a GEMM's tp pieces along the token dimension m (the gathered sequence): 1/tp of its
// FLOPs and of its activation bytes, all of its weight bytes.
OpCost gemm_chunk(const OpCost& op, int tp) {
  OpCost c = op;
  if (op.m <= 0 || tp <= 1) return c;
  const double m = op.m, n = op.n, k = op.k, cm = std::ceil(m / tp);
  const double whole = m * k + k * n + m * n, part = cm * k + k * n + cm * n;
  c.m = static_cast<int>(cm);
  c.fwd_flops = op.fwd_flops * (cm / m);
  c.bwd_flops = op.bwd_flops * (cm / m);
  c.fwd_bytes = op.fwd_bytes * (part / whole);
  c.bwd_bytes = op.bwd_bytes * (part / whole);
  return c;
}

// The GEMMs next to one collective: alone whole, one chunk alone, one chunk beside a step.
struct GemmPieces {
  double whole_s = 0, chunk_s = 0, contended_s = 0;
};

}  // namespace

TpPassOverlap overlap_tp_layer(const ComputeModel& cm, const std::vector<OpCost>& layer, Pass pass, double ag_s,
                               double rs_s, int tp, double sm_share, double step_bytes, TpSides sides) {
  TpPassComm comm;
  comm.gather_s[0] = comm.gather_s[1] = ag_s;
  comm.gather_step_bytes[0] = comm.gather_step_bytes[1] = step_bytes;
  comm.scatter_s = rs_s;
  comm.scatter_step_bytes = step_bytes;
  return overlap_tp_layer(cm, layer, pass, comm, tp, sm_share, sides);
}

TpPassOverlap overlap_tp_layer(const ComputeModel& cm, const std::vector<OpCost>& layer, Pass pass,
                               const TpPassComm& comm, int tp, double sm_share, TpSides sides) {
  // [attention, MLP] x [gather, scatter]. A step moves its step bytes each way; the gather's HBM
  // traffic is collective_hbm_bytes_per_byte per byte, the reduce-scatter's one more (it reads the
  // local partial it adds).
  const double per_byte = cm.constants().get("collective_hbm_bytes_per_byte");
  const double steps = std::max(tp - 1, 1);
  Contention beside[2][2];
  double comm_s[2][2];
  // [kind]: the HBM bytes per step beside the column- (0) and the row-parallel (1) GEMMs.
  for (int side = 0; side < 2; ++side) {
    double hbm[2];
    if (pass == Pass::Forward) {
      comm_s[side][0] = comm.gather_s[side];
      comm_s[side][1] = comm.scatter_s;
      hbm[0] = comm.gather_step_bytes[side] * per_byte;
      hbm[1] = comm.scatter_step_bytes * (per_byte + 1);
    } else {
      comm_s[side][0] = comm.regather_s[side] + comm.scatter_s;
      comm_s[side][1] = comm.gather_s[side];
      hbm[0] = comm.regather_step_bytes[side] * per_byte + comm.scatter_step_bytes * (per_byte + 1);
      hbm[1] = comm.gather_step_bytes[side] * per_byte;
    }
    for (int kind = 0; kind < 2; ++kind) {
      beside[side][kind].sm_share = sm_share;
      const double step_s = comm_s[side][kind] / steps;
      if (step_s > 0) beside[side][kind].hbm_bytes_per_s = hbm[kind] / step_s;
    }
  }
  GemmPieces pieces[2][2];
  for (const OpCost& op : layer) {
    const int side = is_attention_side(op.name) ? 0 : 1;
    const int kind = is_column_parallel(op.name) ? 0 : is_row_parallel(op.name) ? 1 : -1;
    if (kind < 0) continue;
    GemmPieces& p = pieces[side][kind];
    const double whole = cm.op_time(op, pass).seconds();
    p.whole_s += whole;
    // Forward: TE splits the GEMM along the gathered sequence (ring exchange, pipelined
    // reduce-scatter), so each piece has its own tile waves. Backward: bulk overlaps and the
    // data-gradient ring exchange; taken as tp equal shares of the whole GEMM.
    if (pass == Pass::Forward) {
      const OpCost chunk = gemm_chunk(op, tp);
      p.chunk_s += cm.op_time(chunk, pass).seconds();
      p.contended_s += cm.op_time(chunk, pass, beside[side][kind]).seconds();
    } else {
      p.chunk_s += whole / tp;
      p.contended_s += cm.op_time(op, pass, beside[side][kind]).seconds() / tp;
    }
  }
  TpPassOverlap out;
  const int first_side = sides == TpSides::Mlp ? 1 : 0;
  const int end_side = sides == TpSides::Attention ? 1 : 2;
  for (int side = first_side; side < end_side; ++side) {
    for (int kind = 0; kind < 2; ++kind) {
      const GemmPieces& p = pieces[side][kind];
      const TpOverlap o =
          overlap_tp_pipelined(p.whole_s, p.chunk_s, std::max(p.contended_s, p.chunk_s), comm_s[side][kind], tp);
      out.exposed_s += o.exposed_s;
      out.hidden_s += o.hidden_s;
      out.sm_cost_s += o.sm_cost_s;
    }
  }
  return out;
}

namespace {

// The backward GEMMs of each side's column-parallel linears: [attention, MLP] data-gradient and
// weight-gradient seconds (dgrad and wgrad have the same FLOPs; a frozen weight runs its dgrad
// alone). A side without such a linear (none left since each hybrid layer kind runs its own sides,
// stage_cost_parts.h tp_sides_of) takes the other side's, as its gathers do (tp_gather_format.h).
struct ColumnBackward {
  double dgrad_s[2] = {0, 0}, wgrad_s[2] = {0, 0};
};
ColumnBackward column_backward(const ComputeModel& cm, const std::vector<OpCost>& layer) {
  ColumnBackward c;
  bool has[2] = {false, false};
  for (const OpCost& op : layer) {
    if (!is_column_parallel(op.name)) continue;
    const int side = is_attention_side(op.name) ? 0 : 1;
    const double whole = cm.op_time(op, Pass::Backward).seconds();
    has[side] = true;
    c.dgrad_s[side] += op.frozen ? whole : whole / 2;
    c.wgrad_s[side] += op.frozen ? 0.0 : whole / 2;
  }
  for (int side = 0; side < 2; ++side) {
    if (has[side] || !has[1 - side]) continue;
    c.dgrad_s[side] = c.dgrad_s[1 - side];
    c.wgrad_s[side] = c.wgrad_s[1 - side];
  }
  return c;
}

// What of each side's collective `comm_s` its GEMMs `cover_s` do not hide, summed over `sides`.
double exposed_over_sides(TpSides sides, const double (&comm_s)[2], const double (&cover_s)[2]) {
  double exposed = 0;
  for (int side = sides == TpSides::Mlp ? 1 : 0; side < (sides == TpSides::Attention ? 1 : 2); ++side)
    exposed += std::max(comm_s[side] - cover_s[side], 0.0);
  return exposed;
}

}  // namespace

double tp_regather_exposed_s(const ComputeModel& cm, const std::vector<OpCost>& layer, const TpPassComm& bwd,
                             TpSides sides) {
  const ColumnBackward c = column_backward(cm, layer);
  return exposed_over_sides(sides, bwd.regather_s, c.dgrad_s);
}

double tp_dgrad_scatter_exposed_s(const ComputeModel& cm, const std::vector<OpCost>& layer, const TpPassComm& bwd,
                                  TpSides sides) {
  return tp_dgrad_collective_exposed_s(cm, layer, bwd.scatter_s, sides);
}

double tp_dgrad_collective_exposed_s(const ComputeModel& cm, const std::vector<OpCost>& layer, double comm_s,
                                     TpSides sides) {
  const ColumnBackward c = column_backward(cm, layer);
  const double per_side[2] = {comm_s, comm_s};  // the same on both sides
  return exposed_over_sides(sides, per_side, c.wgrad_s);
}

double fsdp_pass_s(int layers, double compute_s, double gather_s, double scatter_s, bool prefetch,
                   double contended_s) {
  CLUSTERSIM_CHECK(contended_s >= compute_s, "a layer is not faster with a collective beside it");
  if (layers <= 0) return 0;
  if (!prefetch) return layers * (gather_s + compute_s + scatter_s);
  // The next gather and the last reduce-scatter run from the layer's start: while they are in
  // flight the layer runs at its contended rate, then alone.
  const double comm = gather_s + scatter_s;
  const double beside =
      comm <= 0 ? compute_s : comm >= contended_s ? contended_s : comm + compute_s * (1 - comm / contended_s);
  return gather_s + layers * std::max(beside, comm) + scatter_s;
}

DpCollectiveLoad dp_collective_load(const ComputeModel& cm, CollectiveOp op, double buffer_bytes, int ranks,
                                    int nccl_channels, double seconds) {
  DpCollectiveLoad l;
  if (seconds <= 0 || ranks <= 1) return l;
  const double sms = std::max(1.0, cm.gpu().sms * cm.sm_fraction());
  const double share = std::min(static_cast<double>(std::max(nccl_channels, 0)), sms - 1) / sms;
  const double per_byte = cm.constants().get("collective_hbm_bytes_per_byte");
  const double phase = buffer_bytes * (ranks - 1.0) / ranks;  // one ring phase's bytes sent
  double hbm = 0;
  if (op == CollectiveOp::AllGather) hbm = phase * per_byte;
  else if (op == CollectiveOp::ReduceScatter) hbm = phase * (per_byte + 1);
  else if (op == CollectiveOp::AllReduce) hbm = phase * (per_byte + 1) + phase * per_byte;
  l.sm_seconds = share * seconds;
  l.hbm_bytes = hbm;
  l.seconds = seconds;
  return l;
}

Contention dp_contention(const DpCollectiveLoad& load) {
  Contention c;
  if (load.seconds <= 0) return c;
  c.sm_share = load.sm_seconds / load.seconds;
  c.hbm_bytes_per_s = load.hbm_bytes / load.seconds;
  return c;
}

double dp_contended_ratio(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass, const Contention& beside) {
  double alone = 0, contended = 0;
  for (const OpCost& op : ops) {
    alone += cm.op_time(op, pass).seconds();
    contended += cm.op_time(op, pass, beside).seconds();
  }
  return alone > 0 ? std::max(1.0, contended / alone) : 1.0;
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
