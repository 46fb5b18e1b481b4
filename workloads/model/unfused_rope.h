// Rotary position embedding run unfused (ModelSpec::yarn_rope; GPT-OSS): what Megatron-Core's
// eager rotation does to Q and K, and what that costs against the fused kernel (the op itself:
// transformer_ops.cpp, rotary).
//
// Megatron-Bridge keeps apply_rope_fusion only for position_embedding_type "rope"
// (megatron/bridge/utils/fusions.py, validate_rope_fusion_compatibility); GPT-OSS's provider sets
// "yarn", so the performance scripts' apply_rope_fusion = True is turned off and Q and K each go
// through _apply_rotary_pos_emb_bshd (megatron/core/models/common/embeddings/rope_utils.py,
// core_v0.16.0):
//   t * cos_ + _rotate_half(t) * sin_, then cat((t, t_pass))   with _rotate_half = cat((-x2, x1))
// Element accesses per element of Q or K, forward: t * cos_ (read, write: 2), -x2 (half: 1), the
// rotate cat (2), * sin_ (2), the add (two reads, one write: 3), the final cat (2): 12, in 6
// kernels. Backward, by the same count: the two products' gradients (2 + 2), the negation (1), the
// chunk's gradients gathered (2), the two gradients of t added (3), the slice's gradient copied
// (2): 12, in 6 kernels. The fused kernel (Transformer Engine's fused RoPE) reads and writes each
// element once per pass (transformer_ops.cpp, rotary). cos_ and sin_ are [s, d]: negligible.
#pragma once

namespace clustersim::workloads {

inline constexpr double kUnfusedRopeFwdAccesses = 12.0;
inline constexpr double kUnfusedRopeBwdAccesses = 12.0;
inline constexpr double kUnfusedRopeKernels = 6.0;  // per pass

}  // namespace clustersim::workloads
