// The router probability applied to the routed experts' input (see expert_probs.h).
#include "workloads/model/expert_probs.h"

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

OpCost probs_on_input_op(double slots, double hidden, double bytes) {
  // One multiply per element forward; the backward's two products (the reduction's adds not counted).
  OpCost op = ops::pointwise("moe_probs_on_input", OpKind::Elementwise, slots * hidden, 1.0,
                             kProbsOnInputFwdAccesses * bytes, kProbsOnInputBwdAccesses * bytes);
  op.bwd_flops = op.fwd_flops * 2.0;
  op.fwd_host_ops = 1.0;  // ones_like: the probabilities reset for the weighted activation
  op.bwd_host_ops = 2.0;  // MulBackward's second product and the sum (one kernel is the op's own)
  return op;
}

}  // namespace clustersim::workloads
