// A hybrid model's stage costs (see stage_cost_parts.h): each layer kind (Mamba, attention, MLP,
// MoE; model/mamba_ops.h) costed once, a chunk charged for the layers of each kind it holds, and
// the tensor-parallel bytes per GPU weighted by the kinds' counts.
#include "workloads/training/stage_cost_parts.h"

#include "workloads/model/mamba_ops.h"
#include "workloads/model/module_precision.h"

namespace clustersim::workloads {

TpSides tp_sides_of(LayerKind kind) {
  switch (kind) {
    case LayerKind::Attention: return TpSides::Attention;
    case LayerKind::Mamba:
    case LayerKind::Mlp:
    case LayerKind::Moe: return TpSides::Mlp;
    default: return TpSides::Both;
  }
}

std::vector<HybridKindCost> hybrid_kind_costs(const StageCostInputs& in, const OpShape& shape, double act,
                                              int element_bytes, bool bf16_layer) {
  std::vector<HybridKindCost> kinds;
  for (const LayerKind kind : {LayerKind::Mamba, LayerKind::Attention, LayerKind::Mlp, LayerKind::Moe}) {
    if (in.model.layers_of_kind_in(kind, 0, in.model.layers) == 0) continue;
    std::vector<OpCost> ops = layer_ops_of_kind(in.model, shape, kind);
    apply_module_precision(ops, in.training, bf16_layer);
    HybridKindCost k;
    k.kind = kind;
    k.lc = layer_compute(in.compute, ops, in.training.recompute, in.training.recompute_modules,
                         in.training.recompute_save, in.training.recompute_dce);
    // An MoE block's routed path runs no sequence-parallel pair of its own: its dispatcher's
    // exchange over the expert tensor-parallel group is charged with its all-to-alls
    // (layer_tensor_parallel, moe_layer). Its shared experts run theirs (stage_cost_parts.h).
    k.ltp = kind == LayerKind::Moe && in.parallel.sequence_parallel
                ? shared_expert_layer_tensor_parallel(in, shared_expert_tensor_parallel(in, act), act, ops)
                : layer_tensor_parallel(in, act, ops, tp_sides_of(kind));
    k.lcp = layer_context_parallel(context_parallel_inputs(in, ops, element_bytes));
    k.params = kind == LayerKind::Moe ? in.model.moe_layer_dense_parameters() / in.parallel.tp +
                                            in.model.expert_parameters() / in.parallel.ep / in.parallel.expert_tp()
                                      : in.model.layer_parameters_of(kind) / in.parallel.tp;
    kinds.push_back(k);
  }
  return kinds;
}

ChunkCost hybrid_chunk_cost(const std::vector<HybridKindCost>& kinds, const std::vector<HybridKindCost>& bf16_kinds,
                            const StageCostInputs& in, int first, int layers, const LayerZero3& z3) {
  const ModelSpec& model = in.model;
  const std::vector<std::pair<int, int>> runs = bf16_layer_runs(in.training, model.layers, first, layers);
  ChunkCost c;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const HybridKindCost& k = kinds[i];
    int bf16 = 0;
    for (const auto& [a, n] : runs) bf16 += model.layers_of_kind_in(k.kind, a, n);
    const int n = model.layers_of_kind_in(k.kind, first, layers) - bf16;
    const bool moe = k.kind == LayerKind::Moe;
    const double router = moe ? model.hidden * static_cast<double>(model.experts) / in.parallel.tp : 0.0;
    const double experts = moe ? model.expert_parameters() / in.parallel.ep / in.parallel.expert_tp() : 0.0;
    if (n > 0)
      add_chunk(c, at_run_precision(layers_cost(n, k.lc, k.ltp, k.lcp, z3, k.params, in.fsdp_prefetch), router, experts));
    const HybridKindCost& b = bf16_kinds[i];
    if (bf16 > 0) add_chunk(c, layers_cost(bf16, b.lc, b.ltp, b.lcp, z3, b.params, in.fsdp_prefetch));
  }
  return c;
}

double hybrid_tp_bytes_per_gpu(const std::vector<HybridKindCost>& kinds, const ModelSpec& model) {
  double sum = 0;
  for (const HybridKindCost& k : kinds)
    sum += k.ltp.bytes_per_gpu * model.layers_of_kind_in(k.kind, 0, model.layers) / model.layers;
  return sum;
}

}  // namespace clustersim::workloads
