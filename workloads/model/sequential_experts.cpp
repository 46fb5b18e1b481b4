// The routed experts as Megatron-Core's SequentialMLP runs them (see sequential_experts.h).
#include "workloads/model/sequential_experts.h"

#include <cmath>

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {

bool sequential_pads_rows(bool quantized, bool counts_fixed, double rows) {
  if (!quantized) return false;
  if (!counts_fixed) return true;
  return std::fmod(rows, kSequentialMlpFp8RowAlignment) != 0.0;
}

OpCost sequential_pad_op(double rows, double width, double bytes) {
  // Forward: torch.cat((rows, zeros)) reads and writes the rows. Backward: slice_backward's
  // zero-filled gradient (write) and the copy of the slice into it (read, write).
  OpCost op = ops::pointwise("expert_pad", OpKind::Elementwise, rows * width, 0.0, 2.0 * bytes, 3.0 * bytes);
  op.bwd_host_ops = 1.0;  // the zero-fill's kernel beside the copy's
  return op;
}

OpCost sequential_concat_op(double slots, double width, double bytes) {
  return ops::pointwise("expert_concat", OpKind::Elementwise, slots * width, 0.0, 2.0 * bytes, 2.0 * bytes);
}

MoeHostWork sequential_experts_host_fwd(int local_experts, bool quantized) {
  const double split = local_experts > 1 ? 2.0 : 0.0;  // tokens_per_expert.tolist(), torch.split
  const double slices = quantized ? static_cast<double>(local_experts) : 0.0;  // output[:n] each
  return {split + slices, 0.0};
}

}  // namespace clustersim::workloads
