// The routed experts' eager GLU clamp in Megatron-Core's TEGroupedMLP (see glu_clamp.h).
#include "workloads/model/glu_clamp.h"

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

OpCost glu_clamp_op(double elements, double bytes) {
  OpCost op = ops::pointwise("expert_act_clamp", OpKind::Elementwise, elements, 0.0,
                             glu_clamp_fwd_bytes_per_element(bytes), glu_clamp_bwd_bytes_per_element(bytes));
  op.fwd_host_ops = kGluClampFwdHostOps;
  op.bwd_host_ops = kGluClampBwdHostOps;
  op.host_sync_after = true;  // torch.tensor(linear_offset, device=cuda): memcpy_and_sync
  return op;
}

}  // namespace clustersim::workloads
