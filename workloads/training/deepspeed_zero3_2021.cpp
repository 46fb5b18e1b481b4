// DeepSpeed 2021 ZeRO-3 per-layer collective cost (see deepspeed_zero3_2021.h for the source).
#include "workloads/training/deepspeed_zero3_2021.h"

#include <algorithm>

namespace clustersim::workloads {

LayerTensors deepspeed_layer_tensors(const ModelSpec& model, int tp) {
  const double h = model.hidden;
  const double t = std::max(1, tp);
  const double kv_width = static_cast<double>(model.kv_heads > 0 ? model.kv_heads : model.heads) * model.head_dim();
  const double q_width = model.attention_width();
  const bool gelu = model.mlp == MlpKind::Gelu;
  // Forward order: QKV, attention output, then the MLP's up (and gate) and down projections.
  std::vector<double> weights{h * (q_width + 2.0 * kv_width) / t, q_width * h / t};
  const double ffn = static_cast<double>(model.ffn_hidden) * h / t;
  for (int i = 0; i < (gelu ? 1 : 2); ++i) weights.push_back(ffn);
  weights.push_back(ffn);
  LayerTensors out;
  int persistent = 2 * (model.norm == NormKind::LayerNorm ? 2 : 1) + (gelu ? static_cast<int>(weights.size()) : 0);
  for (double w : weights) {
    if (w >= kDeepSpeedParamPersistenceThreshold) {
      out.gathered.push_back(w);
    } else {
      ++persistent;
    }
  }
  out.reduced = static_cast<int>(out.gathered.size()) + persistent;
  return out;
}

DeepSpeedZero3Cost deepspeed_zero3_2021_layer(const LayerTensors& tensors, int ranks, double coalesced_gather_s,
                                              double coalesced_scatter_s, bool recompute,
                                              const ComputeConstants& constants) {
  DeepSpeedZero3Cost c;
  if (ranks <= 1 || tensors.gathered.empty()) return c;
  const double us = 1e-6;
  const double sync_s = constants.get("launch_blocking_sync_us") * us;
  const double call_s = constants.get("torch_distributed_call_us") * us;
  const double host_ops_s = kDeepSpeedHostOpsPerRank * ranks * constants.get("host_launch_us") * us;
  const double copies_s = ranks * constants.get("kernel_launch_us") * us;
  double total = 0;
  for (double w : tensors.gathered) total += w;
  // Weight i's gather: synchronise, then the host issues the call and the per-rank ops while the
  // device runs the NCCL all-gather and the copies after it.
  std::vector<double> gather;
  for (double w : tensors.gathered)
    gather.push_back(sync_s + call_s + std::max(host_ops_s, coalesced_gather_s * w / total + copies_s));
  double after = 0;  // elements of the weights after this one in forward order
  for (std::size_t i = tensors.gathered.size(); i-- > 0;) {
    c.forward_gather += gather[i];
    // Without recompute every weight is gathered again for the backward; with it the recomputed
    // forward gathers all, and the backward those whose reuse distance exceeds the limit.
    const bool kept = recompute && after < kDeepSpeedMaxReuseDistance;
    c.backward_gather += (recompute ? gather[i] : 0.0) + (kept ? 0.0 : gather[i]);
    after += tensors.gathered[i];
  }
  const double host_rs = tensors.reduced * (call_s + host_ops_s);
  const double device_rs = coalesced_scatter_s + tensors.reduced * copies_s;
  c.reduce_scatter = std::max(host_rs, device_rs);
  return c;
}

}  // namespace clustersim::workloads
