// Per-layer and per-module precision (module_precision.h): op names to Megatron-Core's modules.
#include "workloads/model/module_precision.h"

#include <string_view>

namespace clustersim::workloads {

unsigned precision_module_of(const OpCost& op) {
  const std::string_view n = op.name;
  // Megatron-Core's attention linear_qkv and linear_proj (te_quant.cfg "*.linear_qkv",
  // "*.linear_proj"); MLA's projections are the same block's linears.
  if (n == "qkv_proj" || n == "attention_out_proj" || n.starts_with("mla_")) return kPrecisionAttention;
  if (n == "moe_fc1_latent_proj" || n == "moe_fc2_latent_proj") return kPrecisionMoeLatentProj;
  if (n == "mamba_in_proj") return kPrecisionMambaInProj;
  if (n == "mamba_out_proj") return kPrecisionMambaOutProj;
  return 0;
}

topology::Precision linear_format(const OpCost& op, topology::Precision run) {
  using topology::Precision;
  if (!topology::quantized_linears(run) || !op.fp8_eligible || op.kind != OpKind::Gemm) return Precision::Bf16;
  switch (op.linear_precision) {
    case LinearPrecision::Bf16: return Precision::Bf16;
    case LinearPrecision::Fp8: return Precision::Fp8;
    case LinearPrecision::Run: break;
  }
  return run;
}

void apply_module_precision(std::vector<OpCost>& ops, const TrainingSpec& tr, bool bf16_layer) {
  for (OpCost& op : ops) {
    if (!op.fp8_eligible) continue;
    const unsigned module = precision_module_of(op);
    if (bf16_layer || (module & tr.bf16_modules) != 0) op.linear_precision = LinearPrecision::Bf16;
    else if ((module & tr.fp8_modules) != 0) op.linear_precision = LinearPrecision::Fp8;
  }
}

}  // namespace clustersim::workloads
