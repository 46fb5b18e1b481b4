// Communication overlap as the training frameworks schedule it, and what stays exposed.
//
// Four mechanisms, each a [sync] switch (docs/scenario.md names the frameworks' defaults):
//   * gradient reduction behind the backward pass (Megatron --overlap-grad-reduce, PyTorch DDP):
//     a bucket is reduced as soon as its layers' gradients exist (gradient_buckets.h, iteration_sim);
//   * parameter all-gather behind the next forward (Megatron --overlap-param-gather with the
//     distributed optimizer): the gathers run back to back from the iteration start in forward
//     order, and each part of a chunk's first forward waits only for its own bucket, so the first
//     bucket stays exposed (NeMo: "exposes only one DP communication chunk");
//   * tensor-parallel collectives behind their GEMMs (Megatron --tp-comm-overlap, Transformer
//     Engine userbuffers; sequence parallelism only): each all-gather / reduce-scatter is split
//     into tp steps pipelined with the GEMM next to it; while a step is in flight its kernels hold
//     a share of the SMs (`tp_overlap_sm_share`) and stream its bytes through HBM
//     (`collective_hbm_bytes_per_byte`), so the GEMM runs slower (ComputeModel::op_time with a
//     Contention: tile waves over the SMs left, the HBM bandwidth left); in the forward each GEMM
//     runs as tp pieces of 1/tp of the gathered sequence, each with its own tile waves;
//   * ZeRO-3 / FSDP prefetch of the next layer's all-gather.
// Every data-parallel collective that runs beside compute (the first two, ZeRO-3's gathers and
// reduce-scatters, expert buckets alike) holds one SM per NCCL channel and streams its bytes
// through HBM, so the compute beside it runs at its contended rate (dp_contention below).
// Pure functions of times in seconds: no simulator, no network.
#pragma once

#include <vector>

#include "workloads/collectives/collective_types.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/gradient_buckets.h"

namespace clustersim::workloads {

// One collective overlapped with one GEMM: the pair's time split into its parts (seconds).
struct TpOverlap {
  double time_s = 0;     // GEMM (slowed) + exposed collective
  double exposed_s = 0;  // of the collective, not hidden
  double hidden_s = 0;   // of the collective, behind the GEMM
  double sm_cost_s = 0;  // extra GEMM time: the collective's kernels hold sm_share of the SMs
};

// A GEMM of `gemm_s` alone and a collective of `comm_s` alone, pipelined in `steps` pieces (tp:
// ring exchange for the all-gather, chunked reduce-scatter): the collective's steps run between
// the GEMM's `steps` chunks, each chunk slowed to (1 - sm_share) while a step is in flight, the
// last chunk alone. Never slower than gemm_s + comm_s for sm_share < 1.
TpOverlap overlap_tp_collective(double gemm_s, double comm_s, int steps, double sm_share);

// The general form: a GEMM of `gemm_s` alone (unsplit) run as `steps` chunks of `chunk_s` each
// alone and `contended_chunk_s` each with a collective step beside it for the whole chunk. While a
// step (comm_s / (steps - 1)) is in flight the chunk runs at its contended rate, then alone; a step
// ends at the later of the two. sm_cost_s is all the GEMM's extra time (contention and splitting).
TpOverlap overlap_tp_pipelined(double gemm_s, double chunk_s, double contended_chunk_s, double comm_s, int steps);

// One pass of one transformer layer with its tensor-parallel collectives overlapped. Forward:
// Megatron's sequence-parallel all-gathers feed the column-parallel GEMMs (QKV, MLP up/gate) and
// its reduce-scatters follow the row-parallel ones (attention output, MLP down). Backward (TE v2.9
// linear.py / layernorm_linear.py; Megatron-Core's defaults tp_comm_overlap_ag, tp_comm_bulk_dgrad,
// tp_comm_bulk_wgrad True, tp_comm_overlap_rs_dgrad False, core_v0.15.0 model_parallel_config.py
// l. 166-186): the output gradient's all-gather runs beside the row-parallel GEMMs' backward
// (ub_overlap_ag_dgrad), the input's re-gather (ub_bulk_dgrad) and the data gradient's
// reduce-scatter (ub_bulk_wgrad) beside the column-parallel GEMMs'. `ag_s`, `rs_s`: one collective alone;
// `step_bytes`: what one GPU sends in one of its tp - 1 steps (the HBM traffic beside the GEMM).
// Forward GEMMs run as tp pieces of m / tp rows (TE's ring exchange and pipelined reduce-scatter
// split along the sequence); backward GEMMs as tp equal shares (bulk overlaps). `sides`: Both, the
// attention and the MLP pairs of a transformer layer; Attention, the attention pair alone (an MoE
// layer, whose routed experts' exchange is the token dispatcher's, expert_parallel_cost.cpp; a
// hybrid model's attention layer); Mlp, the MLP-side pair alone (an MoE layer's shared experts:
// their gate / up and down GEMMs, "shared_expert_down", are the MoE layer's only MLP-side column /
// row-parallel linears; a hybrid model's MLP or Mamba layer, mamba_in_proj / mamba_out_proj).
struct TpPassOverlap {
  double exposed_s = 0, hidden_s = 0, sm_cost_s = 0;
};
enum class TpSides { Both, Attention, Mlp };
TpPassOverlap overlap_tp_layer(const ComputeModel& cm, const std::vector<OpCost>& layer, Pass pass, double ag_s,
                               double rs_s, int tp, double sm_share, double step_bytes = 0,
                               TpSides sides = TpSides::Both);
// The same with each side's gather of its own size (tp_gather_format.h: the bytes per element
// follow the GEMM the gather feeds): [attention, MLP] gather seconds and step bytes; the
// reduce-scatter's are the same on both sides. `regather_*`: the backward's re-gather of the
// column-parallel input (tp_gather_format.h), 0 in the forward.
struct TpPassComm {
  double gather_s[2] = {0, 0}, gather_step_bytes[2] = {0, 0};
  double regather_s[2] = {0, 0}, regather_step_bytes[2] = {0, 0};
  double scatter_s = 0, scatter_step_bytes = 0;
};
TpPassOverlap overlap_tp_layer(const ComputeModel& cm, const std::vector<OpCost>& layer, Pass pass,
                               const TpPassComm& comm, int tp, double sm_share, TpSides sides = TpSides::Both);

// Without tp_comm_overlap the backward's re-gather runs asynchronously beside its column-parallel
// linear's data-gradient GEMM (TE v2.9 layernorm_linear.py l. 669-672 async_op=True, waited before
// the wgrad GEMM, l. 805-807): the seconds of it the dgrad GEMM (half the linear's backward: dgrad
// and wgrad have the same FLOPs) does not cover, summed over `sides`; a side without such a linear
// takes the other side's.
double tp_regather_exposed_s(const ComputeModel& cm, const std::vector<OpCost>& layer, const TpPassComm& bwd,
                             TpSides sides);

// Without tp_comm_overlap the backward's reduce-scatter of a column-parallel linear's data
// gradient (`bwd.scatter_s`) is launched asynchronously after the dgrad GEMM and waited for after
// the wgrad GEMM: TE v2.4 - v2.9 layernorm_linear.py / linear.py (v2.9 layernorm_linear.py l.
// 742-750 `reduce_scatter_along_first_dim(dgrad, tp_group, async_op=True)`, l. 941-943
// `dgrad_work.wait()` after the wgrad GEMM; linear.py l. 739, 932-933), and Megatron-Core's own
// linears (core_v0.15.0 tensor_parallel/layers.py l. 546-548 `dist_reduce_scatter_func(...,
// async_op=True)` before the wgrad GEMM, `handle.wait()` l. 610). The seconds of it the wgrad GEMM
// (half the linear's backward; none for a frozen weight) does not cover, summed over `sides`.
double tp_dgrad_scatter_exposed_s(const ComputeModel& cm, const std::vector<OpCost>& layer, const TpPassComm& bwd,
                                  TpSides sides);
// The same rule for any collective of a column-parallel linear's data gradient that runs beside
// the wgrad GEMM: `comm_s` per side (the reduce-scatter above, or without sequence parallelism the
// all-reduce, Megatron-Core's allreduce_dgrad: core_v0.15.0 tensor_parallel/layers.py l. 534-536
// `torch.distributed.all_reduce(grad_input, async_op=True)` before the wgrad GEMM, `handle.wait()`
// l. 615-616 after it; TE v2.9 layernorm_linear.py l. 752 `allreduce(dgrad, tp_group, async_op=True)`).
double tp_dgrad_collective_exposed_s(const ComputeModel& cm, const std::vector<OpCost>& layer, double comm_s,
                                     TpSides sides);

// A ZeRO-3 pass over `layers` layers of `compute_s` each, with a per-layer parameter all-gather of
// `gather_s` (and, in backward, a gradient reduce-scatter of `scatter_s`; 0 in forward). With
// prefetch the next layer's gather (and the previous layer's reduce-scatter) run during a layer's
// compute and only the first gather and the last reduce-scatter are exposed; without it every
// gather waits for the layer before, and the reduce-scatter shares the links with the next gather.
// `contended_s` (>= compute_s): a layer's compute with the collectives in flight for all of it
// (dp_contended_ratio); while they run the layer runs at that rate, then alone, as
// overlap_tp_pipelined's chunk beside a step. Exposed collectives (the first gather, the last
// reduce-scatter, every one without prefetch) have no compute beside them and cost nothing more.
double fsdp_pass_s(int layers, double compute_s, double gather_s, double scatter_s, bool prefetch,
                   double contended_s);
inline double fsdp_pass_s(int layers, double compute_s, double gather_s, double scatter_s, bool prefetch) {
  return fsdp_pass_s(layers, compute_s, gather_s, scatter_s, prefetch, compute_s);
}

// A data-parallel collective running beside compute. NCCL launches one thread block (CTA) per
// channel, each resident on its own SM for the collective's whole length (NCCL src/enqueue.cc
// ncclLaunchKernel: `dim3 grid = {nChannels, 1, 1}`, 5067397c l. 1756-1758), and every byte a
// ring step sends is read from HBM and every byte it receives written there (a reduction step also
// reads the local partial it adds): `collective_hbm_bytes_per_byte` per byte sent, one more for
// the reduce-scatter half. So the compute beside it runs on the SMs left and at the HBM bandwidth
// left (ComputeModel::op_time with a Contention), one rule for every such collective.
// DpCollectiveLoad accumulates collectives that run one after another on one stream.
struct DpCollectiveLoad {
  double sm_seconds = 0;  // SM share x seconds, summed
  double hbm_bytes = 0;   // HBM bytes read and written, summed
  double seconds = 0;     // their durations, summed
  DpCollectiveLoad& operator+=(const DpCollectiveLoad& o) {
    sm_seconds += o.sm_seconds;
    hbm_bytes += o.hbm_bytes;
    seconds += o.seconds;
    return *this;
  }
};
// One collective `op` of a `buffer_bytes` buffer over `ranks` ranks (ring data movement: (n-1)/n
// of the buffer sent per phase), with `nccl_channels` CTAs, lasting `seconds`. The SM share is the
// channels over the GPU's SMs (MIG: the slice's), leaving at least one SM to the compute.
DpCollectiveLoad dp_collective_load(const ComputeModel& cm, CollectiveOp op, double buffer_bytes, int ranks,
                                    int nccl_channels, double seconds);
// What the compute beside collectives of `load` sees: the time-weighted SM share, the HBM rate.
Contention dp_contention(const DpCollectiveLoad& load);
// The ops' time with `beside` in flight all along over their time alone (>= 1; 1 for no ops).
double dp_contended_ratio(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass, const Contention& beside);

// The sharded optimizer's parameter all-gathers of one pipeline rank run back to back on its
// communication stream from the iteration start, in forward order (chunk 0 first, each chunk from
// its first layer). One bucket: its bytes and how long its all-gather takes.
struct GatherBucket {
  double bytes = 0, seconds = 0;
  GradGroup group = GradGroup::Dense;  // the group it is gathered over
};
struct ParamGatherSchedule {
  std::vector<std::vector<GatherBucket>> buckets;  // [chunk][bucket], forward order: the input
  std::vector<std::vector<double>> ends;       // [chunk][bucket]: seconds after the start it is gathered
  std::vector<std::vector<double>> fractions;  // [chunk][bucket]: share of the chunk's forward done when its layers end
  double total_s = 0;                          // every gather
};
ParamGatherSchedule schedule_param_gathers(const std::vector<std::vector<GatherBucket>>& chunks);

// When a forward pass of `work_s` that starts at `start_s` ends, if the part of it up to
// `fractions[i]` cannot start before `ends[i]` (same clock as start_s).
double gated_pass_end(double start_s, double work_s, const std::vector<double>& fractions,
                      const std::vector<double>& ends);

}  // namespace clustersim::workloads
