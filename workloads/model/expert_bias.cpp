// The routed experts' output bias in Megatron-Core's eager TEGroupedMLP (see expert_bias.h).
#include "workloads/model/expert_bias.h"

#include <algorithm>

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

OpCost expert_bias_op(double slots, double hidden, double bytes, double local_experts) {
  const double e = std::max(1.0, local_experts);
  // Forward FLOPs: b * p and the add (2 per element); backward: the two products and two sums.
  OpCost op = ops::pointwise("expert_bias", OpKind::Elementwise, slots * hidden, 2.0,
                             kExpertBiasFwdAccesses * bytes, kExpertBiasBwdAccesses * bytes);
  op.bwd_flops = op.fwd_flops * 2.0;
  // Host: forward 2e + 1 kernels and three framework ops (two splits, the cast); backward 4e + 1
  // kernels and e slice views of the cat's backward. One kernel of each pass is the op's own.
  op.fwd_host_ops = 2.0 * e + 3.0;
  op.bwd_host_ops = 5.0 * e;
  return op;
}

}  // namespace clustersim::workloads
