// Squared ReLU run as eager PyTorch ops (ModelSpec::eager_squared_relu; Nemotron-4 under NeMo 2):
// what the activation between a non-gated MLP's two linears costs when nothing fuses it (the op
// itself: transformer_ops.cpp, mlp).
//
// NeMo 2's NemotronConfig (nemo/collections/llm/gpt/model/nemotron.py, v2.2.0 l. 41, and the
// commits dgxc-benchmarking v25.04 / v25.05 pin, d2b21556 and b4148d21, l. 45) sets activation_func
// to nemo/collections/llm/fn/activation.py squared_relu, `torch.pow(torch.nn.functional.relu(x),
// 2)`, whose @torch.jit.script is commented out; Megatron-Core's MLP calls it as it is when
// bias_activation_fusion is off, which it must be for any activation but gelu and silu
// (megatron/core/transformer/mlp.py forward, core_r0.11.0 and the commits above). NeMo 1's
// squared_relu (nemo/collections/nlp/modules/common/megatron/utils.py) carries @jit_fuser
// (torch.compile) and runs fused: the "gelu" kind's one kernel a pass, which those rows keep.
// Element accesses per element of the [tokens, ffn] activation:
//   forward: relu (read, write: 2), pow(., 2) (2): 4, in 2 kernels;
//   backward: PowBackward0 is pow_backward(grad, self, 2) = grad * (2 * self.pow(1))
//   (torch/csrc/autograd/FunctionsManual.cpp), where pow(., 1) is a copy (aten/src/ATen/native/
//   Pow.cpp, pow_Tensor_Scalar_out) (2), the scalar product (2) and the product with grad (two
//   reads, one write: 3); ReluBackward0 is threshold_backward(grad, result, 0) (3): 10, in 4
//   kernels.
// The fused kernel reads and writes each element once forward and reads two, writes one backward
// (transformer_ops.cpp, the "gelu" op). The bytes saved for the backward do not change: the relu
// output (both backward functions' saved tensor) in place of the fused kernel's input.
#pragma once

namespace clustersim::workloads {

inline constexpr double kEagerSquaredReluFwdAccesses = 4.0;
inline constexpr double kEagerSquaredReluBwdAccesses = 10.0;
inline constexpr int kEagerSquaredReluFwdKernels = 2;
inline constexpr int kEagerSquaredReluBwdKernels = 4;
inline constexpr double kSquaredReluFlopsPerElement = 2.0;  // max(x, 0), then its square

}  // namespace clustersim::workloads
