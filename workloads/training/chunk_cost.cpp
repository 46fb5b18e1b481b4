// Model chunks from per-layer costs (see stage_cost_parts.h): a chunk of identical layers (with
// ZeRO-3's gathers run behind or between its layers), the sum of two chunks' costs, the extra ops
// of the first and last chunks, and the stalls of activation offloading's host copies.
#include "workloads/training/stage_cost_parts.h"

#include <algorithm>

#include "workloads/memory/activation_offload.h"
#include "workloads/memory/memory_model.h"
#include "workloads/training/overlap.h"

namespace clustersim::workloads {

ChunkCost layers_cost(int layers, const LayerCompute& lc, const LayerTensorParallel& tp, const LayerContextParallel& cp,
                      const LayerZero3& z3, double layer_params, bool fsdp_prefetch) {
  ChunkCost c;
  c.layers = layers;
  c.fwd_compute = layers * (lc.fwd + tp.fwd_sm);
  c.bwd_compute = layers * (lc.bwd + tp.bwd_sm);
  c.fwd_tp_hidden = layers * tp.fwd_hidden;
  c.bwd_tp_hidden = layers * tp.bwd_hidden;
  c.fwd_sm_cost = layers * tp.fwd_sm;
  c.bwd_sm_cost = layers * tp.bwd_sm;
  c.fwd_comm = layers * tp.fwd;
  c.bwd_comm = layers * tp.bwd;
  c.params = layers * layer_params;
  c.fwd_memory = layers * lc.fwd_memory;
  c.bwd_memory = layers * lc.bwd_memory;
  c.fwd_tensor = layers * lc.fwd_tensor;
  c.bwd_tensor = layers * lc.bwd_tensor;
  c.fwd_tp = layers * tp.fwd;
  c.bwd_tp = layers * tp.bwd;
  c.fwd_tp_bytes = layers * tp.fwd_bytes;
  c.bwd_tp_bytes = layers * tp.bwd_bytes;
  c.fwd_cp = layers * cp.fwd;
  c.bwd_cp = layers * cp.bwd;
  c.fwd_cp_hidden = layers * cp.fwd_hidden;
  c.bwd_cp_hidden = layers * cp.bwd_hidden;
  c.fwd_cp_bytes = layers * cp.fwd_bytes;
  c.bwd_cp_bytes = layers * cp.bwd_bytes;
  c.fwd_comm += c.fwd_cp;
  c.bwd_comm += c.bwd_cp;
  if (z3.all_gather > 0) {
    const bool prefetch = fsdp_prefetch && !z3.serial;
    // The layer's compute runs at its contended rate while the gathers (and reduce-scatters) are in
    // flight; its blocking tensor- and context-parallel collectives are not slowed.
    const double fc = lc.fwd + tp.fwd_sm, bc = lc.bwd + tp.bwd_sm;
    const double fb = tp.fwd + cp.fwd, bb = tp.bwd + cp.bwd;
    const double f = fsdp_pass_s(layers, fc + fb, z3.all_gather, 0.0, prefetch, fc * z3.fwd_ratio + fb);
    const double b = fsdp_pass_s(layers, bc + bb, z3.bwd_all_gather, z3.reduce_scatter, prefetch, bc * z3.bwd_ratio + bb);
    // What the contention adds is compute (and SM cost), not exposed communication.
    c.fwd_dp_sm_cost = f - fsdp_pass_s(layers, fc + fb, z3.all_gather, 0.0, prefetch);
    c.bwd_dp_sm_cost = b - fsdp_pass_s(layers, bc + bb, z3.bwd_all_gather, z3.reduce_scatter, prefetch);
    c.fwd_compute += c.fwd_dp_sm_cost;
    c.bwd_compute += c.bwd_dp_sm_cost;
    c.fwd_sm_cost += c.fwd_dp_sm_cost;
    c.bwd_sm_cost += c.bwd_dp_sm_cost;
    c.fwd_comm = f - c.fwd_compute;
    c.bwd_comm = b - c.bwd_compute;
    c.fwd_dp = layers * z3.all_gather;
    c.bwd_dp = layers * (z3.bwd_all_gather + z3.reduce_scatter);
  }
  return c;
}

ChunkCost at_run_precision(ChunkCost c, double router_params, double expert_params) {
  c.fp8_params = c.params - c.layers * router_params;
  c.fp8_expert_params = c.layers * expert_params;
  return c;
}

void add_chunk(ChunkCost& into, const ChunkCost& c) {
  double ChunkCost::*const fields[] = {
      &ChunkCost::fwd_compute, &ChunkCost::bwd_compute, &ChunkCost::fwd_comm,     &ChunkCost::bwd_comm,
      &ChunkCost::fwd_memory,  &ChunkCost::bwd_memory,  &ChunkCost::fwd_tensor,   &ChunkCost::bwd_tensor,
      &ChunkCost::fwd_tp,      &ChunkCost::bwd_tp,
      &ChunkCost::fwd_tp_bytes, &ChunkCost::bwd_tp_bytes, &ChunkCost::fwd_tp_hidden, &ChunkCost::bwd_tp_hidden,
      &ChunkCost::fwd_sm_cost, &ChunkCost::bwd_sm_cost, &ChunkCost::fwd_dp,       &ChunkCost::bwd_dp,
      &ChunkCost::fwd_dp_sm_cost, &ChunkCost::bwd_dp_sm_cost,
      &ChunkCost::fwd_ep,      &ChunkCost::bwd_ep,      &ChunkCost::fwd_ep_bytes, &ChunkCost::bwd_ep_bytes,
      &ChunkCost::fwd_cp,      &ChunkCost::bwd_cp,      &ChunkCost::fwd_cp_hidden, &ChunkCost::bwd_cp_hidden,
      &ChunkCost::fwd_cp_bytes, &ChunkCost::bwd_cp_bytes,
      &ChunkCost::params,      &ChunkCost::expert_params, &ChunkCost::fp8_params, &ChunkCost::fp8_expert_params,
      &ChunkCost::fwd_amax,    &ChunkCost::bwd_amax};
  for (double ChunkCost::*f : fields) into.*f += c.*f;
  into.layers += c.layers;
}

void add_ops(ChunkCost& c, const ComputeModel& cm, const std::vector<OpCost>& ops) {
  c.fwd_compute += cm.ops_time(ops, Pass::Forward).seconds();
  c.bwd_compute += cm.ops_time(ops, Pass::Backward).seconds();
  c.fwd_memory += memory_busy_s(cm, ops, Pass::Forward);
  c.bwd_memory += memory_busy_s(cm, ops, Pass::Backward);
  c.fwd_tensor += tensor_busy_s(cm, ops, Pass::Forward);
  c.bwd_tensor += tensor_busy_s(cm, ops, Pass::Backward);
}

void add_activation_offload(ChunkCost& c, const StageCostInputs& in, int layers) {
  const int offloaded = offloaded_layers_in_chunk(layers, in.training.activation_offload_layers);
  if (offloaded <= 0) return;
  ModelSpec local = in.model;
  local.seq_len = in.parallel.local_seq_len(in.model.seq_len);
  const bool sp = in.parallel.sequence_parallel && in.parallel.tp > 1;
  const sim::Bytes bytes = activation_bytes_per_layer(local, in.training.micro_batch, in.parallel.tp, sp,
                                                      in.training.recompute, activation_bytes_for(in.training.precision),
                                                      in.training.recompute_save);
  const OffloadExposure e = offload_exposure(bytes, host_link_bandwidth(in.compute.gpu()),
                                             (c.fwd_compute + c.fwd_comm) / layers, (c.bwd_compute + c.bwd_comm) / layers);
  c.fwd_compute += offloaded * e.fwd_s;
  c.bwd_compute += offloaded * e.bwd_s;
}

void add_fine_grained_offload(ChunkCost& c, const StageCostInputs& in, int layers, int moe) {
  if (in.training.offload_modules == 0 || layers <= 0) return;
  ModelSpec local = in.model;
  local.seq_len = in.parallel.local_seq_len(in.model.seq_len);
  const bool sp = in.parallel.sequence_parallel && in.parallel.tp > 1;
  const OffloadGroupBytes g =
      fine_grained_offload_bytes(local, in.training, in.parallel.tp, sp, moe_load_factor(in.model, in.compute));
  const sim::BytesPerSec link = host_link_bandwidth(in.compute.gpu());
  // Attention-side groups in every layer and expert groups in the MoE layers: each kind's copies
  // overlap the stretch of the chunk between two groups of its name.
  const double fwd = c.fwd_compute + c.fwd_comm, bwd = c.bwd_compute + c.bwd_comm;
  const OffloadExposure a = fine_grained_exposure(g.attention, layers, link, fwd, bwd);
  const OffloadExposure e = fine_grained_exposure(g.moe, moe, link, fwd, bwd);
  c.offload_groups = (g.attention > 0 ? layers : 0) + (g.moe > 0 ? moe : 0);
  c.offload_copy_s = std::max(g.attention, g.moe) / link.value;
  c.offload_fwd_exposed = a.fwd_s + e.fwd_s;
  c.offload_bwd_exposed = a.bwd_s + e.bwd_s;
  c.fwd_compute += c.offload_fwd_exposed;
  c.bwd_compute += c.offload_bwd_exposed;
}

std::vector<std::pair<int, int>> bf16_layer_runs(const TrainingSpec& tr, int model_layers, int first, int layers) {
  std::vector<std::pair<int, int>> runs;
  const auto add = [&](int lo, int hi) {  // [lo, hi) clipped to the chunk
    lo = std::max(lo, first);
    hi = std::min(hi, first + layers);
    if (hi > lo) runs.emplace_back(lo, hi - lo);
  };
  const int end_first = std::max(model_layers - tr.bf16_layers_at_end, tr.bf16_layers_at_start);
  add(0, tr.bf16_layers_at_start);
  add(end_first, model_layers);
  return runs;
}

}  // namespace clustersim::workloads
