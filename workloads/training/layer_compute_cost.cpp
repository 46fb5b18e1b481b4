// One layer's compute under the compute model (see stage_cost_parts.h): its passes with the
// recompute policy's extra forward work in the backward, and the seconds the passes keep device
// memory (dmon's MCUTL) and the tensor pipes (TENSO) busy.
#include "workloads/training/stage_cost_parts.h"

#include <algorithm>

namespace clustersim::workloads {
namespace {

bool is_selective_recompute_op(const OpCost& op) {
  return op.kind == OpKind::Attention || op.name == "softmax" || op.name == "attention_dropout";
}

// [training] recompute_modules: the ops whose forward the backward runs again ("layernorm": the
// two norms; "moe_act": the experts' activation function (bias_act_func, with GPT-OSS's eager GLU
// clamp, model/glu_clamp.h); "mla_up_proj": MLA's query and key/value
// up-projections and the rotary embedding applied to their outputs, model/attention_variants.h;
// the loader accepts it only for MLA models; "moe": the whole MoE layer, in layer_compute). Under
// recompute = "full" they rerun with everything else.
bool recomputed_module_op(const OpCost& op, unsigned modules) {
  if ((modules & kRecomputeLayernorm) != 0 && (op.name == "input_norm" || op.name == "post_attention_norm")) return true;
  if ((modules & kRecomputeMlaUpProj) != 0 &&
      (op.name == "mla_q_up_proj" || op.name == "mla_q_proj" || op.name == "mla_kv_up_proj" || op.name == "rotary_embedding"))
    return true;
  return (modules & kRecomputeMoeAct) != 0 && (op.name == "expert_act" || op.name == "expert_act_clamp");
}

}  // namespace

// Both read the roofline's own terms (ComputeModel::op_time_parts): the bytes at the rate the op
// streams them (fp8 operands, unfused losses, Mamba's sm100 cap), the FLOPs at the peak the op's
// matmul runs at (a bf16 attention in an fp8 run at the bf16 peak), each no longer than the op.
double memory_busy_s(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass) {
  double busy = 0;
  for (const OpCost& op : ops) {
    const OpTimeParts p = cm.op_time_parts(op, pass);
    busy += std::min(p.bytes_s, p.time_s());
  }
  return busy;
}

double tensor_busy_s(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass) {
  double busy = 0;
  for (const OpCost& op : ops) {
    if (!op.is_matmul()) continue;
    const OpTimeParts p = cm.op_time_parts(op, pass);
    if (p.peak > 0) busy += std::min(p.flops / p.peak, p.time_s());
  }
  return busy;
}

std::vector<OpCost> recomputed_ops(const std::vector<OpCost>& layer, Recompute recompute, unsigned modules) {
  std::vector<OpCost> selective;
  // recompute_modules "moe": the MoE layer's ops from its router to its unpermute (shared experts,
  // routed experts, permutes and sorts between them) rerun in the backward, not its pre-MLP norm
  // ("layernorm") or the residual add after it.
  bool in_moe = false;
  const bool moe_module = recompute != Recompute::Full && (modules & kRecomputeMoe) != 0;
  for (const OpCost& op : layer) {
    if (op.name == "moe_router") in_moe = true;
    const bool rerun = (recompute == Recompute::Selective && is_selective_recompute_op(op)) ||
                       (recompute != Recompute::Full && recomputed_module_op(op, modules)) || (moe_module && in_moe);
    if (rerun) selective.push_back(op);
    if (op.name == "moe_unpermute") in_moe = false;
  }
  return selective;
}

std::vector<OpCost> full_recompute_ops(const std::vector<OpCost>& layer, unsigned save, bool dce) {
  const std::size_t dead_from = dce ? rerun_dead_from(layer) : layer.size();
  std::vector<OpCost> rerun;
  for (std::size_t i = 0; i < dead_from; ++i)
    if (!saved_by_recompute_save(layer[i].name, save)) rerun.push_back(layer[i]);
  return rerun;
}

// Full recompute reruns the layer's forward in its backward. With nothing saved that is the whole
// forward; with [training] recompute_save the saved ops drop out of the rerun (JAX's
// save_only_these_names: a saved residual is read, not recomputed); with recompute_dce the dead
// tail of the layer does too (JAX's remat_partial_eval prunes the staged rerun with
// pe.dce_jaxpr, jax/_src/ad_checkpoint.py; rerun_dead_from, model/transformer_ops.h), fc2 / mlp_down
// with it. Megatron's torch.utils.checkpoint reruns the whole function: no dce.
LayerCompute layer_compute(const ComputeModel& cm, const std::vector<OpCost>& layer, Recompute recompute,
                           unsigned modules, unsigned save, bool dce) {
  // The forward ops the backward runs again: the layer (less what recompute_save keeps and, with
  // recompute_dce, its dead tail) under full recompute, else selective recompute's and
  // recompute_modules' ops (none by default).
  const std::vector<OpCost> again =
      recompute == Recompute::Full ? full_recompute_ops(layer, save, dce) : recomputed_ops(layer, recompute, modules);
  LayerCompute c;
  c.fwd_memory = memory_busy_s(cm, layer, Pass::Forward);
  c.bwd_memory = memory_busy_s(cm, layer, Pass::Backward) + memory_busy_s(cm, again, Pass::Forward);
  c.fwd_tensor = tensor_busy_s(cm, layer, Pass::Forward);
  c.bwd_tensor = tensor_busy_s(cm, layer, Pass::Backward) + tensor_busy_s(cm, again, Pass::Forward);
  c.fwd = cm.ops_time(layer, Pass::Forward).seconds();
  c.bwd = cm.ops_time(layer, Pass::Backward).seconds() + cm.ops_time(again, Pass::Forward).seconds();
  return c;
}

}  // namespace clustersim::workloads
