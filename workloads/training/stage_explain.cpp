// One pipeline stage explained (see stage_explain.h): the per-layer pieces of stage_cost_parts.h
// again, each op's roofline in its terms, and the plan's chunks of the stage.
#include "workloads/training/stage_explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "workloads/collectives/collective_types.h"
#include "workloads/model/lora.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/module_precision.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/ep_overlap.h"
#include "workloads/training/stage_cost_parts.h"

namespace clustersim::workloads {
namespace {

template <typename... Args>
std::string format(const char* f, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

std::string us(double s) { return format("%.2f us", s * 1e6); }

// "2 x 8192 x 4096 x 12288" for a GEMM whose FLOPs are 2 x batch x m x n x k (x2 in the backward,
// one half each for the data and the weight gradient; a frozen weight's backward only the first).
std::string gemm_shape(const OpCost& op, const char* pass, double flops) {
  if (op.kind != OpKind::Gemm || op.m <= 0) return "";
  const double b = std::max(op.batch, 1);
  const double per = 2.0 * b * static_cast<double>(op.m) * op.n * op.k;
  const double times = std::string(pass) == "backward" ? (op.frozen ? 1.0 : 2.0) : 1.0;
  if (std::abs(per * times - flops) > 1e-6 * flops) return "";
  std::string s = times > 1 ? "2 x 2" : "2";
  if (b > 1) s += format(" x %.0f", b);
  return s + format(" x %lld x %lld x %lld = ", static_cast<long long>(op.m), static_cast<long long>(op.n),
                    static_cast<long long>(op.k));
}

ExplainedOp explain_op(const ComputeModel& cm, const OpCost& op, Pass pass, const char* name) {
  const OpTimeParts p = cm.op_time_parts(op, pass);
  ExplainedOp e;
  e.name = op.name;
  e.pass = name;
  e.flops = p.flops;
  e.bytes = p.bytes;
  e.device_s = cm.op_time(op, pass).seconds();
  e.host_s = cm.host_time(op, pass).seconds();
  const double roof = std::max(p.flops_s, p.bytes_s);
  e.bound = e.host_s > e.device_s                                ? "host launch"
            : p.launch_s >= roof                                 ? "kernel launch"
            : p.flops_s >= p.bytes_s && p.flops_s > 0 && op.is_matmul() ? "tensor cores"
            : p.flops_s >= p.bytes_s && p.flops_s > 0            ? "CUDA cores"
                                                                 : "HBM";
  std::string compute = "0";
  if (p.flops_s > 0) {
    // Flash attention's effective efficiency counts all its FLOPs: the causal fraction it skips and
    // its softmax factor are folded in, so it can exceed the kernel's own efficiency (and 1).
    const bool flash = std::string(p.efficiency_constant).starts_with("flash_attention_eff");
    const std::string eff = format("%.3f %s%s", p.efficiency, p.efficiency_constant,
                                   flash ? " x causal fraction / softmax factor" : "");
    compute = format("%s%.3g FLOP / (%.0f TFLOP/s x %s) = %s", gemm_shape(op, name, p.flops).c_str(), p.flops,
                     p.peak * 1e-12, eff.c_str(), us(p.flops_s).c_str());
    if (p.efficiency_constant[0] == '\0') {
      compute = format("%.3g FLOP / %.1f TFLOP/s FP32 = %s", p.flops, p.peak * 1e-12, us(p.flops_s).c_str());
    }
  }
  const std::string memory = p.bytes_s > 0 ? format("%.3g B / (%.0f GB/s x %.3f %s) = %s", p.bytes, p.hbm * 1e-9,
                                                    p.memory_efficiency, p.memory_constant, us(p.bytes_s).c_str())
                                           : std::string("0");
  e.formula = format("max(%s, %s)", compute.c_str(), memory.c_str());
  if (p.cast_s > 0) e.formula += " + fp8 cast " + us(p.cast_s);
  e.formula += format(" + %d kernel(s) x %.2f us kernel_launch_us", p.kernels, p.kernels > 0 ? p.launch_s * 1e6 / p.kernels : 0.0);
  e.formula += " = " + us(e.device_s);
  return e;
}

ExplainedPass explain_pass(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass, bool forward_sync = true) {
  ExplainedPass p;
  for (const OpCost& op : ops) {
    p.device_s += cm.op_time(op, pass).seconds();
    p.host_s += cm.host_time(op, pass).seconds();
  }
  p.time_s = cm.ops_time(ops, pass).seconds();
  const double tol = 1e-9 * std::max(p.time_s, 1e-12) + 1e-12;
  p.binds = cm.launch_blocking()                        ? "launch blocking (device + host + sync per kernel)"
            : p.time_s > std::max(p.device_s, p.host_s) + tol && forward_sync ? "host sync"
            : p.host_s > p.device_s                     ? "host"
                                                        : "GPU";
  return p;
}

void add_ops(std::vector<ExplainedOp>& rows, const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass,
             const char* name) {
  for (const OpCost& op : ops) {
    // An op that runs nothing in this pass (a Mamba SSD gradient kernel's forward, the chunk scan's
    // backward) is left out of the listing.
    if (cm.op_time_parts(op, pass).kernels == 0 && cm.op_time(op, pass).seconds() == 0) continue;
    rows.push_back(explain_op(cm, op, pass, name));
  }
}

std::string group_text(const char* label, int size, const std::vector<int>& ranks) {
  std::string s = format("%s %d (GPUs ", label, size);
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) {
    if (i > 0) s += ',';
    s += std::to_string(ranks[i]);
  }
  if (ranks.size() > 8) s += ",...";
  return s + ")";
}

// The bytes per element the sequence-parallel gathers and scatters carry (tp_gather_format.h).
std::string gather_bytes_text(const StageCostInputs& in, const LayerTensorParallel& t) {
  const std::string regather =
      t.regather_bytes_per_element > 0
          ? format(" and %.4g (the column-parallel input again, for the weight gradient, beside the dgrad GEMM)",
                   t.regather_bytes_per_element)
          : std::string();
  return format("; all-gather %.4g B/element forward (the column-parallel GEMM's input), %.4g backward (the "
                "row-parallel GEMM's output gradient)%s, reduce-scatter %d",
                t.gather_fwd_bytes_per_element, t.gather_bwd_bytes_per_element, regather.c_str(),
                activation_bytes(in.training.precision));
}

// `pairs`: the layer's pairs a pass (2 for a transformer layer, 1 for a hybrid model's single-block layer).
ExplainedComm tensor_parallel_comm(const StageCostInputs& in, const LayerTensorParallel& t, int stage, bool moe,
                                   int pairs = 2) {
  ExplainedComm c;
  c.what = "tensor-parallel";
  c.group = group_text("tp", in.parallel.tp, in.layout.tp_group(0, stage));
  const bool sp = in.parallel.sequence_parallel;
  c.algorithm = std::string(sp ? "ring all-gather + reduce-scatter" : "ring all-reduce") +
                (moe && sp ? " (attention's pair; the dispatcher's expert-tp exchange is in the all-to-all)"
                           : format(" x %d per pass", pairs)) +
                (sp ? gather_bytes_text(in, t) : "");
  c.fwd_s = t.fwd;
  c.bwd_s = t.bwd;
  c.fwd_bytes = t.fwd_bytes;
  c.bwd_bytes = t.bwd_bytes;
  c.hidden_s = t.fwd_hidden + t.bwd_hidden;
  c.overlap = in.tp_comm_overlap ? format("tp_comm_overlap: behind the GEMMs, which run %s slower", us(t.fwd_sm + t.bwd_sm).c_str())
             : sp && t.regather_bytes_per_element > 0
                 ? "no (blocking; in the backward the input re-gather runs beside the dgrad GEMM, the data-gradient "
                   "reduce-scatter beside the wgrad GEMM)"
             : sp ? "no (blocking; in the backward the data-gradient reduce-scatter runs beside the wgrad GEMM)"
                  : "no (blocking)";
  return c;
}

// An MoE layer's shared experts' own sequence-parallel pair (stage_cost_parts.h).
ExplainedComm shared_expert_comm(const StageCostInputs& in, const LayerTensorParallel& t,
                                 const SharedExpertTensorParallel& se, int stage) {
  ExplainedComm c;
  c.what = "shared-expert tensor-parallel";
  c.group = group_text("tp", in.parallel.tp, in.layout.tp_group(0, stage));
  c.algorithm = "ring all-gather before fc1 + reduce-scatter after fc2 (SharedExpertMLP's column / row-parallel linears)" +
                gather_bytes_text(in, t);
  c.fwd_s = t.fwd;
  c.bwd_s = t.bwd;
  c.fwd_bytes = t.fwd_bytes;
  c.bwd_bytes = t.bwd_bytes;
  c.hidden_s = t.fwd_hidden + t.bwd_hidden;
  c.overlap = se.side_stream ? "moe_shared_expert_overlap: on the shared experts' stream, beside the dispatch and "
                               "combine (hidden there: see the expert all-to-all)"
              : in.tp_comm_overlap
                  ? format("compute stream; tp_comm_overlap: behind the shared GEMMs, which run %s slower",
                           us(t.fwd_sm + t.bwd_sm).c_str())
                  : "no (blocking, compute stream)";
  return c;
}

ExplainedComm context_parallel_comm(const StageCostInputs& in, const LayerContextParallel& l, int stage) {
  ExplainedComm c;
  c.what = "context-parallel";
  c.group = group_text("cp", in.parallel.cp, in.layout.cp_group(0, 0, stage));
  const CpComm type = in.parallel.cp_comm;
  c.algorithm = type == CpComm::P2p         ? "ring: K/V passed to the next rank, cp - 1 steps (p2p)"
                : type == CpComm::AllGather ? "ring all-gather of K/V (reduce-scatter of dK/dV)"
                                            : "all-to-all (Ulysses, direct)";
  c.fwd_s = l.fwd;
  c.bwd_s = l.bwd;
  c.fwd_bytes = l.fwd_bytes;
  c.bwd_bytes = l.bwd_bytes;
  c.hidden_s = l.fwd_hidden + l.bwd_hidden;
  c.overlap = type == CpComm::P2p ? "behind the attention core's blocks; the rest blocks" : "no (blocking)";
  return c;
}

ExplainedComm expert_comm(const StageCostInputs& in, const LayerExpertParallel& e, int stage, double pair_saving) {
  ExplainedComm c;
  c.what = "expert all-to-all";
  const int etp = in.parallel.expert_tp();
  c.group = group_text("ep", in.parallel.ep, in.layout.expert_ep_group(etp, in.parallel.ep, 0, 0, stage));
  c.algorithm = "dispatch + combine per pass (Megatron-Core alltoall dispatcher), direct";
  if (etp > 1) c.algorithm += format("; expert-tp %d all-gather + reduce-scatter, ring", etp);
  c.fwd_s = e.fwd;
  c.bwd_s = e.bwd;
  c.fwd_bytes = e.fwd_bytes;
  c.bwd_bytes = e.bwd_bytes;
  c.overlap = in.parallel.moe_a2a_overlap ? format("moe_a2a_overlap: a paired forward and backward layer save %s "
                                                   "(the all-to-all kernels hold %.0f%% of the SMs meanwhile)",
                                                   us(pair_saving).c_str(), 100.0 * e.sm_share)
              : in.parallel.moe_shared_expert_overlap ? "moe_shared_expert_overlap: the shared experts' time is taken off"
                                                      : "no (blocking)";
  return c;
}

ExplainedLayerKind explain_kind(const StageCostInputs& in, const std::string& kind, int count, const std::vector<OpCost>& ops,
                                const LayerCompute& lc) {
  const ComputeModel& cm = in.compute;
  ExplainedLayerKind k;
  k.kind = kind;
  k.count = count;
  const Recompute rc = in.training.recompute;
  const std::vector<OpCost> rerun = rc == Recompute::Full ? full_recompute_ops(ops, in.training.recompute_save, in.training.recompute_dce)
                                                         : recomputed_ops(ops, rc, in.training.recompute_modules);
  add_ops(k.ops, cm, ops, Pass::Forward, "forward");
  add_ops(k.ops, cm, ops, Pass::Backward, "backward");
  add_ops(k.ops, cm, rerun, Pass::Forward, "recompute");
  k.fwd = explain_pass(cm, ops, Pass::Forward);
  k.bwd = explain_pass(cm, ops, Pass::Backward);
  if (!rerun.empty()) k.recompute = explain_pass(cm, rerun, Pass::Forward);
  k.fwd_s = lc.fwd;
  k.bwd_s = lc.bwd;
  return k;
}

const char* hybrid_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::Mamba: return "mamba";
    case LayerKind::Attention: return "attention";
    case LayerKind::Mlp: return "mlp";
    case LayerKind::Moe: return "moe";
    default: return "transformer";
  }
}

}  // namespace

StageExplanation explain_stage(const StageCostInputs& in, const StageCosts& costs, int stage) {
  const ModelSpec& model = in.model;
  const int pp = in.parallel.pp, v = in.chunks_per_rank, vstages = pp * v;
  StageExplanation x;
  x.stage = stage;
  x.pipeline_stages = pp;
  x.chunks_per_rank = v;
  x.micro_batches = in.micro_batches;
  x.dp = in.parallel.dp;
  // The rank's layers: chunk c is virtual stage c * pp + stage.
  std::vector<std::pair<int, int>> ranges;  // (first layer, count) per chunk
  for (int vs = 0, first = 0; vs < vstages; ++vs) {
    const int n = in.parallel.layers_in_chunk(model.layers, vs);
    if (vs % pp == stage) ranges.emplace_back(first, n);
    first += n;
  }
  const OpShape shape = stage_op_shape(in);
  const double act = static_cast<double>(in.training.micro_batch) * in.parallel.local_seq_len(model.seq_len) * model.hidden *
                     shape.precision_bytes;
  const LayerExpertParallel lep = model.is_moe() ? layer_expert_parallel(in, shape, stage) : LayerExpertParallel{};
  const double pair_saving = costs.chunks[static_cast<std::size_t>(stage)].ep_pair_saving;
  if (model.is_hybrid()) {
    for (const HybridKindCost& h : hybrid_kind_costs(in, shape, act, shape.precision_bytes)) {
      int count = 0;
      for (const auto& [first, n] : ranges) count += model.layers_of_kind_in(h.kind, first, n);
      if (count == 0) continue;
      std::vector<OpCost> ops = layer_ops_of_kind(model, shape, h.kind);
      apply_module_precision(ops, in.training, false);
      ExplainedLayerKind k = explain_kind(in, hybrid_kind_name(h.kind), count, ops, h.lc);
      // Bytes, not exposed seconds: a pair tp_comm_overlap hides whole is still the layer's.
      if (in.parallel.tp > 1 && (h.ltp.fwd_bytes > 0 || h.ltp.bwd_bytes > 0)) {
        k.comm.push_back(h.kind == LayerKind::Moe && in.parallel.sequence_parallel
                             ? shared_expert_comm(in, h.ltp, shared_expert_tensor_parallel(in, act), stage)
                             : tensor_parallel_comm(in, h.ltp, stage, false, tp_sides_of(h.kind) == TpSides::Both ? 2 : 1));
      }
      if (h.kind == LayerKind::Moe && in.parallel.ep > 1) k.comm.push_back(expert_comm(in, lep, stage, pair_saving));
      if (in.parallel.cp > 1 && (h.lcp.fwd_bytes > 0 || h.lcp.bwd_bytes > 0)) k.comm.push_back(context_parallel_comm(in, h.lcp, stage));
      x.kinds.push_back(std::move(k));
    }
  } else {
    int moe = 0, all = 0;
    for (const auto& [first, n] : ranges) {
      moe += model.moe_layers_in(first, n);
      all += n;
    }
    const auto add_kind = [&](bool is_moe, int count) {
      if (count == 0) return;
      const std::vector<OpCost> ops = stage_layer_ops(in, shape, is_moe);
      const LayerCompute lc = layer_compute(in.compute, ops, in.training.recompute, in.training.recompute_modules,
                                            in.training.recompute_save, in.training.recompute_dce);
      ExplainedLayerKind k = explain_kind(in, is_moe ? "moe" : "dense", count, ops, lc);
      const LayerTensorParallel ltp = layer_tensor_parallel(in, act, ops, is_moe ? moe_tp_sides(in.parallel) : TpSides::Both);
      if (in.parallel.tp > 1) k.comm.push_back(tensor_parallel_comm(in, ltp, stage, is_moe));
      const SharedExpertTensorParallel se = is_moe ? shared_expert_tensor_parallel(in, act) : SharedExpertTensorParallel{};
      if (se.any()) k.comm.push_back(shared_expert_comm(in, shared_expert_layer_tensor_parallel(in, se, act, ops), se, stage));
      if (is_moe) {
        LayerExpertParallel e = lep;
        if (in.parallel.moe_shared_expert_overlap) {
          // As the stage costs charge it (stage_costs.cpp): the side stream's own pair first in each window.
          e.fwd -= shared_expert_hidden_s(in.compute, ops, Pass::Forward, lep.fwd, lep.sm_share, se.gather, se.scatter);
          e.bwd -= shared_expert_hidden_s(in.compute, ops, Pass::Backward, lep.bwd, lep.sm_share, se.scatter, se.gather);
        }
        if (e.fwd_bytes > 0 || e.fwd > 0) k.comm.push_back(expert_comm(in, e, stage, pair_saving));
      }
      if (in.parallel.cp > 1) {
        const LayerContextParallel lcp = layer_context_parallel(context_parallel_inputs(in, ops, shape.precision_bytes));
        k.comm.push_back(context_parallel_comm(in, lcp, stage));
      }
      x.kinds.push_back(std::move(k));
    };
    add_kind(false, all - moe);
    add_kind(true, moe);
  }
  // The embedding on virtual stage 0, the output layer and loss on the last.
  std::vector<OpCost> extras;
  if (stage == 0) {
    extras = embedding_ops(model, shape);
    x.extras_what = "embedding";
  }
  if ((vstages - 1) % pp == stage) {
    std::vector<OpCost> head = head_ops(model, shape);
    if (in.training.finetune.lora()) freeze_weights(head);
    extras.insert(extras.end(), head.begin(), head.end());
    x.extras_what += x.extras_what.empty() ? "output layer + loss" : " + output layer + loss";
  }
  if (!extras.empty()) {
    add_ops(x.extras, in.compute, extras, Pass::Forward, "forward");
    add_ops(x.extras, in.compute, extras, Pass::Backward, "backward");
    x.extras_fwd = explain_pass(in.compute, extras, Pass::Forward);
    x.extras_bwd = explain_pass(in.compute, extras, Pass::Backward);
  }
  for (const ExplainedLayerKind& k : x.kinds) x.itemised_compute_s += k.count * (k.fwd_s + k.bwd_s);
  x.itemised_compute_s += x.extras_fwd.time_s + x.extras_bwd.time_s;
  for (int c = 0; c < v; ++c) {
    const int vs = c * pp + stage;
    const ChunkCost& cc = costs.chunks[static_cast<std::size_t>(vs)];
    x.chunks.push_back(ExplainedChunk{vs, cc.layers, cc.fwd_compute, cc.bwd_compute, cc.fwd_comm, cc.bwd_comm, cc.fwd_ep,
                                      cc.bwd_ep, cc.ep_pair_saving, cc.offload_groups, cc.offload_copy_s,
                                      cc.offload_fwd_exposed, cc.offload_bwd_exposed});
    x.planned_compute_s += cc.fwd_compute + cc.bwd_compute;
    x.planned_comm_s += cc.fwd_comm + cc.bwd_comm;
  }
  return x;
}

}  // namespace clustersim::workloads
