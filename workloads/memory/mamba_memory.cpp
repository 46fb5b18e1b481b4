// Activation memory of a hybrid Mamba model's layers; the derivation is in mamba_memory.h.
#include "workloads/memory/mamba_memory.h"

#include <algorithm>
#include <cstring>

namespace clustersim::workloads {

std::vector<SavedTensor> mamba_saved_tensors(const ModelSpec& m, int micro_batch, int tp, bool sequence_parallel,
                                             const ActivationBytes& bytes) {
  const double sb = static_cast<double>(m.seq_len) * micro_batch, t = tp, e = bytes.element, g = bytes.gemm_input;
  const double r = sequence_parallel && tp > 1 ? t : 1.0;
  const double inner = m.mamba_inner(), bc = 2.0 * m.mamba_groups * static_cast<double>(m.mamba_state);
  const double sbh = sb * m.hidden;
  return {{"Mamba norm input", e * sbh / r},
          {"Mamba in_proj input", g * sbh / r},
          {"Mamba in_proj output (z, x, B, C, dt)", e * sb * (2.0 * inner + bc + m.mamba_heads) / t},
          {"Mamba conv output (x, B, C)", e * sb * (inner + bc) / t},
          {"Mamba scan output y", e * sb * inner / t},
          {"Mamba out_proj input", g * sb * inner / t}};
}

std::vector<SavedTensor> hybrid_saved_layer_tensors(const ModelSpec& model, int micro_batch, int tp,
                                                    bool sequence_parallel, Recompute recompute,
                                                    const ActivationBytes& bytes) {
  ModelSpec plain = model;
  plain.hybrid_pattern.clear();
  std::vector<SavedTensor> transformer = saved_layer_tensors(plain, micro_batch, tp, sequence_parallel, recompute, bytes);
  if (recompute == Recompute::Full || model.layers <= 0) return transformer;
  const double layers = model.layers;
  const double attention = model.layers_of_kind_in(LayerKind::Attention, 0, model.layers) / layers;
  // An 'E' layer saves an MLP layer's tensors at ffn_hidden; memory_model's MoE activations add the
  // dispatched tokens and the experts' width beyond it.
  const double mlp = (model.layers_of_kind_in(LayerKind::Mlp, 0, model.layers) +
                      model.layers_of_kind_in(LayerKind::Moe, 0, model.layers)) / layers;
  const double mamba = model.layers_of_kind_in(LayerKind::Mamba, 0, model.layers) / layers;
  std::vector<SavedTensor> mean;
  bool in_mlp = false;
  for (SavedTensor x : transformer) {
    if (std::strcmp(x.name, "MLP norm input") == 0) in_mlp = true;
    x.bytes *= in_mlp ? mlp : attention;
    if (x.bytes > 0) mean.push_back(x);
  }
  for (SavedTensor x : mamba_saved_tensors(model, micro_batch, tp, sequence_parallel, bytes)) {
    x.bytes *= mamba;
    if (x.bytes > 0) mean.push_back(x);
  }
  return mean;
}

}  // namespace clustersim::workloads
