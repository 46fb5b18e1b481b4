// Per-layer and per-module precision under an fp8 / nvfp4 run: which linears of a layer keep bf16
// or drop from nvfp4 to fp8 (TrainingSpec bf16_layers_at_start / _end, bf16_modules, fp8_modules).
// Megatron-Core applies the layer counts per decoder layer (fp8_utils.py is_first_last_bf16_layer,
// fp4_utils.py get_fp4_context: no quantization context for those layers) and the module recipes
// per Transformer Engine module by name (transformer_engine.py TEQuantizationParams: a module in a
// layer without a quantization context keeps bf16 whatever its recipe, override_nonquantized_autocast
// = False). The result is written on each op (OpCost::linear_precision); the compute model runs it.
#pragma once

#include <vector>

#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// The PrecisionModule bit an op belongs to (0: none of them): the attention projections, the
// LatentMoE projections, the Mamba in / out projections by op name.
unsigned precision_module_of(const OpCost& op);

// Writes the precision of each linear in `ops`: all bf16 in a bf16 layer (or a module kept whole
// in bf16, such as multi-token prediction under bf16_modules "mtp"); else bf16 where its module is
// in `bf16_modules`, fp8 where it is in `fp8_modules`.
void apply_module_precision(std::vector<OpCost>& ops, const TrainingSpec& tr, bool bf16_layer);

// The format a linear's GEMM runs in under a run of precision `run`: the run's (fp8 / nvfp4) for
// an fp8-eligible linear, its per-module override (apply_module_precision) where one is set, bf16
// for every other matmul and for runs that quantize nothing (ComputeModel::linear_format).
topology::Precision linear_format(const OpCost& op, topology::Precision run);

// Whether the run has any per-layer or per-module precision.
inline bool has_module_precision(const TrainingSpec& tr) {
  return tr.bf16_layers_at_start > 0 || tr.bf16_layers_at_end > 0 || tr.bf16_modules != 0 || tr.fp8_modules != 0;
}

}  // namespace clustersim::workloads
