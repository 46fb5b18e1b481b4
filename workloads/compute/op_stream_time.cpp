// A stream of ops on one GPU (ComputeModel::ops_time): the host issues every kernel (and framework
// op, and torch.distributed call) ahead of the device, so a pass is bound by the larger of the two
// totals, except after a host sync, under CUDA_LAUNCH_BLOCKING, and under a full-iteration CUDA
// graph (no host time at all).
#include "workloads/compute/compute_model.h"

#include <algorithm>

namespace clustersim::workloads {

namespace {
// The per-expert GEMMs a grouped expert GEMM (model/transformer_ops.h: the routed experts'
// "expert_*" GEMMs, batch = local experts) issues beyond its first, per pass: one per expert and
// GEMM when grouped_gemm_launches_per_expert is 1 (Transformer Engine's multi-stream path). A
// gated MLP's "expert_up" is the second half of linear_fc1's GEMMs, issued with "expert_up_gate"
// (OpCost::second_fc1_half).
double expert_gemm_launches(const OpCost& op, Pass pass, double per_expert) {
  const bool grouped = op.kind == OpKind::Gemm && op.batch > 1 && op.name.starts_with("expert_") && !op.second_fc1_half;
  if (!grouped) return 0.0;
  const int gemms = pass == Pass::Backward ? (op.frozen ? 1 : 2) : 1;
  return gemms * (op.batch - 1) * per_expert;
}

// Transformer Engine module calls an op stands for in the forward (te_module_host_us each): one
// per linear layer (Linear, LayerNormLinear; a routed expert GEMM's GroupedLinear once per call,
// its per-expert work apart) and the fused attention core (DotProductAttention). A gated MLP's
// gate and up halves are one fc1 module, so "mlp_up" and "expert_up" are not calls of their own
// (OpCost::second_fc1_half).
// The logits GEMM (Megatron-Core's own ColumnParallelLinear) and the router are not TE modules.
double te_module_calls(const OpCost& op, Pass pass) {
  if (pass != Pass::Forward) return 0.0;
  if (op.kind == OpKind::Attention) return op.name == "flash_attention" ? 1.0 : 0.0;
  const bool linear = op.kind == OpKind::Gemm && op.fp8_eligible;
  return linear && !op.second_fc1_half ? 1.0 : 0.0;
}
}  // namespace

// Whether the GPU's host is a Grace CPU (the GB200 and GB300 superchips): eager host work runs
// grace_host_ratio times as long there as on a DGX's x86 host.
bool grace_hosted(const topology::GpuSpec& gpu) { return gpu.id.starts_with("gb") || gpu.id.starts_with("gh"); }

// Host work of the same framework calls on this GPU's host over a DGX's x86 host: grace_host_ratio
// on a Grace CPU, 1 elsewhere.
double ComputeModel::host_cpu_ratio() const { return grace_hosted(gpu_) ? constants_.get("grace_host_ratio") : 1.0; }

// Whether an op replays from a per-layer CUDA graph: its layer part is in the scope (moe takes
// the whole MoE layer; moe_router also the shared experts, unless they overlap the dispatch).
bool ComputeModel::captured(const OpCost& op) const {
  const unsigned m = graph_modules_;
  const bool moe = (m & kGraphMoe) != 0;
  switch (op.graph_part) {
    case GraphPart::None: return false;
    case GraphPart::Attention: return (m & kGraphAttn) != 0;
    case GraphPart::Mlp: return (m & kGraphMlp) != 0;
    case GraphPart::MoeRouter: return moe || (m & kGraphMoeRouter) != 0;
    case GraphPart::MoePreprocess: return moe || (m & kGraphMoePreprocess) != 0;
    case GraphPart::MoeSharedExperts: return moe || ((m & kGraphMoeRouter) != 0 && !shared_expert_overlap_);
    case GraphPart::MoeRest: return moe;
    case GraphPart::Mamba: return (m & kGraphMamba) != 0;
  }
  return false;
}

// Host launches of an op: its kernels, and a grouped expert GEMM's per-expert GEMMs.
double ComputeModel::launches(const OpCost& op, Pass pass) const {
  return kernels(op, pass) + expert_gemm_launches(op, pass, constants_.get("grouped_gemm_launches_per_expert"));
}

// Host time of an op: its kernel launches and its other framework ops (OpCost::fwd_host_ops, MoE
// layers' reshapes, counts and copies) at host_launch_us each, the forward of each Transformer
// Engine module it stands for at te_module_host_us, and its torch.distributed calls at
// torch_distributed_call_us, all x grace_host_ratio on a Grace host; and a grouped expert GEMM's
// per-expert GEMMs at grouped_gemm_expert_host_us each (Transformer Engine's GroupedLinear:
// per-expert Python work and a cuBLASLt call each). A full-iteration CUDA graph replays the whole
// step from one launch: no per-op host time.
sim::SimTime ComputeModel::host_time(const OpCost& op, Pass pass) const {
  if (cuda_graphs_ || captured(op)) return sim::SimTime::zero();
  const bool fwd = pass == Pass::Forward;
  const double per_expert = expert_gemm_launches(op, pass, constants_.get("grouped_gemm_launches_per_expert"));
  const double ops = kernels(op, pass) + (fwd ? op.fwd_host_ops : op.bwd_host_ops);
  const double calls = fwd ? op.fwd_dist_calls : op.bwd_dist_calls;
  const double cpu = host_cpu_ratio();
  const double framework_us = ops * constants_.get("host_launch_us") +
                              te_module_calls(op, pass) * constants_.get("te_module_host_us") +
                              calls * constants_.get("torch_distributed_call_us");
  return sim::SimTime::from_seconds((cpu * framework_us + per_expert * constants_.get("grouped_gemm_expert_host_us")) * 1e-6);
}

// The host issues kernels asynchronously and runs ahead while long kernels execute, so a stream of
// ops is bound by the larger of the two totals: the GPU's work, or the CPU's issuing of it. An op
// with host_sync_after (the forward of a dropless MoE dispatch) makes the host wait for the device:
// the queue drains and a round trip (launch_blocking_sync_us) passes. After it the GPU queue is
// EMPTY, so the host no longer runs ahead: each op's kernels start only once the host has issued
// them (its host_time), and a stretch of host-heavy, device-light ops (the dispatcher's split-size
// lists and all-to-all calls right after the sync) leaves the GPU idle for all of their host time:
//   t_host += host(op);  t_dev = max(t_dev, t_host) + device(op)   for each op after the sync,
// the stretch ending at max(t_dev, t_host). Before the first sync of the list the host has run
// ahead over the previous layer, so that stretch stays max(sum device, sum host).
// A full-iteration CUDA graph (set_cuda_graphs) has neither host time nor a host sync: the sum of
// the device times. Per-layer graphs (set_cuda_graph_modules): a captured op costs the host
// nothing, and each stretch of captured ops one graph launch (an eager op's host_launch_us), at
// its first op; the host sync stays unless the whole MoE layer is captured.
// Under CUDA_LAUNCH_BLOCKING=1 the host cannot run ahead: each kernel is issued, runs, and is
// waited for, so the host's issuing, the device time and a round trip per kernel add up.
sim::SimTime ComputeModel::ops_time(const std::vector<OpCost>& ops, Pass pass) const {
  const double sync_s = constants_.get("launch_blocking_sync_us") * 1e-6;
  sim::SimTime device = sim::SimTime::zero(), host = sim::SimTime::zero(), synced = sim::SimTime::zero();
  sim::SimTime all_device = sim::SimTime::zero(), all_host = sim::SimTime::zero();
  bool drained = false;  // past a host sync: the recurrence above instead of max(device, host)
  double kernel_count = 0;
  const double cpu = host_cpu_ratio();
  const sim::SimTime graph_launch = sim::SimTime::from_seconds(cpu * constants_.get("host_launch_us") * 1e-6);
  const bool syncs = !cuda_graphs_ && (graph_modules_ & kGraphMoe) == 0;
  bool in_graph = false;  // the previous op was captured: this one replays from the same graph
  for (const OpCost& op : ops) {
    const bool graphed = !cuda_graphs_ && captured(op);
    const sim::SimTime d = op_time(op, pass), h = host_time(op, pass) + (graphed && !in_graph ? graph_launch : sim::SimTime::zero());
    in_graph = graphed;
    all_device += d;
    all_host += h;
    kernel_count += launches(op, pass);
    if (drained) {
      host += h;
      device = std::max(device, host) + d;
    } else {
      device += d;
      host += h;
    }
    if (pass == Pass::Forward && op.host_sync_after && syncs) {
      synced += std::max(device, host) + sim::SimTime::from_seconds(sync_s);
      device = host = sim::SimTime::zero();
      drained = true;
    }
  }
  if (launch_blocking_)
    return all_device + all_host + sim::SimTime::from_seconds(kernel_count * sync_s);
  if (cuda_graphs_) return all_device;
  return synced + std::max(device, host);
}

}  // namespace clustersim::workloads
