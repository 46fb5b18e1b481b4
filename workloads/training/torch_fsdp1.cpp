// PyTorch FSDP1's memory-bound copies and casts per FSDP unit (see torch_fsdp1.h).
#include "workloads/training/torch_fsdp1.h"

namespace clustersim::workloads {

double fsdp1_predivide_factor(int ranks) {
  int factor = 1;
  while (ranks % factor == 0 && ranks / factor > factor) factor *= 2;
  return factor;
}

double fsdp1_grad_copy_bytes(double param_bytes) { return 2.0 * param_bytes; }

Fsdp1LayerBytes fsdp1_layer_bytes(double param_bytes, double reduce_bytes, double master_bytes, int ranks) {
  Fsdp1LayerBytes b;
  if (ranks <= 1) return b;
  const double n = ranks;
  b.grad_copy = fsdp1_grad_copy_bytes(param_bytes);
  const bool upcast = reduce_bytes != param_bytes;
  const double pre = fsdp1_predivide_factor(ranks), post = n / pre;
  b.before_scatter = (upcast ? param_bytes + reduce_bytes : 0.0) + (pre > 1 ? 2.0 * reduce_bytes : 0.0);
  b.after_scatter = post > 1 ? 2.0 * reduce_bytes / n : 0.0;
  b.before_gather = master_bytes != param_bytes ? (master_bytes + param_bytes) / n : 0.0;
  return b;
}

}  // namespace clustersim::workloads
