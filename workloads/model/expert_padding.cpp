// The routed experts' row padding under fp8 / fp4 (see expert_padding.h).
#include "workloads/model/expert_padding.h"

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

namespace {
constexpr double kProbBytes = 4.0;  // the dispatcher's probabilities are fp32
}  // namespace

bool pads_expert_rows(const OpShape& shape) {
  return shape.quantized_experts && shape.moe_dispatcher != MoeDispatcher::HybridEp;
}

OpCost expert_pad_op(double slots, double hidden, double bytes) {
  // The rows and, in a second Fp8Padding call, the [slots, 1] fp32 probabilities: each read and
  // written in the forward, their gradients unpadded in the backward.
  OpCost op = ops::pointwise("expert_pad", OpKind::Elementwise, slots * hidden, 0.0, 2.0 * bytes, 2.0 * bytes);
  op.fwd_bytes = op.fwd_bytes + sim::Bytes{2.0 * kProbBytes * slots};
  op.bwd_bytes = op.bwd_bytes + sim::Bytes{2.0 * kProbBytes * slots};
  op.fwd_host_ops = 1.0;  // the probabilities' padding kernel
  op.bwd_host_ops = 1.0;  // and its gradient's unpadding
  return op;
}

OpCost expert_unpad_op(double slots, double hidden, double bytes) {
  return ops::pointwise("expert_unpad", OpKind::Elementwise, slots * hidden, 0.0, 2.0 * bytes, 2.0 * bytes);
}

}  // namespace clustersim::workloads
