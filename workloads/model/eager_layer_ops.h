// A plain PyTorch Llama block run in eager mode (ModelSpec::eager_layer_ops): what its RMSNorm,
// rotary embedding, SwiGLU and grouped-query key/value repeat cost when nothing fuses them, i.e.
// what torch.compile's Inductor takes away. The ops themselves: transformer_ops.cpp.
//
// The module is torchtitan's models/llama/model.py and models/norms.py at 9dec370 (norm_type
// "rmsnorm", the train configs' default); Meta's reference llama/model.py is the same code, and
// Hugging Face's LlamaRMSNorm is the same RMSNorm. Element accesses per element of the op's
// tensor, p = bytes of an activation element (2 in bf16), fp32 intermediates at 4 bytes:
//
// RMSNorm: `self._norm(x.float()).type_as(x) * self.weight`, `_norm(x) = x * torch.rsqrt(
// x.pow(2).mean(-1, keepdim=True) + eps)`, over [tokens, hidden]:
//   forward: float() (p + 4), pow (4 + 4), mean (4), x * rsqrt (4 + 4), type_as (4 + p), * weight
//   (p + p) = 4p + 28 bytes, in 8 kernels (the eps add and rsqrt run per row);
//   backward (autograd): MulBackward0 of the weight product (grad * weight: 2p; grad * normed for
//   the weight's gradient and its sum over tokens: 4p), ToCopyBackward0 (p + 4), MulBackward0 of
//   x * rsqrt (grad * r: 8; (grad * x).sum(-1): 16), MeanBackward1 (the expanded gradient / h,
//   materialised: 4), PowBackward0 = grad * (2 * x.pow(1)) (torch/csrc/autograd/FunctionsManual.cpp
//   pow_backward; pow(., 1) is a copy: 8 + 8 + 12), the two gradients of x.float() summed (12),
//   ToCopyBackward0 to bf16 (4 + p) = 8p + 76 bytes, in 14 kernels.
//   The fused kernel (Megatron / Transformer Engine, and what Inductor generates) reads x and
//   writes y forward (2p), reads x and dy and writes dx backward (3p).
// Rotary embedding (apply_rotary_emb, complex form), per element of Q and K:
//   forward: float() (p + 4), view_as_complex (a view), the complex product with freqs_cis (4 + 4;
//   the frequencies are [s, d/2], broadcast), view_as_real and flatten (views), type_as (4 + p) =
//   2p + 16 bytes, 3 kernels a tensor; backward: the same three in reverse (grad.float(), the
//   product with the conjugate, the cast back): 2p + 16 bytes, 3 kernels a tensor. Fused: 2p, 2p.
// SwiGLU: `F.silu(self.w1(x)) * self.w3(x)`, per element of [tokens, ffn]:
//   forward: silu (2p), the product (3p) = 5p, 2 kernels; backward: MulBackward0 (grad * up: 3p,
//   grad * silu: 3p), SiluBackward0 (3p) = 9p, 3 kernels. Fused: 3p, 5p in one kernel a pass.
// repeat_kv (n_rep = heads / kv_heads > 1): unsqueeze, expand, reshape copies keys and values to
//   the query heads' width before scaled_dot_product_attention (its flash kernel then reads them as
//   they are: no other copy, the transposes are views of its native layout): per written element
//   p + p * kv_heads / heads, 2 kernels; backward: ExpandBackward0 sums the copies back, the same
//   bytes, 2 kernels. A fused (GQA-aware) attention kernel reads the kv heads directly: no op.
// Not changed: the tensors saved for the backward (the memory model keeps the fused kernels': the
// eager norm also saves x.float() in fp32, which a checkpointed layer holds only while it is
// rerun), the residual adds (one eager add each, as fused), a LayerNorm (nn.LayerNorm is one kernel
// a pass either way) and GELU.
#pragma once

namespace clustersim::workloads {

// RMSNorm: bytes per element = a * p + b.
inline constexpr double kEagerRmsNormFwdPerP = 4.0, kEagerRmsNormFwdFixed = 28.0;
inline constexpr double kEagerRmsNormBwdPerP = 8.0, kEagerRmsNormBwdFixed = 76.0;
inline constexpr int kEagerRmsNormFwdKernels = 8, kEagerRmsNormBwdKernels = 14;
// Rotary embedding (complex form): 2p + 16 bytes per element each pass, 3 kernels per tensor.
inline constexpr double kEagerRopePerP = 2.0, kEagerRopeFixed = 16.0;
inline constexpr int kEagerRopeKernels = 6;  // Q and K
// SwiGLU: accesses of p bytes per element.
inline constexpr double kEagerSwiGluFwdAccesses = 5.0, kEagerSwiGluBwdAccesses = 9.0;
inline constexpr int kEagerSwiGluFwdKernels = 2, kEagerSwiGluBwdKernels = 3;
// repeat_kv: keys and values, one copy (forward) or sum (backward) kernel each.
inline constexpr int kEagerRepeatKvKernels = 2;

}  // namespace clustersim::workloads
