// The routed experts' output bias (ModelSpec::expert_bias; GPT-OSS): what Megatron-Core's
// TEGroupedMLP does with the second linear's bias, and what that costs.
//
// TEGroupedMLP builds linear_fc2 with skip_bias_add = True and adds the bias afterwards, weighted
// by each token-slot's router probability, in TEGroupedMLP._apply_bias (megatron/core/transformer/
// moe/experts.py, core_v0.15.0 to core_v0.17.x, the Megatron-Bridge 25.11-26.04 releases):
//   torch.cat([t + b * p for t, b, p in zip(split(output, tokens_per_expert), biases,
//              split(probs, tokens_per_expert))]).to(output.dtype)
// an eager Python loop over the local experts. Per slot-element of the [slots, hidden] output:
//   forward   b * p writes it (1), t + bp reads two and writes one (3), cat reads and writes (2):
//             6 element accesses, in 2 x local_experts + 1 kernels;
//   backward  MulBackward: grad_b = sum(g * p) and grad_p = sum(g * b), each a product written
//             and read back by its reduction after reading g (3 + 3); the split of the GEMM output
//             gathers its slices' gradients back into one tensor (2): 8 accesses, in
//             4 x local_experts + 1 kernels (the cat's and the add's backward are views).
// The two splits, the dtype cast (a no-op when the probabilities are in the activation dtype, the
// default moe_router_dtype) and the per-expert autograd nodes are host work beside the kernels.
// Later Megatron-Core (main, 2026) has a packed path for CUDA graphs that forms the same
// probability-weighted bias per token; it is not modelled separately. The first linear's bias is
// added inside the grouped GEMM (skip_bias_add = False: Transformer Engine's GEMM epilogue, its
// gradient from the wgrad GEMM's epilogue), so it costs nothing here.
#pragma once

#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// Element accesses per slot-element of the expert output (see above).
inline constexpr double kExpertBiasFwdAccesses = 6.0;
inline constexpr double kExpertBiasBwdAccesses = 8.0;

// The op for `slots` token-slots of `hidden` elements of `bytes` each over `local_experts` experts
// on this GPU: memory-bound passes, plus the loop's host ops beyond the one kernel an op launches.
OpCost expert_bias_op(double slots, double hidden, double bytes, double local_experts);

}  // namespace clustersim::workloads
