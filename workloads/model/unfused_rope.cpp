// Rotary position embedding in Megatron-Core's unfused eager path (see unfused_rope.h).
#include "workloads/model/unfused_rope.h"

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

OpCost unfused_rotary(double elements, double bytes) {
  // x cos + rotate_half(x) sin: 3 FLOPs per element, as the fused kernel (transformer_ops.cpp).
  OpCost op = ops::pointwise("rotary_embedding", OpKind::Elementwise, elements, 3.0,
                             kUnfusedRopeFwdAccesses * bytes, kUnfusedRopeBwdAccesses * bytes);
  op.fwd_host_ops = kUnfusedRopeKernels - 1.0;
  op.bwd_host_ops = kUnfusedRopeKernels - 1.0;
  return op;
}

}  // namespace clustersim::workloads
