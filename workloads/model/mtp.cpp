// Multi-token prediction modules (see mtp.h for what they are, where they run and the sources).
#include "workloads/model/mtp.h"

#include <algorithm>

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

// A hybrid MoE model's module is "*E" (an attention and an MoE block: Nemotron 3 Super; see
// scenarios/model_section.cpp), the same ops as an MoE transformer layer.
bool mtp_layer_is_moe(const ModelSpec& model) { return model.is_moe(); }

// enorm, hnorm and the module's final norm are the model's norm kind (RMSNorm in DeepSeek-V3);
// eh_proj has no bias (Hugging Face DeepseekV3 checkpoint: model.layers.61.eh_proj.weight only).
double mtp_extra_parameters(const ModelSpec& model) {
  const double h = model.hidden;
  return 2.0 * h * h + 3.0 * model.final_norm_parameters();
}

double mtp_layer_dense_parameters(const ModelSpec& model) {
  if (!mtp_layer_is_moe(model)) return model.dense_layer_parameters();
  if (model.is_hybrid()) return model.layer_parameters_of(LayerKind::Attention) + model.moe_layer_dense_parameters();
  return model.moe_layer_dense_parameters();
}

double mtp_module_parameters(const ModelSpec& model) {
  const double experts = mtp_layer_is_moe(model) ? model.expert_parameters() : 0.0;
  return mtp_extra_parameters(model) + mtp_layer_dense_parameters(model) + experts;
}

double mtp_parameters(const ModelSpec& model) { return model.mtp_layers * mtp_module_parameters(model); }

double mtp_release_parameters(const ModelSpec& model) {
  const double copies = 2.0 * static_cast<double>(model.vocab) * model.hidden;  // embed_tokens + shared_head.head
  return model.parameters() + model.mtp_layers * (mtp_module_parameters(model) + copies);
}

// enorm and hnorm each read and write one [s, b, h] activation (h/t-sharded under sequence
// parallelism, as every norm here); the concatenation copies both into one 2h-wide buffer; eh_proj
// is a column-parallel linear (Megatron-Core builds it as a TE column-parallel linear, so it runs
// in FP8 under an FP8 recipe) over all the micro-batch's tokens.
std::vector<OpCost> mtp_extra_ops(const ModelSpec& model, const OpShape& shape) {
  const double tokens = static_cast<double>(shape.micro_batch) * shape.seq_len / std::max(1, shape.cp);
  const double residual = tokens * model.hidden / (shape.sequence_parallel ? shape.tp : 1);
  const double p = shape.precision_bytes;
  const double norm_flops = model.norm == NormKind::LayerNorm ? kLayerNormFlopsPerElement : kRmsNormFlopsPerElement;
  std::vector<OpCost> ops = embedding_ops(model, shape);
  for (const char* name : {"mtp_enorm", "mtp_hnorm"})
    ops.push_back(ops::pointwise(name, OpKind::Norm, residual, norm_flops, 2.0 * p, 3.0 * p));
  ops.push_back(ops::pointwise("mtp_concat", OpKind::Elementwise, 2.0 * residual, 0.0, 2.0 * p, 2.0 * p));
  ops.push_back(ops::gemm("mtp_eh_proj", OpKind::Gemm, tokens, static_cast<double>(model.hidden) / std::max(1, shape.tp),
                          2.0 * model.hidden, 1, p, true));
  for (const OpCost& op : head_ops(model, shape)) ops.push_back(op);
  return ops;
}

}  // namespace clustersim::workloads
