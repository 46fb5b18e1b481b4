// Stage costs: how long each pipeline pass takes before anything runs.
//
// A pass (all layers of one model chunk, one micro-batch, forward or backward) is one task on its
// rank's compute stream. A chunk holds its rank's share of ParallelSpec::layers_on_stage, so with
// uneven stages (first/last stage layer counts) the ranks' passes differ. Its compute comes from
// the roofline compute model over the chunk's layer operations (plus the embedding on the first
// chunk and the output head and loss on the last), with the recompute policy's extra forward work
// added to the backward. Its blocking communication is the
// layers' tensor-parallel collectives (Megatron's f/g operators), memoised: inside an NVSwitch node
// they touch no link that pipeline or data-parallel traffic uses. Under ZeRO-3 each layer also
// gathers its parameters and reduce-scatters its gradients with one layer of prefetch, so a pass
// takes the longer of the two per layer ([sync] fsdp_prefetch; without it they run in turn). With
// context parallelism every op sees s/cp tokens and each layer exchanges K/V over the CP group
// (context_parallel.h); its exposed part blocks like the tensor-parallel collectives. With
// [sync] tp_comm_overlap the tensor-parallel collectives run behind their GEMMs and only the
// remainder blocks (overlap.h). An MoE layer adds its expert-parallel all-to-alls (dispatch and
// combine, forward and backward; Megatron-Core's alltoall token dispatcher) over the layer's ep
// group, all ep groups of the stage at once, as blocking communication. All times in seconds,
// sizes in bytes.
#pragma once

#include <vector>

#include "topology/catalog.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/compute/compute_model.h"
#include "workloads/specs.h"
#include "workloads/training/parallel_layout.h"

namespace clustersim::workloads {

// Bytes per gradient element in the data-parallel reduction: Megatron-LM accumulates and reduces
// gradients in fp32 for bf16 training (--accumulate-allreduce-grads-in-fp32 is implied by --bf16),
// in the parameter dtype for fp16 (the SC'21 runs); fp32 training reduces fp32.
int grad_reduce_bytes(topology::Precision p);
// What the bucketed reduction carries for this run: with mixed precision and 16-bit gradients
// (training.grad_dtype "bf16"/"fp16": Megatron-Core / Megatron-Bridge `ddp.grad_reduce_in_fp32 =
// False`, apex `grad_sync_dtype`) the gradient buffer, and so its reduce-scatter or all-reduce, is
// 16-bit (Megatron-Core DistributedDataParallel: grad_dtype = torch.float if grad_reduce_in_fp32
// else param.dtype, core_v0.15.0 distributed_data_parallel.py l. 168; the bucket reduces its
// grad_data in place, param_and_grad_buffer.py); otherwise grad_reduce_bytes.
double bucket_grad_bytes(const TrainingSpec& training);

// Per model chunk (virtual stage): how long its passes take and what it holds.
struct ChunkCost {
  double fwd_compute = 0, bwd_compute = 0;  // seconds, incl. recompute in bwd
  double fwd_comm = 0, bwd_comm = 0;        // blocking tp (and ZeRO-3 exposed) communication
  // Observation only (timelines): seconds of the compute with device memory busy, the blocking
  // tensor-parallel part of the comm and the bytes one GPU sends in it.
  double fwd_memory = 0, bwd_memory = 0;
  // Observation only (dmon's TENSO): seconds of tensor-pipe activity in the passes, the matmuls'
  // FLOPs at the sustained tensor peak (what a perfectly fed tensor core needs), each capped by its op.
  double fwd_tensor = 0, bwd_tensor = 0;
  double fwd_tp = 0, bwd_tp = 0, fwd_tp_bytes = 0, bwd_tp_bytes = 0;
  // tp_comm_overlap: tensor-parallel seconds hidden behind GEMMs, and the GEMMs' extra time (in
  // the compute above) from the SMs the overlapped collectives hold.
  double fwd_tp_hidden = 0, bwd_tp_hidden = 0, fwd_sm_cost = 0, bwd_sm_cost = 0;
  // ZeRO-3: seconds its per-layer gathers and reduce-scatters run in a pass, hidden or not; the
  // exposed part is the comm above less the tensor-parallel part.
  double fwd_dp = 0, bwd_dp = 0;
  // ZeRO-3 with prefetch: the compute's extra seconds beside those collectives (part of the compute
  // and of the sm_cost above; overlap.h fsdp_pass_s).
  double fwd_dp_sm_cost = 0, bwd_dp_sm_cost = 0;
  // Context parallelism (context_parallel.h): K/V exchange seconds exposed (part of the comm
  // above) and hidden behind attention, and the bytes one GPU sends in it.
  double fwd_cp = 0, bwd_cp = 0, fwd_cp_hidden = 0, bwd_cp_hidden = 0, fwd_cp_bytes = 0, bwd_cp_bytes = 0;
  // Mixture of experts: seconds of the expert-parallel all-to-all (dispatch and combine) in the
  // pass, part of the blocking comm above, and the bytes one GPU sends in it.
  double fwd_ep = 0, bwd_ep = 0, fwd_ep_bytes = 0, bwd_ep_bytes = 0;
  // moe_a2a_overlap (ep_overlap.h): the chunk's MoE decoder layers, and the seconds one forward
  // and one backward MoE layer of this stage save when the combined 1F1B schedule runs them
  // together (0 without the overlap).
  int moe_layers = 0;
  double ep_pair_saving = 0;
  // Fine-grained activation offloading (offload_modules, memory/activation_offload.h): the chunk's
  // offload groups per micro-batch, one group's copy seconds each way, and the seconds of those
  // copies exposed in the pass (part of the compute above).
  int offload_groups = 0;
  double offload_copy_s = 0, offload_fwd_exposed = 0, offload_bwd_exposed = 0;
  double params = 0;                        // parameters per tensor-parallel rank
  double expert_params = 0;                 // of which routed experts (reduced over dp / ep)
  // [sync] fp8_param_gather: of `params`, the weights of the linears that run at the training
  // precision (layers outside the bf16 rules; the router counts out), and of those the routed experts'.
  double fp8_params = 0, fp8_expert_params = 0;
  // FP8 delayed scaling ([sync] fp8_amax_reduction): the blocking amax all-reduce at the end of
  // each pass of the chunk (one per fp8_autocast exit and one per backward), part of the comm above.
  double fwd_amax = 0, bwd_amax = 0;
  int layers = 0;
};

// What planning the stage costs needs. `memo` runs (or recalls) the collectives it costs.
struct StageCostInputs {
  const ModelSpec& model;
  const ParallelSpec& parallel;
  const TrainingSpec& training;
  const ComputeModel& compute;
  const ParallelLayout& layout;
  CollectiveMemo& memo;
  CollectiveAlgo dp_algo;     // the data-parallel collectives' algorithm (ZeRO-3's per-layer ones)
  int chunks_per_rank = 1;    // v: model chunks per pipeline rank
  int micro_batches = 1;      // m: per replica and iteration
  bool tp_comm_overlap = false;  // [sync] tp_comm_overlap (with sequence parallelism)
  bool fsdp_prefetch = true;     // [sync] fsdp_prefetch (ZeRO-3)
  Zero3Impl zero3_impl = Zero3Impl::Coalesced;  // [sync] zero3_impl (ZeRO-3)
  // [sync] fp8_amax_reduction: over which ranks fp8 delayed scaling all-reduces its amaxes per
  // pass. None here (callers that build inputs by hand charge nothing); iteration planning passes
  // the scenario's (default Stage).
  Fp8AmaxReduction fp8_amax = Fp8AmaxReduction::None;
  // [sync] tp_async_dgrad_allreduce (tensor parallelism without sequence parallelism): the
  // column-parallel input gradient's all-reduce runs beside the wgrad GEMM. false here, as above.
  bool tp_async_dgrad_allreduce = false;
};

struct StageCosts {
  std::vector<ChunkCost> chunks;  // [virtual stage = chunk * pp + rank]
  double pp_send_bytes = 0;       // one activation (or its gradient) one GPU sends to a pipeline neighbour
  double tp_bytes_per_gpu = 0;    // tensor-parallel bytes one GPU sends per iteration
  double pp_bytes_per_gpu = 0;    // pipeline bytes one GPU sends per iteration
  double cp_bytes_per_gpu = 0;    // context-parallel K/V bytes one GPU sends per iteration
  double ep_bytes_per_gpu = 0;    // expert-parallel all-to-all bytes one GPU sends per iteration
};

// The router's load imbalance the busiest expert-parallel GPU sees: the moe_load_imbalance
// constant, capped by the capacity factor when tokens past capacity are dropped.
double moe_load_factor(const ModelSpec& model, const ComputeModel& compute);

StageCosts plan_stage_costs(const StageCostInputs& in);

}  // namespace clustersim::workloads
